//! One file as ranked search sees it: the documents it is cut into and the terms of each
//! document's fields.
//!
//! A document is a definition of a code-block kind ([`DOC_KINDS`]: functions, methods,
//! types…), or a *region*: a run of lines outside every such definition (a file's
//! includes and macros, a header's constants, a whole Markdown or Makefile), cut at
//! [`REGION_MAX_LINES`]. Every line belongs to one document: the innermost definition
//! holding it, so a class's body leaves out its methods, which are documents of their own.
//!
//! Fields (the BM25F fields of `score.rs`): the definition's *name*, its *container*, the
//! *comment* block right above it, and the *body* (the lines it owns); a region's name
//! field holds the names defined in it (macros, constants). The path field is the file's
//! and lives in the segment, once per file.

use std::collections::HashMap;
use std::sync::Arc;

use super::terms::{self, Term};
use crate::symbols::extract::Definition;

/// Fields kept per document (the path field is per file).
pub(crate) const FIELDS: usize = 4;
pub(crate) const NAME: usize = 0;
pub(crate) const CONTAINER: usize = 1;
pub(crate) const COMMENT: usize = 2;
pub(crate) const BODY: usize = 3;

/// The kind of a region document.
pub(crate) const REGION: &str = "text";

/// Every document kind, as stored (a kind is its position here).
pub(crate) const KIND_NAMES: &[&str] = &[
    "function",
    "method",
    "constructor",
    "class",
    "struct",
    "enum",
    "union",
    "interface",
    "trait",
    "type",
    REGION,
];

/// Definition kinds that are documents (every kind but [`REGION`]); other definitions
/// (macros, constants, variables, modules, impl blocks) are part of the region or document
/// around them.
pub(crate) const DOC_KINDS: &[&str] = match KIND_NAMES.split_last() {
    Some((_, definitions)) => definitions,
    None => &[],
};

/// A region is cut after this many lines (at a blank line after [`REGION_MIN_LINES`]).
pub(crate) const REGION_MAX_LINES: u32 = 40;
const REGION_MIN_LINES: u32 = 15;

/// One document of a file.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Doc {
    /// 1-based first and last line.
    pub(crate) line: u32,
    pub(crate) end_line: u32,
    /// Position in [`KIND_NAMES`].
    pub(crate) kind: u8,
    /// The definition's name (empty for a region).
    pub(crate) name: String,
    pub(crate) container: Option<Arc<str>>,
    /// Tokens in each field.
    pub(crate) lens: [u32; FIELDS],
    /// Each distinct term with its count in each field, sorted by term.
    pub(crate) terms: Vec<(Term, [u16; FIELDS])>,
}

#[cfg(test)]
impl Doc {
    pub(crate) fn kind_name(&self) -> &'static str {
        KIND_NAMES
            .get(self.kind as usize)
            .copied()
            .unwrap_or(REGION)
    }
}

pub(crate) fn kind_id(kind: &str) -> Option<u8> {
    KIND_NAMES.iter().position(|k| *k == kind).map(|p| p as u8)
}

const NO_OWNER: u32 = u32::MAX;

/// The documents of a file whose text is `text` and whose definitions are `defs` (empty
/// for a file in no supported language: then it is regions only), in line order.
pub(crate) fn file_docs(text: &str, defs: &[Definition], hash_comments: bool) -> Vec<Doc> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = match text.is_empty() {
        true => Vec::new(),
        false => (text.split('\n'))
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect(),
    };
    let n = lines.len() as u32;
    // Code-block definitions, outer before inner.
    let mut blocks: Vec<&Definition> = defs
        .iter()
        .filter(|d| DOC_KINDS.contains(&d.kind) && d.line >= 1 && d.line <= n as u64)
        .collect();
    blocks.sort_by_key(|d| (d.line, std::cmp::Reverse(d.end_line)));
    let mut owner = vec![NO_OWNER; n as usize];
    for (i, d) in blocks.iter().enumerate() {
        let end = (d.end_line.max(d.line) as u32).min(n);
        for slot in &mut owner[d.line as usize - 1..end as usize] {
            *slot = i as u32;
        }
    }
    let mut consumed = vec![false; n as usize];
    let mut acc = Accumulator::default();
    let mut docs = Vec::with_capacity(blocks.len() + 4);
    for (i, d) in blocks.iter().enumerate() {
        let end = (d.end_line.max(d.line) as u32).min(n);
        acc.field(NAME, &d.name);
        if let Some(container) = &d.container {
            acc.field(CONTAINER, container);
        }
        for at in comment_above(&lines, d.line as u32, hash_comments) {
            acc.field(COMMENT, lines[at as usize - 1]);
            if owner[at as usize - 1] == NO_OWNER {
                consumed[at as usize - 1] = true;
            }
        }
        for at in d.line as u32..=end {
            if owner[at as usize - 1] == i as u32 {
                acc.field(BODY, lines[at as usize - 1]);
            }
        }
        docs.push(acc.finish(Doc {
            line: d.line as u32,
            end_line: end,
            kind: kind_id(d.kind).unwrap_or(0),
            name: d.name.clone(),
            container: d.container.clone(),
            lens: [0; FIELDS],
            terms: Vec::new(),
        }));
    }
    regions(&lines, &owner, &consumed, defs, &mut acc, &mut docs);
    docs.sort_by_key(|d| (d.line, std::cmp::Reverse(d.end_line)));
    docs
}

/// The lines (1-based) of the comment block right above line `line`: blank lines skipped,
/// then lines starting with a comment marker (or a Rust attribute), up to the first that
/// does not.
fn comment_above(lines: &[&str], line: u32, hash_comments: bool) -> Vec<u32> {
    let mut out = Vec::new();
    let mut at = line.saturating_sub(1);
    while at >= 1 && lines[at as usize - 1].trim().is_empty() {
        at -= 1;
    }
    while at >= 1 {
        let text = lines[at as usize - 1].trim_start();
        let marked = ["///", "//!", "//", "/*", "*", "*/", "#["]
            .iter()
            .any(|m| text.starts_with(m))
            || (hash_comments && text.starts_with('#'));
        if !marked {
            break;
        }
        out.push(at);
        at -= 1;
    }
    out
}

/// Adds the region documents: runs of lines no definition owns (and no comment block
/// took), cut at a blank line once [`REGION_MIN_LINES`] long, at most
/// [`REGION_MAX_LINES`]; names defined inside (macros, constants…) fill the name field.
fn regions(
    lines: &[&str],
    owner: &[u32],
    consumed: &[bool],
    defs: &[Definition],
    acc: &mut Accumulator,
    docs: &mut Vec<Doc>,
) {
    let free = |at: u32| owner[at as usize - 1] == NO_OWNER && !consumed[at as usize - 1];
    let n = lines.len() as u32;
    let mut at = 1;
    while at <= n {
        if !free(at) {
            at += 1;
            continue;
        }
        let start = at;
        let mut end = at;
        while end < n && free(end + 1) && end + 1 - start < REGION_MAX_LINES {
            let blank = lines[end as usize].trim().is_empty();
            if blank && end + 1 - start >= REGION_MIN_LINES {
                break;
            }
            end += 1;
        }
        let next = end + 1;
        // Blank lines at either end are nobody's text.
        let blank = |at: u32| lines[at as usize - 1].trim().is_empty();
        let mut start = start;
        while start < end && blank(start) {
            start += 1;
        }
        while end > start && blank(end) {
            end -= 1;
        }
        for line in &lines[start as usize - 1..end as usize] {
            acc.field(BODY, line);
        }
        if acc.lens[BODY] > 0 {
            for d in defs {
                if !DOC_KINDS.contains(&d.kind) && (start..=end).contains(&(d.line as u32)) {
                    acc.field(NAME, &d.name);
                }
            }
            docs.push(acc.finish(Doc {
                line: start,
                end_line: end,
                kind: kind_id(REGION).unwrap_or(0),
                name: String::new(),
                container: None,
                lens: [0; FIELDS],
                terms: Vec::new(),
            }));
        } else {
            acc.clear();
        }
        at = next;
    }
}

/// Counts one document's terms per field (reused from document to document).
#[derive(Default)]
struct Accumulator {
    counts: HashMap<Term, [u16; FIELDS]>,
    lens: [u32; FIELDS],
}

impl Accumulator {
    fn field(&mut self, field: usize, text: &str) {
        let counts = &mut self.counts;
        let lens = &mut self.lens;
        terms::tokens(text, &mut |t| {
            let slot = &mut counts.entry(terms::hash(t)).or_insert([0; FIELDS])[field];
            *slot = slot.saturating_add(1);
            lens[field] = lens[field].saturating_add(1);
        });
    }

    fn finish(&mut self, mut doc: Doc) -> Doc {
        doc.lens = std::mem::take(&mut self.lens);
        doc.terms = self.counts.drain().collect();
        doc.terms.sort_unstable_by_key(|(t, _)| *t);
        doc
    }

    fn clear(&mut self) {
        self.counts.clear();
        self.lens = [0; FIELDS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, kind: &'static str, line: u64, end_line: u64) -> Definition {
        Definition {
            name: name.into(),
            kind,
            line,
            end_line,
            name_line: line,
            signature: String::new(),
            container: None,
            depth: 0,
        }
    }

    fn count(doc: &Doc, token: &str, field: usize) -> u16 {
        let t = terms::hash(token);
        doc.terms
            .iter()
            .find(|(x, _)| *x == t)
            .map_or(0, |(_, c)| c[field])
    }

    #[test]
    fn definitions_and_regions_share_out_the_lines() {
        let text = "#include <x.h>\n#define TIMER_MAX 4\n\n/* Resets the timer. */\nint timer_reset(int t)\n{\n  return t;\n}\n\nstatic int other;\n";
        let defs = [
            def("TIMER_MAX", "macro", 2, 2),
            def("timer_reset", "function", 5, 8),
        ];
        let docs = file_docs(text, &defs, false);
        assert_eq!(docs.len(), 3, "{docs:#?}");
        let (head, func, tail) = (&docs[0], &docs[1], &docs[2]);
        assert_eq!((head.kind_name(), head.line, head.end_line), ("text", 1, 2));
        assert_eq!(count(head, "timer_max", NAME), 1);
        assert_eq!(count(head, "include", BODY), 1);
        assert_eq!(
            (func.kind_name(), func.line, func.end_line),
            ("function", 5, 8)
        );
        assert_eq!(count(func, "timer_reset", NAME), 1);
        assert_eq!(count(func, "resets", COMMENT), 1);
        assert_eq!(count(func, "return", BODY), 1);
        // The comment went to the function, not to a region.
        assert!(docs.iter().all(|d| d.line != 4));
        assert_eq!((tail.line, tail.end_line), (10, 10));
        assert_eq!(func.lens[NAME], 3);
    }

    #[test]
    fn a_class_leaves_its_methods_out() {
        let text = "class A:\n    x = 1\n    def go(self):\n        run()\n";
        let mut go = def("go", "method", 3, 4);
        go.container = Some(Arc::from("A"));
        let defs = [def("A", "class", 1, 4), go];
        let docs = file_docs(text, &defs, true);
        assert_eq!(docs.len(), 2);
        assert_eq!(count(&docs[0], "run", BODY), 0);
        assert_eq!(count(&docs[0], "x", BODY), 1);
        assert_eq!(count(&docs[1], "run", BODY), 1);
        assert_eq!(count(&docs[1], "a", CONTAINER), 1);
    }

    #[test]
    fn regions_are_cut() {
        let text: String = (0..100).map(|i| format!("word{i}\n")).collect();
        let docs = file_docs(&text, &[], false);
        assert_eq!(docs.len(), 3);
        assert!(docs.iter().all(|d| d.end_line - d.line < REGION_MAX_LINES));
        // Blank files give nothing.
        assert!(file_docs("\n\n  \n", &[], false).is_empty());
        assert!(file_docs("", &[], false).is_empty());
    }

    #[test]
    fn definitions_past_the_text_are_ignored() {
        let docs = file_docs(
            "fn a() {}\n",
            &[def("a", "function", 1, 99), def("b", "function", 50, 60)],
            false,
        );
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].end_line, 1);
    }
}
