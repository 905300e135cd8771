//! The write tools (`write_file`, `edit_file`, `create_directory`, `move_file`). Writes
//! need *write* access: inside the roots, or a write grant from the user; a read grant is
//! never enough.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

use super::context::{Call, blocking, blocking_stoppable, resolve_checked, resolve_entry_checked};
use super::schema::{schema_of, write_annotations};
use crate::mcp::failure::Reason;
use crate::mcp::render::{Answer, ENVELOPE, cut_escaped, fit_escaped};
use rootgrep_core::access::Access;
use rootgrep_core::files::{edit, mv, write};
use rootgrep_core::roots::{Resolved, path_text};

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "write_file",
            "Create or replace a file atomically, keeping its permissions; create_dirs \
             makes missing parents.",
            schema_of::<WriteArgs>(),
        )
        .with_annotations(write_annotations("Write file", true, true)),
        Tool::new(
            "edit_file",
            "Replace exact text (old_string found once, or replace_all; or edits in \
             order, all or nothing), else nothing changes and the error says where. Keeps \
             CRLF and BOM; returns a diff. At most 1,000 edits; files up to 16 MiB.",
            schema_of::<EditArgs>(),
        )
        .with_annotations(write_annotations("Edit file", true, false)),
        Tool::new(
            "create_directory",
            "Create a directory and its missing parents (mkdir -p).",
            schema_of::<PathArgs>(),
        )
        .with_annotations(write_annotations("Create directory", false, true)),
        Tool::new(
            "move_file",
            "Move or rename; never overwrites (checked atomically).",
            schema_of::<MoveArgs>(),
        )
        // A move removes the source path: destructive for whoever relied on it.
        .with_annotations(write_annotations("Move file", true, false)),
    ]
}

// ---------------------------------------------------------------------------------------
// write_file / create_directory

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file.
    #[serde(alias = "file_path")]
    pub path: String,
    /// The whole new content.
    pub content: String,
    /// Make missing parents.
    #[serde(default)]
    pub create_dirs: Option<bool>,
}

pub async fn write_file(call: &Call<'_>, args: WriteArgs) -> Answer {
    let resolved = match resolve_checked(call, &args.path, Access::Write).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    if resolved.dir_only {
        return Answer::error(format!(
            "{:?} ends with '/', which names a directory; write_file writes files (drop the \
             trailing '/', or use create_directory for a directory)",
            args.path
        ));
    }
    let target = resolved.path.clone();
    let create_dirs = args.create_dirs.unwrap_or(false);
    let content = args.content;
    match blocking(move || write::write_atomic(&target, content.as_bytes(), create_dirs)).await {
        Ok(Ok(outcome)) => {
            call.session.wrote(&[&outcome.path]);
            let verb = if outcome.created {
                "Created"
            } else {
                "Replaced"
            };
            let mut text = format!(
                "{verb} {} ({} bytes).",
                rootgrep_core::roots::path_display(&outcome.path),
                outcome.bytes
            );
            if !outcome.created_dirs.is_empty() {
                text.push_str(&format!(
                    " Created directories: {}.",
                    created_dirs_text(&outcome.created_dirs)
                ));
            }
            text.push_str(&replaced_notes(&outcome.path, outcome.other_links, false));
            Answer::text(text)
        }
        Ok(Err(err)) => Answer::failed(&err),
        Err(answer) => answer,
    }
}

/// What a replacement by rename did beyond the file itself: hard links that still show the
/// old content (a replaced file is a new file), and a write by another process that landed
/// in the instant before the rename (it went to the old file).
fn replaced_notes(path: &std::path::Path, other_links: u64, late_write: bool) -> String {
    let mut notes = String::new();
    if other_links > 0 {
        notes.push_str(&format!(
            " Note: the file had {other_links} other hard link(s); they still show the old \
             content (a replaced file is a new file; the other names keep the old one)."
        ));
    }
    if late_write {
        notes.push_str(&format!(
            " Warning: another process wrote to {} at the instant it was replaced; that write \
             is not in the new file. Read the file to check.",
            rootgrep_core::roots::path_display(path)
        ));
    }
    notes
}

/// The directories a write created, each inside the one before: all of them when few, else
/// the first and the last (the others lie between them).
fn created_dirs_text(dirs: &[PathBuf]) -> String {
    match dirs {
        [first, .., last] if dirs.len() > 2 => format!(
            "{} and {} directories inside it, down to {}",
            rootgrep_core::roots::path_display(first),
            dirs.len() - 1,
            rootgrep_core::roots::path_display(last)
        ),
        _ => dirs
            .iter()
            .map(|d| rootgrep_core::roots::path_display(d))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathArgs {
    /// The directory.
    #[serde(alias = "file_path")]
    pub path: String,
}

pub async fn create_directory(call: &Call<'_>, args: PathArgs) -> Answer {
    let resolved = match resolve_checked(call, &args.path, Access::Write).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    let target = resolved.path.clone();
    match blocking(move || write::create_directory(&target)).await {
        Ok(Ok(outcome)) if outcome.created => {
            call.session.wrote(&[&resolved.path]);
            Answer::text(format!(
                "Created {}.",
                created_dirs_text(&outcome.created_dirs)
            ))
        }
        Ok(Ok(_)) => Answer::text(format!(
            "{} already exists; nothing to do.",
            rootgrep_core::roots::path_display(&resolved.path)
        )),
        Ok(Err(err)) => Answer::failed(&err),
        Err(answer) => answer,
    }
}

// ---------------------------------------------------------------------------------------
// edit_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// The file.
    #[serde(alias = "file_path")]
    pub path: String,
    /// Exact text, found once (or replace_all).
    #[serde(default, alias = "oldText")]
    pub old_string: Option<String>,
    /// Its replacement.
    #[serde(default, alias = "newText")]
    pub new_string: Option<String>,
    /// Every occurrence.
    #[serde(default, alias = "replaceAll")]
    pub replace_all: Option<bool>,
    /// Edits applied in order, all or nothing.
    #[serde(default)]
    pub edits: Option<Vec<EditItem>>,
    /// Diff only.
    #[serde(default, alias = "dryRun")]
    pub dry_run: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditItem {
    /// Exact text.
    #[serde(alias = "oldText")]
    pub old_string: String,
    /// Its replacement.
    #[serde(alias = "newText")]
    pub new_string: String,
    /// Every occurrence.
    #[serde(default, alias = "replaceAll")]
    pub replace_all: bool,
}

fn edits_of(args: &EditArgs) -> Result<Vec<edit::Edit>, Answer> {
    match (&args.edits, &args.old_string, &args.new_string) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(Answer::error(
            "pass either old_string/new_string or edits, not both",
        )),
        (Some(edits), None, None) => Ok(edits
            .iter()
            .map(|e| edit::Edit {
                old_string: e.old_string.clone(),
                new_string: e.new_string.clone(),
                replace_all: e.replace_all,
            })
            .collect()),
        (None, Some(old), Some(new)) => Ok(vec![edit::Edit {
            old_string: old.clone(),
            new_string: new.clone(),
            replace_all: args.replace_all.unwrap_or(false),
        }]),
        (None, Some(_), None) => Err(Answer::error("new_string is missing")),
        (None, None, _) => Err(Answer::error(
            "old_string is missing (or pass edits: [{old_string, new_string}])",
        )),
    }
}

pub async fn edit_file(call: &Call<'_>, args: EditArgs) -> Answer {
    let edits = match edits_of(&args) {
        Ok(edits) => edits,
        Err(answer) => return answer,
    };
    let resolved = match resolve_checked(call, &args.path, Access::Write).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    let target = resolved.path.clone();
    let dry_run = args.dry_run.unwrap_or(false);
    let diff_max_bytes = call.budget();
    let work = move |stop: &AtomicBool| {
        let control = edit::EditControl {
            stop,
            diff_max_bytes,
            diff_timeout: edit::DIFF_TIMEOUT,
        };
        edit::edit_file_with(&target, &edits, dry_run, control)
    };
    let outcome = match blocking_stoppable(call, work).await {
        Ok(Some(Ok(outcome))) => outcome,
        Ok(Some(Err(err))) => return Answer::failed(&err).about(&args.path),
        Ok(None) => return Answer::cancelled(),
        Err(answer) => return answer,
    };
    if outcome.changed && !dry_run {
        call.session.wrote(&[&resolved.path]);
    }
    let total: usize = outcome.replacements.iter().sum();
    let summary = if !outcome.changed {
        format!(
            "No change: the edits cancel out; {} was not written.",
            rootgrep_core::roots::path_display(&outcome.path)
        )
    } else if outcome.dry_run {
        format!(
            "Dry run: {total} replacement(s) in {}; nothing was written.",
            rootgrep_core::roots::path_display(&outcome.path)
        )
    } else {
        format!(
            "Edited {}: {total} replacement(s).{}",
            rootgrep_core::roots::path_display(&outcome.path),
            replaced_notes(&outcome.path, outcome.other_links, outcome.late_write)
        )
    };
    let budget = call.budget();
    let mut structured = serde_json::json!({
        "path": cut_escaped(&path_text(&outcome.path), budget / 4),
        "replacements": outcome.replacements,
        "changed": outcome.changed,
        "written": outcome.written,
        "dry_run": outcome.dry_run,
        "line_ending": match outcome.line_ending { edit::LineEnding::Lf => "lf", edit::LineEnding::Crlf => "crlf" },
        "bom": outcome.bom,
    });
    if outcome.other_links > 0 {
        structured["other_hard_links"] = outcome.other_links.into();
    }
    if outcome.late_write {
        structured["late_write"] = true.into();
    }
    // The diff takes the text's budget (the structured result has its own).
    let summary = cut_escaped(&summary, budget / 4);
    let mut text = format!("{summary}\n{}", outcome.diff);
    fit_escaped(
        &mut text,
        budget.saturating_sub(ENVELOPE),
        "[diff cut at the output budget; read the file to see the rest]",
    );
    Answer::text(text).with_structured(structured)
}

// ---------------------------------------------------------------------------------------
// move_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// What to move (a symlink moves as a link).
    #[serde(alias = "from", alias = "src")]
    pub source: String,
    /// Where; must not exist.
    #[serde(alias = "to", alias = "dst", alias = "dest")]
    pub destination: String,
}

async fn entry_checked(call: &Call<'_>, arg: &str) -> Result<Resolved, Answer> {
    resolve_entry_checked(call, arg, Access::Write).await
}

pub async fn move_file(call: &Call<'_>, args: MoveArgs) -> Answer {
    let source = match entry_checked(call, &args.source).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    if !source.exists {
        let text = format!(
            "{}: no such file or directory",
            rootgrep_core::roots::path_display(&source.path)
        );
        return Answer::refused(Reason::NotFound, text).about(&args.source);
    }
    let destination = match entry_checked(call, &args.destination).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    // `dest/` names a directory: only a directory may be moved there (as the kernel says).
    let is_dir = |path: PathBuf| blocking(move || path.is_dir());
    if destination.dir_only && !matches!(is_dir(source.path.clone()).await, Ok(true)) {
        return Answer::error(format!(
            "{:?} ends with '/', which names a directory, but {} is not a directory; drop the \
             trailing '/' to name the new file",
            args.destination,
            rootgrep_core::roots::path_display(&source.path)
        ));
    }
    let (from, to) = (source.path.clone(), destination.path.clone());
    match blocking(move || mv::move_no_replace(&from, &to)).await {
        Ok(Ok(())) => {
            call.session.wrote(&[&source.path, &destination.path]);
            Answer::text(format!(
                "Moved {} to {}.",
                rootgrep_core::roots::path_display(&source.path),
                rootgrep_core::roots::path_display(&destination.path)
            ))
        }
        Ok(Err(err)) => Answer::failed(&err),
        Err(answer) => answer,
    }
}
