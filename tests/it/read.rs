//! read_file / file_info through the wire: pages, special files, images, budget.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

#[test]
fn read_file_on_a_fifo_fails_at_once() {
    let ws = workspace();
    let fifo = ws.app.join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let mut client = Client::spawn(&[], &ws.app);
    client.handshake(json!({}));
    let started = Instant::now();
    let result = client.call("read_file", json!({"path": "pipe"}));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(is_error(&result));
    assert!(text(&result).contains("FIFO"));
    let info = client.call("file_info", json!({"path": "pipe"}));
    assert!(!is_error(&info));
    assert!(
        info["structuredContent"]["type"]
            .as_str()
            .unwrap()
            .contains("FIFO")
    );
}

#[test]
fn pages_images_binary_and_budget() {
    let ws = workspace();
    let body: String = (1..=5000).map(|i| format!("line number {i}\n")).collect();
    std::fs::write(ws.app.join("big.txt"), body).unwrap();
    std::fs::write(ws.app.join("pic.png"), b"\x89PNG\r\n\x1a\n0000").unwrap();
    std::fs::write(ws.app.join("blob.bin"), b"\x7fELF\x00\x00\x00").unwrap();
    let mut client = Client::spawn(&["--max-output-bytes", "4096"], &ws.app);
    client.handshake(json!({}));
    let page = client.call(
        "read_file",
        json!({"path": "big.txt", "offset": "10", "limit": 3}),
    );
    let body = text(&page);
    assert!(
        body.starts_with("10\tline number 10\n11\tline number 11\n12\tline number 12\n"),
        "{body}"
    );
    assert!(body.contains("offset=13"));
    let budget = client.call("read_file", json!({"path": "big.txt"}));
    let body = text(&budget);
    assert!(body.len() <= 4096, "budget exceeded: {}", body.len());
    assert!(body.contains("output budget"));
    let image = client.call("read_file", json!({"path": "pic.png"}));
    let blocks = image["content"].as_array().unwrap();
    assert!(
        blocks
            .iter()
            .any(|b| b["type"] == "image" && b["mimeType"] == "image/png")
    );
    let binary = client.call("read_file", json!({"path": "blob.bin"}));
    assert!(text(&binary).contains("binary file"));
    assert!(!text(&binary).contains("ELF\u{0}"));
    let info = client.call("file_info", json!({"path": "big.txt"}));
    assert_eq!(info["structuredContent"]["lines"], 5000);
    assert_eq!(info["structuredContent"]["content"], "text");
    let missing = client.call("read_file", json!({"path": "nope.txt"}));
    assert!(is_error(&missing));
    assert!(text(&missing).contains("no such file"));
}
