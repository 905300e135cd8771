//! The table of one root's definitions, packed for memory: names, lowercase names
//! (non-ASCII ones only) and interned containers in one byte arena, each definition a
//! fixed record, two sorted id tables for exact and prefix lookups, and per file a range
//! of records plus the size, mtime and identity it was parsed at. [`Packer`] builds it once; it is
//! never changed after (the overlay holds what changed since).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::files::os::OsStrExt;
use crate::symbols::extract::Definition;
// A record stores its kind as a position in `KINDS`.
use crate::symbols::lang::{KINDS, Lang};

/// A record's "no offset" (no container, an ASCII name's lowercase form).
pub(super) const NONE: u32 = u32::MAX;
/// A file whose modification time was not known when it was parsed.
pub(super) const NO_MTIME: u64 = u64::MAX;

/// One definition, fixed size: offsets into the arena and line numbers (36 bytes).
#[derive(Clone, Copy, Debug)]
pub(super) struct Rec {
    pub(super) name: u32,
    pub(super) lower: u32,
    pub(super) container: u32,
    pub(super) line: u32,
    pub(super) end_line: u32,
    pub(super) file: u32,
    /// The name's line less the first line (a name is near its definition's start).
    pub(super) name_line: u16,
    pub(super) name_len: u16,
    pub(super) lower_len: u16,
    pub(super) container_len: u16,
    pub(super) kind: u8,
    pub(super) depth: u8,
}

/// One parsed file: its records and what it was parsed at.
#[derive(Clone, Debug)]
pub(super) struct FileRec {
    /// Path relative to the root, in the arena.
    pub(super) path: u32,
    pub(super) path_len: u16,
    pub(super) lang: u8,
    pub(super) size: u64,
    pub(super) mtime: u64,
    /// Inode and change time (`platform::os::identity`).
    pub(super) ident: u64,
    pub(super) recs: Range<u32>,
}

/// One build of one root's definitions (immutable).
#[derive(Debug, Default)]
pub struct Table {
    pub(super) arena: Vec<u8>,
    pub(super) recs: Vec<Rec>,
    /// By relative path (bytes).
    pub(super) files: Vec<FileRec>,
    /// Record ids sorted by name, then by lowercase name.
    pub(super) by_name: Vec<u32>,
    pub(super) by_lower: Vec<u32>,
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

/// What a file is compared by to know it is as parsed: size, mtime (nanoseconds) and
/// identity (`platform::os::identity`).
pub(super) type Stamp = (u64, u64, u64);

/// The stamp the file index holds for `file`.
pub(super) fn stamp_of(file: &crate::index::IndexedFile) -> Stamp {
    (file.size, nanos(file.modified), file.ident)
}

/// The stamp of a file's metadata as read from the disk now.
pub(super) fn stamp_of_meta(meta: &std::fs::Metadata) -> Stamp {
    (
        meta.len(),
        nanos(meta.modified().ok()),
        crate::platform::os::identity(meta),
    )
}

impl FileRec {
    pub(super) fn stamp(&self) -> Stamp {
        (self.size, self.mtime, self.ident)
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

/// Packs files into a [`Table`].
#[derive(Default)]
pub(super) struct Packer {
    pub(super) table: Table,
    pub(super) interned: HashMap<Arc<str>, u32>,
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
        let file_id = self.table.files.len() as u32;
        let start = self.table.recs.len() as u32;
        for def in &file.defs {
            let lower = def.name.to_lowercase();
            let (Ok(name_len), Ok(lower_len)) =
                (u16::try_from(def.name.len()), u16::try_from(lower.len()))
            else {
                continue;
            };
            // Signatures are not kept (they were most of the memory): the line is read
            // again for the definitions a query returns (see `find::by_name::fill_signatures`).
            let Some(name) = self.put(def.name.as_bytes()) else {
                return false;
            };
            let lower = if def.name.is_ascii() {
                NONE
            } else if lower == def.name {
                name
            } else {
                match self.put(lower.as_bytes()) {
                    Some(at) => at,
                    None => return false,
                }
            };
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
                        (at, c.len() as u16)
                    }
                },
            };
            self.table.recs.push(Rec {
                name,
                lower,
                container,
                line: def.line as u32,
                end_line: def.end_line as u32,
                name_line: def.name_line.saturating_sub(def.line).min(u16::MAX as u64) as u16,
                file: file_id,
                name_len,
                lower_len,
                container_len,
                kind: KINDS.iter().position(|k| *k == def.kind).unwrap_or(0) as u8,
                depth: def.depth.min(u8::MAX as usize) as u8,
            });
        }
        self.table.files.push(FileRec {
            path,
            path_len,
            lang: lang_id(file.lang),
            size: file.size,
            mtime: file.mtime,
            ident: file.ident,
            recs: start..self.table.recs.len() as u32,
        });
        true
    }

    pub(super) fn finish(self) -> Table {
        let mut table = self.table;
        table.arena.shrink_to_fit();
        table.recs.shrink_to_fit();
        table.files.shrink_to_fit();
        let mut by_name: Vec<u32> = (0..table.recs.len() as u32).collect();
        by_name.sort_unstable_by(|a, b| table.name(*a).cmp(table.name(*b)));
        let mut by_lower = by_name.clone();
        by_lower.sort_by(|a, b| table.lower(*a).cmp(table.lower(*b)));
        // (A stable sort on the name order: equal lowercase names stay by name.)
        table.by_name = by_name;
        table.by_lower = by_lower;
        table
    }
}

impl Table {
    pub(super) fn text(&self, at: u32, len: u16) -> &str {
        let bytes = &self.arena[at as usize..at as usize + len as usize];
        // Only whole `str`s are stored.
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    pub(super) fn name(&self, rec: u32) -> &str {
        let r = &self.recs[rec as usize];
        self.text(r.name, r.name_len)
    }

    /// The lowercase name, as bytes to fold with `to_ascii_lowercase`: an ASCII name is
    /// not stored twice (`lower` is `NONE`: the name folds to it), a non-ASCII one has its
    /// `to_lowercase` stored (folding leaves it as is).
    pub(super) fn lower(&self, rec: u32) -> impl Iterator<Item = u8> + Clone + '_ {
        let r = &self.recs[rec as usize];
        let (at, len) = match r.lower {
            NONE => (r.name, r.name_len),
            at => (at, r.lower_len),
        };
        self.arena[at as usize..at as usize + len as usize]
            .iter()
            .map(u8::to_ascii_lowercase)
    }

    pub(super) fn rel(&self, file: usize) -> &Path {
        let f = &self.files[file];
        let bytes = &self.arena[f.path as usize..f.path as usize + f.path_len as usize];
        Path::new(std::ffi::OsStr::from_bytes(bytes))
    }

    pub(super) fn find_file(&self, rel: &[u8]) -> Option<usize> {
        self.files
            .binary_search_by(|f| {
                self.arena[f.path as usize..f.path as usize + f.path_len as usize].cmp(rel)
            })
            .ok()
    }

    /// Whether some file lies below the directory `rel`.
    pub(super) fn has_under(&self, rel: &[u8]) -> bool {
        let prefix = [rel, b"/"].concat();
        let at = self.files.partition_point(|f| {
            &self.arena[f.path as usize..f.path as usize + f.path_len as usize] < prefix.as_slice()
        });
        self.files.get(at).is_some_and(|f| {
            self.arena[f.path as usize..f.path as usize + f.path_len as usize].starts_with(&prefix)
        })
    }

    pub(super) fn definition(&self, rec: u32) -> Definition {
        let r = &self.recs[rec as usize];
        Definition {
            name: self.text(r.name, r.name_len).to_string(),
            kind: KINDS[r.kind as usize],
            line: r.line as u64,
            end_line: r.end_line as u64,
            name_line: r.line as u64 + r.name_line as u64,
            // Not stored: filled in for the page by `find::by_name::fill_signatures`.
            signature: String::new(),
            container: (r.container != NONE)
                .then(|| Arc::from(self.text(r.container, r.container_len))),
            depth: r.depth as usize,
        }
    }

    pub(super) fn file_syms(&self, file: usize) -> FileSyms {
        let f = &self.files[file];
        FileSyms {
            lang: Lang::ALL[f.lang as usize],
            size: f.size,
            mtime: f.mtime,
            ident: f.ident,
            defs: f.recs.clone().map(|r| self.definition(r)).collect(),
        }
    }

    /// Definitions held.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Heap bytes held (arena, records, file records, sorted tables).
    pub fn heap_bytes(&self) -> usize {
        self.arena.capacity()
            + self.recs.capacity() * std::mem::size_of::<Rec>()
            + self.files.capacity() * std::mem::size_of::<FileRec>()
            + (self.by_name.capacity() + self.by_lower.capacity()) * 4
    }

    /// Record ids whose (lowercase when `insensitive`) name equals `key`, or starts with
    /// it when `prefix`.
    pub(super) fn lookup(&self, key: &str, insensitive: bool, prefix: bool) -> &[u32] {
        let key = key.as_bytes();
        if !insensitive {
            let name = |r: u32| self.name(r).as_bytes();
            let start = self.by_name.partition_point(|r| name(*r) < key);
            let rest = &self.by_name[start..];
            let len = if prefix {
                rest.partition_point(|r| name(*r).starts_with(key))
            } else {
                rest.partition_point(|r| name(*r) == key)
            };
            return &rest[..len];
        }
        let start = self
            .by_lower
            .partition_point(|r| self.lower(*r).lt(key.iter().copied()));
        let rest = &self.by_lower[start..];
        let starts = |r: u32| {
            let mut folded = self.lower(r);
            key.iter().all(|k| folded.next() == Some(*k))
        };
        let len = if prefix {
            rest.partition_point(|r| starts(*r))
        } else {
            rest.partition_point(|r| self.lower(*r).eq(key.iter().copied()))
        };
        &rest[..len]
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

impl Table {
    /// Every file's definitions, back in their public form (tests).
    pub fn unpack(&self) -> Vec<(PathBuf, FileSyms)> {
        (0..self.files.len())
            .map(|i| (self.rel(i).to_path_buf(), self.file_syms(i)))
            .collect()
    }

    /// Size of one stored definition (the memory test checks it stays small).
    pub const RECORD_BYTES: usize = std::mem::size_of::<Rec>();

    /// Names that start with `prefix` (lowercase when `insensitive`), distinct, sorted
    /// (completion).
    pub(crate) fn names_with_prefix(
        &self,
        prefix: &str,
        insensitive: bool,
        max: usize,
    ) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for &rec in self.lookup(prefix, insensitive, true) {
            let name = self.name(rec);
            if out.last().is_none_or(|last| last != name) && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
                if out.len() >= max {
                    break;
                }
            }
        }
        out
    }
}
