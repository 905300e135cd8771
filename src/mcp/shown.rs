//! What this session has already shown: for each file, the line ranges `read_file` (with
//! or without `symbol`), `search` and `grep` + `scope` returned, and the file's size and
//! modification time when they did. A later answer that would show more than a few of
//! those lines again, from the same unchanged file, says "lines A-B: unchanged since
//! shown" instead, unless the call passes `repeat: true`.
//!
//! A file is forgotten when it changes: the watcher's change events and the server's own
//! writes forget it at once, and a stamp (size, mtime, inode and change time) that differs
//! from the one recorded forgets it when it is next looked at, whatever the watcher said or
//! has not said yet. Only a file that last changed a while before the call is remembered
//! ([`SETTLED`]), so a change after its lines were read always shows as a new stamp. The memory is bounded: at most [`MAX_FILES`] files (the least recently shown
//! dropped first), at most [`MAX_RANGES`] ranges each (the smallest dropped first). Forgetting
//! only ever makes an answer show lines again, never hide lines not shown.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Most files remembered.
pub const MAX_FILES: usize = 512;
/// Most disjoint line ranges remembered per file.
pub const MAX_RANGES: usize = 32;
/// A run of lines shown before is said to be unchanged only when it is longer than this:
/// repeating a few lines costs less than the note.
pub const FEW_LINES: u64 = 3;

/// How long before a call a file must have last changed for what the call shows of it to
/// be remembered, on a file system that keeps change times to the nanosecond: more than the
/// kernel's coarse clock lags (a tick), so a change during the call (between the read of
/// its lines and its stamp, in `search` and `grep`) never looks older than the call.
pub const SETTLED: Duration = Duration::from_millis(100);
/// The same where change times are whole seconds (HFS+, FAT, some network file systems):
/// more than their granularity, so any later change, even a rewrite of the same size with
/// its mtime put back, gives the file a different change time.
pub const SETTLED_COARSE: Duration = Duration::from_secs(2);

/// What says a file is unchanged: its size, modification time, and its identity (inode
/// and change time on Unix: `platform::os::identity`), the same facts the indexes check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    identity: u64,
    /// When its status last changed ([`Recall::record`] reads it; compared like the rest,
    /// though on Unix `identity` already holds it).
    changed: Option<SystemTime>,
}

impl Stamp {
    /// The file's stamp now (`None` when it cannot be read: nothing is then remembered).
    /// Taken before the file is read, so a change during the read counts as a change.
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            identity: rootgrep_core::platform::os::identity(&meta),
            changed: rootgrep_core::platform::os::changed(&meta),
        })
    }

    /// Whether the file last changed at least [`SETTLED`] (whole-second change times:
    /// [`SETTLED_COARSE`]) before `since`: only then is what a call started at `since`
    /// showed of it remembered. A file that changed during the call or just before it is
    /// shown again next time instead.
    fn settled_before(&self, since: SystemTime) -> bool {
        let Some(changed) = self.changed else {
            return false;
        };
        let whole_seconds = changed
            .duration_since(std::time::UNIX_EPOCH)
            .is_ok_and(|d| d.subsec_nanos() == 0);
        let settle = if whole_seconds {
            SETTLED_COARSE
        } else {
            SETTLED
        };
        since
            .checked_sub(settle)
            .is_some_and(|limit| changed < limit)
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
#[derive(Debug, Clone)]
pub struct Recall {
    shown: Option<std::sync::Arc<Shown>>,
    repeat: bool,
    /// When the call started (see [`Stamp::settled_before`]).
    since: SystemTime,
}

impl Default for Recall {
    fn default() -> Recall {
        Recall::new(None, false)
    }
}

impl Recall {
    pub fn new(shown: Option<std::sync::Arc<Shown>>, repeat: bool) -> Recall {
        Recall {
            shown,
            repeat,
            since: SystemTime::now(),
        }
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

    /// Remembers the lines of `path` this answer showed, when the file had settled before
    /// the call started (else it may have changed after its lines were read).
    pub fn record(&self, path: &Path, stamp: Option<Stamp>, lines: &[(u64, u64)]) {
        let Some(stamp) = stamp.filter(|s| s.settled_before(self.since)) else {
            return;
        };
        if let Some(shown) = &self.shown {
            shown.record(path, Some(stamp), lines);
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
