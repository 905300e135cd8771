//! Building one root's index: a parallel walk exactly as a default search walks (the
//! shared walker of [`crate::walk`], with a per-thread collector), then [`pack`] sorts what
//! was collected into the compact [`RootIndex`]. The build is background work: it pauses
//! while a search runs (at most [`YIELD_MAX`] in all) and gives up past the file limit.

use crate::files::os::OsStrExt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::time::Instant;

use ignore::DirEntry;

use crate::ignores::SkippedIgnoreFile;

use super::root::{
    BuildInfo, DirRec, FileRec, IgnoredRec, RootIndex, SkippedRec, Span, as_path, cmp_paths,
    is_below, is_hidden, join_into, parent_of, to_nanos,
};
use crate::walk::{
    Control, PerThread, Stats, WalkOptions, YIELD_MAX, walk_dir_background, yield_to_searches,
};

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
    let walked = collect(root, root, None, control, max_files, started)?;
    Ok(walked.map(|(all, unreadable)| pack(root.to_path_buf(), all, unreadable, started)))
}

/// Walks `dir` (`root` itself, or a visited directory below it) exactly as a default
/// search walks `root`, down to `max_depth` (children of `dir` are at depth 1), and
/// collects what the index holds, with the count of unreadable entries. `Err(max_files)`
/// past the file limit, `Ok(None)` when cancelled.
fn collect(
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
    };
    for collector in parts {
        unreadable += collector.stats.skipped_unreadable;
        all.skipped_ignore
            .extend(collector.stats.skipped_ignore_files);
        all.absorb(collector.part);
    }
    Ok(Some((all, unreadable)))
}

// ---------------------------------------------------------------------------------------
// Updating

/// What [`update`] made of a batch of changed paths.
pub(super) enum Update {
    /// The index with the changes applied, and how many files that added or removed
    /// (boxed: the variants' sizes differ much).
    Applied(Box<RootIndex>, u64),
    /// None of the changes concerns what the index holds.
    Unchanged,
    /// A full build is needed (ignore rules changed, a directory went missing under an
    /// update) or cheaper (the directories to list again hold most of the root).
    Rebuild,
    Cancelled,
}

/// Applies created and removed paths (relative to the root) to `old` without walking the
/// whole root: each visited directory that gained or lost an entry is listed again, one
/// level deep, by the same walker as a build (so its entries are filtered exactly as the
/// whole walk would filter them: ignore rules, hidden, special files), a new directory
/// found there is walked whole, and a directory gone (or now ignored) is dropped with
/// everything below it. Everything else is kept from `old`, then packed again.
///
/// Paths whose parent the index does not visit are left out: they are inside an ignored or
/// hidden directory, or inside a new directory that its own parent's listing walks whole.
/// Listing a directory again is always correct, whatever happened in it meanwhile, so a
/// batch may hold duplicates and paths whose events arrived during an earlier update.
pub(super) fn update(
    old: &RootIndex,
    changed: &[Vec<u8>],
    control: &Control,
    max_files: usize,
) -> Update {
    let started = Instant::now();
    let mut relist: Vec<usize> = Vec::new();
    for rel in changed {
        if rel.is_empty() {
            continue;
        }
        if old.ignore_rules_at(rel) {
            return Update::Rebuild;
        }
        if is_hidden(rel) {
            continue;
        }
        if let Some(dir) = old.find_dir(as_path(parent_of(rel))) {
            relist.push(dir);
        }
    }
    relist.sort_unstable();
    relist.dedup();
    if relist.is_empty() {
        return Update::Unchanged;
    }
    // Listing those directories reads about as many entries as they held; past half the
    // root, one walk of the whole root costs little more and is simpler.
    let cost: usize = relist
        .iter()
        .map(|&dir| old.dir_file_ids(dir).len() + old.subdirs(dir).count() + 1)
        .sum();
    if cost > 4096 && cost * 2 > old.len() + old.info.dirs {
        return Update::Rebuild;
    }

    let root = old.root();
    let mut parts: Vec<Part> = Vec::new();
    let mut unreadable = 0;
    // Directories dropped with everything below them (ranges of directory positions).
    let mut dropped: Vec<Range<usize>> = Vec::new();
    let mut listed_again: Vec<usize> = Vec::new();
    let (mut added, mut removed) = (0u64, 0u64);
    // Pre-order: a directory comes before those below it, so a drop is known before
    // anything below it would be listed.
    for &dir in &relist {
        if dropped.iter().any(|range| range.contains(&dir)) {
            continue;
        }
        let rel = old.dir_rel(dir).to_path_buf();
        let path = root.join(&rel);
        if !std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
            // Gone without its parent's event (yet): let a build sort it out.
            return Update::Rebuild;
        }
        let Ok(Some((part, lost))) = collect(root, &path, Some(1), control, max_files, started)
        else {
            return match control.is_cancelled() {
                true => Update::Cancelled,
                false => Update::Rebuild,
            };
        };
        unreadable += lost;
        let text = |span: Span| &part.arena[span.range()];
        // Files: count what changed by comparing the names before and after.
        let mut now: Vec<&[u8]> = part.files.iter().map(|f| text(f.0)).collect();
        now.sort_unstable_by(|a, b| cmp_paths(a, b));
        let before = old.dir_file_ids(dir).len();
        let kept = old
            .dir_file_ids(dir)
            .filter(|&id| {
                now.binary_search_by(|n| cmp_paths(n, old.rel_bytes_of_file(id)))
                    .is_ok()
            })
            .count();
        added += (now.len() - kept) as u64;
        removed += (before - kept) as u64;
        // Sub-directories: the ones still yielded keep what is below them; the others are
        // dropped; the new ones are walked whole.
        let mut subdirs: Vec<&[u8]> = part
            .dirs
            .iter()
            .map(|&d| text(d))
            .filter(|d| *d != rel.as_os_str().as_bytes())
            .collect();
        subdirs.sort_unstable_by(|a, b| cmp_paths(a, b));
        for sub in old.subdirs(dir).collect::<Vec<_>>() {
            let sub_rel = old.dir_rel(sub).as_os_str().as_bytes();
            if subdirs.binary_search_by(|d| cmp_paths(d, sub_rel)).is_err() {
                let below = old.dirs_below(sub);
                removed += below
                    .clone()
                    .map(|d| old.dir_file_ids(d).len() as u64)
                    .sum::<u64>();
                dropped.push(below);
            }
        }
        let new_dirs: Vec<PathBuf> = subdirs
            .iter()
            .filter(|d| old.find_dir(as_path(d)).is_none())
            .map(|d| root.join(as_path(d)))
            .collect();
        listed_again.push(dir);
        parts.push(part);
        for new_dir in new_dirs {
            let Ok(Some((part, lost))) = collect(root, &new_dir, None, control, max_files, started)
            else {
                return match control.is_cancelled() {
                    true => Update::Cancelled,
                    false => Update::Rebuild,
                };
            };
            unreadable += lost;
            added += part.files.len() as u64;
            parts.push(part);
        }
    }

    // Keep the rest of `old`: one copy of its arena, its spans as they are.
    let gone = |dir: usize| {
        listed_again.contains(&dir) || dropped.iter().any(|range| range.contains(&dir))
    };
    let dir_gone = |dir: usize| dropped.iter().any(|range| range.contains(&dir));
    // Kept as they are: a change to an ignore file itself means a rebuild.
    let mut all = Part {
        arena: old.arena.to_vec(),
        skipped_ignore: old.skipped_ignore.to_vec(),
        ..Part::default()
    };
    let mut file_gone = vec![false; old.len()];
    for dir in listed_again
        .iter()
        .copied()
        .chain(dropped.iter().flat_map(|range| range.clone()))
    {
        for id in old.dir_file_ids(dir) {
            file_gone[id] = true;
        }
    }
    all.files = old
        .files
        .iter()
        .enumerate()
        .filter(|(id, _)| !file_gone[*id])
        .map(|(id, rec)| {
            let file = old.file(id);
            (rec.path, file.size, to_nanos(file.modified))
        })
        .collect();
    all.dirs = old
        .dirs
        .iter()
        .enumerate()
        .filter(|(d, _)| !dir_gone(*d))
        .map(|(_, rec)| rec.path)
        .collect();
    all.ignored = old
        .ignored
        .iter()
        .filter(|rec| !gone(rec.parent as usize))
        .map(|rec| (rec.path, rec.is_dir))
        .collect();
    all.skipped = old
        .skipped
        .iter()
        .filter(|rec| !gone(rec.dir as usize))
        .map(|rec| (rec.path, rec.special))
        .collect();
    unreadable += all.skipped.len() as u64;
    for part in parts {
        all.absorb(part);
    }
    let updated = pack(old.root().to_path_buf(), all, unreadable, started);
    if updated.len() > max_files {
        return Update::Rebuild;
    }
    Update::Applied(Box::new(updated), added + removed)
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

#[derive(Default)]
pub(super) struct Part {
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
    /// Ignore files the walk did not apply (reported by searches the index answers).
    skipped_ignore: Vec<SkippedIgnoreFile>,
    /// Ignored entries already known (kept from an earlier build by an update), as
    /// (path, is a directory).
    ignored: Vec<(Span, bool)>,
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
        self.skipped_ignore.extend(other.skipped_ignore);
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
        self.ignored.extend(
            other
                .ignored
                .into_iter()
                .map(|(path, is_dir)| (moved(path), is_dir)),
        );
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

/// Sorts and packs what the walk collected into the compact index.
pub(super) fn pack(root: PathBuf, part: Part, unreadable: u64, started: Instant) -> RootIndex {
    let Part {
        arena: raw,
        mut files,
        mut dirs,
        others,
        listed,
        skipped: skipped_raw,
        ignored: known_ignored,
        mut skipped_ignore,
    } = part;
    skipped_ignore.sort();
    skipped_ignore.dedup();
    let text = |s: Span| &raw[s.range()];
    // Stable sorts find and merge runs already in order: an update hands in the old
    // index's lists (sorted) followed by the few paths it listed again, so packing it
    // costs a merge, not a whole sort (`sort_unstable_by` sorted everything again on every
    // update of a burst of creations). A build's lists are sorted either way.
    files.sort_by(|a, b| cmp_paths(text(a.0), text(b.0)));
    dirs.sort_by(|a, b| cmp_paths(text(*a), text(*b)));
    dirs.dedup_by(|a, b| text(*a) == text(*b));

    // Ignored = listed but not yielded.
    let mut yielded: Vec<Span> = Vec::with_capacity(files.len() + dirs.len() + others.len());
    yielded.extend(files.iter().map(|f| f.0));
    yielded.extend(dirs.iter().copied());
    yielded.extend(others);
    yielded.sort_by(|a, b| cmp_paths(text(*a), text(*b)));
    let mut ignored_raw: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut full = Vec::new();
    for (dir, name, is_dir) in listed {
        join_into(&mut full, text(dir), text(name));
        let seen = yielded
            .binary_search_by(|y| cmp_paths(text(*y), &full))
            .is_ok();
        if !seen {
            ignored_raw.push((full.clone(), is_dir));
        }
    }
    ignored_raw.extend(
        known_ignored
            .into_iter()
            .map(|(span, is_dir)| (text(span).to_vec(), is_dir)),
    );
    ignored_raw.sort_by(|a, b| cmp_paths(&a.0, &b.0));
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
            if is_below(top_path, path) {
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
    // Sorted files come in runs of one directory: look each directory up once per run.
    let mut last: Option<(&[u8], u32)> = None;
    let parents: Vec<u32> = file_spans
        .iter()
        .map(|f| {
            let parent = parent_of(at(f.0));
            match last {
                Some((known, dir)) if known == parent => dir,
                _ => {
                    let dir = dir_of(at(f.0));
                    last = Some((parent, dir));
                    dir
                }
            }
        })
        .collect();
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
        skipped_ignore: skipped_ignore.into_boxed_slice(),
        info,
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
