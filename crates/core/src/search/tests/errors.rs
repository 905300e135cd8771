//! Query mistakes come back as `SearchError`s whose text lets an agent fix the query.

use super::*;
use crate::search::SearchError;

fn grep_err(query: &GrepQuery) -> SearchError {
    let tree = Tree::new();
    grep(query, &tree.root(), &Control::new()).unwrap_err()
}

#[test]
fn invalid_regex_quotes_the_engine_error_with_position() {
    let err = grep_err(&GrepQuery::new("ab{3,1}c"));
    let SearchError::InvalidRegex {
        pattern,
        message,
        maybe_literal: true,
        needs_multiline: false,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(pattern, "ab{3,1}c");
    assert!(
        message.contains("invalid repetition count range"),
        "{message}"
    );
    // regex-syntax points at the offending span with carets under the caller's pattern.
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines[1..3], ["    ab{3,1}c", "      ^^^^^"], "{message}");
    assert!(
        err.to_string()
            .starts_with("invalid regex \"ab{3,1}c\": regex parse error")
    );
}

#[test]
fn unbalanced_parenthesis_is_reported_against_the_callers_pattern() {
    let err = grep_err(&GrepQuery::new("foo(bar"));
    let text = err.to_string();
    assert!(
        text.contains("unclosed group") && text.contains("    foo(bar\n"),
        "{text}"
    );
    assert!(!text.contains("(?:"), "{text}");
}

#[test]
fn newline_without_multiline_suggests_multiline() {
    let err = grep_err(&GrepQuery::new("foo\\nbar"));
    assert!(
        matches!(
            err,
            SearchError::InvalidRegex {
                needs_multiline: true,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn invalid_glob_names_the_glob_and_the_reason() {
    let query = GrepQuery {
        globs: vec!["*.rs".into(), "src/{a,b".into()],
        ..GrepQuery::new("x")
    };
    let err = grep_err(&query);
    assert_eq!(
        err,
        SearchError::InvalidGlob {
            glob: "src/{a,b".into(),
            message: "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)".into()
        }
    );
    let tree = Tree::new();
    let err = glob(&GlobQuery::new("a/[b"), &tree.root(), &Control::new()).unwrap_err();
    let SearchError::InvalidGlob { glob, message } = err else {
        panic!()
    };
    assert_eq!(glob, "a/[b");
    assert!(message.contains("unclosed character class"), "{message}");
}

#[test]
fn unknown_type_lists_valid_names() {
    let err = grep_err(&GrepQuery {
        types: vec!["pyton".into()],
        ..GrepQuery::new("x")
    });
    let SearchError::UnknownType { name, suggestions } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(name, "pyton");
    assert!(suggestions.iter().any(|s| s == "py"), "{suggestions:?}");
    assert!(err.to_string().contains("valid types include: "));
}

#[test]
fn errors_are_reported_before_any_file_is_touched() {
    let tree = Tree::new();
    tree.file("a", "x\n");
    let control = Control::new();
    let query = GrepQuery {
        types: vec!["nope".into()],
        ..GrepQuery::new("x")
    };
    assert!(grep(&query, &tree.root(), &control).is_err());
    assert_eq!(control.files_examined(), 0);
}
