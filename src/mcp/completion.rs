//! `completion/complete`: completes the `path` variable of the `file:///{+path}` template
//! and the path arguments of the prompts (as a person types them: absolute, or relative to
//! a root), and `find_usages`'s `symbol` from the symbol index (definition names; nothing
//! before a root's index is built). What the client already filled in narrows the values
//! (`context.arguments`): `find_usages`'s `symbol` completes names defined under its
//! `path`, and its `path` completes the files (and the directories on the way to them)
//! that define its `symbol`. `total` is exact, or absent when it was not counted. Values
//! never lead outside the roots, and the user is never asked anything here.

use rmcp::ErrorData as McpError;
use rmcp::model::{CompleteRequestParams, CompleteResult, Reference};
use serde_json::json;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::mcp::session::Session;
use rootgrep_core::complete::{self, Completion};
use rootgrep_core::index::FileIndex;
use rootgrep_core::roots::RootSet;
use rootgrep_core::symbols::index::SymbolIndex;

/// Most values one completion answer carries (the protocol's limit).
const MAX_VALUES: usize = 100;

/// Completes one argument.
pub async fn complete(
    session: &Session,
    roots: &RootSet,
    request: CompleteRequestParams,
) -> Result<CompleteResult, McpError> {
    let wanted = match &request.r#ref {
        Reference::Resource(template) => {
            template.uri == crate::mcp::resources::TEMPLATE && request.argument.name == "path"
        }
        Reference::Prompt(prompt) => {
            matches!(prompt.name.as_str(), "explain_file" | "find_usages")
                && request.argument.name == "path"
        }
        _ => false,
    };
    let prompt_form = matches!(request.r#ref, Reference::Prompt(_));
    let find_usages =
        matches!(&request.r#ref, Reference::Prompt(prompt) if prompt.name == "find_usages");
    // What the client already filled in (`context.arguments`).
    let given = |name: &str| -> Option<String> {
        request
            .context
            .as_ref()
            .and_then(|c| c.get_argument(name))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let symbols = session.live.as_ref().and_then(|live| live.symbols.clone());
    let index = session.live.as_ref().map(|live| live.index.clone());
    let value = request.argument.value.clone();
    let completion = if find_usages && request.argument.name == "symbol" {
        symbol_names(roots, given("path"), value, index, symbols).await?
    } else if find_usages
        && request.argument.name == "path"
        && let Some(symbol) = given("symbol")
    {
        files_defining(roots, symbol, value, index, symbols).await?
    } else if wanted {
        paths(roots, value, prompt_form, index).await?
    } else {
        Completion::default()
    };
    let mut body = json!({
        "values": completion.values,
        "hasMore": completion.has_more,
    });
    // `total` is exact or absent: absent when there are more than the values and they were
    // not counted.
    if !completion.has_more || completion.total > completion.values.len() {
        body["total"] = completion.total.into();
    }
    serde_json::from_value(json!({"resultType": "complete", "completion": body}))
        .map_err(|err| McpError::internal_error(format!("completion failed: {err}"), None))
}

/// `find_usages`'s `symbol`: names defined under the `path` already given (inside the
/// roots), else anywhere.
async fn symbol_names(
    roots: &RootSet,
    path: Option<String>,
    value: String,
    index: Option<Arc<FileIndex>>,
    symbols: Option<Arc<SymbolIndex>>,
) -> Result<Completion, McpError> {
    let narrowed = path.is_some();
    let targets = match path.and_then(|path| inside(roots, &path)) {
        Some(path) => vec![path],
        None => roots.existing(),
    };
    blocking(move || match symbols {
        Some(symbols) if !narrowed => {
            let (values, has_more) = symbols.complete_names(value.trim(), MAX_VALUES);
            // With more names than shown they were not counted: `total` is left out.
            Completion {
                total: values.len(),
                values,
                has_more,
            }
        }
        symbols => names_under(&targets, value.trim(), index.as_deref(), symbols.as_deref()),
    })
    .await
}

/// `find_usages`'s `path` once its `symbol` is given: files and directories that define
/// `symbol`, as a person types them.
async fn files_defining(
    roots: &RootSet,
    symbol: String,
    value: String,
    index: Option<Arc<FileIndex>>,
    symbols: Option<Arc<SymbolIndex>>,
) -> Result<Completion, McpError> {
    let dirs: Vec<PathBuf> = roots
        .roots
        .iter()
        .filter_map(|root| root.canonical.clone())
        .collect();
    blocking(move || paths_defining(&dirs, &symbol, &value, index.as_deref(), symbols.as_deref()))
        .await
}

/// The template's `path` and the prompts' path arguments: paths under the roots.
async fn paths(
    roots: &RootSet,
    value: String,
    prompt_form: bool,
    index: Option<Arc<FileIndex>>,
) -> Result<Completion, McpError> {
    let roots = roots.existing();
    blocking(move || {
        let index = index.as_deref();
        // Template values are absolute paths without their leading '/'; prompt values
        // are typed by people: absolute or not, keep their form. Windows paths have no
        // leading '/' to take off (`C:\x`, and `//srv/share` is a share): the domain
        // takes them as typed.
        if cfg!(windows) {
            let form = if prompt_form {
                complete::Form::Plain
            } else {
                complete::Form::Uri
            };
            complete::complete_in(&roots, &value, form, index)
        } else if prompt_form {
            typed_path(&roots, &value, index)
        } else {
            // A template value is an absolute path without its leading '/'; tolerate
            // one typed with it (the values returned are in the template's form).
            complete::complete_in(
                &roots,
                value.trim_start_matches('/'),
                complete::Form::Uri,
                index,
            )
        }
    })
    .await
}

async fn blocking(
    work: impl FnOnce() -> Completion + Send + 'static,
) -> Result<Completion, McpError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| McpError::internal_error(format!("completion failed: {err}"), None))
}

/// A prompt's path value as a person types it (Unix): absolute (`/home/me/app/src/ma`,
/// and the roots themselves for an empty value, with their leading `/`), or relative to a
/// root (`src/ma`, completed in every directory root, first root first).
#[cfg(not(windows))]
fn typed_path(roots: &[PathBuf], value: &str, index: Option<&FileIndex>) -> Completion {
    if value.is_empty() || value.starts_with('/') {
        let mut completion = complete::complete_in(
            roots,
            value.trim_start_matches('/'),
            complete::Form::Plain,
            index,
        );
        for value in &mut completion.values {
            value.insert(0, '/');
        }
        return completion;
    }
    let mut out = Completion::default();
    for root in roots.iter().filter(|root| root.is_dir()) {
        let Some(prefix) = root
            .to_str()
            .map(|r| format!("{}/", r.trim_start_matches('/')))
        else {
            continue;
        };
        let found = complete::complete_in(
            roots,
            &format!("{prefix}{value}"),
            complete::Form::Plain,
            index,
        );
        out.total += found.total;
        out.has_more |= found.has_more;
        for v in found.values {
            if let Some(rel) = v.strip_prefix(&prefix)
                && !out.values.iter().any(|have| have == rel)
                && out.values.len() < MAX_VALUES
            {
                out.values.push(rel.to_string());
            }
        }
    }
    out.has_more |= out.total > out.values.len();
    out
}

#[cfg(windows)]
fn typed_path(roots: &[PathBuf], value: &str, index: Option<&FileIndex>) -> Completion {
    complete::complete_in(roots, value, complete::Form::Plain, index)
}

/// `path` inside the roots (absolute, or relative to a root), canonical; `None` otherwise
/// (completion never leads outside the roots, and never asks).
fn inside(roots: &RootSet, path: &str) -> Option<PathBuf> {
    rootgrep_core::roots::resolve(path, roots)
        .ok()
        .filter(|resolved| resolved.root.is_some() && resolved.exists)
        .map(|resolved| resolved.path)
}

/// Definitions under `targets` named like `typed` (smart case; a name starting with it,
/// else resembling it), distinct names sorted ignoring case, at most [`MAX_VALUES`], with
/// their exact count.
fn names_under(
    targets: &[PathBuf],
    typed: &str,
    files: Option<&FileIndex>,
    symbols: Option<&SymbolIndex>,
) -> Completion {
    if typed.is_empty() || targets.is_empty() {
        return Completion::default();
    }
    let found = definitions(targets, typed, false, files, symbols);
    // Ordered as the index's completion orders them: ignoring case first, then as written.
    let names: std::collections::BTreeSet<(String, String)> = found
        .into_iter()
        .map(|located| (located.def.name.to_lowercase(), located.def.name))
        .collect();
    finish(names.into_iter().map(|(_, name)| name).collect())
}

/// The files defining `symbol` (exactly) under the directory roots, as completion values
/// of the path typed so far: relative to the root when `typed` is relative, absolute when
/// it starts with `/`; a file in a directory below the typed one is offered as that
/// directory (`src/parser/`), so each value is one step further, as paths are completed.
fn paths_defining(
    roots: &[PathBuf],
    symbol: &str,
    typed: &str,
    files: Option<&FileIndex>,
    symbols: Option<&SymbolIndex>,
) -> Completion {
    let found = definitions(roots, symbol, true, files, symbols);
    let absolute = typed.starts_with('/') || Path::new(typed).is_absolute();
    let is_sep = |c: char| c == '/' || (cfg!(windows) && c == '\\');
    let dir = typed.rfind(is_sep).map_or("", |at| &typed[..=at]);
    let mut values: Vec<String> = Vec::new();
    for located in found {
        let shown = if absolute {
            Some(located.path.clone())
        } else {
            roots
                .iter()
                .find_map(|root| located.path.strip_prefix(root).ok())
                .map(Path::to_path_buf)
        };
        let Some(text) = shown.and_then(|p| p.to_str().map(str::to_string)) else {
            continue;
        };
        if !text.starts_with(typed) {
            continue;
        }
        let rest = &text[dir.len()..];
        let value = match rest.find(is_sep) {
            Some(at) => format!("{dir}{}", &rest[..=at]),
            None => text.clone(),
        };
        if !values.contains(&value) {
            values.push(value);
        }
    }
    values.sort();
    finish(values)
}

/// The symbol search (`symbols` tool's domain code) for completion: from the symbol index
/// when it can vouch, parsing otherwise; one thread, no pool slot (a completion is asked
/// as a person types, and its answer is at most a page).
fn definitions(
    targets: &[PathBuf],
    name: &str,
    exact: bool,
    files: Option<&FileIndex>,
    symbols: Option<&SymbolIndex>,
) -> Vec<rootgrep_core::symbols::find::Located> {
    let query = rootgrep_core::symbols::find::SymbolQuery {
        query: name.to_string(),
        exact,
        kinds: Vec::new(),
        langs: Vec::new(),
        offset: 0,
        limit: COMPLETION_DEFINITIONS,
        threads: 1,
    };
    let control = rootgrep_core::walk::Control::default();
    let abort = std::sync::atomic::AtomicUsize::new(0);
    rootgrep_core::symbols::find::find_symbols_with(
        &query,
        targets,
        files.map(rootgrep_core::search::Indexes::files),
        symbols,
        &control,
        &abort,
    )
    .map(|outcome| {
        outcome
            .entries
            .into_iter()
            .map(|(_, located)| located)
            .collect()
    })
    .unwrap_or_default()
}

/// Most definitions one completion looks at (distinct names or files are fewer).
const COMPLETION_DEFINITIONS: usize = 2_000;

/// At most [`MAX_VALUES`] of `values`, with their exact count.
fn finish(mut values: Vec<String>) -> Completion {
    let total = values.len();
    values.truncate(MAX_VALUES);
    Completion {
        has_more: total > values.len(),
        total,
        values,
    }
}
