//! Tests of a restart's resume from the stored file list (`stored.rs`, `resume.rs`): what
//! changed while no server watched is found, what did not is not listed again, and the
//! result is what a walk of the whole root gives.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::resume::{Resumed, prepare, resume};
use super::root::RootIndex;
use super::stored::{FileList, Saved, decode};
use super::tests::Fixture;
use super::{DEFAULT_MAX_FILES, build};
use crate::walk::Control;

/// Everything an answer depends on: files with their stamps, visited directories,
/// ignored and skipped entries, ignore files not applied.
fn summary(index: &RootIndex) -> Vec<String> {
    let mut out: Vec<String> = index
        .files()
        .map(|f| format!("file {} {:?}", f.rel.display(), f.stamp()))
        .collect();
    out.extend((0..index.dirs.len()).map(|d| format!("dir {}", index.dir_rel(d).display())));
    out.extend(
        (index.ignored.iter()).map(|i| format!("ignored {:?} {}", index.rel_of(i.path), i.is_dir)),
    );
    out.extend(
        (index.skipped.iter()).map(|s| format!("skipped {:?} {}", index.rel_of(s.path), s.special)),
    );
    out.extend(index.skipped_ignore.iter().map(|s| format!("{s}")));
    out
}

/// `index` stored as if its walk had started at `since`, and read back.
fn stored(index: &RootIndex, since: SystemTime) -> Saved {
    let FileList::Encoded(bytes) = FileList::of(index, since) else {
        unreachable!("a new list is encoded");
    };
    decode(&bytes).expect("decodes")
}

/// A walk long after every entry was made: every stamp is trusted.
fn long_after() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

fn resumed(root: &Path, saved: Saved) -> Box<RootIndex> {
    match resume(
        root,
        prepare(root, saved),
        &Control::new(),
        DEFAULT_MAX_FILES,
    ) {
        Resumed::Ready(index) => index,
        Resumed::Walk(why) => panic!("walked: {why}"),
        Resumed::Cancelled => panic!("cancelled"),
    }
}

/// Three files in three directories, no ignore file, in a new temporary directory (kept
/// while the first value lives).
fn tree_without_ignore_files() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for rel in ["a/x.rs", "a/b/y.rs", "c/z.rs"] {
        fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        fs::write(root.join(rel), rel).unwrap();
    }
    (dir, root)
}

fn walked(root: &Path) -> RootIndex {
    build(root, &Control::new()).expect("built")
}

#[test]
fn nothing_changed_lists_nothing_again() {
    let f = Fixture::new();
    f.write("src/deep/x.rs", "x");
    let index = walked(&f.root);
    let again = resumed(&f.root, stored(&index, long_after()));
    assert_eq!(again.info.resumed, Some(0));
    assert_eq!(summary(&again), summary(&walked(&f.root)));
}

/// Files created, removed, renamed and rewritten, a directory renamed and one made, an
/// ignored file added: only the directories that changed are listed again, and the
/// result is the walk's, stamps included.
#[test]
fn what_changed_while_no_one_watched_is_found() {
    let f = Fixture::new();
    f.write("src/deep/x.rs", "x");
    f.write("src/deep/y.rs", "y");
    f.write("docs/guide.md", "g");
    let index = walked(&f.root);
    let saved = stored(&index, long_after());
    // The changes: in `a` (one file new, one gone, a directory renamed), in the root (a
    // new directory, an ignored file), and a rewrite in place in `src/deep`.
    f.write("a/new.rs", "new");
    fs::remove_file(f.root.join("a/b")).unwrap();
    fs::rename(f.root.join("a/c"), f.root.join("a/c2")).unwrap();
    f.write("fresh/inner/z.rs", "z");
    f.write("app2.log", "ignored");
    f.write("src/deep/x.rs", "longer than before");
    let again = resumed(&f.root, saved);
    assert_eq!(summary(&again), summary(&walked(&f.root)));
    assert!(again.find_file(Path::new("a/c2/d.rs")).is_some());
    assert!(again.find_file(Path::new("fresh/inner/z.rs")).is_some());
    // The root and `a`; `src/deep` kept its entries (its file was rewritten in place).
    assert_eq!(again.info.resumed, Some(2));
}

/// Stamps taken within `RACY` of the walk's start are not trusted: such a directory is
/// listed again, even when its stamp looks the same.
#[test]
fn a_directory_changed_around_the_walk_is_listed_again() {
    // No ignore file (one as recent would mean a whole walk).
    let (_dir, root) = tree_without_ignore_files();
    let index = walked(&root);
    let again = resumed(&root, stored(&index, SystemTime::now()));
    assert_eq!(again.info.resumed, Some(index.dirs.len()));
    assert_eq!(summary(&again), summary(&walked(&root)));
}

/// A repository's `.git` changes at every git command; the ignore rules only care that it
/// is there, so a restart after commits still resumes.
#[test]
fn a_repository_at_work_still_resumes() {
    let f = Fixture::new();
    let saved = stored(&walked(&f.root), long_after());
    f.write(".git/index.lock", "x");
    fs::rename(f.root.join(".git/index.lock"), f.root.join(".git/index")).unwrap();
    let again = resumed(&f.root, saved);
    assert_eq!(again.info.resumed, Some(0));
}

/// Ignore rules changed in place, appeared in a directory, or a repository appeared
/// above a directory: the rules may change anything below, so only a whole walk is right.
#[test]
fn changed_ignore_rules_mean_a_whole_walk() {
    type Change = fn(&Fixture);
    let cases: [(&str, Change); 4] = [
        ("edited", |f| {
            f.write(".gitignore", "build/\n");
        }),
        ("added below", |f| {
            f.write("a/.ignore", "c/\n");
        }),
        ("repository made", |f| {
            fs::create_dir_all(f.root.join("a/.git")).unwrap();
        }),
        ("exclude added", |f| {
            f.write(".git/info/exclude", "a.b\n");
        }),
    ];
    for (what, change) in cases {
        let f = Fixture::new();
        f.write("a/c/e.rs", "e");
        let saved = stored(&walked(&f.root), long_after());
        change(&f);
        match resume(
            &f.root,
            prepare(&f.root, saved),
            &Control::new(),
            DEFAULT_MAX_FILES,
        ) {
            Resumed::Walk(why) => assert!(why.contains("ignore rules changed"), "{what}: {why}"),
            Resumed::Ready(_) => panic!("{what}: resumed despite new ignore rules"),
            Resumed::Cancelled => panic!("{what}: cancelled"),
        }
    }
}

/// A directory replaced by a file of the same name, and a file by a directory.
#[test]
fn entries_that_changed_kind_are_found() {
    let f = Fixture::new();
    f.write("one/inner.rs", "x");
    f.write("two", "a file");
    let saved = stored(&walked(&f.root), long_after());
    fs::remove_dir_all(f.root.join("one")).unwrap();
    f.write("one", "now a file");
    fs::remove_file(f.root.join("two")).unwrap();
    f.write("two/inner.rs", "now a directory");
    let again = resumed(&f.root, saved);
    assert_eq!(summary(&again), summary(&walked(&f.root)));
}

/// Bytes that passed the store's checksum but are not a list this code wrote are refused
/// with a reason, whatever they hold: cut anywhere, or with a path leading out of the root.
#[test]
fn damaged_or_foreign_lists_are_refused() {
    let f = Fixture::new();
    let index = walked(&f.root);
    let FileList::Encoded(bytes) = FileList::of(&index, long_after()) else {
        unreachable!();
    };
    for cut in 0..bytes.len() {
        assert!(decode(&bytes[..cut]).is_err(), "cut at {cut} decoded");
    }
    // The first file's path made to climb out of the root (same length, so the rest
    // still parses): `a.b` becomes `../`.
    let mut climbing = bytes.clone();
    let at = climbing
        .windows(4)
        .position(|w| w == b"\x03a.b")
        .expect("the first file's path");
    climbing[at + 1..at + 4].copy_from_slice(b"../");
    let err = decode(&climbing).err().expect("refused");
    assert!(err.to_string().contains("relative and plain"), "{err}");
}

/// Through the index itself: a whole walk is stored once it lands; an index started
/// later on the same store resumes from it (here every directory is listed again: the
/// tree is seconds old) and finds what changed in between.
#[test]
fn a_restarted_index_resumes_from_the_store() {
    use super::FileIndex;
    use crate::store::{Kind, Store};
    use crate::watch::{RootStatus, WatchEvent};
    use std::sync::Arc;

    let (_dir, root) = tree_without_ignore_files();
    let cache = tempfile::tempdir().unwrap();
    let start = || {
        let store = Arc::new(Store::new(cache.path(), None));
        let index = FileIndex::with_store(DEFAULT_MAX_FILES, Some(Arc::clone(&store)));
        index.set_roots(std::slice::from_ref(&root));
        index.apply(&WatchEvent::Status(root.clone(), RootStatus::Watching));
        let built = index
            .wait_fresh(&root, Duration::from_secs(5))
            .expect("fresh");
        (index, store, built)
    };
    let (first, store, built) = start();
    assert_eq!(built.info.resumed, None, "nothing stored yet: a walk");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !store.has(&root, Kind::Files) {
        assert!(
            std::time::Instant::now() < deadline,
            "the file list was not stored"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(first);
    fs::write(root.join("a/new.rs"), "new").unwrap();
    fs::remove_file(root.join("c/z.rs")).unwrap();
    let (_second, _, again) = start();
    assert_eq!(again.info.resumed, Some(again.dirs.len()));
    assert_eq!(summary(&again), summary(&walked(&root)));
}

/// An input the rules would read now but the stored walk did not (a server started with
/// another `HOME` names another global excludes file): a whole walk.
#[test]
fn an_input_the_stored_walk_lacked_means_a_whole_walk() {
    let f = Fixture::new();
    let mut saved = stored(&walked(&f.root), long_after());
    let gitignore = f.root.join(".gitignore");
    saved.inputs.retain(|(path, _)| *path != gitignore);
    match resume(
        &f.root,
        prepare(&f.root, saved),
        &Control::new(),
        DEFAULT_MAX_FILES,
    ) {
        Resumed::Walk(why) => assert!(why.contains(".gitignore"), "{why}"),
        _ => panic!("resumed without knowing the root's .gitignore"),
    }
}

/// Names with a newline, a byte that is not UTF-8 and a backslash survive the store, and
/// one added in a trusted directory is found.
#[test]
fn odd_names_survive_the_store() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let f = Fixture::new();
    let odd = OsStr::from_bytes(b"line\nbreak \xff back\\slash.rs");
    fs::create_dir_all(f.root.join("odd")).unwrap();
    fs::write(f.root.join("odd").join(odd), "x").unwrap();
    let saved = stored(&walked(&f.root), long_after());
    fs::write(
        f.root.join("odd").join(OsStr::from_bytes(b"new\n\xfe")),
        "y",
    )
    .unwrap();
    let again = resumed(&f.root, saved);
    assert_eq!(summary(&again), summary(&walked(&f.root)));
    assert!(again.find_file(&Path::new("odd").join(odd)).is_some());
    assert_eq!(again.info.resumed, Some(1));
}

/// A directory whose mtime was put back after a file was added (`touch -d`, `tar x`)
/// still shows the change: its change time moved, and nothing sets that back.
#[test]
fn an_mtime_put_back_does_not_hide_a_change() {
    let f = Fixture::new();
    let saved = stored(&walked(&f.root), long_after());
    let dir = f.root.join("a");
    let before = fs::metadata(&dir).unwrap().modified().unwrap();
    f.write("a/sneaked.rs", "x");
    fs::File::open(&dir).unwrap().set_modified(before).unwrap();
    assert_eq!(fs::metadata(&dir).unwrap().modified().unwrap(), before);
    let again = resumed(&f.root, saved);
    assert!(again.find_file(Path::new("a/sneaked.rs")).is_some());
    assert_eq!(summary(&again), summary(&walked(&f.root)));
}

/// Random trees changed at random while no server watched (files and directories made,
/// removed, renamed, rewritten, turned into each other, ignored ones added): the resumed
/// index is always the walk's.
#[test]
fn random_changes_resume_to_what_a_walk_finds() {
    for seed in 1..=60u64 {
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join(".gitignore"), "*.log\nskip/\n").unwrap();
        fs::create_dir(root.join(".git")).unwrap();
        let names = ["a", "b", "c", "d.rs", "e.log", "skip", "f"];
        let mut dirs = vec![root.clone()];
        for _ in 0..30 {
            let parent = dirs[next(dirs.len())].clone();
            let path = parent.join(names[next(names.len())]);
            if path.exists() {
                continue;
            }
            if next(3) == 0 {
                fs::create_dir(&path).unwrap();
                dirs.push(path);
            } else {
                fs::write(&path, "x").unwrap();
            }
        }
        let saved = stored(&walked(&root), long_after());
        for _ in 0..1 + next(6) {
            mutate(&root, &mut next);
        }
        let again = resumed(&root, saved);
        assert_eq!(summary(&again), summary(&walked(&root)), "seed {seed}");
    }
}

/// One random change below `root` (not to its ignore files).
fn mutate(root: &Path, next: &mut impl FnMut(usize) -> usize) {
    let mut entries: Vec<std::path::PathBuf> = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == ".gitignore" || name == ".git" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(path.clone());
            }
            entries.push(path);
        }
    }
    let dirs: Vec<&std::path::PathBuf> = entries.iter().filter(|p| p.is_dir()).collect();
    let new_name = format!("n{}", next(1000));
    let some_dir = match dirs.is_empty() {
        true => root.to_path_buf(),
        false => dirs[next(dirs.len())].clone(),
    };
    match (next(6), entries.is_empty()) {
        (0, _) | (_, true) => fs::write(some_dir.join(new_name + ".rs"), "new").unwrap(),
        (1, false) => {
            let victim = &entries[next(entries.len())];
            match victim.is_dir() {
                true => fs::remove_dir_all(victim).unwrap(),
                false => fs::remove_file(victim).unwrap(),
            }
        }
        (2, false) => {
            let victim = &entries[next(entries.len())];
            let to = victim.with_file_name(new_name);
            fs::rename(victim, to).unwrap();
        }
        (3, false) => {
            let victim = &entries[next(entries.len())];
            if victim.is_file() {
                fs::write(victim, "rewritten, longer").unwrap();
            }
        }
        (4, false) => {
            let victim = &entries[next(entries.len())];
            if victim.is_file() {
                fs::remove_file(victim).unwrap();
                fs::create_dir(victim).unwrap();
                fs::write(victim.join("inner.rs"), "x").unwrap();
            }
        }
        _ => fs::write(some_dir.join(new_name + ".log"), "ignored").unwrap(),
    }
}

/// The stamps the resume reads through a directory's descriptor are the numbers std's
/// `Metadata` gives (what a walk stores), for files with mtimes before the epoch, with
/// nanoseconds, far ahead, and for directories.
#[cfg(unix)]
#[test]
fn stamps_read_through_a_directory_are_those_a_walk_reads() {
    use super::resume::StatStamp;
    use super::root::{stamp_of_meta, to_nanos};
    let dir = tempfile::tempdir().unwrap();
    let epoch = SystemTime::UNIX_EPOCH;
    let times = [
        epoch + Duration::new(1_700_000_000, 123_456_789),
        epoch - Duration::new(1, 500_000_000),
        epoch + Duration::new(4_000_000_000, 1),
        epoch,
    ];
    for (n, time) in times.into_iter().enumerate() {
        let path = dir.path().join(format!("f{n}"));
        fs::write(&path, "x".repeat(n)).unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(time)
            .unwrap();
        let meta = fs::symlink_metadata(&path).unwrap();
        let stat = rustix::fs::lstat(&path).unwrap();
        let from_stat = StatStamp::of(&stat);
        let expected = (
            meta.len(),
            to_nanos(meta.modified().ok()),
            crate::platform::os::identity(&meta),
        );
        assert_eq!(from_stat.parts(), expected, "{time:?}");
    }
    let meta = fs::symlink_metadata(dir.path()).unwrap();
    let stat = rustix::fs::lstat(dir.path()).unwrap();
    assert_eq!(StatStamp::of(&stat).dir_stamp(), stamp_of_meta(&meta));
}

/// A directory replaced by a symlink (to a directory with other files) while no server
/// ran: not followed, as a walk does not follow it; a file replaced by a directory too.
#[cfg(unix)]
#[test]
fn a_directory_turned_into_a_symlink_is_not_followed() {
    let (_dir, root) = tree_without_ignore_files();
    let (_elsewhere, outside) = tree_without_ignore_files();
    let index = walked(&root);
    let saved = stored(&index, long_after());
    fs::remove_dir_all(root.join("a")).unwrap();
    std::os::unix::fs::symlink(outside.join("a"), root.join("a")).unwrap();
    fs::remove_file(root.join("c/z.rs")).unwrap();
    fs::create_dir_all(root.join("c/z.rs/inner")).unwrap();
    fs::write(root.join("c/z.rs/inner/w.rs"), "w").unwrap();
    let again = resumed(&root, saved);
    assert_eq!(summary(&again), summary(&walked(&root)));
    assert!(again.find_file(Path::new("a/x.rs")).is_none());
    assert!(again.find_file(Path::new("c/z.rs/inner/w.rs")).is_some());
}
