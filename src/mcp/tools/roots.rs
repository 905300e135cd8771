//! The `list_roots` tool: the roots in force (where they came from, whether each is still
//! in place, its watch and index state), the `--confine` boundary and the session's grants
//! and refusals, paged. Rendering within the budget is [`crate::mcp::render::roots`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

use super::context::Call;
use super::schema::{lenient, read_only_annotations, schema_of};
use crate::mcp::render::Answer;
use crate::mcp::render::roots::{
    AccessOut, MAX_LISTED, RootOut, RootsOut, bounded_notes, content_line, fit_roots, history_line,
    search_line, symbols_line,
};
use rootgrep_core::access::Access;
use rootgrep_core::index::{IndexState, RootIndexStatus};
use rootgrep_core::roots::{Displaced, Root, path_text};
use rootgrep_core::symbols::index::SymbolStatus;
use rootgrep_core::watch::RootStatus;

/// The `list_roots` tool as `tools/list` shows it.
pub fn tool() -> Tool {
    Tool::new(
        "list_roots",
        "The workspace roots, their watch and index state, --confine, and the paths \
         the user granted or refused.",
        schema_of::<ListRootsArgs>(),
    )
    .with_raw_output_schema(schema_of::<RootsOut>())
    .with_annotations(read_only_annotations("List workspace roots"))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRootsArgs {
    /// Most roots (default 100; at most 1,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 1, max = MAX_ROOTS_SHOWN))]
    pub head_limit: Option<usize>,
    /// For paging.
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = MAX_ROOTS_OFFSET))]
    pub offset: Option<usize>,
}

/// `list_roots`' index state of a root that is a file: the file index keeps directories
/// only (one file is read at no cost, so it is never served stale from an index).
const FILE_ROOT_INDEX: &str = "not indexed: a file root is read directly by every search";
/// The same for the symbol index: a file root is parsed when a symbol tool asks.
const FILE_ROOT_SYMBOLS: &str = "not indexed: a file root is parsed on demand";
/// The same for the search index: a file root is read when search asks.
const FILE_ROOT_SEARCH: &str = "not indexed: a file root is read on demand";
/// The same for the history: a file root has no history of its own.
const FILE_ROOT_HISTORY: &str = "none: a file root";
/// Most roots one list_roots answer holds.
const MAX_ROOTS_SHOWN: usize = 1000;
/// Largest `offset` the schema admits (a larger one would only skip every root).
const MAX_ROOTS_OFFSET: usize = 1_000_000;

pub async fn list_roots(call: &Call<'_>, args: ListRootsArgs) -> Answer {
    let roots = &call.roots;
    let offset = args.offset.unwrap_or(0);
    let limit = args.head_limit.unwrap_or(100).clamp(1, MAX_ROOTS_SHOWN);
    let page = || roots.roots.iter().skip(offset).take(limit);
    let grants = call.session.grants.snapshot();
    let live = LiveStatus::of(call);
    let displaced = match displaced(page().map(|root| root.canonical.clone()).collect()).await {
        Ok(displaced) => displaced,
        Err(answer) => return answer,
    };
    let out = RootsOut {
        source: roots.source.label().to_string(),
        total: roots.roots.len(),
        next_offset: None,
        roots: page()
            .zip(displaced)
            .map(|(root, displaced)| root_out(root, displaced, &live))
            .collect(),
        confine: call
            .session
            .config
            .confine
            .dirs
            .iter()
            .map(|d| path_text(d))
            .collect(),
        grants: access_out(&grants.granted),
        refusals: access_out(&grants.refused),
        notes: bounded_notes(call.session.roots_notes()),
    };
    let totals = (
        grants.granted.len(),
        grants.refused.len(),
        out.confine.len(),
    );
    fit_roots(out, offset, totals, call.budget())
}

/// Whether each root shown is still in place: there at all (a root deleted since it was
/// chosen is missing, not as it was then) and not swapped for a symlink, asked of the disk
/// now, off the async workers. One entry per root, in order (`None` for a root that never
/// resolved or is in place).
async fn displaced(shown: Vec<Option<PathBuf>>) -> Result<Vec<Option<Displaced>>, Answer> {
    super::blocking(move || {
        shown
            .into_iter()
            .map(|root| rootgrep_core::roots::in_place(&root?).err())
            .collect()
    })
    .await
}

/// What the live layer says of each root: its watch, file index and symbol index, as
/// taken when the call started (all "off" without a live layer).
struct LiveStatus {
    on: bool,
    watch: Vec<(PathBuf, RootStatus)>,
    index: Vec<RootIndexStatus>,
    symbols: Vec<SymbolStatus>,
    search: Vec<rootgrep_core::ranked::RankedStatus>,
    /// `None`: no content index (`--no-content-index`).
    content: Option<Vec<rootgrep_core::content::index::ContentStatus>>,
    /// `None`: no history (`--no-history`).
    history: Option<Vec<rootgrep_core::history::HistoryStatus>>,
}

impl LiveStatus {
    fn of(call: &Call<'_>) -> LiveStatus {
        let live = call.session.live.as_ref();
        LiveStatus {
            on: live.is_some(),
            watch: live.map(|live| live.watcher.status()).unwrap_or_default(),
            index: live.map(|live| live.index.status()).unwrap_or_default(),
            symbols: live
                .and_then(|live| live.symbols.as_ref())
                .map(|symbols| symbols.status())
                .unwrap_or_default(),
            search: live
                .and_then(|live| live.search.as_ref())
                .map(|search| search.status())
                .unwrap_or_default(),
            content: live
                .and_then(|live| live.content.as_ref())
                .map(|content| content.status()),
            history: live
                .and_then(|live| live.history.as_ref())
                .map(|history| history.status()),
        }
    }

    fn history_of(&self, path: &Path) -> String {
        let Some(history) = self.history.as_ref().filter(|_| self.on) else {
            return "off".to_string();
        };
        match history.iter().find(|status| status.root == path) {
            Some(status) => history_line(status),
            None => "waiting".to_string(),
        }
    }

    fn content_of(&self, path: &Path) -> String {
        let Some(content) = self.content.as_ref().filter(|_| self.on) else {
            return "off".to_string();
        };
        match content.iter().find(|status| status.root == path) {
            Some(status) => content_line(status),
            None => "waiting for the file index".to_string(),
        }
    }

    fn search_of(&self, path: &Path) -> String {
        if !self.on {
            return "off".to_string();
        }
        match self.search.iter().find(|status| status.root == path) {
            Some(status) => search_line(status),
            None => "waiting for the file index".to_string(),
        }
    }

    fn watch_of(&self, path: &Path) -> String {
        if !self.on {
            return "off".to_string();
        }
        match self.watch.iter().find(|(root, _)| root == path) {
            Some((_, RootStatus::Watching)) => "watching".to_string(),
            Some((_, RootStatus::Starting)) | None => "starting".to_string(),
            Some((_, RootStatus::Failed(why))) => format!("failed: {why}"),
        }
    }

    fn index_of(&self, path: &Path) -> String {
        if !self.on {
            return "off".to_string();
        }
        match self.index.iter().find(|status| status.root == path) {
            Some(status) => match &status.state {
                // The counts say how the index kept up: full builds (walks of the whole
                // root) and changes applied without one.
                IndexState::Fresh => format!(
                    "fresh ({} files, built {}×, {} updates applied){}",
                    status.files,
                    status.builds,
                    status.updates,
                    resumed_note(status.last_build.as_ref())
                ),
                IndexState::Building => "building".to_string(),
                IndexState::Stale => "stale (rebuilding)".to_string(),
                IndexState::Waiting => "waiting for the watch".to_string(),
                IndexState::Unavailable(why) => format!("unavailable: {why}"),
            },
            None => "waiting for the watch".to_string(),
        }
    }

    fn symbols_of(&self, path: &Path) -> String {
        if !self.on {
            return "off".to_string();
        }
        match self.symbols.iter().find(|status| status.root == path) {
            Some(status) => symbols_line(status),
            None => "waiting for the file index".to_string(),
        }
    }
}

/// How the first build came about when it started from the stored file list (a restart):
/// the directories it listed again, of all, and how long it took.
fn resumed_note(build: Option<&rootgrep_core::index::BuildInfo>) -> String {
    let Some((info, listed)) = build.and_then(|info| Some((info, info.resumed?))) else {
        return String::new();
    };
    format!(
        "; from the store: {listed} of {} directories listed again in {:.1} s",
        info.dirs,
        info.elapsed.as_secs_f64()
    )
}

/// One root as `list_roots` shows it: where it is, whether it is in place, and the state
/// of its watch and indexes.
fn root_out(root: &Root, displaced: Option<Displaced>, live: &LiveStatus) -> RootOut {
    let present = root.canonical.is_some() && displaced.is_none();
    let path = root.effective();
    let gone = !present && live.on;
    let file_root = root.is_file && live.on;
    let watch = live.watch_of(path);
    RootOut {
        path: path_text(path),
        // A client's display name is free text: keep its start.
        name: root
            .name
            .as_ref()
            .map(|name| match name.char_indices().nth(200) {
                Some((cut, _)) => format!("{}…", &name[..cut]),
                None => name.clone(),
            }),
        // Not there at all; a root swapped for a symlink is `unavailable` instead.
        missing: root.canonical.is_none() || displaced == Some(Displaced::Missing),
        unavailable: displaced
            .filter(|displaced| *displaced != Displaced::Missing)
            .map(|displaced| {
                format!(
                    "{displaced}; nothing below it is listed, searched or read until it is a \
                     directory again"
                )
            }),
        file: root.is_file,
        watch: if gone { ROOT_GONE.to_string() } else { watch },
        index: if gone {
            ROOT_GONE.to_string()
        } else if file_root {
            FILE_ROOT_INDEX.to_string()
        } else {
            live.index_of(path)
        },
        symbols: if gone {
            ROOT_GONE.to_string()
        } else if file_root {
            FILE_ROOT_SYMBOLS.to_string()
        } else {
            live.symbols_of(path)
        },
        search: if gone {
            ROOT_GONE.to_string()
        } else if file_root {
            FILE_ROOT_SEARCH.to_string()
        } else {
            live.search_of(path)
        },
        content: if gone {
            ROOT_GONE.to_string()
        } else if file_root {
            FILE_ROOT_SEARCH.to_string()
        } else {
            live.content_of(path)
        },
        history: if gone {
            ROOT_GONE.to_string()
        } else if file_root {
            FILE_ROOT_HISTORY.to_string()
        } else {
            live.history_of(path)
        },
    }
}

/// The state of a root's watch and indexes when the root is not there.
const ROOT_GONE: &str = "off: the root does not exist";

/// The first [`MAX_LISTED`] grants or refusals.
fn access_out(paths: &BTreeSet<(PathBuf, Access)>) -> Vec<AccessOut> {
    paths
        .iter()
        .take(MAX_LISTED)
        .map(|(path, access)| AccessOut {
            path: path_text(path),
            access: access.verb().to_string(),
        })
        .collect()
}
