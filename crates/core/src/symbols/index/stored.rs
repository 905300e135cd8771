//! A [`Table`] in the store (`crate::store`): its buffer as it is, and back, used in place
//! (`store::mapped`). Reading one checks what every lookup and the sync walk over: the
//! layout (each section inside the buffer, 8-aligned, a whole number of records, the sorted
//! name table as long as the records) and every file record (its path inside the arena, its
//! language known, record ranges contiguous, paths in order). The records themselves and
//! the name tables are not walked: that would read the whole table into this process's
//! memory, which using it in place avoids; their reads are bounds-checked (see `table.rs`).

use std::ops::Range;

use super::table::{FileRec, HEADER_BYTES, LAYOUT_VERSION, Layout, Lower, Rec, Table};
use crate::store::Refused;
use crate::store::mapped::Bytes;
use crate::symbols::lang::Lang;

fn invalid(why: &str) -> Refused {
    Refused::Invalid(why.to_string())
}

/// The table held in `bytes` (a stored payload), checked.
pub(super) fn decode(bytes: Bytes) -> Result<Table, Refused> {
    let layout = layout_of(bytes.as_slice())?;
    let table = Table { bytes, layout };
    check(&table)?;
    Ok(table)
}

/// The sections named by the header of `buf`, each inside it and 8-aligned.
fn layout_of(buf: &[u8]) -> Result<Layout, Refused> {
    if buf.len() < HEADER_BYTES {
        return Err(invalid("shorter than its header"));
    }
    let word = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().unwrap_or_default());
    if u32::from_le_bytes(buf[..4].try_into().unwrap_or_default()) != LAYOUT_VERSION {
        return Err(invalid("another table layout"));
    }
    let mut ranges: Vec<Range<usize>> = Vec::with_capacity(5);
    for i in 0..5 {
        let (start, len) = (word(8 + i * 16), word(16 + i * 16));
        let end = start
            .checked_add(len)
            .filter(|end| *end <= buf.len() as u64);
        match end {
            Some(end) if start.is_multiple_of(8) && start >= HEADER_BYTES as u64 => {
                ranges.push(start as usize..end as usize);
            }
            _ => return Err(invalid("a section outside the table")),
        }
    }
    let end = ranges.iter().map(|r| r.end).max().unwrap_or(HEADER_BYTES);
    if buf.len() != end.next_multiple_of(8) {
        return Err(invalid("not the length its sections say"));
    }
    let layout = Layout::of(&ranges);
    let records = layout.recs.len() / size_of::<Rec>();
    let whole = layout.recs.len().is_multiple_of(size_of::<Rec>())
        && layout.files.len().is_multiple_of(size_of::<FileRec>())
        && layout.sorted.len() == records * 4
        && layout.lowers.len().is_multiple_of(size_of::<Lower>());
    if !whole {
        return Err(invalid("sections of the wrong size"));
    }
    Ok(layout)
}

/// Every file record is in range and in order, and the files hold every record once.
fn check(t: &Table) -> Result<(), Refused> {
    let mut next = 0u32;
    let mut last: Option<&[u8]> = None;
    for f in t.files() {
        let path = t
            .arena()
            .get(f.path as usize..f.path as usize + f.path_len as usize);
        let ok = path.is_some()
            && (f.lang as usize) < Lang::ALL.len()
            && f.recs_start == next
            && f.recs_start <= f.recs_end;
        if !ok {
            return Err(invalid("a file out of range"));
        }
        if last.is_some_and(|last| Some(last) >= path) {
            return Err(invalid("files out of order"));
        }
        last = path;
        next = f.recs_end;
    }
    if next as usize != t.recs().len() {
        return Err(invalid("definitions outside every file"));
    }
    Ok(())
}

impl crate::store::publish::Stored for Table {
    const KIND: crate::store::Kind = crate::store::Kind::Symbols;
    const WHAT: &'static str = "symbol table";
    const REDONE: &'static str = "changed files parsed";
    const IN_PLACE: bool = true;

    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(self.bytes.as_slice())
    }

    fn decode(bytes: Bytes) -> Result<Table, Refused> {
        decode(bytes)
    }

    fn describe(&self) -> String {
        format!("{} definitions", self.len())
    }
}
