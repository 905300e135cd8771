//! `rootgrep doctor [OPTIONS] [DIR]...`: what rootgrep needs on this machine, checked, with
//! the way to fix each problem found. It looks at the roots a server started here with the
//! same DIRs and options would serve (resolved as serving resolves them: DIRs, else the
//! working directory, within `--confine`), the watcher's limits (`doctor/inotify.rs`, Linux:
//! a watch per directory under the roots, an instance per server), the cache directory
//! (`--cache-dir` or the user's), and the host config files that could start rootgrep
//! (`doctor/hosts.rs`). It only reads, except for a probe file created and removed at once
//! to learn whether the cache directory is writable. The report is text that `main` prints;
//! the exit status is 1 when a problem was found, else 0.

mod hosts;
#[cfg(target_os = "linux")]
mod inotify;
mod report;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rootgrep::cli::{self, Options};
use rootgrep_core::roots::{RootSource, choose_roots};

use report::{Finding, Report};

/// Runs every check: the report's text (for stdout) and the exit status.
pub(crate) fn run(options: &Options, dirs: &[PathBuf]) -> (String, ExitCode) {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .ok()
        .map(|exe| PathBuf::from(cli::plain_path(&exe.to_string_lossy())));
    let mut report = Report {
        heading: vec![format!("rootgrep {}", cli::VERSION)],
        ..Report::default()
    };
    report.sections.push(("binary", binary(exe.as_deref())));
    let (root_findings, served) = roots(options, dirs);
    report.sections.push(("roots", root_findings));
    report
        .sections
        .push(("watching", watching(options, &served)));
    report.sections.push(("cache", cache(options)));
    let env = |name: &str| std::env::var_os(name);
    let mut projects: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
    projects.extend(served.iter().filter(|root| root.is_dir()).cloned());
    projects.dedup();
    report
        .sections
        .push(("hosts", hosts::check(&env, &projects, exe.as_deref())));
    let code = if report.problems() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    (report.render(), code)
}

/// This binary: where it is, whether `cargo clean` would remove it, and whether `rootgrep`
/// on PATH is this one.
fn binary(exe: Option<&Path>) -> Vec<Finding> {
    let Some(exe) = exe else {
        return vec![Finding::note("this binary's path is unknown")];
    };
    let mut findings = vec![Finding::ok(exe.display().to_string())];
    if crate::hostconfig::build_dir_note(exe).is_some() {
        findings.push(Finding::advice(
            "a build in a cargo target directory, which `cargo clean` removes: host configs \
             should not point here",
            "cargo install --locked --path . (then run the installed rootgrep doctor)",
        ));
    }
    let env = |name: &str| std::env::var_os(name);
    match hosts::on_path("rootgrep", &env) {
        Some(found) if hosts::same_file(&found, exe) => {
            findings.push(Finding::ok("the rootgrep found on PATH"));
        }
        Some(found) => findings.push(Finding::note(format!(
            "the rootgrep on PATH is another one: {}",
            found.display()
        ))),
        None => findings.push(Finding::note(
            "no rootgrep on PATH (hosts get the absolute path from print-config, so they do \
             not need it; for your shell, add cargo's bin directory to PATH)",
        )),
    }
    findings
}

/// The roots a server started here would serve, and their canonical paths.
fn roots(options: &Options, dirs: &[PathBuf]) -> (Vec<Finding>, Vec<PathBuf>) {
    let config = match cli::config(options, dirs) {
        Ok(config) => config,
        Err(err) => {
            return (
                vec![Finding::problem(
                    format!("a server started with these arguments would not start: {err}"),
                    "change the DIR or option named above in the host config's args",
                )],
                Vec::new(),
            );
        }
    };
    let (set, warnings) = choose_roots(None, &config.dirs, &config.cwd, &config.confine);
    let mut findings: Vec<Finding> = warnings.into_iter().map(Finding::note).collect();
    let mut served = Vec::new();
    for root in &set.roots {
        let shown = root.path.display();
        match &root.canonical {
            None => findings.push(Finding::problem(
                format!(
                    "{shown} does not exist: it is served as a root that does not exist yet \
                     (list_roots says so)"
                ),
                "create it, or pass the directory you meant as DIR",
            )),
            Some(path) => {
                let kind = if root.is_file {
                    "a file (served alone, not indexed)"
                } else {
                    "a directory"
                };
                findings.push(Finding::ok(format!("{}: {kind}", path.display())));
                served.push(path.clone());
            }
        }
    }
    findings.push(Finding::note(source_note(set.source)));
    (findings, served)
}

/// What the roots' source means for a server started by a host.
fn source_note(source: RootSource) -> &'static str {
    match source {
        RootSource::WorkingDirectory => {
            "source: the working directory. A host that sends roots replaces it with its \
             own; one that does not starts rootgrep in a directory of its choosing, which may \
             not be this one: pass the project as DIR (rootgrep print-config HOST DIR)"
        }
        RootSource::CommandLine => {
            "source: the DIR arguments (a host that sends roots replaces them with its own)"
        }
        RootSource::Confine => {
            "source: the --confine directories (every other root was outside them)"
        }
        RootSource::Client => "source: the client",
    }
}

/// The watcher: off, inotify's limits (Linux), or a backend without a per-user limit.
fn watching(options: &Options, served: &[PathBuf]) -> Vec<Finding> {
    if options.no_watch {
        return vec![Finding::note(
            "--no-watch: no live index and no change notifications; every search walks the \
             disk",
        )];
    }
    platform_watching(served)
}

#[cfg(target_os = "linux")]
fn platform_watching(served: &[PathBuf]) -> Vec<Finding> {
    inotify::check(served)
}

#[cfg(not(target_os = "linux"))]
fn platform_watching(_served: &[PathBuf]) -> Vec<Finding> {
    let backend = if cfg!(target_os = "macos") {
        "FSEvents"
    } else if cfg!(windows) {
        "ReadDirectoryChangesW"
    } else {
        "this system's watcher"
    };
    vec![Finding::ok(format!(
        "{backend}: no per-user watch limit to check"
    ))]
}

/// The cache directory: known, a directory, writable; what it holds.
fn cache(options: &Options) -> Vec<Finding> {
    if options.no_cache {
        return vec![Finding::note(
            "--no-cache: the indexes are kept in memory only; a restarted server parses every \
             file again",
        )];
    }
    let store = match cli::store(options) {
        Ok(Some(store)) => store,
        Ok(None) => {
            return vec![Finding::problem(
                "no cache directory known (HOME, or LOCALAPPDATA on Windows, is unset): the \
                 indexes would be kept in memory only",
                "pass --cache-dir DIR (in the host config's args)",
            )];
        }
        Err(err) => {
            return vec![Finding::problem(
                err.to_string(),
                "pass an absolute --cache-dir",
            )];
        }
    };
    let dir = store.dir();
    let unwritable = |err: std::io::Error, at: &Path| {
        Finding::problem(
            format!(
                "{} cannot be written ({err}): indexes would not be kept between runs",
                at.display()
            ),
            format!(
                "make it writable for this user, or pass --cache-dir DIR (in the host \
                 config's args); the cache is {}",
                dir.display()
            ),
        )
    };
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {
            if let Err(err) = probe_write(dir) {
                return vec![unwritable(err, dir)];
            }
            let entries = match store.list() {
                Ok(entries) => entries,
                Err(err) => {
                    return vec![Finding::problem(
                        format!("the index store is refused: {err}"),
                        "remove it (it may have been planted by another user), or pass \
                         --cache-dir DIR (in the host config's args)",
                    )];
                }
            };
            let total: u64 = entries.iter().map(|entry| entry.bytes).sum();
            let limit = match options.cache_max_mb {
                Some(mb) => format!("at most {mb} MiB (--cache-max-mb)"),
                None => format!(
                    "the served roots' indexes and at most {} MiB of others",
                    rootgrep_core::store::DEFAULT_MAX_MB
                ),
            };
            let mut findings = vec![Finding::ok(format!(
                "{}: writable, {} entries, {} of {limit}",
                dir.display(),
                entries.len(),
                rootgrep_core::quote::byte_size(total),
            ))];
            let junk = entries.iter().filter(|entry| entry.root.is_none()).count();
            if junk > 0 {
                findings.push(Finding::advice(
                    format!("{junk} entries describe no root (left by an interrupted write)"),
                    "rootgrep cache clear (entries a running server writes are kept)",
                ));
            }
            let gone = entries.iter().filter(|entry| entry.gone).count();
            if gone > 0 {
                findings.push(Finding::advice(
                    format!("{gone} entries are of roots that are gone"),
                    "rootgrep cache clear --missing",
                ));
            }
            findings
        }
        Ok(_) => vec![Finding::problem(
            format!("{} exists but is not a directory", dir.display()),
            "remove it, or pass --cache-dir DIR (in the host config's args)",
        )],
        Err(_) => {
            let parent = dir.ancestors().skip(1).find(|at| at.is_dir());
            match parent.map(|at| (at, probe_write(at))) {
                Some((_, Ok(()))) => vec![Finding::ok(format!(
                    "{}: not created yet; the first server creates it",
                    dir.display()
                ))],
                Some((at, Err(err))) => vec![unwritable(err, at)],
                None => vec![Finding::problem(
                    format!("{}: no existing directory above it", dir.display()),
                    "pass --cache-dir DIR (in the host config's args)",
                )],
            }
        }
    }
}

/// Creates and removes a file in `dir`: whether this user can write there.
fn probe_write(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".rootgrep-doctor-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        probe_write(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(probe_write(&dir.path().join("missing")).is_err());
    }
}
