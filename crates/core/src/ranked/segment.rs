//! A segment: the inverted index of a set of files, packed and immutable. A root's index is
//! one base segment (every text file of the root) and, after changes, a small one for the
//! files re-indexed since (`index/`); a query scores both the same way (`score.rs`).
//!
//! Layout: per file its relative path (one byte arena), the size, mtime and identity it
//! was read at, its language and its documents (a contiguous range); per document its
//! lines, kind, name and container (one more arena) and its field lengths; a dictionary of
//! every term (sorted 64-bit hashes) with its document frequency and its postings; and a
//! second, small dictionary for the terms of paths, whose postings name files.
//!
//! A posting is the document number as a varint difference from the previous one, then a
//! byte whose low four bits say which fields hold the term (name, container, comment,
//! body) and whose high four bits are the body count when 1 to 15 (else 0 and a varint
//! follows), then a varint count for each other field present. Most postings take two or
//! three bytes. Path postings are a file number difference and a count.
//!
//! A built segment is one buffer of sections at 8-byte offsets (files and documents as
//! fixed-size records, read in place with zerocopy casts), the same in memory and in the
//! store, so a stored segment is used where it lies (`store::mapped`). Every read is
//! bounds-checked: what passed its checksum but not its author gives wrong answers at
//! worst, never a panic.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::docs::{BODY, Doc, FIELDS};
use super::terms::{self, Term};
use crate::index::Stamp;
use crate::store::mapped::Bytes;
use crate::store::{put_var, section_header, var};

/// Why a file has no documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileState {
    Indexed = 0,
    /// Over the size cap: not read.
    TooLarge = 1,
    /// Binary, unreadable or vanished while read.
    Skipped = 2,
}

impl FileState {
    pub(crate) fn from_u8(v: u8) -> Option<FileState> {
        match v {
            0 => Some(FileState::Indexed),
            1 => Some(FileState::TooLarge),
            2 => Some(FileState::Skipped),
            _ => None,
        }
    }
}

/// One file of a segment (48 bytes).
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct SegFile {
    /// Its relative path in the paths arena.
    pub(crate) path_at: u32,
    pub(crate) path_bytes: u32,
    pub(crate) size: u64,
    pub(crate) mtime: u64,
    pub(crate) ident: u64,
    /// Its documents: `docs[first..first + count]`.
    pub(crate) first: u32,
    pub(crate) count: u32,
    /// Tokens in its path field.
    pub(crate) path_len: u16,
    /// Position in `Lang::ALL`, or `u8::MAX` for a file in no supported language.
    pub(crate) lang: u8,
    /// A [`FileState`].
    pub(crate) state: u8,
    pub(crate) _pad: [u8; 4],
}

impl SegFile {
    /// The size, mtime and identity it was indexed at.
    pub(crate) fn stamp(&self) -> Stamp {
        (self.size, self.mtime, self.ident)
    }

    /// Its documents' ids.
    pub(crate) fn doc_ids(&self) -> std::ops::Range<u32> {
        self.first..self.first + self.count
    }
}

/// One document of a segment (36 bytes).
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct SegDoc {
    pub(crate) file: u32,
    pub(crate) line: u32,
    pub(crate) end_line: u32,
    /// Name and container in the names arena (length 0: none).
    pub(crate) name_at: u32,
    pub(crate) container_at: u32,
    pub(crate) name_len: u16,
    pub(crate) container_len: u16,
    /// Tokens per field, saturated.
    pub(crate) lens: [u16; FIELDS],
    pub(crate) kind: u8,
    pub(crate) _pad: [u8; 3],
}

/// A segment while it is built, before it is laid out.
#[derive(Debug, Default)]
struct Draft {
    files: Vec<SegFile>,
    paths: Vec<u8>,
    docs: Vec<SegDoc>,
    names: Vec<u8>,
    terms: Vec<Term>,
    /// `postings[offsets[i]..offsets[i + 1]]` are term `i`'s (64-bit: a monorepo's
    /// postings pass 4 GiB).
    offsets: Vec<u64>,
    dfs: Vec<u32>,
    path_terms: Vec<Term>,
    path_offsets: Vec<u32>,
    path_postings: Vec<u8>,
}

/// Sections of a segment's buffer, in order.
pub(crate) const SECTIONS: usize = 11;
pub(crate) const FILES: usize = 0;
pub(crate) const PATHS: usize = 1;
pub(crate) const DOCS: usize = 2;
pub(crate) const NAMES: usize = 3;
pub(crate) const TERMS: usize = 4;
pub(crate) const OFFSETS: usize = 5;
pub(crate) const DFS: usize = 6;
pub(crate) const POSTINGS: usize = 7;
pub(crate) const PATH_TERMS: usize = 8;
pub(crate) const PATH_OFFSETS: usize = 9;
pub(crate) const PATH_POSTINGS: usize = 10;
/// Bytes of the header: a layout version, then (offset, length) per section.
pub(crate) const HEADER_BYTES: usize = 8 + 16 * SECTIONS;
pub(crate) const LAYOUT_VERSION: u32 = 3;

/// A packed inverted index (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Segment {
    pub(crate) bytes: Bytes,
    pub(crate) sections: [Range<usize>; SECTIONS],
}

/// One posting: a document and the term's count in each field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Posting {
    pub(crate) doc: u32,
    pub(crate) tf: [u32; FIELDS],
}

impl Segment {
    pub(crate) fn section(&self, at: usize) -> &[u8] {
        self.bytes
            .as_slice()
            .get(self.sections[at].clone())
            .unwrap_or_default()
    }

    pub(crate) fn files(&self) -> &[SegFile] {
        <[SegFile]>::ref_from_bytes(self.section(FILES)).unwrap_or_default()
    }

    pub(crate) fn docs(&self) -> &[SegDoc] {
        <[SegDoc]>::ref_from_bytes(self.section(DOCS)).unwrap_or_default()
    }

    fn words(&self, at: usize) -> &[u64] {
        <[u64]>::ref_from_bytes(self.section(at)).unwrap_or_default()
    }

    fn halves(&self, at: usize) -> &[u32] {
        <[u32]>::ref_from_bytes(self.section(at)).unwrap_or_default()
    }

    pub(crate) fn path(&self, file: u32) -> &[u8] {
        let Some(f) = self.files().get(file as usize) else {
            return b"";
        };
        let at = f.path_at as usize;
        self.section(PATHS)
            .get(at..at + f.path_bytes as usize)
            .unwrap_or_default()
    }

    pub(crate) fn name(&self, doc: &SegDoc) -> &str {
        self.text(doc.name_at, doc.name_len)
    }

    pub(crate) fn container(&self, doc: &SegDoc) -> Option<&str> {
        (doc.container_len > 0).then(|| self.text(doc.container_at, doc.container_len))
    }

    fn text(&self, at: u32, len: u16) -> &str {
        let bytes = (self.section(NAMES))
            .get(at as usize..at as usize + len as usize)
            .unwrap_or(b"");
        std::str::from_utf8(bytes).unwrap_or("")
    }

    /// Bytes of the segment (in the heap, or mapped from the store).
    pub(crate) fn size(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn is_mapped(&self) -> bool {
        self.bytes.is_mapped()
    }

    /// Its stored file was cut short while mapped: what it says may be zeros.
    pub(crate) fn damaged(&self) -> bool {
        self.bytes.damaged()
    }

    /// Distinct terms held.
    pub(crate) fn term_count(&self) -> usize {
        self.words(TERMS).len()
    }

    /// Heap bytes held (0 for a segment used from its stored file).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.heap_bytes()
    }

    /// The postings bytes of term `i` of the main dictionary.
    fn list(&self, i: usize) -> &[u8] {
        let offsets = self.words(OFFSETS);
        self.between(
            POSTINGS,
            offsets.get(i).copied(),
            offsets.get(i + 1).copied(),
        )
    }

    /// The postings bytes of term `i` of the path dictionary.
    fn path_list(&self, i: usize) -> &[u8] {
        let offsets = self.halves(PATH_OFFSETS);
        let at = |i: usize| offsets.get(i).copied().map(u64::from);
        self.between(PATH_POSTINGS, at(i), at(i + 1))
    }

    /// The bytes of `section` from one offset to the next (none when either is missing or
    /// they are out of range).
    fn between(&self, section: usize, from: Option<u64>, to: Option<u64>) -> &[u8] {
        match (from, to) {
            (Some(from), Some(to)) => (self.section(section))
                .get(from as usize..to as usize)
                .unwrap_or_default(),
            _ => &[],
        }
    }

    /// The number of documents holding `term` in any field (the path included).
    pub(crate) fn df(&self, term: Term) -> u32 {
        (self.words(TERMS).binary_search(&term))
            .ok()
            .and_then(|i| self.halves(DFS).get(i).copied())
            .unwrap_or(0)
    }

    /// Calls `f` with every posting of `term`, in document order. A damaged posting ends
    /// the list (a loaded segment is checksummed; this only keeps bad bytes from
    /// panicking).
    pub(crate) fn postings(&self, term: Term, mut f: impl FnMut(Posting)) {
        let Ok(i) = self.words(TERMS).binary_search(&term) else {
            return;
        };
        let mut bytes = self.list(i);
        let docs = self.docs().len();
        let mut doc = 0u32;
        while let Some((delta, tf)) = next_posting(&mut bytes) {
            // The first delta is from 0: the document itself.
            doc = doc.wrapping_add(delta);
            if (doc as usize) < docs {
                f(Posting { doc, tf });
            }
        }
    }

    /// Calls `f` with every file whose path holds `term`, with its count.
    pub(crate) fn path_postings(&self, term: Term, mut f: impl FnMut(u32, u32)) {
        let Ok(i) = self.words(PATH_TERMS).binary_search(&term) else {
            return;
        };
        let mut bytes = self.path_list(i);
        let files = self.files().len();
        let mut file = 0u32;
        while !bytes.is_empty() {
            let (Some(delta), Some(tf)) = (var(&mut bytes), var(&mut bytes)) else {
                return;
            };
            file = file.wrapping_add(delta as u32);
            if (file as usize) < files {
                f(file, tf as u32);
            }
        }
    }
}

/// Reads one posting off the front of `bytes`: its document's difference from the
/// previous one (from 0 for the first) and its counts per field; `None` at the end or at
/// a damaged posting (which ends the list).
pub(crate) fn next_posting(bytes: &mut &[u8]) -> Option<(u32, [u32; FIELDS])> {
    let delta = var(bytes)?;
    let (&head, rest) = bytes.split_first()?;
    *bytes = rest;
    let mut tf = [0u32; FIELDS];
    for (field, slot) in tf.iter_mut().enumerate() {
        if head & (1 << field) == 0 {
            continue;
        }
        *slot = if field == BODY && head >> 4 != 0 {
            u32::from(head >> 4)
        } else {
            var(bytes)? as u32
        };
    }
    Some((delta as u32, tf))
}

/// One term's postings while a segment is built.
#[derive(Default)]
struct Acc {
    bytes: Vec<u8>,
    last: u32,
    df: u32,
}

/// Builds a [`Segment`] from files added in order.
#[derive(Default)]
pub(crate) struct Builder {
    seg: Draft,
    acc: HashMap<Term, Acc>,
    /// (term, file, count) of every path token.
    path: Vec<(Term, u32, u32)>,
    interned: HashMap<Arc<str>, (u32, u16)>,
    /// Bytes reserved for the accumulators' postings so far.
    reserved: usize,
}

impl Builder {
    /// About how much heap it holds (what a build in parts keeps under its budget).
    pub(crate) fn heap_bytes(&self) -> usize {
        let seg = &self.seg;
        self.reserved
            + seg.files.capacity() * size_of::<SegFile>()
            + seg.docs.capacity() * size_of::<SegDoc>()
            + seg.paths.capacity()
            + seg.names.capacity()
            + self.path.capacity() * size_of::<(Term, u32, u32)>()
            // Hash tables: a key, a value and control bytes per slot.
            + self.acc.capacity() * (size_of::<(Term, Acc)>() + 1)
            + self.interned.capacity() * (size_of::<(Arc<str>, (u32, u16))>() + 1 + 16)
    }

    /// Files added so far.
    pub(crate) fn files(&self) -> usize {
        self.seg.files.len()
    }

    /// Adds one file with its documents (none for a skipped file).
    pub(crate) fn add(
        &mut self,
        rel: &[u8],
        stamp: Stamp,
        lang: u8,
        state: FileState,
        docs: &[Doc],
    ) {
        let file = self.seg.files.len() as u32;
        let path = (self.seg.paths.len() as u32, rel.len() as u32);
        self.seg.paths.extend_from_slice(rel);
        let first = self.seg.docs.len() as u32;
        let mut path_counts: HashMap<Term, u32> = HashMap::new();
        let mut path_len = 0u32;
        if !docs.is_empty() {
            let text = String::from_utf8_lossy(rel);
            terms::path_tokens(&text, &mut |t| {
                *path_counts.entry(terms::hash(t)).or_insert(0) += 1;
                path_len += 1;
            });
        }
        for doc in docs {
            self.add_doc(file, doc, &path_counts);
        }
        for (&term, &count) in &path_counts {
            self.path.push((term, file, count));
        }
        self.seg.files.push(SegFile {
            path_at: path.0,
            path_bytes: path.1,
            size: stamp.0,
            mtime: stamp.1,
            ident: stamp.2,
            first,
            count: docs.len() as u32,
            path_len: path_len.min(u32::from(u16::MAX)) as u16,
            lang,
            state: state as u8,
            _pad: [0; 4],
        });
    }

    fn add_doc(&mut self, file: u32, doc: &Doc, path: &HashMap<Term, u32>) {
        let id = self.seg.docs.len() as u32;
        // Names repeat across files (`new`, `init`): each is stored once, like containers.
        let name = match self.interned.get(doc.name.as_str()) {
            Some(&span) => span,
            None => {
                let span = self.put_name(&doc.name);
                self.interned.insert(Arc::from(doc.name.as_str()), span);
                span
            }
        };
        let container = match &doc.container {
            Some(c) => match self.interned.get(c) {
                Some(&span) => span,
                None => {
                    let span = self.put_name(c);
                    self.interned.insert(c.clone(), span);
                    span
                }
            },
            None => (0, 0),
        };
        let mut lens = [0u16; FIELDS];
        for (slot, len) in lens.iter_mut().zip(doc.lens) {
            *slot = len.min(u32::from(u16::MAX)) as u16;
        }
        self.seg.docs.push(SegDoc {
            file,
            line: doc.line,
            end_line: doc.end_line,
            name_at: name.0,
            container_at: container.0,
            name_len: name.1,
            container_len: container.1,
            lens,
            kind: doc.kind,
            _pad: [0; 3],
        });
        for &(term, tf) in &doc.terms {
            let acc = self.acc.entry(term).or_default();
            // Grown by half, not doubled: the accumulators are the build's peak, and
            // doubling leaves up to half of each long list unused.
            if acc.bytes.capacity() - acc.bytes.len() < 16 {
                let more = (acc.bytes.capacity() / 2).max(16);
                acc.bytes.reserve_exact(more);
                self.reserved += more;
            }
            let delta = match acc.bytes.is_empty() {
                true => id,
                false => id - acc.last,
            };
            put_var(&mut acc.bytes, u64::from(delta));
            acc.last = id;
            acc.df += 1;
            let mut head = 0u8;
            for (field, &n) in tf.iter().enumerate() {
                if n > 0 {
                    head |= 1 << field;
                }
            }
            let body = tf[BODY];
            if (1..16).contains(&body) {
                head |= (body as u8) << 4;
            }
            acc.bytes.push(head);
            for (field, &n) in tf.iter().enumerate() {
                if n > 0 && !(field == BODY && (1..16).contains(&body)) {
                    put_var(&mut acc.bytes, u64::from(n));
                }
            }
        }
        // Path terms this document does not hold in a field still count it in their df.
        for &term in path.keys() {
            if doc.terms.binary_search_by_key(&term, |(t, _)| *t).is_err() {
                self.acc.entry(term).or_default().df += 1;
            }
        }
    }

    fn put_name(&mut self, name: &str) -> (u32, u16) {
        let name = cut_at_char(name, u16::MAX as usize);
        let at = self.seg.names.len() as u32;
        self.seg.names.extend_from_slice(name.as_bytes());
        (at, name.len() as u16)
    }

    pub(crate) fn finish(self) -> Segment {
        let Builder {
            mut seg,
            acc,
            mut path,
            ..
        } = self;
        let mut acc = acc;
        // The dictionary first; each term's postings are moved into the laid-out buffer
        // (and freed) one by one: the build's peak is the accumulators and the buffer, not
        // a third copy of the postings between them.
        let mut terms: Vec<Term> = acc.keys().copied().collect();
        terms.sort_unstable();
        seg.offsets = Vec::with_capacity(terms.len() + 1);
        seg.dfs = Vec::with_capacity(terms.len());
        let mut total = 0usize;
        for term in &terms {
            let a = &acc[term];
            seg.offsets.push(total as u64);
            seg.dfs.push(a.df);
            total += a.bytes.len();
        }
        seg.offsets.push(total as u64);
        seg.terms = terms;
        path.sort_unstable();
        let mut last: Option<(Term, u32)> = None;
        for (term, file, count) in path {
            if last.map(|(t, _)| t) != Some(term) {
                seg.path_terms.push(term);
                seg.path_offsets.push(seg.path_postings.len() as u32);
                last = Some((term, 0));
            }
            let prev = last.map_or(0, |(_, f)| f);
            put_var(&mut seg.path_postings, u64::from(file - prev));
            put_var(&mut seg.path_postings, u64::from(count));
            last = Some((term, file));
        }
        seg.path_offsets.push(seg.path_postings.len() as u32);
        let fill = |out: &mut [u8]| {
            for (i, term) in seg.terms.iter().enumerate() {
                let a = acc.remove(term).unwrap_or_default();
                let at = seg.offsets[i] as usize;
                out[at..at + a.bytes.len()].copy_from_slice(&a.bytes);
            }
        };
        lay_out(&seg, total, fill)
    }
}

/// The draft's sections in one 8-aligned buffer, after a header of the layout version,
/// and each section's (offset, length); the postings (`postings` bytes) are written by
/// `fill_postings`.
fn lay_out(draft: &Draft, postings: usize, fill_postings: impl FnOnce(&mut [u8])) -> Segment {
    let sections: [&[u8]; SECTIONS] = [
        draft.files.as_bytes(),
        &draft.paths,
        draft.docs.as_bytes(),
        &draft.names,
        draft.terms.as_bytes(),
        draft.offsets.as_bytes(),
        draft.dfs.as_bytes(),
        // Written by `fill_postings`.
        &[],
        draft.path_terms.as_bytes(),
        draft.path_offsets.as_bytes(),
        &draft.path_postings,
    ];
    let mut ranges: [Range<usize>; SECTIONS] = Default::default();
    let mut at = HEADER_BYTES;
    for (i, (range, section)) in ranges.iter_mut().zip(&sections).enumerate() {
        let len = if i == POSTINGS {
            postings
        } else {
            section.len()
        };
        *range = at..at + len;
        at = (at + len).next_multiple_of(8);
    }
    let bytes = Bytes::build(at, |buf| {
        buf[..HEADER_BYTES].copy_from_slice(&section_header(LAYOUT_VERSION, &ranges));
        for (i, (range, section)) in ranges.iter().zip(sections).enumerate() {
            if i != POSTINGS {
                buf[range.clone()].copy_from_slice(section);
            }
        }
        fill_postings(&mut buf[ranges[POSTINGS].clone()]);
    });
    Segment {
        bytes,
        sections: ranges,
    }
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut_at_char(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ranked::docs::file_docs;
    use crate::symbols::extract::Definition;

    pub(crate) fn def(name: &str, line: u64, end_line: u64) -> Definition {
        Definition {
            name: name.into(),
            kind: "function",
            line,
            end_line,
            name_line: line,
            signature: String::new(),
            container: Some(Arc::from("Timer")),
            depth: 0,
        }
    }

    /// Three files (definitions, a skipped file, a text file): the segment the ranked
    /// tests share.
    pub(crate) fn sample() -> Segment {
        let mut b = Builder::default();
        let a = "fn reset_timer() {\n  stop(); stop();\n}\nfn other() { go(); }\n";
        b.add(
            b"src/timer.rs",
            (1, 2, 3),
            0,
            FileState::Indexed,
            &file_docs(a, &[def("reset_timer", 1, 3), def("other", 4, 4)], false),
        );
        b.add(b"big.bin", (9, 9, 9), u8::MAX, FileState::Skipped, &[]);
        let c = "# Timer\nreset the timer twice\n";
        b.add(
            b"docs/timer.md",
            (4, 5, 6),
            u8::MAX,
            FileState::Indexed,
            &file_docs(c, &[], false),
        );
        b.finish()
    }

    pub(crate) fn all(seg: &Segment, token: &str) -> Vec<Posting> {
        let mut out = Vec::new();
        seg.postings(terms::hash(token), |p| out.push(p));
        out
    }

    #[test]
    fn postings_hold_counts_per_field() {
        let seg = sample();
        assert_eq!(seg.files().len(), 3);
        assert_eq!(seg.docs().len(), 3);
        assert_eq!(seg.name(&seg.docs()[0]), "reset_timer");
        assert_eq!(seg.container(&seg.docs()[0]), Some("Timer"));
        assert_eq!(seg.container(&seg.docs()[2]), None);
        assert_eq!(
            all(&seg, "stop"),
            [Posting {
                doc: 0,
                tf: [0, 0, 0, 2]
            }]
        );
        let timer = all(&seg, "timer");
        assert_eq!(timer.len(), 3, "{timer:?}");
        assert_eq!(timer[0].tf[0], 1);
        assert_eq!(timer[0].tf[1], 1);
        assert_eq!(timer[2].tf[BODY], 2);
        // In every document's path or fields.
        assert_eq!(seg.df(terms::hash("timer")), 3);
        // `src` is only in a path: two documents of that file.
        assert_eq!(seg.df(terms::hash("src")), 2);
        let mut files = Vec::new();
        seg.path_postings(terms::hash("timer"), |f, n| files.push((f, n)));
        assert_eq!(files, [(0, 1), (2, 1)]);
        assert!(all(&seg, "absent").is_empty());
    }

    #[test]
    fn large_counts_take_varints() {
        let text = format!("fn f() {{\n{}\n}}\n", "x ".repeat(300));
        let mut b = Builder::default();
        b.add(
            b"a.rs",
            (0, 0, 0),
            0,
            FileState::Indexed,
            &file_docs(&text, &[def("f", 1, 3)], false),
        );
        let seg = b.finish();
        assert_eq!(all(&seg, "x")[0].tf[BODY], 300);
    }
}
