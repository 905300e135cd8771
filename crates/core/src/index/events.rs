//! What each watcher event does to the roots' slots, under the index's lock: a root's
//! watch state, lost events, a burst starting or settling, and one settled path (a content
//! change refreshed in place, a creation or removal recorded for the next update, a change
//! of ignore rules rebuilding). Each returns whether the worker thread or a waiter for
//! freshness has something new to look at.

use crate::platform::os::OsStrExt;
use std::path::Path;
use std::time::Instant;

use super::root::{as_path, is_hidden, is_ignore_name};
use super::state::{Slot, State, Watch};
use crate::watch::{RootStatus, WatchEvent};

/// A root's watch state changed: watched, it is built again (events may have been missed
/// while it was not); otherwise nothing is served or built there.
pub(super) fn status(state: &mut State, root: &Path, status: &RootStatus, now: Instant) -> bool {
    let watch = match status {
        RootStatus::Watching => Watch::Watching,
        RootStatus::Starting => Watch::Unknown,
        RootStatus::Failed(reason) => Watch::Failed(reason.clone()),
    };
    match state.watch.iter_mut().find(|(r, _)| r == root) {
        Some(known) => known.1 = watch.clone(),
        None => state.watch.push((root.to_path_buf(), watch.clone())),
    }
    if let Some(slot) = state.slots.iter_mut().find(|s| s.root == root) {
        match watch {
            Watch::Watching => {
                slot.current = None;
                slot.rebuild_at(now);
            }
            _ => slot.unwatch(),
        }
    }
    true
}

/// Events were lost (overflow, a watcher error): anything may have changed.
pub(super) fn lost(state: &mut State, now: Instant) -> bool {
    for slot in &mut state.slots {
        slot.schedule(now);
    }
    true
}

/// The watcher has no burst in flight: nothing is settling anywhere.
pub(super) fn quiet(state: &mut State) -> bool {
    state.bursting = false;
    for slot in &mut state.slots {
        slot.settling.clear();
    }
    true
}

/// A burst of events at `path` started: the roots whose index it can concern are not
/// served until it settles. Nothing gets due or fresh by it, so the worker is woken only
/// when the watcher was quiet before (it defers rebuilds while a burst is in flight).
pub(super) fn pending(state: &mut State, path: &Path) -> bool {
    let wake = !state.bursting;
    state.bursting = true;
    for slot in state.slots.iter_mut() {
        let Ok(rel) = path.strip_prefix(&slot.root) else {
            continue;
        };
        let rel = rel.as_os_str().as_bytes();
        let matters = match (&slot.current, slot.building()) {
            (Some(index), false) => index.touches(rel),
            // Building: nothing is served now; just make sure the build that lands next
            // is not served before this settles.
            _ => !is_hidden(rel) || is_ignore_name(rel),
        };
        if matters && !slot.settling.contains(path) {
            slot.settling.insert(path.to_path_buf());
        }
    }
    wake
}

/// A settled event (`Changed`, `Created` or `Removed`) at `path`; `meta` is its `lstat`
/// when the index holds the path (see `FileIndex::needs_stat`). Wakes the worker or a
/// waiter only with news: a job got due (or due at another time), or a root became fresh
/// (its last burst settled, an expected write was seen). The worker hears of the
/// watcher's quiet by `Quiet`.
pub(super) fn settled(
    state: &mut State,
    event: &WatchEvent,
    path: &Path,
    meta: Option<&std::fs::Metadata>,
    now: Instant,
) -> bool {
    let mut wake = false;
    for slot in state.slots.iter_mut() {
        let Ok(rel) = path.strip_prefix(&slot.root) else {
            continue;
        };
        let before = (slot.phase.due(), slot.fresh().is_some());
        slot.settling.remove(path);
        slot.expected.retain(|(p, _)| p != path);
        if rel.as_os_str().is_empty() {
            // The root itself was created, removed or replaced (a root nested in a
            // watched one): whatever is there now is built again, and the worker checks
            // first that it is still the root.
            if !matches!(event, WatchEvent::Changed(_)) {
                slot.schedule(now);
            }
        } else {
            settle(slot, event, rel.as_os_str().as_bytes(), meta, now);
        }
        wake |= before != (slot.phase.due(), slot.fresh().is_some());
    }
    wake
}

/// Applies a settled event to one root's slot; `meta` is the path's `lstat` now (`None`
/// also when it was not read: see `FileIndex::needs_stat`).
///
/// A content change refreshes the file in place. A creation or removal that can change
/// what the index holds is recorded for the next update ([`update::update`]), which lists
/// that directory again; a change of ignore rules (or of a directory's own attributes)
/// makes the root rebuild. Deciding that an event does not matter (inside an ignored or
/// hidden directory, an ignored file re-created) takes a few binary searches.
///
/// [`update::update`]: super::update::update
fn settle(
    slot: &mut Slot,
    event: &WatchEvent,
    rel: &[u8],
    meta: Option<&std::fs::Metadata>,
    now: Instant,
) {
    let (Some(index), false) = (slot.current.clone(), slot.building()) else {
        // Building (or never built): what lands will be compared with nothing older, so
        // record the path and let the update after it decide against the new index.
        match event {
            WatchEvent::Changed(path) => {
                if let Some(job) = slot.phase.job_mut() {
                    job.restat.push(path.clone());
                }
            }
            _ if !is_hidden(rel) || is_ignore_name(rel) => slot.record(rel, now),
            _ => {}
        }
        return;
    };
    enum Action {
        Nothing,
        Update,
        Rebuild,
    }
    let file = index.find_file(as_path(rel));
    let action = match event {
        WatchEvent::Changed(_) | WatchEvent::Created(_) if file.is_some() => {
            // Same file set; refresh size, mtime and identity (a replacement keeps the entry). No
            // longer a regular file: its directory is listed again.
            match index.store_stat(file.expect("checked"), meta) {
                true => Action::Nothing,
                false => Action::Update,
            }
        }
        WatchEvent::Changed(_) => {
            match index.find_dir(as_path(rel)).is_some() || index.ignore_rules_at(rel) {
                true => Action::Rebuild,
                false => Action::Nothing,
            }
        }
        _ if index.ignore_rules_at(rel) => Action::Rebuild,
        WatchEvent::Created(_) => {
            let still_ignored = index.find_ignored(rel).is_some_and(|i| {
                let was_dir = index.ignored[i].is_dir;
                meta.is_some_and(|m| m.is_dir() == was_dir && (m.is_dir() || m.is_file()))
            });
            match !still_ignored && !is_hidden(rel) && index.parent_visited(rel) {
                true => Action::Update,
                false => Action::Nothing,
            }
        }
        // Whatever it was (a file, a directory, an ignored or special entry), the walk
        // met it only if its directory is visited.
        WatchEvent::Removed(_) => match !is_hidden(rel) && index.parent_visited(rel) {
            true => Action::Update,
            false => Action::Nothing,
        },
        _ => Action::Nothing,
    };
    match action {
        Action::Nothing => {}
        Action::Update => slot.record(rel, now),
        Action::Rebuild => slot.schedule(now),
    }
}
