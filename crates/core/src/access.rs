//! The session's out-of-root decisions: which directories the user granted (for reading or
//! writing) and which paths the user refused, and the rule that turns a resolved path into
//! "go ahead", "ask the user" or "refuse".
//!
//! This is plain bookkeeping; asking the user (elicitation) is the adapter's job. The rules:
//! inside a root → allowed; outside `--confine` → refused without asking; inside a granted
//! directory → allowed (a write grant also allows reading, a read grant never allows
//! writing); a path the user declined → refused without asking again; otherwise → ask.
//!
//! A [`Refusal`] is the reason alone, and its text (the adapter's words) names only the path
//! as the client sent it: where it leads (a symlink's target, what `..` or
//! `/proc/self/cwd` resolve to), whether it exists and what it is are facts about the disk
//! outside the roots, which the client may not learn. A declined path is remembered as
//! named (absolute, not canonical) for the same reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::roots::{Confine, Resolved, RootSet};

/// What an operation wants to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    pub fn verb(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// The verdict for one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// Outside the roots and not yet decided: the user may be asked.
    Ask,
    /// Refused without asking; the [`Refusal`] says why.
    Refused(Refusal),
}

/// Why a path outside the roots is not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Outside `--confine`: the user is never asked.
    Confined,
    /// The user refused this path earlier in the session.
    RefusedEarlier,
    /// The user cannot be asked; the text says why ("this client cannot ask the user for
    /// permission (no elicitation support)").
    CannotAsk(&'static str),
}

/// Session grants and refusals. Interior mutability so the handler can share it.
#[derive(Debug, Default)]
pub struct Grants {
    inner: Mutex<GrantState>,
}

#[derive(Debug, Default, Clone)]
pub struct GrantState {
    /// Directories granted for the session, with the access granted.
    pub granted: BTreeSet<(PathBuf, Access)>,
    /// Paths the user refused (declined, or answered `allow: false`): not asked again.
    pub refused: BTreeSet<(PathBuf, Access)>,
}

impl Grants {
    pub fn snapshot(&self) -> GrantState {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GrantState> {
        // A panic while holding this lock cannot leave the sets half-updated (single inserts),
        // so a poisoned lock is still safe to use.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Decides what to do with a resolved path (judged on its canonical path; a refusal
    /// is looked up by the path as named).
    pub fn verdict(
        &self,
        resolved: &Resolved,
        access: Access,
        roots: &RootSet,
        confine: &Confine,
    ) -> Verdict {
        let canonical = resolved.path.as_path();
        if let Some(verdict) = boundary_verdict(canonical, roots, confine) {
            return verdict;
        }
        let state = self.lock();
        let granted = state.granted.iter().any(|(dir, granted_access)| {
            canonical.starts_with(dir)
                && (*granted_access == access || *granted_access == Access::Write)
        });
        if granted {
            return Verdict::Allowed;
        }
        if state.refused.contains(&(resolved.given.clone(), access)) {
            return Verdict::Refused(Refusal::RefusedEarlier);
        }
        Verdict::Ask
    }

    /// Remembers a directory grant for the rest of the session.
    pub fn grant_dir(&self, dir: PathBuf, access: Access) {
        self.lock().granted.insert((dir, access));
    }

    /// Remembers that the user refused this path, as named ([`Resolved::given`]): not
    /// asked again this session.
    pub fn refuse(&self, path: PathBuf, access: Access) {
        self.lock().refused.insert((path, access));
    }
}

/// The part of the verdict that needs no session state: outside `--confine` → refused;
/// inside a root → allowed; otherwise `None` (grants, refusals or the user decide).
pub fn boundary_verdict(canonical: &Path, roots: &RootSet, confine: &Confine) -> Option<Verdict> {
    if !confine.allows(canonical) {
        return Some(Verdict::Refused(Refusal::Confined));
    }
    roots.containing(canonical).map(|_| Verdict::Allowed)
}

/// The directory a "remember" answer grants: the path itself when it is a directory
/// (`is_dir`, which the caller finds out off the async executor: a `stat` may hang on a
/// network mount), otherwise its parent. Touches no filesystem.
pub fn grant_dir_for(canonical: &Path, is_dir: bool) -> PathBuf {
    if is_dir {
        canonical.to_path_buf()
    } else {
        canonical
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| canonical.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roots::{Root, RootSource};

    #[test]
    fn grant_dir_is_decided_without_the_filesystem() {
        // Neither path exists: the answer comes from `is_dir` alone.
        let dir = Path::new("/nonexistent-rootgrep/a/b");
        assert_eq!(grant_dir_for(dir, true), dir);
        assert_eq!(
            grant_dir_for(dir, false),
            Path::new("/nonexistent-rootgrep/a")
        );
        // An existing directory named as a file: its parent, whatever the disk says.
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            grant_dir_for(tmp.path(), false),
            tmp.path().parent().unwrap()
        );
        assert_eq!(grant_dir_for(Path::new("/"), false), Path::new("/"));
    }

    #[test]
    fn grants_refusals_and_confine() {
        let tmp = tempfile::tempdir().unwrap();
        // In the form resolved paths take (`C:\x` on Windows, not `\\?\C:\x`).
        let base = crate::roots::canonicalize(tmp.path()).unwrap();
        let app = base.join("app");
        let other = base.join("other");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let roots = RootSet::new(vec![Root::new(app.clone(), None)], RootSource::CommandLine);
        let none = Confine::default();
        let grants = Grants::default();
        let named = |path: &Path| crate::roots::resolve(path.to_str().unwrap(), &roots).unwrap();
        assert_eq!(
            grants.verdict(&named(&app.join("f")), Access::Write, &roots, &none),
            Verdict::Allowed
        );
        let file = named(&other.join("f"));
        assert_eq!(
            grants.verdict(&file, Access::Read, &roots, &none),
            Verdict::Ask
        );
        grants.grant_dir(other.clone(), Access::Read);
        assert_eq!(
            grants.verdict(&file, Access::Read, &roots, &none),
            Verdict::Allowed
        );
        // A read grant is not a write grant.
        assert_eq!(
            grants.verdict(&file, Access::Write, &roots, &none),
            Verdict::Ask
        );
        grants.refuse(file.given.clone(), Access::Write);
        assert_eq!(
            grants.verdict(&file, Access::Write, &roots, &none),
            Verdict::Refused(Refusal::RefusedEarlier)
        );
        // A refusal is kept for the path as named: another name of the same file (here
        // through a link) is asked about, so a refusal tells nothing about where it leads.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&other, base.join("alias")).unwrap();
            let alias = named(&base.join("alias/f"));
            assert_eq!(alias.path, file.path);
            assert_eq!(
                grants.verdict(&alias, Access::Write, &roots, &none),
                Verdict::Ask
            );
        }
        // Confine refuses without asking, even with a grant.
        let confine = Confine::new(std::slice::from_ref(&app)).unwrap();
        assert_eq!(
            grants.verdict(&file, Access::Read, &roots, &confine),
            Verdict::Refused(Refusal::Confined)
        );
    }
}
