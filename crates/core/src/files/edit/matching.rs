//! Finding `old_string` in the text: exact spans (with `\n` in the needle matching `\r\n` in
//! the file, see the module above), counting and listing occurrences for the uniqueness
//! check, the replacement that keeps each span's line ending, and the near-match search
//! (whitespace collapsed, line-number prefixes stripped) for the not-found text.

use super::*;

/// How matches are counted: every occurrence (for the uniqueness check: `aa` twice in
/// `aaa`), or left to right without overlap (what `replace_all` replaces).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Count {
    Overlapping,
    NonOverlapping,
}

/// What [`spans_of`] found: the number of matches and the byte spans of the first few.
pub(super) struct Spans {
    pub(super) count: usize,
    pub(super) first: Vec<(usize, usize)>,
}

/// Where `old` matches in `text`: the number of matches and the byte spans of the first
/// `keep` of them, ascending.
///
/// Line endings: an `old` that holds a `\r\n` is matched exactly as given (the model meant
/// those bytes), unless the file has no `\r\n` at all (then its line breaks are taken as
/// `\n`, the only kind there is). An `old` whose line breaks are all `\n` matches each of
/// them against `\n` or `\r\n` in a file that has `\r\n` lines (models send `\n`
/// whatever the file has): in a mixed file, `key\nval` then matches both `key\nval` and
/// `key\r\nval`, and two such places are ambiguous rather than one silently chosen.
/// Anything else (a bare `\r`, no line break) matches exactly.
pub(super) fn spans_of(
    text: &str,
    old: &str,
    how: Count,
    keep: usize,
    stop: &AtomicBool,
) -> Option<Spans> {
    let file_has_crlf = text.contains("\r\n");
    if old.contains("\r\n") && !file_has_crlf {
        return spans_of(text, &old.replace("\r\n", "\n"), how, keep, stop);
    }
    let flexible = file_has_crlf && !old.contains('\r') && old.contains('\n');
    if !flexible {
        return exact_spans(text, old, how, keep, stop);
    }
    // Match in the text with every `\r\n` read as `\n`, then map the spans back.
    // `crs[k]`: the offset in `plain` of the k-th `\n` that was a `\r\n`.
    let mut plain = String::with_capacity(text.len());
    let mut crs = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("\r\n") {
        plain.push_str(&rest[..at]);
        crs.push(plain.len());
        plain.push('\n');
        rest = &rest[at + 2..];
    }
    plain.push_str(rest);
    let found = exact_spans(&plain, old, how, keep, stop)?;
    // An offset in `plain` is the same offset in `text` plus one for each `\r` dropped
    // before it; a span that starts at a `\n` that was `\r\n` starts at its `\r`.
    let back = |at: usize| at + crs.partition_point(|&cr| cr < at);
    Some(Spans {
        count: found.count,
        first: found
            .first
            .iter()
            .map(|&(a, b)| (back(a), back(b)))
            .collect(),
    })
}

/// The exact matches of `needle` (see [`Count`]).
pub(super) fn exact_spans(
    text: &str,
    needle: &str,
    how: Count,
    keep: usize,
    stop: &AtomicBool,
) -> Option<Spans> {
    let spans = |starts: &[usize]| starts.iter().map(|&a| (a, a + needle.len())).collect();
    match how {
        Count::Overlapping => {
            let found = occurrences(text, needle, keep, stop)?;
            Some(Spans {
                count: found.count,
                first: spans(&found.first),
            })
        }
        Count::NonOverlapping => {
            let starts: Vec<usize> = text.match_indices(needle).map(|(a, _)| a).collect();
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            Some(Spans {
                count: starts.len(),
                first: spans(&starts[..starts.len().min(keep)]),
            })
        }
    }
}

/// `text` with each of the ascending, non-overlapping `spans` replaced by `new`, whose line
/// breaks take the ending of the text they replace (all `\r\n`, or all `\n`), or the
/// file's dominant ending when that text has no line break or both kinds.
pub(super) fn replace_spans(
    text: &str,
    spans: &[(usize, usize)],
    new: &str,
    dominant: LineEnding,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for &(a, b) in spans {
        out.push_str(&text[from..a]);
        let replaced = &text[a..b];
        let crlf = replaced.matches("\r\n").count();
        let lf = replaced.matches('\n').count() - crlf;
        let ending = match (crlf, lf) {
            (0, 0) => dominant,
            (_, 0) => LineEnding::Crlf,
            (0, _) => LineEnding::Lf,
            _ => dominant,
        };
        out.push_str(&with_ending(new, ending));
        from = b;
    }
    out.push_str(&text[from..]);
    out
}

/// What a scan for `needle` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Occurrences {
    /// Every occurrence, overlapping ones included.
    pub(super) count: usize,
    /// The start offsets of the first few, ascending.
    pub(super) first: Vec<usize>,
}

/// Counts the occurrences of `needle` in `text`, overlapping ones included, keeping the
/// first `keep` start offsets. Knuth–Morris–Pratt over bytes: linear in `text` and `needle`
/// whatever the number of matches (stepping a substring search one character at a time
/// costs the needle's length per match). A match of valid UTF-8 in valid UTF-8 always
/// starts on a character boundary, so byte offsets are safe to slice at. `None` when `stop`
/// was set meanwhile.
pub(super) fn occurrences(
    text: &str,
    needle: &str,
    keep: usize,
    stop: &AtomicBool,
) -> Option<Occurrences> {
    let (hay, pat) = (text.as_bytes(), needle.as_bytes());
    let mut found = Occurrences {
        count: 0,
        first: Vec::new(),
    };
    if pat.is_empty() || pat.len() > hay.len() {
        return Some(found);
    }
    // failure[i]: length of the longest proper border of pat[..=i].
    let mut failure = vec![0usize; pat.len()];
    let mut k = 0;
    for i in 1..pat.len() {
        while k > 0 && pat[i] != pat[k] {
            k = failure[k - 1];
        }
        if pat[i] == pat[k] {
            k += 1;
        }
        failure[i] = k;
    }
    let mut matched = 0;
    for (i, &byte) in hay.iter().enumerate() {
        if i % (1 << 20) == 0 && stop.load(Ordering::Relaxed) {
            return None;
        }
        while matched > 0 && byte != pat[matched] {
            matched = failure[matched - 1];
        }
        if byte == pat[matched] {
            matched += 1;
        }
        if matched == pat.len() {
            found.count += 1;
            if found.first.len() < keep {
                found.first.push(i + 1 - pat.len());
            }
            matched = failure[matched - 1];
        }
    }
    Some(found)
}

/// 1-based line numbers of ascending byte offsets, in one pass over the text.
pub(super) fn lines_of(text: &str, ascending: &[usize]) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(ascending.len());
    let (mut line, mut from) = (1, 0);
    for &at in ascending {
        line += bytes[from..at].iter().filter(|&&b| b == b'\n').count();
        from = at;
        lines.push(line);
    }
    lines
}

/// 1-based line number of byte offset `at`.
pub(super) fn line_of(text: &str, at: usize) -> usize {
    lines_of(text, &[at])[0]
}

pub(super) fn not_found(
    path: &Path,
    edit: usize,
    of: usize,
    old: &str,
    text: &str,
    original: &str,
) -> EditError {
    let consumed = edit > 1 && {
        let ending = dominant_ending(original);
        original.contains(&with_ending(old, ending)) || original.contains(old)
    };
    let stripped = strip_line_number_prefixes(old);
    let mut near = near_match(text, old);
    if near.is_none()
        && let Some(s) = &stripped
    {
        near = near_match(text, s);
    }
    EditError::NotFound {
        path: path.to_path_buf(),
        edit,
        of,
        near,
        line_number_prefixes: stripped.is_some(),
        consumed_by_earlier_edit: consumed,
    }
}

/// If every non-blank line of `s` starts with a `cat -n` style prefix (optional spaces,
/// digits, then a tab or `→`), return `s` without those prefixes.
pub(super) fn strip_line_number_prefixes(s: &str) -> Option<String> {
    let mut out = Vec::new();
    let mut any = false;
    for line in s.split('\n') {
        if line.trim().is_empty() {
            out.push(line);
            continue;
        }
        let rest = line.trim_start_matches(' ');
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let after = &rest[digits..];
        let body = after
            .strip_prefix('\t')
            .or_else(|| after.strip_prefix('→'))?;
        out.push(body);
        any = true;
    }
    any.then(|| out.join("\n"))
}

/// Whitespace-insensitive search: every whitespace run counts as one space, and leading or
/// trailing whitespace of `needle` is ignored. Returns the real text of the first match.
pub(super) fn near_match(text: &str, needle: &str) -> Option<NearMatch> {
    // The offset map costs 8 bytes per byte of text; a hint is not worth that on huge files.
    if text.len() > NEAR_MATCH_MAX_TEXT {
        return None;
    }
    let (norm_needle, _) = collapse_whitespace(needle.trim());
    if norm_needle.is_empty() {
        return None;
    }
    let (norm_text, map) = collapse_whitespace(text);
    let starts: Vec<usize> = norm_text
        .match_indices(norm_needle.as_str())
        .map(|(i, _)| i)
        .collect();
    let &first = starts.first()?;
    let start = map[first];
    // `map` holds the original offset of each normalised byte; the match's last byte maps
    // into its last original character.
    let last = map[first + norm_needle.len() - 1];
    let end = last + text[last..].chars().next().map_or(1, char::len_utf8);
    let real = &text[start..end];
    Some(NearMatch {
        start_line: line_of(text, start),
        end_line: line_of(text, end.saturating_sub(1).max(start)),
        count: starts.len(),
        text: shorten(real),
    })
}

/// Collapse whitespace runs to one space; also return, for each output byte, the offset of
/// the input byte it came from.
pub(super) fn collapse_whitespace(s: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len());
    let mut in_space = false;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                map.push(i);
                in_space = true;
            }
        } else {
            in_space = false;
            out.push(c);
            map.extend(std::iter::repeat_n(i, c.len_utf8()));
        }
    }
    (out, map)
}

pub(super) fn shorten(s: &str) -> String {
    let mut out = String::new();
    for (n, line) in s.split_inclusive('\n').enumerate() {
        if n == NEAR_MATCH_MAX_LINES || out.len() + line.len() > NEAR_MATCH_MAX_BYTES {
            out.push_str("[… match continues]");
            return out;
        }
        out.push_str(&line.replace("\r\n", "\n"));
    }
    out
}
