//! The directory tools, `list_directory` and `directory_tree`: their arguments and limits,
//! the directories they work on (the named path or every root), and the handlers.
//! `directory_tree` reports progress (entries read) and stops when cancelled; the listing
//! is rendered by [`crate::mcp::render::dirs`].

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::context::{Call, blocking, blocking_stoppable, resolve_checked};
use super::schema::{lenient, read_only_annotations, schema_of};
use crate::mcp::failure::Reason;
use crate::mcp::hints;
use crate::mcp::progress::{Count, Reporter, thousands};
use crate::mcp::render::{Answer, ENVELOPE, fit_escaped};
use rootgrep_core::access::Access;
use rootgrep_core::files::{list, tree};
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::roots::path_text;

use crate::mcp::render::dirs::{ListOut, render_listings};

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "list_directory",
            "One directory level (default: each root): directories end in /, links \
             show targets, ignored entries are marked.",
            schema_of::<ListArgs>(),
        )
        .with_raw_output_schema(schema_of::<ListOut>())
        .with_annotations(read_only_annotations("List directory")),
        Tool::new(
            "directory_tree",
            "An indented tree of a directory (default: each root), gitignore-aware, \
             max_depth levels (default 3), at most head_limit entries (default 500).",
            schema_of::<TreeArgs>(),
        )
        .with_annotations(read_only_annotations("Directory tree")),
    ]
}

/// The directories a directory tool works on: the named path, or every root.
pub(crate) async fn target_dirs(
    call: &Call<'_>,
    path: Option<&str>,
) -> Result<Vec<PathBuf>, Answer> {
    match path {
        Some(path) => {
            let resolved = resolve_checked(call, path, Access::Read).await?;
            if !resolved.exists {
                let shown = path_text(&resolved.path);
                let text = format!("{}: no such directory", escape_for_display(&shown));
                return Err(Answer::refused(Reason::NotFound, text).about(path));
            }
            Ok(vec![resolved.path])
        }
        None => {
            if let Some(answer) = super::no_roots(&call.roots) {
                return Err(answer);
            }
            let dirs: Vec<PathBuf> = call
                .roots
                .roots
                .iter()
                .filter(|root| !root.is_file)
                .filter_map(|root| root.canonical.clone())
                .collect();
            // File roots have no entries to list: they are skipped here (their files are
            // read with read_file, found by grep and glob). With nothing else, say so.
            if dirs.is_empty() {
                let files = call.roots.roots.iter().filter(|root| root.is_file).count();
                let text = if files == call.roots.roots.len() {
                    format!(
                        "every workspace root is a file, not a directory ({}): read it with \
                         read_file or search it with grep, or pass a directory path",
                        hints::roots(&call.roots)
                    )
                } else {
                    format!(
                        "no workspace root is an existing directory ({}); pass a path",
                        hints::roots(&call.roots)
                    )
                };
                return Err(Answer::refused(Reason::NoRoots, text));
            }
            Ok(dirs)
        }
    }
}

// ---------------------------------------------------------------------------------------
// list_directory

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Default: each root.
    #[serde(default, alias = "file_path")]
    pub path: Option<String>,
    /// File sizes.
    #[serde(default)]
    pub sizes: Option<bool>,
    /// name (default, directories first), size or modified (largest, newest first).
    #[serde(default)]
    pub sort: Option<ListSort>,
    /// Include hidden entries (default true).
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Most entries (default 500; 0: as many as fit; at most 100,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = MAX_HEAD_LIMIT))]
    pub head_limit: Option<usize>,
    /// For paging.
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = MAX_LIST_OFFSET))]
    pub offset: Option<usize>,
}

/// Largest `head_limit` of list_directory and directory_tree (larger values are clamped).
pub const MAX_HEAD_LIMIT: usize = 100_000;
/// Largest list_directory `offset` (larger values are refused).
pub const MAX_LIST_OFFSET: usize = 100_000_000;
/// Deepest directory_tree `max_depth` (larger values are clamped).
pub const MAX_TREE_DEPTH: usize = 64;

impl ListArgs {
    /// `(offset, limit)` after the documented bounds.
    fn page(&self) -> Result<(usize, usize), Answer> {
        let offset = self.offset.unwrap_or(0);
        if offset > MAX_LIST_OFFSET {
            return Err(Answer::error(format!(
                "offset {offset} is above the maximum of {MAX_LIST_OFFSET}"
            )));
        }
        let limit = match self.head_limit.unwrap_or(500) {
            0 => MAX_HEAD_LIMIT,
            n => n.min(MAX_HEAD_LIMIT),
        };
        Ok((offset, limit))
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ListSort {
    Name,
    Size,
    Modified,
}

pub async fn list_directory(call: &Call<'_>, args: ListArgs) -> Answer {
    let (offset, limit) = match args.page() {
        Ok(page) => page,
        Err(answer) => return answer,
    };
    let dirs = match target_dirs(call, args.path.as_deref()).await {
        Ok(dirs) => dirs,
        Err(answer) => return answer,
    };
    let options = list::ListOptions {
        sizes: args.sizes.unwrap_or(false),
        sort: match args.sort.unwrap_or(ListSort::Name) {
            ListSort::Name => list::SortBy::Name,
            ListSort::Size => list::SortBy::Size,
            ListSort::Modified => list::SortBy::Modified,
        },
        hidden: args.hidden.unwrap_or(true),
        offset,
        limit,
    };
    let first = options.offset;
    let listings = match blocking(move || {
        dirs.iter()
            .map(|dir| list::list_directory(dir, &options))
            .collect::<Result<Vec<_>, _>>()
    })
    .await
    {
        Ok(Ok(listings)) => listings,
        Ok(Err(err)) => return Answer::failed(&err),
        Err(answer) => return answer,
    };
    let (text, out) = render_listings(&listings, first, &call.paths(), call.budget());
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

// ---------------------------------------------------------------------------------------
// directory_tree

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeArgs {
    /// Default: each root.
    #[serde(default, alias = "file_path")]
    pub path: Option<String>,
    /// Levels shown (default 3; at most 64).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = MAX_TREE_DEPTH))]
    pub max_depth: Option<usize>,
    /// Most entries (default 500; 0: as many as fit; at most 100,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = MAX_HEAD_LIMIT))]
    pub head_limit: Option<usize>,
    /// Hidden entries too.
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Show what .gitignore/.ignore skip.
    #[serde(default)]
    pub no_ignore: Option<bool>,
}

pub async fn directory_tree(call: &Call<'_>, args: TreeArgs) -> Answer {
    let dirs = match target_dirs(call, args.path.as_deref()).await {
        Ok(dirs) => dirs,
        Err(answer) => return answer,
    };
    let share = call.budget() / dirs.len().max(1);
    let options = tree::TreeOptions {
        max_depth: args.max_depth.unwrap_or(3).min(MAX_TREE_DEPTH),
        limit: match args.head_limit.unwrap_or(500) {
            0 => MAX_HEAD_LIMIT,
            n => n.min(MAX_HEAD_LIMIT),
        },
        max_bytes: share.saturating_sub(400).max(256),
        hidden: args.hidden.unwrap_or(false),
        no_ignore: args.no_ignore.unwrap_or(false),
        depth_mark: hints::depth_mark,
    };
    // A large tree takes a while: with a progress token, the entries read so far.
    let count = Arc::new(Count::default());
    let reporter = Reporter::start_with(call.ctx, count.clone(), None, |seen, _| {
        format!("listed {} entries", thousands(seen))
    });
    let trees = blocking_stoppable(call, move |stop| {
        dirs.iter()
            .map(|dir| tree::directory_tree_with(dir, &options, &count.examined, stop))
            .collect::<Vec<_>>()
    })
    .await;
    reporter.finish().await;
    let trees = match trees {
        Ok(Some(trees)) => trees,
        // Cancelled: rmcp sends no response.
        Ok(None) => return Answer::cancelled(),
        Err(answer) => return answer,
    };
    let mut text = String::new();
    let mut failures = 0;
    for tree in &trees {
        match tree {
            Ok(tree) => text.push_str(&hints::tree(tree)),
            Err(err) => {
                failures += 1;
                text.push_str(&format!("[error: {}]\n", hints::list(err)));
            }
        }
    }
    fit_escaped(
        &mut text,
        call.budget().saturating_sub(ENVELOPE),
        "[output budget reached; call directory_tree on a subdirectory or lower max_depth]",
    );
    match failures == trees.len() {
        // Every directory failed: the first one's reason speaks for the call.
        true => {
            let first = trees.iter().find_map(|tree| tree.as_ref().err());
            let reason = first.map_or(Reason::Io, Reason::from);
            Answer::refused(reason, text)
        }
        false => Answer::text(text),
    }
}
