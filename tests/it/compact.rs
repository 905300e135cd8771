//! Compact answers through the wire: for every tool with an output schema, the structured
//! content of a page costs at most 1.2 times its text (both as sent); paths are relative to
//! the one root (the structured content names it once), absolute with several roots or
//! `--paths absolute`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// A small C project: 120 files of a few functions each, calling each other.
fn project(root: &Path) {
    let src = root.join("drivers").join("serial");
    std::fs::create_dir_all(&src).unwrap();
    for f in 0..120 {
        let mut body = format!(
            "/* Serial driver {f}: ring buffers, interrupts and the wait queue. */\n\n\
             #include <nuttx/config.h>\n#include <nuttx/semaphore.h>\n\n"
        );
        for g in 0..6 {
            body.push_str(&format!(
                "/* Wait for the device {f}.{g} to drain its transmit buffer. */\n\n\
                 static int uart_{f}_drain_{g}(FAR struct uart_dev_s *dev, int timeout)\n{{\n\
                 \x20 int ret = nxsem_wait(&dev->xmitsem);\n\
                 \x20 if (ret < 0)\n    {{\n      return ret;\n    }}\n\n\
                 \x20 return uart_{f}_drain_{}(dev, timeout - 1);\n}}\n\n",
                (g + 1) % 6
            ));
        }
        std::fs::write(src.join(format!("uart_{f:03}.c")), body).unwrap();
    }
}

/// Release notes shaped like nuttx's: many files, each with one short matching line
/// (`nxsem_trywait`) between two short lines, so a `-C 1` page is mostly context and
/// file headings (the §16 figure of issue #36: 1.29 on nuttx).
fn notes(root: &Path) {
    let dir = root.join("docs").join("releases");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..200 {
        let body = format!(
            "# Release notes {i}\n- uart: the console flushes on panic\n\
             - sem: nxsem_trywait no longer spins ({i}.1)\n- net: fewer copies on receive\n"
        );
        std::fs::write(dir.join(format!("notes-{i:03}.md")), body).unwrap();
    }
}

/// Bytes of the text as sent (a JSON string) and of the structured content.
fn sizes(result: &Value) -> (usize, usize) {
    let text = serde_json::to_string(&text(result)).unwrap().len();
    let structured = serde_json::to_string(&result["structuredContent"])
        .unwrap()
        .len();
    (text, structured)
}

#[test]
fn structured_content_costs_at_most_a_fifth_more_than_the_text() {
    let ws = workspace();
    project(&ws.app);
    notes(&ws.app);
    let mut client = Client::spawn(&["--no-watch"], &ws.app);
    client.handshake(json!({}));
    let cases = [
        ("grep", json!({"pattern": "nxsem_wait"})),
        (
            "grep",
            json!({"pattern": "nxsem_wait", "output_mode": "count"}),
        ),
        (
            "grep",
            json!({"pattern": "return", "output_mode": "content"}),
        ),
        (
            "grep",
            json!({"pattern": "nxsem_wait", "output_mode": "content", "-C": 2}),
        ),
        (
            "grep",
            json!({"pattern": "nxsem_trywait", "output_mode": "content", "-C": 1}),
        ),
        ("grep", json!({"pattern": "nxsem_wait", "scope": true})),
        ("glob", json!({"pattern": "**/*.c"})),
        ("list_directory", json!({"path": "drivers/serial"})),
        ("symbols", json!({"query": "uart_1"})),
        ("outline", json!({"path": "drivers/serial"})),
        ("references", json!({"name": "nxsem_wait"})),
        ("search", json!({"query": "drain the transmit buffer"})),
    ];
    let mut report = Vec::new();
    for (tool, args) in cases {
        let result = client.call(tool, args.clone());
        assert!(!is_error(&result), "{tool} {args}: {}", text(&result));
        let (text_bytes, structured_bytes) = sizes(&result);
        assert!(
            text_bytes > 1000,
            "{tool} {args}: a page too small to measure"
        );
        let ratio = structured_bytes as f64 / text_bytes as f64;
        report.push(format!(
            "{tool} {args}: {text_bytes} / {structured_bytes} = {ratio:.2}"
        ));
        assert!(ratio <= 1.2, "{}", report.join("\n"));
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn paths_are_relative_to_the_one_root_else_absolute() {
    let ws = workspace();
    let rel = Path::new("src").join("main.rs");
    let abs = s(&ws.app.join("src").join("main.rs")).to_string();
    // One root: relative in both forms, the root named once.
    let mut one = Client::spawn(&["--no-watch"], &ws.app);
    one.handshake(json!({}));
    let found = one.call("grep", json!({"pattern": "println"}));
    assert_eq!(text(&found), format!("{}\n", rel.display()));
    assert_eq!(found["structuredContent"]["root"], s(&ws.app));
    assert_eq!(listed_files(&found), std::slice::from_ref(&abs));
    // --paths absolute: absolute in both, no root.
    let mut absolute_paths = Client::spawn(&["--no-watch", "--paths", "absolute"], &ws.app);
    absolute_paths.handshake(json!({}));
    let found = absolute_paths.call("grep", json!({"pattern": "println"}));
    assert_eq!(text(&found), format!("{abs}\n"));
    assert!(found["structuredContent"].get("root").is_none(), "{found}");
    assert_eq!(found["structuredContent"]["files"], json!([abs]));
    // Two roots: a relative path could name a file in either, so paths are absolute.
    let mut two = Client::spawn(&["--no-watch", s(&ws.app), s(&ws.outside)], &ws.base);
    two.handshake(json!({}));
    let found = two.call("grep", json!({"pattern": "println"}));
    assert_eq!(text(&found), format!("{abs}\n"));
    assert!(found["structuredContent"].get("root").is_none(), "{found}");
    // A relative path shown is one the tools take back as it is.
    let read = one.call("read_file", json!({"path": rel.to_str().unwrap()}));
    assert!(text(&read).contains("println"), "{read}");
}
