//! symbols, outline, references and read_file + symbol through the wire: results on the
//! language fixtures, structured content next to the text, paging, roots, errors.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// A workspace whose root holds a copy of `testdata/symbols` under `src/`, plus a file
/// outside the root.
fn symbols_workspace() -> Workspace {
    let ws = workspace();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/symbols");
    for entry in std::fs::read_dir(fixtures).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), ws.app.join("src").join(entry.file_name())).unwrap();
    }
    std::fs::write(ws.outside.join("hidden.rs"), "pub fn parse() {}\n").unwrap();
    ws
}

fn server(ws: &Workspace, extra: &[&str]) -> Client {
    let mut args = vec!["--no-watch"];
    args.extend_from_slice(extra);
    let mut client = Client::spawn(&args, &ws.app);
    client.handshake(json!({}));
    client
}

fn structured(result: &Value) -> &Value {
    &result["structuredContent"]
}

#[test]
fn symbols_ranks_and_agrees_with_its_text() {
    let ws = symbols_workspace();
    let mut client = server(&ws, &[]);
    let result = client.call("symbols", json!({"query": "parse"}));
    assert!(!is_error(&result), "{result}");
    let out = structured(&result);
    let found = symbols_of(&result);
    let names: Vec<&str> = found.iter().map(|s| s["name"].as_str().unwrap()).collect();
    // The exact name first (a method, named with its container), then the prefix.
    assert_eq!(names, vec!["Parser::parse", "Parser"]);
    let first = &found[0];
    assert_eq!(first["kind"], "method");
    assert_eq!(first["line"], 24);
    assert_eq!(first["end_line"], 28);
    let path = ws.app.join("src").join("sample.rs");
    assert_eq!(first["path"], s(&path));
    // The text carries the same entries under their file's path (relative to the root).
    let body = text(&result);
    assert!(
        body.starts_with(&format!(
            "{}\n24-28 method Parser::parse: pub fn parse(&self, input: &str) -> Vec<Token> {{\n",
            Path::new("src").join("sample.rs").display()
        )),
        "{body}"
    );
    assert_eq!(out["total"], 2);
    assert!(out["next_offset"].is_null());
    // Nothing outside the root is searched.
    assert!(!body.contains("outside"), "{body}");
}

#[test]
fn symbols_filters_pages_and_says_how_to_continue() {
    let ws = symbols_workspace();
    let mut client = server(&ws, &[]);
    let result = client.call(
        "symbols",
        json!({"query": "Re", "kind": ["class"], "head_limit": 1}),
    );
    let out = structured(&result);
    // Repository (class) and Reader (interface); a function starting with "Re" would not do.
    assert_eq!(symbols_of(&result).len(), 1, "{result}");
    assert_eq!(out["total"], 2);
    assert_eq!(out["next_offset"], 1);
    assert!(text(&result).contains("call symbols with offset=1 for more"));
    let result = client.call(
        "symbols",
        json!({"query": "sum", "language": "java", "exact": true}),
    );
    assert_eq!(structured(&result)["total"], 2, "overloads: {result}");
    let result = client.call("symbols", json!({"query": "x", "language": "cobol"}));
    assert!(is_error(&result));
    assert!(text(&result).contains("supported"));
    let result = client.call("symbols", json!({"query": ""}));
    assert!(is_error(&result));
    let result = client.call("symbols", json!({"query": "parse", "bogus": 1}));
    assert!(is_error(&result));
    let result = client.call("symbols", json!({"query": "zzqqnothing"}));
    assert!(!is_error(&result));
    assert!(
        text(&result).starts_with("No definitions matching"),
        "{}",
        text(&result)
    );
}

#[test]
fn symbols_outside_the_roots_is_refused() {
    let ws = symbols_workspace();
    let mut client = server(&ws, &["--confine", s(&ws.app)]);
    let result = client.call("symbols", json!({"query": "parse", "path": s(&ws.outside)}));
    assert!(is_error(&result), "{result}");
    let result = client.call("outline", json!({"path": s(&ws.outside.join("hidden.rs"))}));
    assert!(is_error(&result), "{result}");
    let result = client.call(
        "read_file",
        json!({"path": s(&ws.outside.join("hidden.rs")), "symbol": "parse"}),
    );
    assert!(is_error(&result), "{result}");
    assert!(!text(&result).contains("pub fn parse"));
}

#[test]
fn outline_of_a_file_nests_and_of_a_directory_groups_by_file() {
    let ws = symbols_workspace();
    let mut client = server(&ws, &[]);
    let result = client.call("outline", json!({"path": "src/sample.py"}));
    assert!(!is_error(&result), "{result}");
    let body = text(&result);
    let path = Path::new("src").join("sample.py");
    assert!(
        body.starts_with(&format!(
            "{}\n5-5 constant LIMIT = 10\n8-24 class class Repository:\n  11-13 class class Entry:\n    12-13 method def describe(self):\n",
            path.display()
        )),
        "{body}"
    );
    let files = structured(&result)["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    // Rows of line range, kind, signature, and the depth when nested.
    assert_eq!(
        files[0]["definitions"][0],
        json!([5, 5, "constant", "LIMIT = 10"])
    );
    assert_eq!(
        files[0]["definitions"][3],
        json!([12, 13, "method", "def describe(self):", 2])
    );
    assert_eq!(structured(&result)["total"], 10);
    let result = client.call("outline", json!({"path": "src", "kind": "function"}));
    let files = structured(&result)["files"].as_array().unwrap();
    assert!(files.len() >= 8, "{result}");
    assert!(
        files
            .iter()
            .flat_map(|f| f["definitions"].as_array().unwrap())
            .all(|d| d[2] == "function" || d[2] == "method" || d[2] == "constructor")
    );
    let result = client.call("outline", json!({"path": "src/sample.rs", "head_limit": 3}));
    assert_eq!(structured(&result)["next_offset"], 3);
    assert!(text(&result).contains("call outline with offset=3"));
    let result = client.call("outline", json!({"path": "src/main.rs", "offset": 0}));
    assert!(!is_error(&result));
    std::fs::write(ws.app.join("notes.txt"), "text\n").unwrap();
    let result = client.call("outline", json!({"path": "notes.txt"}));
    assert!(is_error(&result));
    assert!(
        text(&result).contains("no symbols for this file type"),
        "{result}"
    );
}

#[test]
fn references_name_enclosing_definitions_and_say_they_match_by_name() {
    let ws = symbols_workspace();
    let mut client = server(&ws, &["--tools", "all"]);
    let listed = client.request("tools/list", json!({}));
    let tool = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "references")
        .unwrap()
        .clone();
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .contains("by name, not by type")
    );
    assert!(tool["outputSchema"].is_object());
    let result = client.call("references", json!({"name": "helper"}));
    assert!(!is_error(&result), "{result}");
    let got: Vec<(u64, Option<String>, bool)> = references_of(&result)
        .into_iter()
        .map(|(_, line, scope, defines, _)| (line, scope, defines))
        .collect();
    let named = |name: &str| Some(name.to_string());
    assert_eq!(
        got,
        vec![
            (26, named("Parser::parse"), false),
            (37, named("helper"), true),
            (48, named("inner::deep"), false)
        ]
    );
    let body = text(&result);
    assert!(
        body.contains("@@ method Parser::parse (24-28)\n26:"),
        "{body}"
    );
    let result = client.call("references", json!({"name": "helper", "head_limit": 1}));
    assert!(text(&result).contains("call references with offset=1"));
}

#[test]
fn read_file_with_a_symbol_reads_exactly_that_definition() {
    let ws = symbols_workspace();
    let mut client = server(&ws, &[]);
    let result = client.call(
        "read_file",
        json!({"path": "src/sample.rs", "symbol": "Parser::parse"}),
    );
    assert!(!is_error(&result), "{result}");
    let body = text(&result);
    let mut lines = body.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("method Parser::parse (rust, lines 24-28 of ")
    );
    assert_eq!(
        lines.collect::<Vec<_>>(),
        vec![
            "24\t    pub fn parse(&self, input: &str) -> Vec<Token> {",
            "25\t        let _ = input;",
            "26\t        helper();",
            "27\t        Vec::new()",
            "28\t    }",
        ]
    );
    // Overloads: the candidates are listed.
    let result = client.call(
        "read_file",
        json!({"path": "src/Sample.java", "symbol": "sum"}),
    );
    assert!(!is_error(&result));
    let body = text(&result);
    assert!(body.starts_with("2 definitions named \"sum\""), "{body}");
    assert!(body.contains("16-18  method  Sample::sum"));
    assert!(body.contains("20-22  method  Sample::sum"));
    // Unknown name: the file's definitions are named.
    let result = client.call(
        "read_file",
        json!({"path": "src/sample.go", "symbol": "Nope"}),
    );
    assert!(is_error(&result));
    assert!(text(&result).contains("Store::Add"), "{}", text(&result));
    // symbol with offset is a mistake; an unsupported file says so.
    let result = client.call(
        "read_file",
        json!({"path": "src/sample.rs", "symbol": "parse", "offset": 2}),
    );
    assert!(is_error(&result));
    std::fs::write(ws.app.join("notes.txt"), "text\n").unwrap();
    let result = client.call("read_file", json!({"path": "notes.txt", "symbol": "x"}));
    assert!(is_error(&result));
}

#[test]
fn symbols_and_outline_honour_the_parse_cap() {
    let ws = symbols_workspace();
    // A file over the 1 MiB cap is not parsed; the rest still answers.
    let mut big = String::from("fn huge_needle() {}\n");
    while big.len() <= 1 << 20 {
        big.push_str("// padding padding padding padding padding padding padding\n");
    }
    std::fs::write(ws.app.join("src").join("big.rs"), big).unwrap();
    std::fs::write(
        ws.app.join("src").join("small.rs"),
        "fn huge_needle_small() {}\n",
    )
    .unwrap();
    let mut client = server(&ws, &[]);
    let result = client.call("symbols", json!({"query": "huge_needle"}));
    let names: Vec<String> = symbols_of(&result)
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["huge_needle_small"], "{result}");
    let result = client.call("outline", json!({"path": "src/big.rs"}));
    assert!(text(&result).contains("larger than 1 MiB"), "{result}");
}

#[test]
fn references_search_files_over_the_parse_cap_and_say_their_scope_is_unknown() {
    let ws = symbols_workspace();
    // 40,001 uses in a file over the 1 MiB parse cap, and one in a small file.
    let mut big = String::from("fn big_use() {\n");
    for _ in 0..40_000 {
        big.push_str("    big_target(); // padding padding\n");
    }
    big.push_str("    big_target();\n}\n");
    assert!(big.len() > 1 << 20);
    std::fs::write(ws.app.join("src").join("big.rs"), big).unwrap();
    std::fs::write(
        ws.app.join("src").join("small.rs"),
        "fn caller() {\n    big_target();\n}\n",
    )
    .unwrap();
    let mut client = server(&ws, &[]);
    let result = client.call("references", json!({"name": "big_target", "head_limit": 3}));
    assert!(!is_error(&result), "{result}");
    let out = structured(&result);
    assert_eq!(out["total"], 40_002, "{result}");
    assert_eq!(out["stats"]["too_large"], 1, "{result}");
    let refs = references_of(&result);
    assert_eq!(refs.len(), 3, "{result}");
    // By path: big.rs first, without a scope and saying why.
    for (path, _, scope, _, unknown) in refs {
        assert!(path.ends_with("big.rs"), "{path}");
        assert!(scope.is_none(), "{result}");
        assert_eq!(unknown.as_deref(), Some("too_large"), "{result}");
    }
    let body = text(&result);
    assert!(body.contains("over 1 MiB"), "{body}");
    // The small file's use still has its enclosing definition.
    let last = client.call(
        "references",
        json!({"name": "big_target", "offset": 40_001, "head_limit": 1}),
    );
    let (path, _, scope, _, unknown) = references_of(&last).remove(0);
    assert!(path.ends_with("small.rs"), "{last}");
    assert_eq!(scope.as_deref(), Some("caller"), "{last}");
    assert!(unknown.is_none(), "{last}");
    // A kind filter needs scopes: the big file's uses are left out, and it says so.
    let filtered = client.call(
        "references",
        json!({"name": "big_target", "kind": "function"}),
    );
    assert_eq!(structured(&filtered)["total"], 1, "{filtered}");
    assert_eq!(structured(&filtered)["stats"]["too_large"], 1, "{filtered}");
    assert!(
        text(&filtered).contains("1 files over 1 MiB not searched"),
        "{filtered}"
    );
}

/// A file over the cap is counted once, also when the second (substring and fuzzy) pass
/// walks the files again; before, it was "skipped 2". A one-character query says that it
/// matches whole names only, in the text and the structured result.
#[test]
fn symbols_counts_a_skipped_file_once_and_says_a_single_character_matches_whole_names() {
    let ws = symbols_workspace();
    let mut big = String::from("fn huge_needle() {}\n");
    while big.len() <= 1 << 20 {
        big.push_str("// padding padding padding padding padding padding padding\n");
    }
    std::fs::write(ws.app.join("src").join("big.rs"), big).unwrap();
    let mut client = server(&ws, &[]);
    let result = client.call("symbols", json!({"query": "no_such_definition"}));
    assert_eq!(structured(&result)["stats"]["too_large"], 1, "{result}");
    assert!(
        structured(&result).get("whole_names_only").is_none(),
        "{result}"
    );
    assert!(text(&result).contains("skipped 1 over 1 MiB"), "{result}");
    // No definition is named `s`, though many names start with it.
    let result = client.call("symbols", json!({"query": "s"}));
    assert!(!is_error(&result), "{result}");
    assert_eq!(structured(&result)["total"], 0, "{result}");
    assert_eq!(structured(&result)["whole_names_only"], true, "{result}");
    let body = text(&result);
    assert!(
        body.starts_with("No definitions named exactly \"s\""),
        "{result}"
    );
    assert!(
        body.contains("a one-character query matches whole names only"),
        "{result}"
    );
    // Found or not, the answer says so; `exact` asked for it, so no note then.
    std::fs::write(ws.app.join("src").join("one.rs"), "fn s() {}\n").unwrap();
    let result = client.call("symbols", json!({"query": "s"}));
    assert_eq!(structured(&result)["total"], 1, "{result}");
    assert_eq!(structured(&result)["whole_names_only"], true, "{result}");
    assert!(text(&result).contains("whole names only"), "{result}");
    let result = client.call("symbols", json!({"query": "s", "exact": true}));
    assert!(
        structured(&result).get("whole_names_only").is_none(),
        "{result}"
    );
    assert!(!text(&result).contains("whole names only"), "{result}");
}

/// tree-sitter's Python parser keeps 511 indentation levels: a file nested deeper is
/// refused with that reason (alone or in a directory), never outlined without its outer
/// definitions.
#[test]
fn outline_says_when_python_is_nested_deeper_than_its_parser_keeps() {
    let ws = symbols_workspace();
    let dir = ws.app.join("deep");
    std::fs::create_dir(&dir).unwrap();
    let mut deep = String::new();
    for i in 0..900 {
        deep.push_str(&format!("{}def f{i}():\n", " ".repeat(i)));
    }
    deep.push_str(&format!("{}pass\n", " ".repeat(900)));
    std::fs::write(dir.join("deep.py"), deep).unwrap();
    std::fs::write(dir.join("flat.py"), "def flat():\n    pass\n").unwrap();
    let mut client = server(&ws, &[]);
    let result = client.call("outline", json!({"path": "deep/deep.py"}));
    assert!(!is_error(&result), "{result}");
    let reason = "nested deeper than 511 indentation levels";
    assert!(text(&result).contains(reason), "{result}");
    assert!(!text(&result).contains("def f"), "{result}");
    let file = &structured(&result)["files"][0];
    assert!(file["note"].as_str().unwrap().contains(reason), "{result}");
    assert!(file.get("definitions").is_none(), "{result}");
    assert_eq!(structured(&result)["stats"]["too_deep"], 1, "{result}");
    // In a directory, next to a file that outlines.
    let result = client.call("outline", json!({"path": "deep"}));
    let body = text(&result);
    assert!(body.contains(&format!("deep.py: {reason}")), "{result}");
    assert!(body.contains("function def flat():"), "{result}");
    // read_file + symbol says why too.
    let result = client.call("read_file", json!({"path": "deep/deep.py", "symbol": "f0"}));
    assert!(text(&result).contains(reason), "{result}");
}

/// A long `symbols` query reports progress (files parsed) and a cancel stops it: no
/// response, the search threads given back, the CPU idle.
#[cfg(target_os = "linux")]
#[test]
fn symbols_reports_progress_and_stops_when_cancelled() {
    use std::time::Duration;
    let ws = workspace();
    // Many C files that all mention the name and take a while to parse.
    let mut body = String::new();
    for i in 0..4_000 {
        body.push_str(&format!(
            "static int needle_{i}(int a) {{ if (a) {{ return needle_{i}(a - 1); }} return 0; }}\n"
        ));
    }
    for i in 0..300 {
        std::fs::write(ws.app.join(format!("f{i:03}.c")), &body).unwrap();
    }
    let mut client = server(&ws, &[]);
    let pid = client.pid();
    let running = client.start(
        "tools/call",
        json!({"name": "symbols", "arguments": {"query": "needle"},
               "_meta": {"progressToken": "sym"}}),
    );
    let first = client.wait_for(Duration::from_secs(60), |m| {
        m["method"] == "notifications/progress" || m.get("id") == Some(&json!(running))
    });
    let first = first.expect("progress or an answer");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progressToken"], "sym");
    client.notify("notifications/cancelled", json!({"requestId": running}));
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
    // The quick query needs a permit of the search pool, which the cancelled one must
    // have given back; it looks at the one small file under src/ only: over the whole
    // root it would grep the 96 MB of C twice (no name starts with "main", so the fuzzy
    // pass runs too), which an unoptimized build on a loaded machine did not finish
    // within the 10 s a call waits (the failure seen once in a full run).
    let asked = std::time::Instant::now();
    let quick = client
        .call_within(
            "symbols",
            json!({"query": "main", "path": "src"}),
            Duration::from_secs(30),
        )
        .expect("no answer to a quick query after the cancel: the pool is still held");
    let quick = &quick["result"];
    assert!(!is_error(quick), "{quick}");
    assert_eq!(quick["structuredContent"]["total"], 1, "{quick}");
    eprintln!("quick query after the cancel: {:?}", asked.elapsed());
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(1)); // a measuring window, not a wait
    let used = cpu_ticks(pid) - before;
    assert!(
        used <= 30,
        "{used} ticks of CPU in the second after the cancel"
    );
    let late = client.collect(Duration::from_millis(200), |m| {
        m.get("id") == Some(&json!(running))
    });
    assert!(
        late.is_empty(),
        "an answer to a cancelled request: {late:?}"
    );
}

/// A read of one definition outside the roots asks the user once: allowed without
/// "remember", the file is parsed and read on that one answer.
#[test]
fn read_file_symbol_outside_the_roots_asks_once() {
    let ws = symbols_workspace();
    let mut client = Client::spawn(&["--no-watch", s(&ws.app)], &ws.base);
    client.handshake(json!({"elicitation": {}}));
    let path = ws.outside.join("hidden.rs");
    let id = client.start(
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": s(&path), "symbol": "parse"}}),
    );
    let question = client
        .server_request("elicitation/create", WAIT)
        .expect("the user is asked");
    client.respond(
        &question["id"],
        json!({"action": "accept", "content": {"allow": true}}),
    );
    let (seen, answer) = client.read_until_response(id, WAIT);
    let asked = seen
        .iter()
        .filter(|m| m["method"] == "elicitation/create")
        .count();
    assert_eq!(asked, 0, "asked a second time: {seen:?}");
    let result = &answer["result"];
    assert!(!is_error(result), "{result}");
    assert!(text(result).contains("1\tpub fn parse() {}"), "{result}");
}

/// `(line, "kind name start-end")` of each structured match, in file order then line
/// order, the scope absent as "-".
fn scopes(result: &Value) -> Vec<(u64, String)> {
    let mut all = Vec::new();
    for file in structured(result)["matches"].as_array().unwrap() {
        let mut rows: Vec<(u64, String)> = Vec::new();
        for m in file["matches"].as_array().into_iter().flatten() {
            rows.push((m[0].as_u64().unwrap(), "-".to_string()));
        }
        for scope in file["scopes"].as_array().into_iter().flatten() {
            let shown = format!(
                "{} {} {}-{}",
                scope[2].as_str().unwrap(),
                scope[3].as_str().unwrap(),
                scope[0],
                scope[1]
            );
            for m in scope[4].as_array().unwrap() {
                rows.push((m[0].as_u64().unwrap(), shown.clone()));
            }
        }
        rows.sort();
        all.extend(rows);
    }
    all
}

#[test]
fn grep_scope_names_each_matchs_enclosing_definition() {
    let ws = symbols_workspace();
    std::fs::write(ws.app.join("src").join("notes.md"), "call helper first\n").unwrap();
    let mut client = server(&ws, &[]);
    let rs = ws.app.join("src").join("sample.rs");
    let md = ws.app.join("src").join("notes.md");
    // No output_mode: scope implies content.
    let result = client.call(
        "grep",
        json!({"pattern": "helper", "path": [s(&rs), s(&md)], "scope": true}),
    );
    assert!(!is_error(&result), "{result}");
    assert!(
        structured(&result)["matches"].is_array(),
        "content mode: {result}"
    );
    assert_eq!(
        scopes(&result),
        vec![
            (1, "-".to_string()),
            (26, "method Parser::parse 24-28".to_string()),
            (37, "function helper 37-37".to_string()),
            (48, "function inner::deep 47-50".to_string()),
        ],
        "{result}"
    );
    // The text names each new scope before its lines, like a diff hunk header; a file
    // without symbols gets none.
    let body = text(&result);
    let expected = format!(
        "{}\n1:call helper first\n\n{}\n@@ method Parser::parse (24-28)\n26:        helper();\n--\n@@ function helper (37-37)\n37:fn helper() {{}}\n--\n@@ function inner::deep (47-50)\n48:            super::super::helper();\n",
        Path::new("src").join("notes.md").display(),
        Path::new("src").join("sample.rs").display()
    );
    assert!(body.starts_with(&expected), "{body}");
    // Leaving every definition is said, so no match looks scoped when it is not.
    let small = ws.app.join("src").join("small.rs");
    std::fs::write(
        &small,
        "fn first() {\n    target();\n}\n// target between\nfn second() { target(); }\n",
    )
    .unwrap();
    let result = client.call(
        "grep",
        json!({"pattern": "target", "path": s(&small), "scope": true}),
    );
    let expected = format!(
        "{}\n@@ function first (1-3)\n2:    target();\n--\n@@ (outside any definition)\n4:// target between\n@@ function second (5-5)\n5:fn second() {{ target(); }}\n",
        Path::new("src").join("small.rs").display()
    );
    assert!(text(&result).starts_with(&expected), "{result}");
    // Other modes with scope: a precise error, not a silent drop.
    let result = client.call(
        "grep",
        json!({"pattern": "helper", "output_mode": "count", "scope": true}),
    );
    assert!(is_error(&result));
    assert!(
        text(&result).contains("output_mode \"content\""),
        "{result}"
    );
    // Without scope, no scope fields and no scope lines.
    let result = client.call(
        "grep",
        json!({"pattern": "helper", "path": s(&rs), "output_mode": "content"}),
    );
    assert!(!text(&result).contains("@@"), "{result}");
    assert!(structured(&result)["matches"][0].get("scopes").is_none());
}

/// With the watcher the scopes come from the symbol index, and a saved file's scopes are
/// right at once (the file is parsed on demand until the index has it again).
#[test]
fn grep_scope_follows_a_saved_file() {
    let ws = symbols_workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    // Generous: the build runs at a low priority, behind whatever else loads the machine.
    wait_symbols(&mut client, "ready", std::time::Duration::from_secs(120));
    let rs = ws.app.join("src").join("sample.rs");
    let ask = |client: &mut Client| {
        client.call(
            "grep",
            json!({"pattern": "helper\\(\\);", "path": s(&rs), "scope": true}),
        )
    };
    let before = ask(&mut client);
    assert_eq!(
        scopes(&before),
        vec![
            (26, "method Parser::parse 24-28".to_string()),
            (48, "function inner::deep 47-50".to_string())
        ],
        "{before}"
    );
    // Two lines inserted at the top: every scope moves down by two, at once.
    let old = std::fs::read_to_string(&rs).unwrap();
    std::fs::write(&rs, format!("// one\n// two\n{old}")).unwrap();
    let after = ask(&mut client);
    assert_eq!(
        scopes(&after),
        vec![
            (28, "method Parser::parse 26-30".to_string()),
            (50, "function inner::deep 49-52".to_string())
        ],
        "{after}"
    );
}
