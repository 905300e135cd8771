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
/// Items often arrive in ascending order (a file's lines, the files of one directory):
/// while they do, they are kept in a sorted `Vec`, where keeping the largest item so far is
/// one comparison. The first item out of order turns them into a pool: items are appended
/// while they sort below the pool's bound, and when the pool holds `2 × cap` items the
/// `cap` smallest are selected (linear) and become the pool, the greatest of them the new
/// bound. Each item costs a comparison or two and a share of the selections, where a heap
/// costs a logarithmic climb with a cache miss per level; memory stays within twice the
/// page.
#[derive(Debug)]
pub(crate) struct Best<T: Ord> {
    cap: usize,
    /// Every item kept so far, ascending, while `ascending`.
    sorted: Vec<T>,
    /// Otherwise the items kept: after a selection, `pool[cap - 1]` is the bound (every
    /// item appended since sorts below it).
    pool: Vec<T>,
    /// Whether `pool[cap - 1]` is a bound (a selection has run).
    bounded: bool,
    ascending: bool,
    seen: usize,
    peak: usize,
}

impl<T: Ord> Best<T> {
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            sorted: Vec::new(),
            pool: Vec::new(),
            bounded: false,
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
        if self.cap == 0 {
            return;
        }
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
            self.pool = std::mem::take(&mut self.sorted);
            // A full sorted list is a selection already made: its last item is the bound.
            self.bounded = self.pool.len() == self.cap;
        }
        if self.bounded && item >= self.pool[self.cap - 1] {
            return;
        }
        self.pool.push(item);
        self.peak = self.peak.max(self.pool.len());
        // The first selection as soon as the pool is full, so there is a bound to compare
        // with; then one per `cap` items appended.
        let full = if self.bounded { 2 * self.cap } else { self.cap };
        if self.pool.len() >= full {
            self.select();
        }
    }

    /// Keeps the `cap` smallest of the pool, the greatest of them last (the bound).
    fn select(&mut self) {
        let cap = self.cap;
        if self.pool.len() < cap {
            return;
        }
        // Puts the cap-th smallest at `cap - 1`, everything before it no greater.
        self.pool.select_nth_unstable(cap - 1);
        self.pool.truncate(cap);
        self.bounded = true;
    }

    /// Whether an item comparing as `probe` describes would be kept: the collector has
    /// room, or `probe` says it sorts before the current worst entry (or bound).
    pub(crate) fn admits(&self, probe: impl FnOnce(&T) -> Ordering) -> bool {
        if self.cap == 0 {
            return false;
        }
        let worst = match self.ascending {
            true if self.sorted.len() < self.cap => return true,
            true => self.sorted.last(),
            false if !self.bounded => return true,
            false => self.pool.get(self.cap - 1),
        };
        worst.is_some_and(|worst| probe(worst) == Ordering::Less)
    }

    /// Folds another collector (with the same cap) into this one.
    pub(crate) fn merge(&mut self, other: Best<T>) {
        let seen = self.seen + other.seen;
        let peak = other.peak;
        match (self.ascending, other.ascending) {
            // Each thread's collector may stay ascending (its files in path order): two
            // sorted lists merge in one pass, and stay sorted.
            (true, true) => {
                let mine = std::mem::take(&mut self.sorted);
                self.sorted = merge_sorted(mine, other.sorted, self.cap);
                self.peak = self.peak.max(self.sorted.len());
            }
            (_, true) => other.sorted.into_iter().for_each(|item| self.push(item)),
            (_, false) => other.pool.into_iter().for_each(|item| self.push(item)),
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

    pub(crate) fn into_sorted(mut self) -> Vec<T> {
        match self.ascending {
            true => self.sorted,
            false => {
                self.select();
                // Keys are unique (see the module comment): an unstable sort is exact.
                self.pool.sort_unstable();
                self.pool
            }
        }
    }
}

/// The `cap` smallest items of two ascending lists, ascending (`a`'s first among equals).
fn merge_sorted<T: Ord>(a: Vec<T>, b: Vec<T>, cap: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(cap.min(a.len() + b.len()));
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while out.len() < cap {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x <= y,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = match take_a {
            true => a.next(),
            false => b.next(),
        };
        out.extend(next);
    }
    out
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
    fn any_order_keeps_the_smallest_and_admits_what_it_would_keep() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % 5000
        };
        for cap in [1, 2, 7, 64, 999, 3000] {
            let items: Vec<u64> = (0..2500).map(|_| next()).collect();
            let mut all = items.clone();
            all.sort();
            let mut best = Best::new(cap);
            for &x in &items {
                // Whatever `admits` refuses would not have been kept.
                if !best.admits(|worst| x.cmp(worst)) {
                    assert!(cap <= all.len() && x >= all[cap - 1], "refused {x}");
                }
                best.push(x);
            }
            assert!(best.peak() <= 2 * cap, "peak {} cap {cap}", best.peak());
            all.truncate(cap);
            assert_eq!(best.into_sorted(), all, "cap {cap}");
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
        assert!(best.peak() <= 6, "within twice the cap");
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
        assert!(best.peak() <= 20, "within twice the cap: {}", best.peak());
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
