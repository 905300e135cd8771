//! Rendering `symbols` results within the output budget, with the same entries in the text
//! and the structured result, grouped by file; and what the code-intelligence tools'
//! renderings share (`outline.rs`, `references.rs`, `search.rs`): their stats, the room for
//! entries, an entry's cost and the note on skipped files.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::paths::Paths;
use crate::mcp::render::rows::{SymbolFileRow, SymbolRow};
use crate::mcp::render::{Answer, ENVELOPE, Rooms, json_len, page_note, serialized_len};
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::symbols::{self, find::Located, find::SymbolQuery, parse::SymbolStats};

// ---------------------------------------------------------------------------------------
// results

#[derive(Debug, Serialize, JsonSchema)]
pub struct SymbolsOut {
    /// The directory the paths are relative to (the only root); absent when they are
    /// absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The definitions by file, best first (exact names, then prefixes, then by path);
    /// consecutive definitions of one file share its row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SymbolFileRow>,
    /// Matching definitions in all.
    pub total: usize,
    /// Where the next page starts (absent on the last page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// No name starts with the query, so names containing it or holding its letters in
    /// order were listed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fuzzy: bool,
    /// The query is one character: only definitions named exactly that were looked for
    /// (no prefix, substring or fuzzy matches; give two or more characters for those).
    #[serde(default, skip_serializing_if = "is_false")]
    pub whole_names_only: bool,
    #[serde(default, skip_serializing_if = "StatsOut::is_empty")]
    #[schemars(schema_with = "crate::mcp::render::rows::counts_schema")]
    pub stats: StatsOut,
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the query looked at and what it could not cover, each count only when not zero.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct StatsOut {
    /// Files over the 1 MiB parse cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub too_large: u64,
    /// Python files nested deeper than the parser keeps (511 indentation levels): not
    /// parsed, since their outline would be wrong.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub too_deep: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable: u64,
    /// Only the first files containing the query were parsed (narrow with path).
    #[serde(default, skip_serializing_if = "is_false")]
    pub candidates_capped: bool,
    /// Files whose text contained the query (the only ones parsed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub candidates: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub parsed: u64,
    /// C/C++ candidates not parsed: no line mentioning the name could define it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sieved: u64,
    /// Answered from the symbol index: the files it holds for the query's paths (`parsed`
    /// then counts files parsed on demand because they changed since).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub indexed_files: u64,
}

impl StatsOut {
    pub(crate) fn is_empty(&self) -> bool {
        serialized_len(self) <= 2
    }
}

/// The structured stats of an answer (the time it took is left out: a client measures it).
pub(crate) fn stats_out(stats: &SymbolStats) -> StatsOut {
    StatsOut {
        too_large: stats.too_large,
        too_deep: stats.too_deep,
        unreadable: stats.unreadable,
        candidates_capped: stats.candidates_capped,
        candidates: stats.candidates,
        parsed: stats.parsed,
        sieved: stats.sieved,
        indexed_files: stats.indexed_files.unwrap_or(0),
    }
}

/// Room for entries in each form: the budget less the envelope, the fixed fields (the
/// root's path among them) and the last lines.
pub(crate) fn rooms(budget: usize, paths: &Paths) -> Rooms {
    Rooms::new(budget, ENVELOPE + 700, 700 + paths.root_len())
}

/// Takes an entry's bytes from `rooms` when it fits, or when it is the first of the page
/// (`first`: shown whatever it costs, so paging advances); false when the page is full.
pub(crate) fn admit(rooms: &mut Rooms, first: bool, text: usize, structured: usize) -> bool {
    if !rooms.fits(text, structured) && !first {
        return false;
    }
    rooms.spend(text, structured);
    true
}

/// Serialized size of one structured entry, with its comma.
pub(crate) fn cost<T: Serialize>(entry: &T) -> usize {
    serialized_len(entry) + 1
}

/// What a file's group adds besides its entries: the path line and a blank line in the
/// text, `{"path":…,"<list>":[]},` in the structured form.
pub(crate) fn file_cost(path: &str) -> (usize, usize) {
    (json_len(&escape_for_display(path)), json_len(path) + 32)
}

pub(crate) fn render_symbols(
    query: &SymbolQuery,
    outcome: &symbols::find::SymbolOutcome,
    paths: &Paths,
    budget: usize,
) -> Answer {
    let mut rooms = rooms(budget, paths);
    let mut text = String::new();
    let mut files: Vec<SymbolFileRow> = Vec::new();
    let mut shown = 0;
    for (_, found) in &outcome.entries {
        let path = paths.show(&found.path);
        let (row, line) = symbol_entry(found);
        // Consecutive definitions of one file share its path line and its row.
        let new_file = files.last().is_none_or(|last| last.path != path);
        let (mut text_cost, mut structured) = (json_len(&line) - 2, cost(&row));
        // The text escapes what could forge a line; the structured path is the real one.
        let heading = escape_for_display(&path);
        if new_file {
            (text_cost, structured) = (
                text_cost + json_len(&heading),
                structured + json_len(&path) + 6,
            );
        }
        if !admit(&mut rooms, shown == 0, text_cost, structured) {
            break;
        }
        if new_file {
            if shown > 0 {
                text.push('\n');
            }
            text.push_str(&heading);
            text.push('\n');
            files.push(SymbolFileRow {
                path,
                symbols: Vec::new(),
            });
        }
        text.push_str(&line);
        if let Some(file) = files.last_mut() {
            file.symbols.push(row);
        }
        shown += 1;
    }
    let next_offset = if shown < outcome.entries.len() {
        Some(query.offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    symbols_notes(query, outcome, shown, next_offset, &mut text);
    let out = SymbolsOut {
        root: paths.root(),
        files,
        total: outcome.total,
        next_offset,
        fuzzy: outcome.fuzzy,
        whole_names_only: outcome.whole_names_only,
        stats: stats_out(&outcome.stats),
    };
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

/// One definition's row and its text line (`first-last kind name: signature`).
fn symbol_entry(found: &Located) -> (SymbolRow, String) {
    let d = &found.def;
    let row = SymbolRow {
        line: d.line,
        end_line: d.end_line,
        kind: d.kind.to_string(),
        name: d.qualified(),
        signature: d.signature.clone(),
    };
    let line = format!(
        "{}-{} {} {}: {}\n",
        d.line, d.end_line, row.kind, row.name, d.signature
    );
    (row, line)
}

/// The lines after the page: why nothing matched, how the query was matched, where the
/// next page starts, and whether the candidates were capped.
fn symbols_notes(
    query: &SymbolQuery,
    outcome: &symbols::find::SymbolOutcome,
    shown: usize,
    next_offset: Option<usize>,
    text: &mut String,
) {
    let stats = &outcome.stats;
    let matching = if outcome.whole_names_only {
        "named exactly"
    } else {
        "matching"
    };
    if outcome.total == 0 {
        match stats.indexed_files {
            Some(held) => text.push_str(&format!(
                "No definitions {matching} {:?} (symbol index: {} files, {} parsed on demand \
                 since they changed).\n",
                query.query,
                thousands(held),
                thousands(stats.parsed),
            )),
            None => text.push_str(&format!(
                "No definitions {matching} {:?} (parsed {} of {} files containing it{}).\n",
                query.query,
                thousands(stats.parsed),
                thousands(stats.candidates),
                skipped(stats)
            )),
        }
    } else if outcome.fuzzy {
        text.push_str(
            "[no name starts with the query; names containing it or its letters in order]\n",
        );
    }
    if outcome.whole_names_only {
        text.push_str(SINGLE_CHARACTER_NOTE);
    }
    if outcome.total > 0 {
        let (offset, total) = (query.offset, outcome.total);
        page_note(
            "symbols",
            "definitions",
            offset,
            shown,
            total,
            next_offset,
            text,
        );
        if stats.candidates_capped {
            text.push_str(&format!(
                "[only the first {} files containing the query were parsed; narrow with path \
                 or language]\n",
                thousands(symbols::find::MAX_CANDIDATES as u64)
            ));
        }
    }
}

/// Said with every answer to a one-character query (structured: `whole_names_only`).
pub(crate) const SINGLE_CHARACTER_NOTE: &str = "[a one-character query matches whole names only: give two \
     or more characters for prefix, substring and fuzzy matches]\n";

pub(crate) fn skipped(stats: &SymbolStats) -> String {
    let mut parts = Vec::new();
    if stats.too_large > 0 {
        parts.push(format!("{} over 1 MiB", stats.too_large));
    }
    if stats.too_deep > 0 {
        parts.push(format!(
            "{} nested deeper than the parser keeps",
            stats.too_deep
        ));
    }
    if stats.unreadable > 0 {
        parts.push(format!("{} unreadable or binary", stats.unreadable));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; skipped {}", parts.join(", "))
    }
}
