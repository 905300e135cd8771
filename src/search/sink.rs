//! [`FileSink`]: the `grep_searcher::Sink` that turns one file's searcher callbacks into
//! entries — matches with their own context in content mode, a count otherwise.
//!
//! The searcher reports each line once (a line between two matches arrives once, as
//! "after" context of the first or "before" context of the second), but each of our
//! entries must stand alone with its own `before`/`after`, because paging may separate
//! neighbours. So the sink keeps a small ring of the last `before` lines it saw and a list
//! of entries still waiting for `after` lines, and feeds every line (context or matched)
//! to both.
//!
//! Memory: at most `keep` entries are built per file (the caller sets it from the bounded
//! collector, and to 0 when the file cannot make the page); beyond that, matches are only
//! counted. Cancellation is checked on every callback.

use std::collections::VecDeque;
use std::io;
use std::path::Path;

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkFinish, SinkMatch};

use super::control::Control;
use super::lines::{context_text, match_text};
use super::outcome::{ContextLine, GrepMatch};
use super::query::OutputMode;

/// The per-request settings a sink needs (shared by all files).
#[derive(Clone, Copy, Debug)]
pub struct SinkSettings<'a> {
    pub mode: OutputMode,
    pub matcher: &'a RegexMatcher,
    pub multiline: bool,
    pub before: usize,
    pub after: usize,
    pub max_line_chars: usize,
}

/// Collects one file's results.
pub struct FileSink<'a> {
    settings: SinkSettings<'a>,
    control: &'a Control,
    path: &'a Path,
    /// Most entries to build for this file.
    keep: usize,
    /// Stop at the first NUL (binary file found by walking) instead of searching on.
    discard_binary: bool,
    /// Built entries, in line order (at most `keep`).
    pub matches: Vec<GrepMatch>,
    /// Matching lines seen, built or not.
    pub match_lines: u64,
    pub bytes_searched: u64,
    pub binary: bool,
    pub cancelled: bool,
    /// The last `before` lines seen, for the `before` context of the next entry.
    recent: VecDeque<ContextLine>,
    /// Indices into `matches` still collecting `after` lines, with their last line wanted.
    pending: Vec<(usize, u64)>,
}

impl<'a> FileSink<'a> {
    pub fn new(
        settings: SinkSettings<'a>,
        control: &'a Control,
        path: &'a Path,
        keep: usize,
        discard_binary: bool,
    ) -> Self {
        Self {
            settings,
            control,
            path,
            keep,
            discard_binary,
            matches: Vec::new(),
            match_lines: 0,
            bytes_searched: 0,
            binary: false,
            cancelled: false,
            recent: VecDeque::with_capacity(settings.before),
            pending: Vec::new(),
        }
    }

    fn building(&self) -> bool {
        self.settings.mode == OutputMode::Content && self.matches.len() < self.keep
    }

    /// Whether lines still need to be fed to the ring or to pending entries.
    fn tracking_lines(&self) -> bool {
        self.building() || !self.pending.is_empty()
    }

    fn count_match_lines(&mut self, n: u64) {
        self.match_lines += n;
        for _ in 0..n {
            self.control.matched();
        }
    }

    /// Handles one line in order: it becomes `after` context of earlier entries, may start
    /// a new entry (`starts` = its end line and the match's byte range in the line), and
    /// becomes a candidate `before` line for later entries.
    fn on_line(
        &mut self,
        number: u64,
        bytes: &[u8],
        starts: Option<(u64, Option<(usize, usize)>)>,
    ) {
        if !self.tracking_lines() {
            return;
        }
        self.feed_pending(number, bytes);
        if let Some((end_line, found)) = starts
            && self.building()
        {
            self.start_entry(number, end_line, bytes, found);
        }
        self.push_recent(number, bytes);
    }

    fn feed_pending(&mut self, number: u64, bytes: &[u8]) {
        let max = self.settings.max_line_chars;
        let mut text = None;
        let matches = &mut self.matches;
        self.pending.retain(|&(index, last)| {
            let entry = &mut matches[index];
            if number > entry.line && number <= last {
                let text = text.get_or_insert_with(|| context_text(bytes, max)).clone();
                entry.after.push(ContextLine { line: number, text });
            }
            number < last
        });
    }

    fn push_recent(&mut self, number: u64, bytes: &[u8]) {
        if self.settings.before == 0 || !self.building() {
            return;
        }
        if self.recent.len() == self.settings.before {
            self.recent.pop_front();
        }
        let text = context_text(bytes, self.settings.max_line_chars);
        self.recent.push_back(ContextLine { line: number, text });
    }

    /// Builds the entry for a match starting on line `number` and ending on `end_line`.
    fn start_entry(
        &mut self,
        number: u64,
        end_line: u64,
        line: &[u8],
        found: Option<(usize, usize)>,
    ) {
        let (text, column) =
            match_text(line, found.map(|(s, e)| s..e), self.settings.max_line_chars);
        let lowest = number.saturating_sub(self.settings.before as u64);
        let before = self
            .recent
            .iter()
            .filter(|c| c.line >= lowest && c.line < number)
            .cloned();
        self.matches.push(GrepMatch {
            path: self.path.to_path_buf(),
            line: number,
            column,
            end_line,
            text,
            before: before.collect(),
            after: Vec::new(),
        });
        let last_wanted = end_line + self.settings.after as u64;
        if last_wanted > number {
            self.pending.push((self.matches.len() - 1, last_wanted));
        }
    }

    /// One line per event: the usual (not multiline) case.
    fn matched_line(&mut self, number: u64, line: &[u8]) {
        self.count_match_lines(1);
        if self.tracking_lines() {
            // Only a line that will become an entry needs its match located.
            let found = match self.building() {
                true => find_first(self.settings.matcher, line),
                false => None,
            };
            self.on_line(number, line, Some((number, found)));
        }
    }

    /// A multiline event: several lines, possibly several matches. One entry per line on
    /// which a match starts; its `end_line` is the line where that match ends.
    fn matched_block(&mut self, first: u64, block: &[u8]) {
        let starts = match_starts(self.settings.matcher, block);
        self.count_match_lines(starts.len() as u64);
        let mut starts = starts.into_iter().peekable();
        let mut offset = 0;
        for (i, line) in block.split_inclusive(|&b| b == b'\n').enumerate() {
            if !self.tracking_lines() {
                return;
            }
            let here = starts.next_if(|s| s.line_index == i).map(|s| {
                let found = (s.start - offset, (s.end - offset).min(line.len()));
                (first + s.end_line_index as u64, Some(found))
            });
            self.on_line(first + i as u64, line, here);
            offset += line.len();
        }
    }

    fn check_cancel(&mut self) -> bool {
        if self.control.is_cancelled() {
            self.cancelled = true;
        }
        self.cancelled
    }
}

/// The byte range of the first match in a line, for the column and the cut window.
fn find_first(matcher: &RegexMatcher, line: &[u8]) -> Option<(usize, usize)> {
    let found = matcher.find(line).ok().flatten()?;
    Some((found.start(), found.end()))
}

/// Where a match starts inside a multiline block (byte offsets into the block).
#[derive(Debug)]
struct MatchStart {
    line_index: usize,
    end_line_index: usize,
    start: usize,
    end: usize,
}

/// The first match starting on each line of `block`, with the line on which it ends.
/// Linear in the block: a block can be a whole file when matches touch each other.
fn match_starts(matcher: &RegexMatcher, block: &[u8]) -> Vec<MatchStart> {
    let mut lines = LineCounter {
        block,
        offset: 0,
        line: 0,
    };
    let mut starts: Vec<MatchStart> = Vec::new();
    let _ = matcher.find_iter(block, |m| {
        let line_index = lines.line_at(m.start());
        // A match ending right after a `\n` ends on the line that `\n` terminates.
        let end_line_index = lines.line_at(m.end().saturating_sub(1).max(m.start()));
        match starts.last_mut() {
            Some(last) if last.line_index == line_index => {
                last.end_line_index = last.end_line_index.max(end_line_index);
            }
            _ => starts.push(MatchStart {
                line_index,
                end_line_index,
                start: m.start(),
                end: m.end(),
            }),
        }
        true
    });
    if starts.is_empty() {
        // The searcher saw a match we cannot re-find in isolation; report its first line.
        let only = MatchStart {
            line_index: 0,
            end_line_index: 0,
            start: 0,
            end: 0,
        };
        starts.push(only);
    }
    starts
}

/// Line index (0-based) of byte offsets into one block, asked in non-decreasing order, so
/// each byte is scanned once.
struct LineCounter<'a> {
    block: &'a [u8],
    offset: usize,
    line: usize,
}

impl LineCounter<'_> {
    fn line_at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.block.len());
        if offset < self.offset {
            (self.offset, self.line) = (0, 0);
        }
        self.line += self.block[self.offset..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.offset = offset;
        self.line
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.check_cancel() {
            return Ok(false);
        }
        match self.settings.mode {
            OutputMode::FilesWithMatches => {
                self.count_match_lines(1);
                return Ok(false);
            }
            OutputMode::Count if !self.settings.multiline => self.count_match_lines(1),
            _ => {
                let number = mat.line_number().unwrap_or(1);
                if self.settings.multiline {
                    self.matched_block(number, mat.bytes());
                } else {
                    self.matched_line(number, mat.bytes());
                }
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.check_cancel() {
            return Ok(false);
        }
        if let Some(number) = ctx.line_number() {
            self.on_line(number, ctx.bytes(), None);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        if self.discard_binary {
            self.binary = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn finish(&mut self, _: &Searcher, finish: &SinkFinish) -> Result<(), io::Error> {
        self.bytes_searched = finish.byte_count();
        if self.discard_binary && finish.binary_byte_offset().is_some() {
            self.binary = true;
        }
        Ok(())
    }
}
