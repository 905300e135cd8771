//! A [`Segment`] as bytes for the store (`crate::store`), and back. Decoding checks every
//! count, span, range and order a query relies on, so a file that passed its checksum but
//! holds nonsense is refused rather than served; postings are decoded defensively at
//! query time (`Segment::postings` bounds every document number).
//!
//! Layout (little-endian; "var" a LEB128 varint): a layout version; the path and name
//! arenas (length-prefixed); the files (count, then per file: path length, size, mtime,
//! identity, language, state, documents, path length in tokens; paths follow one another
//! in the arena, and so do documents); the documents (count, then per document: line,
//! lines to the end, name length, container as 0 or 1 + offset and a length, kind, the four
//! field lengths; names follow one another unless shared); the dictionary (count, then per
//! term: the hash's difference from the previous, df, postings length) and its postings;
//! the path dictionary likewise; the field length totals.

use super::docs::{FIELDS, KIND_NAMES};
use super::segment::{FileState, SegDoc, SegFile, Segment};
use crate::store::Refused;
use crate::store::format::{Reader, Writer};

/// Bumped when this layout changes (older segments are then rebuilt).
const LAYOUT: u32 = 1;

/// Fewest bytes a file, a document and a term take (bounds a damaged count).
const MIN_FILE_BYTES: usize = 22;
const MIN_DOC_BYTES: usize = 10;
const MIN_TERM_BYTES: usize = 3;

pub(crate) fn encode(seg: &Segment) -> Vec<u8> {
    let mut w = Writer {
        bytes: Vec::with_capacity(
            seg.postings.len()
                + seg.docs.len() * 12
                + seg.paths.len()
                + seg.names.len()
                + seg.terms.len() * 12
                + 64,
        ),
    };
    w.u32(LAYOUT);
    w.blob(&seg.paths);
    w.blob(&seg.names);
    w.u64(seg.files.len() as u64);
    for f in &seg.files {
        w.var(u64::from(f.path.1));
        w.var(f.stamp.0);
        w.u64(f.stamp.1);
        w.u64(f.stamp.2);
        w.u8(f.lang);
        w.u8(f.state as u8);
        w.var(u64::from(f.count));
        w.var(u64::from(f.path_len));
    }
    w.u64(seg.docs.len() as u64);
    let mut next_name = 0u32;
    for d in &seg.docs {
        w.var(u64::from(d.line));
        w.var(u64::from(d.end_line - d.line));
        // A name normally follows the previous one; otherwise (never, as built) its offset.
        if d.name.0 == next_name {
            w.var(u64::from(d.name.1) << 1);
        } else {
            w.var(u64::from(d.name.1) << 1 | 1);
            w.var(u64::from(d.name.0));
        }
        next_name = d.name.0 + u32::from(d.name.1);
        if d.container.1 == 0 {
            w.var(0);
        } else {
            w.var(1 + u64::from(d.container.0));
            w.var(u64::from(d.container.1));
            if d.container.0 == next_name {
                next_name += u32::from(d.container.1);
            }
        }
        w.u8(d.kind);
        for len in d.lens {
            w.var(u64::from(len));
        }
    }
    dictionary(&mut w, &seg.terms, &seg.offsets, Some(&seg.dfs));
    w.blob(&seg.postings);
    dictionary(&mut w, &seg.path_terms, &seg.path_offsets, None);
    w.blob(&seg.path_postings);
    for total in seg.totals {
        w.u64(total);
    }
    w.bytes
}

fn dictionary(w: &mut Writer, terms: &[u64], offsets: &[u32], dfs: Option<&[u32]>) {
    w.u64(terms.len() as u64);
    let mut prev = 0u64;
    for (i, &term) in terms.iter().enumerate() {
        w.var(term.wrapping_sub(prev));
        prev = term;
        if let Some(dfs) = dfs {
            w.var(u64::from(dfs[i]));
        }
        w.var(u64::from(offsets[i + 1] - offsets[i]));
    }
}

fn invalid(why: &str) -> Refused {
    Refused::Invalid(why.into())
}

pub(crate) fn decode(bytes: &[u8]) -> Result<Segment, Refused> {
    let mut r = Reader::new(bytes);
    let layout = r.u32()?;
    if layout != LAYOUT {
        return Err(Refused::Invalid(format!(
            "segment layout {layout}, this rootgrep reads {LAYOUT}"
        )));
    }
    let mut seg = Segment {
        paths: r.blob()?.to_vec(),
        names: r.blob()?.to_vec(),
        ..Segment::default()
    };
    let first = read_files(&mut r, &mut seg)?;
    read_docs(&mut r, &mut seg, first)?;
    let (terms, offsets, dfs) = read_dictionary(&mut r, true)?;
    seg.postings = r.blob()?.to_vec();
    if *offsets.last().unwrap_or(&0) as usize != seg.postings.len() {
        return Err(invalid("postings do not add up"));
    }
    (seg.terms, seg.offsets, seg.dfs) = (terms, offsets, dfs);
    let (terms, offsets, _) = read_dictionary(&mut r, false)?;
    seg.path_postings = r.blob()?.to_vec();
    if *offsets.last().unwrap_or(&0) as usize != seg.path_postings.len() {
        return Err(invalid("path postings do not add up"));
    }
    (seg.path_terms, seg.path_offsets) = (terms, offsets);
    for total in &mut seg.totals {
        *total = r.u64()?;
    }
    if !r.is_done() {
        return Err(invalid("bytes after the end"));
    }
    Ok(seg)
}

/// The files, their paths checked against the arena; returns how many documents they say
/// they hold.
fn read_files(r: &mut Reader, seg: &mut Segment) -> Result<u64, Refused> {
    let files = r.count(MIN_FILE_BYTES)?;
    seg.files.reserve_exact(files);
    let (mut path_at, mut first) = (0u64, 0u64);
    for _ in 0..files {
        let len: u32 = r.var_as()?;
        let (size, mtime, ident) = (r.var()?, r.u64()?, r.u64()?);
        let lang = r.u8()?;
        let state =
            FileState::from_u8(r.u8()?).ok_or_else(|| invalid("a file state out of range"))?;
        let count: u32 = r.var_as()?;
        let path_len: u16 = r.var_as()?;
        if path_at + u64::from(len) > seg.paths.len() as u64 {
            return Err(invalid("a path past its arena"));
        }
        seg.files.push(SegFile {
            path: (path_at as u32, len),
            stamp: (size, mtime, ident),
            lang,
            state,
            first: u32::try_from(first).map_err(|_| invalid("too many documents"))?,
            count,
            path_len,
        });
        path_at += u64::from(len);
        first += u64::from(count);
    }
    Ok(first)
}

/// The documents, each in the file whose range holds it, names checked against the arena.
fn read_docs(r: &mut Reader, seg: &mut Segment, first: u64) -> Result<(), Refused> {
    let docs = r.count(MIN_DOC_BYTES)?;
    if docs as u64 != first {
        return Err(invalid("documents do not add up to the files'"));
    }
    seg.docs.reserve_exact(docs);
    let mut file = 0usize;
    let mut next_name = 0u64;
    for id in 0..docs {
        while seg.files[file].first as usize + seg.files[file].count as usize <= id {
            file += 1;
        }
        let line: u32 = r.var_as()?;
        let span: u32 = r.var_as()?;
        let end_line = line
            .checked_add(span)
            .ok_or_else(|| invalid("a line out of range"))?;
        let name_head = r.var()?;
        let name_len = u16::try_from(name_head >> 1).map_err(|_| invalid("a name too long"))?;
        let name_at = match name_head & 1 {
            0 => next_name,
            _ => r.var()?,
        };
        let name = span_in(&seg.names, name_at, u64::from(name_len))?;
        next_name = name_at + u64::from(name_len);
        let container = match r.var()? {
            0 => (0, 0),
            at => {
                let at = at - 1;
                let len: u16 = r.var_as()?;
                if at == next_name {
                    next_name += u64::from(len);
                }
                span_in(&seg.names, at, u64::from(len))?
            }
        };
        let kind = r.u8()?;
        if kind as usize >= KIND_NAMES.len() {
            return Err(invalid("a document kind out of range"));
        }
        let mut lens = [0u16; FIELDS];
        for len in &mut lens {
            *len = r.var_as()?;
        }
        seg.docs.push(SegDoc {
            file: file as u32,
            line,
            end_line,
            name,
            container,
            kind,
            lens,
        });
    }
    Ok(())
}

fn span_in(arena: &[u8], at: u64, len: u64) -> Result<(u32, u16), Refused> {
    if at + len > arena.len() as u64
        || std::str::from_utf8(&arena[at as usize..(at + len) as usize]).is_err()
    {
        return Err(invalid("a name outside its arena"));
    }
    Ok((at as u32, len as u16))
}

type Dictionary = (Vec<u64>, Vec<u32>, Vec<u32>);

fn read_dictionary(r: &mut Reader, with_df: bool) -> Result<Dictionary, Refused> {
    let n = r.count(MIN_TERM_BYTES)?;
    let (mut terms, mut offsets, mut dfs) =
        (Vec::with_capacity(n), Vec::with_capacity(n + 1), Vec::new());
    offsets.push(0u32);
    let mut prev = 0u64;
    for i in 0..n {
        let term = prev.wrapping_add(r.var()?);
        if i > 0 && term <= prev {
            return Err(invalid("terms out of order"));
        }
        prev = term;
        terms.push(term);
        if with_df {
            dfs.push(r.var_as()?);
        }
        let len: u32 = r.var_as()?;
        let end = offsets[i]
            .checked_add(len)
            .ok_or_else(|| invalid("postings too long"))?;
        offsets.push(end);
    }
    Ok((terms, offsets, dfs))
}

impl crate::store::publish::Stored for Segment {
    const KIND: crate::store::Kind = crate::store::Kind::Search;
    const WHAT: &'static str = "search index";
    const REDONE: &'static str = "read";
    const IN_PLACE: bool = false;

    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Owned(encode(self))
    }

    fn decode(bytes: crate::store::mapped::Bytes) -> Result<Segment, Refused> {
        decode(bytes.as_slice())
    }

    fn describe(&self) -> String {
        format!(
            "{} documents in {} files",
            self.docs.len(),
            self.files.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranked::docs::file_docs;
    use crate::ranked::segment::{Builder, Posting};
    use crate::ranked::terms;
    use crate::symbols::Definition;

    fn sample() -> Segment {
        let def = |name: &str, line, end_line| Definition {
            name: name.into(),
            kind: "function",
            line,
            end_line,
            name_line: line,
            signature: String::new(),
            container: Some(std::sync::Arc::from("Timer")),
            depth: 0,
        };
        let mut b = Builder::default();
        let a = "fn reset_timer() {\n  stop(); stop();\n}\nfn other() { go(); }\n";
        let defs = [def("reset_timer", 1, 3), def("other", 4, 4)];
        b.add(
            b"src/timer.rs",
            (1, 2, 3),
            0,
            FileState::Indexed,
            &file_docs(a, &defs, false),
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

    fn all(seg: &Segment, token: &str) -> Vec<Posting> {
        let mut out = Vec::new();
        seg.postings(terms::hash(token), |p| out.push(p));
        out
    }

    #[test]
    fn stored_segments_come_back_equal() {
        let seg = sample();
        let bytes = encode(&seg);
        let back = decode(&bytes).expect("decodes");
        assert_eq!(back.files.len(), seg.files.len());
        assert_eq!(back.totals, seg.totals);
        for token in ["timer", "stop", "src", "reset", "twice", "other"] {
            assert_eq!(all(&back, token), all(&seg, token), "{token}");
            assert_eq!(back.df(terms::hash(token)), seg.df(terms::hash(token)));
        }
        for (a, b) in back.docs.iter().zip(&seg.docs) {
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
        assert_eq!(back.files[1].state, FileState::Skipped);
    }

    #[test]
    fn damaged_segments_are_refused_or_harmless() {
        let bytes = encode(&sample());
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x5a, 0xff] {
                let mut bad = bytes.clone();
                bad[at] ^= flip;
                if let Ok(seg) = decode(&bad) {
                    for token in ["timer", "stop", "src"] {
                        let _ = all(&seg, token);
                        seg.path_postings(terms::hash(token), |_, _| {});
                    }
                    for d in &seg.docs {
                        let _ = (seg.name(d), seg.container(d), seg.path(d.file));
                    }
                }
            }
        }
    }
}
