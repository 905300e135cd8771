//! Hostile ignore files (issue #19, items 6 and 17a): an ignore file that is a FIFO (a
//! tarball can carry one) must never be opened — before, every walk blocked on it forever,
//! and with the watcher on even `initialize` never answered — and an ignore file past the
//! size limit is not applied. Either is skipped, the rest of the rules still apply, and the
//! answers say what was skipped.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A hang is what is tested: an answer within this (vs never).
const BOUND: Duration = Duration::from_secs(20);

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
}

/// Every ignore file kind at the root and in `sub/`, each ignoring its own file; every file
/// holds `needle`.
fn fixture(app: &Path) {
    let write = |rel: &str, text: &str| {
        let path = app.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(".git/HEAD", "ref: refs/heads/main\n");
    write(".git/info/exclude", "excluded.txt\n");
    write(".gitignore", "*.log\n");
    write(".ignore", "secret.txt\n");
    write("sub/.gitignore", "*.tmp\n");
    write("sub/.ignore", "private.txt\n");
    for rel in [
        "src/main.rs",
        "app.log",
        "secret.txt",
        "excluded.txt",
        "sub/a.rs",
        "sub/x.tmp",
        "sub/private.txt",
    ] {
        write(rel, "fn needle() {}\n");
    }
}

/// What a default search lists when the ignore file `fifo` is not applied.
fn expected(fifo: &str) -> Vec<&'static str> {
    let mut files = vec!["src/main.rs", "sub/a.rs"];
    files.push(match fifo {
        ".gitignore" => "app.log",
        ".ignore" => "secret.txt",
        ".git/info/exclude" => "excluded.txt",
        "sub/.gitignore" => "sub/x.tmp",
        "sub/.ignore" => "sub/private.txt",
        other => panic!("{other}"),
    });
    files.sort();
    files
}

fn within(client: &mut Client, method: &str, params: Value, what: &str) -> Value {
    let started = Instant::now();
    let id = client.start(method, params);
    client.response(id, BOUND).unwrap_or_else(|| {
        panic!(
            "{what}: no answer within {:?} (an ignore file was opened and blocked)",
            started.elapsed()
        )
    })
}

fn tool(client: &mut Client, name: &str, arguments: Value) -> Value {
    let response = within(
        client,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
        name,
    );
    assert!(response.get("error").is_none(), "{name}: {response}");
    response["result"].clone()
}

fn relative(app: &Path, files: Vec<String>) -> Vec<String> {
    let mut rel: Vec<String> = files
        .iter()
        .map(|f| {
            Path::new(f)
                .strip_prefix(app)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| f.clone())
        })
        .collect();
    rel.sort();
    rel
}

fn assert_reports(answer: &Value, fifo: &Path, what: &str) {
    let body = answer.to_string();
    assert!(
        body.contains("skipped ignore file") && body.contains(s(fifo)),
        "{what} does not report the skipped ignore file {}: {body}",
        fifo.display()
    );
}

fn run(fifo: &str, watch: bool) {
    let ws = workspace();
    fixture(&ws.app);
    let fifo_path = ws.app.join(fifo);
    std::fs::remove_file(&fifo_path).unwrap();
    mkfifo(&fifo_path);
    let args: &[&str] = if watch { &[] } else { &["--no-watch"] };
    let mut client = Client::spawn(args, &ws.app);
    let label = format!("{fifo} (watch: {watch})");

    within(
        &mut client,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{},
               "clientInfo":{"name":"wire-test","version":"1"}}),
        &format!("initialize, {label}"),
    );
    client.notify("notifications/initialized", json!({}));
    within(&mut client, "ping", json!({}), &format!("ping, {label}"));

    let want = expected(fifo);
    let check_searches = |client: &mut Client, when: &str| {
        let grep = tool(
            client,
            "grep",
            json!({"pattern": "needle", "output_mode": "files_with_matches"}),
        );
        assert_eq!(
            relative(&ws.app, listed_files(&grep)),
            want,
            "grep {when}, {label}"
        );
        assert_reports(&grep, &fifo_path, &format!("grep {when}, {label}"));
        let glob = tool(client, "glob", json!({"pattern": "**/*.*"}));
        let mut globbed = relative(&ws.app, listed_files(&glob));
        globbed.retain(|f| !f.ends_with("ignore"));
        assert_eq!(globbed, want, "glob {when}, {label}");
        assert_reports(&glob, &fifo_path, &format!("glob {when}, {label}"));
    };
    check_searches(&mut client, "at once");

    let dir = fifo_path.parent().unwrap();
    let dir = if dir.ends_with(".git/info") {
        ws.app.clone()
    } else {
        dir.to_path_buf()
    };
    let listing = tool(&mut client, "list_directory", json!({"path": s(&dir)}));
    assert_reports(&listing, &fifo_path, &format!("list_directory, {label}"));
    let tree = tool(&mut client, "directory_tree", json!({"path": s(&ws.app)}));
    assert_reports(&tree, &fifo_path, &format!("directory_tree, {label}"));
    let symbols = tool(&mut client, "symbols", json!({"query": "needle"}));
    assert!(
        symbols.to_string().contains("main.rs"),
        "symbols, {label}: {symbols}"
    );
    let base = uri(&ws.app)["file:///".len()..].to_string();
    let completion = within(
        &mut client,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"},
               "argument": {"name": "path", "value": format!("{base}/s")}}),
        &format!("completion, {label}"),
    );
    assert!(
        completion.to_string().contains("src"),
        "completion, {label}: {completion}"
    );
    let resources = within(
        &mut client,
        "resources/list",
        json!({}),
        &format!("resources/list, {label}"),
    );
    assert!(
        resources.to_string().contains("main.rs"),
        "resources/list, {label}: {resources}"
    );
    if watch {
        // Served from the file index now: the same files, the same report.
        wait_indexed(&mut client);
        check_searches(&mut client, "from the index");
    }
    within(
        &mut client,
        "ping",
        json!({}),
        &format!("last ping, {label}"),
    );
}

#[test]
fn a_fifo_root_gitignore_is_skipped_and_reported() {
    run(".gitignore", true);
    run(".gitignore", false);
}

#[test]
fn a_fifo_root_dot_ignore_is_skipped_and_reported() {
    run(".ignore", true);
    run(".ignore", false);
}

#[test]
fn a_fifo_git_info_exclude_is_skipped_and_reported() {
    run(".git/info/exclude", true);
    run(".git/info/exclude", false);
}

#[test]
fn a_fifo_gitignore_in_a_subdirectory_is_skipped_and_reported() {
    run("sub/.gitignore", true);
    run("sub/.gitignore", false);
}

#[test]
fn a_fifo_dot_ignore_in_a_subdirectory_is_skipped_and_reported() {
    run("sub/.ignore", true);
    run("sub/.ignore", false);
}

/// Item 17a: an ignore file past the limit is not applied (so searches neither take
/// seconds nor hold a gigabyte compiling it), and the answers say so.
#[test]
fn an_oversized_gitignore_is_not_applied_and_is_reported() {
    let ws = workspace();
    fixture(&ws.app);
    // 1.6 MB of distinct wildcard rules, as in the report; one of them ignores app.log.
    let mut rules = String::from("*.log\n");
    let mut n = 0;
    while rules.len() < 1_600_000 {
        rules.push_str(&format!("dir{n}/**/*file{n}*.x{n}\n"));
        n += 1;
    }
    std::fs::write(ws.app.join(".gitignore"), &rules).unwrap();
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({}));
    let gitignore = ws.app.join(".gitignore");
    for _ in 0..3 {
        let started = Instant::now();
        let grep = tool(
            &mut client,
            "grep",
            json!({"pattern": "needle", "output_mode": "files_with_matches"}),
        );
        assert!(started.elapsed() < BOUND);
        assert_eq!(
            relative(&ws.app, listed_files(&grep)),
            expected(".gitignore"),
            "the oversized .gitignore is not applied; the other rules are"
        );
        assert_reports(&grep, &gitignore, "grep over an oversized .gitignore");
        assert!(grep.to_string().contains("limit"), "{grep}");
    }
    #[cfg(target_os = "linux")]
    {
        // The peak resident size: compiling the rules took 1.2 GB before.
        let status = std::fs::read_to_string(format!("/proc/{}/status", client.pid())).unwrap();
        let peak_kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        assert!(peak_kib < 300 * 1024, "peak resident {peak_kib} KiB");
    }
}
