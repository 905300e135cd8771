//! Rendering of the single-file read tools: `file_info`'s answer ([`FileInfoOut`]), a page
//! of `read_file` lines within the room left, and what an inline image costs.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::render::{Answer, cut_escaped, human_size, json_len};
use crate::mcp::shown::{self, Piece};
use rootgrep_core::files::read;
use rootgrep_core::quote::escape_for_display;

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileInfoOut {
    pub path: String,
    /// file, directory, or the kind of special file (FIFO, socket, device).
    #[serde(rename = "type")]
    pub kind: String,
    /// Bytes.
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// Octal mode, e.g. 0644.
    pub mode: String,
    /// The permissions as `ls -l` writes them (the text's form of `mode`).
    #[serde(skip)]
    #[schemars(skip)]
    pub permissions: String,
    /// Read-only (absent when writable).
    #[serde(default, skip_serializing_if = "is_false")]
    pub readonly: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
    /// For files: text, image or binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The text's encoding when it is not UTF-8 (e.g. UTF-16LE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// MIME type for images, a description for binary files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One line: `path: type, size, modified, permissions, content (encoding, lines)`.
pub fn info_answer(out: &FileInfoOut) -> Answer {
    // The text escapes what could forge a line; the structured paths are the real ones.
    let mut text = format!("{}: {}", escape_for_display(&out.path), out.kind);
    if let Some(target) = &out.symlink_target {
        let target = escape_for_display(target);
        text.push_str(&format!(" (named through symlink -> {target})"));
    }
    text.push_str(&format!(", {} bytes", out.size));
    if out.size >= 1024 {
        text.push_str(&format!(" ({})", human_size(out.size)));
    }
    if let Some(modified) = &out.modified {
        text.push_str(&format!(", modified {modified}"));
    }
    text.push_str(&format!(", {}", out.permissions));
    if out.readonly {
        text.push_str(" (read-only)");
    }
    if let Some(content) = &out.content {
        text.push_str(&format!(", {content}"));
        let details: Vec<String> = [
            out.encoding.clone(),
            out.lines.map(|lines| format!("{lines} lines")),
            out.description.clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !details.is_empty() {
            text.push_str(&format!(" ({})", details.join(", ")));
        }
    }
    text.push('\n');
    Answer::text(text).with_structured(serde_json::to_value(out).unwrap_or(Value::Null))
}

// ---------------------------------------------------------------------------------------
// read_file / read_files

/// Bytes an image costs in the answer: its base64 text plus the JSON around it.
pub fn image_cost(raw_bytes: u64) -> usize {
    usize::try_from(raw_bytes.div_ceil(3) * 4).unwrap_or(usize::MAX) + IMAGE_OVERHEAD
}

/// The JSON of one image content block around its data (`{"type":"image",…}`).
pub const IMAGE_OVERHEAD: usize = 64;

/// The largest raw image whose [`image_cost`] fits in `room` bytes.
pub fn image_room(room: usize) -> u64 {
    (room.saturating_sub(IMAGE_OVERHEAD) / 4 * 3) as u64
}

/// What the notes after a page's lines and its continuation line take at most.
pub const PAGE_TRAILER: usize = 400;

/// A page of lines within `room` bytes as serialized (JSON-escaped). Lines that do not fit
/// are left for the next call (the continuation line says where it starts); a first line
/// larger than the room alone is shown cut, so the next offset always moves on. A run of
/// more than a few lines inside `seen` (shown before by this session, unchanged since) is
/// one note instead. Returns the text and the ranges of lines it shows.
pub fn render_page(
    page: &read::TextPage,
    numbers: bool,
    room: usize,
    seen: &[(u64, u64)],
) -> (String, Vec<(u64, u64)>) {
    let name = || cut_escaped(&rootgrep_core::roots::path_display(&page.path), room / 4);
    if page.lines.is_empty() {
        let text = match page.total_lines {
            Some(0) => format!("[{} is empty]", name()),
            Some(total) => format!(
                "[{} has {total} lines; offset {} is past the end]",
                name(),
                page.first_line
            ),
            None => String::new(),
        };
        return (text, Vec::new());
    }
    let lines_room = room.saturating_sub(PAGE_TRAILER);
    let mut text = String::new();
    let mut used = 2;
    let mut kept = 0;
    let mut shown = Vec::new();
    let numbered: Vec<(u64, &str)> = (page.lines.iter().enumerate())
        .map(|(index, line)| ((page.first_line + index) as u64, line.as_str()))
        .collect();
    for piece in shown::elide(&numbered, seen) {
        let (number, line) = match piece {
            Piece::Unchanged(first, last) => {
                let note = shown::unchanged_note(first, last, "");
                used += json_len(&note) - 2;
                text.push_str(&note);
                kept += (last - first + 1) as usize;
                continue;
            }
            Piece::Line(number, line) => (number, line),
        };
        let prefix = match numbers {
            true => format!("{number}\t"),
            false => String::new(),
        };
        let cost = json_len(&prefix) + json_len(line) - 3;
        if used + cost > lines_room {
            if kept == 0 {
                let left = lines_room.saturating_sub(used + json_len(&prefix));
                text.push_str(&prefix);
                text.push_str(&cut_escaped(line, left));
                text.push('\n');
                shown.push(number);
                kept = 1;
            }
            break;
        }
        used += cost;
        text.push_str(&prefix);
        text.push_str(line);
        text.push('\n');
        shown.push(number);
        kept += 1;
    }
    let budget_cut = page.budget_cut || kept < page.lines.len();
    let next = match kept < page.lines.len() {
        true => Some(page.first_line + kept),
        false => page.next_line,
    };
    let last = page.first_line + kept - 1;
    if let Some(next) = next {
        let why = if budget_cut {
            "the output budget is reached"
        } else {
            "the line limit is reached"
        };
        text.push_str(&format!(
            "[showing lines {}-{last}; {why} and more lines follow — call read_file with offset={next} to continue]\n",
            page.first_line
        ));
    }
    if !matches!(page.encoding, read::Encoding::Utf8) {
        text.push_str(&format!("[encoding: {}]\n", page.encoding.label()));
    }
    if page.lossy {
        text.push_str("[note: the file is not valid UTF-8; invalid bytes are shown as U+FFFD]\n");
    }
    if page.cut_lines > 0 {
        text.push_str(&format!(
            "[{} line(s) longer than {} characters were cut]\n",
            page.cut_lines,
            read::MAX_LINE_CHARS
        ));
    }
    (text, shown::ranges_of(shown))
}
