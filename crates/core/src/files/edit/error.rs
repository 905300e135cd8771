//! Why an edit was refused or failed ([`EditError`]) and how each case reads: the texts say
//! what was wrong and that nothing was written, quoting near matches the model can copy.

use super::*;

/// Why an edit was refused. Every variant means the file was left untouched.
#[derive(Debug)]
pub enum EditError {
    /// More than [`MAX_EDITS`] edits.
    TooManyEdits(usize),
    /// The file is larger than [`MAX_EDIT_BYTES`].
    TooLarge { path: PathBuf, size: u64 },
    /// The request was cancelled; nothing was written.
    Cancelled,
    /// `edits` was empty.
    NoEdits,
    /// The file does not exist.
    FileNotFound { path: PathBuf },
    /// Reading or writing failed, or the path is a directory / symlink / special file.
    Io { path: PathBuf, source: io::Error },
    /// The file is not valid UTF-8 (or is UTF-16).
    NotUtf8 {
        path: PathBuf,
        line: usize,
        utf16: bool,
    },
    /// `old_string` is empty and the file is not.
    EmptyOldString { edit: usize, of: usize },
    /// `old_string == new_string`.
    NoChange { edit: usize, of: usize },
    /// `old_string` does not occur.
    NotFound {
        path: PathBuf,
        edit: usize,
        of: usize,
        near: Option<NearMatch>,
        /// `old_string` looks like it carries `cat -n` style line numbers.
        line_number_prefixes: bool,
        /// `old_string` occurs in the original file, but an earlier edit of this call changed it.
        consumed_by_earlier_edit: bool,
    },
    /// `old_string` occurs more than once and `replace_all` is false.
    Ambiguous {
        path: PathBuf,
        edit: usize,
        of: usize,
        count: usize,
        lines: Vec<usize>,
    },
    /// The file changed on disk while we were editing it.
    ChangedMeanwhile { path: PathBuf },
}

impl std::error::Error for EditError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EditError::Io { source, .. } => Some(source),
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

const UNTOUCHED: &str = "No changes were made to the file.";

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::NoEdits => write!(
                f,
                "no edits given: pass old_string/new_string or a non-empty edits list"
            ),
            EditError::TooManyEdits(n) => write!(
                f,
                "{n} edits in one call; at most {MAX_EDITS} are accepted (split them over several calls). {UNTOUCHED}"
            ),
            EditError::TooLarge { path, size } => write!(
                f,
                "{} is (or would become) {size} bytes; edit_file edits files up to {} MiB \
                 (use write_file to replace a larger file whole). {UNTOUCHED}",
                crate::roots::path_text(path),
                MAX_EDIT_BYTES / 1024 / 1024
            ),
            EditError::Cancelled => write!(f, "the edit was cancelled. {UNTOUCHED}"),
            EditError::FileNotFound { path } => write!(
                f,
                "{} does not exist; edit_file changes existing files (use write_file to create one)",
                crate::roots::path_text(path)
            ),
            EditError::Io { source, .. } => write!(f, "{source}"),
            EditError::NotUtf8 {
                path, utf16: true, ..
            } => write!(
                f,
                "{} is UTF-16 encoded; edit_file only edits UTF-8 text (use write_file to replace it entirely)",
                crate::roots::path_text(path)
            ),
            EditError::NotUtf8 { path, line, .. } => write!(
                f,
                "{} is not valid UTF-8 (first invalid byte on line {line}); edit_file only edits \
                 UTF-8 text, so it was left untouched",
                crate::roots::path_text(path)
            ),
            EditError::EmptyOldString { edit, of } => write!(
                f,
                "{}old_string is empty; include the text to replace (to insert, include a \
                 neighbouring line in both old_string and new_string; to replace the whole \
                 file, use write_file). {UNTOUCHED}",
                which(*edit, *of)
            ),
            EditError::NoChange { edit, of } => write!(
                f,
                "{}old_string and new_string are identical, so the edit would change nothing. {UNTOUCHED}",
                which(*edit, *of)
            ),
            EditError::NotFound {
                path,
                edit,
                of,
                near,
                line_number_prefixes,
                consumed_by_earlier_edit,
            } => {
                write!(
                    f,
                    "{}old_string was not found in {}",
                    which(*edit, *of),
                    crate::roots::path_text(path)
                )?;
                if *edit > 1 {
                    write!(f, " (after applying the previous edits)")?;
                }
                write!(f, ". {UNTOUCHED}")?;
                if *consumed_by_earlier_edit {
                    write!(
                        f,
                        " It does occur in the file as it was, so an earlier edit in this call \
                         changed it: edits apply in order, each to the result of the previous ones."
                    )?;
                }
                if *line_number_prefixes {
                    write!(
                        f,
                        " old_string seems to include line-number prefixes from read_file \
                         (like `  12\\t`); remove them, they are not part of the file."
                    )?;
                }
                match near {
                    Some(near) => {
                        let lines = if near.start_line == near.end_line {
                            format!("line {}", near.start_line)
                        } else {
                            format!("lines {}-{}", near.start_line, near.end_line)
                        };
                        let count = if near.count > 1 {
                            format!(" ({} such matches; the first is shown)", near.count)
                        } else {
                            String::new()
                        };
                        write!(
                            f,
                            " It does match if whitespace, indentation and line endings are \
                             ignored{count}: {lines} of the file read exactly:\n{}\nCopy that \
                             text exactly (same indentation and spacing) into old_string.",
                            near.text
                        )
                    }
                    None if !*line_number_prefixes && !*consumed_by_earlier_edit => write!(
                        f,
                        " It does not match even ignoring whitespace; read the file again to \
                         get its current text. old_string must match exactly, including \
                         indentation."
                    ),
                    None => Ok(()),
                }
            }
            EditError::Ambiguous {
                path,
                edit,
                of,
                count,
                lines,
            } => {
                let shown: Vec<String> = lines
                    .iter()
                    .take(MAX_LINES_LISTED)
                    .map(|l| l.to_string())
                    .collect();
                let more = if lines.len() > MAX_LINES_LISTED {
                    ", …"
                } else {
                    ""
                };
                write!(
                    f,
                    "{}old_string matches {count} times in {}{} (starting at lines {}{more}); add \
                     surrounding lines to old_string to make it unique, or set replace_all to \
                     replace every occurrence. {UNTOUCHED}",
                    which(*edit, *of),
                    crate::roots::path_text(path),
                    if *edit > 1 {
                        " after the previous edits"
                    } else {
                        ""
                    },
                    shown.join(", "),
                )
            }
            EditError::ChangedMeanwhile { path } => write!(
                f,
                "{} changed on disk while it was being edited; read it again and retry. {UNTOUCHED}",
                crate::roots::path_text(path)
            ),
        }
    }
}
