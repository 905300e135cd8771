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
    assert!(stdout.contains("2\t    println!(\"hi\");"), "{stdout}");

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

/// Runs `rootgrep ARGS` in `cwd` with stdin closed, and returns (status, stdout, stderr).
fn run(args: &[&str], cwd: &std::path::Path) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A usage error exits 2 with one stderr line holding every `needle`, and nothing on stdout.
fn assert_usage_error(args: &[&str], cwd: &std::path::Path, needles: &[&str]) {
    let (code, stdout, stderr) = run(args, cwd);
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert_eq!(stdout, "", "{args:?}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{args:?}: {needle:?} not in {stderr}"
        );
    }
}

#[test]
fn usage_errors_exit_2_with_one_line_naming_the_fix() {
    let ws = workspace();
    let missing = ws.app.join("no-such-dir");
    let file = ws.app.join("src/main.rs");
    // Serving: a DIR that does not exist, or is neither a directory nor a file (a file is
    // a root: `file_roots.rs`).
    assert_usage_error(
        &[s(&missing)],
        &ws.app,
        &[
            "DIR",
            "no-such-dir",
            "does not exist",
            "pass an existing directory",
        ],
    );
    #[cfg(unix)]
    {
        let fifo = ws.app.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|status| status.success()), "mkfifo");
        assert_usage_error(
            &[s(&fifo)],
            &ws.app,
            &[
                "neither a directory nor a regular file",
                "pass a directory or a file",
            ],
        );
    }
    // An empty --cache-dir (an unset variable in a host's config): clap's own error.
    let (code, stdout, stderr) = run(&["--cache-dir", "", "."], &ws.app);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
    assert!(stderr.contains("--cache-dir"), "{stderr}");
    // A bad --confine.
    assert_usage_error(
        &["--confine", "nope", "."],
        &ws.app,
        &["--confine", "nope", "does not exist"],
    );
    assert_usage_error(
        &["--confine", s(&file)],
        &ws.app,
        &["--confine", "is not a directory"],
    );
    // Bad flag values.
    assert_usage_error(
        &["--max-output-bytes", "10"],
        &ws.app,
        &["--max-output-bytes must be at least 1024, got 10"],
    );
    assert_usage_error(
        &["--roots-timeout", "0"],
        &ws.app,
        &["--roots-timeout must be a number of seconds", "got 0"],
    );
    // call: unknown tool, malformed or non-object ARGS_JSON, a DIR where ARGS_JSON goes,
    // a DIR that does not exist.
    assert_usage_error(
        &["call", "nosuch"],
        &ws.app,
        &["unknown tool \"nosuch\"", "pass one of grep, glob"],
    );
    assert_usage_error(
        &["call", "read-file", "{}"],
        &ws.app,
        &["did you mean read_file?"],
    );
    assert_usage_error(
        &["call", "grep", "{pattern:main}"],
        &ws.app,
        &["ARGS_JSON is not valid JSON", r#"'{"pattern":"main"}'"#],
    );
    assert_usage_error(
        &["call", "grep", "[1]"],
        &ws.app,
        &["ARGS_JSON must be a JSON object"],
    );
    assert_usage_error(
        &["call", "list_directory", "src"],
        &ws.app,
        &[
            "is a path, not JSON",
            "rootgrep call list_directory '{}' src",
        ],
    );
    assert_usage_error(
        &["call", "list_roots", "{}", s(&missing)],
        &ws.app,
        &["rootgrep call: DIR", "does not exist"],
    );
    // print-config checks its DIRs the same way; clap's own errors exit 2 too.
    assert_usage_error(
        &["print-config", "cursor", s(&missing)],
        &ws.app,
        &["does not exist"],
    );
    assert_usage_error(
        &["print-config", "cursor", s(&ws.app), s(&missing)],
        &ws.app,
        &["does not exist"],
    );
    let (code, _, stderr) = run(&["print-config", "zed"], &ws.app);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("claude-code"), "{stderr}");
}

#[test]
fn runtime_failures_exit_1() {
    let ws = workspace();
    // A tool that fails (the file is missing) is not a usage error.
    let (code, _, _) = run(&["call", "read_file", r#"{"path":"missing.txt"}"#], &ws.app);
    assert_eq!(code, Some(1));
    // Valid arguments serve; stdin EOF ends the server with 0.
    let (code, stdout, _) = run(&[s(&ws.app), "--no-watch"], &ws.app);
    assert_eq!((code, stdout.as_str()), (Some(0), ""));
    // A missing DIR among existing ones is served as a root that does not exist yet, with
    // a warning (one that is all the workspace is a usage error, tested above).
    let missing = ws.app.join("later");
    let (code, _, stderr) = run(&[s(&ws.app), s(&missing), "--no-watch"], &ws.app);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("later does not exist; serving the other DIRs"),
        "{stderr}"
    );
}

/// The binary's own canonical path, as print-config must write it (Windows: without the
/// verbatim prefix).
fn this_binary() -> String {
    rootgrep::cli::plain_path(
        std::fs::canonicalize(env!("CARGO_BIN_EXE_rootgrep"))
            .unwrap()
            .to_str()
            .unwrap(),
    )
}

#[test]
fn print_config_prints_valid_json_with_the_absolute_binary_path() {
    let ws = workspace();
    let exe = this_binary();
    for (host, key, file) in [
        ("claude-code", "mcpServers", ".mcp.json"),
        ("claude-desktop", "mcpServers", "claude_desktop_config.json"),
        ("cursor", "mcpServers", ".cursor/mcp.json"),
        ("vscode", "servers", ".vscode/mcp.json"),
    ] {
        let (code, stdout, stderr) = run(&["print-config", host], &ws.app);
        assert_eq!(code, Some(0), "{host}: {stderr}");
        let value: serde_json::Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{host}: {e}: {stdout}"));
        let entry = &value[key]["rootgrep"];
        assert_eq!(entry["command"], exe.as_str(), "{host}");
        assert_eq!(entry["args"], serde_json::json!([]), "{host}");
        assert!(std::path::Path::new(entry["command"].as_str().unwrap()).is_absolute());
        if host == "vscode" {
            assert_eq!(entry["type"], "stdio");
        }
        // Written the way people write it: command, then args.
        assert!(
            stdout.find("\"command\"") < stdout.find("\"args\""),
            "{stdout}"
        );
        if cfg!(target_os = "linux") && host == "claude-desktop" {
            assert!(stderr.contains("macOS and Windows"), "{stderr}");
        } else {
            assert!(stderr.contains(file), "{host}: {stderr}");
        }
        assert!(
            stderr.contains("if the host sends roots"),
            "{host}: {stderr}"
        );
        assert!(stderr.contains("PATH"), "{host}: {stderr}");
    }
    let (_, _, stderr) = run(&["print-config", "claude-code"], &ws.app);
    assert!(
        stderr.contains(&format!("claude mcp add --scope user rootgrep -- {exe}")),
        "{stderr}"
    );
    let (_, _, stderr) = run(&["print-config", "cursor"], &ws.app);
    assert!(stderr.contains("~/.cursor/mcp.json") || stderr.contains(r"\.cursor\mcp.json"));
}

#[test]
fn print_config_puts_options_and_absolute_dirs_in_args() {
    let ws = workspace();
    let (code, stdout, stderr) = run(
        &["print-config", "cursor", "--read-only", "--no-watch", "."],
        &ws.app,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        value["mcpServers"]["rootgrep"]["args"],
        serde_json::json!([
            "--read-only",
            "--no-watch",
            rootgrep::cli::plain_path(s(&ws.app))
        ])
    );
    assert!(stderr.contains("DIR arguments are the workspace when the host sends no roots"));
    // The printed args start a server that works.
    let printed: Vec<String> =
        serde_json::from_value(value["mcpServers"]["rootgrep"]["args"].clone()).unwrap();
    let mut args = vec!["call", "list_roots", "{}"];
    args.extend(printed.iter().map(String::as_str));
    let (code, stdout, stderr) = run(&args, &ws.outside);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(s(&ws.app)), "{stdout}");
}

#[test]
fn print_config_codex_prints_a_toml_table() {
    let ws = workspace();
    let (code, stdout, stderr) = run(&["print-config", "codex", "."], &ws.app);
    assert_eq!(code, Some(0), "{stderr}");
    let exe = this_binary();
    let quoted = serde_json::to_string(&exe).unwrap();
    let dir = serde_json::to_string(&rootgrep::cli::plain_path(s(&ws.app))).unwrap();
    assert_eq!(
        stdout,
        format!("[mcp_servers.rootgrep]\ncommand = {quoted}\nargs = [{dir}]\n")
    );
    assert!(stderr.contains(".codex/config.toml") || stderr.contains(r".codex\config.toml"));
    assert!(
        stderr.contains(&format!("codex mcp add rootgrep -- {exe}")),
        "{stderr}"
    );
}
