//! `search`: a question in words in, the documents most likely to answer it out, ranked,
//! each with its excerpt. Each target's root is answered from its search index when it
//! has one (files changed since they were indexed are indexed here, at most
//! [`MAX_ON_DEMAND`](super::index::MAX_ON_DEMAND), else left out and counted); a root
//! without one is answered from the text pre-filter's candidates (`prefilter.rs`), and the
//! outcome says which roots those were. All parts are scored together on one scale.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use super::build::{Indexer, lang_of};
use super::docs::{KIND_NAMES, REGION};
use super::excerpt::excerpt;
use super::index::{MAX_ON_DEMAND, SearchIndex, SearchSnapshot};
use super::prefilter;
use super::score::{Part, top};
use super::segment::{Builder, Segment, stamp_of};
use super::terms::{Query, parse_query};
use crate::files::os::{OsStrExt, OsStringExt};
use crate::index::FileIndex;
use crate::search::{Control, SearchError};
use crate::symbols::{Lang, SymbolIndex};

/// Bytes of a query read at most (a pasted log is cut there, and said).
pub const MAX_QUERY_BYTES: usize = 64 * 1024;
/// Distinct query terms scored at most: the rarest are kept.
pub const MAX_TERMS: usize = 256;

/// A `search` request.
#[derive(Clone, Debug, Default)]
pub struct SearchRequest {
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
pub struct SearchHit {
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
pub struct SearchStats {
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

/// The answer to a [`SearchRequest`].
#[derive(Clone, Debug, Default)]
pub struct SearchOutcome {
    pub hits: Vec<SearchHit>,
    /// Documents holding a query term (within the filters).
    pub total: usize,
    pub next_offset: Option<usize>,
    /// The query holds no word to search for (only punctuation or numbers).
    pub no_terms: bool,
    /// The query was longer than [`MAX_QUERY_BYTES`]: the rest was not read.
    pub query_cut: bool,
    /// Distinct terms beyond [`MAX_TERMS`] left out (the most common ones).
    pub terms_dropped: usize,
    /// Roots answered without an index (building, not watched), with the index's state.
    pub unindexed: Vec<(PathBuf, super::SearchState)>,
    pub stats: SearchStats,
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

/// The segments of one answer, each with the root its paths are relative to.
struct Source {
    root: PathBuf,
    seg: Arc<Segment>,
    /// Per file: served (current, not replaced).
    live: Vec<bool>,
    /// Per file: served and kept by the request's filters.
    served: Vec<bool>,
    /// A root's base or update (what it holds may be older than the disk when the file
    /// index cannot prove it saw every change); not a segment read by this query.
    from_index: bool,
}

/// Runs `request` over `targets` (canonical, checked against the roots; `roots` are the
/// session's roots, for paths of files ranked without an index). Blocks; stops early
/// (with `cancelled`) when `control` is cancelled.
pub fn search(
    request: &SearchRequest,
    targets: &[PathBuf],
    roots: &[PathBuf],
    files: Option<&FileIndex>,
    symbols: Option<&SymbolIndex>,
    index: Option<&SearchIndex>,
    control: &Control,
) -> Result<SearchOutcome, SearchError> {
    let started = Instant::now();
    let mut out = SearchOutcome::default();
    let text = cut_query(&request.query, &mut out.query_cut);
    let mut query = parse_query(text);
    if query.terms.is_empty() {
        out.no_terms = true;
        return Ok(out);
    }
    let kinds: Vec<u8> = request
        .kinds
        .iter()
        .filter_map(|k| kind_ids(k))
        .flatten()
        .collect();
    if let Some(index) = index {
        index.await_restored(targets, || control.is_cancelled());
    }
    // Foreground work: the index builds step aside while it runs.
    let _running = crate::walk::SearchRunning::start();
    let mut unindexed_targets = Vec::new();
    let snapshots = snapshots(index, targets, &mut unindexed_targets);
    let mut prefiltered = Vec::new();
    if !unindexed_targets.is_empty() && !control.is_cancelled() {
        out.unindexed = unindexed_roots(index, &unindexed_targets, roots);
        let (candidates, matching) = prefilter::candidates(
            &query,
            &unindexed_targets,
            files,
            control,
            request.threads.max(1),
        )?;
        out.stats.matching = matching as u64;
        out.stats.candidates = candidates.len() as u64;
        prefiltered_sources(&candidates, roots, request, &mut prefiltered);
    }
    // Without the watcher's barrier (macOS, Windows) a file saved a moment ago may not be
    // reported yet: the page's files are checked on disk, and any that changed are indexed
    // now and the page ranked again (twice at most).
    let check_disk = files.is_some_and(|f| !f.proves_freshness());
    let mut forced: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let want = request.offset.saturating_add(request.limit.max(1));
    let (sources, scored, total) = loop {
        let mut sources = Vec::new();
        let mut stats = out.stats.clone();
        (stats.indexed_files, stats.on_demand, stats.left_out) = (0, 0, 0);
        for (snapshot, mine) in &snapshots {
            let forced: Vec<&[u8]> = (forced.iter())
                .filter(|(root, _)| root == snapshot.root())
                .map(|(_, rel)| rel.as_slice())
                .collect();
            indexed_sources(
                snapshot,
                mine,
                request,
                symbols,
                &forced,
                &mut sources,
                &mut stats,
            );
        }
        sources.extend(prefiltered.iter().map(Source::again));
        let parts: Vec<Part> = sources
            .iter()
            .map(|s| Part {
                seg: &s.seg,
                live: s.live.clone(),
                files: s.served.clone(),
                kinds: &kinds,
            })
            .collect();
        stats.documents = sources.iter().map(|s| s.seg.docs.len() as u64).sum();
        out.terms_dropped = prune(&mut query, &parts);
        let (scored, total) = top(&parts, &query, want);
        drop(parts);
        out.stats = stats;
        let changed = match check_disk && forced.len() < 2 * want {
            true => changed_on_disk(&sources, &scored[request.offset.min(scored.len())..]),
            false => Vec::new(),
        };
        if changed.is_empty() || forced.len() >= 2 * want {
            break (sources, scored, total);
        }
        forced.extend(changed);
    };
    out.total = total;
    for s in scored.iter().skip(request.offset) {
        if control.is_cancelled() {
            break;
        }
        out.hits.push(hit(&sources[s.part], s.doc, s.score, &query));
    }
    let end = request.offset + out.hits.len();
    out.next_offset = (end < total).then_some(end);
    out.cancelled = control.is_cancelled();
    out.stats.elapsed = started.elapsed();
    Ok(out)
}

fn cut_query<'a>(text: &'a str, cut: &mut bool) -> &'a str {
    if text.len() <= MAX_QUERY_BYTES {
        return text;
    }
    *cut = true;
    let mut end = MAX_QUERY_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The search index's snapshots covering the targets, each with its targets; targets of a
/// root without one go to `unindexed`.
fn snapshots(
    index: Option<&SearchIndex>,
    targets: &[PathBuf],
    unindexed: &mut Vec<PathBuf>,
) -> Vec<(SearchSnapshot, Vec<PathBuf>)> {
    let mut out: Vec<(SearchSnapshot, Vec<PathBuf>)> = Vec::new();
    for target in targets {
        if let Some((_, mine)) = out.iter_mut().find(|(s, _)| target.starts_with(s.root())) {
            mine.push(target.clone());
            continue;
        }
        let snapshot = index.and_then(|i| i.snapshot(&i.root_of(target)?));
        match snapshot {
            Some(snapshot) => out.push((snapshot, vec![target.clone()])),
            None => unindexed.push(target.clone()),
        }
    }
    out
}

fn unindexed_roots(
    index: Option<&SearchIndex>,
    targets: &[PathBuf],
    roots: &[PathBuf],
) -> Vec<(PathBuf, super::SearchState)> {
    let status = index.map(SearchIndex::status).unwrap_or_default();
    let mut out: Vec<(PathBuf, super::SearchState)> = Vec::new();
    for target in targets {
        let root = prefilter::root_for(target, roots);
        if out.iter().any(|(r, _)| *r == root) {
            continue;
        }
        let state = (status.iter())
            .find(|s| s.root == root)
            .map_or(super::SearchState::Unavailable("no index".into()), |s| {
                s.state.clone()
            });
        out.push((root, state));
    }
    out
}

/// Which files of `seg` (paths relative to `root`) the request keeps: under a target, of a
/// wanted language.
fn keep(seg: &Segment, root: &Path, targets: &[PathBuf], langs: &[Lang]) -> Vec<bool> {
    let rels: Vec<&Path> = targets
        .iter()
        .filter_map(|t| t.strip_prefix(root).ok())
        .collect();
    let everything = rels.iter().any(|r| r.as_os_str().is_empty());
    (0..seg.files.len())
        .map(|f| {
            let file = &seg.files[f];
            let lang_ok =
                langs.is_empty() || lang_of(file.lang).is_some_and(|l| langs.contains(&l));
            lang_ok
                && (everything || {
                    let path = Path::new(std::ffi::OsStr::from_bytes(seg.path(f as u32)));
                    rels.iter().any(|r| path.starts_with(r))
                })
        })
        .collect()
}

/// The base and update of one indexed root, and a segment of its stale files indexed now.
fn indexed_sources(
    snapshot: &SearchSnapshot,
    targets: &[PathBuf],
    request: &SearchRequest,
    symbols: Option<&SymbolIndex>,
    forced: &[&[u8]],
    sources: &mut Vec<Source>,
    stats: &mut SearchStats,
) {
    let root = snapshot.root().to_path_buf();
    let mut add = |seg: &Arc<Segment>, live: &[bool]| {
        let mut mask = keep(seg, &root, targets, &request.langs);
        for (m, s) in mask.iter_mut().zip(live) {
            *m &= *s;
        }
        let mut live = live.to_vec();
        // Files found changed on disk are served from this query's reading instead.
        for (file, (l, m)) in live.iter_mut().zip(mask.iter_mut()).enumerate() {
            if *l && !forced.is_empty() && forced.contains(&seg.path(file as u32)) {
                (*l, *m) = (false, false);
            }
        }
        stats.indexed_files += mask.iter().filter(|m| **m).count() as u64;
        sources.push(Source {
            root: root.clone(),
            seg: seg.clone(),
            live,
            served: mask,
            from_index: true,
        });
    };
    add(&snapshot.base, &snapshot.check.base);
    if let Some(update) = &snapshot.update {
        add(update, &snapshot.check.update);
    }
    let mut stale = snapshot.check.stale.clone();
    stale.extend((forced.iter()).filter_map(|rel| {
        snapshot
            .files
            .find_file(Path::new(std::ffi::OsStr::from_bytes(rel)))
    }));
    let wanted: Vec<usize> = (stale.iter().copied())
        .filter(|&id| {
            let file = snapshot.files.file(id);
            let abs = root.join(file.rel);
            targets.iter().any(|t| abs.starts_with(t))
                && (request.langs.is_empty()
                    || Lang::from_path(file.rel).is_some_and(|l| request.langs.contains(&l)))
        })
        .collect();
    let budget = MAX_ON_DEMAND.saturating_sub(stats.on_demand as usize);
    if wanted.len() > budget {
        stats.left_out += wanted.len() as u64;
        return;
    }
    if wanted.is_empty() {
        return;
    }
    let symbol_snapshot = symbols.and_then(|s| s.snapshot(&root));
    let abort = AtomicUsize::new(0);
    let mut indexer = Indexer::new(&root, symbol_snapshot.as_ref(), &abort);
    let mut builder = Builder::default();
    for &id in &wanted {
        let file = snapshot.files.file(id);
        indexer.add_to(&mut builder, file.rel, stamp_of(&file));
    }
    stats.on_demand += wanted.len() as u64;
    let seg = builder.finish();
    sources.push(Source {
        root,
        live: vec![true; seg.files.len()],
        served: vec![true; seg.files.len()],
        seg: Arc::new(seg),
        from_index: false,
    });
}

impl Source {
    /// The same source for another round of ranking.
    fn again(&self) -> Source {
        Source {
            root: self.root.clone(),
            seg: self.seg.clone(),
            live: self.live.clone(),
            served: self.served.clone(),
            from_index: self.from_index,
        }
    }
}

/// The files of `page` served from an index whose size, mtime or identity on disk is not
/// the one indexed (root, relative path), each once.
fn changed_on_disk(sources: &[Source], page: &[super::score::Scored]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for s in page {
        let source = &sources[s.part];
        if !source.from_index {
            continue;
        }
        let file = source.seg.docs[s.doc as usize].file;
        let rel = source.seg.path(file);
        let path = source
            .root
            .join(Path::new(std::ffi::OsStr::from_bytes(rel)));
        let now = std::fs::symlink_metadata(&path)
            .ok()
            .map(|m| super::segment::stamp_of_meta(&m));
        let key = (source.root.clone(), rel.to_vec());
        if now != Some(source.seg.files[file as usize].stamp) && !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

/// The pre-filter's candidates read into one segment per root.
fn prefiltered_sources(
    candidates: &[PathBuf],
    roots: &[PathBuf],
    request: &SearchRequest,
    sources: &mut Vec<Source>,
) {
    let mut by_root: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
    for path in candidates {
        let root = prefilter::root_for(path, roots);
        let Ok(rel) = path.strip_prefix(&root) else {
            continue;
        };
        let rel = rel.to_path_buf();
        match by_root.iter_mut().find(|(r, _)| *r == root) {
            Some((_, rels)) => rels.push(rel),
            None => by_root.push((root, vec![rel])),
        }
    }
    for (root, mut rels) in by_root {
        rels.sort_by(|a, b| {
            crate::index::cmp_paths(a.as_os_str().as_bytes(), b.as_os_str().as_bytes())
        });
        let abort = AtomicUsize::new(0);
        let mut indexer = Indexer::new(&root, None, &abort);
        let mut builder = Builder::default();
        for rel in &rels {
            let size = std::fs::symlink_metadata(root.join(rel)).map_or(0, |m| m.len());
            indexer.add_to(&mut builder, rel, (size, 0, 0));
        }
        let seg = builder.finish();
        let served = keep(&seg, &root, std::slice::from_ref(&root), &request.langs);
        sources.push(Source {
            root,
            live: vec![true; seg.files.len()],
            seg: Arc::new(seg),
            served,
            from_index: false,
        });
    }
}

/// Keeps the [`MAX_TERMS`] rarest terms of a long query; returns how many were dropped.
fn prune(query: &mut Query, parts: &[Part]) -> usize {
    if query.terms.len() <= MAX_TERMS {
        return 0;
    }
    let df = |t: u64| -> u64 { parts.iter().map(|p| u64::from(p.seg.df(t))).sum() };
    let mut ranked: Vec<(u64, usize)> = (query.terms.iter().enumerate())
        .map(|(i, t)| (df(t.term), i))
        .collect();
    ranked.sort_unstable();
    let mut keep = vec![false; query.terms.len()];
    for &(_, i) in ranked.iter().take(MAX_TERMS) {
        keep[i] = true;
    }
    let before = query.terms.len();
    let mut at = 0;
    query.terms.retain(|_| {
        at += 1;
        keep[at - 1]
    });
    before - query.terms.len()
}

fn hit(source: &Source, doc: u32, score: f32, query: &Query) -> SearchHit {
    let seg = &source.seg;
    let d = &seg.docs[doc as usize];
    let rel = seg.path(d.file);
    let path = source.root.join(std::ffi::OsString::from_vec(rel.to_vec()));
    let name = seg.name(d);
    let container = seg.container(d);
    let extra = format!(
        "{name} {} {}",
        container.unwrap_or(""),
        String::from_utf8_lossy(rel)
    );
    let (excerpt, matched) = excerpt(
        &path,
        u64::from(d.line),
        u64::from(d.end_line),
        query,
        &extra,
    )
    .unwrap_or_default();
    SearchHit {
        line: u64::from(d.line),
        end_line: u64::from(d.end_line),
        kind: KIND_NAMES.get(d.kind as usize).copied().unwrap_or(REGION),
        name: (!name.is_empty()).then(|| name.to_string()),
        container: container.map(str::to_string),
        lang: lang_of(seg.files[d.file as usize].lang),
        score,
        matched,
        lines: excerpt.lines,
        omitted: excerpt.omitted,
        path,
    }
}
