//! What a caller asks for: the [`GrepQuery`] and [`GlobQuery`] value types and their enums.
//!
//! These are plain data with ripgrep's meaning for every field, so the adapter can map tool
//! arguments onto them one to one. Validation (regex, globs, type names) happens when a
//! search starts, not here, so that every mistake comes back as one [`SearchError`].
//!
//! [`SearchError`]: super::SearchError

/// How letter case is treated when matching.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaseMode {
    /// Exact case (ripgrep's default, and ours).
    #[default]
    Sensitive,
    /// `-i`: case-insensitive.
    Insensitive,
    /// `-S`: case-insensitive when the pattern has no uppercase letter, else sensitive.
    Smart,
}

/// What a grep returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputMode {
    /// Paths of files with at least one match (`rg -l`); each file stops at its first match.
    #[default]
    FilesWithMatches,
    /// Every matching line with its context lines (`rg -n -C`).
    Content,
    /// Per file, the number of matching lines (`rg -c`).
    Count,
}

/// The order of entries, which is also the order in which paging cuts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    /// By absolute path, then line number.
    #[default]
    Path,
    /// Newest modification time first; ties (and unknown times, which sort last) by path.
    Modified,
}

/// A content search, with ripgrep's flags.
#[derive(Clone, Debug)]
pub struct GrepQuery {
    /// Rust regex syntax (or a literal with `fixed_strings`).
    pub pattern: String,
    pub case: CaseMode,
    /// `-F`: the pattern is a literal string.
    pub fixed_strings: bool,
    /// `-w`: only matches surrounded by word boundaries.
    pub word: bool,
    /// `-U --multiline-dotall`: matches may span lines and `.` matches `\n`.
    pub multiline: bool,
    /// `-B`: context lines before each match (content mode only).
    pub before: usize,
    /// `-A`: context lines after each match (content mode only).
    pub after: usize,
    /// `rg --glob` patterns, matched relative to each searched directory; `!` negates.
    /// A glob without `/` matches a file name at any depth.
    pub globs: Vec<String>,
    /// ripgrep file type names (`rust`, `py`, …); a leading `!` excludes that type.
    pub types: Vec<String>,
    /// Search hidden files and directories.
    pub hidden: bool,
    /// Ignore `.gitignore`, `.ignore`, `.git/info/exclude` and the global git excludes.
    pub no_ignore: bool,
    /// Skip (and count) files larger than this many bytes.
    pub max_filesize: Option<u64>,
    pub mode: OutputMode,
    pub sort: SortBy,
    /// Entries to skip (after sorting).
    pub offset: usize,
    /// Entries to return; `None` returns up to [`MAX_RETAINED`](super::MAX_RETAINED).
    pub limit: Option<usize>,
    /// Lines longer than this many characters are cut around the match.
    pub max_line_chars: usize,
    /// Content mode: bytes the page's entries may take (each stored line costs about its
    /// text, see [`line_cost`](super::sink::line_cost)); the page stops early when they
    /// are spent, and an entry that alone exceeds them is cut. `None`: no limit.
    pub max_bytes: Option<usize>,
    /// Threads to search with; 0 means one per core.
    pub threads: usize,
}

impl GrepQuery {
    /// A query with ripgrep's defaults: case-sensitive, files-with-matches, sorted by path,
    /// no context, no limit, lines cut at 500 characters.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            pattern: pattern.into(),
            case: CaseMode::Sensitive,
            fixed_strings: false,
            word: false,
            multiline: false,
            before: 0,
            after: 0,
            globs: Vec::new(),
            types: Vec::new(),
            hidden: false,
            no_ignore: false,
            max_filesize: None,
            mode: OutputMode::FilesWithMatches,
            sort: SortBy::Path,
            offset: 0,
            limit: None,
            max_line_chars: 500,
            max_bytes: None,
            threads: 0,
        }
    }
}

/// A file-finding query: a glob over the path relative to each searched directory.
#[derive(Clone, Debug)]
pub struct GlobQuery {
    /// `globset` syntax with `{a,b}` alternatives; `*` does not cross `/`, `**` does.
    /// A pattern without `/` matches a file name at any depth.
    pub pattern: String,
    /// ripgrep file type names; a leading `!` excludes that type.
    pub types: Vec<String>,
    pub hidden: bool,
    pub no_ignore: bool,
    pub sort: SortBy,
    pub offset: usize,
    pub limit: Option<usize>,
    /// Threads to walk with; 0 means one per core.
    pub threads: usize,
    /// Only paths sorting strictly after this one (with [`SortBy::Path`]): paging that
    /// resumes after the last path served, so files added or removed before it shift
    /// nothing (`resources/list`).
    pub after: Option<std::path::PathBuf>,
}

impl GlobQuery {
    /// A query with the defaults of the `glob` tool except the sort: by path (callers pass
    /// [`SortBy::Modified`] to get the tool's newest-first default).
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            pattern: pattern.into(),
            types: Vec::new(),
            hidden: false,
            no_ignore: false,
            sort: SortBy::Path,
            offset: 0,
            limit: None,
            threads: 0,
            after: None,
        }
    }
}
