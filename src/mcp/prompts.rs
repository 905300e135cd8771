//! Prompts for everyday code work, built on the tools so the model starts with the facts
//! instead of a bare instruction: `explain_file` embeds the file, `find_usages` embeds the
//! search results for the symbol.

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{GetPromptResult, JsonObject, ListPromptsResult, Prompt};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::mcp::modern::ModernCall;
use crate::mcp::session::Session;
use crate::mcp::tools::{self, Call};
use rootgrep_core::roots::RootSet;

pub fn list() -> ListPromptsResult {
    let prompts: Vec<Prompt> = serde_json::from_value(json!([
        {
            "name": "explain_file",
            "title": "Explain a file",
            "description": "Explain what a file does, its main parts and how it fits in the \
                            project. The file's content is included.",
            "arguments": [
                {"name": "path", "description": "The file (absolute, or relative to the \
                  workspace roots)", "required": true}
            ]
        },
        {
            "name": "find_usages",
            "title": "Find usages of a symbol",
            "description": "Find where a symbol (function, type, variable) is defined and \
                            used, with the search results included.",
            "arguments": [
                {"name": "symbol", "description": "The identifier to look for", "required": true},
                {"name": "path", "description": "Directory or file to search (default: the \
                  whole workspace)", "required": false}
            ]
        }
    ]))
    .expect("static prompts are valid");
    ListPromptsResult::with_all_items(prompts)
}

fn argument<'a>(arguments: &'a Option<JsonObject>, name: &str) -> Option<&'a str> {
    arguments
        .as_ref()
        .and_then(|args| args.get(name))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|value| !value.is_empty())
}

fn required<'a>(arguments: &'a Option<JsonObject>, name: &str) -> Result<&'a str, McpError> {
    argument(arguments, name).ok_or_else(|| {
        McpError::invalid_params(format!("missing required argument {name:?}"), None)
    })
}

/// Runs a tool for a prompt and returns its text (errors included: the model should see
/// why, e.g. that the path is outside the roots).
async fn tool_text(
    session: &std::sync::Arc<Session>,
    ctx: &RequestContext<RoleServer>,
    roots: &std::sync::Arc<RootSet>,
    modern: Option<&ModernCall>,
    name: &str,
    args: Value,
) -> String {
    let call = Call {
        session,
        ctx,
        roots: roots.clone(),
        modern,
    };
    let Value::Object(args) = args else {
        return String::new();
    };
    tools::call(&call, name, args).await.text
}

pub async fn get(
    session: &std::sync::Arc<Session>,
    ctx: &RequestContext<RoleServer>,
    name: &str,
    arguments: &Option<JsonObject>,
    roots: std::sync::Arc<RootSet>,
    modern: Option<&ModernCall>,
) -> Result<GetPromptResult, McpError> {
    let (description, text) = match name {
        "explain_file" => {
            let path = required(arguments, "path")?;
            let content = tool_text(
                session,
                ctx,
                &roots,
                modern,
                "read_file",
                json!({ "path": path }),
            )
            .await;
            (
                format!("Explain {path}"),
                format!(
                    "Explain the file `{path}`: what it is for, its main parts (types, \
                     functions, sections) and how they work together, and how it fits into \
                     the project. Point out anything surprising or risky. Use the rootgrep \
                     tools (grep, read_file) to look up what it depends on when that helps.\n\n\
                     Content of `{path}` (from read_file):\n\n{content}"
                ),
            )
        }
        "find_usages" => {
            let symbol = required(arguments, "symbol")?;
            let mut args = json!({
                "pattern": symbol,
                "fixed_strings": true,
                "word": true,
                "output_mode": "content",
                "-C": 1,
                "head_limit": 100,
            });
            if let Some(path) = argument(arguments, "path") {
                args["path"] = Value::String(path.to_string());
            }
            let results = tool_text(session, ctx, &roots, modern, "grep", args).await;
            (
                format!("Usages of {symbol}"),
                format!(
                    "Find where `{symbol}` is defined and everywhere it is used. Group the \
                     usages by kind (definition, calls, imports, tests, docs) and say what \
                     each usage relies on. If the results below were cut, page through the \
                     rest with the grep tool (offset) before concluding.\n\n\
                     Search results (grep, whole word, fixed string):\n\n{results}"
                ),
            )
        }
        other => {
            return Err(McpError::invalid_params(
                format!(
                    "unknown prompt \"{}\"; available: explain_file, find_usages",
                    rootgrep_core::quote::echo(other)
                ),
                None,
            ));
        }
    };
    // `resultType` is required in 2026-07-28; rmcp strips it for legacy peers.
    serde_json::from_value(json!({
        "resultType": "complete",
        "description": description,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
    .map_err(|err| McpError::internal_error(format!("prompt failed: {err}"), None))
}
