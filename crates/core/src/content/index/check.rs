//! Which of a root's listed files the content tables may answer for: the file index's
//! fresh list against the base table's files and the update's, in one pass over the three
//! lists, all sorted the file index's way (as the search index's check). A file is served
//! from a table only when its stamp there is the one the file index has now and no event
//! marked it since; every other file is *stale*: `grep` reads it, the worker reads it
//! again.

use std::cmp::Ordering;
use std::collections::HashSet;

use crate::content::table::Table;
use crate::index::{RootIndex, cmp_paths};
use crate::platform::os::OsStrExt;

/// Where a listed file's trigrams are, by file index id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Stale,
    Base(u32),
    Update(u32),
}

/// Compares the fresh list `files` with `base` and `update`; `dirty` holds relative paths
/// (bytes) marked changed by events since they were read.
pub(crate) fn check(
    files: &RootIndex,
    base: &Table,
    update: Option<&Table>,
    dirty: &HashSet<Vec<u8>>,
) -> Vec<Source> {
    let empty = Table::default();
    let update = update.unwrap_or(&empty);
    let (base_files, update_files) = (base.files(), update.files());
    let mut out = Vec::with_capacity(files.len());
    let (mut j, mut k) = (0usize, 0usize);
    for file in files.files() {
        let rel = file.rel.as_os_str().as_bytes();
        while j < base_files.len() && cmp_paths(base.path(j), rel) == Ordering::Less {
            j += 1;
        }
        while k < update_files.len() && cmp_paths(update.path(k), rel) == Ordering::Less {
            k += 1;
        }
        let in_base = j < base_files.len() && base.path(j) == rel;
        let in_update = k < update_files.len() && update.path(k) == rel;
        let now = file.stamp();
        let marked = !dirty.is_empty() && dirty.contains(rel);
        // The update holds the newer copy: the base's is never served beside it.
        let source = if marked {
            Source::Stale
        } else if in_update {
            match update_files[k].stamp() == now {
                true => Source::Update(k as u32),
                false => Source::Stale,
            }
        } else if in_base && base_files[j].stamp() == now {
            Source::Base(j as u32)
        } else {
            Source::Stale
        };
        out.push(source);
        j += usize::from(in_base);
        k += usize::from(in_update);
    }
    out
}
