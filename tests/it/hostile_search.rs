//! grep and glob against hostile arguments and inputs, through the real binary: huge context
//! counts, many matches in one file, entries larger than the output budget, the budget
//! covering the whole serialized result, heavy searches next to a `ping`, cancellation
//! inside one huge line, patterns too costly to compile, and a root swapped for a symlink.
//! Memory and CPU are read from `/proc/PID/{status,stat}`; no test asserts wall time.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// Generous: a debug build on a loaded two-core machine.
const SLOW: Duration = Duration::from_secs(120);

fn server(ws: &Workspace, args: &[&str]) -> Client {
    let mut all = vec!["--no-watch"];
    all.extend_from_slice(args);
    let mut client = Client::spawn(&all, &ws.app);
    client.handshake(json!({}));
    client
}

/// The tool result of a call (panics on a protocol error or no answer within `SLOW`).
fn call(client: &mut Client, name: &str, args: Value) -> Value {
    let response = client
        .call_within(name, args.clone(), SLOW)
        .unwrap_or_else(|| panic!("{name} {args}: no answer (did the server die?)"));
    assert!(response.get("error").is_none(), "{name}: {response}");
    response["result"].clone()
}

/// A field of `/proc/PID/status` in KiB (`VmHWM`, `VmRSS`) or as a count (`Threads`).
#[cfg(target_os = "linux")]
fn status(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// One file with `lines` lines, every one matching `x`.
fn matching_lines(path: &Path, lines: usize) {
    let text: String = (1..=lines).map(|i| format!("x {i}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// `-C 1000000000` used to allocate a ring of that many lines per file (the process
/// aborted); `-A 1000000` over 100,000 matching lines copied the context into every kept
/// match (1.5 GB). Both are answered now, and the server's peak memory stays small.
#[cfg(target_os = "linux")] // reads /proc/PID/status (peak memory, threads)
#[test]
fn huge_context_is_answered_with_bounded_memory() {
    let ws = workspace();
    matching_lines(&ws.app.join("many.txt"), 100_000);
    let mut client = server(&ws, &[]);
    for args in [
        json!({"pattern": "x", "output_mode": "content", "-C": 1_000_000_000u64}),
        json!({"pattern": "x", "output_mode": "content", "-A": 1_000_000}),
        json!({"pattern": "x", "output_mode": "content", "-B": 1_000_000, "head_limit": 0}),
        json!({"pattern": "x", "output_mode": "content", "-A": 1_000_000, "offset": 99_000}),
    ] {
        let result = call(&mut client, "grep", args.clone());
        assert!(!is_error(&result), "{args}: {}", text(&result));
        assert!(!matched_lines(&result).is_empty(), "{args}: nothing shown");
        assert!(wire_size(&result) <= 64 * 1024 + 512, "{args}: over budget");
        let next = result["structuredContent"]["next_offset"].as_u64().unwrap();
        let offset = args["offset"].as_u64().unwrap_or(0);
        assert!(
            next > offset,
            "{args}: next_offset {next} <= offset {offset}"
        );
    }
    let peak_kib = status(client.pid(), "VmHWM");
    assert!(
        peak_kib < 300 * 1024,
        "server peak RSS {} MiB",
        peak_kib / 1024
    );
}

/// 20,000 matches in one file: rendering used to be quadratic (tens of seconds in a release
/// build). All of them come back, in order, with the right text.
#[test]
fn twenty_thousand_matches_in_one_file_are_all_answered() {
    let ws = workspace();
    matching_lines(&ws.app.join("one.txt"), 20_000);
    let mut client = server(&ws, &["--max-output-bytes", "8000000"]);
    let result = call(
        &mut client,
        "grep",
        json!({"pattern": "x", "output_mode": "content", "head_limit": 0}),
    );
    let matches = matched_lines(&result);
    assert_eq!(matches.len(), 20_000);
    for (i, (_, line, text)) in matches.iter().enumerate() {
        assert_eq!(*line, i as u64 + 1);
        assert_eq!(*text, format!("x {}", i + 1));
    }
    // The file's path once, in both forms.
    assert_eq!(
        result["structuredContent"]["matches"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(result["structuredContent"]["next_offset"].is_null());
    let body = text(&result);
    assert!(
        body.contains("\n1:x 1\n2:x 2\n"),
        "grouped under one heading"
    );
    assert!(body.contains("\n20000:x 20000\n"));
    assert_eq!(body.matches("one.txt").count(), 1, "path shown once");
}

/// A multiline match, and a match with `-A 3000`, each larger than the whole budget: shown
/// cut with a marker saying how much was cut, and paging moves on and ends.
#[test]
fn an_entry_larger_than_the_budget_is_shown_cut_and_paging_ends() {
    let ws = workspace();
    let body: String = (0..3000).map(|i| format!("filler line {i}\n")).collect();
    std::fs::write(ws.app.join("block.txt"), format!("BEGIN\n{body}END\n")).unwrap();
    let mut tail = String::new();
    for k in 0..5 {
        tail.push_str(&format!("HIT {k}\n{body}"));
    }
    std::fs::write(ws.app.join("tail.txt"), tail).unwrap();
    let mut client = server(&ws, &["--max-output-bytes", "4096"]);

    let block = call(
        &mut client,
        "grep",
        json!({"pattern": "BEGIN(.|\n)*?END", "multiline": true, "output_mode": "content"}),
    );
    let shown = &block["structuredContent"]["matches"][0];
    assert_eq!(shown["matches"][0][0], 1, "{block}");
    assert!(shown["omitted"].as_u64().unwrap() > 0, "{block}");
    assert!(text(&block).contains("more lines of this match cut"));
    assert!(
        wire_size(&block) <= 4096 + 256,
        "{} bytes",
        wire_size(&block)
    );

    let mut offset = 0u64;
    let mut hits = Vec::new();
    for _ in 0..20 {
        let page = call(
            &mut client,
            "grep",
            json!({"pattern": "^HIT", "output_mode": "content", "-A": 3000, "offset": offset, "path": "tail.txt"}),
        );
        assert!(!is_error(&page), "{}", text(&page));
        assert!(wire_size(&page) <= 4096 + 256, "{} bytes", wire_size(&page));
        let structured = &page["structuredContent"];
        let file = &structured["matches"][0];
        for m in file["matches"].as_array().unwrap() {
            hits.push(m[1].as_str().unwrap().to_string());
        }
        assert!(file["omitted"].as_u64().unwrap() > 0, "{page}");
        match structured["next_offset"].as_u64() {
            Some(next) => {
                assert!(next > offset, "next_offset {next} <= offset {offset}");
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(hits, ["HIT 0", "HIT 1", "HIT 2", "HIT 3", "HIT 4"]);
}

/// The budget covers each form of the serialized result: the text (escaped), and the
/// structured content on its own budget. Names and lines full of characters JSON escapes
/// make the serialized forms the largest.
#[test]
fn the_whole_result_fits_the_budget() {
    let ws = workspace();
    let line = format!("needle \"{}\" \\ \t\u{1}\n", "q\"".repeat(200));
    for i in 0..200 {
        let name = format!("file \"{i:03}\" with a rather long name \\ to list.txt");
        std::fs::write(ws.app.join(name), line.repeat(5)).unwrap();
    }
    let mut client = server(&ws, &["--max-output-bytes", "4096"]);
    let cases = [
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "content", "head_limit": 0}),
        ),
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "content", "-C": 3}),
        ),
        ("grep", json!({"pattern": "needle"})),
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "count", "head_limit": 0}),
        ),
        ("glob", json!({"pattern": "*.txt", "head_limit": 0})),
        ("glob", json!({"pattern": "*.txt"})),
        (
            "grep",
            json!({"pattern": format!("({}", "a".repeat(20_000))}),
        ),
    ];
    for (tool, args) in cases {
        let result = call(&mut client, tool, args.clone());
        let size = wire_size(&result);
        assert!(size <= 4096 + 256, "{tool} {args}: {size} bytes");
        if !is_error(&result) {
            let next = result["structuredContent"]["next_offset"].as_u64();
            assert!(next.is_some_and(|n| n > 0), "{tool} {args}: no way on");
        }
    }
}

/// Two heavy greps run while `ping`s are answered: neither the search nor the rendering of
/// a large answer runs on the async executor. (Rendering 20,000 matches of one file used to
/// take tens of seconds there, and two of them held every executor thread.)
#[test]
fn ping_is_answered_while_two_heavy_greps_run() {
    let ws = workspace();
    matching_lines(&ws.app.join("a.txt"), 20_000);
    matching_lines(&ws.app.join("b.txt"), 20_000);
    let mut client = server(&ws, &["--max-output-bytes", "4000000"]);
    let mut pending: Vec<i64> = ["a.txt", "b.txt"]
        .iter()
        .map(|path| {
            let heavy = json!({"pattern": "x", "path": path, "output_mode": "content", "head_limit": 20000});
            client.start("tools/call", json!({"name": "grep", "arguments": heavy}))
        })
        .collect();
    let mut pings = 0;
    while !pending.is_empty() {
        let ping = client.start("ping", json!({}));
        // Generous: a ping takes microseconds; a blocked executor held it for tens of seconds.
        let pong = client.response(ping, Duration::from_secs(5));
        assert!(
            pong.is_some(),
            "ping {pings} not answered within 5 s while greps run"
        );
        pings += 1;
        pending.retain(|&id| {
            let Some(response) = client.response(id, Duration::from_millis(50)) else {
                return true;
            };
            let result = &response["result"];
            assert_eq!(result["structuredContent"]["total"], 20_000);
            false
        });
    }
}

/// A search cancelled inside one huge line (16 MiB of non-ASCII text, where a Unicode `\b`
/// sends the regex to its slowest engine) stops using the CPU: the searcher never holds
/// more than a bounded buffer, so a regex run cannot outlast the cancel by much.
#[test]
fn cancel_inside_a_huge_line_stops_the_cpu() {
    let ws = workspace();
    let line = "é ".repeat((16 << 20) / 3);
    std::fs::write(ws.app.join("huge.txt"), format!("{line}\n")).unwrap();
    let mut client = server(&ws, &[]);
    let pid = client.pid();
    for args in [
        json!({"pattern": r"\b\w+\b\d", "multiline": true, "output_mode": "count"}),
        json!({"pattern": r"\b\w+\b\d", "output_mode": "count"}),
    ] {
        let start = cpu_ticks(pid);
        let id = client.start("tools/call", json!({"name": "grep", "arguments": args}));
        // Until the search has used a second of CPU (it is past reading the file by then)
        // or has answered.
        for _ in 0..1200 {
            if client.response(id, Duration::from_millis(50)).is_some()
                || cpu_ticks(pid) - start >= 100
            {
                break;
            }
        }
        client.notify("notifications/cancelled", json!({"requestId": id}));
        // A ping answered after the cancel means the cancel was handled.
        assert_eq!(client.request("ping", json!({}))["result"], json!({}));
        let before = cpu_ticks(pid);
        std::thread::sleep(Duration::from_secs(1)); // a measuring window, not a wait
        let used = cpu_ticks(pid) - before;
        // Generous: an idle server uses about nothing; a search still running, 100 a second.
        assert!(
            used <= 30,
            "{args}: {used} ticks of CPU in the second after the cancel"
        );
    }
}

/// Patterns too costly to compile are refused up front with a clear message.
#[test]
fn huge_globs_and_regexes_are_refused_clearly() {
    let ws = workspace();
    let mut client = server(&ws, &[]);
    let long_glob = "*a".repeat(512 * 1024);
    for (tool, args, expect) in [
        ("glob", json!({"pattern": long_glob}), "too long"),
        (
            "grep",
            json!({"pattern": "x", "glob": long_glob}),
            "too long",
        ),
        (
            "glob",
            json!({"pattern": "{a,b}".repeat(200)}),
            "too complex",
        ),
        ("grep", json!({"pattern": r"\w{1000}{1000}"}), "exceed"),
        (
            "grep",
            json!({"pattern": "a".repeat(100_000)}),
            "limited to",
        ),
    ] {
        let result = call(&mut client, tool, args);
        assert!(is_error(&result), "{tool}: {}", text(&result));
        let message = text(&result);
        assert!(message.contains(expect), "{tool}: {message}");
        assert!(
            message.len() < 2048,
            "{tool}: the message repeats the pattern"
        );
    }
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
}

/// Numeric arguments above their maximum: offset is refused, the others are clamped.
#[test]
fn numeric_arguments_are_clamped_or_refused_above_their_maximum() {
    let ws = workspace();
    let mut client = server(&ws, &[]);
    let result = call(
        &mut client,
        "grep",
        json!({"pattern": "x", "offset": 1u64 << 40}),
    );
    assert!(
        is_error(&result) && text(&result).contains("offset"),
        "{result}"
    );
    let result = call(
        &mut client,
        "glob",
        json!({"pattern": "*", "offset": 100_001}),
    );
    assert!(is_error(&result), "{result}");
    let result = call(
        &mut client,
        "grep",
        json!({"pattern": "main", "head_limit": 1u64 << 40, "max_filesize": u64::MAX, "-A": 1u64 << 50}),
    );
    assert!(!is_error(&result), "{}", text(&result));
}

/// A root directory swapped for a symlink to elsewhere after the server started: its
/// files are not listed by `resources/list` (nor by glob), which share the domain search.
#[test]
fn a_swapped_root_is_not_listed_by_resources_list() {
    let ws = workspace();
    let mut client = server(&ws, &[]);
    let before = client.request("resources/list", json!({}));
    let listed = before["result"]["resources"].to_string();
    assert!(listed.contains("main.rs"), "{before}");
    // Exchange the root with a symlink to the outside directory.
    let link = ws.base.join("link");
    std::os::unix::fs::symlink(&ws.outside, &link).unwrap();
    rustix::fs::renameat_with(
        rustix::fs::CWD,
        &ws.app,
        rustix::fs::CWD,
        &link,
        rustix::fs::RenameFlags::EXCHANGE,
    )
    .unwrap();
    let after = client.request("resources/list", json!({}));
    let listed = after["result"]["resources"].to_string();
    assert!(!listed.contains("secret.txt"), "{after}");
    let glob = call(&mut client, "glob", json!({"pattern": "*"}));
    assert!(!glob.to_string().contains("secret.txt"), "{glob}");
}

/// Many concurrent searches share one pool of search threads: the server's thread count
/// does not grow with the number of requests in flight.
#[cfg(target_os = "linux")] // reads /proc/PID/status (peak memory, threads)
#[test]
fn concurrent_searches_share_a_bounded_pool_of_threads() {
    let ws = workspace();
    for d in 0..10 {
        let dir = ws.app.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..30 {
            std::fs::write(
                dir.join(format!("f{f}.txt")),
                "alpha beta gamma\n".repeat(50),
            )
            .unwrap();
        }
    }
    let mut client = server(&ws, &[]);
    let idle = status(client.pid(), "Threads");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let ids: Vec<i64> = (0..16)
        .map(|_| {
            client.start(
                "tools/call",
                json!({"name": "grep", "arguments": {"pattern": r"\w+ \w+ gamma", "output_mode": "count"}}),
            )
        })
        .collect();
    let mut peak = 0;
    let mut answered = 0;
    while answered < ids.len() {
        peak = peak.max(status(client.pid(), "Threads"));
        if client
            .recv(Duration::from_millis(5))
            .is_some_and(|m| m.get("result").is_some())
        {
            answered += 1;
        }
    }
    // Each running search: one blocking thread plus its walker threads, all sharing one
    // permit per core; the rest wait without a thread.
    let bound = idle + 3 * cores + 4;
    assert!(
        peak <= bound,
        "{peak} threads with 16 searches in flight (idle {idle}, bound {bound})"
    );
}

/// With the smallest budget, a path longer than the room is shown cut rather than skipped,
/// in every listing mode, and paging moves on.
#[test]
fn a_path_longer_than_the_budget_is_shown_cut() {
    let ws = workspace();
    // Longer than either form's room (each form has the whole budget).
    let dir = ws.app.join("n".repeat(200)).join("n".repeat(200));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{}.txt", "n".repeat(200))), "needle\n").unwrap();
    std::fs::write(ws.app.join("z.txt"), "needle\n").unwrap();
    let mut client = server(&ws, &["--max-output-bytes", "1024"]);
    for (tool, args) in [
        ("grep", json!({"pattern": "needle"})),
        ("grep", json!({"pattern": "needle", "output_mode": "count"})),
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "content"}),
        ),
        ("glob", json!({"pattern": "*.txt", "sort": "path"})),
    ] {
        let result = call(&mut client, tool, args.clone());
        assert!(!is_error(&result), "{tool} {args}: {}", text(&result));
        assert!(
            wire_size(&result) <= 1024 + 256,
            "{tool} {args}: {} bytes",
            wire_size(&result)
        );
        assert!(
            text(&result).contains("cut"),
            "{tool} {args}: {}",
            text(&result)
        );
        // The cut path takes less than the room: the next entry may fit after it.
        let next = result["structuredContent"]["next_offset"].as_u64();
        assert!(next.is_none_or(|n| n >= 1), "{tool} {args}: {result}");
    }
}

/// A search waiting for a search thread and the running one it waits behind are both
/// cancelled: neither answers, neither keeps a search thread (the next search is answered)
/// and the CPU goes idle.
#[test]
fn a_queued_search_is_cancelled_while_it_waits() {
    let ws = workspace();
    // Slow for the regex engine: a Unicode `\b` over non-ASCII text.
    let line = format!("{}\n", "é ".repeat(50_000));
    for i in 0..100 {
        std::fs::write(ws.app.join(format!("slow{i:03}.txt")), &line).unwrap();
    }
    let mut client = server(&ws, &[]);
    let pid = client.pid();
    let slow = |token: u32| {
        json!({"name": "grep", "arguments": {"pattern": r"\b\w+\b\d", "output_mode": "count"},
               "_meta": {"progressToken": token}})
    };
    let running = client.start("tools/call", slow(1));
    // Under way (it holds every search thread of an idle server).
    let first = client.wait_for(SLOW, |m| {
        m["method"] == "notifications/progress" || m.get("id") == Some(&json!(running))
    });
    assert_eq!(first.unwrap()["method"], "notifications/progress");
    let queued = client.start("tools/call", slow(2));
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
    client.notify("notifications/cancelled", json!({"requestId": queued}));
    client.notify("notifications/cancelled", json!({"requestId": running}));
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));
    // Both gave their threads back: a new search runs and is answered.
    let quick = call(
        &mut client,
        "grep",
        json!({"pattern": "main", "output_mode": "count"}),
    );
    assert!(!is_error(&quick), "{}", text(&quick));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(1)); // a measuring window, not a wait
    let used = cpu_ticks(pid) - before;
    assert!(
        used <= 30,
        "{used} ticks of CPU in the second after both cancels"
    );
    let late = client.collect(Duration::from_millis(200), |m| {
        m.get("id") == Some(&json!(running)) || m.get("id") == Some(&json!(queued))
    });
    assert!(late.is_empty(), "answers to cancelled requests: {late:?}");
}

/// `resources/list` walks (without an index) take their threads from the same pool as
/// grep and glob: many listings at once queue instead of each starting a walker per core.
#[cfg(target_os = "linux")] // reads /proc/PID/status (peak memory, threads)
#[test]
fn concurrent_resource_listings_share_the_search_pool() {
    let ws = workspace();
    for d in 0..20 {
        let dir = ws.app.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..150 {
            std::fs::write(dir.join(format!("f{f}.txt")), "x\n").unwrap();
        }
    }
    let mut client = server(&ws, &[]); // without watching: every listing walks
    let idle = status(client.pid(), "Threads");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let ids: Vec<i64> = (0..24)
        .map(|_| client.start("resources/list", json!({})))
        .collect();
    let mut peak = 0;
    let mut answered = 0;
    while answered < ids.len() {
        peak = peak.max(status(client.pid(), "Threads"));
        if client
            .recv(Duration::from_millis(2))
            .is_some_and(|m| m.get("result").is_some())
        {
            answered += 1;
        }
    }
    let bound = idle + 3 * cores + 4;
    assert!(
        peak <= bound,
        "{peak} threads with 24 listings in flight (idle {idle}, bound {bound})"
    );
}
