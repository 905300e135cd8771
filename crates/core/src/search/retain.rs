//! Bounded retention: keep only the entries a page can need, while counting all of them.
//!
//! A common word over a large tree can produce millions of matches (tens of megabytes of
//! text), but an answer shows one page (content searches retain sort keys only, and build
//! the page's entries afterwards): entries `offset .. offset+limit` of the sorted
//! list. So each collector keeps only the `cap = offset + limit` smallest entries by sort
//! key in a max-heap, evicting the greatest when a smaller one arrives. Collectors are
//! per thread (no lock on the hot path) and are merged at the end; merging two "best cap"
//! sets and keeping the best `cap` of the union gives the best `cap` overall, so the page
//! is exactly the one a full sort would give, whatever the thread scheduling.
//!
//! The sort key is [`Rank`] (newest-first time, when sorting by modification time) followed
//! by the entry's own order (path, then line), which makes every key unique and the order
//! total: deterministic pages, no duplicates or gaps between consecutive pages.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Upper bound on the entries retained past `offset` when the query has no `limit`.
pub const MAX_RETAINED: usize = 20_000;

/// How many entries to keep for a page: `offset + limit`, or `offset + MAX_RETAINED`.
pub(crate) fn retention_cap(offset: usize, limit: Option<usize>) -> usize {
    offset.saturating_add(limit.unwrap_or(MAX_RETAINED).min(MAX_RETAINED))
}

/// `Path`'s order (component by component), computed on the bytes. The paths sorted here
/// are canonical absolute paths and paths joined below them (no `.` components, no repeated
/// or trailing separators), for which byte order with the separator ranked lowest is the
/// same order; parsing components on every comparison dominated sorting large pages.
pub(crate) fn path_cmp(a: &Path, b: &Path) -> Ordering {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
        let key = |c: u8| if c == b'/' { 0 } else { c };
        match a.iter().zip(b).position(|(x, y)| x != y) {
            Some(i) => key(a[i]).cmp(&key(b[i])),
            None => a.len().cmp(&b.len()),
        }
    }
    #[cfg(not(unix))]
    a.cmp(b)
}

/// A path ordered by [`path_cmp`] (the same order as `PathBuf`'s, found faster).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ByPath(pub PathBuf);

impl Ord for ByPath {
    fn cmp(&self, other: &ByPath) -> Ordering {
        path_cmp(&self.0, &other.0)
    }
}

impl PartialOrd for ByPath {
    fn partial_cmp(&self, other: &ByPath) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The part of the sort key that comes before an entry's own order: `None` when sorting
/// by path, the modification time reversed (newest first) when sorting by time.
pub(crate) type Rank = Option<Reverse<SystemTime>>;

/// An entry tagged with its [`Rank`]; ordered by rank, then by the entry itself.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Ranked<T> {
    pub rank: Rank,
    pub item: T,
}

/// The `cap` smallest items pushed so far, plus the count of everything pushed.
///
/// Items often arrive in ascending order (an index's files in path order, a file's lines):
/// while they do, they are kept in a sorted `Vec`, where keeping the largest item so far is
/// one comparison (a max-heap makes each new maximum climb to its root: the worst case).
/// The first item out of order turns them into the heap.
#[derive(Debug)]
pub(crate) struct Best<T: Ord> {
    cap: usize,
    /// Every item kept so far, ascending, while `ascending`.
    sorted: Vec<T>,
    heap: BinaryHeap<T>,
    ascending: bool,
    seen: usize,
    peak: usize,
}

impl<T: Ord> Best<T> {
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            sorted: Vec::new(),
            heap: BinaryHeap::new(),
            ascending: true,
            seen: 0,
            peak: 0,
        }
    }

    /// Counts an entry that the caller already knows cannot be kept (see [`Best::admits`]),
    /// so that totals stay exact without building the entry.
    pub(crate) fn count_only(&mut self, n: usize) {
        self.seen += n;
    }

    pub fn push(&mut self, item: T) {
        self.seen += 1;
        if self.ascending {
            if self.sorted.last().is_none_or(|last| *last <= item) {
                // Not below any kept item: kept only while there is room.
                if self.sorted.len() < self.cap {
                    self.sorted.push(item);
                    self.peak = self.peak.max(self.sorted.len());
                }
                return;
            }
            self.ascending = false;
            self.heap = BinaryHeap::from(std::mem::take(&mut self.sorted));
        }
        if self.heap.len() < self.cap {
            self.heap.push(item);
            self.peak = self.peak.max(self.heap.len());
        } else if self.heap.peek().is_some_and(|worst| item < *worst) {
            self.heap.pop();
            self.heap.push(item);
        }
    }

    /// Items kept now.
    fn len(&self) -> usize {
        match self.ascending {
            true => self.sorted.len(),
            false => self.heap.len(),
        }
    }

    /// The greatest item kept.
    fn worst(&self) -> Option<&T> {
        match self.ascending {
            true => self.sorted.last(),
            false => self.heap.peek(),
        }
    }

    /// Whether an item comparing as `probe` describes would be kept: the collector has
    /// room, or `probe` says it sorts before the current worst entry.
    pub(crate) fn admits(&self, probe: impl FnOnce(&T) -> Ordering) -> bool {
        if self.len() < self.cap {
            return true;
        }
        self.worst()
            .is_some_and(|worst| probe(worst) == Ordering::Less)
    }

    /// Folds another collector (with the same cap) into this one.
    pub(crate) fn merge(&mut self, other: Best<T>) {
        let seen = self.seen + other.seen;
        let peak = other.peak;
        match other.ascending {
            true => other.sorted.into_iter().for_each(|item| self.push(item)),
            false => other.heap.into_iter().for_each(|item| self.push(item)),
        }
        self.seen = seen;
        self.peak = self.peak.max(peak);
    }

    /// Everything pushed or counted, kept or not.
    pub fn seen(&self) -> usize {
        self.seen
    }

    /// Most entries held at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    pub(crate) fn into_sorted(self) -> Vec<T> {
        match self.ascending {
            true => self.sorted,
            false => self.heap.into_sorted_vec(),
        }
    }
}

/// The page cut from a sorted, retained list.
#[derive(Debug, PartialEq, Eq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub truncated: bool,
    pub next_offset: Option<usize>,
}

/// Cuts `offset .. offset+limit` from `sorted` (the retained prefix of a list of `total`
/// entries) and says whether more remain.
pub fn page<T>(sorted: Vec<T>, total: usize, offset: usize, limit: Option<usize>) -> Page<T> {
    let take = limit.unwrap_or(MAX_RETAINED).min(MAX_RETAINED);
    let items: Vec<T> = sorted.into_iter().skip(offset).take(take).collect();
    let end = offset.saturating_add(items.len());
    let truncated = end < total;
    Page {
        items,
        truncated,
        next_offset: truncated.then_some(end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascending_and_shuffled_pushes_keep_the_same_items() {
        // Ascending runs, a run that turns back, equal items, merges in both orders.
        let runs: [&[u32]; 5] = [
            &[1, 2, 3, 4, 5, 6, 7, 8],
            &[5, 6, 7, 1, 2, 9, 3],
            &[2, 2, 2, 3, 3, 1],
            &[9, 8, 7, 6, 5, 4],
            &[],
        ];
        for cap in [0, 1, 3, 5, 100] {
            for a in runs {
                for b in runs {
                    let mut left = Best::new(cap);
                    a.iter().for_each(|&x| left.push(x));
                    let mut right = Best::new(cap);
                    b.iter().for_each(|&x| right.push(x));
                    left.merge(right);
                    let mut all: Vec<u32> = a.iter().chain(b).copied().collect();
                    all.sort();
                    all.truncate(cap);
                    assert_eq!(left.seen(), a.len() + b.len());
                    assert_eq!(left.into_sorted(), all, "cap {cap}: {a:?} + {b:?}");
                }
            }
        }
    }

    #[test]
    fn path_cmp_is_path_order() {
        let paths = [
            "/", "/a", "/a/b", "/a.b", "/a-b/c", "/a/b/c", "/ab", "/a/bc", "/a b", "/Z", "/é",
            "/a/b.c", "/a/b/.c", "/a\\b", "/r/a/b.c", "/r/a.b", "/r/a/b", "/r/ab/c",
        ];
        for x in paths {
            for y in paths {
                let (x, y) = (Path::new(x), Path::new(y));
                assert_eq!(path_cmp(x, y), x.cmp(y), "{x:?} vs {y:?}");
            }
        }
    }

    #[test]
    fn keeps_the_smallest_cap_items_and_counts_all() {
        let mut best = Best::new(3);
        for n in [9, 2, 7, 4, 1, 8, 3] {
            best.push(n);
        }
        assert_eq!(best.seen(), 7);
        assert_eq!(best.peak(), 3);
        assert_eq!(best.into_sorted(), vec![1, 2, 3]);
    }

    #[test]
    fn zero_cap_keeps_nothing() {
        let mut best = Best::new(0);
        best.push(1);
        assert!(!best.admits(|_| Ordering::Less));
        assert_eq!(best.seen(), 1);
        assert!(best.into_sorted().is_empty());
    }

    #[test]
    fn merge_of_partial_bests_equals_best_of_union() {
        let all: Vec<u32> = (0..1000).map(|n| (n * 7919) % 1000).collect();
        let mut parts: Vec<Best<u32>> = (0..4).map(|_| Best::new(10)).collect();
        for (i, n) in all.iter().enumerate() {
            parts[i % 4].push(*n);
        }
        let mut merged = Best::new(10);
        for part in parts {
            merged.merge(part);
        }
        assert_eq!(merged.seen(), 1000);
        assert_eq!(merged.into_sorted(), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn five_thousand_items_with_limit_ten_hold_ten() {
        let mut best = Best::new(retention_cap(0, Some(10)));
        for n in (0..5000).rev() {
            best.push(n);
        }
        assert_eq!(best.peak(), 10);
        assert_eq!(best.seen(), 5000);
    }

    #[test]
    fn admits_compares_against_the_worst_kept() {
        let mut best = Best::new(2);
        best.push(5);
        assert!(best.admits(|_| Ordering::Greater), "room left");
        best.push(3);
        assert!(best.admits(|worst| 4.cmp(worst)));
        assert!(!best.admits(|worst| 6.cmp(worst)));
    }

    #[test]
    fn pages_concatenate_to_the_full_list() {
        let full: Vec<u32> = (0..25).collect();
        let mut got = Vec::new();
        let mut offset = 0;
        loop {
            let retained = full[..retention_cap(offset, Some(10)).min(25)].to_vec();
            let page = page(retained, full.len(), offset, Some(10));
            got.extend(page.items);
            match page.next_offset {
                Some(next) => offset = next,
                None => break,
            }
        }
        assert_eq!(got, full);
    }

    #[test]
    fn time_rank_sorts_newest_first() {
        let old = SystemTime::UNIX_EPOCH;
        let new = old + std::time::Duration::from_secs(10);
        let a = Ranked {
            rank: Some(Reverse(old)),
            item: "a",
        };
        let b = Ranked {
            rank: Some(Reverse(new)),
            item: "b",
        };
        assert!(b < a);
    }
}
