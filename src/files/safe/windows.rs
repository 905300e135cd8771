//! Windows: no `openat2`, no `O_NOFOLLOW_ANY`, no `*at` calls in Win32. What holds instead:
//!
//! - every open is made on the reparse point itself (`FILE_FLAG_OPEN_REPARSE_POINT`), so a
//!   final component that is a symlink or junction is opened as the link and refused;
//! - the path Windows reports for the opened handle (`GetFinalPathNameByHandleW`, which
//!   resolves every reparse point on the way) must be the path that was checked, compared
//!   the way NTFS compares names (case-insensitively, verbatim prefixes ignored): a
//!   directory swapped for a junction before the open is caught after it, and the handle
//!   is dropped unused;
//! - directories are held open without `FILE_SHARE_DELETE` while names in them are created,
//!   renamed or listed, so the directory itself cannot be renamed away and replaced by a
//!   junction in the meantime (operations then name entries by the directory's checked
//!   final path);
//! - reserved device names (`CON`, `NUL`, `COM1`, …) are refused like special files.
//!
//! What does not hold as on Linux: an *ancestor* of a held directory can still be renamed
//! (NTFS refuses that only while the held directory itself is open for deletion), so between
//! the check and a rename/create by path there is a window on ancestors; created temp files
//! are checked after creation (their final path must lie in the held directory) and removed
//! when not.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_NAME_NORMALIZED,
    FILE_SHARE_READ, FILE_SHARE_WRITE, VOLUME_NAME_DOS,
};

use super::swapped;
use crate::files::winpath;

/// A directory held open (without delete sharing) with its checked final path.
pub struct DirFd {
    _file: File,
    path: PathBuf,
}

fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn reserved(path: &Path) -> io::Result<()> {
    let text = text(path);
    if let Some(name) = winpath::reserved_component(&text) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: {name} is a reserved device name on Windows; special files are refused",
                crate::roots::path_text(path)
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
pub fn open_read(path: &Path) -> io::Result<File> {
    open_checked(path, false)
}

/// Opens a canonical directory and holds it for the operations below.
pub fn open_dir(path: &Path) -> io::Result<DirFd> {
    let file = open_checked(path, true)?;
    // The verbatim form the system reports, kept as it is: names are joined to it and
    // passed to `MoveFileExW` directly, which (unlike std's calls) does not lengthen an
    // ordinary path past MAX_PATH into a verbatim one itself.
    let path = final_path(&file)?;
    Ok(DirFd { _file: file, path })
}

/// A directory held open while it is listed by its checked path.
pub struct DirHandle {
    _dir: DirFd,
    path: PathBuf,
}

impl DirHandle {
    pub fn open(dir: &Path) -> io::Result<DirHandle> {
        let held = open_dir(dir)?;
        Ok(DirHandle {
            _dir: held,
            path: dir.to_path_buf(),
        })
    }

    /// The entries, read by the held directory's path (the handle, held without delete
    /// sharing, keeps that path naming this directory), each `lstat`ed. An entry that
    /// vanishes while being read is skipped.
    pub fn entries(&self) -> io::Result<Vec<super::HeldEntry>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.path)? {
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let kind = held_kind(&meta);
            let link = (kind == super::HeldKind::Symlink).then(|| {
                let target = std::fs::read_link(&path).unwrap_or_default();
                let reached = std::fs::metadata(&path).ok().map(|m| held_kind(&m));
                (target, reached)
            });
            out.push(super::HeldEntry {
                name: entry.file_name(),
                kind,
                len: meta.len(),
                modified: meta.modified().ok(),
                link,
            });
        }
        Ok(out)
    }
}

fn held_kind(meta: &std::fs::Metadata) -> super::HeldKind {
    let ft = meta.file_type();
    if ft.is_symlink() {
        super::HeldKind::Symlink
    } else if ft.is_dir() {
        super::HeldKind::Dir
    } else if ft.is_file() {
        super::HeldKind::File
    } else {
        super::HeldKind::Unknown
    }
}

/// Creates `name` in `dir` exclusively (never through a reparse point). Windows has no
/// permission bits to give it; `private` is ignored. `Ok(None)` when the name is taken.
pub fn create_temp_at(dir: &DirFd, name: &str, _private: bool) -> io::Result<Option<File>> {
    reserved(Path::new(name))?;
    let path = dir.path.join(name);
    let file = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(&path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(None),
        Err(e) => return Err(e),
    };
    let real = final_path(&file)?;
    let inside = Path::new(&winpath::plain(&text(&real)))
        .parent()
        .is_some_and(|parent| winpath::same_path(&text(parent), &text(&dir.path)));
    if !inside {
        drop(file);
        let _ = std::fs::remove_file(&real);
        return Err(swapped(&path));
    }
    Ok(Some(file))
}

/// Renames `dir\from` over `dir\to` (replacing the entry `to`, never writing through it).
///
/// Where POSIX rename semantics are not available (std falls back to them when a replace
/// is refused; Windows before 10 1709 and Wine have none), a reader that has `to` open
/// makes the replace fail with "Access denied": a virus scan, a search indexer, rootgrep
/// itself reading a file just saved. Such reads are short, so the rename is tried again
/// for up to a second before the error is reported.
pub fn rename_at(dir: &DirFd, from: &str, to: &OsStr) -> io::Result<()> {
    reserved(Path::new(to))?;
    let (from, to) = (dir.path.join(from), dir.path.join(to));
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut pause = Duration::from_millis(2);
    loop {
        match std::fs::rename(&from, &to) {
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            done => return done,
        }
    }
}

/// Removes `dir\name`.
pub fn unlink_at(dir: &DirFd, name: &str) -> io::Result<()> {
    std::fs::remove_file(dir.path.join(name))
}

/// Creates the directory `dir\name`.
pub fn mkdir_at(dir: &DirFd, name: &OsStr) -> io::Result<()> {
    reserved(Path::new(name))?;
    std::fs::create_dir(dir.path.join(name))
}

/// Windows cannot flush a directory; NTFS journals its metadata.
pub fn fsync_dir(_dir: &DirFd) {}

/// Whether `dir` holds an entry `name` (not following it).
pub fn exists_at(dir: &DirFd, name: &OsStr) -> bool {
    std::fs::symlink_metadata(dir.path.join(name)).is_ok()
}

/// Renames `src_dir\src_name` to `dst_dir\dst_name`, failing when the destination exists
/// (`MoveFileExW` without `MOVEFILE_REPLACE_EXISTING`: the check is the system's).
#[allow(unsafe_code)]
pub fn rename_noreplace_at(
    src_dir: &DirFd,
    src_name: &OsStr,
    dst_dir: &DirFd,
    dst_name: &OsStr,
) -> io::Result<()> {
    use windows_sys::Win32::Storage::FileSystem::MoveFileExW;
    reserved(Path::new(dst_name))?;
    let wide = |p: PathBuf| -> Vec<u16> { p.as_os_str().encode_wide().chain([0]).collect() };
    let from = wide(src_dir.path.join(src_name));
    let to = wide(dst_dir.path.join(dst_name));
    // SAFETY: both pointers are NUL-terminated UTF-16 strings alive for the whole call.
    let ok = unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), 0) };
    if ok == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
