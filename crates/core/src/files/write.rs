//! Atomic file replacement and `mkdir -p`: the only code in `files/` that creates or
//! replaces regular files and directories (edit.rs writes through [`write_atomic`]).
//!
//! API:
//! - [`write_atomic`]`(path, content, create_dirs) -> Result<WriteOutcome, WriteError>` writes
//!   `content` to a temp file in the target's directory, fsyncs it, gives it the existing
//!   file's permission bits (and, best effort, owner/group), renames it over `path` and
//!   fsyncs the directory. A reader sees the old or the new content, never a mix, and a
//!   crash leaves one or the other on disk.
//! - [`create_directory`]`(path) -> Result<CreateDirOutcome, WriteError>` is `mkdir -p`: fine
//!   if the directory exists, a clear error naming the component when a non-directory is in
//!   the way.
//! - [`WriteError`]: why, one variant per case a caller acts on, `Io` for the system's errors.
//! - [`TEMP_SUFFIX`]: temp files are named `.<name>.<random>.rootgrep-tmp`; a watcher can
//!   ignore that suffix (a crash can leave one behind).
//!
//! Symlinks: the caller resolves paths, but the final component can still be a symlink (a
//! lexical path, or a link created since). We refuse to write when the final component is a
//! symlink instead of writing through it or silently replacing the link with a regular file:
//! the error names the link's target so the caller can pass the resolved path (and check it
//! against the roots). The rename replaces the directory entry itself, so even a link swapped
//! in after our check is replaced, never followed.
//!
//! Replacing needs the permission to write the file itself (the kernel's answer for the
//! server's user, and at least one write bit in its mode, even for root): a rename would
//! need only the directory's, and would let anyone with a writable directory replace a
//! read-only or foreign file. Writes, edits and moves of one path run one at a time
//! (`lock.rs`); an edit's replacement checks, just before its rename, that the file is
//! still the one it read ([`write_locked`] with a `version::ReadVersion`).
//!
//! Known limits of replace-by-rename: hard links to the old file keep the old content (the
//! outcome counts them, `other_links`, and the tools say so), and extended attributes /
//! ACLs of the old file are not copied. Directories are fsynced through the handles the
//! call already holds, never re-opened by path.

use std::fs::{self, File, Metadata};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::version::{ReadVersion, still_as_read};

mod error;

pub use error::WriteError;

/// Suffix of the temporary files [`write_atomic`] creates next to the target.
pub const TEMP_SUFFIX: &str = ".rootgrep-tmp";

/// What [`write_atomic`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The path written (as passed in).
    pub path: PathBuf,
    /// True when no file existed at `path` before (checked just before writing).
    pub created: bool,
    /// Bytes written.
    pub bytes: u64,
    /// Parent directories created because `create_dirs` was set (outermost first).
    pub created_dirs: Vec<PathBuf>,
    /// Other hard links of the file that was replaced: they keep its old content.
    pub other_links: u64,
    /// Another process wrote to the file between the last "unchanged" check and the rename
    /// (only checked for a write with a [`ReadVersion`]): that write is not in the new file.
    pub late_write: bool,
}

/// What [`create_directory`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateDirOutcome {
    /// False when the directory already existed.
    pub created: bool,
    /// Every directory that was created, outermost first (empty when it existed).
    pub created_dirs: Vec<PathBuf>,
}

/// Atomically replace (or create) the regular file at `path` with `content`, holding the
/// path's lock (`lock.rs`) so no other write, edit or move of it by this process runs
/// meanwhile.
///
/// Errors ([`WriteError`], each naming the path):
/// - the parent is missing and `create_dirs` is false ([`WriteError::MissingParent`]);
/// - `path` is a directory, a symlink, or a special file;
/// - `path` is a file this process may not write, or one without any write permission bit
///   ([`WriteError::NotPermitted`], [`WriteError::ReadOnly`]): replacing it by rename would
///   need only the directory's permission, but the file's owner said it is not to be changed;
/// - anything the filesystem reports (permissions, space, read-only fs: [`WriteError::Io`]).
pub fn write_atomic(
    path: &Path,
    content: &[u8],
    create_dirs: bool,
) -> Result<WriteOutcome, WriteError> {
    let _held = super::lock::lock(&[path]);
    write_locked(path, content, create_dirs, None)
}

/// [`write_atomic`] for a caller that holds the path's lock. With `read`, the file is
/// replaced only if, just before the rename, the path still names the file that was read
/// and that file still holds exactly what was read (same content, size, mtime and ctime on
/// the read handle; same identity at the path); otherwise the temp file is removed and the
/// error is [`WriteError::ChangedMeanwhile`]. What remains between that check and the rename is the
/// time of one `stat` and the rename itself.
pub(crate) fn write_locked(
    path: &Path,
    content: &[u8],
    create_dirs: bool,
    read: Option<&ReadVersion<'_>>,
) -> Result<WriteOutcome, WriteError> {
    let (parent, name) = split_target(path)?;
    let created_dirs = parent_ready(path, parent, create_dirs)?;
    let existing = replaceable_metadata(path)?;

    // Everything below happens relative to a handle on the parent directory that was opened
    // without following any symlink: a directory swapped for a link after the caller checked
    // the path cannot redirect the write outside the workspace.
    let dir = super::safe::open_dir(parent).map_err(WriteError::os("cannot write", path))?;
    if let Some(meta) = &existing {
        may_replace(&dir, name, meta, path)?;
    }
    // Hidden, recognisable temp name in the same directory, so the rename stays on one
    // filesystem (and therefore atomic).
    let short = temp_stem(name);
    let (tmp_name, tmp) = create_temp(&dir, &short, existing.is_some(), path)?;
    let target = Target {
        dir: &dir,
        name,
        path,
    };
    let late_write =
        match replace_with_temp(&target, tmp, &tmp_name, content, existing.as_ref(), read) {
            Ok(late_write) => late_write,
            Err(e) => {
                let _ = super::safe::unlink_at(&dir, &tmp_name);
                return Err(e);
            }
        };
    super::safe::fsync_dir(&dir);

    Ok(WriteOutcome {
        path: path.to_path_buf(),
        created: existing.is_none(),
        bytes: content.len() as u64,
        created_dirs,
        other_links: existing.as_ref().map_or(0, other_links),
        late_write,
    })
}

/// Makes sure `parent` is a directory before `path` is written in it: creates it (and the
/// directories it needs) with `create_dirs`, else refuses with
/// [`WriteError::MissingParent`]. The directories created, outermost first.
fn parent_ready(path: &Path, parent: &Path, create_dirs: bool) -> Result<Vec<PathBuf>, WriteError> {
    match fs::metadata(parent) {
        Ok(meta) if meta.is_dir() => Ok(Vec::new()),
        Ok(_) => Err(WriteError::ParentNotADirectory {
            path: path.to_path_buf(),
            parent: parent.to_path_buf(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if !create_dirs {
                return Err(WriteError::MissingParent {
                    path: path.to_path_buf(),
                    parent: parent.to_path_buf(),
                });
            }
            Ok(create_directory(parent)?.created_dirs)
        }
        Err(e) => Err(WriteError::os("cannot write", path)(e)),
    }
}

/// Where a write lands: the parent's handle and the name in it, and the path as passed in.
struct Target<'a> {
    dir: &'a super::safe::DirFd,
    name: &'a std::ffi::OsStr,
    path: &'a Path,
}

/// Fills the temp file (with the replaced file's owner and mode), fsyncs it, checks that
/// the file is still the version read (when `read`), and renames the temp file over the
/// target. True when another process wrote to the replaced file in the instant before the
/// rename.
fn replace_with_temp(
    target: &Target<'_>,
    mut tmp: File,
    tmp_name: &str,
    content: &[u8],
    existing: Option<&Metadata>,
    read: Option<&ReadVersion<'_>>,
) -> Result<bool, WriteError> {
    let os = WriteError::os("cannot write", target.path);
    if let Some(meta) = existing {
        keep_owner_and_mode(&tmp, meta).map_err(&os)?;
    }
    tmp.write_all(content).map_err(&os)?;
    tmp.sync_all().map_err(&os)?;
    let checked = match read {
        Some(read) => {
            match still_as_read(target.dir, target.name, target.path, read).map_err(&os)? {
                Some(now) => Some((read, now)),
                None => return Err(WriteError::ChangedMeanwhile),
            }
        }
        None => None,
    };
    // renameat(2) replaces the directory entry; it never writes through a symlink that may
    // have appeared at `path` after the check above.
    super::safe::rename_at(target.dir, tmp_name, target.name).map_err(&os)?;
    // A write by another process between the last check and the rename went to the file
    // that was just replaced: it is not in the new file. Rare (the window is one `stat`
    // long), but said, never silent.
    Ok(checked.is_some_and(|(read, before)| {
        read.file.is_some_and(|file| {
            file.metadata().is_ok_and(|after| {
                after.len() != before.len() || after.modified().ok() != before.modified().ok()
            })
        })
    }))
}

/// Other names (hard links) of the file `meta` describes: replacing the file by rename
/// gives `path` a new file, and those names keep the old content.
#[cfg(unix)]
fn other_links(meta: &Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink().saturating_sub(1)
}

/// Stable std cannot count a file's links on Windows.
#[cfg(not(unix))]
fn other_links(_meta: &Metadata) -> u64 {
    0
}

/// Refuses to replace an existing file that this process may not write (the kernel's answer
/// for an open for writing: mode bits, ACLs, read-only mounts, immutable files) or that has
/// no write permission bit at all — a read-only file, refused even when the server runs as
/// root, who may write anything: whoever made it read-only meant it not to change.
fn may_replace(
    dir: &super::safe::DirFd,
    name: &std::ffi::OsStr,
    meta: &Metadata,
    path: &Path,
) -> Result<(), WriteError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mode = meta.mode() & 0o7777;
        if mode & 0o222 == 0 {
            return Err(WriteError::ReadOnly {
                path: path.to_path_buf(),
                mode: Some(mode),
            });
        }
        if let Err(source) = super::safe::may_write_at(dir, name) {
            return Err(WriteError::NotPermitted {
                path: path.to_path_buf(),
                uid: meta.uid(),
                mode,
                source,
            });
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, name);
        if meta.permissions().readonly() {
            return Err(WriteError::ReadOnly {
                path: path.to_path_buf(),
                mode: None,
            });
        }
    }
    Ok(())
}

/// The target's name shortened for its temp file: at most [`TEMP_STEM_BYTES`] bytes of whole
/// characters (counted in bytes: 64 four-byte characters alone would pass NAME_MAX once the
/// dot, the unique part and the suffix are added), so a valid name near NAME_MAX can still
/// be written.
fn temp_stem(name: &std::ffi::OsStr) -> String {
    let lossy = name.to_string_lossy();
    let mut end = 0;
    for (at, c) in lossy.char_indices() {
        if at + c.len_utf8() > TEMP_STEM_BYTES {
            break;
        }
        end = at + c.len_utf8();
    }
    lossy[..end].to_string()
}

/// Bytes of the target's name kept in its temp file's name.
const TEMP_STEM_BYTES: usize = 32;

/// Creates a new, uniquely named temp file in `dir` (`O_EXCL`, never following a link),
/// for the owner only when `private` (it replaces an existing file, whose mode it gets next).
/// `path` is the target, for the errors.
fn create_temp(
    dir: &super::safe::DirFd,
    short: &str,
    private: bool,
    path: &Path,
) -> Result<(String, File), WriteError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    for _ in 0..100 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let unique = format!(
            "{:x}{:x}{:x}",
            std::process::id(),
            nanos,
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let tmp_name = format!(".{short}.{unique}{TEMP_SUFFIX}");
        let created = super::safe::create_temp_at(dir, &tmp_name, private)
            .map_err(WriteError::os("cannot create a temporary file for", path))?;
        if let Some(file) = created {
            return Ok((tmp_name, file));
        }
    }
    Err(WriteError::NoTempName {
        path: path.to_path_buf(),
    })
}

/// `mkdir -p path`. Ok (with `created: false`) when `path` is already a directory, or a
/// symlink to one; an error naming the offending component when a file is in the way.
pub fn create_directory(path: &Path) -> Result<CreateDirOutcome, WriteError> {
    if path.is_dir() {
        return Ok(CreateDirOutcome {
            created: false,
            created_dirs: Vec::new(),
        });
    }
    // Collect the missing ancestors ourselves (instead of `create_dir_all`) to report what was
    // created and to name the component that blocks us.
    let mut missing = Vec::new();
    let mut cur = Some(path);
    while let Some(p) = cur {
        match fs::metadata(p) {
            Ok(meta) if meta.is_dir() => break,
            Ok(_) => return Err(not_a_dir_in_the_way(path, p)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symlink also reports NotFound; mkdir on it would fail with
                // EEXIST, so name it here.
                if fs::symlink_metadata(p).is_ok() {
                    return Err(not_a_dir_in_the_way(path, p));
                }
                missing.push(p.to_path_buf());
                cur = p.parent();
            }
            Err(e) => return Err(WriteError::os("cannot create directory", path)(e)),
        }
    }
    missing.reverse();

    let mut created_dirs = Vec::new();
    for dir in missing {
        let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
            return Err(WriteError::NotADirectoryPath { path: dir });
        };
        match make_dir(parent, name) {
            Ok(()) => created_dirs.push(dir),
            // Someone else made it meanwhile: fine if it is a directory.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(not_a_dir_in_the_way(path, &dir));
            }
            Err(e) => return Err(WriteError::os("cannot create directory", &dir)(e)),
        }
    }
    Ok(CreateDirOutcome {
        created: !created_dirs.is_empty(),
        created_dirs,
    })
}

/// `mkdir parent/name` relative to a handle on the parent opened without following
/// symlinks, so a parent swapped for a link cannot make us create a directory outside the
/// workspace; then that same handle is fsynced (never the parent re-opened by path: whatever
/// was swapped in meanwhile — a FIFO would block an open for ever — is not touched).
fn make_dir(parent: &Path, name: &std::ffi::OsStr) -> io::Result<()> {
    let handle = super::safe::open_dir(parent)?;
    super::safe::mkdir_at(&handle, name)?;
    super::safe::fsync_dir(&handle);
    Ok(())
}

/// Check that `path` may be replaced by a regular file: returns the existing file's metadata,
/// `None` when nothing is there, or an error for symlinks, directories and special files.
/// Shared with edit.rs so an edit fails before doing any work.
pub(crate) fn replaceable_metadata(path: &Path) -> Result<Option<Metadata>, WriteError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(WriteError::os("cannot write", path)(e)),
    };
    let ft = meta.file_type();
    let path = path.to_path_buf();
    if ft.is_file() {
        Ok(Some(meta))
    } else if ft.is_dir() {
        Err(WriteError::IsADirectory { path })
    } else if ft.is_symlink() {
        let target = fs::read_link(&path).ok();
        Err(WriteError::Symlink { path, target })
    } else {
        Err(WriteError::SpecialFile { path })
    }
}

/// Split `path` into its parent directory and final name, refusing `/`, `..` and friends.
fn split_target(path: &Path) -> Result<(&Path, &std::ffi::OsStr), WriteError> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => Ok((parent, name)),
        _ => Err(WriteError::NotAFilePath {
            path: path.to_path_buf(),
        }),
    }
}

#[cfg(unix)]
fn keep_owner_and_mode(file: &File, meta: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // Owner first: chown may clear setuid/setgid bits, the chmod below puts them back.
    // Best effort: an unprivileged user can only give the file to a group they belong to, and
    // failing to keep a foreign owner must not block the write (the user owns the new file,
    // as with any editor that saves by rename).
    let now = file.metadata()?;
    if now.uid() != meta.uid() || now.gid() != meta.gid() {
        let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
    }
    file.set_permissions(meta.permissions())
}

#[cfg(not(unix))]
fn keep_owner_and_mode(file: &File, meta: &Metadata) -> io::Result<()> {
    file.set_permissions(meta.permissions())
}

fn not_a_dir_in_the_way(target: &Path, blocker: &Path) -> WriteError {
    WriteError::InTheWay {
        target: target.to_path_buf(),
        blocker: blocker.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[cfg(unix)]
    #[test]
    fn a_symlink_swapped_into_the_parent_path_is_refused() {
        // The caller checked `base/dir/f`; then `dir` became a link to the outside.
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let outside = base.join("outside");
        fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, base.join("dir")).unwrap();
        let err = write_atomic(&base.join("dir/f"), b"x", false).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(create_directory(&base.join("dir/sub")).is_err());
        assert_eq!(
            fs::read_dir(&outside).unwrap().count(),
            0,
            "nothing written outside"
        );
    }

    #[test]
    fn creates_then_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        let out = write_atomic(&p, b"one", false).unwrap();
        assert!(out.created);
        assert_eq!(out.bytes, 3);
        let out = write_atomic(&p, b"second", false).unwrap();
        assert!(!out.created);
        assert_eq!(fs::read(&p).unwrap(), b"second");
        // No temp files left behind.
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
    }

    #[test]
    fn readers_never_see_a_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("flip.txt");
        let a = vec![b'a'; 64 * 1024];
        let b = vec![b'b'; 3 * 1024 + 7];
        write_atomic(&p, &a, false).unwrap();

        let done = Arc::new(AtomicBool::new(false));
        let reader = {
            let (p, a, b, done) = (p.clone(), a.clone(), b.clone(), done.clone());
            std::thread::spawn(move || {
                let mut reads = 0u32;
                while !done.load(Ordering::Relaxed) {
                    let got = fs::read(&p).expect("the file always exists");
                    assert!(got == a || got == b, "torn read: {} bytes", got.len());
                    reads += 1;
                }
                reads
            })
        };
        for i in 0..500 {
            write_atomic(&p, if i % 2 == 0 { &b } else { &a }, false).unwrap();
        }
        done.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("secret");
        fs::write(&p, "x").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&p, b"y", false).unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
            0o600
        );
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&p, b"z", false).unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
            0o755
        );
    }

    #[cfg(unix)]
    #[test]
    fn new_file_gets_umask_default_not_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let reference = dir.path().join("ref");
        fs::write(&reference, "").unwrap();
        let p = dir.path().join("new");
        write_atomic(&p, b"", false).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), mode(&reference));
    }

    #[test]
    fn missing_parent_without_create_dirs_fails_and_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path().join("no/such");
        let err = write_atomic(&parent.join("f.txt"), b"x", false).unwrap_err();
        assert!(
            err.to_string().contains(&parent.display().to_string()),
            "{err}"
        );
        let WriteError::MissingParent {
            parent: missing, ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(*missing, parent);
        assert!(!dir.path().join("no").exists());
    }

    #[test]
    fn create_dirs_creates_parents() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x/y/f.txt");
        let out = write_atomic(&p, b"hi", true).unwrap();
        assert_eq!(
            out.created_dirs,
            vec![dir.path().join("x"), dir.path().join("x/y")]
        );
        assert_eq!(fs::read(&p).unwrap(), b"hi");
    }

    #[test]
    fn refuses_directories() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(dir.path(), b"x", false).unwrap_err();
        assert!(err.to_string().contains("directory"), "{err}");
        fs::create_dir(dir.path().join("d")).unwrap();
        let err = write_atomic(&dir.path().join("d"), b"x", false).unwrap_err();
        assert!(matches!(err, WriteError::IsADirectory { .. }), "{err:?}");
        assert!(dir.path().join("d").is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinks_and_leaves_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write_atomic(&link, b"new", false).unwrap_err();
        assert!(matches!(err, WriteError::Symlink { .. }), "{err:?}");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(err.to_string().contains("target.txt"), "{err}");
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn create_directory_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c");
        let first = create_directory(&p).unwrap();
        assert!(first.created);
        assert_eq!(first.created_dirs.len(), 3);
        let again = create_directory(&p).unwrap();
        assert!(!again.created);
        assert!(again.created_dirs.is_empty());
        assert!(p.is_dir());
    }

    #[test]
    fn create_directory_names_the_file_in_the_way() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), "").unwrap();
        let err = create_directory(&dir.path().join("f/sub")).unwrap_err();
        // The system's ENOTDIR naming the path it was asked (Unix), or the file found in
        // the way (Windows, whose error for a file as a parent is not NotADirectory).
        assert!(
            matches!(&err, WriteError::Io { source, .. } if source.kind() == io::ErrorKind::NotADirectory)
                || matches!(&err, WriteError::InTheWay { .. }),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains(&dir.path().join("f").display().to_string()),
            "{err}"
        );
        let err = create_directory(&dir.path().join("f")).unwrap_err();
        assert!(matches!(err, WriteError::InTheWay { .. }), "{err:?}");
    }

    #[test]
    fn names_near_name_max_can_be_written() {
        let dir = tempfile::tempdir().unwrap();
        // 63 four-byte characters and 3 bytes: 255 bytes, the longest valid name.
        let name = format!("{}abc", "😀".repeat(63));
        assert_eq!(name.len(), 255);
        let p = dir.path().join(&name);
        write_atomic(&p, b"long", false).unwrap();
        write_atomic(&p, b"longer", false).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"longer");
        let ascii = dir.path().join("n".repeat(255));
        write_atomic(&ascii, b"x", false).unwrap();
        assert!(temp_stem(std::ffi::OsStr::new(&name)).len() <= TEMP_STEM_BYTES);
    }
}
