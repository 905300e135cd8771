//! What a hit shows: a definition short enough whole, else its signature and then the
//! lines holding query terms, each line cut, so a page of hits stays a few KiB; and which
//! query terms the document matched. Read from the file when the page is made (the index
//! keeps no text).

use std::collections::HashSet;
use std::path::Path;

use super::build::MAX_INDEX_BYTES;
use super::terms::{self, Query, QueryTerm, Term};
use crate::files::read::{Whole, read_whole};

/// A definition of at most this many lines is shown whole.
pub(crate) const WHOLE_LINES: usize = 12;
/// Lines holding query terms shown at most (besides the signature).
pub(crate) const MATCH_LINES: usize = 8;
/// Lines of a signature at most (it ends at the line opening the body).
const SIGNATURE_LINES: usize = 3;
/// Characters of one shown line at most.
pub(crate) const LINE_CHARS: usize = 160;

/// The lines of a hit that are shown, and what was left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Excerpt {
    /// (1-based line, text), in order; a cut line ends with `…`.
    pub(crate) lines: Vec<(u64, String)>,
    /// Lines of the range not shown.
    pub(crate) omitted: u64,
}

/// Reads lines `line..=end_line` of `path` and picks what to show; `None` when the file
/// cannot be read as text now. Also returns the query terms the range (its comment block
/// above included) holds, in query order.
pub(crate) fn excerpt(
    path: &Path,
    line: u64,
    end_line: u64,
    query: &Query,
    extra: &str,
) -> Option<(Excerpt, Vec<String>)> {
    let text = match read_whole(path, MAX_INDEX_BYTES) {
        Ok(Whole::Text(text)) => text,
        _ => return None,
    };
    let all: Vec<&str> = text.lines().collect();
    let first = (line.max(1) as usize).min(all.len().max(1));
    let last = (end_line as usize).clamp(first, all.len().max(first));
    let range = all.get(first - 1..last).unwrap_or(&[]);
    // A word's other inflections (`english.rs`) show and match as the word.
    let wanted: HashSet<Term> = query.terms.iter().flat_map(QueryTerm::spellings).collect();
    let mut present: HashSet<Term> = HashSet::new();
    let mut holds = |text: &str| {
        let mut any = false;
        terms::tokens(text, &mut |t| {
            let h = terms::hash(t);
            if wanted.contains(&h) {
                present.insert(h);
                any = true;
            }
        });
        any
    };
    holds(extra);
    // The comment block right above counts for what matched (it is the comment field).
    let mut above = first.saturating_sub(1);
    while above >= 1 && is_comment(all[above - 1]) {
        holds(all[above - 1]);
        above -= 1;
    }
    let hits: Vec<bool> = range.iter().map(|l| holds(l)).collect();
    let matched: Vec<String> = (query.terms.iter())
        .filter(|t| t.spellings().any(|h| present.contains(&h)))
        .map(|t| t.text.clone())
        .collect();
    let mut shown: Vec<usize> = Vec::new();
    if range.len() <= WHOLE_LINES {
        shown.extend(0..range.len());
    } else {
        let signature = signature_lines(range);
        shown.extend(0..signature);
        shown.extend(
            (signature..range.len())
                .filter(|&i| hits[i])
                .take(MATCH_LINES),
        );
    }
    let lines = shown
        .iter()
        .map(|&i| ((first + i) as u64, cut(range[i].trim_end())))
        .collect::<Vec<_>>();
    let omitted = (range.len() - lines.len()) as u64;
    Some((Excerpt { lines, omitted }, matched))
}

/// Lines of the signature: up to the one opening the body (`{`, a trailing `:`), at
/// most [`SIGNATURE_LINES`].
fn signature_lines(range: &[&str]) -> usize {
    for (i, line) in range.iter().take(SIGNATURE_LINES).enumerate() {
        let t = line.trim_end();
        if t.contains('{') || t.ends_with(':') || t.ends_with(';') {
            return i + 1;
        }
    }
    1
}

fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    ["///", "//!", "//", "/*", "*", "*/", "#"]
        .iter()
        .any(|m| t.starts_with(m))
}

/// `line` cut to [`LINE_CHARS`] characters, marked.
fn cut(line: &str) -> String {
    match line.char_indices().nth(LINE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranked::terms::parse_query;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn short_definitions_come_whole() {
        let file = write("/* resets it */\nvoid reset(void)\n{\n  go();\n}\n");
        let (ex, matched) = excerpt(file.path(), 2, 5, &parse_query("resets the go"), "").unwrap();
        assert_eq!(ex.lines.len(), 4);
        assert_eq!(ex.omitted, 0);
        assert_eq!(ex.lines[0], (2, "void reset(void)".to_string()));
        assert_eq!(matched, ["resets", "go"]);
    }

    #[test]
    fn long_definitions_show_the_signature_and_matching_lines() {
        let mut text = String::from("int f(int a,\n      int b)\n{\n");
        for i in 0..100 {
            text.push_str(&format!("  step{i}();\n"));
        }
        text.push_str(&format!("  {}\n}}\n", "timer ".repeat(100)));
        let file = write(&text);
        let (ex, _) = excerpt(file.path(), 1, 105, &parse_query("timer step7"), "").unwrap();
        let numbers: Vec<u64> = ex.lines.iter().map(|l| l.0).collect();
        assert_eq!(numbers, [1, 2, 3, 11, 104]);
        assert!(ex.lines[4].1.ends_with('…'));
        assert_eq!(ex.omitted, 100);
    }

    #[test]
    fn a_range_past_the_end_is_clamped() {
        let file = write("a\nb\n");
        let (ex, _) = excerpt(file.path(), 5, 9, &parse_query("a"), "").unwrap();
        assert!(ex.lines.len() <= 1);
        assert!(excerpt(Path::new("/no/such/file"), 1, 2, &parse_query("a"), "").is_none());
    }
}
