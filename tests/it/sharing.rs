//! The search pool shared between requests: while long searches run, small requests (a
//! glob the index serves, an outline of one small file, a grep of one small file) answer
//! without waiting for them, and the long searches still finish (or stop when cancelled).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A grep over ~2 GB of text that the slow pattern must scan to the end (hard links of one
/// 1 MB file): no machine finishes it within the test, so it is surely still running while
/// the small requests are answered, and it is cancelled at the end.
fn start_long_grep(client: &mut Client, token: &str) -> i64 {
    client.start(
        "tools/call",
        json!({"name": "grep",
               "arguments": {"pattern": SLOW_PATTERN, "output_mode": "count"},
               "_meta": {"progressToken": token}}),
    )
}

#[test]
fn small_requests_answer_while_long_searches_hold_the_pool() {
    let ws = workspace();
    linked_tree(&ws.app, 2000, &slow_body(12_000));
    // No content index: its build would read the 2 GB too (the test watches the CPU).
    let mut client = Client::spawn(&["--no-content-index"], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    let first = start_long_grep(&mut client, "long-1");
    // The first search is surely running (it reported progress) before the others come.
    let running = client
        .wait_for(Duration::from_secs(30), |m| {
            m["method"] == "notifications/progress" || is_response_to(m, first)
        })
        .expect("progress or response");
    assert!(
        !is_response_to(&running, first),
        "a 2 GB search finished at once: {running}"
    );
    // A second long search: on a 2-core machine the two now hold every general slot.
    let second = start_long_grep(&mut client, "long-2");
    let sent = Instant::now();
    let glob = client.start(
        "tools/call",
        json!({"name": "glob", "arguments": {"pattern": "src/**/*.rs"}}),
    );
    let outline = client.start(
        "tools/call",
        json!({"name": "outline", "arguments": {"path": "src/main.rs"}}),
    );
    let small = client.start(
        "tools/call",
        json!({"name": "grep",
               "arguments": {"pattern": "println", "path": "src/main.rs", "output_mode": "count"}}),
    );
    // Each small request answers while both long ones are still running: a response to a
    // long search before them would mean they waited for it. The deadline only bounds a
    // hang (before sharing they waited for the long searches, i.e. for ever here).
    let mut answers: Vec<(i64, Duration, Value)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while answers.len() < 3 {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(message) = client.recv(left) else {
            panic!(
                "small requests still unanswered after 20 s while long searches ran: \
                 answered {:?}",
                answers
                    .iter()
                    .map(|(id, at, _)| (*id, *at))
                    .collect::<Vec<_>>()
            );
        };
        assert!(
            !is_response_to(&message, first) && !is_response_to(&message, second),
            "a long search answered before the small requests: {message}"
        );
        for id in [glob, outline, small] {
            if is_response_to(&message, id) {
                answers.push((id, sent.elapsed(), message["result"].clone()));
            }
        }
    }
    for (id, at, _) in &answers {
        eprintln!("request {id} answered {at:?} after it was sent");
    }
    let result = |id: i64| &answers.iter().find(|(i, _, _)| *i == id).unwrap().2;
    assert_eq!(
        listed_files(result(glob)),
        vec![s(&ws.app.join("src").join("main.rs")).to_string()]
    );
    assert!(
        text(result(outline)).contains("main"),
        "{}",
        result(outline)
    );
    assert_eq!(
        result(small)["structuredContent"]["counts"][0][1],
        1,
        "{}",
        result(small)
    );
    // Both long searches were still running; cancelled, they stop and never answer.
    for id in [first, second] {
        client.notify(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "test"}),
        );
    }
    assert_cancelled_quietly(&mut client, first);
    assert_cancelled_quietly(&mut client, second);
}
