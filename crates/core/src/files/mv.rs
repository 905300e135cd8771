//! Moves and renames that never overwrite: the `move_file` tool's domain code.
//!
//! API: [`move_no_replace`]`(src, dst) -> io::Result<()>`.
//!
//! The no-clobber guarantee comes from the kernel, not from a check: one
//! `renameat2(RENAME_NOREPLACE)` (Linux) / `renameatx_np(RENAME_EXCL)` (macOS) call through
//! rustix, which fails with `EEXIST` if anything exists at `dst` at that instant. There is no
//! "does dst exist?" pre-check that a concurrent writer could race (the reference server's
//! bug). When the filesystem or platform cannot do a no-replace rename we return an
//! `Unsupported` error instead of falling back to a racy check-then-rename.
//!
//! Behaviour:
//! - works for files, directories and symlinks (a symlink is moved as a link, not followed;
//!   a relative link target is not rewritten and may dangle after the move);
//! - `dst`'s parent must exist (a `NotFound` error naming it; no implicit `mkdir -p`);
//! - `src` and `dst` must be on the same filesystem (`EXDEV` → `CrossesDevices` error; a
//!   copy+delete fallback is not atomic and is deliberately not done here);
//! - after the rename both parent directories are fsynced through the handles the rename
//!   used (best effort; never re-opened by path);
//! - a move holds the locks of both paths (`lock.rs`): no write or edit of either by this
//!   process runs meanwhile.
//!
//! Other failures are checked only after the rename failed, to word the error; they never
//! decide whether to rename.

use std::io;
use std::path::{Path, PathBuf};

/// A move refused for a reason the caller can act on: the error inside the `io::Error`
/// [`move_no_replace`] returns (kinds `AlreadyExists` and `NotFound`), so the caller can
/// say what to do instead.
#[derive(Debug)]
pub enum MoveRefused {
    /// Something is at `dst` (it may be `src` itself): nothing is ever overwritten.
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
}

impl MoveRefused {
    /// The `MoveRefused` inside `err`, if that is what it is.
    pub fn of(err: &io::Error) -> Option<&MoveRefused> {
        err.get_ref()?.downcast_ref()
    }

    fn error(self) -> io::Error {
        let kind = match self {
            MoveRefused::Exists { .. } => io::ErrorKind::AlreadyExists,
            MoveRefused::NoParent { .. } => io::ErrorKind::NotFound,
        };
        io::Error::new(kind, self)
    }
}

impl std::fmt::Display for MoveRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Paths escaped for display: a newline in a name cannot forge a line.
        let text =
            |p: &Path| crate::quote::escape_for_display(&crate::roots::path_text(p)).into_owned();
        match self {
            MoveRefused::Exists { src, dst, same } => write!(
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
            MoveRefused::NoParent { src, dst, parent } => write!(
                f,
                "cannot move {} to {}: the destination directory {} does not exist",
                text(src),
                text(dst),
                text(parent)
            ),
        }
    }
}

impl std::error::Error for MoveRefused {}

/// Rename `src` to `dst`, failing if `dst` exists (file, directory, or dangling symlink).
/// Holds both paths' locks (`lock.rs`), so no write or edit of either runs meanwhile.
pub fn move_no_replace(src: &Path, dst: &Path) -> io::Result<()> {
    let _held = super::lock::lock(&[src, dst]);
    rename_noreplace(src, dst).map_err(|e| explain(e, src, dst))
}

/// Renames without replacing, relative to handles on both parent directories opened without
/// following any symlink (`safe::rename_noreplace_at`): a directory swapped for a link after
/// the paths were checked cannot move anything out of (or into) the workspace. Then both
/// handles are fsynced — the very directories renamed in, never re-opened by path (a FIFO
/// swapped in would block that open for ever).
fn rename_noreplace(src: &Path, dst: &Path) -> io::Result<()> {
    let split = |path: &Path| -> io::Result<(super::safe::DirFd, std::ffi::OsString)> {
        match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => Ok((super::safe::open_dir(parent)?, name.to_os_string())),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a movable path",
                    crate::quote::escape_for_display(&crate::roots::path_text(path))
                ),
            )),
        }
    };
    let (src_dir, src_name) = split(src)?;
    let (dst_dir, dst_name) = split(dst)?;
    super::safe::rename_noreplace_at(&src_dir, &src_name, &dst_dir, &dst_name)?;
    super::safe::fsync_dir(&src_dir);
    if src.parent() != dst.parent() {
        super::safe::fsync_dir(&dst_dir);
    }
    Ok(())
}

/// Turn a failed rename into an error the caller can act on: first what the paths are (the
/// destination exists, a directory into itself, something missing), then what the
/// filesystem cannot do; else the system's error, naming both paths.
fn explain(e: io::Error, src: &Path, dst: &Path) -> io::Error {
    if let Some(err) = about_the_paths(&e, src, dst) {
        return err;
    }
    if let Some(err) = not_possible_here(&e, src, dst) {
        return err;
    }
    let (s, d) = (
        crate::quote::escape_for_display(&crate::roots::path_text(src)).into_owned(),
        crate::quote::escape_for_display(&crate::roots::path_text(dst)).into_owned(),
    );
    io::Error::new(e.kind(), format!("cannot move {s} to {d}: {e}"))
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
fn about_the_paths(e: &io::Error, src: &Path, dst: &Path) -> Option<io::Error> {
    if e.kind() == io::ErrorKind::AlreadyExists || is(e, Errno::EXIST) || is(e, Errno::NOTEMPTY) {
        let refused = MoveRefused::Exists {
            src: src.to_path_buf(),
            dst: dst.to_path_buf(),
            same: src == dst,
        };
        return Some(refused.error());
    }
    // Windows reports a directory moved into itself as a sharing violation (the destination's
    // parent, inside the source, is held open) or an invalid parameter.
    #[cfg(windows)]
    if src != dst && dst.starts_with(src) {
        return Some(into_itself(src, dst));
    }
    if e.kind() == io::ErrorKind::NotFound {
        if std::fs::symlink_metadata(src).is_err() {
            let s = crate::quote::escape_for_display(&crate::roots::path_text(src)).into_owned();
            return Some(io::Error::new(
                io::ErrorKind::NotFound,
                format!("cannot move {s}: it does not exist"),
            ));
        }
        if let Some(parent) = dst.parent()
            && !parent.is_dir()
        {
            let refused = MoveRefused::NoParent {
                src: src.to_path_buf(),
                dst: dst.to_path_buf(),
                parent: parent.to_path_buf(),
            };
            return Some(refused.error());
        }
    }
    None
}

/// The rename failed because the filesystem cannot do it: across devices, a directory into
/// itself, a file and a directory in each other's place, no rename without replacing.
fn not_possible_here(e: &io::Error, src: &Path, dst: &Path) -> Option<io::Error> {
    let (s, d) = (
        crate::quote::escape_for_display(&crate::roots::path_text(src)).into_owned(),
        crate::quote::escape_for_display(&crate::roots::path_text(dst)).into_owned(),
    );
    if is(e, Errno::XDEV) {
        return Some(io::Error::new(
            io::ErrorKind::CrossesDevices,
            format!(
                "cannot move {s} to {d}: they are on different filesystems, and a \
                 copy-then-delete move is not atomic so it is not attempted"
            ),
        ));
    }
    if is(e, Errno::INVAL) && dst.starts_with(src) {
        return Some(into_itself(src, dst));
    }
    if is(e, Errno::NOTDIR) || is(e, Errno::ISDIR) {
        return Some(io::Error::new(
            e.kind(),
            format!(
                "cannot move {s} to {d}: a path component is not a directory, or a directory would replace a file ({e})"
            ),
        ));
    }
    if e.kind() == io::ErrorKind::Unsupported
        || is(e, Errno::INVAL)
        || is(e, Errno::NOSYS)
        || is(e, Errno::OPNOTSUPP)
    {
        return Some(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "cannot move {s} to {d}: this filesystem does not support renaming without \
                 replacing (RENAME_NOREPLACE), and rootgrep will not fall back to a racy \
                 exists-check ({e})"
            ),
        ));
    }
    None
}

fn into_itself(src: &Path, dst: &Path) -> io::Error {
    let (s, d) = (
        crate::quote::escape_for_display(&crate::roots::path_text(src)).into_owned(),
        crate::quote::escape_for_display(&crate::roots::path_text(dst)).into_owned(),
    );
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("cannot move {s} into itself ({d})"),
    )
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
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(err.to_string().contains(&b.display().to_string()), "{err}");
        assert!(
            matches!(
                MoveRefused::of(&err),
                Some(MoveRefused::Exists { same: false, .. })
            ),
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
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
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
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
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
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(
            matches!(MoveRefused::of(&err), Some(MoveRefused::NoParent { .. })),
            "{err:?}"
        );
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
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains("ghost"), "{err}");
    }

    #[test]
    fn directory_into_itself_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        fs::create_dir(&a).unwrap();
        let err = move_no_replace(&a, &a.join("sub")).unwrap_err();
        assert!(err.to_string().contains("into itself"), "{err}");
        assert!(a.is_dir());
    }
}
