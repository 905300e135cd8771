//! Turning domain results into what the model reads: compact text (within the output
//! budget, ending with one line that says how to get the rest) next to the structured
//! result, and the conversion of both into an MCP tool result.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// What a tool produced, before it becomes an MCP result.
#[derive(Debug, Default)]
pub struct Answer {
    pub text: String,
    pub structured: Option<Value>,
    pub images: Vec<(String, String)>, // (mime, base64 data)
    pub is_error: bool,
}

impl Answer {
    pub fn text(text: impl Into<String>) -> Answer {
        Answer {
            text: text.into(),
            ..Answer::default()
        }
    }

    /// A mistake the model can fix: an `isError` result with an actionable message.
    pub fn error(text: impl Into<String>) -> Answer {
        Answer {
            text: text.into(),
            is_error: true,
            ..Answer::default()
        }
    }

    pub fn with_structured(mut self, value: Value) -> Answer {
        self.structured = Some(value);
        self
    }

    pub fn into_result(self) -> CallToolResult {
        let mut content = Vec::new();
        if !self.text.is_empty() || self.images.is_empty() {
            content.push(json!({"type": "text", "text": self.text}));
        }
        for (mime, data) in self.images {
            content.push(json!({"type": "image", "data": data, "mimeType": mime}));
        }
        let mut result = json!({ "content": content });
        if let Some(structured) = self.structured {
            result["structuredContent"] = structured;
        }
        if self.is_error {
            result["isError"] = Value::Bool(true);
        }
        serde_json::from_value(result)
            .map(|mut result: CallToolResult| {
                // 2026-07-28 results need `resultType`; rmcp strips it for legacy peers.
                result.result_type = Some(rmcp::model::ResultType::COMPLETE);
                result
            })
            .unwrap_or_else(|err| {
                CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                    "internal error rendering the result: {err}"
                ))])
            })
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
