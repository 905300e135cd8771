//! The on-disk store of the indexes (PRODUCT §15): under the user's cache directory, one
//! entry per canonical root, so a restarted server (or a second one on the same root)
//! starts from what was built before instead of parsing every file again.
//!
//! Layout: `<cache>/rootgrep/roots/<hash of the root's path>/` (0700) holds `root` (the
//! root's path and identity: a different directory at the same path throws the entry
//! away), `symbols` (the symbol table), `search` (the ranked search index's base),
//! `content` (the content index), `history` (the git history `search` reads), `files`
//! (the file list, each directory with its stamp, so a restart lists again only what
//! changed), `writer.lock` ([`lock`]: one writer per root) and `used` (touched when a server opens
//! the entry: the least recently used entries are evicted first when the store is over
//! `--cache-max-mb`). Every file is written atomically and checksummed ([`format`]); a
//! damaged or foreign file is deleted and rebuilt, never served, and one cut short while
//! mapped is caught as damage ([`faults`]). A checksum is read again only for a file
//! that is not the one whose checksum held last (`<kind>.checked`: [`checked`]). Its directories are made and read only as
//! [`dirs`] allows (never through a link, never another user's).
//!
//! What is stored is never trusted for freshness: each index compares every stored file's
//! size, mtime and identity with the file system before it answers from it. The store
//! only saves parsing.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::platform::os::{MetadataExt, OsStrExt, OsStringExt};

mod checked;
mod dirs;
pub mod faults;
mod format;
mod lock;
pub(crate) mod mapped;
pub(crate) mod publish;
pub(crate) mod scratch;

pub(crate) use format::{Kind, Reader, Refused, put_blob, put_var, section_header, var, var_len};
pub(crate) use lock::{Writer, WriterLock};

/// What an entry stores besides its description.
const DATA_KINDS: [Kind; 5] = [
    Kind::Files,
    Kind::Symbols,
    Kind::Search,
    Kind::Content,
    Kind::History,
];

/// How much of the roots no server serves the store keeps by default (`--cache-max-mb`
/// unset); the live roots' own indexes are kept whatever their size.
pub const DEFAULT_MAX_MB: u64 = 512;

/// How often a long symbol build stores the table it has so far (a server stopped
/// halfway then continues from it), looked at every [`CHECKPOINT_FILES`] files parsed.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(120);
const CHECKPOINT_FILES: usize = 4096;

/// How much memory one part of an index build holds by default before it is spilled to
/// the root's entry (`--build-memory-mb`): a monorepo's build peak is about twice this,
/// whatever its size.
pub const DEFAULT_BUILD_MEMORY_MB: u64 = 64;

/// The store's settings and place (no I/O until an entry is opened).
#[derive(Clone, Debug)]
pub struct Store {
    /// `<cache>/rootgrep`.
    dir: PathBuf,
    max_bytes: u64,
    /// `--cache-max-mb` was given: an index larger than it is not stored. Without it the
    /// limit applies to what eviction can remove (entries no live server writes), so one
    /// monorepo's index is stored whatever its size.
    strict: bool,
    /// Testing only: each write pauses this long halfway through its temp file.
    write_pause: Option<std::time::Duration>,
    /// Heap one part of a build may hold before it is spilled ([`scratch`]).
    part_bytes: usize,
    /// How often a long build stores what it has so far, and after how many files it
    /// looks ([`publish::Stores::checkpoint`]).
    checkpoint: (std::time::Duration, usize),
    /// The writer locks this server holds (shared by every index and clone).
    held: lock::Held,
}

/// The user's cache directory for this OS, from the environment the server started with:
/// `$XDG_CACHE_HOME` (when absolute) or `~/.cache` on Linux and other Unixes,
/// `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows.
pub fn default_cache_dir(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |v: OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if cfg!(windows) {
        return env("LOCALAPPDATA").and_then(absolute);
    }
    let home = env("HOME").and_then(absolute);
    if cfg!(target_os = "macos") {
        return home.map(|h| h.join("Library").join("Caches"));
    }
    env("XDG_CACHE_HOME")
        .and_then(absolute)
        .or_else(|| home.map(|h| h.join(".cache")))
}

/// One root's entry, opened by a server.
#[derive(Debug)]
pub(crate) struct Entry {
    dir: PathBuf,
    root: PathBuf,
    write_pause: Option<std::time::Duration>,
    held: lock::Held,
}

/// What `rootgrep cache` shows of one entry.
#[derive(Debug)]
pub struct EntryInfo {
    pub dir: PathBuf,
    /// The root it describes (`None`: no readable description; such an entry is junk).
    pub root: Option<PathBuf>,
    pub bytes: u64,
    pub used: Option<SystemTime>,
    /// The pid of the live server writing it, if any.
    pub writer: Option<u32>,
    /// The root it describes is no longer there (or another directory is at its path):
    /// no server will use this entry again.
    pub gone: bool,
}

/// What [`Store::clear`] did.
#[derive(Debug, Default)]
pub struct Cleared {
    pub removed: Vec<EntryInfo>,
    /// Entries a live server is writing: left as they are.
    pub busy: Vec<EntryInfo>,
    /// Entries holding files the store never writes: its own files removed, the directory
    /// and the rest left.
    pub foreign: Vec<EntryInfo>,
}

impl Store {
    /// The store under `cache_dir` (the user's cache directory or `--cache-dir`).
    pub fn new(cache_dir: &Path, max_mb: Option<u64>) -> Store {
        Store {
            dir: cache_dir.join("rootgrep"),
            max_bytes: max_mb.unwrap_or(DEFAULT_MAX_MB).saturating_mul(1024 * 1024),
            strict: max_mb.is_some(),
            write_pause: None,
            part_bytes: (DEFAULT_BUILD_MEMORY_MB << 20) as usize,
            checkpoint: (CHECKPOINT_EVERY, CHECKPOINT_FILES),
            held: lock::Held::default(),
        }
    }

    /// Testing only: every write stops halfway through its temp file for `pause` (so a
    /// test can kill the writer mid-write).
    pub fn with_write_pause(self, pause: std::time::Duration) -> Store {
        Store {
            write_pause: Some(pause),
            ..self
        }
    }

    /// Testing only: a build stores what it has every `files` files.
    pub fn with_checkpoint_files(self, files: usize) -> Store {
        Store {
            checkpoint: (std::time::Duration::ZERO, files.max(1)),
            ..self
        }
    }

    /// Builds spill their parts past `mb` megabytes (`--build-memory-mb`; 0 is taken as
    /// the least, one file a part).
    pub fn with_build_memory(self, mb: u64) -> Store {
        Store {
            part_bytes: usize::try_from(mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX),
            ..self
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The most one index may take to be stored: the limit when it was given, else any
    /// size (the limit then only bounds what eviction removes).
    pub(crate) fn max_index_bytes(&self) -> u64 {
        match self.strict {
            true => self.max_bytes,
            false => u64::MAX,
        }
    }

    fn roots_dir(&self) -> PathBuf {
        self.dir.join("roots")
    }

    fn entry_dir(&self, root: &Path) -> PathBuf {
        let hash = format::checksum(root.as_os_str().as_bytes());
        self.roots_dir().join(format!("{hash:016x}"))
    }

    /// Whether something of `kind` is stored for `root` (one `stat`; not checked).
    pub(crate) fn has(&self, root: &Path, kind: Kind) -> bool {
        file_in(&self.entry_dir(root), kind).is_file()
    }

    /// Opens (creating it, 0700) the entry of the canonical `root`, and marks it used.
    pub(crate) fn open(&self, root: &Path) -> io::Result<Entry> {
        let dir = self.entry_dir(root);
        let hash = dir.file_name().unwrap_or_default().to_string_lossy();
        let cache = self.dir.parent().unwrap_or(Path::new("."));
        dirs::create_private(cache, &["rootgrep", "roots", &hash])?;
        let entry = Entry {
            dir,
            root: root.to_path_buf(),
            write_pause: self.write_pause,
            held: self.held.clone(),
        };
        let _ = format::create_private(&entry.dir.join("used"));
        Ok(entry)
    }

    /// Every entry, most recently used first. Only the store's own directories are read
    /// (see [`dirs`]): a `rootgrep/` or `roots/` that is a symlink, another user's or open
    /// to others is an error, and a directory in `roots/` that is not an entry's is left out.
    pub fn list(&self) -> io::Result<Vec<EntryInfo>> {
        let roots = self.roots_dir();
        for dir in [&self.dir, &roots] {
            match dirs::check_private(dir, false) {
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
                other => other?,
            }
        }
        let mut out: Vec<EntryInfo> = std::fs::read_dir(&roots)?
            .flatten()
            .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|d| dirs::is_entry_name(&d.file_name().to_string_lossy()))
            .filter(|d| dirs::check_private(&d.path(), false).is_ok())
            .map(|d| info(&d.path()))
            .collect();
        out.sort_by_key(|e| std::cmp::Reverse(e.used));
        Ok(out)
    }

    /// Removes the entries of `roots` (all entries when empty; only those whose root is
    /// gone when `gone_only`) that no live server is writing.
    pub fn clear(&self, roots: &[PathBuf], gone_only: bool) -> io::Result<Cleared> {
        let mut cleared = Cleared::default();
        for info in self.list()? {
            let wanted = roots.is_empty()
                || info
                    .root
                    .as_ref()
                    .is_some_and(|r| roots.iter().any(|want| want == r));
            if !wanted || (gone_only && !info.gone) {
                continue;
            }
            if info.writer.is_some() {
                cleared.busy.push(info);
            } else {
                match dirs::remove_entry(&info.dir) {
                    Ok(true) => cleared.removed.push(info),
                    Ok(false) => cleared.foreign.push(info),
                    Err(_) => {}
                }
            }
        }
        Ok(cleared)
    }

    /// Evicts the least recently used entries (never `keep`, never one a live server
    /// writes) until the store holds at most its maximum: all entries counted when the
    /// limit was given, else only those eviction may remove (the served roots' indexes are
    /// kept whatever their size), within the default plus the largest of them — room for
    /// one monorepo's entry beside the small ones, so working on another root for a while
    /// does not throw away an index that took many minutes to build.
    pub(crate) fn evict(&self, keep: &Entry) {
        let Ok(mut entries) = self.list() else {
            return;
        };
        let counted = |e: &EntryInfo| self.strict || (e.dir != keep.dir && e.writer.is_none());
        let mut total: u64 = entries.iter().filter(|e| counted(e)).map(|e| e.bytes).sum();
        let largest = entries.iter().filter(|e| counted(e)).map(|e| e.bytes).max();
        let limit = match self.strict {
            true => self.max_bytes,
            false => self.max_bytes.saturating_add(largest.unwrap_or(0)),
        };
        while total > limit {
            let Some(oldest) = entries.pop() else { break };
            if oldest.dir == keep.dir || oldest.writer.is_some() {
                continue;
            }
            if dirs::remove_entry(&oldest.dir).is_ok() {
                tracing::info!(
                    "store over {} MiB: evicted {}",
                    self.max_bytes / (1024 * 1024),
                    oldest.root.as_deref().unwrap_or(&oldest.dir).display()
                );
                total = total.saturating_sub(oldest.bytes);
            }
        }
    }
}

/// Where the entry at `dir` keeps its file of `kind`.
fn file_in(dir: &Path, kind: Kind) -> PathBuf {
    dir.join(kind.file_name())
}

/// The root the entry at `dir` describes, if its description is intact.
fn described_at(dir: &Path) -> Option<RootId> {
    RootId::decode(&format::read(&file_in(dir, Kind::Root), Kind::Root).ok()?)
}

fn info(dir: &Path) -> EntryInfo {
    let described = described_at(dir);
    let bytes = std::fs::read_dir(dir)
        .map(|files| {
            files
                .flatten()
                .filter_map(|f| f.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    let lock = dir.join("writer.lock");
    let gone = described
        .as_ref()
        .is_some_and(|d| RootId::of(&d.path).ok().as_ref() != Some(d));
    EntryInfo {
        dir: dir.to_path_buf(),
        root: described.map(|d| d.path),
        bytes,
        used: std::fs::symlink_metadata(dir.join("used"))
            .and_then(|m| m.modified())
            .ok(),
        writer: lock::is_held(&lock).then(|| lock::holder(&lock).unwrap_or(0)),
        gone,
    }
}

/// A root's path and identity (device and inode on Unix; zero where unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RootId {
    pub(crate) path: PathBuf,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
}

impl RootId {
    pub(crate) fn of(root: &Path) -> io::Result<RootId> {
        let meta = std::fs::metadata(root)?;
        Ok(RootId {
            path: root.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    fn encode(&self) -> Vec<u8> {
        let mut w = format::Writer::default();
        w.blob(self.path.as_os_str().as_bytes());
        w.u64(self.dev);
        w.u64(self.ino);
        w.bytes
    }

    fn decode(payload: &[u8]) -> Option<RootId> {
        let mut r = format::Reader::new(payload);
        let path = PathBuf::from(OsString::from_vec(r.blob().ok()?.to_vec()));
        let (dev, ino) = (r.u64().ok()?, r.u64().ok()?);
        r.is_done().then_some(RootId { path, dev, ino })
    }
}

impl Entry {
    #[cfg(test)]
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, kind: Kind) -> PathBuf {
        file_in(&self.dir, kind)
    }

    /// Takes the entry's writer lock if no live server holds it. A new writer removes
    /// what a killed one left half-written, and describes the root (a different root at
    /// this path, or another root hashing here, empties the entry first).
    pub(crate) fn try_writer(&self) -> io::Result<Writer> {
        let writer = lock::try_lock(&self.dir.join("writer.lock"), &self.held)?;
        if matches!(writer, Writer::Me(_)) {
            self.remove_temps();
            let id = RootId::of(&self.root)?;
            // The symbol and search indexes of one server both hold its lock: one of them
            // describes the entry, the other then finds it described.
            static DESCRIBING: std::sync::Mutex<()> = std::sync::Mutex::new(());
            let _one = crate::mutex::lock(&DESCRIBING);
            if self.described() != Some(id.clone()) {
                for kind in DATA_KINDS {
                    self.discard(kind);
                }
                format::write(&self.file(Kind::Root), Kind::Root, &id.encode())?;
            }
        }
        Ok(writer)
    }

    fn described(&self) -> Option<RootId> {
        described_at(&self.dir)
    }

    /// The stored payload of `kind`, if it was written for this very root (same path and
    /// identity) and is intact; a damaged or foreign file is deleted (by whoever finds it:
    /// it is never served) and the reason returned.
    pub(crate) fn load(&self, kind: Kind) -> Result<mapped::Bytes, Refused> {
        match (self.described(), RootId::of(&self.root)) {
            (Some(stored), Ok(now)) if stored == now => {}
            (Some(_), Ok(_)) => {
                return Err(Refused::Invalid("the root was replaced since".into()));
            }
            _ => return Err(Refused::Missing),
        }
        let loaded = mapped::load_once_checked(&self.file(kind), kind);
        if let Err(why) = &loaded
            && *why != Refused::Missing
        {
            self.discard(kind);
        }
        loaded
    }

    /// Size and mtime of the stored file of `kind` (a reader notices a new publication).
    pub(crate) fn stamp(&self, kind: Kind) -> Option<(u64, SystemTime)> {
        let meta = std::fs::metadata(self.file(kind)).ok()?;
        Some((meta.len(), meta.modified().ok()?))
    }

    /// Stores `payload` as `kind` atomically (callers hold the writer lock).
    pub(crate) fn save(&self, kind: Kind, payload: &[u8]) -> io::Result<()> {
        format::write_paused(&self.file(kind), kind, payload, self.write_pause)
    }

    pub(crate) fn discard(&self, kind: Kind) {
        let _ = std::fs::remove_file(self.file(kind));
        let _ = std::fs::remove_file(checked::memo_path(&self.file(kind)));
    }

    fn remove_temps(&self) {
        let Ok(files) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for file in files.flatten() {
            let name = file.file_name();
            let name = name.to_string_lossy();
            // This process's own temps may be being written by its other index.
            let mine = format!(".{}.", std::process::id());
            if name.starts_with('.') && name.ends_with(".tmp") && !name.contains(&mine) {
                let _ = std::fs::remove_file(file.path());
            }
        }
    }
}

#[cfg(test)]
mod tests;
