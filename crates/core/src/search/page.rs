//! The page pass of content search: the keys of one page (where matches start, kept by
//! the search pass) are searched again file by file with context and built into entries
//! within the byte allowance, a batch of files in parallel at a time.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use grep_searcher::{BinaryDetection, Searcher};

use super::indexed::for_each_parallel;
use super::outcome::GrepMatch;
use super::query::GrepQuery;
use super::retain::{Ranked, path_cmp};
use super::sink::{Build, FileSink, SinkSettings, entry_cost, line_cost, searcher};
use super::targets::{CancellableReader, open_regular};
use crate::pool::pacing::threads_for;
use crate::walk::Control;
use crate::walk::Stats;

/// A content entry of the search pass: where a match starts. The page pass turns the keys
/// of one page into entries; sorted like [`GrepMatch`] (path, then line).
#[derive(Clone, Debug)]
pub(super) struct MatchKey {
    pub(super) path: Arc<Path>,
    pub(super) line: u64,
    /// The file was named explicitly (searched with NULs replaced, never dropped).
    pub(super) explicit: bool,
    /// The line's text and the match's column, when the search pass kept them (see
    /// [`SinkSettings::keeps_text`]); not part of the order.
    pub(super) shown: Option<(String, u64)>,
}

impl MatchKey {
    /// The keys of one file share one `Arc`: comparing them skips the component-wise path
    /// comparison, which dominates sorting a file with many matches.
    pub(super) fn cmp_path(&self, other: &MatchKey) -> Ordering {
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

/// What the page pass needs of the request.
pub(super) struct PagePass<'a> {
    pub(super) query: &'a GrepQuery,
    pub(super) settings: SinkSettings<'a>,
    pub(super) control: &'a Control,
}

impl PagePass<'_> {
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
    pub(super) fn build_page(
        &self,
        keys: Vec<Ranked<MatchKey>>,
        stats: &mut Stats,
    ) -> (Vec<GrepMatch>, usize) {
        if !keys.is_empty() && keys.iter().all(|key| key.item.shown.is_some()) {
            return self.page_of_lines(keys, stats);
        }
        let listed = keys.len();
        let files = group_by_file(&keys);
        let mut room = self.query.max_bytes.unwrap_or(usize::MAX);
        let mut built: Vec<GrepMatch> = Vec::new();
        let mut consumed = 0;
        let mut searcher = searcher(self.query, true);
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

    /// The page pass when every key holds its line (no context): the entries are the keys'
    /// lines, charged to the byte allowance as [`FileSink`] charges them; no file is read
    /// again. Returns the entries and how many keys they consumed.
    fn page_of_lines(
        &self,
        keys: Vec<Ranked<MatchKey>>,
        stats: &mut Stats,
    ) -> (Vec<GrepMatch>, usize) {
        let mut room = self.query.max_bytes.unwrap_or(usize::MAX);
        let mut built: Vec<GrepMatch> = Vec::with_capacity(keys.len());
        for key in keys {
            if self.control.is_cancelled() {
                break;
            }
            let MatchKey {
                path, line, shown, ..
            } = key.item;
            let Some((text, column)) = shown else { break };
            let entry = GrepMatch {
                path,
                line,
                column,
                end_line: line,
                text,
                before: Vec::new(),
                after: Vec::new(),
                omitted: 0,
            };
            let first_in_file = built.last().is_none_or(|last| !last.same_file(&entry));
            let cost = entry_cost(&entry.path, first_in_file) + line_cost(&entry.text);
            match cost <= room {
                true => room -= cost,
                // The page's first entry is built whatever it costs, so paging progresses.
                false if built.is_empty() => room = 0,
                false => break,
            }
            built.push(entry);
        }
        stats.peak_retained = stats.peak_retained.max(built.len());
        let consumed = built.len().max(1);
        (built, consumed)
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
            let mut searcher = searcher(self.query, true);
            return (0..files.len()).map(|i| build(&mut searcher, i)).collect();
        }
        let make = || (searcher(self.query, true), Vec::new());
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
