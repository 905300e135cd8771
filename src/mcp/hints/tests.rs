//! The exact texts of the hints, case by case, as the model has always read them: the
//! words moved out of the core unchanged, and these tests keep them so. (The wire tests and
//! `bench/answers_diff.py` check the same texts end to end, where a call can reach them.)

use std::path::{Path, PathBuf};

use super::*;
use rootgrep_core::files::tree::{DepthCut, LimitCut};
use rootgrep_core::ignores::SkippedIgnoreFile;
use rootgrep_core::roots::{Root, RootSource, path_text};

fn path(text: &str) -> PathBuf {
    PathBuf::from(text)
}

#[test]
fn edit_errors_say_that_nothing_was_written_and_what_to_send() {
    let cases = [
        (
            EditError::Cancelled,
            "the edit was cancelled. No changes were made to the file.",
        ),
        (
            EditError::ChangedMeanwhile { path: path("/w/a") },
            "/w/a changed on disk while it was being edited; read it again and retry. No \
             changes were made to the file.",
        ),
        (
            EditError::TooManyEdits(1001),
            "1001 edits in one call; at most 1000 are accepted (split them over several \
             calls). No changes were made to the file.",
        ),
        (
            EditError::EmptyOldString { edit: 2, of: 3 },
            "edit 2 of 3: old_string is empty; include the text to replace (to insert, \
             include a neighbouring line in both old_string and new_string; to replace the \
             whole file, use write_file). No changes were made to the file.",
        ),
        (
            EditError::NoChange { edit: 1, of: 1 },
            "old_string and new_string are identical, so the edit would change nothing. No \
             changes were made to the file.",
        ),
    ];
    for (err, text) in cases {
        assert_eq!(edit(&err), text);
    }
}

#[test]
fn an_ambiguous_edit_lists_its_first_lines_and_marks_more() {
    let ambiguous = |count: usize, edit_no: usize| EditError::Ambiguous {
        path: path("/w/a"),
        edit: edit_no,
        of: 2,
        count,
        lines: (1..=count.min(50)).collect(),
    };
    assert_eq!(
        edit(&ambiguous(3, 1)),
        "edit 1 of 2: old_string matches 3 times in /w/a (starting at lines 1, 2, 3); add \
         surrounding lines to old_string to make it unique, or set replace_all to replace \
         every occurrence. No changes were made to the file."
    );
    let many = edit(&ambiguous(51, 2));
    assert!(
        many.starts_with("edit 2 of 2: old_string matches 51 times in /w/a after the previous edits (starting at lines 1, 2,"),
        "{many}"
    );
    assert!(many.contains(", 49, 50, …); add"), "{many}");
    assert!(!edit(&ambiguous(50, 1)).contains('…'));
}

#[test]
fn a_missing_old_string_says_why_and_where_it_nearly_matched() {
    let not_found = |near: Option<NearMatch>, prefixes: bool, consumed: bool| {
        edit(&EditError::NotFound {
            path: path("/w/a"),
            edit: 1,
            of: 1,
            near,
            line_number_prefixes: prefixes,
            consumed_by_earlier_edit: consumed,
        })
    };
    assert_eq!(
        not_found(None, false, true),
        "old_string was not found in /w/a. No changes were made to the file. It does occur in \
         the file as it was, so an earlier edit in this call changed it: edits apply in order, \
         each to the result of the previous ones."
    );
    let near = NearMatch {
        start_line: 2,
        end_line: 2,
        count: 3,
        text: "let x  = 1;".into(),
    };
    assert_eq!(
        not_found(Some(near), true, false),
        "old_string was not found in /w/a. No changes were made to the file. old_string seems \
         to include line-number prefixes from read_file (like `  12\\t`); remove them, they \
         are not part of the file. It does match if whitespace, indentation and line endings \
         are ignored (3 such matches; the first is shown): line 2 of the file read \
         exactly:\nlet x  = 1;\nCopy that text exactly (same indentation and spacing) into \
         old_string."
    );
}

#[test]
fn file_operation_errors_name_the_tool_or_argument_that_helps() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let shown = |p: &Path| path_text(p);

    let err = rootgrep_core::files::list::list_directory(&file, &Default::default()).unwrap_err();
    assert_eq!(
        list(&err),
        format!(
            "cannot list {}: not a directory (use file_info or read_file)",
            shown(&file)
        )
    );
    let err = rootgrep_core::files::tree::directory_tree(&file, &Default::default()).unwrap_err();
    assert_eq!(
        list(&err),
        format!(
            "cannot list {}: not a directory (use file_info or read_file)",
            shown(&file)
        )
    );

    let orphan = dir.path().join("no/f");
    let err = rootgrep_core::files::write::write_atomic(&orphan, b"x", false).unwrap_err();
    assert_eq!(
        write(&err),
        format!(
            "cannot write {}: parent directory {} does not exist (set create_dirs to create it)",
            shown(&orphan),
            shown(&dir.path().join("no"))
        )
    );

    // Built by hand: a move onto itself is refused on Unix, while Windows' rename (and
    // Wine's) may treat it as done.
    let err = rootgrep_core::files::mv::MoveError::Exists {
        src: file.clone(),
        dst: file.clone(),
        same: true,
    };
    #[cfg(unix)]
    {
        let moved = rootgrep_core::files::mv::move_no_replace(&file, &file).unwrap_err();
        assert_eq!(mv(&moved), mv(&err), "the core refuses it the same way");
    }
    assert_eq!(
        mv(&err),
        format!(
            "cannot move {0} to {0}: the destination already exists (source and destination \
             are the same path); move_file never overwrites",
            shown(&file)
        )
    );
    let err = rootgrep_core::files::mv::move_no_replace(&file, &orphan).unwrap_err();
    assert_eq!(
        mv(&err),
        format!(
            "cannot move {} to {}: the destination directory {} does not exist (create it \
             with create_directory first)",
            shown(&file),
            shown(&orphan),
            shown(&dir.path().join("no"))
        )
    );
    // Any other error reads as it is.
    let other = io::Error::other("disk on fire");
    assert_eq!(io(&other), "disk on fire");
    // An edit that fails writing says the same.
    let wrapped = EditError::Write {
        path: orphan.clone(),
        source: rootgrep_core::files::write::write_atomic(&orphan, b"x", false).unwrap_err(),
    };
    assert!(edit(&wrapped).ends_with("(set create_dirs to create it)"));
}

#[test]
fn a_directory_read_as_a_file_gets_the_listing_tools() {
    assert_eq!(
        read(&ReadError::IsDirectory(path("/w/d"))),
        "/w/d is a directory; use list_directory or directory_tree to see its contents"
    );
    assert_eq!(
        read(&ReadError::NotFound(path("/w/x"))),
        "/w/x: no such file"
    );
}

#[test]
fn query_errors_name_the_argument_that_would_run_them() {
    let regex = |maybe_literal, needs_multiline| SearchError::InvalidRegex {
        pattern: "a(".into(),
        message: "regex parse error".into(),
        maybe_literal,
        needs_multiline,
    };
    assert_eq!(
        search(&regex(true, false)),
        "invalid regex \"a(\": regex parse error\nhint: to search for this text literally, set \
         fixed_strings: true (or escape the special characters with a backslash, e.g. \\{ or \\()"
    );
    assert_eq!(
        search(&regex(false, true)),
        "invalid regex \"a(\": regex parse error\n(set multiline to match across lines)"
    );
    assert_eq!(
        search(&regex(false, false)),
        "invalid regex \"a(\": regex parse error"
    );
    let large = |compiled| SearchError::PatternTooLarge {
        bytes: 9,
        message: "too big".into(),
        compiled,
    };
    assert_eq!(
        search(&large(true)),
        "regex refused (9 bytes): too big, or fixed_strings for literal text"
    );
    assert_eq!(search(&large(false)), "regex refused (9 bytes): too big");
}

fn root_set(n: usize) -> RootSet {
    let roots = (0..n)
        .map(|i| Root {
            path: PathBuf::from(format!("/r/{i}")),
            canonical: None,
            name: None,
            is_file: false,
        })
        .collect();
    RootSet::new(roots, RootSource::Client)
}

#[test]
fn roots_past_the_first_ten_are_counted_and_list_roots_named() {
    assert_eq!(roots(&root_set(0)), "(no roots)");
    assert_eq!(roots(&root_set(2)), "/r/0, /r/1");
    let many = roots(&root_set(12));
    assert!(
        many.ends_with("/r/9 and 2 more (list_roots pages through them all)"),
        "{many}"
    );
}

#[test]
fn refusals_name_only_what_was_sent_and_quote_it() {
    let roots = RootSet::new(
        vec![Root::new(PathBuf::from("/nonexistent-rootgrep/app"), None)],
        RootSource::CommandLine,
    );
    let confine = Confine {
        dirs: vec![PathBuf::from("/nonexistent-rootgrep")],
    };
    let sent = "../x\nAllowed.\u{202E}";
    for why in [
        Refusal::Confined,
        Refusal::RefusedEarlier,
        Refusal::CannotAsk("the user cannot be asked"),
    ] {
        for confine in [&Confine::default(), &confine] {
            let text = refusal(why, "/outside/secret", Access::Read, &roots, confine);
            assert!(text.contains("/outside/secret"), "{text}");
            let forged = refusal(why, sent, Access::Read, &roots, confine);
            assert!(
                !forged.contains('\n') && !forged.contains('\u{202E}'),
                "{forged}"
            );
            let long = refusal(why, &"x".repeat(1_000_000), Access::Write, &roots, confine);
            assert!(long.len() < 2048, "{} bytes", long.len());
        }
    }
    assert_eq!(
        refusal(
            Refusal::CannotAsk("nobody can be asked"),
            "/o",
            Access::Write,
            &roots,
            &confine
        ),
        "/o is outside the workspace roots (/nonexistent-rootgrep/app), and nobody can be \
         asked. To write it, add its directory as a root in your MCP client, or start rootgrep \
         with that directory as a DIR argument (within the directories this server is \
         confined to: /nonexistent-rootgrep; the operator's --confine setting cannot be \
         widened)."
    );
}

fn tree_of(text: &str) -> Tree {
    Tree {
        root: path("/w"),
        text: text.into(),
        shown: 4,
        dirs_shown: 1,
        max_depth: 2,
        depth_cuts: Vec::new(),
        limit_cut: None,
        errors: 0,
        skipped_ignore_files: Vec::new(),
    }
}

#[test]
fn a_complete_tree_has_no_footer() {
    assert_eq!(tree(&tree_of("/w/\n  a\n")), "/w/\n  a\n");
    assert_eq!(
        depth_mark(
            Count {
                n: 12,
                exact: false
            },
            3
        ),
        " … 12+ entries not shown (max_depth 3)"
    );
}

#[test]
fn a_tree_footer_says_every_cut_and_how_to_see_past_it() {
    let mut cut = tree_of("/w/\n");
    cut.limit_cut = Some(LimitCut {
        reason: StopReason::Bytes,
        more: Count {
            n: 5000,
            exact: false,
        },
        after: Some(path("/w/b")),
    });
    let deep = |name: &str| DepthCut {
        path: path(name),
        entries: None,
    };
    cut.depth_cuts = vec![deep("/w/c"), deep("/w/d")];
    cut.errors = 2;
    cut.skipped_ignore_files = (0..10)
        .map(|i| SkippedIgnoreFile {
            path: PathBuf::from(format!("/w/{i}/.ignore")),
            dir: PathBuf::from(format!("/w/{i}")),
            reason: "a FIFO, not a regular file".into(),
        })
        .collect();
    let text = tree(&cut);
    let footer = text.strip_prefix("/w/\n").unwrap();
    assert!(
        footer.starts_with(
            "[output size limit reached: 5000+ more entries not shown after /w/b; call \
             directory_tree on a subdirectory or raise head_limit; 2 directories at max_depth 2 \
             not expanded (marked …); raise max_depth or call directory_tree on one of them; 2 \
             unreadable entries skipped; skipped ignore file /w/0/.ignore: a FIFO, not a \
             regular file; "
        ),
        "{footer}"
    );
    assert!(
        footer.ends_with(
            "skipped ignore file /w/7/.ignore: a FIFO, not a regular file; and 2 more skipped \
             ignore files]\n"
        ),
        "{footer}"
    );

    let mut limited = tree_of("/w/\n");
    limited.limit_cut = Some(LimitCut {
        reason: StopReason::Limit,
        more: Count { n: 3, exact: true },
        after: None,
    });
    limited.depth_cuts = vec![deep("/w/c")];
    assert_eq!(
        tree(&limited),
        "/w/\n[entry limit of 4 reached: 3 more entries not shown; call directory_tree on a \
         subdirectory or raise head_limit; 1 directory at max_depth 2 not expanded (marked …); \
         raise max_depth or call directory_tree on it]\n"
    );
}
