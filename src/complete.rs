//! Path completion for the `file:///{+path}` template variable (and prompt arguments that
//! take a path): given the canonical root directories and a partial value, the values that
//! could come next.
//!
//! A value is an absolute path without its leading `/`, so `file:///` + value is the URI.
//! An empty value offers the roots. Otherwise the directory part of the value is listed one
//! level deep, gitignore-aware like the search walk (hidden entries only when the typed
//! name starts with `.`; symlinks are not offered, as the search never follows them), and
//! its children are ranked: exact-case prefix matches, then case-insensitive prefix
//! matches, then case-insensitive subsequence matches; within a rank, by value.
//! Directories end with `/`. At most [`MAX_VALUES`] values, with the total and `has_more`.
//!
//! Nothing outside the roots is ever offered: the directory part is canonicalized and must
//! lie inside a root; above the roots only the roots themselves are offered.
//!
//! Speed: with a fresh [`FileIndex`] snapshot the children come from memory (no syscall
//! but the canonicalization); otherwise one gitignore-aware listing of that directory.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::index::FileIndex;
use crate::search::walk::WalkOptions;

/// Most values returned (the protocol's limit).
pub const MAX_VALUES: usize = 100;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub values: Vec<String>,
    /// Every candidate that matched, returned or not.
    pub total: usize,
    pub has_more: bool,
}

/// Completes `value` against `roots` (canonical directories) by listing the disk.
pub fn complete(roots: &[PathBuf], value: &str) -> Completion {
    complete_with(roots, value, None)
}

/// Completes `value`, taking the children from `index` when it has a fresh snapshot of
/// the directory.
pub fn complete_with(roots: &[PathBuf], value: &str, index: Option<&FileIndex>) -> Completion {
    let root_values = || roots.iter().map(|root| format!("{}/", as_value(root)));
    if value.is_empty() {
        return finish(root_values().map(|v| (0, v)).collect());
    }
    let typed = format!("/{value}");
    let at = typed.rfind('/').expect("starts with '/'");
    let (dir, partial) = (&typed[..=at], &typed[at + 1..]);
    let dir_path = Path::new(dir);
    if !roots.iter().any(|root| dir_path.starts_with(root)) {
        // Above (or beside) every root: offer the roots the value leads to.
        let under: Vec<(u8, String)> = root_values()
            .filter(|root| root.starts_with(value))
            .map(|v| (0, v))
            .collect();
        return finish(under);
    }
    let Ok(canonical) = std::fs::canonicalize(dir_path) else {
        return Completion::default();
    };
    if !roots.iter().any(|root| canonical.starts_with(root)) {
        return Completion::default();
    }
    let show_hidden = partial.starts_with('.');
    let matcher = Ranker::new(partial);
    let prefix = &dir[1..];
    let mut ranked: Vec<(u8, String)> = Vec::new();
    let mut offer = |name: &OsStr, is_dir: bool| {
        let name = name.to_string_lossy();
        if let Some(rank) = matcher.rank(&name) {
            let slash = if is_dir { "/" } else { "" };
            ranked.push((rank, format!("{prefix}{name}{slash}")));
        }
    };
    let from_index = (!show_hidden)
        .then_some(index)
        .flatten()
        .and_then(|index| index.snapshot_for(&canonical))
        .and_then(|snapshot| {
            let rel = canonical.strip_prefix(snapshot.root()).ok()?;
            let dir = snapshot.find_dir(rel)?;
            for child in snapshot.children(dir) {
                offer(child.name, child.is_dir);
            }
            Some(())
        });
    if from_index.is_none() {
        let options = WalkOptions {
            hidden: show_hidden,
            no_ignore: false,
            types: None,
        };
        let mut walker = options.walker(&canonical, None);
        walker.max_depth(Some(1));
        for entry in walker.build().flatten() {
            let kind = entry.file_type();
            if entry.depth() != 1 || kind.is_none_or(|k| k.is_symlink()) {
                continue;
            }
            offer(entry.file_name(), kind.is_some_and(|k| k.is_dir()));
        }
    }
    finish(ranked)
}

/// A root as a value: its path without the leading `/`.
fn as_value(root: &Path) -> String {
    root.to_string_lossy().trim_start_matches('/').to_owned()
}

/// Ranks names against the typed part: 0 prefix, 1 case-insensitive prefix,
/// 2 case-insensitive subsequence, `None` no match.
struct Ranker<'a> {
    typed: &'a str,
    lower: String,
}

impl<'a> Ranker<'a> {
    fn new(typed: &'a str) -> Self {
        Ranker {
            typed,
            lower: typed.to_lowercase(),
        }
    }

    fn rank(&self, name: &str) -> Option<u8> {
        if name.starts_with(self.typed) {
            return Some(0);
        }
        let lower = name.to_lowercase();
        if lower.starts_with(&self.lower) {
            Some(1)
        } else if is_subsequence(&self.lower, &lower) {
            Some(2)
        } else {
            None
        }
    }
}

fn is_subsequence(needle: &str, haystack: &str) -> bool {
    let mut rest = haystack.chars();
    needle.chars().all(|c| rest.any(|h| h == c))
}

/// Keeps the best [`MAX_VALUES`] by (rank, value) without sorting everything.
fn finish(mut ranked: Vec<(u8, String)>) -> Completion {
    let total = ranked.len();
    if ranked.len() > MAX_VALUES {
        ranked.select_nth_unstable(MAX_VALUES - 1);
        ranked.truncate(MAX_VALUES);
    }
    ranked.sort_unstable();
    Completion {
        values: ranked.into_iter().map(|(_, value)| value).collect(),
        total,
        has_more: total > MAX_VALUES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::{RootStatus, WatchEvent};
    use std::fs;
    use std::time::Duration;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new()
            .prefix("rootgrep-complete")
            .tempdir()
            .unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    fn indexed(root: &Path) -> FileIndex {
        let index = FileIndex::new();
        index.set_roots(&[root.to_path_buf()]);
        index.apply(&WatchEvent::Status(
            root.to_path_buf(),
            RootStatus::Watching,
        ));
        assert!(index.wait_fresh(root, Duration::from_secs(5)).is_some());
        index
    }

    /// Both ways (disk listing and index) must give the same answer.
    fn both(roots: &[PathBuf], index: &FileIndex, value: &str) -> Completion {
        let listed = complete(roots, value);
        let from_index = complete_with(roots, value, Some(index));
        assert_eq!(listed, from_index, "disk and index disagree for {value:?}");
        listed
    }

    #[test]
    fn roots_then_ranked_children() {
        let (_tmp, root) = root();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::create_dir_all(root.join("Scripts")).unwrap();
        fs::write(root.join("setup.py"), "").unwrap();
        fs::write(root.join("lists.txt"), "").unwrap();
        fs::write(root.join(".env"), "").unwrap();
        let roots = vec![root.clone()];
        let index = indexed(&root);
        let base = as_value(&root);
        assert_eq!(both(&roots, &index, "").values, [format!("{base}/")]);
        assert_eq!(
            both(&roots, &index, &format!("{base}/s")).values,
            [
                format!("{base}/setup.py"),
                format!("{base}/src/"),
                format!("{base}/Scripts/"),
                format!("{base}/lists.txt"),
            ]
        );
        assert!(
            both(&roots, &index, &format!("{base}/"))
                .values
                .iter()
                .all(|v| !v.contains(".env"))
        );
        assert_eq!(
            both(&roots, &index, &format!("{base}/.e")).values,
            [format!("{base}/.env")],
            "a leading dot shows hidden entries"
        );
    }

    #[test]
    fn never_offers_anything_outside_the_roots() {
        let (_tmp, root) = root();
        let (_other_tmp, outside) = self::root();
        fs::write(outside.join("secret"), "").unwrap();
        fs::create_dir_all(root.join("in")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("in/out")).unwrap();
        let roots = vec![root.clone()];
        let index = indexed(&root);
        assert!(both(&roots, &index, "etc/pa").values.is_empty());
        let parent = as_value(root.parent().unwrap());
        let above = both(&roots, &index, &format!("{parent}/"));
        assert_eq!(above.values, [format!("{}/", as_value(&root))]);
        let base = as_value(&root);
        assert!(
            both(&roots, &index, &format!("{base}/in/out/"))
                .values
                .is_empty()
        );
        assert!(
            both(&roots, &index, &format!("{base}/in/../../"))
                .values
                .is_empty()
        );
        assert!(
            both(&roots, &index, &format!("{base}/in/"))
                .values
                .is_empty(),
            "symlinks are not offered"
        );
    }

    #[test]
    fn gitignored_entries_are_not_offered() {
        let (_tmp, root) = root();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        fs::create_dir_all(root.join("target")).unwrap();
        fs::create_dir_all(root.join("tests")).unwrap();
        fs::write(root.join("t.log"), "").unwrap();
        fs::write(root.join("todo.md"), "").unwrap();
        let roots = vec![root.clone()];
        let index = indexed(&root);
        let base = as_value(&root);
        assert_eq!(
            both(&roots, &index, &format!("{base}/t")).values,
            [format!("{base}/tests/"), format!("{base}/todo.md")]
        );
    }

    #[test]
    fn caps_at_one_hundred_with_total_and_has_more() {
        let (_tmp, root) = root();
        for i in 0..150 {
            fs::write(root.join(format!("f{i:03}")), "").unwrap();
        }
        let roots = vec![root.clone()];
        let index = indexed(&root);
        let got = both(&roots, &index, &format!("{}/f", as_value(&root)));
        assert_eq!(got.values.len(), 100);
        assert_eq!(got.values[0], format!("{}/f000", as_value(&root)));
        assert_eq!(got.values[99], format!("{}/f099", as_value(&root)));
        assert_eq!(got.total, 150);
        assert!(got.has_more);
    }
}
