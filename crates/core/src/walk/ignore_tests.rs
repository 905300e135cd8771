//! The walk's ignore rules held against the `ignore` crate's own walker on random trees
//! (the same files kept), and ignore files that are special or oversized skipped and
//! reported. Tests of `ignores` through the walk, so they live below both.

use std::fs;
use std::path::Path;

#[cfg(unix)]
use crate::ignores::*;
use crate::walk::WalkOptions;
use std::collections::BTreeSet;

/// Files a walk yields, relative to `base`.
fn yielded(walk: ignore::Walk, base: &Path) -> BTreeSet<String> {
    walk.flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| {
            e.path()
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

fn ours(start: &Path, base: &Path) -> BTreeSet<String> {
    let options = WalkOptions {
        hidden: false,
        no_ignore: false,
        types: None,
    };
    yielded(options.walker(start, None).build(), base)
}

/// The `ignore` crate's own walker with ripgrep's default filters: the reference.
fn reference(start: &Path, base: &Path) -> BTreeSet<String> {
    yielded(ignore::WalkBuilder::new(start).build(), base)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const PATTERNS: &[&str] = &[
    "*.log",
    "!keep.log",
    "c/",
    "/f1.txt",
    "f2.rs",
    "e",
    "**/d",
    "a/**/f1.txt",
    "*.txt",
    "!*.txt",
    "d/",
    "!c/",
    "/a",
    "keep.*",
    "!f2.rs",
    "#comment",
    "",
    "c/f1.txt",
    "*/e/",
];
const DIRS: &[&str] = &["", "a", "b", "a/c", "b/d", "a/c/e", "a/c/e/d"];

/// Random trees without special files: rootgrep's rules and the crate's walker agree on
/// every file, walked from the top and from directories below it (their parents' rules).
#[test]
fn agrees_with_the_ignore_walker_on_random_trees() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..150 {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let top = base.join("top");
        for dir in DIRS {
            let dir = top.join(dir);
            fs::create_dir_all(&dir).unwrap();
            for name in ["f1.txt", "f2.rs", "x.log", "keep.log"] {
                fs::write(dir.join(name), "x").unwrap();
            }
            for name in [".gitignore", ".ignore"] {
                if rng.chance(35) {
                    let lines: Vec<&str> = (0..1 + rng.next() % 3)
                        .map(|_| rng.pick(PATTERNS))
                        .collect();
                    fs::write(dir.join(name), lines.join("\n")).unwrap();
                }
            }
            if rng.chance(15) {
                fs::create_dir_all(dir.join(".git/info")).unwrap();
                if rng.chance(60) {
                    fs::write(dir.join(".git/info/exclude"), rng.pick(PATTERNS)).unwrap();
                }
            }
        }
        if rng.chance(30) {
            // Rules above the walk's start.
            fs::write(base.join(".ignore"), rng.pick(PATTERNS)).unwrap();
        }
        for start in ["", "a", "a/c", "b"] {
            let start = top.join(start);
            let want = reference(&start, &base);
            let got = ours(&start, &base);
            assert_eq!(got, want, "round {round}, from {}", start.display());
        }
    }
}

#[cfg(unix)]
#[test]
fn special_and_oversized_ignore_files_are_not_read_and_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::create_dir_all(root.join("sub")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(root.join(".gitignore"))
        .status()
        .unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink(root.join(".gitignore"), root.join("sub/.ignore")).unwrap();
    let big = "x\n".repeat(MAX_IGNORE_FILE as usize / 2 + 1);
    fs::write(root.join(".ignore"), big).unwrap();
    fs::write(root.join("sub/.gitignore"), "*.log\n").unwrap();
    for name in ["x", "a.log", "sub/a.log", "sub/b.txt"] {
        fs::write(root.join(name), "").unwrap();
    }
    let options = WalkOptions {
        hidden: false,
        no_ignore: false,
        types: None,
    };
    let walker = options.walker(&root, None);
    let files = yielded(walker.build(), &root);
    assert_eq!(
        files,
        BTreeSet::from(["a.log".into(), "sub/b.txt".into(), "x".into()])
    );
    let skipped: Vec<String> = walker
        .skipped_ignore_files()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let text = |p: &str| crate::roots::path_text(&root.join(p));
    assert_eq!(
        skipped,
        [
            format!(
                "skipped ignore file {}: a FIFO, not a regular file",
                text(".gitignore")
            ),
            format!(
                "skipped ignore file {}: 65 KiB, over the 64 KiB limit for ignore files",
                text(".ignore")
            ),
            format!(
                "skipped ignore file {}: a FIFO, not a regular file",
                text("sub/.ignore")
            ),
        ]
    );
}
