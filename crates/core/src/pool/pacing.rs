//! Searches come first: while a search runs, background work (the index builds, adding
//! watches) steps aside ([`SearchRunning`], [`yield_to_searches`]), so the first search of a
//! session never shares the cores with a build, and build threads run below normal
//! priority ([`lower_priority`]); and how many threads a walk starts ([`threads_for`]). The sharing of cores between searches is the pool's ([`super`]).

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
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
            crate::memory::release_when_quiet(searching);
        }
    }
}

/// Whether a search is running now.
pub(crate) fn searching() -> bool {
    SEARCHES.load(AtomicOrdering::Relaxed) > 0
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
