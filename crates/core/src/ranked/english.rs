//! A query's English words, read as a search engine reads prose: the function words
//! (`the`, `is`, `when`…) left out, and the words kept met in their other inflections.
//!
//! Function words match most documents of a codebase (its comments say them) and say
//! nothing of where the answer is, yet a pasted bug report is full of them: kept, they
//! add up in long definitions full of comments. Only a query's plain words are left out
//! (a code word's whole token, `is_empty`, stands), and a query of nothing else keeps them.
//!
//! The other inflections of a word (`cancelled` → `cancel`, `cancels`, `canceling`…) let a
//! question's words meet the code's forms of them. The index keeps no term text (64-bit
//! hashes only) and cannot be asked which terms share a stem, so the forms are made from
//! the query side: every base the word may have (its suffix `-s`, `-es`, `-ed`, `-ing`
//! taken off, a doubled consonant undone, a lost `e` or `y` put back), then every
//! inflection of each base. Most of them name nothing in the index and cost one
//! dictionary lookup; those that exist count as the word itself in its document frequency
//! and term frequency (`score.rs`), the way a stemmed index would count them, with half
//! the weight ([`FORM_WEIGHT`]). Only plain lowercase ASCII words of [`MIN_LEN`] letters or
//! more have forms: short words, numbers and a code-like word's whole token stand as
//! written.
//!
//! Both measured on the development sets of issue #39 (DECISIONS.md, "Function words,
//! inflections and a report's title in a query").

/// What a form's occurrence counts for beside the word's own (1).
pub(crate) const FORM_WEIGHT: f32 = 0.5;

/// English function words, sorted (a binary search reads them).
const FUNCTION_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
    "each", "even", "for", "from", "had", "has", "have", "he", "here", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "may", "me", "might", "more", "most", "must", "my", "no",
    "not", "now", "of", "on", "one", "only", "or", "other", "our", "out", "over", "per", "same",
    "she", "should", "since", "so", "some", "still", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "us", "very",
    "via", "was", "way", "we", "were", "what", "when", "where", "which", "while", "who", "why",
    "will", "with", "would", "yet", "you", "your",
];

/// Whether `word` (lowercase) is an English function word.
pub(crate) fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.binary_search(&word).is_ok()
}

/// Shortest word that has forms, and shortest base kept.
const MIN_LEN: usize = 4;
const MIN_BASE: usize = 3;
/// Forms kept at most per word.
const MAX_FORMS: usize = 24;

/// The other inflections of `word` (never `word` itself), or none.
pub(crate) fn forms(word: &str) -> Vec<String> {
    if word.len() < MIN_LEN || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for base in bases(word) {
        if base.len() < MIN_BASE {
            continue;
        }
        for form in inflections(&base) {
            if form != word && !out.contains(&form) && out.len() < MAX_FORMS {
                out.push(form);
            }
        }
    }
    out
}

/// What `word` may be an inflection of (itself included).
fn bases(word: &str) -> Vec<String> {
    let mut out = vec![word.to_string()];
    let cut = |n: usize| word[..word.len() - n].to_string();
    if let Some(stem) = word.strip_suffix("ies") {
        out.push(format!("{stem}y"));
    } else if word.ends_with("es") {
        out.push(cut(2));
        out.push(cut(1));
    } else if word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        out.push(cut(1));
    }
    if let Some(stem) = word.strip_suffix("ied") {
        out.push(format!("{stem}y"));
    } else if let Some(stem) = word.strip_suffix("ed") {
        out.push(stem.to_string());
        out.push(cut(1));
        out.extend(undoubled(stem));
    }
    if let Some(stem) = word.strip_suffix("ing") {
        out.push(stem.to_string());
        out.push(format!("{stem}e"));
        out.extend(undoubled(stem));
    }
    out
}

/// `stem` with a doubled final consonant made single (`cancell` → `cancel`).
fn undoubled(stem: &str) -> Option<String> {
    let b = stem.as_bytes();
    let n = b.len();
    (n >= 2 && b[n - 1] == b[n - 2] && !is_vowel(b[n - 1])).then(|| stem[..n - 1].to_string())
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// The inflections of `base` (itself included).
fn inflections(base: &str) -> Vec<String> {
    let mut out = vec![base.to_string()];
    let b = base.as_bytes();
    let last = b[b.len() - 1];
    if let Some(stem) = base.strip_suffix('e') {
        out.extend([format!("{base}s"), format!("{base}d"), format!("{stem}ing")]);
    } else if let Some(stem) = base.strip_suffix('y').filter(|_| !is_vowel(b[b.len() - 2])) {
        out.extend([
            format!("{stem}ies"),
            format!("{stem}ied"),
            format!("{base}ing"),
        ]);
    } else {
        let sibilant =
            matches!(last, b's' | b'x' | b'z') || base.ends_with("ch") || base.ends_with("sh");
        out.push(match sibilant {
            true => format!("{base}es"),
            false => format!("{base}s"),
        });
        out.extend([format!("{base}ed"), format!("{base}ing")]);
        // A short final syllable doubles its consonant (`cancel` → `cancelled`, `run` →
        // `running`): both spellings exist in code.
        if !is_vowel(last) && is_vowel(b[b.len() - 2]) && !matches!(last, b'w' | b'x' | b'y') {
            let c = last as char;
            out.extend([format!("{base}{c}ed"), format!("{base}{c}ing")]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(word: &str, form: &str) -> bool {
        forms(word).iter().any(|f| f == form)
    }

    #[test]
    fn the_function_words_are_sorted_and_found() {
        assert!(FUNCTION_WORDS.windows(2).all(|w| w[0] < w[1]));
        for word in ["the", "is", "when", "a", "your"] {
            assert!(is_function_word(word), "{word}");
        }
        for word in ["timer", "error", "fd", "close", "The"] {
            assert!(!is_function_word(word), "{word}");
        }
    }

    #[test]
    fn inflections_meet_from_either_side() {
        for (a, b) in [
            ("cancelled", "cancel"),
            ("cancel", "cancelled"),
            ("canceled", "cancels"),
            ("parsing", "parse"),
            ("parse", "parsing"),
            ("parsed", "parses"),
            ("entries", "entry"),
            ("entry", "entries"),
            ("matches", "match"),
            ("match", "matches"),
            ("running", "runs"),
            ("timeouts", "timeout"),
            ("configured", "configure"),
            ("copied", "copy"),
        ] {
            assert!(has(a, b), "{a} -> {b}: {:?}", forms(a));
        }
    }

    #[test]
    fn short_words_numbers_and_identifiers_stand_as_written() {
        for word in ["run", "is", "x86s", "foo_bar", "Parse", "héllo"] {
            assert!(forms(word).is_empty(), "{word}: {:?}", forms(word));
        }
        assert!(!forms("process").contains(&"proces".to_string()));
        assert!(!forms("status").contains(&"statu".to_string()));
        assert!(forms("parsing").iter().all(|f| f != "parsing"));
        assert!(forms("cancellation").len() <= MAX_FORMS);
    }
}
