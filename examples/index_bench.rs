//! Measures the file index on a tree: build time, file count, resident memory with the
//! index held, glob over the index vs walking, grep over the index vs walking, and path
//! completion latency.
//!
//! `cargo run --release --example index_bench -- DIR [GLOB...]`

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rootgrep_core::complete::complete_with;
use rootgrep_core::index::FileIndex;
use rootgrep_core::search::{
    GlobQuery, GrepQuery, Indexes, SortBy, glob, glob_indexed, grep, grep_indexed,
};
use rootgrep_core::walk::Control;
use rootgrep_core::watch::{RootStatus, WatchEvent, Watcher};

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn median(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
    (times[times.len() / 2], p99)
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Duration) {
    let times = (0..runs)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(f());
            started.elapsed()
        })
        .collect();
    median(times)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().expect("usage: index_bench DIR [GLOB...]"))
        .canonicalize()
        .expect("DIR");
    let mut globs: Vec<String> = args.collect();
    if globs.is_empty() {
        globs = vec!["*.rs".into(), "**/*.py".into(), "src/**/*.{ts,js}".into()];
    }
    let before = rss_kib();
    let index = Arc::new(FileIndex::new());
    index.set_roots(std::slice::from_ref(&root));
    let started = Instant::now();
    // WATCH=1: a real watcher feeds the index (and we count overflows caused by our own
    // reads); otherwise the watch is simulated so only the index is measured.
    let overflows = Arc::new(AtomicUsize::new(0));
    let _watcher = match std::env::var_os("WATCH").is_some() {
        true => {
            let feed = Arc::clone(&index);
            let count = Arc::clone(&overflows);
            let watcher = Watcher::new(move |event| {
                if matches!(event, WatchEvent::Overflow | WatchEvent::Error(_)) {
                    count.fetch_add(1, Ordering::Relaxed);
                    eprintln!(
                        "  watch event at {:?}: {event:?}, RSS {} KiB",
                        started.elapsed(),
                        rss_kib()
                    );
                }
                if let WatchEvent::Status(_, status) = &event {
                    eprintln!(
                        "  watch status at {:?}: {status:?}, RSS {} KiB",
                        started.elapsed(),
                        rss_kib()
                    );
                }
                feed.apply(&event);
            });
            watcher.set_roots(std::slice::from_ref(&root));
            Some(watcher)
        }
        false => {
            index.apply(&WatchEvent::Status(root.clone(), RootStatus::Watching));
            None
        }
    };
    let snapshot = index
        .wait_fresh(&root, Duration::from_secs(600))
        .expect("index built");
    let wall = started.elapsed();
    let info = snapshot.info().clone();
    drop(snapshot);
    let after = rss_kib();
    eprintln!(
        "index: {} files, {} dirs, {} ignored entries; build {:?} (wall {:?}); heap {:.1} MiB; \
         RSS {:.1} MiB -> {:.1} MiB (+{:.1} MiB)",
        info.files,
        info.dirs,
        info.ignored,
        info.elapsed,
        wall,
        info.heap_bytes as f64 / 1048576.0,
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after - before) as f64 / 1024.0
    );
    let targets = vec![root.clone()];
    for pattern in &globs {
        let query = GlobQuery {
            sort: SortBy::Path,
            limit: Some(100),
            ..GlobQuery::new(pattern.clone())
        };
        let (indexed, _) = time(10, || {
            glob_indexed(&query, &targets, &index, &Control::new()).unwrap()
        });
        let (walked, _) = time(3, || glob(&query, &targets, &Control::new()).unwrap());
        let total = glob_indexed(&query, &targets, &index, &Control::new())
            .unwrap()
            .total;
        eprintln!("glob {pattern:?}: {total} matches; index p50 {indexed:?}, walk p50 {walked:?}");
    }
    let query = GrepQuery {
        limit: Some(100),
        ..GrepQuery::new("zqxjkv_rare_needle")
    };
    let (indexed, _) = time(5, || {
        grep_indexed(&query, &targets, Indexes::files(&index), &Control::new()).unwrap()
    });
    let (walked, _) = time(5, || grep(&query, &targets, &Control::new()).unwrap());
    eprintln!("grep rare needle: index p50 {indexed:?}, walk p50 {walked:?}");
    std::thread::sleep(Duration::from_millis(500));
    eprintln!(
        "overflow/error events so far: {}; index state now: {:?}",
        overflows.load(Ordering::Relaxed),
        index.status()[0].state
    );

    // Completion: the root's children, and a few directories at increasing depth.
    let roots = vec![root.clone()];
    let base = root.to_string_lossy().trim_start_matches('/').to_owned();
    let mut values = vec![format!("{base}/"), format!("{base}/s"), format!("{base}/x")];
    let snapshot = index.snapshot(&root).expect("fresh");
    for file in snapshot.files().step_by(snapshot.len() / 50 + 1) {
        let rel = file.rel.to_string_lossy();
        if let Some(at) = rel.rfind('/') {
            values.push(format!("{base}/{}", &rel[..=at]));
            values.push(format!("{base}/{}", &rel[..at + 2.min(rel.len() - at)]));
        }
    }
    drop(snapshot);
    for (label, with_index) in [("index", Some(&*index)), ("disk", None)] {
        let mut times = Vec::new();
        for _ in 0..5 {
            for value in &values {
                let started = Instant::now();
                std::hint::black_box(complete_with(&roots, value, with_index));
                times.push(started.elapsed());
            }
        }
        let (p50, p99) = median(times);
        eprintln!(
            "completion ({label}, {} values): p50 {p50:?}, p99 {p99:?}",
            values.len()
        );
    }
}
