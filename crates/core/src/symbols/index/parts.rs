//! A symbol table built in parts, so that a monorepo's definitions are never all in memory
//! while they are packed. Files go into a [`Packer`] in path order as before; once it holds
//! more than the budget (`--build-memory-mb`) its draft is spilled to a scratch file of the
//! root's store entry, with its records' sort keys (lowercase name, name) in name order,
//! and a new part starts (so a name is stored once per part, not once per table). A
//! checkpoint and the end merge the parts into the stored file by streaming: arenas,
//! records, files and lowercase forms concatenated (offsets and record numbers shifted
//! past the previous parts'), the name-sorted table merged from the parts' sorted keys
//! (equal keys in part order, so it is the order one table sorted at once would have).
//! Memory holds read buffers and one key per part. A table that fits the budget is laid
//! out into the store directly; with nowhere to spill (no store, another server writes the
//! entry, not Unix) it is packed in memory.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::ops::Range;

use zerocopy::{FromBytes, IntoBytes};

use super::packer::{Packer, layout_for, layout_of, sorted_by_name, write_sections};
use super::table::{FileRec, LAYOUT_VERSION, Lower, NONE, Rec, Table};
use crate::store::scratch::{Finished, Scratch, ScratchReader, Sealed, Spill, Unsealed};
use crate::store::{Kind, section_header};

/// A symbol table being packed, in memory or in parts (see the module documentation).
pub(super) struct Parts {
    packer: Packer,
    spill: Option<Spill>,
    parts: Vec<Part>,
}

/// One spilled part: its draft's sections and sorted keys in a scratch file.
struct Part {
    file: Scratch,
    /// Arena, records, files, lowercase forms, sorted keys.
    sections: [Range<u64>; 5],
}

const ARENA: usize = 0;
const RECS: usize = 1;
const FILES: usize = 2;
const LOWERS: usize = 3;
const KEYS: usize = 4;

impl Parts {
    /// A table that spills to `spill` (when given) past its budget.
    pub(super) fn new(spill: Option<Spill>) -> Parts {
        Parts {
            packer: Packer::default(),
            spill,
            parts: Vec::new(),
        }
    }

    /// Adds one file (in path order), spilling the part being packed when it holds more
    /// than the budget; `Ok(false)` when the part is full (see [`Packer::add`]).
    pub(super) fn add(&mut self, rel: &[u8], file: &super::table::FileSyms) -> io::Result<bool> {
        if !self.packer.add(rel, file) {
            return Ok(false);
        }
        match &self.spill {
            Some(spill) if self.packer.heap_bytes() > spill.budget() => {
                self.spill_packer()?;
                Ok(true)
            }
            _ => Ok(true),
        }
    }

    /// Parts spilled so far.
    pub(super) fn spilled(&self) -> usize {
        self.parts.len()
    }

    /// Heap one part may hold (unbounded with nowhere to spill).
    pub(super) fn budget(&self) -> usize {
        self.spill.as_ref().map_or(usize::MAX, Spill::budget)
    }

    /// Spills what is being packed as a part (kept in memory if that fails).
    fn spill_packer(&mut self) -> io::Result<()> {
        let Some(spill) = &self.spill else {
            return Ok(());
        };
        if self.packer.table.files.is_empty() {
            return Ok(());
        }
        self.parts.push(Part::write(spill, &self.packer)?);
        self.packer = Packer::default();
        Ok(())
    }

    /// What is packed so far, as a stored file of the entry still to be published (the
    /// parts stay, to be merged again at the end). Needs somewhere to spill.
    pub(super) fn checkpoint(&mut self) -> io::Result<Sealed> {
        let Some(spill) = self.spill.clone() else {
            return Err(io::Error::other("no store to write a checkpoint into"));
        };
        self.spill_packer()?;
        let out = spill.unsealed(Kind::Symbols)?;
        let len = merge(&self.parts, &out)?;
        out.seal(len)
    }

    /// The table: in memory when there was nowhere to spill, laid out straight into a
    /// stored file when it fits the budget, else every part merged into one.
    pub(super) fn finish(mut self) -> io::Result<Finished<Table>> {
        let Some(spill) = self.spill.clone() else {
            return Ok(Finished::Memory(self.packer.finish()));
        };
        if self.parts.is_empty() {
            return Ok(Finished::Stored(seal_into(&self.packer, &spill)?));
        }
        self.spill_packer()?;
        let out = spill.unsealed(Kind::Symbols)?;
        let len = merge(&self.parts, &out)?;
        // The parts are read: their disk is given back before the file is checksummed.
        self.parts.clear();
        Ok(Finished::Stored(out.seal(len)?))
    }
}

/// The table of the files `packer` holds, laid out straight into a stored file of
/// `spill`'s entry (so the build's memory holds no second copy of it).
fn seal_into(packer: &Packer, spill: &Spill) -> io::Result<Sealed> {
    let draft = &packer.table;
    let sorted = sorted_by_name(draft);
    let (ranges, len) = layout_of(draft, &sorted);
    let out = spill.unsealed(Kind::Symbols)?;
    let mut written = Ok(());
    write_sections(draft, &sorted, &ranges, |at, bytes| {
        if written.is_ok() {
            written = out.write_at(at as u64, bytes);
        }
    });
    written?;
    out.seal(len as u64)
}

impl Part {
    /// Writes `packer`'s draft: its sections as they are, then per record in name order
    /// its key (lowercase length and bytes, name length and bytes, record number).
    fn write(spill: &Spill, packer: &Packer) -> io::Result<Part> {
        let draft = &packer.table;
        let mut file = spill.scratch("symbols-part")?;
        let mut sections: [Range<u64>; 5] = Default::default();
        let whole = [
            &draft.arena[..],
            draft.recs.as_bytes(),
            draft.files.as_bytes(),
            draft.lowers.as_bytes(),
        ];
        let mut at = 0u64;
        for (section, bytes) in whole.into_iter().enumerate() {
            file.append(bytes)?;
            sections[section] = at..at + bytes.len() as u64;
            at += bytes.len() as u64;
        }
        let mut keys = Vec::new();
        let mut lower = Vec::new();
        for r in sorted_by_name(draft) {
            lower.clear();
            lower.extend(draft.lower(r));
            let name = draft.name(r).as_bytes();
            keys.extend_from_slice(&(lower.len() as u16).to_le_bytes());
            keys.extend_from_slice(&lower);
            keys.extend_from_slice(&(name.len() as u16).to_le_bytes());
            keys.extend_from_slice(name);
            keys.extend_from_slice(&r.to_le_bytes());
            if keys.len() >= 256 << 10 {
                file.append(&keys)?;
                keys.clear();
            }
        }
        file.append(&keys)?;
        let end = file.appended();
        sections[KEYS] = at..end;
        Ok(Part { file, sections })
    }

    fn len(&self, section: usize) -> u64 {
        self.sections[section].end - self.sections[section].start
    }

    fn count<T>(&self, section: usize) -> u64 {
        self.len(section) / size_of::<T>() as u64
    }

    fn reader(&self, section: usize) -> ScratchReader<'_> {
        self.file.reader(self.sections[section].clone())
    }
}

fn too_large(what: &str) -> io::Error {
    io::Error::other(format!(
        "the symbol table has too many {what} for one table"
    ))
}

/// Merges `parts` (in order) into `out`'s payload; returns its length.
fn merge(parts: &[Part], out: &Unsealed) -> io::Result<u64> {
    let sum = |f: &dyn Fn(&Part) -> u64| parts.iter().map(f).sum::<u64>();
    let arena = sum(&|p| p.len(ARENA));
    let recs = sum(&|p| p.count::<Rec>(RECS));
    // `NONE` (u32::MAX) is no offset, so an arena stops short of it.
    if arena >= u64::from(NONE) {
        return Err(too_large("names"));
    }
    if recs > u64::from(u32::MAX) {
        return Err(too_large("definitions"));
    }
    let lens = [
        arena,
        recs * size_of::<Rec>() as u64,
        sum(&|p| p.len(FILES)),
        recs * 4,
        sum(&|p| p.len(LOWERS)),
    ]
    .map(|n| n as usize);
    let (ranges, len) = layout_for(lens);
    out.write_at(0, &section_header(LAYOUT_VERSION, &ranges))?;
    let at = |i: usize| ranges[i].start as u64;
    concatenate(parts, out, [at(0), at(1), at(2), at(4)])?;
    merge_sorted(parts, out, at(3))?;
    Ok(len as u64)
}

/// Arenas, records, files and lowercase forms (at `to`, in that order): each part's after
/// the previous, its offsets and record numbers shifted past the previous parts'.
fn concatenate(parts: &[Part], out: &Unsealed, to: [u64; 4]) -> io::Result<()> {
    let [mut arena, mut recs, mut files, mut lowers] = to.map(|at| out.writer(at));
    let (mut arena_base, mut rec_base) = (0u32, 0u32);
    let shift = |at: u32, base: u32| if at == NONE { NONE } else { at + base };
    for part in parts {
        arena.copy(&mut part.reader(ARENA))?;
        let mut reader = part.reader(RECS);
        while let Some(mut rec) = next_record::<Rec>(&mut reader)? {
            rec.name += arena_base;
            rec.container = shift(rec.container, arena_base);
            recs.put(rec.as_bytes())?;
        }
        let mut reader = part.reader(FILES);
        while let Some(mut file) = next_record::<FileRec>(&mut reader)? {
            file.path += arena_base;
            file.recs_start += rec_base;
            file.recs_end += rec_base;
            files.put(file.as_bytes())?;
        }
        let mut reader = part.reader(LOWERS);
        while let Some(mut lower) = next_record::<Lower>(&mut reader)? {
            lower.rec += rec_base;
            lower.at += arena_base;
            lowers.put(lower.as_bytes())?;
        }
        arena_base += part.len(ARENA) as u32;
        rec_base += part.count::<Rec>(RECS) as u32;
    }
    for out in [arena, recs, files, lowers] {
        out.done()?;
    }
    Ok(())
}

/// The next record of `reader`; `None` at its end.
fn next_record<T: FromBytes + IntoBytes>(reader: &mut ScratchReader) -> io::Result<Option<T>> {
    if !reader.fill()? {
        return Ok(None);
    }
    let mut record = T::new_zeroed();
    reader.read_exact(record.as_mut_bytes())?;
    Ok(Some(record))
}

/// One part's next key: (lowercase name, name, part, record number in the part).
type Key = (Vec<u8>, Vec<u8>, usize, u32);

/// The name-sorted table at `to`: the parts' sorted keys merged, each record's number
/// shifted past the previous parts' records.
fn merge_sorted(parts: &[Part], out: &Unsealed, to: u64) -> io::Result<()> {
    let mut first = 0u32;
    let firsts: Vec<u32> = (parts.iter())
        .map(|p| {
            let at = first;
            first += p.count::<Rec>(RECS) as u32;
            at
        })
        .collect();
    let mut readers: Vec<ScratchReader> = parts.iter().map(|p| p.reader(KEYS)).collect();
    let mut heap = BinaryHeap::new();
    for (part, reader) in readers.iter_mut().enumerate() {
        if let Some(key) = next_key(reader, (Vec::new(), Vec::new(), part, 0))? {
            heap.push(Reverse(key));
        }
    }
    let mut sorted = out.writer(to);
    while let Some(Reverse(key)) = heap.pop() {
        let (part, rec) = (key.2, key.3);
        sorted.put(&(firsts[part] + rec).to_le_bytes())?;
        // The popped key's buffers hold the part's next key.
        if let Some(key) = next_key(&mut readers[part], key)? {
            heap.push(Reverse(key));
        }
    }
    sorted.done()?;
    Ok(())
}

/// The next key of `reader` read into `key`'s buffers; `None` at its end.
fn next_key(reader: &mut ScratchReader, mut key: Key) -> io::Result<Option<Key>> {
    if !reader.fill()? {
        return Ok(None);
    }
    key.0.clear();
    let n = reader.u16()?;
    reader.take(n as usize, &mut key.0)?;
    key.1.clear();
    let n = reader.u16()?;
    reader.take(n as usize, &mut key.1)?;
    key.3 = reader.u32()?;
    Ok(Some(key))
}

#[cfg(test)]
mod tests;
