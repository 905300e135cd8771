//! Load: thousands of pipelined requests (none lost, none answered twice, memory flat) and
//! many concurrent searches, half of them cancelled (no answer for those, correct answers
//! for the rest).

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// Receives messages until every id in `ids` has a response (or `deadline` passes), calling
/// `on_answer(n)` after the n-th distinct answer to one of `ids`. Returns how many
/// responses each id got and the responses themselves, for every id answered, not only
/// those in `ids` (an answer to a cancelled request must not go unseen).
fn gather(
    client: &mut Client,
    ids: &[i64],
    deadline: Instant,
    mut on_answer: impl FnMut(usize),
) -> (HashMap<i64, usize>, HashMap<i64, Value>) {
    let wanted: std::collections::HashSet<i64> = ids.iter().copied().collect();
    let mut counts: HashMap<i64, usize> = HashMap::new();
    let mut answers: HashMap<i64, Value> = HashMap::new();
    while wanted.iter().any(|id| !counts.contains_key(id)) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let Some(message) = client.recv(left) else {
            break;
        };
        if message.get("method").is_some() {
            continue; // a notification or a server request
        }
        let Some(id) = message["id"].as_i64() else {
            continue;
        };
        let count = counts.entry(id).or_default();
        *count += 1;
        if *count == 1 && wanted.contains(&id) {
            on_answer(answers.keys().filter(|id| wanted.contains(id)).count() + 1);
        }
        answers.insert(id, message);
    }
    (counts, answers)
}

/// The pipelined stream: mostly pings, then file_info, then small greps.
fn request_line(id: i64) -> String {
    let message = match id % 10 {
        0..=5 => json!({"jsonrpc":"2.0","id":id,"method":"ping"}),
        6..=8 => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"file_info","arguments":{"path":"src/main.rs"}}}),
        _ => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"grep","arguments":{"pattern":"needle","path":"src","output_mode":"count"}}}),
    };
    let mut line = message.to_string();
    line.push('\n');
    line
}

fn check_answer(id: i64, answer: &Value) {
    assert!(answer.get("error").is_none(), "{id}: {answer}");
    match id % 10 {
        0..=5 => assert_eq!(answer["result"], json!({}), "{id}: {answer}"),
        6..=8 => assert_eq!(
            answer["result"]["structuredContent"]["type"], "file",
            "{id}: {answer}"
        ),
        _ => assert_eq!(
            answer["result"]["structuredContent"]["total"], 5,
            "{id}: {answer}"
        ),
    }
}

/// Every id answered exactly once, each with a plausible answer.
fn check_all(ids: &[i64], counts: &HashMap<i64, usize>, answers: &HashMap<i64, Value>) {
    let lost: Vec<i64> = ids
        .iter()
        .copied()
        .filter(|id| !counts.contains_key(id))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} requests never answered (first: {:?})",
        lost.len(),
        ids.len(),
        &lost[..lost.len().min(10)]
    );
    for (&id, &count) in counts {
        assert_eq!(count, 1, "id {id} answered {count} times");
        check_answer(id, &answers[&id]);
    }
}

fn small_project(app: &Path) {
    for i in 0..5 {
        std::fs::write(
            app.join(format!("src/m{i}.rs")),
            format!("fn needle_{i}() {{}}\n"),
        )
        .unwrap();
    }
}

/// 10,000 requests (ping, file_info, small grep) written in one stream, without waiting for
/// any answer: every id is answered exactly once, and the server's memory once all are
/// answered is within ~20 MiB of its memory when the first 2,000 were answered.
#[test]
fn ten_thousand_pipelined_requests_all_answered_memory_flat() {
    let ws = workspace();
    small_project(&ws.app);
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    // Warm up (file index, thread pools) so the first sample is not a cold process.
    for _ in 0..3 {
        client.call(
            "grep",
            json!({"pattern":"needle","path":"src","output_mode":"count"}),
        );
    }
    let ids: Vec<i64> = (1_000_000..1_010_000).collect();
    let stream: String = ids.iter().map(|&id| request_line(id)).collect();
    let started = Instant::now();
    let mut stdin = client.stdin_clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(stream.as_bytes()).unwrap();
        stdin.flush().unwrap();
    });
    let pid = client.pid();
    let mut rss_first = 0;
    let (counts, answers) = gather(&mut client, &ids, started + Duration::from_secs(90), |n| {
        if n == 2000 {
            rss_first = rss_kib(pid);
        }
    });
    writer.join().unwrap();
    let elapsed = started.elapsed();
    let rss_all = rss_kib(pid);
    check_all(&ids, &counts, &answers);
    // Nothing arrives late, twice (read until a later ping is answered).
    let late: Vec<Value> = client
        .until_ping()
        .into_iter()
        .filter(|m| m.get("method").is_none() && m["id"].as_i64().is_some_and(|id| id >= 1_000_000))
        .collect();
    assert!(
        late.is_empty(),
        "duplicate answers: {:?}",
        &late[..late.len().min(3)]
    );
    eprintln!(
        "10,000 pipelined requests in {elapsed:?}; VmRSS {rss_first} KiB after 2,000, {rss_all} KiB after 10,000"
    );
    assert!(
        rss_all <= rss_first + 20 * 1024,
        "memory grew from {rss_first} KiB to {rss_all} KiB"
    );
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
}

/// A tree of a few thousand files; every 7th file holds the needle (some twice).
fn generated_tree(app: &Path) {
    let filler =
        "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n".repeat(20);
    for d in 0..30 {
        let dir = app.join(format!("pkg{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let n = d * 100 + f;
            let mut body = filler.clone();
            if n % 7 == 0 {
                body.push_str("let x = needle_load();\n");
            }
            if n % 21 == 0 {
                body.push_str("needle_load again\n");
            }
            std::fs::write(dir.join(format!("f{f:03}.txt")), body).unwrap();
        }
    }
}

/// 50 concurrent greps, every other one cancelled right after it is sent: cancelled ids
/// get no response at all; the others all complete with the same answer as a single
/// uncancelled run.
#[test]
fn fifty_concurrent_greps_half_cancelled() {
    let ws = workspace();
    generated_tree(&ws.app);
    // Room for all 429 paths in one answer, however long the temp directory's path is
    // (Windows' are twice Linux's, and the default 64 KiB budget cut the list there).
    let mut client = Client::spawn(&["--max-output-bytes", "1048576"], &ws.app);
    client.handshake(json!({}));
    let args = json!({"pattern": r"needle_\w+", "output_mode": "count", "head_limit": 0});
    let reference = client.call("grep", args.clone());
    let reference = &reference["structuredContent"];
    assert_eq!(
        reference["counts"].as_array().unwrap().len(),
        429,
        "{reference}"
    );
    assert!(reference["next_offset"].is_null());

    let base = 5_000_000i64;
    let mut stream = String::new();
    for i in 0..50 {
        let id = base + i;
        stream.push_str(
            &json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                "params":{"name":"grep","arguments":args}})
            .to_string(),
        );
        stream.push('\n');
        if i % 2 == 0 {
            stream.push_str(
                &json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                    "params":{"requestId":id,"reason":"load test"}})
                .to_string(),
            );
            stream.push('\n');
        }
    }
    let started = Instant::now();
    client.write_unflushed(stream.as_bytes());
    client.flush();
    let kept: Vec<i64> = (0..50).filter(|i| i % 2 == 1).map(|i| base + i).collect();
    let cancelled: Vec<i64> = (0..50).filter(|i| i % 2 == 0).map(|i| base + i).collect();
    let (counts, answers) = gather(
        &mut client,
        &kept,
        Instant::now() + patience(Duration::from_secs(120)),
        |_| {},
    );
    eprintln!(
        "25 greps (and 25 cancelled) answered in {:?}",
        started.elapsed()
    );
    for id in &kept {
        assert_eq!(
            counts.get(id),
            Some(&1),
            "grep {id} not answered exactly once"
        );
        let answer = &answers[id];
        assert!(answer.get("error").is_none(), "{answer}");
        let got = &answer["result"]["structuredContent"];
        for key in ["mode", "counts", "total", "truncated"] {
            assert_eq!(got[key], reference[key], "grep {id}: {key} differs");
        }
    }
    // No cancelled request was answered while the others ran...
    let answered_cancelled: Vec<&i64> = cancelled
        .iter()
        .filter(|id| counts.contains_key(id))
        .collect();
    assert!(
        answered_cancelled.is_empty(),
        "cancelled requests answered: {answered_cancelled:?}"
    );
    // ...nor later: the CPU goes idle (all work stopped), then everything up to a ping's
    // answer holds no answer to any of the 50.
    assert!(
        wait_cpu_idle(client.pid(), patience(Duration::from_secs(10))).is_some(),
        "still busy after every kept grep was answered"
    );
    let late: Vec<Value> = client
        .until_ping()
        .into_iter()
        .filter(|m| {
            m.get("method").is_none()
                && m["id"]
                    .as_i64()
                    .is_some_and(|id| cancelled.contains(&id) || kept.contains(&id))
        })
        .collect();
    assert!(
        late.is_empty(),
        "answers for cancelled (or already answered) requests: {:?}",
        late.iter().map(|m| m["id"].clone()).collect::<Vec<_>>()
    );
    // Fully usable afterwards, with the same answer.
    let again = client.call("grep", args);
    assert_eq!(again["structuredContent"]["counts"], reference["counts"]);
}

/// Cancelled requests get no response, so they must not keep their admission slot: after
/// far more cancellations than slots, new requests are still served.
#[test]
fn many_cancellations_do_not_exhaust_the_admission_window() {
    let ws = workspace();
    let line = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron\n";
    let body = line.repeat(200);
    for f in 0..200 {
        std::fs::write(ws.app.join(format!("f{f}.txt")), &body).unwrap();
    }
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({}));
    for round in 0..600 {
        let id = 5_000_000 + round;
        client.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"grep","arguments":{"pattern": r"\b\w{40,}\b|(\w+\s+){12}\d"}}}));
        client.notify("notifications/cancelled", json!({"requestId": id}));
    }
    let started = std::time::Instant::now();
    // The work stops (CPU idle), then everything up to a later ping's answer holds not one
    // answer to a cancelled grep (each cancel follows its request at once, long before a
    // 3 MB slow-regex scan could end).
    let within = patience(Duration::from_secs(10));
    assert!(
        wait_cpu_idle(client.pid(), within).is_some(),
        "still busy {within:?} after 600 cancelled greps"
    );
    let answered: Vec<Value> = client
        .until_ping()
        .into_iter()
        .filter(|m| {
            m.get("method").is_none()
                && m["id"]
                    .as_i64()
                    .is_some_and(|id| (5_000_000..5_000_600).contains(&id))
        })
        .collect();
    assert!(
        answered.is_empty(),
        "{} cancelled requests answered, e.g. {:?}",
        answered.len(),
        answered.first()
    );
    let result = client.call("list_roots", json!({}));
    assert!(!is_error(&result));
    assert!(started.elapsed() < Duration::from_secs(30));
}
