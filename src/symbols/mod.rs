//! Code symbols without a language server (PRODUCT §13): definitions extracted with
//! tree-sitter and each grammar's tags query, and the queries behind the `symbols`,
//! `outline`, `references` tools and `read_file`'s `symbol`.
//!
//! Plain Rust: no rmcp, no serde_json, no async. Reading order: [`lang`] (which files,
//! which grammar and query), [`extract`] (one file's definitions, nested), [`find`] (the
//! on-demand queries: a text pre-filter with the search engine, then parsing only the
//! candidate files).
//!
//! There is no symbol index yet: every query parses the files it needs. The index (kept
//! live by the watcher, beside the file index) will answer the same queries from memory;
//! the functions in [`find`] are where it plugs in.

pub mod extract;
pub mod find;
pub mod lang;
pub mod sieve;

pub use extract::{Definition, ExtractError, MAX_PARSE_BYTES, extract};
pub use find::{
    FileOutline, Located, OutlineOutcome, Reference, ReferenceOutcome, SymbolOutcome, SymbolQuery,
    SymbolStats, Tier, definitions_in, find_symbols, outline, pick, references,
};
pub use lang::Lang;

#[cfg(test)]
mod tests;
