//! Packing a [`Table`]: files added in path order to a [`Draft`] (names and containers
//! interned, lowercase forms of non-ASCII names beside them), then the records sorted by
//! name and every section laid out in one buffer, in memory or (`parts.rs`, the worker)
//! into a stored file.

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use zerocopy::IntoBytes;

use super::table::{
    Draft, FileRec, FileSyms, HEADER_BYTES, LAYOUT_VERSION, Layout, Lower, NONE, Rec, Table,
    lang_id, lowercase,
};
use crate::platform::os::OsStrExt;
use crate::store::mapped::Bytes;
use crate::store::section_header;
use crate::symbols::lang::KINDS;

/// Packs files into a [`Table`].
#[derive(Default)]
pub(super) struct Packer {
    pub(super) table: Draft,
    pub(super) interned: HashMap<Arc<str>, u32>,
    /// Heap bytes of the interned names' own allocations.
    interned_bytes: usize,
}

impl Packer {
    pub(super) fn put(&mut self, text: &[u8]) -> Option<u32> {
        let at = u32::try_from(self.table.arena.len()).ok()?;
        u32::try_from(self.table.arena.len() + text.len()).ok()?;
        self.table.arena.extend_from_slice(text);
        Some(at)
    }

    /// Adds one file (in path order); `false` when the arena is full (4 GiB: never in
    /// practice, but the offsets are 32-bit).
    pub(super) fn add(&mut self, rel: &[u8], file: &FileSyms) -> bool {
        let Ok(path_len) = u16::try_from(rel.len()) else {
            return true;
        };
        let Some(path) = self.put(rel) else {
            return false;
        };
        let start = self.table.recs.len() as u32;
        for def in &file.defs {
            let lower = lowercase(&def.name);
            let (Ok(name_len), Ok(lower_len)) =
                (u16::try_from(def.name.len()), u16::try_from(lower.len()))
            else {
                continue;
            };
            // Signatures are not kept (they were most of the memory): the line is read
            // again for the definitions a query returns (see `find::by_name::fill_signatures`).
            // Names repeat too (`new`, `get`, `init` in every other file): stored once.
            let name = match self.interned.get(def.name.as_str()) {
                Some(&at) => at,
                None => {
                    let Some(at) = self.put(def.name.as_bytes()) else {
                        return false;
                    };
                    self.interned.insert(Arc::from(def.name.as_str()), at);
                    self.interned_bytes += def.name.len() + 2 * size_of::<usize>();
                    at
                }
            };
            if !def.name.is_ascii() && lower != def.name.as_str() {
                let Some(at) = self.put(lower.as_bytes()) else {
                    return false;
                };
                self.table.lowers.push(Lower {
                    rec: self.table.recs.len() as u32,
                    at,
                    len: lower_len,
                    _pad: [0; 2],
                });
            }
            // Containers repeat (every method of a class): stored once.
            let (container, container_len) = match &def.container {
                None => (NONE, 0),
                Some(c) if c.len() > u16::MAX as usize => (NONE, 0),
                Some(c) => match self.interned.get(&**c) {
                    Some(&at) => (at, c.len() as u16),
                    None => {
                        let Some(at) = self.put(c.as_bytes()) else {
                            return false;
                        };
                        self.interned.insert(c.clone(), at);
                        self.interned_bytes += c.len() + 2 * size_of::<usize>();
                        (at, c.len() as u16)
                    }
                },
            };
            self.table.recs.push(Rec {
                name,
                container,
                line: def.line as u32,
                end_line: def.end_line as u32,
                name_line: def.name_line.saturating_sub(def.line).min(u16::MAX as u64) as u16,
                name_len,
                container_len,
                kind: KINDS.iter().position(|k| *k == def.kind).unwrap_or(0) as u8,
                depth: def.depth.min(u8::MAX as usize) as u8,
            });
        }
        self.table.files.push(FileRec {
            path,
            path_len,
            lang: lang_id(file.lang),
            _pad: 0,
            size: file.size,
            mtime: file.mtime,
            ident: file.ident,
            recs_start: start,
            recs_end: self.table.recs.len() as u32,
        });
        true
    }

    /// Heap bytes held: the draft's vectors and the interned names (what a build in parts
    /// compares with its budget).
    pub(super) fn heap_bytes(&self) -> usize {
        let d = &self.table;
        d.arena.capacity()
            + d.recs.capacity() * size_of::<Rec>()
            + d.files.capacity() * size_of::<FileRec>()
            + d.lowers.capacity() * size_of::<Lower>()
            + self.interned.capacity() * (size_of::<(Arc<str>, u32)>() + 1)
            + self.interned_bytes
    }

    /// Sorts the name tables and lays the table out in one buffer (`worker::seal_into`
    /// lays it out into a stored file instead).
    pub(super) fn finish(self) -> Table {
        let draft = self.table;
        drop(self.interned);
        let sorted = sorted_by_name(&draft);
        let (ranges, len) = layout_of(&draft, &sorted);
        let bytes = Bytes::build(len, |buf| {
            write_sections(&draft, &sorted, &ranges, |at, bytes| {
                buf[at..at + bytes.len()].copy_from_slice(bytes);
            });
        });
        let layout = Layout::of(&ranges);
        Table { bytes, layout }
    }
}

/// The draft's record ids sorted by lowercase name, then name, then id.
pub(super) fn sorted_by_name(draft: &Draft) -> Vec<u32> {
    let name = |r: u32| draft.name(r);
    let lower = |r: u32| draft.lower(r);
    let mut sorted: Vec<u32> = (0..draft.recs.len() as u32).collect();
    sorted.sort_unstable_by(|a, b| {
        lower(*a)
            .cmp(lower(*b))
            .then_with(|| name(*a).cmp(name(*b)))
            .then(a.cmp(b))
    });
    sorted
}

/// The draft's sections and the sorted table, as they lie in the buffer.
fn sections<'a>(draft: &'a Draft, sorted: &'a [u32]) -> [&'a [u8]; 5] {
    let (files, recs) = (draft.files.as_bytes(), draft.recs.as_bytes());
    [
        &draft.arena,
        recs,
        files,
        sorted.as_bytes(),
        draft.lowers.as_bytes(),
    ]
}

/// Where each section goes (8-aligned, after the header), and the buffer's length.
pub(super) fn layout_of(draft: &Draft, sorted: &[u32]) -> (Vec<Range<usize>>, usize) {
    layout_for(sections(draft, sorted).map(<[u8]>::len))
}

/// Where sections of these lengths go (in buffer order: arena, records, files, sorted,
/// lowers), and the buffer's length.
pub(super) fn layout_for(lens: [usize; 5]) -> (Vec<Range<usize>>, usize) {
    let mut at = HEADER_BYTES;
    let ranges = (lens.iter())
        .map(|len| {
            let range = at..at + len;
            at = range.end.next_multiple_of(8);
            range
        })
        .collect();
    (ranges, at)
}

/// Hands `put` the header, then every section, each with its offset in the buffer.
pub(super) fn write_sections(
    draft: &Draft,
    sorted: &[u32],
    ranges: &[Range<usize>],
    mut put: impl FnMut(usize, &[u8]),
) {
    put(0, &section_header(LAYOUT_VERSION, ranges));
    for (range, section) in ranges.iter().zip(sections(draft, sorted)) {
        put(range.start, section);
    }
}

/// Packs files given as (relative path, definitions) into a table (tests and tools).
pub fn pack_files(files: &[(PathBuf, FileSyms)]) -> Table {
    let mut sorted: Vec<&(PathBuf, FileSyms)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.as_os_str().as_bytes().cmp(b.0.as_os_str().as_bytes()));
    let mut packer = Packer::default();
    for (rel, syms) in sorted {
        packer.add(rel.as_os_str().as_bytes(), syms);
    }
    packer.finish()
}
