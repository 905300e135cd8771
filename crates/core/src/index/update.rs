//! Updating one root's index in place of a rebuild: the directories that gained or lost an
//! entry are listed again one level deep by the build's own walker (so filtered exactly as
//! a whole walk), new directories walked whole, gone ones dropped; the rest is kept.

use crate::platform::os::OsStrExt;
use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use super::root::{RootIndex, Span, as_path, cmp_paths, is_hidden, parent_of, to_nanos};
use crate::walk::Control;

use super::build::collect;
use super::pack::pack;
use super::part::Part;

/// What [`update`] made of a batch of changed paths.
pub(super) enum Update {
    /// The index with the changes applied, and how many files that added or removed
    /// (boxed: the variants' sizes differ much).
    Applied(Box<RootIndex>, u64),
    /// None of the changes concerns what the index holds.
    Unchanged,
    /// A full build is needed (ignore rules changed, a directory went missing under an
    /// update) or cheaper (the directories to list again hold most of the root).
    Rebuild,
    Cancelled,
}

/// Applies created and removed paths (relative to the root) to `old` without walking the
/// whole root: each visited directory that gained or lost an entry is listed again, one
/// level deep, by the same walker as a build (so its entries are filtered exactly as the
/// whole walk would filter them: ignore rules, hidden, special files), a new directory
/// found there is walked whole, and a directory gone (or now ignored) is dropped with
/// everything below it. Everything else is kept from `old`, then packed again.
///
/// Paths whose parent the index does not visit are left out: they are inside an ignored or
/// hidden directory, or inside a new directory that its own parent's listing walks whole.
/// Listing a directory again is always correct, whatever happened in it meanwhile, so a
/// batch may hold duplicates and paths whose events arrived during an earlier update.
pub(super) fn update(
    old: &RootIndex,
    changed: &[Vec<u8>],
    control: &Control,
    max_files: usize,
) -> Update {
    match to_list(old, changed) {
        Ok(relist) => relist_dirs(old, relist, control, max_files),
        Err(outcome) => outcome,
    }
}

/// Lists the visited directories `relist` of `old` again (positions, sorted, each once),
/// keeping the rest: what [`update`] does once it knows the directories, and what a
/// restart does with those changed while no server watched (`resume.rs`). A rebuild when
/// the listings would cost about a whole walk.
pub(super) fn relist_dirs(
    old: &RootIndex,
    relist: Vec<usize>,
    control: &Control,
    max_files: usize,
) -> Update {
    if relist.is_empty() {
        return Update::Unchanged;
    }
    // Listing those directories reads about as many entries as they held; past half the
    // root, one walk of the whole root costs little more and is simpler.
    let cost: usize = relist
        .iter()
        .map(|&dir| old.dir_file_ids(dir).len() + old.subdirs(dir).count() + 1)
        .sum();
    if cost > 4096 && cost * 2 > old.len() + old.info.dirs {
        return Update::Rebuild;
    }
    let started = Instant::now();
    let mut listed = Listed::default();
    // Pre-order: a directory comes before those below it, so a drop is known before
    // anything below it would be listed.
    for &dir in &relist {
        if listed.dropped(dir) {
            continue;
        }
        if let Err(outcome) = list_again(old, dir, control, max_files, started, &mut listed) {
            return outcome;
        }
    }
    let mut all = kept(old, &listed);
    let unreadable = listed.unreadable + all.skipped.len() as u64;
    for part in listed.parts {
        all.absorb(part);
    }
    let updated = pack(old.root().to_path_buf(), all, unreadable, started);
    if updated.len() > max_files {
        return Update::Rebuild;
    }
    Update::Applied(Box::new(updated), listed.added + listed.removed)
}

/// The visited directories to list again for `changed`, in pre-order, or a rebuild when
/// the ignore rules changed.
fn to_list(old: &RootIndex, changed: &[Vec<u8>]) -> Result<Vec<usize>, Update> {
    let mut relist: Vec<usize> = Vec::new();
    for rel in changed {
        if rel.is_empty() {
            continue;
        }
        if old.ignore_rules_at(rel) {
            return Err(Update::Rebuild);
        }
        if is_hidden(rel) {
            continue;
        }
        if let Some(dir) = old.find_dir(as_path(parent_of(rel))) {
            relist.push(dir);
        }
    }
    relist.sort_unstable();
    relist.dedup();
    Ok(relist)
}

/// What listing the directories again found, so far.
#[derive(Default)]
struct Listed {
    /// The listings, and the new directories walked whole.
    parts: Vec<Part>,
    unreadable: u64,
    /// Directories dropped with everything below them (ranges of directory positions).
    dropped: Vec<Range<usize>>,
    listed_again: Vec<usize>,
    added: u64,
    removed: u64,
}

impl Listed {
    fn dropped(&self, dir: usize) -> bool {
        self.dropped.iter().any(|range| range.contains(&dir))
    }
}

/// A walk of the update failed: cancelled, or past the limit (then a build says so).
fn failed(control: &Control) -> Update {
    match control.is_cancelled() {
        true => Update::Cancelled,
        false => Update::Rebuild,
    }
}

/// Lists the visited directory `dir` again, one level deep: counts the files it gained or
/// lost, drops the sub-directories no longer yielded (with everything below them), and
/// walks the new ones whole.
fn list_again(
    old: &RootIndex,
    dir: usize,
    control: &Control,
    max_files: usize,
    started: Instant,
    listed: &mut Listed,
) -> Result<(), Update> {
    let root = old.root();
    let rel = old.dir_rel(dir).to_path_buf();
    let path = root.join(&rel);
    if !std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
        // Gone without its parent's event (yet): let a build sort it out.
        return Err(Update::Rebuild);
    }
    let Ok(Some((part, lost))) = collect(root, &path, Some(1), control, max_files, started) else {
        return Err(failed(control));
    };
    listed.unreadable += lost;
    let text = |span: Span| &part.arena[span.range()];
    // Files: count what changed by comparing the names before and after.
    let mut now: Vec<&[u8]> = part.files.iter().map(|f| text(f.0)).collect();
    now.sort_unstable_by(|a, b| cmp_paths(a, b));
    let before = old.dir_file_ids(dir).len();
    let kept = old
        .dir_file_ids(dir)
        .filter(|&id| {
            now.binary_search_by(|n| cmp_paths(n, old.rel_bytes_of_file(id)))
                .is_ok()
        })
        .count();
    listed.added += (now.len() - kept) as u64;
    listed.removed += (before - kept) as u64;
    // Sub-directories: the ones still yielded keep what is below them; the others are
    // dropped; the new ones are walked whole.
    let mut subdirs: Vec<&[u8]> = part
        .dirs
        .iter()
        .map(|&d| text(d))
        .filter(|d| *d != rel.as_os_str().as_bytes())
        .collect();
    subdirs.sort_unstable_by(|a, b| cmp_paths(a, b));
    for sub in old.subdirs(dir).collect::<Vec<_>>() {
        let sub_rel = old.dir_rel(sub).as_os_str().as_bytes();
        if subdirs.binary_search_by(|d| cmp_paths(d, sub_rel)).is_err() {
            let below = old.dirs_below(sub);
            listed.removed += below
                .clone()
                .map(|d| old.dir_file_ids(d).len() as u64)
                .sum::<u64>();
            listed.dropped.push(below);
        }
    }
    let new_dirs: Vec<PathBuf> = subdirs
        .iter()
        .filter(|d| old.find_dir(as_path(d)).is_none())
        .map(|d| root.join(as_path(d)))
        .collect();
    listed.listed_again.push(dir);
    listed.parts.push(part);
    for new_dir in new_dirs {
        let Ok(Some((part, lost))) = collect(root, &new_dir, None, control, max_files, started)
        else {
            return Err(failed(control));
        };
        listed.unreadable += lost;
        listed.added += part.files.len() as u64;
        listed.parts.push(part);
    }
    Ok(())
}

/// The rest of `old`, for packing with the listings: one copy of its arena, its spans as
/// they are, without what was listed again or dropped.
fn kept(old: &RootIndex, listed: &Listed) -> Part {
    let gone = |dir: usize| listed.listed_again.contains(&dir) || listed.dropped(dir);
    // Kept as they are: a change to an ignore file itself means a rebuild.
    let mut all = Part {
        arena: old.arena.to_vec(),
        skipped_ignore: old.skipped_ignore.to_vec(),
        ignore_inputs: old.ignore_inputs.to_vec(),
        ..Part::default()
    };
    let mut file_gone = vec![false; old.len()];
    for dir in listed
        .listed_again
        .iter()
        .copied()
        .chain(listed.dropped.iter().flat_map(|range| range.clone()))
    {
        for id in old.dir_file_ids(dir) {
            file_gone[id] = true;
        }
    }
    all.files = old
        .files
        .iter()
        .enumerate()
        .filter(|(id, _)| !file_gone[*id])
        .map(|(id, rec)| {
            let file = old.file(id);
            (rec.path, file.size, to_nanos(file.modified), file.ident)
        })
        .collect();
    all.dirs = old
        .dirs
        .iter()
        .enumerate()
        .filter(|(d, _)| !listed.dropped(*d))
        .map(|(_, rec)| rec.path)
        .collect();
    all.ignored = old
        .ignored
        .iter()
        .filter(|rec| !gone(rec.parent as usize))
        .map(|rec| (rec.path, rec.is_dir))
        .collect();
    all.skipped = old
        .skipped
        .iter()
        .filter(|rec| !gone(rec.dir as usize))
        .map(|rec| (rec.path, rec.special))
        .collect();
    all
}
