//! The search tools, `grep` and `glob`: arguments (with the aliases agents use), running the
//! blocking search engine with progress and cancellation, and rendering results grouped by
//! file like `rg --heading`, within the output budget.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::{Call, lenient, read_only_annotations, resolve_checked, schema_of};
use crate::access::Access;
use crate::mcp::progress::{Reporter, thousands};
use crate::mcp::render::{Answer, rfc3339};
use crate::search::{
    self, CaseMode, Control, GlobOutcome, GlobQuery, GrepEntries, GrepMatch, GrepOutcome,
    GrepQuery, OutputMode, SortBy, Stats,
};

pub const GREP_DEFAULT_LIMIT: usize = 250;
pub const GLOB_DEFAULT_LIMIT: usize = 100;

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "grep",
            "Search file contents with a regular expression (Rust regex syntax, like ripgrep) \
             across the workspace roots or a given path. Respects .gitignore/.ignore and skips \
             hidden and binary files by default. output_mode: files_with_matches (default: \
             matching file paths), content (matching lines grouped by file, with -A/-B/-C \
             context), or count (matches per file). Filter files with glob (e.g. \"*.rs\", \
             \"!**/test/**\") or type (e.g. rust, py, js). Results are sorted and paged: \
             head_limit (default 250) and offset.",
            schema_of::<GrepArgs>(),
        )
        .with_raw_output_schema(schema_of::<GrepOut>())
        .with_annotations(read_only_annotations("Search file contents")),
        Tool::new(
            "glob",
            "Find files by glob pattern matched against the path relative to the search \
             root: \"**/*.rs\", \"src/**/*.ts\", \"*.{json,yaml}\" (a pattern without / matches \
             at any depth). Respects .gitignore/.ignore and skips hidden files by default. \
             Newest-modified first by default (sort: \"path\" for alphabetical); paged with \
             head_limit (default 100) and offset.",
            schema_of::<GlobArgs>(),
        )
        .with_raw_output_schema(schema_of::<GlobOut>())
        .with_annotations(read_only_annotations("Find files")),
    ]
}

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(one) if one.trim().is_empty() => Vec::new(),
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    FilesWithMatches,
    Content,
    Count,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    Path,
    Modified,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression (Rust regex syntax; escape literal braces), or a literal string
    /// with fixed_strings.
    pub pattern: String,
    /// File or directory to search, or a list of them (default: every workspace root).
    #[serde(default, alias = "file_path", alias = "paths")]
    pub path: Option<OneOrMany>,
    /// Glob filter(s) on the path relative to the search root, rg --glob style; a leading
    /// '!' excludes. E.g. "*.rs", ["*.ts", "!*.test.ts"].
    #[serde(default, alias = "include")]
    pub glob: Option<OneOrMany>,
    /// ripgrep file type(s), e.g. "rust", "py", "js", "ts", "go", "cpp".
    #[serde(default, rename = "type", alias = "file_type")]
    pub file_type: Option<OneOrMany>,
    /// files_with_matches (default), content, or count.
    #[serde(default)]
    pub output_mode: Option<Mode>,
    /// Case-insensitive search (default false).
    #[serde(
        default,
        rename = "-i",
        alias = "case_insensitive",
        alias = "ignore_case"
    )]
    pub case_insensitive: Option<bool>,
    /// Case-insensitive unless the pattern has an uppercase letter (default false).
    #[serde(default)]
    pub smart_case: Option<bool>,
    /// Treat the pattern as a literal string (default false).
    #[serde(default, alias = "literal")]
    pub fixed_strings: Option<bool>,
    /// Match whole words only (default false).
    #[serde(default, alias = "word_regexp")]
    pub word: Option<bool>,
    /// Let matches span lines; '.' also matches newlines (default false).
    #[serde(default)]
    pub multiline: Option<bool>,
    /// Lines of context after each match (content mode).
    #[serde(
        default,
        rename = "-A",
        alias = "after_context",
        deserialize_with = "lenient::opt_usize"
    )]
    pub after: Option<usize>,
    /// Lines of context before each match (content mode).
    #[serde(
        default,
        rename = "-B",
        alias = "before_context",
        deserialize_with = "lenient::opt_usize"
    )]
    pub before: Option<usize>,
    /// Lines of context before and after each match (content mode).
    #[serde(
        default,
        rename = "-C",
        alias = "context",
        deserialize_with = "lenient::opt_usize"
    )]
    pub context: Option<usize>,
    /// Show line numbers in content mode (default true).
    #[serde(default, rename = "-n", alias = "line_numbers")]
    pub line_numbers: Option<bool>,
    /// Maximum entries (files, lines or counts) to return (default 250; 0 = only the output
    /// budget limits).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    pub head_limit: Option<usize>,
    /// Entries to skip first, for paging (default 0).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    pub offset: Option<usize>,
    /// "path" (default) or "modified" (newest files first).
    #[serde(default)]
    pub sort: Option<Sort>,
    /// Search hidden files and directories too (default false).
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Do not respect .gitignore/.ignore files (default false).
    #[serde(default)]
    pub no_ignore: Option<bool>,
    /// Skip files larger than this: bytes, or a size like "10M", "512K".
    #[serde(default, deserialize_with = "opt_size")]
    #[schemars(with = "Option<Value>")]
    pub max_filesize: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob matched against the path relative to the search root, e.g. "**/*.rs",
    /// "src/**/*.{ts,tsx}"; without '/', it matches at any depth.
    pub pattern: String,
    /// Directory to search, or a list of them (default: every workspace root).
    #[serde(default, alias = "file_path", alias = "paths")]
    pub path: Option<OneOrMany>,
    /// ripgrep file type(s) to keep, e.g. "rust", "py".
    #[serde(default, rename = "type", alias = "file_type")]
    pub file_type: Option<OneOrMany>,
    /// Maximum paths to return (default 100; 0 = only the output budget limits).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    pub head_limit: Option<usize>,
    /// Paths to skip first, for paging (default 0).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    pub offset: Option<usize>,
    /// "modified" (newest first; default) or "path".
    #[serde(default)]
    pub sort: Option<Sort>,
    /// Include hidden files and directories (default false).
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Do not respect .gitignore/.ignore files (default false).
    #[serde(default)]
    pub no_ignore: Option<bool>,
}

fn opt_size<'de, D: Deserializer<'de>>(de: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(de)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| D::Error::custom("max_filesize must be a non-negative integer")),
        Some(Value::String(text)) => parse_size(&text).map(Some).ok_or_else(|| {
            D::Error::custom(format!(
                "max_filesize {text:?} is not a size (e.g. 1048576, \"512K\", \"10M\", \"1G\")"
            ))
        }),
        Some(other) => Err(D::Error::custom(format!(
            "max_filesize must be a number or a size string, got {other}"
        ))),
    }
}

fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let factor = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// Resolves the `path` argument into search targets (or every root).
async fn targets(call: &Call<'_>, path: Option<&OneOrMany>) -> Result<Vec<PathBuf>, Answer> {
    let named = path.cloned().map(OneOrMany::into_vec).unwrap_or_default();
    if named.is_empty() {
        let targets = call.roots.existing();
        if targets.is_empty() {
            return Err(Answer::error(format!(
                "no workspace root exists ({}); pass a path",
                call.roots.describe()
            )));
        }
        return Ok(targets);
    }
    let mut targets = Vec::with_capacity(named.len());
    for path in &named {
        let resolved = resolve_checked(call, path, Access::Read).await?;
        if !resolved.exists {
            return Err(Answer::error(format!(
                "{}: no such file or directory",
                resolved.path.display()
            )));
        }
        targets.push(resolved.path);
    }
    Ok(targets)
}

/// Runs a blocking search with progress reporting; `None` when the call was cancelled
/// (the search is told to stop, and rmcp sends no response).
async fn run<T: Send + 'static>(
    call: &Call<'_>,
    noun: &'static str,
    total: Option<u64>,
    work: impl FnOnce(&Control) -> T + Send + 'static,
) -> Result<Option<T>, Answer> {
    if call.ctx.ct.is_cancelled() {
        return Ok(None); // cancelled before it started: no work at all
    }
    let control = Arc::new(Control::new());
    let reporter = Reporter::start(call.ctx, control.clone(), total, noun);
    let worker = control.clone();
    let mut handle = tokio::task::spawn_blocking(move || work(&worker));
    let outcome = tokio::select! {
        joined = &mut handle => Some(joined),
        _ = call.ctx.ct.cancelled() => {
            control.cancel();
            None
        }
    };
    reporter.finish().await;
    match outcome {
        None => Ok(None),
        Some(Ok(value)) => Ok(Some(value)),
        Some(Err(err)) => Err(Answer::error(format!(
            "internal error in the search: {err}"
        ))),
    }
}

/// The number of files a search will examine, when the fresh index knows it: every target
/// a directory with a fresh snapshot, and a query the index can answer. Progress then
/// carries a `total`.
fn known_total(call: &Call<'_>, targets: &[PathBuf], walks_more: bool) -> Option<u64> {
    let live = call.session.live.as_ref()?;
    if walks_more {
        return None;
    }
    let mut total = 0u64;
    for target in targets {
        let snapshot = live.index.snapshot_for(target)?;
        let rel = target.strip_prefix(snapshot.root()).ok()?;
        total += snapshot.files_under(rel).len() as u64;
    }
    Some(total)
}

// ---------------------------------------------------------------------------------------
// grep

#[derive(Debug, Serialize, JsonSchema)]
pub struct GrepOut {
    /// files_with_matches, content or count.
    pub mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<MatchOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<CountOut>>,
    /// Entries of this mode over the whole search.
    pub total: usize,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    pub stats: StatsOut,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MatchOut {
    pub path: String,
    pub line: u64,
    pub column: u64,
    pub text: String,
    pub before: Vec<LineOut>,
    pub after: Vec<LineOut>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LineOut {
    pub line: u64,
    pub text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CountOut {
    pub path: String,
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct StatsOut {
    pub files_searched: u64,
    pub bytes_searched: u64,
    pub elapsed_ms: u64,
    pub skipped: SkippedOut,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SkippedOut {
    pub binary: u64,
    pub too_large: u64,
    pub unreadable: u64,
}

fn stats_out(stats: &Stats) -> StatsOut {
    StatsOut {
        files_searched: stats.files_searched,
        bytes_searched: stats.bytes_searched,
        elapsed_ms: stats.elapsed.as_millis() as u64,
        skipped: SkippedOut {
            binary: stats.skipped_binary,
            too_large: stats.skipped_too_large,
            unreadable: stats.skipped_unreadable,
        },
    }
}

fn grep_query(args: &GrepArgs, budget: usize) -> GrepQuery {
    let mut query = GrepQuery::new(args.pattern.clone());
    query.case = if args.case_insensitive.unwrap_or(false) {
        CaseMode::Insensitive
    } else if args.smart_case.unwrap_or(false) {
        CaseMode::Smart
    } else {
        CaseMode::Sensitive
    };
    query.fixed_strings = args.fixed_strings.unwrap_or(false);
    query.word = args.word.unwrap_or(false);
    query.multiline = args.multiline.unwrap_or(false);
    let context = args.context.unwrap_or(0);
    query.before = args.before.unwrap_or(context);
    query.after = args.after.unwrap_or(context);
    query.globs = args
        .glob
        .clone()
        .map(OneOrMany::into_vec)
        .unwrap_or_default();
    query.types = args
        .file_type
        .clone()
        .map(OneOrMany::into_vec)
        .unwrap_or_default();
    query.hidden = args.hidden.unwrap_or(false);
    query.no_ignore = args.no_ignore.unwrap_or(false);
    query.max_filesize = args.max_filesize;
    query.mode = match args.output_mode.unwrap_or(Mode::FilesWithMatches) {
        Mode::FilesWithMatches => OutputMode::FilesWithMatches,
        Mode::Content => OutputMode::Content,
        Mode::Count => OutputMode::Count,
    };
    query.sort = match args.sort.unwrap_or(Sort::Path) {
        Sort::Path => SortBy::Path,
        Sort::Modified => SortBy::Modified,
    };
    query.offset = args.offset.unwrap_or(0);
    query.limit = Some(match args.head_limit.unwrap_or(GREP_DEFAULT_LIMIT) {
        0 => budget_entries(budget),
        n => n,
    });
    query
}

/// `head_limit: 0` means "as many as the output budget shows". No entry renders in fewer
/// than 16 bytes, so keeping more than `budget / 16` entries would only cost time (the
/// engine keeps the best `offset + limit` by sort order); the rest is paged as usual.
fn budget_entries(budget: usize) -> usize {
    (budget / 16).max(1)
}

pub async fn grep(call: &Call<'_>, args: GrepArgs) -> Answer {
    if args.pattern.is_empty() {
        return Answer::error("`pattern` is empty; give a regular expression to search for");
    }
    let targets = match targets(call, args.path.as_ref()).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let query = grep_query(&args, call.budget());
    let numbers = args.line_numbers.unwrap_or(true);
    let offset = query.offset;
    let index = call.session.live.as_ref().map(|live| live.index.clone());
    // A total only when every indexed file is a candidate (no hidden/ignored extras, no
    // glob or type filter), so progress ends at it.
    let total = known_total(
        call,
        &targets,
        query.hidden || query.no_ignore || !query.globs.is_empty() || !query.types.is_empty(),
    );
    let outcome = match run(call, "matches", total, move |control| match &index {
        // The index answers only what it can answer exactly; the rest walks the disk.
        Some(index) => search::grep_indexed(&query, &targets, index, control),
        None => search::grep(&query, &targets, control),
    })
    .await
    {
        Ok(Some(Ok(outcome))) => outcome,
        Ok(Some(Err(err))) => return Answer::error(err.to_string()),
        Ok(None) => return Answer::error("cancelled"),
        Err(answer) => return answer,
    };
    render_grep(&outcome, offset, numbers, call.budget())
}

/// Renders a grep outcome within `budget` bytes of text.
pub fn render_grep(outcome: &GrepOutcome, offset: usize, numbers: bool, budget: usize) -> Answer {
    let room = budget.saturating_sub(400);
    let mut text = String::new();
    let (mode, shown, mut out) = match &outcome.entries {
        GrepEntries::Files(files) => {
            let mut shown = 0;
            for path in files {
                let line = format!("{}\n", path.display());
                if text.len() + line.len() > room {
                    break;
                }
                text.push_str(&line);
                shown += 1;
            }
            let files_out = files[..shown]
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            (
                "files_with_matches",
                shown,
                GrepOut::new("files_with_matches").files(files_out),
            )
        }
        GrepEntries::Counts(counts) => {
            let mut shown = 0;
            for count in counts {
                let line = format!("{}:{}\n", count.path.display(), count.count);
                if text.len() + line.len() > room {
                    break;
                }
                text.push_str(&line);
                shown += 1;
            }
            let counts_out = counts[..shown]
                .iter()
                .map(|c| CountOut {
                    path: c.path.display().to_string(),
                    count: c.count,
                })
                .collect();
            ("count", shown, GrepOut::new("count").counts(counts_out))
        }
        GrepEntries::Matches(matches) => {
            let shown = render_matches(matches, numbers, room, &mut text);
            let matches_out = matches[..shown].iter().map(match_out).collect();
            (
                "content",
                shown,
                GrepOut::new("content").matches(matches_out),
            )
        }
    };
    let page_len = match &outcome.entries {
        GrepEntries::Files(v) => v.len(),
        GrepEntries::Counts(v) => v.len(),
        GrepEntries::Matches(v) => v.len(),
    };
    let next_offset = if shown < page_len {
        Some(offset + shown)
    } else {
        outcome.next_offset
    };
    out.total = outcome.total;
    out.truncated = next_offset.is_some();
    out.next_offset = next_offset;
    out.stats = stats_out(&outcome.stats);
    let noun = match mode {
        "content" => "matching lines",
        "count" => "files with matches",
        _ => "files",
    };
    if outcome.total == 0 {
        text.push_str(&format!(
            "No matches (searched {} files{}).\n",
            thousands(outcome.stats.files_searched),
            skipped_note(&outcome.stats)
        ));
    } else if let Some(next) = next_offset {
        text.push_str(&format!(
            "[showing {}-{} of {} {noun}; call grep with offset={next} for more]\n",
            offset + 1,
            offset + shown,
            outcome.total
        ));
    } else if offset > 0 && shown == 0 {
        text.push_str(&format!(
            "[offset {offset} is past the end: {} {noun} in total]\n",
            outcome.total
        ));
    }
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

fn skipped_note(stats: &Stats) -> String {
    let mut parts = Vec::new();
    if stats.skipped_binary > 0 {
        parts.push(format!("{} binary", stats.skipped_binary));
    }
    if stats.skipped_too_large > 0 {
        parts.push(format!("{} too large", stats.skipped_too_large));
    }
    if stats.skipped_unreadable > 0 {
        parts.push(format!("{} unreadable", stats.skipped_unreadable));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; skipped {}", parts.join(", "))
    }
}

impl GrepOut {
    fn new(mode: &str) -> GrepOut {
        GrepOut {
            mode: mode.to_string(),
            files: None,
            matches: None,
            counts: None,
            total: 0,
            truncated: false,
            next_offset: None,
            stats: StatsOut {
                files_searched: 0,
                bytes_searched: 0,
                elapsed_ms: 0,
                skipped: SkippedOut {
                    binary: 0,
                    too_large: 0,
                    unreadable: 0,
                },
            },
        }
    }
    fn files(mut self, files: Vec<String>) -> GrepOut {
        self.files = Some(files);
        self
    }
    fn counts(mut self, counts: Vec<CountOut>) -> GrepOut {
        self.counts = Some(counts);
        self
    }
    fn matches(mut self, matches: Vec<MatchOut>) -> GrepOut {
        self.matches = Some(matches);
        self
    }
}

fn match_out(m: &GrepMatch) -> MatchOut {
    MatchOut {
        path: m.path.display().to_string(),
        line: m.line,
        column: m.column,
        text: m.text.clone(),
        before: m
            .before
            .iter()
            .map(|c| LineOut {
                line: c.line,
                text: c.text.clone(),
            })
            .collect(),
        after: m
            .after
            .iter()
            .map(|c| LineOut {
                line: c.line,
                text: c.text.clone(),
            })
            .collect(),
    }
}

/// Renders matches grouped by file (`rg --heading`): the path once, then `N:text` for
/// matching lines and `N-text` for context, `--` between non-adjacent groups, a blank line
/// between files. Returns how many entries fit in `room` bytes.
fn render_matches(matches: &[GrepMatch], numbers: bool, room: usize, text: &mut String) -> usize {
    let mut shown = 0;
    let mut index = 0;
    while index < matches.len() {
        let path = &matches[index].path;
        let end = matches[index..]
            .iter()
            .position(|m| &m.path != path)
            .map_or(matches.len(), |n| index + n);
        // Lines of this file's entries on the page: true = matching line.
        let mut lines: BTreeMap<u64, (bool, &str)> = BTreeMap::new();
        let mut fitted = index;
        let mut block = String::new();
        for (k, m) in matches[index..end].iter().enumerate() {
            let mut candidate = lines.clone();
            candidate.insert(m.line, (true, m.text.as_str()));
            for ctx in &m.before {
                candidate
                    .entry(ctx.line)
                    .or_insert((false, ctx.text.as_str()));
            }
            for ctx in &m.after {
                let is_match = ctx.line <= m.end_line;
                let slot = candidate
                    .entry(ctx.line)
                    .or_insert((is_match, ctx.text.as_str()));
                slot.0 |= is_match;
            }
            let rendered = render_block(path, &candidate, numbers);
            if text.len() + rendered.len() > room && k > 0 {
                break;
            }
            if text.len() + rendered.len() > room && k == 0 {
                // Not even one more entry fits.
                return shown;
            }
            lines = candidate;
            block = rendered;
            fitted = index + k + 1;
        }
        text.push_str(&block);
        shown += fitted - index;
        if fitted < end {
            return shown;
        }
        index = end;
    }
    shown
}

fn render_block(
    path: &std::path::Path,
    lines: &BTreeMap<u64, (bool, &str)>,
    numbers: bool,
) -> String {
    let mut block = format!("{}\n", path.display());
    let mut previous: Option<u64> = None;
    for (&line, &(is_match, text)) in lines {
        if let Some(previous) = previous
            && line > previous + 1
        {
            block.push_str("--\n");
        }
        previous = Some(line);
        if numbers {
            let sep = if is_match { ':' } else { '-' };
            block.push_str(&format!("{line}{sep}{text}\n"));
        } else {
            block.push_str(text);
            block.push('\n');
        }
    }
    block.push('\n');
    block
}

// ---------------------------------------------------------------------------------------
// glob

#[derive(Debug, Serialize, JsonSchema)]
pub struct GlobOut {
    pub files: Vec<FoundOut>,
    pub total: usize,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FoundOut {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
}

pub async fn glob(call: &Call<'_>, mut args: GlobArgs) -> Answer {
    if args.pattern.trim().is_empty() {
        return Answer::error("`pattern` is empty; give a glob such as \"**/*.rs\"");
    }
    // An absolute pattern ("/home/me/app/src/**/*.rs") is split into the directory to
    // search and the pattern relative to it, as an agent means it.
    if args.path.is_none()
        && let Some((dir, rest)) = split_absolute_pattern(&args.pattern)
    {
        args.path = Some(OneOrMany::One(dir));
        args.pattern = rest;
    }
    let targets = match targets(call, args.path.as_ref()).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let mut query = GlobQuery::new(args.pattern.clone());
    query.types = args
        .file_type
        .clone()
        .map(OneOrMany::into_vec)
        .unwrap_or_default();
    query.hidden = args.hidden.unwrap_or(false);
    query.no_ignore = args.no_ignore.unwrap_or(false);
    query.sort = match args.sort.unwrap_or(Sort::Modified) {
        Sort::Path => SortBy::Path,
        Sort::Modified => SortBy::Modified,
    };
    query.offset = args.offset.unwrap_or(0);
    query.limit = Some(match args.head_limit.unwrap_or(GLOB_DEFAULT_LIMIT) {
        0 => budget_entries(call.budget()),
        n => n,
    });
    let offset = query.offset;
    let index = call.session.live.as_ref().map(|live| live.index.clone());
    let total = known_total(
        call,
        &targets,
        query.hidden || query.no_ignore || !query.types.is_empty(),
    );
    let outcome = match run(call, "found", total, move |control| match &index {
        Some(index) => search::glob_indexed(&query, &targets, index, control),
        None => search::glob(&query, &targets, control),
    })
    .await
    {
        Ok(Some(Ok(outcome))) => outcome,
        Ok(Some(Err(err))) => return Answer::error(err.to_string()),
        Ok(None) => return Answer::error("cancelled"),
        Err(answer) => return answer,
    };
    render_glob(&outcome, offset, call.budget())
}

/// Splits an absolute glob into its literal directory prefix and the rest:
/// `/a/b/**/*.rs` → (`/a/b`, `**/*.rs`); a literal `/a/b/c.rs` → (`/a/b`, `c.rs`). `None`
/// for relative patterns, or when nothing is left to match.
fn split_absolute_pattern(pattern: &str) -> Option<(String, String)> {
    if !pattern.starts_with('/') {
        return None;
    }
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = |c: &str| !c.contains(['*', '?', '[', ']', '{', '}']);
    // A fully literal path names one file: search its directory for its name.
    let split = components
        .iter()
        .position(|c| !literal(c))
        .unwrap_or(components.len() - 1)
        .max(1);
    let dir = components[..split].join("/");
    let rest = components[split..].join("/");
    if rest.is_empty() {
        return None;
    }
    Some((if dir.is_empty() { "/".to_string() } else { dir }, rest))
}

pub fn render_glob(outcome: &GlobOutcome, offset: usize, budget: usize) -> Answer {
    let room = budget.saturating_sub(300);
    let mut text = String::new();
    let mut files = Vec::new();
    // Only what fits is shown, and only that is checked: the walk reads directories by
    // path, so a file it found through a directory swapped for a symlink mid-walk must not
    // be listed (every shown file must exist in its real, symlink-free parent now).
    let mut shown = 0;
    let mut fitting = 0;
    for found in &outcome.files {
        fitting += found.path.as_os_str().len() + 1;
        if fitting > room {
            break;
        }
        shown += 1;
    }
    let inside =
        crate::files::safe::still_inside(outcome.files[..shown].iter().map(|f| f.path.as_path()));
    let mut consumed = 0;
    for found in &outcome.files[..shown] {
        consumed += 1;
        if !inside.contains(&found.path) {
            continue;
        }
        let line = format!("{}\n", found.path.display());
        if text.len() + line.len() > room {
            consumed -= 1;
            break;
        }
        text.push_str(&line);
        files.push(FoundOut {
            path: found.path.display().to_string(),
            modified: found.modified.map(rfc3339),
        });
    }
    let next_offset = if consumed < outcome.files.len() {
        Some(offset + consumed)
    } else {
        outcome.next_offset
    };
    if outcome.total == 0 {
        text.push_str("No files found.\n");
    } else if let Some(next) = next_offset {
        text.push_str(&format!(
            "[showing {}-{} of {} files; call glob with offset={next} for more]\n",
            offset + 1,
            offset + files.len(),
            outcome.total
        ));
    }
    let out = GlobOut {
        files,
        total: outcome.total,
        truncated: next_offset.is_some(),
        next_offset,
    };
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_patterns_split_into_directory_and_pattern() {
        assert_eq!(
            split_absolute_pattern("/a/b/**/*.rs"),
            Some(("/a/b".to_string(), "**/*.rs".to_string()))
        );
        assert_eq!(
            split_absolute_pattern("/a/b/src/*.{ts,tsx}"),
            Some(("/a/b/src".to_string(), "*.{ts,tsx}".to_string()))
        );
        assert_eq!(split_absolute_pattern("src/**/*.rs"), None);
        // A fully literal path: its directory, searched for its name.
        assert_eq!(
            split_absolute_pattern("/a/b/c.rs"),
            Some(("/a/b".to_string(), "c.rs".to_string()))
        );
        assert_eq!(split_absolute_pattern("/"), None);
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("10M"), Some(10 << 20));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("2 MB"), Some(2 << 20));
        assert_eq!(parse_size("lots"), None);
    }
}
