//! Rendering `search` results within the output budget: per result a header line (kind,
//! name, line range, score, the query words it matched) under its file's path, and its
//! excerpt, the same entries in the text and the structured result; then what the answer
//! could not cover (roots without an index, changed files left out) and where the next
//! page starts.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::Rooms;
use crate::mcp::render::paths::Paths;
use crate::mcp::render::symbols::{admit, cost, is_false, rooms};
use crate::mcp::render::{Answer, json_len, page_note};
use crate::mcp::sample::Expansion;
use crate::mcp::shown::{self, Piece, Recall, Stamp};
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::ranked::{RankedHit, RankedOutcome, RankedRequest, RankedState, RankedStats};

/// Consecutive results of one file, best first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchFileOut {
    pub path: String,
    pub results: Vec<SearchResultOut>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResultOut {
    /// First and last line of the definition or region (1-based).
    pub line: u64,
    pub end_line: u64,
    /// function, method, class, struct… or text (a region between definitions).
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Enclosing class, impl or module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// BM25F score (higher is better; comparable within one answer).
    pub score: f64,
    /// Query words the result holds (name, comment above, body or path).
    pub matched: Vec<String>,
    /// The lines shown, each `N:text`: short definitions whole, else the signature and
    /// the lines holding query words.
    pub text: String,
    /// Lines of the range not shown (read them with read_file).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOut {
    /// The directory the paths are relative to (the only root); absent when they are
    /// absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The results best first, consecutive ones of a file under its path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SearchFileOut>,
    /// Documents holding a query word (within the filters).
    pub total: usize,
    /// Where the next page starts (absent on the last page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Some files were not ranked from the index: roots whose index is not ready (their
    /// candidates came from a text pre-filter), or changed files left out; `notes` says which.
    #[serde(default, skip_serializing_if = "is_false")]
    pub partial: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "SearchStatsOut::is_empty")]
    #[schemars(schema_with = "crate::mcp::render::rows::counts_schema")]
    pub stats: SearchStatsOut,
}

/// How the answer was ranked, each count only when not zero (the time it took is left out:
/// a client measures it).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct SearchStatsOut {
    /// Files ranked from the index.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub indexed_files: u64,
    /// Changed files indexed by this query first.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub on_demand: u64,
    /// Changed files left out (the index catches up in the background).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out: u64,
    /// Files ranked without an index (the text pre-filter's candidates).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub candidates: u64,
}

impl SearchStatsOut {
    fn is_empty(&self) -> bool {
        self.indexed_files + self.on_demand + self.left_out + self.candidates == 0
    }
}

/// `recall`: lines this session showed before, which an excerpt need not repeat (the
/// lines shown are remembered).
pub(crate) fn render_search(
    request: &RankedRequest,
    outcome: &RankedOutcome,
    expansion: &Expansion,
    (paths, recall): (&Paths, &Recall),
    budget: usize,
) -> Answer {
    if outcome.no_terms {
        // What was cut is said here too: the words may have been in the part not read.
        let held = match outcome.query_cut {
            true => format!("only {} were read, and they are numbers", query_cut_note()),
            false => "only punctuation, numbers or spaces".to_string(),
        };
        return Answer::error(format!(
            "`query` has no words to search for ({held}); describe what you are looking for \
             in words or identifiers"
        ));
    }
    let mut notes = notes(outcome);
    notes.extend(expansion.note());
    let notes_len: usize = notes.iter().map(|n| json_len(n) + 8).sum();
    let mut rooms = rooms(budget, paths);
    rooms.spend(notes_len, notes_len);
    let (mut text, files) = page(&outcome.hits, (paths, recall), rooms);
    let shown: usize = files.iter().map(|file| file.results.len()).sum();
    let next_offset = if shown < outcome.hits.len() {
        Some(request.offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    if outcome.total == 0 {
        text.push_str("No documents hold a word of the query");
        if !request.kinds.is_empty() || !request.langs.is_empty() {
            text.push_str(" (within the kind and language filters)");
        }
        text.push_str(".\n");
    }
    for note in &notes {
        text.push_str(&format!("[{note}]\n"));
    }
    if outcome.total > 0 {
        page_note(
            "search",
            "results",
            request.offset,
            shown,
            outcome.total,
            next_offset,
            &mut text,
        );
    }
    let stats = &outcome.stats;
    let out = SearchOut {
        root: paths.root(),
        files,
        total: outcome.total,
        next_offset,
        partial: !outcome.unindexed.is_empty() || stats.left_out > 0,
        notes,
        stats: stats_out(stats),
    };
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

fn stats_out(stats: &RankedStats) -> SearchStatsOut {
    SearchStatsOut {
        indexed_files: stats.indexed_files,
        on_demand: stats.on_demand,
        left_out: stats.left_out,
        candidates: stats.candidates,
    }
}

/// The results that fit in `rooms`, as text and structured entries (at least one, so
/// paging advances). Consecutive results of one file share its path line and its entry.
fn page(
    hits: &[RankedHit],
    (paths, recall): (&Paths, &Recall),
    mut rooms: Rooms,
) -> (String, Vec<SearchFileOut>) {
    let mut text = String::new();
    let mut files: Vec<SearchFileOut> = Vec::new();
    for hit in hits {
        let path = paths.show(&hit.path);
        let new_file = files.last().is_none_or(|last| last.path != path);
        let stamp = Stamp::of(&hit.path);
        let (mut block, entry, lines) = result(hit, &recall.seen(&hit.path, stamp));
        let mut structured = cost(&entry);
        if new_file {
            // The text escapes what could forge a line; the structured path is the real one.
            let heading = match files.is_empty() {
                true => format!("{}\n", escape_for_display(&path)),
                false => format!("\n{}\n", escape_for_display(&path)),
            };
            block.insert_str(0, &heading);
            // `{"path":…,"results":[]},`
            structured += json_len(&path) + 24;
        }
        let first = files.is_empty();
        if !admit(&mut rooms, first, json_len(&block) - 2, structured) {
            break;
        }
        text.push_str(&block);
        recall.record(&hit.path, stamp, &lines);
        if new_file {
            files.push(SearchFileOut {
                path,
                results: Vec::new(),
            });
        }
        if let Some(file) = files.last_mut() {
            file.results.push(entry);
        }
    }
    (text, files)
}

/// One result: its text block (without its file's path line), its structured entry, and
/// the lines it shows; a run of its lines in `seen` (shown before) is one note.
fn result(hit: &RankedHit, seen: &[(u64, u64)]) -> (String, SearchResultOut, Vec<(u64, u64)>) {
    let mut lines = String::new();
    let numbered: Vec<(u64, &str)> = hit.lines.iter().map(|(n, l)| (*n, l.as_str())).collect();
    let mut shown_lines = Vec::new();
    for piece in shown::elide(&numbered, seen) {
        match piece {
            Piece::Line(n, line) => {
                lines.push_str(&format!("{n}:{line}\n"));
                shown_lines.push(n);
            }
            Piece::Unchanged(first, last) => {
                lines.push_str(&shown::unchanged_note(first, last, ""));
            }
        }
    }
    let label = match (&hit.name, &hit.container) {
        (Some(name), Some(container)) => format!("{} {container}::{name}", hit.kind),
        (Some(name), None) => format!("{} {name}", hit.kind),
        _ => hit.kind.to_string(),
    };
    let mut block = format!(
        "@@ {label} ({}-{}) score {:.2}; matched: {}\n{lines}",
        hit.line,
        hit.end_line,
        hit.score,
        hit.matched.join(", ")
    );
    if hit.omitted > 0 {
        let how = match &hit.name {
            Some(name) => format!(
                "read_file with path and symbol \"{}\"",
                hit.container
                    .as_ref()
                    .map_or_else(|| name.clone(), |c| format!("{c}::{name}"))
            ),
            None => format!(
                "read_file with offset={} limit={}",
                hit.line,
                hit.end_line - hit.line + 1
            ),
        };
        block.push_str(&format!("  … {} more lines: {how}\n", hit.omitted));
    }
    let entry = SearchResultOut {
        line: hit.line,
        end_line: hit.end_line,
        kind: hit.kind.to_string(),
        name: hit.name.clone(),
        container: hit.container.clone(),
        score: (f64::from(hit.score) * 100.0).round() / 100.0,
        matched: hit.matched.clone(),
        text: lines,
        omitted: hit.omitted,
    };
    (block, entry, shown::ranges_of(shown_lines))
}

/// What the answer could not cover, said once each.
fn notes(outcome: &RankedOutcome) -> Vec<String> {
    let mut notes = Vec::new();
    for (root, state) in &outcome.unindexed {
        let why = match state {
            RankedState::Building { done, total } => format!(
                "is building ({}/{} files read)",
                thousands(*done as u64),
                thousands(*total as u64)
            ),
            RankedState::Waiting(what) => format!("is waiting for {what}"),
            RankedState::Unavailable(why) => format!("is unavailable ({why})"),
            RankedState::Ready => "was not ready".to_string(),
        };
        notes.push(format!(
            "partial: the search index of {} {why}; ranked the {} files holding the query's rarest words (of {} holding any)",
            rootgrep_core::roots::path_display(root),
            thousands(outcome.stats.candidates),
            thousands(outcome.stats.matching)
        ));
    }
    if outcome.stats.left_out > 0 {
        notes.push(format!(
            "partial: {} files changed since they were indexed were left out; the index \
             catches up in a moment",
            thousands(outcome.stats.left_out)
        ));
    }
    if outcome.query_cut {
        notes.push(format!("only {} were read", query_cut_note()));
    }
    if outcome.terms_dropped > 0 {
        notes.push(format!(
            "the query's {} most common words were left out (at most {} are scored)",
            thousands(outcome.terms_dropped as u64),
            rootgrep_core::ranked::MAX_TERMS
        ));
    }
    notes
}

/// The part of a cut query that was read (see `ranked::MAX_QUERY_BYTES`).
fn query_cut_note() -> String {
    format!(
        "the first {} KiB of the query's words (letters, digits, `_`)",
        rootgrep_core::ranked::MAX_QUERY_BYTES / 1024
    )
}
