//! The content index's worker: one thread takes one root's job at a time (a full build,
//! or an update of the files that changed), reads files while stepping aside for
//! searches, and hands the table back to the root's slot; the writer of the root's store
//! entry saves each new base.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::check::{Source, check};
use super::state::{MAX_UPDATE_FILES, Shared, Slot, UNAVAILABLE_RETRY};
use crate::background::Landed;
use crate::content::grams::GramSet;
use crate::content::table::{Builder, MAX_LISTED_BYTES, Table};
use crate::index::{IndexedFile, RootIndex, stamp_of_meta};
use crate::platform::os::OsStrExt;
use crate::pool::pacing::{YIELD_MAX, yield_to_searches};
use crate::store::publish::{Stores, WRITER_POLL};

pub(super) fn worker_loop(shared: &Shared) {
    let mut stores = Stores::<Table>::new(shared.store.clone());
    let mut reader = Reader::new();
    while let Some(job) = next_job(shared) {
        let outcome = run_job(shared, &job, &mut stores, &mut reader);
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
        (shared.slots).land(&mut stores, &job.root, landing, built, Slot::base_mut);
    }
}

struct Job {
    root: PathBuf,
    full: bool,
    base: Option<Arc<Table>>,
    update: Option<Arc<Table>>,
    dirty: HashSet<Vec<u8>>,
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
}

enum Outcome {
    /// A new base from every file (`read`: files read).
    Built {
        base: Arc<Table>,
        read: usize,
        /// Written into the store as it was built, and read from there in place.
        stored: bool,
        elapsed: Duration,
    },
    /// The stored base, loaded: an update checks it next.
    Restored { base: Arc<Table> },
    /// A new update table (or the same when nothing was stale).
    Updated {
        update: Option<Arc<Table>>,
        read: u64,
    },
    /// Too much changed for an update.
    NeedsFull,
    /// Another server builds this root; its publication is awaited.
    WaitForWriter,
    /// Nothing done (`later`: the file index is unavailable, try again in a while).
    Gave { later: bool },
}

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
        Outcome::Updated { update, read } => {
            slot.update = update;
            work.updates += read;
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

fn run_job(shared: &Shared, job: &Job, stores: &mut Stores<Table>, reader: &mut Reader) -> Outcome {
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
        return update(shared, job, &files, reader);
    }
    if stores.wait_for_writer(&job.root, files.len()) {
        return Outcome::WaitForWriter;
    }
    let started = Instant::now();
    job.total.store(files.len(), Ordering::Relaxed);
    // Past its first block the table is written into the store as it is built; a full or
    // failing cache disk costs the saving, not the table (read again into memory).
    let mut spill = stores.spill(&job.root);
    loop {
        let spilling = spill.is_some();
        let builder = Builder::spilling(spill.take());
        let Some(builder) = read_into(shared, job, &files, 0..files.len(), reader, builder) else {
            return Outcome::Gave { later: false };
        };
        let finished = builder.finish_to_store().map_err(|err| err.to_string());
        match finished.and_then(|f| stores.take(&job.root, f, files.len())) {
            Ok((base, stored)) => {
                return Outcome::Built {
                    base,
                    read: files.len(),
                    stored,
                    elapsed: started.elapsed(),
                };
            }
            Err(why) if spilling => {
                tracing::warn!(
                    "{}: content index not built into the store ({why}): built in memory",
                    job.root.display()
                );
                job.done.store(0, Ordering::Relaxed);
            }
            Err(why) => {
                tracing::warn!("{}: content index not built: {why}", job.root.display());
                return Outcome::Gave { later: true };
            }
        }
    }
}

/// Reads the files `ids` yields (file index ids, ascending) into `builder`; `None` when
/// the job stopped.
fn read_into(
    shared: &Shared,
    job: &Job,
    files: &RootIndex,
    ids: impl IntoIterator<Item = usize>,
    reader: &mut Reader,
    mut builder: Builder,
) -> Option<Builder> {
    for id in ids {
        yield_to_searches(|| stopped(shared, job), YIELD_MAX);
        if builder.len().is_multiple_of(64) && stopped(shared, job) {
            return None;
        }
        reader.add(&mut builder, &job.root, &files.file(id));
        job.done.fetch_add(1, Ordering::Relaxed);
    }
    Some(builder)
}

/// Reads the stale files, and the update's files still current, into a new update.
fn update(shared: &Shared, job: &Job, files: &RootIndex, reader: &mut Reader) -> Outcome {
    let Some(base) = &job.base else {
        return Outcome::NeedsFull;
    };
    let sources = check(files, base, job.update.as_deref(), &job.dirty);
    let stale = sources.iter().filter(|s| **s == Source::Stale).count();
    if stale == 0 {
        return Outcome::Updated {
            update: job.update.clone(),
            read: 0,
        };
    }
    let ids: Vec<usize> = (sources.iter().enumerate())
        .filter(|(_, s)| matches!(s, Source::Stale | Source::Update(_)))
        .map(|(id, _)| id)
        .collect();
    if ids.len() > MAX_UPDATE_FILES {
        return Outcome::NeedsFull;
    }
    job.total.store(ids.len(), Ordering::Relaxed);
    let Some(builder) = read_into(shared, job, files, ids, reader, Builder::default()) else {
        return Outcome::Gave { later: false };
    };
    if base.damaged() {
        return Outcome::NeedsFull;
    }
    Outcome::Updated {
        update: Some(Arc::new(builder.finish())),
        read: stale as u64,
    }
}

/// Reads files into a builder: their trigrams when `grep` would read them as they lie.
pub(crate) struct Reader {
    grams: GramSet,
    text: Vec<u8>,
}

impl Reader {
    pub(crate) fn new() -> Reader {
        Reader {
            grams: GramSet::new(),
            text: Vec::new(),
        }
    }

    /// Adds `file` of `root` to `builder`, stamped as opened (a change after that shows
    /// as another stamp); unlisted when it cannot be read whole as it lies.
    pub(crate) fn add(&mut self, builder: &mut Builder, root: &Path, file: &IndexedFile) {
        let rel = file.rel.as_os_str().as_bytes();
        if file.size > MAX_LISTED_BYTES {
            builder.add(rel, file.stamp(), None);
            return;
        }
        let opened = crate::files::safe::open_read(&root.join(file.rel))
            .and_then(|f| f.metadata().map(|meta| (f, meta)));
        let Ok((handle, meta)) = opened.map_err(|_| ()).and_then(|(f, m)| match m.is_file() {
            true => Ok((f, m)),
            false => Err(()),
        }) else {
            builder.add(rel, file.stamp(), None);
            return;
        };
        let stamp = stamp_of_meta(&meta);
        self.text.clear();
        let read = (&handle)
            .take(MAX_LISTED_BYTES + 1)
            .read_to_end(&mut self.text);
        let whole = read.is_ok() && self.text.len() as u64 == meta.len();
        // A byte-order mark makes `grep` decode the file, a NUL makes it binary: neither
        // is searched as the bytes lie, so neither is listed.
        let plain = !(self.text.starts_with(&[0xef, 0xbb, 0xbf])
            || self.text.starts_with(&[0xff, 0xfe])
            || self.text.starts_with(&[0xfe, 0xff])
            || self.text.contains(&0));
        let grams = (whole && plain).then(|| self.grams.of(&self.text));
        builder.add(rel, stamp, grams);
        if self.text.capacity() > 1 << 20 {
            self.text = Vec::new();
        }
    }
}
