//! `search` with `expand`: the host's model is asked (`sampling/createMessage`) for the code
//! terms a question in words implies, only when the call or `--expand` asks and the client
//! declared `sampling`; every answer of the host — approved, refused, an error, silence, a
//! cancelled call, a hostile reply — leaves a correct answer that says what was expanded.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// The function the question is about shares none of its words; a decoy shares them all.
fn tree(root: &Path) {
    std::fs::write(
        root.join("journal.c"),
        "int journal_flush_deadline(struct journal *j)\n{\n  return j->pending > LIMIT;\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("notes.c"),
        "/* we give up waiting on the disk when it is slow */\nint wait_disk_slow(void)\n{\n  return 0;\n}\n",
    )
    .unwrap();
}

const QUESTION: &str = "when do we give up waiting on the disk";

fn server(root: &Path, extra: &[&str], capabilities: Value) -> Client {
    let mut args: Vec<&str> = vec!["--no-cache"];
    args.extend_from_slice(extra);
    let mut client = Client::spawn(&args, root);
    client.handshake(capabilities);
    wait_search_ready(&mut client);
    client
}

fn sampling() -> Value {
    json!({"sampling": {}})
}

/// Starts a search; returns its id.
fn search(client: &mut Client, arguments: Value) -> i64 {
    client.start(
        "tools/call",
        json!({"name": "search", "arguments": arguments}),
    )
}

fn finish(client: &mut Client, id: i64) -> Value {
    client.response(id, WAIT).expect("tool answer")["result"].clone()
}

fn names(result: &Value) -> Vec<String> {
    search_results(result)
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_string))
        .collect()
}

/// The terms the answer's note says were added (empty when none were).
fn expanded(result: &Value) -> Vec<String> {
    let notes = result["structuredContent"]["notes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    notes
        .iter()
        .filter_map(|n| n.as_str()?.split_once(") with: "))
        .flat_map(|(_, terms)| terms.split(' ').map(str::to_string))
        .collect()
}

fn reply(text: &str, model: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": model,
           "stopReason": "endTurn"})
}

/// Runs a search and checks that the host's model was not asked. Returns the tool result.
fn search_not_asked(client: &mut Client, arguments: Value) -> Value {
    call_without_asking(client, "search", arguments, "sampling/createMessage")
}

/// Starts a search; returns its id and the question the host's model is asked.
fn ask(client: &mut Client, arguments: Value) -> (i64, Value) {
    let id = search(client, arguments);
    let question = client
        .server_request("sampling/createMessage", WAIT)
        .expect("the host's model is asked");
    (id, question)
}

#[test]
fn an_approved_expansion_finds_what_the_words_alone_do_not() {
    let ws = workspace();
    tree(&ws.app);
    let mut client = server(&ws.app, &[], sampling());
    let plain = search_not_asked(&mut client, json!({"query": QUESTION}));
    assert_eq!(
        names(&plain).first().map(String::as_str),
        Some("wait_disk_slow")
    );
    assert!(expanded(&plain).is_empty(), "{plain}");

    let (id, question) = ask(&mut client, json!({"query": QUESTION, "expand": true}));
    let params = &question["params"];
    assert!(
        params["systemPrompt"]
            .as_str()
            .unwrap()
            .contains("code terms")
    );
    assert!(params["maxTokens"].as_u64().unwrap() <= 200, "{params}");
    assert_eq!(params["includeContext"], "none");
    assert!(
        params["modelPreferences"]["speedPriority"]
            .as_f64()
            .unwrap()
            > 0.5
    );
    assert_eq!(params["messages"][0]["role"], "user");
    assert_eq!(params["messages"][0]["content"]["text"], QUESTION);
    client.respond(
        &question["id"],
        reply("journal_flush_deadline, disk timeout `LIMIT`", "tiny-model"),
    );
    let result = finish(&mut client, id);
    assert!(!is_error(&result), "{result}");
    assert_eq!(
        names(&result).first().map(String::as_str),
        Some("journal_flush_deadline")
    );
    // Words the query holds are not added again ("disk").
    assert_eq!(
        expanded(&result),
        ["journal_flush_deadline", "timeout", "LIMIT"]
    );
    assert!(
        text(&result).contains(
            "expanded by the host's model (tiny-model) with: journal_flush_deadline timeout LIMIT"
        ),
        "{}",
        text(&result)
    );
}

#[test]
fn a_hostile_reply_adds_only_bounded_words() {
    let ws = workspace();
    tree(&ws.app);
    let mut client = server(&ws.app, &[], sampling());
    let (id, question) = ask(&mut client, json!({"query": QUESTION, "expand": true}));
    let many: String = (0..500).map(|i| format!("name{i} ")).collect();
    let model = "evil\nmodel\u{202e}";
    let hostile = format!("\u{1b}[31m path:/etc/passwd {} {many}", "x".repeat(5000));
    client.respond(&question["id"], reply(&hostile, model));
    let result = finish(&mut client, id);
    assert!(!is_error(&result), "{result}");
    let terms = expanded(&result);
    assert!(!terms.is_empty() && terms.len() <= 16, "{terms:?}");
    assert!(terms.iter().all(|t| t.len() <= 64), "{terms:?}");
    let body = text(&result);
    assert!(
        !body.contains("evil\nmodel"),
        "the model's name adds no line: {body}"
    );
    assert!(!body.contains('\u{202e}'), "{body}");
}

#[test]
fn a_refusal_or_an_error_answers_from_the_plain_query() {
    let ws = workspace();
    tree(&ws.app);
    let mut client = server(&ws.app, &[], sampling());
    let (id, question) = ask(&mut client, json!({"query": QUESTION, "expand": true}));
    client.send(json!({"jsonrpc": "2.0", "id": question["id"],
                       "error": {"code": -1, "message": "User rejected sampling request"}}));
    let result = finish(&mut client, id);
    assert!(!is_error(&result), "{result}");
    assert_eq!(
        names(&result).first().map(String::as_str),
        Some("wait_disk_slow")
    );
    assert!(expanded(&result).is_empty(), "{result}");
    let body = text(&result);
    assert!(
        body.contains("not expanded: the host refused or failed"),
        "{body}"
    );
    assert!(body.contains("User rejected sampling request"), "{body}");

    // A reply with no usable word is said too.
    let (id, question) = ask(&mut client, json!({"query": QUESTION, "expand": true}));
    client.respond(&question["id"], reply("!!! 42 ...", "m"));
    let body = text(&finish(&mut client, id));
    assert!(
        body.contains("not expanded: the host's model gave no code terms"),
        "{body}"
    );
}

#[test]
fn a_silent_host_times_out_and_the_question_is_cancelled_on_the_wire() {
    let ws = workspace();
    tree(&ws.app);
    let mut client = server(&ws.app, &["--expand-timeout", "1"], sampling());
    let (id, question) = ask(&mut client, json!({"query": QUESTION, "expand": true}));
    let result = finish(&mut client, id);
    assert!(!is_error(&result), "{result}");
    assert!(text(&result).contains("not expanded: no answer from the host's model within 1s"));
    assert_eq!(
        names(&result).first().map(String::as_str),
        Some("wait_disk_slow")
    );
    let cancelled = client
        .wait_for(WAIT, |m| m["method"] == "notifications/cancelled")
        .expect("the question is cancelled");
    assert_eq!(cancelled["params"]["requestId"], question["id"]);
    // A late answer is harmless.
    client.respond(&question["id"], reply("journal_flush_deadline", "m"));
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn cancelling_the_call_cancels_the_question_and_sends_no_response() {
    let ws = workspace();
    tree(&ws.app);
    let mut client = server(&ws.app, &[], sampling());
    let (id, question) = ask(&mut client, json!({"query": QUESTION, "expand": true}));
    client.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    );
    let cancelled = client
        .wait_for(WAIT, |m| m["method"] == "notifications/cancelled")
        .expect("the question is cancelled");
    assert_eq!(cancelled["params"]["requestId"], question["id"]);
    client.respond(&question["id"], reply("journal_flush_deadline", "m"));
    let seen = client.until_ping();
    assert!(
        !seen.iter().any(|m| is_response_to(m, id)),
        "a response after cancel: {seen:?}"
    );
}

#[test]
fn only_a_sampling_client_is_asked_and_only_when_the_call_or_the_operator_says() {
    let ws = workspace();
    tree(&ws.app);
    // No capability: never asked, and the answer says why.
    let mut client = server(&ws.app, &["--expand"], json!({}));
    let result = search_not_asked(&mut client, json!({"query": QUESTION, "expand": true}));
    assert!(!is_error(&result), "{result}");
    assert!(text(&result).contains("not expanded: this client did not declare sampling"));
    drop(client);
    // --expand: asked without `expand`; `expand: false` is not asked.
    let mut client = server(&ws.app, &["--expand"], sampling());
    let (id, question) = ask(&mut client, json!({"query": QUESTION}));
    client.respond(&question["id"], reply("journal_flush_deadline", "m"));
    assert_eq!(
        names(&finish(&mut client, id)).first().map(String::as_str),
        Some("journal_flush_deadline")
    );
    let result = search_not_asked(&mut client, json!({"query": QUESTION, "expand": false}));
    assert!(!text(&result).contains("expanded"), "{}", text(&result));
    // Without --expand and without `expand`: not asked, nothing said.
    let mut client = server(&ws.app, &[], sampling());
    let result = search_not_asked(&mut client, json!({"query": QUESTION}));
    assert!(!text(&result).contains("expanded"), "{}", text(&result));
}
