//! Files a build writes in pieces inside a root's entry, so that an index larger than the
//! build's memory budget never has to be whole in memory: scratch files ([`Scratch`]) it
//! spills parts to and reads back, and a stored file written in place ([`Unsealed`]: its
//! payload by positioned writes, then checksummed by reading it back, given its header and
//! renamed over the entry's file like any other write). Only the server that writes the
//! entry spills into it ([`Spill`] comes from `publish::Stores::spill`); every file is a
//! temp file (`.NAME.PID.N.tmp`), removed when dropped, and what a killed server left is
//! removed by the entry's next writer. Builds spill only on Unix, where the stored file is
//! then used in place (elsewhere it would be read back into memory whole, so a build
//! stays in memory there).

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use super::format::{HEADER_LEN, Kind, header_of, private, rename_over, sync_dir, temp_beside};

/// An entry this server writes, where a build may put its scratch files, and how much
/// heap a build holds before it spills a part there.
#[derive(Clone, Debug)]
pub(crate) struct Spill {
    dir: PathBuf,
    budget: usize,
    /// Testing only: sealing pauses this long before the header is written.
    pause: Option<std::time::Duration>,
}

impl Spill {
    pub(crate) fn new(dir: PathBuf, budget: usize) -> Spill {
        Spill {
            dir,
            budget,
            pause: None,
        }
    }

    /// Testing only (`--test-store-write-pause`): see [`Unsealed::seal`].
    pub(crate) fn with_pause(self, pause: Option<std::time::Duration>) -> Spill {
        Spill { pause, ..self }
    }

    /// Heap one part of a build may hold (at least 1 byte: one file a part).
    pub(crate) fn budget(&self) -> usize {
        self.budget.max(1)
    }

    /// A new, empty scratch file (`what` names it in the entry).
    pub(crate) fn scratch(&self, what: &str) -> io::Result<Scratch> {
        Scratch::create(temp_beside(&self.dir.join(what)))
    }

    /// A new stored file of `kind`, its payload to be written in place.
    pub(crate) fn unsealed(&self, kind: Kind) -> io::Result<Unsealed> {
        Ok(Unsealed {
            scratch: Scratch::create(temp_beside(&super::file_in(&self.dir, kind)))?,
            kind,
            pause: self.pause,
        })
    }
}

/// A temp file read and written at offsets, or appended to; removed when dropped.
#[derive(Debug)]
pub(crate) struct Scratch {
    file: File,
    path: PathBuf,
    keep: bool,
    /// Bytes appended so far ([`Scratch::append`]).
    len: u64,
}

impl Scratch {
    fn create(path: PathBuf) -> io::Result<Scratch> {
        let file =
            private(OpenOptions::new().read(true).write(true).create_new(true)).open(&path)?;
        Ok(Scratch {
            file,
            path,
            keep: false,
            len: 0,
        })
    }

    /// Writes `bytes` after what was appended before.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_at(self.len, bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Bytes appended so far.
    pub(crate) fn appended(&self) -> u64 {
        self.len
    }

    /// Copies what was appended into `out`'s payload at `at`, a chunk at a time.
    pub(crate) fn copy_to(&self, out: &Unsealed, at: u64) -> io::Result<()> {
        let mut buf = vec![0u8; 1 << 20];
        let mut done = 0u64;
        while done < self.len {
            let n = (self.len - done).min(buf.len() as u64) as usize;
            self.read_at(done, &mut buf[..n])?;
            out.write_at(at + done, &buf[..n])?;
            done += n as u64;
        }
        Ok(())
    }

    #[cfg(unix)]
    pub(crate) fn write_at(&self, at: u64, bytes: &[u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(&self.file, bytes, at)
    }

    /// Fills `buf` from `at` (an error when the file ends first).
    #[cfg(unix)]
    pub(crate) fn read_at(&self, at: u64, buf: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, at)
    }

    #[cfg(windows)]
    pub(crate) fn write_at(&self, mut at: u64, mut bytes: &[u8]) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !bytes.is_empty() {
            match self.file.seek_write(bytes, at)? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => (bytes, at) = (&bytes[n..], at + n as u64),
            }
        }
        Ok(())
    }

    #[cfg(windows)]
    pub(crate) fn read_at(&self, mut at: u64, mut buf: &mut [u8]) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            match self.file.seek_read(buf, at)? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => (buf, at) = (&mut buf[n..], at + n as u64),
            }
        }
        Ok(())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Reads a range of a [`Scratch`] front to back, through a buffer (a spilled part's
/// section, merged by streaming).
pub(crate) struct ScratchReader<'a> {
    file: &'a Scratch,
    at: u64,
    end: u64,
    buf: Vec<u8>,
    pos: usize,
}

/// Bytes a reader reads at once.
const READ_BYTES: u64 = 64 << 10;

impl Scratch {
    /// A reader of the bytes at `range`.
    pub(crate) fn reader(&self, range: std::ops::Range<u64>) -> ScratchReader<'_> {
        ScratchReader {
            file: self,
            at: range.start,
            end: range.end.max(range.start),
            buf: Vec::new(),
            pos: 0,
        }
    }
}

/// What a reader says of a range that ends before what it was written to hold.
fn short() -> io::Error {
    io::Error::other("a build's scratch file does not read back as written")
}

impl ScratchReader<'_> {
    /// Makes at least one unread byte buffered; `false` at the range's end.
    pub(crate) fn fill(&mut self) -> io::Result<bool> {
        if self.pos < self.buf.len() {
            return Ok(true);
        }
        let n = (self.end - self.at).min(READ_BYTES) as usize;
        if n == 0 {
            return Ok(false);
        }
        self.buf.resize(n, 0);
        self.file.read_at(self.at, &mut self.buf)?;
        self.at += n as u64;
        self.pos = 0;
        Ok(true)
    }

    /// Fills `out` with the next bytes.
    pub(crate) fn read_exact(&mut self, mut out: &mut [u8]) -> io::Result<()> {
        while !out.is_empty() {
            if !self.fill()? {
                return Err(short());
            }
            let k = out.len().min(self.buf.len() - self.pos);
            out[..k].copy_from_slice(&self.buf[self.pos..self.pos + k]);
            self.pos += k;
            out = &mut out[k..];
        }
        Ok(())
    }

    /// Appends the next `n` bytes to `out`.
    pub(crate) fn take(&mut self, n: usize, out: &mut Vec<u8>) -> io::Result<()> {
        let start = out.len();
        out.resize(start + n, 0);
        self.read_exact(&mut out[start..])
    }

    /// The next little-endian u64, or `None` at the range's end.
    pub(crate) fn next_u64(&mut self) -> io::Result<Option<u64>> {
        if !self.fill()? {
            return Ok(None);
        }
        let mut bytes = [0u8; 8];
        self.read_exact(&mut bytes)?;
        Ok(Some(u64::from_le_bytes(bytes)))
    }

    pub(crate) fn u16(&mut self) -> io::Result<u16> {
        let mut bytes = [0u8; 2];
        self.read_exact(&mut bytes)?;
        Ok(u16::from_le_bytes(bytes))
    }

    pub(crate) fn u32(&mut self) -> io::Result<u32> {
        let mut bytes = [0u8; 4];
        self.read_exact(&mut bytes)?;
        Ok(u32::from_le_bytes(bytes))
    }

    /// The next offset of `width` bytes (4 or 8).
    pub(crate) fn offset(&mut self, width: usize) -> io::Result<u64> {
        match width {
            4 => self.u32().map(u64::from),
            _ => self.next_u64()?.ok_or_else(short),
        }
    }
}

/// Writes one section of an [`Unsealed`] payload front to back, through a buffer.
pub(crate) struct PayloadWriter<'a> {
    file: &'a Unsealed,
    at: u64,
    buf: Vec<u8>,
}

/// Bytes a writer gathers before it writes.
const WRITE_BYTES: usize = 256 << 10;

impl PayloadWriter<'_> {
    pub(crate) fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= WRITE_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Copies what is left of `from`.
    pub(crate) fn copy(&mut self, from: &mut ScratchReader) -> io::Result<()> {
        while from.fill()? {
            self.put(&from.buf[from.pos..])?;
            from.pos = from.buf.len();
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.write_at(self.at, &self.buf)?;
        self.at += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes what is buffered; returns where the section ends.
    pub(crate) fn done(mut self) -> io::Result<u64> {
        self.flush()?;
        Ok(self.at)
    }
}

/// A stored file of one kind being written in place: its payload by positioned writes
/// (offset 0 is the payload's first byte, after the header), then [`Unsealed::seal`].
#[derive(Debug)]
pub(crate) struct Unsealed {
    scratch: Scratch,
    kind: Kind,
    pause: Option<std::time::Duration>,
}

impl Unsealed {
    /// A writer of the payload from `at` on.
    pub(crate) fn writer(&self, at: u64) -> PayloadWriter<'_> {
        PayloadWriter {
            file: self,
            at,
            buf: Vec::new(),
        }
    }

    pub(crate) fn write_at(&self, at: u64, bytes: &[u8]) -> io::Result<()> {
        self.scratch.write_at(HEADER_LEN as u64 + at, bytes)
    }

    /// Makes the first `len` bytes of payload a stored file: sets its length (what was
    /// never written reads as zeros), checksums it by reading it back (through the page
    /// cache, not this process's memory), writes the header and syncs it.
    pub(crate) fn seal(self, len: u64) -> io::Result<Sealed> {
        let file = &self.scratch.file;
        file.set_len(HEADER_LEN as u64 + len)?;
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut at = 0u64;
        while at < len {
            let n = (len - at).min(buf.len() as u64) as usize;
            self.scratch
                .read_at(HEADER_LEN as u64 + at, &mut buf[..n])?;
            hasher.update(&buf[..n]);
            at += n as u64;
        }
        if let Some(pause) = self.pause {
            // Testing only: a server killed here leaves a temp file with no header.
            std::thread::sleep(pause);
        }
        self.scratch
            .write_at(0, &header_of(self.kind, len, hasher.digest()))?;
        file.sync_all()?;
        Ok(Sealed {
            scratch: self.scratch,
        })
    }
}

/// What a build that may spill made: its result in memory, or a stored file it wrote in
/// place (`publish::Stores::adopt` publishes it and reads it back in place).
pub(crate) enum Finished<T> {
    Memory(T),
    Stored(Sealed),
}

/// A stored file, complete, still at its temp path (removed if dropped unpublished).
#[derive(Debug)]
pub(crate) struct Sealed {
    scratch: Scratch,
}

impl Sealed {
    pub(crate) fn path(&self) -> &Path {
        self.scratch.path()
    }

    /// Renames it over `to` (the entry's file of its kind), durably; on failure it stays
    /// where it is.
    pub(crate) fn publish(&mut self, to: &Path) -> io::Result<()> {
        rename_over(&self.scratch.path, to)?;
        self.scratch.keep = true;
        sync_dir(to.parent().unwrap_or(Path::new(".")));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::format::payload;

    #[test]
    fn a_payload_written_in_pieces_is_a_stored_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spill = Spill::new(dir.path().to_path_buf(), 1);
        let out = spill.unsealed(Kind::Search).expect("unsealed");
        // Out of order, with a gap that must read as zeros.
        out.write_at(8, b"world").expect("write");
        out.write_at(0, b"hello").expect("write");
        let mut sealed = out.seal(16).expect("seal");
        let temp = sealed.path().to_path_buf();
        let to = dir.path().join("search");
        sealed.publish(&to).expect("publish");
        assert!(!temp.exists());
        let bytes = std::fs::read(&to).expect("read");
        let body = payload(&bytes, Kind::Search).expect("a valid stored file");
        assert_eq!(body, b"hello\0\0\0world\0\0\0");
    }

    #[test]
    fn scratch_files_go_when_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spill = Spill::new(dir.path().to_path_buf(), 1);
        let mut part = spill.scratch("part").expect("scratch");
        part.write_at(3, b"abc").expect("write");
        let mut back = [9u8; 6];
        part.read_at(0, &mut back).expect("read");
        assert_eq!(back, *b"\0\0\0abc");
        part.append(b"xy").expect("append");
        let out = spill.unsealed(Kind::Content).expect("unsealed");
        part.copy_to(&out, 1).expect("copy");
        let sealed = out.seal(4).expect("seal");
        let bytes = std::fs::read(sealed.path()).expect("read");
        assert_eq!(payload(&bytes, Kind::Content).expect("valid"), b"\0xy\0");
        drop(sealed);
        let path = part.path().to_path_buf();
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .ends_with(".tmp")
        );
        drop(part);
        assert!(!path.exists());
        let unsealed = spill.unsealed(Kind::Content).expect("unsealed");
        drop(unsealed);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
