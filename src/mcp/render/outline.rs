//! Rendering `outline` results within the output budget: definitions under their file's
//! path, indented by depth, with the same entries in the text and the structured result.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::symbols::{StatsOut, admit, cost, rooms, skipped, stats_out};
use crate::mcp::render::{Answer, json_len};
use crate::roots::path_text;
use crate::symbols::{self, Definition};

#[derive(Debug, Serialize, JsonSchema)]
pub struct DefinitionOut {
    pub name: String,
    pub kind: String,
    pub line: u64,
    pub end_line: u64,
    pub signature: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// Nesting depth (0: top level of the file).
    pub depth: usize,
}

pub(crate) fn definition_out(d: &Definition) -> DefinitionOut {
    DefinitionOut {
        name: d.name.clone(),
        kind: d.kind.to_string(),
        line: d.line,
        end_line: d.end_line,
        signature: d.signature.clone(),
        container: d.container.as_deref().map(str::to_string),
        depth: d.depth,
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileOutlineOut {
    pub path: String,
    pub language: String,
    pub definitions: Vec<DefinitionOut>,
    /// Why the file has no definitions listed, when the text says so (too large, nested
    /// too deeply to parse, unreadable, none found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OutlineOut {
    pub files: Vec<FileOutlineOut>,
    /// Definitions in all, when every file was parsed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    pub stats: StatsOut,
}

pub(crate) fn render_outline(
    outcome: &symbols::OutlineOutcome,
    offset: usize,
    limit: usize,
    budget: usize,
) -> Answer {
    let mut rooms = rooms(budget);
    let mut text = String::new();
    let mut files = Vec::new();
    let mut index = 0usize; // definitions seen, across files
    let mut shown = 0usize;
    let mut full = false;
    let total: usize = outcome.files.iter().map(|f| f.defs.len()).sum();
    let single = outcome.files.len() == 1;
    for file in &outcome.files {
        let path = path_text(&file.path);
        let mut out = FileOutlineOut {
            path: path.clone(),
            language: file.lang.name().to_string(),
            definitions: Vec::new(),
            note: None,
        };
        let mut heading = false;
        for d in &file.defs {
            if index < offset {
                index += 1;
                continue;
            }
            if shown >= limit {
                full = true;
                break;
            }
            let line = outline_line(&path, heading, d);
            let entry = definition_out(d);
            let frame = if heading { 0 } else { json_len(&path) + 40 };
            if !admit(
                &mut rooms,
                shown == 0,
                json_len(&line),
                cost(&entry) + frame,
            ) {
                full = true;
                break;
            }
            heading = true;
            text.push_str(&line);
            out.definitions.push(entry);
            index += 1;
            shown += 1;
        }
        // A full page still keeps the current file's definitions shown so far: the
        // structured result must hold what the text shows.
        // A file too deeply nested to parse is named wherever it falls, since leaving it
        // out would present a directory's outline as complete; the other reasons only for
        // a single file.
        let too_deep = file.error == Some(symbols::find::FileError::TooDeep);
        if heading {
            files.push(out);
        } else if (single || too_deep) && file.defs.is_empty() && index >= offset && shown < limit {
            let why = no_definitions_reason(file.error);
            let line = format!("{path}: {why}\n");
            rooms.spend(json_len(&line), json_len(&path) + json_len(&why) + 60);
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
    let out = OutlineOut {
        files,
        total: known_total,
        truncated: next_offset.is_some(),
        next_offset,
        stats: stats_out(&outcome.stats),
    };
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

/// One definition's outline line, indented by its depth, after the file's path when it is
/// the file's first (`heading`: the path was written already).
fn outline_line(path: &str, heading: bool, d: &Definition) -> String {
    let head = if heading {
        String::new()
    } else {
        format!("{path}\n")
    };
    format!(
        "{head}{}{}-{} {} {}\n",
        "  ".repeat(d.depth + 1),
        d.line,
        d.end_line,
        d.kind,
        d.signature
    )
}

/// Why a file named in the outline lists no definitions.
fn no_definitions_reason(error: Option<symbols::find::FileError>) -> String {
    match error {
        Some(symbols::find::FileError::TooLarge) => "larger than 1 MiB, not parsed".to_string(),
        Some(symbols::find::FileError::TooDeep) => symbols::find::too_deep_reason(),
        Some(_) => "not readable as text".to_string(),
        None => "no definitions found".to_string(),
    }
}

#[cfg(test)]
mod tests;
