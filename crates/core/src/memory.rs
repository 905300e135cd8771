//! Giving freed memory back to the system: large blocks as soon as they are freed
//! ([`tune_allocator`]), the rest after a big build and after queries ([`release_freed`]).
//!
//! Building the symbol index allocates far more than it keeps: parse trees and tag buffers
//! on every build thread, the unpacked definition lists before packing. glibc's allocator
//! keeps what those threads freed in their own arenas, so the resident size stays near the
//! build's peak long after the build is over (measured on apache/nuttx: tens of MiB above
//! what the index holds). `malloc_trim` hands the free pages of every arena back. Queries
//! do the same on a smaller scale (a `grep` over a million-file index, a `symbols` query
//! for a common name: tens of MiB each, freed on the query threads' arenas), so once the
//! searches have been over for a moment (`pool::pacing`) the same trim runs on a thread of
//! its own. Elsewhere (macOS, Windows, musl) this does nothing.

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
