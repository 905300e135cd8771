//! The MCP adapter: the only code that knows rmcp, JSON-RPC and wire shapes. It turns
//! client requests into calls on the domain modules (roots, files, search) and their
//! results into tool answers, and owns everything the protocol adds on top: asking the
//! client for roots and the user for permission, progress, cancellation and logging.

pub mod ask;
pub mod call;
pub mod completion;
pub mod handler;
pub mod logging;
pub mod modern;
pub mod progress;
pub mod prompts;
pub mod render;
pub mod resources;
pub mod session;
pub mod stdio;
pub mod subscriptions;
pub mod tools;

use rmcp::ServiceExt;

use crate::config::Config;

/// Serves one client over the given byte streams until the input ends.
pub async fn serve<R, W>(config: Config, input: R, output: W) -> Result<(), String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let session = session::Session::new(config);
    let handler = handler::Handler::new(session);
    let (transport, writer) = stdio::spawn(input, output);
    let outcome = match handler.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|err| format!("server task failed: {err}")),
        Err(err) => {
            // The client went away (or broke the handshake) before the session started.
            tracing::info!("session did not start: {err}");
            Ok(())
        }
    };
    // rmcp has dropped its end: the writer drains what is queued, then ends.
    let _ = writer.await;
    outcome
}

/// Serves MCP on this process's stdin and stdout.
pub async fn serve_stdio(config: Config) -> Result<(), String> {
    serve(config, tokio::io::stdin(), tokio::io::stdout()).await
}
