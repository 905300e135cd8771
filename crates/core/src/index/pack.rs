//! Packing what a walk collected into the compact [`RootIndex`]: paths sorted in component
//! order into one byte arena, directories with their children, ignored and skipped entries.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::time::Instant;

use super::root::{
    BuildInfo, DirRec, FileRec, IgnoredRec, RootIndex, SkippedRec, Span, cmp_paths, is_below,
    join_into, parent_of,
};

use super::part::{FileEntry, Part};

/// Sorts and packs what the walk collected into the compact index.
pub(super) fn pack(root: PathBuf, part: Part, unreadable: u64, started: Instant) -> RootIndex {
    let Part {
        arena: raw,
        mut files,
        mut dirs,
        others,
        listed,
        skipped,
        ignored: known_ignored,
        mut skipped_ignore,
        mut ignore_inputs,
    } = part;
    skipped_ignore.sort();
    skipped_ignore.dedup();
    ignore_inputs.sort();
    ignore_inputs.dedup();
    sort(&raw, &mut files, &mut dirs);
    let ignored = ignored(&raw, &files, &dirs, others, listed, known_ignored);
    let packed = one_arena(raw, files, dirs, ignored, skipped);
    let Packed {
        arena,
        files: file_spans,
        dirs: dir_spans,
        ignored: ignored_spans,
        skipped: skipped_spans,
    } = packed;
    let mut dir_recs = dir_tree(&arena, &dir_spans);
    let dir_files = files_by_dir(&arena, &dir_spans, &file_spans, &mut dir_recs);
    let ignored = ignored_recs(&arena, &dir_spans, ignored_spans);
    let skipped = skipped_recs(&arena, &dir_spans, skipped_spans);
    let files: Box<[FileRec]> = file_spans
        .into_iter()
        .map(|(path, size, mtime, ident)| FileRec {
            path,
            size: AtomicU64::new(size),
            mtime: AtomicI64::new(mtime),
            ident: AtomicU64::new(ident),
        })
        .collect();
    let dirs = dir_recs.into_boxed_slice();
    let dir_files = dir_files.into_boxed_slice();
    let heap_bytes = arena.len()
        + std::mem::size_of_val(&*files)
        + std::mem::size_of_val(&*dirs)
        + std::mem::size_of_val(&*dir_files)
        + std::mem::size_of_val(&*ignored)
        + std::mem::size_of_val(&*skipped);
    let info = BuildInfo {
        files: files.len(),
        dirs: dirs.len(),
        ignored: ignored.len(),
        elapsed: started.elapsed(),
        heap_bytes,
        unreadable,
        resumed: None,
    };
    RootIndex {
        root,
        arena,
        files,
        dirs,
        dir_files,
        ignored,
        skipped,
        skipped_ignore: skipped_ignore.into_boxed_slice(),
        ignore_inputs: ignore_inputs.into_boxed_slice(),
        info,
    }
}

/// Sorts the files and directories in component order (directories deduplicated).
fn sort(raw: &[u8], files: &mut [FileEntry], dirs: &mut Vec<Span>) {
    let text = |s: Span| &raw[s.range()];
    // Stable sorts find and merge runs already in order: an update hands in the old
    // index's lists (sorted) followed by the few paths it listed again, so packing it
    // costs a merge, not a whole sort (`sort_unstable_by` sorted everything again on every
    // update of a burst of creations). A build's lists are sorted either way.
    files.sort_by(|a, b| cmp_paths(text(a.0), text(b.0)));
    dirs.sort_by(|a, b| cmp_paths(text(*a), text(*b)));
    dirs.dedup_by(|a, b| text(*a) == text(*b));
}

/// The ignored entries, sorted: those listed but not yielded, and those already known.
fn ignored(
    raw: &[u8],
    files: &[FileEntry],
    dirs: &[Span],
    others: Vec<Span>,
    listed: Vec<(Span, Span, bool)>,
    known: Vec<(Span, bool)>,
) -> Vec<(Vec<u8>, bool)> {
    let text = |s: Span| &raw[s.range()];
    let mut yielded: Vec<Span> = Vec::with_capacity(files.len() + dirs.len() + others.len());
    yielded.extend(files.iter().map(|f| f.0));
    yielded.extend(dirs.iter().copied());
    yielded.extend(others);
    yielded.sort_by(|a, b| cmp_paths(text(*a), text(*b)));
    let mut ignored: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut full = Vec::new();
    for (dir, name, is_dir) in listed {
        join_into(&mut full, text(dir), text(name));
        let seen = yielded
            .binary_search_by(|y| cmp_paths(text(*y), &full))
            .is_ok();
        if !seen {
            ignored.push((full.clone(), is_dir));
        }
    }
    ignored.extend(
        known
            .into_iter()
            .map(|(span, is_dir)| (text(span).to_vec(), is_dir)),
    );
    ignored.sort_by(|a, b| cmp_paths(&a.0, &b.0));
    ignored
}

/// The paths of a pack in one arena, and the spans into it.
struct Packed {
    arena: Box<[u8]>,
    files: Vec<FileEntry>,
    dirs: Vec<Span>,
    ignored: Vec<(Span, bool)>,
    skipped: Vec<(Span, bool)>,
}

/// Copies the paths into one arena, in the final order: files, directories, ignored
/// entries, then skipped ones (sorted); the walk's arena is freed once they are copied.
fn one_arena(
    raw: Vec<u8>,
    mut files: Vec<FileEntry>,
    mut dirs: Vec<Span>,
    ignored: Vec<(Vec<u8>, bool)>,
    mut skipped: Vec<(Span, bool)>,
) -> Packed {
    let text = |s: Span| &raw[s.range()];
    let total: usize = files.iter().map(|f| f.0.len as usize).sum::<usize>()
        + dirs.iter().map(|d| d.len as usize).sum::<usize>()
        + ignored.iter().map(|i| i.0.len()).sum::<usize>();
    let mut arena = Vec::with_capacity(total);
    let mut copy = |s: Span| {
        let start = arena.len() as u32;
        arena.extend_from_slice(text(s));
        Span { start, len: s.len }
    };
    // Re-point the spans in place (no second copy of the lists at the peak).
    for file in files.iter_mut() {
        file.0 = copy(file.0);
    }
    for dir in dirs.iter_mut() {
        *dir = copy(*dir);
    }
    files.shrink_to_fit();
    dirs.shrink_to_fit();
    let ignored_spans: Vec<(Span, bool)> = ignored
        .iter()
        .map(|(bytes, d)| {
            let start = arena.len() as u32;
            arena.extend_from_slice(bytes);
            (
                Span {
                    start,
                    len: bytes.len() as u32,
                },
                *d,
            )
        })
        .collect();
    drop(ignored);
    skipped.sort_unstable_by(|a, b| cmp_paths(text(a.0), text(b.0)));
    let skipped_spans: Vec<(Span, bool)> = skipped
        .into_iter()
        .map(|(span, special)| {
            let start = arena.len() as u32;
            arena.extend_from_slice(text(span));
            (
                Span {
                    start,
                    len: span.len,
                },
                special,
            )
        })
        .collect();
    drop(raw);
    Packed {
        arena: arena.into_boxed_slice(),
        files,
        dirs,
        ignored: ignored_spans,
        skipped: skipped_spans,
    }
}

/// The position of the directory holding `path` (0, the root, when not found).
fn dir_of(arena: &[u8], dirs: &[Span], path: &[u8]) -> u32 {
    let parent = parent_of(path);
    dirs.binary_search_by(|d| cmp_paths(&arena[d.range()], parent))
        .map_or(0, |i| i as u32)
}

/// The directory tree: each directory's parent and the end of its pre-order subtree.
fn dir_tree(arena: &[u8], dirs: &[Span]) -> Vec<DirRec> {
    let at = |s: Span| &arena[s.range()];
    let mut recs: Vec<DirRec> = Vec::with_capacity(dirs.len());
    let mut open: Vec<usize> = Vec::new();
    for (i, &span) in dirs.iter().enumerate() {
        let path = at(span);
        while let Some(&top) = open.last() {
            let top_path = at(dirs[top]);
            if is_below(top_path, path) {
                break;
            }
            recs[top].subtree_end = i as u32;
            open.pop();
        }
        let parent = open.last().map_or(0, |&p| p as u32);
        recs.push(DirRec {
            path: span,
            parent,
            subtree_end: dirs.len() as u32,
            files: 0..0,
        });
        open.push(i);
    }
    for top in open {
        recs[top].subtree_end = dirs.len() as u32;
    }
    recs
}

/// Groups the files by directory (a stable counting sort keeps them by name): sets each
/// directory's range of the returned list of file ids.
fn files_by_dir(arena: &[u8], dirs: &[Span], files: &[FileEntry], recs: &mut [DirRec]) -> Vec<u32> {
    let at = |s: Span| &arena[s.range()];
    // Sorted files come in runs of one directory: look each directory up once per run.
    let mut last: Option<(&[u8], u32)> = None;
    let parents: Vec<u32> = files
        .iter()
        .map(|f| {
            let parent = parent_of(at(f.0));
            match last {
                Some((known, dir)) if known == parent => dir,
                _ => {
                    let dir = dir_of(arena, dirs, at(f.0));
                    last = Some((parent, dir));
                    dir
                }
            }
        })
        .collect();
    let mut counts = vec![0u32; recs.len() + 1];
    for &p in &parents {
        counts[p as usize + 1] += 1;
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    for (d, rec) in recs.iter_mut().enumerate() {
        rec.files = counts[d]..counts[d + 1];
    }
    let mut fill = counts;
    let mut dir_files = vec![0u32; files.len()];
    for (id, &p) in parents.iter().enumerate() {
        dir_files[fill[p as usize] as usize] = id as u32;
        fill[p as usize] += 1;
    }
    dir_files
}

/// The ignored entries, each with its directory.
fn ignored_recs(arena: &[u8], dirs: &[Span], ignored: Vec<(Span, bool)>) -> Box<[IgnoredRec]> {
    ignored
        .into_iter()
        .map(|(span, is_dir)| IgnoredRec {
            path: span,
            parent: dir_of(arena, dirs, &arena[span.range()]),
            is_dir,
        })
        .collect()
}

/// The skipped entries, each with the visited directory whose walk meets it: a special
/// file's parent, or the directory the walk failed to list (itself, when visited).
fn skipped_recs(arena: &[u8], dirs: &[Span], skipped: Vec<(Span, bool)>) -> Box<[SkippedRec]> {
    let at = |s: Span| &arena[s.range()];
    skipped
        .into_iter()
        .map(|(path, special)| {
            let bytes = at(path);
            let dir = match special {
                true => dir_of(arena, dirs, bytes),
                false => dirs
                    .binary_search_by(|d| cmp_paths(at(*d), bytes))
                    .map_or_else(|_| dir_of(arena, dirs, bytes), |i| i as u32),
            };
            SkippedRec { path, dir, special }
        })
        .collect()
}
