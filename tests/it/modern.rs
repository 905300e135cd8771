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
    let ping = modern.request("ping", json!({"_meta": meta(json!({}))}));
    assert_eq!(ping["error"]["code"], -32601);
}
