//! The rows of compact structured content: an entry a list holds many of (a matching line,
//! a definition, a file's count) is a JSON array of its values in a fixed order, not an
//! object repeating its keys, so the structured content costs about what the text does.
//! Each row's schema names its positions (`prefixItems`, with the optional ones last), so
//! clients still validate it exactly.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde_json::{Value, json};

/// The schema of a row: its positions as `(JSON type, what it holds)`, the first
/// `required` of them always present, the others only when they say something.
fn row_schema(description: &str, positions: &[(&str, &str)], required: usize) -> Schema {
    let items: Vec<Value> = positions
        .iter()
        .map(|(kind, what)| json!({"type": kind, "description": what}))
        .collect();
    let schema = json!({
        "type": "array",
        "description": description,
        "prefixItems": items,
        "minItems": required,
        "maxItems": positions.len(),
    });
    Schema::try_from(schema).unwrap_or_default()
}

/// The schema of an answer's `stats`: counts by name (and a flag or two), each present only
/// when not zero; the names are the README's. Its fields are diagnostics a client reads by
/// name, so the schema says what every value is rather than listing them.
pub fn counts_schema(_: &mut SchemaGenerator) -> Schema {
    let schema = json!({
        "type": "object",
        "additionalProperties": {"type": ["integer", "boolean", "array"]},
    });
    Schema::try_from(schema).unwrap_or_default()
}

/// A line of a file: `[line, text]` (a matching line, a use, or a context line).
/// The text is borrowed from the search outcome when the page is serialized while it
/// lives (a grep page: no copy of every line), owned otherwise.
#[derive(Debug, Clone)]
pub struct LineRow<'a> {
    pub line: u64,
    pub text: Cow<'a, str>,
}

impl Serialize for LineRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (self.line, &self.text).serialize(serializer)
    }
}

impl JsonSchema for LineRow<'_> {
    fn schema_name() -> Cow<'static, str> {
        "LineRow".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        row_schema(
            "[line, text]",
            &[("integer", "line"), ("string", "the line")],
            2,
        )
    }
}

/// A matching line of a grep content page: `[line, text]`, or with the context lines
/// just before and just after it, `[line, text, before, after]` (`before` may be empty;
/// without `after` it is left out). Their numbers follow from the line's, as the text's
/// `N-` gives them: a row of its own per context line cost more than that prefix.
#[derive(Debug, Clone, Default)]
pub struct MatchRow<'a> {
    pub line: u64,
    pub text: Cow<'a, str>,
    /// Context lines `line - before.len()` to `line - 1`.
    pub before: Vec<Cow<'a, str>>,
    /// Context lines `line + 1` to `line + after.len()`.
    pub after: Vec<Cow<'a, str>>,
}

impl Serialize for MatchRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = match (self.before.is_empty(), self.after.is_empty()) {
            (_, false) => 4,
            (false, true) => 3,
            (true, true) => 2,
        };
        let mut row = serializer.serialize_seq(Some(len))?;
        row.serialize_element(&self.line)?;
        row.serialize_element(&self.text)?;
        if len > 2 {
            row.serialize_element(&self.before)?;
        }
        if len > 3 {
            row.serialize_element(&self.after)?;
        }
        row.end()
    }
}

impl JsonSchema for MatchRow<'_> {
    fn schema_name() -> Cow<'static, str> {
        "MatchRow".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let lines =
            |what: &str| json!({"type": "array", "items": {"type": "string"}, "description": what});
        let schema = json!({
            "type": "array",
            "description": "[line, text, before, after]",
            "prefixItems": [
                {"type": "integer", "description": "line"},
                {"type": "string", "description": "the line"},
                lines("the context lines just before it"),
                lines("the context lines just after it"),
            ],
            "minItems": 2,
            "maxItems": 4,
        });
        Schema::try_from(schema).unwrap_or_default()
    }
}

/// A definition with the lines found inside it: `[line, end_line, kind, name, lines]`,
/// the name as the text shows it (`Container::name`); its lines are [`MatchRow`]s in a
/// grep page, [`LineRow`]s in references.
#[derive(Debug, Clone)]
pub struct ScopeRow<R> {
    pub line: u64,
    pub end_line: u64,
    pub kind: String,
    pub name: String,
    pub lines: Vec<R>,
}

impl<R: Serialize> Serialize for ScopeRow<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (
            self.line,
            self.end_line,
            &self.kind,
            &self.name,
            &self.lines,
        )
            .serialize(serializer)
    }
}

impl<R: JsonSchema> JsonSchema for ScopeRow<R> {
    fn schema_name() -> Cow<'static, str> {
        format!("ScopeRow_{}", R::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let lines = generator.subschema_for::<Vec<R>>();
        let schema = json!({
            "type": "array",
            "description": "[line, end_line, kind, name, lines]",
            "prefixItems": [
                {"type": "integer", "description": "first line"},
                {"type": "integer", "description": "last line"},
                {"type": "string", "description": "kind"},
                {"type": "string", "description": "name (Container::name)"},
                lines,
            ],
            "minItems": 5,
            "maxItems": 5,
        });
        Schema::try_from(schema).unwrap_or_default()
    }
}

/// A file and a number: `[path, count]`.
#[derive(Debug, Clone)]
pub struct CountRow {
    pub path: String,
    pub count: u64,
}

impl Serialize for CountRow {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.path, self.count).serialize(serializer)
    }
}

impl JsonSchema for CountRow {
    fn schema_name() -> Cow<'static, str> {
        "CountRow".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        row_schema(
            "[path, count]",
            &[("string", "path"), ("integer", "matching lines")],
            2,
        )
    }
}

/// A definition found by name: `[line, end_line, kind, name, signature]`, the name as the
/// text shows it (`Container::name`).
#[derive(Debug, Clone)]
pub struct SymbolRow {
    pub line: u64,
    pub end_line: u64,
    pub kind: String,
    pub name: String,
    pub signature: String,
}

impl Serialize for SymbolRow {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let row = (
            self.line,
            self.end_line,
            &self.kind,
            &self.name,
            &self.signature,
        );
        row.serialize(serializer)
    }
}

impl JsonSchema for SymbolRow {
    fn schema_name() -> Cow<'static, str> {
        "SymbolRow".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        row_schema(
            "[line, end_line, kind, name, signature]",
            &[
                ("integer", "first line"),
                ("integer", "last line"),
                ("string", "kind"),
                ("string", "name (Container::name)"),
                ("string", "the line declaring it, trimmed"),
            ],
            5,
        )
    }
}

/// A file and its definitions found by name: `[path, definitions]`.
#[derive(Debug, Clone)]
pub struct SymbolFileRow {
    pub path: String,
    pub symbols: Vec<SymbolRow>,
}

impl Serialize for SymbolFileRow {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.path, &self.symbols).serialize(serializer)
    }
}

impl JsonSchema for SymbolFileRow {
    fn schema_name() -> Cow<'static, str> {
        "SymbolFileRow".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let symbols = generator.subschema_for::<Vec<SymbolRow>>();
        let schema = json!({
            "type": "array",
            "description": "[path, definitions]",
            "prefixItems": [{"type": "string", "description": "path"}, symbols],
            "minItems": 2,
            "maxItems": 2,
        });
        Schema::try_from(schema).unwrap_or_default()
    }
}

/// A definition of an outline: `[line, end_line, kind, signature]`, and its nesting
/// `depth` fifth when it is not at the top level.
#[derive(Debug, Clone)]
pub struct DefinitionRow {
    pub line: u64,
    pub end_line: u64,
    pub kind: String,
    pub signature: String,
    pub depth: usize,
}

impl Serialize for DefinitionRow {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_seq(Some(4 + usize::from(self.depth > 0)))?;
        row.serialize_element(&self.line)?;
        row.serialize_element(&self.end_line)?;
        row.serialize_element(&self.kind)?;
        row.serialize_element(&self.signature)?;
        if self.depth > 0 {
            row.serialize_element(&self.depth)?;
        }
        row.end()
    }
}

impl JsonSchema for DefinitionRow {
    fn schema_name() -> Cow<'static, str> {
        "DefinitionRow".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        row_schema(
            "[line, end_line, kind, signature, depth when nested]",
            &[
                ("integer", "first line"),
                ("integer", "last line"),
                ("string", "kind"),
                ("string", "the line declaring it, trimmed"),
                ("integer", "nesting depth (methods in a class: 1)"),
            ],
            4,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_arrays_with_optional_values_last() {
        let row = DefinitionRow {
            line: 12,
            end_line: 20,
            kind: "method".into(),
            signature: "fn main()".into(),
            depth: 0,
        };
        let text = |row: &DefinitionRow| serde_json::to_string(row).unwrap();
        assert_eq!(text(&row), r#"[12,20,"method","fn main()"]"#);
        let nested = DefinitionRow { depth: 2, ..row };
        assert_eq!(text(&nested), r#"[12,20,"method","fn main()",2]"#);
        let schema = serde_json::to_value(crate::mcp::tools::schema_of::<DefinitionRow>()).unwrap();
        assert_eq!(schema["minItems"], 4);
        assert_eq!(schema["maxItems"], 5);
        assert_eq!(schema["prefixItems"].as_array().unwrap().len(), 5);
        let scope = ScopeRow {
            line: 1,
            end_line: 9,
            kind: "function".into(),
            name: "f".into(),
            lines: vec![LineRow {
                line: 3,
                text: "x".into(),
            }],
        };
        let schema =
            serde_json::to_value(crate::mcp::tools::schema_of::<ScopeRow<LineRow>>()).unwrap();
        assert_eq!(schema["prefixItems"][4]["items"]["minItems"], 2, "{schema}");
        assert_eq!(
            serde_json::to_string(&scope).unwrap(),
            r#"[1,9,"function","f",[[3,"x"]]]"#
        );
        // A matching row says only the context it has.
        let text = |row: &MatchRow| serde_json::to_string(row).unwrap();
        let mut row = MatchRow {
            line: 7,
            text: "m".into(),
            ..MatchRow::default()
        };
        assert_eq!(text(&row), r#"[7,"m"]"#);
        row.before.push("b".into());
        assert_eq!(text(&row), r#"[7,"m",["b"]]"#);
        row.before.clear();
        row.after.push("a".into());
        assert_eq!(text(&row), r#"[7,"m",[],["a"]]"#);
        let schema = serde_json::to_value(crate::mcp::tools::schema_of::<MatchRow>()).unwrap();
        assert_eq!(
            (&schema["minItems"], &schema["maxItems"]),
            (&json!(2), &json!(4))
        );
    }
}
