//! Which files are searched: ignore files, hidden files, globs, types, size limit,
//! explicit targets.

use super::*;

fn ignored_tree() -> Tree {
    let tree = Tree::new();
    // .gitignore applies inside a git repository (as with ripgrep).
    tree.file(".git/HEAD", "ref: refs/heads/main\n");
    tree.file(".gitignore", "build/\n*.log\n");
    tree.file(".ignore", "secret.txt\n");
    tree.file("src/main.rs", "needle\n");
    tree.file("build/out.rs", "needle\n");
    tree.file("app.log", "needle\n");
    tree.file("secret.txt", "needle\n");
    tree.file(".hidden/h.rs", "needle\n");
    tree.file(".env", "needle\n");
    tree
}

#[test]
fn gitignore_and_dot_ignore_are_respected() {
    let tree = ignored_tree();
    let out = run(&GrepQuery::new("needle"), &tree.root());
    assert_eq!(file_list(&tree, &out), ["src/main.rs"]);
}

#[test]
fn gitignore_outside_a_git_repository_is_not_applied_like_ripgrep() {
    let tree = Tree::new();
    tree.file(".gitignore", "build/\n");
    tree.file(".ignore", "secret.txt\n");
    tree.file("build/out.rs", "needle\n");
    tree.file("secret.txt", "needle\n");
    let out = run(&GrepQuery::new("needle"), &tree.root());
    assert_eq!(file_list(&tree, &out), ["build/out.rs"]);
}

#[test]
fn hidden_includes_dotfiles_but_still_respects_ignores() {
    let tree = ignored_tree();
    let out = run(
        &GrepQuery {
            hidden: true,
            ..GrepQuery::new("needle")
        },
        &tree.root(),
    );
    assert_eq!(
        file_list(&tree, &out),
        [".env", ".hidden/h.rs", "src/main.rs"]
    );
}

#[test]
fn no_ignore_turns_every_ignore_file_off() {
    let tree = ignored_tree();
    let query = GrepQuery {
        no_ignore: true,
        hidden: true,
        ..GrepQuery::new("needle")
    };
    let out = run(&query, &tree.root());
    assert_eq!(
        file_list(&tree, &out),
        [
            ".env",
            ".hidden/h.rs",
            "app.log",
            "build/out.rs",
            "secret.txt",
            "src/main.rs"
        ]
    );
}

#[test]
fn git_info_exclude_is_respected() {
    let tree = Tree::new();
    tree.file(".git/info/exclude", "excluded.txt\n");
    tree.file("excluded.txt", "needle\n");
    tree.file("kept.txt", "needle\n");
    let out = run(&GrepQuery::new("needle"), &tree.root());
    assert_eq!(file_list(&tree, &out), ["kept.txt"]);
}

#[test]
fn explicit_file_is_searched_even_if_ignored_or_hidden() {
    let tree = ignored_tree();
    let out = run(
        &GrepQuery::new("needle"),
        &[tree.path("app.log"), tree.path(".env")],
    );
    assert_eq!(file_list(&tree, &out), [".env", "app.log"]);
}

#[test]
fn globs_follow_rg_semantics_relative_to_the_target() {
    let tree = Tree::new();
    tree.file("a.rs", "needle\n");
    tree.file("src/deep/b.rs", "needle\n");
    tree.file("src/c.md", "needle\n");
    tree.file("docs/d.md", "needle\n");
    let with = |globs: &[&str]| {
        let query = GrepQuery {
            globs: globs.iter().map(|g| g.to_string()).collect(),
            ..GrepQuery::new("needle")
        };
        file_list(&tree, &run(&query, &tree.root()))
    };
    assert_eq!(
        with(&["*.rs"]),
        ["a.rs", "src/deep/b.rs"],
        "no slash: any depth"
    );
    assert_eq!(with(&["src/**/*.rs"]), ["src/deep/b.rs"]);
    assert_eq!(with(&["!*.md"]), ["a.rs", "src/deep/b.rs"]);
    assert_eq!(
        with(&["*.{md,rs}", "!docs/**"]),
        ["a.rs", "src/c.md", "src/deep/b.rs"]
    );
    // Rooted at each target: `deep/*.rs` matches under the `src` target.
    let query = GrepQuery {
        globs: vec!["deep/*.rs".into()],
        ..GrepQuery::new("needle")
    };
    assert_eq!(
        file_list(&tree, &run(&query, &[tree.path("src")])),
        ["src/deep/b.rs"]
    );
}

#[test]
fn types_select_and_negate() {
    let tree = Tree::new();
    tree.file("a.rs", "needle\n");
    tree.file("b.py", "needle\n");
    tree.file("c.txt", "needle\n");
    let with = |types: &[&str]| {
        let query = GrepQuery {
            types: types.iter().map(|t| t.to_string()).collect(),
            ..GrepQuery::new("needle")
        };
        file_list(&tree, &run(&query, &tree.root()))
    };
    assert_eq!(with(&["rust"]), ["a.rs"]);
    assert_eq!(with(&["rust", "py"]), ["a.rs", "b.py"]);
    assert_eq!(with(&["!py"]), ["a.rs", "c.txt"]);
}

#[test]
fn max_filesize_skips_and_counts_larger_files() {
    let tree = Tree::new();
    tree.file("small", "needle\n");
    tree.file("big", format!("needle\n{}", "x".repeat(2000)));
    let out = run(
        &GrepQuery {
            max_filesize: Some(100),
            ..GrepQuery::new("needle")
        },
        &tree.root(),
    );
    assert_eq!(file_list(&tree, &out), ["small"]);
    assert_eq!(out.stats.skipped_too_large, 1);
}

#[test]
fn several_targets_are_merged_and_overlaps_reported_once() {
    let one = Tree::new();
    let two = Tree::new();
    one.file("x/a.txt", "needle\n");
    one.file("b.txt", "needle\n");
    two.file("c.txt", "needle\nneedle\n");
    let targets = vec![
        one.path("x"),
        two.path("c.txt"),
        one.root.clone(),
        one.path("x/a.txt"),
    ];
    let out = run(&content("needle"), &targets);
    let paths: Vec<_> = matches(&out).iter().map(|m| m.path.to_path_buf()).collect();
    let mut expected = vec![
        one.path("b.txt"),
        one.path("x/a.txt"),
        two.path("c.txt"),
        two.path("c.txt"),
    ];
    expected.sort();
    assert_eq!(paths, expected);
    assert_eq!(out.total, 4);
}

#[test]
fn a_glob_filter_does_not_let_hidden_files_through() {
    // ripgrep searches `.hidden.rs` for `-g '*.rs'`; rootgrep keeps hidden files out
    // unless `hidden` is set, with or without globs.
    let tree = Tree::new();
    tree.file(".hidden.rs", "needle\n");
    tree.file("src/lib.rs", "needle\n");
    let mut query = GrepQuery::new("needle");
    query.globs = vec!["*.rs".to_string()];
    assert_eq!(file_list(&tree, &run(&query, &tree.root())), ["src/lib.rs"]);
    query.hidden = true;
    assert_eq!(
        file_list(&tree, &run(&query, &tree.root())),
        [".hidden.rs", "src/lib.rs"]
    );
}
