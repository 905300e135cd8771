//! `search`: a question in words in, the documents most likely to answer it out, ranked,
//! each with its excerpt. Each target's root is answered from its search index when it
//! has one (files changed since they were indexed are indexed here, at most
//! [`MAX_ON_DEMAND`](super::index::MAX_ON_DEMAND), else left out and counted); a root
//! without one is answered from the text pre-filter's candidates (`prefilter.rs`), and the
//! outcome says which roots those were. All parts are scored together on one scale.

use std::path::PathBuf;
use std::time::Instant;

use super::build::lang_of;
use super::docs::{KIND_NAMES, REGION};
use super::excerpt::excerpt;
use super::index::RankedIndex;
use super::index::RankedSnapshot;
use super::prefilter;
use super::request::{
    MAX_QUERY_BYTES, MAX_TERMS, RankedHit, RankedOutcome, RankedRequest, kind_ids,
};
use super::score::{Part, Scored, top};
use super::sources::{
    Source, changed_on_disk, indexed_sources, prefiltered_sources, snapshots, unindexed_roots,
};
use super::terms::{Query, parse_query, read_of_query};
use crate::platform::os::OsStringExt;
use crate::search::Indexes;
use crate::search::SearchError;
use crate::symbols::index::SymbolIndex;
use crate::walk::Control;

/// Runs `request` over `targets` (canonical, checked against the roots; `roots` are the
/// session's roots, for paths of files ranked without an index). Blocks; stops early
/// (with `cancelled`) when `control` is cancelled.
pub fn rank(
    request: &RankedRequest,
    targets: &[PathBuf],
    roots: &[PathBuf],
    files: Option<Indexes<'_>>,
    symbols: Option<&SymbolIndex>,
    index: Option<&RankedIndex>,
    control: &Control,
) -> Result<RankedOutcome, SearchError> {
    let started = Instant::now();
    let mut out = RankedOutcome::default();
    let (text, cut) = read_of_query(&request.query, MAX_QUERY_BYTES);
    out.query_cut = cut;
    let mut query = parse_query(text);
    if query.terms.is_empty() {
        out.no_terms = true;
        return Ok(out);
    }
    // Files and lines the query names; quoted messages are looked up literally, and the
    // lines holding them name definitions too.
    query.refs = super::refs::code_refs(text);
    let phrases = super::phrases::quoted(text);
    if !phrases.is_empty() {
        let threads = request.threads.max(1);
        let found = super::phrases::phrase_refs(&phrases, targets, roots, files, control, threads)?;
        query.refs.extend(found);
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
    let _running = crate::pool::pacing::SearchRunning::start();
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
    let history = index.and_then(RankedIndex::history);
    let ranking = Ranking {
        request,
        kinds: &kinds,
        symbols,
        check_disk: files.is_some_and(|f| !f.files.proves_freshness()),
        rerank: history.is_some(),
    };
    let (sources, mut scored, total) = ranking.rank(&snapshots, &prefiltered, &mut query, &mut out);
    if let Some(history) = history {
        super::rerank::rerank(history, &sources, &mut scored, &query);
    }
    out.total = total;
    for s in (scored.iter().skip(request.offset)).take(request.limit.max(1)) {
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

/// What one ranking reads besides its segments.
struct Ranking<'a> {
    request: &'a RankedRequest,
    kinds: &'a [u8],
    symbols: Option<&'a SymbolIndex>,
    /// No watcher barrier (macOS, Windows): a file saved a moment ago may not be reported
    /// yet, so the page's files are checked on disk, and any that changed are indexed now
    /// and the page ranked again (until twice the page has been read again).
    check_disk: bool,
    /// The history re-ranks the best results: score at least that many.
    rerank: bool,
}

impl Ranking<'_> {
    /// The sources scored, the page's documents (from the offset's start) and how many
    /// documents scored; the counts go to `out`.
    fn rank(
        &self,
        snapshots: &[(RankedSnapshot, Vec<PathBuf>)],
        prefiltered: &[Source],
        query: &mut Query,
        out: &mut RankedOutcome,
    ) -> (Vec<Source>, Vec<Scored>, usize) {
        let request = self.request;
        let page_end = request.offset.saturating_add(request.limit.max(1));
        let want = match self.rerank {
            true => page_end.max(super::rerank::RERANK),
            false => page_end,
        };
        let mut forced: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        loop {
            let mut sources = Vec::new();
            let mut stats = out.stats.clone();
            (stats.indexed_files, stats.on_demand, stats.left_out) = (0, 0, 0);
            for (snapshot, mine) in snapshots {
                let forced: Vec<&[u8]> = (forced.iter())
                    .filter(|(root, _)| root == snapshot.root())
                    .map(|(_, rel)| rel.as_slice())
                    .collect();
                let into = (&mut sources, &mut stats);
                indexed_sources(snapshot, mine, request, self.symbols, &forced, into);
            }
            sources.extend(prefiltered.iter().map(Source::again));
            let parts: Vec<Part> = (sources.iter())
                .map(|s| Part {
                    seg: &s.seg,
                    live: s.live.clone(),
                    files: s.served.clone(),
                    kinds: self.kinds,
                })
                .collect();
            stats.documents = sources.iter().map(|s| s.seg.docs().len() as u64).sum();
            out.terms_dropped = prune(query, &parts);
            let (scored, total) = top(&parts, query, want);
            drop(parts);
            out.stats = stats;
            let again = self.check_disk && forced.len() < 2 * page_end;
            let changed = match again {
                true => changed_on_disk(&sources, &scored[request.offset.min(scored.len())..]),
                false => Vec::new(),
            };
            if changed.is_empty() {
                return (sources, scored, total);
            }
            forced.extend(changed);
        }
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

fn hit(source: &Source, doc: u32, score: f32, query: &Query) -> RankedHit {
    let seg = &source.seg;
    let d = &seg.docs()[doc as usize];
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
    RankedHit {
        line: u64::from(d.line),
        end_line: u64::from(d.end_line),
        kind: KIND_NAMES.get(d.kind as usize).copied().unwrap_or(REGION),
        name: (!name.is_empty()).then(|| name.to_string()),
        container: container.map(str::to_string),
        lang: lang_of(seg.files().get(d.file as usize).map_or(u8::MAX, |f| f.lang)),
        score,
        matched,
        lines: excerpt.lines,
        omitted: excerpt.omitted,
        path,
    }
}
