//! Locking a mutex the one way the domain does: a mutex poisoned by a thread that
//! panicked while holding it is used anyway. What the domain keeps under its locks
//! (indexes, queues, statuses) stays consistent between statements, and one failed job
//! must not take every later call of the server down with it.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, poisoned or not.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
