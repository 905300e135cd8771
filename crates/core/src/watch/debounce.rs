//! The debouncer: a burst of events at one path becomes one settled event once the path
//! has been quiet for [`QUIET`] (or [`MAX_DELAY`] after the burst began). Plain data with
//! the time handed in (`now`), so it is tested without a clock or a watcher.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A path is settled once it has had no event for this long.
pub(crate) const QUIET: Duration = Duration::from_millis(100);
/// A path that keeps changing is still reported at least this often.
pub(crate) const MAX_DELAY: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(super) struct Burst {
    pub(super) started: Instant,
    pub(super) last: Instant,
    /// A create, delete or rename was seen (not only content changes).
    pub(super) structural: bool,
}

/// The bursts in flight.
#[derive(Default)]
pub(super) struct Debouncer {
    bursts: HashMap<PathBuf, Burst>,
    /// When bursts may be due, earliest first: one entry per burst, pushed when it starts
    /// and pushed again (later) when it is found not due yet, so that neither finding the
    /// next due time nor flushing looks at every burst in flight (thousands, while a build
    /// writes). An entry is never later than its burst's due time (a burst's due time only
    /// moves later); entries of bursts dropped meanwhile are skipped.
    due: BinaryHeap<Reverse<(Instant, PathBuf)>>,
    /// A burst began since the last [`Debouncer::take_quiet`].
    announced: bool,
}

impl Debouncer {
    /// An event at `path` at `now` (`structural`: a create, delete or rename). True when it
    /// begins a burst (the caller announces it as `Pending`).
    pub(super) fn record(&mut self, path: &Path, structural: bool, now: Instant) -> bool {
        let fresh = !self.bursts.contains_key(path);
        let burst = self.bursts.entry(path.to_path_buf()).or_insert(Burst {
            started: now,
            last: now,
            structural: false,
        });
        burst.last = now;
        burst.structural |= structural;
        if fresh {
            // Queued by its due time like every burst, or it would never be flushed.
            self.due.push(Reverse((due(burst), path.to_path_buf())));
            self.announced = true;
        }
        fresh
    }

    /// When the earliest burst may be due. It may be early (its burst went on): taking
    /// then re-queues it.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.due.peek().map(|Reverse((at, _))| *at)
    }

    /// The bursts due now, taken out of `bursts`; the others stay queued at their due time.
    pub(super) fn take_due(&mut self, now: Instant) -> Vec<(PathBuf, Burst)> {
        let mut ready = Vec::new();
        while let Some(Reverse((at, _))) = self.due.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((_, path))) = self.due.pop() else {
                break;
            };
            let Some(burst) = self.bursts.get(&path) else {
                continue; // dropped with its root
            };
            let at = due(burst);
            match at <= now {
                true => {
                    let burst = self.bursts.remove(&path).expect("found above");
                    ready.push((path, burst));
                }
                false => self.due.push(Reverse((at, path))),
            }
        }
        if self.bursts.is_empty() {
            self.due.clear();
        }
        ready
    }

    /// True (once) when no burst is in flight and one began since the last call: the
    /// caller says `Quiet`.
    pub(super) fn take_quiet(&mut self) -> bool {
        let quiet = self.bursts.is_empty() && self.announced;
        if quiet {
            self.announced = false;
        }
        quiet
    }

    /// Whether a creation, deletion or rename at `path` is in flight.
    pub(super) fn is_structural(&self, path: &Path) -> bool {
        self.bursts.get(path).is_some_and(|burst| burst.structural)
    }

    /// Drops the bursts outside `roots` (no longer watched).
    pub(super) fn keep_under(&mut self, roots: &[PathBuf]) {
        self.bursts
            .retain(|path, _| roots.iter().any(|root| path.starts_with(root)));
    }
}

fn due(burst: &Burst) -> Instant {
    (burst.last + QUIET).min(burst.started + MAX_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_burst_settles_once_its_path_has_been_quiet() {
        let t0 = Instant::now();
        let mut bursts = Debouncer::default();
        assert!(
            bursts.record(Path::new("/r/a"), false, t0),
            "begins a burst"
        );
        assert!(
            !bursts.record(Path::new("/r/a"), true, t0 + ms(50)),
            "goes on"
        );
        assert_eq!(
            bursts.next_due(),
            Some(t0 + QUIET),
            "early: re-queued when taken"
        );
        assert!(
            bursts.take_due(t0 + QUIET).is_empty(),
            "the last event was at 50 ms"
        );
        assert!(!bursts.take_quiet());
        let ready = bursts.take_due(t0 + ms(50) + QUIET);
        assert_eq!(ready.len(), 1);
        assert!(ready[0].1.structural, "a create, delete or rename was seen");
        assert!(bursts.take_quiet(), "then quiet, once");
        assert!(!bursts.take_quiet());
        assert_eq!(bursts.next_due(), None);
    }

    #[test]
    fn a_path_that_keeps_changing_is_still_reported() {
        let t0 = Instant::now();
        let mut bursts = Debouncer::default();
        let mut taken = Vec::new();
        for step in 0..45 {
            let now = t0 + ms(50) * step;
            bursts.record(Path::new("/r/busy"), false, now);
            for (path, _) in bursts.take_due(now) {
                taken.push((path, now - t0));
            }
        }
        // Taken at 1 s; the next event begins a new burst (at 1.05 s), taken 1 s later.
        let at: Vec<Duration> = taken.iter().map(|(_, at)| *at).collect();
        assert_eq!(at, [MAX_DELAY, ms(50) + MAX_DELAY * 2]);
    }

    #[test]
    fn bursts_outside_the_roots_are_dropped() {
        let t0 = Instant::now();
        let mut bursts = Debouncer::default();
        bursts.record(Path::new("/a/x"), true, t0);
        bursts.record(Path::new("/b/y"), true, t0);
        bursts.keep_under(&[PathBuf::from("/a")]);
        assert!(bursts.is_structural(Path::new("/a/x")));
        assert!(!bursts.is_structural(Path::new("/b/y")));
        let ready = bursts.take_due(t0 + MAX_DELAY);
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].0, PathBuf::from("/a/x"));
    }
}
