//! The definition enclosing a line: `grep` with `scope` names, for each match, the
//! function, method, class… it sits in (like `git grep -p`, but from the syntax tree rather
//! than a guess from indentation).
//!
//! Only the files of one result page are looked at. A file's definitions come from the
//! symbol index when it can vouch for the file (fresh and unchanged since it was parsed),
//! otherwise the file is parsed now: the answer is never stale. Files of languages without
//! symbols have no scope. `references` takes the enclosing definitions of its matches the
//! same way.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;

use super::extract::Definition;
use super::index::{Snapshot, SymbolIndex};
use super::lang::Lang;
use super::parse::{FileError, SymbolStats, parse_all};
use crate::mutex::lock;
use crate::walk::Control;

/// For each `(path, line)` of `entries`, the innermost definition containing the line, or
/// `None` (outside every definition, a language without symbols, a file that cannot be
/// parsed). Each file is looked up or parsed once, files in parallel on `threads`, which
/// take turns in `share`'s part of the search pool (its counters are left alone).
/// Setting `abort` (tree-sitter's cancellation flag) stops the parses: the rest are `None`.
pub fn enclosing(
    entries: &[(&Path, u64)],
    symbols: Option<&SymbolIndex>,
    threads: usize,
    share: &Control,
    abort: &AtomicUsize,
) -> Vec<Option<Definition>> {
    let mut stats = SymbolStats::default();
    let defs = definitions_of_files(
        entries.iter().map(|(path, _)| *path),
        symbols,
        threads,
        &share.same_share(),
        abort,
        &mut stats,
    );
    entries
        .iter()
        .map(|(path, line)| innermost(defs.get(*path)?.as_ref().ok()?, *line).cloned())
        .collect()
}

/// The innermost definition of `defs` containing `line`: the deepest, and among equally
/// deep ones (C macros, overlapping ranges after a parse error) the one starting last.
pub(crate) fn innermost(defs: &[Definition], line: u64) -> Option<&Definition> {
    defs.iter()
        .filter(|d| d.contains_line(line))
        .max_by_key(|d| (d.depth, d.line))
}

/// The definitions of each distinct file of `paths` that has a language: from the symbol
/// index where it vouches for the file, the others parsed on `threads` threads. `stats`
/// counts them all as candidates, and the parses (parsed, too large, unreadable). A file
/// that could not be parsed maps to why; one whose parse was stopped is absent.
pub(crate) fn definitions_of_files<'p>(
    paths: impl Iterator<Item = &'p Path>,
    symbols: Option<&SymbolIndex>,
    threads: usize,
    control: &Control,
    abort: &AtomicUsize,
    stats: &mut SymbolStats,
) -> HashMap<PathBuf, Result<Vec<Definition>, FileError>> {
    let mut found: HashMap<PathBuf, Result<Vec<Definition>, FileError>> = HashMap::new();
    let mut parse: Vec<(PathBuf, Lang)> = Vec::new();
    let mut seen: HashSet<&Path> = HashSet::new();
    // One snapshot per root for the whole page, asked for once even when there is none:
    // taking one syncs with the watcher.
    let mut snapshots: HashMap<PathBuf, Option<Snapshot>> = HashMap::new();
    for path in paths {
        if !seen.insert(path) {
            continue;
        }
        let Some(lang) = Lang::from_path(path) else {
            continue;
        };
        let snapshot = match symbols.and_then(|index| Some((index, index.root_of(path)?))) {
            Some((index, root)) => snapshots
                .entry(root)
                .or_insert_with_key(|root| index.snapshot(root))
                .as_ref(),
            None => None,
        };
        match snapshot.and_then(|snapshot| snapshot.file_definitions(path)) {
            Some(defs) => {
                found.insert(path.to_path_buf(), Ok(defs));
            }
            None => parse.push((path.to_path_buf(), lang)),
        }
    }
    stats.candidates += (found.len() + parse.len()) as u64;
    let parsed = Mutex::new(HashMap::new());
    parse_all(
        &parse,
        threads,
        control,
        abort,
        stats,
        None,
        |path, _, defs| {
            lock(&parsed).insert(path.to_path_buf(), defs);
        },
    );
    found.extend(
        parsed
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, line: u64, end_line: u64, depth: usize) -> Definition {
        Definition {
            name: name.into(),
            kind: "function",
            line,
            end_line,
            name_line: line,
            signature: String::new(),
            container: None,
            depth,
        }
    }

    #[test]
    fn the_deepest_enclosing_definition_wins() {
        let defs = [
            def("Parser", 1, 30, 0),
            def("parse", 3, 10, 1),
            def("helper", 12, 20, 1),
            def("inner", 14, 16, 2),
        ];
        let name = |line| innermost(&defs, line).map(|d| d.name.as_str());
        assert_eq!(name(2), Some("Parser"));
        assert_eq!(name(3), Some("parse"));
        assert_eq!(name(10), Some("parse"));
        assert_eq!(name(11), Some("Parser"));
        assert_eq!(name(15), Some("inner"));
        assert_eq!(name(17), Some("helper"));
        assert_eq!(name(31), None);
    }

    #[test]
    fn files_are_parsed_once_and_other_languages_have_no_scope() {
        let dir = tempfile::tempdir().unwrap();
        let rs = dir.path().join("lib.rs");
        std::fs::write(
            &rs,
            "struct Parser;\n\nimpl Parser {\n    fn parse(&self) {\n        let x = 1;\n    }\n}\n\nconst TOP: u32 = 1;\n",
        )
        .unwrap();
        let txt = dir.path().join("notes.txt");
        std::fs::write(&txt, "fn parse() {}\n").unwrap();
        let never = AtomicUsize::new(0);
        let entries = [
            (rs.as_path(), 5),
            (rs.as_path(), 2),
            (rs.as_path(), 9),
            (txt.as_path(), 1),
        ];
        let scopes = enclosing(&entries, None, 2, &Control::new(), &never);
        let shown: Vec<Option<(&str, &str)>> = scopes
            .iter()
            .map(|d| d.as_ref().map(|d| (d.kind, d.name.as_str())))
            .collect();
        assert_eq!(shown[0], Some(("method", "parse")));
        assert_eq!(shown[1], None, "line 2 is between definitions");
        assert_eq!(shown[2], Some(("constant", "TOP")));
        assert_eq!(shown[3], None, "a .txt file has no symbols");
        assert_eq!(
            enclosing(&entries, None, 1, &Control::new(), &AtomicUsize::new(1)),
            vec![None, None, None, None],
            "an aborted lookup parses nothing"
        );
    }
}
