//! Which of a root's indexed files are current: the file index's fresh list (paths, sizes,
//! mtimes, identities) against the base segment's and the update's, in one pass over the
//! three lists, all sorted the file index's way. A file is served from a segment only
//! when its stamp there is the one the file index has now and no event marked it since;
//! every other listed file is *stale* (changed, new, or marked), and a segment's files the
//! list no longer has are dropped. A query runs this before it scores (so it never
//! answers from an old text), and the worker runs it to know what to index again.

use std::cmp::Ordering;
use std::collections::HashSet;

use crate::index::{RootIndex, cmp_paths};
use crate::platform::os::OsStrExt;
use crate::ranked::segment::Segment;

/// What a root's segments may serve now.
#[derive(Debug, Default)]
pub(crate) struct Check {
    /// Per base file: served.
    pub(crate) base: Vec<bool>,
    /// Per update file: served.
    pub(crate) update: Vec<bool>,
    /// File index ids of the listed files no segment serves.
    pub(crate) stale: Vec<usize>,
    /// File index ids of the files the update serves.
    pub(crate) update_ids: Vec<usize>,
}

/// Compares the fresh list `files` with `base` and `update`; `dirty` holds relative paths
/// (bytes) marked changed by events since they were indexed.
pub(crate) fn check(
    files: &RootIndex,
    base: &Segment,
    update: Option<&Segment>,
    dirty: &HashSet<Vec<u8>>,
) -> Check {
    let empty = Segment::default();
    let update = update.unwrap_or(&empty);
    let mut out = Check {
        base: vec![false; base.files().len()],
        update: vec![false; update.files().len()],
        stale: Vec::new(),
        update_ids: Vec::new(),
    };
    let (mut j, mut k) = (0usize, 0usize);
    for file in files.files() {
        let rel = file.rel.as_os_str().as_bytes();
        while j < base.files().len() && cmp_paths(base.path(j as u32), rel) == Ordering::Less {
            j += 1;
        }
        while k < update.files().len() && cmp_paths(update.path(k as u32), rel) == Ordering::Less {
            k += 1;
        }
        let in_base = j < base.files().len() && base.path(j as u32) == rel;
        let in_update = k < update.files().len() && update.path(k as u32) == rel;
        let now = file.stamp();
        let marked = !dirty.is_empty() && dirty.contains(rel);
        // The update holds the newer copy: the base's is never served beside it.
        let current = if in_update {
            let ok = update.files()[k].stamp() == now && !marked;
            out.update[k] = ok;
            if ok {
                out.update_ids.push(file.id);
            }
            ok
        } else if in_base {
            let ok = base.files()[j].stamp() == now && !marked;
            out.base[j] = ok;
            ok
        } else {
            false
        };
        if !current {
            out.stale.push(file.id);
        }
        j += usize::from(in_base);
        k += usize::from(in_update);
    }
    out
}
