//! The symbol index (PRODUCT §13): per root, every definition of the supported files the
//! file index lists, packed in memory and kept live by the watcher's events, so `symbols`
//! answers from memory instead of pre-filtering and parsing.
//!
//! It is a second [`live::Consumer`] beside the file index and stands on it: a root is
//! built only once its file index is fresh, from that file list (supported languages, at
//! most [`MAX_PARSE_BYTES`] each), on a bounded number of low-priority threads that step
//! aside for every foreground search ([`yield_to_searches`] between files).
//!
//! Layout (compact, see [`Table`]): names, lowercase names (non-ASCII ones only) and
//! containers in one byte arena (containers interned; signatures are not kept, the line is
//! read again for the definitions a query returns), each definition a fixed record of offsets and
//! line numbers, two sorted tables of record ids (by name, by lowercase name) for exact
//! and prefix lookups, and per file a range of records plus the size and mtime it was
//! parsed at.
//!
//! Updates: a path named by a watch event (or by the server's own write) is *dirty* until
//! the worker re-parsed it into a small overlay (file → definitions, or gone); the overlay
//! is folded into a new table once it grows. Anything the overlay cannot express (a
//! directory appearing or vanishing, ignore rules changing, lost events, a re-watch)
//! makes the root *sync*: the file list is compared again with what was parsed (size and
//! mtime), reusing what did not change.
//!
//! Never stale: a query is answered from memory only when the root's table exists, no
//! sync is due, the file index is fresh and few paths are dirty; a dirty file, or one
//! whose size or mtime differs from the file index's, is parsed on demand by the query
//! itself. Otherwise [`SymbolIndex::snapshot`] says `None` and the caller takes the
//! on-demand path (text pre-filter, then parsing the candidates).

// A record stores its kind as a position in `KINDS`.
use super::lang::KINDS;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::extract::{Definition, MAX_PARSE_BYTES, Parser};
use super::lang::Lang;
use super::parse::{FileError, parse_file};
use crate::files::os::OsStrExt;
use crate::index::{FileIndex, IndexState, RootIndex};
use crate::live::Consumer;
use crate::walk::{YIELD_MAX, yield_to_searches};
use crate::watch::{RootStatus, WatchEvent};

/// More dirty paths than this and a query does not parse them itself: it takes the
/// on-demand path (a burst of changes, a checkout), which pre-filters before parsing.
pub const MAX_DIRTY_ON_DEMAND: usize = 64;

/// Files re-parsed into the overlay before it is folded into a new table.
pub const MAX_OVERLAY: usize = 1024;

const NONE: u32 = u32::MAX;
const NO_MTIME: u64 = u64::MAX;

/// One definition, fixed size: offsets into the arena and line numbers (36 bytes).
#[derive(Clone, Copy, Debug)]
struct Rec {
    name: u32,
    lower: u32,
    container: u32,
    line: u32,
    end_line: u32,
    file: u32,
    /// The name's line less the first line (a name is near its definition's start).
    name_line: u16,
    name_len: u16,
    lower_len: u16,
    container_len: u16,
    kind: u8,
    depth: u8,
}

/// One parsed file: its records and what it was parsed at.
#[derive(Clone, Debug)]
struct FileRec {
    /// Path relative to the root, in the arena.
    path: u32,
    path_len: u16,
    lang: u8,
    size: u64,
    mtime: u64,
    recs: Range<u32>,
}

/// One build of one root's definitions (immutable).
#[derive(Debug, Default)]
pub struct Table {
    arena: Vec<u8>,
    recs: Vec<Rec>,
    /// By relative path (bytes).
    files: Vec<FileRec>,
    /// Record ids sorted by name, then by lowercase name.
    by_name: Vec<u32>,
    by_lower: Vec<u32>,
}

/// Files re-parsed since the table was packed: relative path → definitions, or `None`
/// when the file is gone (or no longer listed).
type Overlay = HashMap<Vec<u8>, Option<FileSyms>>;

/// A file's definitions outside the table, as re-parsed after a change.
#[derive(Clone, Debug)]
pub struct FileSyms {
    pub lang: Lang,
    pub size: u64,
    pub mtime: u64,
    pub defs: Vec<Definition>,
}

fn nanos(time: Option<SystemTime>) -> u64 {
    time.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(NO_MTIME, |d| d.as_nanos() as u64)
}

fn lang_id(lang: Lang) -> u8 {
    Lang::ALL.iter().position(|l| *l == lang).unwrap_or(0) as u8
}

/// Packs files into a [`Table`].
#[derive(Default)]
struct Packer {
    table: Table,
    interned: HashMap<Arc<str>, u32>,
}

impl Packer {
    fn put(&mut self, text: &[u8]) -> Option<u32> {
        let at = u32::try_from(self.table.arena.len()).ok()?;
        u32::try_from(self.table.arena.len() + text.len()).ok()?;
        self.table.arena.extend_from_slice(text);
        Some(at)
    }

    /// Adds one file (in path order); `false` when the arena is full (4 GiB: never in
    /// practice, but the offsets are 32-bit).
    fn add(&mut self, rel: &[u8], file: &FileSyms) -> bool {
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
            recs: start..self.table.recs.len() as u32,
        });
        true
    }

    fn finish(self) -> Table {
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
    fn text(&self, at: u32, len: u16) -> &str {
        let bytes = &self.arena[at as usize..at as usize + len as usize];
        // Only whole `str`s are stored.
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    fn name(&self, rec: u32) -> &str {
        let r = &self.recs[rec as usize];
        self.text(r.name, r.name_len)
    }

    /// The lowercase name, as bytes to fold with `to_ascii_lowercase`: an ASCII name is
    /// not stored twice (`lower` is `NONE`: the name folds to it), a non-ASCII one has its
    /// `to_lowercase` stored (folding leaves it as is).
    fn lower(&self, rec: u32) -> impl Iterator<Item = u8> + Clone + '_ {
        let r = &self.recs[rec as usize];
        let (at, len) = match r.lower {
            NONE => (r.name, r.name_len),
            at => (at, r.lower_len),
        };
        self.arena[at as usize..at as usize + len as usize]
            .iter()
            .map(u8::to_ascii_lowercase)
    }

    fn rel(&self, file: usize) -> &Path {
        let f = &self.files[file];
        let bytes = &self.arena[f.path as usize..f.path as usize + f.path_len as usize];
        Path::new(std::ffi::OsStr::from_bytes(bytes))
    }

    fn find_file(&self, rel: &[u8]) -> Option<usize> {
        self.files
            .binary_search_by(|f| {
                self.arena[f.path as usize..f.path as usize + f.path_len as usize].cmp(rel)
            })
            .ok()
    }

    /// Whether some file lies below the directory `rel`.
    fn has_under(&self, rel: &[u8]) -> bool {
        let prefix = [rel, b"/"].concat();
        let at = self.files.partition_point(|f| {
            &self.arena[f.path as usize..f.path as usize + f.path_len as usize] < prefix.as_slice()
        });
        self.files.get(at).is_some_and(|f| {
            self.arena[f.path as usize..f.path as usize + f.path_len as usize].starts_with(&prefix)
        })
    }

    fn definition(&self, rec: u32) -> Definition {
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

    fn file_syms(&self, file: usize) -> FileSyms {
        let f = &self.files[file];
        FileSyms {
            lang: Lang::ALL[f.lang as usize],
            size: f.size,
            mtime: f.mtime,
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
    fn lookup(&self, key: &str, insensitive: bool, prefix: bool) -> &[u32] {
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
    root: PathBuf,
    table: Arc<Table>,
    overlay: Arc<Overlay>,
    /// Dirty paths (relative) that are files the file index lists: parsed by the query.
    parse: Vec<PathBuf>,
    /// Dirty paths (relative) whose entries must not be answered from memory.
    dirty: HashSet<Vec<u8>>,
    files: Arc<RootIndex>,
    /// The file index cannot prove it has seen every change made before this snapshot
    /// (no watcher barrier: macOS, Windows): memory vouches for a file only when the file
    /// on disk still has the size and mtime it was parsed at.
    check_disk: bool,
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

    /// Files held (table and overlay).
    pub fn files(&self) -> usize {
        self.table.files.len() + self.overlay.values().filter(|f| f.is_some()).count()
    }

    /// Whether the file index still says `rel` has the size and mtime it was parsed at.
    fn current(&self, rel: &Path, size: u64, mtime: u64) -> bool {
        let listed = self.files.find_file(rel).is_some_and(|id| {
            let now = self.files.file(id);
            now.size == size && nanos(now.modified) == mtime
        });
        listed
            && (!self.check_disk
                || std::fs::symlink_metadata(self.root.join(rel))
                    .is_ok_and(|m| m.len() == size && nanos(m.modified().ok()) == mtime))
    }

    /// All definitions of the file `path` (absolute, below this root) from memory, or
    /// `None` when memory cannot vouch for it (not held, dirty, or changed since it was
    /// parsed): the caller then parses it. Signatures are not held in memory (empty here).
    pub fn file_definitions(&self, path: &Path) -> Option<Vec<Definition>> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let key = rel.as_os_str().as_bytes();
        if self.dirty.contains(key) {
            return None;
        }
        let held = match self.overlay.get(key) {
            Some(entry) => entry.clone()?,
            None => self.table.file_syms(self.table.find_file(key)?),
        };
        self.current(rel, held.size, held.mtime)
            .then_some(held.defs)
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
                Box::new(table.lookup(key, insensitive, false).iter().copied())
            }
            Lookup::Prefix { key, insensitive } => {
                Box::new(table.lookup(key, insensitive, true).iter().copied())
            }
            Lookup::Scan(keep) => {
                Box::new((0..table.recs.len() as u32).filter(move |r| keep(table.name(*r))))
            }
        };
        // Files whose memory is not to be trusted now: parsed once, below.
        let mut redo: Vec<PathBuf> = Vec::new();
        // Whether memory vouches for a file, decided once per file (it may `lstat`).
        let mut vouched: HashMap<usize, bool> = HashMap::new();
        for rec in recs {
            let file = table.recs[rec as usize].file as usize;
            let rel = table.rel(file);
            let key = rel.as_os_str().as_bytes();
            if !wanted(rel) || self.overlay.contains_key(key) || self.dirty.contains(key) {
                continue;
            }
            let f = &table.files[file];
            let current = match vouched.get(&file) {
                Some(&current) => current,
                None => {
                    let current = self.current(rel, f.size, f.mtime);
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
                Lang::ALL[f.lang as usize],
                table.definition(rec),
            );
        }
        stats.from_memory = table.files.len() as u64;
        for (rel, file) in self.overlay.iter() {
            let rel = Path::new(std::ffi::OsStr::from_bytes(rel));
            let Some(file) = file else { continue };
            if !wanted(rel) || self.dirty.contains(rel.as_os_str().as_bytes()) {
                continue;
            }
            if !self.current(rel, file.size, file.mtime) {
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

/// How one root's symbol index stands, for `list_roots`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolState {
    /// Waiting for the root's file index to be fresh.
    Waiting,
    /// First build under way: files parsed so far of the total.
    Building { done: usize, total: usize },
    /// Answering from memory (updates may be under way: they are parsed on demand).
    Ready,
    /// Comparing with the file list again (after a directory change, lost events…):
    /// queries are on demand meanwhile.
    Syncing { done: usize, total: usize },
    /// Not indexed: queries parse on demand (the reason says why).
    Unavailable(String),
}

#[derive(Clone, Debug)]
pub struct SymbolStatus {
    pub root: PathBuf,
    pub state: SymbolState,
    /// Definitions and files held.
    pub definitions: usize,
    pub files: usize,
    /// Supported files over the parse cap, not indexed.
    pub too_large: usize,
    /// Heap bytes of the table.
    pub heap_bytes: usize,
    /// Files re-parsed after changes since the last full pack.
    pub updates: u64,
    /// How long the last full pack (build or sync) took, and its CPU-bound part.
    pub last_build: Option<Duration>,
}

struct Slot {
    root: PathBuf,
    table: Option<Arc<Table>>,
    overlay: Arc<Overlay>,
    /// Paths changed and not yet re-parsed (absolute).
    dirty: HashSet<PathBuf>,
    /// Paths taken by the running job (still dirty for queries until it lands).
    in_flight: HashSet<PathBuf>,
    sync: bool,
    /// A sync (or the first build) is running: not answered from memory until it lands.
    syncing: bool,
    /// No work before then (the file index is unavailable: looked at again later).
    not_before: Option<std::time::Instant>,
    /// Watched by the watcher (no watch, no index).
    watched: bool,
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
    running: bool,
    too_large: usize,
    updates: u64,
    last_build: Option<Duration>,
}

impl Slot {
    fn new(root: PathBuf) -> Slot {
        Slot {
            root,
            table: None,
            overlay: Arc::default(),
            dirty: HashSet::new(),
            in_flight: HashSet::new(),
            sync: true,
            syncing: false,
            not_before: None,
            watched: false,
            cancel: Arc::default(),
            done: Arc::default(),
            total: Arc::default(),
            running: false,
            too_large: 0,
            updates: 0,
            last_build: None,
        }
    }

    fn has_work(&self) -> bool {
        self.watched
            && !self.running
            && (self.sync || !self.dirty.is_empty())
            && self
                .not_before
                .is_none_or(|at| std::time::Instant::now() >= at)
    }
}

struct State {
    slots: Vec<Slot>,
    stop: bool,
}

struct Shared {
    files: Arc<FileIndex>,
    state: Mutex<State>,
    wake: Condvar,
    threads: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The live symbol index over the current roots (see the module documentation).
pub struct SymbolIndex {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

/// Threads the build parses with: all cores but one (a foreground request always has
/// one), at least one.
pub fn build_threads() -> usize {
    crate::walk::thread_count().saturating_sub(1).max(1)
}

impl SymbolIndex {
    /// An index standing on `files` (which must be fed the same events, first).
    pub fn new(files: Arc<FileIndex>) -> SymbolIndex {
        SymbolIndex::with_threads(files, build_threads())
    }

    pub fn with_threads(files: Arc<FileIndex>, threads: usize) -> SymbolIndex {
        let shared = Arc::new(Shared {
            files,
            state: Mutex::new(State {
                slots: Vec::new(),
                stop: false,
            }),
            wake: Condvar::new(),
            threads: threads.max(1),
        });
        let for_worker = shared.clone();
        let worker = std::thread::Builder::new()
            .name("rootgrep-symbols".into())
            .spawn(move || worker_loop(&for_worker))
            .expect("spawning the symbol index thread");
        SymbolIndex {
            shared,
            worker: Some(worker),
        }
    }

    /// What a query on `root` may read from memory, or `None`: not built yet, a sync is
    /// due, the file index is not fresh, or too many paths are dirty (the caller then
    /// takes the on-demand path).
    pub fn snapshot(&self, root: &Path) -> Option<Snapshot> {
        let (table, overlay, dirty) = {
            let state = self.shared.lock();
            let slot = state.slots.iter().find(|s| s.root == root)?;
            if slot.sync || slot.syncing || !slot.watched {
                return None;
            }
            let table = slot.table.clone()?;
            if slot.dirty.len() + slot.in_flight.len() > MAX_DIRTY_ON_DEMAND {
                return None;
            }
            let dirty: Vec<PathBuf> = slot.dirty.union(&slot.in_flight).cloned().collect();
            (table, slot.overlay.clone(), dirty)
        };
        let files = self.shared.files.snapshot(root)?;
        let mut parse = Vec::new();
        let mut excluded = HashSet::new();
        for path in dirty {
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            if files.find_file(rel).is_some() {
                if Lang::from_path(rel).is_some() {
                    parse.push(rel.to_path_buf());
                }
            } else if path.is_dir() || files.find_dir(rel).is_some() {
                // A directory: its files are unknown here (the worker syncs).
                return None;
            } else if table.find_file(rel.as_os_str().as_bytes()).is_none()
                && table.has_under(rel.as_os_str().as_bytes())
            {
                // A whole directory went away: leave it to the worker.
                return None;
            }
            excluded.insert(rel.as_os_str().as_bytes().to_vec());
        }
        Some(Snapshot {
            root: root.to_path_buf(),
            table,
            overlay,
            parse,
            dirty: excluded,
            files,
            check_disk: !self.shared.files.proves_freshness(),
        })
    }

    /// [`SymbolIndex::snapshot`] of the root holding `path`.
    pub fn snapshot_for(&self, path: &Path) -> Option<Snapshot> {
        self.snapshot(&self.root_of(path)?)
    }

    /// The innermost root holding `path`.
    pub fn root_of(&self, path: &Path) -> Option<PathBuf> {
        let state = self.shared.lock();
        state
            .slots
            .iter()
            .filter(|s| path.starts_with(&s.root))
            .max_by_key(|s| s.root.as_os_str().len())
            .map(|s| s.root.clone())
    }

    /// Distinct definition names starting with `prefix` (smart case) over the roots built,
    /// sorted, at most `max`, and whether there were more (completion of symbol names:
    /// suggestions, so a root being updated still offers what it holds).
    pub fn complete_names(&self, prefix: &str, max: usize) -> (Vec<String>, bool) {
        if prefix.is_empty() || max == 0 {
            return (Vec::new(), false);
        }
        let insensitive = !prefix.chars().any(char::is_uppercase);
        let key = if insensitive {
            prefix.to_lowercase()
        } else {
            prefix.to_string()
        };
        let held: Vec<(Arc<Table>, Arc<Overlay>)> = {
            let state = self.shared.lock();
            state
                .slots
                .iter()
                .filter_map(|s| Some((s.table.clone()?, s.overlay.clone())))
                .collect()
        };
        // Ordered ignoring case first (`parse` beside `Parser`), then as written.
        let mut names: std::collections::BTreeSet<(String, String)> =
            std::collections::BTreeSet::new();
        let entry = |name: String| (name.to_lowercase(), name);
        for (table, overlay) in &held {
            names.extend(
                table
                    .names_with_prefix(&key, insensitive, max + 1)
                    .into_iter()
                    .map(entry),
            );
            for file in overlay.values().flatten() {
                for def in &file.defs {
                    let folded = if insensitive {
                        def.name.to_lowercase()
                    } else {
                        def.name.clone()
                    };
                    if folded.starts_with(&key) {
                        names.insert(entry(def.name.clone()));
                    }
                }
            }
        }
        let more = names.len() > max;
        (
            names.into_iter().take(max).map(|(_, name)| name).collect(),
            more,
        )
    }

    /// Waits up to `timeout` for `root` to answer from memory (tests, benchmarks).
    pub fn wait_ready(&self, root: &Path, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self.snapshot(root).is_some() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every root's state, in the order set.
    pub fn status(&self) -> Vec<SymbolStatus> {
        let file_states = self.shared.files.status();
        let state = self.shared.lock();
        state
            .slots
            .iter()
            .map(|slot| {
                let files = file_states.iter().find(|s| s.root == slot.root);
                let progress = (
                    slot.done.load(Ordering::Relaxed),
                    slot.total.load(Ordering::Relaxed),
                );
                let symbol_state = match files.map(|s| &s.state) {
                    Some(IndexState::Unavailable(why)) => SymbolState::Unavailable(format!(
                        "no file index ({why}); symbols are parsed on demand"
                    )),
                    _ if !slot.watched => SymbolState::Waiting,
                    // Running, but still waiting for a fresh file list.
                    _ if slot.running && progress.1 == usize::MAX && slot.table.is_none() => {
                        SymbolState::Waiting
                    }
                    _ if slot.table.is_none() && slot.running => SymbolState::Building {
                        done: progress.0,
                        total: progress.1,
                    },
                    _ if slot.table.is_none() => SymbolState::Waiting,
                    _ if slot.sync || slot.syncing => SymbolState::Syncing {
                        done: progress.0,
                        total: if progress.1 == usize::MAX {
                            0
                        } else {
                            progress.1
                        },
                    },
                    _ => SymbolState::Ready,
                };
                let table = slot.table.as_deref();
                SymbolStatus {
                    root: slot.root.clone(),
                    state: symbol_state,
                    definitions: table.map_or(0, Table::len)
                        + slot
                            .overlay
                            .values()
                            .flatten()
                            .map(|f| f.defs.len())
                            .sum::<usize>(),
                    files: table.map_or(0, |t| t.files.len()),
                    too_large: slot.too_large,
                    heap_bytes: table.map_or(0, Table::heap_bytes),
                    updates: slot.updates,
                    last_build: slot.last_build,
                }
            })
            .collect()
    }

    fn mark(&self, path: &Path) {
        let mut state = self.shared.lock();
        let mut any = false;
        for slot in state.slots.iter_mut() {
            if path.starts_with(&slot.root) {
                if path
                    .file_name()
                    .is_some_and(|n| n == ".gitignore" || n == ".ignore")
                {
                    slot.sync = true;
                } else {
                    slot.dirty.insert(path.to_path_buf());
                }
                any = true;
            }
        }
        drop(state);
        if any {
            self.shared.wake.notify_all();
        }
    }
}

impl Drop for SymbolIndex {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.stop = true;
            for slot in &state.slots {
                slot.cancel.store(true, Ordering::Relaxed);
            }
        }
        self.shared.wake.notify_all();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl Consumer for SymbolIndex {
    fn set_roots(&self, roots: &[PathBuf]) {
        let mut state = self.shared.lock();
        state.slots.retain(|slot| {
            let keep = roots.contains(&slot.root);
            if !keep {
                slot.cancel.store(true, Ordering::Relaxed);
            }
            keep
        });
        for root in roots {
            if root.is_dir() && !state.slots.iter().any(|s| &s.root == root) {
                state.slots.push(Slot::new(root.clone()));
            }
        }
        drop(state);
        self.shared.wake.notify_all();
    }

    fn apply(&self, event: &WatchEvent) {
        match event {
            WatchEvent::Pending(path)
            | WatchEvent::Changed(path)
            | WatchEvent::Created(path)
            | WatchEvent::Removed(path) => self.mark(path),
            WatchEvent::Quiet => {}
            WatchEvent::Overflow | WatchEvent::Error(_) => {
                let mut state = self.shared.lock();
                for slot in state.slots.iter_mut() {
                    slot.sync = true;
                }
                drop(state);
                self.shared.wake.notify_all();
            }
            WatchEvent::Status(root, status) => {
                let mut state = self.shared.lock();
                if let Some(slot) = state.slots.iter_mut().find(|s| &s.root == root) {
                    // Events may have been missed while not watched: compare again.
                    slot.watched = *status == RootStatus::Watching;
                    slot.sync = true;
                }
                drop(state);
                self.shared.wake.notify_all();
            }
        }
    }

    fn expect_change(&self, path: &Path) {
        self.mark(path);
    }
}

/// The worker: one root's job at a time (a first build, a sync, or re-parsing dirty
/// files), each waiting first for the root's file index to be fresh.
fn worker_loop(shared: &Shared) {
    loop {
        let job = {
            let mut state = shared.lock();
            loop {
                if state.stop {
                    return;
                }
                if let Some(slot) = state.slots.iter_mut().find(|s| s.has_work()) {
                    slot.running = true;
                    slot.not_before = None;
                    // Unknown until the file list is read (see `status`).
                    slot.total.store(usize::MAX, Ordering::Relaxed);
                    slot.done.store(0, Ordering::Relaxed);
                    slot.cancel = Arc::default();
                    slot.in_flight = std::mem::take(&mut slot.dirty);
                    let sync = slot.sync || slot.table.is_none();
                    // A sync asked for while this one runs is another one.
                    slot.syncing = sync;
                    slot.sync = false;
                    break Job {
                        root: slot.root.clone(),
                        sync,
                        table: slot.table.clone(),
                        overlay: slot.overlay.clone(),
                        dirty: slot.in_flight.iter().cloned().collect(),
                        cancel: slot.cancel.clone(),
                        done: slot.done.clone(),
                        total: slot.total.clone(),
                    };
                }
                state = shared
                    .wake
                    .wait_timeout(state, Duration::from_millis(500))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        };
        let outcome = run_job(shared, &job);
        let packed = matches!(outcome, Outcome::Packed { .. });
        let mut state = shared.lock();
        let Some(slot) = state.slots.iter_mut().find(|s| s.root == job.root) else {
            continue;
        };
        slot.running = false;
        let was_sync = std::mem::take(&mut slot.syncing);
        match outcome {
            Outcome::Packed {
                table,
                too_large,
                elapsed,
            } => {
                slot.table = Some(Arc::new(table));
                slot.overlay = Arc::default();
                slot.too_large = too_large;
                slot.last_build = Some(elapsed);
                slot.in_flight.clear();
            }
            Outcome::Updated { overlay, parsed } => {
                slot.overlay = Arc::new(overlay);
                slot.updates += parsed;
                slot.in_flight.clear();
            }
            Outcome::NeedsSync => {
                slot.sync = true;
                let back = std::mem::take(&mut slot.in_flight);
                slot.dirty.extend(back);
            }
            Outcome::Gave { later } => {
                // Not fresh yet or cancelled: the paths stay dirty for the next try.
                let back = std::mem::take(&mut slot.in_flight);
                slot.dirty.extend(back);
                slot.sync |= was_sync;
                if later {
                    slot.not_before = Some(std::time::Instant::now() + Duration::from_secs(2));
                }
            }
        }
        drop(state);
        shared.wake.notify_all();
        if packed {
            // The build's transient memory (parse trees, unpacked lists) is free now, and
            // the replaced table too: give it back rather than keep the build's peak.
            crate::memory::release_freed();
        }
    }
}

struct Job {
    root: PathBuf,
    sync: bool,
    table: Option<Arc<Table>>,
    overlay: Arc<Overlay>,
    dirty: Vec<PathBuf>,
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
}

enum Outcome {
    Packed {
        table: Table,
        too_large: usize,
        elapsed: Duration,
    },
    Updated {
        overlay: Overlay,
        parsed: u64,
    },
    NeedsSync,
    /// Nothing done (`later`: the file index is unavailable, try again in a while).
    Gave {
        later: bool,
    },
}

fn stopped(shared: &Shared, job: &Job) -> bool {
    job.cancel.load(Ordering::Relaxed) || shared.lock().stop
}

fn run_job(shared: &Shared, job: &Job) -> Outcome {
    // The index stands on a fresh file list; wait for it (re-checking for a stop).
    let files = loop {
        if stopped(shared, job) {
            return Outcome::Gave { later: false };
        }
        if let Some(files) = shared
            .files
            .wait_fresh(&job.root, Duration::from_millis(200))
        {
            break files;
        }
        if shared
            .files
            .status()
            .iter()
            .any(|s| s.root == job.root && matches!(s.state, IndexState::Unavailable(_)))
        {
            // No file index (too many files, not watched): on demand only; look again
            // in a while.
            return Outcome::Gave { later: true };
        }
    };
    if job.sync {
        return pack(shared, job, &files);
    }
    // Re-parse the dirty files into a copy of the overlay.
    let mut overlay = (*job.overlay).clone();
    let table = job.table.as_deref();
    let mut ctx = Parser::new();
    let never = AtomicUsize::new(0);
    let mut parsed = 0;
    for path in &job.dirty {
        let Ok(rel) = path.strip_prefix(&job.root) else {
            continue;
        };
        let key = rel.as_os_str().as_bytes().to_vec();
        match files.find_file(rel) {
            Some(id) => {
                let Some(lang) = Lang::from_path(rel) else {
                    continue;
                };
                let meta = files.file(id);
                if meta.size > MAX_PARSE_BYTES as u64 {
                    overlay.insert(key, None);
                    continue;
                }
                yield_to_searches(|| stopped(shared, job), YIELD_MAX);
                let defs = parse_file(&mut ctx, path, lang, &never).unwrap_or_default();
                parsed += 1;
                overlay.insert(
                    key,
                    Some(FileSyms {
                        lang,
                        size: meta.size,
                        mtime: nanos(meta.modified),
                        defs,
                    }),
                );
            }
            None if path.is_dir() || files.find_dir(rel).is_some() => {
                return Outcome::NeedsSync;
            }
            None => {
                let held = table.is_some_and(|t| t.find_file(&key).is_some())
                    || overlay.contains_key(&key);
                if held {
                    overlay.insert(key, None);
                } else if table.is_some_and(|t| t.has_under(&key)) {
                    // A directory went away with its files.
                    return Outcome::NeedsSync;
                }
            }
        }
    }
    if overlay.len() > MAX_OVERLAY {
        return Outcome::NeedsSync;
    }
    Outcome::Updated { overlay, parsed }
}

/// A full pack: every supported file of the list, reusing what was parsed at the same
/// size and mtime, parsing the rest on the build threads.
fn pack(shared: &Shared, job: &Job, files: &RootIndex) -> Outcome {
    let started = std::time::Instant::now();
    let dirty: HashSet<&Path> = job
        .dirty
        .iter()
        .filter_map(|p| p.strip_prefix(&job.root).ok())
        .collect();
    let mut too_large = 0;
    // Where each file's definitions come from: what is reused is read from the old table
    // or overlay only while packing, one file at a time, so the build's peak memory is
    // about twice the compact size, never every definition as `String`s.
    enum Src {
        Old(usize),
        Overlay,
        /// Parsed now: (thread, file in that thread's table).
        New(usize, usize),
        Parse,
    }
    let mut plan: Vec<(PathBuf, Lang, u64, u64, Src)> = Vec::new();
    for file in files.files() {
        let Some(lang) = Lang::from_path(file.rel) else {
            continue;
        };
        if file.size > MAX_PARSE_BYTES as u64 {
            too_large += 1;
            continue;
        }
        let mtime = nanos(file.modified);
        let key = file.rel.as_os_str().as_bytes();
        let same = |size: u64, at: u64| size == file.size && at == mtime;
        let src = if dirty.contains(file.rel) {
            Src::Parse
        } else {
            match (job.overlay.get(key), job.table.as_deref()) {
                (Some(Some(f)), _) if same(f.size, f.mtime) => Src::Overlay,
                (Some(_), _) => Src::Parse,
                (None, Some(t)) => match t.find_file(key) {
                    Some(i) if same(t.files[i].size, t.files[i].mtime) => Src::Old(i),
                    _ => Src::Parse,
                },
                (None, None) => Src::Parse,
            }
        };
        plan.push((file.rel.to_path_buf(), lang, file.size, mtime, src));
    }
    let todo: Vec<usize> = (0..plan.len())
        .filter(|i| matches!(plan[*i].4, Src::Parse))
        .collect();
    job.total.store(todo.len(), Ordering::Relaxed);
    job.done.store(0, Ordering::Relaxed);
    let next = AtomicUsize::new(0);
    // Each thread packs what it parses into its own (unsorted) table.
    let parts: Mutex<Vec<(Table, Vec<usize>)>> = Mutex::new(Vec::new());
    let work = || {
        lower_priority();
        let mut ctx = Parser::new();
        let abort = AtomicUsize::new(0);
        let mut mine = Packer::default();
        let mut order = Vec::new();
        loop {
            // Background work: a foreground search runs alone.
            yield_to_searches(|| stopped(shared, job), YIELD_MAX);
            if job.cancel.load(Ordering::Relaxed) {
                break;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&at) = todo.get(i) else { break };
            let (rel, lang, size, mtime, _) = &plan[at];
            let defs = match parse_file(&mut ctx, &job.root.join(rel), *lang, &abort) {
                Ok(defs) => defs,
                Err(FileError::Cancelled) => break,
                Err(_) => Vec::new(),
            };
            let syms = FileSyms {
                lang: *lang,
                size: *size,
                mtime: *mtime,
                defs,
            };
            if !mine.add(b"", &syms) {
                job.cancel.store(true, Ordering::Relaxed);
                break;
            }
            order.push(at);
            job.done.fetch_add(1, Ordering::Relaxed);
            if i.is_multiple_of(64) && shared.lock().stop {
                job.cancel.store(true, Ordering::Relaxed);
            }
        }
        parts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((mine.table, order));
    };
    std::thread::scope(|scope| {
        for n in 0..shared.threads {
            std::thread::Builder::new()
                .name(format!("rootgrep-symbols-{n}"))
                .spawn_scoped(scope, work)
                .expect("spawning a symbol build thread");
        }
    });
    if job.cancel.load(Ordering::Relaxed) {
        return Outcome::Gave { later: false };
    }
    let parts = parts.into_inner().unwrap_or_else(PoisonError::into_inner);
    for (thread, (_, order)) in parts.iter().enumerate() {
        for (local, &at) in order.iter().enumerate() {
            plan[at].4 = Src::New(thread, local);
        }
    }
    // Path order (bytes), as the table's lookups by path expect.
    plan.sort_by(|a, b| a.0.as_os_str().as_bytes().cmp(b.0.as_os_str().as_bytes()));
    let mut packer = Packer::default();
    for (rel, _, _, _, src) in &plan {
        let key = rel.as_os_str().as_bytes();
        let syms = match src {
            Src::Old(i) => job.table.as_deref().map(|t| t.file_syms(*i)),
            Src::Overlay => job.overlay.get(key).cloned().flatten(),
            Src::New(thread, local) => Some(parts[*thread].0.file_syms(*local)),
            Src::Parse => None,
        };
        if let Some(syms) = syms
            && !packer.add(key, &syms)
        {
            break;
        }
    }
    drop(parts);
    Outcome::Packed {
        table: packer.finish(),
        too_large,
        elapsed: started.elapsed(),
    }
}

/// Makes the calling build thread yield the CPU to the server's other threads (the
/// watcher, requests) when the cores are busy: on a loaded machine a build at normal
/// priority delays the watcher's events, and so how soon a change is seen. Linux sets a
/// nice value per thread, Windows the thread's priority below normal; on macOS (where a
/// nice value is per process) the threads stay as they are and `yield_to_searches` is what
/// keeps the build out of the way.
#[cfg_attr(windows, allow(unsafe_code))]
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let tid = rustix::thread::gettid();
        if let Err(err) = rustix::process::setpriority_process(Some(tid), 10) {
            tracing::debug!("symbol build thread keeps its priority: {err}");
        }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::Threading::{
            GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
        };
        // SAFETY: GetCurrentThread returns a pseudo-handle to the calling thread, valid for
        // the call; SetThreadPriority takes no other pointer.
        if unsafe { SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL) } == 0 {
            tracing::debug!(
                "symbol build thread keeps its priority: {}",
                std::io::Error::last_os_error()
            );
        }
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
    pub fn names_with_prefix(&self, prefix: &str, insensitive: bool, max: usize) -> Vec<String> {
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::search::Control;
    use crate::symbols::find::{SymbolOutcome, SymbolQuery, find_symbols, find_symbols_with};

    /// The per-language fixtures plus two small files, in a temporary root.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/symbols");
        for entry in std::fs::read_dir(src).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("sub/more.rs"),
            "pub fn parse_all() {}\npub fn reparse() {}\nstruct Parser;\nimpl Parser { fn parse(&self) {} }\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.md"), "parse Parser\n").unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    /// A file index and a symbol index over `root`, fed by hand (no watcher), built.
    fn indexes(root: &Path) -> (Arc<FileIndex>, SymbolIndex) {
        let files = Arc::new(FileIndex::new());
        let symbols = SymbolIndex::with_threads(files.clone(), 2);
        let roots = [root.to_path_buf()];
        files.set_roots(&roots);
        Consumer::set_roots(&symbols, &roots);
        feed(
            &files,
            &symbols,
            WatchEvent::Status(root.to_path_buf(), RootStatus::Watching),
        );
        assert!(
            symbols.wait_ready(root, Duration::from_secs(30)),
            "never built"
        );
        (files, symbols)
    }

    /// What the live layer does: the file index first, then the symbol index.
    fn feed(files: &FileIndex, symbols: &SymbolIndex, event: WatchEvent) {
        files.apply(&event);
        symbols.apply(&event);
    }

    fn ask(
        text: &str,
        root: &Path,
        symbols: Option<&SymbolIndex>,
        files: &FileIndex,
    ) -> SymbolOutcome {
        let query = SymbolQuery {
            query: text.to_string(),
            limit: 500,
            threads: 2,
            ..SymbolQuery::default()
        };
        let never = AtomicUsize::new(0);
        find_symbols_with(
            &query,
            &[root.to_path_buf()],
            Some(files),
            symbols,
            &Control::new(),
            &never,
        )
        .unwrap()
    }

    fn listing(outcome: &SymbolOutcome) -> Vec<String> {
        outcome
            .entries
            .iter()
            .map(|(tier, l)| {
                format!(
                    "{} {} {} {}:{}-{} {:?} {}",
                    tier.name(),
                    l.def.kind,
                    l.def.qualified(),
                    l.path.display(),
                    l.def.line,
                    l.def.end_line,
                    l.def.signature,
                    l.def.depth
                )
            })
            .collect()
    }

    const QUERIES: &[&str] = &[
        "parse",
        "Parser",
        "Parser::parse",
        "get",
        "main",
        "p",
        "new",
        "rse",
        "prs",
        "nothing_here",
        "Sample",
        "greet",
        "area",
        "Shape",
    ];

    /// Indexed and on-demand answers agree, query by query, and the indexed ones came
    /// from memory.
    fn assert_equivalent(root: &Path, files: &FileIndex, symbols: &SymbolIndex) {
        for q in QUERIES {
            let indexed = ask(q, root, Some(symbols), files);
            let on_demand = ask(q, root, None, files);
            assert!(
                indexed.stats.indexed_files.is_some(),
                "{q}: not from the index"
            );
            assert_eq!(on_demand.stats.indexed_files, None);
            assert_eq!(listing(&indexed), listing(&on_demand), "query {q:?}");
            assert_eq!(indexed.total, on_demand.total, "query {q:?}");
            assert_eq!(indexed.fuzzy, on_demand.fuzzy, "query {q:?}");
        }
    }

    #[test]
    fn the_index_answers_like_the_on_demand_path() {
        let (_dir, root) = tree();
        let (files, symbols) = indexes(&root);
        let status = symbols.status();
        assert_eq!(status[0].state, SymbolState::Ready);
        assert!(status[0].definitions > 20, "{status:?}");
        assert_eq!(
            status[0].files, 10,
            "nine fixtures and sub/more.rs: {status:?}"
        );
        // Something real is found, so the comparison is not between two empty answers.
        let parse = ask("parse", &root, Some(&symbols), &files);
        assert!(parse.total >= 3, "{:?}", listing(&parse));
        assert_eq!(parse.stats.parsed, 0, "all from memory");
        assert_equivalent(&root, &files, &symbols);
    }

    /// A file's definitions from memory equal a parse of it (but for the signatures,
    /// which memory does not hold); once the file changes, memory no longer vouches.
    #[test]
    fn a_files_definitions_come_from_memory_only_while_current() {
        let (_dir, root) = tree();
        let (files, symbols) = indexes(&root);
        let more = root.join("sub/more.rs");
        let from_memory = symbols
            .snapshot(&root)
            .unwrap()
            .file_definitions(&more)
            .expect("held and current");
        let (_, mut parsed) = crate::symbols::definitions_in(&more).unwrap();
        for def in &mut parsed {
            def.signature.clear();
        }
        assert_eq!(from_memory, parsed);
        assert!(from_memory.iter().any(|d| d.name == "parse_all"));
        // Rewritten and not yet reported (no barrier here, as on macOS and Windows, where
        // the event may come a moment later): the disk says memory is stale, at once.
        std::fs::write(&more, "pub fn parse_every_one_of_them() {}\n").unwrap();
        let unreported = symbols
            .snapshot(&root)
            .expect("fresh by the events applied");
        assert!(!files.proves_freshness());
        assert_eq!(unreported.file_definitions(&more), None);
        // A lookup of a name memory holds for it parses it again (and finds the new
        // definitions instead; a name only the new text defines is found once reported).
        let mut found = Vec::new();
        let stats = unreported.visit(
            std::slice::from_ref(&more),
            Lookup::Exact {
                key: "parse_all",
                insensitive: false,
            },
            &mut |_, _, def| found.push(def.name),
        );
        assert_eq!(found, ["parse_every_one_of_them"]);
        assert_eq!(stats.parsed, 1);
        // Reported: dirty until the worker re-parsed it, then the new definitions.
        feed(&files, &symbols, WatchEvent::Changed(more.clone()));
        let now = symbols
            .snapshot(&root)
            .and_then(|s| s.file_definitions(&more));
        assert!(
            now.is_none() || now.as_ref().unwrap()[0].name == "parse_every_one_of_them",
            "{now:?}"
        );
    }

    /// After a change, a create and a remove, the answers are right at once (the
    /// changed files are parsed on demand) and after the worker applied them.
    #[test]
    fn updates_follow_changes_creates_and_removes() {
        let (_dir, root) = tree();
        let (files, symbols) = indexes(&root);
        let more = root.join("sub/more.rs");
        std::fs::write(&more, "pub fn parse_every() {}\npub fn fresh_one() {}\n").unwrap();
        feed(&files, &symbols, WatchEvent::Changed(more.clone()));
        // Right away: either still dirty (parsed by the query) or already re-parsed.
        let now = ask("fresh_one", &root, Some(&symbols), &files);
        assert_eq!(now.total, 1, "{:?}", listing(&now));
        assert!(now.stats.indexed_files.is_some());
        assert_eq!(ask("parse_all", &root, Some(&symbols), &files).total, 0);
        // Settled: answered from memory (the overlay), no parsing.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while symbols.status()[0].updates == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(symbols.status()[0].updates, 1);
        let later = ask("fresh_one", &root, Some(&symbols), &files);
        assert_eq!((later.total, later.stats.parsed), (1, 0));
        assert_equivalent(&root, &files, &symbols);

        // A new file and a removed one: the file index applies them after its delay;
        // the answers stay right meanwhile (on demand) and from memory afterwards.
        let created = root.join("sub/created.go");
        std::fs::write(&created, "package x\n\nfunc CreatedHere() {}\n").unwrap();
        feed(&files, &symbols, WatchEvent::Created(created.clone()));
        std::fs::remove_file(root.join("sample.py")).unwrap();
        feed(
            &files,
            &symbols,
            WatchEvent::Removed(root.join("sample.py")),
        );
        assert_eq!(ask("CreatedHere", &root, Some(&symbols), &files).total, 1);
        assert!(symbols.wait_ready(&root, Duration::from_secs(10)));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = ask("CreatedHere", &root, Some(&symbols), &files);
            if got.stats.indexed_files.is_some() && got.stats.parsed == 0 {
                assert_eq!(got.total, 1);
                break;
            }
            assert!(std::time::Instant::now() < deadline, "never from memory");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_equivalent(&root, &files, &symbols);
        let python: Vec<String> = listing(&ask("greet", &root, Some(&symbols), &files))
            .into_iter()
            .filter(|l| l.contains("sample.py"))
            .collect();
        assert!(python.is_empty(), "{python:?}");
    }

    /// A file whose size or mtime differs from what was parsed is never answered from
    /// memory, even when the symbol index has not heard of the change (here only the file
    /// index was told, as in the instant between the two consumers).
    #[test]
    fn a_stale_entry_is_parsed_on_demand() {
        let (_dir, root) = tree();
        let (files, symbols) = indexes(&root);
        let more = root.join("sub/more.rs");
        std::fs::write(&more, "pub fn parse_all_renamed() {}\n").unwrap();
        files.apply(&WatchEvent::Changed(more.clone()));
        let got = ask("parse_all", &root, Some(&symbols), &files);
        assert!(got.stats.indexed_files.is_some());
        assert_eq!(got.stats.parsed, 1, "the changed file was parsed");
        let names: Vec<&str> = got
            .entries
            .iter()
            .map(|(_, l)| l.def.name.as_str())
            .collect();
        assert_eq!(names, ["parse_all_renamed"]);
        assert_eq!(ask("reparse", &root, Some(&symbols), &files).total, 0);
    }

    /// Without a fresh file index (a root not watched) the index does not answer: the
    /// caller parses on demand.
    #[test]
    fn an_unwatched_root_is_answered_on_demand() {
        let (_dir, root) = tree();
        let (files, symbols) = indexes(&root);
        feed(
            &files,
            &symbols,
            WatchEvent::Status(root.clone(), RootStatus::Failed("test".into())),
        );
        assert!(symbols.snapshot(&root).is_none());
        let got = ask("parse", &root, Some(&symbols), &files);
        assert_eq!(got.stats.indexed_files, None);
        assert!(got.total >= 3);
        let plain = find_symbols(
            &SymbolQuery {
                query: "parse".into(),
                limit: 500,
                threads: 1,
                ..SymbolQuery::default()
            },
            std::slice::from_ref(&root),
            None,
            &Control::new(),
            &AtomicUsize::new(0),
        )
        .unwrap();
        assert_eq!(listing(&got), listing(&plain));
    }

    /// Build threads run at a lower priority (Linux: nice 10 for that thread only).
    #[cfg(target_os = "linux")]
    #[test]
    fn build_threads_lower_their_priority() {
        let (before, after) = std::thread::spawn(|| {
            let tid = rustix::thread::gettid();
            let before = rustix::process::getpriority_process(Some(tid)).unwrap();
            lower_priority();
            (
                before,
                rustix::process::getpriority_process(Some(tid)).unwrap(),
            )
        })
        .join()
        .unwrap();
        assert!(
            after >= 10 && after > before || before >= 10,
            "{before} -> {after}"
        );
        let here = rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap();
        assert_eq!(here, before, "only the build thread changed");
    }

    /// The layout: small fixed records, containers stored once, the two sorted tables
    /// answering exact and prefix lookups (case-sensitive and not), and what goes in
    /// comes back out.
    #[test]
    fn the_table_is_compact_and_round_trips() {
        // 36 bytes a definition: 29 MiB for nuttx's 840,000 (black_box: a
        // runtime check, so a layout change fails this test rather than the build).
        let record = std::hint::black_box(Table::RECORD_BYTES);
        assert!(record <= 36, "{record}");
        let def = |name: &str, line: u64| Definition {
            name: name.to_string(),
            kind: "method",
            line,
            end_line: line + 2,
            name_line: line,
            signature: format!("fn {name}(&self)"),
            container: Some("ContainerType".into()),
            depth: 1,
        };
        let files = vec![
            (
                PathBuf::from("b.rs"),
                FileSyms {
                    lang: Lang::Rust,
                    size: 10,
                    mtime: 5,
                    defs: vec![def("Parse", 1), def("parse_all", 5)],
                },
            ),
            (
                PathBuf::from("a/x.rs"),
                FileSyms {
                    lang: Lang::Rust,
                    size: 3,
                    mtime: 7,
                    defs: vec![def("parser", 1), def("other", 9)],
                },
            ),
        ];
        let table = pack_files(&files);
        assert_eq!(table.len(), 4);
        let stored = table
            .arena
            .windows(b"ContainerType".len())
            .filter(|w| *w == b"ContainerType")
            .count();
        assert_eq!(stored, 1, "containers are interned");
        let count = |text: &[u8]| {
            table
                .arena
                .windows(text.len())
                .filter(|w| *w == text)
                .count()
        };
        assert_eq!(count(b"parse_all"), 1, "a name is stored once");
        assert_eq!(count(b"fn "), 0, "signatures are not stored");
        assert!(
            table.recs.iter().all(|r| r.lower == NONE),
            "ASCII names are folded on the fly, not stored lowercase"
        );
        let names = |ids: &[u32]| ids.iter().map(|r| table.name(*r)).collect::<Vec<_>>();
        assert_eq!(names(table.lookup("parse", true, false)), ["Parse"]);
        assert!(names(table.lookup("parse", false, false)).is_empty());
        assert_eq!(
            names(table.lookup("pars", true, true)),
            ["Parse", "parse_all", "parser"]
        );
        assert_eq!(
            names(table.lookup("pars", false, true)),
            ["parse_all", "parser"]
        );
        assert_eq!(
            table.names_with_prefix("p", true, 10),
            ["Parse", "parse_all", "parser"]
        );
        // A non-ASCII name keeps its `to_lowercase` form (stored once).
        let umlaut = pack_files(&[(
            PathBuf::from("u.rs"),
            FileSyms {
                lang: Lang::Rust,
                size: 1,
                mtime: 1,
                defs: vec![def("Ärger", 1), def("ärgern", 3), def("Zed", 5)],
            },
        )]);
        let names_u = |ids: &[u32]| ids.iter().map(|r| umlaut.name(*r)).collect::<Vec<_>>();
        assert_eq!(
            names_u(umlaut.lookup("är", true, true)),
            ["Ärger", "ärgern"]
        );
        assert_eq!(names_u(umlaut.lookup("ärger", true, false)), ["Ärger"]);
        assert_eq!(names_u(umlaut.lookup("Är", false, true)), ["Ärger"]);
        assert_eq!(names_u(umlaut.lookup("zed", true, false)), ["Zed"]);
        let mut back = table.unpack();
        back.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(back[0].0, PathBuf::from("a/x.rs"));
        let unsigned = |defs: &[Definition]| {
            defs.iter()
                .map(|d| Definition {
                    signature: String::new(),
                    ..d.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(back[0].1.defs, unsigned(&files[1].1.defs));
        assert_eq!(back[1].1.defs, unsigned(&files[0].1.defs));
        assert_eq!((back[1].1.size, back[1].1.mtime), (10, 5));
        assert!(table.has_under(b"a") && !table.has_under(b"b"));
        assert!(table.heap_bytes() > 0);
    }
}

#[cfg(all(test, unix))]
mod sync_tests {
    use super::*;
    use crate::search::Control;
    use crate::symbols::find::{SymbolQuery, find_symbols_with};

    fn ask(text: &str, root: &Path, symbols: &SymbolIndex, files: &FileIndex) -> (usize, bool) {
        let query = SymbolQuery {
            query: text.to_string(),
            exact: true,
            limit: 50,
            threads: 1,
            ..SymbolQuery::default()
        };
        let got = find_symbols_with(
            &query,
            &[root.to_path_buf()],
            Some(files),
            Some(symbols),
            &Control::new(),
            &AtomicUsize::new(0),
        )
        .unwrap();
        (
            got.total,
            got.stats.indexed_files.is_some() && got.stats.parsed == 0,
        )
    }

    /// A directory appearing or vanishing with its files is beyond the overlay: the root
    /// re-syncs with the file list (answers stay right meanwhile, on demand), and the
    /// unchanged files are carried over, not parsed again.
    #[test]
    fn directory_changes_resync_and_keep_what_did_not_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("old")).unwrap();
        std::fs::write(root.join("old/a.rs"), "fn in_old_dir() {}\n").unwrap();
        std::fs::write(root.join("keep.py"), "def kept():\n    pass\n").unwrap();
        let files = Arc::new(FileIndex::new());
        let symbols = SymbolIndex::with_threads(files.clone(), 1);
        let roots = [root.clone()];
        files.set_roots(&roots);
        Consumer::set_roots(&symbols, &roots);
        let feed = |event: WatchEvent| {
            files.apply(&event);
            symbols.apply(&event);
        };
        feed(WatchEvent::Status(root.clone(), RootStatus::Watching));
        assert!(symbols.wait_ready(&root, Duration::from_secs(30)));
        let first = symbols.shared.lock().slots[0].table.clone().unwrap();

        std::fs::create_dir(root.join("new")).unwrap();
        std::fs::write(root.join("new/b.rs"), "fn in_new_dir() {}\n").unwrap();
        feed(WatchEvent::Created(root.join("new")));
        std::fs::remove_dir_all(root.join("old")).unwrap();
        feed(WatchEvent::Removed(root.join("old")));
        // Right at once (on demand: the file index walks meanwhile).
        assert_eq!(ask("in_old_dir", &root, &symbols, &files).0, 0);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let (total, from_memory) = ask("in_new_dir", &root, &symbols, &files);
            if from_memory {
                assert_eq!(total, 1);
                break;
            }
            assert!(std::time::Instant::now() < deadline, "never synced");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(ask("in_old_dir", &root, &symbols, &files), (0, true));
        assert_eq!(ask("kept", &root, &symbols, &files), (1, true));
        let now = symbols.shared.lock().slots[0].table.clone().unwrap();
        assert!(!Arc::ptr_eq(&first, &now), "a new table");
        // keep.py was carried over: the sync parsed only new/b.rs.
        assert_eq!(
            symbols.shared.lock().slots[0].total.load(Ordering::Relaxed),
            1
        );
    }
}
