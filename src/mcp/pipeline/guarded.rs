//! The handler as rmcp sees it: every request and notification runs under a panic guard
//! (a panic answers that request with "internal error in METHOD" and the server lives on;
//! the panic's message, which can quote client input, goes to stderr only), and the
//! router hears when each request's handler has finished.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use rmcp::ErrorData as McpError;
use rmcp::model::{ClientNotification, ClientRequest, ErrorCode, ProtocolVersion, RequestId};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, Service};
use tokio::sync::mpsc;

use crate::mcp::failure::Reason;
use crate::mcp::handler::Handler;
use crate::mcp::logging::STDERR_ONLY;

/// The handler as rmcp sees it: every request and notification runs under a panic guard,
/// and the router hears when each request's handler has finished.
#[derive(Clone)]
pub(super) struct Guarded {
    pub(super) handler: Handler,
    /// Hears the internal id of each request whose handler finished.
    pub(super) finished: mpsc::UnboundedSender<i64>,
    /// The method whose handler panics on purpose (`--inject-panic`, for tests).
    pub(super) panic_in: Option<Arc<str>>,
}

/// Tells the router that a request's handler is done when dropped — on completion, on a
/// panic, or when rmcp drops the future.
struct FinishedGuard {
    id: Option<i64>,
    tx: mpsc::UnboundedSender<i64>,
}

impl Drop for FinishedGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let _ = self.tx.send(id);
        }
    }
}

impl Guarded {
    fn injects(&self, method: &str) -> bool {
        self.panic_in.as_deref() == Some(method)
    }
}

impl Service<RoleServer> for Guarded {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ServerResult, McpError> {
        let _finished = FinishedGuard {
            id: match context.id {
                RequestId::Number(n) => Some(n),
                RequestId::String(_) => None,
            },
            tx: self.finished.clone(),
        };
        let method = request.method().to_string();
        let what = match &request {
            ClientRequest::CallToolRequest(call) => {
                format!("tool {}", rootgrep_core::quote::echo(&call.params.name))
            }
            _ => method.clone(),
        };
        let inject = self.injects(&method);
        let run = async move {
            if inject {
                panic!("injected panic in {method}");
            }
            Service::handle_request(&self.handler, request, context).await
        };
        match AssertUnwindSafe(run).catch_unwind().await {
            Ok(result) => result,
            Err(panic) => {
                // The payload can quote client input (an argument in an assertion's
                // message): stderr only, never the answer or a log notification.
                let message = panic_message(panic.as_ref());
                tracing::error!(target: STDERR_ONLY, "{what} panicked: {message}");
                Err(McpError::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("internal error in {what}"),
                    Some(serde_json::json!({ "reason": Reason::Internal.code() })),
                ))
            }
        }
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        let method = notification_method(&notification);
        let inject = self.injects(&method);
        let run = async move {
            if inject {
                panic!("injected panic in {method}");
            }
            Service::handle_notification(&self.handler, notification, context).await
        };
        match AssertUnwindSafe(run).catch_unwind().await {
            Ok(result) => result,
            Err(panic) => {
                tracing::error!(
                    target: STDERR_ONLY,
                    "a notification handler panicked: {}",
                    panic_message(panic.as_ref())
                );
                Ok(())
            }
        }
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        Service::get_info(&self.handler)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        Service::supported_protocol_versions(&self.handler)
    }
}

fn notification_method(notification: &ClientNotification) -> String {
    match notification {
        ClientNotification::CancelledNotification(_) => "notifications/cancelled".into(),
        ClientNotification::ProgressNotification(_) => "notifications/progress".into(),
        ClientNotification::InitializedNotification(_) => "notifications/initialized".into(),
        ClientNotification::RootsListChangedNotification(_) => {
            "notifications/roots/list_changed".into()
        }
        ClientNotification::CustomNotification(custom) => custom.method.clone(),
        _ => "notifications/other".into(),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}
