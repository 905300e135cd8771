//! Bytes an index is used from in place ([`Bytes`]): a stored file's payload mapped
//! read-only, or a buffer in memory (a fresh build, and on Windows, where a mapped file
//! could not be renamed over by the next publication). The indexes lay their tables out
//! as fixed-size records at 8-byte offsets, so a mapped table is read where it lies: its
//! pages are the page cache's (shared by every server on the root, given back under
//! pressure), not the heap's.
//!
//! Loading checks the header and the payload's checksum with ordinary reads (through the
//! page cache, so checking does not make the whole file resident in this process), then
//! maps the same open file. Store files are never written in place (a new version is a new
//! file renamed over the old), so a mapping sees one version from start to end; a file
//! another program truncates while mapped is caught by [`super::faults`] ([`Bytes::damaged`]).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use super::format::{HEADER_LEN, Kind, Refused, check_header, open_private};

/// A read-only byte buffer, 8-byte aligned at its start.
pub(crate) struct Bytes {
    inner: Inner,
}

enum Inner {
    /// In memory: `len` bytes at the start of the words.
    Owned(Vec<u64>, usize),
    /// A stored file's payload, mapped; its guard (dropped first) turns a truncation into
    /// damage instead of a crash ([`super::faults`]).
    #[cfg(unix)]
    Mapped(super::faults::Guard, memmap2::Mmap),
}

impl Bytes {
    /// `len` bytes of aligned memory, written by `fill` (an index lays itself out in
    /// place, with no second copy of its buffer).
    pub(crate) fn build(len: usize, fill: impl FnOnce(&mut [u8])) -> Bytes {
        let mut words = vec![0u64; len.div_ceil(8)];
        fill(&mut zerocopy::IntoBytes::as_mut_bytes(words.as_mut_slice())[..len]);
        Bytes {
            inner: Inner::Owned(words, len),
        }
    }

    /// `bytes` copied into aligned memory.
    pub(crate) fn owned(bytes: &[u8]) -> Bytes {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        zerocopy::IntoBytes::as_mut_bytes(words.as_mut_slice())[..bytes.len()]
            .copy_from_slice(bytes);
        Bytes {
            inner: Inner::Owned(words, bytes.len()),
        }
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        match &self.inner {
            Inner::Owned(words, len) => &zerocopy::IntoBytes::as_bytes(words.as_slice())[..*len],
            #[cfg(unix)]
            Inner::Mapped(_, map) => &map[HEADER_LEN..],
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Bytes of the heap it holds (0 when mapped).
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.inner {
            Inner::Owned(words, _) => words.capacity() * 8,
            #[cfg(unix)]
            Inner::Mapped(..) => 0,
        }
    }

    /// Whether the stored file was cut short while mapped (its lost pages read as zeros):
    /// what was read from it since may be wrong, and it must be dropped and rebuilt.
    pub(crate) fn damaged(&self) -> bool {
        match &self.inner {
            Inner::Owned(..) => false,
            #[cfg(unix)]
            Inner::Mapped(guard, _) => guard.damaged(),
        }
    }

    /// Drops this process's mapping of the pages read so far, for a mapped payload: they
    /// stay in the page cache (shared, given back under pressure) and are mapped again
    /// when read, so a build that reads a whole stored table once does not keep it in the
    /// server's resident size. Nothing for bytes in memory, or where the system does
    /// not drop them (macOS keeps the advice as a hint).
    pub(crate) fn release_resident(&self) {
        #[cfg(unix)]
        if let Inner::Mapped(_, map) = &self.inner {
            drop_pages(map);
        }
    }

    pub(crate) fn is_mapped(&self) -> bool {
        !matches!(self.inner, Inner::Owned(..))
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Bytes({} bytes, mapped: {})",
            self.len(),
            self.is_mapped()
        )
    }
}

impl Default for Bytes {
    fn default() -> Bytes {
        Bytes::owned(&[])
    }
}

/// Most bytes one stored file may have (a bigger one is refused unread).
const MAX_FILE_BYTES: u64 = 8 << 30;

/// The checked payload of the stored file of `kind` at `path`, mapped (Unix) or read
/// (elsewhere). Only a regular file is opened, never through a symlink or blocking.
pub(crate) fn load(path: &Path, kind: Kind) -> Result<Bytes, Refused> {
    load_with(path, kind, false)
}

/// [`load`], reading the payload for its checksum only when the file is not the one whose
/// checksum held last time (`checked.rs`), and remembering when it holds.
pub(crate) fn load_once_checked(path: &Path, kind: Kind) -> Result<Bytes, Refused> {
    load_with(path, kind, true)
}

fn load_with(path: &Path, kind: Kind, remembered: bool) -> Result<Bytes, Refused> {
    let mut file = match open_private(path, false) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(Refused::Missing),
        Err(err) => return Err(Refused::Io(err.to_string())),
    };
    let meta = match file.metadata() {
        Ok(meta) if !meta.is_file() || meta.len() > MAX_FILE_BYTES => {
            return Err(Refused::NotOurs);
        }
        Ok(meta) => meta,
        Err(err) => return Err(Refused::Io(err.to_string())),
    };
    let len = meta.len();
    let io = |err: io::Error| Refused::Io(err.to_string());
    let mut header = [0u8; HEADER_LEN];
    let got = read_full(&mut file, &mut header).map_err(io)?;
    let (payload_len, sum) = check_header(&header[..got], kind)?;
    if len != HEADER_LEN as u64 + payload_len {
        return Err(Refused::Truncated);
    }
    if remembered && super::checked::held_before(path, &meta, sum) {
        return in_place(file, payload_len as usize);
    }
    // The checksum, read through the page cache in pieces.
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = payload_len;
    while left > 0 {
        let want = chunk.len().min(left as usize);
        let got = read_full(&mut file, &mut chunk[..want]).map_err(io)?;
        if got < want {
            return Err(Refused::Truncated);
        }
        hasher.update(&chunk[..got]);
        left -= got as u64;
    }
    if hasher.digest() != sum {
        return Err(Refused::Checksum);
    }
    drop(chunk);
    if remembered {
        super::checked::remember(path, &meta, sum);
    }
    in_place(file, payload_len as usize)
}

/// The payload of the checked, open `file` as [`Bytes`]: mapped on Unix.
#[cfg(unix)]
#[allow(unsafe_code)]
fn in_place(file: File, payload_len: usize) -> Result<Bytes, Refused> {
    // SAFETY: the mapping is read-only and private to this process, of a regular file in
    // the user's own store, opened without following symlinks. Store files are never
    // changed in place: a new version is written to a temp file and renamed over, which
    // leaves this inode and its bytes as they are for as long as it is mapped, and
    // clearing the store unlinks (the inode lives on). A process of the same user
    // truncating this very file faults its lost pages: the guard registered below makes
    // that damage (zeros read, the table dropped), not a crash. Bytes written into it in
    // place are read as they are: tables are decoded with bounds checks, never trusted
    // as pointers, so they can make an answer wrong but not unsafe.
    let map = unsafe { memmap2::MmapOptions::new().map(&file) }
        .map_err(|err| Refused::Io(err.to_string()))?;
    if map.len() != HEADER_LEN + payload_len {
        return Err(Refused::Truncated);
    }
    match super::faults::Guard::register(map.as_ptr() as usize, map.len()) {
        Some(guard) => Ok(Bytes {
            inner: Inner::Mapped(guard, map),
        }),
        // Not guarded (no slot left): read into memory rather than risk a crash.
        None => Ok(Bytes::owned(&map[HEADER_LEN..])),
    }
}

/// Unmaps `map`'s resident pages from this process (`MADV_DONTNEED`).
#[cfg(unix)]
#[allow(unsafe_code)]
fn drop_pages(map: &memmap2::Mmap) {
    // SAFETY: the mapping is a read-only mapping of a store file, which is never
    // written in place (see `in_place`): a page dropped here reads back, when next
    // touched, the same bytes from the page cache, so a slice borrowed from it meanwhile
    // sees no change. Nothing is written through it. A file truncated by another process
    // faults as before (the guard), dropped pages or not.
    if let Err(err) = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) } {
        tracing::debug!("mapped pages kept: {err}");
    }
}

/// The payload of the checked, open `file` as [`Bytes`]: read into memory (a mapped file
/// could not be renamed over on Windows).
#[cfg(not(unix))]
fn in_place(mut file: File, payload_len: usize) -> Result<Bytes, Refused> {
    use std::io::Seek;
    file.seek(io::SeekFrom::Start(HEADER_LEN as u64))
        .map_err(|err| Refused::Io(err.to_string()))?;
    let mut bytes = vec![0u8; payload_len];
    let got = read_full(&mut file, &mut bytes).map_err(|err| Refused::Io(err.to_string()))?;
    if got < payload_len {
        return Err(Refused::Truncated);
    }
    Ok(Bytes::owned(&bytes))
}

/// Reads until `buf` is full or the end; returns how much was read.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut at = 0;
    while at < buf.len() {
        match file.read(&mut buf[at..]) {
            Ok(0) => break,
            Ok(n) => at += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::format::write;

    #[test]
    fn a_stored_payload_comes_back_in_place_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("symbols");
        let payload: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
        write(&path, Kind::Symbols, &payload).unwrap();
        let bytes = load(&path, Kind::Symbols).unwrap();
        assert_eq!(bytes.as_slice(), payload.as_slice());
        assert_eq!(bytes.as_slice().as_ptr() as usize % 8, 0);
        assert_eq!(bytes.is_mapped(), cfg!(unix));
        // Pages dropped from the mapping read back the same bytes, borrowed slice or not.
        let borrowed = bytes.as_slice();
        bytes.release_resident();
        assert_eq!(borrowed, payload.as_slice());
        Bytes::owned(b"in memory").release_resident();
        assert!(matches!(load(&path, Kind::Search), Err(Refused::OtherKind)));
        let mut whole = std::fs::read(&path).unwrap();
        whole[HEADER_LEN + 7] ^= 1;
        std::fs::write(&path, &whole).unwrap();
        assert!(matches!(load(&path, Kind::Symbols), Err(Refused::Checksum)));
        std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
        assert!(matches!(
            load(&path, Kind::Symbols),
            Err(Refused::Truncated)
        ));
        assert!(matches!(
            load(&dir.path().join("none"), Kind::Symbols),
            Err(Refused::Missing)
        ));
        let owned = Bytes::owned(b"abc");
        assert_eq!(owned.as_slice(), b"abc");
        assert_eq!(owned.as_slice().as_ptr() as usize % 8, 0);
    }
}

/// A checksum that held is not read again for the same file; any write to it (a new
/// change time) makes the next load read it again, and damage is found then.
#[cfg(all(test, unix))]
mod once_checked {
    use super::*;
    use crate::store::checked::memo_path;
    use crate::store::format::write;

    #[test]
    fn a_checksum_that_held_is_read_again_only_for_a_changed_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("content");
        let payload: Vec<u8> = (0..50_000u32).flat_map(|i| i.to_le_bytes()).collect();
        write(&path, Kind::Content, &payload).unwrap();
        assert!(!memo_path(&path).exists());
        let bytes = load_once_checked(&path, Kind::Content).unwrap();
        assert_eq!(bytes.as_slice(), payload.as_slice());
        assert!(memo_path(&path).exists(), "remembered once it held");
        drop(bytes);

        // Damaged in place (same size): the write moved its change time, so the
        // checksum is read again, and fails.
        let mut whole = std::fs::read(&path).unwrap();
        whole[HEADER_LEN + 11] ^= 1;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &whole))
            .unwrap();
        assert!(matches!(
            load_once_checked(&path, Kind::Content),
            Err(Refused::Checksum)
        ));

        // What is trusted unread: bytes changed with no trace in the metadata (the disk's
        // own damage), simulated here by remembering the damaged file's identity. It
        // loads, bounds-checked as every table is.
        let meta = std::fs::metadata(&path).unwrap();
        let sum = u64::from_le_bytes(whole[28..36].try_into().unwrap());
        crate::store::checked::remember(&path, &meta, sum);
        assert!(load_once_checked(&path, Kind::Content).is_ok());
        assert!(matches!(load(&path, Kind::Content), Err(Refused::Checksum)));
    }
}
