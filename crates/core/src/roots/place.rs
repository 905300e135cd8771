//! Paths as rootgrep keeps and shows them: [`canonicalize`] (one spelling per file),
//! [`within`] (containment by components, never by string prefix), [`path_text`] (the one
//! way a path becomes text) and [`in_place`] (whether a root is still itself). The floor the
//! rest of `roots` stands on: it uses only the URI helpers and the platform glue.

use super::uri::file_uri_from_path;
use std::io;
use std::path::{Path, PathBuf};

/// True when the canonical `path` is `base` or below it, component by component.
#[cfg(not(any(windows, target_vendor = "apple")))]
pub fn within(path: &Path, base: &Path) -> bool {
    path.starts_with(base)
}

/// True when the canonical `path` is `base` or below it. macOS volumes are case-insensitive
/// by default (APFS, HFS+) and `canonicalize` does not always give the on-disk case, so
/// `/users/me/app/x` may name a file under the root `/Users/me/App`: names that differ are
/// compared by identity instead ([`within_by_identity`]), never by a case-folding string
/// comparison, which would be wrong on a case-sensitive volume.
#[cfg(target_vendor = "apple")]
pub fn within(path: &Path, base: &Path) -> bool {
    path.starts_with(base) || within_by_identity(path, base)
}

/// Whether `base` is `path` or one of its ancestors, compared by identity (device and inode,
/// the entries themselves, no link followed): true for two spellings of one directory,
/// whatever the file system makes of case. Missing components (a write target) are skipped.
/// Used on macOS; built and tested on every Unix.
#[cfg(unix)]
#[cfg_attr(not(target_vendor = "apple"), allow(dead_code))]
pub(crate) fn within_by_identity(path: &Path, base: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(root) = std::fs::symlink_metadata(base) else {
        return false;
    };
    path.ancestors().any(|ancestor| {
        std::fs::symlink_metadata(ancestor)
            .is_ok_and(|meta| meta.dev() == root.dev() && meta.ino() == root.ino())
    })
}

/// True when the canonical `path` is `base` or below it, compared as NTFS compares names:
/// ignoring case, `\\?\` prefixes and separator style.
#[cfg(windows)]
pub fn within(path: &Path, base: &Path) -> bool {
    if path.starts_with(base) {
        return true;
    }
    match (path.to_str(), base.to_str()) {
        (Some(path), Some(base)) => crate::platform::winpath::starts_with(path, base),
        _ => false,
    }
}

/// A path as text for answers: the path itself when it is valid UTF-8, otherwise its
/// `file://` URI, which every tool accepts and which keeps the bytes that are not UTF-8
/// (`display()` would turn them into U+FFFD and name a different file).
///
/// This is the one place paths become text for the model and the user. On Windows a
/// verbatim path (`\\?\C:\x`) is shown in its ordinary form (`C:\x`, `\\srv\share\x`)
/// whenever that form names exactly the same file ([`winpath::exact_plain`]).
///
/// [`winpath::exact_plain`]: crate::platform::winpath::exact_plain
pub fn path_text(path: &Path) -> String {
    match path.to_str() {
        #[cfg(windows)]
        Some(text) => crate::platform::winpath::display(text),
        #[cfg(not(windows))]
        Some(text) => text.to_string(),
        None => file_uri_from_path(path),
    }
}

/// [`path_text`] for a text a person or a model reads line by line (an answer's text, an
/// error): its control and bidi characters escaped (`quote::escape_for_display`), so a
/// file named with a newline cannot forge a line. Structured content keeps [`path_text`].
pub fn path_display(path: &Path) -> String {
    crate::quote::escape_for_display(&path_text(path)).into_owned()
}

/// `std::fs::canonicalize` in the form rootgrep keeps paths in. On Unix it is unchanged.
/// On Windows std answers with verbatim paths (`\\?\C:\x`); they are kept in their
/// ordinary form (`C:\x`, `\\srv\share\x`) whenever that form names exactly the same
/// file ([`winpath::exact_plain`]), so roots, resolved paths and every path found below
/// them (search results, listings, URIs) read as people and hosts write them. Opening an
/// ordinary path longer than Win32's limit still works: std adds the prefix back itself.
/// Names only the verbatim form can spell (`x.`, `nul.txt`) keep it.
///
/// [`winpath::exact_plain`]: crate::platform::winpath::exact_plain
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    let canonical = std::fs::canonicalize(path)?;
    #[cfg(windows)]
    if let Some(plain) = canonical
        .to_str()
        .and_then(crate::platform::winpath::exact_plain)
    {
        return Ok(PathBuf::from(plain));
    }
    Ok(canonical)
}

/// Why a root's path no longer names the root (see [`in_place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Displaced {
    /// Nothing is there.
    Missing,
    /// The path itself is a symlink now.
    Symlink,
    /// The path leads through a symlink now (an ancestor was swapped), or is no longer the
    /// file system's own spelling of it.
    NotCanonical,
}

impl std::fmt::Display for Displaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Displaced::Missing => "the path does not exist",
            Displaced::Symlink => "the root's path is a symlink now, not the directory it was",
            Displaced::NotCanonical => "the root's path leads through a symlink now",
        })
    }
}

/// `root` written as [`canonicalize`] writes paths: on Windows the ordinary `C:\x` form of
/// a verbatim `\\?\C:\x` where that names the same file; elsewhere `root` itself.
fn canonicalize_spelling(root: &Path) -> PathBuf {
    #[cfg(windows)]
    {
        root.to_str()
            .and_then(crate::platform::winpath::exact_plain)
            .map_or_else(|| root.to_path_buf(), PathBuf::from)
    }
    #[cfg(not(windows))]
    {
        root.to_path_buf()
    }
}

/// Whether the canonical root `root` is still in place: its path names a directory or file
/// itself — not a symlink — and still canonicalizes to itself (no ancestor became a
/// symlink). Its identity (device, inode) when it is. The one rule for every consumer that
/// lists or walks a root (the watcher, the index builder, list_roots): a root swapped for a
/// symlink leads somewhere that is not the root, and nothing there may be listed, searched
/// or read until the path is a real directory again (a new directory is the root again:
/// `rm -rf DIR && mkdir DIR` is an ordinary way to empty one).
pub fn in_place(root: &Path) -> Result<(u64, u64), Displaced> {
    use crate::platform::os::MetadataExt;
    let meta = std::fs::symlink_metadata(root).map_err(|_| Displaced::Missing)?;
    if meta.file_type().is_symlink() {
        return Err(Displaced::Symlink);
    }
    // Compared with the root in the form `canonicalize` gives (on Windows the ordinary
    // `C:\x`, where a root may have been given as `\\?\C:\x`).
    let spelled = canonicalize_spelling(root);
    match canonicalize(root) {
        Ok(canonical) if canonical == spelled => Ok((meta.dev(), meta.ino())),
        Ok(_) => Err(Displaced::NotCanonical),
        Err(_) => Err(Displaced::Missing),
    }
}
