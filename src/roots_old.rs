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

#[cfg(not(windows))]
use crate::platform::os::OsStringExt;
use std::ffi::OsString;
use std::fmt;
use std::io;
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
        let canonical = canonicalize(&path).ok();
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
            .is_some_and(|root| within(canonical, root))
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

    /// A one-line human description for messages, e.g. `/home/me/app, /home/me/lib`.
    /// Bounded (a client may send thousands of roots): at most [`DESCRIBE_MAX_ROOTS`] roots
    /// and about [`DESCRIBE_MAX_BYTES`], then `and N more`.
    pub fn describe(&self) -> String {
        if self.roots.is_empty() {
            return "(no roots)".to_string();
        }
        describe_paths(self.roots.iter().map(Root::effective), self.roots.len())
    }
}

/// One entry's name for a line of text (a listing, a tree): the name itself when it is
/// plain UTF-8; quoted with escapes when it holds control characters (a newline in a name
/// must not break the layout, and the quoted form is what a JSON argument would carry);
/// for bytes that are not UTF-8, the readable part and the entry's exact `file://` URI.
pub fn name_text(name: &std::ffi::OsStr, path: &Path) -> String {
    match name.to_str() {
        Some(text) if !text.chars().any(char::is_control) => text.to_string(),
        Some(text) => format!("{text:?}"),
        None => format!(
            "{} [not UTF-8; exact path: {}]",
            name.to_string_lossy(),
            file_uri_from_path(path)
        ),
    }
}

/// Most roots [`RootSet::describe`] names.
pub const DESCRIBE_MAX_ROOTS: usize = 10;
/// About the most bytes of paths [`RootSet::describe`] writes.
pub const DESCRIBE_MAX_BYTES: usize = 1024;

/// `a, b, c and N more (list_roots shows them all)`: the first paths of a list of `total`,
/// bounded by count and bytes, for messages.
pub fn describe_paths<'a>(paths: impl Iterator<Item = &'a Path>, total: usize) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for path in paths {
        if shown == DESCRIBE_MAX_ROOTS || (shown > 0 && out.len() >= DESCRIBE_MAX_BYTES) {
            break;
        }
        if shown > 0 {
            out.push_str(", ");
        }
        let text = path_text(path);
        // One path alone can be 4 KiB: keep its start only.
        match text.char_indices().nth(DESCRIBE_MAX_BYTES / 4) {
            Some((cut, _)) => {
                out.push_str(&text[..cut]);
                out.push('…');
            }
            None => out.push_str(&text),
        }
        shown += 1;
    }
    if total > shown {
        out.push_str(&format!(
            " and {} more (list_roots pages through them all)",
            total - shown
        ));
    }
    out
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
            let path = canonicalize(dir).map_err(|err| {
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
        !self.is_active() || self.dirs.iter().any(|dir| within(canonical, dir))
    }
}

/// True when the canonical `path` is `base` or below it, component by component.
#[cfg(not(any(windows, target_vendor = "apple")))]
pub fn within(path: &Path, base: &Path) -> bool {
    path.starts_with(base)
}

/// True when the canonical `path` is `base` or below it. macOS volumes are case-insensitive
/// by default (APFS, HFS+) and `canonicalize` does not always give the on-disk case, so
/// `/users/me/app/x` may name a file under the root `/Users/me/App`: names that differ are
/// compared by identity instead ([`within_by_identity`]), never by a case-folding string
/// comparison, which would be wrong on a case-sensitive volume.
#[cfg(target_vendor = "apple")]
pub fn within(path: &Path, base: &Path) -> bool {
    path.starts_with(base) || within_by_identity(path, base)
}

/// Whether `base` is `path` or one of its ancestors, compared by identity (device and inode,
/// the entries themselves, no link followed): true for two spellings of one directory,
/// whatever the file system makes of case. Missing components (a write target) are skipped.
/// Used on macOS; built and tested on every Unix.
#[cfg(unix)]
#[cfg_attr(not(target_vendor = "apple"), allow(dead_code))]
pub fn within_by_identity(path: &Path, base: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(root) = std::fs::symlink_metadata(base) else {
        return false;
    };
    path.ancestors().any(|ancestor| {
        std::fs::symlink_metadata(ancestor)
            .is_ok_and(|meta| meta.dev() == root.dev() && meta.ino() == root.ino())
    })
}

/// True when the canonical `path` is `base` or below it, compared as NTFS compares names:
/// ignoring case, `\\?\` prefixes and separator style.
#[cfg(windows)]
pub fn within(path: &Path, base: &Path) -> bool {
    if path.starts_with(base) {
        return true;
    }
    match (path.to_str(), base.to_str()) {
        (Some(path), Some(base)) => crate::platform::winpath::starts_with(path, base),
        _ => false,
    }
}

/// Picks the roots in force from the sources in order of precedence — the client's roots,
/// then the command-line directories, then the working directory — keeping only roots
/// inside `--confine` (when set). The first source left non-empty wins.
///
/// `client` is `Some` once a client that declared the `roots` capability answered: then an
/// empty list means *no access* (PRODUCT §2): the `DIR` arguments still apply (the operator
/// chose them), but the working directory is never served in their place, and without
/// `DIR`s the set is empty. Roots sent but all outside `--confine` give way to the `DIR`s,
/// then to the confine directories, never to the working directory. `None` (no
/// roots capability, or no answer yet) falls back to the `DIR` arguments, then the working
/// directory; when all of those are outside `--confine`, the confine directories themselves
/// are the workspace. Returns the set and one warning per root dropped.
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
                        path_text(&root.path),
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
    let chosen = match client {
        Some(roots) => {
            let sent = !roots.is_empty();
            keep(roots, RootSource::Client)
                .or_else(|| keep(from_paths(command_line), RootSource::CommandLine))
                .unwrap_or_else(|| {
                    // Roots sent but all outside --confine: the operator's confine
                    // directories, as for the other sources; nothing sent: nothing served.
                    if sent && confine.is_active() {
                        RootSet::new(from_paths(&confine.dirs), RootSource::Confine)
                    } else {
                        RootSet::new(Vec::new(), RootSource::Client)
                    }
                })
        }
        None => keep(from_paths(command_line), RootSource::CommandLine)
            .or_else(|| {
                keep(
                    from_paths(&[cwd.to_path_buf()]),
                    RootSource::WorkingDirectory,
                )
            })
            .unwrap_or_else(|| RootSet::new(from_paths(&confine.dirs), RootSource::Confine)),
    };
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
                    "file URI names host \"{}\"; only local files (no host or localhost) are supported",
                    crate::quote::echo(host)
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
    #[cfg(not(windows))]
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
    #[cfg(windows)]
    {
        // `file:///C:/x` → `C:\x`; `file://server/share/x` → `\\server\share\x`.
        let text = String::from_utf8_lossy(&bytes);
        crate::platform::winpath::from_uri_path(host, &text)
            .map(PathBuf::from)
            .ok_or(UriError::NotAbsolute)
    }
    #[cfg(not(windows))]
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

/// Builds the `file://` URI of an absolute path (percent-encoding what URIs cannot carry).
pub fn file_uri_from_path(path: &Path) -> String {
    #[cfg(windows)]
    {
        windows_file_uri(&path.to_string_lossy())
    }
    #[cfg(not(windows))]
    {
        use crate::platform::os::OsStrExt;
        let encoded = percent_encoding::percent_encode(path.as_os_str().as_bytes(), URI_KEEP);
        format!("file://{encoded}")
    }
}

/// What a `file://` URI keeps unencoded in a path.
const URI_KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The `file://` URI of a Windows path (`C:\x y` → `file:///C:/x%20y`, `\\srv\share\x` →
/// `file://srv/share/x`); pure, so it is tested on every platform.
#[cfg_attr(not(windows), allow(dead_code))]
pub(crate) fn windows_file_uri(path: &str) -> String {
    const KEEP_COLON: &percent_encoding::AsciiSet = &URI_KEEP.remove(b':');
    let (host, path) = crate::platform::winpath::to_uri_parts(path);
    let encoded = percent_encoding::percent_encode(path.as_bytes(), KEEP_COLON);
    format!("file://{host}{encoded}")
}

/// `text` without `prefix` (compared ASCII-case-insensitively). `get` instead of slicing:
/// the prefix length may fall inside a multi-byte character of `text`.
fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Longest path the kernel accepts, in bytes, including the terminating NUL (Linux
/// `PATH_MAX`). Longer paths are refused before any system call: resolving one takes the
/// kernel seconds of work only to fail with `ENAMETOOLONG`.
pub const PATH_MAX: usize = 4096;
/// Longest name of one directory entry, in bytes (Linux `NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// Refuses paths no filesystem call could succeed on: a NUL byte, more than [`PATH_MAX`]
/// bytes in all, or a component longer than [`NAME_MAX`] bytes.
pub fn check_path_shape(path: &Path) -> Result<(), PathError> {
    use crate::platform::os::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    if bytes.contains(&0) {
        return Err(PathError::Nul);
    }
    if bytes.len() >= PATH_MAX {
        return Err(PathError::TooLong {
            bytes: bytes.len(),
            component: None,
        });
    }
    if let Some(long) = bytes
        .split(|&b| b == b'/' || (cfg!(windows) && b == b'\\'))
        .find(|part| part.len() > NAME_MAX)
    {
        return Err(PathError::TooLong {
            bytes: long.len(),
            component: Some(String::from_utf8_lossy(&long[..24]).into_owned()),
        });
    }
    Ok(())
}

/// A path as text for answers: the path itself when it is valid UTF-8, otherwise its
/// `file://` URI, which every tool accepts and which keeps the bytes that are not UTF-8
/// (`display()` would turn them into U+FFFD and name a different file).
///
/// This is the one place paths become text for the model and the user. On Windows a
/// verbatim path (`\\?\C:\x`) is shown in its ordinary form (`C:\x`, `\\srv\share\x`)
/// whenever that form names exactly the same file ([`winpath::exact_plain`]).
///
/// [`winpath::exact_plain`]: crate::platform::winpath::exact_plain
pub fn path_text(path: &Path) -> String {
    match path.to_str() {
        #[cfg(windows)]
        Some(text) => crate::platform::winpath::display(text),
        #[cfg(not(windows))]
        Some(text) => text.to_string(),
        None => file_uri_from_path(path),
    }
}

/// `std::fs::canonicalize` in the form rootgrep keeps paths in. On Unix it is unchanged.
/// On Windows std answers with verbatim paths (`\\?\C:\x`); they are kept in their
/// ordinary form (`C:\x`, `\\srv\share\x`) whenever that form names exactly the same
/// file ([`winpath::exact_plain`]), so roots, resolved paths and every path found below
/// them (search results, listings, URIs) read as people and hosts write them. Opening an
/// ordinary path longer than Win32's limit still works: std adds the prefix back itself.
/// Names only the verbatim form can spell (`x.`, `nul.txt`) keep it.
///
/// [`winpath::exact_plain`]: crate::platform::winpath::exact_plain
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    let canonical = std::fs::canonicalize(path)?;
    #[cfg(windows)]
    if let Some(plain) = canonical
        .to_str()
        .and_then(crate::platform::winpath::exact_plain)
    {
        return Ok(PathBuf::from(plain));
    }
    Ok(canonical)
}

/// Why a root's path no longer names the root (see [`in_place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Displaced {
    /// Nothing is there.
    Missing,
    /// The path itself is a symlink now.
    Symlink,
    /// The path leads through a symlink now (an ancestor was swapped), or is no longer the
    /// file system's own spelling of it.
    NotCanonical,
}

impl std::fmt::Display for Displaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Displaced::Missing => "the path does not exist",
            Displaced::Symlink => "the root's path is a symlink now, not the directory it was",
            Displaced::NotCanonical => "the root's path leads through a symlink now",
        })
    }
}

/// `root` written as [`canonicalize`] writes paths: on Windows the ordinary `C:\x` form of
/// a verbatim `\\?\C:\x` where that names the same file; elsewhere `root` itself.
fn canonicalize_spelling(root: &Path) -> PathBuf {
    #[cfg(windows)]
    {
        root.to_str()
            .and_then(crate::platform::winpath::exact_plain)
            .map_or_else(|| root.to_path_buf(), PathBuf::from)
    }
    #[cfg(not(windows))]
    {
        root.to_path_buf()
    }
}

/// Whether the canonical root `root` is still in place: its path names a directory or file
/// itself — not a symlink — and still canonicalizes to itself (no ancestor became a
/// symlink). Its identity (device, inode) when it is. The one rule for every consumer that
/// lists or walks a root (the watcher, the index builder, list_roots): a root swapped for a
/// symlink leads somewhere that is not the root, and nothing there may be listed, searched
/// or read until the path is a real directory again (a new directory is the root again:
/// `rm -rf DIR && mkdir DIR` is an ordinary way to empty one).
pub fn in_place(root: &Path) -> Result<(u64, u64), Displaced> {
    use crate::platform::os::MetadataExt;
    let meta = std::fs::symlink_metadata(root).map_err(|_| Displaced::Missing)?;
    if meta.file_type().is_symlink() {
        return Err(Displaced::Symlink);
    }
    // Compared with the root in the form `canonicalize` gives (on Windows the ordinary
    // `C:\x`, where a root may have been given as `\\?\C:\x`).
    let spelled = canonicalize_spelling(root);
    match canonicalize(root) {
        Ok(canonical) if canonical == spelled => Ok((meta.dev(), meta.ino())),
        Ok(_) => Err(Displaced::NotCanonical),
        Err(_) => Err(Displaced::Missing),
    }
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
    /// The argument ended with `/`: it names a directory (an existing non-directory was
    /// refused while resolving; a missing one must not be created as a file).
    pub dir_only: bool,
    /// The argument exactly as the client sent it: the only thing a refusal names (the
    /// paths above tell where it leads, which is not for the client to learn outside the
    /// roots). Quote it with [`crate::quote::echo`].
    pub sent: String,
}

/// Mistakes in a path argument the model can fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    Empty,
    Uri(UriError),
    /// A relative path was given but no root exists to resolve it against.
    NoRoots,
    /// The path holds a NUL byte (no file name can).
    Nul,
    /// Longer than [`PATH_MAX`] in all (`component: None`) or with a component longer than
    /// [`NAME_MAX`] (`bytes` is then that component's length; `component` its start).
    TooLong {
        bytes: usize,
        component: Option<String>,
    },
    /// A name the platform refuses whatever the disk holds (Windows: a stream, a device).
    Name(PathBuf, String),
    /// Something found on the disk while resolving. It tells what is there, so it may be
    /// shown only once [`Found::at`] is known to be inside the roots or allowed; every
    /// other variant is about the argument's text alone.
    Found(Found),
}

/// A resolving failure that depends on the disk, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The absolute path as named.
    pub given: PathBuf,
    /// Where it was found, canonical: the non-directory, the nearest existing ancestor,
    /// or `given` itself when no part of it exists. Access is judged on this place.
    pub at: PathBuf,
    pub fault: Fault,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// `..` after a component that does not exist: the OS would refuse it too.
    DotDotAfterMissing,
    /// The argument ends with `/` but names something that is not a directory.
    NotADirectory,
    /// A symlink loop, an unreadable link, no existing ancestor.
    Io(String),
}

impl Found {
    /// The path judged for access before this failure may be shown: the place it was
    /// found, as missing. `given` stays as named, so a refusal the user gives is kept
    /// for the path as named, as for any other path.
    pub fn as_resolved(&self, sent: &str, roots: &RootSet) -> Resolved {
        Resolved {
            given: self.given.clone(),
            path: self.at.clone(),
            exists: false,
            root: roots.containing(&self.at),
            dir_only: false,
            sent: sent.to_string(),
        }
    }
}

fn found(given: &Path, at: PathBuf, fault: Fault) -> PathError {
    PathError::Found(Found {
        given: given.to_path_buf(),
        at,
        fault,
    })
}

/// The canonical form of `path`'s parent, where a failure about `path` was found; `path`
/// itself when that cannot be had.
fn parent_place(path: &Path) -> PathBuf {
    path.parent()
        .and_then(|parent| canonicalize(parent).ok())
        .unwrap_or_else(|| path.to_path_buf())
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
            PathError::Nul => write!(f, "the path contains a NUL byte, which no file name can"),
            PathError::TooLong {
                bytes,
                component: None,
            } => write!(
                f,
                "the path is too long: {bytes} bytes, and paths are limited to {} bytes (PATH_MAX)",
                PATH_MAX - 1
            ),
            PathError::TooLong {
                bytes,
                component: Some(start),
            } => write!(
                f,
                "a path component is too long: {start:?}… has {bytes} bytes, and names are \
                 limited to {NAME_MAX} bytes (NAME_MAX)"
            ),
            PathError::Name(path, why) => write!(f, "{}: {why}", path_text(path)),
            PathError::Found(found) => match &found.fault {
                Fault::DotDotAfterMissing => write!(
                    f,
                    "{}: '..' follows a directory that does not exist",
                    path_text(&found.given)
                ),
                Fault::NotADirectory => write!(
                    f,
                    "{} is not a directory, but the path ends with '/' (which names a directory); \
                     drop the trailing '/' to name the file",
                    path_text(&found.at)
                ),
                Fault::Io(why) => write!(f, "{}: {why}", path_text(&found.given)),
            },
        }
    }
}

/// Parses a path argument: absolute path, `file://` URI, or path relative to the roots.
/// Relative paths are tried against each directory root in order; the first where it exists
/// wins, and for a path that exists nowhere the first directory root is used.
///
/// The argument is taken exactly as given: no trimming (`"notes.txt "` is another file
/// than `"notes.txt"`), no Unicode normalisation, no percent-decoding outside `file://`
/// URIs (the only way to name bytes that are not UTF-8). A trailing `/` means "a
/// directory": an existing non-directory is refused, and [`Resolved::dir_only`] tells
/// writers not to create a file there. Over-long paths are refused before any system call.
pub fn resolve(arg: &str, roots: &RootSet) -> Result<Resolved, PathError> {
    if arg.is_empty() {
        return Err(PathError::Empty);
    }
    // Before decoding or joining anything: a huge argument costs nothing to refuse.
    if arg.len() >= PATH_MAX * 3 {
        return Err(PathError::TooLong {
            bytes: arg.len(),
            component: None,
        });
    }
    let given = match strip_prefix_ignore_case(arg, "file://") {
        Some(_) => path_from_file_uri(arg).map_err(PathError::Uri)?,
        None => expand_tilde(arg),
    };
    check_path_shape(&given)?;
    // `file.txt:secret` is an NTFS alternate data stream of `file.txt`: hidden contents
    // that no listing shows and a path check would take for the file itself. `CON`, `NUL`,
    // `COM1`… (also `nul.txt`) name devices in every directory, and a metadata call would
    // open the device and fail with a confusing system error. Both are refused here.
    #[cfg(windows)]
    if let Some(why) = given.to_str().and_then(crate::platform::winpath::refused_name) {
        return Err(PathError::Name(given.clone(), why));
    }
    let dir_only = {
        use crate::platform::os::OsStrExt;
        let bytes = given.as_os_str().as_bytes();
        bytes.len() > 1 && (bytes.ends_with(b"/") || (cfg!(windows) && bytes.ends_with(b"\\")))
    };
    if given.is_absolute() {
        return resolve_absolute(&given, roots, dir_only, arg);
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
    // An existing candidate wins only when it lies inside a root: which root a path
    // outside them is joined to must not depend on what exists out there.
    for dir in &dirs {
        let candidate = dir.join(&given);
        if check_path_shape(&candidate).is_ok()
            && std::fs::symlink_metadata(&candidate).is_ok()
            && let Ok(resolved) = resolve_absolute(&candidate, roots, dir_only, arg)
            && resolved.root.is_some()
        {
            return Ok(resolved);
        }
    }
    let candidate = dirs[0].join(&given);
    check_path_shape(&candidate)?;
    resolve_absolute(&candidate, roots, dir_only, arg)
}

/// Like [`resolve`], but the final component is kept as named instead of being followed
/// when it is a symlink: for operations on the directory entry itself (moving a link moves
/// the link, not what it points to). The parent is resolved canonically.
pub fn resolve_entry(arg: &str, roots: &RootSet) -> Result<Resolved, PathError> {
    let whole = resolve(arg, roots)?;
    // `link/` names the directory the link points to (as for the kernel), so it is followed.
    if whole.dir_only {
        return Ok(whole);
    }
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
        dir_only: false,
        sent: whole.sent,
    })
}

/// `~/x` means the user's home; agents write it often. `HOME` is read once per process
/// (it does not change under a running server, and reading the environment takes a lock).
fn expand_tilde(arg: &str) -> PathBuf {
    static HOME: std::sync::OnceLock<Option<OsString>> = std::sync::OnceLock::new();
    let rest = arg
        .strip_prefix("~/")
        .or_else(|| arg.strip_prefix("~\\").filter(|_| cfg!(windows)));
    if let Some(rest) = rest
        && let Some(home) = HOME.get_or_init(|| {
            std::env::var_os("HOME").or_else(|| {
                cfg!(windows)
                    .then(|| std::env::var_os("USERPROFILE"))
                    .flatten()
            })
        })
    {
        return PathBuf::from(home).join(rest);
    }
    PathBuf::from(arg)
}

fn resolve_absolute(
    path: &Path,
    roots: &RootSet,
    dir_only: bool,
    sent: &str,
) -> Result<Resolved, PathError> {
    let (canonical, exists) = if dir_only {
        // The kernel refuses `file/` (ENOTDIR), which the lenient walk would take for a
        // missing path; resolve without the slash and judge the kind here.
        use crate::platform::os::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        let slashes = bytes
            .iter()
            .rev()
            .take_while(|&&b| b == b'/' || (cfg!(windows) && b == b'\\'))
            .count();
        // Keep one byte at least: `//` is the root directory.
        let trimmed = Path::new(std::ffi::OsStr::from_bytes(
            &bytes[..(bytes.len() - slashes).max(1)],
        ));
        let (canonical, exists) = canonicalize_lenient(trimmed)?;
        if exists && !canonical.is_dir() {
            return Err(found(path, canonical, Fault::NotADirectory));
        }
        (canonical, exists)
    } else {
        canonicalize_lenient(path)?
    };
    let root = roots.containing(&canonical);
    Ok(Resolved {
        given: path.to_path_buf(),
        path: canonical,
        exists,
        root,
        dir_only,
        sent: sent.to_string(),
    })
}

/// Canonicalises a path that may not exist yet: the longest existing prefix is resolved by
/// the OS (following symlinks), and the missing remainder is appended component by component.
/// `.` components are dropped; `..` inside the missing remainder is refused because the OS
/// could not follow it either. A dangling symlink counts as missing and is resolved through
/// its target text, so a write "through" it is judged where it would really land.
pub fn canonicalize_lenient(path: &Path) -> Result<(PathBuf, bool), PathError> {
    if let Ok(canonical) = canonicalize(path) {
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
                return Err(found(
                    path,
                    parent_place(&cursor),
                    Fault::Io("too many levels of symbolic links".into()),
                ));
            }
            let target = std::fs::read_link(&cursor)
                .map_err(|err| found(path, parent_place(&cursor), Fault::Io(err.to_string())))?;
            let parent = cursor.parent().unwrap_or(Path::new("/")).to_path_buf();
            cursor = parent.join(target);
            continue;
        }
        if let Ok(canonical) = canonicalize(&cursor) {
            let mut out = canonical;
            for component in missing.iter().rev() {
                if component == ".." {
                    return Err(found(path, out, Fault::DotDotAfterMissing));
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
                    return Err(found(
                        path,
                        path.to_path_buf(),
                        Fault::Io("no existing ancestor".into()),
                    ));
                }
            }
        };
        if name != "." {
            missing.push(name);
        }
        if !cursor.pop() {
            return Err(found(
                path,
                path.to_path_buf(),
                Fault::Io("no existing ancestor".into()),
            ));
        }
    }
}

#[cfg(all(test, unix))]
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
            Err(PathError::Found(Found {
                fault: Fault::DotDotAfterMissing,
                ..
            }))
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
        // An empty list from the client: no access, never the working directory.
        let (set, _) = choose_roots(Some(vec![]), &[], &base, &none);
        assert_eq!(set.source, RootSource::Client);
        assert!(set.roots.is_empty());
        let (set, _) = choose_roots(None, &[], &base, &none);
        assert_eq!(set.source, RootSource::WorkingDirectory);
        let confine = Confine::new(std::slice::from_ref(&b)).unwrap();
        let (set, warnings) =
            choose_roots(Some(vec![Root::new(a.clone(), None)]), &[], &base, &confine);
        assert_eq!(set.source, RootSource::Confine);
        assert_eq!(set.roots[0].canonical.as_deref(), Some(b.as_path()));
        assert_eq!(
            warnings.len(),
            1,
            "the client's root only: the working directory is not tried"
        );
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

    #[test]
    fn identity_containment_sees_the_directory_not_its_spelling() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let (app, app2) = (base.join("app"), base.join("app2"));
        std::fs::create_dir_all(app.join("src")).unwrap();
        std::fs::create_dir_all(&app2).unwrap();
        assert!(within_by_identity(&app, &app));
        assert!(within_by_identity(&app.join("src"), &app));
        assert!(within_by_identity(&app.join("src/new/deeper.rs"), &app));
        // `.` is another spelling of the same directory: the same identity.
        assert!(within_by_identity(
            &app.join(".").join("x"),
            &app.join("src/..")
        ));
        assert!(!within_by_identity(&app2.join("x"), &app));
        assert!(!within_by_identity(&base, &app));
        assert!(!within_by_identity(&app.join("x"), &base.join("missing")));
        // A symlink to the root is an entry of its own: not the root (links are never
        // followed here; canonical paths have none).
        symlink(&app, base.join("alias")).unwrap();
        assert!(!within_by_identity(&base.join("alias/src"), &app));
    }

    #[test]
    fn multibyte_characters_near_the_scheme_length_do_not_panic() {
        let tmp = tempfile::tempdir().unwrap();
        let app = tmp.path().join("app");
        std::fs::create_dir_all(app.join("docs")).unwrap();
        std::fs::write(app.join("docs/设计.md"), "x").unwrap();
        let roots = set(&[&app]);
        let found = resolve("docs/设计.md", &roots).unwrap();
        assert!(found.exists);
        for arg in ["éééé", "fileé", "file:/é", "file:é/", "ﬁle://x"] {
            let _ = resolve(arg, &roots);
        }
    }

    #[test]
    fn paths_are_taken_exactly_as_given() {
        let tmp = tempfile::tempdir().unwrap();
        let app = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::write(app.join("notes.txt"), "x").unwrap();
        let roots = set(&[&app]);
        // A trailing or leading space is part of the name, not trimmed away.
        let spaced = resolve("notes.txt ", &roots).unwrap();
        assert_eq!(spaced.path, app.join("notes.txt "));
        assert!(!spaced.exists);
        assert_eq!(
            resolve(" notes.txt", &roots).unwrap().path,
            app.join(" notes.txt")
        );
        // `%2e` is three characters of a name outside URIs.
        assert_eq!(resolve("%2e%2e", &roots).unwrap().path, app.join("%2e%2e"));
        // NFC and NFD spellings name different files.
        let nfc = resolve("caf\u{e9}", &roots).unwrap().path;
        let nfd = resolve("cafe\u{301}", &roots).unwrap().path;
        assert_ne!(nfc, nfd);
        // A trailing slash names a directory: refused on a file, kept as a flag otherwise.
        assert!(matches!(
            resolve("notes.txt/", &roots),
            Err(PathError::Found(Found {
                fault: Fault::NotADirectory,
                ..
            }))
        ));
        let missing = resolve("sub/", &roots).unwrap();
        assert!(missing.dir_only && !missing.exists);
        assert_eq!(missing.path, app.join("sub"));
        std::fs::create_dir(app.join("d")).unwrap();
        let dir = resolve("d/", &roots).unwrap();
        assert!(dir.dir_only && dir.exists);
        assert!(!resolve("notes.txt", &roots).unwrap().dir_only);
        assert!(resolve_entry("notes.txt/", &roots).is_err());
    }

    #[test]
    fn over_long_paths_are_refused_up_front() {
        let tmp = tempfile::tempdir().unwrap();
        let roots = set(&[tmp.path()]);
        let long_name = "n".repeat(NAME_MAX + 1);
        let err = resolve(&long_name, &roots).unwrap_err();
        assert!(
            matches!(
                err,
                PathError::TooLong {
                    component: Some(_),
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("NAME_MAX"), "{err}");
        // A name of exactly NAME_MAX bytes is fine.
        assert!(resolve(&"n".repeat(NAME_MAX), &roots).is_ok());
        let deep = "d/".repeat(PATH_MAX);
        let err = resolve(&deep, &roots).unwrap_err();
        assert!(
            matches!(
                err,
                PathError::TooLong {
                    component: None,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("PATH_MAX"), "{err}");
        let huge = format!("/{}", "x/".repeat(1_000_000));
        assert!(matches!(
            resolve(&huge, &roots),
            Err(PathError::TooLong { .. })
        ));
        let uri = format!("file:///{}", "%41".repeat(300));
        assert!(matches!(
            resolve(&uri, &roots),
            Err(PathError::TooLong { .. })
        ));
        assert!(matches!(resolve("a\0b", &roots), Err(PathError::Nul)));
    }

    #[test]
    fn path_text_keeps_bytes_that_are_not_utf8() {
        let plain = Path::new("/tmp/a b/设计.md");
        assert_eq!(path_text(plain), "/tmp/a b/设计.md");
        let raw = PathBuf::from(OsString::from_vec(b"/tmp/bad\xff name".to_vec()));
        let text = path_text(&raw);
        assert_eq!(path_from_file_uri(&text).unwrap(), raw);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Whatever the argument, resolving answers (a path or an error) without panicking,
        /// and a relative path is joined byte for byte: nothing trimmed or normalised.
        #[test]
        fn resolve_never_panics_and_keeps_names(arg in "\\PC{0,40}") {
            let tmp = tempfile::tempdir().unwrap();
            let base = std::fs::canonicalize(tmp.path()).unwrap();
            let roots = set(&[&base]);
            if let Ok(resolved) = resolve(&arg, &roots) {
                let plain = !arg.starts_with('/')
                    && !arg.starts_with("~/")
                    && !arg.to_ascii_lowercase().starts_with("file://")
                    && !arg.split('/').any(|c| c == "." || c == "..")
                    && !arg.contains("//")
                    && !arg.ends_with('/');
                if plain {
                    proptest::prop_assert_eq!(resolved.path, base.join(&arg));
                }
            }
        }
    }

    #[test]
    fn describe_is_bounded_however_many_roots() {
        let roots: Vec<Root> = (0..5000)
            .map(|i| Root {
                path: PathBuf::from(format!("/nonexistent/{}/{i}", "r".repeat(200))),
                canonical: None,
                name: None,
                is_file: false,
            })
            .collect();
        let text = RootSet::new(roots, RootSource::Client).describe();
        assert!(text.len() < 2 * DESCRIBE_MAX_BYTES, "{} bytes", text.len());
        assert!(
            text.ends_with(" and 4995 more (list_roots pages through them all)"),
            "{text}"
        );
        let one = RootSet::new(
            vec![Root {
                path: PathBuf::from("/a"),
                canonical: None,
                name: None,
                is_file: false,
            }],
            RootSource::Client,
        );
        assert_eq!(one.describe(), "/a");
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    #[test]
    fn drive_letter_and_unc_uris() {
        assert_eq!(
            path_from_file_uri("file:///C:/work/a%20b.rs").unwrap(),
            PathBuf::from(r"C:\work\a b.rs")
        );
        assert_eq!(
            path_from_file_uri("file:///c%3A/x").unwrap(),
            PathBuf::from(r"c:\x")
        );
        assert_eq!(
            path_from_file_uri("file://server/share/x").unwrap(),
            PathBuf::from(r"\\server\share\x")
        );
        assert_eq!(
            path_from_file_uri("file:///usr/lib"),
            Err(UriError::NotAbsolute)
        );
        assert_eq!(
            file_uri_from_path(Path::new(r"\\?\C:\work\a b.rs")),
            "file:///C:/work/a%20b.rs"
        );
        assert_eq!(
            file_uri_from_path(Path::new(r"\\?\UNC\server\share\x")),
            "file://server/share/x"
        );
    }

    #[test]
    fn canonical_paths_are_kept_and_shown_in_their_ordinary_form() {
        let tmp = tempfile::tempdir().unwrap();
        let canonical = canonicalize(tmp.path()).unwrap();
        let text = canonical.to_str().unwrap();
        assert!(crate::platform::winpath::has_drive(text), "{text}");
        let root = Root::new(tmp.path().to_path_buf(), None);
        assert_eq!(root.effective(), canonical.as_path());
        assert_eq!(path_text(Path::new(r"\\?\C:\work\x")), r"C:\work\x");
        assert_eq!(path_text(Path::new(r"\\?\C:\work\x.")), r"\\?\C:\work\x.");
        std::fs::write(canonical.join("f.rs"), "x").unwrap();
        let set = RootSet::new(vec![root], RootSource::CommandLine);
        let resolved = resolve("f.rs", &set).unwrap();
        assert_eq!(resolved.path, canonical.join("f.rs"));
        assert_eq!(resolved.root, Some(0));
        // A name only the verbatim form can spell keeps that form, where the system reports
        // such a name at all (Wine creates `odd.` but reports its final path as `odd`; the
        // rule itself is `winpath::exact_plain`, tested on every platform).
        let odd = format!(r"\\?\{text}\odd.");
        if std::fs::write(&odd, "x").is_ok()
            && std::fs::canonicalize(&odd)
                .is_ok_and(|real| real.to_string_lossy().ends_with("odd."))
        {
            let kept = canonicalize(Path::new(&odd)).unwrap();
            assert!(kept.to_str().unwrap().starts_with(r"\\?\"), "{kept:?}");
        }
    }

    #[test]
    fn containment_ignores_case_and_verbatim_prefixes() {
        let tmp = tempfile::tempdir().unwrap();
        let canonical = std::fs::canonicalize(tmp.path()).unwrap();
        assert!(
            canonical.to_str().unwrap().starts_with(r"\\?\"),
            "{canonical:?}"
        );
        let root = Root::new(tmp.path().to_path_buf(), None);
        let upper = PathBuf::from(canonical.to_str().unwrap().to_uppercase()).join("x");
        assert!(root.contains(&upper));
        let plain = PathBuf::from(canonical.to_str().unwrap().trim_start_matches(r"\\?\"));
        assert!(root.contains(&plain.join("y")));
        let sibling = PathBuf::from(format!("{}2", canonical.display()));
        assert!(!root.contains(&sibling));
        let set = RootSet::new(vec![root], RootSource::CommandLine);
        let mixed = format!("{}/sub\\f.rs", plain.display());
        let resolved = resolve(&mixed, &set).unwrap();
        assert_eq!(resolved.root, Some(0), "{resolved:?}");
    }
}
