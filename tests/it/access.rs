//! Containment attacks: every way of naming a file outside the roots is refused, and
//! nothing of it is read, when the client cannot ask the user.

use std::os::unix::fs::symlink;

use serde_json::json;

use crate::support::*;

fn refused(client: &mut Client, tool: &str, path: &str) {
    let result = client.call(tool, json!({ "path": path }));
    let body = text(&result);
    assert!(is_error(&result), "{tool} {path} should be refused: {body}");
    assert!(
        !body.contains("TOP-SECRET"),
        "{tool} {path} leaked content: {body}"
    );
    assert!(body.contains("outside the workspace roots"), "{body}");
    assert!(body.contains("add its directory as a root"), "{body}");
}

#[test]
fn escapes_are_refused_without_reading() {
    let ws = workspace();
    let app2 = ws.base.join("app2");
    std::fs::create_dir_all(&app2).unwrap();
    std::fs::write(app2.join("secret.txt"), "TOP-SECRET-SIBLING\n").unwrap();
    symlink(&ws.outside, ws.app.join("link")).unwrap();
    symlink(ws.outside.join("secret.txt"), ws.app.join("file-link")).unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let app_uri = uri(&ws.app);
    let cases = vec![
        "../outside/secret.txt".to_string(),
        "src/../../outside/secret.txt".to_string(),
        s(&ws.outside.join("secret.txt")).to_string(),
        "link/secret.txt".to_string(),
        "file-link".to_string(),
        s(&app2.join("secret.txt")).to_string(),
        format!("{app_uri}/%2e%2e/outside/secret.txt"),
        format!("{app_uri}/..%2Foutside%2Fsecret.txt"),
        uri(&ws.outside.join("secret.txt")),
    ];
    for path in &cases {
        refused(&mut client, "read_file", path);
        refused(&mut client, "file_info", path);
    }
    // A path that does not exist yet under a symlinked directory is outside too.
    let result = client.call("file_info", json!({"path": "link/not-yet.txt"}));
    assert!(is_error(&result));
    assert!(text(&result).contains("outside the workspace roots"));
    // read_files reports each failure inline and still reads the rest.
    let result = client.call(
        "read_files",
        json!({"paths": ["src/main.rs", "../outside/secret.txt"]}),
    );
    let body = text(&result);
    assert!(!is_error(&result));
    assert!(body.contains("println!"));
    assert!(body.contains("outside the workspace roots"));
    assert!(!body.contains("TOP-SECRET"));
}

#[test]
fn inside_paths_in_every_form_are_allowed() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    for path in [
        "src/main.rs".to_string(),
        "./src/../src/main.rs".to_string(),
        s(&ws.app.join("src/main.rs")).to_string(),
        uri(&ws.app.join("src/main.rs")),
        format!("file://localhost{}", s(&ws.app.join("src/main.rs"))),
    ] {
        let result = client.call("read_file", json!({ "file_path": path }));
        assert!(!is_error(&result), "{path}: {}", text(&result));
        assert!(text(&result).contains("println!"));
    }
}
