//! What a `search` asks and what it gets back: the request, the ranked hits with their
//! excerpts, the counts, and the kind names a request may filter on. Plain data; the work
//! is `sources.rs` (what is scored) and `find.rs` (the query).

use std::path::PathBuf;
use std::time::Duration;

use super::docs::{KIND_NAMES, REGION};
use crate::symbols::lang::Lang;

/// Bytes of a query's words read at most (a pasted log is cut there, and said); other
/// characters do not count (`terms::read_of_query`).
pub const MAX_QUERY_BYTES: usize = 64 * 1024;
/// Distinct query terms scored at most: the rarest are kept.
pub const MAX_TERMS: usize = 256;

/// A `search` request.
#[derive(Clone, Debug, Default)]
pub struct RankedRequest {
    pub query: String,
    /// Document kinds to keep (see [`kind_ids`]); empty: all.
    pub kinds: Vec<String>,
    pub langs: Vec<Lang>,
    pub offset: usize,
    pub limit: usize,
    /// Threads for the pre-filter's greps.
    pub threads: usize,
}

/// One ranked document.
#[derive(Clone, Debug)]
pub struct RankedHit {
    pub path: PathBuf,
    pub line: u64,
    pub end_line: u64,
    /// A definition kind, or `text` for a region between definitions.
    pub kind: &'static str,
    /// The definition's name (`None` for a region).
    pub name: Option<String>,
    pub container: Option<String>,
    pub lang: Option<Lang>,
    pub score: f32,
    /// Query terms the document holds (fields, comment above, path), in query order.
    pub matched: Vec<String>,
    /// The lines shown, (1-based line, text), in order: short definitions whole, else the
    /// signature and the lines holding query terms; a cut line ends with `…`.
    pub lines: Vec<(u64, String)>,
    /// Lines of the range not shown.
    pub omitted: u64,
}

/// Counts of an answer.
#[derive(Clone, Debug, Default)]
pub struct RankedStats {
    /// Files served from the roots' indexes.
    pub indexed_files: u64,
    /// Documents scored over (every part).
    pub documents: u64,
    /// Files changed since they were indexed, indexed by this query.
    pub on_demand: u64,
    /// Files changed since they were indexed that this query left out (more than it
    /// indexes itself; the index catches up in the background).
    pub left_out: u64,
    /// Files ranked without an index (the pre-filter's candidates), and how many held a
    /// query word in all.
    pub candidates: u64,
    pub matching: u64,
    pub elapsed: Duration,
}

/// The answer to a [`RankedRequest`].
#[derive(Clone, Debug, Default)]
pub struct RankedOutcome {
    pub hits: Vec<RankedHit>,
    /// Documents holding a query term (within the filters).
    pub total: usize,
    pub next_offset: Option<usize>,
    /// The query holds no word to search for (only punctuation or numbers).
    pub no_terms: bool,
    /// The query's words were longer than [`MAX_QUERY_BYTES`]: the rest was not read.
    pub query_cut: bool,
    /// Distinct terms beyond [`MAX_TERMS`] left out (the most common ones).
    pub terms_dropped: usize,
    /// Roots answered without an index (building, not watched), with the index's state.
    pub unindexed: Vec<(PathBuf, super::RankedState)>,
    pub stats: RankedStats,
    pub cancelled: bool,
}

/// The kind positions a kind name keeps: a definition kind (`function` also keeps methods
/// and constructors; `class` also structs, enums, unions, interfaces and traits), or
/// `text` for regions; `None` for an unknown name.
pub fn kind_ids(name: &str) -> Option<Vec<u8>> {
    let names: &[&str] = match name {
        "function" => &["function", "method", "constructor"],
        "class" => &["class", "struct", "enum", "union", "interface", "trait"],
        "text" | "region" => &[REGION],
        other => {
            return KIND_NAMES
                .iter()
                .position(|k| *k == other)
                .map(|p| vec![p as u8]);
        }
    };
    Some(
        names
            .iter()
            .filter_map(|n| KIND_NAMES.iter().position(|k| k == n))
            .map(|p| p as u8)
            .collect(),
    )
}

/// Every kind name [`kind_ids`] takes, for messages.
pub fn kind_names() -> String {
    KIND_NAMES.join(", ")
}
