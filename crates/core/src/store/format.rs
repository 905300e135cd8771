//! One stored file: a fixed header (what it is, which format and machine wrote it, how long
//! its payload is and the payload's checksum), then the payload. Written atomically (a
//! temp file beside it, fsynced, renamed over, the directory fsynced), so a reader sees
//! the old file or the new one, never a mix; a file cut short by a crash, changed by
//! anything else, written by another format version or another kind of machine is
//! refused with the reason, and the caller rebuilds.
//!
//! Header (40 bytes, little-endian): magic `rootgrep`, format version (u32), kind (4
//! bytes), machine tag (u32: OS and pointer width; paths and file identities differ
//! between systems), payload length (u64), XXH3-64 of the payload (u64), 4 reserved bytes.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Bumped whenever any stored layout changes: older files are then discarded.
pub(crate) const FORMAT_VERSION: u32 = 2;

const MAGIC: &[u8; 8] = b"rootgrep";
pub(crate) const HEADER_LEN: usize = 40;

/// What a stored file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The entry's description: the root's path and identity.
    Root,
    /// One root's symbol table.
    Symbols,
    /// One root's search index (its base segment).
    Search,
    /// One root's content index (the trigrams of its files, for `grep`).
    Content,
    /// One root's git history as `search` reads it.
    History,
    /// One root's file list, with each directory's stamp (`index::stored`).
    Files,
}

impl Kind {
    /// Every kind, the entry's description first.
    pub(crate) const ALL: [Kind; 6] = [
        Kind::Root,
        Kind::Symbols,
        Kind::Search,
        Kind::Content,
        Kind::History,
        Kind::Files,
    ];

    /// The name of its file in a root's entry.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Kind::Root => "root",
            Kind::Symbols => "symbols",
            Kind::Search => "search",
            Kind::Content => "content",
            Kind::History => "history",
            Kind::Files => "files",
        }
    }

    fn tag(self) -> [u8; 4] {
        match self {
            Kind::Root => *b"ROOT",
            Kind::Symbols => *b"SYMS",
            Kind::Search => *b"SRCH",
            Kind::Content => *b"GRAM",
            Kind::History => *b"HIST",
            Kind::Files => *b"FILE",
        }
    }
}

/// The machine tag: files are only read back on the same kind of system (OS, pointer width
/// and byte order: tables are used in place, in the machine's own layout).
fn machine() -> u32 {
    let os: u32 = match std::env::consts::OS {
        "linux" => 1,
        "macos" => 2,
        "windows" => 3,
        _ => 15,
    };
    let big_endian = u32::from(cfg!(target_endian = "big"));
    big_endian << 16 | os << 8 | (usize::BITS)
}

/// Why a stored file is not used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    Missing,
    /// Unreadable (the OS's reason).
    Io(String),
    Truncated,
    NotOurs,
    Version(u32),
    OtherKind,
    OtherMachine,
    Checksum,
    /// The payload did not decode (the decoder's reason).
    Invalid(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Missing => write!(f, "not stored"),
            Refused::Io(why) => write!(f, "unreadable: {why}"),
            Refused::Truncated => write!(f, "truncated"),
            Refused::NotOurs => write!(f, "not a rootgrep store file"),
            Refused::Version(v) => {
                write!(
                    f,
                    "format version {v}, this rootgrep reads {FORMAT_VERSION}"
                )
            }
            Refused::OtherKind => write!(f, "holds something else"),
            Refused::OtherMachine => write!(f, "written on another kind of system"),
            Refused::Checksum => write!(f, "checksum mismatch (damaged)"),
            Refused::Invalid(why) => write!(f, "invalid content: {why}"),
        }
    }
}

/// Reads a varint (7 bits a byte, low first, high bit: more follow) off the front of
/// `bytes`; `None` when it runs out or is longer than 64 bits.
pub(crate) fn var(bytes: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The header every index's buffer opens with: its layout version (u32, then 4 bytes of
/// padding), then each section's offset and length (u64 each), in section order.
pub(crate) fn section_header(version: u32, ranges: &[std::ops::Range<usize>]) -> Vec<u8> {
    let mut head = vec![0u8; 8];
    head[..4].copy_from_slice(&version.to_le_bytes());
    for range in ranges {
        head.extend_from_slice(&(range.start as u64).to_le_bytes());
        head.extend_from_slice(&(range.len() as u64).to_le_bytes());
    }
    head
}

/// Appends `v` as a varint (see [`var`]).
pub(crate) fn put_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The bytes [`put_var`] takes for `v`.
pub(crate) fn var_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends `bytes` with their length as a varint before them ([`Reader::var_blob`]).
pub(crate) fn put_blob(out: &mut Vec<u8>, bytes: &[u8]) {
    put_var(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// The header for `payload` as `kind`.
fn header(kind: Kind, payload: &[u8]) -> [u8; HEADER_LEN] {
    header_of(kind, payload.len() as u64, checksum(payload))
}

/// The header of a payload of `len` bytes whose checksum is `sum`, as `kind`.
pub(crate) fn header_of(kind: Kind, len: u64, sum: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&kind.tag());
    h[16..20].copy_from_slice(&machine().to_le_bytes());
    h[20..28].copy_from_slice(&len.to_le_bytes());
    h[28..36].copy_from_slice(&sum.to_le_bytes());
    h
}

/// Checks a stored file's header (its first [`HEADER_LEN`] bytes, or fewer when the file
/// is that short) for `kind`; returns the payload's length and checksum.
pub(crate) fn check_header(head: &[u8], kind: Kind) -> Result<(u64, u64), Refused> {
    if head.len() < HEADER_LEN {
        return Err(if MAGIC.starts_with(&head[..head.len().min(8)]) {
            Refused::Truncated
        } else {
            Refused::NotOurs
        });
    }
    let u32_at = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().unwrap_or_default());
    let u64_at = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap_or_default());
    if &head[0..8] != MAGIC {
        return Err(Refused::NotOurs);
    }
    if u32_at(8) != FORMAT_VERSION {
        return Err(Refused::Version(u32_at(8)));
    }
    if head[12..16] != kind.tag() {
        return Err(Refused::OtherKind);
    }
    if u32_at(16) != machine() {
        return Err(Refused::OtherMachine);
    }
    Ok((u64_at(20), u64_at(28)))
}

/// Checks `bytes` (a whole stored file) and returns its payload.
pub(crate) fn payload(bytes: &[u8], kind: Kind) -> Result<&[u8], Refused> {
    let (len, sum) = check_header(&bytes[..bytes.len().min(HEADER_LEN)], kind)?;
    let body = &bytes[HEADER_LEN..];
    if len != body.len() as u64 {
        return Err(Refused::Truncated);
    }
    if sum != checksum(body) {
        return Err(Refused::Checksum);
    }
    Ok(body)
}

/// Most bytes one stored file may have (a bigger one is refused unread).
const MAX_FILE_BYTES: u64 = 4 << 30;

/// Reads the stored file at `path` (the whole file: stored files are read once, at start).
/// Only a regular file is read, never through a symlink, never blocking on a FIFO or
/// reading a device without end.
pub(crate) fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, Refused> {
    use std::io::Read;
    let file = match open_private(path, false) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(Refused::Missing),
        Err(err) => return Err(Refused::Io(err.to_string())),
    };
    let len = match file.metadata() {
        Ok(meta) if !meta.is_file() => return Err(Refused::NotOurs),
        Ok(meta) if meta.len() > MAX_FILE_BYTES => return Err(Refused::NotOurs),
        Ok(meta) => meta.len(),
        Err(err) => return Err(Refused::Io(err.to_string())),
    };
    let mut bytes = Vec::with_capacity(len as usize);
    if let Err(err) = file.take(len).read_to_end(&mut bytes) {
        return Err(Refused::Io(err.to_string()));
    }
    payload(&bytes, kind)?;
    bytes.drain(..HEADER_LEN);
    Ok(bytes)
}

/// Writes `payload` as `kind` to `path` atomically: a temp file in the same directory
/// (0600), fsynced, renamed over `path`, the directory fsynced. On any failure (a full
/// disk, a read-only directory) the temp file is removed and `path` is untouched.
pub(crate) fn write(path: &Path, kind: Kind, payload: &[u8]) -> io::Result<()> {
    write_paused(path, kind, payload, None)
}

/// [`write`], stopping halfway through the temp file for `pause` (testing only).
pub(crate) fn write_paused(
    path: &Path,
    kind: Kind,
    payload: &[u8],
    pause: Option<std::time::Duration>,
) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = temp_beside(path);
    let result = (|| {
        let mut file = create_private(&temp)?;
        file.write_all(&header(kind, payload))?;
        let (first, second) = payload.split_at(payload.len() / 2);
        file.write_all(first)?;
        if let Some(pause) = pause {
            file.flush()?;
            std::thread::sleep(pause);
        }
        file.write_all(second)?;
        file.sync_all()?;
        drop(file);
        rename_over(&temp, path)?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// A temp file's path beside `path`: `.NAME.PID.N.tmp`, unique in this process too (the
/// symbol and search indexes may write the same file, the entry's description, at once,
/// and must not share a temp file); a new writer removes other processes' temps.
pub(crate) fn temp_beside(path: &Path) -> std::path::PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

/// A new file only this user can read and write (0600 on Unix), replacing a stale temp
/// file of the same name (never writing through a symlink).
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    open_private(path, true)
}

/// `options` for a store file: on Unix 0600 when created, `O_NOFOLLOW` (a symlink planted
/// in an entry is refused, not followed) and `O_NONBLOCK` (a FIFO cannot hang the open).
pub(crate) fn private(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(
            (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
        );
    }
    options
}

/// Opens a store file to read it, or (`write`) creates or truncates it, as [`private`]
/// says.
pub(crate) fn open_private(path: &Path, write: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    if write {
        options.write(true).create(true).truncate(true);
    } else {
        options.read(true);
    }
    let file = private(&mut options).open(path)?;
    if write && !file.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(file)
}

/// `rename`, retried briefly on Windows, where a reader holding the old file open makes
/// the rename fail for as long as it reads.
pub(crate) fn rename_over(from: &Path, to: &Path) -> io::Result<()> {
    let mut tries = 0;
    loop {
        match std::fs::rename(from, to) {
            Err(err) if cfg!(windows) && tries < 50 => {
                tracing::debug!("store rename retried: {err}");
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Makes a rename durable (Unix: fsync the directory; elsewhere the rename is).
pub(crate) fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Little-endian writing and bounds-checked reading of a payload.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) bytes: Vec<u8>,
}

impl Writer {
    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// A length-prefixed byte string.
    pub(crate) fn blob(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.bytes.extend_from_slice(v);
    }
}

/// Reads a payload front to back; every read past the end is an error, never a panic.
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { rest: bytes }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Refused> {
        if self.rest.len() < n {
            return Err(Refused::Invalid("shorter than its counts say".into()));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }
    pub(crate) fn u64(&mut self) -> Result<u64, Refused> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }
    /// A count of items of `size` bytes each that must still fit in what is left (so a
    /// damaged count cannot make the decoder allocate gigabytes).
    pub(crate) fn count(&mut self, size: usize) -> Result<usize, Refused> {
        let n = self.u64()?;
        match usize::try_from(n) {
            Ok(n) if n.saturating_mul(size.max(1)) <= self.rest.len() => Ok(n),
            _ => Err(Refused::Invalid(format!("a count of {n} does not fit"))),
        }
    }
    pub(crate) fn blob(&mut self) -> Result<&'a [u8], Refused> {
        let n = self.count(1)?;
        self.take(n)
    }
    /// A varint (see [`var`]).
    pub(crate) fn var(&mut self) -> Result<u64, Refused> {
        var(&mut self.rest).ok_or_else(|| Refused::Invalid("a varint cut short".into()))
    }
    /// Like [`Reader::count`], written as a varint.
    pub(crate) fn var_count(&mut self, size: usize) -> Result<usize, Refused> {
        let n = self.var()?;
        match usize::try_from(n) {
            Ok(n) if n.saturating_mul(size.max(1)) <= self.rest.len() => Ok(n),
            _ => Err(Refused::Invalid(format!("a count of {n} does not fit"))),
        }
    }
    /// A byte string written by [`put_blob`].
    pub(crate) fn var_blob(&mut self) -> Result<&'a [u8], Refused> {
        let n = self.var_count(1)?;
        self.take(n)
    }
    pub(crate) fn is_done(&self) -> bool {
        self.rest.is_empty()
    }
}
