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
use crate::files::os::OsStrExt;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::index::FileIndex;
#[cfg(not(windows))]
use crate::roots::file_uri_from_path;
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

/// How values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Values of the `file:///{+path}` variable: percent-encoded exactly as the resource
    /// URIs are ([`crate::roots::file_uri_from_path`]), so `file:///` + value is the URI of
    /// the very bytes listed (`%`, `?`, `#`, spaces, newlines and bytes that are not UTF-8
    /// included). The typed value is percent-decoded the same way.
    Uri,
    /// Plain paths, as typed by people in prompt arguments: taken and returned as they are.
    /// Names that are not valid UTF-8 cannot be written in such a value and are skipped
    /// (they remain reachable through the `Uri` form and `file://` URIs).
    Plain,
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
        .filter_map(|root| root.to_str().map(crate::files::winpath::display))
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
        .any(|root| crate::files::winpath::starts_with(dir, root))
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
#[cfg_attr(not(windows), allow(dead_code))]
mod win {
    use super::Form;
    use crate::files::winpath;

    /// The typed value as a Windows path: the `Uri` form percent-decoded, `/srv/share`
    /// (from `file:////srv/share`) back to `//srv/share`, a `/` before a drive dropped
    /// (`/C:/x`, as in the URI's path).
    pub fn typed(value: &str, form: Form) -> String {
        match form {
            Form::Plain => value.to_string(),
            Form::Uri => {
                let decoded = percent_encoding::percent_decode_str(value)
                    .decode_utf8_lossy()
                    .into_owned();
                match decoded.strip_prefix('/') {
                    Some(rest) if winpath::has_drive(rest) => rest.to_string(),
                    Some(rest) if !rest.starts_with('/') => format!("//{rest}"),
                    _ => decoded,
                }
            }
        }
    }

    /// The directory typed (up to and with its last separator) and the partial name after
    /// it; `None` when no separator was typed yet (`C:`, `c`).
    pub fn split(typed: &str) -> Option<(&str, &str)> {
        let at = typed.rfind(['/', '\\'])?;
        Some((&typed[..=at], &typed[at + 1..]))
    }

    /// Whether the root (ordinary form) is what the typed text leads to: a prefix of it,
    /// ignoring case and separator style.
    pub fn leads_to(root: &str, typed: &str) -> bool {
        let root = winpath::fold(&winpath::unified(root));
        let mut root = root;
        if !root.ends_with('\\') {
            root.push('\\');
        }
        root.starts_with(&winpath::fold(&winpath::unified(typed)))
    }

    /// A root (ordinary form) as a value, with a trailing separator.
    pub fn root_value(root: &str, form: Form) -> String {
        match form {
            Form::Plain if root.ends_with('\\') => root.to_string(),
            Form::Plain => format!("{root}\\"),
            Form::Uri => dir_suffix(uri_value(root)),
        }
    }

    /// `name` in the typed directory `dir` as a value: the directory's spelling and
    /// separator kept (clients match values against what was typed).
    pub fn child_value(dir: &str, name: &str, is_dir: bool, form: Form) -> String {
        let joined = format!("{dir}{name}");
        match form {
            Form::Plain if is_dir => {
                let sep = if dir.ends_with('/') { '/' } else { '\\' };
                format!("{joined}{sep}")
            }
            Form::Plain => joined,
            Form::Uri if is_dir => dir_suffix(uri_value(&joined)),
            Form::Uri => uri_value(&joined),
        }
    }

    /// What follows `file:///` in the path's URI: `C:/x` for `file:///C:/x`, `/srv/share`
    /// for the share `\\srv\share` (`file:////srv/share`, which names it too).
    fn uri_value(path: &str) -> String {
        let uri = crate::roots::windows_file_uri(path);
        let rest = &uri["file://".len()..];
        match rest.strip_prefix('/') {
            Some(local) => local.to_string(),
            None => format!("/{rest}"),
        }
    }

    fn dir_suffix(mut value: String) -> String {
        if !value.ends_with('/') {
            value.push('/');
        }
        value
    }
}

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

    /// A root's value in the template form, without the trailing slash.
    fn base_of(root: &Path) -> String {
        as_value(root, false, Form::Uri).unwrap()
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
        let base = base_of(&root);
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
        let parent = base_of(root.parent().unwrap());
        let above = both(&roots, &index, &format!("{parent}/"));
        assert_eq!(above.values, [format!("{}/", base_of(&root))]);
        let base = base_of(&root);
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
        let base = base_of(&root);
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
        let got = both(&roots, &index, &format!("{}/f", base_of(&root)));
        assert_eq!(got.values.len(), 100);
        assert_eq!(got.values[0], format!("{}/f000", base_of(&root)));
        assert_eq!(got.values[99], format!("{}/f099", base_of(&root)));
        assert_eq!(got.total, 150);
        assert!(got.has_more);
    }

    #[test]
    fn values_resolve_back_to_the_exact_bytes() {
        use std::os::unix::ffi::OsStringExt;
        let (_tmp, root) = root();
        let names: Vec<std::ffi::OsString> = vec![
            "设计.md".into(),
            "caf\u{e9}".into(),
            "cafe\u{301}".into(),
            " lead".into(),
            "trail ".into(),
            "new\nline".into(),
            "50%off".into(),
            "%2e".into(),
            "q?#".into(),
            std::ffi::OsString::from_vec(b"bad\xffname".to_vec()),
        ];
        for name in &names {
            fs::write(root.join(name), "").unwrap();
        }
        let roots = vec![root.clone()];
        let base = base_of(&root);
        let got = complete(&roots, &format!("{base}/"));
        assert_eq!(got.total, names.len());
        for value in &got.values {
            let path = crate::roots::path_from_file_uri(&format!("file:///{value}")).unwrap();
            assert!(
                names.iter().any(|n| root.join(n) == path),
                "{value} resolves to {path:?}, not a listed name"
            );
        }
        // Typing a value back narrows to that very entry.
        let nfd = got
            .values
            .iter()
            .find(|v| v.ends_with("cafe%CC%81"))
            .unwrap();
        assert_eq!(complete(&roots, nfd).values, std::slice::from_ref(nfd));
        let bad = got.values.iter().find(|v| v.contains("%FF")).unwrap();
        assert_eq!(complete(&roots, bad).values, std::slice::from_ref(bad));
        // Plain values (prompt arguments) skip the name that is not UTF-8.
        let plain = complete_in(
            &roots,
            root.to_str().unwrap().trim_start_matches('/'),
            Form::Plain,
            None,
        );
        assert_eq!(plain.values.len(), 1, "{:?}", plain.values);
        let plain = complete_in(
            &roots,
            &format!("{}/", root.to_str().unwrap().trim_start_matches('/')),
            Form::Plain,
            None,
        );
        assert_eq!(plain.total, names.len() - 1);
        assert!(plain.values.iter().any(|v| v.ends_with("/设计.md")));
    }
}

/// Windows value text, checked on every platform.
#[cfg(test)]
mod win_tests {
    use super::Form::{Plain, Uri};
    use super::win::*;

    #[test]
    fn typed_values_split_at_either_separator() {
        assert_eq!(split(r"C:\Us"), Some((r"C:\", "Us")));
        assert_eq!(split("c:/users/"), Some(("c:/users/", "")));
        assert_eq!(split(r"C:\Users/me\pr"), Some((r"C:\Users/me\", "pr")));
        assert_eq!(split("C:"), None);
        assert_eq!(typed("C:/Program%20Files/", Uri), "C:/Program Files/");
        assert_eq!(typed("/C:/x", Uri), "C:/x");
        assert_eq!(typed("/srv/share/", Uri), "//srv/share/");
        assert_eq!(typed(r"C:\x y", Plain), r"C:\x y");
    }

    #[test]
    fn roots_are_offered_by_case_insensitive_prefix() {
        let root = r"C:\Users\Me\Proj";
        for typed in [
            "",
            "c",
            "C:",
            r"c:\",
            "c:/users/",
            r"C:\USERS\me\p",
            r"C:\Users\Me\Proj\",
        ] {
            assert!(leads_to(root, typed), "{typed}");
        }
        for typed in [
            "D:",
            r"C:\Users\Me\Proj2",
            r"C:\Users\Mex",
            r"C:\Users\Me\Proj\src",
        ] {
            assert!(!leads_to(root, typed), "{typed}");
        }
        assert!(leads_to(r"\\srv\share\d", "//SRV/share/"));
        assert!(leads_to(r"C:\", "c:/"));
    }

    #[test]
    fn values_keep_the_typed_spelling_and_end_directories_with_a_separator() {
        assert_eq!(root_value(r"C:\Users\Me", Plain), r"C:\Users\Me\");
        assert_eq!(root_value(r"C:\", Plain), r"C:\");
        assert_eq!(root_value(r"C:\Users\Me Too", Uri), "C:/Users/Me%20Too/");
        assert_eq!(root_value(r"\\srv\share\d", Uri), "/srv/share/d/");
        assert_eq!(child_value("c:/users/", "Me", true, Plain), "c:/users/Me/");
        assert_eq!(
            child_value(r"C:\Users\", "Me", true, Plain),
            r"C:\Users\Me\"
        );
        assert_eq!(child_value(r"C:\x\", "a.rs", false, Plain), r"C:\x\a.rs");
        assert_eq!(
            child_value("C:/x y/", "%20#.rs", false, Uri),
            "C:/x%20y/%2520%23.rs"
        );
        assert_eq!(child_value("C:/x/", "sub", true, Uri), "C:/x/sub/");
        assert_eq!(child_value("//srv/share/", "d", true, Uri), "/srv/share/d/");
        // A URI value resolves back to the very path.
        let value = child_value("C:/x y/", "%20#.rs", false, Uri);
        assert_eq!(
            crate::files::winpath::from_uri_path(
                "",
                &percent_encoding::percent_decode_str(&format!("/{value}")).decode_utf8_lossy()
            ),
            Some(r"C:\x y\%20#.rs".to_string())
        );
    }
}
