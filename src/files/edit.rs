//! Exact-match find-and-replace edits (the `edit_file` tool's domain code): matching rules,
//! uniqueness, line endings, BOM, the unified diff, and actionable errors.
//!
//! API: [`edit_file`]`(path, &[Edit], dry_run) -> Result<EditOutcome, EditError>`.
//!
//! - Edits apply in order to the text in memory; the file is written once, atomically (via
//!   [`write_atomic`]), and only if every edit succeeded — all or nothing. `dry_run` computes
//!   the same result and diff and never touches the file.
//! - An `old_string` must match exactly once, unless `replace_all` is set (then every
//!   non-overlapping match is replaced, left to right, and the count is reported). Overlapping
//!   occurrences count as separate matches for the uniqueness check (`aa` in `aaa` is
//!   ambiguous), because "which one did you mean?" is exactly the question then.
//! - Missing match: [`EditError::NotFound`] says so, and whether the text exists when
//!   whitespace, indentation and line endings are ignored (quoting the file's real text so the
//!   model can copy it), or when `cat -n` style line-number prefixes are stripped.
//! - Not unique: [`EditError::Ambiguous`] with the number of matches and their 1-based start
//!   lines (in the text as it stands after the previous edits of the same call).
//! - Empty `old_string` is an error, except on an empty file (BOM aside), where it inserts
//!   `new_string` — the natural way to fill a freshly created empty file. `old_string ==
//!   new_string` is an error (it would be a silent no-op).
//! - Line endings: the file's dominant ending (CRLF if CRLF lines outnumber bare-LF lines) is
//!   kept. In a CRLF file the model's `\n` in `old_string` is matched as `\r\n` (falling back to
//!   the literal string for mixed files), and `new_string` is written with the file's dominant
//!   ending. Lines outside the replaced spans are never touched, so mixed files stay mixed.
//! - A UTF-8 BOM is kept; UTF-16 and other non-UTF-8 files are refused with a clear error
//!   (rewriting them as UTF-8 would change every byte).
//! - The diff (`similar`, 3 lines of context, `---`/`+++` headers naming the path) is computed
//!   with CRLF shown as LF, so it stays readable.
//! - A cheap guard against lost updates: if the file's size, mtime or inode changed between
//!   our read and our write, the edit fails with [`EditError::ChangedMeanwhile`] instead of
//!   overwriting someone else's change (a small window remains between that check and the
//!   rename; there is no portable compare-and-swap for files).

use std::fmt;
use std::fs::{self, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::write::{replaceable_metadata, write_atomic};

/// One find-and-replace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Edit {
    pub old_string: String,
    pub new_string: String,
    pub replace_all: bool,
}

/// The file's dominant line ending (what inserted text is written with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    Crlf,
}

/// Result of a successful (or dry-run) edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOutcome {
    pub path: PathBuf,
    /// Unified diff of the whole call (empty when nothing changed).
    pub diff: String,
    /// Replacements made by each edit, in order (1 unless `replace_all`).
    pub replacements: Vec<usize>,
    /// False when the edits cancel out (e.g. a→b then b→a); nothing is written then.
    pub changed: bool,
    /// True when the file was written (not a dry run, and `changed`).
    pub written: bool,
    pub dry_run: bool,
    pub line_ending: LineEnding,
    /// The file starts with a UTF-8 BOM (kept).
    pub bom: bool,
    /// Size of the resulting file in bytes (what was, or on a dry run would be, written).
    pub bytes: u64,
}

/// Where the text would match if whitespace / line endings were ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMatch {
    /// 1-based lines of the first such match, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    /// How many whitespace-insensitive matches exist.
    pub count: usize,
    /// The file's actual text for the first match (possibly shortened).
    pub text: String,
}

/// Why an edit was refused. Every variant means the file was left untouched.
#[derive(Debug)]
pub enum EditError {
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
            EditError::FileNotFound { path } => write!(
                f,
                "{} does not exist; edit_file changes existing files (use write_file to create one)",
                path.display()
            ),
            EditError::Io { source, .. } => write!(f, "{source}"),
            EditError::NotUtf8 {
                path, utf16: true, ..
            } => write!(
                f,
                "{} is UTF-16 encoded; edit_file only edits UTF-8 text (use write_file to replace it entirely)",
                path.display()
            ),
            EditError::NotUtf8 { path, line, .. } => write!(
                f,
                "{} is not valid UTF-8 (first invalid byte on line {line}); edit_file only edits \
                 UTF-8 text, so it was left untouched",
                path.display()
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
                    path.display()
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
                    path.display(),
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
                path.display()
            ),
        }
    }
}

const MAX_LINES_LISTED: usize = 50;
const NEAR_MATCH_MAX_LINES: usize = 30;
const NEAR_MATCH_MAX_BYTES: usize = 4000;
/// Largest text (bytes) searched for a whitespace-insensitive near match.
const NEAR_MATCH_MAX_TEXT: usize = 16 * 1024 * 1024;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Apply `edits` to the UTF-8 text file at `path`, all or nothing; see the module docs.
pub fn edit_file(path: &Path, edits: &[Edit], dry_run: bool) -> Result<EditOutcome, EditError> {
    if edits.is_empty() {
        return Err(EditError::NoEdits);
    }
    let io_err = |source: io::Error| EditError::Io {
        path: path.to_path_buf(),
        source,
    };

    // Refuse symlinks, directories and special files before reading anything.
    if replaceable_metadata(path).map_err(io_err)?.is_none() {
        return Err(EditError::FileNotFound {
            path: path.to_path_buf(),
        });
    }
    let (bytes, read_meta) = read_with_metadata(path).map_err(io_err)?;

    let bom = bytes.starts_with(UTF8_BOM);
    let body = if bom {
        &bytes[UTF8_BOM.len()..]
    } else {
        &bytes[..]
    };
    let original = match std::str::from_utf8(body) {
        Ok(s) => s,
        Err(e) => {
            let utf16 = !bom && (bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF"));
            let line = body[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            return Err(EditError::NotUtf8 {
                path: path.to_path_buf(),
                line,
                utf16,
            });
        }
    };
    let ending = dominant_ending(original);

    let of = edits.len();
    let mut text = original.to_string();
    let mut replacements = Vec::with_capacity(of);
    for (i, e) in edits.iter().enumerate() {
        let edit = i + 1;
        if e.old_string == e.new_string {
            return Err(EditError::NoChange { edit, of });
        }
        let new = with_ending(&e.new_string, ending);
        if e.old_string.is_empty() {
            if !text.is_empty() {
                return Err(EditError::EmptyOldString { edit, of });
            }
            text = new;
            replacements.push(1);
            continue;
        }

        // The model's old_string in the file's style first, then as given (mixed files).
        let mut forms = vec![with_ending(&e.old_string, ending)];
        if forms[0] != e.old_string {
            forms.push(e.old_string.clone());
        }
        let Some(needle) = forms.into_iter().find(|f| text.contains(f.as_str())) else {
            return Err(not_found(path, edit, of, &e.old_string, &text, original));
        };

        if e.replace_all {
            let count = text.matches(needle.as_str()).count();
            text = text.replace(needle.as_str(), &new);
            replacements.push(count);
        } else {
            let starts = overlapping_starts(&text, &needle);
            if starts.len() > 1 {
                let lines = starts.iter().map(|&s| line_of(&text, s)).collect();
                return Err(EditError::Ambiguous {
                    path: path.to_path_buf(),
                    edit,
                    of,
                    count: starts.len(),
                    lines,
                });
            }
            text.replace_range(starts[0]..starts[0] + needle.len(), &new);
            replacements.push(1);
        }
    }

    let changed = text != original;
    let diff = if changed {
        unified_diff(path, original, &text)
    } else {
        String::new()
    };
    let mut out_bytes = Vec::with_capacity(text.len() + 3);
    if bom {
        out_bytes.extend_from_slice(UTF8_BOM);
    }
    out_bytes.extend_from_slice(text.as_bytes());

    let written = changed && !dry_run;
    if written {
        let now = fs::symlink_metadata(path).map_err(io_err)?;
        if !same_version(&read_meta, &now) {
            return Err(EditError::ChangedMeanwhile {
                path: path.to_path_buf(),
            });
        }
        write_atomic(path, &out_bytes, false).map_err(io_err)?;
    }
    Ok(EditOutcome {
        path: path.to_path_buf(),
        diff,
        replacements,
        changed,
        written,
        dry_run,
        line_ending: ending,
        bom,
        bytes: out_bytes.len() as u64,
    })
}

/// Read the file and the metadata of the very handle we read from (so the "changed
/// meanwhile" check compares against the version we actually read).
fn read_with_metadata(path: &Path) -> io::Result<(Vec<u8>, Metadata)> {
    let mut file = super::safe::open_read(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        // Swapped for something else since replaceable_metadata looked.
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)?;
    Ok((bytes, meta))
}

fn same_version(a: &Metadata, b: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (a.dev(), a.ino()) != (b.dev(), b.ino()) {
            return false;
        }
    }
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

fn dominant_ending(text: &str) -> LineEnding {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count() - crlf;
    if crlf > lf {
        LineEnding::Crlf
    } else {
        LineEnding::Lf
    }
}

/// `s` with every line break (`\r\n` or `\n`) written as `ending`.
fn with_ending(s: &str, ending: LineEnding) -> String {
    let lf = s.replace("\r\n", "\n");
    match ending {
        LineEnding::Lf => lf,
        LineEnding::Crlf => lf.replace('\n', "\r\n"),
    }
}

/// Start offsets of every occurrence of `needle`, overlapping ones included.
fn overlapping_starts(text: &str, needle: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find(needle) {
        let at = from + pos;
        starts.push(at);
        // Step one character, not one byte, to stay on a char boundary.
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    starts
}

/// 1-based line number of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn not_found(
    path: &Path,
    edit: usize,
    of: usize,
    old: &str,
    text: &str,
    original: &str,
) -> EditError {
    let consumed = edit > 1 && {
        let ending = dominant_ending(original);
        original.contains(&with_ending(old, ending)) || original.contains(old)
    };
    let stripped = strip_line_number_prefixes(old);
    let mut near = near_match(text, old);
    if near.is_none()
        && let Some(s) = &stripped
    {
        near = near_match(text, s);
    }
    EditError::NotFound {
        path: path.to_path_buf(),
        edit,
        of,
        near,
        line_number_prefixes: stripped.is_some(),
        consumed_by_earlier_edit: consumed,
    }
}

/// If every non-blank line of `s` starts with a `cat -n` style prefix (optional spaces,
/// digits, then a tab or `→`), return `s` without those prefixes.
fn strip_line_number_prefixes(s: &str) -> Option<String> {
    let mut out = Vec::new();
    let mut any = false;
    for line in s.split('\n') {
        if line.trim().is_empty() {
            out.push(line);
            continue;
        }
        let rest = line.trim_start_matches(' ');
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let after = &rest[digits..];
        let body = after
            .strip_prefix('\t')
            .or_else(|| after.strip_prefix('→'))?;
        out.push(body);
        any = true;
    }
    any.then(|| out.join("\n"))
}

/// Whitespace-insensitive search: every whitespace run counts as one space, and leading or
/// trailing whitespace of `needle` is ignored. Returns the real text of the first match.
fn near_match(text: &str, needle: &str) -> Option<NearMatch> {
    // The offset map costs 8 bytes per byte of text; a hint is not worth that on huge files.
    if text.len() > NEAR_MATCH_MAX_TEXT {
        return None;
    }
    let (norm_needle, _) = collapse_whitespace(needle.trim());
    if norm_needle.is_empty() {
        return None;
    }
    let (norm_text, map) = collapse_whitespace(text);
    let starts: Vec<usize> = norm_text
        .match_indices(norm_needle.as_str())
        .map(|(i, _)| i)
        .collect();
    let &first = starts.first()?;
    let start = map[first];
    // `map` holds the original offset of each normalised byte; the match's last byte maps
    // into its last original character.
    let last = map[first + norm_needle.len() - 1];
    let end = last + text[last..].chars().next().map_or(1, char::len_utf8);
    let real = &text[start..end];
    Some(NearMatch {
        start_line: line_of(text, start),
        end_line: line_of(text, end.saturating_sub(1).max(start)),
        count: starts.len(),
        text: shorten(real),
    })
}

/// Collapse whitespace runs to one space; also return, for each output byte, the offset of
/// the input byte it came from.
fn collapse_whitespace(s: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len());
    let mut in_space = false;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                map.push(i);
                in_space = true;
            }
        } else {
            in_space = false;
            out.push(c);
            map.extend(std::iter::repeat_n(i, c.len_utf8()));
        }
    }
    (out, map)
}

fn shorten(s: &str) -> String {
    let mut out = String::new();
    for (n, line) in s.split_inclusive('\n').enumerate() {
        if n == NEAR_MATCH_MAX_LINES || out.len() + line.len() > NEAR_MATCH_MAX_BYTES {
            out.push_str("[… match continues]");
            return out;
        }
        out.push_str(&line.replace("\r\n", "\n"));
    }
    out
}

fn unified_diff(path: &Path, before: &str, after: &str) -> String {
    // Show CRLF as LF: the diff is for reading, and the file's endings are preserved anyway.
    let (before, after) = (before.replace("\r\n", "\n"), after.replace("\r\n", "\n"));
    let name = path.display().to_string();
    similar::TextDiff::from_lines(&before, &after)
        .unified_diff()
        .context_radius(3)
        .header(&name, &name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old_string: old.into(),
            new_string: new.into(),
            replace_all: false,
        }
    }

    fn file_with(content: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        fs::write(&p, content).unwrap();
        (dir, p)
    }

    #[test]
    fn single_edit_writes_and_returns_diff() {
        let (_d, p) = file_with(b"fn main() {\n    greet(\"hi\");\n}\n");
        let out = edit_file(&p, &[edit("\"hi\"", "\"hello\"")], false).unwrap();
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "fn main() {\n    greet(\"hello\");\n}\n"
        );
        assert_eq!(out.replacements, vec![1]);
        assert!(out.written && out.changed);
        let name = p.display().to_string();
        assert!(
            out.diff
                .starts_with(&format!("--- {name}\n+++ {name}\n@@ -1,3 +1,3 @@")),
            "{}",
            out.diff
        );
        assert!(
            out.diff
                .contains("-    greet(\"hi\");\n+    greet(\"hello\");\n"),
            "{}",
            out.diff
        );
    }

    #[test]
    fn crlf_file_stays_crlf_with_lf_strings_from_the_model() {
        let (_d, p) = file_with(b"one\r\ntwo\r\nthree\r\n");
        let out = edit_file(&p, &[edit("one\ntwo\n", "uno\ndos\nextra\n")], false).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"uno\r\ndos\r\nextra\r\nthree\r\n");
        assert_eq!(out.line_ending, LineEnding::Crlf);
        assert!(!out.diff.contains('\r'), "diff shows LF: {:?}", out.diff);
    }

    #[test]
    fn mixed_endings_outside_the_edit_are_untouched() {
        let (_d, p) = file_with(b"a\r\nb\nc\r\nd\r\n");
        edit_file(&p, &[edit("d", "D")], false).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"a\r\nb\nc\r\nD\r\n");
    }

    #[test]
    fn bom_is_kept() {
        let (_d, p) = file_with(b"\xEF\xBB\xBFname = 1\n");
        let out = edit_file(&p, &[edit("name = 1", "name = 2")], false).unwrap();
        assert!(out.bom);
        assert_eq!(fs::read(&p).unwrap(), b"\xEF\xBB\xBFname = 2\n");
    }

    #[test]
    fn ambiguous_edit_lists_count_and_lines_and_leaves_file() {
        let content = "x = 1\ny = 2\nx = 1\nz\nx = 1\n";
        let (_d, p) = file_with(content.as_bytes());
        let err = edit_file(&p, &[edit("x = 1", "x = 9")], false).unwrap_err();
        match &err {
            EditError::Ambiguous { count, lines, .. } => {
                assert_eq!(*count, 3);
                assert_eq!(lines, &vec![1, 3, 5]);
            }
            other => panic!("unexpected {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("3 times") && msg.contains("lines 1, 3, 5") && msg.contains("replace_all"),
            "{msg}"
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), content);
    }

    #[test]
    fn overlapping_occurrences_are_ambiguous() {
        let (_d, p) = file_with(b"aaa\n");
        let err = edit_file(&p, &[edit("aa", "b")], false).unwrap_err();
        assert!(
            matches!(err, EditError::Ambiguous { count: 2, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn replace_all_counts() {
        let (_d, p) = file_with(b"foo bar foo\nfoo\n");
        let e = Edit {
            old_string: "foo".into(),
            new_string: "baz".into(),
            replace_all: true,
        };
        let out = edit_file(&p, &[e], false).unwrap();
        assert_eq!(out.replacements, vec![3]);
        assert_eq!(fs::read_to_string(&p).unwrap(), "baz bar baz\nbaz\n");
    }

    #[test]
    fn missing_edit_says_not_found_and_suggests_whitespace_match() {
        let content = "fn a() {\n        let x = 1;\n    let y = 2;\n}\n";
        let (_d, p) = file_with(content.as_bytes());
        let err =
            edit_file(&p, &[edit("let x = 1;\nlet y = 2;", "let x = 3;")], false).unwrap_err();
        let EditError::NotFound {
            near: Some(near), ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!((near.start_line, near.end_line), (2, 3));
        assert_eq!(near.text, "let x = 1;\n    let y = 2;");
        let msg = err.to_string();
        assert!(
            msg.contains("not found") && msg.contains("whitespace") && msg.contains("lines 2-3"),
            "{msg}"
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), content);

        let err = edit_file(&p, &[edit("nothing like it", "x")], false).unwrap_err();
        assert!(
            matches!(err, EditError::NotFound { near: None, .. }),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains("does not match even ignoring whitespace"),
            "{err}"
        );
    }

    #[test]
    fn line_number_prefixes_are_detected() {
        let (_d, p) = file_with(b"alpha\nbeta\n");
        let err = edit_file(&p, &[edit("     1\talpha\n     2\tbeta", "x")], false).unwrap_err();
        let EditError::NotFound {
            line_number_prefixes: true,
            near: Some(near),
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(near.start_line, 1);
        assert!(err.to_string().contains("line-number prefixes"), "{err}");
    }

    #[test]
    fn edits_are_all_or_nothing() {
        let content = "one\ntwo\nthree\n";
        let (_d, p) = file_with(content.as_bytes());
        let err = edit_file(&p, &[edit("one", "1"), edit("missing", "x")], false).unwrap_err();
        assert!(
            matches!(err, EditError::NotFound { edit: 2, of: 2, .. }),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("edit 2 of 2: "), "{err}");
        assert_eq!(fs::read_to_string(&p).unwrap(), content);
    }

    #[test]
    fn edits_apply_in_order_and_earlier_changes_are_explained() {
        let (_d, p) = file_with(b"one\ntwo\n");
        let out = edit_file(&p, &[edit("one", "1"), edit("1\ntwo", "1\n2")], false).unwrap();
        assert_eq!(out.replacements, vec![1, 1]);
        assert_eq!(fs::read_to_string(&p).unwrap(), "1\n2\n");
        let err = edit_file(&p, &[edit("2", "b"), edit("2", "c")], false).unwrap_err();
        assert!(
            matches!(
                err,
                EditError::NotFound {
                    consumed_by_earlier_edit: true,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn dry_run_leaves_file_byte_for_byte() {
        let content = b"\xEF\xBB\xBFa\r\nb\r\n";
        let (_d, p) = file_with(content);
        let before = fs::metadata(&p).unwrap().modified().unwrap();
        let out = edit_file(&p, &[edit("b", "B")], true).unwrap();
        assert!(out.dry_run && out.changed && !out.written);
        assert!(out.diff.contains("-b\n+B\n"), "{}", out.diff);
        assert_eq!(fs::read(&p).unwrap(), content);
        assert_eq!(fs::metadata(&p).unwrap().modified().unwrap(), before);
    }

    #[test]
    fn empty_old_string_rules() {
        let (_d, p) = file_with(b"text\n");
        let err = edit_file(&p, &[edit("", "x")], false).unwrap_err();
        assert!(matches!(err, EditError::EmptyOldString { .. }), "{err:?}");
        let (_d2, empty) = file_with(b"");
        edit_file(&empty, &[edit("", "first\nline\n")], false).unwrap();
        assert_eq!(fs::read_to_string(&empty).unwrap(), "first\nline\n");
    }

    #[test]
    fn identical_strings_and_no_edits_are_refused() {
        let (_d, p) = file_with(b"same\n");
        assert!(matches!(
            edit_file(&p, &[edit("same", "same")], false),
            Err(EditError::NoChange { .. })
        ));
        assert!(matches!(edit_file(&p, &[], false), Err(EditError::NoEdits)));
    }

    #[test]
    fn non_utf8_and_utf16_are_refused() {
        let (_d, p) = file_with(b"ok\nbad \xFF byte\n");
        let err = edit_file(&p, &[edit("ok", "fine")], false).unwrap_err();
        assert!(
            matches!(
                err,
                EditError::NotUtf8 {
                    line: 2,
                    utf16: false,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("not valid UTF-8"), "{err}");
        let (_d2, p2) = file_with(b"\xFF\xFEa\x00\n\x00");
        let err = edit_file(&p2, &[edit("a", "b")], false).unwrap_err();
        assert!(
            matches!(err, EditError::NotUtf8 { utf16: true, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn missing_file_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let err = edit_file(&dir.path().join("nope"), &[edit("a", "b")], false).unwrap_err();
        assert!(matches!(err, EditError::FileNotFound { .. }), "{err:?}");
        assert!(err.to_string().contains("write_file"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn symlink_is_refused() {
        let (d, p) = file_with(b"a\n");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        let err = edit_file(&link, &[edit("a", "b")], false).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(fs::read(&p).unwrap(), b"a\n");
    }

    #[test]
    fn multibyte_text_matches_and_hints_work() {
        let (_d, p) = file_with("é😀é😀\n  ünï  cödé\n".as_bytes());
        let err = edit_file(&p, &[edit("é😀", "x")], false).unwrap_err();
        assert!(
            matches!(err, EditError::Ambiguous { count: 2, .. }),
            "{err:?}"
        );
        let err = edit_file(&p, &[edit("ünï cödé", "x")], false).unwrap_err();
        let EditError::NotFound {
            near: Some(near), ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(near.text, "ünï  cödé");
    }
}
