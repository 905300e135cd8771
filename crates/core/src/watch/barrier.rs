//! The barrier: a reader waits until every event the kernel queued before its call has
//! been read by the watcher's actor and handed on, by renaming a sentinel file in a
//! directory watched with the same inotify instance and waiting for that rename's event
//! (inotify keeps one instance's events in order). Rounds are shared by concurrent readers.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::kernel::{Kernel, WatchError};
use crate::mutex::lock;

/// Waits until every event the kernel queued before the call has been read by the actor
/// and handed to the handler (see the module docs). Cheap to clone; shared by the readers.
#[derive(Clone, Default)]
pub struct Barrier {
    pub(super) shared: Arc<BarrierShared>,
}

#[derive(Default)]
pub(super) struct BarrierShared {
    pub(super) state: Mutex<BarrierState>,
    pub(super) wake: Condvar,
}

#[derive(Default)]
pub(super) struct BarrierState {
    /// The watched sentinel directory (canonical); `None` while there is none (no kernel
    /// watcher yet, setting it up failed) or while a root covers it (its events would then
    /// also belong to that root's watch): [`Barrier::sync`] then fails.
    pub(super) dir: Option<PathBuf>,
    pub(super) covered: bool,
    /// The round number the sentinel file is named after now.
    pub(super) name: u64,
    /// The last round started (its rename issued or being issued).
    pub(super) started: u64,
    /// A rename is being issued (outside the lock).
    pub(super) touching: bool,
    /// The highest round whose event the actor has read.
    pub(super) delivered: u64,
    /// The highest round whose rename failed.
    pub(super) failed: u64,
}

impl Barrier {
    /// `true` once every event queued in the kernel before this call has been read and
    /// handed to the handler; `false` when that cannot be known within `timeout` (no
    /// sentinel, a rename failed, the watcher is behind): the caller must then assume
    /// anything may have changed. Concurrent callers share rounds: one rename serves every
    /// caller that arrived before it was issued.
    pub fn sync(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let shared = &*self.shared;
        let mut state = lock(&shared.state);
        // A round started before this call may have been queued before the caller's own
        // changes: only a later one proves anything.
        let want = state.started + 1;
        loop {
            if state.delivered >= want {
                return true;
            }
            let Some(dir) = state.dir.clone().filter(|_| !state.covered) else {
                return false;
            };
            if state.failed >= want {
                return false;
            }
            if state.started < want && !state.touching {
                state.started = want;
                state.touching = true;
                let from = state.name;
                drop(state);
                let touched = touch(&dir, from, want);
                state = lock(&shared.state);
                state.touching = false;
                match touched {
                    true => state.name = state.name.max(want),
                    false => state.failed = state.failed.max(want),
                }
                shared.wake.notify_all();
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = shared
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Whether [`Barrier::sync`] can succeed now (a sentinel is watched, no root covers it).
    pub fn available(&self) -> bool {
        let state = lock(&self.shared.state);
        state.dir.is_some() && !state.covered
    }

    pub(super) fn set_dir(&self, dir: Option<PathBuf>) {
        lock(&self.shared.state).dir = dir;
        self.shared.wake.notify_all();
    }

    pub(super) fn set_covered(&self, covered: bool) {
        lock(&self.shared.state).covered = covered;
        self.shared.wake.notify_all();
    }

    /// The actor read the sentinel's event for `round` (and so every event before it).
    pub(super) fn delivered(&self, round: u64) {
        let mut state = lock(&self.shared.state);
        if round > state.delivered {
            state.delivered = round;
            drop(state);
            self.shared.wake.notify_all();
        }
    }
}

/// One round: renames the sentinel file from `from` to `to` (one syscall, one event pair
/// named after the round). A missing file (a temp cleaner) is created under the new name.
fn touch(dir: &Path, from: u64, to: u64) -> bool {
    let target = dir.join(to.to_string());
    std::fs::rename(dir.join(from.to_string()), &target).is_ok()
        || std::fs::File::create(&target).is_ok()
}

/// The sentinel directory's name: hidden (walks skip it, should a root ever contain it),
/// unique per process and watcher.
fn sentinel_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(".rootgrep-sync-{}-{n}", std::process::id())
}

/// Removes the sentinel directories of rootgrep processes that are gone: a server killed
/// (a host ending it with SIGKILL) never removes its own. Only where liveness is cheap to
/// tell (`/proc` on Linux); elsewhere they stay (an empty directory and one empty file).
fn sweep_sentinels(temp: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let Ok(listing) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in listing.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(".rootgrep-sync-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes the sentinel directory once the kernel's watcher is gone. On Windows the backend
/// closes its directory handle on its own thread after the drop, so the directory can be
/// "delete pending" or in use for a moment: retry for up to a second rather than leave it.
pub(super) fn remove_sentinel(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(1);
    while std::fs::remove_dir_all(dir).is_err() && dir.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Creates the sentinel directory (in the temp dir, outside the roots as a rule) with
/// its file `0`, and watches it with the roots' kernel watcher: the same inotify
/// instance, so its events are ordered with theirs.
pub(super) fn watch_sentinel(kernel: &mut dyn Kernel) -> Result<PathBuf, WatchError> {
    sweep_sentinels(&std::env::temp_dir());
    let dir = std::env::temp_dir().join(sentinel_name());
    std::fs::create_dir(&dir).map_err(WatchError::Sentinel)?;
    let made = dir
        .canonicalize()
        .and_then(|dir| std::fs::File::create(dir.join("0")).map(|_| dir));
    let dir = match made {
        Ok(dir) => dir,
        Err(err) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(WatchError::Sentinel(err));
        }
    };
    if let Err(err) = kernel.watch(&dir, false) {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(err);
    }
    Ok(dir)
}
