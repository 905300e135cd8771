//! Nothing said twice in a session: `read_file` (with or without `symbol`), `search` and
//! `grep` + `scope` leave out runs of lines the session already showed from an unchanged
//! file ("lines A-B: unchanged since shown"), unless the call passes `repeat: true`; a
//! save (the server's own, or another program's seen by the watcher) shows them again.

use serde_json::{Value, json};

use crate::support::*;

const UNCHANGED: &str = "unchanged since shown";

/// A Rust file of `functions` functions, each 8 lines long.
fn source(functions: usize, tag: &str) -> String {
    (0..functions)
        .map(|i| {
            format!(
                "/// Drains queue {i}.\npub fn drain_{i}(queue: &mut Vec<u32>) -> u32 {{\n    \
                 let mut total = 0;\n    while let Some(item) = queue.pop() {{\n        \
                 total += item; // {tag}\n    }}\n    total\n}}\n"
            )
        })
        .collect()
}

/// Waits until files written now count as settled (only lines of a file that last changed
/// a while before the call are remembered: `shown::SETTLED`).
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(250));
}

/// Rewrites `file` with `text` of the same size, its mtime put back (what `cp -p`,
/// `rsync -t` and `tar x` leave).
#[cfg(unix)]
fn rewrite_keeping_size_and_mtime(file: &std::path::Path, text: &str) {
    let modified = std::fs::metadata(file).unwrap().modified().unwrap();
    assert_eq!(std::fs::metadata(file).unwrap().len(), text.len() as u64);
    std::fs::write(file, text).unwrap();
    let handle = std::fs::File::options().write(true).open(file).unwrap();
    handle.set_modified(modified).unwrap();
}

fn server(ws: &Workspace, watch: bool) -> Client {
    let mut args = vec!["--no-cache"];
    if !watch {
        args.push("--no-watch");
    }
    let mut client = Client::spawn(&args, &ws.app);
    client.handshake(json!({}));
    client
}

fn read(client: &mut Client, args: Value) -> String {
    let result = client.call("read_file", args);
    assert!(!is_error(&result), "{result}");
    text(&result)
}

#[test]
fn a_repeated_read_is_left_out_unless_asked_and_a_save_shows_it_again() {
    let ws = workspace();
    let file = ws.app.join("src").join("queue.rs");
    std::fs::write(&file, source(10, "first")).unwrap();
    settle();
    let mut client = server(&ws, false);
    let first = read(&mut client, json!({"path": "src/queue.rs"}));
    assert!(first.contains("pub fn drain_3"), "{first}");
    assert!(!first.contains(UNCHANGED), "{first}");
    // The same lines again: one note.
    let again = read(&mut client, json!({"path": "src/queue.rs"}));
    assert_eq!(
        again,
        format!("[lines 1-80: {UNCHANGED}; repeat: true shows them]\n")
    );
    // Partly new: the new lines shown, the old ones one note.
    let window = read(
        &mut client,
        json!({"path": "src/queue.rs", "offset": 75, "limit": 10}),
    );
    assert!(
        window.starts_with(&format!("[lines 75-80: {UNCHANGED}")),
        "{window}"
    );
    // A few lines are cheaper than the note: shown again.
    let few = read(
        &mut client,
        json!({"path": "src/queue.rs", "offset": 2, "limit": 3}),
    );
    assert!(few.starts_with("2\tpub fn drain_0"), "{few}");
    // repeat: true shows them.
    let repeated = read(&mut client, json!({"path": "src/queue.rs", "repeat": true}));
    assert_eq!(repeated, first);
    // The definition read by name: already shown too.
    let symbol = read(
        &mut client,
        json!({"path": "src/queue.rs", "symbol": "drain_4"}),
    );
    assert!(symbol.contains(UNCHANGED), "{symbol}");
    assert!(!symbol.contains("total += item"), "{symbol}");
    // A save through the server: shown again, with the new text.
    let saved = client.call(
        "write_file",
        json!({"path": "src/queue.rs", "content": source(10, "second")}),
    );
    assert!(!is_error(&saved), "{saved}");
    let after = read(&mut client, json!({"path": "src/queue.rs"}));
    assert!(
        after.contains("// second") && !after.contains(UNCHANGED),
        "{after}"
    );
    settle();
    read(&mut client, json!({"path": "src/queue.rs"}));
    // Another program's save changes the size or time: shown again without the watcher.
    std::fs::write(&file, source(10, "third!")).unwrap();
    let external = read(&mut client, json!({"path": "src/queue.rs"}));
    assert!(
        external.contains("// third!") && !external.contains(UNCHANGED),
        "{external}"
    );
}

/// A save that keeps the file's size and modification time is seen by the watcher: its
/// event makes the lines shown again. (Linux: inotify reports every write; the other
/// platforms' watchers are not run here.)
#[cfg(target_os = "linux")]
#[test]
fn the_watcher_forgets_a_file_saved_with_the_same_size_and_time() {
    let ws = workspace();
    let file = ws.app.join("src").join("queue.rs");
    std::fs::write(&file, source(10, "aaaa")).unwrap();
    let mut client = server(&ws, true);
    wait_indexed(&mut client);
    for round in ["bbbb", "cccc", "dddd"] {
        settle();
        read(&mut client, json!({"path": "src/queue.rs"}));
        assert!(read(&mut client, json!({"path": "src/queue.rs"})).contains(UNCHANGED));
        rewrite_keeping_size_and_mtime(&file, &source(10, round));
        // At once, before the watcher's event may have come: the stamp tells.
        let text = read(&mut client, json!({"path": "src/queue.rs"}));
        assert!(text.contains(&format!("// {round}")), "hidden: {text}");
    }
}

/// Without the watcher, a rewrite of the same size with the mtime put back is still seen
/// (the change time and inode are part of the stamp): `read_file`, `search` and `grep` +
/// `scope` all show the new text. Unix: Windows' metadata has no change time (DECISIONS.md).
#[cfg(unix)]
#[test]
fn a_rewrite_keeping_size_and_mtime_is_never_hidden() {
    let ws = workspace();
    let file = ws.app.join("src").join("queue.rs");
    std::fs::write(&file, source(10, "aaaa")).unwrap();
    settle();
    let mut client = server(&ws, false);
    let calls = [
        ("read_file", json!({"path": "src/queue.rs"})),
        (
            "search",
            json!({"query": "drain the queue", "head_limit": 3}),
        ),
        (
            "grep",
            json!({"pattern": "total \\+= item", "scope": true, "-C": 3}),
        ),
    ];
    for (round, (tool, args)) in ["bbbb", "cccc", "dddd"].iter().zip(calls) {
        let prev = text(&client.call(tool, args.clone()));
        assert!(!prev.contains(UNCHANGED), "{tool}: {prev}");
        settle();
        client.call(tool, args.clone());
        let again = text(&client.call(tool, args.clone()));
        assert!(again.contains(UNCHANGED), "{tool}: {again}");
        rewrite_keeping_size_and_mtime(&file, &source(10, round));
        let after = text(&client.call(tool, args.clone()));
        assert!(
            after.contains(&format!("// {round}")),
            "{tool} hid it: {after}"
        );
        settle();
    }
}

#[test]
fn search_and_grep_scope_leave_out_what_a_read_showed() {
    let ws = workspace();
    std::fs::write(ws.app.join("src").join("queue.rs"), source(10, "first")).unwrap();
    settle();
    let mut client = server(&ws, false);
    // grep + scope first: its lines are new.
    let args = json!({"pattern": "total \\+= item", "scope": true, "-C": 3});
    let grep = client.call("grep", args.clone());
    assert!(!text(&grep).contains(UNCHANGED), "{}", text(&grep));
    // Again: each definition's run of lines is one note, in both forms.
    let grep = client.call("grep", args.clone());
    let body = text(&grep);
    assert!(
        body.contains("@@ function drain_0 (2-8)\n[lines 2-8: unchanged"),
        "{body}"
    );
    assert!(!body.contains("total += item"), "{body}");
    let file = &grep["structuredContent"]["matches"][0];
    assert_eq!(file["unchanged"][0], json!([2, 8]), "{grep}");
    assert!(
        file.get("scopes").is_none() && file.get("context").is_none(),
        "{grep}"
    );
    let mut repeated = args.clone();
    repeated["repeat"] = json!(true);
    assert!(text(&client.call("grep", repeated)).contains("total += item"));
    // search after a read of the file: the excerpts are notes.
    read(&mut client, json!({"path": "src/queue.rs", "repeat": true}));
    let search = client.call(
        "search",
        json!({"query": "drain the queue", "head_limit": 3}),
    );
    let body = text(&search);
    assert!(body.contains(UNCHANGED), "{body}");
    let first = &search_results(&search)[0];
    assert!(
        first["text"].as_str().unwrap().contains(UNCHANGED),
        "{search}"
    );
    let search = client.call(
        "search",
        json!({"query": "drain the queue", "head_limit": 3, "repeat": true}),
    );
    assert!(!text(&search).contains(UNCHANGED), "{}", text(&search));
}

#[test]
fn the_descriptions_say_so() {
    let ws = workspace();
    let mut client = server(&ws, false);
    let listed = client.request("tools/list", json!({}));
    for tool in listed["result"]["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let says = tool["description"]
            .as_str()
            .unwrap()
            .contains("repeat: true");
        let has = tool["inputSchema"]["properties"].get("repeat").is_some();
        assert_eq!(says, has, "{name}");
        if ["read_file", "search", "grep"].contains(&name) {
            assert!(says, "{name}: {tool}");
        }
    }
}

/// Issue #36, item 12: a grep page's context lines are held by the matching rows beside
/// them; a context line beside a run left out as shown before (its matching line in the
/// run) is a `context` row of its own, so no line is lost from either form.
#[test]
fn context_beside_a_run_shown_before_keeps_its_own_rows() {
    let ws = workspace();
    std::fs::write(ws.app.join("src").join("queue.rs"), source(2, "first")).unwrap();
    settle();
    let mut client = server(&ws, false);
    read(
        &mut client,
        json!({"path": "src/queue.rs", "offset": 1, "limit": 6}),
    );
    let args = json!({"pattern": "total \\+= item", "scope": true, "-C": 3});
    let grep = client.call("grep", args);
    let body = text(&grep);
    assert!(body.contains("[lines 2-6: unchanged"), "{body}");
    assert!(body.contains("\n7-    total\n8-}\n"), "{body}");
    let file = &grep["structuredContent"]["matches"][0];
    assert_eq!(file["unchanged"], json!([[2, 6]]), "{grep}");
    assert_eq!(
        file["context"],
        json!([[7, "    total"], [8, "}"]]),
        "{grep}"
    );
    let row = &file["scopes"][0][4][0];
    assert_eq!(row[0], 13, "{grep}");
    assert_eq!(row[2].as_array().unwrap().len(), 3, "lines 10-12: {row}");
    assert_eq!(
        row[3],
        json!(["    }", "    total", "}"]),
        "lines 14-16: {row}"
    );
}
