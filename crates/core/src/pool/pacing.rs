//! Searches come first: while a search runs, background work (the index builds, adding
//! watches) steps aside ([`SearchRunning`], [`yield_to_searches`]), so the first search of
//! a session never shares the cores with a build, and build threads run below normal
//! priority ([`lower_priority`]); once the searches have been over for a moment, what they
//! freed goes back to the system (`memory::release_freed`, on a thread of its own); and how
//! many threads a walk starts ([`threads_for`]). The sharing of cores between searches is
//! the pool's ([`super`]).

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Condvar, Mutex, Once};
use std::time::{Duration, Instant};

/// Longest pause of one piece of background work (an index build in all, or adding a
/// watch) for running searches: work that never ran would leave every search walking.
pub(crate) const YIELD_MAX: Duration = Duration::from_secs(2);

/// Worker threads for a walk: one per available core.
pub(crate) fn thread_count() -> usize {
    crate::pool::cores()
}

/// The threads a query asked for (`0`: one per core).
pub(crate) fn threads_for(requested: usize) -> usize {
    match requested {
        0 => thread_count(),
        n => n,
    }
}

/// Searches running now (see [`SearchRunning`]).
static SEARCHES: AtomicUsize = AtomicUsize::new(0);

/// Marks a search as running for as long as it is held: background work (the file index
/// build, adding watches) waits meanwhile, so that a search, the first one of a session
/// above all, never shares the cores with it.
pub(crate) struct SearchRunning(());

impl SearchRunning {
    pub fn start() -> SearchRunning {
        SEARCHES.fetch_add(1, AtomicOrdering::SeqCst);
        SearchRunning(())
    }
}

impl Drop for SearchRunning {
    fn drop(&mut self) {
        if SEARCHES.fetch_sub(1, AtomicOrdering::SeqCst) == 1 {
            // The last search ended: what the searches freed goes back once all is quiet.
            release_when_quiet();
        }
    }
}

/// Whether a search is running now.
pub(crate) fn searching() -> bool {
    SEARCHES.load(AtomicOrdering::Relaxed) > 0
}

/// How long the searches must have been over before their memory is trimmed: a burst of
/// calls (an agent's usual pattern) is trimmed once, after it.
const QUIET: Duration = Duration::from_millis(500);

/// When the searches were last over (`None`: trimmed since), and the trimmer's wake-up.
struct Quiet {
    since: Mutex<Option<Instant>>,
    wake: Condvar,
}

/// The server's one [`Quiet`].
static QUIET_STATE: Quiet = Quiet {
    since: Mutex::new(None),
    wake: Condvar::new(),
};

/// The searches are over for now: what they freed is given back to the system
/// (`memory::release_freed`) once none ran for [`QUIET`], on a thread of its own (started
/// at the first call; none where trimming does nothing).
fn release_when_quiet() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return;
    }
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let started = std::thread::Builder::new()
            .name("rootgrep-trim".into())
            .spawn(|| trim_loop(&QUIET_STATE, searching, crate::memory::release_freed));
        if let Err(err) = started {
            tracing::debug!("no thread to trim memory after searches: {err}");
        }
    });
    QUIET_STATE.ended();
}

impl Quiet {
    /// The searches are over, as of now.
    fn ended(&self) {
        *crate::mutex::lock(&self.since) = Some(Instant::now());
        self.wake.notify_one();
    }
}

/// The trimmer: waits for the searches to be over, then for [`QUIET`] more (starting again
/// when another search ended meanwhile), then `trim`s unless one is running (its end
/// starts the wait again).
fn trim_loop(quiet: &Quiet, busy: fn() -> bool, trim: fn()) {
    let mut since = crate::mutex::lock(&quiet.since);
    loop {
        let Some(at) = *since else {
            since = quiet.wake.wait(since).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        let now = Instant::now();
        if now < at + QUIET {
            since = (quiet.wake)
                .wait_timeout(since, at + QUIET - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            continue;
        }
        *since = None;
        if busy() {
            continue;
        }
        drop(since);
        trim();
        since = crate::mutex::lock(&quiet.since);
    }
}

/// Blocks background work while a search runs, until `stop` says to give up, or at most
/// `limit`. One atomic load when no search runs.
pub(crate) fn yield_to_searches(stop: impl Fn() -> bool, limit: Duration) {
    if !searching() {
        return;
    }
    let deadline = Instant::now() + limit;
    while searching() && !stop() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Makes the calling build thread yield the CPU to the server's other threads (the
/// watcher, requests) when the cores are busy: on a loaded machine a build at normal
/// priority delays the watcher's events, and so how soon a change is seen. Linux sets a
/// nice value per thread, Windows the thread's priority below normal; on macOS (where a
/// nice value is per process) the threads stay as they are and `yield_to_searches` is what
/// keeps the build out of the way.
#[cfg_attr(windows, allow(unsafe_code))]
pub(crate) fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let tid = rustix::thread::gettid();
        if let Err(err) = rustix::process::setpriority_process(Some(tid), 10) {
            tracing::debug!("build thread keeps its priority: {err}");
        }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::Threading::{
            GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
        };
        // SAFETY: GetCurrentThread returns a pseudo-handle to the calling thread, valid for
        // the call; SetThreadPriority takes no other pointer.
        if unsafe { SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL) } == 0 {
            tracing::debug!(
                "build thread keeps its priority: {}",
                std::io::Error::last_os_error()
            );
        }
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
        static QUIET_HERE: Quiet = Quiet {
            since: Mutex::new(None),
            wake: Condvar::new(),
        };
        let quiet = &QUIET_HERE;
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
