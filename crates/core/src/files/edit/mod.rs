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
//! - Line endings: an `old_string` holding `\r\n` matches exactly those bytes (in a file
//!   with no `\r\n` at all, its line breaks are read as `\n`). One whose line breaks are all
//!   `\n` (what models send) matches each of them against `\n` or `\r\n` in a file that has
//!   `\r\n` lines, so in a mixed file `key\nval` matches both `key\nval` and `key\r\nval`:
//!   two places, ambiguous, never one chosen silently. `new_string` takes the line ending
//!   of the text it replaces (all `\r\n` or all `\n`), else the file's dominant ending (CRLF
//!   if CRLF lines outnumber bare-LF lines). Lines outside the replaced spans are never
//!   touched, so mixed files stay mixed.
//! - A UTF-8 BOM is kept; UTF-16 and other non-UTF-8 files are refused with a clear error
//!   (rewriting them as UTF-8 would change every byte).
//! - The diff (`similar`, 3 lines of context, `---`/`+++` headers naming the path) is computed
//!   with CRLF shown as LF, so it stays readable.
//! - Bounds: files larger than [`MAX_EDIT_BYTES`] (16 MiB) are refused before reading;
//!   at most [`MAX_EDITS`] edits per call. Finding matches and numbering their lines is
//!   linear in the text (one KMP scan, overlapping matches included, then one newline count
//!   for the lines listed), whatever the number of matches. The diff gets [`DIFF_TIMEOUT`]:
//!   when computing it takes longer, the outcome carries a summary of the changed region
//!   instead; its text stops at the caller's `diff_max_bytes`. A stop flag (the request was
//!   cancelled) is checked while scanning, between edits, and before writing: a cancelled
//!   edit writes nothing.
//! - No lost updates. An edit holds its path's lock (`lock.rs`) from before it reads until
//!   after its rename, so rootgrep's own edits, writes and moves of one path run one at a
//!   time. Another process is caught just before the rename (`write::write_locked`): the
//!   file read must still be at the path with exactly the content read (re-read through the
//!   read handle, then its size, mtime and ctime, then the path's identity), else
//!   [`EditError::ChangedMeanwhile`] and nothing is written. A write by another process in
//!   the instant left between that last look and the rename is detected after the rename
//!   (the replaced file's size or mtime moved) and said in the outcome (`late_write`).
//! - Replacing needs the permission to write the file, not only its directory: a file the
//!   server's user may not write, or one with no write permission bit at all, is refused.
//! - Hard links: the file is replaced atomically, so its other names keep the old content;
//!   the outcome counts them (`other_links`) and the answer says so.

use std::fmt;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::lock;
use super::version::ReadVersion;
use super::write::{WriteError, replaceable_metadata, write_locked};

mod error;
mod matching;

pub use error::EditError;
use matching::*;

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
    /// Other hard links of the file that was replaced: they keep the old content.
    pub other_links: u64,
    /// Another process wrote to the file in the instant between the last "unchanged" check
    /// and the rename: that write is not in the edited file.
    pub late_write: bool,
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

/// Largest file an edit accepts (bytes): the text is held in memory (twice, with the
/// diff), so the cap bounds the memory of one call.
pub const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;
/// Most edits in one call.
pub const MAX_EDITS: usize = 1000;
/// How long the diff may take before a summary replaces it.
pub const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// How an edit runs: a stop flag (set when the request is cancelled) and the most bytes of
/// diff text wanted (the caller's output budget).
#[derive(Debug, Clone, Copy)]
pub struct EditControl<'a> {
    pub stop: &'a AtomicBool,
    pub diff_max_bytes: usize,
    pub diff_timeout: Duration,
}

/// Most start lines an ambiguous edit's error lists.
const MAX_LINES_LISTED: usize = 50;
const NEAR_MATCH_MAX_LINES: usize = 30;
const NEAR_MATCH_MAX_BYTES: usize = 4000;
/// Largest text (bytes) searched for a whitespace-insensitive near match (the offset map
/// costs 8 bytes per byte of text).
const NEAR_MATCH_MAX_TEXT: usize = 2 * 1024 * 1024;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Apply `edits` to the UTF-8 text file at `path`, all or nothing; see the module docs.
/// No stop flag, the default diff timeout and a 1 MiB diff.
pub fn edit_file(path: &Path, edits: &[Edit], dry_run: bool) -> Result<EditOutcome, EditError> {
    let stop = AtomicBool::new(false);
    edit_file_with(
        path,
        edits,
        dry_run,
        EditControl {
            stop: &stop,
            diff_max_bytes: 1024 * 1024,
            diff_timeout: DIFF_TIMEOUT,
        },
    )
}

/// [`edit_file`] with a stop flag and diff bounds: the file is read (refused when it is not
/// an editable UTF-8 text), the edits applied in memory in order, the diff made, and the
/// result written only if every edit succeeded and something changed.
pub fn edit_file_with(
    path: &Path,
    edits: &[Edit],
    dry_run: bool,
    control: EditControl<'_>,
) -> Result<EditOutcome, EditError> {
    if edits.is_empty() {
        return Err(EditError::NoEdits);
    }
    if edits.len() > MAX_EDITS {
        return Err(EditError::TooManyEdits(edits.len()));
    }
    let stopped = || control.stop.load(Ordering::Relaxed);
    // One edit, write or move of this path at a time (lock.rs): another one of ours in
    // between would be lost. A dry run writes nothing and needs no turn.
    let _held = if dry_run {
        None
    } else {
        Some(lock::lock_unless_stopped(&[path], control.stop).ok_or(EditError::Cancelled)?)
    };
    let read = read_for_edit(path)?;
    let (bom, original) = decode(path, &read.bytes)?;
    let ending = dominant_ending(original);
    let (text, replacements) = apply_edits(path, edits, original, ending, control.stop)?;

    if stopped() {
        return Err(EditError::Cancelled);
    }
    let changed = text != original;
    let diff = if changed {
        unified_diff(path, original, &text, &control)
    } else {
        String::new()
    };
    let mut out_bytes = Vec::with_capacity(text.len() + 3);
    if bom {
        out_bytes.extend_from_slice(UTF8_BOM);
    }
    out_bytes.extend_from_slice(text.as_bytes());

    let written = changed && !dry_run;
    let (mut other_links, mut late_write) = (0, false);
    if written {
        if stopped() {
            return Err(EditError::Cancelled);
        }
        (other_links, late_write) = write_back(path, &out_bytes, read)?;
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
        other_links,
        late_write,
    })
}

/// The file as an edit read it: the open handle, its bytes and the handle's metadata (what
/// the "changed meanwhile" check just before the rename compares against).
struct ReadFile {
    file: File,
    bytes: Vec<u8>,
    meta: Metadata,
}

fn io_error(path: &Path) -> impl Fn(io::Error) -> EditError + '_ {
    move |source| EditError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write_error(path: &Path) -> impl Fn(WriteError) -> EditError + '_ {
    move |source| EditError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads the file to edit, refusing symlinks, directories, special files and files over
/// [`MAX_EDIT_BYTES`] before reading anything (and one that grew past it while read).
fn read_for_edit(path: &Path) -> Result<ReadFile, EditError> {
    let Some(meta) = replaceable_metadata(path).map_err(write_error(path))? else {
        return Err(EditError::FileNotFound {
            path: path.to_path_buf(),
        });
    };
    if meta.len() > MAX_EDIT_BYTES {
        return Err(EditError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
        });
    }
    let (file, bytes, meta) = read_with_metadata(path)?;
    if bytes.len() as u64 > MAX_EDIT_BYTES {
        // It grew between the two looks.
        return Err(EditError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
        });
    }
    Ok(ReadFile { file, bytes, meta })
}

/// The text of the file's bytes, and whether a UTF-8 BOM precedes it; anything that is not
/// UTF-8 (UTF-16 named as such) is refused, since rewriting it would change every byte.
fn decode<'a>(path: &Path, bytes: &'a [u8]) -> Result<(bool, &'a str), EditError> {
    let bom = bytes.starts_with(UTF8_BOM);
    let body = if bom { &bytes[UTF8_BOM.len()..] } else { bytes };
    match std::str::from_utf8(body) {
        Ok(text) => Ok((bom, text)),
        Err(e) => {
            let utf16 = !bom && (bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF"));
            let line = body[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            Err(EditError::NotUtf8 {
                path: path.to_path_buf(),
                line,
                utf16,
            })
        }
    }
}

/// Applies the edits in order, each to the result of the ones before: the new text and the
/// replacements each made. The first edit that fails stops the call.
fn apply_edits(
    path: &Path,
    edits: &[Edit],
    original: &str,
    ending: LineEnding,
    stop: &AtomicBool,
) -> Result<(String, Vec<usize>), EditError> {
    let of = edits.len();
    let mut text = original.to_string();
    let mut replacements = Vec::with_capacity(of);
    for (i, e) in edits.iter().enumerate() {
        let edit = i + 1;
        if stop.load(Ordering::Relaxed) {
            return Err(EditError::Cancelled);
        }
        if e.old_string == e.new_string {
            return Err(EditError::NoChange { edit, of });
        }
        let at = Position {
            path,
            edit,
            of,
            original,
            ending,
            stop,
        };
        let (next, count) = if e.old_string.is_empty() {
            if !text.is_empty() {
                return Err(EditError::EmptyOldString { edit, of });
            }
            // An empty old text fills an empty file.
            (with_ending(&e.new_string, ending), 1)
        } else if e.replace_all {
            replace_every(&at, e, &text)?
        } else {
            replace_once(&at, e, &text)?
        };
        text = next;
        replacements.push(count);
    }
    Ok((text, replacements))
}

/// Where one edit applies: its place in the call, and what every edit shares.
struct Position<'a> {
    path: &'a Path,
    edit: usize,
    of: usize,
    original: &'a str,
    ending: LineEnding,
    stop: &'a AtomicBool,
}

impl Position<'_> {
    fn not_found(&self, old: &str, text: &str) -> EditError {
        not_found(self.path, self.edit, self.of, old, text, self.original)
    }

    fn too_large(&self, size: u64) -> EditError {
        EditError::TooLarge {
            path: self.path.to_path_buf(),
            size,
        }
    }
}

/// `replace_all`: every non-overlapping occurrence, left to right, and how many there were.
fn replace_every(at: &Position<'_>, e: &Edit, text: &str) -> Result<(String, usize), EditError> {
    let spans = spans_of(
        text,
        &e.old_string,
        Count::NonOverlapping,
        usize::MAX,
        at.stop,
    )
    .ok_or(EditError::Cancelled)?;
    if spans.count == 0 {
        return Err(at.not_found(&e.old_string, text));
    }
    // Check the size of the result before building it: a long new_string times many
    // matches could otherwise ask for any amount of memory.
    let replaced: u64 = spans.first.iter().map(|(a, b)| (b - a) as u64).sum();
    let grown = (text.len() as u64)
        .saturating_add((spans.count as u64).saturating_mul(e.new_string.len() as u64 * 2))
        .saturating_sub(replaced);
    if grown > MAX_EDIT_BYTES {
        return Err(at.too_large(grown));
    }
    let next = replace_spans(text, &spans.first, &e.new_string, at.ending);
    Ok((next, spans.count))
}

/// A single replacement: the old text must occur exactly once (overlapping occurrences
/// count), else the error lists where it does.
fn replace_once(at: &Position<'_>, e: &Edit, text: &str) -> Result<(String, usize), EditError> {
    let found = spans_of(
        text,
        &e.old_string,
        Count::Overlapping,
        MAX_LINES_LISTED,
        at.stop,
    )
    .ok_or(EditError::Cancelled)?;
    if found.count == 0 {
        return Err(at.not_found(&e.old_string, text));
    }
    if found.count > 1 {
        let starts: Vec<usize> = found.first.iter().map(|&(a, _)| a).collect();
        return Err(EditError::Ambiguous {
            path: at.path.to_path_buf(),
            edit: at.edit,
            of: at.of,
            count: found.count,
            lines: lines_of(text, &starts),
        });
    }
    let next = replace_spans(text, &found.first[..1], &e.new_string, at.ending);
    if next.len() as u64 > MAX_EDIT_BYTES {
        return Err(at.too_large(next.len() as u64));
    }
    Ok((next, 1))
}

/// Writes the edited bytes over the file, if it is still the version that was read: the
/// replaced file's other hard links and whether a write landed just before the rename.
fn write_back(path: &Path, out_bytes: &[u8], read: ReadFile) -> Result<(u64, bool), EditError> {
    let ReadFile { file, bytes, meta } = read;
    // Windows cannot replace a file this process holds open: the check opens it again.
    #[cfg(windows)]
    drop(file);
    #[cfg(windows)]
    let file: Option<&File> = None;
    #[cfg(not(windows))]
    let file = Some(&file);
    let version = ReadVersion {
        file,
        meta: &meta,
        bytes: &bytes,
    };
    match write_locked(path, out_bytes, false, Some(&version)) {
        Ok(outcome) => Ok((outcome.other_links, outcome.late_write)),
        Err(WriteError::ChangedMeanwhile) => Err(EditError::ChangedMeanwhile {
            path: path.to_path_buf(),
        }),
        Err(e) => Err(write_error(path)(e)),
    }
}

/// Read the file, keeping the handle and its metadata (so the "changed meanwhile" check
/// just before the rename compares against the version we actually read).
fn read_with_metadata(path: &Path) -> Result<(File, Vec<u8>, Metadata), EditError> {
    let mut file = super::safe::open_read(path).map_err(io_error(path))?;
    let meta = file.metadata().map_err(io_error(path))?;
    if !meta.is_file() {
        // Swapped for something else since replaceable_metadata looked.
        return Err(EditError::NotRegularFile {
            path: path.to_path_buf(),
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // At most one byte past the cap: a file growing while read is refused, not held whole.
    (&mut file)
        .take(MAX_EDIT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error(path))?;
    Ok((file, bytes, meta))
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

/// The unified diff of the edit, at most `control.diff_max_bytes` long (cut with a marker).
/// When computing it takes longer than `control.diff_timeout` (`similar` then falls back to
/// a coarse diff), a summary of the changed region replaces it.
fn unified_diff(path: &Path, before: &str, after: &str, control: &EditControl<'_>) -> String {
    // Show CRLF as LF: the diff is for reading, and the file's endings are preserved anyway.
    let (before, after) = (before.replace("\r\n", "\n"), after.replace("\r\n", "\n"));
    let name = crate::roots::path_text(path).to_string();
    let started = Instant::now();
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .timeout(control.diff_timeout)
        .diff_lines(&before, &after);
    if started.elapsed() >= control.diff_timeout || control.stop.load(Ordering::Relaxed) {
        return changed_region(&before, &after, control.diff_timeout);
    }
    let mut out = format!("--- {name}\n+++ {name}\n");
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        let hunk = hunk.to_string();
        if out.len() + hunk.len() > control.diff_max_bytes {
            out.push_str("[diff cut at the output budget; read the file to see the rest]\n");
            break;
        }
        out.push_str(&hunk);
    }
    out
}

/// A summary of where two texts differ (common leading and trailing lines skipped), for
/// when the diff itself took too long. Linear.
fn changed_region(before: &str, after: &str, timeout: Duration) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let span = |first: usize, last: usize, of: usize| {
        if last < first {
            format!("nothing (before line {first} of {of})")
        } else {
            format!("lines {first}-{last} of {of}")
        }
    };
    format!(
        "[diff not shown: computing it took longer than {} ms. The edit replaced {} with {}; \
         read the file to see the result]\n",
        timeout.as_millis(),
        span(head + 1, old.len() - tail, old.len()),
        span(head + 1, new.len() - tail, new.len()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
    fn an_exact_crlf_old_string_matches_only_crlf_text() {
        for content in [
            &b"key\nval\nx\nkey\r\nval\n"[..],
            &b"key\nval\r\nx\r\nkey\r\nval\r\n"[..],
        ] {
            let (_d, p) = file_with(content);
            edit_file(&p, &[edit("key\r\nval", "K\r\nV")], false).unwrap();
            let expected = String::from_utf8(content.to_vec())
                .unwrap()
                .replace("key\r\nval", "K\r\nV");
            assert_eq!(fs::read_to_string(&p).unwrap(), expected);
        }
    }

    #[test]
    fn an_lf_old_string_in_a_mixed_file_is_ambiguous_between_both_endings() {
        let (_d, p) = file_with(b"key\nval\r\nx\r\nkey\r\nval\r\n");
        let err = edit_file(&p, &[edit("key\nval", "K\nV")], false).unwrap_err();
        match err {
            EditError::Ambiguous { count, lines, .. } => {
                assert_eq!((count, lines), (2, vec![1, 4]));
            }
            other => panic!("{other}"),
        }
        // replace_all replaces both, each keeping its own ending.
        let all = Edit {
            replace_all: true,
            ..edit("key\nval", "K\nV")
        };
        let out = edit_file(&p, &[all], false).unwrap();
        assert_eq!(out.replacements, vec![2]);
        assert_eq!(fs::read(&p).unwrap(), b"K\nV\r\nx\r\nK\r\nV\r\n");
    }

    #[test]
    fn spans_map_back_across_dropped_carriage_returns() {
        let stop = AtomicBool::new(false);
        let text = "a\r\nb\r\n\r\nc\nb\r\n";
        let found = spans_of(text, "\nb\n", Count::Overlapping, 10, &stop).unwrap();
        assert_eq!(found.count, 2);
        for (a, b) in &found.first {
            assert!(text[*a..*b].starts_with("\r\nb") || text[*a..*b].starts_with("\nb"));
            assert!(text[*a..*b].ends_with('\n'));
        }
        assert_eq!(&text[found.first[0].0..found.first[0].1], "\r\nb\r\n");
        assert_eq!(&text[found.first[1].0..found.first[1].1], "\nb\r\n");
    }

    /// Reads `p`, has "another process" write `meddle` to it through `open`, then tries to
    /// replace what was read: the error.
    fn replace_after_meddling(p: &Path, open: &fs::OpenOptions, meddle: &[u8]) -> WriteError {
        let (file, bytes, meta) = read_with_metadata(p).unwrap();
        open.open(p)
            .and_then(|mut f| std::io::Write::write_all(&mut f, meddle))
            .unwrap();
        let read = ReadVersion {
            file: Some(&file),
            meta: &meta,
            bytes: &bytes,
        };
        write_locked(p, b"uno\n", false, Some(&read)).unwrap_err()
    }

    #[test]
    fn a_change_after_the_read_is_caught_up_to_the_rename() {
        // What was read, then another process appends: the replacement is refused.
        let (_d, p) = file_with(b"one\n");
        let err = replace_after_meddling(&p, fs::OpenOptions::new().append(true), b"two\n");
        assert!(matches!(err, WriteError::ChangedMeanwhile), "{err}");
        assert_eq!(fs::read(&p).unwrap(), b"one\ntwo\n");
        // A rewrite of the same size (the same mtime tick, maybe) is caught by the content.
        assert!(matches!(
            replace_after_meddling(&p, fs::OpenOptions::new().write(true), b"ONE"),
            WriteError::ChangedMeanwhile
        ));
        assert_eq!(fs::read(&p).unwrap(), b"ONE\ntwo\n");
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
        assert!(err.to_string().contains("found 3 times"), "{err}");
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
        assert!(
            err.to_string().starts_with("old text not found in "),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), content);

        let err = edit_file(&p, &[edit("nothing like it", "x")], false).unwrap_err();
        assert!(
            matches!(
                err,
                EditError::NotFound {
                    near: None,
                    line_number_prefixes: false,
                    consumed_by_earlier_edit: false,
                    ..
                }
            ),
            "{err:?}"
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
        assert!(err.to_string().ends_with("nope does not exist"), "{err}");
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

    /// The old definition: every start, found by stepping one character at a time.
    fn naive_starts(text: &str, needle: &str) -> Vec<usize> {
        let mut starts = Vec::new();
        let mut from = 0;
        while let Some(pos) = text[from..].find(needle) {
            let at = from + pos;
            starts.push(at);
            from = at + text[at..].chars().next().map_or(1, char::len_utf8);
        }
        starts
    }

    proptest::proptest! {
        #[test]
        fn occurrences_match_the_naive_scan(
            text in "[ab\n é😀]{0,60}",
            needle in "[ab\n é😀]{1,4}",
        ) {
            let stop = AtomicBool::new(false);
            let naive = naive_starts(&text, &needle);
            let found = occurrences(&text, &needle, 5, &stop).unwrap();
            proptest::prop_assert_eq!(found.count, naive.len());
            proptest::prop_assert_eq!(&found.first[..], &naive[..naive.len().min(5)]);
            let lines: Vec<usize> = found.first.iter().map(|&at| {
                text[..at].matches('\n').count() + 1
            }).collect();
            proptest::prop_assert_eq!(lines_of(&text, &found.first), lines);
        }
    }

    #[test]
    fn a_hundred_thousand_matches_are_counted_with_their_first_lines() {
        let content = "x = 1\n".repeat(100_000);
        let (_d, p) = file_with(content.as_bytes());
        let err = edit_file(&p, &[edit("x = 1", "x = 2")], false).unwrap_err();
        let EditError::Ambiguous { count, lines, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*count, 100_000);
        assert_eq!(lines.len(), MAX_LINES_LISTED);
        assert_eq!(lines[..3], [1, 2, 3]);
        assert!(err.to_string().contains("100000 times"), "{err}");
    }

    #[test]
    fn files_over_the_cap_are_refused_unread() {
        let (_d, p) = file_with(b"a\n");
        let f = fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(MAX_EDIT_BYTES + 1).unwrap();
        let err = edit_file(&p, &[edit("a", "b")], false).unwrap_err();
        assert!(matches!(err, EditError::TooLarge { .. }), "{err:?}");
        assert!(err.to_string().contains("16 MiB"), "{err}");
        let (_d2, small) = file_with("ab\n".repeat(1000).as_bytes());
        let growing = Edit {
            old_string: "a".into(),
            new_string: "x".repeat(20_000),
            replace_all: true,
        };
        let err = edit_file(&small, &[growing], false).unwrap_err();
        assert!(matches!(err, EditError::TooLarge { .. }), "{err:?}");
        assert!(err.to_string().contains("would become"), "{err}");
        let many = vec![edit("a", "b"); MAX_EDITS + 1];
        assert!(matches!(
            edit_file(&p, &many, false),
            Err(EditError::TooManyEdits(_))
        ));
    }

    #[test]
    fn a_diff_past_its_deadline_becomes_a_summary() {
        let before: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let (_d, p) = file_with(before.as_bytes());
        let stop = AtomicBool::new(false);
        let control = EditControl {
            stop: &stop,
            diff_max_bytes: 1 << 20,
            diff_timeout: Duration::ZERO,
        };
        let out = edit_file_with(&p, &[edit("line 50\n", "fifty\nL\n")], false, control).unwrap();
        assert!(out.written);
        assert!(
            out.diff.contains("diff not shown")
                && out
                    .diff
                    .contains("lines 51-51 of 100 with lines 51-52 of 101"),
            "{}",
            out.diff
        );
        assert!(fs::read_to_string(&p).unwrap().contains("fifty\nL\n"));
    }

    #[test]
    fn the_diff_stops_at_its_byte_limit() {
        let before: String = (0..400).map(|i| format!("line {i}\n")).collect();
        let (_d, p) = file_with(before.as_bytes());
        let stop = AtomicBool::new(false);
        // A generous deadline: this test is about the byte limit, on a loaded machine too.
        let control = EditControl {
            stop: &stop,
            diff_max_bytes: 4096,
            diff_timeout: Duration::from_secs(600),
        };
        let all = Edit {
            old_string: "line".into(),
            new_string: "LINE".into(),
            replace_all: true,
        };
        let out = edit_file_with(&p, &[all], true, control).unwrap();
        assert!(out.diff.len() <= 4096 + 100, "{}", out.diff.len());
        assert!(
            out.diff.contains("diff cut at the output budget"),
            "{}",
            out.diff
        );
    }

    #[test]
    fn a_stopped_edit_writes_nothing() {
        let (_d, p) = file_with(b"a\n");
        let stop = AtomicBool::new(true);
        let control = EditControl {
            stop: &stop,
            diff_max_bytes: 1 << 20,
            diff_timeout: DIFF_TIMEOUT,
        };
        let err = edit_file_with(&p, &[edit("a", "b")], false, control).unwrap_err();
        assert!(matches!(err, EditError::Cancelled), "{err:?}");
        assert_eq!(fs::read(&p).unwrap(), b"a\n");
    }
}
