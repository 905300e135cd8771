//! The `rootgrep` binary: parse flags into a `Config`, then serve MCP over stdio, run one
//! tool (`rootgrep call`), print a host's config (`rootgrep print-config`), show and
//! clear the index store (`rootgrep cache`) or check the set-up (`rootgrep doctor`).
//! Errors are reported once, on stderr: usage errors exit 2 (as clap's own do), failures at
//! run time exit 1. When serving, stdout carries protocol messages only (written by
//! `mcp::stdio`); `call`'s answer, `print-config`'s snippet, `cache`'s listing and
//! `doctor`'s report are the only things this file writes to stdout.

mod cache;
mod doctor;
mod hostconfig;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use rootgrep::cli::{self, Args, Command};
use rootgrep::mcp;

/// One message for the person at the terminal, on stderr.
fn report(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// Writes `text` to stdout (a `call` answer, a `print-config` snippet, a `cache` listing or
/// a `doctor` report).
fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// A usage error: one line saying what is wrong and what to pass, exit status 2.
fn usage_error(prefix: &str, message: &str) -> ExitCode {
    report(&format!("{prefix}: {message}"));
    ExitCode::from(2)
}

/// `rootgrep print-config HOST [OPTIONS] [DIR]...`.
fn print_config(host: cli::Host, options: &cli::Options, dirs: &[std::path::PathBuf]) -> ExitCode {
    const PREFIX: &str = "rootgrep print-config";
    // A config file with a root (directory or file) that does not exist is always a mistake.
    let cwd = std::env::current_dir().unwrap_or_default();
    let checked = dirs
        .iter()
        .try_for_each(|dir| cli::check_root(&cwd.join(dir)))
        .and_then(|()| cli::config(options, dirs));
    if let Err(err) = checked {
        return usage_error(PREFIX, &err.to_string());
    }
    let exe = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(exe) => exe,
        Err(err) => {
            report(&format!("{PREFIX}: cannot find this binary's path: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let Some(exe_text) = exe.to_str().map(cli::plain_path) else {
        report(&format!(
            "{PREFIX}: this binary's path {} is not valid UTF-8, so no config file can hold \
             it: install rootgrep under a UTF-8 path",
            exe.display()
        ));
        return ExitCode::FAILURE;
    };
    let mut args = options.to_args(&cwd);
    args.extend(dirs.iter().map(|dir| cli::absolute(&cwd, dir)));
    let rendered = hostconfig::render(host, hostconfig::Os::current(), &exe_text, &args);
    for note in rendered
        .notes
        .iter()
        .chain(&hostconfig::build_dir_note(&exe))
    {
        report(note);
    }
    print(&rendered.snippet);
    ExitCode::SUCCESS
}

/// `rootgrep doctor [OPTIONS] [DIR]...`: the report on stdout, status 1 on a problem.
fn doctor(options: &cli::Options, dirs: &[std::path::PathBuf]) -> ExitCode {
    let (text, code) = doctor::run(options, dirs);
    print(&text);
    code
}

/// Serves MCP over stdio until the client closes stdin.
async fn serve(config: rootgrep_core::config::Config, options: &cli::Options) -> ExitCode {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        // A person ran it by hand: say what it is waiting for.
        report(
            "rootgrep serves MCP over stdio and waits for a host to speak JSON-RPC \
             on stdin. To try a tool by hand: rootgrep call grep '{\"pattern\":\"main\"}' \
             (see rootgrep --help). Ctrl-D quits.",
        );
    }
    if let Some(ms) = options.test_watch_delay {
        rootgrep_core::watch::set_test_read_delay(std::time::Duration::from_millis(ms));
    }
    let faults = mcp::pipeline::Faults {
        panic_in: options.inject_panic.clone(),
    };
    match mcp::serve_stdio(config, faults).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            report(&format!("rootgrep: {err}"));
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    // Before any thread starts (see the function).
    rootgrep_core::memory::tune_allocator();
    let args = Args::parse();
    let (options, dirs) = match &args.command {
        Some(Command::Call { options, dirs, .. }) => (options, dirs),
        Some(Command::PrintConfig {
            host,
            options,
            dirs,
        }) => return print_config(*host, options, dirs),
        Some(command @ Command::Cache { .. }) => return cache::run(command),
        Some(Command::Doctor { options, dirs }) => return doctor(options, dirs),
        None => (&args.options, &args.dirs),
    };
    if let Some(Command::Call {
        tool, args_json, ..
    }) = &args.command
        && let Err(err) = cli::check_call(tool, args_json)
    {
        return usage_error("rootgrep call", &err.to_string());
    }
    mcp::logging::init_tracing(options.log_level.as_deref());
    let config = match cli::config(options, dirs) {
        // One call needs no watcher or index: it would only add start-up work.
        Ok(config) if args.command.is_some() => rootgrep_core::config::Config {
            watch: false,
            ..config
        },
        Ok(config) => config,
        Err(err) => {
            let prefix = if args.command.is_some() {
                "rootgrep call"
            } else {
                "rootgrep"
            };
            return usage_error(prefix, &err.to_string());
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
                    print(&output.text);
                    if output.is_error {
                        ExitCode::FAILURE
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                // TOOL and ARGS_JSON were checked above: what fails here failed at run time.
                Err(message) => {
                    report(&format!("rootgrep call: {message}"));
                    ExitCode::FAILURE
                }
            },
            // The other commands returned above.
            Some(_) => ExitCode::SUCCESS,
            None => serve(config, &args.options).await,
        }
    });
    // Blocking work still running (a cancelled scan) must not delay the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}
