//! Per-process session state shared by every request: the configuration, the roots in
//! force (swapped atomically when the client's roots change), whether the first
//! `roots/list` answer has arrived, the user's out-of-root grants, and the client's log
//! level.
//!
//! One stdio process serves one client, so "session" and "process" coincide.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::access::Grants;
use crate::config::Config;
use crate::roots::{Root, RootSet, choose_roots};

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
    /// The watcher and the file index over the roots (absent with `--no-watch`).
    pub live: Option<Live>,
    /// Last warnings about roots (dropped by `--confine`, not `file://`, missing…).
    roots_notes: Mutex<Vec<String>>,
}

#[derive(Default)]
pub(crate) struct RefreshState {
    pub running: bool,
    pub pending: bool,
}

impl Session {
    pub fn new(config: Config) -> Arc<Session> {
        let (set, warnings) = choose_roots(None, &config.dirs, &config.cwd, &config.confine);
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        let (roots_ready, _) = watch::channel(false);
        let state_codec = crate::mcp::modern::new_codec();
        if let Err(why) = &state_codec {
            tracing::warn!("{why}: 2026-07-28 requests will be refused");
        }
        let subscriptions: Arc<crate::mcp::subscriptions::Subscriptions> = Arc::default();
        let live = config
            .watch
            .then(|| Live::start(subscriptions.clone(), config.index_max_files));
        if let Some(live) = &live {
            live.set_roots(&set);
        }
        Arc::new(Session {
            roots: RwLock::new(Arc::new(set)),
            roots_ready,
            refresh: Mutex::new(RefreshState::default()),
            grants: Grants::default(),
            log_level: AtomicU8::new(crate::mcp::logging::DEFAULT_LEVEL),
            roots_notes: Mutex::new(warnings),
            subscriptions,
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
        for root in &set.roots {
            if root.canonical.is_none() {
                let note = format!("root {} does not exist", root.path.display());
                tracing::warn!("{note}");
                notes.push(note);
            }
        }
        tracing::info!(roots = %set.describe(), source = set.source.label(), "roots in force");
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
                    "no roots/list answer within {:?}; using the fallback roots",
                    self.config.roots_timeout
                );
                self.mark_roots_ready();
            }
        }
        self.roots()
    }

    /// The server itself changed these paths: the index must not answer the next request
    /// from before the change (see [`crate::index::FileIndex::expect_change`]).
    pub fn wrote(&self, paths: &[&std::path::Path]) {
        if let Some(live) = &self.live {
            for path in paths {
                live.index.expect_change(path);
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

/// The live layer: a watcher over the roots feeding the file index and the subscriptions.
pub struct Live {
    pub index: Arc<crate::index::FileIndex>,
    pub watcher: crate::watch::Watcher,
    listed: Arc<RwLock<Listed>>,
}

/// Which created/removed paths change the resource list: not hidden, not ignored by the
/// root's own `.ignore` (and `.gitignore` in a git repository). Build outputs and `.git`
/// churn then do not send `list_changed`; subscribed files are notified regardless.
#[derive(Default)]
struct Listed {
    roots: Vec<(PathBuf, Option<ignore::gitignore::Gitignore>)>,
}

impl Listed {
    fn new(roots: &[PathBuf]) -> Listed {
        let roots = roots
            .iter()
            .map(|root| {
                let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
                if root.join(".git").exists() {
                    builder.add(root.join(".gitignore"));
                }
                builder.add(root.join(".ignore"));
                (root.clone(), builder.build().ok())
            })
            .collect();
        Listed { roots }
    }

    fn lists(&self, path: &std::path::Path) -> bool {
        let Some((root, matcher)) = self.roots.iter().find(|(root, _)| path.starts_with(root))
        else {
            return false;
        };
        let Ok(rel) = path.strip_prefix(root) else {
            return false;
        };
        if rel
            .components()
            .any(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
        {
            return false;
        }
        match matcher {
            Some(matcher) => !matcher
                .matched_path_or_any_parents(rel, path.is_dir())
                .is_ignore(),
            None => true,
        }
    }
}

impl Live {
    fn start(
        subscriptions: Arc<crate::mcp::subscriptions::Subscriptions>,
        max_files: usize,
    ) -> Live {
        use crate::mcp::subscriptions::Change;
        use crate::watch::WatchEvent;
        let index = Arc::new(crate::index::FileIndex::with_max_files(max_files));
        let fed = index.clone();
        let listed: Arc<RwLock<Listed>> = Arc::default();
        let lists = listed.clone();
        let watcher = crate::watch::Watcher::new(move |event: WatchEvent| {
            fed.apply(&event);
            // A path the resource list does not show changes no list: report it as a mere
            // update (subscribers still hear about it).
            let structural = |change: Change, path: &std::path::Path| {
                let listed = lists.read().unwrap_or_else(|e| e.into_inner());
                match (listed.lists(path), change) {
                    (true, change) => change,
                    // Still gone for the subscribers of files below it.
                    (false, Change::Removed) => Change::Vanished,
                    (false, _) => Change::Modified,
                }
            };
            // Ignore rules changed, or a root was (re)watched (it may have been replaced
            // by a directory with other rules): read them again.
            let rules_changed = match &event {
                WatchEvent::Changed(path)
                | WatchEvent::Created(path)
                | WatchEvent::Removed(path) => path
                    .file_name()
                    .is_some_and(|n| n == ".gitignore" || n == ".ignore"),
                WatchEvent::Status(_, crate::watch::RootStatus::Watching) => true,
                _ => false,
            };
            if rules_changed {
                let roots: Vec<PathBuf> = lists
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .roots
                    .iter()
                    .map(|(root, _)| root.clone())
                    .collect();
                *lists.write().unwrap_or_else(|e| e.into_inner()) = Listed::new(&roots);
            }
            match event {
                WatchEvent::Changed(path) => subscriptions.file_event(Change::Modified, path),
                WatchEvent::Created(path) => {
                    subscriptions.file_event(structural(Change::Created, &path), path)
                }
                WatchEvent::Removed(path) => {
                    subscriptions.file_event(structural(Change::Removed, &path), path)
                }
                WatchEvent::Overflow => {
                    tracing::warn!(
                        "file watching overflowed (events were lost); the index is rebuilt and \
                         searches walk the disk meanwhile"
                    );
                    subscriptions.everything_changed();
                }
                WatchEvent::Error(error) => tracing::warn!("file watching: {error}"),
                WatchEvent::Status(root, crate::watch::RootStatus::Failed(why)) => tracing::warn!(
                    "{} is not watched ({why}); searches there walk the disk",
                    root.display()
                ),
                _ => {}
            }
        });
        Live {
            index,
            watcher,
            listed,
        }
    }

    fn set_roots(&self, set: &RootSet) {
        let roots = set.existing();
        *self.listed.write().unwrap_or_else(|e| e.into_inner()) = Listed::new(&roots);
        self.index.set_roots(&roots);
        self.watcher.set_roots(&roots);
    }
}
