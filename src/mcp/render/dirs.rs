//! Rendering `list_directory`: each directory's page of entries (one line each, marks for
//! links, ignored entries and sizes) and the structured result with the same entries,
//! each form within the output budget. An entry with nothing to say but its name is its
//! name alone (a directory's ends with `/`), as in the text.

use schemars::JsonSchema;
use serde::Serialize;

use crate::mcp::render::paths::Paths;
use crate::mcp::render::{ENVELOPE, Rooms, cut_escaped, human_size, json_len, serialized_len};
use rootgrep_core::files::list;
use rootgrep_core::quote::escape_for_display;

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListOut {
    /// The directory the paths are relative to (the only root); absent when they are
    /// absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    pub directories: Vec<ListedDir>,
    /// Directories (roots) left out because the output budget was reached; list them by
    /// path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directories_not_listed: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedDir {
    pub path: String,
    /// The entries of this page: a name (a directory's ends with `/`), or an object when
    /// there is more to say than the name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<EntryOut>,
    /// With `sizes`: each entry's size in bytes, in the order of `entries` (null for all
    /// but files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<Option<u64>>,
    /// All entries (after the hidden filter).
    pub total: usize,
    /// Where the next page starts (absent on the last page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Ignore files the `ignored` marks could not apply (not regular files, too large).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_ignore_files: Vec<String>,
}

/// One entry: its name alone, or its name with what else there is to say.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum EntryOut {
    Name(String),
    Detail(EntryDetail),
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EntryDetail {
    /// The name (a directory's, or a link's to a directory, ends with `/`).
    pub name: String,
    /// The entry's exact path as a `file://` URI, for a name that is not UTF-8 (`name` is
    /// then its lossy form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// symlink, fifo, socket, block_device, char_device or other; absent for files and
    /// directories.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Symlink target as written in the link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The symlink's target does not exist.
    #[serde(default, skip_serializing_if = "is_false")]
    pub broken: bool,
    /// Skipped by the ignore rules (.gitignore, .ignore, …).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignored: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// An entry's name in the text: exact when it is plain text, quoted when it holds control
/// characters, with its URI when it is not UTF-8; `/` after a directory (or a link to one).
fn shown_name(entry: &list::Entry) -> String {
    let name = match entry.path.file_name() {
        Some(name) => rootgrep_core::roots::name_text(name, &entry.path),
        None => entry.name.clone(),
    };
    with_slash(entry, name)
}

/// `name` with a `/` after it when the entry is a directory, or a link to one.
fn with_slash(entry: &list::Entry, mut name: String) -> String {
    let dir = match &entry.kind {
        list::EntryKind::Dir => true,
        list::EntryKind::Symlink { target_kind, .. } => *target_kind == list::TargetKind::Dir,
        _ => false,
    };
    if dir {
        name.push('/');
    }
    name
}

/// The structured form of an entry: its exact name (JSON escapes what needs escaping), or
/// for a name that is not UTF-8, its lossy form and its URI.
pub(crate) fn entry_out(entry: &list::Entry) -> EntryOut {
    let exact = entry.path.file_name().and_then(|name| name.to_str());
    let uri = exact
        .is_none()
        .then(|| rootgrep_core::roots::file_uri_from_path(&entry.path));
    let name = with_slash(
        entry,
        exact.map_or_else(|| entry.name.clone(), str::to_string),
    );
    let (kind, target, broken) = match &entry.kind {
        list::EntryKind::File | list::EntryKind::Dir => (None, None, false),
        list::EntryKind::Symlink {
            target,
            target_kind,
        } => (
            Some("symlink"),
            Some(target.display().to_string()),
            *target_kind == list::TargetKind::Missing,
        ),
        list::EntryKind::Other(special) => (
            Some(match special {
                list::Special::Fifo => "fifo",
                list::Special::Socket => "socket",
                list::Special::BlockDevice => "block_device",
                list::Special::CharDevice => "char_device",
                list::Special::Unknown => "other",
            }),
            None,
            false,
        ),
    };
    if kind.is_none() && !entry.ignored && uri.is_none() {
        return EntryOut::Name(name);
    }
    EntryOut::Detail(EntryDetail {
        name,
        uri,
        kind: kind.map(str::to_string),
        target,
        broken,
        ignored: entry.ignored,
    })
}

/// An entry's text line: its name, then ` -> target` (` (broken)`) for a link, the kind of
/// a special file, the size, and ` [ignored]`.
pub(crate) fn entry_line(entry: &list::Entry, name: &str) -> String {
    let mut line = name.to_string();
    match &entry.kind {
        list::EntryKind::Symlink {
            target,
            target_kind,
        } => {
            // A target is any text: escaped, so it cannot forge a line.
            let target = target.display().to_string();
            line.push_str(&format!(" -> {}", escape_for_display(&target)));
            if *target_kind == list::TargetKind::Missing {
                line.push_str(" (broken)");
            }
        }
        list::EntryKind::Other(special) => line.push_str(&format!(" [{special:?}]")),
        list::EntryKind::File | list::EntryKind::Dir => {}
    }
    if let Some(size) = entry.size {
        line.push_str(&format!(" ({})", human_size(size)));
    }
    if entry.ignored {
        line.push_str(" [ignored]");
    }
    line
}

/// The listings as text and structured content, each within `budget` bytes once
/// serialized: the same entries in both, each directory's continuation line kept. An entry
/// larger than the room left is shown cut when it would be the first of its directory (so
/// `next_offset` always moves on); directories that do not fit at all are counted and named
/// in the last line.
pub(crate) fn render_listings(
    listings: &[list::Listing],
    first: usize,
    paths: &Paths,
    budget: usize,
) -> (String, ListOut) {
    // `{"root":…,"directories":[…]}` around the entries, and the key of the structured
    // content.
    let mut rooms = Rooms::new(budget, ENVELOPE + 80, 80 + paths.root_len());
    let mut text = String::new();
    let mut out = ListOut {
        root: None,
        directories: Vec::new(),
        directories_not_listed: None,
    };
    for (index, listing) in listings.iter().enumerate() {
        let mut dir = paths.show(&listing.dir);
        // The directory's header and continuation line in the text, its path and fields in
        // the structured content (counted in each).
        let frame_of = |dir: &str| 2 * json_len(dir) + 160;
        if index == 0 && frame_of(&dir) + MIN_ENTRY_ROOM > rooms.least() {
            // A directory whose name alone takes the budget: named cut, listed as usual.
            dir = cut_escaped(&dir, rooms.least().saturating_sub(MIN_ENTRY_ROOM + 160) / 2);
        }
        // The text escapes what could forge a line; the structured path is the real one.
        let dir_text = escape_for_display(&dir).into_owned();
        let header = format!("{dir_text}/\n");
        let (notes, notes_cost) = crate::mcp::render::ignore_notes(&listing.skipped_ignore_files);
        let frame = frame_of(&dir) + notes_cost;
        // A directory after the first is listed only with room for an entry too, so each
        // one listed moves on; the first always shows one entry (cut if need be).
        let need = frame + if index == 0 { 0 } else { MIN_ENTRY_ROOM };
        if !rooms.fits(need, need) && index > 0 {
            let left = listings.len() - index;
            text.push_str(&format!(
                "[output budget reached after {index} of {} directories; call list_directory \
                 with path set to each of the {left} others, starting with the next root]\n",
                listings.len()
            ));
            out.directories_not_listed = Some(left);
            break;
        }
        rooms.spend(frame, frame);
        text.push_str(&header);
        let (shown, sizes) = entries_page(&listing.entries, &mut rooms, &mut text);
        let cut_by_budget = shown.len() < listing.entries.len();
        let next = if cut_by_budget {
            Some(first + shown.len())
        } else {
            listing.next_offset
        };
        if let Some(next) = next {
            text.push_str(&format!(
                "[showing entries {}-{} of {} in {dir_text}; call list_directory with offset={next} for more]\n",
                first + 1,
                first + shown.len(),
                listing.total,
            ));
        } else if listing.total == 0 {
            text.push_str("(empty)\n");
        }
        for note in &notes {
            text.push_str(&format!("[{note}]\n"));
        }
        out.directories.push(ListedDir {
            path: dir,
            entries: shown,
            sizes,
            total: listing.total,
            next_offset: next,
            skipped_ignore_files: notes,
        });
    }
    out.root = paths.root();
    (text, out)
}

/// The entries of one directory that fit in `rooms`, their lines added to `text`: at
/// least one (the first shown cut when it alone is too large), so paging moves on; and
/// with `sizes`, each one's size.
fn entries_page(
    entries: &[list::Entry],
    rooms: &mut Rooms,
    text: &mut String,
) -> (Vec<EntryOut>, Vec<Option<u64>>) {
    let mut shown = Vec::new();
    let mut sizes = Vec::new();
    let sized = entries.iter().any(|entry| entry.size.is_some());
    for entry in entries {
        let name = shown_name(entry);
        let mut line = format!("{}\n", entry_line(entry, &name));
        let mut item = entry_out(entry);
        // The entry, and its size in `sizes` (at most 21 bytes, or `null,`).
        let structured = serialized_len(&item) + 1 + if sized { 21 } else { 0 };
        if !rooms.take(json_len(&line) - 2, structured) {
            if !shown.is_empty() {
                break;
            }
            // The first entry alone is larger than what is left: shown cut.
            let share = rooms.least().saturating_sub(200) / 2;
            let name = cut_escaped(&shown_name(entry), share);
            line = format!("{}\n", cut_escaped(&entry_line(entry, &name), share));
            item = match entry_out(entry) {
                EntryOut::Name(name) => EntryOut::Name(cut_escaped(&name, share)),
                EntryOut::Detail(mut detail) => {
                    detail.name = cut_escaped(&detail.name, share / 2);
                    detail.uri = detail.uri.map(|uri| cut_escaped(&uri, share / 2));
                    detail.target = detail.target.map(|t| cut_escaped(&t, share / 2));
                    EntryOut::Detail(detail)
                }
            };
            rooms.spend(json_len(&line) - 2, serialized_len(&item) + 22);
            text.push_str(&line);
            shown.push(item);
            sizes.push(entry.size);
            break;
        }
        text.push_str(&line);
        shown.push(item);
        sizes.push(entry.size);
    }
    if !sized {
        sizes.clear();
    }
    (shown, sizes)
}

/// Room an entry shown cut needs at least (its fixed fields and cut markers).
pub(crate) const MIN_ENTRY_ROOM: usize = 400;
