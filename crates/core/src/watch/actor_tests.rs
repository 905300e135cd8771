//! The actor's decisions on simulated time: a kernel of the test's own (it records what it
//! is asked to watch, and raw events are handed in by the test) and a [`ManualClock`] the
//! test moves on, so every timer (a burst settling, a root's setup going quiet, a vanished
//! root looked for again) is checked to the millisecond, without sleeping and without
//! depending on how fast a loaded machine reads the kernel's queue. The disk is real
//! (temporary trees): settling a burst looks at it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::event::{CreateKind, DataChange, EventKind, Flag, ModifyKind, RemoveKind, RenameMode};

use super::actor::{self, Actor, RETRY, SETUP_MAX, SETUP_QUIET};
use super::barrier::Barrier;
use super::debounce::QUIET;
use super::event::{RootStatus, WatchEvent};
use super::kernel::{Kernel, Msg, WatchError};
use crate::clock::ManualClock;

/// What the fake kernel was asked, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Call {
    Watch(PathBuf, bool),
    Unwatch(PathBuf),
}

#[derive(Default)]
struct FakeKernel {
    started: bool,
    calls: Arc<Mutex<Vec<Call>>>,
    /// Paths whose watch fails, with the reason.
    refuse: Arc<Mutex<Vec<(PathBuf, String)>>>,
}

impl Kernel for FakeKernel {
    fn start(&mut self) -> Result<bool, WatchError> {
        let first = !self.started;
        self.started = true;
        Ok(first)
    }
    fn watch(&mut self, path: &Path, recursive: bool) -> Result<(), WatchError> {
        if let Some((_, why)) = self.refuse.lock().unwrap().iter().find(|(p, _)| p == path) {
            // A refusal in words, as notify gives one.
            return Err(WatchError::Watch(notify::Error::generic(why)));
        }
        let call = Call::Watch(path.to_path_buf(), recursive);
        self.calls.lock().unwrap().push(call);
        Ok(())
    }
    fn unwatch(&mut self, path: &Path) {
        let call = Call::Unwatch(path.to_path_buf());
        self.calls.lock().unwrap().push(call);
    }
    fn ordered(&self) -> bool {
        false // no sentinel, no barrier: the barrier has tests of its own
    }
    fn stop(&mut self) {}
}

/// An actor on simulated time, stepped by the test.
struct Sim {
    actor: Actor,
    clock: Arc<ManualClock>,
    events: Receiver<WatchEvent>,
    calls: Arc<Mutex<Vec<Call>>>,
    refuse: Arc<Mutex<Vec<(PathBuf, String)>>>,
    lost: Arc<AtomicBool>,
    status: Arc<Mutex<Vec<(PathBuf, RootStatus)>>>,
    _dir: tempfile::TempDir,
    /// A canonical temporary directory to put roots in.
    base: PathBuf,
}

impl Sim {
    fn new() -> Sim {
        let dir = tempfile::Builder::new()
            .prefix("rootgrep-actor")
            .tempdir()
            .unwrap();
        let base = dir.path().canonicalize().unwrap();
        let kernel = FakeKernel::default();
        let calls = Arc::clone(&kernel.calls);
        let refuse = Arc::clone(&kernel.refuse);
        let clock = ManualClock::new();
        let lost = Arc::new(AtomicBool::new(false));
        let status = Arc::default();
        let (tx, events) = mpsc::channel();
        let actor = Actor::new(
            Box::new(kernel),
            Box::new(move |event| {
                let _ = tx.send(event);
            }),
            Arc::clone(&lost),
            Arc::clone(&status),
            Barrier::default(),
            Arc::clone(&clock) as Arc<dyn crate::clock::Clock>,
        );
        Sim {
            actor,
            clock,
            events,
            calls,
            refuse,
            lost,
            status,
            _dir: dir,
            base,
        }
    }

    /// A directory root made under the base.
    fn dir(&self, name: &str) -> PathBuf {
        let path = self.base.join(name);
        fs::create_dir_all(&path).unwrap();
        path
    }

    fn send(&mut self, message: Msg) {
        self.actor.handle(message);
        self.actor.tick();
    }

    /// As `Watcher::set_roots` does.
    fn set_roots(&mut self, roots: &[PathBuf]) {
        actor::mark_starting(&self.status, roots);
        self.send(Msg::SetRoots(roots.to_vec()));
    }

    /// A raw event from the kernel at `path`.
    fn raw(&mut self, kind: EventKind, path: &Path) {
        let event = notify::Event::new(kind).add_path(path.to_path_buf());
        self.send(Msg::Raw(Ok(event)));
    }

    /// Moves the time on by `by`, as the actor's thread would wake: at every due time on
    /// the way, then at the end.
    fn advance(&mut self, by: Duration) {
        let end = self.clock_now() + by;
        while let Some(due) = self.actor_next_due().filter(|due| *due <= end) {
            let step = due.saturating_duration_since(self.clock_now());
            self.clock.advance(step);
            self.actor.tick();
            if step.is_zero() && self.actor_next_due() == Some(due) {
                break; // nothing moved on: the due time was reached already
            }
        }
        let rest = end.saturating_duration_since(self.clock_now());
        self.clock.advance(rest);
        self.actor.tick();
    }

    fn clock_now(&self) -> std::time::Instant {
        crate::clock::Clock::now(&*self.clock)
    }

    fn actor_next_due(&self) -> Option<std::time::Instant> {
        self.actor.next_due()
    }

    /// The events handed to the handler since the last call.
    fn take(&self) -> Vec<WatchEvent> {
        self.events.try_iter().collect()
    }

    fn calls(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    /// Sets `roots` and lets their setup go quiet: they are `Watching`.
    fn watching(&mut self, roots: &[PathBuf]) {
        self.set_roots(roots);
        self.advance(SETUP_QUIET);
        let events = self.take();
        for root in roots {
            let watching = WatchEvent::Status(root.clone(), RootStatus::Watching);
            assert!(events.contains(&watching), "{events:?}");
        }
        self.calls();
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const CREATE: EventKind = EventKind::Create(CreateKind::File);
const WRITE: EventKind = EventKind::Modify(ModifyKind::Data(DataChange::Content));
const REMOVE: EventKind = EventKind::Remove(RemoveKind::Any);
const RENAMED_TO: EventKind = EventKind::Modify(ModifyKind::Name(RenameMode::To));

fn status(root: &Path, status: RootStatus) -> WatchEvent {
    WatchEvent::Status(root.to_path_buf(), status)
}

#[test]
fn a_root_is_starting_until_its_setup_has_been_quiet() {
    let mut sim = Sim::new();
    let root = sim.dir("r");
    sim.set_roots(std::slice::from_ref(&root));
    assert_eq!(sim.calls(), [Call::Watch(root.clone(), true)]);
    sim.advance(SETUP_QUIET * 4 / 5);
    assert_eq!(sim.take(), [], "not quiet for long enough yet");
    // Activity during setup (notify opening directories, writers) postpones it.
    sim.raw(WRITE, &root.join("busy.txt"));
    sim.advance(SETUP_QUIET - ms(1));
    let events = sim.take();
    assert!(
        !events.contains(&status(&root, RootStatus::Watching)),
        "{events:?}"
    );
    sim.advance(ms(1));
    assert_eq!(sim.take(), [status(&root, RootStatus::Watching)]);
}

#[test]
fn a_setup_that_never_goes_quiet_ends_at_its_limit() {
    let mut sim = Sim::new();
    let root = sim.dir("r");
    sim.set_roots(std::slice::from_ref(&root));
    let busy = root.join("busy.txt");
    fs::write(&busy, "x").unwrap();
    // An event every half quiet: never quiet for long enough.
    let step = SETUP_QUIET / 2;
    let mut waited = Duration::ZERO;
    while waited < SETUP_MAX - step {
        sim.raw(WRITE, &busy);
        sim.advance(step);
        waited += step;
    }
    let events = sim.take();
    assert!(
        !events.contains(&status(&root, RootStatus::Watching)),
        "{events:?}"
    );
    sim.raw(WRITE, &busy);
    sim.advance(step);
    assert!(
        sim.take().contains(&status(&root, RootStatus::Watching)),
        "Watching at SETUP_MAX however busy"
    );
}

#[test]
fn a_burst_is_pending_at_once_and_settles_once_quiet() {
    let mut sim = Sim::new();
    let root = sim.dir("r");
    sim.watching(std::slice::from_ref(&root));
    let file = root.join("a.txt");
    fs::write(&file, "one").unwrap();
    sim.raw(CREATE, &file);
    assert_eq!(sim.take(), [WatchEvent::Pending(file.clone())]);
    sim.advance(ms(60));
    sim.raw(WRITE, &file);
    sim.advance(QUIET - ms(1));
    assert_eq!(
        sim.take(),
        [],
        "the last event was only {QUIET:?} - 1 ms ago"
    );
    sim.advance(ms(1));
    assert_eq!(sim.take(), [WatchEvent::Created(file), WatchEvent::Quiet]);
}

/// A file root saved atomically (a temp file renamed over it) is watched again on the new
/// file once the burst is over; whatever was saved between the rename's event settling and
/// the new watch has no event of its own, so the file is reported changed once more.
#[test]
fn a_file_root_replaced_is_watched_again_and_reported_changed_once_more() {
    let mut sim = Sim::new();
    let file = sim.base.join("notes.txt");
    fs::write(&file, "zero").unwrap();
    sim.set_roots(std::slice::from_ref(&file));
    assert_eq!(sim.calls(), [Call::Watch(file.clone(), false)], "alone");
    sim.advance(SETUP_QUIET);
    sim.take();

    fs::write(&file, "one").unwrap();
    sim.raw(RENAMED_TO, &file);
    let events = sim.take();
    assert!(
        events.contains(&status(&file, RootStatus::Starting)),
        "{events:?}"
    );
    assert!(
        events.contains(&WatchEvent::Pending(file.clone())),
        "{events:?}"
    );
    sim.advance(QUIET);
    let events = sim.take();
    assert!(
        events.contains(&WatchEvent::Created(file.clone())),
        "{events:?}"
    );
    assert!(
        events.contains(&WatchEvent::Pending(file.clone())),
        "changed once more, pending until it settles under the new watch: {events:?}"
    );
    assert_eq!(
        sim.calls(),
        [
            Call::Unwatch(file.clone()),
            Call::Watch(file.clone(), false)
        ]
    );
    sim.advance(QUIET);
    let mut events = sim.take();
    assert!(
        events.contains(&WatchEvent::Changed(file.clone())),
        "{events:?}"
    );
    sim.advance(SETUP_QUIET);
    events.extend(sim.take());
    assert!(events.contains(&status(&file, RootStatus::Watching)));
}

/// Files written into a new directory that have creation events of their own are
/// reported `Created` once, not again by the announcement of the directory's contents;
/// a file with no event of its own (written before the directory was watched) is
/// announced.
#[test]
fn files_with_events_of_their_own_are_not_announced_again() {
    let mut sim = Sim::new();
    let root = sim.dir("r");
    sim.watching(std::slice::from_ref(&root));
    let dir = root.join("out");
    fs::create_dir(&dir).unwrap();
    let unseen = dir.join("before-the-watch.o");
    fs::write(&unseen, "x").unwrap();
    sim.raw(EventKind::Create(CreateKind::Folder), &dir);
    sim.advance(ms(1));
    let files: Vec<PathBuf> = (0..50).map(|n| dir.join(format!("f{n}.o"))).collect();
    for file in &files {
        fs::write(file, "x").unwrap();
        sim.raw(CREATE, file);
    }
    sim.advance(QUIET);
    let events = sim.take();
    for file in files.iter().chain([&unseen]) {
        let created = events
            .iter()
            .filter(|e| **e == WatchEvent::Created(file.clone()))
            .count();
        assert_eq!(
            created,
            1,
            "{} created {created}×: {events:?}",
            file.display()
        );
    }
    assert_eq!(events.last(), Some(&WatchEvent::Quiet));
}

#[test]
fn a_root_gone_is_failed_looked_for_every_retry_and_watched_when_back() {
    let mut sim = Sim::new();
    let root = sim.dir("r");
    sim.watching(std::slice::from_ref(&root));
    fs::remove_dir(&root).unwrap();
    sim.raw(REMOVE, &root);
    let events = sim.take();
    assert!(matches!(&events[0], WatchEvent::Error(why) if why.contains("removed or replaced")));
    assert!(
        events.contains(&status(&root, RootStatus::Starting)),
        "{events:?}"
    );
    sim.advance(QUIET);
    let events = sim.take();
    assert!(
        events.contains(&WatchEvent::Removed(root.clone())),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, WatchEvent::Status(p, RootStatus::Failed(_)) if *p == root)),
        "{events:?}"
    );
    // Still gone a retry later: looked for, and the same status is not said again.
    sim.advance(RETRY);
    assert_eq!(sim.take(), []);
    fs::create_dir(&root).unwrap();
    sim.advance(RETRY - ms(1));
    assert_eq!(sim.take(), [], "not looked for before the retry is due");
    sim.advance(ms(1));
    assert!(
        sim.calls().contains(&Call::Watch(root.clone(), true)),
        "watched again"
    );
    sim.advance(SETUP_QUIET);
    assert_eq!(sim.take(), [status(&root, RootStatus::Watching)]);
}

/// Lost events: anything may have changed (`Overflow`), and directories created in the
/// lost window may be unwatched, so the root is watched again; what changed while it was
/// re-added is unknown too, so a second `Overflow` follows once it is `Watching`.
#[test]
fn lost_events_are_an_overflow_before_and_after_watching_again() {
    let mut sim = Sim::new();
    let root = sim.dir("r");
    sim.watching(std::slice::from_ref(&root));
    sim.lost.store(true, Ordering::SeqCst);
    sim.send(Msg::Lost);
    let events = sim.take();
    assert_eq!(events[0], WatchEvent::Overflow, "{events:?}");
    assert!(
        events.contains(&status(&root, RootStatus::Starting)),
        "{events:?}"
    );
    sim.advance(QUIET);
    assert_eq!(
        sim.calls(),
        [Call::Unwatch(root.clone()), Call::Watch(root.clone(), true)]
    );
    sim.advance(SETUP_QUIET);
    assert_eq!(
        sim.take(),
        [status(&root, RootStatus::Watching), WatchEvent::Overflow]
    );
}

/// A kernel overflow while the root is still being set up says nothing: consumers
/// rebuild when it becomes `Watching` anyway.
#[test]
fn an_overflow_during_setup_is_not_reported() {
    let mut sim = Sim::new();
    let root = sim.dir("r");
    sim.set_roots(std::slice::from_ref(&root));
    let rescan = notify::Event::new(EventKind::Other).set_flag(Flag::Rescan);
    sim.send(Msg::Raw(Ok(rescan)));
    sim.advance(SETUP_QUIET);
    assert_eq!(sim.take(), [status(&root, RootStatus::Watching)]);
}

#[test]
fn nested_roots_share_the_outer_watch_and_its_status() {
    let mut sim = Sim::new();
    let outer = sim.dir("r");
    let inner = sim.dir("r/sub");
    sim.set_roots(&[inner.clone(), outer.clone()]);
    assert_eq!(sim.calls(), [Call::Watch(outer.clone(), true)]);
    sim.advance(SETUP_QUIET);
    let events = sim.take();
    assert!(events.contains(&status(&outer, RootStatus::Watching)));
    assert!(events.contains(&status(&inner, RootStatus::Watching)));
    // The outer root dropped: the inner one gets a watch of its own.
    sim.set_roots(std::slice::from_ref(&inner));
    assert_eq!(
        sim.calls(),
        [
            Call::Unwatch(outer.clone()),
            Call::Watch(inner.clone(), true)
        ]
    );
}

#[test]
fn a_watch_that_cannot_be_added_is_an_error_and_a_failed_root() {
    let mut sim = Sim::new();
    let root = sim.dir("r");
    let why = "the inotify watch limit was reached".to_string();
    sim.refuse.lock().unwrap().push((root.clone(), why.clone()));
    sim.set_roots(std::slice::from_ref(&root));
    let events = sim.take();
    assert_eq!(
        events,
        [
            WatchEvent::Error(format!("cannot watch {}: {why}", root.display())),
            status(&root, RootStatus::Failed(why))
        ]
    );
    assert_eq!(sim.calls(), [Call::Unwatch(root)], "cleanly unwatched");
}
