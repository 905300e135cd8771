//! The index-backed entry points give exactly what walking gives: a table of queries run
//! both ways over one fixture (ignore files of every kind, hidden entries, an ignored
//! directory, globs that whitelist ignored files, types, modes, sorts, paging), and again
//! after files are created, renamed and deleted under a running watcher.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::content::index::ContentIndex;
use crate::index::FileIndex;
use crate::search::{Indexes, SortBy, glob_indexed, grep_indexed};
use crate::watch::{Consumer, RootStatus, WatchEvent, Watcher};

const DEADLINE: Duration = Duration::from_secs(5);

fn fixture() -> Tree {
    let tree = Tree::new();
    tree.file(".git/HEAD", "ref: refs/heads/main\n");
    tree.file(".git/info/exclude", "excluded.txt\n");
    tree.file(".gitignore", "build/\n*.log\ntarget\n");
    tree.file(".ignore", "secret.txt\n");
    tree.file("src/main.rs", "fn main() { needle(); }\n");
    tree.file(
        "src/lib.rs",
        "// Needle\npub fn needle() {}\nneedle again\n",
    );
    tree.file("src/deep/mod.rs", "needle deep\n");
    tree.file("src/deep/notes.md", "needle in markdown\n");
    tree.file("src/.gitignore", "generated.rs\n");
    tree.file("src/generated.rs", "needle generated\n");
    tree.file("docs/readme.md", "docs needle\nline two\nneedle three\n");
    tree.file("docs/a.b", "needle a.b\n");
    tree.file("docs/a/b.txt", "needle a/b\n");
    tree.file("vendor/lib/v.rs", "needle vendored\n");
    tree.file("vendor/keep.txt", "needle vendor keep\n");
    tree.file("build/out.rs", "needle built\n");
    tree.file("target/debug/x.rs", "needle target\n");
    tree.file("app.log", "needle log\n");
    tree.file("logs/deep.log", "needle deep log\n");
    tree.file("secret.txt", "needle secret\n");
    tree.file("excluded.txt", "needle excluded\n");
    tree.file(".env", "needle hidden\n");
    tree.file(".hidden/h.rs", "needle hidden dir\n");
    tree.file("script.py", "needle = 1\n");
    tree.file("data/blob.bin", b"needle\0binary\n");
    tree.file("big.txt", format!("needle\n{}", "x".repeat(4000)));
    std::fs::create_dir_all(tree.path("empty/dir")).unwrap();
    std::os::unix::fs::symlink(tree.path("src/lib.rs"), tree.path("link.rs")).unwrap();
    for (i, rel) in [
        "src/main.rs",
        "src/lib.rs",
        "docs/readme.md",
        "script.py",
        "app.log",
    ]
    .iter()
    .enumerate()
    {
        tree.touch(rel, 1_000_000 + i as u64 * 1000);
    }
    tree
}

/// A live index over the tree's root, with the watch simulated as established.
fn fresh_index(tree: &Tree) -> FileIndex {
    let index = FileIndex::new();
    let root = tree.root.clone();
    index.set_roots(std::slice::from_ref(&root));
    index.apply(&WatchEvent::Status(root.clone(), RootStatus::Watching));
    assert!(
        index.wait_fresh(&root, DEADLINE).is_some(),
        "index never built"
    );
    index
}

fn normalized(mut stats: crate::walk::Stats) -> crate::walk::Stats {
    stats.elapsed = Duration::ZERO;
    stats.peak_retained = 0;
    stats.indexed_targets = 0;
    stats
}

fn grep_queries() -> Vec<(&'static str, GrepQuery)> {
    let q = |f: &dyn Fn(&mut GrepQuery)| {
        let mut query = GrepQuery::new("needle");
        f(&mut query);
        query
    };
    let globs = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        ("default", q(&|_| {})),
        ("glob rs", q(&|x| x.globs = globs(&["*.rs"]))),
        ("glob negated md", q(&|x| x.globs = globs(&["!*.md"]))),
        ("negated dir glob", q(&|x| x.globs = globs(&["!vendor/**"]))),
        ("negated dir name", q(&|x| x.globs = globs(&["!vendor"]))),
        ("anchored dir", q(&|x| x.globs = globs(&["src/**"]))),
        (
            "alternatives and negation",
            q(&|x| x.globs = globs(&["*.{rs,md}", "!docs/**"])),
        ),
        (
            "whitelists ignored files",
            q(&|x| x.globs = globs(&["*.log"])),
        ),
        (
            "whitelists ignored by .ignore",
            q(&|x| x.globs = globs(&["secret.txt", "*.rs"])),
        ),
        (
            "whitelists ignored dir",
            q(&|x| x.globs = globs(&["build", "*.rs"])),
        ),
        (
            "whitelists inside ignored dir",
            q(&|x| x.globs = globs(&["build/**"])),
        ),
        (
            "glob beats type",
            q(&|x| {
                x.globs = globs(&["*.py"]);
                x.types = vec!["rust".into()];
            }),
        ),
        ("type rust", q(&|x| x.types = vec!["rust".into()])),
        (
            "type negated",
            q(&|x| x.types = vec!["!py".into(), "!rust".into()]),
        ),
        (
            "content with context",
            q(&|x| {
                x.mode = OutputMode::Content;
                x.before = 1;
                x.after = 1;
            }),
        ),
        ("count", q(&|x| x.mode = OutputMode::Count)),
        (
            "sorted by mtime, paged",
            q(&|x| {
                x.mode = OutputMode::Content;
                x.sort = SortBy::Modified;
                x.offset = 2;
                x.limit = Some(3);
            }),
        ),
        (
            "paged files",
            q(&|x| {
                x.offset = 1;
                x.limit = Some(2);
            }),
        ),
        (
            "case insensitive",
            q(&|x| {
                x.pattern = "NEEDLE".into();
                x.case = crate::search::CaseMode::Insensitive;
            }),
        ),
        ("max filesize", q(&|x| x.max_filesize = Some(100))),
        ("absent word", q(&|x| x.pattern = "nowhere_at_all".into())),
        (
            "absent word, content, max filesize",
            q(&|x| {
                x.pattern = "needle (deep|log)|nowhere".into();
                x.mode = OutputMode::Content;
                x.max_filesize = Some(12);
            }),
        ),
        ("rare phrase", q(&|x| x.pattern = "needle deep".into())),
        ("case sensitive", q(&|x| x.pattern = "Needle".into())),
        ("regex", q(&|x| x.pattern = r"ne+dle (a|t)\w*".into())),
        (
            "fixed string",
            q(&|x| {
                x.pattern = "a.b".into();
                x.fixed_strings = true;
                x.mode = OutputMode::Count;
            }),
        ),
        (
            "word",
            q(&|x| {
                x.pattern = "dee".into();
                x.word = true;
            }),
        ),
        ("binary file", q(&|x| x.pattern = "binary".into())),
        ("hidden is walked", q(&|x| x.hidden = true)),
        ("no_ignore is walked", q(&|x| x.no_ignore = true)),
    ]
}

fn glob_queries() -> Vec<(&'static str, GlobQuery)> {
    let q = |pattern: &str, f: &dyn Fn(&mut GlobQuery)| {
        let mut query = GlobQuery::new(pattern);
        f(&mut query);
        query
    };
    vec![
        ("all rs", q("**/*.rs", &|_| {})),
        ("name at any depth", q("*.md", &|_| {})),
        (
            "everything by mtime",
            q("*", &|x| x.sort = SortBy::Modified),
        ),
        ("anchored", q("src/**", &|_| {})),
        ("alternatives", q("{docs,src}/*.{md,rs}", &|_| {})),
        ("with type", q("*", &|x| x.types = vec!["rust".into()])),
        (
            "paged",
            q("*", &|x| {
                x.offset = 3;
                x.limit = Some(4);
            }),
        ),
        ("ignored file name", q("*.log", &|_| {})),
        ("hidden is walked", q("*", &|x| x.hidden = true)),
    ]
}

/// Runs every query both ways over `targets`; returns how many were answered from the
/// index (so a test can check the index was actually used).
fn assert_same(tree: &Tree, index: &FileIndex, targets: &[PathBuf]) -> usize {
    assert_same_with(tree, index, None, targets)
}

/// [`assert_same`], the index-backed side also reading only what `content` admits.
fn assert_same_with(
    tree: &Tree,
    index: &FileIndex,
    content: Option<&ContentIndex>,
    targets: &[PathBuf],
) -> usize {
    let mut from_index = 0;
    for (name, query) in grep_queries() {
        let walked = grep(&query, targets, &Control::new()).unwrap();
        let indexed = grep_indexed(
            &query,
            targets,
            Indexes {
                files: index,
                content,
            },
            &Control::new(),
        )
        .unwrap();
        if indexed.stats.indexed_targets > 0 {
            from_index += 1;
        }
        assert_eq!(walked.entries, indexed.entries, "grep {name}: entries");
        assert_eq!(
            (
                walked.total,
                walked.total_matches,
                walked.truncated,
                walked.next_offset
            ),
            (
                indexed.total,
                indexed.total_matches,
                indexed.truncated,
                indexed.next_offset
            ),
            "grep {name}: totals"
        );
        assert_eq!(
            normalized(walked.stats),
            normalized(indexed.stats),
            "grep {name}: stats"
        );
    }
    for (name, query) in glob_queries() {
        let walked = glob(&query, targets, &Control::new()).unwrap();
        let indexed = glob_indexed(&query, targets, index, &Control::new()).unwrap();
        if indexed.stats.indexed_targets > 0 {
            from_index += 1;
        }
        assert_eq!(
            glob_list(tree, &walked),
            glob_list(tree, &indexed),
            "glob {name}: files"
        );
        assert_eq!(walked.files, indexed.files, "glob {name}: mtimes");
        assert_eq!(
            (walked.total, walked.truncated, walked.next_offset),
            (indexed.total, indexed.truncated, indexed.next_offset),
            "glob {name}"
        );
        assert_eq!(
            normalized(walked.stats),
            normalized(indexed.stats),
            "glob {name}: stats"
        );
    }
    from_index
}

#[test]
fn index_and_walk_agree_on_every_query() {
    let tree = fixture();
    let index = fresh_index(&tree);
    let answered = assert_same(&tree, &index, &tree.root());
    // Everything but hidden/no_ignore (3 queries) and the whitelisted ignored directory
    // (1 query: the index cannot know what is inside it) comes from the index.
    let all = grep_queries().len() + glob_queries().len();
    assert_eq!(answered, all - 4, "the index answered too few queries");
}

#[test]
fn index_and_walk_agree_on_sub_directories_and_mixed_targets() {
    let tree = fixture();
    let index = fresh_index(&tree);
    assert!(assert_same(&tree, &index, &[tree.path("src")]) > 0);
    assert!(assert_same(&tree, &index, &[tree.path("docs"), tree.path("app.log")]) > 0);
    // An ignored directory named explicitly is walked (it is not in the index).
    assert_eq!(assert_same(&tree, &index, &[tree.path("build")]), 0);
}

#[test]
fn index_is_not_used_while_stale() {
    let tree = fixture();
    let index = fresh_index(&tree);
    let root = tree.root.clone();
    let new = tree.file("src/new.rs", "needle new\n");
    index.apply(&WatchEvent::Pending(new.clone()));
    assert!(index.snapshot(&root).is_none(), "pending burst: not served");
    let query = GrepQuery::new("needle");
    let out = grep_indexed(
        &query,
        &tree.root(),
        Indexes::files(&index),
        &Control::new(),
    )
    .unwrap();
    assert_eq!(out.stats.indexed_targets, 0);
    assert!(file_list(&tree, &out).contains(&"src/new.rs".to_string()));
    index.apply(&WatchEvent::Created(new));
    assert!(
        index.snapshot(&root).is_none(),
        "rebuild pending: not served"
    );
    let rebuilt = index.wait_fresh(&root, DEADLINE).expect("rebuilt");
    assert!(rebuilt.find_file(Path::new("src/new.rs")).is_some());
    assert!(assert_same(&tree, &index, &tree.root()) > 0);
}

/// The real thing: a watcher feeding the index while files change.
#[test]
fn index_stays_exact_under_a_running_watcher() {
    let tree = fixture();
    let root = tree.root.clone();
    let index = Arc::new(FileIndex::new());
    index.set_roots(std::slice::from_ref(&root));
    // The content index too: whatever it has read yet, answers stay the walk's.
    let content = Arc::new(ContentIndex::new(index.clone(), None));
    content.set_roots(std::slice::from_ref(&root));
    let (feed, feed_content) = (Arc::clone(&index), Arc::clone(&content));
    let watcher = Watcher::new(move |event| {
        feed.apply(&event);
        feed_content.apply(&event);
    });
    watcher.set_roots(std::slice::from_ref(&root));
    assert!(
        index.wait_fresh(&root, DEADLINE).is_some(),
        "{:?}",
        index.status()
    );
    assert!(
        content.wait_ready(&root, DEADLINE),
        "{:?}",
        content.status()
    );
    assert_same_with(&tree, &index, Some(&content), &tree.root());

    type Step<'a> = (&'static str, Box<dyn Fn() + 'a>);
    let steps: Vec<Step> = vec![
        (
            "create",
            Box::new(|| {
                tree.file("src/created.rs", "needle created\n");
            }),
        ),
        (
            "create ignored",
            Box::new(|| {
                tree.file("other.log", "needle other log\n");
            }),
        ),
        (
            "rename",
            Box::new(|| {
                std::fs::rename(tree.path("src/main.rs"), tree.path("src/renamed.rs")).unwrap()
            }),
        ),
        (
            "delete",
            Box::new(|| std::fs::remove_file(tree.path("docs/readme.md")).unwrap()),
        ),
        (
            "content change",
            Box::new(|| {
                std::fs::write(tree.path("src/lib.rs"), "needle changed and longer\n").unwrap()
            }),
        ),
        (
            "new directory",
            Box::new(|| {
                tree.file("fresh/dir/f.rs", "needle fresh\n");
            }),
        ),
        (
            "ignore file changes",
            Box::new(|| std::fs::write(tree.path(".gitignore"), "*.md\n").unwrap()),
        ),
    ];
    for (name, step) in steps {
        step();
        // Wait until the index has caught up (fresh again and showing the change is the
        // watcher's job; the assertion below is what must hold once it is fresh).
        let deadline = Instant::now() + DEADLINE;
        loop {
            std::thread::sleep(Duration::from_millis(20));
            let query = GlobQuery {
                sort: SortBy::Modified,
                ..GlobQuery::new("**")
            };
            let walked = glob(&query, &tree.root(), &Control::new()).unwrap();
            let indexed = glob_indexed(&query, &tree.root(), &index, &Control::new()).unwrap();
            if indexed.stats.indexed_targets > 0 && indexed.files == walked.files {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{name}: index never caught up: {:?}",
                index.status()
            );
        }
        assert!(
            assert_same_with(&tree, &index, Some(&content), &tree.root()) > 0,
            "{name}: index unused"
        );
        // Once the content index has read the change again, answers are still the walk's.
        assert!(
            content.wait_ready(&root, DEADLINE),
            "{name}: {:?}",
            content.status()
        );
        assert_same_with(&tree, &index, Some(&content), &tree.root());
    }
    drop(watcher);
}

/// The content index rules files out (it is used), and a file rewritten to the same size
/// with its old mtime restored is read again, not ruled out by its old trigrams.
#[test]
fn the_content_index_rules_out_files_and_never_serves_an_old_text() {
    let tree = fixture();
    let root = tree.root.clone();
    let index = Arc::new(FileIndex::new());
    index.set_roots(std::slice::from_ref(&root));
    let content = Arc::new(ContentIndex::new(index.clone(), None));
    content.set_roots(std::slice::from_ref(&root));
    let (feed, feed_content) = (Arc::clone(&index), Arc::clone(&content));
    let watcher = Watcher::new(move |event| {
        feed.apply(&event);
        feed_content.apply(&event);
    });
    watcher.set_roots(std::slice::from_ref(&root));
    let files = index.wait_fresh(&root, DEADLINE).expect("fresh");
    assert!(
        content.wait_ready(&root, DEADLINE),
        "{:?}",
        content.status()
    );
    let plan = crate::content::grams::plan("needle deep", false, false);
    let admitted = content.admitted(&root, &files, &plan).expect("ready");
    let admitted: Vec<String> = (files.files())
        .filter(|f| admitted[f.id])
        .map(|f| f.rel.display().to_string())
        .collect();
    // The file holding the phrase (the other is ignored), and the binary file (never
    // listed).
    assert_eq!(admitted, ["data/blob.bin", "src/deep/mod.rs"]);
    let old = std::fs::metadata(tree.path("src/deep/mod.rs")).unwrap();
    std::fs::write(tree.path("src/deep/mod.rs"), "needle DEEP\n").unwrap();
    let file = std::fs::File::options()
        .append(true)
        .open(tree.path("src/deep/mod.rs"));
    file.unwrap().set_modified(old.modified().unwrap()).unwrap();
    let query = GrepQuery::new("needle DEEP");
    let indexes = Indexes {
        files: &index,
        content: Some(&content),
    };
    let found = grep_indexed(&query, &tree.root(), indexes, &Control::new());
    assert_eq!(file_list(&tree, &found.unwrap()), ["src/deep/mod.rs"]);
    drop(watcher);
}

/// Creations, removals and renames are applied to the index without walking the root
/// again (each lists only the directories concerned, walking new ones whole), and the
/// answers stay exactly the walk's: new entries are filtered by the ignore files of every
/// level (including one inside a new directory), hidden names, special files.
#[test]
fn incremental_updates_stay_exact_without_walking_the_root() {
    let tree = fixture();
    let root = tree.root.clone();
    let index = Arc::new(FileIndex::new());
    index.set_roots(std::slice::from_ref(&root));
    let feed = Arc::clone(&index);
    let watcher = Watcher::new(move |event| feed.apply(&event));
    watcher.set_roots(std::slice::from_ref(&root));
    assert!(index.wait_fresh(&root, DEADLINE).is_some());

    type Step<'a> = (&'static str, Box<dyn Fn() + 'a>);
    let steps: Vec<Step> = vec![
        (
            "files beside indexed ones",
            Box::new(|| {
                for n in 0..50 {
                    tree.file(&format!("src/n{n}.rs"), "needle n\n");
                }
            }),
        ),
        (
            "ignored by a nested .gitignore",
            Box::new(|| {
                std::fs::remove_file(tree.path("src/generated.rs")).unwrap();
                tree.file("src/generated.rs", "needle generated again\n");
            }),
        ),
        (
            "ignored and hidden names",
            Box::new(|| {
                tree.file("more.log", "needle log\n");
                tree.file("src/.hidden.rs", "needle hidden\n");
                tree.file("build/again.rs", "needle built\n");
                tree.file("target/release/y.rs", "needle target\n");
            }),
        ),
        (
            "a new tree with its own ignore file",
            Box::new(|| {
                tree.file("gen/.gitignore", "*.tmp\nskip/\n");
                tree.file("gen/a/keep.rs", "needle gen\n");
                tree.file("gen/a/drop.tmp", "needle tmp\n");
                tree.file("gen/skip/x.rs", "needle skipped\n");
                tree.file("gen/b/c/deep.md", "needle deep gen\n");
            }),
        ),
        (
            "a special file",
            Box::new(|| {
                let socket = std::os::unix::net::UnixListener::bind(tree.path("docs/sock"));
                std::mem::forget(socket);
            }),
        ),
        (
            "rename a directory holding ignored entries",
            Box::new(|| std::fs::rename(tree.path("logs"), tree.path("journal")).unwrap()),
        ),
        (
            "rename a file across directories",
            Box::new(|| std::fs::rename(tree.path("docs/a.b"), tree.path("src/deep/a.b")).unwrap()),
        ),
        (
            "remove a directory tree",
            Box::new(|| std::fs::remove_dir_all(tree.path("vendor")).unwrap()),
        ),
        (
            "remove files",
            Box::new(|| {
                for n in 0..50 {
                    std::fs::remove_file(tree.path(&format!("src/n{n}.rs"))).unwrap();
                }
            }),
        ),
    ];
    for (name, step) in steps {
        step();
        let deadline = Instant::now() + DEADLINE;
        loop {
            std::thread::sleep(Duration::from_millis(20));
            let query = GlobQuery {
                sort: SortBy::Modified,
                ..GlobQuery::new("**")
            };
            let walked = glob(&query, &tree.root(), &Control::new()).unwrap();
            let indexed = glob_indexed(&query, &tree.root(), &index, &Control::new()).unwrap();
            // (Unreadable counts too: a special file changes nothing else.)
            if indexed.stats.indexed_targets > 0
                && indexed.files == walked.files
                && normalized(indexed.stats.clone()) == normalized(walked.stats.clone())
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{name}: index never caught up: {:?} {:?} {:?}",
                index.status(),
                walked.stats,
                indexed.stats
            );
        }
        assert!(
            assert_same(&tree, &index, &tree.root()) > 0,
            "{name}: index unused"
        );
    }
    let status = &index.status()[0];
    assert_eq!(status.builds, 1, "the root was walked again: {status:?}");
    assert!(status.updates >= 100, "{status:?}");
    drop(watcher);
}

#[cfg(unix)]
/// A socket, and a file below a directory chain longer than PATH_MAX (created through
/// directory handles): a grep answered from the index skips and counts them exactly
/// as a walk does, also below a sub-directory and with a type filter.
#[test]
fn what_the_walk_cannot_read_is_counted_by_the_index_too() {
    use crate::index::tests::Fixture;
    use crate::search::query::GrepQuery;
    use rustix::fs::{Mode, OFlags, mkdirat, openat};
    let f = Fixture::new();
    let _socket = std::os::unix::net::UnixListener::bind(f.root.join("a/sock")).unwrap();
    let name = "d".repeat(200);
    let mut dir = openat(
        rustix::fs::CWD,
        f.root.join("a"),
        OFlags::DIRECTORY | OFlags::RDONLY,
        Mode::empty(),
    )
    .unwrap();
    for _ in 0..25 {
        mkdirat(&dir, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        dir = openat(
            &dir,
            name.as_str(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
    }
    let deep = openat(
        &dir,
        "deep.rs",
        OFlags::CREATE | OFlags::WRONLY,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    rustix::io::write(&deep, b"x\n").unwrap();
    let index = crate::index::build(&f.root, &Control::new()).unwrap();
    for (target, types) in [
        (f.root.clone(), vec![]),
        (f.root.join("a"), vec![]),
        (f.root.join("a"), vec!["rust".to_string()]),
    ] {
        let mut query = GrepQuery::new("x");
        query.types = types;
        let walked =
            crate::search::grep(&query, std::slice::from_ref(&target), &Control::new()).unwrap();
        let served = crate::search::grep_files(&query, &target, &index, &Control::new())
            .unwrap()
            .unwrap();
        assert!(walked.stats.skipped_unreadable >= 1, "{:?}", walked.stats);
        assert_eq!(
            served.stats.skipped_unreadable, walked.stats.skipped_unreadable,
            "{target:?}"
        );
    }
}
