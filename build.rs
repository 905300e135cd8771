//! Build script: records the git commit the binary is built from, for `rootgrep --version`.
//! The commit is `$ROOTGREP_COMMIT` when set (a packager building from a tarball), else
//! `git rev-parse --short HEAD` when this package is the top of a git checkout, else
//! `unknown` (a crates.io build: no `.git`, or git not installed). Only git's own command
//! is run; nothing is downloaded and no crate is needed.

// A build script speaks to cargo on stdout.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ROOTGREP_COMMIT");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = std::env::var("ROOTGREP_COMMIT")
        .ok()
        .filter(|commit| !commit.trim().is_empty())
        .or_else(|| git_commit(&manifest))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=ROOTGREP_COMMIT={}", commit.trim());
}

/// `git ARGS` run in `dir`: its trimmed stdout when it succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The short commit of HEAD, when `manifest` is the top of a git work tree (not merely
/// inside one: a package unpacked under another repository, as `cargo package` and vendoring
/// do, must not take that repository's commit). Asks cargo to run this again when HEAD
/// moves: the files that name the commit are watched.
fn git_commit(manifest: &Path) -> Option<String> {
    let top = git(manifest, &["rev-parse", "--show-toplevel"])?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(&top), manifest) {
        return None;
    }
    let commit = git(manifest, &["rev-parse", "--short", "HEAD"])?;
    // HEAD names a branch whose ref is a loose file or a line of packed-refs; watch the
    // ones that exist (a missing path would make cargo run this script on every build).
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(manifest, &["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(manifest, &["rev-parse", "--git-path", &name]) {
            let path = manifest.join(path);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    Some(commit)
}
