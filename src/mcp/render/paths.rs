//! How an answer names the files it lists: relative to the root when exactly one directory
//! root is in force (`--paths relative`, the default), else absolute. A relative path is
//! what a model reads fastest and what every tool takes back as it is (a relative argument
//! resolves against the one root); with several roots it could name a file in each, so
//! then every path is absolute. The text and the structured content use the same form; the
//! structured content says once, in `root`, what relative paths are relative to.

use std::cell::Cell;
use std::path::{Component, Path, PathBuf};

use rootgrep_core::config::PathDisplay;
use rootgrep_core::roots::{RootSet, path_text};

/// The way one answer names paths (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Paths {
    /// The one directory root paths are shown relative to; `None`: absolute.
    root: Option<PathBuf>,
    /// Some path was shown relative (the structured content then names the root).
    used: Cell<bool>,
}

impl Paths {
    /// The form for an answer under `roots`.
    pub fn new(roots: &RootSet, display: PathDisplay) -> Paths {
        let root = match (display, roots.roots.as_slice()) {
            (PathDisplay::Relative, [only]) if !only.is_file => only.canonical.clone(),
            _ => None,
        };
        Paths {
            root,
            used: Cell::new(false),
        }
    }

    /// Always absolute (answers that are not about the roots' files).
    pub fn absolute() -> Paths {
        Paths::default()
    }

    /// `path` as this answer shows it: relative to the root when it lies strictly below it
    /// and its relative form is plain text that names it unambiguously, else absolute
    /// ([`path_text`]).
    pub fn show(&self, path: &Path) -> String {
        match self.relative(path) {
            Some(relative) => {
                self.used.set(true);
                relative
            }
            None => path_text(path),
        }
    }

    fn relative(&self, path: &Path) -> Option<String> {
        let rest = path.strip_prefix(self.root.as_ref()?).ok()?;
        let plain = rest
            .components()
            .all(|component| matches!(component, Component::Normal(_)));
        let text = rest.to_str()?;
        // `~…` would be taken back as the home directory, `file:` as a URI.
        let ambiguous = text.starts_with('~') || text.starts_with("file:");
        (plain && !text.is_empty() && !ambiguous).then(|| text.to_string())
    }

    /// Bytes the structured content's `root` may take (0 when paths are absolute).
    pub fn root_len(&self) -> usize {
        self.root.as_deref().map_or(0, |root| {
            crate::mcp::render::json_len(&path_text(root)) + 10
        })
    }

    /// The root the answer's relative paths are relative to, once one was shown relative.
    pub fn root(&self) -> Option<String> {
        self.used
            .get()
            .then(|| self.root.as_deref().map(path_text))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rootgrep_core::roots::{Root, RootSource};

    fn roots(dirs: &[&Path]) -> RootSet {
        let roots = dirs
            .iter()
            .map(|dir| Root::new(dir.to_path_buf(), None))
            .collect();
        RootSet::new(roots, RootSource::CommandLine)
    }

    #[test]
    fn relative_under_one_root_else_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let root = rootgrep_core::roots::canonicalize(dir.path()).unwrap();
        let inside = root.join("src").join("main.rs");
        let one = Paths::new(&roots(&[&root]), PathDisplay::Relative);
        assert_eq!(one.root(), None, "nothing shown yet");
        // Relative with the platform's separator (`src\main.rs` on Windows).
        assert_eq!(
            one.show(&inside),
            path_text(&Path::new("src").join("main.rs"))
        );
        assert_eq!(one.root(), Some(path_text(&root)));
        assert_eq!(one.show(&root), path_text(&root), "the root itself");
        let outside = Path::new("/elsewhere/x.rs");
        assert_eq!(one.show(outside), path_text(outside));
        assert_eq!(one.show(&root.join("~x")), path_text(&root.join("~x")));

        let other = tempfile::tempdir().unwrap();
        let two = Paths::new(&roots(&[&root, other.path()]), PathDisplay::Relative);
        assert_eq!(two.show(&inside), path_text(&inside));
        assert_eq!(two.root(), None);
        let absolute = Paths::new(&roots(&[&root]), PathDisplay::Absolute);
        assert_eq!(absolute.show(&inside), path_text(&inside));
        assert_eq!(absolute.root(), None);
    }
}
