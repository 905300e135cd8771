//! What gix opens to find a repository and resolve its HEAD, checked before it does: a
//! FIFO, a device or a socket in their place would block the reading thread forever (gix
//! opens files as files), so any of them that exists must be a regular file (`HEAD`,
//! `config`, `commondir`, `packed-refs`, the alternates list, the branch HEAD names, the
//! pack directory's entries) or a directory (`.git`, `refs`, `objects`). A `.git` file (a
//! linked work tree, a submodule) is followed to the git directory it names.

use std::fs::Metadata;
use std::path::Path;

/// Most bytes of a `.git` file, a `commondir` file or `HEAD` read here.
const MAX_POINTER_BYTES: u64 = 4096;

/// Why a repository is not read: the first path in it that is not what it must be.
pub(crate) fn check_upward(root: &Path) -> Result<(), String> {
    for dir in root.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            dot_git
        } else if meta.is_file() {
            let pointer = read_small(&dot_git, &meta)?;
            let named = pointer.trim().strip_prefix("gitdir:").map(str::trim);
            let Some(named) = named else {
                return Ok(()); // not a pointer: gix decides what it is
            };
            dir.join(named)
        } else {
            return Err(special(&dot_git));
        };
        return check_git_dir(&git_dir);
    }
    Ok(())
}

/// The files of `git_dir` (and of its common directory) that finding it and resolving
/// `HEAD` open.
pub(crate) fn check_git_dir(git_dir: &Path) -> Result<(), String> {
    for name in ["HEAD", "config", "commondir"] {
        regular_or_absent(&git_dir.join(name))?;
    }
    let common = match std::fs::symlink_metadata(git_dir.join("commondir")) {
        Ok(meta) => {
            let named = read_small(&git_dir.join("commondir"), &meta)?;
            git_dir.join(named.trim())
        }
        Err(_) => git_dir.to_path_buf(),
    };
    for name in ["config", "packed-refs", "objects/info/alternates"] {
        regular_or_absent(&common.join(name))?;
    }
    check_head(git_dir, &common)?;
    let pack = common.join("objects/pack");
    if let Ok(entries) = std::fs::read_dir(&pack) {
        for entry in entries.flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).map_err(|e| e.to_string())?;
            if !(meta.is_file() || meta.is_dir()) {
                return Err(special(&path));
            }
        }
    }
    Ok(())
}

/// `HEAD` and the loose branch it names (what every query resolves).
pub(crate) fn check_head(git_dir: &Path, common: &Path) -> Result<(), String> {
    let head = git_dir.join("HEAD");
    let Ok(meta) = std::fs::symlink_metadata(&head) else {
        return Ok(());
    };
    let text = read_small(&head, &meta)?;
    if let Some(name) = text.trim().strip_prefix("ref:").map(str::trim) {
        // A ref outside refs/ is gix's to refuse; only the path it would open is looked at.
        if name.starts_with("refs/") && !name.split('/').any(|part| part == "..") {
            regular_or_absent(&common.join(name))?;
        }
        regular_or_absent(&common.join("packed-refs"))?;
    }
    Ok(())
}

fn regular_or_absent(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => Err(special(path)),
        Err(_) => Ok(()),
    }
}

fn read_small(path: &Path, meta: &Metadata) -> Result<String, String> {
    if !meta.is_file() {
        return Err(special(path));
    }
    if meta.len() > MAX_POINTER_BYTES {
        return Err(format!(
            "{} is larger than a git pointer file",
            path.display()
        ));
    }
    // Opened without blocking and checked again open: the path may have been swapped.
    let mut file = crate::ignores::open_nonblocking(path).map_err(|e| e.to_string())?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(special(path));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut file, MAX_POINTER_BYTES),
        &mut bytes,
    )
    .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn special(path: &Path) -> String {
    let name = path.file_name().unwrap_or(path.as_os_str());
    format!("{} is not a regular file", name.to_string_lossy())
}
