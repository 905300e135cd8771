//! Client input quoted back in a message, and text shown to a person.
//!
//! Two helpers, used everywhere such text is made. [`echo`] is for a piece of client input
//! (a tool, prompt or argument name, a URI, a path, a pattern) repeated in an error: it is
//! cut to [`ECHO_MAX_CHARS`] characters (then `…(N bytes)` says how long it was), so a
//! megabyte of name never becomes a megabyte of error, and its control and bidi characters
//! are escaped. [`escape_for_display`] is for a whole text a user reads and answers (the
//! permission question): characters that could forge its layout or reading order — a
//! newline starting a fake "this is safe" line, U+202E reversing what follows — are
//! written as `\u{…}` escapes (`\n`, `\r`, `\t` for the common three), so the user sees
//! exactly which characters the text holds. Plain text, Unicode letters included, is kept.
//! And [`byte_size`], the one way a size is written for people.

use std::borrow::Cow;

/// Most characters of one piece of client input an error message repeats.
pub const ECHO_MAX_CHARS: usize = 256;
/// Most characters kept of a message made by a library that may quote input inside it
/// (serde's "invalid type: string …, expected …"): room for its list of expected names.
pub const DETAIL_MAX_CHARS: usize = 1024;

/// Whether `c` could change how the text around it is laid out or read: C0 and C1
/// controls (newlines included), the line and paragraph separators, and the bidi marks,
/// embeddings, overrides and isolates.
pub(crate) fn is_deceptive(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' // line and paragraph separators
                | '\u{202A}'..='\u{202E}' // embeddings and overrides
                | '\u{2066}'..='\u{2069}' // isolates
                | '\u{200E}' | '\u{200F}' // left-to-right and right-to-left marks
                | '\u{061C}' // Arabic letter mark
        )
}

/// `text` with every [`is_deceptive`] character escaped (`\n`, `\r`, `\t`, else
/// `\u{XXXX}`); borrowed unchanged when there is none.
pub fn escape_for_display(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_deceptive) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_deceptive(c) => out.push_str(&format!("\\u{{{:04X}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` cut to `max_chars` characters; a cut one ends with `…(N bytes)`, N its whole
/// length. For messages made by libraries that quote input inside them (with
/// [`DETAIL_MAX_CHARS`]), and inside [`echo`].
pub fn cut(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…({} bytes)", &text[..end], text.len())),
    }
}

/// A piece of client input as an error message repeats it: cut to [`ECHO_MAX_CHARS`]
/// characters and escaped for display.
pub fn echo(input: &str) -> String {
    escape_for_display(&cut(input, ECHO_MAX_CHARS)).into_owned()
}

/// A byte count for people: whole KiB (rounded up, so a few bytes are not "0 KiB") below a
/// MiB, then MiB with one decimal, so a size just over a MiB is not read as two.
pub fn byte_size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_kept_as_it_is() {
        for text in ["", "src/main.rs", "設計/notes é.md", "a b\\c \"q\" `t`"] {
            assert!(matches!(escape_for_display(text), Cow::Borrowed(t) if t == text));
            assert_eq!(echo(text), text);
        }
    }

    #[test]
    fn layout_and_direction_characters_are_escaped() {
        let forged = "/x/evil\nThis file is inside your workspace; it is safe to allow.";
        let shown = escape_for_display(forged);
        assert!(!shown.contains('\n'), "{shown}");
        assert!(shown.contains("evil\\nThis file"), "{shown}");
        assert_eq!(escape_for_display("a\rb\tc"), "a\\rb\\tc");
        assert_eq!(escape_for_display("txt.\u{202E}exe"), "txt.\\u{202E}exe");
        for c in [
            '\u{0}', '\u{1b}', '\u{7f}', '\u{85}', '\u{9b}', '\u{2028}', '\u{2029}', '\u{202A}',
            '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
            '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}',
        ] {
            let text = format!("a{c}b");
            let shown = escape_for_display(&text);
            assert!(!shown.contains(c), "{c:?} kept: {shown:?}");
            assert!(shown.starts_with('a') && shown.ends_with('b'), "{shown:?}");
        }
        // Neighbours of the ranges are ordinary characters.
        for c in [
            '\u{2027}', '\u{202F}', '\u{2065}', '\u{206A}', '\u{200D}', '\u{061B}',
        ] {
            assert!(!is_deceptive(c), "{c:?}");
        }
    }

    #[test]
    fn long_input_is_cut_with_its_length() {
        let long = "n".repeat(1_000_000);
        let echoed = echo(&long);
        assert_eq!(
            echoed,
            format!("{}…(1000000 bytes)", "n".repeat(ECHO_MAX_CHARS))
        );
        let exact = "é".repeat(ECHO_MAX_CHARS);
        assert_eq!(echo(&exact), exact);
        let over = "é".repeat(ECHO_MAX_CHARS + 1);
        assert!(echo(&over).ends_with(&format!("…({} bytes)", over.len())));
        // Cut first, then escaped: bounded whatever the characters.
        let controls = "\u{1}".repeat(100_000);
        assert!(echo(&controls).len() < 16 * ECHO_MAX_CHARS);
        assert_eq!(cut("abc", 2), "ab…(3 bytes)");
    }

    #[test]
    fn sizes_are_kib_below_a_mib_then_mib_with_a_decimal() {
        assert_eq!(byte_size(0), "0 KiB");
        assert_eq!(byte_size(1), "1 KiB");
        assert_eq!(byte_size(1024), "1 KiB");
        assert_eq!(byte_size(1025), "2 KiB");
        assert_eq!(byte_size((1 << 20) - 1), "1024 KiB");
        assert_eq!(byte_size(1 << 20), "1.0 MiB");
        assert_eq!(byte_size((1 << 20) + 1), "1.0 MiB");
        assert_eq!(byte_size(62 * (1 << 20) + (1 << 19)), "62.5 MiB");
    }
}
