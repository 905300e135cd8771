//! A restart's first build from the stored file list (`stored.rs`) instead of a whole walk:
//! the ignore rules' inputs are checked first (any change, or one too recent to trust,
//! means a whole walk); then every stored directory and file is `lstat`ed, on every core;
//! the directories whose stamp differs or was not trusted are listed again, as an update
//! lists them (`update::relist_dirs`), those gone are dropped through their parent's
//! listing, and every file takes the size, mtime and identity it has now. What the index
//! then holds is what a walk would find, at the cost of a `stat` per entry instead of a
//! listing and the ignore rules per entry.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Instant, SystemTime};

use super::pack::pack;
use super::root::{RootIndex, stamp_of_meta};
use super::stored::{Mark, Saved, mark_of};
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

/// A stored list packed as the index it was, its marks beside it: made from the store
/// alone, without reading the tree (so while the root's watch is being set up).
pub(super) struct Prepared {
    old: RootIndex,
    /// The directories' marks: `dirs[d]` is the mark of `old`'s directory `d`.
    dirs: Vec<Mark>,
    inputs: Vec<(PathBuf, Mark)>,
}

/// Packs `saved` (the stored list of `root`).
pub(super) fn prepare(root: &Path, saved: Saved) -> Prepared {
    let Saved { part, dirs, inputs } = saved;
    let skipped = part.skipped.len() as u64;
    // Stored in packing's order (`stored::decode` checks), the directories keep their
    // positions: `dirs[d]` is the mark of the index's directory `d`.
    let old = pack(root.to_path_buf(), part, skipped, Instant::now());
    Prepared { old, dirs, inputs }
}

/// Checks `prepared` (the stored list of `root`) against the disk and brings it up to date.
pub(super) fn resume(
    root: &Path,
    prepared: Prepared,
    control: &Control,
    max_files: usize,
) -> Resumed {
    let started = Instant::now();
    let Prepared { old, dirs, inputs } = prepared;
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
    if old.len() > max_files {
        return Resumed::Walk("more files than the index holds".into());
    }
    let relist = on_every_core(dirs.len(), control, |range, out| {
        for d in range {
            check_dir(root, &old, d, &dirs[d], out);
        }
    });
    if control.is_cancelled() {
        return Resumed::Cancelled;
    }
    let mut relist = relist;
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

/// Checks directory `d` (stored with `mark`) and its files against the disk: `d` is to be
/// listed again when its stamp differs, or when one of its files is no longer a regular
/// file; its parent, when `d` is gone. The files take the stamps they have now.
fn check_dir(root: &Path, old: &RootIndex, d: usize, mark: &Mark, out: &mut Vec<usize>) {
    #[cfg(unix)]
    if by_descriptor(root, old, d, mark, out) {
        return;
    }
    match std::fs::symlink_metadata(root.join(old.dir_rel(d))) {
        Ok(meta) if meta.is_dir() => {
            if !mark.trusted || mark.stamp != Some(stamp_of_meta(&meta)) {
                out.push(d);
            }
        }
        // Gone (or no longer a directory): its parent's listing drops it, files and all.
        _ => return out.push(old.dir_parent(d)),
    }
    if !old.dir_file_ids(d).all(|id| old.restat(id)) {
        out.push(d);
    }
}

/// [`check_dir`] through the directory's descriptor: its files are `stat`ed by name in it,
/// not by their whole path (on the 1M-file tree, resolving every path's components again
/// was most of the resume's kernel time). `false` when the directory could not be opened
/// for that (no permission to): then by path.
#[cfg(unix)]
fn by_descriptor(
    root: &Path,
    old: &RootIndex,
    d: usize,
    mark: &Mark,
    out: &mut Vec<usize>,
) -> bool {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;
    // Linux opens a directory only to name it (`O_PATH`: no read permission needed).
    #[cfg(target_os = "linux")]
    let flags = OFlags::PATH;
    #[cfg(not(target_os = "linux"))]
    let flags = OFlags::RDONLY;
    let flags = flags | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = match rustix::fs::open(root.join(old.dir_rel(d)), flags, Mode::empty()) {
        Ok(dir) => dir,
        Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => {
            out.push(old.dir_parent(d));
            return true;
        }
        Err(_) => return false,
    };
    let Ok(stat) = rustix::fs::fstat(&dir) else {
        return false;
    };
    // `O_DIRECTORY` refuses anything else; checked again all the same, as by path.
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        out.push(old.dir_parent(d));
        return true;
    }
    if !mark.trusted || mark.stamp != Some(StatStamp::of(&stat).dir_stamp()) {
        out.push(d);
    }
    let mut all_files = true;
    for id in old.dir_file_ids(d) {
        let name = file_name(old.rel_bytes_of_file(id));
        match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile => {
                let now = StatStamp::of(&stat);
                old.set_stamp(id, now.size, now.mtime, now.ident);
            }
            _ => all_files = false,
        }
    }
    if !all_files {
        out.push(d);
    }
    true
}

/// The last component of a relative path's bytes.
#[cfg(unix)]
fn file_name(rel: &[u8]) -> &[u8] {
    match rel.iter().rposition(|&b| b == b'/') {
        Some(at) => &rel[at + 1..],
        None => rel,
    }
}

/// What the index keeps of a `stat` read through `rustix`: the same numbers as from std's
/// `Metadata` (`root::stamp_of_meta`, `RootIndex::store_stat`; tested).
#[cfg(unix)]
#[derive(Debug, PartialEq, Eq)]
pub(super) struct StatStamp {
    size: u64,
    /// Nanoseconds since the epoch, negative before it (`root::to_nanos`).
    mtime: i64,
    ident: u64,
}

#[cfg(unix)]
impl StatStamp {
    // The fields' integer types differ between targets: the casts are needed on some.
    #[allow(clippy::unnecessary_cast)]
    pub(super) fn of(stat: &rustix::fs::Stat) -> StatStamp {
        let nanos = i128::from(stat.st_mtime as i64) * 1_000_000_000
            + i128::from(stat.st_mtime_nsec as i64);
        let mtime = i64::try_from(nanos).unwrap_or(if nanos < 0 {
            super::root::NO_MTIME + 1
        } else {
            i64::MAX
        });
        StatStamp {
            size: stat.st_size as u64,
            mtime,
            ident: crate::platform::os::identity_of(
                stat.st_ino as u64,
                stat.st_ctime as i64,
                stat.st_ctime_nsec as i64,
            ),
        }
    }

    #[cfg(test)]
    pub(super) fn parts(&self) -> (u64, i64, u64) {
        (self.size, self.mtime, self.ident)
    }

    /// The stamp a directory's mark holds (`root::stamp_of_meta`).
    pub(super) fn dir_stamp(&self) -> super::Stamp {
        let mtime = u64::try_from(self.mtime).unwrap_or(u64::MAX);
        (self.size, mtime, self.ident)
    }
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
