//! What every tool handler works with: the call's context ([`Call`]: the session, the
//! request, its roots), resolving and checking path arguments (asking the user when a
//! path is outside the roots), and running blocking domain work off the executor.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::mcp::ask;
use crate::mcp::failure::{Failure, Reason};
use crate::mcp::render::Answer;
use crate::mcp::session::Session;
use rootgrep_core::access::Access;
use rootgrep_core::roots::{Resolved, RootSet, resolve};

/// Everything a tool handler needs.
pub struct Call<'a> {
    pub session: &'a Arc<Session>,
    pub ctx: &'a RequestContext<RoleServer>,
    pub roots: Arc<RootSet>,
    /// Set for 2026-07-28 requests: permission questions become `input_required`.
    pub modern: Option<&'a crate::mcp::modern::ModernCall>,
}

impl Call<'_> {
    pub fn budget(&self) -> usize {
        self.session.config.max_output_bytes
    }

    /// What this call's answer may leave out as shown before in this session (see
    /// [`crate::mcp::shown`]): nothing for a 2026-07-28 request, which stands alone.
    pub fn recall(&self, repeat: Option<bool>) -> crate::mcp::shown::Recall {
        let shown = self.modern.is_none().then(|| self.session.shown.clone());
        crate::mcp::shown::Recall::new(shown, repeat.unwrap_or(false))
    }

    /// How this call's answer names the files it lists (relative to the one root, or
    /// absolute).
    pub fn paths(&self) -> crate::mcp::render::paths::Paths {
        crate::mcp::render::paths::Paths::new(&self.roots, self.session.config.paths)
    }

    /// The live file index (none with `--no-watch` or in `rootgrep call`).
    pub fn file_index(&self) -> Option<Arc<rootgrep_core::index::FileIndex>> {
        self.session.live.as_ref().map(|live| live.index.clone())
    }

    /// The file and content indexes a search reads (none without the watcher), owned so
    /// that a blocking job can take them.
    pub fn search_indexes(&self) -> SearchIndexes {
        let live = self.session.live.as_ref();
        SearchIndexes {
            files: live.map(|live| live.index.clone()),
            content: live.and_then(|live| live.content.clone()),
        }
    }

    /// The live symbol index (none without the watcher, and on Windows for now).
    pub fn symbol_index(&self) -> Option<Arc<rootgrep_core::symbols::index::SymbolIndex>> {
        self.session
            .live
            .as_ref()
            .and_then(|live| live.symbols.clone())
    }
}

/// The live file and content indexes, held for one call (see [`Call::search_indexes`]).
pub struct SearchIndexes {
    files: Option<Arc<rootgrep_core::index::FileIndex>>,
    content: Option<Arc<rootgrep_core::content::index::ContentIndex>>,
}

impl SearchIndexes {
    /// What the core's searches borrow (`None` without a file index).
    pub fn get(&self) -> Option<rootgrep_core::search::Indexes<'_>> {
        let files = self.files.as_deref()?;
        Some(rootgrep_core::search::Indexes {
            files,
            content: self.content.as_deref(),
        })
    }
}

/// Resolves a path argument and checks (or asks for) access. `Err` is the tool error.
pub async fn resolve_checked(
    call: &Call<'_>,
    arg: &str,
    access: Access,
) -> Result<Resolved, Answer> {
    checked_path(call, arg, access, resolve)
        .await
        .map_err(Answer::failure)
}

/// Like [`resolve_checked`] with [`rootgrep_core::roots::resolve_entry`] (the final symlink is not
/// followed).
pub async fn resolve_entry_checked(
    call: &Call<'_>,
    arg: &str,
    access: Access,
) -> Result<Resolved, Answer> {
    checked_path(call, arg, access, rootgrep_core::roots::resolve_entry)
        .await
        .map_err(Answer::failure)
}

pub(super) async fn checked_path(
    call: &Call<'_>,
    arg: &str,
    access: Access,
    how: Resolver,
) -> Result<Resolved, Failure> {
    let asker = Asker {
        session: call.session,
        ctx: call.ctx,
        modern: call.modern,
        roots: &call.roots,
    };
    asker.checked(arg, access, how).await
}

/// How a path argument is resolved ([`resolve`] or [`rootgrep_core::roots::resolve_entry`]).
pub type Resolver = fn(&str, &RootSet) -> Result<Resolved, rootgrep_core::roots::PathError>;

/// What checking a path needs: the session, the request (to ask its client), and the
/// roots it is judged against.
pub struct Asker<'a> {
    pub session: &'a Session,
    pub ctx: &'a RequestContext<RoleServer>,
    pub modern: Option<&'a crate::mcp::modern::ModernCall>,
    pub roots: &'a Arc<RootSet>,
}

impl Asker<'_> {
    /// The one way a client's path argument becomes a usable path: resolved off the async
    /// executor (canonicalising touches the disk, which may hang on a network mount), then
    /// access checked, asking the user when it lies outside the roots. Containment comes
    /// first: a failure that tells what is on the disk (a non-directory named with `/`,
    /// `..` after a missing directory, a link loop) is shown only once the place it was
    /// found is inside the roots or allowed; outside them such a path gets the same answer
    /// as every other path there, naming only what the client sent. `Err` is the failure,
    /// naming the argument as sent.
    pub async fn checked(
        &self,
        arg: &str,
        access: Access,
        how: Resolver,
    ) -> Result<Resolved, Failure> {
        let (given, roots) = (arg.to_string(), self.roots.clone());
        let outcome = blocking(move || how(&given, &roots))
            .await
            .map_err(|_| Failure::new(Reason::Internal, "internal error resolving a path"))
            .map_err(|failure| failure.about(arg))?;
        let failure = match outcome {
            Ok(resolved) => match self.authorize(&resolved, access).await {
                Ok(()) => return Ok(resolved),
                Err(failure) => failure,
            },
            Err(rootgrep_core::roots::PathError::Found(found)) => {
                let place = found.as_resolved(arg, self.roots);
                match self.authorize(&place, access).await {
                    Ok(()) => Failure::of(&rootgrep_core::roots::PathError::Found(found)),
                    Err(failure) => failure,
                }
            }
            // About the argument's text alone: nothing read from the disk.
            Err(err) => Failure::of(&err),
        };
        Err(failure.about(arg))
    }

    /// Checks (or asks for) access to an already resolved path.
    pub async fn authorize(&self, resolved: &Resolved, access: Access) -> Result<(), Failure> {
        match self.modern {
            Some(modern) => modern.authorize(self.session, self.roots, resolved, access),
            None => ask::authorize(self.session, self.ctx, resolved, access).await,
        }
    }
}

/// Runs blocking domain work on the blocking pool; a panic there becomes an error answer.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Answer> {
    tokio::task::spawn_blocking(work).await.map_err(internal)
}

/// The answer for blocking work that panicked (or was aborted). The panic's message can
/// quote client input, so it goes to stderr only; the client hears that it was internal.
fn internal(err: tokio::task::JoinError) -> Answer {
    tracing::error!(target: crate::mcp::logging::STDERR_ONLY, "blocking work failed: {err}");
    Answer::refused(Reason::Internal, "internal error in this tool call")
}

/// Runs blocking domain work on the blocking pool with a stop flag that the request's
/// cancellation sets. `Ok(None)` when the request was cancelled (rmcp sends no response
/// then); the work is still awaited until it notices the flag, so it keeps its place among
/// the running requests until it has really stopped.
pub async fn blocking_stoppable<T: Send + 'static>(
    call: &Call<'_>,
    work: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<Option<T>, Answer> {
    if call.ctx.ct.is_cancelled() {
        return Ok(None); // cancelled before it started: no work at all
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let mut handle = tokio::task::spawn_blocking(move || work(&flag));
    tokio::select! {
        joined = &mut handle => joined.map(Some).map_err(internal),
        _ = call.ctx.ct.cancelled() => {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.await;
            Ok(None)
        }
    }
}

/// The answer for a tool that works on the roots by default when there are none: the
/// client sent an empty roots list and no `DIR` was given (PRODUCT §2: no access; the
/// working directory is never served in their place). Says how to grant access.
pub(crate) fn no_roots(roots: &rootgrep_core::roots::RootSet) -> Option<Answer> {
    roots.roots.is_empty().then(|| {
        Answer::refused(
            Reason::NoRoots,
            "no workspace roots: the client sent an empty roots list and rootgrep was started \
             without a directory, so no directory is served (the working directory is not used \
             in their place). To grant access: add a folder to the workspace in the host (it \
             sends it as a root), start rootgrep with a directory argument, or name an \
             absolute path (the user is asked to allow it)",
        )
    })
}
