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
//!   paths, as `MoveFileExW` (see `rename.rs`);
//! - held directories are opened without `FILE_SHARE_DELETE`, so the directory itself
//!   cannot be renamed or deleted while it is held;
//! - reserved device names (`CON`, `NUL`, `COM1`, …) are refused like special files, and
//!   an entry name is only ever one plain name (no separator, no `:` stream, no `..`).
//!
//! `open.rs` opens and holds checked paths, `at.rs` acts on a held directory's entries by
//! handle, `rename.rs` renames, `list.rs` lists.

mod at;
mod list;
mod open;
mod rename;

pub(crate) use self::at::{create_temp_at, exists_at, fsync_dir, identity_at, mkdir_at, unlink_at};
pub(crate) use self::list::DirHandle;
pub(crate) use self::open::{DirFd, open_dir, open_read};
pub(crate) use self::rename::{rename_at, rename_noreplace_at};
