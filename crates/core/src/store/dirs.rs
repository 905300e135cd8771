//! The store's own directories, and the only way anything under them is created or
//! removed: `<cache>/rootgrep`, `roots/` and each entry are made one level at a time, each
//! checked (a real directory, not a symlink, this user's, 0700) before anything is made
//! below it; listing and clearing accept the same directories only, and remove an entry
//! file by file (only the names the store writes), then the empty directory, so a planted
//! symlink or a directory the store did not create is never followed or emptied.

use std::io;
use std::path::Path;

/// The names a server writes in an entry besides each kind's file
/// ([`Kind::file_name`](super::Kind)) and `.<name>.<pid>.<n>.tmp` temp files.
const OTHER_FILES: [&str; 2] = ["writer.lock", "used"];

/// Whether `name` is one a store entry may hold (its files and their temp files).
pub(super) fn is_entry_file(name: &str) -> bool {
    super::Kind::ALL
        .iter()
        .any(|kind| kind.file_name() == name || super::checked::is_memo_of(name, kind.file_name()))
        || OTHER_FILES.contains(&name)
        || (name.starts_with('.') && name.ends_with(".tmp"))
}

/// Whether `name` is an entry's: the 16 lowercase hex digits of a root's hash.
pub(super) fn is_entry_name(name: &str) -> bool {
    name.len() == 16 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Creates `cache/rootgrep/roots/<entry>` (`levels`: the three names below `cache`), each
/// level only after the one above it passed [`check_private`] (`fix_mode`: a level of this
/// user's that is too open is made 0700). The cache directory itself is the user's (created
/// if missing, as `mkdir -p` would).
pub(super) fn create_private(cache: &Path, levels: &[&str]) -> io::Result<()> {
    if !cache.exists() {
        private_builder().recursive(true).create(cache)?;
    }
    let mut dir = cache.to_path_buf();
    for level in levels {
        dir.push(level);
        // `mkdir` never follows a symlink at its last component: a planted link is
        // `AlreadyExists` here and refused by the check below.
        match private_builder().create(&dir) {
            Err(err) if err.kind() != io::ErrorKind::AlreadyExists => return Err(err),
            _ => {}
        }
        check_private(&dir, true)?;
    }
    Ok(())
}

/// A `DirBuilder` that makes directories only this user can use (0700 on Unix).
fn private_builder() -> std::fs::DirBuilder {
    #[allow(unused_mut)] // only Unix sets a mode
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// Whether `dir` is one of the store's own directories: a directory (not a symlink to one)
/// owned by this user, with no access for anyone else (`fix_mode`: made so when it is
/// this user's; otherwise refused). Elsewhere than Unix: a directory, not a link.
pub(super) fn check_private(dir: &Path, fix_mode: bool) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    let refuse = |why: &str| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} {why}", dir.display()),
        ))
    };
    if !meta.is_dir() {
        return refuse("is not a directory of this user (a symlink or another file)");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if meta.uid() != rustix::process::geteuid().as_raw() {
            return refuse("is not a directory of this user");
        }
        if meta.permissions().mode() & 0o077 != 0 {
            if !fix_mode {
                return refuse("is open to other users (not 0700): not the store's");
            }
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    #[cfg(not(unix))]
    let _ = fix_mode;
    Ok(())
}

/// Removes the entry at `dir`: only the files a store writes (unlinked, never followed),
/// then the directory, which must then be empty. `Ok(false)`: it held something else, so
/// it was kept (its own files are gone: they are rebuilt).
pub(super) fn remove_entry(dir: &Path) -> io::Result<bool> {
    check_private(dir, false)?;
    for file in std::fs::read_dir(dir)?.flatten() {
        let name = file.file_name();
        let is_file = file.file_type().is_ok_and(|t| t.is_file());
        if is_file && is_entry_file(&name.to_string_lossy()) {
            std::fs::remove_file(file.path())?;
        }
    }
    match std::fs::remove_dir(dir) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(_) => Ok(false),
    }
}
