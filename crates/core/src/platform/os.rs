//! Platform glue for code that treats paths as bytes.
//!
//! On Unix this is `std::os::unix`'s `OsStrExt`/`OsStringExt`/`MetadataExt` re-exported,
//! unchanged. On Windows the same method names are provided over what std offers there:
//! a path's bytes are its WTF-8 encoding (`as_encoded_bytes`, UTF-8 for every path made of
//! valid UTF-16), and a file's identity is what stable std exposes of it.

#[cfg(unix)]
pub use std::os::unix::ffi::{OsStrExt, OsStringExt};
#[cfg(unix)]
pub use std::os::unix::fs::MetadataExt;

#[cfg(windows)]
pub use self::windows::{MetadataExt, OsStrExt, OsStringExt};

/// A file's identity beyond size and mtime, as one number: on Unix its inode and its
/// change time (which every write, rename onto, `chmod` or `touch` moves, and which no
/// program can set back, unlike the mtime that `cp -p`, `rsync -t` or `tar` restore); on
/// Windows its creation time (see [`MetadataExt`] there). Equal numbers mean "probably the
/// same content" only together with equal size and mtime.
pub fn identity(meta: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        identity_of(meta.ino(), meta.ctime(), meta.ctime_nsec())
    }
    #[cfg(not(unix))]
    {
        #[cfg(windows)]
        let id = meta.ino();
        #[cfg(not(windows))]
        let id = 0u64;
        mix(id, 0)
    }
}

/// [`identity`] from the inode and change time of a `stat` (as `rustix` reads it).
#[cfg(unix)]
pub(crate) fn identity_of(ino: u64, ctime: i64, ctime_nsec: i64) -> u64 {
    mix(ino, (ctime as u64) << 30 ^ ctime_nsec as u64)
}

fn mix(id: u64, change: u64) -> u64 {
    id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ change
}

/// When the file's status last changed: its change time (`ctime`) on Unix, which any write
/// moves to the clock's present and nothing sets back; elsewhere its modification time.
pub fn changed(meta: &std::fs::Metadata) -> Option<std::time::SystemTime> {
    #[cfg(unix)]
    {
        let secs = u64::try_from(meta.ctime()).ok()?;
        let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
        std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(secs, nanos))
    }
    #[cfg(not(unix))]
    meta.modified().ok()
}

/// Which bytes separate the components of a path: `/` on Unix; on Windows `\` (what the
/// walker, `Path::join` and the watcher put between names) and `/` (which Windows also
/// takes, and which no file name can hold). Code that splits, joins or orders relative
/// paths as bytes (the file index) asks this, never a literal `b'/'`; the functions take
/// a `Seps` so both platforms' rules are tested everywhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seps {
    Unix,
    Windows,
}

impl Seps {
    /// This platform's rules.
    pub(crate) const NATIVE: Seps = if cfg!(windows) {
        Seps::Windows
    } else {
        Seps::Unix
    };

    /// The separator put between components when joining (`std::path::MAIN_SEPARATOR`).
    pub const fn sep(self) -> u8 {
        match self {
            Seps::Unix => b'/',
            Seps::Windows => b'\\',
        }
    }

    /// Whether `byte` separates components.
    pub const fn is_sep(self, byte: u8) -> bool {
        byte == b'/' || (matches!(self, Seps::Windows) && byte == b'\\')
    }
}

/// This platform's separator for joining path bytes (`/`, or `\` on Windows).
pub const SEP: u8 = Seps::NATIVE.sep();

/// Whether `byte` separates path components on this platform (`/`; also `\` on Windows).
pub const fn is_sep(byte: u8) -> bool {
    Seps::NATIVE.is_sep(byte)
}

#[cfg(windows)]
mod windows {
    use std::ffi::{OsStr, OsString};

    /// `as_bytes`/`from_bytes` for `OsStr` on Windows.
    pub trait OsStrExt {
        /// The path's WTF-8 bytes (UTF-8 for every path that is valid UTF-16).
        fn as_bytes(&self) -> &[u8];
        /// The `OsStr` of `bytes`. Bytes that are not UTF-8 (only possible for names with
        /// unpaired surrogates) cannot be turned back safely and become an empty name,
        /// which names no file.
        fn from_bytes(bytes: &[u8]) -> &Self;
    }

    impl OsStrExt for OsStr {
        fn as_bytes(&self) -> &[u8] {
            self.as_encoded_bytes()
        }

        fn from_bytes(bytes: &[u8]) -> &OsStr {
            match std::str::from_utf8(bytes) {
                Ok(text) => OsStr::new(text),
                Err(_) => OsStr::new(""),
            }
        }
    }

    /// `from_vec`/`into_vec` for `OsString` on Windows.
    pub trait OsStringExt {
        /// The `OsString` of `bytes`; bytes that are not UTF-8 are decoded lossily.
        fn from_vec(bytes: Vec<u8>) -> Self;
        /// The WTF-8 bytes.
        fn into_vec(self) -> Vec<u8>;
    }

    impl OsStringExt for OsString {
        fn from_vec(bytes: Vec<u8>) -> OsString {
            match String::from_utf8(bytes) {
                Ok(text) => OsString::from(text),
                Err(err) => OsString::from(String::from_utf8_lossy(err.as_bytes()).into_owned()),
            }
        }

        fn into_vec(self) -> Vec<u8> {
            self.into_encoded_bytes()
        }
    }

    /// `dev`/`ino` on Windows: stable std has no file index, so a file is identified by its
    /// creation time (device 0). A file deleted and recreated under the same name within
    /// NTFS's tunnelling window (15 s) can keep its creation time and look the same.
    pub trait MetadataExt {
        fn dev(&self) -> u64;
        fn ino(&self) -> u64;
    }

    impl MetadataExt for std::fs::Metadata {
        fn dev(&self) -> u64 {
            0
        }

        fn ino(&self) -> u64 {
            std::os::windows::fs::MetadataExt::creation_time(self)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_per_platform() {
        assert_eq!(Seps::Unix.sep(), b'/');
        assert_eq!(Seps::Windows.sep(), b'\\');
        assert!(Seps::Unix.is_sep(b'/') && !Seps::Unix.is_sep(b'\\'));
        assert!(Seps::Windows.is_sep(b'/') && Seps::Windows.is_sep(b'\\'));
        assert!(!Seps::Windows.is_sep(b':') && !Seps::Unix.is_sep(b'.'));
        // The native rules agree with std's.
        assert_eq!(SEP, std::path::MAIN_SEPARATOR as u8);
        for byte in 0..=127u8 {
            assert_eq!(
                is_sep(byte),
                std::path::is_separator(byte as char),
                "{byte}"
            );
        }
    }
}
