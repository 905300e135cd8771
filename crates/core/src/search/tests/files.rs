//! File contents the searcher must handle: binary, UTF-16, long lines, invalid UTF-8.

use super::*;
use crate::search::lines::marker;

#[test]
fn walked_binary_file_is_skipped_and_counted() {
    let tree = Tree::new();
    tree.file("bin.dat", b"needle\0\x01\x02needle\n");
    tree.file("text.txt", "needle\n");
    let out = run(&content("needle"), &tree.root());
    assert_eq!(rows(&tree, &out), ["text.txt:1:needle"]);
    assert_eq!(out.stats.skipped_binary, 1);
    assert_eq!(out.stats.files_searched, 1);
}

#[test]
fn binary_detected_after_earlier_matches_drops_them() {
    let tree = Tree::new();
    // The NUL sits past the first read buffer (64 KiB), so matches are reported before
    // binary data is seen; the file must still count as binary and contribute nothing.
    let mut data = b"needle\n".repeat(20_000);
    data.extend_from_slice(b"\0tail needle\n");
    tree.file("late.bin", data);
    let out = run(&content("needle"), &tree.root());
    assert!(matches(&out).is_empty(), "{} entries", out.total);
    assert_eq!(out.total, 0);
    assert_eq!(out.stats.skipped_binary, 1);
}

#[test]
fn explicitly_named_binary_file_is_searched_with_nuls_replaced() {
    let tree = Tree::new();
    let path = tree.file("bin.dat", b"head\0needle\0tail\nsecond needle\n");
    let out = run(&content("needle"), &[path]);
    assert_eq!(out.stats.skipped_binary, 0);
    assert_eq!(out.total, 2);
    let texts: Vec<_> = matches(&out).iter().map(|m| m.text.as_str()).collect();
    assert!(
        texts
            .iter()
            .all(|t| t.contains("needle") && !t.contains('\0')),
        "{texts:?}"
    );
}

#[test]
fn utf16le_with_bom_is_transcoded() {
    let tree = Tree::new();
    let mut data = vec![0xFF, 0xFE];
    for unit in "first\r\nhéllo needle\r\n".encode_utf16() {
        data.extend_from_slice(&unit.to_le_bytes());
    }
    tree.file("wide.txt", data);
    let out = run(&content("needle"), &tree.root());
    assert_eq!(rows(&tree, &out), ["wide.txt:2:héllo needle"]);
    assert_eq!(matches(&out)[0].column, 7);
    assert_eq!(out.stats.skipped_binary, 0);
}

#[test]
fn long_line_is_cut_around_the_match_with_markers() {
    let tree = Tree::new();
    let line = format!("{}NEEDLE{}", "a".repeat(6000), "b".repeat(4000));
    tree.file("min.js", format!("short\n{line}\n"));
    let out = run(
        &GrepQuery {
            before: 1,
            ..content("NEEDLE")
        },
        &tree.root(),
    );
    let m = &matches(&out)[0];
    assert_eq!(m.column, 6001);
    assert!(m.text.contains("NEEDLE"));
    let window = m
        .text
        .strip_prefix(&marker(5753))
        .and_then(|t| t.strip_suffix(&marker(3753)));
    let window = window.unwrap_or_else(|| panic!("markers missing: {}", &m.text[..40]));
    assert_eq!(
        window,
        format!("{}NEEDLE{}", "a".repeat(247), "b".repeat(247))
    );
    assert_eq!(m.before[0].text, "short");
}

#[test]
fn long_context_lines_keep_their_start() {
    let tree = Tree::new();
    tree.file("f", format!("{}\nneedle\n", "c".repeat(800)));
    let query = GrepQuery {
        before: 1,
        max_line_chars: 100,
        ..content("needle")
    };
    let out = run(&query, &tree.root());
    assert_eq!(
        matches(&out)[0].before[0].text,
        format!("{}{}", "c".repeat(100), marker(700))
    );
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let tree = Tree::new();
    tree.file("latin1.txt", b"caf\xe9 needle\n");
    let out = run(&content("needle"), &tree.root());
    assert_eq!(rows(&tree, &out), ["latin1.txt:1:caf\u{fffd} needle"]);
}
