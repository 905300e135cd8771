//! `references`: word-boundary matches of a name, found with the search engine, each with
//! the definition enclosing it (from the symbol index or parsed now, see
//! [`crate::symbols::scope`]). Files over the parse cap are searched too: their matches
//! say their scope is unknown.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use super::matching::{MAX_CANDIDATES, kind_allowed};
use crate::search::Indexes;
use crate::search::{self, GrepEntries, GrepMatch, GrepQuery, OutputMode, SearchError};
use crate::symbols::extract::{Definition, MAX_PARSE_BYTES};
use crate::symbols::index::SymbolIndex;
use crate::symbols::lang::{Lang, rg_types};
use crate::symbols::parse::{FileError, SymbolStats};
use crate::walk::Control;

/// One reference: a matching line and the definition enclosing it.
#[derive(Clone, Debug)]
pub struct Reference {
    pub path: PathBuf,
    pub line: u64,
    pub column: u64,
    pub text: String,
    /// The innermost definition holding the line (`None` at file level, or when
    /// `unscoped` says it is not known).
    pub enclosing: Option<Definition>,
    /// The line is where `name` itself is defined.
    pub is_definition: bool,
    /// Why the enclosing definition is not known: the file was searched but not parsed.
    pub unscoped: Option<Unscoped>,
}

/// Why a reference has no known enclosing definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unscoped {
    /// The file is over the [`MAX_PARSE_BYTES`] parse cap.
    TooLarge,
    /// The file could not be parsed (unreadable, binary, or the parse was stopped).
    Unparsed,
}

/// The answer of [`references`].
#[derive(Clone, Debug, Default)]
pub struct ReferenceOutcome {
    pub entries: Vec<Reference>,
    pub total: usize,
    pub next_offset: Option<usize>,
    pub stats: SymbolStats,
    pub files_searched: u64,
    /// With `kinds`: matches left out because their file was not parsed, so whether they
    /// sit in a definition of those kinds is not known.
    pub unscoped_left_out: usize,
    pub cancelled: bool,
}

/// Word-boundary, case-sensitive matches of `name` in supported files under `targets`,
/// by path and line, paged; each with its enclosing definition (files of the page are
/// parsed). With `kinds`, only references inside definitions of those kinds are kept
/// (the whole match list is then examined, up to the pre-filter's cap).
///
/// Files over the parse cap are searched like any other (finding a use needs only the
/// text); their references come without an enclosing definition, marked
/// [`Unscoped::TooLarge`], and `stats.too_large` counts those files of the page. With
/// `kinds` they cannot be judged, so they are not searched (their uses would only crowd
/// the match cap): `stats.too_large` counts them, and references in files that could not
/// be parsed are left out and counted in `unscoped_left_out`. `stats.candidates_capped`
/// says that `kinds` examined only the first [`MAX_CANDIDATES`] matches.
#[allow(clippy::too_many_arguments)]
pub fn references(
    name: &str,
    targets: &[PathBuf],
    index: Option<Indexes<'_>>,
    symbols: Option<&SymbolIndex>,
    kinds: &[String],
    offset: usize,
    limit: usize,
    threads: usize,
    control: &Control,
    abort: &AtomicUsize,
) -> Result<ReferenceOutcome, SearchError> {
    let started = Instant::now();
    let filtered = !kinds.is_empty();
    let grep = uses_query(name, filtered, offset, limit, threads);
    let outcome = search::grep_with(&grep, targets, index, control)?;
    let GrepEntries::Matches(matches) = outcome.entries else {
        return Ok(ReferenceOutcome::default());
    };
    let mut stats = SymbolStats::default();
    if filtered {
        // No file under the cap has a line over the searcher's limit: these are the files
        // left out for their size.
        stats.too_large = outcome.stats.skipped_too_large;
        stats.candidates_capped = outcome.truncated;
    }
    let parsed = crate::symbols::scope::definitions_of_files(
        matches.iter().map(|m| &*m.path),
        symbols,
        threads,
        control,
        abort,
        &mut stats,
    );
    let entries: Vec<Reference> = matches
        .into_iter()
        .map(|m| reference(m, &parsed, name))
        .collect();
    let mut unscoped_left_out = 0;
    let (entries, total, next_offset) = if filtered {
        unscoped_left_out = entries.iter().filter(|r| r.unscoped.is_some()).count();
        kind_page(entries, kinds, offset, limit)
    } else {
        (entries, outcome.total, outcome.next_offset)
    };
    stats.elapsed = started.elapsed();
    Ok(ReferenceOutcome {
        entries,
        total,
        next_offset,
        stats,
        files_searched: outcome.stats.files_searched,
        unscoped_left_out,
        cancelled: control.is_cancelled(),
    })
}

/// The search for `name`'s uses: whole words, case-sensitive, in supported files. With a
/// kind filter (`filtered`) every match up to the cap is taken and paged after the filter,
/// and files over the parse cap are not searched; else the search pages.
fn uses_query(
    name: &str,
    filtered: bool,
    offset: usize,
    limit: usize,
    threads: usize,
) -> GrepQuery {
    let mut grep = GrepQuery::new(name);
    grep.fixed_strings = true;
    grep.word = true;
    grep.types = rg_types(&[]);
    grep.mode = OutputMode::Content;
    grep.threads = threads;
    if filtered {
        grep.limit = Some(MAX_CANDIDATES);
        grep.max_filesize = Some(MAX_PARSE_BYTES as u64);
    } else {
        grep.offset = offset;
        grep.limit = Some(limit.max(1));
    }
    grep
}

/// One match as a reference: its enclosing definition from its file's definitions
/// (`parsed`), whether it is where `name` is defined, or why its scope is not known.
fn reference(
    m: GrepMatch,
    parsed: &HashMap<PathBuf, Result<Vec<Definition>, FileError>>,
    name: &str,
) -> Reference {
    let (defs, unscoped) = match parsed.get(&*m.path) {
        Some(Ok(defs)) => (Some(defs), None),
        Some(Err(FileError::TooLarge)) => (None, Some(Unscoped::TooLarge)),
        // A file of a supported language that was not parsed (unreadable, too
        // deep, or its parse stopped).
        _ if Lang::from_path(&m.path).is_some() => (None, Some(Unscoped::Unparsed)),
        _ => (None, None),
    };
    let enclosing = defs.and_then(|defs| crate::symbols::scope::innermost(defs, m.line).cloned());
    let is_definition =
        defs.is_some_and(|defs| defs.iter().any(|d| d.name == name && d.name_line == m.line));
    Reference {
        path: m.path.to_path_buf(),
        line: m.line,
        column: m.column,
        text: m.text,
        enclosing,
        is_definition,
        unscoped,
    }
}

/// With a kind filter: the page of the references inside a definition of those kinds,
/// their total and the next page's offset.
fn kind_page(
    mut entries: Vec<Reference>,
    kinds: &[String],
    offset: usize,
    limit: usize,
) -> (Vec<Reference>, usize, Option<usize>) {
    entries.retain(|r| {
        r.enclosing
            .as_ref()
            .is_some_and(|d| kind_allowed(kinds, d.kind))
    });
    let total = entries.len();
    let page: Vec<_> = entries
        .into_iter()
        .skip(offset)
        .take(limit.max(1))
        .collect();
    let end = offset + page.len();
    (page, total, (end < total).then_some(end))
}
