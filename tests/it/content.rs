//! The content index through the wire: `list_roots` says when it is ready, and `grep`
//! answers exactly as a server without it does, on files of every
//! awkward kind (binary, byte-order marks, UTF-16, Latin-1, CRLF, empty, over 8 MiB), and
//! after files change behind its back.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

fn awkward(ws: &Workspace) {
    let w = |rel: &str, bytes: &[u8]| {
        let path = ws.app.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    w(
        "src/lib.rs",
        b"pub fn reset_timer() {}\nfn other_thing() { reset_timer(); }\n",
    );
    w(
        "src/deep/mod.rs",
        b"// Needle in a DEEP place\nfn deep_needle() {}\n",
    );
    w("docs/crlf.md", b"needle on a line\r\nwith CRLF endings\r\n");
    w("docs/empty.txt", b"");
    w("data/blob.bin", b"needle\0binary reset_timer\n");
    w("data/bom8.txt", b"\xef\xbb\xbfneedle behind a UTF-8 mark\n");
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(
            "needle in UTF-16\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    w("data/utf16.txt", &utf16);
    w("data/latin1.txt", b"caf\xe9 needle\n");
    let mut big = b"reset_timer at the start\n".to_vec();
    big.resize(9 << 20, b'x');
    big.extend_from_slice(b"\nneedle at the end\n");
    w("data/big.log.txt", &big);
}

/// Waits until the file index is fresh and `list_roots` says the content index is ready
/// or off; its line.
fn wait_content(client: &mut Client) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let roots = client.call("list_roots", json!({}));
        let root = &roots["structuredContent"]["roots"][0];
        let line = root["content"].as_str().unwrap_or("").to_string();
        let fresh = root["index"].as_str().unwrap_or("").starts_with("fresh");
        if fresh && (line.starts_with("ready") || line == "off") {
            return line;
        }
        assert!(
            Instant::now() < deadline,
            "content index never ready: {root}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn answers(client: &mut Client, calls: &[(&str, Value)]) -> Vec<Value> {
    calls
        .iter()
        .map(|(tool, args)| client.call(tool, args.clone()))
        .collect()
}

fn calls() -> Vec<(&'static str, Value)> {
    let mut calls = Vec::new();
    for pattern in [
        "needle",
        "NEEDLE",
        "reset_timer",
        "deep_needle|other_thing",
        r"fn \w+_needle\(",
        "caf.",
        "nowhere_at_all",
        "x{3}",
    ] {
        for extra in [
            json!({}),
            json!({"output_mode": "content", "-C": 1}),
            json!({"output_mode": "count", "-i": true}),
            json!({"word": true, "output_mode": "content"}),
        ] {
            let mut args = extra.clone();
            args["pattern"] = json!(pattern);
            calls.push(("grep", args));
        }
    }
    calls
}

#[test]
fn answers_are_the_same_with_and_without_the_content_index() {
    let ws = workspace();
    awkward(&ws);
    let mut with = Client::spawn(&["--no-cache"], &ws.app);
    with.handshake(json!({}));
    let line = wait_content(&mut with);
    assert!(line.contains(" files"), "{line}");
    let mut without = Client::spawn(&["--no-cache", "--no-content-index"], &ws.app);
    without.handshake(json!({}));
    assert_eq!(wait_content(&mut without), "off");
    let calls = calls();
    assert_eq!(answers(&mut with, &calls), answers(&mut without, &calls));

    // Files changed behind the server's back, one keeping its size (and then its mtime):
    // the answers follow at once, whatever the content index read before.
    let path = ws.app.join("src/deep/mod.rs");
    let before = std::fs::metadata(&path).unwrap();
    std::fs::write(&path, b"// Needle in a WIDE place\nfn wide_needle() {}\n").unwrap();
    let file = std::fs::File::options().append(true).open(&path).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    std::fs::write(ws.app.join("src/new.rs"), b"fn wide_needle_too() {}\n").unwrap();
    let changed = [
        ("grep", json!({"pattern": "WIDE|wide_needle"})),
        ("grep", json!({"pattern": "deep_needle"})),
    ];
    let got = answers(&mut with, &changed);
    assert_eq!(got, answers(&mut without, &changed));
    let text = got[0]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("mod.rs") && text.contains("new.rs"), "{text}");
}
