//! Rendering `references` results within the output budget: uses grouped by file, under
//! the definition enclosing them (an `@@ kind name (first-last)` line, as `grep` + `scope`
//! writes it), with the same entries in the text and the structured result.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::grep::{add_scoped, scope_cost};
use crate::mcp::render::paths::Paths;
use crate::mcp::render::rows::{LineRow, ScopeRow};
use crate::mcp::render::symbols::{StatsOut, admit, cost, file_cost, rooms, stats_out};
use crate::mcp::render::{Answer, json_len, page_note};
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::symbols::{self, extract::Definition};

/// One file's references of a page.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct ReferenceFileOut {
    pub path: String,
    /// Why the enclosing definitions are not known: "too_large" (the file is over the
    /// 1 MiB parse cap: searched, not parsed) or "unparsed" (unreadable, or the parse was
    /// stopped). Absent when the file was parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_unknown: Option<String>,
    /// The innermost definitions holding uses, each with its uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<ScopeRow<LineRow<'static>>>,
    /// Uses outside every definition (or in a file not parsed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<LineRow<'static>>,
    /// Lines (of those listed) where the name itself is defined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReferencesOut {
    /// The directory the paths are relative to (the only root); absent when they are
    /// absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<ReferenceFileOut>,
    pub total: usize,
    /// Where the next page starts (absent on the last page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    #[serde(default, skip_serializing_if = "StatsOut::is_empty")]
    #[schemars(schema_with = "crate::mcp::render::rows::counts_schema")]
    pub stats: StatsOut,
}

pub(crate) fn cut(text: &str, max: usize) -> String {
    crate::mcp::render::cut_escaped(text, max)
}

/// The line under a file's path saying why its references carry no enclosing definition.
pub(crate) fn unscoped_line(why: symbols::find::Unscoped) -> &'static str {
    match why {
        symbols::find::Unscoped::TooLarge => {
            "(over 1 MiB: searched, not parsed; enclosing definitions not known)\n"
        }
        symbols::find::Unscoped::Unparsed => {
            "(could not be parsed; enclosing definitions not known)\n"
        }
    }
}

/// What makes two references' enclosing definitions the same.
fn key(def: Option<&Definition>) -> Option<(u64, u64, &str)> {
    def.map(|d| (d.line, d.end_line, d.name.as_str()))
}

/// `filtered`: a kind filter was given.
pub(crate) fn render_references(
    name: &str,
    outcome: &symbols::find::ReferenceOutcome,
    filtered: bool,
    offset: usize,
    paths: &Paths,
    budget: usize,
) -> Answer {
    let mut rooms = rooms(budget, paths);
    let mut text = String::new();
    let mut files: Vec<ReferenceFileOut> = Vec::new();
    let mut shown = 0;
    let mut previous: Option<&symbols::find::Reference> = None;
    for r in &outcome.entries {
        let new_file = previous.is_none_or(|p| p.path != r.path);
        let scope = r.enclosing.as_ref();
        let new_scope = new_file || key(scope) != key(previous.and_then(|p| p.enclosing.as_ref()));
        let path = if new_file {
            paths.show(&r.path)
        } else {
            String::new()
        };
        let lines = reference_lines(r, &path, new_file && shown > 0, new_file, new_scope);
        let row = LineRow {
            line: r.line,
            text: cut(&r.text, 500).into(),
        };
        // The row, a line number in `definitions`, the file's frame, and a new scope's row.
        let (mut t, mut s) = (json_len(&lines) - 2, cost(&row) + 8);
        if new_file {
            let (ft, fs) = file_cost(&path);
            (t, s) = (t + ft, s + fs + 60);
        }
        if new_scope && let Some(d) = scope {
            s += scope_cost(d);
        }
        if !admit(&mut rooms, shown == 0, t, s) {
            break;
        }
        text.push_str(&lines);
        if new_file {
            files.push(ReferenceFileOut {
                path,
                scope_unknown: r.unscoped.map(|why| unscoped_code(why).to_string()),
                ..ReferenceFileOut::default()
            });
        }
        if let Some(file) = files.last_mut() {
            if r.is_definition {
                file.definitions.push(r.line);
            }
            add_scoped(&mut file.matches, &mut file.scopes, scope, row);
        }
        previous = Some(r);
        shown += 1;
    }
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
        root: paths.root(),
        files,
        total: outcome.total,
        next_offset,
        stats: stats_out(&outcome.stats),
    };
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

fn unscoped_code(why: symbols::find::Unscoped) -> &'static str {
    match why {
        symbols::find::Unscoped::TooLarge => "too_large",
        symbols::find::Unscoped::Unparsed => "unparsed",
    }
}

/// One reference's text: its file's path when it is the file's first (after a blank line
/// when `blank`) with why its scopes are unknown, the enclosing definition when it changed
/// (`new_scope`; said for a parsed file only), then `line:text`.
fn reference_lines(
    r: &symbols::find::Reference,
    path: &str,
    blank: bool,
    new_file: bool,
    new_scope: bool,
) -> String {
    let mut lines = String::new();
    if blank {
        lines.push('\n');
    }
    if new_file {
        // The text escapes what could forge a line; the structured path is the real one.
        lines.push_str(&escape_for_display(path));
        lines.push('\n');
        if let Some(why) = r.unscoped {
            lines.push_str(unscoped_line(why));
        }
    }
    if new_scope && r.unscoped.is_none() && (r.enclosing.is_some() || !new_file) {
        match &r.enclosing {
            Some(d) => lines.push_str(&format!(
                "@@ {} {} ({}-{})\n",
                d.kind,
                d.qualified(),
                d.line,
                d.end_line
            )),
            None => lines.push_str("@@ (outside any definition)\n"),
        }
    }
    let mark = if r.is_definition {
        "  [definition]"
    } else {
        ""
    };
    lines.push_str(&format!("{}:{}{mark}\n", r.line, cut(&r.text, 500)));
    lines
}

/// The lines after the page: none found, where the next page starts, and what was left
/// out (files over the parse cap with a kind filter, unparsed files, capped candidates).
fn references_notes(
    name: &str,
    outcome: &symbols::find::ReferenceOutcome,
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
