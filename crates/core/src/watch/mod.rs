//! Watching the workspace roots: one `notify` watcher (inotify on Linux, recursive) behind a
//! small actor thread that turns the kernel's raw, bursty event stream into a few debounced,
//! per-path [`WatchEvent`]s for the file index and for resource subscriptions.
//!
//! What it owns:
//! - **Debouncing.** Raw events are grouped per path into bursts; a burst is settled when
//!   the path has been quiet for [`QUIET`] (or has been busy for [`MAX_DELAY`], so a file
//!   written continuously still reports). At the start of a burst a [`WatchEvent::Pending`]
//!   goes out at once, so that the index stops serving answers *before* the settled event
//!   arrives; when every burst has settled, [`WatchEvent::Quiet`] follows. Bursts wait in a
//!   queue by due time, so a raw event costs the same with thousands of bursts in flight
//!   (a build or an unpack writing files).
//! - **Meaning.** A settled burst becomes `Changed`, `Created` or `Removed` by looking at the
//!   path once more (`lstat`): a file deleted and re-created is `Created`; a path gone at
//!   the end of the burst is `Removed` (even if it existed only within the burst, so that
//!   every `Pending` is followed by exactly one settled event). A rename is the old path
//!   `Removed` plus the new path `Created`.
//! - **Failures are events, never silence.** A kernel queue overflow is
//!   [`WatchEvent::Overflow`] (anything may have changed); a watch that cannot be added
//!   (`max_user_watches`, permissions) is [`WatchEvent::Error`] plus a
//!   [`WatchEvent::Status`] marking that root failed. [`Watcher::status`] reports every root.
//! - **Reads cost nothing.** Only changes are subscribed to in the kernel ([`EVENT_KINDS`]:
//!   no open, access or read-only close events), so other processes reading the tree (a
//!   build, an IDE, `rg`) and our own searches never wake the server. The `*.rootgrep-tmp`
//!   files of our atomic writes are dropped before they reach the actor (their final rename
//!   is what counts).
//! - **Bounded.** Raw events reach the actor through a queue of at most [`QUEUE`] entries;
//!   when it is full, further events are dropped and reported as one
//!   [`WatchEvent::Overflow`], exactly like a kernel queue overflow (consumers rebuild).
//! - **A root replaced is watched again.** inotify watches inodes, so a root directory
//!   deleted and re-created (or renamed away and re-created) would silently lose its watch.
//!   When an event says a root itself went away (or, after an overflow, its device and
//!   inode changed), the root goes back to [`RootStatus::Starting`] at once (consumers stop
//!   trusting what they built) and is watched again once the dust settles; while it does not
//!   exist it is [`RootStatus::Failed`] and looked for every [`RETRY`]. So is a root whose
//!   path is a symlink now (`crate::roots::in_place`): inotify and the walk adding the
//!   recursive watch would follow it, and where it points is not the root. A root that is
//!   a file is watched alone (not recursively); an atomic save renames a new file over
//!   it, so it is watched again on the new file like a replaced root, and reported
//!   changed once more after that (`Actor::changed_while_unwatched`).
//!
//! - **A barrier for readers ([`Barrier`]).** The kernel queues a change's event during the
//!   syscall that makes it, but notify's thread and the actor read it a moment later (much
//!   later on a loaded machine), so "no `Pending` seen" does not mean "nothing happened".
//!   [`Barrier::sync`] renames a sentinel file in a private directory outside every root,
//!   watched by the same notify watcher, and waits (bounded) until the actor has read that
//!   rename's event: inotify delivers one instance's events in order, so every event queued
//!   before the call has then been read and handed to the handler (a `Pending` at least).
//!   The sentinel's events never become [`WatchEvent`]s and are never debounced.
//!
//! Roots are watched on the actor thread (adding a recursive inotify watch walks the tree,
//! which can take a while), so [`Watcher::set_roots`] returns at once; the outcome for
//! each root arrives as a `Status` event and in [`Watcher::status`]. Dropping the
//! [`Watcher`] stops the actor and the notify thread and waits for them.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
use notify::{EventKind, EventKindMask, RecommendedWatcher, RecursiveMode, Watcher as _};

mod barrier;
mod debounce;

pub use barrier::Barrier;
use barrier::{remove_sentinel, sentinel_name, sweep_sentinels};

pub(crate) use debounce::QUIET;
use debounce::{Burst, Debouncer};

/// After a root's watch is added, it stays [`RootStatus::Starting`] until the watcher has
/// been quiet this long (at most [`SETUP_MAX`]): adding a recursive inotify watch opens
/// every directory on notify's thread, which cannot drain the kernel queue meanwhile, so a
/// large tree overflows it during setup. Consumers rebuild everything when a root becomes
/// `Watching`, so an overflow before that carries no information and is not reported.
pub(crate) const SETUP_QUIET: Duration = Duration::from_millis(250);
pub(crate) const SETUP_MAX: Duration = Duration::from_secs(3);
/// How often a root that vanished is looked for again.
pub(crate) const RETRY: Duration = Duration::from_secs(1);
/// Most entries of a new directory announced one by one (see `Actor::announce_contents`).
pub(crate) const SCAN_MAX: usize = 4096;
/// Suffix of the temporary files written by our atomic writes; never reported.
pub(crate) const TMP_SUFFIX: &str = ".rootgrep-tmp";
/// Most raw events queued between notify's thread and the actor (the kernel's own default
/// queue, `fs.inotify.max_queued_events`, is as long). Past it, events are dropped and an
/// [`WatchEvent::Overflow`] is reported.
pub const QUEUE: usize = 16 * 1024;
/// The kernel events subscribed to: creations, removals, renames, content and attribute
/// changes, and closes after writing. Opens, reads and read-only closes are left out in
/// the kernel (inotify's mask), so reading the tree wakes nobody.
pub(crate) const EVENT_KINDS: EventKindMask =
    EventKindMask::CORE.union(EventKindMask::ACCESS_CLOSE);

/// Testing only (`--test-watch-delay`): notify's thread sleeps this long (milliseconds)
/// before handing each raw event on, as a loaded machine would leave the kernel's queue
/// unread; 0 (the default) is off. Read when a watcher is created.
static READ_DELAY_MS: AtomicU64 = AtomicU64::new(0);

/// Testing only: delays the reading of every raw event by `delay` (see `READ_DELAY_MS`).
pub fn set_test_read_delay(delay: Duration) {
    let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
    READ_DELAY_MS.store(ms, Ordering::Relaxed);
}

/// What the watcher reports. Paths are absolute and lie under one of the watched roots
/// (which are expected to be canonical, so event paths are canonical too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// Something started happening at this path; a settled event (or nothing, if the net
    /// effect is nil) follows within about [`QUIET`]. Lets caches stop serving at once.
    Pending(PathBuf),
    /// The file's content or metadata changed; it still exists.
    Changed(PathBuf),
    /// The path now exists and did not before (or was replaced: deleted and re-created,
    /// or renamed over).
    Created(PathBuf),
    /// The path is gone (deleted or renamed away; possibly it existed only briefly).
    Removed(PathBuf),
    /// No burst is pending any more: every `Pending` so far has been settled.
    Quiet,
    /// The kernel dropped events (inotify queue overflow): anything may have changed.
    Overflow,
    /// Watching went wrong (e.g. a watch could not be added); events may be missing.
    Error(String),
    /// A root's watch state changed (see [`Watcher::status`]).
    Status(PathBuf, RootStatus),
}

/// How one root is watched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootStatus {
    /// The watch is being set up.
    Starting,
    /// Every directory under the root is watched.
    Watching,
    /// The root is not (or no longer fully) watched; the reason says why.
    Failed(String),
}

/// The receiving end of a watcher's events.
pub type Handler = Box<dyn FnMut(WatchEvent) + Send + 'static>;

/// Something kept up to date by the watcher's events (an index over the roots).
pub trait Consumer: Send + Sync {
    /// The roots to cover now (canonical, existing); called before the watcher is
    /// re-targeted, so no event for a new root arrives before its consumer knows of it.
    fn set_roots(&self, roots: &[PathBuf]);
    /// One watcher event, in order (called on the watcher's thread: be quick).
    fn apply(&self, event: &WatchEvent);
    /// The server itself just changed `path`: do not answer from before the change.
    fn expect_change(&self, _path: &Path) {}
}

/// A running watcher over a set of roots. Dropping it stops everything.
pub struct Watcher {
    commands: SyncSender<Msg>,
    /// Shared with the actor (see `Actor::lost`); read here only by tests.
    #[cfg_attr(not(test), allow(dead_code))]
    lost: Arc<AtomicBool>,
    status: Arc<Mutex<Vec<(PathBuf, RootStatus)>>>,
    barrier: Barrier,
    actor: Option<JoinHandle<()>>,
}

enum Msg {
    Raw(notify::Result<notify::Event>),
    /// Raw events were dropped because the queue was full (see `Actor::lost`); this only
    /// wakes the actor, which may be idle when the flag is set.
    Lost,
    SetRoots(Vec<PathBuf>),
    Stop,
}

impl Watcher {
    /// Starts the actor with no roots; `handler` receives every event, on the actor thread,
    /// so it must not block for long (hand work off to another thread).
    pub fn new(handler: impl FnMut(WatchEvent) + Send + 'static) -> Watcher {
        Watcher::with_queue(handler, QUEUE)
    }

    /// Like [`Watcher::new`], with at most `queue` raw events waiting for the actor.
    fn with_queue(handler: impl FnMut(WatchEvent) + Send + 'static, queue: usize) -> Watcher {
        let delay = Duration::from_millis(READ_DELAY_MS.load(Ordering::Relaxed));
        Watcher::build(handler, queue, delay)
    }

    /// Like [`Watcher::new`], reading every raw event `delay` late (a loaded machine).
    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn with_read_delay(
        handler: impl FnMut(WatchEvent) + Send + 'static,
        delay: Duration,
    ) -> Watcher {
        Watcher::build(handler, QUEUE, delay)
    }

    fn build(
        handler: impl FnMut(WatchEvent) + Send + 'static,
        queue: usize,
        read_delay: Duration,
    ) -> Watcher {
        // Commands share the queue: they are rare, and the actor drains it quickly (its
        // handler must not block), so sending one waits at most for one free slot.
        let (commands, inbox) = mpsc::sync_channel(queue.max(1));
        let status = Arc::new(Mutex::new(Vec::new()));
        let lost = Arc::new(AtomicBool::new(false));
        let barrier = Barrier::default();
        let actor = Actor {
            inbox,
            raw_sender: commands.clone(),
            lost: Arc::clone(&lost),
            handler: Box::new(handler),
            status: Arc::clone(&status),
            notify: None,
            watched: Vec::new(),
            bursts: Debouncer::default(),
            setting_up: Vec::new(),
            identity: Vec::new(),
            vanished: Vec::new(),
            relost: Vec::new(),
            barrier: barrier.clone(),
            sentinel: None,
            read_delay,
        };
        let actor = std::thread::Builder::new()
            .name("rootgrep-watch".into())
            .spawn(move || actor.run())
            .expect("spawning the watcher thread");
        Watcher {
            commands,
            lost,
            status,
            barrier,
            actor: Some(actor),
        }
    }

    /// A watcher whose events arrive on a channel.
    pub fn channel() -> (Watcher, Receiver<WatchEvent>) {
        let (tx, rx) = mpsc::channel();
        let watcher = Watcher::new(move |event| {
            let _ = tx.send(event);
        });
        (watcher, rx)
    }

    /// Re-targets the watcher: roots no longer listed are unwatched, new ones are watched
    /// (on the actor thread; each outcome arrives as a [`WatchEvent::Status`]).
    pub fn set_roots(&self, roots: &[PathBuf]) {
        {
            // Mark new roots as starting now, so `status` never omits a root just set.
            let mut status = lock(&self.status);
            status.retain(|(root, _)| roots.contains(root));
            for root in roots {
                if !status.iter().any(|(known, _)| known == root) {
                    status.push((root.clone(), RootStatus::Starting));
                }
            }
        }
        let _ = self.commands.send(Msg::SetRoots(roots.to_vec()));
    }

    /// Every root set last, with how it is watched.
    pub fn status(&self) -> Vec<(PathBuf, RootStatus)> {
        lock(&self.status).clone()
    }

    /// The barrier over this watcher's events (see [`Barrier::sync`]).
    pub fn barrier(&self) -> Barrier {
        self.barrier.clone()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.commands.send(Msg::Stop);
        if let Some(actor) = self.actor.take() {
            let _ = actor.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a burst of raw events at one path amounted to, before looking at the disk.
struct Actor {
    inbox: Receiver<Msg>,
    /// Handed to notify's callback; raw events come back through `inbox`.
    raw_sender: SyncSender<Msg>,
    /// Set by notify's callback when the queue was full and an event was dropped.
    lost: Arc<AtomicBool>,
    handler: Handler,
    status: Arc<Mutex<Vec<(PathBuf, RootStatus)>>>,
    notify: Option<RecommendedWatcher>,
    /// Roots with an inotify watch of their own (roots nested in another are covered by it).
    watched: Vec<PathBuf>,
    /// The bursts in flight, by path (see [`Debouncer`]).
    bursts: Debouncer,
    /// Roots whose watch was just added: (root, quiet until, give up waiting at).
    setting_up: Vec<(PathBuf, Instant, Instant)>,
    /// (device, inode) of each watched root when its watch was added.
    identity: Vec<(PathBuf, (u64, u64))>,
    /// Roots that went away (deleted, renamed, replaced): watched again at the time given.
    vanished: Vec<(PathBuf, Instant)>,
    /// Roots watched again after lost events: what changed while their watch was being
    /// re-added is unknown too, so one more `Overflow` goes out once they are `Watching`.
    relost: Vec<PathBuf>,
    barrier: Barrier,
    /// The sentinel directory (canonical), created and watched with the notify watcher;
    /// removed when the actor stops.
    sentinel: Option<PathBuf>,
    /// Testing only: how late notify's thread hands each raw event on.
    read_delay: Duration,
}

/// How long notify's thread pauses, at most once per pause, while events come in a burst.
pub(crate) const GATHER: Duration = Duration::from_millis(1);

/// Lets a burst of raw events pile up in the kernel's queue for a moment instead of
/// waking notify's thread and the actor once per event: while a build or an unpack creates
/// thousands of files, every wake-up (two threads, each event) cost more than handling the
/// event. An event after a quiet spell passes at once, so a lone change (and the barrier's
/// sentinel) is never delayed; inside a burst, each pause lets at most [`GATHER`] of events
/// gather (tens of events at the fastest writers, far below the kernel's queue).
#[derive(Default)]
struct Gather {
    /// When the last event passed.
    last: Option<Instant>,
    /// When the last pause ended.
    paused: Option<Instant>,
}

impl Gather {
    /// Pauses (true) when `now` follows the last event within [`GATHER`] and no pause
    /// ended within it.
    fn pause_in_bursts(&mut self, now: Instant) -> bool {
        let in_burst = self
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < GATHER);
        let paused_lately = self
            .paused
            .is_some_and(|paused| now.saturating_duration_since(paused) < GATHER);
        self.last = Some(now);
        let pause = in_burst && !paused_lately;
        if pause {
            std::thread::sleep(GATHER);
            self.paused = Some(Instant::now());
        }
        pause
    }
}

/// The raw event kinds, reduced to what matters here.
enum Raw {
    Create,
    Remove,
    Modify,
}

impl Actor {
    fn run(mut self) {
        loop {
            let timeout = self
                .next_due()
                .map(|due| due.saturating_duration_since(Instant::now()));
            let message = match timeout {
                Some(timeout) => match self.inbox.recv_timeout(timeout) {
                    Ok(message) => Some(message),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match self.inbox.recv() {
                    Ok(message) => Some(message),
                    Err(_) => break,
                },
            };
            match message {
                Some(Msg::Raw(raw)) => self.on_raw(raw),
                Some(Msg::SetRoots(roots)) => self.set_roots(roots),
                Some(Msg::Stop) => break,
                Some(Msg::Lost) | None => {}
            }
            if self.lost.swap(false, Ordering::SeqCst) {
                tracing::warn!("the watch queue was full: events were dropped");
                self.on_overflow();
            }
            self.finish_setup();
            self.flush_due();
            self.rewatch_due();
        }
        // Dropping the notify watcher stops its thread; events still queued are dropped.
        self.notify = None;
        self.barrier.set_dir(None);
        if let Some(dir) = self.sentinel.take() {
            remove_sentinel(&dir);
        }
    }

    fn emit(&mut self, event: WatchEvent) {
        (self.handler)(event);
    }

    fn set_status(&mut self, root: &Path, status: RootStatus) {
        {
            let mut all = lock(&self.status);
            match all.iter_mut().find(|(known, _)| known == root) {
                Some(slot) => slot.1 = status.clone(),
                None => all.push((root.to_path_buf(), status.clone())),
            }
        }
        self.emit(WatchEvent::Status(root.to_path_buf(), status));
    }

    fn ensure_notify(&mut self) -> Result<(), String> {
        if self.notify.is_some() {
            return Ok(());
        }
        let sender = self.raw_sender.clone();
        let lost = Arc::clone(&self.lost);
        let read_delay = self.read_delay;
        let mut gather = Gather::default();
        let callback = move |event: notify::Result<notify::Event>| {
            // Runs on notify's thread: drop the noise here, cheaply, before it queues up.
            if !read_delay.is_zero() {
                std::thread::sleep(read_delay);
            }
            if let Ok(event) = &event
                && is_noise(event)
            {
                return;
            }
            gather.pause_in_bursts(Instant::now());
            // Never block notify's thread (the kernel queue would overflow behind it) and
            // never queue without limit: a full queue loses the event, and says so.
            if let Err(TrySendError::Full(_)) = sender.try_send(Msg::Raw(event)) {
                lost.store(true, Ordering::SeqCst);
                // The actor may have drained the queue and gone idle before the flag was
                // set: wake it. If the queue is still full, it is busy and sees the flag.
                let _ = sender.try_send(Msg::Lost);
            }
        };
        // Never follow symlinks: a link inside a root may point anywhere on the machine.
        let config = notify::Config::default()
            .with_follow_symlinks(false)
            .with_event_kinds(EVENT_KINDS);
        let watcher = RecommendedWatcher::new(callback, config)
            .map_err(|err| format!("cannot start the file watcher: {err}"))?;
        self.notify = Some(watcher);
        // Only inotify keeps one instance's events in order across directories, which is
        // what the barrier rests on; FSEvents and ReadDirectoryChangesW (one handle per
        // directory) do not, so elsewhere there is no sentinel and no barrier.
        if !cfg!(target_os = "linux") {
            return Ok(());
        }
        match self.watch_sentinel() {
            Ok(dir) => {
                self.barrier.set_dir(Some(dir.clone()));
                self.sentinel = Some(dir);
            }
            // Without a barrier readers cannot tell fresh from stale: they walk the disk.
            Err(why) => tracing::warn!("no watch barrier ({why}): searches walk the disk"),
        }
        Ok(())
    }

    /// Creates the sentinel directory (in the temp dir, outside the roots as a rule) with
    /// its file `0`, and watches it with the roots' notify watcher: the same inotify
    /// instance, so its events are ordered with theirs.
    fn watch_sentinel(&mut self) -> Result<PathBuf, String> {
        sweep_sentinels(&std::env::temp_dir());
        let dir = std::env::temp_dir().join(sentinel_name());
        std::fs::create_dir(&dir).map_err(|err| err.to_string())?;
        let made = dir
            .canonicalize()
            .and_then(|dir| std::fs::File::create(dir.join("0")).map(|_| dir));
        let dir = match made {
            Ok(dir) => dir,
            Err(err) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(err.to_string());
            }
        };
        let notify = self.notify.as_mut().expect("created before");
        if let Err(err) = notify.watch(&dir, RecursiveMode::NonRecursive) {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(describe(&err));
        }
        Ok(dir)
    }

    /// The sentinel's own events: the highest round named in them is delivered, and
    /// nothing else happens (no burst, no `WatchEvent`). `false` for every other event.
    fn on_sentinel(&mut self, event: &notify::Event) -> bool {
        let Some(dir) = &self.sentinel else {
            return false;
        };
        if event.paths.is_empty() || !event.paths.iter().all(|path| path.starts_with(dir)) {
            return false;
        }
        let round = event
            .paths
            .iter()
            .filter_map(|path| path.file_name()?.to_str()?.parse::<u64>().ok())
            .max();
        // Events dropped on a full queue before this one are reported first, so a reader
        // released by it already finds their overflow applied.
        if self.lost.swap(false, Ordering::SeqCst) {
            tracing::warn!("the watch queue was full: events were dropped");
            self.on_overflow();
        }
        if let Some(round) = round {
            self.barrier.delivered(round);
        }
        true
    }

    fn set_roots(&mut self, roots: Vec<PathBuf>) {
        let wanted = outermost(&roots);
        self.cover_sentinel(&wanted);
        let gone: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|root| !wanted.contains(root))
            .cloned()
            .collect();
        for root in &gone {
            self.unwatch(root);
        }
        self.vanished.retain(|(root, _)| wanted.contains(root));
        self.relost.retain(|root| wanted.contains(root));
        self.bursts.keep_under(&roots);
        lock(&self.status).retain(|(root, _)| roots.contains(root));

        for root in &wanted {
            if self.watched.contains(root) || self.vanished.iter().any(|(r, _)| r == root) {
                continue;
            }
            if let Err(reason) = self.watch(root) {
                self.emit(WatchEvent::Error(format!(
                    "cannot watch {}: {reason}",
                    root.display()
                )));
                self.set_status(root, RootStatus::Failed(reason));
            }
        }
        // Roots nested in another root share its watch, and so its status.
        for root in &roots {
            if wanted.contains(root) {
                continue;
            }
            if let Err(displaced) = crate::roots::in_place(root) {
                self.set_status(root, RootStatus::Failed(displaced.to_string()));
                continue;
            }
            let outer = wanted.iter().find(|outer| root.starts_with(outer));
            let status = outer
                .and_then(|outer| lock(&self.status).iter().find(|(r, _)| r == outer).cloned())
                .map_or(RootStatus::Starting, |(_, status)| status);
            self.set_status(root, status);
        }
        // Again: the first root's watch created the sentinel.
        self.cover_sentinel(&wanted);
    }

    /// A root over the sentinel would watch it too (one inotify watch serving two paths,
    /// unwatched with either): no barrier then, and searches there walk the disk.
    fn cover_sentinel(&self, roots: &[PathBuf]) {
        if let Some(dir) = &self.sentinel {
            self.barrier
                .set_covered(roots.iter().any(|root| dir.starts_with(root)));
        }
    }

    /// Adds the recursive watch of one root; it is `Starting` until setup goes quiet.
    fn watch(&mut self, root: &Path) -> Result<(), String> {
        // Adding a recursive watch walks every directory: background work, which waits
        // while a search runs (the first search of a session comes right after the roots).
        crate::walk::yield_to_searches(|| false, crate::walk::YIELD_MAX);
        // inotify follows a symlink given as the watched path, and so would the walk that
        // adds the recursive watch: a root swapped for a symlink would be watched (and so
        // indexed) where it points. Such a root is not watched until it is real again.
        if let Err(displaced) = crate::roots::in_place(root) {
            return Err(match displaced {
                crate::roots::Displaced::Missing => displaced.to_string(),
                other => {
                    format!("{other}; nothing below it is listed until it is a directory again")
                }
            });
        }
        let outcome = self.ensure_notify().and_then(|()| {
            let mode = match root.is_dir() {
                true => RecursiveMode::Recursive,
                false => RecursiveMode::NonRecursive,
            };
            let notify = self.notify.as_mut().expect("created above");
            notify.watch(root, mode).map_err(|err| describe(&err))
        });
        if outcome.is_err() {
            // A recursive watch that failed half-way leaves some directories watched;
            // remove them so that the root is cleanly unwatched.
            self.unwatch(root);
            return outcome;
        }
        self.watched.push(root.to_path_buf());
        if let Some(identity) = identity(root) {
            self.identity.push((root.to_path_buf(), identity));
        }
        let now = Instant::now();
        self.setting_up
            .push((root.to_path_buf(), now + SETUP_QUIET, now + SETUP_MAX));
        Ok(())
    }

    fn unwatch(&mut self, root: &Path) {
        if let Some(notify) = self.notify.as_mut() {
            let _ = notify.unwatch(root);
        }
        self.watched.retain(|known| known != root);
        self.identity.retain(|(known, _)| known != root);
        self.setting_up.retain(|(known, _, _)| known != root);
    }

    /// A watched root itself was deleted, renamed or replaced: its watch (on the old inode)
    /// no longer covers the path. Consumers stop trusting it now; it is watched again
    /// once the burst is over (`rm -rf DIR && mkdir DIR` takes a moment).
    fn root_gone(&mut self, root: &Path) {
        self.rewatch(
            root,
            format!(
                "{} was removed or replaced; watching it again",
                root.display()
            ),
        );
    }

    /// Drops a root's watch and watches it again once [`QUIET`] has passed: the walk that
    /// adds a recursive watch reaches every directory there is then (used when the root
    /// itself was replaced, and after lost events, which may have hidden the creation of
    /// directories that then were never watched). The root is `Starting` meanwhile.
    fn rewatch(&mut self, root: &Path, why: String) {
        if self.vanished.iter().any(|(r, _)| r == root) {
            return;
        }
        self.emit(WatchEvent::Error(why));
        let affected: Vec<PathBuf> = lock(&self.status)
            .iter()
            .map(|(r, _)| r.clone())
            .filter(|r| r.starts_with(root))
            .collect();
        for r in affected {
            self.set_status(&r, RootStatus::Starting);
        }
        self.vanished
            .push((root.to_path_buf(), Instant::now() + QUIET));
    }

    /// Watches again the roots that went away, once due; one still missing is `Failed`
    /// and looked for again after [`RETRY`].
    fn rewatch_due(&mut self) {
        let now = Instant::now();
        let due: Vec<PathBuf> = self
            .vanished
            .extract_if(.., |(_, at)| *at <= now)
            .map(|(root, _)| root)
            .collect();
        for root in due {
            self.unwatch(&root);
            let outcome = match root.exists() {
                true => self.watch(&root),
                false => Err("the root was removed; rootgrep watches for it to come back".into()),
            };
            if outcome.is_ok() && root.is_file() {
                self.changed_while_unwatched(&root);
            }
            if let Err(reason) = outcome {
                let status = RootStatus::Failed(reason);
                let known = lock(&self.status)
                    .iter()
                    .any(|(r, s)| *r == root && *s == status);
                if !known {
                    self.set_status(&root, status);
                }
                self.vanished.push((root, now + RETRY));
            }
        }
    }

    /// A file root is watched on its inode, so an atomic save (a temp file renamed over
    /// it) leaves the watch on the old file: the rename's event makes it watched again, on
    /// the new one. Whatever was saved between that event's settling and the new watch
    /// has no event of its own, so the file is reported changed once more, settling only
    /// now that the new watch is in place (a burst still open is just extended).
    fn changed_while_unwatched(&mut self, root: &Path) {
        if self.bursts.record(root, false, Instant::now()) {
            self.emit(WatchEvent::Pending(root.to_path_buf()));
        }
    }

    /// Roots whose setup has gone quiet become `Watching` (with the roots nested in them).
    fn finish_setup(&mut self) {
        let now = Instant::now();
        let done: Vec<PathBuf> = self
            .setting_up
            .extract_if(.., |(_, quiet, max)| *quiet <= now || *max <= now)
            .map(|(root, _, _)| root)
            .collect();
        for root in done {
            let nested: Vec<PathBuf> = lock(&self.status)
                .iter()
                .map(|(r, _)| r.clone())
                .filter(|r| r.starts_with(&root) && crate::roots::in_place(r).is_ok())
                .collect();
            for r in nested {
                self.set_status(&r, RootStatus::Watching);
            }
            if let Some(at) = self.relost.iter().position(|r| *r == root) {
                self.relost.remove(at);
                self.emit(WatchEvent::Overflow);
            }
        }
    }

    /// Events were lost (kernel or our queue): anything may have changed.
    fn on_overflow(&mut self) {
        self.busy(Instant::now());
        // Lost events matter only to roots already reported as watched.
        if self.setting_up.len() < self.watched.len() {
            self.emit(WatchEvent::Overflow);
        }
        // The event saying that a root itself was replaced may be among those lost.
        let replaced: Vec<PathBuf> = self
            .identity
            .iter()
            .filter(|(root, known)| identity(root) != Some(*known))
            .map(|(root, _)| root.clone())
            .collect();
        for root in replaced {
            self.root_gone(&root);
        }
        // So may the creation of directories: notify watches a new directory when it sees
        // it created, so one created in the lost window would stay unwatched (and what is
        // written there unseen). Watch every root that was fully watched again.
        let settled: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|root| !self.setting_up.iter().any(|(r, _, _)| r == *root))
            .cloned()
            .collect();
        for root in settled {
            if !self.relost.contains(&root) {
                self.relost.push(root.clone());
            }
            self.rewatch(
                &root,
                format!(
                    "events under {} were lost; watching it again",
                    root.display()
                ),
            );
        }
    }

    /// Something happened: roots being set up are not quiet yet.
    fn busy(&mut self, now: Instant) {
        for (_, quiet, max) in &mut self.setting_up {
            *quiet = (now + SETUP_QUIET).min(*max);
        }
    }

    fn on_raw(&mut self, raw: notify::Result<notify::Event>) {
        // Before anything else: the sentinel neither counts as activity nor is debounced.
        if let Ok(event) = &raw
            && self.on_sentinel(event)
        {
            return;
        }
        let now = Instant::now();
        self.busy(now);
        let event = match raw {
            Ok(event) => event,
            Err(err) => return self.on_error(err),
        };
        if event.need_rescan() {
            return self.on_overflow();
        }
        let kind = match event.kind {
            EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
                Raw::Create
            }
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
                Raw::Remove
            }
            // `Both` repeats the `From` and `To` events notify has already sent.
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => return,
            // Other rename shapes (other backends): the path may or may not exist now.
            EventKind::Modify(ModifyKind::Name(_)) => Raw::Remove,
            EventKind::Modify(_) | EventKind::Access(_) | EventKind::Any => Raw::Modify,
            EventKind::Other => return,
        };
        for path in event.paths {
            if is_temporary(&path) {
                continue;
            }
            if !matches!(kind, Raw::Modify) && self.watched.contains(&path) {
                self.root_gone(&path);
            }
            if self.bursts.record(&path, !matches!(kind, Raw::Modify), now) {
                self.emit(WatchEvent::Pending(path));
            }
        }
    }

    fn on_error(&mut self, err: notify::Error) {
        let message = describe(&err);
        // A watch that could not be added under a root means that root is no longer
        // fully watched: say so in its status, not only in the logs.
        let failed_root = err.paths.iter().find_map(|path| {
            self.watched
                .iter()
                .find(|root| path.starts_with(root))
                .cloned()
        });
        let text = match err.paths.first() {
            Some(path) => format!("{message} ({})", path.display()),
            None => message.clone(),
        };
        self.emit(WatchEvent::Error(text));
        if matches!(err.kind, notify::ErrorKind::MaxFilesWatch) {
            let roots = match failed_root {
                Some(root) => vec![root],
                // Unknown place: the limit is per user, so every root is affected.
                None => self.watched.clone(),
            };
            let affected: Vec<PathBuf> = lock(&self.status)
                .iter()
                .map(|(root, _)| root.clone())
                .filter(|root| roots.iter().any(|outer| root.starts_with(outer)))
                .collect();
            for root in affected {
                self.set_status(&root, RootStatus::Failed(message.clone()));
            }
        }
    }

    fn next_due(&self) -> Option<Instant> {
        let setup = self.setting_up.iter().map(|(_, quiet, _)| *quiet);
        let vanished = self.vanished.iter().map(|(_, at)| *at);
        let bursts = self.bursts.next_due();
        bursts.into_iter().chain(setup).chain(vanished).min()
    }

    fn flush_due(&mut self) {
        let now = Instant::now();
        let mut ready = self.bursts.take_due(now);
        // Deterministic order within one flush: removals first, then by path.
        ready.sort_by(|a, b| a.0.cmp(&b.0));
        // A new directory's contents whose creation settles on its own (in this flush or
        // later) need not be announced again (see `announce_contents`).
        let settling_now: HashSet<PathBuf> = ready
            .iter()
            .filter(|(_, burst)| burst.structural)
            .map(|(path, _)| path.clone())
            .collect();
        let mut settled: Vec<(WatchEvent, bool)> = ready
            .into_iter()
            .map(|(path, burst)| settle(path, &burst))
            .collect();
        settled.sort_by_key(|(event, _)| !matches!(event, WatchEvent::Removed(_)));
        for (event, is_dir) in settled {
            let created_dir = match &event {
                WatchEvent::Created(path) if is_dir => Some(path.clone()),
                _ => None,
            };
            self.emit(event);
            if let Some(dir) = created_dir {
                self.announce_contents(&dir, &settling_now);
            }
        }
        if self.bursts.take_quiet() {
            self.emit(WatchEvent::Quiet);
        }
    }
}

impl Actor {
    /// A new directory is watched only once notify has seen it created, so what was
    /// written in it before (`mkdir -p a/b && echo > a/b/f`, an unpack, a checkout) has
    /// no event of its own: announce everything it holds now as `Created`, except the
    /// paths whose creation was seen and settles in this flush (`settling_now`) or later
    /// (in flight): those are reported `Created` anyway, and a directory filled while the
    /// writer goes on (a build, an unpack) would otherwise cost every consumer each of
    /// its files twice. Past [`SCAN_MAX`] entries, an `Overflow` says that anything may
    /// have changed instead.
    fn announce_contents(&mut self, dir: &Path, settling_now: &HashSet<PathBuf>) {
        let mut found = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(next) = todo.pop() {
            let Ok(listing) = std::fs::read_dir(&next) else {
                continue;
            };
            for entry in listing.flatten() {
                let path = entry.path();
                if is_temporary(&path) {
                    continue;
                }
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    todo.push(path.clone());
                }
                // Only a creation seen (a structural burst) settles as `Created`: a file
                // written before its directory was watched may have had only its writes
                // seen, which settle as `Changed`.
                let own = settling_now.contains(&path) || self.bursts.is_structural(&path);
                if own {
                    continue;
                }
                found.push(path);
                if found.len() > SCAN_MAX {
                    self.emit(WatchEvent::Overflow);
                    return;
                }
            }
        }
        found.sort();
        for path in found {
            self.emit(WatchEvent::Created(path));
        }
    }
}

/// The (device, inode) of a path, not following a final symlink.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use crate::files::os::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

/// Turns a burst into its settled event by looking at the path now; true when the path
/// is a directory now (one `lstat` answers both).
fn settle(path: PathBuf, burst: &Burst) -> (WatchEvent, bool) {
    let meta = std::fs::symlink_metadata(&path).ok();
    let is_dir = meta.as_ref().is_some_and(|meta| meta.is_dir());
    let event = match (meta.is_some(), burst.structural) {
        (true, false) => WatchEvent::Changed(path),
        (true, true) => WatchEvent::Created(path),
        // Gone, whether it existed before the burst or only briefly within it: every
        // `Pending` gets exactly one settled event, so consumers can track each burst.
        (false, _) => WatchEvent::Removed(path),
    };
    (event, is_dir)
}

/// Raw events that never mean a change: opens and read-only closes (not subscribed to, see
/// [`EVENT_KINDS`]; kept out here too in case a backend reports them anyway).
fn is_noise(event: &notify::Event) -> bool {
    match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => false,
        EventKind::Access(_) => true,
        _ => event.paths.iter().all(|path| is_temporary(path)) && !event.paths.is_empty(),
    }
}

fn is_temporary(path: &Path) -> bool {
    path.as_os_str()
        .as_encoded_bytes()
        .ends_with(TMP_SUFFIX.as_bytes())
}

/// The roots that are not inside another root (each watched once).
fn outermost(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        let nested = roots
            .iter()
            .any(|other| other != root && root.starts_with(other));
        if !nested && !out.contains(root) {
            out.push(root.clone());
        }
    }
    out
}

/// A watch error in words a person (and an agent) can act on.
fn describe(err: &notify::Error) -> String {
    match &err.kind {
        notify::ErrorKind::MaxFilesWatch => "the inotify watch limit was reached \
             (raise fs.inotify.max_user_watches); falling back to walking"
            .to_owned(),
        notify::ErrorKind::PathNotFound => "the path does not exist".to_owned(),
        notify::ErrorKind::Io(io) => io.to_string(),
        notify::ErrorKind::Generic(text) => text.clone(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Long enough for a loaded 2-core machine, and only ever a ceiling: every wait ends as
    /// soon as its condition holds.
    const DEADLINE: Duration = Duration::from_secs(5);

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new()
            .prefix("rootgrep-watch")
            .tempdir()
            .unwrap();
        let path = dir.path().canonicalize().unwrap();
        (dir, path)
    }

    /// Collects events until `done` says the collected ones are enough, or the deadline.
    fn wait_for(
        rx: &Receiver<WatchEvent>,
        seen: &mut Vec<WatchEvent>,
        done: impl Fn(&[WatchEvent]) -> bool,
    ) -> bool {
        let deadline = Instant::now() + DEADLINE;
        while !done(seen) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(event) => seen.push(event),
                Err(_) => return false,
            }
        }
        true
    }

    fn started(root: &Path) -> (Watcher, Receiver<WatchEvent>) {
        let (watcher, rx) = Watcher::channel();
        watcher.set_roots(&[root.to_path_buf()]);
        let mut seen = Vec::new();
        let ok = wait_for(&rx, &mut seen, |s| {
            s.iter()
                .any(|e| matches!(e, WatchEvent::Status(_, RootStatus::Watching)))
        });
        assert!(ok, "root never watched: {seen:?}");
        assert_eq!(
            watcher.status(),
            [(root.to_path_buf(), RootStatus::Watching)]
        );
        (watcher, rx)
    }

    fn has(seen: &[WatchEvent], event: &WatchEvent) -> bool {
        seen.contains(event)
    }

    #[test]
    fn create_change_remove_and_rename_are_reported() {
        let (_dir, root) = root();
        let (_watcher, rx) = started(&root);
        let mut seen = Vec::new();

        let a = root.join("a.txt");
        fs::write(&a, "one").unwrap();
        assert!(
            wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Created(a.clone()))),
            "{seen:?}"
        );
        assert!(
            has(&seen, &WatchEvent::Pending(a.clone())),
            "leading edge first"
        );

        seen.clear();
        fs::write(&a, "two").unwrap();
        assert!(
            wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Changed(a.clone()))),
            "{seen:?}"
        );

        seen.clear();
        let b = root.join("sub/b.txt");
        fs::create_dir(root.join("sub")).unwrap();
        // The watch on `sub` is added when its creation is seen; wait for that first.
        assert!(wait_for(&rx, &mut seen, |s| has(
            s,
            &WatchEvent::Created(root.join("sub"))
        )));
        fs::rename(&a, &b).unwrap();
        assert!(
            wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Removed(a.clone()))
                && has(s, &WatchEvent::Created(b.clone()))),
            "{seen:?}"
        );

        seen.clear();
        fs::remove_file(&b).unwrap();
        assert!(
            wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Removed(b.clone()))
                && has(s, &WatchEvent::Quiet)),
            "{seen:?}"
        );
    }

    /// A file root saved atomically (a temp file renamed over it) is watched again on the
    /// new file. A save made after the first save's event settled but before the new watch
    /// was added (here: while the re-watch waits for a running search) has no event of its
    /// own; the file is reported changed again once watched.
    #[test]
    fn a_file_root_saved_while_it_is_watched_again_is_reported() {
        let (_dir, dir) = root();
        let file = dir.join("notes.txt");
        fs::write(&file, "zero").unwrap();
        let (_watcher, rx) = started(&file);
        let save = |content: &str| {
            let temp = dir.join(".notes.txt.swp");
            fs::write(&temp, content).unwrap();
            fs::rename(&temp, &file).unwrap();
        };
        let settled = |s: &[WatchEvent]| {
            s.iter()
                .any(|e| matches!(e, WatchEvent::Changed(p) | WatchEvent::Created(p) if *p == file))
        };
        let mut seen = Vec::new();
        // Adding a watch waits while a search runs (at most `YIELD_MAX`).
        let running = crate::walk::SearchRunning::start();
        save("one");
        assert!(wait_for(&rx, &mut seen, settled), "{seen:?}");
        save("two");
        std::thread::sleep(Duration::from_millis(300));
        seen.clear();
        drop(running);
        assert!(
            wait_for(&rx, &mut seen, settled),
            "the second save was never reported: {seen:?}"
        );
        // And the new file is watched: a write in place is reported.
        assert!(
            wait_for(&rx, &mut seen, |s| s.contains(&WatchEvent::Status(
                file.clone(),
                RootStatus::Watching
            ))),
            "{seen:?}"
        );
        seen.clear();
        fs::write(&file, "three").unwrap();
        assert!(wait_for(&rx, &mut seen, settled), "{seen:?}");
    }

    #[test]
    fn a_burst_of_writes_is_one_event_and_temp_files_are_silent() {
        let (_dir, root) = root();
        let (_watcher, rx) = started(&root);
        let a = root.join("a.txt");
        let tmp = root.join("a.txt.123.rootgrep-tmp");
        fs::write(&tmp, "tmp").unwrap();
        fs::rename(&tmp, &a).unwrap();
        for n in 0..20 {
            fs::write(&a, format!("{n}")).unwrap();
        }
        // On a loaded machine the writes may span more than one burst: one or more
        // settled events for the file, never anything for the temporary one.
        let mut seen = Vec::new();
        assert!(wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Quiet)
            && s.iter()
                .filter(|e| matches!(e, WatchEvent::Pending(_)))
                .count()
                == s.iter()
                    .filter(|e| matches!(e, WatchEvent::Created(_) | WatchEvent::Changed(_)))
                    .count()));
        assert!(has(&seen, &WatchEvent::Created(a.clone())), "{seen:?}");
        assert!(
            seen.iter().all(|e| match e {
                WatchEvent::Pending(p) | WatchEvent::Created(p) | WatchEvent::Changed(p) => p == &a,
                WatchEvent::Quiet => true,
                _ => false,
            }),
            "no trace of the temporary file: {seen:?}"
        );
    }

    #[test]
    fn what_a_new_directory_holds_before_it_is_watched_is_announced() {
        let (_dir, root) = root();
        let (_watcher, rx) = started(&root);
        let deep = root.join("new/deeper");
        let files: Vec<PathBuf> = (0..20).map(|n| deep.join(format!("f{n}.rs"))).collect();
        fs::create_dir_all(&deep).unwrap();
        for file in &files {
            fs::write(file, "x").unwrap();
        }
        let mut seen = Vec::new();
        assert!(
            wait_for(&rx, &mut seen, |s| files
                .iter()
                .all(|f| has(s, &WatchEvent::Created(f.clone())))),
            "{seen:?}"
        );
    }

    /// Files written into a new directory right after it was made have events of their
    /// own (the directory is watched by then): each is reported `Created` once, not also
    /// by the announcement of the directory's contents (a build or an unpack filling
    /// directories cost every consumer each file twice).
    #[test]
    fn files_with_events_of_their_own_are_not_announced_again() {
        let (_dir, root) = root();
        let (_watcher, rx) = started(&root);
        let dir = root.join("out");
        fs::create_dir(&dir).unwrap();
        // Give notify a moment to watch the new directory, so the files have events.
        std::thread::sleep(Duration::from_millis(20));
        let files: Vec<PathBuf> = (0..50).map(|n| dir.join(format!("f{n}.o"))).collect();
        for file in &files {
            fs::write(file, "x").unwrap();
        }
        let mut seen = Vec::new();
        assert!(
            wait_for(&rx, &mut seen, |s| s.contains(&WatchEvent::Quiet)
                && files
                    .iter()
                    .all(|f| has(s, &WatchEvent::Created(f.clone())))),
            "{seen:?}"
        );
        for file in &files {
            let created = seen
                .iter()
                .filter(|e| **e == WatchEvent::Created(file.clone()))
                .count();
            assert_eq!(
                created,
                1,
                "{} created {created}×: {seen:?}",
                file.display()
            );
        }
    }

    #[test]
    fn a_path_that_lived_only_within_a_burst_still_settles() {
        let (_dir, root) = root();
        let (_watcher, rx) = started(&root);
        let brief = root.join("brief.txt");
        fs::write(&brief, "x").unwrap();
        fs::remove_file(&brief).unwrap();
        let mut seen = Vec::new();
        assert!(wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Quiet)));
        assert_eq!(
            seen,
            [
                WatchEvent::Pending(brief.clone()),
                WatchEvent::Removed(brief),
                WatchEvent::Quiet
            ]
        );
    }

    #[test]
    fn reading_files_produces_no_events() {
        let (_dir, root) = root();
        let a = root.join("a.txt");
        fs::write(&a, "x").unwrap();
        let (_watcher, rx) = started(&root);
        for _ in 0..50 {
            fs::read(&a).unwrap();
            fs::read_dir(&root).unwrap().for_each(drop);
        }
        // Then a real change: it must be the first thing seen.
        let b = root.join("b.txt");
        fs::write(&b, "y").unwrap();
        let mut seen = Vec::new();
        assert!(wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Quiet)));
        assert_eq!(seen[0], WatchEvent::Pending(b.clone()), "{seen:?}");
        assert!(
            !seen
                .iter()
                .any(|e| matches!(e, WatchEvent::Pending(p) | WatchEvent::Changed(p) if p == &a))
        );
    }

    #[test]
    fn missing_root_is_reported_failed_and_retargeting_moves_the_watch() {
        let (_dir, root) = root();
        let (other_dir, other) = self::root();
        let missing = other.join("gone");
        let (watcher, rx) = Watcher::channel();
        watcher.set_roots(&[missing.clone(), root.clone()]);
        let mut seen = Vec::new();
        assert!(wait_for(&rx, &mut seen, |s| s.iter().any(
            |e| matches!(e, WatchEvent::Status(p, RootStatus::Failed(_)) if p == &missing)
        ) && s.iter().any(
            |e| matches!(e, WatchEvent::Status(p, RootStatus::Watching) if p == &root)
        )));
        assert!(
            seen.iter().any(|e| matches!(e, WatchEvent::Error(_))),
            "errors are reported"
        );

        watcher.set_roots(std::slice::from_ref(&other));
        seen.clear();
        assert!(wait_for(&rx, &mut seen, |s| s.iter().any(
            |e| matches!(e, WatchEvent::Status(p, RootStatus::Watching) if p == &other)
        )));
        assert_eq!(watcher.status(), [(other.clone(), RootStatus::Watching)]);
        // The old root is no longer watched; the new one is.
        fs::write(root.join("old.txt"), "x").unwrap();
        fs::write(other.join("new.txt"), "x").unwrap();
        seen.clear();
        assert!(wait_for(&rx, &mut seen, |s| has(
            s,
            &WatchEvent::Created(other.join("new.txt"))
        )));
        assert!(!seen.iter().any(|e| matches!(e, WatchEvent::Pending(p) if p.starts_with(&root) && !p.starts_with(&other))), "{seen:?}");
        drop(watcher);
        drop(other_dir);
    }

    #[test]
    fn a_full_queue_is_reported_as_an_overflow() {
        let (_dir, root) = root();
        let (tx, rx) = mpsc::channel();
        // The handler stalls on the first change until the gate opens, so raw events pile
        // up behind it.
        let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
        let held = Arc::clone(&gate);
        let watcher = Watcher::with_queue(
            move |event| {
                let stall = matches!(event, WatchEvent::Pending(_));
                let _ = tx.send(event);
                let (open, wake) = &*held;
                let mut open = lock(open);
                while stall && !*open {
                    open = wake.wait(open).unwrap_or_else(PoisonError::into_inner);
                }
            },
            4,
        );
        watcher.set_roots(std::slice::from_ref(&root));
        let mut seen = Vec::new();
        assert!(wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(
            e,
            WatchEvent::Status(_, RootStatus::Watching)
        ))));
        for n in 0..50 {
            fs::write(root.join(format!("f{n}.txt")), "x").unwrap();
        }
        let deadline = Instant::now() + DEADLINE;
        while !watcher.lost.load(Ordering::SeqCst) {
            assert!(Instant::now() < deadline, "the queue never filled");
            std::thread::sleep(Duration::from_millis(5));
        }
        let (open, wake) = &*gate;
        *lock(open) = true;
        wake.notify_all();
        assert!(
            wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Overflow)),
            "{seen:?}"
        );
    }

    #[test]
    fn a_root_replaced_is_watched_again() {
        let (_dir, base) = root();
        let root = base.join("r");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("a.txt"), "x").unwrap();
        let (watcher, rx) = started(&root);
        for replace in ["remove", "rename"] {
            match replace {
                "remove" => fs::remove_dir_all(&root).unwrap(),
                _ => fs::rename(&root, base.join("r.old")).unwrap(),
            }
            fs::create_dir(&root).unwrap();
            let mut seen = Vec::new();
            assert!(
                wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(e,
                WatchEvent::Status(p, RootStatus::Starting) if p == &root))),
                "{replace}: {seen:?}"
            );
            assert!(
                wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(e,
                WatchEvent::Status(p, RootStatus::Watching) if p == &root))),
                "{replace}: {seen:?}"
            );
            let new = root.join(format!("{replace}.txt"));
            fs::write(&new, "y").unwrap();
            assert!(
                wait_for(&rx, &mut seen, |s| has(
                    s,
                    &WatchEvent::Created(new.clone())
                )),
                "{replace}: {seen:?}"
            );
        }
        assert_eq!(watcher.status(), [(root.clone(), RootStatus::Watching)]);
    }

    #[test]
    fn a_root_gone_for_a_while_is_reported_and_watched_when_it_returns() {
        let (_dir, base) = root();
        let root = base.join("r");
        fs::create_dir(&root).unwrap();
        let (_watcher, rx) = started(&root);
        fs::remove_dir(&root).unwrap();
        let mut seen = Vec::new();
        assert!(
            wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(e,
            WatchEvent::Status(p, RootStatus::Failed(_)) if p == &root))),
            "{seen:?}"
        );
        fs::create_dir(&root).unwrap();
        assert!(
            wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(e,
            WatchEvent::Status(p, RootStatus::Watching) if p == &root))),
            "{seen:?}"
        );
        let new = root.join("back.txt");
        fs::write(&new, "y").unwrap();
        assert!(
            wait_for(&rx, &mut seen, |s| has(
                s,
                &WatchEvent::Created(new.clone())
            )),
            "{seen:?}"
        );
    }

    /// Events read late (as on a loaded machine): right after a change nothing has
    /// arrived, but once the barrier returns, the change's `Pending` has been handed over,
    /// and the sentinel itself was never reported.
    #[test]
    #[cfg(target_os = "linux")]
    fn the_barrier_waits_for_every_event_queued_before_it() {
        let (_dir, root) = root();
        let (tx, rx) = mpsc::channel();
        let watcher = Watcher::with_read_delay(
            move |event| {
                let _ = tx.send(event);
            },
            Duration::from_millis(50),
        );
        watcher.set_roots(std::slice::from_ref(&root));
        let mut seen = Vec::new();
        assert!(wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(
            e,
            WatchEvent::Status(_, RootStatus::Watching)
        ))));
        let barrier = watcher.barrier();
        assert!(barrier.available());
        for n in 0..3 {
            let path = root.join(format!("f{n}.txt"));
            fs::write(&path, "x").unwrap();
            assert!(barrier.sync(DEADLINE), "round {n}");
            // The handler runs on the actor thread before the round is marked delivered.
            let now: Vec<WatchEvent> = rx.try_iter().collect();
            assert!(
                now.contains(&WatchEvent::Pending(path.clone()))
                    || has(&seen, &WatchEvent::Pending(path.clone())),
                "round {n}: {now:?}"
            );
            seen.extend(now);
        }
        assert!(wait_for(&rx, &mut seen, |s| has(s, &WatchEvent::Quiet)));
        let sentinel = lock(&barrier.shared.state).dir.clone().unwrap();
        assert!(!sentinel.starts_with(&root));
        assert!(
            seen.iter().all(|e| match e {
                WatchEvent::Pending(p)
                | WatchEvent::Created(p)
                | WatchEvent::Changed(p)
                | WatchEvent::Removed(p) => p.starts_with(&root),
                _ => true,
            }),
            "the sentinel is never reported: {seen:?}"
        );
        drop(watcher);
        assert!(!sentinel.exists(), "removed when the watcher stops");
        assert!(!barrier.sync(DEADLINE), "no watcher, no barrier");
    }

    /// Callers arriving together share rounds; every one is released; a watcher that
    /// watches nothing yet (no notify instance, no sentinel) fails at once.
    #[test]
    #[cfg(target_os = "linux")]
    fn concurrent_syncs_share_rounds() {
        let (_dir, root) = root();
        let (watcher, rx) = Watcher::channel();
        let early = Instant::now();
        assert!(!watcher.barrier().sync(DEADLINE));
        assert!(early.elapsed() < DEADLINE, "failed at once");
        watcher.set_roots(std::slice::from_ref(&root));
        let mut seen = Vec::new();
        assert!(wait_for(&rx, &mut seen, |s| s.iter().any(|e| matches!(
            e,
            WatchEvent::Status(_, RootStatus::Watching)
        ))));
        let barrier = watcher.barrier();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let barrier = barrier.clone();
                std::thread::spawn(move || (0..50).all(|_| barrier.sync(DEADLINE)))
            })
            .collect();
        for thread in threads {
            assert!(thread.join().unwrap());
        }
        let state = lock(&barrier.shared.state);
        assert!(state.started <= 400, "{}", state.started);
        assert_eq!(state.delivered, state.started);
        assert_eq!(state.failed, 0);
    }

    /// The barrier's cost on an idle watcher: median and 99th percentile over 1,000
    /// rounds (run with `--ignored --nocapture`).
    #[test]
    #[cfg(target_os = "linux")]
    #[ignore = "a measurement, not a check"]
    fn barrier_latency() {
        let (_dir, root) = root();
        let (watcher, _rx) = started(&root);
        let barrier = watcher.barrier();
        let mut times: Vec<Duration> = (0..1000)
            .map(|_| {
                let start = Instant::now();
                assert!(barrier.sync(DEADLINE));
                start.elapsed()
            })
            .collect();
        times.sort();
        eprintln!(
            "barrier round: median {:?}, p90 {:?}, p99 {:?}, max {:?}",
            times[500], times[900], times[990], times[999]
        );
    }

    #[test]
    fn nested_roots_share_one_watch() {
        assert_eq!(
            outermost(&[
                PathBuf::from("/a/b"),
                PathBuf::from("/a"),
                PathBuf::from("/ab")
            ]),
            [PathBuf::from("/a"), PathBuf::from("/ab")]
        );
    }

    #[test]
    fn only_a_burst_of_events_pauses_notify_and_at_most_once_per_pause() {
        let mut gather = Gather::default();
        let start = Instant::now();
        assert!(
            !gather.pause_in_bursts(start),
            "a lone event passes at once"
        );
        let later = start + GATHER * 5;
        assert!(!gather.pause_in_bursts(later), "after a quiet spell too");
        assert!(
            gather.pause_in_bursts(later + GATHER / 10),
            "the next event of a burst waits for more to gather"
        );
        let resumed = Instant::now();
        assert!(
            !gather.pause_in_bursts(resumed),
            "what gathered meanwhile passes without another pause"
        );
        // The burst goes on: the next pause comes a pause's length after the last.
        let paused = gather.paused.expect("paused above");
        assert!(!gather.pause_in_bursts(paused + GATHER / 2));
        assert!(gather.pause_in_bursts(paused + GATHER));
    }

    #[test]
    fn dropping_the_watcher_stops_its_thread() {
        let (_dir, root) = root();
        let (watcher, rx) = started(&root);
        drop(watcher);
        // The actor owned the handler, which owned the sender: the channel is closed.
        let deadline = Instant::now() + DEADLINE;
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(_) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("actor still running"),
            }
        }
    }
}
