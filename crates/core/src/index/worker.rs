//! The builder thread: builds or updates one due root at a time, outside the lock, and
//! checks that the root is still the directory it built before its result is served.
//!
//! One round: find the due root (or sleep until one gets due), take its job from the slot
//! (`start`), run it without the lock (`run`), apply the content changes seen meanwhile to
//! its result (`restat`), hand the result to the slot (`land`), and store the file list of
//! a whole walk (`save`). A root's first build starts from its stored list when there is
//! one (`resume.rs`), loaded and packed while the root's watch is being set up
//! (`Lists::prepare_one`: it reads only the store), so the build after it only checks the
//! disk.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, MutexGuard, PoisonError};
use std::time::{Instant, SystemTime};

use super::build::build_limited;
use super::resume::{Prepared, Resumed, prepare, resume};
use super::root::RootIndex;
use super::state::{
    DISPLACED_RETRY, EXPECT_WAIT, Handle, REBUILD_DEFER, Shared, Slot, State, Watch,
};
use super::stored::FileList;
use super::update::{self, Update};
use crate::roots::Displaced;
use crate::store::publish::Stores;
use crate::walk::Control;

/// Whether a job's root was the same directory before and after it (see
/// [`crate::roots::in_place`]).
pub(super) enum Placement {
    Same,
    /// Not in place (now, or already before the job).
    Displaced(Displaced),
    /// A different directory is there now.
    Replaced,
}

/// A job taken from its slot: what finds the slot again when it ends, and what it does.
struct Job {
    control: Arc<Control>,
    root: PathBuf,
    /// A whole walk (else an update of the slot's last build).
    full: bool,
    /// The root's first build since this index was started: from the stored list, if any.
    first: bool,
    started: Instant,
    /// When it started, by the wall clock (what a stored list's stamps are checked against).
    since: SystemTime,
}

/// What a job reads: nothing (a whole walk), or the last build and the paths changed since.
enum Work {
    Walk,
    Update(Arc<RootIndex>, Vec<Vec<u8>>),
}

/// What a job made, outside the lock.
struct Done {
    /// The new build (`Ok(None)`: nothing to land), or the file limit it went past.
    built: Result<Option<Arc<RootIndex>>, usize>,
    /// Files an update added or removed.
    applied: u64,
    /// The update found a whole walk needed, or cheaper.
    rebuild: bool,
    placement: Placement,
    /// The build's file list is worth storing: a whole walk, or a resume that listed
    /// directories again.
    save: bool,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    crate::mutex::lock(&shared.state)
}

/// The stored file lists: the store's, and those loaded and packed ahead of their root's
/// first build.
struct Lists {
    stores: Stores<FileList>,
    prepared: HashMap<PathBuf, Prepared>,
    /// Roots whose list was looked for ahead (found or not: once per root).
    tried: HashSet<PathBuf>,
}

impl Lists {
    fn retain(&mut self, state: &State) {
        let known = |root: &std::path::Path| state.slots.iter().any(|slot| slot.root == root);
        self.stores.retain(known);
        // A root whose watch failed may never be built: its list is not held meanwhile.
        let failed = |root: &std::path::Path| matches!(state.watch_of(root), Watch::Failed(_));
        self.prepared.retain(|root, _| known(root) && !failed(root));
        self.tried.retain(|root| known(root));
    }

    /// A root whose watch is being set up, whose first build is to come, and whose stored
    /// list was not looked for yet (only where a first build resumes: see
    /// `walk_or_resume`).
    fn to_prepare(&self, state: &State) -> Option<PathBuf> {
        let waiting = |slot: &&Slot| {
            slot.builds == 0
                && slot.current.is_none()
                && !slot.building()
                && state.watch_of(&slot.root) == Watch::Unknown
                && !self.tried.contains(&slot.root)
        };
        let slot = state.slots.iter().find(waiting).filter(|_| cfg!(unix))?;
        Some(slot.root.clone())
    }

    /// Loads and packs the stored list of `root` ahead (no lock held: it reads only the
    /// store).
    fn prepare_one(&mut self, root: PathBuf) {
        self.tried.insert(root.clone());
        if let Some(prepared) = self.load(&root) {
            self.prepared.insert(root, prepared);
        }
    }

    /// The stored list of `root`, loaded and packed: the one prepared ahead, or else
    /// from the store now.
    fn take(&mut self, root: &std::path::Path) -> Option<Prepared> {
        self.prepared.remove(root).or_else(|| self.load(root))
    }

    fn load(&mut self, root: &std::path::Path) -> Option<Prepared> {
        let saved = self.stores.newer(root, false)?;
        Some(prepare(root, *Arc::try_unwrap(saved).ok()?.into_saved()?))
    }
}

/// The builder thread: builds one due root at a time, outside the lock.
pub(super) fn worker_loop(shared: &Shared) {
    let mut lists = Lists {
        stores: Stores::new(shared.store.clone()),
        prepared: HashMap::new(),
        tried: HashSet::new(),
    };
    let mut state = lock(shared);
    loop {
        if state.stop {
            return;
        }
        lists.retain(&state);
        shared
            .rounds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let now = shared.clock.now();
        let i = match due_slot(&mut state, now) {
            Ok(i) => i,
            Err(next_due) => {
                if let Some(root) = lists.to_prepare(&state) {
                    drop(state);
                    lists.prepare_one(root);
                    state = lock(shared);
                } else {
                    state = sleep(shared, state, next_due, now);
                }
                continue;
            }
        };
        let (job, work) = start(&mut state.slots[i], now);
        drop(state);

        let done = run(&job, work, shared, &mut lists);
        let to_save = match &done.built {
            Ok(Some(built)) if done.save => Some(Arc::clone(built)),
            _ => None,
        };
        // Content changes seen during the walk are applied to the new build (not shared
        // yet) outside the lock, since they read the disk; the slot stays building
        // meanwhile, so changes arriving now queue up for the next round.
        let (guard, vanished) = match &done.built {
            Ok(Some(built)) => restat(shared, &job, built),
            _ => (lock(shared), false),
        };
        state = guard;
        let Some(slot) = running(&mut state, &job.control) else {
            continue; // root removed, or no longer watched (its job cancelled), meanwhile
        };
        if land(slot, &job, done, vanished, shared.clock.now()) {
            shared.wake.notify_all();
            if let Some(built) = to_save {
                drop(state);
                save(&mut lists.stores, &job, &built);
                state = lock(shared);
            }
        }
    }
}

/// Stores the file list of a build just landed (only the root's writer does: see
/// `store::publish`), stamped against the job's start.
fn save(stores: &mut Stores<FileList>, job: &Job, built: &RootIndex) {
    let list = FileList::of(built, job.since);
    let relisted = built.info.resumed.unwrap_or(built.info.dirs);
    stores.save(&job.root, &list, relisted);
}

/// The slot whose job is due first: `Ok` when one is due now, else `Err` with when the
/// next one gets due (our own writes' events overdue count too), if ever.
pub(super) fn due_slot(state: &mut State, now: Instant) -> Result<usize, Option<Instant>> {
    let mut next_due: Option<Instant> = None;
    let mut sooner = |due: Instant| next_due = Some(next_due.map_or(due, |d| d.min(due)));
    for slot in &mut state.slots {
        slot.expire(now);
        if let Some((_, at)) = slot.expected.first() {
            sooner(*at + EXPECT_WAIT);
        }
    }
    for (i, slot) in state.slots.iter().enumerate() {
        let watching = state.watch_of(&slot.root) == Watch::Watching;
        if !watching || slot.building() || slot.too_many.is_some() {
            continue;
        }
        // While events settle, nothing would be served anyway: wait for the burst.
        let settled = slot.settling.is_empty() && !state.bursting;
        let due = match (slot.phase.due(), settled) {
            (Some(due), false) if slot.last_build.is_some() => Some(due + REBUILD_DEFER),
            (due, _) => due,
        };
        match due {
            Some(due) if due <= now => return Ok(i),
            Some(due) => sooner(due),
            None => {}
        }
    }
    Err(next_due)
}

/// Waits until `next_due`, or forever without one, unless woken (work scheduled, stop).
fn sleep<'a>(
    shared: &'a Shared,
    state: MutexGuard<'a, State>,
    next_due: Option<Instant>,
    now: Instant,
) -> MutexGuard<'a, State> {
    match next_due {
        Some(due) => {
            let wait = due.saturating_duration_since(now);
            shared
                .wake
                .wait_timeout(state, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0
        }
        None => shared
            .wake
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner),
    }
}

/// Starts the slot's due job: a whole walk, or an update of `current` with the paths
/// changed since it landed.
fn start(slot: &mut Slot, now: Instant) -> (Job, Work) {
    let control = Arc::new(Control::new());
    let handle = Handle {
        control: Arc::clone(&control),
        restat: Vec::new(),
    };
    let first = slot.builds == 0 && slot.current.is_none();
    let full = slot.phase.start(handle, slot.current.is_some());
    let changed = std::mem::take(&mut slot.changed);
    let work = match (full, &slot.current) {
        (false, Some(current)) => Work::Update(Arc::clone(current), changed),
        _ => Work::Walk,
    };
    let job = Job {
        control,
        root: slot.root.clone(),
        full,
        first,
        started: now,
        since: SystemTime::now(),
    };
    (job, work)
}

/// Runs a job without the lock, and checks the root's placement around it.
fn run(job: &Job, work: Work, shared: &Shared, lists: &mut Lists) -> Done {
    let max_files = shared.max_files;
    let root = &job.root;
    let mut rebuild = false;
    let mut save = false;
    // The walker follows the path it starts from, so a root swapped for a symlink would
    // be walked where it points: the root must be in place before the job, and the
    // same directory after it (else what it read is dropped). A swap and back within
    // the job is a root event too, which the barrier makes the index apply before it
    // serves anything.
    let placed = crate::roots::in_place(root);
    let (built, applied) = match work {
        _ if placed.is_err() => (Ok(None), 0),
        Work::Walk => {
            let (built, resumed) = walk_or_resume(job, lists, max_files);
            save = cfg!(unix) && resumed.is_none_or(|relisted| relisted > 0);
            (built, 0)
        }
        Work::Update(base, changed) => {
            match update::update(&base, &changed, &job.control, max_files) {
                Update::Applied(updated, applied) => (Ok(Some(Arc::new(*updated))), applied),
                // Same file set: the index stays as it is (content changes were applied
                // to it in place all along).
                Update::Unchanged => (Ok(Some(base)), 0),
                Update::Rebuild => {
                    rebuild = true;
                    (Ok(None), 0)
                }
                Update::Cancelled => (Ok(None), 0),
            }
        }
    };
    let placement = match (placed, crate::roots::in_place(root)) {
        (Err(displaced), _) | (Ok(_), Err(displaced)) => Placement::Displaced(displaced),
        (Ok(before), Ok(after)) if before == after => Placement::Same,
        (Ok(_), Ok(_)) => Placement::Replaced,
    };
    let built = match placement {
        Placement::Same => built,
        _ => Ok(None),
    };
    match &built {
        Ok(Some(index)) if job.full => tracing::info!(
            event = "index_built",
            root = %root.display(),
            files = index.len() as u64,
            ms = shared.clock.now().saturating_duration_since(job.started).as_millis() as u64,
            "index built"
        ),
        _ => tracing::debug!(root = %root.display(), full = job.full, applied, "index job ended"),
    }
    Done {
        built,
        applied,
        rebuild,
        placement,
        save,
    }
}

/// A whole build: from the stored list at the root's first build when there is one (then
/// also how many directories it listed again), else a walk.
fn walk_or_resume(
    job: &Job,
    lists: &mut Lists,
    max_files: usize,
) -> (Result<Option<Arc<RootIndex>>, usize>, Option<usize>) {
    let root = &job.root;
    // Only where a directory has a change time, which nothing sets back (Windows' mtime
    // can be: a restart there walks, as before).
    let prepared = match job.first && cfg!(unix) {
        true => lists.take(root),
        false => None,
    };
    if let Some(prepared) = prepared {
        match resume(root, prepared, &job.control, max_files) {
            Resumed::Ready(index) => {
                let relisted = index.info.resumed;
                // The decoded list and the index before the listings are gone: give their
                // memory back, as after a walk.
                crate::memory::release_freed();
                return (Ok(Some(Arc::from(index))), relisted);
            }
            Resumed::Cancelled => return (Ok(None), Some(0)),
            Resumed::Walk(why) => {
                tracing::info!(root = %root.display(), "stored file list not used ({why}): walking");
            }
        }
    }
    let built = build_limited(root, &job.control, max_files).map(|b| b.map(Arc::new));
    (built, None)
}

/// The slot whose running job is this one (none when the root was removed, or its job
/// cancelled, meanwhile).
fn running<'a>(state: &'a mut State, control: &Arc<Control>) -> Option<&'a mut Slot> {
    state.slots.iter_mut().find(|slot| {
        slot.phase
            .job()
            .is_some_and(|job| Arc::ptr_eq(&job.control, control))
    })
}

/// Applies to `built` the content changes the slot saw while the job ran, outside the
/// lock, until none are left; returns the lock, and whether a file turned into something
/// else (then the file set is wrong).
fn restat<'a>(shared: &'a Shared, job: &Job, built: &RootIndex) -> (MutexGuard<'a, State>, bool) {
    let mut vanished = false;
    let mut state = lock(shared);
    let mut pending = take_restat(&mut state, &job.control);
    while !pending.is_empty() {
        drop(state);
        for path in pending {
            if let Ok(rel) = path.strip_prefix(&job.root)
                && let Some(id) = built.find_file(rel)
            {
                vanished |= !built.restat(id);
            }
        }
        state = lock(shared);
        pending = take_restat(&mut state, &job.control);
    }
    (state, vanished)
}

/// The content changes the job's slot saw since they were last taken.
fn take_restat(state: &mut State, control: &Arc<Control>) -> Vec<PathBuf> {
    running(state, control)
        .and_then(|slot| slot.phase.job_mut())
        .map_or_else(Vec::new, |handle| std::mem::take(&mut handle.restat))
}

/// Hands a job's result to its slot: what got due meanwhile is due now. Returns whether
/// a build landed (waiters for freshness then look again).
fn land(slot: &mut Slot, job: &Job, done: Done, vanished: bool, now: Instant) -> bool {
    slot.phase.land();
    let root = &job.root;
    match done.placement {
        Placement::Same => slot.displaced = None,
        Placement::Displaced(displaced) => {
            tracing::warn!(event = "index_unavailable", root = %root.display(), "{displaced}: not indexed");
            slot.displaced = Some(displaced);
            slot.current = None;
            slot.rebuild_at(now + DISPLACED_RETRY);
            return false;
        }
        Placement::Replaced => {
            // Another directory is the root now: walk it.
            slot.current = None;
            slot.schedule(now);
            return false;
        }
    }
    let built = match done.built {
        Ok(built) => built,
        Err(limit) => {
            tracing::warn!(
                event = "index_unavailable",
                root = %root.display(),
                limit = limit as u64,
                "more than {limit} files: not indexed, searches there walk the disk"
            );
            slot.too_many = Some(limit);
            slot.current = None;
            slot.phase.stop();
            return false;
        }
    };
    let Some(built) = built else {
        match done.rebuild {
            // The update found a whole walk needed, or cheaper: now.
            true => slot.rebuild_at(now),
            // Cancelled while its slot kept it (the index is being dropped): the paths it
            // took are gone with it, so the last build is not served, and a walk is due.
            false => slot.schedule(now),
        }
        return false;
    };
    slot.last_build = Some(built.info.clone());
    match job.full {
        true => {
            slot.builds += 1;
            // This walk read the disk after these writes: it holds them.
            slot.expected.retain(|(_, at)| *at > job.started);
        }
        false => slot.updates += done.applied,
    }
    if vanished {
        // A file changed into something else during the walk: the set is wrong.
        slot.schedule(now);
    }
    // Changes during the job were recorded (or a rebuild asked for) and are due: the
    // index lands, but is served only once they are applied too.
    slot.current = Some(built);
    true
}
