//! Everything between "a list of target paths" and "an open regular file" that is
//! particular to searching: classifying targets, compiling `--glob` overrides and file
//! types, and opening files safely. The parallel walker itself is [`crate::walk`], shared
//! with the file index.
//!
//! Rules enforced here, so both tools share them:
//! - Ignore files (`.gitignore`, `.ignore`, `.git/info/exclude`, global excludes) apply
//!   inside git repositories, as ripgrep does (`.ignore` everywhere); `no_ignore` turns them all off;
//!   hidden entries are skipped unless asked for.
//! - Symlinks inside a walk are never followed (ripgrep's default without `-L`), so a walk
//!   cannot leave the tree it started in, and symlink loops cannot occur.
//! - Special files (FIFOs, sockets, devices) are never opened: the entry's file type is
//!   checked before `open`, and `fstat` on the opened handle is checked again, because a
//!   path can change between the walk and the open.
//! - Per-entry failures (permission denied, vanished, special files) are counted in
//!   [`Stats::skipped_unreadable`] and the walk goes on.
//! - The walk checks [`Control`] before every entry and quits when it is cancelled.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};

use super::error::SearchError;
use crate::walk::Control;
use crate::walk::Stats;

/// A target the caller asked to search, once we know what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Walked with the ignore rules.
    Dir(PathBuf),
    /// "Named explicitly": searched even if ignored, hidden, binary or of another type.
    File(PathBuf),
}

/// Sorts targets into directories and regular files. Anything else (missing, special
/// file, unreadable, a symlink) is counted as unreadable in `stats` and dropped. Targets
/// are canonical (resolved paths, roots), so a target that is a symlink now was swapped
/// since: where it leads is not what was asked for, and it is not followed. Targets inside
/// (or equal to) another directory target are dropped too, so that no file is reported
/// twice when several roots or paths overlap.
pub(crate) fn classify_targets(
    targets: &[PathBuf],
    control: &Control,
    stats: &mut Stats,
) -> Vec<Target> {
    let mut out = Vec::with_capacity(targets.len());
    for path in without_nested(targets) {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => out.push(Target::Dir(path.clone())),
            Ok(meta) if meta.is_file() => out.push(Target::File(path.clone())),
            Ok(_) | Err(_) => {
                tracing::debug!(path = %path.display(), "target skipped: missing, a symlink or not a regular file");
                control.file_examined();
                stats.skipped_unreadable += 1;
            }
        }
    }
    out
}

/// The targets that are not equal to, or inside, an earlier or enclosing target. A file
/// target's own path never encloses anything, and `starts_with` is by whole components.
fn without_nested(targets: &[PathBuf]) -> Vec<&PathBuf> {
    let mut sorted: Vec<&PathBuf> = targets.iter().collect();
    sorted.sort();
    sorted.dedup();
    let mut kept: Vec<&PathBuf> = Vec::with_capacity(sorted.len());
    for path in sorted {
        // Sorted order puts an enclosing directory before everything inside it.
        if !kept.iter().any(|outer| path.starts_with(outer)) {
            kept.push(path);
        }
    }
    kept
}

/// Longest glob accepted, in bytes (a path is at most 4 KiB on Linux).
pub(crate) const MAX_GLOB_BYTES: usize = 4096;

/// Most special characters (`*?[{,`) in one glob: each alternative or wildcard grows the
/// compiled regex, and globset itself can fail badly on huge ones.
pub(crate) const MAX_GLOB_SPECIALS: usize = 256;

/// Refuses a glob too long or too complex to compile, before globset sees it.
pub(crate) fn check_glob(glob: &str) -> Result<(), SearchError> {
    let refuse = |message: String| {
        Err(SearchError::InvalidGlob {
            glob: glob.to_owned(),
            message,
        })
    };
    if glob.len() > MAX_GLOB_BYTES {
        return refuse(format!(
            "too long ({} bytes; globs are limited to {MAX_GLOB_BYTES}); use a shorter \
             pattern, or several globs",
            glob.len()
        ));
    }
    let specials = glob.bytes().filter(|b| b"*?[{,".contains(b)).count();
    if specials > MAX_GLOB_SPECIALS {
        return refuse(format!(
            "too complex ({specials} wildcards, alternatives and classes; at most \
             {MAX_GLOB_SPECIALS}); split it into simpler globs"
        ));
    }
    Ok(())
}

/// Compiles ripgrep type names (`!name` negates) into a file type filter.
pub(crate) fn build_types(names: &[String]) -> Result<Option<Types>, SearchError> {
    if names.is_empty() {
        return Ok(None);
    }
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let known: Vec<String> = builder
        .definitions()
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    for raw in names {
        let (negated, name) = match raw.strip_prefix('!') {
            Some(rest) => (true, rest.trim()),
            None => (false, raw.trim()),
        };
        if !known.iter().any(|k| k == name) {
            return Err(unknown_type(name, &known));
        }
        if negated {
            builder.negate(name);
        } else {
            builder.select(name);
        }
    }
    let types = builder.build().map_err(|e| SearchError::UnknownType {
        name: names.join(","),
        suggestions: vec![e.to_string()],
    })?;
    Ok(Some(types))
}

/// The error for an unknown type, suggesting names that share its first letters (then
/// common ones), so the agent can pick the right one without another round trip.
fn unknown_type(name: &str, known: &[String]) -> SearchError {
    let lower = name.to_lowercase();
    let prefix: String = lower.chars().take(2).collect();
    let mut suggestions: Vec<String> = known
        .iter()
        .filter(|k| !prefix.is_empty() && (k.starts_with(&prefix) || lower.contains(k.as_str())))
        .take(8)
        .cloned()
        .collect();
    for common in [
        "rust", "py", "js", "ts", "go", "java", "c", "cpp", "md", "json",
    ] {
        if suggestions.len() >= 12 {
            break;
        }
        if known.iter().any(|k| k == common) && !suggestions.iter().any(|s| s == common) {
            suggestions.push(common.to_owned());
        }
    }
    SearchError::UnknownType {
        name: name.to_owned(),
        suggestions,
    }
}

/// Compiles `rg --glob` filters rooted at `dir`. Returns `None` when there are none.
pub(crate) fn build_overrides(
    dir: &Path,
    globs: &[String],
) -> Result<Option<Override>, SearchError> {
    if globs.is_empty() {
        return Ok(None);
    }
    if globs.len() > MAX_GLOB_SPECIALS {
        return Err(SearchError::InvalidGlob {
            glob: globs.join(" "),
            message: format!(
                "too many globs ({}; at most {MAX_GLOB_SPECIALS})",
                globs.len()
            ),
        });
    }
    let mut builder = OverrideBuilder::new(dir);
    for glob in globs {
        check_glob(glob)?;
        builder.add(glob).map_err(|e| glob_error(glob, e))?;
    }
    let built = builder
        .build()
        .map_err(|e| glob_error(&globs.join(" "), e))?;
    Ok(Some(built))
}

fn glob_error(glob: &str, err: ignore::Error) -> SearchError {
    let message = match err {
        ignore::Error::Glob { err, .. } => err,
        other => other.to_string(),
    };
    SearchError::InvalidGlob {
        glob: glob.to_owned(),
        message,
    }
}

/// Opens a path for reading only if it is a regular file, checked on the open handle.
pub(crate) fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    // No symlink anywhere on the path (a directory swapped for a link after the walk saw
    // it cannot lead the search outside its root), and O_NONBLOCK so a file swapped for a
    // FIFO cannot block; `fstat` below then refuses anything but a regular file.
    let file = crate::files::safe::open_read(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok((file, meta))
}

/// A reader that fails once the search is cancelled, so that even a long file with no
/// matches (where no sink callback runs) stops within one buffer read.
pub(crate) struct CancellableReader<'a, R> {
    inner: R,
    control: &'a Control,
}

impl<'a, R> CancellableReader<'a, R> {
    pub fn new(inner: R, control: &'a Control) -> Self {
        Self { inner, control }
    }
}

impl<R: Read> Read for CancellableReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.control.is_cancelled() {
            return Err(io::Error::other("search cancelled"));
        }
        self.inner.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_repeated_targets_are_dropped() {
        let t = |s: &str| PathBuf::from(s);
        let targets = [t("/r/a/b"), t("/r/a"), t("/r/ab"), t("/r/a"), t("/s/f.rs")];
        let kept = without_nested(&targets);
        assert_eq!(kept, [&t("/r/a"), &t("/r/ab"), &t("/s/f.rs")]);
    }

    #[test]
    fn unknown_type_suggests_similar_names() {
        let err = build_types(&["rusty".to_owned()]).unwrap_err();
        let SearchError::UnknownType { name, suggestions } = &err else {
            panic!("wrong error {err:?}");
        };
        assert_eq!(name, "rusty");
        assert!(suggestions.iter().any(|s| s == "rust"), "{suggestions:?}");
        assert!(err.to_string().contains("valid types include"));
    }

    #[test]
    fn negated_and_plain_types_compile() {
        let types = build_types(&["rust".into(), "!py".into()])
            .unwrap()
            .unwrap();
        assert!(types.matched("a.rs", false).is_whitelist());
        assert!(types.matched("a.py", false).is_ignore());
    }

    #[test]
    fn bad_glob_names_the_glob() {
        let err = build_overrides(Path::new("/tmp"), &["src/{a".into()]).unwrap_err();
        let SearchError::InvalidGlob { glob, message } = err else {
            panic!()
        };
        assert_eq!(glob, "src/{a");
        assert!(message.contains("unclosed"), "{message}");
    }

    #[test]
    fn cancelled_reader_fails() {
        let control = Control::new();
        let mut reader = CancellableReader::new(&b"abc"[..], &control);
        let mut buf = [0; 8];
        assert_eq!(reader.read(&mut buf).unwrap(), 3);
        control.cancel();
        assert!(reader.read(&mut buf).is_err());
    }
}
