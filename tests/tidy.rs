//! Tidy checks on the sources themselves (in the manner of rust-analyzer's): the rules of
//! ARCHITECTURE.md that a compiler does not check. Each check names what breaks a rule and
//! why the rule holds. The lists of known exceptions only shrink: a file may not grow past
//! its listed size, and a fixed exception must leave the list (the check says so).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Longest a production file may be (lines before its test module).
const MAX_LINES: usize = 600;

/// Files over [`MAX_LINES`] today, each with the size it may not exceed until it is split.
const LONG_FILES: &[(&str, usize)] = &[];

/// Crates of the adapter that the core must not know.
const ADAPTER_CRATES: &[&str] = &[
    "tokio",
    "tokio-util",
    "rmcp",
    "serde",
    "serde_json",
    "serde_path_to_error",
    "schemars",
    "clap",
    "futures",
];

/// Core string literals that still name a tool or an argument, as (file, name): none. The
/// model-facing advice lives in the adapter's `src/mcp/hints.rs`, which words the domain's
/// errors and results; a name that appears in the core again is refused by
/// `core_texts_name_no_tool_and_no_argument`.
const NAMED_IN_CORE: &[(&str, &str)] = &[];

/// Re-exports still giving an item a second path, as (file, the line's start): each must
/// go (import the item where it is defined, or make its module private).
const SECOND_PATHS: &[(&str, &str)] = &[];

/// Module cycles not yet broken: move the shared part into a module of its own, below both.
const KNOWN_CYCLES: &[&[&str]] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A file of tests only (`tests.rs`, `*_tests.rs`, anything under a `tests/` folder).
fn is_test_file(path: &Path) -> bool {
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    name == "tests" || name.ends_with("_tests") || rel(path).split('/').any(|c| c == "tests")
}

/// The production part of a file: the lines before its `#[cfg(test)]` module.
fn production(text: &str) -> &str {
    let mut offset = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (n, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") || trimmed.starts_with("#[cfg(all(test") {
            let next = lines.get(n + 1).map(|l| l.trim_start()).unwrap_or("");
            if next.starts_with("mod ") || next.starts_with("pub(crate) mod ") {
                return &text[..offset];
            }
        }
        offset += line.len();
    }
    text
}

fn sources() -> Vec<PathBuf> {
    let mut all = rust_files(&root().join("crates/core/src"));
    all.extend(rust_files(&root().join("src")));
    all.extend(rust_files(&root().join("tests")));
    all
}

#[test]
fn every_file_opens_with_a_doc_paragraph() {
    // A newcomer opening any file learns first what it owns.
    let missing: Vec<String> = sources()
        .into_iter()
        .filter(|path| {
            let text = read(path);
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .map(|path| rel(&path))
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` paragraph: {missing:#?}"
    );
}

#[test]
fn no_production_file_is_over_the_limit() {
    let mut over = Vec::new();
    let mut listed: BTreeMap<&str, usize> = LONG_FILES.iter().copied().collect();
    for path in sources().into_iter().filter(|p| !is_test_file(p)) {
        let name = rel(&path);
        let lines = production(&read(&path)).lines().count();
        match listed.remove(name.as_str()) {
            Some(ceiling) if lines > ceiling => over.push(format!(
                "{name}: {lines} lines, grew past {ceiling}: split it"
            )),
            Some(_) if lines <= MAX_LINES => over.push(format!(
                "{name}: {lines} lines, within the limit now: take it out of LONG_FILES"
            )),
            Some(_) => {}
            None if lines > MAX_LINES => over.push(format!(
                "{name}: {lines} production lines (limit {MAX_LINES})"
            )),
            None => {}
        }
    }
    over.extend(
        listed
            .keys()
            .map(|name| format!("{name}: listed in LONG_FILES but gone")),
    );
    assert!(over.is_empty(), "{over:#?}");
}

/// Longest a production function may be, in lines (signature to closing brace).
const MAX_FN_LINES: usize = 100;

/// Functions over [`MAX_FN_LINES`] today, as (file, function, the size it may not exceed).
const LONG_FNS: &[(&str, &str, usize)] = &[];

/// Every function in `code` (lexed: no comments or literals) with its length in lines.
fn functions(code: &str) -> Vec<(String, usize)> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("fn ") {
        let start = i + at;
        i = start + 3;
        if start > 0 && is_ident(b[start - 1]) {
            continue;
        }
        let name: String = code[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` before any `;` (a declaration has no body).
        let Some(open) = code[i..].find(['{', ';']).map(|o| i + o) else {
            break;
        };
        if b[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut end = open;
        for (k, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let lines = code[start..=end].matches('\n').count() + 1;
        found.push((name, lines));
    }
    found
}

#[test]
fn no_production_function_is_over_the_limit() {
    // A function a reader cannot hold at once is split where its parts have names.
    let mut over = Vec::new();
    let mut listed: BTreeMap<(String, String), usize> = LONG_FNS
        .iter()
        .map(|(f, n, l)| ((f.to_string(), n.to_string()), *l))
        .collect();
    for path in sources().into_iter().filter(|p| !is_test_file(p)) {
        let name = rel(&path);
        let code = lex(production(&read(&path))).code;
        for (function, lines) in functions(&code) {
            match listed.remove(&(name.clone(), function.clone())) {
                Some(ceiling) if lines > ceiling => over.push(format!(
                    "{name}: fn {function} has {lines} lines, grew past {ceiling}: split it"
                )),
                Some(_) if lines <= MAX_FN_LINES => over.push(format!(
                    "{name}: fn {function} has {lines} lines, within the limit now: take it \
                     out of LONG_FNS"
                )),
                Some(_) => {}
                None if lines > MAX_FN_LINES => over.push(format!(
                    "{name}: fn {function} has {lines} lines (limit {MAX_FN_LINES})"
                )),
                None => {}
            }
        }
    }
    over.extend(
        listed
            .keys()
            .map(|(file, function)| format!("{file}: fn {function} listed in LONG_FNS but gone")),
    );
    assert!(over.is_empty(), "{over:#?}");
}

#[test]
fn the_core_names_no_adapter_crate() {
    // The build enforces it through the core's manifest; the sources are checked too, so
    // that the rule is stated where a newcomer adding a dependency meets it.
    let manifest = read(&root().join("crates/core/Cargo.toml"));
    let mut found = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]");
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or("");
        if in_deps && ADAPTER_CRATES.contains(&name) {
            found.push(format!("crates/core/Cargo.toml: {line}"));
        }
    }
    for path in rust_files(&root().join("crates/core/src")) {
        let code = lex(&read(&path)).code;
        for krate in ADAPTER_CRATES {
            let ident = krate.replace('-', "_");
            if words(&code).any(|w| w == ident.as_str() || w.starts_with(&format!("{ident}::"))) {
                found.push(format!("{}: names `{ident}`", rel(&path)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the core must not know the adapter's crates: {found:#?}"
    );
}

#[test]
fn core_texts_name_no_tool_and_no_argument() {
    // Renaming a tool or an argument must touch the adapter only: the domain's texts say
    // what happened ("old text not found in PATH"); `src/mcp/` says what to call next.
    let (tools, arguments) = tools_and_arguments();
    assert!(
        tools.len() >= 10 && arguments.len() >= 20,
        "{tools:?} {arguments:?}"
    );
    let mut found = BTreeSet::new();
    for path in rust_files(&root().join("crates/core/src")) {
        if is_test_file(&path) {
            continue;
        }
        let name = rel(&path);
        for literal in lex(production(&read(&path))).strings {
            for word in words(&literal) {
                let backticked = literal.contains(&format!("`{word}`"));
                let named = (tools.contains(word) || arguments.contains(word))
                    && (word.contains('_') || backticked);
                if named {
                    found.insert((name.clone(), word.to_string()));
                }
            }
        }
    }
    let known: BTreeSet<(String, String)> = NAMED_IN_CORE
        .iter()
        .map(|(f, w)| (f.to_string(), w.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let fixed: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "tool or argument names in core texts: {new:#?}"
    );
    assert!(
        fixed.is_empty(),
        "fixed, take them out of NAMED_IN_CORE: {fixed:#?}"
    );
}

#[test]
fn schema_maxima_name_their_constant() {
    // Each limit is written once: the constant the clamp uses is the schema's `maximum`,
    // so the two cannot drift apart (the descriptions are held to it by a unit test).
    let mut literal = Vec::new();
    for path in rust_files(&root().join("src/mcp")) {
        for (n, line) in read(&path).lines().enumerate() {
            let Some((_, range)) = line.split_once("range(") else {
                continue;
            };
            let max = range.split_once("max =").map(|(_, v)| v.trim_start());
            if max.is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit())) {
                literal.push(format!("{}:{}: {}", rel(&path), n + 1, line.trim()));
            }
        }
    }
    assert!(
        literal.is_empty(),
        "schema maxima written as numbers, not as the constant the clamp uses: {literal:#?}"
    );
}

/// `pub` items of the core that no file outside it names, today: most are reached through
/// a public type (a field's or an argument's type) or re-exported. The count may only fall.
const UNNAMED_PUB_MAX: usize = 39;

#[test]
fn core_items_are_pub_only_when_used_outside() {
    // Everything `pub` made the layering hold only by discipline: what the adapter does not
    // use is `pub(crate)`, so the core's surface is what the adapter needs.
    let mut outside = String::new();
    for dir in ["src", "tests", "examples"] {
        for path in rust_files(&root().join(dir)) {
            outside.push_str(&lex(&read(&path)).code);
            outside.push('\n');
        }
    }
    let named: BTreeSet<&str> = outside
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let mut unnamed = Vec::new();
    for path in rust_files(&root().join("crates/core/src")) {
        if is_test_file(&path) {
            continue;
        }
        for line in production(&read(&path)).lines() {
            let Some(rest) = line.trim_start().strip_prefix("pub ") else {
                continue;
            };
            let rest = rest
                .trim_start_matches("async ")
                .trim_start_matches("unsafe ");
            let mut words = rest.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            let kind = words.next().unwrap_or("");
            let kinds = ["fn", "struct", "enum", "trait", "const", "static", "type"];
            if let Some(name) = words.next()
                && kinds.contains(&kind)
                && !named.contains(name)
            {
                unnamed.push(format!("{}: {kind} {name}", rel(&path)));
            }
        }
    }
    assert!(
        unnamed.len() <= UNNAMED_PUB_MAX,
        "{} pub items of the core that nothing outside names (at most {UNNAMED_PUB_MAX}): \
         make them pub(crate) {unnamed:#?}",
        unnamed.len()
    );
    assert!(
        unnamed.len() == UNNAMED_PUB_MAX,
        "only {} now: lower UNNAMED_PUB_MAX to it {unnamed:#?}",
        unnamed.len()
    );
}

#[test]
fn no_module_cycles() {
    // When A uses B, B uses nothing of A: every module can be read and tested bottom-up.
    let mut graph = Graph::default();
    for (base, krate) in [("crates/core/src", "core"), ("src", "rootgrep")] {
        for path in rust_files(&root().join(base)) {
            graph.add(krate, &root().join(base), &path);
        }
    }
    let cycles: BTreeSet<Vec<String>> = graph.cycles().into_iter().collect();
    let known: BTreeSet<Vec<String>> = KNOWN_CYCLES
        .iter()
        .map(|c| c.iter().map(|m| m.to_string()).collect())
        .collect();
    let new: Vec<_> = cycles.difference(&known).collect();
    let broken: Vec<_> = known.difference(&cycles).collect();
    assert!(new.is_empty(), "module cycles: {new:#?}");
    assert!(
        broken.is_empty(),
        "broken, take them out of KNOWN_CYCLES: {broken:#?}"
    );
}

// ---------------------------------------------------------------------------------------
// The adapter's names

/// Tool names (from the dispatch table) and argument names (the fields of the `*Args`
/// structs) in `src/mcp/tools/`.
fn tools_and_arguments() -> (BTreeSet<String>, BTreeSet<String>) {
    let mut tools = BTreeSet::new();
    let mut arguments = BTreeSet::new();
    for path in rust_files(&root().join("src/mcp/tools")) {
        let text = read(&path);
        let mut in_args = false;
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix('"')
                && let Some((name, tail)) = rest.split_once('"')
                && tail.trim_start().starts_with("=> run!(")
            {
                tools.insert(name.to_string());
            }
            if line.starts_with("pub struct ") && line.contains("Args") && line.ends_with('{') {
                in_args = true;
            } else if in_args && line == "}" {
                in_args = false;
            } else if in_args
                && let Some(field) = line.strip_prefix("pub ")
                && let Some((name, _)) = field.split_once(':')
            {
                arguments.insert(name.trim().to_string());
            }
        }
    }
    (tools, arguments)
}

// ---------------------------------------------------------------------------------------
// A small Rust lexer: code without comments and literals, and the string literals apart

struct Lexed {
    code: String,
    strings: Vec<String>,
}

fn lex(text: &str) -> Lexed {
    let b = text.as_bytes();
    let mut code = String::with_capacity(text.len());
    let mut strings = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r'
            && matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                code.push(c as char);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let start = j + 1;
            let end = text[start..].find(&close).map_or(b.len(), |e| start + e);
            strings.push(text[start..end].to_string());
            code.push_str("\"\"");
            i = (end + close.len()).min(b.len());
        } else if c == b'"' {
            let mut j = i + 1;
            let mut literal = String::new();
            while j < b.len() && b[j] != b'"' {
                if b[j] == b'\\' {
                    j += 1;
                    // A line continuation: the next line's indentation is not in the string.
                    if b.get(j) == Some(&b'\n') {
                        while j + 1 < b.len() && (b[j + 1] == b' ' || b[j + 1] == b'\n') {
                            j += 1;
                        }
                        j += 1;
                        continue;
                    }
                }
                let ch_end = next_char(text, j);
                literal.push_str(&text[j..ch_end]);
                j = ch_end;
            }
            strings.push(literal);
            code.push_str("\"\"");
            i = j + 1;
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\''), or a lifetime ('a).
            let close = if b.get(i + 1) == Some(&b'\\') {
                text[i + 2..].find('\'').map(|e| i + 2 + e)
            } else {
                let after = next_char(text, i + 1);
                (b.get(after) == Some(&b'\'')).then_some(after)
            };
            match close {
                Some(end) => {
                    code.push_str("' '");
                    i = end + 1;
                }
                None => {
                    code.push('\'');
                    i += 1;
                }
            }
        } else {
            let end = next_char(text, i);
            code.push_str(&text[i..end]);
            i = end;
        }
    }
    Lexed { code, strings }
}

fn next_char(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j.min(text.len())
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Identifier-like words (with `::` paths kept whole).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .map(|w| w.trim_matches(':'))
        .filter(|w| !w.is_empty())
}

// ---------------------------------------------------------------------------------------
// The module graph

#[derive(Default)]
struct Graph {
    /// Module (`core::roots::set`) → the files' code.
    code: BTreeMap<String, String>,
    /// Module → the modules it uses.
    edges: BTreeMap<String, BTreeSet<String>>,
}

/// Where module `module`'s file is, and the items it defines.
fn module_of(krate: &str, base: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    std::iter::once(krate.to_string())
        .chain(parts)
        .collect::<Vec<_>>()
        .join("::")
}

fn defines(code: &str, name: &str) -> bool {
    [
        "fn", "struct", "enum", "trait", "const", "static", "type", "union",
    ]
    .iter()
    .any(|kw| code.contains(&format!("{kw} {name}")))
        || code.contains(&format!("macro_rules! {name}"))
}

impl Graph {
    fn add(&mut self, krate: &str, base: &Path, path: &Path) {
        let module = module_of(krate, base, path);
        if module == "rootgrep" && path.ends_with("main.rs") {
            // The binary is a crate of its own; it only calls the library.
            return;
        }
        let code = lex(&read(path)).code;
        self.code.insert(module, code);
    }

    fn is_module(&self, module: &str) -> bool {
        self.code.contains_key(module)
    }

    /// The module that a path names, seen from `module`, following re-exports (`use`) in
    /// the modules it passes; with whether its last segment is an item defined there.
    fn resolve(
        &self,
        module: &str,
        first: &str,
        rest: &[String],
        depth: usize,
    ) -> Option<(String, bool)> {
        let (mut at, segments) = self.locate(module, first, rest)?;
        for (n, segment) in segments.iter().enumerate() {
            let child = format!("{at}::{segment}");
            if self.is_module(&child) {
                at = child;
                continue;
            }
            let code = &self.code[&at];
            if defines(code, segment) {
                return Some((at, true));
            }
            // Brought in by a `use`: follow it.
            if depth < 8 {
                for (from, path) in use_paths(code) {
                    let named = path.last().or(Some(&from)) == Some(segment);
                    if named {
                        let mut whole = path.clone();
                        whole.extend(segments[n + 1..].iter().cloned());
                        if let Some(found) = self.resolve(&at, &from, &whole, depth + 1) {
                            return Some(found);
                        }
                    }
                }
            }
            return Some((at, false));
        }
        Some((at, false))
    }

    /// Where a path that starts with `first` begins, seen from `module`, and the segments
    /// to follow from there; `None` for paths outside the crates (`std::`, a type's `::`).
    fn locate(&self, module: &str, first: &str, rest: &[String]) -> Option<(String, Vec<String>)> {
        let krate = module.split("::").next().unwrap();
        let mut rest = rest.to_vec();
        let start = match first {
            "crate" => krate.to_string(),
            "self" => module.to_string(),
            "super" => {
                let mut at = module.rsplit_once("::")?.0.to_string();
                while rest.first().is_some_and(|s| s == "super") {
                    rest.remove(0);
                    at = at.rsplit_once("::")?.0.to_string();
                }
                at
            }
            "rootgrep_core" => "core".to_string(),
            child if self.is_module(&format!("{module}::{child}")) => {
                rest.insert(0, child.to_string());
                module.to_string()
            }
            other if krate == "rootgrep" && self.is_module(&format!("core::{other}")) => {
                rest.insert(0, other.to_string());
                "core".to_string()
            }
            _ => return None,
        };
        Some((start, rest))
    }

    fn cycles(&mut self) -> Vec<Vec<String>> {
        let modules: Vec<String> = self.code.keys().cloned().collect();
        for module in &modules {
            let mut targets = BTreeSet::new();
            for (first, rest) in paths(&self.code[module]) {
                let Some((target, defined)) = self.resolve(module, &first, &rest, 0) else {
                    continue;
                };
                let ancestor = module.starts_with(&format!("{target}::"));
                // A use of an enclosing module counts for what it defines itself (its
                // re-exports were followed to where they lead).
                if target != *module && (!ancestor || defined) {
                    targets.insert(target);
                }
            }
            self.edges.insert(module.clone(), targets);
        }
        strongly_connected(&self.edges)
            .into_iter()
            .filter(|component| component.len() > 1)
            .collect()
    }
}

/// Every path in `code` that starts with `crate`, `self`, `super`, `rootgrep_core` or any
/// other identifier followed by `::`, as (first segment, the segments after it), with `use`
/// groups (`a::{b, c::d}`) expanded.
fn paths(code: &str) -> Vec<(String, Vec<String>)> {
    let tokens = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let starts_path = is_word(&tokens[i])
            && tokens.get(i + 1).is_some_and(|t| t == "::")
            && (i == 0 || tokens[i - 1] != "::");
        if starts_path {
            let first = tokens[i].clone();
            let mut prefix = Vec::new();
            i = tree(&tokens, i + 2, &mut prefix, &mut |path| {
                out.push((first.clone(), path))
            });
        } else {
            i += 1;
        }
    }
    out
}

/// The paths of `use` declarations only, as (first segment, the rest), for re-exports.
fn use_paths(code: &str) -> Vec<(String, Vec<String>)> {
    let tokens = tokens(code);
    let mut out = Vec::new();
    for (n, token) in tokens.iter().enumerate() {
        if token == "use" && tokens.get(n + 2).is_some_and(|t| t == "::") {
            let first = tokens[n + 1].clone();
            let mut prefix = Vec::new();
            tree(&tokens, n + 3, &mut prefix, &mut |path| {
                out.push((first.clone(), path))
            });
        }
    }
    out
}

/// Reads a use tree from `i` (after `::`), calling `emit` with each full path.
fn tree(
    tokens: &[String],
    mut i: usize,
    prefix: &mut Vec<String>,
    emit: &mut dyn FnMut(Vec<String>),
) -> usize {
    let depth = prefix.len();
    loop {
        match tokens.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                loop {
                    i = tree(tokens, i, prefix, emit);
                    match tokens.get(i).map(String::as_str) {
                        Some(",") => i += 1,
                        Some("}") => {
                            i += 1;
                            break;
                        }
                        _ => break,
                    }
                    if tokens.get(i).map(String::as_str) == Some("}") {
                        i += 1;
                        break;
                    }
                }
                prefix.truncate(depth);
                return i;
            }
            Some(word) if is_word(word) => {
                prefix.push(word.to_string());
                i += 1;
                if tokens.get(i).map(String::as_str) == Some("::") {
                    i += 1;
                    continue;
                }
                emit(prefix.clone());
                prefix.truncate(depth);
                if tokens.get(i).map(String::as_str) == Some("as") {
                    i += 2;
                }
                return i;
            }
            _ => {
                if prefix.len() > depth {
                    emit(prefix.clone());
                }
                prefix.truncate(depth);
                return i;
            }
        }
    }
}

fn is_word(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut end = start + c.len_utf8();
            while let Some(&(i, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = i + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(code[start..end].to_string());
        } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
            chars.next();
            out.push("::".into());
        } else if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    out
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.edges.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

// ---------------------------------------------------------------------------------------
// One path per item

#[test]
fn one_path_per_item() {
    // An item is named one way: a module may re-export (`pub use`) only from a child module
    // of its own that is private, so the re-export is the item's one path. Re-exporting
    // from elsewhere (`crate::`, `super::`, another crate) or from a public child gives the
    // same item two names, and a reader two places to look.
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for base in ["crates/core/src", "src"] {
        for path in rust_files(&root().join(base)) {
            if is_test_file(&path) {
                continue;
            }
            // The whole file: a `#[cfg(test)] mod tests;` line may stand before re-exports.
            let code = read(&path);
            // `mod x;` or `mod x {`, after any attribute on the same line.
            let private: BTreeSet<&str> = code
                .lines()
                .map(|l| l.trim())
                .map(|l| l.rsplit_once("] ").map_or(l, |(_, rest)| rest))
                .filter_map(|l| l.strip_prefix("mod "))
                .filter_map(|rest| rest.split([';', ' ']).next())
                .collect();
            for line in code.lines() {
                let line = line.trim();
                let Some(rest) = ["pub use ", "pub(crate) use ", "pub(super) use "]
                    .iter()
                    .find_map(|p| line.strip_prefix(p))
                else {
                    continue;
                };
                let first = rest.split("::").next().unwrap_or_default();
                let (first, child) = match first {
                    "self" => ("self", rest.split("::").nth(1).unwrap_or_default()),
                    other => (other, other),
                };
                let child = child.trim_end_matches(['{', ';', '*']);
                let allowed = first == "std" || private.contains(child);
                let listed = SECOND_PATHS.contains(&(rel(&path).as_str(), line));
                if !allowed && !listed {
                    found.push(format!("{}: {line}", rel(&path)));
                }
                if listed {
                    seen.insert((rel(&path), line.to_string()));
                }
            }
        }
    }
    let gone: Vec<_> = (SECOND_PATHS.iter())
        .filter(|(file, line)| !seen.contains(&(file.to_string(), line.to_string())))
        .collect();
    assert!(
        gone.is_empty(),
        "fixed, take them out of SECOND_PATHS: {gone:#?}"
    );
    assert!(
        found.is_empty(),
        "re-exports that give an item a second path (import it where it is, or make the \
         module private): {found:#?}"
    );
}

#[test]
fn the_reading_order_lists_every_module_above_what_it_imports() {
    // `crates/core/src/lib.rs` names the core's modules in reading order, bottom up: a
    // newcomer reading in that order meets every module after the ones it uses.
    let lib = read(&root().join("crates/core/src/lib.rs"));
    let declared: Vec<String> = production(&lib)
        .lines()
        .filter_map(|l| l.trim().rsplit_once("mod ").map(|(_, m)| m))
        .filter_map(|m| m.strip_suffix(';'))
        .map(str::to_string)
        .collect();
    let doc: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut order: Vec<String> = Vec::new();
    for (n, piece) in doc.split('`').enumerate() {
        if n % 2 == 1 && declared.iter().any(|m| m == piece) && !order.iter().any(|o| o == piece) {
            order.push(piece.to_string());
        }
    }
    let missing: Vec<_> = declared.iter().filter(|m| !order.contains(m)).collect();
    assert!(
        missing.is_empty(),
        "lib.rs's reading order omits {missing:?}"
    );
    let mut graph = Graph::default();
    for path in rust_files(&root().join("crates/core/src")) {
        graph.add("core", &root().join("crates/core/src"), &path);
    }
    graph.cycles();
    let top = |module: &str| module.split("::").nth(1).map(str::to_string);
    let at = |m: &str| order.iter().position(|o| o == m);
    let mut late = BTreeSet::new();
    for (from, targets) in &graph.edges {
        for to in targets {
            let (Some(a), Some(b)) = (top(from), top(to)) else {
                continue;
            };
            if a != b && at(&b) > at(&a) {
                late.insert(format!("{a} uses {b}, listed after it"));
            }
        }
    }
    assert!(late.is_empty(), "lib.rs's reading order: {late:#?}");
}

#[test]
fn every_file_architecture_names_exists() {
    // The map must not send a reader to a file that is not there: every `name.rs` (or
    // `dir/`, `dir/name.rs`) it names in backticks is the end of a path in the repository.
    let map = read(&root().join("ARCHITECTURE.md"));
    let mut known: Vec<String> = Vec::new();
    for base in ["crates/core/src", "src", "tests", ".ci", "bench", "docs"] {
        let mut stack = vec![root().join(base)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                let mut name = rel(&path);
                if path.is_dir() {
                    name.push('/');
                    stack.push(path);
                }
                known.push(format!("/{name}"));
            }
        }
    }
    for file in std::fs::read_dir(root()).unwrap().flatten() {
        known.push(format!("/{}", file.file_name().to_string_lossy()));
    }
    let named = |piece: &str| {
        !piece.contains(' ')
            && !piece.starts_with('-')
            && (piece.ends_with(".rs") || piece.ends_with(".md") || piece.ends_with(".sh"))
    };
    let missing: BTreeSet<&str> = (map.split('`').enumerate())
        .filter(|(n, piece)| n % 2 == 1 && named(piece))
        .map(|(_, piece)| piece)
        .filter(|piece| {
            let piece = piece
                .trim_start_matches("../")
                .trim_start_matches("crates/core/src/");
            !known.iter().any(|k| k.ends_with(&format!("/{piece}")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names files that are not there: {missing:#?}"
    );
}
