//! The on-demand symbol queries, one module each, and what they share: a text pre-filter
//! with the search engine (the same walk, roots, ignore rules and file index as `grep`)
//! finds the files that can hold the answer, and only those are parsed, in parallel on the
//! threads the caller was given.
//!
//! - [`find_symbols`] (`by_name.rs`): definitions by name: exact > prefix > substring, then
//!   by path and line; a fuzzy (subsequence) pass runs only when nothing contains the query.
//! - [`outline`] (`outline.rs`): the definitions of files, in source order, with nesting.
//! - [`references`] (`references.rs`): word-boundary matches of a name, each with its
//!   enclosing definition (files over the parse cap are searched too; their matches say the
//!   scope is unknown).
//! - [`definitions_in`]: one file's definitions (for `read_file` + `symbol`).
//!
//! The name and kind rules every query applies are `matching.rs`, below the queries.
//! Reading and parsing the files (and the statistics of it) is [`super::parse`],
//! re-exported here where callers have always found it.

mod by_name;
mod matching;
mod outline;
mod references;

pub use by_name::{SymbolOutcome, SymbolQuery, Tier, find_symbols, find_symbols_with};
pub use outline::{FileOutline, OutlineOutcome, outline};
pub use references::{Reference, ReferenceOutcome, Unscoped, references};

#[cfg(test)]
pub(crate) use matching::split_qualified;
pub use matching::{
    DefinitionsError, Located, MAX_CANDIDATES, definitions_in, pick, supported_names,
    too_deep_reason,
};
