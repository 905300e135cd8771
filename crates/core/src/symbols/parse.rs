//! Reading and parsing files for symbols, below every query and the symbol index: one file
//! ([`parse_file`], and why it gave no definitions: [`FileError`]), many files on the
//! caller's threads ([`parse_all`], optionally skipping C/C++ files a [`Sieve`] rules out),
//! and the counts of what happened to them ([`SymbolStats`]). It lives apart from `find`
//! so that `index` and `scope` can parse without depending on the queries that use them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::extract::{Definition, ExtractError, MAX_PARSE_BYTES, Parser, extract};
use super::lang::Lang;
use crate::files::read::{Whole, read_whole};
use crate::mutex::lock;
use crate::walk::Control;

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
    /// The pre-filter stopped at [`MAX_CANDIDATES`](super::find::MAX_CANDIDATES) files.
    pub candidates_capped: bool,
    /// Answered from the symbol index: the files it holds for the query's roots (then
    /// `parsed` counts the files parsed on demand because they changed).
    pub indexed_files: Option<u64>,
    pub elapsed: Duration,
}

impl SymbolStats {
    /// Adds another pass's per-file counts (parsed, sieved, too large or deep, unreadable).
    pub(crate) fn add_file_counts(&mut self, other: &SymbolStats) {
        self.parsed += other.parsed;
        self.sieved += other.sieved;
        self.too_large += other.too_large;
        self.too_deep += other.too_deep;
        self.unreadable += other.unreadable;
    }
}

/// Reads and parses `files` on up to `threads` threads (this one included), calling `each`
/// with every file's definitions or why it has none (never [`FileError::Cancelled`]: a
/// stopped parse ends its thread's run). Stops starting files once `control` is cancelled.
pub(crate) fn parse_all(
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
        let mut counts = lock(&counts);
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
pub(crate) fn parse_file(
    ctx: &mut Parser,
    path: &Path,
    lang: Lang,
    abort: &AtomicUsize,
) -> Result<Vec<Definition>, FileError> {
    parse_sieved(ctx, path, lang, abort, None)
}

/// A name a file must possibly define to be worth parsing (see [`super::sieve`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sieve<'a> {
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
