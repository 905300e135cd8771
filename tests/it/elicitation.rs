//! Out-of-root access through elicitation: the user is asked with a flat form (`allow`,
//! `remember`), and every answer — accept, refuse, decline, cancel, silence, and the parent
//! call being cancelled — does exactly what the contract says.

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
    call_not_asked(client, "read_file", json!({"path": s(path)}))
}

/// Calls a tool and checks that the user was not asked. Returns the tool result.
fn call_not_asked(client: &mut Client, tool: &str, arguments: Value) -> Value {
    call_without_asking(client, tool, arguments, "elicitation/create")
}

/// A client with elicitation, root `app`, confined to `app` and `outside/inner` (which
/// holds `a.txt` and a link to `outside/secret.txt`).
fn confined(ws: &Workspace) -> Client {
    let inner = ws.outside.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(inner.join("a.txt"), "INNER-CONTENT\n").unwrap();
    std::os::unix::fs::symlink(ws.outside.join("secret.txt"), inner.join("link.txt")).unwrap();
    client(ws, &["--confine", s(&ws.app), "--confine", s(&inner)])
}

/// Outside `--confine`, an elicitation-capable client's user is never asked: the call is
/// refused at once, reads and writes alike.
#[test]
fn confine_refuses_without_asking() {
    let ws = workspace();
    let mut client = confined(&ws);
    let secret = ws.outside.join("secret.txt");
    for (tool, arguments) in [
        ("read_file", json!({"path": s(&secret)})),
        ("file_info", json!({"path": s(&secret)})),
        ("grep", json!({"pattern": "SECRET", "path": s(&ws.outside)})),
        (
            "write_file",
            json!({"path": s(&ws.outside.join("new.txt")), "content": "x"}),
        ),
    ] {
        let result = call_not_asked(&mut client, tool, arguments);
        assert!(is_error(&result), "{tool}: {result}");
        assert!(!text(&result).contains("TOP-SECRET"), "{tool}: {result}");
        assert!(
            text(&result).contains("confine"),
            "{tool}: {}",
            text(&result)
        );
    }
    assert!(!ws.outside.join("new.txt").exists());
}

/// A remembered grant inside `--confine` does not reach past it: the granted directory's
/// parent, a `..` path through it, and a link in it pointing out are refused without
/// asking.
#[test]
fn a_grant_cannot_widen_confine() {
    let ws = workspace();
    let mut client = confined(&ws);
    let inner = ws.outside.join("inner");
    // Inside confine, outside the roots: the user is asked, and grants the directory.
    let (id, question) = ask(&mut client, &inner.join("a.txt"));
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true,"remember":true}}),
    );
    assert!(text(&finish(&mut client, id)).contains("INNER-CONTENT"));
    let roots = client.call("list_roots", json!({}));
    assert_eq!(roots["structuredContent"]["grants"][0]["path"], s(&inner));
    for path in [
        ws.outside.join("secret.txt"),
        inner.join("../secret.txt"),
        inner.join("link.txt"),
    ] {
        let result = not_asked(&mut client, &path);
        assert!(is_error(&result), "{}: {result}", path.display());
        assert!(!text(&result).contains("TOP-SECRET"), "{result}");
    }
    // The grant itself still works, without asking.
    assert!(text(&not_asked(&mut client, &inner.join("a.txt"))).contains("INNER-CONTENT"));
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
    // A late answer to the cancelled question is harmless, and no response to the call
    // comes (read up to a later ping's answer).
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true}}),
    );
    let seen = client.until_ping();
    assert!(
        !seen.iter().any(|m| is_response_to(m, id)),
        "a response after cancel: {seen:?}"
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
