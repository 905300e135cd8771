//! Reading a root's git history with gix: the repository holding the root (found upward
//! from it), its HEAD, and every commit reachable from HEAD, newest first, with its time,
//! its message's terms and the files it changed below the root (a tree diff against its
//! parent). Merges and root commits change no file of their own and are skipped; a commit
//! changing more than [`MAX_COMMIT_FILES`] files (a mass rename, a reformat) keeps its
//! message and lists no file, since it says nothing about where one change lives.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::prelude::FindExt;

use crate::ranked::terms::{self, Term};

/// Files one commit may change and still vote for them.
pub(crate) const MAX_COMMIT_FILES: usize = 1_000;
/// Bytes of a message read for its terms: a long body adds words, not meaning.
const MAX_MESSAGE_BYTES: usize = 4_096;
/// Commits read at most (nuttx has 62k; beyond this the oldest are left out).
pub(crate) const MAX_COMMITS: usize = 200_000;

/// Words too common in commit messages to say anything about where a change lives.
const STOP: &[&str] = &[
    "the", "an", "of", "to", "in", "and", "or", "is", "are", "be", "for", "on", "with", "this",
    "that", "it", "as", "at", "by", "from", "when", "not", "fix", "fixed", "fixes", "bug", "issue",
    "use", "used", "using", "should", "signed", "off", "co", "authored",
];

/// One commit as the history table keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Commit {
    pub(crate) id: ObjectId,
    /// Committer time, seconds since the epoch.
    pub(crate) time: i64,
    /// Its message's distinct terms with their counts.
    pub(crate) terms: Vec<(Term, u16)>,
    /// The root-relative paths it changed (indexes into the reader's path list).
    pub(crate) files: Vec<u32>,
}

/// Where a root's history is.
pub(crate) struct Repo {
    pub(crate) repo: gix::ThreadSafeRepository,
    /// The root's path relative to the repository's work tree (`/`-separated, empty or
    /// ending in `/`): only changes below it count, named without it.
    prefix: Vec<u8>,
}

/// Why a root has no history to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NoHistory {
    /// Not inside a git work tree.
    NoRepository,
    /// A repository without a commit yet.
    Unborn,
    /// Its git directory lies outside `--confine`, which nothing may read.
    OutsideConfine,
    /// It could not be read (gix's reason).
    Unreadable(String),
}

impl std::fmt::Display for NoHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoHistory::NoRepository => f.write_str("no git repository"),
            NoHistory::Unborn => f.write_str("no commit yet"),
            NoHistory::OutsideConfine => {
                f.write_str("the repository's git directory is outside --confine")
            }
            NoHistory::Unreadable(why) => write!(f, "unreadable: {why}"),
        }
    }
}

/// gix's reason, on one line and at most 200 characters (it is shown in `list_roots`).
fn unreadable(err: impl std::fmt::Display) -> NoHistory {
    let text = err.to_string();
    let line = text.lines().next().unwrap_or_default();
    NoHistory::Unreadable(match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    })
}

impl Repo {
    /// The repository whose work tree holds `root` (canonical), if any, and if its git
    /// directory (with the common one of a linked work tree) lies within one of `confine`
    /// (the operator's `--confine`; empty: anywhere). Opened isolated: only the repository's
    /// own configuration is read, never the user's or the system's, nor the environment.
    pub(crate) fn find(root: &Path, confine: &[PathBuf]) -> Result<Repo, NoHistory> {
        // gix opens these as files: a FIFO among them would block this thread for good.
        super::guard::check_upward(root).map_err(NoHistory::Unreadable)?;
        let isolated = gix::open::Options::isolated();
        let repo = match gix::discover_opts(root, Default::default(), isolated) {
            Ok(repo) => repo,
            Err(_) if gix::discover::upwards(root).is_err() => {
                return Err(NoHistory::NoRepository);
            }
            Err(err) => return Err(unreadable(err)),
        };
        if !confine.is_empty() {
            let inside = |dir: &Path| {
                std::fs::canonicalize(dir)
                    .is_ok_and(|dir| confine.iter().any(|c| dir.starts_with(c)))
            };
            if !(inside(repo.git_dir()) && inside(repo.common_dir())) {
                return Err(NoHistory::OutsideConfine);
            }
        }
        let workdir = repo.workdir().ok_or(NoHistory::NoRepository)?;
        let workdir = std::fs::canonicalize(workdir).map_err(unreadable)?;
        let rel = root
            .strip_prefix(&workdir)
            .map_err(|_| NoHistory::NoRepository)?;
        let mut prefix = Vec::new();
        for part in rel.components() {
            prefix.extend_from_slice(part.as_os_str().as_encoded_bytes());
            prefix.push(b'/');
        }
        Ok(Repo {
            repo: repo.into_sync(),
            prefix,
        })
    }

    /// The commit HEAD names now.
    pub(crate) fn head(&self) -> Result<ObjectId, NoHistory> {
        let repo = self.repo.to_thread_local();
        // Every query resolves HEAD: what that opens is checked first (a FIFO swapped in
        // would block the query).
        super::guard::check_head(repo.git_dir(), repo.common_dir())
            .map_err(NoHistory::Unreadable)?;
        match repo.head_id() {
            Ok(id) => Ok(id.detach()),
            Err(_) if repo.head().is_ok_and(|head| head.is_unborn()) => Err(NoHistory::Unborn),
            Err(err) => Err(unreadable(err)),
        }
    }

    /// Whether the repository is a shallow clone (its history is cut short).
    pub(crate) fn is_shallow(&self) -> bool {
        self.repo.to_thread_local().is_shallow().unwrap_or(false)
    }

    /// Whether `old` (committed at `old_time`) is `head` or one of its ancestors: a walk
    /// from `head` down to a month before `old_time` (committer clocks drift) looks for it.
    pub(crate) fn descends(&self, head: ObjectId, old: ObjectId, old_time: i64) -> bool {
        if head == old {
            return true;
        }
        let repo = self.repo.to_thread_local();
        let sorting = gix::revision::walk::Sorting::ByCommitTimeCutoff {
            order: Default::default(),
            seconds: old_time.saturating_sub(30 * 86_400),
        };
        let Ok(walk) = repo.rev_walk([head]).sorting(sorting).all() else {
            return false;
        };
        walk.map_while(Result::ok).any(|info| info.id == old)
    }

    /// The commits reachable from `head` and not from `known` (every one when `None`),
    /// newest first, at most [`MAX_COMMITS`]; paths are interned in `paths`.
    /// `cancelled` is asked every few hundred commits; `Ok(None)` when it said yes.
    pub(crate) fn commits(
        &self,
        head: ObjectId,
        known: Option<ObjectId>,
        paths: &mut Paths,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<Vec<Commit>>, NoHistory> {
        let repo = self.repo.to_thread_local();
        let sorting = gix::revision::walk::Sorting::ByCommitTime(Default::default());
        let mut walk = repo.rev_walk([head]).sorting(sorting);
        if let Some(known) = known {
            walk = walk.with_hidden([known]);
        }
        let walk = walk.all().map_err(unreadable)?;
        let mut out = Vec::new();
        let mut differ = Differ::default();
        for info in walk {
            let info = info.map_err(unreadable)?;
            if out.len() % 256 == 0 && cancelled() {
                return Ok(None);
            }
            if out.len() >= MAX_COMMITS {
                break;
            }
            // A merge's changes are its parents'; a root commit is the whole first tree.
            let [parent] = info.parent_ids.as_slice() else {
                continue;
            };
            let commit = repo.find_commit(info.id).map_err(unreadable)?;
            let decoded = commit.decode().map_err(unreadable)?;
            let time = decoded.committer().map_or(0, |sig| sig.seconds());
            let message = decoded.message;
            let terms = message_terms(&message[..message.len().min(MAX_MESSAGE_BYTES)]);
            let changes = differ.changes(&repo, *parent, decoded.tree())?;
            let files = self.changed_files(&changes, paths);
            out.push(Commit {
                id: info.id,
                time,
                terms,
                files,
            });
        }
        Ok(Some(out))
    }

    /// The files below the root among `changes` (blobs only), interned; none past
    /// [`MAX_COMMIT_FILES`].
    fn changed_files(
        &self,
        changes: &[gix_diff::tree::recorder::Change],
        paths: &mut Paths,
    ) -> Vec<u32> {
        let mut files = Vec::new();
        for change in changes.iter().map(Changed::of) {
            if change.mode.is_tree() {
                continue;
            }
            if let Some(rel) = change.path.strip_prefix(self.prefix.as_slice()) {
                files.push(paths.id(rel));
            }
        }
        if files.len() > MAX_COMMIT_FILES {
            files.clear();
        }
        files.sort_unstable();
        files.dedup();
        files
    }

    /// Whether a path of the repository's tree is below the root.
    pub(crate) fn holds(&self, path: &[u8]) -> bool {
        path.starts_with(&self.prefix)
    }
}

/// A commit's changes against its parent (gix-diff's records), the buffers kept from one
/// commit to the next.
#[derive(Default)]
pub(crate) struct Differ {
    state: gix_diff::tree::State,
    old: Vec<u8>,
    new: Vec<u8>,
}

impl Differ {
    /// What tree `tree` changed against the tree of commit `parent`.
    pub(crate) fn changes(
        &mut self,
        repo: &gix::Repository,
        parent: ObjectId,
        tree: ObjectId,
    ) -> Result<Vec<gix_diff::tree::recorder::Change>, NoHistory> {
        let parent_tree = repo
            .find_commit(parent)
            .and_then(|p| p.tree_id().map(|id| id.detach()))
            .map_err(unreadable)?;
        let old = repo.objects.find_tree_iter(&parent_tree, &mut self.old);
        let new = repo.objects.find_tree_iter(&tree, &mut self.new);
        let (old, new) = (old.map_err(unreadable)?, new.map_err(unreadable)?);
        let mut changes = gix_diff::tree::Recorder::default();
        gix_diff::tree(old, new, &mut self.state, &repo.objects, &mut changes)
            .map_err(unreadable)?;
        Ok(changes.records)
    }
}

/// One change of a tree diff, its sides spelled out: the blob before and after (`None`
/// for an addition or a deletion), its path in the repository's tree, its mode.
pub(crate) struct Changed<'a> {
    pub(crate) before: Option<ObjectId>,
    pub(crate) after: Option<ObjectId>,
    pub(crate) path: &'a [u8],
    pub(crate) mode: gix::objs::tree::EntryMode,
}

impl Changed<'_> {
    pub(crate) fn of(change: &gix_diff::tree::recorder::Change) -> Changed<'_> {
        use gix_diff::tree::recorder::Change;
        match change {
            Change::Addition {
                oid,
                path,
                entry_mode,
                ..
            } => Changed {
                before: None,
                after: Some(*oid),
                path,
                mode: *entry_mode,
            },
            Change::Deletion {
                oid,
                path,
                entry_mode,
                ..
            } => Changed {
                before: Some(*oid),
                after: None,
                path,
                mode: *entry_mode,
            },
            Change::Modification {
                previous_oid,
                oid,
                path,
                entry_mode,
                ..
            } => Changed {
                before: Some(*previous_oid),
                after: Some(*oid),
                path,
                mode: *entry_mode,
            },
        }
    }
}

/// Root-relative paths, each once, numbered in the order met. The map from a path to its
/// number is only needed while commits are read: [`Paths::seal`] drops it, and the next
/// read builds it again.
#[derive(Clone, Default, Debug)]
pub(crate) struct Paths {
    pub(crate) list: Vec<Box<[u8]>>,
    ids: HashMap<Box<[u8]>, u32>,
}

impl Paths {
    pub(crate) fn id(&mut self, rel: &[u8]) -> u32 {
        if self.ids.len() < self.list.len() {
            self.ids = (self.list.iter().enumerate())
                .map(|(i, p)| (p.clone(), i as u32))
                .collect();
        }
        if let Some(&id) = self.ids.get(rel) {
            return id;
        }
        let id = self.list.len() as u32;
        self.list.push(rel.into());
        self.ids.insert(rel.into(), id);
        id
    }

    pub(crate) fn from_list(list: Vec<Box<[u8]>>) -> Paths {
        Paths {
            list,
            ids: HashMap::new(),
        }
    }

    /// Done reading: the map goes (the list is what queries read).
    pub(crate) fn seal(&mut self) {
        self.ids = HashMap::new();
        self.list.shrink_to_fit();
    }
}

/// The distinct terms of a message (as `search` splits words), with their counts; very
/// common commit words and one-letter tokens left out.
pub(crate) fn message_terms(message: &[u8]) -> Vec<(Term, u16)> {
    let text = String::from_utf8_lossy(message);
    let mut counts: HashMap<Term, u16> = HashMap::new();
    terms::tokens(&text, &mut |token: &str| {
        if kept(token) {
            let n = counts.entry(terms::hash(token)).or_default();
            *n = n.saturating_add(1);
        }
    });
    let mut out: Vec<(Term, u16)> = counts.into_iter().collect();
    out.sort_unstable();
    out
}

/// Whether a token counts (in a message, and in a query asking the history).
pub(crate) fn kept(token: &str) -> bool {
    token.len() > 1 && !STOP.contains(&token)
}
