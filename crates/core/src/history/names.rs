//! The names a past commit's diff touched, read when a query first needs them (only the few
//! commits most like a query do): per changed file below the root, a line diff of its two
//! versions (`similar`), and the identifiers of each hunk's header — the nearest line
//! above the hunk starting with a letter, `_` or `$`, git's default for a hunk's function
//! — weighing [`HEADER`], and those of the changed lines weighing [`CHANGED`].
//!
//! Bounded: [`MAX_FILES`] files of a commit, blobs up to [`MAX_BLOB_BYTES`] and
//! [`MAX_COMMIT_BYTES`] in all,
//! [`MAX_CHANGED_LINES`] changed lines in all, and [`DIFF_TIMEOUT`] per file's diff.

use std::collections::HashMap;

use super::read::{Changed, Differ, Repo};
use gix::ObjectId;

/// Weight of a name in a hunk's header (the definition the change is in).
pub(crate) const HEADER: f32 = 1.0;
/// Weight of a name on a changed line.
pub(crate) const CHANGED: f32 = 0.3;
const MAX_FILES: usize = 8;
const MAX_BLOB_BYTES: usize = 256 << 10;
/// Bytes of blobs one commit's names may read in all (the first question like a large
/// refactor waits for them).
const MAX_COMMIT_BYTES: usize = 1 << 20;
const MAX_CHANGED_LINES: usize = 4_000;
/// Time one file's line diff may take before it settles for a coarser one (`similar`'s
/// deadline): a query waits for it.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(20);
/// Lines above a hunk looked at for its header.
const MAX_HEADER_SEARCH: usize = 2_000;

/// Name → weight of the diff of `commit` against its one parent (empty when it has none or
/// cannot be read).
pub(crate) fn touched(repo: &Repo, commit: ObjectId) -> HashMap<String, f32> {
    let mut names = HashMap::new();
    let _ = read_touched(repo, commit, &mut names);
    names
}

fn read_touched(repo: &Repo, id: ObjectId, names: &mut HashMap<String, f32>) -> Option<()> {
    let git = repo.repo.to_thread_local();
    let commit = git.find_commit(id).ok()?;
    let parent = commit.parent_ids().next()?.detach();
    let tree = commit.tree_id().ok()?.detach();
    let changes = Differ::default().changes(&git, parent, tree).ok()?;
    let mut budget = MAX_CHANGED_LINES;
    let mut files = 0;
    let mut bytes = 0;
    for change in changes.iter().map(Changed::of) {
        if !change.mode.is_blob() || !repo.holds(change.path) {
            continue;
        }
        files += 1;
        if files > MAX_FILES || budget == 0 {
            break;
        }
        // Sizes first (the object's header): a blob over the bounds is never inflated.
        let size = |id: Option<ObjectId>| {
            id.map_or(Some(0), |id| {
                git.find_header(id).ok().map(|h| h.size() as usize)
            })
        };
        let (Some(old_size), Some(new_size)) = (size(change.before), size(change.after)) else {
            continue;
        };
        if old_size.max(new_size) > MAX_BLOB_BYTES || bytes + old_size + new_size > MAX_COMMIT_BYTES
        {
            continue;
        }
        bytes += old_size + new_size;
        let text = |id: Option<ObjectId>| -> Option<String> {
            let Some(id) = id else {
                return Some(String::new());
            };
            let blob = git.find_object(id).ok()?;
            Some(String::from_utf8_lossy(&blob.data).into())
        };
        let (Some(before), Some(after)) = (text(change.before), text(change.after)) else {
            continue;
        };
        diff_names(&before, &after, &mut budget, names);
    }
    Some(())
}

/// Adds the names of the hunks of `before` → `after` to `names`, spending `budget` changed
/// lines.
pub(crate) fn diff_names(
    before: &str,
    after: &str,
    budget: &mut usize,
    names: &mut HashMap<String, f32>,
) {
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after);
    let old_lines: Vec<&str> = before.lines().collect();
    let new_lines: Vec<&str> = after.lines().collect();
    for op in diff.ops() {
        if matches!(op.tag(), similar::DiffTag::Equal) || *budget == 0 {
            continue;
        }
        let (old, new) = (op.old_range(), op.new_range());
        if let Some(header) = header_above(&old_lines, old.start) {
            add_names(header, HEADER, names);
        }
        for line in (old_lines.get(old).into_iter().flatten())
            .chain(new_lines.get(new).into_iter().flatten())
        {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            add_names(line, CHANGED, names);
        }
    }
}

/// git's default hunk header: the nearest line above `at` starting with a letter, `_` or
/// `$`.
fn header_above<'a>(lines: &[&'a str], at: usize) -> Option<&'a str> {
    let at = at.min(lines.len());
    (lines[at.saturating_sub(MAX_HEADER_SEARCH)..at].iter().rev())
        .find(|line| {
            line.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'$')
        })
        .copied()
}

/// Each identifier of three characters or more in `line` gets at least `weight`.
fn add_names(line: &str, weight: f32, names: &mut HashMap<String, f32>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if i - start >= 3 {
                let held = names.entry(line[start..i].to_string()).or_default();
                *held = held.max(weight);
            }
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hunk_names_its_header_and_its_changed_lines() {
        let before = "int helper(void)\n{\n  return 1;\n}\n\nstatic int open_port(int fd)\n{\n  int rc = 0;\n  return rc;\n}\n";
        let after = "int helper(void)\n{\n  return 1;\n}\n\nstatic int open_port(int fd)\n{\n  int rc = check_fd(fd);\n  return rc;\n}\n";
        let mut names = HashMap::new();
        let mut budget = 100;
        diff_names(before, after, &mut budget, &mut names);
        assert_eq!(names.get("open_port"), Some(&HEADER));
        assert_eq!(names.get("check_fd"), Some(&CHANGED));
        assert_eq!(
            names.get("int"),
            Some(&HEADER),
            "the header's words weigh as it"
        );
        assert_eq!(
            names.get("helper"),
            None,
            "an unchanged definition is not named"
        );
        assert_eq!(budget, 98, "one line removed, one added");
    }
}
