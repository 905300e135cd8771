//! The symbol index's per-root state (`Slot`: the table, the work on it as a [`Phase`],
//! the dirty paths), the state of all roots together (`State`) and what the index's handle
//! and its worker thread share (`Shared`): below both, so the worker reads what the handle
//! writes without either importing the other.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::table::{Overlay, Table};
use crate::clock::Clock;
use crate::index::FileIndex;
use crate::lifecycle::Phase;
use crate::mutex::lock;
use crate::store::Store;

/// Files re-parsed into the overlay before it is folded into a new table.
pub(crate) const MAX_OVERLAY: usize = 1024;

/// How long a root whose file index is unavailable waits before its job is tried again.
pub(super) const UNAVAILABLE_RETRY: Duration = Duration::from_secs(2);

/// The running job's handle: what cancels it, and the dirty paths it took (still dirty
/// for queries until it lands; dirty again if it gives up).
pub(super) struct Handle {
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) in_flight: HashSet<PathBuf>,
}

pub(super) struct Slot {
    pub(super) root: PathBuf,
    /// The last table packed, kept through every phase: queries read it while only dirty
    /// paths are due (parsing those on demand), completion reads it whatever the phase,
    /// and a sync reuses what did not change.
    pub(super) table: Option<Arc<Table>>,
    pub(super) overlay: Arc<Overlay>,
    /// The work on this root: a sync (compare the whole file list again, `full`) or
    /// re-parsing the dirty paths, due or running.
    pub(super) phase: Phase<Handle>,
    /// Paths changed and not yet re-parsed (absolute).
    pub(super) dirty: HashSet<PathBuf>,
    /// Watched by the watcher (no watch, no index).
    pub(super) watched: bool,
    /// The last (or running) job's progress, for `status`: `total` is `usize::MAX` until
    /// the job has read the file list.
    pub(super) done: Arc<AtomicUsize>,
    pub(super) total: Arc<AtomicUsize>,
    pub(super) too_large: usize,
    pub(super) updates: u64,
    pub(super) last_build: Option<Duration>,
    /// A stored table is being loaded and checked (a restart): a query waits for it a
    /// little rather than parse on demand. Cleared when the root's job lands.
    pub(super) restoring: bool,
    /// How the root's table stands in the store, for `status` (set by the worker).
    pub(super) store_note: Option<String>,
}

impl Slot {
    pub(super) fn new(root: PathBuf, now: Instant) -> Slot {
        let mut phase = Phase::Idle;
        // Nothing packed yet: the first job syncs with the file list.
        phase.schedule(now, true);
        Slot {
            root,
            table: None,
            overlay: Arc::default(),
            phase,
            dirty: HashSet::new(),
            watched: false,
            done: Arc::default(),
            total: Arc::default(),
            too_large: 0,
            updates: 0,
            last_build: None,
            restoring: false,
            store_note: None,
        }
    }

    /// Something the overlay cannot express (ignore rules, lost events, a re-watch): the
    /// next job compares the whole file list again.
    pub(super) fn sync(&mut self, now: Instant) {
        self.phase.schedule(now, true);
    }

    /// `path` changed: the next job re-parses it.
    pub(super) fn mark_dirty(&mut self, path: PathBuf, now: Instant) {
        self.dirty.insert(path);
        self.phase.schedule(now, false);
    }

    /// Paths a job took and did not re-parse: dirty again, for the next job.
    pub(super) fn give_back(&mut self, paths: HashSet<PathBuf>, now: Instant) {
        if !paths.is_empty() {
            self.dirty.extend(paths);
            self.phase.schedule(now, false);
        }
    }

    /// A job may start now.
    pub(super) fn has_work(&self, now: Instant) -> bool {
        self.watched && self.phase.startable(now)
    }

    /// Whether a sync is due or running: queries are on demand meanwhile.
    pub(super) fn syncing(&self) -> bool {
        self.phase.redo_pending()
    }

    /// Whether a job runs.
    pub(super) fn running(&self) -> bool {
        self.phase.job().is_some()
    }

    /// The dirty paths the running job took.
    pub(super) fn in_flight(&self) -> Option<&HashSet<PathBuf>> {
        self.phase.job().map(|job| &job.in_flight)
    }

    /// Cancels the running job, if any (the root is removed, or the index dropped).
    pub(super) fn cancel(&self) {
        if let Some(job) = self.phase.job() {
            job.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

pub(super) struct State {
    pub(super) slots: Vec<Slot>,
    pub(super) stop: bool,
}

pub(super) struct Shared {
    pub(super) files: Arc<FileIndex>,
    /// Where tables are stored between runs (`None`: `--no-cache`, or no cache directory).
    pub(super) store: Option<Arc<Store>>,
    pub(super) state: Mutex<State>,
    pub(super) wake: Condvar,
    pub(super) threads: usize,
    /// Where the pacing reads the time (simulated in tests).
    pub(super) clock: Arc<dyn Clock>,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}
