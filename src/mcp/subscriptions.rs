//! Resource subscriptions (legacy `resources/subscribe` / `unsubscribe`, and 2026-07-28
//! `subscriptions/listen` streams) and the change notifications fed by the watcher:
//! `notifications/resources/updated` for a subscribed file that changed, was deleted or
//! re-created, and `notifications/resources/list_changed` when files appear or vanish under
//! the roots (coalesced: at most one a second, and a change inside that second is announced
//! at its end, never dropped).
//!
//! The watcher thread calls [`Subscriptions::file_event`]; each consumer (the session's
//! subscriptions, each listen stream) has its own bounded queue and a tokio task turning it
//! into notifications, so the watcher never waits on the client. When a queue is full the
//! change is not queued but the consumer is told that changes were lost, and it then
//! reports every subscribed file updated and the list changed (as after a watch overflow):
//! a slow client costs redundant notifications, never silently missing ones.

#![allow(deprecated)] // resources/subscribe is legacy-only in rmcp (2026-07-28 uses listen).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{Peer, RoleServer};
use tokio::sync::{Notify, mpsc};

/// What happened to a path under the roots (the live layer's own type).
use rootgrep_core::live::FileChange;

/// Minimum spacing of `notifications/resources/list_changed`.
pub const LIST_CHANGED_INTERVAL: Duration = Duration::from_secs(1);
/// Most changes queued towards one consumer before it is told that changes were lost.
pub const QUEUE: usize = 4096;

/// The subscription table and the queues towards the client.
pub struct Subscriptions {
    /// Canonical path → the URI the client subscribed with (echoed back verbatim).
    table: Mutex<HashMap<PathBuf, String>>,
    events: Mutex<Option<Queue>>,
    /// 2026-07-28 `subscriptions/listen` streams, each with its own queue.
    listeners: Mutex<Vec<(u64, Queue)>>,
    queue: usize,
}

impl Default for Subscriptions {
    fn default() -> Self {
        Subscriptions::with_queue(QUEUE)
    }
}

impl Subscriptions {
    /// Subscriptions whose consumers queue at most `queue` changes each.
    pub fn with_queue(queue: usize) -> Self {
        Subscriptions {
            table: Mutex::new(HashMap::new()),
            events: Mutex::new(None),
            listeners: Mutex::new(Vec::new()),
            queue: queue.max(1),
        }
    }

    pub fn subscribe(&self, path: PathBuf, uri: String) {
        self.lock().insert(path, uri);
    }

    /// Removes the subscription made with `uri`, and the one kept under `path` (the same
    /// file named differently). True when there was one.
    pub fn unsubscribe(&self, uri: &str, path: Option<&Path>) -> bool {
        let mut table = self.lock();
        let before = table.len();
        table.retain(|subscribed, kept_uri| kept_uri != uri && Some(subscribed.as_path()) != path);
        table.len() != before
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, String>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Called by the watcher (any thread) for every debounced change under the roots.
    /// Never blocks.
    pub fn file_event(&self, change: FileChange, path: PathBuf) {
        let listeners = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        for (_, listener) in listeners.iter() {
            listener.push(change, path.clone());
        }
        drop(listeners);
        let events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let Some(events) = events.as_ref() else {
            return;
        };
        // With nothing subscribed, a change can only change the list, and the list change
        // is one flag however many files a burst creates: waking the session's task once
        // per file (a build, an unpack) cost more than the rest of the watch path.
        if self.lock().is_empty() {
            if matches!(change, FileChange::Created | FileChange::Removed) {
                events.list_changed();
            }
            return;
        }
        events.push(change, path);
    }

    /// Called when the watcher lost events (anything may have changed): every consumer
    /// reports all its files updated and the list changed.
    pub fn everything_changed(&self) {
        let listeners = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        for (_, listener) in listeners.iter() {
            listener.lost();
        }
        drop(listeners);
        if let Some(events) = self
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            events.lost();
        }
    }

    /// Serves one `subscriptions/listen` stream until the client cancels it: updates for
    /// the accepted URIs (canonical path → URI as sent) and, when accepted, list changes
    /// (at most one a second).
    pub async fn listen(
        &self,
        uris: HashMap<PathBuf, String>,
        list_changed: bool,
        context: rmcp::service::SubscriptionContext,
    ) {
        use std::sync::atomic::AtomicU64;
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let (queue, inbox) = queue(self.queue);
        self.listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, queue));
        let sink = Stream {
            uris,
            context: &context,
        };
        tokio::select! {
            _ = context.cancelled() => {}
            _ = pump(inbox, &sink, list_changed) => {}
        }
        self.listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(listener, _)| *listener != id);
    }

    /// Starts delivering notifications to `peer` (once per session).
    pub fn start(self: &Arc<Self>, peer: Peer<RoleServer>) {
        let (queue, inbox) = queue(self.queue);
        {
            let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
            if events.is_some() {
                return;
            }
            *events = Some(queue);
        }
        let subscriptions = self.clone();
        tokio::spawn(async move {
            let sink = Session {
                subscriptions: &subscriptions,
                peer,
            };
            pump(inbox, &sink, true).await;
        });
    }
}

// ---------------------------------------------------------------------------------------
// Queues

/// "Changes were dropped" for one consumer, and the wake-up that goes with it.
struct Lost {
    flag: AtomicBool,
    wake: Notify,
}

/// The sending end of one consumer's queue.
struct Queue {
    tx: mpsc::Sender<(FileChange, PathBuf)>,
    lost: Arc<Lost>,
    /// The list changed, by changes that need no path of their own (see
    /// [`Subscriptions::file_event`]); shares `lost`'s wake-up.
    list: Arc<AtomicBool>,
}

/// The receiving end.
struct Inbox {
    rx: mpsc::Receiver<(FileChange, PathBuf)>,
    lost: Arc<Lost>,
    list: Arc<AtomicBool>,
}

fn queue(capacity: usize) -> (Queue, Inbox) {
    let (tx, rx) = mpsc::channel(capacity);
    let lost = Arc::new(Lost {
        flag: AtomicBool::new(false),
        wake: Notify::new(),
    });
    let list = Arc::new(AtomicBool::new(false));
    (
        Queue {
            tx,
            lost: lost.clone(),
            list: list.clone(),
        },
        Inbox { rx, lost, list },
    )
}

impl Queue {
    fn push(&self, change: FileChange, path: PathBuf) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send((change, path)) {
            self.lost();
        }
    }

    fn lost(&self) {
        self.lost.flag.store(true, Ordering::SeqCst);
        // Stores a permit when the consumer is not waiting: the wake-up is never missed.
        self.lost.wake.notify_one();
    }

    /// The list changed: one wake-up until the consumer has seen it.
    fn list_changed(&self) {
        if !self.list.swap(true, Ordering::SeqCst) {
            self.lost.wake.notify_one();
        }
    }
}

/// What arrived since the last round.
#[derive(Debug, Default, PartialEq, Eq)]
struct Batch {
    changes: Vec<(FileChange, PathBuf)>,
    /// Changes were dropped (full queue, or the watcher lost events).
    lost: bool,
    /// The list changed (besides what `changes` says).
    list_changed: bool,
}

impl Inbox {
    /// Waits for changes (or until `until`, to send a list change that came due) and
    /// takes everything queued, so a burst becomes one round of messages. `None` once
    /// nothing can arrive any more.
    async fn next(&mut self, until: Option<Instant>) -> Option<Batch> {
        let mut batch = Batch::default();
        let wait = until.map(|until| until.saturating_duration_since(Instant::now()));
        tokio::select! {
            event = self.rx.recv() => match event {
                Some(event) => batch.changes.push(event),
                None => return None,
            },
            _ = self.lost.wake.notified() => {}
            _ = tokio::time::sleep(wait.unwrap_or_default()), if wait.is_some() => {}
        }
        while let Ok(more) = self.rx.try_recv() {
            batch.changes.push(more);
        }
        batch.lost = self.lost.flag.swap(false, Ordering::SeqCst);
        batch.list_changed = self.list.swap(false, Ordering::SeqCst);
        Some(batch)
    }
}

// ---------------------------------------------------------------------------------------
// Delivery

/// When the next `list_changed` may go out: at once for the first change, then at most
/// one per [`LIST_CHANGED_INTERVAL`]; a change inside the interval is sent at its end.
#[derive(Debug, Default)]
struct ListChanged {
    last: Option<Instant>,
    due: Option<Instant>,
}

impl ListChanged {
    fn changed(&mut self, now: Instant) {
        if self.due.is_none() {
            let earliest = self.last.map_or(now, |last| last + LIST_CHANGED_INTERVAL);
            self.due = Some(earliest.max(now));
        }
    }

    /// True (once) when a list change is due at `now`.
    fn take_due(&mut self, now: Instant) -> bool {
        match self.due {
            Some(due) if due <= now => {
                self.due = None;
                self.last = Some(now);
                true
            }
            _ => false,
        }
    }
}

/// Where one consumer's notifications go.
trait Sink {
    /// The URI subscribed to under `path`, if any.
    fn uri_of(&self, path: &Path) -> Option<String>;
    /// Every subscribed URI.
    fn all_uris(&self) -> Vec<String>;
    /// The URIs subscribed to below the directory `dir`.
    fn uris_under(&self, dir: &Path) -> Vec<String>;
    /// False when the client is gone.
    async fn updated(&self, uri: String) -> bool;
    async fn list_changed(&self) -> bool;
}

/// Turns one consumer's queue into notifications until the queue or the client closes.
async fn pump(mut inbox: Inbox, sink: &impl Sink, list_changes: bool) {
    let mut list = ListChanged::default();
    while let Some(batch) = inbox.next(list.due).await {
        let now = Instant::now();
        let mut updated = BTreeSet::new();
        if batch.lost {
            tracing::warn!(
                "file changes were lost on the way to the client; every subscribed file is \
                 reported updated and the resource list changed"
            );
            updated.extend(sink.all_uris());
            if list_changes {
                list.changed(now);
            }
        }
        if list_changes && batch.list_changed {
            list.changed(now);
        }
        for (change, path) in batch.changes {
            if let Some(uri) = sink.uri_of(&path) {
                updated.insert(uri);
            }
            // A directory removed or renamed away takes every file below it along, with
            // no event of their own (inotify reports the directory only).
            if matches!(change, FileChange::Removed | FileChange::Vanished) {
                updated.extend(sink.uris_under(&path));
            }
            if list_changes && matches!(change, FileChange::Created | FileChange::Removed) {
                list.changed(now);
            }
        }
        for uri in updated {
            if !sink.updated(uri).await {
                return;
            }
        }
        if list.take_due(Instant::now()) && !sink.list_changed().await {
            return;
        }
    }
}

/// The URIs of the subscriptions strictly below `dir`.
fn below<'a>(table: impl Iterator<Item = (&'a PathBuf, &'a String)>, dir: &Path) -> Vec<String> {
    table
        .filter(|(path, _)| path.starts_with(dir) && path.as_path() != dir)
        .map(|(_, uri)| uri.clone())
        .collect()
}

/// The session's legacy subscriptions, to the session's peer.
struct Session<'a> {
    subscriptions: &'a Subscriptions,
    peer: Peer<RoleServer>,
}

impl Sink for Session<'_> {
    fn uri_of(&self, path: &Path) -> Option<String> {
        self.subscriptions.lock().get(path).cloned()
    }

    fn all_uris(&self) -> Vec<String> {
        self.subscriptions.lock().values().cloned().collect()
    }

    fn uris_under(&self, dir: &Path) -> Vec<String> {
        below(self.subscriptions.lock().iter(), dir)
    }

    async fn updated(&self, uri: String) -> bool {
        let param = ResourceUpdatedNotificationParam::new(uri);
        self.peer.notify_resource_updated(param).await.is_ok()
    }

    async fn list_changed(&self) -> bool {
        self.peer.notify_resource_list_changed().await.is_ok()
    }
}

/// One 2026-07-28 listen stream.
struct Stream<'a> {
    uris: HashMap<PathBuf, String>,
    context: &'a rmcp::service::SubscriptionContext,
}

impl Sink for Stream<'_> {
    fn uri_of(&self, path: &Path) -> Option<String> {
        self.uris.get(path).cloned()
    }

    fn all_uris(&self) -> Vec<String> {
        self.uris.values().cloned().collect()
    }

    fn uris_under(&self, dir: &Path) -> Vec<String> {
        below(self.uris.iter(), dir)
    }

    async fn updated(&self, uri: String) -> bool {
        self.context
            .sink()
            .notify_resource_updated(uri)
            .await
            .is_ok()
    }

    async fn list_changed(&self) -> bool {
        self.context
            .sink()
            .notify_resource_list_changed()
            .await
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn with_nothing_subscribed_a_burst_of_creations_is_one_list_change() {
        let subscriptions = Subscriptions::with_queue(4);
        let (queue, mut inbox) = queue(4);
        *subscriptions.events.lock().unwrap() = Some(queue);
        for n in 0..100 {
            subscriptions.file_event(FileChange::Created, PathBuf::from(format!("/r/{n}")));
            subscriptions.file_event(FileChange::Modified, PathBuf::from(format!("/r/{n}")));
        }
        let batch = inbox.next(None).await.unwrap();
        assert_eq!(
            batch,
            Batch {
                changes: vec![],
                lost: false,
                list_changed: true
            },
            "no path queued, nothing lost"
        );
        // A subscription brings the paths back.
        subscriptions.subscribe(PathBuf::from("/r/7"), "file:///r/7".into());
        subscriptions.file_event(FileChange::Modified, PathBuf::from("/r/7"));
        let batch = inbox.next(None).await.unwrap();
        assert_eq!(
            batch.changes,
            [(FileChange::Modified, PathBuf::from("/r/7"))]
        );
        assert!(!batch.list_changed);
    }

    #[tokio::test]
    async fn a_full_queue_reports_lost_changes_instead_of_growing() {
        let (queue, mut inbox) = queue(2);
        for n in 0..5 {
            queue.push(FileChange::Created, PathBuf::from(format!("/r/{n}")));
        }
        let batch = inbox.next(None).await.unwrap();
        assert_eq!(batch.changes.len(), 2, "bounded: {batch:?}");
        assert!(batch.lost, "the dropped changes are reported");
        // Reported once; the next round is normal again.
        queue.push(FileChange::Modified, PathBuf::from("/r/x"));
        let batch = inbox.next(None).await.unwrap();
        assert_eq!(
            batch.changes,
            [(FileChange::Modified, PathBuf::from("/r/x"))]
        );
        assert!(!batch.lost);
    }

    #[tokio::test]
    async fn lost_changes_wake_an_idle_consumer() {
        let (queue, mut inbox) = queue(2);
        let waiting = tokio::spawn(async move { inbox.next(None).await });
        tokio::task::yield_now().await;
        queue.lost();
        let batch = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken")
            .unwrap()
            .unwrap();
        assert!(batch.lost && batch.changes.is_empty());
    }

    #[tokio::test]
    async fn pump_sends_everything_after_a_loss() {
        struct Record(Mutex<Vec<String>>);
        impl Sink for Record {
            fn uri_of(&self, path: &Path) -> Option<String> {
                (path == Path::new("/r/a")).then(|| "file:///r/a".to_string())
            }
            fn all_uris(&self) -> Vec<String> {
                vec!["file:///r/a".into(), "file:///r/b".into()]
            }
            fn uris_under(&self, _: &Path) -> Vec<String> {
                Vec::new()
            }
            async fn updated(&self, uri: String) -> bool {
                self.0.lock().unwrap().push(uri);
                true
            }
            async fn list_changed(&self) -> bool {
                self.0.lock().unwrap().push("list".into());
                true
            }
        }
        let (queue, inbox) = queue(1);
        queue.push(FileChange::Modified, PathBuf::from("/r/a"));
        queue.push(FileChange::Modified, PathBuf::from("/r/c")); // dropped: full
        drop(queue);
        let record = Record(Mutex::new(Vec::new()));
        pump(inbox, &record, true).await;
        assert_eq!(
            *record.0.lock().unwrap(),
            ["file:///r/a", "file:///r/b", "list"]
        );
    }

    #[test]
    fn a_list_change_inside_the_interval_is_sent_at_its_end() {
        let start = Instant::now();
        let mut list = ListChanged::default();
        list.changed(start);
        assert!(list.take_due(start), "the first goes out at once");
        let soon = start + Duration::from_millis(300);
        list.changed(soon);
        assert!(!list.take_due(soon), "not twice within the interval");
        assert_eq!(
            list.due,
            Some(start + LIST_CHANGED_INTERVAL),
            "kept, not dropped"
        );
        assert!(list.take_due(start + LIST_CHANGED_INTERVAL));
        assert!(
            !list.take_due(start + 3 * LIST_CHANGED_INTERVAL),
            "sent once"
        );
    }
}
