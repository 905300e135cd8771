//! Ranked search without an index (before the root's index is built, with `--no-watch`,
//! in `rootgrep call`): the query's most telling words are grepped one by one (each
//! word's file count is its rarity), the files holding the rarest ones are read into a
//! small segment on the spot, and that is ranked like the index would be. The answer says
//! it is partial: only those candidates were ranked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::terms::Query;
use crate::search::Indexes;
use crate::search::{self, CaseMode, GrepEntries, GrepQuery, OutputMode, SearchError};
use crate::walk::Control;

/// Words grepped at most.
const MAX_WORDS: usize = 6;
/// Files read and ranked at most.
pub(crate) const MAX_CANDIDATES: usize = 200;

/// Words too common in prose to tell files apart (the index needs no such list: its idf
/// makes them cheap).
const COMMON: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "when", "into", "not", "are", "was",
    "but", "have", "has", "fix", "fixes", "fixed", "add", "use", "should", "would", "can", "will",
    "its", "also", "only", "then", "than", "which", "there", "after", "before",
];

/// The candidate files for `query` under `targets`, best first, at most
/// [`MAX_CANDIDATES`], and how many files held any of the words.
pub(crate) fn candidates(
    query: &Query,
    targets: &[PathBuf],
    index: Option<Indexes<'_>>,
    control: &Control,
    threads: usize,
) -> Result<(Vec<PathBuf>, usize), SearchError> {
    let words = telling_words(query);
    let mut weight: HashMap<PathBuf, f64> = HashMap::new();
    let mut per_word: Vec<Vec<PathBuf>> = Vec::new();
    for word in &words {
        if control.is_cancelled() {
            break;
        }
        let mut grep = GrepQuery::new(word.as_str());
        grep.fixed_strings = true;
        grep.case = CaseMode::Insensitive;
        grep.mode = OutputMode::FilesWithMatches;
        grep.max_filesize = Some(super::build::MAX_INDEX_BYTES);
        grep.threads = threads;
        let outcome = search::grep_with(&grep, targets, index, control)?;
        if let GrepEntries::Files(files) = outcome.entries {
            per_word.push(files);
        }
    }
    let all: usize = per_word.iter().map(Vec::len).max().unwrap_or(0).max(1);
    for files in &per_word {
        // A word in few files says more: weigh each of its files by its rarity.
        let rarity = ((all as f64 + 1.0) / (files.len() as f64 + 0.5)).ln() + 0.1;
        for file in files {
            *weight.entry(file.clone()).or_insert(0.0) += rarity;
        }
    }
    let found = weight.len();
    let mut ranked: Vec<(PathBuf, f64)> = weight.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(MAX_CANDIDATES);
    Ok((ranked.into_iter().map(|(p, _)| p).collect(), found))
}

/// The words worth a grep: code-like ones first, then the longest; words common in prose
/// only when fewer than 3 others are left; at most [`MAX_WORDS`].
fn telling_words(query: &Query) -> Vec<String> {
    let common = |w: &str| COMMON.contains(&w);
    let mut words: Vec<(bool, f32, usize, &str)> = (query.terms.iter())
        .filter(|t| t.text.chars().count() >= 2)
        .map(|t| (common(&t.text), t.weight, t.text.len(), t.text.as_str()))
        .collect();
    words.sort_by(|a, b| {
        (a.0.cmp(&b.0))
            .then(b.1.total_cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then(a.3.cmp(b.3))
    });
    let telling = words.iter().filter(|w| !w.0 && w.2 >= 3).count();
    let mut out: Vec<String> = Vec::new();
    for (is_common, _, len, word) in words {
        // Short or common words only when little else is left.
        if telling >= 3 && (is_common || len < 3) {
            continue;
        }
        // A word inside a longer chosen one adds no file (`timer` in `timer_reset`).
        if !out.iter().any(|w| w.contains(word)) {
            out.push(word.to_string());
        }
        if out.len() == MAX_WORDS {
            break;
        }
    }
    if out.is_empty() {
        out.extend(query.terms.iter().take(MAX_WORDS).map(|t| t.text.clone()));
    }
    out
}

/// The root of `roots` holding `path` (the innermost), else the path's parent.
pub(crate) fn root_for(path: &Path, roots: &[PathBuf]) -> PathBuf {
    roots
        .iter()
        .filter(|r| path.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
        .cloned()
        .unwrap_or_else(|| path.parent().unwrap_or(path).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranked::terms::parse_query;

    #[test]
    fn code_words_and_long_words_are_grepped_first() {
        let words = telling_words(&parse_query(
            "fix the timer_reset() when the watchdog fires",
        ));
        assert_eq!(words[0], "timer_reset");
        assert!(words.contains(&"watchdog".to_string()));
        assert!(!words.contains(&"timer".to_string()));
        assert!(!words.contains(&"the".to_string()));
        // `a` is a function word: the query leaves it out (`english.rs`).
        assert_eq!(telling_words(&parse_query("a b")), ["b"]);
        assert_eq!(telling_words(&parse_query("c b")), ["c", "b"]);
        // Common words still count when little else is left.
        assert_eq!(
            telling_words(&parse_query("add two numbers")),
            ["numbers", "two", "add"]
        );
    }
}
