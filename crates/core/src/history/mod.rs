//! The history index (issue #39): per root, the git history reachable from HEAD as
//! `search` reads it ([`table`]), read with gix ([`read`]) on a worker thread at low
//! priority, stored between runs (`crate::store`, kind `history`), and brought up to date
//! when HEAD moves: only the commits HEAD gained are read when the old HEAD is among its
//! ancestors, everything again when it is not (a reset, a rebase).
//!
//! Never stale: a query compares the repository's HEAD with the table's and uses the table
//! only when they are the same; otherwise it ranks without history and the worker is asked
//! to catch up. A root outside any git work tree (or a repository with no commit) has no
//! history and `list_roots` says so; a shallow clone's history is what it holds.
//!
//! What a query gets (`ranked::votes::Votes`): per file of the root, the votes of the past commits most
//! like it, and per name, the names those commits' diffs touched ([`names`], read when
//! first asked and kept for the next queries).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use gix::ObjectId;

mod guard;
pub(crate) mod names;
pub(crate) mod read;
pub(crate) mod table;
#[cfg(all(test, unix))]
mod tests;

use crate::ranked::terms::{Query, Term};
use crate::ranked::votes::{History, Votes};
use crate::store::publish::{Stored, Stores};
use crate::store::{Kind, Refused, Store};
use read::{NoHistory, Repo};
use table::Table;

/// Diffs whose names are kept for later queries (each a few hundred names at most).
const NAMES_KEPT: usize = 1_024;

/// How one root's history stands, for `list_roots`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HistoryState {
    /// Not read yet (waiting for the worker).
    Waiting,
    /// Being read (commits read so far are not counted: gix reads in one pass).
    Reading,
    Ready,
    /// HEAD moved: `search` ranks without history until the new commits are read.
    Updating,
    /// No history to read: the reason (no git repository, no commit yet, unreadable).
    None(String),
}

#[derive(Clone, Debug)]
pub struct HistoryStatus {
    pub root: PathBuf,
    pub state: HistoryState,
    /// Commits held (non-merge commits reachable from HEAD) and files they name.
    pub commits: usize,
    pub files: usize,
    /// HEAD's id, abbreviated, when read.
    pub head: Option<String>,
    pub shallow: bool,
    /// How long the last read took, and how many commits it read (all of them, or those
    /// HEAD gained; 0 when the stored table was current).
    pub took: Option<Duration>,
    pub read: usize,
    /// How the root's history stands in the store (`None`: no store).
    pub store: Option<String>,
}

impl Stored for Table {
    const KIND: Kind = Kind::History;
    const WHAT: &'static str = "history";
    const REDONE: &'static str = "new commits read";
    const IN_PLACE: bool = false;

    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        self.encode().into()
    }

    fn decode(bytes: crate::store::mapped::Bytes) -> Result<Self, Refused> {
        Table::decode(bytes.as_slice()).map_err(Refused::Invalid)
    }

    fn describe(&self) -> String {
        format!("{} commits", self.commits.len())
    }
}

/// One root's slot.
struct Slot {
    state: HistoryState,
    table: Option<Arc<Table>>,
    repo: Option<Arc<Repo>>,
    took: Option<Duration>,
    read: usize,
    queued: bool,
}

struct State {
    slots: HashMap<PathBuf, Slot>,
    queue: VecDeque<PathBuf>,
    stop: bool,
    /// Names each diff touched, by root and commit.
    names: HashMap<(PathBuf, ObjectId), Arc<HashMap<String, f32>>>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    stores: Mutex<Stores<Table>>,
    /// The operator's `--confine` directories (canonical; empty: none).
    confine: Vec<PathBuf>,
}

/// The history index over the current roots.
pub struct HistoryIndex {
    shared: Arc<Shared>,
    /// Started with the first roots; never joined (see `Drop`).
    worker: std::sync::Once,
}

impl HistoryIndex {
    /// An index saving to and starting from `store`, reading only repositories whose git
    /// directories lie within `confine` (the operator's `--confine`; empty: anywhere).
    pub fn new(store: Option<Arc<Store>>, confine: Vec<PathBuf>) -> HistoryIndex {
        HistoryIndex {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    slots: HashMap::new(),
                    queue: VecDeque::new(),
                    stop: false,
                    names: HashMap::new(),
                }),
                wake: Condvar::new(),
                stores: Mutex::new(Stores::new(store)),
                confine,
            }),
            worker: std::sync::Once::new(),
        }
    }

    /// Follows the roots: new ones are queued for reading, gone ones dropped.
    pub fn set_roots(&self, roots: &[PathBuf]) {
        let mut state = crate::mutex::lock(&self.shared.state);
        state.slots.retain(|root, _| roots.contains(root));
        state.queue.retain(|root| roots.contains(root));
        crate::mutex::lock(&self.shared.stores).retain(|root| roots.contains(&root.to_path_buf()));
        for root in roots {
            if !state.slots.contains_key(root) {
                state.slots.insert(
                    root.clone(),
                    Slot {
                        state: HistoryState::Waiting,
                        table: None,
                        repo: None,
                        took: None,
                        read: 0,
                        queued: true,
                    },
                );
                state.queue.push_back(root.clone());
            }
        }
        let start = !state.queue.is_empty();
        drop(state);
        if start {
            self.ensure_worker();
            self.shared.wake.notify_all();
        }
    }

    fn ensure_worker(&self) {
        self.worker.call_once(|| {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("rootgrep-history".into())
                .spawn(move || worker_loop(&shared));
            if let Err(err) = spawned {
                tracing::warn!("the history is not read: no thread ({err})");
            }
        });
    }

    /// Every root's state.
    pub fn status(&self) -> Vec<HistoryStatus> {
        let state = crate::mutex::lock(&self.shared.state);
        let stores = crate::mutex::lock(&self.shared.stores);
        let mut out: Vec<HistoryStatus> = (state.slots.iter())
            .map(|(root, slot)| {
                let table = slot.table.as_deref();
                HistoryStatus {
                    root: root.clone(),
                    state: slot.state.clone(),
                    commits: table.map_or(0, |t| t.commits.len()),
                    files: table.map_or(0, |t| t.paths.list.len()),
                    head: table
                        .and_then(|t| t.head)
                        .map(|h| h.to_hex_with_len(12).to_string()),
                    shallow: table.is_some_and(|t| t.shallow),
                    took: slot.took,
                    read: slot.read,
                    store: stores.note(root),
                }
            })
            .collect();
        out.sort_by(|a, b| a.root.cmp(&b.root));
        out
    }

    /// What `root`'s history says about a query of `terms`; `None` when it has none
    /// current (not read yet, no repository, or HEAD moved since it was read: then the
    /// worker is asked to catch up).
    pub(crate) fn votes(&self, root: &Path, terms: &[Term]) -> Option<Votes> {
        let (table, repo) = {
            let state = crate::mutex::lock(&self.shared.state);
            let slot = state.slots.get(root)?;
            (slot.table.clone()?, slot.repo.clone()?)
        };
        // HEAD moved, or cannot be resolved now: no answer from this table; the worker
        // reads again (and says why when it cannot).
        let head = repo.head().ok();
        if head.is_none() || table.head != head {
            self.catch_up(root);
            return None;
        }
        let similar = table.similar(terms);
        let mut votes = Votes::default();
        for (file, vote) in table.file_votes(&similar) {
            let path = table.paths.list[file as usize].clone();
            votes.files.insert(path, vote);
        }
        for s in &similar {
            let id = table.commits[s.commit as usize].id;
            for (name, weight) in self.touched(root, &repo, id).iter() {
                *votes.names.entry(name.clone()).or_default() += s.score * weight;
            }
        }
        Some(votes)
    }

    /// The names commit `id`'s diff touched below `root` (kept per root: two roots of one
    /// repository see different files of the same commit).
    fn touched(&self, root: &Path, repo: &Repo, id: ObjectId) -> Arc<HashMap<String, f32>> {
        let key = (root.to_path_buf(), id);
        if let Some(known) = crate::mutex::lock(&self.shared.state).names.get(&key) {
            return known.clone();
        }
        let names = Arc::new(names::touched(repo, id));
        let mut state = crate::mutex::lock(&self.shared.state);
        if state.names.len() >= NAMES_KEPT {
            state.names.clear();
        }
        state.names.insert(key, names.clone());
        names
    }

    /// Queues `root` to be brought up to HEAD (once).
    fn catch_up(&self, root: &Path) {
        let mut state = crate::mutex::lock(&self.shared.state);
        let Some(slot) = state.slots.get_mut(root) else {
            return;
        };
        if slot.queued {
            return;
        }
        slot.queued = true;
        slot.state = HistoryState::Updating;
        state.queue.push_back(root.to_path_buf());
        drop(state);
        self.shared.wake.notify_all();
    }
}

impl History for HistoryIndex {
    fn votes(&self, root: &Path, query: &Query) -> Option<Votes> {
        let terms: Vec<Term> = (query.terms.iter())
            .filter(|t| read::kept(&t.text))
            .map(|t| t.term)
            .collect();
        if terms.is_empty() {
            return None;
        }
        HistoryIndex::votes(self, root, &terms)
    }
}

impl Drop for HistoryIndex {
    /// Tells the worker to stop (it looks every few hundred commits) without waiting for
    /// it: a read blocked in gix on something the guard could not see (a FIFO planted as a
    /// loose object) must not hold the server's exit.
    fn drop(&mut self) {
        crate::mutex::lock(&self.shared.state).stop = true;
        self.shared.wake.notify_all();
    }
}

fn worker_loop(shared: &Shared) {
    crate::pool::pacing::lower_priority();
    loop {
        let (root, held) = {
            let mut state = crate::mutex::lock(&shared.state);
            loop {
                if state.stop {
                    return;
                }
                if let Some(root) = state.queue.pop_front() {
                    let Some(slot) = state.slots.get_mut(&root) else {
                        continue;
                    };
                    if slot.state == HistoryState::Waiting {
                        slot.state = HistoryState::Reading;
                    }
                    break (root, slot.table.clone());
                }
                state = shared.wake.wait(state).unwrap_or_else(|e| e.into_inner());
            }
        };
        let started = Instant::now();
        let gone = || {
            let state = crate::mutex::lock(&shared.state);
            state.stop || !state.slots.contains_key(&root)
        };
        let outcome = bring_up_to_date(shared, &root, held, &gone);
        let mut state = crate::mutex::lock(&shared.state);
        let Some(slot) = state.slots.get_mut(&root) else {
            continue;
        };
        slot.queued = false;
        match outcome {
            Some(Ok((table, repo, read))) => {
                slot.took = Some(started.elapsed());
                slot.read = read;
                slot.table = Some(table);
                slot.repo = Some(repo);
                slot.state = HistoryState::Ready;
            }
            Some(Err(why)) => {
                slot.table = None;
                slot.repo = None;
                slot.state = HistoryState::None(why.to_string());
            }
            None => {}
        }
    }
}

/// A root's table at its HEAD, its repository, and how many commits were read for it.
type Current = (Arc<Table>, Arc<Repo>, usize);

/// The root's table at its HEAD now: the one held or stored if current, else extended by
/// the commits HEAD gained, else read whole; saved when it changed. `None` when the root
/// went away meanwhile.
fn bring_up_to_date(
    shared: &Shared,
    root: &Path,
    held: Option<Arc<Table>>,
    gone: &dyn Fn() -> bool,
) -> Option<Result<Current, NoHistory>> {
    if !root.is_dir() {
        return Some(Err(NoHistory::NoRepository));
    }
    let repo = match Repo::find(root, &shared.confine) {
        Ok(repo) => Arc::new(repo),
        Err(why) => return Some(Err(why)),
    };
    let head = match repo.head() {
        Ok(head) => head,
        Err(why) => return Some(Err(why)),
    };
    let held = held.or_else(|| crate::mutex::lock(&shared.stores).newer(root, false));
    if let Some(held) = &held
        && held.head == Some(head)
    {
        return Some(Ok((held.clone(), repo, 0)));
    }
    // Continue from what is held when its HEAD is an ancestor of HEAD now.
    let base = held.filter(|table| {
        let (Some(old), Some(last)) = (table.head, table.commits.last()) else {
            return false;
        };
        repo.descends(head, old, last.time)
    });
    let mut table = match &base {
        Some(table) => Table::clone(table),
        None => Table::default(),
    };
    let known = base.as_ref().and_then(|t| t.head);
    let shallow = repo.is_shallow();
    let newer = match repo.commits(head, known, &mut table.paths, gone) {
        Ok(Some(newer)) => newer,
        Ok(None) => return None,
        Err(why) => return Some(Err(why)),
    };
    let read = newer.len();
    table.extend(head, shallow, newer);
    tracing::info!(
        "{}: history read to {} ({} commits, {read} new)",
        root.display(),
        head.to_hex_with_len(12),
        table.commits.len()
    );
    crate::mutex::lock(&shared.stores).save(root, &table, read);
    // The walk mapped the pages of the pack it read (200 MiB of nuttx's, counted in the
    // server's resident size for as long as the handle lives): a fresh handle maps only
    // what queries read later.
    let repo = match read {
        0 => repo,
        _ => Repo::find(root, &shared.confine).map_or(repo, Arc::new),
    };
    Some(Ok((Arc::new(table), repo, read)))
}
