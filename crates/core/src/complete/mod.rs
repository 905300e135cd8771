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
//! On Windows values are Windows paths (`C:/Users/` in a URI, `C:\Users\` or `c:/users/`
//! in a prompt, drive roots and UNC shares too), roots are matched ignoring case, and a
//! child keeps the typed directory's spelling (see `complete_windows`).
//!
//! Nothing outside the roots is ever offered: the directory part is canonicalized and must
//! lie inside a root; above the roots only the roots themselves are offered.
//!
//! Speed: with a fresh [`FileIndex`] snapshot the children come from memory (no syscall
//! but the canonicalization); otherwise one gitignore-aware listing of that directory.

#[cfg(not(windows))]
use crate::platform::os::OsStrExt;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::index::FileIndex;
#[cfg(not(windows))]
use crate::roots::file_uri_from_path;
use crate::walk::WalkOptions;

/// Most values returned (the protocol's limit).
pub const MAX_VALUES: usize = 100;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub values: Vec<String>,
    /// Every candidate that matched, returned or not.
    pub total: usize,
    pub has_more: bool,
}

/// Completes `value` (a template value) against `roots` (canonical directories) by
/// listing the disk.
pub fn complete(roots: &[PathBuf], value: &str) -> Completion {
    complete_in(roots, value, Form::Uri, None)
}

/// Completes a template value, taking the children from `index` when it has a fresh
/// snapshot of the directory.
pub fn complete_with(roots: &[PathBuf], value: &str, index: Option<&FileIndex>) -> Completion {
    complete_in(roots, value, Form::Uri, index)
}

/// Completes `value` (an absolute path without its leading `/`, in `form`), taking the
/// children from `index` when it has a fresh snapshot of the directory. On Windows the
/// value is a Windows path instead (see [`complete_windows`]).
pub fn complete_in(
    roots: &[PathBuf],
    value: &str,
    form: Form,
    index: Option<&FileIndex>,
) -> Completion {
    #[cfg(windows)]
    {
        complete_windows(roots, value, form, index)
    }
    #[cfg(not(windows))]
    {
        complete_unix(roots, value, form, index)
    }
}

#[cfg(not(windows))]
fn complete_unix(
    roots: &[PathBuf],
    value: &str,
    form: Form,
    index: Option<&FileIndex>,
) -> Completion {
    let root_values = || {
        roots
            .iter()
            .filter_map(move |root| as_value(root, true, form).map(|v| (root, v)))
    };
    if value.is_empty() {
        return finish(root_values().map(|(_, v)| (0, v)).collect());
    }
    let mut typed = vec![b'/'];
    match form {
        Form::Uri => typed.extend(percent_encoding::percent_decode_str(value)),
        Form::Plain => typed.extend_from_slice(value.as_bytes()),
    }
    let at = typed
        .iter()
        .rposition(|&b| b == b'/')
        .expect("starts with '/'");
    let (dir, partial) = (&typed[..=at], &typed[at + 1..]);
    let dir_path = Path::new(OsStr::from_bytes(dir));
    if !roots.iter().any(|root| dir_path.starts_with(root)) {
        // Above (or beside) every root: offer the roots the value leads to.
        let under: Vec<(u8, String)> = root_values()
            .filter(|(root, _)| root.as_os_str().as_bytes().starts_with(&typed))
            .map(|(_, v)| (0, v))
            .collect();
        return finish(under);
    }
    let Ok(canonical) = crate::roots::canonicalize(dir_path) else {
        return Completion::default();
    };
    if !roots
        .iter()
        .any(|root| crate::roots::within(&canonical, root))
    {
        return Completion::default();
    }
    let partial = String::from_utf8_lossy(partial);
    let mut ranked: Vec<(u8, String)> = Vec::new();
    children(&canonical, &partial, index, |rank, name, is_dir| {
        if let Some(value) = as_value(&dir_path.join(name), is_dir, form) {
            ranked.push((rank, value));
        }
    });
    finish(ranked)
}

/// Windows: values are Windows paths. In the `Plain` form they are taken and returned as
/// typed (`C:\Us`, `c:/users/`, `\\srv\share\`), children keeping the typed directory's
/// spelling and separator; in the `Uri` form a value is what follows `file:///` (`C:/Users/`,
/// `/srv/share/` for `file:////srv/share/`), percent-encoded like resource URIs. Prefixes
/// of roots and names match ignoring case, as NTFS does.
#[cfg(windows)]
fn complete_windows(
    roots: &[PathBuf],
    value: &str,
    form: Form,
    index: Option<&FileIndex>,
) -> Completion {
    let root_texts: Vec<String> = roots
        .iter()
        .filter_map(|root| root.to_str().map(crate::platform::winpath::display))
        .collect();
    let root_values = |typed: &str| {
        let values = root_texts
            .iter()
            .filter(|root| win::leads_to(root, typed))
            .map(|root| (0, win::root_value(root, form)))
            .collect();
        finish(values)
    };
    let typed = win::typed(value, form);
    let Some((dir, partial)) = win::split(&typed) else {
        return root_values(&typed);
    };
    if !root_texts
        .iter()
        .any(|root| crate::platform::winpath::starts_with(dir, root))
    {
        return root_values(&typed);
    }
    let Ok(canonical) = crate::roots::canonicalize(Path::new(dir)) else {
        return Completion::default();
    };
    if !roots
        .iter()
        .any(|root| crate::roots::within(&canonical, root))
    {
        return Completion::default();
    }
    let mut ranked: Vec<(u8, String)> = Vec::new();
    children(&canonical, partial, index, |rank, name, is_dir| {
        if let Some(name) = name.to_str() {
            ranked.push((rank, win::child_value(dir, name, is_dir, form)));
        }
    });
    finish(ranked)
}

/// The children of the canonical directory `dir` whose names match `partial`, with their
/// rank: from `index` when it has a fresh snapshot of the directory, else one
/// gitignore-aware listing (hidden entries only when `partial` starts with `.`; symlinks
/// are never offered).
fn children(
    dir: &Path,
    partial: &str,
    index: Option<&FileIndex>,
    mut offer: impl FnMut(u8, &OsStr, bool),
) {
    let show_hidden = partial.starts_with('.');
    let matcher = Ranker::new(partial);
    let mut consider = |name: &OsStr, is_dir: bool| {
        if let Some(rank) = matcher.rank(&name.to_string_lossy()) {
            offer(rank, name, is_dir);
        }
    };
    let from_index = (!show_hidden)
        .then_some(index)
        .flatten()
        .and_then(|index| index.snapshot_for(dir))
        .and_then(|snapshot| {
            let rel = dir.strip_prefix(snapshot.root()).ok()?;
            let found = snapshot.find_dir(rel)?;
            for child in snapshot.children(found) {
                consider(child.name, child.is_dir);
            }
            Some(())
        });
    if from_index.is_none() {
        let options = WalkOptions {
            hidden: show_hidden,
            no_ignore: false,
            types: None,
        };
        let mut walker = options.walker(dir, None);
        walker.max_depth(Some(1));
        for entry in walker.build().flatten() {
            let kind = entry.file_type();
            if entry.depth() != 1 || kind.is_none_or(|k| k.is_symlink()) {
                continue;
            }
            consider(entry.file_name(), kind.is_some_and(|k| k.is_dir()));
        }
    }
}

/// Windows value text, as pure functions (tested on every platform).
mod form;
#[cfg_attr(not(windows), allow(dead_code))]
mod win;

pub use form::Form;

/// An absolute path as a value: without its leading `/`, directories with a trailing `/`;
/// in the `Uri` form percent-encoded like a resource URI. `None` in the `Plain` form for a
/// path that is not valid UTF-8.
#[cfg(not(windows))]
fn as_value(path: &Path, is_dir: bool, form: Form) -> Option<String> {
    let mut value = match form {
        Form::Uri => file_uri_from_path(path)["file://".len()..].to_string(),
        Form::Plain => path.to_str()?.to_string(),
    };
    value.remove(0);
    if is_dir && !value.is_empty() {
        value.push('/');
    }
    Some(value)
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

#[cfg(all(test, unix))]
mod tests;

/// Windows value text, checked on every platform.
#[cfg(test)]
mod win_tests;
