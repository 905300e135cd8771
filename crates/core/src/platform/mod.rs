//! Platform glue on the ground floor: paths as bytes on every OS (`os`) and Windows path
//! text as pure functions (`winpath`). It imports nothing from the crate, so `roots`,
//! `files` and everything above can use it without a cycle.

pub mod os;
pub mod winpath;
