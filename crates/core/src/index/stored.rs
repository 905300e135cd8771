//! The file index in the store (kind `files`), so that a restarted server lists again only
//! the directories that changed while it was away instead of walking the whole root
//! (`resume.rs`): the paths of a whole walk, each visited directory with its [`Stamp`]
//! (size, mtime, and identity: inode and change time), and the stamps of the paths the
//! walk's ignore rules were read from (`ignores::Rules::inputs`).
//!
//! Adding, removing or renaming an entry changes its directory's mtime and change time,
//! and nothing sets a change time back; a file's content is checked by its own stamp. But
//! a stamp is taken after the walk listed the directory, so it may already show a change
//! made after the listing: a directory (or an input) whose change time is later than the
//! walk's start minus [`RACY`] is stored *untrusted* and is always listed again (git's
//! "racy" rule; `RACY` covers coarse file system clocks). Only whole walks are stored.
//!
//! Layout (varints as `store::var`, paths as the platform's bytes, relative to the root):
//! version; the files; the directories in the index's order, each with its stamp and
//! whether it is trusted; the ignored entries (is a directory), the skipped ones (is a
//! special file), the ignore files not applied (path, directory, reason); the ignore
//! inputs (absolute, each with its stamp or none, and whether it is trusted). Decoding
//! checks every count against what is left, that every path is relative and plain, that
//! the directories come in the index's order, and that every entry's directory is among
//! them: a copy that passed its checksum but not its author is refused, never served.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::part::Part;
use super::root::{RootIndex, Stamp, cmp_paths, parent_of, stamp_of_meta};
use crate::ignores::SkippedIgnoreFile;
use crate::platform::os::{OsStrExt, OsStringExt};
use crate::store::mapped::Bytes;
use crate::store::publish::Stored;
use crate::store::{Kind, Reader, Refused, put_blob, put_var};

const VERSION: u64 = 1;

/// How much earlier than a walk's start a change must be for its stamp to be trusted:
/// more than any file system's timestamp step (FAT's is 2 s) and small clock corrections.
pub(super) const RACY: Duration = Duration::from_secs(5);

/// A stamp as stored: `None` when nothing is there; `trusted` when it predates the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Mark {
    pub(super) stamp: Option<Stamp>,
    pub(super) trusted: bool,
}

/// What a stored copy holds, decoded.
pub(super) struct Saved {
    /// The paths, as a walk would have collected them (files without their stamps).
    pub(super) part: Part,
    /// The directories' marks, in the order of `part.dirs` (the index's order).
    pub(super) dirs: Vec<Mark>,
    /// The ignore rules' inputs with their marks.
    pub(super) inputs: Vec<(PathBuf, Mark)>,
}

/// The stored file list: its bytes (encoded when the index is saved), or what they hold.
pub(crate) enum FileList {
    Encoded(Vec<u8>),
    Decoded(Box<Saved>),
}

impl FileList {
    /// `index` as stored, marked against `since` (when the walk that built it started).
    pub(super) fn of(index: &RootIndex, since: SystemTime) -> FileList {
        FileList::Encoded(encode(index, since))
    }

    pub(super) fn into_saved(self) -> Option<Box<Saved>> {
        match self {
            FileList::Decoded(saved) => Some(saved),
            FileList::Encoded(_) => None,
        }
    }
}

impl Stored for FileList {
    const KIND: Kind = Kind::Files;
    const WHAT: &'static str = "file list";
    const REDONE: &'static str = "directories listed again";
    const IN_PLACE: bool = false;

    fn bytes(&self) -> Cow<'_, [u8]> {
        match self {
            FileList::Encoded(bytes) => Cow::Borrowed(bytes),
            FileList::Decoded(_) => Cow::Borrowed(&[]),
        }
    }

    fn decode(bytes: Bytes) -> Result<FileList, Refused> {
        decode(bytes.as_slice()).map(|saved| FileList::Decoded(Box::new(saved)))
    }

    fn describe(&self) -> String {
        match self {
            FileList::Decoded(saved) => format!(
                "{} files in {} directories",
                saved.part.files.len(),
                saved.dirs.len()
            ),
            FileList::Encoded(bytes) => format!("{} bytes", bytes.len()),
        }
    }
}

/// The stamp an input that is a directory (a `.git` or `.jj`) has: for the ignore rules
/// only its presence counts (a repository's `.git` changes at every commit).
const A_DIRECTORY: Stamp = (u64::MAX, 0, 0);

/// The mark of whatever is at `path` now: an ignore input (`input`: following a symlink,
/// as the ignore rules read their files; a directory by its presence only), else a
/// directory of the tree (`lstat`: the walk does not follow links).
pub(super) fn mark_of(path: &Path, input: bool, since: SystemTime) -> Mark {
    let meta = match input {
        true => std::fs::metadata(path),
        false => std::fs::symlink_metadata(path),
    };
    match meta {
        Ok(meta) if input && meta.is_dir() => Mark {
            stamp: Some(A_DIRECTORY),
            trusted: true,
        },
        Ok(meta) => Mark {
            stamp: Some(stamp_of_meta(&meta)),
            trusted: crate::platform::os::changed(&meta)
                .is_some_and(|changed| changed + RACY < since),
        },
        // Nothing there: whatever appears later changes what is checked then.
        Err(_) => Mark {
            stamp: None,
            trusted: true,
        },
    }
}

fn put_mark(out: &mut Vec<u8>, mark: Mark) {
    out.push(u8::from(mark.trusted) | u8::from(mark.stamp.is_some()) << 1);
    let (size, mtime, ident) = mark.stamp.unwrap_or_default();
    for word in [size, mtime, ident] {
        out.extend_from_slice(&word.to_le_bytes());
    }
}

fn encode(index: &RootIndex, since: SystemTime) -> Vec<u8> {
    let mut out = Vec::with_capacity(index.arena.len() + index.files.len() * 2 + 64);
    put_var(&mut out, VERSION);
    put_var(&mut out, index.files.len() as u64);
    for rec in index.files.iter() {
        put_blob(&mut out, index.bytes(rec.path));
    }
    put_var(&mut out, index.dirs.len() as u64);
    for rec in index.dirs.iter() {
        let rel = index.bytes(rec.path);
        put_blob(&mut out, rel);
        put_mark(
            &mut out,
            mark_of(&index.root.join(index.rel_of(rec.path)), false, since),
        );
    }
    put_var(&mut out, index.ignored.len() as u64);
    for rec in index.ignored.iter() {
        put_blob(&mut out, index.bytes(rec.path));
        out.push(u8::from(rec.is_dir));
    }
    put_var(&mut out, index.skipped.len() as u64);
    for rec in index.skipped.iter() {
        put_blob(&mut out, index.bytes(rec.path));
        out.push(u8::from(rec.special));
    }
    put_var(&mut out, index.skipped_ignore.len() as u64);
    for skip in index.skipped_ignore.iter() {
        put_blob(&mut out, skip.path.as_os_str().as_bytes());
        put_blob(&mut out, skip.dir.as_os_str().as_bytes());
        put_blob(&mut out, skip.reason.as_bytes());
    }
    put_var(&mut out, index.ignore_inputs.len() as u64);
    for input in index.ignore_inputs.iter() {
        put_blob(&mut out, input.as_os_str().as_bytes());
        put_mark(&mut out, mark_of(input, true, since));
    }
    out
}

fn invalid(why: &str) -> Refused {
    Refused::Invalid(why.into())
}

/// A path relative to the root, made only of plain names.
fn rel<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], Refused> {
    let rel = r.var_blob()?;
    match plain(rel) {
        true => Ok(rel),
        false => Err(invalid("a path that is not relative and plain")),
    }
}

fn flag(r: &mut Reader) -> Result<bool, Refused> {
    match r.take(1)?[0] {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(invalid("a flag neither 0 nor 1")),
    }
}

fn mark(r: &mut Reader) -> Result<Mark, Refused> {
    let flags = r.take(1)?[0];
    if flags > 3 {
        return Err(invalid("unknown mark flags"));
    }
    let (size, mtime, ident) = (r.u64()?, r.u64()?, r.u64()?);
    Ok(Mark {
        stamp: (flags & 2 != 0).then_some((size, mtime, ident)),
        trusted: flags & 1 != 0,
    })
}

/// Whether `rel` is a relative path of plain names only (no root, no `..`, not empty).
fn plain(rel: &[u8]) -> bool {
    !rel.is_empty()
        && Path::new(&OsString::from_vec(rel.to_vec()))
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes.to_vec()))
}

pub(super) fn decode(bytes: &[u8]) -> Result<Saved, Refused> {
    let mut r = Reader::new(bytes);
    if r.var()? != VERSION {
        return Err(invalid("another file list layout"));
    }
    let mut part = Part::default();
    for _ in 0..r.var_count(1)? {
        let span = part.push(rel(&mut r)?);
        part.files.push((span, 0, 0, 0));
    }
    let mut dirs = Vec::new();
    for i in 0..r.var_count(26)? {
        // The root first (the empty path), then plain relative paths.
        let rel = match i {
            0 => r.var_blob()?,
            _ => rel(&mut r)?,
        };
        if i == 0 && !rel.is_empty() {
            return Err(invalid("the directories do not start at the root"));
        }
        // In the order packing puts them (`cmp_paths`, each once), so the index made from
        // them has each directory where its mark is.
        let span = part.push(rel);
        if let Some(&last) = part.dirs.last()
            && cmp_paths(&part.arena[last.range()], rel) != Ordering::Less
        {
            return Err(invalid("directories out of order"));
        }
        part.dirs.push(span);
        dirs.push(mark(&mut r)?);
    }
    if dirs.is_empty() {
        return Err(invalid("no root directory"));
    }
    for _ in 0..r.var_count(2)? {
        let span = part.push(rel(&mut r)?);
        let is_dir = flag(&mut r)?;
        part.ignored.push((span, is_dir));
    }
    for _ in 0..r.var_count(2)? {
        let span = part.push(rel(&mut r)?);
        let special = flag(&mut r)?;
        part.skipped.push((span, special));
    }
    for _ in 0..r.var_count(3)? {
        let path = path_of(r.var_blob()?);
        let dir = path_of(r.var_blob()?);
        let reason = String::from_utf8_lossy(r.var_blob()?).into_owned();
        part.skipped_ignore
            .push(SkippedIgnoreFile { path, dir, reason });
    }
    let mut inputs = Vec::new();
    for _ in 0..r.var_count(26)? {
        let path = path_of(r.var_blob()?);
        if !path.is_absolute() {
            return Err(invalid("an ignore input that is not absolute"));
        }
        let mark = mark(&mut r)?;
        part.ignore_inputs.push(path.clone());
        inputs.push((path, mark));
    }
    if !r.is_done() {
        return Err(invalid("bytes after the end"));
    }
    check_parents(&part)?;
    Ok(Saved { part, dirs, inputs })
}

/// Every file, ignored and skipped entry, and directory but the root, lies directly in
/// one of the directories (what packing them relies on).
fn check_parents(part: &Part) -> Result<(), Refused> {
    // Hashed, not searched: a binary search over the directories' paths for each of a
    // million entries was the resume's largest cost in user space (perf, the 1M tree).
    let text = |span: super::root::Span| &part.arena[span.range()];
    let known: HashSet<&[u8]> = part.dirs.iter().map(|&d| text(d)).collect();
    let entries = (part.files.iter().map(|f| text(f.0)))
        .chain(part.ignored.iter().map(|i| text(i.0)))
        .chain(part.skipped.iter().map(|s| text(s.0)))
        .chain(part.dirs.iter().skip(1).map(|&d| text(d)));
    // Entries of one directory mostly come together: the last parent found is tried first.
    let mut last: &[u8] = &[];
    for rel in entries {
        let parent = parent_of(rel);
        if parent != last && !known.contains(parent) {
            return Err(invalid("an entry outside every directory"));
        }
        last = parent;
    }
    Ok(())
}
