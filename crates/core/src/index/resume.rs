//! A restart's first build from the stored file list (`stored.rs`) instead of a whole walk:
//! the ignore rules' inputs are checked first (any change, or one too recent to trust,
//! means a whole walk); then every stored directory and file is `lstat`ed, on every core;
//! the directories whose stamp differs or was not trusted are listed again, as an update
//! lists them (`update::relist_dirs`), those gone are dropped through their parent's
//! listing, and every file takes the size, mtime and identity it has now. What the index
//! then holds is what a walk would find, at the cost of a `stat` per entry instead of a
//! listing and the ignore rules per entry.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Instant, SystemTime};

use super::pack::pack;
use super::root::{RootIndex, as_path, parent_of, stamp_of_meta};
use super::stored::{Saved, mark_of};
use super::update::{self, Update};
use crate::ignores::{RULE_NAMES, Rules};
use crate::walk::Control;

/// What resuming made.
pub(super) enum Resumed {
    /// The index, with how many directories were listed again.
    Ready(Box<RootIndex>),
    /// A whole walk is needed, and why.
    Walk(String),
    Cancelled,
}

/// Checks `saved` (the stored list of `root`) against the disk and brings it up to date.
pub(super) fn resume(root: &Path, saved: Saved, control: &Control, max_files: usize) -> Resumed {
    let started = Instant::now();
    let Saved { part, dirs, inputs } = saved;
    let now = SystemTime::now();
    for (path, mark) in &inputs {
        if !mark.trusted || mark_of(path, true, now).stamp != mark.stamp {
            return Resumed::Walk(format!("ignore rules changed ({})", path.display()));
        }
    }
    // The rules above the root and the global ones as this server would read them (its
    // environment names the global excludes file): each of their inputs must be one the
    // stored walk had.
    let known = |path: &Path| {
        inputs
            .binary_search_by(|(p, _)| p.as_path().cmp(path))
            .is_ok()
    };
    if let Some(path) = Rules::new(root).inputs().iter().find(|p| !known(p)) {
        return Resumed::Walk(format!("ignore rules changed ({})", path.display()));
    }
    if part.files.len() > max_files {
        return Resumed::Walk("more files than the index holds".into());
    }
    let skipped = part.skipped.len() as u64;
    // Stored in packing's order (`stored::decode` checks), the directories keep their
    // positions: `dirs[d]` is the mark of the index's directory `d`.
    let old = pack(root.to_path_buf(), part, skipped, started);
    let changed_dirs = on_every_core(dirs.len(), control, |range, out| {
        for d in range {
            let mark = &dirs[d];
            match std::fs::symlink_metadata(root.join(old.dir_rel(d))) {
                Ok(meta) if meta.is_dir() => {
                    if !mark.trusted || mark.stamp != Some(stamp_of_meta(&meta)) {
                        out.push(d);
                    }
                }
                // Gone (or no longer a directory): its parent's listing drops it.
                _ => out.push(old.dir_parent(d)),
            }
        }
    });
    let changed_files = on_every_core(old.len(), control, |range, out| {
        for id in range {
            if !old.restat(id) {
                // Its directory is listed again, unless that is gone too (then its own
                // parent's listing drops it, as above).
                let parent = parent_of(old.rel_bytes_of_file(id));
                let is_dir = std::fs::symlink_metadata(root.join(as_path(parent)))
                    .is_ok_and(|meta| meta.is_dir());
                out.extend(old.find_dir(as_path(parent)).filter(|_| is_dir));
            }
        }
    });
    if control.is_cancelled() {
        return Resumed::Cancelled;
    }
    let mut relist: Vec<usize> = changed_dirs.into_iter().chain(changed_files).collect();
    relist.sort_unstable();
    relist.dedup();
    // A directory that changed may have gained or lost what makes ignore rules, which
    // apply to everything below it: then only a whole walk is right.
    for &d in &relist {
        let dir = root.join(old.dir_rel(d));
        for name in RULE_NAMES {
            let path = dir.join(name);
            let known = old.ignore_inputs.binary_search(&path).is_ok();
            if std::fs::symlink_metadata(&path).is_ok() != known {
                return Resumed::Walk(format!("ignore rules changed ({})", path.display()));
            }
        }
    }
    let listed_again = relist.len();
    let mut index = match update::relist_dirs(&old, relist, control, max_files) {
        Update::Applied(index, _) => index,
        Update::Unchanged => Box::new(old),
        Update::Rebuild => return Resumed::Walk("most directories changed".into()),
        Update::Cancelled => return Resumed::Cancelled,
    };
    index.info.elapsed = started.elapsed();
    index.info.resumed = Some(listed_again);
    Resumed::Ready(index)
}

/// Runs `check` over `0..n` in chunks on several threads (the work is `stat`s: after a
/// reboot, waiting on the disk, so more threads than cores), gathering what it pushes.
/// Stops early once `control` is cancelled.
fn on_every_core(
    n: usize,
    control: &Control,
    check: impl Fn(Range<usize>, &mut Vec<usize>) + Sync,
) -> Vec<usize> {
    const CHUNK: usize = 4096;
    let next = AtomicUsize::new(0);
    let threads = 4 * crate::pool::pacing::thread_count();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                        if start >= n || control.is_cancelled() {
                            return out;
                        }
                        check(start..(start + CHUNK).min(n), &mut out);
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap_or_default())
            .collect()
    })
}
