//! Tests of `doctor/hosts.rs`: where each host's files are looked for, and the server
//! entries read from JSON, JSON with comments and Codex's TOML.

use super::*;
use crate::doctor::report::Level;

fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
    let vars: Vec<(String, OsString)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

fn paths(os: Os, env: &dyn Fn(&str) -> Option<OsString>, projects: &[PathBuf]) -> Vec<String> {
    candidates(os, env, projects)
        .into_iter()
        .map(|c| c.path.to_string_lossy().replace('\\', "/"))
        .collect()
}

/// An absolute path on this OS: `/x` on Unix, `C:/x` on Windows.
fn abs(path: &str) -> String {
    if cfg!(windows) {
        format!("C:{path}")
    } else {
        path.to_string()
    }
}

#[test]
fn user_files_follow_the_os_and_project_files_each_project() {
    let env = env_of(&[("HOME", abs("/h").as_str())]);
    let linux = paths(Os::Linux, &env, &[PathBuf::from(abs("/p"))]);
    for expected in [
        "/p/.mcp.json",
        "/p/.vscode/mcp.json",
        "/p/.cursor/mcp.json",
        "/p/.codex/config.toml",
        "/h/.claude.json",
        "/h/.cursor/mcp.json",
        "/h/.codex/config.toml",
        "/h/.config/Code/User/mcp.json",
    ] {
        assert!(linux.contains(&abs(expected)), "{expected}: {linux:?}");
    }
    assert!(
        !linux.iter().any(|p| p.contains("claude_desktop")),
        "{linux:?}"
    );
    let mac = paths(Os::Mac, &env, &[]);
    for expected in [
        "/h/Library/Application Support/Claude/claude_desktop_config.json",
        "/h/Library/Application Support/Code/User/mcp.json",
    ] {
        assert!(mac.contains(&abs(expected)), "{expected}: {mac:?}");
    }
    let env = env_of(&[
        ("USERPROFILE", abs("/u").as_str()),
        ("APPDATA", abs("/u/AppData/Roaming").as_str()),
        ("CODEX_HOME", abs("/cx").as_str()),
    ]);
    let windows = paths(Os::Windows, &env, &[]);
    for expected in [
        "/u/AppData/Roaming/Claude/claude_desktop_config.json",
        "/u/.cursor/mcp.json",
        "/cx/config.toml",
    ] {
        assert!(windows.contains(&abs(expected)), "{expected}: {windows:?}");
    }
    // Nothing relative is trusted, and nothing is looked for twice.
    let env = env_of(&[("HOME", "relative")]);
    assert!(paths(Os::Linux, &env, &[]).is_empty());
    let twice = [PathBuf::from(abs("/p")), PathBuf::from(abs("/p"))];
    assert_eq!(paths(Os::Linux, &env, &twice).len(), 4);
}

#[test]
fn json_servers_are_found_at_the_top_and_per_project() {
    let value: serde_json::Value = serde_json::from_str(
        r#"{
            "mcpServers": {"rootgrep": {"command": "/bin/rootgrep", "args": []}},
            "projects": {"/home/me/app": {"mcpServers": {"rg": {"command": "C:\\x\\rootgrep.exe"}}}},
            "servers": {"other": {"type": "stdio", "command": "node"}}
        }"#,
    )
    .unwrap();
    let servers = servers_in_json(&value);
    assert_eq!(servers.len(), 3, "{servers:?}");
    let ours: Vec<&Server> = servers.iter().filter(|s| s.is_rootgrep()).collect();
    assert_eq!(ours.len(), 2);
    assert_eq!(ours[0].command.as_deref(), Some("/bin/rootgrep"));
    assert_eq!(ours[0].place, None);
    assert_eq!(ours[1].name, "rg");
    assert_eq!(ours[1].place.as_deref(), Some("/home/me/app"));
}

#[test]
fn jsonc_comments_and_trailing_commas_are_dropped_outside_strings() {
    let text = r#"{
        // the servers
        "servers": { /* one */ "rootgrep": {"command": "/a//b/*c*/", "args": ["x,",],},
        },
    }"#;
    let value: serde_json::Value = serde_json::from_str(&strip_jsonc(text)).unwrap();
    assert_eq!(value["servers"]["rootgrep"]["command"], "/a//b/*c*/");
    assert_eq!(value["servers"]["rootgrep"]["args"][0], "x,");
    assert_eq!(strip_jsonc(r#"["a\"//",]"#), r#"["a\"//"]"#);
    // An unclosed comment or string ends the text, without a panic.
    assert_eq!(strip_jsonc("[1] /* open").trim(), "[1]");
    assert_eq!(strip_jsonc("\"open"), "\"open");
}

#[test]
fn codex_tables_give_names_and_commands() {
    let text = r#"
model = "o3"
[mcp_servers.rootgrep]
command = "C:\\Users\\a\\.cargo\\bin\\rootgrep.exe"   # installed
args = ["--read-only"]

[mcp_servers.rootgrep.env]
command = "not this"

[mcp_servers."other one"]
command = 'node'

[mcp_servers]
inline = { command = "/opt/rootgrep", args = [] }

[profiles.x]
command = "ignored"
"#;
    let servers = servers_in_toml(text);
    let found: Vec<(&str, Option<&str>)> = servers
        .iter()
        .map(|s| (s.name.as_str(), s.command.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            ("rootgrep", Some(r"C:\Users\a\.cargo\bin\rootgrep.exe")),
            ("other one", Some("node")),
            ("inline", Some("/opt/rootgrep")),
        ]
    );
    assert!(servers[2].is_rootgrep(), "named by its command");
    assert!(!servers[1].is_rootgrep());
}

#[test]
fn entries_are_judged_by_their_command() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("rootgrep");
    std::fs::write(&exe, "").unwrap();
    let env = env_of(&[("PATH", tmp.path().to_str().unwrap())]);
    let server = |command: Option<&str>| Server {
        name: "rootgrep".to_string(),
        place: None,
        command: command.map(str::to_string),
    };
    let judged = |host, command: Option<&str>| judge(host, "f", &server(command), Some(&exe), &env);
    let ok = judged(Host::Cursor, exe.to_str());
    assert_eq!(ok.level, Level::Ok, "{ok:?}");
    assert!(ok.text.ends_with("(this binary)"), "{ok:?}");
    let missing = tmp.path().join("gone").join("rootgrep");
    let gone = judged(Host::Vscode, missing.to_str());
    assert_eq!(gone.level, Level::Problem);
    assert!(gone.text.contains("does not exist"), "{gone:?}");
    assert!(gone.fix.unwrap().contains("rootgrep print-config vscode"));
    // A bare name: advice where the host may have the shell's PATH, a problem for Claude
    // Desktop, and a problem when it is on no PATH.
    assert_eq!(
        judged(Host::ClaudeCode, Some("rootgrep")).level,
        Level::Note
    );
    assert_eq!(
        judged(Host::ClaudeDesktop, Some("rootgrep")).level,
        Level::Problem
    );
    let nowhere = judge(
        Host::Cursor,
        "f",
        &server(Some("rootgrep")),
        None,
        &env_of(&[]),
    );
    assert!(nowhere.text.contains("not on PATH"), "{nowhere:?}");
    assert_eq!(judged(Host::Codex, None).level, Level::Problem);
}
