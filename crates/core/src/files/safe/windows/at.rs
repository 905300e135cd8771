//! Entries of a held directory on Windows, relative to its handle: `NtCreateFile` with the
//! held handle as `RootDirectory` ([`open_at`]) creates, opens and removes one plain entry
//! name ([`EntryName`]) in the directory that was checked, wherever it has moved since.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::windows::ffi::OsStrExt as _;
use std::path::Path;

use windows_sys::Win32::Foundation::NTSTATUS;
use windows_sys::Win32::Storage::FileSystem::{FILE_SHARE_READ, FILE_SHARE_WRITE};

use super::open::{DirFd, reserved};

/// The NT status of a failed call as the Win32 error std's `io::Error` knows
/// (`STATUS_OBJECT_NAME_COLLISION` → `AlreadyExists`, …).
#[allow(unsafe_code)]
pub(super) fn nt_error(status: NTSTATUS) -> io::Error {
    use windows_sys::Win32::Foundation::RtlNtStatusToDosError;
    // SAFETY: a pure translation of a status code.
    let code = unsafe { RtlNtStatusToDosError(status) };
    io::Error::from_raw_os_error(code as i32)
}

/// One plain entry name in UTF-16, made only by [`entry_name`]: what the handle-relative
/// calls take, so none of them can be given a name that reaches past its directory.
pub(super) struct EntryName(pub(super) Vec<u16>);

/// `name` as an [`EntryName`], refused unless it is one plain entry name: no separator, no
/// stream (`:`), not `.` or `..`, no NUL, not a reserved device name. The callers pass names
/// taken from checked paths; this keeps a handle-relative call from ever reaching past its
/// directory.
pub(super) fn entry_name(name: &OsStr) -> io::Result<EntryName> {
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
pub(super) fn open_at(
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

/// Creates `name` in `dir` exclusively (handle-relative, never through a reparse point).
/// Windows has no permission bits to give it; `private` is ignored. `Ok(None)` when the
/// name is taken.
pub(crate) fn create_temp_at(dir: &DirFd, name: &str, _private: bool) -> io::Result<Option<File>> {
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

/// Removes the file `dir\name` (opened relative to the held directory, deleted on close).
pub(crate) fn unlink_at(dir: &DirFd, name: &str) -> io::Result<()> {
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
pub(crate) fn mkdir_at(dir: &DirFd, name: &OsStr) -> io::Result<()> {
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
pub(crate) fn identity_at(dir: &DirFd, name: &OsStr) -> io::Result<(u64, u64)> {
    use crate::platform::os::MetadataExt;
    use windows_sys::Wdk::Storage::FileSystem::FILE_OPEN;
    use windows_sys::Win32::Storage::FileSystem::FILE_READ_ATTRIBUTES;
    let meta = open_at(dir, &entry_name(name)?, FILE_READ_ATTRIBUTES, FILE_OPEN, 0)
        .map_err(nt_error)?
        .metadata()?;
    Ok((meta.dev(), meta.ino()))
}

/// Windows cannot flush a directory; NTFS journals its metadata.
pub(crate) fn fsync_dir(_dir: &DirFd) {}

/// Whether `dir` holds an entry `name` (not following it). An entry that exists but cannot
/// be opened (in use, no permission) exists; one being deleted does not.
pub(crate) fn exists_at(dir: &DirFd, name: &OsStr) -> bool {
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
