//! Files as MCP resources: the `file:///{+path}` template, `resources/read` (text, or base64
//! `blob` for binary files, with a MIME type), and `resources/list` over the files of the
//! roots (gitignore-aware, sorted, pages of at most [`PAGE`] with an opaque cursor).
//! The cursor names the last path served (see [`encode_cursor`]), and the next page starts
//! strictly after it: files created or deleted before it cannot make a page skip or repeat
//! files that existed all along, as an offset would.
//! A listing reports `notifications/progress` when asked (files examined by its walk).
//! Reads go through the same path policy as the tools, so a read outside the roots asks the
//! user or is refused. Every error's `data` says why in a field: `{reason, uri,
//! allowedRoots?}` ([`rpc_error`]; a missing file is `-32002`).

use rootgrep_core::platform::os::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, ResourceTemplate,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::mcp::failure::{Failure, Reason, sent_text};
use crate::mcp::modern::ModernCall;
use crate::mcp::progress::{Reporter, thousands};
use crate::mcp::session::Session;
use crate::mcp::tools::Asker;
use rootgrep_core::access::Access;
use rootgrep_core::files::mime::mime_type;
use rootgrep_core::files::read::{self, ReadError, Whole};
use rootgrep_core::pool::{Lane, Pool};
use rootgrep_core::roots::{RootSet, file_uri_from_path, path_from_file_uri, resolve};
use rootgrep_core::search::{self, GlobQuery, SortBy};
use rootgrep_core::walk::Control;

/// The resource template: any file by absolute path.
pub const TEMPLATE: &str = "file:///{+path}";
/// Largest page of `resources/list`.
pub const PAGE: usize = 1000;
/// Largest file served by `resources/read` (16 MiB): a resource comes back whole, in one
/// message held in memory, so a larger file is refused with an error that names this cap and
/// points to read_file, which pages.
pub const MAX_RESOURCE_BYTES: u64 = 16 * 1024 * 1024;

pub fn templates() -> ListResourceTemplatesResult {
    let template: ResourceTemplate = serde_json::from_value(json!({
        "uriTemplate": TEMPLATE,
        "name": "file",
        "title": "Workspace file",
        "description": "Any file inside the workspace roots, by absolute path \
                        (e.g. file:///home/me/project/src/main.rs). Text files are returned \
                        as text, others as base64 blobs. Files over 16 MiB are refused: read \
                        them in pages with the read_file tool.",
    }))
    .expect("static template is valid");
    ListResourceTemplatesResult::with_all_items(vec![template])
}

/// Marks the cursors of this scheme (anything else is refused, not misread).
const CURSOR_PREFIX: &str = "after:";

/// The `nextCursor` after a page whose last path is `last`: opaque to the client (base64
/// of the path's bytes, so any file name survives).
pub fn encode_cursor(last: &Path) -> String {
    let bytes = last.as_os_str().as_bytes();
    format!(
        "{CURSOR_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// The path a cursor names; `None` for anything this server did not hand out.
pub fn decode_cursor(cursor: &str) -> Option<PathBuf> {
    let encoded = cursor.strip_prefix(CURSOR_PREFIX)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .ok()?;
    let path = PathBuf::from(std::ffi::OsString::from_vec(bytes));
    path.is_absolute().then_some(path)
}

/// `resources/list`: the files under the roots, sorted by path, one page per cursor. A
/// walk of a large tree takes a while: with a progress token, it reports the files
/// examined (`listed 12,345 files`).
pub async fn list(
    session: &Session,
    ctx: &RequestContext<RoleServer>,
    roots: &RootSet,
    cursor: Option<String>,
) -> Result<ListResourcesResult, McpError> {
    let after = match cursor.as_deref() {
        None | Some("") => None,
        Some(cursor) => Some(decode_cursor(cursor).ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "invalid cursor \"{}\": pass back a nextCursor from resources/list, \
                     or none to start from the beginning",
                    rootgrep_core::quote::echo(cursor)
                ),
                Some(json!({ "reason": Reason::InvalidArgument.code() })),
            )
        })?),
    };
    let targets = roots.existing();
    let mut query = GlobQuery::new("*");
    query.sort = SortBy::Path;
    query.after = after;
    query.limit = Some(PAGE);
    // The fresh index answers without a walk; otherwise (or for what it cannot answer
    // exactly) the disk is walked.
    let index = session.live.as_ref().map(|live| live.index.clone());
    // A listing takes its slot from the same process-wide pool as grep and glob (see
    // `rootgrep_core::pool`), on one walker thread, so many listings at once queue instead of each
    // starting a thread per core. One the fresh index serves from memory is quick: it
    // never waits behind a long search.
    // (Asked without a round of the watcher's barrier, which the listing itself takes:
    // the lane is a choice a stale view cannot make wrong.)
    let served = index
        .as_ref()
        .is_some_and(|index| targets.iter().all(|t| index.looks_fresh_for(t)));
    let lease = Pool::global()
        .acquire(if served { Lane::Quick } else { Lane::Wide })
        .await;
    query.threads = 1;
    let control = Arc::new(Control::sharing(lease.gate()));
    let reporter = Reporter::start_with(ctx, control.clone(), None, |examined, _| {
        format!("listed {} files", thousands(examined))
    });
    let outcome = tokio::task::spawn_blocking(move || {
        let outcome = match &index {
            Some(index) => search::glob_indexed(&query, &targets, index, &control),
            None => search::glob(&query, &targets, &control),
        };
        drop(lease); // held until the walk is done
        outcome
    })
    .await;
    // No progress after the response: stopped before it is made.
    reporter.finish().await;
    let outcome = outcome
        .map_err(|err| internal("listing", &err))?
        .map_err(|err| {
            let message = crate::mcp::hints::search(&err);
            McpError::internal_error(message, Some(internal_data()))
        })?;
    let resources: Vec<Value> = outcome
        .files
        .iter()
        .map(|found| {
            let name = found
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            json!({
                "uri": file_uri_from_path(&found.path),
                "name": name,
                "title": rootgrep_core::roots::path_text(&found.path),
                "mimeType": mime_type(&found.path, true),
            })
        })
        .collect();
    let mut result = json!({ "resultType": "complete", "resources": resources });
    if outcome.next_offset.is_some()
        && let Some(last) = outcome.files.last()
    {
        result["nextCursor"] = Value::String(encode_cursor(&last.path));
    }
    serde_json::from_value(result).map_err(|err| internal("listing", &err))
}

/// `resources/read` for a `file://` URI.
pub async fn read_resource(
    session: &Session,
    ctx: &RequestContext<RoleServer>,
    uri: &str,
    roots: &RootSet,
    modern: Option<&ModernCall>,
) -> Result<ReadResourceResult, McpError> {
    not_a_file_uri(uri, roots)?;
    // `resolve` takes the URI itself, so non-UTF-8 names survive. Access is decided
    // before anything is said about the file: outside the roots, whether it exists is not
    // for the client to learn.
    let asker = Asker {
        session,
        ctx,
        modern,
        roots: &Arc::new(roots.clone()),
    };
    let resolved = asker
        .checked(uri, Access::Read, resolve)
        .await
        .map_err(|failure| rpc_error(failure, roots))?;
    if !resolved.exists {
        return Err(not_found(uri));
    }
    let target = resolved.path.clone();
    let whole = tokio::task::spawn_blocking(move || read::read_whole(&target, MAX_RESOURCE_BYTES))
        .await
        .map_err(|err| internal("read", &err))?;
    let contents = match whole {
        Ok(Whole::Text(text)) => json!({
            "uri": uri,
            "mimeType": mime_type(&resolved.path, true),
            "text": text,
        }),
        Ok(Whole::Binary(bytes)) => json!({
            "uri": uri,
            "mimeType": mime_type(&resolved.path, false),
            "blob": base64::engine::general_purpose::STANDARD.encode(bytes),
        }),
        Ok(Whole::TooLarge(size)) => {
            return Err(McpError::invalid_params(
                format!(
                    "{} is {} ({size} bytes), over the {} ({MAX_RESOURCE_BYTES} bytes) limit \
                     of resources/read; read it in pages with the read_file tool \
                     (offset/limit)",
                    rootgrep_core::roots::path_display(&resolved.path),
                    crate::mcp::render::human_size(size),
                    crate::mcp::render::human_size(MAX_RESOURCE_BYTES),
                ),
                Some(json!({
                    "reason": Reason::TooLarge.code(),
                    "uri": sent_text(uri),
                    "size": size,
                    "max_bytes": MAX_RESOURCE_BYTES,
                })),
            ));
        }
        Err(ReadError::NotFound(_)) => return Err(not_found(uri)),
        Err(err) => return Err(rpc_error(Failure::of(&err).about(uri), roots)),
    };
    serde_json::from_value(json!({ "resultType": "complete", "contents": [contents] }))
        .map_err(|err| internal("read", &err))
}

/// The canonical path a subscription is kept under: inside the roots (or a granted
/// directory). The file need not exist yet (its creation is an update).
pub fn subscribable(session: &Session, uri: &str) -> Result<std::path::PathBuf, McpError> {
    let roots = session.roots();
    not_a_file_uri(uri, &roots)?;
    let outside = || {
        let message = format!(
            "{} is outside the workspace roots ({}); only files inside them can be \
             subscribed to",
            rootgrep_core::quote::echo(uri),
            crate::mcp::hints::roots(&roots)
        );
        rpc_error(
            Failure::new(Reason::OutsideRoots, message).about(uri),
            &roots,
        )
    };
    // `resolve` takes the URI itself, so non-UTF-8 names survive. A failure found on the
    // disk is told only inside the roots (or a granted directory); elsewhere the URI gets
    // the same answer as any other outside them.
    let allowed = |resolved: &rootgrep_core::roots::Resolved| {
        session
            .grants
            .verdict(resolved, Access::Read, &roots, &session.config.confine)
            == rootgrep_core::access::Verdict::Allowed
    };
    match resolve(uri, &roots) {
        Ok(resolved) if allowed(&resolved) => Ok(resolved.path),
        Ok(_) => Err(outside()),
        Err(rootgrep_core::roots::PathError::Found(found))
            if !allowed(&found.as_resolved(uri, &roots)) =>
        {
            Err(outside())
        }
        Err(err) => Err(rpc_error(Failure::of(&err).about(uri), &roots)),
    }
}

/// `resources/unsubscribe`: ends the subscription made with this URI (or naming the same
/// file). Judged against the subscription table, not the roots in force: a subscription
/// made before the roots changed must still be removable, or its updates would resume when
/// the root came back. Unsubscribing from something not subscribed is not an error.
pub fn unsubscribe(session: &Session, uri: &str) -> Result<(), McpError> {
    not_a_file_uri(uri, &session.roots())?;
    let path = resolve(uri, &session.roots())
        .ok()
        .map(|resolved| resolved.path);
    session.subscriptions.unsubscribe(uri, path.as_deref());
    Ok(())
}

/// The JSON-RPC error of a failure about a URI: `data: {reason, uri, allowedRoots?}`.
/// The code follows the reason: `-32002` (resource not found) for a missing file,
/// `-32603` for a bug, `-32602` (invalid params) for every other refusal.
pub fn rpc_error(failure: Failure, roots: &RootSet) -> McpError {
    let data = Some(failure.rpc_data(roots));
    match failure.reason {
        Reason::NotFound => McpError::resource_not_found(failure.message, data),
        Reason::Internal => McpError::internal_error(failure.message, data),
        _ => McpError::invalid_params(failure.message, data),
    }
}

/// Refuses a URI that is not a `file://` URI this server can serve.
fn not_a_file_uri(uri: &str, roots: &RootSet) -> Result<(), McpError> {
    path_from_file_uri(uri).map(drop).map_err(|err| {
        let message = format!("{}: {err}", rootgrep_core::quote::echo(uri));
        rpc_error(
            Failure::new(Reason::InvalidArgument, message).about(uri),
            roots,
        )
    })
}

fn not_found(uri: &str) -> McpError {
    McpError::resource_not_found(
        format!("no such file: {}", rootgrep_core::quote::echo(uri)),
        Some(json!({ "reason": Reason::NotFound.code(), "uri": sent_text(uri) })),
    )
}

/// A bug (blocking work that panicked, a result that would not serialize): the details,
/// which can quote client input, go to stderr only.
fn internal(what: &str, err: &dyn std::fmt::Display) -> McpError {
    tracing::error!(target: crate::mcp::logging::STDERR_ONLY, "{what} failed: {err}");
    McpError::internal_error(format!("internal error in {what}"), Some(internal_data()))
}

fn internal_data() -> Value {
    json!({ "reason": Reason::Internal.code() })
}
