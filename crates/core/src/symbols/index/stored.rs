//! A [`Table`] as bytes for the store (`crate::store`), and back. Decoding checks every
//! offset, count and order a lookup relies on, so even a file that passed its checksum but
//! holds nonsense is refused instead of panicking or answering wrongly.
//!
//! Layout (little-endian; "var" is a LEB128 varint, "delta" a zigzag varint of the
//! difference from the previous record's value): the arena (length-prefixed); the files
//! (count, then per file: path offset as a delta, path length, language, size, mtime,
//! identity (inode and change time), and
//! how many records it has: they follow the previous file's); the records (count, then per
//! record: name offset as a delta, the lowercase name's and the container's offsets (0 for
//! none, else 1 + a delta), line as a delta, lines to the end, the name's line offset, the
//! three lengths, kind and depth; the record's file is the one whose range holds it); then
//! the two sorted id tables (a count each, 4 bytes per id). Most records take 10 to 14
//! bytes instead of the 36 they take in memory.

use super::table::{FileRec, NONE, Rec, Table};
use crate::store::Refused;
use crate::store::format::{Reader, Writer};
use crate::symbols::lang::{KINDS, Lang};

/// The fewest bytes one record or file can take (bounds a damaged count).
const MIN_REC_BYTES: usize = 11;
const MIN_FILE_BYTES: usize = 21;

/// `at` as `1 + delta from prev`, or 0 for [`NONE`].
fn put_optional(w: &mut Writer, prev: &mut u32, at: u32) {
    if at == NONE {
        w.var(0);
    } else {
        let d = i64::from(at) - i64::from(*prev);
        w.var(1 + ((d << 1) ^ (d >> 63)) as u64);
        *prev = at;
    }
}

fn get_optional(r: &mut Reader, prev: &mut u32) -> Result<u32, Refused> {
    match r.var()? {
        0 => Ok(NONE),
        z => {
            let z = z - 1;
            let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
            let at = u32::try_from(i64::from(*prev) + d)
                .map_err(|_| Refused::Invalid("an offset out of range".into()))?;
            *prev = at;
            Ok(at)
        }
    }
}

pub(super) fn encode(table: &Table) -> Vec<u8> {
    let mut w = Writer {
        bytes: Vec::with_capacity(table.arena.len() + table.recs.len() * 20 + 64),
    };
    w.blob(&table.arena);
    w.u64(table.files.len() as u64);
    let mut prev_path = 0u64;
    for f in &table.files {
        w.delta(prev_path, u64::from(f.path));
        prev_path = u64::from(f.path);
        w.var(u64::from(f.path_len));
        w.u8(f.lang);
        w.var(f.size);
        w.u64(f.mtime);
        w.u64(f.ident);
        w.var(u64::from(f.recs.end - f.recs.start));
    }
    w.u64(table.recs.len() as u64);
    let (mut name, mut container, mut line) = (0u64, 0u32, 0u64);
    for r in &table.recs {
        w.delta(name, u64::from(r.name));
        name = u64::from(r.name);
        // The lowercase form follows its name in the arena: deltas from the name.
        let mut from_name = r.name;
        put_optional(&mut w, &mut from_name, r.lower);
        put_optional(&mut w, &mut container, r.container);
        w.delta(line, u64::from(r.line));
        line = u64::from(r.line);
        w.delta(u64::from(r.line), u64::from(r.end_line));
        w.var(u64::from(r.name_line));
        w.var(u64::from(r.name_len));
        w.var(u64::from(r.lower_len));
        w.var(u64::from(r.container_len));
        w.u8(r.kind);
        w.u8(r.depth);
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
    let n = r.count(MIN_FILE_BYTES)?;
    let mut files = Vec::with_capacity(n);
    let (mut path, mut next) = (0u64, 0u32);
    for _ in 0..n {
        path = r.delta(path)?;
        let path = u32::try_from(path).map_err(|_| invalid("a path out of range"))?;
        let path_len = r.var_as()?;
        let lang = r.u8()?;
        let size = r.var()?;
        let mtime = r.u64()?;
        let ident = r.u64()?;
        let count: u32 = r.var_as()?;
        let end = next
            .checked_add(count)
            .ok_or_else(|| invalid("too many definitions"))?;
        files.push(FileRec {
            path,
            path_len,
            lang,
            size,
            mtime,
            ident,
            recs: next..end,
        });
        next = end;
    }
    let n = r.count(MIN_REC_BYTES)?;
    if n != next as usize {
        return Err(invalid("definitions outside every file"));
    }
    let mut recs = Vec::with_capacity(n);
    let (mut name, mut container, mut line) = (0u64, 0u32, 0u64);
    for (file, f) in files.iter().enumerate() {
        for _ in f.recs.clone() {
            name = r.delta(name)?;
            let name_at = u32::try_from(name).map_err(|_| invalid("a name out of range"))?;
            let mut from_name = name_at;
            let lower = get_optional(&mut r, &mut from_name)?;
            let container_at = get_optional(&mut r, &mut container)?;
            line = r.delta(line)?;
            let line_at = u32::try_from(line).map_err(|_| invalid("a line out of range"))?;
            let end_line =
                u32::try_from(r.delta(line)?).map_err(|_| invalid("a line out of range"))?;
            recs.push(Rec {
                name: name_at,
                lower,
                container: container_at,
                line: line_at,
                end_line,
                file: file as u32,
                name_line: r.var_as()?,
                name_len: r.var_as()?,
                lower_len: r.var_as()?,
                container_len: r.var_as()?,
                kind: r.u8()?,
                depth: r.u8()?,
            });
        }
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

impl crate::store::publish::Stored for Table {
    const KIND: crate::store::Kind = crate::store::Kind::Symbols;
    const WHAT: &'static str = "symbol table";
    const REDONE: &'static str = "parsed";

    fn encode(&self) -> Vec<u8> {
        encode(self)
    }

    fn decode(bytes: &[u8]) -> Result<Table, Refused> {
        decode(bytes)
    }

    fn describe(&self) -> String {
        format!("{} definitions", self.len())
    }
}
