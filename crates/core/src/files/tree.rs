//! Bounded, gitignore-aware directory trees (the `directory_tree` tool's domain code): the
//! walk, the compact rendering, and an honest account of what was left out and where.
//!
//! API: [`directory_tree`]`(root, &TreeOptions) -> Result<Tree, ListError>` (or
//! [`directory_tree_with`]: entries read counted for progress, a stop flag for
//! cancellation). The [`Tree`] says what was cut ([`LimitCut`], [`DepthCut`]s, unreadable
//! entries, ignore files not applied); how to see the rest is for the caller to word, and
//! so is the note after a directory not expanded ([`TreeOptions::depth_mark`]).
//!
//! Rendering: the first line is the root's absolute path ending in `/`; below it one line per
//! entry, indented two spaces per level, directories ending in `/`, symlinks as
//! `name -> target` (never followed). Order is the walk's: by file name (raw bytes) within
//! each directory, directories and files interleaved (sorting directories first would need a
//! `stat` per entry inside the walker's comparator).
//!
//! Filtering matches the search tools (their walker, [`crate::walk::WalkOptions::walker`]):
//! .gitignore (inside git repos), .ignore, .git/info/exclude and global excludes unless
//! `no_ignore`; hidden entries only with `hidden`; ignore files not applied (not regular
//! files, too large) are named in the footer. The `.git` directory itself is never shown: with `hidden` it would
//! spend the entry budget on object files.
//!
//! Cuts, all reported in [`Tree`] and marked in the text:
//! - depth: a directory at `max_depth` is shown but not expanded; its line says how many
//!   direct children it holds, in the caller's words: `deep/ … 12 entries not shown`. The
//!   count uses the same ignore/hidden rules as the tree (a one-level walk of that
//!   directory), is capped at [`DEPTH_COUNT_CAP`] per directory (shown as `1000+`), and is
//!   skipped once [`DEPTH_COUNT_BUDGET`] entries have been counted in one call (the line
//!   then just ends in `…`). Directories with nothing to show get no mark.
//! - entries: the walk stops after `limit` entries, or when the text would exceed
//!   `max_bytes`; the remaining entries are counted by walking at most
//!   [`MORE_COUNT_BUDGET`] further (exact below that, "at least" above), and [`LimitCut`] names
//!   the last entry shown, so the caller knows where the tree was cut.
//!
//! Cost: the walk is lazy and depth-limited, so work is proportional to what is shown plus
//! those bounded counts — a 200k-file tree costs about as much as a 500-entry one.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::list::ListError;
use crate::ignores::SkippedIgnoreFile;

/// Most direct children counted for one depth-cut directory.
pub(crate) const DEPTH_COUNT_CAP: usize = 1000;
/// Most directory entries read, in total, to count depth-cut directories.
pub(crate) const DEPTH_COUNT_BUDGET: usize = 20_000;
/// Most entries walked after the limit to say how many were not shown.
pub(crate) const MORE_COUNT_BUDGET: usize = 5_000;

// Not `PartialEq`: `depth_mark` is a function, and function addresses do not compare.
#[derive(Debug, Clone)]
pub struct TreeOptions {
    /// Levels below the root to show (1 = the root's children only; 0 = just the root).
    pub max_depth: usize,
    /// Most entries shown (the root line not included); 0 = no entry limit.
    pub limit: usize,
    /// Most bytes of rendered text (footer not included); 0 = no byte limit. Lets the domain
    /// honour the output budget exactly instead of the adapter cutting mid-line.
    pub max_bytes: usize,
    pub hidden: bool,
    pub no_ignore: bool,
    /// The note after a directory not expanded that holds `Count` entries, given
    /// `max_depth` (` … 12 entries not shown` by default): the caller's words, since they
    /// may name what to change to see them, and needed during the walk, since the note
    /// counts towards `max_bytes`.
    pub depth_mark: fn(Count, usize) -> String,
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions {
            max_depth: 3,
            limit: 500,
            max_bytes: 64 * 1024,
            hidden: false,
            no_ignore: false,
            depth_mark: plain_depth_mark,
        }
    }
}

/// The default [`TreeOptions::depth_mark`].
fn plain_depth_mark(entries: Count, _max_depth: usize) -> String {
    format!(" … {entries} entries not shown")
}

/// A count that may have stopped at a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    pub n: usize,
    /// False when counting stopped at a cap: the real number is at least `n`.
    pub exact: bool,
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.n, if self.exact { "" } else { "+" })
    }
}

/// A directory shown but not expanded because it sits at `max_depth`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepthCut {
    pub path: PathBuf,
    /// Direct children (see module docs); `None` when not counted (budget spent, unreadable).
    pub entries: Option<Count>,
}

/// Why the walk stopped before the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// `limit` entries shown.
    Limit,
    /// The next line would have exceeded `max_bytes`.
    Bytes,
}

/// The cut made by `limit` / `max_bytes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitCut {
    pub reason: StopReason,
    /// Entries not shown (within `max_depth`).
    pub more: Count,
    /// The last entry shown; the tree continues after it.
    pub after: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub root: PathBuf,
    /// Root line plus one line per shown entry, each ending in `\n`.
    pub text: String,
    pub shown: usize,
    pub dirs_shown: usize,
    pub max_depth: usize,
    /// Directories not expanded because of `max_depth`, in display order.
    pub depth_cuts: Vec<DepthCut>,
    /// Set when entries were left out because of `limit` / `max_bytes`.
    pub limit_cut: Option<LimitCut>,
    /// Directories or entries that could not be read (skipped, never fatal).
    pub errors: usize,
    /// Ignore files not applied (not regular files, too large), sorted, each once.
    pub skipped_ignore_files: Vec<SkippedIgnoreFile>,
}

impl Tree {
    /// A tree of `root` with nothing shown yet.
    fn empty(root: &Path, max_depth: usize) -> Tree {
        Tree {
            root: root.to_path_buf(),
            text: String::new(),
            shown: 0,
            dirs_shown: 0,
            max_depth,
            depth_cuts: Vec::new(),
            limit_cut: None,
            errors: 0,
            skipped_ignore_files: Vec::new(),
        }
    }
}

/// Walk `root` (a directory) and render it within the limits of `opts`.
pub fn directory_tree(root: &Path, opts: &TreeOptions) -> Result<Tree, ListError> {
    directory_tree_with(root, opts, &AtomicU64::new(0), &AtomicBool::new(false))
}

/// [`directory_tree`], counting every entry read in `seen` (the tree's walk and its
/// counts; for progress reports from another thread) and stopping early, with what it has
/// so far, once `stop` is set (the request was cancelled: nobody reads the result).
pub fn directory_tree_with(
    root: &Path,
    opts: &TreeOptions,
    seen: &AtomicU64,
    stop: &AtomicBool,
) -> Result<Tree, ListError> {
    must_be_a_directory(root)?;
    let mut builder = walker(root, opts, opts.max_depth);
    builder.sort_by_file_name(|a, b| a.cmp(b));

    let mut tree = Tree::empty(root, opts.max_depth);
    let mut count_budget = DEPTH_COUNT_BUDGET;
    let mut skipped = Vec::new();
    let mut last_shown: Option<PathBuf> = None;
    let mut walk = builder.build();

    for item in walk.by_ref() {
        seen.fetch_add(1, Ordering::Relaxed);
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let Ok(entry) = item else {
            tree.errors += 1;
            continue;
        };
        let depth = entry.depth();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let mut line = entry_line(root, &entry);
        let depth_cut = is_dir && depth == opts.max_depth;
        let mut count = None;
        if depth_cut {
            count = count_children(entry.path(), opts, &mut count_budget, &mut skipped, seen);
            match count {
                Some(c) if c.n > 0 => line.push_str(&(opts.depth_mark)(c, opts.max_depth)),
                Some(_) => {}
                None => line.push_str(" …"),
            }
        }
        line.push('\n');

        if depth > 0 {
            if let Some(reason) = stop_reason(&tree, opts, &line) {
                tree.limit_cut = Some(LimitCut {
                    reason,
                    more: count_rest(&mut walk, seen, stop),
                    after: last_shown,
                });
                break;
            }
            tree.shown += 1;
            tree.dirs_shown += usize::from(is_dir);
            last_shown = Some(entry.path().to_path_buf());
        }
        if depth_cut && (count.is_none() || count.is_some_and(|c| c.n > 0)) {
            tree.depth_cuts.push(DepthCut {
                path: entry.path().to_path_buf(),
                entries: count,
            });
        }
        tree.text.push_str(&line);
    }
    drop(walk);
    skipped.extend(builder.skipped_ignore_files());
    skipped.sort();
    skipped.dedup();
    tree.skipped_ignore_files = skipped;
    Ok(tree)
}

/// Refuses a root that is not a directory (or cannot be looked at), naming it.
fn must_be_a_directory(root: &Path) -> Result<(), ListError> {
    let meta = fs::metadata(root).map_err(|source| ListError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(ListError::NotADirectory {
            path: root.to_path_buf(),
        });
    }
    Ok(())
}

/// An entry's line, without its end or a depth mark: the root as its path ending in `/`;
/// below it, the name indented two spaces per level, directories ending in `/`, symlinks
/// as `name -> target`.
fn entry_line(root: &Path, entry: &ignore::DirEntry) -> String {
    let depth = entry.depth();
    let ft = entry.file_type();
    let mut line = String::new();
    if depth == 0 {
        let shown = crate::roots::path_display(root);
        line.push_str(&shown);
        if !shown.ends_with('/') {
            line.push('/');
        }
        return line;
    }
    line.push_str(&"  ".repeat(depth));
    line.push_str(&crate::roots::name_text(entry.file_name(), entry.path()));
    if ft.is_some_and(|t| t.is_dir()) {
        line.push('/');
    } else if ft.is_some_and(|t| t.is_symlink())
        && let Ok(target) = fs::read_link(entry.path())
    {
        line.push_str(" -> ");
        // Escaped like every path of a text (a newline in it could forge lines).
        line.push_str(&crate::quote::escape_for_display(&target.to_string_lossy()));
    }
    line
}

/// Why `line` may not be shown: `limit` entries are, or it would take the text past
/// `max_bytes`.
fn stop_reason(tree: &Tree, opts: &TreeOptions, line: &str) -> Option<StopReason> {
    if opts.limit != 0 && tree.shown >= opts.limit {
        Some(StopReason::Limit)
    } else if opts.max_bytes != 0 && tree.text.len() + line.len() > opts.max_bytes {
        Some(StopReason::Bytes)
    } else {
        None
    }
}

/// The entries not shown once the walk stopped, the one that did not fit included:
/// counted by walking on, at most [`MORE_COUNT_BUDGET`] (then, or when stopped, inexact).
fn count_rest(walk: &mut ignore::Walk, seen: &AtomicU64, stop: &AtomicBool) -> Count {
    let mut more = 1;
    for item in walk.by_ref() {
        seen.fetch_add(1, Ordering::Relaxed);
        if more >= MORE_COUNT_BUDGET || stop.load(Ordering::Relaxed) {
            return Count {
                n: more,
                exact: false,
            };
        }
        if item.is_ok() {
            more += 1;
        }
    }
    Count {
        n: more,
        exact: true,
    }
}

/// The walk configuration shared by the tree and the depth-cut counts, so both apply the
/// same ignore and hidden rules: the search tools' walker.
fn walker(dir: &Path, opts: &TreeOptions, max_depth: usize) -> crate::walk::Walker {
    let options = crate::walk::WalkOptions {
        hidden: opts.hidden,
        no_ignore: opts.no_ignore,
        types: None,
    };
    let mut walker = options.walker(dir, None);
    walker.max_depth(Some(max_depth));
    walker.also_filter(|e| {
        // The walk reads directories by path; an entry must also exist in its real,
        // symlink-free parent, so a directory swapped for a symlink mid-walk cannot
        // show another directory's entries.
        !(e.depth() > 0 && e.file_name() == ".git")
            && (e.depth() == 0 || !super::safe::still_inside([e.path()]).is_empty())
    });
    walker
}

/// Count the direct children of `dir` that the tree would show, at most
/// [`DEPTH_COUNT_CAP`], spending `budget` (one unit per entry read). Unsorted, so the walker
/// reads the directory lazily and stops at the cap. `None` when the budget is spent or the
/// directory cannot be read.
fn count_children(
    dir: &Path,
    opts: &TreeOptions,
    budget: &mut usize,
    skipped: &mut Vec<SkippedIgnoreFile>,
    seen: &AtomicU64,
) -> Option<Count> {
    if *budget == 0 {
        return None;
    }
    let mut n = 0;
    let walker = walker(dir, opts, 1);
    // Whatever the count's outcome, what its walk did not apply is reported.
    let noted = Noted(&walker, skipped);
    for item in noted.0.build() {
        seen.fetch_add(1, Ordering::Relaxed);
        match item {
            Ok(e) if e.depth() == 0 => {}
            Ok(_) => {
                if *budget == 0 || n == DEPTH_COUNT_CAP {
                    return Some(Count { n, exact: false });
                }
                *budget -= 1;
                n += 1;
            }
            // The directory itself is unreadable: no count rather than a wrong one.
            Err(_) if n == 0 => return None,
            Err(_) => {}
        }
    }
    Some(Count { n, exact: true })
}

/// Adds a walker's skipped ignore files to a list when dropped (on every return path).
struct Noted<'a>(&'a crate::walk::Walker, &'a mut Vec<SkippedIgnoreFile>);

impl Drop for Noted<'_> {
    fn drop(&mut self) {
        self.1.extend(self.0.skipped_ignore_files());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(p, "").unwrap();
    }

    fn body(t: &Tree) -> String {
        // Text without the (temp-dir dependent) root line.
        t.text.split_once('\n').unwrap().1.to_string()
    }

    fn fixture() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::create_dir(p.join(".git")).unwrap();
        fs::write(p.join(".gitignore"), "target/\n*.tmp\n").unwrap();
        for f in [
            "Cargo.toml",
            "src/main.rs",
            "src/a/b/c/deep1.rs",
            "src/a/b/c/deep2.rs",
            "src/a/b/file.rs",
            "src/a/mod.rs",
            "target/debug/out",
            "notes.tmp",
            ".hidden/x",
        ] {
            touch(&p.join(f));
        }
        d
    }

    #[test]
    fn renders_compact_gitignore_aware_tree_with_depth_cut() {
        let d = fixture();
        let t = directory_tree(d.path(), &TreeOptions::default()).unwrap();
        let root_line = format!("{}/\n", d.path().display());
        assert!(t.text.starts_with(&root_line), "{}", t.text);
        assert_eq!(
            body(&t),
            "  Cargo.toml\n  src/\n    a/\n      b/ … 2 entries not shown\n      mod.rs\n    main.rs\n"
        );
        assert_eq!((t.shown, t.dirs_shown), (6, 3));
        assert_eq!(
            t.depth_cuts,
            vec![DepthCut {
                path: d.path().join("src/a/b"),
                entries: Some(Count { n: 2, exact: true })
            }]
        );
        assert!(t.limit_cut.is_none());
        assert_eq!((t.max_depth, t.errors), (3, 0));
    }

    #[test]
    fn the_depth_mark_is_the_callers() {
        let d = fixture();
        let opts = TreeOptions {
            max_depth: 2,
            depth_mark: |entries, depth| format!(" [{entries} below depth {depth}]"),
            ..Default::default()
        };
        let t = directory_tree(d.path(), &opts).unwrap();
        assert_eq!(
            body(&t),
            "  Cargo.toml\n  src/\n    a/ [2 below depth 2]\n    main.rs\n"
        );
    }

    #[test]
    fn hidden_and_no_ignore() {
        let d = fixture();
        let opts = TreeOptions {
            max_depth: 1,
            hidden: true,
            no_ignore: true,
            ..Default::default()
        };
        let t = directory_tree(d.path(), &opts).unwrap();
        // .git never shown; hidden and ignored entries are.
        assert_eq!(
            body(&t),
            "  .gitignore\n  .hidden/ … 1 entries not shown\n  Cargo.toml\n  notes.tmp\n  src/ … 2 entries not shown\n  target/ … 1 entries not shown\n"
        );
    }

    #[test]
    fn entry_limit_cut_is_reported_with_position() {
        let d = fixture();
        let t = directory_tree(
            d.path(),
            &TreeOptions {
                limit: 3,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(body(&t), "  Cargo.toml\n  src/\n    a/\n");
        assert_eq!(t.shown, 3);
        let cut = t.limit_cut.clone().unwrap();
        assert_eq!(cut.reason, StopReason::Limit);
        assert_eq!(cut.more, Count { n: 3, exact: true }); // b/, mod.rs, main.rs
        assert_eq!(cut.after, Some(d.path().join("src/a")));
    }

    #[test]
    fn byte_limit_cuts_on_a_line_boundary() {
        let d = fixture();
        let root_len = d.path().display().to_string().len() + 2;
        let opts = TreeOptions {
            max_bytes: root_len + "  Cargo.toml\n".len() + 3,
            ..Default::default()
        };
        let t = directory_tree(d.path(), &opts).unwrap();
        assert_eq!(body(&t), "  Cargo.toml\n");
        assert_eq!(t.limit_cut.unwrap().reason, StopReason::Bytes);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_shown_not_followed() {
        let d = tempfile::tempdir().unwrap();
        touch(&d.path().join("real/inner.txt"));
        std::os::unix::fs::symlink("real", d.path().join("link")).unwrap();
        let t = directory_tree(d.path(), &TreeOptions::default()).unwrap();
        assert_eq!(body(&t), "  link -> real\n  real/\n    inner.txt\n");
    }

    #[test]
    fn max_depth_zero_shows_root_count() {
        let d = fixture();
        let t = directory_tree(
            d.path(),
            &TreeOptions {
                max_depth: 0,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(t.text.ends_with("/ … 2 entries not shown\n"), "{}", t.text);
        assert_eq!(t.shown, 0);
    }

    #[test]
    fn five_thousand_files_stay_under_the_limit() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..50 {
            let dir = d.path().join(format!("d{i:02}"));
            fs::create_dir(&dir).unwrap();
            for j in 0..100 {
                fs::write(dir.join(format!("f{j:03}.txt")), "").unwrap();
            }
        }
        let t = directory_tree(d.path(), &TreeOptions::default()).unwrap();
        assert_eq!(t.shown, 500);
        assert_eq!(t.text.lines().count(), 501);
        assert!(t.text.len() < 16 * 1024, "{} bytes", t.text.len());
        let cut = t.limit_cut.unwrap();
        assert_eq!(
            cut.more,
            Count {
                n: 5050 - 500,
                exact: true
            }
        );
        assert_eq!(cut.after, Some(d.path().join("d04/f094.txt")));

        // A tighter depth shows every directory and counts the files instead.
        let t = directory_tree(
            d.path(),
            &TreeOptions {
                max_depth: 1,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(t.shown, 50);
        assert_eq!(t.depth_cuts.len(), 50);
        assert!(t.depth_cuts.iter().all(|c| c.entries
            == Some(Count {
                n: 100,
                exact: true
            })));
    }

    #[test]
    fn not_a_directory() {
        let d = fixture();
        let err =
            directory_tree(&d.path().join("Cargo.toml"), &TreeOptions::default()).unwrap_err();
        assert!(matches!(err, ListError::NotADirectory { .. }), "{err:?}");
    }
}
