//! Definitions of one file: tree-sitter parses it, the language's tags query finds the
//! definitions, and this module gives each a refined kind, line range, one-line signature
//! and its enclosing container (nesting comes from the ranges, so it works alike for every
//! language). Syntax errors never fail a file: tree-sitter recovers, and whatever it could
//! parse yields definitions.

use std::ops::Range;
use std::sync::atomic::AtomicUsize;

use tree_sitter_tags::{Tag, TagsContext};

use super::lang::Lang;

/// Files larger than this are not parsed (generated code, amalgamations, minified bundles):
/// parsing time grows with size and such files are rarely where an agent looks for a
/// definition. They are counted as too large.
pub const MAX_PARSE_BYTES: usize = 1 << 20;
/// Longest signature kept, in characters (a cut one ends with `…`).
pub const MAX_SIGNATURE_CHARS: usize = 200;

/// One definition in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    /// function, method, class, struct, enum, union, interface, trait, type, constant,
    /// macro, module, namespace, impl, constructor…
    pub kind: &'static str,
    /// 1-based first and last line of the whole definition (body included).
    pub line: u64,
    pub end_line: u64,
    /// 1-based line of the name.
    pub name_line: u64,
    /// The line of the name, trimmed and cut to [`MAX_SIGNATURE_CHARS`].
    pub signature: String,
    /// The enclosing definition's name (class, impl, module, function…), or for a C++
    /// method defined outside its class, the qualifier (`Foo` in `Foo::bar`).
    pub container: Option<String>,
    /// Nesting depth: 0 at the top of the file.
    pub depth: usize,
}

impl Definition {
    /// `Container::name`, or the name alone.
    pub fn qualified(&self) -> String {
        match &self.container {
            Some(container) => format!("{container}::{}", self.name),
            None => self.name.clone(),
        }
    }

    /// True when `line` falls within this definition.
    pub fn contains_line(&self, line: u64) -> bool {
        self.line <= line && line <= self.end_line
    }
}

/// Why a file yielded no definitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtractError {
    /// Larger than [`MAX_PARSE_BYTES`].
    TooLarge(usize),
    /// The cancellation flag was set while parsing.
    Cancelled,
    /// The language's query failed to compile (a bug; tested for every language).
    Config(String),
}

/// Extracts the definitions of `source` (the file's text) in `lang`, in source order.
/// `cancel` stops the parse when it becomes non-zero. Syntax errors are not failures.
pub fn extract(
    ctx: &mut TagsContext,
    lang: Lang,
    source: &[u8],
    cancel: Option<&AtomicUsize>,
) -> Result<Vec<Definition>, ExtractError> {
    if source.len() > MAX_PARSE_BYTES {
        return Err(ExtractError::TooLarge(source.len()));
    }
    let config = lang.config().map_err(ExtractError::Config)?;
    let (tags, _has_error) = ctx
        .generate_tags(config, source, cancel)
        .map_err(|_| ExtractError::Cancelled)?;
    let lines = LineIndex::new(source);
    let mut raw = Vec::new();
    for tag in tags {
        let tag: Tag = match tag {
            Ok(tag) => tag,
            Err(tree_sitter_tags::Error::Cancelled) => return Err(ExtractError::Cancelled),
            Err(_) => continue,
        };
        if !tag.is_definition {
            continue;
        }
        let kind = config.syntax_type_name(tag.syntax_type_id);
        let Some(def) = raw_definition(lang, kind, &tag, source) else {
            continue;
        };
        raw.push(def);
    }
    Ok(nest(raw, source, &lines, lang))
}

/// A tag before nesting.
struct Raw {
    name: String,
    kind: &'static str,
    range: Range<usize>,
    name_range: Range<usize>,
}

fn raw_definition(lang: Lang, kind: &str, tag: &Tag, source: &[u8]) -> Option<Raw> {
    let name = std::str::from_utf8(source.get(tag.name_range.clone())?)
        .ok()?
        .to_string();
    if name.is_empty() {
        return None;
    }
    let body = source.get(tag.range.clone())?;
    let c_like = matches!(lang, Lang::C | Lang::Cpp);
    // What the bundled C/C++ pattern still tags as a function is a declarator without a
    // body: a prototype (see `C_EXTRA`).
    if c_like && kind == "function" && !body.contains(&b'{') {
        return None;
    }
    // Error recovery can read a statement as a function (`else if (x) {…}` after an
    // `#ifdef` reads as a function `if` of type `else`): a keyword names no definition.
    if c_like && C_KEYWORDS.contains(&name.as_str()) {
        return None;
    }
    let head = source.get(tag.range.start..tag.name_range.start)?;
    Some(Raw {
        name,
        kind: refine_kind(lang, static_kind(kind), head, body),
        range: tag.range.clone(),
        name_range: tag.name_range.clone(),
    })
}

/// C statement keywords, which error recovery can take for a definition's name.
const C_KEYWORDS: &[&str] = &[
    "if", "else", "while", "for", "do", "switch", "case", "return", "goto", "sizeof",
];

/// Every kind a definition can have; "definition" (first) stands for a capture name the
/// list does not know. The symbol index stores a kind as its position here.
pub(crate) const KINDS: &[&str] = &[
    "definition",
    "function",
    "method",
    "class",
    "struct",
    "enum",
    "union",
    "interface",
    "trait",
    "type",
    "constant",
    "macro",
    "module",
    "namespace",
    "impl",
    "constructor",
    "variable",
];

/// The capture's kind as a `'static` string (tags queries only use these names).
fn static_kind(kind: &str) -> &'static str {
    KINDS
        .iter()
        .find(|k| **k == kind)
        .copied()
        .unwrap_or(KINDS[0])
}

/// Bundled queries lump several constructs into one capture (Rust and C tag structs, enums
/// and unions as `class`; Rust traits are `interface`; Go types are `type`): the keyword
/// before the name says which it is.
fn refine_kind(lang: Lang, kind: &'static str, head: &[u8], body: &[u8]) -> &'static str {
    let words = || {
        head.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .filter(|w| !w.is_empty())
    };
    match (lang, kind) {
        (Lang::Rust | Lang::C | Lang::Cpp, "class" | "type") => {
            for word in words() {
                match word {
                    b"typedef" => return "type",
                    b"struct" => return "struct",
                    b"enum" => return "enum",
                    b"union" => return "union",
                    b"class" => return "class",
                    b"type" if lang == Lang::Rust => return "type",
                    _ => {}
                }
            }
            kind
        }
        (Lang::Rust, "interface") => "trait",
        (Lang::Go, "type") => {
            // `Name struct {` / `Name interface {` follow the name, in the body.
            let after = body
                .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .filter(|w| !w.is_empty())
                .nth(1);
            match after {
                Some(b"struct") => "struct",
                Some(b"interface") => "interface",
                _ => "type",
            }
        }
        _ => kind,
    }
}

/// Kinds that hold other definitions and make a function inside them a method.
fn is_type_like(kind: &str) -> bool {
    matches!(
        kind,
        "class" | "struct" | "enum" | "union" | "interface" | "trait" | "impl"
    )
}

/// Orders definitions by position, computes each one's container from the innermost
/// definition whose range holds it, and builds the public form.
fn nest(mut raw: Vec<Raw>, source: &[u8], lines: &LineIndex, lang: Lang) -> Vec<Definition> {
    raw.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(b.range.end.cmp(&a.range.end))
            .then(a.name_range.start.cmp(&b.name_range.start))
    });
    let mut out: Vec<Definition> = Vec::with_capacity(raw.len());
    // Indexes into `raw`/`out` of the definitions enclosing the current one.
    let mut stack: Vec<usize> = Vec::new();
    for (i, def) in raw.iter().enumerate() {
        while let Some(&top) = stack.last() {
            let outer = &raw[top];
            if outer.range.start <= def.range.start && def.range.end <= outer.range.end {
                break;
            }
            stack.pop();
        }
        let parent = stack.last().map(|&top| &raw[top]);
        let mut kind = def.kind;
        match parent {
            Some(p) if kind == "function" && is_type_like(p.kind) => kind = "method",
            // Rust's bundled query calls every function in a `{ … }` item list a method,
            // module bodies included.
            Some(p) if kind == "method" && !is_type_like(p.kind) => kind = "function",
            _ => {}
        }
        let container = parent
            .map(|p| p.name.clone())
            .or_else(|| qualifier(source, def.name_range.start))
            .or_else(|| go_receiver(lang, kind, source, def));
        let name_line = lines.line_of(def.name_range.start);
        out.push(Definition {
            name: def.name.clone(),
            kind,
            line: lines.line_of(def.range.start),
            end_line: lines.line_of(def.range.end.saturating_sub(1).max(def.range.start)),
            name_line,
            signature: signature(lines.line_text(source, name_line)),
            container,
            depth: stack.len(),
        });
        stack.push(i);
    }
    out
}

/// `Foo` when the name is written `Foo::name` (a C++ method defined outside its class).
fn qualifier(source: &[u8], name_start: usize) -> Option<String> {
    let before = source.get(..name_start)?;
    let before = before.strip_suffix(b"::")?;
    let start = before
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b':'))
        .map_or(0, |p| p + 1);
    let text = std::str::from_utf8(&before[start..])
        .ok()?
        .trim_matches(':');
    (!text.is_empty()).then(|| text.to_string())
}

/// A Go method's receiver type (`T` in `func (r *T) Name()`), its natural container.
fn go_receiver(lang: Lang, kind: &str, source: &[u8], def: &Raw) -> Option<String> {
    if lang != Lang::Go || kind != "method" {
        return None;
    }
    let head = std::str::from_utf8(source.get(def.range.start..def.name_range.start)?).ok()?;
    let inside = head.split_once('(')?.1.split_once(')')?.0;
    let ty = inside.split_whitespace().last()?;
    let ty = ty.trim_start_matches('*');
    let ty = ty.split('[').next()?;
    (!ty.is_empty()).then(|| ty.to_string())
}

/// The trimmed line, cut at [`MAX_SIGNATURE_CHARS`].
pub(crate) fn signature(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.chars().count() <= MAX_SIGNATURE_CHARS {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(MAX_SIGNATURE_CHARS).collect();
    cut.push('…');
    cut
}

/// Byte offset ↔ line number for one file.
pub struct LineIndex {
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(source: &[u8]) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(memchr_iter(source).map(|i| i + 1));
        LineIndex { starts }
    }

    /// The 1-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> u64 {
        (self.starts.partition_point(|&start| start <= offset)) as u64
    }

    /// The text of 1-based `line`, without its terminator.
    pub fn line_text<'s>(&self, source: &'s [u8], line: u64) -> &'s [u8] {
        let index = (line as usize).saturating_sub(1);
        let start = self.starts.get(index).copied().unwrap_or(source.len());
        let end = self
            .starts
            .get(index + 1)
            .map_or(source.len(), |next| next.saturating_sub(1));
        let text = source.get(start..end.max(start)).unwrap_or_default();
        text.strip_suffix(b"\r").unwrap_or(text)
    }
}

fn memchr_iter(source: &[u8]) -> impl Iterator<Item = usize> + '_ {
    source
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i)
}
