//! The workspace boundary: which directories (or files) are "the workspace", and whether a
//! path the model names lies inside it.
//!
//! A [`RootSet`] is an immutable snapshot of the roots in force, with the source they came
//! from (the client's `roots/list`, the command line, or the working directory). Swapping
//! roots means building a new set; calls already running keep the snapshot they started with.
//!
//! Containment is always decided on canonical paths (symlinks resolved, `..` removed) and
//! compared component by component, never by string prefix: `/x/app2` is not inside `/x/app`,
//! and a symlink inside a root that points outside it is outside. A path that does not exist
//! yet (a write target) is judged by its nearest existing ancestor.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

/// Where the roots in force came from, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSource {
    /// The client's answer to `roots/list`.
    Client,
    /// `DIR` arguments on the command line.
    CommandLine,
    /// The server's working directory (the last fallback).
    WorkingDirectory,
    /// `--confine` directories, used when every other source was empty or outside them.
    Confine,
}

impl RootSource {
    pub fn label(self) -> &'static str {
        match self {
            RootSource::Client => "client",
            RootSource::CommandLine => "command line",
            RootSource::WorkingDirectory => "working directory",
            RootSource::Confine => "--confine",
        }
    }
}

/// One workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The path as given (absolute, percent-decoded), used in messages.
    pub path: PathBuf,
    /// The canonical path; `None` when the root does not exist (kept, but reported).
    pub canonical: Option<PathBuf>,
    /// The client's display name, when it gave one.
    pub name: Option<String>,
    /// True when the root is a single file rather than a directory.
    pub is_file: bool,
}

impl Root {
    /// Builds a root from an absolute path, resolving it if it exists.
    pub fn new(path: PathBuf, name: Option<String>) -> Root {
        let canonical = std::fs::canonicalize(&path).ok();
        let is_file = canonical.as_deref().is_some_and(Path::is_file);
        Root {
            path,
            canonical,
            name,
            is_file,
        }
    }

    /// True when `canonical` (already canonical) is this root or below it.
    pub fn contains(&self, canonical: &Path) -> bool {
        self.canonical
            .as_deref()
            .is_some_and(|root| canonical.starts_with(root))
    }

    /// The path to show and search from: the canonical path when known.
    pub fn effective(&self) -> &Path {
        self.canonical.as_deref().unwrap_or(&self.path)
    }
}

/// An immutable snapshot of the roots in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSet {
    pub roots: Vec<Root>,
    pub source: RootSource,
}

impl RootSet {
    pub fn new(roots: Vec<Root>, source: RootSource) -> RootSet {
        RootSet { roots, source }
    }

    /// The index of the first root containing the canonical path, if any.
    pub fn containing(&self, canonical: &Path) -> Option<usize> {
        self.roots.iter().position(|root| root.contains(canonical))
    }

    /// The existing roots' canonical paths, in order (what a search walks by default).
    pub fn existing(&self) -> Vec<PathBuf> {
        self.roots
            .iter()
            .filter_map(|root| root.canonical.clone())
            .collect()
    }

    /// A one-line human description, e.g. `/home/me/app, /home/me/lib`.
    pub fn describe(&self) -> String {
        if self.roots.is_empty() {
            return "(no roots)".to_string();
        }
        self.roots
            .iter()
            .map(|root| root.effective().display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Operator-set outer boundary (`--confine`): nothing outside it is ever touched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confine {
    /// Canonical confine directories; empty means "no confinement".
    pub dirs: Vec<PathBuf>,
}

impl Confine {
    /// Canonicalises the given directories; a missing one is an error (a typo in an operator
    /// flag must not silently widen or empty the boundary).
    pub fn new(dirs: &[PathBuf]) -> io::Result<Confine> {
        let mut canonical = Vec::new();
        for dir in dirs {
            let path = std::fs::canonicalize(dir).map_err(|err| {
                io::Error::new(err.kind(), format!("--confine {}: {err}", dir.display()))
            })?;
            canonical.push(path);
        }
        Ok(Confine { dirs: canonical })
    }

    pub fn is_active(&self) -> bool {
        !self.dirs.is_empty()
    }

    /// True when there is no confinement or the canonical path lies inside it.
    pub fn allows(&self, canonical: &Path) -> bool {
        !self.is_active() || self.dirs.iter().any(|dir| canonical.starts_with(dir))
    }
}

/// Picks the roots in force from the sources in order of precedence — the client's roots,
/// then the command-line directories, then the working directory — keeping only roots
/// inside `--confine` (when set). The first source left non-empty wins; when all are empty
/// the confine directories themselves are the workspace. Returns the set and one warning
/// per root dropped.
pub fn choose_roots(
    client: Option<Vec<Root>>,
    command_line: &[PathBuf],
    cwd: &Path,
    confine: &Confine,
) -> (RootSet, Vec<String>) {
    let mut warnings = Vec::new();
    let mut keep = |roots: Vec<Root>, source: RootSource| -> Option<RootSet> {
        let kept: Vec<Root> = roots
            .into_iter()
            .filter(|root| {
                let judged = root
                    .canonical
                    .clone()
                    .or_else(|| canonicalize_lenient(&root.path).ok().map(|(p, _)| p))
                    .unwrap_or_else(|| root.path.clone());
                let inside = confine.allows(&judged);
                if !inside {
                    warnings.push(format!(
                        "root {} ({}) is outside --confine and was dropped",
                        root.path.display(),
                        source.label()
                    ));
                }
                inside
            })
            .collect();
        (!kept.is_empty()).then(|| RootSet::new(kept, source))
    };
    let from_paths = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| Root::new(p.clone(), None))
            .collect::<Vec<_>>()
    };
    let chosen = client
        .and_then(|roots| keep(roots, RootSource::Client))
        .or_else(|| keep(from_paths(command_line), RootSource::CommandLine))
        .or_else(|| {
            keep(
                from_paths(&[cwd.to_path_buf()]),
                RootSource::WorkingDirectory,
            )
        })
        .unwrap_or_else(|| RootSet::new(from_paths(&confine.dirs), RootSource::Confine));
    (chosen, warnings)
}

/// Why a `file://` URI could not be turned into a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriError {
    NotFileScheme,
    RemoteHost(String),
    NotAbsolute,
    Nul,
}

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UriError::NotFileScheme => write!(f, "only file:// URIs are supported"),
            UriError::RemoteHost(host) => {
                write!(
                    f,
                    "file URI names host {host:?}; only local files (no host or localhost) are supported"
                )
            }
            UriError::NotAbsolute => write!(f, "file URI does not hold an absolute path"),
            UriError::Nul => write!(f, "file URI contains a NUL byte"),
        }
    }
}

/// Turns a `file://` URI into an absolute path: percent-decoded (bytes, so non-UTF-8 names
/// survive), host empty or `localhost`. Query and fragment are not part of a file path and
/// are rejected by being treated as literal characters only when percent-encoded.
pub fn path_from_file_uri(uri: &str) -> Result<PathBuf, UriError> {
    let rest = strip_prefix_ignore_case(uri, "file://").ok_or(UriError::NotFileScheme)?;
    let (host, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, ""),
    };
    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
        return Err(UriError::RemoteHost(host.to_string()));
    }
    // A literal '?' or '#' ends the path part of a URI.
    let path = path.split(['?', '#']).next().unwrap_or("");
    if !path.starts_with('/') {
        return Err(UriError::NotAbsolute);
    }
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
    if bytes.contains(&0) {
        return Err(UriError::Nul);
    }
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

/// Builds the `file://` URI of an absolute path (percent-encoding what URIs cannot carry).
pub fn file_uri_from_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'/')
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    let encoded = percent_encoding::percent_encode(path.as_os_str().as_bytes(), KEEP);
    format!("file://{encoded}")
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// The result of resolving a path argument against the roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The absolute path as named (before resolving symlinks), for reporting what the
    /// model asked about (e.g. that it is a symlink).
    pub given: PathBuf,
    /// Canonical absolute path. For a path that does not exist yet: the canonical nearest
    /// existing ancestor joined with the remaining (plain) components.
    pub path: PathBuf,
    /// Whether the path exists (as a directory entry; a dangling symlink does not count).
    pub exists: bool,
    /// The root that contains it, if any.
    pub root: Option<usize>,
}

/// Mistakes in a path argument the model can fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    Empty,
    Uri(UriError),
    /// A relative path was given but no root exists to resolve it against.
    NoRoots,
    /// `..` after a component that does not exist: the OS would refuse it too.
    DotDotAfterMissing(PathBuf),
    Io(PathBuf, String),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Empty => write!(f, "the path is empty"),
            PathError::Uri(err) => write!(f, "{err}"),
            PathError::NoRoots => write!(
                f,
                "a relative path needs a workspace root, and no root exists; pass an absolute path"
            ),
            PathError::DotDotAfterMissing(path) => write!(
                f,
                "{}: '..' follows a directory that does not exist",
                path.display()
            ),
            PathError::Io(path, err) => write!(f, "{}: {err}", path.display()),
        }
    }
}

/// Parses a path argument: absolute path, `file://` URI, or path relative to the roots.
/// Relative paths are tried against each directory root in order; the first where it exists
/// wins, and for a path that exists nowhere the first directory root is used.
pub fn resolve(arg: &str, roots: &RootSet) -> Result<Resolved, PathError> {
    let arg = arg.trim();
    if arg.is_empty() {
        return Err(PathError::Empty);
    }
    let given = if arg.len() >= 7 && arg[..7].eq_ignore_ascii_case("file://") {
        path_from_file_uri(arg).map_err(PathError::Uri)?
    } else {
        expand_tilde(arg)
    };
    if given.is_absolute() {
        return resolve_absolute(&given, roots);
    }
    let dirs: Vec<&Path> = roots
        .roots
        .iter()
        .filter(|root| !root.is_file)
        .filter_map(|root| root.canonical.as_deref())
        .collect();
    if dirs.is_empty() {
        return Err(PathError::NoRoots);
    }
    for dir in &dirs {
        let candidate = dir.join(&given);
        if std::fs::symlink_metadata(&candidate).is_ok() {
            return resolve_absolute(&candidate, roots);
        }
    }
    resolve_absolute(&dirs[0].join(&given), roots)
}

/// Like [`resolve`], but the final component is kept as named instead of being followed
/// when it is a symlink: for operations on the directory entry itself (moving a link moves
/// the link, not what it points to). The parent is resolved canonically.
pub fn resolve_entry(arg: &str, roots: &RootSet) -> Result<Resolved, PathError> {
    let whole = resolve(arg, roots)?;
    let given = whole.given.clone();
    let Some(name) = given.file_name() else {
        return Ok(whole);
    };
    let Some(parent) = given.parent() else {
        return Ok(whole);
    };
    let (parent, _) = canonicalize_lenient(parent)?;
    let path = parent.join(name);
    let exists = std::fs::symlink_metadata(&path).is_ok();
    let root = roots.containing(&path);
    Ok(Resolved {
        given,
        path,
        exists,
        root,
    })
}

/// `~/x` means the user's home; agents write it often.
fn expand_tilde(arg: &str) -> PathBuf {
    if let Some(rest) = arg.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    PathBuf::from(arg)
}

fn resolve_absolute(path: &Path, roots: &RootSet) -> Result<Resolved, PathError> {
    let (canonical, exists) = canonicalize_lenient(path)?;
    let root = roots.containing(&canonical);
    Ok(Resolved {
        given: path.to_path_buf(),
        path: canonical,
        exists,
        root,
    })
}

/// Canonicalises a path that may not exist yet: the longest existing prefix is resolved by
/// the OS (following symlinks), and the missing remainder is appended component by component.
/// `.` components are dropped; `..` inside the missing remainder is refused because the OS
/// could not follow it either. A dangling symlink counts as missing and is resolved through
/// its target text, so a write "through" it is judged where it would really land.
pub fn canonicalize_lenient(path: &Path) -> Result<(PathBuf, bool), PathError> {
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return Ok((canonical, true));
    }
    // Walk up to the nearest ancestor that canonicalises.
    let mut missing: Vec<OsString> = Vec::new();
    let mut cursor = path.to_path_buf();
    let mut hops = 0;
    loop {
        // A dangling symlink: follow its text (bounded) so the write lands where the link points.
        if let Ok(meta) = std::fs::symlink_metadata(&cursor)
            && meta.file_type().is_symlink()
        {
            hops += 1;
            if hops > 40 {
                return Err(PathError::Io(
                    path.to_path_buf(),
                    "too many levels of symbolic links".into(),
                ));
            }
            let target = std::fs::read_link(&cursor)
                .map_err(|err| PathError::Io(cursor.clone(), err.to_string()))?;
            let parent = cursor.parent().unwrap_or(Path::new("/")).to_path_buf();
            cursor = parent.join(target);
            continue;
        }
        if let Ok(canonical) = std::fs::canonicalize(&cursor) {
            let mut out = canonical;
            for component in missing.iter().rev() {
                if component == ".." {
                    return Err(PathError::DotDotAfterMissing(path.to_path_buf()));
                }
                out.push(component);
            }
            return Ok((out, false));
        }
        let Some(name) = cursor.file_name().map(|n| n.to_os_string()) else {
            // `..` or root: normalise lexically one step.
            match cursor.components().next_back() {
                Some(Component::ParentDir) => {
                    missing.push(OsString::from(".."));
                    cursor.pop();
                    continue;
                }
                _ => {
                    return Err(PathError::Io(
                        path.to_path_buf(),
                        "no existing ancestor".into(),
                    ));
                }
            }
        };
        if name != "." {
            missing.push(name);
        }
        if !cursor.pop() {
            return Err(PathError::Io(
                path.to_path_buf(),
                "no existing ancestor".into(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn set(dirs: &[&Path]) -> RootSet {
        RootSet::new(
            dirs.iter()
                .map(|d| Root::new(d.to_path_buf(), None))
                .collect(),
            RootSource::CommandLine,
        )
    }

    #[test]
    fn file_uris_decode_percent_and_accept_localhost() {
        assert_eq!(
            path_from_file_uri("file:///tmp/a%20b/c").unwrap(),
            PathBuf::from("/tmp/a b/c")
        );
        assert_eq!(
            path_from_file_uri("file://localhost/tmp/x").unwrap(),
            PathBuf::from("/tmp/x")
        );
        assert_eq!(
            path_from_file_uri("FILE:///tmp/x").unwrap(),
            PathBuf::from("/tmp/x")
        );
        assert!(matches!(
            path_from_file_uri("file://server/share"),
            Err(UriError::RemoteHost(_))
        ));
        assert_eq!(
            path_from_file_uri("https://x/y"),
            Err(UriError::NotFileScheme)
        );
        assert_eq!(path_from_file_uri("file:///a%00b"), Err(UriError::Nul));
        // Non-UTF-8 bytes survive.
        let p = path_from_file_uri("file:///tmp/%FF").unwrap();
        assert_eq!(p.as_os_str().len(), 6);
    }

    #[test]
    fn uri_round_trip() {
        let path = PathBuf::from("/tmp/a b/ü#?%.rs");
        assert_eq!(
            path_from_file_uri(&file_uri_from_path(&path)).unwrap(),
            path
        );
    }

    #[test]
    fn sibling_prefix_is_not_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let app = tmp.path().join("app");
        let app2 = tmp.path().join("app2");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::create_dir_all(&app2).unwrap();
        std::fs::write(app2.join("secret"), "x").unwrap();
        let roots = set(&[&app]);
        let resolved = resolve(app2.join("secret").to_str().unwrap(), &roots).unwrap();
        assert_eq!(resolved.root, None);
    }

    #[test]
    fn dotdot_and_symlinks_are_resolved_before_containment() {
        let tmp = tempfile::tempdir().unwrap();
        let app = tmp.path().join("app");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "x").unwrap();
        symlink(&outside, app.join("link")).unwrap();
        let roots = set(&[&app]);
        assert_eq!(resolve("../outside/secret", &roots).unwrap().root, None);
        assert_eq!(resolve("link/secret", &roots).unwrap().root, None);
        // A not-yet-existing file under the symlinked directory is outside too.
        let new = resolve("link/new.txt", &roots).unwrap();
        assert!(!new.exists);
        assert_eq!(new.root, None);
        // A dangling symlink inside the root pointing outside is judged by its target.
        symlink(outside.join("nope"), app.join("dangling")).unwrap();
        assert_eq!(resolve("dangling", &roots).unwrap().root, None);
    }

    #[test]
    fn relative_paths_try_each_root_then_the_first() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(b.join("only_in_b"), "x").unwrap();
        let roots = set(&[&a, &b]);
        let found = resolve("only_in_b", &roots).unwrap();
        assert_eq!(found.root, Some(1));
        assert!(found.exists);
        let new = resolve("sub/new.txt", &roots).unwrap();
        assert_eq!(new.root, Some(0));
        assert_eq!(
            new.path,
            std::fs::canonicalize(&a).unwrap().join("sub/new.txt")
        );
        assert!(matches!(
            resolve("x/../../y", &roots),
            Err(PathError::DotDotAfterMissing(_))
        ));
    }

    #[test]
    fn file_uri_with_encoded_dotdot_cannot_escape() {
        let tmp = tempfile::tempdir().unwrap();
        let app = tmp.path().join("app");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::write(tmp.path().join("secret"), "x").unwrap();
        let roots = set(&[&app]);
        let uri = format!(
            "{}/%2e%2e/secret",
            file_uri_from_path(&std::fs::canonicalize(&app).unwrap())
        );
        let resolved = resolve(&uri, &roots).unwrap();
        assert_eq!(resolved.root, None);
        assert!(resolved.path.ends_with("secret"));
    }

    #[test]
    fn sources_in_order_and_confine_filtering() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let (a, b) = (base.join("a"), base.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let none = Confine::default();
        let (set, _) = choose_roots(
            Some(vec![Root::new(a.clone(), None)]),
            std::slice::from_ref(&b),
            &base,
            &none,
        );
        assert_eq!(set.source, RootSource::Client);
        let (set, _) = choose_roots(Some(vec![]), std::slice::from_ref(&b), &base, &none);
        assert_eq!(set.source, RootSource::CommandLine);
        let (set, _) = choose_roots(None, &[], &base, &none);
        assert_eq!(set.source, RootSource::WorkingDirectory);
        let confine = Confine::new(std::slice::from_ref(&b)).unwrap();
        let (set, warnings) =
            choose_roots(Some(vec![Root::new(a.clone(), None)]), &[], &base, &confine);
        assert_eq!(set.source, RootSource::Confine);
        assert_eq!(set.roots[0].canonical.as_deref(), Some(b.as_path()));
        assert_eq!(warnings.len(), 2);
    }

    #[test]
    fn confine_is_component_wise() {
        let tmp = tempfile::tempdir().unwrap();
        let app = tmp.path().join("app");
        std::fs::create_dir_all(&app).unwrap();
        let confine = Confine::new(std::slice::from_ref(&app)).unwrap();
        let canonical = std::fs::canonicalize(&app).unwrap();
        assert!(confine.allows(&canonical.join("x")));
        let mut sibling = canonical.clone().into_os_string();
        sibling.push("2");
        assert!(!confine.allows(Path::new(&sibling)));
        assert!(Confine::new(&[tmp.path().join("missing")]).is_err());
    }
}
