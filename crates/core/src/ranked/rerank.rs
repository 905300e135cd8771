//! A query's best results re-ranked with what the roots' git history says about it
//! (`crate::history`): the past commits whose messages are most like the query vote for
//! the files they changed and for the names their diffs touched, and each of the first
//! [`RERANK`] results gains in proportion to its file's and its name's votes (each
//! divided by the largest among those results). Chosen on the development sets of issue
//! #39 (BENCHMARKS.md): the weights are the prototype's best there, kept as measured.
//!
//! The history itself stands above this module (it reads terms as `search` does): it is
//! handed in as a [`History`](super::votes::History).

use std::collections::HashMap;
use std::path::Path;

use super::score::Scored;
use super::sources::Source;
use super::terms::Query;
use super::votes::{History, Votes};

/// Results re-ranked (the rest keep their order after them).
pub(crate) const RERANK: usize = 50;
/// What the file's votes add at most (×1.25).
const FILE_WEIGHT: f32 = 0.25;
/// What the name's votes add at most (×1.25).
const NAME_WEIGHT: f32 = 0.25;

/// Re-ranks the first [`RERANK`] of `scored` (best first) with `history` (unchanged where
/// no root has history to say something).
pub(crate) fn rerank(
    history: &dyn History,
    sources: &[Source],
    scored: &mut [Scored],
    query: &Query,
) {
    let n = scored.len().min(RERANK);
    if n < 2 {
        return;
    }
    let mut by_root: HashMap<&Path, Option<Votes>> = HashMap::new();
    for s in &scored[..n] {
        let root = sources[s.part].root.as_path();
        by_root
            .entry(root)
            .or_insert_with(|| history.votes(root, query));
    }
    if by_root.values().all(Option::is_none) {
        return;
    }
    let votes_of = |s: &Scored| -> (f32, f32) {
        let source = &sources[s.part];
        let Some(Some(votes)) = by_root.get(source.root.as_path()) else {
            return (0.0, 0.0);
        };
        let doc = &source.seg.docs()[s.doc as usize];
        let file = votes.files.get(source.seg.path(doc.file)).copied();
        let name = votes.names.get(source.seg.name(doc)).copied();
        (file.unwrap_or(0.0), name.unwrap_or(0.0))
    };
    let found: Vec<(f32, f32)> = scored[..n].iter().map(votes_of).collect();
    let most = |pick: fn(&(f32, f32)) -> f32| {
        found
            .iter()
            .map(pick)
            .fold(0.0f32, f32::max)
            .max(f32::MIN_POSITIVE)
    };
    let (most_file, most_name) = (most(|v| v.0), most(|v| v.1));
    for (s, (file, name)) in scored[..n].iter_mut().zip(found) {
        s.score *= 1.0 + FILE_WEIGHT * file / most_file + NAME_WEIGHT * name / most_name;
    }
    // Stable: results the history says nothing of keep their order among themselves.
    scored[..n].sort_by(|a, b| b.score.total_cmp(&a.score));
}
