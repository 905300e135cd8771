//! Giving freed memory back to the system after a big build.
//!
//! Building the symbol index allocates far more than it keeps: parse trees and tag buffers
//! on every build thread, the unpacked definition lists before packing. glibc's allocator
//! keeps what those threads freed in their own arenas, so the resident size stays near the
//! build's peak long after the build is over (measured on apache/nuttx: tens of MiB above
//! what the index holds). `malloc_trim` hands the free pages of every arena back. Elsewhere
//! (macOS, Windows, musl) this does nothing.

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
