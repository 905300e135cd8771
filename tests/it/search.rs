//! grep and glob through the wire: modes, filters, paging, errors, multi-root, progress and
//! cancellation.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

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

fn rel(ws: &Workspace, path: &str) -> String {
    s(&ws.app.join(path)).to_string()
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
    assert_eq!(result["structuredContent"]["stats"]["skipped"]["binary"], 1);
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "output_mode": "content", "-C": 1, "glob": "*.rs"}),
    );
    let body = text(&result);
    let expected = format!(
        "{}\n1:pub fn needle() {{}}\n2-\n3-fn helper() {{\n4:    needle();\n5-}}\n\n",
        rel(&ws, "src/lib.rs")
    );
    assert_eq!(body, expected);
    let matches = result["structuredContent"]["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2);
    assert_eq!(matches[1]["line"], 4);
    assert_eq!(matches[1]["column"], 5);
    let result = client.call(
        "grep",
        json!({"pattern": "needle", "output_mode": "count", "-i": true}),
    );
    let counts = result["structuredContent"]["counts"].as_array().unwrap();
    assert_eq!(counts[1]["path"], rel(&ws, "src/util.py"));
    assert_eq!(counts[1]["count"], 2);
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
    let mut client = started(&ws);
    let full = client.call(
        "grep",
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 0}),
    );
    let all: Vec<(String, u64)> = full["structuredContent"]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(all.len(), 400);
    let mut paged = Vec::new();
    let mut offset = 0;
    loop {
        let page = client.call(
            "grep",
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 25, "offset": offset}),
        );
        let structured = &page["structuredContent"];
        for m in structured["matches"].as_array().unwrap() {
            paged.push((
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
            ));
        }
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
    let shown = page["structuredContent"]["matches"]
        .as_array()
        .unwrap()
        .len() as u64;
    assert_eq!(next, shown);
}

#[test]
fn glob_matches_relative_paths_newest_first() {
    let ws = workspace();
    project(&ws);
    std::fs::create_dir_all(ws.app.join("src/deep/er")).unwrap();
    std::fs::write(ws.app.join("src/deep/er/x.rs"), "").unwrap();
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
    assert_eq!(found[0], rel(&ws, "src/deep/er/x.rs"), "newest first");
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

/// A tree big enough that a scan takes a while even in a release build.
fn big_tree(dir: &Path) {
    let line = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron\n";
    let body = line.repeat(300);
    for d in 0..40 {
        let sub = dir.join(format!("d{d}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            std::fs::write(sub.join(format!("f{f}.txt")), &body).unwrap();
        }
    }
}

const SLOW_PATTERN: &str = r"\b\w{40,}\b|(\w+\s+){12}\d";

#[test]
fn progress_is_ordered_increasing_and_precedes_the_response() {
    let ws = workspace();
    big_tree(&ws.app);
    let mut client = started(&ws);
    let id = client.start(
        "tools/call",
        json!({"name":"grep","arguments":{"pattern": SLOW_PATTERN},"_meta":{"progressToken":"tok-1"}}),
    );
    let response = client
        .response(id, Duration::from_secs(120))
        .expect("grep answered");
    assert!(response.get("result").is_some());
    // Everything received before the response is in the backlog; nothing may follow it.
    let progress = client.collect(Duration::from_millis(300), |m| {
        m["method"] == "notifications/progress"
    });
    let values: Vec<f64> = progress
        .iter()
        .map(|p| {
            assert_eq!(p["params"]["progressToken"], "tok-1");
            assert!(
                p["params"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("searched ")
            );
            p["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "strictly increasing: {values:?}"
    );
    let elapsed = response["result"]["structuredContent"]["stats"]["elapsed_ms"]
        .as_u64()
        .unwrap();
    if elapsed > 400 {
        assert!(!values.is_empty(), "a {elapsed} ms search sent no progress");
    }
    // Integer tokens come back as integers.
    let id = client.start(
        "tools/call",
        json!({"name":"grep","arguments":{"pattern": SLOW_PATTERN},"_meta":{"progressToken":77}}),
    );
    client
        .response(id, Duration::from_secs(120))
        .expect("grep answered");
    for p in client.collect(Duration::from_millis(200), |m| {
        m["method"] == "notifications/progress"
    }) {
        assert_eq!(p["params"]["progressToken"], 77);
    }
}

#[test]
fn cancellation_stops_the_search_and_sends_nothing_more() {
    let ws = workspace();
    big_tree(&ws.app);
    let mut client = started(&ws);
    let id = client.start(
        "tools/call",
        json!({"name":"grep","arguments":{"pattern": SLOW_PATTERN, "output_mode":"count"},"_meta":{"progressToken":"c"}}),
    );
    let first = client.wait_for(Duration::from_secs(30), |m| {
        m["method"] == "notifications/progress" || m.get("id") == Some(&json!(id))
    });
    let first = first.expect("progress or response");
    if first.get("id").is_some() {
        // The machine was fast enough to finish first; nothing to cancel.
        return;
    }
    client.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "test"}),
    );
    std::thread::sleep(Duration::from_millis(100));
    let _ = client.collect(Duration::from_millis(50), |_| true);
    let late = client.collect(Duration::from_millis(1500), |m| {
        m.get("id") == Some(&json!(id)) || m["method"] == "notifications/progress"
    });
    assert!(late.is_empty(), "messages after cancel: {late:?}");
    // The server is fully usable afterwards.
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
    let result = client.call(
        "grep",
        json!({"pattern": "omicron", "path": "d1/f1.txt", "output_mode": "count"}),
    );
    assert_eq!(result["structuredContent"]["counts"][0]["count"], 300);
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
