//! Listing a held directory on Windows: its entries read from the handle
//! (`GetFileInformationByHandleEx`), so they are the checked directory's even when its path
//! now names another.

use std::io;
use std::os::windows::ffi::OsStringExt as _;
use std::path::Path;
use std::time::Duration;

use super::open::{DirFd, open_dir};
use crate::files::safe::entry::{HeldEntry, HeldKind};

/// A directory held open and listed from its handle.
pub(crate) struct DirHandle {
    dir: DirFd,
}

impl DirHandle {
    pub fn open(dir: &Path) -> io::Result<DirHandle> {
        Ok(DirHandle {
            dir: open_dir(dir)?,
        })
    }

    /// The entries, read from the held handle (`FileIdBothDirectoryInfo`), so they are
    /// this directory's even when its path now names another. Kinds come from the entry's
    /// own attributes: a name-surrogate reparse point (symlink, junction) is a link. For a
    /// link, its target text and what that reaches are looked up by path: reported only,
    /// never read through.
    #[allow(unsafe_code)]
    pub fn entries(&self) -> io::Result<Vec<HeldEntry>> {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Foundation::ERROR_NO_MORE_FILES;
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT, FILE_ID_BOTH_DIR_INFO,
            FileIdBothDirectoryInfo, FileIdBothDirectoryRestartInfo, GetFileInformationByHandleEx,
        };
        /// Reparse tags with this bit name another file (symlinks, junctions); others
        /// (cloud files, deduplication) are the file itself.
        const NAME_SURROGATE: u32 = 0x2000_0000;
        const CELLS: usize = 8 * 1024; // 64 KiB, 8-byte aligned
        let mut out = Vec::new();
        // Beyond the length passed, room for one whole fixed part: a record ending near the
        // end is copied out whole (its name is shorter than the struct's padding).
        let mut buf = vec![0u64; CELLS + std::mem::size_of::<FILE_ID_BOTH_DIR_INFO>() / 8 + 1];
        let mut class = FileIdBothDirectoryRestartInfo;
        loop {
            // SAFETY: the handle is owned by `self.dir` (synchronous, listable); `buf` is
            // aligned and longer than the `CELLS * 8` bytes passed.
            let ok = unsafe {
                GetFileInformationByHandleEx(
                    self.dir.file.as_raw_handle(),
                    class,
                    buf.as_mut_ptr().cast(),
                    (CELLS * 8) as u32,
                )
            };
            if ok == 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(ERROR_NO_MORE_FILES as i32) {
                    return Ok(out);
                }
                return Err(e);
            }
            class = FileIdBothDirectoryInfo;
            let base = buf.as_ptr().cast::<u8>();
            let mut offset = 0usize;
            let name_at = std::mem::offset_of!(FILE_ID_BOTH_DIR_INFO, FileName);
            let garbled =
                || io::Error::new(io::ErrorKind::InvalidData, "garbled directory listing");
            loop {
                // Never trust an offset or length to stay in the buffer: a file system
                // driver wrote them.
                if !offset.is_multiple_of(8) || offset + name_at > CELLS * 8 {
                    return Err(garbled());
                }
                // SAFETY: `offset` is 8-byte aligned and the fixed part starting there lies
                // in `buf` (checked above; the slack after the length passed covers the
                // struct's tail padding).
                let info = unsafe { *base.add(offset).cast::<FILE_ID_BOTH_DIR_INFO>() };
                if offset + name_at + info.FileNameLength as usize > CELLS * 8 {
                    return Err(garbled());
                }
                // SAFETY: the name lies in the part of `buf` the system wrote (checked
                // above), right after the fixed part, 2-byte aligned.
                let name = unsafe {
                    let name = std::slice::from_raw_parts(
                        base.add(offset + name_at).cast::<u16>(),
                        info.FileNameLength as usize / 2,
                    );
                    std::ffi::OsString::from_wide(name)
                };
                if name != "." && name != ".." {
                    let attributes = info.FileAttributes;
                    // For a reparse point the record's EaSize holds its reparse tag.
                    let kind = if attributes & FILE_ATTRIBUTE_REPARSE_POINT != 0
                        && info.EaSize & NAME_SURROGATE != 0
                    {
                        HeldKind::Symlink
                    } else if attributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
                        HeldKind::Dir
                    } else {
                        HeldKind::File
                    };
                    let link = (kind == HeldKind::Symlink).then(|| {
                        let path = self.dir.path.join(&name);
                        let target = std::fs::read_link(&path).unwrap_or_default();
                        let reached = std::fs::metadata(&path).ok().map(|m| held_kind(&m));
                        (target, reached)
                    });
                    out.push(HeldEntry {
                        name,
                        kind,
                        len: u64::try_from(info.EndOfFile).unwrap_or(0),
                        modified: filetime(info.LastWriteTime),
                        link,
                    });
                }
                if info.NextEntryOffset == 0 {
                    break;
                }
                offset += info.NextEntryOffset as usize;
            }
        }
    }
}

/// A FILETIME (100 ns ticks since 1601) as a `SystemTime`; `None` for an unset one.
fn filetime(ticks: i64) -> Option<std::time::SystemTime> {
    const UNIX_EPOCH_TICKS: i64 = 116_444_736_000_000_000;
    if ticks <= 0 {
        return None;
    }
    let since_unix = ticks - UNIX_EPOCH_TICKS;
    let magnitude = Duration::from_nanos(since_unix.unsigned_abs().saturating_mul(100));
    if since_unix >= 0 {
        std::time::UNIX_EPOCH.checked_add(magnitude)
    } else {
        std::time::UNIX_EPOCH.checked_sub(magnitude)
    }
}

fn held_kind(meta: &std::fs::Metadata) -> HeldKind {
    let ft = meta.file_type();
    if ft.is_symlink() {
        HeldKind::Symlink
    } else if ft.is_dir() {
        HeldKind::Dir
    } else if ft.is_file() {
        HeldKind::File
    } else {
        HeldKind::Unknown
    }
}
