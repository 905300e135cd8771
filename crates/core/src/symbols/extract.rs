//! Definitions of one file: tree-sitter parses it, the language's tags query finds the
//! definitions, and this module gives each a refined kind, line range, one-line signature
//! and its enclosing container (nesting comes from the ranges, so it works alike for every
//! language). Syntax errors never fail a file: tree-sitter recovers, and whatever it could
//! parse yields definitions.
//!
//! The whole extraction is linear in the file's size, however its text is laid out (one
//! line of 16,000 functions, 16,000 nested modules; tested by counting the work): the query
//! runs in depth-bounded slices of the tree (tree-sitter's query cursor otherwise revisits
//! every pattern waiting at each enclosing level for every node, which is quadratic in the
//! nesting), one tag per name node is kept in a map, and a signature is made once per line.
//! Running the tags query here rather than through `tree-sitter-tags` is deliberate: that
//! crate recounts UTF-16 columns from the start of the line for every tag that comes out
//! of order on a line (every name two patterns match), quadratic on minified files, and
//! computes docs and columns rootgrep does not use.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tree_sitter::{Node, ParseOptions, QueryCursor, StreamingIterator, Tree};

use super::lang::{Capture, Lang};

/// Files larger than this are not parsed (generated code, amalgamations, minified bundles):
/// parsing time grows with size and such files are rarely where an agent looks for a
/// definition. They are counted as too large.
pub(crate) const MAX_PARSE_BYTES: usize = 1 << 20;
/// Longest signature kept, in characters (a cut one ends with `…`).
pub(crate) const MAX_SIGNATURE_CHARS: usize = 200;
/// Most indentation levels tree-sitter's Python parser keeps: its scanner saves the stack
/// of indentation widths in tree-sitter's 1,024-byte state buffer, two bytes a level, and
/// past 511 levels it loses the outer ones (their definitions become errors).
pub(crate) const PYTHON_MAX_INDENT_LEVELS: usize = 511;
/// Levels of the tree one run of the query cursor starts matches in; the nodes below start
/// their own runs (see [`tags`]).
const RUN_DEPTH: u32 = 32;

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
    /// method defined outside its class, the qualifier (`Foo` in `Foo::bar`). Shared with
    /// the container's other definitions: a long name over many members is held once.
    pub container: Option<Arc<str>>,
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
    pub(crate) fn contains_line(&self, line: u64) -> bool {
        self.line <= line && line <= self.end_line
    }
}

/// Why a file yielded no definitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExtractError {
    /// Larger than [`MAX_PARSE_BYTES`].
    TooLarge(usize),
    /// Python nested deeper than [`PYTHON_MAX_INDENT_LEVELS`] (this many levels): the
    /// parser loses the outer definitions, so the file's outline would be wrong.
    TooDeep(usize),
    /// The cancellation flag was set while parsing.
    Cancelled,
    /// The language's query failed to compile (a bug; tested for every language).
    Config(String),
}

/// A tree-sitter parser and query cursor, reused from file to file by one thread.
#[derive(Default)]
pub struct Parser {
    parser: tree_sitter::Parser,
    cursor: QueryCursor,
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }
}

/// Extracts the definitions of `source` (the file's text) in `lang`, in source order.
/// `cancel` stops the parse when it becomes non-zero. Syntax errors are not failures.
pub(crate) fn extract(
    parser: &mut Parser,
    lang: Lang,
    source: &[u8],
    cancel: Option<&AtomicUsize>,
) -> Result<Vec<Definition>, ExtractError> {
    extract_in_runs(parser, lang, source, cancel, RUN_DEPTH)
}

/// [`extract`] with query runs of `run_depth` levels (the tests compare depths).
pub(super) fn extract_in_runs(
    parser: &mut Parser,
    lang: Lang,
    source: &[u8],
    cancel: Option<&AtomicUsize>,
    run_depth: u32,
) -> Result<Vec<Definition>, ExtractError> {
    if source.len() > MAX_PARSE_BYTES {
        return Err(ExtractError::TooLarge(source.len()));
    }
    let grammar = lang
        .config()
        .map_err(|err| ExtractError::Config(err.to_string()))?;
    parser
        .parser
        .set_language(&grammar.language)
        .map_err(|err| ExtractError::Config(err.to_string()))?;
    parser.parser.reset();
    let cancelled = || cancel.is_some_and(|flag| flag.load(Ordering::Relaxed) != 0);
    let mut progress = |_: &tree_sitter::ParseState| cancelled();
    let tree = parser
        .parser
        .parse_with_options(
            &mut |at, _| source.get(at..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        )
        .ok_or(ExtractError::Cancelled)?;
    if lang == Lang::Python && tree.root_node().has_error() {
        let levels = python_indent_levels(source);
        if levels > PYTHON_MAX_INDENT_LEVELS {
            return Err(ExtractError::TooDeep(levels));
        }
    }
    let tags = tags(
        &mut parser.cursor,
        grammar,
        &tree,
        source,
        run_depth,
        &cancelled,
    )?;
    let lines = LineIndex::new(source);
    let raw = tags
        .into_iter()
        .filter_map(|tag| raw_definition(lang, tag.kind?, &tag, source))
        .collect();
    Ok(nest(raw, source, &lines, lang))
}

/// One tag of the query: its node's range (with the name's) and its name's.
struct Tag {
    range: Range<usize>,
    name_range: Range<usize>,
    /// The definition's kind; `None` for a reference.
    kind: Option<&'static str>,
    /// The query pattern it came from: of two tags of one name node, the earlier pattern's
    /// is kept.
    pattern: usize,
}

/// The tags of `tree`, one per name node (the earliest pattern's), in no order.
///
/// The query cursor keeps, for every enclosing node a pattern could still match from
/// (Rust's `(declaration_list (function_item …))` waits at each `{ … }` of a module for a
/// function), a state that it updates at every node: quadratic in the nesting. So each
/// run starts matches only in the top `run_depth` levels of its subtree ([`RUN_DEPTH`]),
/// and the nodes at that depth start runs of their own: at most `run_depth` levels of
/// waiting states at a time, and every node is the start of exactly one run's matches.
fn tags(
    cursor: &mut QueryCursor,
    grammar: &crate::symbols::lang::Grammar,
    tree: &Tree,
    source: &[u8],
    run_depth: u32,
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<Tag>, ExtractError> {
    let run_depth = run_depth.max(1);
    let mut by_name: HashMap<(usize, usize), Tag> = HashMap::new();
    let mut runs = vec![tree.root_node()];
    let mut handled = 0usize;
    while let Some(top) = runs.pop() {
        // The cursor counts the top of its run as depth 0.
        cursor.set_max_start_depth(Some(run_depth - 1));
        let mut matches = cursor.matches(&grammar.query, top, source);
        while let Some(found) = matches.next() {
            count_step();
            handled += 1;
            if handled.is_multiple_of(100) && cancelled() {
                return Err(ExtractError::Cancelled);
            }
            let mut name = None;
            let mut tagged = None;
            for capture in found.captures {
                match grammar.capture(capture.index) {
                    Capture::Name => name = Some(capture.node),
                    Capture::Definition(kind) => tagged = Some((capture.node, Some(kind))),
                    Capture::Reference => tagged = Some((capture.node, None)),
                    Capture::Other => {}
                }
            }
            let (Some(name), Some((node, kind))) = (name, tagged) else {
                continue;
            };
            // A name with an error inside is recovery's guess, not a name.
            if name.has_error() {
                continue;
            }
            let name_range = name.byte_range();
            let node_range = node.byte_range();
            let tag = Tag {
                range: node_range.start.min(name_range.start)..node_range.end.max(name_range.end),
                name_range: name_range.clone(),
                kind,
                pattern: found.pattern_index,
            };
            match by_name.entry((name_range.start, name_range.end)) {
                Entry::Occupied(mut kept) => {
                    if tag.pattern < kept.get().pattern {
                        kept.insert(tag);
                    }
                }
                Entry::Vacant(slot) => {
                    slot.insert(tag);
                }
            }
        }
        nodes_at_depth(top, run_depth, &mut runs);
    }
    Ok(by_name.into_values().collect())
}

/// Pushes the descendants of `top` that are `depth` levels below it (counting the nodes
/// the query cursor counts: named and anonymous, not hidden ones) onto `out`. Visits only
/// the nodes above that depth, so the slices of all runs together visit each node once.
fn nodes_at_depth<'t>(top: Node<'t>, depth: u32, out: &mut Vec<Node<'t>>) {
    let mut walk = top.walk();
    let mut level = 0;
    loop {
        count_step();
        if level < depth && walk.goto_first_child() {
            level += 1;
            continue;
        }
        if level == depth {
            out.push(walk.node());
        }
        loop {
            if level == 0 {
                return;
            }
            if walk.goto_next_sibling() {
                break;
            }
            walk.goto_parent();
            level -= 1;
        }
    }
}

/// The most indentation levels open at once in Python `source`, counted as its parser
/// counts them (a stack of increasing widths; a tab advances to the next multiple of 8;
/// blank and comment-only lines do not count). Lines inside brackets or strings count
/// too, which can only overestimate: it is asked only when the parse has errors.
fn python_indent_levels(source: &[u8]) -> usize {
    count_bytes(source.len());
    let mut widths: Vec<usize> = Vec::new();
    let mut most = 0;
    for line in source.split(|b| *b == b'\n') {
        let mut width = 0;
        let mut rest = line;
        while let Some((&b, tail)) = rest.split_first() {
            match b {
                b' ' => width += 1,
                b'\t' => width = (width / 8 + 1) * 8,
                b'\x0c' => width = 0,
                _ => break,
            }
            rest = tail;
        }
        if matches!(rest, [] | [b'\r'] | [b'#', ..]) {
            continue;
        }
        while widths.last().is_some_and(|&top| top > width) {
            widths.pop();
        }
        if width > 0 && widths.last().is_none_or(|&top| top < width) {
            widths.push(width);
        }
        most = most.max(widths.len());
    }
    most
}

/// A tag before nesting.
struct Raw {
    /// Shared as the container of the definitions inside.
    name: Arc<str>,
    kind: &'static str,
    range: Range<usize>,
    name_range: Range<usize>,
}

fn raw_definition(lang: Lang, kind: &'static str, tag: &Tag, source: &[u8]) -> Option<Raw> {
    count_bytes(tag.name_range.len());
    let name = std::str::from_utf8(source.get(tag.name_range.clone())?).ok()?;
    if name.is_empty() {
        return None;
    }
    let body = source.get(tag.range.clone())?;
    let c_like = matches!(lang, Lang::C | Lang::Cpp);
    // What the bundled C/C++ pattern still tags as a function is a declarator without a
    // body: a prototype (see `C_EXTRA`). A definition's `{` follows its declarator, so the
    // scan stops within the head.
    if c_like && kind == "function" {
        let brace = body.iter().position(|b| *b == b'{');
        count_bytes(brace.map_or(body.len(), |at| at + 1));
        brace?;
    }
    // Error recovery can read a statement as a function (`else if (x) {…}` after an
    // `#ifdef` reads as a function `if` of type `else`): a keyword names no definition.
    if c_like && C_KEYWORDS.contains(&name) {
        return None;
    }
    let head = source.get(tag.range.start..tag.name_range.start)?;
    Some(Raw {
        name: Arc::from(name),
        kind: refine_kind(lang, kind, head, body),
        range: tag.range.clone(),
        name_range: tag.name_range.clone(),
    })
}

/// C statement keywords, which error recovery can take for a definition's name.
const C_KEYWORDS: &[&str] = &[
    "if", "else", "while", "for", "do", "switch", "case", "return", "goto", "sizeof",
];

/// Bundled queries lump several constructs into one capture (Rust and C tag structs, enums
/// and unions as `class`; Rust traits are `interface`; Go types are `type`): the keyword
/// before the name says which it is. The words are read only up to the first keyword.
fn refine_kind(lang: Lang, kind: &'static str, head: &[u8], body: &[u8]) -> &'static str {
    let words = || {
        head.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .inspect(|w| count_bytes(w.len() + 1))
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
                .inspect(|w| count_bytes(w.len() + 1))
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
            .then(a.name_range.end.cmp(&b.name_range.end))
    });
    let mut signatures = Signatures::new(source, lines);
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
            .or_else(|| qualifier(source, def.name_range.start).map(Arc::from))
            .or_else(|| go_receiver(lang, kind, source, def).map(Arc::from));
        let name_line = lines.line_of(def.name_range.start);
        out.push(Definition {
            name: def.name.to_string(),
            kind,
            line: lines.line_of(def.range.start),
            end_line: lines.line_of(def.range.end.saturating_sub(1).max(def.range.start)),
            name_line,
            signature: signatures.of_line(name_line),
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
    count_bytes(before.len() - start);
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
    let head = source.get(def.range.start..def.name_range.start)?;
    count_bytes(head.len());
    let head = std::str::from_utf8(head).ok()?;
    let inside = head.split_once('(')?.1.split_once(')')?.0;
    let ty = inside.split_whitespace().last()?;
    let ty = ty.trim_start_matches('*');
    let ty = ty.split('[').next()?;
    (!ty.is_empty()).then(|| ty.to_string())
}

/// Signatures of one file's lines, each line's made once: a line holding many definitions
/// (a minified file is one line) is read once, not once per definition.
pub(crate) struct Signatures<'s> {
    source: &'s [u8],
    lines: &'s LineIndex,
    made: HashMap<u64, String>,
}

impl<'s> Signatures<'s> {
    pub(crate) fn new(source: &'s [u8], lines: &'s LineIndex) -> Signatures<'s> {
        Signatures {
            source,
            lines,
            made: HashMap::new(),
        }
    }

    /// The signature of 1-based `line`.
    pub(crate) fn of_line(&mut self, line: u64) -> String {
        let (source, lines) = (self.source, self.lines);
        self.made
            .entry(line)
            .or_insert_with(|| signature(lines.line_text(source, line)))
            .clone()
    }
}

/// The trimmed line, cut at [`MAX_SIGNATURE_CHARS`].
fn signature(line: &[u8]) -> String {
    count_bytes(line.len());
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
pub(crate) struct LineIndex {
    /// Byte offset where each line starts.
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(source: &[u8]) -> LineIndex {
        count_bytes(source.len());
        let mut starts = vec![0];
        starts.extend(memchr_iter(source).map(|i| i + 1));
        LineIndex { starts }
    }

    /// The 1-based line holding byte `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> u64 {
        (self.starts.partition_point(|&start| start <= offset)) as u64
    }

    /// The text of 1-based `line`, without its terminator.
    pub(crate) fn line_text<'s>(&self, source: &'s [u8], line: u64) -> &'s [u8] {
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

/// Counts `n` bytes scanned by rootgrep's own code (`work`; nothing outside tests).
fn count_bytes(n: usize) {
    #[cfg(test)]
    work::bytes(n);
    let _ = n;
}

/// Counts one tree node visited or query match handled (`work`; nothing outside tests).
fn count_step() {
    #[cfg(test)]
    work::step();
}

/// What the tests ask of the extraction: work counters (the tests that prove it linear),
/// and the raw tags of a grammar.
#[cfg(test)]
pub(crate) mod work {
    use std::cell::Cell;

    thread_local! {
        /// Bytes scanned by rootgrep's own per-definition and per-line code.
        pub static BYTES: Cell<u64> = const { Cell::new(0) };
        /// Tree nodes visited to slice the tree, and query matches handled.
        pub static STEPS: Cell<u64> = const { Cell::new(0) };
    }

    pub fn bytes(n: usize) {
        BYTES.with(|c| c.set(c.get() + n as u64));
    }

    pub fn step() {
        STEPS.with(|c| c.set(c.get() + 1));
    }

    /// Zeroes the counters and returns what they held: (bytes, steps).
    pub fn take() -> (u64, u64) {
        (BYTES.with(|c| c.replace(0)), STEPS.with(|c| c.replace(0)))
    }

    /// The definitions' tags `grammar` finds in `source` (range, name range, kind),
    /// sorted: the tests compare a grammar's patterns turned off with the query as written.
    pub(crate) fn definition_tags(
        grammar: &crate::symbols::lang::Grammar,
        source: &[u8],
    ) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>, &'static str)> {
        let mut parser = super::Parser::new();
        parser
            .parser
            .set_language(&grammar.language)
            .expect("language");
        let tree = parser.parser.parse(source, None).expect("parsed");
        let never = || false;
        let found = super::tags(
            &mut parser.cursor,
            grammar,
            &tree,
            source,
            super::RUN_DEPTH,
            &never,
        );
        let mut out: Vec<_> = (found.expect("not cancelled").into_iter())
            .filter_map(|tag| Some((tag.range, tag.name_range, tag.kind?)))
            .collect();
        out.sort_by_key(|(range, name, _)| (name.start, range.start, range.end));
        out
    }
}
