//! Turning domain results into what the model reads: compact text (within the output
//! budget, ending with one line that says how to get the rest) next to the structured
//! result, and the conversion of both into an MCP tool result.
//!
//! One budget per form: the text (JSON-escaped, with images and the result's envelope)
//! gets the whole `--max-output-bytes`, and the structured content, when there is one, its
//! own equal budget. A host shows the model one of them, so neither pays for the other;
//! a tool with a structured result cuts both at the same entry (same page, same
//! `next_offset`), so an answer holds at most two budgets' worth. [`Answer::bounded`] is
//! the guard every answer passes last, which cuts what a tool did not fit itself.
//!
//! Every error answer says why in a field: it carries a [`Failure`] (a reason code and the
//! argument as sent), which the dispatch turns into `structuredContent.error` next to the
//! text ([`Answer::with_error_object`]) before the budget guard, so the object counts.

pub mod dirs;
pub mod glob;
pub mod grep;
pub mod outline;
pub mod paths;
pub mod read;
pub mod references;
pub mod roots;
pub mod rows;
pub mod search;
pub mod symbols;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::mcp::failure::{Failure, Reason};
use rootgrep_core::roots::RootSet;

/// A tool's structured content: a JSON tree, or the JSON text of an object serialized
/// straight from the tool's typed result, which large answers use to skip building and
/// freeing a tree of every entry (it travels sealed, see [`crate::mcp::sealed`]).
#[derive(Debug)]
pub enum Structured {
    Tree(Value),
    Json(String),
}

impl Structured {
    /// The content as a tree (parsing the text form once).
    fn tree(&mut self) -> &mut Value {
        if let Structured::Json(json) = self {
            *self = Structured::Tree(serde_json::from_str(json).unwrap_or(Value::Null));
        }
        match self {
            Structured::Tree(value) => value,
            Structured::Json(_) => unreachable!("made a tree above"),
        }
    }

    /// The content as a tree, consumed.
    pub fn into_tree(mut self) -> Value {
        std::mem::take(self.tree())
    }
}

/// What a tool produced, before it becomes an MCP result.
#[derive(Debug, Default)]
pub struct Answer {
    pub text: String,
    pub structured: Option<Structured>,
    pub images: Vec<(String, String)>, // (mime, base64 data)
    pub is_error: bool,
    /// Why an error answer failed (reason code, argument as sent); `None` on success.
    pub failure: Option<(Reason, Option<String>)>,
    /// The tool already fitted text and structured content to the budget (measured as
    /// serialized), so [`Answer::bounded`] need not serialize it again to check.
    pub fitted: bool,
}

impl Answer {
    pub fn text(text: impl Into<String>) -> Answer {
        Answer {
            text: text.into(),
            ..Answer::default()
        }
    }

    /// A mistake the model can fix in its arguments: an `isError` result with an
    /// actionable message (reason `invalid_argument`).
    pub fn error(text: impl Into<String>) -> Answer {
        Answer::refused(Reason::InvalidArgument, text)
    }

    /// An `isError` result for `reason`.
    pub fn refused(reason: Reason, text: impl Into<String>) -> Answer {
        Answer {
            text: text.into(),
            is_error: true,
            failure: Some((reason, None)),
            ..Answer::default()
        }
    }

    /// The `isError` result of a failure: its text, its reason and the argument it names.
    pub fn failure(failure: Failure) -> Answer {
        Answer {
            text: failure.message,
            is_error: true,
            failure: Some((failure.reason, failure.sent)),
            ..Answer::default()
        }
    }

    /// The `isError` result of a domain error: its reason (see [`Failure::of`]) and text.
    pub fn failed<E>(err: &E) -> Answer
    where
        E: crate::mcp::hints::Worded,
        for<'a> &'a E: Into<Reason>,
    {
        Answer::failure(Failure::of(err))
    }

    /// Names the path argument (as the client sent it) an error answer is about.
    pub fn about(mut self, sent: &str) -> Answer {
        if let Some((_, path @ None)) = &mut self.failure {
            *path = Some(sent.to_string());
        }
        self
    }

    /// A request cancelled while it ran.
    pub fn cancelled() -> Answer {
        Answer::refused(Reason::Cancelled, "cancelled")
    }

    /// Adds `structuredContent.error` (`{reason, path?, allowedRoots?}`) to an error
    /// answer, beside any structured content it has. Every error answer is built with its
    /// reason; one without (a bug) says `internal`.
    pub fn with_error_object(mut self, roots: &RootSet) -> Answer {
        if !self.is_error {
            return self;
        }
        let (reason, sent) = self.failure.get_or_insert((Reason::Internal, None)).clone();
        let object = crate::mcp::failure::error_object(reason, sent.as_deref(), "path", roots);
        match self.structured.as_mut().map(Structured::tree) {
            Some(Value::Object(map)) => {
                map.insert("error".into(), object);
            }
            _ => self.structured = Some(Structured::Tree(json!({ "error": object }))),
        }
        // The object was added after the tool fitted its answer: the guard measures again.
        self.fitted = false;
        self
    }

    pub fn with_structured(mut self, value: Value) -> Answer {
        self.structured = Some(Structured::Tree(value));
        self
    }

    /// The structured content serialized from `value` (an object) as it is, no tree built.
    /// (Serialized into a buffer the size of the text and a quarter: structured content
    /// is at most 1.2 times the text's size, so it is rarely copied as it grows.)
    pub fn with_structured_json<T: serde::Serialize>(mut self, value: &T) -> Answer {
        let mut json = Vec::with_capacity(self.text.len() + self.text.len() / 4 + 256);
        self.structured = match serde_json::to_writer(&mut json, value) {
            // serde_json writes valid UTF-8.
            Ok(()) => String::from_utf8(json).ok().map(Structured::Json),
            Err(_) => None,
        };
        self
    }

    /// Marks the answer as fitted to the budget by its tool (see [`Answer::fitted`]).
    pub fn fitted(mut self) -> Answer {
        self.fitted = true;
        self
    }

    /// Bytes of the text form once serialized as a tool result: the text (escaped), the
    /// images, and the envelope around them.
    pub fn text_size(&self) -> usize {
        let images: usize = self
            .images
            .iter()
            .map(|(mime, data)| json_len(mime) + json_len(data) + 48)
            .sum();
        json_len(&self.text) + images + ENVELOPE
    }

    /// Bytes of the structured content once serialized, with its key (0 without one).
    pub fn structured_size(&self) -> usize {
        match &self.structured {
            None => 0,
            Some(Structured::Tree(value)) => structured_len(value),
            Some(Structured::Json(json)) => json.len() + STRUCTURED_KEY,
        }
    }

    /// Whether both forms are within `budget` bytes each (see [`Answer::bounded`]).
    pub fn fits(&self, budget: usize) -> bool {
        self.text_size() <= budget && self.structured_size() <= budget
    }

    /// The answer with each form cut to `budget` bytes when serialized (see
    /// [`Answer::text_size`], [`Answer::structured_size`]): the guard every answer passes
    /// last. Tools fit their own results, cutting both forms at the same entry; this guard
    /// only acts when one did not: it drops images from the end (saying so in the text)
    /// and cuts the text at a line; it cuts long strings of the structured content, then
    /// its longest lists from the end.
    pub fn bounded(mut self, budget: usize) -> Answer {
        if self.fitted && self.images.is_empty() {
            return self;
        }
        let mut dropped = 0;
        while !self.images.is_empty() && self.text_size() > budget {
            self.images.pop();
            dropped += 1;
        }
        if dropped > 0 {
            let note = format!(
                "[{dropped} image(s) not attached: over the output budget; read them one per call]"
            );
            if !self.text.is_empty() && !self.text.ends_with('\n') {
                self.text.push('\n');
            }
            self.text.push_str(&note);
        }
        if self.text_size() > budget {
            let others = self.text_size() - json_len(&self.text);
            let room = budget.saturating_sub(others).max(budget / 4);
            fit_escaped(
                &mut self.text,
                room,
                "[… output cut: over the output budget]",
            );
        }
        match self.structured.as_mut() {
            // Text already serialized is measured as it is; a tree is made only to cut it.
            Some(Structured::Json(json)) if json.len() + STRUCTURED_KEY <= budget => {}
            Some(structured) => bound_structured(structured.tree(), budget),
            None => {}
        }
        self
    }

    /// The MCP result, built field by field: a round trip through a JSON tree would copy
    /// every entry of a large answer once more (the structured content is moved, not copied).
    pub fn into_result(self) -> CallToolResult {
        let mut content = Vec::with_capacity(1 + self.images.len());
        if !self.text.is_empty() || self.images.is_empty() {
            content.push(ContentBlock::text(self.text));
        }
        for (mime, data) in self.images {
            content.push(ContentBlock::image(data, mime));
        }
        // `Default` is a complete result (2026-07-28 needs `resultType`; rmcp strips it for
        // legacy peers) with `isError` absent unless the answer is an error.
        let mut result = CallToolResult::default();
        result.content = content;
        result.structured_content = self.structured.map(|structured| match structured {
            Structured::Tree(value) => value,
            Structured::Json(json) => crate::mcp::sealed::seal(json),
        });
        result.is_error = self.is_error.then_some(true);
        result
    }
}

/// What is left of each form's budget while a page is filled: an entry goes in only when
/// its text and its structured form both fit in what their budgets leave, so both forms
/// hold the same entries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rooms {
    pub text: usize,
    pub structured: usize,
}

impl Rooms {
    /// The rooms of a `budget` per form, less `text` bytes kept for the text's fixed parts
    /// (envelope, last lines) and `structured` bytes for the structured content's.
    pub fn new(budget: usize, text: usize, structured: usize) -> Rooms {
        Rooms {
            text: budget.saturating_sub(text),
            structured: budget.saturating_sub(structured),
        }
    }

    /// Whether an entry costing `text` and `structured` bytes fits.
    pub fn fits(&self, text: usize, structured: usize) -> bool {
        text <= self.text && structured <= self.structured
    }

    /// Takes an entry's bytes when it fits; false (nothing taken) when it does not.
    pub fn take(&mut self, text: usize, structured: usize) -> bool {
        let fits = self.fits(text, structured);
        if fits {
            self.spend(text, structured);
        }
        fits
    }

    /// Takes an entry's bytes whether or not they fit (a first entry shown cut).
    pub fn spend(&mut self, text: usize, structured: usize) {
        self.text = self.text.saturating_sub(text);
        self.structured = self.structured.saturating_sub(structured);
    }

    /// The smaller of the two rooms.
    pub fn least(&self) -> usize {
        self.text.min(self.structured)
    }
}

/// Cuts `text` to at most `budget` bytes at a line boundary, appending `more` (one line
/// telling the model how to get the rest) when anything was cut. Returns whether it cut.
pub fn fit_to_budget(text: &mut String, budget: usize, more: &str) -> bool {
    if text.len() <= budget {
        return false;
    }
    let room = budget.saturating_sub(more.len() + 2);
    let mut cut = room.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(newline) = text[..cut].rfind('\n') {
        cut = newline + 1;
    }
    text.truncate(cut);
    if !text.ends_with('\n') && !text.is_empty() {
        text.push('\n');
    }
    text.push_str(more);
    true
}

/// Most skipped ignore files named in one answer; the rest are counted.
const MAX_IGNORE_NOTES: usize = 8;

/// The notes naming ignore files an answer's walks did not apply (`skipped ignore file X:
/// a FIFO, not a regular file`), at most [`MAX_IGNORE_NOTES`] (each at most ~600 bytes)
/// then one counting the rest, and what they cost in text and structured content together.
pub fn ignore_notes(skipped: &[rootgrep_core::ignores::SkippedIgnoreFile]) -> (Vec<String>, usize) {
    let mut notes: Vec<String> = skipped
        .iter()
        .take(MAX_IGNORE_NOTES)
        .map(|s| cut_escaped(&s.to_string(), 600))
        .collect();
    if skipped.len() > MAX_IGNORE_NOTES {
        notes.push(format!(
            "and {} more skipped ignore files",
            skipped.len() - MAX_IGNORE_NOTES
        ));
    }
    let cost = match notes.is_empty() {
        true => 0,
        false => notes.iter().map(|n| 2 * json_len(n) + 4).sum::<usize>() + 40,
    };
    (notes, cost)
}

/// What the result envelope adds around text and structured content, at most:
/// `{"content":[{"type":"text","text":…}],"isError":true,"resultType":"complete"}`.
pub const ENVELOPE: usize = 96;

/// Bytes of a value serialized as compact JSON (0 if it cannot be serialized): what one
/// entry of a structured result costs.
pub fn serialized_len<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// Length of `text` as a JSON string (quotes and escapes included).
pub fn json_len(text: &str) -> usize {
    // Every page measures each line it shows, so the escapes are counted in a way the
    // compiler vectorizes (byte-wide sums over chunks that cannot overflow them): each of
    // `"`, `\\` and the control characters escapes to at least two bytes; the control
    // characters without a short escape (`\u0001`) to six.
    let bytes = text.as_bytes();
    let escaped = count_bytes(bytes, |b| b < 0x20 || b == b'"' || b == b'\\');
    let long = match escaped {
        0 => 0,
        _ => count_bytes(bytes, |b| {
            b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x08 | 0x0c)
        }),
    };
    2 + bytes.len() + escaped + 4 * long
}

/// How many of `bytes` satisfy `test`.
fn count_bytes(bytes: &[u8], test: impl Fn(u8) -> bool + Copy) -> usize {
    bytes
        .chunks(255)
        .map(|chunk| {
            let hits = chunk.iter().fold(0u8, |n, &b| n + u8::from(test(b)));
            usize::from(hits)
        })
        .sum()
}

/// [`fit_to_budget`] measured in escaped bytes: cuts `text` at a line so that its JSON
/// form, with `more` appended, takes at most `budget` bytes. Returns whether it cut.
pub fn fit_escaped(text: &mut String, budget: usize, more: &str) -> bool {
    if json_len(text) <= budget {
        return false;
    }
    let room = budget.saturating_sub(json_len(more) + 1);
    let mut cut = escaped_prefix(text, room.saturating_sub(2));
    if let Some(newline) = text[..cut].rfind('\n') {
        cut = newline + 1;
    }
    text.truncate(cut);
    if !text.ends_with('\n') && !text.is_empty() {
        text.push('\n');
    }
    text.push_str(more);
    true
}

/// The start of `text` whose JSON form takes at most `room` bytes, followed by the usual
/// cut marker (`[… N chars cut …]`) when anything was cut: for a single entry (a path, a
/// line) larger than the budget, shown cut rather than not at all.
pub fn cut_escaped(text: &str, room: usize) -> String {
    if json_len(text) <= room {
        return text.to_string();
    }
    let cut = escaped_prefix(text, room.saturating_sub(2 + 24));
    let left = text[cut..].chars().count();
    format!(
        "{}{}",
        &text[..cut],
        rootgrep_core::search::lines::marker(left)
    )
}

/// The byte length of the longest prefix of `text` (whole characters) whose JSON-escaped
/// form, without quotes, takes at most `room` bytes.
fn escaped_prefix(text: &str, room: usize) -> usize {
    let mut used = 0;
    let mut cut = 0;
    for (at, c) in text.char_indices() {
        let mut buf = [0u8; 4];
        used += json_len(c.encode_utf8(&mut buf)) - 2;
        if used > room {
            break;
        }
        cut = at + c.len_utf8();
    }
    cut
}

/// Bytes the structured content's key adds to it (`,"structuredContent":`).
const STRUCTURED_KEY: usize = 22;

/// Bytes of structured content as serialized, with its key.
fn structured_len(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len()) + STRUCTURED_KEY
}

/// Cuts structured content to `budget` bytes as serialized: long strings first, then
/// items from the end of its longest lists, in proportion to the excess (one
/// serialization per round, not one per item).
fn bound_structured(structured: &mut Value, budget: usize) {
    let mut longest = 4096;
    while longest >= 16 && structured_len(structured) > budget {
        cut_strings(structured, longest);
        longest /= 2;
    }
    loop {
        let size = structured_len(structured);
        if size <= budget {
            break;
        }
        let excess = size - budget;
        if !drop_last_items(structured, |len| {
            (len * excess).div_ceil(size.max(1)).clamp(1, len)
        }) {
            break;
        }
    }
}

/// Cuts every string longer than `max` characters in `value`, with the usual marker.
fn cut_strings(value: &mut Value, max: usize) {
    match value {
        Value::String(s) if s.len() > max => {
            *s = rootgrep_core::search::lines::cut_around(s, 0, 0, max);
        }
        Value::Array(items) => items.iter_mut().for_each(|v| cut_strings(v, max)),
        Value::Object(map) => map.values_mut().for_each(|v| cut_strings(v, max)),
        _ => {}
    }
}

/// Drops the last `count(len)` items of the longest array in `value` (`len` items long);
/// false when no array has any.
fn drop_last_items(value: &mut Value, count: impl Fn(usize) -> usize) -> bool {
    fn longest(value: &Value) -> usize {
        match value {
            Value::Array(items) => items.iter().map(longest).fold(items.len(), usize::max),
            Value::Object(map) => map.values().map(longest).max().unwrap_or(0),
            _ => 0,
        }
    }
    fn cut(value: &mut Value, len: usize, keep: usize) -> bool {
        match value {
            Value::Array(items) if items.len() == len => {
                items.truncate(keep);
                true
            }
            Value::Array(items) => items.iter_mut().any(|v| cut(v, len, keep)),
            Value::Object(map) => map.values_mut().any(|v| cut(v, len, keep)),
            _ => false,
        }
    }
    let len = longest(value);
    len > 0 && cut(value, len, len - count(len))
}

/// Formats a byte count for people: `1.2 MiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// RFC 3339 time in UTC.
pub fn rfc3339(time: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The structured result's fields besides its entries, and the last text line, take at
/// most this many bytes (counts and stats are at most 20 digits each).
pub(crate) const FIXED: usize = 600;

/// `text` cut (with the usual marker) until `cost` of it fits in `room`: for a first entry
/// that alone exceeds the budget, which is shown cut rather than skipped.
/// The line after a page of `tool`'s `noun`: where the next page starts, or that `offset`
/// is past the end; nothing on a last page.
pub(crate) fn page_note(
    tool: &str,
    noun: &str,
    offset: usize,
    shown: usize,
    total: usize,
    next_offset: Option<usize>,
    text: &mut String,
) {
    if let Some(next) = next_offset {
        text.push_str(&format!(
            "[showing {}-{} of {total} {noun}; call {tool} with offset={next} for more]\n",
            offset + 1,
            offset + shown,
        ));
    } else if offset > 0 && shown == 0 {
        text.push_str(&format!(
            "[offset {offset} is past the end: {total} {noun} in total]\n"
        ));
    }
}

pub(crate) fn cut_to_fit(text: &str, room: usize, cost: impl Fn(&str) -> usize) -> String {
    let mut chars = text.chars().count();
    let mut cut = text.to_owned();
    while cost(&cut) > room && chars > 1 {
        chars /= 2;
        cut = rootgrep_core::search::lines::cut_around(text, 0, 0, chars);
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn budget_cuts_at_a_line_and_says_how_to_continue() {
        let mut text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let more = "[more: call again with offset=42]";
        assert!(fit_to_budget(&mut text, 200, more));
        assert!(text.len() <= 200);
        assert!(text.ends_with(more));
        let body = &text[..text.len() - more.len()];
        assert!(body.ends_with('\n'));
        let mut short = "ok\n".to_string();
        assert!(!fit_to_budget(&mut short, 200, more));
        assert_eq!(human_size(1536), "1.5 KiB");
    }

    #[test]
    fn json_len_counts_escapes() {
        assert_eq!(json_len("ab"), 4);
        assert_eq!(json_len("a\"\n"), 7);
        assert_eq!(json_len("\u{1}"), 8);
        let text = "a\"\\\n\u{1}é";
        assert_eq!(json_len(text), serde_json::to_string(text).unwrap().len());
        for b in 0u8..0x80 {
            let text = format!("x{}y", b as char);
            let serialized = serde_json::to_string(&text).unwrap().len();
            assert_eq!(json_len(&text), serialized, "byte {b:#x}");
        }
    }

    #[test]
    fn bounded_cuts_each_form_to_the_budget() {
        let text: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let items: Vec<Value> = (0..5000)
            .map(|i| json!({"path": format!("/p/{i}"), "text": "x".repeat(300)}))
            .collect();
        let answer = Answer::text(text).with_structured(json!({"files": items}));
        let bounded = answer.bounded(4096);
        let result = serde_json::to_value(bounded.into_result()).unwrap();
        let content = serde_json::to_string(&result["content"]).unwrap().len();
        let structured = serde_json::to_string(&result["structuredContent"])
            .unwrap()
            .len();
        assert!(content <= 4096 && content > 2048, "text {content} bytes");
        assert!(
            structured <= 4096 && structured > 2048,
            "structured {structured} bytes"
        );
        let images = Answer {
            text: "two images".into(),
            images: vec![("image/png".into(), "A".repeat(3000)); 2],
            ..Answer::default()
        }
        .bounded(4096);
        assert_eq!(images.images.len(), 1);
        assert!(images.text.contains("1 image(s) not attached"));
        let error = Answer::error("e".repeat(100_000)).bounded(4096);
        assert!(serde_json::to_string(&error.into_result()).unwrap().len() <= 4096 + 64);
    }
}
