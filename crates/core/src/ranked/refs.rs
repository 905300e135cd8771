//! Code references in a query, as agents and stack traces write them: `src/queue.rs:42:9`,
//! `at lib/getpart.c:111`, Python's `File "app/views.py", line 87`, or a bare file name
//! (`timer.c`). A reference ([`CodeRef`], kept with the query's terms) names a file (its
//! path as written, matched against the indexed paths by whole components from the end, so
//! an absolute path from another machine still names the root's file) and maybe a line;
//! `score.rs` favours that file's documents and puts the definition holding the line first.

use super::terms::CodeRef;

/// References read from one query at most (a pasted trace keeps its first frames).
pub(crate) const MAX_REFS: usize = 8;

/// Extensions that make a token a file name (source and the texts beside it).
const EXTENSIONS: &[&str] = &[
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "rs", "py", "pyi", "go", "js", "jsx", "mjs", "cjs",
    "ts", "tsx", "java", "kt", "swift", "rb", "php", "cs", "m", "mm", "scala", "lua", "sh", "toml",
    "yaml", "yml", "json", "md",
];

/// The references of `text`, first met first, de-duplicated, at most [`MAX_REFS`].
pub(crate) fn code_refs(text: &str) -> Vec<CodeRef> {
    let tokens: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;|=".contains(c))
        .filter(|t| !t.is_empty())
        .collect();
    let mut out: Vec<CodeRef> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let Some(mut found) = reference(token) else {
            continue;
        };
        // Python: `File "x.py", line 87`.
        if found.line.is_none() && tokens.get(i + 1) == Some(&"line") {
            found.line = tokens.get(i + 2).and_then(|n| number(n));
        }
        if !out.contains(&found) {
            out.push(found);
        }
        if out.len() == MAX_REFS {
            break;
        }
    }
    out
}

/// `path.ext`, `path.ext:LINE` or `path.ext:LINE:COL` (trailing `.`/`:` allowed), with a known
/// extension and a file name of letters, digits, `_`, `-`, `.`.
fn reference(token: &str) -> Option<CodeRef> {
    let token = token.trim_end_matches(['.', ':']);
    let mut parts = token.split(':');
    let mut path = parts.next()?;
    // A Windows drive (`C:\src\a.c:12`) is part of the path.
    let drive;
    if path.len() == 1 && path.chars().all(|c| c.is_ascii_alphabetic()) {
        let rest = parts.next()?;
        drive = format!("{path}:{rest}");
        path = &drive;
    }
    let line = parts.next().map(number);
    if matches!(line, Some(None)) {
        return None;
    }
    let components: Vec<String> = path
        .split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect();
    let name = components.last()?;
    let (stem, ext) = name.rsplit_once('.')?;
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    if stem.is_empty() || !name.chars().all(plain) || !EXTENSIONS.contains(&ext) {
        return None;
    }
    Some(CodeRef {
        components,
        line: line.flatten(),
        firm: true,
    })
}

fn number(text: &str) -> Option<u32> {
    let text = text.trim_end_matches(['.', ':', ',']);
    text.parse().ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<(String, Option<u32>)> {
        code_refs(text)
            .into_iter()
            .map(|r| (r.components.join("/"), r.line))
            .collect()
    }

    #[test]
    fn references_as_traces_and_agents_write_them() {
        let one = |p: &str, l: Option<u32>| vec![(p.to_string(), l)];
        assert_eq!(
            refs("panicked at src/queue.rs:42:9:"),
            one("src/queue.rs", Some(42))
        );
        assert_eq!(
            refs("#0 0x55 in line_length /home/ci/curl/tests/server/getpart.c:111:25"),
            one("home/ci/curl/tests/server/getpart.c", Some(111))
        );
        assert_eq!(
            refs("  File \"app/views.py\", line 87, in index"),
            one("app/views.py", Some(87))
        );
        assert_eq!(
            refs("the timer in timer.c fires twice."),
            one("timer.c", None)
        );
        assert_eq!(refs("C:\\src\\a.c:12"), one("C:/src/a.c", Some(12)));
        assert_eq!(refs("--> ./src/main.rs:3:5"), one("src/main.rs", Some(3)));
        // Not references: versions, sentences' ends, URLs' hosts, unknown extensions.
        assert!(refs("version 1.2.3, e.g. this. see example.com and a.b:c").is_empty());
        assert!(refs("x.rs:abc").is_empty());
        let many: String = (0..20).map(|i| format!("f{i}.c:{} ", i + 1)).collect();
        assert_eq!(code_refs(&many).len(), MAX_REFS);
    }

    #[test]
    fn a_reference_names_a_file_by_whole_components_from_the_end() {
        let r = &code_refs("/home/ci/curl/tests/server/getpart.c:111")[0];
        assert!(r.names(b"tests/server/getpart.c"));
        assert!(!r.names(b"tests/server/xgetpart.c"));
        assert!(!r.names(b"lib/getpart.c"));
        let bare = &code_refs("getpart.c")[0];
        assert!(bare.names(b"tests/server/getpart.c"));
        assert_eq!(bare.stem(), "getpart");
    }
}
