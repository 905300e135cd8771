//! What the two background indexes built beside the file index (the symbol index and the
//! search index) share: per root, the bookkeeping of its work ([`Work`]: the [`Phase`],
//! the paths events marked, progress, the restart and store notes), and for all roots the
//! slots a worker thread takes jobs from ([`Slots`]: the roots set, the wake-up, stopping).
//!
//! What differs stays with each index: what a slot holds besides its [`Work`] (a table and
//! an overlay, or a base and an update segment), how a dirty path is keyed (absolute, or
//! relative bytes), what a job does and how its outcome lands, and which events ask for a
//! whole redo.

use std::collections::HashSet;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::mutex::lock;
use crate::phase::Phase;
use crate::store::publish::{Stored, Stores};
use crate::store::{Kind, Store};

/// How long the worker sleeps at most between looks for due work (a due time passing
/// wakes nobody).
const POLL: Duration = Duration::from_millis(500);

/// The running job's handle: what cancels it, and the marked paths it took (still marked
/// for queries until it lands; marked again if it gives up).
pub(crate) struct Handle<D> {
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) in_flight: HashSet<D>,
}

/// One root's background work, the same for both indexes; `D` keys a marked path.
pub(crate) struct Work<D> {
    pub(crate) root: PathBuf,
    /// A full redo or a patch from the marked paths, due or running.
    pub(crate) phase: Phase<Handle<D>>,
    /// Paths events marked changed since they were last indexed.
    pub(crate) dirty: HashSet<D>,
    /// Watched by the watcher (no watch, no index).
    pub(crate) watched: bool,
    /// The running (or last) job's progress, for `status`: `total` is `usize::MAX` until
    /// the job has read the file list.
    pub(crate) done: Arc<AtomicUsize>,
    pub(crate) total: Arc<AtomicUsize>,
    /// A stored copy is being loaded and checked (a restart): a query waits for it a
    /// little. Cleared when the root's job lands.
    pub(crate) restoring: bool,
    /// How the root's index stands in the store, for `status` (set by the worker).
    pub(crate) store_note: Option<String>,
    /// How long the last full build took.
    pub(crate) last_build: Option<Duration>,
    /// Files indexed again since the last full build.
    pub(crate) updates: u64,
}

/// What starting a job takes from its root: the marked paths (a copy stays in flight for
/// queries), what cancels it, and whether it is a full redo.
pub(crate) struct Started<D> {
    pub(crate) dirty: HashSet<D>,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) full: bool,
}

impl<D: Clone + Eq + Hash> Work<D> {
    /// A root just set: nothing built yet, so its first job (due now) is a full one.
    pub(crate) fn new(root: PathBuf, now: Instant) -> Work<D> {
        let mut phase = Phase::Idle;
        phase.schedule(now, true);
        Work {
            root,
            phase,
            dirty: HashSet::new(),
            watched: false,
            done: Arc::default(),
            total: Arc::default(),
            restoring: false,
            store_note: None,
            last_build: None,
            updates: 0,
        }
    }

    /// `path` changed: the next job (not before `at`) indexes it again.
    pub(crate) fn mark_dirty(&mut self, path: D, at: Instant) {
        self.dirty.insert(path);
        self.phase.schedule(at, false);
    }

    /// Paths a job took and did not index: marked again, for the next job.
    pub(crate) fn give_back(&mut self, paths: HashSet<D>, now: Instant) {
        if !paths.is_empty() {
            self.dirty.extend(paths);
            self.phase.schedule(now, false);
        }
    }

    /// A job may start now.
    pub(crate) fn has_work(&self, now: Instant) -> bool {
        self.watched && self.phase.startable(now)
    }

    /// Whether a job runs.
    pub(crate) fn running(&self) -> bool {
        self.phase.job().is_some()
    }

    /// The marked paths the running job took.
    pub(crate) fn in_flight(&self) -> Option<&HashSet<D>> {
        self.phase.job().map(|job| &job.in_flight)
    }

    /// Cancels the running job, if any (the root is removed, or the index dropped).
    pub(crate) fn cancel(&self) {
        if let Some(job) = self.phase.job() {
            job.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Starts the due job: progress reset, the marked paths taken. `landed`: a result is
    /// there to patch (without one the job is a full redo whatever was asked).
    pub(crate) fn start(&mut self, landed: bool) -> Started<D> {
        // Unknown until the file list is read (see `status`).
        self.total.store(usize::MAX, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        let cancel = Arc::<AtomicBool>::default();
        let dirty = std::mem::take(&mut self.dirty);
        let handle = Handle {
            cancel: cancel.clone(),
            in_flight: dirty.clone(),
        };
        let full = self.phase.start(handle, landed);
        Started {
            dirty,
            cancel,
            full,
        }
    }

    /// The job landed: what got due meanwhile is due now. Returns the paths it took (none
    /// when the root was set again meanwhile: a new slot), for the index to give back when
    /// the job did not index them.
    pub(crate) fn land(&mut self) -> HashSet<D> {
        self.restoring = false;
        let taken = self.phase.land().map(|handle| handle.in_flight);
        taken.unwrap_or_default()
    }
}

/// A root's slot in one index: its [`Work`], and what the index keeps beside it.
pub(crate) trait Slot: Send + 'static {
    type Dirty: Clone + Eq + Hash;
    fn new(root: PathBuf, now: Instant) -> Self;
    fn work(&self) -> &Work<Self::Dirty>;
    fn work_mut(&mut self) -> &mut Work<Self::Dirty>;
}

/// A new result a job landed, for [`Slots::land`].
pub(crate) struct Landed<T> {
    pub(crate) result: Arc<T>,
    /// Files the job built it from (what a writer waiting on this one is told).
    pub(crate) redone: usize,
    /// Worth storing (not the stored copy the job started from).
    pub(crate) changed: bool,
}

/// The slots of every root, and whether the index is stopping.
pub(crate) struct State<S> {
    pub(crate) slots: Vec<S>,
    pub(crate) stop: bool,
}

/// What an index's handle and its worker thread share about the roots: their slots, the
/// worker's wake-up, and the clock the pacing reads.
pub(crate) struct Slots<S> {
    state: Mutex<State<S>>,
    wake: Condvar,
    pub(crate) clock: Arc<dyn Clock>,
}

impl<S: Slot> Slots<S> {
    pub(crate) fn new(clock: Arc<dyn Clock>) -> Slots<S> {
        Slots {
            state: Mutex::new(State {
                slots: Vec::new(),
                stop: false,
            }),
            wake: Condvar::new(),
            clock,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State<S>> {
        lock(&self.state)
    }

    /// Wakes the worker (and anyone waiting on a slot): something changed.
    pub(crate) fn notify(&self) {
        self.wake.notify_all();
    }

    /// Runs `f` on `root`'s slot; `None` when the root is no longer set.
    pub(crate) fn with_slot<R>(&self, root: &Path, f: impl FnOnce(&mut S) -> R) -> Option<R> {
        let mut state = self.lock();
        let slot = state.slots.iter_mut().find(|s| s.work().root == root)?;
        Some(f(slot))
    }

    /// The roots are now `roots`: a root no longer set loses its slot (its job is
    /// cancelled), a new directory gets one, restoring first when `store` holds a copy of
    /// its `kind`.
    pub(crate) fn set_roots(&self, roots: &[PathBuf], store: Option<&Store>, kind: Kind) {
        // Which roots have a stored copy, read before the lock (a stat per root).
        let stored: Vec<bool> = (roots.iter())
            .map(|root| store.is_some_and(|s| s.has(root, kind)))
            .collect();
        let mut state = self.lock();
        state.slots.retain(|slot| {
            let keep = roots.contains(&slot.work().root);
            if !keep {
                slot.work().cancel();
            }
            keep
        });
        for (root, stored) in roots.iter().zip(stored) {
            if root.is_dir() && !state.slots.iter().any(|s| &s.work().root == root) {
                let mut slot = S::new(root.clone(), self.clock.now());
                slot.work_mut().restoring = stored;
                state.slots.push(slot);
            }
        }
        drop(state);
        self.notify();
    }

    /// The innermost root holding `path`.
    pub(crate) fn root_of(&self, path: &Path) -> Option<PathBuf> {
        let state = self.lock();
        state
            .slots
            .iter()
            .map(|s| &s.work().root)
            .filter(|root| path.starts_with(root))
            .max_by_key(|root| root.as_os_str().len())
            .cloned()
    }

    /// Waits while a root holding one of `targets` is restoring its stored copy, until
    /// `deadline` or `cancelled`.
    pub(crate) fn await_restored(
        &self,
        targets: &[PathBuf],
        deadline: Instant,
        cancelled: impl Fn() -> bool,
    ) {
        let restoring = || {
            let state = self.lock();
            state.slots.iter().any(|s| {
                let work = s.work();
                work.restoring && targets.iter().any(|t| t.starts_with(&work.root))
            })
        };
        while restoring() && !cancelled() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits for a root with work due and hands its slot to `start`; `None` once the
    /// index stops. A root restoring its stored copy goes first: it is ready in a moment,
    /// and queries on it wait for it.
    pub(crate) fn next_job<J>(&self, start: impl Fn(&mut S) -> J) -> Option<J> {
        let mut state = self.lock();
        loop {
            if state.stop {
                return None;
            }
            let now = self.clock.now();
            let due = (state.slots.iter())
                .position(|s| s.work().has_work(now) && s.work().restoring)
                .or_else(|| state.slots.iter().position(|s| s.work().has_work(now)));
            if let Some(at) = due {
                return Some(start(&mut state.slots[at]));
            }
            state = self
                .wake
                .wait_timeout(state, POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Hands a finished job's outcome to `root`'s slot (`land`, when the root is still set)
    /// and wakes everyone waiting on the slots; the store's writers of roots no longer set
    /// are let go. Then, when it landed, stores the job's new result (`new`, see
    /// [`Slots::store_landed`]).
    pub(crate) fn land<T: Stored>(
        &self,
        stores: &mut Stores<T>,
        root: &Path,
        land: impl FnOnce(&mut S),
        new: Option<Landed<T>>,
        held: fn(&mut S) -> &mut Option<Arc<T>>,
    ) {
        let mut state = self.lock();
        stores.retain(|set| state.slots.iter().any(|s| s.work().root == set));
        let landed = state
            .slots
            .iter_mut()
            .find(|s| s.work().root == root)
            .map(land);
        drop(state);
        self.notify();
        if landed.is_some() {
            self.store_landed(stores, root, new, held);
        }
    }

    /// After `root`'s job landed: stores its new result, if any, and once it is saved lets
    /// the slot read the stored copy in place instead (`held` is where the slot keeps its
    /// result: replaced only while it still holds this one), so the heap's copy goes; gives
    /// the job's freed memory back rather than keep the build's peak; and notes how the root
    /// stands in the store.
    fn store_landed<T: Stored>(
        &self,
        stores: &mut Stores<T>,
        root: &Path,
        landed: Option<Landed<T>>,
        held: fn(&mut S) -> &mut Option<Arc<T>>,
    ) {
        if let Some(Landed {
            result,
            redone,
            changed,
        }) = landed
        {
            if changed
                && stores.save(root, &result, redone)
                && let Some(stored) = stores.in_place(root)
            {
                self.with_slot(root, |slot| {
                    let held = held(slot);
                    if held.as_ref().is_some_and(|h| Arc::ptr_eq(h, &result)) {
                        *held = Some(stored);
                    }
                });
            }
            drop(result);
            crate::memory::release_freed();
        }
        if let Some(note) = stores.note(root) {
            self.with_slot(root, |slot| slot.work_mut().store_note = Some(note));
        }
    }

    /// Whether the index is stopping.
    pub(crate) fn stopping(&self) -> bool {
        self.lock().stop
    }

    /// The index is dropped: every job is cancelled and the worker leaves its loop.
    pub(crate) fn stop(&self) {
        {
            let mut state = self.lock();
            state.stop = true;
            for slot in &state.slots {
                slot.work().cancel();
            }
        }
        self.notify();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    struct TestSlot(Work<u32>);

    impl Slot for TestSlot {
        type Dirty = u32;
        fn new(root: PathBuf, now: Instant) -> TestSlot {
            TestSlot(Work::new(root, now))
        }
        fn work(&self) -> &Work<u32> {
            &self.0
        }
        fn work_mut(&mut self) -> &mut Work<u32> {
            &mut self.0
        }
    }

    /// Marked paths go to the job that starts (and stay visible as in flight until it
    /// lands); the ones it gives back are marked again and make the next job due.
    #[test]
    fn a_job_takes_the_marked_paths_and_gives_back_what_it_did_not_index() {
        let clock = ManualClock::new();
        let now = clock.now();
        let mut work = Work::<u32>::new(PathBuf::from("/r"), now);
        work.watched = true;
        let first = work.start(false);
        assert!(first.full, "nothing built yet: the first job is a full one");
        assert!(work.land().is_empty());
        work.mark_dirty(7, now);
        work.mark_dirty(8, now);
        assert!(work.has_work(now));
        let patch = work.start(true);
        assert!(!patch.full);
        assert_eq!(patch.dirty, HashSet::from([7, 8]));
        assert!(work.dirty.is_empty());
        assert_eq!(work.in_flight(), Some(&HashSet::from([7, 8])));
        assert_eq!(work.total.load(Ordering::Relaxed), usize::MAX);
        work.mark_dirty(9, now);
        let taken = work.land();
        assert_eq!(taken, HashSet::from([7, 8]));
        work.give_back(taken, now);
        assert_eq!(work.dirty, HashSet::from([7, 8, 9]));
        assert!(work.has_work(now));
    }

    /// The worker starts a root restoring its stored copy before others due earlier, and
    /// leaves its loop once the index stops; a root no longer set loses its slot and its
    /// running job is cancelled.
    #[test]
    fn restoring_roots_go_first_and_removed_roots_are_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let slots = Slots::<TestSlot>::new(ManualClock::new());
        slots.set_roots(&[a.clone(), b.clone()], None, Kind::Symbols);
        for slot in slots.lock().slots.iter_mut() {
            slot.0.watched = true;
        }
        slots.with_slot(&b, |slot| slot.0.restoring = true);
        let started = slots.next_job(|slot| {
            let cancel = slot.0.start(false).cancel;
            (slot.0.root.clone(), cancel)
        });
        let (root, cancel) = started.expect("a job");
        assert_eq!(root, b, "the restoring root first");
        assert_eq!(slots.root_of(&b.join("x/y.rs")), Some(b.clone()));
        slots.set_roots(std::slice::from_ref(&a), None, Kind::Symbols);
        assert!(
            cancel.load(Ordering::Relaxed),
            "its root was removed: cancelled"
        );
        let roots: Vec<PathBuf> = slots
            .lock()
            .slots
            .iter()
            .map(|s| s.0.root.clone())
            .collect();
        assert_eq!(roots, vec![a.clone()]);
        assert_eq!(slots.with_slot(&b, |_| ()), None);
        slots.stop();
        assert!(slots.stopping());
        assert!(slots.next_job(|_| ()).is_none(), "stopped: no more jobs");
    }
}
