//! Renames on Windows: by handle into a held directory (`FileRenameInformationEx`, POSIX
//! semantics) where the system supports it, else by the held directories' checked paths
//! (`MoveFileExW`); a replace is retried briefly while a reader holds the target open.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::windows::ffi::OsStrExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::NTSTATUS;

use super::at::{EntryName, entry_name, nt_error, open_at};
use super::open::DirFd;

/// Renames `dir\from` over `dir\to`, replacing the entry `to` (never writing through it).
///
/// Where the replace cannot use POSIX semantics (see [`rename_entry`]), a reader that has
/// `to` open makes it fail with "Access denied": a virus scan, a search indexer, rootgrep
/// itself reading a file just saved. Such reads are short, so the rename is tried again for
/// up to a second before the error is reported.
pub(crate) fn rename_at(dir: &DirFd, from: &str, to: &OsStr) -> io::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut pause = Duration::from_millis(2);
    loop {
        match rename_entry(dir, OsStr::new(from), dir, to, true) {
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            done => return done,
        }
    }
}

/// Renames `src_dir\src_name` to `dst_dir\dst_name`, failing when the destination exists
/// (the check is the system's: no replace asked for).
pub(crate) fn rename_noreplace_at(
    src_dir: &DirFd,
    src_name: &OsStr,
    dst_dir: &DirFd,
    dst_name: &OsStr,
) -> io::Result<()> {
    rename_entry(src_dir, src_name, dst_dir, dst_name, false)
}

/// Renames `src_dir\src_name` to `dst_dir\dst_name`, replacing an existing destination
/// entry only when `replace`.
///
/// By handle where the system can (`FileRenameInformationEx`, Windows 10 1709+ on NTFS,
/// with POSIX semantics: a reader that has the destination open does not stop the
/// replace). Where that class or its flags are not supported (older Windows, FAT, some
/// network file systems, Wine), by the held directories' checked paths, as `MoveFileExW`
/// does: there an ancestor renamed between the open and this call still redirects it.
fn rename_entry(
    src_dir: &DirFd,
    src_name: &OsStr,
    dst_dir: &DirFd,
    dst_name: &OsStr,
    replace: bool,
) -> io::Result<()> {
    use windows_sys::Wdk::Storage::FileSystem::{
        FILE_OPEN, FILE_RENAME_POSIX_SEMANTICS, FILE_RENAME_REPLACE_IF_EXISTS,
    };
    use windows_sys::Win32::Storage::FileSystem::DELETE;
    let to = entry_name(dst_name)?;
    let source =
        open_at(src_dir, &entry_name(src_name)?, DELETE, FILE_OPEN, 0).map_err(nt_error)?;
    let flags = if replace {
        FILE_RENAME_POSIX_SEMANTICS | FILE_RENAME_REPLACE_IF_EXISTS
    } else {
        FILE_RENAME_POSIX_SEMANTICS
    };
    match rename_handle(&source, dst_dir, &to, flags) {
        Ok(()) => Ok(()),
        Err(status) if unsupported(status) => {
            drop(source);
            move_by_path(
                &src_dir.path.join(src_name),
                &dst_dir.path.join(dst_name),
                replace,
            )
        }
        Err(status) => Err(nt_error(status)),
    }
}

/// Renames the open `file` to `to` inside `dst` (`NtSetInformationFile` of
/// `FileRenameInformationEx` with the held directory as `RootDirectory`: relative to that
/// directory, not to a path). `flags` are `FILE_RENAME_*`.
#[allow(unsafe_code)]
fn rename_handle(file: &File, dst: &DirFd, to: &EntryName, flags: u32) -> Result<(), NTSTATUS> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Wdk::Storage::FileSystem::{
        FILE_RENAME_INFORMATION, FileRenameInformationEx, NtSetInformationFile,
    };
    use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;
    let wide = &to.0;
    let header = std::mem::offset_of!(FILE_RENAME_INFORMATION, FileName);
    // The name is followed by a NUL, and the whole is never shorter than the structure:
    // a shorter buffer is refused as an invalid parameter (by Wine at least).
    let len = (header + wide.len() * 2 + 2).max(std::mem::size_of::<FILE_RENAME_INFORMATION>());
    // u64 cells: the structure holds a handle and must be 8-byte aligned.
    let mut buf = vec![0u64; len.div_ceil(8)];
    let info = buf.as_mut_ptr().cast::<FILE_RENAME_INFORMATION>();
    // SAFETY: `buf` is zeroed, aligned for the structure and `len` bytes long, which
    // covers the header and the name written right after it.
    unsafe {
        (*info).Anonymous.Flags = flags;
        (*info).RootDirectory = dst.file.as_raw_handle();
        (*info).FileNameLength = (wide.len() * 2) as u32;
        std::ptr::copy_nonoverlapping(
            wide.as_ptr(),
            buf.as_mut_ptr().cast::<u8>().add(header).cast::<u16>(),
            wide.len(),
        );
    }
    let mut status_block = IO_STATUS_BLOCK::default();
    // SAFETY: the handle is owned by `file`; `info` points at `len` initialised bytes.
    let status = unsafe {
        NtSetInformationFile(
            file.as_raw_handle(),
            &mut status_block,
            info.cast(),
            len as u32,
            FileRenameInformationEx,
        )
    };
    if status < 0 { Err(status) } else { Ok(()) }
}

/// Whether a status says the class or flag asked for is not known here (an older Windows,
/// a file system without POSIX renames, Wine), so the classic call is the one to make.
fn unsupported(status: NTSTATUS) -> bool {
    use windows_sys::Win32::Foundation::{
        STATUS_INVALID_INFO_CLASS, STATUS_INVALID_PARAMETER, STATUS_NOT_IMPLEMENTED,
        STATUS_NOT_SUPPORTED,
    };
    [
        STATUS_INVALID_INFO_CLASS,
        STATUS_INVALID_PARAMETER,
        STATUS_NOT_IMPLEMENTED,
        STATUS_NOT_SUPPORTED,
    ]
    .contains(&status)
}

/// `MoveFileExW`, replacing only when `replace`.
#[allow(unsafe_code)]
fn move_by_path(from: &Path, to: &Path, replace: bool) -> io::Result<()> {
    use windows_sys::Win32::Storage::FileSystem::{MOVEFILE_REPLACE_EXISTING, MoveFileExW};
    let wide = |p: &Path| -> Vec<u16> { p.as_os_str().encode_wide().chain([0]).collect() };
    let (from, to) = (wide(from), wide(to));
    let flags = if replace {
        MOVEFILE_REPLACE_EXISTING
    } else {
        0
    };
    // SAFETY: both pointers are NUL-terminated UTF-16 strings alive for the whole call.
    let ok = unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), flags) };
    if ok == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
