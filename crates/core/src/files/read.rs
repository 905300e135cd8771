//! Reading one file for the model: a page of text lines, an image, or a short description
//! of a binary file — never raw binary bytes as text, and never a FIFO, socket or device.
//!
//! Files are opened with `O_NONBLOCK | O_NOFOLLOW` and checked with `fstat` on the open
//! handle, so a path swapped for a FIFO or a symlink between resolution and use cannot make
//! the server block or wander. Text is streamed line by line with a bounded line buffer, so
//! a 1 GiB file or a single 100 MB line costs only what the page shows.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Longest line shown by `read_file`; longer lines are cut with a marker.
pub const MAX_LINE_CHARS: usize = 2000;
/// Largest image returned inline (base64 makes it a third bigger on the wire).
pub(crate) const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// How many leading bytes decide text versus binary.
const SNIFF_BYTES: usize = 8192;

/// What to read.
#[derive(Debug, Clone)]
pub struct ReadRequest {
    /// 1-based first line.
    pub offset: usize,
    /// Maximum number of lines.
    pub limit: usize,
    /// Stop before the page's text exceeds this many bytes (the output budget).
    pub max_bytes: usize,
    /// Largest image (raw bytes) the caller can still send: what is left of its output
    /// budget. A larger image is not read at all ([`ReadOutcome::ImageOverBudget`]), so
    /// memory stays bounded by the budget however many images a call names.
    pub max_image_bytes: u64,
}

/// The text encoding found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf8Bom,
    Utf16Le,
    Utf16Be,
}

impl Encoding {
    pub fn label(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf8Bom => "utf-8 (with BOM)",
            Encoding::Utf16Le => "utf-16le",
            Encoding::Utf16Be => "utf-16be",
        }
    }
}

/// One page of a text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextPage {
    pub path: PathBuf,
    /// 1-based number of `lines[0]`.
    pub first_line: usize,
    pub lines: Vec<String>,
    /// When more lines follow the page: the 1-based line to continue from.
    pub next_line: Option<usize>,
    pub encoding: Encoding,
    /// Invalid byte sequences were replaced with U+FFFD.
    pub lossy: bool,
    /// Lines on the page that were cut at [`MAX_LINE_CHARS`].
    pub cut_lines: usize,
    /// The page stopped early because of the byte budget.
    pub budget_cut: bool,
    /// Total number of lines, when the file was read to its end.
    pub total_lines: Option<usize>,
}

/// Whatever a read produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutcome {
    Text(TextPage),
    Image {
        path: PathBuf,
        mime: &'static str,
        bytes: Vec<u8>,
    },
    /// An image that fits [`MAX_IMAGE_BYTES`] but not the caller's remaining budget
    /// (`max_image_bytes`): not read.
    ImageOverBudget {
        path: PathBuf,
        mime: &'static str,
        size: u64,
    },
    /// A binary (or oversized image) file: described, not shown.
    Binary {
        path: PathBuf,
        size: u64,
        kind: String,
    },
}

/// Why a file could not be read (`Display` says what the path is; what reads a directory
/// instead is the caller's to say).
#[derive(Debug)]
pub enum ReadError {
    NotFound(PathBuf),
    IsDirectory(PathBuf),
    /// FIFO, socket, device: never opened for reading.
    Special(PathBuf, &'static str),
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotFound(p) => write!(f, "{}: no such file", crate::roots::path_display(p)),
            ReadError::IsDirectory(p) => {
                write!(f, "{} is a directory", crate::roots::path_display(p))
            }
            ReadError::Special(p, kind) => write!(
                f,
                "{} is a {kind}; special files are never read (they can block or never end)",
                crate::roots::path_display(p)
            ),
            ReadError::Io(p, err) => write!(f, "{}: {err}", crate::roots::path_display(p)),
        }
    }
}

/// The kind of a non-regular file, for messages.
#[cfg(unix)]
pub(crate) fn special_kind(file_type: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        Some("FIFO (named pipe)")
    } else if file_type.is_socket() {
        Some("socket")
    } else if file_type.is_block_device() {
        Some("block device")
    } else if file_type.is_char_device() {
        Some("character device")
    } else {
        None
    }
}

/// The kind of a non-regular file, for messages. Windows has no FIFOs, sockets or device
/// nodes in its directories (device names such as `NUL` are refused when opened).
#[cfg(windows)]
pub(crate) fn special_kind(_file_type: &std::fs::FileType) -> Option<&'static str> {
    None
}

/// Opens a regular file for reading without following a final symlink and without
/// blocking on special files; anything but a regular file is refused after `fstat`.
pub(crate) fn open_regular(path: &Path) -> Result<(File, std::fs::Metadata), ReadError> {
    let file = super::safe::open_read(path).map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound(path.to_path_buf()),
        _ => ReadError::Io(path.to_path_buf(), err),
    })?;
    let meta = file
        .metadata()
        .map_err(|err| ReadError::Io(path.to_path_buf(), err))?;
    let file_type = meta.file_type();
    if file_type.is_dir() {
        return Err(ReadError::IsDirectory(path.to_path_buf()));
    }
    if let Some(kind) = special_kind(&file_type) {
        return Err(ReadError::Special(path.to_path_buf(), kind));
    }
    Ok((file, meta))
}

/// Checks the type of a path without opening it (for FIFOs this must not open).
fn precheck(path: &Path) -> Result<(), ReadError> {
    let meta = std::fs::metadata(path).map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound(path.to_path_buf()),
        _ => ReadError::Io(path.to_path_buf(), err),
    })?;
    if meta.is_dir() {
        return Err(ReadError::IsDirectory(path.to_path_buf()));
    }
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(ReadError::Special(path.to_path_buf(), kind));
    }
    Ok(())
}

/// The image MIME type from magic bytes, for the formats clients render.
pub(crate) fn image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Detects a BOM.
pub(crate) fn sniff_encoding(head: &[u8]) -> Encoding {
    if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        Encoding::Utf8Bom
    } else if head.starts_with(&[0xFF, 0xFE]) {
        Encoding::Utf16Le
    } else if head.starts_with(&[0xFE, 0xFF]) {
        Encoding::Utf16Be
    } else {
        Encoding::Utf8
    }
}

/// True when the head looks binary: a NUL byte in a file that is not UTF-16.
pub(crate) fn looks_binary(head: &[u8], encoding: Encoding) -> bool {
    !matches!(encoding, Encoding::Utf16Le | Encoding::Utf16Be) && head.contains(&0)
}

/// A short description of a binary file's type from its head.
pub(crate) fn describe_binary(head: &[u8]) -> String {
    let known: &[(&[u8], &str)] = &[
        (b"\x7fELF", "ELF executable or library"),
        (b"PK\x03\x04", "ZIP archive (or jar/docx/xlsx)"),
        (b"%PDF", "PDF document"),
        (b"\x1f\x8b", "gzip-compressed data"),
        (b"BZh", "bzip2-compressed data"),
        (b"\xfd7zXZ\x00", "xz-compressed data"),
        (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
        (b"SQLite format 3\x00", "SQLite database"),
        (b"\x00asm", "WebAssembly module"),
        (b"\xca\xfe\xba\xbe", "Mach-O universal binary or Java class"),
        (b"BM", "BMP image"),
        (b"II*\x00", "TIFF image"),
        (b"MM\x00*", "TIFF image"),
        (b"\x00\x00\x01\x00", "ICO image"),
    ];
    for (magic, name) in known {
        if head.starts_with(magic) {
            return (*name).to_string();
        }
    }
    if let Some(mime) = image_mime(head) {
        return format!("{mime} image");
    }
    "binary data".to_string()
}

/// Reads a file for the model.
pub fn read(path: &Path, request: &ReadRequest) -> Result<ReadOutcome, ReadError> {
    precheck(path)?;
    let (file, meta) = open_regular(path)?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader
        .fill_buf()
        .map_err(|err| ReadError::Io(path.to_path_buf(), err))?;
    let head = head[..head.len().min(SNIFF_BYTES)].to_vec();
    if let Some(mime) = image_mime(&head) {
        if meta.len() <= MAX_IMAGE_BYTES && meta.len() > request.max_image_bytes {
            return Ok(ReadOutcome::ImageOverBudget {
                path: path.to_path_buf(),
                mime,
                size: meta.len(),
            });
        }
        if meta.len() <= MAX_IMAGE_BYTES {
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            reader
                // The file may have grown since `fstat`: never hold more than was allowed.
                .take(meta.len().min(request.max_image_bytes))
                .read_to_end(&mut bytes)
                .map_err(|err| ReadError::Io(path.to_path_buf(), err))?;
            return Ok(ReadOutcome::Image {
                path: path.to_path_buf(),
                mime,
                bytes,
            });
        }
        return Ok(ReadOutcome::Binary {
            path: path.to_path_buf(),
            size: meta.len(),
            kind: format!(
                "{mime} image too large to show inline (limit {} MiB)",
                MAX_IMAGE_BYTES / 1024 / 1024
            ),
        });
    }
    let encoding = sniff_encoding(&head);
    if looks_binary(&head, encoding) {
        return Ok(ReadOutcome::Binary {
            path: path.to_path_buf(),
            size: meta.len(),
            kind: describe_binary(&head),
        });
    }
    let page = match encoding {
        Encoding::Utf8 | Encoding::Utf8Bom => {
            if encoding == Encoding::Utf8Bom {
                reader.consume(3);
            }
            read_lines(path, reader, encoding, request)
        }
        Encoding::Utf16Le | Encoding::Utf16Be => {
            let decoder = encoding_rs_io::DecodeReaderBytesBuilder::new()
                .bom_sniffing(true)
                .strip_bom(true)
                .build(reader);
            read_lines(
                path,
                BufReader::with_capacity(64 * 1024, decoder),
                encoding,
                request,
            )
        }
    }
    .map_err(|err| ReadError::Io(path.to_path_buf(), err))?;
    Ok(ReadOutcome::Text(page))
}

/// A whole file, for serving as a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Whole {
    /// Decoded text (UTF-16 transcoded, BOM removed, invalid UTF-8 replaced).
    Text(String),
    /// Raw bytes of a binary file.
    Binary(Vec<u8>),
    /// Larger than the cap: not read.
    TooLarge(u64),
}

/// Reads a whole regular file up to `cap` bytes, as text or binary.
pub fn read_whole(path: &Path, cap: u64) -> Result<Whole, ReadError> {
    precheck(path)?;
    let (file, meta) = open_regular(path)?;
    if meta.len() > cap {
        return Ok(Whole::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ReadError::Io(path.to_path_buf(), err))?;
    if bytes.len() as u64 > cap {
        return Ok(Whole::TooLarge(bytes.len() as u64));
    }
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    let encoding = sniff_encoding(head);
    if image_mime(head).is_some() || looks_binary(head, encoding) {
        return Ok(Whole::Binary(bytes));
    }
    let text = match encoding {
        Encoding::Utf8 => String::from_utf8_lossy(&bytes).into_owned(),
        Encoding::Utf8Bom => String::from_utf8_lossy(&bytes[3..]).into_owned(),
        Encoding::Utf16Le => encoding_rs::UTF_16LE
            .decode_with_bom_removal(&bytes)
            .0
            .into_owned(),
        Encoding::Utf16Be => encoding_rs::UTF_16BE
            .decode_with_bom_removal(&bytes)
            .0
            .into_owned(),
    };
    Ok(Whole::Text(text))
}

/// Streams lines, keeping at most [`MAX_LINE_CHARS`] (plus a little) of each.
fn read_lines<R: BufRead>(
    path: &Path,
    mut reader: R,
    encoding: Encoding,
    request: &ReadRequest,
) -> io::Result<TextPage> {
    let first = request.offset.max(1);
    let mut page = TextPage {
        path: path.to_path_buf(),
        first_line: first,
        lines: Vec::new(),
        next_line: None,
        encoding,
        lossy: false,
        cut_lines: 0,
        budget_cut: false,
        total_lines: None,
    };
    let keep_bytes = MAX_LINE_CHARS * 4;
    let mut line_no = 0usize;
    let mut bytes_used = 0usize;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let Some(full_len) = read_bounded_line(&mut reader, &mut buf, keep_bytes)? else {
            break;
        };
        line_no += 1;
        if line_no < first {
            continue;
        }
        if page.lines.len() >= request.limit {
            page.next_line = Some(line_no);
            return Ok(page);
        }
        let (text, lossy) = decode_line(&buf);
        page.lossy |= lossy;
        let (text, cut) = cut_line(text, full_len);
        // Budget: the renderer adds a line-number prefix of about 8 bytes.
        let cost = text.len() + 8;
        if bytes_used + cost > request.max_bytes && !page.lines.is_empty() {
            page.next_line = Some(line_no);
            page.budget_cut = true;
            return Ok(page);
        }
        bytes_used += cost;
        page.cut_lines += usize::from(cut);
        page.lines.push(text);
    }
    page.total_lines = Some(line_no);
    Ok(page)
}

/// Reads one line into `buf` keeping at most `keep` bytes; returns the line's full length
/// in bytes (without the newline), or `None` at end of file.
fn read_bounded_line<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    keep: usize,
) -> io::Result<Option<usize>> {
    let mut total = 0usize;
    let mut saw_any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if chunk.is_empty() {
            return Ok(saw_any.then_some(total));
        }
        saw_any = true;
        let (piece, found_newline) = match memchr(b'\n', chunk) {
            Some(pos) => (&chunk[..pos], true),
            None => (chunk, false),
        };
        let room = keep.saturating_sub(buf.len());
        buf.extend_from_slice(&piece[..piece.len().min(room)]);
        total += piece.len();
        let consumed = piece.len() + usize::from(found_newline);
        reader.consume(consumed);
        if found_newline {
            if buf.last() == Some(&b'\r') && total == buf.len() {
                buf.pop();
                total -= 1;
            }
            return Ok(Some(total));
        }
    }
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

fn decode_line(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_string(), false),
        Err(err) => {
            // A multi-byte character cut by the bounded buffer is not corruption.
            let valid_to_end = err.error_len().is_none() && bytes.len() >= MAX_LINE_CHARS * 4;
            (String::from_utf8_lossy(bytes).into_owned(), !valid_to_end)
        }
    }
}

/// Cuts a line to [`MAX_LINE_CHARS`] characters, saying how much was cut.
fn cut_line(text: String, full_len: usize) -> (String, bool) {
    let chars = text.chars().count();
    if chars <= MAX_LINE_CHARS && full_len <= text.len() {
        return (text, false);
    }
    let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
    let cut_bytes = full_len.saturating_sub(kept.len());
    (format!("{kept} [… line cut: {cut_bytes} more bytes]"), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(offset: usize, limit: usize) -> ReadRequest {
        ReadRequest {
            offset,
            limit,
            max_bytes: 64 * 1024,
            max_image_bytes: MAX_IMAGE_BYTES,
        }
    }

    fn text(outcome: ReadOutcome) -> TextPage {
        match outcome {
            ReadOutcome::Text(page) => page,
            other => panic!("expected text, got {other:?}"),
        }
    }

    #[test]
    fn pages_lines_and_reports_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.txt");
        std::fs::write(&path, "one\ntwo\r\nthree\nfour").unwrap();
        let page = text(read(&path, &req(2, 2)).unwrap());
        assert_eq!(page.lines, vec!["two", "three"]);
        assert_eq!(page.first_line, 2);
        assert_eq!(page.next_line, Some(4));
        let page = text(read(&path, &req(1, 10)).unwrap());
        assert_eq!(page.lines.len(), 4);
        assert_eq!(page.total_lines, Some(4));
        assert_eq!(page.next_line, None);
    }

    #[test]
    fn utf16_and_invalid_utf8() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("u16.txt");
        let mut bytes = vec![0xFF, 0xFE];
        for unit in "héllo\nwörld\n".encode_utf16() {
            bytes.extend_from_slice(&unit.to_le_bytes());
        }
        std::fs::write(&path, bytes).unwrap();
        let page = text(read(&path, &req(1, 10)).unwrap());
        assert_eq!(page.lines, vec!["héllo", "wörld"]);
        assert_eq!(page.encoding, Encoding::Utf16Le);

        let latin = tmp.path().join("latin1.txt");
        std::fs::write(&latin, b"caf\xe9\n").unwrap();
        let page = text(read(&latin, &req(1, 10)).unwrap());
        assert!(page.lossy);
        assert_eq!(page.lines, vec!["caf\u{FFFD}"]);
    }

    #[test]
    fn huge_line_is_cut_without_buffering_it() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("long.txt");
        std::fs::write(&path, format!("{}\nnext\n", "x".repeat(1_000_000))).unwrap();
        let page = text(read(&path, &req(1, 10)).unwrap());
        assert_eq!(page.cut_lines, 1);
        assert!(page.lines[0].len() < MAX_LINE_CHARS + 100);
        assert!(page.lines[0].contains("998000 more bytes"));
        assert_eq!(page.lines[1], "next");
    }

    #[cfg(unix)]
    #[test]
    fn binary_image_and_special_files() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("x.bin");
        std::fs::write(&bin, b"\x7fELF\x00\x00\x01").unwrap();
        match read(&bin, &req(1, 10)).unwrap() {
            ReadOutcome::Binary { kind, size, .. } => {
                assert!(kind.contains("ELF"));
                assert_eq!(size, 7);
            }
            other => panic!("{other:?}"),
        }
        let png = tmp.path().join("x.png");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\nrest").unwrap();
        assert!(matches!(
            read(&png, &req(1, 10)).unwrap(),
            ReadOutcome::Image {
                mime: "image/png",
                ..
            }
        ));
        let fifo = tmp.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        assert!(matches!(
            read(&fifo, &req(1, 10)),
            Err(ReadError::Special(_, _))
        ));
        assert!(matches!(
            read(tmp.path(), &req(1, 10)),
            Err(ReadError::IsDirectory(_))
        ));
    }

    #[test]
    fn budget_stops_the_page_early() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("many.txt");
        let body: String = (0..1000)
            .map(|i| format!("line {i:04} {}\n", "y".repeat(90)))
            .collect();
        std::fs::write(&path, body).unwrap();
        let page = text(
            read(
                &path,
                &ReadRequest {
                    offset: 1,
                    limit: 2000,
                    max_bytes: 10_000,
                    max_image_bytes: 0,
                },
            )
            .unwrap(),
        );
        assert!(page.budget_cut);
        assert!(page.lines.len() < 100);
        assert_eq!(page.next_line, Some(page.lines.len() + 1));
    }

    #[test]
    fn an_image_over_the_callers_allowance_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("pic.png");
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.resize(10_000, 7);
        std::fs::write(&path, &png).unwrap();
        let small = ReadRequest {
            max_image_bytes: 9_999,
            ..req(1, 10)
        };
        assert_eq!(
            read(&path, &small).unwrap(),
            ReadOutcome::ImageOverBudget {
                path: path.clone(),
                mime: "image/png",
                size: 10_000
            }
        );
        let enough = ReadRequest {
            max_image_bytes: 10_000,
            ..req(1, 10)
        };
        assert!(matches!(
            read(&path, &enough).unwrap(),
            ReadOutcome::Image { bytes, .. } if bytes == png
        ));
    }
}
