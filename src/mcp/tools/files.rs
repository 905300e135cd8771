//! Directory tools (`list_directory`, `directory_tree`) and the write tools (`write_file`,
//! `edit_file`, `create_directory`, `move_file`). Writes need *write* access: inside the
//! roots, or a write grant from the user; a read grant is never enough. `directory_tree`
//! reports progress (entries read) and stops when cancelled.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    Call, blocking, blocking_stoppable, lenient, read_only_annotations, resolve_checked,
    resolve_entry_checked, schema_of, write_annotations,
};
use crate::access::Access;
use crate::files::{edit, list, mv, tree, write};
use crate::mcp::failure::Reason;
use crate::mcp::progress::{Count, Reporter, thousands};
use crate::mcp::render::{
    Answer, ENVELOPE, cut_escaped, fit_escaped, human_size, json_len, rfc3339, serialized_len,
};
use crate::roots::{Resolved, path_text};

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "list_directory",
            "List one directory level: directories (marked /), files, symlinks (with their \
             target) and special files, with entries the ignore rules (.gitignore, .ignore) \
             skip marked [ignored]. Optional sizes; sort by name (directories first), size or \
             modified time; paged with head_limit/offset. Default: each workspace root.",
            schema_of::<ListArgs>(),
        )
        .with_raw_output_schema(schema_of::<ListOut>())
        .with_annotations(read_only_annotations("List directory")),
        Tool::new(
            "directory_tree",
            "A compact indented tree of a directory (directories end in /), gitignore-aware, \
             max_depth levels deep (default 3) and at most head_limit entries (default 500); \
             says where it cut depth or entries. Default: each workspace root.",
            schema_of::<TreeArgs>(),
        )
        .with_annotations(read_only_annotations("Directory tree")),
        Tool::new(
            "write_file",
            "Create or replace a file with `content`, atomically (a reader sees the old or \
             the new content, never a mix); an existing file keeps its permissions. Missing \
             parent directories are created only with create_dirs: true.",
            schema_of::<WriteArgs>(),
        )
        .with_annotations(write_annotations("Write file", true, true)),
        Tool::new(
            "edit_file",
            "Replace exact text in a file: `old_string` must occur exactly once (or set \
             replace_all), else nothing changes and the error says how many matches and on \
             which lines. Or pass `edits` (a list of {old_string, new_string, replace_all}) \
             applied in order, all or nothing. Keeps CRLF line endings and a BOM. Returns a \
             unified diff; dry_run shows the diff without writing. Atomic like write_file. Files \
             up to 16 MiB; at most 1,000 edits per call.",
            schema_of::<EditArgs>(),
        )
        .with_annotations(write_annotations("Edit file", true, false)),
        Tool::new(
            "create_directory",
            "Create a directory and any missing parents (mkdir -p); succeeds if it already \
             exists.",
            schema_of::<PathArgs>(),
        )
        .with_annotations(write_annotations("Create directory", false, true)),
        Tool::new(
            "move_file",
            "Move or rename a file or directory. Never overwrites: fails if the destination \
             exists (checked atomically by the filesystem, no race). Both paths must be in \
             the workspace (or granted for writing).",
            schema_of::<MoveArgs>(),
        )
        // A move removes the source path: destructive for whoever relied on it.
        .with_annotations(write_annotations("Move file", true, false)),
    ]
}

/// The directories a directory tool works on: the named path, or every root.
async fn target_dirs(call: &Call<'_>, path: Option<&str>) -> Result<Vec<PathBuf>, Answer> {
    match path {
        Some(path) => {
            let resolved = resolve_checked(call, path, Access::Read).await?;
            if !resolved.exists {
                let text = format!("{}: no such directory", path_text(&resolved.path));
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
                        call.roots.describe()
                    )
                } else {
                    format!(
                        "no workspace root is an existing directory ({}); pass a path",
                        call.roots.describe()
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
    /// The directory (default: each workspace root).
    #[serde(default, alias = "file_path")]
    pub path: Option<String>,
    /// Show file sizes (default false).
    #[serde(default)]
    pub sizes: Option<bool>,
    /// Sort order: "name" (directories first; default), "size" (largest first) or
    /// "modified" (newest first).
    #[serde(default)]
    pub sort: Option<ListSort>,
    /// Include hidden entries (names starting with '.'; default true).
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Maximum entries to return (default 500; 0 = only the output budget limits; at most
    /// 100,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = 100_000))]
    pub head_limit: Option<usize>,
    /// Entries to skip first (for paging; default 0; at most 100,000,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = 100_000_000))]
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

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListOut {
    pub directories: Vec<ListedDir>,
    /// Directories (roots) left out because the output budget was reached; list them by
    /// path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directories_not_listed: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedDir {
    pub path: String,
    pub entries: Vec<ListedEntry>,
    /// All entries (after the hidden filter).
    pub total: usize,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Ignore files the `ignored` marks could not apply (not regular files, too large).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_ignore_files: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedEntry {
    pub name: String,
    pub path: String,
    /// file, directory, symlink, fifo, socket, block_device, char_device, other.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// Symlink target as written in the link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Skipped by the ignore rules (.gitignore, .ignore, …).
    pub ignored: bool,
}

fn entry_out(entry: &list::Entry) -> ListedEntry {
    let (kind, target) = match &entry.kind {
        list::EntryKind::File => ("file", None),
        list::EntryKind::Dir => ("directory", None),
        list::EntryKind::Symlink { target, .. } => ("symlink", Some(target.display().to_string())),
        list::EntryKind::Other(special) => (
            match special {
                list::Special::Fifo => "fifo",
                list::Special::Socket => "socket",
                list::Special::BlockDevice => "block_device",
                list::Special::CharDevice => "char_device",
                list::Special::Unknown => "other",
            },
            None,
        ),
    };
    ListedEntry {
        name: entry.name.clone(),
        path: path_text(&entry.path),
        kind: kind.to_string(),
        size: entry.size,
        modified: entry.modified.map(rfc3339),
        target,
        ignored: entry.ignored,
    }
}

fn entry_line(entry: &list::Entry) -> String {
    let mut line = match entry.path.file_name() {
        Some(name) => crate::roots::name_text(name, &entry.path),
        None => entry.name.clone(),
    };
    match &entry.kind {
        list::EntryKind::Dir => line.push('/'),
        list::EntryKind::Symlink {
            target,
            target_kind,
        } => {
            if *target_kind == list::TargetKind::Dir {
                line.push('/');
            }
            line.push_str(&format!(" -> {}", target.display()));
            if *target_kind == list::TargetKind::Missing {
                line.push_str(" (broken)");
            }
        }
        list::EntryKind::Other(special) => line.push_str(&format!(" [{special:?}]")),
        list::EntryKind::File => {}
    }
    if let Some(size) = entry.size {
        line.push_str(&format!("  ({})", human_size(size)));
    }
    if entry.ignored {
        line.push_str("  [ignored]");
    }
    line
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
        Ok(Err(err)) => return Answer::io_error(&err),
        Err(answer) => return answer,
    };
    let (text, out) = render_listings(&listings, first, call.budget());
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

/// The listings as text and structured content, together within `budget` bytes once
/// serialized: the same entries in both, each directory's continuation line kept. An entry
/// larger than the room left is shown cut when it would be the first of its directory (so
/// `next_offset` always moves on); directories that do not fit at all are counted and named
/// in the last line.
fn render_listings(listings: &[list::Listing], first: usize, budget: usize) -> (String, ListOut) {
    // `{"directories":[…]}` around the entries, and the key of the structured content.
    let room = budget.saturating_sub(ENVELOPE + 80);
    let mut used = 0;
    let mut text = String::new();
    let mut out = ListOut {
        directories: Vec::new(),
        directories_not_listed: None,
    };
    for (index, listing) in listings.iter().enumerate() {
        let mut dir = path_text(&listing.dir);
        // The directory's header, its structured frame, and its continuation line.
        let frame_of = |dir: &str| 3 * json_len(dir) + 210;
        if index == 0 && frame_of(&dir) + MIN_ENTRY_ROOM > room {
            // A directory whose name alone takes the budget: named cut, listed as usual.
            dir = cut_escaped(&dir, room.saturating_sub(MIN_ENTRY_ROOM + 210) / 3);
        }
        let header = format!("{dir}/\n");
        let (notes, notes_cost) = crate::mcp::render::ignore_notes(&listing.skipped_ignore_files);
        let frame = frame_of(&dir) + notes_cost;
        // A directory after the first is listed only with room for an entry too, so each
        // one listed moves on; the first always shows one entry (cut if need be).
        let need = frame + if index == 0 { 0 } else { MIN_ENTRY_ROOM };
        if used + need > room && index > 0 {
            let left = listings.len() - index;
            text.push_str(&format!(
                "[output budget reached after {index} of {} directories; call list_directory \
                 with path set to each of the {left} others, starting with the next root]\n",
                listings.len()
            ));
            out.directories_not_listed = Some(left);
            break;
        }
        used += frame;
        text.push_str(&header);
        let mut shown = Vec::new();
        for entry in &listing.entries {
            let mut line = format!("  {}\n", entry_line(entry));
            let mut item = entry_out(entry);
            let cost = json_len(&line) - 2 + serialized_len(&item) + 1;
            if used + cost > room {
                if !shown.is_empty() {
                    break;
                }
                // The first entry alone is larger than what is left: shown cut.
                let share = room.saturating_sub(used + 200) / 5;
                line = format!("  {}\n", cut_escaped(&entry_line(entry), share));
                item.name = cut_escaped(&item.name, share);
                item.path = cut_escaped(&item.path, share);
                item.target = item.target.map(|target| cut_escaped(&target, share));
                used += json_len(&line) - 2 + serialized_len(&item) + 1;
                text.push_str(&line);
                shown.push(item);
                break;
            }
            used += cost;
            text.push_str(&line);
            shown.push(item);
        }
        let cut_by_budget = shown.len() < listing.entries.len();
        let next = if cut_by_budget {
            Some(first + shown.len())
        } else {
            listing.next_offset
        };
        if let Some(next) = next {
            text.push_str(&format!(
                "[showing entries {}-{} of {} in {dir}; call list_directory with offset={next} for more]\n",
                first + 1,
                first + shown.len(),
                listing.total,
            ));
        } else if listing.total == 0 {
            text.push_str("  (empty)\n");
        }
        for note in &notes {
            text.push_str(&format!("[{note}]\n"));
        }
        out.directories.push(ListedDir {
            path: dir,
            entries: shown,
            total: listing.total,
            truncated: next.is_some(),
            next_offset: next,
            skipped_ignore_files: notes,
        });
    }
    (text, out)
}

/// Room an entry shown cut needs at least (its fixed fields and cut markers).
const MIN_ENTRY_ROOM: usize = 400;

// ---------------------------------------------------------------------------------------
// directory_tree

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeArgs {
    /// The directory (default: each workspace root).
    #[serde(default, alias = "file_path")]
    pub path: Option<String>,
    /// Levels below the directory to show (default 3; at most 64).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = 64))]
    pub max_depth: Option<usize>,
    /// Maximum entries shown (default 500; 0 = only the output budget limits; at most
    /// 100,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 0, max = 100_000))]
    pub head_limit: Option<usize>,
    /// Include hidden entries (default false).
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Show entries the ignore rules (.gitignore, .ignore) would skip (default false).
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
            Ok(tree) => text.push_str(&tree.render()),
            Err(err) => {
                failures += 1;
                text.push_str(&format!("[error: {err}]\n"));
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
            let reason = first.map_or(Reason::Io, Reason::of_io);
            Answer::refused(reason, text)
        }
        false => Answer::text(text),
    }
}

// ---------------------------------------------------------------------------------------
// write_file / create_directory

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file to create or replace.
    #[serde(alias = "file_path")]
    pub path: String,
    /// The complete new content (UTF-8 text).
    pub content: String,
    /// Create missing parent directories (default false).
    #[serde(default)]
    pub create_dirs: Option<bool>,
}

pub async fn write_file(call: &Call<'_>, args: WriteArgs) -> Answer {
    let resolved = match resolve_checked(call, &args.path, Access::Write).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    if resolved.dir_only {
        return Answer::error(format!(
            "{:?} ends with '/', which names a directory; write_file writes files (drop the \
             trailing '/', or use create_directory for a directory)",
            args.path
        ));
    }
    let target = resolved.path.clone();
    let create_dirs = args.create_dirs.unwrap_or(false);
    let content = args.content;
    match blocking(move || write::write_atomic(&target, content.as_bytes(), create_dirs)).await {
        Ok(Ok(outcome)) => {
            call.session.wrote(&[&outcome.path]);
            let verb = if outcome.created {
                "Created"
            } else {
                "Replaced"
            };
            let mut text = format!(
                "{verb} {} ({} bytes).",
                path_text(&outcome.path),
                outcome.bytes
            );
            if !outcome.created_dirs.is_empty() {
                text.push_str(&format!(
                    " Created directories: {}.",
                    created_dirs_text(&outcome.created_dirs)
                ));
            }
            text.push_str(&replaced_notes(&outcome.path, outcome.other_links, false));
            Answer::text(text)
        }
        Ok(Err(err)) => Answer::io_error(&err),
        Err(answer) => answer,
    }
}

/// What a replacement by rename did beyond the file itself: hard links that still show the
/// old content (a replaced file is a new file), and a write by another process that landed
/// in the instant before the rename (it went to the old file).
fn replaced_notes(path: &std::path::Path, other_links: u64, late_write: bool) -> String {
    let mut notes = String::new();
    if other_links > 0 {
        notes.push_str(&format!(
            " Note: the file had {other_links} other hard link(s); they still show the old \
             content (a replaced file is a new file; the other names keep the old one)."
        ));
    }
    if late_write {
        notes.push_str(&format!(
            " Warning: another process wrote to {} at the instant it was replaced; that write \
             is not in the new file. Read the file to check.",
            path_text(path)
        ));
    }
    notes
}

/// The directories a write created, each inside the one before: all of them when few, else
/// the first and the last (the others lie between them).
fn created_dirs_text(dirs: &[PathBuf]) -> String {
    match dirs {
        [first, .., last] if dirs.len() > 2 => format!(
            "{} and {} directories inside it, down to {}",
            path_text(first),
            dirs.len() - 1,
            path_text(last)
        ),
        _ => dirs
            .iter()
            .map(|d| path_text(d))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathArgs {
    /// The directory to create (with any missing parents).
    #[serde(alias = "file_path")]
    pub path: String,
}

pub async fn create_directory(call: &Call<'_>, args: PathArgs) -> Answer {
    let resolved = match resolve_checked(call, &args.path, Access::Write).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    let target = resolved.path.clone();
    match blocking(move || write::create_directory(&target)).await {
        Ok(Ok(outcome)) if outcome.created => {
            call.session.wrote(&[&resolved.path]);
            Answer::text(format!(
                "Created {}.",
                created_dirs_text(&outcome.created_dirs)
            ))
        }
        Ok(Ok(_)) => Answer::text(format!(
            "{} already exists; nothing to do.",
            path_text(&resolved.path)
        )),
        Ok(Err(err)) => Answer::io_error(&err),
        Err(answer) => answer,
    }
}

// ---------------------------------------------------------------------------------------
// edit_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// The file to edit.
    #[serde(alias = "file_path")]
    pub path: String,
    /// The exact text to replace (must occur exactly once unless replace_all).
    #[serde(default, alias = "oldText")]
    pub old_string: Option<String>,
    /// The replacement text.
    #[serde(default, alias = "newText")]
    pub new_string: Option<String>,
    /// Replace every occurrence of old_string (default false).
    #[serde(default, alias = "replaceAll")]
    pub replace_all: Option<bool>,
    /// Several edits applied in order, all or nothing (instead of old_string/new_string).
    #[serde(default)]
    pub edits: Option<Vec<EditItem>>,
    /// Return the diff without writing (default false).
    #[serde(default, alias = "dryRun")]
    pub dry_run: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditItem {
    /// The exact text to replace.
    #[serde(alias = "oldText")]
    pub old_string: String,
    /// The replacement text.
    #[serde(alias = "newText")]
    pub new_string: String,
    /// Replace every occurrence (default false).
    #[serde(default, alias = "replaceAll")]
    pub replace_all: bool,
}

fn edits_of(args: &EditArgs) -> Result<Vec<edit::Edit>, Answer> {
    match (&args.edits, &args.old_string, &args.new_string) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(Answer::error(
            "pass either old_string/new_string or edits, not both",
        )),
        (Some(edits), None, None) => Ok(edits
            .iter()
            .map(|e| edit::Edit {
                old_string: e.old_string.clone(),
                new_string: e.new_string.clone(),
                replace_all: e.replace_all,
            })
            .collect()),
        (None, Some(old), Some(new)) => Ok(vec![edit::Edit {
            old_string: old.clone(),
            new_string: new.clone(),
            replace_all: args.replace_all.unwrap_or(false),
        }]),
        (None, Some(_), None) => Err(Answer::error("new_string is missing")),
        (None, None, _) => Err(Answer::error(
            "old_string is missing (or pass edits: [{old_string, new_string}])",
        )),
    }
}

pub async fn edit_file(call: &Call<'_>, args: EditArgs) -> Answer {
    let edits = match edits_of(&args) {
        Ok(edits) => edits,
        Err(answer) => return answer,
    };
    let resolved = match resolve_checked(call, &args.path, Access::Write).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    let target = resolved.path.clone();
    let dry_run = args.dry_run.unwrap_or(false);
    let diff_max_bytes = call.budget();
    let work = move |stop: &AtomicBool| {
        let control = edit::EditControl {
            stop,
            diff_max_bytes,
            diff_timeout: edit::DIFF_TIMEOUT,
        };
        edit::edit_file_with(&target, &edits, dry_run, control)
    };
    let outcome = match blocking_stoppable(call, work).await {
        Ok(Some(Ok(outcome))) => outcome,
        Ok(Some(Err(err))) => return Answer::failed(&err).about(&args.path),
        Ok(None) => return Answer::cancelled(),
        Err(answer) => return answer,
    };
    if outcome.changed && !dry_run {
        call.session.wrote(&[&resolved.path]);
    }
    let total: usize = outcome.replacements.iter().sum();
    let summary = if !outcome.changed {
        format!(
            "No change: the edits cancel out; {} was not written.",
            path_text(&outcome.path)
        )
    } else if outcome.dry_run {
        format!(
            "Dry run: {total} replacement(s) in {}; nothing was written.",
            path_text(&outcome.path)
        )
    } else {
        format!(
            "Edited {}: {total} replacement(s).{}",
            path_text(&outcome.path),
            replaced_notes(&outcome.path, outcome.other_links, outcome.late_write)
        )
    };
    let budget = call.budget();
    let mut structured = serde_json::json!({
        "path": cut_escaped(&path_text(&outcome.path), budget / 4),
        "replacements": outcome.replacements,
        "changed": outcome.changed,
        "written": outcome.written,
        "dry_run": outcome.dry_run,
        "line_ending": match outcome.line_ending { edit::LineEnding::Lf => "lf", edit::LineEnding::Crlf => "crlf" },
        "bom": outcome.bom,
    });
    if outcome.other_links > 0 {
        structured["other_hard_links"] = outcome.other_links.into();
    }
    if outcome.late_write {
        structured["late_write"] = true.into();
    }
    // The diff takes what the structured result leaves of the budget.
    let others = Answer::default().with_structured(structured.clone()).size();
    let summary = cut_escaped(&summary, budget / 4);
    let mut text = format!("{summary}\n{}", outcome.diff);
    fit_escaped(
        &mut text,
        budget.saturating_sub(others),
        "[diff cut at the output budget; read the file to see the rest]",
    );
    Answer::text(text).with_structured(structured)
}

// ---------------------------------------------------------------------------------------
// move_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// What to move (a file, directory or symlink — a symlink is moved as a link).
    #[serde(alias = "from", alias = "src")]
    pub source: String,
    /// Where to move it; must not exist.
    #[serde(alias = "to", alias = "dst", alias = "dest")]
    pub destination: String,
}

async fn entry_checked(call: &Call<'_>, arg: &str) -> Result<Resolved, Answer> {
    resolve_entry_checked(call, arg, Access::Write).await
}

pub async fn move_file(call: &Call<'_>, args: MoveArgs) -> Answer {
    let source = match entry_checked(call, &args.source).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    if !source.exists {
        let text = format!("{}: no such file or directory", path_text(&source.path));
        return Answer::refused(Reason::NotFound, text).about(&args.source);
    }
    let destination = match entry_checked(call, &args.destination).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    // `dest/` names a directory: only a directory may be moved there (as the kernel says).
    let is_dir = |path: PathBuf| blocking(move || path.is_dir());
    if destination.dir_only && !matches!(is_dir(source.path.clone()).await, Ok(true)) {
        return Answer::error(format!(
            "{:?} ends with '/', which names a directory, but {} is not a directory; drop the \
             trailing '/' to name the new file",
            args.destination,
            path_text(&source.path)
        ));
    }
    let (from, to) = (source.path.clone(), destination.path.clone());
    match blocking(move || mv::move_no_replace(&from, &to)).await {
        Ok(Ok(())) => {
            call.session.wrote(&[&source.path, &destination.path]);
            Answer::text(format!(
                "Moved {} to {}.",
                path_text(&source.path),
                path_text(&destination.path)
            ))
        }
        Ok(Err(err)) => Answer::io_error(&err),
        Err(answer) => answer,
    }
}
