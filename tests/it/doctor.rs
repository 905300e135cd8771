//! `rootgrep doctor` and `rootgrep --version`, what a newcomer runs first: the doctor finds
//! host configs planted in a temporary HOME and in the project, judges their commands, and
//! exits 1 only when a problem was found; the version names the commit built from.

use std::path::Path;
use std::process::Command;

use crate::support::*;

/// Runs `rootgrep doctor ARGS` in `cwd` with `home` as the user's home (and every per-user
/// directory under it): (status, stdout).
fn doctor(home: &Path, cwd: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .arg("doctor")
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("USERPROFILE", home)
        .env("APPDATA", home.join("AppData").join("Roaming"))
        .env("LOCALAPPDATA", home.join("AppData").join("Local"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env_remove("CODEX_HOME")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn plant(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn doctor_finds_planted_host_configs_and_judges_their_commands() {
    let ws = workspace();
    let home = ws.base.join("home");
    std::fs::create_dir_all(&home).unwrap();
    // The binary's absolute path as a host config holds it (print-config's form).
    let binary = rootgrep::cli::plain_path(
        std::fs::canonicalize(env!("CARGO_BIN_EXE_rootgrep"))
            .unwrap()
            .to_str()
            .unwrap(),
    );
    let exe = serde_json::to_string(&binary).unwrap();

    // Nothing configured: a problem, and the command that fixes it.
    let (code, out) = doctor(&home, &ws.app, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("no host config names rootgrep"), "{out}");
    assert!(out.contains("fix: rootgrep print-config HOST"), "{out}");

    // Cursor at user scope (in HOME) and VS Code in the project (with a comment and a
    // trailing comma, as VS Code allows), both running this binary: no problem.
    let cursor = home.join(".cursor").join("mcp.json");
    plant(
        &cursor,
        &format!(r#"{{"mcpServers": {{"rootgrep": {{"command": {exe}, "args": []}}}}}}"#),
    );
    let vscode = ws.app.join(".vscode").join("mcp.json");
    plant(
        &vscode,
        &format!(
            "{{\n  // rootgrep\n  \"servers\": {{\"rootgrep\": {{\"type\": \"stdio\", \
             \"command\": {exe}, \"args\": [],}}}}\n}}\n"
        ),
    );
    let (code, out) = doctor(&home, &ws.app, &[]);
    assert!(out.starts_with("rootgrep "), "{out}");
    for section in ["\nroots\n", "\nwatching\n", "\ncache\n", "\nhosts\n"] {
        assert!(out.contains(section), "{section:?} in {out}");
    }
    assert!(
        out.contains(&format!("{}: a directory", ws.app.display())),
        "{out}"
    );
    // Found and judged fine (a note only: this binary is a build in a target directory).
    let found = |file: &Path, host: &str| {
        out.lines().any(|line| {
            !line.starts_with("  PROBLEM")
                && line.contains(&format!(
                    "{} ({host}), entry \"rootgrep\": runs ",
                    file.display()
                ))
                && line.contains(&binary)
        })
    };
    assert!(found(&vscode, "VS Code"), "{out}");
    assert!(found(&cursor, "Cursor"), "{out}");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("No problem found.\n"), "{out}");

    // Claude Code's project file names a rootgrep that is gone: a problem, with its fix.
    let gone = serde_json::to_string(&home.join("gone").join("rootgrep")).unwrap();
    plant(
        &ws.app.join(".mcp.json"),
        &format!(r#"{{"mcpServers": {{"rootgrep": {{"command": {gone}}}}}}}"#),
    );
    let (code, out) = doctor(&home, &ws.app, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("does not exist"), "{out}");
    assert!(
        out.contains("fix: rootgrep print-config claude-code"),
        "{out}"
    );
    assert!(
        out.ends_with("1 problem found: its fix is under it.\n"),
        "{out}"
    );

    // A DIR that does not exist is the roots' problem; options are taken as serving takes
    // them.
    let missing = ws.base.join("missing");
    let (code, out) = doctor(&home, &ws.app, &[s(&missing), "--no-watch", "--no-cache"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("would not start: DIR"), "{out}");
    assert!(out.contains("--no-watch: no live index"), "{out}");
    assert!(
        out.contains("--no-cache: the indexes are kept in memory only"),
        "{out}"
    );
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let prefix = concat!("rootgrep ", env!("CARGO_PKG_VERSION"), " (commit ");
    let commit = text
        .trim_end()
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{text:?}"
    );
    // Built in a git checkout (and git runs here): the checkout's HEAD.
    let manifest = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(manifest)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let top = git(&["rev-parse", "--show-toplevel"]).map(std::path::PathBuf::from);
    let in_checkout =
        top.and_then(|top| std::fs::canonicalize(top).ok()) == std::fs::canonicalize(manifest).ok();
    if std::env::var_os("ROOTGREP_COMMIT").is_none()
        && in_checkout
        && let Some(head) = git(&["rev-parse", "HEAD"])
    {
        assert!(head.starts_with(commit), "{commit} is not HEAD {head}");
    }
}
