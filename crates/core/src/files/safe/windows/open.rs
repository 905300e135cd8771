//! Opening a checked path on Windows: on the reparse point itself, never a device name, and
//! only when the path Windows reports for the handle is the path that was checked
//! ([`open_read`], [`open_dir`]). A held directory ([`DirFd`]) is what the handle-relative
//! calls of `at.rs`, `rename.rs` and `list.rs` act in.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::ffi::OsStringExt as _;
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_NAME_NORMALIZED,
    FILE_SHARE_READ, FILE_SHARE_WRITE, VOLUME_NAME_DOS,
};

use crate::files::safe::entry::swapped;
use crate::platform::winpath;

/// A directory held open (without delete sharing) with its checked final path. Every
/// operation in it goes through `file`; `path` only names it in messages and link reports.
pub(crate) struct DirFd {
    pub(super) file: File,
    pub(super) path: PathBuf,
}

fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Refuses a path with a reserved device name (`CON`, `NUL`, `COM1`, …) in it, as a special
/// file is refused.
pub(super) fn reserved(path: &Path) -> io::Result<()> {
    let text = text(path);
    if let Some(name) = winpath::reserved_component(&text) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: {}",
                crate::roots::path_text(path),
                winpath::reserved_refusal(name)
            ),
        ));
    }
    Ok(())
}

/// The path Windows reports for an open handle (`\\?\C:\…`), every reparse point resolved.
#[allow(unsafe_code)]
fn final_path(file: &File) -> io::Result<PathBuf> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::GetFinalPathNameByHandleW;
    let mut buf = vec![0u16; 512];
    loop {
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        // SAFETY: the handle is owned by `file`, open for the whole call; the pointer and
        // length describe `buf`, which the call writes at most `len` units into.
        let n = unsafe {
            GetFinalPathNameByHandleW(
                file.as_raw_handle(),
                buf.as_mut_ptr(),
                len,
                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
            )
        } as usize;
        if n == 0 {
            return Err(io::Error::last_os_error());
        }
        if n < buf.len() {
            buf.truncate(n);
            return Ok(PathBuf::from(std::ffi::OsString::from_wide(&buf)));
        }
        buf.resize(n + 1, 0);
    }
}

/// Opens `path` on the reparse point itself and checks that the handle's final path is the
/// path asked for.
fn open_checked(path: &Path, dir: bool) -> io::Result<File> {
    reserved(path)?;
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS);
    if dir {
        // No FILE_SHARE_DELETE: nobody can rename or delete the directory while it is held.
        options.share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if meta.file_type().is_symlink() {
        return Err(swapped(path));
    }
    if dir && !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", crate::roots::path_text(path)),
        ));
    }
    let real = final_path(&file)?;
    if !winpath::same_path(&text(&real), &text(path)) {
        return Err(swapped(path));
    }
    Ok(file)
}

/// Opens a canonical path for reading: never through a reparse point, never a device name.
pub(crate) fn open_read(path: &Path) -> io::Result<File> {
    open_checked(path, false)
}

/// Opens a canonical directory and holds it for the handle-relative operations.
pub(crate) fn open_dir(path: &Path) -> io::Result<DirFd> {
    let file = open_checked(path, true)?;
    // The verbatim form the system reports, which stays valid past MAX_PATH.
    let path = final_path(&file)?;
    Ok(DirFd { file, path })
}
