//! What a search returns: sorted, paged entries plus totals and [`Stats`].
//!
//! Everything here is plain data. Paths are absolute (the targets joined with what the walk
//! found); text is lossy UTF-8 with the line terminator stripped, already cut to the query's
//! `max_line_chars`. Rendering (grouping by file, budgets) is the caller's job.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::walk::Stats;

/// One matching line in content mode, with its context. Ordered by path, then line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct GrepMatch {
    /// Shared by the entries of one file: a page of many lines of one file holds its path
    /// once.
    pub path: Arc<Path>,
    /// 1-based number of the line where the match starts.
    pub line: u64,
    /// 1-based column, in characters of the full (uncut) line, where the first match starts.
    pub column: u64,
    /// Last line of the match; equals `line` except for a multiline match spanning lines.
    pub end_line: u64,
    /// The line's text (cut around the match when too long).
    pub text: String,
    /// Up to `before` lines preceding `line`, in order. They may include other matching lines.
    pub before: Vec<ContextLine>,
    /// The rest of a multiline match (`line+1 ..= end_line`) followed by up to `after` lines.
    pub after: Vec<ContextLine>,
    /// Lines of this entry (context, or the rest of a multiline match) left out because the
    /// entry alone exceeds the output budget: the entry is shown cut rather than not at all.
    pub omitted: u64,
}

impl GrepMatch {
    /// Whether `other` is an entry of the same file (most often the same shared path).
    pub fn same_file(&self, other: &GrepMatch) -> bool {
        Arc::ptr_eq(&self.path, &other.path) || self.path == other.path
    }
}

/// A line shown around a match.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ContextLine {
    pub line: u64,
    pub text: String,
}

/// Count mode: the number of matching lines in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileCount {
    pub path: PathBuf,
    pub count: u64,
}

/// By path ([`path_cmp`](super::retain::path_cmp): `Path`'s order, found faster), then count.
impl Ord for FileCount {
    fn cmp(&self, other: &FileCount) -> std::cmp::Ordering {
        super::retain::path_cmp(&self.path, &other.path).then(self.count.cmp(&other.count))
    }
}

impl PartialOrd for FileCount {
    fn partial_cmp(&self, other: &FileCount) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The entries of the page, in the shape of the query's [`OutputMode`](super::OutputMode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrepEntries {
    Matches(Vec<GrepMatch>),
    Files(Vec<PathBuf>),
    Counts(Vec<FileCount>),
}

impl GrepEntries {
    /// Number of entries on this page.
    pub fn len(&self) -> usize {
        match self {
            GrepEntries::Matches(v) => v.len(),
            GrepEntries::Files(v) => v.len(),
            GrepEntries::Counts(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The result of [`grep`](super::grep()).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepOutcome {
    /// The page: entries `offset .. offset+limit` of the sorted full list.
    pub entries: GrepEntries,
    /// Number of entries of the query's mode in the full list (matching lines in content
    /// mode, files in the other two).
    pub total: usize,
    /// Matching lines seen. In files-with-matches mode each file stops at its first match,
    /// so there this equals the number of files.
    pub total_matches: u64,
    /// More entries remain after this page.
    pub truncated: bool,
    /// The `offset` that fetches the next page, when `truncated`.
    pub next_offset: Option<usize>,
    pub stats: Stats,
    /// The search was cancelled; entries and totals cover only what was seen before.
    pub cancelled: bool,
}

/// A file found by [`glob`](super::glob()).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundFile {
    pub path: PathBuf,
    /// Modification time, when it could be read.
    pub modified: Option<SystemTime>,
}

/// By path ([`path_cmp`](super::retain::path_cmp): `Path`'s order, found faster), then time.
impl Ord for FoundFile {
    fn cmp(&self, other: &FoundFile) -> std::cmp::Ordering {
        super::retain::path_cmp(&self.path, &other.path).then(self.modified.cmp(&other.modified))
    }
}

impl PartialOrd for FoundFile {
    fn partial_cmp(&self, other: &FoundFile) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The result of [`glob`](super::glob()).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobOutcome {
    pub files: Vec<FoundFile>,
    /// Number of matching files in the full list.
    pub total: usize,
    pub truncated: bool,
    pub next_offset: Option<usize>,
    pub stats: Stats,
    pub cancelled: bool,
}
