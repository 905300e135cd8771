//! One-level directory listings (the `list_directory` tool's domain code): entry kinds,
//! symlink targets, sizes, gitignore marks, deterministic sorting and paging.
//!
//! API: [`list_directory`]`(dir, &ListOptions) -> Result<Listing, ListError>`.
//!
//! - Every entry is `lstat`ed, never followed: a symlink is reported as
//!   [`EntryKind::Symlink`] with its literal target and what that target is
//!   ([`TargetKind`]; `Missing` for a dangling link). The target may lie outside the roots;
//!   we only report the link text and the kind, never read through it.
//! - `ignored` is true when the entry would be skipped by the gitignore-aware walk the search
//!   tools use: we run their walker ([`crate::walk::WalkOptions::walker`]) over `dir` at
//!   depth 1 with the same rules as `grep`/`glob` (.gitignore inside git repos, .ignore,
//!   .git/info/exclude, the global git excludes, parents' ignore files) but with hidden
//!   files allowed, and mark every entry it does not yield. So "ignored" here means exactly
//!   "skipped by grep/glob unless no_ignore"; ignore files it did not apply (not regular
//!   files, too large) are in [`Listing::skipped_ignore_files`].
//! - Sorting (all deterministic, ties broken by name; names compare as raw bytes):
//!   `Name` puts directories (and symlinks to directories) first, then everything else,
//!   each group by name — the layout people scan fastest. `Size` is largest first
//!   (directories and symlinks have no size and come last, by name). `Modified` is newest
//!   first (unknown mtimes last).
//! - Paging: `total` counts every entry after the hidden filter; `entries` is the page
//!   `offset .. offset + limit` (`limit == 0` means no limit; the adapter still applies the
//!   output budget); `truncated` / `next_offset` say whether and where more follow.
//! - Per-entry problems (an entry deleted while listing, an unreadable symlink) never fail
//!   the listing: the entry is kept with what is known, or dropped if it vanished.

use super::safe::{HeldEntry, HeldKind};
use crate::ignores::SkippedIgnoreFile;
use std::cmp::Reverse;
use std::collections::HashSet;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Sort order for [`list_directory`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    /// Directories first, then by name.
    #[default]
    Name,
    /// Largest first.
    Size,
    /// Newest first.
    Modified,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOptions {
    /// Fill in [`Entry::size`] for regular files. (Size is always gathered for sorting; this
    /// only controls whether it is reported.)
    pub sizes: bool,
    pub sort: SortBy,
    /// Include names starting with `.` (default true: a one-level listing should show
    /// `.github/`, `.env.example`, …).
    pub hidden: bool,
    pub offset: usize,
    /// Page size; 0 = no limit.
    pub limit: usize,
}

impl Default for ListOptions {
    fn default() -> Self {
        ListOptions {
            sizes: false,
            sort: SortBy::Name,
            hidden: true,
            offset: 0,
            limit: 500,
        }
    }
}

/// What a symlink points at (followed once, for reporting only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    File,
    Dir,
    Other,
    /// Dangling link (or a loop / permission problem: the target cannot be `stat`ed).
    Missing,
}

/// Special file kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Fifo,
    Socket,
    BlockDevice,
    CharDevice,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    /// `target` is the link's literal content (may be relative, may point outside the roots).
    Symlink {
        target: PathBuf,
        target_kind: TargetKind,
    },
    Other(Special),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// File name (lossy UTF-8; `path` has the exact bytes).
    pub name: String,
    /// Absolute path (`dir` joined with the name).
    pub path: PathBuf,
    pub kind: EntryKind,
    /// Regular files only, and only when `ListOptions::sizes`.
    pub size: Option<u64>,
    /// Modification time of the entry itself (not of a symlink's target).
    pub modified: Option<SystemTime>,
    /// Skipped by the gitignore-aware walk (see module docs).
    pub ignored: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub dir: PathBuf,
    /// The requested page.
    pub entries: Vec<Entry>,
    /// All entries after the hidden filter.
    pub total: usize,
    pub truncated: bool,
    pub next_offset: Option<usize>,
    /// Ignore files the marks could not apply (not regular files, too large).
    pub skipped_ignore_files: Vec<SkippedIgnoreFile>,
}

/// Why a directory could not be listed ([`list_directory`], and the tree's
/// [`directory_tree`](super::tree::directory_tree)).
#[derive(Debug)]
pub enum ListError {
    /// The path is not a directory: a caller can say what reads a file instead.
    NotADirectory { path: PathBuf },
    /// The operating system's error (missing, permission denied…).
    Io { path: PathBuf, source: io::Error },
}

impl ListError {
    /// The error of `dir` that could not be opened or read.
    pub(crate) fn cannot_list(dir: &Path) -> impl Fn(io::Error) -> ListError + '_ {
        move |source| match source.kind() {
            io::ErrorKind::NotADirectory => ListError::NotADirectory {
                path: dir.to_path_buf(),
            },
            _ => ListError::Io {
                path: dir.to_path_buf(),
                source,
            },
        }
    }
}

impl std::fmt::Display for ListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListError::NotADirectory { path } => write!(
                f,
                "cannot list {}: not a directory",
                crate::roots::path_display(path)
            ),
            ListError::Io { path, source } => {
                write!(
                    f,
                    "cannot list {}: {source}",
                    crate::roots::path_display(path)
                )
            }
        }
    }
}

impl std::error::Error for ListError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ListError::Io { source, .. } => Some(source),
            ListError::NotADirectory { .. } => None,
        }
    }
}

/// List the entries of `dir` (one level). Fails only if `dir` itself cannot be read (missing,
/// not a directory: [`ListError::NotADirectory`], permission denied), naming it.
pub fn list_directory(dir: &Path, opts: &ListOptions) -> Result<Listing, ListError> {
    // Read through a handle opened without following symlinks, so a directory swapped for
    // a link after the caller checked it cannot show another directory's entries.
    let handle = super::safe::DirHandle::open(dir).map_err(ListError::cannot_list(dir))?;
    let held = handle.entries().map_err(ListError::cannot_list(dir))?;
    let mut raws: Vec<Raw> = held
        .into_iter()
        .filter(|item| opts.hidden || !is_hidden(&item.name))
        .map(|item| Raw::of(item, dir, opts.sizes))
        .collect();

    let (kept, skipped_ignore_files) = not_ignored(dir);
    if let Some(kept) = kept {
        for r in &mut raws {
            r.entry.ignored = !kept.contains(&r.name);
        }
    }
    sort(&mut raws, opts.sort);

    let total = raws.len();
    let start = opts.offset.min(total);
    let end = if opts.limit == 0 {
        total
    } else {
        start.saturating_add(opts.limit).min(total)
    };
    let entries: Vec<Entry> = raws.drain(start..end).map(|r| r.entry).collect();
    let truncated = end < total;
    Ok(Listing {
        dir: dir.to_path_buf(),
        entries,
        total,
        truncated,
        next_offset: truncated.then_some(end),
        skipped_ignore_files,
    })
}

/// An entry as listed, with what sorting needs: its exact name and its size (kept even when
/// not reported).
struct Raw {
    name: OsString,
    entry: Entry,
    size: Option<u64>,
}

impl Raw {
    fn of(item: HeldEntry, dir: &Path, sizes: bool) -> Raw {
        let kind = entry_kind(&item);
        let size = matches!(kind, EntryKind::File).then_some(item.len);
        Raw {
            entry: Entry {
                name: item.name.to_string_lossy().into_owned(),
                path: dir.join(&item.name),
                kind,
                size: if sizes { size } else { None },
                modified: item.modified,
                ignored: false,
            },
            name: item.name,
            size,
        }
    }
}

/// Sorts the entries in `order`, ties broken by name (raw bytes).
fn sort(raws: &mut [Raw], order: SortBy) {
    let by_name = |a: &Raw, b: &Raw| a.name.cmp(&b.name);
    match order {
        SortBy::Name => raws.sort_by(|a, b| {
            Reverse(is_dirlike(&a.entry.kind))
                .cmp(&Reverse(is_dirlike(&b.entry.kind)))
                .then_with(|| by_name(a, b))
        }),
        // `None` sorts before `Some` in `Option`'s order, so reversing puts sizes largest
        // first and size-less entries last.
        SortBy::Size => raws.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| by_name(a, b))),
        SortBy::Modified => raws.sort_by(|a, b| {
            b.entry
                .modified
                .cmp(&a.entry.modified)
                .then_with(|| by_name(a, b))
        }),
    }
}

fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

fn is_dirlike(kind: &EntryKind) -> bool {
    matches!(
        kind,
        EntryKind::Dir
            | EntryKind::Symlink {
                target_kind: TargetKind::Dir,
                ..
            }
    )
}

/// The listing's kind for an entry read through the held directory.
fn entry_kind(item: &HeldEntry) -> EntryKind {
    match item.kind {
        HeldKind::File => EntryKind::File,
        HeldKind::Dir => EntryKind::Dir,
        HeldKind::Symlink => {
            let (target, reached) = item.link.clone().unwrap_or_default();
            let target_kind = match reached {
                Some(HeldKind::File) => TargetKind::File,
                Some(HeldKind::Dir) => TargetKind::Dir,
                Some(_) => TargetKind::Other,
                None => TargetKind::Missing,
            };
            EntryKind::Symlink {
                target,
                target_kind,
            }
        }
        HeldKind::Fifo => EntryKind::Other(Special::Fifo),
        HeldKind::Socket => EntryKind::Other(Special::Socket),
        HeldKind::BlockDevice => EntryKind::Other(Special::BlockDevice),
        HeldKind::CharDevice => EntryKind::Other(Special::CharDevice),
        HeldKind::Unknown => EntryKind::Other(Special::Unknown),
    }
}

/// Names in `dir` that the search tools' walk would visit (hidden files allowed), or `None`
/// if the walk itself failed (then nothing is marked ignored rather than everything), and
/// the ignore files that walk did not apply.
fn not_ignored(dir: &Path) -> (Option<HashSet<OsString>>, Vec<SkippedIgnoreFile>) {
    let options = crate::walk::WalkOptions {
        hidden: true,
        no_ignore: false,
        types: None,
    };
    let mut walker = options.walker(dir, None);
    walker.max_depth(Some(1));
    let mut kept = HashSet::new();
    let mut saw_root = false;
    for item in walker.build() {
        match item {
            Ok(e) if e.depth() == 0 => saw_root = true,
            Ok(e) => {
                kept.insert(e.file_name().to_os_string());
            }
            // Errors for single entries don't invalidate the rest of the walk.
            Err(_) => {}
        }
    }
    (saw_root.then_some(kept), walker.skipped_ignore_files())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(l: &Listing) -> Vec<&str> {
        l.entries.iter().map(|e| e.name.as_str()).collect()
    }

    fn fixture() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::create_dir(p.join(".git")).unwrap(); // makes .gitignore apply
        fs::write(p.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        fs::write(p.join("b.txt"), "12345").unwrap();
        fs::write(p.join("a.rs"), "1").unwrap();
        fs::write(p.join("debug.log"), "x".repeat(100)).unwrap();
        fs::create_dir(p.join("src")).unwrap();
        fs::create_dir(p.join("build")).unwrap();
        d
    }

    #[test]
    fn name_sort_puts_directories_first_and_pages() {
        let d = fixture();
        let all = list_directory(d.path(), &ListOptions::default()).unwrap();
        assert_eq!(
            names(&all),
            vec![
                ".git",
                "build",
                "src",
                ".gitignore",
                "a.rs",
                "b.txt",
                "debug.log"
            ]
        );
        assert_eq!(all.total, 7);
        assert!(!all.truncated && all.next_offset.is_none());
        assert!(all.entries.iter().all(|e| e.path == d.path().join(&e.name)));

        let page = list_directory(
            d.path(),
            &ListOptions {
                offset: 2,
                limit: 3,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(names(&page), vec!["src", ".gitignore", "a.rs"]);
        assert_eq!(
            (page.total, page.truncated, page.next_offset),
            (7, true, Some(5))
        );
        let last = list_directory(
            d.path(),
            &ListOptions {
                offset: 5,
                limit: 3,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(names(&last), vec!["b.txt", "debug.log"]);
        assert!(!last.truncated && last.next_offset.is_none());
        let beyond = list_directory(
            d.path(),
            &ListOptions {
                offset: 50,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(beyond.entries.is_empty() && beyond.total == 7);
    }

    #[test]
    fn hidden_filter() {
        let d = fixture();
        let l = list_directory(
            d.path(),
            &ListOptions {
                hidden: false,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            names(&l),
            vec!["build", "src", "a.rs", "b.txt", "debug.log"]
        );
        assert_eq!(l.total, 5);
    }

    // Setting times through a read-only handle is a Unix facility (Windows needs write access).
    #[cfg(unix)]
    #[test]
    fn size_and_modified_sorts() {
        let d = fixture();
        let l = list_directory(
            d.path(),
            &ListOptions {
                sort: SortBy::Size,
                sizes: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            &names(&l)[..4],
            &["debug.log", ".gitignore", "b.txt", "a.rs"]
        );
        assert_eq!(l.entries[0].size, Some(100));
        assert_eq!(l.entries[4].size, None, "directories have no size");

        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        for n in [".git", ".gitignore", "a.rs", "b.txt", "build", "src"] {
            // futimens on a read-only handle works for the owner, also for directories.
            fs::File::open(d.path().join(n))
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        let l = list_directory(
            d.path(),
            &ListOptions {
                sort: SortBy::Modified,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            names(&l),
            vec![
                "debug.log",
                ".git",
                ".gitignore",
                "a.rs",
                "b.txt",
                "build",
                "src"
            ]
        );
        assert_eq!(l.entries[0].size, None, "sizes not requested");
    }

    #[test]
    fn marks_ignored_entries() {
        let d = fixture();
        let l = list_directory(d.path(), &ListOptions::default()).unwrap();
        let ignored: Vec<&str> = l
            .entries
            .iter()
            .filter(|e| e.ignored)
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(ignored, vec!["build", "debug.log"]);
    }

    #[test]
    fn nested_directory_uses_parent_gitignore() {
        let d = fixture();
        fs::write(d.path().join("src/trace.log"), "").unwrap();
        fs::write(d.path().join("src/lib.rs"), "").unwrap();
        let l = list_directory(&d.path().join("src"), &ListOptions::default()).unwrap();
        let marks: Vec<(&str, bool)> = l
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.ignored))
            .collect();
        assert_eq!(marks, vec![("lib.rs", false), ("trace.log", true)]);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_report_target_and_kind() {
        let d = fixture();
        let p = d.path();
        std::os::unix::fs::symlink("src", p.join("to_src")).unwrap();
        std::os::unix::fs::symlink("a.rs", p.join("to_a")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/x", p.join("dangling")).unwrap();
        let l = list_directory(p, &ListOptions::default()).unwrap();
        let find = |n: &str| l.entries.iter().find(|e| e.name == n).unwrap().kind.clone();
        assert_eq!(
            find("to_src"),
            EntryKind::Symlink {
                target: "src".into(),
                target_kind: TargetKind::Dir
            }
        );
        assert_eq!(
            find("to_a"),
            EntryKind::Symlink {
                target: "a.rs".into(),
                target_kind: TargetKind::File
            }
        );
        assert_eq!(
            find("dangling"),
            EntryKind::Symlink {
                target: "/nonexistent/x".into(),
                target_kind: TargetKind::Missing
            }
        );
        // A symlink to a directory sorts with the directories.
        assert_eq!(&names(&l)[..4], &[".git", "build", "src", "to_src"]);
    }

    #[test]
    fn errors_name_the_directory() {
        let d = fixture();
        let err = list_directory(&d.path().join("a.rs"), &ListOptions::default()).unwrap_err();
        assert!(err.to_string().contains("a.rs"), "{err}");
        assert!(matches!(err, ListError::NotADirectory { .. }), "{err:?}");
        let err = list_directory(&d.path().join("missing"), &ListOptions::default()).unwrap_err();
        assert!(
            matches!(&err, ListError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound),
            "{err:?}"
        );
        assert!(err.to_string().contains("missing"), "{err}");
    }

    #[test]
    fn each_case_reads_as_the_answers_say_it() {
        let path = PathBuf::from("/w/f");
        let not_a_dir = ListError::NotADirectory { path: path.clone() };
        assert_eq!(not_a_dir.to_string(), "cannot list /w/f: not a directory");
        let source = io::Error::other("disk on fire");
        let io = ListError::Io { path, source };
        assert_eq!(io.to_string(), "cannot list /w/f: disk on fire");
    }
}
