//! The content index's per-root state (`Slot`: the base table, the update table, and the
//! root's [`Work`] on them) and what the index's handle and its worker share (`Shared`).

use std::path::PathBuf;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use crate::background::{self, Slots, State, Work};
use crate::content::table::Table;
use crate::index::FileIndex;
use crate::store::Store;

/// How long after the first change of a burst its files are read again (`grep` reads
/// changed files itself meanwhile).
pub(super) const UPDATE_DELAY: Duration = Duration::from_millis(250);

/// Files the update table holds at most; more and the next job rebuilds the base.
pub(super) const MAX_UPDATE_FILES: usize = 2048;

/// How long a root whose file index is unavailable waits before its job is tried again.
pub(super) const UNAVAILABLE_RETRY: Duration = Duration::from_secs(2);

pub(super) struct Slot {
    /// The root's background work (phase, marked relative paths as bytes, progress).
    pub(super) work: Work<Vec<u8>>,
    /// Every file of the root as last built (or loaded from the store).
    pub(super) base: Option<Arc<Table>>,
    /// The files read again since, whose base copies it replaces.
    pub(super) update: Option<Arc<Table>>,
}

impl background::Slot for Slot {
    type Dirty = Vec<u8>;

    fn new(root: PathBuf, now: Instant) -> Slot {
        Slot {
            work: Work::new(root, now),
            base: None,
            update: None,
        }
    }

    fn work(&self) -> &Work<Vec<u8>> {
        &self.work
    }

    fn work_mut(&mut self) -> &mut Work<Vec<u8>> {
        &mut self.work
    }
}

impl Slot {
    /// Where the slot keeps its base (swapped for the stored copy once saved).
    pub(super) fn base_mut(&mut self) -> &mut Option<Arc<Table>> {
        &mut self.base
    }

    /// Drops a base whose stored file was cut short while mapped (`store::faults`): the
    /// next job, a full build for want of a base, reads the files again. Whether it did.
    pub(super) fn drop_damaged(&mut self) -> bool {
        if !self.base.as_deref().is_some_and(Table::damaged) {
            return false;
        }
        tracing::warn!(
            "the stored content index of {} was cut short while in use: rebuilding it",
            self.work.root.display()
        );
        self.base = None;
        self.update = None;
        true
    }

    /// `rel` changed: read again once the burst is over.
    pub(super) fn mark_dirty(&mut self, rel: Vec<u8>, now: Instant) {
        self.work.mark_dirty(rel, now + UPDATE_DELAY);
    }
}

pub(super) struct Shared {
    pub(super) files: Arc<FileIndex>,
    pub(super) store: Option<Arc<Store>>,
    pub(super) slots: Slots<Slot>,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State<Slot>> {
        self.slots.lock()
    }

    pub(super) fn now(&self) -> Instant {
        self.slots.clock.now()
    }
}
