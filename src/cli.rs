//! The command line: `rootgrep [OPTIONS] [DIR]...` serves MCP over stdio,
//! `rootgrep call <TOOL> [ARGS_JSON] [DIR]...` runs one tool in-process and prints its
//! answer, `rootgrep print-config <HOST> [OPTIONS] [DIR]...` prints a host's config
//! entry for this binary, `rootgrep cache` shows the index store and `rootgrep doctor`
//! checks the set-up. The doc comments below are the `--help` text.
//!
//! Usage errors (a missing DIR, a bad flag value, malformed ARGS_JSON, an unknown tool)
//! are found here, before anything starts, and exit with status 2 like clap's own; each
//! says what was wrong and what to pass instead.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};

use rootgrep_core::config::{Config, DEFAULT_MAX_OUTPUT_BYTES};
use rootgrep_core::roots::Confine;

/// What `rootgrep --version` says after the name: the package version and the git commit
/// the binary was built from (`build.rs`; `unknown` for a build outside a git checkout,
/// such as one from crates.io).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ROOTGREP_COMMIT"),
    ")"
);

/// Fast, root-scoped code search and file access for AI hosts, as an MCP server over stdio.
///
/// A host (Claude Code, Claude Desktop, VS Code, Cursor, …) runs `rootgrep` as a stdio
/// command. The workspace is the client's roots; without them, the DIR arguments; without
/// those, the current directory. To set a host up: `rootgrep print-config HOST`.
///
/// Usage errors exit with status 2, failures at run time with 1.
#[derive(Debug, Parser)]
#[command(
    name = "rootgrep",
    version = VERSION,
    args_conflicts_with_subcommands = true
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Workspace directories (or single files) used when the client declares no roots.
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
        /// Workspace directories or files (default: the current directory).
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Print the structured result (JSON) instead of the text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        options: Options,
    },
    /// Show what the index store holds (`rootgrep cache`), or clear it (`rootgrep cache
    /// clear [DIR]...`: every entry, or those of the DIRs, except entries a running
    /// server is writing).
    Cache {
        /// list (the default) or clear.
        #[arg(value_enum, default_value_t = CacheAction::List)]
        action: CacheAction,
        /// With clear: only these roots' entries.
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// With clear: only the entries of roots that are gone (removed, or another
        /// directory now at their path).
        #[arg(long)]
        missing: bool,
        /// The cache directory (default: the user's cache directory).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// Check what rootgrep needs here, and say how to fix each problem found.
    ///
    /// Looks at the roots a server started here with these DIRs and options would serve,
    /// the watcher's limits (inotify on Linux) against the directories under them, the
    /// cache directory, and the host config files that could start rootgrep (Claude Code,
    /// Claude Desktop, VS Code, Cursor, Codex). Exit status 0 when nothing is wrong, 1 when
    /// a problem was found.
    Doctor {
        /// Workspace directories (or files), as a host would pass them (default: the
        /// current directory).
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
        #[command(flatten)]
        options: Options,
    },
    /// Print HOST's config entry for this rootgrep (its absolute path) and where it goes.
    ///
    /// stdout: the snippet, a whole config file for this OS (JSON, or TOML for codex);
    /// stderr: where the file is for project and user scope. Server options and DIRs given
    /// here go into its args, with directories made absolute.
    PrintConfig {
        /// The MCP host to configure.
        host: Host,
        /// Workspace directories (or files) the server gets as DIR arguments (used when the
        /// host sends no roots).
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
        #[command(flatten)]
        options: Options,
    },
}

/// What `rootgrep cache` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheAction {
    List,
    Clear,
}

/// MCP hosts `print-config` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Host {
    /// Claude Code (`claude` CLI): `.mcp.json` or `claude mcp add`.
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Cursor: `.cursor/mcp.json` or `~/.cursor/mcp.json`.
    Cursor,
    /// VS Code: `.vscode/mcp.json` or the user `mcp.json`.
    #[value(alias = "vs-code", alias = "code")]
    Vscode,
    /// Codex: `~/.codex/config.toml`.
    Codex,
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

    /// Do not keep the content index (grep then reads every file of a root instead of
    /// those that can match; saves its disk, about a tenth of the indexed source).
    #[arg(long)]
    pub no_content_index: bool,

    /// Do not read the roots' git history (search then ranks by words alone; saves the
    /// history's reading, a few seconds per 10,000 commits, and its disk).
    #[arg(long)]
    pub no_history: bool,

    /// Most files the in-memory index holds per root (about 100 bytes each); a bigger root
    /// is searched by walking the disk.
    #[arg(long, value_name = "N", default_value_t = rootgrep_core::index::DEFAULT_MAX_FILES)]
    pub index_max_files: usize,

    /// Where the indexes are kept between runs, so a restarted server does not parse
    /// everything again (default: the user's cache directory; `rootgrep cache` shows it).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Keep the indexes in memory only: nothing is read from or written to the cache.
    #[arg(long)]
    pub no_cache: bool,

    /// Most megabytes the stored indexes take together; the least recently used roots'
    /// entries are removed beyond it, and an index larger than it is kept in memory only.
    /// Default: the indexes of the roots being served, whatever their size, and of other
    /// roots' entries up to 512 MB plus the largest of them (a monorepo's index survives
    /// work on another root).
    #[arg(long, value_name = "MB")]
    pub cache_max_mb: Option<u64>,

    /// Megabytes of memory one index build holds before it writes a part to the cache
    /// directory and merges the parts there: a large root's build peak stays about twice
    /// this, whatever its size (smaller: less memory, more merging).
    #[arg(long, value_name = "MB", default_value_t = rootgrep_core::store::DEFAULT_BUILD_MEMORY_MB)]
    pub build_memory_mb: u64,

    /// Budget of one tool answer's text, in bytes; its structured content gets as much
    /// again, cut at the same entry.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_OUTPUT_BYTES,
          value_parser = clap::value_parser!(usize))]
    pub max_output_bytes: usize,

    /// Tools to offer, comma-separated, or `all`: grep, glob, list_roots, file_info,
    /// read_file, read_files, search, symbols, outline, references, list_directory,
    /// directory_tree, write_file, edit_file, create_directory, move_file (default: all but
    /// read_files, create_directory, file_info, directory_tree, list_roots and references,
    /// which other tools cover; called by name they still answer). Tools not named are
    /// refused.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub tools: Vec<String>,

    /// Tools not to offer, comma-separated: left out of tools/list and refused.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub no_tools: Vec<String>,

    /// How answers name files: relative to the root when there is exactly one (directory)
    /// root, else absolute; or always absolute.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = Paths::Relative)]
    pub paths: Paths,

    /// Seconds to wait for the client's answer to roots/list before using the fallback roots.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub roots_timeout: f64,

    /// Seconds to wait for the user to answer an out-of-root access question.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub elicitation_timeout: f64,

    /// `search` asks the host's model (MCP sampling, when the client offers it) to add the
    /// code terms a prose question implies, unless a call says `expand: false`.
    #[arg(long)]
    pub expand: bool,

    /// Seconds `search` waits for the host's model's code terms before searching the
    /// query as given.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub expand_timeout: f64,

    /// stderr log level (error, warn, info, debug, trace, or a tracing filter); overrides
    /// RUST_LOG.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,

    /// Testing only: panic inside the handling of this MCP method, to prove a panic
    /// answers that one request with an internal error and the server keeps serving.
    #[arg(long, value_name = "METHOD", hide = true)]
    pub inject_panic: Option<String>,

    /// Testing only: the file watcher reads each kernel event this many milliseconds late,
    /// as on a loaded machine, to prove that the index never answers from before a change
    /// whose event is still queued.
    #[arg(long, value_name = "MS", hide = true)]
    pub test_watch_delay: Option<u64>,

    /// Testing only: every write to the index store pauses this many milliseconds halfway
    /// through its temp file, to prove that a writer killed mid-write loses nothing.
    #[arg(long, value_name = "MS", hide = true)]
    pub test_store_write_pause: Option<u64>,

    /// Testing only: a symbol build stores what it has every N files parsed (to prove that
    /// a server stopped halfway continues from it).
    #[arg(long, value_name = "N", hide = true)]
    pub test_checkpoint_files: Option<usize>,
}

/// `--paths`: how answers name files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Paths {
    /// Relative to the root when there is exactly one directory root, else absolute.
    Relative,
    /// Always absolute.
    Absolute,
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
            "{name} must be a number of seconds above 0 and at most 86400, got {value}: \
             pass e.g. {name} 5"
        )));
    }
    Ok(Duration::from_secs_f64(value))
}

/// A directory argument must name an existing directory: a typo would otherwise serve (or
/// confine to) nothing, and the host would only show a server that finds no files.
pub fn check_dir(what: &str, dir: &std::path::Path) -> Result<(), CliError> {
    check_existing(what, dir, false)
}

/// A `DIR` argument names a root: an existing directory or regular file (PRODUCT §2: a root
/// may be a file, served and watched alone). A FIFO, socket or device is refused.
pub fn check_root(dir: &std::path::Path) -> Result<(), CliError> {
    check_existing("DIR", dir, true)
}

fn check_existing(what: &str, dir: &std::path::Path, file_ok: bool) -> Result<(), CliError> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() || (file_ok && meta.is_file()) => Ok(()),
        Ok(_) if file_ok => Err(CliError(format!(
            "{what} {} is neither a directory nor a regular file: pass a directory or a file \
             to serve",
            dir.display()
        ))),
        Ok(_) => Err(CliError(format!(
            "{what} {} is not a directory: pass the directory that contains it",
            dir.display()
        ))),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(CliError(format!(
            "{what} {} does not exist: pass an existing directory (check the spelling, and \
             that a relative path is relative to the directory rootgrep starts in)",
            dir.display()
        ))),
        Err(err) => Err(CliError(format!(
            "{what} {} cannot be opened ({err}): pass a directory this user can read",
            dir.display()
        ))),
    }
}

/// Checks the DIR arguments of a server: each must be a directory or a file, except that a missing
/// one among existing ones is served as a root that does not exist yet (logged here, and
/// shown by `list_roots`); when none exists there would be nothing to serve.
fn check_dirs(cwd: &std::path::Path, dirs: &[PathBuf]) -> Result<(), CliError> {
    let missing = |dir: &PathBuf| !cwd.join(dir).exists();
    let all_missing = dirs.iter().all(missing);
    for dir in dirs {
        if missing(dir) && !all_missing {
            tracing::warn!(
                "DIR {} does not exist; serving the other DIRs (list_roots reports it)",
                dir.display()
            );
            continue;
        }
        check_root(&cwd.join(dir))?;
    }
    Ok(())
}

/// Builds the validated configuration from parsed options. `Err` is a usage error.
pub fn config(options: &Options, dirs: &[PathBuf]) -> Result<Config, CliError> {
    let cwd = std::env::current_dir()
        .map_err(|err| CliError(format!("cannot read the working directory: {err}")))?;
    check_dirs(&cwd, dirs)?;
    for dir in &options.confine {
        check_dir("--confine", &cwd.join(dir))?;
    }
    let confine = Confine::new(&options.confine).map_err(|err| CliError(err.to_string()))?;
    let (tools_hidden, tools_refused) = tool_sets(options)?;
    if options.max_output_bytes < 1024 {
        return Err(CliError(format!(
            "--max-output-bytes must be at least 1024, got {}: pass a larger byte count \
             (default {DEFAULT_MAX_OUTPUT_BYTES})",
            options.max_output_bytes
        )));
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
        content_index: !options.no_content_index,
        history: !options.no_history,
        index_max_files: options.index_max_files,
        store: store(options)?,
        max_output_bytes: options.max_output_bytes,
        roots_timeout: seconds("--roots-timeout", options.roots_timeout)?,
        elicitation_timeout: seconds("--elicitation-timeout", options.elicitation_timeout)?,
        search_expand: options.expand,
        expand_timeout: seconds("--expand-timeout", options.expand_timeout)?,
        paths: match options.paths {
            Paths::Relative => rootgrep_core::config::PathDisplay::Relative,
            Paths::Absolute => rootgrep_core::config::PathDisplay::Absolute,
        },
        tools_hidden,
        tools_refused,
    })
}

/// The tools `tools/list` leaves out and those refused when called, from `--tools` and
/// `--no-tools`; an unknown name is a usage error naming the known ones.
fn tool_sets(options: &Options) -> Result<(Vec<String>, Vec<String>), CliError> {
    let all = crate::mcp::tools::names();
    for name in options.tools.iter().chain(&options.no_tools) {
        let all_tools = name == "all" && options.tools.contains(name);
        if !(all.contains(name) || all_tools) {
            return Err(CliError(format!(
                "unknown tool {name:?} in --tools/--no-tools: pass names from {} (or --tools all)",
                all.join(", ")
            )));
        }
    }
    let named = |list: &[String], name: &String| list.iter().any(|n| n == name || n == "all");
    let (mut hidden, mut refused) = (Vec::new(), Vec::new());
    for name in &all {
        let off = match options.tools.is_empty() {
            true => crate::mcp::tools::OFF_BY_DEFAULT.contains(&name.as_str()),
            false => !named(&options.tools, name),
        };
        let refuse = (off && !options.tools.is_empty()) || options.no_tools.contains(name);
        if off || refuse {
            hidden.push(name.clone());
        }
        if refuse {
            refused.push(name.clone());
        }
    }
    Ok((hidden, refused))
}

/// The index store the options ask for: `None` with `--no-cache`, or when no cache
/// directory is known (no `HOME`, `LOCALAPPDATA`…: said once, at start).
pub fn store(options: &Options) -> Result<Option<rootgrep_core::store::Store>, CliError> {
    if options.no_cache {
        return Ok(None);
    }
    // (An empty --cache-dir never gets here: clap refuses an empty value.)
    let dir = match &options.cache_dir {
        Some(dir) => std::path::absolute(dir)
            .map_err(|err| CliError(format!("--cache-dir {}: {err}", dir.display())))?,
        None => match rootgrep_core::store::default_cache_dir(|name| std::env::var_os(name)) {
            Some(dir) => dir,
            None => {
                tracing::warn!(
                    "no cache directory known (HOME or LOCALAPPDATA unset): the indexes are \
                     kept in memory only; pass --cache-dir DIR to keep them"
                );
                return Ok(None);
            }
        },
    };
    let store = rootgrep_core::store::Store::new(&dir, options.cache_max_mb)
        .with_build_memory(options.build_memory_mb);
    let store = match options.test_checkpoint_files {
        Some(files) => store.with_checkpoint_files(files),
        None => store,
    };
    Ok(Some(match options.test_store_write_pause {
        Some(ms) => store.with_write_pause(Duration::from_millis(ms)),
        None => store,
    }))
}

/// Checks `rootgrep call`'s TOOL and ARGS_JSON before anything starts, so that a mistake
/// is a usage error (exit 2) saying what to pass, not a failure of the call.
pub fn check_call(tool: &str, args_json: &str) -> Result<(), CliError> {
    if !crate::mcp::tools::is_known(tool) {
        let names = crate::mcp::tools::names();
        let wanted = tool.to_ascii_lowercase().replace('-', "_");
        let hint = match names.iter().find(|name| **name == wanted) {
            Some(name) => format!("did you mean {name}? "),
            None => String::new(),
        };
        return Err(CliError(format!(
            "unknown tool {tool:?}: {hint}pass one of {}",
            names.join(", ")
        )));
    }
    match serde_json::from_str::<serde_json::Value>(args_json) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        Ok(_) => Err(CliError(format!(
            "ARGS_JSON must be a JSON object, got {args_json}: pass e.g. '{{\"pattern\":\"main\"}}' \
             (or '{{}}' for no arguments)"
        ))),
        Err(_) if std::path::Path::new(args_json).exists() => Err(CliError(format!(
            "ARGS_JSON {args_json:?} is a path, not JSON: ARGS_JSON comes before DIR, so pass \
             '{{}}' first, e.g. rootgrep call {tool} '{{}}' {args_json}"
        ))),
        Err(err) => Err(CliError(format!(
            "ARGS_JSON is not valid JSON ({err}): pass one JSON object, quoted for your shell, \
             e.g. '{{\"pattern\":\"main\"}}'"
        ))),
    }
}

impl Options {
    /// These options as command-line arguments, only those that differ from the defaults,
    /// with directories made absolute (a host starts the server in a directory of its own
    /// choosing). What `print-config` puts in a snippet's `args`.
    pub fn to_args(&self, cwd: &std::path::Path) -> Vec<String> {
        let defaults = Args::parse_from(["rootgrep"]).options;
        let mut args = Vec::new();
        let mut push = |flag: &str, value: Option<String>| {
            args.push(flag.to_string());
            args.extend(value);
        };
        if self.read_only {
            push("--read-only", None);
        }
        for dir in &self.confine {
            push("--confine", Some(absolute(cwd, dir)));
        }
        if self.no_watch {
            push("--no-watch", None);
        }
        if self.no_content_index {
            push("--no-content-index", None);
        }
        if self.no_history {
            push("--no-history", None);
        }
        if let Some(dir) = &self.cache_dir {
            push("--cache-dir", Some(absolute(cwd, dir)));
        }
        if self.no_cache {
            push("--no-cache", None);
        }
        if let Some(mb) = self.cache_max_mb {
            push("--cache-max-mb", Some(mb.to_string()));
        }
        if self.build_memory_mb != defaults.build_memory_mb {
            push("--build-memory-mb", Some(self.build_memory_mb.to_string()));
        }
        if self.index_max_files != defaults.index_max_files {
            push("--index-max-files", Some(self.index_max_files.to_string()));
        }
        if self.max_output_bytes != defaults.max_output_bytes {
            push(
                "--max-output-bytes",
                Some(self.max_output_bytes.to_string()),
            );
        }
        if self.roots_timeout != defaults.roots_timeout {
            push("--roots-timeout", Some(self.roots_timeout.to_string()));
        }
        if self.elicitation_timeout != defaults.elicitation_timeout {
            push(
                "--elicitation-timeout",
                Some(self.elicitation_timeout.to_string()),
            );
        }
        if self.expand {
            push("--expand", None);
        }
        if self.expand_timeout != defaults.expand_timeout {
            push("--expand-timeout", Some(self.expand_timeout.to_string()));
        }
        if let Some(level) = &self.log_level {
            push("--log-level", Some(level.clone()));
        }
        if self.paths != defaults.paths {
            push("--paths", Some("absolute".to_string()));
        }
        if !self.tools.is_empty() {
            push("--tools", Some(self.tools.join(",")));
        }
        if !self.no_tools.is_empty() {
            push("--no-tools", Some(self.no_tools.join(",")));
        }
        args
    }
}

/// `dir` made absolute and canonical (it was checked to exist), as the host will pass it.
pub fn absolute(cwd: &std::path::Path, dir: &std::path::Path) -> String {
    let joined = cwd.join(dir);
    let path = std::fs::canonicalize(&joined).unwrap_or(joined);
    plain_path(&path.to_string_lossy())
}

/// Windows' canonical paths carry the verbatim prefix (`\\?\C:\…`, `\\?\UNC\srv\…`),
/// which some programs that launch servers cannot use: give the ordinary form.
pub fn plain_path(path: &str) -> String {
    if let Some(rest) = path.strip_prefix(r"\\?\UNC\") {
        return format!(r"\\{rest}");
    }
    match path.strip_prefix(r"\\?\") {
        Some(rest) if rest.as_bytes().get(1) == Some(&b':') => rest.to_string(),
        _ => path.to_string(),
    }
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
            _ => panic!("expected call"),
        }
        assert!(seconds("--x", 0.0).is_err());
        assert!(seconds("--x", f64::NAN).is_err());
    }

    #[test]
    fn to_args_round_trips_every_option() {
        let cwd = std::env::current_dir().unwrap();
        let given = Args::parse_from([
            "rootgrep",
            "--read-only",
            "--confine",
            ".",
            "--no-watch",
            "--cache-dir",
            ".",
            "--no-cache",
            "--cache-max-mb",
            "3",
            "--build-memory-mb",
            "5",
            "--index-max-files",
            "7",
            "--max-output-bytes",
            "2048",
            "--roots-timeout",
            "1.5",
            "--elicitation-timeout",
            "9",
            "--log-level",
            "debug",
            "--paths",
            "absolute",
            "--tools",
            "grep,read_file",
            "--no-tools",
            "read_file",
        ])
        .options;
        let args = given.to_args(&cwd);
        let again = Args::parse_from(std::iter::once("rootgrep".to_string()).chain(args)).options;
        // Paths are given back in their plain form (Windows: without `\\?\`).
        let canonical = std::fs::canonicalize(&cwd).unwrap();
        let canonical = PathBuf::from(plain_path(&canonical.to_string_lossy()));
        let expected = Options {
            confine: vec![canonical.clone()],
            cache_dir: Some(canonical),
            ..given
        };
        assert_eq!(format!("{again:?}"), format!("{expected:?}"));
        assert!(
            Args::parse_from(["rootgrep"])
                .options
                .to_args(&cwd)
                .is_empty()
        );
    }

    #[test]
    fn plain_path_drops_the_verbatim_prefix() {
        assert_eq!(
            plain_path(r"\\?\C:\Users\a\rootgrep.exe"),
            r"C:\Users\a\rootgrep.exe"
        );
        assert_eq!(plain_path(r"\\?\UNC\srv\share\r.exe"), r"\\srv\share\r.exe");
        assert_eq!(plain_path("/usr/bin/rootgrep"), "/usr/bin/rootgrep");
    }

    #[test]
    fn check_call_names_the_fix() {
        assert!(check_call("grep", "{}").is_ok());
        let err = check_call("read-file", "{}").unwrap_err().0;
        assert!(err.contains("did you mean read_file?"), "{err}");
        let err = check_call("grep", "[1]").unwrap_err().0;
        assert!(err.contains("must be a JSON object"), "{err}");
    }
}
