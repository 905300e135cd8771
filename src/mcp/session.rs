//! Per-process session state shared by every request: the configuration, the roots in
//! force (swapped atomically when the client's roots change), whether the first
//! `roots/list` answer has arrived, the user's out-of-root grants, and the client's log
//! level, the live layer (`rootgrep_core::live`), whose changes it forwards to the subscriptions,
//! and what answers already showed (`crate::mcp::shown`), which those changes and the
//! server's own writes make it forget.
//!
//! One stdio process serves one client, so "session" and "process" coincide.
//!
//! The session sits below the modules that use it (`logging`, `modern`, `ask`): whoever
//! makes it hands it the starting log level and the `requestState` codec, so it names
//! neither module.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::watch;

use rootgrep_core::access::Grants;
use rootgrep_core::config::Config;
use rootgrep_core::live::Live;
use rootgrep_core::roots::{Root, RootSet, choose_roots};

/// Shared state of one server.
pub struct Session {
    pub config: Config,
    roots: RwLock<Arc<RootSet>>,
    /// False until the first client roots fetch ended (or is known not to happen).
    roots_ready: watch::Sender<bool>,
    pub(crate) refresh: Mutex<RefreshState>,
    pub grants: Grants,
    /// Minimum MCP log level forwarded to the client (see `logging.rs`).
    pub log_level: AtomicU8,
    /// Resource subscriptions and the change notifications behind them.
    pub subscriptions: Arc<crate::mcp::subscriptions::Subscriptions>,
    /// Seals `requestState` for 2026-07-28 multi round-trip requests (random key); `Err`
    /// says why there is no key, and 2026-07-28 requests are then refused.
    pub state_codec: Result<rmcp::model::RequestStateCodec, String>,
    /// The live layer: the watcher and the indexes over the roots, whose changes feed the
    /// subscriptions (absent with `--no-watch`).
    pub live: Option<Live>,
    /// Last warnings about roots (dropped by `--confine`, not `file://`, missing…).
    roots_notes: Mutex<Vec<String>>,
    /// The lines answers showed, so a later answer need not repeat them (forgotten when
    /// their file changes).
    pub shown: Arc<crate::mcp::shown::Shown>,
}

#[derive(Default)]
pub(crate) struct RefreshState {
    pub running: bool,
    pub pending: bool,
}

impl Session {
    /// A session over `config`'s roots, forwarding logs at `log_level` and up, sealing
    /// 2026-07-28 request states with `state_codec` (`Err` says why there is none).
    pub fn new(
        config: Config,
        log_level: u8,
        state_codec: Result<rmcp::model::RequestStateCodec, String>,
    ) -> Arc<Session> {
        let (set, warnings) = choose_roots(None, &config.dirs, &config.cwd, &config.confine);
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        let (roots_ready, _) = watch::channel(false);
        if let Err(why) = &state_codec {
            tracing::warn!("{why}: 2026-07-28 requests will be refused");
        }
        let subscriptions: Arc<crate::mcp::subscriptions::Subscriptions> = Arc::default();
        let shown: Arc<crate::mcp::shown::Shown> = Arc::default();
        let live = config.watch.then(|| {
            // The adapter only subscribes to the live layer: its changes become
            // notifications here, and a changed file's lines are no longer "shown".
            let notify = subscriptions.clone();
            let shown = shown.clone();
            Live::start(
                config.index_max_files,
                config.store.clone(),
                config.content_index,
                config.history.then(|| config.confine.dirs.clone()),
                move |change| match change {
                    rootgrep_core::live::Change::File(kind, path) => {
                        shown.forget(&path);
                        notify.file_event(kind, path);
                    }
                    rootgrep_core::live::Change::EverythingChanged => {
                        shown.forget_all();
                        notify.everything_changed();
                    }
                },
            )
        });
        if let Some(live) = &live {
            live.set_roots(&set);
        }
        Arc::new(Session {
            roots: RwLock::new(Arc::new(set)),
            roots_ready,
            refresh: Mutex::new(RefreshState::default()),
            grants: Grants::default(),
            log_level: AtomicU8::new(log_level),
            roots_notes: Mutex::new(warnings),
            subscriptions,
            shown,
            live,
            state_codec,
            config,
        })
    }

    /// The roots in force now (a snapshot: later swaps do not affect it).
    pub fn roots(&self) -> Arc<RootSet> {
        self.roots.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn roots_notes(&self) -> Vec<String> {
        self.roots_notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Installs the client's roots (or the fallback when they are empty after filtering).
    pub fn set_client_roots(&self, client: Vec<Root>, mut notes: Vec<String>) {
        let (set, warnings) = choose_roots(
            Some(client),
            &self.config.dirs,
            &self.config.cwd,
            &self.config.confine,
        );
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        notes.extend(warnings);
        if set.roots.is_empty() {
            notes.push(
                "the client sent no roots: no directory is served (the working directory is \
                 not used in their place)"
                    .to_string(),
            );
        }
        for root in &set.roots {
            if root.canonical.is_none() {
                let note = format!("root {} does not exist", root.path.display());
                tracing::warn!("{note}");
                notes.push(note);
            }
        }
        tracing::info!(
            event = "roots_changed",
            roots = %crate::mcp::hints::roots(&set),
            count = set.roots.len() as u64,
            source = set.source.label(),
            "roots in force"
        );
        if let Some(live) = &self.live {
            live.set_roots(&set);
        }
        *self.roots.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(set);
        *self.roots_notes.lock().unwrap_or_else(|e| e.into_inner()) = notes;
    }

    /// Marks the first roots answer as arrived (or as not coming).
    pub fn mark_roots_ready(&self) {
        self.roots_ready.send_replace(true);
    }

    /// Waits (bounded by `--roots-timeout`) for the first roots answer, then returns the
    /// roots in force. Never hangs on a client that does not answer.
    pub async fn roots_when_ready(&self, client_has_roots: bool) -> Arc<RootSet> {
        if client_has_roots {
            let mut rx = self.roots_ready.subscribe();
            let wait = rx.wait_for(|ready| *ready);
            if tokio::time::timeout(self.config.roots_timeout, wait)
                .await
                .is_err()
            {
                tracing::warn!(
                    event = "roots_timeout",
                    "no roots/list answer within {:?}; using the fallback roots",
                    self.config.roots_timeout
                );
                self.mark_roots_ready();
            }
        }
        self.roots()
    }

    /// The server itself changed these paths: the index must not answer the next request
    /// from before the change (see [`rootgrep_core::index::FileIndex::expect_change`]).
    pub fn wrote(&self, paths: &[&std::path::Path]) {
        for path in paths {
            self.shown.forget(path);
        }
        if let Some(live) = &self.live {
            for path in paths {
                live.expect_change(path);
            }
        }
    }

    pub fn log_level(&self) -> u8 {
        self.log_level.load(Ordering::Relaxed)
    }

    pub fn roots_timeout(&self) -> Duration {
        self.config.roots_timeout
    }
}
