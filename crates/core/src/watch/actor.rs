//! The watcher's actor: one thread that owns every decision about events. It turns the
//! kernel's raw, bursty stream into debounced per-path [`WatchEvent`]s (with
//! `debounce::Debouncer`, looking at the disk with `settle`), keeps each root's
//! [`RootStatus`] (`Starting` until its setup goes quiet, `Failed` while it cannot be
//! watched), watches again a root that was replaced or vanished, and turns lost events
//! into `Overflow`s.
//!
//! It reads the time from an injected [`Clock`] and reaches the kernel through the
//! [`Kernel`] trait, and its work is two steps, [`Actor::handle`] (one message) and
//! [`Actor::tick`] (whatever fell due), which the thread loop ([`Actor::run`]) alternates
//! with waiting: its tests (`actor_tests.rs`) drive those steps on simulated time.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::barrier::{self, Barrier, remove_sentinel};
use super::debounce::{Debouncer, QUIET};
use super::event::{Handler, RootStatus, WatchEvent};
use super::kernel::{Kernel, Msg, Raw, WatchError, describe};
use super::settle::{self, identity, is_temporary, outermost, settle};
use crate::clock::Clock;
use crate::mutex::lock;

/// After a root's watch is added, it stays [`RootStatus::Starting`] until the watcher has
/// been quiet this long (at most [`SETUP_MAX`]): with notify's watcher (macOS, Windows)
/// adding a recursive watch opens every directory on the thread that would drain the
/// kernel's queue, so a large tree overflows it during setup. Consumers rebuild
/// everything when a root becomes `Watching`, so an overflow before that carries no
/// information and is not reported. On Linux the watch is whole when `Kernel::watch`
/// returns and a reader thread of its own drains the queue meanwhile: the quiet only
/// lets a burst under way (a checkout) pass before the first build, and is short (a
/// restart's build waits for it).
#[cfg(target_os = "linux")]
pub(crate) const SETUP_QUIET: Duration = Duration::from_millis(50);
#[cfg(not(target_os = "linux"))]
pub(crate) const SETUP_QUIET: Duration = Duration::from_millis(250);
pub(crate) const SETUP_MAX: Duration = Duration::from_secs(3);
/// How often a root that vanished is looked for again.
pub(crate) const RETRY: Duration = Duration::from_secs(1);

/// Forgets the statuses of roots no longer in `roots` and marks the new ones `Starting`
/// (on the caller's thread, before the actor hears of them).
pub(super) fn mark_starting(status: &Mutex<Vec<(PathBuf, RootStatus)>>, roots: &[PathBuf]) {
    let mut status = lock(status);
    status.retain(|(root, _)| roots.contains(root));
    for root in roots {
        if !status.iter().any(|(known, _)| known == root) {
            status.push((root.clone(), RootStatus::Starting));
        }
    }
}

/// The actor's state: what is watched, what is in flight, what is due when.
pub(super) struct Actor {
    kernel: Box<dyn Kernel>,
    /// Set by the kernel's reader thread when the queue was full and an event was dropped.
    lost: Arc<AtomicBool>,
    handler: Handler,
    status: Arc<Mutex<Vec<(PathBuf, RootStatus)>>>,
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
    /// The sentinel directory (canonical), created and watched with the kernel's watcher;
    /// removed when the actor stops.
    sentinel: Option<PathBuf>,
    /// Where the time is read (simulated in tests).
    clock: Arc<dyn Clock>,
}

impl Actor {
    pub(super) fn new(
        kernel: Box<dyn Kernel>,
        handler: Handler,
        lost: Arc<AtomicBool>,
        status: Arc<Mutex<Vec<(PathBuf, RootStatus)>>>,
        barrier: Barrier,
        clock: Arc<dyn Clock>,
    ) -> Actor {
        Actor {
            kernel,
            lost,
            handler,
            status,
            watched: Vec::new(),
            bursts: Debouncer::default(),
            setting_up: Vec::new(),
            identity: Vec::new(),
            vanished: Vec::new(),
            relost: Vec::new(),
            barrier,
            sentinel: None,
            clock,
        }
    }

    /// The actor's thread: each message, then whatever fell due, until told to stop.
    pub(super) fn run(mut self, inbox: Receiver<Msg>) {
        loop {
            let timeout = self
                .next_due()
                .map(|due| due.saturating_duration_since(self.clock.now()));
            let message = match timeout {
                Some(timeout) => match inbox.recv_timeout(timeout) {
                    Ok(message) => Some(message),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match inbox.recv() {
                    Ok(message) => Some(message),
                    Err(_) => break,
                },
            };
            match message {
                Some(Msg::Stop) => break,
                Some(message) => self.handle(message),
                None => {}
            }
            self.tick();
        }
        self.stop();
    }

    /// One message from the queue (`Stop` is the caller's).
    pub(super) fn handle(&mut self, message: Msg) {
        match message {
            Msg::Raw(raw) => self.on_raw(raw),
            Msg::SetRoots(roots) => self.set_roots(roots),
            Msg::Lost | Msg::Stop => {}
        }
    }

    /// What is due after each message or timeout: lost events reported, setups finished,
    /// bursts settled, vanished roots looked for.
    pub(super) fn tick(&mut self) {
        self.report_lost();
        self.finish_setup();
        self.flush_due();
        self.rewatch_due();
    }

    /// Raw events dropped on a full queue are an overflow.
    fn report_lost(&mut self) {
        if self.lost.swap(false, Ordering::SeqCst) {
            tracing::warn!("the watch queue was full: events were dropped");
            self.on_overflow();
        }
    }

    fn stop(&mut self) {
        self.kernel.stop();
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

    /// Starts the kernel's watcher on first use, with the barrier's sentinel beside it.
    fn ensure_kernel(&mut self) -> Result<(), WatchError> {
        if !self.kernel.start()? || !self.kernel.ordered() {
            return Ok(());
        }
        match barrier::watch_sentinel(&mut *self.kernel) {
            Ok(dir) => {
                self.barrier.set_dir(Some(dir.clone()));
                self.sentinel = Some(dir);
            }
            // Without a barrier readers cannot tell fresh from stale: they walk the disk.
            Err(why) => tracing::warn!("no watch barrier ({why}): searches walk the disk"),
        }
        Ok(())
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
        self.report_lost();
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
                self.set_status(root, RootStatus::Failed(reason.to_string()));
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
    fn watch(&mut self, root: &Path) -> Result<(), WatchError> {
        // Adding a recursive watch walks every directory: background work, which waits
        // while a search runs (the first search of a session comes right after the roots).
        crate::pool::pacing::yield_to_searches(|| false, crate::pool::pacing::YIELD_MAX);
        // inotify follows a symlink given as the watched path, and so would the walk that
        // adds the recursive watch: a root swapped for a symlink would be watched (and so
        // indexed) where it points. Such a root is not watched until it is real again.
        if let Err(displaced) = crate::roots::in_place(root) {
            return Err(WatchError::Displaced(displaced));
        }
        let outcome = self
            .ensure_kernel()
            .and_then(|()| self.kernel.watch(root, root.is_dir()));
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
        let now = self.clock.now();
        self.setting_up
            .push((root.to_path_buf(), now + SETUP_QUIET, now + SETUP_MAX));
        Ok(())
    }

    fn unwatch(&mut self, root: &Path) {
        self.kernel.unwatch(root);
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
            .push((root.to_path_buf(), self.clock.now() + QUIET));
    }

    /// Watches again the roots that went away, once due; one still missing is `Failed`
    /// and looked for again after [`RETRY`].
    fn rewatch_due(&mut self) {
        let now = self.clock.now();
        let due: Vec<PathBuf> = self
            .vanished
            .extract_if(.., |(_, at)| *at <= now)
            .map(|(root, _)| root)
            .collect();
        for root in due {
            self.unwatch(&root);
            let outcome = match root.exists() {
                true => self.watch(&root),
                false => Err(WatchError::Removed),
            };
            if outcome.is_ok() && root.is_file() {
                self.changed_while_unwatched(&root);
            }
            if let Err(reason) = outcome {
                let status = RootStatus::Failed(reason.to_string());
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
        if self.bursts.record(root, false, self.clock.now()) {
            self.emit(WatchEvent::Pending(root.to_path_buf()));
        }
    }

    /// Roots whose setup has gone quiet become `Watching` (with the roots nested in them).
    fn finish_setup(&mut self) {
        let now = self.clock.now();
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
        self.busy(self.clock.now());
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
        // So may the creation of directories: a new directory is watched when its creation
        // is seen, so one created in the lost window would stay unwatched (and what is
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
        let now = self.clock.now();
        self.busy(now);
        let event = match raw {
            Ok(event) => event,
            Err(err) => return self.on_error(err),
        };
        if event.need_rescan() {
            return self.on_overflow();
        }
        let Some(kind) = Raw::of(&event.kind) else {
            return;
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

    pub(super) fn next_due(&self) -> Option<Instant> {
        let setup = self.setting_up.iter().map(|(_, quiet, _)| *quiet);
        let vanished = self.vanished.iter().map(|(_, at)| *at);
        let bursts = self.bursts.next_due();
        bursts.into_iter().chain(setup).chain(vanished).min()
    }

    fn flush_due(&mut self) {
        let now = self.clock.now();
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

    /// Announces what a new directory held before it was watched (see
    /// [`settle::contents`]), or an `Overflow` when that is too much to list.
    fn announce_contents(&mut self, dir: &Path, settling_now: &HashSet<PathBuf>) {
        match settle::contents(dir, settling_now, &self.bursts) {
            Some(found) => {
                for path in found {
                    self.emit(WatchEvent::Created(path));
                }
            }
            None => self.emit(WatchEvent::Overflow),
        }
    }
}
