//! The model-facing words about what the domain reports. The core says what happened, in
//! plain text and in data ("old text not found in PATH", a near match, a count of entries
//! left out); this module turns a domain error or result into the text the model reads,
//! which says what to call or set next and so names tools and their arguments. It is the
//! only place that does, so renaming a tool or an argument touches the adapter only.
//!
//! It owns: the advice of [`EditError`]s ([`edit`]), of the file operations' errors (a
//! missing parent: [`write()`]; a move that would overwrite: [`mv`]; not a directory:
//! [`list`]), of [`ReadError`] and [`SearchError`], the roots named in messages ([`paths`],
//! [`roots`]),
//! the texts of [`Refusal`]s, and `directory_tree`'s depth marks and footer ([`tree`]).

use std::io;
use std::path::{Path, PathBuf};

use rootgrep_core::access::{Access, Refusal};
use rootgrep_core::files::edit::{EditError, MAX_EDIT_BYTES, MAX_EDITS, NearMatch};
use rootgrep_core::files::list::ListError;
use rootgrep_core::files::mv::MoveError;
use rootgrep_core::files::read::ReadError;
use rootgrep_core::files::tree::{Count, StopReason, Tree};
use rootgrep_core::files::write::WriteError;
use rootgrep_core::quote::echo;
use rootgrep_core::roots::{Confine, PathError, PathList, RootSet};
use rootgrep_core::search::SearchError;
use rootgrep_core::symbols::find::DefinitionsError;

/// A domain error as the model reads it: its text with the advice of this module.
/// [`crate::mcp::failure::Failure::of`] takes its message from here, so a domain error
/// reaches the model only through this module.
pub trait Worded {
    fn words(&self) -> String;
}

impl Worded for EditError {
    fn words(&self) -> String {
        edit(self)
    }
}

impl Worded for ReadError {
    fn words(&self) -> String {
        read(self)
    }
}

impl Worded for SearchError {
    fn words(&self) -> String {
        search(self)
    }
}

impl Worded for WriteError {
    fn words(&self) -> String {
        write(self)
    }
}

impl Worded for MoveError {
    fn words(&self) -> String {
        mv(self)
    }
}

impl Worded for ListError {
    fn words(&self) -> String {
        list(self)
    }
}

impl Worded for io::Error {
    fn words(&self) -> String {
        io(self)
    }
}

impl Worded for DefinitionsError {
    /// Why a file has no symbols names the file and how to read it instead: nothing to add.
    fn words(&self) -> String {
        self.to_string()
    }
}

impl Worded for PathError {
    /// A path's problems name only the path: nothing to add.
    fn words(&self) -> String {
        self.to_string()
    }
}

// ---------------------------------------------------------------------------------------
// edit_file

/// Ends most refusals of an edit: the model must know that nothing half-happened.
const UNTOUCHED: &str = "No changes were made to the file.";

/// "edit 2 of 3: " when there are several edits, nothing for a single one.
fn which(edit: usize, of: usize) -> String {
    if of > 1 {
        format!("edit {edit} of {of}: ")
    } else {
        String::new()
    }
}

/// Why `edit_file` refused, and what to send instead.
pub fn edit(err: &EditError) -> String {
    match err {
        EditError::NoEdits => {
            "no edits given: pass old_string/new_string or a non-empty edits list".to_string()
        }
        EditError::TooManyEdits(n) => format!(
            "{n} edits in one call; at most {MAX_EDITS} are accepted (split them over several \
             calls). {UNTOUCHED}"
        ),
        EditError::TooLarge { path, size } => format!(
            "{} is (or would become) {size} bytes; edit_file edits files up to {} MiB (use \
             write_file to replace a larger file whole). {UNTOUCHED}",
            rootgrep_core::roots::path_display(path),
            MAX_EDIT_BYTES / 1024 / 1024
        ),
        EditError::Cancelled => format!("the edit was cancelled. {UNTOUCHED}"),
        EditError::FileNotFound { path } => format!(
            "{} does not exist; edit_file changes existing files (use write_file to create one)",
            rootgrep_core::roots::path_display(path)
        ),
        EditError::Io { source, .. } => io(source),
        EditError::Write { source, .. } => write(source),
        EditError::NotRegularFile { .. } => err.to_string(),
        EditError::NotUtf8 {
            path, utf16: true, ..
        } => format!(
            "{} is UTF-16 encoded; edit_file only edits UTF-8 text (use write_file to replace \
             it entirely)",
            rootgrep_core::roots::path_display(path)
        ),
        EditError::NotUtf8 { path, line, .. } => format!(
            "{} is not valid UTF-8 (first invalid byte on line {line}); edit_file only edits \
             UTF-8 text, so it was left untouched",
            rootgrep_core::roots::path_display(path)
        ),
        EditError::EmptyOldString { edit, of } => format!(
            "{}old_string is empty; include the text to replace (to insert, include a \
             neighbouring line in both old_string and new_string; to replace the whole file, \
             use write_file). {UNTOUCHED}",
            which(*edit, *of)
        ),
        EditError::NoChange { edit, of } => format!(
            "{}old_string and new_string are identical, so the edit would change nothing. \
             {UNTOUCHED}",
            which(*edit, *of)
        ),
        EditError::NotFound {
            path,
            edit,
            of,
            near,
            line_number_prefixes,
            consumed_by_earlier_edit,
        } => not_found(
            path,
            (*edit, *of),
            near.as_ref(),
            *line_number_prefixes,
            *consumed_by_earlier_edit,
        ),
        EditError::Ambiguous {
            path,
            edit,
            of,
            count,
            lines,
        } => ambiguous(path, (*edit, *of), *count, lines),
        EditError::ChangedMeanwhile { path } => format!(
            "{} changed on disk while it was being edited; read it again and retry. {UNTOUCHED}",
            rootgrep_core::roots::path_display(path)
        ),
    }
}

/// `old_string` occurs `count` times: where (the first start lines), and how to pick one or
/// replace them all.
fn ambiguous(path: &Path, (edit, of): (usize, usize), count: usize, lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    // The error lists the first start lines only; `count` has them all.
    let more = if count > lines.len() { ", …" } else { "" };
    format!(
        "{}old_string matches {count} times in {}{} (starting at lines {}{more}); add \
         surrounding lines to old_string to make it unique, or set replace_all to replace \
         every occurrence. {UNTOUCHED}",
        which(edit, of),
        rootgrep_core::roots::path_display(path),
        if edit > 1 {
            " after the previous edits"
        } else {
            ""
        },
        shown.join(", "),
    )
}

/// `old_string` not found: the likely mistake (an earlier edit of the call changed it,
/// line-number prefixes copied from `read_file`) and where it would have matched, or that
/// it matches nowhere.
fn not_found(
    path: &Path,
    (edit, of): (usize, usize),
    near: Option<&NearMatch>,
    line_number_prefixes: bool,
    consumed: bool,
) -> String {
    let mut text = format!(
        "{}old_string was not found in {}",
        which(edit, of),
        rootgrep_core::roots::path_display(path)
    );
    if edit > 1 {
        text.push_str(" (after applying the previous edits)");
    }
    text.push_str(&format!(". {UNTOUCHED}"));
    if consumed {
        text.push_str(
            " It does occur in the file as it was, so an earlier edit in this call changed \
             it: edits apply in order, each to the result of the previous ones.",
        );
    }
    if line_number_prefixes {
        text.push_str(
            " old_string seems to include line-number prefixes from read_file (like `  12\\t`); \
             remove them, they are not part of the file.",
        );
    }
    match near {
        Some(near) => text.push_str(&near_match(near)),
        None if !line_number_prefixes && !consumed => text.push_str(
            " It does not match even ignoring whitespace; read the file again to get its \
             current text. old_string must match exactly, including indentation.",
        ),
        None => {}
    }
    text
}

/// The file's real text where `old_string` matches once whitespace is ignored, to copy.
fn near_match(near: &NearMatch) -> String {
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
    format!(
        " It does match if whitespace, indentation and line endings are ignored{count}: \
         {lines} of the file read exactly:\n{}\nCopy that text exactly (same indentation and \
         spacing) into old_string.",
        near.text
    )
}

// ---------------------------------------------------------------------------------------
// The file operations' errors

/// A write or `mkdir -p` that failed; a missing parent gets the argument that creates it.
pub fn write(err: &WriteError) -> String {
    match err {
        WriteError::MissingParent { .. } => format!("{err} (set create_dirs to create it)"),
        _ => err.to_string(),
    }
}

/// A move that was refused; something in the way, or a missing directory, gets what to do
/// instead.
pub fn mv(err: &MoveError) -> String {
    match err {
        MoveError::Exists { .. } => format!("{err}; move_file never overwrites"),
        MoveError::NoParent { .. } => {
            format!("{err} (create it with create_directory first)")
        }
        _ => err.to_string(),
    }
}

/// A listing or a tree asked of a file gets the tools that read one.
pub fn list(err: &ListError) -> String {
    match err {
        ListError::NotADirectory { .. } => format!("{err} (use file_info or read_file)"),
        ListError::Io { .. } => err.to_string(),
    }
}

/// Any other error of the operating system, as it reads.
pub fn io(err: &io::Error) -> String {
    err.to_string()
}

/// A file that could not be read; a directory gets the tools that show one.
pub fn read(err: &ReadError) -> String {
    match err {
        ReadError::IsDirectory(_) => {
            format!("{err}; use list_directory or directory_tree to see its contents")
        }
        _ => err.to_string(),
    }
}

// ---------------------------------------------------------------------------------------
// Queries

/// A query that cannot run, with the argument that would make it run where the domain
/// marked one (text meant literally, a pattern that needs multi-line matching).
pub fn search(err: &SearchError) -> String {
    let mut text = err.to_string();
    match err {
        SearchError::InvalidRegex {
            maybe_literal,
            needs_multiline,
            ..
        } => {
            if *maybe_literal {
                text.push_str(
                    "\nhint: to search for this text literally, set fixed_strings: true (or \
                     escape the special characters with a backslash, e.g. \\{ or \\()",
                );
            }
            if *needs_multiline {
                text.push_str("\n(set multiline to match across lines)");
            }
        }
        SearchError::PatternTooLarge { compiled: true, .. } => {
            text.push_str(", or fixed_strings for literal text");
        }
        _ => {}
    }
    text
}

// ---------------------------------------------------------------------------------------
// Roots and refusals

/// The first paths of a list, and where to see the rest.
pub fn paths(list: &PathList) -> String {
    if list.more == 0 {
        return list.named.clone();
    }
    format!(
        "{} and {} more (list_roots pages through them all)",
        list.named, list.more
    )
}

/// The roots in force, for messages (bounded: the first ones, then how many more).
pub fn roots(roots: &RootSet) -> String {
    paths(&roots.describe())
}

/// The tool error of a path outside the roots: the same for every such path, up to `sent`
/// (the argument as the client sent it, quoted with [`echo`]). Nothing in it depends on the
/// disk.
pub fn refusal(
    refusal: Refusal,
    sent: &str,
    access: Access,
    roots: &RootSet,
    confine: &Confine,
) -> String {
    let sent = echo(sent);
    let confined_to = || {
        let dirs = confine.dirs.iter().map(PathBuf::as_path);
        paths(&rootgrep_core::roots::describe_paths(
            dirs,
            confine.dirs.len(),
        ))
    };
    match refusal {
        Refusal::Confined => format!(
            "{sent} is outside the directories this server is confined to ({}); the \
             operator's --confine setting cannot be widened",
            confined_to()
        ),
        Refusal::RefusedEarlier => format!(
            "the user refused to let this server {} {sent} earlier in this session",
            access.verb()
        ),
        Refusal::CannotAsk(why) => {
            let confine_note = if confine.is_active() {
                format!(
                    " (within the directories this server is confined to: {}; the operator's \
                     --confine setting cannot be widened)",
                    confined_to()
                )
            } else {
                String::new()
            };
            format!(
                "{sent} is outside the workspace roots ({}), and {why}. To {} it, add its \
                 directory as a root in your MCP client, or start rootgrep with that \
                 directory as a DIR argument{confine_note}.",
                self::roots(roots),
                access.verb()
            )
        }
    }
}

// ---------------------------------------------------------------------------------------
// directory_tree

/// The note after a directory the tree did not expand ([`rootgrep_core::files::tree::TreeOptions`]'s
/// `depth_mark`): how many entries it holds, and the argument that would show them.
pub fn depth_mark(entries: Count, max_depth: usize) -> String {
    format!(" … {entries} entries not shown (max_depth {max_depth})")
}

/// A tree's text, then one line saying what was cut and how to see more (if anything was).
pub fn tree(tree: &Tree) -> String {
    match tree_footer(tree) {
        Some(footer) => format!("{}{footer}\n", tree.text),
        None => tree.text.clone(),
    }
}

/// Most skipped ignore files a footer names; the rest are counted.
const IGNORE_FILES_NAMED: usize = 8;

/// What a tree left out and how to see it, or `None` for a complete tree.
fn tree_footer(tree: &Tree) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(cut) = &tree.limit_cut {
        let why = match cut.reason {
            StopReason::Limit => format!("entry limit of {} reached", tree.shown),
            StopReason::Bytes => "output size limit reached".to_string(),
        };
        let after = cut
            .after
            .as_ref()
            .map(|p| format!(" after {}", rootgrep_core::roots::path_display(p)))
            .unwrap_or_default();
        parts.push(format!(
            "{why}: {} more entries not shown{after}; call directory_tree on a subdirectory or \
             raise head_limit",
            cut.more
        ));
    }
    if !tree.depth_cuts.is_empty() {
        let n = tree.depth_cuts.len();
        parts.push(format!(
            "{n} director{} at max_depth {} not expanded (marked …); raise max_depth or call \
             directory_tree on {}",
            if n == 1 { "y" } else { "ies" },
            tree.max_depth,
            if n == 1 { "it" } else { "one of them" }
        ));
    }
    if tree.errors > 0 {
        parts.push(format!("{} unreadable entries skipped", tree.errors));
    }
    let skipped = &tree.skipped_ignore_files;
    for file in skipped.iter().take(IGNORE_FILES_NAMED) {
        parts.push(file.to_string());
    }
    if skipped.len() > IGNORE_FILES_NAMED {
        parts.push(format!(
            "and {} more skipped ignore files",
            skipped.len() - IGNORE_FILES_NAMED
        ));
    }
    (!parts.is_empty()).then(|| format!("[{}]", parts.join("; ")))
}

#[cfg(test)]
mod tests;
