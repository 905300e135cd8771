//! The live file index: per root, the files a default search walk yields (gitignore-aware,
//! hidden skipped, symlinks not followed, regular files only) with their size and
//! modification time, built in the background and kept fresh by [`WatchEvent`]s, so that
//! `glob`, completion, `resources/list` and grep's candidate list need not walk the disk.
//!
//! What it owns:
//! - [`RootIndex`]: one immutable build of one root, compact (all relative paths in one
//!   byte arena; per file a span and two atomics), with the visited directories (for
//!   completion and for telling whether an event can matter) and the *ignored* entries seen
//!   directly inside visited directories (a whitelisting grep `--glob` brings those back,
//!   as in ripgrep, so the index must know them to answer exactly as the walk would).
//! - [`FileIndex`]: the live set of roots, a builder thread, and the freshness rules.
//!   [`FileIndex::snapshot`] answers `None` whenever the answer could be out of date —
//!   while building, after a create/remove/rename/ignore-file change until the rebuild is
//!   done, while a burst of events is still settling (from [`WatchEvent::Pending`] to its
//!   settled event), and for a root that is not (or no longer) watched. Callers then walk.
//!   A content change only refreshes that file's size and mtime in place.
//! - **Our own writes.** The server's writes are announced with
//!   [`FileIndex::expect_change`]: the root is not served until the watcher has delivered
//!   that path's event (or a build that started after the write has landed), so a write is
//!   visible to the very next request even when the watcher has a backlog. A change whose
//!   event does not come within [`EXPECT_WAIT`] makes the root rebuild.
//!
//! Ordering: paths are sorted component-wise (as `Path`'s `Ord` does), which is byte order
//! with `/` sorting before every other byte; so all entries below a directory are
//! contiguous, and a listing comes out in the order a path-sorted search would give.
//!
//! Not covered (the walk decides, the index cannot know): ignore files *above* a root and
//! the global git excludes file change without an event; a client relying on those changes
//! sees them after the next rebuild (any structural event, or re-setting the roots).

use crate::files::os::OsStrExt;
use std::cmp::Ordering;
use std::ffi::OsStr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use ignore::DirEntry;

use crate::search::Control;
use crate::search::outcome::Stats;
use crate::search::walk::{PerThread, WalkOptions, walk_dir_background, yield_to_searches};
use crate::watch::{RootStatus, WatchEvent};

/// After a structural change, wait this long for more before rebuilding (coalescing).
pub const REBUILD_DELAY: Duration = Duration::from_millis(200);

/// Longest pause of one build (in all), or of adding a watch, for running searches: a
/// build that never ran would leave every search walking.
pub const YIELD_MAX: Duration = Duration::from_secs(2);

/// A rebuild due while events are still settling (a build writing thousands of files, an
/// unpack) waits for them to settle, at most this long past its due time: a build that
/// starts mid-burst is out of date when it lands, so waiting saves whole rebuilds.
pub const REBUILD_DEFER: Duration = Duration::from_secs(2);

/// How long a write by the server waits for its watch event before the root is rebuilt.
pub const EXPECT_WAIT: Duration = Duration::from_secs(2);

/// Stored modification time meaning "could not be read".
const NO_MTIME: i64 = i64::MIN;

/// A byte range of the arena: one relative path.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    fn range(self) -> Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// One indexed file. Size and mtime are atomics so a content change can be applied in
/// place to a snapshot that searches are reading.
#[derive(Debug)]
struct FileRec {
    path: Span,
    size: AtomicU64,
    /// Nanoseconds since the epoch ([`NO_MTIME`] when unknown).
    mtime: AtomicI64,
}

/// One visited (not ignored, not hidden) directory; `dirs[0]` is the root itself.
#[derive(Debug)]
struct DirRec {
    path: Span,
    parent: u32,
    /// One past the last directory below this one (directories are in pre-order).
    subtree_end: u32,
    /// This directory's own files: a range of `dir_files`.
    files: Range<u32>,
}

/// An entry directly inside a visited directory that the ignore rules skip.
#[derive(Debug)]
struct IgnoredRec {
    path: Span,
    parent: u32,
    is_dir: bool,
}

/// An entry the walk yielded but a search cannot read: a special file (FIFO, socket,
/// device), or a path the walk failed on (permission denied, too long, vanished). A
/// search from the index counts these in `skipped_unreadable` exactly as a walk would.
#[derive(Debug)]
struct SkippedRec {
    path: Span,
    /// The visited directory whose walk meets it (for a directory the walk failed to
    /// list, that directory itself).
    dir: u32,
    /// A special file (filtered by globs and types as files are); else a walk error.
    special: bool,
}

/// Figures about one build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    pub files: usize,
    pub dirs: usize,
    pub ignored: usize,
    pub elapsed: Duration,
    /// Heap bytes held by the index (arena and records).
    pub heap_bytes: usize,
    /// Entries the walk could not read (permission denied, vanished, special files).
    pub unreadable: u64,
}

/// One build of one root: immutable except for per-file size and mtime.
#[derive(Debug)]
pub struct RootIndex {
    root: PathBuf,
    arena: Box<[u8]>,
    files: Box<[FileRec]>,
    dirs: Box<[DirRec]>,
    /// File indices grouped by directory (see [`DirRec::files`]), by name within each.
    dir_files: Box<[u32]>,
    ignored: Box<[IgnoredRec]>,
    skipped: Box<[SkippedRec]>,
    info: BuildInfo,
}

/// A file of the index, as callers see it.
#[derive(Clone, Copy, Debug)]
pub struct IndexedFile<'a> {
    /// Position in [`RootIndex`]'s path order.
    pub id: usize,
    /// Path relative to the root (no leading `/`).
    pub rel: &'a Path,
    pub size: u64,
    pub modified: Option<SystemTime>,
}

/// A child of a directory, for completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Child<'a> {
    pub name: &'a OsStr,
    pub is_dir: bool,
}

impl RootIndex {
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn info(&self) -> &BuildInfo {
        &self.info
    }

    /// Number of indexed files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    fn bytes(&self, span: Span) -> &[u8] {
        &self.arena[span.range()]
    }

    fn rel_of(&self, span: Span) -> &Path {
        Path::new(OsStr::from_bytes(self.bytes(span)))
    }

    /// The file with position `id`.
    pub fn file(&self, id: usize) -> IndexedFile<'_> {
        let rec = &self.files[id];
        let mtime = rec.mtime.load(AtomicOrdering::Relaxed);
        IndexedFile {
            id,
            rel: self.rel_of(rec.path),
            size: rec.size.load(AtomicOrdering::Relaxed),
            modified: (mtime != NO_MTIME).then(|| from_nanos(mtime)),
        }
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = IndexedFile<'_>> + '_ {
        (0..self.files.len()).map(|id| self.file(id))
    }

    /// The absolute path of file `id`.
    pub fn path_of(&self, id: usize) -> PathBuf {
        self.root.join(self.rel_of(self.files[id].path))
    }

    /// Position of a file given its path relative to the root.
    pub fn find_file(&self, rel: &Path) -> Option<usize> {
        let key = rel.as_os_str().as_bytes();
        self.files
            .binary_search_by(|rec| cmp_paths(self.bytes(rec.path), key))
            .ok()
    }

    /// Position of a visited directory (`""` is the root).
    pub fn find_dir(&self, rel: &Path) -> Option<usize> {
        let key = rel.as_os_str().as_bytes();
        self.dirs
            .binary_search_by(|rec| cmp_paths(self.bytes(rec.path), key))
            .ok()
    }

    fn find_ignored(&self, rel: &[u8]) -> Option<usize> {
        self.ignored
            .binary_search_by(|rec| cmp_paths(self.bytes(rec.path), rel))
            .ok()
    }

    /// Files below the visited directory `rel` (all of them for `""`), as a range of ids.
    pub fn files_under(&self, rel: &Path) -> Range<usize> {
        let dir = rel.as_os_str().as_bytes();
        if dir.is_empty() {
            return 0..self.files.len();
        }
        // Everything below `dir/` sorts right after `dir` and before its next sibling.
        let below = |path: &[u8]| {
            path.len() > dir.len() && path.starts_with(dir) && path[dir.len()] == b'/'
        };
        let start = self
            .files
            .partition_point(|rec| cmp_paths(self.bytes(rec.path), dir) != Ordering::Greater);
        let len = self.files[start..].partition_point(|rec| below(self.bytes(rec.path)));
        start..start + len
    }

    /// The children of visited directory `dir` (a position from [`RootIndex::find_dir`]):
    /// sub-directories that the walk enters, then files, each group by name.
    pub fn children(&self, dir: usize) -> Vec<Child<'_>> {
        let rec = &self.dirs[dir];
        let mut out = Vec::new();
        let mut next = dir + 1;
        while next < rec.subtree_end as usize {
            out.push(Child {
                name: name_of(self.bytes(self.dirs[next].path)),
                is_dir: true,
            });
            next = self.dirs[next].subtree_end as usize;
        }
        for &id in &self.dir_files[rec.files.start as usize..rec.files.end as usize] {
            out.push(Child {
                name: name_of(self.bytes(self.files[id as usize].path)),
                is_dir: false,
            });
        }
        out
    }

    /// The visited directories below (and including) `dir`, in pre-order, each with its
    /// relative path, its parent's position and its own files.
    pub(crate) fn dirs_below(&self, dir: usize) -> Range<usize> {
        dir..self.dirs[dir].subtree_end as usize
    }

    pub(crate) fn dir_rel(&self, dir: usize) -> &Path {
        self.rel_of(self.dirs[dir].path)
    }

    pub(crate) fn dir_parent(&self, dir: usize) -> usize {
        self.dirs[dir].parent as usize
    }

    pub(crate) fn dir_file_ids(&self, dir: usize) -> impl Iterator<Item = usize> + '_ {
        let files = &self.dirs[dir].files;
        self.dir_files[files.start as usize..files.end as usize]
            .iter()
            .map(|&id| id as usize)
    }

    /// Ignored entries directly inside the visited directories `dirs` (a range from
    /// [`RootIndex::dirs_below`]): (relative path, parent directory, is a directory).
    pub(crate) fn ignored_in(
        &self,
        dirs: Range<usize>,
    ) -> impl Iterator<Item = (&Path, usize, bool)> + '_ {
        self.ignored
            .iter()
            .filter(move |rec| dirs.contains(&(rec.parent as usize)))
            .map(|rec| (self.rel_of(rec.path), rec.parent as usize, rec.is_dir))
    }

    /// Entries a search cannot read met in the visited directories `dirs` (a range from
    /// [`RootIndex::dirs_below`]): (relative path, directory, is a special file).
    pub(crate) fn skipped_in(
        &self,
        dirs: Range<usize>,
    ) -> impl Iterator<Item = (&Path, usize, bool)> + '_ {
        self.skipped
            .iter()
            .filter(move |rec| dirs.contains(&(rec.dir as usize)))
            .map(|rec| (self.rel_of(rec.path), rec.dir as usize, rec.special))
    }

    /// Whether an event at `rel` can change what this index holds (see [`FileIndex`]).
    fn touches(&self, rel: &[u8]) -> bool {
        self.find_file(as_path(rel)).is_some()
            || self.find_dir(as_path(rel)).is_some()
            || self.find_ignored(rel).is_some()
            || self.ignore_rules_at(rel)
            || (!is_hidden(rel) && self.parent_visited(rel))
    }

    fn parent_visited(&self, rel: &[u8]) -> bool {
        self.find_dir(as_path(parent_of(rel))).is_some()
    }

    /// `rel` is (or is inside) something that decides what the walk skips, in a directory
    /// the walk enters: `.gitignore`, `.ignore`, `.git` (whose presence turns `.gitignore`
    /// on), `.git/info/exclude`.
    fn ignore_rules_at(&self, rel: &[u8]) -> bool {
        let name = name_of(rel).as_bytes();
        if matches!(name, b".gitignore" | b".ignore" | b".git") {
            return self.parent_visited(rel);
        }
        // `<dir>/.git/info/...`
        let mut start = 0;
        while let Some(at) = find(&rel[start..], b".git/info") {
            let at = start + at;
            let owner = match at {
                0 => Some(&b""[..]),
                _ if rel[at - 1] == b'/' => Some(&rel[..at - 1]),
                _ => None,
            };
            if let Some(owner) = owner
                && self.find_dir(as_path(owner)).is_some()
            {
                return true;
            }
            start = at + 1;
        }
        false
    }

    /// Reads file `id`'s size and mtime again. False when it is no longer a regular file.
    fn restat(&self, id: usize) -> bool {
        let path = self.root.join(self.rel_of(self.files[id].path));
        self.store_stat(id, std::fs::symlink_metadata(path).ok().as_ref())
    }

    /// Stores file `id`'s size and mtime from `meta` (its `lstat`, read by the caller).
    /// False when it is no longer a regular file.
    fn store_stat(&self, id: usize, meta: Option<&std::fs::Metadata>) -> bool {
        let rec = &self.files[id];
        match meta {
            Some(meta) if meta.is_file() => {
                rec.size.store(meta.len(), AtomicOrdering::Relaxed);
                rec.mtime
                    .store(to_nanos(meta.modified().ok()), AtomicOrdering::Relaxed);
                true
            }
            _ => false,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Building

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
pub fn build_limited(
    root: &Path,
    control: &Control,
    max_files: usize,
) -> Result<Option<RootIndex>, usize> {
    let started = Instant::now();
    let counted = std::sync::atomic::AtomicUsize::new(0);
    let too_many = std::sync::atomic::AtomicBool::new(false);
    let options = WalkOptions {
        hidden: false,
        no_ignore: false,
        types: None,
    };
    let walker = options.walker(root, None);
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
    };
    for collector in parts {
        unreadable += collector.stats.skipped_unreadable;
        all.absorb(collector.part);
    }
    Ok(Some(pack(root.to_path_buf(), all, unreadable, started)))
}

/// The shared file budget of one build.
struct Limit<'a> {
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

#[derive(Default)]
struct Part {
    arena: Vec<u8>,
    /// (path, size, mtime nanos)
    files: Vec<(Span, u64, i64)>,
    dirs: Vec<Span>,
    /// Symlinks and special files the walk yielded (neither files nor directories).
    others: Vec<Span>,
    /// Every non-hidden file or directory found by listing the visited directories, as
    /// (the directory's path, the entry's name, is a directory): names only, so the paths
    /// the walk also yields are not stored twice.
    listed: Vec<(Span, Span, bool)>,
    /// What a search cannot read: (path, is a special file; else a walk error).
    skipped: Vec<(Span, bool)>,
}

impl Part {
    fn push(&mut self, bytes: &[u8]) -> Span {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(bytes);
        Span {
            start,
            len: bytes.len() as u32,
        }
    }

    fn absorb(&mut self, other: Part) {
        let shift = self.arena.len() as u32;
        let moved = |s: Span| Span {
            start: s.start + shift,
            len: s.len,
        };
        self.arena.extend_from_slice(&other.arena);
        self.files
            .extend(other.files.into_iter().map(|(s, z, m)| (moved(s), z, m)));
        self.dirs.extend(other.dirs.into_iter().map(moved));
        self.others.extend(other.others.into_iter().map(moved));
        self.listed.extend(
            other
                .listed
                .into_iter()
                .map(|(dir, name, is_dir)| (moved(dir), moved(name), is_dir)),
        );
        self.skipped.extend(
            other
                .skipped
                .into_iter()
                .map(|(path, special)| (moved(path), special)),
        );
    }
}

/// One walker thread's share of the build.
struct Collector<'a> {
    root: &'a Path,
    part: Part,
    stats: Stats,
    limit: Limit<'a>,
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
        self.part.files.push((span, meta.len(), mtime));
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
fn error_path(err: &ignore::Error) -> Option<&Path> {
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

/// Sorts and packs what the walk collected into the compact index.
fn pack(root: PathBuf, part: Part, unreadable: u64, started: Instant) -> RootIndex {
    let Part {
        arena: raw,
        mut files,
        mut dirs,
        others,
        listed,
        skipped: skipped_raw,
    } = part;
    let text = |s: Span| &raw[s.range()];
    files.sort_unstable_by(|a, b| cmp_paths(text(a.0), text(b.0)));
    dirs.sort_unstable_by(|a, b| cmp_paths(text(*a), text(*b)));
    dirs.dedup_by(|a, b| text(*a) == text(*b));

    // Ignored = listed but not yielded.
    let mut yielded: Vec<Span> = Vec::with_capacity(files.len() + dirs.len() + others.len());
    yielded.extend(files.iter().map(|f| f.0));
    yielded.extend(dirs.iter().copied());
    yielded.extend(others);
    yielded.sort_unstable_by(|a, b| cmp_paths(text(*a), text(*b)));
    let mut ignored_raw: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut full = Vec::new();
    for (dir, name, is_dir) in listed {
        full.clear();
        full.extend_from_slice(text(dir));
        if !full.is_empty() {
            full.push(b'/');
        }
        full.extend_from_slice(text(name));
        let seen = yielded
            .binary_search_by(|y| cmp_paths(text(*y), &full))
            .is_ok();
        if !seen {
            ignored_raw.push((full.clone(), is_dir));
        }
    }
    ignored_raw.sort_unstable_by(|a, b| cmp_paths(&a.0, &b.0));
    drop(yielded);

    // One arena, in the final order: files, directories, ignored entries.
    let total: usize = files.iter().map(|f| f.0.len as usize).sum::<usize>()
        + dirs.iter().map(|d| d.len as usize).sum::<usize>()
        + ignored_raw.iter().map(|i| i.0.len()).sum::<usize>();
    let mut arena = Vec::with_capacity(total);
    let mut copy = |s: Span| {
        let start = arena.len() as u32;
        arena.extend_from_slice(text(s));
        Span { start, len: s.len }
    };
    // Re-point the spans in place (no second copy of the lists at the peak).
    for file in files.iter_mut() {
        file.0 = copy(file.0);
    }
    for dir in dirs.iter_mut() {
        *dir = copy(*dir);
    }
    let mut file_spans = files;
    file_spans.shrink_to_fit();
    let mut dir_spans = dirs;
    dir_spans.shrink_to_fit();
    let ignored_spans: Vec<(Span, bool)> = ignored_raw
        .iter()
        .map(|(bytes, d)| {
            let start = arena.len() as u32;
            arena.extend_from_slice(bytes);
            (
                Span {
                    start,
                    len: bytes.len() as u32,
                },
                *d,
            )
        })
        .collect();
    drop(ignored_raw);
    let mut skipped_raw = skipped_raw;
    skipped_raw.sort_unstable_by(|a, b| cmp_paths(text(a.0), text(b.0)));
    let skipped_spans: Vec<(Span, bool)> = skipped_raw
        .into_iter()
        .map(|(span, special)| {
            let start = arena.len() as u32;
            arena.extend_from_slice(text(span));
            (
                Span {
                    start,
                    len: span.len,
                },
                special,
            )
        })
        .collect();
    drop(raw);
    let arena = arena.into_boxed_slice();
    let at = |s: Span| &arena[s.range()];
    let dir_of = |path: &[u8]| -> u32 {
        let parent = parent_of(path);
        dir_spans
            .binary_search_by(|d| cmp_paths(at(*d), parent))
            .map_or(0, |i| i as u32)
    };

    // Directory tree: parents and pre-order subtree ends.
    let mut dir_recs: Vec<DirRec> = Vec::with_capacity(dir_spans.len());
    let mut open: Vec<usize> = Vec::new();
    for (i, &span) in dir_spans.iter().enumerate() {
        let path = at(span);
        while let Some(&top) = open.last() {
            let top_path = at(dir_spans[top]);
            let inside = top_path.is_empty()
                || (path.len() > top_path.len()
                    && path.starts_with(top_path)
                    && path[top_path.len()] == b'/');
            if inside {
                break;
            }
            dir_recs[top].subtree_end = i as u32;
            open.pop();
        }
        let parent = open.last().map_or(0, |&p| p as u32);
        dir_recs.push(DirRec {
            path: span,
            parent,
            subtree_end: dir_spans.len() as u32,
            files: 0..0,
        });
        open.push(i);
    }
    for top in open {
        dir_recs[top].subtree_end = dir_spans.len() as u32;
    }

    // Files grouped by directory (a stable counting sort keeps them by name).
    let parents: Vec<u32> = file_spans.iter().map(|f| dir_of(at(f.0))).collect();
    let mut counts = vec![0u32; dir_recs.len() + 1];
    for &p in &parents {
        counts[p as usize + 1] += 1;
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    for (d, rec) in dir_recs.iter_mut().enumerate() {
        rec.files = counts[d]..counts[d + 1];
    }
    let mut fill = counts;
    let mut dir_files = vec![0u32; file_spans.len()];
    for (id, &p) in parents.iter().enumerate() {
        dir_files[fill[p as usize] as usize] = id as u32;
        fill[p as usize] += 1;
    }
    drop(parents);

    let ignored: Box<[IgnoredRec]> = ignored_spans
        .iter()
        .map(|&(span, is_dir)| IgnoredRec {
            path: span,
            parent: dir_of(at(span)),
            is_dir,
        })
        .collect();
    let skipped: Box<[SkippedRec]> = skipped_spans
        .into_iter()
        .map(|(path, special)| {
            let bytes = at(path);
            let dir = match special {
                true => dir_of(bytes),
                false => dir_spans
                    .binary_search_by(|d| cmp_paths(at(*d), bytes))
                    .map_or_else(|_| dir_of(bytes), |i| i as u32),
            };
            SkippedRec { path, dir, special }
        })
        .collect();
    let files: Box<[FileRec]> = file_spans
        .into_iter()
        .map(|(path, size, mtime)| FileRec {
            path,
            size: AtomicU64::new(size),
            mtime: AtomicI64::new(mtime),
        })
        .collect();
    let dirs = dir_recs.into_boxed_slice();
    let dir_files = dir_files.into_boxed_slice();
    let heap_bytes = arena.len()
        + std::mem::size_of_val(&*files)
        + std::mem::size_of_val(&*dirs)
        + std::mem::size_of_val(&*dir_files)
        + std::mem::size_of_val(&*ignored)
        + std::mem::size_of_val(&*skipped);
    let info = BuildInfo {
        files: files.len(),
        dirs: dirs.len(),
        ignored: ignored.len(),
        elapsed: started.elapsed(),
        heap_bytes,
        unreadable,
    };
    RootIndex {
        root,
        arena,
        files,
        dirs,
        dir_files,
        ignored,
        skipped,
        info,
    }
}

// ---------------------------------------------------------------------------------------
// The live index

/// How one root's index stands, for `list_roots` and logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexState {
    /// Waiting for the root to be watched (no index without a watch).
    Waiting,
    /// Being built (first build, or rebuild after a change).
    Building,
    /// Served.
    Fresh,
    /// Out of date; a rebuild is scheduled, or events are settling.
    Stale,
    /// Not indexed: the root is not watched (the reason says why).
    Unavailable(String),
}

#[derive(Clone, Debug)]
pub struct RootIndexStatus {
    pub root: PathBuf,
    pub state: IndexState,
    /// The last completed build.
    pub last_build: Option<BuildInfo>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Watch {
    Unknown,
    Watching,
    Failed(String),
}

struct Slot {
    root: PathBuf,
    current: Option<Arc<RootIndex>>,
    /// `current` no longer matches the disk; a rebuild is due at `due`.
    stale: bool,
    due: Option<Instant>,
    /// Bumped by every structural change; a build that saw another value is discarded.
    generation: u64,
    building: Option<Arc<Control>>,
    /// Paths with an event burst under way (from `Pending` to its settled event).
    settling: Vec<PathBuf>,
    /// Content changes seen while building, applied to the new build when it lands.
    restat: Vec<PathBuf>,
    /// Paths the server itself changed, whose watch event has not arrived yet, with when.
    expected: Vec<(PathBuf, Instant)>,
    last_build: Option<BuildInfo>,
    /// The tree holds more files than the index may (the limit): never indexed; searches
    /// walk the disk.
    too_many: Option<usize>,
}

impl Slot {
    fn new(root: PathBuf) -> Slot {
        Slot {
            root,
            current: None,
            stale: false,
            due: None,
            generation: 0,
            building: None,
            settling: Vec::new(),
            restat: Vec::new(),
            expected: Vec::new(),
            last_build: None,
            too_many: None,
        }
    }

    fn schedule(&mut self, now: Instant) {
        self.stale = true;
        self.generation += 1;
        // The first change of a burst fixes the time; later ones ride along (a change
        // after the build starts bumps the generation and schedules another).
        self.due.get_or_insert(now + REBUILD_DELAY);
    }

    fn fresh(&self) -> Option<&Arc<RootIndex>> {
        match (&self.current, self.stale, self.settling.is_empty()) {
            (Some(index), false, true) if self.expected.is_empty() => Some(index),
            _ => None,
        }
    }

    /// Our own writes whose event is overdue: rebuild instead of waiting longer.
    fn expire(&mut self, now: Instant) {
        if self
            .expected
            .iter()
            .any(|(_, at)| now.duration_since(*at) >= EXPECT_WAIT)
        {
            self.expected.clear();
            self.schedule(now);
        }
    }
}

struct State {
    slots: Vec<Slot>,
    /// Watch state per root as last reported (kept even for roots not set yet, since the
    /// watcher may report before the index learns of the root).
    watch: Vec<(PathBuf, Watch)>,
    stop: bool,
    /// The watcher has bursts of events in flight (from a `Pending` anywhere to `Quiet`),
    /// whether or not they matter to the index: a rebuild would likely be out of date.
    bursting: bool,
}

impl State {
    fn watch_of(&self, root: &Path) -> Watch {
        self.watch
            .iter()
            .find(|(r, _)| r == root)
            .map_or(Watch::Unknown, |(_, w)| w.clone())
    }
}

struct Shared {
    state: Mutex<State>,
    /// Most files one root's index may hold.
    max_files: usize,
    /// Wakes the builder thread (work scheduled, or stop) and waiters for freshness.
    wake: Condvar,
}

/// The live index over the current roots. Feed it every [`WatchEvent`] with
/// [`FileIndex::apply`]; ask it with [`FileIndex::snapshot`].
pub struct FileIndex {
    shared: Arc<Shared>,
    builder: Option<JoinHandle<()>>,
}

impl Default for FileIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl FileIndex {
    /// An empty index with its builder thread (idle until roots are set and watched).
    pub fn new() -> FileIndex {
        FileIndex::with_max_files(DEFAULT_MAX_FILES)
    }

    /// An index whose roots hold at most `max_files` files each; a bigger root is reported
    /// `Unavailable` and searched by walking.
    pub fn with_max_files(max_files: usize) -> FileIndex {
        let shared = Arc::new(Shared {
            max_files,
            state: Mutex::new(State {
                slots: Vec::new(),
                watch: Vec::new(),
                stop: false,
                bursting: false,
            }),
            wake: Condvar::new(),
        });
        let for_builder = Arc::clone(&shared);
        let builder = std::thread::Builder::new()
            .name("rootgrep-index".into())
            .spawn(move || builder_loop(&for_builder))
            .expect("spawning the index thread");
        FileIndex {
            shared,
            builder: Some(builder),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the roots to index (canonical directories; files and missing paths are
    /// skipped). Roots kept keep their index; a root is built once it is watched.
    pub fn set_roots(&self, roots: &[PathBuf]) {
        // The filesystem is asked before the lock is taken: searches wait on that lock.
        let dirs: Vec<&PathBuf> = roots.iter().filter(|root| root.is_dir()).collect();
        let mut state = self.lock();
        state.slots.retain(|slot| {
            let keep = roots.contains(&slot.root);
            if !keep && let Some(control) = &slot.building {
                control.cancel();
            }
            keep
        });
        let now = Instant::now();
        for root in dirs {
            if state.slots.iter().any(|s| &s.root == root) {
                continue;
            }
            let mut slot = Slot::new(root.clone());
            if state.watch_of(root) == Watch::Watching {
                slot.due = Some(now);
            }
            state.slots.push(slot);
        }
        state.watch.retain(|(root, _)| roots.contains(root));
        drop(state);
        self.shared.wake.notify_all();
    }

    /// The fresh index of `root` (exactly as set), or `None` when it could be out of date.
    pub fn snapshot(&self, root: &Path) -> Option<Arc<RootIndex>> {
        let state = self.lock();
        let slot = state.slots.iter().find(|s| s.root == root)?;
        slot.fresh().cloned()
    }

    /// The fresh index of a root containing `dir`, if there is one.
    pub fn snapshot_for(&self, dir: &Path) -> Option<Arc<RootIndex>> {
        let state = self.lock();
        state
            .slots
            .iter()
            .filter(|s| dir.starts_with(&s.root))
            .find_map(|s| s.fresh().cloned())
    }

    /// Waits up to `timeout` for `root`'s index to be fresh (tests, benchmarks, and callers
    /// that would rather wait briefly than walk).
    pub fn wait_fresh(&self, root: &Path, timeout: Duration) -> Option<Arc<RootIndex>> {
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        loop {
            if let Some(index) = state
                .slots
                .iter()
                .find(|s| s.root == root)
                .and_then(|s| s.fresh().cloned())
            {
                return Some(index);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            state = self
                .shared
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The server itself just changed `path` (wrote, edited, created, moved): until the
    /// watcher reports it, the root containing it is not served, so the next request
    /// never answers from before the change.
    pub fn expect_change(&self, path: &Path) {
        let now = Instant::now();
        let mut state = self.lock();
        for slot in &mut state.slots {
            if path.starts_with(&slot.root) {
                slot.expected.push((path.to_path_buf(), now));
            }
        }
        drop(state);
        self.shared.wake.notify_all();
    }

    /// Every root's state, in the order set.
    pub fn status(&self) -> Vec<RootIndexStatus> {
        let state = self.lock();
        state
            .slots
            .iter()
            .map(|slot| {
                let index_state = match state.watch_of(&slot.root) {
                    _ if slot.too_many.is_some() => IndexState::Unavailable(format!(
                        "more than {} files; searches walk the disk",
                        slot.too_many.unwrap_or_default()
                    )),
                    Watch::Failed(reason) => IndexState::Unavailable(reason),
                    Watch::Unknown => IndexState::Waiting,
                    Watch::Watching if slot.fresh().is_some() => IndexState::Fresh,
                    Watch::Watching if slot.building.is_some() || slot.current.is_none() => {
                        IndexState::Building
                    }
                    Watch::Watching => IndexState::Stale,
                };
                RootIndexStatus {
                    root: slot.root.clone(),
                    state: index_state,
                    last_build: slot.last_build.clone(),
                }
            })
            .collect()
    }

    /// Applies one watcher event (call it from the watcher's handler; it is quick: an
    /// `lstat`, then a few binary searches under the lock).
    pub fn apply(&self, event: &WatchEvent) {
        // Read the disk before taking the lock: every search and `list_roots` waits on it,
        // and an `lstat` can be slow (network filesystems, a loaded disk).
        let meta = match event {
            WatchEvent::Changed(path) | WatchEvent::Created(path) => {
                std::fs::symlink_metadata(path).ok()
            }
            _ => None,
        };
        let now = Instant::now();
        let mut state = self.lock();
        match event {
            WatchEvent::Status(root, status) => {
                let watch = match status {
                    RootStatus::Watching => Watch::Watching,
                    RootStatus::Starting => Watch::Unknown,
                    RootStatus::Failed(reason) => Watch::Failed(reason.clone()),
                };
                match state.watch.iter_mut().find(|(r, _)| r == root) {
                    Some(known) => known.1 = watch.clone(),
                    None => state.watch.push((root.clone(), watch.clone())),
                }
                if let Some(slot) = state.slots.iter_mut().find(|s| &s.root == root) {
                    if watch == Watch::Watching {
                        // (Re)build: events may have been missed while not watched.
                        slot.current = None;
                        slot.schedule(now);
                        slot.due = Some(now);
                    } else {
                        slot.current = None;
                        slot.due = None;
                        if let Some(control) = slot.building.take() {
                            control.cancel();
                        }
                    }
                }
            }
            WatchEvent::Overflow | WatchEvent::Error(_) => {
                for slot in &mut state.slots {
                    slot.schedule(now);
                }
            }
            WatchEvent::Quiet => {
                state.bursting = false;
                for slot in &mut state.slots {
                    slot.settling.clear();
                }
            }
            WatchEvent::Pending(path) => {
                state.bursting = true;
                for slot in state.slots.iter_mut() {
                    let Ok(rel) = path.strip_prefix(&slot.root) else {
                        continue;
                    };
                    let rel = rel.as_os_str().as_bytes();
                    let matters = match (&slot.current, &slot.building) {
                        (Some(index), None) if !slot.stale => index.touches(rel),
                        // Building or stale: nothing is served now; just make sure the
                        // build that lands next is not served before this settles.
                        _ => !is_hidden(rel) || is_ignore_name(rel),
                    };
                    if matters && !slot.settling.contains(path) {
                        slot.settling.push(path.clone());
                    }
                }
            }
            WatchEvent::Changed(path) | WatchEvent::Created(path) | WatchEvent::Removed(path) => {
                for slot in state.slots.iter_mut() {
                    let Ok(rel) = path.strip_prefix(&slot.root) else {
                        continue;
                    };
                    slot.settling.retain(|p| p != path);
                    slot.expected.retain(|(p, _)| p != path);
                    settle(slot, event, rel.as_os_str().as_bytes(), meta.as_ref(), now);
                }
            }
        }
        drop(state);
        self.shared.wake.notify_all();
    }
}

/// Applies a settled event to one root's slot; `meta` is the path's `lstat` now.
fn settle(
    slot: &mut Slot,
    event: &WatchEvent,
    rel: &[u8],
    meta: Option<&std::fs::Metadata>,
    now: Instant,
) {
    let maybe_structural = !is_hidden(rel) || is_ignore_name(rel);
    if slot.building.is_some() || slot.current.is_none() || slot.stale {
        match event {
            WatchEvent::Changed(path) => slot.restat.push(path.clone()),
            _ if maybe_structural => slot.schedule(now),
            _ => {}
        }
        return;
    }
    let Some(index) = slot.current.clone() else {
        return;
    };
    let file = index.find_file(as_path(rel));
    let rebuild = match event {
        WatchEvent::Changed(_) | WatchEvent::Created(_) if file.is_some() => {
            // Same file set; refresh size and mtime (a replacement keeps the entry).
            !index.store_stat(file.expect("checked"), meta)
        }
        WatchEvent::Changed(_) => {
            index.find_dir(as_path(rel)).is_some() || index.ignore_rules_at(rel)
        }
        WatchEvent::Created(_) => {
            let still_ignored = index.find_ignored(rel).is_some_and(|i| {
                let was_dir = index.ignored[i].is_dir;
                meta.is_some_and(|m| m.is_dir() == was_dir && (m.is_dir() || m.is_file()))
            });
            !still_ignored
                && (index.ignore_rules_at(rel) || (!is_hidden(rel) && index.parent_visited(rel)))
        }
        WatchEvent::Removed(_) => {
            file.is_some()
                || index.find_dir(as_path(rel)).is_some()
                || index.find_ignored(rel).is_some()
                || index.ignore_rules_at(rel)
        }
        _ => false,
    };
    if rebuild {
        slot.schedule(now);
    }
}

impl Drop for FileIndex {
    fn drop(&mut self) {
        {
            let mut state = self.lock();
            state.stop = true;
            for slot in &state.slots {
                if let Some(control) = &slot.building {
                    control.cancel();
                }
            }
        }
        self.shared.wake.notify_all();
        if let Some(builder) = self.builder.take() {
            let _ = builder.join();
        }
    }
}

/// The builder thread: builds one due root at a time, outside the lock.
fn builder_loop(shared: &Shared) {
    let lock = || shared.state.lock().unwrap_or_else(PoisonError::into_inner);
    let mut state = lock();
    loop {
        if state.stop {
            return;
        }
        let now = Instant::now();
        let mut next_due: Option<Instant> = None;
        let mut job = None;
        for slot in &mut state.slots {
            slot.expire(now);
            if let Some((_, at)) = slot.expected.first() {
                let due = *at + EXPECT_WAIT;
                next_due = Some(next_due.map_or(due, |d: Instant| d.min(due)));
            }
        }
        for i in 0..state.slots.len() {
            let watching = state.watch_of(&state.slots[i].root) == Watch::Watching;
            let slot = &state.slots[i];
            if !watching || slot.building.is_some() || slot.too_many.is_some() {
                continue;
            }
            // While events settle, nothing would be served anyway: wait for the burst.
            let settled = slot.settling.is_empty() && !state.bursting;
            let due = match (slot.due, settled) {
                (Some(due), false) if slot.last_build.is_some() => Some(due + REBUILD_DEFER),
                (due, _) => due,
            };
            match due {
                Some(due) if due <= now => {
                    job = Some(i);
                    break;
                }
                Some(due) => next_due = Some(next_due.map_or(due, |d: Instant| d.min(due))),
                None => {}
            }
        }
        let Some(i) = job else {
            state = match next_due {
                Some(due) => {
                    let wait = due.saturating_duration_since(now);
                    shared
                        .wake
                        .wait_timeout(state, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
            };
            continue;
        };
        let control = Arc::new(Control::new());
        let slot = &mut state.slots[i];
        slot.building = Some(Arc::clone(&control));
        slot.due = None;
        slot.restat.clear();
        let generation = slot.generation;
        let root = slot.root.clone();
        let started = Instant::now();
        drop(state);

        let max_files = shared.max_files;
        let built = build_limited(&root, &control, max_files);
        tracing::debug!(root = %root.display(), "index build ended");

        // Content changes seen during the walk are applied to the new build (not shared
        // yet) outside the lock, since they read the disk; the slot stays `building`
        // meanwhile, so changes arriving now queue up for the next round.
        let mut vanished = false;
        state = lock();
        while let Ok(Some(built)) = &built {
            let Some(slot) = state.slots.iter_mut().find(|s| {
                s.building
                    .as_ref()
                    .is_some_and(|c| Arc::ptr_eq(c, &control))
            }) else {
                break;
            };
            if slot.restat.is_empty() {
                break;
            }
            let pending = std::mem::take(&mut slot.restat);
            drop(state);
            for path in pending {
                if let Ok(rel) = path.strip_prefix(&root)
                    && let Some(id) = built.find_file(rel)
                {
                    vanished |= !built.restat(id);
                }
            }
            state = lock();
        }
        let Some(slot) = state.slots.iter_mut().find(|s| {
            s.root == root
                && s.building
                    .as_ref()
                    .is_some_and(|c| Arc::ptr_eq(c, &control))
        }) else {
            continue; // root removed or re-targeted meanwhile
        };
        slot.building = None;
        let built = match built {
            Ok(built) => built,
            Err(limit) => {
                tracing::warn!(
                    root = %root.display(),
                    "more than {limit} files: not indexed, searches there walk the disk"
                );
                slot.too_many = Some(limit);
                slot.current = None;
                slot.due = None;
                continue;
            }
        };
        let Some(built) = built else {
            continue;
        };
        slot.last_build = Some(built.info.clone());
        if slot.generation != generation {
            // Something structural changed during the walk: build again (already due).
            slot.current = None;
            slot.due.get_or_insert(Instant::now());
            continue;
        }
        if vanished {
            // A file changed into something else during the walk: the set is wrong.
            slot.generation += 1;
            slot.due.get_or_insert(Instant::now());
        }
        slot.stale = slot.generation != generation;
        // This walk read the disk after these writes: it holds them.
        slot.expected.retain(|(_, at)| *at > started);
        slot.current = Some(Arc::new(built));
        shared.wake.notify_all();
    }
}

// ---------------------------------------------------------------------------------------
// Paths as bytes

/// Component-wise path order on relative paths: byte order with `/` first.
pub fn cmp_paths(a: &[u8], b: &[u8]) -> Ordering {
    let key = |b: u8| if b == b'/' { 0 } else { b };
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => key(a[i]).cmp(&key(b[i])),
        None => a.len().cmp(&b.len()),
    }
}

fn as_path(bytes: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(bytes))
}

fn parent_of(rel: &[u8]) -> &[u8] {
    match rel.iter().rposition(|&b| b == b'/') {
        Some(at) => &rel[..at],
        None => b"",
    }
}

fn name_of(rel: &[u8]) -> &OsStr {
    let start = rel.iter().rposition(|&b| b == b'/').map_or(0, |at| at + 1);
    OsStr::from_bytes(&rel[start..])
}

/// The last component starts with `.`.
fn is_hidden(rel: &[u8]) -> bool {
    name_of(rel).as_bytes().starts_with(b".")
}

fn is_ignore_name(rel: &[u8]) -> bool {
    matches!(
        name_of(rel).as_bytes(),
        b".gitignore" | b".ignore" | b".git"
    ) || find(rel, b".git/").is_some()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn to_nanos(time: Option<SystemTime>) -> i64 {
    let Some(time) = time else {
        return NO_MTIME;
    };
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_nanos()).map_or(NO_MTIME + 1, |n| -n),
    }
}

fn from_nanos(nanos: i64) -> SystemTime {
    let magnitude = Duration::from_nanos(nanos.unsigned_abs());
    match nanos >= 0 {
        true => SystemTime::UNIX_EPOCH + magnitude,
        false => SystemTime::UNIX_EPOCH - magnitude,
    }
}

#[cfg(all(test, unix))]
mod tests {

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

    use super::*;
    use std::fs;

    const DEADLINE: Duration = Duration::from_secs(5);

    struct Fixture {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::Builder::new()
                .prefix("rootgrep-index")
                .tempdir()
                .unwrap();
            let root = dir.path().canonicalize().unwrap();
            let f = Fixture { _dir: dir, root };
            f.write(".git/HEAD", "x");
            f.write(".gitignore", "build/\n*.log\n");
            f.write("a.b", "");
            f.write("a/b", "");
            f.write("a/c/d.rs", "12345");
            f.write("build/out.rs", "");
            f.write("app.log", "");
            f.write(".env", "");
            fs::create_dir_all(f.root.join("empty")).unwrap();
            std::os::unix::fs::symlink("a.b", f.root.join("link")).unwrap();
            f
        }

        fn write(&self, rel: &str, text: &str) -> PathBuf {
            let path = self.root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
            path
        }

        fn live(&self) -> FileIndex {
            let index = FileIndex::new();
            index.set_roots(std::slice::from_ref(&self.root));
            index.apply(&WatchEvent::Status(self.root.clone(), RootStatus::Watching));
            assert!(index.wait_fresh(&self.root, DEADLINE).is_some());
            index
        }
    }

    /// A socket, and a file below a directory chain longer than PATH_MAX (created through
    /// directory handles): a grep answered from the index skips and counts them exactly
    /// as a walk does, also below a sub-directory and with a type filter.
    #[test]
    fn what_the_walk_cannot_read_is_counted_by_the_index_too() {
        use crate::search::query::GrepQuery;
        use rustix::fs::{Mode, OFlags, mkdirat, openat};
        let f = Fixture::new();
        let _socket = std::os::unix::net::UnixListener::bind(f.root.join("a/sock")).unwrap();
        let name = "d".repeat(200);
        let mut dir = openat(
            rustix::fs::CWD,
            f.root.join("a"),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
        for _ in 0..25 {
            mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
            dir = openat(
                &dir,
                name.as_str(),
                OFlags::DIRECTORY | OFlags::RDONLY,
                Mode::empty(),
            )
            .unwrap();
        }
        let deep = openat(
            &dir,
            "deep.rs",
            OFlags::CREATE | OFlags::WRONLY,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        rustix::io::write(&deep, b"x\n").unwrap();
        let index = build(&f.root, &Control::new()).unwrap();
        for (target, types) in [
            (f.root.clone(), vec![]),
            (f.root.join("a"), vec![]),
            (f.root.join("a"), vec!["rust".to_string()]),
        ] {
            let mut query = GrepQuery::new("x");
            query.types = types;
            let walked =
                crate::search::grep(&query, std::slice::from_ref(&target), &Control::new())
                    .unwrap();
            let served = crate::search::grep_files(&query, &target, &index, &Control::new())
                .unwrap()
                .unwrap();
            assert!(walked.stats.skipped_unreadable >= 1, "{:?}", walked.stats);
            assert_eq!(
                served.stats.skipped_unreadable, walked.stats.skipped_unreadable,
                "{target:?}"
            );
        }
    }

    /// The build is background work: while a search runs it waits (here the search is
    /// held for longer than an unhindered build of the fixture takes), then lands.
    #[test]
    fn a_build_waits_while_a_search_runs() {
        let f = Fixture::new();
        let running = crate::search::walk::SearchRunning::start();
        let index = FileIndex::new();
        index.set_roots(std::slice::from_ref(&f.root));
        index.apply(&WatchEvent::Status(f.root.clone(), RootStatus::Watching));
        assert!(
            index
                .wait_fresh(&f.root, Duration::from_millis(300))
                .is_none(),
            "built beside a running search"
        );
        drop(running);
        assert!(index.wait_fresh(&f.root, DEADLINE).is_some());
    }

    /// A rebuild waits while other events are still settling (a burst of creations is
    /// one rebuild at its end, not one every few hundred milliseconds).
    #[test]
    fn a_rebuild_waits_for_the_burst_to_settle() {
        let f = Fixture::new();
        let index = f.live();
        let before = index.status()[0].last_build.clone().unwrap().files;
        // Events in a directory the index does not hold yet do not matter to it, but a
        // build landing mid-burst would be out of date all the same.
        let other = f.root.join("gen/d0/other.rs");
        index.apply(&WatchEvent::Pending(other.clone()));
        let new = f.write("a/new.rs", "");
        index.apply(&WatchEvent::Pending(new.clone()));
        index.apply(&WatchEvent::Created(new.clone()));
        std::thread::sleep(REBUILD_DELAY * 2);
        assert_eq!(
            index.status()[0].last_build.clone().unwrap().files,
            before,
            "rebuilt while events were settling"
        );
        index.apply(&WatchEvent::Removed(other));
        index.apply(&WatchEvent::Quiet);
        let fresh = index.wait_fresh(&f.root, DEADLINE).unwrap();
        assert!(fresh.find_file(Path::new("a/new.rs")).is_some());
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

    #[test]
    fn path_order_matches_path_ord() {
        let mut paths = vec![
            "a", "a/b", "a.b", "a-b/c", "a/b/c", "ab", "a/bc", "a b", "Z", "é",
        ];
        let mut by_path = paths.clone();
        by_path.sort_by(|x, y| Path::new(x).cmp(Path::new(y)));
        paths.sort_by(|x, y| cmp_paths(x.as_bytes(), y.as_bytes()));
        assert_eq!(paths, by_path);
    }

    #[test]
    fn content_changes_are_applied_in_place() {
        let f = Fixture::new();
        let index = f.live();
        let before = index.snapshot(&f.root).unwrap();
        let path = f.write("a/c/d.rs", "longer content now");
        index.apply(&WatchEvent::Pending(path.clone()));
        assert!(
            index.snapshot(&f.root).is_none(),
            "not served while settling"
        );
        index.apply(&WatchEvent::Changed(path));
        let after = index
            .snapshot(&f.root)
            .expect("a content change keeps it fresh");
        assert!(Arc::ptr_eq(&before, &after), "same build, updated in place");
        assert_eq!(after.file(1).size, 18);
    }

    #[test]
    fn our_own_write_is_never_answered_from_before_it() {
        let f = Fixture::new();
        let index = f.live();
        // Written by the server; the watcher has not delivered its event yet (backlog).
        let path = f.write("a/new.rs", "x");
        index.expect_change(&path);
        assert!(
            index.snapshot(&f.root).is_none(),
            "not served before its event"
        );
        index.apply(&WatchEvent::Quiet);
        assert!(
            index.snapshot(&f.root).is_none(),
            "an earlier burst settling is not this write's event"
        );
        index.apply(&WatchEvent::Pending(path.clone()));
        index.apply(&WatchEvent::Created(path.clone()));
        let fresh = index.wait_fresh(&f.root, DEADLINE).expect("rebuilt");
        assert!(fresh.find_file(Path::new("a/new.rs")).is_some());

        // An event that never comes (lost) does not keep the root unserved for good: it
        // is rebuilt, and the rebuild holds the write.
        let lost = f.write("a/lost.rs", "x");
        index.expect_change(&lost);
        assert!(index.snapshot(&f.root).is_none());
        let fresh = index
            .wait_fresh(&f.root, EXPECT_WAIT + DEADLINE)
            .expect("rebuilt after the wait");
        assert!(fresh.find_file(Path::new("a/lost.rs")).is_some());
    }

    #[test]
    fn events_that_cannot_matter_keep_it_fresh() {
        let f = Fixture::new();
        let index = f.live();
        for rel in [
            "build/new.rs",
            ".git/objects/ab",
            ".hidden",
            "x.log.swp/../app.log",
        ] {
            let path = f.root.join(rel);
            index.apply(&WatchEvent::Pending(path.clone()));
            index.apply(&WatchEvent::Created(path.clone()));
            index.apply(&WatchEvent::Removed(path));
        }
        // `app.log` is an ignored file that still exists: its re-creation changes nothing.
        f.write("app.log", "again");
        let log = f.root.join("app.log");
        index.apply(&WatchEvent::Created(log.clone()));
        index.apply(&WatchEvent::Changed(log));
        assert!(index.snapshot(&f.root).is_some(), "{:?}", index.status());
        assert_eq!(index.status()[0].state, IndexState::Fresh);
    }

    #[test]
    fn structural_changes_rebuild_and_failures_disable() {
        let f = Fixture::new();
        let index = f.live();
        let new = f.write("a/new.rs", "");
        index.apply(&WatchEvent::Created(new));
        assert!(index.snapshot(&f.root).is_none());
        let rebuilt = index.wait_fresh(&f.root, DEADLINE).unwrap();
        assert!(rebuilt.find_file(Path::new("a/new.rs")).is_some());

        f.write(".gitignore", "build/\n");
        index.apply(&WatchEvent::Changed(f.root.join(".gitignore")));
        let rebuilt = index.wait_fresh(&f.root, DEADLINE).unwrap();
        assert!(
            rebuilt.find_file(Path::new("app.log")).is_some(),
            "ignore rules re-read"
        );

        index.apply(&WatchEvent::Overflow);
        assert!(
            index.snapshot(&f.root).is_none(),
            "overflow: anything may have changed"
        );
        assert!(index.wait_fresh(&f.root, DEADLINE).is_some());

        index.apply(&WatchEvent::Status(
            f.root.clone(),
            RootStatus::Failed("limit".into()),
        ));
        assert!(index.snapshot(&f.root).is_none());
        assert_eq!(
            index.status()[0].state,
            IndexState::Unavailable("limit".into())
        );
        assert!(
            index
                .wait_fresh(&f.root, Duration::from_millis(300))
                .is_none()
        );
    }

    #[test]
    fn roots_are_only_built_once_watched() {
        let f = Fixture::new();
        let index = FileIndex::new();
        index.set_roots(std::slice::from_ref(&f.root));
        assert!(
            index
                .wait_fresh(&f.root, Duration::from_millis(300))
                .is_none()
        );
        assert_eq!(index.status()[0].state, IndexState::Waiting);
        // The watcher may report before the root is set; the status is remembered.
        let other = FileIndex::new();
        other.apply(&WatchEvent::Status(f.root.clone(), RootStatus::Watching));
        other.set_roots(std::slice::from_ref(&f.root));
        assert!(other.wait_fresh(&f.root, DEADLINE).is_some());
        other.set_roots(&[]);
        assert!(other.status().is_empty());
    }
}
