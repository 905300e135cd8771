//! File operations on paths the caller already resolved and checked against the roots:
//! reading (text, images, binary descriptions) and facts about a path.

pub mod info;
pub mod read;
