//! Everything the server asks the client: its roots (`roots/list`) and the user's
//! permission for a path outside the roots (`elicitation/create`); [`ask_client`] is the
//! wait with a timeout and wire cancellation that `crate::mcp::sample` asks the host's model
//! with too.
//!
//! rmcp sends these requests but leaves the hard parts to us: it does not check the
//! client's capabilities, has no default timeout, and does not cancel our pending question
//! when the tool call that asked it is cancelled. Here every outbound request has a
//! timeout, is cancelled on the wire (`notifications/cancelled`) when abandoned, and a
//! client that never answers can never hang a tool call.
//!
//! The question and every answer about a path outside the roots name only the path as the
//! client sent it (never where it leads, nor whether it exists or is a directory), and the
//! question's texts have their control and bidi characters escaped
//! ([`rootgrep_core::quote::escape_for_display`]): a name cannot add a line to what the user reads.

#![allow(deprecated)] // Roots are deprecated in MCP 2026-07-28 but are the heart of legacy sessions.

use std::sync::Arc;

use rmcp::model::{
    ClientResult, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    ListRootsRequest, Request, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{Peer, RoleServer, ServiceError};
use serde_json::json;

use crate::mcp::failure::{Failure, Reason};
use crate::mcp::hints;
use crate::mcp::session::Session;
use rootgrep_core::access::{Access, Refusal, Verdict, grant_dir_for};
use rootgrep_core::quote::{echo, escape_for_display};
use rootgrep_core::roots::{Resolved, Root, path_from_file_uri};

/// Whether the client declared the `roots` capability.
pub fn client_has_roots(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.roots.is_some())
}

/// Asks for a roots refresh; bursts of `list_changed` collapse into one fetch in flight plus
/// at most one after it.
pub fn request_roots_refresh(session: Arc<Session>, peer: Peer<RoleServer>) {
    {
        let mut state = session.refresh.lock().unwrap_or_else(|e| e.into_inner());
        state.pending = true;
        if state.running {
            return;
        }
        state.running = true;
    }
    tokio::spawn(async move {
        loop {
            // Let a burst of notifications settle before asking.
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            {
                let mut state = session.refresh.lock().unwrap_or_else(|e| e.into_inner());
                if !state.pending {
                    state.running = false;
                    break;
                }
                state.pending = false;
            }
            fetch_roots(&session, &peer).await;
        }
    });
}

/// One `roots/list` round trip with a timeout; on failure the previous roots stay. The
/// answer is applied on the blocking pool: every root is canonicalised (a `stat` per
/// component, which may hang on a network mount) and the live layer re-targeted.
async fn fetch_roots(session: &Arc<Session>, peer: &Peer<RoleServer>) {
    let request = ServerRequest::ListRootsRequest(ListRootsRequest {
        method: Default::default(),
        extensions: Default::default(),
    });
    let timeout = session.roots_timeout();
    let outcome = match peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
        .await
    {
        Ok(handle) => handle.await_response().await,
        Err(err) => Err(err),
    };
    match outcome {
        Ok(rmcp::model::ClientResult::ListRootsResult(result)) => {
            let session = session.clone();
            let applied = tokio::task::spawn_blocking(move || {
                let mut notes = Vec::new();
                let roots: Vec<Root> = result
                    .roots
                    .into_iter()
                    .filter_map(|root| match path_from_file_uri(&root.uri) {
                        Ok(path) => Some(Root::new(path, root.name)),
                        Err(err) => {
                            let note = format!("ignored client root {}: {err}", echo(&root.uri));
                            tracing::warn!("{note}");
                            notes.push(note);
                            None
                        }
                    })
                    .collect();
                session.set_client_roots(roots, notes);
            })
            .await;
            if let Err(err) = applied {
                tracing::warn!(
                    event = "roots_list_failed",
                    "applying the client's roots failed: {err}"
                );
            }
        }
        Ok(other) => {
            tracing::warn!(
                "unexpected answer to roots/list ({other:?}); keeping the previous roots"
            );
        }
        Err(err) => {
            tracing::warn!(
                event = "roots_list_failed",
                "roots/list failed: {err}; keeping the previous roots"
            );
        }
    }
    session.mark_roots_ready();
}

/// Checks a resolved path for `access`, asking the user when it lies outside the roots.
/// `Err` carries the tool-error text for the model. A client that cannot be asked gets
/// the same answer for every path outside the roots, `--confine` or not.
pub async fn authorize(
    session: &Session,
    ctx: &RequestContext<RoleServer>,
    resolved: &Resolved,
    access: Access,
) -> Result<(), Failure> {
    let roots = session.roots();
    let confine = &session.config.confine;
    let refusal = match session.grants.verdict(resolved, access, &roots, confine) {
        Verdict::Allowed => return Ok(()),
        _ if !can_elicit(ctx) => Refusal::CannotAsk(NO_ELICITATION),
        Verdict::Refused(refusal) => refusal,
        Verdict::Ask => {
            return ask_user(session, ctx, resolved, access, &hints::roots(&roots))
                .await
                .map_err(|(reason, message)| Failure::new(reason, message));
        }
    };
    Err(Failure::new(
        refusal.into(),
        hints::refusal(refusal, &resolved.sent, access, &roots, confine),
    ))
}

/// Why a legacy client's user cannot be asked.
const NO_ELICITATION: &str =
    "this client cannot ask the user for permission (no elicitation support)";

/// Whether this client can be asked a form question.
fn can_elicit(ctx: &RequestContext<RoleServer>) -> bool {
    let old_protocol = ctx
        .protocol_version()
        .is_some_and(|v| v.as_str() < rmcp::model::ProtocolVersion::V_2025_06_18.as_str());
    !old_protocol
        && ctx
            .peer
            .supported_elicitation_modes()
            .contains(&rmcp::service::ElicitationMode::Form)
}

/// Asks the user whether `access` to a path outside the roots is allowed, and keeps what
/// they answered for the session.
async fn ask_user(
    session: &Session,
    ctx: &RequestContext<RoleServer>,
    resolved: &Resolved,
    access: Access,
    roots: &str,
) -> Result<(), (Reason, String)> {
    let sent = echo(&resolved.sent);
    let result = put_question(session, ctx, resolved, access, roots, &sent).await?;
    take_answer(session, resolved, access, &sent, result).await
}

/// Sends the permission question and waits for the answer, at most the elicitation
/// timeout; gives up (cancelling the request on the wire) when the time is up or the tool
/// call is cancelled. `sent` is the path as the client sent it, echoed.
async fn put_question(
    session: &Session,
    ctx: &RequestContext<RoleServer>,
    resolved: &Resolved,
    access: Access,
    roots: &str,
    sent: &str,
) -> Result<ElicitResult, (Reason, String)> {
    let (message, schema) = permission_question(&resolved.sent, access, roots, true);
    let schema: ElicitationSchema = serde_json::from_value(schema).map_err(|err| {
        let why = format!("internal error building the permission question: {err}");
        (Reason::Internal, why)
    })?;
    let request =
        ServerRequest::ElicitRequest(Request::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        }));
    let timeout = session.config.elicitation_timeout;
    let late = "the user did not answer in time";
    let outcome = match ask_client(ctx, request, timeout, late).await {
        Err(err) => {
            let why = format!("could not ask the user about {sent}: {err}");
            return Err((Reason::NoAnswer, why));
        }
        Ok(Waited::Answered(outcome)) => outcome,
        Ok(Waited::TimedOut) => {
            return Err((
                Reason::NoAnswer,
                format!(
                    "no answer from the user within {}s about {} {sent}; nothing was done",
                    timeout.as_secs(),
                    access.verb()
                ),
            ));
        }
        Ok(Waited::Cancelled) => return Err((Reason::Cancelled, "cancelled".to_string())),
    };
    let result = match outcome {
        Some(Ok(rmcp::model::ClientResult::ElicitResult(result))) => result,
        Some(Ok(other)) => {
            let why = rootgrep_core::quote::cut(
                &format!("unexpected answer to the permission question: {other:?}"),
                rootgrep_core::quote::ECHO_MAX_CHARS,
            )
            .into_owned();
            return Err((Reason::NoAnswer, why));
        }
        Some(Err(err)) => {
            let why = format!(
                "the client could not ask the user about {sent}: {}",
                echo(&err.to_string())
            );
            return Err((Reason::NoAnswer, why));
        }
        None => {
            let why = "the connection closed while asking the user".to_string();
            return Err((Reason::NoAnswer, why));
        }
    };
    Ok(result)
}

/// How a question sent to the client ended ([`ask_client`]).
pub(crate) enum Waited {
    /// Its answer, or `None` when the connection closed first.
    Answered(Option<Result<ClientResult, ServiceError>>),
    /// No answer within the time allowed.
    TimedOut,
    /// The tool call that asked was cancelled.
    Cancelled,
}

/// Sends `request` to the client and waits for its answer, at most `timeout`; gives up,
/// cancelling the request on the wire (`late` says why when the time is up), when the time
/// is up or the tool call is cancelled. `Err`: the request could not be sent.
pub(crate) async fn ask_client(
    ctx: &RequestContext<RoleServer>,
    request: ServerRequest,
    timeout: std::time::Duration,
    late: &str,
) -> Result<Waited, ServiceError> {
    let handle = (ctx.peer)
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    let mut rx = handle.rx;
    tokio::select! {
        answer = &mut rx => Ok(Waited::Answered(answer.ok())),
        _ = tokio::time::sleep(timeout) => {
            cancel_outbound(&ctx.peer, handle.id.clone(), late).await;
            Ok(Waited::TimedOut)
        }
        _ = ctx.ct.cancelled() => {
            cancel_outbound(&ctx.peer, handle.id.clone(), "the tool call was cancelled").await;
            Ok(Waited::Cancelled)
        }
    }
}

/// What the user answered: allowed (remembered as a grant for the directory when asked),
/// refused (remembered for the path as named), or dismissed (nothing remembered).
async fn take_answer(
    session: &Session,
    resolved: &Resolved,
    access: Access,
    sent: &str,
    result: ElicitResult,
) -> Result<(), (Reason, String)> {
    match result.action {
        ElicitationAction::Accept => {
            let content = result.content.unwrap_or_default();
            let allow = content
                .get("allow")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            let remember = content
                .get("remember")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            if allow {
                if remember {
                    // Allowed: now the disk may be asked what the path is. A `stat`, which
                    // may hang on a network mount, so on the blocking pool.
                    let path = resolved.path.clone();
                    let is_dir = tokio::task::spawn_blocking(move || path.is_dir())
                        .await
                        .unwrap_or(false);
                    let dir = grant_dir_for(&resolved.path, is_dir);
                    tracing::info!(event = "access_granted", dir = %rootgrep_core::roots::path_text(&dir), access = access.verb(), "user granted a directory");
                    session.grants.grant_dir(dir, access);
                }
                Ok(())
            } else {
                session.grants.refuse(resolved.given.clone(), access);
                Err((Reason::RefusedByUser, refused(sent, access)))
            }
        }
        ElicitationAction::Decline => {
            session.grants.refuse(resolved.given.clone(), access);
            Err((Reason::RefusedByUser, refused(sent, access)))
        }
        _ => Err((
            Reason::RefusedByUser,
            format!(
                "the user dismissed the question about {} {sent}; nothing was done (you may ask again later)",
                access.verb(),
            ),
        )),
    }
}

/// The question put to the user about a path outside the roots: its message and a flat,
/// primitive form (`allow`, and `remember` when the answer can be kept for the session).
/// Shared by session (elicitation request) and stateless (`input_required`) clients.
///
/// It names `sent`, the path exactly as the client sent it, and nothing the disk says
/// about it (so "remember" names that path, or its directory when it is a file, without
/// saying which it is). Every text in it is escaped for display; the path is not cut (the
/// user must see all of what is allowed; it is at most 12 KiB, see `roots::resolve`).
pub fn permission_question(
    sent: &str,
    access: Access,
    roots: &str,
    remember: bool,
) -> (String, serde_json::Value) {
    let shown = escape_for_display(sent);
    let message = escape_for_display(&format!(
        "rootgrep wants to {} {shown}, which is outside the workspace roots ({roots}). Allow it?",
        access.verb(),
    ))
    .into_owned();
    let mut schema = json!({
        "type": "object",
        "properties": {
            "allow": {
                "type": "boolean",
                "title": "Allow",
                "description": format!("Allow this {} of {shown}", access.verb()),
            },
        },
        "required": ["allow"],
    });
    if remember {
        schema["properties"]["remember"] = json!({
            "type": "boolean",
            "title": "Remember",
            "description": format!(
                "Allow {}s in {shown} (in the directory that holds it, if it is a file) for \
                 the rest of the session",
                access.verb(),
            ),
            "default": false,
        });
    }
    (message, schema)
}

fn refused(sent: &str, access: Access) -> String {
    format!(
        "the user refused to let this server {} {sent} (outside the workspace roots); it will not be asked again this session",
        access.verb(),
    )
}

/// Tells the client we no longer wait for our request `id`. Bounded: when the session is
/// shutting down (stdin ended) nobody takes the notification, and the tool call that gave
/// up on its question must still finish at once.
async fn cancel_outbound(peer: &Peer<RoleServer>, id: rmcp::model::RequestId, reason: &str) {
    let params = rmcp::model::CancelledNotificationParam::new(Some(id), Some(reason.to_string()));
    match tokio::time::timeout(CANCEL_SEND_LIMIT, peer.notify_cancelled(params)).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::debug!("could not send notifications/cancelled: {err}"),
        Err(_) => tracing::debug!("notifications/cancelled not sent: the session is closing"),
    }
}

/// How long a wire cancellation of our own request may take to hand over.
const CANCEL_SEND_LIMIT: std::time::Duration = std::time::Duration::from_millis(50);
