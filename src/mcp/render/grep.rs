//! Rendering a `grep` outcome: paths, counts, or matches grouped by file like
//! `rg --heading` (`grep/content.rs`), and the structured result with the same entries,
//! each form within its output budget. The structured result says each thing once: a
//! path once per file, lines as rows of values ([`crate::mcp::render::rows`]), no empty
//! lists and no zero counts.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;

use crate::mcp::progress::thousands;
use crate::mcp::render::paths::Paths;
use crate::mcp::render::rows::CountRow;
use crate::mcp::render::{
    Answer, ENVELOPE, FIXED, Rooms, cut_to_fit, ignore_notes, json_len, page_note,
};
use crate::mcp::shown::Recall;
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::search::{GrepEntries, GrepOutcome};
use rootgrep_core::symbols::extract::Definition;
use rootgrep_core::walk::Stats;

mod content;
mod file;

use content::Recalled;
pub use file::FileMatchesOut;
pub(crate) use file::{add_scoped, scope_cost};

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct GrepOut<'a> {
    /// The directory the paths are relative to (the only root); absent when they are
    /// absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// files_with_matches: the files, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// content: the matching lines, by file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<FileMatchesOut<'a>>,
    /// count: matching lines per file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<CountRow>,
    /// Entries of this mode (files, or matching lines in content mode) over the whole
    /// search.
    pub total: usize,
    /// Where the next page starts (absent on the last page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Files skipped, and how many were searched when nothing matched (absent when there
    /// is nothing to say).
    #[serde(default, skip_serializing_if = "StatsOut::is_empty")]
    #[schemars(schema_with = "crate::mcp::render::rows::counts_schema")]
    pub stats: StatsOut,
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the search read and skipped, each count only when not zero (the time it took is
/// left out: a client measures it).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct StatsOut {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub files_searched: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bytes_searched: u64,
    /// Binary files skipped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub binary: u64,
    /// Files over max_filesize, or with a line over 8 MiB.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub too_large: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable: u64,
    /// Ignore files not applied (not regular files, too large), one note each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_files: Vec<String>,
}

impl StatsOut {
    fn is_empty(&self) -> bool {
        self.files_searched == 0
            && self.bytes_searched == 0
            && self.binary == 0
            && self.too_large == 0
            && self.unreadable == 0
            && self.ignore_files.is_empty()
    }
}

/// The structured stats of a search.
pub(crate) fn stats_out(stats: &Stats) -> StatsOut {
    StatsOut {
        files_searched: stats.files_searched,
        bytes_searched: stats.bytes_searched,
        binary: stats.skipped_binary,
        too_large: stats.skipped_too_large,
        unreadable: stats.skipped_unreadable,
        ignore_files: ignore_notes(&stats.skipped_ignore_files).0,
    }
}

/// Renders a grep outcome so that each form (text, structured content, as serialized)
/// takes at most `budget` bytes: entries are shown in order while they fit in both, the
/// same ones in each; a first entry that does not fit alone is shown cut.
/// Linear in the size of the page.
/// `scopes` (empty, or one per match of the page) name each match's enclosing definition;
/// with them, lines `recall` says this session showed before are one note per run, and
/// the lines shown are remembered.
pub fn render_grep(
    outcome: &GrepOutcome,
    (scopes, recall): (&[Option<Definition>], &Recall),
    offset: usize,
    numbers: bool,
    paths: &Paths,
    budget: usize,
) -> Answer {
    let (notes, notes_cost) = ignore_notes(&outcome.stats.skipped_ignore_files);
    let reserve = FIXED + notes_cost;
    let mut rooms = Rooms::new(budget, reserve + ENVELOPE, reserve + paths.root_len());
    // About what the page's text will take, so it is not copied as it grows.
    let lines = match &outcome.entries {
        GrepEntries::Matches(matches) => matches.iter().map(|m| m.text.len() + 8).sum(),
        _ => 0,
    };
    let mut text = String::with_capacity(lines.min(budget) + 1024);
    let mut out = GrepOut::default();
    // A first entry shrunk to fit is measured by estimate only: let the guard check it.
    let mut exact = true;
    let (noun, shown) = match &outcome.entries {
        GrepEntries::Files(files) => {
            out.files = files_page(files, paths, &mut rooms, &mut text);
            ("files", out.files.len())
        }
        GrepEntries::Counts(counts) => {
            let counts = counts.iter().map(|c| (c.path.as_path(), c.count));
            out.counts = counts_page(counts, paths, &mut rooms, &mut text);
            ("files with matches", out.counts.len())
        }
        GrepEntries::Matches(matches) => {
            let recalled = match scopes.is_empty() {
                true => Recalled::default(),
                false => Recalled::of(matches, recall),
            };
            let context = (scopes, &recalled);
            let page = content::render(matches, context, numbers, paths, &mut rooms, &mut text);
            if !scopes.is_empty() {
                recalled.record(&page.files, recall);
            }
            exact = !page.shrunk;
            out.matches = page.files;
            ("matching lines", page.shown)
        }
    };
    let next_offset = if shown < outcome.entries.len() {
        Some(offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    out.root = paths.root();
    out.total = outcome.total;
    out.next_offset = next_offset;
    out.stats = stats_out(&outcome.stats);
    if outcome.total == 0 {
        text.push_str(&format!(
            "No matches (searched {} files{}).\n",
            thousands(outcome.stats.files_searched),
            skipped_note(&outcome.stats)
        ));
    } else {
        let total = outcome.total;
        page_note("grep", noun, offset, shown, total, next_offset, &mut text);
    }
    for note in &notes {
        text.push_str(&format!("[{note}]\n"));
    }
    // Every entry and line above was measured as serialized, within its room.
    let answer = Answer::text(text).with_structured_json(&out);
    if exact { answer.fitted() } else { answer }
}

/// The entries that fit in `rooms`, one line each: a path (the first one cut to fit rather
/// than skipped) and what `line` writes after it. An entry's structured form costs its
/// path plus `overhead`.
fn paths_page<'a, T>(
    entries: impl Iterator<Item = (&'a Path, T)>,
    paths: &Paths,
    rooms: &mut Rooms,
    overhead: usize,
    text: &mut String,
    line: impl Fn(&str, &T) -> String,
) -> Vec<(String, T)> {
    let cost = |p: &str| json_len(p) + overhead;
    let mut listed = Vec::new();
    for (path, extra) in entries {
        let mut shown = paths.show(path);
        if listed.is_empty() && cost(&shown) > rooms.least() {
            shown = cut_to_fit(&shown, rooms.least(), cost); // shown cut, never skipped
        }
        // The text escapes what could forge a line; the structured path is the real one.
        let written = line(&escape_for_display(&shown), &extra);
        if !rooms.take(json_len(&written) - 2, cost(&shown)) {
            break;
        }
        text.push_str(&written);
        listed.push((shown, extra));
    }
    listed
}

/// `files_with_matches`: the paths that fit in `rooms`, one a line.
fn files_page(
    files: &[PathBuf],
    paths: &Paths,
    rooms: &mut Rooms,
    text: &mut String,
) -> Vec<String> {
    let files = files.iter().map(|path| (path.as_path(), ()));
    paths_page(files, paths, rooms, 1, text, |path, ()| format!("{path}\n"))
        .into_iter()
        .map(|(path, ())| path)
        .collect()
}

/// `count`: the `path:count` lines that fit in `rooms`, from each file's path and count.
fn counts_page<'a>(
    counts: impl Iterator<Item = (&'a Path, u64)>,
    paths: &Paths,
    rooms: &mut Rooms,
    text: &mut String,
) -> Vec<CountRow> {
    paths_page(counts, paths, rooms, 24, text, |path, count| {
        format!("{path}:{count}\n")
    })
    .into_iter()
    .map(|(path, count)| CountRow { path, count })
    .collect()
}

pub(crate) fn skipped_note(stats: &Stats) -> String {
    let mut parts = Vec::new();
    if stats.skipped_binary > 0 {
        parts.push(format!("{} binary", stats.skipped_binary));
    }
    if stats.skipped_too_large > 0 {
        parts.push(format!("{} too large", stats.skipped_too_large));
    }
    if stats.skipped_unreadable > 0 {
        parts.push(format!("{} unreadable", stats.skipped_unreadable));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; skipped {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests;
