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
    // Nothing up to a later ping's answer is a roots/list.
    let early: Vec<_> = client
        .until_ping()
        .into_iter()
        .filter(|m| m["method"] == "roots/list")
        .collect();
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
    let (source, roots) = roots_of(&mut client);
    // No roots/list came before that call's answer, nor up to a later ping's.
    let asked = client.collect(Duration::ZERO, |m| m["method"] == "roots/list");
    assert!(asked.is_empty(), "{asked:?}");
    assert!(
        !client
            .until_ping()
            .iter()
            .any(|m| m["method"] == "roots/list"),
        "roots/list without the capability"
    );
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
    // Hold the answer: another notification arrives (and is read, as a ping answered
    // after it shows) while the fetch is pending.
    client.notify("notifications/roots/list_changed", json!({}));
    let held = client.until_ping();
    client.respond(&first["id"], roots_result(&[&ws.outside]));
    // At most one more fetch follows (for the notification during the held one); each is
    // answered, and everything up to a later ping's answer after that is counted.
    let mut more: Vec<serde_json::Value> = held
        .into_iter()
        .filter(|m| m["method"] == "roots/list")
        .collect();
    let expected = vec![s(&ws.outside).to_string(), s(&ws.app).to_string()];
    let deadline = Instant::now() + Duration::from_secs(10);
    let roots = loop {
        for extra in client.collect(Duration::ZERO, |m| m["method"] == "roots/list") {
            client.respond(&extra["id"], roots_result(&[&ws.outside, &ws.app]));
            more.push(extra);
        }
        let (source, roots) = roots_of(&mut client);
        assert_eq!(source, "client");
        // The swap is done once the set is the last answer's.
        let want: &[String] = if more.is_empty() {
            &expected[..1]
        } else {
            &expected
        };
        if roots == want {
            break roots;
        }
        assert!(Instant::now() < deadline, "roots never swapped: {roots:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    more.extend(
        client
            .until_ping()
            .into_iter()
            .filter(|m| m["method"] == "roots/list"),
    );
    assert!(
        more.len() <= 1,
        "bursts must coalesce, got {} extra fetches",
        more.len()
    );
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
    // The server says (a warning, sent by default) that it keeps the previous roots: once
    // that arrived, the error was handled.
    let warned = client.wait_for(WAIT, |m| {
        m["method"] == "notifications/message"
            && m["params"]["data"]["message"]
                .as_str()
                .is_some_and(|t| t.contains("roots/list failed"))
    });
    assert!(warned.is_some(), "no warning about the failed roots/list");
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

/// A client that declares roots and answers `roots/list` with `[]` gets no access: the
/// working directory (a GUI host's `$HOME`, say) is never served in their place; every tool
/// that works on the roots says so and how to grant access; `list_roots` says the client
/// sent no roots. `DIR` arguments still apply. (Before: the working directory was served.)
#[test]
fn an_empty_roots_list_from_the_client_means_no_access() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake_with_roots(json!({}), &[]);
    let listed = client.call("list_roots", json!({}));
    let structured = &listed["structuredContent"];
    assert_eq!(structured["source"], "client", "{listed}");
    assert_eq!(structured["roots"], json!([]), "{listed}");
    assert!(
        text(&listed).contains("the client sent no roots"),
        "{}",
        text(&listed)
    );
    for (tool, args) in [
        ("grep", json!({"pattern":"fn main"})),
        ("glob", json!({"pattern":"**/*.rs"})),
        ("list_directory", json!({})),
        ("directory_tree", json!({})),
        ("symbols", json!({"query":"main"})),
        ("search", json!({"query":"main function"})),
    ] {
        let result = client.call(tool, args);
        assert!(is_error(&result), "{tool}: {result}");
        let said = text(&result);
        assert!(said.contains("no workspace roots"), "{tool}: {said}");
        assert!(!said.contains("main.rs"), "{tool} served the cwd: {said}");
    }
    let relative = client.call("read_file", json!({"path":"src/main.rs"}));
    assert!(is_error(&relative), "{relative}");
    let listed = client.request("resources/list", json!({}));
    assert_eq!(listed["result"]["resources"], json!([]), "{listed}");

    // With a DIR argument, the operator's directory is served.
    let mut client = Client::spawn(&[s(&ws.app)], &ws.base);
    client.handshake_with_roots(json!({}), &[]);
    let (source, roots) = roots_of(&mut client);
    assert_eq!(source, "command line");
    assert_eq!(roots, vec![s(&ws.app).to_string()]);
}

/// A root deleted after it was chosen is reported as it is now: `exists: false` and "does
/// not exist" (before: `exists: true` with `watch: failed`).
#[test]
fn a_deleted_root_is_reported_missing() {
    let ws = workspace();
    let mut client = Client::spawn(&[s(&ws.app)], &ws.base);
    client.handshake(json!({}));
    let listed = client.call("list_roots", json!({}));
    assert!(
        listed["structuredContent"]["roots"][0]
            .get("missing")
            .is_none()
    );
    std::fs::remove_dir_all(&ws.app).unwrap();
    let listed = client.call("list_roots", json!({}));
    let root = &listed["structuredContent"]["roots"][0];
    assert_eq!(root["missing"], true, "{listed}");
    assert!(
        root["watch"].as_str().unwrap().contains("does not exist"),
        "{listed}"
    );
    assert!(
        text(&listed).contains("does not exist"),
        "{}",
        text(&listed)
    );
}

/// Issue #36, item 10: list_roots writes an index's size as `rootgrep cache` does (KiB
/// below a MiB, then MiB with a decimal), not rounded up to a whole MiB.
#[test]
fn list_roots_sizes_small_indexes_in_kib() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    let mut client = Client::spawn(&["--cache-dir", s(&cache), s(&ws.app)], &ws.base);
    client.handshake(json!({}));
    let symbols = wait_symbols(&mut client, "ready", Duration::from_secs(60));
    let search = wait_search(&mut client, "ready", Duration::from_secs(60));
    for line in [&symbols, &search] {
        assert!(line.contains(" KiB"), "{line}");
        assert!(!line.contains("MiB"), "a small index is not a MiB: {line}");
    }
}
