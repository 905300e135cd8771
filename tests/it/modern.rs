//! MCP 2026-07-28 (stateless) clients on the same binary: discovery, inline requests, roots
//! and permission through `input_required` round trips, and sealed request state.

use serde_json::{Value, json};

use crate::support::*;

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "1"},
    })
}

fn call(client: &mut Client, caps: Value, name: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({"_meta": meta(caps), "name": name, "arguments": arguments});
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    client.request("tools/call", params)
}

#[test]
fn discover_and_inline_calls_without_initialize() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    let discover = client.request("server/discover", json!({"_meta": meta(json!({}))}));
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert!(result["capabilities"]["tools"].is_object());
    let answer = call(&mut client, json!({}), "list_roots", json!({}), json!({}));
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(
        answer["result"]["structuredContent"]["source"],
        "working directory"
    );
    let read = call(
        &mut client,
        json!({}),
        "read_file",
        json!({"path": "src/main.rs"}),
        json!({}),
    );
    assert!(text(&read["result"]).contains("println!"));
    // A request without the required _meta is refused, not left hanging.
    let bare = client.request("tools/list", json!({}));
    assert_eq!(bare["error"]["code"], -32602);
    let list = client.request("tools/list", json!({"_meta": meta(json!({}))}));
    assert!(list["result"]["ttlMs"].is_u64());
}

#[test]
fn roots_come_through_input_required_per_request() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.base);
    let caps = json!({"roots": {}});
    let first = call(
        &mut client,
        caps.clone(),
        "list_roots",
        json!({}),
        json!({}),
    );
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(result["inputRequests"]["roots"]["method"], "roots/list");
    let state = result["requestState"].as_str().unwrap().to_string();
    let retry = call(
        &mut client,
        caps.clone(),
        "list_roots",
        json!({}),
        json!({"inputResponses": {"roots": roots_result(&[&ws.app])}, "requestState": state}),
    );
    let structured = &retry["result"]["structuredContent"];
    assert_eq!(structured["source"], "client");
    assert_eq!(structured["roots"][0]["path"], s(&ws.app));
    // Nothing is cached: the next request asks again.
    let again = call(&mut client, caps, "list_roots", json!({}), json!({}));
    assert_eq!(again["result"]["resultType"], "input_required");
}

#[test]
fn permission_round_trip_with_sealed_state() {
    let ws = workspace();
    let mut client = Client::spawn(&[s(&ws.app)], &ws.base);
    let caps = json!({"elicitation": {"form": {}}});
    let secret = s(&ws.outside.join("secret.txt")).to_string();
    let first = call(
        &mut client,
        caps.clone(),
        "read_file",
        json!({"path": secret}),
        json!({}),
    );
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let question = &result["inputRequests"]["confirm"];
    assert_eq!(question["method"], "elicitation/create");
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains(&secret)
    );
    assert!(!first.to_string().contains("TOP-SECRET"));
    let state = result["requestState"].as_str().unwrap().to_string();
    let accept = json!({"confirm": {"action": "accept", "content": {"allow": true}}});
    // A tampered state is refused.
    let mut tampered = state.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let forged = call(
        &mut client,
        caps.clone(),
        "read_file",
        json!({"path": secret}),
        json!({"inputResponses": accept, "requestState": tampered}),
    );
    assert_eq!(forged["error"]["code"], -32602, "{forged}");
    // The state is bound to the arguments: it cannot approve another file.
    let other = s(&ws.outside.join("other.txt")).to_string();
    let replay = call(
        &mut client,
        caps.clone(),
        "read_file",
        json!({"path": other}),
        json!({"inputResponses": accept, "requestState": state}),
    );
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    // A decline is a refusal.
    let declined = call(
        &mut client,
        caps.clone(),
        "read_file",
        json!({"path": secret}),
        json!({"inputResponses": {"confirm": {"action": "decline"}}, "requestState": state}),
    );
    assert!(is_error(&declined["result"]), "{declined}");
    assert!(text(&declined["result"]).contains("did not allow"));
    assert!(!declined.to_string().contains("TOP-SECRET"));
    // The genuine retry reads the file.
    let read = call(
        &mut client,
        caps.clone(),
        "read_file",
        json!({"path": secret}),
        json!({"inputResponses": accept, "requestState": state}),
    );
    assert!(
        text(&read["result"]).contains("TOP-SECRET-CONTENT"),
        "{read}"
    );
    // Without the elicitation capability: an actionable error, no question.
    let plain = call(
        &mut client,
        json!({}),
        "read_file",
        json!({"path": secret}),
        json!({}),
    );
    assert!(is_error(&plain["result"]));
    assert!(text(&plain["result"]).contains("elicitation"));
}

#[test]
fn legacy_and_modern_clients_on_one_build() {
    let ws = workspace();
    // Legacy session.
    let mut legacy = Client::spawn(&[], &ws.app);
    legacy.handshake(json!({}));
    let result = legacy.call("read_file", json!({"path": "src/main.rs"}));
    assert!(
        result.get("resultType").is_none(),
        "legacy results carry no resultType"
    );
    assert!(text(&result).contains("println!"));
    // Modern session in another process.
    let mut modern = Client::spawn(&[], &ws.app);
    let answer = call(
        &mut modern,
        json!({}),
        "grep",
        json!({"pattern": "println"}),
        json!({}),
    );
    assert_eq!(answer["result"]["resultType"], "complete");
    // A content page's structured content (serialized once, sealed through rmcp) arrives
    // as the object itself, with no trace of the seal.
    let content = call(
        &mut modern,
        json!({}),
        "grep",
        json!({"pattern": "println", "output_mode": "content"}),
        json!({}),
    );
    let structured = &content["result"]["structuredContent"];
    let path = structured["matches"][0]["path"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(path.replace('\\', "/"), "src/main.rs", "{content}");
    assert!(
        structured["matches"][0]["matches"][0][1]
            .as_str()
            .is_some_and(|line| line.contains("println"))
    );
    assert!(!content.to_string().contains("io.rootgrep/structured-json"));
    let ping = modern.request("ping", json!({"_meta": meta(json!({}))}));
    assert_eq!(ping["error"]["code"], -32601);
}

#[test]
fn listen_streams_updates_and_list_changes_until_cancelled() {
    let ws = workspace();
    let file = ws.app.join("src/main.rs");
    let file_uri = uri(&file);
    let mut client = Client::spawn(&[], &ws.app);
    // Wait until the root is watched and indexed. Watched alone is not enough on Windows:
    // under load (Wine, a full parallel test run) a write right after "watching" was
    // sometimes never reported, with or without the symbol index; the index build that
    // follows gives the backend time to have its first read armed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let roots = call(&mut client, json!({}), "list_roots", json!({}), json!({}));
        let root = &roots["result"]["structuredContent"]["roots"][0];
        if root["watch"] == "watching" && root["index"].as_str().unwrap_or("").starts_with("fresh")
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never watched");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let id = client.start(
        "subscriptions/listen",
        json!({"_meta": meta(json!({})), "notifications": {
            "resourcesListChanged": true,
            "resourceSubscriptions": [file_uri, uri(&ws.outside.join("secret.txt"))],
        }}),
    );
    let ack = client
        .wait_for(WAIT, |m| {
            m["method"] == "notifications/subscriptions/acknowledged"
        })
        .expect("acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    // Only the file inside the roots was accepted.
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!([file_uri])
    );
    std::fs::write(&file, "fn main() { changed(); }\n").unwrap();
    let updated = client
        .wait_for(std::time::Duration::from_secs(15), |m| {
            m["method"] == "notifications/resources/updated"
        })
        .expect("update on the stream");
    assert_eq!(updated["params"]["uri"], file_uri);
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    std::fs::write(ws.app.join("created.txt"), "x").unwrap();
    assert!(
        client
            .wait_for(std::time::Duration::from_secs(15), |m| m["method"]
                == "notifications/resources/list_changed")
            .is_some()
    );
    client.notify(
        "notifications/cancelled",
        json!({"requestId": id, "_meta": meta(json!({}))}),
    );
    // A second stream on the same file is the marker: once it has seen the next change,
    // the cancelled stream would have seen it too.
    let marker = client.start(
        "subscriptions/listen",
        json!({"_meta": meta(json!({})), "notifications": {"resourceSubscriptions": [file_uri]}}),
    );
    client
        .wait_for(WAIT, |m| {
            m["method"] == "notifications/subscriptions/acknowledged"
                && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == marker
        })
        .expect("second stream acknowledged");
    let _ = client.collect(std::time::Duration::ZERO, |_| true);
    std::fs::write(&file, "fn main() { again(); }\n").unwrap();
    let mut seen = Vec::new();
    loop {
        let m = client
            .recv(std::time::Duration::from_secs(15))
            .expect("the second stream's update");
        if m["method"] == "notifications/resources/updated"
            && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == marker
        {
            break;
        }
        seen.push(m);
    }
    seen.extend(client.until_ping());
    let late: Vec<&Value> = seen
        .iter()
        .filter(|m| {
            m["method"] == "notifications/resources/updated"
                && m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id
        })
        .collect();
    assert!(
        late.is_empty(),
        "updates after the stream was cancelled: {late:?}"
    );
    assert!(
        !seen.iter().any(|m| is_response_to(m, id)),
        "the cancelled stream was answered: {seen:?}"
    );
}

/// A stateless grep over ~2 GB (hard links of one 1 MB file), long on any machine: it
/// reports progress with its token, and once cancelled its CPU stops and no response ever
/// comes.
#[test]
fn progress_and_cancellation_work_for_stateless_requests() {
    let ws = workspace();
    linked_tree(&ws.app, 2000, &slow_body(12_000));
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    let mut meta = meta(json!({}));
    meta["progressToken"] = json!("m-1");
    let id = client.start(
        "tools/call",
        json!({"_meta": meta, "name": "grep", "arguments": {"pattern": SLOW_PATTERN}}),
    );
    let first = client
        .wait_for(std::time::Duration::from_secs(60), |m| {
            m["method"] == "notifications/progress" || is_response_to(m, id)
        })
        .expect("progress or answer");
    assert!(
        !is_response_to(&first, id),
        "a 2 GB search finished at once: {first}"
    );
    assert_eq!(first["params"]["progressToken"], "m-1");
    client.notify(
        "notifications/cancelled",
        json!({"requestId": id, "_meta": super::modern::meta(json!({}))}),
    );
    assert_cancelled_quietly(&mut client, id);
}

/// No log message before request `id`'s answer, nor up to a later ping's answer.
fn assert_no_logs(client: &mut Client, id: i64) {
    let (mut seen, _) = client.read_until_response(id, WAIT);
    seen.extend(client.until_ping());
    let logs: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert!(logs.is_empty(), "{logs:?}");
}

#[test]
fn per_request_log_level_opts_in_to_log_messages() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    let mut with_level = meta(json!({}));
    with_level["io.modelcontextprotocol/logLevel"] = json!("debug");
    let id = client.start(
        "tools/call",
        json!({"_meta": with_level, "name": "read_file", "arguments": {"path": "src/main.rs"}}),
    );
    // The request's logs are sent before its response.
    let (before, _) = client.read_until_response(id, WAIT);
    let logs: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert!(
        logs.iter().any(|m| m["params"]["data"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("tool call answered")),
        "{logs:?}"
    );
    // Without the opt-in: nothing.
    let id = client.start(
        "tools/call",
        json!({"_meta": meta(json!({})), "name": "read_file", "arguments": {"path": "src/main.rs"}}),
    );
    assert_no_logs(&mut client, id);
    // At warning, debug events are filtered out.
    let mut warning = meta(json!({}));
    warning["io.modelcontextprotocol/logLevel"] = json!("warning");
    let id = client.start(
        "tools/call",
        json!({"_meta": warning, "name": "read_file", "arguments": {"path": "src/main.rs"}}),
    );
    assert_no_logs(&mut client, id);
}

#[test]
fn stateless_resource_errors_use_the_revisions_codes() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    let missing = uri(&ws.app.join("nope.rs"));
    let read = client.request(
        "resources/read",
        json!({"_meta": meta(json!({})), "uri": missing}),
    );
    // 2026-07-28: resource not found is -32602 (-32002 is reserved there).
    assert_eq!(read["error"]["code"], -32602, "{read}");
    let ok = client.request(
        "resources/read",
        json!({"_meta": meta(json!({})), "uri": uri(&ws.app.join("src/main.rs"))}),
    );
    assert_eq!(ok["result"]["resultType"], "complete");
    assert!(ok["result"]["ttlMs"].is_u64());
    assert!(ok["result"]["cacheScope"].is_string());
    // An unsupported revision is refused with the supported list.
    let mut old = meta(json!({}));
    old["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let refused = client.request("tools/list", json!({"_meta": old}));
    assert!(refused["error"]["code"].is_i64(), "{refused}");
}
