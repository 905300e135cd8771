//! The command line: `rootgrep [OPTIONS] [DIR]...` serves MCP over stdio, and
//! `rootgrep call <TOOL> [ARGS_JSON] [DIR]...` runs one tool in-process and prints its
//! answer. The doc comments below are the `--help` text.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::config::{Config, DEFAULT_MAX_OUTPUT_BYTES};
use crate::roots::Confine;

/// Fast, root-scoped code search and file access for AI hosts, as an MCP server over stdio.
///
/// A host (Claude Code, Claude Desktop, VS Code, Cursor, …) runs `rootgrep` as a stdio
/// command. The workspace is the client's roots; without them, the DIR arguments; without
/// those, the current directory.
#[derive(Debug, Parser)]
#[command(name = "rootgrep", version, args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Workspace directories used when the client declares no roots.
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    #[command(flatten)]
    pub options: Options,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one tool on DIR (default: .) through the server code, and print its text answer.
    Call {
        /// Tool name, e.g. grep, glob, read_file, list_roots.
        tool: String,
        /// Tool arguments as a JSON object, e.g. '{"pattern":"fn main"}'.
        #[arg(default_value = "{}")]
        args_json: String,
        /// Workspace directories (default: the current directory).
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Print the structured result (JSON) instead of the text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        options: Options,
    },
}

#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// Hide and refuse the write tools (write_file, edit_file, create_directory, move_file).
    #[arg(long)]
    pub read_only: bool,

    /// Never touch anything outside DIR, whatever the client's roots or the user says
    /// (repeatable).
    #[arg(long, value_name = "DIR")]
    pub confine: Vec<PathBuf>,

    /// Do not watch the roots (no live file index, no change notifications).
    #[arg(long)]
    pub no_watch: bool,

    /// Most files the in-memory index holds per root (about 100 bytes each); a bigger root
    /// is searched by walking the disk.
    #[arg(long, value_name = "N", default_value_t = crate::index::DEFAULT_MAX_FILES)]
    pub index_max_files: usize,

    /// Budget for the text of one tool answer, in bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_OUTPUT_BYTES,
          value_parser = clap::value_parser!(usize))]
    pub max_output_bytes: usize,

    /// Seconds to wait for the client's answer to roots/list before using the fallback roots.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub roots_timeout: f64,

    /// Seconds to wait for the user to answer an out-of-root access question.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub elicitation_timeout: f64,

    /// stderr log level (error, warn, info, debug, trace, or a tracing filter); overrides
    /// RUST_LOG.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,

    /// Testing only: panic inside the handling of this MCP method, to prove a panic
    /// answers that one request with an internal error and the server keeps serving.
    #[arg(long, value_name = "METHOD", hide = true)]
    pub inject_panic: Option<String>,
}

/// A user mistake on the command line, reported once on stderr.
#[derive(Debug)]
pub struct CliError(pub String);

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn seconds(name: &str, value: f64) -> Result<Duration, CliError> {
    if !(value.is_finite() && value > 0.0 && value <= 86_400.0) {
        return Err(CliError(format!(
            "{name} must be a number of seconds between 0 and 86400, got {value}"
        )));
    }
    Ok(Duration::from_secs_f64(value))
}

/// Builds the validated configuration from parsed options.
pub fn config(options: &Options, dirs: &[PathBuf]) -> Result<Config, CliError> {
    let cwd = std::env::current_dir()
        .map_err(|err| CliError(format!("cannot read the working directory: {err}")))?;
    let confine = Confine::new(&options.confine).map_err(|err| CliError(err.to_string()))?;
    if options.max_output_bytes < 1024 {
        return Err(CliError(
            "--max-output-bytes must be at least 1024".to_string(),
        ));
    }
    Ok(Config {
        dirs: dirs
            .iter()
            .map(|d| {
                if d.is_absolute() {
                    d.clone()
                } else {
                    cwd.join(d)
                }
            })
            .collect(),
        cwd,
        confine,
        read_only: options.read_only,
        watch: !options.no_watch,
        index_max_files: options.index_max_files,
        max_output_bytes: options.max_output_bytes,
        roots_timeout: seconds("--roots-timeout", options.roots_timeout)?,
        elicitation_timeout: seconds("--elicitation-timeout", options.elicitation_timeout)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Args::command().debug_assert();
    }

    #[test]
    fn parses_serve_and_call() {
        let args = Args::try_parse_from(["rootgrep", "--read-only", "a", "b"]).unwrap();
        assert!(args.command.is_none());
        assert_eq!(args.dirs.len(), 2);
        assert!(args.options.read_only);
        let args = Args::try_parse_from([
            "rootgrep",
            "call",
            "grep",
            r#"{"pattern":"x"}"#,
            "src",
            "--json",
        ])
        .unwrap();
        match args.command {
            Some(Command::Call {
                tool, json, dirs, ..
            }) => {
                assert_eq!(tool, "grep");
                assert!(json);
                assert_eq!(dirs, vec![PathBuf::from("src")]);
            }
            None => panic!("expected call"),
        }
        assert!(seconds("--x", 0.0).is_err());
        assert!(seconds("--x", f64::NAN).is_err());
    }
}
