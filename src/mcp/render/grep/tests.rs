//! Unit tests of the grep rendering.

use super::*;
use serde_json::Value;

use crate::mcp::render::rows::MatchRow;
use crate::mcp::tools::schema_of;
use rootgrep_core::search::{ContextLine, GrepMatch};

fn line(line: u64, text: &str) -> ContextLine {
    ContextLine {
        line,
        text: text.into(),
    }
}

fn matched(path: &str, line: u64, before: Vec<ContextLine>, after: Vec<ContextLine>) -> GrepMatch {
    GrepMatch {
        path: Path::new(path).into(),
        line,
        column: 3,
        end_line: line,
        text: format!("match {line} \"é\""),
        before,
        after,
        omitted: 0,
    }
}

fn page<'a>(
    matches: &'a [GrepMatch],
    scopes: &[Option<Definition>],
) -> (String, Vec<FileMatchesOut<'a>>, Rooms) {
    let mut rooms = Rooms::new(1 << 20, 0, 0);
    let before = rooms;
    let mut text = String::new();
    let page = content::render(
        matches,
        (scopes, &content::Recalled::default()),
        true,
        &Paths::absolute(),
        &mut rooms,
        &mut text,
    );
    assert_eq!(page.shown, matches.len());
    let spent = Rooms {
        text: before.text - rooms.text,
        structured: before.structured - rooms.structured,
    };
    (text, page.files, spent)
}

#[test]
fn each_line_is_one_row_and_the_costs_bound_the_serialized_size() {
    // Overlapping context: line 11 follows match 10 and precedes match 12, which is
    // also written as context of match 10 (-A 2) before its own entry.
    let matches = [
        matched(
            "/a/x.rs",
            10,
            vec![line(9, "nine")],
            vec![line(11, "eleven"), line(12, "match 12 \"é\"")],
        ),
        matched(
            "/a/x.rs",
            12,
            vec![line(11, "eleven")],
            vec![line(13, "thirteen")],
        ),
        matched("/a/y.rs", 1, vec![], vec![]),
    ];
    let (text, files, spent) = page(&matches, &[]);
    assert_eq!(
        text,
        "/a/x.rs\n9-nine\n10:match 10 \"é\"\n11-eleven\n12:match 12 \"é\"\n13-thirteen\n\n\
         /a/y.rs\n1:match 1 \"é\"\n\n"
    );
    assert_eq!(files.len(), 2);
    let rows = |rows: &[MatchRow]| rows.iter().map(|r| r.line).collect::<Vec<_>>();
    assert_eq!(rows(&files[0].matches), [10, 12]);
    // Each line once, as the text marks it: context in the matching row it is beside.
    assert!(files[0].context.is_empty());
    assert_eq!(
        serde_json::to_value(&files[0].matches).unwrap(),
        serde_json::json!([
            [10, "match 10 \"é\"", ["nine"], ["eleven"]],
            [12, "match 12 \"é\"", [], ["thirteen"]]
        ])
    );
    let serialized = serde_json::to_string(&files).unwrap().len();
    assert!(
        spent.structured >= serialized,
        "{} < {serialized}",
        spent.structured
    );
    assert!(
        spent.structured <= serialized + 256,
        "{} ≫ {serialized}",
        spent.structured
    );
    assert_eq!(
        spent.text,
        json_len(&text) - 2 - 2,
        "all but the last blank line"
    );
}

#[test]
fn matches_are_listed_under_their_scopes() {
    let def = |line: u64, end_line: u64, name: &str| Definition {
        name: name.into(),
        kind: "function",
        line,
        end_line,
        name_line: line,
        signature: format!("fn {name}()"),
        container: None,
        depth: 0,
    };
    let matches = [
        matched("/a/x.rs", 2, vec![], vec![]),
        matched("/a/x.rs", 3, vec![], vec![]),
        matched("/a/x.rs", 20, vec![], vec![]),
        matched("/a/x.rs", 30, vec![], vec![]),
    ];
    let scopes = [
        Some(def(1, 5, "f")),
        Some(def(1, 5, "f")),
        None,
        Some(def(25, 40, "g")),
    ];
    let (text, files, spent) = page(&matches, &scopes);
    assert!(text.contains("@@ function f (1-5)\n2:"), "{text}");
    assert!(text.contains("@@ (outside any definition)\n20:"), "{text}");
    let outside: Vec<u64> = files[0].matches.iter().map(|m| m.line).collect();
    assert_eq!(outside, [20]);
    let scoped: Vec<(&str, Vec<u64>)> = files[0]
        .scopes
        .iter()
        .map(|s| (s.name.as_str(), s.lines.iter().map(|l| l.line).collect()))
        .collect();
    assert_eq!(scoped, [("f", vec![2, 3]), ("g", vec![30])]);
    assert!(spent.structured >= serde_json::to_string(&files).unwrap().len());
}

#[test]
fn the_schema_requires_only_what_is_always_there() {
    let schema = Value::Object((*schema_of::<GrepOut>()).clone());
    let required = |schema: &Value| schema["required"].to_string();
    assert_eq!(required(&schema), r#"["total"]"#);
    let file = &schema["properties"]["matches"]["items"];
    assert_eq!(required(file), r#"["path"]"#);
    let row = &file["properties"]["matches"]["items"];
    assert_eq!(row["minItems"], 2, "{row}");
    // Nothing empty or zero is written.
    let out = GrepOut::default();
    assert_eq!(serde_json::to_string(&out).unwrap(), r#"{"total":0}"#);
}

#[test]
fn context_lines_are_charged_what_they_cost_in_their_rows() {
    // 100 matches with a line before and after each, none shared; one match without
    // context between lines of its neighbours' context.
    let matches: Vec<GrepMatch> = (0..100)
        .map(|k| {
            let at = 10 + 4 * k;
            let before = vec![line(at - 1, "before")];
            matched("/a/x.rs", at, before, vec![line(at + 1, "after")])
        })
        .collect();
    let (text, files, spent) = page(&matches, &[]);
    assert!(text.contains("9-before\n10:match 10"), "{text}");
    assert!(files[0].context.is_empty());
    assert_eq!(files[0].matches[0].before, ["before"]);
    assert_eq!(files[0].matches[0].after, ["after"]);
    let serialized = serde_json::to_string(&files).unwrap().len();
    assert!(
        spent.structured >= serialized,
        "{} < {serialized}",
        spent.structured
    );
    // Each matching row is charged 3 bytes over (its text's share of a `[line, text]`
    // row); the context lines nothing more.
    assert!(
        spent.structured <= serialized + 3 * matches.len() + 256,
        "{} ≫ {serialized}",
        spent.structured
    );
}
