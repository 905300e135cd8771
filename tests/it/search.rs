//! grep and glob through the wire: modes, filters, paging, errors, multi-root, progress and
//! cancellation.

use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::support::*;

fn project(ws: &Workspace) {
    let app = &ws.app;
    std::fs::create_dir_all(app.join(".git")).unwrap();
    std::fs::write(app.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(app.join("target")).unwrap();
    std::fs::write(app.join("target/gen.rs"), "fn needle() {}\n").unwrap();
    std::fs::write(
        app.join("src/lib.rs"),
        "pub fn needle() {}\n\nfn helper() {\n    needle();\n}\n",
    )
    .unwrap();
    std::fs::write(
        app.join("src/util.py"),
        "def needle():\n    return 'Needle'\n",
    )
    .unwrap();
    std::fs::write(app.join(".hidden.rs"), "fn needle() {}\n").unwrap();
    std::fs::write(app.join("blob.bin"), b"needle\x00\x01\x02").unwrap();
}

fn started(ws: &Workspace) -> Client {
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    client
}

/// The path the text shows for `path` (written with `/`) under the one root: relative.
fn shown(path: &str) -> String {
    path.replace('/', std::path::MAIN_SEPARATOR_STR)
}

/// The absolute path of `path` (written with `/`) under the root.
fn rel(ws: &Workspace, path: &str) -> String {
    s(&ws
        .app
        .join(path.replace('/', std::path::MAIN_SEPARATOR_STR)))
    .to_string()
}

#[test]
fn grep_modes_filters_and_grouping() {
    let ws = workspace();
    project(&ws);
    let mut client = started(&ws);
    let result = client.call("grep", json!({"pattern": "needle"}));
    assert_eq!(
        listed_files(&result),
        vec![rel(&ws, "src/lib.rs"), rel(&ws, "src/util.py")]
    );
    assert_eq!(result["structuredContent"]["stats"]["binary"], 1);
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "output_mode": "content", "-C": 1, "glob": "*.rs"}),
    );
    let body = text(&result);
    let expected = format!(
        "{}\n1:pub fn needle() {{}}\n2-\n3-fn helper() {{\n4:    needle();\n5-}}\n\n",
        shown("src/lib.rs")
    );
    assert_eq!(body, expected);
    let matches = matched_lines(&result);
    assert_eq!(matches.len(), 2);
    assert_eq!(matches[1].0, rel(&ws, "src/lib.rs"));
    assert_eq!((matches[1].1, matches[1].2.as_str()), (4, "    needle();"));
    // Context lines are held by the matching row they follow (or precede).
    let file = &result["structuredContent"]["matches"][0];
    assert_eq!(file.get("context"), None, "{file}");
    assert_eq!(
        file["matches"],
        json!([
            [1, "pub fn needle() {}", [], ["", "fn helper() {"]],
            [4, "    needle();", [], ["}"]]
        ])
    );
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "output_mode": "count", "-i": true}),
    );
    let counts = result["structuredContent"]["counts"].as_array().unwrap();
    assert_eq!(
        absolute(&result, counts[1][0].as_str().unwrap()),
        rel(&ws, "src/util.py")
    );
    assert_eq!(counts[1][1], 2);
    let result = client.call("grep", json!({"pattern": "needle", "type": "py"}));
    assert_eq!(listed_files(&result), vec![rel(&ws, "src/util.py")]);
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "hidden": true, "no_ignore": true}),
    );
    assert_eq!(listed_files(&result).len(), 4);
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "path": "blob.bin", "output_mode": "content"}),
    );
    assert!(
        text(&result).contains("1:needle"),
        "explicit binary file is searched: {}",
        text(&result)
    );
    let result = client.call("grep", json!({"pattern": "NEEDLE", "smart_case": true}));
    assert_eq!(result["structuredContent"]["total"], 0);
    assert!(text(&result).starts_with("No matches"));
    let result = client.call("grep", json!({"pattern": "needle()", "fixed_strings": true, "output_mode": "content", "-n": false}));
    assert!(
        text(&result).contains("\n    needle();\n"),
        "{}",
        text(&result)
    );
}

#[test]
fn grep_errors_are_actionable_tool_errors() {
    let ws = workspace();
    project(&ws);
    let mut client = started(&ws);
    let result = client.call("grep", json!({"pattern": "fn (needle"}));
    assert!(is_error(&result));
    assert!(
        text(&result).to_lowercase().contains("parenthes"),
        "{}",
        text(&result)
    );
    let result = client.call("grep", json!({"pattern": "a{2,1}"}));
    assert!(is_error(&result));
    let result = client.call("grep", json!({"pattern": "x", "type": "notalanguage"}));
    assert!(is_error(&result));
    assert!(text(&result).contains("notalanguage"));
    let result = client.call("grep", json!({"pattern": "x", "glob": "{unclosed"}));
    assert!(is_error(&result));
    let result = client.call("grep", json!({"pattern": "x", "path": "../outside"}));
    assert!(is_error(&result));
    assert!(text(&result).contains("outside the workspace roots"));
    let result = client.call("grep", json!({"pattern": "x", "max_filesize": "lots"}));
    assert!(is_error(&result));
}

#[test]
fn paging_is_stable_and_says_how_to_continue() {
    let ws = workspace();
    for i in 0..200 {
        std::fs::write(ws.app.join(format!("f{i:03}.txt")), "hit\nhit\n").unwrap();
    }
    // A budget large enough for all 400 matches in one answer whatever the length of the
    // temporary directory's path (Wine's `C:\users\…\Temp\…` is longer than `/tmp/…`).
    let mut client = Client::spawn(&["--max-output-bytes", "1048576"], &ws.app);
    client.handshake(json!({}));
    let full = client.call(
        "grep",
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 0}),
    );
    let lines = |result: &Value| -> Vec<(String, u64)> {
        let rows = matched_lines(result).into_iter();
        rows.map(|(path, line, _)| (path, line)).collect()
    };
    let all = lines(&full);
    assert_eq!(all.len(), 400);
    let mut paged = Vec::new();
    let mut offset = 0;
    loop {
        let page = client.call(
            "grep",
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 25, "offset": offset}),
        );
        let structured = &page["structuredContent"];
        paged.extend(lines(&page));
        match structured["next_offset"].as_u64() {
            Some(next) => {
                assert!(text(&page).contains(&format!("offset={next}")));
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(paged, all);
    // The byte budget cuts too, with the same continuation.
    let mut small = Client::spawn(&["--max-output-bytes", "2048"], &ws.app);
    small.handshake(json!({}));
    let page = small.call(
        "grep",
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 0}),
    );
    assert!(text(&page).len() <= 2048);
    let next = page["structuredContent"]["next_offset"].as_u64().unwrap();
    assert_eq!(next, matched_lines(&page).len() as u64);
}

#[test]
fn glob_matches_relative_paths_newest_first() {
    let ws = workspace();
    project(&ws);
    std::fs::create_dir_all(ws.app.join("src/deep/er")).unwrap();
    std::fs::write(ws.app.join("src/deep/er/x.rs"), "").unwrap();
    // Newest first is the reverse of path order here, so sorting by path cannot pass.
    let now = SystemTime::now();
    for (path, age) in [
        ("src/deep/er/x.rs", 3000),
        ("src/lib.rs", 2000),
        ("src/main.rs", 1000),
    ] {
        let file = std::fs::File::options()
            .write(true)
            .open(ws.app.join(path))
            .unwrap();
        file.set_modified(now - Duration::from_secs(age)).unwrap();
    }
    let mut client = started(&ws);
    let result = client.call("glob", json!({"pattern": "src/**/*.rs", "sort": "path"}));
    assert_eq!(
        listed_files(&result),
        vec![
            rel(&ws, "src/deep/er/x.rs"),
            rel(&ws, "src/lib.rs"),
            rel(&ws, "src/main.rs")
        ]
    );
    let result = client.call("glob", json!({"pattern": "*.rs"}));
    let found = listed_files(&result);
    assert_eq!(found.len(), 3, "{found:?}"); // target/ ignored, .hidden.rs hidden
    assert_eq!(
        found,
        vec![
            rel(&ws, "src/main.rs"),
            rel(&ws, "src/lib.rs"),
            rel(&ws, "src/deep/er/x.rs")
        ],
        "newest first"
    );
    let result = client.call("glob", json!({"pattern": "*.rs", "head_limit": 1}));
    assert_eq!(result["structuredContent"]["next_offset"], 1);
    assert!(text(&result).contains("offset=1"));
    let result = client.call("glob", json!({"pattern": "[unclosed"}));
    assert!(is_error(&result));
}

#[test]
fn multi_root_search_covers_every_root() {
    let ws = workspace();
    std::fs::write(ws.outside.join("other.rs"), "fn shared_symbol() {}\n").unwrap();
    std::fs::write(ws.app.join("src/main.rs"), "fn shared_symbol() {}\n").unwrap();
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake_with_roots(json!({}), &[&ws.app, &ws.outside]);
    let result = client.call("grep", json!({"pattern": "shared_symbol"}));
    assert_eq!(listed_files(&result).len(), 2);
}

/// One grep with a progress token: the progress notifications for it with their arrival
/// times (from when the request was sent), its response, and everything that came after
/// the response until a later search was answered.
/// A slow grep with a progress token: the notifications with when they came, the
/// response, what came after it, and how long the response took.
fn grep_with_progress(
    client: &mut Client,
    token: Value,
) -> (Vec<(Duration, Value)>, Value, Vec<Value>, Duration) {
    let sent = Instant::now();
    let id = client.start(
        "tools/call",
        json!({"name":"grep","arguments":{"pattern": SLOW_PATTERN, "output_mode": "count"},
               "_meta":{"progressToken": token}}),
    );
    let mut notes = Vec::new();
    let (response, took) = loop {
        let (at, message) = client
            .recv_timed(Duration::from_secs(120))
            .expect("grep answered");
        if is_response_to(&message, id) {
            break (message, at - sent);
        }
        if message["method"] == "notifications/progress" {
            notes.push((at - sent, message));
        }
    };
    // The marker for "none after the response" is a second, equally long search without a
    // token: everything up to its answer, a long window after the response, is returned.
    let marker = client.start(
        "tools/call",
        json!({"name":"grep","arguments":{"pattern": SLOW_PATTERN, "output_mode": "count"}}),
    );
    let (after, _) = client.read_until_response(marker, Duration::from_secs(120));
    (notes, response, after, took)
}

/// Progress for a search that is long by construction: the tree grows (hard links, cheap)
/// until one search takes over a second on this machine. Then: at least two notifications,
/// the first soon (contract ~200 ms; generous slack here), strictly increasing, with the
/// index's `total`, at most ~10 a second, and none after the response.
#[test]
fn progress_is_ordered_increasing_and_precedes_the_response() {
    let ws = workspace();
    let body = slow_body(300);
    let mut files = 1200;
    let (notes, response, after, took) = loop {
        linked_tree(&ws.app, files, &body);
        let mut client = started(&ws);
        wait_indexed(&mut client);
        let run = grep_with_progress(&mut client, json!("tok-1"));
        if run.3 >= Duration::from_secs(1) {
            break run;
        }
        files *= 2;
        assert!(files <= 100_000, "could not make a search last a second");
    };
    let stats = &response["result"]["structuredContent"]["stats"];
    let elapsed_ms = took.as_millis();
    // Every generated file plus src/main.rs, as the fresh index knows.
    let total = files as u64 + 1;
    assert_eq!(stats["files_searched"], total, "{stats}");
    assert!(
        notes.len() >= 2,
        "a {elapsed_ms} ms search sent {} progress notifications",
        notes.len()
    );
    let values: Vec<f64> = notes
        .iter()
        .map(|(_, p)| {
            assert_eq!(p["params"]["progressToken"], "tok-1");
            assert_eq!(p["params"]["total"].as_f64(), Some(total as f64), "{p}");
            assert!(
                p["params"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("searched "),
                "{p}"
            );
            p["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "strictly increasing: {values:?}"
    );
    assert!(*values.last().unwrap() <= total as f64, "{values:?}");
    let first = notes[0].0;
    assert!(
        first < Duration::from_millis(200 + 1800),
        "first progress only after {first:?}"
    );
    // At most ~10 a second over the whole call (50% slack, plus two for the edges).
    let span = notes.last().unwrap().0.as_secs_f64();
    let allowed = 2.0 + 15.0 * span;
    assert!(
        (notes.len() as f64) <= allowed,
        "{} notifications in {span:.2} s",
        notes.len()
    );
    let late: Vec<&Value> = after
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(late.is_empty(), "progress after the response: {late:?}");
}

/// Integer progress tokens come back as integers (same long search).
#[test]
fn integer_progress_tokens_keep_their_type() {
    let ws = workspace();
    linked_tree(&ws.app, 1500, &slow_body(300));
    let mut client = started(&ws);
    let (notes, _, after, _) = grep_with_progress(&mut client, json!(77));
    assert!(!notes.is_empty(), "no progress for a long search");
    for (_, p) in &notes {
        assert_eq!(p["params"]["progressToken"], 77, "{p}");
    }
    assert!(
        !after
            .iter()
            .any(|m| m["method"] == "notifications/progress")
    );
}

/// A search over ~2 GB (hard links of one 1 MB file) cannot finish before the cancel on
/// any machine: after the cancel the CPU goes idle, no response ever comes, and the server
/// is fully usable afterwards.
#[test]
fn cancellation_stops_the_search_and_sends_nothing_more() {
    let ws = workspace();
    linked_tree(&ws.app, 2000, &slow_body(12_000));
    // No content index: its build would read the 2 GB too, and the CPU going idle after
    // the cancel is what this test watches.
    let mut client = Client::spawn(&["--no-content-index"], &ws.app);
    client.handshake(json!({}));
    let id = client.start(
        "tools/call",
        json!({"name":"grep","arguments":{"pattern": SLOW_PATTERN, "output_mode":"count"},"_meta":{"progressToken":"c"}}),
    );
    // Cancel once the search is surely running (it reported progress).
    let first = client
        .wait_for(Duration::from_secs(30), |m| {
            m["method"] == "notifications/progress" || is_response_to(m, id)
        })
        .expect("progress or response");
    assert!(
        !is_response_to(&first, id),
        "a 2 GB search finished at once: {first}"
    );
    client.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "test"}),
    );
    assert_cancelled_quietly(&mut client, id);
    let result = client.call(
        "grep",
        json!({"pattern": "omicron", "path": "src/main.rs", "output_mode": "count"}),
    );
    assert_eq!(result["structuredContent"]["total"], 0);
    let result = client.call(
        "grep",
        json!({"pattern": "main", "path": "src/main.rs", "output_mode": "count"}),
    );
    assert_eq!(result["structuredContent"]["counts"][0][1], 1);
}

#[test]
fn an_absolute_glob_pattern_searches_its_directory() {
    let ws = workspace();
    project(&ws);
    let mut client = started(&ws);
    let pattern = format!("{}/src/*.rs", s(&ws.app));
    let result = client.call("glob", json!({"pattern": pattern, "sort": "path"}));
    assert_eq!(
        listed_files(&result),
        vec![rel(&ws, "src/lib.rs"), rel(&ws, "src/main.rs")]
    );
    // Outside the roots it is refused like any path.
    let outside = format!("{}/*.txt", s(&ws.outside));
    let result = client.call("glob", json!({"pattern": outside}));
    assert!(is_error(&result));
    assert!(!text(&result).contains("secret.txt"));
}

#[test]
fn grep_and_glob_take_several_paths() {
    let ws = workspace();
    project(&ws);
    std::fs::create_dir_all(ws.app.join("other")).unwrap();
    std::fs::write(ws.app.join("other/x.rs"), "fn needle() {}\n").unwrap();
    let mut client = started(&ws);
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "paths": ["src", "other"]}),
    );
    assert_eq!(
        listed_files(&result),
        vec![
            rel(&ws, "other/x.rs"),
            rel(&ws, "src/lib.rs"),
            rel(&ws, "src/util.py")
        ]
    );
    let result = client.call(
        "glob",
        json!({"pattern": "*.rs", "path": ["other", "src"], "sort": "path"}),
    );
    assert_eq!(listed_files(&result).len(), 3);
    // One path outside the roots refuses the whole call.
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "paths": ["src", "../outside"]}),
    );
    assert!(is_error(&result));
}
