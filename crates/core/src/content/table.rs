//! The content table of a set of files, packed and immutable: per file its relative path,
//! the size, mtime and identity it was read at and whether its trigrams are listed; then
//! the trigram postings in blocks of consecutive files, each block its own sorted
//! dictionary (trigram → where its list of files starts), each list the block's files
//! holding the trigram as varint differences.
//!
//! Blocks keep the build's memory to one block of (trigram, file) pairs at a time, sorted
//! and packed before the next block starts; a query looks a trigram up in each block. A
//! root's full build given a place to spill (`store::scratch`) writes each packed block
//! there at once and the table straight into its stored file, so the build never holds
//! more than one block and the file records, whatever the root's size.
//!
//! A file is *listed* when its trigrams are: a text file `grep` reads as it lies. One it
//! would decode first (a byte-order mark), one with a NUL (binary: `grep` quits on it or
//! reports it), or one over [`MAX_LISTED_BYTES`] is not, and is always read.
//!
//! One buffer of sections at 8-byte offsets, the same in memory and in the store, used
//! where it lies (`store::mapped`); every read is bounds-checked.

use std::ops::Range;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::grams::{Gram, Plan};
use crate::index::Stamp;
use crate::store::mapped::Bytes;
use crate::store::scratch::{Finished, Scratch, Spill};
use crate::store::{Kind, put_var, section_header, var, var_len};

/// Files larger than this are not listed (always read): `grep` fails lines over 8 MiB,
/// which the table does not track.
pub(crate) const MAX_LISTED_BYTES: u64 = 8 << 20;

/// (trigram, file) pairs a block gathers before it is packed: 32 MiB of them.
const BLOCK_PAIRS: usize = 4 << 20;

/// One file (40 bytes).
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct FileRec {
    pub(crate) path_at: u32,
    pub(crate) path_len: u32,
    pub(crate) size: u64,
    pub(crate) mtime: u64,
    pub(crate) ident: u64,
    /// 1: its trigrams are listed.
    pub(crate) listed: u32,
    pub(crate) _pad: u32,
}

impl FileRec {
    pub(crate) fn stamp(&self) -> Stamp {
        (self.size, self.mtime, self.ident)
    }
}

/// One block of consecutive files (32 bytes).
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct BlockRec {
    pub(crate) first_file: u32,
    pub(crate) files: u32,
    pub(crate) first_key: u32,
    pub(crate) keys: u32,
    pub(crate) postings_at: u64,
    pub(crate) postings_len: u64,
}

pub(crate) const FILES: usize = 0;
pub(crate) const PATHS: usize = 1;
pub(crate) const BLOCKS: usize = 2;
pub(crate) const KEYS: usize = 3;
pub(crate) const OFFSETS: usize = 4;
pub(crate) const POSTINGS: usize = 5;
pub(crate) const SECTIONS: usize = 6;
pub(crate) const HEADER_BYTES: usize = 8 + 16 * SECTIONS;
pub(crate) const LAYOUT_VERSION: u32 = 2;

/// A packed content table (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Table {
    pub(crate) bytes: Bytes,
    pub(crate) sections: [Range<usize>; SECTIONS],
}

impl Table {
    fn section(&self, at: usize) -> &[u8] {
        (self.bytes.as_slice())
            .get(self.sections[at].clone())
            .unwrap_or_default()
    }

    pub(crate) fn files(&self) -> &[FileRec] {
        <[FileRec]>::ref_from_bytes(self.section(FILES)).unwrap_or_default()
    }

    pub(crate) fn blocks(&self) -> &[BlockRec] {
        <[BlockRec]>::ref_from_bytes(self.section(BLOCKS)).unwrap_or_default()
    }

    fn halves(&self, at: usize) -> &[u32] {
        <[u32]>::ref_from_bytes(self.section(at)).unwrap_or_default()
    }

    pub(crate) fn path(&self, file: usize) -> &[u8] {
        let Some(f) = self.files().get(file) else {
            return b"";
        };
        let at = f.path_at as usize;
        (self.section(PATHS))
            .get(at..at + f.path_len as usize)
            .unwrap_or_default()
    }

    pub(crate) fn size(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn is_mapped(&self) -> bool {
        self.bytes.is_mapped()
    }

    /// Its stored file was cut short while mapped: what it says may be zeros.
    pub(crate) fn damaged(&self) -> bool {
        self.bytes.damaged()
    }

    /// Per file: may it match `plan` (listed files whose trigrams fail it may not; every
    /// other file may). `None` when every file may.
    pub(crate) fn admitted(&self, plan: &Plan) -> Option<Vec<bool>> {
        if *plan == Plan::All {
            return None;
        }
        let files = self.files();
        let mut out: Vec<bool> = files.iter().map(|f| f.listed != 1).collect();
        for block in self.blocks() {
            let first = block.first_file as usize;
            let Some(end) = first
                .checked_add(block.files as usize)
                .filter(|e| *e <= files.len())
            else {
                continue;
            };
            match self.eval(block, plan) {
                None => out[first..end].iter_mut().for_each(|a| *a = true),
                Some(hits) => {
                    for f in hits {
                        if let Some(a) = out.get_mut(f as usize).filter(|_| (f as usize) < end) {
                            *a = true;
                        }
                    }
                }
            }
        }
        Some(out)
    }

    /// The files of `block` that satisfy `plan`, sorted (`None`: all of them).
    fn eval(&self, block: &BlockRec, plan: &Plan) -> Option<Vec<u32>> {
        match plan {
            Plan::All => None,
            Plan::Gram(g) => Some(self.list(block, *g)),
            Plan::And(parts) => {
                let mut acc: Option<Vec<u32>> = None;
                for part in parts {
                    let Some(hits) = self.eval(block, part) else {
                        continue;
                    };
                    acc = Some(match acc {
                        None => hits,
                        Some(prev) => intersect(&prev, &hits),
                    });
                    if acc.as_ref().is_some_and(Vec::is_empty) {
                        break;
                    }
                }
                acc
            }
            Plan::Or(parts) => {
                let mut acc = Vec::new();
                for part in parts {
                    let hits = self.eval(block, part)?;
                    acc = union(&acc, &hits);
                }
                Some(acc)
            }
        }
    }

    /// The files of `block` holding `gram`.
    fn list(&self, block: &BlockRec, gram: Gram) -> Vec<u32> {
        let keys = self.halves(KEYS);
        let offsets = self.halves(OFFSETS);
        let range = block.first_key as usize..block.first_key as usize + block.keys as usize;
        let (Some(keys), Some(offsets)) = (keys.get(range.clone()), offsets.get(range)) else {
            return Vec::new();
        };
        let Ok(i) = keys.binary_search(&gram) else {
            return Vec::new();
        };
        let from = offsets[i] as u64;
        let to = offsets.get(i + 1).map_or(block.postings_len, |&o| o as u64);
        let postings = self.section(POSTINGS);
        let Some(mut bytes) = (block.postings_at.checked_add(from))
            .zip(block.postings_at.checked_add(to))
            .and_then(|(a, b)| postings.get(a as usize..b as usize))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if bytes.len() == bitmap_len(block.files) {
            for (at, byte) in bytes.iter().enumerate() {
                for bit in (0..8).filter(|bit| byte & (1 << bit) != 0) {
                    out.push(block.first_file.saturating_add(at as u32 * 8 + bit));
                }
            }
            return out;
        }
        let mut file = u64::from(block.first_file);
        while let Some(delta) = var(&mut bytes) {
            file = file.saturating_add(delta);
            out.push(file.min(u64::from(u32::MAX)) as u32);
        }
        out
    }
}

/// The bytes of a block's list as a bitmap: one bit per file of the block.
fn bitmap_len(files: u32) -> usize {
    (files as usize).div_ceil(8)
}

/// Writes one trigram's list (`run`: its (trigram, file) pairs, files ascending) of a block
/// of `files` files from `first`: as varint differences, or, when those would take as many
/// bytes as a bitmap of the block or more, as that bitmap. A list is read as a bitmap
/// exactly when it is as long as one (varints are always shorter): no flag is stored. A
/// trigram in more than about one file in eight is cheaper as bits, and most postings are
/// such trigrams': the lists of the 1M-file tree take half the bytes.
fn put_list(out: &mut Vec<u8>, run: &[u64], first: u32, files: u32) {
    let file = |pair: &u64| *pair as u32 - first;
    let mut varints = 0;
    let mut prev = 0;
    for pair in run {
        varints += var_len(u64::from(file(pair) - prev));
        prev = file(pair);
    }
    if varints < bitmap_len(files) {
        let mut prev = 0;
        for pair in run {
            put_var(out, u64::from(file(pair) - prev));
            prev = file(pair);
        }
        return;
    }
    let at = out.len();
    out.resize(at + bitmap_len(files), 0);
    for pair in run {
        let f = file(pair) as usize;
        out[at + f / 8] |= 1 << (f % 8);
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    out.sort_unstable();
    out.dedup();
    out
}

/// Builds a [`Table`] file by file, in the order the files are added (the file index's
/// path order, which a query's check relies on). Each block is packed on its own (no
/// buffer grows by doubling over the whole build) and moved into the table's buffer, and
/// freed, one after the other: the build's peak is the table and one block, not twice the
/// table.
#[derive(Default)]
pub(crate) struct Builder {
    files: Vec<FileRec>,
    paths: Vec<u8>,
    blocks: Vec<BlockRec>,
    packed: Vec<Packed>,
    keys: usize,
    postings: u64,
    /// The open block's (trigram << 32 | file) pairs.
    pairs: Vec<u64>,
    block_first: u32,
    /// Where packed blocks go instead of `packed`, if anywhere.
    spill: Option<Spill>,
    /// The spilled blocks' keys, offsets and postings, and their files' records and
    /// paths, each appended in block order.
    spilled: Option<[Scratch; 5]>,
    /// Files and path bytes spilled with their blocks (`files` and `paths` hold the rest).
    spilled_files: usize,
    spilled_paths: usize,
    /// Why spilling failed (the build then fails).
    failed: Option<std::io::Error>,
}

/// What a spilling build appends to, one scratch file each.
const SPILLED: [&str; 5] = [
    "content-keys",
    "content-offsets",
    "content-postings",
    "content-files",
    "content-paths",
];

/// One block's dictionary and postings.
struct Packed {
    keys: Vec<u32>,
    offsets: Vec<u32>,
    postings: Vec<u8>,
}

impl Builder {
    /// A builder that writes its packed blocks to `spill` ([`Builder::finish_to_store`]).
    pub(crate) fn spilling(spill: Option<Spill>) -> Builder {
        Builder {
            spill,
            ..Builder::default()
        }
    }

    /// Adds a file read at `stamp`; `grams`: its distinct trigrams when listed.
    pub(crate) fn add(&mut self, rel: &[u8], stamp: Stamp, grams: Option<&[Gram]>) {
        let file = self.len() as u32;
        self.files.push(FileRec {
            path_at: (self.spilled_paths + self.paths.len()) as u32,
            path_len: rel.len() as u32,
            size: stamp.0,
            mtime: stamp.1,
            ident: stamp.2,
            listed: u32::from(grams.is_some()),
            _pad: 0,
        });
        self.paths.extend_from_slice(rel);
        if let Some(grams) = grams {
            let at = u64::from(file);
            self.pairs
                .extend(grams.iter().map(|&g| u64::from(g) << 32 | at));
        }
        if self.pairs.len() >= BLOCK_PAIRS {
            self.close_block();
        }
    }

    /// Files added so far.
    pub(crate) fn len(&self) -> usize {
        self.spilled_files + self.files.len()
    }

    fn close_block(&mut self) {
        let end = self.len() as u32;
        if end == self.block_first {
            return;
        }
        self.pairs.sort_unstable();
        let mut block = Packed {
            keys: Vec::new(),
            offsets: Vec::new(),
            postings: Vec::with_capacity(self.pairs.len() + self.pairs.len() / 4),
        };
        let files = end - self.block_first;
        for run in self.pairs.chunk_by(|a, b| a >> 32 == b >> 32) {
            block.keys.push((run[0] >> 32) as u32);
            block.offsets.push(block.postings.len() as u32);
            put_list(&mut block.postings, run, self.block_first, files);
        }
        block.keys.shrink_to_fit();
        block.offsets.shrink_to_fit();
        block.postings.shrink_to_fit();
        self.blocks.push(BlockRec {
            first_file: self.block_first,
            files: end - self.block_first,
            first_key: self.keys as u32,
            keys: block.keys.len() as u32,
            postings_at: self.postings,
            postings_len: block.postings.len() as u64,
        });
        self.keys += block.keys.len();
        self.postings += block.postings.len() as u64;
        match &self.spill {
            Some(spill) => {
                if let Err(err) = self.spill_block(spill.clone(), &block) {
                    self.failed.get_or_insert(err);
                }
            }
            None => self.packed.push(block),
        }
        self.pairs.clear();
        self.block_first = end;
    }

    /// Appends a packed block, and the records and paths of the files it covers, to the
    /// scratch files (made at the first block): what a build holds stays one block's,
    /// whatever the root's size.
    fn spill_block(&mut self, spill: Spill, block: &Packed) -> std::io::Result<()> {
        if self.failed.is_some() {
            return Ok(());
        }
        if self.spilled.is_none() {
            let mut files = Vec::new();
            for what in SPILLED {
                files.push(spill.scratch(what)?);
            }
            self.spilled = files.try_into().ok();
        }
        let Some([keys, offsets, postings, files, paths]) = &mut self.spilled else {
            return Ok(());
        };
        keys.append(block.keys.as_bytes())?;
        offsets.append(block.offsets.as_bytes())?;
        postings.append(&block.postings)?;
        files.append(self.files.as_bytes())?;
        paths.append(&self.paths)?;
        self.spilled_files += self.files.len();
        self.spilled_paths += self.paths.len();
        self.files.clear();
        self.paths.clear();
        Ok(())
    }

    /// The sections' places: (range of each, the whole length).
    fn layout(&self) -> ([Range<usize>; SECTIONS], usize) {
        let lens = [
            self.len() * size_of::<FileRec>(),
            self.spilled_paths + self.paths.len(),
            self.blocks.as_bytes().len(),
            self.keys * 4,
            self.keys * 4,
            self.postings as usize,
        ];
        let mut ranges: [Range<usize>; SECTIONS] = Default::default();
        let mut at = HEADER_BYTES;
        for (range, len) in ranges.iter_mut().zip(lens) {
            *range = at..at + len;
            at = (at + len).next_multiple_of(8);
        }
        (ranges, at)
    }

    /// The table, in memory (a builder that spilled nothing: see
    /// [`Builder::finish_to_store`]).
    pub(crate) fn finish(mut self) -> Table {
        self.close_block();
        self.pairs = Vec::new();
        debug_assert!(
            self.spilled.is_none(),
            "a spilled table finishes to the store"
        );
        let (ranges, at) = self.layout();
        let Builder {
            files,
            paths,
            blocks,
            packed,
            ..
        } = self;
        let bytes = Bytes::build(at, |buf| {
            buf[..HEADER_BYTES].copy_from_slice(&section_header(LAYOUT_VERSION, &ranges));
            buf[ranges[FILES].clone()].copy_from_slice(files.as_bytes());
            buf[ranges[PATHS].clone()].copy_from_slice(&paths);
            buf[ranges[BLOCKS].clone()].copy_from_slice(blocks.as_bytes());
            let (mut key, mut posting) = (0, 0);
            // Each block moved in and freed before the next.
            for block in packed {
                let n = block.keys.len() * 4;
                let at = ranges[KEYS].start + key;
                buf[at..at + n].copy_from_slice(block.keys.as_bytes());
                let at = ranges[OFFSETS].start + key;
                buf[at..at + n].copy_from_slice(block.offsets.as_bytes());
                let at = ranges[POSTINGS].start + posting;
                buf[at..at + block.postings.len()].copy_from_slice(&block.postings);
                key += n;
                posting += block.postings.len();
            }
        });
        Table {
            bytes,
            sections: ranges,
        }
    }

    /// The table: in memory when no block was spilled, else written into a stored file
    /// (the file records from memory, the blocks copied from their scratch files).
    pub(crate) fn finish_to_store(mut self) -> std::io::Result<Finished<Table>> {
        if self.spilled.is_none() {
            // One block in all: it stays in memory, like a small root's table.
            self.spill = None;
        }
        self.close_block();
        self.pairs = Vec::new();
        if let Some(err) = self.failed.take() {
            return Err(err);
        }
        let (Some(spill), Some(spilled)) = (self.spill.take(), self.spilled.take()) else {
            return Ok(Finished::Memory(self.finish()));
        };
        let (ranges, at) = self.layout();
        let out = spill.unsealed(Kind::Content)?;
        out.write_at(0, &section_header(LAYOUT_VERSION, &ranges))?;
        let at_of = |section: usize| ranges[section].start as u64;
        for (scratch, section) in spilled.iter().zip([KEYS, OFFSETS, POSTINGS, FILES, PATHS]) {
            scratch.copy_to(&out, at_of(section))?;
        }
        // The last block took the last files with it (a block that closes empty has none).
        debug_assert!(self.files.is_empty() && self.paths.is_empty());
        out.write_at(at_of(BLOCKS), self.blocks.as_bytes())?;
        drop(spilled);
        Ok(Finished::Stored(out.seal(at as u64)?))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::content::grams::{GramSet, plan};

    pub(crate) fn table_of(texts: &[(&str, Option<&str>)]) -> Table {
        let mut set = GramSet::new();
        let mut builder = Builder::default();
        for (i, (path, text)) in texts.iter().enumerate() {
            let grams = text.map(|t| set.of(t.as_bytes()).to_vec());
            builder.add(path.as_bytes(), (i as u64, 0, 0), grams.as_deref());
        }
        builder.finish()
    }

    fn admitted(table: &Table, pattern: &str) -> Vec<bool> {
        let n = table.files().len();
        table
            .admitted(&plan(pattern, false, false))
            .unwrap_or(vec![true; n])
    }

    #[test]
    fn only_files_that_may_match_are_admitted() {
        let table = table_of(&[
            ("a.rs", Some("fn reset_timer() {}")),
            ("b.rs", Some("fn other() {}")),
            ("c.bin", None),
            ("d.rs", Some("RESET_TIMER twice")),
        ]);
        assert_eq!(table.path(2), b"c.bin");
        assert_eq!(admitted(&table, "reset_timer"), [true, false, true, true]);
        assert_eq!(admitted(&table, "other|twice"), [false, true, true, true]);
        assert_eq!(admitted(&table, "nowhere"), [false, false, true, false]);
        assert_eq!(admitted(&table, "o"), [true; 4]);
    }

    /// A trigram in most files of a block is stored as a bitmap of the block, a rare one
    /// as varints; both read back as the files that hold them, at a block's odd edges too.
    #[test]
    fn common_trigrams_are_bitmaps_and_read_back_the_same() {
        for files in [1usize, 7, 8, 9, 64, 1000] {
            let texts: Vec<(String, String)> = (0..files)
                .map(|i| {
                    let mut text = String::from("common ");
                    if i % 3 == 0 {
                        text.push_str("third ");
                    }
                    if i == files - 1 {
                        text.push_str("zqx");
                    }
                    (format!("f{i}"), text)
                })
                .collect();
            let refs: Vec<(&str, Option<&str>)> = (texts.iter())
                .map(|(p, t)| (p.as_str(), Some(t.as_str())))
                .collect();
            let table = table_of(&refs);
            let block = &table.blocks()[0];
            let gram = |g: &[u8]| u32::from(g[0]) << 16 | u32::from(g[1]) << 8 | u32::from(g[2]);
            let all: Vec<u32> = (0..files as u32).collect();
            assert_eq!(table.list(block, gram(b"com")), all, "{files} files");
            let thirds: Vec<u32> = (0..files as u32).filter(|i| i % 3 == 0).collect();
            assert_eq!(table.list(block, gram(b"thi")), thirds, "{files} files");
            assert_eq!(table.list(block, gram(b"zqx")), [files as u32 - 1]);
            assert_eq!(table.list(block, gram(b"qqq")), Vec::<u32>::new());
            if files >= 64 {
                let offsets = table.halves(OFFSETS);
                let keys = table.halves(KEYS);
                let i = keys.binary_search(&gram(b"com")).expect("indexed");
                let len = offsets
                    .get(i + 1)
                    .map_or(block.postings_len, |&o| u64::from(o))
                    - u64::from(offsets[i]);
                assert_eq!(len as usize, bitmap_len(files as u32), "a bitmap");
            }
        }
    }

    #[test]
    fn a_spilled_table_is_stored_byte_for_byte_as_built_in_memory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut set = GramSet::new();
        let text: String = (0..20_000).map(|i| format!("w{i} ")).collect();
        let grams = set.of(text.as_bytes()).to_vec();
        let mut memory = Builder::default();
        let spill = Spill::new(dir.path().to_path_buf(), 1);
        let mut spilling = Builder::spilling(Some(spill.clone()));
        let mut n = 0;
        while memory.blocks.len() < 3 {
            let name = format!("f{n}");
            let listed = (n % 3 != 0).then_some(grams.as_slice());
            memory.add(name.as_bytes(), (n, 1, 2), listed);
            spilling.add(name.as_bytes(), (n, 1, 2), listed);
            n += 1;
        }
        for builder in [&mut memory, &mut spilling] {
            builder.add(b"last", (0, 0, 0), Some(set.of(b"only here")));
        }
        let table = memory.finish();
        let Ok(Finished::Stored(sealed)) = spilling.finish_to_store() else {
            panic!("stored");
        };
        let stored = crate::store::mapped::load(sealed.path(), Kind::Content).expect("valid");
        assert!(stored.as_slice() == table.bytes.as_slice());
        // Only the stored file is left; a small build stays in memory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut small = Builder::spilling(Some(spill));
        small.add(b"a", (0, 0, 0), Some(set.of(b"tiny")));
        assert!(matches!(small.finish_to_store(), Ok(Finished::Memory(_))));
    }

    #[test]
    fn blocks_split_large_builds_and_answer_alike() {
        let mut set = GramSet::new();
        let mut builder = Builder::default();
        let text: String = (0..20_000).map(|i| format!("w{i} ")).collect();
        let grams = set.of(text.as_bytes()).to_vec();
        let mut n = 0;
        while builder.blocks.len() < 2 {
            builder.add(format!("f{n}").as_bytes(), (0, 0, 0), Some(&grams));
            n += 1;
        }
        builder.add(b"last", (0, 0, 0), Some(set.of(b"only here")));
        let table = builder.finish();
        assert_eq!(table.blocks().len(), 3);
        let hits = admitted(&table, "w19999 ");
        assert_eq!(hits.iter().filter(|h| **h).count(), n);
        assert!(!hits[n]);
        assert_eq!(
            admitted(&table, "only here").iter().filter(|h| **h).count(),
            1
        );
    }
}
