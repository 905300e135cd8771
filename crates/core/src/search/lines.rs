//! Turning raw line bytes into the text an agent sees: terminator stripped, lossy UTF-8,
//! and lines over the character limit cut to a window with markers saying how much went.
//!
//! Why cut: one minified file can hold a multi-megabyte "line", and an answer has a small
//! byte budget. The window is centred on the first match of the line so the agent still
//! sees what matched; context lines keep their beginning. Cuts fall on `char` boundaries
//! and are measured in characters, because that is what the limit (500) is stated in.

use std::borrow::Cow;
use std::ops::Range;

/// Removes one trailing `\n` or `\r\n`.
pub(crate) fn strip_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Text of a context line: lossy UTF-8, terminator stripped, cut after `max_chars`.
pub(crate) fn context_text(line: &[u8], max_chars: usize) -> String {
    cut_around(&lossy(strip_terminator(line)), 0, 0, max_chars)
}

/// The bytes as text, invalid sequences replaced. Source lines are nearly always valid
/// UTF-8, and `str::from_utf8` checks that several times faster than the lossy decoder
/// walks it, so it is tried first.
fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Text and 1-based character column of a matching line, cut around `found` (the byte
/// range of the first match within `line`, when known).
pub(crate) fn match_text(
    line: &[u8],
    found: Option<Range<usize>>,
    max_chars: usize,
) -> (String, u64) {
    let line = strip_terminator(line);
    let found = found.map(|r| r.start.min(line.len())..r.end.min(line.len()));
    let (focus, focus_len) = match &found {
        Some(r) => (char_count(&line[..r.start]), char_count(&line[r.clone()])),
        None => (0, 0),
    };
    let text = lossy(line);
    (
        cut_around(&text, focus, focus_len, max_chars),
        focus as u64 + 1,
    )
}

/// Characters the bytes decode to (invalid bytes count as one replacement character each,
/// as `from_utf8_lossy` renders them, so positions agree with the text we return).
fn char_count(bytes: &[u8]) -> usize {
    if bytes.is_ascii() {
        return bytes.len();
    }
    match lossy(bytes) {
        Cow::Borrowed(s) => s.chars().count(),
        Cow::Owned(s) => s.chars().count(),
    }
}

/// Keeps at most `max_chars` characters of `text`, a window that shows the `focus_len`
/// characters starting at character `focus` with as much around them as fits, and marks
/// each cut end with `[… N chars cut …]`. `max_chars == 0` means no limit.
pub fn cut_around(text: &str, focus: usize, focus_len: usize, max_chars: usize) -> String {
    // Bytes bound characters from above, so short lines skip the character count.
    if max_chars == 0 || text.len() <= max_chars {
        return text.to_owned();
    }
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let slack = max_chars.saturating_sub(focus_len) / 2;
    let start = focus.saturating_sub(slack).min(total - max_chars);
    let end = start + max_chars;
    let mut out = String::with_capacity(max_chars * 4 + 48);
    if start > 0 {
        out.push_str(&marker(start));
    }
    out.push_str(char_slice(text, start, end));
    if end < total {
        out.push_str(&marker(total - end));
    }
    out
}

/// The cut marker; one format everywhere so agents (and tests) can recognise it.
pub fn marker(cut: usize) -> String {
    format!("[… {cut} chars cut …]")
}

/// The substring between two character positions.
fn char_slice(text: &str, start: usize, end: usize) -> &str {
    let mut bounds = text.char_indices().map(|(i, _)| i).chain([text.len()]);
    let from = bounds.nth(start).unwrap_or(text.len());
    let to = if end > start {
        bounds.nth(end - start - 1).unwrap_or(text.len())
    } else {
        from
    };
    &text[from..to]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_lf_and_crlf_only_once() {
        assert_eq!(strip_terminator(b"a\r\n"), b"a");
        assert_eq!(strip_terminator(b"a\n"), b"a");
        assert_eq!(strip_terminator(b"a\n\n"), b"a\n");
        assert_eq!(strip_terminator(b"a"), b"a");
    }

    #[test]
    fn short_lines_are_kept_whole() {
        assert_eq!(cut_around("hello", 0, 0, 500), "hello");
        assert_eq!(cut_around("héllo", 0, 0, 5), "héllo");
    }

    #[test]
    fn context_lines_keep_their_start() {
        let text = "x".repeat(1000);
        let cut = cut_around(&text, 0, 0, 10);
        assert_eq!(cut, format!("{}[… 990 chars cut …]", "x".repeat(10)));
    }

    #[test]
    fn window_is_centred_on_the_match_with_markers_both_sides() {
        let text = format!("{}NEEDLE{}", "a".repeat(1000), "b".repeat(1000));
        let (out, column) = match_text(text.as_bytes(), Some(1000..1006), 20);
        assert_eq!(column, 1001);
        assert_eq!(
            out,
            "[… 993 chars cut …]aaaaaaaNEEDLEbbbbbbb[… 993 chars cut …]"
        );
    }

    #[test]
    fn window_at_the_end_has_only_a_leading_marker() {
        let text = format!("{}END", "a".repeat(100));
        let (out, _) = match_text(text.as_bytes(), Some(100..103), 10);
        assert_eq!(out, "[… 93 chars cut …]aaaaaaaEND");
    }

    #[test]
    fn cuts_fall_on_char_boundaries_and_count_chars() {
        let text = format!("{}é{}", "é".repeat(50), "ü".repeat(50));
        let (out, column) = match_text(text.as_bytes(), Some(100..102), 4);
        assert_eq!(column, 51);
        assert_eq!(out, "[… 49 chars cut …]ééüü[… 48 chars cut …]");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_columns_agree() {
        let (out, column) = match_text(b"\xffab\n", Some(1..2), 500);
        assert_eq!(out, "\u{fffd}ab");
        assert_eq!(column, 2);
    }
}
