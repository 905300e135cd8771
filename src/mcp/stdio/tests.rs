//! Tests of the line framing: the skimming check of each line, request and notification
//! parsing, bounded line reads and the error lines.

use super::*;
use serde_json::json;

fn checked(value: &Value) -> Checked {
    check(value.to_string().as_bytes())
}

fn reply(value: Value) -> Value {
    match checked(&value) {
        Checked::Reply(line) => serde_json::from_slice(&line).unwrap(),
        Checked::Pass(_) => panic!("passed"),
        Checked::Drop(why) => panic!("dropped: {why}"),
    }
}

#[test]
fn trims_lines() {
    assert_eq!(trim_line(b"\xEF\xBB\xBF {\"a\":1}\r\n"), b"{\"a\":1}");
}

#[test]
fn malformed_lines_are_parse_errors() {
    // Nesting deeper than serde_json's recursion limit, at the top or inside params.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{}1{}}}"#,
        r#"{"a":"#.repeat(200),
        "}".repeat(200)
    );
    for line in [
        &b"{\"jsonrpc\":"[..],
        b"{\"a\":1}}",
        b"{\"a\":\"\xff\"}",
        b"nul",
        deep.as_bytes(),
        deep_params.as_bytes(),
    ] {
        let Checked::Reply(answer) = check(line) else {
            panic!("{line:?} not answered");
        };
        let answer: Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        assert_eq!(answer["id"], Value::Null);
    }
    assert_eq!(reply(json!([1]))["error"]["code"], -32600);
    assert_eq!(reply(json!("x"))["error"]["code"], -32600);
}

#[test]
fn a_message_of_too_many_values_is_refused_unparsed_with_its_id() {
    let many = |n: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"read_files","arguments":{{"paths":[{}]}}}}}}"#,
            vec!["0"; n].join(",")
        )
    };
    let Checked::Reply(answer) = check(many(MAX_VALUES_PER_MESSAGE).as_bytes()) else {
        panic!("not refused");
    };
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], 9, "{answer}");
    // Just under the bound (the envelope's values and keys count too), it passes on.
    assert!(matches!(
        check(many(MAX_VALUES_PER_MESSAGE - 20).as_bytes()),
        Checked::Pass(_)
    ));
}

#[test]
fn requests_rmcp_cannot_parse_are_answered_with_their_id() {
    let method = reply(json!({"jsonrpc":"2.0","id":7,"method":42}));
    assert_eq!(method["id"], 7);
    assert_eq!(method["error"]["code"], -32600);
    let big = json!(u64::MAX);
    let version = reply(json!({"jsonrpc":"1.0","id":big,"method":"ping"}));
    assert_eq!(version["id"], big);
    let params = reply(json!({"jsonrpc":"2.0","id":"p","method":"ping","params":[1]}));
    assert_eq!(
        (&params["id"], &params["error"]["code"]),
        (&json!("p"), &json!(-32602))
    );
    // A bad `_meta` passes the envelope and is refused when parsed, with a plain reason.
    let bad_meta = json!({"jsonrpc":"2.0","id":"x","method":"ping","params":{"_meta":[1]}});
    let Checked::Pass(Message::Request { id, text, .. }) = checked(&bad_meta) else {
        panic!("not passed");
    };
    assert_eq!(id, "x");
    assert_eq!(
        parse_request("ping", &text).unwrap_err(),
        "\"_meta\" must be an object"
    );
}

#[test]
fn bad_notifications_are_never_answered() {
    for note in [
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":"nope"}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}),
        json!({"jsonrpc":"2.0","method":"notifications/unknown","params":[1,2]}),
        json!({"jsonrpc":"2.0","method":7}),
    ] {
        assert!(matches!(checked(&note), Checked::Drop(_)), "{note}");
    }
    // One that passes the envelope but not rmcp's type is dropped by the pipeline.
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":5}});
    let Checked::Pass(Message::Notification(text)) = checked(&note) else {
        panic!("not passed");
    };
    assert!(parse_notification(&text).is_err());
}

#[test]
fn large_and_negative_ids_pass_unchanged() {
    for id in [json!(u64::MAX), json!(-1), json!("ü-id")] {
        match checked(&json!({"jsonrpc":"2.0","id":id,"method":"ping"})) {
            Checked::Pass(Message::Request { id: kept, .. }) => assert_eq!(kept, id),
            _ => panic!("{id} not passed"),
        }
        let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId":id,"reason":"r"}});
        match checked(&cancel) {
            Checked::Pass(Message::Cancel { request_id, .. }) => assert_eq!(request_id, id),
            _ => panic!("cancel of {id} not passed"),
        }
    }
}

/// What waits is text (method first, no `jsonrpc`/`id`), which parses into the same
/// typed request as the whole line does, whatever the key order or repeated keys.
#[test]
fn the_waiting_text_parses_like_the_line() {
    let line = br#"{"params":{"name":"grep","arguments":{"pattern":"a\u00e9"}},"id":"q","method":"tools/call","extra":[1,{"x":2}],"jsonrpc":"2.0","method":"tools/call"}"#;
    let Checked::Pass(Message::Request { id, method, text }) = check(line) else {
        panic!("not passed");
    };
    assert_eq!((id, method.as_str()), (json!("q"), "tools/call"));
    assert!(text.starts_with(br#"{"method":"tools/call","params":"#));
    assert!(text.len() <= line.len());
    let ClientRequest::CallToolRequest(call) = parse_request(&method, &text).unwrap() else {
        panic!("not a tools/call");
    };
    assert_eq!(call.params.name, "grep");
    assert_eq!(call.params.arguments.unwrap()["pattern"], "aé");
    // The direct read of `tools/call` is rmcp's union's, `_meta` and all.
    for params in [
        json!({"name":"grep","arguments":{"a":[1,2.5,{"b":null}]},
               "_meta":{"progressToken":7,"x":"y"},"requestState":"s"}),
        json!({"name":"read_file"}),
        json!({"name":5}),
        json!({"arguments":{}}),
        json!({"name":"x","_meta":[]}),
    ] {
        let text = serde_json::to_vec(&json!({"method":"tools/call","params":params})).unwrap();
        let direct = parse_request("tools/call", &text).map(|r| serde_json::to_value(r).unwrap());
        let union = serde_json::from_slice::<ClientRequest>(&text)
            .map(|r| serde_json::to_value(r).unwrap())
            .map_err(|err| err.to_string());
        match (&direct, &union) {
            (Ok(direct), Ok(union)) => assert_eq!(direct, union, "{params}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{params}: {direct:?} vs {union:?}"),
        }
    }
    let response = br#"{"jsonrpc":"2.0","id":3,"result":{"roots":[]}}"#;
    let Checked::Pass(Message::Response(text)) = check(response) else {
        panic!("response not passed");
    };
    assert!(matches!(
        parse_response(&text),
        Some(JsonRpcMessage::Response(_))
    ));
}

/// The reader holds back what does not fit the waiting budget: with nothing taken by
/// the pipeline, the lines sent never hold more bytes than the budget, reading stops
/// there, and it goes on line by line as shares are given back.
#[tokio::test]
async fn waiting_bytes_never_exceed_the_budget() {
    const BUDGET: usize = 10_000;
    let pad = "x".repeat(2_900);
    let mut input = Vec::new();
    for i in 0..20 {
        let line = json!({"jsonrpc":"2.0","id":i,"method":"ping","params":{"pad":pad}});
        input.extend_from_slice(line.to_string().as_bytes());
        input.push(b'\n');
    }
    let line_len = input.len() / 20 - 1;
    let budget = Arc::new(Semaphore::new(BUDGET));
    let (to_pipeline, mut from_reader) = mpsc::channel(64);
    let (replies, _answers) = mpsc::channel(64);
    let reader = tokio::spawn(read_input(
        std::io::Cursor::new(input),
        budget.clone(),
        to_pipeline,
        replies,
    ));
    let mut held = Vec::new();
    let mut ids = Vec::new();
    let wait = std::time::Duration::from_secs(20);
    while let Some(inbound) = tokio::time::timeout(wait, from_reader.recv())
        .await
        .unwrap()
    {
        let Inbound {
            message: Message::Request { id, .. },
            share,
        } = inbound
        else {
            panic!("not a request");
        };
        ids.push(id);
        held.push(share);
        assert!(held.len() * line_len <= BUDGET, "{} lines held", held.len());
        if (held.len() + 1) * line_len > BUDGET {
            // The next line does not fit: the reader cannot have passed it on.
            assert!(from_reader.try_recv().is_err(), "a line beyond the budget");
            assert!(budget.available_permits() < line_len);
            held.remove(0);
        }
    }
    reader.await.unwrap();
    assert_eq!(ids, (0..20).map(|i| json!(i)).collect::<Vec<_>>());
    drop(held);
    assert_eq!(budget.available_permits(), BUDGET);
}
