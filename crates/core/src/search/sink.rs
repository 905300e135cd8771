//! [`FileSink`]: the `grep_searcher::Sink` that turns one file's searcher callbacks into
//! results, in one of two passes.
//!
//! **Keys** (the search pass, content mode): the searcher runs without context and the sink
//! records only the line numbers where matches start (at most `keep` per file; the rest are
//! counted). Retaining keys instead of entries is what keeps a search's memory independent
//! of `-A`/`-B`/`-C`: a kept key costs a few dozen bytes, whatever its context would be.
//!
//! **Entries** (the page pass): once the page is known, each of its files is searched again
//! with context, and the sink builds entries for exactly the wanted lines. The searcher
//! reports each line once (a line between two matches arrives once, as "after" context of
//! the first or "before" context of the second), but each entry must stand alone with its
//! own `before`/`after`, because paging may separate neighbours. So the sink keeps a ring
//! of the last `before` lines and a list of entries still waiting for `after` lines, and
//! feeds every line to both. Every stored line is charged to a byte allowance (the output
//! budget): once it is spent no entry starts (except the first, so paging always
//! progresses) and the lines still wanted are only counted in the entry's `omitted`.
//!
//! Without context (and not multiline) the search pass also keeps the text of each match
//! it records ([`SinkSettings::keeps_text`]): an entry is then its line alone, and the page
//! is built from the keys without searching its files again.
//!
//! Cancellation is checked on every callback.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::sync::Arc;

use grep_matcher::LineTerminator;
use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkFinish, SinkMatch,
};

use super::lines::{context_text, match_text};
use super::outcome::{ContextLine, GrepMatch};
use super::query::{GrepQuery, OutputMode};
use super::starts::{find_first, match_starts};
use crate::walk::Control;

/// Most bytes a searcher holds at once: the longest line searched (or, in multiline mode,
/// the largest file). Longer lines and larger multiline files are skipped and counted as
/// too large. It bounds each search thread's memory whatever the files, and it bounds the
/// one step that cannot be interrupted, a regex run over one buffer, so a cancel takes
/// effect within one such run.
pub(crate) const MAX_BUFFER: usize = 8 << 20;

/// The searcher of the search pass (`context: false`: content mode records only where
/// matches start) or of the page pass (`context: true`).
pub(crate) fn searcher(query: &GrepQuery, context: bool) -> Searcher {
    let content = query.mode == OutputMode::Content;
    SearcherBuilder::new()
        .line_number(content)
        .multi_line(query.multiline)
        .before_context(if context { query.before } else { 0 })
        .after_context(if context { query.after } else { 0 })
        .heap_limit(Some(MAX_BUFFER))
        .binary_detection(BinaryDetection::quit(b'\0'))
        .line_terminator(if query.multiline {
            LineTerminator::byte(b'\n')
        } else {
            // Must agree with the matcher's CRLF-aware `$` (see `build_matcher`).
            LineTerminator::crlf()
        })
        .build()
}

/// The per-request settings a sink needs (shared by all files).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SinkSettings<'a> {
    pub mode: OutputMode,
    pub matcher: &'a RegexMatcher,
    pub multiline: bool,
    pub before: usize,
    pub after: usize,
    pub max_line_chars: usize,
}

/// What the entries pass builds for one file: entries for the `wanted` lines (sorted),
/// within `room` bytes (see [`entry_cost`]). `first` says no entry was built yet for the
/// page, so the first wanted entry is built even when it alone exceeds the room.
#[derive(Debug)]
pub(crate) struct Build<'a> {
    pub wanted: &'a [u64],
    pub room: usize,
    pub first: bool,
}

/// Bytes charged for a stored line: text, numbers, punctuation (once: each form has a budget).
pub fn line_cost(text: &str) -> usize {
    text.len() + 8
}

/// Bytes charged for an entry besides its lines: its fields, and for a file's `first` its
/// path (an answer names a file once).
pub(crate) fn entry_cost(path: &Path, first: bool) -> usize {
    4 + usize::from(first) * (path.as_os_str().len() + 28)
}

/// Collects one file's results.
pub(crate) struct FileSink<'a> {
    settings: SinkSettings<'a>,
    control: &'a Control,
    path: &'a Path,
    /// Keys pass: most match starts to record for this file.
    keep: usize,
    /// Entries pass: what to build; `None` in the keys pass.
    build: Option<Build<'a>>,
    /// Entries pass: index into `build.wanted` of the next line to build.
    next_wanted: usize,
    /// Entries pass: a charge did not fit (an entry or a line was left out).
    full: bool,
    /// Entries pass: bytes charged so far, and the least starting room with which this
    /// file's pass would have made every decision the same way (see [`FileSink::required`]).
    charged: usize,
    required: usize,
    /// Entries pass: lines seen and their charged cost, for the average line cost.
    lines_seen: u64,
    line_bytes: u64,
    /// Stop at the first NUL (binary file found by walking) instead of searching on.
    discard_binary: bool,
    /// Keys pass: lines where recorded matches start, in order (at most `keep`).
    pub starts: Vec<u64>,
    /// Keys pass, when the settings keep text: the text and column of the first recorded
    /// lines, while `text_room` lasts (a prefix of `starts`).
    pub texts: Vec<(String, u64)>,
    /// Keys pass: bytes of text still to keep (see [`FileSink::keep_text`]); 0 keeps none.
    pub text_room: usize,
    /// Entries pass: built entries, in line order.
    pub matches: Vec<GrepMatch>,
    /// Entries pass: the path the entries share, made with the first.
    entry_path: Option<Arc<Path>>,
    /// Matching lines seen, recorded or not.
    pub match_lines: u64,
    pub bytes_searched: u64,
    pub binary: bool,
    pub cancelled: bool,
    /// The last `before` lines seen, for the `before` context of the next entry.
    recent: VecDeque<ContextLine>,
    /// Indices into `matches` still collecting `after` lines, with their last line wanted.
    pending: Vec<(usize, u64)>,
}

impl SinkSettings<'_> {
    /// Whether the search pass keeps each recorded match's text and column: when an entry
    /// is its matching line and nothing else (content mode, no context, not multiline).
    pub(crate) fn keeps_text(&self) -> bool {
        self.mode == OutputMode::Content && !self.multiline && self.before == 0 && self.after == 0
    }
}

impl<'a> FileSink<'a> {
    /// A sink for the search pass (keys, counts, or files with matches).
    pub fn keys(
        settings: SinkSettings<'a>,
        control: &'a Control,
        path: &'a Path,
        keep: usize,
        discard_binary: bool,
    ) -> Self {
        Self::new(settings, control, path, keep, None, discard_binary)
    }

    /// Keys pass: keeps the text of recorded lines (when the settings allow it) up to `room`
    /// bytes, then none: what a thread keeps is bounded by the page's allowance, not by the
    /// number of matches a page may need.
    pub(crate) fn keep_text(mut self, room: usize) -> Self {
        self.text_room = room;
        self
    }

    /// A sink for the page pass: builds the entries of `build.wanted`.
    pub fn entries(
        settings: SinkSettings<'a>,
        control: &'a Control,
        path: &'a Path,
        build: Build<'a>,
        discard_binary: bool,
    ) -> Self {
        Self::new(settings, control, path, 0, Some(build), discard_binary)
    }

    fn new(
        settings: SinkSettings<'a>,
        control: &'a Control,
        path: &'a Path,
        keep: usize,
        build: Option<Build<'a>>,
        discard_binary: bool,
    ) -> Self {
        Self {
            settings,
            control,
            path,
            keep,
            build,
            next_wanted: 0,
            full: false,
            charged: 0,
            required: 0,
            lines_seen: 0,
            line_bytes: 0,
            discard_binary,
            starts: Vec::new(),
            texts: Vec::new(),
            text_room: 0,
            matches: Vec::new(),
            entry_path: None,
            match_lines: 0,
            bytes_searched: 0,
            binary: false,
            cancelled: false,
            // Not `with_capacity(before)`: `before` is the caller's number, the ring only
            // ever holds lines that exist.
            recent: VecDeque::new(),
            pending: Vec::new(),
        }
    }

    /// The file's path, one allocation for all its entries.
    fn shared_path(&mut self) -> Arc<Path> {
        self.entry_path
            .get_or_insert_with(|| Arc::from(self.path))
            .clone()
    }

    /// Entries pass: whether a wanted line is still to come.
    fn building(&self) -> bool {
        self.build
            .as_ref()
            .is_some_and(|b| self.next_wanted < b.wanted.len())
    }

    /// Whether lines still need to be fed to the ring or to pending entries.
    fn tracking_lines(&self) -> bool {
        self.building() || !self.pending.is_empty()
    }

    /// Entries pass: everything wanted is built and complete; the search can stop.
    fn done(&self) -> bool {
        self.build.is_some() && !self.tracking_lines()
    }

    /// Charges `cost` bytes to the allowance; false when it does not fit.
    fn charge(&mut self, cost: usize) -> bool {
        let Some(build) = self.build.as_mut() else {
            return false;
        };
        if cost > build.room {
            self.full = true;
            return false;
        }
        build.room -= cost;
        self.charged += cost;
        self.required = self.required.max(self.charged);
        true
    }

    fn count_match_lines(&mut self, n: u64) {
        self.match_lines += n;
        if self.build.is_some() {
            return; // the search pass counted them already
        }
        for _ in 0..n {
            self.control.matched();
        }
    }

    /// Entries pass: the allowance left, and whether it ran out.
    pub(crate) fn allowance(&self) -> (usize, bool) {
        (self.build.as_ref().map_or(0, |b| b.room), self.full)
    }

    /// Entries pass, when the allowance did not run out: the least starting room with which
    /// every charge and every look-ahead (`room_for_pending`) would have passed too, so the
    /// pass would have built exactly the same entries. What a file built speculatively with
    /// a larger room can be kept by a caller that has at least this much left.
    pub fn required(&self) -> usize {
        self.required
    }

    /// Keys pass: records a match starting on line `number` (the `line`'s bytes).
    fn record_start(&mut self, number: u64, line: &[u8]) {
        if self.starts.len() < self.keep {
            self.starts.push(number);
            // Texts stay a prefix of the starts: once one does not fit, none is kept.
            let kept_all = self.texts.len() + 1 == self.starts.len();
            if self.text_room > 0 && kept_all && self.settings.keeps_text() {
                let found = find_first(self.settings.matcher, line);
                let max = self.settings.max_line_chars;
                let (text, column) = match_text(line, found.map(|(s, e)| s..e), max);
                let cost = text.len() + 48; // the text, its String and the key's share
                match cost <= self.text_room {
                    true => {
                        self.text_room -= cost;
                        self.texts.push((text, column));
                    }
                    false => self.text_room = 0,
                }
            }
        }
    }

    /// Entries pass: handles one line in order. It becomes `after` context of earlier
    /// entries, may start a new entry (`starts` = its end line and the match's byte range
    /// in the line) when it is the next wanted line, and becomes a candidate `before` line
    /// for later entries.
    fn on_line(
        &mut self,
        number: u64,
        bytes: &[u8],
        starts: Option<(u64, Option<(usize, usize)>)>,
    ) {
        if !self.tracking_lines() {
            return;
        }
        self.lines_seen += 1;
        let stored = match self.settings.max_line_chars {
            0 => bytes.len(),
            max => bytes.len().min(4 * max), // what a cut line keeps, at most
        };
        self.line_bytes += 2 * stored as u64 + 32;
        self.feed_pending(number, bytes);
        if let Some((end_line, found)) = starts {
            self.maybe_start(number, end_line, bytes, found);
        }
        self.push_recent(number, bytes);
    }

    fn maybe_start(
        &mut self,
        number: u64,
        end_line: u64,
        bytes: &[u8],
        found: Option<(usize, usize)>,
    ) {
        let Some(build) = self.build.as_ref() else {
            return;
        };
        let wanted = build.wanted;
        while self.next_wanted < wanted.len() && wanted[self.next_wanted] < number {
            // A wanted line that no longer starts a match (the file changed): skip it.
            self.next_wanted += 1;
        }
        if wanted.get(self.next_wanted) != Some(&number) {
            return;
        }
        if !self.room_for_pending(number) {
            // The entries still collecting context would not get their lines: complete
            // them and end the page here, rather than start more entries that would
            // share the allowance and all come out cut.
            self.next_wanted = wanted.len();
            self.full = true;
            return;
        }
        self.next_wanted += 1;
        self.start_entry(number, end_line, bytes, found);
    }

    /// Whether the allowance covers the lines the pending entries still want after line
    /// `number` (estimated at the average cost of the lines seen so far).
    fn room_for_pending(&mut self, number: u64) -> bool {
        let Some(build) = self.build.as_ref() else {
            return true;
        };
        let average = match self.lines_seen {
            0 => 64,
            n => (self.line_bytes / n).max(32),
        };
        let need = self.pending.iter().fold(0u64, |need, &(_, last)| {
            need.saturating_add(last.saturating_sub(number).saturating_mul(average))
        });
        let fits = need <= build.room as u64;
        if fits {
            let need = usize::try_from(need).unwrap_or(usize::MAX);
            self.required = self.required.max(self.charged.saturating_add(need));
        }
        fits
    }

    fn feed_pending(&mut self, number: u64, bytes: &[u8]) {
        let max = self.settings.max_line_chars;
        let mut text: Option<String> = None;
        let mut pending = std::mem::take(&mut self.pending);
        pending.retain(|&(index, last)| {
            if number > self.matches[index].line && number <= last {
                let text = text.get_or_insert_with(|| context_text(bytes, max));
                let cost = line_cost(text);
                let entry_full = self.matches[index].omitted > 0;
                if !entry_full && self.charge(cost) {
                    let text = text.clone();
                    self.matches[index]
                        .after
                        .push(ContextLine { line: number, text });
                } else {
                    self.matches[index].omitted += 1;
                }
            }
            number < last
        });
        self.pending = pending;
    }

    fn push_recent(&mut self, number: u64, bytes: &[u8]) {
        if self.settings.before == 0 || !self.building() {
            return;
        }
        if self.recent.len() >= self.settings.before {
            self.recent.pop_front();
        }
        let text = context_text(bytes, self.settings.max_line_chars);
        self.recent.push_back(ContextLine { line: number, text });
    }

    /// Builds the entry for a match starting on line `number` and ending on `end_line`,
    /// when the allowance has room for it (or it is the page's first entry).
    fn start_entry(
        &mut self,
        number: u64,
        end_line: u64,
        line: &[u8],
        found: Option<(usize, usize)>,
    ) {
        let (text, column) =
            match_text(line, found.map(|(s, e)| s..e), self.settings.max_line_chars);
        let cost = entry_cost(self.path, self.matches.is_empty()) + line_cost(&text);
        let first = self.build.as_ref().is_some_and(|b| b.first) && self.matches.is_empty();
        if !self.charge(cost) {
            if !first {
                // No room: this entry and every later one wait for the next page.
                if let Some(build) = self.build.as_mut() {
                    self.next_wanted = build.wanted.len();
                    build.room = 0;
                }
                return;
            }
            if let Some(build) = self.build.as_mut() {
                build.room = 0;
            }
        }
        // Nearest lines first, so a cut keeps the lines next to the match.
        let lowest = number.saturating_sub(self.settings.before as u64);
        let mut before = Vec::new();
        let mut omitted = 0;
        let recent = std::mem::take(&mut self.recent);
        for ctx in recent.iter().rev() {
            if ctx.line < lowest || ctx.line >= number {
                continue;
            }
            if omitted == 0 && self.charge(line_cost(&ctx.text)) {
                before.push(ctx.clone());
            } else {
                omitted += 1;
            }
        }
        self.recent = recent;
        before.reverse();
        let path = self.shared_path();
        self.matches.push(GrepMatch {
            path,
            line: number,
            column,
            end_line,
            text,
            before,
            after: Vec::new(),
            omitted,
        });
        let last_wanted = end_line.saturating_add(self.settings.after as u64);
        if last_wanted > number {
            self.pending.push((self.matches.len() - 1, last_wanted));
        }
    }

    /// One line per event: the usual (not multiline) case.
    fn matched_line(&mut self, number: u64, line: &[u8]) {
        self.count_match_lines(1);
        if self.build.is_none() {
            self.record_start(number, line);
            return;
        }
        if self.tracking_lines() {
            // Only a line that may become an entry needs its match located.
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
        if self.build.is_none() {
            for start in &starts {
                // (Multiline: the text is never kept, the page pass builds the entries.)
                self.record_start(first + start.line_index as u64, &[]);
            }
            return;
        }
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
        Ok(!self.done())
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.check_cancel() {
            return Ok(false);
        }
        if let Some(number) = ctx.line_number() {
            self.on_line(number, ctx.bytes(), None);
        }
        Ok(!self.done())
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
