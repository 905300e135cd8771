//! The roots in force: one [`Root`], the immutable [`RootSet`] snapshot and where it came
//! from ([`RootSource`]), and the bounded ways to name roots and entries in messages.

use super::place::{canonicalize, path_text, within};
use super::uri::file_uri_from_path;
use std::path::{Path, PathBuf};

/// Where the roots in force came from, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootSource {
    /// The client's answer to `roots/list`.
    Client,
    /// `DIR` arguments on the command line.
    CommandLine,
    /// The server's working directory (the last fallback).
    WorkingDirectory,
    /// `--confine` directories, used when every other source was empty or outside them.
    Confine,
}

impl RootSource {
    pub fn label(self) -> &'static str {
        match self {
            RootSource::Client => "client",
            RootSource::CommandLine => "command line",
            RootSource::WorkingDirectory => "working directory",
            RootSource::Confine => "--confine",
        }
    }
}

/// One workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The path as given (absolute, percent-decoded), used in messages.
    pub path: PathBuf,
    /// The canonical path; `None` when the root does not exist (kept, but reported).
    pub canonical: Option<PathBuf>,
    /// The client's display name, when it gave one.
    pub name: Option<String>,
    /// True when the root is a single file rather than a directory.
    pub is_file: bool,
}

impl Root {
    /// Builds a root from an absolute path, resolving it if it exists.
    pub fn new(path: PathBuf, name: Option<String>) -> Root {
        let canonical = canonicalize(&path).ok();
        let is_file = canonical.as_deref().is_some_and(Path::is_file);
        Root {
            path,
            canonical,
            name,
            is_file,
        }
    }

    /// True when `canonical` (already canonical) is this root or below it.
    pub fn contains(&self, canonical: &Path) -> bool {
        self.canonical
            .as_deref()
            .is_some_and(|root| within(canonical, root))
    }

    /// The path to show and search from: the canonical path when known.
    pub fn effective(&self) -> &Path {
        self.canonical.as_deref().unwrap_or(&self.path)
    }
}

/// An immutable snapshot of the roots in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSet {
    pub roots: Vec<Root>,
    pub source: RootSource,
}

impl RootSet {
    pub fn new(roots: Vec<Root>, source: RootSource) -> RootSet {
        RootSet { roots, source }
    }

    /// The index of the first root containing the canonical path, if any.
    pub(crate) fn containing(&self, canonical: &Path) -> Option<usize> {
        self.roots.iter().position(|root| root.contains(canonical))
    }

    /// The existing roots' canonical paths, in order (what a search walks by default).
    pub fn existing(&self) -> Vec<PathBuf> {
        self.roots
            .iter()
            .filter_map(|root| root.canonical.clone())
            .collect()
    }

    /// A one-line human description for messages, e.g. `/home/me/app, /home/me/lib`.
    /// Bounded (a client may send thousands of roots): at most [`DESCRIBE_MAX_ROOTS`] roots
    /// and about [`DESCRIBE_MAX_BYTES`], then how many more.
    pub fn describe(&self) -> PathList {
        if self.roots.is_empty() {
            return PathList {
                named: "(no roots)".to_string(),
                more: 0,
            };
        }
        describe_paths(self.roots.iter().map(Root::effective), self.roots.len())
    }
}

/// One entry's name for a line of text (a listing, a tree): the name itself when it is
/// plain UTF-8; quoted with escapes when it holds a character that could forge the layout
/// or reading order (`quote::is_deceptive`: a newline in a name must not break the layout,
/// U+202E must not reverse it; the quoted form is what a JSON argument would carry);
/// for bytes that are not UTF-8, the readable part and the entry's exact `file://` URI.
pub fn name_text(name: &std::ffi::OsStr, path: &Path) -> String {
    match name.to_str() {
        Some(text) if !text.chars().any(crate::quote::is_deceptive) => text.to_string(),
        Some(text) => format!("{text:?}"),
        None => format!(
            "{} [not UTF-8; exact path: {}]",
            name.to_string_lossy(),
            file_uri_from_path(path)
        ),
    }
}

/// Most roots [`RootSet::describe`] names.
pub(crate) const DESCRIBE_MAX_ROOTS: usize = 10;
/// About the most bytes of paths [`RootSet::describe`] writes.
pub(crate) const DESCRIBE_MAX_BYTES: usize = 1024;

/// The first paths of a list, for messages ([`describe_paths`]): `a, b, c` and how many
/// more there are. `Display` writes `a, b, c and N more`; where to see the others is the
/// caller's to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathList {
    /// The paths named, comma-separated.
    pub named: String,
    /// Paths of the list not named.
    pub more: usize,
}

impl std::fmt::Display for PathList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.named)?;
        if self.more > 0 {
            write!(f, " and {} more", self.more)?;
        }
        Ok(())
    }
}

/// The first paths of a list of `total`, bounded by count and bytes, for messages.
pub fn describe_paths<'a>(paths: impl Iterator<Item = &'a Path>, total: usize) -> PathList {
    let mut out = String::new();
    let mut shown = 0;
    for path in paths {
        if shown == DESCRIBE_MAX_ROOTS || (shown > 0 && out.len() >= DESCRIBE_MAX_BYTES) {
            break;
        }
        if shown > 0 {
            out.push_str(", ");
        }
        let text = path_text(path);
        // One path alone can be 4 KiB: keep its start only.
        match text.char_indices().nth(DESCRIBE_MAX_BYTES / 4) {
            Some((cut, _)) => {
                out.push_str(&text[..cut]);
                out.push('…');
            }
            None => out.push_str(&text),
        }
        shown += 1;
    }
    PathList {
        named: out,
        more: total.saturating_sub(shown),
    }
}
