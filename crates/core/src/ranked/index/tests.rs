//! Tests of the live search index, fed by hand (no watcher): a first build, answers that
//! follow a saved file before the worker does, an index updated by events that ranks as
//! one rebuilt from scratch, a restart from the store, and the pre-filter without index.

use super::*;
use crate::ranked::{RankedOutcome, RankedRequest, rank};
use crate::walk::Control;
use std::path::Path;

fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    w(
        "drivers/timer/timer.c",
        "/* Arms the watchdog timer. */\nint timer_arm(int t)\n{\n  return wdog_start(t);\n}\n\n\
         int timer_reset(int t)\n{\n  timer_cancel(t);\n  return timer_arm(t);\n}\n",
    );
    w(
        "net/tcp.c",
        "int tcp_send(int s)\n{\n  return net_write(s);\n}\n",
    );
    w(
        "docs/guide.md",
        "# Guide\n\nHow the watchdog timer is armed.\n",
    );
    w(
        "src/lib.rs",
        "/// Parses a frame.\npub fn parse_frame(b: &[u8]) -> usize {\n    b.len()\n}\n",
    );
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

struct Fixture {
    files: Arc<FileIndex>,
    index: RankedIndex,
    root: PathBuf,
}

fn start(root: &Path, store: Option<Arc<Store>>) -> Fixture {
    let files = Arc::new(FileIndex::new());
    let index = RankedIndex::new(files.clone(), None, store);
    let roots = [root.to_path_buf()];
    files.set_roots(&roots);
    Consumer::set_roots(&index, &roots);
    let fixture = Fixture {
        files,
        index,
        root: root.to_path_buf(),
    };
    fixture.feed(WatchEvent::Status(root.to_path_buf(), RootStatus::Watching));
    assert!(
        fixture.index.wait_ready(root, Duration::from_secs(30)),
        "never built"
    );
    fixture
}

impl Fixture {
    fn feed(&self, event: WatchEvent) {
        self.files.apply(&event);
        self.index.apply(&event);
    }

    fn ask(&self, query: &str) -> RankedOutcome {
        let request = RankedRequest {
            query: query.into(),
            limit: 10,
            ..RankedRequest::default()
        };
        let roots = [self.root.clone()];
        rank(
            &request,
            &roots,
            &roots,
            Some(crate::search::Indexes::files(&self.files)),
            None,
            Some(&self.index),
            &Control::new(),
        )
        .unwrap()
    }

    /// Writes `rel` and tells the indexes, as the watcher would.
    fn save(&self, rel: &str, text: &str) {
        let path = self.root.join(rel);
        std::fs::write(&path, text).unwrap();
        self.feed(WatchEvent::Changed(path));
    }
}

fn named(outcome: &RankedOutcome, name: &str) -> bool {
    outcome.hits.iter().any(|h| h.name.as_deref() == Some(name))
}

fn names(outcome: &RankedOutcome, root: &Path) -> Vec<String> {
    outcome
        .hits
        .iter()
        .map(|h| {
            let rel = h
                .path
                .strip_prefix(root)
                .unwrap_or(&h.path)
                .display()
                .to_string();
            format!(
                "{rel}:{}",
                h.name.clone().unwrap_or_else(|| h.kind.to_string())
            )
        })
        .collect()
}

#[test]
fn a_built_index_ranks_definitions_by_their_fields() {
    let (_dir, root) = tree();
    let f = start(&root, None);
    let out = f.ask("timer reset cancels it");
    let got = names(&out, &root);
    assert_eq!(got[0], "drivers/timer/timer.c:timer_reset", "{got:?}");
    assert!(got.contains(&"drivers/timer/timer.c:timer_arm".to_string()));
    assert!(
        names(&f.ask("how is the watchdog armed"), &root)
            .contains(&"docs/guide.md:text".to_string())
    );
    assert!(out.unindexed.is_empty());
    assert_eq!(out.stats.on_demand, 0);
    let hit = &out.hits[0];
    assert_eq!((hit.line, hit.end_line), (7, 11));
    assert!(
        hit.matched.contains(&"timer_reset".to_string())
            || hit.matched.contains(&"reset".to_string())
    );
    assert_eq!(hit.lines[0], (7, "int timer_reset(int t)".to_string()));
    let status = f.index.status();
    assert_eq!(status[0].state, RankedState::Ready);
    assert_eq!(status[0].files, 4);
}

#[test]
fn a_saved_file_is_found_at_once_and_its_old_text_is_not() {
    let (_dir, root) = tree();
    let f = start(&root, None);
    assert!(names(&f.ask("tcp send"), &root).contains(&"net/tcp.c:tcp_send".to_string()));
    f.save(
        "net/tcp.c",
        "int udp_flush(int s)\n{\n  return net_flush(s);\n}\n",
    );
    // Before the worker's update lands: the query indexes the changed file itself.
    let out = f.ask("udp flush");
    assert_eq!(names(&out, &root), ["net/tcp.c:udp_flush"]);
    assert!(!named(&f.ask("tcp_send"), "tcp_send"), "old text served");
    // Then the worker's update serves it.
    assert!(f.index.wait_ready(&root, Duration::from_secs(30)));
    let out = f.ask("udp flush");
    assert_eq!(names(&out, &root), ["net/tcp.c:udp_flush"]);
    assert_eq!(out.stats.on_demand, 0);
    assert!(!named(&f.ask("tcp_send"), "tcp_send"));
}

#[test]
fn an_updated_index_ranks_as_one_built_from_scratch() {
    let (_dir, root) = tree();
    let f = start(&root, None);
    f.save("src/lib.rs", "/// Parses a header.\npub fn parse_header(b: &[u8]) -> usize {\n    b.len() + timer()\n}\n");
    std::fs::remove_file(root.join("docs/guide.md")).unwrap();
    f.feed(WatchEvent::Removed(root.join("docs/guide.md")));
    std::fs::write(root.join("net/new.c"), "void timer_poll(void)\n{\n}\n").unwrap();
    f.feed(WatchEvent::Created(root.join("net/new.c")));
    assert!(f.index.wait_ready(&root, Duration::from_secs(30)));
    let fresh = start(&root, None);
    for query in [
        "timer reset",
        "parse header",
        "watchdog",
        "net poll",
        "frame",
    ] {
        let (a, b) = (f.ask(query), fresh.ask(query));
        assert_eq!(names(&a, &root), names(&b, &root), "{query}");
        // The same scores: statistics count only what is served.
        let scores = |o: &RankedOutcome| o.hits.iter().map(|h| h.score).collect::<Vec<_>>();
        assert_eq!(scores(&a), scores(&b), "{query}");
    }
}

#[test]
fn a_restart_serves_the_stored_index_checked() {
    let (_dir, root) = tree();
    let cache = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::new(cache.path(), Some(64)));
    {
        let f = start(&root, Some(store.clone()));
        // The save follows the landing: wait for the file.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !store.has(&root, crate::store::Kind::Search) && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(store.has(&root, crate::store::Kind::Search));
        assert!(!f.ask("watchdog").hits.is_empty());
    }
    // Edited while no server ran.
    std::fs::write(
        root.join("net/tcp.c"),
        "int tcp_close(int s)\n{\n  return 0;\n}\n",
    )
    .unwrap();
    let f = start(&root, Some(Arc::new(Store::new(cache.path(), Some(64)))));
    let note = f.index.status()[0].store.clone().unwrap_or_default();
    assert!(note.contains("loaded from the store"), "{note}");
    assert_eq!(names(&f.ask("tcp close"), &root), ["net/tcp.c:tcp_close"]);
    assert!(!named(&f.ask("tcp_send"), "tcp_send"));
}

#[test]
fn without_an_index_the_prefilter_ranks_candidates() {
    let (_dir, root) = tree();
    let request = RankedRequest {
        query: "timer_reset watchdog".into(),
        limit: 10,
        ..RankedRequest::default()
    };
    let roots = [root.clone()];
    let out = rank(&request, &roots, &roots, None, None, None, &Control::new()).unwrap();
    assert_eq!(out.unindexed.len(), 1);
    assert!(out.stats.candidates >= 2);
    assert_eq!(names(&out, &root)[0], "drivers/timer/timer.c:timer_reset");
}

/// Without the watcher's barrier (macOS, Windows; these tests have none) a file saved
/// before its event arrives is caught on the page: its old text is not served.
#[test]
fn a_page_file_changed_on_disk_before_its_event_is_read_again() {
    let (_dir, root) = tree();
    let f = start(&root, None);
    assert!(named(&f.ask("tcp send"), "tcp_send"));
    // Written, and no event fed: the file index still has the old stamp.
    std::fs::write(
        root.join("net/tcp.c"),
        "int tcp_recv_all(int s)\n{\n  return net_read(s);\n}\n",
    )
    .unwrap();
    let out = f.ask("tcp send");
    assert!(
        !named(&out, "tcp_send"),
        "old text served: {:?}",
        names(&out, &root)
    );
    assert!(named(&out, "tcp_recv_all"), "{:?}", names(&out, &root));
    assert!(out.stats.on_demand >= 1);
}

/// More changed files than a query indexes itself (the worker's update not run yet: its
/// clock stands still): they are left out and counted, never served from old text.
#[test]
fn too_many_changed_files_are_left_out_and_said() {
    let (_dir, root) = tree();
    let files = Arc::new(FileIndex::new());
    let clock = crate::clock::ManualClock::new();
    let index = RankedIndex::with_clock(files.clone(), None, None, clock);
    let roots = [root.clone()];
    files.set_roots(&roots);
    Consumer::set_roots(&index, &roots);
    let f = Fixture {
        files,
        index,
        root: root.clone(),
    };
    f.feed(WatchEvent::Status(root.clone(), RootStatus::Watching));
    assert!(f.index.wait_ready(&root, Duration::from_secs(30)));
    let n = MAX_ON_DEMAND + 6;
    for i in 0..n {
        let path = root.join(format!("net/gen{i}.c"));
        std::fs::write(
            &path,
            format!("int zephyr_{i}(void)\n{{\n  return {i};\n}}\n"),
        )
        .unwrap();
        f.feed(WatchEvent::Created(path));
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let out = loop {
        let out = f.ask("zephyr");
        if out.unindexed.is_empty() || std::time::Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(out.unindexed.is_empty());
    assert_eq!(out.stats.left_out, n as u64);
    assert_eq!(out.stats.on_demand, 0);
    assert!(out.hits.is_empty(), "{:?}", names(&out, &root));
}
