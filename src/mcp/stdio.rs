//! The stdio framing: newline-delimited JSON-RPC on stdin and stdout, with the guarantees
//! rmcp leaves to us. It turns client lines into typed messages for the request pipeline
//! (`pipeline.rs`) and owns the single stdout writer.
//!
//! Every line from stdin is checked before anything else sees it, so that rmcp only ever
//! receives what it can answer:
//! - a line that is not JSON gets a `-32700` parse error (`"id": null`), as JSON-RPC asks —
//!   rmcp would silently drop it, leaving the client waiting;
//! - a line longer than [`MAX_LINE_BYTES`] is discarded without being buffered whole and
//!   answered with `-32600`;
//! - a request that would not parse as rmcp's client message type (a bad `_meta`, `params`
//!   that are not an object, a method that is not a string, a wrong `jsonrpc`) is answered
//!   here with its own id (`-32600`/`-32602`); rmcp would answer it without its id, or not
//!   at all;
//! - a notification or stray response that does not parse is dropped: a notification is
//!   never answered.
//!
//! The client's request ids are kept as JSON values (strings, any integer up to 2^64,
//! negative ones); the pipeline gives rmcp its own ids and puts the client's back on the
//! answer, so every id the framing accepts is echoed exactly.
//!
//! Everything written to stdout goes through one writer task, a whole line at a time, so
//! answers can never interleave. Nothing else in the process writes to stdout.

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Largest accepted message line.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A client message that passed the framing's checks, on its way to the pipeline.
pub enum Inbound {
    /// A request: the client's id exactly as sent, and the typed request (the pipeline
    /// gives it its own id).
    Request {
        id: Value,
        request: Box<ClientRequest>,
    },
    /// `notifications/cancelled` for the client's request `request_id` (the pipeline points
    /// the typed notification at its own id for that request).
    Cancel {
        request_id: Value,
        notification: ClientNotification,
    },
    /// Any other notification.
    Notification(ClientNotification),
    /// A response or error answering one of the server's own requests (`roots/list`,
    /// elicitation); those ids are rmcp's, so they pass unchanged.
    Response(Box<ClientJsonRpcMessage>),
}

/// Reads client lines until EOF: answers the malformed ones and sends the rest to the
/// pipeline. Awaiting the pipeline's bounded queue is the backpressure: when it is full,
/// stdin is not read.
pub async fn read_input<R: AsyncRead + Unpin>(
    input: R,
    to_pipeline: mpsc::Sender<Inbound>,
    replies: mpsc::Sender<Vec<u8>>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line_bounded(&mut reader, &mut line).await {
            Ok(LineRead::Eof) => break,
            Ok(LineRead::TooLong(len)) => {
                tracing::warn!(bytes = len, "dropped an oversized message line");
                let reply = error_line(
                    -32600,
                    &format!("message of {len} bytes exceeds the {MAX_LINE_BYTES}-byte limit"),
                );
                if replies.send(reply).await.is_err() {
                    break;
                }
                continue;
            }
            Ok(LineRead::Line) => {}
            Err(err) => {
                tracing::warn!("stdin read failed: {err}");
                break;
            }
        }
        let text = trim_line(&line);
        if text.is_empty() {
            continue;
        }
        let checked = match serde_json::from_slice::<Value>(text) {
            Ok(value) => check(value),
            Err(err) => {
                tracing::debug!("parse error on input line: {err}");
                Checked::Reply(error_line(-32700, &format!("Parse error: {err}")))
            }
        };
        match checked {
            Checked::Pass(inbound) => {
                if to_pipeline.send(inbound).await.is_err() {
                    break;
                }
            }
            Checked::Reply(reply) => {
                if replies.send(reply).await.is_err() {
                    break;
                }
            }
            Checked::Drop(why) => tracing::debug!("dropped a client message: {why}"),
        }
    }
    // Dropping `to_pipeline` tells the pipeline the input ended.
}

/// What the framing does with one parsed line.
enum Checked {
    Pass(Inbound),
    /// Answer it here (a whole JSON-RPC line).
    Reply(Vec<u8>),
    /// Drop it (never answered: a notification or a stray response).
    Drop(String),
}

/// Placeholder id while checking that a message parses as rmcp's type; the pipeline puts
/// its own id in its place.
const PLACEHOLDER_ID: i64 = 0;

fn check(value: Value) -> Checked {
    let Value::Object(mut object) = value else {
        return Checked::Reply(error_line(
            -32600,
            if value.is_array() {
                "batch requests are not supported; send one JSON-RPC message per line"
            } else {
                "invalid request: a JSON-RPC message is a JSON object"
            },
        ));
    };
    let has_method = object.contains_key("method");
    let id = object.get("id").cloned();
    let version_ok = object.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    match (has_method, id) {
        // A request.
        (true, Some(id)) => {
            // JSON-RPC ids are strings or integers; anything else cannot be answered by id.
            if !(id.is_string() || id.is_i64() || id.is_u64()) {
                return Checked::Reply(error_line(
                    -32600,
                    "invalid request id: use a string or an integer",
                ));
            }
            let Some(method) = object
                .get("method")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                return Checked::Reply(error_line_with_id(
                    &id,
                    -32600,
                    "invalid request: \"method\" must be a string",
                ));
            };
            if !version_ok {
                return Checked::Reply(error_line_with_id(
                    &id,
                    -32600,
                    "invalid request: \"jsonrpc\" must be \"2.0\"",
                ));
            }
            if !matches!(object.get("params"), None | Some(Value::Object(_))) {
                return Checked::Reply(error_line_with_id(
                    &id,
                    -32602,
                    &format!(
                        "invalid params for {}: params must be an object",
                        crate::quote::echo(&method)
                    ),
                ));
            }
            object.insert("id".into(), Value::from(PLACEHOLDER_ID));
            match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object.clone())) {
                Ok(JsonRpcMessage::Request(request)) => Checked::Pass(Inbound::Request {
                    id,
                    request: Box::new(request.request),
                }),
                _ => Checked::Reply(error_line_with_id(
                    &id,
                    -32602,
                    &format!(
                        "invalid params for {}: {}",
                        crate::quote::echo(&method),
                        crate::quote::cut(
                            &request_error(&method, object.remove("params")),
                            crate::quote::DETAIL_MAX_CHARS
                        )
                    ),
                )),
            }
        }
        // A notification: never answered, whatever is wrong with it.
        (true, None) => {
            let Some(method) = object
                .get("method")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                return Checked::Drop("a notification whose method is not a string".into());
            };
            if !version_ok || !matches!(object.get("params"), None | Some(Value::Object(_))) {
                return Checked::Drop(format!("a malformed {method} notification"));
            }
            let cancelled = if method == "notifications/cancelled" {
                let target = object
                    .get_mut("params")
                    .and_then(Value::as_object_mut)
                    .and_then(|params| params.get_mut("requestId"));
                match target {
                    Some(target) if target.is_string() || target.is_i64() || target.is_u64() => {
                        Some(std::mem::replace(target, Value::from(PLACEHOLDER_ID)))
                    }
                    _ => return Checked::Drop("a cancellation without a usable requestId".into()),
                }
            } else {
                None
            };
            match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
                Ok(JsonRpcMessage::Notification(note)) => match cancelled {
                    Some(request_id) => Checked::Pass(Inbound::Cancel {
                        request_id,
                        notification: note.notification,
                    }),
                    None => Checked::Pass(Inbound::Notification(note.notification)),
                },
                _ => Checked::Drop(format!("a {method} notification that does not parse")),
            }
        }
        // A response to one of our requests.
        (false, Some(id))
            if object.contains_key("result") != object.contains_key("error") && version_ok =>
        {
            match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
                Ok(message @ (JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_))) => {
                    Checked::Pass(Inbound::Response(Box::new(message)))
                }
                _ => Checked::Drop(format!("a response to {id} that does not parse")),
            }
        }
        (false, Some(Value::Null)) => Checked::Drop("an error response without an id".into()),
        (false, id) => {
            let id = id.filter(|id| id.is_string() || id.is_i64() || id.is_u64());
            Checked::Reply(error_line_with_id(
                id.as_ref().unwrap_or(&Value::Null),
                -32600,
                "invalid request: expected a JSON-RPC request, notification or response",
            ))
        }
    }
}

/// Why `params` do not make a `method` request rmcp accepts.
fn request_error(method: &str, params: Option<Value>) -> String {
    if let Some(meta) = params.as_ref().and_then(|p| p.get("_meta"))
        && !meta.is_object()
    {
        return "\"_meta\" must be an object".to_string();
    }
    let mut probe = serde_json::Map::new();
    probe.insert("method".into(), Value::from(method));
    if let Some(params) = params {
        probe.insert("params".into(), params);
    }
    match serde_json::from_value::<ClientRequest>(Value::Object(probe)) {
        Err(err) => err.to_string(),
        Ok(_) => "the message does not match the JSON-RPC request shape".to_string(),
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let mut text = line;
    // A UTF-8 BOM at the start of the stream is tolerated.
    if let Some(rest) = text.strip_prefix(b"\xEF\xBB\xBF") {
        text = rest;
    }
    while let Some((last, rest)) = text.split_last() {
        if matches!(last, b'\n' | b'\r' | b' ' | b'\t') {
            text = rest;
        } else {
            break;
        }
    }
    while let Some((first, rest)) = text.split_first() {
        if matches!(first, b' ' | b'\t') {
            text = rest;
        } else {
            break;
        }
    }
    text
}

enum LineRead {
    Line,
    Eof,
    TooLong(usize),
}

/// Reads one line, refusing to buffer more than [`MAX_LINE_BYTES`].
async fn read_line_bounded<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<LineRead> {
    let mut limited = reader.take(MAX_LINE_BYTES as u64 + 1);
    let read = limited.read_until(b'\n', line).await?;
    if read == 0 {
        return Ok(LineRead::Eof);
    }
    if line.len() > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
        // Discard the rest of the oversized line without keeping it.
        let mut total = line.len();
        line.clear();
        loop {
            let buf = reader.fill_buf().await?;
            if buf.is_empty() {
                break;
            }
            match buf.iter().position(|&b| b == b'\n') {
                Some(pos) => {
                    total += pos;
                    reader.consume(pos + 1);
                    break;
                }
                None => {
                    let len = buf.len();
                    total += len;
                    reader.consume(len);
                }
            }
        }
        return Ok(LineRead::TooLong(total));
    }
    Ok(LineRead::Line)
}

/// A JSON-RPC error line with `"id": null` (the id could not be read).
pub fn error_line(code: i64, message: &str) -> Vec<u8> {
    error_line_with_id(&Value::Null, code, message)
}

/// A JSON-RPC error line answering the request `id`.
pub fn error_line_with_id(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let value = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    });
    let mut line = serde_json::to_vec(&value).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The only writer of the output stream.
pub async fn write_output<W: AsyncWrite + Unpin>(
    mut output: W,
    mut lines: mpsc::Receiver<Vec<u8>>,
) {
    while let Some(line) = lines.recv().await {
        if output.write_all(&line).await.is_err() {
            break;
        }
        // Flush when no more lines are queued, so bursts go out in one write.
        if lines.is_empty() && output.flush().await.is_err() {
            break;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(value: Value) -> Value {
        match check(value) {
            Checked::Reply(line) => serde_json::from_slice(&line).unwrap(),
            Checked::Pass(_) => panic!("passed"),
            Checked::Drop(why) => panic!("dropped: {why}"),
        }
    }

    #[test]
    fn trims_lines() {
        assert_eq!(trim_line(b"\xEF\xBB\xBF {\"a\":1}\r\n"), b"{\"a\":1}");
    }

    #[test]
    fn requests_rmcp_cannot_parse_are_answered_with_their_id() {
        let bad_meta =
            reply(json!({"jsonrpc":"2.0","id":"x","method":"ping","params":{"_meta":[1]}}));
        assert_eq!(bad_meta["id"], "x");
        assert_eq!(bad_meta["error"]["code"], -32602);
        let method = reply(json!({"jsonrpc":"2.0","id":7,"method":42}));
        assert_eq!(method["id"], 7);
        assert_eq!(method["error"]["code"], -32600);
        let big = json!(u64::MAX);
        let version = reply(json!({"jsonrpc":"1.0","id":big,"method":"ping"}));
        assert_eq!(version["id"], big);
    }

    #[test]
    fn bad_notifications_are_never_answered() {
        for note in [
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":"nope"}),
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}),
            json!({"jsonrpc":"2.0","method":"notifications/unknown","params":[1,2]}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":5}}),
            json!({"jsonrpc":"2.0","method":7}),
        ] {
            assert!(matches!(check(note.clone()), Checked::Drop(_)), "{note}");
        }
    }

    #[test]
    fn large_and_negative_ids_pass_unchanged() {
        for id in [json!(u64::MAX), json!(-1), json!("ü-id")] {
            match check(json!({"jsonrpc":"2.0","id":id,"method":"ping"})) {
                Checked::Pass(Inbound::Request { id: kept, .. }) => assert_eq!(kept, id),
                _ => panic!("{id} not passed"),
            }
        }
    }
}
