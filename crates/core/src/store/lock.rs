//! The writer lock of one store entry: at most one server per root writes its files. The
//! lock is the operating system's (Unix: `flock` on `writer.lock`; Windows: the file held
//! open without write sharing), so it goes away with its process however that ends
//! (`kill -9` included) and the next server takes it over; the file also holds the
//! writer's pid, which `rootgrep cache` shows. Where the file system has no locks (some
//! network mounts) every server writes: each write is atomic, so that costs work, never
//! correctness.
//!
//! Within one server the lock is shared: every index of a root (the symbol table, the
//! search index) writes through the same lock, taken once per [`Store`](super::Store)
//! ([`Held`]; a second `flock` of the file would refuse it); it is released when the last
//! holder drops it.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// Held while this server is the entry's writer (the last one dropped: released).
#[derive(Debug, Clone)]
pub(crate) struct WriterLock {
    _file: Arc<File>,
}

/// The locks one server holds, by lock file path (shared by its store's clones).
pub(crate) type Held = Arc<Mutex<HashMap<PathBuf, Weak<File>>>>;

/// Who writes an entry.
#[derive(Debug)]
pub(crate) enum Writer {
    /// This server (the lock is held).
    Me(WriterLock),
    /// Another live server, with its pid when it could be read.
    Other(Option<u32>),
}

/// Takes the lock at `path` if no live process holds it (this one included: then it is
/// shared).
pub(crate) fn try_lock(path: &Path, held: &Held) -> io::Result<Writer> {
    let mut held = crate::mutex::lock(held);
    held.retain(|_, lock| lock.strong_count() > 0);
    if let Some(file) = held.get(path).and_then(Weak::upgrade) {
        return Ok(Writer::Me(WriterLock { _file: file }));
    }
    match open_exclusive(path)? {
        Some(mut file) => {
            file.set_len(0)?;
            file.seek(io::SeekFrom::Start(0))?;
            file.write_all(std::process::id().to_string().as_bytes())?;
            let file = Arc::new(file);
            held.insert(path.to_path_buf(), Arc::downgrade(&file));
            Ok(Writer::Me(WriterLock { _file: file }))
        }
        None => Ok(Writer::Other(holder(path))),
    }
}

/// The pid written in the lock file at `path`, if any.
pub(crate) fn holder(path: &Path) -> Option<u32> {
    let mut options = OpenOptions::new();
    super::format::private(options.read(true));
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_SHARE_READ | FILE_SHARE_WRITE: the writer holds it open for writing.
        options.share_mode(0x1 | 0x2);
    }
    let mut text = String::new();
    let file = options.open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Whether a live process holds the lock at `path` (for `rootgrep cache`).
pub(crate) fn is_held(path: &Path) -> bool {
    path.exists() && matches!(open_exclusive(path), Ok(None))
}

#[cfg(unix)]
fn open_exclusive(path: &Path) -> io::Result<Option<File>> {
    use rustix::fs::{FlockOperation, flock};
    let file = lock_file_options().open(path)?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(err) => {
            // No locks here (a network mount): write anyway (see the module docs).
            tracing::debug!("store lock unsupported at {}: {err}", path.display());
            Ok(Some(file))
        }
    }
}

#[cfg(windows)]
fn open_exclusive(path: &Path) -> io::Result<Option<File>> {
    use std::os::windows::fs::OpenOptionsExt;
    // FILE_SHARE_READ only: a second writer's open fails while this handle lives.
    match lock_file_options().share_mode(0x1).open(path) {
        Ok(file) => Ok(Some(file)),
        // ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION
        Err(err) if matches!(err.raw_os_error(), Some(32 | 33)) => Ok(None),
        Err(err) => Err(err),
    }
}

#[cfg(not(any(unix, windows)))]
fn open_exclusive(path: &Path) -> io::Result<Option<File>> {
    lock_file_options().open(path).map(Some)
}

fn lock_file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    super::format::private(&mut options);
    options
}
