//! A [`Table`] as bytes for the store (`crate::store`), and back. Decoding checks every
//! offset, count and order a lookup relies on, so even a file that passed its checksum but
//! holds nonsense is refused instead of panicking or answering wrongly.
//!
//! Layout (little-endian): the arena (length-prefixed), the records (count, then 34 bytes
//! each), the files (count, then 30 bytes each: path offset and length, language, size,
//! mtime, first and end record), then the two sorted id tables (one count each).

use super::table::{FileRec, NONE, Rec, Table};
use crate::store::Refused;
use crate::store::format::{Reader, Writer};
use crate::symbols::lang::{KINDS, Lang};

const REC_BYTES: usize = 34;
const FILE_BYTES: usize = 30;

pub(super) fn encode(table: &Table) -> Vec<u8> {
    let mut w = Writer {
        bytes: Vec::with_capacity(
            table.arena.len()
                + table.recs.len() * (REC_BYTES + 8)
                + table.files.len() * FILE_BYTES
                + 64,
        ),
    };
    w.blob(&table.arena);
    w.u64(table.recs.len() as u64);
    for r in &table.recs {
        w.u32(r.name);
        w.u32(r.lower);
        w.u32(r.container);
        w.u32(r.line);
        w.u32(r.end_line);
        w.u32(r.file);
        w.u16(r.name_line);
        w.u16(r.name_len);
        w.u16(r.lower_len);
        w.u16(r.container_len);
        w.u8(r.kind);
        w.u8(r.depth);
    }
    w.u64(table.files.len() as u64);
    for f in &table.files {
        w.u32(f.path);
        w.u16(f.path_len);
        w.u8(f.lang);
        w.u8(0);
        w.u64(f.size);
        w.u64(f.mtime);
        w.u32(f.recs.start);
        w.u32(f.recs.end);
    }
    for ids in [&table.by_name, &table.by_lower] {
        w.u64(ids.len() as u64);
        for id in ids {
            w.u32(*id);
        }
    }
    w.bytes
}

fn invalid(why: &str) -> Refused {
    Refused::Invalid(why.to_string())
}

pub(super) fn decode(payload: &[u8]) -> Result<Table, Refused> {
    let mut r = Reader::new(payload);
    let arena = r.blob()?.to_vec();
    let n = r.count(REC_BYTES)?;
    let mut recs = Vec::with_capacity(n);
    for _ in 0..n {
        recs.push(Rec {
            name: r.u32()?,
            lower: r.u32()?,
            container: r.u32()?,
            line: r.u32()?,
            end_line: r.u32()?,
            file: r.u32()?,
            name_line: r.u16()?,
            name_len: r.u16()?,
            lower_len: r.u16()?,
            container_len: r.u16()?,
            kind: r.u8()?,
            depth: r.u8()?,
        });
    }
    let n = r.count(FILE_BYTES)?;
    let mut files = Vec::with_capacity(n);
    for _ in 0..n {
        let (path, path_len, lang, _) = (r.u32()?, r.u16()?, r.u8()?, r.u8()?);
        let (size, mtime) = (r.u64()?, r.u64()?);
        let recs = r.u32()?..r.u32()?;
        files.push(FileRec {
            path,
            path_len,
            lang,
            size,
            mtime,
            recs,
        });
    }
    let mut ids = || -> Result<Vec<u32>, Refused> {
        let n = r.count(4)?;
        (0..n).map(|_| r.u32()).collect()
    };
    let (by_name, by_lower) = (ids()?, ids()?);
    if !r.is_done() {
        return Err(invalid("bytes after the end"));
    }
    let table = Table {
        arena,
        recs,
        files,
        by_name,
        by_lower,
    };
    check(&table)?;
    Ok(table)
}

/// Everything a lookup indexes or binary-searches is in range and in order.
fn check(t: &Table) -> Result<(), Refused> {
    let fits = |at: u32, len: u16| {
        (at as usize)
            .checked_add(len as usize)
            .is_some_and(|end| end <= t.arena.len())
            && std::str::from_utf8(&t.arena[at as usize..at as usize + len as usize]).is_ok()
    };
    for r in &t.recs {
        let ok = fits(r.name, r.name_len)
            && (r.lower == NONE || fits(r.lower, r.lower_len))
            && (r.container == NONE || fits(r.container, r.container_len))
            && (r.kind as usize) < KINDS.len()
            && (r.file as usize) < t.files.len();
        if !ok {
            return Err(invalid("a definition out of range"));
        }
    }
    let mut next = 0;
    for f in &t.files {
        let ok = (f.path as usize)
            .checked_add(f.path_len as usize)
            .is_some_and(|end| end <= t.arena.len())
            && (f.lang as usize) < Lang::ALL.len()
            && f.recs.start == next
            && f.recs.start <= f.recs.end
            && f.recs.end as usize <= t.recs.len();
        if !ok {
            return Err(invalid("a file out of range"));
        }
        next = f.recs.end;
    }
    if next as usize != t.recs.len() {
        return Err(invalid("definitions outside every file"));
    }
    if t.files.windows(2).any(|w| path(t, &w[0]) >= path(t, &w[1])) {
        return Err(invalid("files out of order"));
    }
    let n = t.recs.len();
    if t.by_name.len() != n || t.by_lower.len() != n {
        return Err(invalid("sorted tables of the wrong length"));
    }
    if t.by_name
        .iter()
        .chain(&t.by_lower)
        .any(|id| *id as usize >= n)
    {
        return Err(invalid("a sorted table out of range"));
    }
    if t.by_name.windows(2).any(|w| t.name(w[0]) > t.name(w[1]))
        || t.by_lower
            .windows(2)
            .any(|w| t.lower(w[0]).gt(t.lower(w[1])))
    {
        return Err(invalid("sorted tables out of order"));
    }
    Ok(())
}

fn path<'a>(t: &'a Table, f: &FileRec) -> &'a [u8] {
    &t.arena[f.path as usize..f.path as usize + f.path_len as usize]
}
