//! Quoted text in a query, as agents paste error messages and log lines: `"connection
//! reset by peer"`, `` `failed to open %s` ``. Each phrase is looked up literally (the
//! grep engine, through the content index when there is one) and the lines holding it
//! become line references (`refs.rs`) that weigh: the definition that prints the message
//! gains, without being put first (a bug report's quoted output is often printed far from
//! the fix; DECISIONS.md).
//! A phrase found on more than [`MAX_LINES`] lines says too little and is left out.

use std::path::PathBuf;

use super::prefilter::root_for;
use super::terms::CodeRef;
use crate::search::{self, CaseMode, GrepEntries, GrepQuery, Indexes, OutputMode, SearchError};
use crate::walk::Control;

/// Phrases looked up at most.
pub(crate) const MAX_PHRASES: usize = 4;
/// Lines a phrase may be found on and still name them.
pub(crate) const MAX_LINES: usize = 16;
/// Shortest and longest phrase looked up, in characters.
const LENGTHS: std::ops::RangeInclusive<usize> = 8..=200;

/// The quoted phrases of `text` (between `"` or backticks, on one line, 8 to 200
/// characters, holding something besides letters, digits and `_`: a lone identifier is
/// already a code-like word), first met first, at most [`MAX_PHRASES`].
pub(crate) fn quoted(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        for quote in ['"', '`'] {
            let mut pieces = line.split(quote);
            pieces.next();
            // Odd pieces are inside quotes; a last piece without its closing quote is not.
            let inside: Vec<&str> = pieces.collect();
            for (i, piece) in inside.iter().enumerate() {
                let closed = i + 1 < inside.len();
                let phrase = piece.trim();
                let ident = phrase.chars().all(|c| c.is_alphanumeric() || c == '_');
                if i % 2 == 0
                    && closed
                    && LENGTHS.contains(&phrase.chars().count())
                    && !ident
                    && !out.iter().any(|p| p == phrase)
                {
                    out.push(phrase.to_string());
                }
            }
        }
        if out.len() >= MAX_PHRASES {
            break;
        }
    }
    out.truncate(MAX_PHRASES);
    out
}

/// The lines holding each phrase under `targets`, as references to root-relative paths.
pub(crate) fn phrase_refs(
    phrases: &[String],
    targets: &[PathBuf],
    roots: &[PathBuf],
    index: Option<Indexes<'_>>,
    control: &Control,
    threads: usize,
) -> Result<Vec<CodeRef>, SearchError> {
    let mut out = Vec::new();
    for phrase in phrases {
        if control.is_cancelled() {
            break;
        }
        let mut grep = GrepQuery::new(phrase.as_str());
        grep.fixed_strings = true;
        grep.case = CaseMode::Sensitive;
        grep.mode = OutputMode::Content;
        grep.limit = Some(MAX_LINES + 1);
        grep.max_filesize = Some(super::build::MAX_INDEX_BYTES);
        grep.threads = threads;
        let outcome = search::grep_with(&grep, targets, index, control)?;
        let GrepEntries::Matches(matches) = outcome.entries else {
            continue;
        };
        if matches.len() > MAX_LINES {
            continue;
        }
        for m in matches {
            let root = root_for(&m.path, roots);
            let Ok(rel) = m.path.strip_prefix(&root) else {
                continue;
            };
            let components = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(CodeRef {
                components,
                line: u32::try_from(m.line).ok(),
                firm: false,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_phrases_as_agents_paste_them() {
        assert_eq!(
            quoted("fails with \"connection reset by peer\" then `failed to open %s`"),
            ["connection reset by peer", "failed to open %s"]
        );
        // Too short, a lone identifier, unclosed, across lines: not phrases.
        assert!(quoted("\"short\" `parse_yaml_file` \"never closed").is_empty());
        assert!(quoted("\"first line\nsecond line\"").is_empty());
        let many: String = (0..10)
            .map(|i| format!("\"message number {i}\" "))
            .collect();
        assert_eq!(quoted(&many).len(), MAX_PHRASES);
    }
}
