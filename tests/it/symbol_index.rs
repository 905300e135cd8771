//! The symbol index through the wire: `list_roots` tells its state, a saved file's new
//! definition is found (and a deleted one gone) while the server runs, and a query asked
//! while the index is still building answers at once, on demand.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

fn names(result: &Value) -> Vec<String> {
    symbols_of(result)
        .iter()
        .map(|s| format!("{} {}", s["name"].as_str().unwrap_or(""), s["path"]))
        .collect()
}

/// Polls `symbols` for `query` until `done` holds (at most 5 s: the watcher's debounce
/// plus a re-parse, with room for a loaded machine; not a timing assertion).
fn poll(client: &mut Client, query: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let result = client.call("symbols", json!({"query": query, "exact": true}));
        assert!(!is_error(&result), "{result}");
        if done(&result) || Instant::now() >= deadline {
            return result;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[test]
fn a_saved_definition_is_found_and_a_deleted_one_gone() {
    let ws = workspace();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/symbols");
    for entry in std::fs::read_dir(fixtures).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), ws.app.join("src").join(entry.file_name())).unwrap();
    }
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let ready = wait_symbols(&mut client, "ready", Duration::from_secs(30));
    assert!(ready.contains("definitions in 10 files"), "{ready}");
    let before = client.call("symbols", json!({"query": "parse"}));
    assert!(
        before["structuredContent"]["stats"]["indexed_files"].is_u64(),
        "not answered from the index: {before}"
    );

    // find_usages's `symbol` completes definition names from the index (smart case).
    let completion = client.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "find_usages"},
               "argument": {"name": "symbol", "value": "pars"}}),
    );
    let values = &completion["result"]["completion"]["values"];
    assert_eq!(values, &json!(["parse", "Parser"]), "{completion}");

    let added = ws.app.join("src").join("added.rs");
    std::fs::write(&added, "pub fn brand_new_function() -> u32 {\n    7\n}\n").unwrap();
    let found = poll(&mut client, "brand_new_function", |r| {
        r["structuredContent"]["total"] == 1
    });
    assert_eq!(
        names(&found),
        [format!("brand_new_function {:?}", s(&added))],
        "{found}"
    );
    assert_eq!(symbols_of(&found)[0]["line"], 1);

    std::fs::remove_file(&added).unwrap();
    let gone = poll(&mut client, "brand_new_function", |r| {
        r["structuredContent"]["total"] == 0
    });
    assert_eq!(gone["structuredContent"]["total"], 0, "{gone}");
    // Settled again, and from memory.
    wait_symbols(&mut client, "ready", Duration::from_secs(10));
    let after = poll(&mut client, "brand_new_function", |r| {
        r["structuredContent"]["stats"]["indexed_files"].is_u64()
    });
    assert_eq!(after["structuredContent"]["total"], 0, "{after}");
    assert!(after["structuredContent"]["stats"]["indexed_files"].is_u64());
}

/// Many files that take a while to parse: the first query does not wait for the build
/// (it pre-filters and parses the one candidate on demand) and is right.
#[test]
fn symbols_answers_while_the_index_is_building() {
    let ws = workspace();
    let mut body = String::new();
    for j in 0..1_500 {
        body.push_str(&format!(
            "static int helper_{j}(int a) {{ if (a) {{ return helper_{j}(a - 1); }} return 0; }}\n"
        ));
    }
    for i in 0..150 {
        std::fs::write(ws.app.join("src").join(format!("f{i:03}.c")), &body).unwrap();
    }
    std::fs::write(
        ws.app.join("src").join("f077.c"),
        format!("{body}int the_one_target(void) {{ return 1; }}\n"),
    )
    .unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let state = symbols_state(&mut client);
    assert!(!state.starts_with("ready"), "built already: {state}");
    let started = Instant::now();
    let result = client.call("symbols", json!({"query": "the_one_target"}));
    let took = started.elapsed();
    assert!(!is_error(&result), "{result}");
    let out = &result["structuredContent"];
    assert_eq!(out["total"], 1, "{result}");
    let found = symbols_of(&result);
    assert_eq!(found[0]["path"], s(&ws.app.join("src").join("f077.c")));
    assert_eq!(found[0]["line"], 1_501);
    let after = symbols_state(&mut client);
    if !after.starts_with("ready") {
        // Asked and answered during the build: on demand, not waiting for it.
        assert!(out["stats"]["indexed_files"].is_null(), "{result}");
        assert_eq!(out["stats"]["parsed"], 1, "{result}");
    }
    eprintln!("first query during the build: {took:?} (index: {after})");
}

/// Completion offers what `symbols` finds: a function renamed in its file, or a file
/// deleted, offers the new name and never the old one, from the moment the change is
/// known.
#[test]
fn completion_follows_renames_and_deletions() {
    let ws = workspace();
    let file = ws.app.join("src").join("renamed.rs");
    std::fs::write(&file, "pub fn old_name_alpha() -> u32 {\n    1\n}\n").unwrap();
    std::fs::write(
        ws.app.join("src").join("kept.rs"),
        "pub fn old_name_kept() {}\n",
    )
    .unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_symbols(&mut client, "ready", Duration::from_secs(30));
    assert_eq!(
        complete(&mut client, "old_name"),
        json!(["old_name_alpha", "old_name_kept"])
    );
    std::fs::write(&file, "pub fn new_name_alpha() -> u32 {\n    1\n}\n").unwrap();
    let found = poll(&mut client, "new_name_alpha", |r| {
        r["structuredContent"]["total"] == 1
    });
    assert_eq!(found["structuredContent"]["total"], 1, "{found}");
    assert_eq!(complete(&mut client, "old_name"), json!(["old_name_kept"]));
    let deadline = Instant::now() + Duration::from_secs(10);
    while complete(&mut client, "new_name") != json!(["new_name_alpha"]) {
        assert!(Instant::now() < deadline, "the new name is never offered");
        std::thread::sleep(Duration::from_millis(25));
    }
    std::fs::remove_file(&file).unwrap();
    poll(&mut client, "new_name_alpha", |r| {
        r["structuredContent"]["total"] == 0
    });
    assert_eq!(complete(&mut client, "new_name"), json!([]));
    assert_eq!(complete(&mut client, "old_name"), json!(["old_name_kept"]));
}

fn complete(client: &mut Client, value: &str) -> serde_json::Value {
    let completion = client.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "find_usages"},
               "argument": {"name": "symbol", "value": value}}),
    );
    completion["result"]["completion"]["values"].clone()
}
