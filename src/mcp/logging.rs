//! Logs: to stderr through `tracing` (level from `--log-level` or `RUST_LOG`), and to the
//! client as MCP `notifications/message` at or above the level it chose with
//! `logging/setLevel` (default `warning`).
//!
//! Only this crate's own events are forwarded to the client (never a dependency's), and
//! they are rate-limited: a burst of [`BURST`] messages, then [`PER_SECOND`] a second; the
//! next message that gets through says how many were dropped. Our log messages name paths
//! and counts, never file contents or environment values.
//!
//! A message's `data` is an object a host can render: `event` (a stable name such as
//! `index_built`, `watch_failed`, `roots_changed`, `ignore_file_skipped`; `log` when the
//! call site gave none), the event's fields (`root`, `files`, `ms`, …: numbers stay
//! numbers) and `message`, the sentence. Events with the target [`STDERR_ONLY`] (a panic's
//! message, which can quote client input) never reach the client.

#![allow(deprecated)] // MCP logging is deprecated in 2026-07-28 but is how legacy clients see logs.

use std::sync::OnceLock;
use std::time::Instant;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::prelude::*;

/// Level numbers, RFC 5424 order (debug = 0 … emergency = 7).
pub const DEFAULT_LEVEL: u8 = 3; // warning
pub const BURST: f64 = 20.0;
pub const PER_SECOND: f64 = 5.0;

pub fn level_number(level: &LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn mcp_level(level: u8) -> LoggingLevel {
    match level {
        0 => LoggingLevel::Debug,
        1 => LoggingLevel::Info,
        2 => LoggingLevel::Notice,
        3 => LoggingLevel::Warning,
        4 => LoggingLevel::Error,
        5 => LoggingLevel::Critical,
        6 => LoggingLevel::Alert,
        _ => LoggingLevel::Emergency,
    }
}

/// The target of events that go to stderr only, never to the client.
pub const STDERR_ONLY: &str = "rootgrep::stderr_only";

/// One message on its way to the client: its level and its `data` object.
struct Record {
    level: u8,
    data: serde_json::Map<String, serde_json::Value>,
}

static CLIENT_LOG: OnceLock<mpsc::Sender<Record>> = OnceLock::new();

/// A tracing layer that queues this crate's events for the client.
struct ClientLayer;

impl<S> tracing_subscriber::Layer<S> for ClientLayer
where
    S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: Context<'_, S>,
    ) {
        let mut token = TokenVisitor(None);
        attrs.record(&mut token);
        if let (Some(token), Some(span)) = (token.0, ctx.span(id)) {
            span.extensions_mut().insert(SinkToken(token));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let meta = event.metadata();
        if !meta.target().starts_with("rootgrep") || meta.target() == STDERR_ONLY {
            return;
        }
        let level = match *meta.level() {
            tracing::Level::ERROR => 4,
            tracing::Level::WARN => 3,
            tracing::Level::INFO => 1,
            _ => 0,
        };
        let data = record_data(event);
        // A 2026-07-28 request that opted in gets the events of its own work.
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope {
                if let Some(SinkToken(token)) = span.extensions().get::<SinkToken>() {
                    let sinks = REQUEST_SINKS.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some((min, sender)) = sinks.as_ref().and_then(|m| m.get(token))
                        && level >= *min
                    {
                        let _ = sender.send(Record {
                            level,
                            data: data.clone(),
                        });
                    }
                    break;
                }
            }
        }
        let Some(sender) = CLIENT_LOG.get() else {
            return;
        };
        // A full queue means the client is far behind: dropping is the rate limit's job.
        let _ = sender.try_send(Record { level, data });
    }
}

/// Marks a span as a request's log scope (see [`RequestLog`]).
struct SinkToken(u64);

struct TokenVisitor(Option<u64>);

impl tracing::field::Visit for TokenVisitor {
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        if field.name() == "log_sink" {
            self.0 = Some(value);
        }
    }
    fn record_debug(&mut self, _field: &tracing::field::Field, _value: &dyn std::fmt::Debug) {}
}

type SinkMap = std::collections::HashMap<u64, (u8, mpsc::UnboundedSender<Record>)>;
static REQUEST_SINKS: std::sync::Mutex<Option<SinkMap>> = std::sync::Mutex::new(None);

/// The log of one 2026-07-28 request that asked for `_meta.logLevel`: events emitted while
/// its work runs inside [`RequestLog::span`] are sent to the client as
/// `notifications/message` on that request, before its response ([`RequestLog::flush`]).
/// Requests without the opt-in get none (the revision forbids it).
pub struct RequestLog {
    token: u64,
    span: tracing::Span,
    rx: mpsc::UnboundedReceiver<Record>,
}

impl RequestLog {
    pub fn new(level: &LoggingLevel) -> RequestLog {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let token = NEXT.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        REQUEST_SINKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(Default::default)
            .insert(token, (level_number(level), tx));
        let span = tracing::info_span!(target: "rootgrep::request", "request", log_sink = token);
        RequestLog { token, span, rx }
    }

    pub fn span(&self) -> tracing::Span {
        self.span.clone()
    }

    /// Sends what was logged (at most [`BURST`] messages, then a count of the rest).
    pub async fn flush(mut self, peer: &Peer<RoleServer>) {
        let mut sent = 0usize;
        let mut dropped = 0usize;
        while let Ok(record) = self.rx.try_recv() {
            if sent >= BURST as usize {
                dropped += 1;
                continue;
            }
            sent += 1;
            let _ = peer
                .notify_logging_message(param(record.level, record.data))
                .await;
        }
        if dropped > 0 {
            let mut data = serde_json::Map::new();
            data.insert("event".into(), "logs_dropped".into());
            data.insert("dropped".into(), dropped.into());
            let message = format!("{dropped} more log messages dropped");
            data.insert("message".into(), message.into());
            let _ = peer.notify_logging_message(param(2, data)).await;
        }
    }
}

impl Drop for RequestLog {
    fn drop(&mut self) {
        if let Some(sinks) = REQUEST_SINKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            sinks.remove(&self.token);
        }
    }
}

/// The notification of one record, `logger` "rootgrep".
fn param(
    level: u8,
    data: serde_json::Map<String, serde_json::Value>,
) -> LoggingMessageNotificationParam {
    let mut param =
        LoggingMessageNotificationParam::new(mcp_level(level), serde_json::Value::Object(data));
    param.logger = Some("rootgrep".to_string());
    param
}

/// An event's `data` object: `event` first (`log` when the event has no `event` field),
/// then its fields, numbers and booleans as such, everything else as text; the sentence
/// is `message`.
fn record_data(event: &Event<'_>) -> serde_json::Map<String, serde_json::Value> {
    let mut data = serde_json::Map::new();
    data.insert("event".into(), "log".into());
    event.record(&mut FieldVisitor(&mut data));
    data
}

struct FieldVisitor<'a>(&'a mut serde_json::Map<String, serde_json::Value>);

impl FieldVisitor<'_> {
    fn put(&mut self, field: &tracing::field::Field, value: serde_json::Value) {
        self.0.insert(field.name().to_string(), value);
    }
}

impl tracing::field::Visit for FieldVisitor<'_> {
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.put(field, value.into());
    }
    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.put(field, value.into());
    }
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.put(field, value.into());
    }
    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        self.put(field, value.into());
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.put(field, value.into());
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.put(field, format!("{value:?}").into());
    }
}

/// Installs the stderr subscriber (and the client forwarding layer). `level` is the
/// `--log-level` flag; without it `RUST_LOG`, then `warn`.
pub fn init_tracing(level: Option<&str>) {
    use tracing_subscriber::EnvFilter;
    let filter = match level {
        Some(level) => EnvFilter::try_new(level).unwrap_or_else(|_| EnvFilter::new("warn")),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_filter(filter);
    // The client layer sees this crate's events regardless of the stderr filter; it
    // filters by the client's own level when forwarding.
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(
            ClientLayer.with_filter(
                tracing_subscriber::filter::Targets::new()
                    .with_target("rootgrep", tracing::Level::DEBUG),
            ),
        )
        .try_init();
}

/// Starts forwarding queued log records to the client, honouring its level.
pub fn start_forwarding(session: std::sync::Arc<super::session::Session>, peer: Peer<RoleServer>) {
    let (tx, mut rx) = mpsc::channel::<Record>(256);
    if CLIENT_LOG.set(tx).is_err() {
        return; // Already forwarding (one client per process).
    }
    tokio::spawn(async move {
        let mut bucket = TokenBucket::new();
        let mut dropped = 0u64;
        while let Some(record) = rx.recv().await {
            if record.level < session.log_level() {
                continue;
            }
            if !bucket.take(Instant::now()) {
                dropped += 1;
                continue;
            }
            let mut data = record.data;
            if dropped > 0 {
                // Said in a field and in the sentence.
                data.insert("dropped".into(), dropped.into());
                if let Some(serde_json::Value::String(message)) = data.get_mut("message") {
                    message.push_str(&format!(
                        " ({dropped} earlier log messages dropped by the rate limit)"
                    ));
                }
                dropped = 0;
            }
            if peer
                .notify_logging_message(param(record.level, data))
                .await
                .is_err()
            {
                break;
            }
        }
    });
}

/// Burst-then-steady rate limiter.
struct TokenBucket {
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    fn new() -> TokenBucket {
        TokenBucket {
            tokens: BURST,
            last: Instant::now(),
        }
    }

    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * PER_SECOND).min(BURST);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_allows_a_burst_then_the_steady_rate() {
        let mut bucket = TokenBucket::new();
        let start = Instant::now();
        let burst = (0..100).filter(|_| bucket.take(start)).count();
        assert_eq!(burst, BURST as usize);
        let later = start + std::time::Duration::from_secs(1);
        let steady = (0..100).filter(|_| bucket.take(later)).count();
        assert_eq!(steady, PER_SECOND as usize);
    }
}
