//! Behaviour over time, through the wire: the log rate limit and its count of dropped
//! messages, logs that never carry file contents or environment values,
//! `notifications/resources/list_changed` at most once a second (and never lost at the end
//! of a burst), and subscriptions that keep working when a file is replaced by a rename (as
//! editors and `write_file` do) or when its directory is renamed. Every check waits for an
//! event or a later marker with a deadline, never for a fixed time.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// Long enough for a debounced watch event on a loaded machine (and under Wine, where the
/// watcher is slower still); a positive wait, so a working server answers long before.
const NOTICE: Duration = Duration::from_secs(15);

fn log_text(m: &Value) -> Option<&str> {
    if m["method"] == "notifications/message" {
        m["params"]["data"]["message"].as_str()
    } else {
        None
    }
}

/// The count in a log text's "N earlier log messages dropped" note: the number right
/// before the word "dropped" (with the words between skipped).
fn dropped_count(text: &str) -> Option<u64> {
    let before = &text[..text.find("dropped")?];
    before
        .split(|c: char| !c.is_ascii_digit())
        .rfind(|part| !part.is_empty())
        .and_then(|n| n.parse().ok())
}

/// 100 malformed lines at once each log a debug event: about a burst of them reaches the
/// client (burst 20, then 5 a second), the rest are dropped, and the next message that
/// gets through says how many were dropped, so that every event is either sent or counted.
#[test]
fn log_notifications_are_rate_limited_and_count_what_they_dropped() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({}));
    let ok = client.request("logging/setLevel", json!({"level": "debug"}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    let started = Instant::now();
    client.write_unflushed("{not json\n".repeat(100).as_bytes());
    client.flush();
    let mut sent = 100u64;
    let mut passed = 0u64; // parse-error messages that reached the client
    let deadline = Instant::now() + Duration::from_secs(15);
    let dropped = 'outer: loop {
        // Read what came; once the burst is spent, one more event at a time (the bucket
        // refills at 5 a second) until one carries the dropped count.
        while let Some(message) = client.recv(Duration::from_millis(300)) {
            let Some(text) = log_text(&message) else {
                continue;
            };
            assert!(text.contains("parse error"), "unexpected log: {text}");
            passed += 1;
            if let Some(dropped) = dropped_count(text) {
                break 'outer dropped;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no message said how many were dropped ({passed} passed of {sent})"
        );
        client.send_raw("{still not json");
        sent += 1;
    };
    let elapsed = started.elapsed().as_secs_f64();
    // Every event up to the one with the note was either sent or dropped and counted.
    assert!(
        passed + dropped >= 100 && passed + dropped <= sent,
        "{passed} passed + {dropped} dropped, {sent} sent"
    );
    // Burst then steady rate (generous: two extra).
    let allowed = 20.0 + 5.0 * elapsed + 2.0;
    assert!(
        (passed as f64) <= allowed,
        "{passed} log messages in {elapsed:.2} s"
    );
    assert!(dropped >= 50, "only {dropped} dropped of a burst of 100");
}

/// With every level on, the tools touch a file holding a secret and the server holds a
/// secret in its environment: many log messages reach the client (so the check is not
/// vacuous), none carries either secret.
#[test]
fn logs_never_carry_file_contents_or_environment_values() {
    const FILE_SECRET: &str = "FILE-SECRET-7f3a9c";
    const ENV_SECRET: &str = "ENV-SECRET-91c2d4";
    let ws = workspace();
    let secret = ws.app.join("src/secret.txt");
    std::fs::write(&secret, format!("key = {FILE_SECRET}\nline two\n")).unwrap();
    let mut client = Client::spawn_with_env(&[], &ws.app, &[("ROOTGREP_TEST_TOKEN", ENV_SECRET)]);
    client.handshake(json!({}));
    let ok = client.request("logging/setLevel", json!({"level": "debug"}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    let file_uri = uri(&secret);
    let ok = client.request("resources/subscribe", json!({"uri": file_uri}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    client.call("read_file", json!({"path": "src/secret.txt"}));
    client.call(
        "read_files",
        json!({"paths": ["src/secret.txt", "missing.txt"]}),
    );
    client.call(
        "grep",
        json!({"pattern": "SECRET", "output_mode": "content", "-C": 2}),
    );
    client.call("grep", json!({"pattern": "(unclosed"}));
    client.call(
        "write_file",
        json!({"path": "src/copy.txt", "content": format!("copy {FILE_SECRET}\n")}),
    );
    client.call(
        "edit_file",
        json!({"path": "src/secret.txt", "old_string": FILE_SECRET, "new_string": format!("{FILE_SECRET}-2")}),
    );
    client.call(
        "edit_file",
        json!({"path": "src/secret.txt", "old_string": format!("absent {FILE_SECRET}"), "new_string": "x"}),
    );
    client.request("resources/read", json!({"uri": file_uri}));
    // Malformed requests carrying the secret: neither the parse error nor the bad
    // arguments may be logged with the text.
    client.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":"bad","method":"tools/call","params":{{"name":"write_file","arguments":{{"content":"{FILE_SECRET}"#
    ));
    client.request(
        "tools/call",
        json!({"name": "write_file", "arguments": {"path": 7, "content": FILE_SECRET}}),
    );
    // A change under the subscription (watch events are logged at debug), once the root is
    // watched: a change made before that is never reported (on a slow start, as under Wine,
    // the update did not come).
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.call("list_roots", json!({}))["structuredContent"]["roots"][0]["watch"]
        != "watching"
    {
        assert!(Instant::now() < deadline, "the root was never watched");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::write(&secret, format!("changed {FILE_SECRET}\n")).unwrap();
    client
        .wait_for(NOTICE, |m| {
            m["method"] == "notifications/resources/updated" && m["params"]["uri"] == file_uri
        })
        .expect("update after the change");
    // A later call's own "answered" log is the marker: the forwarder keeps order, so every
    // earlier log message was sent (or dropped by the rate limit) before it. The marker
    // itself may be dropped while the limit is spent, so call again until one arrives.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        client.call("list_roots", json!({}));
        // A second's wait refills the bucket (5 a second) for the next call's logs.
        let marker = client.wait_for(Duration::from_secs(1), |m| {
            log_text(m).is_some_and(|t| t.contains("answered"))
                && m["params"]["data"]["tool"] == "list_roots"
        });
        if marker.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "no debug log for list_roots");
    }
    let logs: Vec<String> = client
        .collect(Duration::ZERO, |m| log_text(m).is_some())
        .iter()
        .map(|m| m["params"]["data"].to_string())
        .collect();
    assert!(logs.len() >= 10, "too few logs to judge: {logs:?}");
    for text in &logs {
        assert!(
            !text.contains(FILE_SECRET),
            "file contents in a log: {text}"
        );
        assert!(
            !text.contains(ENV_SECRET),
            "environment value in a log: {text}"
        );
    }
}

/// Files created continuously for ~3 s (one every 50 ms, from another thread): the list
/// changes arrive at least a second apart (less jitter), there are some, and the last one
/// comes after the last create (coalesced, never lost).
#[test]
fn list_changed_is_sent_at_most_once_a_second_and_never_lost() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    let dir = ws.app.join("gen");
    std::fs::create_dir(&dir).unwrap();
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        for i in 0..60 {
            std::fs::write(dir.join(format!("f{i}.txt")), "x").unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
        Instant::now()
    });
    let mut arrivals = Vec::new();
    while !writer.is_finished() {
        if let Some((at, m)) = client.recv_timed(Duration::from_millis(50))
            && m["method"] == "notifications/resources/list_changed"
        {
            arrivals.push(at);
        }
    }
    let last_create = writer.join().unwrap();
    // After the last create, one more must come (the burst's tail), within the interval
    // plus debounce and slack.
    let tail = loop {
        let (at, m) = client
            .recv_timed(NOTICE)
            .expect("no list_changed after the last create");
        if m["method"] == "notifications/resources/list_changed" {
            arrivals.push(at);
            if at > last_create {
                break at;
            }
        }
    };
    let span = tail - started;
    assert!(
        arrivals.len() >= 3,
        "{} list changes in {span:?} of steady creates",
        arrivals.len()
    );
    for pair in arrivals.windows(2) {
        let gap = pair[1] - pair[0];
        // The server spaces them by >= 1 s; delivery jitter may shorten a gap a little.
        assert!(
            gap >= Duration::from_millis(700),
            "two list changes {gap:?} apart ({} in {span:?})",
            arrivals.len()
        );
    }
}

fn updated_for(m: &Value, uri: &str) -> bool {
    m["method"] == "notifications/resources/updated" && m["params"]["uri"] == uri
}

/// Waits for an update of `uri`; panics with `what` when none comes.
fn expect_update(client: &mut Client, uri: &str, what: &str) {
    assert!(
        client.wait_for(NOTICE, |m| updated_for(m, uri)).is_some(),
        "no resources/updated for {uri} after {what}"
    );
}

/// Renames `from` over `to` as a careful Windows editor does: where the system has no
/// POSIX rename semantics (Wine), a replace fails while any reader has `to` open — here
/// the server's symbol index re-reading the file just saved — so it is tried again for a
/// while. Elsewhere the first try succeeds.
fn replace(from: &Path, to: &Path) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match std::fs::rename(from, to) {
            Ok(()) => return,
            Err(e)
                if e.kind() == std::io::ErrorKind::PermissionDenied
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("rename {} -> {}: {e}", from.display(), to.display()),
        }
    }
}

/// Editors (and `write_file`) save by writing a temporary file and renaming it over the
/// original. A subscription to the file must see each such save, again and again (the
/// watch follows the path, not the replaced inode).
#[test]
fn a_file_replaced_by_rename_notifies_its_subscribers() {
    let ws = workspace();
    let file = ws.app.join("src/main.rs");
    let file_uri = uri(&file);
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    let ok = client.request("resources/subscribe", json!({"uri": file_uri}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    for round in 0..3 {
        let tmp = ws.app.join(format!("src/.main.rs.swp{round}"));
        std::fs::write(&tmp, format!("fn main() {{ /* save {round} */ }}\n")).unwrap();
        replace(&tmp, &file);
        expect_update(
            &mut client,
            &file_uri,
            &format!("replace-by-rename #{round}"),
        );
    }
    // The server's own write_file replaces the file the same way.
    let result = client.call(
        "write_file",
        json!({"path": "src/main.rs", "content": "fn main() { /* tool */ }\n"}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    expect_update(&mut client, &file_uri, "write_file");
    // And a plain write after all those replacements still counts.
    std::fs::write(&file, "fn main() { /* plain */ }\n").unwrap();
    expect_update(
        &mut client,
        &file_uri,
        "a plain write after the replacements",
    );
}

/// A subscribed file under `pkg/`, and a second subscribed file used as a marker.
struct Renaming {
    ws: Workspace,
    client: Client,
    dir: std::path::PathBuf,
    file: std::path::PathBuf,
    file_uri: String,
    marker: std::path::PathBuf,
    marker_uri: String,
}

fn renaming_setup() -> Renaming {
    let ws = workspace();
    let dir = ws.app.join("pkg");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("lib.rs");
    std::fs::write(&file, "pub fn a() {}\n").unwrap();
    let marker = ws.app.join("src/main.rs");
    let file_uri = uri(&file);
    let marker_uri = uri(&marker);
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    for u in [&file_uri, &marker_uri] {
        let ok = client.request("resources/subscribe", json!({"uri": u}));
        assert_eq!(ok["result"], json!({}), "{ok}");
    }
    Renaming {
        ws,
        client,
        dir,
        file,
        file_uri,
        marker,
        marker_uri,
    }
}

/// Writes the marker file and returns everything that arrived before its update: the
/// watcher delivers in order, so an update for an earlier change would be in the list.
fn until_marker_update(r: &mut Renaming, round: u32) -> Vec<Value> {
    std::fs::write(&r.marker, format!("fn main() {{ /* marker {round} */ }}\n")).unwrap();
    let mut seen = Vec::new();
    loop {
        let m = r
            .client
            .recv(NOTICE)
            .expect("no update for the marker file");
        if updated_for(&m, &r.marker_uri) {
            return seen;
        }
        seen.push(m);
    }
}

/// Renaming the directory of a subscribed file away deletes the file at its URI: that is
/// a change the subscriber must hear about.
#[test]
fn renaming_the_directory_away_notifies_the_subscribed_file() {
    let mut r = renaming_setup();
    let moved = r.ws.app.join("pkg-moved");
    std::fs::rename(&r.dir, &moved).unwrap();
    let uri = r.file_uri.clone();
    expect_update(&mut r.client, &uri, "renaming its directory away");
}

/// After its directory is renamed, a subscription follows the path, not the moved file:
/// writing the moved copy does not notify the old URI (checked against a later marker
/// update), and a new file at the old path, and its changes, do.
#[test]
fn a_subscription_follows_its_path_across_a_directory_rename() {
    let mut r = renaming_setup();
    let moved = r.ws.app.join("pkg-moved");
    std::fs::rename(&r.dir, &moved).unwrap();
    // Let anything pending from the rename arrive first.
    until_marker_update(&mut r, 1);
    std::fs::write(moved.join("lib.rs"), "pub fn moved() {}\n").unwrap();
    let seen = until_marker_update(&mut r, 2);
    assert!(
        !seen.iter().any(|m| updated_for(m, &r.file_uri)),
        "writing the moved copy notified the old URI: {seen:?}"
    );
    // A new directory and file at the old path, written at once (what is written in a
    // new directory before it is watched is announced too).
    std::fs::create_dir(&r.dir).unwrap();
    std::fs::write(&r.file, "pub fn b() {}\n").unwrap();
    let uri = r.file_uri.clone();
    expect_update(&mut r.client, &uri, "re-creating it at its path");
    std::fs::write(&r.file, "pub fn c() {}\n").unwrap();
    expect_update(&mut r.client, &uri, "changing the re-created file");
}

/// The same for a 2026-07-28 `subscriptions/listen` stream: list changes on the stream
/// are at least a second apart, and the last one comes after the last create.
#[test]
fn listen_stream_list_changed_is_spaced_and_never_loses_the_tail() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    // A legacy session is not needed: a stateless client only listens.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "over-time", "version": "1"},
    });
    // Wait until the root is watched (list_roots, stateless).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let roots = client.request(
            "tools/call",
            json!({"_meta": meta, "name": "list_roots", "arguments": {}}),
        );
        let root = &roots["result"]["structuredContent"]["roots"][0];
        if root["watch"] == "watching" {
            break;
        }
        assert!(Instant::now() < deadline, "never watched: {roots}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let id = client.start(
        "subscriptions/listen",
        json!({"_meta": meta, "notifications": {"resourcesListChanged": true}}),
    );
    client
        .wait_for(WAIT, |m| {
            m["method"] == "notifications/subscriptions/acknowledged"
        })
        .expect("acknowledged");
    let on_stream = |m: &Value| {
        m["method"] == "notifications/resources/list_changed"
            && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id
    };
    let dir = ws.app.join("gen");
    std::fs::create_dir(&dir).unwrap();
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        for i in 0..60 {
            std::fs::write(dir.join(format!("f{i}.txt")), "x").unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
        Instant::now()
    });
    let mut arrivals = Vec::new();
    while !writer.is_finished() {
        if let Some((at, m)) = client.recv_timed(Duration::from_millis(50))
            && on_stream(&m)
        {
            arrivals.push(at);
        }
    }
    let last_create = writer.join().unwrap();
    let tail = loop {
        let (at, m) = client
            .recv_timed(NOTICE)
            .expect("no list_changed on the stream after the last create");
        if on_stream(&m) {
            arrivals.push(at);
            if at > last_create {
                break at;
            }
        }
    };
    let span = tail - started;
    assert!(
        arrivals.len() >= 3,
        "{} list changes in {span:?}",
        arrivals.len()
    );
    for pair in arrivals.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(700),
            "two list changes {gap:?} apart ({} in {span:?})",
            arrivals.len()
        );
    }
}

/// A file written right after its directory is created (as `mkdir -p && write`, a
/// checkout or an unpack do) is announced to its subscriber: the watcher must not miss
/// what appeared in a new directory before it watched it.
#[test]
fn a_file_created_with_its_new_directory_notifies_its_subscriber() {
    let ws = workspace();
    let file = ws.app.join("newdir/deeper/lib.rs");
    let file_uri = uri(&file);
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    let ok = client.request("resources/subscribe", json!({"uri": file_uri}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "pub fn new() {}\n").unwrap();
    expect_update(&mut client, &file_uri, "creating it with its directory");
}
