//! The live layer under churn, through the wire: events the kernel dropped (an inotify
//! queue overflow) must not leave directories unwatched, and the index keeps answering
//! exactly what the disk holds afterwards.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

/// Stops (`STOP`) or resumes (`CONT`) the server process.
fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{sig} {pid}");
}

/// Waits until a fresh index answers a glob for `name` with `path`.
fn wait_found(client: &mut Client, name: &str, path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let roots = client.call("list_roots", json!({}));
        let fresh = roots["structuredContent"]["roots"][0]["index"]
            .as_str()
            .unwrap_or("")
            .starts_with("fresh");
        let found = client.call("glob", json!({"pattern": name, "head_limit": 0}));
        if fresh && listed_files(&found).contains(&s(path).to_string()) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} never found by a fresh index: {roots} {found}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The server is stopped while more events than the kernel queues (16384 by default)
/// happen, and a directory is created in that lost window; after the overflow, a file
/// written in that directory is seen (its directory is watched again).
#[test]
fn a_directory_created_while_events_were_lost_is_watched_after_the_overflow() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    let queued = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(16384);
    let flood = ws.app.join("flood");
    std::fs::create_dir(&flood).unwrap();
    let pid = client.pid();
    signal(pid, "STOP");
    // Each file is a create and a close-after-write: twice the queue is plenty.
    for n in 0..queued {
        std::fs::File::create(flood.join(format!("f{n}"))).unwrap();
    }
    let lost = ws.app.join("made-while-lost");
    std::fs::create_dir(&lost).unwrap();
    std::fs::write(lost.join("first.txt"), "first\n").unwrap();
    signal(pid, "CONT");
    // The overflow rebuilt the index; wait for it to see the new directory.
    wait_found(&mut client, "**/first.txt", &lost.join("first.txt"));
    let late = lost.join("late.txt");
    std::fs::write(&late, "late\n").unwrap();
    wait_found(&mut client, "**/late.txt", &late);
}

/// The first root's index line from `list_roots` as (fresh, files, full builds, updates):
/// `fresh (N files, built B×, U updates applied)`.
fn index_counts(client: &mut Client) -> (bool, u64, u64, u64) {
    let roots = client.call("list_roots", json!({}));
    let line = roots["structuredContent"]["roots"][0]["index"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let Some(inside) = line
        .strip_prefix("fresh (")
        .and_then(|rest| rest.strip_suffix(')'))
    else {
        return (false, 0, 0, 0);
    };
    let numbers: Vec<u64> = inside
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(numbers.len(), 3, "unexpected index line {line:?}");
    (true, numbers[0], numbers[1], numbers[2])
}

/// Polls until the index is fresh and `done` holds for its counts; returns them.
fn wait_counts(
    client: &mut Client,
    what: &str,
    done: impl Fn(u64, u64, u64) -> bool,
) -> (u64, u64, u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (fresh, files, builds, updates) = index_counts(client);
        if fresh && done(files, builds, updates) {
            return (files, builds, updates);
        }
        assert!(
            Instant::now() < deadline,
            "{what}: never reached (fresh {fresh}, {files} files, built {builds}×, \
             {updates} updates)"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Churn case 4: 2,000 files created in a burst (in new directories, and beside existing
/// files) are applied to the index without walking the whole root again: it becomes fresh
/// with every one of them findable by glob and grep, built once (at the start) only.
#[test]
fn a_burst_of_creations_is_applied_without_a_rebuild() {
    let ws = workspace();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    let (before, builds, _) = wait_counts(&mut client, "first build", |_, _, _| true);
    assert_eq!(builds, 1, "one build at the start");
    for n in 0..2000 {
        let path = match n % 10 {
            // Beside what the index already holds.
            0 => ws.app.join(format!("src/new{n:04}.txt")),
            _ => ws.app.join(format!("burst/d{:02}/f{n:04}.txt", n % 20)),
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("needle{n:04}\n")).unwrap();
    }
    let (files, builds, updates) =
        wait_counts(&mut client, "all 2,000 files indexed", |f, _, _| {
            f == before + 2000
        });
    let found = client.call("glob", json!({"pattern": "**/*.txt", "head_limit": 1}));
    assert_eq!(found["structuredContent"]["total"], 2000, "{found}");
    let grepped = client.call(
        "grep",
        json!({"pattern": "needle1[0-9]{3}", "output_mode": "files_with_matches", "head_limit": 1}),
    );
    assert_eq!(grepped["structuredContent"]["total"], 1000, "{grepped}");
    assert_eq!(
        builds, 1,
        "the root was walked again ({files} files, {updates} updates applied)"
    );
    assert!(updates >= 1, "nothing was applied incrementally");
}

/// Churn case 4: a build writing 2,000 files into an ignored `target/` (created by the
/// build itself) never makes the index walk the root again, and it stays fresh.
#[test]
fn writes_into_an_ignored_directory_cost_no_rebuild() {
    let ws = workspace();
    std::fs::write(ws.app.join(".ignore"), "target/\n").unwrap();
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    wait_indexed(&mut client);
    let (before, builds, _) = wait_counts(&mut client, "first build", |_, _, _| true);
    assert_eq!(builds, 1, "one build at the start");
    for n in 0..2000 {
        let path = ws
            .app
            .join(format!("target/debug/deps/d{:02}/o{n:04}.o", n % 20));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("object {n}\n")).unwrap();
    }
    // Every event has reached the index by then (the watcher settles a path within 1 s).
    std::thread::sleep(Duration::from_secs(2));
    let (files, builds, _) = wait_counts(&mut client, "fresh after the writes", |_, _, _| true);
    assert_eq!(files, before, "ignored files were indexed");
    assert_eq!(
        builds, 1,
        "writes into an ignored directory rebuilt the index"
    );
    let found = client.call("glob", json!({"pattern": "**/*.o", "head_limit": 1}));
    assert_eq!(found["structuredContent"]["total"], 0, "{found}");
}

/// The number of inotify watches the process holds: one `inotify wd:` line per watch in
/// the fdinfo of its inotify descriptor(s).
#[cfg(target_os = "linux")]
fn inotify_watches(pid: u32) -> usize {
    let mut watches = 0;
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        let is_inotify = std::fs::read_link(fd.path())
            .is_ok_and(|target| target.to_string_lossy() == "anon_inode:inotify");
        if !is_inotify {
            continue;
        }
        let info = std::fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        watches += info
            .lines()
            .filter(|l| l.starts_with("inotify wd:"))
            .count();
    }
    watches
}

/// The directories at and under `dir` (every one, hidden or ignored: the watch is
/// recursive).
#[cfg(target_os = "linux")]
fn directories(dir: &Path) -> usize {
    1 + std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .map(|entry| directories(&entry.path()))
        .sum::<usize>()
}

/// Churn case 10: the roots changed back and forth ~200 times through
/// `notifications/roots/list_changed` leave exactly one inotify watch per directory under
/// the current roots, plus the barrier's sentinel directory: no watch is leaked by a root
/// dropped, added again, nested in another or covering others.
#[cfg(target_os = "linux")]
#[test]
fn roots_changed_back_and_forth_leak_no_watch() {
    let ws = workspace();
    for dir in ["a/b/c", "d", ".hidden/e"] {
        std::fs::create_dir_all(ws.app.join(dir)).unwrap();
        std::fs::create_dir_all(ws.outside.join(dir)).unwrap();
    }
    let mut client = Client::spawn(&[], &ws.base);
    client.handshake_with_roots(json!({}), &[&ws.app]);
    wait_indexed(&mut client);
    let nested = ws.app.join("a");
    let sets: [Vec<&Path>; 4] = [
        vec![&ws.outside],
        vec![&ws.app, &ws.outside],
        vec![&nested, &ws.outside],
        vec![&ws.app],
    ];
    let started = Instant::now();
    for round in 0..200 {
        client.notify("notifications/roots/list_changed", json!({}));
        let request = client
            .server_request("roots/list", Duration::from_secs(15))
            .expect("roots/list after list_changed");
        client.respond(&request["id"], roots_result(&sets[round % sets.len()]));
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "200 roots changes took over 2 minutes (round {round})"
        );
    }
    // The last set is `[app]`: wait until it is the one watched and indexed.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let roots = client.call("list_roots", json!({}));
        let listed = roots["structuredContent"]["roots"].as_array().unwrap();
        if listed.len() == 1 && listed[0]["path"] == s(&ws.app) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "roots never became [app]: {roots}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    wait_indexed(&mut client);
    let want = directories(&ws.app) + 1;
    // Removals the kernel has yet to confirm are applied by then; poll briefly anyway.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let have = inotify_watches(client.pid());
        if have == want {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{have} inotify watches after 200 roots changes; {want} needed \
             (the directories under the root and the sentinel)"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
