//! A root may be a file (PRODUCT §2), as a `DIR` or from the client: it is served (grep,
//! glob, read, symbols, outline, resources/list), the directory tools of the roots say it is
//! a file instead of listing it, `list_roots` reports `kind: file`, and it is watched across
//! atomic saves (a temp file in its directory renamed over it, as editors save).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

const NOTICE: Duration = Duration::from_secs(10);

/// The first root of `list_roots`.
fn first_root(client: &mut Client) -> (Value, String) {
    let result = client.call("list_roots", json!({}));
    let structured = &result["structuredContent"];
    (
        structured["roots"][0].clone(),
        structured["source"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// Everything a file root serves: the tools on it by default and by path.
fn assert_served(client: &mut Client, file: &Path) {
    let path = s(file);
    let grep = client.call("grep", json!({"pattern": "println"}));
    assert!(!is_error(&grep), "{grep}");
    assert_eq!(listed_files(&grep), vec![path.to_string()], "{grep}");
    let grep = client.call(
        "grep",
        json!({"pattern": "println", "path": path, "output_mode": "content"}),
    );
    assert!(text(&grep).contains("2:    println!(\"hi\");"), "{grep}");
    let glob = client.call("glob", json!({"pattern": "*.rs"}));
    assert_eq!(listed_files(&glob), vec![path.to_string()], "{glob}");
    let read = client.call("read_file", json!({"path": path}));
    assert!(text(&read).contains("fn main() {"), "{read}");
    let outline = client.call("outline", json!({"path": path}));
    assert!(
        !is_error(&outline) && text(&outline).contains("main"),
        "{outline}"
    );
    let symbols = client.call("symbols", json!({"query": "main"}));
    assert!(
        !is_error(&symbols) && text(&symbols).contains(path),
        "{symbols}"
    );
    // The directory tools of the roots have no directory to show: they say so.
    for tool in ["list_directory", "directory_tree"] {
        let listed = client.call(tool, json!({}));
        assert!(is_error(&listed), "{tool}: {listed}");
        assert!(
            text(&listed).contains(path) && text(&listed).contains("file"),
            "{tool}: {listed}"
        );
    }
    let resources = client.request("resources/list", json!({}));
    let uris: Vec<&str> = resources["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{resources}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, vec![uri(file).as_str()], "{resources}");
}

#[test]
fn a_dir_naming_a_file_is_served_as_a_file_root() {
    let ws = workspace();
    let file = ws.app.join("src").join("main.rs");
    let mut client = Client::spawn(&[s(&file)], &ws.base);
    client.handshake(json!({}));
    let (root, source) = first_root(&mut client);
    assert_eq!(source, "command line", "{root}");
    assert_eq!(root["path"], s(&file), "{root}");
    assert_eq!(root["file"], true, "{root}");
    assert!(root.get("missing").is_none(), "{root}");
    assert_served(&mut client, &file);
    // The rest of the directory is not served.
    let sibling = ws.app.join("src/other.rs");
    std::fs::write(&sibling, "fn other() { println!(); }\n").unwrap();
    let read = client.call("read_file", json!({"path": s(&sibling)}));
    assert!(is_error(&read), "{read}");
}

#[test]
fn a_client_root_that_is_a_file_is_served() {
    let ws = workspace();
    let file = ws.app.join("src").join("main.rs");
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake_with_roots(json!({}), &[&file]);
    let (root, source) = first_root(&mut client);
    assert_eq!(source, "client", "{root}");
    assert_eq!(root["path"], s(&file), "{root}");
    assert_eq!(root["file"], true, "{root}");
    assert_served(&mut client, &file);
    // Watched, and saved atomically: the next grep finds the new content.
    wait_live(&mut client);
    atomic_save(&file, "fn main() {\n    client_saved();\n}\n");
    let found = grep_content(&mut client, "client_saved");
    assert!(text(&found).contains("2:    client_saved();"), "{found}");
}

/// Waits until the first root is watched. A file root has no index to wait for: every
/// search reads the file itself.
fn wait_live(client: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (root, _) = first_root(client);
        if root["watch"] == "watching" {
            assert!(
                root["index"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("not indexed"),
                "{root}"
            );
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the file root never became watched: {root}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Saves `file` as editors and `write_file` do: a temp file in the same directory, renamed
/// over it (a new inode at the path).
fn atomic_save(file: &Path, content: &str) {
    let temp = file.with_file_name(".main.rs.swp-save");
    std::fs::write(&temp, content).unwrap();
    std::fs::rename(&temp, file).unwrap();
}

fn grep_content(client: &mut Client, pattern: &str) -> Value {
    client.call(
        "grep",
        json!({"pattern": pattern, "output_mode": "content"}),
    )
}

#[test]
fn a_file_root_is_watched_across_atomic_saves() {
    let ws = workspace();
    let file = ws.app.join("src").join("main.rs");
    let file_uri = uri(&file);
    let mut client = Client::spawn(&[s(&file)], &ws.base);
    let init = client.handshake(json!({}));
    assert_eq!(init["capabilities"]["resources"]["subscribe"], true);
    wait_live(&mut client);
    let ok = client.request("resources/subscribe", json!({"uri": file_uri}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    // Several saves in a row: each replaces the inode the previous watch was on.
    for round in 0..3 {
        let marker = format!("saved_round_{round}");
        atomic_save(&file, &format!("fn main() {{\n    {marker}();\n}}\n"));
        // At once (the watcher may not have seen it yet): never the old content.
        let found = grep_content(&mut client, &marker);
        assert!(
            text(&found).contains(&format!("2:    {marker}();")),
            "round {round}: grep right after the save: {found}"
        );
        let updated = client.wait_for(NOTICE, |m| {
            m["method"] == "notifications/resources/updated" && m["params"]["uri"] == file_uri
        });
        assert!(updated.is_some(), "round {round}: no resources/updated");
        // Once the watcher has seen it, the index serves the new content too.
        wait_live(&mut client);
        let found = grep_content(&mut client, &marker);
        assert!(
            text(&found).contains(&format!("2:    {marker}();")),
            "round {round}: grep after the update: {found}"
        );
        if round > 0 {
            let old = grep_content(&mut client, &format!("saved_round_{}", round - 1));
            assert_eq!(
                old["structuredContent"]["total"], 0,
                "round {round}: the old content is still found: {old}"
            );
        }
    }
    // Saves in quick succession, each right after the previous one's update arrived (while
    // the watcher may still be moving its watch to the new file): none is missed, and
    // neither is a write in place after them.
    for round in 0..4 {
        atomic_save(&file, &format!("fn main() {{ quick_{round}(); }}\n"));
        let updated = client.wait_for(NOTICE, |m| {
            m["method"] == "notifications/resources/updated" && m["params"]["uri"] == file_uri
        });
        assert!(
            updated.is_some(),
            "quick save {round}: no resources/updated"
        );
    }
    std::fs::write(&file, "fn main() { in_place(); }\n").unwrap();
    let updated = client.wait_for(NOTICE, |m| {
        m["method"] == "notifications/resources/updated" && m["params"]["uri"] == file_uri
    });
    assert!(
        updated.is_some(),
        "no resources/updated after a write in place"
    );
    // The temp files of the saves are outside the root: never announced.
    let seen = client.until_ping();
    let strays: Vec<&Value> = seen
        .iter()
        .filter(|m| {
            m["method"] == "notifications/resources/updated" && m["params"]["uri"] != file_uri
        })
        .collect();
    assert!(strays.is_empty(), "updates for other files: {strays:?}");
}

/// A file root is served as named, even when a walk would skip it: hidden, or ignored by
/// its directory's `.gitignore` (naming it as the root is the operator's explicit choice).
#[test]
fn a_hidden_or_ignored_file_root_is_still_served() {
    let ws = workspace();
    std::fs::create_dir(ws.app.join(".git")).unwrap();
    std::fs::write(ws.app.join(".gitignore"), "notes.txt\n").unwrap();
    let hidden = ws.app.join(".env");
    let ignored = ws.app.join("notes.txt");
    std::fs::write(&hidden, "TOKEN_NAME=x\n").unwrap();
    std::fs::write(&ignored, "TOKEN_NAME=y\n").unwrap();
    let mut client = Client::spawn(&[s(&hidden), s(&ignored)], &ws.base);
    client.handshake(json!({}));
    let grep = client.call("grep", json!({"pattern": "TOKEN_NAME"}));
    assert_eq!(
        listed_files(&grep),
        vec![s(&hidden).to_string(), s(&ignored).to_string()],
        "{grep}"
    );
    let resources = client.request("resources/list", json!({}));
    let uris: Vec<&str> = resources["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{resources}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, vec![uri(&hidden), uri(&ignored)], "{resources}");
}
