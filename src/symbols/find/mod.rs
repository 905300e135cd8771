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
//! This module owns the shared parts: the statistics, reading and parsing files on
//! threads (`parse_all`, [`parse_file`]) and why a file gave no definitions
//! ([`FileError`]), and the name and kind rules every query applies.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::extract::{Definition, ExtractError, MAX_PARSE_BYTES, Parser, extract};
use super::lang::Lang;
use crate::files::read::{Whole, read_whole};
use crate::search::{self, Control};

mod by_name;
mod outline;
mod references;

pub use by_name::{SymbolOutcome, SymbolQuery, Tier, find_symbols, find_symbols_with};
pub use outline::{FileOutline, OutlineOutcome, outline};
pub use references::{Reference, ReferenceOutcome, Unscoped, references};

/// Most candidate files a query parses (the pre-filter's page); a query that matches in
/// more files than this answers from the first ones by path and says so.
pub const MAX_CANDIDATES: usize = search::MAX_RETAINED;

/// What happened to the files a query looked at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolStats {
    /// Files the text pre-filter selected.
    pub candidates: u64,
    /// Files parsed.
    pub parsed: u64,
    /// C/C++ candidates not parsed: no line where the name occurs could define it.
    pub sieved: u64,
    /// Files over [`MAX_PARSE_BYTES`], not parsed.
    pub too_large: u64,
    /// Python files nested deeper than their parser keeps: no definitions taken from them.
    pub too_deep: u64,
    /// Binary or unreadable files.
    pub unreadable: u64,
    /// The pre-filter stopped at [`MAX_CANDIDATES`] files.
    pub candidates_capped: bool,
    /// Answered from the symbol index: the files it holds for the query's roots (then
    /// `parsed` counts the files parsed on demand because they changed).
    pub indexed_files: Option<u64>,
    pub elapsed: Duration,
}

impl SymbolStats {
    /// Adds another pass's per-file counts (parsed, sieved, too large or deep, unreadable).
    fn add_file_counts(&mut self, other: &SymbolStats) {
        self.parsed += other.parsed;
        self.sieved += other.sieved;
        self.too_large += other.too_large;
        self.too_deep += other.too_deep;
        self.unreadable += other.unreadable;
    }
}

/// A definition and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub path: PathBuf,
    pub lang: Lang,
    pub def: Definition,
}

/// Splits `Parser::parse` / `Parser.parse` into (`Some("Parser")`, `"parse"`).
pub fn split_qualified(query: &str) -> (Option<&str>, &str) {
    for sep in ["::", "."] {
        if let Some((container, name)) = query.rsplit_once(sep)
            && !container.is_empty()
            && !name.is_empty()
        {
            let container = container.rsplit(sep).next().unwrap_or(container);
            return (Some(container), name);
        }
    }
    (None, query)
}

/// Reads and parses `files` on up to `threads` threads (this one included), calling `each`
/// with every file's definitions or why it has none (never [`FileError::Cancelled`]: a
/// stopped parse ends its thread's run). Stops starting files once `control` is cancelled.
pub(super) fn parse_all(
    files: &[(PathBuf, Lang)],
    threads: usize,
    control: &Control,
    abort: &AtomicUsize,
    stats: &mut SymbolStats,
    sieve: Option<Sieve<'_>>,
    each: impl Fn(&Path, Lang, Result<Vec<Definition>, FileError>) + Sync,
) {
    let next = AtomicUsize::new(0);
    let counts = Mutex::new(SymbolStats::default());
    let work = || {
        let mut ctx = Parser::new();
        let mut mine = SymbolStats::default();
        loop {
            // The abort flag too: tree-sitter sees it only inside a long parse, so a run of
            // small files would otherwise go on after a cancellation.
            if control.is_cancelled() || abort.load(Ordering::Relaxed) != 0 {
                break;
            }
            let _turn = control.turn();
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((path, lang)) = files.get(i) else {
                break;
            };
            let parsed = parse_sieved(&mut ctx, path, *lang, abort, sieve);
            match parsed {
                Ok(_) => mine.parsed += 1,
                Err(FileError::Sieved) => mine.sieved += 1,
                Err(FileError::TooLarge) => mine.too_large += 1,
                Err(FileError::TooDeep) => mine.too_deep += 1,
                Err(FileError::Unreadable) => mine.unreadable += 1,
                Err(FileError::Cancelled) => break,
            }
            each(path, *lang, parsed);
            control.files_examined.fetch_add(1, Ordering::Relaxed);
        }
        let mut counts = counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        counts.add_file_counts(&mine);
    };
    on_threads(threads, files.len(), work);
    let counts = counts
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    stats.add_file_counts(&counts);
}

/// Runs `work` on `threads` threads (the caller's among them), never more than `items`.
fn on_threads(threads: usize, items: usize, work: impl Fn() + Sync) {
    let threads = threads.clamp(1, items.max(1));
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(&work);
        }
        work();
    });
}

/// Why one file gave no definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileError {
    TooLarge,
    /// Python nested deeper than its parser keeps (`extract::PYTHON_MAX_INDENT_LEVELS`).
    TooDeep,
    /// Not parsed: no line could define the name looked for.
    Sieved,
    /// Missing, unreadable, special or binary.
    Unreadable,
    Cancelled,
}

/// Reads one file (without following symlinks, transcoding UTF-16) and extracts its
/// definitions.
pub fn parse_file(
    ctx: &mut Parser,
    path: &Path,
    lang: Lang,
    abort: &AtomicUsize,
) -> Result<Vec<Definition>, FileError> {
    parse_sieved(ctx, path, lang, abort, None)
}

/// A name a file must possibly define to be worth parsing (see [`super::sieve`]).
#[derive(Clone, Copy, Debug)]
pub struct Sieve<'a> {
    /// Lowercase when `insensitive`.
    pub needle: &'a str,
    pub insensitive: bool,
}

/// [`parse_file`], skipping (as "no definitions") a C or C++ file where `sieve`'s name
/// cannot be defined.
fn parse_sieved(
    ctx: &mut Parser,
    path: &Path,
    lang: Lang,
    abort: &AtomicUsize,
    sieve: Option<Sieve<'_>>,
) -> Result<Vec<Definition>, FileError> {
    let text = match read_whole(path, MAX_PARSE_BYTES as u64) {
        Ok(Whole::Text(text)) => text,
        Ok(Whole::TooLarge(_)) => return Err(FileError::TooLarge),
        Ok(Whole::Binary(_)) | Err(_) => return Err(FileError::Unreadable),
    };
    if let Some(sieve) = sieve
        && matches!(lang, Lang::C | Lang::Cpp)
        && !super::sieve::may_define_c(&text, sieve.needle, sieve.insensitive)
    {
        return Err(FileError::Sieved);
    }
    match extract(ctx, lang, text.as_bytes(), Some(abort)) {
        Ok(defs) => Ok(defs),
        Err(ExtractError::TooLarge(_)) => Err(FileError::TooLarge),
        Err(ExtractError::TooDeep(_)) => Err(FileError::TooDeep),
        Err(ExtractError::Cancelled) => Err(FileError::Cancelled),
        Err(ExtractError::Config(_)) => Err(FileError::Unreadable),
    }
}

/// The definitions of one file, for `read_file` + `symbol`. `Err` says why there are none.
pub fn definitions_in(path: &Path) -> Result<(Lang, Vec<Definition>), String> {
    let lang = Lang::from_path(path).ok_or_else(|| {
        format!(
            "{}: no symbols for this file type (supported: {})",
            crate::roots::path_text(path),
            supported_names()
        )
    })?;
    let never = AtomicUsize::new(0);
    match parse_file(&mut Parser::new(), path, lang, &never) {
        Ok(defs) => Ok((lang, defs)),
        Err(FileError::TooLarge) => Err(format!(
            "{}: larger than {} MiB, not parsed for symbols; read it with offset/limit",
            crate::roots::path_text(path),
            MAX_PARSE_BYTES >> 20
        )),
        Err(FileError::TooDeep) => Err(format!(
            "{}: {}; read it with offset/limit",
            crate::roots::path_text(path),
            too_deep_reason()
        )),
        Err(_) => Err(format!(
            "{}: cannot be read as text",
            crate::roots::path_text(path)
        )),
    }
}

/// Why a Python file nested too deeply has no definitions, for messages.
pub fn too_deep_reason() -> String {
    format!(
        "nested deeper than {} indentation levels, more than tree-sitter's Python parser \
         keeps (it loses the outer definitions), so not parsed for symbols",
        super::extract::PYTHON_MAX_INDENT_LEVELS
    )
}

/// The supported language names, for messages.
pub fn supported_names() -> String {
    Lang::ALL.map(Lang::name).join(", ")
}

/// Definitions of `symbol` (`name`, `Container::name` or `Container.name`) among `defs`:
/// exact case first; if none, ignoring case.
pub fn pick<'d>(defs: &'d [Definition], symbol: &str) -> Vec<&'d Definition> {
    let (container, name) = split_qualified(symbol.trim());
    let select = |insensitive: bool| -> Vec<&Definition> {
        defs.iter()
            .filter(|d| same_name(&d.name, name, insensitive))
            .filter(|d| {
                container.is_none_or(|c| {
                    d.container
                        .as_deref()
                        .is_some_and(|have| same_name(have, c, insensitive))
                })
            })
            .collect()
    };
    let exact = select(false);
    if exact.is_empty() {
        select(true)
    } else {
        exact
    }
}

fn same_name(have: &str, want: &str, insensitive: bool) -> bool {
    if insensitive {
        have.eq_ignore_ascii_case(want) || have.to_lowercase() == want.to_lowercase()
    } else {
        have == want
    }
}

fn kind_allowed(kinds: &[String], kind: &str) -> bool {
    if kinds.is_empty() {
        return kind != "impl";
    }
    kinds.iter().any(|k| {
        let k = k.trim().to_ascii_lowercase();
        k == kind
            || matches!(
                (k.as_str(), kind),
                ("fn" | "func", "function")
                    | ("function", "method" | "constructor")
                    | ("class", "struct" | "interface" | "trait" | "enum" | "union")
                    | (
                        "type",
                        "struct" | "enum" | "union" | "interface" | "trait" | "class"
                    )
                    | ("const", "constant")
                    | ("module", "namespace")
                    | ("namespace", "module")
            )
    })
}
