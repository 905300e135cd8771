//! The `glob` tool: patterns over the relative path, filters, sort and paging.

use super::*;
use crate::search::SortBy;

fn project() -> Tree {
    let tree = Tree::new();
    tree.file(".git/HEAD", "ref: refs/heads/main\n");
    tree.file(".gitignore", "target/\n");
    tree.file("main.rs", "");
    tree.file("src/lib.rs", "");
    tree.file("src/a/x.ts", "");
    tree.file("src/b/y.ts", "");
    tree.file("src/c/z.ts", "");
    tree.file("target/debug/gen.rs", "");
    tree.file(".github/ci.rs", "");
    tree.file("README.md", "");
    tree
}

fn find(tree: &Tree, pattern: &str) -> Vec<String> {
    glob_list(tree, &run_glob(&GlobQuery::new(pattern), &tree.root()))
}

#[test]
fn patterns_match_the_relative_path() {
    let tree = project();
    assert_eq!(find(&tree, "**/*.rs"), ["main.rs", "src/lib.rs"]);
    assert_eq!(
        find(&tree, "*.rs"),
        ["main.rs", "src/lib.rs"],
        "no slash: any depth"
    );
    assert_eq!(find(&tree, "src/*.rs"), ["src/lib.rs"]);
    assert_eq!(
        find(&tree, "src/**/*.ts"),
        ["src/a/x.ts", "src/b/y.ts", "src/c/z.ts"]
    );
    assert_eq!(find(&tree, "src/{a,b}/*.ts"), ["src/a/x.ts", "src/b/y.ts"]);
    assert_eq!(
        find(&tree, "*/x.ts"),
        Vec::<String>::new(),
        "* does not cross /"
    );
    assert_eq!(find(&tree, "./src/*.rs"), ["src/lib.rs"]);
}

#[test]
fn ignore_hidden_and_types_apply() {
    let tree = project();
    let with = |q: GlobQuery| glob_list(&tree, &run_glob(&q, &tree.root()));
    assert_eq!(
        with(GlobQuery {
            hidden: true,
            ..GlobQuery::new("*.rs")
        }),
        [".github/ci.rs", "main.rs", "src/lib.rs"]
    );
    assert_eq!(
        with(GlobQuery {
            no_ignore: true,
            ..GlobQuery::new("*.rs")
        }),
        ["main.rs", "src/lib.rs", "target/debug/gen.rs"]
    );
    assert_eq!(
        with(GlobQuery {
            types: vec!["markdown".into()],
            ..GlobQuery::new("*")
        }),
        ["README.md"]
    );
}

#[test]
fn modified_sort_is_newest_first_and_reports_times() {
    let tree = project();
    tree.touch("src/lib.rs", 3_000);
    tree.touch("main.rs", 2_000);
    let query = GlobQuery {
        sort: SortBy::Modified,
        ..GlobQuery::new("**/*.rs")
    };
    let out = run_glob(&query, &tree.root());
    assert_eq!(glob_list(&tree, &out), ["src/lib.rs", "main.rs"]);
    let secs: Vec<u64> = out
        .files
        .iter()
        .map(|f| {
            f.modified
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
        })
        .collect();
    assert_eq!(secs, [3_000, 2_000]);
    // Path-sorted results get their times filled in too.
    assert!(
        run_glob(&GlobQuery::new("*.rs"), &tree.root())
            .files
            .iter()
            .all(|f| f.modified.is_some())
    );
}

#[test]
fn paging_concatenates_to_the_full_list() {
    let tree = Tree::new();
    for i in 0..23 {
        let rel = format!("d{}/f{i}.txt", i % 3);
        tree.file(&rel, "");
        tree.touch(&rel, 100 + (i % 5) as u64);
    }
    for sort in [SortBy::Path, SortBy::Modified] {
        let full = run_glob(
            &GlobQuery {
                sort,
                ..GlobQuery::new("*.txt")
            },
            &tree.root(),
        );
        assert_eq!(full.total, 23);
        let mut paged = Vec::new();
        let mut offset = Some(0);
        while let Some(start) = offset {
            let q = GlobQuery {
                sort,
                offset: start,
                limit: Some(5),
                ..GlobQuery::new("*.txt")
            };
            let out = run_glob(&q, &tree.root());
            assert_eq!(out.truncated, out.next_offset.is_some());
            paged.extend(out.files);
            offset = out.next_offset;
        }
        assert_eq!(paged, full.files, "{sort:?}");
    }
}

#[test]
fn file_target_matches_by_name_and_targets_merge() {
    let one = project();
    let two = Tree::new();
    two.file("other.rs", "");
    let targets = vec![one.path("src"), two.path("other.rs"), one.path("README.md")];
    let out = run_glob(&GlobQuery::new("*.rs"), &targets);
    let mut expected = vec![one.path("src/lib.rs"), two.path("other.rs")];
    expected.sort();
    assert_eq!(
        out.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
        expected
    );
}
