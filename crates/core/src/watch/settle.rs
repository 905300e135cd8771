//! What the disk says once a burst is over: whether its path was changed, created or
//! removed ([`settle`], one `lstat`), what a new directory already held before it was
//! watched ([`contents`]), a root's identity (device, inode) to notice it being replaced,
//! and which paths never count (our temporary files) or share a watch (nested roots).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::debounce::{Burst, Debouncer};
use super::event::WatchEvent;

/// Most entries of a new directory announced one by one (see [`contents`]).
pub(crate) const SCAN_MAX: usize = 4096;
/// Suffix of the temporary files written by our atomic writes; never reported.
pub(crate) const TMP_SUFFIX: &str = ".rootgrep-tmp";

/// The (device, inode) of a path, not following a final symlink.
pub(super) fn identity(path: &Path) -> Option<(u64, u64)> {
    use crate::platform::os::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

/// Turns a burst into its settled event by looking at the path now; true when the path
/// is a directory now (one `lstat` answers both).
pub(super) fn settle(path: PathBuf, burst: &Burst) -> (WatchEvent, bool) {
    let meta = std::fs::symlink_metadata(&path).ok();
    let is_dir = meta.as_ref().is_some_and(|meta| meta.is_dir());
    let event = match (meta.is_some(), burst.structural) {
        (true, false) => WatchEvent::Changed(path),
        (true, true) => WatchEvent::Created(path),
        // Gone, whether it existed before the burst or only briefly within it: every
        // `Pending` gets exactly one settled event, so consumers can track each burst.
        (false, _) => WatchEvent::Removed(path),
    };
    (event, is_dir)
}

/// A new directory is watched only once its creation has been seen, so what was
/// written in it before (`mkdir -p a/b && echo > a/b/f`, an unpack, a checkout) has
/// no event of its own: everything it holds now is to be announced as `Created` (sorted),
/// except the paths whose creation was seen and settles in this flush (`settling_now`) or
/// later (in flight in `bursts`): those are reported `Created` anyway, and a directory
/// filled while the writer goes on (a build, an unpack) would otherwise cost every
/// consumer each of its files twice. `None` past [`SCAN_MAX`] entries: the caller says
/// that anything may have changed instead.
pub(super) fn contents(
    dir: &Path,
    settling_now: &HashSet<PathBuf>,
    bursts: &Debouncer,
) -> Option<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        let Ok(listing) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in listing.flatten() {
            let path = entry.path();
            if is_temporary(&path) {
                continue;
            }
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                todo.push(path.clone());
            }
            // Only a creation seen (a structural burst) settles as `Created`: a file
            // written before its directory was watched may have had only its writes
            // seen, which settle as `Changed`.
            let own = settling_now.contains(&path) || bursts.is_structural(&path);
            if own {
                continue;
            }
            found.push(path);
            if found.len() > SCAN_MAX {
                return None;
            }
        }
    }
    found.sort();
    Some(found)
}

/// One of our atomic writes' temporary files (see [`TMP_SUFFIX`]).
pub(super) fn is_temporary(path: &Path) -> bool {
    path.as_os_str()
        .as_encoded_bytes()
        .ends_with(TMP_SUFFIX.as_bytes())
}

/// The roots that are not inside another root (each watched once).
pub(super) fn outermost(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        let nested = roots
            .iter()
            .any(|other| other != root && root.starts_with(other));
        if !nested && !out.contains(root) {
            out.push(root.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_roots_share_one_watch() {
        assert_eq!(
            outermost(&[
                PathBuf::from("/a/b"),
                PathBuf::from("/a"),
                PathBuf::from("/ab")
            ]),
            [PathBuf::from("/a"), PathBuf::from("/ab")]
        );
    }
}
