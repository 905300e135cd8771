//! The background builder: one worker thread takes one root's job at a time (a first
//! build, a sync against the file list, or re-parsing dirty files), parses at low priority
//! while stepping aside for searches, and hands the result back to the root's slot.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

// The worker reports into the root slots that `mod.rs` owns.
use super::packer::Packer;
use super::parts::Parts;
use super::state::{MAX_OVERLAY, Shared, Slot, UNAVAILABLE_RETRY};
use super::table::{Draft, FileSyms, Overlay, Table, nanos};
use crate::background::Landed;
use crate::index::{IndexState, RootIndex};
use crate::mutex::lock;
use crate::platform::os::OsStrExt;
use crate::pool::pacing::{YIELD_MAX, yield_to_searches};
use crate::store::publish::{Stores, WRITER_POLL};
use crate::store::scratch::{Finished, Spill};
use crate::symbols::extract::{MAX_PARSE_BYTES, Parser};
use crate::symbols::lang::Lang;
use crate::symbols::parse::{FileError, parse_file};

/// The worker: one root's job at a time (a first build, a sync, or re-parsing dirty
/// files), each waiting first for the root's file index to be fresh.
pub(super) fn worker_loop(shared: &Shared) {
    let mut stores = Stores::<Table>::new(shared.store.clone());
    while let Some(job) = next_job(shared) {
        let outcome = run_job(shared, &job, &mut stores);
        let packed = match &outcome {
            Outcome::Packed { table, changed, .. } => Some(Landed {
                result: table.clone(),
                redone: job.total.load(Ordering::Relaxed),
                changed: *changed,
            }),
            _ => None,
        };
        let now = shared.now();
        let landing = |slot: &mut Slot| land(slot, &job, outcome, now);
        // The index answers from a new table while it is written, then from its stored
        // copy; the build's transient memory (parse trees, unpacked lists, the stored
        // bytes) is given back.
        (shared.slots).land(&mut stores, &job.root, landing, packed, Slot::table_mut);
    }
}

/// Waits for a root with work due and starts its job; `None` once the index stops.
fn next_job(shared: &Shared) -> Option<Job> {
    shared.slots.next_job(start)
}

/// Starts the slot's due job: a sync when one was asked for or nothing is packed yet,
/// else re-parsing the dirty paths (which it takes). A sync asked for while this one runs
/// is another one.
fn start(slot: &mut Slot) -> Job {
    // A job never starts from a table that read zeros (a sync from the files instead).
    slot.drop_damaged();
    let started = slot.work.start(slot.table.is_some());
    Job {
        root: slot.work.root.clone(),
        sync: started.full,
        table: slot.table.clone(),
        overlay: slot.overlay.clone(),
        dirty: started.dirty.into_iter().collect(),
        cancel: started.cancel,
        done: slot.work.done.clone(),
        total: slot.work.total.clone(),
    }
}

/// Hands a job's outcome to its root's slot: what got due meanwhile is due now.
fn land(slot: &mut Slot, job: &Job, outcome: Outcome, now: Instant) {
    let taken = slot.work.land();
    match outcome {
        Outcome::Packed {
            table,
            too_large,
            elapsed,
            ..
        } => {
            slot.table = Some(table);
            slot.overlay = Arc::default();
            slot.too_large = too_large;
            slot.work.last_build = Some(elapsed);
        }
        Outcome::WaitForWriter => {
            // Another server builds this root: look for its publication again soon. What
            // is stored meanwhile is unchecked, so nothing is served from it, completion
            // included, until a sync checked it against the file list.
            slot.work.give_back(taken, now);
            slot.sync(now);
            slot.work.phase.reschedule(now + WRITER_POLL, false);
        }
        Outcome::Updated { overlay, parsed } => {
            slot.overlay = Arc::new(overlay);
            slot.work.updates += parsed;
        }
        Outcome::NeedsSync => {
            slot.work.give_back(taken, now);
            slot.sync(now);
        }
        Outcome::Gave { later } => {
            // Not fresh yet or cancelled: the paths stay dirty for the next try.
            slot.work.give_back(taken, now);
            if job.sync {
                slot.sync(now);
            }
            if later && slot.work.phase.due().is_some() {
                slot.work.phase.reschedule(now + UNAVAILABLE_RETRY, false);
            }
        }
    }
}

pub(super) struct Job {
    pub(super) root: PathBuf,
    pub(super) sync: bool,
    pub(super) table: Option<Arc<Table>>,
    pub(super) overlay: Arc<Overlay>,
    pub(super) dirty: Vec<PathBuf>,
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) done: Arc<AtomicUsize>,
    pub(super) total: Arc<AtomicUsize>,
}

pub(super) enum Outcome {
    Packed {
        table: Arc<Table>,
        /// Not the table the job started from (so worth storing).
        changed: bool,
        too_large: usize,
        elapsed: Duration,
    },
    /// Another server is building this root; its publication is awaited.
    WaitForWriter,
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

pub(super) fn stopped(shared: &Shared, job: &Job) -> bool {
    job.cancel.load(Ordering::Relaxed) || shared.slots.stopping()
}

pub(super) fn run_job(shared: &Shared, job: &Job, stores: &mut Stores<Table>) -> Outcome {
    // A sync starts from the stored table when there is one it has not seen (checked
    // against the file list below like any other, so never served unchecked).
    let base = match job.sync {
        true => stores
            .newer(&job.root, job.table.is_some())
            .or_else(|| job.table.clone()),
        false => job.table.clone(),
    };
    if base.is_none() {
        // Nothing stored after all (or refused): queries need not wait for this job.
        (shared.slots).with_slot(&job.root, |slot| slot.work.restoring = false);
    }
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
        return pack(shared, job, base, &files, stores);
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
                        ident: meta.ident,
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

/// Where one file's definitions come from in a full pack. What is reused is read from the
/// old table or overlay only while packing, one file at a time, so the build's peak memory
/// is about twice the compact size, never every definition as `String`s.
enum Src {
    Old(u32),
    Overlay,
    /// Parsed now: (thread, file in that thread's table).
    New(u32, u32),
    Parse,
}

/// One supported file of the list, as the pack will hold it (small: a million of them
/// are held through a build; the path is read from the file index by `id`).
struct Planned {
    /// Its position in the file index.
    id: u32,
    lang: Lang,
    size: u64,
    mtime: u64,
    ident: u64,
    src: Src,
}

/// A full pack: every supported file of the list, reusing what was parsed at the same
/// size, mtime and identity, parsing the rest on the build threads, in rounds, packed in
/// parts spilled to the store past the build's budget (`parts.rs`); every couple of
/// minutes (`store::Store`'s checkpoint) what is parsed so far is stored, so a server
/// stopped halfway continues from there.
pub(super) fn pack(
    shared: &Shared,
    job: &Job,
    base: Option<Arc<Table>>,
    files: &RootIndex,
    stores: &mut Stores<Table>,
) -> Outcome {
    let started = std::time::Instant::now();
    let (plan, too_large) = plan(job, base.as_deref(), files);
    let todo = (plan.iter())
        .filter(|p| matches!(p.src, Src::Parse))
        .count();
    job.total.store(todo, Ordering::Relaxed);
    job.done.store(0, Ordering::Relaxed);
    if let Some(base) = &base
        && job.overlay.is_empty()
        && plan.len() == base.files().len()
        && plan.iter().all(|p| matches!(p.src, Src::Old(_)))
    {
        // Every file as parsed before (each `Old` is a distinct file of the table, and
        // there are as many): the table itself is the answer, and it is the one held or
        // the one stored, so there is nothing new to store.
        return Outcome::Packed {
            table: base.clone(),
            changed: false,
            too_large,
            elapsed: started.elapsed(),
        };
    }
    if stores.wait_for_writer(&job.root, todo) {
        return Outcome::WaitForWriter;
    }
    let spill = stores.spill(&job.root);
    let spilling = spill.is_some();
    let from = (job, files, base.as_deref());
    let packed = match pack_in(shared, from, plan, stores, spill) {
        Err(err) if spilling => {
            // A full or failing cache disk costs the saving, not the table.
            tracing::warn!(
                "{}: symbol table not packed into the store ({err}): packed in memory",
                job.root.display()
            );
            let (plan, _) = self::plan(job, base.as_deref(), files);
            job.done.store(0, Ordering::Relaxed);
            pack_in(shared, from, plan, stores, None)
        }
        packed => packed,
    };
    match packed {
        Ok(Packed::Done(finished)) => {
            let (redone, elapsed) = (todo, started.elapsed());
            take(job, finished, stores, redone, too_large, elapsed)
        }
        Ok(Packed::Cancelled) => Outcome::Gave { later: false },
        // What it reused of the old table may be zeros: from the files again.
        Ok(Packed::DamagedBase) => Outcome::NeedsSync,
        Err(err) => {
            tracing::warn!("{}: symbol table not packed: {err}", job.root.display());
            Outcome::Gave { later: true }
        }
    }
}

/// How [`pack_in`] ended.
enum Packed {
    Done(Finished<Table>),
    Cancelled,
    /// The old table it reused from was cut short while mapped.
    DamagedBase,
}

/// [`pack`]'s rounds, packing into parts spilled to `spill` when given (an error only
/// from spilling).
fn pack_in(
    shared: &Shared,
    (job, files, base): (&Job, &RootIndex, Option<&Table>),
    mut plan: Vec<Planned>,
    stores: &mut Stores<Table>,
    spill: Option<Spill>,
) -> std::io::Result<Packed> {
    let in_order = path_order(&plan, files);
    let (every, round) = stores
        .checkpoint_every()
        .unwrap_or((Duration::MAX, usize::MAX));
    // With a store, the table is laid out into it (and checkpoints too), not in memory.
    let checkpoints = spill.is_some();
    let mut parts = Parts::new(spill);
    let mut stored_at = Instant::now();
    let mut rounds = in_order.chunks(round.max(1)).peekable();
    while let Some(chunk) = rounds.next() {
        // One round: the files of a stretch of the path order, the ones to parse parsed
        // on the threads, then every one packed in order; the threads' tables go.
        let todo: Vec<usize> = (chunk.iter().copied())
            .filter(|&i| matches!(plan[i].src, Src::Parse))
            .collect();
        let parsed = match todo.is_empty() {
            true => Vec::new(),
            false => parse_on_threads(shared, (job, files), &plan, &todo),
        };
        if job.cancel.load(Ordering::Relaxed) {
            return Ok(Packed::Cancelled);
        }
        for (thread, (_, order)) in parsed.iter().enumerate() {
            for (local, &at) in order.iter().enumerate() {
                plan[at].src = Src::New(thread as u32, local as u32);
            }
        }
        if !pack_in_order(&mut parts, (job, files), base, &plan, chunk, &parsed)? {
            break;
        }
        drop(parsed);
        if checkpoints && rounds.peek().is_some() && stored_at.elapsed() >= every {
            // What is parsed so far, stored: a server stopped before the end starts from
            // it (the files not reached yet are simply not in it).
            match parts.checkpoint() {
                Ok(sealed) => stores.checkpoint(&job.root, sealed),
                Err(err) => tracing::debug!("symbol checkpoint not stored: {err}"),
            }
            stored_at = Instant::now();
        }
    }
    if base.is_some_and(Table::damaged) {
        return Ok(Packed::DamagedBase);
    }
    if parts.spilled() > 0 {
        tracing::info!(
            "{}: symbol table packed in parts of at most {}, merging them in the store",
            job.root.display(),
            crate::quote::byte_size(parts.budget() as u64)
        );
    }
    Ok(Packed::Done(parts.finish()?))
}

/// The packed table, taken as the index's (and stored when it was laid out into the
/// store).
fn take(
    job: &Job,
    finished: Finished<Table>,
    stores: &mut Stores<Table>,
    redone: usize,
    too_large: usize,
    elapsed: Duration,
) -> Outcome {
    match stores.take(&job.root, finished, redone) {
        Ok((table, stored)) => Outcome::Packed {
            table,
            changed: !stored,
            too_large,
            elapsed,
        },
        Err(why) => {
            tracing::warn!("{}: symbol table not stored: {why}", job.root.display());
            Outcome::Gave { later: true }
        }
    }
}

/// Where each supported file's definitions come from (a dirty file, or one whose size or
/// mtime changed, is parsed again), and how many files are over the parse cap.
fn plan(job: &Job, base: Option<&Table>, files: &RootIndex) -> (Vec<Planned>, usize) {
    let dirty: HashSet<&Path> = job
        .dirty
        .iter()
        .filter_map(|p| p.strip_prefix(&job.root).ok())
        .collect();
    let mut too_large = 0;
    let mut plan = Vec::with_capacity(files.len());
    // Where the last file was found in `base`: the next is most often the one after it.
    let mut next = 0;
    for file in files.files() {
        let Some(lang) = Lang::from_path(file.rel) else {
            continue;
        };
        if file.size > MAX_PARSE_BYTES as u64 {
            too_large += 1;
            continue;
        }
        let now = file.stamp();
        let key = file.rel.as_os_str().as_bytes();
        let src = if dirty.contains(file.rel) {
            Src::Parse
        } else {
            match (job.overlay.get(key), base) {
                (Some(Some(f)), _) if f.stamp() == now => Src::Overlay,
                (Some(_), _) => Src::Parse,
                (None, Some(t)) => match t.find_file_near(key, next) {
                    Some(i) => {
                        next = i + 1;
                        match t.files()[i].stamp() == now {
                            true => Src::Old(i as u32),
                            false => Src::Parse,
                        }
                    }
                    None => Src::Parse,
                },
                (None, None) => Src::Parse,
            }
        };
        plan.push(Planned {
            id: file.id as u32,
            lang,
            size: file.size,
            mtime: now.1,
            ident: file.ident,
            src,
        });
    }
    plan.shrink_to_fit();
    (plan, too_large)
}

/// Parses the files of `plan` at `todo` on the build threads, each packing what it parses
/// into its own (unsorted) table: per thread, the table and the plan positions of its
/// files. Cancels the job when the stop comes or a table is full.
fn parse_on_threads(
    shared: &Shared,
    (job, files): (&Job, &RootIndex),
    plan: &[Planned],
    todo: &[usize],
) -> Vec<(Draft, Vec<usize>)> {
    let next = AtomicUsize::new(0);
    let parts: Mutex<Vec<(Draft, Vec<usize>)>> = Mutex::new(Vec::new());
    let work = || {
        crate::pool::pacing::lower_priority();
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
            let file = &plan[at];
            let path = job.root.join(files.file(file.id as usize).rel);
            let defs = match parse_file(&mut ctx, &path, file.lang, &abort) {
                Ok(defs) => defs,
                Err(FileError::Cancelled) => break,
                Err(_) => Vec::new(),
            };
            let syms = FileSyms {
                lang: file.lang,
                size: file.size,
                mtime: file.mtime,
                ident: file.ident,
                defs,
            };
            if !mine.add(b"", &syms) {
                job.cancel.store(true, Ordering::Relaxed);
                break;
            }
            order.push(at);
            job.done.fetch_add(1, Ordering::Relaxed);
            if i.is_multiple_of(64) && shared.slots.stopping() {
                job.cancel.store(true, Ordering::Relaxed);
            }
        }
        lock(&parts).push((mine.table, order));
    };
    std::thread::scope(|scope| {
        for n in 0..shared.threads {
            std::thread::Builder::new()
                .name(format!("rootgrep-symbols-{n}"))
                .spawn_scoped(scope, work)
                .expect("spawning a symbol build thread");
        }
    });
    parts.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// The positions of `plan` in path order (bytes, as the table's lookups by path expect).
fn path_order(plan: &[Planned], files: &RootIndex) -> Vec<usize> {
    let mut order: Vec<usize> = (0..plan.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |i: usize| files.file(plan[i].id as usize).rel.as_os_str().as_bytes();
        key(a).cmp(key(b))
    });
    order
}

/// Adds the planned files at `in_order` (a stretch of the path order) to `parts`, each
/// from its source (`parsed`: this round's threads' tables); `false` when the table is
/// full; an error only from spilling.
fn pack_in_order(
    parts: &mut Parts,
    (job, files): (&Job, &RootIndex),
    base: Option<&Table>,
    plan: &[Planned],
    in_order: &[usize],
    parsed: &[(Draft, Vec<usize>)],
) -> std::io::Result<bool> {
    for file in in_order.iter().map(|&i| &plan[i]) {
        let key = files.file(file.id as usize).rel.as_os_str().as_bytes();
        let syms = match file.src {
            Src::Old(i) => base.map(|t| t.file_syms(i as usize)),
            Src::Overlay => job.overlay.get(key).cloned().flatten(),
            Src::New(thread, local) => Some(parsed[thread as usize].0.file_syms(local as usize)),
            Src::Parse => None,
        };
        if let Some(syms) = syms
            && !parts.add(key, &syms)?
        {
            return Ok(false);
        }
    }
    Ok(true)
}
