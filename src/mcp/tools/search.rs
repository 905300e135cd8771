//! `search` (PRODUCT §14): ranked search for a question in words. Its arguments and
//! handler; the work is `rootgrep_core::ranked`, run on the process-wide search pool with progress
//! and cancellation like the other search tools, and rendered by
//! `crate::mcp::render::search`.

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::OneOrMany;
use super::pool;
use super::{Call, lenient, read_only_annotations, schema_of};
use crate::mcp::hints;
use crate::mcp::render::Answer;
use crate::mcp::render::search::{SearchOut, render_search};
use crate::mcp::sample::{self, Expansion};
use rootgrep_core::ranked::{self, RankedRequest};
use rootgrep_core::symbols::lang::Lang;
use rootgrep_core::walk::Control;

pub const SEARCH_DEFAULT_LIMIT: usize = 10;
/// Largest `head_limit`; larger values are clamped.
pub const MAX_LIMIT: usize = 100;
/// Largest `offset` (ranks deeper than this tell nothing).
pub const MAX_OFFSET: usize = 1_000;

pub fn tool() -> Tool {
    Tool::new(
        "search",
        "Ranked search for a question in words (a bug report, an error): the \
         definitions most likely to answer it, with excerpts. Use it when you do not know \
         the name (grep: text; symbols: a name). Lines already shown this session \
         are one \"unchanged since shown\" line (repeat: true shows them).",
        schema_of::<SearchArgs>(),
    )
    .with_raw_output_schema(schema_of::<SearchOut>())
    .with_annotations(read_only_annotations("Ranked code search"))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// The question: words, identifiers, paths, an error. A leading
    /// "area/path: " favours that path.
    #[serde(alias = "q", alias = "question", alias = "pattern")]
    pub query: String,
    /// File(s) or directories (default: the roots).
    #[serde(default, alias = "file_path", alias = "paths")]
    pub path: Option<OneOrMany>,
    /// Language(s): rust, c, cpp, python, javascript, typescript, tsx, go, java.
    #[serde(default, alias = "lang")]
    pub language: Option<OneOrMany>,
    /// Kind(s): function, class, method, struct, type…, or text (between definitions).
    #[serde(default)]
    pub kind: Option<OneOrMany>,
    /// Most results (default 10; at most 100).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_LIMIT))]
    pub head_limit: Option<usize>,
    /// For paging.
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_OFFSET))]
    pub offset: Option<usize>,
    /// Repeat lines shown before.
    #[serde(default)]
    pub repeat: Option<bool>,
    /// Add the host's model's code terms.
    #[serde(default)]
    pub expand: Option<bool>,
}

/// Whether the search index of every target's root is ready.
fn indexed(index: &ranked::RankedIndex, targets: &[std::path::PathBuf]) -> bool {
    let status = index.status();
    targets.iter().all(|t| {
        (status.iter()).any(|s| t.starts_with(&s.root) && s.state == ranked::RankedState::Ready)
    })
}

fn list(value: Option<OneOrMany>) -> Vec<String> {
    value.map(OneOrMany::into_vec).unwrap_or_default()
}

pub async fn search(call: &Call<'_>, args: SearchArgs) -> Answer {
    if args.query.trim().is_empty() {
        return Answer::error("`query` is empty; describe what you are looking for");
    }
    let offset = args.offset.unwrap_or(0);
    if offset > MAX_OFFSET {
        return Answer::error(format!(
            "offset {offset} is too large (search pages up to offset {MAX_OFFSET}); \
             reword the query or narrow it with path, language or kind"
        ));
    }
    let limit = match args.head_limit.unwrap_or(SEARCH_DEFAULT_LIMIT) {
        0 => MAX_LIMIT,
        n => n.min(MAX_LIMIT),
    };
    let kinds = list(args.kind);
    if let Some(bad) = kinds.iter().find(|k| ranked::kind_ids(k).is_none()) {
        return Answer::error(format!(
            "unknown kind {}; use one of: function, class, {}",
            rootgrep_core::quote::echo(bad),
            ranked::kind_names()
        ));
    }
    let mut langs = Vec::new();
    for name in list(args.language) {
        match Lang::from_name(&name) {
            Some(lang) => langs.push(lang),
            None => {
                return Answer::error(format!(
                    "unknown language {}; supported: {}",
                    rootgrep_core::quote::echo(&name),
                    rootgrep_core::symbols::find::supported_names()
                ));
            }
        }
    }
    let targets = match pool::resolve_targets(call, list(args.path)).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let asked = args.expand.unwrap_or(call.session.config.search_expand);
    let expansion = sample::expand(
        call.session,
        call.ctx,
        call.modern.is_some(),
        asked,
        &args.query,
    )
    .await;
    if let Expansion::Cancelled = expansion {
        return Answer::cancelled();
    }
    let request = RankedRequest {
        query: expansion.query(&args.query),
        kinds,
        langs,
        offset,
        limit,
        threads: 1,
    };
    let roots = call.roots.existing();
    let live = call.session.live.as_ref();
    let files = call.search_indexes();
    let symbols = live.and_then(|l| l.symbols.clone());
    let index = live.and_then(|l| l.search.clone());
    // From the index: quick; without one, the pre-filter greps the tree.
    let indexed = index
        .as_deref()
        .is_some_and(|index| indexed(index, &targets));
    let lane = pool::lane_for(&targets, indexed).await;
    let budget = call.budget();
    let paths = call.paths();
    let recall = call.recall(args.repeat);
    let work = move |control: &Control, threads: usize| {
        let request = RankedRequest { threads, ..request };
        match ranked::rank(
            &request,
            &targets,
            &roots,
            files.get(),
            symbols.as_deref(),
            index.as_deref(),
            control,
        ) {
            Ok(outcome) => render_search(&request, &outcome, &expansion, (&paths, &recall), budget),
            Err(err) => Answer::error(hints::search(&err)),
        }
    };
    pool::run(call, "files", lane, None, || {}, work)
        .await
        .unwrap_or_else(Answer::cancelled)
}
