//! The stdio framing in front of rmcp: newline-delimited JSON-RPC between the host and the
//! protocol layer, with the guarantees rmcp leaves to us.
//!
//! Every line from stdin is checked before rmcp sees it:
//! - a line that is not JSON gets a `-32700` parse error (`"id": null`), as JSON-RPC asks —
//!   rmcp would silently drop it, leaving the client waiting;
//! - a line longer than [`MAX_LINE_BYTES`] is discarded without being buffered whole and
//!   answered with `-32600`;
//! - before the first `initialize` request (or first 2026-07-28 request), notifications and
//!   stray responses are dropped: rmcp ends the session on them, which would kill the server
//!   for a harmless mistake.
//!
//! Everything written to stdout goes through one writer task, a whole line at a time, so
//! rmcp's messages and ours can never interleave. Nothing else in the process writes to
//! stdout.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Largest accepted message line.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Starts the framing tasks. Returns the two ends rmcp should be served on, and the join
/// handle of the writer (await it after the service ends so the last lines are flushed).
pub fn spawn<R, W>(
    input: R,
    output: W,
) -> (
    (tokio::io::DuplexStream, tokio::io::DuplexStream),
    tokio::task::JoinHandle<()>,
)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, pump_in) = tokio::io::duplex(1 << 20);
    let (pump_out, rmcp_out) = tokio::io::duplex(1 << 20);
    let (lines_tx, lines_rx) = mpsc::channel::<Vec<u8>>(1024);
    let (incoming_tx, incoming_rx) = mpsc::channel::<Incoming>(1024);
    let (done_tx, done_rx) = mpsc::unbounded_channel::<String>();
    tokio::spawn(read_input(input, incoming_tx, lines_tx.clone()));
    tokio::spawn(admit(incoming_rx, done_rx, pump_in));
    tokio::spawn(forward_output(pump_out, lines_tx, done_tx));
    let writer = tokio::spawn(write_output(output, lines_rx));
    ((rmcp_in, rmcp_out), writer)
}

/// Reads client lines, answers the malformed ones, and forwards the rest to rmcp.
async fn read_input<R: AsyncRead + Unpin>(
    input: R,
    to_admit: mpsc::Sender<Incoming>,
    replies: mpsc::Sender<Vec<u8>>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut seen_initialize = false;
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
        let value: Value = match serde_json::from_slice(text) {
            Ok(value) => value,
            Err(err) => {
                tracing::debug!("parse error on input line: {err}");
                let reply = error_line(-32700, &format!("Parse error: {err}"));
                if replies.send(reply).await.is_err() {
                    break;
                }
                continue;
            }
        };
        if let Some(reply) = reject_shape(&value) {
            if replies.send(reply).await.is_err() {
                break;
            }
            continue;
        }
        if !seen_initialize {
            match classify(&value) {
                Kind::Initialize => seen_initialize = true,
                Kind::Request | Kind::Other => {}
                Kind::Notification | Kind::Response => {
                    tracing::debug!("dropped a notification or response sent before initialize");
                    continue;
                }
            }
        }
        let mut framed = text.to_vec();
        framed.push(b'\n');
        let incoming = match incoming_kind(&value) {
            Some(IncomingKind::Request(id)) => Incoming::Request(id, framed),
            Some(IncomingKind::Cancel(id)) => Incoming::Cancel(id, framed),
            None => Incoming::Other(framed),
        };
        if to_admit.send(incoming).await.is_err() {
            break;
        }
    }
    // Dropping the sender tells `admit` the input ended.
}

/// Most requests rmcp works on at once. More pipelined requests wait here as raw lines
/// (a few hundred bytes each) instead of as running tasks (several KiB each), so a burst
/// of thousands of requests keeps memory flat; responses and notifications are never held.
pub const MAX_IN_FLIGHT: usize = 256;

/// A client line on its way to rmcp.
enum Incoming {
    /// A request, with its id as JSON text.
    Request(String, Vec<u8>),
    /// `notifications/cancelled` for the request with this id.
    Cancel(String, Vec<u8>),
    Other(Vec<u8>),
}

enum IncomingKind {
    Request(String),
    Cancel(String),
}

fn incoming_kind(value: &Value) -> Option<IncomingKind> {
    let object = value.as_object()?;
    let method = object.get("method")?.as_str()?;
    match object.get("id") {
        Some(id) => Some(IncomingKind::Request(id.to_string())),
        None if method == "notifications/cancelled" => {
            let id = object.get("params")?.get("requestId")?;
            Some(IncomingKind::Cancel(id.to_string()))
        }
        None => None,
    }
}

/// Admits requests to rmcp at most [`MAX_IN_FLIGHT`] at a time; the rest wait in order.
/// A request cancelled while still waiting is dropped here (rmcp never sees it, so no
/// response is sent, as for any cancelled request).
async fn admit(
    mut incoming: mpsc::Receiver<Incoming>,
    mut done: mpsc::UnboundedReceiver<String>,
    mut to_rmcp: tokio::io::DuplexStream,
) {
    use std::collections::{HashSet, VecDeque};
    let mut in_flight: HashSet<String> = HashSet::new();
    let mut waiting: VecDeque<(String, Vec<u8>)> = VecDeque::new();
    let mut input_open = true;
    loop {
        if !input_open && waiting.is_empty() {
            break;
        }
        tokio::select! {
            line = incoming.recv(), if input_open => {
                let forward = match line {
                    None => {
                        input_open = false;
                        continue;
                    }
                    Some(Incoming::Request(id, bytes)) => {
                        if in_flight.len() < MAX_IN_FLIGHT && waiting.is_empty() {
                            in_flight.insert(id);
                            bytes
                        } else {
                            waiting.push_back((id, bytes));
                            continue;
                        }
                    }
                    Some(Incoming::Cancel(id, bytes)) => {
                        let before = waiting.len();
                        waiting.retain(|(waiting_id, _)| *waiting_id != id);
                        if waiting.len() != before {
                            continue; // never started: nothing to tell rmcp
                        }
                        // rmcp sends no response for a cancelled request: free its slot
                        // now, or every cancellation would shrink the admission window.
                        if in_flight.remove(&id) {
                            while in_flight.len() < MAX_IN_FLIGHT {
                                let Some((next, line)) = waiting.pop_front() else { break };
                                in_flight.insert(next);
                                if to_rmcp.write_all(&line).await.is_err() {
                                    return;
                                }
                            }
                        }
                        bytes
                    }
                    Some(Incoming::Other(bytes)) => bytes,
                };
                if to_rmcp.write_all(&forward).await.is_err() {
                    break;
                }
            }
            answered = done.recv() => {
                match answered {
                    Some(id) => { in_flight.remove(&id); }
                    None => break,
                }
                while in_flight.len() < MAX_IN_FLIGHT {
                    let Some((id, bytes)) = waiting.pop_front() else { break };
                    in_flight.insert(id);
                    if to_rmcp.write_all(&bytes).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
    // Dropping `to_rmcp` signals end of input to rmcp, which then shuts the session down.
    let _ = to_rmcp.shutdown().await;
}

/// Answers messages whose shape rmcp would reject without echoing their id: a request
/// whose `params` is not an object (the client would never get its answer), and a batch
/// array (batches were dropped from MCP in 2025-06-18).
fn reject_shape(value: &Value) -> Option<Vec<u8>> {
    match value {
        Value::Array(_) => Some(error_line(
            -32600,
            "batch requests are not supported; send one JSON-RPC message per line",
        )),
        Value::Object(object) => {
            let id = object.get("id")?;
            if object.get("method").is_some() {
                // JSON-RPC ids are strings or integers; anything else cannot be answered
                // by id (and would be answered by rmcp without one).
                let valid = id.is_string() || id.is_i64() || id.is_u64();
                if !valid {
                    return Some(error_line(
                        -32600,
                        "invalid request id: use a string or an integer",
                    ));
                }
                if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                    return Some(error_line_with_id(
                        id,
                        -32600,
                        "invalid request: \"jsonrpc\" must be \"2.0\"",
                    ));
                }
            }
            let method = object.get("method")?.as_str()?;
            match object.get("params") {
                None | Some(Value::Object(_)) => None,
                Some(_) => Some(error_line_with_id(
                    id,
                    -32602,
                    &format!("invalid params for {method}: params must be an object"),
                )),
            }
        }
        _ => None,
    }
}

enum Kind {
    Initialize,
    Request,
    Notification,
    Response,
    Other,
}

fn classify(value: &Value) -> Kind {
    let Some(object) = value.as_object() else {
        return Kind::Other;
    };
    match (object.get("method"), object.contains_key("id")) {
        (Some(Value::String(method)), true) if method == "initialize" => Kind::Initialize,
        // A stateless (2026-07-28) request starts a session without `initialize`; its
        // notifications (cancellations) must then reach rmcp.
        (Some(Value::String(method)), true)
            if method != "server/discover"
                && object
                    .get("params")
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
                    .and_then(Value::as_str)
                    == Some("2026-07-28") =>
        {
            Kind::Initialize
        }
        (Some(_), true) => Kind::Request,
        (Some(_), false) => Kind::Notification,
        (None, true) if object.contains_key("result") || object.contains_key("error") => {
            Kind::Response
        }
        _ => Kind::Other,
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
fn error_line(code: i64, message: &str) -> Vec<u8> {
    error_line_with_id(&Value::Null, code, message)
}

/// A JSON-RPC error line answering the request `id`.
fn error_line_with_id(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let value = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    });
    let mut line = serde_json::to_vec(&value).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Copies rmcp's output, line by line, into the writer queue.
async fn forward_output(
    from_rmcp: tokio::io::DuplexStream,
    lines: mpsc::Sender<Vec<u8>>,
    done: mpsc::UnboundedSender<String>,
) {
    let mut reader = BufReader::new(from_rmcp);
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if line.last() != Some(&b'\n') {
                    line.push(b'\n');
                }
                if let Some(id) = response_id(&line) {
                    let _ = done.send(id);
                }
                if lines.send(line).await.is_err() {
                    break;
                }
            }
        }
    }
}

/// The id (as JSON text) of a response line from rmcp; `None` for requests and
/// notifications.
fn response_id(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Probe {
        id: Option<Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    let probe: Probe = serde_json::from_slice(line).ok()?;
    match (probe.id, probe.method) {
        (Some(id), None) => Some(id.to_string()),
        _ => None,
    }
}

/// The only writer of the output stream.
async fn write_output<W: AsyncWrite + Unpin>(mut output: W, mut lines: mpsc::Receiver<Vec<u8>>) {
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

    #[test]
    fn classifies_messages() {
        let init = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize"});
        assert!(matches!(classify(&init), Kind::Initialize));
        let note = serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert!(matches!(classify(&note), Kind::Notification));
        let resp = serde_json::json!({"jsonrpc":"2.0","id":1,"result":{}});
        assert!(matches!(classify(&resp), Kind::Response));
        assert_eq!(trim_line(b"\xEF\xBB\xBF {\"a\":1}\r\n"), b"{\"a\":1}");
    }
}
