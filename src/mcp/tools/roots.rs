//! The `list_roots` tool: the roots in force (where they came from, whether each is still
//! in place, its watch and index state), the `--confine` boundary and the session's grants
//! and refusals, paged. Rendering within the budget is [`crate::mcp::render::roots`].

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

use super::context::Call;
use super::schema::{lenient, read_only_annotations, schema_of};
use crate::mcp::render::Answer;
use crate::mcp::render::roots::{
    AccessOut, MAX_LISTED, RootOut, RootsOut, bounded_notes, fit_roots, symbols_line,
};
use crate::roots::{file_uri_from_path, path_text};

/// The `list_roots` tool as `tools/list` shows it.
pub fn tool() -> Tool {
    Tool::new(
        "list_roots",
        "List the workspace roots this server may access (and where they came from: the \
         client, the command line, or the working directory), the --confine boundary, \
         and the directories the user granted or refused during this session. Roots are \
         paged with head_limit/offset (default 100).",
        schema_of::<ListRootsArgs>(),
    )
    .with_raw_output_schema(schema_of::<RootsOut>())
    .with_annotations(read_only_annotations("List workspace roots"))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRootsArgs {
    /// Roots to return (default 100; at most 1,000; the output budget applies too).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 1, max = MAX_ROOTS_SHOWN))]
    pub head_limit: Option<usize>,
    /// Roots to skip first (for paging; default 0).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = MAX_ROOTS_OFFSET))]
    pub offset: Option<usize>,
}

/// `list_roots`' index state of a root that is a file: the file index keeps directories
/// only (one file is read at no cost, so it is never served stale from an index).
const FILE_ROOT_INDEX: &str = "not indexed: a file root is read directly by every search";
/// The same for the symbol index: a file root is parsed when a symbol tool asks.
const FILE_ROOT_SYMBOLS: &str = "not indexed: a file root is parsed on demand";
/// Most roots one list_roots answer holds.
const MAX_ROOTS_SHOWN: usize = 1000;
/// Largest `offset` the schema admits (a larger one would only skip every root).
const MAX_ROOTS_OFFSET: usize = 1_000_000;

pub async fn list_roots(call: &Call<'_>, args: ListRootsArgs) -> Answer {
    let roots = &call.roots;
    let offset = args.offset.unwrap_or(0);
    let limit = args.head_limit.unwrap_or(100).clamp(1, MAX_ROOTS_SHOWN);
    let grants = call.session.grants.snapshot();
    let (watch_status, index_status) = match &call.session.live {
        Some(live) => (live.watcher.status(), live.index.status()),
        None => (Vec::new(), Vec::new()),
    };
    let symbol_status = call
        .session
        .live
        .as_ref()
        .and_then(|live| live.symbols.as_ref())
        .map(|symbols| symbols.status())
        .unwrap_or_default();
    let live_on = call.session.live.is_some();
    // Whether each root shown is still in place — there at all (a root deleted since it was
    // chosen is missing, not as it was then) and not swapped for a symlink: asked of the
    // disk now, off the async workers. One entry per root shown, in order (`None` for a
    // root that never resolved or is in place).
    let shown: Vec<Option<std::path::PathBuf>> = roots
        .roots
        .iter()
        .skip(offset)
        .take(limit)
        .map(|root| root.canonical.clone())
        .collect();
    let displaced: Vec<Option<crate::roots::Displaced>> = match super::blocking(move || {
        shown
            .into_iter()
            .map(|root| crate::roots::in_place(&root?).err())
            .collect()
    })
    .await
    {
        Ok(displaced) => displaced,
        Err(answer) => return answer,
    };
    let watch_of = |path: &std::path::Path| -> String {
        if !live_on {
            return "off".to_string();
        }
        match watch_status.iter().find(|(root, _)| root == path) {
            Some((_, crate::watch::RootStatus::Watching)) => "watching".to_string(),
            Some((_, crate::watch::RootStatus::Starting)) | None => "starting".to_string(),
            Some((_, crate::watch::RootStatus::Failed(why))) => format!("failed: {why}"),
        }
    };
    let index_of = |path: &std::path::Path| -> String {
        if !live_on {
            return "off".to_string();
        }
        match index_status.iter().find(|status| status.root == path) {
            Some(status) => match &status.state {
                // The counts say how the index kept up: full builds (walks of the whole
                // root) and changes applied without one.
                crate::index::IndexState::Fresh => format!(
                    "fresh ({} files, built {}×, {} updates applied)",
                    status.files, status.builds, status.updates
                ),
                crate::index::IndexState::Building => "building".to_string(),
                crate::index::IndexState::Stale => "stale (rebuilding)".to_string(),
                crate::index::IndexState::Waiting => "waiting for the watch".to_string(),
                crate::index::IndexState::Unavailable(why) => format!("unavailable: {why}"),
            },
            None => "waiting for the watch".to_string(),
        }
    };
    let symbols_of = |path: &std::path::Path| -> String {
        if !live_on {
            return "off".to_string();
        }
        match symbol_status.iter().find(|status| status.root == path) {
            Some(status) => symbols_line(status),
            None => "waiting for the file index".to_string(),
        }
    };
    let out = RootsOut {
        source: roots.source.label().to_string(),
        total: roots.roots.len(),
        truncated: false,
        next_offset: None,
        roots: roots
            .roots
            .iter()
            .skip(offset)
            .take(limit)
            .zip(displaced)
            .map(|(root, displaced)| {
                let present = root.canonical.is_some() && displaced.is_none();
                (root, displaced, present)
            })
            .map(|(root, displaced, present)| RootOut {
                path: path_text(root.effective()),
                uri: file_uri_from_path(root.effective()),
                // A client's display name is free text: keep its start.
                name: root
                    .name
                    .as_ref()
                    .map(|name| match name.char_indices().nth(200) {
                        Some((cut, _)) => format!("{}…", &name[..cut]),
                        None => name.clone(),
                    }),
                exists: present,
                unavailable: displaced
                    .filter(|displaced| *displaced != crate::roots::Displaced::Missing)
                    .map(|displaced| {
                        format!(
                            "{displaced}; nothing below it is listed, searched or read until \
                             it is a directory again"
                        )
                    }),
                kind: if root.is_file { "file" } else { "directory" }.to_string(),
                watched: present && watch_of(root.effective()) == "watching",
                watch: if !present && live_on {
                    "off: the root does not exist".to_string()
                } else {
                    watch_of(root.effective())
                },
                index: if !present && live_on {
                    "off: the root does not exist".to_string()
                } else if root.is_file && live_on {
                    FILE_ROOT_INDEX.to_string()
                } else {
                    index_of(root.effective())
                },
                symbols: if !present && live_on {
                    "off: the root does not exist".to_string()
                } else if root.is_file && live_on {
                    FILE_ROOT_SYMBOLS.to_string()
                } else {
                    symbols_of(root.effective())
                },
            })
            .collect(),
        confine: call
            .session
            .config
            .confine
            .dirs
            .iter()
            .map(|d| path_text(d))
            .collect(),
        grants: grants
            .granted
            .iter()
            .take(MAX_LISTED)
            .map(|(path, access)| AccessOut {
                path: path_text(path),
                access: access.verb().to_string(),
            })
            .collect(),
        refusals: grants
            .refused
            .iter()
            .take(MAX_LISTED)
            .map(|(path, access)| AccessOut {
                path: path_text(path),
                access: access.verb().to_string(),
            })
            .collect(),
        notes: bounded_notes(call.session.roots_notes()),
    };
    let totals = (
        grants.granted.len(),
        grants.refused.len(),
        out.confine.len(),
    );
    fit_roots(out, offset, totals, call.budget())
}
