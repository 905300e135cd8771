//! How tools describe themselves: argument and result schemas as clients read them
//! (inlined, no numeric formats, nothing `tools/list` would carry for no reader), the
//! annotations of read and write tools, and the lenient number deserializers the argument
//! structs use.

use std::sync::Arc;

use rmcp::model::{JsonObject, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::{Value, json};

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

/// A read-only tool: `destructiveHint` and `idempotentHint` mean something only for a tool
/// that writes (MCP), so they are left out.
pub(crate) fn read_only_annotations(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
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

/// A schema as `tools/list` sends it, every byte of which every session pays for before its
/// first call: no `default: null` (absent is the default), no `null` among the types of
/// optional fields (an optional value is left out, never sent as null), no `minimum: 0`
/// (every count is unsigned), descriptions on one line. In an `output` schema the only
/// descriptions kept are those of rows (`[line, text]`: what each position holds); the
/// field meanings are documented in the README.
pub(crate) fn compact(value: &mut Value, output: bool) {
    compact_in(value, output, false);
}

/// [`compact`] of a schema; `field`: the schema of an object's property (null among its
/// types means "may be left out", which its absence from `required` already says).
fn compact_in(value: &mut Value, output: bool, field: bool) {
    let Value::Object(object) = value else {
        if let Value::Array(items) = value {
            items
                .iter_mut()
                .for_each(|item| compact_in(item, output, false));
        }
        return;
    };
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
    if object.get("minimum").and_then(Value::as_u64) == Some(0) {
        object.remove("minimum");
    }
    if let Some(Value::Array(types)) = object.get_mut("type")
        && field
    {
        types.retain(|kind| kind != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum")
        && field
    {
        values.retain(|value| !value.is_null());
    }
    // `anyOf: [X, {type: null}]` (an optional field): X itself.
    if let Some(Value::Array(branches)) = object.get_mut("anyOf")
        && field
    {
        branches.retain(|branch| *branch != json!({"type": "null"}));
        if branches.len() == 1
            && let Value::Object(only) = branches.remove(0)
        {
            object.remove("anyOf");
            for (key, inner) in only {
                if key != "description" || !object.contains_key("description") {
                    object.insert(key, inner);
                }
            }
        }
    }
    let row = object.contains_key("prefixItems");
    match object.get("description").and_then(Value::as_str) {
        Some(_) if output && !row => drop(object.remove("description")),
        Some(text) => {
            let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            object.insert("description".into(), Value::String(one_line));
        }
        None => {}
    }
    if let Some(Value::Array(positions)) = object.get_mut("prefixItems") {
        // The row's description names its positions.
        for position in positions.iter_mut() {
            if let Value::Object(position) = position {
                position.remove("description");
            }
        }
    }
    for (key, child) in object.iter_mut() {
        match (key.as_str(), child) {
            ("properties", Value::Object(fields)) => {
                fields
                    .values_mut()
                    .for_each(|f| compact_in(f, output, true));
            }
            (_, child) => compact_in(child, output, false),
        }
    }
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
