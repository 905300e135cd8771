//! Resources, completion and prompts through the wire.

use serde_json::{Value, json};

use crate::support::*;

/// A path as a value of the `file:///{+path}` template: what follows `file:///` in its URI
/// (`tmp/x` on Unix, `C:/x` on Windows).
fn template_value(path: &std::path::Path) -> String {
    uri(path)["file:///".len()..].to_string()
}

fn started(ws: &Workspace, caps: Value) -> Client {
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(caps);
    client
}

#[test]
fn template_read_text_binary_missing_and_outside() {
    let ws = workspace();
    std::fs::write(ws.app.join("logo.png"), b"\x89PNG\r\n\x1a\nxxxx").unwrap();
    let mut client = started(&ws, json!({}));
    let templates = client.request("resources/templates/list", json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "file:///{+path}"
    );
    let read = client.request(
        "resources/read",
        json!({"uri": uri(&ws.app.join("src/main.rs"))}),
    );
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "text/x-rust");
    assert!(contents["text"].as_str().unwrap().contains("println!"));
    let read = client.request(
        "resources/read",
        json!({"uri": uri(&ws.app.join("logo.png"))}),
    );
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "image/png");
    assert_eq!(contents["blob"], "iVBORw0KGgp4eHh4");
    let missing = uri(&ws.app.join("nope.rs"));
    let read = client.request("resources/read", json!({"uri": missing}));
    assert_eq!(read["error"]["code"], -32002);
    assert_eq!(read["error"]["data"]["uri"], missing);
    let read = client.request(
        "resources/read",
        json!({"uri": uri(&ws.outside.join("secret.txt"))}),
    );
    assert!(read["error"].is_object());
    assert!(!read.to_string().contains("TOP-SECRET"));
    let read = client.request("resources/read", json!({"uri": "https://example.com/x"}));
    assert_eq!(read["error"]["code"], -32602);
}

#[test]
fn resource_reads_outside_the_roots_ask_the_user() {
    let ws = workspace();
    let mut client = started(&ws, json!({"elicitation": {}}));
    let id = client.start(
        "resources/read",
        json!({"uri": uri(&ws.outside.join("secret.txt"))}),
    );
    let question = client
        .server_request("elicitation/create", WAIT)
        .expect("asked");
    client.respond(
        &question["id"],
        json!({"action":"accept","content":{"allow":true}}),
    );
    let read = client.response(id, WAIT).unwrap();
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("TOP-SECRET")
    );
}

#[test]
fn list_pages_cover_every_file_exactly_once() {
    let ws = workspace();
    for i in 0..2500 {
        std::fs::write(ws.app.join(format!("f{i:04}.txt")), "").unwrap();
    }
    let mut client = started(&ws, json!({}));
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let page = client.request("resources/list", params);
        let resources = page["result"]["resources"].as_array().unwrap();
        assert!(resources.len() <= 1000);
        seen.extend(
            resources
                .iter()
                .map(|r| r["uri"].as_str().unwrap().to_string()),
        );
        pages += 1;
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen.len(), 2501); // + src/main.rs
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len(), "no duplicates");
    let bad = client.request("resources/list", json!({"cursor": "not-a-cursor"}));
    assert_eq!(bad["error"]["code"], -32602);
}

fn complete(client: &mut Client, reference: Value, value: &str) -> Value {
    let response = client.request(
        "completion/complete",
        json!({"ref": reference, "argument": {"name": "path", "value": value}}),
    );
    response["result"]["completion"].clone()
}

#[test]
fn completion_of_template_and_prompt_paths() {
    let ws = workspace();
    std::fs::create_dir_all(ws.app.join("Source")).unwrap();
    std::fs::write(ws.app.join("setup.cfg"), "").unwrap();
    for i in 0..130 {
        std::fs::write(ws.app.join(format!("many{i:03}.txt")), "").unwrap();
    }
    let mut client = started(&ws, json!({}));
    let template = json!({"type": "ref/resource", "uri": "file:///{+path}"});
    let app = template_value(&ws.app);
    let roots = complete(&mut client, template.clone(), "");
    assert_eq!(roots["values"], json!([format!("{app}/")]));
    let got = complete(&mut client, template.clone(), &format!("{app}/s"));
    let values: Vec<&str> = got["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(values[0], format!("{app}/setup.cfg"));
    assert_eq!(values[1], format!("{app}/src/"));
    assert_eq!(values[2], format!("{app}/Source/"));
    let many = complete(&mut client, template.clone(), &format!("{app}/many"));
    assert_eq!(many["values"].as_array().unwrap().len(), 100);
    assert_eq!(many["total"], 130);
    assert_eq!(many["hasMore"], true);
    // Outside the roots: nothing, and no question to the user, even for a client that
    // could be asked (nothing arrives before the answer nor up to a later ping's).
    let mut asking = started(&ws, json!({"elicitation": {}}));
    let id = asking.start(
        "completion/complete",
        json!({"ref": template.clone(), "argument": {"name": "path",
               "value": format!("{}/", template_value(&ws.outside))}}),
    );
    let (mut seen, outside) = asking.read_until_response(id, WAIT);
    seen.extend(asking.until_ping());
    assert_eq!(
        outside["result"]["completion"]["values"],
        json!([]),
        "{outside}"
    );
    assert!(
        !seen.iter().any(|m| m["method"] == "elicitation/create"),
        "the user was asked: {seen:?}"
    );
    let prompt = json!({"type": "ref/prompt", "name": "explain_file"});
    // Prompt values are plain paths, written the platform's way (`C:\…\app\sr`).
    let (app, sep) = (
        rootgrep_core::roots::path_text(&ws.app),
        std::path::MAIN_SEPARATOR,
    );
    let got = complete(&mut client, prompt, &format!("{app}{sep}sr"));
    // `src/` is a prefix match, `Source/` a subsequence match (s…r).
    assert_eq!(
        got["values"],
        json!([
            format!("{app}{sep}src{sep}"),
            format!("{app}{sep}Source{sep}")
        ])
    );
}

#[test]
fn prompts_embed_what_the_tools_found() {
    let ws = workspace();
    let mut client = started(&ws, json!({}));
    let list = client.request("prompts/list", json!({}));
    let names: Vec<&str> = list["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["explain_file", "find_usages"]);
    let got = client.request(
        "prompts/get",
        json!({"name": "explain_file", "arguments": {"path": "src/main.rs"}}),
    );
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("2\t    println!(\"hi\");"), "{text}");
    let got = client.request(
        "prompts/get",
        json!({"name": "find_usages", "arguments": {"symbol": "main"}}),
    );
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("1:fn main() {"), "{text}");
    let missing = client.request(
        "prompts/get",
        json!({"name": "find_usages", "arguments": {}}),
    );
    assert_eq!(missing["error"]["code"], -32602);
    let unknown = client.request("prompts/get", json!({"name": "nope"}));
    assert_eq!(unknown["error"]["code"], -32602);
}

#[test]
fn listing_and_completion_wait_for_the_clients_roots() {
    let ws = workspace();
    std::fs::write(ws.base.join("cwd-only.txt"), "x").unwrap();
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake(json!({"roots": {}}));
    // Ask before answering roots/list: the answer must use the client's roots.
    let list = client.start("resources/list", json!({}));
    let complete = client.start(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"}, "argument": {"name": "path", "value": ""}}),
    );
    let request = client
        .server_request("roots/list", WAIT)
        .expect("roots/list");
    // Both wait for the roots: neither is answered before a later ping is.
    let seen = client.until_ping();
    assert!(
        !seen
            .iter()
            .any(|m| is_response_to(m, list) || is_response_to(m, complete)),
        "answered before the roots came: {seen:?}"
    );
    client.respond(&request["id"], roots_result(&[&ws.app]));
    let list = client.response(list, WAIT).expect("listed");
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, vec![uri(&ws.app.join("src/main.rs"))]);
    let complete = client.response(complete, WAIT).expect("completed");
    let app = template_value(&ws.app);
    assert_eq!(
        complete["result"]["completion"]["values"],
        json!([format!("{app}/")])
    );
}

#[cfg(unix)]
fn complete_with(
    client: &mut Client,
    reference: Value,
    name: &str,
    value: &str,
    context: Value,
) -> Value {
    let response = client.request(
        "completion/complete",
        json!({"ref": reference, "argument": {"name": name, "value": value},
               "context": {"arguments": context}}),
    );
    response["result"]["completion"].clone()
}

/// Completion uses what is already filled in, and prompt paths complete as a person types
/// them (before: `""` gave the roots without their leading `/`, a root-relative prefix gave
/// nothing, `context.arguments` was ignored, and symbol completion reported values + 1).
#[cfg(unix)]
#[test]
fn completion_uses_the_arguments_already_given_and_paths_as_typed() {
    let ws = workspace();
    std::fs::create_dir_all(ws.app.join("src/parser")).unwrap();
    std::fs::create_dir_all(ws.app.join("lib")).unwrap();
    std::fs::write(
        ws.app.join("src/parser/lexer.rs"),
        "pub fn tokenize() {}\npub fn token_kind() {}\n",
    )
    .unwrap();
    std::fs::write(ws.app.join("src/util.rs"), "pub fn tokenize() {}\n").unwrap();
    std::fs::write(ws.app.join("lib/other.rs"), "pub fn tolerate() {}\n").unwrap();
    let mut client = started(&ws, json!({}));
    let usages = json!({"type": "ref/prompt", "name": "find_usages"});

    // `symbol` narrowed by `path`: only names defined under lib/.
    let got = complete_with(
        &mut client,
        usages.clone(),
        "symbol",
        "to",
        json!({"path": "lib"}),
    );
    assert_eq!(got["values"], json!(["tolerate"]), "{got}");
    assert_eq!(got["total"], 1, "{got}");
    let got = complete_with(
        &mut client,
        usages.clone(),
        "symbol",
        "tok",
        json!({"path": s(&ws.app.join("src/parser"))}),
    );
    assert_eq!(got["values"], json!(["token_kind", "tokenize"]), "{got}");

    // `path` narrowed to what defines `symbol`: files, and directories on the way to them.
    let got = complete_with(
        &mut client,
        usages.clone(),
        "path",
        "",
        json!({"symbol": "tokenize"}),
    );
    assert_eq!(got["values"], json!(["src/"]), "{got}");
    let got = complete_with(
        &mut client,
        usages.clone(),
        "path",
        "src/",
        json!({"symbol": "tokenize"}),
    );
    assert_eq!(
        got["values"],
        json!(["src/parser/", "src/util.rs"]),
        "{got}"
    );
    assert_eq!(got["total"], 2, "{got}");

    // Prompt paths as typed: the roots with their leading `/`, and root-relative prefixes.
    let explain = json!({"type": "ref/prompt", "name": "explain_file"});
    let got = complete(&mut client, explain.clone(), "");
    assert_eq!(got["values"], json!([format!("{}/", s(&ws.app))]), "{got}");
    let got = complete(&mut client, explain.clone(), "src/ut");
    assert_eq!(got["values"], json!(["src/util.rs"]), "{got}");
    let got = complete(&mut client, explain, "li");
    assert_eq!(got["values"], json!(["lib/"]), "{got}");

    // Outside the roots, a `path` in the context narrows to nothing rather than leading out.
    let got = complete_with(
        &mut client,
        usages,
        "symbol",
        "se",
        json!({"path": s(&ws.outside)}),
    );
    assert_eq!(got["values"], json!([]), "{got}");
}
