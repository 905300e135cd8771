//! The MCP adapter: the only code that knows rmcp, JSON-RPC and wire shapes. It turns
//! client requests into calls on the domain modules (roots, files, search) and their
//! results into tool answers, and owns everything the protocol adds on top: asking the
//! client for roots and the user for permission, progress, cancellation and logging.

pub mod ask;
pub mod call;
pub mod completion;
pub mod failure;
pub mod handler;
pub mod hints;
pub mod logging;
pub mod modern;
pub mod pipeline;
pub mod progress;
pub mod prompts;
pub mod render;
pub mod resources;
pub mod sample;
pub mod sealed;
pub mod session;
pub mod shown;
pub mod stdio;
pub mod subscriptions;
pub mod tools;

use rootgrep_core::config::Config;

/// Serves one client over the given byte streams until the input ends.
pub async fn serve<R, W>(config: Config, input: R, output: W) -> Result<(), String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    serve_with(config, pipeline::Faults::default(), input, output).await
}

/// [`serve`] with test faults injected into the request pipeline.
pub async fn serve_with<R, W>(
    config: Config,
    faults: pipeline::Faults,
    input: R,
    output: W,
) -> Result<(), String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let session = session::Session::new(config, logging::DEFAULT_LEVEL, modern::new_codec());
    let handler = handler::Handler::new(session);
    pipeline::serve(handler, faults, input, output).await;
    Ok(())
}

/// Serves MCP on this process's stdin and stdout.
pub async fn serve_stdio(config: Config, faults: pipeline::Faults) -> Result<(), String> {
    serve_with(config, faults, tokio::io::stdin(), tokio::io::stdout()).await
}
