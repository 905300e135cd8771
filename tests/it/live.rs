//! The live workspace through the wire: watching, subscriptions, list changes, and the file
//! index giving exactly the answers a walk gives, also while files change.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

const NOTICE: Duration = Duration::from_secs(5);

fn wait_watched(client: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let roots = client.call("list_roots", json!({}));
        let root = &roots["structuredContent"]["roots"][0];
        if root["watch"] == "watching" && root["index"].as_str().unwrap_or("").starts_with("fresh")
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "root never became watched and indexed: {root}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn updated_for(client: &mut Client, uri: &str, within: Duration) -> bool {
    client
        .wait_for(within, |m| {
            m["method"] == "notifications/resources/updated" && m["params"]["uri"] == uri
        })
        .is_some()
}

#[test]
fn subscriptions_follow_modify_delete_recreate_and_stop_on_unsubscribe() {
    let ws = workspace();
    let file = ws.app.join("src/main.rs");
    let uri = uri(&file);
    let mut client = Client::spawn(&[], &ws.app);
    let init = client.handshake(json!({}));
    assert_eq!(init["capabilities"]["resources"]["subscribe"], true);
    assert_eq!(init["capabilities"]["resources"]["listChanged"], true);
    wait_watched(&mut client);
    let ok = client.request("resources/subscribe", json!({"uri": uri}));
    assert_eq!(ok["result"], json!({}));
    std::fs::write(&file, "fn main() { changed(); }\n").unwrap();
    assert!(
        updated_for(&mut client, &uri, NOTICE),
        "no update after a change"
    );
    std::fs::remove_file(&file).unwrap();
    assert!(
        updated_for(&mut client, &uri, NOTICE),
        "no update after a delete"
    );
    std::fs::write(&file, "fn main() {}\n").unwrap();
    assert!(
        updated_for(&mut client, &uri, NOTICE),
        "no update after re-creation"
    );
    // Creating and removing files changes the list.
    std::fs::write(ws.app.join("new.txt"), "x").unwrap();
    let changed = client.wait_for(NOTICE, |m| {
        m["method"] == "notifications/resources/list_changed"
    });
    assert!(changed.is_some(), "no list_changed after a create");
    let ok = client.request("resources/unsubscribe", json!({"uri": uri}));
    assert_eq!(ok["result"], json!({}));
    // Another subscribed file, changed after this one, is the marker: nothing for the
    // unsubscribed file may arrive before the marker's update.
    let marker = ws.app.join("marker.txt");
    std::fs::write(&marker, "0").unwrap();
    let marker_uri = super::support::uri(&marker);
    let ok = client.request("resources/subscribe", json!({"uri": marker_uri}));
    assert_eq!(ok["result"], json!({}));
    let _ = client.collect(Duration::ZERO, |_| true);
    std::fs::write(&file, "fn main() { again(); }\n").unwrap();
    std::fs::write(&marker, "1").unwrap();
    let mut seen = Vec::new();
    loop {
        let m = client.recv(NOTICE).expect("no update for the marker");
        if m["method"] == "notifications/resources/updated" && m["params"]["uri"] == marker_uri {
            break;
        }
        seen.push(m);
    }
    seen.extend(client.until_ping());
    assert!(
        !seen
            .iter()
            .any(|m| m["method"] == "notifications/resources/updated" && m["params"]["uri"] == uri),
        "update after unsubscribe: {seen:?}"
    );
    // Outside the roots: refused.
    let outside = client.request("resources/subscribe", json!({"uri": uri_of_outside(&ws)}));
    assert_eq!(outside["error"]["code"], -32602);
}

fn uri_of_outside(ws: &Workspace) -> String {
    uri(&ws.outside.join("secret.txt"))
}

#[test]
fn a_missing_root_is_reported_unwatched() {
    let ws = workspace();
    let missing = ws.base.join("not-there");
    let mut client = Client::spawn(&[s(&missing), s(&ws.app)], &ws.base);
    client.handshake(json!({}));
    let roots = client.call("list_roots", json!({}));
    let first = &roots["structuredContent"]["roots"][0];
    assert_eq!(first["missing"], true);
    assert_ne!(first["watch"], "watching");
    assert!(
        first["watch"].as_str().unwrap().contains("does not exist"),
        "{first}"
    );
    wait_watched_root(&mut client, 1);
}

fn wait_watched_root(client: &mut Client, index: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let roots = client.call("list_roots", json!({}));
        let root = &roots["structuredContent"]["roots"][index];
        if root["watch"] == "watching" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "root never became watched: {root}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn no_watch_turns_subscriptions_off_and_says_so() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    let init = client.handshake(json!({}));
    assert!(init["capabilities"]["resources"].get("subscribe").is_none());
    let roots = client.call("list_roots", json!({}));
    assert_eq!(roots["structuredContent"]["roots"][0]["watch"], "off");
}

fn answers(client: &mut Client) -> Vec<Value> {
    let queries = [
        ("grep", json!({"pattern": "needle", "head_limit": 0})),
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "content", "head_limit": 0, "glob": ["*.rs", "!gen/**"]}),
        ),
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "count", "type": "rust"}),
        ),
        (
            "glob",
            json!({"pattern": "**/*.rs", "sort": "path", "head_limit": 0}),
        ),
        (
            "glob",
            json!({"pattern": "*", "sort": "path", "head_limit": 0}),
        ),
    ];
    queries
        .iter()
        .map(|(tool, args)| {
            let mut result = client.call(tool, args.clone())["structuredContent"].clone();
            result["stats"] = Value::Null; // timings and counters differ by design
            result
        })
        .collect()
}

/// The watcher reads kernel events this late in the index-vs-walk test, as a loaded machine
/// would: without the barrier the index answers stale right after the changes (issue #11),
/// every time; with it the answer waits for them or walks. Below the barrier's 200 ms
/// bound, so an idle round still succeeds and the index still serves.
const WATCH_DELAY_MS: &str = "100";

#[test]
fn the_index_answers_exactly_what_a_walk_answers_while_files_change() {
    let ws = workspace();
    std::fs::create_dir_all(ws.app.join(".git")).unwrap();
    std::fs::write(ws.app.join(".gitignore"), "gen/\n*.log\n").unwrap();
    for i in 0..60 {
        let dir = ws.app.join(format!("m{}", i % 6));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("f{i}.rs")),
            format!("fn needle_{i}() {{}}\n"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(ws.app.join("gen")).unwrap();
    std::fs::write(ws.app.join("gen/out.rs"), "needle\n").unwrap();
    std::fs::write(ws.app.join("app.log"), "needle\n").unwrap();
    // Events read late (as under load) must not make the index answer stale: the barrier
    // holds on Linux (inotify orders events); elsewhere freshness is best effort, so the
    // delay is not injected there.
    let delay: &[&str] = if cfg!(target_os = "linux") {
        &["--test-watch-delay", WATCH_DELAY_MS]
    } else {
        &[]
    };
    let mut indexed = Client::spawn(delay, &ws.app);
    indexed.handshake(json!({}));
    wait_watched(&mut indexed);
    let mut walking = Client::spawn(&["--no-watch"], &ws.app);
    walking.handshake(json!({}));
    assert_eq!(answers(&mut indexed), answers(&mut walking));
    // Change the tree: create, rename, delete, and an ignore-rule edit.
    std::fs::write(ws.app.join("m1/added.rs"), "fn needle_added() {}\n").unwrap();
    std::fs::rename(ws.app.join("m2/f2.rs"), ws.app.join("m3/renamed.rs")).unwrap();
    std::fs::remove_file(ws.app.join("m4/f4.rs")).unwrap();
    std::fs::write(ws.app.join(".gitignore"), "gen/\n").unwrap();
    // Right away (the index must not answer stale) and after it settled.
    assert_eq!(answers(&mut indexed), answers(&mut walking));
    wait_watched(&mut indexed);
    assert_eq!(answers(&mut indexed), answers(&mut walking));
}

/// Searching a fresh index, progress carries the index's `total`. The search is long by
/// construction (3,000 hard links of a 24 KB file through a slow regex), so progress must
/// come.
#[test]
fn progress_reports_the_index_total() {
    let ws = workspace();
    linked_tree(&ws.app, 3000, &slow_body(300));
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_watched(&mut client);
    let id = client.start(
        "tools/call",
        json!({"name": "grep", "arguments": {"pattern": SLOW_PATTERN},
               "_meta": {"progressToken": "t"}}),
    );
    let (seen, response) = client.read_until_response(id, Duration::from_secs(120));
    assert!(response.get("result").is_some(), "{response}");
    let progress: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "no progress for a long search");
    for p in &progress {
        // 3,000 generated files plus src/main.rs.
        assert_eq!(p["params"]["total"].as_f64(), Some(3001.0), "{p}");
        assert!(p["params"]["progress"].as_f64().unwrap() <= 3001.0);
    }
}

#[test]
fn ignored_and_hidden_churn_does_not_change_the_list() {
    let ws = workspace();
    std::fs::write(ws.app.join(".ignore"), "build/\n").unwrap();
    std::fs::create_dir_all(ws.app.join("build")).unwrap();
    std::fs::create_dir_all(ws.app.join(".cache")).unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_watched(&mut client);
    // Nothing was created since the server started, so a list change would be sent at
    // once. A subscribed file changed after the churn is the marker.
    let marker = ws.app.join("src/main.rs");
    let marker_uri = super::support::uri(&marker);
    let ok = client.request("resources/subscribe", json!({"uri": marker_uri}));
    assert_eq!(ok["result"], json!({}));
    for i in 0..20 {
        std::fs::write(ws.app.join(format!("build/out{i}.o")), "x").unwrap();
        std::fs::write(ws.app.join(format!(".cache/c{i}")), "x").unwrap();
    }
    std::fs::write(&marker, "fn main() { marker(); }\n").unwrap();
    let mut seen = Vec::new();
    loop {
        let m = client.recv(NOTICE).expect("no update for the marker");
        if m["method"] == "notifications/resources/updated" && m["params"]["uri"] == marker_uri {
            break;
        }
        seen.push(m);
    }
    seen.extend(client.until_ping());
    let noise: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/resources/list_changed")
        .collect();
    assert!(
        noise.is_empty(),
        "list_changed for ignored/hidden files: {noise:?}"
    );
    std::fs::write(ws.app.join("src/new.rs"), "x").unwrap();
    assert!(
        client
            .wait_for(NOTICE, |m| m["method"]
                == "notifications/resources/list_changed")
            .is_some(),
        "no list_changed for a listed file"
    );
}

#[test]
fn a_root_over_the_index_limit_is_searched_by_walking() {
    let ws = workspace();
    for i in 0..10 {
        std::fs::write(ws.app.join(format!("f{i}.txt")), "needle\n").unwrap();
    }
    let mut client = Client::spawn(&["--index-max-files", "5"], &ws.app);
    client.handshake(json!({}));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let roots = client.call("list_roots", json!({}));
        let index = roots["structuredContent"]["roots"][0]["index"]
            .as_str()
            .unwrap()
            .to_string();
        if index.contains("more than 5 files") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never reported over the limit: {index}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let result = client.call("grep", json!({"pattern": "needle", "head_limit": 0}));
    assert_eq!(result["structuredContent"]["total"], 10);
}
