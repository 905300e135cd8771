//! File operations on paths the caller already resolved and checked against the roots:
//! reading (text, images, binary descriptions), facts about a path, listing a directory,
//! a compact tree, atomic writes, exact-match edits, and moves that never overwrite.

pub mod edit;
pub mod info;
pub mod list;
pub mod lock;
pub mod mime;
pub mod mv;
pub mod read;
pub mod safe;
pub mod tree;
pub mod version;
pub mod write;
