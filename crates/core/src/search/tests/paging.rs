//! Deterministic order and paging: pages concatenate to the full list, in every mode and
//! sort, and memory stays bounded however many entries there are.

use super::*;
use crate::pool::pacing::thread_count;
use crate::search::SortBy;
use crate::search::retain::MAX_RETAINED;

/// 30 files with 3 matching lines each; modification times with ties (10 distinct times).
fn many() -> Tree {
    let tree = Tree::new();
    for i in 0..30 {
        let rel = format!("d{}/f{i:02}.txt", i % 4);
        tree.file(&rel, "needle 1\nskip\nneedle 2\nneedle 3\n");
        tree.touch(&rel, 1_000 + (i % 10) as u64);
    }
    tree
}

/// Every entry of a grep outcome as a comparable string.
fn keys(out: &GrepOutcome) -> Vec<String> {
    match &out.entries {
        GrepEntries::Matches(m) => m
            .iter()
            .map(|m| format!("{}:{}", m.path.display(), m.line))
            .collect(),
        GrepEntries::Files(f) => f.iter().map(|p| p.display().to_string()).collect(),
        GrepEntries::Counts(c) => c
            .iter()
            .map(|c| format!("{}:{}", c.path.display(), c.count))
            .collect(),
    }
}

fn pages(tree: &Tree, base: &GrepQuery, limit: usize) -> Vec<String> {
    let mut all = Vec::new();
    let mut offset = 0;
    loop {
        let out = run(
            &GrepQuery {
                offset,
                limit: Some(limit),
                ..base.clone()
            },
            &tree.root(),
        );
        assert!(out.entries.len() <= limit);
        all.extend(keys(&out));
        match out.next_offset {
            Some(next) => {
                assert!(out.truncated);
                assert_eq!(next, offset + limit);
                offset = next;
            }
            None => {
                assert!(!out.truncated);
                return all;
            }
        }
    }
}

#[test]
fn pages_concatenate_to_the_full_list_in_every_mode_and_sort() {
    let tree = many();
    for mode in [
        OutputMode::Content,
        OutputMode::FilesWithMatches,
        OutputMode::Count,
    ] {
        for sort in [SortBy::Path, SortBy::Modified] {
            let base = GrepQuery {
                mode,
                sort,
                ..GrepQuery::new("needle")
            };
            let full = run(&base, &tree.root());
            let full_keys = keys(&full);
            assert_eq!(full.total, full_keys.len());
            let expected_total = if mode == OutputMode::Content { 90 } else { 30 };
            assert_eq!(full.total, expected_total, "{mode:?}");
            let paged = pages(&tree, &base, 7);
            assert_eq!(paged, full_keys, "{mode:?} {sort:?}");
            let mut unique = paged.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), paged.len(), "duplicates in {mode:?} {sort:?}");
        }
    }
}

#[test]
fn path_sort_is_by_path_then_line() {
    let tree = many();
    let out = run(&content("needle"), &tree.root());
    let ms = matches(&out);
    assert!(
        ms.windows(2)
            .all(|w| (&w[0].path, w[0].line) < (&w[1].path, w[1].line))
    );
}

#[test]
fn modified_sort_is_newest_first_with_ties_by_path() {
    let tree = many();
    let out = run(
        &GrepQuery {
            sort: SortBy::Modified,
            ..GrepQuery::new("needle")
        },
        &tree.root(),
    );
    let files = file_list(&tree, &out);
    // i % 10 == 9 are the newest: f09, f19, f29, in path order (d1/f09, d1/f29, d3/f19).
    assert_eq!(files[..3], ["d1/f09.txt", "d1/f29.txt", "d3/f19.txt"]);
    assert_eq!(files[27..], ["d0/f00.txt", "d0/f20.txt", "d2/f10.txt"]);
}

#[test]
fn offset_past_the_end_is_empty_and_not_truncated() {
    let tree = many();
    let out = run(
        &GrepQuery {
            offset: 100,
            limit: Some(5),
            ..GrepQuery::new("needle")
        },
        &tree.root(),
    );
    assert!(out.entries.is_empty());
    assert_eq!(out.total, 30);
    assert!(!out.truncated);
}

#[test]
fn retention_is_bounded_by_the_page_not_the_result() {
    let tree = Tree::new();
    for i in 0..50 {
        tree.file(&format!("f{i:02}.txt"), "word\n".repeat(100));
    }
    let query = GrepQuery {
        limit: Some(10),
        ..content("word")
    };
    let out = run(&query, &tree.root());
    assert_eq!(out.total, 5000);
    assert_eq!(out.entries.len(), 10);
    assert!(out.truncated);
    // Per thread: the collector (at most twice the page: 20) plus one file's staging
    // (10); then the final merge.
    let bound = thread_count() * 30 + 10;
    assert!(
        out.stats.peak_retained <= bound,
        "peak {} > {bound}",
        out.stats.peak_retained
    );
    assert!(out.stats.peak_retained >= 10);
}

#[test]
fn no_limit_retains_at_most_max_retained() {
    let tree = Tree::new();
    tree.file("f", "x\n".repeat(MAX_RETAINED + 5));
    let out = run(&content("x"), &tree.root());
    assert_eq!(out.total, MAX_RETAINED + 5);
    assert_eq!(out.entries.len(), MAX_RETAINED);
    assert_eq!(out.next_offset, Some(MAX_RETAINED));
    let rest = run(
        &GrepQuery {
            offset: MAX_RETAINED,
            ..content("x")
        },
        &tree.root(),
    );
    assert_eq!(rest.entries.len(), 5);
    assert_eq!(matches(&rest)[0].line, MAX_RETAINED as u64 + 1);
    assert!(!rest.truncated);
}

/// Without context, the search pass keeps matching lines only up to twice the page's
/// allowance per thread; past it, the page is built by reading its files again. Either
/// way the page is the same: a small allowance gives a prefix of a large one's page, with
/// the same lines, and paging on from it continues exactly.
#[test]
fn pages_are_the_same_whether_or_not_their_lines_were_kept() {
    let tree = Tree::new();
    let long = "x".repeat(300);
    for i in 0..40 {
        let body: String = (0..50).map(|n| format!("word {i} {n} {long}\n")).collect();
        let rel = format!("f{i:02}.txt");
        tree.file(&rel, &body);
        tree.touch(&rel, 1_000 + i as u64);
    }
    // Newest first: the page's files are searched last, when a small allowance has no room
    // left for their lines.
    let base = GrepQuery {
        max_line_chars: 0,
        sort: SortBy::Modified,
        ..content("word")
    };
    let large = run(
        &GrepQuery {
            max_bytes: Some(64 << 20),
            ..base.clone()
        },
        &tree.root(),
    );
    let small = run(
        &GrepQuery {
            max_bytes: Some(16 << 10),
            ..base.clone()
        },
        &tree.root(),
    );
    let (GrepEntries::Matches(all), GrepEntries::Matches(page)) = (&large.entries, &small.entries)
    else {
        panic!("content entries");
    };
    assert_eq!(all.len(), 2000);
    assert!(!page.is_empty() && page.len() < all.len());
    assert_eq!(&all[..page.len()], &page[..]);
    let next = small.next_offset.expect("more pages");
    assert_eq!(next, page.len());
    let rest = run(
        &GrepQuery {
            offset: next,
            max_bytes: Some(64 << 20),
            ..base
        },
        &tree.root(),
    );
    let GrepEntries::Matches(rest) = &rest.entries else {
        panic!("content entries");
    };
    assert_eq!(&all[next..], &rest[..]);
}
