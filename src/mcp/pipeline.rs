//! The request pipeline: one path for every client request, between the stdio framing
//! (`stdio.rs`) and rmcp, that can be neither wedged nor crashed by what a client sends.
//!
//! - **Own ids.** Every admitted request gets an internal integer id; rmcp only ever sees
//!   those, and the client's id (a string, any integer up to 2^64, a negative one) is put
//!   back on the answer exactly as sent. Cancellations and `subscriptions/listen`
//!   subscription ids are translated the same way.
//! - **Admission.** At most [`MAX_IN_FLIGHT`] requests run at once; `subscriptions/listen`
//!   streams, which live until cancelled, have their own bound ([`MAX_STREAMS`], refused
//!   with an error above it) so open streams never starve requests. A request holds its
//!   slot until its handler has really finished or its answer has gone out, whichever
//!   comes first — not merely until it was cancelled, since work that has not stopped
//!   still counts. At most [`MAX_WAITING`] messages, holding at most
//!   [`MAX_WAITING_BYTES`] of line text between them, wait in order behind full slots;
//!   then stdin is not read (backpressure, not unbounded buffering). A waiting message is
//!   its text: it becomes rmcp's typed message (a `Value` tree, many times the text) only
//!   when it is started, so what waits costs what was sent.
//! - **Panics.** `Guarded` wraps the handler for every method (and notification): a
//!   panic answers that request with "internal error in METHOD" (`data.reason`
//!   `internal`) and the server lives on; the panic's message, which can quote client
//!   input, goes to stderr only.
//! - **Sessions.** Each rmcp service ("generation") is served over an in-memory channel
//!   transport. rmcp locks a service into the stateless (2026-07-28) lifecycle on the
//!   first stateless request; an `initialize` after that starts a fresh service for the
//!   legacy session, sharing the same `Session`, while the stateless one finishes its
//!   requests and is then closed. A service that ended (a failed `initialize`) is
//!   replaced the same way, so the next request is still answered.
//! - **EOF.** When stdin ends, waiting requests are dropped, running work and pending
//!   questions to the client are cancelled, answers already made are flushed, and the
//!   pipeline returns within [`EOF_GRACE`] — nobody is left to read anything later.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta, JsonRpcError, JsonRpcMessage,
    ProtocolVersion, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{RoleServer, Service, ServiceExt};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::mcp::handler::Handler;
use crate::mcp::stdio::{self, Inbound, Message, Share};

mod guarded;
mod outbound;
mod services;
use guarded::Guarded;

/// Most requests handled at once. More pipelined requests wait here as parsed messages
/// instead of as running tasks, so a burst of thousands keeps memory flat.
pub const MAX_IN_FLIGHT: usize = 256;

/// Most `subscriptions/listen` streams open at once (each lives until cancelled).
pub const MAX_STREAMS: usize = 64;

/// Most messages waiting behind full slots; beyond it stdin is not read.
pub const MAX_WAITING: usize = 1024;

/// Most bytes of line text held by messages read from stdin and not yet taken by the
/// pipeline (waiting behind full slots, or queued between the reader and the pipeline);
/// beyond it stdin is not read. Every accepted line fits: see the assertion below.
pub const MAX_WAITING_BYTES: usize = 64 * 1024 * 1024;

const _: () = assert!(stdio::MAX_LINE_BYTES <= MAX_WAITING_BYTES);

/// How long, after stdin ends, answers already on their way may take to be written.
pub const EOF_GRACE: Duration = Duration::from_millis(300);

/// Requests at least this long are parsed on a blocking thread (see `parse_request`).
const PARSE_ASIDE_BYTES: usize = 1024 * 1024;

/// Capacity of each service's input queue (admission bounds the requests in it).
const SERVICE_QUEUE: usize = 64;

/// Test hooks that make the pipeline misbehave on purpose.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Panic inside the handling of this method (request or notification).
    pub panic_in: Option<String>,
}

/// Serves one client over `input`/`output` with `handler` until the input ends.
pub async fn serve<R, W>(handler: Handler, faults: Faults, input: R, output: W)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (inbound_tx, inbound_rx) = mpsc::channel(64);
    let (lines_tx, lines_rx) = mpsc::channel::<Vec<u8>>(1024);
    let (out_tx, out_rx) = mpsc::channel(1024);
    // Unbounded, yet bounded in practice: one message per admitted request.
    let (finished_tx, finished_rx) = mpsc::unbounded_channel();
    let budget = Arc::new(tokio::sync::Semaphore::new(MAX_WAITING_BYTES));
    tokio::spawn(stdio::read_input(
        input,
        budget,
        inbound_tx,
        lines_tx.clone(),
    ));
    let writer = tokio::spawn(stdio::write_output(output, lines_rx));
    let mut router = Router {
        guard: Guarded {
            handler,
            finished: finished_tx,
            panic_in: faults.panic_in.map(Arc::from),
        },
        services: Vec::new(),
        current: None,
        entries: HashMap::new(),
        next_id: 1,
        waiting: VecDeque::new(),
        requests: 0,
        streams: 0,
        out_tx,
        lines: lines_tx,
        eof: false,
    };
    let mut events = Events {
        inbound: inbound_rx,
        out: out_rx,
        finished: finished_rx,
    };
    router.run(&mut events).await;
    drop(router);
    // The writer ends once every line queued is written (the reader has dropped its
    // sender at EOF); a client that stopped reading cannot hold the exit.
    let _ = tokio::time::timeout(EOF_GRACE, writer).await;
}

/// What wakes the router.
struct Events {
    inbound: mpsc::Receiver<Inbound>,
    out: mpsc::Receiver<Out>,
    finished: mpsc::UnboundedReceiver<i64>,
}

/// What the rmcp services send the router, in order: a service's end comes after every
/// message it sent, so no answer is mistaken for lost.
enum Out {
    Message(Box<ServerJsonRpcMessage>),
    Ended(usize),
}

/// One admitted request.
struct Entry {
    /// The client's id, exactly as sent.
    original: Value,
    /// The service handling it.
    service: usize,
    /// The admission slot it holds, until its handler finished or its answer went out.
    slot: Slot,
    /// A cancellation was forwarded: rmcp sends no answer, so the entry goes with the slot.
    cancelled: bool,
    /// A `subscriptions/listen` stream (its messages carry its id as subscription id).
    listen: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    None,
    Request,
    Stream,
}

/// A message waiting behind full slots, in arrival order: its text (parsed when it is
/// started) and its share of [`MAX_WAITING_BYTES`].
enum Queued {
    Request {
        id: Value,
        method: String,
        text: Box<[u8]>,
        share: Share,
    },
    Notification {
        text: Box<[u8]>,
        share: Share,
    },
}

/// The lifecycle rmcp has entered for one service.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lifecycle {
    /// Nothing decided yet (only pings, discovery or refused requests so far).
    Fresh,
    /// Locked into 2026-07-28 per-request handling by a stateless request.
    Stateless,
    /// `initialize` was sent.
    Legacy,
    /// rmcp's service stopped (e.g. `initialize` failed).
    Ended,
}

/// One rmcp service.
struct ServiceSlot {
    input: Option<mpsc::Sender<ClientJsonRpcMessage>>,
    ct: CancellationToken,
    lifecycle: Lifecycle,
    /// Requests of this service holding a slot.
    in_flight: usize,
    /// No new requests go here; its input closes once `in_flight` is 0.
    retired: bool,
    /// The `initialize` request it is handling: until it is answered, later requests
    /// wait (rmcp reads nothing else meanwhile, and drops them if `initialize` fails).
    handshake: Option<i64>,
}

struct Router {
    guard: Guarded,
    services: Vec<ServiceSlot>,
    current: Option<usize>,
    entries: HashMap<i64, Entry>,
    next_id: i64,
    waiting: VecDeque<Queued>,
    requests: usize,
    streams: usize,
    out_tx: mpsc::Sender<Out>,
    lines: mpsc::Sender<Vec<u8>>,
    /// stdin has ended.
    eof: bool,
}

impl Router {
    async fn run(&mut self, events: &mut Events) {
        // Set at EOF: the last moment to wait for answers already on their way.
        let mut give_up: Option<tokio::time::Instant> = None;
        loop {
            let can_read = !self.eof && self.waiting.len() < MAX_WAITING;
            let deadline = give_up.unwrap_or_else(tokio::time::Instant::now);
            tokio::select! {
                message = events.inbound.recv(), if can_read => match message {
                    Some(message) => self.inbound(message, &mut events.out).await,
                    None => {
                        self.end_of_input();
                        give_up = Some(tokio::time::Instant::now() + EOF_GRACE);
                    }
                },
                Some(out) = events.out.recv() => self.outbound(out).await,
                Some(id) = events.finished.recv() => self.finished(id),
                _ = tokio::time::sleep_until(deadline), if give_up.is_some() => break,
            }
            if self.eof {
                if self.entries.is_empty() {
                    break;
                }
            } else {
                self.admit(&mut events.out).await;
            }
        }
    }

    async fn inbound(&mut self, inbound: Inbound, out: &mut mpsc::Receiver<Out>) {
        let Inbound { message, share } = inbound;
        match message {
            Message::Request { id, method, text } => {
                self.waiting.push_back(Queued::Request {
                    id,
                    method,
                    text,
                    share,
                });
            }
            Message::Notification(text) => {
                if self.waiting.is_empty() {
                    self.notify_text(text, share, out).await;
                } else {
                    // Keep the order: a notification after a waiting request follows it.
                    self.waiting.push_back(Queued::Notification { text, share });
                }
            }
            Message::Cancel {
                request_id,
                notification,
            } => self.cancel(request_id, notification, out).await,
            Message::Response(text) => {
                // Answers to our roots/elicitation questions: never held behind waiting
                // requests (a running handler may be waiting for exactly this answer).
                let Some(message) = stdio::parse_response(&text) else {
                    tracing::debug!("dropped a response that does not parse");
                    return;
                };
                drop((text, share));
                match self.current.map(|s| (s, self.services[s].lifecycle)) {
                    Some((service, Lifecycle::Legacy | Lifecycle::Stateless)) => {
                        self.send_or_drop(service, message, out).await;
                    }
                    _ => tracing::debug!("dropped a response outside any session"),
                }
            }
        }
    }

    /// Parses a notification's text and forwards it; one rmcp's type does not take is
    /// dropped (a notification is never answered).
    async fn notify_text(&mut self, text: Box<[u8]>, share: Share, out: &mut mpsc::Receiver<Out>) {
        let parsed = stdio::parse_notification(&text);
        drop((text, share));
        match parsed {
            Ok(notification) => self.notify(notification, out).await,
            Err(err) => tracing::debug!("dropped a notification that does not parse: {err}"),
        }
    }

    /// Forwards a notification to the current session; before one exists it is dropped
    /// (rmcp ends a service that gets a notification before `initialize`).
    async fn notify(&mut self, notification: ClientNotification, out: &mut mpsc::Receiver<Out>) {
        match self.current.map(|s| (s, self.services[s].lifecycle)) {
            Some((service, Lifecycle::Legacy | Lifecycle::Stateless)) => {
                let message = ClientJsonRpcMessage::notification(notification);
                self.send_or_drop(service, message, out).await;
            }
            _ => tracing::debug!("dropped a notification sent before initialize"),
        }
    }

    async fn cancel(
        &mut self,
        request_id: Value,
        mut notification: ClientNotification,
        out: &mut mpsc::Receiver<Out>,
    ) {
        let before = self.waiting.len();
        self.waiting
            .retain(|q| !matches!(q, Queued::Request { id, .. } if *id == request_id));
        if self.waiting.len() != before {
            return; // never started: nothing to tell rmcp, and no answer is due
        }
        let targets: Vec<(i64, usize)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.original == request_id && !e.cancelled && e.slot != Slot::None)
            .map(|(id, e)| (*id, e.service))
            .collect();
        for (id, service) in targets {
            if self.services[service].lifecycle == Lifecycle::Fresh {
                continue; // rmcp ends a service on a notification before its lifecycle
            }
            if let Some(entry) = self.entries.get_mut(&id) {
                entry.cancelled = true;
            }
            if let ClientNotification::CancelledNotification(cancelled) = &mut notification {
                cancelled.params.request_id = Some(RequestId::Number(id));
            }
            let message = ClientJsonRpcMessage::notification(notification.clone());
            self.send_or_drop(service, message, out).await;
        }
    }

    /// Admits waiting messages, in order, while slots are free.
    async fn admit(&mut self, out: &mut mpsc::Receiver<Out>) {
        loop {
            let slot = match self.waiting.front() {
                None => return,
                Some(Queued::Notification { .. }) => Slot::None,
                Some(Queued::Request { .. }) if self.handshake_pending() => return,
                Some(Queued::Request { method, .. }) => {
                    // The method rmcp's listen request type is tagged with.
                    if method == "subscriptions/listen" {
                        Slot::Stream
                    } else if self.requests < MAX_IN_FLIGHT {
                        Slot::Request
                    } else {
                        return;
                    }
                }
            };
            match self.waiting.pop_front() {
                Some(Queued::Notification { text, share }) => {
                    self.notify_text(text, share, out).await;
                }
                Some(Queued::Request {
                    id,
                    method,
                    text,
                    share,
                }) => {
                    // Parsed once, now: the text (and its share of the budget) goes as
                    // soon as the typed request exists.
                    let parsed = self.parse_request(&method, text, out).await;
                    drop(share);
                    let request = match parsed {
                        Ok(request) => request,
                        Err(why) => {
                            let line = stdio::error_line_with_id(
                                &id,
                                -32602,
                                &format!(
                                    "invalid params for {}: {}",
                                    rootgrep_core::quote::echo(&method),
                                    rootgrep_core::quote::cut(
                                        &why,
                                        rootgrep_core::quote::DETAIL_MAX_CHARS
                                    )
                                ),
                            );
                            let _ = self.lines.send(line).await;
                            continue;
                        }
                    };
                    if slot == Slot::Stream && self.streams >= MAX_STREAMS {
                        let line = stdio::error_line_with_id(
                            &id,
                            -32000,
                            &format!(
                                "too many open subscriptions/listen streams (at most \
                                 {MAX_STREAMS}); cancel one before opening another"
                            ),
                        );
                        let _ = self.lines.send(line).await;
                        continue;
                    }
                    self.start(id, request, slot, out).await;
                }
                None => return,
            }
        }
    }

    /// rmcp's typed request from a waiting request's text. A large one is parsed on a
    /// blocking thread while rmcp's output keeps being written, so one huge request does
    /// not hold up the answers of those already running.
    async fn parse_request(
        &mut self,
        method: &str,
        text: Box<[u8]>,
        out: &mut mpsc::Receiver<Out>,
    ) -> Result<ClientRequest, String> {
        if text.len() < PARSE_ASIDE_BYTES {
            return stdio::parse_request(method, &text);
        }
        let method = method.to_owned();
        let parse = tokio::task::spawn_blocking(move || stdio::parse_request(&method, &text));
        tokio::pin!(parse);
        loop {
            tokio::select! {
                parsed = &mut parse => {
                    return parsed.unwrap_or_else(|err| Err(format!("could not be read: {err}")));
                }
                Some(event) = out.recv() => Box::pin(self.outbound(event)).await,
            }
        }
    }

    /// Whether the current service is still answering its `initialize`.
    fn handshake_pending(&self) -> bool {
        self.current
            .is_some_and(|s| self.services[s].handshake.is_some())
    }

    /// Hands one request to the service that should answer it.
    async fn start(
        &mut self,
        original: Value,
        mut request: ClientRequest,
        slot: Slot,
        out: &mut mpsc::Receiver<Out>,
    ) {
        // A second try only when the service stopped before taking the request.
        for _ in 0..2 {
            let id = self.next_id;
            self.next_id += 1;
            let service = self.service_for(&request, id);
            self.entries.insert(
                id,
                Entry {
                    original: original.clone(),
                    service,
                    slot,
                    cancelled: false,
                    listen: slot == Slot::Stream,
                },
            );
            match slot {
                Slot::Request => self.requests += 1,
                Slot::Stream => self.streams += 1,
                Slot::None => {}
            }
            self.services[service].in_flight += 1;
            let message = ClientJsonRpcMessage::request(request, RequestId::Number(id));
            match self.send_to(service, message, out).await {
                Ok(()) => return,
                Err(JsonRpcMessage::Request(unsent)) => {
                    if let Some(entry) = self.entries.remove(&id) {
                        self.release(id, &entry);
                    }
                    let state = &mut self.services[service];
                    state.lifecycle = Lifecycle::Ended;
                    state.input = None;
                    state.handshake = None;
                    request = unsent.request;
                }
                Err(_) => return,
            }
        }
    }

    /// The handler of request `id` has finished (or its future was dropped).
    fn finished(&mut self, id: i64) {
        let Some(entry) = self.entries.get(&id) else {
            return;
        };
        let cancelled = entry.cancelled;
        let (service, slot) = (entry.service, entry.slot);
        self.release_slot(id, service, slot);
        if cancelled {
            // rmcp drops the answer of a cancelled request: nothing will come for it.
            self.entries.remove(&id);
        }
    }

    fn release(&mut self, id: i64, entry: &Entry) {
        self.release_slot(id, entry.service, entry.slot);
    }

    /// Frees the slot of request `id` (once: the entry's slot is cleared).
    fn release_slot(&mut self, id: i64, service: usize, slot: Slot) {
        match slot {
            Slot::None => return,
            Slot::Request => self.requests -= 1,
            Slot::Stream => self.streams -= 1,
        }
        if let Some(entry) = self.entries.get_mut(&id) {
            entry.slot = Slot::None;
        }
        let state = &mut self.services[service];
        state.in_flight -= 1;
        self.close_if_idle(service);
    }

    /// stdin ended: drop what waits, cancel what runs (handlers, questions to the
    /// client), and close every service's input.
    fn end_of_input(&mut self) {
        self.eof = true;
        self.waiting.clear();
        for service in &mut self.services {
            service.ct.cancel();
            service.input = None;
        }
    }
}

/// The transport between the router and one rmcp service: typed messages over channels.
struct Lane {
    rx: mpsc::Receiver<ClientJsonRpcMessage>,
    out: mpsc::Sender<Out>,
}

impl Transport<RoleServer> for Lane {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            out.send(Out::Message(Box::new(item)))
                .await
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "output closed"))
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.rx.close();
        Ok(())
    }
}
