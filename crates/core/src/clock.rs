//! Time, handed in: the timers of the domain (the watcher's debouncing, a root's setup
//! going quiet, a vanished root looked for again) read the time from a [`Clock`] they are
//! given instead of from `Instant::now()` directly, so their tests run on simulated time
//! ([`ManualClock`]) instead of sleeping and hoping a loaded machine keeps up.
//!
//! Only reading the time goes through the clock. Waiting still happens on real channels
//! and condition variables, with timeouts computed from the clock's `now`: code under test
//! on simulated time is driven step by step by its test, not by a thread that waits.

use std::sync::Arc;
use std::time::Instant;

/// Where a timer reads the time.
pub(crate) trait Clock: Send + Sync {
    /// The time now, monotonic.
    fn now(&self) -> Instant;
}

/// The machine's monotonic clock (`Instant::now`): what the server runs on.
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The clock the server runs on, shared.
pub(crate) fn system() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

/// Simulated time for tests: it stands still until the test moves it on.
#[cfg(test)]
pub(crate) struct ManualClock {
    now: std::sync::Mutex<Instant>,
}

#[cfg(test)]
impl ManualClock {
    /// A clock standing at the real time now.
    pub(crate) fn new() -> Arc<ManualClock> {
        Arc::new(ManualClock {
            now: std::sync::Mutex::new(Instant::now()),
        })
    }

    /// Moves the time on by `by`.
    pub(crate) fn advance(&self, by: std::time::Duration) {
        *self.now.lock().unwrap() += by;
    }
}

#[cfg(test)]
impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.now.lock().unwrap()
    }
}
