//! Adversarial inputs through the wire: odd path forms, non-UTF-8 names, huge names and
//! paths, symlink chains and loops, a directory swapped for a symlink while it is used,
//! special files, unreadable files, files changing under a read, huge files, and protocol
//! abuse. Every case says what must happen — a clear error, skip-and-count, or a safe
//! default — and checks that nothing outside the roots was read or written.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// No single answer may take longer than this (generous: debug build, loaded 2-core box).
const DEADLINE: Duration = Duration::from_secs(15);

/// Calls a tool; panics when it hangs past [`DEADLINE`] or answers with a protocol error.
fn tool(client: &mut Client, name: &str, args: Value) -> Value {
    tool_within(client, name, args, DEADLINE)
}

/// Like [`tool`], with an explicit deadline (for the few calls that must scan 100 MB in a
/// debug build on a loaded machine).
fn tool_within(client: &mut Client, name: &str, args: Value, deadline: Duration) -> Value {
    let response = client
        .call_within(name, args.clone(), deadline)
        .unwrap_or_else(|| panic!("{name} {args} got no answer within {deadline:?}"));
    assert!(
        response.get("error").is_none(),
        "{name} {args}: protocol error instead of a tool result: {response}"
    );
    response["result"].clone()
}

/// `resources/read` of `uri`: the whole response, within [`DEADLINE`].
fn read_resource(client: &mut Client, uri: &str) -> Value {
    let id = client.start("resources/read", json!({ "uri": uri }));
    client
        .response(id, DEADLINE)
        .unwrap_or_else(|| panic!("resources/read {uri} got no answer within {DEADLINE:?}"))
}

/// The server still answers a ping, promptly.
fn assert_alive(client: &mut Client) {
    let id = client.start("ping", json!({}));
    let pong = client
        .response(id, DEADLINE)
        .expect("server stopped answering (ping)");
    assert_eq!(pong["result"], json!({}), "{pong}");
}

/// Text of anything (tool result, JSON-RPC error, resource contents) never shows outside
/// content.
fn assert_no_leak(what: &str, answer: &Value) {
    let body = answer.to_string();
    for secret in ["TOP-SECRET", "OTHER-CONTENT", "OUTSIDE-TOCTOU"] {
        assert!(!body.contains(secret), "{what} leaked {secret}: {body}");
    }
}

fn structured_paths(result: &Value, key: &str) -> Vec<String> {
    listed_paths(result, key)
}

/// Everything under `dir`, without following symlinks: file bytes, link targets, dirs.
#[derive(Debug, PartialEq, Eq)]
enum Node {
    File(Vec<u8>),
    Link(PathBuf),
    Dir,
    Other,
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Node> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Node>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let node = if meta.file_type().is_symlink() {
                Node::Link(std::fs::read_link(&path).unwrap_or_default())
            } else if meta.is_dir() {
                walk(&path, out);
                Node::Dir
            } else if meta.is_file() {
                Node::File(std::fs::read(&path).unwrap_or_default())
            } else {
                Node::Other
            };
            out.insert(path, node);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

fn names(dir: &Path) -> Vec<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().as_bytes().to_vec())
        .collect();
    names.sort();
    names
}

fn serve(ws: &Workspace) -> Client {
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    client
}

// ---------------------------------------------------------------------------------------
// Path forms
// ---------------------------------------------------------------------------------------

/// `//`, `/./`, trailing `/.`, `a/../b` inside a root: all name the same inside file and are
/// served (safe default: normalise); a `..` after a missing directory is a clear error, and
/// nothing outside is touched.
#[test]
fn redundant_separators_and_dots_resolve_inside() {
    let ws = workspace();
    let before = snapshot(&ws.outside);
    let mut client = serve(&ws);
    let app = s(&ws.app).to_string();
    for path in [
        format!("{app}//src//main.rs"),
        format!("/{app}/src/main.rs"),
        format!("{app}/./src/./main.rs"),
        format!("{app}/src/../src/main.rs"),
        format!("{app}/src/./../src/main.rs"),
        "src//main.rs".to_string(),
        "./src/./main.rs".to_string(),
        "src/../src/main.rs".to_string(),
        format!("file://{app}//src/./main.rs"),
        format!("file://{app}/src/../src/main.rs"),
    ] {
        let result = tool(&mut client, "read_file", json!({ "path": path }));
        assert!(!is_error(&result), "{path}: {}", text(&result));
        assert!(
            text(&result).contains("println!"),
            "{path}: {}",
            text(&result)
        );
    }
    // A trailing `/.` names the directory: listed by list_directory, refused by read_file.
    for path in [
        format!("{app}/src/."),
        "src/.".to_string(),
        format!("{app}/."),
    ] {
        let listing = tool(&mut client, "list_directory", json!({ "path": path }));
        assert!(!is_error(&listing), "{path}: {}", text(&listing));
        let read = tool(&mut client, "read_file", json!({ "path": path }));
        assert!(is_error(&read), "{path}: reading a directory must fail");
        assert!(text(&read).contains("directory"), "{}", text(&read));
    }
    let listing = tool(&mut client, "list_directory", json!({ "path": "src/." }));
    assert!(text(&listing).contains("main.rs"), "{}", text(&listing));
    // Writes through the same forms land on the normalised inside path.
    let result = tool(
        &mut client,
        "write_file",
        json!({"path": format!("{app}//./src/..//written.txt"), "content": "W\n"}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    assert_eq!(
        std::fs::read_to_string(ws.app.join("written.txt")).unwrap(),
        "W\n"
    );
    // `..` after a directory that does not exist: the OS would refuse it; so do we.
    let result = tool(
        &mut client,
        "write_file",
        json!({"path": "nowhere/../x.txt", "content": "x", "create_dirs": true}),
    );
    assert!(is_error(&result), "{}", text(&result));
    assert!(!ws.app.join("x.txt").exists());
    assert!(!ws.app.join("nowhere").exists());
    // Lexical `..` that climbs out is still outside.
    for path in [
        format!("{app}//..//outside/secret.txt"),
        format!("{app}/src/./../../outside/./secret.txt"),
    ] {
        let result = tool(&mut client, "read_file", json!({ "path": path }));
        assert!(is_error(&result), "{path} must be refused");
        assert_no_leak(&path, &result);
    }
    assert_eq!(snapshot(&ws.outside), before, "outside was modified");
}

/// Encoded separators decode to plain separators (they cannot smuggle a `..` past the
/// containment check); `%00` and raw NUL bytes are clear errors, never a truncated path.
#[test]
fn encoded_separators_and_nul_bytes_are_handled_cleanly() {
    let ws = workspace();
    let before = snapshot(&ws.outside);
    let app_before = snapshot(&ws.app);
    let mut client = serve(&ws);
    let app_uri = uri(&ws.app);
    // %2F inside a URI is a separator once decoded: reads the inside file (or refuses
    // clearly), never anything else.
    let result = tool(
        &mut client,
        "read_file",
        json!({"path": format!("{app_uri}/src%2Fmain.rs")}),
    );
    assert!(
        is_error(&result) || text(&result).contains("println!"),
        "{}",
        text(&result)
    );
    for path in [
        format!("{app_uri}/src%2F..%2F..%2Foutside%2Fsecret.txt"),
        format!("{app_uri}%2F..%2Foutside%2Fsecret.txt"),
        format!("{app_uri}/src/%2E%2E/%2e%2e/outside/secret.txt"),
    ] {
        for name in ["read_file", "file_info"] {
            let result = tool(&mut client, name, json!({ "path": path }));
            assert!(is_error(&result), "{name} {path} must be refused");
            assert_no_leak(&path, &result);
        }
        let response = read_resource(&mut client, &path);
        assert!(response.get("error").is_some(), "{response}");
        assert_no_leak(&path, &response);
    }
    // NUL: a clear error naming the problem, not a path cut at the NUL.
    for path in [
        format!("{app_uri}/src/main.rs%00"),
        format!("{app_uri}/src/main.rs%00.txt"),
        format!("{app_uri}/src%00/../../outside/secret.txt"),
    ] {
        let result = tool(&mut client, "read_file", json!({ "path": path }));
        assert!(is_error(&result), "{path} must be refused");
        assert!(text(&result).contains("NUL"), "{path}: {}", text(&result));
        assert_no_leak(&path, &result);
        let response = read_resource(&mut client, &path);
        assert!(response["error"]["code"].is_i64(), "{response}");
        assert_no_leak(&path, &response);
    }
    for path in [
        "src/main.rs\u{0}".to_string(),
        format!("{}\u{0}/../../outside/secret.txt", s(&ws.app)),
    ] {
        for name in ["read_file", "file_info", "list_directory"] {
            let result = tool(&mut client, name, json!({ "path": path }));
            assert!(is_error(&result), "{name} {path:?} must be refused");
            assert_no_leak(&path, &result);
        }
    }
    for path in [format!("{app_uri}/new%00.txt"), "new\u{0}.txt".to_string()] {
        let result = tool(
            &mut client,
            "write_file",
            json!({"path": path, "content": "x"}),
        );
        assert!(is_error(&result), "write_file {path:?} must be refused");
        let result = tool(&mut client, "create_directory", json!({ "path": path }));
        assert!(
            is_error(&result),
            "create_directory {path:?} must be refused"
        );
    }
    assert_alive(&mut client);
    assert_eq!(snapshot(&ws.app), app_before, "the root was modified");
    assert_eq!(snapshot(&ws.outside), before, "outside was modified");
}

// ---------------------------------------------------------------------------------------
// Non-UTF-8 names
// ---------------------------------------------------------------------------------------

/// File names that are not UTF-8 are reachable through percent-encoded `file://` URIs (the
/// exact bytes): grep and glob name them by such URIs, list and tree show them lossily
/// (U+FFFD) with the URI beside; nothing crashes.
#[test]
fn non_utf8_names_are_reachable_by_uri_and_listed_lossily() {
    let ws = workspace();
    let before = snapshot(&ws.outside);
    let file = ws.app.join(OsStr::from_bytes(b"bad\xff\xfe.txt"));
    let dir = ws.app.join(OsStr::from_bytes(b"dir\xc3("));
    std::fs::write(&file, "needle-nonutf8 top\n").unwrap();
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("inner.txt"), "needle-nonutf8 inner\n").unwrap();
    let mut client = serve(&ws);

    let file_uri = uri(&file);
    assert!(file_uri.contains("%FF%FE") || file_uri.contains("%ff%fe"));
    let result = tool(&mut client, "read_file", json!({ "path": file_uri }));
    assert!(!is_error(&result), "{}", text(&result));
    assert!(text(&result).contains("needle-nonutf8 top"));
    let inner_uri = uri(&dir.join("inner.txt"));
    let result = tool(&mut client, "read_file", json!({ "path": inner_uri }));
    assert!(
        text(&result).contains("needle-nonutf8 inner"),
        "{}",
        text(&result)
    );
    let info = tool(&mut client, "file_info", json!({ "path": file_uri }));
    assert!(!is_error(&info), "{}", text(&info));
    let result = tool(&mut client, "list_directory", json!({ "path": uri(&dir) }));
    assert!(text(&result).contains("inner.txt"), "{}", text(&result));

    // Listings: every entry present, named so that it can be read back.
    let grep = tool(&mut client, "grep", json!({"pattern": "needle-nonutf8"}));
    let found = structured_paths(&grep, "files");
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().any(|p| p.ends_with("bad%FF%FE.txt")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|p| p.ends_with("dir%C3%28/inner.txt")),
        "{found:?}"
    );
    let grep = tool(
        &mut client,
        "grep",
        json!({"pattern": "needle-nonutf8", "output_mode": "content"}),
    );
    assert!(text(&grep).contains("bad%FF%FE.txt"), "{}", text(&grep));
    let glob = tool(&mut client, "glob", json!({"pattern": "**/*.txt"}));
    let found = structured_paths(&glob, "files");
    assert_eq!(found.len(), 2, "{found:?}");
    let glob = tool(&mut client, "glob", json!({"pattern": "dir*/*.txt"}));
    assert_eq!(structured_paths(&glob, "files").len(), 1, "{}", text(&glob));
    let list = tool(&mut client, "list_directory", json!({}));
    assert!(
        text(&list).contains("bad\u{FFFD}\u{FFFD}.txt"),
        "{}",
        text(&list)
    );
    assert!(text(&list).contains("dir\u{FFFD}("), "{}", text(&list));
    let tree = tool(&mut client, "directory_tree", json!({}));
    assert!(
        text(&tree).contains("bad\u{FFFD}\u{FFFD}.txt"),
        "{}",
        text(&tree)
    );
    assert!(text(&tree).contains("inner.txt"), "{}", text(&tree));
    // The lossy rendering names no real file: a clean "not found", not a crash.
    let lossy = format!("{}/bad\u{FFFD}\u{FFFD}.txt", s(&ws.app));
    let result = tool(&mut client, "read_file", json!({ "path": lossy }));
    assert!(is_error(&result), "{}", text(&result));

    // Writes by URI create the exact bytes.
    let new_uri = format!("{}/new%FF.txt", uri(&ws.app));
    let result = tool(
        &mut client,
        "write_file",
        json!({"path": new_uri, "content": "alpha\n"}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    let exact = ws.app.join(OsStr::from_bytes(b"new\xff.txt"));
    assert_eq!(std::fs::read_to_string(&exact).unwrap(), "alpha\n");
    let result = tool(
        &mut client,
        "edit_file",
        json!({"path": new_uri, "old_string": "alpha", "new_string": "beta"}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    assert_eq!(std::fs::read_to_string(&exact).unwrap(), "beta\n");
    assert_alive(&mut client);
    assert_eq!(snapshot(&ws.outside), before, "outside was modified");
}

/// resources/read by the percent-encoded URI of a non-UTF-8 name reads that exact file (the
/// same URI works with read_file, and resources/list hands out such URIs).
#[test]
fn non_utf8_names_are_readable_as_resources() {
    let ws = workspace();
    let file = ws.app.join(OsStr::from_bytes(b"bad\xff\xfe.txt"));
    std::fs::write(&file, "needle-nonutf8 top\n").unwrap();
    let mut client = serve(&ws);
    let response = read_resource(&mut client, &uri(&file));
    assert!(
        response["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("needle-nonutf8 top"),
        "{response}"
    );
    // The URI resources/list hands out for it must be readable too.
    let list = client.request("resources/list", json!({}));
    let listed = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"].as_str().unwrap_or_default().contains("bad%"))
        .cloned()
        .expect("listed");
    let response = read_resource(&mut client, listed["uri"].as_str().unwrap());
    assert!(response.get("result").is_some(), "{response}");
}

// ---------------------------------------------------------------------------------------
// Long paths and names
// ---------------------------------------------------------------------------------------

/// A path close to PATH_MAX (4096) inside the root works like any other; one over it, and a
/// name over NAME_MAX (255), are clean tool errors that create nothing.
#[test]
fn long_paths_work_and_overlong_names_and_paths_fail_cleanly() {
    let ws = workspace();
    let before = snapshot(&ws.outside);
    let mut deep = ws.app.join("long");
    let component = format!("d{}", "x".repeat(249));
    while deep.as_os_str().len() + 1 + component.len() + "/deep.txt".len() < 4060 {
        deep.push(&component);
    }
    std::fs::create_dir_all(&deep).unwrap();
    let deep_file = deep.join("deep.txt");
    assert!(deep_file.as_os_str().len() > 3800);
    std::fs::write(&deep_file, "needle-deep\n").unwrap();
    let mut client = serve(&ws);

    let result = tool(&mut client, "read_file", json!({"path": s(&deep_file)}));
    assert!(!is_error(&result), "{}", text(&result));
    assert!(text(&result).contains("needle-deep"));
    let grep = tool(&mut client, "grep", json!({"pattern": "needle-deep"}));
    assert_eq!(
        structured_paths(&grep, "files"),
        vec![s(&deep_file).to_string()]
    );
    let glob = tool(&mut client, "glob", json!({"pattern": "**/deep.txt"}));
    assert_eq!(
        structured_paths(&glob, "files"),
        vec![s(&deep_file).to_string()]
    );
    let tree = tool(&mut client, "directory_tree", json!({"max_depth": 40}));
    assert!(text(&tree).contains("deep.txt"), "{}", text(&tree));
    let result = tool(
        &mut client,
        "write_file",
        json!({"path": s(&deep.join("new.txt")), "content": "near PATH_MAX\n"}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    assert_eq!(
        std::fs::read_to_string(deep.join("new.txt")).unwrap(),
        "near PATH_MAX\n"
    );

    // Over PATH_MAX: a clean error, nothing created.
    let mut over = deep.clone();
    while over.as_os_str().len() < 4300 {
        over.push(&component);
    }
    let over_file = over.join("y.txt");
    let deep_names = names(&deep);
    for (name, args) in [
        ("read_file", json!({"path": s(&over_file)})),
        ("file_info", json!({"path": s(&over_file)})),
        ("list_directory", json!({"path": s(&over)})),
        (
            "write_file",
            json!({"path": s(&over_file), "content": "x", "create_dirs": true}),
        ),
        ("create_directory", json!({"path": s(&over)})),
    ] {
        let result = tool(&mut client, name, args);
        assert!(
            is_error(&result),
            "{name} over PATH_MAX must fail: {}",
            text(&result)
        );
        let body = text(&result).to_lowercase();
        assert!(
            body.contains("too long") || body.contains("no such"),
            "{name} over PATH_MAX: unclear error: {body}"
        );
    }
    assert_eq!(
        names(&deep),
        deep_names,
        "something was created over PATH_MAX"
    );

    // Over NAME_MAX: a clean error, nothing created.
    let long_name = "n".repeat(300);
    let app_names = names(&ws.app);
    for (name, args) in [
        ("read_file", json!({ "path": long_name })),
        ("file_info", json!({ "path": long_name })),
        ("write_file", json!({"path": long_name, "content": "x"})),
        (
            "write_file",
            json!({"path": format!("{long_name}/a.txt"), "content": "x", "create_dirs": true}),
        ),
        ("create_directory", json!({ "path": long_name })),
        (
            "move_file",
            json!({"source": "src/main.rs", "destination": long_name}),
        ),
    ] {
        let result = tool(&mut client, name, args.clone());
        assert!(is_error(&result), "{name} {args}: NAME_MAX must fail");
        let body = text(&result).to_lowercase();
        assert!(
            body.contains("too long") || body.contains("no such"),
            "{name} {args}: unclear error: {body}"
        );
        assert!(
            !text(&result).to_lowercase().contains("panic"),
            "{}",
            text(&result)
        );
    }
    let response = read_resource(&mut client, &format!("{}/{long_name}", uri(&ws.app)));
    assert!(response.get("error").is_some(), "{response}");
    assert_eq!(
        names(&ws.app),
        app_names,
        "something was created over NAME_MAX"
    );
    assert!(ws.app.join("src/main.rs").exists());
    assert_alive(&mut client);
    assert_eq!(snapshot(&ws.outside), before, "outside was modified");
}

// ---------------------------------------------------------------------------------------
// Symlinks
// ---------------------------------------------------------------------------------------

/// link → link → outside: every tool refuses it (by where the chain ends), walkers do not
/// follow it, and nothing outside is read or written.
#[test]
fn symlink_chains_to_outside_are_refused() {
    let ws = workspace();
    symlink("l2", ws.app.join("l1")).unwrap();
    symlink("l3", ws.app.join("l2")).unwrap();
    symlink("../outside", ws.app.join("l3")).unwrap();
    symlink("f2", ws.app.join("f1")).unwrap();
    symlink("f3", ws.app.join("f2")).unwrap();
    symlink(ws.outside.join("secret.txt"), ws.app.join("f3")).unwrap();
    let before = snapshot(&ws.outside);
    let mut client = serve(&ws);
    let app_uri = uri(&ws.app);
    for (name, args) in [
        ("read_file", json!({"path": "l1/secret.txt"})),
        ("read_file", json!({"path": "f1"})),
        ("read_file", json!({"path": format!("{app_uri}/f1")})),
        ("read_files", json!({"paths": ["f1", "l1/secret.txt"]})),
        ("file_info", json!({"path": "l1/secret.txt"})),
        ("list_directory", json!({"path": "l1"})),
        ("directory_tree", json!({"path": "l1"})),
        ("grep", json!({"pattern": "SECRET", "path": "l1"})),
        ("grep", json!({"pattern": "SECRET", "path": "f1"})),
        ("glob", json!({"pattern": "*", "path": "l1"})),
        ("write_file", json!({"path": "l1/new.txt", "content": "x"})),
        ("write_file", json!({"path": "f1", "content": "x"})),
        (
            "edit_file",
            json!({"path": "f1", "old_string": "TOP", "new_string": "x"}),
        ),
        ("create_directory", json!({"path": "l1/newdir"})),
        (
            "move_file",
            json!({"source": "src/main.rs", "destination": "l1/main.rs"}),
        ),
    ] {
        let result = tool(&mut client, name, args.clone());
        assert_no_leak(&format!("{name} {args}"), &result);
        if name == "read_files" {
            assert!(text(&result).contains("outside the workspace roots"));
        } else {
            assert!(
                is_error(&result),
                "{name} {args} must be refused: {}",
                text(&result)
            );
        }
    }
    for path in ["f1", "l1/secret.txt"] {
        let response = read_resource(&mut client, &format!("{app_uri}/{path}"));
        assert!(response.get("error").is_some(), "{response}");
        assert_no_leak(path, &response);
    }
    // Walkers over the whole root do not follow the chain.
    let grep = tool(
        &mut client,
        "grep",
        json!({"pattern": "TOP-SECRET|OTHER-CONTENT", "output_mode": "content", "hidden": true, "no_ignore": true}),
    );
    assert_eq!(grep["structuredContent"]["total"], 0, "{}", text(&grep));
    for (name, args) in [
        (
            "glob",
            json!({"pattern": "**/*", "hidden": true, "no_ignore": true}),
        ),
        ("directory_tree", json!({"max_depth": 10, "hidden": true})),
        ("list_directory", json!({})),
    ] {
        let result = tool(&mut client, name, args);
        assert!(
            !text(&result).contains("other.txt"),
            "{name} walked out: {}",
            text(&result)
        );
        assert_no_leak(name, &result);
    }
    assert_eq!(snapshot(&ws.outside), before, "outside was modified");
    assert!(ws.app.join("src/main.rs").exists());
}

/// Symlink loops inside the tree (a directory linking to itself or its parent, two links
/// pointing at each other) never hang a walker: each answers before the deadline, and
/// reading a looping link is a clear error.
#[test]
fn symlink_loops_do_not_hang_walkers() {
    let ws = workspace();
    let loops = ws.app.join("loops");
    std::fs::create_dir_all(&loops).unwrap();
    std::fs::write(loops.join("real.txt"), "needle-loop\n").unwrap();
    symlink(".", loops.join("self")).unwrap();
    symlink("..", loops.join("up")).unwrap();
    symlink(&ws.app, loops.join("root")).unwrap();
    symlink("x2", ws.app.join("x1")).unwrap();
    symlink("x1", ws.app.join("x2")).unwrap();
    symlink("me", ws.app.join("me")).unwrap();
    let mut client = serve(&ws);
    let started = Instant::now();
    let grep = tool(&mut client, "grep", json!({"pattern": "needle-loop"}));
    assert_eq!(structured_paths(&grep, "files").len(), 1, "{}", text(&grep));
    let grep = tool(
        &mut client,
        "grep",
        json!({"pattern": "needle-loop", "path": "loops/self/self/up/loops"}),
    );
    assert!(!is_error(&grep), "{}", text(&grep));
    tool(
        &mut client,
        "glob",
        json!({"pattern": "**/*", "hidden": true}),
    );
    tool(&mut client, "directory_tree", json!({"max_depth": 30}));
    tool(
        &mut client,
        "directory_tree",
        json!({"path": "loops/self", "max_depth": 30}),
    );
    let list = tool(&mut client, "list_directory", json!({"path": "loops"}));
    assert!(text(&list).contains("self"), "{}", text(&list));
    for path in ["x1", "me"] {
        let read = tool(&mut client, "read_file", json!({ "path": path }));
        assert!(is_error(&read), "reading the loop {path} must fail");
        let info = tool(&mut client, "file_info", json!({ "path": path }));
        assert_no_leak(path, &info);
        let response = read_resource(&mut client, &uri(&ws.app.join(path)));
        assert!(response.get("error").is_some(), "{response}");
    }
    let deep_self = format!("loops/{}real.txt", "self/".repeat(60));
    tool(&mut client, "read_file", json!({ "path": deep_self }));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_alive(&mut client);
}

// ---------------------------------------------------------------------------------------
// TOCTOU: a directory swapped for a symlink to outside while it is used
// ---------------------------------------------------------------------------------------

/// A thread that exchanges two directory entries (renameat2 RENAME_EXCHANGE) as fast as it
/// can: `app/dir` is a real directory one instant and a symlink to the outside the next.
struct Flipper {
    stop: Arc<AtomicBool>,
    flips: Arc<AtomicUsize>,
    handle: Option<JoinHandle<()>>,
}

impl Flipper {
    fn start(a: PathBuf, b: PathBuf) -> Flipper {
        let stop = Arc::new(AtomicBool::new(false));
        let flips = Arc::new(AtomicUsize::new(0));
        let handle = {
            let (stop, flips) = (stop.clone(), flips.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        &a,
                        rustix::fs::CWD,
                        &b,
                        rustix::fs::RenameFlags::EXCHANGE,
                    )
                    .expect("renameat2(RENAME_EXCHANGE)");
                    flips.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        Flipper {
            stop,
            flips,
            handle: Some(handle),
        }
    }

    /// Stops flipping; returns the number of flips.
    fn stop(&mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            handle.join().unwrap();
        }
        self.flips.load(Ordering::Relaxed)
    }
}

impl Drop for Flipper {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `app/dir` (real: `dir/file` = INSIDE) flips with `base/swap` (a symlink to
/// `outside/`, whose `file` holds OUTSIDE-TOCTOU-SECRET). Runs `op` in a loop for a while,
/// asserting no answer ever shows outside content, then that `outside/` is byte-for-byte
/// unchanged. Returns (flips, calls).
fn toctou(label: &str, mut op: impl FnMut(&mut Client, &Workspace, usize) -> Vec<Value>) {
    let ws = workspace();
    std::fs::write(ws.outside.join("file"), "OUTSIDE-TOCTOU-SECRET MARK-A\n").unwrap();
    std::fs::write(ws.outside.join("only-outside.txt"), "OUTSIDE-TOCTOU-ONLY\n").unwrap();
    let dir = ws.app.join("dir");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("file"), "INSIDE-TOCTOU MARK-A\n").unwrap();
    let swap = ws.base.join("swap");
    symlink(&ws.outside, &swap).unwrap();
    let before = snapshot(&ws.outside);
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({}));
    let mut flipper = Flipper::start(dir.clone(), swap.clone());
    let run_for = Duration::from_millis(2500);
    let started = Instant::now();
    let mut calls = 0;
    let mut inside_seen = 0;
    while started.elapsed() < run_for {
        for answer in op(&mut client, &ws, calls) {
            calls += 1;
            let body = answer.to_string();
            assert!(
                !body.contains("OUTSIDE-TOCTOU") && !body.contains("only-outside"),
                "{label}: outside content through the swapped directory after {calls} calls: {body}"
            );
            // A successful answer about the real directory (content, diff, or its path).
            let ok = !answer["isError"].as_bool().unwrap_or(false) && answer.get("error").is_none();
            inside_seen += usize::from(
                ok && (body.contains("INSIDE-TOCTOU")
                    || body.contains("MARK")
                    || body.contains("dir/file")
                    || body.contains(r#""entries":["file"]"#)),
            );
        }
    }
    let flips = flipper.stop();
    eprintln!("{label}: {calls} calls, {flips} flips, {inside_seen} answers showed inside content");
    assert!(
        inside_seen > 0,
        "{label}: no call ever succeeded on the real directory: the test exercised nothing"
    );
    assert!(
        flips > 1000,
        "only {flips} flips: the race was not exercised"
    );
    assert_alive(&mut client);
    // Put the real directory back (for the cleanup) and compare the outside.
    if std::fs::symlink_metadata(&dir)
        .unwrap()
        .file_type()
        .is_symlink()
    {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            &dir,
            rustix::fs::CWD,
            &swap,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .unwrap();
    }
    let after = snapshot(&ws.outside);
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "{label}: files were created or removed outside the root"
    );
    assert_eq!(
        after, before,
        "{label}: a file outside the root was modified"
    );
}

/// Reads of `dir/file` never return the outside file's content, whatever the timing: each
/// answer is the inside content or an error.
#[test]
fn toctou_reads_never_show_outside_content() {
    toctou("read", |client, ws, _| {
        let path = s(&ws.app.join("dir/file")).to_string();
        let mut answers = vec![
            tool(client, "read_file", json!({"path": "dir/file"})),
            tool(client, "read_file", json!({ "path": path })),
            tool(client, "read_files", json!({"paths": ["dir/file"]})),
        ];
        answers.push(read_resource(client, &uri(&ws.app.join("dir/file"))));
        answers
    });
}

/// Writes to `dir/...` never create or modify anything outside, whatever the timing.
#[test]
fn toctou_writes_never_land_outside() {
    toctou("write", |client, _, n| {
        let mut answers = vec![
            tool(
                client,
                "write_file",
                json!({"path": "dir/file", "content": format!("CLIENT-{n} MARK-A\n")}),
            ),
            tool(
                client,
                "write_file",
                json!({"path": format!("dir/new-{}.txt", n % 4), "content": "new\n"}),
            ),
            tool(
                client,
                "create_directory",
                json!({"path": format!("dir/sub-{}", n % 3)}),
            ),
        ];
        let (old, new) = if n % 2 == 0 {
            ("MARK-A", "MARK-B")
        } else {
            ("MARK-B", "MARK-A")
        };
        answers.push(tool(
            client,
            "edit_file",
            json!({"path": "dir/file", "old_string": old, "new_string": new}),
        ));
        answers
    });
}

/// grep over the root and over `dir` never reads the outside through the swapped
/// directory (files are opened beneath the root without following symlinks).
#[test]
fn toctou_grep_never_reads_outside() {
    toctou("grep", |client, _, _| {
        vec![
            tool(
                client,
                "grep",
                json!({"pattern": "TOCTOU", "path": "dir", "output_mode": "content"}),
            ),
            tool(
                client,
                "grep",
                json!({"pattern": "TOCTOU", "output_mode": "content"}),
            ),
        ]
    });
}

/// glob over the root and over `dir` never lists outside files through the swapped
/// directory.
#[test]
fn toctou_glob_never_lists_outside() {
    toctou("glob", |client, _, _| {
        vec![
            tool(client, "glob", json!({"pattern": "**/*.txt"})),
            tool(client, "glob", json!({"pattern": "*", "path": "dir"})),
        ]
    });
}

/// list_directory and directory_tree never list the outside through the swapped directory.
#[test]
fn toctou_listings_never_show_outside_entries() {
    toctou("listing", |client, _, _| {
        vec![
            tool(client, "list_directory", json!({"path": "dir"})),
            tool(client, "directory_tree", json!({"path": "dir"})),
            tool(client, "directory_tree", json!({"max_depth": 3})),
        ]
    });
}

// ---------------------------------------------------------------------------------------
// Special files
// ---------------------------------------------------------------------------------------

fn mkfifo(path: &Path) {
    assert!(
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

/// A FIFO and a UNIX socket in the tree: walkers skip them without blocking; read_file and
/// resources/read refuse them at once with a clear error; file_info describes them.
#[test]
fn fifos_and_sockets_never_block() {
    let ws = workspace();
    let fifo = ws.app.join("src/pipe");
    mkfifo(&fifo);
    let sock = ws.app.join("src/sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::fs::write(ws.app.join("src/lib.rs"), "fn needle_special() {}\n").unwrap();
    let mut client = serve(&ws);
    let started = Instant::now();
    let grep = tool(&mut client, "grep", json!({"pattern": "needle_special"}));
    assert_eq!(structured_paths(&grep, "files").len(), 1, "{}", text(&grep));
    let grep = tool(
        &mut client,
        "grep",
        json!({"pattern": "x", "hidden": true, "no_ignore": true, "output_mode": "count"}),
    );
    assert!(!is_error(&grep));
    tool(&mut client, "glob", json!({"pattern": "**/*"}));
    let list = tool(&mut client, "list_directory", json!({"path": "src"}));
    assert!(text(&list).contains("pipe"), "{}", text(&list));
    tool(&mut client, "directory_tree", json!({}));
    for (path, kind) in [("src/pipe", "FIFO"), ("src/sock", "socket")] {
        let read = tool(&mut client, "read_file", json!({ "path": path }));
        assert!(is_error(&read), "read_file {path} must fail");
        assert!(text(&read).contains(kind), "{}", text(&read));
        let info = tool(&mut client, "file_info", json!({ "path": path }));
        assert!(!is_error(&info), "{}", text(&info));
        assert!(
            info["structuredContent"]["type"]
                .as_str()
                .unwrap_or_default()
                .contains(kind),
            "{info}"
        );
        let grep = tool(&mut client, "grep", json!({"pattern": "x", "path": path}));
        assert_eq!(grep["structuredContent"]["total"].as_u64().unwrap_or(0), 0);
        let response = read_resource(&mut client, &uri(&ws.app.join(path)));
        assert!(response.get("error").is_some(), "{response}");
    }
    let many = tool(
        &mut client,
        "read_files",
        json!({"paths": ["src/pipe", "src/sock", "src/main.rs"]}),
    );
    assert!(text(&many).contains("println!"), "{}", text(&many));
    // Writing over a FIFO must not open it (which would block with no reader).
    let write = tool(
        &mut client,
        "edit_file",
        json!({"path": "src/pipe", "old_string": "a", "new_string": "b"}),
    );
    assert!(is_error(&write));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_alive(&mut client);
}

/// Devices under a root (`/dev` passed as a DIR root): never read, answered at once.
#[test]
fn devices_under_a_root_are_described_never_read() {
    let ws = workspace();
    let mut client = Client::spawn(&["/dev"], &ws.app);
    client.handshake(json!({}));
    for device in ["/dev/zero", "/dev/null", "/dev/urandom"] {
        if !Path::new(device).exists() {
            continue;
        }
        let started = Instant::now();
        let read = tool(&mut client, "read_file", json!({ "path": device }));
        assert!(is_error(&read), "read_file {device} must fail");
        assert!(text(&read).contains("device"), "{}", text(&read));
        let info = tool(&mut client, "file_info", json!({ "path": device }));
        assert!(!is_error(&info), "{}", text(&info));
        assert!(text(&info).contains("device"), "{}", text(&info));
        let grep = tool(&mut client, "grep", json!({"pattern": "x", "path": device}));
        assert_eq!(grep["structuredContent"]["total"].as_u64().unwrap_or(0), 0);
        let response = read_resource(&mut client, &format!("file://{device}"));
        assert!(response.get("error").is_some(), "{device}: {response}");
        let many = tool(&mut client, "read_files", json!({"paths": [device]}));
        assert!(text(&many).contains("device"), "{}", text(&many));
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{device} took {:?}",
            started.elapsed()
        );
    }
    // Listing /dev opens nothing.
    tool(&mut client, "list_directory", json!({"path": "/dev"}));
    tool(&mut client, "glob", json!({"pattern": "*", "path": "/dev"}));
    assert_alive(&mut client);

    // A symlink in a normal root pointing at a device is outside the root: refused.
    let ws = workspace();
    symlink("/dev/zero", ws.app.join("zero")).unwrap();
    let mut client = serve(&ws);
    let read = tool(&mut client, "read_file", json!({"path": "zero"}));
    assert!(is_error(&read));
    let response = read_resource(&mut client, &uri(&ws.app.join("zero")));
    assert!(response.get("error").is_some(), "{response}");
}

// ---------------------------------------------------------------------------------------
// Permissions
// ---------------------------------------------------------------------------------------

/// chmod 000 files and directories: read_file is a clear error, walkers skip and count
/// them. Running as root, permissions do not deny reads: then only promptness and
/// survival are checked here (and a note is printed); what root cannot read either is
/// covered by `entries_unreadable_even_for_root_are_skipped_and_counted`.
#[test]
fn permission_denied_is_a_clear_error_or_skipped_and_counted() {
    let ws = workspace();
    let locked = ws.app.join("locked.txt");
    std::fs::write(&locked, "needle-locked\n").unwrap();
    let locked_dir = ws.app.join("lockeddir");
    std::fs::create_dir(&locked_dir).unwrap();
    std::fs::write(locked_dir.join("inner.txt"), "needle-locked inner\n").unwrap();
    std::fs::write(ws.app.join("open.txt"), "needle-locked open\n").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(&locked_dir, std::fs::Permissions::from_mode(0o000)).unwrap();
    let privileged = std::fs::read(&locked).is_ok();
    let mut client = serve(&ws);
    let read = tool(&mut client, "read_file", json!({"path": "locked.txt"}));
    let grep = tool(&mut client, "grep", json!({"pattern": "needle-locked"}));
    let list = tool(&mut client, "list_directory", json!({"path": "lockeddir"}));
    let tree = tool(&mut client, "directory_tree", json!({}));
    let glob = tool(&mut client, "glob", json!({"pattern": "**/*.txt"}));
    let info = tool(&mut client, "file_info", json!({"path": "locked.txt"}));
    assert!(!is_error(&info), "{}", text(&info));
    let write = tool(
        &mut client,
        "edit_file",
        json!({"path": "locked.txt", "old_string": "needle", "new_string": "x"}),
    );
    if privileged {
        eprintln!(
            "note: running with privileges (reading a chmod-000 file succeeds); \
             permission-denied assertions skipped"
        );
    } else {
        assert!(is_error(&read));
        assert!(
            text(&read).to_lowercase().contains("permission"),
            "{}",
            text(&read)
        );
        let files = structured_paths(&grep, "files");
        assert_eq!(files, vec![s(&ws.app.join("open.txt")).to_string()]);
        let skipped = grep["structuredContent"]["stats"]["unreadable"]
            .as_u64()
            .unwrap_or(0);
        assert!(skipped >= 1, "unreadable files are counted: {grep}");
        assert!(is_error(&list), "{}", text(&list));
        assert!(!is_error(&tree), "{}", text(&tree));
        assert!(!is_error(&glob), "{}", text(&glob));
        assert!(is_error(&write));
    }
    assert_alive(&mut client);
    std::fs::set_permissions(&locked_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o644)).unwrap();
}

/// A workspace with entries nobody can read, root included (CI runs as root, where chmod
/// 000 denies nothing): a FIFO and a socket (never opened), beside a dangling symlink and
/// a symlink loop, and one readable file. Returns the socket's listener (keep it alive).
fn unreadable_for_anyone(ws: &Workspace) -> std::os::unix::net::UnixListener {
    std::fs::write(ws.app.join("open.txt"), "needle-open\n").unwrap();
    mkfifo(&ws.app.join("fifo"));
    let listener = std::os::unix::net::UnixListener::bind(ws.app.join("sock")).unwrap();
    symlink(ws.app.join("gone.txt"), ws.app.join("dangling")).unwrap();
    symlink(ws.app.join("loop-b"), ws.app.join("loop-a")).unwrap();
    symlink(ws.app.join("loop-a"), ws.app.join("loop-b")).unwrap();
    listener
}

/// Named as grep targets, the FIFO and the socket are skipped and counted as unreadable,
/// exactly; in the tree both are counted too; the readable file is still found; reading
/// any of the four is a clear error.
fn check_unreadable_counted(client: &mut Client, ws: &Workspace) {
    let open = vec![s(&ws.app.join("open.txt")).to_string()];
    let grep = tool(
        client,
        "grep",
        json!({"pattern": "needle", "paths": ["open.txt", "fifo", "sock"]}),
    );
    assert!(!is_error(&grep), "{}", text(&grep));
    assert_eq!(structured_paths(&grep, "files"), open);
    assert_eq!(
        grep["structuredContent"]["stats"]["unreadable"], 2,
        "{grep}"
    );
    let grep = tool(client, "grep", json!({"pattern": "needle"}));
    assert_eq!(structured_paths(&grep, "files"), open);
    let unreadable = grep["structuredContent"]["stats"]["unreadable"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        unreadable >= 2,
        "the FIFO and the socket are counted: {grep}"
    );
    for path in ["fifo", "sock", "dangling", "loop-a"] {
        let read = tool(client, "read_file", json!({ "path": path }));
        assert!(is_error(&read), "read_file {path}: {}", text(&read));
    }
    assert_alive(client);
}

/// What root cannot read either is skipped and counted (disk walk).
#[test]
fn entries_unreadable_even_for_root_are_skipped_and_counted() {
    let ws = workspace();
    let _listener = unreadable_for_anyone(&ws);
    let mut walking = Client::spawn(&["--no-watch"], &ws.app);
    walking.handshake(json!({}));
    check_unreadable_counted(&mut walking, &ws);
}

/// The same, answered from the file index: the counts must equal the walk's.
#[test]
fn entries_unreadable_even_for_root_are_counted_by_the_index_too() {
    let ws = workspace();
    let _listener = unreadable_for_anyone(&ws);
    let mut indexed = serve(&ws);
    wait_indexed(&mut indexed);
    check_unreadable_counted(&mut indexed, &ws);
}

// ---------------------------------------------------------------------------------------
// Files changing under a read
// ---------------------------------------------------------------------------------------

/// A file truncated, rewritten, deleted and re-created in a loop while read_file, grep,
/// file_info and resources/read read it: every call is answered (content or error), no
/// answer shows bytes that were never in the file, and the server keeps serving.
#[test]
fn files_truncated_and_deleted_while_read_do_not_hurt_the_server() {
    let ws = workspace();
    let churn = ws.app.join("churn.txt");
    let line = "churn needle line\n";
    let body = line.repeat(20_000);
    std::fs::write(&churn, &body).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, rounds, churn, body) =
            (stop.clone(), rounds.clone(), churn.clone(), body.clone());
        std::thread::spawn(move || {
            use std::io::Write;
            while !stop.load(Ordering::Relaxed) {
                if let Ok(mut file) = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&churn)
                {
                    use std::io::{Seek, SeekFrom};
                    let _ = file.set_len(0);
                    let _ = file.seek(SeekFrom::Start(0));
                    let _ = file.write_all(&body.as_bytes()[..body.len() / 2]);
                    let _ = file.set_len(1000);
                    let _ = file.seek(SeekFrom::End(0));
                    let _ = file.write_all(body.as_bytes());
                }
                let _ = std::fs::remove_file(&churn);
                std::thread::yield_now();
                let _ = std::fs::write(&churn, &body);
                rounds.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let mut client = serve(&ws);
    let started = Instant::now();
    let mut calls = 0;
    while started.elapsed() < Duration::from_millis(2500) {
        let read = tool(
            &mut client,
            "read_file",
            json!({"path": "churn.txt", "limit": 50}),
        );
        if !is_error(&read) {
            // Numbered rows hold only bytes the file ever held (the writer only ever writes
            // pieces of `body`, so no NUL, no U+FFFD, no foreign text).
            for row in text(&read).lines() {
                let Some((number, shown)) = row.split_once('\t') else {
                    continue;
                };
                if number.trim().parse::<u64>().is_err() {
                    continue;
                }
                assert!(
                    shown.chars().all(|c| line.contains(c)),
                    "bytes that were never in the file: {shown:?}"
                );
            }
        }
        let grep = tool(
            &mut client,
            "grep",
            json!({"pattern": "needle", "path": "churn.txt", "output_mode": "count"}),
        );
        assert!(!text(&grep).contains("panic"), "{}", text(&grep));
        tool(&mut client, "file_info", json!({"path": "churn.txt"}));
        tool(&mut client, "grep", json!({"pattern": "needle"}));
        let response = read_resource(&mut client, &uri(&churn));
        if let Some(code) = response["error"]["code"].as_i64() {
            assert_ne!(code, -32603, "internal error: {response}");
        }
        calls += 5;
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    eprintln!(
        "churn: {calls} calls against {} rewrite rounds",
        rounds.load(Ordering::Relaxed)
    );
    assert_alive(&mut client);
    let read = tool(
        &mut client,
        "read_file",
        json!({"path": "churn.txt", "limit": 1}),
    );
    assert!(text(&read).contains("churn needle line"), "{}", text(&read));
}

// ---------------------------------------------------------------------------------------
// Huge inputs
// ---------------------------------------------------------------------------------------

/// A 1 GiB (sparse) file: read_file returns the first page quickly, file_info answers at
/// once, grep with `max_filesize` skips it (counted as too large), resources/read refuses it
/// with a clear error instead of loading it.
#[test]
fn sparse_gigabyte_file_is_paged_and_skipped_by_max_filesize() {
    let ws = workspace();
    let huge = ws.app.join("huge.log");
    let head: String = (1..=3000)
        .map(|i| format!("line {i} needle-huge\n"))
        .collect();
    std::fs::write(&huge, &head).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    std::fs::write(ws.app.join("small.log"), "needle-huge small\n").unwrap();
    let mut client = serve(&ws);

    let started = Instant::now();
    let read = tool(&mut client, "read_file", json!({"path": "huge.log"}));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "first page took {:?}",
        started.elapsed()
    );
    assert!(!is_error(&read), "{}", text(&read));
    let body = text(&read);
    assert!(
        body.starts_with("1\tline 1 needle-huge\n"),
        "{}",
        &body[..200.min(body.len())]
    );
    assert!(body.len() <= 65536);
    assert!(
        body.contains("offset="),
        "says how to continue: {}",
        &body[body.len().saturating_sub(300)..]
    );

    let started = Instant::now();
    let info = tool(&mut client, "file_info", json!({"path": "huge.log"}));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "file_info took {:?}",
        started.elapsed()
    );
    assert_eq!(info["structuredContent"]["size"], 1u64 << 30, "{info}");

    let started = Instant::now();
    let grep = tool(
        &mut client,
        "grep",
        json!({"pattern": "needle-huge", "max_filesize": "1M"}),
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "grep took {:?}",
        started.elapsed()
    );
    assert_eq!(
        structured_paths(&grep, "files"),
        vec![s(&ws.app.join("small.log")).to_string()]
    );
    assert_eq!(grep["structuredContent"]["stats"]["too_large"], 1, "{grep}");
    let grep = tool(
        &mut client,
        "grep",
        json!({"pattern": "needle-huge", "max_filesize": 1_000_000}),
    );
    assert_eq!(structured_paths(&grep, "files").len(), 1, "{}", text(&grep));

    let started = Instant::now();
    let response = read_resource(&mut client, &uri(&huge));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        response.get("error").is_some(),
        "a 1 GiB resource must be refused"
    );
    assert!(response.to_string().len() < 10_000);
    assert_alive(&mut client);
}

/// One 100 MB line: read_file and grep answer within the output budget, with the cut
/// marker, without loading the line whole into the answer.
#[test]
fn hundred_megabyte_line_is_cut_within_the_budget() {
    let ws = workspace();
    let one = ws.app.join("oneline.txt");
    {
        use std::io::Write;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&one).unwrap());
        file.write_all(b"needle-start ").unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..100 {
            file.write_all(&chunk).unwrap();
        }
        file.write_all(b" needle-end\nsecond line\n").unwrap();
    }
    let mut client = serve(&ws);
    let started = Instant::now();
    let read = tool(&mut client, "read_file", json!({"path": "oneline.txt"}));
    eprintln!("read_file of a 100 MB line: {:?}", started.elapsed());
    let body = text(&read);
    assert!(!is_error(&read), "{}", &body[..body.len().min(500)]);
    assert!(
        body.len() <= 65536,
        "read_file answer of {} bytes",
        body.len()
    );
    assert!(body.contains("needle-start"));
    assert!(
        body.contains("cut"),
        "cut marker: {}",
        &body[body.len().saturating_sub(300)..]
    );
    assert!(
        body.contains("second line"),
        "{}",
        &body[body.len().saturating_sub(300)..]
    );

    let started = Instant::now();
    // A line longer than the searcher's buffer limit (8 MiB) is not searched: the file is
    // counted as too large (memory per search stays bounded, and a cancel is never stuck
    // behind one regex run over 100 MB).
    let grep = tool_within(
        &mut client,
        "grep",
        json!({"pattern": "^needle-start", "output_mode": "content"}),
        Duration::from_secs(60),
    );
    eprintln!("grep over a 100 MB line: {:?}", started.elapsed());
    let body = text(&grep);
    assert!(!is_error(&grep), "{}", &body[..body.len().min(500)]);
    assert!(body.len() <= 65536, "grep answer of {} bytes", body.len());
    assert!(
        body.contains("1 too large"),
        "{}",
        &body[..body.len().min(500)]
    );
    assert!(
        grep.to_string().len() < 200_000,
        "structured content is cut too"
    );
    assert_alive(&mut client);
}

// ---------------------------------------------------------------------------------------
// Protocol abuse
// ---------------------------------------------------------------------------------------

/// The next message that is an error with `id: null`.
fn null_id_error(client: &mut Client) -> Value {
    client
        .wait_for(DEADLINE, |m| {
            m.get("error").is_some() && m.get("id") == Some(&Value::Null)
        })
        .expect("an error reply with id null")
}

/// A 20 MB line is refused with an error (not buffered whole), and the server lives on.
#[test]
fn oversized_line_is_rejected_and_the_server_lives() {
    let ws = workspace();
    let mut client = serve(&ws);
    let pad = "x".repeat(20 << 20);
    client.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"ping","params":{{"pad":"{pad}"}}}}"#
    ));
    let error = null_id_error(&mut client);
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit")
    );
    assert!(client.response(77, Duration::from_millis(300)).is_none());
    assert_alive(&mut client);
    let result = tool(&mut client, "read_file", json!({"path": "src/main.rs"}));
    assert!(text(&result).contains("println!"));
}

/// Deep nesting (100k `[` or `{"a":`), invalid UTF-8 on the line: parse errors, the
/// server lives on.
#[test]
fn deep_nesting_and_invalid_utf8_are_parse_errors() {
    let ws = workspace();
    let mut client = serve(&ws);
    client.send_raw(&"[".repeat(100_000));
    assert_eq!(null_id_error(&mut client)["error"]["code"], -32700);
    client.send_raw(&format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000)));
    assert_eq!(null_id_error(&mut client)["error"]["code"], -32700);
    client.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{}1{}}}"#,
        r#"{"a":"#.repeat(50_000),
        "}".repeat(50_000)
    ));
    assert_eq!(null_id_error(&mut client)["error"]["code"], -32700);
    client.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}",
    );
    assert_eq!(null_id_error(&mut client)["error"]["code"], -32700);
    client.send_bytes(b"\xff\xfe\xfd");
    assert_eq!(null_id_error(&mut client)["error"]["code"], -32700);
    client.send_bytes(b"\x00\x00\x00");
    assert!(null_id_error(&mut client)["error"]["code"].is_i64());
    assert_alive(&mut client);
}

/// A JSON array (a JSON-RPC batch; MCP 2025-06-18 removed batching) gets an answer — the
/// responses or an error — and never kills the server.
#[test]
fn a_batch_array_is_answered_and_the_server_lives() {
    let ws = workspace();
    let mut client = serve(&ws);
    client.send_raw(
        r#"[{"jsonrpc":"2.0","id":901,"method":"ping"},{"jsonrpc":"2.0","id":902,"method":"ping"}]"#,
    );
    let answer = client.wait_for(DEADLINE, |m| {
        m.is_array()
            || m.get("error").is_some()
            || m.get("id") == Some(&json!(901))
            || m.get("id") == Some(&json!(902))
    });
    assert!(answer.is_some(), "a batch got no answer at all");
    client.send_raw("[]");
    assert!(
        client
            .wait_for(DEADLINE, |m| m.get("error").is_some() || m.is_array())
            .is_some(),
        "an empty batch got no answer"
    );
    assert_alive(&mut client);
}

/// Unknown methods are -32601; wrong parameter types for known methods are answered with an
/// error for that id (never an internal error); requests with odd ids are answered with that
/// id; malformed envelopes never kill the session.
#[test]
fn unknown_methods_and_wrong_param_types_are_errors() {
    let ws = workspace();
    let mut client = serve(&ws);
    for method in [
        "no/such/method",
        "",
        "tools/call/",
        "TOOLS/LIST",
        "rpc.discover",
    ] {
        let response = client.request(method, json!({}));
        assert_eq!(response["error"]["code"], -32601, "{method:?}: {response}");
    }
    for (method, params) in wrong_object_params() {
        let id = client.start(method, params.clone());
        let response = client
            .response(id, DEADLINE)
            .unwrap_or_else(|| panic!("{method} {params}: no answer"));
        let tool_error = response["result"]["isError"] == json!(true);
        assert!(
            response["error"]["code"].is_i64() || tool_error,
            "{method} {params}: expected an error, got {response}"
        );
        assert_ne!(
            response["error"]["code"], -32603,
            "{method} {params}: internal error {response}"
        );
    }
    // Lenient but answered: a cursor of the wrong type.
    for (method, params) in [
        ("resources/list", json!({"cursor": 12})),
        ("tools/list", json!({"cursor": {"a": 1}})),
    ] {
        let id = client.start(method, params.clone());
        assert!(client.response(id, DEADLINE).is_some(), "{method} {params}");
    }
    // Ids of every legal type come back as sent.
    for id in [
        json!("string-id"),
        json!(""),
        json!(0),
        json!(-5),
        json!(9_007_199_254_740_991i64),
    ] {
        client.send(json!({"jsonrpc":"2.0","id":id,"method":"ping"}));
        let pong = client
            .wait_for(DEADLINE, |m| m.get("id") == Some(&id))
            .unwrap_or_else(|| panic!("ping with id {id} not answered"));
        assert_eq!(pong["result"], json!({}), "{pong}");
    }
    // Malformed envelopes: no jsonrpc field, wrong version, method of the wrong type, ids
    // of illegal types, stray responses, odd notifications, bare JSON values. Each may be
    // answered or dropped, but none may kill the session.
    for line in [
        r#"{"id":1001,"method":"ping"}"#,
        r#"{"jsonrpc":"1.0","id":1002,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1003,"method":42}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1004,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1005,"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/unknown","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"nope"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1006,"method":"initialize","params":{}}"#,
        r#""just a string""#,
        "42",
        "null",
        "{}",
    ] {
        client.send_raw(line);
        assert_alive(&mut client);
    }
}

/// Object params with fields of the wrong type (or missing) for known methods.
fn wrong_object_params() -> Vec<(&'static str, Value)> {
    vec![
        (
            "tools/call",
            json!({"name": "read_file", "arguments": "src/main.rs"}),
        ),
        ("tools/call", json!({"name": 42, "arguments": {}})),
        ("tools/call", json!({"arguments": {"path": "src/main.rs"}})),
        ("resources/read", json!({})),
        ("resources/read", json!({"uri": 42})),
        ("resources/read", json!({"uri": null})),
        ("resources/subscribe", json!({"uri": {"x": 1}})),
        ("completion/complete", json!({"ref": "nope", "argument": 3})),
        ("prompts/get", json!({"name": ["explain_file"]})),
        ("logging/setLevel", json!({"level": 7})),
    ]
}

/// Malformed params of a known method are "invalid params" (-32602, as the contract says),
/// not "method not found".
#[test]
fn wrong_param_types_are_invalid_params() {
    let ws = workspace();
    let mut client = serve(&ws);
    for (method, params) in wrong_object_params() {
        let id = client.start(method, params.clone());
        let response = client
            .response(id, DEADLINE)
            .unwrap_or_else(|| panic!("{method} {params}: no answer"));
        assert_eq!(
            response["error"]["code"], -32602,
            "{method} {params}: {response}"
        );
    }
}

/// Params that are not an object (an array, a string) for a request whose id is readable:
/// the error answer carries that id, so the client is not left waiting.
#[test]
fn non_object_params_are_answered_with_their_id() {
    let ws = workspace();
    let mut client = serve(&ws);
    for (method, params) in [
        ("tools/call", json!(["read_file", {"path": "src/main.rs"}])),
        ("tools/call", json!("read_file")),
        ("resources/read", json!(["file:///etc/passwd"])),
        ("ping", json!([1])),
    ] {
        let id = client.start(method, params.clone());
        let response = client
            .response(id, Duration::from_secs(3))
            .unwrap_or_else(|| panic!("{method} {params}: no answer carrying id {id}"));
        assert!(response["error"]["code"].is_i64(), "{response}");
    }
    // Where the id cannot be read (a batch array), the error still has `"id": null`.
    client.send_raw(r#"[{"jsonrpc":"2.0","id":901,"method":"ping"}]"#);
    let error = client
        .wait_for(DEADLINE, |m| m.get("error").is_some())
        .expect("an answer to the batch");
    assert_eq!(error.get("id"), Some(&Value::Null), "{error}");
    assert_alive(&mut client);
}

/// A request id reused while the first request with that id is still in flight: no crash,
/// at least one answer for the id, and the server keeps serving.
#[test]
fn a_reused_request_id_does_not_crash_the_server() {
    let ws = workspace();
    let body = "alpha beta gamma delta epsilon zeta eta theta\n".repeat(200);
    for i in 0..300 {
        std::fs::write(ws.app.join(format!("f{i:03}.txt")), &body).unwrap();
    }
    let mut client = serve(&ws);
    for round in 0..5 {
        let id = 70_000 + round;
        client.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"grep","arguments":{"pattern": r"(\w+\s+){6}theta", "output_mode":"count"}}}));
        client.send(json!({"jsonrpc":"2.0","id":id,"method":"ping"}));
        client.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"read_file","arguments":{"path":"f001.txt","limit":1}}}));
        let first = client.wait_for(DEADLINE, |m| {
            m.get("id") == Some(&json!(id)) && m.get("method").is_none()
        });
        assert!(first.is_some(), "no answer at all for the reused id {id}");
        assert_alive(&mut client);
    }
    let grep = tool(
        &mut client,
        "grep",
        json!({"pattern": "theta", "output_mode": "count"}),
    );
    assert_eq!(
        grep["structuredContent"]["counts"]
            .as_array()
            .unwrap()
            .len(),
        250
    );
}
