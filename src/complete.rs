//! Path completion for the `file:///{+path}` template variable and prompt path arguments.
//!
//! A value is an absolute path without its leading `/` (so `file:///` + value is the URI).
//! An empty value offers the roots; otherwise the directory part is listed (one level,
//! gitignore-aware, hidden entries only when the typed name starts with `.`) and its
//! children ranked: exact-case prefix matches, then case-insensitive prefix matches, then
//! subsequence matches. Directories end with `/`. Nothing outside the roots is offered.

use std::path::{Path, PathBuf};

/// Most values returned (the protocol's limit).
pub const MAX_VALUES: usize = 100;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub values: Vec<String>,
    pub total: usize,
    pub has_more: bool,
}

/// Completes `value` against the canonical root directories `roots`.
pub fn complete(roots: &[PathBuf], value: &str) -> Completion {
    if value.is_empty() {
        let values: Vec<String> = roots
            .iter()
            .map(|root| format!("{}/", without_slash(root)))
            .collect();
        return finish(values);
    }
    let typed = format!("/{value}");
    let (dir, partial) = match typed.rfind('/') {
        Some(at) => (&typed[..=at], &typed[at + 1..]),
        None => return Completion::default(),
    };
    let dir_path = Path::new(dir);
    // Above every root: offer the roots that start with what was typed.
    if !roots.iter().any(|root| dir_path.starts_with(root)) {
        let values: Vec<String> = roots
            .iter()
            .map(|root| format!("{}/", without_slash(root)))
            .filter(|root| root.starts_with(value))
            .collect();
        return finish(values);
    }
    let Ok(canonical) = std::fs::canonicalize(dir_path) else {
        return Completion::default();
    };
    if !roots.iter().any(|root| canonical.starts_with(root)) {
        return Completion::default();
    }
    let show_hidden = partial.starts_with('.');
    let mut children: Vec<(String, bool)> = Vec::new();
    let walk = ignore::WalkBuilder::new(&canonical)
        .max_depth(Some(1))
        .hidden(!show_hidden)
        .follow_links(false)
        .build();
    for entry in walk.flatten() {
        if entry.depth() != 1 {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir())
            || (entry.path_is_symlink() && entry.path().is_dir());
        children.push((name, is_dir));
    }
    let lower = partial.to_lowercase();
    let mut ranked: Vec<(u8, String)> = children
        .into_iter()
        .filter_map(|(name, is_dir)| {
            let rank = if name.starts_with(partial) {
                0
            } else if name.to_lowercase().starts_with(&lower) {
                1
            } else if is_subsequence(&lower, &name.to_lowercase()) {
                2
            } else {
                return None;
            };
            let mut completed = format!("{}{name}", &dir[1..]);
            if is_dir {
                completed.push('/');
            }
            Some((rank, completed))
        })
        .collect();
    ranked.sort();
    finish(ranked.into_iter().map(|(_, value)| value).collect())
}

fn without_slash(root: &Path) -> String {
    root.to_string_lossy().trim_start_matches('/').to_string()
}

fn finish(mut values: Vec<String>) -> Completion {
    let total = values.len();
    values.truncate(MAX_VALUES);
    Completion {
        has_more: total > values.len(),
        values,
        total,
    }
}

fn is_subsequence(needle: &str, haystack: &str) -> bool {
    let mut chars = haystack.chars();
    needle.chars().all(|c| chars.any(|h| h == c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_roots_children_and_ranks() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("Scripts")).unwrap();
        std::fs::write(root.join("setup.py"), "").unwrap();
        std::fs::write(root.join("lists.txt"), "").unwrap();
        std::fs::write(root.join(".env"), "").unwrap();
        let roots = vec![root.clone()];
        let base = without_slash(&root);
        let empty = complete(&roots, "");
        assert_eq!(empty.values, vec![format!("{base}/")]);
        let got = complete(&roots, &format!("{base}/s"));
        assert_eq!(
            got.values,
            vec![
                format!("{base}/setup.py"),
                format!("{base}/src/"),
                format!("{base}/Scripts/"),
                format!("{base}/lists.txt"),
            ]
        );
        assert!(
            complete(&roots, &format!("{base}/"))
                .values
                .iter()
                .all(|v| !v.contains(".env"))
        );
        assert_eq!(
            complete(&roots, &format!("{base}/.e")).values,
            vec![format!("{base}/.env")]
        );
        // Outside the roots: nothing.
        assert!(complete(&roots, "etc/pa").values.is_empty());
        let parent = without_slash(root.parent().unwrap());
        assert!(
            complete(&roots, &format!("{parent}/"))
                .values
                .iter()
                .all(|v| v.starts_with(&base))
        );
    }

    #[test]
    fn caps_at_one_hundred_with_has_more() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        for i in 0..150 {
            std::fs::write(root.join(format!("f{i:03}")), "").unwrap();
        }
        let got = complete(
            std::slice::from_ref(&root),
            &format!("{}/f", without_slash(&root)),
        );
        assert_eq!(got.values.len(), 100);
        assert_eq!(got.total, 150);
        assert!(got.has_more);
    }
}
