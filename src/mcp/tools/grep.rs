//! The `grep` tool: its description, turning its arguments into a [`GrepQuery`], and
//! the handler that runs it on the search pool and renders the result
//! ([`crate::mcp::render::grep`]), with each match's enclosing definition on request.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::Tool;

use super::args::{
    GREP_DEFAULT_LIMIT, GrepArgs, MAX_CONTEXT, MAX_FILESIZE, Mode, OneOrMany, Sort, checked_offset,
    head_limit,
};
use super::context::Call;
use super::pool::{free_later, known_total, lane_for, run, targets};
use super::schema::{read_only_annotations, schema_of};
use crate::mcp::hints;
use crate::mcp::render::Answer;
use crate::mcp::render::grep::{GrepOut, render_grep};
use rootgrep_core::search::{self, CaseMode, GrepEntries, GrepQuery, OutputMode, SortBy};
use rootgrep_core::symbols;
use rootgrep_core::walk::Control;

/// The `grep` tool as `tools/list` shows it.
pub fn tool() -> Tool {
    Tool::new(
        "grep",
        "Regex search of file contents (ripgrep), gitignore-aware: matching files, \
         lines by file with context, or counts. scope names each match's enclosing \
         definition; with it, lines already shown this session are one \"unchanged since \
         shown\" line (repeat: true shows them).",
        schema_of::<GrepArgs>(),
    )
    .with_raw_output_schema(schema_of::<GrepOut<'static>>())
    .with_annotations(read_only_annotations("Search file contents"))
}

pub(crate) fn grep_query(args: &GrepArgs, budget: usize) -> Result<GrepQuery, Answer> {
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
pub(crate) fn scope_needs_content(mode: &str) -> Answer {
    Answer::error(format!(
        "`scope` names the definition around each matching line, so it needs \
         output_mode \"content\" (given: \"{mode}\"); drop output_mode or set it to \"content\""
    ))
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
    if let Err(err) = search::build_matcher(&query) {
        return Answer::error(hints::search(&err));
    }
    let targets = match targets(call, args.path.as_ref()).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let numbers = args.line_numbers.unwrap_or(true);
    let paths = call.paths();
    let recall = call.recall(args.repeat);
    let scope = query.mode == OutputMode::Content && args.scope.unwrap_or(false);
    let indexes = call.search_indexes();
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
    )
    .await;
    // Only a grep of a few small files is quick: one served by the index still reads
    // every file.
    let lane = lane_for(&targets, false).await;
    let work = move |control: &Control, threads: usize| {
        let query = GrepQuery { threads, ..query };
        // The index answers only what it can answer exactly; the rest walks the disk.
        let outcome = search::grep_with(&query, &targets, indexes.get(), control);
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(err) => return Answer::error(hints::search(&err)),
        };
        let scopes = match (&outcome.entries, scope) {
            (GrepEntries::Matches(matches), true) => {
                let entries: Vec<(&Path, u64)> =
                    matches.iter().map(|m| (&*m.path, m.line)).collect();
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
        let context = (scopes.as_slice(), &recall);
        let answer =
            render_grep(&outcome, context, query.offset, numbers, &paths, budget).bounded(budget);
        if outcome.entries.len() > 1000 {
            free_later(outcome);
        }
        answer
    };
    let on_cancel = move || abort_on_cancel.store(1, Ordering::Relaxed);
    match run(call, "matches", lane, total, on_cancel, work).await {
        Some(answer) => answer,
        None => Answer::cancelled(),
    }
}
