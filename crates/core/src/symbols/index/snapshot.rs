//! What a query reads: one root's table and overlay at a moment, checked against the file
//! index, and the [`Lookup`] a query narrows the table with.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use super::table::{Overlay, Table};
use crate::index::RootIndex;
use crate::index::Stamp;
use crate::index::stamp_of_meta;
use crate::platform::os::OsStrExt;
use crate::symbols::extract::{Definition, Parser};
use crate::symbols::lang::Lang;
use crate::symbols::parse::parse_file;

/// Which definitions a query wants from the table (the caller still ranks and filters
/// them; this only narrows what is looked at).
#[derive(Clone, Copy)]
pub enum Lookup<'a> {
    /// Name equal to the key (lowercase key and names when `insensitive`).
    Exact { key: &'a str, insensitive: bool },
    /// Name starting with the key.
    Prefix { key: &'a str, insensitive: bool },
    /// Every definition whose name the function accepts (substring and fuzzy passes
    /// scan the names).
    Scan(&'a (dyn Fn(&str) -> bool + Sync)),
}

/// What a query reads: one root's table and overlay, checked against the file index.
pub struct Snapshot {
    pub(super) root: PathBuf,
    pub(super) table: Arc<Table>,
    pub(super) overlay: Arc<Overlay>,
    /// Dirty paths (relative) that are files the file index lists: parsed by the query.
    pub(super) parse: Vec<PathBuf>,
    /// Dirty paths (relative) whose entries must not be answered from memory.
    pub(super) dirty: HashSet<Vec<u8>>,
    pub(super) files: Arc<RootIndex>,
    /// The file index cannot prove it has seen every change made before this snapshot
    /// (no watcher barrier: macOS, Windows): memory vouches for a file only when the file
    /// on disk still has the size, mtime and identity it was parsed at.
    pub(super) check_disk: bool,
}

/// Counts of an indexed answer, for the caller's statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Files read from memory.
    pub from_memory: u64,
    /// Files parsed on demand (dirty or changed since they were indexed).
    pub parsed: u64,
}

impl Snapshot {
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Its table's stored file was cut short while mapped: what was read may be zeros.
    pub fn damaged(&self) -> bool {
        self.table.damaged()
    }

    /// Drops this process's mapping of the table's pages read so far (see
    /// `store::mapped::Bytes::release_resident`): a build that reads every definition
    /// (the search index's) calls it as it goes, so the table it read through is not
    /// counted as the server's memory.
    pub(crate) fn release_resident(&self) {
        self.table.bytes.release_resident();
    }

    /// Files held (table and overlay).
    pub fn files(&self) -> usize {
        self.table.files().len() + self.overlay.values().filter(|f| f.is_some()).count()
    }

    /// Whether the file index still says `rel` has the size, mtime and identity it was
    /// parsed at, `held` (and, without the watcher's barrier, the disk too).
    pub(super) fn current(&self, rel: &Path, held: Stamp) -> bool {
        let listed =
            (self.files.find_file(rel)).is_some_and(|id| self.files.file(id).stamp() == held);
        listed
            && (!self.check_disk
                || std::fs::symlink_metadata(self.root.join(rel))
                    .is_ok_and(|m| stamp_of_meta(&m) == held))
    }

    /// All definitions of the file `path` (absolute, below this root) from memory, or
    /// `None` when memory cannot vouch for it (not held, dirty, or changed since it was
    /// parsed): the caller then parses it. Signatures are not held in memory (empty here).
    pub(crate) fn file_definitions(&self, path: &Path) -> Option<Vec<Definition>> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let key = rel.as_os_str().as_bytes();
        if self.dirty.contains(key) {
            return None;
        }
        let held = match self.overlay.get(key) {
            Some(entry) => entry.clone()?,
            None => self.table.file_syms(self.table.find_file(key)?),
        };
        self.current(rel, held.stamp()).then_some(held.defs)
    }

    /// Calls `each` with the definitions under `targets` (absolute paths below this root)
    /// that `lookup` selects, from memory when fresh, else parsed now. Overlay and
    /// on-demand files give all their definitions (the caller filters them anyway).
    pub fn visit(
        &self,
        targets: &[PathBuf],
        lookup: Lookup<'_>,
        each: &mut dyn FnMut(&Path, Lang, Definition),
    ) -> SnapshotStats {
        let mut stats = SnapshotStats::default();
        let rels: Vec<&Path> = targets
            .iter()
            .filter_map(|t| t.strip_prefix(&self.root).ok())
            .collect();
        let wanted = |rel: &Path| rels.iter().any(|t| rel.starts_with(t));
        let table = &self.table;
        let recs: Box<dyn Iterator<Item = u32> + '_> = match lookup {
            Lookup::Exact { key, insensitive } => {
                Box::new(table.lookup(key, insensitive, false).into_iter())
            }
            Lookup::Prefix { key, insensitive } => {
                Box::new(table.lookup(key, insensitive, true).into_iter())
            }
            Lookup::Scan(keep) => {
                Box::new((0..table.len() as u32).filter(move |r| keep(table.name(*r))))
            }
        };
        // Files whose memory is not to be trusted now: parsed once, below.
        let mut redo: Vec<PathBuf> = Vec::new();
        // Whether memory vouches for a file, decided once per file (it may `lstat`).
        let mut vouched: HashMap<usize, bool> = HashMap::new();
        for rec in recs {
            let file = table.file_of(rec);
            let rel = table.rel(file);
            let key = rel.as_os_str().as_bytes();
            if !wanted(rel) || self.overlay.contains_key(key) || self.dirty.contains(key) {
                continue;
            }
            let Some(f) = table.files().get(file) else {
                continue;
            };
            let current = match vouched.get(&file) {
                Some(&current) => current,
                None => {
                    let current = self.current(rel, f.stamp());
                    vouched.insert(file, current);
                    if !current && self.files.find_file(rel).is_some() {
                        redo.push(rel.to_path_buf());
                    }
                    current
                }
            };
            if !current {
                continue;
            }
            each(
                &self.root.join(rel),
                Lang::ALL
                    .get(f.lang as usize)
                    .copied()
                    .unwrap_or(Lang::ALL[0]),
                table.definition(rec),
            );
        }
        stats.from_memory = table.files().len() as u64;
        for (rel, file) in self.overlay.iter() {
            let rel = Path::new(std::ffi::OsStr::from_bytes(rel));
            let Some(file) = file else { continue };
            if !wanted(rel) || self.dirty.contains(rel.as_os_str().as_bytes()) {
                continue;
            }
            if !self.current(rel, file.stamp()) {
                if self.files.find_file(rel).is_some() {
                    redo.push(rel.to_path_buf());
                }
                continue;
            }
            let path = self.root.join(rel);
            for def in &file.defs {
                each(&path, file.lang, def.clone());
            }
        }
        redo.extend(self.parse.iter().filter(|rel| wanted(rel)).cloned());
        let mut ctx = Parser::new();
        let never = AtomicUsize::new(0);
        for rel in redo {
            let path = self.root.join(&rel);
            let Some(lang) = Lang::from_path(&path) else {
                continue;
            };
            stats.parsed += 1;
            if let Ok(defs) = parse_file(&mut ctx, &path, lang, &never) {
                for def in defs {
                    each(&path, lang, def);
                }
            }
        }
        stats
    }
}

/// Distinct names starting with `prefix` (ignoring case when `insensitive`) that `table`
/// and `overlay` hold for files not `dirty` (relative paths as bytes): the table's first
/// `max` in its order, skipping files the overlay holds again, then the overlay's.
/// Completion suggests from what the watcher has told, without the file index's barrier
/// (a query's [`Snapshot`] checks that); a dirty file offers none of its names until it
/// was parsed again.
pub(super) fn names_with_prefix(
    (table, overlay, dirty): (&Table, &Overlay, &HashSet<Vec<u8>>),
    prefix: &str,
    insensitive: bool,
    max: usize,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut held: HashMap<usize, bool> = HashMap::new();
    for rec in table.lookup(prefix, insensitive, true) {
        if out.len() >= max {
            break;
        }
        let name = table.name(rec);
        if out.iter().any(|n| n == name) {
            continue;
        }
        let file = table.file_of(rec);
        let kept = *held.entry(file).or_insert_with(|| {
            let key = table.rel(file).as_os_str().as_bytes();
            !overlay.contains_key(key) && !dirty.contains(key)
        });
        if kept {
            out.push(name.to_string());
        }
    }
    let folded = |name: &str| match insensitive {
        true => name.to_lowercase(),
        false => name.to_string(),
    };
    let key = folded(prefix);
    for (rel, file) in overlay.iter() {
        let Some(file) = file.as_ref().filter(|_| !dirty.contains(rel)) else {
            continue;
        };
        for def in &file.defs {
            if folded(&def.name).starts_with(&key) && !out.contains(&def.name) {
                out.push(def.name.clone());
            }
        }
    }
    out
}
