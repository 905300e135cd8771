//! The search index's worker: one thread takes one root's job at a time (a full build,
//! or an update of the files that changed), reads files at low priority while stepping
//! aside for searches (a full build on one thread per core, in batches it adds in list
//! order), and hands the segment back to the root's slot; the writer of the root's store
//! entry saves each new base.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::check::check;
use super::state::{MAX_UPDATE_FILES, Shared, Slot, UNAVAILABLE_RETRY};
use crate::background::Landed;
use crate::index::RootIndex;
use crate::pool::pacing::{YIELD_MAX, yield_to_searches};
use crate::ranked::build::{Indexed, Indexer};
use crate::ranked::parts::Parts;
use crate::ranked::segment::{Builder, Segment};
use crate::store::publish::{Stores, WRITER_POLL};
use crate::store::scratch::Spill;
use crate::symbols::index::Snapshot;

/// How long a first build waits for the symbol index to be ready (its definitions save
/// parsing every file a second time) before it parses them itself.
const SYMBOLS_WAIT: Duration = Duration::from_secs(30 * 60);

pub(super) fn worker_loop(shared: &Shared) {
    let mut stores = Stores::<Segment>::new(shared.store.clone());
    while let Some(job) = next_job(shared) {
        let outcome = run_job(shared, &job, &mut stores);
        let built = match &outcome {
            Outcome::Built {
                base, read, stored, ..
            } => Some(Landed {
                result: base.clone(),
                redone: *read,
                changed: !stored,
            }),
            _ => None,
        };
        let now = shared.now();
        let landing = |slot: &mut Slot| land(slot, &job, outcome, now);
        // Queries use a new base while it is written, then its stored copy.
        (shared.slots).land(&mut stores, &job.root, landing, built, Slot::base_mut);
    }
}

struct Job {
    root: PathBuf,
    full: bool,
    base: Option<Arc<Segment>>,
    update: Option<Arc<Segment>>,
    dirty: HashSet<Vec<u8>>,
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
}

enum Outcome {
    /// A new base from every file (`read`: files read; `stored`: built into the store, and
    /// read from there in place).
    Built {
        base: Arc<Segment>,
        read: usize,
        stored: bool,
        elapsed: Duration,
    },
    /// The stored base, loaded: an update checks it next.
    Restored { base: Arc<Segment> },
    /// A new update segment (or the same when nothing was stale).
    Updated {
        update: Option<Arc<Segment>>,
        indexed: u64,
    },
    /// Too much changed for an update.
    NeedsFull,
    /// Another server builds this root; its publication is awaited.
    WaitForWriter,
    /// Nothing done (`later`: the file index is unavailable, try again in a while).
    Gave { later: bool },
}

/// Waits for a root with work due and starts its job; `None` once the index stops.
fn next_job(shared: &Shared) -> Option<Job> {
    shared.slots.next_job(start)
}

fn start(slot: &mut Slot) -> Job {
    // A job never starts from a base that read zeros (a full build instead).
    slot.drop_damaged();
    let started = slot.work.start(slot.base.is_some());
    Job {
        root: slot.work.root.clone(),
        full: started.full,
        base: slot.base.clone(),
        update: slot.update.clone(),
        dirty: started.dirty,
        cancel: started.cancel,
        done: slot.work.done.clone(),
        total: slot.work.total.clone(),
    }
}

fn land(slot: &mut Slot, job: &Job, outcome: Outcome, now: Instant) {
    slot.waiting_for_symbols = false;
    let work = &mut slot.work;
    let taken = work.land();
    match outcome {
        Outcome::Built { base, elapsed, .. } => {
            slot.base = Some(base);
            slot.update = None;
            work.last_build = Some(elapsed);
            work.updates = 0;
        }
        Outcome::Restored { base } => {
            slot.base = Some(base);
            slot.update = None;
            work.give_back(taken, now);
            work.phase.schedule(now, false);
        }
        Outcome::Updated { update, indexed } => {
            slot.update = update;
            work.updates += indexed;
        }
        Outcome::NeedsFull => {
            work.give_back(taken, now);
            work.phase.schedule(now, true);
        }
        Outcome::WaitForWriter => {
            work.give_back(taken, now);
            work.phase.reschedule(now + WRITER_POLL, true);
        }
        Outcome::Gave { later } => {
            work.give_back(taken, now);
            if job.full {
                work.phase.schedule(now, true);
            }
            if later && work.phase.due().is_some() {
                work.phase.reschedule(now + UNAVAILABLE_RETRY, job.full);
            }
        }
    }
}

fn stopped(shared: &Shared, job: &Job) -> bool {
    job.cancel.load(Ordering::Relaxed) || shared.slots.stopping()
}

/// The root's fresh file list, waited for; `Err(later)` when the index stopped or the
/// root has no file index.
fn fresh_files(shared: &Shared, job: &Job) -> Result<Arc<RootIndex>, bool> {
    (shared.files).wait_fresh_while(&job.root, || !stopped(shared, job))
}

fn run_job(shared: &Shared, job: &Job, stores: &mut Stores<Segment>) -> Outcome {
    if job.full && job.base.is_none() {
        if let Some(base) = stores.newer(&job.root, false) {
            return Outcome::Restored { base };
        }
        (shared.slots).with_slot(&job.root, |slot| slot.work.restoring = false);
    }
    let files = match fresh_files(shared, job) {
        Ok(files) => files,
        Err(later) => return Outcome::Gave { later },
    };
    if !job.full {
        return update(shared, job, &files);
    }
    if stores.wait_for_writer(&job.root, files.len()) {
        return Outcome::WaitForWriter;
    }
    let symbols = wait_for_symbols(shared, job);
    if stopped(shared, job) {
        return Outcome::Gave { later: false };
    }
    build(shared, job, &files, symbols.as_ref(), stores)
}

/// The symbol index's snapshot of the root once it is ready (`None`: there is no symbol
/// index for it, or it did not get ready in [`SYMBOLS_WAIT`]; then files are parsed here).
fn wait_for_symbols(shared: &Shared, job: &Job) -> Option<Snapshot> {
    let symbols = shared.symbols.as_ref()?;
    let deadline = Instant::now() + SYMBOLS_WAIT;
    (shared.slots).with_slot(&job.root, |slot| slot.waiting_for_symbols = true);
    let found = loop {
        if let Some(snapshot) = symbols.snapshot(&job.root) {
            break Some(snapshot);
        }
        let state = symbols.status();
        let absent = !state.iter().any(|s| {
            s.root == job.root
                && !matches!(s.state, crate::symbols::index::SymbolState::Unavailable(_))
        });
        if absent || stopped(shared, job) || Instant::now() >= deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    (shared.slots).with_slot(&job.root, |slot| slot.waiting_for_symbols = false);
    found
}

/// Reads every listed file into a new base: in memory, or in parts spilled to the root's
/// store entry and merged into its stored file when it outgrows the budget
/// (`ranked::parts`).
fn build(
    shared: &Shared,
    job: &Job,
    files: &RootIndex,
    symbols: Option<&Snapshot>,
    stores: &mut Stores<Segment>,
) -> Outcome {
    let spill = stores.spill(&job.root);
    let spilling = spill.is_some();
    let built = build_in(shared, job, files, symbols, stores, spill);
    let built = match built {
        Err(err) if spilling => {
            // A full or failing cache disk costs the saving, not the index.
            tracing::warn!(
                "{}: search index not built into the store ({err}): built in memory",
                job.root.display()
            );
            build_in(shared, job, files, symbols, stores, None)
        }
        built => built,
    };
    built.unwrap_or_else(|err| {
        tracing::warn!("{}: search index not built: {err}", job.root.display());
        Outcome::Gave { later: true }
    })
}

/// [`build`], spilling to `spill` when given; an error only from spilling.
fn build_in(
    shared: &Shared,
    job: &Job,
    files: &RootIndex,
    symbols: Option<&Snapshot>,
    stores: &mut Stores<Segment>,
    spill: Option<Spill>,
) -> std::io::Result<Outcome> {
    let started = Instant::now();
    crate::pool::pacing::lower_priority();
    job.total.store(files.len(), Ordering::Relaxed);
    let abort = AtomicUsize::new(0);
    let threads = crate::symbols::index::build_threads();
    let mut indexers: Vec<Indexer> = (0..threads)
        .map(|_| Indexer::new(&job.root, symbols, &abort))
        .collect();
    let budget = spill.as_ref().map(Spill::budget);
    let mut parts = Parts::new(spill);
    let mut at = 0;
    while at < files.len() {
        let batch = at..(at + BATCH_FILES).min(files.len());
        at = batch.end;
        let Some(read) = read_batch(shared, job, files, &mut indexers, batch.clone()) else {
            return Ok(Outcome::Gave { later: false });
        };
        for (id, indexed) in batch.zip(read) {
            let file = files.file(id);
            indexed.add_to(parts.builder(), file.rel, file.stamp());
            parts.spill_if_full()?;
        }
        // The build reads every definition once: the symbol table's pages it read are
        // the page cache's, not kept in the server's resident size.
        if let Some(symbols) = symbols {
            symbols.release_resident();
        }
    }
    if symbols.is_some_and(Snapshot::damaged) {
        // Definitions taken from a symbol table that read zeros: from the files again.
        return Ok(Outcome::NeedsFull);
    }
    let spilled = parts.spilled();
    let finished = parts.finish()?;
    let (base, stored) = stores
        .take(&job.root, finished, files.len())
        .map_err(std::io::Error::other)?;
    if let Some(budget) = budget.filter(|_| spilled > 0) {
        tracing::info!(
            "{}: search index built in {spilled} parts of at most {}, merged in the store",
            job.root.display(),
            crate::quote::byte_size(budget as u64)
        );
    }
    Ok(Outcome::Built {
        base,
        read: files.len(),
        stored,
        elapsed: started.elapsed(),
    })
}

/// Files the build's threads read before the builder takes them, in list order.
const BATCH_FILES: usize = 1024;

/// Reads the files `ids` on one thread per indexer (low priority, pausing for searches),
/// each taking the next file; their documents in list order, or `None` when the job
/// stopped.
fn read_batch(
    shared: &Shared,
    job: &Job,
    files: &RootIndex,
    indexers: &mut [Indexer],
    ids: std::ops::Range<usize>,
) -> Option<Vec<Indexed>> {
    let next = AtomicUsize::new(ids.start);
    let read = |indexer: &mut Indexer| {
        crate::pool::pacing::lower_priority();
        let mut mine = Vec::new();
        loop {
            yield_to_searches(|| stopped(shared, job), YIELD_MAX);
            let id = next.fetch_add(1, Ordering::Relaxed);
            if id >= ids.end || stopped(shared, job) {
                return mine;
            }
            let file = files.file(id);
            mine.push((id, indexer.file(file.rel, file.size)));
            job.done.fetch_add(1, Ordering::Relaxed);
        }
    };
    let mut got: Vec<Option<Indexed>> = ids.clone().map(|_| None).collect();
    std::thread::scope(|scope| {
        let threads: Vec<_> = indexers
            .iter_mut()
            .map(|indexer| scope.spawn(|| read(indexer)))
            .collect();
        for thread in threads {
            let mine = thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (id, indexed) in mine {
                got[id - ids.start] = Some(indexed);
            }
        }
    });
    got.into_iter().collect()
}

/// Reads the stale files, and the update's files still current, into a new update.
fn update(shared: &Shared, job: &Job, files: &RootIndex) -> Outcome {
    let Some(base) = &job.base else {
        return Outcome::NeedsFull;
    };
    let checked = check(files, base, job.update.as_deref(), &job.dirty);
    if checked.stale.is_empty() {
        return Outcome::Updated {
            update: job.update.clone(),
            indexed: 0,
        };
    }
    let mut ids = checked.stale.clone();
    ids.extend(checked.update_ids.iter().copied());
    if ids.len() > MAX_UPDATE_FILES {
        return Outcome::NeedsFull;
    }
    ids.sort_unstable();
    let symbols = shared.symbols.as_ref().and_then(|s| s.snapshot(&job.root));
    let abort = AtomicUsize::new(0);
    let mut indexer = Indexer::new(&job.root, symbols.as_ref(), &abort);
    let mut builder = Builder::default();
    job.total.store(ids.len(), Ordering::Relaxed);
    for id in ids {
        yield_to_searches(|| stopped(shared, job), YIELD_MAX);
        if stopped(shared, job) {
            return Outcome::Gave { later: false };
        }
        let file = files.file(id);
        indexer.add_to(&mut builder, file.rel, file.stamp());
        job.done.fetch_add(1, Ordering::Relaxed);
    }
    if base.damaged() || symbols.as_ref().is_some_and(Snapshot::damaged) {
        return Outcome::NeedsFull;
    }
    Outcome::Updated {
        update: Some(Arc::new(builder.finish())),
        indexed: checked.stale.len() as u64,
    }
}
