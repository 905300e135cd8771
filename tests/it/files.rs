//! File tools through the wire: listing, tree, writes, edits, moves, read-only mode, write
//! grants, and the output budget on huge directories.

use std::os::unix::fs::symlink;

use serde_json::json;

use crate::support::*;

fn started(ws: &Workspace, extra: &[&str]) -> Client {
    let mut client = Client::spawn(extra, &ws.app);
    client.handshake(json!({}));
    client
}

#[test]
fn write_edit_move_round_trip() {
    let ws = workspace();
    let mut client = started(&ws, &[]);
    let result = client.call("write_file", json!({"path": "notes/a.txt", "content": "x"}));
    assert!(
        is_error(&result),
        "missing parent without create_dirs must fail"
    );
    assert!(text(&result).contains("create_dirs"), "{}", text(&result));
    let result = client.call(
        "write_file",
        json!({"file_path": "notes/a.txt", "content": "alpha\nbeta\nalpha\n", "create_dirs": true}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes/a.txt")).unwrap(),
        "alpha\nbeta\nalpha\n"
    );
    // Ambiguous edit: refused with count and lines, file untouched.
    let result = client.call(
        "edit_file",
        json!({"path": "notes/a.txt", "old_string": "alpha", "new_string": "gamma"}),
    );
    assert!(is_error(&result));
    let body = text(&result);
    assert!(
        body.contains('2') && body.contains("1") && body.contains("3"),
        "{body}"
    );
    // Dry run returns a diff and writes nothing.
    let result = client.call(
        "edit_file",
        json!({"path": "notes/a.txt", "old_string": "beta", "new_string": "BETA", "dry_run": true}),
    );
    assert!(text(&result).contains("-beta") && text(&result).contains("+BETA"));
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes/a.txt")).unwrap(),
        "alpha\nbeta\nalpha\n"
    );
    // Reference-server names work too; edits are all or nothing.
    let result = client.call(
        "edit_file",
        json!({"path": "notes/a.txt", "edits": [{"oldText": "beta", "newText": "BETA"}, {"oldText": "missing", "newText": "x"}]}),
    );
    assert!(is_error(&result));
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes/a.txt")).unwrap(),
        "alpha\nbeta\nalpha\n"
    );
    let result = client.call(
        "edit_file",
        json!({"path": "notes/a.txt", "old_string": "alpha", "new_string": "gamma", "replace_all": true}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    assert_eq!(result["structuredContent"]["replacements"], json!([2]));
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes/a.txt")).unwrap(),
        "gamma\nbeta\ngamma\n"
    );
    // Move never overwrites.
    std::fs::write(ws.app.join("notes/b.txt"), "keep me").unwrap();
    let result = client.call(
        "move_file",
        json!({"source": "notes/a.txt", "destination": "notes/b.txt"}),
    );
    assert!(is_error(&result));
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes/b.txt")).unwrap(),
        "keep me"
    );
    assert!(ws.app.join("notes/a.txt").exists());
    let result = client.call(
        "move_file",
        json!({"source": "notes/a.txt", "destination": "notes/c.txt"}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    assert!(!ws.app.join("notes/a.txt").exists());
    assert!(ws.app.join("notes/c.txt").exists());
    let result = client.call("create_directory", json!({"path": "deep/er/dir"}));
    assert!(!is_error(&result));
    assert!(ws.app.join("deep/er/dir").is_dir());
    let again = client.call("create_directory", json!({"path": "deep/er/dir"}));
    assert!(!is_error(&again));
}

#[test]
fn crlf_and_bom_survive_an_edit() {
    let ws = workspace();
    std::fs::write(
        ws.app.join("win.txt"),
        b"\xEF\xBB\xBFone\r\ntwo\r\nthree\r\n",
    )
    .unwrap();
    let mut client = started(&ws, &[]);
    let result = client.call(
        "edit_file",
        json!({"path": "win.txt", "old_string": "one\ntwo", "new_string": "uno\ndos"}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    assert_eq!(
        std::fs::read(ws.app.join("win.txt")).unwrap(),
        b"\xEF\xBB\xBFuno\r\ndos\r\nthree\r\n"
    );
}

#[test]
fn writes_through_symlinks_out_of_the_roots_are_refused() {
    let ws = workspace();
    symlink(&ws.outside, ws.app.join("out")).unwrap();
    symlink(ws.outside.join("secret.txt"), ws.app.join("secret-link")).unwrap();
    let mut client = started(&ws, &[]);
    for (tool, args) in [
        ("write_file", json!({"path": "out/new.txt", "content": "x"})),
        ("write_file", json!({"path": "secret-link", "content": "x"})),
        (
            "edit_file",
            json!({"path": "secret-link", "old_string": "TOP", "new_string": "x"}),
        ),
        ("create_directory", json!({"path": "out/newdir"})),
        (
            "move_file",
            json!({"source": "src/main.rs", "destination": "out/main.rs"}),
        ),
        (
            "move_file",
            json!({"source": "../outside/secret.txt", "destination": "stolen.txt"}),
        ),
    ] {
        let result = client.call(tool, args.clone());
        assert!(is_error(&result), "{tool} {args} should be refused");
    }
    assert!(!ws.outside.join("new.txt").exists());
    assert!(!ws.outside.join("newdir").exists());
    assert!(!ws.outside.join("main.rs").exists());
    assert_eq!(
        std::fs::read_to_string(ws.outside.join("secret.txt")).unwrap(),
        "TOP-SECRET-CONTENT\n"
    );
    // Moving the link itself (inside the root) is allowed and moves the link, not the target.
    let result = client.call(
        "move_file",
        json!({"source": "secret-link", "destination": "renamed-link"}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    assert!(
        std::fs::symlink_metadata(ws.app.join("renamed-link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(ws.outside.join("secret.txt").exists());
}

#[test]
fn read_only_mode_hides_and_refuses_write_tools() {
    let ws = workspace();
    let mut client = started(&ws, &["--read-only"]);
    let tools = client.request("tools/list", json!({}));
    let names: Vec<String> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    for write in ["write_file", "edit_file", "create_directory", "move_file"] {
        assert!(
            !names.contains(&write.to_string()),
            "{write} listed in read-only mode"
        );
        let result = client.call(write, json!({"path": "x", "content": "y"}));
        assert!(is_error(&result));
        assert!(text(&result).contains("--read-only"));
    }
    assert!(!ws.app.join("x").exists());
    assert!(names.contains(&"read_file".to_string()));
}

#[test]
fn a_read_grant_is_not_a_write_grant() {
    let ws = workspace();
    let mut client = Client::spawn(&[s(&ws.app)], &ws.base);
    client.handshake(json!({"elicitation": {}}));
    let id = client.start(
        "tools/call",
        json!({"name":"read_file","arguments":{"path": s(&ws.outside.join("secret.txt"))}}),
    );
    let question = client.server_request("elicitation/create", WAIT).unwrap();
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true,"remember":true}}),
    );
    assert!(!is_error(&client.response(id, WAIT).unwrap()["result"]));
    // Writing there asks again, and says "write".
    let id = client.start("tools/call", json!({"name":"write_file","arguments":{"path": s(&ws.outside.join("new.txt")), "content":"x"}}));
    let question = client
        .server_request("elicitation/create", WAIT)
        .expect("asked for write");
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains("write")
    );
    client.respond(&question["id"], json!({"action":"decline"}));
    assert!(is_error(&client.response(id, WAIT).unwrap()["result"]));
    assert!(!ws.outside.join("new.txt").exists());
}

#[test]
fn listing_and_tree_stay_within_the_budget() {
    let ws = workspace();
    let big = ws.app.join("big");
    std::fs::create_dir_all(&big).unwrap();
    for i in 0..3000 {
        std::fs::write(big.join(format!("file-with-a-longish-name-{i:05}.txt")), "").unwrap();
    }
    let mut deep = ws.app.join("deep");
    for i in 0..30 {
        deep = deep.join(format!("level{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    // .gitignore rules apply inside a git repository, as with ripgrep.
    std::fs::create_dir_all(ws.app.join(".git")).unwrap();
    std::fs::write(ws.app.join(".gitignore"), "ignored-dir/\n").unwrap();
    std::fs::create_dir_all(ws.app.join("ignored-dir")).unwrap();
    let mut client = started(&ws, &["--max-output-bytes", "8192"]);
    let result = client.call("list_directory", json!({"path": "big", "head_limit": 0}));
    let body = text(&result);
    assert!(body.len() <= 8192, "{}", body.len());
    let structured = &result["structuredContent"]["directories"][0];
    assert_eq!(structured["total"], 3000);
    let next = structured["next_offset"]
        .as_u64()
        .expect("more entries follow");
    assert!(body.contains(&format!("offset={next}")));
    let page2 = client.call(
        "list_directory",
        json!({"path": "big", "offset": next, "head_limit": 5}),
    );
    let entries = page2["structuredContent"]["directories"][0]["entries"]
        .as_array()
        .unwrap();
    assert_eq!(entries.len(), 5);
    assert_eq!(
        entries[0],
        format!("file-with-a-longish-name-{next:05}.txt")
    );
    let root = client.call("list_directory", json!({}));
    assert!(
        text(&root).contains("ignored-dir/ [ignored]"),
        "{}",
        text(&root)
    );
    let tree = client.call("directory_tree", json!({"max_depth": 50}));
    let body = text(&tree);
    assert!(body.len() <= 8192, "{}", body.len());
    assert!(
        body.contains("more entries not shown") || body.contains("budget"),
        "{body}"
    );
    assert!(!body.contains("ignored-dir"));
    let shallow = client.call("directory_tree", json!({"path": "deep", "max_depth": 2}));
    assert!(text(&shallow).contains("not expanded"));
}

/// Paths are taken exactly as given (contract §10): a name that starts or ends with a
/// space is that name, not the trimmed one.
#[test]
fn names_with_leading_or_trailing_spaces_are_taken_exactly() {
    let ws = workspace();
    std::fs::write(ws.app.join(" lead.txt"), "LEADING\n").unwrap();
    std::fs::write(ws.app.join("trail.txt "), "TRAILING\n").unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    for (path, content) in [(" lead.txt", "LEADING"), ("trail.txt ", "TRAILING")] {
        let result = client.call("read_file", json!({ "path": path }));
        assert!(!is_error(&result), "{path:?}: {}", text(&result));
        assert!(
            text(&result).contains(content),
            "{path:?}: {}",
            text(&result)
        );
    }
}
