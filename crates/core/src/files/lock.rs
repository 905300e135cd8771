//! One writer at a time per path: the in-process lock that serialises `write_file`,
//! `edit_file` and `move_file` on the same paths.
//!
//! An edit reads a file, computes the new text and replaces the file. Two edits of one file
//! running at once both read the same old text, and the second rename throws away the first
//! edit's change while both answer "Edited" (seen with 24 pipelined edits: 19 changes lost).
//! So every operation that replaces or moves a path holds that path's lock from before it
//! reads until after its rename; a second operation on the same path waits its turn and then
//! reads what the first one wrote.
//!
//! The lock is only for rootgrep's own requests (any session, any thread of this process).
//! Other processes are caught by the "changed meanwhile" check that `write.rs` makes on the
//! read handle just before the rename.
//!
//! Keys are the resolved (canonical) paths the tools pass in. A path is in the table only
//! while it is held, so the table never grows with the number of files ever written.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

/// The paths held now.
#[derive(Default)]
struct Table {
    held: HashSet<PathBuf>,
}

struct Locks {
    table: Mutex<Table>,
    freed: Condvar,
}

fn locks() -> &'static Locks {
    static LOCKS: OnceLock<Locks> = OnceLock::new();
    LOCKS.get_or_init(|| Locks {
        table: Mutex::new(Table::default()),
        freed: Condvar::new(),
    })
}

/// How often a waiter looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(20);

/// The paths an operation holds; released on drop.
#[must_use = "the paths are unlocked when the guard is dropped"]
pub struct PathGuard {
    paths: Vec<PathBuf>,
}

/// Locks every path of `paths` (duplicates are fine) for this caller, waiting while another
/// holds any of them. All are taken at once, never one by one, so two operations on
/// overlapping sets (a move `a → b` and a move `b → a`) cannot deadlock.
pub fn lock(paths: &[&Path]) -> PathGuard {
    lock_with(paths, None).expect("only a stop flag ends the wait")
}

/// [`lock`], giving up (`None`) when `stop` is set while waiting (the request was
/// cancelled).
pub(crate) fn lock_unless_stopped(paths: &[&Path], stop: &AtomicBool) -> Option<PathGuard> {
    lock_with(paths, Some(stop))
}

fn lock_with(paths: &[&Path], stop: Option<&AtomicBool>) -> Option<PathGuard> {
    let mut wanted: Vec<PathBuf> = paths.iter().map(|p| p.to_path_buf()).collect();
    wanted.sort();
    wanted.dedup();
    let locks = locks();
    let mut table = locks.table.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if wanted.iter().all(|p| !table.held.contains(p)) {
            for p in &wanted {
                table.held.insert(p.clone());
            }
            return Some(PathGuard { paths: wanted });
        }
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return None;
        }
        table = locks
            .freed
            .wait_timeout(table, STOP_POLL)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

impl Drop for PathGuard {
    fn drop(&mut self) {
        let locks = locks();
        let mut table = locks.table.lock().unwrap_or_else(|e| e.into_inner());
        for p in &self.paths {
            table.held.remove(p);
        }
        drop(table);
        locks.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn one_holder_per_path_and_none_left_behind() {
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let inside = inside.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let _g = lock(&[Path::new("/x/a"), Path::new("/x/a")]);
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let table = locks().table.lock().unwrap();
        assert!(!table.held.contains(Path::new("/x/a")));
    }

    #[test]
    fn crossing_moves_do_not_deadlock() {
        let a = || {
            for _ in 0..200 {
                let _g = lock(&[Path::new("/y/a"), Path::new("/y/b")]);
            }
        };
        let b = || {
            for _ in 0..200 {
                let _g = lock(&[Path::new("/y/b"), Path::new("/y/a")]);
            }
        };
        let (t1, t2) = (std::thread::spawn(a), std::thread::spawn(b));
        t1.join().unwrap();
        t2.join().unwrap();
    }

    #[test]
    fn a_stopped_waiter_gives_up() {
        let held = lock(&[Path::new("/z/a")]);
        let stop = AtomicBool::new(true);
        assert!(lock_unless_stopped(&[Path::new("/z/a")], &stop).is_none());
        drop(held);
        assert!(lock_unless_stopped(&[Path::new("/z/a")], &stop).is_some());
    }
}
