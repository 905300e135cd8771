//! The background builder: one worker thread takes one root's job at a time (a first
//! build, a sync against the file list, or re-parsing dirty files), parses at low priority
//! while stepping aside for searches, and hands the result back to the root's slot.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

// The worker reports into the root slots that `mod.rs` owns.
use super::state::{MAX_OVERLAY, Shared};
use super::table::{FileSyms, Overlay, Packer, Table, nanos};
use crate::files::os::OsStrExt;
use crate::index::{IndexState, RootIndex};
use crate::symbols::extract::{MAX_PARSE_BYTES, Parser};
use crate::symbols::lang::Lang;
use crate::symbols::parse::{FileError, parse_file};
use crate::walk::{YIELD_MAX, yield_to_searches};

/// The worker: one root's job at a time (a first build, a sync, or re-parsing dirty
/// files), each waiting first for the root's file index to be fresh.
pub(super) fn worker_loop(shared: &Shared) {
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

pub(super) fn stopped(shared: &Shared, job: &Job) -> bool {
    job.cancel.load(Ordering::Relaxed) || shared.lock().stop
}

pub(super) fn run_job(shared: &Shared, job: &Job) -> Outcome {
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
pub(super) fn pack(shared: &Shared, job: &Job, files: &RootIndex) -> Outcome {
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
pub(super) fn lower_priority() {
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
