//! The symbol index's per-root state (`Slot`), the state of all roots together (`State`)
//! and what the index's handle and its worker thread share (`Shared`): below both, so the
//! worker reads what the handle writes without either importing the other.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::table::{Overlay, Table};
use crate::index::FileIndex;

/// Files re-parsed into the overlay before it is folded into a new table.
pub(crate) const MAX_OVERLAY: usize = 1024;

pub(super) struct Slot {
    pub(super) root: PathBuf,
    pub(super) table: Option<Arc<Table>>,
    pub(super) overlay: Arc<Overlay>,
    /// Paths changed and not yet re-parsed (absolute).
    pub(super) dirty: HashSet<PathBuf>,
    /// Paths taken by the running job (still dirty for queries until it lands).
    pub(super) in_flight: HashSet<PathBuf>,
    pub(super) sync: bool,
    /// A sync (or the first build) is running: not answered from memory until it lands.
    pub(super) syncing: bool,
    /// No work before then (the file index is unavailable: looked at again later).
    pub(super) not_before: Option<std::time::Instant>,
    /// Watched by the watcher (no watch, no index).
    pub(super) watched: bool,
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) done: Arc<AtomicUsize>,
    pub(super) total: Arc<AtomicUsize>,
    pub(super) running: bool,
    pub(super) too_large: usize,
    pub(super) updates: u64,
    pub(super) last_build: Option<Duration>,
}

impl Slot {
    pub(super) fn new(root: PathBuf) -> Slot {
        Slot {
            root,
            table: None,
            overlay: Arc::default(),
            dirty: HashSet::new(),
            in_flight: HashSet::new(),
            sync: true,
            syncing: false,
            not_before: None,
            watched: false,
            cancel: Arc::default(),
            done: Arc::default(),
            total: Arc::default(),
            running: false,
            too_large: 0,
            updates: 0,
            last_build: None,
        }
    }

    pub(super) fn has_work(&self) -> bool {
        self.watched
            && !self.running
            && (self.sync || !self.dirty.is_empty())
            && self
                .not_before
                .is_none_or(|at| std::time::Instant::now() >= at)
    }
}

pub(super) struct State {
    pub(super) slots: Vec<Slot>,
    pub(super) stop: bool,
}

pub(super) struct Shared {
    pub(super) files: Arc<FileIndex>,
    pub(super) state: Mutex<State>,
    pub(super) wake: Condvar,
    pub(super) threads: usize,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
