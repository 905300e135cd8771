//! The `rootgrep` binary: parse flags into a `Config`, then serve MCP over stdio or run
//! one tool (`rootgrep call`). Errors are reported once, on stderr. When serving, stdout
//! carries protocol messages only (written by `mcp::stdio`); `rootgrep call` is not an MCP
//! session, and its answer is the one thing this file writes to stdout.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use rootgrep::cli::{self, Args, Command};
use rootgrep::mcp;

/// One message for the person at the terminal, on stderr.
fn report(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

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
            report(&format!("rootgrep: {err}"));
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            report(&format!("rootgrep: cannot start the async runtime: {err}"));
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
            }) => match mcp::call::run(config, &tool, &args_json, json).await {
                Ok(output) => {
                    let mut stdout = std::io::stdout().lock();
                    let _ = stdout.write_all(output.text.as_bytes());
                    let _ = stdout.flush();
                    if output.is_error {
                        ExitCode::FAILURE
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                Err(message) => {
                    report(&format!("rootgrep call: {message}"));
                    ExitCode::from(2)
                }
            },
            None => {
                use std::io::IsTerminal;
                if std::io::stdin().is_terminal() {
                    // A person ran it by hand: say what it is waiting for.
                    report(
                        "rootgrep serves MCP over stdio and waits for a host to speak JSON-RPC \
                         on stdin. To try a tool by hand: rootgrep call grep '{\"pattern\":\"main\"}' \
                         (see rootgrep --help). Ctrl-D quits.",
                    );
                }
                let faults = mcp::pipeline::Faults {
                    panic_in: args.options.inject_panic.clone(),
                };
                match mcp::serve_stdio(config, faults).await {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(err) => {
                        report(&format!("rootgrep: {err}"));
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
