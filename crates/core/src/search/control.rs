//! [`Control`]: the only state shared between a running search and the outside world.
//!
//! The caller keeps it (typically in an `Arc`), flips `cancelled` when the request is
//! cancelled, and reads the counters to report progress. The search checks the flag once
//! per file, per matched or context line, and per read from a file, so a cancel stops the
//! work within one buffer read. All accesses are `Relaxed`: the counters are advisory
//! progress figures and the flag needs no ordering with other memory.

pub use crate::walk::Control;
