//! Where matches start: the first match of a line (its column, and the window a long line
//! is cut to), and in a multiline block, the line each match starts and ends on, found in
//! one pass over the block.

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;

/// The byte range of the first match in a line, for the column and the cut window.
pub(super) fn find_first(matcher: &RegexMatcher, line: &[u8]) -> Option<(usize, usize)> {
    let found = matcher.find(line).ok().flatten()?;
    Some((found.start(), found.end()))
}

/// Where a match starts inside a multiline block (byte offsets into the block).
#[derive(Debug)]
pub(super) struct MatchStart {
    pub(super) line_index: usize,
    pub(super) end_line_index: usize,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// The first match starting on each line of `block`, with the line on which it ends.
/// Linear in the block: a block can be a whole file when matches touch each other.
pub(super) fn match_starts(matcher: &RegexMatcher, block: &[u8]) -> Vec<MatchStart> {
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
