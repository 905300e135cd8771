//! A content [`Table`] in the store (`crate::store`): its buffer as it is, and back, used in
//! place. Reading one checks the layout (each section inside the buffer, 8-aligned, whole
//! records, one offset per key) and every file and block record (paths inside the arena,
//! blocks consecutive, their keys and postings inside theirs); the postings themselves
//! are not walked (bounds-checked where they are read).

use std::ops::Range;

use super::table::{
    BLOCKS, BlockRec, FILES, FileRec, HEADER_BYTES, KEYS, LAYOUT_VERSION, OFFSETS, PATHS, POSTINGS,
    SECTIONS, Table,
};
use crate::store::Refused;
use crate::store::mapped::Bytes;

fn invalid(why: &str) -> Refused {
    Refused::Invalid(why.into())
}

/// The table held in `bytes` (a stored payload), checked.
pub(crate) fn decode(bytes: Bytes) -> Result<Table, Refused> {
    let buf = bytes.as_slice();
    if buf.len() < HEADER_BYTES {
        return Err(invalid("shorter than its header"));
    }
    let word = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().unwrap_or_default());
    if u32::from_le_bytes(buf[..4].try_into().unwrap_or_default()) != LAYOUT_VERSION {
        return Err(invalid("another content table layout"));
    }
    let mut sections: [Range<usize>; SECTIONS] = Default::default();
    for (i, range) in sections.iter_mut().enumerate() {
        let (start, len) = (word(8 + i * 16), word(8 + i * 16 + 8));
        match start
            .checked_add(len)
            .filter(|end| *end <= buf.len() as u64)
        {
            Some(end) if start.is_multiple_of(8) && start >= HEADER_BYTES as u64 => {
                *range = start as usize..end as usize;
            }
            _ => return Err(invalid("a section outside the table")),
        }
    }
    let end = sections.iter().map(|r| r.end).max().unwrap_or(HEADER_BYTES);
    if buf.len() != end.next_multiple_of(8) {
        return Err(invalid("not the length its sections say"));
    }
    let len = |at: usize| sections[at].len();
    let whole = len(FILES).is_multiple_of(size_of::<FileRec>())
        && len(BLOCKS).is_multiple_of(size_of::<BlockRec>())
        && len(KEYS).is_multiple_of(4)
        && len(OFFSETS) == len(KEYS);
    if !whole {
        return Err(invalid("sections of the wrong size"));
    }
    let table = Table { bytes, sections };
    check(&table)?;
    Ok(table)
}

/// Every file and block points inside the table, blocks one after the other.
fn check(table: &Table) -> Result<(), Refused> {
    let paths = table.sections[PATHS].len() as u64;
    for f in table.files() {
        if u64::from(f.path_at) + u64::from(f.path_len) > paths || f.listed > 1 {
            return Err(invalid("a file out of range"));
        }
    }
    let keys = (table.sections[KEYS].len() / 4) as u64;
    let postings = table.sections[POSTINGS].len() as u64;
    let (mut next_file, mut next_key, mut next_at) = (0u64, 0u64, 0u64);
    for b in table.blocks() {
        let ok = u64::from(b.first_file) == next_file
            && u64::from(b.first_key) == next_key
            && b.postings_at == next_at
            && b.postings_at
                .checked_add(b.postings_len)
                .is_some_and(|e| e <= postings);
        if !ok {
            return Err(invalid("a block out of range"));
        }
        next_file += u64::from(b.files);
        next_key += u64::from(b.keys);
        next_at += b.postings_len;
    }
    if next_file > table.files().len() as u64 || next_key != keys {
        return Err(invalid("blocks outside the files or keys"));
    }
    Ok(())
}

impl crate::store::publish::Stored for Table {
    const KIND: crate::store::Kind = crate::store::Kind::Content;
    const WHAT: &'static str = "content index";
    const REDONE: &'static str = "changed files read";
    const IN_PLACE: bool = true;

    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(self.bytes.as_slice())
    }

    fn decode(bytes: Bytes) -> Result<Table, Refused> {
        decode(bytes)
    }

    fn describe(&self) -> String {
        format!("{} files", self.files().len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::grams::plan;
    use crate::content::table::tests::table_of;
    use crate::store::publish::Stored;

    fn sample() -> Table {
        table_of(&[
            ("src/a.rs", Some("fn reset_timer() {}")),
            ("src/b.bin", None),
            ("src/c.rs", Some("call reset_timer twice")),
        ])
    }

    #[test]
    fn stored_tables_come_back_equal() {
        let table = sample();
        let back = decode(Bytes::owned(&table.bytes())).expect("decodes");
        assert_eq!(back.files().len(), 3);
        assert_eq!(back.path(1), b"src/b.bin");
        for pattern in ["reset_timer", "twice", "nothing"] {
            let p = plan(pattern, false, false);
            assert_eq!(back.admitted(&p), table.admitted(&p), "{pattern}");
        }
    }

    #[test]
    fn damaged_tables_are_refused_or_harmless() {
        let bytes = sample().bytes().into_owned();
        for cut in 0..bytes.len() {
            assert!(decode(Bytes::owned(&bytes[..cut])).is_err(), "cut at {cut}");
        }
        let p = plan("reset_timer|twice", false, false);
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x5a, 0xff] {
                let mut bad = bytes.clone();
                bad[at] ^= flip;
                if let Ok(table) = decode(Bytes::owned(&bad)) {
                    let _ = table.admitted(&p);
                    let _ = (0..4).map(|i| table.path(i).len()).sum::<usize>();
                }
            }
        }
    }
}
