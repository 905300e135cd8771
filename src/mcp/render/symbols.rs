//! Rendering `symbols` results within the output budget, with the same entries in the text
//! and the structured result; and what the code-intelligence tools' renderings share
//! (`outline.rs`, `references.rs`): their stats, the room for entries, an entry's cost and
//! the note on skipped files.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::{Answer, ENVELOPE, Rooms, json_len, page_note, serialized_len};
use crate::roots::path_text;
use crate::symbols::{self, Located, SymbolQuery, SymbolStats, Tier};

// ---------------------------------------------------------------------------------------
// results

#[derive(Debug, Serialize, JsonSchema)]
pub struct SymbolOut {
    pub name: String,
    pub kind: String,
    pub path: String,
    /// First line of the definition (1-based).
    pub line: u64,
    pub end_line: u64,
    /// The definition's line with its name, trimmed.
    pub signature: String,
    /// Enclosing class, impl, module or function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    pub language: String,
    /// exact, prefix, substring or fuzzy.
    #[serde(rename = "match")]
    pub tier: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SymbolsOut {
    pub symbols: Vec<SymbolOut>,
    /// Matching definitions in all.
    pub total: usize,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// No name starts with the query, so names containing it or holding its letters in
    /// order were listed.
    pub fuzzy: bool,
    /// The query is one character: only definitions named exactly that were looked for
    /// (no prefix, substring or fuzzy matches; give two or more characters for those).
    pub whole_names_only: bool,
    pub stats: StatsOut,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct StatsOut {
    /// Files whose text contained the query (the only ones parsed).
    pub candidates: u64,
    pub parsed: u64,
    /// C/C++ candidates not parsed: no line mentioning the name could define it.
    pub sieved: u64,
    /// Files over the 1 MiB parse cap.
    pub too_large: u64,
    /// Python files nested deeper than the parser keeps (511 indentation levels): not
    /// parsed, since their outline would be wrong.
    pub too_deep: u64,
    pub unreadable: u64,
    /// Answered from the symbol index: the files it holds for the query's paths (`parsed`
    /// then counts files parsed on demand because they changed since).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_files: Option<u64>,
    pub elapsed_ms: u64,
}

pub(crate) fn stats_out(stats: &SymbolStats) -> StatsOut {
    StatsOut {
        candidates: stats.candidates,
        parsed: stats.parsed,
        sieved: stats.sieved,
        too_large: stats.too_large,
        too_deep: stats.too_deep,
        unreadable: stats.unreadable,
        indexed_files: stats.indexed_files,
        elapsed_ms: stats.elapsed.as_millis() as u64,
    }
}

/// Room for entries in each form: the budget less the envelope, the fixed fields and the
/// last lines.
pub(crate) fn rooms(budget: usize) -> Rooms {
    Rooms::new(budget, ENVELOPE + 700, 700)
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

pub(crate) fn render_symbols(
    query: &SymbolQuery,
    outcome: &symbols::SymbolOutcome,
    budget: usize,
) -> Answer {
    let (mut text, listed) = symbols_page(&outcome.entries, rooms(budget));
    let shown = listed.len();
    let next_offset = if shown < outcome.entries.len() {
        Some(query.offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    symbols_notes(query, outcome, shown, next_offset, &mut text);
    let out = SymbolsOut {
        symbols: listed,
        total: outcome.total,
        truncated: next_offset.is_some(),
        next_offset,
        fuzzy: outcome.fuzzy,
        whole_names_only: outcome.whole_names_only,
        stats: stats_out(&outcome.stats),
    };
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

/// The definitions that fit in `rooms`, as text lines and structured entries (at least
/// one, so paging advances).
fn symbols_page(entries: &[(Tier, Located)], mut rooms: Rooms) -> (String, Vec<SymbolOut>) {
    let mut text = String::new();
    let mut listed = Vec::new();
    for (tier, found) in entries {
        let (line, entry) = symbol_entry(*tier, found);
        if !admit(&mut rooms, listed.is_empty(), json_len(&line), cost(&entry)) {
            break;
        }
        text.push_str(&line);
        listed.push(entry);
    }
    (text, listed)
}

/// One definition's text line (`path:first-last  kind  name — signature`) and its
/// structured entry.
fn symbol_entry(tier: Tier, found: &Located) -> (String, SymbolOut) {
    let d = &found.def;
    let path = path_text(&found.path);
    let entry = SymbolOut {
        name: d.name.clone(),
        kind: d.kind.to_string(),
        path: path.clone(),
        line: d.line,
        end_line: d.end_line,
        signature: d.signature.clone(),
        container: d.container.as_deref().map(str::to_string),
        language: found.lang.name().to_string(),
        tier: tier.name().to_string(),
    };
    let line = format!(
        "{path}:{}-{}  {}  {} — {}\n",
        d.line,
        d.end_line,
        d.kind,
        d.qualified(),
        d.signature
    );
    (line, entry)
}

/// The lines after the page: why nothing matched, how the query was matched, where the
/// next page starts, and whether the candidates were capped.
fn symbols_notes(
    query: &SymbolQuery,
    outcome: &symbols::SymbolOutcome,
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
