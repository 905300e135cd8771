//! Watching the workspace roots: one kernel watcher (inotify on Linux, used directly, one
//! watch per directory; `notify` elsewhere), recursive, behind a small actor thread that turns the kernel's raw, bursty event stream into a few debounced,
//! per-path [`WatchEvent`]s for the file index and for resource subscriptions.
//!
//! What it owns:
//! - **Debouncing.** Raw events are grouped per path into bursts; a burst is settled when
//!   the path has been quiet for `debounce::QUIET` (or has been busy for `debounce::MAX_DELAY`, so a file
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
//! - **Reads cost nothing.** Only changes are subscribed to in the kernel (`kernel::EVENT_KINDS`:
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
//!   exist it is [`RootStatus::Failed`] and looked for every `actor::RETRY`. So is a root whose
//!   path is a symlink now (`crate::roots::in_place`): inotify and the walk adding the
//!   recursive watch would follow it, and where it points is not the root. A root that is
//!   a file is watched alone (not recursively); an atomic save renames a new file over
//!   it, so it is watched again on the new file like a replaced root, and reported
//!   changed once more after that (`Actor::changed_while_unwatched`).
//!
//! - **A barrier for readers ([`Barrier`]).** The kernel queues a change's event during the
//!   syscall that makes it, but the kernel watcher's reader thread and the actor read it a moment later (much
//!   later on a loaded machine), so "no `Pending` seen" does not mean "nothing happened".
//!   [`Barrier::sync`] renames a sentinel file in a private directory outside every root,
//!   watched by the same inotify instance, and waits (bounded) until the actor has read that
//!   rename's event: inotify delivers one instance's events in order, so every event queued
//!   before the call has then been read and handed to the handler (a `Pending` at least).
//!   The sentinel's events never become [`WatchEvent`]s and are never debounced.
//!
//! Roots are watched on the actor thread (adding a recursive inotify watch walks the tree,
//! which can take a while), so [`Watcher::set_roots`] returns at once; the outcome for
//! each root arrives as a `Status` event and in [`Watcher::status`]. Dropping the
//! [`Watcher`] stops the actor and the kernel's reader thread and waits for them.
//!
//! Where things are: `event` (what consumers receive), `kernel` (the `Kernel` trait, the
//! queue to the actor), `inotify` (Linux's kernel), `notify_kernel` (the others'), `actor` (every decision, on an injected clock), `debounce`
//! (bursts by due time), `settle` (what the disk says once a burst is over), `barrier`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

mod actor;
mod barrier;
mod debounce;
mod event;
#[cfg(target_os = "linux")]
mod inotify;
mod kernel;
#[cfg(not(target_os = "linux"))]
mod notify_kernel;
mod settle;

#[cfg(test)]
mod actor_tests;
#[cfg(test)]
mod tests;

use actor::Actor;
pub use barrier::Barrier;
pub use event::{Handler, RootStatus, WatchEvent};
use kernel::Msg;

use crate::mutex::lock;

/// Most raw events queued between the kernel's reader thread and the actor (the kernel's own default
/// queue, `fs.inotify.max_queued_events`, is as long). Past it, events are dropped and an
/// [`WatchEvent::Overflow`] is reported.
pub const QUEUE: usize = 16 * 1024;

/// Testing only (`--test-watch-delay`): the kernel's reader thread sleeps this long (milliseconds)
/// before handing each raw event on, as a loaded machine would leave the kernel's queue
/// unread; 0 (the default) is off. Read when a watcher is created.
static READ_DELAY_MS: AtomicU64 = AtomicU64::new(0);

/// Testing only: delays the reading of every raw event by `delay` (see `READ_DELAY_MS`).
pub fn set_test_read_delay(delay: Duration) {
    let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
    READ_DELAY_MS.store(ms, Ordering::Relaxed);
}

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
        #[cfg(target_os = "linux")]
        let kernel = inotify::InotifyKernel::new(commands.clone(), Arc::clone(&lost), read_delay);
        #[cfg(not(target_os = "linux"))]
        let kernel =
            notify_kernel::NotifyKernel::new(commands.clone(), Arc::clone(&lost), read_delay);
        let actor = Actor::new(
            Box::new(kernel),
            Box::new(handler),
            Arc::clone(&lost),
            Arc::clone(&status),
            barrier.clone(),
            crate::clock::system(),
        );
        let actor = std::thread::Builder::new()
            .name("rootgrep-watch".into())
            .spawn(move || actor.run(inbox))
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
        // Mark new roots as starting now, so `status` never omits a root just set.
        actor::mark_starting(&self.status, roots);
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
