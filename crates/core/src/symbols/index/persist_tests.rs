//! Unit tests of the symbol index over the store: a table stored and read back, a restart
//! that re-parses only what changed while no server ran, damage that is rebuilt, and two
//! indexes on one root, where only the writer parses.

use super::stored::decode;
use crate::store::mapped::Bytes;
use crate::store::publish::Stored;

fn encode(table: &Table) -> Vec<u8> {
    table.bytes().into_owned()
}
use super::*;
use crate::symbols::find::{SymbolQuery, find_symbols_with};
use crate::walk::Control;
use std::sync::atomic::AtomicUsize;

fn tree(files: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    for n in 0..files {
        std::fs::write(
            root.join(format!("src/m{n}.rs")),
            format!("pub fn stored_{n}() {{}}\npub struct Kept{n};\nimpl Kept{n} {{ fn get(&self) {{}} }}\n"),
        )
        .unwrap();
    }
    std::fs::write(root.join("lib.py"), "def helper():\n    pass\n").unwrap();
    (dir, root)
}

fn start(root: &Path, store: Option<&Path>) -> (Arc<FileIndex>, SymbolIndex) {
    let files = Arc::new(FileIndex::new());
    let store = store.map(|dir| Arc::new(Store::new(dir, Some(64))));
    let symbols = SymbolIndex::with_clock(files.clone(), 2, crate::clock::system(), store);
    let roots = [root.to_path_buf()];
    files.set_roots(&roots);
    Consumer::set_roots(&symbols, &roots);
    let watching = WatchEvent::Status(root.to_path_buf(), RootStatus::Watching);
    files.apply(&watching);
    symbols.apply(&watching);
    (files, symbols)
}

fn ready(root: &Path, store: Option<&Path>) -> (Arc<FileIndex>, SymbolIndex) {
    let (files, symbols) = start(root, store);
    assert!(
        symbols.wait_ready(root, Duration::from_secs(60)),
        "never ready"
    );
    (files, symbols)
}

/// Waits until the root's store note satisfies `want`; returns it.
fn note(symbols: &SymbolIndex, want: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let now = symbols.status()[0].store.clone().unwrap_or_default();
        if want(&now) {
            return now;
        }
        assert!(std::time::Instant::now() < deadline, "store note: {now:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether a store note says this index saved its table.
fn is_stored(note: &str) -> bool {
    note.starts_with("stored") || note.contains(", stored again")
}

/// Files the root's last full pack parsed.
fn parsed(symbols: &SymbolIndex) -> usize {
    symbols.shared.lock().slots[0]
        .work
        .total
        .load(std::sync::atomic::Ordering::Relaxed)
}

fn answers(root: &Path, files: &FileIndex, symbols: &SymbolIndex) -> Vec<String> {
    [
        "stored_1", "stored_", "Kept", "get", "helper", "fresh_fn", "x",
    ]
    .iter()
    .flat_map(|q| {
        let query = SymbolQuery {
            query: q.to_string(),
            limit: 1000,
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
        assert!(got.stats.indexed_files.is_some(), "{q}: not from the index");
        let mut lines: Vec<String> = got
            .entries
            .iter()
            .map(|(_, l)| {
                format!(
                    "{q}: {} {} {}",
                    l.def.qualified(),
                    l.path.display(),
                    l.def.line
                )
            })
            .collect();
        lines.push(format!("{q}: total {}", got.total));
        lines
    })
    .collect()
}

#[test]
fn a_table_reads_back_as_it_was_and_damage_never_panics() {
    let (_dir, root) = tree(20);
    let (_files, symbols) = ready(&root, None);
    let table = symbols.shared.lock().slots[0].table.clone().unwrap();
    let bytes = encode(&table);
    let back = decode(Bytes::owned(&bytes)).unwrap();
    assert_eq!(
        format!("{:?}", back.unpack()),
        format!("{:?}", table.unpack())
    );
    assert_eq!(back.sorted(), table.sorted());
    assert_eq!(back.lowers().len(), table.lowers().len());
    // Cut anywhere: refused (the store's checksum refuses every change first; this is what
    // decoding alone does with nonsense).
    for cut in (0..bytes.len()).step_by(7) {
        assert!(decode(Bytes::owned(&bytes[..cut])).is_err(), "cut at {cut}");
    }
    // Any byte changed: refused, or a table whose every read answers without a panic.
    let queries = ["parse", "p", "Helper", "x"];
    for at in (0..bytes.len()).step_by(3) {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[at] ^= flip;
            if let Ok(t) = decode(Bytes::owned(&bad)) {
                let _ = t.unpack();
                for q in queries {
                    for insensitive in [false, true] {
                        for prefix in [false, true] {
                            for r in t.lookup(q, insensitive, prefix) {
                                let _ = (t.definition(r), t.file_of(r), t.name(r));
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_restart_parses_only_what_changed_while_no_server_ran() {
    let (_dir, root) = tree(30);
    let cache = tempfile::tempdir().unwrap();
    {
        let (_files, symbols) = ready(&root, Some(cache.path()));
        assert_eq!(parsed(&symbols), 31);
        note(&symbols, is_stored);
    }
    // Unchanged: ready from the store, nothing parsed, nothing written again.
    let stored_at = std::fs::metadata(cache.path().join("rootgrep")).unwrap();
    {
        let (files, symbols) = ready(&root, Some(cache.path()));
        assert_eq!(parsed(&symbols), 0);
        assert_eq!(note(&symbols, |n| !n.is_empty()), "loaded from the store");
        let (fresh_files, fresh) = ready(&root, None);
        assert_eq!(
            answers(&root, &files, &symbols),
            answers(&root, &fresh_files, &fresh)
        );
    }
    let _ = stored_at;
    // Edited, added and removed while no server ran.
    std::fs::write(root.join("src/m1.rs"), "pub fn fresh_fn() {}\n").unwrap();
    std::fs::write(root.join("src/new.rs"), "pub fn stored_new() {}\n").unwrap();
    std::fs::remove_file(root.join("src/m2.rs")).unwrap();
    let (files, symbols) = ready(&root, Some(cache.path()));
    assert_eq!(parsed(&symbols), 2, "the edited and the new file");
    let (fresh_files, fresh) = ready(&root, None);
    let got = answers(&root, &files, &symbols);
    assert!(
        got.iter().any(|l| l.starts_with("fresh_fn: fresh_fn")),
        "{got:?}"
    );
    assert!(!got.iter().any(|l| l.contains("stored_2 ")), "{got:?}");
    assert_eq!(got, answers(&root, &fresh_files, &fresh));
    // The changes were stored: the next start parses nothing.
    note(&symbols, is_stored);
    drop(symbols);
    let (_files, again) = ready(&root, Some(cache.path()));
    assert_eq!(parsed(&again), 0);
}

/// A file put back with its old size and mtime (`cp -p`, `rsync -t`, `tar`) while no
/// server ran still counts as changed: its inode or change time differs.
#[test]
fn a_file_restored_with_its_old_size_and_mtime_is_parsed_again() {
    let (_dir, root) = tree(5);
    let cache = tempfile::tempdir().unwrap();
    let path = root.join("src/m3.rs");
    let old = std::fs::read_to_string(&path).unwrap();
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    {
        let (_files, symbols) = ready(&root, Some(cache.path()));
        note(&symbols, is_stored);
    }
    let new = old.replace("stored_3", "fresh_fn");
    assert_eq!(new.len(), "fresh_fn".len() - "stored_3".len() + old.len());
    std::fs::write(&path, &new).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    let (files, symbols) = ready(&root, Some(cache.path()));
    assert_eq!(parsed(&symbols), 1);
    let got = answers(&root, &files, &symbols);
    assert!(
        got.iter().any(|l| l.starts_with("fresh_fn: fresh_fn")),
        "{got:?}"
    );
}

/// A query sent the moment a restarted server starts waits for the stored table's check
/// (a walk) instead of parsing on demand, and answers from memory.
#[test]
fn a_query_at_once_after_a_restart_answers_from_the_checked_table() {
    let (_dir, root) = tree(40);
    let cache = tempfile::tempdir().unwrap();
    {
        let (_files, symbols) = ready(&root, Some(cache.path()));
        note(&symbols, is_stored);
    }
    let (files, symbols) = start(&root, Some(cache.path()));
    let got = answers(&root, &files, &symbols);
    let (fresh_files, fresh) = ready(&root, None);
    assert_eq!(got, answers(&root, &fresh_files, &fresh));
    assert_eq!(parsed(&symbols), 0);
    // Without a stored table nothing waits: the same query parses on demand.
    let (files, cold) = start(&root, None);
    let query = SymbolQuery {
        query: "stored_1".into(),
        exact: true,
        ..SymbolQuery::default()
    };
    let at_once = find_symbols_with(
        &query,
        std::slice::from_ref(&root),
        Some(crate::search::Indexes::files(&files)),
        Some(&cold),
        &Control::new(),
        &AtomicUsize::new(0),
    )
    .unwrap();
    assert_eq!(at_once.total, 1);
}

#[test]
fn a_damaged_store_is_rebuilt_and_never_served() {
    let (_dir, root) = tree(10);
    let cache = tempfile::tempdir().unwrap();
    let table_file = {
        let (_files, symbols) = ready(&root, Some(cache.path()));
        note(&symbols, is_stored);
        let store = Store::new(cache.path(), Some(64));
        store.open(&root).unwrap().dir().join("symbols")
    };
    let good = std::fs::read(&table_file).unwrap();
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", good[..good.len() / 2].to_vec()),
        ("garbage", vec![0xa5; good.len()]),
        ("empty", Vec::new()),
        ("flipped", {
            let mut b = good.clone();
            let at = b.len() - 10;
            b[at] ^= 0x10;
            b
        }),
    ];
    for (what, bytes) in damages {
        std::fs::write(&table_file, &bytes).unwrap();
        let (files, symbols) = ready(&root, Some(cache.path()));
        assert_eq!(parsed(&symbols), 11, "{what}: rebuilt");
        let n = note(&symbols, is_stored);
        assert!(is_stored(&n), "{what}: {n}");
        let (fresh_files, fresh) = ready(&root, None);
        assert_eq!(
            answers(&root, &files, &symbols),
            answers(&root, &fresh_files, &fresh),
            "{what}"
        );
    }
}

#[test]
fn a_second_index_on_the_root_waits_for_the_writer_instead_of_parsing() {
    let (_dir, root) = tree(crate::store::publish::WRITER_WAIT_MIN + 50);
    let cache = tempfile::tempdir().unwrap();
    // Another server holds the root's entry and has not published yet.
    let store = Store::new(cache.path(), Some(64));
    let entry = store.open(&root).unwrap();
    let crate::store::Writer::Me(lock) = entry.try_writer().unwrap() else {
        panic!("the entry is free")
    };
    let (files, reader) = start(&root, Some(cache.path()));
    let n = note(&reader, |n| n.starts_with("read from the store"));
    assert_eq!(
        n,
        format!(
            "read from the store (server pid {} writes it)",
            std::process::id()
        )
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        reader.snapshot(&root).is_none(),
        "built although a writer lives"
    );
    assert_eq!(reader.status()[0].definitions, 0);
    // The writer publishes: the reader loads it and parses nothing.
    let (_fresh_files, fresh) = ready(&root, None);
    let table = fresh.shared.lock().slots[0].table.clone().unwrap();
    entry
        .save(crate::store::Kind::Symbols, &encode(&table))
        .unwrap();
    assert!(reader.wait_ready(&root, Duration::from_secs(30)));
    assert_eq!(parsed(&reader), 0, "the reader loaded the writer's table");
    assert_eq!(
        answers(&root, &files, &reader),
        answers(&root, &_fresh_files, &fresh)
    );
    // The writer goes: the reader takes the lock over and stores its next table.
    drop(lock);
    std::fs::write(root.join("src/m0.rs"), "pub fn fresh_fn() {}\n").unwrap();
    files.apply(&WatchEvent::Overflow);
    reader.apply(&WatchEvent::Overflow);
    let n = note(&reader, is_stored);
    assert!(is_stored(&n), "{n}");
    assert_eq!(parsed(&reader), 1);
}

/// While another server holds the writer lock, the stored table is unchecked: after every
/// function was renamed while no server ran, completion offers none of the old names (and
/// `symbols` answers on demand meanwhile).
#[test]
fn completion_never_offers_an_unchecked_stored_table() {
    let (_dir, root) = tree(crate::store::publish::WRITER_WAIT_MIN + 50);
    let cache = tempfile::tempdir().unwrap();
    let (_, stored) = ready(&root, Some(cache.path()));
    note(&stored, is_stored);
    drop(stored);
    for n in 0..crate::store::publish::WRITER_WAIT_MIN + 50 {
        let text = format!("pub fn renamed_{n}() {{}}\npub struct Kept{n};\n");
        std::fs::write(root.join(format!("src/m{n}.rs")), text).unwrap();
    }
    let store = Store::new(cache.path(), Some(64));
    let entry = store.open(&root).unwrap();
    let crate::store::Writer::Me(_lock) = entry.try_writer().unwrap() else {
        panic!("the entry is free")
    };
    let (_files, reader) = start(&root, Some(cache.path()));
    note(&reader, |n| n.starts_with("read from the store"));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(reader.complete_names("stored_", 10), (vec![], false));
    assert_eq!(reader.complete_names("Kept1", 3).0, Vec::<String>::new());
}

/// On one live index, a file whose definitions were renamed or which was deleted offers
/// its new names only, once the change is known (dirty or re-parsed), and none when gone.
#[test]
fn completion_drops_the_names_of_changed_and_deleted_files() {
    let (_dir, root) = tree(5);
    let (files, symbols) = ready(&root, None);
    assert_eq!(symbols.complete_names("stored_1", 5).0, ["stored_1"]);
    std::fs::write(root.join("src/m1.rs"), "pub fn renamed_1() {}\n").unwrap();
    files.apply(&WatchEvent::Changed(root.join("src/m1.rs")));
    symbols.apply(&WatchEvent::Changed(root.join("src/m1.rs")));
    // Dirty (not yet re-parsed) or in the overlay: never the old name.
    assert!(symbols.complete_names("stored_1", 5).0.is_empty());
    assert!(symbols.wait_ready(&root, Duration::from_secs(10)));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while symbols.complete_names("renamed_1", 5).0.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the new name never came"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(symbols.complete_names("stored_1", 5).0.is_empty());
    std::fs::remove_file(root.join("src/m2.rs")).unwrap();
    files.apply(&WatchEvent::Removed(root.join("src/m2.rs")));
    symbols.apply(&WatchEvent::Removed(root.join("src/m2.rs")));
    assert!(symbols.complete_names("stored_2", 5).0.is_empty());
    assert!(symbols.wait_ready(&root, Duration::from_secs(10)));
    assert!(symbols.complete_names("stored_2", 5).0.is_empty());
    assert_eq!(symbols.complete_names("stored_3", 5).0, ["stored_3"]);
}
