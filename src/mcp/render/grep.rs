//! Rendering a `grep` outcome: matches grouped by file like `rg --heading`, with their
//! scopes and context, and the structured result with the same entries, all within the
//! output budget.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::progress::thousands;
use crate::mcp::render::{
    Answer, ENVELOPE, FIXED, Rooms, cut_to_fit, ignore_notes, json_len, page_note, serialized_len,
};
use crate::search::{self, GrepEntries, GrepMatch, GrepOutcome, Stats};
use crate::symbols::Definition;

// ---------------------------------------------------------------------------------------
// grep

#[derive(Debug, Serialize, JsonSchema)]
pub struct GrepOut {
    /// files_with_matches, content or count.
    pub mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<MatchOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<CountOut>>,
    /// Entries of this mode over the whole search.
    pub total: usize,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    pub stats: StatsOut,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MatchOut {
    pub path: String,
    pub line: u64,
    pub column: u64,
    pub text: String,
    /// Context lines before the match (absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<LineOut>,
    /// The rest of a multiline match and the context lines after it (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<LineOut>,
    /// Lines of this match's context left out because it alone exceeds the output budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_lines: u64,
    /// With `scope`: the innermost definition enclosing the matching line (absent outside
    /// every definition and for files without symbols).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeOut>,
}

/// A definition enclosing a match.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ScopeOut {
    /// function, method, class, struct, impl, …
    pub kind: String,
    pub name: String,
    /// The definition that encloses this one (class, impl, module…), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// First and last line of the whole definition.
    pub line: u64,
    pub end_line: u64,
}

pub(crate) fn scope_out(def: &Definition) -> ScopeOut {
    ScopeOut {
        kind: def.kind.to_string(),
        name: def.name.clone(),
        container: def.container.as_deref().map(str::to_string),
        line: def.line,
        end_line: def.end_line,
    }
}

/// The scope line written before a match whose enclosing definition differs from the
/// previous match's in the same file: `@@ method Parser::parse (12-40)`, like a diff hunk
/// header. Leaving every definition is said too, so no match looks scoped when it is not.
pub(crate) fn scope_line(def: Option<&Definition>) -> String {
    match def {
        Some(d) => format!(
            "@@ {} {} ({}-{})\n",
            d.kind,
            search::lines::cut_around(&d.qualified(), 0, 0, 200),
            d.line,
            d.end_line
        ),
        None => "@@ (outside any definition)\n".to_string(),
    }
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LineOut {
    pub line: u64,
    pub text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CountOut {
    pub path: String,
    pub count: u64,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct StatsOut {
    pub files_searched: u64,
    pub bytes_searched: u64,
    pub elapsed_ms: u64,
    pub skipped: SkippedOut,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct SkippedOut {
    pub binary: u64,
    pub too_large: u64,
    pub unreadable: u64,
    /// Ignore files not applied (not regular files, too large), one note each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore_files: Vec<String>,
}

pub(crate) fn stats_out(stats: &Stats) -> StatsOut {
    StatsOut {
        files_searched: stats.files_searched,
        bytes_searched: stats.bytes_searched,
        elapsed_ms: stats.elapsed.as_millis() as u64,
        skipped: SkippedOut {
            binary: stats.skipped_binary,
            too_large: stats.skipped_too_large,
            unreadable: stats.skipped_unreadable,
            ignore_files: ignore_notes(&stats.skipped_ignore_files).0,
        },
    }
}

/// Renders a grep outcome so that each form (text, structured content, as serialized)
/// takes at most `budget` bytes: entries are shown in order while they fit in both, the
/// same ones in each; a first entry that does not fit alone is shown cut.
/// Linear in the size of the page.
/// `scopes` (empty, or one per match of the page) name each match's enclosing definition.
pub fn render_grep(
    outcome: &GrepOutcome,
    scopes: &[Option<Definition>],
    offset: usize,
    numbers: bool,
    budget: usize,
) -> Answer {
    let (notes, notes_cost) = ignore_notes(&outcome.stats.skipped_ignore_files);
    let mut rooms = Rooms::new(budget, FIXED + ENVELOPE + notes_cost, FIXED + notes_cost);
    let mut text = String::new();
    // A first entry shrunk to fit is measured by estimate only: let the guard check it.
    let mut exact = true;
    let (mode, shown, mut out) = match &outcome.entries {
        GrepEntries::Files(files) => {
            let listed = files_page(files, &mut rooms, &mut text);
            let shown = listed.len();
            let out = GrepOut::new("files_with_matches").files(listed);
            ("files_with_matches", shown, out)
        }
        GrepEntries::Counts(counts) => {
            let counts = counts.iter().map(|c| (c.path.as_path(), c.count));
            let listed = counts_page(counts, &mut rooms, &mut text);
            let shown = listed.len();
            ("count", shown, GrepOut::new("count").counts(listed))
        }
        GrepEntries::Matches(matches) => {
            let (listed, shrunk) = render_matches(matches, scopes, numbers, &mut rooms, &mut text);
            exact = !shrunk;
            let shown = listed.len();
            ("content", shown, GrepOut::new("content").matches(listed))
        }
    };
    let page_len = outcome.entries.len();
    let next_offset = if shown < page_len {
        Some(offset + shown.max(1))
    } else {
        outcome.next_offset
    };
    out.total = outcome.total;
    out.truncated = next_offset.is_some();
    out.next_offset = next_offset;
    out.stats = stats_out(&outcome.stats);
    grep_notes(outcome, mode, offset, shown, next_offset, &mut text);
    for note in &notes {
        text.push_str(&format!("[{note}]\n"));
    }
    // Every entry and line above was measured as serialized, within `room`.
    let answer =
        Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null));
    if exact { answer.fitted() } else { answer }
}

/// The entries that fit in `rooms`, one line each: a path (the first one cut to fit rather
/// than skipped) and what `line` writes after it. An entry's structured form costs its
/// path plus `overhead`.
fn paths_page<'a, T>(
    entries: impl Iterator<Item = (&'a Path, T)>,
    rooms: &mut Rooms,
    overhead: usize,
    text: &mut String,
    line: impl Fn(&str, &T) -> String,
) -> Vec<(String, T)> {
    let cost = |p: &str| json_len(p) + overhead;
    let mut listed = Vec::new();
    for (path, extra) in entries {
        let mut shown = path.display().to_string();
        if listed.is_empty() && cost(&shown) > rooms.least() {
            shown = cut_to_fit(&shown, rooms.least(), cost); // shown cut, never skipped
        }
        let written = line(&shown, &extra);
        if !rooms.take(json_len(&written) - 2, cost(&shown)) {
            break;
        }
        text.push_str(&written);
        listed.push((shown, extra));
    }
    listed
}

/// `files_with_matches`: the paths that fit in `rooms`, one a line.
fn files_page(files: &[PathBuf], rooms: &mut Rooms, text: &mut String) -> Vec<String> {
    let files = files.iter().map(|path| (path.as_path(), ()));
    paths_page(files, rooms, 2, text, |path, ()| format!("{path}\n"))
        .into_iter()
        .map(|(path, ())| path)
        .collect()
}

/// `count`: the `path:count` lines that fit in `rooms`, from each file's path and count.
fn counts_page<'a>(
    counts: impl Iterator<Item = (&'a Path, u64)>,
    rooms: &mut Rooms,
    text: &mut String,
) -> Vec<CountOut> {
    paths_page(counts, rooms, 40, text, |path, count| {
        format!("{path}:{count}\n")
    })
    .into_iter()
    .map(|(path, count)| CountOut { path, count })
    .collect()
}

/// The line after the page: no matches, where the next page starts, or past the end.
fn grep_notes(
    outcome: &GrepOutcome,
    mode: &str,
    offset: usize,
    shown: usize,
    next_offset: Option<usize>,
    text: &mut String,
) {
    let noun = match mode {
        "content" => "matching lines",
        "count" => "files with matches",
        _ => "files",
    };
    if outcome.total == 0 {
        text.push_str(&format!(
            "No matches (searched {} files{}).\n",
            thousands(outcome.stats.files_searched),
            skipped_note(&outcome.stats)
        ));
    } else {
        page_note(
            "grep",
            noun,
            offset,
            shown,
            outcome.total,
            next_offset,
            text,
        );
    }
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

impl GrepOut {
    /// An answer of `mode` with no entries: `render_grep` sets its totals and stats.
    fn new(mode: &str) -> GrepOut {
        GrepOut {
            mode: mode.to_string(),
            files: None,
            matches: None,
            counts: None,
            total: 0,
            truncated: false,
            next_offset: None,
            stats: StatsOut::default(),
        }
    }
    fn files(mut self, files: Vec<String>) -> GrepOut {
        self.files = Some(files);
        self
    }
    fn counts(mut self, counts: Vec<CountOut>) -> GrepOut {
        self.counts = Some(counts);
        self
    }
    fn matches(mut self, matches: Vec<MatchOut>) -> GrepOut {
        self.matches = Some(matches);
        self
    }
}

pub(crate) fn match_out(m: &GrepMatch, path: &str) -> MatchOut {
    let lines = |lines: &[search::ContextLine]| {
        lines
            .iter()
            .map(|c| LineOut {
                line: c.line,
                text: c.text.clone(),
            })
            .collect()
    };
    MatchOut {
        path: path.to_owned(),
        line: m.line,
        column: m.column,
        text: m.text.clone(),
        before: lines(&m.before),
        after: lines(&m.after),
        omitted_lines: m.omitted,
        scope: None,
    }
}

/// Decimal digits of `n`.
pub(crate) fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Serialized size of one structured line (`{"line":N,"text":"…"},`).
pub(crate) fn line_out_cost(line: &search::ContextLine) -> usize {
    18 + digits(line.line) + json_len(&line.text)
}

/// Serialized size of one structured match, with its comma (see [`MatchOut`]), given the
/// serialized size of its path.
pub(crate) fn match_out_cost(m: &GrepMatch, path_len: usize) -> usize {
    let lines: usize = m.before.iter().chain(&m.after).map(line_out_cost).sum();
    let omitted = match m.omitted {
        0 => 0,
        n => 17 + digits(n),
    };
    // `,"before":[` … `]` and `,"after":[` … `]`, each only when not empty.
    let lists = 12 * (usize::from(!m.before.is_empty()) + usize::from(!m.after.is_empty()));
    36 + digits(m.line) + digits(m.column) + path_len + json_len(&m.text) + lines + omitted + lists
}

/// Renders matches grouped by file (`rg --heading`): the path once, then `N:text` for
/// matching lines and `N-text` for context, `--` between non-adjacent groups, a blank line
/// between files. Each line is written once, in order, however the entries' context
/// overlaps, so the cost is linear in the page. Entries are added while the text and their
/// structured form each fit in their room; a first entry too large alone is cut
/// (see [`shrink`]). Returns the structured form of the entries shown, and whether the
/// first one was shrunk.
pub(crate) fn render_matches(
    matches: &[GrepMatch],
    scopes: &[Option<Definition>],
    numbers: bool,
    rooms: &mut Rooms,
    text: &mut String,
) -> (Vec<MatchOut>, bool) {
    let scope_of = |k: usize| scopes.get(k).and_then(Option::as_ref);
    let mut shrunk = false;
    let mut shown: Vec<MatchOut> = Vec::new();
    let mut group = Group::default();
    // The file's path as shown, and its serialized size: computed once per file.
    let mut path = String::new();
    let mut path_len = 0;
    let mut block = String::new();
    for (k, m) in matches.iter().enumerate() {
        let new_file = group.path != Some(m.path.as_path());
        if new_file {
            group = Group::start(&m.path, k);
            path = m.path.display().to_string();
            path_len = json_len(&path);
        }
        block.clear();
        if new_file {
            if k > 0 {
                block.push('\n');
            }
            block.push_str(&path);
            block.push('\n');
        }
        // With scopes, a new enclosing definition is named before the match's lines.
        let scope = scope_of(k);
        let scope_changed = if new_file {
            scope.is_some()
        } else {
            !scopes.is_empty() && scope_key(scope) != scope_key(scope_of(k - 1))
        };
        let scope_text = if scope_changed {
            scope_line(scope)
        } else {
            String::new()
        };
        let mut out = match_out(m, &path);
        out.scope = scope.map(scope_out);
        let mut trial = group.clone();
        trial.render(matches, m, numbers, &scope_text, &mut block);
        let structured = match_out_cost(m, path_len) + scope_cost(&out.scope);
        if rooms.take(json_len(&block) - 2, structured) {
            text.push_str(&block);
            group = trial;
            shown.push(out);
            continue;
        }
        if k == 0 {
            // Paging must progress: the first entry is shown, cut to the room.
            let cut = shrink(m, *rooms, numbers);
            let mut block = format!("{path}\n");
            Group::start(&m.path, 0).render(matches, &cut, numbers, &scope_text, &mut block);
            text.push_str(&block);
            let mut out = match_out(&cut, &path);
            out.scope = scope.map(scope_out);
            shown.push(out);
            shrunk = true;
        }
        break;
    }
    if !shown.is_empty() {
        text.push('\n');
    }
    (shown, shrunk)
}

/// What makes two scopes the same definition (the page's matches of one file).
pub(crate) fn scope_key(def: Option<&Definition>) -> Option<(u64, u64, &str)> {
    def.map(|d| (d.line, d.end_line, d.name.as_str()))
}

/// Serialized size of a match's `scope` field, with its comma (0 when absent).
pub(crate) fn scope_cost(scope: &Option<ScopeOut>) -> usize {
    scope
        .as_ref()
        .map_or(0, |scope| ",\"scope\":".len() + serialized_len(scope))
}

/// The rendering state of the file being written.
#[derive(Clone, Default)]
pub(crate) struct Group<'a> {
    path: Option<&'a Path>,
    /// Index (in the page) of the file's first entry.
    first: usize,
    /// Last line written for this file.
    last: Option<u64>,
    /// Entries of this file whose match starts at or before the line being written.
    started: usize,
    /// Largest end line among those.
    match_end: u64,
}

impl<'a> Group<'a> {
    fn start(path: &'a Path, first: usize) -> Group<'a> {
        Group {
            path: Some(path),
            first,
            last: None,
            started: first,
            match_end: 0,
        }
    }

    /// Writes the lines of `m` not written yet, `header` (a scope line, or empty) before
    /// the first of them, after the `--` that separates it from the previous group. A line
    /// is marked as matching when any entry of the page's file covers it, whichever
    /// entry's context brings it.
    fn render(
        &mut self,
        page: &[GrepMatch],
        m: &GrepMatch,
        numbers: bool,
        header: &str,
        out: &mut String,
    ) {
        let mut header = Some(header).filter(|h| !h.is_empty());
        let lines = m
            .before
            .iter()
            .map(|c| (c.line, c.text.as_str()))
            .chain([(m.line, m.text.as_str())])
            .chain(m.after.iter().map(|c| (c.line, c.text.as_str())));
        for (line, text) in lines {
            if self.last.is_some_and(|last| line <= last) {
                continue;
            }
            if let Some(last) = self.last
                && line > last + 1
            {
                out.push_str("--\n");
            }
            if let Some(header) = header.take() {
                out.push_str(header);
            }
            self.last = Some(line);
            while self.started < page.len()
                && page[self.started].path == page[self.first].path
                && page[self.started].line <= line
            {
                self.match_end = self.match_end.max(page[self.started].end_line);
                self.started += 1;
            }
            let is_match = self.match_end >= line || (m.line <= line && line <= m.end_line);
            if numbers {
                let sep = if is_match { ':' } else { '-' };
                let _ = writeln!(out, "{line}{sep}{text}");
            } else {
                out.push_str(text);
                out.push('\n');
            }
        }
        if m.omitted > 0 {
            out.push_str(&format!(
                "[… {} more lines of this match cut: over the output budget; ask for less context]\n",
                m.omitted
            ));
        }
    }
}

/// A copy of `m` whose text rendering and structured form each fit in their room: context
/// lines are dropped from the far ends (after, then before) and counted in `omitted`, then
/// the line itself is cut around the match. (Measured on both forms together against
/// twice the smaller room: each line costs about the same in either.)
pub(crate) fn shrink(m: &GrepMatch, rooms: Rooms, numbers: bool) -> GrepMatch {
    let room = 2 * rooms.least();
    let mut cut = m.clone();
    let line_cost = |c: &search::ContextLine| {
        let number = if numbers { 21 } else { 0 };
        json_len(&c.text) + number + line_out_cost(c)
    };
    let path = m.path.display().to_string();
    let fixed = 2 * json_len(&path) + 300;
    let mut total = fixed + 2 * json_len(&m.text) + 40;
    total += m
        .before
        .iter()
        .chain(&m.after)
        .map(line_cost)
        .sum::<usize>();
    while total > room {
        let dropped = match cut.after.pop() {
            Some(line) => line,
            None if !cut.before.is_empty() => cut.before.remove(0),
            None => break,
        };
        total -= line_cost(&dropped);
        cut.omitted += 1;
    }
    let mut chars = cut.text.chars().count();
    while total > room && chars > 1 {
        chars /= 2;
        let shorter = search::lines::cut_around(&m.text, 0, 0, chars);
        total = total - 2 * json_len(&cut.text) + 2 * json_len(&shorter);
        cut.text = shorter;
    }
    cut
}

#[cfg(test)]
mod tests;
