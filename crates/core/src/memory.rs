//! Giving freed memory back to the system: large blocks as soon as they are freed
//! ([`tune_allocator`]), the rest after a big build, and after queries.
//!
//! Building the symbol index allocates far more than it keeps: parse trees and tag buffers
//! on every build thread, the unpacked definition lists before packing. glibc's allocator
//! keeps what those threads freed in their own arenas, so the resident size stays near the
//! build's peak long after the build is over (measured on apache/nuttx: tens of MiB above
//! what the index holds). `malloc_trim` hands the free pages of every arena back. Queries
//! do the same on a smaller scale (a `grep` over a million-file index, a `symbols` query
//! for a common name: tens of MiB each, freed on the query threads' arenas), so once the
//! searches have been over for a moment ([`release_when_quiet`]) the same trim runs on a
//! thread of its own. Elsewhere (macOS, Windows, musl) this does nothing.

use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Sets the allocator up for a long-lived server, before any thread starts: glibc maps
/// an allocation of 128 KiB or more on its own, but raises that threshold whenever such a
/// block is freed (up to 32 MiB), after which a query's large transient buffers (candidate
/// lists, file contents, result pages) are carved out of the threads' arenas, where a few
/// small allocations that outlive the query pin their pages: on the 1M-file tree, six
/// agent calls left 194 MiB of own memory where the indexes hold 127, with the free pages
/// trimmed. Holding the threshold at its initial 128 KiB gives such buffers back when
/// they are freed (120 MiB after the same calls; the first start on nuttx +3 % CPU, its
/// peak 558 → 507 MiB; queries as fast). Elsewhere this does nothing.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn tune_allocator() {
    unsafe extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    /// glibc's `M_MMAP_THRESHOLD`.
    const M_MMAP_THRESHOLD: i32 = -3;
    /// Allocations at least this large are mapped on their own and unmapped when freed.
    const MMAP_THRESHOLD: i32 = 128 << 10;
    // SAFETY: mallopt takes no pointers and only sets a parameter of glibc's allocator,
    // under its lock.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// Sets the allocator up for a long-lived server (see the glibc version).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn tune_allocator() {}

/// Returns the allocator's free memory to the system, where that is possible.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub(crate) fn release_freed() {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    // SAFETY: malloc_trim takes no pointers; it only walks glibc's own arenas under their
    // locks, which is safe from any thread at any time.
    unsafe {
        malloc_trim(0);
    }
}

/// Returns the allocator's free memory to the system, where that is possible.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn release_freed() {}

/// How long the searches must have been over before their memory is trimmed: a burst of
/// calls (an agent's usual pattern) is trimmed once, after it.
const QUIET: Duration = Duration::from_millis(500);

/// When the searches were last over (`None`: trimmed since), and the trimmer's wake-up.
struct Quiet {
    since: Mutex<Option<Instant>>,
    wake: Condvar,
}

/// The searches are over for now (`busy` says whether another has started since): the
/// freed memory is given back once they stayed over for [`QUIET`], on the trimmer's
/// thread (started at the first call; none where trimming does nothing).
pub(crate) fn release_when_quiet(busy: fn() -> bool) {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return;
    }
    static QUIET_STATE: OnceLock<&'static Quiet> = OnceLock::new();
    let quiet = QUIET_STATE.get_or_init(|| {
        let quiet: &'static Quiet = Box::leak(Box::new(Quiet {
            since: Mutex::new(None),
            wake: Condvar::new(),
        }));
        let started = std::thread::Builder::new()
            .name("rootgrep-trim".into())
            .spawn(move || trim_loop(quiet, busy, release_freed));
        if let Err(err) = started {
            tracing::debug!("no thread to trim memory after searches: {err}");
        }
        quiet
    });
    quiet.ended();
}

impl Quiet {
    /// The searches are over, as of now.
    fn ended(&self) {
        *crate::mutex::lock(&self.since) = Some(Instant::now());
        self.wake.notify_one();
    }
}

/// The trimmer: waits for the searches to be over, then for [`QUIET`] more (starting again
/// when another search ended meanwhile), then `trim`s.
fn trim_loop(quiet: &Quiet, busy: fn() -> bool, trim: fn()) {
    let mut since = crate::mutex::lock(&quiet.since);
    loop {
        let Some(at) = *since else {
            since = quiet.wake.wait(since).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        let due = at + QUIET;
        let now = Instant::now();
        if now < due {
            since = (quiet.wake)
                .wait_timeout(since, due - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            continue;
        }
        if busy() {
            // A search runs: its end starts the wait again.
            *since = None;
            continue;
        }
        *since = None;
        drop(since);
        trim();
        since = crate::mutex::lock(&quiet.since);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    static TRIMS: AtomicUsize = AtomicUsize::new(0);
    static BUSY: AtomicBool = AtomicBool::new(false);

    #[test]
    fn a_burst_of_searches_is_trimmed_once_after_it_and_never_while_one_runs() {
        let quiet: &'static Quiet = Box::leak(Box::new(Quiet {
            since: Mutex::new(None),
            wake: Condvar::new(),
        }));
        let busy = || BUSY.load(Ordering::SeqCst);
        let trim = || {
            TRIMS.fetch_add(1, Ordering::SeqCst);
        };
        std::thread::spawn(move || trim_loop(quiet, busy, trim));
        // A burst: each end restarts the wait.
        for _ in 0..5 {
            quiet.ended();
            std::thread::sleep(QUIET / 50);
        }
        assert_eq!(TRIMS.load(Ordering::SeqCst), 0, "not during the burst");
        std::thread::sleep(QUIET * 4);
        assert_eq!(TRIMS.load(Ordering::SeqCst), 1, "once after it");
        // A search started before the wait was over: no trim until it ends.
        BUSY.store(true, Ordering::SeqCst);
        quiet.ended();
        std::thread::sleep(QUIET * 4);
        assert_eq!(TRIMS.load(Ordering::SeqCst), 1, "not while one runs");
        BUSY.store(false, Ordering::SeqCst);
        quiet.ended();
        std::thread::sleep(QUIET * 4);
        assert_eq!(TRIMS.load(Ordering::SeqCst), 2);
    }
}
