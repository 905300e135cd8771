//! The rmcp services behind the pipeline: which one a request goes to (the lifecycle's, or a
//! stateless one), starting one, handing it messages, and closing it when idle or ended.

use super::*;

impl Router {
    /// The service for a new request, starting one when needed: at first, after the
    /// current one ended, and for `initialize` once the current one is stateless.
    pub(super) fn service_for(&mut self, request: &ClientRequest, id: i64) -> usize {
        let initialize = matches!(request, ClientRequest::InitializeRequest(_));
        let stateless = !initialize && self.is_stateless(request);
        let service = match self.current {
            Some(s) if self.services[s].lifecycle == Lifecycle::Ended => self.spawn_service(),
            Some(s) if initialize && self.services[s].lifecycle == Lifecycle::Stateless => {
                self.services[s].retired = true;
                self.close_if_idle(s);
                self.spawn_service()
            }
            Some(s) => s,
            None => self.spawn_service(),
        };
        let state = &mut self.services[service].lifecycle;
        if *state == Lifecycle::Fresh {
            if initialize {
                *state = Lifecycle::Legacy;
                self.services[service].handshake = Some(id);
            } else if stateless {
                *state = Lifecycle::Stateless;
            }
        }
        service
    }

    /// Whether rmcp, before any lifecycle, takes this request as a stateless one (the
    /// same test rmcp applies: complete 2026-07-28 metadata with a supported version).
    pub(super) fn is_stateless(&self, request: &ClientRequest) -> bool {
        if matches!(
            request,
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
        ) {
            return false;
        }
        let meta = request.get_meta();
        let Some(version) = meta.protocol_version() else {
            return false;
        };
        meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
            .is_empty()
            && Service::supported_protocol_versions(&self.guard).contains(&version)
    }

    pub(super) fn spawn_service(&mut self) -> usize {
        let index = self.services.len();
        let (input, rx) = mpsc::channel(SERVICE_QUEUE);
        let ct = CancellationToken::new();
        let lane = Lane {
            rx,
            out: self.out_tx.clone(),
        };
        let guard = self.guard.clone();
        let ended = self.out_tx.clone();
        let token = ct.clone();
        tokio::spawn(async move {
            match guard.serve_with_ct(lane, token).await {
                Ok(running) => {
                    if let Err(err) = running.waiting().await {
                        tracing::error!("MCP service task failed: {err}");
                    }
                }
                Err(err) => tracing::info!("MCP session did not start: {err}"),
            }
            let _ = ended.send(Out::Ended(index)).await;
        });
        self.services.push(ServiceSlot {
            input: Some(input),
            ct,
            lifecycle: Lifecycle::Fresh,
            in_flight: 0,
            retired: false,
            handshake: None,
        });
        self.current = Some(index);
        index
    }

    /// Sends a message to a service, still handling rmcp's output meanwhile (rmcp may be
    /// waiting to hand us an answer before it reads more input). `Err` gives the message
    /// back when the service has stopped.
    pub(super) async fn send_to(
        &mut self,
        service: usize,
        message: ClientJsonRpcMessage,
        out: &mut mpsc::Receiver<Out>,
    ) -> Result<(), ClientJsonRpcMessage> {
        let Some(input) = self.services[service].input.clone() else {
            return Err(message);
        };
        let send = input.send(message);
        tokio::pin!(send);
        loop {
            tokio::select! {
                sent = &mut send => return sent.map_err(|unsent| unsent.0),
                Some(event) = out.recv() => Box::pin(self.outbound(event)).await,
            }
        }
    }

    /// Sends a notification or response; a stopped service has no use for it.
    pub(super) async fn send_or_drop(
        &mut self,
        service: usize,
        message: ClientJsonRpcMessage,
        out: &mut mpsc::Receiver<Out>,
    ) {
        if self.send_to(service, message, out).await.is_err() {
            tracing::debug!("dropped a message for a stopped MCP service");
        }
    }

    /// Closes a retired service's input once it has nothing left to answer.
    pub(super) fn close_if_idle(&mut self, service: usize) {
        let state = &mut self.services[service];
        if state.retired && state.in_flight == 0 {
            state.input = None;
        }
    }

    /// rmcp's service stopped (everything it sent has been handled): its requests still
    /// open will never be answered by it, so they are answered here (unless cancelled, or
    /// stdin has ended) and their slots freed.
    pub(super) async fn ended(&mut self, service: usize) {
        let state = &mut self.services[service];
        state.lifecycle = Lifecycle::Ended;
        state.input = None;
        state.handshake = None;
        let gone: Vec<i64> = self
            .entries
            .iter()
            .filter(|(_, e)| e.service == service)
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            let Some(entry) = self.entries.remove(&id) else {
                continue;
            };
            self.release(id, &entry);
            if !entry.cancelled && !self.eof {
                let line = stdio::error_line_with_id(
                    &entry.original,
                    -32603,
                    "internal error: the MCP session stopped before answering; send the request again",
                );
                let _ = self.lines.send(line).await;
            }
        }
    }
}
