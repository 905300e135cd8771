//! [`SearchError`]: the mistakes in a query that the caller (an AI agent) can fix.
//!
//! Only query problems live here. Anything that goes wrong with one file is counted in
//! [`Stats`](super::Stats) instead, because one unreadable file must not hide the results
//! from thousands of good ones. Messages are written to be shown to the agent as they are:
//! they quote the offending input and say what to change.

use std::fmt;

/// A query that cannot run as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// The pattern does not compile. `message` is the regex engine's own text, which
    /// includes the position of the problem (a caret under the pattern).
    InvalidRegex { pattern: String, message: String },
    /// A pattern too costly to compile (too long, or a compiled program over the size
    /// limit): refused before any work. The pattern itself is not repeated (it may be huge).
    PatternTooLarge { bytes: usize, message: String },
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
            SearchError::InvalidRegex { pattern, message } => {
                write!(f, "invalid regex {pattern:?}: {message}")?;
                if message.contains("not allowed") && pattern.contains("\\n") {
                    write!(f, "\n(set multiline to match across lines)")?;
                }
                Ok(())
            }
            SearchError::PatternTooLarge { bytes, message } => {
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
pub(crate) fn regex_message(pattern: &str, message: &str) -> String {
    let wrapped = format!("    (?:{pattern})");
    let lines: Vec<&str> = message.lines().collect();
    let Some(at) = lines.iter().position(|line| *line == wrapped) else {
        return message.to_owned();
    };
    let Some(caret) = lines
        .get(at + 1)
        .filter(|l| l.trim_start().starts_with('^'))
    else {
        return message.to_owned();
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
    // Most agents' regex mistakes are literal text: say how to search for it as is.
    if pattern.contains(['{', '}', '(', ')', '[', ']']) {
        out.push(
            "hint: to search for this text literally, set fixed_strings: true (or escape \
             the special characters with a backslash, e.g. \\{ or \\()"
                .to_owned(),
        );
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::regex_message;

    #[test]
    fn caret_is_moved_onto_the_callers_pattern() {
        let engine = "regex parse error:\n    (?:a{2,1})\n       ^^^^^\nerror: invalid repetition count range, the start must be <= the end";
        assert_eq!(
            regex_message("a{2,1}", engine),
            "regex parse error:\n    a{2,1}\n    ^^^^^\nerror: invalid repetition count range, the start must be <= the end\nhint: to search for this text literally, set fixed_strings: true (or escape the special characters with a backslash, e.g. \\{ or \\()"
        );
    }

    #[test]
    fn unbalanced_parenthesis_is_explained() {
        let engine = "regex parse error:\n    (?:foo(bar)\n    ^\nerror: unclosed group";
        assert_eq!(
            regex_message("foo(bar", engine),
            "regex parse error:\n    foo(bar\n    (an opening or closing parenthesis has no partner)\nerror: unclosed group\nhint: to search for this text literally, set fixed_strings: true (or escape the special characters with a backslash, e.g. \\{ or \\()"
        );
    }

    #[test]
    fn unexpected_shapes_pass_through() {
        assert_eq!(regex_message("x", "something else"), "something else");
    }
}
