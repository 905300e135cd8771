//! Mapped store files that change under the server: a file truncated while mapped (by `cp`
//! or `rsync --inplace` over the cache, a cleaner, a network file system) makes every read
//! of its lost pages raise SIGBUS, which would kill the process. A process-wide SIGBUS
//! handler turns such a fault into damage instead: when the address lies in a mapping
//! registered here, the faulting page is replaced by a page of zeros (the read goes on and
//! sees zeros), the mapping is marked damaged and the process's fault count grows. The
//! indexes drop a damaged table and rebuild it; a call that read one while it broke is
//! answered with an error to retry, never with what the zeros said ([`count`]). A fault
//! anywhere else goes to the handler that was there before (Rust's stack-overflow report,
//! or the default action), as if this one did not exist.
//!
//! The handler only reads atomics and calls `mmap`, a system call, so it is safe to run at
//! any point of any thread. Registered mappings live in a fixed table of `SLOTS`; a
//! mapping that finds no free slot is not made (the caller reads the file into memory).
//! Unix only: Windows reads store files into memory (and refuses to truncate a mapped
//! file anyway), so there [`count`] stays 0.

#[cfg(unix)]
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::atomic::{AtomicU64, Ordering};

/// Most mappings guarded at once (two per root: the symbol table and the search index's
/// base, and for a moment the one replacing each).
#[cfg(unix)]
const SLOTS: usize = 256;

#[cfg(unix)]
struct Region {
    /// Claimed by a mapping.
    used: AtomicBool,
    /// `[start, end)`; `start == 0` while not (or no longer) registered.
    start: AtomicUsize,
    end: AtomicUsize,
    damaged: AtomicBool,
}

#[cfg(unix)]
#[allow(clippy::declare_interior_mutable_const)]
const FREE: Region = Region {
    used: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    damaged: AtomicBool::new(false),
};

#[cfg(unix)]
static REGIONS: [Region; SLOTS] = [FREE; SLOTS];
/// Faults turned into damage since the process started.
static FAULTS: AtomicU64 = AtomicU64::new(0);

/// Faults on mapped store files since the process started: a call that saw this number
/// change while it ran may have read zeros where a table was, and must not be trusted.
pub fn count() -> u64 {
    FAULTS.load(Ordering::Acquire)
}

/// A registered mapping's place in the table; unregistered when dropped (before the
/// mapping itself is unmapped: keep it in a field declared before the mapping).
#[cfg(unix)]
#[derive(Debug)]
pub(crate) struct Guard(usize);

#[cfg(unix)]
impl Guard {
    /// Registers `[start, start + len)`; `None` when the handler could not be installed or
    /// every slot is taken.
    pub(crate) fn register(start: usize, len: usize) -> Option<Guard> {
        if !handler::install() {
            return None;
        }
        let slot = REGIONS.iter().position(|r| {
            r.used
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        let region = &REGIONS[slot];
        region.damaged.store(false, Ordering::Release);
        region.end.store(start + len, Ordering::Release);
        region.start.store(start, Ordering::Release);
        Some(Guard(slot))
    }

    /// Whether a read of this mapping found a page gone (and read zeros there).
    pub(crate) fn damaged(&self) -> bool {
        REGIONS[self.0].damaged.load(Ordering::Acquire)
    }
}

#[cfg(unix)]
impl Drop for Guard {
    fn drop(&mut self) {
        let region = &REGIONS[self.0];
        region.start.store(0, Ordering::Release);
        region.end.store(0, Ordering::Release);
        region.used.store(false, Ordering::Release);
    }
}

/// The registered region holding `addr`, if any.
#[cfg(unix)]
fn region_of(addr: usize) -> Option<&'static Region> {
    REGIONS.iter().find(|r| {
        let start = r.start.load(Ordering::Acquire);
        start != 0 && start <= addr && addr < r.end.load(Ordering::Acquire)
    })
}

#[cfg(unix)]
#[allow(unsafe_code)]
mod handler {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::{FAULTS, region_of};

    static PAGE: AtomicUsize = AtomicUsize::new(0);
    /// The action SIGBUS had before ours (`None`: ours could not be installed).
    static PREVIOUS: OnceLock<Option<libc::sigaction>> = OnceLock::new();

    /// Installs the handler once; whether it is in place.
    pub(super) fn install() -> bool {
        PREVIOUS
            .get_or_init(|| {
                // SAFETY: sysconf and sigaction are called with valid arguments; the
                // handler installed is async-signal-safe (see the module docs).
                unsafe {
                    let page = libc::sysconf(libc::_SC_PAGESIZE);
                    PAGE.store(usize::try_from(page).unwrap_or(4096), Ordering::Release);
                    let mut ours: libc::sigaction = std::mem::zeroed();
                    ours.sa_sigaction = on_sigbus as *const () as usize;
                    ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut ours.sa_mask);
                    let mut previous: libc::sigaction = std::mem::zeroed();
                    (libc::sigaction(libc::SIGBUS, &ours, &mut previous) == 0).then_some(previous)
                }
            })
            .is_some()
    }

    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        if let Some(region) = region_of(addr) {
            let page = PAGE.load(Ordering::Acquire).max(1);
            let at = addr & !(page - 1);
            // SAFETY: the page lies in a registered read-only mapping of a store file,
            // which no Rust reference treats as anything but bytes; a private anonymous
            // page of zeros replaces it in place (MAP_FIXED), so the read retried on
            // return sees zeros instead of faulting again.
            let mapped = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if mapped != libc::MAP_FAILED {
                region
                    .damaged
                    .store(true, std::sync::atomic::Ordering::Release);
                FAULTS.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                return;
            }
        }
        // Not ours: as if this handler were not there.
        // SAFETY: `previous` is the action the kernel gave back when ours was installed.
        unsafe {
            match PREVIOUS.get().copied().flatten() {
                Some(previous)
                    if previous.sa_sigaction != libc::SIG_DFL
                        && previous.sa_sigaction != libc::SIG_IGN =>
                {
                    if previous.sa_flags & libc::SA_SIGINFO != 0 {
                        let chained: extern "C" fn(
                            libc::c_int,
                            *mut libc::siginfo_t,
                            *mut libc::c_void,
                        ) = std::mem::transmute(previous.sa_sigaction);
                        chained(sig, info, ctx);
                    } else {
                        let chained: extern "C" fn(libc::c_int) =
                            std::mem::transmute(previous.sa_sigaction);
                        chained(sig);
                    }
                }
                _ => {
                    // The default action: restored, and the fault happens again on return.
                    let mut default: libc::sigaction = std::mem::zeroed();
                    default.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
                }
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_mapping_reads_zeros_and_is_marked_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 16]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        #[allow(unsafe_code)]
        // SAFETY: a file of this test's own; its truncation is what is tested.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        let guard = Guard::register(map.as_ptr() as usize, map.len()).unwrap();
        assert_eq!(map[100], 7);
        let before = count();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        let sum: u64 = map.iter().map(|&b| u64::from(b)).sum();
        assert_eq!(sum, 0, "every lost page reads as zeros");
        assert!(guard.damaged());
        assert!(count() > before);
        drop(guard);
        drop(map);
    }
}
