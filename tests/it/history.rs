//! `search` with the root's git history, through the wire (Unix: made with the `git`
//! command): a past commit like the question lifts the definition it changed above one the
//! words alone prefer; `list_roots` says how the history stands, follows HEAD (only the
//! new commits read), and a restarted server starts from the stored history; a tree
//! without git says it has none and ranks by words.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

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

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const ALPHA: &str = "/* Reads the header value of a request; a missing header value is -1. */\n\
    int parse_header_alpha(const char *header, const char *value)\n{\n\
    \x20   if (!value) return -1; /* no header value */\n\
    \x20   return header_value_len(header, value);\n}\n";
const BETA_BEFORE: &str = "/* Reads the header value of a reply. */\n\
    int parse_header_beta(const char *header, const char *value)\n{\n\
    \x20   return header_value_len(header, value);\n}\n";
const BETA: &str = "/* Reads the header value of a reply. */\n\
    int parse_header_beta(const char *header, const char *value)\n{\n\
    \x20   if (*value == 0) return 0;\n\
    \x20   return header_value_len(header, value);\n}\n";

/// A tree whose one past fix (to `parse_header_beta`) is described in words like the
/// question's, committed or not.
fn project(root: &Path, with_git: bool) {
    write(root, "src/alpha.c", ALPHA);
    write(root, "src/beta.c", BETA_BEFORE);
    write(root, "src/other.c", "int unrelated(void) { return 0; }\n");
    if with_git {
        git(root, &["init", "-q"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "import the parsers"]);
    }
    write(root, "src/beta.c", BETA);
    if with_git {
        git(
            root,
            &[
                "commit",
                "-q",
                "-am",
                "parser: crash on an empty reply header value",
            ],
        );
        write(root, "README.md", "parsers\n");
        git(root, &["add", "-A"]);
        git(
            root,
            &["commit", "-q", "-m", "docs: say what the project is"],
        );
    }
}

const QUESTION: &str = "empty header value crash";

fn history_line(client: &mut Client) -> String {
    root_line(client, "history")
}

/// Waits until `list_roots` says the history is no longer being read; its line then.
fn history_settled(client: &mut Client) -> String {
    let settled = |line: &str| {
        !["waiting", "reading", "updating"]
            .iter()
            .any(|s| line.starts_with(s))
    };
    wait_root_line(client, "history", Duration::from_secs(60), settled)
}

fn ready(root: &Path, cache: &Path) -> Client {
    let cache = cache.to_str().unwrap();
    let mut client = Client::spawn(&["--cache-dir", cache], root);
    client.handshake(json!({}));
    wait_search_ready(&mut client);
    history_settled(&mut client);
    client
}

fn names(result: &Value) -> Vec<String> {
    search_results(result)
        .iter()
        .map(|r| r["name"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_past_fix_like_the_question_lifts_the_definition_it_changed() {
    let plain = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    project(plain.path(), false);
    let mut client = ready(plain.path(), cache.path());
    assert_eq!(history_line(&mut client), "none: no git repository");
    let by_words = names(&client.call("search", json!({"query": QUESTION})));
    assert_eq!(
        by_words[..2],
        ["parse_header_alpha", "parse_header_beta"],
        "words alone"
    );
    drop(client);

    let repo = tempfile::tempdir().unwrap();
    project(repo.path(), true);
    let mut client = ready(repo.path(), cache.path());
    let line = history_line(&mut client);
    assert!(line.starts_with("ready (2 commits to "), "{line}");
    assert!(
        line.contains("read in") && line.contains("stored"),
        "{line}"
    );
    let with_history = names(&client.call("search", json!({"query": QUESTION})));
    assert_eq!(
        with_history[..2],
        ["parse_header_beta", "parse_header_alpha"],
        "the fix to beta is like the question"
    );
    // The same answer page after page: the re-ranking is part of the order.
    let second = client.call(
        "search",
        json!({"query": QUESTION, "offset": 1, "head_limit": 1}),
    );
    assert_eq!(names(&second), ["parse_header_alpha"]);

    // HEAD moves: the next search answers without the old history and it is caught up,
    // reading only the new commit.
    write(
        repo.path(),
        "src/other.c",
        "int unrelated(void) { return 1; }\n",
    );
    git(repo.path(), &["commit", "-q", "-am", "other: return one"]);
    client.call("search", json!({"query": QUESTION}));
    let line = history_settled(&mut client);
    assert!(line.starts_with("ready (3 commits to "), "{line}");
    assert!(line.contains("1 new read in"), "{line}");
    let again = names(&client.call("search", json!({"query": QUESTION})));
    assert_eq!(again[0], "parse_header_beta");
    drop(client);

    // A restarted server starts from the stored history.
    let mut client = ready(repo.path(), cache.path());
    let line = history_line(&mut client);
    assert!(
        line.starts_with("ready (3 commits to ") && line.contains("loaded from the store"),
        "{line}"
    );
    let restarted = names(&client.call("search", json!({"query": QUESTION})));
    assert_eq!(restarted[0], "parse_header_beta");
}
