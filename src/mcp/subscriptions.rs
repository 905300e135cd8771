//! Resource subscriptions (legacy `resources/subscribe` / `unsubscribe`) and the change
//! notifications fed by the watcher: `notifications/resources/updated` for a subscribed file
//! that changed, was deleted or re-created, and `notifications/resources/list_changed` when
//! files appear or vanish under the roots (coalesced: at most one a second).
//!
//! The watcher thread calls [`Subscriptions::file_event`]; a tokio task turns queued events
//! into notifications so the watcher never waits on the client.

#![allow(deprecated)] // resources/subscribe is legacy-only in rmcp (2026-07-28 uses listen).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

/// What happened to a path under the roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Modified,
    Created,
    Removed,
}

/// The subscription table and the queue towards the client.
pub struct Subscriptions {
    /// Canonical path → the URI the client subscribed with (echoed back verbatim).
    table: Mutex<HashMap<PathBuf, String>>,
    events: Mutex<Option<EventSender>>,
    /// 2026-07-28 `subscriptions/listen` streams, each with its own queue.
    listeners: Mutex<Vec<(u64, EventSender)>>,
}

/// The queue of changes towards one consumer.
type EventSender = mpsc::UnboundedSender<(Change, PathBuf)>;

/// Minimum spacing of `notifications/resources/list_changed`.
pub const LIST_CHANGED_INTERVAL: Duration = Duration::from_secs(1);

impl Default for Subscriptions {
    fn default() -> Self {
        Subscriptions {
            table: Mutex::new(HashMap::new()),
            events: Mutex::new(None),
            listeners: Mutex::new(Vec::new()),
        }
    }
}

impl Subscriptions {
    pub fn subscribe(&self, path: PathBuf, uri: String) {
        self.lock().insert(path, uri);
    }

    pub fn unsubscribe(&self, path: &Path) -> bool {
        self.lock().remove(path).is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, String>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Called by the watcher (any thread) for every debounced change under the roots.
    pub fn file_event(&self, change: Change, path: PathBuf) {
        let listeners = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        for (_, listener) in listeners.iter() {
            let _ = listener.send((change, path.clone()));
        }
        drop(listeners);
        let sender = self.events.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sender) = sender.as_ref() {
            let _ = sender.send((change, path));
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
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = mpsc::unbounded_channel();
        self.listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, tx));
        let mut last_list_changed: Option<Instant> = None;
        loop {
            let event = tokio::select! {
                _ = context.cancelled() => break,
                event = rx.recv() => match event {
                    Some(event) => event,
                    None => break,
                },
            };
            let (change, path) = event;
            let sent = if let Some(uri) = uris.get(&path) {
                context.sink().notify_resource_updated(uri.clone()).await
            } else {
                Ok(())
            };
            if sent.is_err() {
                break;
            }
            if list_changed
                && matches!(change, Change::Created | Change::Removed)
                && last_list_changed.is_none_or(|last| last.elapsed() >= LIST_CHANGED_INTERVAL)
            {
                last_list_changed = Some(Instant::now());
                if context.sink().notify_resource_list_changed().await.is_err() {
                    break;
                }
            }
        }
        self.listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(listener, _)| *listener != id);
    }

    /// Starts delivering notifications to `peer` (once per session).
    pub fn start(self: &std::sync::Arc<Self>, peer: Peer<RoleServer>) {
        let (tx, rx) = mpsc::unbounded_channel();
        {
            let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
            if events.is_some() {
                return;
            }
            *events = Some(tx);
        }
        tokio::spawn(deliver(self.clone(), peer, rx));
    }
}

async fn deliver(
    subscriptions: std::sync::Arc<Subscriptions>,
    peer: Peer<RoleServer>,
    mut rx: mpsc::UnboundedReceiver<(Change, PathBuf)>,
) {
    let mut last_list_changed: Option<Instant> = None;
    let mut list_changed_due: Option<Instant> = None;
    loop {
        let wait = list_changed_due
            .map(|due| due.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_secs(3600));
        let event = tokio::select! {
            event = rx.recv() => match event {
                Some(event) => Some(event),
                None => break,
            },
            _ = tokio::time::sleep(wait) => None,
        };
        // Collect everything queued right now, so a burst becomes one round of messages.
        let mut batch: Vec<(Change, PathBuf)> = event.into_iter().collect();
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
        }
        let mut updated = BTreeSet::new();
        for (change, path) in batch {
            if let Some(uri) = subscriptions.lock().get(&path) {
                updated.insert(uri.clone());
            }
            if matches!(change, Change::Created | Change::Removed) && list_changed_due.is_none() {
                let earliest = last_list_changed
                    .map(|last| last + LIST_CHANGED_INTERVAL)
                    .unwrap_or_else(Instant::now);
                list_changed_due = Some(earliest.max(Instant::now()));
            }
        }
        for uri in updated {
            let param = ResourceUpdatedNotificationParam::new(uri);
            if peer.notify_resource_updated(param).await.is_err() {
                return;
            }
        }
        if let Some(due) = list_changed_due
            && due <= Instant::now()
        {
            list_changed_due = None;
            last_list_changed = Some(Instant::now());
            if peer.notify_resource_list_changed().await.is_err() {
                return;
            }
        }
    }
}
