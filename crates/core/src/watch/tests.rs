//! The watcher on the real kernel: changes made on disk in a temporary tree, events read
//! back through the public interface. Deadlines here are ceilings only (every wait ends
//! as soon as its condition holds); the actor's timing itself is tested on simulated
//! time in `actor_tests.rs`.

use super::*;
use std::fs;
use std::sync::PoisonError;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Instant;

/// Long enough for a loaded 2-core machine, and only ever a ceiling: every wait ends as
/// soon as its condition holds.
const DEADLINE: Duration = Duration::from_secs(5);

fn root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("rootgrep-watch")
        .tempdir()
        .unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// Collects events until `done` says the collected ones are enough, or the deadline.
fn wait_for(
    rx: &Receiver<WatchEvent>,
    seen: &mut Vec<WatchEvent>,
    done: impl Fn(&[WatchEvent]) -> bool,
) -> bool {
    let deadline = Instant::now() + DEADLINE;
    while !done(seen) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(event) => seen.push(event),
            Err(_) => return false,
        }
    }
    true
}

fn started(root: &Path) -> (Watcher, Receiver<WatchEvent>) {
    let (watcher, rx) = Watcher::channel();
    watcher.set_roots(&[root.to_path_buf()]);
    let mut seen = Vec::new();
    let ok = wait_for(&rx, &mut seen, |s| {
        s.iter()
            .any(|e| matches!(e, WatchEvent::Status(_, RootStatus::Watching)))
    });
    assert!(ok, "root never watched: {seen:?}");
    assert_eq!(
        watcher.status(),
        [(root.to_path_buf(), RootStatus::Watching)]
    );
    (watcher, rx)
}

fn has(seen: &[WatchEvent], event: &WatchEvent) -> bool {
    seen.contains(event)
}

/// Whether every one of `files` was reported created.
fn all_created(seen: &[WatchEvent], files: &[PathBuf]) -> bool {
    (files.iter()).all(|f| has(seen, &WatchEvent::Created(f.clone())))
}

/// Writes `text` to each of `files` and waits until every one is reported created (the
/// events gathered into `seen`, shown when they are not).
fn write_and_see_created(
    rx: &Receiver<WatchEvent>,
    seen: &mut Vec<WatchEvent>,
    files: &[PathBuf],
    text: &str,
) {
    for file in files {
        fs::write(file, text).unwrap();
    }
    assert!(wait_for(rx, seen, |s| all_created(s, files)), "{seen:?}");
}

#[test]
fn create_change_remove_and_rename_are_reported() {
    let (_dir, root) = root();
    let (_watcher, rx) = started(&root);
    let mut seen = Vec::new();

    let a = root.join("a.txt");
    fs::write(&a, "one").unwrap();
    assert!(
        wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Created(a.clone()))),
        "{seen:?}"
    );
    assert!(
        has(&seen, &WatchEvent::Pending(a.clone())),
        "leading edge first"
    );

    seen.clear();
    fs::write(&a, "two").unwrap();
    assert!(
        wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Changed(a.clone()))),
        "{seen:?}"
    );

    seen.clear();
    let b = root.join("sub/b.txt");
    fs::create_dir(root.join("sub")).unwrap();
    // The watch on `sub` is added when its creation is seen; wait for that first.
    assert!(wait_for(&rx, &mut seen, |s| has(
        s,
        &WatchEvent::Created(root.join("sub"))
    )));
    fs::rename(&a, &b).unwrap();
    assert!(
        wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Removed(a.clone()))
            && has(s, &WatchEvent::Created(b.clone()))),
        "{seen:?}"
    );

    seen.clear();
    fs::remove_file(&b).unwrap();
    assert!(
        wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Removed(b.clone()))
            && has(s, &WatchEvent::Quiet)),
        "{seen:?}"
    );
}

/// A file root saved atomically (a temp file renamed over it) is reported and watched
/// again on the new file, where a write in place is reported too. (The save that lands
/// while the watch is being re-added: `actor_tests.rs`.)
#[test]
fn a_file_root_saved_atomically_is_reported_and_watched_again() {
    let (_dir, dir) = root();
    let file = dir.join("notes.txt");
    fs::write(&file, "zero").unwrap();
    let (_watcher, rx) = started(&file);
    let settled = |s: &[WatchEvent]| {
        s.iter()
            .any(|e| matches!(e, WatchEvent::Changed(p) | WatchEvent::Created(p) if *p == file))
    };
    let mut seen = Vec::new();
    let temp = dir.join(".notes.txt.swp");
    fs::write(&temp, "one").unwrap();
    fs::rename(&temp, &file).unwrap();
    assert!(wait_for(&rx, &mut seen, settled), "{seen:?}");
    assert!(
        wait_for(&rx, &mut seen, |s| s.contains(&WatchEvent::Status(
            file.clone(),
            RootStatus::Watching
        ))),
        "{seen:?}"
    );
    seen.clear();
    fs::write(&file, "three").unwrap();
    assert!(wait_for(&rx, &mut seen, settled), "{seen:?}");
}

#[test]
fn a_burst_of_writes_is_one_event_and_temp_files_are_silent() {
    let (_dir, root) = root();
    let (_watcher, rx) = started(&root);
    let a = root.join("a.txt");
    let tmp = root.join("a.txt.123.rootgrep-tmp");
    fs::write(&tmp, "tmp").unwrap();
    fs::rename(&tmp, &a).unwrap();
    for n in 0..20 {
        fs::write(&a, format!("{n}")).unwrap();
    }
    // On a loaded machine the writes may span more than one burst: one or more
    // settled events for the file, never anything for the temporary one.
    let mut seen = Vec::new();
    assert!(wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Quiet)
        && s.iter()
            .filter(|e| matches!(e, WatchEvent::Pending(_)))
            .count()
            == s.iter()
                .filter(|e| matches!(e, WatchEvent::Created(_) | WatchEvent::Changed(_)))
                .count()));
    assert!(has(&seen, &WatchEvent::Created(a.clone())), "{seen:?}");
    assert!(
        seen.iter().all(|e| match e {
            WatchEvent::Pending(p) | WatchEvent::Created(p) | WatchEvent::Changed(p) => p == &a,
            WatchEvent::Quiet => true,
            _ => false,
        }),
        "no trace of the temporary file: {seen:?}"
    );
}

#[test]
fn what_a_new_directory_holds_before_it_is_watched_is_announced() {
    let (_dir, root) = root();
    let (_watcher, rx) = started(&root);
    let deep = root.join("new/deeper");
    let files: Vec<PathBuf> = (0..20).map(|n| deep.join(format!("f{n}.rs"))).collect();
    fs::create_dir_all(&deep).unwrap();
    write_and_see_created(&rx, &mut Vec::new(), &files, "x");
}

#[test]
fn a_path_that_lived_only_within_a_burst_still_settles() {
    let (_dir, root) = root();
    let (_watcher, rx) = started(&root);
    let brief = root.join("brief.txt");
    fs::write(&brief, "x").unwrap();
    fs::remove_file(&brief).unwrap();
    let mut seen = Vec::new();
    assert!(wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Quiet)));
    assert_eq!(
        seen,
        [
            WatchEvent::Pending(brief.clone()),
            WatchEvent::Removed(brief),
            WatchEvent::Quiet
        ]
    );
}

#[test]
fn reading_files_produces_no_events() {
    let (_dir, root) = root();
    let a = root.join("a.txt");
    fs::write(&a, "x").unwrap();
    let (_watcher, rx) = started(&root);
    for _ in 0..50 {
        fs::read(&a).unwrap();
        fs::read_dir(&root).unwrap().for_each(drop);
    }
    // Then a real change: it must be the first thing seen.
    let b = root.join("b.txt");
    fs::write(&b, "y").unwrap();
    let mut seen = Vec::new();
    assert!(wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Quiet)));
    assert_eq!(seen[0], WatchEvent::Pending(b.clone()), "{seen:?}");
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, WatchEvent::Pending(p) | WatchEvent::Changed(p) if p == &a))
    );
}

#[test]
fn missing_root_is_reported_failed_and_retargeting_moves_the_watch() {
    let (_dir, root) = root();
    let (other_dir, other) = self::root();
    let missing = other.join("gone");
    let (watcher, rx) = Watcher::channel();
    watcher.set_roots(&[missing.clone(), root.clone()]);
    let mut seen = Vec::new();
    assert!(wait_for(&rx, &mut seen, |s| s.iter().any(
        |e| matches!(e, WatchEvent::Status(p, RootStatus::Failed(_)) if p == &missing)
    ) && s.iter().any(
        |e| matches!(e, WatchEvent::Status(p, RootStatus::Watching) if p == &root)
    )));
    assert!(
        seen.iter().any(|e| matches!(e, WatchEvent::Error(_))),
        "errors are reported"
    );

    watcher.set_roots(std::slice::from_ref(&other));
    seen.clear();
    assert!(wait_for(&rx, &mut seen, |s| s.iter().any(
        |e| matches!(e, WatchEvent::Status(p, RootStatus::Watching) if p == &other)
    )));
    assert_eq!(watcher.status(), [(other.clone(), RootStatus::Watching)]);
    // The old root is no longer watched; the new one is.
    fs::write(root.join("old.txt"), "x").unwrap();
    fs::write(other.join("new.txt"), "x").unwrap();
    seen.clear();
    assert!(wait_for(&rx, &mut seen, |s| has(
        s,
        &WatchEvent::Created(other.join("new.txt"))
    )));
    assert!(!seen.iter().any(|e| matches!(e, WatchEvent::Pending(p) if p.starts_with(&root) && !p.starts_with(&other))), "{seen:?}");
    drop(watcher);
    drop(other_dir);
}

#[test]
fn a_full_queue_is_reported_as_an_overflow() {
    let (_dir, root) = root();
    let (tx, rx) = mpsc::channel();
    // The handler stalls on the first change until the gate opens, so raw events pile
    // up behind it.
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let held = Arc::clone(&gate);
    let watcher = Watcher::with_queue(
        move |event| {
            let stall = matches!(event, WatchEvent::Pending(_));
            let _ = tx.send(event);
            let (open, wake) = &*held;
            let mut open = lock(open);
            while stall && !*open {
                open = wake.wait(open).unwrap_or_else(PoisonError::into_inner);
            }
        },
        4,
    );
    watcher.set_roots(std::slice::from_ref(&root));
    let mut seen = Vec::new();
    assert!(wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(
        e,
        WatchEvent::Status(_, RootStatus::Watching)
    ))));
    for n in 0..50 {
        fs::write(root.join(format!("f{n}.txt")), "x").unwrap();
    }
    let deadline = Instant::now() + DEADLINE;
    while !watcher.lost.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the queue never filled");
        std::thread::sleep(Duration::from_millis(5));
    }
    let (open, wake) = &*gate;
    *lock(open) = true;
    wake.notify_all();
    assert!(
        wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Overflow)),
        "{seen:?}"
    );
}

#[test]
fn a_root_replaced_is_watched_again() {
    let (_dir, base) = root();
    let root = base.join("r");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), "x").unwrap();
    let (watcher, rx) = started(&root);
    for replace in ["remove", "rename"] {
        match replace {
            "remove" => fs::remove_dir_all(&root).unwrap(),
            _ => fs::rename(&root, base.join("r.old")).unwrap(),
        }
        fs::create_dir(&root).unwrap();
        let mut seen = Vec::new();
        assert!(
            wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(e,
            WatchEvent::Status(p, RootStatus::Starting) if p == &root))),
            "{replace}: {seen:?}"
        );
        assert!(
            wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(e,
            WatchEvent::Status(p, RootStatus::Watching) if p == &root))),
            "{replace}: {seen:?}"
        );
        let new = root.join(format!("{replace}.txt"));
        fs::write(&new, "y").unwrap();
        assert!(
            wait_for(&rx, &mut seen, |s| has(
                s,
                &WatchEvent::Created(new.clone())
            )),
            "{replace}: {seen:?}"
        );
    }
    assert_eq!(watcher.status(), [(root.clone(), RootStatus::Watching)]);
}

#[test]
fn a_root_gone_for_a_while_is_reported_and_watched_when_it_returns() {
    let (_dir, base) = root();
    let root = base.join("r");
    fs::create_dir(&root).unwrap();
    let (_watcher, rx) = started(&root);
    fs::remove_dir(&root).unwrap();
    let mut seen = Vec::new();
    assert!(
        wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(e,
        WatchEvent::Status(p, RootStatus::Failed(_)) if p == &root))),
        "{seen:?}"
    );
    fs::create_dir(&root).unwrap();
    assert!(
        wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(e,
        WatchEvent::Status(p, RootStatus::Watching) if p == &root))),
        "{seen:?}"
    );
    let new = root.join("back.txt");
    fs::write(&new, "y").unwrap();
    assert!(
        wait_for(&rx, &mut seen, |s| has(
            s,
            &WatchEvent::Created(new.clone())
        )),
        "{seen:?}"
    );
}

/// Events read late (as on a loaded machine): right after a change nothing has
/// arrived, but once the barrier returns, the change's `Pending` has been handed over,
/// and the sentinel itself was never reported.
#[test]
#[cfg(target_os = "linux")]
fn the_barrier_waits_for_every_event_queued_before_it() {
    let (_dir, root) = root();
    let (tx, rx) = mpsc::channel();
    let watcher = Watcher::with_read_delay(
        move |event| {
            let _ = tx.send(event);
        },
        Duration::from_millis(50),
    );
    watcher.set_roots(std::slice::from_ref(&root));
    let mut seen = Vec::new();
    assert!(wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(
        e,
        WatchEvent::Status(_, RootStatus::Watching)
    ))));
    let barrier = watcher.barrier();
    assert!(barrier.available());
    for n in 0..3 {
        let path = root.join(format!("f{n}.txt"));
        fs::write(&path, "x").unwrap();
        assert!(barrier.sync(DEADLINE), "round {n}");
        // The handler runs on the actor thread before the round is marked delivered.
        let now: Vec<WatchEvent> = rx.try_iter().collect();
        assert!(
            now.contains(&WatchEvent::Pending(path.clone()))
                || has(&seen, &WatchEvent::Pending(path.clone())),
            "round {n}: {now:?}"
        );
        seen.extend(now);
    }
    assert!(wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Quiet)));
    let sentinel = lock(&barrier.shared.state).dir.clone().unwrap();
    assert!(!sentinel.starts_with(&root));
    assert!(
        seen.iter().all(|e| match e {
            WatchEvent::Pending(p)
            | WatchEvent::Created(p)
            | WatchEvent::Changed(p)
            | WatchEvent::Removed(p) => p.starts_with(&root),
            _ => true,
        }),
        "the sentinel is never reported: {seen:?}"
    );
    drop(watcher);
    assert!(!sentinel.exists(), "removed when the watcher stops");
    assert!(!barrier.sync(DEADLINE), "no watcher, no barrier");
}

/// Callers arriving together share rounds; every one is released; a watcher that
/// watches nothing yet (no notify instance, no sentinel) fails at once.
#[test]
#[cfg(target_os = "linux")]
fn concurrent_syncs_share_rounds() {
    let (_dir, root) = root();
    let (watcher, rx) = Watcher::channel();
    let early = Instant::now();
    assert!(!watcher.barrier().sync(DEADLINE));
    assert!(early.elapsed() < DEADLINE, "failed at once");
    watcher.set_roots(std::slice::from_ref(&root));
    let mut seen = Vec::new();
    assert!(wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(
        e,
        WatchEvent::Status(_, RootStatus::Watching)
    ))));
    let barrier = watcher.barrier();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let barrier = barrier.clone();
            std::thread::spawn(move || (0..50).all(|_| barrier.sync(DEADLINE)))
        })
        .collect();
    for thread in threads {
        assert!(thread.join().unwrap());
    }
    let state = lock(&barrier.shared.state);
    assert!(state.started <= 400, "{}", state.started);
    assert_eq!(state.delivered, state.started);
    assert_eq!(state.failed, 0);
}

/// The barrier's cost on an idle watcher: median and 99th percentile over 1,000
/// rounds (run with `--ignored --nocapture`).
#[test]
#[cfg(target_os = "linux")]
#[ignore = "a measurement, not a check"]
fn barrier_latency() {
    let (_dir, root) = root();
    let (watcher, _rx) = started(&root);
    let barrier = watcher.barrier();
    let mut times: Vec<Duration> = (0..1000)
        .map(|_| {
            let start = Instant::now();
            assert!(barrier.sync(DEADLINE));
            start.elapsed()
        })
        .collect();
    times.sort();
    eprintln!(
        "barrier round: median {:?}, p90 {:?}, p99 {:?}, max {:?}",
        times[500], times[900], times[990], times[999]
    );
}

#[test]
fn dropping_the_watcher_stops_its_thread() {
    let (_dir, root) = root();
    let (watcher, rx) = started(&root);
    drop(watcher);
    // The actor owned the handler, which owned the sender: the channel is closed.
    let deadline = Instant::now() + DEADLINE;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(_) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => panic!("actor still running"),
        }
    }
}

/// Every directory of a tree is watched when the root is (listed on several threads), a
/// hidden one too: a file written in each is reported. Linux's kernel (`inotify.rs`); under
/// Wine, notify's ReadDirectoryChangesW reported none of these writes.
#[cfg(target_os = "linux")]
#[test]
fn every_directory_of_a_wide_and_deep_tree_is_watched() {
    let (_dir, root) = root();
    let mut leaves = Vec::new();
    for top in 0..6 {
        for mid in 0..5 {
            let leaf = root.join(format!("t{top}/m{mid}/.hidden/deep"));
            fs::create_dir_all(&leaf).unwrap();
            leaves.push(leaf);
        }
    }
    let (_watcher, rx) = started(&root);
    let files: Vec<PathBuf> = leaves.iter().map(|leaf| leaf.join("f.txt")).collect();
    write_and_see_created(&rx, &mut Vec::new(), &files, "x");
}

/// A directory holding no directory is watched without being listed (its links say it is
/// a leaf, on filesystems that count them: `inotify.rs`); one made in it later is watched
/// through its watch, and so is one made in that, and what they hold is reported.
#[cfg(target_os = "linux")]
#[test]
fn directories_made_in_a_leaf_after_the_watch_are_watched() {
    let (_dir, root) = root();
    let leaves: Vec<PathBuf> = (0..8).map(|i| root.join(format!("l{i}"))).collect();
    for leaf in &leaves {
        fs::create_dir_all(leaf).unwrap();
        fs::write(leaf.join("a.txt"), "x").unwrap();
    }
    let (_watcher, rx) = started(&root);
    let mut files = Vec::new();
    for leaf in &leaves {
        let deep = leaf.join("new/deeper");
        fs::create_dir_all(&deep).unwrap();
        files.push(deep.join("f.txt"));
    }
    // Written once the new directories' watches are surely in place (a file written before
    // is announced by the listing of its new directory instead; either is right).
    std::thread::sleep(Duration::from_millis(200));
    write_and_see_created(&rx, &mut Vec::new(), &files, "y");
}

/// A directory renamed inside the root keeps being watched, under its new name; one moved
/// out of the root reports nothing more (its watches followed it out: forgotten).
#[cfg(target_os = "linux")]
#[test]
fn a_directory_renamed_reports_under_its_new_name_and_one_moved_out_reports_nothing() {
    let (_dir, root) = root();
    let (_outside_dir, outside) = super::tests::root();
    fs::create_dir_all(root.join("a/b/c")).unwrap();
    fs::create_dir_all(root.join("gone/sub")).unwrap();
    let (_watcher, rx) = started(&root);
    let mut seen = Vec::new();

    fs::rename(root.join("a"), root.join("z")).unwrap();
    fs::rename(root.join("gone"), outside.join("gone")).unwrap();
    assert!(
        wait_for(&rx, &mut seen, |s| has(
            s,
            &WatchEvent::Created(root.join("z"))
        ) && has(
            s,
            &WatchEvent::Removed(root.join("gone"))
        )),
        "{seen:?}"
    );
    seen.clear();
    // Written out of the root first, then a marker in it: events come in order, so the
    // marker's arrival proves nothing was reported for the first.
    fs::write(outside.join("gone/sub/f.txt"), "x").unwrap();
    let moved = root.join("z/b/c/f.txt");
    fs::write(&moved, "x").unwrap();
    assert!(
        wait_for(&rx, &mut seen, |s| has(
            s,
            &WatchEvent::Created(moved.clone())
        )),
        "{seen:?}"
    );
    let stale = |e: &WatchEvent| {
        matches!(e, WatchEvent::Pending(p) | WatchEvent::Created(p) | WatchEvent::Changed(p)
            if p.starts_with(root.join("gone")) || p.starts_with(root.join("a")))
    };
    assert!(!seen.iter().any(stale), "{seen:?}");
}

/// Directories with odd names (a newline, bytes that are not UTF-8) are watched and
/// reported under their own names, the new ones as well as those there at the start.
#[cfg(target_os = "linux")]
#[test]
fn directories_with_odd_names_are_watched_under_their_names() {
    use std::os::unix::ffi::OsStrExt;
    let (_dir, root) = root();
    let odd = std::ffi::OsStr::from_bytes(b"odd\nname \xff\xfe");
    let old = root.join(odd).join("sub");
    fs::create_dir_all(&old).unwrap();
    let (_watcher, rx) = started(&root);
    let new = root.join("new").join(odd);
    fs::create_dir_all(&new).unwrap();
    let mut seen = Vec::new();
    assert!(
        wait_for(&rx, &mut seen, |s| has(
            s,
            &WatchEvent::Created(root.join("new"))
        )),
        "{seen:?}"
    );
    let files = [old.join("f.txt"), new.join("g.txt")];
    write_and_see_created(&rx, &mut seen, &files, "x");
}
