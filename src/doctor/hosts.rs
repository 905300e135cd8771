//! `rootgrep doctor`'s host check: the config files of the hosts `print-config` knows
//! (Claude Code, Claude Desktop, VS Code, Cursor, Codex), at project scope in the working
//! directory and the roots and at user scope in this OS's places, and in each the server
//! entries that name rootgrep. An entry is judged by its command: an absolute path that
//! exists is fine, one that does not is a problem, a bare name works only where the host
//! has the shell's PATH. JSON is read as VS Code writes it (comments and trailing commas
//! allowed); Codex's TOML is read line by line, enough for `[mcp_servers.NAME]` tables.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rootgrep::cli::Host;

use super::report::Finding;
use crate::hostconfig::Os;

/// Largest config file read (`~/.claude.json` keeps history and grows).
const MAX_BYTES: u64 = 64 << 20;

/// How a config file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// JSON, servers in `mcpServers` (or `servers`, VS Code) objects anywhere in it.
    Json,
    /// Codex's TOML: `[mcp_servers.NAME]` tables.
    Toml,
}

/// A config file a host may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub host: Host,
    pub path: PathBuf,
    pub format: Format,
}

/// A server entry found in a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Server {
    pub name: String,
    /// Where in the file, when not at its top (`~/.claude.json`: the project it is local to).
    pub place: Option<String>,
    pub command: Option<String>,
}

impl Server {
    /// True when the entry is rootgrep: by its name or its command's file name.
    pub fn is_rootgrep(&self) -> bool {
        let named = |text: &str| text.to_ascii_lowercase().contains("rootgrep");
        named(&self.name)
            || self.command.as_deref().is_some_and(|command| {
                let file = command.rsplit(['/', '\\']).next().unwrap_or(command);
                named(file)
            })
    }
}

/// `base` joined with the `/`-separated `rel`, one component at a time (so that a Windows
/// path shows its own separators).
fn under(base: &Path, rel: &str) -> PathBuf {
    rel.split('/')
        .fold(base.to_path_buf(), |path, part| path.join(part))
}

/// The hosts' config files to look at, for `os`, from the environment and the project
/// directories (working directory and directory roots).
pub(super) fn candidates(
    os: Os,
    env: &dyn Fn(&str) -> Option<OsString>,
    projects: &[PathBuf],
) -> Vec<Candidate> {
    let absolute = |name: &str| env(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let home = match os {
        Os::Windows => absolute("USERPROFILE").or_else(|| absolute("HOME")),
        _ => absolute("HOME"),
    };
    let mut out = Vec::new();
    let mut add = |host, path: PathBuf, format| {
        let candidate = Candidate { host, path, format };
        if !out.contains(&candidate) {
            out.push(candidate);
        }
    };
    for project in projects {
        add(Host::ClaudeCode, under(project, ".mcp.json"), Format::Json);
        add(
            Host::Vscode,
            under(project, ".vscode/mcp.json"),
            Format::Json,
        );
        add(
            Host::Cursor,
            under(project, ".cursor/mcp.json"),
            Format::Json,
        );
        add(
            Host::Codex,
            under(project, ".codex/config.toml"),
            Format::Toml,
        );
    }
    if let Some(home) = &home {
        add(Host::ClaudeCode, under(home, ".claude.json"), Format::Json);
        add(Host::Cursor, under(home, ".cursor/mcp.json"), Format::Json);
    }
    let codex = absolute("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex")));
    if let Some(codex) = codex {
        add(Host::Codex, under(&codex, "config.toml"), Format::Toml);
    }
    // Claude Desktop's and VS Code's user files live in the OS's application data.
    let app_data = match os {
        Os::Mac => home
            .as_ref()
            .map(|h| under(h, "Library/Application Support")),
        Os::Windows => absolute("APPDATA"),
        Os::Linux => {
            absolute("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")))
        }
    };
    if let Some(app_data) = app_data {
        if os != Os::Linux {
            let desktop = under(&app_data, "Claude/claude_desktop_config.json");
            add(Host::ClaudeDesktop, desktop, Format::Json);
        }
        add(
            Host::Vscode,
            under(&app_data, "Code/User/mcp.json"),
            Format::Json,
        );
    }
    out
}

/// The server entries of a JSON config: every object under an `mcpServers` or `servers`
/// key, wherever it is (`~/.claude.json` keeps local-scope servers per project).
pub(super) fn servers_in_json(value: &serde_json::Value) -> Vec<Server> {
    let mut out = Vec::new();
    collect_json(value, None, &mut out);
    out
}

fn collect_json(value: &serde_json::Value, place: Option<&str>, out: &mut Vec<Server>) {
    let serde_json::Value::Object(map) = value else {
        return;
    };
    for (key, child) in map {
        match child {
            serde_json::Value::Object(servers) if key == "mcpServers" || key == "servers" => {
                for (name, entry) in servers {
                    out.push(Server {
                        name: name.clone(),
                        place: place.map(str::to_string),
                        command: entry["command"].as_str().map(str::to_string),
                    });
                }
            }
            serde_json::Value::Object(_) => {
                // A project's key names it (`projects` → `/home/me/app` → `mcpServers`).
                let here = if place.is_none() && key == "projects" {
                    None
                } else {
                    Some(key.as_str())
                };
                collect_json(child, here.or(place), out);
            }
            _ => {}
        }
    }
}

/// JSON with comments (`//`, `/* */`) and trailing commas, as VS Code reads it, made plain
/// JSON. Strings are kept as they are.
pub(super) fn strip_jsonc(text: &str) -> String {
    strip_trailing_commas(&strip_comments(text))
}

/// `text` with each comment outside strings replaced by a space.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let mut in_string = false;
    while let Some((i, c)) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next().map(|(_, c)| c)),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        let rest = &text[i..];
        let end = if rest.starts_with("//") {
            rest.find('\n').map_or(text.len(), |n| i + n)
        } else if let Some(body) = rest.strip_prefix("/*") {
            body.find("*/").map_or(text.len(), |n| i + n + 4)
        } else {
            in_string = c == '"';
            out.push(c);
            continue;
        };
        out.push(' ');
        while chars.peek().is_some_and(|(at, _)| *at < end) {
            chars.next();
        }
    }
    out
}

/// `text` (without comments) without the commas that close no value: those whose next
/// character other than white space ends an object or array.
fn strip_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = text[i + 1..].trim_start().chars().next();
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The `[mcp_servers.NAME]` tables of a Codex `config.toml` (and `NAME = { … }` lines
/// under `[mcp_servers]`), with their `command`.
pub(super) fn servers_in_toml(text: &str) -> Vec<Server> {
    let mut out: Vec<Server> = Vec::new();
    // The server whose table the lines belong to (its index in `out`), or `Some(None)`
    // inside `[mcp_servers]` itself.
    let mut table: Option<Option<usize>> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            let header = header
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("");
            let keys = dotted_keys(header);
            table = match keys.as_slice() {
                [first] if first == "mcp_servers" => Some(None),
                [first, name] if first == "mcp_servers" => {
                    out.push(Server {
                        name: name.clone(),
                        place: None,
                        command: None,
                    });
                    Some(Some(out.len() - 1))
                }
                _ => None, // another table, or a server's sub-table (`.env`)
            };
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = unquote(key.trim());
        match table {
            Some(Some(index)) if key == "command" => out[index].command = toml_string(value),
            Some(None) if value.trim_start().starts_with('{') => out.push(Server {
                name: key,
                place: None,
                command: value
                    .split_once("command")
                    .and_then(|(_, rest)| rest.trim_start().strip_prefix('='))
                    .and_then(toml_string),
            }),
            _ => {}
        }
    }
    out
}

/// `a."b.c".d` → `["a", "b.c", "d"]`.
fn dotted_keys(text: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in text.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '.') => keys.push(std::mem::take(&mut current).trim().to_string()),
            _ => current.push(c),
        }
    }
    keys.push(current.trim().to_string());
    keys
}

fn unquote(key: &str) -> String {
    key.trim_matches(|c| c == '"' || c == '\'').to_string()
}

/// The first TOML string in `value`: a basic string (JSON's escapes) or a literal one.
fn toml_string(value: &str) -> Option<String> {
    let value = value.trim_start();
    if let Some(rest) = value.strip_prefix('\'') {
        return rest.split('\'').next().map(str::to_string);
    }
    let rest = value.strip_prefix('"')?;
    let mut end = None;
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                end = Some(i);
                break;
            }
            _ => {}
        }
    }
    let body = &rest[..end?];
    serde_json::from_str(&format!("\"{body}\""))
        .ok()
        .or_else(|| Some(body.to_string()))
}

/// The host's name for people.
fn label(host: Host) -> &'static str {
    match host {
        Host::ClaudeCode => "Claude Code",
        Host::ClaudeDesktop => "Claude Desktop",
        Host::Cursor => "Cursor",
        Host::Vscode => "VS Code",
        Host::Codex => "Codex",
    }
}

/// The host's name on `print-config`'s command line.
fn cli_name(host: Host) -> String {
    use clap::ValueEnum;
    host.to_possible_value()
        .map(|value| value.get_name().to_string())
        .unwrap_or_default()
}

/// Reads every candidate file that exists and judges its rootgrep entries; a problem when
/// none names rootgrep at all.
pub(super) fn check(
    env: &dyn Fn(&str) -> Option<OsString>,
    projects: &[PathBuf],
    exe: Option<&Path>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut named = 0;
    for candidate in candidates(Os::current(), env, projects) {
        let Ok(meta) = std::fs::metadata(&candidate.path) else {
            continue;
        };
        let file = format!("{} ({})", candidate.path.display(), label(candidate.host));
        let servers = match read(&candidate, meta.len()) {
            Ok(servers) => servers,
            Err(why) => {
                findings.push(Finding::problem(
                    format!("{file}: {why}"),
                    format!(
                        "correct the file (the host cannot read it either); rootgrep \
                         print-config {} prints a valid entry",
                        cli_name(candidate.host)
                    ),
                ));
                continue;
            }
        };
        let ours: Vec<&Server> = servers.iter().filter(|s| s.is_rootgrep()).collect();
        if ours.is_empty() {
            findings.push(Finding::note(format!("{file}: no rootgrep entry")));
        }
        for server in ours {
            named += 1;
            findings.push(judge(candidate.host, &file, server, exe, env));
        }
    }
    if named == 0 {
        let exe = exe.map_or("rootgrep".to_string(), |exe| exe.display().to_string());
        findings.push(Finding::problem(
            "no host config names rootgrep, so no host starts it",
            format!(
                "rootgrep print-config HOST [DIR] prints the entry and says where it goes \
                 (HOST: claude-code, claude-desktop, cursor, vscode, codex); for Claude Code \
                 at user scope: claude mcp add --scope user rootgrep -- {exe}"
            ),
        ));
    }
    findings
}

/// The server entries of one config file, or why it cannot be read.
fn read(candidate: &Candidate, len: u64) -> Result<Vec<Server>, String> {
    if len > MAX_BYTES {
        return Err(format!("over {} MiB, not read", MAX_BYTES >> 20));
    }
    let text = std::fs::read_to_string(&candidate.path)
        .map_err(|err| format!("cannot be read ({err})"))?;
    match candidate.format {
        Format::Toml => Ok(servers_in_toml(&text)),
        Format::Json => {
            let plain = if candidate.host == Host::Vscode {
                strip_jsonc(&text)
            } else {
                text
            };
            if plain.trim().is_empty() {
                return Ok(Vec::new());
            }
            serde_json::from_str(&plain)
                .map(|value| servers_in_json(&value))
                .map_err(|err| format!("not valid JSON ({err})"))
        }
    }
}

/// One rootgrep entry, judged by its command.
fn judge(
    host: Host,
    file: &str,
    server: &Server,
    exe: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Finding {
    let entry = match &server.place {
        Some(place) => format!("{file}, entry \"{}\" for {place}", server.name),
        None => format!("{file}, entry \"{}\"", server.name),
    };
    let reprint = format!(
        "rootgrep print-config {} prints the entry with this binary's absolute path: put its \
         command in place of the old one",
        cli_name(host)
    );
    let Some(command) = &server.command else {
        return Finding::problem(format!("{entry}: no command"), reprint);
    };
    let path = Path::new(command);
    if path.is_absolute() {
        if !path.is_file() {
            return Finding::problem(
                format!("{entry}: its command {command} does not exist"),
                reprint,
            );
        }
        if crate::hostconfig::build_dir_note(path).is_some() {
            return Finding::advice(
                format!(
                    "{entry}: runs {command}, a build in a cargo target directory, which `cargo clean` removes"
                ),
                format!("cargo install --locked --path . then {reprint}"),
            );
        }
        let same = exe.is_some_and(|exe| same_file(exe, path));
        let whose = if same {
            " (this binary)"
        } else {
            " (another rootgrep than this one)"
        };
        return Finding::ok(format!("{entry}: runs {command}{whose}"));
    }
    match on_path(command, env) {
        Some(found) if host != Host::ClaudeDesktop => Finding::advice(
            format!(
                "{entry}: runs \"{command}\" by name, found on this shell's PATH ({}); a host \
                 started from a dock or menu may not have that PATH",
                found.display()
            ),
            reprint,
        ),
        Some(_) => Finding::problem(
            format!(
                "{entry}: runs \"{command}\" by name; Claude Desktop does not see your shell's PATH"
            ),
            reprint,
        ),
        None => Finding::problem(
            format!("{entry}: runs \"{command}\", which is not on PATH"),
            reprint,
        ),
    }
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Where `command` is found on `PATH` (with `.exe` on Windows), if anywhere. A relative
/// path with a separator is never looked up: it names a file relative to wherever the host
/// starts the server.
pub(super) fn on_path(command: &str, env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if command.contains(['/', '\\']) {
        return None;
    }
    let path = env("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let names = [command.to_string(), format!("{command}.exe")];
        names
            .into_iter()
            .take(if cfg!(windows) { 2 } else { 1 })
            .map(|name| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

#[cfg(test)]
#[path = "hosts_tests.rs"]
mod tests;
