//! The table of one root's definitions, packed for memory: names and containers (each
//! stored once) and the lowercase forms of non-ASCII names in one byte arena, each
//! definition a fixed record, one table of record ids sorted by lowercase name (then name)
//! for exact and prefix lookups in either case, and per file a range of records plus the
//! size, mtime and identity it was parsed at. `packer.rs` builds it once; it is
//! never changed after (the overlay holds what changed since).
//!
//! The table is one buffer of sections at 8-byte offsets ([`Layout`]), the same bytes in
//! memory and in the store, so a stored table is used where it lies (`store::mapped`): its
//! records are read in place (zerocopy casts, no `unsafe`), never decoded into the heap.
//! Reads are bounds-checked: a table that passed its checksum but not its author can give
//! wrong names, never a panic.

use std::collections::HashMap;
use std::ops::Range;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::platform::os::OsStrExt;
use crate::store::mapped::Bytes;
use crate::symbols::extract::Definition;
// A record stores its kind as a position in `KINDS`.
use crate::index::Stamp;
use crate::symbols::lang::{KINDS, Lang};

/// A record's "no offset" (no container, an ASCII name's lowercase form).
pub(super) const NONE: u32 = u32::MAX;
/// A file whose modification time was not known when it was parsed.
pub(super) const NO_MTIME: u64 = u64::MAX;

/// One definition, fixed size: offsets into the arena and line numbers (24 bytes; its file
/// is the one whose record range holds it, its lowercase form, when it needs one, is in
/// the [`Lower`] table).
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(super) struct Rec {
    pub(super) name: u32,
    pub(super) container: u32,
    pub(super) line: u32,
    pub(super) end_line: u32,
    /// The name's line less the first line (a name is near its definition's start).
    pub(super) name_line: u16,
    pub(super) name_len: u16,
    pub(super) container_len: u16,
    pub(super) kind: u8,
    pub(super) depth: u8,
}

/// The lowercase form of a non-ASCII name that differs from it (an ASCII name folds on
/// the fly), by record (12 bytes, sorted by record).
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(super) struct Lower {
    pub(super) rec: u32,
    pub(super) at: u32,
    pub(super) len: u16,
    pub(super) _pad: [u8; 2],
}

/// One parsed file: its records and what it was parsed at (40 bytes).
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(super) struct FileRec {
    /// Path relative to the root, in the arena.
    pub(super) path: u32,
    pub(super) path_len: u16,
    pub(super) lang: u8,
    pub(super) _pad: u8,
    pub(super) size: u64,
    pub(super) mtime: u64,
    /// Inode and change time (`platform::os::identity`).
    pub(super) ident: u64,
    pub(super) recs_start: u32,
    pub(super) recs_end: u32,
}

/// Where a table's sections lie in its buffer (byte ranges, each starting at a multiple
/// of 8).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Layout {
    pub(super) arena: Range<usize>,
    pub(super) recs: Range<usize>,
    pub(super) files: Range<usize>,
    pub(super) sorted: Range<usize>,
    pub(super) lowers: Range<usize>,
}

impl Layout {
    /// The sections at `ranges`, in buffer order (arena, records, files, sorted, lowers).
    pub(super) fn of(ranges: &[Range<usize>]) -> Layout {
        Layout {
            arena: ranges[0].clone(),
            recs: ranges[1].clone(),
            files: ranges[2].clone(),
            sorted: ranges[3].clone(),
            lowers: ranges[4].clone(),
        }
    }
}

/// One build of one root's definitions (immutable): the buffer and its sections.
#[derive(Debug, Default)]
pub struct Table {
    pub(super) bytes: Bytes,
    pub(super) layout: Layout,
}

/// A table while it is packed, before it is laid out.
#[derive(Debug, Default)]
pub(super) struct Draft {
    pub(super) arena: Vec<u8>,
    pub(super) recs: Vec<Rec>,
    /// By relative path (bytes).
    pub(super) files: Vec<FileRec>,
    pub(super) lowers: Vec<Lower>,
}

/// Files re-parsed since the table was packed: relative path → definitions, or `None`
/// when the file is gone (or no longer listed).
pub(super) type Overlay = HashMap<Vec<u8>, Option<FileSyms>>;

/// A file's definitions outside the table, as re-parsed after a change.
#[derive(Clone, Debug)]
pub struct FileSyms {
    pub lang: Lang,
    pub size: u64,
    pub mtime: u64,
    /// Inode and change time when parsed (`platform::os::identity`).
    pub ident: u64,
    pub defs: Vec<Definition>,
}

impl FileRec {
    pub(super) fn stamp(&self) -> Stamp {
        (self.size, self.mtime, self.ident)
    }

    pub(super) fn recs(&self) -> Range<u32> {
        self.recs_start..self.recs_end.max(self.recs_start)
    }
}

impl FileSyms {
    pub(super) fn stamp(&self) -> Stamp {
        (self.size, self.mtime, self.ident)
    }
}

pub(super) fn nanos(time: Option<SystemTime>) -> u64 {
    time.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(NO_MTIME, |d| d.as_nanos() as u64)
}

pub(super) fn lang_id(lang: Lang) -> u8 {
    Lang::ALL.iter().position(|l| *l == lang).unwrap_or(0) as u8
}

/// Bytes of a table's header: a layout version, then (offset, length) per section.
pub(super) const HEADER_BYTES: usize = 8 + 5 * 16;
/// The layout version, first in a table's buffer.
pub(super) const LAYOUT_VERSION: u32 = 3;

/// Record `r` in its public form (its signature is not stored: filled in for the page by
/// `find::by_name::fill_signatures`).
fn definition_in(arena: &[u8], r: Rec) -> Definition {
    Definition {
        name: text_in(arena, r.name, r.name_len).to_string(),
        kind: KINDS.get(r.kind as usize).copied().unwrap_or(KINDS[0]),
        line: r.line as u64,
        end_line: r.end_line as u64,
        name_line: r.line as u64 + r.name_line as u64,
        signature: String::new(),
        container: (r.container != NONE)
            .then(|| Arc::from(text_in(arena, r.container, r.container_len))),
        depth: r.depth as usize,
    }
}

/// File `f`'s definitions in their public form.
fn file_syms_in(arena: &[u8], recs: &[Rec], f: Option<&FileRec>) -> FileSyms {
    let f = f.copied().unwrap_or_default();
    FileSyms {
        lang: Lang::ALL
            .get(f.lang as usize)
            .copied()
            .unwrap_or(Lang::ALL[0]),
        size: f.size,
        mtime: f.mtime,
        ident: f.ident,
        defs: (f.recs())
            .filter_map(|r| recs.get(r as usize))
            .map(|r| definition_in(arena, *r))
            .collect(),
    }
}

impl Draft {
    /// Record `r`'s name.
    pub(super) fn name(&self, r: u32) -> &str {
        let rec = self.recs[r as usize];
        text_in(&self.arena, rec.name, rec.name_len)
    }

    /// Record `r`'s lowercase name (see [`lowercase`]), as bytes.
    pub(super) fn lower(&self, r: u32) -> impl Iterator<Item = u8> + Clone + '_ {
        lower_in(&self.arena, &self.lowers, r, self.recs[r as usize])
    }

    /// File `file`'s definitions in their public form.
    pub(super) fn file_syms(&self, file: usize) -> FileSyms {
        file_syms_in(&self.arena, &self.recs, self.files.get(file))
    }
}

fn text_in(arena: &[u8], at: u32, len: u16) -> &str {
    let bytes = arena
        .get(at as usize..at as usize + len as usize)
        .unwrap_or_default();
    // Only whole `str`s are stored.
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// The lowercase form a name is sorted and looked up by: ASCII letters folded, other
/// characters lowered one by one (so the form of a prefix is a prefix of the form).
pub(super) fn lowercase(name: &str) -> std::borrow::Cow<'_, str> {
    if name.is_ascii() {
        match name.bytes().any(|b| b.is_ascii_uppercase()) {
            true => std::borrow::Cow::Owned(name.to_ascii_lowercase()),
            false => std::borrow::Cow::Borrowed(name),
        }
    } else {
        std::borrow::Cow::Owned(name.chars().flat_map(char::to_lowercase).collect())
    }
}

/// The lowercase form of record `rec` (`r`), as bytes to fold with `to_ascii_lowercase`:
/// an ASCII name folds to it; a non-ASCII one has it stored in `lowers` when it differs.
fn lower_in<'a>(
    arena: &'a [u8],
    lowers: &[Lower],
    rec: u32,
    r: Rec,
) -> impl Iterator<Item = u8> + Clone + 'a {
    let (at, len) = match lowers.binary_search_by_key(&rec, |l| l.rec) {
        Ok(i) => (lowers[i].at, lowers[i].len),
        Err(_) => (r.name, r.name_len),
    };
    arena
        .get(at as usize..at as usize + len as usize)
        .unwrap_or_default()
        .iter()
        .map(u8::to_ascii_lowercase)
}

impl Table {
    /// A section of the buffer (empty when the layout does not fit it).
    fn section(&self, range: &Range<usize>) -> &[u8] {
        self.bytes.as_slice().get(range.clone()).unwrap_or_default()
    }

    pub(super) fn arena(&self) -> &[u8] {
        self.section(&self.layout.arena)
    }

    pub(super) fn recs(&self) -> &[Rec] {
        <[Rec]>::ref_from_bytes(self.section(&self.layout.recs)).unwrap_or_default()
    }

    /// By relative path (bytes).
    pub(super) fn files(&self) -> &[FileRec] {
        <[FileRec]>::ref_from_bytes(self.section(&self.layout.files)).unwrap_or_default()
    }

    /// Record ids sorted by lowercase name, then by name.
    pub(super) fn sorted(&self) -> &[u32] {
        <[u32]>::ref_from_bytes(self.section(&self.layout.sorted)).unwrap_or_default()
    }

    pub(super) fn lowers(&self) -> &[Lower] {
        <[Lower]>::ref_from_bytes(self.section(&self.layout.lowers)).unwrap_or_default()
    }

    /// Record `rec` (a blank one past the end).
    pub(super) fn rec(&self, rec: u32) -> Rec {
        self.recs().get(rec as usize).copied().unwrap_or_default()
    }

    /// The file holding record `rec`.
    pub(super) fn file_of(&self, rec: u32) -> usize {
        self.files().partition_point(|f| f.recs_end <= rec)
    }

    pub(super) fn text(&self, at: u32, len: u16) -> &str {
        text_in(self.arena(), at, len)
    }

    pub(super) fn name(&self, rec: u32) -> &str {
        let r = self.rec(rec);
        self.text(r.name, r.name_len)
    }

    /// The lowercase name (see [`lowercase`]), as bytes.
    pub(super) fn lower(&self, rec: u32) -> impl Iterator<Item = u8> + Clone + '_ {
        lower_in(self.arena(), self.lowers(), rec, self.rec(rec))
    }

    fn path_bytes(&self, f: &FileRec) -> &[u8] {
        (self.arena())
            .get(f.path as usize..f.path as usize + f.path_len as usize)
            .unwrap_or_default()
    }

    pub(super) fn rel(&self, file: usize) -> &Path {
        let bytes = self
            .files()
            .get(file)
            .map_or(&[][..], |f| self.path_bytes(f));
        Path::new(std::ffi::OsStr::from_bytes(bytes))
    }

    pub(super) fn find_file(&self, rel: &[u8]) -> Option<usize> {
        self.files()
            .binary_search_by(|f| self.path_bytes(f).cmp(rel))
            .ok()
    }

    /// [`Table::find_file`] trying `hint` first: files looked up in about the table's
    /// order (the file index's order differs only around names with bytes below `/`)
    /// are found without a search, each at the one after the last found.
    pub(super) fn find_file_near(&self, rel: &[u8], hint: usize) -> Option<usize> {
        let at_hint = self.files().get(hint).map(|f| self.path_bytes(f));
        match at_hint == Some(rel) {
            true => Some(hint),
            false => self.find_file(rel),
        }
    }

    /// Whether some file lies below the directory `rel`.
    pub(super) fn has_under(&self, rel: &[u8]) -> bool {
        let prefix = [rel, b"/"].concat();
        let files = self.files();
        let at = files.partition_point(|f| self.path_bytes(f) < prefix.as_slice());
        files
            .get(at)
            .is_some_and(|f| self.path_bytes(f).starts_with(&prefix))
    }

    pub(super) fn definition(&self, rec: u32) -> Definition {
        definition_in(self.arena(), self.rec(rec))
    }

    pub(super) fn file_syms(&self, file: usize) -> FileSyms {
        file_syms_in(self.arena(), self.recs(), self.files().get(file))
    }

    /// Definitions held.
    pub fn len(&self) -> usize {
        self.recs().len()
    }

    pub fn is_empty(&self) -> bool {
        self.recs().is_empty()
    }

    /// Heap bytes held (0 for a table used from its stored file).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.heap_bytes()
    }

    /// Bytes of the table (in the heap, or mapped from the store).
    pub(super) fn size(&self) -> usize {
        self.bytes.len()
    }

    pub(super) fn is_mapped(&self) -> bool {
        self.bytes.is_mapped()
    }

    /// Its stored file was cut short while mapped: what it says may be zeros.
    pub(crate) fn damaged(&self) -> bool {
        self.bytes.damaged()
    }

    /// Record ids whose name equals `key` (ignoring case when `insensitive`), or starts
    /// with it when `prefix`: the run of the sorted table whose lowercase form matches the
    /// key's, then, when case counts, those whose name matches as written.
    pub(super) fn lookup(&self, key: &str, insensitive: bool, prefix: bool) -> Vec<u32> {
        let low = lowercase(key);
        let low = low.as_bytes();
        let sorted = self.sorted();
        let start = sorted.partition_point(|r| self.lower(*r).lt(low.iter().copied()));
        let rest = &sorted[start..];
        let starts = |r: u32| {
            let mut folded = self.lower(r);
            low.iter().all(|k| folded.next() == Some(*k))
        };
        let len = match prefix {
            true => rest.partition_point(|r| starts(*r)),
            false => rest.partition_point(|r| self.lower(*r).eq(low.iter().copied())),
        };
        let run = &rest[..len];
        if insensitive {
            return run.to_vec();
        }
        let as_written = |r: &&u32| match prefix {
            true => self.name(**r).starts_with(key),
            false => self.name(**r) == key,
        };
        run.iter().filter(as_written).copied().collect()
    }
}

impl Table {
    /// Every file's definitions, back in their public form (tests).
    pub fn unpack(&self) -> Vec<(PathBuf, FileSyms)> {
        (0..self.files().len())
            .map(|i| (self.rel(i).to_path_buf(), self.file_syms(i)))
            .collect()
    }

    /// Size of one stored definition (the memory test checks it stays small).
    pub const RECORD_BYTES: usize = std::mem::size_of::<Rec>();
}

#[cfg(test)]
mod near {
    use super::super::packer::pack_files;
    use super::*;

    #[test]
    fn a_file_is_found_near_a_hint_or_else_by_search() {
        // Byte order: `a.rs` < `a/b.rs` (the file index lists `a/b.rs` first).
        let names = ["a.rs", "a/b.rs", "a/c.rs", "b.rs"];
        let files: Vec<(PathBuf, FileSyms)> = (names.iter().enumerate())
            .map(|(n, name)| {
                let syms = FileSyms {
                    lang: Lang::Rust,
                    size: n as u64,
                    mtime: 0,
                    ident: 0,
                    defs: Vec::new(),
                };
                (PathBuf::from(name), syms)
            })
            .collect();
        let table = pack_files(&files);
        for (hint, expect) in [(1, 1), (0, 1), (3, 1), (99, 1)] {
            assert_eq!(
                table.find_file_near(b"a/b.rs", hint),
                Some(expect),
                "hint {hint}"
            );
        }
        assert_eq!(table.find_file_near(b"a.rs", 0), Some(0));
        assert_eq!(table.find_file_near(b"a.rs", 2), Some(0));
        assert_eq!(table.find_file_near(b"c.rs", 3), None);
        assert_eq!(table.find_file_near(b"c.rs", 4), None);
    }
}
