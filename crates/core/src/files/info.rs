//! Facts about one path, without reading more than needed: type, size, times, permissions,
//! symlink target, a text/binary guess with its encoding, and a line count for text files
//! under a size cap. Special files are described from their metadata and never opened.

use std::io::{self, Read};
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::read::{
    Encoding, describe_binary, image_mime, looks_binary, open_regular, sniff_encoding, special_kind,
};

/// Text files up to this size get a line count.
pub(crate) const LINE_COUNT_CAP: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
    Special(&'static str),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Text {
        encoding: Encoding,
        lines: Option<u64>,
    },
    Image(&'static str),
    Binary(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The canonical path.
    pub path: PathBuf,
    pub kind: Kind,
    pub size: u64,
    pub modified: Option<SystemTime>,
    pub created: Option<SystemTime>,
    /// `rwxr-xr-x` style, plus the octal mode.
    pub permissions: String,
    pub mode: u32,
    pub readonly: bool,
    /// When the path as named is a symlink: its target text.
    pub symlink_target: Option<PathBuf>,
    /// For regular files only.
    pub content: Option<Content>,
}

/// Gathers facts; `given` is the path as named (may be a symlink), `canonical` the target.
pub fn file_info(given: &Path, canonical: &Path) -> io::Result<FileInfo> {
    let symlink_target = match std::fs::symlink_metadata(given) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(given).ok(),
        _ => None,
    };
    let meta = std::fs::metadata(canonical)?;
    let file_type = meta.file_type();
    let kind = if file_type.is_dir() {
        Kind::Directory
    } else if let Some(special) = special_kind(&file_type) {
        Kind::Special(special)
    } else {
        Kind::File
    };
    #[cfg(unix)]
    let mode = meta.permissions().mode() & 0o7777;
    // Windows keeps a read-only attribute, not permission bits: shown as r--/rw- for all.
    #[cfg(windows)]
    let mode = if meta.permissions().readonly() {
        0o444
    } else {
        0o666
    };
    let content = if kind == Kind::File {
        sniff_content(canonical, meta.len()).ok()
    } else {
        None
    };
    Ok(FileInfo {
        path: canonical.to_path_buf(),
        kind,
        size: meta.len(),
        modified: meta.modified().ok(),
        created: meta.created().ok(),
        permissions: rwx(mode),
        mode,
        readonly: meta.permissions().readonly(),
        symlink_target,
        content,
    })
}

fn sniff_content(path: &Path, size: u64) -> Result<Content, super::read::ReadError> {
    let (file, _) = open_regular(path)?;
    let mut head = Vec::with_capacity(8192);
    let mut reader = io::BufReader::new(file);
    (&mut reader)
        .take(8192)
        .read_to_end(&mut head)
        .map_err(|e| super::read::ReadError::Io(path.to_path_buf(), e))?;
    if let Some(mime) = image_mime(&head) {
        return Ok(Content::Image(mime));
    }
    let encoding = sniff_encoding(&head);
    if looks_binary(&head, encoding) {
        return Ok(Content::Binary(describe_binary(&head)));
    }
    let lines = if size <= LINE_COUNT_CAP {
        count_lines(&head, &mut reader, encoding).ok()
    } else {
        None
    };
    Ok(Content::Text { encoding, lines })
}

/// Counts lines the way an editor shows them: a final line without newline counts.
fn count_lines(head: &[u8], rest: &mut impl Read, encoding: Encoding) -> io::Result<u64> {
    let (newline, unit): (&[u8], usize) = match encoding {
        Encoding::Utf16Le => (&[b'\n', 0], 2),
        Encoding::Utf16Be => (&[0, b'\n'], 2),
        _ => (b"\n", 1),
    };
    let mut all = head.to_vec();
    rest.read_to_end(&mut all)?;
    let body = match encoding {
        Encoding::Utf16Le | Encoding::Utf16Be => &all[2..],
        Encoding::Utf8Bom => &all[3..],
        Encoding::Utf8 => &all[..],
    };
    let mut count = 0u64;
    let mut i = 0;
    while i + unit <= body.len() {
        if &body[i..i + unit] == newline {
            count += 1;
        }
        i += unit;
    }
    let ends_with_newline = body.len() >= unit && &body[body.len() - unit..] == newline;
    if !body.is_empty() && !ends_with_newline {
        count += 1;
    }
    Ok(count)
}

fn rwx(mode: u32) -> String {
    let mut out = String::with_capacity(9);
    for shift in [6, 3, 0] {
        let bits = (mode >> shift) & 7;
        out.push(if bits & 4 != 0 { 'r' } else { '-' });
        out.push(if bits & 2 != 0 { 'w' } else { '-' });
        out.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn describes_text_binary_symlink_and_fifo() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let text = base.join("t.txt");
        std::fs::write(&text, "a\nb\nc").unwrap();
        let info = file_info(&text, &text).unwrap();
        assert_eq!(info.kind, Kind::File);
        assert_eq!(
            info.content,
            Some(Content::Text {
                encoding: Encoding::Utf8,
                lines: Some(3)
            })
        );
        let link = base.join("link");
        std::os::unix::fs::symlink(&text, &link).unwrap();
        let info = file_info(&link, &text).unwrap();
        assert_eq!(info.symlink_target, Some(text.clone()));
        let fifo = base.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let info = file_info(&fifo, &fifo).unwrap();
        assert!(matches!(info.kind, Kind::Special(_)));
        assert_eq!(info.content, None);
        assert_eq!(rwx(0o754), "rwxr-xr--");
    }
}
