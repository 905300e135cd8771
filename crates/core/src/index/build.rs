//! Building one root's index: a parallel walk exactly as a default search walks (the
//! shared walker of [`crate::walk`], with a per-thread collector), then [`pack`] sorts what
//! was collected into the compact [`RootIndex`]. The build is background work: it pauses
//! while a search runs (at most [`YIELD_MAX`] in all) and gives up past the file limit.

use crate::platform::os::OsStrExt;
use std::path::Path;
use std::time::Instant;

use ignore::DirEntry;

use super::root::{RootIndex, to_nanos};
use crate::pool::pacing::{YIELD_MAX, yield_to_searches};
use crate::walk::{Control, PerThread, Stats, WalkOptions, walk_dir_background};

use super::pack::pack;
use super::part::Part;

/// Walks `root` exactly as a default search does and builds its index. `None` when
/// `control` was cancelled meanwhile.
pub fn build(root: &Path, control: &Control) -> Option<RootIndex> {
    build_limited(root, control, usize::MAX).ok().flatten()
}

/// Most files one root's index holds by default (about 100 bytes of memory each at rest):
/// a bigger tree is searched by walking instead, so a root such as a home directory cannot
/// make the server hold hundreds of MiB.
pub const DEFAULT_MAX_FILES: usize = 1_000_000;

/// Like [`build`], but gives up once the tree holds more than `max_files` files:
/// `Err(max_files)` then, `Ok(None)` when cancelled.
pub(crate) fn build_limited(
    root: &Path,
    control: &Control,
    max_files: usize,
) -> Result<Option<RootIndex>, usize> {
    let started = Instant::now();
    let walked = collect(root, root, None, control, max_files, started)?;
    let packed = walked.map(|(all, unreadable)| pack(root.to_path_buf(), all, unreadable, started));
    // The walk's lists (several times the packed index on a large tree) are freed: give
    // their memory back rather than keep the walk's peak for the server's life.
    crate::memory::release_freed();
    Ok(packed)
}

/// Walker threads per core for a whole root's build (measured: BENCHMARKS.md).
const IO_WALKERS_PER_CORE: usize = 4;

/// Walks `dir` (`root` itself, or a visited directory below it) exactly as a default
/// search walks `root`, down to `max_depth` (children of `dir` are at depth 1), and
/// collects what the index holds, with the count of unreadable entries. `Err(max_files)`
/// past the file limit, `Ok(None)` when cancelled.
pub(super) fn collect(
    root: &Path,
    dir: &Path,
    max_depth: Option<usize>,
    control: &Control,
    max_files: usize,
    started: Instant,
) -> Result<Option<(Part, u64)>, usize> {
    let counted = std::sync::atomic::AtomicUsize::new(0);
    let too_many = std::sync::atomic::AtomicBool::new(false);
    let options = WalkOptions {
        hidden: false,
        no_ignore: false,
        types: None,
    };
    // Rooted below `root`, the walker still applies the ignore files of every directory
    // above `dir` (ignore's parent rules), so it decides exactly as the whole walk would.
    let mut walker = options.walker(dir, None);
    if max_depth.is_some() {
        // One directory's listing: not worth a thread per core.
        walker.max_depth(max_depth).threads(1);
    } else {
        // A whole root: after a reboot the walk waits on the disk for every directory and
        // `stat`, so more walkers than cores keep more reads in flight.
        walker.threads(IO_WALKERS_PER_CORE * crate::pool::pacing::thread_count());
    }
    let make = || Collector {
        root,
        part: Part::default(),
        stats: Stats::default(),
        limit: Limit {
            counted: &counted,
            max_files,
            too_many: &too_many,
            control,
            pause_until: started + YIELD_MAX,
        },
        list_below: max_depth.is_none(),
    };
    let parts = walk_dir_background(&walker, control, &make);
    if too_many.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(max_files);
    }
    if control.is_cancelled() {
        return Ok(None);
    }
    let mut unreadable = 0;
    // Merge into exactly sized buffers: growing by doubling would hold up to twice the
    // arena while the last part is copied in.
    let mut all = Part {
        arena: Vec::with_capacity(parts.iter().map(|c| c.part.arena.len()).sum()),
        files: Vec::with_capacity(parts.iter().map(|c| c.part.files.len()).sum()),
        dirs: Vec::with_capacity(parts.iter().map(|c| c.part.dirs.len()).sum()),
        others: Vec::with_capacity(parts.iter().map(|c| c.part.others.len()).sum()),
        listed: Vec::with_capacity(parts.iter().map(|c| c.part.listed.len()).sum()),
        skipped: Vec::new(),
        ignored: Vec::new(),
        skipped_ignore: Vec::new(),
        ignore_inputs: walker.ignore_inputs(),
    };
    for collector in parts {
        unreadable += collector.stats.skipped_unreadable;
        all.skipped_ignore
            .extend(collector.stats.skipped_ignore_files);
        all.absorb(collector.part);
    }
    Ok(Some((all, unreadable)))
}

/// The shared file budget of one build.
pub(super) struct Limit<'a> {
    counted: &'a std::sync::atomic::AtomicUsize,
    max_files: usize,
    too_many: &'a std::sync::atomic::AtomicBool,
    control: &'a Control,
    /// The build stops pausing for searches after this (see [`YIELD_MAX`]).
    pause_until: Instant,
}

impl Limit<'_> {
    /// Counts one file; past the budget, stops the whole build.
    fn count(&self) {
        use std::sync::atomic::Ordering;
        if self.counted.fetch_add(1, Ordering::Relaxed) >= self.max_files {
            self.too_many.store(true, Ordering::Relaxed);
            self.control.cancel();
        }
    }
}

/// One walker thread's share of the build.
pub(super) struct Collector<'a> {
    root: &'a Path,
    part: Part,
    stats: Stats,
    limit: Limit<'a>,
    /// List the directories below the walk's start to learn their ignored entries (an
    /// update re-listing one directory keeps what it knew of those below it).
    list_below: bool,
}

impl Collector<'_> {
    /// The build is background work: it pauses while a search runs (the first search of
    /// a session must not share the cores with it), for at most [`YIELD_MAX`] at a time.
    fn yield_to_searches(&self) {
        let left = self
            .limit
            .pause_until
            .saturating_duration_since(Instant::now());
        if !left.is_zero() {
            yield_to_searches(|| self.limit.control.is_cancelled(), left);
        }
    }

    fn rel<'p>(&self, path: &'p Path) -> &'p [u8] {
        path.strip_prefix(self.root)
            .unwrap_or(path)
            .as_os_str()
            .as_bytes()
    }
}

impl PerThread for Collector<'_> {
    fn stats(&mut self) -> &mut Stats {
        &mut self.stats
    }

    fn file(&mut self, entry: &DirEntry) {
        self.yield_to_searches();
        // A file that vanished between the listing and the stat is left out; its removal
        // event makes the build stale anyway.
        let Ok(meta) = entry.metadata() else {
            return;
        };
        self.limit.count();
        let span = self.part.push(self.rel(entry.path()));
        let mtime = to_nanos(meta.modified().ok());
        let ident = crate::platform::os::identity(&meta);
        self.part.files.push((span, meta.len(), mtime, ident));
    }

    fn other(&mut self, entry: &DirEntry) {
        self.yield_to_searches();
        let rel = self.rel(entry.path()).to_vec();
        let span = self.part.push(&rel);
        if !entry.file_type().is_some_and(|t| t.is_dir()) {
            self.part.others.push(span);
            if !entry.file_type().is_some_and(|t| t.is_symlink()) {
                self.part.skipped.push((span, true));
            }
            return;
        }
        self.part.dirs.push(span);
        if entry.depth() > 0 && !self.list_below {
            return;
        }
        // List the directory once more to learn what the ignore rules skip in it: the
        // entries the walk does not yield. Hidden entries are never searched, so skip them.
        let Ok(listing) = std::fs::read_dir(entry.path()) else {
            return;
        };
        for child in listing.flatten() {
            let name = child.file_name();
            if name.as_bytes().starts_with(b".") {
                continue;
            }
            let Ok(kind) = child.file_type() else {
                continue;
            };
            if !kind.is_file() && !kind.is_dir() {
                continue;
            }
            let name = self.part.push(name.as_bytes());
            self.part.listed.push((span, name, kind.is_dir()));
        }
    }

    fn failed(&mut self, err: &ignore::Error) {
        let rel = error_path(err).map_or(Vec::new(), |path| self.rel(path).to_vec());
        let span = self.part.push(&rel);
        self.part.skipped.push((span, false));
    }
}

/// The path an entry error of the walk is about, if it names one.
pub(super) fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::index::tests::Fixture;
    use std::path::Path;

    #[test]
    fn a_build_past_the_file_limit_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for i in 0..10 {
            std::fs::write(root.join(format!("f{i}")), "").unwrap();
        }
        assert_eq!(
            super::build_limited(&root, &Control::new(), 5).err(),
            Some(5)
        );
        let built = super::build_limited(&root, &Control::new(), 100)
            .unwrap()
            .unwrap();
        assert_eq!(built.len(), 10);
    }

    fn rels(index: &RootIndex) -> Vec<String> {
        index
            .files()
            .map(|f| f.rel.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn build_holds_what_the_walk_yields_in_path_order() {
        let f = Fixture::new();
        let index = build(&f.root, &Control::new()).unwrap();
        // Component order: `a/b` sorts before `a.b`, as `Path` compares them.
        assert_eq!(
            rels(&index),
            ["a/b", "a/c/d.rs", "a.b"],
            "hidden and ignored left out"
        );
        assert_eq!(index.info().files, 3);
        assert_eq!(index.find_file(Path::new("a/c/d.rs")), Some(1));
        assert_eq!(index.file(1).size, 5);
        assert!(index.file(1).modified.is_some());
        assert_eq!(index.files_under(Path::new("a")), 0..2);
        assert_eq!(index.files_under(Path::new("a/c")), 1..2);
        assert!(
            index.find_dir(Path::new("empty")).is_some(),
            "empty dirs are kept"
        );
        assert!(
            index.find_dir(Path::new("build")).is_none(),
            "ignored dirs are not"
        );
        let names = |dir: &str| -> Vec<(String, bool)> {
            let d = index.find_dir(Path::new(dir)).unwrap();
            index
                .children(d)
                .iter()
                .map(|c| (c.name.to_string_lossy().into_owned(), c.is_dir))
                .collect()
        };
        assert_eq!(
            names(""),
            [
                ("a".to_string(), true),
                ("empty".to_string(), true),
                ("a.b".to_string(), false)
            ]
        );
        assert_eq!(
            names("a"),
            [("c".to_string(), true), ("b".to_string(), false)]
        );
        let ignored: Vec<(String, bool)> = index
            .ignored_in(index.dirs_below(0))
            .map(|(rel, _, is_dir)| (rel.to_string_lossy().into_owned(), is_dir))
            .collect();
        assert_eq!(
            ignored,
            [("app.log".to_string(), false), ("build".to_string(), true)]
        );
    }
}
