//! The rmcp `ServerHandler`: the lifecycle (capabilities, versions, `initialized`, roots
//! changes, log level) and the entry point of every tool call. Each call waits (bounded)
//! for the client's first roots answer, then runs on that snapshot of the roots.

#![allow(deprecated)] // Roots and logging are deprecated in 2026-07-28, alive in legacy sessions.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, GetPromptRequestParams, GetPromptResponse, Implementation, InputRequiredResult,
    InputResponses, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::SubscriptionContext;
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tracing::Instrument;

use crate::mcp::failure::Reason;
use crate::mcp::modern::{self, ModernCall};
use crate::mcp::render::Answer;
use crate::mcp::session::Session;
use crate::mcp::{ask, completion, logging, prompts, resources, tools};
use rootgrep_core::roots::RootSet;

pub const INSTRUCTIONS: &str = "rootgrep searches, reads and edits the files of the user's \
workspace quickly (ripgrep-grade grep and glob, paged results). Every path is scoped to the \
workspace roots (see list_roots); paths outside them are refused or need the user's \
permission.";

/// The handler rmcp drives; cheap to clone (shared session).
#[derive(Clone)]
pub struct Handler {
    pub session: Arc<Session>,
}

impl Handler {
    pub fn new(session: Arc<Session>) -> Handler {
        Handler { session }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .enable_completions()
            .enable_logging()
            .build();
        if self.session.live.is_some() {
            // Subscriptions and list changes are fed by the watcher: only with watching on.
            if let Some(resources) = capabilities.resources.as_mut() {
                resources.subscribe = Some(true);
                resources.list_changed = Some(true);
            }
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("rootgrep", env!("CARGO_PKG_VERSION"))
                    .with_title("rootgrep — root-scoped code search"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // Every legacy revision through `initialize`, and 2026-07-28 per request.
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        logging::start_forwarding(self.session.clone(), context.peer.clone());
        self.session.subscriptions.start(context.peer.clone());
        if ask::client_has_roots(&context.peer) {
            ask::request_roots_refresh(self.session.clone(), context.peer.clone());
        } else {
            self.session.mark_roots_ready();
        }
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        if ask::client_has_roots(&context.peer) {
            ask::request_roots_refresh(self.session.clone(), context.peer.clone());
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session
            .log_level
            .store(logging::level_number(&request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(resources::templates())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        // Like tool calls, listing waits (bounded) for the client's first roots answer.
        let roots = roots_unless_cancelled(&self.session, &context).await?;
        resources::list(
            &self.session,
            &context,
            &roots,
            request.and_then(|r| r.cursor),
        )
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let prepared = prepare(
            &self.session,
            &context,
            "resources/read",
            &request.uri,
            &serde_json::Value::Null,
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
        )
        .await?;
        let (roots, modern) = match prepared {
            Ok(ready) => ready,
            Err(input) => return Ok(ReadResourceResponse::InputRequired(input)),
        };
        let result = resources::read_resource(
            &self.session,
            &context,
            &request.uri,
            &roots,
            modern.as_deref(),
        )
        .await;
        if let Some(input) = modern
            .as_deref()
            .and_then(|m| m.take_pending(&self.session))
        {
            return Ok(ReadResourceResponse::InputRequired(input));
        }
        result.map(ReadResourceResponse::Complete)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let path = resources::subscribable(&self.session, &request.uri)?;
        self.session.subscriptions.subscribe(path, request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::unsubscribe(&self.session, &request.uri)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Streams are fed by the watcher: none without it.
        self.session.live.as_ref()?;
        let mut accepted = SubscriptionFilter::default();
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| resources::subscribable(&self.session, uri).is_ok())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let accepted = context.accepted().clone();
        let uris = accepted
            .resource_subscriptions
            .unwrap_or_default()
            .into_iter()
            .filter_map(|uri| {
                resources::subscribable(&self.session, &uri)
                    .ok()
                    .map(|path| (path, uri))
            })
            .collect();
        let list_changed = accepted.resources_list_changed.unwrap_or(false);
        self.session
            .subscriptions
            .listen(uris, list_changed, context)
            .await;
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let roots = roots_unless_cancelled(&self.session, &context).await?;
        completion::complete(&self.session, &roots, request).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(prompts::list())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let arguments = request
            .arguments
            .clone()
            .map(serde_json::Value::Object)
            .unwrap_or_default();
        let prepared = prepare(
            &self.session,
            &context,
            "prompts/get",
            &request.name,
            &arguments,
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
        )
        .await?;
        let (roots, modern) = match prepared {
            Ok(ready) => ready,
            Err(input) => return Ok(GetPromptResponse::InputRequired(input)),
        };
        let result = prompts::get(
            &self.session,
            &context,
            &request.name,
            &request.arguments,
            roots,
            modern.as_deref(),
        )
        .await;
        if let Some(input) = modern
            .as_deref()
            .and_then(|m| m.take_pending(&self.session))
        {
            return Ok(GetPromptResponse::InputRequired(input));
        }
        result.map(GetPromptResponse::Complete)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        // rmcp routes a known method with unparsable params here; answer those as bad
        // params (-32602), as the spec asks, rather than "method not found".
        if request.method == "logging/setLevel" {
            return Err(McpError::invalid_params(
                "invalid log level; expected one of debug, info, notice, warning, error, \
                 critical, alert, emergency",
                Some(reason_data(Reason::InvalidArgument)),
            ));
        }
        if KNOWN_METHODS.contains(&request.method.as_str()) {
            return Err(McpError::invalid_params(
                format!(
                    "invalid params for {}: {}",
                    rootgrep_core::quote::echo(&request.method),
                    expected_params(&request.method)
                ),
                Some(reason_data(Reason::InvalidArgument)),
            ));
        }
        Err(McpError::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            rootgrep_core::quote::echo(&request.method),
            None,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::tool_list(
            &self.session.config,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !tools::is_known(&name) {
            let names: Vec<String> = tools::tool_list(&self.session.config)
                .into_iter()
                .map(|tool| tool.name.to_string())
                .collect();
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool \"{}\"; available: {}",
                    rootgrep_core::quote::echo(&name),
                    names.join(", ")
                ),
                Some(reason_data(Reason::UnknownTool)),
            ));
        }
        if context.ct.is_cancelled() {
            // Cancelled while queued: rmcp drops whatever is answered, so do no work.
            return Ok(Answer::cancelled().into_result().into());
        }
        let args = request.arguments.unwrap_or_default();
        let prepared = prepare(
            &self.session,
            &context,
            "tools/call",
            &name,
            &serde_json::Value::Object(args.clone()),
            request.input_responses.as_ref(),
            request.request_state.as_deref(),
        )
        .await?;
        let (roots, modern) = match prepared {
            Ok(ready) => ready,
            Err(input) => return Ok(CallToolResponse::InputRequired(input)),
        };
        let session = self.session.clone();
        // 2026-07-28: logs reach the client only for a request that asked (`_meta.logLevel`).
        let request_log = modern
            .as_ref()
            .and(context.meta.log_level())
            .map(|level| logging::RequestLog::new(&level));
        let span = request_log
            .as_ref()
            .map_or_else(tracing::Span::none, logging::RequestLog::span);
        let run = async move {
            let call = tools::Call {
                session: &session,
                ctx: &context,
                roots,
                modern: modern.as_deref(),
            };
            let started = std::time::Instant::now();
            span.in_scope(|| tracing::debug!(tool = %name, "tool call started"));
            let answer = tools::call(&call, &name, args)
                .instrument(span.clone())
                .await;
            span.in_scope(|| {
                tracing::debug!(
                    tool = %name,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    error = answer.is_error,
                    "tool call answered"
                )
            });
            if let Some(log) = request_log {
                log.flush(&context.peer).await;
            }
            match modern.as_deref().and_then(|m| m.take_pending(&session)) {
                Some(input) => CallToolResponse::InputRequired(input),
                None => answer.into_result().into(),
            }
        };
        // A panic anywhere in here is caught by the request pipeline (`pipeline::Guarded`),
        // which answers this call with an internal error; the server lives on.
        Ok(run.await)
    }
}

/// Roots and the 2026-07-28 context of one request, or (`Err`) the question to ask first.
type Prepared = Result<(Arc<RootSet>, Option<Box<ModernCall>>), InputRequiredResult>;

/// Legacy requests wait (bounded) for the session's roots; modern requests bring their own
/// context and get their roots through `input_required` when the client declared `roots`.
async fn prepare(
    session: &Arc<Session>,
    context: &RequestContext<RoleServer>,
    method: &str,
    name: &str,
    arguments: &serde_json::Value,
    responses: Option<&InputResponses>,
    request_state: Option<&str>,
) -> Result<Prepared, McpError> {
    if !modern::is_modern(context) {
        let roots = roots_unless_cancelled(session, context).await?;
        return Ok(Ok((roots, None)));
    }
    let call = ModernCall::new(
        session,
        context,
        method,
        name,
        arguments,
        responses,
        request_state,
    )?;
    Ok(call
        .roots(session)
        .map(|roots| (Arc::new(roots), Some(Box::new(call)))))
}

/// The session's roots once the client's first roots answer arrived (bounded wait); a
/// request cancelled meanwhile (or at EOF) stops waiting at once.
async fn roots_unless_cancelled(
    session: &Arc<Session>,
    context: &RequestContext<RoleServer>,
) -> Result<Arc<RootSet>, McpError> {
    tokio::select! {
        roots = session.roots_when_ready(ask::client_has_roots(&context.peer)) => Ok(roots),
        _ = context.ct.cancelled() => {
            Err(McpError::invalid_request("cancelled", Some(reason_data(Reason::Cancelled))))
        }
    }
}

/// The `data` of a JSON-RPC error that names no path: `{reason}`.
fn reason_data(reason: Reason) -> serde_json::Value {
    serde_json::json!({ "reason": reason.code() })
}

/// Methods rmcp knows: reaching `on_custom_request` with one of them means its params did
/// not parse.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "server/discover",
];

fn expected_params(method: &str) -> &'static str {
    match method {
        "tools/call" => "expected {name: string, arguments?: object}",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            "expected {uri: string}"
        }
        "prompts/get" => "expected {name: string, arguments?: object of strings}",
        "completion/complete" => {
            "expected {ref: {type: \"ref/resource\", uri} or {type: \"ref/prompt\", name}, \
             argument: {name, value}}"
        }
        "initialize" => "expected {protocolVersion, capabilities, clientInfo}",
        _ => "see the MCP specification for this method",
    }
}
