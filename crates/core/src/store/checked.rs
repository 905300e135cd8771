//! Remembering that a stored file's checksum held, so that the next load need not read
//! the whole file again to know it: beside the file of each kind, `<kind>.checked` holds
//! the file's identity when its checksum last held (device, inode, size, mtime and change
//! time) and that checksum. A file written or replaced since has another change time (no
//! program can set one back), so only a file whose bytes changed with no trace in its
//! metadata (the disk's own damage) would be trusted unread; its tables are read with
//! bounds checks, so that can make an answer wrong, never unsafe (DECISIONS).
//!
//! Unix only: elsewhere a load reads the file into memory anyway, and its checksum with it.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// The remembered identity: a tag, then eight numbers.
#[cfg(unix)]
const TAG: &[u8; 8] = b"RGCHECK1";
#[cfg(unix)]
const LEN: usize = 8 + 8 * 8;

/// Where the memo of the stored file at `path` lives.
pub(super) fn memo_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".checked");
    path.with_file_name(name)
}

/// Whether a memo's name is one [`memo_path`] gives a stored file of `kind`.
pub(super) fn is_memo_of(name: &str, kind_name: &str) -> bool {
    name.strip_suffix(".checked") == Some(kind_name)
}

#[cfg(unix)]
fn memo(meta: &Metadata, sum: u64) -> [u8; LEN] {
    use std::os::unix::fs::MetadataExt;
    let numbers = [
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime() as u64,
        meta.mtime_nsec() as u64,
        meta.ctime() as u64,
        meta.ctime_nsec() as u64,
        sum,
    ];
    let mut out = [0u8; LEN];
    out[..8].copy_from_slice(TAG);
    for (at, n) in numbers.iter().enumerate() {
        out[8 + 8 * at..16 + 8 * at].copy_from_slice(&n.to_le_bytes());
    }
    out
}

/// Whether the file at `path` (its metadata `meta`, its header's checksum `sum`) is the
/// one whose checksum held last.
#[cfg(unix)]
pub(super) fn held_before(path: &Path, meta: &Metadata, sum: u64) -> bool {
    use std::io::Read;
    let Ok(file) = super::format::open_private(&memo_path(path), false) else {
        return false;
    };
    // One byte more than a memo has: a longer file is not one.
    let mut bytes = Vec::with_capacity(LEN + 1);
    let read = file.take(LEN as u64 + 1).read_to_end(&mut bytes);
    read.is_ok() && bytes == memo(meta, sum)
}

#[cfg(not(unix))]
pub(super) fn held_before(_path: &Path, _meta: &Metadata, _sum: u64) -> bool {
    false
}

/// Remembers that the checksum of the file at `path` held (best effort: a store that
/// cannot be written only checks again next time).
#[cfg(unix)]
pub(super) fn remember(path: &Path, meta: &Metadata, sum: u64) {
    use std::io::Write;
    let memo_at = memo_path(path);
    let temp = super::format::temp_beside(&memo_at);
    let written = super::format::create_private(&temp)
        .and_then(|mut file| file.write_all(&memo(meta, sum)))
        .and_then(|()| super::format::rename_over(&temp, &memo_at));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
}

#[cfg(not(unix))]
pub(super) fn remember(_path: &Path, _meta: &Metadata, _sum: u64) {}
