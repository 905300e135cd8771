//! `rootgrep doctor` on Linux: inotify's per-user limits against what a server on these
//! roots needs. The watcher watches every directory under each root (not only those
//! searched: ignored directories too, symlinks not followed) plus one sentinel directory
//! of its barrier, all in one inotify instance per server. The limits are read from
//! `/proc/sys/fs/inotify`, what this user's other processes already hold from
//! `/proc/PID/fd` and `/proc/PID/fdinfo` (watches and instances count per user); a root
//! over the limit is not watched (searches walk the disk, no change notifications).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::report::Finding;

/// Most directories counted under the roots; past it the count says "more than".
const COUNT_CAP: u64 = 2_000_000;

/// `fs.inotify.max_user_watches` suggested at least (what many distributions now ship).
const SUGGESTED_WATCHES: u64 = 524_288;

/// `fs.inotify.max_user_instances` suggested when too few are free.
const SUGGESTED_INSTANCES: u64 = 1024;

/// Free instances below which a note says so: each server (one per host window or
/// session) takes one.
const FEW_INSTANCES: u64 = 8;

/// The per-user limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Limits {
    pub watches: u64,
    pub instances: u64,
}

/// What this user's processes hold now (those whose `/proc` entries could be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct InUse {
    pub watches: u64,
    pub instances: u64,
}

/// Directories under the roots (capped: `capped` when there are more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Dirs {
    pub count: u64,
    pub capped: bool,
}

/// Reads the limits and the use, counts the directories, and judges.
pub(super) fn check(roots: &[PathBuf]) -> Vec<Finding> {
    let limits = match read_limits() {
        Ok(limits) => limits,
        Err(err) => {
            return vec![Finding::note(format!(
                "inotify limits unreadable ({err}); not checked"
            ))];
        }
    };
    let dirs = count_dirs(roots, COUNT_CAP);
    judge(limits, in_use(), dirs)
}

fn read_limits() -> std::io::Result<Limits> {
    let read = |name: &str| -> std::io::Result<u64> {
        let path = Path::new("/proc/sys/fs/inotify").join(name);
        let text = std::fs::read_to_string(&path)?;
        text.trim().parse().map_err(|_| {
            std::io::Error::other(format!("{}: not a number: {text:?}", path.display()))
        })
    };
    Ok(Limits {
        watches: read("max_user_watches")?,
        instances: read("max_user_instances")?,
    })
}

/// The inotify watches and instances held by this user's processes (those whose `/proc`
/// entries can be read: all of them for the user's own).
fn in_use() -> InUse {
    let mut used = InUse::default();
    let Ok(me) = std::fs::metadata("/proc/self").map(|meta| meta.uid()) else {
        return used;
    };
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return used;
    };
    for proc in procs.flatten() {
        let name = proc.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let dir = proc.path();
        if std::fs::metadata(&dir).map(|meta| meta.uid()).ok() != Some(me) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let is_inotify = std::fs::read_link(fd.path())
                .is_ok_and(|target| target.as_os_str() == "anon_inode:inotify");
            if is_inotify {
                used.instances += 1;
                let info = dir.join("fdinfo").join(fd.file_name());
                used.watches += std::fs::read_to_string(info)
                    .map(|text| watches_in_fdinfo(&text))
                    .unwrap_or(0);
            }
        }
    }
    used
}

/// The watches an inotify descriptor holds: one `inotify wd:` line each in its fdinfo.
pub(super) fn watches_in_fdinfo(text: &str) -> u64 {
    text.lines()
        .filter(|line| line.starts_with("inotify wd:"))
        .count() as u64
}

/// The directories a server would watch: every directory under each directory root (a
/// root inside another is covered by it), symlinks not followed, at most `cap`.
pub(super) fn count_dirs(roots: &[PathBuf], cap: u64) -> Dirs {
    let mut count = 0;
    let outer: Vec<&PathBuf> = roots
        .iter()
        .filter(|root| root.is_dir())
        .filter(|root| {
            !roots
                .iter()
                .any(|other| other != *root && other.is_dir() && root.starts_with(other))
        })
        .collect();
    let mut stack: Vec<PathBuf> = outer.into_iter().cloned().collect();
    stack.dedup();
    while let Some(dir) = stack.pop() {
        count += 1;
        if count >= cap {
            return Dirs {
                count,
                capped: true,
            };
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    Dirs {
        count,
        capped: false,
    }
}

/// The findings for `dirs` directories under the roots, given the limits and what this
/// user's processes hold already.
pub(super) fn judge(limits: Limits, used: InUse, dirs: Dirs) -> Vec<Finding> {
    let need = dirs.count + 1; // the barrier's sentinel directory
    let free = limits.watches.saturating_sub(used.watches);
    let counted = if dirs.capped {
        format!("more than {}", dirs.count)
    } else {
        dirs.count.to_string()
    };
    let mut findings = Vec::new();
    let watches = format!(
        "max_user_watches {}: {} held by your processes, {free} free; a server on these \
         roots needs {need} ({counted} directories and a sentinel)",
        limits.watches, used.watches
    );
    if need > free {
        let wanted = (used.watches + 2 * need)
            .next_power_of_two()
            .max(SUGGESTED_WATCHES);
        findings.push(Finding::problem(
            format!("{watches}: the roots would not be watched, so every search walks the disk"),
            raise("max_user_watches", wanted),
        ));
    } else if 2 * need > free {
        findings.push(Finding::advice(
            format!(
                "{watches}: a second server on the same roots (another host window) would not fit"
            ),
            raise(
                "max_user_watches",
                (used.watches + 4 * need)
                    .next_power_of_two()
                    .max(SUGGESTED_WATCHES),
            ),
        ));
    } else {
        findings.push(Finding::ok(watches));
    }
    let free = limits.instances.saturating_sub(used.instances);
    let instances = format!(
        "max_user_instances {}: {} in use, {free} free; each server takes one",
        limits.instances, used.instances
    );
    if free == 0 {
        findings.push(Finding::problem(
            format!("{instances}: a new server could not watch anything"),
            raise("max_user_instances", SUGGESTED_INSTANCES),
        ));
    } else if free < FEW_INSTANCES {
        findings.push(Finding::advice(
            instances,
            raise("max_user_instances", SUGGESTED_INSTANCES),
        ));
    } else {
        findings.push(Finding::ok(instances));
    }
    findings
}

/// How to raise `fs.inotify.NAME` to `value`, now and after a reboot.
fn raise(name: &str, value: u64) -> String {
    format!(
        "sudo sysctl fs.inotify.{name}={value} (now), and echo fs.inotify.{name}={value} | \
         sudo tee -a /etc/sysctl.d/60-rootgrep.conf (after a reboot); or serve smaller \
         roots, or pass --no-watch"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::report::Level;

    const LIMITS: Limits = Limits {
        watches: 8192,
        instances: 128,
    };

    fn levels(findings: &[Finding]) -> Vec<Level> {
        findings.iter().map(|finding| finding.level).collect()
    }

    #[test]
    fn watches_are_counted_from_fdinfo() {
        let text = "pos:\t0\nflags:\t02004000\nmnt_id:\t15\nino:\t1057\n\
                    inotify wd:2 ino:1 sdev:800001 mask:fce ignored_mask:0\n\
                    inotify wd:1 ino:2 sdev:800001 mask:fce ignored_mask:0\n";
        assert_eq!(watches_in_fdinfo(text), 2);
        assert_eq!(watches_in_fdinfo("pos:\t0\n"), 0);
    }

    #[test]
    fn enough_watches_and_instances_are_fine() {
        let used = InUse {
            watches: 100,
            instances: 10,
        };
        let dirs = Dirs {
            count: 1000,
            capped: false,
        };
        let findings = judge(LIMITS, used, dirs);
        assert_eq!(levels(&findings), [Level::Ok, Level::Ok]);
        assert!(findings[0].text.contains("8092 free"), "{findings:?}");
        assert!(findings[0].text.contains("needs 1001"), "{findings:?}");
    }

    #[test]
    fn too_few_watches_is_a_problem_with_the_sysctl_that_fixes_it() {
        let used = InUse {
            watches: 4000,
            instances: 10,
        };
        let dirs = Dirs {
            count: 5000,
            capped: false,
        };
        let findings = judge(LIMITS, used, dirs);
        assert_eq!(findings[0].level, Level::Problem);
        let fix = findings[0].fix.as_deref().unwrap();
        assert!(
            fix.contains("sudo sysctl fs.inotify.max_user_watches=524288"),
            "{fix}"
        );
        assert!(fix.contains("/etc/sysctl.d/"), "{fix}");
        // Room for one server but not two: advice, not a problem.
        let dirs = Dirs {
            count: 5000,
            capped: false,
        };
        let findings = judge(LIMITS, InUse::default(), dirs);
        assert_eq!(levels(&findings), [Level::Note, Level::Ok]);
        // A count past the cap says so.
        let dirs = Dirs {
            count: 10,
            capped: true,
        };
        let findings = judge(LIMITS, InUse::default(), dirs);
        assert!(findings[0].text.contains("more than 10 directories"));
    }

    #[test]
    fn instances_all_taken_is_a_problem_and_few_left_a_note() {
        let dirs = Dirs {
            count: 1,
            capped: false,
        };
        let all = InUse {
            watches: 0,
            instances: 128,
        };
        let findings = judge(LIMITS, all, dirs);
        assert_eq!(findings[1].level, Level::Problem);
        assert!(
            findings[1]
                .fix
                .as_deref()
                .unwrap()
                .contains("max_user_instances=1024")
        );
        let few = InUse {
            watches: 0,
            instances: 125,
        };
        assert_eq!(judge(LIMITS, few, dirs)[1].level, Level::Note);
    }

    #[test]
    fn directories_are_counted_once_without_following_links() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("c")).unwrap();
        std::fs::write(root.join("a/file"), "x").unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("link")).unwrap();
        let counted = count_dirs(std::slice::from_ref(&root), 100);
        assert_eq!(
            counted,
            Dirs {
                count: 4,
                capped: false
            }
        );
        // A root inside another is covered by it; a file root has no directory.
        let both = [root.clone(), root.join("a"), root.join("a/file")];
        assert_eq!(count_dirs(&both, 100).count, 4);
        assert_eq!(
            count_dirs(std::slice::from_ref(&root), 2),
            Dirs {
                count: 2,
                capped: true
            }
        );
    }
}
