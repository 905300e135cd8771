//! Windows paths over the wire (run under Wine in CI): drive letters, `\\?\` verbatim
//! paths, mixed separators, `file:///C:/…` URIs, case-insensitive containment, reserved
//! device names, writes and no-replace moves; answers show ordinary paths (`C:\x`), never
//! the verbatim `\\?\C:\x` form; the containment tricks of the platform (alternate data
//! streams, 8.3 short names, junctions, case variants of a root) where Wine has them.

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
    for name in ["NUL", "con", "COM1", "nul.txt", "src/CON", "src/aux.rs"] {
        let read = client.call("read_file", json!({"path": name}));
        assert!(is_error(&read), "read {name}: {}", text(&read));
        assert!(
            text(&read).contains("reserved device name"),
            "{}",
            text(&read)
        );
        let write = client.call("write_file", json!({"path": name, "content": "x"}));
        assert!(is_error(&write), "write {name}: {}", text(&write));
        assert!(
            text(&write).contains("reserved device name"),
            "{}",
            text(&write)
        );
        let edit = client.call(
            "edit_file",
            json!({"path": name, "old_string": "a", "new_string": "b"}),
        );
        assert!(
            text(&edit).contains("reserved device name"),
            "{}",
            text(&edit)
        );
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
        if matches!(tool, "list_roots" | "file_info" | "write_file") {
            assert!(
                text(&result).contains(&app),
                "{tool} does not show {app}: {}",
                text(&result)
            );
        }
        // Lists show paths relative to the one root, which they name in its ordinary form.
        if matches!(tool, "grep" | "glob") {
            assert_eq!(
                result["structuredContent"]["root"].as_str(),
                Some(app.as_str()),
                "{tool}: {result}"
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

#[test]
fn alternate_data_streams_are_refused() {
    let ws = workspace();
    let main = ws.app.join("src").join("main.rs");
    // Where the file system has streams (NTFS; Wine has none), main.rs gets a hidden one.
    let stream = format!("{}:secret", plain(&main));
    let _ = std::fs::write(&stream, "HIDDEN-STREAM");
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    for form in [
        "src/main.rs:secret".to_string(),
        r"src\main.rs::$DATA".to_string(),
        stream.clone(),
        format!("{}:secret", uri(&main)),
    ] {
        let read = client.call("read_file", json!({"path": form}));
        assert!(is_error(&read), "{form} was read: {}", text(&read));
        assert!(
            text(&read).contains("alternate data stream"),
            "{form}: {}",
            text(&read)
        );
        assert!(!text(&read).contains("HIDDEN-STREAM"), "{form}");
    }
    let write = client.call(
        "write_file",
        json!({"path": "notes.txt:hidden", "content": "x"}),
    );
    assert!(is_error(&write), "{}", text(&write));
    assert!(!ws.app.join("notes.txt").exists());
    let grep = client.call(
        "grep",
        json!({"pattern": "x", "path": "src/main.rs:secret"}),
    );
    assert!(is_error(&grep), "{}", text(&grep));
}

/// The 8.3 short form of an existing path (`PROGRA~1`), when the file system has one.
#[allow(unsafe_code)]
fn short_name(path: &Path) -> Option<String> {
    use std::os::windows::ffi::{OsStrExt, OsStringExt};
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut buf = vec![0u16; 1024];
    // SAFETY: `wide` is NUL-terminated; `buf` has the length passed.
    let n = unsafe {
        windows_sys::Win32::Storage::FileSystem::GetShortPathNameW(
            wide.as_ptr(),
            buf.as_mut_ptr(),
            buf.len() as u32,
        )
    } as usize;
    if n == 0 || n >= buf.len() {
        return None;
    }
    let short = std::ffi::OsString::from_wide(&buf[..n])
        .to_string_lossy()
        .into_owned();
    (short != path.to_string_lossy()).then_some(short)
}

#[test]
fn short_8_3_names_are_judged_by_the_long_path() {
    let ws = workspace();
    let inside = ws.app.join("Long Directory Name").join("inside file.txt");
    std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
    std::fs::write(&inside, "INSIDE-CONTENT\n").unwrap();
    let outside = ws.base.join("Outside Long Name").join("secret file.txt");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    std::fs::write(&outside, "TOP-SECRET-SHORT\n").unwrap();
    let (Some(short_inside), Some(short_outside)) = (short_name(&inside), short_name(&outside))
    else {
        eprintln!("no 8.3 short names on this file system: case not run");
        return;
    };
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    let read = client.call("read_file", json!({"path": short_inside}));
    assert!(!is_error(&read), "{short_inside}: {}", text(&read));
    assert!(text(&read).contains("INSIDE-CONTENT"));
    let read = client.call("read_file", json!({"path": short_outside}));
    assert!(is_error(&read), "{short_outside} was read");
    assert!(!text(&read).contains("TOP-SECRET-SHORT"));
    // A root named by its short form is the same root.
    let short_root = short_name(&ws.app.join("Long Directory Name")).unwrap();
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake_with_roots(json!({}), &[Path::new(&short_root)]);
    let read = client.call("read_file", json!({"path": plain(&inside)}));
    assert!(!is_error(&read), "{}", text(&read));
    let read = client.call("read_file", json!({"path": plain(&outside)}));
    assert!(is_error(&read));
}

#[test]
fn junctions_out_of_a_root_are_never_followed() {
    let ws = workspace();
    let junction = ws.app.join("junc");
    let made = std::process::Command::new("cmd")
        .args(["/c", "mklink", "/J"])
        .arg(&junction)
        .arg(&ws.outside)
        .output()
        .is_ok_and(|out| out.status.success())
        && junction.join("secret.txt").exists();
    if !made {
        // Wine 8's `mklink /J` reports success and creates nothing.
        eprintln!("cannot create a junction here: case not run");
        return;
    }
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    let read = client.call("read_file", json!({"path": r"junc\secret.txt"}));
    assert!(is_error(&read), "read through a junction: {}", text(&read));
    assert!(!text(&read).contains("TOP-SECRET"));
    let write = client.call(
        "write_file",
        json!({"path": "junc/new.txt", "content": "x"}),
    );
    assert!(is_error(&write), "{}", text(&write));
    assert!(!ws.outside.join("new.txt").exists());
    let grep = client.call(
        "grep",
        json!({"pattern": "TOP-SECRET", "output_mode": "content"}),
    );
    assert!(
        !text(&grep).contains("TOP-SECRET-CONTENT"),
        "{}",
        text(&grep)
    );
}

#[test]
fn a_root_given_in_another_case_is_the_same_root() {
    let ws = workspace();
    let sibling = ws.base.join("app2");
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::write(sibling.join("secret.txt"), "SIBLING-SECRET\n").unwrap();
    let upper = std::path::PathBuf::from(plain(&ws.app).to_uppercase());
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake_with_roots(json!({}), &[&upper]);
    for form in [
        "src/main.rs".to_string(),
        format!(r"{}\src\main.rs", plain(&ws.app).to_lowercase()),
        format!(r"{}\SRC\MAIN.RS", upper.display()),
    ] {
        let read = client.call("read_file", json!({"path": form}));
        assert!(!is_error(&read), "{form}: {}", text(&read));
    }
    for form in [
        format!(r"{}2\secret.txt", upper.display()),
        format!(r"{}\..\APP2\secret.txt", plain(&ws.app).to_lowercase()),
    ] {
        let read = client.call("read_file", json!({"path": form}));
        assert!(is_error(&read), "{form} was read");
        assert!(!text(&read).contains("SIBLING-SECRET"), "{form}");
    }
}
