//! A base segment built in parts, so that a monorepo's search index is never whole in
//! memory while it is built. Files go into an in-memory [`Builder`] as usual; once it holds
//! more than the budget (`--build-memory-mb`) it is finished into a segment, spilled to a
//! scratch file of the root's store entry (`store::scratch`), and a new part starts. At the
//! end the parts are merged into the stored file by streaming: files and documents
//! concatenated (their numbers shifted), each dictionary the union of the parts' (merged
//! in term order), each term's postings the parts' lists one after the other, the first
//! document of each written again as a difference from the previous part's last. Memory
//! holds a few read buffers per part, never a dictionary or a list of the whole root. The
//! stored file is then used in place like any loaded base.
//!
//! A root whose index fits the budget, or with nowhere to spill (no store, another server
//! writes the entry, not Unix), is built in memory as one segment, as before.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::ops::Range;

use zerocopy::{FromBytes, IntoBytes};

use super::segment::{
    Builder, DFS, DOCS, FILES, HEADER_BYTES, LAYOUT_VERSION, NAMES, OFFSETS, PATH_OFFSETS,
    PATH_POSTINGS, PATH_TERMS, PATHS, POSTINGS, SECTIONS, SegDoc, SegFile, Segment, TERMS,
    next_posting,
};
use crate::store::Kind;
use crate::store::scratch::{Finished, Scratch, ScratchReader, Spill, Unsealed};
use crate::store::{put_var, section_header, var};

/// A base being built, in memory or in parts (see the module documentation).
pub(crate) struct Parts {
    builder: Builder,
    spill: Option<Spill>,
    parts: Vec<Part>,
}

/// One spilled part: its segment's bytes in a scratch file.
struct Part {
    file: Scratch,
    sections: [Range<u64>; SECTIONS],
    files: u64,
    docs: u64,
}

impl Parts {
    /// A build that spills to `spill` (when given) past its budget.
    pub(crate) fn new(spill: Option<Spill>) -> Parts {
        Parts {
            builder: Builder::default(),
            spill,
            parts: Vec::new(),
        }
    }

    /// The part being built, to add files to; then [`Parts::spill_if_full`].
    pub(crate) fn builder(&mut self) -> &mut Builder {
        &mut self.builder
    }

    /// Spills the part being built when it holds more than the budget.
    pub(crate) fn spill_if_full(&mut self) -> io::Result<()> {
        match &self.spill {
            Some(spill) if self.builder.heap_bytes() > spill.budget() => {
                let part = std::mem::take(&mut self.builder).finish();
                self.parts.push(Part::write(spill, &part)?);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Parts spilled so far.
    pub(crate) fn spilled(&self) -> usize {
        self.parts.len()
    }

    /// The base: in memory when nothing was spilled (or there was nowhere to spill), else
    /// every part merged into a stored file of the entry, still to be published.
    pub(crate) fn finish(mut self) -> io::Result<Finished<Segment>> {
        let Some(spill) = self.spill.take() else {
            return Ok(Finished::Memory(self.builder.finish()));
        };
        if self.parts.is_empty() {
            return Ok(Finished::Memory(self.builder.finish()));
        }
        if self.builder.files() > 0 {
            let last = std::mem::take(&mut self.builder).finish();
            self.parts.push(Part::write(&spill, &last)?);
        }
        let out = spill.unsealed(Kind::Search)?;
        let len = merge(&self.parts, &out)?;
        // The parts are read: their disk is given back before the file is checksummed.
        self.parts.clear();
        Ok(Finished::Stored(out.seal(len)?))
    }
}

impl Part {
    fn write(spill: &Spill, seg: &Segment) -> io::Result<Part> {
        let file = spill.scratch("search-part")?;
        file.write_at(0, seg.bytes.as_slice())?;
        Ok(Part {
            file,
            sections: seg.sections.clone().map(|r| r.start as u64..r.end as u64),
            files: seg.files().len() as u64,
            docs: seg.docs().len() as u64,
        })
    }

    fn len(&self, section: usize) -> u64 {
        self.sections[section].end - self.sections[section].start
    }

    fn reader(&self, section: usize) -> ScratchReader<'_> {
        self.file.reader(self.sections[section].clone())
    }
}

fn too_large(what: &str) -> io::Error {
    io::Error::other(format!(
        "the search index has too many {what} for one segment"
    ))
}

/// Merges `parts` (in order) into `out`'s payload; returns its length.
fn merge(parts: &[Part], out: &Unsealed) -> io::Result<u64> {
    let sum = |f: &dyn Fn(&Part) -> u64| parts.iter().map(f).sum::<u64>();
    let (files, docs) = (sum(&|p| p.files), sum(&|p| p.docs));
    let (paths, names) = (sum(&|p| p.len(PATHS)), sum(&|p| p.len(NAMES)));
    for (what, n) in [("files", files), ("documents", docs), ("paths", paths)] {
        if n > u64::from(u32::MAX) {
            return Err(too_large(what));
        }
    }
    if names > u64::from(u32::MAX) {
        return Err(too_large("names"));
    }
    let terms = distinct(parts, TERMS)?;
    let path_terms = distinct(parts, PATH_TERMS)?;
    let mut ranges: [Range<u64>; SECTIONS] = Default::default();
    let mut at = HEADER_BYTES as u64;
    let mut place = |section: usize, len: u64| {
        ranges[section] = at..at + len;
        at = (at + len).next_multiple_of(8);
        at
    };
    place(FILES, files * size_of::<SegFile>() as u64);
    place(PATHS, paths);
    place(DOCS, docs * size_of::<SegDoc>() as u64);
    place(NAMES, names);
    place(TERMS, terms * 8);
    place(DFS, terms * 4);
    place(OFFSETS, (terms + 1) * 8);
    place(PATH_TERMS, path_terms * 8);
    let path_at = place(PATH_OFFSETS, (path_terms + 1) * 4);
    // The postings' lengths are known once written: the path postings, then the main
    // ones, last.
    let fixed = ranges.clone();
    concatenate(parts, out, &fixed)?;
    let path_end = merge_paths(parts, out, &fixed, path_at)?;
    let mut place = |section: usize, from: u64, to: u64| {
        ranges[section] = from..to;
        to.next_multiple_of(8)
    };
    let at = place(PATH_POSTINGS, path_at, path_end);
    let end = merge_postings(parts, out, &fixed, at)?;
    let at = place(POSTINGS, at, end);
    let ranges = ranges.map(|r| r.start as usize..r.end as usize);
    out.write_at(0, &section_header(LAYOUT_VERSION, &ranges))?;
    Ok(at)
}

/// How many distinct terms the parts' dictionaries at `section` hold together.
fn distinct(parts: &[Part], section: usize) -> io::Result<u64> {
    let mut merged = Merged::new(parts, section)?;
    let mut n = 0;
    while let Some(term) = merged.next_term() {
        n += 1;
        while merged.next_part(term)?.is_some() {}
    }
    Ok(n)
}

/// Files, paths, documents and names: each part's after the previous, their numbers
/// shifted past the previous parts'.
fn concatenate(parts: &[Part], out: &Unsealed, ranges: &[Range<u64>; SECTIONS]) -> io::Result<()> {
    let mut files = out.writer(ranges[FILES].start);
    let mut paths = out.writer(ranges[PATHS].start);
    let mut docs = out.writer(ranges[DOCS].start);
    let mut names = out.writer(ranges[NAMES].start);
    let (mut file_base, mut doc_base, mut path_base, mut name_base) = (0u32, 0u32, 0u32, 0u32);
    let mut record = Vec::new();
    for part in parts {
        let mut reader = part.reader(FILES);
        for _ in 0..part.files {
            record.clear();
            reader.take(size_of::<SegFile>(), &mut record)?;
            let mut file = SegFile::read_from_bytes(&record).map_err(|_| damaged())?;
            file.path_at += path_base;
            file.first += doc_base;
            files.put(file.as_bytes())?;
        }
        let mut reader = part.reader(DOCS);
        for _ in 0..part.docs {
            record.clear();
            reader.take(size_of::<SegDoc>(), &mut record)?;
            let mut doc = SegDoc::read_from_bytes(&record).map_err(|_| damaged())?;
            doc.file += file_base;
            doc.name_at += name_base;
            doc.container_at += name_base;
            docs.put(doc.as_bytes())?;
        }
        paths.copy(&mut part.reader(PATHS))?;
        names.copy(&mut part.reader(NAMES))?;
        file_base += part.files as u32;
        doc_base += part.docs as u32;
        path_base += part.len(PATHS) as u32;
        name_base += part.len(NAMES) as u32;
    }
    for out in [files, paths, docs, names] {
        out.done()?;
    }
    Ok(())
}

/// The path dictionary: its terms and offsets in their places, its postings (file
/// numbers shifted) from `at` on. Returns where the postings end.
fn merge_paths(
    parts: &[Part],
    out: &Unsealed,
    ranges: &[Range<u64>; SECTIONS],
    at: u64,
) -> io::Result<u64> {
    let first_files = starts(parts.iter().map(|p| p.files));
    let mut terms = out.writer(ranges[PATH_TERMS].start);
    let mut offsets = out.writer(ranges[PATH_OFFSETS].start);
    let mut postings = out.writer(at);
    let mut merged = Merged::with_lists(parts, PATH_TERMS, PATH_OFFSETS, PATH_POSTINGS, 4)?;
    let mut list = Vec::new();
    let mut encoded = Vec::new();
    let mut written = 0u64;
    while let Some(term) = merged.next_term() {
        terms.put(&term.to_le_bytes())?;
        offsets.put(
            &u32::try_from(written)
                .map_err(|_| too_large("paths"))?
                .to_le_bytes(),
        )?;
        let mut last = 0u64;
        while let Some(part) = merged.next_part(term)? {
            merged.list(part, &mut list)?;
            let mut bytes = list.as_slice();
            let mut file = 0u64;
            encoded.clear();
            while let (Some(delta), Some(count)) = (var(&mut bytes), var(&mut bytes)) {
                file += delta;
                let global = first_files[part] + file;
                put_var(&mut encoded, global - last);
                put_var(&mut encoded, count);
                last = global;
            }
            postings.put(&encoded)?;
            written += encoded.len() as u64;
        }
    }
    offsets.put(
        &u32::try_from(written)
            .map_err(|_| too_large("paths"))?
            .to_le_bytes(),
    )?;
    terms.done()?;
    offsets.done()?;
    postings.done()
}

/// The main dictionary: terms, document frequencies and offsets in their places, the
/// postings from `at` on. Returns where the postings end.
fn merge_postings(
    parts: &[Part],
    out: &Unsealed,
    ranges: &[Range<u64>; SECTIONS],
    at: u64,
) -> io::Result<u64> {
    let first_docs = starts(parts.iter().map(|p| p.docs));
    let mut terms = out.writer(ranges[TERMS].start);
    let mut dfs = out.writer(ranges[DFS].start);
    let mut offsets = out.writer(ranges[OFFSETS].start);
    let mut postings = out.writer(at);
    let mut merged = Merged::with_lists(parts, TERMS, OFFSETS, POSTINGS, 8)?;
    let mut df_readers: Vec<ScratchReader> = parts.iter().map(|p| p.reader(DFS)).collect();
    let mut list = Vec::new();
    let mut head = Vec::new();
    let mut written = 0u64;
    while let Some(term) = merged.next_term() {
        terms.put(&term.to_le_bytes())?;
        offsets.put(&written.to_le_bytes())?;
        let mut df = 0u32;
        let mut last: Option<u64> = None;
        while let Some(part) = merged.next_part(term)? {
            df = df.saturating_add(df_readers[part].u32()?);
            merged.list(part, &mut list)?;
            if list.is_empty() {
                // A term only in the paths of this part's documents.
                continue;
            }
            let mut rest = list.as_slice();
            let first = var(&mut rest).ok_or_else(damaged)?;
            let mut walk = list.as_slice();
            let mut doc = 0u64;
            while let Some((delta, _)) = next_posting(&mut walk) {
                doc += u64::from(delta);
            }
            let global_first = first_docs[part] + first;
            head.clear();
            put_var(&mut head, global_first - last.unwrap_or(0));
            postings.put(&head)?;
            postings.put(rest)?;
            written += (head.len() + rest.len()) as u64;
            last = Some(first_docs[part] + doc);
        }
        dfs.put(&df.to_le_bytes())?;
    }
    offsets.put(&written.to_le_bytes())?;
    for out in [terms, dfs, offsets] {
        out.done()?;
    }
    postings.done()
}

/// Running sums: where each part's numbers start in the merged segment.
fn starts(counts: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut at = 0;
    counts
        .map(|n| {
            let start = at;
            at += n;
            start
        })
        .collect()
}

fn damaged() -> io::Error {
    io::Error::other("a spilled part of the search index does not read back as written")
}

/// The parts' dictionaries at one section merged in term order: each distinct term once,
/// then the parts that hold it, in part order (so documents stay in order).
struct Merged<'a> {
    terms: Vec<ScratchReader<'a>>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// With lists: per part its offsets and postings readers, and the last offset read.
    lists: Vec<(ScratchReader<'a>, ScratchReader<'a>, u64)>,
    /// Bytes per offset (4 or 8).
    width: usize,
}

impl<'a> Merged<'a> {
    fn new(parts: &'a [Part], section: usize) -> io::Result<Merged<'a>> {
        let mut merged = Merged {
            terms: parts.iter().map(|p| p.reader(section)).collect(),
            heap: BinaryHeap::new(),
            lists: Vec::new(),
            width: 8,
        };
        for part in 0..parts.len() {
            merged.advance(part)?;
        }
        Ok(merged)
    }

    fn with_lists(
        parts: &'a [Part],
        terms: usize,
        offsets: usize,
        postings: usize,
        width: usize,
    ) -> io::Result<Merged<'a>> {
        let mut merged = Merged::new(parts, terms)?;
        merged.width = width;
        for part in parts {
            let mut offsets = part.reader(offsets);
            let first = offsets.offset(width)?;
            merged.lists.push((offsets, part.reader(postings), first));
        }
        Ok(merged)
    }

    /// Puts `part`'s next term on the heap, if it has one.
    fn advance(&mut self, part: usize) -> io::Result<()> {
        if let Some(term) = self.terms[part].next_u64()? {
            self.heap.push(Reverse((term, part)));
        }
        Ok(())
    }

    /// The smallest term not yet merged.
    fn next_term(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((term, _))| *term)
    }

    /// The next part holding `term` (moving that part on to its next term).
    fn next_part(&mut self, term: u64) -> io::Result<Option<usize>> {
        match self.heap.peek() {
            Some(Reverse((t, part))) if *t == term => {
                let part = *part;
                self.heap.pop();
                self.advance(part)?;
                Ok(Some(part))
            }
            _ => Ok(None),
        }
    }

    /// `part`'s postings list of the term just taken from it, into `list`.
    fn list(&mut self, part: usize, list: &mut Vec<u8>) -> io::Result<()> {
        let width = self.width;
        let (offsets, postings, last) = &mut self.lists[part];
        let next = offsets.offset(width)?;
        let len = next.checked_sub(*last).ok_or_else(damaged)?;
        *last = next;
        list.clear();
        postings.take(len as usize, list)
    }
}

#[cfg(test)]
mod tests;
