//! Unit tests of re-syncing a root against its file list.

use super::*;
use crate::symbols::find::{SymbolQuery, find_symbols_with};
use crate::walk::Control;
use std::sync::atomic::AtomicUsize;

fn ask(text: &str, root: &Path, symbols: &SymbolIndex, files: &FileIndex) -> (usize, bool) {
    let query = SymbolQuery {
        query: text.to_string(),
        exact: true,
        limit: 50,
        threads: 1,
        ..SymbolQuery::default()
    };
    let got = find_symbols_with(
        &query,
        &[root.to_path_buf()],
        Some(crate::search::Indexes::files(files)),
        Some(symbols),
        &Control::new(),
        &AtomicUsize::new(0),
    )
    .unwrap();
    (
        got.total,
        got.stats.indexed_files.is_some() && got.stats.parsed == 0,
    )
}

/// A directory appearing or vanishing with its files is beyond the overlay: the root
/// re-syncs with the file list (answers stay right meanwhile, on demand), and the
/// unchanged files are carried over, not parsed again.
#[test]
fn directory_changes_resync_and_keep_what_did_not_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("old")).unwrap();
    std::fs::write(root.join("old/a.rs"), "fn in_old_dir() {}\n").unwrap();
    std::fs::write(root.join("keep.py"), "def kept():\n    pass\n").unwrap();
    let files = Arc::new(FileIndex::new());
    let symbols = SymbolIndex::with_threads(files.clone(), 1);
    let roots = [root.clone()];
    files.set_roots(&roots);
    Consumer::set_roots(&symbols, &roots);
    let feed = |event: WatchEvent| {
        files.apply(&event);
        symbols.apply(&event);
    };
    feed(WatchEvent::Status(root.clone(), RootStatus::Watching));
    assert!(symbols.wait_ready(&root, Duration::from_secs(30)));
    let first = symbols.shared.lock().slots[0].table.clone().unwrap();

    std::fs::create_dir(root.join("new")).unwrap();
    std::fs::write(root.join("new/b.rs"), "fn in_new_dir() {}\n").unwrap();
    feed(WatchEvent::Created(root.join("new")));
    std::fs::remove_dir_all(root.join("old")).unwrap();
    feed(WatchEvent::Removed(root.join("old")));
    // Right at once (on demand: the file index walks meanwhile).
    assert_eq!(ask("in_old_dir", &root, &symbols, &files).0, 0);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (total, from_memory) = ask("in_new_dir", &root, &symbols, &files);
        if from_memory {
            assert_eq!(total, 1);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never synced");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(ask("in_old_dir", &root, &symbols, &files), (0, true));
    assert_eq!(ask("kept", &root, &symbols, &files), (1, true));
    let now = symbols.shared.lock().slots[0].table.clone().unwrap();
    assert!(!Arc::ptr_eq(&first, &now), "a new table");
    // keep.py was carried over: the sync parsed only new/b.rs.
    assert_eq!(
        symbols.shared.lock().slots[0]
            .work
            .total
            .load(Ordering::Relaxed),
        1
    );
}
