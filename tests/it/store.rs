//! The persistent index store through the wire (PRODUCT §15): a restarted server answers
//! from the store exactly as a fresh build does, after edits made while no server ran;
//! two servers started at once build once; a writer killed mid-write, a damaged, read-only
//! or full store, and a root moved or replaced between runs all lose nothing and answer
//! right; a first build stopped halfway continues from what it stored; `rootgrep cache`
//! lists and clears.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// A tree of `n` Rust files (plus a Python and a C file) under `root`.
fn tree(root: &Path, n: usize) {
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    for i in 0..n {
        std::fs::write(
            root.join(format!("src/m{i}.rs")),
            format!(
                "pub fn persisted_{i}(x: u32) -> u32 {{ x + {i} }}\n\
                 pub struct Holder{i} {{ v: u32 }}\n\
                 impl Holder{i} {{ pub fn get(&self) -> u32 {{ persisted_{i}(self.v) }} }}\n"
            ),
        )
        .unwrap();
    }
    std::fs::write(
        root.join("src/deep/tool.py"),
        "def helper():\n    return 1\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/deep/c.c"),
        "int c_side(void) { return 0; }\n",
    )
    .unwrap();
}

fn server(root: &Path, cache: Option<&Path>) -> Client {
    let mut args = vec![];
    match cache {
        Some(dir) => args.extend(["--cache-dir", s(dir)]),
        None => args.push("--no-cache"),
    }
    let mut client = Client::spawn(&args, root);
    client.handshake(json!({}));
    client
}

/// Polls the first root's symbols line until `want` holds.
fn wait_line(client: &mut Client, want: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let line = symbols_state(client);
        if want(&line) {
            return line;
        }
        assert!(std::time::Instant::now() < deadline, "symbols: {line}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Polls the first root's search line until `want` holds.
fn wait_search(client: &mut Client, want: impl Fn(&str) -> bool) -> String {
    wait_root_line(client, "search", Duration::from_secs(60), want)
}

/// A server on `root` (with `cache`, or `--no-cache`) whose symbol and search indexes are
/// ready.
fn ready_server(root: &Path, cache: Option<&Path>) -> Client {
    let mut client = server(root, cache);
    wait_line(&mut client, |l| l.starts_with("ready"));
    wait_search(&mut client, |l| l.starts_with("ready"));
    client
}

/// A first server on `root` builds and stores its table, then goes.
fn store_once(root: &Path, cache: &Path) {
    let mut first = server(root, Some(cache));
    ready_and_stored(&mut first);
}

fn ready_and_stored(client: &mut Client) -> String {
    wait_search(client, |l| {
        l.starts_with("ready") && (l.contains("stored") || l.contains("from the store"))
    });
    wait_line(client, |l| l.starts_with("ready") && l.contains("stored"))
}

/// What every read tool answers on the root, without the timings.
fn answers(client: &mut Client) -> Vec<String> {
    let calls = [
        ("symbols", json!({"query": "persisted_1", "exact": true})),
        ("symbols", json!({"query": "persisted_", "head_limit": 500})),
        ("symbols", json!({"query": "Holder"})),
        ("symbols", json!({"query": "get"})),
        ("symbols", json!({"query": "helper"})),
        ("symbols", json!({"query": "edited_while_down"})),
        ("symbols", json!({"query": "c_side"})),
        ("outline", json!({"path": "src/m3.rs"})),
        ("references", json!({"symbol": "persisted_3"})),
        (
            "grep",
            json!({"pattern": "persisted_\\d+\\(", "output_mode": "count"}),
        ),
        ("grep", json!({"pattern": "edited_while_down"})),
        ("glob", json!({"pattern": "**/*.rs", "head_limit": 0})),
        ("list_directory", json!({"path": "src/deep"})),
        ("search", json!({"query": "persisted holder get"})),
        (
            "search",
            json!({"query": "edited while down", "head_limit": 3}),
        ),
        ("search", json!({"query": "helper c side"})),
    ];
    calls
        .iter()
        .map(|(tool, args)| {
            let mut result = client.call(tool, args.clone());
            assert!(!is_error(&result), "{tool} {args}: {result}");
            scrub(&mut result);
            format!("{tool} {args}: {result}")
        })
        .collect()
}

/// Drops what differs between equal answers: timings and index statistics.
fn scrub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("stats");
            map.remove("elapsed_ms");
            map.remove("_meta");
            for v in map.values_mut() {
                scrub(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub),
        _ => {}
    }
}

#[test]
fn a_restarted_server_answers_from_the_store_like_a_fresh_build() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 40);
    store_once(&ws.app, &cache);

    // Edited, added and removed while no server ran.
    std::fs::write(ws.app.join("src/m1.rs"), "pub fn edited_while_down() {}\n").unwrap();
    std::fs::write(ws.app.join("src/added.rs"), "pub fn persisted_added() {}\n").unwrap();
    std::fs::remove_file(ws.app.join("src/m2.rs")).unwrap();

    let mut again = server(&ws.app, Some(&cache));
    let line = ready_and_stored(&mut again);
    assert!(
        line.contains("loaded from the store, 2 changed files parsed, stored again"),
        "{line}"
    );
    let searched = wait_search(&mut again, |l| l.starts_with("ready"));
    assert!(searched.contains("loaded from the store"), "{searched}");
    // The file list too (where directories have a change time): the directories are
    // listed again, not the whole root walked (here all of them: the tree is seconds old,
    // too recent for its stamps to be trusted).
    let index = root_line(&mut again, "index");
    assert_eq!(
        index.contains("from the store: 3 of 3 directories listed again"),
        cfg!(unix),
        "{index}"
    );
    // Both indexes are read where they lie in the store (mapped), not copied to the heap.
    if cfg!(unix) {
        assert!(line.contains("read in place"), "{line}");
        assert!(searched.contains("read in place"), "{searched}");
    }
    let mut fresh = ready_server(&ws.app, None);
    let (got, want) = (answers(&mut again), answers(&mut fresh));
    assert_eq!(got, want);
    assert!(got[5].contains("m1.rs"), "{}", got[5]);
    assert!(!got[1].contains("persisted_2\""), "{}", got[1]);
    assert!(got[14].contains("edited_while_down"), "{}", got[14]);
}

/// The first query of a restarted server, sent at once, waits for the stored table's check
/// and answers from the index (not by parsing on demand).
#[test]
fn the_first_query_of_a_restarted_server_answers_from_the_store() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 300);
    store_once(&ws.app, &cache);
    let mut again = server(&ws.app, Some(&cache));
    let result = again.call("symbols", json!({"query": "persisted_", "head_limit": 500}));
    assert!(
        result["structuredContent"]["stats"]["indexed_files"].is_u64(),
        "not from the index: {result}"
    );
    assert_eq!(result["structuredContent"]["total"], 300);
}

#[test]
fn two_servers_started_at_once_build_once_and_agree() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 600);
    let mut a = server(&ws.app, Some(&cache));
    let mut b = server(&ws.app, Some(&cache));
    // Ready, and said how its table stands (the writer says so once it has written).
    let settled =
        |l: &str| l.starts_with("ready") && (l.contains("stored,") || l.contains("from the store"));
    let lines = [wait_line(&mut a, settled), wait_line(&mut b, settled)];
    // And both search indexes ready (else one answers from the text pre-filter).
    for client in [&mut a, &mut b] {
        wait_search(client, |l| l.starts_with("ready"));
    }
    // One wrote the store; the other read it (or, started late enough, loaded it).
    let wrote = lines.iter().filter(|l| l.contains("stored,")).count();
    assert_eq!(wrote, 1, "{lines:?}");
    assert_eq!(answers(&mut a), answers(&mut b));
}

/// kill -9 while the table's temp file is half written (the server pauses there,
/// `--test-store-write-pause`): the stored table is the previous one or none, never the
/// half; the next writer removes the temp file and answers right.
#[cfg(unix)]
#[test]
fn a_writer_killed_mid_write_leaves_nothing_half_written() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 50);
    let mut fresh = ready_server(&ws.app, None);
    let want = answers(&mut fresh);
    check_kill(&ws, &cache, &want, false);
    // A stored table exists now; a change makes the next start write again.
    std::fs::write(ws.app.join("src/m1.rs"), "pub fn edited_while_down() {}\n").unwrap();
    let mut fresh = ready_server(&ws.app, None);
    let now = answers(&mut fresh);
    assert_ne!(now, want);
    check_kill(&ws, &cache, &now, true);
}

#[cfg(unix)]
fn check_kill(ws: &Workspace, cache: &Path, want: &[String], had_table: bool) {
    let mut victim = Client::spawn(
        &["--cache-dir", s(cache), "--test-store-write-pause", "60000"],
        &ws.app,
    );
    victim.handshake(json!({}));
    // Killed while a store file is half-written (the symbol table is written into the
    // store before it is served, so the first one may be it).
    let entry = loop {
        let found = std::fs::read_dir(cache.join("rootgrep/roots"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|dir| {
                std::fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|f| f.file_name().to_string_lossy().ends_with(".tmp"))
            });
        if let Some(dir) = found {
            break dir;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    victim.child.kill().unwrap();
    let _ = victim.child.wait();
    assert_eq!(entry.join("symbols").exists(), had_table);
    let mut next = server(&ws.app, Some(cache));
    let line = ready_and_stored(&mut next);
    assert!(
        !line.contains("loaded from the store,") || had_table,
        "{line}"
    );
    assert_eq!(answers(&mut next), want);
    let leftovers: Vec<_> = std::fs::read_dir(&entry)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn only_entry(cache: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.join("rootgrep/roots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

#[test]
fn a_damaged_store_is_rebuilt() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 30);
    store_once(&ws.app, &cache);
    let table = only_entry(&cache).join("symbols");
    let mut bytes = std::fs::read(&table).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&table, &bytes).unwrap();
    let mut again = server(&ws.app, Some(&cache));
    let line = ready_and_stored(&mut again);
    assert!(!line.contains("loaded from the store"), "{line}");
    let mut fresh = ready_server(&ws.app, None);
    assert_eq!(answers(&mut again), answers(&mut fresh));
}

/// The search index's stored segment cut short, or garbage with a valid length: refused,
/// rebuilt, and the answers are a fresh build's.
#[test]
fn a_damaged_search_segment_is_rebuilt() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 30);
    store_once(&ws.app, &cache);
    let segment = only_entry(&cache).join("search");
    let bytes = std::fs::read(&segment).unwrap();
    let mut fresh = ready_server(&ws.app, None);
    let want = answers(&mut fresh);
    for damaged in [bytes[..bytes.len() / 3].to_vec(), vec![0x5a; bytes.len()]] {
        std::fs::write(&segment, &damaged).unwrap();
        let mut again = server(&ws.app, Some(&cache));
        let line = wait_search(&mut again, |l| {
            l.starts_with("ready") && l.contains("stored")
        });
        assert!(line.contains("stored copy refused"), "{line}");
        assert_eq!(answers(&mut again), want);
    }
}

#[test]
fn an_unusable_cache_directory_costs_only_the_saving() {
    let ws = workspace();
    tree(&ws.app, 10);
    // A file where the cache directory would go: nothing can be created there.
    let blocked = ws.base.join("not-a-dir");
    std::fs::write(&blocked, "x").unwrap();
    let mut client = server(&ws.app, Some(&blocked.join("cache")));
    let line = wait_line(&mut client, |l| l.starts_with("ready"));
    assert!(line.contains("not stored:"), "{line}");
    let mut fresh = ready_server(&ws.app, None);
    assert_eq!(answers(&mut client), answers(&mut fresh));
}

/// A full disk (a 64 KiB tmpfs) and a read-only one: the index serves from memory, says
/// why it is not stored, and leaves no temp file. Needs root to mount (skipped otherwise).
#[cfg(target_os = "linux")]
#[test]
fn a_full_or_read_only_cache_disk_loses_nothing() {
    if !rustix::process::getuid().is_root() {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    }
    let ws = workspace();
    tree(&ws.app, 800);
    for (options, expect) in [("size=64k", "No space left"), ("ro", "Read-only")] {
        let disk = ws.base.join(format!("disk-{options}"));
        std::fs::create_dir(&disk).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs", s(&disk)])
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: mount -t tmpfs failed");
            return;
        }
        // The smallest build budget: the search index would be built in parts in the
        // store; on a full disk that fails and it is built in memory instead.
        let args = ["--cache-dir", s(&disk), "--build-memory-mb", "0"];
        let mut client = Client::spawn(&args, &ws.app);
        client.handshake(json!({}));
        let line = wait_line(&mut client, |l| {
            l.starts_with("ready") && l.contains("stored")
        });
        assert!(
            line.contains("not stored") && line.contains(expect),
            "{line}"
        );
        let search = wait_search(&mut client, |l| {
            l.starts_with("ready") && l.contains("stored")
        });
        assert!(search.contains("not stored"), "{search}");
        let mut fresh = ready_server(&ws.app, None);
        assert_eq!(answers(&mut client), answers(&mut fresh));
        drop(client);
        let mut left = Vec::new();
        for entry in walk(&disk) {
            left.push(entry);
        }
        assert!(
            left.iter().all(|p| !p.to_string_lossy().ends_with(".tmp")),
            "{left:?}"
        );
        let _ = std::process::Command::new("umount").arg(&disk).status();
    }
}

#[cfg(unix)]
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[test]
fn a_root_moved_or_replaced_between_runs_answers_its_own_files() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 20);
    store_once(&ws.app, &cache);
    // Moved: the new path is a new entry, built from its own files.
    let moved = ws.base.join("moved");
    std::fs::rename(&ws.app, &moved).unwrap();
    // Replaced: another tree at the old path, with files of the same names and sizes.
    tree(&ws.app, 20);
    std::fs::write(ws.app.join("src/m1.rs"), "pub fn edited_while_down() {}\n").unwrap();
    for root in [&moved, &ws.app] {
        let mut again = server(root, Some(&cache));
        let line = ready_and_stored(&mut again);
        assert!(!line.contains("loaded from the store"), "{line}");
        let mut fresh = ready_server(root, None);
        assert_eq!(
            answers(&mut again),
            answers(&mut fresh),
            "{}",
            root.display()
        );
    }
}

#[test]
fn rootgrep_cache_lists_and_clears_what_is_stored() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 5);
    let mut client = server(&ws.app, Some(&cache));
    ready_and_stored(&mut client);
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rootgrep"))
            .arg("cache")
            .args(args)
            .args(["--cache-dir", s(&cache)])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let listed = run(&[]);
    assert!(listed.contains("1 entries"), "{listed}");
    assert!(listed.contains(s(&ws.app)), "{listed}");
    assert!(
        listed.contains(&format!("written by pid {}", client.pid())),
        "{listed}"
    );
    // In use: kept.
    let cleared = run(&["clear"]);
    assert!(cleared.starts_with("removed 0 entries"), "{cleared}");
    drop(client);
    let cleared = run(&["clear", s(&ws.app)]);
    assert!(cleared.starts_with("removed 1 entries"), "{cleared}");
    assert!(run(&[]).contains("0 entries"));
}

/// Two servers on overlapping roots (a repository and a directory inside it) keep one
/// entry each, and each answers like a fresh build after changes while both were down.
#[test]
fn overlapping_roots_keep_their_own_entries() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 20);
    let inner = ws.app.join("src");
    let mut outer_server = server(&ws.app, Some(&cache));
    let mut inner_server = server(&inner, Some(&cache));
    ready_and_stored(&mut outer_server);
    ready_and_stored(&mut inner_server);
    drop((outer_server, inner_server));
    assert_eq!(
        std::fs::read_dir(cache.join("rootgrep/roots"))
            .unwrap()
            .count(),
        2
    );
    std::fs::write(inner.join("m4.rs"), "pub fn edited_while_down() {}\n").unwrap();
    for root in [&ws.app, &inner] {
        let mut again = server(root, Some(&cache));
        wait_line(&mut again, |l| {
            l.starts_with("ready") && l.contains("store")
        });
        let mut fresh = ready_server(root, None);
        let got = again.call("symbols", json!({"query": "edited_while_down"}));
        assert_eq!(got["structuredContent"]["total"], 1, "{got}");
        let want = fresh.call("symbols", json!({"query": "persisted_", "head_limit": 500}));
        let have = again.call("symbols", json!({"query": "persisted_", "head_limit": 500}));
        assert_eq!(
            have["structuredContent"]["symbols"],
            want["structuredContent"]["symbols"]
        );
    }
}

/// A root and files named in other scripts and with spaces restart from the store like any
/// other.
#[test]
fn roots_named_in_other_scripts_restart_from_the_store() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    let root = ws.base.join("项目 ünïcode");
    tree(&root, 10);
    std::fs::write(
        root.join("src/模块 файл.rs"),
        "pub fn 函数_名() {}\npub fn persisted_x() {}\n",
    )
    .unwrap();
    store_once(&root, &cache);
    let mut again = server(&root, Some(&cache));
    let line = wait_line(&mut again, |l| l.starts_with("ready"));
    assert!(line.contains("loaded from the store"), "{line}");
    let got = again.call("symbols", json!({"query": "函数_名"}));
    assert_eq!(got["structuredContent"]["total"], 1, "{got}");
    assert!(
        got["structuredContent"]["stats"]["indexed_files"].is_u64(),
        "{got}"
    );
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_rootgrep"))
        .args(["cache", "--cache-dir", s(&cache)])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("项目 ünïcode"));
}

/// `rootgrep cache` on a cache directory where someone planted `rootgrep/roots` (or
/// `rootgrep`) as a symlink to a victim directory: nothing is listed or removed (exit 1,
/// the reason on stderr) and the victim keeps every file. Entries of roots that are gone
/// are marked, and `clear --missing` removes only those.
#[cfg(unix)]
#[test]
fn rootgrep_cache_never_follows_a_planted_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    let run = |cache: &Path, args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_rootgrep"))
            .arg("cache")
            .args(args)
            .args(["--cache-dir", s(cache)])
            .output()
            .unwrap()
    };
    let victim = ws.base.join("victim");
    for sub in ["0123456789abcdef", "fedcba9876543210"] {
        std::fs::create_dir_all(victim.join(sub)).unwrap();
        std::fs::write(victim.join(sub).join("used"), "precious").unwrap();
    }
    for level in ["rootgrep/roots", "rootgrep"] {
        let cache = ws.base.join(format!("shared-{}", level.len()));
        let link = cache.join(level);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        let private = std::fs::Permissions::from_mode(0o700);
        std::fs::set_permissions(link.parent().unwrap(), private).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        for args in [&[][..], &["clear"][..]] {
            let out = run(&cache, args);
            assert_eq!(out.status.code(), Some(1), "{level} {args:?}: {out:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("not a directory of this user"), "{stderr}");
            assert!(out.stdout.is_empty(), "{out:?}");
        }
        for sub in ["0123456789abcdef", "fedcba9876543210"] {
            assert_eq!(
                std::fs::read_to_string(victim.join(sub).join("used")).unwrap(),
                "precious",
                "{level}"
            );
        }
    }

    let cache = ws.base.join("cache");
    tree(&ws.app, 3);
    let gone = ws.base.join("gone");
    tree(&gone, 3);
    for root in [&ws.app, &gone] {
        let mut client = server(root, Some(&cache));
        ready_and_stored(&mut client);
    }
    std::fs::remove_dir_all(&gone).unwrap();
    let listed = String::from_utf8(run(&cache, &[]).stdout).unwrap();
    assert!(listed.contains(&format!("(gone) {}", s(&gone))), "{listed}");
    assert!(
        !listed.contains(&format!("(gone) {}", s(&ws.app))),
        "{listed}"
    );
    let out = run(&cache, &["clear", "--missing"]);
    let cleared = String::from_utf8(out.stdout).unwrap();
    assert!(cleared.starts_with("removed 1 entries"), "{cleared}");
    let listed = String::from_utf8(run(&cache, &[]).stdout).unwrap();
    assert!(
        listed.contains("1 entries") && listed.contains(s(&ws.app)),
        "{listed}"
    );
}

/// A store file cut short while a server reads it in place (`truncate -s 0`, `cp` or
/// `rsync --inplace` over the cache, a cleaner): the server never dies (no SIGBUS); a call
/// that read it as it broke says so and asks to call again, and every answer after that is
/// a fresh build's.
#[cfg(unix)]
#[test]
fn a_store_file_truncated_while_mapped_costs_a_rebuild_not_the_server() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 40);
    store_once(&ws.app, &cache);
    let mut again = server(&ws.app, Some(&cache));
    let line = wait_line(&mut again, |l| {
        l.starts_with("ready") && l.contains("in place")
    });
    assert!(line.contains("loaded from the store"), "{line}");
    wait_search(&mut again, |l| {
        l.starts_with("ready") && l.contains("in place")
    });
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.join("rootgrep/roots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for kind in ["symbols", "search"] {
        let file = entries[0].join(kind);
        let handle = std::fs::File::options().write(true).open(&file).unwrap();
        handle.set_len(0).unwrap();
    }
    let mut fresh = ready_server(&ws.app, None);
    let want = answers(&mut fresh);
    // Each call either reads zeros as the damage is found (an error saying so) or is
    // answered from the files; once rebuilt, exactly as a fresh build answers.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let calls = [
            ("symbols", json!({"query": "persisted_", "head_limit": 500})),
            ("search", json!({"query": "persisted holder get"})),
            ("grep", json!({"pattern": "persisted_1\\(", "scope": true})),
        ];
        for (tool, args) in calls {
            let result = again.call(tool, args.clone());
            if is_error(&result) {
                assert!(text(&result).contains("call again"), "{tool}: {result}");
            }
        }
        let ready = symbols_state(&mut again).starts_with("ready")
            && wait_search(&mut again, |_| true).starts_with("ready");
        // A search index rebuilt from a symbol table that then proves damaged is rebuilt
        // once more (its answers say "partial" meanwhile): wait for that one too.
        if ready {
            let got = answers(&mut again);
            if got == want {
                break;
            }
            if std::time::Instant::now() >= deadline {
                assert_eq!(got, want);
            }
        }
        assert!(std::time::Instant::now() < deadline, "never rebuilt");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pong = again.request("ping", json!({}));
    assert!(
        pong.get("result").is_some(),
        "the server still answers: {pong}"
    );
}

/// `--cache-max-mb` given is a hard limit (an index over it is kept in memory and the
/// reason said); without it the served root's index is stored whatever its size.
#[test]
fn a_given_cache_limit_is_hard_and_the_default_stores_the_served_root() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 5);
    let mut limited = Client::spawn(&["--cache-dir", s(&cache), "--cache-max-mb", "0"], &ws.app);
    limited.handshake(json!({}));
    let line = wait_line(&mut limited, |l| {
        l.starts_with("ready") && l.contains("not stored")
    });
    assert!(line.contains("over the store's limit of 0 KiB"), "{line}");
    drop(limited);
    let mut default = server(&ws.app, Some(&cache));
    let line = ready_and_stored(&mut default);
    assert!(line.contains("stored"), "{line}");
}

/// A symbol build stopped halfway continues from what it stored so far: the next server
/// parses only the files the first did not reach, and answers as a fresh build does.
#[cfg(unix)]
#[test]
fn a_first_build_stopped_halfway_continues_from_the_store() {
    let ws = workspace();
    let cache = ws.base.join("cache");
    tree(&ws.app, 1500);
    // The 1,500 files, `tool.py`, `c.c` and the workspace's own `src/main.rs`.
    let supported = 1503;
    let mut fresh = ready_server(&ws.app, None);
    let want = answers(&mut fresh);
    drop(fresh);
    let mut first = Client::spawn(
        &["--cache-dir", s(&cache), "--test-checkpoint-files", "100"],
        &ws.app,
    );
    first.handshake(json!({}));
    // Stopped as soon as its first checkpoint is stored.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !walk(&cache).iter().any(|p| p.ends_with("symbols")) {
        assert!(std::time::Instant::now() < deadline, "no checkpoint stored");
        std::thread::sleep(Duration::from_millis(1));
    }
    first.child.kill().unwrap();
    let _ = first.child.wait();
    let mut next = server(&ws.app, Some(&cache));
    let line = ready_and_stored(&mut next);
    let parsed: usize = line
        .split("loaded from the store, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .unwrap_or_else(|| panic!("not continued from the store: {line}"));
    // The first round, at least, is not parsed again.
    assert!(parsed > 0 && parsed <= supported - 100, "{line}");
    assert_eq!(answers(&mut next), want);
}

/// A change to git's global configuration that says nothing about ignoring (a user name,
/// as tools write it) keeps a restart's stored file list; one that names another excludes
/// file means a whole walk, and the new rules apply.
#[cfg(unix)]
#[test]
fn a_git_setting_unrelated_to_ignoring_keeps_the_stored_file_list() {
    let ws = workspace();
    let (home, cache) = (ws.base.join("home"), ws.base.join("cache"));
    let config_home = home.join(".config");
    std::fs::create_dir_all(&config_home).unwrap();
    std::fs::create_dir_all(ws.app.join(".git")).unwrap();
    tree(&ws.app, 3);
    std::fs::write(ws.app.join("src/notes.log"), "a log\n").unwrap();
    let config = home.join(".gitconfig");
    let write_config = |name: &str, excludes: &Path| {
        let text = format!(
            "[user]\n\tname = {name}\n[core]\n\texcludesFile = {}\n",
            excludes.display()
        );
        std::fs::write(&config, text).unwrap();
    };
    // An excludes file that does not exist: no rules, and no stamp too recent to trust.
    let absent = home.join("no-such-ignore");
    write_config("first", &absent);
    let env = [("HOME", s(&home)), ("XDG_CONFIG_HOME", s(&config_home))];
    let start = || {
        let mut client = Client::spawn_with_env(&["--cache-dir", s(&cache)], &ws.app, &env);
        client.handshake(json!({}));
        wait_search(&mut client, |l| l.starts_with("ready"));
        client
    };
    let logs = |client: &mut Client| {
        let found = client.call("glob", json!({"pattern": "**/*.log"}));
        listed_files(&found).len()
    };
    let mut first = start();
    ready_and_stored(&mut first);
    assert_eq!(logs(&mut first), 1);
    drop(first);

    write_config("second", &absent);
    let mut second = start();
    let index = wait_root_line(&mut second, "index", Duration::from_secs(60), |l| {
        l.contains("fresh")
    });
    assert!(index.contains("from the store"), "{index}");
    assert_eq!(logs(&mut second), 1);
    drop(second);

    let excludes = home.join("ignore");
    std::fs::write(&excludes, "*.log\n").unwrap();
    write_config("second", &excludes);
    let mut third = start();
    let index = wait_root_line(&mut third, "index", Duration::from_secs(60), |l| {
        l.contains("fresh")
    });
    assert!(!index.contains("from the store"), "{index}");
    assert_eq!(logs(&mut third), 0, "the new excludes file applies");
}
