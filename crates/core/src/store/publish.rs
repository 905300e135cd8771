//! How an index publishes to the store and starts from it: its worker thread keeps, per
//! root, the root's entry and whether this server is its writer ([`Stores`]), for one kind
//! of stored thing ([`Stored`]: the symbol table, the search index).
//!
//! - A root's first build starts from what is stored: the index compares every stored
//!   file's size, mtime and identity with the fresh file list and redoes only what
//!   differs, so nothing stored is served before it is checked.
//! - Only the writer (the server holding the entry's lock) saves, after a full build that
//!   changed the result. A reader that would have much to redo (nothing stored yet, or a
//!   stale copy) waits for the writer's publication instead ([`WRITER_WAIT_MIN`]), and
//!   takes the lock over when the writer goes away; a newer publication is loaded at the
//!   reader's next build.
//! - Anything wrong with the store (no cache directory, read-only, full, damaged) only
//!   costs the saving: the index builds in memory and `list_roots` says why.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::{Entry, Kind, Refused, Store, Writer, WriterLock};

/// Something an index stores: its kind of file, and its bytes both ways.
pub(crate) trait Stored: Sized {
    const KIND: Kind;
    /// What it is, for the log ("symbol table").
    const WHAT: &'static str;
    /// What a reused copy's `redone` count counts ("changed files parsed").
    const REDONE: &'static str;
    /// The bytes to store.
    fn bytes(&self) -> std::borrow::Cow<'_, [u8]>;
    /// What a stored payload holds (used in place where the layout allows).
    fn decode(bytes: super::mapped::Bytes) -> Result<Self, Refused>;
    /// What it holds, for the log ("838,000 definitions").
    fn describe(&self) -> String;
    /// Whether a decoded copy reads its stored file in place (then, once a fresh build is
    /// stored, the index swaps it for the stored copy and gives the heap back).
    const IN_PLACE: bool;
}

/// A reader with more files than this to parse waits for the writer to publish.
pub(crate) const WRITER_WAIT_MIN: usize = 256;
/// How often a waiting reader looks for the writer's publication.
pub(crate) const WRITER_POLL: Duration = Duration::from_secs(1);
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
    /// Why the stored copy was refused, said until a save replaces it.
    refused: Option<String>,
    note: String,
}

/// Every root's [`RootStore`] for one kind of stored thing, owned by an index's worker
/// thread.
pub(crate) struct Stores<T> {
    store: Option<Arc<Store>>,
    roots: HashMap<PathBuf, RootStore>,
    kind: std::marker::PhantomData<fn() -> T>,
}

impl<T: Stored> Stores<T> {
    pub(crate) fn new(store: Option<Arc<Store>>) -> Stores<T> {
        Stores {
            store,
            roots: HashMap::new(),
            kind: std::marker::PhantomData,
        }
    }

    /// Forgets roots no longer `set` (releasing their writer locks).
    pub(crate) fn retain(&mut self, set: impl Fn(&Path) -> bool) {
        self.roots.retain(|root, _| set(root));
    }

    fn get(&mut self, root: &Path) -> Option<&mut RootStore> {
        let store = self.store.as_ref()?;
        Some(
            self.roots
                .entry(root.to_path_buf())
                .or_insert_with(|| RootStore::open(store, root, T::WHAT)),
        )
    }

    /// What `list_roots` says of the root's store.
    pub(crate) fn note(&self, root: &Path) -> Option<String> {
        self.roots.get(root).map(|r| r.note.clone())
    }

    /// The stored copy, when it is worth loading: nothing held yet, or (a reader) the
    /// writer published since. `None` also when it is missing or refused (a damaged file
    /// is deleted by `Entry::load`).
    pub(crate) fn newer(&mut self, root: &Path, held: bool) -> Option<Arc<T>> {
        let rs = self.get(root)?;
        let entry = rs.entry.as_ref()?;
        let stamp = entry.stamp(T::KIND);
        if held && (rs.writer.is_some() || stamp.is_none() || stamp == rs.seen) {
            return None;
        }
        let started = Instant::now();
        match entry.load(T::KIND).and_then(T::decode) {
            Ok(held) => {
                rs.seen = stamp;
                tracing::info!(
                    "{}: stored {} ({}) loaded in {:?}",
                    root.display(),
                    T::WHAT,
                    held.describe(),
                    started.elapsed()
                );
                rs.note = "loaded from the store".into();
                rs.loaded = true;
                Some(Arc::new(held))
            }
            Err(Refused::Missing) => None,
            Err(why) => {
                tracing::warn!(
                    "{}: stored {} not used ({why}); rebuilding",
                    root.display(),
                    T::WHAT
                );
                rs.note = format!("stored copy refused ({why}), rebuilt");
                rs.refused = Some(why.to_string());
                None
            }
        }
    }

    /// Whether this server should wait for another one's publication instead of redoing
    /// `todo` files itself (it takes the writer lock over when the other one is gone).
    pub(crate) fn wait_for_writer(&mut self, root: &Path, todo: usize) -> bool {
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

    /// The copy this server just stored, read in place (`None`: not stored, not the
    /// writer, or a kind whose copies are not used in place, or not Unix: see
    /// `store::mapped`).
    pub(crate) fn in_place(&mut self, root: &Path) -> Option<Arc<T>> {
        if !T::IN_PLACE || !cfg!(unix) {
            return None;
        }
        let rs = self.roots.get_mut(root)?;
        rs.writer.as_ref()?;
        let entry = rs.entry.as_ref()?;
        let held = entry.load(T::KIND).and_then(T::decode).ok()?;
        rs.seen = entry.stamp(T::KIND);
        Some(Arc::new(held))
    }

    /// Saves `held` (built with `redone` files parsed or read again) when this server
    /// writes the root's entry; whether it did.
    pub(crate) fn save(&mut self, root: &Path, held: &T, redone: usize) -> bool {
        let store = self.store.clone();
        let Some(rs) = self.get(root) else {
            return false;
        };
        if rs.writer.is_none() && rs.other_writer() {
            return false;
        }
        let (Some(entry), Some(store)) = (rs.entry.as_ref(), store) else {
            return false;
        };
        let started = Instant::now();
        let bytes = held.bytes();
        if bytes.len() as u64 > store.max_index_bytes() {
            rs.note = format!("not stored: {}", over_limit(&store, bytes.len() as u64));
            entry.discard(T::KIND);
            return false;
        }
        match entry.save(T::KIND, &bytes) {
            Ok(()) => {
                rs.seen = entry.stamp(T::KIND);
                rs.note = stored_note::<T>(
                    std::mem::take(&mut rs.loaded),
                    rs.refused.take(),
                    redone,
                    bytes.len() as u64,
                );
                tracing::info!(
                    "{}: {} stored ({} bytes) in {:?}",
                    root.display(),
                    T::WHAT,
                    bytes.len(),
                    started.elapsed()
                );
                store.evict(entry);
                true
            }
            Err(err) => {
                tracing::warn!("{}: {} not stored: {err}", root.display(), T::WHAT);
                rs.note = format!("not stored: {err}");
                false
            }
        }
    }
}

impl<T: Stored> Stores<T> {
    /// Where a build of `root` may write scratch files and its stored file in place
    /// (`None`: no store, another server writes the root's entry, or not Unix: see
    /// `store::scratch`).
    pub(crate) fn spill(&mut self, root: &Path) -> Option<super::scratch::Spill> {
        if !cfg!(unix) {
            return None;
        }
        let store = self.store.clone()?;
        let rs = self.get(root)?;
        if rs.writer.is_none() && rs.other_writer() {
            return None;
        }
        rs.writer.as_ref()?;
        let spill = super::scratch::Spill::new(rs.entry.as_ref()?.dir.clone(), store.part_bytes);
        Some(spill.with_pause(store.write_pause))
    }

    /// How often a long build stores what it has ([`Stores::checkpoint`]) and after how
    /// many files it looks (`None`: no store).
    pub(crate) fn checkpoint_every(&self) -> Option<(Duration, usize)> {
        self.store.as_ref().map(|store| store.checkpoint)
    }

    /// Publishes `sealed`, what a build has so far (written into this server's entry, see
    /// [`Stores::spill`]): a server stopped before the build ends starts from it instead
    /// of from nothing (a stored copy is only a starting point, checked like any other).
    /// Says nothing in `list_roots`; a failure only costs the checkpoint.
    pub(crate) fn checkpoint(&mut self, root: &Path, mut sealed: super::scratch::Sealed) {
        let store = self.store.clone();
        let Some(rs) = self.get(root) else {
            return;
        };
        let (Some(entry), Some(store), Some(_)) = (rs.entry.as_ref(), store, &rs.writer) else {
            return;
        };
        let len = std::fs::metadata(sealed.path()).map_or(u64::MAX, |m| m.len());
        if len > store.max_index_bytes() {
            return;
        }
        match sealed.publish(&entry.file(T::KIND)) {
            Ok(()) => {
                rs.seen = entry.stamp(T::KIND);
                tracing::info!(
                    "{}: {} so far stored ({len} bytes)",
                    root.display(),
                    T::WHAT
                );
            }
            Err(err) => {
                tracing::debug!(
                    "{}: {} checkpoint not stored: {err}",
                    root.display(),
                    T::WHAT
                )
            }
        }
    }

    /// A build's result, and whether it is already stored (and read in place): one in
    /// memory as it is (stored as usual when it lands), a stored file published
    /// ([`Stores::adopt`]).
    pub(crate) fn take(
        &mut self,
        root: &Path,
        finished: super::scratch::Finished<T>,
        redone: usize,
    ) -> Result<(Arc<T>, bool), String> {
        match finished {
            super::scratch::Finished::Memory(held) => Ok((Arc::new(held), false)),
            super::scratch::Finished::Stored(sealed) => self
                .adopt(root, sealed, redone)
                .map(|held| (held, true))
                .map_err(|why| why.to_string()),
        }
    }

    /// Publishes `sealed`, a stored file of `T` a build wrote in place (built with
    /// `redone` files read), and returns it read in place. One over the store's limit is
    /// read from its temp file and not kept (a mapped file outlives its name).
    pub(crate) fn adopt(
        &mut self,
        root: &Path,
        sealed: super::scratch::Sealed,
        redone: usize,
    ) -> Result<Arc<T>, Refused> {
        let store = self.store.clone();
        let gone = || Refused::Io("the store entry is gone".into());
        let rs = self.get(root).ok_or_else(gone)?;
        let (Some(entry), Some(store)) = (rs.entry.as_ref(), store) else {
            return Err(gone());
        };
        let mut sealed = sealed;
        let len = std::fs::metadata(sealed.path())
            .map_err(|err| Refused::Io(err.to_string()))?
            .len();
        let published = match len > store.max_index_bytes() {
            true => Err(over_limit(&store, len)),
            false => (sealed.publish(&entry.file(T::KIND))).map_err(|err| err.to_string()),
        };
        if let Err(why) = published {
            // Read from its temp file, then let go of it (a mapped file outlives its name).
            let held = super::mapped::load(sealed.path(), T::KIND).and_then(T::decode)?;
            rs.note = format!("not stored: {why}");
            entry.discard(T::KIND);
            return Ok(Arc::new(held));
        }
        rs.seen = entry.stamp(T::KIND);
        rs.note = stored_note::<T>(
            std::mem::take(&mut rs.loaded),
            rs.refused.take(),
            redone,
            len,
        );
        tracing::info!("{}: {} stored ({len} bytes)", root.display(), T::WHAT);
        let held = entry.load(T::KIND).and_then(T::decode)?;
        store.evict(entry);
        Ok(Arc::new(held))
    }
}

/// Why an index of `bytes` is not stored under `--cache-max-mb`.
fn over_limit(store: &Store, bytes: u64) -> String {
    format!(
        "{} is over the store's limit of {}",
        crate::quote::byte_size(bytes),
        crate::quote::byte_size(store.max_bytes())
    )
}

/// What `list_roots` says of a root whose `T` was just stored (`bytes` long): `loaded`,
/// the build started from a stored copy; `refused`, why the stored copy was not used.
fn stored_note<T: Stored>(
    loaded: bool,
    refused: Option<String>,
    redone: usize,
    bytes: u64,
) -> String {
    let size = crate::quote::byte_size(bytes);
    match loaded {
        true => format!(
            "loaded from the store, {redone} {}, stored again ({size})",
            T::REDONE
        ),
        false => match refused {
            Some(why) => format!("stored copy refused ({why}), rebuilt and stored, {size}"),
            None => format!("stored, {size}"),
        },
    }
}

impl RootStore {
    fn open(store: &Store, root: &Path, what: &str) -> RootStore {
        let mut rs = RootStore {
            entry: None,
            writer: None,
            seen: None,
            waiting_since: None,
            loaded: false,
            refused: None,
            note: String::new(),
        };
        match store.open(root) {
            Ok(entry) => rs.entry = Some(entry),
            Err(err) => {
                tracing::warn!(
                    "{}: no store at {} ({err}): the {what} is kept in memory only",
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
