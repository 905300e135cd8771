//! [`glob`]: file finding by a glob over the path relative to each searched directory.
//!
//! The pattern is compiled once with `globset` (`literal_separator(true)`, so `*` stays
//! within one path component and `**` crosses them; `{a,b}` alternatives work). A pattern
//! without `/` matches a file name at any depth, like `rg -g`, by matching as `**/pattern`.
//! Directory targets are walked with the same ignore, hidden and type rules as `grep`; a
//! file target is kept when its file name matches. Only regular files are listed (symlinks
//! are not followed, as in the walk).
//!
//! Results are retained and paged exactly like grep's (see [`retain`](super::retain)).
//! Modification times are read during the walk only when sorting by them; otherwise they
//! are filled in for the returned page alone, which keeps path-sorted globs stat-free.

use crate::platform::os::OsStrExt;
use std::cmp::Reverse;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering as AtomicOrdering;
use std::time::{Instant, SystemTime};

use globset::{GlobBuilder, GlobMatcher};
use ignore::DirEntry;
use ignore::types::Types;

use crate::index::{FileIndex, RootIndex};

use super::error::SearchError;
use super::indexed::{chunks_parallel, index_compatible};
use super::outcome::{FoundFile, GlobOutcome};
use super::query::{GlobQuery, SortBy};
use super::retain::{Best, Rank, Ranked, page, retention_cap};
use super::targets::{Target, build_types, check_glob, classify_targets};
use crate::pool::pacing::threads_for;
use crate::walk::Control;
use crate::walk::Stats;
use crate::walk::{PerThread, WalkOptions, walk_dir};

/// Finds the regular files under `targets` whose path relative to the target matches
/// `query.pattern`, and returns one sorted page of them.
pub fn glob(
    query: &GlobQuery,
    targets: &[PathBuf],
    control: &Control,
) -> Result<GlobOutcome, SearchError> {
    run(query, targets, control, None)
}

/// [`glob()`], answering each directory target from `index` (pure in-memory filtering of
/// the stored relative paths: no walk, no `stat`) when it has a fresh snapshot covering it
/// and the query is index-compatible; other targets are walked. Results are identical.
pub fn glob_indexed(
    query: &GlobQuery,
    targets: &[PathBuf],
    index: &FileIndex,
    control: &Control,
) -> Result<GlobOutcome, SearchError> {
    run(query, targets, control, Some(index))
}

/// Globs one directory target over an index snapshot. `None` when `dir` is not a
/// directory the default walk enters (then walk); the query must be [`index_compatible`].
pub fn glob_files(
    query: &GlobQuery,
    dir: &Path,
    snapshot: &RootIndex,
    control: &Control,
) -> Result<Option<GlobOutcome>, SearchError> {
    let started = Instant::now();
    let matcher = compile_glob(&query.pattern)?;
    let types = build_types(&query.types)?;
    let found = from_index(snapshot, dir, &matcher, types.as_ref(), query, control);
    Ok(found.map(|found| found.into_outcome(query, started, control.is_cancelled())))
}

/// The matching files below `dir` from the index, or `None` when `dir` is not indexed.
fn from_index(
    index: &RootIndex,
    dir: &Path,
    matcher: &GlobMatcher,
    types: Option<&Types>,
    query: &GlobQuery,
    control: &Control,
) -> Option<Found> {
    let (sort, threads) = (query.sort, threads_for(query.threads));
    let after = query.after.as_deref();
    let cap = retention_cap(query.offset, query.limit);
    let rel_dir = dir.strip_prefix(index.root()).ok()?;
    let start = index.find_dir(rel_dir)?;
    // Bytes to cut from a root-relative path to make it relative to `dir`.
    let cut = match rel_dir.as_os_str().len() {
        0 => 0,
        n => n + 1,
    };
    let visit = |found: &mut Found, ids: std::ops::Range<usize>| {
        let count = ids.len() as u64;
        for id in ids {
            if id % 4096 == 0 && control.is_cancelled() {
                return;
            }
            let file = index.file(id);
            if types.is_some_and(|types| types.matched(file.rel, false).is_ignore()) {
                continue;
            }
            found.stats.files_searched += 1;
            let below = Path::new(OsStr::from_bytes(&file.rel.as_os_str().as_bytes()[cut..]));
            if !matcher.is_match(below) {
                continue;
            }
            let rank: Rank = match sort {
                SortBy::Path => None,
                SortBy::Modified => Some(Reverse(file.modified.unwrap_or(SystemTime::UNIX_EPOCH))),
            };
            let path = index.path_of(id);
            if after.is_some_and(|after| path.as_path() <= after) {
                continue;
            }
            let file = FoundFile {
                path,
                modified: file.modified,
            };
            let item = Hit {
                file,
                walked: false,
            };
            found.best.push(Ranked { rank, item });
        }
        control
            .files_examined
            .fetch_add(count, AtomicOrdering::Relaxed);
    };
    let parts = chunks_parallel(
        index.files_under(rel_dir),
        threads,
        &|| Found::new(cap),
        &visit,
    );
    let mut total = Found::new(cap);
    for part in parts {
        total.merge(part);
    }
    // What the walk meets but cannot read (special files of the types asked for,
    // directories it could not list) is counted as a walk counts it.
    for (rel, _, special) in index.skipped_in(index.dirs_below(start)) {
        if !special || types.is_none_or(|types| !types.matched(rel, false).is_ignore()) {
            total.stats.skipped_unreadable += 1;
        }
    }
    total.stats.indexed_targets += 1;
    total.stats.note_skipped(&index.skipped_ignore_for(dir));
    Some(total)
}

fn run(
    query: &GlobQuery,
    targets: &[PathBuf],
    control: &Control,
    index: Option<&FileIndex>,
) -> Result<GlobOutcome, SearchError> {
    let started = Instant::now();
    let matcher = compile_glob(&query.pattern)?;
    let options = WalkOptions {
        hidden: query.hidden,
        no_ignore: query.no_ignore,
        types: build_types(&query.types)?,
    };
    let cap = retention_cap(query.offset, query.limit);
    let mut total = Found::new(cap);
    for target in classify_targets(targets, control, &mut total.stats) {
        if control.is_cancelled() {
            break;
        }
        match target {
            Target::File(path) => {
                control.file_examined();
                let mut found = Found::new(cap);
                let parent = path.parent().unwrap_or(Path::new("/"));
                found.consider(&path, parent, &matcher, query, || std::fs::metadata(&path));
                total.merge(found);
            }
            Target::Dir(dir) => {
                let snapshot = index
                    .filter(|_| index_compatible(query.hidden, query.no_ignore))
                    .and_then(|index| index.snapshot_for(&dir));
                let types = options.types.as_ref();
                if let Some(found) = snapshot.as_deref().and_then(|snapshot| {
                    from_index(snapshot, &dir, &matcher, types, query, control)
                }) {
                    total.merge(found);
                    continue;
                }
                let mut walker = options.walker(&dir, None);
                walker.threads(threads_for(query.threads));
                let make = || GlobWorker {
                    dir: &dir,
                    matcher: &matcher,
                    query,
                    found: Found::new(cap),
                };
                for worker in walk_dir(&walker, control, &make) {
                    total.merge(worker.found);
                }
            }
        }
    }
    Ok(total.into_outcome(query, started, control.is_cancelled()))
}

/// Compiles the glob tool's pattern; a pattern without `/` matches at any depth.
pub fn compile_glob(pattern: &str) -> Result<GlobMatcher, SearchError> {
    check_glob(pattern)?;
    // On Windows `\` separates too (globset matches Windows paths with `/`, and does not
    // treat `\` as an escape there): `src\*.rs` means `src/*.rs`, not any depth.
    #[cfg(windows)]
    let pattern = &pattern.replace('\\', "/");
    let trimmed = pattern.trim_start_matches("./").trim_start_matches('/');
    let effective = match trimmed.contains('/') {
        true => trimmed.to_owned(),
        false => format!("**/{trimmed}"),
    };
    let glob = GlobBuilder::new(&effective)
        .literal_separator(true)
        .build()
        .map_err(|err| SearchError::InvalidGlob {
            glob: pattern.to_owned(),
            message: err.kind().to_string(),
        })?;
    Ok(glob.compile_matcher())
}

struct GlobWorker<'a> {
    dir: &'a Path,
    matcher: &'a GlobMatcher,
    query: &'a GlobQuery,
    found: Found,
}

impl PerThread for GlobWorker<'_> {
    fn stats(&mut self) -> &mut Stats {
        &mut self.found.stats
    }

    fn file(&mut self, entry: &DirEntry) {
        self.found
            .consider(entry.path(), self.dir, self.matcher, self.query, || {
                entry.metadata()
            });
    }
}

/// A matching file, and whether a walk of the disk found it (else the index listed it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Hit {
    file: FoundFile,
    walked: bool,
}

impl Hit {
    /// Whether listing this file needs [`still_inside`](crate::files::safe::still_inside):
    /// it was found by reading directories by path, or its modification time will be read
    /// by path (an indexed file whose `lstat` failed when it was indexed).
    fn touches_disk(&self) -> bool {
        self.walked || self.file.modified.is_none()
    }
}

/// Matching files retained so far (one worker's, or all of them merged).
struct Found {
    best: Best<Ranked<Hit>>,
    stats: Stats,
}

impl Found {
    fn new(cap: usize) -> Self {
        Self {
            best: Best::new(cap),
            stats: Stats::default(),
        }
    }

    /// Keeps `path` if its path relative to `base` matches (and sorts after
    /// `query.after`). `metadata` is only called when sorting by modification time.
    fn consider<M, E>(
        &mut self,
        path: &Path,
        base: &Path,
        matcher: &GlobMatcher,
        query: &GlobQuery,
        metadata: M,
    ) where
        M: FnOnce() -> Result<std::fs::Metadata, E>,
    {
        self.stats.files_searched += 1;
        let relative = path.strip_prefix(base).unwrap_or(path);
        if !matcher.is_match(relative) || query.after.as_deref().is_some_and(|after| path <= after)
        {
            return;
        }
        let (rank, modified): (Rank, _) = match query.sort {
            SortBy::Path => (None, None),
            SortBy::Modified => {
                let modified = metadata().ok().and_then(|m| m.modified().ok());
                (
                    Some(Reverse(modified.unwrap_or(SystemTime::UNIX_EPOCH))),
                    modified,
                )
            }
        };
        let file = FoundFile {
            path: path.to_path_buf(),
            modified,
        };
        let item = Hit { file, walked: true };
        self.best.push(Ranked { rank, item });
    }

    fn merge(&mut self, mut other: Found) {
        other.stats.peak_retained = other.best.peak();
        self.stats.add(&other.stats);
        self.best.merge(other.best);
    }

    fn into_outcome(self, query: &GlobQuery, started: Instant, cancelled: bool) -> GlobOutcome {
        let mut stats = self.stats;
        stats.elapsed = started.elapsed();
        let total = self.best.seen();
        let page = page(self.best.into_sorted(), total, query.offset, query.limit);
        // The walk reads directories by path, so a file found through a directory swapped
        // for a symlink mid-walk (or a root swapped for one) must not be listed: every
        // walked file of the page must exist in its real, symlink-free parent now. Files
        // listed from a fresh index snapshot are not checked: this answer makes no
        // filesystem call for them (path, size and mtime come from memory), and the index
        // holds only names that its own build walk or watch events saw inside the root
        // (ARCHITECTURE.md, "Rules that hold"). Only the page is checked, and every caller
        // (tools, resources) gets the same list.
        let inside = crate::files::safe::still_inside(
            page.items
                .iter()
                .filter(|r| r.item.touches_disk())
                .map(|r| r.item.file.path.as_path()),
        );
        let files = page
            .items
            .into_iter()
            .filter(|ranked| !ranked.item.touches_disk() || inside.contains(&ranked.item.file.path))
            .map(|ranked| with_modified(ranked.item.file))
            .collect();
        GlobOutcome {
            files,
            total,
            truncated: page.truncated,
            next_offset: page.next_offset,
            stats,
            cancelled,
        }
    }
}

/// Fills in the modification time when the walk did not need it.
fn with_modified(mut file: FoundFile) -> FoundFile {
    if file.modified.is_none() {
        file.modified = std::fs::metadata(&file.path)
            .and_then(|m| m.modified())
            .ok();
    }
    file
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::compile_glob;
    use std::path::Path;

    /// A backslash in a relative pattern separates, as `/` does: the pattern is anchored to
    /// its directory instead of matching at any depth.
    #[test]
    fn a_backslash_pattern_is_anchored_like_a_slash_pattern() {
        let glob = compile_glob(r"src\*.rs").unwrap();
        assert!(glob.is_match(Path::new(r"src\main.rs")));
        assert!(!glob.is_match(Path::new(r"other\src\main.rs")));
        assert!(!glob.is_match(Path::new(r"src\deep\main.rs")));
    }
}
