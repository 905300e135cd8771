//! The content index for `grep` (`index/`): which files may hold a match of a pattern, from
//! the trigrams of every file (`grams.rs`: a file's trigrams, a pattern's `Plan`), packed
//! per root in a table (`table.rs`, `stored.rs` its bytes in the store), kept live by a
//! worker beside the file index. `grep` reads only the files it admits, with the same
//! answers as reading them all.

pub(crate) mod grams;
pub mod index;
pub(crate) mod stored;
pub(crate) mod table;
