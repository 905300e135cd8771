//! The symbol index's per-root state (`Slot`: the table, the overlay, and the root's
//! [`Work`] on them) and what the index's handle and its worker thread share (`Shared`):
//! below both, so the worker reads what the handle writes without either importing the
//! other.

use std::path::PathBuf;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use super::table::{Overlay, Table};
use crate::background::{self, Slots, State, Work};
use crate::index::FileIndex;
use crate::store::Store;

/// Files re-parsed into the overlay before it is folded into a new table.
pub(crate) const MAX_OVERLAY: usize = 1024;

/// How long a root whose file index is unavailable waits before its job is tried again.
pub(super) const UNAVAILABLE_RETRY: Duration = Duration::from_secs(2);

pub(super) struct Slot {
    /// The root's background work: a sync (compare the whole file list again, `full`)
    /// or re-parsing the dirty paths (absolute), due or running; progress and notes.
    pub(super) work: Work<PathBuf>,
    /// The last table packed, kept through every phase: queries read it while only dirty
    /// paths are due (parsing those on demand), completion reads it whatever the phase,
    /// and a sync reuses what did not change.
    pub(super) table: Option<Arc<Table>>,
    pub(super) overlay: Arc<Overlay>,
    pub(super) too_large: usize,
}

impl background::Slot for Slot {
    type Dirty = PathBuf;

    /// Nothing packed yet: the first job syncs with the file list.
    fn new(root: PathBuf, now: Instant) -> Slot {
        Slot {
            work: Work::new(root, now),
            table: None,
            overlay: Arc::default(),
            too_large: 0,
        }
    }

    fn work(&self) -> &Work<PathBuf> {
        &self.work
    }

    fn work_mut(&mut self) -> &mut Work<PathBuf> {
        &mut self.work
    }
}

impl Slot {
    /// Where the slot keeps its table (swapped for the stored copy once saved).
    pub(super) fn table_mut(&mut self) -> &mut Option<Arc<Table>> {
        &mut self.table
    }

    /// Something the overlay cannot express (ignore rules, lost events, a re-watch): the
    /// next job compares the whole file list again.
    pub(super) fn sync(&mut self, now: Instant) {
        self.work.phase.schedule(now, true);
    }

    /// Drops a table whose stored file was cut short while mapped (`store::faults`): the
    /// next job, a sync for want of a table, reads the files (the damaged stored file is
    /// refused and deleted). Whether it did.
    pub(super) fn drop_damaged(&mut self) -> bool {
        if !self.table.as_deref().is_some_and(Table::damaged) {
            return false;
        }
        tracing::warn!(
            "the stored symbol table of {} was cut short while in use: rebuilding it",
            self.work.root.display()
        );
        self.table = None;
        self.overlay = Arc::default();
        true
    }

    /// Whether a sync is due or running: queries are on demand meanwhile.
    pub(super) fn syncing(&self) -> bool {
        self.work.phase.redo_pending()
    }
}

pub(super) struct Shared {
    pub(super) files: Arc<FileIndex>,
    /// Where tables are stored between runs (`None`: `--no-cache`, or no cache directory).
    pub(super) store: Option<Arc<Store>>,
    /// The roots' slots, the worker's wake-up, and the clock the pacing reads (simulated
    /// in tests).
    pub(super) slots: Slots<Slot>,
    pub(super) threads: usize,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State<Slot>> {
        self.slots.lock()
    }

    pub(super) fn now(&self) -> Instant {
        self.slots.clock.now()
    }
}
