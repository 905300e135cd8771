//! The symbol index (PRODUCT §13): per root, every definition of the supported files the
//! file index lists, packed in memory and kept live by the watcher's events, so `symbols`
//! answers from memory instead of pre-filtering and parsing.
//!
//! It is a second [`watch::Consumer`](crate::watch::Consumer) beside the file index and stands on it: a root is
//! built only once its file index is fresh, from that file list (supported languages, at
//! most [`MAX_PARSE_BYTES`](crate::symbols::MAX_PARSE_BYTES) each), on a bounded number of low-priority threads that step
//! aside for every foreground search ([`yield_to_searches`](crate::pool::pacing::yield_to_searches) between files).
//!
//! Layout (compact, see [`Table`]): names, lowercase names (non-ASCII ones only) and
//! containers in one byte arena (containers interned; signatures are not kept, the line is
//! read again for the definitions a query returns), each definition a fixed record of offsets and
//! line numbers, two sorted tables of record ids (by name, by lowercase name) for exact
//! and prefix lookups, and per file a range of records plus the size, mtime and identity it was
//! parsed at.
//!
//! Updates: a path named by a watch event (or by the server's own write) is *dirty* until
//! the worker re-parsed it into a small overlay (file → definitions, or gone); the overlay
//! is folded into a new table once it grows. Anything the overlay cannot express (a
//! directory appearing or vanishing, ignore rules changing, lost events, a re-watch)
//! makes the root *sync*: the file list is compared again with what was parsed (size and
//! mtime), reusing what did not change.
//!
//! Never stale: a query is answered from memory only when the root's table exists, no
//! sync is due, the file index is fresh and few paths are dirty; a dirty file, or one
//! whose size or mtime differs from the file index's, is parsed on demand by the query
//! itself. Otherwise [`SymbolIndex::snapshot`] says `None` and the caller takes the
//! on-demand path (text pre-filter, then parsing the candidates).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use super::lang::Lang;
use crate::index::{FileIndex, IndexState};
use crate::platform::os::OsStrExt;
use crate::store::Store;
use crate::watch::Consumer;
use crate::watch::{RootStatus, WatchEvent};

/// How long a query waits for a restarted root's stored table to be checked before it
/// parses on demand instead (the check is the file index's walk: about 1 s on nuttx, 10 s
/// for 200k files; parsing on demand can take minutes on such a tree).
pub(crate) const RESTORE_WAIT: Duration = Duration::from_secs(20);

/// More dirty paths than this and a query does not parse them itself: it takes the
/// on-demand path (a burst of changes, a checkout), which pre-filters before parsing.
pub(crate) const MAX_DIRTY_ON_DEMAND: usize = 64;

mod packer;
mod parts;
mod snapshot;
mod state;
mod stored;
mod table;
mod worker;

use crate::background::Slots;
pub use packer::pack_files;
pub use snapshot::{Lookup, Snapshot, SnapshotStats};
use state::Shared;
pub use table::{FileSyms, Table};
use worker::worker_loop;

/// How one root's symbol index stands, for `list_roots`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolState {
    /// Waiting for the root's file index to be fresh.
    Waiting,
    /// First build under way: files parsed so far of the total.
    Building { done: usize, total: usize },
    /// Answering from memory (updates may be under way: they are parsed on demand).
    Ready,
    /// Comparing with the file list again (after a directory change, lost events…):
    /// queries are on demand meanwhile.
    Syncing { done: usize, total: usize },
    /// Not indexed: queries parse on demand (the reason says why).
    Unavailable(String),
}

#[derive(Clone, Debug)]
pub struct SymbolStatus {
    pub root: PathBuf,
    pub state: SymbolState,
    /// Definitions and files held.
    pub definitions: usize,
    pub files: usize,
    /// Supported files over the parse cap, not indexed.
    pub too_large: usize,
    /// Heap bytes of the table (0 when it is read in place from the store).
    pub heap_bytes: usize,
    /// Bytes of the table, and whether they are its stored file's, read in place.
    pub table_bytes: usize,
    pub in_place: bool,
    /// Files re-parsed after changes since the last full pack.
    pub updates: u64,
    /// How long the last full pack (build or sync) took, and its CPU-bound part.
    pub last_build: Option<Duration>,
    /// How the root's table stands in the on-disk store (`None`: no store).
    pub store: Option<String>,
}

/// The live symbol index over the current roots (see the module documentation).
pub struct SymbolIndex {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

/// Threads the build parses with: one per core. They run at a lower priority and pause
/// for every foreground search (`pool::pacing`), so a request still finds a core; leaving
/// one idle instead made a 2-core machine's first start take twice as long.
pub(crate) fn build_threads() -> usize {
    crate::pool::pacing::thread_count().max(1)
}

impl SymbolIndex {
    /// An index standing on `files` (which must be fed the same events, first).
    pub fn new(files: Arc<FileIndex>) -> SymbolIndex {
        SymbolIndex::with_threads(files, build_threads())
    }

    pub(crate) fn with_threads(files: Arc<FileIndex>, threads: usize) -> SymbolIndex {
        SymbolIndex::with_clock(files, threads, crate::clock::system(), None)
    }

    /// An index standing on `files` that starts from, and saves to, `store`.
    pub(crate) fn with_store(files: Arc<FileIndex>, store: Option<Arc<Store>>) -> SymbolIndex {
        SymbolIndex::with_clock(files, build_threads(), crate::clock::system(), store)
    }

    /// Like [`SymbolIndex::with_threads`], its pacing reading the time from `clock`.
    pub(crate) fn with_clock(
        files: Arc<FileIndex>,
        threads: usize,
        clock: Arc<dyn crate::clock::Clock>,
        store: Option<Arc<Store>>,
    ) -> SymbolIndex {
        let shared = Arc::new(Shared {
            files,
            store,
            slots: Slots::new(clock),
            threads: threads.max(1),
        });
        let for_worker = shared.clone();
        let worker = std::thread::Builder::new()
            .name("rootgrep-symbols".into())
            .spawn(move || worker_loop(&for_worker))
            .expect("spawning the symbol index thread");
        SymbolIndex {
            shared,
            worker: Some(worker),
        }
    }

    /// What a query on `root` may read from memory, or `None`: not built yet, a sync is
    /// due, the file index is not fresh, or too many paths are dirty (the caller then
    /// takes the on-demand path).
    pub fn snapshot(&self, root: &Path) -> Option<Snapshot> {
        let (table, overlay, dirty) = {
            let now = self.shared.now();
            let mut state = self.shared.lock();
            let slot = state.slots.iter_mut().find(|s| s.work.root == root)?;
            if slot.drop_damaged() {
                slot.sync(now);
                drop(state);
                self.shared.slots.notify();
                return None;
            }
            if slot.syncing() || !slot.work.watched {
                return None;
            }
            let table = slot.table.clone()?;
            let (marked, in_flight) = (&slot.work.dirty, slot.work.in_flight());
            if marked.len() + in_flight.map_or(0, HashSet::len) > MAX_DIRTY_ON_DEMAND {
                return None;
            }
            let dirty: Vec<PathBuf> = match in_flight {
                Some(in_flight) => marked.union(in_flight).cloned().collect(),
                None => marked.iter().cloned().collect(),
            };
            (table, slot.overlay.clone(), dirty)
        };
        let files = self.shared.files.snapshot(root)?;
        let mut parse = Vec::new();
        let mut excluded = HashSet::new();
        for path in dirty {
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            if files.find_file(rel).is_some() {
                if Lang::from_path(rel).is_some() {
                    parse.push(rel.to_path_buf());
                }
            } else if path.is_dir() || files.find_dir(rel).is_some() {
                // A directory: its files are unknown here (the worker syncs).
                return None;
            } else if table.find_file(rel.as_os_str().as_bytes()).is_none()
                && table.has_under(rel.as_os_str().as_bytes())
            {
                // A whole directory went away: leave it to the worker.
                return None;
            }
            excluded.insert(rel.as_os_str().as_bytes().to_vec());
        }
        Some(Snapshot {
            root: root.to_path_buf(),
            table,
            overlay,
            parse,
            dirty: excluded,
            files,
            check_disk: !self.shared.files.proves_freshness(),
        })
    }

    /// Waits while a root holding one of `targets` is restoring its stored table (a
    /// restart), at most [`RESTORE_WAIT`] and until `cancelled`: answering from the checked
    /// table a moment later beats parsing on demand. Returns at once otherwise.
    pub(crate) fn await_restored(&self, targets: &[PathBuf], cancelled: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + RESTORE_WAIT;
        self.shared
            .slots
            .await_restored(targets, deadline, cancelled);
    }

    /// [`SymbolIndex::snapshot`] of the root holding `path`.
    pub fn snapshot_for(&self, path: &Path) -> Option<Snapshot> {
        self.snapshot(&self.root_of(path)?)
    }

    /// The innermost root holding `path`.
    pub(crate) fn root_of(&self, path: &Path) -> Option<PathBuf> {
        self.shared.slots.root_of(path)
    }

    /// Distinct definition names starting with `prefix` (smart case) over the roots built,
    /// sorted, at most `max`, and whether there were more (completion of symbol names).
    /// Only checked tables are read: a root whose table is not yet checked against the
    /// file list (restored from the store, another server still building, a sync due after
    /// lost events) offers nothing; a file changed since it was parsed (dirty, or parsed
    /// again into the overlay) offers its new names, not its old ones.
    pub fn complete_names(&self, prefix: &str, max: usize) -> (Vec<String>, bool) {
        if prefix.is_empty() || max == 0 {
            return (Vec::new(), false);
        }
        let insensitive = !prefix.chars().any(char::is_uppercase);
        type Held = (Arc<Table>, Arc<table::Overlay>, HashSet<Vec<u8>>);
        let held: Vec<Held> = {
            let state = self.shared.lock();
            (state.slots.iter())
                .filter(|s| !s.syncing() && s.work.watched)
                .filter_map(|s| {
                    let table = s.table.clone().filter(|t| !t.damaged())?;
                    let dirty = (s.work.dirty.iter())
                        .chain(s.work.in_flight().into_iter().flatten())
                        .filter_map(|p| p.strip_prefix(&s.work.root).ok())
                        .map(|rel| rel.as_os_str().as_bytes().to_vec())
                        .collect();
                    Some((table, s.overlay.clone(), dirty))
                })
                .collect()
        };
        // Ordered ignoring case first (`parse` beside `Parser`), then as written.
        let mut names: std::collections::BTreeSet<(String, String)> =
            std::collections::BTreeSet::new();
        for (table, overlay, dirty) in &held {
            let found =
                snapshot::names_with_prefix((table, overlay, dirty), prefix, insensitive, max + 1);
            if !table.damaged() {
                names.extend(found.into_iter().map(|name| (name.to_lowercase(), name)));
            }
        }
        let more = names.len() > max;
        (
            names.into_iter().take(max).map(|(_, name)| name).collect(),
            more,
        )
    }

    /// Waits up to `timeout` for `root` to answer from memory (tests, benchmarks).
    pub fn wait_ready(&self, root: &Path, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self.snapshot(root).is_some() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every root's state, in the order set.
    pub fn status(&self) -> Vec<SymbolStatus> {
        let file_states = self.shared.files.status();
        let state = self.shared.lock();
        state
            .slots
            .iter()
            .map(|slot| {
                let work = &slot.work;
                let files = file_states.iter().find(|s| s.root == work.root);
                let progress = (
                    work.done.load(Ordering::Relaxed),
                    work.total.load(Ordering::Relaxed),
                );
                let symbol_state = match files.map(|s| &s.state) {
                    Some(IndexState::Unavailable(why)) => SymbolState::Unavailable(format!(
                        "no file index ({why}); symbols are parsed on demand"
                    )),
                    _ if !work.watched => SymbolState::Waiting,
                    // Running, but still waiting for a fresh file list.
                    _ if work.running() && progress.1 == usize::MAX && slot.table.is_none() => {
                        SymbolState::Waiting
                    }
                    _ if slot.table.is_none() && work.running() => SymbolState::Building {
                        done: progress.0,
                        total: progress.1,
                    },
                    _ if slot.table.is_none() => SymbolState::Waiting,
                    _ if slot.syncing() => SymbolState::Syncing {
                        done: progress.0,
                        total: if progress.1 == usize::MAX {
                            0
                        } else {
                            progress.1
                        },
                    },
                    _ => SymbolState::Ready,
                };
                let table = slot.table.as_deref();
                SymbolStatus {
                    root: work.root.clone(),
                    state: symbol_state,
                    definitions: table.map_or(0, Table::len)
                        + slot
                            .overlay
                            .values()
                            .flatten()
                            .map(|f| f.defs.len())
                            .sum::<usize>(),
                    files: table.map_or(0, |t| t.files().len()),
                    too_large: slot.too_large,
                    heap_bytes: table.map_or(0, Table::heap_bytes),
                    table_bytes: table.map_or(0, Table::size),
                    in_place: table.is_some_and(Table::is_mapped),
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
            if path.starts_with(&slot.work.root) {
                if path
                    .file_name()
                    .is_some_and(|n| n == ".gitignore" || n == ".ignore")
                {
                    slot.sync(now);
                } else {
                    slot.work.mark_dirty(path.to_path_buf(), now);
                }
                any = true;
            }
        }
        drop(state);
        if any {
            self.shared.slots.notify();
        }
    }
}

impl Drop for SymbolIndex {
    fn drop(&mut self) {
        self.shared.slots.stop();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl Consumer for SymbolIndex {
    fn set_roots(&self, roots: &[PathBuf]) {
        let store = self.shared.store.as_deref();
        (self.shared.slots).set_roots(roots, store, crate::store::Kind::Symbols);
    }

    fn apply(&self, event: &WatchEvent) {
        match event {
            WatchEvent::Pending(path)
            | WatchEvent::Changed(path)
            | WatchEvent::Created(path)
            | WatchEvent::Removed(path) => self.mark(path),
            WatchEvent::Quiet => {}
            WatchEvent::Overflow | WatchEvent::Error(_) => {
                let now = self.shared.now();
                let mut state = self.shared.lock();
                for slot in state.slots.iter_mut() {
                    slot.sync(now);
                }
                drop(state);
                self.shared.slots.notify();
            }
            WatchEvent::Status(root, status) => {
                let now = self.shared.now();
                self.shared.slots.with_slot(root, |slot| {
                    // Events may have been missed while not watched: compare again.
                    slot.work.watched = *status == RootStatus::Watching;
                    // Failed: no job will run to check a stored table.
                    slot.work.restoring &= !matches!(status, RootStatus::Failed(_));
                    slot.sync(now);
                });
                self.shared.slots.notify();
            }
        }
    }

    fn expect_change(&self, path: &Path) {
        self.mark(path);
    }
}

#[cfg(all(test, unix))]
mod tests;

#[cfg(all(test, unix))]
mod sync_tests;

#[cfg(all(test, unix))]
mod persist_tests;
