//! A symbol table packed in parts and merged on disk holds what the same files packed at
//! once hold: the same files and definitions, the same name-sorted table (record for
//! record), the same answers to every lookup; a checkpoint is a valid table of the files
//! so far; nothing is left behind but the published file.

use std::path::PathBuf;
use std::sync::Arc;

use super::*;
use crate::platform::os::OsStrExt;
use crate::store::mapped;
use crate::symbols::extract::Definition;
use crate::symbols::index::stored::decode;
use crate::symbols::index::table::FileSyms;
use crate::symbols::lang::{KINDS, Lang};

/// Names that repeat across files and parts, mixed case, non-ASCII ones whose lowercase
/// form differs (stored in `lowers`) and one that lowercases longer (`İ`).
const NAMES: [&str; 10] = [
    "new",
    "New",
    "get_item",
    "GetItem",
    "Ärger",
    "ärger",
    "İstanbul",
    "σΣ",
    "x",
    "Queue",
];

/// A small pseudo-random generator: the same files for a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// `n` files in path order, some with no definitions, some with containers.
fn files(seed: u64, n: usize) -> Vec<(PathBuf, FileSyms)> {
    let mut rng = Rng(seed);
    let mut files: Vec<(PathBuf, FileSyms)> = (0..n)
        .map(|i| {
            let path = PathBuf::from(format!("d{}/f{i:05}.rs", rng.next(4)));
            let defs = (0..rng.next(6))
                .map(|d| {
                    let name = NAMES[rng.next(NAMES.len())];
                    let container = (rng.next(3) == 0).then(|| Arc::from(NAMES[rng.next(4)]));
                    Definition {
                        name: name.to_string(),
                        kind: KINDS[rng.next(KINDS.len())],
                        line: 1 + d as u64 * 10,
                        end_line: 5 + d as u64 * 10,
                        name_line: 1 + d as u64 * 10,
                        signature: String::new(),
                        container,
                        depth: rng.next(3),
                    }
                })
                .collect();
            let syms = FileSyms {
                lang: Lang::Rust,
                size: i as u64,
                mtime: 7,
                ident: 9,
                defs,
            };
            (path, syms)
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

fn at_once(files: &[(PathBuf, FileSyms)]) -> Table {
    let mut packer = Packer::default();
    for (rel, syms) in files {
        assert!(packer.add(rel.as_os_str().as_bytes(), syms));
    }
    packer.finish()
}

/// Packed in parts of at most `budget` bytes, merged, published and loaded like a stored
/// table; with how many parts were spilled. `checkpoint_at`: a checkpoint after that many
/// files, checked to hold exactly them.
fn in_parts(
    files: &[(PathBuf, FileSyms)],
    budget: usize,
    checkpoint_at: Option<usize>,
) -> (Table, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let spill = Spill::new(dir.path().to_path_buf(), budget);
    let mut parts = Parts::new(Some(spill));
    let load = |mut sealed: Sealed| {
        let to = dir.path().join("symbols");
        sealed.publish(&to).expect("publishes");
        let bytes = mapped::load(&to, Kind::Symbols).expect("a valid stored file");
        decode(bytes).expect("a valid table")
    };
    for (i, (rel, syms)) in files.iter().enumerate() {
        if checkpoint_at == Some(i) {
            let so_far = load(parts.checkpoint().expect("a checkpoint"));
            assert_same(&so_far, &at_once(&files[..i]));
        }
        let added = parts.add(rel.as_os_str().as_bytes(), syms);
        assert!(added.expect("spills"));
    }
    let spilled = parts.spilled();
    let table = match parts.finish().expect("merges") {
        Finished::Memory(table) => table,
        Finished::Stored(sealed) => load(sealed),
    };
    // Nothing but the published file is left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "symbols")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    (table, spilled)
}

/// The same files, definitions, name order and lookups (offsets into the arenas differ:
/// each part keeps its own names).
fn assert_same(a: &Table, b: &Table) {
    let (ua, ub) = (a.unpack(), b.unpack());
    assert_eq!(ua.len(), ub.len());
    for ((pa, fa), (pb, fb)) in ua.iter().zip(&ub) {
        assert_eq!(pa, pb);
        assert_eq!(fa.stamp(), fb.stamp());
        assert_eq!(format!("{:?}", fa.defs), format!("{:?}", fb.defs), "{pa:?}");
    }
    assert_eq!(a.sorted(), b.sorted());
    for key in [
        "new",
        "NEW",
        "get",
        "ärg",
        "ÄRGER",
        "istanbul",
        "i̇stanbul",
        "σς",
        "q",
        "",
    ] {
        for (insensitive, prefix) in [(false, false), (true, false), (false, true), (true, true)] {
            assert_eq!(
                a.lookup(key, insensitive, prefix),
                b.lookup(key, insensitive, prefix),
                "{key:?} insensitive {insensitive} prefix {prefix}"
            );
        }
    }
}

#[test]
fn a_table_packed_in_parts_is_the_table_packed_at_once() {
    let files = files(1, 600);
    let whole = at_once(&files);
    assert!(!whole.lowers().is_empty(), "the test has lowercase forms");
    for budget in [1, 4 << 10, 16 << 10] {
        let (table, spilled) = in_parts(&files, budget, None);
        assert!(spilled > 1, "budget {budget}: {spilled} parts");
        assert_same(&table, &whole);
    }
    // Within the budget: laid out into the store directly, no part spilled.
    let (table, spilled) = in_parts(&files, 1 << 30, None);
    assert_eq!(spilled, 0);
    assert_same(&table, &whole);
}

#[test]
fn a_checkpoint_holds_the_files_so_far_and_the_build_goes_on() {
    let files = files(2, 300);
    let whole = at_once(&files);
    for (budget, at) in [(8 << 10, 150), (1 << 30, 150), (1, 1), (8 << 10, 0)] {
        let (table, _) = in_parts(&files, budget, Some(at));
        assert_same(&table, &whole);
    }
}

#[test]
fn with_nowhere_to_spill_the_table_is_packed_in_memory() {
    let files = files(3, 50);
    let mut parts = Parts::new(None);
    for (rel, syms) in &files {
        assert!(parts.add(rel.as_os_str().as_bytes(), syms).unwrap());
    }
    assert_eq!(parts.spilled(), 0);
    assert!(parts.checkpoint().is_err());
    let Ok(Finished::Memory(table)) = parts.finish() else {
        panic!("packed in memory");
    };
    assert_same(&table, &at_once(&files));
}
