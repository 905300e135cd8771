//! Everything the server asks the client: its roots (`roots/list`) and the user's
//! permission for a path outside the roots (`elicitation/create`).
//!
//! rmcp sends these requests but leaves the hard parts to us: it does not check the
//! client's capabilities, has no default timeout, and does not cancel our pending question
//! when the tool call that asked it is cancelled. Here every outbound request has a
//! timeout, is cancelled on the wire (`notifications/cancelled`) when abandoned, and a
//! client that never answers can never hang a tool call.

#![allow(deprecated)] // Roots are deprecated in MCP 2026-07-28 but are the heart of legacy sessions.

use std::sync::Arc;

use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ElicitationSchema, ListRootsRequest, Request,
    ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{Peer, RoleServer};
use serde_json::json;

use crate::access::{Access, Verdict, grant_dir_for};
use crate::mcp::session::Session;
use crate::roots::{Resolved, Root, path_from_file_uri};

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
                            let note = format!("ignored client root {}: {err}", root.uri);
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
                tracing::warn!("applying the client's roots failed: {err}");
            }
        }
        Ok(other) => {
            tracing::warn!(
                "unexpected answer to roots/list ({other:?}); keeping the previous roots"
            );
        }
        Err(err) => {
            tracing::warn!("roots/list failed: {err}; keeping the previous roots");
        }
    }
    session.mark_roots_ready();
}

/// Checks a resolved path for `access`, asking the user when it lies outside the roots.
/// `Err` carries the tool-error text for the model.
pub async fn authorize(
    session: &Session,
    ctx: &RequestContext<RoleServer>,
    resolved: &Resolved,
    access: Access,
) -> Result<(), String> {
    let roots = session.roots();
    match session
        .grants
        .verdict(&resolved.path, access, &roots, &session.config.confine)
    {
        Verdict::Allowed => Ok(()),
        Verdict::Refused(why) => Err(why),
        Verdict::Ask => ask_user(session, ctx, resolved, access, &roots.describe()).await,
    }
}

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

fn not_askable(resolved: &Resolved, access: Access, roots: &str) -> String {
    format!(
        "{} is outside the workspace roots ({roots}), and this client cannot ask the user for \
         permission (no elicitation support). To {} it, add its directory as a root in your \
         MCP client, or start rootgrep with that directory as a DIR argument.",
        crate::roots::path_text(&resolved.path),
        access.verb()
    )
}

async fn ask_user(
    session: &Session,
    ctx: &RequestContext<RoleServer>,
    resolved: &Resolved,
    access: Access,
    roots: &str,
) -> Result<(), String> {
    if !can_elicit(ctx) {
        return Err(not_askable(resolved, access, roots));
    }
    // Whether the path is a directory: a `stat`, which may hang on a network mount, so it
    // runs on the blocking pool.
    let path = resolved.path.clone();
    let is_dir = tokio::task::spawn_blocking(move || path.is_dir())
        .await
        .unwrap_or(false);
    let dir = grant_dir_for(&resolved.path, is_dir);
    let (message, schema) = permission_question(&resolved.path, access, roots, Some(&dir));
    let schema: ElicitationSchema = serde_json::from_value(schema)
        .map_err(|err| format!("internal error building the permission question: {err}"))?;
    let request =
        ServerRequest::ElicitRequest(Request::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        }));
    let handle = ctx
        .peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(|err| {
            format!(
                "could not ask the user about {}: {err}",
                crate::roots::path_text(&resolved.path)
            )
        })?;
    let timeout = session.config.elicitation_timeout;
    let mut rx = handle.rx;
    let outcome = tokio::select! {
        answer = &mut rx => answer.ok(),
        _ = tokio::time::sleep(timeout) => {
            cancel_outbound(&ctx.peer, handle.id.clone(), "the user did not answer in time").await;
            return Err(format!(
                "no answer from the user within {}s about {} {}; nothing was done",
                timeout.as_secs(), access.verb(), crate::roots::path_text(&resolved.path)
            ));
        }
        _ = ctx.ct.cancelled() => {
            cancel_outbound(&ctx.peer, handle.id.clone(), "the tool call was cancelled").await;
            return Err("cancelled".to_string());
        }
    };
    let result = match outcome {
        Some(Ok(rmcp::model::ClientResult::ElicitResult(result))) => result,
        Some(Ok(other)) => {
            return Err(format!(
                "unexpected answer to the permission question: {other:?}"
            ));
        }
        Some(Err(err)) => {
            return Err(format!(
                "the client could not ask the user about {}: {err}",
                crate::roots::path_text(&resolved.path)
            ));
        }
        None => return Err("the connection closed while asking the user".to_string()),
    };
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
                    tracing::info!(dir = %crate::roots::path_text(&dir), access = access.verb(), "user granted a directory");
                    session.grants.grant_dir(dir, access);
                }
                Ok(())
            } else {
                session.grants.refuse(resolved.path.clone(), access);
                Err(refused(resolved, access))
            }
        }
        ElicitationAction::Decline => {
            session.grants.refuse(resolved.path.clone(), access);
            Err(refused(resolved, access))
        }
        _ => Err(format!(
            "the user dismissed the question about {} {}; nothing was done (you may ask again later)",
            access.verb(),
            crate::roots::path_text(&resolved.path)
        )),
    }
}

/// The question put to the user about a path outside the roots: its message and a flat,
/// primitive form (`allow`, and `remember` when the answer can be kept for the session).
/// Shared by session (elicitation request) and stateless (`input_required`) clients.
pub fn permission_question(
    path: &std::path::Path,
    access: Access,
    roots: &str,
    remember_dir: Option<&std::path::Path>,
) -> (String, serde_json::Value) {
    let message = format!(
        "rootgrep wants to {} {}, which is outside the workspace roots ({roots}). Allow it?",
        access.verb(),
        crate::roots::path_text(path)
    );
    let mut schema = json!({
        "type": "object",
        "properties": {
            "allow": {
                "type": "boolean",
                "title": "Allow",
                "description": format!("Allow this {} of {}", access.verb(), crate::roots::path_text(path)),
            },
        },
        "required": ["allow"],
    });
    if let Some(dir) = remember_dir {
        schema["properties"]["remember"] = json!({
            "type": "boolean",
            "title": "Remember",
            "description": format!(
                "Allow {}s in {} for the rest of the session",
                access.verb(),
                crate::roots::path_text(dir)
            ),
            "default": false,
        });
    }
    (message, schema)
}

fn refused(resolved: &Resolved, access: Access) -> String {
    format!(
        "the user refused to let this server {} {} (outside the workspace roots); it will not be asked again this session",
        access.verb(),
        crate::roots::path_text(&resolved.path)
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
