//! Unit tests of the grep rendering.

use super::*;
use std::path::PathBuf;

use crate::mcp::tools::schema_of;

#[test]
fn structured_costs_are_exact_within_a_comma_per_list() {
    let m = GrepMatch {
        path: PathBuf::from("/a/\"b\".rs"),
        line: 12,
        column: 3,
        end_line: 12,
        text: "x\ty".into(),
        before: vec![search::ContextLine {
            line: 11,
            text: "é".into(),
        }],
        after: vec![],
        omitted: 7,
    };
    // Exact but for one comma per list, counted for every line.
    let path = m.path.display().to_string();
    let serialized = serde_json::to_string(&match_out(&m, &path)).unwrap();
    assert_eq!(
        match_out_cost(&m, json_len(&path)),
        serialized.len() + 1 + 1
    );
    // Without context the empty lists are left out, and the cost follows.
    let bare = GrepMatch {
        before: vec![],
        omitted: 0,
        ..m.clone()
    };
    let serialized = serde_json::to_string(&match_out(&bare, &path)).unwrap();
    assert!(!serialized.contains("before") && !serialized.contains("after"));
    assert_eq!(match_out_cost(&bare, json_len(&path)), serialized.len() + 1);
    // The output schema does not require what may be left out.
    let schema = Value::Object((*schema_of::<GrepOut>()).clone());
    let mut item = &schema["properties"]["matches"]["items"];
    if let Some(name) = item["$ref"].as_str() {
        item = &schema["$defs"][name.rsplit('/').next().unwrap()];
    }
    let required = item["required"].to_string();
    assert!(required.contains("\"text\""), "{item}");
    assert!(!required.contains("before") && !required.contains("after"));
    assert!(!required.contains("scope"));
    // A scope adds exactly its field's size.
    let mut scoped = match_out(&bare, &path);
    scoped.scope = Some(ScopeOut {
        kind: "method".into(),
        name: "pa\"rse".into(),
        container: Some("Ü".into()),
        line: 3,
        end_line: 1_000_000,
    });
    let with_scope = serde_json::to_string(&scoped).unwrap();
    assert_eq!(
        match_out_cost(&bare, json_len(&path)) + scope_cost(&scoped.scope),
        with_scope.len() + 1
    );
}
