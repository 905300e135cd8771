//! Unit tests of `outline`'s rendering.

use std::path::PathBuf;

use super::*;
use rootgrep_core::symbols::{find::FileOutline, lang::Lang, parse::SymbolStats};

fn def(name: &str, line: u64) -> Definition {
    Definition {
        name: name.to_string(),
        kind: "function",
        line,
        end_line: line,
        name_line: line,
        signature: format!("void {name}(void)"),
        container: None,
        depth: 0,
    }
}

/// A full page keeps the definitions of the file it stopped in: the structured result
/// holds what the text shows (it once dropped that file, so a one-file outline longer
/// than `head_limit` had no definitions at all in its structured result).
#[test]
fn outline_page_that_stops_inside_a_file_keeps_its_definitions() {
    let outcome = symbols::find::OutlineOutcome {
        files: vec![
            FileOutline {
                path: PathBuf::from("/t/a.c"),
                lang: Lang::C,
                defs: vec![def("a1", 1), def("a2", 2)],
                error: None,
            },
            FileOutline {
                path: PathBuf::from("/t/b.c"),
                lang: Lang::C,
                defs: vec![def("b1", 1), def("b2", 2), def("b3", 3)],
                error: None,
            },
        ],
        complete: true,
        stats: SymbolStats::default(),
        cancelled: false,
    };
    let answer = render_outline(
        &outcome,
        1,
        3,
        &crate::mcp::render::paths::Paths::absolute(),
        100_000,
    );
    let structured = answer.structured.expect("structured").into_tree();
    let names: Vec<(String, String)> = structured["files"]
        .as_array()
        .expect("files")
        .iter()
        .flat_map(|f| {
            f["definitions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    (
                        f["path"].as_str().unwrap_or("").to_string(),
                        d[3].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let expected: Vec<(String, String)> = [("a.c", "a2"), ("b.c", "b1"), ("b.c", "b2")]
        .iter()
        .map(|(f, n)| (format!("/t/{f}"), format!("void {n}(void)")))
        .collect();
    assert_eq!(names, expected);
    assert_eq!(structured["next_offset"], 4);
    assert!(answer.text.contains("b2"), "{}", answer.text);
}
