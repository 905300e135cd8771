//! A base built in parts and merged on disk holds what the same files built in memory hold:
//! the same dictionaries and postings byte for byte, the same files, the same documents
//! (names compared as text: each part keeps its own names), the same ranking.

use super::*;
use crate::ranked::docs::file_docs;
use crate::ranked::score::{Part as Scored, top};
use crate::ranked::segment::FileState;
use crate::ranked::segment::tests::def;
use crate::ranked::terms::parse_query;
use crate::store::mapped;

const WORDS: [&str; 12] = [
    "timer", "reset", "queue", "flush", "lock", "page", "cache", "read", "write", "sched", "irq",
    "dma",
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

/// `n` files: sources with definitions, text files, skipped ones; some words in paths only.
fn files(seed: u64, n: usize) -> Vec<(String, FileState, Vec<crate::ranked::docs::Doc>)> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let dir = WORDS[rng.next(WORDS.len())];
            let path = format!("{dir}/pathonly{}/f{i}.rs", rng.next(3));
            if rng.next(7) == 0 {
                return (path, FileState::Skipped, Vec::new());
            }
            let mut text = String::new();
            let mut defs = Vec::new();
            for f in 0..1 + rng.next(4) {
                let name = format!("{}_{}", WORDS[rng.next(12)], WORDS[rng.next(12)]);
                let start = text.lines().count() as u64 + 1;
                text.push_str(&format!("fn {name}() {{\n"));
                for _ in 0..rng.next(5) {
                    let line: Vec<&str> =
                        (0..1 + rng.next(20)).map(|_| WORDS[rng.next(12)]).collect();
                    text.push_str(&format!("    {}; // {}\n", line.join(" "), f));
                }
                text.push_str("}\n");
                let end = text.lines().count() as u64;
                defs.push(def(&name, start, end));
            }
            (path, FileState::Indexed, file_docs(&text, &defs, false))
        })
        .collect()
}

fn in_memory(files: &[(String, FileState, Vec<crate::ranked::docs::Doc>)]) -> Segment {
    let mut b = Builder::default();
    for (i, (path, state, docs)) in files.iter().enumerate() {
        b.add(path.as_bytes(), (i as u64, 7, 9), 0, *state, docs);
    }
    b.finish()
}

/// Built in parts of at most `budget` bytes, merged, published and loaded like a stored
/// base; and how many parts it took.
fn in_parts(
    files: &[(String, FileState, Vec<crate::ranked::docs::Doc>)],
    budget: usize,
) -> (Segment, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let spill = Spill::new(dir.path().to_path_buf(), budget);
    let mut parts = Parts::new(Some(spill));
    for (i, (path, state, docs)) in files.iter().enumerate() {
        parts
            .builder()
            .add(path.as_bytes(), (i as u64, 7, 9), 0, *state, docs);
        parts.spill_if_full().expect("spills");
    }
    let spilled = parts.spilled();
    let seg = match parts.finish().expect("merges") {
        Finished::Memory(seg) => seg,
        Finished::Stored(mut sealed) => {
            let to = dir.path().join("search");
            sealed.publish(&to).expect("publishes");
            let bytes = mapped::load(&to, Kind::Search).expect("a valid stored file");
            crate::ranked::stored::decode(bytes).expect("a valid segment")
        }
    };
    // Nothing but the published file is left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "search")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    (seg, spilled)
}

fn assert_same(a: &Segment, b: &Segment) {
    for section in [
        FILES,
        PATHS,
        TERMS,
        DFS,
        OFFSETS,
        POSTINGS,
        PATH_TERMS,
        PATH_OFFSETS,
        PATH_POSTINGS,
    ] {
        assert!(
            a.section(section) == b.section(section),
            "section {section}"
        );
    }
    assert_eq!(a.docs().len(), b.docs().len());
    for (x, y) in a.docs().iter().zip(b.docs()) {
        assert_eq!(
            (x.file, x.line, x.end_line, x.kind, x.lens),
            (y.file, y.line, y.end_line, y.kind, y.lens)
        );
        assert_eq!(a.name(x), b.name(y));
        assert_eq!(a.container(x), b.container(y));
    }
    let scored = |seg: &Segment, q: &str| {
        let n = seg.files().len();
        let part = Scored {
            seg,
            live: vec![true; n],
            files: vec![true; n],
            kinds: &[],
        };
        top(&[part], &parse_query(q), 20)
            .0
            .into_iter()
            .map(|s| (s.doc, s.score.to_bits()))
            .collect::<Vec<_>>()
    };
    for q in [
        "timer reset",
        "pathonly1 queue",
        "dma irq lock flush",
        "absent",
    ] {
        assert_eq!(scored(a, q), scored(b, q), "{q}");
    }
}

#[test]
fn a_base_merged_from_parts_is_the_base_built_in_memory() {
    let mut several = false;
    for (seed, n) in [(1, 200), (2, 57), (3, 1), (5, 400)] {
        let files = files(seed, n);
        let whole = in_memory(&files);
        // One file a part, a few files a part, and everything in one part (never spilled).
        for budget in [1, 40_000, usize::MAX] {
            let (merged, spilled) = in_parts(&files, budget);
            if budget == 1 {
                assert_eq!(spilled, n, "every file its own part");
            }
            if budget == usize::MAX {
                assert_eq!(spilled, 0);
            }
            several |= budget == 40_000 && spilled > 1;
            // Spilled parts end in the stored file, used in place (Windows reads stored
            // files into memory); else the one part stays in memory.
            let in_place = cfg!(unix) && spilled > 0;
            assert_eq!(merged.is_mapped(), in_place, "seed {seed} budget {budget}");
            assert_same(&whole, &merged);
        }
    }
    assert!(several, "some build took several parts of several files");
}

#[test]
fn without_a_place_to_spill_the_base_is_built_in_memory() {
    let files = files(4, 30);
    let mut parts = Parts::new(None);
    for (i, (path, state, docs)) in files.iter().enumerate() {
        parts
            .builder()
            .add(path.as_bytes(), (i as u64, 7, 9), 0, *state, docs);
        parts.spill_if_full().expect("never spills");
    }
    assert_eq!(parts.spilled(), 0);
    let Ok(Finished::Memory(seg)) = parts.finish() else {
        panic!("built in memory");
    };
    assert_same(&in_memory(&files), &seg);
}
