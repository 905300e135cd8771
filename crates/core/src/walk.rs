//! The parallel directory walker that both the search engine and the file index stand on,
//! and the state a walk shares with the outside world: [`Control`] (the stop flag, the
//! progress counters, and the request's share of the search pool: every loop over files,
//! here and above, takes a [`Control::turn`] around each file, see [`crate::pool`]) and
//! [`Stats`] (what happened to the entries it met).
//!
//! It sits below `index` and `search` so that neither needs the other to walk: the index
//! build is a walk with its own per-thread collector, a search is a walk with matchers.
//! A walk counts as a running search ([`SearchRunning`]): background work steps aside
//! meanwhile (`pool::pacing`).
//!
//! Rules enforced here, for every walk: symlinks are never followed (a walk cannot leave
//! its tree, and loops cannot occur), not even the start path, which `ignore` would follow
//! (every start path is canonical, so one that is a symlink now was swapped); hidden
//! entries are skipped unless asked for, whatever the globs; [`Control`] is checked before every entry; per-entry failures are counted in
//! [`Stats::skipped_unreadable`] and the walk goes on; ignore files are read by
//! [`crate::ignores`], never by the `ignore` crate (which would open a FIFO and block), and
//! those not applied are listed in [`Stats::skipped_ignore_files`].

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ignore::overrides::Override;
use ignore::types::Types;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use crate::ignores::{Rules, SkippedIgnoreFile};
use crate::mutex::lock;
use crate::pool::pacing::{SearchRunning, thread_count};
use crate::pool::{Gate, Turn};

// ---------------------------------------------------------------------------------------
// Control: the stop flag and progress counters (polled from another thread)

/// Cancellation flag and progress counters for one search, and its share of the search
/// pool: the [`Gate`] its threads take a [`Turn`] at around each file (none: no limit).
#[derive(Debug, Default)]
pub struct Control {
    /// Set to stop the search; it then returns promptly with `cancelled: true`.
    pub cancelled: AtomicBool,
    /// Files the search has looked at so far (searched or skipped). Only ever grows.
    pub files_examined: AtomicU64,
    /// Matching lines seen so far. Only ever grows (matches later dropped because their
    /// file turned out to be binary stay counted).
    pub matches: AtomicU64,
    gate: Option<Arc<Gate>>,
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }

    /// A control whose threads share the pool slots of `gate` (a request's lease).
    pub fn sharing(gate: Arc<Gate>) -> Self {
        Control {
            gate: Some(gate),
            ..Self::default()
        }
    }

    /// Fresh counters and stop flag, the same share of the pool (a later phase of the
    /// same request).
    pub(crate) fn same_share(&self) -> Self {
        Control {
            gate: self.gate.clone(),
            ..Self::default()
        }
    }

    /// Waits for this search's turn to work on one file (see [`crate::pool`]): every loop
    /// over files takes one around each file, so a search gives threads back between files.
    pub(crate) fn turn(&self) -> Turn<'_> {
        match &self.gate {
            Some(gate) => gate.turn(),
            None => Turn::free(),
        }
    }

    /// Asks the search to stop (threads parked for a turn wake to see it).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
        if let Some(gate) = &self.gate {
            gate.open();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    pub fn files_examined(&self) -> u64 {
        self.files_examined.load(Ordering::Relaxed)
    }

    pub fn matches(&self) -> u64 {
        self.matches.load(Ordering::Relaxed)
    }

    pub(crate) fn file_examined(&self) {
        self.files_examined.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn matched(&self) {
        self.matches.fetch_add(1, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------------------
// Stats

/// What happened to the files a search looked at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Files searched to the end (or to their first match in files-with-matches mode).
    pub files_searched: u64,
    /// Bytes the searcher read from those files (after transcoding).
    pub bytes_searched: u64,
    pub elapsed: Duration,
    /// Files found by walking that contain a NUL byte; their matches are dropped.
    pub skipped_binary: u64,
    /// Files over `max_filesize`, and files the searcher would have to hold in memory
    /// beyond [`MAX_BUFFER`](crate::search::sink::MAX_BUFFER) at once (a single line that long, or
    /// a whole file in multiline mode).
    pub skipped_too_large: u64,
    /// Files or directories that could not be read: permission denied, vanished during the
    /// search, broken targets, symlink loops, and special files (FIFOs, sockets, devices),
    /// which are never opened.
    pub skipped_unreadable: u64,
    /// Diagnostic: the most entries held in memory at once (per-thread collectors plus the
    /// file being searched, summed over threads). Stays near `threads * 2 * (offset+limit)`
    /// however large the full result is.
    pub peak_retained: usize,
    /// Directory targets whose files came from the file index instead of a walk.
    pub indexed_targets: u64,
    /// Ignore files not applied (not regular files, too large), sorted, each once.
    pub skipped_ignore_files: Vec<SkippedIgnoreFile>,
}

impl Stats {
    pub(crate) fn add(&mut self, other: &Stats) {
        self.files_searched += other.files_searched;
        self.bytes_searched += other.bytes_searched;
        self.skipped_binary += other.skipped_binary;
        self.skipped_too_large += other.skipped_too_large;
        self.skipped_unreadable += other.skipped_unreadable;
        self.peak_retained += other.peak_retained;
        self.indexed_targets += other.indexed_targets;
        self.note_skipped(&other.skipped_ignore_files);
    }

    /// Adds ignore files that were not applied (kept sorted, each once).
    pub(crate) fn note_skipped(&mut self, skipped: &[SkippedIgnoreFile]) {
        if skipped.is_empty() {
            return;
        }
        self.skipped_ignore_files.extend_from_slice(skipped);
        self.skipped_ignore_files.sort();
        self.skipped_ignore_files.dedup();
    }
}

// ---------------------------------------------------------------------------------------
// The walker

/// The filters shared by every directory walk of one request.
#[derive(Clone, Debug)]
pub(crate) struct WalkOptions {
    pub hidden: bool,
    pub no_ignore: bool,
    pub types: Option<Types>,
}

/// An entry filter added to a [`Walker`]'s own (see [`Walker::also_filter`]).
type Extra = Arc<dyn Fn(&DirEntry) -> bool + Send + Sync>;

/// A walker for one directory target: the `ignore` crate's `WalkBuilder` (dereferenced to
/// it, for depth and thread settings) with its ignore-file filters off, and rootgrep's own
/// ([`crate::ignores::Rules`]) in its entry filter, so no ignore file that is not a regular
/// file is ever opened. What it skipped is in [`Walker::skipped_ignore_files`].
pub struct Walker {
    builder: WalkBuilder,
    rules: Option<Arc<Rules>>,
    overrides: Option<Override>,
    hidden: bool,
}

impl WalkOptions {
    /// Builds the walker for one directory target. `overrides` are the `--glob` filters,
    /// which are rooted at this directory.
    pub(crate) fn walker(&self, dir: &Path, overrides: Option<Override>) -> Walker {
        let mut builder = WalkBuilder::new(dir);
        builder
            .standard_filters(false)
            .hidden(!self.hidden)
            .follow_links(false)
            .threads(thread_count());
        if let Some(types) = &self.types {
            builder.types(types.clone());
        }
        if let Some(overrides) = &overrides {
            builder.overrides(overrides.clone());
        }
        let mut walker = Walker {
            builder,
            rules: (!self.no_ignore).then(|| Arc::new(Rules::new(dir))),
            overrides,
            hidden: self.hidden,
        };
        walker.install_filter(None);
        walker
    }
}

impl Walker {
    /// Adds `extra` to the walker's entry filter (after the hidden and ignore rules): an
    /// entry it refuses is skipped, a directory with everything below it.
    pub(crate) fn also_filter(
        &mut self,
        extra: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
    ) -> &mut Walker {
        self.install_filter(Some(Arc::new(extra)));
        self
    }

    fn install_filter(&mut self, extra: Option<Extra>) {
        let rules = self.rules.clone();
        let overrides = self.overrides.clone();
        let hidden = self.hidden;
        self.builder.filter_entry(move |entry| {
            if entry.depth() > 0 {
                // A whitelisting --glob would otherwise let hidden entries through
                // (ripgrep's behaviour); rootgrep skips hidden entries unless `hidden` is
                // asked for.
                if !hidden && entry.file_name().as_encoded_bytes().starts_with(b".") {
                    return false;
                }
                if let Some(rules) = &rules {
                    // The crate has already applied the globs and types; a glob match
                    // beats the ignore files, as in ripgrep.
                    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                    let globbed = overrides
                        .as_ref()
                        .is_some_and(|o| o.matched(entry.path(), is_dir).is_whitelist());
                    if !globbed && !rules.keeps(entry) {
                        return false;
                    }
                }
            }
            extra.as_ref().is_none_or(|extra| extra(entry))
        });
    }

    /// The ignore files this walk met but did not apply (not regular files, too large).
    pub fn skipped_ignore_files(&self) -> Vec<SkippedIgnoreFile> {
        self.rules
            .as_ref()
            .map(|rules| rules.skipped())
            .unwrap_or_default()
    }

    /// The paths whose change would change this walk's ignore rules
    /// ([`Rules::inputs`](crate::ignores::Rules::inputs)).
    pub(crate) fn ignore_inputs(&self) -> Vec<std::path::PathBuf> {
        self.rules
            .as_ref()
            .map(|rules| rules.inputs())
            .unwrap_or_default()
    }
}

impl std::ops::Deref for Walker {
    type Target = WalkBuilder;
    fn deref(&self) -> &WalkBuilder {
        &self.builder
    }
}

impl std::ops::DerefMut for Walker {
    fn deref_mut(&mut self) -> &mut WalkBuilder {
        &mut self.builder
    }
}

/// Per-thread state of a walk: what to do with each regular file, and where to count.
pub(crate) trait PerThread: Send {
    fn stats(&mut self) -> &mut Stats;
    /// Called for every regular file the walk yields (after the ignore filters).
    fn file(&mut self, entry: &DirEntry);
    /// Called for every other entry the walk yields: directories (the start directory
    /// too, at depth 0), symlinks, special files. Searches ignore them; the file index
    /// records directories.
    fn other(&mut self, _entry: &DirEntry) {}
    /// Called for every entry the walk could not read (already counted in
    /// [`Stats::skipped_unreadable`]); the file index records where it was.
    fn failed(&mut self, _err: &ignore::Error) {}
}

/// Walks one directory in parallel, giving each thread its own state from `make`, and
/// returns every thread's state when the walk ends (or is cancelled). Counts as a running
/// search (see [`SearchRunning`]).
pub(crate) fn walk_dir<T: PerThread>(
    walker: &Walker,
    control: &Control,
    make: &(dyn Fn() -> T + Sync),
) -> Vec<T> {
    let _running = SearchRunning::start();
    walk_dir_background(walker, control, make)
}

/// [`walk_dir`] for background work (the index build), which does not count as a search.
pub(crate) fn walk_dir_background<T: PerThread>(
    walker: &Walker,
    control: &Control,
    make: &(dyn Fn() -> T + Sync),
) -> Vec<T> {
    let done = Arc::new(Mutex::new(Vec::new()));
    let mut builder = VisitorBuilder {
        control,
        make,
        done: Arc::clone(&done),
    };
    walker.build_parallel().visit(&mut builder);
    drop(builder);
    // Every visitor was dropped when its thread ended, inside `visit`.
    let mut states = std::mem::take(&mut *lock(&done));
    if let Some(first) = states.first_mut() {
        first.stats().note_skipped(&walker.skipped_ignore_files());
    }
    states
}

struct VisitorBuilder<'a, T> {
    control: &'a Control,
    make: &'a (dyn Fn() -> T + Sync),
    done: Arc<Mutex<Vec<T>>>,
}

impl<'s, T: PerThread + 's> ParallelVisitorBuilder<'s> for VisitorBuilder<'s, T> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            control: self.control,
            state: Some((self.make)()),
            done: Arc::clone(&self.done),
        })
    }
}

/// One walker thread. Its state is handed back through `done` when the thread drops it,
/// which is how per-thread results reach the caller without a lock per file.
struct Visitor<'a, T: PerThread> {
    control: &'a Control,
    state: Option<T>,
    done: Arc<Mutex<Vec<T>>>,
}

impl<T: PerThread> ParallelVisitor for Visitor<'_, T> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.control.is_cancelled() {
            return WalkState::Quit;
        }
        let Some(state) = self.state.as_mut() else {
            return WalkState::Quit;
        };
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                tracing::debug!(%err, "walk entry skipped");
                state.stats().skipped_unreadable += 1;
                state.failed(&err);
                return WalkState::Continue;
            }
        };
        let Some(kind) = entry.file_type() else {
            return WalkState::Continue;
        };
        if entry.depth() == 0
            && kind.is_dir()
            && std::fs::symlink_metadata(entry.path()).is_ok_and(|m| m.file_type().is_symlink())
        {
            // The walker follows the path it starts from, symlink or not. Every start path
            // is canonical (a root, a resolved target, a directory the index holds), so one
            // that is a symlink now was swapped since: nothing it leads to is listed.
            tracing::debug!(path = %entry.path().display(), "walk start is a symlink now: skipped");
            state.stats().skipped_unreadable += 1;
            return WalkState::Skip;
        }
        if kind.is_file() {
            self.control.file_examined();
            let _turn = self.control.turn();
            if self.control.is_cancelled() {
                return WalkState::Quit; // woken from a wait for the turn by the cancel
            }
            state.file(&entry);
            return WalkState::Continue;
        }
        if !kind.is_dir() && !kind.is_symlink() {
            // FIFO, socket or device: opening a FIFO would block the thread forever.
            self.control.file_examined();
            state.stats().skipped_unreadable += 1;
        }
        state.other(&entry);
        WalkState::Continue
    }
}

impl<T: PerThread> Drop for Visitor<'_, T> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            lock(&self.done).push(state);
        }
    }
}

#[cfg(test)]
mod ignore_tests;
