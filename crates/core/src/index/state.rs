//! The file index's per-root state (`Slot`: the current build, the work on it as a
//! [`Phase`], what is settling), the state of all roots (`State`), what the index's handle
//! and its builder thread share (`Shared`), and the delays that pace them: below both.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::root::{BuildInfo, RootIndex};
use crate::clock::Clock;
use crate::phase::Phase;
use crate::roots::Displaced;
use crate::walk::Control;
use crate::watch::Barrier;

/// After a structural change, wait this long for more before rebuilding (coalescing).
pub(crate) const REBUILD_DELAY: Duration = Duration::from_millis(200);

/// A rebuild due while events are still settling (a build writing thousands of files, an
/// unpack) waits for them to settle, at most this long past its due time: a build that
/// starts mid-burst is out of date when it lands, so waiting saves whole rebuilds.
pub(crate) const REBUILD_DEFER: Duration = Duration::from_secs(2);

/// Most created/removed paths waiting for one update; past that, the root is rebuilt
/// (about 100 bytes each: a bound on memory, and by then a walk is no dearer).
pub(crate) const CHANGED_MAX: usize = 100_000;

/// How long a write by the server waits for its watch event before the root is rebuilt.
pub(crate) const EXPECT_WAIT: Duration = Duration::from_secs(2);

/// How long a snapshot waits for the watcher's barrier before giving up (the caller walks,
/// which is what a loaded or flooded watcher warrants). An idle round takes microseconds.
pub(crate) const SYNC_WAIT: Duration = Duration::from_millis(200);

/// How often the builder looks again at a root whose path is not the root now.
pub(crate) const DISPLACED_RETRY: Duration = Duration::from_secs(1);

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Watch {
    Unknown,
    Watching,
    Failed(String),
}

/// The running job's handle: what cancels it, and the content changes seen meanwhile
/// (the job may have read a file before or after its change, so they are applied to its
/// result before it is served).
pub(super) struct Handle {
    pub(super) control: Arc<Control>,
    pub(super) restat: Vec<PathBuf>,
}

pub(super) struct Slot {
    pub(super) root: PathBuf,
    /// The last build landed, kept while a job runs (events settle against it, an update
    /// starts from it); it matches the disk only while `phase` is idle.
    pub(super) current: Option<Arc<RootIndex>>,
    /// The work on this root: a job due (a whole walk, or an update of `current` with
    /// `changed`), or running.
    pub(super) phase: Phase<Handle>,
    /// Created or removed paths (relative) not yet applied: the next update lists their
    /// directories again (see [`update::update`]); moot when the next job walks the whole
    /// root (no index yet, ignore rules changed, events lost, too many changes to list).
    pub(super) changed: Vec<Vec<u8>>,
    /// Paths with an event burst under way (from `Pending` to its settled event).
    /// A set: a burst of creations has thousands in flight, each looked up twice.
    pub(super) settling: HashSet<PathBuf>,
    /// Paths the server itself changed, whose watch event has not arrived yet, with when.
    pub(super) expected: Vec<(PathBuf, Instant)>,
    pub(super) last_build: Option<BuildInfo>,
    /// The tree holds more files than the index may (the limit): never indexed; searches
    /// walk the disk.
    pub(super) too_many: Option<usize>,
    /// Full builds landed, and changes applied without one (for `list_roots`).
    pub(super) builds: u64,
    pub(super) updates: u64,
    /// The root's path is not the root now (a symlink, or under one: see
    /// [`crate::roots::in_place`]): nothing is indexed, and the worker looks again every
    /// [`DISPLACED_RETRY`].
    pub(super) displaced: Option<Displaced>,
}

impl Slot {
    pub(super) fn new(root: PathBuf) -> Slot {
        Slot {
            root,
            current: None,
            phase: Phase::Idle,
            changed: Vec::new(),
            settling: HashSet::new(),
            expected: Vec::new(),
            last_build: None,
            too_many: None,
            builds: 0,
            updates: 0,
            displaced: None,
        }
    }

    /// A full rebuild is needed. The first change of a burst fixes the time; later ones
    /// ride along (a change after the build starts is due after it lands).
    pub(super) fn schedule(&mut self, now: Instant) {
        self.changed = Vec::new();
        self.phase.schedule(now + REBUILD_DELAY, true);
    }

    /// A full rebuild, due at `at` whatever was due before.
    pub(super) fn rebuild_at(&mut self, at: Instant) {
        self.changed = Vec::new();
        self.phase.reschedule(at, true);
    }

    /// `rel` was created or removed: an update lists its directory again (unless a
    /// rebuild is due anyway, or so many changes piled up that it is cheaper).
    pub(super) fn record(&mut self, rel: &[u8], now: Instant) {
        if !self.phase.next_full(self.current.is_some()) {
            if self.changed.len() >= CHANGED_MAX {
                self.schedule(now);
                return;
            }
            self.changed.push(rel.to_vec());
        }
        self.phase.schedule(now + REBUILD_DELAY, false);
    }

    /// Whether a build or an update is running.
    pub(super) fn building(&self) -> bool {
        self.phase.job().is_some()
    }

    /// The root is no longer watched: nothing is served or built, and a running job is
    /// cancelled (what it read may miss changes nobody reports).
    pub(super) fn unwatch(&mut self) {
        self.current = None;
        self.changed = Vec::new();
        if let Some(job) = self.phase.stop() {
            job.control.cancel();
        }
    }

    /// Cancels the running job, if any (the root is removed, or the index dropped).
    pub(super) fn cancel(&self) {
        if let Some(job) = self.phase.job() {
            job.control.cancel();
        }
    }

    pub(super) fn fresh(&self) -> Option<&Arc<RootIndex>> {
        match (
            &self.current,
            self.phase.is_idle(),
            self.settling.is_empty(),
        ) {
            (Some(index), true, true) if self.expected.is_empty() => Some(index),
            _ => None,
        }
    }

    /// Our own writes whose event is overdue: rebuild instead of waiting longer.
    pub(super) fn expire(&mut self, now: Instant) {
        if self
            .expected
            .iter()
            .any(|(_, at)| now.duration_since(*at) >= EXPECT_WAIT)
        {
            self.expected.clear();
            self.schedule(now);
        }
    }
}

pub(super) struct State {
    pub(super) slots: Vec<Slot>,
    /// Watch state per root as last reported (kept even for roots not set yet, since the
    /// watcher may report before the index learns of the root).
    pub(super) watch: Vec<(PathBuf, Watch)>,
    pub(super) stop: bool,
    /// The watcher has bursts of events in flight (from a `Pending` anywhere to `Quiet`),
    /// whether or not they matter to the index: a rebuild would likely be out of date.
    pub(super) bursting: bool,
}

impl State {
    pub(super) fn watch_of(&self, root: &Path) -> Watch {
        self.watch
            .iter()
            .find(|(r, _)| r == root)
            .map_or(Watch::Unknown, |(_, w)| w.clone())
    }
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    /// Most files one root's index may hold.
    pub(super) max_files: usize,
    /// Wakes the worker thread (work scheduled, or stop) and waiters for freshness.
    pub(super) wake: Condvar,
    /// The watcher's barrier, once one feeds this index (without one, as in unit tests
    /// that apply events by hand, the events applied so far are all there is).
    pub(super) barrier: Mutex<Option<Barrier>>,
    /// Times the worker thread looked for work (tests: it must not wake per event).
    pub(super) rounds: std::sync::atomic::AtomicU64,
    /// Where the pacing reads the time (simulated in tests).
    pub(super) clock: Arc<dyn Clock>,
    /// Where each root's file list is stored after a whole walk, and resumed from at a
    /// restart (`None`: `--no-cache`, or no store in this use).
    pub(super) store: Option<Arc<crate::store::Store>>,
}
