//! What this session has already shown: for each file, the line ranges `read_file` (with
//! or without `symbol`), `search` and `grep` + `scope` returned, and the file's size and
//! modification time when they did. A later answer that would show more than a few of
//! those lines again, from the same unchanged file, says "lines A-B: unchanged since
//! shown" instead, unless the call passes `repeat: true`.
//!
//! A file is forgotten when it changes: the watcher's change events and the server's own
//! writes forget it at once, and a size or modification time that differs from the one
//! recorded forgets it when it is next looked at (without the watcher, or before its event
//! came). The memory is bounded: at most [`MAX_FILES`] files (the least recently shown
//! dropped first), at most [`MAX_RANGES`] ranges each (the smallest dropped first). Forgetting
//! only ever makes an answer show lines again, never hide lines not shown.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Most files remembered.
pub const MAX_FILES: usize = 512;
/// Most disjoint line ranges remembered per file.
pub const MAX_RANGES: usize = 32;
/// A run of lines shown before is said to be unchanged only when it is longer than this:
/// repeating a few lines costs less than the note.
pub const FEW_LINES: u64 = 3;

/// A file's size and modification time: what says it is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    /// The file's stamp now (`None` when it cannot be read: nothing is then remembered).
    /// Taken before the file is read, so a change during the read counts as a change.
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

#[derive(Debug)]
struct File {
    stamp: Stamp,
    /// Sorted, disjoint, not adjacent: `(first, last)` line numbers.
    ranges: Vec<(u64, u64)>,
}

#[derive(Debug, Default)]
struct Files {
    files: HashMap<PathBuf, File>,
    /// Least recently shown first.
    order: VecDeque<PathBuf>,
}

/// The session's memory of the lines it showed (see the module docs).
#[derive(Debug, Default)]
pub struct Shown {
    files: Mutex<Files>,
}

impl Shown {
    /// The ranges of `path` shown before, when the file is still as it was then (its
    /// `stamp`); a file that changed is forgotten.
    pub fn seen(&self, path: &Path, stamp: Option<Stamp>) -> Vec<(u64, u64)> {
        let mut files = lock(&self.files);
        match (files.files.get(path), stamp) {
            (Some(file), Some(stamp)) if file.stamp == stamp => file.ranges.clone(),
            (Some(_), _) => {
                files.remove(path);
                Vec::new()
            }
            (None, _) => Vec::new(),
        }
    }

    /// Remembers that `lines` (ranges, in any order) of `path` were shown, the file being
    /// as `stamp` says (nothing is remembered without one).
    pub fn record(&self, path: &Path, stamp: Option<Stamp>, lines: &[(u64, u64)]) {
        let Some(stamp) = stamp else {
            return;
        };
        if lines.is_empty() {
            return;
        }
        let mut files = lock(&self.files);
        let mut ranges = match files.files.get(path) {
            Some(file) if file.stamp == stamp => file.ranges.clone(),
            _ => Vec::new(),
        };
        ranges.extend_from_slice(lines);
        files.remove(path);
        while files.order.len() >= MAX_FILES {
            let Some(oldest) = files.order.pop_front() else {
                break;
            };
            files.files.remove(&oldest);
        }
        let ranges = merged(ranges);
        files.order.push_back(path.to_path_buf());
        files
            .files
            .insert(path.to_path_buf(), File { stamp, ranges });
    }

    /// Forgets `path` and every file below it (a directory removed or replaced).
    pub fn forget(&self, path: &Path) {
        let mut files = lock(&self.files);
        let gone: Vec<PathBuf> = files
            .files
            .keys()
            .filter(|known| known.starts_with(path))
            .cloned()
            .collect();
        for known in gone {
            files.remove(&known);
        }
    }

    /// Forgets everything (events were lost: anything may have changed).
    pub fn forget_all(&self) {
        *lock(&self.files) = Files::default();
    }
}

impl Files {
    fn remove(&mut self, path: &Path) {
        if self.files.remove(path).is_some() {
            self.order.retain(|known| known != path);
        }
    }
}

/// The memory, also after a panic elsewhere poisoned its lock (it is consistent after each
/// call).
fn lock(files: &Mutex<Files>) -> std::sync::MutexGuard<'_, Files> {
    files.lock().unwrap_or_else(|e| e.into_inner())
}

/// `ranges` sorted and merged (overlapping or adjacent ones joined), at most
/// [`MAX_RANGES`] of them: the smallest dropped first.
fn merged(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (first, last) in ranges {
        match out.last_mut() {
            Some(prev) if first <= prev.1.saturating_add(1) => prev.1 = prev.1.max(last),
            _ => out.push((first, last)),
        }
    }
    while out.len() > MAX_RANGES {
        let smallest = (0..out.len()).min_by_key(|&i| out[i].1 - out[i].0);
        out.remove(smallest.unwrap_or(0));
    }
    out
}

/// What one call may leave out as shown before: the session's memory (none for a
/// 2026-07-28 request, which stands alone), and whether the call asked to see such lines
/// again (`repeat`: then nothing is left out, and what it shows is still remembered).
#[derive(Debug, Clone, Default)]
pub struct Recall {
    shown: Option<std::sync::Arc<Shown>>,
    repeat: bool,
}

impl Recall {
    pub fn new(shown: Option<std::sync::Arc<Shown>>, repeat: bool) -> Recall {
        Recall { shown, repeat }
    }

    /// The lines of `path` (as it is now: `stamp`) this answer need not repeat.
    pub fn seen(&self, path: &Path, stamp: Option<Stamp>) -> Vec<(u64, u64)> {
        match (&self.shown, self.repeat) {
            (Some(shown), false) => shown.seen(path, stamp),
            (Some(shown), true) => {
                // Still forget a file that changed.
                shown.seen(path, stamp);
                Vec::new()
            }
            (None, _) => Vec::new(),
        }
    }

    /// Remembers the lines of `path` this answer showed.
    pub fn record(&self, path: &Path, stamp: Option<Stamp>, lines: &[(u64, u64)]) {
        if let Some(shown) = &self.shown {
            shown.record(path, stamp, lines);
        }
    }
}

/// A piece of an answer's lines: a line to show, or a run of lines shown before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    Line(u64, &'a str),
    Unchanged(u64, u64),
}

/// `lines` (numbered, in order) with every run of more than [`FEW_LINES`] consecutive
/// lines inside `seen` replaced by one [`Piece::Unchanged`].
pub fn elide<'a>(lines: &[(u64, &'a str)], seen: &[(u64, u64)]) -> Vec<Piece<'a>> {
    let known = |n: u64| seen.iter().any(|&(first, last)| first <= n && n <= last);
    let mut pieces = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let mut end = i;
        while end < lines.len()
            && known(lines[end].0)
            && (end == i || lines[end].0 == lines[end - 1].0 + 1)
        {
            end += 1;
        }
        if (end - i) as u64 > FEW_LINES {
            pieces.push(Piece::Unchanged(lines[i].0, lines[end - 1].0));
            i = end;
        } else {
            pieces.push(Piece::Line(lines[i].0, lines[i].1));
            i += 1;
        }
    }
    pieces
}

/// The ranges of consecutive line numbers in `numbers` (in order).
pub fn ranges_of(numbers: impl IntoIterator<Item = u64>) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for n in numbers {
        match ranges.last_mut() {
            Some(last) if n == last.1 + 1 => last.1 = n,
            _ => ranges.push((n, n)),
        }
    }
    ranges
}

/// The note that stands for lines shown before: `[lines 120-180 of X: unchanged since
/// shown]` (`what`: how the answer names the file, or empty when its heading names it).
pub fn unchanged_note(first: u64, last: u64, what: &str) -> String {
    let of = if what.is_empty() {
        String::new()
    } else {
        format!(" of {what}")
    };
    format!("[lines {first}-{last}{of}: unchanged since shown; repeat: true shows them]\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(numbers: std::ops::RangeInclusive<u64>) -> Vec<(u64, &'static str)> {
        numbers
            .map(|n| (n, &*Box::leak(format!("line {n}").into_boxed_str())))
            .collect()
    }

    #[test]
    fn runs_longer_than_a_few_lines_are_elided() {
        let page = lines(1..=20);
        let pieces = elide(&page, &[(3, 5), (8, 16)]);
        assert_eq!(
            pieces[2],
            Piece::Line(3, "line 3"),
            "three lines are shown again"
        );
        assert!(pieces.contains(&Piece::Unchanged(8, 16)));
        assert_eq!(pieces.len(), 20 - 9 + 1);
        let gaps = vec![(10, "a"), (11, "b"), (30, "c"), (31, "d")];
        let pieces = elide(&gaps, &[(1, 100)]);
        assert!(
            pieces.iter().all(|p| matches!(p, Piece::Line(..))),
            "not consecutive"
        );
        assert_eq!(
            ranges_of([1, 2, 3, 7, 9, 10]),
            vec![(1, 3), (7, 7), (9, 10)]
        );
    }

    #[test]
    fn a_changed_file_is_forgotten_and_memory_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x\n").unwrap();
        let shown = Shown::default();
        let stamp = Stamp::of(&file);
        shown.record(&file, stamp, &[(1, 10), (11, 20), (40, 50)]);
        assert_eq!(shown.seen(&file, stamp), vec![(1, 20), (40, 50)]);
        std::fs::write(&file, "changed\n").unwrap();
        assert_eq!(shown.seen(&file, Stamp::of(&file)), vec![]);
        assert_eq!(shown.seen(&file, stamp), vec![], "forgotten for good");
        shown.record(&file, stamp, &[(1, 5)]);
        shown.forget(dir.path());
        assert_eq!(shown.seen(&file, stamp), vec![]);
        let many: Vec<(u64, u64)> = (0..100).map(|i| (i * 10, i * 10 + (i % 7))).collect();
        shown.record(&file, stamp, &many);
        assert_eq!(shown.seen(&file, stamp).len(), MAX_RANGES);
        for i in 0..MAX_FILES + 10 {
            shown.record(&dir.path().join(format!("{i}")), stamp, &[(1, 1)]);
        }
        let files = lock(&shown.files);
        assert_eq!(files.files.len(), MAX_FILES);
        assert_eq!(files.order.len(), MAX_FILES);
    }
}
