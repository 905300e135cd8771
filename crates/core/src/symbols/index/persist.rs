//! How the symbol index uses the store (`crate::store`): the worker thread keeps, per root,
//! the root's entry and whether this server is its writer.
//!
//! - A root's first sync starts from the stored table: the sync compares every stored
//!   file's size, mtime and identity with the fresh file list and re-parses only what differs, so
//!   nothing stored is served before it is checked (and the table is reused whole when
//!   nothing differs).
//! - Only the writer (the server holding the entry's lock) saves, after every full pack
//!   that changed the table. A reader that would have to parse much (no table stored yet,
//!   or a stale one) waits for the writer's publication instead ([`WRITER_WAIT_MIN`]), and
//!   takes the lock over when the writer goes away; a newer publication is loaded at the
//!   reader's next sync.
//! - Anything wrong with the store (no cache directory, read-only, full, damaged) only
//!   costs the saving: the index builds in memory and `list_roots` says why.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::stored::{decode, encode};
use super::table::Table;
use crate::store::{Entry, Kind, Refused, Store, Writer, WriterLock};

/// A reader with more files than this to parse waits for the writer to publish.
pub(super) const WRITER_WAIT_MIN: usize = 256;
/// How often a waiting reader looks for the writer's publication.
pub(super) const WRITER_POLL: Duration = Duration::from_secs(1);
/// How long a reader waits for a live writer at most before it builds itself.
const WRITER_WAIT_MAX: Duration = Duration::from_secs(600);

/// One root's place in the store, as the worker sees it.
struct RootStore {
    entry: Option<Entry>,
    writer: Option<WriterLock>,
    /// The stored file as last loaded or saved (size, mtime): a different one is newer.
    seen: Option<(u64, SystemTime)>,
    waiting_since: Option<Instant>,
    /// The table held came from the store (said until a save replaces it).
    loaded: bool,
    note: String,
}

/// Every root's [`RootStore`], owned by the worker thread.
pub(super) struct Stores {
    store: Option<Arc<Store>>,
    roots: HashMap<PathBuf, RootStore>,
}

impl Stores {
    pub(super) fn new(store: Option<Arc<Store>>) -> Stores {
        Stores {
            store,
            roots: HashMap::new(),
        }
    }

    /// Forgets roots no longer `set` (releasing their writer locks).
    pub(super) fn retain(&mut self, set: impl Fn(&Path) -> bool) {
        self.roots.retain(|root, _| set(root));
    }

    fn get(&mut self, root: &Path) -> Option<&mut RootStore> {
        let store = self.store.as_ref()?;
        Some(
            self.roots
                .entry(root.to_path_buf())
                .or_insert_with(|| RootStore::open(store, root)),
        )
    }

    /// What `list_roots` says of the root's store.
    pub(super) fn note(&self, root: &Path) -> Option<String> {
        self.roots.get(root).map(|r| r.note.clone())
    }

    /// The stored table, when it is worth loading: nothing held yet, or (a reader) the
    /// writer published since. `None` also when it is missing or refused (a damaged file
    /// is deleted by `Entry::load`).
    pub(super) fn newer_table(&mut self, root: &Path, held: bool) -> Option<Arc<Table>> {
        let rs = self.get(root)?;
        let entry = rs.entry.as_ref()?;
        let stamp = entry.stamp(Kind::Symbols);
        if held && (rs.writer.is_some() || stamp.is_none() || stamp == rs.seen) {
            return None;
        }
        let started = Instant::now();
        match entry.load(Kind::Symbols).and_then(|bytes| decode(&bytes)) {
            Ok(table) => {
                rs.seen = stamp;
                tracing::info!(
                    "{}: {} stored definitions loaded in {:?}",
                    root.display(),
                    table.len(),
                    started.elapsed()
                );
                rs.note = "loaded from the store".into();
                rs.loaded = true;
                Some(Arc::new(table))
            }
            Err(Refused::Missing) => None,
            Err(why) => {
                tracing::warn!(
                    "{}: stored symbols not used ({why}); rebuilding",
                    root.display()
                );
                rs.note = format!("stored table refused ({why}), rebuilt");
                None
            }
        }
    }

    /// Whether this server should wait for another one's publication instead of parsing
    /// `todo` files itself (it takes the writer lock over when the other one is gone).
    pub(super) fn wait_for_writer(&mut self, root: &Path, todo: usize) -> bool {
        let Some(rs) = self.get(root) else {
            return false;
        };
        if todo <= WRITER_WAIT_MIN || !rs.other_writer() {
            rs.waiting_since = None;
            return false;
        }
        let since = *rs.waiting_since.get_or_insert_with(Instant::now);
        since.elapsed() < WRITER_WAIT_MAX
    }

    /// Saves `table` (packed with `parsed` files parsed) when this server writes the
    /// root's entry.
    pub(super) fn save(&mut self, root: &Path, table: &Table, parsed: usize) {
        let store = self.store.clone();
        let Some(rs) = self.get(root) else { return };
        if rs.writer.is_none() && rs.other_writer() {
            return;
        }
        let (Some(entry), Some(store)) = (rs.entry.as_ref(), store) else {
            return;
        };
        let started = Instant::now();
        let bytes = encode(table);
        if bytes.len() as u64 > store.max_bytes() {
            rs.note = format!(
                "not stored: {} is over the store's limit",
                size_text(bytes.len())
            );
            entry.discard(Kind::Symbols);
            return;
        }
        match entry.save(Kind::Symbols, &bytes) {
            Ok(()) => {
                rs.seen = entry.stamp(Kind::Symbols);
                let size = size_text(bytes.len());
                rs.note = match std::mem::take(&mut rs.loaded) {
                    true => format!(
                        "loaded from the store, {parsed} changed files parsed, stored again ({size})"
                    ),
                    false => format!("stored, {size}"),
                };
                tracing::info!(
                    "{}: symbol table stored ({} bytes) in {:?}",
                    root.display(),
                    bytes.len(),
                    started.elapsed()
                );
                store.evict(entry);
            }
            Err(err) => {
                tracing::warn!("{}: symbol table not stored: {err}", root.display());
                rs.note = format!("not stored: {err}");
            }
        }
    }
}

/// `bytes` for a person: KiB below a MiB, else MiB (rounded up).
fn size_text(bytes: usize) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    } else {
        format!("{} MiB", bytes.div_ceil(1 << 20))
    }
}

impl RootStore {
    fn open(store: &Store, root: &Path) -> RootStore {
        let mut rs = RootStore {
            entry: None,
            writer: None,
            seen: None,
            waiting_since: None,
            loaded: false,
            note: String::new(),
        };
        match store.open(root) {
            Ok(entry) => rs.entry = Some(entry),
            Err(err) => {
                tracing::warn!(
                    "{}: no store at {} ({err}): the symbol index is kept in memory only",
                    root.display(),
                    store.dir().display()
                );
                rs.note = format!("not stored: {err}");
                return rs;
            }
        }
        rs.other_writer();
        rs
    }

    /// Tries to become the writer; `true` when another live server is.
    fn other_writer(&mut self) -> bool {
        if self.writer.is_some() {
            return false;
        }
        let Some(entry) = &self.entry else {
            return false;
        };
        match entry.try_writer() {
            Ok(Writer::Me(lock)) => {
                self.writer = Some(lock);
                false
            }
            Ok(Writer::Other(pid)) => {
                self.note = match pid {
                    Some(pid) => format!("read from the store (server pid {pid} writes it)"),
                    None => "read from the store (another server writes it)".into(),
                };
                true
            }
            Err(err) => {
                tracing::warn!("store entry not writable: {err}");
                self.note = format!("not stored: {err}");
                false
            }
        }
    }
}
