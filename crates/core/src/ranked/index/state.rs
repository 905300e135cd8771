//! The search index's per-root state (`Slot`: the base segment, the update segment, the
//! work on them as a [`Phase`], the paths events marked), the state of all roots (`State`)
//! and what the index's handle and its worker share (`Shared`).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::index::FileIndex;
use crate::lifecycle::Phase;
use crate::mutex::lock;
use crate::ranked::segment::Segment;
use crate::store::Store;
use crate::symbols::SymbolIndex;

/// How long after the first change of a burst its files are indexed again (queries index
/// changed files themselves meanwhile).
pub(super) const UPDATE_DELAY: Duration = Duration::from_millis(250);

/// Files the update segment holds at most; more and the next job rebuilds the base.
pub(crate) const MAX_UPDATE_FILES: usize = 1024;

/// How long a root whose file index is unavailable waits before its job is tried again.
pub(super) const UNAVAILABLE_RETRY: Duration = Duration::from_secs(2);

/// The running job's handle: what cancels it, and the marked paths it took (still marked
/// for queries until it lands; marked again if it gives up).
pub(super) struct Handle {
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) in_flight: HashSet<Vec<u8>>,
}

pub(super) struct Slot {
    pub(super) root: PathBuf,
    /// Every file of the root as last built (or loaded from the store).
    pub(super) base: Option<Arc<Segment>>,
    /// The files indexed again since, whose base copies it replaces.
    pub(super) update: Option<Arc<Segment>>,
    /// A full build (`full`) or an update, due or running.
    pub(super) phase: Phase<Handle>,
    /// Relative paths (bytes) events marked changed since they were indexed.
    pub(super) dirty: HashSet<Vec<u8>>,
    pub(super) watched: bool,
    /// The running (or last) build's progress: files read of the total (`usize::MAX`
    /// until the file list is known).
    pub(super) done: Arc<AtomicUsize>,
    pub(super) total: Arc<AtomicUsize>,
    /// Waiting for the symbol index before building (its definitions save parsing).
    pub(super) waiting_for_symbols: bool,
    /// A stored base is being loaded (a restart): a query waits for it a little.
    pub(super) restoring: bool,
    pub(super) store_note: Option<String>,
    pub(super) last_build: Option<Duration>,
    /// Files indexed again since the base was built.
    pub(super) updates: u64,
}

impl Slot {
    pub(super) fn new(root: PathBuf, now: Instant) -> Slot {
        let mut phase = Phase::Idle;
        phase.schedule(now, true);
        Slot {
            root,
            base: None,
            update: None,
            phase,
            dirty: HashSet::new(),
            watched: false,
            done: Arc::default(),
            total: Arc::default(),
            waiting_for_symbols: false,
            restoring: false,
            store_note: None,
            last_build: None,
            updates: 0,
        }
    }

    pub(super) fn mark_dirty(&mut self, rel: Vec<u8>, now: Instant) {
        self.dirty.insert(rel);
        self.phase.schedule(now + UPDATE_DELAY, false);
    }

    /// Paths a job took and did not index: marked again, for the next job.
    pub(super) fn give_back(&mut self, paths: HashSet<Vec<u8>>, now: Instant) {
        if !paths.is_empty() {
            self.dirty.extend(paths);
            self.phase.schedule(now, false);
        }
    }

    pub(super) fn has_work(&self, now: Instant) -> bool {
        self.watched && self.phase.startable(now)
    }

    pub(super) fn running(&self) -> bool {
        self.phase.job().is_some()
    }

    pub(super) fn in_flight(&self) -> Option<&HashSet<Vec<u8>>> {
        self.phase.job().map(|job| &job.in_flight)
    }

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
    /// Where definitions come from without parsing (`None`: parse every file).
    pub(super) symbols: Option<Arc<SymbolIndex>>,
    pub(super) store: Option<Arc<Store>>,
    pub(super) state: Mutex<State>,
    pub(super) wake: Condvar,
    pub(super) clock: Arc<dyn Clock>,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}
