//! Moves and renames that never overwrite: the `move_file` tool's domain code.
//!
//! API: [`move_no_replace`]`(src, dst) -> Result<(), MoveError>`.
//!
//! The no-clobber guarantee comes from the kernel, not from a check: one
//! `renameat2(RENAME_NOREPLACE)` (Linux) / `renameatx_np(RENAME_EXCL)` (macOS) call through
//! rustix, which fails with `EEXIST` if anything exists at `dst` at that instant. There is no
//! "does dst exist?" pre-check that a concurrent writer could race (the reference server's
//! bug). When the filesystem or platform cannot do a no-replace rename we return
//! [`MoveError::Unsupported`] instead of falling back to a racy check-then-rename.
//!
//! Behaviour:
//! - works for files, directories and symlinks (a symlink is moved as a link, not followed;
//!   a relative link target is not rewritten and may dangle after the move);
//! - `dst`'s parent must exist ([`MoveError::NoParent`] names it; no implicit `mkdir -p`);
//! - `src` and `dst` must be on the same filesystem (`EXDEV` → [`MoveError::CrossesDevices`];
//!   a copy+delete fallback is not atomic and is deliberately not done here);
//! - after the rename both parent directories are fsynced through the handles the rename
//!   used (best effort; never re-opened by path);
//! - a move holds the locks of both paths (`lock.rs`): no write or edit of either by this
//!   process runs meanwhile.
//!
//! Other failures are checked only after the rename failed, to word the error; they never
//! decide whether to rename.

use std::io;
use std::path::{Path, PathBuf};

/// Why [`move_no_replace`] did not move: what the paths are (the cases a caller can act
/// on), what the filesystem cannot do, or the system's error. Nothing was moved.
#[derive(Debug)]
pub enum MoveError {
    /// Something is at `dst` (it may be `src` itself, `same`): nothing is ever overwritten.
    Exists {
        src: PathBuf,
        dst: PathBuf,
        same: bool,
    },
    /// `dst`'s parent directory does not exist (it is not created).
    NoParent {
        src: PathBuf,
        dst: PathBuf,
        parent: PathBuf,
    },
    /// Nothing is at `src`.
    NoSource { src: PathBuf },
    /// A directory moved into itself (`dst` lies inside `src`).
    IntoItself { src: PathBuf, dst: PathBuf },
    /// `path` (`src` or `dst`) has no parent or no final name.
    NotMovable {
        src: PathBuf,
        dst: PathBuf,
        path: PathBuf,
    },
    /// `src` and `dst` are on different filesystems: a copy-then-delete is not atomic.
    CrossesDevices { src: PathBuf, dst: PathBuf },
    /// A path component is not a directory, or a directory would replace a file (or a
    /// file a directory).
    WrongKind {
        src: PathBuf,
        dst: PathBuf,
        source: io::Error,
    },
    /// The filesystem cannot rename without replacing.
    Unsupported {
        src: PathBuf,
        dst: PathBuf,
        source: io::Error,
    },
    /// Another error of the operating system.
    Io {
        src: PathBuf,
        dst: PathBuf,
        source: io::Error,
    },
}

impl std::fmt::Display for MoveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = crate::roots::path_display;
        match self {
            MoveError::Exists { src, dst, same } => write!(
                f,
                "cannot move {} to {}: the destination already exists{}",
                text(src),
                text(dst),
                if *same {
                    " (source and destination are the same path)"
                } else {
                    ""
                }
            ),
            MoveError::NoParent { src, dst, parent } => write!(
                f,
                "cannot move {} to {}: the destination directory {} does not exist",
                text(src),
                text(dst),
                text(parent)
            ),
            MoveError::NoSource { src } => {
                write!(f, "cannot move {}: it does not exist", text(src))
            }
            MoveError::IntoItself { src, dst } => {
                write!(f, "cannot move {} into itself ({})", text(src), text(dst))
            }
            MoveError::NotMovable { src, dst, path } => write!(
                f,
                "cannot move {} to {}: {} is not a movable path",
                text(src),
                text(dst),
                text(path)
            ),
            MoveError::CrossesDevices { src, dst } => write!(
                f,
                "cannot move {} to {}: they are on different filesystems, and a \
                 copy-then-delete move is not atomic so it is not attempted",
                text(src),
                text(dst)
            ),
            MoveError::WrongKind { src, dst, source } => write!(
                f,
                "cannot move {} to {}: a path component is not a directory, or a directory \
                 would replace a file ({source})",
                text(src),
                text(dst)
            ),
            MoveError::Unsupported { src, dst, source } => write!(
                f,
                "cannot move {} to {}: this filesystem does not support renaming without \
                 replacing (RENAME_NOREPLACE), and rootgrep will not fall back to a racy \
                 exists-check ({source})",
                text(src),
                text(dst)
            ),
            MoveError::Io { src, dst, source } => {
                write!(f, "cannot move {} to {}: {source}", text(src), text(dst))
            }
        }
    }
}

impl std::error::Error for MoveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MoveError::WrongKind { source, .. }
            | MoveError::Unsupported { source, .. }
            | MoveError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Rename `src` to `dst`, failing if `dst` exists (file, directory, or dangling symlink).
/// Holds both paths' locks (`lock.rs`), so no write or edit of either runs meanwhile.
pub fn move_no_replace(src: &Path, dst: &Path) -> Result<(), MoveError> {
    let _held = super::lock::lock(&[src, dst]);
    rename_noreplace(src, dst)
}

/// Renames without replacing, relative to handles on both parent directories opened without
/// following any symlink (`safe::rename_noreplace_at`): a directory swapped for a link after
/// the paths were checked cannot move anything out of (or into) the workspace. Then both
/// handles are fsynced — the very directories renamed in, never re-opened by path (a FIFO
/// swapped in would block that open for ever). Every system error is worded by [`explain`].
fn rename_noreplace(src: &Path, dst: &Path) -> Result<(), MoveError> {
    let explained = |e| explain(e, src, dst);
    let split = |path: &Path| -> Result<(super::safe::DirFd, std::ffi::OsString), MoveError> {
        match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => {
                let dir = super::safe::open_dir(parent).map_err(explained)?;
                Ok((dir, name.to_os_string()))
            }
            _ => Err(MoveError::NotMovable {
                src: src.to_path_buf(),
                dst: dst.to_path_buf(),
                path: path.to_path_buf(),
            }),
        }
    };
    let (src_dir, src_name) = split(src)?;
    let (dst_dir, dst_name) = split(dst)?;
    super::safe::rename_noreplace_at(&src_dir, &src_name, &dst_dir, &dst_name)
        .map_err(explained)?;
    super::safe::fsync_dir(&src_dir);
    if src.parent() != dst.parent() {
        super::safe::fsync_dir(&dst_dir);
    }
    Ok(())
}

/// Turn a failed rename into an error the caller can act on: first what the paths are (the
/// destination exists, a directory into itself, something missing), then what the
/// filesystem cannot do; else the system's error, naming both paths.
fn explain(e: io::Error, src: &Path, dst: &Path) -> MoveError {
    if let Some(err) = about_the_paths(&e, src, dst) {
        return err;
    }
    not_possible_here(e, src, dst)
}

#[cfg(unix)]
use rustix::io::Errno;
#[cfg(windows)]
use win_errors as Errno;

/// Whether `e` is the system's error `code`.
#[cfg(unix)]
fn is(e: &io::Error, code: Errno) -> bool {
    e.raw_os_error() == Some(code.raw_os_error())
}

#[cfg(windows)]
fn is(e: &io::Error, code: i32) -> bool {
    e.raw_os_error() == Some(code)
}

/// The rename failed because of what the paths name: something at the destination, a
/// directory moved into itself (as Windows reports it), a missing source or destination
/// directory.
fn about_the_paths(e: &io::Error, src: &Path, dst: &Path) -> Option<MoveError> {
    let (s, d) = (src.to_path_buf(), dst.to_path_buf());
    if e.kind() == io::ErrorKind::AlreadyExists || is(e, Errno::EXIST) || is(e, Errno::NOTEMPTY) {
        let same = src == dst;
        return Some(MoveError::Exists {
            src: s,
            dst: d,
            same,
        });
    }
    // Windows reports a directory moved into itself as a sharing violation (the destination's
    // parent, inside the source, is held open) or an invalid parameter.
    #[cfg(windows)]
    if src != dst && dst.starts_with(src) {
        return Some(MoveError::IntoItself { src: s, dst: d });
    }
    if e.kind() == io::ErrorKind::NotFound {
        if std::fs::symlink_metadata(src).is_err() {
            return Some(MoveError::NoSource { src: s });
        }
        if let Some(parent) = dst.parent()
            && !parent.is_dir()
        {
            let parent = parent.to_path_buf();
            return Some(MoveError::NoParent {
                src: s,
                dst: d,
                parent,
            });
        }
    }
    None
}

/// The rename failed because the filesystem cannot do it: across devices, a directory into
/// itself, a file and a directory in each other's place, no rename without replacing; else
/// the system's error, naming both paths.
fn not_possible_here(e: io::Error, src: &Path, dst: &Path) -> MoveError {
    let (src, dst) = (src.to_path_buf(), dst.to_path_buf());
    if is(&e, Errno::XDEV) {
        return MoveError::CrossesDevices { src, dst };
    }
    if is(&e, Errno::INVAL) && dst.starts_with(&src) {
        return MoveError::IntoItself { src, dst };
    }
    if is(&e, Errno::NOTDIR) || is(&e, Errno::ISDIR) {
        return MoveError::WrongKind {
            src,
            dst,
            source: e,
        };
    }
    if e.kind() == io::ErrorKind::Unsupported
        || is(&e, Errno::INVAL)
        || is(&e, Errno::NOSYS)
        || is(&e, Errno::OPNOTSUPP)
    {
        return MoveError::Unsupported {
            src,
            dst,
            source: e,
        };
    }
    MoveError::Io {
        src,
        dst,
        source: e,
    }
}

/// The Win32 error codes that play the part of the errno values `explain` looks for
/// (`-1`: no Win32 counterpart).
#[cfg(windows)]
#[allow(non_snake_case, dead_code)]
mod win_errors {
    pub(crate) const EXIST: i32 = 183; // ERROR_ALREADY_EXISTS
    pub(crate) const NOTEMPTY: i32 = 145; // ERROR_DIR_NOT_EMPTY
    pub(crate) const XDEV: i32 = 17; // ERROR_NOT_SAME_DEVICE
    pub(crate) const INVAL: i32 = 87; // ERROR_INVALID_PARAMETER
    pub(crate) const NOTDIR: i32 = 267; // ERROR_DIRECTORY
    pub(crate) const ISDIR: i32 = -1;
    pub(crate) const NOSYS: i32 = 50; // ERROR_NOT_SUPPORTED
    pub(crate) const OPNOTSUPP: i32 = -1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn moves_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, "A").unwrap();
        move_no_replace(&a, &b).unwrap();
        assert!(!a.exists());
        assert_eq!(fs::read(&b).unwrap(), b"A");
    }

    #[test]
    fn refuses_to_overwrite_a_file_and_both_stay_intact() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, "A").unwrap();
        fs::write(&b, "B").unwrap();
        let err = move_no_replace(&a, &b).unwrap_err();
        assert!(err.to_string().contains(&b.display().to_string()), "{err}");
        assert!(
            matches!(err, MoveError::Exists { same: false, .. }),
            "{err:?}"
        );
        assert_eq!(fs::read(&a).unwrap(), b"A");
        assert_eq!(fs::read(&b).unwrap(), b"B");
    }

    #[test]
    fn refuses_to_replace_an_empty_directory() {
        // Plain rename(2) silently replaces an empty directory with a directory.
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::create_dir(&a).unwrap();
        fs::create_dir(&b).unwrap();
        let err = move_no_replace(&a, &b).unwrap_err();
        assert!(matches!(err, MoveError::Exists { .. }), "{err:?}");
        assert!(a.is_dir() && b.is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_to_replace_a_dangling_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, "A").unwrap();
        std::os::unix::fs::symlink("nowhere", &b).unwrap();
        let err = move_no_replace(&a, &b).unwrap_err();
        assert!(matches!(err, MoveError::Exists { .. }), "{err:?}");
        assert!(a.exists());
    }

    #[test]
    fn moves_a_directory_with_contents() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir_all(src.join("inner")).unwrap();
        fs::write(src.join("inner/f.txt"), "F").unwrap();
        fs::create_dir(dir.path().join("into")).unwrap();
        let dst = dir.path().join("into/moved");
        move_no_replace(&src, &dst).unwrap();
        assert!(!src.exists());
        assert_eq!(fs::read(dst.join("inner/f.txt")).unwrap(), b"F");
    }

    #[test]
    fn missing_destination_parent_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::write(&a, "A").unwrap();
        let parent = dir.path().join("nope");
        let err = move_no_replace(&a, &parent.join("b")).unwrap_err();
        assert!(matches!(err, MoveError::NoParent { .. }), "{err:?}");
        assert!(
            err.to_string().contains(&parent.display().to_string()),
            "{err}"
        );
        assert!(a.exists());
    }

    #[test]
    fn missing_source_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("ghost");
        let err = move_no_replace(&a, &dir.path().join("b")).unwrap_err();
        assert!(matches!(err, MoveError::NoSource { .. }), "{err:?}");
        assert!(err.to_string().contains("ghost"), "{err}");
    }

    #[test]
    fn directory_into_itself_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::create_dir(&a).unwrap();
        let err = move_no_replace(&a, &a.join("sub")).unwrap_err();
        assert!(matches!(err, MoveError::IntoItself { .. }), "{err:?}");
        assert!(err.to_string().contains("into itself"), "{err}");
        assert!(a.is_dir());
    }

    #[test]
    fn each_case_reads_as_the_answers_say_it() {
        let p = |s: &str| PathBuf::from(s);
        let (src, dst) = (p("/w/a"), p("/w/b"));
        let cases = [
            (
                MoveError::Exists {
                    src: src.clone(),
                    dst: dst.clone(),
                    same: false,
                },
                "cannot move /w/a to /w/b: the destination already exists",
            ),
            (
                MoveError::NoParent {
                    src: src.clone(),
                    dst: p("/w/no/b"),
                    parent: p("/w/no"),
                },
                "cannot move /w/a to /w/no/b: the destination directory /w/no does not exist",
            ),
            (
                MoveError::NoSource { src: src.clone() },
                "cannot move /w/a: it does not exist",
            ),
            (
                MoveError::IntoItself {
                    src: src.clone(),
                    dst: p("/w/a/sub"),
                },
                "cannot move /w/a into itself (/w/a/sub)",
            ),
            (
                MoveError::CrossesDevices {
                    src: src.clone(),
                    dst: dst.clone(),
                },
                "cannot move /w/a to /w/b: they are on different filesystems, and a \
                 copy-then-delete move is not atomic so it is not attempted",
            ),
            (
                MoveError::Io {
                    src,
                    dst,
                    source: io::Error::other("disk on fire"),
                },
                "cannot move /w/a to /w/b: disk on fire",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), text);
        }
    }
}
