//! What a root's git history says about a query, as ranking reads it: the [`History`] a
//! `RankedIndex` is handed (implemented by `crate::history`, which stands above ranked
//! search) and its [`Votes`]. A module of its own, below the index and the re-ranking that
//! both use it.

use std::collections::HashMap;
use std::path::Path;

use super::terms::Query;

/// What a root's history says about queries (`crate::history::HistoryIndex`).
pub(crate) trait History: Send + Sync {
    /// The votes of `root`'s history for `query`; `None` when it has nothing current to
    /// say (no history, not read yet, or HEAD moved since).
    fn votes(&self, root: &Path, query: &Query) -> Option<Votes>;
}

/// What the history says about one query in one root.
#[derive(Debug, Default)]
pub(crate) struct Votes {
    /// Root-relative path → vote.
    pub(crate) files: HashMap<Box<[u8]>, f32>,
    /// Definition name → vote.
    pub(crate) names: HashMap<String, f32>,
}
