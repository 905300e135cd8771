//! What `tools/list` costs every session before its first call: the default set fits in
//! 16.2 KB as sent (16 KB until grep's matching rows held their context lines, 0.2 KB of
//! schema that saves about a tenth of every `-C` page); `--tools` and `--no-tools` choose the set (a tool turned off by name is
//! refused, one left out of the default set still answers when called by name), an unknown
//! name is a usage error, and `--help` and `print-config` carry both flags.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::*;

/// The default set, in `tools/list` order.
const DEFAULT_SET: &[&str] = &[
    "grep",
    "glob",
    "read_file",
    "search",
    "symbols",
    "outline",
    "list_directory",
    "write_file",
    "edit_file",
    "move_file",
];

fn listed(args: &[&str], ws: &Workspace) -> (Vec<String>, usize, Client) {
    let mut client = Client::spawn(args, &ws.app);
    client.handshake(json!({}));
    let response = client.request("tools/list", json!({}));
    let result = &response["result"];
    let names = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    let size = serde_json::to_string(result).unwrap().len();
    (names, size, client)
}

#[test]
fn the_default_set_fits_in_16_kb_and_the_flags_choose_the_set() {
    let ws = workspace();
    let (names, size, mut client) = listed(&["--no-watch"], &ws);
    assert_eq!(names, DEFAULT_SET);
    assert!(size <= 16_200, "tools/list takes {size} bytes");
    eprintln!("tools/list, default set: {size} bytes");
    // Left out of the list, still answered by name.
    let info = client.call("file_info", json!({"path": "src/main.rs"}));
    assert!(!is_error(&info), "{info}");
    let (all, size_all, _) = listed(&["--no-watch", "--tools", "all"], &ws);
    assert_eq!(all.len(), 16, "{all:?}");
    eprintln!("tools/list, all tools: {size_all} bytes");
    // --tools names the set: the rest is refused.
    let (two, _, mut client) = listed(&["--no-watch", "--tools", "grep,read_file"], &ws);
    assert_eq!(two, ["grep", "read_file"]);
    let refused = client.call("glob", json!({"pattern": "*"}));
    assert!(is_error(&refused), "{refused}");
    assert!(text(&refused).contains("turned off"), "{refused}");
    assert_eq!(
        refused["structuredContent"]["error"]["reason"],
        "unknown_tool"
    );
    // --no-tools takes tools out of the default set (or of --tools).
    let (fewer, _, mut client) = listed(&["--no-watch", "--no-tools", "write_file,grep"], &ws);
    let expected: Vec<&str> = DEFAULT_SET
        .iter()
        .copied()
        .filter(|name| !["write_file", "grep"].contains(name))
        .collect();
    assert_eq!(fewer, expected);
    assert!(is_error(&client.call("grep", json!({"pattern": "x"}))));
    // Read-only leaves the write tools out of whatever set.
    let (read_only, _, _) = listed(&["--no-watch", "--read-only", "--tools", "all"], &ws);
    assert!(!read_only.iter().any(|name| name == "write_file"));
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (out.status.code(), text(out.stdout), text(out.stderr))
}

#[test]
fn unknown_names_are_usage_errors_and_help_and_print_config_show_the_flags() {
    let (code, stdout, stderr) = run(&["--tools", "grep,nope"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("\"nope\"") && stderr.contains("read_file"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["--no-tools", "all"]);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, help, _) = run(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(
        help.contains("--tools <LIST>") && help.contains("--no-tools <LIST>"),
        "{help}"
    );
    assert!(help.contains("--paths <HOW>"), "{help}");
    let (code, config, _) = run(&[
        "print-config",
        "cursor",
        "--tools",
        "all",
        "--no-tools",
        "grep",
    ]);
    assert_eq!(code, Some(0));
    let config: Value = serde_json::from_str(&config).unwrap();
    let args = &config["mcpServers"]["rootgrep"]["args"];
    assert_eq!(
        args,
        &json!(["--tools", "all", "--no-tools", "grep"]),
        "{config}"
    );
}
