//! Words for ranked search: how text, identifiers and paths become terms, and how a
//! free-text query becomes weighted terms and a path hint. The same rules run over the
//! indexed files and over the query, so a term means the same on both sides; they are the
//! rules the ranking benchmark measured (`bench/results/rank-proto/DECISIONS.md`).
//!
//! - An identifier (`[A-Za-z_][A-Za-z0-9_]*`, not part of a number such as `0x1f`) is
//!   split on `_`, then at case changes and digit runs (`HTTPServer` → `http`, `server`;
//!   `stm32f4xx` → `stm32`, `f4`, `xx`), each part lowercased; the whole identifier,
//!   lowercased, is a term too when it splits (`config_debug_mm`), so a code word asked
//!   for whole matches whole.
//! - A run of letters and digits holding non-ASCII characters (comments in other scripts)
//!   is one lowercased term.
//! - Terms are hashed to 64 bits ([`hash`]): the index keeps no term text.

use std::collections::HashMap;

/// A term as the index keys it.
pub(crate) type Term = u64;

/// The 64-bit hash of a term's text (collisions among a tree's few million distinct terms
/// are negligible at this width, and would only add a wrong match to a score).
pub(crate) fn hash(token: &str) -> Term {
    xxhash_rust::xxh3::xxh3_64(token.as_bytes())
}

/// Calls `out` with every token of `text`, in order (see the module documentation).
pub(crate) fn tokens(text: &str, out: &mut impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut lower = String::new();
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            // A run joined to non-ASCII letters belongs to that word.
            if i < bytes.len() && bytes[i] >= 0x80 && starts_word(&text[i..]) {
                i = non_ascii_word(text, start, &mut lower, out);
                continue;
            }
            if !b.is_ascii_digit() {
                identifier(&text[start..i], &mut lower, out);
            }
        } else if b >= 0x80 {
            if starts_word(&text[i..]) {
                i = non_ascii_word(text, i, &mut lower, out);
            } else {
                i += text[i..].chars().next().map_or(1, char::len_utf8);
            }
        } else {
            i += 1;
        }
    }
}

fn starts_word(rest: &str) -> bool {
    rest.chars().next().is_some_and(char::is_alphanumeric)
}

/// The word of letters and digits starting at `start` (holding non-ASCII ones), as one
/// lowercased token; returns where it ends.
fn non_ascii_word(
    text: &str,
    start: usize,
    lower: &mut String,
    out: &mut impl FnMut(&str),
) -> usize {
    let mut end = start;
    for (at, c) in text[start..].char_indices() {
        if !(c.is_alphanumeric() || c == '_') {
            break;
        }
        end = start + at + c.len_utf8();
    }
    lower.clear();
    lower.extend(text[start..end].chars().flat_map(char::to_lowercase));
    if !lower.is_empty() {
        out(lower);
    }
    end.max(start + 1)
}

/// The tokens of one ASCII identifier: its parts, then the whole when it splits.
fn identifier(ident: &str, lower: &mut String, out: &mut impl FnMut(&str)) {
    let mut parts = 0;
    let mut single = (0, 0);
    let mut base = 0;
    for chunk in ident.split('_') {
        let mut at = 0;
        while at < chunk.len() {
            let len = part_len(&chunk.as_bytes()[at..]);
            let part = &chunk[at..at + len];
            lower.clear();
            lower.push_str(part);
            lower.make_ascii_lowercase();
            out(lower);
            parts += 1;
            single = (base + at, len);
            at += len;
        }
        base += chunk.len() + 1;
    }
    let whole_is_single = parts == 1 && single == (0, ident.len());
    if parts > 0 && !whole_is_single {
        lower.clear();
        lower.push_str(ident);
        lower.make_ascii_lowercase();
        out(lower);
    }
}

/// The length of the part starting `chunk` (ASCII letters and digits, no `_`), as the
/// regex `[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+` finds it, backtracking
/// included (`HTTPServer` → `HTTP`, then `Server`).
fn part_len(chunk: &[u8]) -> usize {
    let run = |from: usize, f: fn(&u8) -> bool| chunk[from..].iter().take_while(|b| f(b)).count();
    let lower_at = |at: usize| chunk.get(at).is_some_and(u8::is_ascii_lowercase);
    let first = chunk[0];
    if first.is_ascii_uppercase() {
        let upper = run(0, u8::is_ascii_uppercase);
        let digits = run(upper, u8::is_ascii_digit);
        if !lower_at(upper + digits) {
            return upper + digits;
        }
        if digits > 0 {
            return upper + digits - 1;
        }
        if upper > 1 {
            return upper - 1;
        }
        // One capital before lowercase letters: `Server`.
        let letters = run(1, u8::is_ascii_lowercase);
        return 1 + letters + run(1 + letters, u8::is_ascii_digit);
    }
    if first.is_ascii_lowercase() {
        let letters = run(0, u8::is_ascii_lowercase);
        return letters + run(letters, u8::is_ascii_digit);
    }
    run(0, u8::is_ascii_digit).max(1)
}

/// The tokens of a relative path's segments (the last one without its extension), each
/// segment's letters and digits squeezed together added when they differ from its tokens
/// (`risc-v` → `risc`, `v`, `riscv`).
pub(crate) fn path_tokens(rel: &str, out: &mut impl FnMut(&str)) {
    let segments: Vec<&str> = rel.split(['/', '\\']).filter(|s| !s.is_empty()).collect();
    for (i, segment) in segments.iter().enumerate() {
        let segment = if i + 1 == segments.len() {
            match segment.rfind('.') {
                Some(dot) if dot > 0 => &segment[..dot],
                _ => segment,
            }
        } else {
            segment
        };
        let mut own = Vec::new();
        tokens(segment, &mut |t| {
            own.push(t.to_string());
            out(t);
        });
        let squeezed = squeeze(segment);
        if !squeezed.is_empty() && !own.contains(&squeezed) {
            out(&squeezed);
        }
    }
}

/// Lowercase letters and digits of `text` only (`risc-v` → `riscv`).
pub(crate) fn squeeze(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// One term of a query.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct QueryTerm {
    pub(crate) term: Term,
    /// The token as the query gave it (lowercased), for the answer's `matched`.
    pub(crate) text: String,
    /// 2 for the whole token of a code-like word (`foo_bar`, `fooBar`, `foo()`), else 1;
    /// × 1.5 in a longer query's first line.
    pub(crate) weight: f32,
    /// The whole token of a code-like word: a definition of that name is one the query
    /// names (`score.rs`).
    pub(crate) code: bool,
    /// Said in the query's subject: the first line of a longer query, any word of a
    /// one-line query.
    pub(crate) subject: bool,
    /// The whole token of an identifier that splits (`add_config_value`): never a part of
    /// a name, only a whole one.
    pub(crate) whole: bool,
    /// Its other inflections (`english.rs`) that are not terms of the query themselves.
    pub(crate) forms: Vec<Term>,
}

impl QueryTerm {
    /// The term and its other inflections: what finds it in a text.
    pub(crate) fn spellings(&self) -> impl Iterator<Item = Term> + '_ {
        std::iter::once(self.term).chain(self.forms.iter().copied())
    }
}

/// A query as ranking reads it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query {
    /// Distinct terms, in the order first met.
    pub(crate) terms: Vec<QueryTerm>,
    /// Path segments named by a `subsystem:` prefix (`fs/vfs: fix …` → `fs`, `vfs`).
    pub(crate) hint: Vec<String>,
    /// Files and lines the query names (`src/queue.rs:42`, `timer.c`), read by `refs.rs`
    /// and `phrases.rs`.
    pub(crate) refs: Vec<CodeRef>,
}

/// One reference: a file and maybe a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CodeRef {
    /// Its path's components as written (`/` or `\` separated; `.` components dropped).
    pub(crate) components: Vec<String>,
    /// The 1-based line, when given.
    pub(crate) line: Option<u32>,
    /// Named by the query itself (`a.rs:12`: its definition comes first), not found by
    /// looking a quoted message up (`phrases.rs`: its definition only weighs more).
    pub(crate) firm: bool,
}

impl CodeRef {
    /// The file name's stem squeezed, the form the path postings hold (`terms::path_tokens`).
    pub(crate) fn stem(&self) -> String {
        let name = self.components.last().map_or("", String::as_str);
        squeeze(name.rsplit_once('.').map_or(name, |(stem, _)| stem))
    }

    /// Whether `rel` (a root-relative path) is the file: the shorter of the two, by whole
    /// components, is the end of the other.
    pub(crate) fn names(&self, rel: &[u8]) -> bool {
        let rel = String::from_utf8_lossy(rel);
        let theirs: Vec<&str> = rel.split(['/', '\\']).filter(|c| !c.is_empty()).collect();
        let n = theirs.len().min(self.components.len());
        n > 0
            && theirs[theirs.len() - n..]
                .iter()
                .zip(&self.components[self.components.len() - n..])
                .all(|(a, b)| a == b)
    }
}

/// Weight of a code-like word's whole token.
const CODE_WEIGHT: f32 = 2.0;
/// What the words of a longer query's first line weigh beside its other lines' (a pasted
/// bug report's subject says what its body explains; chosen on the development sets of
/// issue #39: 2 was better on C and Rust, worse on Python).
const TITLE_WEIGHT: f32 = 1.5;

/// Parses a free-text query into terms (see the module documentation): every token of
/// every word weighs 1, and the whole token of a code-like identifier (called as `f()`,
/// holding an inner `_`, or a lowercase letter followed by a capital) weighs
/// [`CODE_WEIGHT`]; the words of a longer text's first line weigh [`TITLE_WEIGHT`] times
/// more. A term met twice keeps its largest weight. A plain word carries its
/// other inflections; plain function words are left out unless nothing else is said
/// (`english.rs`).
pub(crate) fn parse_query(text: &str) -> Query {
    let mut query = Query {
        hint: path_hint(text),
        ..Query::default()
    };
    let mut seen: HashMap<Term, usize> = HashMap::new();
    // The first line of a longer text is its title (a pasted report's subject).
    let title_end = match text.find('\n') {
        Some(nl) if !text[nl..].trim().is_empty() => nl,
        _ => 0,
    };
    let mut add = |token: &str, weight: f32, whole: bool, in_title: bool, query: &mut Query| {
        let term = hash(token);
        let (code, subject) = (weight == CODE_WEIGHT, in_title || title_end == 0);
        match seen.get(&term) {
            Some(&at) => {
                let held = &mut query.terms[at];
                held.weight = held.weight.max(weight);
                held.code |= code;
                held.subject |= subject;
                held.whole |= whole;
            }
            None => {
                seen.insert(term, query.terms.len());
                query.terms.push(QueryTerm {
                    term,
                    text: token.to_string(),
                    weight,
                    code,
                    subject,
                    whole,
                    forms: Vec::new(),
                });
            }
        }
    };
    let parts = [(&text[..title_end], true), (&text[title_end..], false)];
    for (part, in_title) in parts {
        for word in words(part) {
            let mut toks: Vec<String> = Vec::new();
            tokens(word.ident, &mut |t| toks.push(t.to_string()));
            // The last token is the identifier's whole when it splits; the rest are parts.
            let split = toks.len() > 1;
            for (at, t) in toks.iter().enumerate() {
                add(t, 1.0, split && at + 1 == toks.len(), in_title, &mut query);
            }
            if let Some(last) = toks.last().filter(|_| word.code_like()) {
                add(last, CODE_WEIGHT, split, in_title, &mut query);
            }
        }
    }
    // A plain function word says nothing of where the answer is (`english.rs`); a weight
    // over 1 is a code word's whole token, which stands.
    let kept = |t: &QueryTerm| t.weight > 1.0 || !super::english::is_function_word(&t.text);
    if query.terms.iter().any(kept) {
        query.terms.retain(kept);
    }
    for t in &mut query.terms {
        // A plain word meets its other inflections (a code word asked for whole stands as
        // written); a form the query also says counts once, as the word it says.
        if t.weight <= 1.0 {
            t.forms = (super::english::forms(&t.text).iter())
                .map(|f| hash(f))
                .filter(|f| !seen.contains_key(f))
                .collect();
        }
        // Said in a longer query's first line (a one-line query is all subject, no title).
        if t.subject && title_end > 0 {
            t.weight *= TITLE_WEIGHT;
        }
    }
    query
}

/// The start of a query that is read, and whether that left something out: the text up to
/// where its word characters (letters and digits of any script, `_`) reach `max` bytes.
/// Other characters (spaces, punctuation, emoji) do not count, so words after a long run
/// of them are kept; the work stays bounded, since only the words kept are parsed into
/// terms and what is skipped is read once. The word crossing the limit is left out whole
/// (a first word longer than the limit alone is cut in it), so no term is half a word.
pub(crate) fn read_of_query(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut used = 0;
    // Where the current word starts, and the bytes of words before it.
    let (mut word_start, mut used_before) = (0, 0);
    let mut in_word = false;
    for (at, c) in text.char_indices() {
        let word = c.is_alphanumeric() || c == '_';
        if word && !in_word {
            (word_start, used_before) = (at, used);
        }
        in_word = word;
        if !word {
            continue;
        }
        used += c.len_utf8();
        if used > max {
            let end = if used_before > 0 { word_start } else { at };
            return (&text[..end], true);
        }
    }
    (text, false)
}

/// One word of a query: an identifier or a run of other letters, and whether it is
/// called (`name()`, or a chain ending in `()`).
struct Word<'a> {
    ident: &'a str,
    called: bool,
}

impl Word<'_> {
    fn code_like(&self) -> bool {
        if !self.ident.is_ascii() {
            return false;
        }
        let inner = self.ident.trim_matches('_');
        let camel = self
            .ident
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
        self.called || inner.contains('_') || camel
    }
}

/// The words of a query, each chain (`a::b()`, `p->q`, `x.y`) marking its identifiers
/// called when it ends in `()`.
fn words(text: &str) -> Vec<Word<'_>> {
    let bytes = text.as_bytes();
    let mut out: Vec<Word<'_>> = Vec::new();
    let mut chain_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let ident_start = (b.is_ascii_alphabetic() || b == b'_')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if ident_start {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if i < bytes.len() && bytes[i] >= 0x80 {
                // Part of a word in another script: taken whole below.
                let end = text[start..]
                    .char_indices()
                    .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
                    .map_or(text.len(), |(at, _)| start + at);
                out.push(Word {
                    ident: &text[start..end],
                    called: false,
                });
                chain_start = out.len();
                i = end;
                continue;
            }
            out.push(Word {
                ident: &text[start..i],
                called: false,
            });
            // A chain goes on through `::`, `.` or `->` followed by an identifier.
            let rest = &bytes[i..];
            let sep = if rest.starts_with(b"::") || rest.starts_with(b"->") {
                2
            } else if rest.starts_with(b".") {
                1
            } else {
                0
            };
            let continues = sep > 0
                && bytes
                    .get(i + sep)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
            if continues {
                i += sep;
                continue;
            }
            // The chain ends: called when `(` `)` follow (spaces allowed).
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if bytes.get(j) == Some(&b'(') {
                j += 1;
                while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                    j += 1;
                }
                if bytes.get(j) == Some(&b')') {
                    for word in &mut out[chain_start..] {
                        word.called = true;
                    }
                }
            }
            chain_start = out.len();
        } else if b >= 0x80 {
            let c = text[i..].chars().next().unwrap_or(' ');
            if c.is_alphanumeric() {
                let end = text[i..]
                    .char_indices()
                    .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
                    .map_or(text.len(), |(at, _)| i + at);
                out.push(Word {
                    ident: &text[i..end],
                    called: false,
                });
                i = end;
            } else {
                i += c.len_utf8();
            }
            chain_start = out.len();
        } else {
            i += 1;
            chain_start = out.len();
        }
    }
    out
}

/// The path segments a query's `subsystem:` prefix names: the first line's leading
/// `word/word, word:` (letters, digits and `_./{}|,+-`, then `:` and a space), split on
/// `/ , { } |` and spaces, each without a source extension, squeezed to lowercase letters
/// and digits, de-duplicated. None when the prefix holds a space (a sentence, not a path).
pub(crate) fn path_hint(query: &str) -> Vec<String> {
    let first = query.lines().next().unwrap_or("");
    let trimmed = first.trim_start();
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_./{}|,+- ".contains(c);
    let Some(colon) = trimmed.find(':') else {
        return Vec::new();
    };
    let prefix = &trimmed[..colon];
    // A colon followed by a space (or the end of the line) ends the prefix.
    let after = &trimmed[colon + 1..];
    if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return Vec::new();
    }
    if prefix.is_empty() || !prefix.chars().all(allowed) {
        return Vec::new();
    }
    // Spaces only around commas: `arch, sim` is a list; `fix the timer` is a sentence.
    let without_list_spaces: String = prefix
        .split(',')
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(",");
    if without_list_spaces.trim().contains(' ') {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for segment in without_list_spaces.split(['/', ',', '{', '}', '|', ' ']) {
        let segment = strip_source_extension(segment);
        let squeezed = squeeze(segment);
        if !squeezed.is_empty() && !out.contains(&squeezed) {
            out.push(squeezed);
        }
    }
    out
}

fn strip_source_extension(segment: &str) -> &str {
    const EXTENSIONS: &[&str] = &[
        ".c", ".h", ".rs", ".py", ".go", ".js", ".ts", ".java", ".cpp", ".hpp", ".cc", ".tsx",
    ];
    EXTENSIONS
        .iter()
        .find_map(|ext| segment.strip_suffix(ext))
        .unwrap_or(segment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_reads_its_words_up_to_the_limit() {
        assert_eq!(
            read_of_query("short", 5),
            ("short", false),
            "not over in bytes"
        );
        assert_eq!(
            read_of_query("longword", 4),
            ("long", true),
            "a first word is cut in it"
        );
        // Emoji and spaces do not count: the words after them are read.
        let emoji = format!("{} zebra fish", "😀".repeat(100));
        assert_eq!(read_of_query(&emoji, 10), (emoji.as_str(), false));
        // The word crossing the limit is left out whole.
        assert_eq!(read_of_query("ab, cd ef gh", 6), ("ab, cd ef ", true));
        assert_eq!(read_of_query("😀😀 abcdefgh", 4), ("😀😀 abcd", true));
        assert_eq!(read_of_query("设计 文档", 6), ("设计 ", true));
    }

    #[test]
    fn code_words_and_the_subject_are_marked() {
        let q = parse_query("fix add_config_value() types\n\nthe body names refresh_all");
        let find = |text: &str| q.terms.iter().find(|t| t.text == text).unwrap();
        assert!(find("add_config_value").code && find("add_config_value").subject);
        assert!(find("add_config_value").whole && !find("config").whole);
        assert!(!find("types").code && find("types").subject && !find("types").whole);
        assert!(find("refresh_all").code && !find("refresh_all").subject);
        assert!(!find("body").subject);
        // A one-line query is all subject.
        let q = parse_query("config refresh");
        assert!(q.terms.iter().all(|t| t.subject && !t.code));
    }

    fn toks(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokens(text, &mut |t| out.push(t.to_string()));
        out
    }

    #[test]
    fn identifiers_split_as_measured() {
        assert_eq!(toks("HTTPServer"), ["http", "server", "httpserver"]);
        assert_eq!(toks("sys_call6"), ["sys", "call6", "sys_call6"]);
        assert_eq!(
            toks("CONFIG_DEBUG_MM"),
            ["config", "debug", "mm", "config_debug_mm"]
        );
        assert_eq!(toks("stm32f4xx"), ["stm32", "f4", "xx", "stm32f4xx"]);
        assert_eq!(toks("IPv6"), ["i", "pv6", "ipv6"]);
        assert_eq!(toks("__foo__"), ["foo", "__foo__"]);
        assert_eq!(toks("parse"), ["parse"]);
        assert_eq!(toks("Parser"), ["parser"]);
        assert_eq!(toks("AB12c"), ["ab1", "2", "c", "ab12c"]);
    }

    #[test]
    fn numbers_are_not_words() {
        assert_eq!(toks("x = 0x1f + 12abc;"), ["x"]);
        assert_eq!(toks("a1 b_2"), ["a1", "b", "2", "b_2"]);
    }

    #[test]
    fn other_scripts_are_whole_words() {
        assert_eq!(
            toks("// 设计 文档 für Größe"),
            ["设计", "文档", "für", "größe"]
        );
        assert_eq!(toks("naïve_x"), ["naïve_x"]);
        assert!(toks("…—→ ").is_empty());
    }

    #[test]
    fn paths_give_segments_and_squeezed_forms() {
        let mut out = Vec::new();
        path_tokens("arch/risc-v/src/mpfs/mpfs_ethernet.c", &mut |t| {
            out.push(t.to_string())
        });
        assert_eq!(
            out,
            [
                "arch",
                "risc",
                "v",
                "riscv",
                "src",
                "mpfs",
                "mpfs",
                "ethernet",
                "mpfs_ethernet",
                "mpfsethernet"
            ]
        );
    }

    /// The path hint matches a file through its path tokens: every segment, squeezed (the
    /// last without its extension), is one of them.
    #[test]
    fn every_squeezed_segment_is_a_path_token() {
        for rel in [
            "arch/risc-v/src/mpfs/mpfs_ethernet.c",
            "fs/vfs/fs_open.c",
            "crates/core/flags/defs.rs",
            "a/IPv6/HTTPServer.java",
            "x/net-tcp.v2/y",
        ] {
            let mut tokens = Vec::new();
            path_tokens(rel, &mut |t| tokens.push(t.to_string()));
            let segments: Vec<&str> = rel.split('/').collect();
            for (i, segment) in segments.iter().enumerate() {
                let segment = match i + 1 == segments.len() {
                    true => segment.rsplit_once('.').map_or(*segment, |(stem, _)| stem),
                    false => segment,
                };
                assert!(
                    tokens.contains(&squeeze(segment)),
                    "{rel}: {segment} in {tokens:?}"
                );
            }
        }
    }

    #[test]
    fn code_words_weigh_double() {
        let q = parse_query("fix foo_bar() in Timer.reset, see parseArgs");
        let weight = |t: &str| q.terms.iter().find(|x| x.text == t).map(|x| x.weight);
        assert_eq!(weight("foo_bar"), Some(2.0));
        assert_eq!(weight("foo"), Some(1.0));
        assert_eq!(weight("parseargs"), Some(2.0));
        assert_eq!(weight("fix"), Some(1.0));
        // Not called, no inner `_`, no camel case.
        assert_eq!(weight("timer"), Some(1.0));
        assert_eq!(weight("reset"), Some(1.0));
        let called = parse_query("Timer.reset() twice");
        let weight = |t: &str| called.terms.iter().find(|x| x.text == t).map(|x| x.weight);
        assert_eq!(weight("reset"), Some(2.0));
        assert_eq!(weight("timer"), Some(2.0));
    }

    #[test]
    fn a_reports_title_weighs_more_and_its_function_words_go() {
        let q = parse_query("Timer fires twice after reset_all()\n\nThe watchdog is re-armed.");
        let weight = |t: &str| q.terms.iter().find(|x| x.text == t).map(|x| x.weight);
        assert_eq!(weight("timer"), Some(TITLE_WEIGHT));
        assert_eq!(weight("reset_all"), Some(CODE_WEIGHT * TITLE_WEIGHT));
        assert_eq!(weight("watchdog"), Some(1.0));
        assert_eq!(weight("the"), None);
        assert_eq!(weight("is"), None);
        // One line is all title: nothing weighs more.
        let q = parse_query("timer fires twice\n");
        assert!(q.terms.iter().all(|t| t.weight == 1.0), "{:?}", q.terms);
        // Nothing but function words: they stay.
        assert_eq!(parse_query("is it").terms.len(), 2);
        let forms = &parse_query("cancelled timers").terms[0].forms;
        assert!(forms.contains(&hash("cancel")));
        assert!(
            parse_query("cancel_all()")
                .terms
                .iter()
                .all(|t| t.text != "cancel_all" || t.forms.is_empty())
        );
    }

    #[test]
    fn subsystem_prefix_is_a_path_hint() {
        assert_eq!(path_hint("fs/vfs: fix the lock"), ["fs", "vfs"]);
        assert_eq!(path_hint("arch/risc-v: boot"), ["arch", "riscv"]);
        assert_eq!(path_hint("printer: color"), ["printer"]);
        assert_eq!(path_hint("drivers/net/foo.c: x"), ["drivers", "net", "foo"]);
        assert!(path_hint("fix the timer: it fires twice").is_empty());
        assert!(path_hint("no prefix here").is_empty());
        assert!(path_hint("http://x: y").is_empty());
        assert!(path_hint("").is_empty());
    }

    #[test]
    fn hostile_queries_stay_bounded() {
        assert!(parse_query("").terms.is_empty());
        assert!(parse_query("!!! ??? ...").terms.is_empty());
        let long = "a".repeat(1 << 20);
        assert_eq!(parse_query(&long).terms.len(), 1);
        let many: String = (0..10_000).map(|i| format!("w{i} ")).collect();
        assert_eq!(parse_query(&many).terms.len(), 10_000);
    }
}
