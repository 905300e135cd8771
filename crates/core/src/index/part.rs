//! What a walk collects before it is packed: paths in one byte arena, with the files, the
//! directories and the other entries as spans into it. Builds and updates fill it
//! (`build.rs`, `update.rs`), and `pack.rs` turns it into a [`RootIndex`](super::RootIndex).

use crate::ignores::SkippedIgnoreFile;

use super::root::Span;

/// One file as walked: (path, size, mtime nanos, identity: `platform::os::identity`).
pub(super) type FileEntry = (Span, u64, i64, u64);

#[derive(Default)]
pub(super) struct Part {
    pub(super) arena: Vec<u8>,
    pub(super) files: Vec<FileEntry>,
    pub(super) dirs: Vec<Span>,
    /// Symlinks and special files the walk yielded (neither files nor directories).
    pub(super) others: Vec<Span>,
    /// Every non-hidden file or directory found by listing the visited directories, as
    /// (the directory's path, the entry's name, is a directory): names only, so the paths
    /// the walk also yields are not stored twice.
    pub(super) listed: Vec<(Span, Span, bool)>,
    /// What a search cannot read: (path, is a special file; else a walk error).
    pub(super) skipped: Vec<(Span, bool)>,
    /// Ignore files the walk did not apply (reported by searches the index answers).
    pub(super) skipped_ignore: Vec<SkippedIgnoreFile>,
    /// Ignored entries already known (kept from an earlier build by an update), as
    /// (path, is a directory).
    pub(super) ignored: Vec<(Span, bool)>,
    /// The paths whose change would change the walk's ignore rules
    /// (`Walker::ignore_inputs`).
    pub(super) ignore_inputs: Vec<std::path::PathBuf>,
}

impl Part {
    pub(super) fn push(&mut self, bytes: &[u8]) -> Span {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(bytes);
        Span {
            start,
            len: bytes.len() as u32,
        }
    }

    pub(super) fn absorb(&mut self, other: Part) {
        let shift = self.arena.len() as u32;
        let moved = |s: Span| Span {
            start: s.start + shift,
            len: s.len,
        };
        self.arena.extend_from_slice(&other.arena);
        self.skipped_ignore.extend(other.skipped_ignore);
        self.ignore_inputs.extend(other.ignore_inputs);
        self.files.extend(
            other
                .files
                .into_iter()
                .map(|(s, z, m, i)| (moved(s), z, m, i)),
        );
        self.dirs.extend(other.dirs.into_iter().map(moved));
        self.others.extend(other.others.into_iter().map(moved));
        self.listed.extend(
            other
                .listed
                .into_iter()
                .map(|(dir, name, is_dir)| (moved(dir), moved(name), is_dir)),
        );
        self.skipped.extend(
            other
                .skipped
                .into_iter()
                .map(|(path, special)| (moved(path), special)),
        );
        self.ignored.extend(
            other
                .ignored
                .into_iter()
                .map(|(path, is_dir)| (moved(path), is_dir)),
        );
    }
}
