//! The name and kind rules every symbol query applies (exact, case-insensitive and
//! qualified names; what a `kind` filter admits), the cap on candidate files, and one
//! file's definitions: below the queries, which all use them.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;

use crate::search;
use crate::symbols::extract::{Definition, MAX_PARSE_BYTES, Parser};
use crate::symbols::lang::Lang;
use crate::symbols::parse::{FileError, parse_file};

/// Most candidate files a query parses (the pre-filter's page); a query that matches in
/// more files than this answers from the first ones by path and says so.
pub const MAX_CANDIDATES: usize = search::retain::MAX_RETAINED;

/// A definition and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub path: PathBuf,
    pub lang: Lang,
    pub def: Definition,
}

/// Splits `Parser::parse` / `Parser.parse` into (`Some("Parser")`, `"parse"`).
pub(crate) fn split_qualified(query: &str) -> (Option<&str>, &str) {
    for sep in ["::", "."] {
        if let Some((container, name)) = query.rsplit_once(sep)
            && !container.is_empty()
            && !name.is_empty()
        {
            let container = container.rsplit(sep).next().unwrap_or(container);
            return (Some(container), name);
        }
    }
    (None, query)
}

/// The definitions of one file, for `read_file` + `symbol`. `Err` says why there are none.
pub fn definitions_in(path: &Path) -> Result<(Lang, Vec<Definition>), DefinitionsError> {
    let Some(lang) = Lang::from_path(path) else {
        return Err(DefinitionsError::NoLanguage(path.to_path_buf()));
    };
    let never = AtomicUsize::new(0);
    match parse_file(&mut Parser::new(), path, lang, &never) {
        Ok(defs) => Ok((lang, defs)),
        Err(why) => Err(DefinitionsError::NotParsed(path.to_path_buf(), why)),
    }
}

/// Why [`definitions_in`] found no definitions in a file.
#[derive(Debug)]
pub enum DefinitionsError {
    /// No supported language has the file's extension.
    NoLanguage(PathBuf),
    /// The file was not parsed, for the reason given.
    NotParsed(PathBuf, FileError),
}

impl std::fmt::Display for DefinitionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path_text = crate::roots::path_text;
        match self {
            DefinitionsError::NoLanguage(path) => write!(
                f,
                "{}: no symbols for this file type (supported: {})",
                path_text(path),
                supported_names()
            ),
            DefinitionsError::NotParsed(path, FileError::TooLarge) => write!(
                f,
                "{}: larger than {} MiB, not parsed for symbols; read it with offset/limit",
                path_text(path),
                MAX_PARSE_BYTES >> 20
            ),
            DefinitionsError::NotParsed(path, FileError::TooDeep) => write!(
                f,
                "{}: {}; read it with offset/limit",
                path_text(path),
                too_deep_reason()
            ),
            DefinitionsError::NotParsed(path, _) => {
                write!(f, "{}: cannot be read as text", path_text(path))
            }
        }
    }
}

impl std::error::Error for DefinitionsError {}

/// Why a Python file nested too deeply has no definitions, for messages.
pub fn too_deep_reason() -> String {
    format!(
        "nested deeper than {} indentation levels, more than tree-sitter's Python parser \
         keeps (it loses the outer definitions), so not parsed for symbols",
        crate::symbols::extract::PYTHON_MAX_INDENT_LEVELS
    )
}

/// The supported language names, for messages.
pub fn supported_names() -> String {
    Lang::ALL.map(Lang::name).join(", ")
}

/// Definitions of `symbol` (`name`, `Container::name` or `Container.name`) among `defs`:
/// exact case first; if none, ignoring case.
pub fn pick<'d>(defs: &'d [Definition], symbol: &str) -> Vec<&'d Definition> {
    let (container, name) = split_qualified(symbol.trim());
    let select = |insensitive: bool| -> Vec<&Definition> {
        defs.iter()
            .filter(|d| same_name(&d.name, name, insensitive))
            .filter(|d| {
                container.is_none_or(|c| {
                    d.container
                        .as_deref()
                        .is_some_and(|have| same_name(have, c, insensitive))
                })
            })
            .collect()
    };
    let exact = select(false);
    if exact.is_empty() {
        select(true)
    } else {
        exact
    }
}

pub(super) fn same_name(have: &str, want: &str, insensitive: bool) -> bool {
    if insensitive {
        have.eq_ignore_ascii_case(want) || have.to_lowercase() == want.to_lowercase()
    } else {
        have == want
    }
}

pub(super) fn kind_allowed(kinds: &[String], kind: &str) -> bool {
    if kinds.is_empty() {
        return kind != "impl";
    }
    kinds.iter().any(|k| {
        let k = k.trim().to_ascii_lowercase();
        k == kind
            || matches!(
                (k.as_str(), kind),
                ("fn" | "func", "function")
                    | ("function", "method" | "constructor")
                    | ("class", "struct" | "interface" | "trait" | "enum" | "union")
                    | (
                        "type",
                        "struct" | "enum" | "union" | "interface" | "trait" | "class"
                    )
                    | ("const", "constant")
                    | ("module", "namespace")
                    | ("namespace", "module")
            )
    })
}
