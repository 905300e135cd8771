//! The kernel elsewhere than on Linux (there: `inotify.rs`): a `notify` watcher
//! (FSEvents on macOS, ReadDirectoryChangesW on Windows), created on first use, and its
//! callback on notify's thread, which drops noise and queues raw events for the actor
//! ([`Msg`], bounded, losing events loudly when full).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, EventKindMask, RecommendedWatcher, RecursiveMode, Watcher as _};

use super::kernel::{Gather, Kernel, Msg, WatchError, hand_on};
use super::settle::is_temporary;
/// The kernel events subscribed to: creations, removals, renames, content and attribute
/// changes, and closes after writing. Opens, reads and read-only closes are left out in
/// the kernel (inotify's mask), so reading the tree wakes nobody.
pub(crate) const EVENT_KINDS: EventKindMask =
    EventKindMask::CORE.union(EventKindMask::ACCESS_CLOSE);

/// The real kernel: a `notify` watcher, created on first use, feeding the actor's queue.
pub(super) struct NotifyKernel {
    notify: Option<RecommendedWatcher>,
    /// Handed to notify's callback; raw events come back to the actor through it.
    raw_sender: SyncSender<Msg>,
    /// Set by notify's callback when the queue was full and an event was dropped.
    lost: Arc<AtomicBool>,
    /// Testing only: how late notify's thread hands each raw event on.
    read_delay: Duration,
}

impl NotifyKernel {
    pub(super) fn new(
        raw_sender: SyncSender<Msg>,
        lost: Arc<AtomicBool>,
        read_delay: Duration,
    ) -> NotifyKernel {
        NotifyKernel {
            notify: None,
            raw_sender,
            lost,
            read_delay,
        }
    }
}

impl Kernel for NotifyKernel {
    fn start(&mut self) -> Result<bool, WatchError> {
        if self.notify.is_some() {
            return Ok(false);
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
            let now = Instant::now();
            hand_on(&sender, &lost, event);
            // After the event in hand is on its way: a pause delays only the ones after it.
            gather.pause_in_bursts(now);
        };
        // Never follow symlinks: a link inside a root may point anywhere on the machine.
        let config = notify::Config::default()
            .with_follow_symlinks(false)
            .with_event_kinds(EVENT_KINDS);
        let watcher = RecommendedWatcher::new(callback, config).map_err(WatchError::Start)?;
        self.notify = Some(watcher);
        Ok(true)
    }

    fn watch(&mut self, path: &Path, recursive: bool) -> Result<(), WatchError> {
        let mode = match recursive {
            true => RecursiveMode::Recursive,
            false => RecursiveMode::NonRecursive,
        };
        let notify = self.notify.as_mut().ok_or(WatchError::NotRunning)?;
        notify.watch(path, mode).map_err(WatchError::Watch)
    }

    fn unwatch(&mut self, path: &Path) {
        if let Some(notify) = self.notify.as_mut() {
            let _ = notify.unwatch(path);
        }
    }

    fn ordered(&self) -> bool {
        cfg!(target_os = "linux")
    }

    fn stop(&mut self) {
        self.notify = None;
    }
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
