//! The stdio framing: newline-delimited JSON-RPC on stdin and stdout, with the guarantees
//! rmcp leaves to us. It turns client lines into messages for the request pipeline
//! (`pipeline.rs`) and owns the single stdout writer.
//!
//! Every line from stdin is checked before anything else sees it, so that rmcp only ever
//! receives what it can answer:
//! - a line that is not JSON gets a `-32700` parse error (`"id": null`), as JSON-RPC asks —
//!   rmcp would silently drop it, leaving the client waiting;
//! - a line longer than [`MAX_LINE_BYTES`] is discarded without being buffered whole and
//!   answered with `-32600`;
//! - a request whose envelope is wrong (`params` that are not an object, a method that is
//!   not a string, a wrong `jsonrpc`) is answered here with its own id (`-32600`/`-32602`);
//!   one that does not parse as rmcp's request type (a bad `_meta`, wrong params for its
//!   method) is answered with its id by the pipeline when it is parsed ([`parse_request`]);
//!   rmcp would answer it without its id, or not at all;
//! - a notification or stray response that does not parse is dropped: a notification is
//!   never answered.
//! - a lone UTF-16 surrogate escape (`"\ud83d"`: valid JSON, refused by serde_json) is read
//!   as U+FFFD (`stdio/surrogates.rs`), so its request goes on and is answered by its id.
//!
//! **One parse, text while waiting.** A line is read without building a tree — a skipping
//! pass that applies serde_json's syntax and nesting rules, then its envelope (`jsonrpc`,
//! `id`, `method`, `params` as borrowed raw slices) — and passed on as text — `{"method":…,"params":…}`, method first so that rmcp's untagged
//! request type rejects the other methods before reading the params. It becomes rmcp's
//! typed message (whose params are a `serde_json::Value` tree, many times the text) only
//! when the pipeline hands it on, so a waiting message costs its bytes. Every line passed on
//! holds a share of the pipeline's byte budget (`pipeline::MAX_WAITING_BYTES`) until the
//! pipeline takes it; when the budget is spent, stdin is not read.
//!
//! The client's request ids are kept as JSON values (strings, any integer up to 2^64,
//! negative ones); the pipeline gives rmcp its own ids and puts the client's back on the
//! answer, so every id the framing accepts is echoed exactly.
//!
//! Everything written to stdout goes through one writer task, a whole line at a time, so
//! answers can never interleave. Nothing else in the process writes to stdout.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, JsonRpcMessage, Notification, RequestId,
};
use serde::Deserialize;
use serde::de::{self, IgnoredAny};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

mod check;
mod surrogates;

pub use check::MAX_VALUES_PER_MESSAGE;
use check::{Checked, check, is_object};

/// Largest accepted message line.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A client line that passed the framing's checks, on its way to the pipeline, with its
/// share of the waiting budget (given back when the pipeline drops it).
pub struct Inbound {
    pub message: Message,
    pub share: Share,
}

/// The bytes of one line counted against the pipeline's waiting budget while it is held.
pub struct Share(#[allow(dead_code)] Option<OwnedSemaphorePermit>);

impl Share {
    /// A share that counts nothing (for messages made outside the framing, e.g. tests).
    pub fn none() -> Share {
        Share(None)
    }
}

/// What a checked line is.
pub enum Message {
    /// A request: the client's id exactly as sent, its method, and its text (parsed by
    /// [`parse_request`] when the pipeline starts it; the pipeline gives it its own id).
    Request {
        id: Value,
        method: String,
        text: Box<[u8]>,
    },
    /// `notifications/cancelled` for the client's request `request_id` (the pipeline points
    /// the typed notification at its own id for that request).
    Cancel {
        request_id: Value,
        notification: ClientNotification,
    },
    /// Any other notification, as text ([`parse_notification`]).
    Notification(Box<[u8]>),
    /// A response or error answering one of the server's own requests (`roots/list`,
    /// elicitation), as text ([`parse_response`]); those ids are rmcp's, so they pass
    /// unchanged.
    Response(Box<[u8]>),
}

/// Reads client lines until EOF: answers the malformed ones and sends the rest to the
/// pipeline. Each line sent takes its length from `budget` first, and awaiting the budget
/// and the pipeline's bounded queue is the backpressure: while either is full, stdin is
/// not read. A line is at most [`MAX_LINE_BYTES`], never more than the whole budget.
pub async fn read_input<R: AsyncRead + Unpin>(
    input: R,
    budget: Arc<Semaphore>,
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
        // Before anything reads it: serde_json refuses what JSON allows here.
        surrogates::mend(&mut line);
        let text = trim_line(&line);
        if text.is_empty() {
            continue;
        }
        match check(text) {
            Checked::Pass(message) => {
                // The line's length, whatever part of it the message keeps: the pipeline
                // holds at most that many bytes for it while it waits.
                let cost = u32::try_from(text.len()).unwrap_or(u32::MAX);
                let Ok(permit) = budget.clone().acquire_many_owned(cost).await else {
                    break;
                };
                let inbound = Inbound {
                    message,
                    share: Share(Some(permit)),
                };
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
        // A long line's buffer is not kept for the next, short ones.
        if line.capacity() > 1024 * 1024 {
            line = Vec::new();
        }
    }
    // Dropping `to_pipeline` tells the pipeline the input ended.
}

/// rmcp's typed request from a [`Message::Request`]'s text, or why it is not one (for the
/// answer to `method`, sent with the client's id).
pub fn parse_request(method: &str, text: &[u8]) -> Result<ClientRequest, String> {
    // `tools/call` carries the client's free-form arguments, the one request that is large
    // by design: it is read straight as rmcp's `CallToolRequest` (rmcp's own `Deserialize`),
    // without the copy of the whole message rmcp's untagged request union buffers first.
    // Anything else, or a `tools/call` that does not read that way, goes through the union,
    // which decides (and words the refusal) as rmcp does.
    if method == "tools/call"
        && let Ok(call) = serde_json::from_slice::<CallToolRequest>(text)
    {
        return Ok(ClientRequest::from(call));
    }
    serde_json::from_slice::<ClientRequest>(text).map_err(|err| {
        // The common mistake gets a plain answer; rmcp's own message names no field.
        #[derive(Deserialize)]
        struct Probe<'a> {
            #[serde(borrow)]
            params: Option<MetaProbe<'a>>,
        }
        #[derive(Deserialize)]
        struct MetaProbe<'a> {
            #[serde(borrow, rename = "_meta")]
            meta: Option<&'a RawValue>,
        }
        let meta = serde_json::from_slice::<Probe>(text)
            .ok()
            .and_then(|probe| probe.params?.meta);
        if meta.is_some_and(|meta| !is_object(meta)) {
            "\"_meta\" must be an object".to_string()
        } else {
            err.to_string()
        }
    })
}

/// rmcp's typed notification from a [`Message::Notification`]'s text.
pub fn parse_notification(text: &[u8]) -> Result<ClientNotification, serde_json::Error> {
    serde_json::from_slice(text)
}

/// rmcp's typed response or error from a [`Message::Response`]'s text.
pub fn parse_response(text: &[u8]) -> Option<ClientJsonRpcMessage> {
    match serde_json::from_slice::<ClientJsonRpcMessage>(text) {
        Ok(message @ (JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_))) => Some(message),
        _ => None,
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
mod tests;
