//! Rendering a `glob` outcome: one path a line, newest first or by path, and the
//! structured result with the same files, within the output budget.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::render::{
    Answer, ENVELOPE, FIXED, Rooms, cut_to_fit, ignore_notes, json_len, rfc3339,
};
use crate::search::GlobOutcome;

#[derive(Debug, Serialize, JsonSchema)]
pub struct GlobOut {
    pub files: Vec<FoundOut>,
    pub total: usize,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Ignore files not applied (not regular files, too large), one note each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_ignore_files: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FoundOut {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
}

/// Renders a glob outcome so that each form (text, structured content) takes at most
/// `budget` bytes; the same files in both.
pub fn render_glob(outcome: &GlobOutcome, offset: usize, budget: usize) -> Answer {
    let (notes, notes_cost) = ignore_notes(&outcome.stats.skipped_ignore_files);
    let mut rooms = Rooms::new(budget, FIXED + ENVELOPE + notes_cost, FIXED + notes_cost);
    let mut text = String::new();
    let mut files = Vec::new();
    for found in &outcome.files {
        let mut path = found.path.display().to_string();
        let cost = |p: &str| json_len(p) + 60;
        if files.is_empty() && cost(&path) > rooms.least() {
            path = cut_to_fit(&path, rooms.least(), cost); // shown cut, never skipped
        }
        if !rooms.take(json_len(&path), cost(&path)) {
            break;
        }
        text.push_str(&path);
        text.push('\n');
        files.push(FoundOut {
            path,
            modified: found.modified.map(rfc3339),
        });
    }
    let shown = files.len();
    let next_offset = if shown < outcome.files.len() {
        Some(offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    if outcome.total == 0 {
        text.push_str("No files found.\n");
    } else if let Some(next) = next_offset {
        text.push_str(&format!(
            "[showing {}-{} of {} files; call glob with offset={next} for more]\n",
            offset + 1,
            offset + shown,
            outcome.total
        ));
    }
    for note in &notes {
        text.push_str(&format!("[{note}]\n"));
    }
    let out = GlobOut {
        files,
        total: outcome.total,
        truncated: next_offset.is_some(),
        next_offset,
        skipped_ignore_files: notes,
    };
    // Every path above was measured as serialized, within `room`.
    Answer::text(text)
        .with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
        .fitted()
}
