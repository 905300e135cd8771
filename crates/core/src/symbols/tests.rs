//! Extraction on the per-language fixtures in `testdata/symbols/`, bad input, and the
//! on-demand queries on a temporary tree.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;

use super::*;
use extract::{Definition, Parser};
use find::{
    DefinitionsError, SymbolOutcome, SymbolQuery, definitions_in, find_symbols, outline, pick,
    references,
};
use lang::Lang;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/symbols")
        .join(name)
}

fn defs_of(name: &str) -> Vec<Definition> {
    let path = fixture(name);
    let lang = Lang::from_path(&path).expect("supported fixture");
    let source = std::fs::read(&path).expect("fixture");
    extract(&mut Parser::new(), lang, &source, None).expect("extracts")
}

/// Renders definitions one per line, `kind name [container] line-end`, for assertions
/// that read like the outline.
fn render(defs: &[Definition]) -> Vec<String> {
    defs.iter()
        .map(|d| {
            format!(
                "{} {}{} {}-{}",
                d.kind,
                d.container
                    .as_deref()
                    .map(|c| format!("{c}::"))
                    .unwrap_or_default(),
                d.name,
                d.line,
                d.end_line
            )
        })
        .collect()
}

fn has(defs: &[Definition], line: &str) -> bool {
    render(defs).iter().any(|l| l == line)
}

#[track_caller]
fn assert_has(name: &str, expected: &[&str]) {
    let defs = defs_of(name);
    let rendered = render(&defs);
    for line in expected {
        assert!(
            has(&defs, line),
            "{name}: missing `{line}` in:\n{}",
            rendered.join("\n")
        );
    }
}

#[track_caller]
fn assert_lacks(name: &str, names: &[&str]) {
    let defs = defs_of(name);
    for unwanted in names {
        assert!(
            !defs.iter().any(|d| d.name == *unwanted),
            "{name}: `{unwanted}` should not be a definition"
        );
    }
}

#[test]
fn every_language_query_compiles() {
    for lang in Lang::ALL {
        assert!(lang.config().is_ok(), "{lang:?}: {:?}", lang.config().err());
    }
}

/// The patterns turned off in each language's query (`Grammar::new`) change nothing that
/// is extracted: every fixture, and this crate's own Rust, give the same definitions as
/// the query as written.
#[test]
fn patterns_turned_off_change_no_definition() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture(""))
        .expect("fixtures")
        .map(|entry| entry.expect("entry").path())
        .collect();
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/symbols");
    files.extend(
        std::fs::read_dir(own)
            .expect("sources")
            .map(|e| e.expect("entry").path()),
    );
    let mut compared = std::collections::BTreeSet::new();
    for path in files {
        let Some(lang) = Lang::from_path(&path) else {
            continue;
        };
        let source = std::fs::read(&path).expect("readable");
        let trimmed = lang.config().expect("compiles");
        let whole = lang::untrimmed(lang);
        let got = extract::work::definition_tags(trimmed, &source);
        assert!(!got.is_empty(), "{}: definitions found", path.display());
        assert_eq!(
            got,
            extract::work::definition_tags(&whole, &source),
            "{}",
            path.display()
        );
        compared.insert(lang);
    }
    assert_eq!(
        compared.len(),
        Lang::ALL.len(),
        "every language compared: {compared:?}"
    );
    // References that hide a later pattern's definition stay on (C's `enum e` uses).
    let uses =
        b"enum e { A };\nenum e g;\nstruct s { enum e f; };\nint main(void) { return f(g); }\n";
    let got = extract::work::definition_tags(Lang::C.config().expect("compiles"), uses);
    assert_eq!(
        got,
        extract::work::definition_tags(&lang::untrimmed(Lang::C), uses)
    );
    assert_eq!(got.len(), 3, "enum e, struct s, main: {got:?}");
}

#[test]
fn a_file_without_definitions_says_why() {
    let path = PathBuf::from("/w/notes.md");
    let err = definitions_in(&path).unwrap_err();
    assert!(matches!(err, DefinitionsError::NoLanguage(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "/w/notes.md: no symbols for this file type (supported: {})",
            find::supported_names()
        )
    );
    let big = DefinitionsError::NotParsed(PathBuf::from("/w/big.rs"), parse::FileError::TooLarge);
    assert_eq!(
        big.to_string(),
        format!(
            "/w/big.rs: larger than {} MiB, not parsed for symbols; read it with offset/limit",
            MAX_PARSE_BYTES >> 20
        )
    );
    let gone =
        DefinitionsError::NotParsed(PathBuf::from("/w/gone.rs"), parse::FileError::Unreadable);
    assert_eq!(gone.to_string(), "/w/gone.rs: cannot be read as text");
}

#[test]
fn languages_by_extension_and_name() {
    assert_eq!(Lang::from_path(Path::new("a/b.RS")), Some(Lang::Rust));
    assert_eq!(Lang::from_path(Path::new("x.h")), Some(Lang::C));
    assert_eq!(Lang::from_path(Path::new("x.hpp")), Some(Lang::Cpp));
    assert_eq!(Lang::from_path(Path::new("x.tsx")), Some(Lang::Tsx));
    assert_eq!(Lang::from_path(Path::new("x.mjs")), Some(Lang::JavaScript));
    assert_eq!(Lang::from_path(Path::new("Makefile")), None);
    assert_eq!(Lang::from_path(Path::new("x.md")), None);
    assert_eq!(Lang::from_name("py"), Some(Lang::Python));
    assert_eq!(Lang::from_name("C++"), Some(Lang::Cpp));
    assert_eq!(Lang::from_name("cobol"), None);
}

#[test]
fn rust_items_impl_blocks_generics_macros_and_modules() {
    assert_has(
        "sample.rs",
        &[
            "constant MAX_ITEMS 3-3",
            "constant GREETING 4-4",
            "struct Parser 6-8",
            "enum Token 10-13",
            "trait Visitor 15-17",
            // A generic impl block nests its methods under the type.
            "impl Parser 19-29",
            "method Parser::new 20-22",
            "method Parser::parse 24-28",
            // A trait impl nests under the implementing type, not the trait.
            "impl Token 31-35",
            "method Token::visit 32-34",
            "function helper 37-37",
            "macro square 39-43",
            "module outer 45-52",
            "module outer::inner 46-51",
            // A function in a module body is a function, not a method.
            "function inner::deep 47-50",
            "type Alias 54-54",
        ],
    );
}

#[test]
fn c_definitions_not_prototypes_with_macros_and_bodies() {
    assert_has(
        "sample.c",
        &[
            "macro BUFFER_SIZE 4-4",
            "macro SQUARE 5-5",
            "struct point 7-10",
            "type point_t 12-12",
            "enum color 14-14",
            "union value 16-19",
            // The definition with its body, not the prototype on line 21.
            "function add 23-26",
            // Pointer return type, name on the line after the type.
            "function name_of 28-33",
            "function main 35-40",
        ],
    );
    let defs = defs_of("sample.c");
    assert_eq!(defs.iter().filter(|d| d.name == "add").count(), 1);
    let name_of = defs.iter().find(|d| d.name == "name_of").unwrap();
    assert_eq!(name_of.signature, "name_of(struct point *p)");
    assert_eq!(name_of.name_line, 29);
}

/// Definitions of `source` as `kind name line`, the line being the name's (what Universal
/// Ctags reports).
fn defs_in(lang: Lang, source: &str) -> Vec<String> {
    extract(&mut Parser::new(), lang, source.as_bytes(), None)
        .expect("extracts")
        .iter()
        .map(|d| format!("{} {} {}", d.kind, d.name, d.name_line))
        .collect()
}

/// Found by bench/ctags_agreement.py on apache/nuttx: an `enum e` or `union u` naming the
/// type of a variable, parameter or member defines nothing (the bundled query made each one
/// a definition); typedefs of function pointers, arrays and pointers are definitions.
#[test]
fn c_enum_and_union_uses_are_not_definitions_and_every_typedef_is() {
    let source = "\
enum color_e { RED, GREEN };
union value_u { int i; float f; };
enum color_e g_color;
static void paint(enum color_e c, union value_u *v);
struct pen { enum color_e c; union value_u v; };
typedef int (*handler_t)(int irq, void *arg);
typedef unsigned char buf_t[4];
typedef struct { int a; } *thing_p;
typedef void (callback_t)(void);
typedef void hook_t(int);
typedef char **argv_t;
";
    let defs = defs_in(Lang::C, source);
    let expected = [
        "enum color_e 1",
        "union value_u 2",
        "struct pen 5",
        "type handler_t 6",
        "type buf_t 7",
        "type thing_p 8",
        "type callback_t 9",
        "type hook_t 10",
        "type argv_t 11",
    ];
    assert_eq!(defs, expected, "{defs:#?}");
}

/// Found on apache/nuttx: a macro before a struct (`begin_packed_struct struct s {…}
/// end_packed_struct;`, 600 structs there) or between a function's type and name (`void
/// weak_function f(void) {…}`) leaves the grammar with an error node that hid the struct and
/// the function.
#[test]
fn c_macros_around_structs_and_function_names() {
    let source = "\
begin_packed_struct struct msg_s
{
  int header;
} end_packed_struct;

void weak_function arm_dma_initialize(void)
{
  int x;
}

void weak_function
up_later(void)
{
}

static void weak_function with_args(int x, FAR struct s *p)
{
}

int plain(void)
{
  return 0;
}
";
    let defs = defs_in(Lang::C, source);
    let expected = [
        "struct msg_s 1",
        "function arm_dma_initialize 6",
        "function up_later 12",
        "function with_args 16",
        "function plain 20",
    ];
    assert_eq!(defs, expected, "{defs:#?}");
    // Alone, the packed struct recovers differently: the error holds `struct`, not the name.
    let alone = "begin_packed_struct struct open_s\n{\n  int header;\n} end_packed_struct;\n";
    assert_eq!(defs_in(Lang::C, alone), ["struct open_s 1"]);
    // A macro before a typedef's type (`CODE`, 167 typedefs in nuttx).
    let typedefs = "\
typedef CODE void (*wakeup_cb_t)(FAR void *priv, int alarmid);
typedef CODE int (slave_cb_t)(FAR void *arg,
                              size_t len);
";
    assert_eq!(
        defs_in(Lang::C, typedefs),
        ["type wakeup_cb_t 1", "type slave_cb_t 2"]
    );
}

/// Found on apache/nuttx: `else if (…) {…}` right after an `#ifdef` reads as a function
/// named `if`; keywords name no definition.
#[test]
fn c_statements_split_by_the_preprocessor_are_not_functions() {
    let source = "\
static void f(void)
{
  if (a)
    {
      x = 1;
    }
#ifdef CONFIG_MMC
  else if (IS_MMC(priv->type))
    {
      y = 2;
    }
#endif
}
";
    assert_eq!(defs_in(Lang::C, source), ["function f 1"]);
}

/// Found on Rust crates (serde, syn): a trait's methods without a body and its associated
/// types are defined in the trait (Universal Ctags has them, the bundled query did not), and
/// an `extern` block's functions are declared there.
#[test]
fn rust_trait_method_signatures_associated_types_and_extern_functions() {
    let source = "\
pub trait Serializer {
    type Ok;
    type Error: Error;
    fn serialize_i64(self, v: i64) -> Result<Self::Ok, Self::Error>;
    fn provided(&self) {}
}
unsafe extern \"C\" {
    fn getpid() -> i32;
}
";
    let defs = defs_in(Lang::Rust, source);
    let expected = [
        "trait Serializer 1",
        "type Ok 2",
        "type Error 3",
        "method serialize_i64 4",
        "method provided 5",
        "function getpid 8",
    ];
    assert_eq!(defs, expected, "{defs:#?}");
}

#[test]
fn cpp_namespaces_nested_classes_overloads_templates_operators() {
    assert_has(
        "sample.cpp",
        &[
            "namespace geo 3-28",
            "class geo::Shape 5-13",
            "method Shape::area 7-7",
            "class Shape::Builder 9-12",
            "method Builder::build 11-11",
            "function geo::maximum 16-18",
            "struct geo::Vec2 20-23",
            "method Vec2::operator+ 22-22",
            "function geo::scale 25-25",
            "function geo::scale 26-26",
            // Defined outside its class: the qualifier is the container.
            "method Widget::draw 32-36",
        ],
    );
    assert_lacks("sample.cpp", &["geo_count"]);
}

#[test]
fn python_classes_methods_decorators_nested_functions() {
    assert_has(
        "sample.py",
        &[
            "constant LIMIT 5-5",
            "class Repository 8-24",
            "class Repository::Entry 11-13",
            "method Entry::describe 12-13",
            "method Repository::__init__ 15-16",
            // Decorated definitions start at their first decorator.
            "method Repository::size 18-20",
            "method Repository::create 22-24",
            "function load 27-29",
            "function outer 32-36",
            "function outer::inner 33-34",
        ],
    );
}

#[test]
fn javascript_classes_arrow_functions_expressions_generators() {
    assert_has(
        "sample.js",
        &[
            "class Counter 3-12",
            "method Counter::increment 8-11",
            "function makeCounter 14-16",
            "function double 18-18",
            "function handler 20-22",
            "function ids 24-26",
        ],
    );
}

#[test]
fn typescript_interfaces_types_enums_generics_namespaces() {
    assert_has(
        "sample.ts",
        &[
            "interface Shape 4-6",
            "method Shape::area 5-5",
            "type Id 8-8",
            "enum Direction 10-13",
            "class Base 15-21",
            "method Base::describe 16-16",
            "method Base::clone 18-20",
            "class Circle 23-35",
            "method Circle::area 28-30",
            "method Circle::describe 32-34",
            "function toId 37-37",
            "function identity 39-41",
            "namespace Geometry 43-47",
            "function Geometry::unit 44-46",
        ],
    );
    assert_has(
        "sample.tsx",
        &[
            "interface Props 4-6",
            "function Button 8-10",
            "function Panel 12-12",
        ],
    );
}

#[test]
fn go_types_and_methods_with_receivers() {
    assert_has(
        "sample.go",
        &[
            "struct Store 4-6",
            "interface Reader 8-10",
            "type ID 12-12",
            "function NewStore 14-16",
            "method Store::Add 18-20",
            "method Store::Read 22-24",
            "function Map 26-32",
        ],
    );
}

#[test]
fn java_nested_classes_overloads_constructors_enums_records() {
    assert_has(
        "Sample.java",
        &[
            "class Sample 5-37",
            "constructor Sample::Sample 8-10",
            "method Sample::get 12-14",
            "method Sample::sum 16-18",
            "method Sample::sum 20-22",
            "class Sample::Node 24-28",
            "method Node::visit 25-27",
            "interface Sample::Listener 30-32",
            "method Listener::onEvent 31-31",
            "enum Sample::Mode 34-34",
            "class Sample::Pair 36-36",
        ],
    );
}

#[test]
fn signatures_are_the_trimmed_name_line_and_capped() {
    let defs = defs_of("sample.rs");
    let parse = defs.iter().find(|d| d.name == "parse").unwrap();
    assert_eq!(
        parse.signature,
        "pub fn parse(&self, input: &str) -> Vec<Token> {"
    );
    let long = format!("fn {}() {{}}\n", "a".repeat(500));
    let defs = extract(&mut Parser::new(), Lang::Rust, long.as_bytes(), None).unwrap();
    assert_eq!(defs.len(), 1);
    assert_eq!(
        defs[0].signature.chars().count(),
        extract::MAX_SIGNATURE_CHARS + 1
    );
    assert!(defs[0].signature.ends_with('…'));
}

#[test]
fn syntax_errors_keep_what_parses() {
    let source =
        b"fn good() {}\nfn broken( {\n  let = ;\n}\nstruct After { x: u8 }\nfn also_good() {}\n";
    let defs = extract(&mut Parser::new(), Lang::Rust, source, None).unwrap();
    let names: Vec<_> = defs.iter().map(|d| d.name.as_str()).collect();
    assert!(names.contains(&"good"), "{names:?}");
    assert!(names.contains(&"also_good"), "{names:?}");
    let c = b"int ok(void) { return 0; }\nint bad( { \nint later(int x) { return x; }\n";
    let defs = extract(&mut Parser::new(), Lang::C, c, None).unwrap();
    assert!(defs.iter().any(|d| d.name == "ok"), "{defs:?}");
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    // 10,000 nested brackets, in every language: tree-sitter's parser is not recursive,
    // and nesting here is a loop over a stack; a stack overflow would abort the test.
    let depth = 10_000;
    for lang in Lang::ALL {
        let (open, close) = match lang {
            Lang::Python => ("(", ")"),
            _ => ("{", "}"),
        };
        let body = format!("{}{}", open.repeat(depth), close.repeat(depth));
        let source = match lang {
            Lang::Rust => format!("fn f() {body}\nfn g() {{}}\n"),
            Lang::C | Lang::Cpp => format!("void f(void) {body}\nvoid g(void) {{}}\n"),
            Lang::Python => format!("def f():\n    x = {body}\ndef g():\n    pass\n"),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                format!("function f() {body}\nfunction g() {{}}\n")
            }
            Lang::Go => format!("package p\nfunc f() {body}\nfunc g() {{}}\n"),
            Lang::Java => format!("class A {{ void f() {body} void g() {{}} }}\n"),
        };
        let defs = extract(&mut Parser::new(), lang, source.as_bytes(), None)
            .unwrap_or_else(|err| panic!("{lang:?}: {err:?}"));
        assert!(
            defs.iter().any(|d| d.name == "g"),
            "{lang:?}: the definition after the nesting is found: {defs:?}"
        );
    }
    // Definitions nested 2,000 deep: containers and depth from an explicit stack.
    let mut nested = String::new();
    for i in 0..2_000 {
        nested.push_str(&format!("mod m{i} {{\n"));
    }
    nested.push_str("fn leaf() {}\n");
    nested.push_str(&"}\n".repeat(2_000));
    let defs = extract(&mut Parser::new(), Lang::Rust, nested.as_bytes(), None).unwrap();
    let leaf = defs.iter().find(|d| d.name == "leaf").unwrap();
    assert_eq!(leaf.depth, 2_000);
    assert_eq!(leaf.container.as_deref(), Some("m1999"));
}

#[test]
fn binary_and_huge_input_are_refused_or_harmless() {
    let huge = vec![b'a'; MAX_PARSE_BYTES + 1];
    assert_eq!(
        extract(&mut Parser::new(), Lang::C, &huge, None),
        Err(ExtractError::TooLarge(MAX_PARSE_BYTES + 1))
    );
    // Arbitrary bytes parse (to errors) without panicking.
    let noise: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for lang in Lang::ALL {
        let _ = extract(&mut Parser::new(), lang, &noise, None).unwrap();
    }
    // A binary file on disk is not parsed at all.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blob.c");
    std::fs::write(&path, b"int f(void) { return 0; }\n\0\0\0binary").unwrap();
    let never = AtomicUsize::new(0);
    assert_eq!(
        parse::parse_file(&mut Parser::new(), &path, Lang::C, &never),
        Err(parse::FileError::Unreadable)
    );
    let big = dir.path().join("big.c");
    std::fs::write(&big, vec![b' '; MAX_PARSE_BYTES + 10]).unwrap();
    assert_eq!(
        parse::parse_file(&mut Parser::new(), &big, Lang::C, &never),
        Err(parse::FileError::TooLarge)
    );
}

#[test]
fn a_set_cancellation_flag_stops_the_parse() {
    let source = "int f(void) { return 0; }\n".repeat(20_000);
    let flag = AtomicUsize::new(1);
    assert_eq!(
        extract(&mut Parser::new(), Lang::C, source.as_bytes(), Some(&flag)),
        Err(ExtractError::Cancelled)
    );
}

#[test]
fn pick_by_name_or_container_qualified_name() {
    let defs = defs_of("Sample.java");
    assert_eq!(pick(&defs, "sum").len(), 2, "overloads are both candidates");
    assert_eq!(pick(&defs, "Node::visit").len(), 1);
    assert_eq!(pick(&defs, "Node.visit").len(), 1);
    assert_eq!(pick(&defs, "Other::visit").len(), 0);
    // Case is ignored only when nothing matches exactly.
    assert_eq!(pick(&defs, "GET").len(), 1);
    assert_eq!(find::split_qualified("a::b::c"), (Some("b"), "c"));
    assert_eq!(find::split_qualified("plain"), (None, "plain"));
}

// ---------------------------------------------------------------------------------------
// on-demand queries over a temporary tree

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/symbols");
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    std::fs::write(
        dir.path().join("notes.md"),
        "parse parse_all Parser (a markdown file: no symbols)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("more.rs"),
        "pub fn parse_all() {}\npub fn reparse() {}\nfn caller() { parse_all(); }\n",
    )
    .unwrap();
    dir
}

fn query(text: &str) -> SymbolQuery {
    SymbolQuery {
        query: text.to_string(),
        limit: 50,
        threads: 2,
        ..SymbolQuery::default()
    }
}

fn run(q: &SymbolQuery, dir: &Path) -> SymbolOutcome {
    let never = AtomicUsize::new(0);
    find_symbols(
        q,
        &[dir.canonicalize().unwrap()],
        None,
        &crate::walk::Control::new(),
        &never,
    )
    .unwrap()
}

fn names(outcome: &SymbolOutcome) -> Vec<String> {
    outcome
        .entries
        .iter()
        .map(|(tier, l)| format!("{} {}", tier.name(), l.def.name))
        .collect()
}

#[test]
fn symbols_rank_exact_then_prefix_then_substring() {
    let dir = tree();
    let outcome = run(&query("parse"), dir.path());
    let got = names(&outcome);
    assert_eq!(
        got,
        // Smart case: `Parser` is a prefix of a lowercase query; shorter names first.
        // `reparse` only contains it: looked for only when nothing starts with it.
        vec!["exact parse", "prefix Parser", "prefix parse_all"],
        "{outcome:?}"
    );
    assert!(!outcome.fuzzy);
    // Smart case: an uppercase letter makes it case-sensitive.
    let got = names(&run(&query("Parser"), dir.path()));
    assert_eq!(got, vec!["exact Parser"]);
    let got = names(&run(&query("parser"), dir.path()));
    assert_eq!(got, vec!["exact Parser"]);
    let got = names(&run(&query("PARSE"), dir.path()));
    assert!(got.is_empty(), "{got:?}");
    // One character: that exact name only (a prefix that short would parse everything).
    assert!(run(&query("p"), dir.path()).entries.is_empty());
    let outcome = run(&query("eparse"), dir.path());
    assert!(outcome.fuzzy);
    assert_eq!(names(&outcome), vec!["substring reparse"]);
}

#[test]
fn symbols_exact_kind_language_container_filters_and_paging() {
    let dir = tree();
    let mut q = query("parse");
    q.exact = true;
    assert_eq!(names(&run(&q, dir.path())), vec!["exact parse"]);
    let mut q = query("sum");
    q.kinds = vec!["method".into()];
    let outcome = run(&q, dir.path());
    assert_eq!(outcome.total, 2, "Java overloads");
    let mut q = query("scale");
    q.langs = vec![Lang::Python];
    assert_eq!(run(&q, dir.path()).total, 0);
    let q = query("Node::visit");
    let outcome = run(&q, dir.path());
    assert_eq!(names(&outcome), vec!["exact visit"]);
    assert_eq!(outcome.entries[0].1.def.container.as_deref(), Some("Node"));
    // Paging: one at a time, in the same order.
    let mut q = query("parse");
    q.limit = 1;
    q.offset = 1;
    let outcome = run(&q, dir.path());
    assert_eq!(names(&outcome), vec!["prefix Parser"]);
    assert_eq!(outcome.total, 3);
    assert_eq!(outcome.next_offset, Some(2));
}

#[test]
fn symbols_fall_back_to_fuzzy_when_nothing_contains_the_query() {
    let dir = tree();
    let outcome = run(&query("mkcntr"), dir.path());
    assert!(outcome.fuzzy);
    assert_eq!(names(&outcome), vec!["fuzzy makeCounter"]);
}

#[test]
fn outline_of_a_file_and_a_directory() {
    let dir = tree();
    let root = dir.path().canonicalize().unwrap();
    let never = AtomicUsize::new(0);
    let control = crate::walk::Control::new();
    let out = outline(&[root.join("sample.go")], &[], 0, 100, 1, &control, &never).unwrap();
    assert_eq!(out.files.len(), 1);
    assert_eq!(out.files[0].defs.len(), 7);
    assert!(out.complete);
    let out = outline(
        std::slice::from_ref(&root),
        &["class".into()],
        0,
        1000,
        2,
        &control,
        &never,
    )
    .unwrap();
    let files: Vec<_> = out
        .files
        .iter()
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // Supported files only, in path order; markdown is not parsed.
    assert_eq!(
        files,
        vec![
            "Sample.java",
            "more.rs",
            "sample.c",
            "sample.cpp",
            "sample.go",
            "sample.js",
            "sample.py",
            "sample.rs",
            "sample.ts",
            "sample.tsx",
        ]
    );
    assert!(out.files.iter().flat_map(|f| &f.defs).all(|d| matches!(
        d.kind,
        "class" | "struct" | "interface" | "trait" | "enum" | "union"
    )));
    let err = outline(&[root.join("notes.md")], &[], 0, 10, 1, &control, &never);
    assert!(err.is_err());
}

#[test]
fn references_name_their_enclosing_definition() {
    let dir = tree();
    let root = dir.path().canonicalize().unwrap();
    let never = AtomicUsize::new(0);
    let control = crate::walk::Control::new();
    let out = references(
        "helper",
        std::slice::from_ref(&root),
        None,
        None,
        &[],
        0,
        50,
        2,
        &control,
        &never,
    )
    .unwrap();
    let got: Vec<_> = out
        .entries
        .iter()
        .map(|r| {
            format!(
                "{}:{} {} {}",
                r.path.file_name().unwrap().to_string_lossy(),
                r.line,
                r.enclosing.as_ref().map_or("-".into(), |d| d.name.clone()),
                r.is_definition
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            "sample.rs:26 parse false",
            "sample.rs:37 helper true",
            "sample.rs:48 deep false",
        ]
    );
    // Word boundaries: `parse_all` is not a reference to `parse`; markdown is not searched.
    let out = references(
        "parse_all",
        std::slice::from_ref(&root),
        None,
        None,
        &[],
        0,
        50,
        2,
        &control,
        &never,
    )
    .unwrap();
    assert_eq!(out.total, 2);
    let out = references(
        "parse_all",
        &[root],
        None,
        None,
        &["function".into()],
        0,
        50,
        2,
        &control,
        &never,
    )
    .unwrap();
    assert_eq!(out.total, 2, "both lines are inside functions");
}

#[test]
fn a_cancelled_query_stops_early() {
    let dir = tree();
    let control = crate::walk::Control::new();
    control.cancel();
    let never = AtomicUsize::new(0);
    let out = find_symbols(
        &query("parse"),
        &[dir.path().canonicalize().unwrap()],
        None,
        &control,
        &never,
    )
    .unwrap();
    assert!(out.cancelled);
    assert!(out.entries.is_empty());
}

#[test]
fn c_files_that_only_call_a_name_are_not_parsed() {
    let dir = tree();
    std::fs::write(
        dir.path().join("caller.c"),
        "/*\n * name_of: see sample.c\n */\nint use(void)\n{\n  return name_of(0) != 0 && add(1, 2);\n}\n",
    )
    .unwrap();
    for (name, kind, line) in [("name_of", "function", 28), ("add", "function", 23)] {
        let mut q = query(name);
        q.langs = vec![Lang::C];
        let outcome = run(&q, dir.path());
        let found: Vec<_> = outcome
            .entries
            .iter()
            .map(|(_, l)| (l.def.name.as_str(), l.def.kind, l.def.line))
            .collect();
        assert_eq!(found, vec![(name, kind, line)], "{outcome:?}");
        assert_eq!(
            outcome.stats.sieved, 1,
            "caller.c is not parsed: {outcome:?}"
        );
    }
}

/// The bytes and steps `extract` spends on `source`, with its definitions.
fn measured(lang: Lang, source: &str) -> (Vec<Definition>, u64, u64) {
    extract::work::take();
    let defs = extract(&mut Parser::new(), lang, source.as_bytes(), None).unwrap();
    let (bytes, steps) = extract::work::take();
    (defs, bytes, steps)
}

#[test]
fn extraction_is_linear_on_one_long_line_and_on_deep_nesting() {
    // One line of 16,000 functions, and 16,000 nested modules: the work of rootgrep's own
    // code (bytes it scans, tree nodes and matches it visits) at 4n stays within 5 times
    // that at n (quadratic work would be 16 times), and within a small multiple of the
    // file's size. Before, each definition's signature read the whole line.
    let one_line = |n: usize| format!("{}\n", "int f(){return 0;}".repeat(n));
    let nested = |n: usize| format!("{}{}\n", "mod a{".repeat(n), "}".repeat(n));
    for (lang, make) in [
        (Lang::C, &one_line as &dyn Fn(usize) -> String),
        (Lang::Rust, &nested),
    ] {
        let (small, small_bytes, small_steps) = measured(lang, &make(4_000));
        assert_eq!(small.len(), 4_000);
        let source = make(16_000);
        let (defs, bytes, steps) = measured(lang, &source);
        assert_eq!(defs.len(), 16_000, "{lang:?}");
        assert!(
            bytes <= 5 * small_bytes && steps <= 5 * small_steps,
            "{lang:?}: {small_bytes} bytes and {small_steps} steps at 4,000, \
             {bytes} and {steps} at 16,000"
        );
        assert!(
            bytes <= 10 * source.len() as u64,
            "{lang:?}: {bytes} bytes scanned for {} bytes",
            source.len()
        );
        for (i, d) in defs.iter().enumerate() {
            assert_eq!(
                (d.line, d.end_line, d.name_line),
                (1, 1, 1),
                "{lang:?} {d:?}"
            );
            assert_eq!(
                d.signature.chars().count(),
                extract::MAX_SIGNATURE_CHARS + 1
            );
            match lang {
                Lang::C => {
                    assert_eq!((d.name.as_str(), d.kind, d.depth), ("f", "function", 0));
                    assert_eq!(d.container, None);
                }
                _ => {
                    assert_eq!((d.name.as_str(), d.kind, d.depth), ("a", "module", i));
                    assert_eq!(d.container.as_deref(), (i > 0).then_some("a"));
                }
            }
        }
    }
    // A long container name is held once for all its members (not copied into each: a
    // 500 KB module name over 50,000 functions would be 25 GB).
    let long = format!(
        "mod {} {{ {} }}\n",
        "m".repeat(100_000),
        "fn f() {} ".repeat(5_000)
    );
    let (defs, _, _) = measured(Lang::Rust, &long);
    assert_eq!(defs.len(), 5_001);
    let first = defs[1].container.clone().unwrap();
    assert_eq!(first.len(), 100_000);
    assert!(
        defs[1..]
            .iter()
            .all(|d| std::sync::Arc::ptr_eq(d.container.as_ref().unwrap(), &first))
    );
    // tree-sitter's query cursor is quadratic in the nesting when a pattern waits at every
    // level (it updates each waiting state at every node): extraction runs it in slices of
    // the tree's depth. A generous bound catches a return to a full-depth run, which takes
    // over a minute for this file in a debug build (the slices: well under a second); the
    // cancellation flag makes the old behaviour fail at the bound instead of running on.
    let source = format!(
        "{}{}\n",
        "mod a{fn f(){}".repeat(16_000),
        "}".repeat(16_000)
    );
    let flag = std::sync::Arc::new(AtomicUsize::new(0));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let timer = {
        let (flag, done) = (flag.clone(), done.clone());
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if started.elapsed() > std::time::Duration::from_secs(30) {
                    flag.store(1, std::sync::atomic::Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    let defs = extract(
        &mut Parser::new(),
        Lang::Rust,
        source.as_bytes(),
        Some(&flag),
    );
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    timer.join().unwrap();
    let defs = defs.expect("16,000 nested modules with a function each extract within 30 s");
    assert_eq!(defs.len(), 32_000);
    let last = defs.last().unwrap();
    assert_eq!(
        (last.name.as_str(), last.kind, last.depth),
        ("f", "function", 16_000)
    );
}

#[test]
fn slicing_the_query_by_depth_changes_no_definition() {
    // Every fixture and deeply nested code in each language: runs of 1, 2 and 3 levels
    // find exactly what one run over the whole depth finds.
    let mut sources: Vec<(Lang, Vec<u8>)> = Vec::new();
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let path = entry.unwrap().path();
        if let Some(lang) = Lang::from_path(&path) {
            sources.push((lang, std::fs::read(&path).unwrap()));
        }
    }
    let deep = |open: &str, close: &str| format!("{}{}\n", open.repeat(60), close.repeat(60));
    sources.push((
        Lang::Rust,
        deep("mod m { impl T { fn f() {} } ", "}").into_bytes(),
    ));
    sources.push((
        Lang::Cpp,
        deep("namespace n { struct S { void f() {} }; ", "}").into_bytes(),
    ));
    sources.push((Lang::Java, deep("class A { void f() {} ", "}").into_bytes()));
    sources.push((
        Lang::TypeScript,
        deep("namespace N { class C { m() {} } ", "}").into_bytes(),
    ));
    let mut python = String::new();
    for i in 0..60 {
        python.push_str(&format!(
            "{}class C{i}:\n{0} def m(self): pass\n",
            " ".repeat(i)
        ));
    }
    sources.push((Lang::Python, python.into_bytes()));
    for (lang, source) in &sources {
        let whole =
            extract::extract_in_runs(&mut Parser::new(), *lang, source, None, u32::MAX).unwrap();
        assert!(!whole.is_empty(), "{lang:?}");
        for depth in [1, 2, 3] {
            let sliced =
                extract::extract_in_runs(&mut Parser::new(), *lang, source, None, depth).unwrap();
            assert_eq!(render(&sliced), render(&whole), "{lang:?}, runs of {depth}");
        }
    }
}

#[test]
fn python_nested_deeper_than_its_parser_keeps_is_refused_not_half_outlined() {
    // tree-sitter's Python scanner keeps 511 indentation levels; past that the outer
    // definitions are lost. The file is refused with that reason, never outlined partly.
    let nested = |depth: usize| {
        let mut source = String::new();
        for i in 0..depth {
            source.push_str(&format!("{}def f{i}():\n", " ".repeat(i)));
        }
        source.push_str(&format!(
            "{}pass\ndef after():\n    pass\n",
            " ".repeat(depth)
        ));
        source
    };
    let limit = extract::PYTHON_MAX_INDENT_LEVELS;
    let defs = extract(
        &mut Parser::new(),
        Lang::Python,
        nested(limit).as_bytes(),
        None,
    )
    .unwrap();
    assert_eq!(defs.len(), limit + 1);
    assert_eq!(defs[0].name, "f0");
    assert_eq!(defs[limit - 1].depth, limit - 1);
    for depth in [limit + 1, 890, 1_000] {
        assert_eq!(
            extract(
                &mut Parser::new(),
                Lang::Python,
                nested(depth).as_bytes(),
                None
            ),
            Err(ExtractError::TooDeep(depth)),
            "{depth} levels"
        );
    }
    // Deep brackets are not indentation: they parse.
    let brackets = format!(
        "def f():\n    x = {}{}\n",
        "(".repeat(2_000),
        ")".repeat(2_000)
    );
    assert!(extract(&mut Parser::new(), Lang::Python, brackets.as_bytes(), None).is_ok());
}
