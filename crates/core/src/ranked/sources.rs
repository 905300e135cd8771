//! The segments one query scores, each with the root its paths are relative to: a root's
//! base and update with what is current in them (`index/check.rs`), the stale files the
//! query indexes itself, the pre-filter's candidates read on the spot, and (without the
//! watcher's barrier) the page's files found changed on disk.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use super::build::{Indexer, lang_of};
use super::index::{MAX_ON_DEMAND, RankedIndex, RankedSnapshot};
use super::prefilter;
use super::request::{RankedRequest, RankedStats};
use super::segment::{Builder, Segment};
use crate::platform::os::OsStrExt;
use crate::symbols::{index::SymbolIndex, lang::Lang};

/// The segments of one answer, each with the root its paths are relative to.
pub(crate) struct Source {
    pub(crate) root: PathBuf,
    pub(crate) seg: Arc<Segment>,
    /// Per file: served (current, not replaced).
    pub(crate) live: Vec<bool>,
    /// Per file: served and kept by the request's filters.
    pub(crate) served: Vec<bool>,
    /// A root's base or update (what it holds may be older than the disk when the file
    /// index cannot prove it saw every change); not a segment read by this query.
    pub(crate) from_index: bool,
}

/// The search index's snapshots covering the targets, each with its targets; targets of a
/// root without one go to `unindexed`.
pub(crate) fn snapshots(
    index: Option<&RankedIndex>,
    targets: &[PathBuf],
    unindexed: &mut Vec<PathBuf>,
) -> Vec<(RankedSnapshot, Vec<PathBuf>)> {
    let mut out: Vec<(RankedSnapshot, Vec<PathBuf>)> = Vec::new();
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

pub(crate) fn unindexed_roots(
    index: Option<&RankedIndex>,
    targets: &[PathBuf],
    roots: &[PathBuf],
) -> Vec<(PathBuf, super::RankedState)> {
    let status = index.map(RankedIndex::status).unwrap_or_default();
    let mut out: Vec<(PathBuf, super::RankedState)> = Vec::new();
    for target in targets {
        let root = prefilter::root_for(target, roots);
        if out.iter().any(|(r, _)| *r == root) {
            continue;
        }
        let state = (status.iter())
            .find(|s| s.root == root)
            .map_or(super::RankedState::Unavailable("no index".into()), |s| {
                s.state.clone()
            });
        out.push((root, state));
    }
    out
}

/// Which files of `seg` (paths relative to `root`) the request keeps: under a target, of a
/// wanted language.
pub(crate) fn keep(seg: &Segment, root: &Path, targets: &[PathBuf], langs: &[Lang]) -> Vec<bool> {
    let rels: Vec<&Path> = targets
        .iter()
        .filter_map(|t| t.strip_prefix(root).ok())
        .collect();
    let everything = rels.iter().any(|r| r.as_os_str().is_empty());
    (0..seg.files().len())
        .map(|f| {
            let file = &seg.files()[f];
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
pub(crate) fn indexed_sources(
    snapshot: &RankedSnapshot,
    targets: &[PathBuf],
    request: &RankedRequest,
    symbols: Option<&SymbolIndex>,
    forced: &[&[u8]],
    (sources, stats): (&mut Vec<Source>, &mut RankedStats),
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
        indexer.add_to(&mut builder, file.rel, file.stamp());
    }
    stats.on_demand += wanted.len() as u64;
    let seg = builder.finish();
    sources.push(Source {
        root,
        live: vec![true; seg.files().len()],
        served: vec![true; seg.files().len()],
        seg: Arc::new(seg),
        from_index: false,
    });
}

impl Source {
    /// The same source for another round of ranking.
    pub(crate) fn again(&self) -> Source {
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
pub(crate) fn changed_on_disk(
    sources: &[Source],
    page: &[super::score::Scored],
) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for s in page {
        let source = &sources[s.part];
        if !source.from_index {
            continue;
        }
        let file = source.seg.docs()[s.doc as usize].file;
        let rel = source.seg.path(file);
        let path = source
            .root
            .join(Path::new(std::ffi::OsStr::from_bytes(rel)));
        let now = std::fs::symlink_metadata(&path)
            .ok()
            .map(|m| crate::index::stamp_of_meta(&m));
        let key = (source.root.clone(), rel.to_vec());
        let then = source.seg.files().get(file as usize).map(|f| f.stamp());
        if (now.is_none() || now != then) && !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

/// The pre-filter's candidates read into one segment per root.
pub(crate) fn prefiltered_sources(
    candidates: &[PathBuf],
    roots: &[PathBuf],
    request: &RankedRequest,
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
            live: vec![true; seg.files().len()],
            seg: Arc::new(seg),
            served,
            from_index: false,
        });
    }
}
