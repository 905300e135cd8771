//! The validated settings one server process runs with, built once from the command line
//! and then passed around read-only. No flag parsing here, and no environment lookups
//! after start-up: hosts start servers with a reduced environment, so everything that
//! matters has a flag.

use std::path::PathBuf;
use std::time::Duration;

use crate::roots::Confine;

/// Default budget for one tool answer's text.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone)]
pub struct Config {
    /// `DIR` arguments, absolute (the second source of roots).
    pub dirs: Vec<PathBuf>,
    /// The working directory at start (the last source of roots).
    pub cwd: PathBuf,
    /// The operator's outer boundary.
    pub confine: Confine,
    /// Write tools are hidden and refused.
    pub read_only: bool,
    /// Watch the roots (and keep the file index).
    pub watch: bool,
    /// Keep the content index (which files `grep` reads), when watching.
    pub content_index: bool,
    /// Read the roots' git history for `search` (`history/`), when watching.
    pub history: bool,
    /// Most files one root's index may hold; bigger roots are searched by walking.
    pub index_max_files: usize,
    /// Where the indexes are kept between runs (`None`: `--no-cache`, or no cache
    /// directory known).
    pub store: Option<crate::store::Store>,
    /// Budget for one tool answer's text (its structured content gets as much again).
    pub max_output_bytes: usize,
    /// How long to wait for the client's `roots/list` answer.
    pub roots_timeout: Duration,
    /// How long to wait for the user to answer an out-of-root question.
    pub elicitation_timeout: Duration,
    /// `search` asks the host's model for code terms (when the client can sample) unless
    /// the call says `expand: false`.
    pub search_expand: bool,
    /// How long `search` waits for the host's model's code terms.
    pub expand_timeout: Duration,
    /// How answers name the files they list.
    pub paths: PathDisplay,
    /// Tools `tools/list` does not offer (names checked by the adapter): those left out of
    /// the default set, or of `--tools`, and those of `--no-tools`.
    pub tools_hidden: Vec<String>,
    /// Tools refused when called: those the operator turned off by name (`--no-tools`,
    /// or left out of `--tools`).
    pub tools_refused: Vec<String>,
}

/// How answers name files: relative to the root when exactly one directory root is in
/// force (a relative path then names one file, and tools take it back as it is), else
/// absolute; or always absolute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PathDisplay {
    #[default]
    Relative,
    Absolute,
}
