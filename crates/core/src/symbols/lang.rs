//! Languages with symbols: detection by file extension, and one [`Grammar`] per language
//! (the tree-sitter language and its tags query), compiled once per process from the
//! grammar crate's own tags query plus the few extensions below (each says what the bundled
//! query misses). The definition kinds a query's captures may name ([`KINDS`]) live here
//! too, with the captures that use them, so that extraction reads them from its language
//! and not the other way round.

use std::path::Path;
use std::sync::OnceLock;

use tree_sitter::{CaptureQuantifier, Language, Query, QueryError};

/// A language rootgrep extracts definitions from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    Rust,
    C,
    Cpp,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
}

impl Lang {
    pub const ALL: [Lang; 9] = [
        Lang::Rust,
        Lang::C,
        Lang::Cpp,
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Go,
        Lang::Java,
    ];

    /// The name used in arguments and results.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
            Lang::Java => "java",
        }
    }

    /// A language by name, with the short names agents also use (`rs`, `py`, `ts`, …).
    pub fn from_name(name: &str) -> Option<Lang> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "rust" | "rs" => Lang::Rust,
            "c" | "h" => Lang::C,
            "cpp" | "c++" | "cxx" | "cc" | "hpp" => Lang::Cpp,
            "python" | "py" => Lang::Python,
            "javascript" | "js" | "jsx" => Lang::JavaScript,
            "typescript" | "ts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" | "golang" => Lang::Go,
            "java" => Lang::Java,
            _ => return None,
        })
    }

    /// The file extensions of this language. `.h` is C: C++ headers mostly use `.hpp`/`.hh`
    /// and the C grammar is the faster one, which matters on large C trees.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &["rs"],
            Lang::C => &["c", "h"],
            Lang::Cpp => &["cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp"],
            Lang::Python => &["py", "pyi"],
            Lang::JavaScript => &["js", "jsx", "mjs", "cjs"],
            Lang::TypeScript => &["ts", "mts", "cts"],
            Lang::Tsx => &["tsx"],
            Lang::Go => &["go"],
            Lang::Java => &["java"],
        }
    }

    /// The ripgrep file type whose files include this language's: used to narrow walks to
    /// candidate files. Types, unlike globs, never override ignore rules.
    pub(crate) fn rg_type(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Python => "py",
            Lang::JavaScript => "js",
            Lang::TypeScript | Lang::Tsx => "ts",
            Lang::Go => "go",
            Lang::Java => "java",
        }
    }

    /// The language of a file, by its extension (case-insensitive).
    pub(crate) fn from_path(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Lang::ALL
            .into_iter()
            .find(|lang| lang.extensions().contains(&ext.as_str()))
    }

    /// The compiled grammar and tags query. `Err` only if a query does not compile, which
    /// the unit tests rule out for every language.
    pub(crate) fn config(self) -> Result<&'static Grammar, &'static GrammarError> {
        static CONFIGS: [OnceLock<Result<Grammar, GrammarError>>; 9] =
            [const { OnceLock::new() }; 9];
        let slot = &CONFIGS[Lang::ALL.iter().position(|l| *l == self).unwrap_or(0)];
        slot.get_or_init(|| build(self)).as_ref()
    }
}

/// Names the ripgrep types for the given languages (all when empty), deduplicated.
pub(crate) fn rg_types(langs: &[Lang]) -> Vec<String> {
    let langs: &[Lang] = if langs.is_empty() { &Lang::ALL } else { langs };
    let mut types: Vec<String> = langs.iter().map(|l| l.rg_type().to_string()).collect();
    types.sort();
    types.dedup();
    types
}

/// A language's tree-sitter grammar and tags query, with what each capture of the query
/// means. The query follows tree-sitter's tags convention: `@name` is the name node,
/// `@definition.KIND` / `@reference.KIND` the tagged node (other captures, like `@doc`,
/// are not used).
pub struct Grammar {
    pub language: Language,
    pub query: Query,
    /// By capture index.
    captures: Vec<Capture>,
}

/// What one capture of a tags query stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Capture {
    Name,
    /// `@definition.KIND`, with KIND as one of [`KINDS`].
    Definition(&'static str),
    /// `@reference.KIND`: a tag that is not a definition. It still holds its name node, so
    /// an earlier reference pattern hides what a later pattern would define there.
    Reference,
    Other,
}

impl Grammar {
    fn new(language: Language, source: &str) -> Result<Grammar, QueryError> {
        let mut grammar = Grammar::compiled(language, source)?;
        grammar.disable_patterns_without_effect();
        Ok(grammar)
    }

    /// The query as written, every pattern on.
    fn compiled(language: Language, source: &str) -> Result<Grammar, QueryError> {
        let query = Query::new(&language, source)?;
        let captures = query
            .capture_names()
            .iter()
            .map(|name| match *name {
                "name" => Capture::Name,
                _ => match name.strip_prefix("definition.") {
                    Some(kind) => Capture::Definition(static_kind(kind)),
                    None if name.starts_with("reference.") => Capture::Reference,
                    None => Capture::Other,
                },
            })
            .collect();
        Ok(Grammar {
            language,
            query,
            captures,
        })
    }

    /// Turns off the patterns whose matches can never become a definition: those with
    /// neither a definition nor a reference capture (extraction skips their matches), and
    /// the references after the last definition pattern (a reference counts only by hiding
    /// a later pattern's definition of the same name node, the earliest pattern winning:
    /// `extract::tags`). The bundled queries end with such references — every call, every
    /// macro use, every Go type name — and the query cursor paid for each match: a tenth
    /// of the tags query's time on a sample of the generated 1M-file tree. What is
    /// extracted is unchanged (tested against the query as written).
    fn disable_patterns_without_effect(&mut self) {
        let patterns = self.query.pattern_count();
        let has = |pattern: usize, wanted: fn(Capture) -> bool| {
            (self.query.capture_quantifiers(pattern).iter().enumerate()).any(|(index, q)| {
                *q != CaptureQuantifier::Zero && wanted(self.capture(index as u32))
            })
        };
        let defines = |pattern| has(pattern, |c| matches!(c, Capture::Definition(_)));
        let references = |pattern| has(pattern, |c| c == Capture::Reference);
        let last_definition = (0..patterns).rev().find(|&p| defines(p));
        let stays: Vec<bool> = (0..patterns)
            .map(|p| defines(p) || references(p) && last_definition.is_some_and(|last| p < last))
            .collect();
        for (pattern, stays) in stays.into_iter().enumerate() {
            if !stays {
                self.query.disable_pattern(pattern);
            }
        }
    }

    /// What capture `index` of the query stands for.
    pub(crate) fn capture(&self, index: u32) -> Capture {
        self.captures
            .get(index as usize)
            .copied()
            .unwrap_or(Capture::Other)
    }
}

/// A language's tags query that does not compile (a bug, which the unit tests rule out).
#[derive(Debug)]
pub(crate) struct GrammarError {
    lang: Lang,
    query: QueryError,
}

impl std::fmt::Display for GrammarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} tags query: {}", self.lang.name(), self.query)
    }
}

impl std::error::Error for GrammarError {}

fn build(lang: Lang) -> Result<Grammar, GrammarError> {
    let (language, query) = source(lang);
    Grammar::new(language, &query).map_err(|query| GrammarError { lang, query })
}

/// A language's grammar and every pattern of its query, none turned off (the tests compare).
#[cfg(test)]
pub(crate) fn untrimmed(lang: Lang) -> Grammar {
    let (language, query) = source(lang);
    Grammar::compiled(language, &query).expect("every query compiles")
}

/// A language's grammar and the text of its tags query.
fn source(lang: Lang) -> (Language, String) {
    // Extensions come first: extraction keeps one tag per name node and the earliest
    // pattern wins, so an extension can replace what the bundled pattern makes of a node.
    let (language, query) = match lang {
        Lang::Rust => (
            tree_sitter_rust::LANGUAGE.into(),
            format!("{RUST_EXTRA}\n{}", tree_sitter_rust::TAGS_QUERY),
        ),
        Lang::C => (
            tree_sitter_c::LANGUAGE.into(),
            format!("{C_EXTRA}\n{}", tree_sitter_c::TAGS_QUERY),
        ),
        Lang::Cpp => (
            tree_sitter_cpp::LANGUAGE.into(),
            format!("{C_EXTRA}\n{CPP_EXTRA}\n{}", tree_sitter_cpp::TAGS_QUERY),
        ),
        Lang::Python => (
            tree_sitter_python::LANGUAGE.into(),
            format!("{PYTHON_EXTRA}\n{}", tree_sitter_python::TAGS_QUERY),
        ),
        Lang::JavaScript => (
            tree_sitter_javascript::LANGUAGE.into(),
            tree_sitter_javascript::TAGS_QUERY.to_string(),
        ),
        // The TypeScript grammar extends JavaScript's, and so does its tags query: it only
        // adds TypeScript's own constructs, like the tree-sitter CLI's `inherits`.
        Lang::TypeScript => (
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            format!(
                "{TS_EXTRA}\n{}\n{}",
                tree_sitter_typescript::TAGS_QUERY,
                tree_sitter_javascript::TAGS_QUERY
            ),
        ),
        Lang::Tsx => (
            tree_sitter_typescript::LANGUAGE_TSX.into(),
            format!(
                "{TS_EXTRA}\n{}\n{}",
                tree_sitter_typescript::TAGS_QUERY,
                tree_sitter_javascript::TAGS_QUERY
            ),
        ),
        Lang::Go => (
            tree_sitter_go::LANGUAGE.into(),
            tree_sitter_go::TAGS_QUERY.to_string(),
        ),
        Lang::Java => (
            tree_sitter_java::LANGUAGE.into(),
            format!("{JAVA_EXTRA}\n{}", tree_sitter_java::TAGS_QUERY),
        ),
    };
    (language, query)
}

/// Rust: constants and statics (absent from the bundled query), and `impl` blocks as
/// definitions of kind `impl`, so that methods get their type as container (the bundled
/// query only has them as references). A trait's methods without a body and its associated
/// types (`fn next(&mut self) -> Option<Self::Item>;`, `type Item;`) are where the trait
/// defines them, and `extern` blocks' functions are the only Rust declaration of theirs:
/// the bundled query tags none of them (Universal Ctags does).
const RUST_EXTRA: &str = r#"
(function_signature_item name: (identifier) @name) @definition.function
(associated_type name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(impl_item type: (type_identifier) @name) @definition.impl
(impl_item type: (generic_type type: (type_identifier) @name)) @definition.impl
(impl_item type: (scoped_type_identifier name: (type_identifier) @name)) @definition.impl
"#;

/// C and C++: the bundled query tags the *declarator* of every function, so a definition's
/// range is its name and parameters only (no body: useless for reading it) and every
/// prototype counts as a definition. These patterns tag the whole function definition
/// (they win over the bundled ones; what the bundled pattern still tags is a prototype,
/// which extraction drops, as Universal Ctags does by default). Macros (`#define`) are
/// absent from the bundled query; unions with a body are tagged wherever they are.
///
/// Found comparing with Universal Ctags on apache/nuttx (bench/ctags_agreement.py): the
/// bundled query tags every `enum e` and `union u` naming a type (of a variable, parameter,
/// member) as a definition, so those are marked references here, which hides them; it
/// misses typedefs whose name is inside a declarator (`typedef int (*handler_t)(int);`,
/// arrays, pointers, function types). And a macro where the grammar expects none hides a
/// definition behind an error node: `begin_packed_struct struct s {…} end_packed_struct;`
/// reads as a function named `s` or `struct` with `s` in the error (caught by the text
/// starting with a word then `struct`), and `void
/// weak_function f(void) {…}` as a function of type `f` whose declarator is `(void)` — no
/// valid C has a parenthesized declarator as a function definition's declarator. Likewise
/// `typedef CODE void (*cb_t)(int);` (a macro before the type) reads as a function type
/// returning a function whose one parameter is `cb_t`, which no valid C typedef is.
const C_EXTRA: &str = r#"
(enum_specifier name: (type_identifier) @name !body) @reference.type
(union_specifier name: (type_identifier) @name !body) @reference.type
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))) @definition.function
(function_definition type: (type_identifier) @name declarator: (parenthesized_declarator) body: (compound_statement)) @definition.function
((function_definition type: (type_identifier) . (ERROR (identifier)) . declarator: (identifier) @name body: (compound_statement)) @definition.class
 (#match? @definition.class "^[A-Za-z_][A-Za-z_0-9]*[ \t]+(struct|union)[ \t]"))
((function_definition type: (type_identifier) . declarator: (identifier) . (ERROR (identifier) @name) body: (compound_statement)) @definition.class
 (#match? @definition.class "^[A-Za-z_][A-Za-z_0-9]*[ \t]+(struct|union)[ \t]"))
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(type_definition declarator: (pointer_declarator declarator: (type_identifier) @name)) @definition.type
(type_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (type_identifier) @name))) @definition.type
(type_definition declarator: (array_declarator declarator: (type_identifier) @name)) @definition.type
(type_definition declarator: (function_declarator declarator: (type_identifier) @name)) @definition.type
(type_definition declarator: (function_declarator declarator: (parenthesized_declarator (type_identifier) @name))) @definition.type
(type_definition declarator: (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))) @definition.type
(type_definition type: (type_identifier) declarator: (function_declarator declarator: (function_declarator parameters: (parameter_list (parameter_declaration type: (type_identifier) @name !declarator))))) @definition.type
"#;

/// C++ on top of C's: methods defined in a class body or outside it (`T Foo::bar() {}`),
/// functions returning references, destructors and operators, and namespaces.
const CPP_EXTRA: &str = r#"
(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @name))) @definition.method
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (destructor_name) @name))) @definition.method
(function_definition declarator: (function_declarator declarator: (destructor_name) @name)) @definition.method
(function_definition declarator: (function_declarator declarator: (operator_name) @name)) @definition.method
(function_definition declarator: (reference_declarator (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition declarator: (reference_declarator (function_declarator declarator: (field_identifier) @name))) @definition.method
(function_definition declarator: (reference_declarator (function_declarator declarator: (qualified_identifier name: (identifier) @name)))) @definition.method
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @name)))) @definition.method
(namespace_definition name: (namespace_identifier) @name) @definition.namespace
"#;

/// Python: a decorated function or class starts at its first decorator (the bundled query
/// starts it at `def`, so reading the definition would miss its decorators).
const PYTHON_EXTRA: &str = r#"
(decorated_definition definition: (function_definition name: (identifier) @name)) @definition.function
(decorated_definition definition: (class_definition name: (identifier) @name)) @definition.class
"#;

/// TypeScript: type aliases, enums and `namespace` blocks, which neither bundled query
/// tags.
const TS_EXTRA: &str = r#"
(internal_module name: (identifier) @name) @definition.namespace
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
"#;

/// Java: enums, records and constructors (overloads included), absent from the bundled
/// query.
const JAVA_EXTRA: &str = r#"
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(constructor_declaration name: (identifier) @name) @definition.constructor
"#;

/// Every kind a definition can have; "definition" (first) stands for a capture name the
/// list does not know. The symbol index stores a kind as its position here.
pub(crate) const KINDS: &[&str] = &[
    "definition",
    "function",
    "method",
    "class",
    "struct",
    "enum",
    "union",
    "interface",
    "trait",
    "type",
    "constant",
    "macro",
    "module",
    "namespace",
    "impl",
    "constructor",
    "variable",
];

/// The capture's kind as a `'static` string (tags queries only use these names).
fn static_kind(kind: &str) -> &'static str {
    KINDS
        .iter()
        .find(|k| **k == kind)
        .copied()
        .unwrap_or(KINDS[0])
}
