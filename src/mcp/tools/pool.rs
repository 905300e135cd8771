//! Running a search tool's blocking work: resolving the targets it names, picking the
//! lane of the process-wide search pool ([`rootgrep_core::pool`]; [`lane_for`] picks the quick
//! lane for small requests), and running on a lease of it with progress and cancellation.
//! `grep`, `glob` and the symbol tools all run through here.

use std::path::PathBuf;
use std::sync::Arc;

use super::args::OneOrMany;
use super::context::{Call, resolve_checked};
use crate::mcp::hints;
use crate::mcp::progress::Reporter;
use crate::mcp::render::Answer;
use rootgrep_core::access::Access;
use rootgrep_core::pool::{Lane, Pool};
use rootgrep_core::walk::Control;

/// Resolves the `path` argument into search targets (or every root).
pub(crate) async fn targets(
    call: &Call<'_>,
    path: Option<&OneOrMany>,
) -> Result<Vec<PathBuf>, Answer> {
    let named = path.cloned().map(OneOrMany::into_vec).unwrap_or_default();
    resolve_targets(call, named).await
}

/// Resolves and authorizes the named paths (each must exist), or every existing root when
/// none is named: the targets of grep, glob and the symbol tools.
pub(super) async fn resolve_targets(
    call: &Call<'_>,
    named: Vec<String>,
) -> Result<Vec<PathBuf>, Answer> {
    if named.is_empty() {
        if let Some(answer) = super::no_roots(&call.roots) {
            return Err(answer);
        }
        let targets = call.roots.existing();
        if targets.is_empty() {
            return Err(Answer::error(format!(
                "no workspace root exists ({}); pass a path",
                hints::roots(&call.roots)
            )));
        }
        return Ok(targets);
    }
    let mut targets = Vec::with_capacity(named.len());
    for path in &named {
        let resolved = resolve_checked(call, path, Access::Read).await?;
        if !resolved.exists {
            return Err(Answer::error(format!(
                "{}: no such file or directory",
                rootgrep_core::roots::path_display(&resolved.path)
            )));
        }
        targets.push(resolved.path);
    }
    Ok(targets)
}

/// Total size of the files a request names up to which it is small (a search or parse of
/// them takes milliseconds): it may run on the pool's quick lane.
pub(crate) const QUICK_BYTES: u64 = 1 << 20;

/// The pool lane of a request over `targets` (see [`rootgrep_core::pool`]): quick when it is served
/// from the file index's memory (`indexed`), or when every target is a regular file and
/// together they hold at most [`QUICK_BYTES`]; wide otherwise. Asked on the blocking pool
/// (it reads the targets' metadata).
pub(super) async fn lane_for(targets: &[PathBuf], indexed: bool) -> Lane {
    if indexed {
        return Lane::Quick;
    }
    let targets = targets.to_vec();
    let small = super::blocking(move || {
        let mut bytes = 0u64;
        targets
            .iter()
            .all(|target| match std::fs::metadata(target) {
                Ok(meta) if meta.is_file() => {
                    bytes = bytes.saturating_add(meta.len());
                    bytes <= QUICK_BYTES
                }
                _ => false,
            })
    });
    match small.await {
        Ok(true) => Lane::Quick,
        _ => Lane::Wide,
    }
}

/// The answer to a call during which a stored index it may have read was cut short by
/// another program (`store::faults`).
pub(crate) const DAMAGED_MEANWHILE: &str = "a stored index file was cut short by another \
    program while this call read it; the index is rebuilt from the files: call again";

/// Runs a blocking search, and the rendering of its answer, off the async executor with
/// progress reporting; `None` when the call was cancelled (the search is told to stop, and
/// rmcp sends no response). The work runs on a lease of the process-wide search pool
/// ([`rootgrep_core::pool`]: waited for in line, cancellable while it waits): `threads` threads
/// that take turns at its slots, which the pool lends and takes back as requests come and
/// go. When cancelled, returns only once the blocking work has stopped, so the request
/// keeps counting against the concurrency limit until it has. `on_cancel` runs beside
/// `Control::cancel` (the symbol tools also interrupt a parse).
pub(super) async fn run(
    call: &Call<'_>,
    noun: &'static str,
    lane: Lane,
    total: Option<u64>,
    on_cancel: impl FnOnce(),
    work: impl FnOnce(&Control, usize) -> Answer + Send + 'static,
) -> Option<Answer> {
    let ct = &call.ctx.ct;
    if ct.is_cancelled() {
        return None; // cancelled before it started: no work at all
    }
    let lease = tokio::select! {
        lease = Pool::global().acquire(lane) => lease,
        _ = ct.cancelled() => return None,
    };
    let threads = lease.threads();
    let control = Arc::new(Control::sharing(lease.gate()));
    let reporter = Reporter::start(call.ctx, control.clone(), total, noun);
    let worker = control.clone();
    let mut handle = tokio::task::spawn_blocking(move || {
        let faults = rootgrep_core::store::faults::count();
        let mut answer = work(&worker, threads);
        drop(lease); // the slots are free again only when the work is done
        if rootgrep_core::store::faults::count() != faults {
            // A mapped store file was cut short while this ran: the answer may rest on
            // zeros. The index dropped it; the next call reads the files.
            answer = Answer::error(DAMAGED_MEANWHILE.to_string());
        }
        answer
    });
    let outcome = tokio::select! {
        joined = &mut handle => Some(joined),
        _ = ct.cancelled() => {
            control.cancel();
            on_cancel();
            // The search checks the flag at least once per buffer; wait for it to stop.
            let _ = handle.await;
            None
        }
    };
    reporter.finish().await;
    match outcome? {
        Ok(answer) => Some(answer),
        Err(err) => Some(Answer::error(format!(
            "internal error in the search: {err}"
        ))),
    }
}

/// Frees `value` on a blocking thread instead of here: a large search outcome (an entry
/// with its strings for every line of a page) takes a while to free, time its answer need
/// not wait for.
pub(super) fn free_later<T: Send + 'static>(value: T) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn_blocking(move || drop(value))),
        Err(_) => drop(value),
    }
}

/// The number of files a search will examine, when the fresh index knows it: every target
/// a directory with a fresh snapshot, and a query the index can answer. Progress then
/// carries a `total`. Only asked when the client wants progress: a fresh snapshot costs a
/// round of the watcher's barrier (a rename and two thread hops, up to `SYNC_WAIT` when
/// the watcher is behind), which a call without a progress token would pay for nothing;
/// and asked off the executor, since that round blocks.
pub(crate) async fn known_total(
    call: &Call<'_>,
    targets: &[PathBuf],
    walks_more: bool,
) -> Option<u64> {
    call.ctx.meta.get_progress_token()?;
    let index = call.session.live.as_ref()?.index.clone();
    if walks_more {
        return None;
    }
    let targets = targets.to_vec();
    let count = move || -> Option<u64> {
        let mut total = 0u64;
        for target in &targets {
            let snapshot = index.snapshot_for(target)?;
            let rel = target.strip_prefix(snapshot.root()).ok()?;
            total += snapshot.files_under(rel).len() as u64;
        }
        Some(total)
    };
    super::blocking(count).await.ok().flatten()
}

/// Whether the fresh file index will serve a search of `targets` (every target under a
/// fresh root, `walks_more` false), as far as the events applied so far go: a glob it
/// serves reads nothing from the disk and takes the quick lane.
pub(crate) fn index_serves(call: &Call<'_>, targets: &[PathBuf], walks_more: bool) -> bool {
    let Some(live) = call.session.live.as_ref() else {
        return false;
    };
    !walks_more && targets.iter().all(|t| live.index.looks_fresh_for(t))
}
