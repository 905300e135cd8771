//! `rootgrep print-config HOST`: the config entry that makes an MCP host run this binary,
//! for a given OS. The snippet (for stdout) is exactly a config file's content — valid JSON,
//! or TOML for Codex — so it can be redirected into a new file; the notes (for stderr) say
//! where it goes for project and user scope, and how roots and DIR arguments relate.
//! Everything here is pure: `main` supplies the binary's path, the OS and the arguments.

use rootgrep::cli::Host;
use serde_json::Value;

/// The operating systems whose config locations differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Mac,
    Windows,
    /// Linux and the other Unix systems (XDG layout).
    Linux,
}

impl Os {
    /// The OS this binary runs on.
    pub fn current() -> Os {
        match std::env::consts::OS {
            "macos" => Os::Mac,
            "windows" => Os::Windows,
            _ => Os::Linux,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Os::Mac => "macOS",
            Os::Windows => "Windows",
            Os::Linux => "Linux",
        }
    }

    /// A file under the user's home directory, written the way this OS's users write it.
    fn home(self, rest: &str) -> String {
        match self {
            Os::Windows => format!(r"%USERPROFILE%\{}", rest.replace('/', r"\")),
            _ => format!("~/{rest}"),
        }
    }
}

/// What `print-config` shows.
#[derive(Debug)]
pub struct Rendered {
    /// The config file content: JSON, or TOML for Codex. Ends with a newline.
    pub snippet: String,
    /// Where it goes and what to know, one line each.
    pub notes: Vec<String>,
}

/// The config for `host` on `os`, running `exe` with `args`.
pub fn render(host: Host, os: Os, exe: &str, args: &[String]) -> Rendered {
    let mut notes = Vec::new();
    let snippet = match host {
        Host::ClaudeCode => claude_code(os, exe, args, &mut notes),
        Host::ClaudeDesktop => claude_desktop(os, exe, args, &mut notes),
        Host::Cursor => cursor(os, exe, args, &mut notes),
        Host::Vscode => vscode(os, exe, args, &mut notes),
        Host::Codex => codex(os, exe, args, &mut notes),
    };
    closing_notes(host, args, &mut notes);
    Rendered { snippet, notes }
}

/// How to use a JSON snippet whose servers sit under `key`.
fn merge_note(key: &str) -> String {
    format!(
        "The snippet on stdout is a whole file: save it as the file, or, if the file \
         exists, add its \"rootgrep\" entry to the file's \"{key}\" object."
    )
}

/// Claude Code: its `claude mcp add` command for user and local scope, `.mcp.json` for
/// project scope.
fn claude_code(os: Os, exe: &str, args: &[String], notes: &mut Vec<String>) -> String {
    let command = command_line(os, exe, args);
    notes.push(format!("Claude Code on {}:", os.name()));
    notes.push(format!(
        "  user scope (all your projects):  claude mcp add --scope user rootgrep -- {command}"
    ));
    notes.push(format!(
        "  local scope (this project, only you):  claude mcp add rootgrep -- {command}"
    ));
    notes.push(
        "  project scope (shared with the repository):  .mcp.json in the project root".to_string(),
    );
    notes.push(merge_note("mcpServers"));
    servers_json("mcpServers", None, exe, args)
}

/// Claude Desktop: one user-scope file, where the OS keeps it (no Linux release).
fn claude_desktop(os: Os, exe: &str, args: &[String], notes: &mut Vec<String>) -> String {
    notes.push(format!("Claude Desktop on {}:", os.name()));
    match os {
        Os::Mac => notes.push(
            "  user scope only:  ~/Library/Application Support/Claude/claude_desktop_config.json"
                .to_string(),
        ),
        Os::Windows => notes
            .push(r"  user scope only:  %APPDATA%\Claude\claude_desktop_config.json".to_string()),
        Os::Linux => notes.push(
            "  Claude Desktop is released for macOS and Windows: run `rootgrep \
             print-config claude-desktop` on that machine, so that the path is its own"
                .to_string(),
        ),
    }
    notes.push(
        "  (Settings > Developer > Edit Config opens it); quit and reopen Claude Desktop \
         after editing."
            .to_string(),
    );
    notes.push(merge_note("mcpServers"));
    servers_json("mcpServers", None, exe, args)
}

/// Cursor: `.cursor/mcp.json` in the project or the home directory.
fn cursor(os: Os, exe: &str, args: &[String], notes: &mut Vec<String>) -> String {
    notes.push(format!("Cursor on {}:", os.name()));
    notes.push(
        "  project scope:  .cursor/mcp.json in the project root (commit it to share it)"
            .to_string(),
    );
    notes.push(format!(
        "  user scope (all your projects):  {}",
        os.home(".cursor/mcp.json")
    ));
    notes.push(merge_note("mcpServers"));
    servers_json("mcpServers", None, exe, args)
}

/// VS Code: `.vscode/mcp.json` or the user profile's `mcp.json`, servers under `servers`
/// with their `type`.
fn vscode(os: Os, exe: &str, args: &[String], notes: &mut Vec<String>) -> String {
    notes.push(format!("VS Code on {}:", os.name()));
    notes.push(
        "  project scope:  .vscode/mcp.json in the workspace (commit it to share it)".to_string(),
    );
    let user = match os {
        Os::Mac => "~/Library/Application Support/Code/User/mcp.json",
        Os::Windows => r"%APPDATA%\Code\User\mcp.json",
        Os::Linux => "~/.config/Code/User/mcp.json",
    };
    notes.push(format!(
        "  user scope:  {user} (default profile; the command \"MCP: Open User \
         Configuration\" opens the current profile's)"
    ));
    notes.push(merge_note("servers"));
    servers_json("servers", Some("stdio"), exe, args)
}

/// Codex: a TOML table for `config.toml`, or its `codex mcp add` command.
fn codex(os: Os, exe: &str, args: &[String], notes: &mut Vec<String>) -> String {
    notes.push(format!("Codex on {}:", os.name()));
    notes.push(format!(
        "  user scope:  {} (or $CODEX_HOME/config.toml when CODEX_HOME is set)",
        os.home(".codex/config.toml")
    ));
    notes.push("  project scope:  .codex/config.toml in a project Codex trusts".to_string());
    notes.push(format!(
        "  or run:  codex mcp add rootgrep -- {}",
        command_line(os, exe, args)
    ));
    notes.push(
        "The snippet on stdout is a TOML table: append it to the file (there must be \
         no other [mcp_servers.rootgrep])."
            .to_string(),
    );
    let args: Vec<String> = args.iter().map(|arg| toml_string(arg)).collect();
    format!(
        "[mcp_servers.rootgrep]\ncommand = {}\nargs = [{}]\n",
        toml_string(exe),
        args.join(", ")
    )
}

/// What every host's notes end with: how roots and DIR arguments relate, VS Code's
/// workspace variable, and why the command is an absolute path.
fn closing_notes(host: Host, args: &[String], notes: &mut Vec<String>) {
    if has_dir(args) {
        notes.push(
            "Roots: the DIR arguments are the workspace when the host sends no roots; if the \
             host sends roots, rootgrep uses those instead."
                .to_string(),
        );
    } else {
        notes.push(format!(
            "Roots: if the host sends roots, rootgrep needs no DIR; otherwise pass the \
             workspace as DIR (rootgrep print-config {} /path/to/project), or rootgrep \
             serves the directory the host starts it in.",
            host_name(host)
        ));
    }
    if host == Host::Vscode {
        notes.push(
            "In .vscode/mcp.json, \"${workspaceFolder}\" in args names the workspace folder."
                .to_string(),
        );
    }
    notes.push(
        "The command is this binary's absolute path: hosts started from a dock or menu do not \
         see your shell's PATH."
            .to_string(),
    );
}

fn host_name(host: Host) -> String {
    use clap::ValueEnum;
    host.to_possible_value()
        .map(|value| value.get_name().to_string())
        .unwrap_or_default()
}

/// True when `args` hold a DIR: a value that is not a flag and not a flag's value. Which
/// flags take a value is asked of the command line's own definition (so a new flag
/// cannot be mistaken for a DIR's neighbour).
fn has_dir(args: &[String]) -> bool {
    use clap::CommandFactory;
    let command = rootgrep::cli::Args::command();
    let with_value: Vec<String> = command
        .get_arguments()
        .filter(|arg| arg.get_action().takes_values())
        .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
        .collect();
    let mut expect_value = false;
    for arg in args {
        if expect_value {
            expect_value = false;
        } else if with_value.iter().any(|flag| flag == arg) {
            expect_value = true;
        } else if !arg.starts_with('-') {
            return true;
        }
    }
    false
}

/// A note when `exe` is a build inside a cargo target directory, whose path `cargo clean`
/// removes.
pub fn build_dir_note(exe: &std::path::Path) -> Option<String> {
    let profile = exe.parent()?;
    let target = profile.parent()?;
    (target.file_name()? == "target").then(|| {
        "Note: this rootgrep is a build in a cargo target directory, which `cargo clean` \
         removes; install it (cargo install --locked --path .) and run the installed \
         rootgrep's print-config."
            .to_string()
    })
}

/// `{ KEY: { "rootgrep": { ["type": KIND,] "command": EXE, "args": [...] } } }`, pretty,
/// keys in the order people write them (serde_json's maps would sort them).
fn servers_json(key: &str, kind: Option<&str>, exe: &str, args: &[String]) -> String {
    let string = |text: &str| Value::from(text).to_string();
    let mut fields = Vec::new();
    if let Some(kind) = kind {
        fields.push(format!("\"type\": {}", string(kind)));
    }
    fields.push(format!("\"command\": {}", string(exe)));
    let args: Vec<String> = args.iter().map(|arg| string(arg)).collect();
    fields.push(format!("\"args\": [{}]", args.join(", ")));
    format!(
        "{{\n  {}: {{\n    \"rootgrep\": {{\n      {}\n    }}\n  }}\n}}\n",
        string(key),
        fields.join(",\n      ")
    )
}

/// A TOML basic string: JSON's escapes are TOML's for quotes, backslashes and control
/// characters.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `exe` and `args` as one command line for the OS's usual shell.
fn command_line(os: Os, exe: &str, args: &[String]) -> String {
    std::iter::once(exe)
        .chain(args.iter().map(String::as_str))
        .map(|word| quote(os, word))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(os: Os, word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    match os {
        Os::Windows if word.chars().all(|c| plain(c) || c == '\\') => word.to_string(),
        Os::Windows => format!("\"{}\"", word.replace('"', "\\\"")),
        _ if !word.is_empty() && word.chars().all(plain) => word.to_string(),
        _ => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTS: [Host; 5] = [
        Host::ClaudeCode,
        Host::ClaudeDesktop,
        Host::Cursor,
        Host::Vscode,
        Host::Codex,
    ];

    #[test]
    fn json_snippets_parse_on_every_os() {
        let exe = r#"C:\Program Files\a "b"\rootgrep.exe"#;
        for os in [Os::Mac, Os::Windows, Os::Linux] {
            for host in HOSTS {
                let out = render(host, os, exe, &["--read-only".into(), "/p q".into()]);
                if host == Host::Codex {
                    continue;
                }
                let value: serde_json::Value = serde_json::from_str(&out.snippet).unwrap();
                let key = if host == Host::Vscode {
                    "servers"
                } else {
                    "mcpServers"
                };
                assert_eq!(value[key]["rootgrep"]["command"], exe);
                assert_eq!(value[key]["rootgrep"]["args"][1], "/p q");
                let command = out.snippet.find("\"command\"").unwrap();
                assert!(command < out.snippet.find("\"args\"").unwrap());
            }
        }
    }

    #[test]
    fn codex_toml_escapes_windows_paths() {
        let out = render(
            Host::Codex,
            Os::Windows,
            r"C:\Users\a\.cargo\bin\rootgrep.exe",
            &[r"D:\src\app".into()],
        );
        assert_eq!(
            out.snippet,
            "[mcp_servers.rootgrep]\ncommand = \"C:\\\\Users\\\\a\\\\.cargo\\\\bin\\\\rootgrep.exe\"\n\
             args = [\"D:\\\\src\\\\app\"]\n"
        );
        assert!(
            out.notes
                .iter()
                .any(|n| n.contains(r"%USERPROFILE%\.codex\config.toml"))
        );
    }

    #[test]
    fn locations_follow_the_os() {
        let notes = |host, os| render(host, os, "/x/rootgrep", &[]).notes.join("\n");
        assert!(notes(Host::ClaudeDesktop, Os::Mac).contains("Library/Application Support/Claude"));
        assert!(notes(Host::ClaudeDesktop, Os::Windows).contains(r"%APPDATA%\Claude"));
        assert!(notes(Host::ClaudeDesktop, Os::Linux).contains("macOS and Windows"));
        assert!(notes(Host::Vscode, Os::Linux).contains("~/.config/Code/User/mcp.json"));
        assert!(notes(Host::Cursor, Os::Windows).contains(r"%USERPROFILE%\.cursor\mcp.json"));
        assert!(
            notes(Host::ClaudeCode, Os::Linux).contains("--scope user rootgrep -- /x/rootgrep")
        );
    }

    #[test]
    fn quoting_and_dir_detection() {
        assert_eq!(quote(Os::Linux, "/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(quote(Os::Windows, r"C:\a b\r.exe"), r#""C:\a b\r.exe""#);
        assert!(!has_dir(&[
            "--confine".into(),
            "/a".into(),
            "--read-only".into()
        ]));
        assert!(has_dir(&["--no-watch".into(), "/a".into()]));
        for flag in [
            "--cache-dir",
            "--cache-max-mb",
            "--index-max-files",
            "--log-level",
        ] {
            assert!(
                !has_dir(&[flag.into(), "/a".into(), "--no-cache".into()]),
                "{flag}"
            );
        }
        assert!(build_dir_note(std::path::Path::new("/r/target/debug/rootgrep")).is_some());
        assert!(build_dir_note(std::path::Path::new("/home/u/.cargo/bin/rootgrep")).is_none());
    }
}
