//! Where the work on one root's index stands, as one enum with named transitions
//! ([`Phase`]), shared by the file index, the symbol index and the search index (those two
//! through `background.rs`): nothing to do (`Idle`), a job due from a given time (`Due`),
//! or a job running, with whatever got due meanwhile (`Running`). The state that is one
//! index's own (the paths a job will take, overlays, counters, the result itself) stays
//! in that index's slot, beside its phase.
//!
//! Two cuts differ from "not watched / waiting / building / ready / stale", because the
//! indexes say otherwise:
//! - **The landed result is not a variant.** Each keeps its last result while a job runs
//!   and while it is out of date: the file index settles events against it and updates
//!   from it, the symbol and search indexes answer from it during an update; and each
//!   drops it on rules of its own (the file index when its root is unwatched or displaced,
//!   the others when its stored file was cut short under it). A `Ready(B)` beside `Running`
//!   would split one value in two, so each slot keeps its result and says when it is
//!   served: the file index when landed and `Idle`, the symbol index when landed with no
//!   full redo due or running (dirty paths it parses on demand), the search index when its
//!   base is landed (stale files it indexes on demand).
//! - **Watching is not a variant.** The file index hears a root's watch state before the
//!   root is set, so it keeps watch states by root beside its slots; the symbol index lets
//!   a running job go on through a lost watch (the job waits for a fresh file list anyway).
//!
//! What the flags allowed and this does not: a job running without the handle that
//! cancels it (or a handle with no job), paths queued for a job that is not running,
//! "stale" with nothing due or running, the next job's "full" mixed up with the running
//! one's. Nor is a generation counter needed: work recorded while a job runs is its
//! `next`.

use std::time::Instant;

/// A job that got due: not before `at`; `full` when it must redo the whole root, rather
/// than patch the last result with what was recorded since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Due {
    pub(crate) at: Instant,
    pub(crate) full: bool,
}

impl Due {
    /// More work recorded on top: the first change of a burst fixes the time, and a full
    /// redo covers any patch.
    fn and(self, full: bool) -> Due {
        Due {
            at: self.at,
            full: self.full || full,
        }
    }
}

/// Where the work on one root's index stands; `J` is a running job's handle (what cancels
/// it, and what it took from the slot).
#[derive(Debug)]
pub(crate) enum Phase<J> {
    /// Nothing recorded since the last result landed (or nothing to build from yet).
    Idle,
    /// A job is due.
    Due(Due),
    /// A job runs. `full`: it redoes the whole root. `next`: work recorded since it started
    /// (so not in what it reads), due once it lands.
    Running {
        job: J,
        full: bool,
        next: Option<Due>,
    },
}

impl<J> Phase<J> {
    /// Work recorded (a change, lost events, a re-watch): due from `at`, unless a job was
    /// due already (then at that job's time); after the running job, if one runs.
    pub(crate) fn schedule(&mut self, at: Instant, full: bool) {
        let fresh = Due { at, full };
        match self {
            Phase::Idle => *self = Phase::Due(fresh),
            Phase::Due(due) => *due = due.and(full),
            Phase::Running { next, .. } => *next = Some(next.map_or(fresh, |due| due.and(full))),
        }
    }

    /// As [`Phase::schedule`], but due from `at` whatever time was due before (now, or a
    /// retry later).
    pub(crate) fn reschedule(&mut self, at: Instant, full: bool) {
        self.schedule(at, full);
        if let Phase::Due(due)
        | Phase::Running {
            next: Some(due), ..
        } = self
        {
            due.at = at;
        }
    }

    /// Starts the due job with its handle; it redoes the whole root when that was asked
    /// for or when nothing has `landed` to patch (returned). What is recorded from now on
    /// is the next job's. Called on a `Due` phase: what is due is what runs.
    pub(crate) fn start(&mut self, job: J, landed: bool) -> bool {
        let asked = match self {
            Phase::Due(due) => due.full,
            _ => {
                debug_assert!(false, "a job started with nothing due");
                true
            }
        };
        let full = asked || !landed;
        *self = Phase::Running {
            job,
            full,
            next: None,
        };
        full
    }

    /// The running job ended (its result landed, or it failed, or gave up): what got due
    /// meanwhile is due now, else nothing is. Gives back the job's handle; `None`, and no
    /// change, when no job was running.
    pub(crate) fn land(&mut self) -> Option<J> {
        match std::mem::replace(self, Phase::Idle) {
            Phase::Running { job, next, .. } => {
                if let Some(due) = next {
                    *self = Phase::Due(due);
                }
                Some(job)
            }
            other => {
                *self = other;
                None
            }
        }
    }

    /// Nothing more is done (the root is no longer watched, or refused): back to `Idle`,
    /// giving back the running job's handle for the caller to cancel.
    pub(crate) fn stop(&mut self) -> Option<J> {
        match std::mem::replace(self, Phase::Idle) {
            Phase::Running { job, .. } => Some(job),
            _ => None,
        }
    }

    /// Nothing due or running: the last result (if any) holds everything recorded.
    pub(crate) fn is_idle(&self) -> bool {
        matches!(self, Phase::Idle)
    }

    /// The running job's handle.
    pub(crate) fn job(&self) -> Option<&J> {
        match self {
            Phase::Running { job, .. } => Some(job),
            _ => None,
        }
    }

    pub(crate) fn job_mut(&mut self) -> Option<&mut J> {
        match self {
            Phase::Running { job, .. } => Some(job),
            _ => None,
        }
    }

    /// From when the next job is due (the one after the running job, if one runs).
    pub(crate) fn due(&self) -> Option<Instant> {
        match self {
            Phase::Due(due)
            | Phase::Running {
                next: Some(due), ..
            } => Some(due.at),
            _ => None,
        }
    }

    /// Whether a job may start at `now`: one is due by then, and none runs.
    pub(crate) fn startable(&self, now: Instant) -> bool {
        matches!(self, Phase::Due(due) if now >= due.at)
    }

    /// Whether a full redo is due or running: the last result is out of date in ways that
    /// no list of changed paths says.
    pub(crate) fn redo_pending(&self) -> bool {
        match self {
            Phase::Idle => false,
            Phase::Due(due) => due.full,
            Phase::Running { full, next, .. } => *full || next.is_some_and(|due| due.full),
        }
    }

    /// Whether the next job (after the running one, if one runs) redoes the whole root:
    /// it was asked for, or nothing has `landed` to patch and no running job will land
    /// something. Paths recorded for a patch are moot then.
    pub(crate) fn next_full(&self, landed: bool) -> bool {
        match self {
            Phase::Idle => !landed,
            Phase::Due(due) => due.full || !landed,
            Phase::Running { next, .. } => next.is_some_and(|due| due.full),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(ms: u64, base: Instant) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[test]
    fn the_first_change_of_a_burst_fixes_the_time_and_a_redo_covers_a_patch() {
        let t = Instant::now();
        let mut phase: Phase<()> = Phase::Idle;
        phase.schedule(at(10, t), false);
        phase.schedule(at(20, t), true);
        phase.schedule(at(30, t), false);
        assert!(matches!(phase, Phase::Due(Due { full: true, .. })));
        assert_eq!(phase.due(), Some(at(10, t)));
        phase.reschedule(at(5, t), false);
        assert_eq!(phase.due(), Some(at(5, t)));
        assert!(phase.redo_pending(), "still a redo");
        assert!(phase.startable(at(5, t)) && !phase.startable(t));
    }

    #[test]
    fn what_gets_due_while_a_job_runs_is_due_once_it_lands() {
        let t = Instant::now();
        let mut phase = Phase::Idle;
        phase.schedule(t, false);
        assert!(!phase.start("job", true), "a patch of what landed");
        assert!(!phase.is_idle() && phase.due().is_none());
        assert!(!phase.startable(at(1, t)), "one job at a time");
        assert!(
            !phase.next_full(true),
            "the running job lands something to patch"
        );
        phase.schedule(at(7, t), false);
        assert_eq!(phase.due(), Some(at(7, t)));
        assert!(!phase.redo_pending());
        assert_eq!(phase.job(), Some(&"job"));
        assert_eq!(phase.land(), Some("job"));
        assert_eq!(phase.due(), Some(at(7, t)));
        assert_eq!(phase.land(), None, "nothing running: no change");
        assert!(phase.startable(at(7, t)));
        assert!(!phase.start("again", true));
        assert_eq!(phase.land(), Some("again"));
        assert!(phase.is_idle());
    }

    #[test]
    fn nothing_landed_to_patch_means_a_whole_redo() {
        let t = Instant::now();
        let mut phase = Phase::Idle;
        assert!(phase.next_full(false) && !phase.next_full(true));
        phase.schedule(t, false);
        assert!(phase.next_full(false) && !phase.next_full(true));
        assert!(phase.start(1, false), "nothing landed: a whole walk");
        assert!(phase.redo_pending());
        phase.reschedule(at(3, t), true);
        assert!(phase.next_full(true));
        assert_eq!(phase.due(), Some(at(3, t)));
        assert_eq!(phase.stop(), Some(1));
        assert!(phase.is_idle() && phase.due().is_none());
        assert_eq!(phase.stop(), None);
    }
}
