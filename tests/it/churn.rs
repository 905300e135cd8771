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
