//! `file://` URIs and paths, both ways: the only way to name bytes that are not UTF-8, and
//! how clients send roots. Windows drive letters and UNC shares are handled on every
//! platform (the text rules are pure functions, tested everywhere).

#[cfg(not(windows))]
use crate::platform::os::OsStringExt;
#[cfg(not(windows))]
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a `file://` URI could not be turned into a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriError {
    NotFileScheme,
    RemoteHost(String),
    NotAbsolute,
    Nul,
}

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UriError::NotFileScheme => write!(f, "only file:// URIs are supported"),
            UriError::RemoteHost(host) => {
                write!(
                    f,
                    "file URI names host \"{}\"; only local files (no host or localhost) are supported",
                    crate::quote::echo(host)
                )
            }
            UriError::NotAbsolute => write!(f, "file URI does not hold an absolute path"),
            UriError::Nul => write!(f, "file URI contains a NUL byte"),
        }
    }
}

/// Turns a `file://` URI into an absolute path: percent-decoded (bytes, so non-UTF-8 names
/// survive), host empty or `localhost`. Query and fragment are not part of a file path and
/// are rejected by being treated as literal characters only when percent-encoded.
pub fn path_from_file_uri(uri: &str) -> Result<PathBuf, UriError> {
    let rest = strip_prefix_ignore_case(uri, "file://").ok_or(UriError::NotFileScheme)?;
    let (host, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, ""),
    };
    #[cfg(not(windows))]
    if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
        return Err(UriError::RemoteHost(host.to_string()));
    }
    // A literal '?' or '#' ends the path part of a URI.
    let path = path.split(['?', '#']).next().unwrap_or("");
    if !path.starts_with('/') {
        return Err(UriError::NotAbsolute);
    }
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
    if bytes.contains(&0) {
        return Err(UriError::Nul);
    }
    #[cfg(windows)]
    {
        // `file:///C:/x` → `C:\x`; `file://server/share/x` → `\\server\share\x`.
        let text = String::from_utf8_lossy(&bytes);
        crate::platform::winpath::from_uri_path(host, &text)
            .map(PathBuf::from)
            .ok_or(UriError::NotAbsolute)
    }
    #[cfg(not(windows))]
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

/// Builds the `file://` URI of an absolute path (percent-encoding what URIs cannot carry).
pub fn file_uri_from_path(path: &Path) -> String {
    #[cfg(windows)]
    {
        windows_file_uri(&path.to_string_lossy())
    }
    #[cfg(not(windows))]
    {
        use crate::platform::os::OsStrExt;
        let encoded = percent_encoding::percent_encode(path.as_os_str().as_bytes(), URI_KEEP);
        format!("file://{encoded}")
    }
}

/// What a `file://` URI keeps unencoded in a path.
const URI_KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The `file://` URI of a Windows path (`C:\x y` → `file:///C:/x%20y`, `\\srv\share\x` →
/// `file://srv/share/x`); pure, so it is tested on every platform.
#[cfg_attr(not(windows), allow(dead_code))]
pub(crate) fn windows_file_uri(path: &str) -> String {
    const KEEP_COLON: &percent_encoding::AsciiSet = &URI_KEEP.remove(b':');
    let (host, path) = crate::platform::winpath::to_uri_parts(path);
    let encoded = percent_encoding::percent_encode(path.as_bytes(), KEEP_COLON);
    format!("file://{host}{encoded}")
}

/// `text` without `prefix` (compared ASCII-case-insensitively). `get` instead of slicing:
/// the prefix length may fall inside a multi-byte character of `text`.
pub(super) fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}
