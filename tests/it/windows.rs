//! Windows paths over the wire (run under Wine in CI): drive letters, `\\?\` verbatim
//! paths, mixed separators, `file:///C:/…` URIs, case-insensitive containment, reserved
//! device names, writes and no-replace moves; answers show ordinary paths (`C:\x`), never
//! the verbatim `\\?\C:\x` form.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// `\\?\C:\x` → `C:\x`: the form people and hosts write.
fn plain(path: &Path) -> String {
    let text = path.to_str().unwrap();
    text.strip_prefix(r"\\?\").unwrap_or(text).to_string()
}

#[test]
fn drive_letters_verbatim_and_mixed_separators_all_name_the_same_file() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    let main = ws.app.join("src").join("main.rs");
    let forms = [
        main.to_str().unwrap().to_string(),
        plain(&main),
        plain(&main).replace('\\', "/"),
        format!("{}/src\\main.rs", plain(&ws.app)),
        plain(&main).to_uppercase(),
        "src/main.rs".to_string(),
        r"src\main.rs".to_string(),
        uri(&main),
    ];
    for form in forms {
        let result = client.call("read_file", json!({"path": form}));
        assert!(!is_error(&result), "{form}: {}", text(&result));
        assert!(text(&result).contains("println!"), "{form}");
    }
}

#[test]
fn roots_given_as_drive_letter_uris_work() {
    let ws = workspace();
    let uri = uri(&ws.app);
    assert!(uri.starts_with("file:///"), "{uri}");
    assert!(!uri.contains('\\'), "{uri}");
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    let result = client.call("read_file", json!({"path": "src/main.rs"}));
    assert!(!is_error(&result), "{}", text(&result));
}

#[test]
fn outside_stays_outside_whatever_the_case_or_prefix() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let secret = ws.outside.join("secret.txt");
    for form in [
        plain(&secret),
        plain(&secret).to_lowercase(),
        secret.to_str().unwrap().to_string(),
        format!("{}\\..\\outside\\secret.txt", plain(&ws.app)),
        uri(&secret),
    ] {
        let result = client.call("read_file", json!({"path": form}));
        assert!(is_error(&result), "{form} was read");
        assert!(!text(&result).contains("TOP-SECRET"), "{form}");
    }
}

#[test]
fn reserved_device_names_are_refused_like_special_files() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    for name in ["NUL", "con", "COM1", "nul.txt"] {
        let read = client.call("read_file", json!({"path": name}));
        assert!(is_error(&read), "read {name}: {}", text(&read));
        let write = client.call("write_file", json!({"path": name, "content": "x"}));
        assert!(is_error(&write), "write {name}: {}", text(&write));
    }
}

#[test]
fn writes_and_moves_never_replace() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let write = client.call(
        "write_file",
        json!({"path": "notes\\a.txt", "content": "one", "create_dirs": true}),
    );
    assert!(!is_error(&write), "{}", text(&write));
    let again = client.call(
        "write_file",
        json!({"path": "notes/a.txt", "content": "two"}),
    );
    assert!(!is_error(&again), "{}", text(&again));
    assert_eq!(
        std::fs::read_to_string(ws.app.join("notes").join("a.txt")).unwrap(),
        "two"
    );
    std::fs::write(ws.app.join("b.txt"), "B").unwrap();
    let clash = client.call(
        "move_file",
        json!({"source": "notes/a.txt", "destination": "b.txt"}),
    );
    assert!(is_error(&clash), "{}", text(&clash));
    assert_eq!(std::fs::read_to_string(ws.app.join("b.txt")).unwrap(), "B");
    let moved = client.call(
        "move_file",
        json!({"source": "notes/a.txt", "destination": "c.txt"}),
    );
    assert!(!is_error(&moved), "{}", text(&moved));
    assert_eq!(
        std::fs::read_to_string(ws.app.join("c.txt")).unwrap(),
        "two"
    );
}

/// Every string in a JSON value, depth first.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fn assert_no_verbatim(what: &str, value: &Value) {
    let mut all = Vec::new();
    strings(value, &mut all);
    for text in all {
        assert!(
            !text.contains(r"\\?\"),
            "{what} shows a verbatim path: {text}"
        );
    }
}

#[test]
fn answers_show_ordinary_paths_never_the_verbatim_form() {
    let ws = workspace();
    std::fs::write(ws.app.join("src").join("lib.rs"), "pub fn hi() {}\n").unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    let app = plain(&ws.app);
    let calls = [
        ("list_roots", json!({})),
        ("grep", json!({"pattern": "println"})),
        (
            "grep",
            json!({"pattern": "println", "output_mode": "content"}),
        ),
        ("grep", json!({"pattern": "fn", "output_mode": "count"})),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("list_directory", json!({"path": "src"})),
        ("directory_tree", json!({"path": "."})),
        ("file_info", json!({"path": "src/main.rs"})),
        ("read_file", json!({"path": "src/missing.rs"})),
        ("write_file", json!({"path": "notes.txt", "content": "x"})),
        (
            "edit_file",
            json!({"path": "notes.txt", "edits": [{"old_string": "x", "new_string": "y"}]}),
        ),
        (
            "move_file",
            json!({"source": "notes.txt", "destination": "moved.txt"}),
        ),
    ];
    for (tool, args) in calls {
        let result = client.call(tool, args.clone());
        assert_no_verbatim(&format!("{tool} {args}"), &result);
        if tool != "read_file" {
            assert!(!is_error(&result), "{tool}: {}", text(&result));
        }
        if matches!(
            tool,
            "list_roots" | "grep" | "glob" | "file_info" | "write_file"
        ) {
            assert!(
                text(&result).contains(&app),
                "{tool} does not show {app}: {}",
                text(&result)
            );
        }
    }
    let listed = client.request("resources/list", json!({}));
    assert_no_verbatim("resources/list", &listed);
    // A path outside the roots is named in its ordinary form in the refusal too.
    let outside = client.call("read_file", json!({"path": ws.outside.join("secret.txt")}));
    assert!(is_error(&outside));
    assert_no_verbatim("refusal", &outside);
}

/// The values `completion/complete` offers for `value`.
fn completions(client: &mut Client, reference: &Value, value: &str) -> Vec<String> {
    let response = client.request(
        "completion/complete",
        json!({"ref": reference, "argument": {"name": "path", "value": value}}),
    );
    response["result"]["completion"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("{value}: {response}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn completion_takes_drive_letters_backslashes_and_any_case() {
    let ws = workspace();
    std::fs::create_dir_all(ws.app.join("Source")).unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    let prompt = json!({"type": "ref/prompt", "name": "explain_file"});
    let template = json!({"type": "ref/resource", "uri": "file:///{+path}"});
    let app = plain(&ws.app);
    // Above the roots: a drive's root, or just its letter, leads to the root.
    let drive = &app[..3];
    assert_eq!(
        completions(&mut client, &prompt, drive),
        [format!(r"{app}\")]
    );
    let letter = app[..2].to_lowercase();
    assert_eq!(
        completions(&mut client, &prompt, &letter),
        [format!(r"{app}\")]
    );
    let root_value = format!("{}/", &uri(&ws.app)["file:///".len()..]);
    assert_eq!(
        completions(&mut client, &template, &drive.replace('\\', "/")),
        std::slice::from_ref(&root_value)
    );
    assert_eq!(
        completions(&mut client, &template, ""),
        std::slice::from_ref(&root_value)
    );
    // Inside: the typed spelling is kept, names match ignoring case.
    let lower = app.to_lowercase();
    assert_eq!(
        completions(&mut client, &prompt, &format!(r"{lower}\S")),
        [format!(r"{lower}\Source\"), format!(r"{lower}\src\")]
    );
    let slashed = app.replace('\\', "/");
    assert_eq!(
        completions(&mut client, &prompt, &format!("{slashed}/sr")),
        [format!("{slashed}/src/"), format!("{slashed}/Source/")]
    );
    assert_eq!(
        completions(&mut client, &prompt, &format!(r"{app}\src\")),
        [format!(r"{app}\src\main.rs")]
    );
    let upper = root_value.to_uppercase();
    assert_eq!(
        completions(&mut client, &template, &format!("{upper}sr")),
        [format!("{upper}src/"), format!("{upper}Source/")]
    );
    // Outside the roots, whatever the case: nothing.
    let outside = plain(&ws.outside).to_uppercase();
    assert!(completions(&mut client, &prompt, &format!(r"{outside}\")).is_empty());
    assert!(completions(&mut client, &prompt, &format!(r"{app}\..\")).is_empty());
}
