//! Roots: asked only after `initialized` and only with the capability, re-fetched on
//! `list_changed` (bursts coalesced), bounded waits for clients that never answer, and the
//! fallback chain client → DIR arguments → working directory.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

fn roots_of(client: &mut Client) -> (String, Vec<String>) {
    let result = client.call("list_roots", json!({}));
    let structured = &result["structuredContent"];
    (
        structured["source"].as_str().unwrap().to_string(),
        structured["roots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect(),
    )
}

#[test]
fn roots_list_is_sent_only_after_initialized() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.base);
    client.initialize_only(json!({"roots":{"listChanged":true}}));
    let early = client.collect(Duration::from_millis(400), |m| m["method"] == "roots/list");
    assert!(early.is_empty(), "roots/list before initialized: {early:?}");
    client.notify("notifications/initialized", json!({}));
    let request = client
        .server_request("roots/list", WAIT)
        .expect("roots/list");
    client.respond(&request["id"], roots_result(&[&ws.app]));
    let (source, roots) = roots_of(&mut client);
    assert_eq!(source, "client");
    assert_eq!(roots, vec![s(&ws.app).to_string()]);
}

#[test]
fn no_roots_capability_means_no_roots_request_and_the_fallback_chain() {
    let ws = workspace();
    // DIR arguments win over the working directory.
    let mut client = Client::spawn(&[s(&ws.outside)], &ws.app);
    client.handshake(json!({}));
    let asked = client.collect(Duration::from_millis(400), |m| m["method"] == "roots/list");
    assert!(asked.is_empty());
    let (source, roots) = roots_of(&mut client);
    assert_eq!(source, "command line");
    assert_eq!(roots, vec![s(&ws.outside).to_string()]);
    // Without DIR arguments: the working directory.
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let (source, roots) = roots_of(&mut client);
    assert_eq!(source, "working directory");
    assert_eq!(roots, vec![s(&ws.app).to_string()]);
}

#[test]
fn list_changed_refetches_coalesced_and_swaps_the_set() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    assert_eq!(roots_of(&mut client).1, vec![s(&ws.app).to_string()]);
    for _ in 0..5 {
        client.notify("notifications/roots/list_changed", json!({}));
    }
    let first = client.server_request("roots/list", WAIT).expect("re-fetch");
    // Hold the answer a little: more notifications arrive meanwhile.
    client.notify("notifications/roots/list_changed", json!({}));
    std::thread::sleep(Duration::from_millis(100));
    client.respond(&first["id"], roots_result(&[&ws.outside]));
    let more = client.collect(Duration::from_millis(600), |m| m["method"] == "roots/list");
    assert!(
        more.len() <= 1,
        "bursts must coalesce, got {} extra fetches",
        more.len()
    );
    for extra in &more {
        client.respond(&extra["id"], roots_result(&[&ws.outside, &ws.app]));
    }
    std::thread::sleep(Duration::from_millis(200));
    let (source, roots) = roots_of(&mut client);
    assert_eq!(source, "client");
    assert_eq!(roots[0], s(&ws.outside));
}

#[test]
fn a_client_that_never_answers_roots_list_does_not_hang_calls() {
    let ws = workspace();
    let mut client = Client::spawn(&["--roots-timeout", "1", s(&ws.app)], &ws.base);
    client.handshake(json!({"roots":{}}));
    let _ignored = client
        .server_request("roots/list", WAIT)
        .expect("roots/list");
    let started = Instant::now();
    let (source, roots) = roots_of(&mut client);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(700),
        "call should wait for roots, waited {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(5),
        "bounded wait, waited {waited:?}"
    );
    assert_eq!(source, "command line");
    assert_eq!(roots, vec![s(&ws.app).to_string()]);
    // The server cancelled its own abandoned request on the wire.
    let cancelled = client.wait_for(Duration::from_secs(3), |m| {
        m["method"] == "notifications/cancelled"
    });
    assert!(
        cancelled.is_some(),
        "expected notifications/cancelled for roots/list"
    );
    // And the server keeps serving.
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn client_roots_errors_keep_the_previous_set_and_non_file_uris_are_ignored() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake(json!({"roots":{"listChanged":true}}));
    let request = client.server_request("roots/list", WAIT).unwrap();
    client.respond(
        &request["id"],
        json!({"roots":[{"uri":"https://example.com/x"},{"uri": uri(&ws.app)}]}),
    );
    let result = client.call("list_roots", json!({}));
    assert_eq!(
        result["structuredContent"]["roots"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(text(&result).contains("https://example.com/x"));
    client.notify("notifications/roots/list_changed", json!({}));
    let request = client.server_request("roots/list", WAIT).unwrap();
    client
        .send(json!({"jsonrpc":"2.0","id":request["id"],"error":{"code":-32603,"message":"boom"}}));
    std::thread::sleep(Duration::from_millis(200));
    let (source, roots) = roots_of(&mut client);
    assert_eq!(source, "client");
    assert_eq!(roots, vec![s(&ws.app).to_string()]);
}

#[test]
fn confine_drops_client_roots_outside_it() {
    let ws = workspace();
    let mut client = Client::spawn(&["--confine", s(&ws.app)], &ws.app);
    client.handshake_with_roots(json!({}), &[&ws.outside]);
    let result = client.call("list_roots", json!({}));
    let structured = &result["structuredContent"];
    assert_eq!(structured["roots"][0]["path"], s(&ws.app));
    assert_eq!(structured["confine"][0], s(&ws.app));
    assert!(text(&result).contains("outside --confine"));
    let read = client.call(
        "read_file",
        json!({"path": s(&ws.outside.join("secret.txt"))}),
    );
    assert!(is_error(&read));
    assert!(!text(&read).contains("TOP-SECRET"));
}
