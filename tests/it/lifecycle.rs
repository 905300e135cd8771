//! Handshake, version negotiation, capabilities, the discovery probe, bad input and exit.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn negotiates_every_legacy_version_and_never_answers_initialize_with_2026() {
    let ws = workspace();
    for (asked, expected) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let mut client = Client::spawn(&[], &ws.app);
        let response = client.request(
            "initialize",
            json!({"protocolVersion":asked,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}),
        );
        let result = &response["result"];
        assert_eq!(result["protocolVersion"], expected, "asked {asked}");
        assert!(result["capabilities"]["tools"].is_object());
        assert!(result["capabilities"]["logging"].is_object());
        assert!(result["capabilities"]["resources"].is_object());
        assert!(result["capabilities"]["prompts"].is_object());
        assert!(result["capabilities"]["completions"].is_object());
        let instructions = result["instructions"].as_str().unwrap();
        assert!(instructions.contains("roots"));
        assert_eq!(result["serverInfo"]["name"], "rootgrep");
    }
}

#[test]
fn discover_probe_gets_a_prompt_answer_and_initialize_still_works() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    let started = std::time::Instant::now();
    let id = client.start(
        "server/discover",
        json!({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities":{}}}),
    );
    let answer = client
        .response(id, Duration::from_secs(2))
        .expect("discover answered");
    assert!(started.elapsed() < Duration::from_secs(2));
    // The answer lists every version, the stateless one included.
    let versions = answer["result"]["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")));
    assert!(versions.contains(&json!("2025-11-25")));
    let result = client.handshake(json!({}));
    assert_eq!(result["protocolVersion"], "2025-11-25");
    let tools = client.request("tools/list", json!({}));
    assert!(tools["result"]["tools"].as_array().unwrap().len() >= 3);
}

#[test]
fn malformed_lines_get_parse_errors_and_the_server_survives() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    // A notification before initialize must not kill the session.
    client.notify("notifications/initialized", json!({}));
    client.send_raw("this is not json");
    let error = client.recv(WAIT).expect("parse error reply");
    assert_eq!(error["error"]["code"], -32700);
    assert_eq!(error["id"], Value::Null);
    client.send_raw("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\""); // truncated
    let error = client.recv(WAIT).expect("parse error reply");
    assert_eq!(error["error"]["code"], -32700);
    client.handshake(json!({}));
    client.send_raw("{broken");
    let error = client.wait_for(WAIT, |m| m.get("error").is_some()).unwrap();
    assert_eq!(error["error"]["code"], -32700);
    let pong = client.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    // Unknown method and unknown tool are JSON-RPC errors; bad arguments are tool errors.
    let unknown = client.request("no/such/method", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let unknown_tool = client.request("tools/call", json!({"name":"nope","arguments":{}}));
    assert_eq!(unknown_tool["error"]["code"], -32602);
    assert!(
        unknown_tool["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read_file")
    );
    let bad = client.call("read_file", json!({"path": 42}));
    assert!(is_error(&bad));
    assert!(text(&bad).contains("invalid arguments"), "{}", text(&bad));
    let typo = client.call("read_file", json!({"path": "src/main.rs", "limt": 3}));
    assert!(is_error(&typo));
    assert!(text(&typo).contains("limt"), "{}", text(&typo));
}

#[test]
fn stdin_eof_exits_zero() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    client.close_stdin();
    assert_eq!(client.wait_exit(Duration::from_secs(5)), Some(0));
    // Even before any handshake.
    let mut client = Client::spawn(&[], &ws.app);
    client.close_stdin();
    assert_eq!(client.wait_exit(Duration::from_secs(5)), Some(0));
}

#[test]
fn set_level_is_accepted_and_invalid_levels_are_refused() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let ok = client.request("logging/setLevel", json!({"level":"debug"}));
    assert_eq!(ok["result"], json!({}));
    let bad = client.request("logging/setLevel", json!({"level":"loud"}));
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn tools_declare_schemas_and_honest_annotations() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let tools = client.request("tools/list", json!({}));
    for tool in tools["result"]["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        assert!(tool["description"].as_str().unwrap().len() > 40, "{name}");
        assert_eq!(tool["annotations"]["openWorldHint"], false, "{name}");
        assert!(tool["annotations"]["readOnlyHint"].is_boolean(), "{name}");
        for (param, schema) in tool["inputSchema"]["properties"]
            .as_object()
            .into_iter()
            .flatten()
        {
            assert!(
                schema.get("description").is_some(),
                "{name}.{param} has no description"
            );
        }
    }
}

/// Issue #36, item 6: a lone UTF-16 surrogate escape is valid JSON (JavaScript's
/// `JSON.stringify` writes one for a string cut in the middle of an emoji); the request is
/// answered by its id, the surrogate read as U+FFFD, and a valid pair still decodes.
#[test]
fn a_lone_surrogate_escape_keeps_the_request_and_its_id() {
    let ws = workspace();
    std::fs::write(
        ws.app.join("notes.md"),
        "zebrafish swim here 😀\nnothing else\n",
    )
    .unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let call = |id: u32, name: &str, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
        )
    };
    // A high surrogate at the end of a string, then a low one alone mid-string.
    for (id, query) in [(7, r"zebrafish \ud83d"), (8, r"zebrafish \ude00 swim")] {
        client.send_raw(&call(id, "search", &format!(r#"{{"query":"{query}"}}"#)));
        let response = client
            .response(id.into(), WAIT)
            .expect("answered by its id");
        assert!(response.get("error").is_none(), "{response}");
        let result = &response["result"];
        assert!(!is_error(result), "{result}");
        assert!(text(result).contains("notes.md"), "{}", text(result));
    }
    // The replacement character is what the server read: a literal pattern of it finds
    // nothing here, and says so rather than failing.
    client.send_raw(&call(
        9,
        "grep",
        r#"{"pattern":"\udbff","fixed_strings":true}"#,
    ));
    let response = client.response(9, WAIT).expect("answered by its id");
    assert_eq!(
        response["result"]["structuredContent"]["total"], 0,
        "{response}"
    );
    // A valid pair is the emoji it encodes.
    client.send_raw(&call(
        10,
        "grep",
        r#"{"pattern":"\ud83d\ude00","fixed_strings":true,"output_mode":"content"}"#,
    ));
    let response = client.response(10, WAIT).expect("answered by its id");
    assert!(
        text(&response["result"]).contains("1:zebrafish swim here 😀"),
        "{response}"
    );
}
