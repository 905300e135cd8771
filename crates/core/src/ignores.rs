//! The ignore rules of a walk, read by rootgrep itself: `.ignore`, `.gitignore` (inside a
//! git repository), `.git/info/exclude` and git's global `core.excludesFile`, with
//! ripgrep's precedence, applied by [`Rules::decide`] from the walker's entry filter.
//!
//! Why not the `ignore` crate's own filters: it opens every ignore file it finds with a
//! plain blocking `open`, so one named `.gitignore` that is a FIFO (a tarball can carry it)
//! blocked every walk forever, and it compiles whatever size a file has (a 1.6 MB
//! `.gitignore` cost seconds and a gigabyte per search). Here each ignore file is checked
//! with `stat` (following a symlink, as git does) and read only when it is a regular file,
//! opened with `O_NONBLOCK` and checked again with `fstat`; a file that is not regular, or
//! larger than [`MAX_IGNORE_FILE`] bytes, is not applied and is reported
//! ([`SkippedIgnoreFile`]: in the walk's [`Stats`](crate::walk::Stats), and once per path
//! as a warning log). The rules are still compiled by `ignore::gitignore`.
//!
//! Precedence, as ripgrep's (`ignore` 0.4, `Ignore::matched_ignore`), for a path in
//! directory `D`: the nearest directory (from `D` up to `/`) with a `.ignore` rule matching
//! it decides, else the nearest `.gitignore`, else the nearest `.git/info/exclude`, else the
//! global excludes; `.gitignore`, `info/exclude` and the global file apply only when some
//! directory from `D` up has a `.git` (directory or file) or `.jj`, and `.gitignore`/
//! `info/exclude` of directories above the nearest such repository are not used. The
//! directories above the walk's start count too (ripgrep's parent rules). A whitelist
//! (`!x`) match decides like an ignore match (the entry is kept). Directory rules are read
//! once per walk, when the walk filters the directory's first entry, and shared by its
//! entries.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::mutex::lock;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, Match};

/// Largest ignore file applied (bytes). Real ones are a few KiB (GitHub's templates are
/// under 10 KiB); every walk compiles the rules again, and wildcard rules cost about a
/// millisecond and 0.7 MB per KiB (a 1.6 MB `.gitignore`: 2 s and 1.2 GB per search), so a
/// bigger file is not applied, and reported, rather than making every search slow and
/// large.
pub(crate) const MAX_IGNORE_FILE: u64 = 64 * 1024;

/// The names whose presence gives a directory ignore rules (read by `DirRules::new`):
/// each one present in a directory whose rules a walk read is among its
/// [`Rules::inputs`].
pub(crate) const RULE_NAMES: [&str; 4] = [".gitignore", ".ignore", ".git", ".jj"];

/// An ignore file that was not applied, and why.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SkippedIgnoreFile {
    pub path: PathBuf,
    /// The directory whose rules it holds (for `.git/info/exclude`, the repository's).
    pub dir: PathBuf,
    /// "a FIFO, not a regular file", "1563 KiB, over the 64 KiB limit for ignore files".
    pub reason: String,
}

impl std::fmt::Display for SkippedIgnoreFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "skipped ignore file {}: {}",
            crate::roots::path_text(&self.path),
            self.reason
        )
    }
}

/// Reads one ignore file (of directory `dir`) safely: `Ok(None)` when there is none
/// (missing, a directory, unreadable: as git, those add no rules), `Err` when it is there
/// but is not applied.
pub(crate) fn read_ignore_file(
    dir: &Path,
    path: &Path,
) -> Result<Option<Vec<u8>>, SkippedIgnoreFile> {
    let skipped = |reason: String| SkippedIgnoreFile {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        reason,
    };
    let Ok(meta) = fs::metadata(path) else {
        return Ok(None);
    };
    if meta.is_dir() {
        return Ok(None);
    }
    if !meta.is_file() {
        return Err(skipped(format!("{}, not a regular file", kind_of(&meta))));
    }
    if meta.len() > MAX_IGNORE_FILE {
        return Err(skipped(too_large(meta.len())));
    }
    let Ok(file) = open_nonblocking(path) else {
        return Ok(None);
    };
    // Checked again on the open file: the path may have been swapped meanwhile.
    let Ok(meta) = file.metadata() else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Err(skipped(format!("{}, not a regular file", kind_of(&meta))));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if file
        .take(MAX_IGNORE_FILE + 1)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return Ok(None);
    }
    if bytes.len() as u64 > MAX_IGNORE_FILE {
        return Err(skipped(too_large(bytes.len() as u64)));
    }
    Ok(Some(bytes))
}

fn too_large(len: u64) -> String {
    format!(
        "{} KiB, over the {} KiB limit for ignore files",
        len.div_ceil(1024),
        MAX_IGNORE_FILE / 1024
    )
}

#[cfg(unix)]
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
pub(crate) fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(unix)]
fn kind_of(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn kind_of(_meta: &fs::Metadata) -> &'static str {
    "a special file"
}

/// Adds the lines of one ignore file to `builder` as `GitignoreBuilder::add` reads them:
/// lines split at `\n` (a `\r` before it dropped), a UTF-8 BOM dropped from the first,
/// lines that are not UTF-8 and globs that do not parse skipped.
pub(crate) fn add_lines(builder: &mut GitignoreBuilder, from: &Path, bytes: &[u8]) {
    let mut lines = bytes.split(|&b| b == b'\n').peekable();
    let mut first = true;
    while let Some(mut line) = lines.next() {
        if line.is_empty() && lines.peek().is_none() {
            break; // the text after the last newline
        }
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        let Ok(mut text) = std::str::from_utf8(line) else {
            first = false;
            continue;
        };
        if first {
            text = text.trim_start_matches('\u{feff}');
            first = false;
        }
        let _ = builder.add_line(Some(from.to_path_buf()), text);
    }
}

/// Reports a skipped ignore file once per path per process as a warning (walks meet the
/// same file again and again), and records it for the answer.
pub(crate) fn warn_once(skipped: &SkippedIgnoreFile) {
    static WARNED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let mut warned = lock(WARNED.get_or_init(Default::default));
    // Bounded: past this many distinct paths, stay quiet rather than grow.
    if warned.len() < 10_000 && warned.insert(skipped.path.clone()) {
        tracing::warn!(
            event = "ignore_file_skipped",
            path = %crate::roots::path_text(&skipped.path),
            "{skipped}"
        );
    }
}

/// One ignore file's rules, built from a safe read; `None` when there are none. A skipped
/// file is logged and pushed to `skipped`.
/// What reading a walk's rules met: the ignore files not applied, and the paths whose
/// change would change the rules ([`Rules::inputs`]).
#[derive(Default)]
struct Reads {
    skipped: Vec<SkippedIgnoreFile>,
    inputs: Vec<PathBuf>,
}

impl Reads {
    /// Notes `path` as an input: always when `absent_counts` (nothing else would tell that
    /// it appeared), else only when something is there (a directory's own `.ignore` and
    /// `.gitignore` appear with a change of that directory, which its stamp shows).
    fn input(&mut self, path: &Path, absent_counts: bool) {
        if absent_counts || fs::symlink_metadata(path).is_ok() {
            self.inputs.push(path.to_path_buf());
        }
    }
}

fn compile(dir: &Path, file: &Path, reads: &mut Reads, absent_counts: bool) -> Option<Gitignore> {
    reads.input(file, absent_counts);
    let skipped = &mut reads.skipped;
    match read_ignore_file(dir, file) {
        Ok(Some(bytes)) => {
            let mut builder = GitignoreBuilder::new(dir);
            add_lines(&mut builder, file, &bytes);
            builder.build().ok().filter(|g| !g.is_empty())
        }
        Ok(None) => None,
        Err(skip) => {
            warn_once(&skip);
            skipped.push(skip);
            None
        }
    }
}

/// The rules of one directory, and a link to its parent's.
#[derive(Debug)]
struct DirRules {
    parent: Option<Arc<DirRules>>,
    /// Above the walk's start: paths are matched in their absolute form (see
    /// [`Rules::absolute`]).
    above: bool,
    ignore: Option<Gitignore>,
    git: Option<Gitignore>,
    exclude: Option<Gitignore>,
    /// A `.git` (directory or file) or `.jj` is here.
    repo: bool,
    /// `repo` here or in some directory above.
    in_repo: bool,
    /// Some rule here or above.
    any: bool,
}

impl DirRules {
    fn new(parent: Option<Arc<DirRules>>, dir: &Path, above: bool, reads: &mut Reads) -> DirRules {
        let git = dir.join(".git");
        let git_kind = fs::metadata(&git).ok().map(|m| m.file_type());
        let jj = dir.join(".jj");
        let repo = git_kind.is_some() || jj.exists();
        // Above the start no directory stamp shows a `.git` or `.jj` appearing.
        reads.input(&git, above);
        reads.input(&jj, above);
        let exclude = git_kind.and_then(|kind| {
            let common = if kind.is_file() {
                common_dir(dir, &git, reads)?
            } else {
                git
            };
            compile(dir, &common.join("info/exclude"), reads, true)
        });
        let ignore = compile(dir, &dir.join(".ignore"), reads, above);
        let gitignore = compile(dir, &dir.join(".gitignore"), reads, above);
        let above_in_repo = parent.as_ref().is_some_and(|p| p.in_repo);
        let above_any = parent.as_ref().is_some_and(|p| p.any);
        DirRules {
            above,
            repo,
            in_repo: repo || above_in_repo,
            any: above_any || ignore.is_some() || gitignore.is_some() || exclude.is_some(),
            ignore,
            git: gitignore,
            exclude,
            parent,
        }
    }

    fn chain(&self) -> impl Iterator<Item = &DirRules> {
        std::iter::successors(Some(self), |d| d.parent.as_deref())
    }
}

/// Where a worktree's `info/exclude` lives: `.git` is a file `gitdir: X` and `X/commondir`
/// names the common directory (relative to `X` when it starts with `.`). `None` when either
/// is missing (a submodule's `.git` file has no `commondir`: no exclude file, as ripgrep).
/// Both are small files read with the same safe read as ignore files.
fn common_dir(dir: &Path, git_file: &Path, reads: &mut Reads) -> Option<PathBuf> {
    let first_line = |path: &Path, reads: &mut Reads| -> Option<String> {
        reads.input(path, true);
        let bytes = match read_ignore_file(dir, path) {
            Ok(bytes) => bytes?,
            Err(skip) => {
                warn_once(&skip);
                reads.skipped.push(skip);
                return None;
            }
        };
        let line = bytes.split(|&b| b == b'\n').next()?;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        String::from_utf8(line.to_vec()).ok()
    };
    let line = first_line(git_file, reads)?;
    let gitdir = dir.join(line.strip_prefix("gitdir: ")?);
    let common = first_line(&gitdir.join("commondir"), reads)?;
    Some(match common.starts_with('.') {
        true => gitdir.join(common),
        false => PathBuf::from(common),
    })
}

/// The global excludes (`core.excludesFile`, default `$XDG_CONFIG_HOME/git/ignore`),
/// matched relative to the current directory as ripgrep does. The path comes from the
/// user's git configuration; the file itself is read with the safe read.
///
/// The excludes file is an input (present or not); the configuration files that name it
/// are not. What they decide is the path, and a restart reads them again: a path that
/// differs is an input the stored walk lacked, which means a whole walk (`index::resume`).
/// So a setting that says nothing about ignoring (`git config --global user.email`, a
/// credential helper, `safe.directory`, written by tools as often as by people) no longer
/// costs a restart its stored file list.
fn global_rules(reads: &mut Reads) -> Option<Gitignore> {
    let path = ignore::gitignore::gitconfig_excludes_path()?;
    let cwd = std::env::current_dir().ok()?;
    compile(&cwd, &path, reads, true)
}

/// The ignore rules of one walk (from one start directory), shared by its threads.
#[derive(Debug)]
pub(crate) struct Rules {
    /// The walk's start, as the walker's paths begin.
    start: PathBuf,
    /// Its canonical form, when that differs (rules above the start are matched there).
    canonical: Option<PathBuf>,
    /// Distinguishes this walk in the per-thread cache.
    id: u64,
    global: Option<Gitignore>,
    dirs: Mutex<HashMap<PathBuf, Arc<DirRules>>>,
    skipped: Mutex<Vec<SkippedIgnoreFile>>,
    inputs: Mutex<Vec<PathBuf>>,
}

thread_local! {
    /// The last directory whose rules this thread used, by walk: a directory's entries
    /// are filtered one after the other, so most lookups end here.
    static LAST: std::cell::RefCell<Option<(u64, PathBuf, Arc<DirRules>)>> =
        const { std::cell::RefCell::new(None) };
}

impl Rules {
    /// The rules for a walk starting at `start` (a directory): its parents' rules are read
    /// now, the start's and those below as the walk reaches them.
    pub fn new(start: &Path) -> Rules {
        static WALKS: AtomicU64 = AtomicU64::new(0);
        let mut reads = Reads::default();
        let canonical = fs::canonicalize(start).ok();
        let mut above: Option<Arc<DirRules>> = None;
        if let Some(canonical) = &canonical {
            let mut parents: Vec<&Path> = canonical.ancestors().skip(1).collect();
            parents.reverse();
            for parent in parents {
                above = Some(Arc::new(DirRules::new(above, parent, true, &mut reads)));
            }
        }
        let own = DirRules::new(above, start, false, &mut reads);
        let global = global_rules(&mut reads);
        let mut dirs = HashMap::new();
        dirs.insert(start.to_path_buf(), Arc::new(own));
        Rules {
            start: start.to_path_buf(),
            canonical: canonical.filter(|c| c != start),
            id: WALKS.fetch_add(1, Ordering::Relaxed),
            global,
            dirs: Mutex::new(dirs),
            skipped: Mutex::new(reads.skipped),
            inputs: Mutex::new(reads.inputs),
        }
    }

    /// Whether the walk keeps `entry` (depth ≥ 1): `false` when an ignore rule matches it.
    pub(crate) fn keeps(&self, entry: &DirEntry) -> bool {
        let Some(parent) = entry.path().parent() else {
            return true;
        };
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let rules = self.dir_rules(parent);
        !self.decide(&rules, entry.path(), is_dir).is_ignore()
    }

    /// What the ignore files say about `path` (in directory `dir`), ripgrep's precedence.
    fn decide<'a>(&'a self, dir: &'a DirRules, path: &Path, is_dir: bool) -> Match<()> {
        if !dir.any && (self.global.is_none() || !dir.in_repo) {
            return Match::None;
        }
        let mut absolute: Option<PathBuf> = None;
        let (mut ignore, mut git, mut exclude) = (Match::None, Match::None, Match::None);
        let mut past_repo = false;
        for d in dir.chain() {
            let candidate: &Path = match (d.above, &self.canonical) {
                (true, Some(canonical)) => absolute.get_or_insert_with(|| {
                    canonical.join(path.strip_prefix(&self.start).unwrap_or(path))
                }),
                _ => path,
            };
            let check = |m: &mut Match<()>, g: &Option<Gitignore>| {
                if m.is_none()
                    && let Some(g) = g
                {
                    *m = g.matched(candidate, is_dir).map(|_| ());
                }
            };
            check(&mut ignore, &d.ignore);
            if dir.in_repo && !past_repo {
                check(&mut git, &d.git);
                check(&mut exclude, &d.exclude);
            }
            past_repo |= d.repo;
        }
        let global = match (&self.global, dir.in_repo) {
            (Some(g), true) => g.matched(path, is_dir).map(|_| ()),
            _ => Match::None,
        };
        ignore.or(git).or(exclude).or(global)
    }

    /// The rules in force inside `dir` (the start or a directory below it).
    fn dir_rules(&self, dir: &Path) -> Arc<DirRules> {
        let cached = LAST.with_borrow(|last| match last {
            Some((id, path, rules)) if *id == self.id && path.as_os_str() == dir.as_os_str() => {
                Some(Arc::clone(rules))
            }
            _ => None,
        });
        if let Some(rules) = cached {
            return rules;
        }
        let rules = self.lookup(dir);
        LAST.set(Some((self.id, dir.to_path_buf(), Arc::clone(&rules))));
        rules
    }

    fn lookup(&self, dir: &Path) -> Arc<DirRules> {
        if let Some(rules) = self.lock_dirs().get(dir) {
            return Arc::clone(rules);
        }
        // Not read yet: the parent's rules first (the walk entered `dir` from there), then
        // this directory's files, outside the lock.
        let parent = match dir.parent() {
            Some(parent) if dir != self.start && parent.starts_with(&self.start) => {
                self.lookup(parent)
            }
            _ => return Arc::clone(&self.lock_dirs()[&self.start]),
        };
        let mut reads = Reads::default();
        let rules = Arc::new(DirRules::new(Some(parent), dir, false, &mut reads));
        if !reads.skipped.is_empty() {
            lock(&self.skipped).extend(reads.skipped);
        }
        if !reads.inputs.is_empty() {
            lock(&self.inputs).extend(reads.inputs);
        }
        let mut dirs = self.lock_dirs();
        Arc::clone(dirs.entry(dir.to_path_buf()).or_insert(rules))
    }

    fn lock_dirs(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<DirRules>>> {
        lock(&self.dirs)
    }

    /// The paths whose change would change the rules read so far, sorted, each once:
    /// everything looked at above the start and outside the tree (`.git`, `.jj`, ignore
    /// files, a worktree's `gitdir` and `commondir`, `info/exclude`, the global excludes
    /// file and the git configuration naming it), present or not, and the ignore files
    /// present at and below the start. A directory of the tree gaining or losing an ignore
    /// file changes that directory, which its own stamp shows (`index::stored`).
    pub(crate) fn inputs(&self) -> Vec<PathBuf> {
        let mut all = lock(&self.inputs).clone();
        all.sort();
        all.dedup();
        all
    }

    /// The ignore files skipped so far, sorted, each once.
    pub fn skipped(&self) -> Vec<SkippedIgnoreFile> {
        let mut all = lock(&self.skipped).clone();
        all.sort();
        all.dedup();
        all
    }
}
