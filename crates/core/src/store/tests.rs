//! The store's files, locks and entries: what a damaged, foreign or concurrent store does.

use super::format::{self, HEADER_LEN, Kind, Refused};
use super::*;

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn a_file_reads_back_and_every_kind_of_damage_is_refused() {
    let dir = temp();
    let path = dir.path().join("f");
    format::write(&path, Kind::Symbols, b"payload bytes").unwrap();
    assert_eq!(
        format::read(&path, Kind::Symbols).unwrap(),
        b"payload bytes"
    );
    assert_eq!(format::read(&path, Kind::Root), Err(Refused::OtherKind));
    let good = std::fs::read(&path).unwrap();

    let mut cut = good.clone();
    cut.truncate(good.len() - 3);
    assert_eq!(
        format::payload(&cut, Kind::Symbols),
        Err(Refused::Truncated)
    );
    assert_eq!(
        format::payload(&good[..10], Kind::Symbols),
        Err(Refused::Truncated)
    );
    assert_eq!(format::payload(b"", Kind::Symbols), Err(Refused::Truncated));

    let mut flipped = good.clone();
    *flipped.last_mut().unwrap() ^= 1;
    assert_eq!(
        format::payload(&flipped, Kind::Symbols),
        Err(Refused::Checksum)
    );

    let mut version = good.clone();
    version[8] = 99;
    assert_eq!(
        format::payload(&version, Kind::Symbols),
        Err(Refused::Version(99))
    );

    let mut machine = good.clone();
    machine[17] ^= 0x40;
    assert_eq!(
        format::payload(&machine, Kind::Symbols),
        Err(Refused::OtherMachine)
    );

    let garbage = vec![0x5au8; 4096];
    assert_eq!(
        format::payload(&garbage, Kind::Symbols),
        Err(Refused::NotOurs)
    );

    let mut longer = good.clone();
    longer.extend_from_slice(b"junk");
    assert_eq!(
        format::payload(&longer, Kind::Symbols),
        Err(Refused::Truncated)
    );
    assert_eq!(good.len(), HEADER_LEN + b"payload bytes".len());
}

#[test]
fn a_failed_write_leaves_the_old_file_and_no_temp() {
    let dir = temp();
    let path = dir.path().join("f");
    format::write(&path, Kind::Symbols, b"old").unwrap();
    // A directory in the way of the rename: the write fails after the temp was written.
    let blocked = dir.path().join("sub");
    std::fs::create_dir_all(blocked.join("x")).unwrap();
    assert!(format::write(&blocked, Kind::Symbols, b"new").is_err());
    assert_eq!(format::read(&path, Kind::Symbols).unwrap(), b"old");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn the_reader_never_reads_past_the_end() {
    let mut w = format::Writer::default();
    w.u64(u64::MAX);
    let mut r = format::Reader::new(&w.bytes);
    assert!(r.count(1).is_err());
    let mut r = format::Reader::new(&[1, 2]);
    assert!(r.u64().is_err());
    assert!(format::Reader::new(&[]).blob().is_err());
}

#[test]
fn one_writer_per_entry_and_the_lock_goes_with_its_holder() {
    let cache = temp();
    let root = temp();
    // Two servers: two stores on one cache directory.
    let store = Store::new(cache.path(), Some(10));
    let other_server = Store::new(cache.path(), Some(10));
    let root_path = root.path().canonicalize().unwrap();
    let first = store.open(&root_path).unwrap();
    let second = other_server.open(&root_path).unwrap();
    let me = first.try_writer().unwrap();
    assert!(matches!(me, Writer::Me(_)));
    match second.try_writer().unwrap() {
        Writer::Other(pid) => assert_eq!(pid, Some(std::process::id())),
        Writer::Me(_) => panic!("two writers"),
    }
    assert_eq!(store.list().unwrap()[0].writer, Some(std::process::id()));
    // Another index of the same server shares the lock.
    let again = store.open(&root_path).unwrap().try_writer().unwrap();
    assert!(matches!(again, Writer::Me(_)));
    drop(me);
    assert!(matches!(second.try_writer().unwrap(), Writer::Other(_)));
    drop(again);
    assert!(matches!(second.try_writer().unwrap(), Writer::Me(_)));
}

#[test]
fn an_entry_serves_only_the_root_it_was_written_for() {
    let cache = temp();
    let parent = temp();
    let root = parent.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let store = Store::new(cache.path(), Some(10));
    let entry = store.open(&root).unwrap();
    assert_eq!(loaded(&entry), Err(Refused::Missing));
    let lock = entry.try_writer().unwrap();
    entry.save(Kind::Symbols, b"table").unwrap();
    assert_eq!(loaded(&entry).unwrap(), b"table".to_vec());

    // Replaced by another directory at the same path (rm -rf, clone again): refused.
    std::fs::rename(&root, parent.path().join("old")).unwrap();
    std::fs::create_dir(&root).unwrap();
    assert!(matches!(loaded(&entry), Err(Refused::Invalid(_))));
    // The next writer describes the new root and drops what was stored for the old one.
    drop(lock);
    let _lock = entry.try_writer().unwrap();
    assert_eq!(loaded(&entry), Err(Refused::Missing));
}

#[test]
fn a_damaged_file_is_deleted_when_found() {
    let cache = temp();
    let root = temp();
    let store = Store::new(cache.path(), Some(10));
    let entry = store.open(root.path()).unwrap();
    let _lock = entry.try_writer().unwrap();
    entry.save(Kind::Symbols, b"table").unwrap();
    let file = entry.dir().join("symbols");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[HEADER_LEN] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    assert_eq!(loaded(&entry), Err(Refused::Checksum));
    assert!(!file.exists());
}

#[cfg(unix)]
#[test]
fn the_store_is_private_to_its_user() {
    use std::os::unix::fs::PermissionsExt;
    let cache = temp();
    let root = temp();
    let store = Store::new(cache.path(), Some(10));
    let entry = store.open(root.path()).unwrap();
    let _lock = entry.try_writer().unwrap();
    entry.save(Kind::Symbols, b"x").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(store.dir()), 0o700);
    assert_eq!(mode(entry.dir()), 0o700);
    for name in ["root", "symbols", "writer.lock", "used"] {
        assert_eq!(mode(&entry.dir().join(name)), 0o600, "{name}");
    }
}

#[test]
fn the_least_recently_used_entries_go_first_and_clear_keeps_busy_ones() {
    let cache = temp();
    let roots: Vec<_> = (0..3).map(|_| temp()).collect();
    let store = Store::new(cache.path(), Some(1));
    let big = vec![7u8; 600 * 1024];
    let mut entries = Vec::new();
    for root in &roots {
        entries.push(saved(&store, root.path(), &big));
        // mtimes of `used` must differ.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    store.evict(&entries[2]);
    let left: Vec<PathBuf> = (store.list().unwrap().into_iter())
        .filter_map(|e| e.root)
        .collect();
    assert_eq!(left, vec![roots[2].path().to_path_buf()]);

    let busy = entries[2].try_writer().unwrap();
    let cleared = store.clear(&[], false).unwrap();
    assert!(cleared.removed.is_empty());
    assert_eq!(cleared.busy.len(), 1);
    drop(busy);
    let cleared = store
        .clear(&[roots[2].path().to_path_buf()], false)
        .unwrap();
    assert_eq!(cleared.removed.len(), 1);
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn the_cache_directory_follows_the_platform() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        }
    };
    if cfg!(windows) {
        assert_eq!(
            default_cache_dir(env(&[("LOCALAPPDATA", r"C:\Users\u\AppData\Local")])),
            Some(PathBuf::from(r"C:\Users\u\AppData\Local"))
        );
        assert_eq!(default_cache_dir(env(&[])), None);
    } else if cfg!(target_os = "macos") {
        assert_eq!(
            default_cache_dir(env(&[("HOME", "/Users/u")])),
            Some(PathBuf::from("/Users/u/Library/Caches"))
        );
    } else {
        assert_eq!(
            default_cache_dir(env(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")])),
            Some(PathBuf::from("/c"))
        );
        // A relative XDG_CACHE_HOME is ignored, as the spec says.
        assert_eq!(
            default_cache_dir(env(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "c")])),
            Some(PathBuf::from("/home/u/.cache"))
        );
        assert_eq!(default_cache_dir(env(&[])), None);
    }
}

/// A store directory another user owns (or could have planted) is not used.
#[cfg(unix)]
#[test]
fn a_store_directory_of_another_user_is_refused() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: giving a directory away needs root");
        return;
    }
    let cache = temp();
    let root = temp();
    let store = Store::new(cache.path(), Some(10));
    std::fs::create_dir_all(store.dir()).unwrap();
    std::os::unix::fs::chown(store.dir(), Some(65534), Some(65534)).unwrap();
    let err = store.open(root.path()).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
    assert!(
        err.to_string().contains("not a directory of this user"),
        "{err}"
    );
}

/// Whatever is planted in an entry (a FIFO, a symlink to a device or to another file) is
/// refused at once: no hang, no endless read, nothing written through a link.
#[cfg(unix)]
#[test]
fn special_files_planted_in_an_entry_are_refused_without_hanging() {
    let cache = temp();
    let root = temp();
    let outside = temp();
    let store = Store::new(cache.path(), Some(10));
    let entry = store.open(root.path()).unwrap();
    let _lock = entry.try_writer().unwrap();
    let table = entry.dir().join("symbols");
    let made = std::process::Command::new("mkfifo")
        .arg(&table)
        .status()
        .unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    assert!(loaded(&entry).is_err());
    std::fs::remove_file(&table).ok();
    std::os::unix::fs::symlink("/dev/zero", &table).unwrap();
    assert!(loaded(&entry).is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // A link planted where the entry writes: the write replaces the link, never follows it.
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    std::fs::remove_file(&table).ok();
    std::os::unix::fs::symlink(&victim, &table).unwrap();
    entry.save(Kind::Symbols, b"table").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert_eq!(loaded(&entry).unwrap(), b"table".to_vec());
    let used = entry.dir().join("used");
    std::fs::remove_file(&used).unwrap();
    std::os::unix::fs::symlink(&victim, &used).unwrap();
    let _again = store.open(root.path()).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
}

/// What `entry` holds of the symbol kind, as plain bytes.
fn loaded(entry: &super::Entry) -> Result<Vec<u8>, Refused> {
    entry.load(Kind::Symbols).map(|b| b.as_slice().to_vec())
}

/// A victim's directory with two subdirectories and a file in each, as someone else would
/// have it; returns it.
#[cfg(unix)]
fn victim_dir(at: &Path) -> PathBuf {
    let victim = at.join("victim");
    for sub in ["0123456789abcdef", "work"] {
        std::fs::create_dir_all(victim.join(sub)).unwrap();
        std::fs::write(victim.join(sub).join("used"), b"precious").unwrap();
    }
    victim
}

/// A symlink planted at any level of the store's path (`rootgrep`, `roots`, an entry) is
/// never followed: `list` and `clear` refuse or skip it and the victim keeps every file;
/// a server refuses the store without creating anything where the link points.
#[cfg(unix)]
#[test]
fn a_symlink_at_any_level_of_the_store_is_never_followed() {
    let count = |dir: &Path| walkdir_count(dir);
    for level in ["rootgrep", "roots", "entry"] {
        let cache = temp();
        let root = temp();
        let victim = victim_dir(cache.path());
        let before = count(&victim);
        let store = Store::new(cache.path(), Some(10));
        let link = match level {
            "rootgrep" => store.dir().to_path_buf(),
            "roots" => {
                std::fs::create_dir_all(store.dir()).unwrap();
                set_mode(store.dir(), 0o700);
                store.dir().join("roots")
            }
            _ => {
                std::fs::create_dir_all(store.dir().join("roots")).unwrap();
                set_mode(store.dir(), 0o700);
                set_mode(&store.dir().join("roots"), 0o700);
                store.entry_dir(root.path())
            }
        };
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        match level {
            "entry" => {
                assert!(
                    store.list().unwrap().is_empty(),
                    "a linked entry is skipped"
                );
                let cleared = store.clear(&[], false).unwrap();
                assert!(cleared.removed.is_empty(), "{level}");
            }
            _ => {
                let err = store.list().unwrap_err();
                assert!(
                    err.to_string().contains("not a directory"),
                    "{level}: {err}"
                );
                assert!(store.clear(&[], false).is_err(), "{level}");
            }
        }
        let err = store.open(root.path()).unwrap_err();
        assert_eq!(
            err.kind(),
            io::ErrorKind::PermissionDenied,
            "{level}: {err}"
        );
        assert_eq!(count(&victim), before, "{level}: the victim is untouched");
        assert!(
            !victim.join("roots").exists(),
            "{level}: nothing created there"
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&victim).unwrap().permissions(),
        );
        assert_ne!(mode & 0o077, 0, "{level}: the victim's mode is kept");
    }
}

/// `list` and `clear` read only directories private to this user: a store directory open
/// to others is refused (a server, which created it, makes it private again).
#[cfg(unix)]
#[test]
fn a_store_open_to_others_is_not_listed_or_cleared() {
    let cache = temp();
    let root = temp();
    let store = Store::new(cache.path(), Some(10));
    drop(store.open(root.path()).unwrap());
    set_mode(&store.dir().join("roots"), 0o777);
    assert!(store.list().is_err());
    assert!(store.clear(&[], false).is_err());
    assert!(store.entry_dir(root.path()).exists());
    drop(store.open(root.path()).unwrap());
    assert_eq!(store.list().unwrap().len(), 1);
}

/// `clear` removes only what the store writes: a directory in `roots/` that is not named
/// as an entry is not listed, and an entry holding another file keeps it.
#[cfg(unix)]
#[test]
fn clear_removes_only_what_the_store_wrote() {
    let cache = temp();
    let root = temp();
    let store = Store::new(cache.path(), Some(10));
    let entry = saved(&store, root.path(), b"x");
    let stranger = store.dir().join("roots").join("not-an-entry");
    std::fs::create_dir(&stranger).unwrap();
    set_mode(&stranger, 0o700);
    std::fs::write(stranger.join("used"), b"keep").unwrap();
    std::fs::write(entry.dir().join("notes.txt"), b"keep").unwrap();
    assert_eq!(store.list().unwrap().len(), 1);
    let cleared = store.clear(&[], false).unwrap();
    assert!(cleared.removed.is_empty());
    assert_eq!(cleared.foreign.len(), 1);
    assert_eq!(
        std::fs::read(entry.dir().join("notes.txt")).unwrap(),
        b"keep"
    );
    assert!(
        !entry.dir().join("symbols").exists(),
        "the store's own files went"
    );
    assert_eq!(std::fs::read(stranger.join("used")).unwrap(), b"keep");
}

/// An entry whose root is gone is marked, and `clear` with `gone_only` removes just those.
#[test]
fn entries_of_gone_roots_are_marked_and_cleared_alone() {
    let cache = temp();
    let kept = temp();
    let gone = temp();
    let store = Store::new(cache.path(), Some(10));
    for root in [kept.path(), gone.path()] {
        saved(&store, root, b"x");
    }
    let gone_path = gone.path().to_path_buf();
    drop(gone);
    let list = store.list().unwrap();
    let marked: Vec<_> = list.iter().filter(|e| e.gone).collect();
    assert_eq!(marked.len(), 1);
    assert_eq!(marked[0].root.as_deref(), Some(gone_path.as_path()));
    let cleared = store.clear(&[], true).unwrap();
    assert_eq!(cleared.removed.len(), 1);
    let left = store.list().unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].root.as_deref(), Some(kept.path()));
}

/// Two indexes of one server describing the same entry at once use their own temp files:
/// no write fails and the description is whole.
#[test]
fn writers_in_one_process_never_share_a_temp_file() {
    let cache = temp();
    let root = temp();
    let store =
        Store::new(cache.path(), Some(10)).with_write_pause(std::time::Duration::from_millis(30));
    let entry = store.open(root.path()).unwrap();
    let results: Vec<io::Result<()>> = std::thread::scope(|s| {
        let writes: Vec<_> = (0..4)
            .map(|_| s.spawn(|| entry.save(Kind::Symbols, &[9u8; 4096])))
            .collect();
        writes.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(loaded_kind(&entry, Kind::Symbols), vec![9u8; 4096]);
}

/// The entry of `root`, described and holding `payload` as its symbols, its writer lock
/// let go (as a server leaves it when it exits).
fn saved(store: &Store, root: &Path, payload: &[u8]) -> super::Entry {
    let entry = store.open(root).unwrap();
    let Writer::Me(lock) = entry.try_writer().unwrap() else {
        panic!("the entry is free")
    };
    entry.save(Kind::Symbols, payload).unwrap();
    drop(lock);
    entry
}

fn loaded_kind(entry: &super::Entry, kind: Kind) -> Vec<u8> {
    let bytes = mapped::load(&entry.file(kind), kind).unwrap();
    bytes.as_slice().to_vec()
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Files and directories below `dir` (symlinks not followed).
#[cfg(unix)]
fn walkdir_count(dir: &Path) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        n += 1;
        if entry.file_type().unwrap().is_dir() {
            n += walkdir_count(&entry.path());
        }
    }
    n
}

/// The default's rule (no `--cache-max-mb`) at a small scale: 1 MiB instead of 512.
fn elastic(cache: &Path) -> Store {
    Store {
        max_bytes: 1 << 20,
        ..Store::new(cache, None)
    }
}

/// Each root's entry saved with its payload, one after the other (the least recently
/// used first: their `used` mtimes differ).
fn saved_in_turn(
    store: &Store,
    roots: &[tempfile::TempDir],
    payloads: &[&Vec<u8>],
) -> Vec<super::Entry> {
    let mut entries = Vec::new();
    for (root, payload) in roots.iter().zip(payloads) {
        entries.push(saved(store, root.path(), payload));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    entries
}

/// Without `--cache-max-mb`, a served root's index is stored whatever its size and the
/// limit bounds only the other roots' entries (evicted least recently used first), with
/// room for the largest of them beside it; with it, an index over the limit is not stored
/// and every entry counts.
#[test]
fn the_default_limit_keeps_the_served_roots_and_bounds_the_others() {
    let cache = temp();
    let roots: Vec<_> = (0..5).map(|_| temp()).collect();
    assert_eq!(Store::new(cache.path(), None).max_index_bytes(), u64::MAX);
    assert_eq!(Store::new(cache.path(), Some(1)).max_index_bytes(), 1 << 20);
    let elastic = elastic(cache.path());
    let big = vec![7u8; 2 << 20];
    let small = vec![7u8; 600 << 10];
    let entries = saved_in_turn(&elastic, &roots, &[&small, &small, &small, &small, &big]);
    // The served root (2 MiB, twice the limit by itself) stays; the others (2.4 MiB) are
    // over the limit and the largest of them (1.6 MiB): the least recently used go.
    elastic.evict(&entries[4]);
    let left: Vec<PathBuf> = (elastic.list().unwrap().into_iter())
        .filter_map(|e| e.root)
        .collect();
    assert_eq!(left.len(), 3, "{left:?}");
    for kept in [4, 3, 2] {
        assert!(left.contains(&roots[kept].path().to_path_buf()), "{kept}");
    }
    // With the limit given, every entry counts: only the kept one stays.
    Store::new(cache.path(), Some(1)).evict(&entries[4]);
    assert_eq!(elastic.list().unwrap().len(), 1);
}

/// A monorepo's entry (larger than the default by itself) survives while another root is
/// served: the default leaves room for the largest entry beside the small ones.
#[test]
fn a_monorepo_not_served_now_keeps_its_entry() {
    let cache = temp();
    let roots: Vec<_> = (0..3).map(|_| temp()).collect();
    let elastic = elastic(cache.path());
    let monorepo = vec![7u8; 4 << 20];
    let small = vec![7u8; 600 << 10];
    let entries = saved_in_turn(&elastic, &roots, &[&small, &monorepo, &small]);
    elastic.evict(&entries[2]);
    assert_eq!(elastic.list().unwrap().len(), 3);
}

#[test]
fn clearing_an_entry_removes_every_kind_of_file_the_store_writes() {
    // `cache clear` removes only the names it knows: a new kind must be one of them.
    for kind in DATA_KINDS.into_iter().chain([Kind::Root]) {
        let path = file_in(Path::new("entry"), kind);
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(dirs::is_entry_file(&name), "{kind:?} writes {name}");
    }
}

#[test]
fn varint_lengths_are_put_var_s() {
    for value in [
        0,
        1,
        127,
        128,
        16_383,
        16_384,
        u64::from(u32::MAX),
        u64::MAX,
    ] {
        let mut out = Vec::new();
        format::put_var(&mut out, value);
        assert_eq!(format::var_len(value), out.len(), "{value}");
    }
}
