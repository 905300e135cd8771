//! The live file index: per root, the files a default search walk yields (gitignore-aware,
//! hidden skipped, symlinks not followed, regular files only) with their size and
//! modification time, built in the background and kept fresh by [`WatchEvent`]s, so that
//! `glob`, completion, `resources/list` and grep's candidate list need not walk the disk.
//!
//! Parts, along the seams of the work:
//! - `root`: [`RootIndex`], one immutable build of one root (packed, with its queries).
//! - `build`, `update`, `pack`: walking a root exactly as a default search does, listing
//!   changed directories again, and packing the result.
//! - `stored`, `resume`: a whole walk's file list in the store, and a restart's first
//!   build from it, which lists again only the directories changed while no server ran.
//! - `state`: each root's `Slot`, whose work is a `phase::Phase` (idle, a job due, a
//!   job running); `events`: what each watcher event does to the slots; `worker`: the
//!   worker thread, one due root at a time.
//! - this module: [`FileIndex`], the live set of roots, and the freshness rules.
//!   [`FileIndex::snapshot`] answers `None` whenever the answer could be out of date —
//!   while building, after a create/remove/rename until the update that applies it lands
//!   (or an ignore-file change until the rebuild is done), while a burst of events is
//!   still settling (from [`WatchEvent::Pending`] to its settled event), and for a root
//!   that is not (or no longer) watched. Callers then walk. A content change only
//!   refreshes that file's size, mtime and identity in place.
//! - **Updates, not rebuilds.** A created or removed path is recorded; once the burst it
//!   belongs to settles, one update lists again just the directories that gained or lost
//!   entries (with the same walker, so new entries are filtered exactly as a build would
//!   filter them) and walks new directories whole (`update::update`). The whole root is
//!   walked again only when that is needed (ignore rules changed, events lost, the root
//!   re-watched) or cheaper (the directories to list hold most of the root). Events that
//!   cannot concern the index (inside an ignored or hidden directory) are settled by a few
//!   binary searches, without even an `lstat`. Applying an event wakes the worker thread
//!   only when a job got due or a root fresh: a burst of creations is two events per file.
//! - **Only the root itself.** Every build and update runs on a root that is
//!   [`in_place`](crate::roots::in_place) before and after it (its path not a symlink, nor
//!   leading through one): otherwise what it read is dropped, the root is `Unavailable`,
//!   and the worker looks again every [`DISPLACED_RETRY`](state::DISPLACED_RETRY). The walker follows the path it
//!   starts from, so without this a root swapped for a symlink would be indexed where it
//!   points.
//! - **Our own writes.** The server's writes are announced with
//!   [`FileIndex::expect_change`]: the root is not served until the watcher has delivered
//!   that path's event (or a build that started after the write has landed), so a write is
//!   visible to the very next request even when the watcher has a backlog. A change whose
//!   event does not come within [`EXPECT_WAIT`](state::EXPECT_WAIT) makes the root rebuild.
//!
//! - **Nothing queued is skipped.** A change's event is queued in the kernel when the
//!   change is made but reaches the index a moment later. Before a fresh root is served,
//!   [`FileIndex::snapshot`] waits for the watcher's [`Barrier`] (at most [`SYNC_WAIT`]):
//!   every event queued before the request has then been applied (a pending burst, at
//!   least, which makes the root not fresh); when the barrier cannot say so in time, the
//!   answer is `None` and the caller walks.
//!
//! The index knows the walker ([`crate::walk`]) and the watcher's events, never the search
//! engine (which stands on it). The ignore files its walks did not apply (not regular
//! files, too large: [`crate::ignores`]) are kept with the build, so the searches it
//! answers report them as a walk would ([`RootIndex::skipped_ignore_for`]).
//!
//! Not covered (the walk decides, the index cannot know): ignore files *above* a root and
//! the global git excludes file change without an event; a client relying on those changes
//! sees them after the next rebuild (any structural event, or re-setting the roots).

mod build;
mod events;
mod pack;
mod part;
mod resume;
#[cfg(all(test, unix))]
mod resume_tests;
mod root;
mod state;
mod stored;
mod update;
mod worker;

pub use build::{DEFAULT_MAX_FILES, build};
pub use root::{BuildInfo, Child, IndexedFile, RootIndex};
pub(crate) use root::{Stamp, cmp_paths, stamp_of_meta};
use state::{Shared, Slot, State, Watch};
use worker::worker_loop;

use crate::platform::os::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::mutex::lock;
use crate::roots::Displaced;
use crate::watch::{Barrier, WatchEvent};

pub(crate) use state::SYNC_WAIT;

/// How one root's index stands, for `list_roots` and logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexState {
    /// Waiting for the root to be watched (no index without a watch).
    Waiting,
    /// Being built (first build, or rebuild after a change).
    Building,
    /// Served.
    Fresh,
    /// Out of date; a rebuild is scheduled, or events are settling.
    Stale,
    /// Not indexed: the root is not watched (the reason says why).
    Unavailable(String),
}

#[derive(Clone, Debug)]
pub struct RootIndexStatus {
    pub root: PathBuf,
    pub state: IndexState,
    /// The last completed build.
    pub last_build: Option<BuildInfo>,
    /// Full builds completed (walks of the whole root), the first one included.
    pub builds: u64,
    /// Changes to the file set applied without a full build (incremental updates).
    pub updates: u64,
    /// Files held now (the last build, updated in place since).
    pub files: usize,
}

/// The live index over the current roots. Feed it every [`WatchEvent`] with
/// [`FileIndex::apply`]; ask it with [`FileIndex::snapshot`].
pub struct FileIndex {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

impl Default for FileIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl FileIndex {
    /// An empty index with its worker thread (idle until roots are set and watched).
    pub fn new() -> FileIndex {
        FileIndex::with_max_files(DEFAULT_MAX_FILES)
    }

    /// An index whose roots hold at most `max_files` files each; a bigger root is reported
    /// `Unavailable` and searched by walking.
    pub(crate) fn with_max_files(max_files: usize) -> FileIndex {
        FileIndex::with_clock(max_files, crate::clock::system())
    }

    /// Like [`FileIndex::with_max_files`], its pacing (rebuild delays, our own writes'
    /// overdue events) reading the time from `clock`.
    pub(crate) fn with_clock(max_files: usize, clock: Arc<dyn Clock>) -> FileIndex {
        FileIndex::start(max_files, clock, None)
    }

    /// Like [`FileIndex::with_max_files`], storing each root's file list in `store` after a
    /// whole walk and starting from it at a restart (`index::resume`).
    pub(crate) fn with_store(
        max_files: usize,
        store: Option<Arc<crate::store::Store>>,
    ) -> FileIndex {
        FileIndex::start(max_files, crate::clock::system(), store)
    }

    fn start(
        max_files: usize,
        clock: Arc<dyn Clock>,
        store: Option<Arc<crate::store::Store>>,
    ) -> FileIndex {
        let shared = Arc::new(Shared {
            max_files,
            store,
            state: Mutex::new(State {
                slots: Vec::new(),
                watch: Vec::new(),
                stop: false,
                bursting: false,
            }),
            wake: Condvar::new(),
            barrier: Mutex::new(None),
            rounds: std::sync::atomic::AtomicU64::new(0),
            clock,
        });
        let for_worker = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("rootgrep-index".into())
            .spawn(move || worker_loop(&for_worker))
            .expect("spawning the index thread");
        FileIndex {
            shared,
            worker: Some(worker),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.shared.state)
    }

    /// Sets the roots to index (canonical directories; files and missing paths are
    /// skipped). Roots kept keep their index; a root is built once it is watched.
    pub fn set_roots(&self, roots: &[PathBuf]) {
        // The filesystem is asked before the lock is taken: searches wait on that lock.
        let dirs: Vec<&PathBuf> = roots.iter().filter(|root| root.is_dir()).collect();
        let mut state = self.lock();
        state.slots.retain(|slot| {
            let keep = roots.contains(&slot.root);
            if !keep {
                slot.cancel();
            }
            keep
        });
        let now = self.shared.clock.now();
        for root in dirs {
            if state.slots.iter().any(|s| &s.root == root) {
                continue;
            }
            let mut slot = Slot::new(root.clone());
            if state.watch_of(root) == Watch::Watching {
                slot.phase.schedule(now, true);
            }
            state.slots.push(slot);
        }
        state.watch.retain(|(root, _)| roots.contains(root));
        drop(state);
        self.shared.wake.notify_all();
    }

    /// The watcher feeding this index: snapshots wait for its barrier from now on.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn set_barrier(&self, barrier: Barrier) {
        *lock(&self.shared.barrier) = Some(barrier);
    }

    /// Whether a fresh snapshot is proven to include every change made before it was asked
    /// for: a watcher barrier is installed (Linux). Without one (macOS, Windows, unit
    /// tests) a change made a moment before may not have been reported yet, so whoever
    /// keeps data derived from file contents checks the file on disk before trusting it.
    pub(crate) fn proves_freshness(&self) -> bool {
        lock(&self.shared.barrier).is_some()
    }

    /// Whether every event queued before this call has been applied, known within
    /// `timeout` (see [`SYNC_WAIT`]).
    fn synced(&self, timeout: Duration) -> bool {
        let barrier = lock(&self.shared.barrier).clone();
        barrier.is_none_or(|barrier| barrier.sync(timeout))
    }

    /// A fresh index picked by `pick`, once the barrier says no event queued before the
    /// call is still unapplied. Asked first without the barrier: a root that is not fresh
    /// anyway costs no round.
    fn fresh_synced(
        &self,
        pick: impl Fn(&State) -> Option<Arc<RootIndex>>,
    ) -> Option<Arc<RootIndex>> {
        pick(&self.lock())?;
        // Outside the lock: the watcher's handler takes it to apply what the round flushes.
        if !self.synced(SYNC_WAIT) {
            return None;
        }
        pick(&self.lock())
    }

    /// The fresh index of `root` (exactly as set), or `None` when it could be out of date.
    pub fn snapshot(&self, root: &Path) -> Option<Arc<RootIndex>> {
        self.fresh_synced(|state| {
            let slot = state.slots.iter().find(|s| s.root == root)?;
            slot.fresh().cloned()
        })
    }

    /// The fresh index of a root containing `dir`, if there is one.
    pub fn snapshot_for(&self, dir: &Path) -> Option<Arc<RootIndex>> {
        self.fresh_synced(|state| fresh_for(state, dir))
    }

    /// Whether a fresh index holds `dir` as far as the events applied so far go, asked
    /// without a round of the barrier: for choices a stale view cannot make wrong (which
    /// pool lane a request takes), never for answers ([`FileIndex::snapshot_for`]).
    pub fn looks_fresh_for(&self, dir: &Path) -> bool {
        fresh_for(&self.lock(), dir).is_some()
    }

    /// Waits for `root`'s index to be fresh while `go_on` holds (what an index built beside
    /// this one reads): `Err(later)`, with `later` true when the root has no file index
    /// (try again in a while) and false when `go_on` stopped holding.
    pub(crate) fn wait_fresh_while(
        &self,
        root: &Path,
        go_on: impl Fn() -> bool,
    ) -> Result<Arc<RootIndex>, bool> {
        loop {
            if !go_on() {
                return Err(false);
            }
            if let Some(files) = self.wait_fresh(root, Duration::from_millis(200)) {
                return Ok(files);
            }
            let unavailable = (self.status().iter())
                .any(|s| s.root == root && matches!(s.state, IndexState::Unavailable(_)));
            if unavailable {
                return Err(true);
            }
        }
    }

    /// Waits up to `timeout` for `root`'s index to be fresh (tests, benchmarks, and callers
    /// that would rather wait briefly than walk).
    pub fn wait_fresh(&self, root: &Path, timeout: Duration) -> Option<Arc<RootIndex>> {
        let deadline = Instant::now() + timeout;
        let pick = |state: &State| {
            state
                .slots
                .iter()
                .find(|s| s.root == root)
                .and_then(|s| s.fresh().cloned())
        };
        let mut state = self.lock();
        loop {
            if pick(&state).is_some() {
                // Fresh as far as the events applied go: bring in those queued before
                // now (outside the lock, which applying them takes), then look again.
                drop(state);
                let left = deadline.saturating_duration_since(Instant::now());
                if !self.synced(left) {
                    return None;
                }
                state = self.lock();
                if let Some(index) = pick(&state) {
                    return Some(index);
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            state = self
                .shared
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The server itself just changed `path` (wrote, edited, created, moved): until the
    /// watcher reports it, the root containing it is not served, so the next request
    /// never answers from before the change.
    pub fn expect_change(&self, path: &Path) {
        let now = self.shared.clock.now();
        let mut state = self.lock();
        for slot in &mut state.slots {
            if path.starts_with(&slot.root) {
                slot.expected.push((path.to_path_buf(), now));
            }
        }
        drop(state);
        self.shared.wake.notify_all();
    }

    /// Every root's state, in the order set.
    pub fn status(&self) -> Vec<RootIndexStatus> {
        let state = self.lock();
        state
            .slots
            .iter()
            .map(|slot| {
                let index_state = match state.watch_of(&slot.root) {
                    _ if slot.too_many.is_some() => IndexState::Unavailable(format!(
                        "more than {} files; searches walk the disk",
                        slot.too_many.unwrap_or_default()
                    )),
                    _ if slot.displaced.is_some() => IndexState::Unavailable(format!(
                        "{}; not indexed until it is a directory again",
                        slot.displaced.unwrap_or(Displaced::Missing)
                    )),
                    Watch::Failed(reason) => IndexState::Unavailable(reason),
                    Watch::Unknown => IndexState::Waiting,
                    Watch::Watching if slot.fresh().is_some() => IndexState::Fresh,
                    Watch::Watching if slot.building() || slot.current.is_none() => {
                        IndexState::Building
                    }
                    Watch::Watching => IndexState::Stale,
                };
                RootIndexStatus {
                    root: slot.root.clone(),
                    state: index_state,
                    last_build: slot.last_build.clone(),
                    builds: slot.builds,
                    updates: slot.updates,
                    files: slot.current.as_ref().map_or(0, |index| index.len()),
                }
            })
            .collect()
    }

    /// Whether settling an event at `path` reads its `lstat`: only for a path that a
    /// root's index holds as a file or as an ignored entry.
    fn needs_stat(&self, path: &Path) -> bool {
        let state = self.lock();
        state.slots.iter().any(|slot| {
            let (Some(index), Ok(rel)) = (&slot.current, path.strip_prefix(&slot.root)) else {
                return false;
            };
            index.find_file(rel).is_some()
                || index.find_ignored(rel.as_os_str().as_bytes()).is_some()
        })
    }

    /// Applies one watcher event (call it from the watcher's handler; it is quick: an
    /// `lstat`, then a few binary searches under the lock).
    pub fn apply(&self, event: &WatchEvent) {
        // Read the disk before taking the lock: every search and `list_roots` waits on it,
        // and an `lstat` can be slow (network filesystems, a loaded disk). Only when the
        // path is one the index holds, though: most events (a build writing its ignored
        // output, `.git` churn) are settled by a few binary searches without it.
        let meta = match event {
            WatchEvent::Changed(path) | WatchEvent::Created(path) if self.needs_stat(path) => {
                std::fs::symlink_metadata(path).ok()
            }
            _ => None,
        };
        let now = self.shared.clock.now();
        let mut state = self.lock();
        // Whether the worker or a waiter for freshness has something new to look at. A
        // burst of creations brings two events per file; waking the worker thread for
        // each (to find nothing due) cost more than applying them.
        let wake = match event {
            WatchEvent::Status(root, status) => events::status(&mut state, root, status, now),
            WatchEvent::Overflow | WatchEvent::Error(_) => events::lost(&mut state, now),
            WatchEvent::Quiet => events::quiet(&mut state),
            WatchEvent::Pending(path) => events::pending(&mut state, path),
            WatchEvent::Changed(path) | WatchEvent::Created(path) | WatchEvent::Removed(path) => {
                events::settled(&mut state, event, path, meta.as_ref(), now)
            }
        };
        drop(state);
        if wake {
            self.shared.wake.notify_all();
        }
    }
}

/// The fresh index of a root containing `dir`, as far as the events applied so far go.
fn fresh_for(state: &State, dir: &Path) -> Option<Arc<RootIndex>> {
    state
        .slots
        .iter()
        .filter(|s| dir.starts_with(&s.root))
        .find_map(|s| s.fresh().cloned())
}

impl Drop for FileIndex {
    fn drop(&mut self) {
        {
            let mut state = self.lock();
            state.stop = true;
            for slot in &state.slots {
                slot.cancel();
            }
        }
        self.shared.wake.notify_all();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

#[cfg(all(test, unix))]
pub(crate) mod tests {
    use super::state::{EXPECT_WAIT, REBUILD_DELAY};
    use super::*;
    use crate::watch::RootStatus;
    use std::fs;

    pub(super) const DEADLINE: Duration = Duration::from_secs(5);

    pub(crate) struct Fixture {
        _dir: tempfile::TempDir,
        pub(crate) root: PathBuf,
    }

    impl Fixture {
        pub(crate) fn new() -> Fixture {
            let dir = tempfile::Builder::new()
                .prefix("rootgrep-index")
                .tempdir()
                .unwrap();
            let root = dir.path().canonicalize().unwrap();
            let f = Fixture { _dir: dir, root };
            f.write(".git/HEAD", "x");
            f.write(".gitignore", "build/\n*.log\n");
            f.write("a.b", "");
            f.write("a/b", "");
            f.write("a/c/d.rs", "12345");
            f.write("build/out.rs", "");
            f.write("app.log", "");
            f.write(".env", "");
            fs::create_dir_all(f.root.join("empty")).unwrap();
            std::os::unix::fs::symlink("a.b", f.root.join("link")).unwrap();
            f
        }

        pub(super) fn write(&self, rel: &str, text: &str) -> PathBuf {
            let path = self.root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
            path
        }

        fn live(&self) -> FileIndex {
            self.live_on(crate::clock::system())
        }

        /// A built index over the fixture whose pacing reads `clock`.
        fn live_on(&self, clock: Arc<dyn crate::clock::Clock>) -> FileIndex {
            let index = FileIndex::with_clock(DEFAULT_MAX_FILES, clock);
            index.set_roots(std::slice::from_ref(&self.root));
            index.apply(&WatchEvent::Status(self.root.clone(), RootStatus::Watching));
            assert!(index.wait_fresh(&self.root, DEADLINE).is_some());
            index
        }
    }

    /// A burst of creations (two events per file) is applied without waking the worker
    /// thread for each event: it wakes when a job gets due or the burst settles, so its
    /// rounds stay far below the number of events (it woke for every one, to find
    /// nothing due, which cost more than applying them).
    #[test]
    fn a_burst_of_events_does_not_wake_the_worker_per_event() {
        let f = Fixture::new();
        let index = f.live();
        let before = index
            .shared
            .rounds
            .load(std::sync::atomic::Ordering::Relaxed);
        let files = 2_000;
        for n in 0..files {
            let path = f.write(&format!("a/new{n}.rs"), "x");
            index.apply(&WatchEvent::Pending(path.clone()));
            index.apply(&WatchEvent::Created(path));
            if n % 100 == 0 {
                // Give a woken worker the core, as the watcher's pace would.
                std::thread::yield_now();
            }
        }
        index.apply(&WatchEvent::Quiet);
        let fresh = index.wait_fresh(&f.root, DEADLINE).expect("applied");
        assert!(fresh.find_file(Path::new("a/new1999.rs")).is_some());
        let rounds = index
            .shared
            .rounds
            .load(std::sync::atomic::Ordering::Relaxed)
            - before;
        assert!(
            rounds <= 50,
            "the worker looked for work {rounds} times for {files} files"
        );
    }

    /// A change made just before the request, whose event the watcher has not read yet
    /// (a loaded machine, here a slow reader): the snapshot waits for the barrier, which
    /// brings in its `Pending`, so the root is not served stale; it is served again once
    /// the change is applied.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_change_still_queued_in_the_kernel_is_never_answered_stale() {
        let f = Fixture::new();
        let index = Arc::new(FileIndex::new());
        let fed = Arc::clone(&index);
        let watcher = crate::watch::Watcher::with_read_delay(
            move |event| fed.apply(&event),
            Duration::from_millis(50),
        );
        index.set_barrier(watcher.barrier());
        index.set_roots(std::slice::from_ref(&f.root));
        watcher.set_roots(std::slice::from_ref(&f.root));
        assert!(index.wait_fresh(&f.root, DEADLINE * 2).is_some());
        f.write("a/queued.rs", "x");
        // Without the barrier this snapshot was the old index, without `a/queued.rs`.
        match index.snapshot(&f.root) {
            None => {}
            Some(stale) => panic!(
                "served before its event was applied: has queued.rs: {}",
                stale.find_file(Path::new("a/queued.rs")).is_some()
            ),
        }
        let fresh = index.wait_fresh(&f.root, DEADLINE * 2).expect("applied");
        assert!(fresh.find_file(Path::new("a/queued.rs")).is_some());
        assert!(index.snapshot(&f.root).is_some(), "an idle round succeeds");
    }

    /// The build is background work: while a search runs it waits (here the search is
    /// held for longer than an unhindered build of the fixture takes), then lands.
    #[test]
    fn a_build_waits_while_a_search_runs() {
        let f = Fixture::new();
        let running = crate::pool::pacing::SearchRunning::start();
        let index = FileIndex::new();
        index.set_roots(std::slice::from_ref(&f.root));
        index.apply(&WatchEvent::Status(f.root.clone(), RootStatus::Watching));
        assert!(
            index
                .wait_fresh(&f.root, Duration::from_millis(300))
                .is_none(),
            "built beside a running search"
        );
        drop(running);
        assert!(index.wait_fresh(&f.root, DEADLINE).is_some());
    }

    /// The lane check sees what a snapshot would serve, without a round of the barrier: a
    /// fresh root and what lies under it; not a directory outside every root, nor a root
    /// with an event still settling.
    #[test]
    fn looks_fresh_for_sees_what_a_snapshot_would_serve() {
        let f = Fixture::new();
        let clock = crate::clock::ManualClock::new();
        let index = f.live_on(Arc::clone(&clock) as Arc<dyn crate::clock::Clock>);
        assert!(index.looks_fresh_for(&f.root));
        assert!(index.looks_fresh_for(&f.root.join("a")));
        assert!(!index.looks_fresh_for(Path::new("/elsewhere")));
        index.apply(&WatchEvent::Pending(f.root.join("a/new.rs")));
        assert!(!index.looks_fresh_for(&f.root));
        assert!(!index.looks_fresh_for(&f.root.join("a")));
    }

    /// A rebuild waits while other events are still settling (a burst of creations is
    /// one rebuild at its end, not one every few hundred milliseconds), at most
    /// `REBUILD_DEFER` past its due time. On simulated time: the builder's decision is
    /// asked at the moments that matter.
    #[test]
    fn a_rebuild_waits_for_the_burst_to_settle() {
        let f = Fixture::new();
        let clock = crate::clock::ManualClock::new();
        let index = f.live_on(Arc::clone(&clock) as Arc<dyn crate::clock::Clock>);
        let due_now = |index: &FileIndex| {
            let mut state = index.lock();
            worker::due_slot(&mut state, crate::clock::Clock::now(&*clock)).is_ok()
        };
        let before = index.status()[0].last_build.clone().unwrap().files;
        // Events in a directory the index does not hold yet do not matter to it, but a
        // build landing mid-burst would be out of date all the same.
        let other = f.root.join("gen/d0/other.rs");
        index.apply(&WatchEvent::Pending(other.clone()));
        let new = f.write("a/new.rs", "");
        index.apply(&WatchEvent::Pending(new.clone()));
        index.apply(&WatchEvent::Created(new.clone()));
        clock.advance(REBUILD_DELAY * 2);
        assert!(!due_now(&index), "due while events are settling");
        assert_eq!(
            index.status()[0].last_build.clone().unwrap().files,
            before,
            "rebuilt while events were settling"
        );
        clock.advance(state::REBUILD_DEFER - REBUILD_DELAY);
        assert!(
            due_now(&index),
            "due at last, {:?} past its time",
            state::REBUILD_DEFER
        );
        index.apply(&WatchEvent::Removed(other));
        index.apply(&WatchEvent::Quiet);
        let fresh = index.wait_fresh(&f.root, DEADLINE).unwrap();
        assert!(fresh.find_file(Path::new("a/new.rs")).is_some());
    }

    #[test]
    fn content_changes_are_applied_in_place() {
        let f = Fixture::new();
        let index = f.live();
        let before = index.snapshot(&f.root).unwrap();
        let path = f.write("a/c/d.rs", "longer content now");
        index.apply(&WatchEvent::Pending(path.clone()));
        assert!(
            index.snapshot(&f.root).is_none(),
            "not served while settling"
        );
        index.apply(&WatchEvent::Changed(path));
        let after = index
            .snapshot(&f.root)
            .expect("a content change keeps it fresh");
        assert!(Arc::ptr_eq(&before, &after), "same build, updated in place");
        assert_eq!(after.file(1).size, 18);
    }

    #[test]
    fn our_own_write_is_never_answered_from_before_it() {
        let f = Fixture::new();
        let index = f.live();
        // Written by the server; the watcher has not delivered its event yet (backlog).
        let path = f.write("a/new.rs", "x");
        index.expect_change(&path);
        assert!(
            index.snapshot(&f.root).is_none(),
            "not served before its event"
        );
        index.apply(&WatchEvent::Quiet);
        assert!(
            index.snapshot(&f.root).is_none(),
            "an earlier burst settling is not this write's event"
        );
        index.apply(&WatchEvent::Pending(path.clone()));
        index.apply(&WatchEvent::Created(path.clone()));
        let fresh = index.wait_fresh(&f.root, DEADLINE).expect("rebuilt");
        assert!(fresh.find_file(Path::new("a/new.rs")).is_some());

        // An event that never comes (lost) does not keep the root unserved for good: it
        // is rebuilt, and the rebuild holds the write.
        let lost = f.write("a/lost.rs", "x");
        index.expect_change(&lost);
        assert!(index.snapshot(&f.root).is_none());
        let fresh = index
            .wait_fresh(&f.root, EXPECT_WAIT + DEADLINE)
            .expect("rebuilt after the wait");
        assert!(fresh.find_file(Path::new("a/lost.rs")).is_some());
    }

    #[test]
    fn events_that_cannot_matter_keep_it_fresh() {
        let f = Fixture::new();
        let index = f.live();
        for rel in [
            "build/new.rs",
            ".git/objects/ab",
            ".hidden",
            "x.log.swp/../app.log",
        ] {
            let path = f.root.join(rel);
            index.apply(&WatchEvent::Pending(path.clone()));
            index.apply(&WatchEvent::Created(path.clone()));
            index.apply(&WatchEvent::Removed(path));
        }
        // `app.log` is an ignored file that still exists: its re-creation changes nothing.
        f.write("app.log", "again");
        let log = f.root.join("app.log");
        index.apply(&WatchEvent::Created(log.clone()));
        index.apply(&WatchEvent::Changed(log));
        assert!(index.snapshot(&f.root).is_some(), "{:?}", index.status());
        assert_eq!(index.status()[0].state, IndexState::Fresh);
    }

    /// Creations and removals are applied by listing their directory again, not by
    /// walking the root; ignore rules changing still rebuild; events inside an ignored
    /// directory change nothing at all.
    #[test]
    fn creations_and_removals_are_updates_not_rebuilds() {
        let f = Fixture::new();
        let index = f.live();
        let counts = |index: &FileIndex| {
            let status = &index.status()[0];
            (status.builds, status.updates)
        };
        assert_eq!(counts(&index), (1, 0));
        let new = f.write("a/c/new.rs", "");
        index.apply(&WatchEvent::Created(new.clone()));
        assert!(
            index.snapshot(&f.root).is_none(),
            "update pending: not served"
        );
        let updated = index.wait_fresh(&f.root, DEADLINE).unwrap();
        assert!(updated.find_file(Path::new("a/c/new.rs")).is_some());
        assert_eq!(counts(&index), (1, 1));

        fs::remove_file(&new).unwrap();
        index.apply(&WatchEvent::Removed(new));
        let updated = index.wait_fresh(&f.root, DEADLINE).unwrap();
        assert!(updated.find_file(Path::new("a/c/new.rs")).is_none());
        assert_eq!(counts(&index), (1, 2));

        for n in 0..100 {
            let out = f.write(&format!("build/gen/o{n}.o"), "");
            index.apply(&WatchEvent::Pending(out.clone()));
            index.apply(&WatchEvent::Created(out));
        }
        assert!(index.snapshot(&f.root).is_some(), "{:?}", index.status());
        assert_eq!(counts(&index), (1, 2));

        f.write(".gitignore", "build/\n");
        index.apply(&WatchEvent::Changed(f.root.join(".gitignore")));
        assert!(index.wait_fresh(&f.root, DEADLINE).is_some());
        assert_eq!(counts(&index).0, 2, "ignore rules changed: rebuilt");
    }

    #[test]
    fn structural_changes_rebuild_and_failures_disable() {
        let f = Fixture::new();
        let index = f.live();
        let new = f.write("a/new.rs", "");
        index.apply(&WatchEvent::Created(new));
        assert!(index.snapshot(&f.root).is_none());
        let rebuilt = index.wait_fresh(&f.root, DEADLINE).unwrap();
        assert!(rebuilt.find_file(Path::new("a/new.rs")).is_some());

        f.write(".gitignore", "build/\n");
        index.apply(&WatchEvent::Changed(f.root.join(".gitignore")));
        let rebuilt = index.wait_fresh(&f.root, DEADLINE).unwrap();
        assert!(
            rebuilt.find_file(Path::new("app.log")).is_some(),
            "ignore rules re-read"
        );

        index.apply(&WatchEvent::Overflow);
        assert!(
            index.snapshot(&f.root).is_none(),
            "overflow: anything may have changed"
        );
        assert!(index.wait_fresh(&f.root, DEADLINE).is_some());

        index.apply(&WatchEvent::Status(
            f.root.clone(),
            RootStatus::Failed("limit".into()),
        ));
        assert!(index.snapshot(&f.root).is_none());
        assert_eq!(
            index.status()[0].state,
            IndexState::Unavailable("limit".into())
        );
        assert!(
            index
                .wait_fresh(&f.root, Duration::from_millis(300))
                .is_none()
        );
    }

    #[test]
    fn roots_are_only_built_once_watched() {
        let f = Fixture::new();
        let index = FileIndex::new();
        index.set_roots(std::slice::from_ref(&f.root));
        assert!(
            index
                .wait_fresh(&f.root, Duration::from_millis(300))
                .is_none()
        );
        assert_eq!(index.status()[0].state, IndexState::Waiting);
        // The watcher may report before the root is set; the status is remembered.
        let other = FileIndex::new();
        other.apply(&WatchEvent::Status(f.root.clone(), RootStatus::Watching));
        other.set_roots(std::slice::from_ref(&f.root));
        assert!(other.wait_fresh(&f.root, DEADLINE).is_some());
        other.set_roots(&[]);
        assert!(other.status().is_empty());
    }

    #[test]
    fn a_root_swapped_for_a_symlink_is_never_built_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("app");
        let other = base.join("other");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&other).unwrap();
        fs::write(root.join("mine.txt"), "").unwrap();
        fs::write(other.join("secret.txt"), "").unwrap();
        let index = FileIndex::new();
        index.set_roots(std::slice::from_ref(&root));
        index.apply(&WatchEvent::Status(root.clone(), RootStatus::Watching));
        assert!(index.wait_fresh(&root, DEADLINE).is_some());

        fs::rename(&root, base.join("app.moved")).unwrap();
        std::os::unix::fs::symlink(&other, &root).unwrap();
        // What a watcher that watched the path again (through the link) would report.
        index.apply(&WatchEvent::Status(root.clone(), RootStatus::Watching));
        assert!(
            index
                .wait_fresh(&root, Duration::from_millis(1500))
                .is_none(),
            "built through the symlink"
        );
        let state = index.status()[0].state.clone();
        assert!(
            matches!(&state, IndexState::Unavailable(why) if why.contains("symlink")),
            "{state:?}"
        );

        // A directory again: the builder, looking again, builds it.
        fs::remove_file(&root).unwrap();
        fs::rename(base.join("app.moved"), &root).unwrap();
        let built = index.wait_fresh(&root, DEADLINE).expect("built again");
        assert!(built.find_file(Path::new("mine.txt")).is_some());
    }
}
