//! `search` through the wire: per language, the definition a question in words is about
//! comes first; both forms agree; filters, paging and refusals; a saved file's new text is
//! found by the next search and its old text is not; without an index (`--no-watch`) the
//! answer says it is partial; function words do not decide and words meet their
//! inflections; a definition the question names comes before its uses; hostile queries
//! are answered within bounds; a base built in parts and merged in the store answers as
//! one built in memory.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// One small project per language, each with the answer to a question and decoys that
/// share some of its words.
fn polyglot(root: &Path) {
    let w = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    w(
        "c/timer.c",
        "#include <timer.h>\n\n/* Re-arms the hardware watchdog after a reset. */\n\
         static int wdog_rearm(struct wdog *w)\n{\n  w->armed = 1;\n  return hw_kick(w);\n}\n\n\
         int timer_start(int t)\n{\n  return hw_start(t);\n}\n",
    );
    w(
        "rust/queue.rs",
        "/// A bounded queue of jobs.\npub struct JobQueue {\n    jobs: Vec<Job>,\n}\n\n\
         impl JobQueue {\n    /// Drops the oldest job when the queue is full.\n    \
         pub fn push_evicting(&mut self, job: Job) {\n        if self.jobs.len() == CAP {\n            \
         self.jobs.remove(0);\n        }\n        self.jobs.push(job);\n    }\n}\n",
    );
    w(
        "py/config.py",
        "class Loader:\n    \"\"\"Reads settings.\"\"\"\n\n    def parse_yaml(self, text):\n        \
         \"\"\"Parse the YAML configuration file into a dict.\"\"\"\n        return yaml.safe_load(text)\n\n\
         def unrelated():\n    return 1\n",
    );
    w(
        "go/cache.go",
        "package cache\n\n// Evict removes expired entries from the LRU cache.\nfunc (c *Cache) Evict(now int64) {\n\
         \tfor k, e := range c.items {\n\t\tif e.expires < now {\n\t\t\tdelete(c.items, k)\n\t\t}\n\t}\n}\n",
    );
    w(
        "js/socket.js",
        "// Reconnect the websocket with exponential backoff.\nfunction reconnectSocket(url, attempt) {\n  \
         const delay = Math.min(30000, 2 ** attempt * 100);\n  return setTimeout(() => open(url), delay);\n}\n",
    );
    w(
        "java/Auth.java",
        "public class Auth {\n    /** Checks the password hash against the stored one. */\n    \
         public boolean verifyPassword(String password, String hash) {\n        \
         return Hasher.matches(password, hash);\n    }\n}\n",
    );
    w(
        "docs/README.md",
        "# Project\n\nThe watchdog is re-armed by the timer driver.\n",
    );
}

fn server(root: &Path, extra: &[&str]) -> Client {
    let mut args: Vec<&str> = vec!["--no-cache"];
    args.extend_from_slice(extra);
    let mut client = Client::spawn(&args, root);
    client.handshake(json!({}));
    client
}

fn ready(root: &Path) -> Client {
    let mut client = server(root, &[]);
    wait_search_ready(&mut client);
    client
}

/// (path relative to `root`, name or kind) of each result.
fn top(result: &Value, root: &Path) -> Vec<String> {
    search_results(result)
        .iter()
        .map(|r| {
            let path = r["path"].as_str().unwrap();
            let rel = Path::new(path)
                .strip_prefix(root)
                .unwrap_or(Path::new(path));
            let name = r["name"].as_str().or(r["kind"].as_str()).unwrap();
            // Written with `/` on every OS, as the expectations are.
            let rel = rel.display().to_string().replace('\\', "/");
            format!("{rel}:{name}")
        })
        .collect()
}

/// [`top`] of a search for `question`.
fn search_top(client: &mut Client, root: &Path, question: &str) -> Vec<String> {
    top(&client.call("search", json!({"query": question})), root)
}

#[test]
fn the_definition_a_question_is_about_comes_first_in_every_language() {
    let ws = workspace();
    polyglot(&ws.app);
    let mut client = ready(&ws.app);
    for (question, answer) in [
        (
            "the watchdog is not re-armed after a reset",
            "c/timer.c:wdog_rearm",
        ),
        (
            "queue drops the oldest job when full",
            "rust/queue.rs:push_evicting",
        ),
        ("parse yaml configuration", "py/config.py:parse_yaml"),
        (
            "expired entries are never evicted from the cache",
            "go/cache.go:Evict",
        ),
        (
            "websocket reconnect backoff",
            "js/socket.js:reconnectSocket",
        ),
        ("password hash check fails", "java/Auth.java:verifyPassword"),
    ] {
        let result = client.call("search", json!({"query": question}));
        assert!(!is_error(&result), "{question}: {result}");
        let got = top(&result, &ws.app);
        assert_eq!(
            got.first().map(String::as_str),
            Some(answer),
            "{question}: {got:?}"
        );
    }
}

/// A pasted report's function words (`the`, `is`, `when`…) do not decide the answer, and
/// its words meet the code's other inflections of them (`cancelled` finds `cancel`), said
/// in `matched` as the query wrote them.
#[test]
fn function_words_do_not_decide_and_words_meet_their_inflections() {
    let ws = workspace();
    let chatty = "/* This is what we do when it is there, and if it was not, then we would have\n   \
                  to do it again: it is all that there is to it when we are here. */\n";
    std::fs::write(
        ws.app.join("notes.c"),
        format!(
            "{}void log_everything(void)\n{{\n  puts(\"timer\");\n}}\n",
            chatty.repeat(6)
        ),
    )
    .unwrap();
    std::fs::write(
        ws.app.join("timer.c"),
        "void cancel_timer(struct timer *t)\n{\n  t->armed = 0;\n}\n",
    )
    .unwrap();
    let mut client = ready(&ws.app);
    let question = "the timers are not cancelled when it is stopped, and it was there";
    let result = client.call("search", json!({"query": question}));
    let got = top(&result, &ws.app);
    assert_eq!(
        got.first().map(String::as_str),
        Some("timer.c:cancel_timer"),
        "{got:?}"
    );
    let first = &search_results(&result)[0];
    let matched: Vec<&str> = (first["matched"].as_array().unwrap().iter())
        .filter_map(Value::as_str)
        .collect();
    assert!(
        matched.contains(&"cancelled") && matched.contains(&"timers"),
        "{first}"
    );
    // A query of nothing but function words still searches them.
    let result = client.call("search", json!({"query": "when it is there"}));
    let got = top(&result, &ws.app);
    assert!(
        got.first().is_some_and(|g| g.starts_with("notes.c:")),
        "{got:?}"
    );
}

/// A definition the question names (`add_config_value()`) comes before the bodies that
/// call it over and over, and a short question saying every part of a name lifts it.
#[test]
fn a_definition_the_question_names_comes_before_its_uses() {
    let ws = workspace();
    let calls = "def setup(app):\n".to_string()
        + &"    app.add_config_value('x', None, 'env', types=[str])\n".repeat(16);
    let uses = "  refresh(config);\n".repeat(6);
    for (name, text) in [
        ("ext.py", calls),
        (
            "app.py",
            "def add_config_value(self, name, default, rebuild, types=()):\n    \
             self.config.add(name, default, rebuild, types)\n"
                .to_string(),
        ),
        (
            "settings.c",
            format!("/* Refresh the config. */\nvoid reload_settings(void)\n{{\n{uses}}}\n"),
        ),
        (
            "refresh.c",
            "void refresh_config(void)\n{\n  reload();\n}\n".to_string(),
        ),
    ] {
        std::fs::write(ws.app.join(name), text).unwrap();
    }
    let mut client = ready(&ws.app);
    for (question, answer) in [
        (
            "Explain the types argument\n\nas add_config_value() takes it",
            "app.py:add_config_value",
        ),
        ("config refresh twice", "refresh.c:refresh_config"),
    ] {
        let got = search_top(&mut client, &ws.app, question);
        assert_eq!(got.first().map(String::as_str), Some(answer), "{got:?}");
    }
}

/// Files and lines named as stack traces and agents write them, and quoted messages, put
/// the definition holding the line first, even against the query's other words; a path from
/// another machine names the root's file by its last components.
#[test]
fn a_file_and_line_in_the_query_put_that_definition_first() {
    let ws = workspace();
    polyglot(&ws.app);
    let mut client = ready(&ws.app);
    let plain = search_top(&mut client, &ws.app, "watchdog rearm reset");
    assert_eq!(
        plain.first().map(String::as_str),
        Some("c/timer.c:wdog_rearm")
    );
    for (question, answer) in [
        (
            "watchdog rearm reset; thread 'main' panicked at rust/queue.rs:10:13:",
            "rust/queue.rs:push_evicting",
        ),
        (
            "watchdog rearm reset\n#0 0x55 in x /home/ci/work/app/rust/queue.rs:9:5",
            "rust/queue.rs:push_evicting",
        ),
        (
            "watchdog rearm reset\n  File \"py/config.py\", line 6, in <module>",
            "py/config.py:parse_yaml",
        ),
    ] {
        let result = client.call("search", json!({"query": question}));
        assert!(!is_error(&result), "{question}: {result}");
        let got = top(&result, &ws.app);
        assert_eq!(
            got.first().map(String::as_str),
            Some(answer),
            "{question}: {got:?}"
        );
        assert!(got.contains(&"c/timer.c:wdog_rearm".to_string()), "{got:?}");
    }
    // A quoted message is looked up literally: the definition holding it comes first.
    for (question, answer) in [
        (
            "watchdog rearm reset; the delay is `2 ** attempt * 100`",
            "js/socket.js:reconnectSocket",
        ),
        (
            "watchdog rearm reset, then \"delete(c.items, k)\" panics",
            "go/cache.go:Evict",
        ),
    ] {
        let got = search_top(&mut client, &ws.app, question);
        assert_eq!(
            got.first().map(String::as_str),
            Some(answer),
            "{question}: {got:?}"
        );
    }
    // A file the root lacks, or a quoted text found nowhere, moves nothing; a line outside
    // every definition of a named file adds nothing to naming the file.
    for question in [
        "watchdog rearm reset at nowhere/else.rs:10",
        "watchdog rearm reset \"no such message here\"",
    ] {
        let got = search_top(&mut client, &ws.app, question);
        assert_eq!(
            got.first().map(String::as_str),
            Some("c/timer.c:wdog_rearm"),
            "{question}"
        );
    }
    let file_only = search_top(
        &mut client,
        &ws.app,
        "watchdog rearm reset at rust/queue.rs",
    );
    let no_such_line = search_top(
        &mut client,
        &ws.app,
        "watchdog rearm reset at rust/queue.rs:999",
    );
    assert_eq!(file_only, no_such_line);
}

#[test]
fn both_forms_agree_and_say_how_to_read_the_rest() {
    let ws = workspace();
    polyglot(&ws.app);
    let long: String = (0..60).map(|i| format!("    step_{i}();\n")).collect();
    std::fs::write(
        ws.app.join("c/long.c"),
        format!("void flush_all(void)\n{{\n{long}    flush_disk();\n}}\n"),
    )
    .unwrap();
    let mut client = ready(&ws.app);
    let result = client.call("search", json!({"query": "flush the disk"}));
    let out = &result["structuredContent"];
    let found = search_results(&result);
    let first = &found[0];
    assert_eq!(first["name"], "flush_all");
    assert_eq!(
        (first["line"].as_u64(), first["end_line"].as_u64()),
        (Some(1), Some(64))
    );
    assert_eq!(first["kind"], "function");
    assert!(first["score"].as_f64().unwrap() > 0.0);
    assert_eq!(first["matched"], json!(["flush", "disk"]));
    // The signature, then the line holding the query's words; the rest is counted.
    assert_eq!(
        first["text"],
        "1:void flush_all(void)\n2:{\n63:    flush_disk();\n"
    );
    assert_eq!(first["omitted"], 61);
    let body = text(&result);
    // Under its file's path (relative to the one root), a header line for the result.
    let path = std::path::Path::new("c").join("long.c");
    assert!(
        body.starts_with(&format!(
            "{}\n@@ function flush_all (1-64) score ",
            path.display()
        )),
        "{body}"
    );
    assert_eq!(first["path"], s(&ws.app.join("c").join("long.c")));
    assert!(body.contains("63:    flush_disk();\n"), "{body}");
    assert!(
        body.contains("… 61 more lines: read_file with path and symbol \"flush_all\""),
        "{body}"
    );
    assert!(out.get("partial").is_none(), "{out}");
    assert!(out["stats"]["indexed_files"].as_u64().unwrap() >= 8);
}

#[test]
fn filters_pages_and_refusals() {
    let ws = workspace();
    polyglot(&ws.app);
    let mut client = ready(&ws.app);
    let all = client.call("search", json!({"query": "watchdog timer re-armed"}));
    let all_top = top(&all, &ws.app);
    assert!(
        all_top.contains(&"docs/README.md:text".to_string()),
        "{all_top:?}"
    );
    // Kind, language and path keep what they name.
    let functions = client.call(
        "search",
        json!({"query": "watchdog timer re-armed", "kind": "function"}),
    );
    assert!(
        top(&functions, &ws.app).iter().all(|r| r.starts_with("c/")),
        "{functions}"
    );
    let text_only = client.call("search", json!({"query": "watchdog timer", "kind": "text"}));
    let regions = top(&text_only, &ws.app);
    assert!(
        regions.contains(&"docs/README.md:text".to_string()),
        "{regions:?}"
    );
    assert!(regions.iter().all(|r| r.ends_with(":text")), "{regions:?}");
    let rust = client.call("search", json!({"query": "job queue", "language": "rust"}));
    assert!(
        top(&rust, &ws.app).iter().all(|r| r.starts_with("rust/")),
        "{rust}"
    );
    let under = client.call("search", json!({"query": "watchdog", "path": "docs"}));
    assert_eq!(top(&under, &ws.app), ["docs/README.md:text"]);
    // Paging: one at a time, the continuation named in both forms.
    let first = client.call(
        "search",
        json!({"query": "watchdog timer re-armed", "head_limit": 1}),
    );
    assert_eq!(first["structuredContent"]["next_offset"], 1);
    assert!(
        text(&first).contains("call search with offset=1 for more"),
        "{}",
        text(&first)
    );
    let second = client.call(
        "search",
        json!({"query": "watchdog timer re-armed", "head_limit": 1, "offset": 1}),
    );
    assert_eq!(top(&second, &ws.app), all_top[1..2]);
    // Refusals the model can act on.
    for (args, says) in [
        (json!({"query": "   "}), "`query` is empty"),
        (json!({"query": "... !!! 123"}), "no words to search for"),
        (json!({"query": "x", "kind": "widget"}), "unknown kind"),
        (
            json!({"query": "x", "language": "cobol"}),
            "unknown language",
        ),
        (
            json!({"query": "x", "offset": 5000}),
            "offset 5000 is too large",
        ),
        (json!({"query": "x", "path": s(&ws.outside)}), "outside"),
    ] {
        let result = client.call("search", args.clone());
        assert!(is_error(&result), "{args}: {result}");
        assert!(text(&result).contains(says), "{args}: {}", text(&result));
    }
    let none = client.call("search", json!({"query": "zebra quokka"}));
    assert!(!is_error(&none));
    assert_eq!(none["structuredContent"]["total"], 0);
    assert!(
        text(&none).starts_with("No documents hold a word of the query"),
        "{}",
        text(&none)
    );
}

#[test]
fn a_saved_file_is_searched_as_saved() {
    let ws = workspace();
    polyglot(&ws.app);
    let mut client = ready(&ws.app);
    let before = client.call("search", json!({"query": "verify password hash"}));
    assert_eq!(top(&before, &ws.app)[0], "java/Auth.java:verifyPassword");
    std::fs::write(
        ws.app.join("java/Auth.java"),
        "public class Auth {\n    public boolean rotateToken(String token) {\n        return true;\n    }\n}\n",
    )
    .unwrap();
    // The first search after the save already reads the new text (no waiting for the
    // watcher is needed for correctness; a short poll covers the event's delivery).
    let deadline = Instant::now() + Duration::from_secs(5);
    let after = loop {
        let result = client.call("search", json!({"query": "rotate token"}));
        if top(&result, &ws.app).first().map(String::as_str) == Some("java/Auth.java:rotateToken")
            || Instant::now() > deadline
        {
            break result;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    assert_eq!(
        top(&after, &ws.app)[0],
        "java/Auth.java:rotateToken",
        "{after}"
    );
    let old = client.call("search", json!({"query": "verify password hash"}));
    assert!(
        !top(&old, &ws.app)
            .iter()
            .any(|r| r.ends_with(":verifyPassword")),
        "old text served: {old}"
    );
}

#[test]
fn without_an_index_the_answer_says_it_is_partial() {
    let ws = workspace();
    polyglot(&ws.app);
    let mut client = server(&ws.app, &["--no-watch"]);
    let result = client.call(
        "search",
        json!({"query": "the watchdog is not re-armed after a reset"}),
    );
    assert!(!is_error(&result), "{result}");
    // Ranked among the candidates only (their statistics, not the tree's).
    let got = top(&result, &ws.app);
    assert!(
        got[..2].contains(&"c/timer.c:wdog_rearm".to_string()),
        "{got:?}"
    );
    let out = &result["structuredContent"];
    assert_eq!(out["partial"], true);
    assert!(out["stats"]["candidates"].as_u64().unwrap() >= 1);
    let body = text(&result);
    assert!(body.contains("[partial: the search index of"), "{body}");
    assert!(
        body.contains("files holding the query's rarest words"),
        "{body}"
    );
}

#[test]
fn hostile_queries_are_answered_within_bounds() {
    let ws = workspace();
    polyglot(&ws.app);
    std::fs::write(ws.app.join("blob.bin"), b"\0\x01\x02ELF\xff\xfe timer \0").unwrap();
    let mut client = server(&ws.app, &["--max-output-bytes", "8192"]);
    wait_search_ready(&mut client);
    let many: String = (0..10_000).map(|i| format!("word{i} ")).collect();
    let huge = "watchdog ".repeat(120_000);
    for query in [
        huge.as_str(),
        many.as_str(),
        "the of and a to in is it that",
        "设计 文档 计时器 watchdog",
        "\u{0}\u{1}\u{fffd}ELF\u{7f} timer",
        "(((((((((( [[[[ **** ++++ $$$$",
    ] {
        let started = Instant::now();
        let result = client.call("search", json!({"query": query}));
        let size = result.to_string().len();
        assert!(
            size <= 8192 + 1024,
            "{} bytes for a {}-byte query",
            size,
            query.len()
        );
        assert!(started.elapsed() < Duration::from_secs(20));
        if !is_error(&result) {
            assert!(result["structuredContent"]["total"].is_u64(), "{result}");
        }
    }
    let cut = client.call("search", json!({"query": huge}));
    assert!(
        text(&cut).contains("only the first 64 KiB of the query's words"),
        "{}",
        text(&cut)
    );
    let dropped = client.call("search", json!({"query": many}));
    assert!(
        text(&dropped).contains("most common words were left out"),
        "{}",
        text(&dropped)
    );
    // The binary file is never a result.
    let bin = client.call("search", json!({"query": "ELF timer"}));
    assert!(
        !top(&bin, &ws.app).iter().any(|r| r.starts_with("blob.bin")),
        "{bin}"
    );
}

/// Issue #36, item 9: the 64 KiB a query reads are of its words, so the words after a
/// long run of emoji are scored; and what was cut is said even when no word remains.
#[test]
fn words_after_a_long_run_of_emoji_are_read_and_a_cut_is_said() {
    let ws = workspace();
    polyglot(&ws.app);
    let mut client = ready(&ws.app);
    let emoji = format!("{} watchdog re-armed after a reset", "😀".repeat(20_000));
    let result = client.call("search", json!({"query": emoji}));
    assert!(!is_error(&result), "{}", text(&result));
    let got = top(&result, &ws.app);
    assert_eq!(
        got.first().map(String::as_str),
        Some("c/timer.c:wdog_rearm"),
        "{got:?}"
    );
    assert!(
        !text(&result).contains("64 KiB"),
        "nothing was cut: {}",
        text(&result)
    );
    // Over 64 KiB of numbers (not words), then a word past the limit.
    let numbers = format!("{} watchdog", "12345678 ".repeat(9_000));
    let result = client.call("search", json!({"query": numbers}));
    assert!(is_error(&result), "{result}");
    assert!(
        text(&result).contains("only the first 64 KiB of the query's words"),
        "{}",
        text(&result)
    );
}

/// Without an index, a search over ~2 GB (hard links of one 1 MB file) for words no file
/// holds is long on any machine: it reports progress, and a cancel stops it with nothing
/// sent after; the server answers the next search.
#[test]
fn a_long_search_reports_progress_and_stops_when_cancelled() {
    let ws = workspace();
    linked_tree(&ws.app, 2000, &slow_body(12_000));
    let mut client = server(&ws.app, &["--no-watch"]);
    let id = client.start(
        "tools/call",
        json!({"name": "search", "arguments": {"query": "zebra quokka narwhal"},
               "_meta": {"progressToken": "s"}}),
    );
    let first = client
        .wait_for(Duration::from_secs(30), |m| {
            m["method"] == "notifications/progress" || is_response_to(m, id)
        })
        .expect("progress or response");
    assert!(
        !is_response_to(&first, id),
        "a 2 GB search finished at once: {first}"
    );
    assert_eq!(first["params"]["progressToken"], "s");
    client.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "test"}),
    );
    assert_cancelled_quietly(&mut client, id);
    let after = client.call("search", json!({"query": "main", "path": "src"}));
    assert!(!is_error(&after), "{after}");
}

/// Files enough for many parts at the smallest build budget: each with a definition named
/// for it and words shared with others.
#[cfg(unix)]
fn many(root: &Path) {
    polyglot(root);
    for i in 0..60 {
        let dir = root.join(format!("gen/d{}", i % 7));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("m{i}.rs")),
            format!(
                "/// Flushes queue {i} of the page cache.\npub fn flush_queue_{i}(q: &mut Queue) {{\n    \
                 q.pages.clear(); // page cache lock {}\n}}\n",
                i % 5
            ),
        )
        .unwrap();
    }
}

/// `search` answers (structured content) for questions touching every part.
#[cfg(unix)]
fn answers(client: &mut Client) -> Vec<Value> {
    [
        "flush the page cache queue",
        "flush_queue_42",
        "gen d3 page lock",
        "the watchdog is not re-armed after a reset",
        "queue drops the oldest job when full",
    ]
    .iter()
    .map(|q| client.call("search", json!({"query": q, "limit": 20}))["structuredContent"].clone())
    .collect()
}

#[cfg(unix)]
#[test]
fn a_search_index_built_in_parts_answers_as_one_built_in_memory() {
    let ws = workspace();
    many(&ws.app);
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let mut memory = ready(&ws.app);
    let expected = answers(&mut memory);
    // 0 MB: every file is a part of its own, merged in the store.
    let parted = || {
        let args = ["--cache-dir", cache_dir, "--build-memory-mb", "0"];
        let mut client = Client::spawn(&args, &ws.app);
        client.handshake(json!({}));
        wait_search_ready(&mut client);
        client
    };
    let mut client = parted();
    let stored = |line: &str| line.contains("read in place; stored");
    wait_root_line(&mut client, "search", Duration::from_secs(10), stored);
    assert_eq!(answers(&mut client), expected);
    // The stored file is the merge's: it lays the main postings out last (a segment built
    // in memory has them before the path dictionary).
    let stored = walk_files(cache.path())
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "search"))
        .expect("a stored search index");
    let bytes = std::fs::read(stored).unwrap();
    let start = |section: usize| {
        let at = 40 + 8 + section * 16;
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
    };
    let (postings, path_postings) = (7, 10);
    assert!(
        start(postings) > start(path_postings),
        "not merged from parts"
    );
    // Nothing of the parts is left in the entry.
    let temps: Vec<_> = walk_files(cache.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
    // The merged base takes changes like any other, and comes back from the store.
    std::fs::write(
        ws.app.join("gen/d0/m0.rs"),
        "pub fn drain_ring_buffer() {}\n",
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = client.call("search", json!({"query": "drain ring buffer"}));
        if top(&found, &ws.app).first().map(String::as_str)
            == Some("gen/d0/m0.rs:drain_ring_buffer")
        {
            break;
        }
        assert!(Instant::now() < deadline, "{found}");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(client);
    std::fs::write(
        ws.app.join("gen/d0/m0.rs"),
        "/// Flushes queue 0 of the page cache.\npub fn flush_queue_0(q: &mut Queue) {\n    \
         q.pages.clear(); // page cache lock 0\n}\n",
    )
    .unwrap();
    let mut again = parted();
    assert_eq!(answers(&mut again), expected);
}

/// Every file under `dir`, recursively.
#[cfg(unix)]
fn walk_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}
