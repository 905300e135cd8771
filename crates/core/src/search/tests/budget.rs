//! The byte allowance of content pages (`max_bytes`): memory and output independent of
//! `-A`/`-B`/`-C`, entries larger than the allowance cut rather than dropped, and paging
//! that always progresses and covers every entry exactly once.

use super::*;

/// `lines` lines, every one matching `x`.
fn matching(tree: &Tree, rel: &str, lines: usize) {
    let text: String = (1..=lines).map(|i| format!("x {i}\n")).collect();
    tree.file(rel, text);
}

#[test]
fn huge_context_is_neither_allocated_nor_copied() {
    let tree = Tree::new();
    matching(&tree, "many.txt", 20_000);
    let query = GrepQuery {
        before: 1_000_000_000,
        after: 1_000_000_000,
        max_bytes: Some(64 * 1024),
        ..content("x")
    };
    let out = run(&query, &tree.root());
    assert_eq!(out.total, 20_000);
    let ms = matches(&out);
    // The first entry alone holds all 19,999 following lines: it is cut to the allowance.
    assert_eq!(ms.len(), 1);
    assert_eq!(ms[0].line, 1);
    assert!(ms[0].omitted > 0);
    let kept: usize = ms[0].after.iter().map(|c| c.text.len() + 8).sum();
    assert!(kept <= 64 * 1024, "{kept} bytes of context kept");
    assert_eq!(out.next_offset, Some(1));
}

#[test]
fn the_first_entry_is_built_even_when_it_alone_exceeds_the_allowance() {
    let tree = Tree::new();
    let body: String = (0..500).map(|i| format!("filler {i}\n")).collect();
    tree.file("block.txt", format!("BEGIN\n{body}END\nBEGIN\nEND\n"));
    let query = GrepQuery {
        multiline: true,
        max_bytes: Some(1000),
        ..content(r"BEGIN(.|\n)*?END")
    };
    let out = run(&query, &tree.root());
    let ms = matches(&out);
    assert_eq!(ms.len(), 1);
    assert_eq!((ms[0].line, ms[0].end_line), (1, 502));
    assert!(ms[0].omitted > 400, "{}", ms[0].omitted);
    assert_eq!(out.next_offset, Some(1));
    let second = run(&GrepQuery { offset: 1, ..query }, &tree.root());
    assert_eq!(matches(&second)[0].line, 503);
    assert_eq!(second.next_offset, None);
}

#[test]
fn pages_within_an_allowance_cover_every_entry_once() {
    let tree = Tree::new();
    matching(&tree, "a.txt", 300);
    matching(&tree, "b.txt", 300);
    let mut seen = Vec::new();
    let mut offset = 0;
    for _ in 0..1000 {
        let query = GrepQuery {
            offset,
            before: 2,
            after: 2,
            max_bytes: Some(3000),
            ..content("x")
        };
        let out = run(&query, &tree.root());
        seen.extend(
            matches(&out)
                .iter()
                .map(|m| format!("{}:{}", tree.rel(&m.path), m.line)),
        );
        match out.next_offset {
            Some(next) => {
                assert!(next > offset);
                offset = next;
            }
            None => break,
        }
    }
    let expected: Vec<String> = ["a.txt", "b.txt"]
        .iter()
        .flat_map(|f| (1..=300).map(move |l| format!("{f}:{l}")))
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn lines_longer_than_the_buffer_limit_are_counted_as_too_large() {
    let tree = Tree::new();
    tree.file(
        "long.txt",
        format!("{}x\n", "a".repeat(crate::search::sink::MAX_BUFFER + 10)),
    );
    tree.file("short.txt", "x\n");
    for multiline in [false, true] {
        let query = GrepQuery {
            multiline,
            ..GrepQuery::new("x")
        };
        let out = run(&query, &tree.root());
        assert_eq!(file_list(&tree, &out), ["short.txt"]);
        assert_eq!(out.stats.skipped_too_large, 1);
    }
}

#[test]
fn regexes_and_globs_too_costly_to_compile_are_refused() {
    let tree = Tree::new();
    let control = Control::new();
    let err = grep(&GrepQuery::new(r"\w{1000}{1000}"), &tree.root(), &control).unwrap_err();
    assert!(err.to_string().contains("exceed"), "{err}");
    let err = grep(&GrepQuery::new("a".repeat(100_000)), &tree.root(), &control).unwrap_err();
    assert!(err.to_string().len() < 500, "{err}");
    let err = glob(
        &GlobQuery::new("*a".repeat(100_000)),
        &tree.root(),
        &control,
    )
    .unwrap_err();
    assert!(err.to_string().contains("too long"), "{err}");
    let globs = GrepQuery {
        globs: vec!["{a,b}".repeat(200)],
        ..GrepQuery::new("x")
    };
    let err = grep(&globs, &tree.root(), &control).unwrap_err();
    assert!(err.to_string().contains("too complex"), "{err}");
}
