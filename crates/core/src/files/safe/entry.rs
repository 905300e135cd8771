//! What a directory read through a held handle yields ([`HeldEntry`], [`HeldKind`]), and
//! the error for a symlink met where none may be: shared by the Unix and the Windows
//! openers, below both.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a directory entry is, as the entry itself says (never followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldKind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    BlockDevice,
    CharDevice,
    Unknown,
}

/// One entry of a directory read through its held handle ([`DirHandle::entries`](super::DirHandle::entries)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldEntry {
    pub name: OsString,
    pub kind: HeldKind,
    /// Size of the entry itself (a symlink's is its target text's).
    pub len: u64,
    pub modified: Option<SystemTime>,
    /// For a symlink: its literal target, and what that target is when it can be reached
    /// (`None`: dangling, a loop, or not permitted). Reported only; never read through.
    pub link: Option<(PathBuf, Option<HeldKind>)>,
}

/// The error for a symlink met where none may be.
pub(super) fn swapped(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{}: a symbolic link appeared on the path after it was checked; refused",
            crate::roots::path_text(path)
        ),
    )
}
