//! [`Control`]: the only state shared between a running search and the outside world.
//!
//! The caller keeps it (typically in an `Arc`), flips `cancelled` when the request is
//! cancelled, and reads the counters to report progress. The search checks the flag once
//! per file, per matched or context line, and per read from a file, so a cancel stops the
//! work within one buffer read. All accesses are `Relaxed`: the counters are advisory
//! progress figures and the flag needs no ordering with other memory.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Cancellation flag and progress counters for one search.
#[derive(Debug, Default)]
pub struct Control {
    /// Set to stop the search; it then returns promptly with `cancelled: true`.
    pub cancelled: AtomicBool,
    /// Files the search has looked at so far (searched or skipped). Only ever grows.
    pub files_examined: AtomicU64,
    /// Matching lines seen so far. Only ever grows (matches later dropped because their
    /// file turned out to be binary stay counted).
    pub matches: AtomicU64,
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the search to stop.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    pub fn files_examined(&self) -> u64 {
        self.files_examined.load(Ordering::Relaxed)
    }

    pub fn matches(&self) -> u64 {
        self.matches.load(Ordering::Relaxed)
    }

    pub(crate) fn file_examined(&self) {
        self.files_examined.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn matched(&self) {
        self.matches.fetch_add(1, Ordering::Relaxed);
    }
}
