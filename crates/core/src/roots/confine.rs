//! The operator's outer boundary ([`Confine`]) and [`choose_roots`], which picks the roots in
//! force from the client, the command line, the working directory and the confine
//! directories, in that order of precedence.

use super::place::{canonicalize, path_text, within};
use super::resolve::canonicalize_lenient;
use super::set::{Root, RootSet, RootSource};
use std::io;
use std::path::{Path, PathBuf};

/// Operator-set outer boundary (`--confine`): nothing outside it is ever touched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Confine {
    /// Canonical confine directories; empty means "no confinement".
    pub dirs: Vec<PathBuf>,
}

impl Confine {
    /// Canonicalises the given directories; a missing one is an error (a typo in an operator
    /// flag must not silently widen or empty the boundary).
    pub fn new(dirs: &[PathBuf]) -> io::Result<Confine> {
        let mut canonical = Vec::new();
        for dir in dirs {
            let path = canonicalize(dir).map_err(|err| {
                io::Error::new(err.kind(), format!("--confine {}: {err}", dir.display()))
            })?;
            canonical.push(path);
        }
        Ok(Confine { dirs: canonical })
    }

    /// True when some `--confine` directory was given.
    pub fn is_active(&self) -> bool {
        !self.dirs.is_empty()
    }

    /// True when there is no confinement or the canonical path lies inside it.
    pub fn allows(&self, canonical: &Path) -> bool {
        !self.is_active() || self.dirs.iter().any(|dir| within(canonical, dir))
    }
}

/// Picks the roots in force from the sources in order of precedence — the client's roots,
/// then the command-line directories, then the working directory — keeping only roots
/// inside `--confine` (when set). The first source left non-empty wins.
///
/// `client` is `Some` once a client that declared the `roots` capability answered: then an
/// empty list means *no access* (PRODUCT §2): the `DIR` arguments still apply (the operator
/// chose them), but the working directory is never served in their place, and without
/// `DIR`s the set is empty. Roots sent but all outside `--confine` give way to the `DIR`s,
/// then to the confine directories, never to the working directory. `None` (no
/// roots capability, or no answer yet) falls back to the `DIR` arguments, then the working
/// directory; when all of those are outside `--confine`, the confine directories themselves
/// are the workspace. Returns the set and one warning per root dropped.
pub fn choose_roots(
    client: Option<Vec<Root>>,
    command_line: &[PathBuf],
    cwd: &Path,
    confine: &Confine,
) -> (RootSet, Vec<String>) {
    let mut warnings = Vec::new();
    let mut keep = |roots: Vec<Root>, source: RootSource| -> Option<RootSet> {
        let kept: Vec<Root> = roots
            .into_iter()
            .filter(|root| {
                let judged = root
                    .canonical
                    .clone()
                    .or_else(|| canonicalize_lenient(&root.path).ok().map(|(p, _)| p))
                    .unwrap_or_else(|| root.path.clone());
                let inside = confine.allows(&judged);
                if !inside {
                    warnings.push(format!(
                        "root {} ({}) is outside --confine and was dropped",
                        path_text(&root.path),
                        source.label()
                    ));
                }
                inside
            })
            .collect();
        (!kept.is_empty()).then(|| RootSet::new(kept, source))
    };
    let from_paths = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| Root::new(p.clone(), None))
            .collect::<Vec<_>>()
    };
    let chosen = match client {
        Some(roots) => {
            let sent = !roots.is_empty();
            keep(roots, RootSource::Client)
                .or_else(|| keep(from_paths(command_line), RootSource::CommandLine))
                .unwrap_or_else(|| {
                    // Roots sent but all outside --confine: the operator's confine
                    // directories, as for the other sources; nothing sent: nothing served.
                    if sent && confine.is_active() {
                        RootSet::new(from_paths(&confine.dirs), RootSource::Confine)
                    } else {
                        RootSet::new(Vec::new(), RootSource::Client)
                    }
                })
        }
        None => keep(from_paths(command_line), RootSource::CommandLine)
            .or_else(|| {
                keep(
                    from_paths(&[cwd.to_path_buf()]),
                    RootSource::WorkingDirectory,
                )
            })
            .unwrap_or_else(|| RootSet::new(from_paths(&confine.dirs), RootSource::Confine)),
    };
    (chosen, warnings)
}
