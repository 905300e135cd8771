//! Symbol queries without an index: a text pre-filter with the search engine (the same
//! walk, roots, ignore rules and file index as `grep`) finds the files that can hold the
//! answer, and only those are parsed, in parallel on the threads the caller was given.
//!
//! - [`find_symbols`]: definitions by name: exact > prefix > substring, then by path and
//!   line; a fuzzy (subsequence) pass runs only when nothing contains the query.
//! - [`outline`]: the definitions of files, in source order, with nesting.
//! - [`references`]: word-boundary matches of a name, each with its enclosing definition
//!   (files over the parse cap are searched too; their matches say the scope is unknown).
//! - [`definitions_in`]: one file's definitions (for `read_file` + `symbol`).
//!
//! A later symbol index replaces the pre-filter and the parsing, not these signatures.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::extract::{
    Definition, ExtractError, LineIndex, MAX_PARSE_BYTES, Parser, Signatures, extract,
};
use super::index::{Lookup, Snapshot, SymbolIndex};
use super::lang::{Lang, rg_types};
use crate::files::read::{Whole, read_whole};
use crate::index::FileIndex;
use crate::search::{self, CaseMode, Control, GrepEntries, GrepQuery, OutputMode, SearchError};

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

/// How a name matched the query, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Exact,
    Prefix,
    Substring,
    Fuzzy,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::Exact => "exact",
            Tier::Prefix => "prefix",
            Tier::Substring => "substring",
            Tier::Fuzzy => "fuzzy",
        }
    }
}

/// A `symbols` request.
#[derive(Clone, Debug, Default)]
pub struct SymbolQuery {
    /// A name, prefix or fuzzy name; `Container::name` or `Container.name` also filters on
    /// the container. Smart case: case-insensitive unless it has an uppercase letter.
    pub query: String,
    /// Only exact names.
    pub exact: bool,
    /// Kinds to keep (empty: all but `impl`, which repeats its type's name).
    pub kinds: Vec<String>,
    /// Languages to keep (empty: all).
    pub langs: Vec<Lang>,
    pub offset: usize,
    pub limit: usize,
    /// Threads to parse with (at least 1).
    pub threads: usize,
}

/// The answer to a [`SymbolQuery`].
#[derive(Clone, Debug, Default)]
pub struct SymbolOutcome {
    /// The page, with each entry's match tier.
    pub entries: Vec<(Tier, Located)>,
    pub total: usize,
    pub next_offset: Option<usize>,
    /// The second pass ran (no name starts with the query): substring and fuzzy matches.
    pub fuzzy: bool,
    /// The query is one character, so only names equal to it were looked for (no prefix,
    /// substring or fuzzy matches), though `exact` was not asked.
    pub whole_names_only: bool,
    pub stats: SymbolStats,
    pub cancelled: bool,
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

/// Finds definitions by name under `targets` (canonical paths already checked against the
/// roots). Blocks; stops early (with `cancelled`) when `control` is cancelled, and
/// `abort` (set by the caller together with `control`) interrupts a parse in progress.
pub fn find_symbols(
    query: &SymbolQuery,
    targets: &[PathBuf],
    index: Option<&FileIndex>,
    control: &Control,
    abort: &AtomicUsize,
) -> Result<SymbolOutcome, SearchError> {
    find_symbols_with(query, targets, index, None, control, abort)
}

/// The symbol index's snapshots covering every target (grouped by root), or `None` when
/// one target's root cannot answer from memory now.
fn snapshots_for(
    symbols: &SymbolIndex,
    targets: &[PathBuf],
) -> Option<Vec<(Snapshot, Vec<PathBuf>)>> {
    let mut out: Vec<(Snapshot, Vec<PathBuf>)> = Vec::new();
    for target in targets {
        if let Some((_, mine)) = out.iter_mut().find(|(s, _)| target.starts_with(s.root())) {
            mine.push(target.clone());
            continue;
        }
        let snapshot = symbols.snapshot_for(target)?;
        out.push((snapshot, vec![target.clone()]));
    }
    Some(out)
}

/// [`find_symbols`], answered from the symbol index when it covers the targets now (the
/// same answer: the on-demand path is the reference, see the equivalence tests).
pub fn find_symbols_with(
    query: &SymbolQuery,
    targets: &[PathBuf],
    index: Option<&FileIndex>,
    symbols: Option<&SymbolIndex>,
    control: &Control,
    abort: &AtomicUsize,
) -> Result<SymbolOutcome, SearchError> {
    // A query is foreground work: the index build steps aside while it runs.
    let _running = crate::walk::SearchRunning::start();
    let started = Instant::now();
    let indexed = symbols.and_then(|symbols| snapshots_for(symbols, targets));
    let (container, name) = split_qualified(query.query.trim());
    let insensitive = !name.chars().any(char::is_uppercase);
    let mut stats = SymbolStats::default();
    let matcher = NameMatcher::new(name, insensitive);
    let keep = |located: &Located| {
        kind_allowed(&query.kinds, located.def.kind)
            && (query.langs.is_empty() || query.langs.contains(&located.lang))
            && container.is_none_or(|c| {
                located
                    .def
                    .container
                    .as_deref()
                    .is_some_and(|have| same_name(have, c, insensitive))
            })
    };
    // First pass: names equal to or starting with the query, so the pre-filter wants the
    // query at the start of a word (most files mentioning a name only call it; fewer
    // candidates is what keeps a first query on a large tree fast).
    let literal = regex_escape(name);
    let folded = if insensitive {
        name.to_ascii_lowercase()
    } else {
        name.to_string()
    };
    let word_start = name.starts_with(|c: char| c.is_alphanumeric() || c == '_');
    // A one-character query would make nearly every file a candidate for prefixes of no
    // use: it looks for that exact name only.
    let whole_names_only = !query.exact && name.chars().count() < 2;
    let exact = query.exact || whole_names_only;
    let pattern = match (exact, word_start) {
        (true, true) => format!(r"\b{literal}\b"),
        (false, true) => format!(r"\b{literal}"),
        (_, false) => literal,
    };
    let first_tier = |def: &Definition| {
        matcher
            .tier(&def.name, exact)
            .filter(|t| *t <= Tier::Prefix)
    };
    let lowered = if insensitive {
        name.to_lowercase()
    } else {
        name.to_string()
    };
    let mut found = match &indexed {
        Some(snapshots) => {
            let lookup = match exact {
                true => Lookup::Exact {
                    key: &lowered,
                    insensitive,
                },
                false => Lookup::Prefix {
                    key: &lowered,
                    insensitive,
                },
            };
            from_index(snapshots, lookup, &first_tier, &keep, &mut stats)
        }
        None => collect(
            query,
            targets,
            index,
            control,
            abort,
            &pattern,
            insensitive,
            &mut stats,
            // C/C++ files where no line could define the name are not parsed.
            word_start.then_some(Sieve {
                needle: &folded,
                insensitive,
            }),
            first_tier,
            &keep,
        )?,
    };
    let mut fuzzy = false;
    if found.is_empty()
        && !exact
        && !control.is_cancelled()
        && let Some(snapshots) = &indexed
    {
        // The same second pass, over the names in memory.
        fuzzy = true;
        let second_tier = |def: &Definition| {
            matcher
                .tier(&def.name, false)
                .or_else(|| matcher.fuzzy(&def.name).map(|_| Tier::Fuzzy))
        };
        let scan = |n: &str| matcher.tier(n, false).is_some() || matcher.fuzzy(n).is_some();
        found = from_index(
            snapshots,
            Lookup::Scan(&scan),
            &second_tier,
            &keep,
            &mut stats,
        );
    }
    if found.is_empty() && !exact && !control.is_cancelled() && indexed.is_none() {
        // No name starts with the query: names containing it, then names holding its
        // letters in order (the pre-filter regex accepts both).
        fuzzy = true;
        // This pass's pattern matches every text the first one did, so its files are all
        // the files the answer looked at: its counts replace the first pass's, which
        // would otherwise count a file twice (a file over 1 MiB was "skipped 2").
        stats = SymbolStats::default();
        let pattern = name
            .chars()
            .map(|c| regex_escape(&c.to_string()))
            .collect::<Vec<_>>()
            .join(r"\w*");
        found = collect(
            query,
            targets,
            index,
            control,
            abort,
            &pattern,
            insensitive,
            &mut stats,
            None,
            |def| {
                matcher
                    .tier(&def.name, false)
                    .or_else(|| matcher.fuzzy(&def.name).map(|_| Tier::Fuzzy))
            },
            &keep,
        )?;
    }
    found.sort_by(|(ta, a), (tb, b)| {
        ta.cmp(tb)
            .then_with(|| match ta {
                Tier::Exact => (a.def.name != name).cmp(&(b.def.name != name)),
                // Shorter names are closer to the query.
                _ => a.def.name.len().cmp(&b.def.name.len()),
            })
            .then_with(|| match ta {
                Tier::Fuzzy => matcher.fuzzy(&a.def.name).cmp(&matcher.fuzzy(&b.def.name)),
                _ => std::cmp::Ordering::Equal,
            })
            // Path's order, compared on the bytes: component-wise comparison dominated
            // sorting thousands of prefix matches.
            .then_with(|| crate::search::retain::path_cmp(&a.path, &b.path))
            .then(a.def.line.cmp(&b.def.line))
            .then(a.def.name_line.cmp(&b.def.name_line))
    });
    let total = found.len();
    let mut entries: Vec<_> = found
        .into_iter()
        .skip(query.offset)
        .take(query.limit.max(1))
        .collect();
    if indexed.is_some() {
        fill_signatures(&mut entries);
    }
    let end = query.offset + entries.len();
    stats.elapsed = started.elapsed();
    Ok(SymbolOutcome {
        next_offset: (end < total).then_some(end),
        entries,
        total,
        fuzzy,
        whole_names_only,
        stats,
        cancelled: control.is_cancelled(),
    })
}

/// Definitions from the symbol index come without their signature (the line holding the
/// name is not kept in memory): it is read again for the ones a query returns, each file
/// once and each line once (a page can hold thousands of definitions of one long line).
fn fill_signatures(entries: &mut [(Tier, Located)]) {
    let mut files: std::collections::HashMap<PathBuf, Option<(String, LineIndex)>> =
        std::collections::HashMap::new();
    for (_, found) in entries.iter() {
        if found.def.signature.is_empty() && !files.contains_key(&found.path) {
            let text = match read_whole(&found.path, MAX_PARSE_BYTES as u64) {
                Ok(Whole::Text(text)) => {
                    let lines = LineIndex::new(text.as_bytes());
                    Some((text, lines))
                }
                _ => None,
            };
            files.insert(found.path.clone(), text);
        }
    }
    let mut signatures: std::collections::HashMap<&Path, Signatures<'_>> =
        std::collections::HashMap::new();
    for (path, text) in &files {
        if let Some((text, lines)) = text {
            signatures.insert(path, Signatures::new(text.as_bytes(), lines));
        }
    }
    for (_, found) in entries.iter_mut() {
        if !found.def.signature.is_empty() {
            continue;
        }
        if let Some(signatures) = signatures.get_mut(found.path.as_path()) {
            found.def.signature = signatures.of_line(found.def.name_line);
        }
    }
}

/// The definitions `tier` accepts and `keep` allows, from the symbol index's snapshots.
fn from_index(
    snapshots: &[(Snapshot, Vec<PathBuf>)],
    lookup: Lookup<'_>,
    tier: &dyn Fn(&Definition) -> Option<Tier>,
    keep: &dyn Fn(&Located) -> bool,
    stats: &mut SymbolStats,
) -> Vec<(Tier, Located)> {
    let mut found = Vec::new();
    let mut held = 0;
    for (snapshot, targets) in snapshots {
        let counts = snapshot.visit(targets, lookup, &mut |path, lang, def| {
            if let Some(t) = tier(&def) {
                let located = Located {
                    path: path.to_path_buf(),
                    lang,
                    def,
                };
                if keep(&located) {
                    found.push((t, located));
                }
            }
        });
        held += snapshot.files() as u64;
        stats.parsed += counts.parsed;
    }
    stats.indexed_files = Some(held);
    found
}

/// Pre-filters with `pattern`, parses the candidates and keeps the definitions `tier`
/// accepts and `keep` allows.
#[allow(clippy::too_many_arguments)]
fn collect(
    query: &SymbolQuery,
    targets: &[PathBuf],
    index: Option<&FileIndex>,
    control: &Control,
    abort: &AtomicUsize,
    pattern: &str,
    insensitive: bool,
    stats: &mut SymbolStats,
    sieve: Option<Sieve<'_>>,
    tier: impl Fn(&Definition) -> Option<Tier> + Sync,
    keep: &(impl Fn(&Located) -> bool + Sync),
) -> Result<Vec<(Tier, Located)>, SearchError> {
    let files = candidates(
        pattern,
        insensitive,
        &query.langs,
        targets,
        index,
        control,
        query.threads,
        stats,
    )?;
    let found = Mutex::new(Vec::new());
    parse_all(
        &files,
        query.threads,
        control,
        abort,
        stats,
        sieve,
        |path, lang, defs| {
            let Ok(defs) = defs else { return };
            let mut mine = Vec::new();
            for def in defs {
                if let Some(t) = tier(&def) {
                    let located = Located {
                        path: path.to_path_buf(),
                        lang,
                        def,
                    };
                    if keep(&located) {
                        mine.push((t, located));
                    }
                }
            }
            if !mine.is_empty() {
                control
                    .matches
                    .fetch_add(mine.len() as u64, Ordering::Relaxed);
                found
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .extend(mine);
            }
        },
    );
    Ok(found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// Files of a supported language under `targets` with a line matching `pattern`.
#[allow(clippy::too_many_arguments)]
fn candidates(
    pattern: &str,
    insensitive: bool,
    langs: &[Lang],
    targets: &[PathBuf],
    index: Option<&FileIndex>,
    control: &Control,
    threads: usize,
    stats: &mut SymbolStats,
) -> Result<Vec<(PathBuf, Lang)>, SearchError> {
    let mut grep = GrepQuery::new(pattern);
    grep.case = if insensitive {
        CaseMode::Insensitive
    } else {
        CaseMode::Sensitive
    };
    grep.types = rg_types(langs);
    grep.mode = OutputMode::FilesWithMatches;
    grep.limit = Some(MAX_CANDIDATES);
    grep.max_filesize = Some(MAX_PARSE_BYTES as u64);
    grep.threads = threads;
    let outcome = match index {
        Some(index) => search::grep_indexed(&grep, targets, index, control)?,
        None => search::grep(&grep, targets, control)?,
    };
    stats.too_large += outcome.stats.skipped_too_large;
    stats.candidates_capped |= outcome.truncated;
    let GrepEntries::Files(files) = outcome.entries else {
        return Ok(Vec::new());
    };
    let files: Vec<_> = files
        .into_iter()
        .filter_map(|path| {
            let lang = Lang::from_path(&path)?;
            (langs.is_empty() || langs.contains(&lang)).then_some((path, lang))
        })
        .collect();
    stats.candidates += files.len() as u64;
    Ok(files)
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

/// Matches names against the query with smart case.
struct NameMatcher {
    query: String,
    insensitive: bool,
}

impl NameMatcher {
    fn new(query: &str, insensitive: bool) -> NameMatcher {
        NameMatcher {
            query: if insensitive {
                query.to_lowercase()
            } else {
                query.to_string()
            },
            insensitive,
        }
    }

    fn folded<'a>(&self, name: &'a str) -> std::borrow::Cow<'a, str> {
        if self.insensitive {
            std::borrow::Cow::Owned(name.to_lowercase())
        } else {
            std::borrow::Cow::Borrowed(name)
        }
    }

    fn tier(&self, name: &str, exact_only: bool) -> Option<Tier> {
        let name = self.folded(name);
        if *name == self.query {
            Some(Tier::Exact)
        } else if exact_only || self.query.is_empty() {
            None
        } else if name.starts_with(&self.query) {
            Some(Tier::Prefix)
        } else if name.contains(&self.query) {
            Some(Tier::Substring)
        } else {
            None
        }
    }

    /// The query's characters in order within the name: the span they cover (smaller is
    /// better), or `None`.
    fn fuzzy(&self, name: &str) -> Option<usize> {
        let name = self.folded(name);
        let mut wanted = self.query.chars().peekable();
        let (mut first, mut last) = (None, 0);
        for (at, c) in name.char_indices() {
            if wanted.peek() == Some(&c) {
                wanted.next();
                first.get_or_insert(at);
                last = at;
            }
        }
        if wanted.peek().is_some() {
            return None;
        }
        Some(last - first.unwrap_or(0))
    }
}

/// `text` with regex metacharacters escaped.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------
// outline

/// One file's definitions.
#[derive(Clone, Debug)]
pub struct FileOutline {
    pub path: PathBuf,
    pub lang: Lang,
    pub defs: Vec<Definition>,
    /// Why the file has no definitions, when it could not be parsed.
    pub error: Option<FileError>,
}

/// The outline of `targets`: each file target, and for a directory target its supported
/// files (walked like `glob`, sorted by path). Files are parsed in path order, a batch at
/// a time, until `offset + limit` definitions are known; `Ok((files, total, more))` where
/// `total` is `Some` when every file was parsed.
pub fn outline(
    targets: &[PathBuf],
    kinds: &[String],
    offset: usize,
    limit: usize,
    threads: usize,
    control: &Control,
    abort: &AtomicUsize,
) -> Result<OutlineOutcome, SearchError> {
    let started = Instant::now();
    let mut files: Vec<(PathBuf, Lang)> = Vec::new();
    let mut capped = false;
    for target in targets {
        if target.is_dir() {
            let mut glob = search::GlobQuery::new("**");
            glob.types = rg_types(&[]);
            glob.limit = Some(MAX_CANDIDATES);
            glob.threads = threads;
            let found = search::glob(&glob, std::slice::from_ref(target), control)?;
            capped |= found.truncated;
            files.extend(
                found
                    .files
                    .into_iter()
                    .filter_map(|f| Lang::from_path(&f.path).map(|lang| (f.path, lang))),
            );
        } else if let Some(lang) = Lang::from_path(target) {
            files.push((target.clone(), lang));
        } else {
            return Err(SearchError::UnknownType {
                name: format!(
                    "{} (no symbols for this file type; supported: {})",
                    crate::roots::path_text(target),
                    supported_names()
                ),
                suggestions: Vec::new(),
            });
        }
    }
    let want = offset.saturating_add(limit.max(1));
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut done = 0usize;
    let mut stats = SymbolStats::default();
    let batch = (threads.max(1) * 8).max(16);
    while done < files.len() && seen <= want && !control.is_cancelled() {
        let chunk = &files[done..(done + batch).min(files.len())];
        let results = Mutex::new(Vec::new());
        parse_all(
            chunk,
            threads,
            control,
            abort,
            &mut stats,
            None,
            |path, lang, parsed| {
                let (defs, error) = match parsed {
                    Ok(defs) => (defs, None),
                    Err(err) => (Vec::new(), Some(err)),
                };
                results
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(FileOutline {
                        path: path.to_path_buf(),
                        lang,
                        defs,
                        error,
                    });
            },
        );
        let mut results = results
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        results.sort_by(|a: &FileOutline, b| crate::search::retain::path_cmp(&a.path, &b.path));
        for mut file in results {
            file.defs.retain(|d| kind_allowed_outline(kinds, d.kind));
            seen += file.defs.len();
            out.push(file);
        }
        done += chunk.len();
    }
    stats.candidates = files.len() as u64;
    stats.candidates_capped = capped;
    stats.elapsed = started.elapsed();
    Ok(OutlineOutcome {
        files: out,
        complete: done >= files.len() && !capped,
        stats,
        cancelled: control.is_cancelled(),
    })
}

/// The answer of [`outline`].
#[derive(Clone, Debug)]
pub struct OutlineOutcome {
    /// Parsed files in path order (files with no definitions included).
    pub files: Vec<FileOutline>,
    /// Every file was parsed (so the definition count is the total).
    pub complete: bool,
    pub stats: SymbolStats,
    pub cancelled: bool,
}

fn kind_allowed_outline(kinds: &[String], kind: &str) -> bool {
    // The outline shows `impl` blocks: they are what nests a type's methods.
    kinds.is_empty() || kind_allowed(kinds, kind)
}

// ---------------------------------------------------------------------------------------
// references

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
    index: Option<&FileIndex>,
    symbols: Option<&SymbolIndex>,
    kinds: &[String],
    offset: usize,
    limit: usize,
    threads: usize,
    control: &Control,
    abort: &AtomicUsize,
) -> Result<ReferenceOutcome, SearchError> {
    let started = Instant::now();
    let mut grep = GrepQuery::new(name);
    grep.fixed_strings = true;
    grep.word = true;
    grep.types = rg_types(&[]);
    grep.mode = OutputMode::Content;
    grep.threads = threads;
    let filtered = !kinds.is_empty();
    if filtered {
        grep.limit = Some(MAX_CANDIDATES);
        grep.max_filesize = Some(MAX_PARSE_BYTES as u64);
    } else {
        grep.offset = offset;
        grep.limit = Some(limit.max(1));
    }
    let outcome = match index {
        Some(index) => search::grep_indexed(&grep, targets, index, control)?,
        None => search::grep(&grep, targets, control)?,
    };
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
    let parsed = super::scope::definitions_of_files(
        matches.iter().map(|m| m.path.as_path()),
        symbols,
        threads,
        control,
        abort,
        &mut stats,
    );
    let mut entries: Vec<Reference> = matches
        .into_iter()
        .map(|m| {
            let (defs, unscoped) = match parsed.get(&m.path) {
                Some(Ok(defs)) => (Some(defs), None),
                Some(Err(FileError::TooLarge)) => (None, Some(Unscoped::TooLarge)),
                // A file of a supported language that was not parsed (unreadable, too
                // deep, or its parse stopped).
                _ if Lang::from_path(&m.path).is_some() => (None, Some(Unscoped::Unparsed)),
                _ => (None, None),
            };
            let enclosing = defs.and_then(|defs| super::scope::innermost(defs, m.line).cloned());
            let is_definition = defs
                .is_some_and(|defs| defs.iter().any(|d| d.name == name && d.name_line == m.line));
            Reference {
                path: m.path,
                line: m.line,
                column: m.column,
                text: m.text,
                enclosing,
                is_definition,
                unscoped,
            }
        })
        .collect();
    let mut unscoped_left_out = 0;
    let (total, next_offset) = if filtered {
        unscoped_left_out = entries.iter().filter(|r| r.unscoped.is_some()).count();
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
        entries = page;
        (total, (end < total).then_some(end))
    } else {
        (outcome.total, outcome.next_offset)
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
