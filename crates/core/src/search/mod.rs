//! The search engine behind the `grep` and `glob` tools: plain, synchronous Rust that knows
//! nothing about MCP, JSON or async runtimes.
//!
//! A caller builds a [`GrepQuery`] or [`GlobQuery`], resolves the paths to search into
//! canonical absolute `targets` (already checked against the workspace roots), creates a
//! [`Control`](crate::walk::Control) it can poll from another thread, and calls [`grep()`] or [`glob()`]. Both block
//! until done (run them on a blocking thread), walk directory targets in parallel with
//! `ignore::WalkParallel`, search file targets directly, and return an outcome whose entries
//! are already sorted (by path, or newest first), paged (`offset`/`limit`) and bounded in
//! memory, with counts of what was skipped.
//!
//! Two kinds of failure are kept apart: mistakes in the query (bad regex, bad glob, unknown
//! file type) are a [`SearchError`]; problems with individual files (unreadable, vanished,
//! binary, too large, special files, symlink loops) are counted in
//! [`Stats`](crate::walk::Stats) and never fail the call.
//!
//! Reading order: [`query`] (what to search), [`outcome`] (what comes back), then
//! [`grep`](mod@grep) and [`glob`](mod@glob) (the two entry points), which rest on
//! `targets` (what each target is, filters, safe file opening; the walker is
//! [`crate::walk`]), `indexed` (the file index's candidates), [`sink`]
//! (turning searcher callbacks into entries; `starts` finds where its matches start),
//! [`lines`] (line text, cutting, columns) and [`retain`] (the bounded, sorted collector
//! that makes paging cheap and memory flat).
//!
//! Memory is bounded whatever the query: content searches retain only where matches start
//! (sort keys; without context, each with its line), and the page's entries are built
//! afterwards, within a byte allowance (`GrepQuery::max_bytes`): from the keys' lines, or
//! with context by searching the page's files again; each searcher
//! holds at most [`sink::MAX_BUFFER`] bytes of a file at once; patterns and globs too
//! costly to compile are refused before any work. `threads` in a query is how many threads
//! it starts; of those, at most as many work at once as its `Control`'s share of the
//! search pool allows ([`crate::pool`]: one turn per file), so many searches share a fixed
//! number of cores.

mod error;
mod glob;
mod grep;
pub mod indexed;
pub mod lines;
mod outcome;
mod page;
mod query;
pub mod retain;
pub mod sink;
mod starts;
pub(crate) mod targets;

#[cfg(test)]
mod tests;

pub use error::SearchError;
pub use glob::{compile_glob, glob, glob_files, glob_indexed};
pub use grep::{Indexes, build_matcher, grep, grep_files, grep_indexed, grep_with};
pub use outcome::{
    ContextLine, FileCount, FoundFile, GlobOutcome, GrepEntries, GrepMatch, GrepOutcome,
};
pub use query::{CaseMode, GlobQuery, GrepQuery, OutputMode, SortBy};
