//! The `rootgrep` binary: parse flags into a `Config`, then serve MCP over stdio or run
//! one tool (`rootgrep call`). Errors are printed once, to stderr.

use std::process::ExitCode;

use clap::Parser;
use rootgrep::cli::{self, Args, Command};
use rootgrep::mcp;

fn main() -> ExitCode {
    let args = Args::parse();
    let (options, dirs) = match &args.command {
        Some(Command::Call { options, dirs, .. }) => (options, dirs),
        None => (&args.options, &args.dirs),
    };
    mcp::logging::init_tracing(options.log_level.as_deref());
    let config = match cli::config(options, dirs) {
        // One call needs no watcher or index: it would only add start-up work.
        Ok(config) if args.command.is_some() => rootgrep::config::Config {
            watch: false,
            ..config
        },
        Ok(config) => config,
        Err(err) => {
            eprintln!("rootgrep: {err}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("rootgrep: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async {
        match args.command {
            Some(Command::Call {
                tool,
                args_json,
                json,
                ..
            }) => mcp::call::run(config, &tool, &args_json, json).await,
            None => {
                use std::io::IsTerminal;
                if std::io::stdin().is_terminal() {
                    // A person ran it by hand: say what it is waiting for (stderr only).
                    eprintln!(
                        "rootgrep serves MCP over stdio and waits for a host to speak JSON-RPC \
                         on stdin. To try a tool by hand: rootgrep call grep '{{\"pattern\":\"main\"}}' \
                         (see rootgrep --help). Ctrl-D quits."
                    );
                }
                match mcp::serve_stdio(config).await {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(err) => {
                        eprintln!("rootgrep: {err}");
                        ExitCode::FAILURE
                    }
                }
            }
        }
    });
    // Blocking work still running (a cancelled scan) must not delay the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}
