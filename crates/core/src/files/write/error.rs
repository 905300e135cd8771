//! Why a write or a `mkdir -p` failed ([`WriteError`]): a variant for each case a caller
//! words or maps on its own (a missing parent, a symlink, a read-only file, a file changed
//! meanwhile…), and [`WriteError::Io`] for what the operating system reported, with what
//! was being done and to which path. `Display` says plainly what was wrong; what to change
//! in the next call is worded by the adapter, which knows the tools.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::roots::path_display;

/// Why [`write_atomic`](super::write_atomic) or
/// [`create_directory`](super::create_directory) failed. Nothing was written.
#[derive(Debug)]
pub enum WriteError {
    /// The parent directory does not exist, and was not to be created.
    MissingParent { path: PathBuf, parent: PathBuf },
    /// The parent exists and is not a directory.
    ParentNotADirectory { path: PathBuf, parent: PathBuf },
    /// `mkdir -p target`: `blocker`, on the way, exists and is not a directory.
    InTheWay { target: PathBuf, blocker: PathBuf },
    /// The path has no parent or no final name (`/`, `..`): it names no file.
    NotAFilePath { path: PathBuf },
    /// `mkdir -p`: a directory to create has no parent or no final name.
    NotADirectoryPath { path: PathBuf },
    /// The path is a directory.
    IsADirectory { path: PathBuf },
    /// The path is a symbolic link (to `target`, `None` when unreadable): never written
    /// through, never replaced.
    Symlink {
        path: PathBuf,
        target: Option<PathBuf>,
    },
    /// The path is a fifo, a socket or a device.
    SpecialFile { path: PathBuf },
    /// The file has no write permission bit (its `mode` on Unix) or has its read-only
    /// attribute set (Windows: `mode` is `None`): whoever made it so meant it not to change.
    ReadOnly { path: PathBuf, mode: Option<u32> },
    /// The kernel says this server's user may not write the file (Unix: owner and mode).
    NotPermitted {
        path: PathBuf,
        uid: u32,
        mode: u32,
        source: io::Error,
    },
    /// Every temporary file name tried was taken.
    NoTempName { path: PathBuf },
    /// An edit's file is no longer the version it read (`version.rs`): its replacement was
    /// not renamed into place.
    ChangedMeanwhile,
    /// The operating system's error while `doing` something (`"cannot write"`) to `path`.
    Io {
        doing: &'static str,
        path: PathBuf,
        source: io::Error,
    },
}

impl WriteError {
    /// Wraps the operating system's error while `doing` something to `path`.
    pub(crate) fn os<'a>(doing: &'static str, path: &'a Path) -> impl Fn(io::Error) -> Self + 'a {
        move |source| WriteError::Io {
            doing,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::Io { source, .. } | WriteError::NotPermitted { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::MissingParent { path, parent } => write!(
                f,
                "cannot write {}: parent directory {} does not exist",
                path_display(path),
                path_display(parent)
            ),
            WriteError::ParentNotADirectory { path, parent } => write!(
                f,
                "cannot write {}: {} is not a directory",
                path_display(path),
                path_display(parent)
            ),
            WriteError::InTheWay { target, blocker } => write!(
                f,
                "cannot create directory {}: {} exists and is not a directory",
                crate::quote::escape_for_display(&target.to_string_lossy()),
                path_display(blocker)
            ),
            WriteError::NotAFilePath { path } => {
                write!(f, "cannot write {}: not a file path", path_display(path))
            }
            WriteError::NotADirectoryPath { path } => write!(
                f,
                "cannot create directory {0}: {0} is not a directory path",
                path_display(path)
            ),
            WriteError::IsADirectory { path } => {
                write!(f, "cannot write {}: it is a directory", path_display(path))
            }
            WriteError::Symlink { path, target } => write!(
                f,
                "cannot write {}: it is a symbolic link (to {}); rootgrep does not write \
                 through or replace symlinks, write to the link's resolved target instead",
                path_display(path),
                target.as_ref().map_or_else(
                    || "an unreadable target".to_string(),
                    |t| crate::quote::escape_for_display(&t.to_string_lossy()).into_owned()
                )
            ),
            WriteError::SpecialFile { path } => write!(
                f,
                "cannot write {}: it is a special file (fifo, socket or device), not a regular \
                 file",
                path_display(path)
            ),
            WriteError::ReadOnly { path, mode } => {
                write!(f, "cannot write {}: ", path_display(path))?;
                match mode {
                    Some(mode) => write!(
                        f,
                        "the file is read-only (mode {mode:04o}); make it writable first if it \
                         is meant to change"
                    )?,
                    None => f.write_str(
                        "the file is read-only (its read-only attribute is set); clear it first \
                         if the file is meant to change",
                    )?,
                }
                f.write_str("; nothing was written")
            }
            WriteError::NotPermitted {
                path,
                uid,
                mode,
                source,
            } => write!(
                f,
                "cannot write {}: this server's user may not write the file (owner uid {uid}, \
                 mode {mode:04o}: {source}); nothing was written",
                path_display(path)
            ),
            WriteError::NoTempName { path } => write!(
                f,
                "cannot create a temporary file for {}: no free temporary file name",
                path_display(path)
            ),
            WriteError::ChangedMeanwhile => {
                f.write_str("the file changed on disk after it was read")
            }
            WriteError::Io {
                doing,
                path,
                source,
            } => write!(f, "{doing} {}: {source}", path_display(path)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_case_reads_as_the_answers_say_it() {
        let p = |s: &str| PathBuf::from(s);
        let cases = [
            (
                WriteError::MissingParent {
                    path: p("/w/no/f"),
                    parent: p("/w/no"),
                },
                "cannot write /w/no/f: parent directory /w/no does not exist",
            ),
            (
                WriteError::InTheWay {
                    target: p("/w/f/sub"),
                    blocker: p("/w/f"),
                },
                "cannot create directory /w/f/sub: /w/f exists and is not a directory",
            ),
            (
                WriteError::Symlink {
                    path: p("/w/l"),
                    target: None,
                },
                "cannot write /w/l: it is a symbolic link (to an unreadable target); rootgrep \
                 does not write through or replace symlinks, write to the link's resolved \
                 target instead",
            ),
            (
                WriteError::ReadOnly {
                    path: p("/w/f"),
                    mode: Some(0o444),
                },
                "cannot write /w/f: the file is read-only (mode 0444); make it writable first \
                 if it is meant to change; nothing was written",
            ),
            (
                WriteError::NotPermitted {
                    path: p("/w/f"),
                    uid: 0,
                    mode: 0o644,
                    source: io::Error::other("denied"),
                },
                "cannot write /w/f: this server's user may not write the file (owner uid 0, \
                 mode 0644: denied); nothing was written",
            ),
            (
                WriteError::ChangedMeanwhile,
                "the file changed on disk after it was read",
            ),
            (
                WriteError::Io {
                    doing: "cannot create directory",
                    path: p("/w/d"),
                    source: io::Error::other("disk on fire"),
                },
                "cannot create directory /w/d: disk on fire",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), text);
        }
    }
}
