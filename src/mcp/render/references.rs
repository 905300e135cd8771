//! Rendering `references` results within the output budget: uses grouped by file, under
//! the definition enclosing them, with the same entries in the text and the structured
//! result.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::symbols::{StatsOut, admit, cost, rooms, stats_out};
use crate::mcp::render::{Answer, json_len, page_note};
use crate::roots::path_text;
use crate::symbols;

#[derive(Debug, Serialize, JsonSchema)]
pub struct EnclosingOut {
    pub name: String,
    pub kind: String,
    pub line: u64,
    pub end_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReferenceOut {
    pub path: String,
    pub line: u64,
    pub column: u64,
    pub text: String,
    /// The innermost definition holding the line (absent at file level, and when
    /// scope_unknown is set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enclosing: Option<EnclosingOut>,
    /// The line is where the name itself is defined.
    pub definition: bool,
    /// Why the enclosing definition is not known: "too_large" (the file is over the 1 MiB
    /// parse cap: searched, not parsed) or "unparsed" (unreadable, or the parse was
    /// stopped). Absent when the file was parsed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope_unknown: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReferencesOut {
    pub references: Vec<ReferenceOut>,
    pub total: usize,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    pub stats: StatsOut,
}

pub(crate) fn cut(text: &str, max: usize) -> String {
    crate::mcp::render::cut_escaped(text, max)
}

/// The line under a file's path saying why its references carry no enclosing definition.
pub(crate) fn unscoped_line(why: symbols::find::Unscoped) -> &'static str {
    match why {
        symbols::find::Unscoped::TooLarge => {
            "  (over 1 MiB: searched, not parsed; enclosing definitions not known)\n"
        }
        symbols::find::Unscoped::Unparsed => {
            "  (could not be parsed; enclosing definitions not known)\n"
        }
    }
}

/// `filtered`: a kind filter was given.
pub(crate) fn render_references(
    name: &str,
    outcome: &symbols::ReferenceOutcome,
    filtered: bool,
    offset: usize,
    budget: usize,
) -> Answer {
    let mut rooms = rooms(budget);
    let mut text = String::new();
    let mut listed = Vec::new();
    let mut last_path: Option<&Path> = None;
    let mut last_scope: Option<(u64, String)> = None;
    for r in &outcome.entries {
        let path = path_text(&r.path);
        let new_file = last_path != Some(r.path.as_path());
        if new_file {
            last_scope = None;
        }
        let scope = r.enclosing.as_ref().map(|d| (d.line, d.qualified()));
        let lines = reference_lines(r, &path, new_file, last_path.is_some(), scope != last_scope);
        let entry = reference_out(r, path);
        if !admit(
            &mut rooms,
            listed.is_empty(),
            json_len(&lines),
            cost(&entry),
        ) {
            break;
        }
        text.push_str(&lines);
        listed.push(entry);
        last_path = Some(r.path.as_path());
        last_scope = scope;
    }
    let shown = listed.len();
    let next_offset = if shown < outcome.entries.len() {
        Some(offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    references_notes(
        name,
        outcome,
        filtered,
        offset,
        shown,
        next_offset,
        &mut text,
    );
    let out = ReferencesOut {
        references: listed,
        total: outcome.total,
        truncated: next_offset.is_some(),
        next_offset,
        stats: stats_out(&outcome.stats),
    };
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

/// One reference's text: its file's path when it is the file's first (after a blank line
/// unless it is the page's first file) with why its scopes are unknown, the enclosing
/// definition when it changed (`new_scope`), then `line:text`.
fn reference_lines(
    r: &symbols::Reference,
    path: &str,
    new_file: bool,
    after_a_file: bool,
    new_scope: bool,
) -> String {
    let mut lines = String::new();
    if new_file {
        if after_a_file {
            lines.push('\n');
        }
        lines.push_str(path);
        lines.push('\n');
        if let Some(why) = r.unscoped {
            lines.push_str(unscoped_line(why));
        }
    }
    if new_scope && let Some(d) = &r.enclosing {
        lines.push_str(&format!(
            "  in {} {} ({}-{})\n",
            d.kind,
            d.qualified(),
            d.line,
            d.end_line
        ));
    }
    let mark = if r.is_definition {
        "  [definition]"
    } else {
        ""
    };
    lines.push_str(&format!("{}:{}{mark}\n", r.line, cut(&r.text, 500)));
    lines
}

/// One reference's structured entry.
fn reference_out(r: &symbols::Reference, path: String) -> ReferenceOut {
    ReferenceOut {
        path,
        line: r.line,
        column: r.column,
        text: r.text.clone(),
        enclosing: r.enclosing.as_ref().map(|d| EnclosingOut {
            name: d.name.clone(),
            kind: d.kind.to_string(),
            line: d.line,
            end_line: d.end_line,
            container: d.container.as_deref().map(str::to_string),
        }),
        definition: r.is_definition,
        scope_unknown: r.unscoped.map(|why| {
            match why {
                symbols::find::Unscoped::TooLarge => "too_large",
                symbols::find::Unscoped::Unparsed => "unparsed",
            }
            .to_string()
        }),
    }
}

/// The lines after the page: none found, where the next page starts, and what was left
/// out (files over the parse cap with a kind filter, unparsed files, capped candidates).
fn references_notes(
    name: &str,
    outcome: &symbols::ReferenceOutcome,
    filtered: bool,
    offset: usize,
    shown: usize,
    next_offset: Option<usize>,
    text: &mut String,
) {
    if outcome.total == 0 {
        text.push_str(&format!(
            "No references to {name:?} (whole word, case-sensitive; searched {} files).\n",
            thousands(outcome.files_searched)
        ));
    } else {
        let total = outcome.total;
        page_note(
            "references",
            "references",
            offset,
            shown,
            total,
            next_offset,
            text,
        );
    }
    let stats = &outcome.stats;
    if filtered && stats.too_large > 0 {
        text.push_str(&format!(
            "[{} files over 1 MiB not searched: they are not parsed, so the kind of \
             definition around a use there is not known; search without kind to see them]\n",
            thousands(stats.too_large)
        ));
    }
    if outcome.unscoped_left_out > 0 {
        text.push_str(&format!(
            "[{} references left out: their files could not be parsed, so the kind of \
             definition around them is not known]\n",
            thousands(outcome.unscoped_left_out as u64)
        ));
    }
    if stats.candidates_capped {
        text.push_str(&format!(
            "[only the first {} matches were examined for kind; narrow with path]\n",
            thousands(symbols::find::MAX_CANDIDATES as u64)
        ));
    }
}
