//! Searching from the file index instead of walking: the candidate files of a directory
//! target are taken from a fresh [`RootIndex`] snapshot and filtered exactly as the walker
//! would filter them, so results are identical to the walking path.
//!
//! Why it is exact. A default walk (`hidden: false`, `no_ignore: false`) decides for each
//! entry, in this order (the `ignore` crate's precedence): a `--glob` override match
//! (ignore → skip, whitelist → take, bypassing the ignore files and the type filter), then
//! the ignore files, then the type filter; hidden entries are always skipped (rootgrep's
//! rule). The index holds what the ignore files let through (files and visited directories)
//! plus the ignored entries directly inside visited directories. So per directory target:
//! - a visited directory is entered when no ancestor below the target is excluded by a glob;
//! - an indexed file is taken unless a glob excludes it (or a type does, when no glob
//!   whitelists it);
//! - an ignored file is taken only when a glob whitelists it (as `rg -g '*.log'` does);
//! - an ignored *directory* whitelisted by a glob would be walked by ripgrep, and the index
//!   does not know its contents: then the index declines ([`None`]) and the caller walks.
//!
//! The glob tool has no overrides: its candidates are the indexed files below the target
//! that pass the type filter, matched in memory against the stored relative paths.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use ignore::overrides::Override;
use ignore::types::Types;

use crate::index::RootIndex;

use crate::walk::Control;

/// Whether a query with these flags may be answered from the index (which holds only
/// what a default walk sees).
pub(crate) fn index_compatible(hidden: bool, no_ignore: bool) -> bool {
    !hidden && !no_ignore
}

/// The files a walk of `dir` (a directory inside `index`'s root) would hand to a search.
#[derive(Debug)]
pub(crate) struct Candidates<'a> {
    index: &'a RootIndex,
    /// Indexed files, by id.
    ids: Vec<u32>,
    /// Ignored files brought back by a whitelisting glob (absolute paths).
    extra: Vec<PathBuf>,
    /// Ignore files not applied that a walk of the target would report.
    pub skipped_ignore: Vec<crate::ignores::SkippedIgnoreFile>,
}

impl<'a> Candidates<'a> {
    /// Selects the candidates, or `None` when the index cannot answer exactly: `dir` is
    /// not a directory the default walk enters, or a glob whitelists an ignored directory.
    pub fn select(
        index: &'a RootIndex,
        dir: &Path,
        overrides: Option<&Override>,
        types: Option<&Types>,
    ) -> Option<Candidates<'a>> {
        let rel_dir = dir.strip_prefix(index.root()).ok()?;
        let start = index.find_dir(rel_dir)?;
        let dirs = index.dirs_below(start);
        // Paths are given to the matchers as the walk gives them: `dir` joined with the
        // path below it (the override is rooted at `dir`).
        let mut scratch = PathBuf::new();
        let absolute = |scratch: &mut PathBuf, rel: &Path| {
            scratch.clear();
            scratch.push(index.root());
            scratch.push(rel);
        };
        // Which visited directories the walk enters: the target always; below it, those
        // whose parent is entered and that no glob excludes.
        let mut entered = vec![false; dirs.len()];
        entered[0] = true;
        for d in dirs.clone().skip(1) {
            let parent = index.dir_parent(d);
            if parent < start || !entered[parent - start] {
                continue;
            }
            entered[d - start] = match overrides {
                Some(overrides) => {
                    absolute(&mut scratch, index.dir_rel(d));
                    !overrides.matched(&scratch, true).is_ignore()
                }
                None => true,
            };
        }
        let mut ids = Vec::new();
        for d in dirs.clone() {
            if !entered[d - start] {
                continue;
            }
            for id in index.dir_file_ids(d) {
                let file = index.file(id);
                let verdict = match overrides {
                    Some(overrides) => {
                        absolute(&mut scratch, file.rel);
                        overrides.matched(&scratch, false)
                    }
                    None => ignore::Match::None,
                };
                let take = match verdict {
                    ignore::Match::Ignore(_) => false,
                    ignore::Match::Whitelist(_) => true,
                    ignore::Match::None => {
                        types.is_none_or(|types| !types.matched(file.rel, false).is_ignore())
                    }
                };
                if take {
                    ids.push(id as u32);
                }
            }
        }
        let mut extra = Vec::new();
        // What the walk would meet but cannot read (special files, directories it could
        // not list, paths too long): searching them fails exactly as it does in a walk,
        // so they are counted as unreadable the same way.
        for (rel, dir, special) in index.skipped_in(dirs.clone()) {
            if !entered[dir - start] {
                continue;
            }
            absolute(&mut scratch, rel);
            let take = !special
                || match overrides.map(|o| o.matched(&scratch, false)) {
                    Some(ignore::Match::Ignore(_)) => false,
                    Some(ignore::Match::Whitelist(_)) => true,
                    _ => types.is_none_or(|types| !types.matched(rel, false).is_ignore()),
                };
            if take {
                extra.push(scratch.clone());
            }
        }
        if let Some(overrides) = overrides {
            for (rel, parent, is_dir) in index.ignored_in(dirs.clone()) {
                if !entered[parent - start] {
                    continue;
                }
                absolute(&mut scratch, rel);
                if overrides.matched(&scratch, is_dir).is_whitelist() {
                    if is_dir {
                        return None;
                    }
                    extra.push(scratch.clone());
                }
            }
        }
        Some(Candidates {
            index,
            ids,
            extra,
            skipped_ignore: index.skipped_ignore_for(dir),
        })
    }

    pub fn len(&self) -> usize {
        self.ids.len() + self.extra.len()
    }

    /// The snapshot the candidates come from.
    pub(crate) fn index(&self) -> &'a RootIndex {
        self.index
    }

    /// Drops the indexed candidates whose entry in `admitted` (by file id) is false, and
    /// returns their sizes; the others keep their order.
    pub(crate) fn rule_out(&mut self, admitted: &[bool]) -> Vec<u64> {
        let mut sizes = Vec::new();
        let index = self.index;
        self.ids.retain(|&id| {
            let keep = admitted.get(id as usize).copied().unwrap_or(true);
            if !keep {
                sizes.push(index.file(id as usize).size);
            }
            keep
        });
        sizes
    }

    /// The absolute path of candidate `i`.
    pub fn path(&self, i: usize) -> PathBuf {
        match self.ids.get(i) {
            Some(&id) => self.index.path_of(id as usize),
            None => self.extra[i - self.ids.len()].clone(),
        }
    }
}

/// Runs `visit` over `0..count` on one thread per core (each with its own state from
/// `make`), handing out items from a shared cursor so a few slow files cannot leave the
/// other threads idle. Each item is one turn of `control`'s share of the search pool (a
/// thread parks between items while the request holds fewer slots than threads). Stops
/// early once `control` is cancelled. Returns every thread's state.
pub(crate) fn for_each_parallel<T: Send>(
    count: usize,
    threads: usize,
    control: &Control,
    make: &(dyn Fn() -> T + Sync),
    visit: &(dyn Fn(&mut T, usize) + Sync),
) -> Vec<T> {
    let _running = crate::pool::pacing::SearchRunning::start();
    let threads = threads.min(count).max(1);
    let cursor = AtomicUsize::new(0);
    let work = || {
        let mut state = make();
        loop {
            if control.is_cancelled() {
                break;
            }
            let _turn = control.turn();
            if control.is_cancelled() {
                break;
            }
            let i = cursor.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            visit(&mut state, i);
        }
        state
    };
    if threads == 1 {
        return vec![work()];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("search thread panicked"))
            .collect()
    })
}

/// Splits `range` into one chunk per thread and runs `visit` on each chunk in parallel
/// (for cheap per-item work such as glob matching, where a shared cursor would cost more
/// than the work).
pub(crate) fn chunks_parallel<T: Send>(
    range: std::ops::Range<usize>,
    threads: usize,
    make: &(dyn Fn() -> T + Sync),
    visit: &(dyn Fn(&mut T, std::ops::Range<usize>) + Sync),
) -> Vec<T> {
    let _running = crate::pool::pacing::SearchRunning::start();
    let len = range.len();
    // Below this, a thread costs more than it saves.
    const MIN_CHUNK: usize = 8 * 1024;
    let threads = threads.min(len / MIN_CHUNK).max(1);
    let step = len.div_ceil(threads).max(1);
    let chunk = |k: usize| {
        let from = range.start + k * step;
        from.min(range.end)..(from + step).min(range.end)
    };
    if threads == 1 {
        let mut state = make();
        visit(&mut state, range);
        return vec![state];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                scope.spawn(move || {
                    let mut state = make();
                    visit(&mut state, chunk(k));
                    state
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("glob thread panicked"))
            .collect()
    })
}
