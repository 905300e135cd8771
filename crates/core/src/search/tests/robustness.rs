//! Hostile trees and interruptions: symlink loops, FIFOs, missing targets, cancellation.
//! Tests that could hang on a bug run the search on a thread with a deadline.

use std::os::unix::fs::symlink;
use std::process::Command;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::*;

/// Runs `f` on its own thread and fails the test if it takes longer than `secs`.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("search did not finish in time (hung?)")
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
}

#[test]
fn symlink_loop_does_not_hang_and_links_are_not_followed() {
    let tree = Tree::new();
    let outside = Tree::new();
    outside.file("secret.txt", "needle\n");
    tree.file("a/real.txt", "needle\n");
    symlink(tree.path("a"), tree.path("a/loop")).unwrap();
    symlink(outside.path("secret.txt"), tree.path("a/out.txt")).unwrap();
    symlink(outside.root.clone(), tree.path("outdir")).unwrap();
    symlink(tree.path("missing"), tree.path("broken")).unwrap();
    let root = tree.root();
    let out = within(20, move || run(&GrepQuery::new("needle"), &root));
    assert_eq!(file_list(&tree, &out), ["a/real.txt"]);
}

#[test]
fn fifo_in_tree_or_named_is_never_opened() {
    let tree = Tree::new();
    tree.file("a.txt", "needle\n");
    mkfifo(&tree.path("pipe"));
    let targets = vec![tree.root.clone(), tree.path("pipe")];
    let walked = within(20, move || run(&GrepQuery::new("needle"), &targets));
    assert_eq!(file_list(&tree, &walked), ["a.txt"]);
    // Once as a walked entry, once as a named target (which is inside the root, so dropped
    // as nested); name it alone too.
    assert_eq!(walked.stats.skipped_unreadable, 1);
    let alone = vec![tree.path("pipe")];
    let named = within(20, move || run(&GrepQuery::new("needle"), &alone));
    assert_eq!(named.stats.skipped_unreadable, 1);
    assert!(named.entries.is_empty());
}

#[test]
fn missing_target_is_counted_not_fatal() {
    let tree = Tree::new();
    tree.file("a.txt", "needle\n");
    let targets = vec![tree.path("gone"), tree.path("a.txt")];
    let out = run(&GrepQuery::new("needle"), &targets);
    assert_eq!(file_list(&tree, &out), ["a.txt"]);
    assert_eq!(out.stats.skipped_unreadable, 1);
    let out = run_glob(&GlobQuery::new("*"), &[tree.path("gone")]);
    assert_eq!(out.total, 0);
    assert_eq!(out.stats.skipped_unreadable, 1);
}

#[test]
fn cancelled_before_start_returns_at_once_with_nothing() {
    let tree = Tree::new();
    tree.file("a.txt", "needle\n");
    let control = Control::new();
    control.cancel();
    let out = grep(&content("needle"), &tree.root(), &control).unwrap();
    assert!(out.cancelled);
    assert!(out.entries.is_empty());
    assert_eq!(out.stats.files_searched, 0);
    let found = glob(&GlobQuery::new("*"), &tree.root(), &control).unwrap();
    assert!(found.cancelled && found.files.is_empty());
}

#[test]
fn cancel_during_a_walk_stops_the_walk() {
    let tree = Tree::new();
    for i in 0..3000 {
        tree.file(&format!("d{}/f{i}.txt", i % 30), "needle\n");
    }
    let control = Arc::new(Control::new());
    let watcher = Arc::clone(&control);
    let canceller = thread::spawn(move || {
        while watcher.files_examined() < 100 {
            thread::yield_now();
        }
        watcher.cancel();
    });
    let out = grep(&content("needle"), &tree.root(), &control).unwrap();
    canceller.join().unwrap();
    assert!(out.cancelled);
    assert!(
        control.files_examined() < 2000,
        "walk went on: {}",
        control.files_examined()
    );
    assert!(out.total < 2000);
}

#[test]
fn cancel_inside_one_large_file_stops_that_file() {
    let tree = Tree::new();
    let lines = 1_000_000u64;
    tree.file("big.txt", "needle\n".repeat(lines as usize));
    let control = Arc::new(Control::new());
    let watcher = Arc::clone(&control);
    let canceller = thread::spawn(move || {
        while watcher.matches() < 1000 {
            thread::yield_now();
        }
        watcher.cancel();
        Instant::now()
    });
    let query = GrepQuery {
        mode: OutputMode::Count,
        ..GrepQuery::new("needle")
    };
    let out = grep(&query, &tree.root(), &control).unwrap();
    let cancelled_at = canceller.join().unwrap();
    assert!(out.cancelled);
    assert!(
        control.matches() < lines / 2,
        "file read on: {} matches",
        control.matches()
    );
    // The interrupted file contributes nothing rather than a partial count.
    assert!(out.entries.is_empty());
    assert!(cancelled_at.elapsed() < Duration::from_secs(2));
}

/// Creates `levels` nested directories of 200-byte names under `root` through directory
/// handles (their full path is longer than PATH_MAX, which path-based calls refuse), and a
/// file `deep.txt` holding `needle` at the bottom.
fn deeper_than_path_max(root: &Path, levels: usize) {
    use rustix::fs::{Mode, OFlags, mkdirat, openat};
    let name = "d".repeat(200);
    let mut dir = openat(
        rustix::fs::CWD,
        root,
        OFlags::DIRECTORY | OFlags::RDONLY,
        Mode::empty(),
    )
    .unwrap();
    for _ in 0..levels {
        mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        dir = openat(
            &dir,
            name.as_str(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
    }
    let file = openat(
        &dir,
        "deep.txt",
        OFlags::CREATE | OFlags::WRONLY,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    rustix::io::write(&file, b"needle\n").unwrap();
}

#[test]
fn files_deeper_than_path_max_are_counted_as_skipped() {
    let tree = Tree::new();
    tree.file("a.txt", "needle\n");
    deeper_than_path_max(&tree.root, 25);
    let out = run(&GrepQuery::new("needle"), &tree.root());
    assert_eq!(file_list(&tree, &out), ["a.txt"]);
    assert!(
        out.stats.skipped_unreadable >= 1,
        "the deep part was missed silently: {:?}",
        out.stats
    );
    let globbed = run_glob(&GlobQuery::new("*.txt"), &tree.root());
    assert_eq!(glob_list(&tree, &globbed), ["a.txt"]);
    assert!(globbed.stats.skipped_unreadable >= 1, "{:?}", globbed.stats);
}
