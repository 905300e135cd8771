//! `symbols`: definitions by name. The query (`Container::name` filters on the container)
//! is matched with smart case in tiers, best first: exact, prefix, substring, and only when
//! no name contains it, fuzzy (its letters in order). It is answered from the symbol
//! index's snapshots when they cover the targets, else by pre-filtering the files with
//! the search engine and parsing the candidates; the page is ranked by tier, closeness and
//! path, and an answer from memory gets its signatures read back from the files.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::matching::{Located, MAX_CANDIDATES, kind_allowed, same_name, split_qualified};
use crate::files::read::{Whole, read_whole};
use crate::mutex::lock;
use crate::search::Indexes;
use crate::search::{self, CaseMode, GrepEntries, GrepQuery, OutputMode, SearchError};
use crate::symbols::extract::{Definition, LineIndex, MAX_PARSE_BYTES, Signatures};
use crate::symbols::index::{Lookup, Snapshot, SymbolIndex};
use crate::symbols::lang::{Lang, rg_types};
use crate::symbols::parse::{Sieve, SymbolStats, parse_all};
use crate::walk::Control;

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

/// Finds definitions by name under `targets` (canonical paths already checked against the
/// roots). Blocks; stops early (with `cancelled`) when `control` is cancelled, and
/// `abort` (set by the caller together with `control`) interrupts a parse in progress.
pub fn find_symbols(
    query: &SymbolQuery,
    targets: &[PathBuf],
    index: Option<Indexes<'_>>,
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
    index: Option<Indexes<'_>>,
    symbols: Option<&SymbolIndex>,
    control: &Control,
    abort: &AtomicUsize,
) -> Result<SymbolOutcome, SearchError> {
    let started = Instant::now();
    // Before counting as a search (the restart's walk must not step aside for this wait).
    if let Some(symbols) = symbols {
        symbols.await_restored(targets, || control.is_cancelled());
    }
    // A query is foreground work: the index build steps aside while it runs.
    let _running = crate::pool::pacing::SearchRunning::start();
    let finder = Finder::new(query, targets, index, symbols, control, abort);
    let mut stats = SymbolStats::default();
    let mut found = finder.first_pass(&mut stats)?;
    let mut fuzzy = false;
    if found.is_empty() && !finder.exact && !control.is_cancelled() {
        fuzzy = true;
        found = finder.second_pass(&mut stats)?;
    }
    rank(&mut found, finder.name, &finder.matcher);
    let total = found.len();
    let mut entries: Vec<_> = found
        .into_iter()
        .skip(query.offset)
        .take(query.limit.max(1))
        .collect();
    if finder.indexed.is_some() {
        fill_signatures(&mut entries);
    }
    let end = query.offset + entries.len();
    stats.elapsed = started.elapsed();
    Ok(SymbolOutcome {
        next_offset: (end < total).then_some(end),
        entries,
        total,
        fuzzy,
        whole_names_only: finder.whole_names_only,
        stats,
        cancelled: control.is_cancelled(),
    })
}

/// One query as its passes read it: the name and container asked for, how names match,
/// and where the answer comes from (the symbol index's snapshots, or the files).
struct Finder<'a> {
    query: &'a SymbolQuery,
    targets: &'a [PathBuf],
    index: Option<Indexes<'a>>,
    control: &'a Control,
    abort: &'a AtomicUsize,
    /// The symbol index's snapshots covering every target, when it can answer now.
    indexed: Option<Vec<(Snapshot, Vec<PathBuf>)>>,
    /// The `Container` of `Container::name`.
    container: Option<&'a str>,
    name: &'a str,
    /// Smart case: the name has no uppercase letter.
    insensitive: bool,
    matcher: NameMatcher,
    /// A one-character query would make nearly every file a candidate for prefixes of no
    /// use: it looks for that exact name only.
    whole_names_only: bool,
    /// Only names equal to the query (asked for, or `whole_names_only`).
    exact: bool,
}

impl<'a> Finder<'a> {
    fn new(
        query: &'a SymbolQuery,
        targets: &'a [PathBuf],
        index: Option<Indexes<'a>>,
        symbols: Option<&SymbolIndex>,
        control: &'a Control,
        abort: &'a AtomicUsize,
    ) -> Finder<'a> {
        let indexed = symbols.and_then(|symbols| snapshots_for(symbols, targets));
        let (container, name) = split_qualified(query.query.trim());
        let insensitive = !name.chars().any(char::is_uppercase);
        let whole_names_only = !query.exact && name.chars().count() < 2;
        Finder {
            query,
            targets,
            index,
            control,
            abort,
            indexed,
            container,
            name,
            insensitive,
            matcher: NameMatcher::new(name, insensitive),
            whole_names_only,
            exact: query.exact || whole_names_only,
        }
    }

    /// Whether a definition passes the query's kind, language and container filters.
    fn keeps(&self, located: &Located) -> bool {
        kind_allowed(&self.query.kinds, located.def.kind)
            && (self.query.langs.is_empty() || self.query.langs.contains(&located.lang))
            && self.container.is_none_or(|c| {
                located
                    .def
                    .container
                    .as_deref()
                    .is_some_and(|have| same_name(have, c, self.insensitive))
            })
    }

    /// Names equal to or starting with the query (only equal ones when `exact`).
    fn first_pass(&self, stats: &mut SymbolStats) -> Result<Vec<(Tier, Located)>, SearchError> {
        let name = self.name;
        let insensitive = self.insensitive;
        let exact = self.exact;
        let keep = |located: &Located| self.keeps(located);
        let first_tier = |def: &Definition| {
            self.matcher
                .tier(&def.name, exact)
                .filter(|t| *t <= Tier::Prefix)
        };
        if let Some(snapshots) = &self.indexed {
            let lowered = if insensitive {
                name.to_lowercase()
            } else {
                name.to_string()
            };
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
            return Ok(from_index(snapshots, lookup, &first_tier, &keep, stats));
        }
        // The pre-filter wants the query at the start of a word (most files mentioning a
        // name only call it; fewer candidates is what keeps a first query on a large tree
        // fast).
        let literal = regex_escape(name);
        let folded = if insensitive {
            name.to_ascii_lowercase()
        } else {
            name.to_string()
        };
        let word_start = name.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        let pattern = match (exact, word_start) {
            (true, true) => format!(r"\b{literal}\b"),
            (false, true) => format!(r"\b{literal}"),
            (_, false) => literal,
        };
        self.collect(
            &pattern,
            insensitive,
            stats,
            // C/C++ files where no line could define the name are not parsed.
            word_start.then_some(Sieve {
                needle: &folded,
                insensitive,
            }),
            first_tier,
            &keep,
        )
    }

    /// When no name starts with the query: names containing it, then names holding its
    /// letters in order.
    fn second_pass(&self, stats: &mut SymbolStats) -> Result<Vec<(Tier, Located)>, SearchError> {
        let keep = |located: &Located| self.keeps(located);
        let second_tier = |def: &Definition| {
            self.matcher
                .tier(&def.name, false)
                .or_else(|| self.matcher.fuzzy(&def.name).map(|_| Tier::Fuzzy))
        };
        if let Some(snapshots) = &self.indexed {
            // The same pass over the names in memory.
            let scan =
                |n: &str| self.matcher.tier(n, false).is_some() || self.matcher.fuzzy(n).is_some();
            return Ok(from_index(
                snapshots,
                Lookup::Scan(&scan),
                &second_tier,
                &keep,
                stats,
            ));
        }
        // This pass's pattern matches every text the first one did, so its files are all
        // the files the answer looked at: its counts replace the first pass's, which
        // would otherwise count a file twice (a file over 1 MiB was "skipped 2"). The
        // pre-filter regex accepts both kinds of names.
        *stats = SymbolStats::default();
        let pattern = self
            .name
            .chars()
            .map(|c| regex_escape(&c.to_string()))
            .collect::<Vec<_>>()
            .join(r"\w*");
        self.collect(&pattern, self.insensitive, stats, None, second_tier, &keep)
    }
}

/// The page's order: by tier; an exact name spelled as the query before one matching
/// only by case, a shorter name before a longer (closer to the query); fuzzy matches by
/// the span their letters cover; then by path and line.
fn rank(found: &mut [(Tier, Located)], name: &str, matcher: &NameMatcher) {
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

impl Finder<'_> {
    /// Pre-filters with `pattern`, parses the candidates and keeps the definitions `tier`
    /// accepts and `keep` allows.
    fn collect(
        &self,
        pattern: &str,
        insensitive: bool,
        stats: &mut SymbolStats,
        sieve: Option<Sieve<'_>>,
        tier: impl Fn(&Definition) -> Option<Tier> + Sync,
        keep: &(impl Fn(&Located) -> bool + Sync),
    ) -> Result<Vec<(Tier, Located)>, SearchError> {
        let (query, targets, index) = (self.query, self.targets, self.index);
        let (control, abort) = (self.control, self.abort);
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
                    lock(&found).extend(mine);
                }
            },
        );
        Ok(found
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

/// Files of a supported language under `targets` with a line matching `pattern`.
#[allow(clippy::too_many_arguments)]
fn candidates(
    pattern: &str,
    insensitive: bool,
    langs: &[Lang],
    targets: &[PathBuf],
    index: Option<Indexes<'_>>,
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
    let outcome = search::grep_with(&grep, targets, index, control)?;
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
