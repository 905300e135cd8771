//! The tool table: names, descriptions, annotations and argument structs (serde and
//! schemars live here, never in the domain), plus the helpers every handler shares:
//! argument decoding, path resolution with access checks, and running blocking domain work
//! off the async executor. One submodule per family of tools; each handler is a few lines
//! that call the domain and render its result. The dispatch ([`call`]) gives every error
//! answer its `structuredContent.error` (reason, path as sent, roots) before the budget
//! guard, and every output schema admits that object ([`accepting_errors`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::RoleServer;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::access::Access;
use crate::mcp::ask;
use crate::mcp::failure::{Failure, Reason};
use crate::mcp::render::Answer;
use crate::mcp::session::Session;
use crate::roots::{Resolved, RootSet, resolve};

mod args;
mod dirs;
mod glob;
mod grep;
mod pool;
mod read;
mod roots;
mod symbols;
mod writes;

/// Tools that change files (hidden and refused with `--read-only`).
pub const WRITE_TOOLS: &[&str] = &["write_file", "edit_file", "create_directory", "move_file"];

/// Everything a tool handler needs.
pub struct Call<'a> {
    pub session: &'a Arc<Session>,
    pub ctx: &'a RequestContext<RoleServer>,
    pub roots: Arc<RootSet>,
    /// Set for 2026-07-28 requests: permission questions become `input_required`.
    pub modern: Option<&'a crate::mcp::modern::ModernCall>,
}

impl Call<'_> {
    pub fn budget(&self) -> usize {
        self.session.config.max_output_bytes
    }

    /// The live file index (none with `--no-watch` or in `rootgrep call`).
    pub fn file_index(&self) -> Option<Arc<crate::index::FileIndex>> {
        self.session.live.as_ref().map(|live| live.index.clone())
    }

    /// The live symbol index (none without the watcher, and on Windows for now).
    pub fn symbol_index(&self) -> Option<Arc<crate::symbols::SymbolIndex>> {
        self.session
            .live
            .as_ref()
            .and_then(|live| live.symbols.clone())
    }
}

/// The JSON schema of an argument or result struct, inlined (no `$ref`: some clients do
/// not follow them) and without a title (the tool's description says what it is).
pub(crate) fn schema_of<T: JsonSchema>() -> Arc<JsonObject> {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|settings| {
        settings.inline_subschemas = true;
    });
    let schema = schemars::SchemaGenerator::new(settings).into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or_else(|_| json!({"type": "object"}));
    if let Some(object) = value.as_object_mut() {
        object.remove("title");
        object.remove("$schema");
        // Unknown parameters are refused by the server with a precise message; leaving
        // them out of the schema lets the documented aliases (`file_path`, `-i`'s
        // `case_insensitive`, …) pass clients that validate arguments against it.
        object.remove("additionalProperties");
    }
    // schemars marks integers with formats such as "uint" that JSON Schema does not define;
    // validators in Node hosts warn about each one. `minimum: 0` says what matters.
    strip_numeric_formats(&mut value);
    match value {
        Value::Object(object) => Arc::new(object),
        _ => Arc::new(JsonObject::new()),
    }
}

fn strip_numeric_formats(value: &mut Value) {
    match value {
        Value::Object(object) => {
            let numeric = object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| {
                    matches!(
                        f,
                        "uint"
                            | "uint8"
                            | "uint16"
                            | "uint32"
                            | "uint64"
                            | "int"
                            | "int8"
                            | "int16"
                            | "int32"
                            | "int64"
                            | "float"
                            | "double"
                    )
                });
            if numeric {
                object.remove("format");
            }
            for child in object.values_mut() {
                strip_numeric_formats(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_numeric_formats),
        _ => {}
    }
}

pub(crate) fn read_only_annotations(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false)
}

pub(crate) fn write_annotations(
    title: &str,
    destructive: bool,
    idempotent: bool,
) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(false)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(false)
}

/// Every tool, built once: the schemas come from schemars and are the same for the whole
/// process, so `tools/list` and every `tools/call` reuse them.
fn all_tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        let mut tools = vec![grep::tool(), glob::tool()];
        tools.push(roots::tool());
        tools.extend(read::tools());
        tools.extend(symbols::tools());
        tools.extend(dirs::tools());
        tools.extend(writes::tools());
        for tool in &mut tools {
            if let Some(schema) = &mut tool.output_schema {
                *schema = Arc::new(accepting_errors(schema));
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
    let error = json!({
        "type": "object",
        "description": "Only when isError is true: why the call failed (README: Errors a \
                        program can read)",
        "properties": {
            "reason": {"type": "string"},
            "path": {"type": "string"},
            "allowedRoots": {"type": "array", "items": {"type": "string"}},
        },
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

/// The tools this server offers.
pub fn tool_list(read_only: bool) -> Vec<Tool> {
    all_tools()
        .iter()
        .filter(|tool| !(read_only && WRITE_TOOLS.contains(&tool.name.as_ref())))
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
        "grep" => run!(grep::grep),
        "glob" => run!(glob::glob),
        "list_roots" => run!(roots::list_roots),
        "file_info" => run!(read::file_info),
        "read_file" => run!(read::read_file),
        "read_files" => run!(read::read_files),
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
            format!("unknown tool {}", crate::quote::echo(name)),
        ),
    };
    // An error says why in a field (`structuredContent.error`); then the last guard of
    // every answer: the whole result, that object included, within the output budget.
    answer.with_error_object(&call.roots).bounded(call.budget())
}

/// Decodes arguments, turning serde's complaint into an actionable tool error. The
/// complaint quotes input (argument names, values), so it is bounded and escaped: an
/// argument name that no parameter could have (over [`crate::quote::ECHO_MAX_CHARS`], or
/// with control or bidi characters) is renamed to its echo before decoding (it is unknown
/// either way, and serde names it in "unknown field"), and the message is cut at
/// [`crate::quote::DETAIL_MAX_CHARS`].
fn parse<T: DeserializeOwned>(mut args: JsonObject) -> Result<T, Answer> {
    use crate::quote::{DETAIL_MAX_CHARS, cut, echo, escape_for_display};
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

/// Resolves a path argument and checks (or asks for) access. `Err` is the tool error.
pub async fn resolve_checked(
    call: &Call<'_>,
    arg: &str,
    access: Access,
) -> Result<Resolved, Answer> {
    checked_path(call, arg, access, resolve)
        .await
        .map_err(Answer::failure)
}

/// Like [`resolve_checked`] with [`crate::roots::resolve_entry`] (the final symlink is not
/// followed).
pub async fn resolve_entry_checked(
    call: &Call<'_>,
    arg: &str,
    access: Access,
) -> Result<Resolved, Answer> {
    checked_path(call, arg, access, crate::roots::resolve_entry)
        .await
        .map_err(Answer::failure)
}

async fn checked_path(
    call: &Call<'_>,
    arg: &str,
    access: Access,
    how: Resolver,
) -> Result<Resolved, Failure> {
    let asker = Asker {
        session: call.session,
        ctx: call.ctx,
        modern: call.modern,
        roots: &call.roots,
    };
    asker.checked(arg, access, how).await
}

/// How a path argument is resolved ([`resolve`] or [`crate::roots::resolve_entry`]).
pub type Resolver = fn(&str, &RootSet) -> Result<Resolved, crate::roots::PathError>;

/// What checking a path needs: the session, the request (to ask its client), and the
/// roots it is judged against.
pub struct Asker<'a> {
    pub session: &'a Session,
    pub ctx: &'a RequestContext<RoleServer>,
    pub modern: Option<&'a crate::mcp::modern::ModernCall>,
    pub roots: &'a Arc<RootSet>,
}

impl Asker<'_> {
    /// The one way a client's path argument becomes a usable path: resolved off the async
    /// executor (canonicalising touches the disk, which may hang on a network mount), then
    /// access checked, asking the user when it lies outside the roots. Containment comes
    /// first: a failure that tells what is on the disk (a non-directory named with `/`,
    /// `..` after a missing directory, a link loop) is shown only once the place it was
    /// found is inside the roots or allowed; outside them such a path gets the same answer
    /// as every other path there, naming only what the client sent. `Err` is the failure,
    /// naming the argument as sent.
    pub async fn checked(
        &self,
        arg: &str,
        access: Access,
        how: Resolver,
    ) -> Result<Resolved, Failure> {
        let (given, roots) = (arg.to_string(), self.roots.clone());
        let outcome = blocking(move || how(&given, &roots))
            .await
            .map_err(|_| Failure::new(Reason::Internal, "internal error resolving a path"))
            .map_err(|failure| failure.about(arg))?;
        let failure = match outcome {
            Ok(resolved) => match self.authorize(&resolved, access).await {
                Ok(()) => return Ok(resolved),
                Err(failure) => failure,
            },
            Err(crate::roots::PathError::Found(found)) => {
                let place = found.as_resolved(arg, self.roots);
                match self.authorize(&place, access).await {
                    Ok(()) => Failure::of(&crate::roots::PathError::Found(found)),
                    Err(failure) => failure,
                }
            }
            // About the argument's text alone: nothing read from the disk.
            Err(err) => Failure::of(&err),
        };
        Err(failure.about(arg))
    }

    /// Checks (or asks for) access to an already resolved path.
    pub async fn authorize(&self, resolved: &Resolved, access: Access) -> Result<(), Failure> {
        match self.modern {
            Some(modern) => modern.authorize(self.session, self.roots, resolved, access),
            None => ask::authorize(self.session, self.ctx, resolved, access).await,
        }
    }
}

/// Runs blocking domain work on the blocking pool; a panic there becomes an error answer.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Answer> {
    tokio::task::spawn_blocking(work).await.map_err(internal)
}

/// The answer for blocking work that panicked (or was aborted). The panic's message can
/// quote client input, so it goes to stderr only; the client hears that it was internal.
fn internal(err: tokio::task::JoinError) -> Answer {
    tracing::error!(target: crate::mcp::logging::STDERR_ONLY, "blocking work failed: {err}");
    Answer::refused(Reason::Internal, "internal error in this tool call")
}

/// Runs blocking domain work on the blocking pool with a stop flag that the request's
/// cancellation sets. `Ok(None)` when the request was cancelled (rmcp sends no response
/// then); the work is still awaited until it notices the flag, so it keeps its place among
/// the running requests until it has really stopped.
pub async fn blocking_stoppable<T: Send + 'static>(
    call: &Call<'_>,
    work: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<Option<T>, Answer> {
    if call.ctx.ct.is_cancelled() {
        return Ok(None); // cancelled before it started: no work at all
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let mut handle = tokio::task::spawn_blocking(move || work(&flag));
    tokio::select! {
        joined = &mut handle => joined.map(Some).map_err(internal),
        _ = call.ctx.ct.cancelled() => {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.await;
            Ok(None)
        }
    }
}

/// The answer for a tool that works on the roots by default when there are none: the
/// client sent an empty roots list and no `DIR` was given (PRODUCT §2: no access; the
/// working directory is never served in their place). Says how to grant access.
pub(crate) fn no_roots(roots: &crate::roots::RootSet) -> Option<Answer> {
    roots.roots.is_empty().then(|| {
        Answer::refused(
            Reason::NoRoots,
            "no workspace roots: the client sent an empty roots list and rootgrep was started \
             without a directory, so no directory is served (the working directory is not used \
             in their place). To grant access: add a folder to the workspace in the host (it \
             sends it as a root), start rootgrep with a directory argument, or name an \
             absolute path (the user is asked to allow it)",
        )
    })
}

/// Deserializers that accept numbers sent as strings ("20"), which some clients do.
pub(crate) mod lenient {
    use serde::{Deserialize, Deserializer, de::Error};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumberOrText {
        Number(u64),
        Text(String),
    }

    pub fn opt_usize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<usize>, D::Error> {
        match Option::<NumberOrText>::deserialize(de)? {
            None => Ok(None),
            Some(NumberOrText::Number(n)) => usize::try_from(n).map(Some).map_err(D::Error::custom),
            Some(NumberOrText::Text(text)) => {
                text.trim().parse::<usize>().map(Some).map_err(|_| {
                    D::Error::custom(format!("expected a non-negative integer, got {text:?}"))
                })
            }
        }
    }
}
