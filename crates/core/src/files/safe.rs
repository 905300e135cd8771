//! Opening paths that were checked against the roots without being fooled by a symlink
//! swapped in after the check.
//!
//! Every path the tools operate on was resolved to its canonical form (no symlinks) before
//! its containment was decided. Between that check and the use, another process could
//! replace a directory on the path with a symlink pointing outside the workspace. Opening
//! with `openat2(RESOLVE_NO_SYMLINKS)` makes the kernel refuse any symlink on the way, so a
//! swap turns into a clear error instead of a read or write outside the roots. Writes and
//! renames then work relative to a directory handle opened this way (`*at` calls), so the
//! name they act on cannot move either. On kernels without `openat2` (before 5.6) the final
//! component is still opened with `O_NOFOLLOW`. macOS gets the same guarantee from
//! `O_NOFOLLOW_ANY` (macOS 11+); Windows from handles opened on the reparse point itself
//! whose final path the system reports back is checked against the path asked for, and
//! from the native calls that take a directory handle as `RootDirectory` (`windows.rs`).

use std::path::Path;

#[cfg(unix)]
pub(crate) use self::unix::*;
#[cfg(windows)]
pub(crate) use self::windows::*;

mod entry;

#[cfg(unix)]
use entry::swapped;
pub use entry::{HeldEntry, HeldKind};

#[cfg(unix)]
mod unix {
    use std::ffi::OsString;
    use std::fs::File;
    use std::io;
    use std::os::fd::OwnedFd;
    use std::path::{Path, PathBuf};

    use rustix::fs::{Mode, OFlags};

    use super::swapped;

    /// A directory opened for `*at` calls.
    pub(crate) type DirFd = OwnedFd;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn open_no_symlinks(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
        use rustix::fs::ResolveFlags;
        let flags = flags | OFlags::CLOEXEC;
        match rustix::fs::openat2(
            rustix::fs::CWD,
            path,
            flags,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        ) {
            Ok(fd) => Ok(fd),
            Err(rustix::io::Errno::LOOP) => Err(swapped(path)),
            Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => {
                // No openat2 (old kernel, or a seccomp filter): best effort.
                rustix::fs::open(path, flags | OFlags::NOFOLLOW, Mode::empty()).map_err(|err| {
                    if err == rustix::io::Errno::LOOP {
                        swapped(path)
                    } else {
                        io::Error::from(err)
                    }
                })
            }
            Err(err) => Err(io::Error::from(err)),
        }
    }

    /// Without `openat2`: on macOS 11+ `O_NOFOLLOW_ANY` makes the kernel refuse a symlink
    /// anywhere on the path, as `openat2(RESOLVE_NO_SYMLINKS)` does on Linux (`ELOOP`); on
    /// other Unixes only the final component is never followed (`O_NOFOLLOW`), and symlinks
    /// swapped into earlier components are caught by the containment checks around the call.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn open_no_symlinks(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
        #[cfg(target_vendor = "apple")]
        const NO_SYMLINKS: OFlags = OFlags::NOFOLLOW_ANY;
        #[cfg(not(target_vendor = "apple"))]
        const NO_SYMLINKS: OFlags = OFlags::NOFOLLOW;
        rustix::fs::open(path, flags | OFlags::CLOEXEC | NO_SYMLINKS, Mode::empty()).map_err(
            |err| {
                if err == rustix::io::Errno::LOOP {
                    swapped(path)
                } else {
                    io::Error::from(err)
                }
            },
        )
    }
    /// Opens a canonical path for reading: never through a symlink, never blocking on a FIFO.
    pub(crate) fn open_read(path: &Path) -> io::Result<File> {
        open_no_symlinks(path, OFlags::RDONLY | OFlags::NONBLOCK).map(File::from)
    }

    /// Opens a canonical directory as a handle for `*at` calls (create, rename, fsync).
    pub(crate) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
        open_no_symlinks(path, OFlags::RDONLY | OFlags::DIRECTORY)
    }

    /// A directory held open (checked free of symlinks when opened) whose entries are read
    /// from the descriptor itself (`fdopendir` on a fresh descriptor for `.`, `fstatat`,
    /// `readlinkat`): even if its path is swapped for a symlink meanwhile, the listing is of
    /// this very directory, on Linux and macOS alike (no `/proc` needed).
    pub(crate) struct DirHandle {
        fd: OwnedFd,
    }

    impl DirHandle {
        pub fn open(dir: &Path) -> io::Result<DirHandle> {
            Ok(DirHandle { fd: open_dir(dir)? })
        }

        /// The entries (`.` and `..` left out), each `lstat`ed relative to the handle. An
        /// entry that vanishes while being read is skipped.
        pub fn entries(&self) -> io::Result<Vec<super::HeldEntry>> {
            use rustix::fs::{AtFlags, Dir, statat};
            use std::os::unix::ffi::OsStringExt;
            let mut dir = Dir::read_from(&self.fd)?;
            let mut out = Vec::new();
            while let Some(entry) = dir.read() {
                // A failed read ends the listing with what was read (as std's iterator).
                let Ok(entry) = entry else { break };
                let name = entry.file_name();
                if matches!(name.to_bytes(), b"." | b"..") {
                    continue;
                }
                let Ok(stat) = statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) else {
                    continue;
                };
                let kind = held_kind(&stat);
                let link = (kind == super::HeldKind::Symlink).then(|| {
                    let target = rustix::fs::readlinkat(&self.fd, name, Vec::new())
                        .map(|t| PathBuf::from(OsString::from_vec(t.into_bytes())))
                        .unwrap_or_default();
                    let reached = statat(&self.fd, name, AtFlags::empty())
                        .ok()
                        .map(|t| held_kind(&t));
                    (target, reached)
                });
                out.push(super::HeldEntry {
                    name: OsString::from_vec(name.to_bytes().to_vec()),
                    kind,
                    len: stat.st_size as u64,
                    modified: modified(&stat),
                    link,
                });
            }
            Ok(out)
        }
    }

    /// The kind a `stat` says (`st_mode` is 16 bits on macOS, 32 on Linux).
    #[allow(clippy::unnecessary_cast)]
    fn held_kind(stat: &rustix::fs::Stat) -> super::HeldKind {
        use super::HeldKind;
        use rustix::fs::FileType;
        match FileType::from_raw_mode(stat.st_mode as _) {
            FileType::RegularFile => HeldKind::File,
            FileType::Directory => HeldKind::Dir,
            FileType::Symlink => HeldKind::Symlink,
            FileType::Fifo => HeldKind::Fifo,
            FileType::Socket => HeldKind::Socket,
            FileType::BlockDevice => HeldKind::BlockDevice,
            FileType::CharacterDevice => HeldKind::CharDevice,
            _ => HeldKind::Unknown,
        }
    }

    /// The modification time of a `stat` (the field types differ by platform).
    #[allow(clippy::unnecessary_cast, clippy::cast_lossless)]
    fn modified(stat: &rustix::fs::Stat) -> Option<std::time::SystemTime> {
        use std::time::{Duration, UNIX_EPOCH};
        let secs = stat.st_mtime as i64;
        let nanos = stat.st_mtime_nsec as u32;
        if secs >= 0 {
            UNIX_EPOCH.checked_add(Duration::new(secs as u64, nanos))
        } else {
            UNIX_EPOCH
                .checked_sub(Duration::from_secs(secs.unsigned_abs()))?
                .checked_add(Duration::from_nanos(u64::from(nanos)))
        }
    }

    /// Creates `name` in `dir` exclusively (`O_EXCL`, never following a link), readable and
    /// writable by the owner only when `private`, else by all (less the umask). `Ok(None)` when
    /// the name is taken.
    pub(crate) fn create_temp_at(
        dir: &DirFd,
        name: &str,
        private: bool,
    ) -> io::Result<Option<File>> {
        let mode = if private {
            Mode::RUSR | Mode::WUSR
        } else {
            Mode::RUSR | Mode::WUSR | Mode::RGRP | Mode::WGRP | Mode::ROTH | Mode::WOTH
        };
        match rustix::fs::openat(
            dir,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            mode,
        ) {
            Ok(fd) => Ok(Some(File::from(fd))),
            Err(rustix::io::Errno::EXIST) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// `renameat(dir/from, dir/to)`: replaces the entry `to`, never writes through it.
    pub(crate) fn rename_at(dir: &DirFd, from: &str, to: &std::ffi::OsStr) -> io::Result<()> {
        rustix::fs::renameat(dir, from, dir, to).map_err(io::Error::from)
    }

    /// `unlinkat(dir/name)`.
    pub(crate) fn unlink_at(dir: &DirFd, name: &str) -> io::Result<()> {
        rustix::fs::unlinkat(dir, name, rustix::fs::AtFlags::empty()).map_err(io::Error::from)
    }

    /// `mkdirat(dir/name, 0o777)` (less the umask).
    pub(crate) fn mkdir_at(dir: &DirFd, name: &std::ffi::OsStr) -> io::Result<()> {
        rustix::fs::mkdirat(dir, name, Mode::RWXU | Mode::RWXG | Mode::RWXO)
            .map_err(io::Error::from)
    }

    /// The device and inode of the entry `name` of `dir` itself (never followed), for
    /// checking that a path still names the file that was read.
    #[allow(clippy::unnecessary_cast)]
    pub(crate) fn identity_at(dir: &DirFd, name: &std::ffi::OsStr) -> io::Result<(u64, u64)> {
        let stat = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
        Ok((stat.st_dev as u64, stat.st_ino as u64))
    }

    /// Whether this process may write the existing entry `name` of `dir`, as the kernel
    /// decides it for an open for writing (mode bits, ACLs, a read-only mount, an immutable
    /// file), with the effective ids. `Err` carries the kernel's reason.
    pub(crate) fn may_write_at(dir: &DirFd, name: &std::ffi::OsStr) -> io::Result<()> {
        use rustix::fs::{Access, AtFlags, accessat};
        match accessat(dir, name, Access::WRITE_OK, AtFlags::EACCESS) {
            // Kernels or libcs without faccessat2 may refuse the flag: the real ids are the
            // effective ones for a server nobody runs setuid.
            Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOSYS) => {
                accessat(dir, name, Access::WRITE_OK, AtFlags::empty()).map_err(io::Error::from)
            }
            other => other.map_err(io::Error::from),
        }
    }

    /// fsync a directory handle (best effort).
    pub(crate) fn fsync_dir(dir: &DirFd) {
        let _ = rustix::fs::fsync(dir);
    }

    /// Whether `dir` holds an entry `name` (not following it).
    pub(crate) fn exists_at(dir: &DirFd, name: &std::ffi::OsStr) -> bool {
        rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// `renameat2(src_dir/src_name, dst_dir/dst_name, RENAME_NOREPLACE)` (`renameatx_np`
    /// with `RENAME_EXCL` on macOS): fails when the destination exists, the check being the
    /// kernel's. Other Unix systems have no atomic no-replace rename that rustix exposes:
    /// refused there rather than checked and renamed with a window between the two.
    pub(crate) fn rename_noreplace_at(
        src_dir: &DirFd,
        src_name: &std::ffi::OsStr,
        dst_dir: &DirFd,
        dst_name: &std::ffi::OsStr,
    ) -> io::Result<()> {
        #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
        {
            use rustix::fs::{RenameFlags, renameat_with};
            renameat_with(src_dir, src_name, dst_dir, dst_name, RenameFlags::NOREPLACE)
                .map_err(io::Error::from)
        }
        #[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
        {
            let _ = (src_dir, src_name, dst_dir, dst_name);
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
    }
}

#[cfg(windows)]
mod windows;

/// Keeps only the paths whose entry really exists in its (symlink-free) parent directory
/// now: walks that read directories by path can be misled by a directory swapped for a
/// symlink mid-walk, and this drops whatever they found through it.
pub(crate) fn still_inside<'a>(
    paths: impl IntoIterator<Item = &'a Path>,
) -> std::collections::HashSet<std::path::PathBuf> {
    let mut parents: std::collections::HashMap<std::path::PathBuf, Option<DirFd>> =
        std::collections::HashMap::new();
    let mut good = std::collections::HashSet::new();
    for path in paths {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            continue;
        };
        let fd = parents
            .entry(parent.to_path_buf())
            .or_insert_with(|| open_dir(parent).ok());
        if let Some(fd) = fd
            && exists_at(fd, name)
        {
            good.insert(path.to_path_buf());
        }
    }
    good
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn refuses_a_symlink_anywhere_on_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("real")).unwrap();
        std::fs::write(base.join("real/f"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        assert!(open_read(&base.join("real/f")).is_ok());
        let err = open_read(&base.join("link/f")).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(open_dir(&base.join("link")).is_err());
        assert!(open_dir(&base.join("real")).is_ok());
    }

    /// The entries come from the directory that was opened, even when its path is swapped
    /// for a symlink to another directory before they are read (what `list_directory`
    /// relies on, on Linux and macOS alike).
    #[test]
    fn a_held_directory_lists_itself_after_its_path_is_swapped() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("dir")).unwrap();
        std::fs::create_dir_all(base.join("secret")).unwrap();
        std::fs::write(base.join("dir/inside.txt"), "12345").unwrap();
        std::fs::write(base.join("secret/secret.txt"), "x").unwrap();
        std::os::unix::fs::symlink("inside.txt", base.join("dir/link")).unwrap();
        std::os::unix::fs::symlink("gone", base.join("dir/dangling")).unwrap();
        let handle = DirHandle::open(&base.join("dir")).unwrap();
        std::fs::rename(base.join("dir"), base.join("moved")).unwrap();
        std::os::unix::fs::symlink(base.join("secret"), base.join("dir")).unwrap();
        let mut entries = handle.entries().unwrap();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<_> = entries.iter().map(|e| e.name.to_str().unwrap()).collect();
        assert_eq!(names, ["dangling", "inside.txt", "link"]);
        assert_eq!((entries[1].kind, entries[1].len), (HeldKind::File, 5));
        assert!(entries[1].modified.is_some());
        assert_eq!(
            entries[2].link,
            Some((PathBuf::from("inside.txt"), Some(HeldKind::File)))
        );
        assert_eq!(entries[0].link, Some((PathBuf::from("gone"), None)));
    }
}

/// What every platform must hold: the directory that was opened and checked is the one
/// acted on, whatever happens to the path that named it.
#[cfg(test)]
mod held {
    use super::*;
    use std::ffi::OsStr;
    #[cfg(windows)]
    use std::io;
    use std::io::Write as _;

    /// An ancestor of a held directory is renamed away and a new directory put at the old
    /// path (what a junction or symlink planted there would also do): creating, replacing,
    /// moving, listing and removing all still happen in the held (moved) directory, and the
    /// new one at the old path is never touched.
    #[test]
    fn a_held_directory_is_acted_on_after_an_ancestor_is_renamed() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("a").join("b")).unwrap();
        std::fs::write(base.join("a").join("b").join("old.txt"), "old").unwrap();
        if std::env::var_os("ROOTGREP_UNDER_WINE").is_some() {
            // Wine keeps the Unix path of every handle it opened and resolves names relative
            // to a handle through that stored path, so it cannot model a directory moved
            // while held; Windows resolves them through the open directory itself.
            eprintln!("under Wine: handles are paths there; nothing to probe");
            return;
        }
        let held = open_dir(&base.join("a").join("b")).unwrap();
        let listing = DirHandle::open(&base.join("a").join("b")).unwrap();
        if let Err(e) = std::fs::rename(base.join("a"), base.join("moved")) {
            // Some systems refuse to rename a folder while something in it is open; then
            // the window this test probes cannot open at all.
            eprintln!("the ancestor could not be renamed ({e}); nothing to probe");
            return;
        }
        std::fs::create_dir_all(base.join("a").join("b")).unwrap();
        std::fs::write(base.join("a").join("b").join("decoy.txt"), "decoy").unwrap();

        let mut temp = create_temp_at(&held, ".new.rootgrep-tmp", false)
            .unwrap()
            .expect("a fresh name");
        temp.write_all(b"new").unwrap();
        rename_at(&held, ".new.rootgrep-tmp", OsStr::new("old.txt")).unwrap();
        drop(temp);
        mkdir_at(&held, OsStr::new("sub")).unwrap();
        assert!(exists_at(&held, OsStr::new("sub")));
        assert!(exists_at(&held, OsStr::new("old.txt")));
        assert!(!exists_at(&held, OsStr::new("decoy.txt")));
        rename_noreplace_at(&held, OsStr::new("old.txt"), &held, OsStr::new("kept.txt")).unwrap();
        let gone = create_temp_at(&held, ".gone.rootgrep-tmp", false)
            .unwrap()
            .expect("a fresh name");
        drop(gone);
        unlink_at(&held, ".gone.rootgrep-tmp").unwrap();
        assert!(!exists_at(&held, OsStr::new(".gone.rootgrep-tmp")));

        let mut names: Vec<String> = listing
            .entries()
            .unwrap()
            .into_iter()
            .map(|e| e.name.to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["kept.txt", "sub"]);
        let moved = base.join("moved").join("b");
        assert_eq!(
            std::fs::read_to_string(moved.join("kept.txt")).unwrap(),
            "new"
        );
        assert!(moved.join("sub").is_dir());
        let mut decoys: Vec<_> = std::fs::read_dir(base.join("a").join("b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        decoys.sort();
        assert_eq!(
            decoys,
            ["decoy.txt"],
            "the directory now at the old path was touched"
        );
    }

    /// A directory whose entries take many reads of the listing buffer (2,000 long names,
    /// about 600 KB of records on Windows) is listed whole, each entry once, with its kind
    /// and size.
    #[test]
    fn a_large_directory_is_listed_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let long = "n".repeat(100);
        for i in 0..2000 {
            std::fs::write(base.join(format!("{long}{i:04}")), i.to_string()).unwrap();
        }
        std::fs::create_dir(base.join("a dir")).unwrap();
        let mut entries = DirHandle::open(&base).unwrap().entries().unwrap();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(entries.len(), 2001);
        assert_eq!(
            (entries[0].name.to_str(), entries[0].kind),
            (Some("a dir"), HeldKind::Dir)
        );
        let last = &entries[2000];
        assert_eq!(last.name.to_str().unwrap(), format!("{long}1999"));
        assert_eq!((last.kind, last.len), (HeldKind::File, 4));
        assert!(last.modified.is_some());
    }

    /// A rename or creation never reaches past its directory, whatever name it is given.
    #[cfg(windows)]
    #[test]
    fn an_entry_name_is_one_plain_name() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("d")).unwrap();
        std::fs::write(base.join("d").join("f"), "x").unwrap();
        let held = open_dir(&base.join("d")).unwrap();
        for bad in [
            "..",
            ".",
            r"..\escaped",
            "../escaped",
            "f:stream",
            "",
            "a\\b",
        ] {
            let err = rename_at(&held, "f", OsStr::new(bad)).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad:?}: {err}");
            assert!(mkdir_at(&held, OsStr::new(bad)).is_err(), "{bad:?}");
        }
        assert!(!base.join("escaped").exists());
        assert_eq!(
            std::fs::read_to_string(base.join("d").join("f")).unwrap(),
            "x"
        );
    }
}
