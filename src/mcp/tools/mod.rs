//! The tool table: names, descriptions, annotations and argument structs (serde and
//! schemars live here, never in the domain), and argument decoding. What every handler
//! shares sits below the handlers: `context.rs` (the call, path resolution with access
//! checks, blocking work off the executor), `schema.rs` (schemas, annotations, lenient
//! numbers). One submodule per family of tools; each handler is a few lines
//! that call the domain and render its result. The dispatch ([`call`]) gives every error
//! answer its `structuredContent.error` (reason, path as sent, roots) before the budget
//! guard, and every output schema admits that object ([`accepting_errors`]).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::mcp::failure::Reason;
use crate::mcp::render::Answer;

mod args;
mod context;
mod dirs;
mod glob;
mod grep;
mod pool;
mod read;
mod roots;
mod schema;
mod search;
mod symbols;
mod writes;

pub(crate) use context::no_roots;
pub use context::{
    Asker, Call, Resolver, blocking, blocking_stoppable, resolve_checked, resolve_entry_checked,
};
pub(crate) use schema::{lenient, read_only_annotations, schema_of};

/// Tools that change files (hidden and refused with `--read-only`).
pub const WRITE_TOOLS: &[&str] = &["write_file", "edit_file", "create_directory", "move_file"];

/// Tools `tools/list` leaves out unless asked for (`--tools`): every tool offered costs
/// every session its description and schemas before the first call, and each of these does
/// what an offered tool does too (read_file per file; write_file with create_dirs;
/// list_directory with sizes, and read_file; list_directory and glob; grep with word and
/// scope) or serves diagnosis more than work (list_roots: errors name the roots). Called by
/// name, they still answer.
pub const OFF_BY_DEFAULT: &[&str] = &[
    "read_files",
    "create_directory",
    "file_info",
    "directory_tree",
    "list_roots",
    "references",
];

/// The name of every tool, in `tools/list` order.
pub fn names() -> Vec<String> {
    all_tools()
        .iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

/// Every tool, built once: the schemas come from schemars and are the same for the whole
/// process, so `tools/list` and every `tools/call` reuse them.
fn all_tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        let mut tools = vec![grep::tool(), glob::tool()];
        tools.push(roots::tool());
        tools.extend(read::tools());
        tools.push(search::tool());
        tools.extend(symbols::tools());
        tools.extend(dirs::tools());
        tools.extend(writes::tools());
        for tool in &mut tools {
            let mut input = Value::Object((*tool.input_schema).clone());
            schema::compact(&mut input, false);
            if let Value::Object(input) = input {
                tool.input_schema = Arc::new(input);
            }
            if let Some(schema) = &mut tool.output_schema {
                let mut output = Value::Object(accepting_errors(schema));
                schema::compact(&mut output, true);
                if let Value::Object(output) = output {
                    *schema = Arc::new(output);
                }
            }
        }
        tools
    })
}

/// An output schema that also accepts an error answer's structured content,
/// `{"error": {reason, path?, allowedRoots?}}`: clients validate `structuredContent`
/// against the schema even when `isError` is true (the TypeScript SDK does), so the
/// success fields are required only when there is no `error`.
fn accepting_errors(schema: &JsonObject) -> JsonObject {
    let mut schema = schema.clone();
    // (`path` and `allowedRoots` may come beside `reason`: README, "Errors a program can
    // read".)
    let error = json!({
        "type": "object",
        "properties": {"reason": {"type": "string"}},
        "required": ["reason"],
    });
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert("error".into(), error);
    }
    if let Some(required) = schema.remove("required") {
        schema.insert(
            "anyOf".into(),
            json!([{ "required": required }, { "required": ["error"] }]),
        );
    }
    schema
}

/// The tools this server offers (`tools/list`): all but the write tools with
/// `--read-only`, and those the configuration hides.
pub fn tool_list(config: &rootgrep_core::config::Config) -> Vec<Tool> {
    all_tools()
        .iter()
        .filter(|tool| !(config.read_only && WRITE_TOOLS.contains(&tool.name.as_ref())))
        .filter(|tool| !config.tools_hidden.iter().any(|name| *name == tool.name))
        .cloned()
        .collect()
}

/// True when `name` is a tool of this server (write tools included, so that a call in
/// read-only mode is refused with an explanation rather than "unknown tool").
pub fn is_known(name: &str) -> bool {
    all_tools().iter().any(|tool| tool.name == name)
}

/// Runs one tool.
pub async fn call(call: &Call<'_>, name: &str, args: JsonObject) -> Answer {
    macro_rules! run {
        ($handler:path) => {
            match parse(args) {
                Ok(args) => $handler(call, args).await,
                Err(answer) => answer,
            }
        };
    }
    let answer = match name {
        _ if call.session.config.read_only && WRITE_TOOLS.contains(&name) => Answer::refused(
            Reason::ReadOnly,
            format!(
                "{name} is disabled: this server runs with --read-only, so no files are changed"
            ),
        ),
        _ if call
            .session
            .config
            .tools_refused
            .iter()
            .any(|off| off == name) =>
        {
            Answer::refused(
                Reason::UnknownTool,
                format!("{name} is turned off on this server (--tools, --no-tools)"),
            )
        }
        "grep" => run!(grep::grep),
        "glob" => run!(glob::glob),
        "list_roots" => run!(roots::list_roots),
        "file_info" => run!(read::file_info),
        "read_file" => run!(read::read_file),
        "read_files" => run!(read::read_files),
        "search" => run!(search::search),
        "symbols" => run!(symbols::symbols),
        "outline" => run!(symbols::outline),
        "references" => run!(symbols::references),
        "list_directory" => run!(dirs::list_directory),
        "directory_tree" => run!(dirs::directory_tree),
        "write_file" => run!(writes::write_file),
        "edit_file" => run!(writes::edit_file),
        "create_directory" => run!(writes::create_directory),
        "move_file" => run!(writes::move_file),
        _ => Answer::refused(
            Reason::UnknownTool,
            format!("unknown tool {}", rootgrep_core::quote::echo(name)),
        ),
    };
    // An error says why in a field (`structuredContent.error`); then the last guard of
    // every answer: the whole result, that object included, within the output budget.
    answer.with_error_object(&call.roots).bounded(call.budget())
}

/// Decodes arguments, turning serde's complaint into an actionable tool error. The
/// complaint quotes input (argument names, values), so it is bounded and escaped: an
/// argument name that no parameter could have (over [`rootgrep_core::quote::ECHO_MAX_CHARS`], or
/// with control or bidi characters) is renamed to its echo before decoding (it is unknown
/// either way, and serde names it in "unknown field"), and the message is cut at
/// [`rootgrep_core::quote::DETAIL_MAX_CHARS`].
fn parse<T: DeserializeOwned>(mut args: JsonObject) -> Result<T, Answer> {
    use rootgrep_core::quote::{DETAIL_MAX_CHARS, cut, echo, escape_for_display};
    let odd: Vec<String> = args.keys().filter(|k| echo(k) != **k).cloned().collect();
    for key in odd {
        if let Some(value) = args.remove(&key) {
            args.insert(echo(&key), value);
        }
    }
    // serde_path_to_error names the offending parameter ("limit: invalid type…").
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|err| {
        let path = err.path().to_string();
        let message = if path == "." {
            format!("invalid arguments: {}", err.inner())
        } else {
            format!("invalid arguments: {path}: {}", err.inner())
        };
        Answer::error(escape_for_display(&cut(&message, DETAIL_MAX_CHARS)).into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way a description may write `n`: `100000`, `100,000`, or `1 TiB`.
    fn written(n: u64) -> Vec<String> {
        let digits = n.to_string();
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(c);
        }
        let mut forms = vec![digits, grouped];
        for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
            if n >= 1 << shift && n.is_multiple_of(1 << shift) {
                forms.push(format!("{} {unit}", n >> shift));
            }
        }
        forms
    }

    /// The `maximum` anywhere in a property's schema (an `anyOf` branch included).
    fn maximum(schema: &Value) -> Option<u64> {
        match schema {
            Value::Object(object) => object
                .get("maximum")
                .and_then(Value::as_u64)
                .or_else(|| object.values().find_map(maximum)),
            Value::Array(items) => items.iter().find_map(maximum),
            _ => None,
        }
    }

    #[test]
    fn descriptions_state_the_schema_maximum() {
        // Each limit is one constant: the schema's `maximum` comes from it, the clamp uses
        // it, and the description (a doc comment, which cannot name a constant) must say
        // the same number wherever it says "at most".
        let mut checked = 0;
        for tool in all_tools() {
            let properties = tool
                .input_schema
                .get("properties")
                .and_then(Value::as_object);
            for (name, property) in properties.into_iter().flatten() {
                let description = property["description"].as_str().unwrap_or("");
                let Some(max) = maximum(property) else {
                    continue;
                };
                if !description.contains("at most") {
                    continue;
                }
                // A number alone, not part of a longer one (`100` is not stated by `1000`
                // or `1,000`; a comma after it may end a clause: "at most 5000, larger…").
                let stated = |form: &String| {
                    description.match_indices(form.as_str()).any(|(at, _)| {
                        let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
                        let mut before = description[..at].chars().rev();
                        let mut after = description[at + form.len()..].chars();
                        let (b, a) = (before.next(), after.next());
                        let grouped_on = a == Some(',') && digit(after.next());
                        !digit(b) && b != Some(',') && !digit(a) && !grouped_on
                    })
                };
                assert!(
                    written(max).iter().any(stated),
                    "{}.{name}: the schema's maximum is {max}, the description says: \
                     {description}",
                    tool.name
                );
                checked += 1;
            }
        }
        // (Descriptions state the limits a model needs to know, head_limit and the like;
        // an offset's or a context's is the schema's `maximum` alone.)
        assert!(checked >= 14, "only {checked} limits checked");
    }
}
