//! The history index on real repositories, made with the `git` command (Unix: the Windows
//! test run has no git).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::ranked::terms::hash;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn commit(dir: &Path, file: &str, text: &str, message: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    git(dir.path(), &["init", "-q"]);
    commit(
        dir.path(),
        "app/parser.c",
        "int parse_header(void)\n{\n  return 0;\n}\n",
        "first",
    );
    commit(
        dir.path(),
        "app/net.c",
        "int open_socket(void)\n{\n  return 0;\n}\n",
        "net: sockets",
    );
    commit(
        dir.path(),
        "app/parser.c",
        "int parse_header(void)\n{\n  return check_empty();\n}\n",
        "parser: crash on an empty header value",
    );
    commit(
        dir.path(),
        "docs/notes.md",
        "notes\n",
        "docs: notes on the header parser",
    );
    dir
}

fn canonical(path: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(path).expect("canonical")
}

/// `root`'s status once no root is waiting, being read or updated (at most 30 s).
fn ready(index: &HistoryIndex, root: &Path) -> HistoryStatus {
    let started = std::time::Instant::now();
    let busy = |s: &HistoryStatus| {
        use HistoryState::{Reading, Updating, Waiting};
        matches!(s.state, Waiting | Reading | Updating)
    };
    while index.status().iter().any(busy) {
        assert!(started.elapsed() < Duration::from_secs(30), "settles");
        std::thread::sleep(Duration::from_millis(20));
    }
    index
        .status()
        .into_iter()
        .find(|s| s.root == root)
        .expect("a status")
}

fn words(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    crate::ranked::terms::tokens(text, &mut |t| out.push(hash(t)));
    out
}

#[test]
fn a_root_in_a_repository_reads_its_history_and_votes_for_the_files_and_names() {
    let dir = repo();
    let root = canonical(dir.path());
    let index = HistoryIndex::new(None, Vec::new());
    index.set_roots(std::slice::from_ref(&root));
    let status = ready(&index, &root);
    assert_eq!(status.state, HistoryState::Ready);
    assert_eq!(
        status.commits, 3,
        "the root commit changes no file of its own"
    );
    let votes = index
        .votes(&root, &words("empty header crash"))
        .expect("votes");
    let parser = votes
        .files
        .get(&b"app/parser.c"[..])
        .copied()
        .unwrap_or(0.0);
    assert!(parser > 0.0, "{:?}", votes.files);
    assert!(!votes.files.contains_key(&b"app/net.c"[..]));
    // The hunk's header names the definition; its changed line weighs less.
    let (header, changed) = (votes.names["parse_header"], votes.names["check_empty"]);
    assert!(header > changed && changed > 0.0, "{:?}", votes.names);
}

#[test]
fn a_root_below_the_work_tree_sees_only_its_files_named_from_it() {
    let dir = repo();
    let root = canonical(&dir.path().join("app"));
    let index = HistoryIndex::new(None, Vec::new());
    index.set_roots(std::slice::from_ref(&root));
    assert_eq!(ready(&index, &root).state, HistoryState::Ready);
    let votes = index.votes(&root, &words("header")).expect("votes");
    let files: Vec<&[u8]> = votes.files.keys().map(|k| &k[..]).collect();
    assert_eq!(files, [&b"parser.c"[..]], "docs/ is outside the root");
}

#[test]
fn a_directory_without_git_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = canonical(dir.path());
    let index = HistoryIndex::new(None, Vec::new());
    index.set_roots(std::slice::from_ref(&root));
    let status = ready(&index, &root);
    assert_eq!(status.state, HistoryState::None("no git repository".into()));
    assert!(index.votes(&root, &words("header")).is_none());
}

#[test]
fn when_head_moves_the_old_table_is_not_used_and_only_new_commits_are_read() {
    let dir = repo();
    let root = canonical(dir.path());
    let cache = tempfile::tempdir().expect("cache");
    let store = Arc::new(Store::new(cache.path(), None));
    let index = HistoryIndex::new(Some(store.clone()), Vec::new());
    index.set_roots(std::slice::from_ref(&root));
    assert_eq!(ready(&index, &root).commits, 3);
    commit(
        dir.path(),
        "app/net.c",
        "int open_socket(void) { return 1; }\n",
        "net: reset peers",
    );
    // HEAD moved: no answer from the old table; the worker catches up.
    assert!(index.votes(&root, &words("reset peers")).is_none());
    let status = ready(&index, &root);
    assert_eq!(
        (status.state.clone(), status.commits),
        (HistoryState::Ready, 4)
    );
    assert_eq!(status.read, 1, "only the new commit is read");
    let votes = index.votes(&root, &words("reset peers")).expect("votes");
    assert!(votes.files.contains_key(&b"app/net.c"[..]));
    // A reset drops commits: the table is read again, without them.
    git(dir.path(), &["reset", "-q", "--hard", "HEAD~2"]);
    assert!(index.votes(&root, &words("reset peers")).is_none());
    let status = ready(&index, &root);
    assert_eq!(status.commits, 2);
    assert_eq!(status.read, 2, "read whole");
    let votes = index.votes(&root, &words("reset peers")).expect("votes");
    assert!(votes.files.is_empty(), "the dropped commit votes no more");
    drop(index);
    // A new server starts from the stored table.
    let again = HistoryIndex::new(Some(store), Vec::new());
    again.set_roots(std::slice::from_ref(&root));
    let status = ready(&again, &root);
    assert_eq!((status.commits, status.read), (2, 0));
    assert_eq!(status.store.as_deref(), Some("loaded from the store"));
}

#[test]
fn odd_repositories_say_what_they_are_and_never_fail_the_server() {
    // No commit yet.
    let unborn = tempfile::tempdir().expect("tempdir");
    git(unborn.path(), &["init", "-q"]);
    // A linked work tree: `.git` is a file naming the main repository's.
    let main = repo();
    let linked = tempfile::tempdir().expect("tempdir");
    let wt = linked.path().join("wt");
    git(
        main.path(),
        &["worktree", "add", "-q", wt.to_str().expect("utf-8"), "HEAD"],
    );
    // A loose object gone: its commit cannot be read.
    let damaged = repo();
    git(
        damaged.path(),
        &["commit", "-q", "--allow-empty", "-m", "an empty commit"],
    );
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(damaged.path())
        .output()
        .expect("git");
    let head = String::from_utf8(head.stdout).expect("hex");
    let head = head.trim();
    let object = damaged
        .path()
        .join(".git/objects")
        .join(&head[..2])
        .join(&head[2..]);
    std::fs::remove_file(object).expect("a loose commit");
    // A SHA-256 repository (this build reads SHA-1 ones).
    let sha256 = tempfile::tempdir().expect("tempdir");
    git(sha256.path(), &["init", "-q", "--object-format=sha256"]);
    commit(sha256.path(), "a.c", "int a;\n", "first");
    commit(sha256.path(), "a.c", "int b;\n", "second");

    let roots: Vec<_> = [unborn.path(), &wt, damaged.path(), sha256.path()]
        .iter()
        .map(|p| canonical(p))
        .collect();
    let index = HistoryIndex::new(None, Vec::new());
    index.set_roots(&roots);
    let unborn = ready(&index, &roots[0]);
    assert_eq!(unborn.state, HistoryState::None("no commit yet".into()));
    let linked = ready(&index, &roots[1]);
    assert_eq!((linked.state, linked.commits), (HistoryState::Ready, 3));
    let damaged = ready(&index, &roots[2]);
    assert!(
        matches!(&damaged.state, HistoryState::None(why) if why.starts_with("unreadable: ")),
        "{damaged:?}"
    );
    let sha256 = ready(&index, &roots[3]);
    assert!(
        matches!(&sha256.state, HistoryState::None(why) if why.starts_with("unreadable: ")),
        "{sha256:?}"
    );
    for root in &roots {
        if *root != roots[1] {
            assert!(index.votes(root, &words("header")).is_none());
        }
    }
}

#[test]
fn a_repository_outside_confine_is_not_read() {
    let dir = repo();
    let root = canonical(&dir.path().join("app"));
    // Confined to the root: the git directory above it is out of bounds.
    let index = HistoryIndex::new(None, vec![root.clone()]);
    index.set_roots(std::slice::from_ref(&root));
    let status = ready(&index, &root);
    let why = "the repository's git directory is outside --confine";
    assert_eq!(status.state, HistoryState::None(why.into()));
    // Confined to the work tree: read.
    let index = HistoryIndex::new(None, vec![canonical(dir.path())]);
    index.set_roots(std::slice::from_ref(&root));
    assert_eq!(ready(&index, &root).state, HistoryState::Ready);
}

#[test]
fn a_commit_s_large_files_are_not_read_for_its_names() {
    let dir = repo();
    let filler: String = (0..12_000)
        .map(|i| format!("int filler_{i} = {i};\n"))
        .collect();
    std::fs::write(
        dir.path().join("app/big.c"),
        format!("{filler}int big_old;\n"),
    )
    .expect("write");
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "big: add the table"]);
    std::fs::write(
        dir.path().join("app/big.c"),
        format!("{filler}int huge_table_entry;\n"),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("app/net.c"),
        "int small_fix_name(void) { return 2; }\n",
    )
    .expect("write");
    git(
        dir.path(),
        &[
            "commit",
            "-q",
            "-am",
            "table: overflow when the socket closes",
        ],
    );
    let root = canonical(dir.path());
    let index = HistoryIndex::new(None, Vec::new());
    index.set_roots(std::slice::from_ref(&root));
    assert_eq!(ready(&index, &root).state, HistoryState::Ready);
    let votes = index
        .votes(&root, &words("table overflow socket closes"))
        .expect("votes");
    assert!(
        votes.files.contains_key(&b"app/big.c"[..]),
        "the file still gets its vote"
    );
    assert!(
        votes.names.contains_key("small_fix_name"),
        "{:?}",
        votes.names
    );
    assert!(
        !votes.names.contains_key("huge_table_entry"),
        "a blob over 256 KiB is not read"
    );
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
}

#[test]
fn a_fifo_where_git_keeps_a_file_blocks_nothing() {
    // HEAD a FIFO from the start: the read says so instead of waiting on it forever.
    let early = repo();
    mkfifo(&early.path().join(".git/HEAD"));
    // The branch HEAD names becomes a FIFO after the history was read: queries, which
    // resolve HEAD each time, answer without it instead of hanging.
    let late = repo();
    let roots = vec![canonical(early.path()), canonical(late.path())];
    let index = HistoryIndex::new(None, Vec::new());
    index.set_roots(&roots);
    let status = ready(&index, &roots[0]);
    let why = "unreadable: HEAD is not a regular file";
    assert_eq!(status.state, HistoryState::None(why.into()));
    assert_eq!(ready(&index, &roots[1]).state, HistoryState::Ready);
    assert!(index.votes(&roots[1], &words("header")).is_some());
    let head = std::fs::read_to_string(late.path().join(".git/HEAD")).expect("HEAD");
    let branch = head.trim().strip_prefix("ref: ").expect("a branch");
    mkfifo(&late.path().join(".git").join(branch));
    assert!(index.votes(&roots[1], &words("header")).is_none());
    // The query asked the worker to read again, which says why it cannot.
    let status = ready(&index, &roots[1]);
    let name = branch.rsplit('/').next().expect("a name");
    let why = format!("unreadable: {name} is not a regular file");
    assert_eq!(status.state, HistoryState::None(why));
}

#[test]
fn two_roots_of_one_repository_each_get_the_names_of_their_own_files() {
    let dir = repo();
    let inner = canonical(&dir.path().join("app"));
    let outer = canonical(dir.path());
    let index = HistoryIndex::new(None, Vec::new());
    index.set_roots(&[inner.clone(), outer.clone()]);
    assert_eq!(ready(&index, &inner).state, HistoryState::Ready);
    assert_eq!(ready(&index, &outer).state, HistoryState::Ready);
    let question = words("notes on the header parser");
    let inner_votes = index.votes(&inner, &question).expect("votes");
    assert!(
        !inner_votes.names.contains_key("notes"),
        "docs/ is not the inner root's"
    );
    let outer_votes = index.votes(&outer, &question).expect("votes");
    assert!(
        outer_votes.names.contains_key("notes"),
        "{:?}",
        outer_votes.names
    );
}
