//! Why an edit was refused or failed ([`EditError`]): each variant carries what the caller
//! needs to explain it (the edit's position, the match count and lines, a near match to
//! quote), and every one means the file was left untouched. `Display` says plainly what was
//! wrong; what to change in the next call is worded by the adapter, which knows the tool.

use super::*;

/// Why an edit was refused. Every variant means the file was left untouched.
#[derive(Debug)]
pub enum EditError {
    /// More than [`MAX_EDITS`] edits.
    TooManyEdits(usize),
    /// The file is (or the result would be) larger than [`MAX_EDIT_BYTES`].
    TooLarge { path: PathBuf, size: u64 },
    /// The request was cancelled; nothing was written.
    Cancelled,
    /// The list of edits was empty.
    NoEdits,
    /// The file does not exist.
    FileNotFound { path: PathBuf },
    /// Reading the file failed.
    Io { path: PathBuf, source: io::Error },
    /// The path is a directory / symlink / special file, or writing the result failed.
    Write { path: PathBuf, source: WriteError },
    /// The file was swapped for something else than a regular file while it was opened.
    NotRegularFile { path: PathBuf },
    /// The file is not valid UTF-8 (or is UTF-16).
    NotUtf8 {
        path: PathBuf,
        line: usize,
        utf16: bool,
    },
    /// The old text is empty and the file is not.
    EmptyOldString { edit: usize, of: usize },
    /// The old and the new text are the same.
    NoChange { edit: usize, of: usize },
    /// The old text does not occur.
    NotFound {
        path: PathBuf,
        edit: usize,
        of: usize,
        near: Option<NearMatch>,
        /// The old text looks like it carries `cat -n` style line numbers.
        line_number_prefixes: bool,
        /// The old text occurs in the original file, but an earlier edit of this call
        /// changed it.
        consumed_by_earlier_edit: bool,
    },
    /// The old text occurs more than once and the edit does not replace all.
    Ambiguous {
        path: PathBuf,
        edit: usize,
        of: usize,
        /// Every occurrence, overlapping ones included.
        count: usize,
        /// The 1-based start lines of the first occurrences (at most `MAX_LINES_LISTED`,
        /// 50: fewer than `count` when there are more).
        lines: Vec<usize>,
    },
    /// The file changed on disk while we were editing it.
    ChangedMeanwhile { path: PathBuf },
}

impl std::error::Error for EditError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EditError::Io { source, .. } => Some(source),
            EditError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// "edit 2 of 3: " when there are several edits, nothing for a single one.
fn which(edit: usize, of: usize) -> String {
    if of > 1 {
        format!("edit {edit} of {of}: ")
    } else {
        String::new()
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path_text = crate::roots::path_text;
        match self {
            EditError::NoEdits => write!(f, "no edits given"),
            EditError::TooManyEdits(n) => {
                write!(f, "{n} edits in one call; at most {MAX_EDITS} are accepted")
            }
            EditError::TooLarge { path, size } => write!(
                f,
                "{} is (or would become) {size} bytes; files up to {} MiB are edited",
                path_text(path),
                MAX_EDIT_BYTES / 1024 / 1024
            ),
            EditError::Cancelled => write!(f, "the edit was cancelled"),
            EditError::FileNotFound { path } => write!(f, "{} does not exist", path_text(path)),
            EditError::Io { source, .. } => write!(f, "{source}"),
            EditError::Write { source, .. } => write!(f, "{source}"),
            EditError::NotRegularFile { path } => {
                write!(f, "{} is not a regular file", path_text(path))
            }
            EditError::NotUtf8 {
                path, utf16: true, ..
            } => write!(f, "{} is UTF-16 encoded, not UTF-8", path_text(path)),
            EditError::NotUtf8 { path, line, .. } => write!(
                f,
                "{} is not valid UTF-8 (first invalid byte on line {line})",
                path_text(path)
            ),
            EditError::EmptyOldString { edit, of } => {
                write!(f, "{}the old text is empty", which(*edit, *of))
            }
            EditError::NoChange { edit, of } => {
                write!(
                    f,
                    "{}the old and the new text are the same",
                    which(*edit, *of)
                )
            }
            EditError::NotFound { path, edit, of, .. } => write!(
                f,
                "{}old text not found in {}",
                which(*edit, *of),
                path_text(path)
            ),
            EditError::Ambiguous {
                path,
                edit,
                of,
                count,
                ..
            } => write!(
                f,
                "{}old text found {count} times in {}",
                which(*edit, *of),
                path_text(path)
            ),
            EditError::ChangedMeanwhile { path } => write!(
                f,
                "{} changed on disk while it was being edited",
                path_text(path)
            ),
        }
    }
}
