//! Hostile arguments built from the tools' own schemas: for every tool in `tools/list` (all
//! of them, `--tools all`), argument objects whose values sit at the extremes of each
//! property's declared type (0, the declared maximum and just above it, -1, 2^31, 2^53,
//! 2^64 - 1, floats, wrong types, nulls, empty and huge strings, odd paths, unknown keys,
//! non-object arguments), each property alone and then in seeded random combinations.
//! Each request goes through the real binary, confined to a scratch directory (so write
//! tools cannot touch anything else), and must be answered exactly once (a result or an
//! error, never a hang, never a crash); a `ping` is answered at the end. Failures are
//! collected per case and reported together, so one run shows every case that breaks.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::support::*;

/// A small deterministic generator (xorshift64*): the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// The JSON types a property schema allows (`type` as a string or a list, or `anyOf`).
fn types_of(schema: &Value) -> Vec<String> {
    let mut types = Vec::new();
    match &schema["type"] {
        Value::String(t) => types.push(t.clone()),
        Value::Array(list) => {
            types.extend(list.iter().filter_map(|t| t.as_str().map(String::from)))
        }
        _ => {}
    }
    if let Some(any) = schema["anyOf"].as_array() {
        for sub in any {
            types.extend(types_of(sub));
        }
    }
    types
}

/// Strings a model could send as paths, patterns or text: empty, huge, odd and hostile.
fn strings() -> Vec<Value> {
    vec![
        json!(""),
        json!("src/main.rs"),
        json!("src"),
        json!("."),
        json!("/"),
        json!(".."),
        json!("../outside/secret.txt"),
        json!("%2e%2e/%2e%2e/etc/passwd"),
        json!("file:///etc/passwd"),
        json!("~/"),
        json!("src/"),
        json!("src/main.rs/"),
        json!("naïve/日本語/файл.rs"),
        json!("é"),
        json!("a\u{0}b"),
        json!("line\nbreak"),
        json!("*"),
        json!("**/*"),
        json!("(unclosed"),
        json!("\\"),
        json!("x".repeat(100_000)),
        json!("é".repeat(20_000)),
        json!("a/".repeat(3_000)),
    ]
}

/// Integers at the edges, plus the schema's own `maximum` and just above it.
fn integers(schema: &Value) -> Vec<Value> {
    let mut values = vec![
        json!(0),
        json!(1),
        json!(-1),
        json!(i32::MAX),
        json!(1_000_000_000),
        json!(9_007_199_254_740_992u64), // 2^53
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1.5),
        json!(1e300),
        json!(-0.0),
    ];
    if let Some(max) = schema["maximum"].as_u64() {
        values.push(json!(max));
        values.push(json!(max + 1));
    }
    if let Some(min) = schema["minimum"].as_i64() {
        values.push(json!(min));
        values.push(json!(min - 1));
    }
    values
}

/// Values for one property: extremes of each type it allows, then wrong types.
fn values_for(schema: &Value) -> Vec<Value> {
    let mut values = Vec::new();
    if let Some(choices) = schema["enum"].as_array() {
        values.extend(choices.iter().cloned());
        values.push(json!("not-a-choice"));
    }
    for t in types_of(schema) {
        match t.as_str() {
            "integer" | "number" => values.extend(integers(schema)),
            "boolean" => values.extend([json!(true), json!(false)]),
            "string" => values.extend(strings()),
            "array" => {
                values.push(json!([]));
                values.push(json!(["src/main.rs"]));
                values.push(json!(vec!["src/main.rs"; 500]));
                values.push(json!(["x".repeat(100_000)]));
                values.push(json!([null, 1, {}]));
                // Items as the schema describes them (e.g. edit objects).
                if schema["items"]["type"] == "object" {
                    values.push(json!([{"old_string": "fn", "new_string": "fn"}]));
                    values.push(json!([{"old_string": "", "new_string": "x"}]));
                    values.push(
                        json!([{"old_string": "main", "new_string": "x".repeat(100_000), "replace_all": true}]),
                    );
                    values.push(json!([{"old_string": "a", "new_string": "b", "extra": 1}]));
                    // Each edit doubles every "fn" of the file (which has some).
                    values.push(json!(vec![
                        json!({"old_string": "fn", "new_string": "fnfn", "replace_all": true});
                        64
                    ]));
                }
            }
            "object" => values.extend([json!({}), json!({"a": 1})]),
            _ => {}
        }
    }
    // Wrong types and null for every property.
    values.extend([
        json!(null),
        json!(7),
        json!("7"),
        json!([]),
        json!({}),
        json!(true),
    ]);
    values
}

/// A valid baseline for the required properties (so one changed property is what is
/// judged).
fn baseline(name: &str, schema: &Value) -> Map<String, Value> {
    let mut args = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for key in required {
        let key = key.as_str().unwrap();
        let value = match (name, key) {
            (_, "pattern") if name == "glob" => json!("**/*.rs"),
            (_, "pattern") => json!("fn"),
            (_, "paths") => json!(["src/main.rs"]),
            (_, "content") => json!("hello\n"),
            ("move_file", "source") => json!("src/lib.rs"),
            ("move_file", "destination") => json!("src/moved.rs"),
            ("create_directory", "path") => json!("made/deep"),
            ("write_file", "path") => json!("written.txt"),
            (_, "path") => json!("src/main.rs"),
            _ => json!("x"),
        };
        args.insert(key.to_string(), value);
    }
    args
}

/// Every case for one tool: arguments objects (or non-objects) to send.
fn cases(name: &str, schema: &Value, seed: u64) -> Vec<Value> {
    let base = baseline(name, schema);
    let properties: Vec<(String, Value)> = schema["properties"]
        .as_object()
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let mut cases = vec![
        Value::Object(base.clone()),
        json!(null),
        json!([]),
        json!("arguments"),
        json!(5),
        json!({}),
    ];
    // Unknown keys, alone and beside the baseline.
    let mut unknown = base.clone();
    unknown.insert("zzz_unknown".into(), json!(1));
    cases.push(Value::Object(unknown));
    let mut unknown = base.clone();
    unknown.insert("__proto__".into(), json!({"polluted": true}));
    cases.push(Value::Object(unknown));
    // Each property alone at each extreme.
    for (key, prop) in &properties {
        for value in values_for(prop) {
            let mut args = base.clone();
            args.insert(key.clone(), value);
            cases.push(Value::Object(args));
        }
        // And missing (for a required one).
        let mut args = base.clone();
        args.remove(key);
        cases.push(Value::Object(args));
    }
    // Seeded random combinations: each property present at a random extreme, or absent.
    let mut rng = Rng(seed);
    let choices: Vec<Vec<Value>> = properties.iter().map(|(_, p)| values_for(p)).collect();
    for _ in 0..40 {
        let mut args = Map::new();
        for ((key, _), values) in properties.iter().zip(&choices) {
            if !rng.next().is_multiple_of(3) {
                args.insert(key.clone(), rng.pick(values).clone());
            }
        }
        cases.push(Value::Object(args));
    }
    cases
}

/// A scratch workspace with a little of everything for the tools to chew on.
fn scratch() -> Workspace {
    let ws = workspace();
    let app = &ws.app;
    std::fs::write(app.join("src/lib.rs"), "pub fn main() {}\nfn x() {}\n").unwrap();
    std::fs::write(app.join("src/crlf.txt"), "a\r\nb\r\n").unwrap();
    std::fs::write(app.join("src/bin.dat"), b"\x00\x01\x02fn\xff").unwrap();
    std::fs::create_dir_all(app.join("deep/a/b/c")).unwrap();
    std::fs::write(app.join("deep/a/b/c/d.txt"), "deep fn\n").unwrap();
    std::fs::write(app.join("naïve.rs"), "fn é() {}\n").unwrap();
    ws
}

/// Sends every case for `tool` and returns a description of each one that was not
/// answered exactly once (or crashed the server, which is then restarted).
fn fuzz_tool(tool: &str, seed: u64) -> Vec<String> {
    let ws = scratch();
    let start = |ws: &Workspace| {
        // 4 GiB of address space: a runaway allocation fails the server, not the machine.
        let mut client = Client::spawn_limited(
            &["--tools", "all", "--confine", s(&ws.app)],
            &ws.app,
            4 * 1024 * 1024,
        );
        client.handshake(json!({}));
        client
    };
    let mut client = start(&ws);
    let listed = client.request("tools/list", json!({}));
    let schema = listed["result"]["tools"]
        .as_array()
        .expect("tools/list")
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("{tool} is not in tools/list"))["inputSchema"]
        .clone();
    let mut failures = Vec::new();
    let all = cases(tool, &schema, seed);
    for arguments in &all {
        let shown = {
            let text = arguments.to_string();
            if text.len() > 200 {
                let cut = (0..=200).rev().find(|&i| text.is_char_boundary(i)).unwrap();
                format!("{}… ({} bytes)", &text[..cut], text.len())
            } else {
                text
            }
        };
        let id = client.start("tools/call", json!({"name": tool, "arguments": arguments}));
        // Read everything up to this answer: an answer to an earlier id is a duplicate.
        let mut seen = Vec::new();
        let answer = loop {
            match client.recv(Duration::from_secs(20)) {
                Some(m) if is_response_to(&m, id) => break Some(m),
                Some(m) => seen.push(m),
                None => break None,
            }
        };
        for m in &seen {
            if m.get("method").is_none() && m.get("id").is_some() {
                failures.push(format!("{tool} {shown}: stray response {m}"));
            }
        }
        match answer {
            Some(m) if m.get("result").is_some() || m.get("error").is_some() => {}
            Some(m) => failures.push(format!("{tool} {shown}: neither result nor error: {m}")),
            None => {
                let exited = client.child.try_wait().unwrap();
                failures.push(match exited {
                    Some(status) => format!("{tool} {shown}: server died ({status})"),
                    None => format!("{tool} {shown}: no answer within 20 s"),
                });
                client = start(&ws);
            }
        }
    }
    // Still serving, and nothing arrives late for any case.
    let late: Vec<Value> = client
        .until_ping()
        .into_iter()
        .filter(|m| m.get("method").is_none())
        .collect();
    if !late.is_empty() {
        failures.push(format!("{tool}: late responses {late:?}"));
    }
    eprintln!("{tool}: {} cases", all.len());
    failures
}

/// The seed for a tool's random combinations: its place in [`FUZZED`].
fn seed(tool: &str) -> u64 {
    FUZZED.iter().position(|t| *t == tool).unwrap() as u64 + 1
}

fn check(tool: &str) {
    let failures = fuzz_tool(tool, seed(tool));
    assert!(
        failures.is_empty(),
        "{} failing cases for {tool}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every tool in `tools/list` is covered by one of the tests below.
#[test]
fn every_listed_tool_is_fuzzed() {
    let ws = scratch();
    let mut client = Client::spawn(&["--tools", "all", "--confine", s(&ws.app)], &ws.app);
    client.handshake(json!({}));
    let listed = client.request("tools/list", json!({}));
    let mut names: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    let mut covered = FUZZED.to_vec();
    covered.sort();
    assert_eq!(names, covered, "a tool without a fuzz test (add it below)");
}

const FUZZED: [&str; 16] = [
    "create_directory",
    "directory_tree",
    "edit_file",
    "file_info",
    "glob",
    "grep",
    "list_directory",
    "list_roots",
    "move_file",
    "outline",
    "read_file",
    "read_files",
    "references",
    "search",
    "symbols",
    "write_file",
];

#[test]
fn fuzz_symbols() {
    check("symbols");
}

#[test]
fn fuzz_search() {
    check("search");
}

#[test]
fn fuzz_outline() {
    check("outline");
}

#[test]
fn fuzz_references() {
    check("references");
}

#[test]
fn fuzz_grep() {
    check("grep");
}

#[test]
fn fuzz_glob() {
    check("glob");
}

#[test]
fn fuzz_list_roots() {
    check("list_roots");
}

#[test]
fn fuzz_file_info() {
    check("file_info");
}

#[test]
fn fuzz_read_file() {
    check("read_file");
}

#[test]
fn fuzz_read_files() {
    check("read_files");
}

#[test]
fn fuzz_list_directory() {
    check("list_directory");
}

#[test]
fn fuzz_directory_tree() {
    check("directory_tree");
}

#[test]
fn fuzz_write_file() {
    check("write_file");
}

#[test]
fn fuzz_edit_file() {
    check("edit_file");
}

#[test]
fn fuzz_create_directory() {
    check("create_directory");
}

#[test]
fn fuzz_move_file() {
    check("move_file");
}
