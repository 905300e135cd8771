//! A content page of `grep`: matches grouped by file like `rg --heading` (the path once,
//! `N:text` for matching lines, `N-text` for context, `--` between non-adjacent groups, a
//! blank line between files, and with `scope` an `@@ kind name (first-last)` line before
//! each definition's matches), and the same lines as structured rows: a row per matching
//! line of the text (`:`), holding the context lines (`-`) just before and after it, each
//! line once however the entries' context overlaps, so both forms are linear in the page.
//! (A context line is a row of its own only when no matching row is beside it: next to a
//! run of lines left out as shown before.)

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::file::{FileMatchesOut, Line, digits, scope_cost};
use crate::mcp::render::paths::Paths;
use crate::mcp::render::rows::LineRow;
use crate::mcp::render::{Rooms, json_len};
use crate::mcp::shown::{self, Piece, Recall, Stamp};
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::search::{self, GrepMatch};
use rootgrep_core::symbols::extract::Definition;

/// What a page may leave out of each file (with `scope`): the runs of more than a few of
/// the lines it would show that the session showed before, the file unchanged since; and
/// each file's stamp, to remember what the page shows.
#[derive(Default)]
pub(crate) struct Recalled {
    files: Vec<FileRecall>,
}

/// A file of the page: its path, its stamp, and the runs it may leave out.
type FileRecall = (PathBuf, Option<Stamp>, Vec<(u64, u64)>);

impl Recalled {
    /// The runs each file of `matches` may leave out, as `recall` knows them (the files'
    /// stamps are taken now, before anything is remembered).
    pub(crate) fn of(matches: &[GrepMatch], recall: &Recall) -> Recalled {
        let mut files: Vec<FileRecall> = Vec::new();
        for run in matches.chunk_by(GrepMatch::same_file) {
            let mut lines: Vec<u64> = run
                .iter()
                .flat_map(|m| {
                    let before = m.before.iter().map(|c| c.line);
                    before.chain([m.line]).chain(m.after.iter().map(|c| c.line))
                })
                .collect();
            lines.sort_unstable();
            lines.dedup();
            let stamp = Stamp::of(&run[0].path);
            let seen = recall.seen(&run[0].path, stamp);
            let numbered: Vec<(u64, &str)> = lines.iter().map(|&n| (n, "")).collect();
            let runs = shown::elide(&numbered, &seen)
                .into_iter()
                .filter_map(|piece| match piece {
                    Piece::Unchanged(first, last) => Some((first, last)),
                    Piece::Line(..) => None,
                })
                .collect();
            files.push((run[0].path.to_path_buf(), stamp, runs));
        }
        Recalled { files }
    }

    fn runs(&self, path: &Path) -> Vec<(u64, u64)> {
        let file = self.files.iter().find(|(known, ..)| known == path);
        file.map(|(.., runs)| runs.clone()).unwrap_or_default()
    }

    /// Remembers the lines each file of the page shows.
    pub(crate) fn record(&self, files: &[FileMatchesOut<'_>], recall: &Recall) {
        for file in files {
            let known = self.files.iter().find(|(path, ..)| *path == file.source);
            if let Some((path, stamp, _)) = known {
                recall.record(path, *stamp, &shown::ranges_of(file.shown.iter().copied()));
            }
        }
    }
}

/// What [`render`] made of a page.
pub(crate) struct Page<'a> {
    /// The structured form, by file.
    pub files: Vec<FileMatchesOut<'a>>,
    /// Entries of the page shown.
    pub shown: usize,
    /// The first entry was cut to fit (its size is an estimate).
    pub shrunk: bool,
}

/// Renders matches while the text and their structured rows each fit in their room; a
/// first entry too large alone is cut (see [`shrink`]). `scopes` (empty, or one per match)
/// name each match's enclosing definition; `recalled` says which runs of lines are one
/// "unchanged since shown" note.
pub(crate) fn render<'a>(
    matches: &'a [GrepMatch],
    (scopes, recalled): (&[Option<Definition>], &Recalled),
    numbers: bool,
    paths: &Paths,
    rooms: &mut Rooms,
    text: &mut String,
) -> Page<'a> {
    let scoped = !scopes.is_empty();
    let scope_of = |k: usize| scopes.get(k).and_then(Option::as_ref);
    let mut page = Page {
        files: Vec::new(),
        shown: 0,
        shrunk: false,
    };
    let mut group = Group::default();
    let mut file = FileMatchesOut::default();
    let mut block = String::new();
    let mut rows: Vec<Shown<'_>> = Vec::new();
    for (k, m) in matches.iter().enumerate() {
        let new_file = k == 0 || !m.same_file(&matches[k - 1]);
        if new_file {
            if k > 0 {
                file.settle();
                page.files.push(std::mem::take(&mut file));
            }
            group = Group::start(k, recalled.runs(&m.path));
            file.path = paths.show(&m.path);
            file.source = m.path.to_path_buf();
        }
        block.clear();
        rows.clear();
        // `{"path":…,"matches":[],"context":[],"scopes":[],"omitted":N},`
        let mut structured = if new_file {
            json_len(&file.path) + 70
        } else {
            0
        };
        if new_file {
            if k > 0 {
                block.push('\n');
            }
            // A name with a newline must not forge lines: the text escapes it.
            block.push_str(&escape_for_display(&file.path));
            block.push('\n');
        }
        // With scopes, a new enclosing definition is named before the match's lines.
        let scope = scope_of(k);
        let scope_changed = scoped
            && (new_file && scope.is_some() || !new_file && key(scope) != key(scope_of(k - 1)));
        let header = match scope_changed {
            true => scope_line(scope),
            false => String::new(),
        };
        let mut trial = group.clone();
        trial.render(matches, m, numbers, &header, &mut block, &mut rows);
        structured += rows_cost(&rows, &file, scopes);
        if rooms.take(json_len(&block) - 2, structured) {
            text.push_str(&block);
            group = trial;
            keep(&mut file, &rows, scopes);
            file.omitted += m.omitted;
            page.shown += 1;
            continue;
        }
        if k == 0 {
            // Paging must progress: the first entry is shown, cut to the room.
            let cut = shrink(m, *rooms, numbers);
            let mut block = format!("{}\n", escape_for_display(&file.path));
            let mut rows = Vec::new();
            let mut alone = Group::start(0, recalled.runs(&m.path));
            alone.render(matches, &cut, numbers, &header, &mut block, &mut rows);
            text.push_str(&block);
            // The cut copy's lines are its own: the rows take copies.
            let rows: Vec<Shown<'a>> = rows.into_iter().map(Shown::owned).collect();
            keep(&mut file, &rows, scopes);
            file.omitted += cut.omitted;
            page.shown = 1;
            page.shrunk = true;
        }
        break;
    }
    if page.shown > 0 {
        text.push('\n');
    }
    // (A file whose first entry did not fit has its path only: it is not on this page.)
    file.settle();
    if file.has_matches() {
        page.files.push(file);
    }
    page
}

/// A line written for an entry: a matching line (with the entry whose scope it is in), a
/// context line, or the note standing for a run of lines shown before (to `unchanged`).
struct Shown<'a> {
    line: u64,
    /// Borrowed from the entry, as the structured rows hold it.
    text: Cow<'a, str>,
    /// For a matching line, the entry covering it.
    matched: Option<usize>,
    /// For the note, the run's last line.
    unchanged: Option<u64>,
}

impl Shown<'_> {
    /// The row with its text copied.
    fn owned(self) -> Shown<'static> {
        Shown {
            text: Cow::Owned(self.text.into_owned()),
            ..self
        }
    }
}

/// What `rows` add to `file`'s structured form, commas included: each matching row and
/// note, the context lines where they will be kept ([`FileMatchesOut::context_cost`]), and
/// the rows of the scopes they name that the file does not hold yet.
fn rows_cost(
    rows: &[Shown<'_>],
    file: &FileMatchesOut<'_>,
    scopes: &[Option<Definition>],
) -> usize {
    let mut new_scopes: Vec<(u64, &str)> = Vec::new();
    let lines = rows.iter().map(|row| match (row.unchanged, row.matched) {
        (Some(_), _) => Line::Unchanged,
        (None, Some(_)) => Line::Match(row.line),
        (None, None) => Line::Context(row.line, json_len(&row.text)),
    });
    let mut cost = file.context_cost(lines);
    for row in rows {
        if let Some(last) = row.unchanged {
            cost += 4 + digits(row.line) + digits(last);
            continue;
        }
        let Some(entry) = row.matched else {
            continue;
        };
        cost += 6 + digits(row.line) + json_len(&row.text);
        let Some(d) = scopes.get(entry).and_then(Option::as_ref) else {
            continue;
        };
        let held = file
            .scopes
            .iter()
            .any(|s| s.line == d.line && s.end_line == d.end_line);
        if !held && !new_scopes.contains(&(d.line, d.name.as_str())) {
            new_scopes.push((d.line, d.name.as_str()));
            cost += scope_cost(d);
        }
    }
    cost
}

/// Adds an entry's rows to its file: matching rows under their scope (or to `matches`),
/// context lines in the matching rows beside them.
fn keep<'a>(file: &mut FileMatchesOut<'a>, rows: &[Shown<'a>], scopes: &[Option<Definition>]) {
    for row in rows {
        if let Some(last) = row.unchanged {
            file.settle();
            file.unchanged.push((row.line, last));
            continue;
        }
        file.shown.push(row.line);
        let (line, text) = (row.line, row.text.clone());
        match row.matched {
            None => file.add_context(LineRow { line, text }),
            Some(entry) => file.add_match(scopes.get(entry).and_then(Option::as_ref), line, text),
        }
    }
}

/// The scope line written before a match whose enclosing definition differs from the
/// previous match's in the same file: `@@ method Parser::parse (12-40)`, like a diff hunk
/// header. Leaving every definition is said too, so no match looks scoped when it is not.
fn scope_line(def: Option<&Definition>) -> String {
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

/// What makes two scopes the same definition (the page's matches of one file).
fn key(def: Option<&Definition>) -> Option<(u64, u64, &str)> {
    def.map(|d| (d.line, d.end_line, d.name.as_str()))
}

/// The rendering state of the file being written.
#[derive(Clone, Default)]
struct Group {
    /// Index (in the page) of the file's first entry.
    first: usize,
    /// Last line written for this file.
    last: Option<u64>,
    /// Entries of this file whose match starts at or before the line being written.
    started: usize,
    /// Largest end line among those.
    match_end: u64,
    /// Runs of lines written as one "unchanged since shown" note.
    unchanged: Vec<(u64, u64)>,
}

impl Group {
    fn start(first: usize, unchanged: Vec<(u64, u64)>) -> Group {
        Group {
            first,
            last: None,
            started: first,
            match_end: 0,
            unchanged,
        }
    }

    /// Writes the lines of `m` not written yet, `header` (a scope line, or empty) before
    /// the first of them, after the `--` that separates it from the previous group, and
    /// lists them in `rows`. A line is marked as matching when any entry of the page's file
    /// covers it, whichever entry's context brings it.
    fn render<'m>(
        &mut self,
        page: &[GrepMatch],
        m: &'m GrepMatch,
        numbers: bool,
        header: &str,
        out: &mut String,
        rows: &mut Vec<Shown<'m>>,
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
            let previous = self.last.replace(line);
            while self.started < page.len()
                && page[self.started].same_file(&page[self.first])
                && page[self.started].line <= line
            {
                self.match_end = self.match_end.max(page[self.started].end_line);
                self.started += 1;
            }
            if let Some(&(first, last)) = self
                .unchanged
                .iter()
                .find(|(a, b)| *a <= line && line <= *b)
            {
                // The run's first line written here says it; the others go unsaid.
                if previous.is_none_or(|previous| previous < first) {
                    out.push_str(&shown::unchanged_note(first, last, ""));
                    let (text, matched, unchanged) = (Cow::Borrowed(""), None, Some(last));
                    rows.push(Shown {
                        line: first,
                        text,
                        matched,
                        unchanged,
                    });
                }
                continue;
            }
            let own = m.line <= line && line <= m.end_line;
            let is_match = self.match_end >= line || own;
            if numbers {
                let sep = if is_match { ':' } else { '-' };
                // (itoa, not `write!`: once per line shown.)
                out.push_str(itoa::Buffer::new().format(line));
                out.push(sep);
                out.push_str(text);
                out.push('\n');
            } else {
                out.push_str(text);
                out.push('\n');
            }
            // The last entry starting at or before this line (it, or an earlier one,
            // covers it).
            let matched = is_match.then(|| self.started.saturating_sub(1).max(self.first));
            rows.push(Shown {
                line,
                text: Cow::Borrowed(text),
                matched,
                unchanged: None,
            });
        }
        if m.omitted > 0 {
            out.push_str(&format!(
                "[… {} more lines of this match cut: over the output budget; ask for less context]\n",
                m.omitted
            ));
        }
    }
}

/// A copy of `m` whose text rendering and structured rows each fit in their room: context
/// lines are dropped from the far ends (after, then before) and counted in `omitted`, then
/// the line itself is cut around the match. (Measured on both forms together against
/// twice the smaller room: each line costs about the same in either.)
fn shrink(m: &GrepMatch, rooms: Rooms, numbers: bool) -> GrepMatch {
    let room = 2 * rooms.least();
    let mut cut = m.clone();
    let line_cost = |c: &search::ContextLine| {
        let number = if numbers { 21 } else { 0 };
        2 * json_len(&c.text) + number + 30
    };
    let path = m.path.display().to_string();
    let fixed = 2 * json_len(&path) + 300;
    let mut total = fixed + 2 * json_len(&m.text) + 80;
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
