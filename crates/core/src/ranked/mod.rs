//! Ranked search (PRODUCT §14): the few definitions most likely to answer a question in
//! words, ranked by BM25F over their fields, from an inverted index kept beside the symbol
//! index and never stale.
//!
//! Reading order: [`terms`] (how text and queries become terms), [`english`] (a query's
//! function words and inflections), [`docs`] (a file cut into documents: definitions and
//! the regions between them), [`segment`] (a packed inverted index of some files;
//! [`stored`] its bytes in the store), [`score`] (BM25F), [`build`] (reading files into
//! documents), `index` (the live index of every root), [`excerpt`] (what a hit shows),
//! [`refs`] and [`phrases`] (files, lines and quoted messages a query names), [`prefilter`]
//! (ranking without an index), `request` (what a query asks and gets), [`sources`] (the
//! segments a query scores), `find` (the query: [`rank`]).

pub use find::rank;
pub use index::{RankedIndex, RankedState, RankedStatus};
pub use request::{
    MAX_QUERY_BYTES, MAX_TERMS, RankedHit, RankedOutcome, RankedRequest, RankedStats, kind_ids,
    kind_names,
};

pub(crate) mod build;
pub(crate) mod docs;
pub(crate) mod english;
pub(crate) mod excerpt;
mod find;
mod index;
pub(crate) mod parts;
pub(crate) mod phrases;
pub(crate) mod prefilter;
pub(crate) mod refs;
mod request;
pub(crate) mod rerank;
pub(crate) mod score;
pub(crate) mod segment;
pub(crate) mod sources;
pub(crate) mod stored;
pub(crate) mod terms;
pub(crate) mod votes;
