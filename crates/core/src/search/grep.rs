//! [`grep`]: content search over targets, from query validation to the sorted page.
//!
//! Flow: compile the matcher, type filter and glob filters once (every query mistake is
//! reported before any file is touched); classify the targets; search file targets here
//! and walk directory targets in parallel, each walker thread with its own `Worker`
//! (one `Searcher`, one bounded collector); merge the workers; cut the page.
//!
//! Every file is opened beneath its directory without following any symlink
//! (`openat2`), so a file reached through a directory swapped for a symlink mid-walk is
//! never opened, and grep results need no further check of where they were found (glob,
//! which opens nothing, checks its page instead).
//!
//! Policy that follows ripgrep: walked files stop at the first NUL and are dropped as
//! binary; explicitly named files are searched with NULs replaced. Files over
//! `max_filesize` are not opened past `fstat`. A file whose search is interrupted by a
//! cancel contributes nothing, so partial files never show up as complete results.

use std::cmp::{Ordering, Reverse};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::DirEntry;

use crate::index::{FileIndex, RootIndex};

use super::control::Control;
use super::error::{SearchError, regex_message};
use super::indexed::{Candidates, for_each_parallel, index_compatible};
use super::outcome::{FileCount, GrepEntries, GrepMatch, GrepOutcome, Stats};
use super::query::{CaseMode, GrepQuery, OutputMode, SortBy};
use super::retain::{Best, ByPath, Rank, Ranked, page, path_cmp, retention_cap};
use super::sink::{Build, FileSink, SinkSettings};
use super::walk::{
    CancellableReader, PerThread, Target, WalkOptions, build_overrides, build_types,
    classify_targets, open_regular, threads_for, walk_dir,
};

/// Most bytes a searcher holds at once: the longest line searched (or, in multiline mode,
/// the largest file). Longer lines and larger multiline files are skipped and counted as
/// too large. It bounds each search thread's memory whatever the files, and it bounds the
/// one step that cannot be interrupted, a regex run over one buffer, so a cancel takes
/// effect within one such run.
pub(crate) const MAX_BUFFER: usize = 8 << 20;

/// Longest pattern accepted, in bytes; longer ones are refused before compiling.
pub(crate) const MAX_PATTERN_BYTES: usize = 64 << 10;

/// Compiled-size limit of a regex (`grep-regex` allows 100 MiB by default): a pattern
/// whose program would be larger is refused up front instead of costing seconds and memory.
pub(crate) const MAX_REGEX_SIZE: usize = 8 << 20;

/// Cache of the lazy DFA per search thread.
const MAX_DFA_CACHE: usize = 16 << 20;

/// Searches `targets` (canonical absolute paths: directories are walked, regular files are
/// searched as named explicitly) and returns one sorted page of results.
///
/// Errors only for a bad query; per-file problems are counted in
/// [`GrepOutcome::stats`]. Blocks until done or until `control` is cancelled.
pub fn grep(
    query: &GrepQuery,
    targets: &[PathBuf],
    control: &Control,
) -> Result<GrepOutcome, SearchError> {
    run(query, targets, control, None)
}

/// [`grep()`], taking the candidate files of each directory target from `index` when it
/// has a fresh snapshot covering that directory and the query is index-compatible (see
/// [`indexed`](super::indexed)); other targets are walked. Results are identical either
/// way; [`Stats::indexed_targets`] says how many targets the index answered.
pub fn grep_indexed(
    query: &GrepQuery,
    targets: &[PathBuf],
    index: &FileIndex,
    control: &Control,
) -> Result<GrepOutcome, SearchError> {
    run(query, targets, control, Some(index))
}

/// Searches the files of one directory target taken from an index snapshot instead of
/// walking. `None` when the snapshot cannot answer this query for `dir` exactly (then
/// walk); the query must be [`index_compatible`].
pub fn grep_files(
    query: &GrepQuery,
    dir: &Path,
    snapshot: &RootIndex,
    control: &Control,
) -> Result<Option<GrepOutcome>, SearchError> {
    let started = Instant::now();
    let matcher = build_matcher(query)?;
    let types = build_types(&query.types)?;
    let overrides = build_overrides(dir, &query.globs)?;
    let job = Job::new(query, &matcher, control);
    let mut total = Collected::new(query.mode, job.cap);
    let Some(candidates) = Candidates::select(snapshot, dir, overrides.as_ref(), types.as_ref())
    else {
        return Ok(None);
    };
    search_candidates(&job, &candidates, &mut total);
    Ok(Some(total.into_outcome(&job, started)))
}

fn search_candidates(job: &Job<'_>, candidates: &Candidates<'_>, total: &mut Collected) {
    let control = job.control;
    let visit = |worker: &mut Worker<'_>, i: usize| {
        control.file_examined();
        worker.search_path(&candidates.path(i), false);
    };
    let make = || Worker::new(job);
    let threads = threads_for(job.query.threads);
    for worker in for_each_parallel(candidates.len(), threads, control, &make, &visit) {
        total.merge(worker.collected);
    }
    total.stats.indexed_targets += 1;
    total.stats.note_skipped(&candidates.skipped_ignore);
}

fn run(
    query: &GrepQuery,
    targets: &[PathBuf],
    control: &Control,
    index: Option<&FileIndex>,
) -> Result<GrepOutcome, SearchError> {
    let started = Instant::now();
    let matcher = build_matcher(query)?;
    let options = WalkOptions {
        hidden: query.hidden,
        no_ignore: query.no_ignore,
        types: build_types(&query.types)?,
    };
    // Validate the globs even when no directory target will use them.
    build_overrides(Path::new("/"), &query.globs)?;

    let job = Job::new(query, &matcher, control);
    let mut total = Collected::new(query.mode, job.cap);
    for target in classify_targets(targets, control, &mut total.stats) {
        if control.is_cancelled() {
            break;
        }
        match target {
            Target::File(path) => {
                let mut worker = Worker::new(&job);
                control.file_examined();
                worker.search_path(&path, true);
                total.merge(worker.collected);
            }
            Target::Dir(dir) => {
                let overrides = build_overrides(&dir, &query.globs)?;
                let snapshot = index
                    .filter(|_| index_compatible(query.hidden, query.no_ignore))
                    .and_then(|index| index.snapshot_for(&dir));
                let candidates = snapshot.as_deref().and_then(|snapshot| {
                    Candidates::select(snapshot, &dir, overrides.as_ref(), options.types.as_ref())
                });
                if let Some(candidates) = candidates {
                    search_candidates(&job, &candidates, &mut total);
                    continue;
                }
                let mut walker = options.walker(&dir, overrides);
                walker.threads(threads_for(query.threads));
                for worker in walk_dir(&walker, control, &|| Worker::new(&job)) {
                    total.merge(worker.collected);
                }
            }
        }
    }
    Ok(total.into_outcome(&job, started))
}

/// Compiles the pattern with ripgrep's flag semantics. `^`/`$` match at line boundaries;
/// without `multiline` a match can never contain `\n`, which lets the searcher work line
/// by line.
pub fn build_matcher(query: &GrepQuery) -> Result<RegexMatcher, SearchError> {
    if query.pattern.len() > MAX_PATTERN_BYTES {
        return Err(SearchError::PatternTooLarge {
            bytes: query.pattern.len(),
            message: format!("patterns are limited to {} KiB", MAX_PATTERN_BYTES >> 10),
        });
    }
    let mut builder = RegexMatcherBuilder::new();
    builder
        .size_limit(MAX_REGEX_SIZE)
        .dfa_size_limit(MAX_DFA_CACHE)
        .multi_line(true)
        .case_insensitive(query.case == CaseMode::Insensitive)
        .case_smart(query.case == CaseMode::Smart)
        .fixed_strings(query.fixed_strings)
        .word(query.word);
    if query.multiline {
        builder.dot_matches_new_line(true);
    } else {
        // `$` also matches before `\r\n`, so anchored patterns work in CRLF files (rg
        // needs --crlf for this; agents expect it to just work).
        builder.line_terminator(Some(b'\n')).crlf(true);
    }
    builder.build(&query.pattern).map_err(|err| {
        let message = err.to_string();
        if message.contains("size limit") {
            // The engine's text says only "exceeds size limit"; say what to change.
            return SearchError::PatternTooLarge {
                bytes: query.pattern.len(),
                message: format!(
                    "its compiled form would exceed {} MiB (large repetition counts such as \\w{{1000}}, or many alternatives, multiply its size); use smaller counts or fewer alternatives, or fixed_strings for literal text",
                    MAX_REGEX_SIZE >> 20
                ),
            };
        }
        SearchError::InvalidRegex {
            pattern: query.pattern.clone(),
            message: regex_message(&query.pattern, &message),
        }
    })
}

/// What every worker of one request shares (read-only).
struct Job<'a> {
    query: &'a GrepQuery,
    settings: SinkSettings<'a>,
    control: &'a Control,
    cap: usize,
}

impl<'a> Job<'a> {
    fn new(query: &'a GrepQuery, matcher: &'a RegexMatcher, control: &'a Control) -> Self {
        let settings = SinkSettings {
            mode: query.mode,
            matcher,
            multiline: query.multiline,
            before: query.before,
            after: query.after,
            max_line_chars: query.max_line_chars,
        };
        Self {
            query,
            settings,
            control,
            cap: retention_cap(query.offset, query.limit),
        }
    }

    /// The searcher of the search pass (`context: false`: content mode records only where
    /// matches start) or of the page pass (`context: true`).
    fn searcher(&self, context: bool) -> Searcher {
        let content = self.query.mode == OutputMode::Content;
        SearcherBuilder::new()
            .line_number(content)
            .multi_line(self.query.multiline)
            .before_context(if context { self.query.before } else { 0 })
            .after_context(if context { self.query.after } else { 0 })
            .heap_limit(Some(MAX_BUFFER))
            .binary_detection(BinaryDetection::quit(b'\0'))
            .line_terminator(if self.query.multiline {
                LineTerminator::byte(b'\n')
            } else {
                // Must agree with the matcher's CRLF-aware `$` (see `build_matcher`).
                LineTerminator::crlf()
            })
            .build()
    }

    fn rank(&self, modified: Option<SystemTime>) -> Rank {
        match self.query.sort {
            SortBy::Path => None,
            SortBy::Modified => Some(Reverse(modified.unwrap_or(SystemTime::UNIX_EPOCH))),
        }
    }
}

/// One thread's searcher and results.
struct Worker<'a> {
    job: &'a Job<'a>,
    searcher: Searcher,
    collected: Collected,
}

impl PerThread for Worker<'_> {
    fn stats(&mut self) -> &mut Stats {
        &mut self.collected.stats
    }

    fn file(&mut self, entry: &DirEntry) {
        self.search_path(entry.path(), false);
    }
}

impl<'a> Worker<'a> {
    fn new(job: &'a Job<'a>) -> Self {
        Self {
            job,
            searcher: job.searcher(false),
            collected: Collected::new(job.query.mode, job.cap),
        }
    }

    /// Searches one file and commits its results; `explicit` is true for a file the
    /// caller named (binary content searched with NULs replaced, never dropped).
    fn search_path(&mut self, path: &Path, explicit: bool) {
        let stats = &mut self.collected.stats;
        let Ok((file, meta)) = open_regular(path) else {
            stats.skipped_unreadable += 1;
            return;
        };
        if self
            .job
            .query
            .max_filesize
            .is_some_and(|max| meta.len() > max)
        {
            stats.skipped_too_large += 1;
            return;
        }
        let rank = self.job.rank(meta.modified().ok());
        let keep = self.collected.keep_for(&rank, path, self.job.cap);
        let detection = match explicit {
            true => BinaryDetection::convert(b'\0'),
            false => BinaryDetection::quit(b'\0'),
        };
        self.searcher.set_binary_detection(detection);
        let control = self.job.control;
        let mut sink = FileSink::keys(self.job.settings, control, path, keep, !explicit);
        let reader = CancellableReader::new(file, control);
        let result = self
            .searcher
            .search_reader(self.job.settings.matcher, reader, &mut sink);
        if sink.cancelled || control.is_cancelled() {
            return;
        }
        let stats = &mut self.collected.stats;
        if let Err(err) = result {
            tracing::debug!(path = %path.display(), %err, "file skipped");
            match is_over_buffer(&err) {
                true => stats.skipped_too_large += 1,
                false => stats.skipped_unreadable += 1,
            }
        } else if sink.binary {
            stats.skipped_binary += 1;
        } else {
            stats.files_searched += 1;
            stats.bytes_searched += sink.bytes_searched;
            self.collected.commit(rank, path, explicit, sink);
        }
    }
}

/// The entries retained for the query's mode.
enum Retained {
    Matches(Best<Ranked<MatchKey>>),
    Files(Best<Ranked<ByPath>>),
    Counts(Best<Ranked<FileCount>>),
}

/// Results of one worker, or of all of them once merged.
struct Collected {
    retained: Retained,
    total_matches: u64,
    /// Most entries built for a single file at once (the sink's staging area).
    staged_peak: usize,
    stats: Stats,
}

impl Collected {
    fn new(mode: OutputMode, cap: usize) -> Self {
        let retained = match mode {
            OutputMode::Content => Retained::Matches(Best::new(cap)),
            OutputMode::FilesWithMatches => Retained::Files(Best::new(cap)),
            OutputMode::Count => Retained::Counts(Best::new(cap)),
        };
        Self {
            retained,
            total_matches: 0,
            staged_peak: 0,
            stats: Stats::default(),
        }
    }

    /// How many content entries to build for a file: none when every entry of this file
    /// would sort after the worst one already kept (all its keys share `rank` and `path`).
    fn keep_for(&self, rank: &Rank, path: &Path, cap: usize) -> usize {
        let Retained::Matches(best) = &self.retained else {
            return 0;
        };
        let admits = best.admits(|worst| {
            (rank, path)
                .cmp(&(&worst.rank, &*worst.item.path))
                .then(Ordering::Less)
        });
        if admits { cap } else { 0 }
    }

    fn commit(&mut self, rank: Rank, path: &Path, explicit: bool, sink: FileSink<'_>) {
        self.total_matches += sink.match_lines;
        if sink.match_lines == 0 {
            return;
        }
        match &mut self.retained {
            Retained::Matches(best) => {
                self.staged_peak = self.staged_peak.max(sink.starts.len());
                let recorded = sink.starts.len();
                let path: Arc<Path> = Arc::from(path);
                for line in sink.starts {
                    let item = MatchKey {
                        path: path.clone(),
                        line,
                        explicit,
                    };
                    best.push(Ranked { rank, item });
                }
                best.count_only((sink.match_lines as usize).saturating_sub(recorded));
            }
            Retained::Files(best) => best.push(Ranked {
                rank,
                item: ByPath(path.to_path_buf()),
            }),
            Retained::Counts(best) => {
                let item = FileCount {
                    path: path.to_path_buf(),
                    count: sink.match_lines,
                };
                best.push(Ranked { rank, item });
            }
        }
    }

    fn peak(&self) -> usize {
        let retained = match &self.retained {
            Retained::Matches(best) => best.peak(),
            Retained::Files(best) => best.peak(),
            Retained::Counts(best) => best.peak(),
        };
        retained + self.staged_peak
    }

    fn merge(&mut self, mut other: Collected) {
        other.stats.peak_retained = other.peak();
        self.stats.add(&other.stats);
        self.total_matches += other.total_matches;
        match (&mut self.retained, other.retained) {
            (Retained::Matches(a), Retained::Matches(b)) => a.merge(b),
            (Retained::Files(a), Retained::Files(b)) => a.merge(b),
            (Retained::Counts(a), Retained::Counts(b)) => a.merge(b),
            _ => unreachable!("workers of one request share its output mode"),
        }
    }

    fn into_outcome(self, job: &Job<'_>, started: Instant) -> GrepOutcome {
        let query = job.query;
        let mut stats = self.stats;
        let (entries, total, next_offset) = match self.retained {
            Retained::Matches(best) => {
                let total = best.seen();
                let page = page(best.into_sorted(), total, query.offset, query.limit);
                let listed = page.items.len();
                let (built, consumed) = job.build_page(page.items, &mut stats);
                // Paging progresses by what this page consumed, which is less than the
                // page when the byte allowance ran out.
                let next_offset = match consumed < listed {
                    true => Some(query.offset + consumed),
                    false => page.next_offset,
                };
                (GrepEntries::Matches(built), total, next_offset)
            }
            Retained::Files(best) => {
                let (items, total, next) = cut(best, query);
                let files = items.into_iter().map(|r| r.item.0).collect();
                (GrepEntries::Files(files), total, next)
            }
            Retained::Counts(best) => {
                let (items, total, next) = cut(best, query);
                let counts = items.into_iter().map(|r| r.item).collect();
                (GrepEntries::Counts(counts), total, next)
            }
        };
        stats.elapsed = started.elapsed();
        GrepOutcome {
            entries,
            total,
            total_matches: self.total_matches,
            truncated: next_offset.is_some(),
            next_offset,
            stats,
            cancelled: job.control.is_cancelled(),
        }
    }
}

/// A content entry of the search pass: where a match starts. The page pass turns the keys
/// of one page into entries; sorted like [`GrepMatch`] (path, then line).
#[derive(Clone, Debug)]
struct MatchKey {
    path: Arc<Path>,
    line: u64,
    /// The file was named explicitly (searched with NULs replaced, never dropped).
    explicit: bool,
}

impl MatchKey {
    /// The keys of one file share one `Arc`: comparing them skips the component-wise path
    /// comparison, which dominates sorting a file with many matches.
    fn cmp_path(&self, other: &MatchKey) -> Ordering {
        match Arc::ptr_eq(&self.path, &other.path) {
            true => Ordering::Equal,
            false => path_cmp(&self.path, &other.path),
        }
    }
}

impl Ord for MatchKey {
    fn cmp(&self, other: &MatchKey) -> Ordering {
        self.cmp_path(other)
            .then(self.line.cmp(&other.line))
            .then(self.explicit.cmp(&other.explicit))
    }
}

impl PartialOrd for MatchKey {
    fn partial_cmp(&self, other: &MatchKey) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for MatchKey {
    fn eq(&self, other: &MatchKey) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for MatchKey {}

/// Whether a search error is the searcher refusing to hold more than [`MAX_BUFFER`].
fn is_over_buffer(err: &std::io::Error) -> bool {
    err.to_string().contains("allocation limit")
}

impl Job<'_> {
    /// The page pass: searches each file of the page again, with context, and builds the
    /// entries of its keys within the byte allowance. Returns the entries and how many of
    /// the keys this page consumed (keys whose file vanished or changed count as
    /// consumed; the first key always is, so paging progresses).
    ///
    /// The allowance is spent file after file, in page order, but the files are searched
    /// in parallel: a batch of the next files is built speculatively, each with all the
    /// allowance left before the batch, and kept when it needed no more than what is left
    /// at its turn ([`FileSink::required`]: then the pass would have made every decision
    /// the same way with less). A file that did not fit is built again at its turn, alone,
    /// exactly as a sequential pass would. Batches start at one file and double while
    /// everything fits, so a page that ends early (a small budget) wastes little work.
    fn build_page(
        &self,
        keys: Vec<Ranked<MatchKey>>,
        stats: &mut Stats,
    ) -> (Vec<GrepMatch>, usize) {
        let listed = keys.len();
        let files = group_by_file(&keys);
        let mut room = self.query.max_bytes.unwrap_or(usize::MAX);
        let mut built: Vec<GrepMatch> = Vec::new();
        let mut consumed = 0;
        let mut searcher = self.searcher(true);
        let threads = threads_for(self.query.threads);
        let mut batch = 1;
        let mut next = 0;
        'page: while next < files.len() {
            if self.control.is_cancelled() {
                break;
            }
            let end = files.len().min(next + batch);
            let ahead = self.speculate(&files[next..end], room, built.is_empty(), threads);
            for (k, (file, spec)) in files[next..end].iter().zip(ahead).enumerate() {
                if self.control.is_cancelled() {
                    break 'page;
                }
                next += 1;
                let spec = match spec {
                    Speculated::Vanished => {
                        consumed += file.wanted.len(); // vanished or unreadable since the search pass
                        continue;
                    }
                    // The batch's first file was built with this very room: it is exact.
                    Speculated::Built(spec) if k == 0 => spec,
                    Speculated::Built(spec) if !spec.full && spec.required <= room => spec,
                    // Did not fit, or not searched ahead (cancelled): build it at its turn.
                    _ => {
                        let build = Build {
                            wanted: &file.wanted,
                            room,
                            first: built.is_empty(),
                        };
                        let Some(built_file) =
                            self.build_file(&mut searcher, &file.path, file.explicit, build)
                        else {
                            consumed += file.wanted.len();
                            continue;
                        };
                        built_file
                    }
                };
                room -= spec.charged;
                let last = spec.matches.last().map(|m| m.line);
                built.extend(spec.matches);
                if !spec.full {
                    consumed += file.wanted.len();
                    continue;
                }
                // The allowance ran out inside this file: the page ends after its last entry.
                consumed +=
                    last.map_or(0, |last| file.wanted.iter().filter(|&&l| l <= last).count());
                break 'page;
            }
            batch = (batch * 2).min(MAX_BATCH);
        }
        stats.peak_retained = stats.peak_retained.max(built.len());
        (built, consumed.max(usize::from(listed > 0)))
    }

    /// Builds `files` in parallel, each with `room` (see [`Job::build_page`]); `first`
    /// says no entry is built yet, for the first of them. One file is built on this
    /// thread with no threads started.
    fn speculate(
        &self,
        files: &[PageFile],
        room: usize,
        first: bool,
        threads: usize,
    ) -> Vec<Speculated> {
        let build = |searcher: &mut Searcher, i: usize| {
            let file = &files[i];
            let build = Build {
                wanted: &file.wanted,
                room,
                first: first && i == 0,
            };
            match self.build_file(searcher, &file.path, file.explicit, build) {
                Some(built) => Speculated::Built(built),
                None => Speculated::Vanished,
            }
        };
        if files.len() == 1 || threads <= 1 {
            let mut searcher = self.searcher(true);
            return (0..files.len()).map(|i| build(&mut searcher, i)).collect();
        }
        let make = || (self.searcher(true), Vec::new());
        let visit = |(searcher, done): &mut (Searcher, Vec<(usize, Speculated)>), i: usize| {
            done.push((i, build(searcher, i)));
        };
        let mut out: Vec<Speculated> = (0..files.len()).map(|_| Speculated::Skipped).collect();
        for (_, done) in for_each_parallel(files.len(), threads, self.control, &make, &visit) {
            for (i, spec) in done {
                out[i] = spec;
            }
        }
        out
    }

    fn build_file(
        &self,
        searcher: &mut Searcher,
        path: &Path,
        explicit: bool,
        build: Build<'_>,
    ) -> Option<BuiltFile> {
        let (file, _) = open_regular(path).ok()?;
        searcher.set_binary_detection(match explicit {
            true => BinaryDetection::convert(b'\0'),
            false => BinaryDetection::quit(b'\0'),
        });
        let control = self.control;
        let room = build.room;
        let mut sink = FileSink::entries(self.settings, control, path, build, !explicit);
        let reader = CancellableReader::new(file, control);
        searcher
            .search_reader(self.settings.matcher, reader, &mut sink)
            .ok()?;
        if sink.binary {
            return None;
        }
        let (left, full) = sink.allowance();
        Some(BuiltFile {
            required: sink.required(),
            matches: sink.matches,
            charged: room - left,
            full,
        })
    }
}

/// What the page pass built for one file.
struct BuiltFile {
    matches: Vec<GrepMatch>,
    /// Allowance spent.
    charged: usize,
    /// Least starting room that builds the same (see [`FileSink::required`]).
    required: usize,
    /// The allowance ran out: some wanted entry or line was left out.
    full: bool,
}

/// Most files the page pass builds ahead at once.
const MAX_BATCH: usize = 64;

/// One file of a page: its wanted lines, in order.
struct PageFile {
    path: Arc<Path>,
    explicit: bool,
    wanted: Vec<u64>,
}

/// A page's keys grouped by file (keys of one file are adjacent in page order).
fn group_by_file(keys: &[Ranked<MatchKey>]) -> Vec<PageFile> {
    let mut files: Vec<PageFile> = Vec::new();
    for key in keys {
        let key = &key.item;
        match files.last_mut() {
            Some(file) if Arc::ptr_eq(&file.path, &key.path) || file.path == key.path => {
                file.wanted.push(key.line);
            }
            _ => files.push(PageFile {
                path: key.path.clone(),
                explicit: key.explicit,
                wanted: vec![key.line],
            }),
        }
    }
    files
}

/// A file of the page built ahead of its turn.
enum Speculated {
    Built(BuiltFile),
    /// Vanished or unreadable since the search pass.
    Vanished,
    /// Not reached (cancelled).
    Skipped,
}

/// Sorts what was retained and cuts the page: (items, total, next offset).
fn cut<T: Ord>(best: Best<Ranked<T>>, query: &GrepQuery) -> (Vec<Ranked<T>>, usize, Option<usize>) {
    let total = best.seen();
    let page = page(best.into_sorted(), total, query.offset, query.limit);
    (page.items, total, page.next_offset)
}

#[cfg(test)]
mod key_tests {
    use super::*;

    fn key(path: &Arc<Path>, line: u64) -> MatchKey {
        MatchKey {
            path: path.clone(),
            line,
            explicit: false,
        }
    }

    #[test]
    fn keys_order_by_path_then_line_whether_or_not_they_share_the_path() {
        let a: Arc<Path> = Arc::from(Path::new("/r/a/b.c"));
        let a_again: Arc<Path> = Arc::from(Path::new("/r/a/b.c"));
        let b: Arc<Path> = Arc::from(Path::new("/r/a.b"));
        assert_eq!(key(&a, 3), key(&a_again, 3));
        assert!(key(&a, 2) < key(&a_again, 3));
        assert!(key(&a, 9) < key(&a, 10));
        // Components, not bytes: "a" sorts before "a.b" although '/' > '.'.
        assert!(key(&a, 100) < key(&b, 1));
        assert_eq!(
            key(&a, 1).cmp(&key(&b, 1)),
            Path::new("/r/a/b.c").cmp(Path::new("/r/a.b"))
        );
    }
}
