//! Lone UTF-16 surrogates in a line's `\uXXXX` escapes, written as U+FFFD before the line is
//! checked. JSON's grammar allows `"\ud83d"` (JavaScript's `JSON.stringify` writes it for a
//! string cut in the middle of an emoji), but serde_json refuses it, so the whole request
//! would be a parse error answered without its id and the client would wait for its own
//! timeout. Decoding it as U+FFFD, as a lossy UTF-16 decoder does, lets the request go on.
//! A valid pair (a high surrogate escape followed at once by a low one) is kept as it is.
//! The rewrite keeps the line's length (`\uFFFD` is six bytes, as the escape it replaces) and
//! touches only ASCII hex digits, so it is done in place and a line's UTF-8 stays as it was.

/// Rewrites every lone surrogate escape of `line` to `\uFFFD`, in place.
///
/// A backslash is only valid JSON inside a string, where it starts an escape of the byte
/// after it; so reading escapes two bytes at a time from each backslash (`\\` is one escape)
/// finds exactly the string escapes of a valid line. Outside a string a backslash is a parse
/// error whatever follows it, so rewriting there changes nothing that could be accepted.
pub(super) fn mend(line: &mut [u8]) {
    let mut at = 0;
    // Every line passes here: memchr skips the stretches without a backslash at SIMD speed.
    while let Some(found) = memchr::memchr(b'\\', &line[at..]) {
        let escape = at + found;
        at = escape + 2;
        if line.get(escape + 1) != Some(&b'u') {
            continue;
        }
        let Some(unit) = unit_at(line, escape) else {
            continue;
        };
        at = escape + 6;
        if is_high(unit) && unit_at(line, escape + 6).is_some_and(is_low) {
            // A pair: both escapes stay, and the low half is not read again alone.
            at = escape + 12;
        } else if is_high(unit) || is_low(unit) {
            line[escape + 2..escape + 6].copy_from_slice(b"FFFD");
        }
    }
}

/// The code unit of the `\uXXXX` escape starting at `at`, if one is there.
fn unit_at(line: &[u8], at: usize) -> Option<u16> {
    let escape = line.get(at..at + 6)?;
    if !escape.starts_with(b"\\u") {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    // (`from_str_radix` would accept a leading `+`; JSON's four hex digits do not.)
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

fn is_high(unit: u16) -> bool {
    (0xD800..=0xDBFF).contains(&unit)
}

fn is_low(unit: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mended(text: &str) -> String {
        let mut bytes = text.as_bytes().to_vec();
        mend(&mut bytes);
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        assert_eq!(mended(r#""a \ud83d""#), r#""a \uFFFD""#);
        assert_eq!(mended(r#""\uDE00 b""#), r#""\uFFFD b""#);
        assert_eq!(mended(r#""\ud83d\u0041""#), r#""\uFFFD\u0041""#);
        assert_eq!(mended(r#""\ud83d\ud83d\ude00""#), r#""\uFFFD\ud83d\ude00""#);
        // Whatever is after a surrogate at the end of the line.
        assert_eq!(mended(r"\ud83d"), r"\uFFFD");
        assert_eq!(mended(r"\ud83d\u"), r"\uFFFD\u");
    }

    #[test]
    fn pairs_other_escapes_and_escaped_backslashes_are_kept() {
        for text in [
            r#""\ud83d\ude00""#,
            r#""\\ud83d""#,
            r#""\\\\ud83d \n \" \u00e9 \uFFFD""#,
            r#""\u12"#,
            r#""\u+d83""#,
            "plain é",
        ] {
            assert_eq!(mended(text), text);
        }
        assert_eq!(mended(r#""\\\ud83d""#), r#""\\\uFFFD""#);
    }
}
