//! The version of a file an edit read, and the check just before its replacement is
//! renamed into place that the path still names that file with that content (no lost
//! edits: a write by another process in between is caught, and nothing is written: the
//! write's error is then [`WriteError::ChangedMeanwhile`](super::write::WriteError)).

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// The version of a file an edit read: its replacement is written only while the path still
/// names that file with that content ([`write_locked`](super::write::write_locked)).
pub(crate) struct ReadVersion<'a> {
    /// The handle the content was read from, held up to the rename where the platform lets
    /// a file be replaced while it is open (Unix); `None` on Windows, where an open handle
    /// makes the replacing rename fail: there the file is opened again for the check and
    /// closed before the rename.
    pub file: Option<&'a File>,
    /// That handle's metadata when it was read.
    pub meta: &'a Metadata,
    /// What was read.
    pub bytes: &'a [u8],
}

/// Whether `dir/name` is still the file `read` was read from, holding exactly what was
/// read: its metadata now when it is, `None` when not. The content is compared first (the
/// slow part), then the handle's metadata, then the name's identity, so the last look is
/// the one closest to the rename.
pub(crate) fn still_as_read(
    dir: &super::safe::DirFd,
    name: &std::ffi::OsStr,
    path: &Path,
    read: &ReadVersion<'_>,
) -> io::Result<Option<Metadata>> {
    use crate::platform::os::MetadataExt;
    let reopened;
    let file = match read.file {
        Some(file) => file,
        None => {
            reopened = match super::safe::open_read(path) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e),
            };
            &reopened
        }
    };
    if read_back(file, read.bytes.len())? != read.bytes {
        return Ok(None);
    }
    let now = file.metadata()?;
    if now.len() != read.meta.len()
        || now.modified().ok() != read.meta.modified().ok()
        || changed_status(read.meta, &now)
    {
        return Ok(None);
    }
    match super::safe::identity_at(dir, name) {
        Ok(id) if id == (now.dev(), now.ino()) => Ok(Some(now)),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether the inode's status changed (`ctime`: any write, chmod, chown or link).
#[cfg(unix)]
fn changed_status(before: &Metadata, now: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (before.ctime(), before.ctime_nsec()) != (now.ctime(), now.ctime_nsec())
}

#[cfg(not(unix))]
fn changed_status(_before: &Metadata, _now: &Metadata) -> bool {
    false
}

/// The file's content from its start, up to `len + 1` bytes (one more than expected, so
/// growth shows), read by offset so the handle's position does not matter.
fn read_back(file: &File, len: usize) -> io::Result<Vec<u8>> {
    let mut out = vec![0; len + 1];
    let mut got = 0;
    while got < out.len() {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(file, &mut out[got..], got as u64);
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(file, &mut out[got..], got as u64);
        match n {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out.truncate(got);
    Ok(out)
}
