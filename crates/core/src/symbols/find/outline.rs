//! `outline`: the definitions of files in source order, with nesting. Each file target is
//! outlined, and a directory target's supported files (walked like `glob`); files are
//! parsed in path order, a batch at a time, until the page's definitions are known.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use super::matching::{MAX_CANDIDATES, kind_allowed, supported_names};
use crate::mutex::lock;
use crate::search::{self, SearchError};
use crate::symbols::extract::Definition;
use crate::symbols::lang::{Lang, rg_types};
use crate::symbols::parse::{FileError, SymbolStats, parse_all};
use crate::walk::Control;

/// One file's definitions.
#[derive(Clone, Debug)]
pub struct FileOutline {
    pub path: PathBuf,
    pub lang: Lang,
    pub defs: Vec<Definition>,
    /// Why the file has no definitions, when it could not be parsed.
    pub error: Option<FileError>,
}

/// The outline of `targets`: each file target, and for a directory target its supported
/// files (walked like `glob`, sorted by path). Files are parsed in path order, a batch at
/// a time, until `offset + limit` definitions are known; `Ok((files, total, more))` where
/// `total` is `Some` when every file was parsed.
pub fn outline(
    targets: &[PathBuf],
    kinds: &[String],
    offset: usize,
    limit: usize,
    threads: usize,
    control: &Control,
    abort: &AtomicUsize,
) -> Result<OutlineOutcome, SearchError> {
    let started = Instant::now();
    let mut files: Vec<(PathBuf, Lang)> = Vec::new();
    let mut capped = false;
    for target in targets {
        if target.is_dir() {
            let mut glob = search::GlobQuery::new("**");
            glob.types = rg_types(&[]);
            glob.limit = Some(MAX_CANDIDATES);
            glob.threads = threads;
            let found = search::glob(&glob, std::slice::from_ref(target), control)?;
            capped |= found.truncated;
            files.extend(
                found
                    .files
                    .into_iter()
                    .filter_map(|f| Lang::from_path(&f.path).map(|lang| (f.path, lang))),
            );
        } else if let Some(lang) = Lang::from_path(target) {
            files.push((target.clone(), lang));
        } else {
            return Err(SearchError::UnknownType {
                name: format!(
                    "{} (no symbols for this file type; supported: {})",
                    crate::roots::path_text(target),
                    supported_names()
                ),
                suggestions: Vec::new(),
            });
        }
    }
    let want = offset.saturating_add(limit.max(1));
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut done = 0usize;
    let mut stats = SymbolStats::default();
    let batch = (threads.max(1) * 8).max(16);
    while done < files.len() && seen <= want && !control.is_cancelled() {
        let chunk = &files[done..(done + batch).min(files.len())];
        let results = Mutex::new(Vec::new());
        parse_all(
            chunk,
            threads,
            control,
            abort,
            &mut stats,
            None,
            |path, lang, parsed| {
                let (defs, error) = match parsed {
                    Ok(defs) => (defs, None),
                    Err(err) => (Vec::new(), Some(err)),
                };
                lock(&results).push(FileOutline {
                    path: path.to_path_buf(),
                    lang,
                    defs,
                    error,
                });
            },
        );
        let mut results = results
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        results.sort_by(|a: &FileOutline, b| crate::search::retain::path_cmp(&a.path, &b.path));
        for mut file in results {
            file.defs.retain(|d| kind_allowed_outline(kinds, d.kind));
            seen += file.defs.len();
            out.push(file);
        }
        done += chunk.len();
    }
    stats.candidates = files.len() as u64;
    stats.candidates_capped = capped;
    stats.elapsed = started.elapsed();
    Ok(OutlineOutcome {
        files: out,
        complete: done >= files.len() && !capped,
        stats,
        cancelled: control.is_cancelled(),
    })
}

/// The answer of [`outline`].
#[derive(Clone, Debug)]
pub struct OutlineOutcome {
    /// Parsed files in path order (files with no definitions included).
    pub files: Vec<FileOutline>,
    /// Every file was parsed (so the definition count is the total).
    pub complete: bool,
    pub stats: SymbolStats,
    pub cancelled: bool,
}

fn kind_allowed_outline(kinds: &[String], kind: &str) -> bool {
    // The outline shows `impl` blocks: they are what nests a type's methods.
    kinds.is_empty() || kind_allowed(kinds, kind)
}
