//! MCP 2026-07-28 ("modern", stateless) requests: roots and the user's permission travel as
//! Multi Round-Trip Requests instead of server→client requests.
//!
//! A modern `tools/call`, `resources/read` or `prompts/get` carries everything in its own
//! `_meta` (version, client capabilities). When the call needs the client's roots (the
//! client declared `roots` on *this* request) or the user's permission for a path outside the
//! roots (the client declared form elicitation on this request), the server answers
//! `input_required` with the questions and a sealed `requestState`; the client retries the
//! same request with `inputResponses` and the state echoed back.
//!
//! The state is authenticated with HMAC (rmcp's `RequestStateCodec`, a per-process key from
//! the operating system's random source; without one, 2026-07-28 requests are refused
//! rather than sealed with a guessable key), bound to the method, the tool or resource name and a SHA-256 digest of the
//! arguments, and expires after [`STATE_TTL`]. It carries the roots received so far, the
//! paths the user approved, and the question in flight, so a client cannot forge an approval,
//! replay it for other arguments, or reuse it later. Nothing is remembered between requests:
//! each request stands alone, as the revision requires (no "remember" grants, no refusals
//! kept, roots fetched per request).

use std::sync::Mutex;
use std::time::Duration;

use rmcp::ErrorData as McpError;

use crate::mcp::failure::{Failure, Reason};
use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ProtocolVersion, RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Digest;

use crate::mcp::session::Session;
use rootgrep_core::access::{Access, Refusal, Verdict, boundary_verdict};
use rootgrep_core::roots::{Resolved, Root, RootSet, choose_roots, path_from_file_uri};

/// How long a sealed request state stays valid.
pub const STATE_TTL: Duration = Duration::from_secs(600);
const ROOTS_KEY: &str = "roots";
const CONFIRM_KEY: &str = "confirm";

/// True when this request speaks 2026-07-28 (inline `_meta`, no handshake).
pub fn is_modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.meta
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// The per-process sealing key, from the operating system's random source (`getrandom`).
/// `Err` says why there is none: the server then refuses 2026-07-28 requests (see
/// [`codec`]) instead of sealing with a key an attacker could guess (time, pid).
pub fn new_codec() -> Result<RequestStateCodec, String> {
    codec_from(|key| getrandom::fill(key).map_err(|err| err.to_string()))
}

fn codec_from(
    fill: impl FnOnce(&mut [u8]) -> Result<(), String>,
) -> Result<RequestStateCodec, String> {
    let mut key = [0u8; 32];
    fill(&mut key).map_err(|err| format!("no random key to seal requestState: {err}"))?;
    RequestStateCodec::try_new(key.to_vec()).map_err(|err| err.to_string())
}

/// The sealing key, or the error that refuses a 2026-07-28 request without one.
fn codec(key: &Result<RequestStateCodec, String>) -> Result<&RequestStateCodec, McpError> {
    key.as_ref().map_err(|why| {
        McpError::internal_error(
            format!(
                "this server cannot serve 2026-07-28 requests ({why}); connect with \
                 initialize (protocol 2025-11-25) instead"
            ),
            None,
        )
    })
}

/// What the sealed `requestState` carries between rounds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    /// The client's roots, once received (URIs and names as sent).
    roots: Option<Vec<(String, Option<String>)>>,
    /// Paths (bytes) the user approved; `true` = for writing (which includes reading).
    approved: Vec<(Vec<u8>, bool)>,
    /// The question in flight: the path and access `inputResponses.confirm` answers.
    asked: Option<(Vec<u8>, bool)>,
}

fn is_write(access: Access) -> bool {
    access == Access::Write
}

/// The modern context of one request.
pub struct ModernCall {
    capabilities: ClientCapabilities,
    binding: Vec<u8>,
    state: State,
    /// A question to ask (set by `authorize`, turned into `input_required` by the handler).
    pending: Mutex<Option<InputRequests>>,
    /// The path and access that question is about (sealed into the next state).
    asked: Mutex<Option<(Vec<u8>, bool)>>,
    /// The path the user just refused in this round, with what the user did ("did not
    /// allow"); the message names the path as sent when it is made.
    declined: Option<(Vec<u8>, &'static str)>,
}

fn path_bytes(path: &std::path::Path) -> Vec<u8> {
    use rootgrep_core::platform::os::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

impl ModernCall {
    /// Opens the request's state (if any) and folds in its input responses. A tampered,
    /// expired or foreign state is refused (`-32602`).
    pub fn new(
        session: &Session,
        ctx: &RequestContext<RoleServer>,
        method: &str,
        name: &str,
        arguments: &Value,
        responses: Option<&InputResponses>,
        request_state: Option<&str>,
    ) -> Result<ModernCall, McpError> {
        let codec = codec(&session.state_codec)?;
        let capabilities = ctx.meta.client_capabilities().unwrap_or_default();
        let digest = sha2::Sha256::digest(arguments.to_string().as_bytes());
        let mut binding = format!("rootgrep/{method}/{name}/").into_bytes();
        binding.extend_from_slice(&digest);
        let mut declined = None;
        let mut state = match request_state {
            None => State::default(),
            Some(sealed) => codec
                .open_json_with::<State>(sealed, &binding)
                .map_err(|err| {
                    McpError::invalid_params(
                        format!("requestState refused ({err}); start the request again without it"),
                        None,
                    )
                })?,
        };
        if let Some(responses) = responses {
            if state.roots.is_none()
                && let Some(answer) = responses.get(ROOTS_KEY)
            {
                let roots = answer
                    .get("roots")
                    .and_then(Value::as_array)
                    .ok_or_else(|| {
                        McpError::invalid_params(
                            "inputResponses.roots must hold {roots: [...]}",
                            None,
                        )
                    })?;
                state.roots = Some(
                    roots
                        .iter()
                        .filter_map(|root| {
                            let uri = root.get("uri")?.as_str()?.to_string();
                            let name = root.get("name").and_then(Value::as_str).map(str::to_string);
                            Some((uri, name))
                        })
                        .collect(),
                );
            }
            if let (Some((path, write)), Some(answer)) =
                (state.asked.take(), responses.get(CONFIRM_KEY))
            {
                let action = answer.get("action").and_then(Value::as_str).unwrap_or("");
                let allow = answer
                    .get("content")
                    .and_then(|c| c.get("allow"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                match (action, allow) {
                    ("accept", true) => state.approved.push((path, write)),
                    // A refusal is the tool's answer (the model must see it), not a
                    // protocol error.
                    _ => {
                        let verb = if action == "cancel" {
                            "dismissed the question about"
                        } else {
                            "did not allow"
                        };
                        declined = Some((path.clone(), verb));
                    }
                }
            }
        }
        Ok(ModernCall {
            capabilities,
            binding,
            state,
            pending: Mutex::new(None),
            asked: Mutex::new(None),
            declined,
        })
    }

    /// The roots for this request, or an `input_required` asking for them.
    pub fn roots(&self, session: &Session) -> Result<RootSet, InputRequiredResult> {
        let client: Option<Vec<Root>> = match &self.state.roots {
            Some(roots) => Some(
                roots
                    .iter()
                    .filter_map(|(uri, name)| {
                        path_from_file_uri(uri)
                            .ok()
                            .map(|path| Root::new(path, name.clone()))
                    })
                    .collect(),
            ),
            None if self.capabilities.roots.is_some() => {
                let mut requests = InputRequests::new();
                let request: InputRequest = serde_json::from_value(json!({"method": "roots/list"}))
                    .expect("static request");
                requests.insert(ROOTS_KEY.to_string(), request);
                return Err(self.input_required(session, requests, None));
            }
            None => None,
        };
        let config = &session.config;
        Ok(choose_roots(client, &config.dirs, &config.cwd, &config.confine).0)
    }

    /// Decides access to a path outside (or inside) the roots for this request. When the
    /// user must be asked, records the question and returns `Err` (the handler then answers
    /// `input_required`).
    pub fn authorize(
        &self,
        session: &Session,
        roots: &RootSet,
        resolved: &Resolved,
        access: Access,
    ) -> Result<(), Failure> {
        let bytes = path_bytes(&resolved.path);
        if let Some((path, verb)) = &self.declined
            && *path == bytes
        {
            return Err(Failure::new(
                Reason::RefusedByUser,
                format!(
                    "the user {verb} this server's request to {} {}; nothing was done",
                    access.verb(),
                    rootgrep_core::quote::echo(&resolved.sent)
                ),
            ));
        }
        let approved = self
            .state
            .approved
            .iter()
            .any(|(path, write)| *path == bytes && (*write || !is_write(access)));
        if approved && session.config.confine.allows(&resolved.path) {
            return Ok(());
        }
        // Session grants are legacy-only: stateless requests are judged on roots and
        // --confine alone, then the user is asked. A request that cannot ask gets one
        // answer for every path outside the roots, `--confine` or not.
        let confine = &session.config.confine;
        let form = self
            .capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        let refused = |refusal: Refusal| {
            let text = crate::mcp::hints::refusal(refusal, &resolved.sent, access, roots, confine);
            Err(Failure::new(refusal.into(), text))
        };
        match boundary_verdict(&resolved.path, roots, confine).unwrap_or(Verdict::Ask) {
            Verdict::Allowed => Ok(()),
            _ if !form => refused(Refusal::CannotAsk(
                "this request did not declare the elicitation capability, so the user cannot \
                 be asked",
            )),
            Verdict::Refused(refusal) => refused(refusal),
            Verdict::Ask => {
                let (message, schema) = crate::mcp::ask::permission_question(
                    &resolved.sent,
                    access,
                    &crate::mcp::hints::roots(roots),
                    false,
                );
                let request: InputRequest = serde_json::from_value(json!({
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": message, "requestedSchema": schema},
                }))
                .map_err(|err| {
                    let why = format!("internal error building the question: {err}");
                    Failure::new(Reason::Internal, why)
                })?;
                let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
                // One question per round: the first path that needs one is asked first.
                if pending.is_none() {
                    let mut requests = InputRequests::new();
                    requests.insert(CONFIRM_KEY.to_string(), request);
                    *pending = Some(requests);
                    self.set_asked(bytes, access);
                }
                // Not shown: the handler answers `input_required` instead.
                Err(Failure::new(
                    Reason::NoAnswer,
                    format!(
                        "waiting for the user's permission to {} {}",
                        access.verb(),
                        rootgrep_core::quote::echo(&resolved.sent)
                    ),
                ))
            }
        }
    }

    fn set_asked(&self, path: Vec<u8>, access: Access) {
        *self.asked.lock().unwrap_or_else(|e| e.into_inner()) = Some((path, is_write(access)));
    }

    /// The `input_required` result for a recorded question, if any.
    pub fn take_pending(&self, session: &Session) -> Option<InputRequiredResult> {
        let requests = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        let asked = self.asked.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Some(self.input_required(session, requests, asked))
    }

    fn input_required(
        &self,
        session: &Session,
        requests: InputRequests,
        asked: Option<(Vec<u8>, bool)>,
    ) -> InputRequiredResult {
        let mut next = self.state.clone();
        next.asked = asked;
        // A ModernCall exists only when there is a key (see `ModernCall::new`).
        let sealed = codec(&session.state_codec).ok().and_then(|codec| {
            codec
                .seal_json_with(
                    &next,
                    &SealOptions::new()
                        .associated_data(&self.binding)
                        .ttl(STATE_TTL),
                )
                .ok()
        });
        InputRequiredResult::new(Some(requests), sealed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_random_key_stateless_requests_are_refused() {
        let none = codec_from(|_| Err("getrandom: unavailable".into()));
        let Err(refused) = codec(&none) else {
            panic!("no guessable fallback key")
        };
        assert!(refused.message.contains("2026-07-28"), "{refused:?}");
        assert!(refused.message.contains("unavailable"), "{refused:?}");
        // With the OS source there is a key, and two processes never share it.
        let a = new_codec().expect("the OS random source");
        let b = new_codec().expect("the OS random source");
        let sealed = a.seal_json_with(&1, &SealOptions::new()).unwrap();
        assert_eq!(a.open_json_with::<i32>(&sealed, b"").unwrap(), 1);
        assert!(b.open_json_with::<i32>(&sealed, b"").is_err());
    }
}
