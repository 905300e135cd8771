//! One file's part of a grep content page ([`FileMatchesOut`]): its matching rows, the
//! context lines joined to the matching row they follow or precede (a row of their own
//! only when none is beside them), the definitions with `scope`, and what the context
//! lines of an entry will cost before it is kept ([`FileMatchesOut::context_cost`]), so a
//! page is filled to what its rows take.

use std::borrow::Cow;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use crate::mcp::render::rows::{LineRow, MatchRow, ScopeRow};
use crate::mcp::render::serialized_len;
use rootgrep_core::symbols::extract::Definition;

/// One file's part of a content page: its lines as the text shows them, each once.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct FileMatchesOut<'a> {
    pub path: String,
    /// The matching lines (marked `:` in the text); with `scope`, those outside every
    /// definition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<MatchRow<'a>>,
    /// With `scope`: the definitions enclosing matching lines, each with its lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<ScopeRow<MatchRow<'a>>>,
    /// The context lines (marked `-`) with no matching row beside them to hold them
    /// (next to lines left out as shown before); the others are in their matching rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<LineRow<'a>>,
    /// Lines of matches (context, or the rest of a match spanning lines) left out because
    /// a match alone exceeds the output budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: u64,
    /// With `scope`: runs of lines this session showed before, the file unchanged since,
    /// each `[first, last]`, one note in the text (`repeat: true` shows them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchanged: Vec<(u64, u64)>,
    /// The file, and the lines the page shows of it: what the session remembers.
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) source: PathBuf,
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) shown: Vec<u64>,
    /// Context lines in a run not yet beside a matching row: the next one's `before` when
    /// it follows at once, else rows of `context`.
    #[serde(skip)]
    #[schemars(skip)]
    pending: Vec<LineRow<'a>>,
    /// The last matching row, when the last line kept is it or its `after`: where it is
    /// (`None`: in `matches`, else the scope's index) and that line.
    #[serde(skip)]
    #[schemars(skip)]
    tail: Option<(Option<usize>, u64)>,
}

impl<'a> FileMatchesOut<'a> {
    /// Whether the file holds a matching line, or a note for lines shown before.
    pub(crate) fn has_matches(&self) -> bool {
        !self.matches.is_empty() || !self.scopes.is_empty() || !self.unchanged.is_empty()
    }

    /// Keeps a context line (lines come in order): after the matching row it follows at
    /// once, else waiting for the one it precedes.
    pub(crate) fn add_context(&mut self, row: LineRow<'a>) {
        if let Some((at, end)) = self.tail
            && end + 1 == row.line
            && let Some(held) = self.tail_row_mut()
        {
            held.after.push(row.text);
            self.tail = Some((at, row.line));
            return;
        }
        if self.pending.last().is_some_and(|p| p.line + 1 != row.line) {
            self.settle();
        }
        self.tail = None;
        self.pending.push(row);
    }

    /// Keeps a matching line under its scope (or in `matches`), the context lines just
    /// before it as its `before`.
    pub(crate) fn add_match(&mut self, def: Option<&Definition>, line: u64, text: Cow<'a, str>) {
        let mut row = MatchRow {
            line,
            text,
            ..MatchRow::default()
        };
        if self.pending.last().is_some_and(|p| p.line + 1 == line) {
            row.before = self.pending.drain(..).map(|p| p.text).collect();
        }
        self.settle();
        let at = add_scoped(&mut self.matches, &mut self.scopes, def, row);
        self.tail = Some((at, line));
    }

    /// Context lines no matching row holds become rows of their own: at a gap, at a run
    /// shown before, and at the file's end.
    pub(crate) fn settle(&mut self) {
        self.context.append(&mut self.pending);
        self.tail = None;
    }

    /// The matching row context lines join next, if the last line kept is it or its
    /// `after`.
    fn tail_row_mut(&mut self) -> Option<&mut MatchRow<'a>> {
        match self.tail?.0 {
            None => self.matches.last_mut(),
            Some(k) => self.scopes.get_mut(k)?.lines.last_mut(),
        }
    }

    fn tail_row(&self) -> Option<&MatchRow<'a>> {
        match self.tail?.0 {
            None => self.matches.last(),
            Some(k) => self.scopes.get(k)?.lines.last(),
        }
    }

    /// What the context lines among `lines` (an entry's, in order) add to this file's
    /// structured form, brackets and commas included, joined as [`Self::add_context`] and
    /// [`Self::add_match`] will join them: in the matching row they follow (`,["a"]`, with
    /// `,[]` before it when the row has no `before`, then `,"b"`) or precede (`,["a","b"]`),
    /// else a row of their own, `[line,"a"],` (what a line waiting at the entry's end is
    /// charged: it may not find a matching row).
    pub(crate) fn context_cost(&self, lines: impl Iterator<Item = Line>) -> usize {
        let own_row = |(line, len): (u64, usize)| 6 + digits(line) + len;
        // The joining row: its last line, and whether it has `before` and `after` lines.
        let mut tail = (self.tail.zip(self.tail_row()))
            .map(|((_, end), row)| (end, !row.before.is_empty(), !row.after.is_empty()));
        let mut last_waiting = self.pending.last().map(|p| p.line);
        // This entry's lines waiting for a matching row (those of earlier entries were
        // charged as rows of their own already).
        let mut waiting: Vec<(u64, usize)> = Vec::new();
        let mut cost = 0;
        for line in lines {
            match line {
                Line::Unchanged => {
                    cost += waiting.drain(..).map(own_row).sum::<usize>();
                    (tail, last_waiting) = (None, None);
                }
                Line::Context(n, len) => {
                    if let Some((end, before, after)) = tail
                        && end + 1 == n
                    {
                        cost += len
                            + if after {
                                1
                            } else if before {
                                3
                            } else {
                                6
                            };
                        tail = Some((n, before, true));
                        continue;
                    }
                    if last_waiting.is_some_and(|last| last + 1 != n) {
                        cost += waiting.drain(..).map(own_row).sum::<usize>();
                    }
                    (tail, last_waiting) = (None, Some(n));
                    waiting.push((n, len));
                }
                Line::Match(n) => {
                    let joins = last_waiting.is_some_and(|last| last + 1 == n);
                    cost += match joins {
                        true => 2 + waiting.drain(..).map(|(_, len)| len + 1).sum::<usize>(),
                        false => waiting.drain(..).map(own_row).sum::<usize>(),
                    };
                    (tail, last_waiting) = (Some((n, joins, false)), None);
                }
            }
        }
        cost + waiting.into_iter().map(own_row).sum::<usize>()
    }
}

/// A line an entry adds to its file, as [`FileMatchesOut::context_cost`] reads it: a
/// matching line, a context line (with its text's JSON length), or a run shown before.
pub(crate) enum Line {
    Match(u64),
    Context(u64, usize),
    Unchanged,
}

/// Adds a matching line to `scopes` under `def` (a new row the first time it is named),
/// or to `outside` without one; returns where it went (`None`: `outside`, else the index
/// of its scope), last of its list.
pub(crate) fn add_scoped<R>(
    outside: &mut Vec<R>,
    scopes: &mut Vec<ScopeRow<R>>,
    def: Option<&Definition>,
    row: R,
) -> Option<usize> {
    let Some(d) = def else {
        outside.push(row);
        return None;
    };
    let name = d.qualified();
    match scopes
        .iter()
        .position(|s| s.line == d.line && s.end_line == d.end_line && s.name == name)
    {
        Some(k) => {
            scopes[k].lines.push(row);
            Some(k)
        }
        None => {
            scopes.push(ScopeRow {
                line: d.line,
                end_line: d.end_line,
                kind: d.kind.to_string(),
                name,
                lines: vec![row],
            });
            Some(scopes.len() - 1)
        }
    }
}

/// What a scope row costs besides its lines, serialized with its comma.
pub(crate) fn scope_cost(d: &Definition) -> usize {
    let row = ScopeRow::<LineRow> {
        line: d.line,
        end_line: d.end_line,
        kind: d.kind.to_string(),
        name: d.qualified(),
        lines: Vec::new(),
    };
    serialized_len(&row) + 1
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Decimal digits of `n`.
pub(crate) fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}
