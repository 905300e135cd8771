//! Output modes and matching flags: files, content (with context), count, case, `-F`,
//! `-w`, multiline.

use super::*;
use crate::search::{CaseMode, ContextLine};

fn sample() -> Tree {
    let tree = Tree::new();
    tree.file("b.txt", "one\nTwo needle\nthree\nfour\nfive needle\nsix\n");
    tree.file("a.txt", "needle first\r\nsecond\r\n");
    tree.file("c/d.txt", "nothing here\n");
    tree
}

#[test]
fn files_with_matches_lists_sorted_paths_and_counts_files() {
    let tree = sample();
    let out = run(&GrepQuery::new("needle"), &tree.root());
    assert_eq!(file_list(&tree, &out), ["a.txt", "b.txt"]);
    assert_eq!(out.total, 2);
    // Each file stops at its first match.
    assert_eq!(out.total_matches, 2);
    assert!(!out.truncated);
    assert_eq!(out.next_offset, None);
    assert_eq!(out.stats.files_searched, 3);
    assert!(!out.cancelled);
}

#[test]
fn content_reports_line_column_text_without_terminators() {
    let tree = sample();
    let out = run(&content("needle"), &tree.root());
    assert_eq!(
        rows(&tree, &out),
        [
            "a.txt:1:needle first",
            "b.txt:2:Two needle",
            "b.txt:5:five needle"
        ]
    );
    let m = &matches(&out)[1];
    assert_eq!((m.column, m.end_line), (5, 2));
    assert!(m.before.is_empty() && m.after.is_empty());
    assert_eq!(out.total, 3);
    assert_eq!(out.total_matches, 3);
}

#[test]
fn each_match_carries_its_own_context_even_when_windows_overlap() {
    let tree = sample();
    let query = GrepQuery {
        before: 2,
        after: 2,
        ..content("needle")
    };
    let out = run(&query, &[tree.path("b.txt")]);
    let ms = matches(&out);
    let cl = |line: u64, text: &str| ContextLine {
        line,
        text: text.into(),
    };
    assert_eq!(ms[0].before, [cl(1, "one")]);
    assert_eq!(ms[0].after, [cl(3, "three"), cl(4, "four")]);
    // Lines 3 and 4 were reported once by the searcher, but belong to both matches.
    assert_eq!(ms[1].before, [cl(3, "three"), cl(4, "four")]);
    assert_eq!(ms[1].after, [cl(6, "six")]);
}

#[test]
fn context_can_include_other_matching_lines() {
    let tree = Tree::new();
    tree.file("f", "x1\nx2\nmid\n");
    let out = run(
        &GrepQuery {
            before: 1,
            after: 1,
            ..content("x")
        },
        &tree.root(),
    );
    let ms = matches(&out);
    assert_eq!(ms[0].after[0].text, "x2");
    assert_eq!(ms[1].before[0].text, "x1");
    assert_eq!(ms[1].after[0].text, "mid");
}

#[test]
fn count_counts_matching_lines_per_file() {
    let tree = sample();
    tree.file("e.txt", "needle needle\nneedle\n");
    let out = run(
        &GrepQuery {
            mode: OutputMode::Count,
            ..GrepQuery::new("needle")
        },
        &tree.root(),
    );
    assert_eq!(
        counts(&tree, &out),
        [
            ("a.txt".into(), 1),
            ("b.txt".into(), 2),
            ("e.txt".into(), 2)
        ]
    );
    assert_eq!(out.total, 3);
    assert_eq!(out.total_matches, 5);
}

#[test]
fn case_modes() {
    let tree = Tree::new();
    tree.file("f", "Foo\nfoo\nFOO\n");
    let lines = |case: CaseMode, pattern: &str| {
        let out = run(
            &GrepQuery {
                case,
                ..content(pattern)
            },
            &tree.root(),
        );
        matches(&out).iter().map(|m| m.line).collect::<Vec<_>>()
    };
    assert_eq!(lines(CaseMode::Sensitive, "foo"), [2]);
    assert_eq!(lines(CaseMode::Insensitive, "foo"), [1, 2, 3]);
    assert_eq!(lines(CaseMode::Smart, "foo"), [1, 2, 3]);
    assert_eq!(lines(CaseMode::Smart, "Foo"), [1]);
}

#[test]
fn fixed_strings_match_literally() {
    let tree = Tree::new();
    tree.file("f", "a.b\naxb\n(x\n");
    let lit = |p: &str| GrepQuery {
        fixed_strings: true,
        ..content(p)
    };
    assert_eq!(rows(&tree, &run(&lit("a.b"), &tree.root())), ["f:1:a.b"]);
    assert_eq!(run(&content("a.b"), &tree.root()).total, 2);
    // Not a regex, so an unbalanced parenthesis is fine.
    assert_eq!(rows(&tree, &run(&lit("(x"), &tree.root())), ["f:3:(x"]);
}

#[test]
fn word_requires_boundaries() {
    let tree = Tree::new();
    tree.file("f", "foobar\nfoo bar\nbarfoo\n");
    let out = run(
        &GrepQuery {
            word: true,
            ..content("foo")
        },
        &tree.root(),
    );
    assert_eq!(rows(&tree, &out), ["f:2:foo bar"]);
}

#[test]
fn multiline_match_reports_first_line_and_its_span() {
    let tree = Tree::new();
    tree.file("f", "zero\nstart here\nmiddle\nend there\nafter\nlast\n");
    let query = GrepQuery {
        multiline: true,
        after: 1,
        before: 1,
        ..content("start.*?end")
    };
    let out = run(&query, &tree.root());
    let ms = matches(&out);
    assert_eq!(ms.len(), 1);
    let m = &ms[0];
    assert_eq!((m.line, m.end_line, m.column), (2, 4, 1));
    assert_eq!(m.text, "start here");
    assert_eq!(
        m.before,
        [ContextLine {
            line: 1,
            text: "zero".into()
        }]
    );
    let after: Vec<_> = m.after.iter().map(|c| (c.line, c.text.as_str())).collect();
    assert_eq!(after, [(3, "middle"), (4, "end there"), (5, "after")]);
    assert_eq!(out.total, 1);
}

#[test]
fn multiline_block_with_several_matches_gives_one_entry_per_start_line() {
    let tree = Tree::new();
    tree.file("f", "a1\nb a2\nc\n");
    let query = GrepQuery {
        multiline: true,
        ..content("a\\d\\n?")
    };
    let out = run(&query, &tree.root());
    assert_eq!(rows(&tree, &out), ["f:1:a1", "f:2:b a2"]);
    assert_eq!(matches(&out)[1].column, 3);
    let count = run(
        &GrepQuery {
            multiline: true,
            mode: OutputMode::Count,
            ..GrepQuery::new("a\\d")
        },
        &tree.root(),
    );
    assert_eq!(counts(&tree, &count), [("f".into(), 2)]);
}

#[test]
fn without_multiline_patterns_do_not_cross_lines() {
    let tree = Tree::new();
    tree.file("f", "foo\nbar\n");
    assert_eq!(run(&content("foo\\sbar"), &tree.root()).total, 0);
    let out = run(
        &GrepQuery {
            multiline: true,
            ..content("foo\\sbar")
        },
        &tree.root(),
    );
    assert_eq!(out.total, 1);
}

#[test]
fn control_counts_progress() {
    let tree = sample();
    let control = Control::new();
    grep(&content("needle"), &tree.root(), &control).unwrap();
    assert_eq!(control.files_examined(), 3);
    assert_eq!(control.matches(), 3);
}

#[test]
fn multiline_block_of_touching_matches_is_handled_in_linear_time() {
    // Every match ends where the next begins, so the searcher reports one block spanning
    // the whole file; a quadratic line count would take minutes here.
    let tree = Tree::new();
    tree.file("f", "x\n".repeat(100_000));
    let query = GrepQuery {
        multiline: true,
        mode: OutputMode::Count,
        ..GrepQuery::new("x\\n")
    };
    let out = run(&query, &tree.root());
    assert_eq!(counts(&tree, &out), [("f".into(), 100_000)]);
    let page = run(
        &GrepQuery {
            multiline: true,
            limit: Some(2),
            offset: 99_998,
            ..content("x\\n")
        },
        &tree.root(),
    );
    assert_eq!(rows(&tree, &page), ["f:99999:x", "f:100000:x"]);
    assert_eq!(page.total, 100_000);
}
