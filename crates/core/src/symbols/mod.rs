//! Code symbols without a language server (PRODUCT §13): definitions extracted with
//! tree-sitter and each grammar's tags query, and the queries behind the `symbols`,
//! `outline`, `references` tools and `read_file`'s `symbol`.
//!
//! Plain Rust: no rmcp, no serde_json, no async. Reading order: [`lang`] (which files,
//! which grammar and query), [`extract`] (one file's definitions, nested), [`find`] (the
//! on-demand queries: a text pre-filter with the search engine, then parsing only the
//! candidate files), [`scope`] (the definition enclosing a line, for `grep` + `scope`).
//!
//! [`index`] is the symbol index: kept live by the watcher beside the file index, it
//! answers `symbols` from memory once a root is built ([`find::find_symbols_with`]);
//! until then, and wherever it cannot vouch for a file, the query parses on demand.

pub mod extract;
pub mod find;
pub mod index;
pub mod lang;
pub mod parse;
pub mod scope;
pub mod sieve;

pub use extract::{Definition, Parser};
#[cfg(test)]
use extract::{ExtractError, MAX_PARSE_BYTES, extract};
pub use find::{
    DefinitionsError, FileOutline, Located, OutlineOutcome, Reference, ReferenceOutcome,
    SymbolOutcome, SymbolQuery, SymbolStats, Tier, definitions_in, find_symbols, find_symbols_with,
    outline, pick, references,
};
pub use index::{SymbolIndex, SymbolState, SymbolStatus};
pub use lang::Lang;

#[cfg(test)]
mod tests;
