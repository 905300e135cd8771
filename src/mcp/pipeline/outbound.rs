//! What goes back to the client: rmcp's answers and notifications with the client's own
//! request ids (and listen subscription ids) put back, written a whole line at a time.

use super::*;
use crate::mcp::sealed;
use rmcp::model::{ErrorData, ServerResult};

impl Router {
    /// Handles what a service sent: its output, or its end.
    pub(super) async fn outbound(&mut self, out: Out) {
        match out {
            Out::Message(message) => self.write_out(*message).await,
            Out::Ended(service) => self.ended(service).await,
        }
    }

    /// Writes rmcp's output, with the client's ids put back. Answers are written as
    /// `{"jsonrpc":"2.0","id":…,"result"|"error":…}` around the serialized payload, so a
    /// large result is serialized once.
    pub(super) async fn write_out(&mut self, message: ServerJsonRpcMessage) {
        let (id, mut body, failed) = match message {
            JsonRpcMessage::Response(response) => {
                (response.id, Body::Result(Box::new(response.result)), false)
            }
            JsonRpcMessage::Error(JsonRpcError {
                id: Some(id),
                error,
                ..
            }) => (id, Body::Error(error), true),
            other => {
                // A request or notification of ours (a listen stream's notifications name
                // their subscription).
                let Some(mut line) = serialized(&other, Vec::new()) else {
                    return;
                };
                if self.streams > 0 {
                    self.restore_subscription_id(&mut line, "/params", None);
                }
                line.push(b'\n');
                self.write_line(line).await;
                return;
            }
        };
        let entry = match id {
            RequestId::Number(n) => self.entries.remove(&n).map(|e| (n, e)),
            RequestId::String(_) => None,
        };
        let Some((n, entry)) = entry else {
            tracing::debug!(%id, "dropped an answer to a cancelled or unknown request");
            return;
        };
        self.release(n, &entry);
        let service = &mut self.services[entry.service];
        if service.handshake == Some(n) {
            service.handshake = None;
            if failed {
                // rmcp ends a service whose `initialize` failed; the next request starts a
                // fresh one.
                service.lifecycle = Lifecycle::Ended;
                service.input = None;
            }
        }
        // Structured content a tool gave as JSON text is written as that text.
        let json = match &mut body {
            Body::Result(result) => sealed::unseal(result),
            Body::Error(_) => None,
        };
        let original = serde_json::to_vec(&entry.original).unwrap_or_else(|_| b"null".to_vec());
        let key: &[u8] = if failed { b"error" } else { b"result" };
        let reserve = match (&json, &body) {
            (Some(json), Body::Result(result)) => {
                let text = sealed::text_len(result);
                json.len() + text + text / 16 + 1024
            }
            _ => 0,
        };
        let mut line = Vec::with_capacity(original.len() + 40 + reserve);
        line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        line.extend_from_slice(&original);
        line.extend_from_slice(b",\"");
        line.extend_from_slice(key);
        line.extend_from_slice(b"\":");
        let start = line.len();
        // The payload is serialized once, straight into the line: a large answer is not
        // copied again.
        let Some(mut line) = (match &body {
            Body::Result(result) => serialized(result, line),
            Body::Error(error) => serialized(error, line),
        }) else {
            return;
        };
        if let (Some(json), Body::Result(result)) = (json, &mut body)
            && !sealed::splice(&mut line, start, &json)
        {
            // Not where the writer put it (cannot happen): the tree, the slow way.
            tracing::error!("sealed structured content without its placeholder");
            if let ServerResult::CallToolResult(call) = &mut **result {
                call.structured_content = serde_json::from_str(&json).ok();
            }
            line.truncate(start);
            let Some(again) = serialized(result, line) else {
                return;
            };
            line = again;
        }
        if entry.listen {
            // A listen stream's final result names its subscription.
            let mut payload = line.split_off(start);
            self.restore_subscription_id(&mut payload, "", Some((n, &entry.original)));
            line.extend_from_slice(&payload);
        }
        line.extend_from_slice(b"}\n");
        self.write_line(line).await;
        // (`body`, perhaps a large tree, is freed once its line is on its way.)
    }

    pub(super) async fn write_line(&mut self, line: Vec<u8>) {
        if self.lines.send(line).await.is_err() {
            tracing::debug!("stdout is closed; dropped an outgoing message");
        }
    }

    /// Puts the client's id back into `_meta.io.modelcontextprotocol/subscriptionId` under
    /// `at` (a JSON pointer) in `json`: rmcp names a listen stream by the request's id,
    /// which is ours. Only messages that mention the key are parsed again.
    pub(super) fn restore_subscription_id(
        &self,
        json: &mut Vec<u8>,
        at: &str,
        just_answered: Option<(i64, &Value)>,
    ) {
        const KEY: &[u8] = b"io.modelcontextprotocol/subscriptionId";
        if !json.windows(KEY.len()).any(|w| w == KEY) {
            return;
        }
        let Ok(mut value) = serde_json::from_slice::<Value>(json) else {
            return;
        };
        let pointer = format!("{at}/_meta/io.modelcontextprotocol~1subscriptionId");
        let Some(slot) = value.pointer_mut(&pointer) else {
            return;
        };
        let Some(n) = slot.as_i64() else { return };
        let original = match just_answered {
            Some((answered, original)) if answered == n => Some(original.clone()),
            _ => self.entries.get(&n).map(|e| e.original.clone()),
        };
        if let Some(original) = original {
            *slot = original;
            if let Ok(patched) = serde_json::to_vec(&value) {
                *json = patched;
            }
        }
    }
}

/// What an answer carries: its result, or its error.
enum Body {
    Result(Box<ServerResult>),
    Error(ErrorData),
}

/// `value` serialized at the end of `into`; `None` (logged) when it cannot be.
fn serialized<T: serde::Serialize>(value: &T, mut into: Vec<u8>) -> Option<Vec<u8>> {
    match serde_json::to_writer(&mut into, value) {
        Ok(()) => Some(into),
        Err(err) => {
            tracing::error!("could not serialize an outgoing message: {err}");
            None
        }
    }
}
