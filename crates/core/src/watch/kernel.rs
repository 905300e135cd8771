//! What the actor asks of the kernel ([`Kernel`]: inotify on Linux, `inotify.rs`; a
//! `notify` watcher elsewhere, `notify_kernel.rs`), the queue raw events reach it by
//! ([`Msg`], bounded, losing events loudly when full), and notify's event vocabulary,
//! which both kernels speak, reduced to what the actor needs ([`Raw`], [`describe`],
//! [`WatchError`]).
//!
//! The actor reaches the kernel only through the [`Kernel`] trait, so its logic (what a
//! burst means, when a root is watched again) is tested with a kernel of the test's own
//! and simulated time, while the tests of `watch/tests.rs` run on the real one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::{Duration, Instant};

use notify::EventKind;
use notify::event::{ModifyKind, RenameMode};

/// Hands a raw event (or a kernel error) to the actor without ever blocking the kernel's
/// reader thread (the kernel's queue would overflow behind it) and without queueing beyond
/// the bound: a full queue loses the event, and says so through `lost`.
pub(super) fn hand_on(
    sender: &SyncSender<Msg>,
    lost: &AtomicBool,
    raw: notify::Result<notify::Event>,
) {
    if let Err(TrySendError::Full(_)) = sender.try_send(Msg::Raw(raw)) {
        lost.store(true, Ordering::SeqCst);
        // The actor may have drained the queue and gone idle before the flag was set:
        // wake it. If the queue is still full, it is busy and sees the flag.
        let _ = sender.try_send(Msg::Lost);
    }
}

/// How long the kernel's reader thread pauses, at most once per pause, while events come
/// in a burst.
pub(crate) const GATHER: Duration = Duration::from_millis(1);

/// What reaches the actor, in order, through one bounded queue.
pub(super) enum Msg {
    Raw(notify::Result<notify::Event>),
    /// Raw events were dropped because the queue was full (see `Actor::lost`); this only
    /// wakes the actor, which may be idle when the flag is set.
    Lost,
    SetRoots(Vec<PathBuf>),
    Stop,
}

/// Why a root (or the barrier's sentinel) is not watched; its text is the root's
/// [`RootStatus::Failed`](super::event::RootStatus::Failed).
#[derive(Debug)]
pub(super) enum WatchError {
    /// The kernel's watcher instance could not be started.
    Start(notify::Error),
    /// A watch was asked of a watcher not started.
    NotRunning,
    /// The kernel refused the watch (a limit, a missing path…).
    Watch(notify::Error),
    /// The root's path no longer names the root (`roots::in_place`).
    Displaced(crate::roots::Displaced),
    /// The root was removed; it is watched again once it is back.
    Removed,
    /// The barrier's sentinel directory could not be made.
    Sentinel(std::io::Error),
}

impl std::fmt::Display for WatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::roots::Displaced;
        match self {
            WatchError::Start(err) => write!(f, "cannot start the file watcher: {err}"),
            WatchError::NotRunning => f.write_str("the file watcher is not running"),
            WatchError::Watch(err) => f.write_str(&describe(err)),
            WatchError::Displaced(Displaced::Missing) => write!(f, "{}", Displaced::Missing),
            WatchError::Displaced(other) => write!(
                f,
                "{other}; nothing below it is listed until it is a directory again"
            ),
            WatchError::Removed => {
                f.write_str("the root was removed; rootgrep watches for it to come back")
            }
            WatchError::Sentinel(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for WatchError {}

/// What the actor asks of the kernel.
pub(super) trait Kernel: Send {
    /// Starts the watcher instance if there is none yet: `Ok(true)` when this call did.
    fn start(&mut self) -> Result<bool, WatchError>;
    /// Watches `path` (and, `recursive`, every directory below it).
    fn watch(&mut self, path: &Path, recursive: bool) -> Result<(), WatchError>;
    /// Stops watching `path` (nothing when it was not watched).
    fn unwatch(&mut self, path: &Path);
    /// Whether one instance's events arrive in order across directories, which is what the
    /// barrier rests on. Only inotify does; FSEvents and ReadDirectoryChangesW (one handle
    /// per directory) do not, so elsewhere there is no sentinel and no barrier.
    fn ordered(&self) -> bool;
    /// Stops the watcher instance and its thread; events still queued are dropped.
    fn stop(&mut self);
}

/// Lets a burst of raw events pile up in the kernel's queue for a moment instead of
/// waking notify's thread and the actor once per event: while a build or an unpack creates
/// thousands of files, every wake-up (two threads, each event) cost more than handling the
/// event. The pause comes after the event that finds a burst under way has been handed on,
/// so no event is ever held back by it, only the ones still in the kernel's queue: a lone
/// change, and the barrier's sentinel (a rename: two or three events in a row, the one
/// that releases the readers among them), pass at once. Each pause lets at most [`GATHER`]
/// of events gather (tens of events at the fastest writers, far below the kernel's queue).
#[derive(Default)]
pub(super) struct Gather {
    /// When the last event passed.
    last: Option<Instant>,
    /// When the last pause ended.
    pub(super) paused: Option<Instant>,
}

impl Gather {
    /// Pauses (true) when `now`, the time of the event just handed on, follows the last
    /// event within [`GATHER`] and no pause ended within it.
    pub(super) fn pause_in_bursts(&mut self, now: Instant) -> bool {
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
pub(super) enum Raw {
    Create,
    Remove,
    Modify,
}

impl Raw {
    /// What a raw event kind amounts to; `None` for those that repeat others or mean
    /// nothing.
    pub(super) fn of(kind: &EventKind) -> Option<Raw> {
        Some(match kind {
            EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
                Raw::Create
            }
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
                Raw::Remove
            }
            // `Both` repeats the `From` and `To` events notify has already sent.
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => return None,
            // Other rename shapes (other backends): the path may or may not exist now.
            EventKind::Modify(ModifyKind::Name(_)) => Raw::Remove,
            EventKind::Modify(_) | EventKind::Access(_) | EventKind::Any => Raw::Modify,
            EventKind::Other => return None,
        })
    }
}

/// A watch error in words a person (and an agent) can act on.
pub(super) fn describe(err: &notify::Error) -> String {
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

    #[test]
    fn why_a_root_is_not_watched_reads_as_its_status() {
        use crate::roots::Displaced;
        let texts = [
            (
                WatchError::Watch(notify::Error::path_not_found()),
                "the path does not exist",
            ),
            (
                WatchError::Displaced(Displaced::Missing),
                "the path does not exist",
            ),
            (
                WatchError::Displaced(Displaced::Symlink),
                "the root's path is a symlink now, not the directory it was; nothing below it \
                 is listed until it is a directory again",
            ),
            (
                WatchError::Removed,
                "the root was removed; rootgrep watches for it to come back",
            ),
            (WatchError::NotRunning, "the file watcher is not running"),
        ];
        for (err, text) in texts {
            assert_eq!(err.to_string(), text);
        }
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
            "after the next event of a burst, more gather"
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
}
