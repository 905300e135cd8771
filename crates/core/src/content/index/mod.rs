//! The content index: per root, a base table of every file's trigrams and an update
//! table of the files read again since, kept by a worker thread beside the file index,
//! stored between runs (`crate::store`), and never stale. `grep` asks it which files may
//! hold a match and reads only those (and every file it cannot vouch for).
//!
//! Never stale, as the search index: a query checks the root's fresh file list against
//! both tables ([`check`]) and trusts a table for a file only when the file's stamp there
//! is its stamp now and no event marked it; every other file is read. Events only tell the
//! worker what to read again soon; correctness does not depend on them.
//!
//! Jobs: a *full* build (no base yet: load the stored one, or read every file; or the
//! update grew past `state::MAX_UPDATE_FILES`) and an *update* (the stale files and the
//! update's own, read into a new update table). It needs no other index, so it is ready
//! long before the symbol and search indexes on a large tree.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::background::Slots;
use crate::content::grams::Plan;
use crate::content::table::Table;
use crate::index::{FileIndex, RootIndex};
use crate::platform::os::OsStrExt;
use crate::store::Store;
use crate::watch::{Consumer, RootStatus, WatchEvent};

pub(crate) mod check;
mod state;
pub(crate) mod worker;

use check::Source;
use state::{Shared, Slot};

/// How one root's content index stands, for `list_roots`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContentState {
    /// Waiting for the root's file index.
    Waiting,
    /// First build under way: files read of the total.
    Building {
        done: usize,
        total: usize,
    },
    Ready,
}

#[derive(Clone, Debug)]
pub struct ContentStatus {
    pub root: PathBuf,
    pub state: ContentState,
    /// Files the base holds.
    pub files: usize,
    /// Bytes of the base and update, and whether the base is its stored file's, read in
    /// place.
    pub index_bytes: usize,
    pub in_place: bool,
    pub last_build: Option<Duration>,
    /// How the root's index stands in the store (`None`: no store).
    pub store: Option<String>,
}

/// The live content index over the current roots.
pub struct ContentIndex {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

impl ContentIndex {
    /// An index standing on `files` (fed the same events, after it), starting from and
    /// saving to `store`.
    pub fn new(files: Arc<FileIndex>, store: Option<Arc<Store>>) -> ContentIndex {
        let shared = Arc::new(Shared {
            files,
            store,
            slots: Slots::new(crate::clock::system()),
        });
        let for_worker = shared.clone();
        let worker = std::thread::Builder::new()
            .name("rootgrep-content".into())
            .spawn(move || worker::worker_loop(&for_worker))
            .expect("spawning the content index thread");
        ContentIndex {
            shared,
            worker: Some(worker),
        }
    }

    /// Per file of `files` (a fresh snapshot of `root`'s file index), by id: may it hold a
    /// match of `plan`. `None` when the index cannot say (no base yet, the root unwatched,
    /// or a plan that admits every file): then every file is read.
    pub(crate) fn admitted(
        &self,
        root: &Path,
        files: &RootIndex,
        plan: &Plan,
    ) -> Option<Vec<bool>> {
        if *plan == Plan::All {
            return None;
        }
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
        let sources = check::check(files, &base, update.as_deref(), &dirty);
        let from_base = base.admitted(plan)?;
        let from_update = update.as_deref().and_then(|u| u.admitted(plan));
        let admitted = sources.iter().map(|source| match *source {
            Source::Stale => true,
            Source::Base(j) => from_base.get(j as usize).copied().unwrap_or(true),
            Source::Update(k) => {
                (from_update.as_ref()).is_none_or(|u| u.get(k as usize).copied().unwrap_or(true))
            }
        });
        // A table that read zeros meanwhile may have said anything: nothing it said counts.
        let admitted: Vec<bool> = admitted.collect();
        (!base.damaged()).then_some(admitted)
    }

    /// Waits up to `timeout` for `root`'s base to be there with nothing stale (tests,
    /// benchmarks).
    #[cfg(all(test, unix))]
    pub(crate) fn wait_ready(&self, root: &Path, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let ready = self.shared.files.snapshot(root).is_some_and(|files| {
                let (base, update, dirty) = {
                    let state = self.shared.lock();
                    match state.slots.iter().find(|s| s.work.root == root) {
                        Some(s) if s.base.is_some() => {
                            (s.base.clone(), s.update.clone(), s.work.dirty.clone())
                        }
                        _ => return false,
                    }
                };
                let base = base.unwrap_or_default();
                let sources = check::check(&files, &base, update.as_deref(), &dirty);
                !sources.contains(&Source::Stale)
            });
            if ready {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every root's state, in the order set.
    pub fn status(&self) -> Vec<ContentStatus> {
        let state = self.shared.lock();
        (state.slots.iter())
            .map(|slot| {
                let work = &slot.work;
                let content_state = if slot.base.is_some() {
                    ContentState::Ready
                } else if work.running() && work.total.load(Ordering::Relaxed) != usize::MAX {
                    ContentState::Building {
                        done: work.done.load(Ordering::Relaxed),
                        total: work.total.load(Ordering::Relaxed),
                    }
                } else {
                    ContentState::Waiting
                };
                let tables = [slot.base.as_deref(), slot.update.as_deref()];
                ContentStatus {
                    root: work.root.clone(),
                    state: content_state,
                    files: slot.base.as_deref().map_or(0, |t| t.files().len()),
                    index_bytes: tables.iter().flatten().map(|t| t.size()).sum(),
                    in_place: slot.base.as_deref().is_some_and(Table::is_mapped),
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

impl Drop for ContentIndex {
    fn drop(&mut self) {
        self.shared.slots.stop();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl Consumer for ContentIndex {
    fn set_roots(&self, roots: &[PathBuf]) {
        let store = self.shared.store.as_deref();
        (self.shared.slots).set_roots(roots, store, crate::store::Kind::Content);
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
