//! The code-intelligence tools (PRODUCT §13): `symbols`, `outline` and `references`.
//! Their arguments and handlers: the work is `rootgrep_core::symbols`, run on the process-wide
//! search pool with progress and cancellation like `grep`, and rendered by
//! `crate::mcp::render::{symbols, outline, references}`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{MAX_OFFSET, OneOrMany};
use super::pool;
use super::{Call, lenient, read_only_annotations, schema_of};
use crate::mcp::hints;
use crate::mcp::render::Answer;
use crate::mcp::render::outline::{OutlineOut, render_outline};
use crate::mcp::render::references::{ReferencesOut, render_references};
use crate::mcp::render::symbols::{SymbolsOut, render_symbols};
use rootgrep_core::pool::Lane;
use rootgrep_core::symbols::{self, find::SymbolQuery, lang::Lang};
use rootgrep_core::walk::Control;

pub const SYMBOLS_DEFAULT_LIMIT: usize = 50;
pub const OUTLINE_DEFAULT_LIMIT: usize = 500;
pub const REFERENCES_DEFAULT_LIMIT: usize = 100;
/// Largest `head_limit` of these tools; larger values are clamped.
pub const MAX_LIMIT: usize = 5_000;

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "symbols",
            "Find definitions by name (exact, then prefix, then fuzzy), with line range \
             and signature; \"Type::name\" narrows. Rust, C, C++, Python, JS, TS, Go, Java.",
            schema_of::<SymbolsArgs>(),
        )
        .with_raw_output_schema(schema_of::<SymbolsOut>())
        .with_annotations(read_only_annotations("Find definitions")),
        Tool::new(
            "outline",
            "A file's definitions, nested, with line ranges and signatures (or each \
             file's in a directory): its shape for a fraction of reading it.",
            schema_of::<OutlineArgs>(),
        )
        .with_raw_output_schema(schema_of::<OutlineOut>())
        .with_annotations(read_only_annotations("Outline a file")),
        Tool::new(
            "references",
            "Uses of a name (whole word, case-sensitive), each under its enclosing \
             definition; kind keeps uses inside such definitions. Matches by name, not by type.",
            schema_of::<ReferencesArgs>(),
        )
        .with_raw_output_schema(schema_of::<ReferencesOut>())
        .with_annotations(read_only_annotations("Find references by name")),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolsArgs {
    /// A name or its start (smart case); "Type::name" narrows to a container.
    #[serde(alias = "name", alias = "symbol", alias = "pattern")]
    pub query: String,
    /// Kind(s): function (and methods), class (and structs, enums, traits…), method,
    /// struct, enum, type, constant, macro, module, impl…
    #[serde(default)]
    pub kind: Option<OneOrMany>,
    /// File(s) or directories (default: the roots).
    #[serde(default, alias = "file_path", alias = "paths")]
    pub path: Option<OneOrMany>,
    /// Language(s): rust, c, cpp, python, javascript, typescript, tsx, go, java.
    #[serde(default, alias = "lang")]
    pub language: Option<OneOrMany>,
    /// Exact name only.
    #[serde(default)]
    pub exact: Option<bool>,
    /// Most definitions (default 50; at most 5000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_LIMIT))]
    pub head_limit: Option<usize>,
    /// For paging.
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_OFFSET))]
    pub offset: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutlineArgs {
    /// A file, or a directory (each supported file below it).
    #[serde(alias = "file_path")]
    pub path: String,
    /// Kind(s), as for symbols.
    #[serde(default)]
    pub kind: Option<OneOrMany>,
    /// Most definitions (default 500; at most 5000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_LIMIT))]
    pub head_limit: Option<usize>,
    /// For paging.
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_OFFSET))]
    pub offset: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferencesArgs {
    /// The identifier.
    #[serde(alias = "symbol", alias = "query")]
    pub name: String,
    /// File(s) or directories (default: the roots).
    #[serde(default, alias = "file_path", alias = "paths")]
    pub path: Option<OneOrMany>,
    /// Only uses inside definitions of these kinds.
    #[serde(default)]
    pub kind: Option<OneOrMany>,
    /// Most uses (default 100; at most 5000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_LIMIT))]
    pub head_limit: Option<usize>,
    /// For paging.
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_OFFSET))]
    pub offset: Option<usize>,
}

// ---------------------------------------------------------------------------------------
// shared plumbing

fn list(value: Option<OneOrMany>) -> Vec<String> {
    match value {
        None => Vec::new(),
        Some(OneOrMany::One(one)) if one.trim().is_empty() => Vec::new(),
        Some(OneOrMany::One(one)) => vec![one],
        Some(OneOrMany::Many(many)) => many,
    }
}

fn limits(
    head_limit: Option<usize>,
    offset: Option<usize>,
    default: usize,
    tool: &str,
) -> Result<(usize, usize), Answer> {
    let offset = offset.unwrap_or(0);
    if offset > MAX_OFFSET {
        return Err(Answer::error(format!(
            "offset {offset} is too large ({tool} pages up to offset {MAX_OFFSET}); narrow it \
             with path or kind instead"
        )));
    }
    let limit = match head_limit.unwrap_or(default) {
        0 => MAX_LIMIT,
        n => n.min(MAX_LIMIT),
    };
    Ok((limit, offset))
}

/// Runs symbol work on the search pool like grep (a lease on `lane`, waited for in line),
/// with progress; a cancel also interrupts a parse in progress. `None` when cancelled.
async fn run(
    call: &Call<'_>,
    noun: &'static str,
    lane: Lane,
    work: impl FnOnce(&Control, &AtomicUsize, usize) -> Answer + Send + 'static,
) -> Option<Answer> {
    let abort = Arc::new(AtomicUsize::new(0));
    let on_cancel = {
        let abort = abort.clone();
        move || abort.store(1, Ordering::Relaxed)
    };
    pool::run(
        call,
        noun,
        lane,
        None,
        on_cancel,
        move |control, threads| work(control, &abort, threads),
    )
    .await
}

fn langs_of(names: &[String]) -> Result<Vec<Lang>, Answer> {
    names
        .iter()
        .map(|name| {
            Lang::from_name(name).ok_or_else(|| {
                Answer::error(format!(
                    "unknown language {name:?}; supported: {}",
                    symbols::find::supported_names()
                ))
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// symbols

pub async fn symbols(call: &Call<'_>, args: SymbolsArgs) -> Answer {
    let query_text = args.query.trim().to_string();
    if query_text.is_empty() {
        return Answer::error("`query` is empty; give a name, prefix or part of a name");
    }
    if query_text.len() > 256 {
        return Answer::error("`query` is longer than 256 bytes; give a name");
    }
    let (limit, offset) = match limits(
        args.head_limit,
        args.offset,
        SYMBOLS_DEFAULT_LIMIT,
        "symbols",
    ) {
        Ok(pair) => pair,
        Err(answer) => return answer,
    };
    let langs = match langs_of(&list(args.language)) {
        Ok(langs) => langs,
        Err(answer) => return answer,
    };
    let targets = match pool::resolve_targets(call, list(args.path)).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let query = SymbolQuery {
        query: query_text,
        exact: args.exact.unwrap_or(false),
        kinds: list(args.kind),
        langs,
        offset,
        limit,
        threads: 1,
    };
    let indexes = call.search_indexes();
    let symbol_index = call.symbol_index();
    let budget = call.budget();
    let paths = call.paths();
    let lane = pool::lane_for(&targets, false).await;
    let work = move |control: &Control, abort: &AtomicUsize, threads: usize| {
        let query = SymbolQuery { threads, ..query };
        match symbols::find::find_symbols_with(
            &query,
            &targets,
            indexes.get(),
            symbol_index.as_deref(),
            control,
            abort,
        ) {
            Ok(outcome) => render_symbols(&query, &outcome, &paths, budget),
            Err(err) => Answer::error(hints::search(&err)),
        }
    };
    run(call, "definitions", lane, work)
        .await
        .unwrap_or_else(Answer::cancelled)
}

// ---------------------------------------------------------------------------------------
// outline

pub async fn outline(call: &Call<'_>, args: OutlineArgs) -> Answer {
    let (limit, offset) = match limits(
        args.head_limit,
        args.offset,
        OUTLINE_DEFAULT_LIMIT,
        "outline",
    ) {
        Ok(pair) => pair,
        Err(answer) => return answer,
    };
    if args.path.is_empty() {
        return Answer::error("`path` is empty; give a file or directory");
    }
    let targets = match pool::resolve_targets(call, vec![args.path]).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let kinds = list(args.kind);
    let budget = call.budget();
    let paths = call.paths();
    let lane = pool::lane_for(&targets, false).await;
    let work =
        move |control: &Control, abort: &AtomicUsize, threads: usize| match symbols::find::outline(
            &targets, &kinds, offset, limit, threads, control, abort,
        ) {
            Ok(outcome) => render_outline(&outcome, offset, limit, &paths, budget),
            Err(rootgrep_core::search::SearchError::UnknownType { name, .. }) => {
                Answer::error(name)
            }
            Err(err) => Answer::error(hints::search(&err)),
        };
    run(call, "definitions", lane, work)
        .await
        .unwrap_or_else(Answer::cancelled)
}

// ---------------------------------------------------------------------------------------
// references

pub async fn references(call: &Call<'_>, args: ReferencesArgs) -> Answer {
    let name = args.name.trim().to_string();
    if name.is_empty() {
        return Answer::error("`name` is empty; give an identifier");
    }
    if name.len() > 256 {
        return Answer::error("`name` is longer than 256 bytes; give an identifier");
    }
    let (limit, offset) = match limits(
        args.head_limit,
        args.offset,
        REFERENCES_DEFAULT_LIMIT,
        "references",
    ) {
        Ok(pair) => pair,
        Err(answer) => return answer,
    };
    let targets = match pool::resolve_targets(call, list(args.path)).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let kinds = list(args.kind);
    let filtered = !kinds.is_empty();
    let indexes = call.search_indexes();
    let symbol_index = call.symbol_index();
    let budget = call.budget();
    let paths = call.paths();
    let lane = pool::lane_for(&targets, false).await;
    let work = move |control: &Control, abort: &AtomicUsize, threads: usize| {
        match symbols::find::references(
            &name,
            &targets,
            indexes.get(),
            symbol_index.as_deref(),
            &kinds,
            offset,
            limit,
            threads,
            control,
            abort,
        ) {
            Ok(outcome) => render_references(&name, &outcome, filtered, offset, &paths, budget),
            Err(err) => Answer::error(hints::search(&err)),
        }
    };
    run(call, "references", lane, work)
        .await
        .unwrap_or_else(Answer::cancelled)
}
