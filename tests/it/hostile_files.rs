//! Hostile names and sizes through the real binary: names in several scripts, NFC next to
//! NFD, leading/trailing spaces, newlines, `%`, `%2e` and bytes that are not UTF-8 in every
//! file tool, resource URIs and completion; trailing slashes; over-long and deep paths;
//! images against the output budget; edits with huge match counts and diffs; thousands of
//! roots. Every case ends with a `ping` that must be answered.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

fn started(ws: &Workspace, extra: &[&str]) -> Client {
    let mut client = Client::spawn(extra, &ws.app);
    client.handshake(json!({}));
    client
}

/// The server still answers.
fn ping(client: &mut Client) {
    let response = client.request("ping", json!({}));
    assert!(response.get("result").is_some(), "ping: {response}");
}

/// The names every tool must handle, with how to pass each as a path argument (relative to
/// the root; as a `file://` URI when the name is not UTF-8).
fn hostile_names() -> Vec<OsString> {
    vec![
        "设计.md".into(),
        "ملف.txt".into(),
        "😀 emoji.txt".into(),
        "caf\u{e9}.txt".into(),   // NFC
        "cafe\u{301}.txt".into(), // NFD: another file
        " lead.txt".into(),
        "trail.txt ".into(),
        "new\nline.txt".into(),
        "50%.txt".into(),
        "%2e".into(),
        "q?#.txt".into(),
        OsString::from_vec(b"bad\xff\xfe.txt".to_vec()),
    ]
}

fn arg_for(root: &Path, name: &OsString) -> String {
    match name.to_str() {
        Some(text) => text.to_string(),
        None => uri(&root.join(name)),
    }
}

/// A tool result's text, asserting it is not an error.
fn ok_text(result: &Value, what: &str) -> String {
    assert!(!is_error(result), "{what}: {}", text(result));
    text(result)
}

#[test]
fn hostile_names_work_in_every_tool() {
    let ws = workspace();
    let names = hostile_names();
    for (i, name) in names.iter().enumerate() {
        std::fs::write(ws.app.join(name), format!("content {i}\n")).unwrap();
    }
    let mut client = started(&ws, &["--no-watch"]);
    for (i, name) in names.iter().enumerate() {
        let path = ws.app.join(name);
        let arg = arg_for(&ws.app, name);
        let as_uri = uri(&path);
        // read_file: by plain path (when possible) and by URI, each its own file.
        for form in [&arg, &as_uri] {
            let read = client.call("read_file", json!({"path": form}));
            assert!(
                ok_text(&read, &format!("read {form:?}")).contains(&format!("content {i}\n")),
                "{form:?}: {}",
                text(&read)
            );
        }
        ping(&mut client);
        let info = client.call("file_info", json!({"path": arg}));
        assert_eq!(info["structuredContent"]["type"], "file", "{name:?}");
        let shown = info["structuredContent"]["path"].as_str().unwrap();
        assert_eq!(
            rootgrep_core::roots::path_from_file_uri(&if shown.starts_with('/') {
                uri(Path::new(shown))
            } else {
                shown.to_string()
            })
            .unwrap(),
            path,
            "file_info names the exact file"
        );
        ping(&mut client);
        // write_file, then edit_file, on the same exact name.
        let write = client.call(
            "write_file",
            json!({"path": arg, "content": format!("written {i}\n")}),
        );
        ok_text(&write, &format!("write {name:?}"));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("written {i}\n")
        );
        let edit = client.call(
            "edit_file",
            json!({"path": arg, "old_string": "written", "new_string": "edited"}),
        );
        ok_text(&edit, &format!("edit {name:?}"));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("edited {i}\n")
        );
        if name.to_str().is_none() {
            // Messages name such a file by its exact URI, not a lossy spelling.
            let missing = client.call(
                "edit_file",
                json!({"path": arg, "old_string": "absent", "new_string": "x"}),
            );
            assert!(is_error(&missing));
            assert!(text(&missing).contains(&as_uri), "{}", text(&missing));
        }
        ping(&mut client);
        // move_file away and back.
        let mut moved = name.clone();
        moved.push(".moved");
        let moved_arg = arg_for(&ws.app, &moved);
        let mv = client.call(
            "move_file",
            json!({"source": arg, "destination": moved_arg}),
        );
        ok_text(&mv, &format!("move {name:?}"));
        assert!(ws.app.join(&moved).exists() && !path.exists());
        let back = client.call(
            "move_file",
            json!({"source": moved_arg, "destination": arg}),
        );
        ok_text(&back, &format!("move back {name:?}"));
        assert!(path.exists());
        // glob and grep with the file as `path`.
        let grep = client.call(
            "grep",
            json!({"pattern": "edited", "path": arg, "output_mode": "content"}),
        );
        assert!(
            ok_text(&grep, &format!("grep {name:?}")).contains(&format!("edited {i}")),
            "{}",
            text(&grep)
        );
        let glob = client.call("glob", json!({"pattern": "*", "path": ws.app.to_str()}));
        ok_text(&glob, "glob");
        // resources/read of the exact URI.
        let read = client.request("resources/read", json!({"uri": as_uri}));
        assert_eq!(
            read["result"]["contents"][0]["text"],
            format!("edited {i}\n"),
            "resources/read {as_uri}: {read}"
        );
        ping(&mut client);
    }
    // A directory with a hostile name as the `path` of glob, grep, list_directory and
    // directory_tree.
    for dir in [
        OsString::from("目录 %2e\nx"),
        OsString::from_vec(b"d\xff ".to_vec()),
    ] {
        std::fs::create_dir(ws.app.join(&dir)).unwrap();
        std::fs::write(ws.app.join(&dir).join("inner.rs"), "needle\n").unwrap();
        let arg = arg_for(&ws.app, &dir);
        let glob = client.call("glob", json!({"pattern": "*.rs", "path": arg}));
        assert!(
            ok_text(&glob, "glob in a hostile dir").contains("inner.rs"),
            "{}",
            text(&glob)
        );
        let grep = client.call("grep", json!({"pattern": "needle", "path": arg}));
        assert!(ok_text(&grep, "grep in a hostile dir").contains("inner.rs"));
        let listed = client.call("list_directory", json!({"path": arg}));
        assert!(ok_text(&listed, "list a hostile dir").contains("inner.rs"));
        let tree = client.call("directory_tree", json!({"path": arg}));
        assert!(ok_text(&tree, "tree of a hostile dir").contains("inner.rs"));
        ping(&mut client);
    }
    // Two spellings of café are two files with their own contents.
    let nfc = client.call("read_file", json!({"path": "caf\u{e9}.txt"}));
    let nfd = client.call("read_file", json!({"path": "cafe\u{301}.txt"}));
    assert_ne!(text(&nfc), text(&nfd));
    // list_directory: every name, each naming its exact file (by its exact name in the
    // directory, or by URI when it is not UTF-8).
    let listed = client.call("list_directory", json!({"path": ws.app.to_str()}));
    let entries = listed["structuredContent"]["directories"][0]["entries"]
        .as_array()
        .unwrap()
        .clone();
    for name in &names {
        let want = ws.app.join(name);
        assert!(
            entries.iter().any(|e| {
                let exact = match (e.as_str(), e["uri"].as_str()) {
                    (Some(name), _) => ws.app.join(name.trim_end_matches('/')),
                    (None, Some(uri)) => rootgrep_core::roots::path_from_file_uri(uri).unwrap(),
                    (None, None) => ws
                        .app
                        .join(e["name"].as_str().unwrap().trim_end_matches('/')),
                };
                exact == want
            }),
            "list_directory lacks {name:?}: {entries:?}"
        );
    }
    assert!(
        text(&listed).contains("\"new\\nline.txt\""),
        "a newline in a name is shown escaped: {}",
        text(&listed)
    );
    // directory_tree: one line per name, the newline escaped, the non-UTF-8 name with its URI.
    let tree = ok_text(
        &client.call("directory_tree", json!({"path": ws.app.to_str()})),
        "tree",
    );
    assert!(
        tree.contains("设计.md") && tree.contains("\"new\\nline.txt\""),
        "{tree}"
    );
    assert!(
        tree.contains(&uri(&ws.app.join(&names[11]))),
        "the non-UTF-8 name has its exact URI: {tree}"
    );
    ping(&mut client);
    // Completion: values resolve back to the exact names.
    let base = uri(&ws.app)["file:///".len()..].to_string();
    let response = client.request(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"},
               "argument": {"name": "path", "value": format!("{base}/")}}),
    );
    let values = response["result"]["completion"]["values"]
        .as_array()
        .unwrap()
        .clone();
    for name in &names {
        let want = ws.app.join(name);
        assert!(
            values.iter().any(|v| {
                rootgrep_core::roots::path_from_file_uri(&format!(
                    "file:///{}",
                    v.as_str().unwrap()
                ))
                .unwrap()
                    == want
            }),
            "completion lacks {name:?}: {values:?}"
        );
    }
    ping(&mut client);
}

#[test]
fn paths_are_not_trimmed_and_a_trailing_slash_means_a_directory() {
    let ws = workspace();
    std::fs::write(ws.app.join("notes.txt"), "keep\n").unwrap();
    let mut client = started(&ws, &["--no-watch"]);
    let write = client.call(
        "write_file",
        json!({"path": "notes.txt ", "content": "other\n"}),
    );
    ok_text(&write, "write with a trailing space");
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes.txt")).unwrap(),
        "keep\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes.txt ")).unwrap(),
        "other\n"
    );
    let read = client.call("read_file", json!({"path": " notes.txt"}));
    assert!(is_error(&read), "{}", text(&read));
    ping(&mut client);
    // "sub/" names a directory: write_file refuses and creates nothing.
    let write = client.call("write_file", json!({"path": "sub/", "content": "x"}));
    assert!(is_error(&write), "{}", text(&write));
    assert!(text(&write).contains("directory"), "{}", text(&write));
    assert!(!ws.app.join("sub").exists());
    // On an existing file a trailing slash fails in every tool.
    for (tool, args) in [
        ("read_file", json!({"path": "notes.txt/"})),
        ("file_info", json!({"path": "notes.txt/"})),
        ("list_directory", json!({"path": "notes.txt/"})),
        (
            "write_file",
            json!({"path": "notes.txt/", "content": "clobber"}),
        ),
        (
            "edit_file",
            json!({"path": "notes.txt/", "old_string": "keep", "new_string": "x"}),
        ),
    ] {
        let result = client.call(tool, args);
        assert!(is_error(&result), "{tool}: {}", text(&result));
        assert!(
            text(&result).contains("not a directory"),
            "{tool}: {}",
            text(&result)
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes.txt")).unwrap(),
        "keep\n"
    );
    let mv = client.call(
        "move_file",
        json!({"source": "notes.txt", "destination": "elsewhere/"}),
    );
    assert!(is_error(&mv), "{}", text(&mv));
    assert!(ws.app.join("notes.txt").exists());
    // A directory with a trailing slash is fine.
    let made = client.call("create_directory", json!({"path": "made/"}));
    ok_text(&made, "create_directory made/");
    assert!(ws.app.join("made").is_dir());
    ok_text(
        &client.call("list_directory", json!({"path": "made/"})),
        "list made/",
    );
    ping(&mut client);
}

#[test]
fn over_long_and_deep_paths() {
    let ws = workspace();
    // A deep (but valid) tree: 120 levels.
    let mut deep = ws.app.clone();
    for _ in 0..120 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("f.txt"), "deep\n").unwrap();
    let mut client = started(&ws, &["--no-watch"]);
    let read = client.call("read_file", json!({"path": deep.join("f.txt").to_str()}));
    assert!(ok_text(&read, "deep read").contains("deep"));
    let rel = "d/".repeat(120) + "f.txt";
    ok_text(&client.call("file_info", json!({"path": rel})), "deep info");
    ping(&mut client);
    let long_name = "n".repeat(256);
    let long_path = "a/".repeat(2100);
    let huge = format!("/{}", "x/".repeat(500_000));
    for (what, path) in [
        ("name", long_name.as_str()),
        ("path", long_path.as_str()),
        ("huge", huge.as_str()),
    ] {
        for tool in [
            "read_file",
            "file_info",
            "list_directory",
            "create_directory",
        ] {
            let started = Instant::now();
            let result = client.call(tool, json!({"path": path}));
            assert!(is_error(&result), "{what} {tool}: {}", text(&result));
            assert!(
                text(&result).contains("NAME_MAX") || text(&result).contains("PATH_MAX"),
                "{what} {tool}: {}",
                text(&result)
            );
            eprintln!("{what} {tool}: refused in {:?}", started.elapsed());
        }
        let write = client.call("write_file", json!({"path": path, "content": "x"}));
        assert!(is_error(&write));
        ping(&mut client);
    }
}

/// A PNG header and `size` bytes of filler: what the server sniffs as an image.
fn fake_png(path: &Path, size: usize) {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.resize(size, 0x5a);
    std::fs::write(path, bytes).unwrap();
}

#[cfg(target_os = "linux")]
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn images_count_against_the_output_budget() {
    let ws = workspace();
    fake_png(&ws.app.join("big.png"), 4_900_000);
    fake_png(&ws.app.join("small.png"), 10_000);
    let budget = 65_536;
    let mut client = started(&ws, &["--no-watch", "--max-output-bytes", "65536"]);
    let started = Instant::now();
    let result = client.call("read_files", json!({"paths": vec!["big.png"; 100]}));
    eprintln!("read_files big.png x100: {:?}", started.elapsed());
    let size = result.to_string().len();
    assert!(size <= budget + 4096, "answer of {size} bytes");
    assert!(
        result["content"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["type"] == "text")
    );
    assert!(text(&result).contains("not attached"), "{}", text(&result));
    // The peak (VmHWM) is read from /proc: Linux only.
    #[cfg(target_os = "linux")]
    assert!(
        peak_rss_kib(client.pid()) < 256 * 1024,
        "peak RSS {} KiB",
        peak_rss_kib(client.pid())
    );
    ping(&mut client);
    // Small images: as many as fit, then a note saying how to get the rest.
    let result = client.call("read_files", json!({"paths": vec!["small.png"; 100]}));
    let size = result.to_string().len();
    assert!(size <= budget + 4096, "answer of {size} bytes");
    let images = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "image")
        .count();
    assert!((1..10).contains(&images), "{images} images");
    assert!(
        text(&result).contains("call read_files again") || text(&result).contains("not attached"),
        "{}",
        text(&result)
    );
    // One image over the budget in read_file: described, not attached.
    let result = client.call("read_file", json!({"path": "big.png"}));
    assert!(result.to_string().len() <= budget + 4096);
    assert!(
        text(&result).contains("--max-output-bytes"),
        "{}",
        text(&result)
    );
    let result = client.call("read_file", json!({"path": "small.png"}));
    assert_eq!(result["content"][1]["type"], "image", "{result}");
    ping(&mut client);
}

#[test]
fn edits_with_huge_match_counts_and_diffs_answer_promptly() {
    let ws = workspace();
    std::fs::write(ws.app.join("many.txt"), "x = 1\n".repeat(100_000)).unwrap();
    let lines: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.app.join("lines.txt"), &lines).unwrap();
    let mut client = started(&ws, &["--no-watch"]);
    let started = Instant::now();
    let result = client
        .call_within(
            "edit_file",
            json!({"path": "many.txt", "old_string": "x = 1", "new_string": "x = 2"}),
            Duration::from_secs(60),
        )
        .expect("answered");
    eprintln!("edit_file, 100,000 matches: {:?}", started.elapsed());
    let body = text(&result["result"]);
    assert!(is_error(&result["result"]));
    assert!(
        body.contains("100000 times") && body.contains("lines 1, 2, 3"),
        "{body}"
    );
    ping(&mut client);
    let started = Instant::now();
    let result = client
        .call_within(
            "edit_file",
            json!({"path": "lines.txt", "old_string": "line", "new_string": "LINE", "replace_all": true}),
            Duration::from_secs(60),
        )
        .expect("answered");
    eprintln!("edit_file, 30,000 changed lines: {:?}", started.elapsed());
    let result = &result["result"];
    ok_text(result, "replace_all");
    assert_eq!(result["structuredContent"]["replacements"], json!([30_000]));
    assert!(
        std::fs::read_to_string(ws.app.join("lines.txt")).unwrap() == lines.replace("line", "LINE"),
        "replace_all wrote the wrong text"
    );
    assert!(result.to_string().len() <= 65_536 + 4096);
    ping(&mut client);
}

#[test]
fn thousands_of_roots_stay_within_the_budget() {
    let ws = workspace();
    let budget = 65_536;
    let mut client = Client::spawn(&["--no-watch", "--max-output-bytes", "65536"], &ws.app);
    client.handshake(json!({"roots": {"listChanged": true}}));
    let request = client
        .server_request("roots/list", WAIT)
        .expect("roots/list");
    let roots: Vec<Value> = (0..5000)
        .map(|i| {
            json!({"uri": format!("file:///nonexistent/{}/root-{i}", "r".repeat(100)),
                   "name": format!("root {i}")})
        })
        .collect();
    client.respond(&request["id"], json!({"roots": roots}));
    let listed = client.call("list_roots", json!({}));
    let size = wire_size(&listed);
    assert!(
        size <= budget,
        "list_roots answered {size} bytes in one form"
    );
    let structured = &listed["structuredContent"];
    assert_eq!(structured["total"], 5000);
    let next = structured["next_offset"].as_u64().expect("pages");
    assert!(text(&listed).contains(&format!("offset={next}")));
    let page = client.call("list_roots", json!({"offset": next}));
    assert!(wire_size(&page) <= budget);
    assert_eq!(
        page["structuredContent"]["roots"][0]["path"],
        format!("/nonexistent/{}/root-{next}", "r".repeat(100))
    );
    ping(&mut client);
    // Error texts that name the roots are bounded too.
    for (tool, args) in [
        ("list_directory", json!({})),
        ("grep", json!({"pattern": "x"})),
    ] {
        let result = client.call(tool, args);
        let size = result.to_string().len();
        assert!(size <= budget + 4096, "{tool} answered {size} bytes");
        assert!(text(&result).contains("more"), "{tool}: {}", text(&result));
        ping(&mut client);
    }
}

#[test]
fn numeric_arguments_have_documented_maxima() {
    let ws = workspace();
    let mut client = started(&ws, &["--no-watch", "--tools", "all"]);
    let listed = client.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    for (tool, params) in [
        ("read_file", &["offset", "limit"][..]),
        ("read_files", &["limit"][..]),
        ("list_directory", &["offset", "head_limit"][..]),
        ("directory_tree", &["max_depth", "head_limit"][..]),
        ("list_roots", &["offset", "head_limit"][..]),
    ] {
        let schema = &tools.iter().find(|t| t["name"] == tool).unwrap()["inputSchema"];
        for param in params {
            assert!(
                schema["properties"][param]["maximum"].is_u64(),
                "{tool}.{param}: {schema}"
            );
        }
    }
    let mv = tools.iter().find(|t| t["name"] == "move_file").unwrap();
    assert_eq!(mv["annotations"]["destructiveHint"], true);
    let result = client.call(
        "read_file",
        json!({"path": "src/main.rs", "offset": 1_000_000_001u64}),
    );
    assert!(is_error(&result) && text(&result).contains("maximum"));
    let result = client.call(
        "directory_tree",
        json!({"max_depth": 1_000_000_000u64, "head_limit": 1_000_000_000u64}),
    );
    ok_text(&result, "clamped tree");
    ping(&mut client);
}

#[test]
fn a_cancelled_edit_writes_nothing() {
    let ws = workspace();
    // Every line changes: the diff runs into its deadline (about a second), so the
    // cancellation arrives while the edit is still working.
    let lines: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.app.join("lines.txt"), &lines).unwrap();
    let mut client = started(&ws, &["--no-watch"]);
    let before = cpu_ticks(client.pid());
    let id = client.start(
        "tools/call",
        json!({"name": "edit_file", "arguments": {"path": "lines.txt", "old_string": "line",
               "new_string": "LINE", "replace_all": true}}),
    );
    // Cancel once the edit is surely at work (the server has burnt 200 ms of CPU since).
    let deadline = Instant::now() + Duration::from_secs(10);
    while cpu_ticks(client.pid()) < before + 20 && Instant::now() < deadline {
        std::thread::yield_now();
    }
    client.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "changed my mind"}),
    );
    // No answer for a cancelled request; the wait also outlasts the diff's deadline.
    let answered = client.wait_for(Duration::from_secs(4), |m| {
        m.get("id") == Some(&json!(id)) && m.get("method").is_none()
    });
    assert!(answered.is_none(), "answered: {answered:?}");
    ping(&mut client);
    // Compared without printing 30,000 lines on failure.
    assert!(
        std::fs::read_to_string(ws.app.join("lines.txt")).unwrap() == lines,
        "a cancelled edit must not write"
    );
}
