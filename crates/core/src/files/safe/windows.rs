//! Windows: no `openat2`, no `O_NOFOLLOW_ANY`, no `*at` calls in Win32. What holds instead:
//!
//! - every path is opened on the reparse point itself (`FILE_FLAG_OPEN_REPARSE_POINT`), so a
//!   final component that is a symlink or junction is opened as the link and refused;
//! - the path Windows reports for the opened handle (`GetFinalPathNameByHandleW`, which
//!   resolves every reparse point on the way) must be the path that was checked, compared
//!   the way NTFS compares names (case-insensitively, verbatim prefixes ignored): a
//!   directory swapped for a junction before the open is caught after it, and the handle
//!   is dropped unused;
//! - everything done *in* a held directory is relative to its handle, through the native
//!   API that Win32 does not expose: entries are created, opened, renamed and removed with
//!   `NtCreateFile`/`NtSetInformationFile` naming the held handle as `RootDirectory`, and
//!   listed from the handle (`GetFileInformationByHandleEx`). The directory that was checked
//!   is the one acted on, even when an ancestor has been renamed since and a junction put
//!   in its place. One exception: where `FileRenameInformationEx` is not supported (before
//!   Windows 10 1709, FAT, some network file systems, Wine) a rename goes by the checked
//!   paths, as `MoveFileExW` (see [`rename_entry`]);
//! - held directories are opened without `FILE_SHARE_DELETE`, so the directory itself
//!   cannot be renamed or deleted while it is held;
//! - reserved device names (`CON`, `NUL`, `COM1`, …) are refused like special files, and
//!   an entry name is only ever one plain name (no separator, no `:` stream, no `..`).

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::windows::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::NTSTATUS;
use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_NAME_NORMALIZED,
    FILE_SHARE_READ, FILE_SHARE_WRITE, VOLUME_NAME_DOS,
};

use super::entry::{HeldEntry, HeldKind, swapped};
use crate::platform::winpath;

/// A directory held open (without delete sharing) with its checked final path. Every
/// operation in it goes through `file`; `path` only names it in messages and link reports.
pub struct DirFd {
    file: File,
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
pub fn open_read(path: &Path) -> io::Result<File> {
    open_checked(path, false)
}

/// Opens a canonical directory and holds it for the operations below.
pub fn open_dir(path: &Path) -> io::Result<DirFd> {
    let file = open_checked(path, true)?;
    // The verbatim form the system reports, which stays valid past MAX_PATH.
    let path = final_path(&file)?;
    Ok(DirFd { file, path })
}

/// A directory held open and listed from its handle.
pub struct DirHandle {
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

/// The NT status of a failed call as the Win32 error std's `io::Error` knows
/// (`STATUS_OBJECT_NAME_COLLISION` → `AlreadyExists`, …).
#[allow(unsafe_code)]
fn nt_error(status: NTSTATUS) -> io::Error {
    use windows_sys::Win32::Foundation::RtlNtStatusToDosError;
    // SAFETY: a pure translation of a status code.
    let code = unsafe { RtlNtStatusToDosError(status) };
    io::Error::from_raw_os_error(code as i32)
}

/// One plain entry name in UTF-16, made only by [`entry_name`]: what the handle-relative
/// calls below take, so none of them can be given a name that reaches past its directory.
struct EntryName(Vec<u16>);

/// `name` as an [`EntryName`], refused unless it is one plain entry name: no separator, no
/// stream (`:`), not `.` or `..`, no NUL, not a reserved device name. The callers pass names
/// taken from checked paths; this keeps a handle-relative call from ever reaching past its
/// directory.
fn entry_name(name: &OsStr) -> io::Result<EntryName> {
    reserved(Path::new(name))?;
    let wide: Vec<u16> = name.encode_wide().collect();
    let bad = wide.is_empty()
        || wide == [u16::from(b'.')]
        || wide == [u16::from(b'.'), u16::from(b'.')]
        || wide
            .iter()
            .any(|&c| c == 0 || [b'\\', b'/', b':'].iter().any(|&b| c == u16::from(b)));
    if bad || wide.len() > 32_000 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a single entry name", name.to_string_lossy()),
        ));
    }
    Ok(EntryName(wide))
}

/// `NtCreateFile` of `name` relative to the held directory `dir` (its handle is the
/// `RootDirectory`): the name is looked up in the directory that was opened and checked,
/// wherever that directory has been moved since, never by a path through its ancestors.
/// Never follows a reparse point in `name`; synchronous I/O, so the handle works as a
/// std `File`.
#[allow(unsafe_code)]
fn open_at(
    dir: &DirFd,
    name: &EntryName,
    access: u32,
    disposition: u32,
    options: u32,
) -> Result<File, NTSTATUS> {
    use std::os::windows::io::{AsRawHandle, FromRawHandle};
    use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
    use windows_sys::Wdk::Storage::FileSystem::{
        FILE_OPEN_REPARSE_POINT, FILE_SYNCHRONOUS_IO_NONALERT, NtCreateFile,
    };
    use windows_sys::Win32::Foundation::{OBJ_CASE_INSENSITIVE, UNICODE_STRING};
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_NORMAL, FILE_SHARE_DELETE, SYNCHRONIZE,
    };
    use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;
    let bytes = (name.0.len() * 2) as u16;
    let object_name = UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        // The call only reads the name.
        Buffer: name.0.as_ptr().cast_mut(),
    };
    let attributes = OBJECT_ATTRIBUTES {
        Length: std::mem::size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: dir.file.as_raw_handle(),
        ObjectName: &object_name,
        // Names compare as Win32 compares them (CreateFileW passes the same flag).
        Attributes: OBJ_CASE_INSENSITIVE,
        SecurityDescriptor: std::ptr::null(),
        SecurityQualityOfService: std::ptr::null(),
    };
    let mut handle = std::ptr::null_mut();
    let mut status_block = IO_STATUS_BLOCK::default();
    // SAFETY: every pointer refers to a live local (`object_name` points into `name`,
    // both alive for the call); the root handle is owned by `dir`; on success the new
    // handle is owned by nobody else and is handed to `File` exactly once.
    let status = unsafe {
        NtCreateFile(
            &mut handle,
            access | SYNCHRONIZE,
            &attributes,
            &mut status_block,
            std::ptr::null(),
            FILE_ATTRIBUTE_NORMAL,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            disposition,
            options | FILE_SYNCHRONOUS_IO_NONALERT | FILE_OPEN_REPARSE_POINT,
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        return Err(status);
    }
    // SAFETY: see above: a fresh handle, owned from here on by the `File`.
    Ok(unsafe { File::from_raw_handle(handle) })
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

/// Creates `name` in `dir` exclusively (handle-relative, never through a reparse point).
/// Windows has no permission bits to give it; `private` is ignored. `Ok(None)` when the
/// name is taken.
pub fn create_temp_at(dir: &DirFd, name: &str, _private: bool) -> io::Result<Option<File>> {
    use windows_sys::Wdk::Storage::FileSystem::{FILE_CREATE, FILE_NON_DIRECTORY_FILE};
    use windows_sys::Win32::Foundation::STATUS_OBJECT_NAME_COLLISION;
    use windows_sys::Win32::Storage::FileSystem::{FILE_GENERIC_READ, FILE_GENERIC_WRITE};
    match open_at(
        dir,
        &entry_name(OsStr::new(name))?,
        FILE_GENERIC_READ | FILE_GENERIC_WRITE,
        FILE_CREATE,
        FILE_NON_DIRECTORY_FILE,
    ) {
        Ok(file) => Ok(Some(file)),
        Err(STATUS_OBJECT_NAME_COLLISION) => Ok(None),
        Err(status) => Err(nt_error(status)),
    }
}

/// Renames `dir\from` over `dir\to`, replacing the entry `to` (never writing through it).
///
/// Where the replace cannot use POSIX semantics (see [`rename_entry`]), a reader that has
/// `to` open makes it fail with "Access denied": a virus scan, a search indexer, rootgrep
/// itself reading a file just saved. Such reads are short, so the rename is tried again for
/// up to a second before the error is reported.
pub fn rename_at(dir: &DirFd, from: &str, to: &OsStr) -> io::Result<()> {
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

/// Removes the file `dir\name` (opened relative to the held directory, deleted on close).
pub fn unlink_at(dir: &DirFd, name: &str) -> io::Result<()> {
    use windows_sys::Wdk::Storage::FileSystem::{
        FILE_DELETE_ON_CLOSE, FILE_NON_DIRECTORY_FILE, FILE_OPEN,
    };
    use windows_sys::Win32::Storage::FileSystem::DELETE;
    let file = open_at(
        dir,
        &entry_name(OsStr::new(name))?,
        DELETE,
        FILE_OPEN,
        FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE,
    )
    .map_err(nt_error)?;
    drop(file);
    Ok(())
}

/// Creates the directory `dir\name`, relative to the held directory.
pub fn mkdir_at(dir: &DirFd, name: &OsStr) -> io::Result<()> {
    use windows_sys::Wdk::Storage::FileSystem::{FILE_CREATE, FILE_DIRECTORY_FILE};
    use windows_sys::Win32::Storage::FileSystem::FILE_LIST_DIRECTORY;
    open_at(
        dir,
        &entry_name(name)?,
        FILE_LIST_DIRECTORY,
        FILE_CREATE,
        FILE_DIRECTORY_FILE,
    )
    .map(drop)
    .map_err(nt_error)
}

/// The identity (`platform::os::MetadataExt` device and inode) of the entry `name` of `dir`
/// itself (never followed; opened for its attributes only), for checking that a path still
/// names the file that was read.
pub fn identity_at(dir: &DirFd, name: &OsStr) -> io::Result<(u64, u64)> {
    use crate::platform::os::MetadataExt;
    use windows_sys::Wdk::Storage::FileSystem::FILE_OPEN;
    use windows_sys::Win32::Storage::FileSystem::FILE_READ_ATTRIBUTES;
    let meta = open_at(dir, &entry_name(name)?, FILE_READ_ATTRIBUTES, FILE_OPEN, 0)
        .map_err(nt_error)?
        .metadata()?;
    Ok((meta.dev(), meta.ino()))
}

/// Windows cannot flush a directory; NTFS journals its metadata.
pub fn fsync_dir(_dir: &DirFd) {}

/// Whether `dir` holds an entry `name` (not following it). An entry that exists but cannot
/// be opened (in use, no permission) exists; one being deleted does not.
pub fn exists_at(dir: &DirFd, name: &OsStr) -> bool {
    use windows_sys::Wdk::Storage::FileSystem::FILE_OPEN;
    use windows_sys::Win32::Foundation::{
        STATUS_DELETE_PENDING, STATUS_INVALID_PARAMETER, STATUS_OBJECT_NAME_INVALID,
        STATUS_OBJECT_NAME_NOT_FOUND, STATUS_OBJECT_PATH_NOT_FOUND,
    };
    use windows_sys::Win32::Storage::FileSystem::FILE_READ_ATTRIBUTES;
    let Ok(name) = entry_name(name) else {
        return false;
    };
    match open_at(dir, &name, FILE_READ_ATTRIBUTES, FILE_OPEN, 0) {
        Ok(_) => true,
        Err(status) => ![
            STATUS_OBJECT_NAME_NOT_FOUND,
            STATUS_OBJECT_PATH_NOT_FOUND,
            STATUS_OBJECT_NAME_INVALID,
            STATUS_INVALID_PARAMETER,
            STATUS_DELETE_PENDING,
        ]
        .contains(&status),
    }
}

/// Renames `src_dir\src_name` to `dst_dir\dst_name`, failing when the destination exists
/// (the check is the system's: no replace asked for).
pub fn rename_noreplace_at(
    src_dir: &DirFd,
    src_name: &OsStr,
    dst_dir: &DirFd,
    dst_name: &OsStr,
) -> io::Result<()> {
    rename_entry(src_dir, src_name, dst_dir, dst_name, false)
}
