//! `rootgrep call`: one tool, in-process, through the same server code.

use std::process::Command;

use crate::support::*;

#[test]
fn call_runs_a_tool_on_the_current_directory() {
    let ws = workspace();
    let out = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .args(["call", "read_file", r#"{"path":"src/main.rs"}"#])
        .current_dir(&ws.app)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("     2\t    println!(\"hi\");"), "{stdout}");

    let out = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .args(["call", "list_roots", "{}", s(&ws.outside), "--json"])
        .current_dir(&ws.app)
        .output()
        .unwrap();
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["roots"][0]["path"], s(&ws.outside));

    let out = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .args(["call", "read_file", r#"{"path":"../outside/secret.txt"}"#])
        .current_dir(&ws.app)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("TOP-SECRET"));

    let out = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .args(["call", "read_file", "not json"])
        .current_dir(&ws.app)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ARGS_JSON"));
}
