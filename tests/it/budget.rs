//! The output budget (`--max-output-bytes`) bounds each form of every tool's answer as
//! serialized: the text form (text as escaped in JSON, images, error texts and the result
//! around them) and, on its own equal budget, the structured content. Each case would
//! exceed a 4 KiB budget many times over if it were not cut; names and lines full of
//! characters JSON escapes (`"`, `\`, control characters) make the serialized form up to six
//! times the raw one. Paging still works: `next_offset` (or the continuation line's
//! offset) always moves forward, and following it reaches everything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

const BUDGET: usize = 4096;
const SLOW: Duration = Duration::from_secs(60);

/// What fills names: a control character, which JSON escapes as six bytes (`\u0001`).
/// Windows forbids `"`, `\` and control characters in names, so there names are long but
/// plain (file contents, which may hold anything, still escape heavily everywhere).
const NAME_FILL: char = if cfg!(windows) { 'x' } else { '\u{1}' };

/// A name of `len` bytes that JSON escapes heavily (control characters become `\u0001`);
/// on Windows a plain one (see [`NAME_FILL`]).
fn escaped_name(tag: &str, len: usize) -> String {
    let mut name = if cfg!(windows) {
        tag.to_string()
    } else {
        format!("{tag}\"\\")
    };
    while name.len() < len {
        name.push(NAME_FILL);
    }
    name
}

fn server(args: &[&str], cwd: &Path) -> Client {
    let mut all = vec!["--no-watch", "--max-output-bytes"];
    let budget = BUDGET.to_string();
    all.push(&budget);
    all.extend_from_slice(args);
    let mut client = Client::spawn(&all, cwd);
    client.handshake(json!({}));
    client
}

/// Calls a tool; checks each form of its answer against `budget` (see `forms`) and
/// returns the result.
fn call_within_budget(client: &mut Client, budget: usize, tool: &str, args: Value) -> Value {
    let response = client
        .call_within(tool, args.clone(), SLOW)
        .unwrap_or_else(|| panic!("{tool}: no answer"));
    assert!(response.get("error").is_none(), "{tool}: {response}");
    let (text, structured) = forms(&response["result"]);
    let shown: String = args.to_string().chars().take(200).collect();
    assert!(
        text <= budget,
        "{tool} {shown}: the text form takes {text} bytes, over the {budget}-byte budget"
    );
    assert!(
        structured <= budget,
        "{tool} {shown}: the structured content takes {structured} bytes, over the \
         {budget}-byte budget"
    );
    response["result"].clone()
}

fn call(client: &mut Client, tool: &str, args: Value) -> Value {
    call_within_budget(client, BUDGET, tool, args)
}

/// The `offset=N` of a continuation line.
fn continuation(text: &str) -> Option<usize> {
    let at = text.rfind("offset=")? + "offset=".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[test]
fn list_directory_pages_through_escaped_names_within_the_budget() {
    let ws = workspace();
    let dir = ws.app.join("many");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..120 {
        std::fs::write(dir.join(escaped_name(&format!("{i:03}"), 60)), "x").unwrap();
    }
    // One entry larger than the budget on its own: shown cut, never skipped.
    std::fs::write(dir.join(escaped_name("999", 250)), "x").unwrap();
    let mut client = server(&[], &ws.app);
    let mut offset = 0;
    let mut seen = 0;
    loop {
        let result = call(
            &mut client,
            "list_directory",
            json!({"path": s(&dir), "sizes": true, "head_limit": 0, "offset": offset}),
        );
        assert!(!is_error(&result), "{}", text(&result));
        let listed = &result["structuredContent"]["directories"][0];
        let entries = listed["entries"].as_array().unwrap().len();
        assert!(entries > 0, "offset {offset}: no entry shown");
        seen += entries;
        match listed["next_offset"].as_u64() {
            Some(next) => {
                let next = next as usize;
                assert!(next > offset, "next_offset {next} after offset {offset}");
                assert_eq!(continuation(&text(&result)), Some(next));
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(seen, 121);
}

#[test]
fn list_directory_and_tree_of_many_roots_fit() {
    let ws = workspace();
    let mut args = Vec::new();
    for i in 0..150 {
        let root = ws.app.join(escaped_name(&format!("r{i:03}"), 40));
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("f.txt"), "x").unwrap();
        args.push(root);
    }
    let args: Vec<&str> = args.iter().map(|p| s(p)).collect();
    let mut client = server(&args, &ws.app);
    let result = call(&mut client, "list_directory", json!({}));
    assert!(!is_error(&result), "{}", text(&result));
    assert!(text(&result).contains("output budget"), "{}", text(&result));
    let result = call(&mut client, "directory_tree", json!({}));
    assert!(!is_error(&result));
    let result = call(&mut client, "list_roots", json!({"head_limit": 1000}));
    let next = result["structuredContent"]["next_offset"].as_u64().unwrap();
    assert!(next > 0);
    assert_eq!(continuation(&text(&result)), Some(next as usize));
}

#[test]
fn directory_tree_of_escaped_names_fits() {
    let ws = workspace();
    for i in 0..40 {
        let sub = ws.app.join(escaped_name(&format!("d{i:02}"), 50));
        std::fs::create_dir(&sub).unwrap();
        for j in 0..5 {
            std::fs::write(sub.join(escaped_name(&format!("f{j}"), 50)), "x").unwrap();
        }
    }
    let mut client = server(&[], &ws.app);
    let result = call(&mut client, "directory_tree", json!({"head_limit": 0}));
    assert!(!is_error(&result));
    // Escaped names are cut by the budget on the serialized answer; Windows names are plain
    // (see NAME_FILL), so there the tree's own size limit, counted on raw text, cuts first.
    let cut = text(&result).contains("output budget")
        || (cfg!(windows) && text(&result).contains("output size limit reached"));
    assert!(cut, "{}", text(&result));
}

#[test]
fn list_roots_pages_through_many_named_roots() {
    let ws = workspace();
    let mut roots: Vec<PathBuf> = Vec::new();
    for i in 0..60 {
        let root = ws.app.join(escaped_name(&format!("{i:02}"), 100));
        std::fs::create_dir(&root).unwrap();
        roots.push(root);
    }
    let mut client = Client::spawn(&["--no-watch", "--max-output-bytes", "4096"], &ws.app);
    client.handshake(json!({"roots": {"listChanged": true}}));
    let request = client
        .server_request("roots/list", SLOW)
        .expect("roots/list");
    let listed: Vec<Value> = roots
        .iter()
        .map(|p| json!({"uri": uri(p), "name": escaped_name("n", 400)}))
        .collect();
    client.respond(&request["id"], json!({"roots": listed}));
    let mut offset = 0;
    let mut seen = 0;
    loop {
        let result = call(&mut client, "list_roots", json!({"offset": offset}));
        let page = result["structuredContent"]["roots"]
            .as_array()
            .unwrap()
            .len();
        assert!(page > 0, "offset {offset}: no root shown");
        seen += page;
        match result["structuredContent"]["next_offset"].as_u64() {
            Some(next) => {
                assert!(next as usize > offset);
                assert_eq!(continuation(&text(&result)), Some(next as usize));
                offset = next as usize;
            }
            None => break,
        }
    }
    assert_eq!(seen, 60);
}

/// A path of several long, escape-heavy components: thousands of bytes once serialized.
fn deep_path(base: &Path, levels: usize) -> PathBuf {
    // Wine's GetFinalPathNameByHandleW fails (ERROR_MORE_DATA) for paths longer than
    // MAX_PATH (260) characters, so `canonicalize` does too: there one level.
    let levels = if cfg!(windows) { levels.min(1) } else { levels };
    let mut path = base.to_path_buf();
    for i in 0..levels {
        path.push(escaped_name(&format!("l{i}"), 200));
    }
    path
}

#[test]
#[cfg(unix)] // a symlink to the file is part of the case
fn file_info_of_a_long_escaped_path_fits() {
    let ws = workspace();
    let dir = deep_path(&ws.app, 4);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(escaped_name("file", 200));
    std::fs::write(&file, "text\n").unwrap();
    let link = ws.app.join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let mut client = server(&[], &ws.app);
    for path in [&file, &link] {
        let result = call(&mut client, "file_info", json!({"path": s(path)}));
        assert!(!is_error(&result), "{}", text(&result));
        assert_eq!(result["structuredContent"]["type"], "file");
    }
}

#[test]
fn read_file_pages_through_escape_heavy_lines_within_the_budget() {
    let ws = workspace();
    let line = "\"\\\u{1}".repeat(100);
    let body: String = (0..300).map(|i| format!("{i} {line}\n")).collect();
    std::fs::write(ws.app.join("esc.txt"), &body).unwrap();
    // One line larger than the budget on its own.
    std::fs::write(
        ws.app.join("wide.txt"),
        format!("{}\nnext\n", "\u{1}".repeat(1900)),
    )
    .unwrap();
    let mut client = server(&[], &ws.app);
    let mut offset = 1;
    let mut pages = 0;
    loop {
        let result = call(
            &mut client,
            "read_file",
            json!({"path": "esc.txt", "offset": offset}),
        );
        assert!(!is_error(&result), "{}", text(&result));
        pages += 1;
        match continuation(&text(&result)) {
            Some(next) => {
                assert!(next > offset, "offset={next} after {offset}");
                offset = next;
            }
            None => break,
        }
        assert!(pages < 400);
    }
    assert!(text(&read_last(&mut client, offset)).contains("299 "));
    let wide = call(&mut client, "read_file", json!({"path": "wide.txt"}));
    assert_eq!(continuation(&text(&wide)), Some(2), "{}", text(&wide));
    let result = call(
        &mut client,
        "read_files",
        json!({"paths": ["esc.txt", "wide.txt", "esc.txt", "src/main.rs"]}),
    );
    assert!(!is_error(&result));
}

fn read_last(client: &mut Client, offset: usize) -> Value {
    call(
        client,
        "read_file",
        json!({"path": "esc.txt", "offset": offset}),
    )
}

/// A file that starts like a PNG: read_file returns it as an image.
fn fake_png(path: &Path, size: usize) {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.resize(size, 7);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn images_count_against_the_budget() {
    let ws = workspace();
    for name in ["a.png", "b.png", "c.png"] {
        fake_png(&ws.app.join(name), 30_000);
    }
    let budget = 100_000;
    let mut client = Client::spawn(&["--no-watch", "--max-output-bytes", "100000"], &ws.app);
    client.handshake(json!({}));
    let result = call_within_budget(&mut client, budget, "read_file", json!({"path": "a.png"}));
    assert!(
        result["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "image")
    );
    let result = call_within_budget(
        &mut client,
        budget,
        "read_files",
        json!({"paths": ["a.png", "b.png", "c.png", "a.png", "b.png"]}),
    );
    let images = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "image")
        .count();
    assert!((1..5).contains(&images), "{images} images");
    // An image under a long, escape-heavy path: the sentence naming it is cut, the image
    // keeps its room.
    let dir = deep_path(&ws.app, 6);
    std::fs::create_dir_all(&dir).unwrap();
    fake_png(&dir.join("d.png"), 72_000);
    let path = dir.join("d.png");
    let result = call_within_budget(&mut client, budget, "read_file", json!({"path": s(&path)}));
    assert!(
        result["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "image")
    );
}

#[test]
fn write_tools_answers_fit() {
    let ws = workspace();
    let mut client = server(&[], &ws.app);
    // Many long directories created at once, each named in the answer.
    let deep = deep_path(&ws.app.join("w"), 12);
    let result = call(
        &mut client,
        "write_file",
        json!({"path": s(&deep.join("f.txt")), "content": "x", "create_dirs": true}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    let deep2 = deep_path(&ws.app.join("c"), 12);
    let result = call(&mut client, "create_directory", json!({"path": s(&deep2)}));
    assert!(!is_error(&result), "{}", text(&result));
    let result = call(
        &mut client,
        "move_file",
        json!({"source": s(&deep.join("f.txt")), "destination": s(&deep2.join("g.txt"))}),
    );
    assert!(!is_error(&result), "{}", text(&result));
    // A diff many times the budget, and an error quoting a huge argument.
    let body: String = (0..2000).map(|i| format!("line {i} a\n")).collect();
    std::fs::write(ws.app.join("big.txt"), body).unwrap();
    for dry_run in [true, false] {
        let result = call(
            &mut client,
            "edit_file",
            json!({"path": "big.txt", "old_string": "a\n", "new_string": "\"\u{1}\"\n",
                   "replace_all": true, "dry_run": dry_run}),
        );
        assert!(!is_error(&result), "{}", text(&result));
        assert_eq!(result["structuredContent"]["replacements"][0], 2000);
    }
    let result = call(
        &mut client,
        "edit_file",
        json!({"path": "big.txt", "old_string": "\u{1}".repeat(50_000), "new_string": "x"}),
    );
    assert!(is_error(&result));
}

#[test]
fn search_answers_fit() {
    let ws = workspace();
    for i in 0..50 {
        let body = format!("needle {}\n", "\"\u{1}".repeat(100)).repeat(20);
        std::fs::write(ws.app.join(escaped_name(&format!("{i:02}"), 80)), body).unwrap();
    }
    let mut client = server(&[], &ws.app);
    for (tool, args) in [
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "content", "-C": 2}),
        ),
        ("grep", json!({"pattern": "needle", "head_limit": 0})),
        ("glob", json!({"pattern": "*", "head_limit": 0})),
    ] {
        let result = call(&mut client, tool, args);
        assert!(result["structuredContent"]["next_offset"].as_u64().unwrap() > 0);
    }
}

/// symbols, outline and references over definitions whose names and lines JSON escapes
/// heavily: every answer within the budget, paged.
#[test]
fn symbols_answers_fit() {
    let ws = workspace();
    for i in 0..40 {
        let mut body = String::new();
        for j in 0..30 {
            body.push_str(&format!(
                "pub fn needle_{i}_{j}() {{ let _ = \"{}\"; needle_{i}_{j}(); }}\n",
                "\\\"\u{1}".repeat(40)
            ));
        }
        std::fs::write(
            ws.app
                .join(format!("{}.rs", escaped_name(&format!("{i:02}"), 60))),
            body,
        )
        .unwrap();
    }
    let mut client = server(&[], &ws.app);
    for (tool, args) in [
        ("symbols", json!({"query": "needle", "head_limit": 0})),
        ("outline", json!({"path": s(&ws.app), "head_limit": 0})),
        ("references", json!({"name": "needle_1_1"})),
        ("references", json!({"name": "needle_1_1", "head_limit": 0})),
    ] {
        let result = call(&mut client, tool, args.clone());
        assert!(!is_error(&result), "{tool} {args}: {result}");
    }
    for (tool, args) in [
        ("symbols", json!({"query": "needle", "head_limit": 0})),
        ("outline", json!({"path": s(&ws.app), "head_limit": 0})),
    ] {
        let result = call(&mut client, tool, args);
        let next = result["structuredContent"]["next_offset"].as_u64();
        assert!(
            next.is_some_and(|n| n > 0),
            "{tool}: {}",
            result["structuredContent"]["total"]
        );
        assert_eq!(continuation(&text(&result)), next.map(|n| n as usize));
    }
}

/// resources/read returns a file whole in one message: a file over the documented 16 MiB
/// cap (here a sparse 1 GiB one, and one a byte over the cap) is refused at once with a
/// JSON-RPC error naming the cap and pointing to read_file, never loaded.
#[test]
fn resources_read_refuses_files_over_the_cap() {
    let ws = workspace();
    let cap: u64 = 16 * 1024 * 1024;
    for (name, size) in [("huge.bin", 1u64 << 30), ("over.txt", cap + 1)] {
        let path = ws.app.join(name);
        std::fs::File::create(&path).unwrap().set_len(size).unwrap();
    }
    let mut client = server(&[], &ws.app);
    let templates = client.request("resources/templates/list", json!({}));
    let described = templates["result"]["resourceTemplates"][0]["description"].to_string();
    assert!(described.contains("16 MiB"), "{described}");
    for (name, size) in [("huge.bin", 1u64 << 30), ("over.txt", cap + 1)] {
        let target = uri(&ws.app.join(name));
        let response = client.request("resources/read", json!({"uri": target}));
        let error = &response["error"];
        assert_eq!(error["code"], -32602, "{response}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("16.0 MiB") && message.contains("read_file"),
            "{message}"
        );
        assert_eq!(error["data"]["max_bytes"], cap);
        assert_eq!(error["data"]["size"], size);
        assert_eq!(error["data"]["uri"], target);
    }
    // Still serving.
    assert!(client.request("ping", json!({})).get("result").is_some());
}

/// A directory whose own path alone takes most of the budget: it is named cut, and its
/// entries still page to the end, one page moving on from the last.
#[test]
fn list_directory_of_a_directory_with_a_huge_name_pages_to_the_end() {
    let ws = workspace();
    let dir = deep_path(&ws.app, 3);
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..30 {
        std::fs::write(
            dir.join(format!("{i:02}-{}", NAME_FILL.to_string().repeat(30))),
            "x",
        )
        .unwrap();
    }
    let mut client = server(&[], &ws.app);
    let (mut offset, mut seen) = (0, 0);
    loop {
        let result = call(
            &mut client,
            "list_directory",
            json!({"path": s(&dir), "offset": offset}),
        );
        assert!(!is_error(&result), "{}", text(&result));
        let listed = &result["structuredContent"]["directories"][0];
        seen += listed["entries"].as_array().unwrap().len();
        match listed["next_offset"].as_u64() {
            Some(next) => {
                assert!(next as usize > offset, "next_offset {next} after {offset}");
                offset = next as usize;
            }
            None => break,
        }
    }
    assert_eq!(seen, 30);
}

/// Each form gets the whole budget: a page of grep content whose text alone fills most of
/// the budget still has its structured content, holding the same entries (the last text
/// line's offset is `next_offset`), itself within the budget. Before, both shared one.
#[test]
fn text_and_structured_content_each_get_the_whole_budget() {
    let ws = workspace();
    // A match every third line: with -C 1, no two matches share a context line (the
    // engine charges overlapping context once per match).
    let body: String = (0..400)
        .map(|i| format!("needle line {i} with some words after it\nfiller\nfiller\n"))
        .collect();
    std::fs::write(ws.app.join("many.txt"), body).unwrap();
    let mut client = server(&[], &ws.app);
    for tool_args in [
        json!({"pattern": "needle", "output_mode": "content"}),
        json!({"pattern": "needle", "output_mode": "content", "-C": 1}),
    ] {
        let result = call(&mut client, "grep", tool_args.clone());
        let (text_bytes, structured_bytes) = forms(&result);
        // More than one budget in all (impossible when both shared one), the larger form
        // filling most of its own.
        assert!(
            text_bytes + structured_bytes > BUDGET
                && text_bytes.max(structured_bytes) > BUDGET * 3 / 4,
            "{tool_args}: the forms take {text_bytes} and {structured_bytes} bytes of \
             {BUDGET}: {}",
            text(&result)
        );
        assert!(text_bytes <= BUDGET && structured_bytes <= BUDGET);
        let next = result["structuredContent"]["next_offset"].as_u64().unwrap();
        assert_eq!(continuation(&text(&result)), Some(next as usize));
        // The same lines in both forms: a match row for each line the text marks `:` (a
        // context line that is a match of the next page is marked too).
        let rows = matched_lines(&result).len();
        let marked = text(&result)
            .lines()
            .filter(|line| line.contains(":needle line"))
            .count();
        assert_eq!(rows, marked, "{}", text(&result));
        assert!(
            (next..=next + 1).contains(&(rows as u64)),
            "{}",
            text(&result)
        );
    }
}
