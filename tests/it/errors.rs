//! Errors and logs a program can read (issue #20, items 4 and 5; PRODUCT §10 and §8):
//! refusals carry a reason code in a field — `structuredContent.error` of an `isError`
//! tool result, `data` of a JSON-RPC error — naming only what the client sent and the
//! roots it may use; log notifications carry objects; a panic's message stays on stderr.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// The `structuredContent.error` of an error result (asserting it is one).
fn error_object(result: &Value) -> &Value {
    assert!(is_error(result), "not an error: {result}");
    let error = &result["structuredContent"]["error"];
    assert!(error.is_object(), "no structuredContent.error: {result}");
    error
}

#[test]
fn tool_errors_say_why_in_structured_content() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({}));
    let roots = json!([s(&ws.app)]);

    // Outside the roots, named through `..`: the reason, the path as sent, the roots; never
    // where it leads.
    let sent = format!("{}/../outside/secret.txt", s(&ws.app));
    let result = client.call("read_file", json!({"path": sent}));
    let error = error_object(&result);
    assert_eq!(error["reason"], "outside_roots", "{result}");
    assert_eq!(error["path"], sent.as_str(), "{result}");
    assert_eq!(error["allowedRoots"], roots, "{result}");
    let canonical = format!("{}", ws.outside.join("secret.txt").display());
    assert!(!result.to_string().contains(&canonical), "{result}");
    // A missing file outside the roots gets the same object, up to the path.
    let missing_outside = format!("{}/nope/../x", s(&ws.outside));
    let result = client.call("file_info", json!({"path": missing_outside}));
    assert_eq!(error_object(&result)["reason"], "outside_roots", "{result}");

    // Inside the roots: what is wrong with the file.
    let result = client.call("read_file", json!({"path": "src/nope.rs"}));
    let error = error_object(&result);
    assert_eq!(error["reason"], "not_found", "{result}");
    assert_eq!(error["path"], "src/nope.rs", "{result}");
    assert!(error.get("allowedRoots").is_none(), "{result}");
    let result = client.call("read_file", json!({"path": "src"}));
    assert_eq!(
        error_object(&result)["reason"],
        "is_a_directory",
        "{result}"
    );
    let result = client.call("list_directory", json!({"path": "src/main.rs/"}));
    assert_eq!(
        error_object(&result)["reason"],
        "not_a_directory",
        "{result}"
    );
    let result = client.call(
        "edit_file",
        json!({"path": "src/main.rs", "old_string": "absent", "new_string": "x"}),
    );
    let error = error_object(&result);
    assert_eq!(error["reason"], "no_match", "{result}");
    assert_eq!(error["path"], "src/main.rs", "{result}");

    // Arguments, on a tool with an output schema too.
    let result = client.call("grep", json!({"pattern": "(unclosed"}));
    assert_eq!(
        error_object(&result)["reason"],
        "invalid_argument",
        "{result}"
    );
    let result = client.call("read_file", json!({"path": "src/main.rs", "limit": "many"}));
    assert_eq!(
        error_object(&result)["reason"],
        "invalid_argument",
        "{result}"
    );

    // Every output schema accepts an error's structured content: clients validate it even
    // when isError is true (the TypeScript SDK does).
    let tools = client.request("tools/list", json!({}));
    for tool in tools["result"]["tools"].as_array().unwrap() {
        let Some(schema) = tool.get("outputSchema") else {
            continue;
        };
        assert_eq!(schema["properties"]["error"]["required"], json!(["reason"]));
        assert!(
            schema.get("required").is_none(),
            "{}: {schema}",
            tool["name"]
        );
        // Fields always present are required only without an error; a schema without any
        // (every field may be left out) accepts the error object as it is.
        if let Some(any) = schema["anyOf"].as_array() {
            assert!(any.contains(&json!({"required": ["error"]})), "{schema}");
        }
    }
}

#[test]
fn read_only_and_confine_refusals_have_their_own_reasons() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch", "--read-only"], &ws.app);
    client.handshake(json!({}));
    let result = client.call("write_file", json!({"path": "x.txt", "content": "x"}));
    assert_eq!(error_object(&result)["reason"], "read_only", "{result}");

    let mut client = Client::spawn(&["--no-watch", "--confine", s(&ws.app)], &ws.app);
    client.handshake(json!({"elicitation": {}}));
    let sent = s(&ws.outside).to_string();
    let result = client.call("list_directory", json!({"path": sent}));
    let error = error_object(&result);
    assert_eq!(error["reason"], "outside_confine", "{result}");
    assert_eq!(error["path"], sent.as_str(), "{result}");
    assert_eq!(error["allowedRoots"], json!([s(&ws.app)]), "{result}");
}

#[test]
fn a_refusal_the_user_gives_is_refused_by_user() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({"elicitation": {}}));
    let path = ws.outside.join("secret.txt");
    let id = client.start(
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": s(&path)}}),
    );
    let question = client
        .server_request("elicitation/create", WAIT)
        .expect("the user is asked");
    client.respond(&question["id"], json!({"action": "decline"}));
    let response = client.response(id, WAIT).expect("answered");
    let error = error_object(&response["result"]);
    assert_eq!(error["reason"], "refused_by_user", "{response}");
    assert_eq!(error["path"], s(&path), "{response}");
}

#[test]
fn an_error_object_counts_against_the_output_budget() {
    let ws = workspace();
    let budget = 2048;
    let mut client = Client::spawn(
        &["--no-watch", "--max-output-bytes", &budget.to_string()],
        &ws.app,
    );
    client.handshake(json!({}));
    // A path of 3 KB outside the roots: the object repeats it exactly, so the guard cuts.
    let sent = format!("{}/{}", s(&ws.outside), "d/".repeat(1500));
    let result = client.call("read_file", json!({"path": sent}));
    assert_eq!(error_object(&result)["reason"], "outside_roots", "{result}");
    let size = serde_json::to_string(&result).unwrap().len();
    assert!(size <= budget + 64, "{size} bytes: {result}");
}

#[test]
fn json_rpc_errors_carry_reason_uri_and_roots() {
    let ws = workspace();
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({}));
    let roots = json!([s(&ws.app)]);
    // Outside the roots (named through `..`): the URI as sent, the roots.
    let sent = format!("{}/../outside/secret.txt", uri(&ws.app));
    let read = client.request("resources/read", json!({"uri": sent}));
    let data = &read["error"]["data"];
    assert_eq!(read["error"]["code"], -32602, "{read}");
    assert_eq!(data["reason"], "outside_roots", "{read}");
    assert_eq!(data["uri"], sent.as_str(), "{read}");
    assert_eq!(data["allowedRoots"], roots, "{read}");
    assert!(!read.to_string().contains("TOP-SECRET"), "{read}");
    // A missing file inside: -32002.
    let missing = uri(&ws.app.join("nope.rs"));
    let read = client.request("resources/read", json!({"uri": missing}));
    assert_eq!(read["error"]["code"], -32002, "{read}");
    assert_eq!(read["error"]["data"]["reason"], "not_found", "{read}");
    assert_eq!(read["error"]["data"]["uri"], missing.as_str(), "{read}");
    // Not a file URI.
    let read = client.request("resources/read", json!({"uri": "https://example.com/x"}));
    assert_eq!(read["error"]["code"], -32602, "{read}");
    assert_eq!(
        read["error"]["data"]["reason"], "invalid_argument",
        "{read}"
    );
    // A subscription outside the roots.
    let outside = uri(&ws.outside.join("secret.txt"));
    let sub = client.request("resources/subscribe", json!({"uri": outside}));
    assert_eq!(sub["error"]["data"]["reason"], "outside_roots", "{sub}");
    assert_eq!(sub["error"]["data"]["allowedRoots"], roots, "{sub}");
    // An unknown tool.
    let call = client.request("tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(call["error"]["data"]["reason"], "unknown_tool", "{call}");
}

/// A panic's message (which can quote client input) goes to stderr only: the client hears
/// "internal error in METHOD", with `reason: internal`, in the answer and in no log.
#[test]
fn a_panic_message_reaches_neither_the_answer_nor_the_log() {
    let ws = workspace();
    for method in ["tools/call", "resources/read", "prompts/get"] {
        let mut client = Client::spawn_with_env(
            &["--inject-panic", method, "--no-watch"],
            &ws.app,
            &[("RUST_BACKTRACE", "0")],
        );
        client.handshake(json!({}));
        let ok = client.request("logging/setLevel", json!({"level": "debug"}));
        assert_eq!(ok["result"], json!({}), "{ok}");
        let params = match method {
            "tools/call" => json!({"name": "read_file", "arguments": {"path": "src/main.rs"}}),
            "resources/read" => json!({"uri": uri(&ws.app.join("src/main.rs"))}),
            _ => json!({"name": "explain_file", "arguments": {"path": "src/main.rs"}}),
        };
        let id = client.start(method, params);
        let (seen, response) = client.read_until_response(id, WAIT);
        let error = &response["error"];
        assert_eq!(error["code"], -32603, "{response}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with("internal error in "), "{response}");
        assert!(!message.contains("panic"), "{method}: {response}");
        assert_eq!(error["data"]["reason"], "internal", "{response}");
        let mut logs: Vec<Value> = seen;
        logs.extend(client.until_ping());
        for log in logs
            .iter()
            .filter(|m| m["method"] == "notifications/message")
        {
            assert!(!log.to_string().contains("injected panic"), "{log}");
        }
    }
}

/// Log notifications carry objects a host can render: `event`, the event's fields
/// (numbers as numbers) and the sentence as `message`.
#[test]
fn log_notifications_are_objects_with_an_event_and_its_fields() {
    let ws = workspace();
    let other = ws.base.join("other");
    std::fs::create_dir_all(other.join("src")).unwrap();
    std::fs::write(other.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    let ok = client.request("logging/setLevel", json!({"level": "info"}));
    assert_eq!(ok["result"], json!({}), "{ok}");
    // New roots: "roots_changed", then the new root's index is built ("index_built").
    client.notify("notifications/roots/list_changed", json!({}));
    let request = client
        .server_request("roots/list", WAIT)
        .expect("roots/list");
    client.respond(&request["id"], roots_result(&[&other]));
    let is_log = |m: &Value, event: &str| {
        m["method"] == "notifications/message" && m["params"]["data"]["event"] == event
    };
    let roots = client
        .wait_for(WAIT, |m| is_log(m, "roots_changed"))
        .expect("a roots_changed log");
    let data = &roots["params"]["data"];
    assert_eq!(data["count"], 1, "{roots}");
    assert!(data["message"].is_string(), "{roots}");
    let built = client
        .wait_for(Duration::from_secs(30), |m| {
            is_log(m, "index_built") && m["params"]["data"]["root"] == s(&other)
        })
        .expect("an index_built log for the new root");
    let data = &built["params"]["data"];
    assert_eq!(data["files"], 1, "{built}");
    assert!(data["ms"].is_u64(), "{built}");
    assert_eq!(data["message"], "index built", "{built}");
}
