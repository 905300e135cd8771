//! The arguments of the search tools (`grep`, `glob`) and the types the symbol tools
//! share with them (`OneOrMany`, `Sort`, `Mode`), with the aliases agents use, and the
//! limits every one of them is clamped to.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::schema::lenient;
use crate::mcp::render::Answer;
use rootgrep_core::search;

pub const GREP_DEFAULT_LIMIT: usize = 250;
pub const GLOB_DEFAULT_LIMIT: usize = 100;

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(schema_with = "one_or_many")]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// [`OneOrMany`]'s schema, in fewer bytes than `anyOf` (`items` applies to a list only).
fn one_or_many(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let schema = serde_json::json!({"type": ["string", "array"], "items": {"type": "string"}});
    schemars::Schema::try_from(schema).unwrap_or_default()
}

impl OneOrMany {
    pub(crate) fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(one) if one.trim().is_empty() => Vec::new(),
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    FilesWithMatches,
    Content,
    Count,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    Path,
    Modified,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Rust regex (escape literal braces).
    pub pattern: String,
    /// File(s) or directories (default: the roots).
    #[serde(default, alias = "file_path", alias = "paths")]
    pub path: Option<OneOrMany>,
    /// Glob(s) on the relative path, '!' excludes: "*.rs".
    #[serde(default, alias = "include")]
    pub glob: Option<OneOrMany>,
    /// rg type(s): rust, py…
    #[serde(default, rename = "type", alias = "file_type")]
    pub file_type: Option<OneOrMany>,
    /// files_with_matches (default), content or count.
    #[serde(default)]
    pub output_mode: Option<Mode>,
    /// Ignore case.
    #[serde(
        default,
        rename = "-i",
        alias = "case_insensitive",
        alias = "ignore_case"
    )]
    pub case_insensitive: Option<bool>,
    /// Ignore case unless it has uppercase.
    #[serde(default)]
    pub smart_case: Option<bool>,
    /// Literal pattern.
    #[serde(default, alias = "literal")]
    pub fixed_strings: Option<bool>,
    /// Whole words.
    #[serde(default, alias = "word_regexp")]
    pub word: Option<bool>,
    /// '.' matches newlines.
    #[serde(default)]
    pub multiline: Option<bool>,
    /// Lines after.
    #[serde(
        default,
        rename = "-A",
        alias = "after_context",
        deserialize_with = "lenient::opt_usize"
    )]
    #[schemars(range(max = MAX_CONTEXT))]
    pub after: Option<usize>,
    /// Lines before.
    #[serde(
        default,
        rename = "-B",
        alias = "before_context",
        deserialize_with = "lenient::opt_usize"
    )]
    #[schemars(range(max = MAX_CONTEXT))]
    pub before: Option<usize>,
    /// Lines around.
    #[serde(
        default,
        rename = "-C",
        alias = "context",
        deserialize_with = "lenient::opt_usize"
    )]
    #[schemars(range(max = MAX_CONTEXT))]
    pub context: Option<usize>,
    /// Line numbers (default true).
    #[serde(default, rename = "-n", alias = "line_numbers")]
    pub line_numbers: Option<bool>,
    /// Name each match's enclosing definition; implies content.
    #[serde(default, alias = "show_function")]
    pub scope: Option<bool>,
    /// With scope: repeat lines shown before.
    #[serde(default)]
    pub repeat: Option<bool>,
    /// Most entries (default 250; 0: as many as fit; at most 20000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_HEAD_LIMIT))]
    pub head_limit: Option<usize>,
    /// For paging.
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_OFFSET))]
    pub offset: Option<usize>,
    /// path (default) or modified (newest first).
    #[serde(default)]
    pub sort: Option<Sort>,
    /// Hidden files too.
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Ignore .gitignore.
    #[serde(default)]
    pub no_ignore: Option<bool>,
    /// Skip larger files: bytes or "10M" (at most 1 TiB).
    #[serde(default, deserialize_with = "opt_size")]
    #[schemars(with = "Option<SizeSchema>")]
    pub max_filesize: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob on the relative path: "src/**/*.ts" ("*.rs": at any depth).
    pub pattern: String,
    /// Directories (default: the roots).
    #[serde(default, alias = "file_path", alias = "paths")]
    pub path: Option<OneOrMany>,
    /// rg type(s): rust, py…
    #[serde(default, rename = "type", alias = "file_type")]
    pub file_type: Option<OneOrMany>,
    /// Most paths (default 100; 0: as many as fit; at most 20000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_HEAD_LIMIT))]
    pub head_limit: Option<usize>,
    /// For paging.
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(max = MAX_OFFSET))]
    pub offset: Option<usize>,
    /// modified (newest first; default) or path.
    #[serde(default)]
    pub sort: Option<Sort>,
    /// Hidden files too.
    #[serde(default)]
    pub hidden: Option<bool>,
    /// Ignore .gitignore.
    #[serde(default)]
    pub no_ignore: Option<bool>,
}

/// The schema of `max_filesize`: a byte count (with its maximum) or a size string.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // schema only
pub(crate) enum SizeSchema {
    Bytes(#[schemars(range(max = MAX_FILESIZE))] u64),
    Text(String),
}

pub(crate) fn opt_size<'de, D: Deserializer<'de>>(de: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(de)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| D::Error::custom("max_filesize must be a non-negative integer")),
        Some(Value::String(text)) => parse_size(&text).map(Some).ok_or_else(|| {
            D::Error::custom(format!(
                "max_filesize {text:?} is not a size (e.g. 1048576, \"512K\", \"10M\", \"1G\")"
            ))
        }),
        Some(other) => Err(D::Error::custom(format!(
            "max_filesize must be a number or a size string, got {other}"
        ))),
    }
}

pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let factor = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// Most context lines before or after a match (`-A`/`-B`/`-C`); larger values are clamped.
pub const MAX_CONTEXT: usize = 1000;
/// Largest `head_limit`; larger values are clamped (a page never holds more).
pub const MAX_HEAD_LIMIT: usize = search::retain::MAX_RETAINED;
/// Largest `offset`: paging deeper than this is refused, since the engine keeps the sort
/// keys of every entry before the page (narrow the search instead).
pub const MAX_OFFSET: usize = 100_000;
/// Largest `max_filesize` (1 TiB); larger values are clamped.
pub const MAX_FILESIZE: u64 = 1 << 40;

pub(crate) fn checked_offset(offset: Option<usize>, tool: &str) -> Result<usize, Answer> {
    match offset.unwrap_or(0) {
        n if n > MAX_OFFSET => Err(Answer::error(format!(
            "offset {n} is too large ({tool} pages up to offset {MAX_OFFSET}); narrow the \
             search with path, glob or type instead"
        ))),
        n => Ok(n),
    }
}

/// `head_limit`: the default when absent, clamped to [`MAX_HEAD_LIMIT`]; `0` means "as many
/// as the output budget shows". No entry renders in fewer than 16 bytes, so keeping more
/// than `budget / 16` entries would only cost time (the engine keeps the best
/// `offset + limit` by sort order); the rest is paged as usual.
pub(crate) fn head_limit(given: Option<usize>, default: usize, budget: usize) -> usize {
    match given.unwrap_or(default) {
        0 => (budget / 16).clamp(1, MAX_HEAD_LIMIT),
        n => n.min(MAX_HEAD_LIMIT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::schema_of;

    #[test]
    fn every_numeric_argument_has_a_maximum() {
        for schema in [schema_of::<GrepArgs>(), schema_of::<GlobArgs>()] {
            let props = schema["properties"].as_object().unwrap();
            for (name, prop) in props {
                let text = prop.to_string();
                if text.contains("integer") {
                    assert!(text.contains("maximum"), "{name} has no maximum: {text}");
                }
            }
        }
        let grep = schema_of::<GrepArgs>();
        assert_eq!(grep["properties"]["-C"]["maximum"], MAX_CONTEXT);
        assert_eq!(grep["properties"]["head_limit"]["maximum"], MAX_HEAD_LIMIT);
        assert_eq!(grep["properties"]["offset"]["maximum"], MAX_OFFSET);
        assert_eq!(
            schema_of::<GlobArgs>()["properties"]["offset"]["maximum"],
            MAX_OFFSET
        );
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("10M"), Some(10 << 20));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("2 MB"), Some(2 << 20));
        assert_eq!(parse_size("lots"), None);
    }
}
