//! The live layer: one watcher over the roots feeding every index kept beside them (the
//! file index, then the symbol index and the ranked search index standing on it) and
//! telling the
//! subscribers what changed, as plain domain [`Change`]s. It knows nothing of MCP: the
//! adapter (`mcp/session.rs`) installs the sink that turns changes into notifications.
//!
//! Why it is one place: every consumer must see the same events in the same order as the
//! subscribers (an index fresh before the notification of a change goes out, so a client
//! reacting to it reads the new state), the roots must be re-targeted together, and the
//! server's own writes must reach every consumer ([`Live::expect_change`]).
//!
//! Adding an index: implement [`Consumer`], then register it in [`Live::start`] (one line
//! there, plus a field if callers need to query it).
//!
//! What changes the resource list is decided here too (`Listed`): created or removed
//! paths that are neither hidden nor ignored by the root's own `.ignore` (and `.gitignore`
//! in a git repository), read as every walk reads them ([`crate::ignores`]: never a FIFO,
//! never past the size limit). Build outputs and `.git` churn then do not announce a list
//! change; subscribers of files below them still hear about them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::content::index::ContentIndex;
use crate::history::HistoryIndex;
use crate::ignores;
use crate::index::FileIndex;
use crate::ranked::RankedIndex;
use crate::roots::RootSet;
use crate::store::Store;
use crate::symbols::index::SymbolIndex;
use crate::watch::{Consumer, RootStatus, WatchEvent, Watcher};

impl Consumer for FileIndex {
    fn set_roots(&self, roots: &[PathBuf]) {
        FileIndex::set_roots(self, roots);
    }

    fn apply(&self, event: &WatchEvent) {
        FileIndex::apply(self, event);
    }

    fn expect_change(&self, path: &Path) {
        FileIndex::expect_change(self, path);
    }
}

/// The history follows the roots only: HEAD is compared at each query, not watched.
impl Consumer for HistoryIndex {
    fn set_roots(&self, roots: &[PathBuf]) {
        HistoryIndex::set_roots(self, roots);
    }

    fn apply(&self, _event: &WatchEvent) {}
}

/// What happened to one path, as subscribers see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChange {
    Modified,
    Created,
    Removed,
    /// Removed, but not a path the resource list shows (hidden or ignored): the list
    /// does not change; subscribed files at or below it are gone all the same.
    Vanished,
}

/// A change delivered to the subscribers' sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    File(FileChange, PathBuf),
    /// Events were lost (an overflow): anything may have changed.
    EverythingChanged,
}

/// The watcher, the consumers it feeds, and the list rules for the subscribers' changes.
pub struct Live {
    /// The file index (also registered as a consumer).
    pub index: Arc<FileIndex>,
    /// The symbol index (registered after the file index, which it reads).
    pub symbols: Option<Arc<SymbolIndex>>,
    /// The search index (registered after the symbol index: it reads both).
    pub search: Option<Arc<RankedIndex>>,
    /// The content index for `grep` (registered after the file index, which it reads).
    pub content: Option<Arc<ContentIndex>>,
    /// The git history `search` reads (registered for the roots only).
    pub history: Option<Arc<HistoryIndex>>,
    pub watcher: Watcher,
    consumers: Arc<[Arc<dyn Consumer>]>,
    listed: Arc<RwLock<Listed>>,
}

impl Live {
    /// Starts watching (no roots yet) with the file index holding at most `max_files` files
    /// per root, the content index when `content`, the git history when `history` (read
    /// only within those directories when it names any: `--confine`), the indexes starting
    /// from and saving to `store`; every change for
    /// subscribers goes to `sink` (on the watcher's thread; it must not block).
    pub fn start(
        max_files: usize,
        store: Option<Store>,
        content: bool,
        history: Option<Vec<PathBuf>>,
        sink: impl Fn(Change) + Send + Sync + 'static,
    ) -> Live {
        let store = store.map(Arc::new);
        let index = Arc::new(FileIndex::with_store(max_files, store.clone()));
        let symbols = Arc::new(SymbolIndex::with_store(index.clone(), store.clone()));
        let content = content.then(|| Arc::new(ContentIndex::new(index.clone(), store.clone())));
        let history = history.map(|confine| Arc::new(HistoryIndex::new(store.clone(), confine)));
        let mut search = RankedIndex::new(index.clone(), Some(symbols.clone()), store);
        if let Some(history) = &history {
            search = search.with_history(history.clone());
        }
        let search = Arc::new(search);
        // The one place where consumers are registered. Order matters: the symbol index
        // reads the file index, and the search index both, which must have applied an
        // event first; the content index reads the file index.
        let mut consumers: Vec<Arc<dyn Consumer>> = vec![index.clone()];
        if let Some(content) = &content {
            consumers.push(content.clone());
        }
        consumers.extend([symbols.clone() as Arc<dyn Consumer>, search.clone()]);
        if let Some(history) = &history {
            consumers.push(history.clone());
        }
        let mut live = Live::with_consumers(index, consumers, sink);
        live.symbols = Some(symbols);
        live.search = Some(search);
        live.content = content;
        live.history = history;
        live
    }

    /// [`Live::start`] with the consumers given (`index` among them or not).
    pub(crate) fn with_consumers(
        index: Arc<FileIndex>,
        consumers: Vec<Arc<dyn Consumer>>,
        sink: impl Fn(Change) + Send + Sync + 'static,
    ) -> Live {
        let consumers: Arc<[Arc<dyn Consumer>]> = consumers.into();
        let listed: Arc<RwLock<Listed>> = Arc::default();
        let fed = consumers.clone();
        let lists = listed.clone();
        let watcher = Watcher::new(move |event: WatchEvent| {
            // Consumers first: a subscriber told of a change must find it in the indexes.
            for consumer in fed.iter() {
                consumer.apply(&event);
            }
            notify(&lists, &event, &sink);
        });
        // Readers of the file index wait for every event queued before their request
        // (Linux: the barrier needs inotify's ordering; elsewhere the index is served as
        // soon as the events that arrived are applied, best effort).
        #[cfg(target_os = "linux")]
        index.set_barrier(watcher.barrier());
        Live {
            index,
            symbols: None,
            search: None,
            content: None,
            history: None,
            watcher,
            consumers,
            listed,
        }
    }

    /// Re-targets every consumer, the list rules, then the watcher.
    pub fn set_roots(&self, set: &RootSet) {
        let roots = set.existing();
        *self.listed.write().unwrap_or_else(|e| e.into_inner()) = Listed::new(&roots);
        for consumer in self.consumers.iter() {
            consumer.set_roots(&roots);
        }
        self.watcher.set_roots(&roots);
    }

    /// The server itself changed `path` (see [`Consumer::expect_change`]).
    pub fn expect_change(&self, path: &Path) {
        for consumer in self.consumers.iter() {
            consumer.expect_change(path);
        }
    }
}

/// Turns one watcher event into the subscribers' changes (and re-reads the list rules
/// when they may have changed).
fn notify(lists: &RwLock<Listed>, event: &WatchEvent, sink: &impl Fn(Change)) {
    // A path the resource list does not show changes no list: report it as a mere update
    // (subscribers still hear about it).
    let structural = |change: FileChange, path: &Path| {
        let listed = lists.read().unwrap_or_else(|e| e.into_inner());
        match (listed.lists(path), change) {
            (true, change) => change,
            // Still gone for the subscribers of files below it.
            (false, FileChange::Removed) => FileChange::Vanished,
            (false, _) => FileChange::Modified,
        }
    };
    // Ignore rules changed, or a root was (re)watched (it may have been replaced by a
    // directory with other rules): read them again.
    let rules_changed = match event {
        WatchEvent::Changed(path) | WatchEvent::Created(path) | WatchEvent::Removed(path) => path
            .file_name()
            .is_some_and(|n| n == ".gitignore" || n == ".ignore"),
        WatchEvent::Status(_, RootStatus::Watching) => true,
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
        WatchEvent::Changed(path) => sink(Change::File(FileChange::Modified, path.clone())),
        WatchEvent::Created(path) => sink(Change::File(
            structural(FileChange::Created, path),
            path.clone(),
        )),
        WatchEvent::Removed(path) => sink(Change::File(
            structural(FileChange::Removed, path),
            path.clone(),
        )),
        WatchEvent::Overflow => {
            tracing::warn!(
                event = "watch_overflow",
                "file watching overflowed (events were lost); the index is rebuilt and \
                 searches walk the disk meanwhile"
            );
            sink(Change::EverythingChanged);
        }
        WatchEvent::Error(error) => {
            tracing::warn!(event = "watch_error", "file watching: {error}")
        }
        WatchEvent::Status(root, RootStatus::Failed(why)) => tracing::warn!(
            event = "watch_failed",
            root = %root.display(),
            "{} is not watched ({why}); searches there walk the disk",
            root.display()
        ),
        _ => {}
    }
}

/// Which created/removed paths change the resource list: not hidden, not ignored by the
/// root's own `.ignore` (and `.gitignore` in a git repository).
#[derive(Default)]
struct Listed {
    roots: Vec<(PathBuf, Option<ignore::gitignore::Gitignore>)>,
}

impl Listed {
    fn new(roots: &[PathBuf]) -> Listed {
        let roots = roots
            .iter()
            .map(|root| {
                // Read as every walk reads them (crate::ignores): an ignore file that is a
                // FIFO would otherwise block the session's start for good.
                let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
                let mut names = vec![".ignore"];
                if root.join(".git").exists() {
                    names.insert(0, ".gitignore");
                }
                for name in names {
                    let path = root.join(name);
                    match ignores::read_ignore_file(root, &path) {
                        Ok(Some(bytes)) => ignores::add_lines(&mut builder, &path, &bytes),
                        Ok(None) => {}
                        Err(skipped) => ignores::warn_once(&skipped),
                    }
                }
                (root.clone(), builder.build().ok())
            })
            .collect();
        Listed { roots }
    }

    fn lists(&self, path: &Path) -> bool {
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
        let Some(matcher) = matcher else {
            return true;
        };
        // Whether it is a directory matters only to rules that name directories (`out/`):
        // most paths (all those below an ignored directory) are decided without a stat.
        let as_file = matcher.matched_path_or_any_parents(rel, false).is_ignore();
        let as_dir = matcher.matched_path_or_any_parents(rel, true).is_ignore();
        match as_file == as_dir {
            true => !as_file,
            false => !matcher
                .matched_path_or_any_parents(rel, path.is_dir())
                .is_ignore(),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    /// A second index beside the file index: it only records what it was given.
    #[derive(Default)]
    struct Recorder {
        roots: Mutex<Vec<PathBuf>>,
        events: Mutex<Vec<WatchEvent>>,
        expected: Mutex<Vec<PathBuf>>,
    }

    impl Consumer for Recorder {
        fn set_roots(&self, roots: &[PathBuf]) {
            *self.roots.lock().unwrap() = roots.to_vec();
        }
        fn apply(&self, event: &WatchEvent) {
            self.events.lock().unwrap().push(event.clone());
        }
        fn expect_change(&self, path: &Path) {
            self.expected.lock().unwrap().push(path.to_path_buf());
        }
    }

    fn until(what: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if what() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The list rules without a stat where it cannot matter, and with one where it does:
    /// `out/` ignores a directory named `out`, not a file.
    #[test]
    fn listed_tells_directories_from_files_only_when_a_rule_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".ignore"), "out/\n*.o\n").unwrap();
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/out"), "").unwrap();
        let listed = Listed::new(std::slice::from_ref(&root));
        assert!(!listed.lists(&root.join("out")));
        assert!(!listed.lists(&root.join("out/deep/x.rs")));
        assert!(listed.lists(&root.join("sub/out")), "a file named out");
        assert!(!listed.lists(&root.join("a.o")));
        assert!(listed.lists(&root.join("src.rs")));
        assert!(!listed.lists(&root.join(".hidden/x.rs")));
    }

    /// Registering a second consumer is all it takes for it to follow the roots, the
    /// watcher's events and the server's own writes, beside the file index; subscribers
    /// get domain changes, with what the list does not show demoted.
    #[test]
    fn a_second_consumer_is_fed_beside_the_file_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".ignore"), "out/\n").unwrap();
        std::fs::create_dir(root.join("out")).unwrap();
        let index = Arc::new(FileIndex::new());
        let recorder = Arc::new(Recorder::default());
        let changes: Arc<Mutex<Vec<Change>>> = Arc::default();
        let seen = changes.clone();
        let live = Live::with_consumers(
            index.clone(),
            vec![index.clone(), recorder.clone()],
            move |change| seen.lock().unwrap().push(change),
        );
        let set = RootSet::new(
            vec![crate::roots::Root::new(root.clone(), None)],
            crate::roots::RootSource::CommandLine,
        );
        live.set_roots(&set);
        assert_eq!(*recorder.roots.lock().unwrap(), std::slice::from_ref(&root));
        assert!(index.wait_fresh(&root, Duration::from_secs(10)).is_some());

        std::fs::write(root.join("new.rs"), "x").unwrap();
        std::fs::write(root.join("out/built.o"), "x").unwrap();
        let created = |p: &Path| Change::File(FileChange::Created, p.to_path_buf());
        let demoted = Change::File(FileChange::Modified, root.join("out/built.o"));
        assert!(
            until(|| {
                let changes = changes.lock().unwrap();
                changes.contains(&created(&root.join("new.rs"))) && changes.contains(&demoted)
            }),
            "{:?}",
            changes.lock().unwrap()
        );
        assert!(
            recorder
                .events
                .lock()
                .unwrap()
                .contains(&WatchEvent::Created(root.join("new.rs")))
        );
        live.expect_change(&root.join("mine.rs"));
        assert_eq!(*recorder.expected.lock().unwrap(), [root.join("mine.rs")]);
    }
}
