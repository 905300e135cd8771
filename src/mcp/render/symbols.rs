//! Rendering the code-intelligence tools' results (`symbols`, `outline`, `references`)
//! within the output budget, with the same entries in the text and the structured result.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::{Answer, ENVELOPE, json_len, serialized_len};
use crate::roots::path_text;
use crate::symbols::{self, Definition, Located, SymbolQuery, SymbolStats, Tier};

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

/// Room for entries: the budget less the envelope and the fixed fields and last line.
pub(crate) fn room(budget: usize) -> usize {
    budget.saturating_sub(ENVELOPE + 700)
}

/// Serialized size of one structured entry, with its comma.
pub(crate) fn cost<T: Serialize>(entry: &T) -> usize {
    serialized_len(entry) + 1
}

pub(crate) fn cut(text: &str, max: usize) -> String {
    crate::mcp::render::cut_escaped(text, max)
}

pub(crate) fn render_symbols(
    query: &SymbolQuery,
    outcome: &symbols::SymbolOutcome,
    budget: usize,
) -> Answer {
    let (mut text, listed) = symbols_page(&outcome.entries, room(budget));
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

/// The definitions that fit in `room`, as text lines and structured entries (at least one,
/// so paging advances).
fn symbols_page(entries: &[(Tier, Located)], room: usize) -> (String, Vec<SymbolOut>) {
    let mut used = 0;
    let mut text = String::new();
    let mut listed = Vec::new();
    for (tier, found) in entries {
        let (line, entry) = symbol_entry(*tier, found);
        let more = json_len(&line) + cost(&entry);
        if used + more > room && !listed.is_empty() {
            break;
        }
        used += more;
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
        if let Some(next) = next_offset {
            text.push_str(&format!(
                "[showing {}-{} of {} definitions; call symbols with offset={next} for more]\n",
                query.offset + 1,
                query.offset + shown,
                outcome.total
            ));
        } else if query.offset > 0 && shown == 0 {
            text.push_str(&format!(
                "[offset {} is past the end: {} definitions in total]\n",
                query.offset, outcome.total
            ));
        }
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

pub(crate) fn render_outline(
    outcome: &symbols::OutlineOutcome,
    offset: usize,
    limit: usize,
    budget: usize,
) -> Answer {
    let room = room(budget);
    let mut used = 0;
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
            let more =
                json_len(&line) + cost(&entry) + if heading { 0 } else { json_len(&path) + 40 };
            if used + more > room && shown > 0 {
                full = true;
                break;
            }
            used += more;
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
            used += json_len(&line) + json_len(&path) + json_len(&why) + 60;
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
    let room = room(budget);
    let mut used = 0;
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
        let more = json_len(&lines) + cost(&entry);
        if used + more > room && !listed.is_empty() {
            break;
        }
        used += more;
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
    } else if let Some(next) = next_offset {
        text.push_str(&format!(
            "[showing {}-{} of {} references; call references with offset={next} for more]\n",
            offset + 1,
            offset + shown,
            outcome.total
        ));
    } else if offset > 0 && shown == 0 {
        text.push_str(&format!(
            "[offset {offset} is past the end: {} references in total]\n",
            outcome.total
        ));
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

#[cfg(test)]
mod tests;
