//! The search tools, `grep` and `glob`: arguments (with the aliases agents use), running the
//! blocking search engine with progress and cancellation on a lease of the process-wide
//! search pool ([`crate::pool`]; [`lane_for`] picks the quick lane for small requests), and
//! rendering results grouped by file like `rg --heading`, within the output budget.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::{Call, lenient, read_only_annotations, resolve_checked, schema_of};
use crate::access::Access;
use crate::mcp::progress::{Reporter, thousands};
use crate::mcp::render::{Answer, ENVELOPE, ignore_notes, json_len, rfc3339, serialized_len};
use crate::pool::{Lane, Pool};
use crate::search::{
    self, CaseMode, Control, GlobOutcome, GlobQuery, GrepEntries, GrepMatch, GrepOutcome,
    GrepQuery, OutputMode, SortBy, Stats,
};
use crate::symbols::{self, Definition};

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
    /// Lines of context after each match (content mode; at most 1000, larger values are
    /// clamped).
    #[serde(
        default,
        rename = "-A",
        alias = "after_context",
        deserialize_with = "lenient::opt_usize"
    )]
    #[schemars(range(max = 1000))]
    pub after: Option<usize>,
    /// Lines of context before each match (content mode; at most 1000, larger values are
    /// clamped).
    #[serde(
        default,
        rename = "-B",
        alias = "before_context",
        deserialize_with = "lenient::opt_usize"
    )]
    #[schemars(range(max = 1000))]
    pub before: Option<usize>,
    /// Lines of context before and after each match (content mode; at most 1000, larger
    /// values are clamped).
    #[serde(
        default,
        rename = "-C",
        alias = "context",
        deserialize_with = "lenient::opt_usize"
    )]
    #[schemars(range(max = 1000))]
    pub context: Option<usize>,
    /// Show line numbers in content mode (default true).
    #[serde(default, rename = "-n", alias = "line_numbers")]
    pub line_numbers: Option<bool>,
    /// Name each match's enclosing definition (function, method, class…), like
    /// `git grep -p`: content mode (implied when output_mode is not given). Languages with
    /// symbols: rust, c, cpp, python, javascript, typescript, tsx, go, java; other files
    /// have no scope.
    #[serde(default, alias = "show_function")]
    pub scope: Option<bool>,
    /// Maximum entries (files, lines or counts) to return (default 250; 0 = only the output
    /// budget limits; at most 20000, larger values are clamped).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = 20000))]
    pub head_limit: Option<usize>,
    /// Entries to skip first, for paging (default 0; at most 100000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = 100000))]
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
    /// Skip files larger than this: bytes, or a size like "10M", "512K" (at most 1 TiB,
    /// larger values are clamped).
    #[serde(default, deserialize_with = "opt_size")]
    #[schemars(with = "Option<SizeSchema>")]
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
    /// Maximum paths to return (default 100; 0 = only the output budget limits; at most
    /// 20000, larger values are clamped).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = 20000))]
    pub head_limit: Option<usize>,
    /// Paths to skip first, for paging (default 0; at most 100000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = 100000))]
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

/// The schema of `max_filesize`: a byte count (with its maximum) or a size string.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // schema only
enum SizeSchema {
    Bytes(#[schemars(range(max = 1_099_511_627_776u64))] u64),
    Text(String),
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
    resolve_targets(call, named).await
}

/// Resolves and authorizes the named paths (each must exist), or every existing root when
/// none is named: the targets of grep, glob and the symbol tools.
pub(super) async fn resolve_targets(
    call: &Call<'_>,
    named: Vec<String>,
) -> Result<Vec<PathBuf>, Answer> {
    if named.is_empty() {
        if let Some(answer) = super::no_roots(&call.roots) {
            return Err(answer);
        }
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

/// Total size of the files a request names up to which it is small (a search or parse of
/// them takes milliseconds): it may run on the pool's quick lane.
const QUICK_BYTES: u64 = 1 << 20;

/// The pool lane of a request over `targets` (see [`crate::pool`]): quick when it is served
/// from the file index's memory (`indexed`), or when every target is a regular file and
/// together they hold at most [`QUICK_BYTES`]; wide otherwise. Asked on the blocking pool
/// (it reads the targets' metadata).
pub(super) async fn lane_for(targets: &[PathBuf], indexed: bool) -> Lane {
    if indexed {
        return Lane::Quick;
    }
    let targets = targets.to_vec();
    let small = super::blocking(move || {
        let mut bytes = 0u64;
        targets
            .iter()
            .all(|target| match std::fs::metadata(target) {
                Ok(meta) if meta.is_file() => {
                    bytes = bytes.saturating_add(meta.len());
                    bytes <= QUICK_BYTES
                }
                _ => false,
            })
    });
    match small.await {
        Ok(true) => Lane::Quick,
        _ => Lane::Wide,
    }
}

/// Runs a blocking search, and the rendering of its answer, off the async executor with
/// progress reporting; `None` when the call was cancelled (the search is told to stop, and
/// rmcp sends no response). The work runs on a lease of the process-wide search pool
/// ([`crate::pool`]: waited for in line, cancellable while it waits): `threads` threads
/// that take turns at its slots, which the pool lends and takes back as requests come and
/// go. When cancelled, returns only once the blocking work has stopped, so the request
/// keeps counting against the concurrency limit until it has. `on_cancel` runs beside
/// `Control::cancel` (the symbol tools also interrupt a parse).
pub(super) async fn run(
    call: &Call<'_>,
    noun: &'static str,
    lane: Lane,
    total: Option<u64>,
    on_cancel: impl FnOnce(),
    work: impl FnOnce(&Control, usize) -> Answer + Send + 'static,
) -> Option<Answer> {
    let ct = &call.ctx.ct;
    if ct.is_cancelled() {
        return None; // cancelled before it started: no work at all
    }
    let lease = tokio::select! {
        lease = Pool::global().acquire(lane) => lease,
        _ = ct.cancelled() => return None,
    };
    let threads = lease.threads();
    let control = Arc::new(Control::sharing(lease.gate()));
    let reporter = Reporter::start(call.ctx, control.clone(), total, noun);
    let worker = control.clone();
    let mut handle = tokio::task::spawn_blocking(move || {
        let answer = work(&worker, threads);
        drop(lease); // the slots are free again only when the work is done
        answer
    });
    let outcome = tokio::select! {
        joined = &mut handle => Some(joined),
        _ = ct.cancelled() => {
            control.cancel();
            on_cancel();
            // The search checks the flag at least once per buffer; wait for it to stop.
            let _ = handle.await;
            None
        }
    };
    reporter.finish().await;
    match outcome? {
        Ok(answer) => Some(answer),
        Err(err) => Some(Answer::error(format!(
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
    /// Context lines before the match (absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<LineOut>,
    /// The rest of a multiline match and the context lines after it (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<LineOut>,
    /// Lines of this match's context left out because it alone exceeds the output budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_lines: u64,
    /// With `scope`: the innermost definition enclosing the matching line (absent outside
    /// every definition and for files without symbols).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeOut>,
}

/// A definition enclosing a match.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ScopeOut {
    /// function, method, class, struct, impl, …
    pub kind: String,
    pub name: String,
    /// The definition that encloses this one (class, impl, module…), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// First and last line of the whole definition.
    pub line: u64,
    pub end_line: u64,
}

fn scope_out(def: &Definition) -> ScopeOut {
    ScopeOut {
        kind: def.kind.to_string(),
        name: def.name.clone(),
        container: def.container.as_deref().map(str::to_string),
        line: def.line,
        end_line: def.end_line,
    }
}

/// The scope line written before a match whose enclosing definition differs from the
/// previous match's in the same file: `@@ method Parser::parse (12-40)`, like a diff hunk
/// header. Leaving every definition is said too, so no match looks scoped when it is not.
fn scope_line(def: Option<&Definition>) -> String {
    match def {
        Some(d) => format!(
            "@@ {} {} ({}-{})\n",
            d.kind,
            search::lines::cut_around(&d.qualified(), 0, 0, 200),
            d.line,
            d.end_line
        ),
        None => "@@ (outside any definition)\n".to_string(),
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    /// Ignore files not applied (not regular files, too large), one note each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_files: Vec<String>,
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
            ignore_files: ignore_notes(&stats.skipped_ignore_files).0,
        },
    }
}

fn grep_query(args: &GrepArgs, budget: usize) -> Result<GrepQuery, Answer> {
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
    query.before = args.before.unwrap_or(context).min(MAX_CONTEXT);
    query.after = args.after.unwrap_or(context).min(MAX_CONTEXT);
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
    query.max_filesize = args.max_filesize.map(|n| n.min(MAX_FILESIZE));
    let scope = args.scope.unwrap_or(false);
    query.mode = match (args.output_mode, scope) {
        (None, true) | (Some(Mode::Content), _) => OutputMode::Content,
        (None | Some(Mode::FilesWithMatches), false) => OutputMode::FilesWithMatches,
        (Some(Mode::Count), false) => OutputMode::Count,
        (Some(Mode::FilesWithMatches), true) => {
            return Err(scope_needs_content("files_with_matches"));
        }
        (Some(Mode::Count), true) => return Err(scope_needs_content("count")),
    };
    query.sort = match args.sort.unwrap_or(Sort::Path) {
        Sort::Path => SortBy::Path,
        Sort::Modified => SortBy::Modified,
    };
    query.offset = checked_offset(args.offset, "grep")?;
    query.limit = Some(head_limit(args.head_limit, GREP_DEFAULT_LIMIT, budget));
    query.max_bytes = Some(budget);
    Ok(query)
}

/// The refusal of `scope` with an output mode other than content.
fn scope_needs_content(mode: &str) -> Answer {
    Answer::error(format!(
        "`scope` names the definition around each matching line, so it needs \
         output_mode \"content\" (given: \"{mode}\"); drop output_mode or set it to \"content\""
    ))
}

/// Most context lines before or after a match (`-A`/`-B`/`-C`); larger values are clamped.
pub const MAX_CONTEXT: usize = 1000;
/// Largest `head_limit`; larger values are clamped (a page never holds more).
pub const MAX_HEAD_LIMIT: usize = search::MAX_RETAINED;
/// Largest `offset`: paging deeper than this is refused, since the engine keeps the sort
/// keys of every entry before the page (narrow the search instead).
pub const MAX_OFFSET: usize = 100_000;
/// Largest `max_filesize` (1 TiB); larger values are clamped.
pub const MAX_FILESIZE: u64 = 1 << 40;

fn checked_offset(offset: Option<usize>, tool: &str) -> Result<usize, Answer> {
    match offset.unwrap_or(0) {
        n if n > MAX_OFFSET => Err(Answer::error(format!(
            "offset {n} is too large ({tool} pages up to offset {MAX_OFFSET}); narrow the \
             search with path, glob or type instead"
        ))),
        n => Ok(n),
    }
}

/// `head_limit`: the default when absent, clamped to [`MAX_HEAD_LIMIT`]; `0` means "as many
/// as the output budget shows". No entry renders in fewer than 16 bytes, so keeping more
/// than `budget / 16` entries would only cost time (the engine keeps the best
/// `offset + limit` by sort order); the rest is paged as usual.
fn head_limit(given: Option<usize>, default: usize, budget: usize) -> usize {
    match given.unwrap_or(default) {
        0 => (budget / 16).clamp(1, MAX_HEAD_LIMIT),
        n => n.min(MAX_HEAD_LIMIT),
    }
}

pub async fn grep(call: &Call<'_>, args: GrepArgs) -> Answer {
    if args.pattern.is_empty() {
        return Answer::error("`pattern` is empty; give a regular expression to search for");
    }
    let budget = call.budget();
    let query = match grep_query(&args, budget) {
        Ok(query) => query,
        Err(answer) => return answer,
    };
    // Refuse a pattern too costly to compile before resolving paths or waiting for a slot.
    if let Err(err) = search::grep::build_matcher(&query) {
        return Answer::error(err.to_string());
    }
    let targets = match targets(call, args.path.as_ref()).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let numbers = args.line_numbers.unwrap_or(true);
    let scope = query.mode == OutputMode::Content && args.scope.unwrap_or(false);
    let index = call.file_index();
    let symbol_index = call.symbol_index();
    // Cancelling interrupts a parse for `scope` at once (tree-sitter checks this flag).
    let abort = Arc::new(AtomicUsize::new(0));
    let abort_on_cancel = abort.clone();
    // A total only when every indexed file is a candidate (no hidden/ignored extras, no
    // glob or type filter), so progress ends at it.
    let total = known_total(
        call,
        &targets,
        query.hidden || query.no_ignore || !query.globs.is_empty() || !query.types.is_empty(),
    );
    // Only a grep of a few small files is quick: one served by the index still reads
    // every file.
    let lane = lane_for(&targets, false).await;
    let work = move |control: &Control, threads: usize| {
        let query = GrepQuery { threads, ..query };
        let outcome = match &index {
            // The index answers only what it can answer exactly; the rest walks the disk.
            Some(index) => search::grep_indexed(&query, &targets, index, control),
            None => search::grep(&query, &targets, control),
        };
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(err) => return Answer::error(err.to_string()),
        };
        let scopes = match (&outcome.entries, scope) {
            (GrepEntries::Matches(matches), true) => {
                let entries: Vec<(&Path, u64)> =
                    matches.iter().map(|m| (m.path.as_path(), m.line)).collect();
                symbols::scope::enclosing(
                    &entries,
                    symbol_index.as_deref(),
                    threads,
                    control,
                    &abort,
                )
            }
            _ => Vec::new(),
        };
        render_grep(&outcome, &scopes, query.offset, numbers, budget).bounded(budget)
    };
    let on_cancel = move || abort_on_cancel.store(1, Ordering::Relaxed);
    match run(call, "matches", lane, total, on_cancel, work).await {
        Some(answer) => answer,
        None => Answer::cancelled(),
    }
}

/// The structured result's fields besides its entries, and the last text line, take at
/// most this many bytes (counts and stats are at most 20 digits each).
const FIXED: usize = 600;

/// Renders a grep outcome so that the whole result (text and structured content, as
/// serialized) takes at most `budget` bytes: entries are shown in order while they fit,
/// the same ones in both forms; a first entry that does not fit alone is shown cut.
/// Linear in the size of the page.
/// `scopes` (empty, or one per match of the page) name each match's enclosing definition.
pub fn render_grep(
    outcome: &GrepOutcome,
    scopes: &[Option<Definition>],
    offset: usize,
    numbers: bool,
    budget: usize,
) -> Answer {
    let (notes, notes_cost) = ignore_notes(&outcome.stats.skipped_ignore_files);
    let room = budget.saturating_sub(FIXED + ENVELOPE + notes_cost);
    let mut text = String::new();
    // A first entry shrunk to fit is measured by estimate only: let the guard check it.
    let mut exact = true;
    let (mode, shown, mut out) = match &outcome.entries {
        GrepEntries::Files(files) => {
            let mut used = 0;
            let mut listed = Vec::new();
            for path in files {
                let mut shown = path.display().to_string();
                let cost = |p: &str| 2 * json_len(p) + 2;
                if listed.is_empty() && cost(&shown) > room {
                    shown = cut_to_fit(&shown, room, cost); // shown cut, never skipped
                }
                let line = format!("{shown}\n");
                if used + cost(&shown) > room {
                    break;
                }
                let cost = cost(&shown);
                used += cost;
                text.push_str(&line);
                listed.push(shown);
            }
            let shown = listed.len();
            let out = GrepOut::new("files_with_matches").files(listed);
            ("files_with_matches", shown, out)
        }
        GrepEntries::Counts(counts) => {
            let mut used = 0;
            let mut listed = Vec::new();
            for count in counts {
                let mut path = count.path.display().to_string();
                let cost = |p: &str| 2 * json_len(p) + 60;
                if listed.is_empty() && cost(&path) > room {
                    path = cut_to_fit(&path, room, cost); // shown cut, never skipped
                }
                let line = format!("{path}:{}\n", count.count);
                if used + cost(&path) > room {
                    break;
                }
                let cost = cost(&path);
                used += cost;
                text.push_str(&line);
                listed.push(CountOut {
                    path,
                    count: count.count,
                });
            }
            let shown = listed.len();
            ("count", shown, GrepOut::new("count").counts(listed))
        }
        GrepEntries::Matches(matches) => {
            let (listed, shrunk) = render_matches(matches, scopes, numbers, room, &mut text);
            exact = !shrunk;
            let shown = listed.len();
            ("content", shown, GrepOut::new("content").matches(listed))
        }
    };
    let page_len = outcome.entries.len();
    let next_offset = if shown < page_len {
        Some(offset + shown.max(1))
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
    for note in &notes {
        text.push_str(&format!("[{note}]\n"));
    }
    // Every entry and line above was measured as serialized, within `room`.
    let answer =
        Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null));
    if exact { answer.fitted() } else { answer }
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
                    ignore_files: Vec::new(),
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

fn match_out(m: &GrepMatch, path: &str) -> MatchOut {
    let lines = |lines: &[search::ContextLine]| {
        lines
            .iter()
            .map(|c| LineOut {
                line: c.line,
                text: c.text.clone(),
            })
            .collect()
    };
    MatchOut {
        path: path.to_owned(),
        line: m.line,
        column: m.column,
        text: m.text.clone(),
        before: lines(&m.before),
        after: lines(&m.after),
        omitted_lines: m.omitted,
        scope: None,
    }
}

/// `text` cut (with the usual marker) until `cost` of it fits in `room`: for a first entry
/// that alone exceeds the budget, which is shown cut rather than skipped.
fn cut_to_fit(text: &str, room: usize, cost: impl Fn(&str) -> usize) -> String {
    let mut chars = text.chars().count();
    let mut cut = text.to_owned();
    while cost(&cut) > room && chars > 1 {
        chars /= 2;
        cut = search::lines::cut_around(text, 0, 0, chars);
    }
    cut
}

/// Decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Serialized size of one structured line (`{"line":N,"text":"…"},`).
fn line_out_cost(line: &search::ContextLine) -> usize {
    18 + digits(line.line) + json_len(&line.text)
}

/// Serialized size of one structured match, with its comma (see [`MatchOut`]), given the
/// serialized size of its path.
fn match_out_cost(m: &GrepMatch, path_len: usize) -> usize {
    let lines: usize = m.before.iter().chain(&m.after).map(line_out_cost).sum();
    let omitted = match m.omitted {
        0 => 0,
        n => 17 + digits(n),
    };
    // `,"before":[` … `]` and `,"after":[` … `]`, each only when not empty.
    let lists = 12 * (usize::from(!m.before.is_empty()) + usize::from(!m.after.is_empty()));
    36 + digits(m.line) + digits(m.column) + path_len + json_len(&m.text) + lines + omitted + lists
}

/// Renders matches grouped by file (`rg --heading`): the path once, then `N:text` for
/// matching lines and `N-text` for context, `--` between non-adjacent groups, a blank line
/// between files. Each line is written once, in order, however the entries' context
/// overlaps, so the cost is linear in the page. Entries are added while the text and their
/// structured form fit in `room` bytes together; a first entry too large alone is cut
/// (see [`shrink`]). Returns the structured form of the entries shown, and whether the
/// first one was shrunk.
fn render_matches(
    matches: &[GrepMatch],
    scopes: &[Option<Definition>],
    numbers: bool,
    room: usize,
    text: &mut String,
) -> (Vec<MatchOut>, bool) {
    let scope_of = |k: usize| scopes.get(k).and_then(Option::as_ref);
    let mut shrunk = false;
    let mut shown: Vec<MatchOut> = Vec::new();
    let mut used = 0;
    let mut group = Group::default();
    // The file's path as shown, and its serialized size: computed once per file.
    let mut path = String::new();
    let mut path_len = 0;
    let mut block = String::new();
    for (k, m) in matches.iter().enumerate() {
        let new_file = group.path != Some(m.path.as_path());
        if new_file {
            group = Group::start(&m.path, k);
            path = m.path.display().to_string();
            path_len = json_len(&path);
        }
        block.clear();
        if new_file {
            if k > 0 {
                block.push('\n');
            }
            block.push_str(&path);
            block.push('\n');
        }
        // With scopes, a new enclosing definition is named before the match's lines.
        let scope = scope_of(k);
        let scope_changed = if new_file {
            scope.is_some()
        } else {
            !scopes.is_empty() && scope_key(scope) != scope_key(scope_of(k - 1))
        };
        let scope_text = if scope_changed {
            scope_line(scope)
        } else {
            String::new()
        };
        let mut out = match_out(m, &path);
        out.scope = scope.map(scope_out);
        let mut trial = group.clone();
        trial.render(matches, m, numbers, &scope_text, &mut block);
        let cost = json_len(&block) - 2 + match_out_cost(m, path_len) + scope_cost(&out.scope);
        if used + cost <= room {
            used += cost;
            text.push_str(&block);
            group = trial;
            shown.push(out);
            continue;
        }
        if k == 0 {
            // Paging must progress: the first entry is shown, cut to the room.
            let cut = shrink(m, room, numbers);
            let mut block = format!("{path}\n");
            Group::start(&m.path, 0).render(matches, &cut, numbers, &scope_text, &mut block);
            text.push_str(&block);
            let mut out = match_out(&cut, &path);
            out.scope = scope.map(scope_out);
            shown.push(out);
            shrunk = true;
        }
        break;
    }
    if !shown.is_empty() {
        text.push('\n');
    }
    (shown, shrunk)
}

/// What makes two scopes the same definition (the page's matches of one file).
fn scope_key(def: Option<&Definition>) -> Option<(u64, u64, &str)> {
    def.map(|d| (d.line, d.end_line, d.name.as_str()))
}

/// Serialized size of a match's `scope` field, with its comma (0 when absent).
fn scope_cost(scope: &Option<ScopeOut>) -> usize {
    scope
        .as_ref()
        .map_or(0, |scope| ",\"scope\":".len() + serialized_len(scope))
}

/// The rendering state of the file being written.
#[derive(Clone, Default)]
struct Group<'a> {
    path: Option<&'a Path>,
    /// Index (in the page) of the file's first entry.
    first: usize,
    /// Last line written for this file.
    last: Option<u64>,
    /// Entries of this file whose match starts at or before the line being written.
    started: usize,
    /// Largest end line among those.
    match_end: u64,
}

impl<'a> Group<'a> {
    fn start(path: &'a Path, first: usize) -> Group<'a> {
        Group {
            path: Some(path),
            first,
            last: None,
            started: first,
            match_end: 0,
        }
    }

    /// Writes the lines of `m` not written yet, `header` (a scope line, or empty) before
    /// the first of them, after the `--` that separates it from the previous group. A line
    /// is marked as matching when any entry of the page's file covers it, whichever
    /// entry's context brings it.
    fn render(
        &mut self,
        page: &[GrepMatch],
        m: &GrepMatch,
        numbers: bool,
        header: &str,
        out: &mut String,
    ) {
        let mut header = Some(header).filter(|h| !h.is_empty());
        let lines = m
            .before
            .iter()
            .map(|c| (c.line, c.text.as_str()))
            .chain([(m.line, m.text.as_str())])
            .chain(m.after.iter().map(|c| (c.line, c.text.as_str())));
        for (line, text) in lines {
            if self.last.is_some_and(|last| line <= last) {
                continue;
            }
            if let Some(last) = self.last
                && line > last + 1
            {
                out.push_str("--\n");
            }
            if let Some(header) = header.take() {
                out.push_str(header);
            }
            self.last = Some(line);
            while self.started < page.len()
                && page[self.started].path == page[self.first].path
                && page[self.started].line <= line
            {
                self.match_end = self.match_end.max(page[self.started].end_line);
                self.started += 1;
            }
            let is_match = self.match_end >= line || (m.line <= line && line <= m.end_line);
            if numbers {
                let sep = if is_match { ':' } else { '-' };
                let _ = writeln!(out, "{line}{sep}{text}");
            } else {
                out.push_str(text);
                out.push('\n');
            }
        }
        if m.omitted > 0 {
            out.push_str(&format!(
                "[… {} more lines of this match cut: over the output budget; ask for less context]\n",
                m.omitted
            ));
        }
    }
}

/// A copy of `m` whose text rendering and structured form fit in `room` bytes together:
/// context lines are dropped from the far ends (after, then before) and counted in
/// `omitted`, then the line itself is cut around the match.
fn shrink(m: &GrepMatch, room: usize, numbers: bool) -> GrepMatch {
    let mut cut = m.clone();
    let line_cost = |c: &search::ContextLine| {
        let number = if numbers { 21 } else { 0 };
        json_len(&c.text) + number + line_out_cost(c)
    };
    let path = m.path.display().to_string();
    let fixed = 2 * json_len(&path) + 300;
    let mut total = fixed + 2 * json_len(&m.text) + 40;
    total += m
        .before
        .iter()
        .chain(&m.after)
        .map(line_cost)
        .sum::<usize>();
    while total > room {
        let dropped = match cut.after.pop() {
            Some(line) => line,
            None if !cut.before.is_empty() => cut.before.remove(0),
            None => break,
        };
        total -= line_cost(&dropped);
        cut.omitted += 1;
    }
    let mut chars = cut.text.chars().count();
    while total > room && chars > 1 {
        chars /= 2;
        let shorter = search::lines::cut_around(&m.text, 0, 0, chars);
        total = total - 2 * json_len(&cut.text) + 2 * json_len(&shorter);
        cut.text = shorter;
    }
    cut
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
    /// Ignore files not applied (not regular files, too large), one note each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_ignore_files: Vec<String>,
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
    let budget = call.budget();
    query.offset = match checked_offset(args.offset, "glob") {
        Ok(offset) => offset,
        Err(answer) => return answer,
    };
    query.limit = Some(head_limit(args.head_limit, GLOB_DEFAULT_LIMIT, budget));
    // Refuse a glob too long or complex before resolving paths or waiting for a slot.
    if let Err(err) = search::glob::compile_glob(&query.pattern) {
        return Answer::error(err.to_string());
    }
    let targets = match targets(call, args.path.as_ref()).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let index = call.file_index();
    let total = known_total(
        call,
        &targets,
        query.hidden || query.no_ignore || !query.types.is_empty(),
    );
    // A glob the fresh index answers (it knows the total) reads nothing from the disk.
    let lane = lane_for(&targets, total.is_some()).await;
    let work = move |control: &Control, threads: usize| {
        let query = GlobQuery { threads, ..query };
        let outcome = match &index {
            Some(index) => search::glob_indexed(&query, &targets, index, control),
            None => search::glob(&query, &targets, control),
        };
        match outcome {
            Ok(outcome) => render_glob(&outcome, query.offset, budget).bounded(budget),
            Err(err) => Answer::error(err.to_string()),
        }
    };
    match run(call, "found", lane, total, || {}, work).await {
        Some(answer) => answer,
        None => Answer::cancelled(),
    }
}

/// Splits an absolute glob into its literal directory prefix and the rest:
/// `/a/b/**/*.rs` → (`/a/b`, `**/*.rs`); a literal `/a/b/c.rs` → (`/a/b`, `c.rs`). `None`
/// for relative patterns, or when nothing is left to match. On Windows also `C:\x\*.rs`,
/// `C:/x/**/*.rs` and `\\srv\share\*.rs` (see [`split_absolute_pattern_for`]).
fn split_absolute_pattern(pattern: &str) -> Option<(String, String)> {
    split_absolute_pattern_for(pattern, cfg!(windows))
}

/// [`split_absolute_pattern`] under Unix rules (`windows: false`: `/`-rooted, `/` the only
/// separator, `\` an escape) or Windows rules (`windows: true`): rooted at a drive
/// (`C:\`, `c:/`), a UNC share (`\\srv\share`, `//srv/share`), a verbatim drive
/// (`\\?\C:\`) or the current drive's root (`\x`, `/x`); `\` and `/` both separate (globset
/// takes no escapes on Windows). The directory is given with `\`, the rest with `/` (the
/// glob's separator on every platform).
fn split_absolute_pattern_for(pattern: &str, windows: bool) -> Option<(String, String)> {
    let literal = |c: &str| !c.contains(['*', '?', '[', ']', '{', '}']);
    if !windows {
        if !pattern.starts_with('/') {
            return None;
        }
        let components: Vec<&str> = pattern.split('/').collect();
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
        return Some((if dir.is_empty() { "/".to_string() } else { dir }, rest));
    }
    let is_sep = |c: char| c == '\\' || c == '/';
    let seps: &[char] = &['\\', '/'];
    // `\\?\C:\…`: the verbatim prefix kept in front of the drive's directory.
    for verbatim in [r"\\?\", "//?/"] {
        if let Some(rest) = pattern.strip_prefix(verbatim) {
            let (dir, rest) = split_absolute_pattern_for(rest, true)?;
            return crate::files::winpath::has_drive(&dir).then(|| (format!(r"\\?\{dir}"), rest));
        }
    }
    let mut chars = pattern.chars();
    let (first, second) = (chars.next(), chars.next());
    // (the directory when nothing follows the root, what components are appended to, the
    // components after the root)
    let (root, lead, body): (String, String, &str) =
        if crate::files::winpath::has_drive(pattern) && pattern[2..].starts_with(is_sep) {
            let drive = format!(r"{}\", &pattern[..2]);
            (drive.clone(), drive, &pattern[3..])
        } else if first.is_some_and(is_sep) && second.is_some_and(is_sep) {
            // `\\srv\share\…`: the server and the share are part of the root.
            let mut parts = pattern[2..].splitn(3, seps);
            let (server, share) = (parts.next()?, parts.next()?);
            if server.is_empty() || share.is_empty() || !literal(server) || !literal(share) {
                return None;
            }
            let share = format!(r"\\{server}\{share}");
            (
                share.clone(),
                format!(r"{share}\"),
                parts.next().unwrap_or(""),
            )
        } else if first.is_some_and(is_sep) {
            (r"\".to_string(), r"\".to_string(), &pattern[1..])
        } else {
            return None;
        };
    let components: Vec<&str> = body.split(seps).collect();
    // A fully literal path names one file: search its directory for its name.
    let split = components
        .iter()
        .position(|c| !literal(c))
        .unwrap_or(components.len() - 1);
    let rest = components[split..].join("/");
    if rest.is_empty() {
        return None;
    }
    let dir = match split {
        0 => root,
        _ => format!("{lead}{}", components[..split].join(r"\")),
    };
    Some((dir, rest))
}

/// Renders a glob outcome so that the whole result (text and structured content) takes at
/// most `budget` bytes; the same files in both forms.
pub fn render_glob(outcome: &GlobOutcome, offset: usize, budget: usize) -> Answer {
    let (notes, notes_cost) = ignore_notes(&outcome.stats.skipped_ignore_files);
    let room = budget.saturating_sub(FIXED + ENVELOPE + notes_cost);
    let mut text = String::new();
    let mut files = Vec::new();
    let mut used = 0;
    for found in &outcome.files {
        let mut path = found.path.display().to_string();
        let cost = |p: &str| 2 * json_len(p) + 60;
        if files.is_empty() && cost(&path) > room {
            path = cut_to_fit(&path, room, cost); // shown cut, never skipped
        }
        let cost = cost(&path);
        if used + cost > room {
            break;
        }
        used += cost;
        text.push_str(&path);
        text.push('\n');
        files.push(FoundOut {
            path,
            modified: found.modified.map(rfc3339),
        });
    }
    let shown = files.len();
    let next_offset = if shown < outcome.files.len() {
        Some(offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    if outcome.total == 0 {
        text.push_str("No files found.\n");
    } else if let Some(next) = next_offset {
        text.push_str(&format!(
            "[showing {}-{} of {} files; call glob with offset={next} for more]\n",
            offset + 1,
            offset + shown,
            outcome.total
        ));
    }
    for note in &notes {
        text.push_str(&format!("[{note}]\n"));
    }
    let out = GlobOut {
        files,
        total: outcome.total,
        truncated: next_offset.is_some(),
        next_offset,
        skipped_ignore_files: notes,
    };
    // Every path above was measured as serialized, within `room`.
    Answer::text(text)
        .with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
        .fitted()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_patterns_split_into_directory_and_pattern() {
        let split_absolute_pattern = |p: &str| split_absolute_pattern_for(p, false);
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
    fn absolute_patterns_split_under_windows_rules() {
        let split = |p: &str| split_absolute_pattern_for(p, true);
        let pair = |d: &str, r: &str| Some((d.to_string(), r.to_string()));
        assert_eq!(split(r"C:\x\*.rs"), pair(r"C:\x", "*.rs"));
        assert_eq!(split("C:/x/**/*.rs"), pair(r"C:\x", "**/*.rs"));
        assert_eq!(split(r"c:\x/src\**\*.rs"), pair(r"c:\x\src", "**/*.rs"));
        assert_eq!(split(r"C:\*.rs"), pair(r"C:\", "*.rs"));
        assert_eq!(
            split(r"C:\x\src\*.{ts,tsx}"),
            pair(r"C:\x\src", "*.{ts,tsx}")
        );
        // A fully literal path: its directory, searched for its name.
        assert_eq!(split(r"C:\x\y\c.rs"), pair(r"C:\x\y", "c.rs"));
        assert_eq!(
            split(r"\\srv\share\src\*.rs"),
            pair(r"\\srv\share\src", "*.rs")
        );
        assert_eq!(split("//srv/share/*.rs"), pair(r"\\srv\share", "*.rs"));
        assert_eq!(split(r"\\srv\*\x.rs"), None, "a share is not a pattern");
        assert_eq!(split(r"\\?\C:\x\*.rs"), pair(r"\\?\C:\x", "*.rs"));
        assert_eq!(split(r"\x\*.rs"), pair(r"\x", "*.rs"));
        assert_eq!(split("/a/b/**/*.rs"), pair(r"\a\b", "**/*.rs"));
        // Relative, drive-relative, or nothing left to match.
        assert_eq!(split(r"src\*.rs"), None);
        assert_eq!(split("src/**/*.rs"), None);
        assert_eq!(split(r"C:x\*.rs"), None);
        assert_eq!(split(r"C:\"), None);
        assert_eq!(split(r"C:\x\"), None);
        assert_eq!(split(r"\\srv\share"), None);
        assert_eq!(split("*.rs"), None);
        // Unix rules: `\` is no separator there (it escapes).
        assert_eq!(split_absolute_pattern_for(r"C:\x\*.rs", false), None);
        assert_eq!(
            split_absolute_pattern_for(r"/a/b\*.rs", false),
            Some(("/a".to_string(), r"b\*.rs".to_string()))
        );
    }

    #[test]
    fn structured_costs_are_exact_within_a_comma_per_list() {
        let m = GrepMatch {
            path: PathBuf::from("/a/\"b\".rs"),
            line: 12,
            column: 3,
            end_line: 12,
            text: "x\ty".into(),
            before: vec![search::ContextLine {
                line: 11,
                text: "é".into(),
            }],
            after: vec![],
            omitted: 7,
        };
        // Exact but for one comma per list, counted for every line.
        let path = m.path.display().to_string();
        let serialized = serde_json::to_string(&match_out(&m, &path)).unwrap();
        assert_eq!(
            match_out_cost(&m, json_len(&path)),
            serialized.len() + 1 + 1
        );
        // Without context the empty lists are left out, and the cost follows.
        let bare = GrepMatch {
            before: vec![],
            omitted: 0,
            ..m.clone()
        };
        let serialized = serde_json::to_string(&match_out(&bare, &path)).unwrap();
        assert!(!serialized.contains("before") && !serialized.contains("after"));
        assert_eq!(match_out_cost(&bare, json_len(&path)), serialized.len() + 1);
        // The output schema does not require what may be left out.
        let schema = Value::Object((*schema_of::<GrepOut>()).clone());
        let mut item = &schema["properties"]["matches"]["items"];
        if let Some(name) = item["$ref"].as_str() {
            item = &schema["$defs"][name.rsplit('/').next().unwrap()];
        }
        let required = item["required"].to_string();
        assert!(required.contains("\"text\""), "{item}");
        assert!(!required.contains("before") && !required.contains("after"));
        assert!(!required.contains("scope"));
        // A scope adds exactly its field's size.
        let mut scoped = match_out(&bare, &path);
        scoped.scope = Some(ScopeOut {
            kind: "method".into(),
            name: "pa\"rse".into(),
            container: Some("Ü".into()),
            line: 3,
            end_line: 1_000_000,
        });
        let with_scope = serde_json::to_string(&scoped).unwrap();
        assert_eq!(
            match_out_cost(&bare, json_len(&path)) + scope_cost(&scoped.scope),
            with_scope.len() + 1
        );
    }

    #[test]
    fn every_numeric_argument_has_a_maximum() {
        for schema in [schema_of::<GrepArgs>(), schema_of::<GlobArgs>()] {
            let props = schema["properties"].as_object().unwrap();
            for (name, prop) in props {
                let text = prop.to_string();
                if text.contains("integer") {
                    assert!(text.contains("maximum"), "{name} has no maximum: {text}");
                }
            }
        }
        let grep = schema_of::<GrepArgs>();
        assert_eq!(grep["properties"]["-C"]["maximum"], MAX_CONTEXT);
        assert_eq!(grep["properties"]["head_limit"]["maximum"], MAX_HEAD_LIMIT);
        assert_eq!(grep["properties"]["offset"]["maximum"], MAX_OFFSET);
        assert_eq!(
            schema_of::<GlobArgs>()["properties"]["offset"]["maximum"],
            MAX_OFFSET
        );
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
