//! Rendering `list_directory`: each directory's page of entries (one line each, marks for
//! links, ignored entries and sizes) and the structured result with the same entries,
//! fitted to the output budget.

use schemars::JsonSchema;
use serde::Serialize;

use crate::files::list;
use crate::mcp::render::{
    ENVELOPE, Rooms, cut_escaped, human_size, json_len, rfc3339, serialized_len,
};
use crate::roots::path_text;

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

pub(crate) fn entry_out(entry: &list::Entry) -> ListedEntry {
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

pub(crate) fn entry_line(entry: &list::Entry) -> String {
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

/// The listings as text and structured content, each within `budget` bytes once
/// serialized: the same entries in both, each directory's continuation line kept. An entry
/// larger than the room left is shown cut when it would be the first of its directory (so
/// `next_offset` always moves on); directories that do not fit at all are counted and named
/// in the last line.
pub(crate) fn render_listings(
    listings: &[list::Listing],
    first: usize,
    budget: usize,
) -> (String, ListOut) {
    // `{"directories":[…]}` around the entries, and the key of the structured content.
    let mut rooms = Rooms::new(budget, ENVELOPE + 80, 80);
    let mut text = String::new();
    let mut out = ListOut {
        directories: Vec::new(),
        directories_not_listed: None,
    };
    for (index, listing) in listings.iter().enumerate() {
        let mut dir = path_text(&listing.dir);
        // The directory's header, its structured frame, and its continuation line.
        // (Counted in each form: the header and continuation line in the text, the path
        // and fields in the structured content.)
        let frame_of = |dir: &str| 2 * json_len(dir) + 160;
        if index == 0 && frame_of(&dir) + MIN_ENTRY_ROOM > rooms.least() {
            // A directory whose name alone takes the budget: named cut, listed as usual.
            dir = cut_escaped(&dir, rooms.least().saturating_sub(MIN_ENTRY_ROOM + 160) / 2);
        }
        let header = format!("{dir}/\n");
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
        let mut shown = Vec::new();
        for entry in &listing.entries {
            let mut line = format!("  {}\n", entry_line(entry));
            let mut item = entry_out(entry);
            if !rooms.take(json_len(&line) - 2, serialized_len(&item) + 1) {
                if !shown.is_empty() {
                    break;
                }
                // The first entry alone is larger than what is left: shown cut.
                let share = rooms.least().saturating_sub(200) / 3;
                line = format!("  {}\n", cut_escaped(&entry_line(entry), share));
                item.name = cut_escaped(&item.name, share);
                item.path = cut_escaped(&item.path, share);
                item.target = item.target.map(|target| cut_escaped(&target, share));
                rooms.spend(json_len(&line) - 2, serialized_len(&item) + 1);
                text.push_str(&line);
                shown.push(item);
                break;
            }
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
pub(crate) const MIN_ENTRY_ROOM: usize = 400;
