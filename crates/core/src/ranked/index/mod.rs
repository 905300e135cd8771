//! The search index (PRODUCT §14): per root, a base segment of every text file and an
//! update segment of the files indexed again since, kept by a worker thread beside the
//! symbol index (whose definitions it reuses instead of parsing), stored between runs
//! (`crate::store`), and never stale.
//!
//! Never stale: a query checks the root's fresh file list against both segments
//! ([`check`]) and serves a file only when its stamp there is the file's stamp now and no
//! event marked it; it indexes the few files that are not (at most
//! [`MAX_ON_DEMAND`]) itself, and leaves out (and says) what it could not. Events only tell
//! the worker what to index again soon; correctness does not depend on them.
//!
//! Jobs: a *full* build (no base yet: load the stored one, or read every file once the
//! symbol index is ready; or the update grew past `state::MAX_UPDATE_FILES`) and an *update*
//! (the stale files and the update's own, read into a new update segment).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::index::{FileIndex, RootIndex};
use crate::platform::os::OsStrExt;
use crate::ranked::segment::Segment;
use crate::ranked::votes::History;
use crate::store::Store;
use crate::symbols::index::SymbolIndex;
use crate::watch::{Consumer, RootStatus, WatchEvent};

pub(crate) mod check;
mod state;
mod worker;

use crate::background::Slots;
use check::Check;
use state::{Shared, Slot};

/// Stale files a query indexes itself; beyond, they are left out and the answer says so.
pub(crate) const MAX_ON_DEMAND: usize = 64;

/// How long a query waits for a restarted root's stored index to load.
pub(crate) const RESTORE_WAIT: Duration = Duration::from_secs(10);

/// How one root's search index stands, for `list_roots`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankedState {
    /// Waiting for the root's file index, or for its symbol index (whose definitions
    /// the build reuses).
    Waiting(&'static str),
    /// First build under way: files read of the total.
    Building {
        done: usize,
        total: usize,
    },
    Ready,
    /// Not indexed (the reason says why): searches rank the files the text pre-filter
    /// finds.
    Unavailable(String),
}

#[derive(Clone, Debug)]
pub struct RankedStatus {
    pub root: PathBuf,
    pub state: RankedState,
    /// Documents and files held (base and update).
    pub documents: usize,
    pub files: usize,
    pub terms: usize,
    pub heap_bytes: usize,
    /// Bytes of the base and update, and whether the base is its stored file's, read in
    /// place.
    pub index_bytes: usize,
    pub in_place: bool,
    /// Files indexed again since the base was built.
    pub updates: u64,
    pub last_build: Option<Duration>,
    /// How the root's index stands in the store (`None`: no store).
    pub store: Option<String>,
}

/// What a query reads of one root: its segments at a moment, checked against the fresh
/// file list.
pub(crate) struct RankedSnapshot {
    pub(crate) root: PathBuf,
    pub(crate) base: Arc<Segment>,
    pub(crate) update: Option<Arc<Segment>>,
    pub(crate) check: Check,
    pub(crate) files: Arc<RootIndex>,
}

impl RankedSnapshot {
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }
}

/// The live search index over the current roots.
pub struct RankedIndex {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
    /// The roots' git history, which re-ranks a query's best results.
    history: Option<Arc<dyn History>>,
}

impl RankedIndex {
    /// An index standing on `files` (fed the same events, first) reusing the definitions
    /// of `symbols`, starting from and saving to `store`.
    pub fn new(
        files: Arc<FileIndex>,
        symbols: Option<Arc<SymbolIndex>>,
        store: Option<Arc<Store>>,
    ) -> RankedIndex {
        RankedIndex::with_clock(files, symbols, store, crate::clock::system())
    }

    pub(crate) fn with_clock(
        files: Arc<FileIndex>,
        symbols: Option<Arc<SymbolIndex>>,
        store: Option<Arc<Store>>,
        clock: Arc<dyn crate::clock::Clock>,
    ) -> RankedIndex {
        let shared = Arc::new(Shared {
            files,
            symbols,
            store,
            slots: Slots::new(clock),
        });
        let for_worker = shared.clone();
        let worker = std::thread::Builder::new()
            .name("rootgrep-search".into())
            .spawn(move || worker::worker_loop(&for_worker))
            .expect("spawning the search index thread");
        RankedIndex {
            shared,
            worker: Some(worker),
            history: None,
        }
    }

    /// The index re-ranking its best results with `history`.
    pub(crate) fn with_history(mut self, history: Arc<dyn History>) -> RankedIndex {
        self.history = Some(history);
        self
    }

    pub(crate) fn history(&self) -> Option<&dyn History> {
        self.history.as_deref()
    }

    /// What a query on `root` reads, or `None`: no base yet, not watched, or the file index
    /// is not fresh (the caller then ranks what the text pre-filter finds).
    pub(crate) fn snapshot(&self, root: &Path) -> Option<RankedSnapshot> {
        let (base, update, dirty) = {
            let now = self.shared.now();
            let mut state = self.shared.lock();
            let slot = state.slots.iter_mut().find(|s| s.work.root == root)?;
            if slot.drop_damaged() {
                slot.work.phase.schedule(now, true);
                drop(state);
                self.shared.slots.notify();
                return None;
            }
            if !slot.work.watched {
                return None;
            }
            let mut dirty = slot.work.dirty.clone();
            if let Some(taken) = slot.work.in_flight() {
                dirty.extend(taken.iter().cloned());
            }
            (slot.base.clone()?, slot.update.clone(), dirty)
        };
        let files = self.shared.files.snapshot(root)?;
        let check = check::check(&files, &base, update.as_deref(), &dirty);
        Some(RankedSnapshot {
            root: root.to_path_buf(),
            base,
            update,
            check,
            files,
        })
    }

    /// The innermost root holding `path`.
    pub(crate) fn root_of(&self, path: &Path) -> Option<PathBuf> {
        self.shared.slots.root_of(path)
    }

    /// Waits while a root holding one of `targets` is loading its stored index (a
    /// restart), and then while its file list is not fresh yet (the check needs it), at
    /// most [`RESTORE_WAIT`] in all and until `cancelled`: answering from the stored index
    /// a moment later beats ranking the pre-filter's candidates.
    pub(crate) fn await_restored(&self, targets: &[PathBuf], cancelled: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + RESTORE_WAIT;
        let mine = |s: &Slot| targets.iter().any(|t| t.starts_with(&s.work.root));
        self.shared
            .slots
            .await_restored(targets, deadline, &cancelled);
        let based: Vec<PathBuf> = {
            let state = self.shared.lock();
            (state.slots.iter())
                .filter(|s| s.base.is_some() && s.work.watched && mine(s))
                .map(|s| s.work.root.clone())
                .collect()
        };
        for root in based {
            while !cancelled() {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return;
                }
                let step = left.min(Duration::from_millis(100));
                if self.shared.files.wait_fresh(&root, step).is_some() {
                    break;
                }
            }
        }
    }

    /// Waits up to `timeout` for `root` to be served from its segments with nothing stale
    /// (tests, benchmarks).
    #[cfg(all(test, unix))]
    pub(crate) fn wait_ready(&self, root: &Path, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self
                .snapshot(root)
                .is_some_and(|s| s.check.stale.is_empty())
            {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every root's state, in the order set.
    pub fn status(&self) -> Vec<RankedStatus> {
        let file_states = self.shared.files.status();
        let state = self.shared.lock();
        state
            .slots
            .iter()
            .map(|slot| {
                let work = &slot.work;
                let files = file_states.iter().find(|s| s.root == work.root);
                let search_state = match files.map(|s| &s.state) {
                    Some(crate::index::IndexState::Unavailable(why)) => {
                        RankedState::Unavailable(format!(
                            "no file index ({why}); searches rank what the text pre-filter finds"
                        ))
                    }
                    _ if slot.base.is_some() => RankedState::Ready,
                    _ if !work.watched => RankedState::Waiting("the file index"),
                    _ if slot.waiting_for_symbols => RankedState::Waiting("the symbol index"),
                    _ if work.running() && work.total.load(Ordering::Relaxed) != usize::MAX => {
                        RankedState::Building {
                            done: work.done.load(Ordering::Relaxed),
                            total: work.total.load(Ordering::Relaxed),
                        }
                    }
                    _ => RankedState::Waiting("the file index"),
                };
                let segments = [slot.base.as_deref(), slot.update.as_deref()];
                let sum = |f: fn(&Segment) -> usize| segments.iter().flatten().map(|s| f(s)).sum();
                RankedStatus {
                    root: work.root.clone(),
                    state: search_state,
                    documents: sum(|s| s.docs().len()),
                    files: slot.base.as_deref().map_or(0, |s| s.files().len()),
                    terms: slot.base.as_deref().map_or(0, Segment::term_count),
                    heap_bytes: sum(Segment::heap_bytes),
                    index_bytes: sum(Segment::size),
                    in_place: slot.base.as_deref().is_some_and(Segment::is_mapped),
                    updates: work.updates,
                    last_build: work.last_build,
                    store: work.store_note.clone(),
                }
            })
            .collect()
    }

    fn mark(&self, path: &Path) {
        let now = self.shared.now();
        let mut state = self.shared.lock();
        let mut any = false;
        for slot in state.slots.iter_mut() {
            if let Ok(rel) = path.strip_prefix(&slot.work.root) {
                slot.mark_dirty(rel.as_os_str().as_bytes().to_vec(), now);
                any = true;
            }
        }
        drop(state);
        if any {
            self.shared.slots.notify();
        }
    }

    /// Something may have changed anywhere in every root (lost events, a re-watch): an
    /// update compares every file again.
    fn recheck_all(&self, root: Option<&Path>, watched: Option<bool>) {
        let now = self.shared.now();
        let mut state = self.shared.lock();
        for slot in state.slots.iter_mut() {
            let work = &mut slot.work;
            if root.is_some_and(|r| r != work.root) {
                continue;
            }
            if let Some(watched) = watched {
                work.watched = watched;
            }
            work.phase.schedule(now, false);
        }
        drop(state);
        self.shared.slots.notify();
    }
}

impl Drop for RankedIndex {
    fn drop(&mut self) {
        self.shared.slots.stop();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl Consumer for RankedIndex {
    fn set_roots(&self, roots: &[PathBuf]) {
        let store = self.shared.store.as_deref();
        (self.shared.slots).set_roots(roots, store, crate::store::Kind::Search);
    }

    fn apply(&self, event: &WatchEvent) {
        match event {
            WatchEvent::Pending(path)
            | WatchEvent::Changed(path)
            | WatchEvent::Created(path)
            | WatchEvent::Removed(path) => self.mark(path),
            WatchEvent::Quiet => {}
            WatchEvent::Overflow | WatchEvent::Error(_) => self.recheck_all(None, None),
            WatchEvent::Status(root, status) => {
                let watched = *status == RootStatus::Watching;
                self.recheck_all(Some(root), Some(watched));
                if matches!(status, RootStatus::Failed(_)) {
                    // No job will run to load a stored base.
                    let restored = |slot: &mut Slot| slot.work.restoring = false;
                    self.shared.slots.with_slot(root, restored);
                }
            }
        }
    }

    fn expect_change(&self, path: &Path) {
        self.mark(path);
    }
}

#[cfg(all(test, unix))]
mod tests;
