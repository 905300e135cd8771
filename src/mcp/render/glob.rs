//! Rendering a `glob` outcome: one path a line, newest first or by path, and the
//! structured result with the same files (a list of paths), each form within the output
//! budget.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::render::paths::Paths;
use crate::mcp::render::{
    Answer, ENVELOPE, FIXED, Rooms, cut_to_fit, ignore_notes, json_len, page_note,
};
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::search::GlobOutcome;

#[derive(Debug, Serialize, JsonSchema)]
pub struct GlobOut {
    /// The directory the paths are relative to (the only root); absent when they are
    /// absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The files found, in the order asked for (newest first, or by path).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    pub total: usize,
    /// Where the next page starts (absent on the last page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Ignore files not applied (not regular files, too large), one note each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_ignore_files: Vec<String>,
}

/// Renders a glob outcome so that each form (text, structured content) takes at most
/// `budget` bytes; the same files in both.
pub fn render_glob(outcome: &GlobOutcome, offset: usize, paths: &Paths, budget: usize) -> Answer {
    let (notes, notes_cost) = ignore_notes(&outcome.stats.skipped_ignore_files);
    let reserve = FIXED + notes_cost;
    let mut rooms = Rooms::new(budget, reserve + ENVELOPE, reserve + paths.root_len());
    let mut text = String::new();
    let mut files = Vec::new();
    for found in &outcome.files {
        let mut path = paths.show(&found.path);
        let cost = |p: &str| json_len(p) + 1;
        if files.is_empty() && cost(&path) > rooms.least() {
            path = cut_to_fit(&path, rooms.least(), cost); // shown cut, never skipped
        }
        // The text escapes what could forge a line; the structured path is the real one.
        let written = escape_for_display(&path);
        if !rooms.take(json_len(&written), cost(&path)) {
            break;
        }
        text.push_str(&written);
        text.push('\n');
        files.push(path);
    }
    let shown = files.len();
    let next_offset = if shown < outcome.files.len() {
        Some(offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    if outcome.total == 0 {
        text.push_str("No files found.\n");
    } else {
        let total = outcome.total;
        page_note(
            "glob",
            "files",
            offset,
            shown,
            total,
            next_offset,
            &mut text,
        );
    }
    for note in &notes {
        text.push_str(&format!("[{note}]\n"));
    }
    let out = GlobOut {
        root: paths.root(),
        files,
        total: outcome.total,
        next_offset,
        skipped_ignore_files: notes,
    };
    // Every path above was measured as serialized, within its room.
    Answer::text(text)
        .with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
        .fitted()
}
