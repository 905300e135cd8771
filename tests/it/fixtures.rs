//! Data-driven search cases over the committed fixture tree (`testdata/search/`): each case
//! in `cases.json` names the tool, its arguments, why the case exists, and what must come
//! back (a file list, an exact text, or fragments).

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn search_cases_over_the_fixture_tree() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/search");
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap().join("tree");
    copy_tree(&fixtures.join("tree"), &root);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("cases.json")).unwrap())
            .unwrap();
    assert!(cases.len() >= 15);
    let mut client = Client::spawn(&[], &root);
    client.handshake(json!({}));
    // Paths as the server shows them: the ordinary form, the platform's separator.
    let root_text = rootgrep_core::roots::path_text(&root);
    let sep = std::path::MAIN_SEPARATOR_STR;
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        assert!(
            case["why"].as_str().is_some_and(|w| !w.is_empty()),
            "{name} needs a why"
        );
        let result = client.call(case["tool"].as_str().unwrap(), case["args"].clone());
        let body = text(&result);
        if is_error(&result) {
            failures.push(format!("{name}: error {body}"));
            continue;
        }
        if let Some(expected) = case.get("files") {
            let expected: Vec<String> = expected
                .as_array()
                .unwrap()
                .iter()
                .map(|f| format!("{root_text}{sep}{}", f.as_str().unwrap().replace('/', sep)))
                .collect();
            let got = listed_files(&result);
            if got != expected {
                failures.push(format!("{name}: files {got:?}, expected {expected:?}"));
            }
        }
        if let Some(expected) = case.get("text") {
            let expected = rooted(expected.as_str().unwrap());
            if body != expected {
                failures.push(format!("{name}: text {body:?}, expected {expected:?}"));
            }
        }
        for fragment in case["contains"].as_array().into_iter().flatten() {
            if !body.contains(fragment.as_str().unwrap()) {
                failures.push(format!("{name}: {body:?} lacks {fragment}"));
            }
        }
        if let Some(max) = case["max_text_len"].as_u64()
            && body.len() as u64 > max
        {
            failures.push(format!(
                "{name}: text is {} bytes, more than {max}",
                body.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn files_vanishing_during_a_search_are_skipped_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    for i in 0..2000 {
        std::fs::write(root.join(format!("f{i}.txt")), "needle\n").unwrap();
    }
    let mut client = Client::spawn(&[], &root);
    client.handshake(json!({}));
    let deleter = {
        let root = root.clone();
        std::thread::spawn(move || {
            for i in (0..2000).step_by(2) {
                let _ = std::fs::remove_file(root.join(format!("f{i}.txt")));
            }
        })
    };
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "output_mode": "count", "head_limit": 0}),
    );
    deleter.join().unwrap();
    assert!(!is_error(&result), "{}", text(&result));
    let total = result["structuredContent"]["total"].as_u64().unwrap();
    assert!((1000..=2000).contains(&total), "{total}");
    // The server is still healthy and sees the final state.
    let result = client.call("grep", json!({"pattern": "needle", "head_limit": 0}));
    assert_eq!(result["structuredContent"]["total"], 1000);
}

/// `text` with each `{ROOT}/rel/path` (up to a `:` or the end of the line) written as the
/// server shows it under its one root: `rel/path`, with the platform's separator.
fn rooted(text: &str) -> String {
    let mut out = String::new();
    let mut parts = text.split("{ROOT}/");
    out.push_str(parts.next().unwrap_or(""));
    for part in parts {
        let end = part.find([':', '\n']).unwrap_or(part.len());
        out.push_str(&part[..end].replace('/', std::path::MAIN_SEPARATOR_STR));
        out.push_str(&part[end..]);
    }
    out
}
