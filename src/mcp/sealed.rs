//! Structured content carried through rmcp as JSON text. rmcp's `CallToolResult` holds its
//! structured content as a `serde_json::Value`, a tree with an allocation per string and
//! list; for a large answer (a full-output `grep`: tens of thousands of lines) building,
//! serializing and freeing that tree cost as much as the search. So a tool may serialize
//! its typed result once, straight to JSON text ([`crate::mcp::render::Structured::Json`]);
//! the text travels sealed in a one-key object ([`seal`]), which rmcp passes through
//! untouched (it is an object, as structured content must be), and the outbound writer
//! writes the text in its place ([`unseal`], [`splice`]). Nothing else sees the seal: every
//! result leaves the server through that writer.

use memchr::memmem;
use rmcp::model::ServerResult;
use serde_json::{Map, Value};

/// The seal's only key: not a field of any tool's output schema.
const KEY: &str = "io.rootgrep/structured-json";

/// What the writer serializes in the seal's place, to be replaced by the text.
const PLACEHOLDER: &[u8] = b"\"structuredContent\":{\"io.rootgrep/structured-json\":null}";

/// Structured content given as its JSON text (an object), sealed for the trip through rmcp.
pub fn seal(json: String) -> Value {
    let mut map = Map::with_capacity(1);
    map.insert(KEY.to_string(), Value::String(json));
    Value::Object(map)
}

/// Takes the sealed JSON text out of a tool result, leaving a placeholder for [`splice`].
pub fn unseal(result: &mut ServerResult) -> Option<String> {
    let ServerResult::CallToolResult(call) = result else {
        return None;
    };
    let Some(Value::Object(map)) = call.structured_content.as_mut() else {
        return None;
    };
    if map.len() != 1 {
        return None;
    }
    match map.get_mut(KEY)? {
        Value::String(json) => {
            let json = std::mem::take(json);
            map.insert(KEY.to_string(), Value::Null);
            Some(json)
        }
        _ => None,
    }
}

/// Bytes of a tool result's text content (what its serialized form holds besides the
/// sealed text, about), so the line can be allocated once.
pub fn text_len(result: &ServerResult) -> usize {
    match result {
        ServerResult::CallToolResult(call) => call
            .content
            .iter()
            .filter_map(|block| block.as_text())
            .map(|text| text.text.len())
            .sum(),
        _ => 0,
    }
}

/// Puts the JSON text in the placeholder's place in `line` (from `start`, where the
/// serialized result begins). False when the placeholder is not there (then nothing
/// changed). The placeholder cannot occur inside a string of the result: there every
/// quote is escaped, so the last occurrence is the key itself.
pub fn splice(line: &mut Vec<u8>, start: usize, json: &str) -> bool {
    let Some(at) = memmem::rfind(&line[start..], PLACEHOLDER) else {
        return false;
    };
    let value_at = start + at + b"\"structuredContent\":".len();
    let end = start + at + PLACEHOLDER.len();
    let tail = line.split_off(end);
    line.truncate(value_at);
    line.reserve(json.len() + tail.len());
    line.extend_from_slice(json.as_bytes());
    line.extend_from_slice(&tail);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock};

    #[test]
    fn a_sealed_result_is_written_as_if_it_held_the_tree() {
        let structured = serde_json::json!({"matches": [[1, "a \"quoted\" line"]], "total": 1});
        let text = "structuredContent\":{\"io.rootgrep/structured-json\":null} in a file";
        let mut plain = CallToolResult::default();
        plain.content = vec![ContentBlock::text(text)];
        plain.structured_content = Some(structured.clone());
        let mut sealed = CallToolResult::default();
        sealed.content = vec![ContentBlock::text(text)];
        sealed.structured_content = Some(seal(structured.to_string()));
        let expected = serde_json::to_vec(&ServerResult::CallToolResult(plain)).unwrap();
        let mut result = ServerResult::CallToolResult(sealed);
        let json = unseal(&mut result).expect("sealed");
        let mut line = b"{\"id\":1,\"result\":".to_vec();
        let start = line.len();
        serde_json::to_writer(&mut line, &result).unwrap();
        assert!(splice(&mut line, start, &json));
        assert_eq!(&line[start..], &expected[..]);
    }

    #[test]
    fn other_results_are_left_alone() {
        let mut result = ServerResult::CallToolResult(CallToolResult::default());
        assert!(unseal(&mut result).is_none());
        let mut line = b"{}".to_vec();
        assert!(!splice(&mut line, 0, "{}"));
        assert_eq!(line, b"{}");
    }
}
