//! [`SearchError`]: the mistakes in a query that the caller (an AI agent) can fix.
//!
//! Only query problems live here. Anything that goes wrong with one file is counted in
//! [`Stats`](super::Stats) instead, because one unreadable file must not hide the results
//! from thousands of good ones. Messages quote the offending input and say what is wrong
//! with it; the fields say which remedy applies (text meant literally, a pattern that
//! needs multi-line matching), for the caller to word with its own argument names.

use std::fmt;

/// A query that cannot run as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// The pattern does not compile. `message` is the regex engine's own text, which
    /// includes the position of the problem (a caret under the pattern).
    InvalidRegex {
        pattern: String,
        message: String,
        /// The pattern holds brackets the engine read as syntax: it may be text meant
        /// literally.
        maybe_literal: bool,
        /// The pattern has a `\n`, which lines matched one at a time cannot hold.
        needs_multiline: bool,
    },
    /// A pattern too costly to compile (too long, or a compiled program over the size
    /// limit): refused before any work. The pattern itself is not repeated (it may be huge).
    PatternTooLarge {
        bytes: usize,
        message: String,
        /// The compiled program, not the text, is over the limit: the same text searched
        /// literally would compile small.
        compiled: bool,
    },
    /// A glob (from `globs` or the glob tool's pattern) does not parse, or is too long or
    /// complex to compile.
    InvalidGlob { glob: String, message: String },
    /// A file type name that ripgrep does not know. `suggestions` lists valid names,
    /// similar ones first.
    UnknownType {
        name: String,
        suggestions: Vec<String>,
    },
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::InvalidRegex {
                pattern, message, ..
            } => write!(f, "invalid regex {pattern:?}: {message}"),
            SearchError::PatternTooLarge { bytes, message, .. } => {
                write!(f, "regex refused ({bytes} bytes): {message}")
            }
            SearchError::InvalidGlob { glob, message } => {
                // A refused glob may be megabytes long: quote its start only.
                let shown: String = glob.chars().take(200).collect();
                let more = if shown.len() < glob.len() { "…" } else { "" };
                write!(f, "invalid glob {shown:?}{more}: {message}")
            }
            SearchError::UnknownType { name, suggestions } => write!(
                f,
                "unknown file type {name:?}; valid types include: {}",
                suggestions.join(", ")
            ),
        }
    }
}

impl std::error::Error for SearchError {}

/// grep-regex parses `(?:PATTERN)`, so regex-syntax's message shows that wrapped pattern
/// with its caret offset by three columns. Show the agent its own pattern instead: strip
/// the wrapper and shift the caret back; when the caret points into the wrapper itself
/// (an unbalanced parenthesis in the pattern), say so instead of pointing at nothing.
/// With whether the pattern may be text meant literally (it holds brackets the engine
/// parsed as syntax: most agents' regex mistakes are literal text).
pub(crate) fn regex_message(pattern: &str, message: &str) -> (String, bool) {
    let wrapped = format!("    (?:{pattern})");
    let lines: Vec<&str> = message.lines().collect();
    let Some(at) = lines.iter().position(|line| *line == wrapped) else {
        return (message.to_owned(), false);
    };
    let Some(caret) = lines
        .get(at + 1)
        .filter(|l| l.trim_start().starts_with('^'))
    else {
        return (message.to_owned(), false);
    };
    let column = caret.len() - caret.trim_start().len();
    let mut out: Vec<String> = lines[..at].iter().map(|l| l.to_string()).collect();
    out.push(format!("    {pattern}"));
    let inner = 7..7 + pattern.len();
    let rest = &lines[at + 2..];
    let repetition = rest.iter().any(|l| l.contains("repetition"));
    if inner.contains(&column) {
        out.push(format!(
            "    {}{}",
            " ".repeat(column - 7),
            caret.trim_start()
        ));
    } else if repetition && pattern.contains('{') {
        // The engine blames the end of the pattern for an unclosed `{`.
        out.push("    (a `{` starts a repetition such as `a{2,3}` but is not one here)".to_owned());
    } else {
        out.push("    (an opening or closing parenthesis has no partner)".to_owned());
    }
    out.extend(rest.iter().map(|l| l.to_string()));
    let maybe_literal = pattern.contains(['{', '}', '(', ')', '[', ']']);
    (out.join("\n"), maybe_literal)
}

#[cfg(test)]
mod tests {
    use super::regex_message;

    #[test]
    fn caret_is_moved_onto_the_callers_pattern() {
        let engine = "regex parse error:\n    (?:a{2,1})\n       ^^^^^\nerror: invalid repetition count range, the start must be <= the end";
        assert_eq!(
            regex_message("a{2,1}", engine),
            (
                "regex parse error:\n    a{2,1}\n    ^^^^^\nerror: invalid repetition count range, the start must be <= the end".to_owned(),
                true
            )
        );
    }

    #[test]
    fn unbalanced_parenthesis_is_explained() {
        let engine = "regex parse error:\n    (?:foo(bar)\n    ^\nerror: unclosed group";
        assert_eq!(
            regex_message("foo(bar", engine),
            (
                "regex parse error:\n    foo(bar\n    (an opening or closing parenthesis has no partner)\nerror: unclosed group".to_owned(),
                true
            )
        );
    }

    #[test]
    fn unexpected_shapes_pass_through() {
        assert_eq!(
            regex_message("x", "something else"),
            ("something else".to_owned(), false)
        );
    }
}
