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

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher};
use ignore::DirEntry;

use crate::content::grams::{self, Plan};
use crate::content::index::ContentIndex;
use crate::index::{FileIndex, RootIndex};

use super::error::{SearchError, regex_message};
use super::indexed::{Candidates, for_each_parallel, index_compatible};
use super::outcome::{FileCount, GrepEntries, GrepOutcome};
use super::page::{MatchKey, PagePass};
use super::query::{CaseMode, GrepQuery, OutputMode, SortBy};
use super::retain::{Best, ByPath, Rank, Ranked, page, retention_cap};
use super::sink::{FileSink, SinkSettings, searcher};
use super::targets::{
    CancellableReader, Target, build_overrides, build_types, classify_targets, open_regular,
};
use crate::pool::pacing::threads_for;
use crate::walk::Control;
use crate::walk::Stats;
use crate::walk::{PerThread, WalkOptions, walk_dir};

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
/// [`indexed`](super::indexed)), and reading only those of them `content` (the content
/// index, when given and ready) admits; other targets are walked. Results are identical
/// either way (a file ruled out is counted as searched, whole); [`Stats::indexed_targets`]
/// says how many targets the index answered.
pub fn grep_indexed(
    query: &GrepQuery,
    targets: &[PathBuf],
    indexes: Indexes<'_>,
    control: &Control,
) -> Result<GrepOutcome, SearchError> {
    run(query, targets, control, Some(indexes))
}

/// [`grep_indexed()`] when `indexes` are given, else [`grep()`].
pub fn grep_with(
    query: &GrepQuery,
    targets: &[PathBuf],
    indexes: Option<Indexes<'_>>,
    control: &Control,
) -> Result<GrepOutcome, SearchError> {
    run(query, targets, control, indexes)
}

/// What a search may read instead of walking the disk: the file index (the candidate
/// files), and the content index (which of them may match) when there is one.
#[derive(Clone, Copy)]
pub struct Indexes<'a> {
    pub files: &'a FileIndex,
    pub content: Option<&'a ContentIndex>,
}

impl<'a> Indexes<'a> {
    /// The file index alone.
    pub fn files(files: &'a FileIndex) -> Indexes<'a> {
        Indexes {
            files,
            content: None,
        }
    }
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

/// Leaves out of `candidates` the files `content` rules out for `plan` (it holds a fresh
/// view of them), counted as searched: their size as bytes searched, or too large.
fn rule_out(
    job: &Job<'_>,
    candidates: &mut Candidates<'_>,
    content: &ContentIndex,
    plan: &Plan,
    total: &mut Collected,
) {
    let files = candidates.index();
    let Some(admitted) = content.admitted(files.root(), files, plan) else {
        return;
    };
    let before = candidates.len();
    let ruled_out = candidates.rule_out(&admitted);
    tracing::debug!(
        "content index: {} of {before} candidates ruled out under {}",
        ruled_out.len(),
        files.root().display()
    );
    for size in ruled_out {
        job.control.file_examined();
        let stats = &mut total.stats;
        if job.query.max_filesize.is_some_and(|max| size > max) {
            stats.skipped_too_large += 1;
        } else {
            stats.files_searched += 1;
            stats.bytes_searched += size;
        }
    }
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
    indexes: Option<Indexes<'_>>,
) -> Result<GrepOutcome, SearchError> {
    let index = indexes.map(|i| i.files);
    let content = indexes.and_then(|i| i.content);
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
    // What a match requires of a file's trigrams (only when a content index may use it).
    let plan = content.map(|_| {
        let insensitive = query.case != CaseMode::Sensitive;
        grams::plan(&query.pattern, insensitive, query.fixed_strings)
    });
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
                if let Some(mut candidates) = candidates {
                    if let (Some(content), Some(plan)) = (content, &plan) {
                        rule_out(&job, &mut candidates, content, plan, &mut total);
                    }
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
            compiled: false,
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
                    "its compiled form would exceed {} MiB (large repetition counts such as \\w{{1000}}, or many alternatives, multiply its size); use smaller counts or fewer alternatives",
                    MAX_REGEX_SIZE >> 20
                ),
                compiled: true,
            };
        }
        let (message, maybe_literal) = regex_message(&query.pattern, &message);
        // The engine refuses a `\n` when lines are matched one at a time.
        let needs_multiline = message.contains("not allowed") && query.pattern.contains("\\n");
        SearchError::InvalidRegex {
            pattern: query.pattern.clone(),
            message,
            maybe_literal,
            needs_multiline,
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
    /// Bytes of matching lines this thread may still keep with their keys: twice the page's
    /// allowance (the page's own lines, and as many that a later, smaller key evicts).
    text_room: usize,
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
            searcher: searcher(job.query, false),
            collected: Collected::new(job.query.mode, job.cap),
            text_room: job.query.max_bytes.unwrap_or(usize::MAX).saturating_mul(2),
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
        let mut sink = FileSink::keys(self.job.settings, control, path, keep, !explicit)
            .keep_text(self.text_room);
        let reader = CancellableReader::new(file, control);
        let result = self
            .searcher
            .search_reader(self.job.settings.matcher, reader, &mut sink);
        if sink.cancelled || control.is_cancelled() {
            return;
        }
        self.text_room = sink.text_room;
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
                let mut texts = sink.texts.into_iter();
                for line in sink.starts {
                    let item = MatchKey {
                        path: path.clone(),
                        line,
                        explicit,
                        shown: texts.next(),
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
                let pass = PagePass {
                    query,
                    settings: job.settings,
                    control: job.control,
                };
                let (built, consumed) = pass.build_page(page.items, &mut stats);
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

/// Whether a search error is the searcher refusing to hold more than
/// [`MAX_BUFFER`](super::sink::MAX_BUFFER).
fn is_over_buffer(err: &std::io::Error) -> bool {
    err.to_string().contains("allocation limit")
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
            shown: None,
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
