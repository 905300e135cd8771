//! Behaviour tests of the search engine on fixture trees built in temporary directories.
//!
//! Each submodule covers one area, named for the behaviour it checks. Fixtures are written
//! by the test itself (see [`Tree`]) so every file's purpose is visible next to the
//! assertion that depends on it.

mod budget;
mod errors;
mod files;
mod filters;
mod glob_tool;
#[cfg(unix)]
mod indexed;
mod modes;
mod paging;
#[cfg(unix)]
mod robustness;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::{
    FileCount, GlobOutcome, GlobQuery, GrepEntries, GrepMatch, GrepOutcome, GrepQuery, OutputMode,
    glob, grep,
};
use crate::walk::Control;

/// A temporary directory tree; paths in assertions are relative to its (canonical) root.
pub struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    pub fn new() -> Self {
        // Not the default ".tmp" prefix: a hidden root would make hidden-file tests murky.
        let dir = tempfile::Builder::new()
            .prefix("rootgrep-test")
            .tempdir()
            .unwrap();
        let root = dir.path().canonicalize().unwrap();
        Self { _dir: dir, root }
    }

    /// Writes a file (creating parent directories) and returns its absolute path.
    pub fn file(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        path
    }

    /// The absolute path of `rel` (written with `/`), in the platform's own form.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root
            .join(rel.replace('/', std::path::MAIN_SEPARATOR_STR))
    }

    pub fn root(&self) -> Vec<PathBuf> {
        vec![self.root.clone()]
    }

    /// Sets a file's modification time to `secs` seconds after the epoch.
    pub fn touch(&self, rel: &str, secs: u64) {
        let file = fs::File::options()
            .append(true)
            .open(self.path(rel))
            .unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
            .unwrap();
    }

    /// `path` relative to the root, with `/` between components on every platform (the
    /// expectations are written that way; Windows joins them with `\`).
    pub fn rel(&self, path: &Path) -> String {
        let rel = path
            .strip_prefix(&self.root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if cfg!(windows) {
            rel.replace('\\', "/")
        } else {
            rel
        }
    }
}

pub fn run(query: &GrepQuery, targets: &[PathBuf]) -> GrepOutcome {
    grep(query, targets, &Control::new()).unwrap()
}

pub(crate) fn run_glob(query: &GlobQuery, targets: &[PathBuf]) -> GlobOutcome {
    glob(query, targets, &Control::new()).unwrap()
}

pub fn content(pattern: &str) -> GrepQuery {
    GrepQuery {
        mode: OutputMode::Content,
        ..GrepQuery::new(pattern)
    }
}

/// Relative paths of a files-with-matches outcome.
pub(crate) fn file_list(tree: &Tree, outcome: &GrepOutcome) -> Vec<String> {
    match &outcome.entries {
        GrepEntries::Files(files) => files.iter().map(|p| tree.rel(p)).collect(),
        other => panic!("expected files, got {other:?}"),
    }
}

pub fn matches(outcome: &GrepOutcome) -> &[GrepMatch] {
    match &outcome.entries {
        GrepEntries::Matches(m) => m,
        other => panic!("expected matches, got {other:?}"),
    }
}

pub fn counts(tree: &Tree, outcome: &GrepOutcome) -> Vec<(String, u64)> {
    match &outcome.entries {
        GrepEntries::Counts(c) => c
            .iter()
            .map(|FileCount { path, count }| (tree.rel(path), *count))
            .collect(),
        other => panic!("expected counts, got {other:?}"),
    }
}

/// `rel:line:text` rows of a content outcome, for compact assertions.
pub fn rows(tree: &Tree, outcome: &GrepOutcome) -> Vec<String> {
    matches(outcome)
        .iter()
        .map(|m| format!("{}:{}:{}", tree.rel(&m.path), m.line, m.text))
        .collect()
}

pub(crate) fn glob_list(tree: &Tree, outcome: &GlobOutcome) -> Vec<String> {
    outcome.files.iter().map(|f| tree.rel(&f.path)).collect()
}
