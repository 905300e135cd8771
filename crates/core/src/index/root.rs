//! One immutable build of one root, and its queries: all relative paths in one byte
//! arena, per file a span and three atomics (size, mtime and identity, refreshed in place by content
//! changes), the visited directories in pre-order (for completion, for `files_under`, and
//! for telling whether an event can matter), the *ignored* entries seen directly inside
//! visited directories (a whitelisting grep `--glob` brings those back, as in ripgrep, so
//! the index must know them to answer exactly as the walk would) and what the walk could
//! not read.
//!
//! Ordering: paths are sorted component-wise (as `Path`'s `Ord` does), which is byte order
//! with the separator sorting before every other byte; so all entries below a directory
//! are contiguous, and a listing comes out in the order a path-sorted search would give.
//!
//! Separators: relative paths are kept exactly as the walker and the watcher give them,
//! with the platform's separator (`\` on Windows), and every split, join and comparison
//! here goes through [`Seps`] (on Windows `/` is a separator too, as for `Path`). The byte
//! functions at the end take the rules as a parameter, so Windows' are tested everywhere.

use crate::platform::os::{OsStrExt, Seps};
use std::cmp::Ordering;
use std::ffi::OsStr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering as AtomicOrdering};
use std::time::{Duration, SystemTime};

use crate::ignores::SkippedIgnoreFile;

/// Stored modification time meaning "could not be read".
pub(super) const NO_MTIME: i64 = i64::MIN;

/// A byte range of the arena: one relative path.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    pub(super) start: u32,
    pub(super) len: u32,
}

impl Span {
    pub(super) fn range(self) -> Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// One indexed file. Size and mtime are atomics so a content change can be applied in
/// place to a snapshot that searches are reading.
#[derive(Debug)]
pub(super) struct FileRec {
    pub(super) path: Span,
    pub(super) size: AtomicU64,
    /// Nanoseconds since the epoch ([`NO_MTIME`] when unknown).
    pub(super) mtime: AtomicI64,
    /// Inode and change time (`platform::os::identity`).
    pub(super) ident: AtomicU64,
}

/// One visited (not ignored, not hidden) directory; `dirs[0]` is the root itself.
#[derive(Debug)]
pub(super) struct DirRec {
    pub(super) path: Span,
    pub(super) parent: u32,
    /// One past the last directory below this one (directories are in pre-order).
    pub(super) subtree_end: u32,
    /// This directory's own files: a range of `dir_files`.
    pub(super) files: Range<u32>,
}

/// An entry directly inside a visited directory that the ignore rules skip.
#[derive(Debug)]
pub(super) struct IgnoredRec {
    pub(super) path: Span,
    pub(super) parent: u32,
    pub(super) is_dir: bool,
}

/// An entry the walk yielded but a search cannot read: a special file (FIFO, socket,
/// device), or a path the walk failed on (permission denied, too long, vanished). A
/// search from the index counts these in `skipped_unreadable` exactly as a walk would.
#[derive(Debug)]
pub(super) struct SkippedRec {
    pub(super) path: Span,
    /// The visited directory whose walk meets it (for a directory the walk failed to
    /// list, that directory itself).
    pub(super) dir: u32,
    /// A special file (filtered by globs and types as files are); else a walk error.
    pub(super) special: bool,
}

/// Figures about one build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    pub files: usize,
    pub dirs: usize,
    pub ignored: usize,
    pub elapsed: Duration,
    /// Heap bytes held by the index (arena and records).
    pub heap_bytes: usize,
    /// Entries the walk could not read (permission denied, vanished, special files).
    pub unreadable: u64,
    /// Built from the stored file list at a restart (`resume.rs`): how many directories
    /// it listed again. `None` for a walk of the whole root.
    pub resumed: Option<usize>,
}

/// One build of one root: immutable except for per-file size, mtime and identity.
#[derive(Debug)]
pub struct RootIndex {
    pub(super) root: PathBuf,
    pub(super) arena: Box<[u8]>,
    pub(super) files: Box<[FileRec]>,
    pub(super) dirs: Box<[DirRec]>,
    /// File indices grouped by directory (see [`DirRec::files`]), by name within each.
    pub(super) dir_files: Box<[u32]>,
    pub(super) ignored: Box<[IgnoredRec]>,
    pub(super) skipped: Box<[SkippedRec]>,
    /// Ignore files the build's walks did not apply (not regular files, too large).
    pub(super) skipped_ignore: Box<[SkippedIgnoreFile]>,
    /// The paths whose change would change the ignore rules of the build's walk
    /// (`ignores::Rules::inputs`), checked when a restart resumes from the store.
    pub(super) ignore_inputs: Box<[PathBuf]>,
    pub(super) info: BuildInfo,
}

/// A file of the index, as callers see it.
#[derive(Clone, Copy, Debug)]
pub struct IndexedFile<'a> {
    /// Position in [`RootIndex`]'s path order.
    pub id: usize,
    /// Path relative to the root (no leading `/`).
    pub rel: &'a Path,
    pub size: u64,
    pub modified: Option<SystemTime>,
    /// Inode and change time, as one number (`platform::os::identity`).
    pub ident: u64,
}

/// A file's size, mtime (nanoseconds; `u64::MAX` unknown) and identity (inode and change
/// time, `platform::os::identity`): what an index built from the file compares before it
/// answers for it.
pub(crate) type Stamp = (u64, u64, u64);

impl IndexedFile<'_> {
    /// Its [`Stamp`] as the file index holds it.
    pub(crate) fn stamp(&self) -> Stamp {
        let mtime = (self.modified)
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(u64::MAX, |d| d.as_nanos() as u64);
        (self.size, mtime, self.ident)
    }
}

/// The [`Stamp`] of a file's metadata as read from the disk now.
pub(crate) fn stamp_of_meta(meta: &std::fs::Metadata) -> Stamp {
    let mtime = (meta.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(u64::MAX, |d| d.as_nanos() as u64);
    (meta.len(), mtime, crate::platform::os::identity(meta))
}

/// A child of a directory, for completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Child<'a> {
    pub name: &'a OsStr,
    pub is_dir: bool,
}

impl RootIndex {
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn info(&self) -> &BuildInfo {
        &self.info
    }

    /// The ignore files not applied that a walk of `dir` (absolute, inside the root) would
    /// report: those of `dir`, of the directories above it, and of those below it.
    pub(crate) fn skipped_ignore_for(&self, dir: &Path) -> Vec<SkippedIgnoreFile> {
        self.skipped_ignore
            .iter()
            .filter(|s| dir.starts_with(&s.dir) || s.dir.starts_with(dir))
            .cloned()
            .collect()
    }

    /// Number of indexed files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub(super) fn bytes(&self, span: Span) -> &[u8] {
        &self.arena[span.range()]
    }

    pub(super) fn rel_of(&self, span: Span) -> &Path {
        Path::new(OsStr::from_bytes(self.bytes(span)))
    }

    /// The file with position `id`.
    pub fn file(&self, id: usize) -> IndexedFile<'_> {
        let rec = &self.files[id];
        let mtime = rec.mtime.load(AtomicOrdering::Relaxed);
        IndexedFile {
            id,
            rel: self.rel_of(rec.path),
            size: rec.size.load(AtomicOrdering::Relaxed),
            modified: (mtime != NO_MTIME).then(|| from_nanos(mtime)),
            ident: rec.ident.load(AtomicOrdering::Relaxed),
        }
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = IndexedFile<'_>> + '_ {
        (0..self.files.len()).map(|id| self.file(id))
    }

    /// The absolute path of file `id`.
    pub(crate) fn path_of(&self, id: usize) -> PathBuf {
        self.root.join(self.rel_of(self.files[id].path))
    }

    /// Position of a file given its path relative to the root.
    pub(crate) fn find_file(&self, rel: &Path) -> Option<usize> {
        let key = rel.as_os_str().as_bytes();
        self.files
            .binary_search_by(|rec| cmp_paths(self.bytes(rec.path), key))
            .ok()
    }

    /// Position of a visited directory (`""` is the root).
    pub(crate) fn find_dir(&self, rel: &Path) -> Option<usize> {
        let key = rel.as_os_str().as_bytes();
        self.dirs
            .binary_search_by(|rec| cmp_paths(self.bytes(rec.path), key))
            .ok()
    }

    pub(super) fn find_ignored(&self, rel: &[u8]) -> Option<usize> {
        self.ignored
            .binary_search_by(|rec| cmp_paths(self.bytes(rec.path), rel))
            .ok()
    }

    /// Files below the visited directory `rel` (all of them for `""`), as a range of ids.
    pub fn files_under(&self, rel: &Path) -> Range<usize> {
        let dir = rel.as_os_str().as_bytes();
        if dir.is_empty() {
            return 0..self.files.len();
        }
        // Everything below `dir/` sorts right after `dir` and before its next sibling.
        let below = |path: &[u8]| is_below(dir, path);
        let start = self
            .files
            .partition_point(|rec| cmp_paths(self.bytes(rec.path), dir) != Ordering::Greater);
        let len = self.files[start..].partition_point(|rec| below(self.bytes(rec.path)));
        start..start + len
    }

    /// The children of visited directory `dir` (a position from [`RootIndex::find_dir`]):
    /// sub-directories that the walk enters, then files, each group by name.
    pub(crate) fn children(&self, dir: usize) -> Vec<Child<'_>> {
        let rec = &self.dirs[dir];
        let mut out = Vec::new();
        let mut next = dir + 1;
        while next < rec.subtree_end as usize {
            out.push(Child {
                name: name_of(self.bytes(self.dirs[next].path)),
                is_dir: true,
            });
            next = self.dirs[next].subtree_end as usize;
        }
        for &id in &self.dir_files[rec.files.start as usize..rec.files.end as usize] {
            out.push(Child {
                name: name_of(self.bytes(self.files[id as usize].path)),
                is_dir: false,
            });
        }
        out
    }

    /// The visited directories below (and including) `dir`, in pre-order, each with its
    /// relative path, its parent's position and its own files.
    pub(crate) fn dirs_below(&self, dir: usize) -> Range<usize> {
        dir..self.dirs[dir].subtree_end as usize
    }

    /// The visited directories directly inside visited directory `dir`.
    pub(super) fn subdirs(&self, dir: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.dirs[dir].subtree_end as usize;
        let mut next = dir + 1;
        std::iter::from_fn(move || {
            (next < end).then(|| {
                let this = next;
                next = self.dirs[this].subtree_end as usize;
                this
            })
        })
    }

    /// File `id`'s path relative to the root, as bytes.
    pub(super) fn rel_bytes_of_file(&self, id: usize) -> &[u8] {
        self.bytes(self.files[id].path)
    }

    pub(crate) fn dir_rel(&self, dir: usize) -> &Path {
        self.rel_of(self.dirs[dir].path)
    }

    pub(crate) fn dir_parent(&self, dir: usize) -> usize {
        self.dirs[dir].parent as usize
    }

    pub(crate) fn dir_file_ids(&self, dir: usize) -> impl ExactSizeIterator<Item = usize> + '_ {
        let files = &self.dirs[dir].files;
        self.dir_files[files.start as usize..files.end as usize]
            .iter()
            .map(|&id| id as usize)
    }

    /// Ignored entries directly inside the visited directories `dirs` (a range from
    /// [`RootIndex::dirs_below`]): (relative path, parent directory, is a directory).
    pub(crate) fn ignored_in(
        &self,
        dirs: Range<usize>,
    ) -> impl Iterator<Item = (&Path, usize, bool)> + '_ {
        self.ignored
            .iter()
            .filter(move |rec| dirs.contains(&(rec.parent as usize)))
            .map(|rec| (self.rel_of(rec.path), rec.parent as usize, rec.is_dir))
    }

    /// Entries a search cannot read met in the visited directories `dirs` (a range from
    /// [`RootIndex::dirs_below`]): (relative path, directory, is a special file).
    pub(crate) fn skipped_in(
        &self,
        dirs: Range<usize>,
    ) -> impl Iterator<Item = (&Path, usize, bool)> + '_ {
        self.skipped
            .iter()
            .filter(move |rec| dirs.contains(&(rec.dir as usize)))
            .map(|rec| (self.rel_of(rec.path), rec.dir as usize, rec.special))
    }

    /// Whether an event at `rel` can change what this index holds (see [`FileIndex`]).
    pub(super) fn touches(&self, rel: &[u8]) -> bool {
        self.find_file(as_path(rel)).is_some()
            || self.find_dir(as_path(rel)).is_some()
            || self.find_ignored(rel).is_some()
            || self.ignore_rules_at(rel)
            || (!is_hidden(rel) && self.parent_visited(rel))
    }

    pub(super) fn parent_visited(&self, rel: &[u8]) -> bool {
        self.find_dir(as_path(parent_of(rel))).is_some()
    }

    /// `rel` is (or is inside) something that decides what the walk skips, in a directory
    /// the walk enters: `.gitignore`, `.ignore`, `.git` (whose presence turns `.gitignore`
    /// on), `.git/info/exclude`.
    pub(super) fn ignore_rules_at(&self, rel: &[u8]) -> bool {
        let name = name_of(rel).as_bytes();
        if matches!(name, b".gitignore" | b".ignore" | b".git") {
            return self.parent_visited(rel);
        }
        // `<dir>/.git/info/...`
        let mut start = 0;
        while let Some(at) = find(&rel[start..], b".git/info") {
            let at = start + at;
            let owner = match at {
                0 => Some(&b""[..]),
                _ if Seps::NATIVE.is_sep(rel[at - 1]) => Some(&rel[..at - 1]),
                _ => None,
            };
            if let Some(owner) = owner
                && self.find_dir(as_path(owner)).is_some()
            {
                return true;
            }
            start = at + 1;
        }
        false
    }

    /// Reads file `id`'s size, mtime and identity again. False when it is no longer a regular file.
    pub(super) fn restat(&self, id: usize) -> bool {
        let path = self.root.join(self.rel_of(self.files[id].path));
        self.store_stat(id, std::fs::symlink_metadata(path).ok().as_ref())
    }

    /// Stores file `id`'s size, mtime and identity from `meta` (its `lstat`, read by the caller).
    /// False when it is no longer a regular file.
    pub(super) fn store_stat(&self, id: usize, meta: Option<&std::fs::Metadata>) -> bool {
        match meta {
            Some(meta) if meta.is_file() => {
                let mtime = to_nanos(meta.modified().ok());
                self.set_stamp(id, meta.len(), mtime, crate::platform::os::identity(meta));
                true
            }
            _ => false,
        }
    }

    /// Stores file `id`'s size, mtime (nanoseconds, as [`to_nanos`] gives) and identity.
    pub(super) fn set_stamp(&self, id: usize, size: u64, mtime: i64, ident: u64) {
        let rec = &self.files[id];
        rec.size.store(size, AtomicOrdering::Relaxed);
        rec.mtime.store(mtime, AtomicOrdering::Relaxed);
        rec.ident.store(ident, AtomicOrdering::Relaxed);
    }
}

// ---------------------------------------------------------------------------------------
// Paths as bytes

/// Component-wise path order on relative paths: byte order with the separator first
/// (this platform's rules: [`cmp_paths_in`]).
pub(crate) fn cmp_paths(a: &[u8], b: &[u8]) -> Ordering {
    cmp_paths_in(Seps::NATIVE, a, b)
}

/// `Path`'s order on relative paths under `seps` (no `.` components, no repeated or
/// trailing separators, as the walker makes them): byte order with every separator ranked
/// lowest, and separators equal to each other (on Windows `a/b` is `a\b`).
pub(crate) fn cmp_paths_in(seps: Seps, a: &[u8], b: &[u8]) -> Ordering {
    let key = |b: u8| if seps.is_sep(b) { 0 } else { b };
    match a.iter().zip(b).position(|(&x, &y)| key(x) != key(y)) {
        Some(i) => key(a[i]).cmp(&key(b[i])),
        None => a.len().cmp(&b.len()),
    }
}

/// `path` lies strictly below the directory `dir` (both relative; `""` is the root).
pub(super) fn is_below(dir: &[u8], path: &[u8]) -> bool {
    is_below_in(Seps::NATIVE, dir, path)
}

pub(super) fn is_below_in(seps: Seps, dir: &[u8], path: &[u8]) -> bool {
    if dir.is_empty() {
        return !path.is_empty();
    }
    path.len() > dir.len()
        && seps.is_sep(path[dir.len()])
        && cmp_paths_in(seps, &path[..dir.len()], dir) == Ordering::Equal
}

/// `dir` and `name` joined with the platform's separator into `out` (cleared first).
pub(super) fn join_into(out: &mut Vec<u8>, dir: &[u8], name: &[u8]) {
    join_into_in(Seps::NATIVE, out, dir, name);
}

pub(super) fn join_into_in(seps: Seps, out: &mut Vec<u8>, dir: &[u8], name: &[u8]) {
    out.clear();
    out.extend_from_slice(dir);
    if !dir.is_empty() {
        out.push(seps.sep());
    }
    out.extend_from_slice(name);
}

pub(super) fn as_path(bytes: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(bytes))
}

pub(super) fn parent_of(rel: &[u8]) -> &[u8] {
    parent_in(Seps::NATIVE, rel)
}

pub(super) fn parent_in(seps: Seps, rel: &[u8]) -> &[u8] {
    match rel.iter().rposition(|&b| seps.is_sep(b)) {
        Some(at) => &rel[..at],
        None => b"",
    }
}

pub(super) fn name_of(rel: &[u8]) -> &OsStr {
    OsStr::from_bytes(name_in(Seps::NATIVE, rel))
}

pub(super) fn name_in(seps: Seps, rel: &[u8]) -> &[u8] {
    let start = rel
        .iter()
        .rposition(|&b| seps.is_sep(b))
        .map_or(0, |at| at + 1);
    &rel[start..]
}

/// The last component starts with `.`.
pub(super) fn is_hidden(rel: &[u8]) -> bool {
    name_of(rel).as_bytes().starts_with(b".")
}

pub(super) fn is_ignore_name(rel: &[u8]) -> bool {
    is_ignore_name_in(Seps::NATIVE, rel)
}

pub(super) fn is_ignore_name_in(seps: Seps, rel: &[u8]) -> bool {
    matches!(name_in(seps, rel), b".gitignore" | b".ignore" | b".git")
        || find_in(seps, rel, b".git/").is_some()
}

/// The first occurrence of `needle` in `haystack`, a `/` in `needle` matching any
/// separator (this platform's rules).
pub(super) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    find_in(Seps::NATIVE, haystack, needle)
}

pub(super) fn find_in(seps: Seps, haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let same = |h: u8, n: u8| h == n || (n == b'/' && seps.is_sep(h));
    haystack
        .windows(needle.len())
        .position(|w| w.iter().zip(needle).all(|(&h, &n)| same(h, n)))
}

pub(super) fn to_nanos(time: Option<SystemTime>) -> i64 {
    let Some(time) = time else {
        return NO_MTIME;
    };
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_nanos()).map_or(NO_MTIME + 1, |n| -n),
    }
}

pub(super) fn from_nanos(nanos: i64) -> SystemTime {
    let magnitude = Duration::from_nanos(nanos.unsigned_abs());
    match nanos >= 0 {
        true => SystemTime::UNIX_EPOCH + magnitude,
        false => SystemTime::UNIX_EPOCH - magnitude,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_order_matches_path_ord() {
        let mut paths = vec![
            "a", "a/b", "a.b", "a-b/c", "a/b/c", "ab", "a/bc", "a b", "Z", "é",
        ];
        let mut by_path = paths.clone();
        by_path.sort_by(|x, y| Path::new(x).cmp(Path::new(y)));
        paths.sort_by(|x, y| cmp_paths(x.as_bytes(), y.as_bytes()));
        assert_eq!(paths, by_path);
    }

    /// `Path`'s order is component by component; on Windows both `\` and `/` separate.
    fn components(seps: Seps, path: &str) -> Vec<&[u8]> {
        path.as_bytes().split(|&b| seps.is_sep(b)).collect()
    }

    #[test]
    fn path_order_is_component_order_under_both_platforms_rules() {
        let names = [
            "a", "a.b", "a-b", "ab", "a b", "Z", "é", "a\\b", "a/b", "a\\b\\c", "a\\bc", "a\\b.c",
            "a.b\\c", "a-b\\c", "a\\b/c", "a!", "a\\!",
        ];
        for seps in [Seps::Unix, Seps::Windows] {
            let mut ours: Vec<&str> = names.to_vec();
            ours.sort_by(|x, y| cmp_paths_in(seps, x.as_bytes(), y.as_bytes()));
            let mut oracle: Vec<&str> = names.to_vec();
            oracle.sort_by(|x, y| components(seps, x).cmp(&components(seps, y)));
            // Equal keys (`a\b/c` and `a/b\c` on Windows) may come in either order.
            let keys = |list: &[&str]| -> Vec<Vec<Vec<u8>>> {
                list.iter()
                    .map(|p| components(seps, p).iter().map(|c| c.to_vec()).collect())
                    .collect()
            };
            assert_eq!(keys(&ours), keys(&oracle), "{seps:?}");
        }
        // On Windows the two separators are one; on Unix `\` is a name's byte.
        assert_eq!(
            cmp_paths_in(Seps::Windows, b"a/b", b"a\\b"),
            Ordering::Equal
        );
        assert_ne!(cmp_paths_in(Seps::Unix, b"a/b", b"a\\b"), Ordering::Equal);
        // `a\b` sorts before `a.b` on Windows ('\' > '.' as bytes, but it separates).
        assert_eq!(cmp_paths_in(Seps::Windows, b"a\\b", b"a.b"), Ordering::Less);
        assert_eq!(cmp_paths_in(Seps::Unix, b"a\\b", b"a.b"), Ordering::Greater);
    }

    #[test]
    fn names_parents_and_subtrees_under_both_platforms_rules() {
        let w = Seps::Windows;
        let u = Seps::Unix;
        assert_eq!(name_in(w, b"src\\index\\root.rs"), b"root.rs");
        assert_eq!(name_in(w, b"src/index\\root.rs"), b"root.rs");
        assert_eq!(name_in(u, b"src\\index\\root.rs"), b"src\\index\\root.rs");
        assert_eq!(name_in(u, b"src/root.rs"), b"root.rs");
        assert_eq!(name_in(w, b"top"), b"top");
        assert_eq!(parent_in(w, b"src\\index\\root.rs"), b"src\\index");
        assert_eq!(parent_in(w, b"top"), b"");
        assert_eq!(parent_in(u, b"a\\b"), b"");
        assert_eq!(parent_in(u, b"a/b\\c"), b"a");

        assert!(is_below_in(w, b"a", b"a\\b"));
        assert!(is_below_in(w, b"a", b"a\\b\\c"));
        assert!(is_below_in(w, b"a\\b", b"a/b\\c"));
        assert!(!is_below_in(w, b"a", b"a"));
        assert!(!is_below_in(w, b"a", b"a.b"));
        assert!(!is_below_in(w, b"a", b"ab\\c"));
        assert!(is_below_in(w, b"", b"a"));
        assert!(!is_below_in(w, b"", b""));
        assert!(is_below_in(u, b"a", b"a/b"));
        assert!(!is_below_in(u, b"a", b"a\\b"), "a name's byte on Unix");

        let mut out = Vec::new();
        join_into_in(w, &mut out, b"a\\b", b"c");
        assert_eq!(out, b"a\\b\\c");
        join_into_in(w, &mut out, b"", b"c");
        assert_eq!(out, b"c");
        join_into_in(u, &mut out, b"a/b", b"c");
        assert_eq!(out, b"a/b/c");

        assert!(is_ignore_name_in(w, b"sub\\.gitignore"));
        assert!(is_ignore_name_in(w, b"sub\\.git\\info\\exclude"));
        assert!(is_ignore_name_in(w, b".git\\HEAD"));
        assert!(!is_ignore_name_in(w, b"sub\\x.rs"));
        assert!(!is_ignore_name_in(u, b"sub\\.git\\HEAD"));
        assert!(is_ignore_name_in(u, b"sub/.git/HEAD"));
        assert_eq!(find_in(w, b"x\\.git\\info", b".git/info"), Some(2));
        assert_eq!(find_in(w, b"x/.git/info", b".git/info"), Some(2));
        assert_eq!(find_in(u, b"x\\.git\\info", b".git/info"), None);
    }

    /// A sorted Windows-shaped listing: every directory's entries are contiguous, which is
    /// what `files_under`'s binary search relies on.
    #[test]
    fn a_directory_subtree_is_contiguous_under_both_platforms_rules() {
        for (seps, sep) in [(Seps::Unix, "/"), (Seps::Windows, "\\")] {
            let mut paths: Vec<String> = ["a.b", "a/x", "a/y/z", "a-b", "a0", "ab/c", "a/a.b"]
                .iter()
                .map(|p| p.replace('/', sep))
                .collect();
            paths.sort_by(|x, y| cmp_paths_in(seps, x.as_bytes(), y.as_bytes()));
            let below: Vec<bool> = paths
                .iter()
                .map(|p| is_below_in(seps, b"a", p.as_bytes()))
                .collect();
            let first = below.iter().position(|&b| b).unwrap();
            let count = below.iter().filter(|&&b| b).count();
            assert_eq!(count, 3, "{seps:?}");
            assert!(below[first..first + count].iter().all(|&b| b), "{paths:?}");
        }
    }
}
