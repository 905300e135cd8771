//! Out-of-root access through elicitation: the user is asked with a flat form (`allow`,
//! `remember`), and every answer — accept, refuse, decline, cancel, silence, and the parent
//! call being cancelled — does exactly what the contract says.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

fn client(ws: &Workspace, extra: &[&str]) -> Client {
    let mut args = extra.to_vec();
    args.push(s(&ws.app));
    let mut client = Client::spawn(&args, &ws.base);
    client.handshake(json!({"elicitation": {}}));
    client
}

/// Starts a read of `path`, returns (call id, the elicitation request).
fn ask(client: &mut Client, path: &std::path::Path) -> (i64, Value) {
    let id = client.start(
        "tools/call",
        json!({"name":"read_file","arguments":{"path": s(path)}}),
    );
    let question = client
        .server_request("elicitation/create", WAIT)
        .expect("the user is asked");
    (id, question)
}

fn finish(client: &mut Client, id: i64) -> Value {
    client.response(id, WAIT).expect("tool answer")["result"].clone()
}

fn not_asked(client: &mut Client, path: &std::path::Path) -> Value {
    let id = client.start(
        "tools/call",
        json!({"name":"read_file","arguments":{"path": s(path)}}),
    );
    let result = finish(client, id);
    let asked = client.collect(Duration::from_millis(200), |m| {
        m["method"] == "elicitation/create"
    });
    assert!(asked.is_empty(), "the user was asked again");
    result
}

#[test]
fn the_question_is_a_flat_form_naming_path_operation_and_roots() {
    let ws = workspace();
    let mut client = client(&ws, &[]);
    let secret = ws.outside.join("secret.txt");
    let (id, question) = ask(&mut client, &secret);
    let params = &question["params"];
    let message = params["message"].as_str().unwrap();
    assert!(message.contains(s(&secret)));
    assert!(message.contains("read"));
    assert!(message.contains(s(&ws.app)));
    let schema = &params["requestedSchema"];
    assert_eq!(schema["properties"]["allow"]["type"], "boolean");
    assert_eq!(schema["properties"]["remember"]["type"], "boolean");
    assert_eq!(schema["properties"]["remember"]["default"], false);
    assert_eq!(schema["required"], json!(["allow"]));
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true}}),
    );
    let result = finish(&mut client, id);
    assert!(text(&result).contains("TOP-SECRET-CONTENT"));
    // Without `remember`, the next read asks again.
    let (id, question) = ask(&mut client, &secret);
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true}}),
    );
    assert!(!is_error(&finish(&mut client, id)));
}

#[test]
fn remember_grants_the_directory_for_reads_only() {
    let ws = workspace();
    let mut client = client(&ws, &[]);
    let (id, question) = ask(&mut client, &ws.outside.join("secret.txt"));
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true,"remember":true}}),
    );
    assert!(text(&finish(&mut client, id)).contains("TOP-SECRET"));
    let other = not_asked(&mut client, &ws.outside.join("other.txt"));
    assert!(text(&other).contains("OTHER-CONTENT"));
    let roots = client.call("list_roots", json!({}));
    assert_eq!(
        roots["structuredContent"]["grants"][0]["path"],
        s(&ws.outside)
    );
    assert_eq!(roots["structuredContent"]["grants"][0]["access"], "read");
}

#[test]
fn refusal_and_decline_are_remembered_cancel_is_not() {
    let ws = workspace();
    let mut client = client(&ws, &[]);
    let secret = ws.outside.join("secret.txt");
    let other = ws.outside.join("other.txt");
    // accept with allow:false → refused, not asked again.
    let (id, question) = ask(&mut client, &secret);
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":false}}),
    );
    let result = finish(&mut client, id);
    assert!(is_error(&result));
    assert!(!text(&result).contains("TOP-SECRET"));
    let again = not_asked(&mut client, &secret);
    assert!(is_error(&again));
    assert!(text(&again).contains("refused"));
    // decline → refused, not asked again.
    let (id, question) = ask(&mut client, &other);
    client.respond(&question["id"], json!({"action":"decline"}));
    assert!(is_error(&finish(&mut client, id)));
    assert!(is_error(&not_asked(&mut client, &other)));
    let roots = client.call("list_roots", json!({}));
    assert_eq!(
        roots["structuredContent"]["refusals"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // cancel → refused this time, asked again next time.
    let third = ws.outside.join("third.txt");
    std::fs::write(&third, "THIRD\n").unwrap();
    let (id, question) = ask(&mut client, &third);
    client.respond(&question["id"], json!({"action":"cancel"}));
    let result = finish(&mut client, id);
    assert!(is_error(&result));
    assert!(text(&result).contains("ask again"));
    let (id, question) = ask(&mut client, &third);
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true}}),
    );
    assert!(text(&finish(&mut client, id)).contains("THIRD"));
}

#[test]
fn an_unanswered_question_times_out_and_is_cancelled_on_the_wire() {
    let ws = workspace();
    let mut client = client(&ws, &["--elicitation-timeout", "1"]);
    let (id, question) = ask(&mut client, &ws.outside.join("secret.txt"));
    let result = finish(&mut client, id);
    assert!(is_error(&result));
    assert!(text(&result).contains("no answer"));
    let cancelled = client
        .wait_for(WAIT, |m| m["method"] == "notifications/cancelled")
        .expect("the question is cancelled");
    assert_eq!(cancelled["params"]["requestId"], question["id"]);
}

#[test]
fn cancelling_the_call_cancels_the_question_and_sends_no_response() {
    let ws = workspace();
    let mut client = client(&ws, &[]);
    let (id, question) = ask(&mut client, &ws.outside.join("secret.txt"));
    client.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    );
    let cancelled = client
        .wait_for(WAIT, |m| m["method"] == "notifications/cancelled")
        .expect("the question is cancelled");
    assert_eq!(cancelled["params"]["requestId"], question["id"]);
    assert!(
        client.response(id, Duration::from_millis(500)).is_none(),
        "no response after cancel"
    );
    // A late answer to the cancelled question is harmless.
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true}}),
    );
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn clients_older_than_elicitation_get_an_actionable_error() {
    let ws = workspace();
    let mut client = Client::spawn(&[s(&ws.app)], &ws.base);
    let response = client.request(
        "initialize",
        json!({"protocolVersion":"2025-03-26","capabilities":{"elicitation":{}},
               "clientInfo":{"name":"old","version":"1"}}),
    );
    assert_eq!(response["result"]["protocolVersion"], "2025-03-26");
    client.notify("notifications/initialized", json!({}));
    let result = client.call(
        "read_file",
        json!({"path": s(&ws.outside.join("secret.txt"))}),
    );
    assert!(is_error(&result));
    assert!(text(&result).contains("cannot ask the user"));
}
