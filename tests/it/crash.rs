//! Crash safety: the server is SIGKILLed in the middle of a stream of write_file and
//! edit_file calls. Every target file must hold exactly one of its two known contents —
//! never a mix, never a prefix, never empty. Leftover `*.rootgrep-tmp` files may exist (a
//! killed process cannot clean up); they are counted and reported, never mistaken for
//! targets, and they do not get in the way of later writes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

const FILES: usize = 20;
const TEMP_SUFFIX: &str = ".rootgrep-tmp";

/// The two full contents of target `i`. They differ only in the marker, so an edit_file
/// replacing one marker with the other turns one content into the other, exactly; the
/// markers have different lengths, so a torn write cannot pass for either.
fn contents(i: usize) -> (String, String) {
    let head: String = (0..400)
        .map(|n| format!("file {i} head line {n} lorem ipsum dolor sit amet\n"))
        .collect();
    let tail: String = (0..(300 + 13 * i))
        .map(|n| format!("file {i} tail line {n} consectetur adipiscing elit\n"))
        .collect();
    (
        format!("{head}{}\n{tail}", marker_a(i)),
        format!("{head}{}\n{tail}", marker_b(i)),
    )
}

fn marker_a(i: usize) -> String {
    format!("STATE-A-{i}")
}

fn marker_b(i: usize) -> String {
    format!("STATE-B-{i}-with-a-longer-marker")
}

fn target(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("t{i:02}.txt"))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    A,
    B,
    /// A request was in flight when the answer stopped coming.
    Unknown,
}

/// The request that moves target `i` from `state` to the other content: alternately a
/// whole-file write and an edit (edits only when the current content is known).
fn next_request(i: usize, state: State, step: usize) -> (Value, State) {
    let (a, b) = contents(i);
    let path = format!("data/t{i:02}.txt");
    let to = if state == State::A {
        State::B
    } else {
        State::A
    };
    let use_edit = state != State::Unknown && (step + i).is_multiple_of(2);
    let (name, arguments) = if use_edit {
        let (old, new) = match state {
            State::A => (marker_a(i), marker_b(i)),
            _ => (marker_b(i), marker_a(i)),
        };
        (
            "edit_file",
            json!({"path": path, "old_string": old, "new_string": new}),
        )
    } else {
        let content = if to == State::A { a } else { b };
        ("write_file", json!({"path": path, "content": content}))
    };
    (json!({"name": name, "arguments": arguments}), to)
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(TEMP_SUFFIX))
        .collect()
}

/// Each target holds exactly one of its known contents.
fn assert_targets_whole(dir: &Path, round: usize) {
    for i in 0..FILES {
        let bytes = std::fs::read(target(dir, i)).unwrap_or_else(|err| {
            panic!("round {round}: target {i} unreadable after the kill: {err}")
        });
        let (a, b) = contents(i);
        assert!(
            bytes == a.as_bytes() || bytes == b.as_bytes(),
            "round {round}: target {i} holds neither known content ({} bytes; A is {}, B is {})",
            bytes.len(),
            a.len(),
            b.len()
        );
    }
}

/// Several rounds: start the server, run batches of 20 writes/edits (one per file, all in
/// flight together), then send one more batch and SIGKILL the server after a short delay
/// that differs per round, so the kill lands at different points of the writes.
#[test]
fn sigkill_during_writes_leaves_every_file_whole() {
    let ws = workspace();
    let dir = ws.app.join("data");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..FILES {
        std::fs::write(target(&dir, i), contents(i).0).unwrap();
    }
    let mut states = [State::A; FILES];
    let started = Instant::now();
    let kill_delays_ms = [0u64, 1, 3, 6, 10, 20];
    let mut answered_in_killed_batches = 0;
    let mut step = 0;
    for (round, delay) in kill_delays_ms.iter().enumerate() {
        let mut client = Client::spawn(&[], &ws.app);
        client.handshake(json!({}));
        // Full batches, answered, then the batch that the kill interrupts.
        for batch in 0..=(1 + round % 3) {
            let last = batch == 1 + round % 3;
            let mut ids = Vec::new();
            for (i, state) in states.iter_mut().enumerate() {
                let (params, to) = next_request(i, *state, step);
                ids.push((i, client.start("tools/call", params), to));
                if last {
                    *state = State::Unknown;
                }
            }
            step += 1;
            if last {
                std::thread::sleep(Duration::from_millis(*delay));
                client.child.kill().unwrap();
                client.child.wait().unwrap();
                // Answers that made it out before the kill.
                answered_in_killed_batches += client
                    .collect(Duration::from_millis(100), |m| m.get("result").is_some())
                    .len();
                break;
            }
            for (i, id, to) in ids {
                let response = client
                    .response(id, Duration::from_secs(30))
                    .unwrap_or_else(|| panic!("round {round}: no answer for target {i}"));
                let result = &response["result"];
                assert!(
                    !is_error(result),
                    "round {round}: target {i}: {}",
                    text(result)
                );
                states[i] = to;
            }
        }
        assert_targets_whole(&dir, round);
        // Learn the real state of each file for the next round.
        for (i, state) in states.iter_mut().enumerate() {
            let bytes = std::fs::read(target(&dir, i)).unwrap();
            *state = if bytes == contents(i).0.as_bytes() {
                State::A
            } else {
                State::B
            };
        }
    }
    let leftovers = temp_files(&dir);
    eprintln!(
        "crash: {} rounds in {:?}; {answered_in_killed_batches} writes answered in the killed \
         batches; {} leftover {TEMP_SUFFIX} files",
        kill_delays_ms.len(),
        started.elapsed(),
        leftovers.len()
    );
    // Leftover temp files are hidden, never targets: a fresh server does not list or search
    // them by default, and writing every target again works and leaves them alone.
    for temp in &leftovers {
        let name = temp.file_name().unwrap().to_string_lossy().to_string();
        assert!(name.starts_with('.'), "temp files are hidden: {name}");
        assert!(
            (0..FILES).all(|i| target(&dir, i) != *temp),
            "a temp file is a target"
        );
    }
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let glob = client.call("glob", json!({"pattern": "data/*"}));
    assert_eq!(
        glob["structuredContent"]["files"].as_array().unwrap().len(),
        FILES,
        "{}",
        text(&glob)
    );
    let grep = client.call("grep", json!({"pattern": "STATE-", "path": "data"}));
    assert_eq!(
        grep["structuredContent"]["files"].as_array().unwrap().len(),
        FILES,
        "{}",
        text(&grep)
    );
    for i in 0..FILES {
        let result = client.call(
            "write_file",
            json!({"path": format!("data/t{i:02}.txt"), "content": contents(i).0}),
        );
        assert!(!is_error(&result), "{}", text(&result));
    }
    assert_targets_whole(&dir, kill_delays_ms.len());
    assert!(
        temp_files(&dir).len() <= leftovers.len(),
        "a clean write left a temp file behind"
    );
}
