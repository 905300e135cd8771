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
