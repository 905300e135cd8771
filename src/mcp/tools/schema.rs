//! How tools describe themselves: argument and result schemas as clients read them
//! (inlined, no numeric formats), the annotations of read and write tools, and the lenient
//! number deserializers the argument structs use.

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
