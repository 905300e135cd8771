//! Resolving a path argument against the roots: [`resolve`] and [`resolve_entry`], their
//! result [`Resolved`], and [`PathError`], the mistakes a caller can fix. Paths no system
//! call could succeed on are refused by shape first ([`check_path_shape`]).

use super::place::{canonicalize, path_text};
use super::set::RootSet;
use super::uri::{UriError, path_from_file_uri, strip_prefix_ignore_case};
use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Longest path the kernel accepts, in bytes, including the terminating NUL (Linux
/// `PATH_MAX`). Longer paths are refused before any system call: resolving one takes the
/// kernel seconds of work only to fail with `ENAMETOOLONG`.
pub const PATH_MAX: usize = 4096;
/// Longest name of one directory entry, in bytes (Linux `NAME_MAX`).
pub(crate) const NAME_MAX: usize = 255;

/// Refuses paths no filesystem call could succeed on: a NUL byte, more than [`PATH_MAX`]
/// bytes in all, or a component longer than [`NAME_MAX`] bytes.
pub(crate) fn check_path_shape(path: &Path) -> Result<(), PathError> {
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
    if let Some(why) = given
        .to_str()
        .and_then(crate::platform::winpath::refused_name)
    {
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
pub(crate) fn canonicalize_lenient(path: &Path) -> Result<(PathBuf, bool), PathError> {
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
