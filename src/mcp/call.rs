//! `rootgrep call <TOOL> [ARGS_JSON] [DIR]...`: runs one tool through the very server code
//! a host talks to — an in-process MCP session over in-memory pipes — and returns the
//! answer's text (or, with `--json`, its structured result) for `main` to print. The
//! quickest way for a person to try a tool, and proof that the CLI and the server cannot
//! drift apart. Nothing here writes to stdout.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use rootgrep_core::config::Config;

/// What one call produced.
pub struct CallOutput {
    /// The text to show (ends with a newline).
    pub text: String,
    /// The tool reported an error (`isError`).
    pub is_error: bool,
}

/// Runs the tool; `Err` is a usage or transport problem to report on stderr.
pub async fn run(
    config: Config,
    tool: &str,
    args_json: &str,
    json_output: bool,
) -> Result<CallOutput, String> {
    let arguments: Value = match serde_json::from_str(args_json) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => return fail("ARGS_JSON must be a JSON object, e.g. '{\"pattern\":\"main\"}'"),
        Err(err) => return fail(&format!("ARGS_JSON is not valid JSON: {err}")),
    };
    let (client_out, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_in) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(super::serve(config, server_in, server_out));
    let mut writer = client_out;
    let mut lines = BufReader::new(client_in).lines();
    let messages = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"rootgrep-call","version":env!("CARGO_PKG_VERSION")}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":tool,"arguments":arguments}}),
    ];
    for message in messages {
        let mut line = message.to_string();
        line.push('\n');
        if writer.write_all(line.as_bytes()).await.is_err() {
            return fail("the in-process server stopped unexpectedly");
        }
    }
    let response = loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if value.get("id") == Some(&json!(2)) {
                    break value;
                }
            }
            _ => return fail("the in-process server closed without answering"),
        }
    };
    drop(writer);
    let _ = server.await;
    if let Some(error) = response.get("error") {
        return fail(
            error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error"),
        );
    }
    let result = &response["result"];
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let output = if json_output {
        let shown = result.get("structuredContent").unwrap_or(result);
        serde_json::to_string_pretty(shown).unwrap_or_default() + "\n"
    } else {
        let mut text = String::new();
        for block in result["content"].as_array().into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => text.push_str(block["text"].as_str().unwrap_or("")),
                Some("image") => text.push_str(&format!(
                    "[image: {}]\n",
                    block["mimeType"].as_str().unwrap_or("?")
                )),
                _ => {}
            }
        }
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    };
    Ok(CallOutput {
        text: output,
        is_error,
    })
}

fn fail(message: &str) -> Result<CallOutput, String> {
    Err(message.to_string())
}
