//! A [`Segment`] in the store (`crate::store`): its buffer as it is, and back, used in place
//! (`store::mapped`). Reading one checks what every query relies on without reading it
//! all: the layout (each section inside the buffer, 8-aligned, a whole number of records,
//! the dictionaries' offset tables one longer than their terms, the buffer exactly as
//! long as its sections) and every file record (its path inside the arena, its state, its
//! documents' range contiguous). The documents, dictionaries and postings are not walked
//! (that would read them all into this process's memory, which using them in place
//! avoids); their reads are bounds-checked (`segment.rs`, and every use of a document's
//! file).

use std::ops::Range;

use super::segment::{
    DFS, DOCS, FILES, FileState, HEADER_BYTES, LAYOUT_VERSION, OFFSETS, PATH_OFFSETS, PATH_TERMS,
    PATHS, SECTIONS, SegDoc, SegFile, Segment, TERMS,
};
use crate::store::Refused;
use crate::store::mapped::Bytes;

fn invalid(why: &str) -> Refused {
    Refused::Invalid(why.into())
}

/// The segment held in `bytes` (a stored payload), checked.
pub(crate) fn decode(bytes: Bytes) -> Result<Segment, Refused> {
    let buf = bytes.as_slice();
    if buf.len() < HEADER_BYTES {
        return Err(invalid("shorter than its header"));
    }
    let word = |at: usize| u64::from_le_bytes(buf[at..at + 8].try_into().unwrap_or_default());
    if u32::from_le_bytes(buf[..4].try_into().unwrap_or_default()) != LAYOUT_VERSION {
        return Err(Refused::Invalid("another segment layout".into()));
    }
    let table = 8;
    let mut sections: [Range<usize>; SECTIONS] = Default::default();
    for (i, range) in sections.iter_mut().enumerate() {
        let (start, len) = (word(table + i * 16), word(table + i * 16 + 8));
        match start
            .checked_add(len)
            .filter(|end| *end <= buf.len() as u64)
        {
            Some(end) if start.is_multiple_of(8) && start >= HEADER_BYTES as u64 => {
                *range = start as usize..end as usize;
            }
            _ => return Err(invalid("a section outside the segment")),
        }
    }
    let end = sections.iter().map(|r| r.end).max().unwrap_or(HEADER_BYTES);
    if buf.len() != end.next_multiple_of(8) {
        return Err(invalid("not the length its sections say"));
    }
    let len = |at: usize| sections[at].len();
    let whole = len(FILES).is_multiple_of(size_of::<SegFile>())
        && len(DOCS).is_multiple_of(size_of::<SegDoc>())
        && len(TERMS).is_multiple_of(8)
        && len(OFFSETS) == (len(TERMS) / 8 + 1) * 8
        && len(DFS) == len(TERMS) / 2
        && len(PATH_TERMS).is_multiple_of(8)
        && len(PATH_OFFSETS) == (len(PATH_TERMS) / 8 + 1) * 4;
    if !whole {
        return Err(invalid("sections of the wrong size"));
    }
    let seg = Segment { bytes, sections };
    check(&seg)?;
    Ok(seg)
}

/// Every file and document points inside the segment, in order.
fn check(seg: &Segment) -> Result<(), Refused> {
    let paths = seg.sections[PATHS].len();
    let mut next = 0u32;
    for f in seg.files() {
        let ok = (f.path_at as usize)
            .checked_add(f.path_bytes as usize)
            .is_some_and(|end| end <= paths)
            && FileState::from_u8(f.state).is_some()
            && f.first == next
            && f.first.checked_add(f.count).is_some();
        if !ok {
            return Err(invalid("a file out of range"));
        }
        next = f.first + f.count;
    }
    if next as usize != seg.docs().len() {
        return Err(invalid("documents outside every file"));
    }
    Ok(())
}

impl crate::store::publish::Stored for Segment {
    const KIND: crate::store::Kind = crate::store::Kind::Search;
    const WHAT: &'static str = "search index";
    const REDONE: &'static str = "changed files read";
    const IN_PLACE: bool = true;

    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(self.bytes.as_slice())
    }

    fn decode(bytes: Bytes) -> Result<Segment, Refused> {
        decode(bytes)
    }

    fn describe(&self) -> String {
        format!(
            "{} documents in {} files",
            self.docs().len(),
            self.files().len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranked::segment::tests::{all, sample};
    use crate::ranked::terms;
    use crate::store::publish::Stored;

    #[test]
    fn stored_segments_come_back_equal() {
        let seg = sample();
        let back = decode(Bytes::owned(&seg.bytes())).expect("decodes");
        assert_eq!(back.files().len(), seg.files().len());
        for token in ["timer", "stop", "src", "reset", "twice", "other"] {
            assert_eq!(all(&back, token), all(&seg, token), "{token}");
            assert_eq!(back.df(terms::hash(token)), seg.df(terms::hash(token)));
        }
        for (a, b) in back.docs().iter().zip(seg.docs()) {
            assert_eq!(
                (back.name(a), back.container(a)),
                (seg.name(b), seg.container(b))
            );
            assert_eq!(
                (a.file, a.line, a.end_line, a.kind, a.lens),
                (b.file, b.line, b.end_line, b.kind, b.lens)
            );
        }
        assert_eq!(back.path(2), b"docs/timer.md");
        assert_eq!(
            FileState::from_u8(back.files()[1].state),
            Some(FileState::Skipped)
        );
    }

    #[test]
    fn damaged_segments_are_refused_or_harmless() {
        let bytes = sample().bytes().into_owned();
        for cut in 0..bytes.len() {
            assert!(decode(Bytes::owned(&bytes[..cut])).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x5a, 0xff] {
                let mut bad = bytes.clone();
                bad[at] ^= flip;
                if let Ok(seg) = decode(Bytes::owned(&bad)) {
                    for token in ["timer", "stop", "src"] {
                        let _ = (all(&seg, token), seg.df(terms::hash(token)));
                        seg.path_postings(terms::hash(token), |_, _| {});
                    }
                    for d in seg.docs() {
                        let _ = (seg.name(d), seg.container(d), seg.path(d.file));
                    }
                    let n = seg.files().len();
                    let part = crate::ranked::score::Part {
                        seg: &seg,
                        live: vec![true; n],
                        files: vec![true; n],
                        kinds: &[],
                    };
                    let query = crate::ranked::terms::parse_query("src/timer: reset the timer");
                    let _ = crate::ranked::score::top(&[part], &query, 10);
                }
            }
        }
    }
}
