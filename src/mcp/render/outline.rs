//! Rendering `outline` results within the output budget: definitions under their file's
//! path, indented by depth, with the same entries in the text and the structured result
//! (rows of line range, kind, signature and depth; the signature holds the name).

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::paths::Paths;
use crate::mcp::render::rows::DefinitionRow;
use crate::mcp::render::symbols::{StatsOut, admit, cost, file_cost, rooms, skipped, stats_out};
use crate::mcp::render::{Answer, json_len};
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::symbols::{self, extract::Definition};

pub(crate) fn definition_row(d: &Definition) -> DefinitionRow {
    DefinitionRow {
        line: d.line,
        end_line: d.end_line,
        kind: d.kind.to_string(),
        signature: d.signature.clone(),
        depth: d.depth,
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileOutlineOut {
    pub path: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<DefinitionRow>,
    /// Why the file has no definitions listed, when the text says so (too large, nested
    /// too deeply to parse, unreadable, none found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OutlineOut {
    /// The directory the paths are relative to (the only root); absent when they are
    /// absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileOutlineOut>,
    /// Definitions in all, when every file was parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// Where the next page starts (absent on the last page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    #[serde(default, skip_serializing_if = "StatsOut::is_empty")]
    #[schemars(schema_with = "crate::mcp::render::rows::counts_schema")]
    pub stats: StatsOut,
}

pub(crate) fn render_outline(
    outcome: &symbols::find::OutlineOutcome,
    offset: usize,
    limit: usize,
    paths: &Paths,
    budget: usize,
) -> Answer {
    let mut rooms = rooms(budget, paths);
    let mut text = String::new();
    let mut files = Vec::new();
    let mut index = 0usize; // definitions seen, across files
    let mut shown = 0usize;
    let mut full = false;
    let total: usize = outcome.files.iter().map(|f| f.defs.len()).sum();
    let single = outcome.files.len() == 1;
    for file in &outcome.files {
        let path = paths.show(&file.path);
        // The text escapes what could forge a line; the structured path is the real one.
        let heading_text = escape_for_display(&path);
        let mut out = FileOutlineOut {
            path: path.clone(),
            definitions: Vec::new(),
            note: None,
        };
        let heading = |text: &mut String| {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&heading_text);
            text.push('\n');
        };
        for d in &file.defs {
            if index < offset {
                index += 1;
                continue;
            }
            if shown >= limit {
                full = true;
                break;
            }
            let line = outline_line(d);
            let row = definition_row(d);
            let (mut t, mut s) = (json_len(&line) - 2, cost(&row));
            if out.definitions.is_empty() {
                let (ft, fs) = file_cost(&path);
                (t, s) = (t + ft, s + fs);
            }
            if !admit(&mut rooms, shown == 0, t, s) {
                full = true;
                break;
            }
            if out.definitions.is_empty() {
                heading(&mut text);
            }
            text.push_str(&line);
            out.definitions.push(row);
            index += 1;
            shown += 1;
        }
        // A full page still keeps the current file's definitions shown so far: the
        // structured result must hold what the text shows.
        // A file too deeply nested to parse is named wherever it falls, since leaving it
        // out would present a directory's outline as complete; the other reasons only for
        // a single file.
        let too_deep = file.error == Some(symbols::parse::FileError::TooDeep);
        if !out.definitions.is_empty() {
            files.push(out);
        } else if (single || too_deep) && file.defs.is_empty() && index >= offset && shown < limit {
            let why = no_definitions_reason(file.error);
            let line = format!("{heading_text}: {why}\n");
            rooms.spend(json_len(&line), json_len(&path) + json_len(&why) + 20);
            text.push_str(&line);
            out.note = Some(why);
            files.push(out);
        }
        if full {
            break;
        }
    }
    let more_files = !outcome.complete;
    let next_offset = (full || (more_files && shown > 0)).then_some(offset + shown.max(1));
    let known_total = outcome.complete.then_some(total);
    let page = (offset, shown, next_offset, known_total);
    outline_notes(outcome, page, single, &mut text);
    let out = OutlineOut {
        root: paths.root(),
        files,
        total: known_total,
        next_offset,
        stats: stats_out(&outcome.stats),
    };
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

/// The line after the page: where the next one starts (`page`: offset, definitions
/// shown, next offset, total when known), or that a directory has no definitions.
fn outline_notes(
    outcome: &symbols::find::OutlineOutcome,
    (offset, shown, next_offset, known_total): (usize, usize, Option<usize>, Option<usize>),
    single: bool,
    text: &mut String,
) {
    if let Some(next) = next_offset {
        let of = known_total.map_or_else(|| "more".to_string(), |t| t.to_string());
        text.push_str(&format!(
            "[showing definitions {}-{} of {of}; call outline with offset={next} for more]\n",
            offset + 1,
            offset + shown
        ));
    } else if shown == 0 && !single {
        text.push_str(&format!(
            "No definitions (parsed {} supported files{}).\n",
            thousands(outcome.stats.parsed),
            skipped(&outcome.stats)
        ));
    }
}

/// One definition's outline line, indented by its depth: `first-last kind signature`.
fn outline_line(d: &Definition) -> String {
    format!(
        "{}{}-{} {} {}\n",
        "  ".repeat(d.depth),
        d.line,
        d.end_line,
        d.kind,
        d.signature
    )
}

/// Why a file named in the outline lists no definitions.
fn no_definitions_reason(error: Option<symbols::parse::FileError>) -> String {
    match error {
        Some(symbols::parse::FileError::TooLarge) => "larger than 1 MiB, not parsed".to_string(),
        Some(symbols::parse::FileError::TooDeep) => symbols::find::too_deep_reason(),
        Some(_) => "not readable as text".to_string(),
        None => "no definitions found".to_string(),
    }
}

#[cfg(test)]
mod tests;
