//! Progress on the long calls other than the searches (PRODUCT §5): `directory_tree`,
//! `read_files` and `resources/list` report `notifications/progress` when the request
//! carried `_meta.progressToken`: the first soon, strictly increasing, at most ~10 a second,
//! none after the response. Each call is made long by construction: the tree grows (hard
//! links, cheap) until one call takes over a second on this machine.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// The server: no watcher (resources/list walks the disk instead of answering from the
/// index) and a budget large enough that the answers are not cut short.
fn started(root: &Path) -> Client {
    let mut client = Client::spawn(&["--no-watch", "--max-output-bytes", "67108864"], root);
    client.handshake(json!({}));
    client
}

/// What one request with a progress token brought: the progress notifications (with
/// their time since the request was sent), the response, how long it took, and every
/// message after it up to the answer of the same request made again without a token (a
/// window as long as the call itself).
struct Run {
    notes: Vec<(Duration, Value)>,
    response: Value,
    took: Duration,
    after: Vec<Value>,
}

fn with_progress(client: &mut Client, method: &str, params: &Value, token: &str) -> Run {
    let mut with_meta = params.clone();
    with_meta["_meta"] = json!({"progressToken": token});
    let sent = Instant::now();
    let id = client.start(method, with_meta);
    let mut notes = Vec::new();
    let response = loop {
        let (at, message) = client
            .recv_timed(Duration::from_secs(120))
            .expect("an answer");
        if is_response_to(&message, id) {
            break message;
        }
        if message["method"] == "notifications/progress" {
            notes.push((at - sent, message));
        }
    };
    let took = sent.elapsed();
    let marker = client.start(method, params.clone());
    let (after, _) = client.read_until_response(marker, Duration::from_secs(120));
    Run {
        notes,
        response,
        took,
        after,
    }
}

/// Makes the call with a token, growing the tree under `root` until it lasts a second, or
/// until a bigger tree no longer makes it longer (a call capped by its own limit, such as
/// directory_tree's 100,000 entries, on a fast machine) once it lasts half a second;
/// returns the run with the tree's file count.
fn long_run(root: &Path, method: &str, params: impl Fn(&[PathBuf]) -> Value) -> (Run, usize) {
    let mut client = started(root);
    let mut files = 4000;
    let mut before = Duration::ZERO;
    loop {
        linked_tree(root, files, "x\n");
        let mut paths: Vec<PathBuf> = vec![root.join("linked/seed.txt")];
        paths.extend((1..files).map(|n| root.join(format!("linked/d{:02}/f{n:05}.txt", n / 100))));
        let run = with_progress(&mut client, method, &params(&paths), "tok-long");
        assert!(
            run.response.get("error").is_none() && !is_error(&run.response["result"]),
            "{method}: {}",
            run.response
        );
        let capped = run.took < before.mul_f64(1.2) && run.took >= Duration::from_millis(500);
        if run.took >= Duration::from_secs(1) || capped {
            return (run, files);
        }
        before = run.took;
        files *= 2;
        assert!(files <= 512_000, "could not make {method} last a second");
    }
}

/// The rules of PRODUCT §5 on one run; returns the progress values.
fn assert_progress_rules(what: &str, run: &Run, message_start: &str) -> Vec<f64> {
    let notes = &run.notes;
    assert!(
        notes.len() >= 2,
        "{what}: a {:?} call sent {} progress notifications",
        run.took,
        notes.len()
    );
    let values: Vec<f64> = notes
        .iter()
        .map(|(_, p)| {
            assert_eq!(p["params"]["progressToken"], "tok-long", "{what}: {p}");
            assert!(
                p["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with(message_start),
                "{what}: {p}"
            );
            p["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "{what}: strictly increasing: {values:?}"
    );
    let first = notes[0].0;
    assert!(
        first < Duration::from_millis(200 + 1800),
        "{what}: first progress only after {first:?}"
    );
    // At most ~10 a second over the whole call (50% slack, plus two for the edges).
    let span = notes.last().unwrap().0.as_secs_f64();
    assert!(
        (notes.len() as f64) <= 2.0 + 15.0 * span,
        "{what}: {} notifications in {span:.2} s",
        notes.len()
    );
    let late: Vec<&Value> = run
        .after
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(
        late.is_empty(),
        "{what}: progress after the response: {late:?}"
    );
    values
}

#[test]
fn directory_tree_reports_progress() {
    let ws = workspace();
    let (run, files) = long_run(
        &ws.app,
        "tools/call",
        |_| json!({"name": "directory_tree", "arguments": {"max_depth": 5, "head_limit": 0}}),
    );
    let values = assert_progress_rules("directory_tree", &run, "listed ");
    // Entries walked: the tree's files and directories, never more than there are.
    let entries = (files + files / 100 + 8) as f64;
    assert!(*values.last().unwrap() <= entries, "{values:?}");
}

#[test]
fn read_files_reports_progress() {
    let ws = workspace();
    let (run, files) = long_run(&ws.app, "tools/call", |paths| {
        let paths: Vec<&str> = paths.iter().map(|p| s(p)).collect();
        json!({"name": "read_files", "arguments": {"paths": paths}})
    });
    let values = assert_progress_rules("read_files", &run, "read ");
    for (_, note) in &run.notes {
        assert_eq!(
            note["params"]["total"].as_f64(),
            Some(files as f64),
            "{note}"
        );
    }
    assert!(*values.last().unwrap() <= files as f64, "{values:?}");
}

#[test]
fn resources_list_reports_progress() {
    let ws = workspace();
    let (run, files) = long_run(&ws.app, "resources/list", |_| json!({}));
    let values = assert_progress_rules("resources/list", &run, "listed ");
    // Files examined: the tree's files, its extra seed files (one per 50,000 links) and
    // src/main.rs.
    assert!(
        *values.last().unwrap() <= (files + 1 + files / 50_000) as f64,
        "{values:?}"
    );
    let page = run.response["result"]["resources"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(page, 1000, "a full first page");
}
