//! The request pipeline can be neither wedged nor crashed: every id the framing accepts is
//! echoed exactly, requests rmcp could not parse are answered with their id, a panic in any
//! method answers that request only, open listen streams never starve requests, a stateless
//! request does not spoil a later `initialize`, and stdin EOF ends the process promptly
//! whatever is pending.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

const DEADLINE: Duration = Duration::from_secs(10);

/// 2026-07-28 request metadata.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "pipeline-test", "version": "1"},
    })
}

/// The answer carrying `id` (a response, never a notification); it holds exactly one of
/// `result` and `error`.
fn answer_to(client: &mut Client, id: &Value, timeout: Duration) -> Option<Value> {
    let answer = client.wait_for(timeout, |m| {
        m.get("id") == Some(id) && m.get("method").is_none()
    })?;
    assert!(
        answer.get("result").is_some() != answer.get("error").is_some(),
        "not one of result and error: {answer}"
    );
    Some(answer)
}

fn assert_pings(client: &mut Client) {
    let id = json!("alive-check");
    client.send(json!({"jsonrpc":"2.0","id":id,"method":"ping"}));
    let pong = answer_to(client, &id, DEADLINE).expect("ping answered");
    assert_eq!(pong["result"], json!({}), "{pong}");
}

fn started(ws: &Workspace, extra: &[&str]) -> Client {
    let mut args = vec!["--no-watch"];
    args.extend_from_slice(extra);
    let mut client = Client::spawn(&args, &ws.app);
    client.handshake(json!({}));
    client
}

const ODD_IDS: &[&str] = &[
    "9223372036854775808",  // 2^63: beyond rmcp's i64 ids
    "18446744073709551615", // 2^64 - 1
    "-1",
    "9007199254740992", // 2^53
    "\"ü-id\"",
    "\"\"",
    "0",
];

#[test]
fn every_accepted_id_is_echoed_exactly() {
    let ws = workspace();
    let mut client = started(&ws, &[]);
    for raw in ODD_IDS {
        let id: Value = serde_json::from_str(raw).unwrap();
        for (method, params) in [
            ("ping", json!({})),
            (
                "tools/call",
                json!({"name":"read_file","arguments":{"path":"src/main.rs"}}),
            ),
            ("tools/call", json!({"name":"no_such_tool"})),
        ] {
            client.send_raw(&format!(
                r#"{{"jsonrpc":"2.0","id":{raw},"method":"{method}","params":{params}}}"#
            ));
            let answer = answer_to(&mut client, &id, DEADLINE)
                .unwrap_or_else(|| panic!("{method} with id {raw} not answered"));
            assert!(
                answer.get("result").is_some() || answer["error"]["code"].is_i64(),
                "{answer}"
            );
        }
    }
}

/// Each of these was once admitted by the framing and never answered by rmcp, so 256 of
/// them stopped the server from answering anything.
fn unanswerable_by_rmcp(i: usize) -> (Value, String) {
    let big = format!("{}", u64::MAX - i as u64);
    let id: Value = serde_json::from_str(&big).unwrap();
    let line = match i % 6 {
        0 => format!(r#"{{"jsonrpc":"2.0","id":{big},"method":"ping"}}"#),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{big},"method":"ping","params":{{"_meta":[1]}}}}"#),
        2 => format!(
            r#"{{"jsonrpc":"2.0","id":{big},"method":"tools/list","params":{{"_meta":"x"}}}}"#
        ),
        3 => format!(
            r#"{{"jsonrpc":"2.0","id":{big},"method":"tools/call","params":{{"_meta":5,"name":"list_roots"}}}}"#
        ),
        4 => format!(
            r#"{{"jsonrpc":"2.0","id":{big},"method":"resources/list","params":{{"_meta":null}}}}"#
        ),
        _ => format!(r#"{{"jsonrpc":"2.0","id":{big},"method":42}}"#),
    };
    (id, line)
}

#[test]
fn requests_rmcp_cannot_parse_are_answered_with_their_id_and_never_wedge() {
    let ws = workspace();
    let mut client = started(&ws, &[]);
    for i in 0..6 {
        let (id, line) = unanswerable_by_rmcp(i);
        client.send_raw(&line);
        let answer =
            answer_to(&mut client, &id, DEADLINE).unwrap_or_else(|| panic!("{line}: no answer"));
        if i % 6 != 0 && i % 6 != 4 {
            assert!(
                matches!(answer["error"]["code"].as_i64(), Some(-32602 | -32600)),
                "{line}: {answer}"
            );
        }
    }
    // Hundreds in a row, pipelined, then a ping and a tool call.
    let mut batch = String::new();
    let mut ids = Vec::new();
    for i in 0..400 {
        let (id, line) = unanswerable_by_rmcp(i);
        batch.push_str(&line);
        batch.push('\n');
        ids.push(id);
    }
    client.write_unflushed(batch.as_bytes());
    client.flush();
    for id in &ids {
        assert!(answer_to(&mut client, id, DEADLINE).is_some(), "{id}");
    }
    assert_pings(&mut client);
    let roots = client.call("list_roots", json!({}));
    assert!(!is_error(&roots), "{roots}");
}

#[test]
fn notifications_are_never_answered_however_malformed() {
    let ws = workspace();
    let mut client = started(&ws, &[]);
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"nope"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":[1]}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"_meta":7}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/unknown","params":5}"#,
        r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":42}"#,
    ] {
        client.send_raw(line);
    }
    assert_pings(&mut client);
    let replies = client.collect(Duration::from_millis(300), |m| {
        m.get("method").is_none() && m.get("id") != Some(&json!("alive-check"))
    });
    assert!(
        replies.is_empty(),
        "notifications were answered: {replies:?}"
    );
}

/// Every method with params of the wrong type (or wrong field types): each is answered with
/// its id, none is an internal error, and the server keeps serving.
#[test]
fn wrong_params_for_every_method_are_answered_with_their_id() {
    let ws = workspace();
    let mut client = started(&ws, &[]);
    let methods = [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "server/discover",
        "subscriptions/listen",
    ];
    let bad_params = [
        json!([1, 2]),
        json!("text"),
        json!(12),
        json!(true),
        json!({"name": 5, "uri": [], "cursor": {}, "level": 3, "ref": 1, "argument": "x",
               "arguments": "y", "protocolVersion": 7, "notifications": 1}),
        json!({"_meta": []}),
        json!({"_meta": "m"}),
        json!({"_meta": 1}),
    ];
    let mut n = 0;
    for method in methods {
        for params in &bad_params {
            n += 1;
            let id = json!(format!("w{n}"));
            client.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
            let answer = answer_to(&mut client, &id, DEADLINE)
                .unwrap_or_else(|| panic!("{method} {params}: no answer"));
            assert_ne!(
                answer["error"]["code"], -32603,
                "{method} {params}: {answer}"
            );
        }
    }
    assert_pings(&mut client);
}

/// A valid request for `method` (the server runs with `app` as its root).
fn valid_request(method: &str, app: &Path) -> Value {
    let file = uri(&app.join("src/main.rs"));
    match method {
        "tools/call" => json!({"name":"read_file","arguments":{"path":"src/main.rs"}}),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            json!({"uri": file})
        }
        "prompts/get" => json!({"name":"explain_file","arguments":{"path":"src/main.rs"}}),
        "completion/complete" => json!({
            "ref": {"type":"ref/resource","uri":"file:///{+path}"},
            "argument": {"name":"path","value":"sr"},
        }),
        "logging/setLevel" => json!({"level":"info"}),
        _ => json!({}),
    }
}

#[test]
fn a_panic_in_any_method_answers_that_request_and_the_server_lives() {
    let ws = workspace();
    for method in [
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
    ] {
        let mut client = Client::spawn(&["--inject-panic", method], &ws.app);
        client.handshake(json!({}));
        for _ in 0..2 {
            let response = client.request(method, valid_request(method, &ws.app));
            assert_eq!(response["error"]["code"], -32603, "{method}: {response}");
            assert!(
                response["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("internal error"),
                "{response}"
            );
            if method == "ping" {
                client.request("tools/list", json!({}))["result"]["tools"]
                    .as_array()
                    .expect("tools/list after a ping panic");
            } else {
                assert_pings(&mut client);
            }
        }
    }
}

/// Hundreds of panicking requests in a row (more than the admission window): each is
/// answered, and the server still answers afterwards.
#[test]
fn hundreds_of_panics_in_a_row_never_wedge_the_server() {
    let ws = workspace();
    // Without the test harness's RUST_BACKTRACE: the default panic hook would print 300
    // symbolized backtraces before the answers (about 40 ms each under Wine, and seconds
    // for the first one on a loaded machine), which measures symbolization, not the server.
    let mut client = Client::spawn_with_env(
        &["--inject-panic", "prompts/get", "--no-watch"],
        &ws.app,
        &[("RUST_BACKTRACE", "0")],
    );
    client.handshake(json!({}));
    let mut batch = String::new();
    for i in 0..300 {
        let line = json!({"jsonrpc":"2.0","id":format!("boom{i}"),"method":"prompts/get",
            "params":{"name":"explain_file","arguments":{"path":"src/main.rs"}}});
        batch.push_str(&line.to_string());
        batch.push('\n');
    }
    client.write_unflushed(batch.as_bytes());
    client.flush();
    for i in 0..300 {
        let id = json!(format!("boom{i}"));
        let answer = answer_to(&mut client, &id, DEADLINE).unwrap_or_else(|| panic!("{id}"));
        assert_eq!(answer["error"]["code"], -32603, "{answer}");
    }
    assert_pings(&mut client);
}

#[test]
fn a_panic_in_initialize_or_a_notification_leaves_the_server_usable() {
    let ws = workspace();
    // initialize: answered with an internal error; the process keeps answering.
    let mut client = Client::spawn(&["--inject-panic", "initialize"], &ws.app);
    for _ in 0..2 {
        let response = client.request(
            "initialize",
            json!({"protocolVersion":"2025-11-25","capabilities":{},
                   "clientInfo":{"name":"wire-test","version":"1"}}),
        );
        assert_eq!(response["error"]["code"], -32603, "{response}");
        assert_pings(&mut client);
    }
    // A stateless request still works after the failed initialize.
    let discover = client.request("server/discover", json!({"_meta": meta()}));
    assert!(discover.get("result").is_some(), "{discover}");
    // A notification handler that panics: nothing to answer, the session goes on.
    let mut client = Client::spawn(
        &["--inject-panic", "notifications/initialized", "--no-watch"],
        &ws.app,
    );
    client.handshake(json!({}));
    assert_pings(&mut client);
    assert!(!is_error(&client.call("list_roots", json!({}))));
}

#[test]
fn a_panic_in_stateless_methods_answers_that_request() {
    let ws = workspace();
    for (method, params) in [
        ("server/discover", json!({"_meta": meta()})),
        ("tools/list", json!({"_meta": meta()})),
        (
            "subscriptions/listen",
            json!({"_meta": meta(), "notifications": {"resourcesListChanged": true}}),
        ),
    ] {
        let mut client = Client::spawn(&["--inject-panic", method], &ws.app);
        let response = client.request(method, params.clone());
        assert_eq!(response["error"]["code"], -32603, "{method}: {response}");
        let roots = client.request(
            "tools/call",
            json!({"_meta": meta(), "name": "list_roots", "arguments": {}}),
        );
        assert_eq!(roots["result"]["resultType"], "complete", "{roots}");
    }
}

/// Closes stdin and returns how long the process took to exit, asserting exit code 0.
fn exit_time_after_eof(client: &mut Client) -> Duration {
    let start = Instant::now();
    client.close_stdin();
    let code = client.wait_exit(Duration::from_secs(10));
    let took = start.elapsed();
    assert_eq!(code, Some(0), "exit code after EOF");
    took
}

fn slow_tree(dir: &Path) {
    let line = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron\n";
    let body = line.repeat(300);
    for d in 0..10 {
        let sub = dir.join(format!("d{d}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            std::fs::write(sub.join(format!("f{f}.txt")), &body).unwrap();
        }
    }
}

#[test]
fn eof_with_a_long_grep_pending_exits_promptly() {
    let ws = workspace();
    slow_tree(&ws.app);
    let mut client = started(&ws, &[]);
    client.start(
        "tools/call",
        json!({"name":"grep","arguments":{"pattern": r"\b\w{40,}\b|(\w+\s+){12}\d"},
               "_meta":{"progressToken":"p"}}),
    );
    client
        .wait_for(DEADLINE, |m| m["method"] == "notifications/progress")
        .expect("the grep is running");
    let took = exit_time_after_eof(&mut client);
    assert!(took < Duration::from_secs(2), "exit took {took:?}");
}

#[test]
fn eof_with_an_elicitation_pending_exits_promptly() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch", s(&ws.app)], &ws.base);
    client.handshake(json!({"elicitation": {}}));
    client.start(
        "tools/call",
        json!({"name":"read_file","arguments":{"path": s(&ws.outside.join("secret.txt"))}}),
    );
    client
        .server_request("elicitation/create", DEADLINE)
        .expect("the user is asked");
    let took = exit_time_after_eof(&mut client);
    assert!(took < Duration::from_secs(2), "exit took {took:?}");
}

#[test]
fn eof_with_roots_list_pending_exits_promptly() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({"roots": {"listChanged": true}}));
    client
        .server_request("roots/list", DEADLINE)
        .expect("roots/list asked");
    // A call waits for the roots that never come.
    client.start(
        "tools/call",
        json!({"name":"read_file","arguments":{"path":"src/main.rs"}}),
    );
    let took = exit_time_after_eof(&mut client);
    assert!(took < Duration::from_secs(2), "exit took {took:?}");
}

#[test]
fn open_listen_streams_never_starve_requests() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    let streams = 300;
    let mut batch = String::new();
    for i in 0..streams {
        let line = json!({"jsonrpc":"2.0","id":format!("s{i}"),"method":"subscriptions/listen",
            "params":{"_meta": meta(), "notifications": {"resourcesListChanged": true}}});
        batch.push_str(&line.to_string());
        batch.push('\n');
    }
    client.write_unflushed(batch.as_bytes());
    client.flush();
    let call = client.request(
        "tools/call",
        json!({"_meta": meta(), "name": "read_file", "arguments": {"path": "src/main.rs"}}),
    );
    assert!(text(&call["result"]).contains("println!"), "{call}");
    // Streams over the bound are refused at once, with their id and a clear message.
    let refused = client.collect(Duration::from_millis(500), |m| {
        m["error"]["message"]
            .as_str()
            .is_some_and(|t| t.contains("subscriptions/listen"))
    });
    assert!(!refused.is_empty(), "no stream was refused");
    for answer in &refused {
        assert!(answer["id"].as_str().unwrap().starts_with('s'), "{answer}");
    }
    // Cancelling an open stream frees its place for a new one.
    let acked: Vec<Value> = client.collect(Duration::from_millis(100), |m| {
        m["method"] == "notifications/subscriptions/acknowledged"
    });
    assert_eq!(
        acked.len() + refused.len(),
        streams,
        "every stream answered"
    );
    let open = acked[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    assert!(open.as_str().unwrap().starts_with('s'), "{open}");
    client.notify(
        "notifications/cancelled",
        json!({"requestId": open, "_meta": meta()}),
    );
    // Its place is free once its handler has finished (a moment after the cancel).
    let deadline = Instant::now() + DEADLINE;
    for attempt in 0.. {
        assert!(
            Instant::now() < deadline,
            "no new stream after one was cancelled"
        );
        let again = json!(format!("again-{attempt}"));
        client.send(
            json!({"jsonrpc":"2.0","id":again,"method":"subscriptions/listen",
            "params":{"_meta": meta(), "notifications": {"resourcesListChanged": true}}}),
        );
        let reply = client
            .wait_for(DEADLINE, |m| {
                m.get("id") == Some(&again)
                    || m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == again
            })
            .expect("the new stream is answered");
        if reply["method"] == "notifications/subscriptions/acknowledged" {
            break;
        }
        assert!(reply["error"]["message"].is_string(), "{reply}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn initialize_after_stateless_requests_starts_a_working_legacy_session() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch"], &ws.base);
    let stateless = client.request(
        "tools/call",
        json!({"_meta": meta(), "name": "list_roots", "arguments": {}}),
    );
    assert_eq!(stateless["result"]["resultType"], "complete", "{stateless}");
    client.handshake_with_roots(json!({}), &[&ws.app]);
    let read = client.call("read_file", json!({"path": "src/main.rs"}));
    assert!(text(&read).contains("println!"), "{read}");
    let roots = client.call("list_roots", json!({}));
    assert_eq!(
        roots["structuredContent"]["roots"][0]["path"],
        json!(s(&ws.app)),
        "{roots}"
    );
    // Stateless requests are still served beside the session.
    let again = client.request(
        "tools/call",
        json!({"_meta": meta(), "name": "list_roots", "arguments": {}}),
    );
    assert!(again.get("result").is_some(), "{again}");
}

#[test]
fn a_cancelled_request_with_a_large_id_is_cancelled() {
    let ws = workspace();
    slow_tree(&ws.app);
    let mut client = started(&ws, &[]);
    let id = json!(u64::MAX);
    client.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"grep","arguments":{"pattern": r"\b\w{40,}\b|(\w+\s+){12}\d"},
                  "_meta":{"progressToken":"p"}}}));
    client
        .wait_for(DEADLINE, |m| m["method"] == "notifications/progress")
        .expect("the grep is running");
    client.notify("notifications/cancelled", json!({"requestId": id}));
    assert_pings(&mut client);
    let late = client.collect(Duration::from_millis(500), |m| m.get("id") == Some(&id));
    assert!(
        late.is_empty(),
        "a cancelled request was answered: {late:?}"
    );
}

/// With every request slot taken, a client that keeps writing is slowed down (stdin is no
/// longer read once the waiting queue is full), not buffered without limit; everything is
/// answered once the slots free up.
#[test]
fn a_client_writing_faster_than_answers_is_slowed_not_buffered() {
    use std::io::Write;
    let ws = workspace();
    // The roots wait outlasts the measurement below (at most ~1.5 s) even on a loaded
    // machine, so the slots are still full when memory is read.
    let mut client = Client::spawn(&["--no-watch", "--roots-timeout", "5"], &ws.app);
    client.handshake(json!({"roots": {}}));
    // Never answered: every call below waits for the roots until --roots-timeout.
    client
        .server_request("roots/list", DEADLINE)
        .expect("roots/list asked");
    let mut calls = String::new();
    for i in 0..256 {
        let call = json!({"jsonrpc":"2.0","id":format!("c{i}"),"method":"tools/call",
            "params":{"name":"read_file","arguments":{"path":"src/main.rs"}}});
        calls.push_str(&call.to_string());
        calls.push('\n');
    }
    client.write_unflushed(calls.as_bytes());
    client.flush();
    let baseline = rss_kib(client.pid());
    // 20 MB of pings behind them, written from another thread. A waiting message is held
    // as its text, so what may wait (1,024 messages, and 64 between the reader and the
    // pipeline) is about 4.4 MB of them.
    let pings = 5000;
    let mut stdin = client.stdin_clone();
    let writer = std::thread::spawn(move || {
        let pad = "x".repeat(4000);
        for i in 0..pings {
            let ping = json!({"jsonrpc":"2.0","id":format!("p{i}"),"method":"ping",
                "params":{"pad": pad}});
            if writeln!(stdin, "{ping}").is_err() {
                return;
            }
        }
        let _ = stdin.flush();
    });
    // The old framing read all of it at once; now the writer stalls until slots free.
    let deadline = Instant::now() + Duration::from_millis(1500);
    while !writer.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // 20 MB written; what may wait is about 4.4 MB of text, plus the allocator's slack and
    // the threads that start meanwhile (seen: up to 8.8 MiB in all on a loaded machine).
    let grown = rss_kib(client.pid()).saturating_sub(baseline);
    assert!(
        grown < 12 * 1024,
        "the server buffered {grown} KiB of waiting requests"
    );
    for i in 0..256 {
        let id = json!(format!("c{i}"));
        assert!(answer_to(&mut client, &id, DEADLINE).is_some(), "{id}");
    }
    for i in 0..pings {
        let id = json!(format!("p{i}"));
        assert!(answer_to(&mut client, &id, DEADLINE).is_some(), "{id}");
    }
    writer.join().unwrap();
}

/// Peak resident memory of a process in MiB (`VmHWM` in /proc/<pid>/status).
#[cfg(target_os = "linux")]
fn peak_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status");
    kib / 1024
}

/// Large messages waiting behind full slots cost about their size, not the many times more
/// of a parsed JSON tree: three 7 MB `tools/call` lines (arguments of 2.3 million empty
/// arrays, which a `serde_json::Value` keeps in 32 bytes each) queued behind 256 calls
/// waiting for the roots are each answered once, with their ids, and the server's peak
/// stays far below what holding their trees took (about 600 MiB before, about 230 after).
#[test]
fn large_waiting_messages_cost_their_size_and_are_all_answered_once() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch", "--roots-timeout", "3"], &ws.app);
    client.handshake(json!({"roots": {}}));
    // Never answered: every call below waits for the roots until --roots-timeout.
    client
        .server_request("roots/list", DEADLINE)
        .expect("roots/list asked");
    let mut calls = String::new();
    for i in 0..256 {
        let call = json!({"jsonrpc":"2.0","id":format!("c{i}"),"method":"tools/call",
            "params":{"name":"read_file","arguments":{"path":"src/main.rs"}}});
        calls.push_str(&call.to_string());
        calls.push('\n');
    }
    client.write_unflushed(calls.as_bytes());
    client.flush();
    let arrays = "[],".repeat(7_000_000 / 3);
    let big_ids: Vec<Value> = (0..3).map(|i| json!(format!("big{i}"))).collect();
    for id in &big_ids {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"write_file","arguments":{{"path":"out.txt","content":[{arrays}[]]}}}}}}"#
        );
        client.send_raw(&line);
    }
    client.send(json!({"jsonrpc":"2.0","id":"after","method":"ping"}));
    let mut ids: Vec<Value> = (0..256).map(|i| json!(format!("c{i}"))).collect();
    ids.extend(big_ids);
    ids.push(json!("after"));
    let mut seen = std::collections::HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while seen.len() < ids.len() && Instant::now() < deadline {
        let Some(answer) = client.recv(Duration::from_secs(1)) else {
            continue;
        };
        if answer.get("method").is_none()
            && let Some(id) = answer.get("id")
        {
            assert!(
                answer.get("result").is_some() != answer.get("error").is_some(),
                "{answer}"
            );
            *seen.entry(id.clone()).or_insert(0) += 1;
        }
    }
    for id in &ids {
        assert_eq!(
            seen.get(id),
            Some(&1),
            "{id} answered {:?} times",
            seen.get(id)
        );
    }
    assert_eq!(seen.len(), ids.len(), "answers to unknown ids: {seen:?}");
    #[cfg(target_os = "linux")]
    {
        let peak = peak_mib(client.pid());
        assert!(peak < 400, "peak resident memory {peak} MiB");
    }
    // Nothing more comes for them.
    assert_pings(&mut client);
    let late = client.collect(Duration::from_millis(300), |m| {
        m.get("method").is_none() && ids.contains(&m["id"])
    });
    assert!(late.is_empty(), "answered again: {late:?}");
}

/// One 14 MB line of 7 million small numbers (before: 1.5 GB peak while rmcp's tree of
/// `Value`s was built) is refused before any tree is built, answered with its id, and the
/// server's peak memory stays near the line's size; the next request is answered as usual.
#[cfg(target_os = "linux")]
#[test]
fn a_line_of_millions_of_values_is_refused_without_the_blow_up() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({}));
    let numbers = vec!["1"; 7_000_000].join(",");
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{{"name":"read_files","arguments":{{"paths":[{numbers}]}}}}}}"#
    );
    assert!(line.len() > 13_000_000);
    client.send_raw(&line);
    let answer = client
        .response(77, Duration::from_secs(60))
        .expect("the huge line is answered");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("JSON values"),
        "{answer}"
    );
    let pong = client.request("ping", json!({}));
    assert!(pong.get("result").is_some(), "{pong}");
    let peak = peak_mib(client.pid());
    eprintln!("peak {peak} MiB");
    assert!(peak < 200, "peak {peak} MiB for a 14 MB line");
}
