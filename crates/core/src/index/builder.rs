//! The builder thread: builds or updates one due root at a time, outside the lock, and
//! checks that the root is still the directory it built before its result is served.

use std::sync::{Arc, PoisonError};
use std::time::Instant;

use super::build::build_limited;
use super::state::{DISPLACED_RETRY, EXPECT_WAIT, REBUILD_DEFER, Shared, Watch};
use super::update::{self, Update};
use crate::roots::Displaced;
use crate::walk::Control;

/// Whether a job's root was the same directory before and after it (see
/// [`crate::roots::in_place`]).
pub(super) enum Placement {
    Same,
    /// Not in place (now, or already before the job).
    Displaced(Displaced),
    /// A different directory is there now.
    Replaced,
}

/// The builder thread: builds one due root at a time, outside the lock.
pub(super) fn builder_loop(shared: &Shared) {
    let lock = || shared.state.lock().unwrap_or_else(PoisonError::into_inner);
    let mut state = lock();
    loop {
        if state.stop {
            return;
        }
        shared
            .rounds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let now = Instant::now();
        let mut next_due: Option<Instant> = None;
        let mut job = None;
        for slot in &mut state.slots {
            slot.expire(now);
            if let Some((_, at)) = slot.expected.first() {
                let due = *at + EXPECT_WAIT;
                next_due = Some(next_due.map_or(due, |d: Instant| d.min(due)));
            }
        }
        for i in 0..state.slots.len() {
            let watching = state.watch_of(&state.slots[i].root) == Watch::Watching;
            let slot = &state.slots[i];
            if !watching || slot.building.is_some() || slot.too_many.is_some() {
                continue;
            }
            // While events settle, nothing would be served anyway: wait for the burst.
            let settled = slot.settling.is_empty() && !state.bursting;
            let due = match (slot.due, settled) {
                (Some(due), false) if slot.last_build.is_some() => Some(due + REBUILD_DEFER),
                (due, _) => due,
            };
            match due {
                Some(due) if due <= now => {
                    job = Some(i);
                    break;
                }
                Some(due) => next_due = Some(next_due.map_or(due, |d: Instant| d.min(due))),
                None => {}
            }
        }
        let Some(i) = job else {
            state = match next_due {
                Some(due) => {
                    let wait = due.saturating_duration_since(now);
                    shared
                        .wake
                        .wait_timeout(state, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
            };
            continue;
        };
        let control = Arc::new(Control::new());
        let slot = &mut state.slots[i];
        slot.building = Some(Arc::clone(&control));
        slot.due = None;
        slot.restat.clear();
        // A whole walk, or an update of `current` with the paths changed since it landed.
        let base = match slot.rebuild {
            true => None,
            false => slot.current.clone(),
        };
        let changed = std::mem::take(&mut slot.changed);
        slot.rebuild = false;
        let generation = slot.generation;
        let root = slot.root.clone();
        let started = Instant::now();
        drop(state);

        let max_files = shared.max_files;
        let mut rebuild = false;
        let full = base.is_none();
        // The walker follows the path it starts from, so a root swapped for a symlink would
        // be walked where it points: the root must be in place before the job, and the
        // same directory after it (else what it read is dropped). A swap and back within
        // the job is a root event too, which the barrier makes the index apply before it
        // serves anything.
        let placed = crate::roots::in_place(&root);
        let (built, applied) = match base {
            _ if placed.is_err() => (Ok(None), 0),
            None => (
                build_limited(&root, &control, max_files).map(|b| b.map(Arc::new)),
                0,
            ),
            Some(base) => match update::update(&base, &changed, &control, max_files) {
                Update::Applied(updated, applied) => (Ok(Some(Arc::new(*updated))), applied),
                // Same file set: the index stays as it is (content changes were applied
                // to it in place all along).
                Update::Unchanged => (Ok(Some(base)), 0),
                Update::Rebuild => {
                    rebuild = true;
                    (Ok(None), 0)
                }
                Update::Cancelled => (Ok(None), 0),
            },
        };
        drop(changed);
        let placement = match (placed, crate::roots::in_place(&root)) {
            (Err(displaced), _) | (Ok(_), Err(displaced)) => Placement::Displaced(displaced),
            (Ok(before), Ok(after)) if before == after => Placement::Same,
            (Ok(_), Ok(_)) => Placement::Replaced,
        };
        let built = match placement {
            Placement::Same => built,
            _ => Ok(None),
        };
        match &built {
            Ok(Some(index)) if full => tracing::info!(
                event = "index_built",
                root = %root.display(),
                files = index.len() as u64,
                ms = started.elapsed().as_millis() as u64,
                "index built"
            ),
            _ => tracing::debug!(root = %root.display(), full, applied, "index job ended"),
        }

        // Content changes seen during the walk are applied to the new build (not shared
        // yet) outside the lock, since they read the disk; the slot stays `building`
        // meanwhile, so changes arriving now queue up for the next round.
        let mut vanished = false;
        state = lock();
        while let Ok(Some(built)) = &built {
            let Some(slot) = state.slots.iter_mut().find(|s| {
                s.building
                    .as_ref()
                    .is_some_and(|c| Arc::ptr_eq(c, &control))
            }) else {
                break;
            };
            if slot.restat.is_empty() {
                break;
            }
            let pending = std::mem::take(&mut slot.restat);
            drop(state);
            for path in pending {
                if let Ok(rel) = path.strip_prefix(&root)
                    && let Some(id) = built.find_file(rel)
                {
                    vanished |= !built.restat(id);
                }
            }
            state = lock();
        }
        let Some(slot) = state.slots.iter_mut().find(|s| {
            s.root == root
                && s.building
                    .as_ref()
                    .is_some_and(|c| Arc::ptr_eq(c, &control))
        }) else {
            continue; // root removed or re-targeted meanwhile
        };
        slot.building = None;
        match placement {
            Placement::Same => slot.displaced = None,
            Placement::Displaced(displaced) => {
                tracing::warn!(event = "index_unavailable", root = %root.display(), "{displaced}: not indexed");
                slot.displaced = Some(displaced);
                slot.current = None;
                slot.schedule(Instant::now());
                slot.due = Some(Instant::now() + DISPLACED_RETRY);
                continue;
            }
            Placement::Replaced => {
                // Another directory is the root now: walk it.
                slot.current = None;
                slot.schedule(Instant::now());
                continue;
            }
        }
        let built = match built {
            Ok(built) => built,
            Err(limit) => {
                tracing::warn!(
                    event = "index_unavailable",
                    root = %root.display(),
                    limit = limit as u64,
                    "more than {limit} files: not indexed, searches there walk the disk"
                );
                slot.too_many = Some(limit);
                slot.current = None;
                slot.due = None;
                continue;
            }
        };
        let Some(built) = built else {
            if rebuild {
                // The update found a whole walk needed, or cheaper: now.
                slot.schedule(Instant::now());
                slot.due = Some(Instant::now());
            }
            continue;
        };
        slot.last_build = Some(built.info.clone());
        match full {
            true => {
                slot.builds += 1;
                // This walk read the disk after these writes: it holds them.
                slot.expected.retain(|(_, at)| *at > started);
            }
            false => slot.updates += applied,
        }
        if vanished {
            // A file changed into something else during the walk: the set is wrong.
            slot.schedule(Instant::now());
        }
        // Changes during the job were recorded (or a rebuild asked for) and are due: the
        // index lands, but is served only once they are applied too.
        slot.stale = slot.generation != generation;
        slot.current = Some(built);
        shared.wake.notify_all();
    }
}
