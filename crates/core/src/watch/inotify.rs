//! The Linux kernel: inotify used directly, instead of notify's watcher. A recursive watch
//! is one inotify watch per directory; notify added them from one thread, `stat`ing every
//! entry, and kept two full paths per directory (a restart of a 1M-file tree spent 4.7 s
//! and 42 MiB on that). Here the directories are listed on several threads (a watch is
//! added before its directory is listed, so nothing created meanwhile goes unseen; a leaf,
//! by its link count, is not listed at all), and each watch keeps only its name and its
//! parent's watch: a path is put together when an event needs it, and a directory renamed
//! inside a root needs no path rewritten.
//!
//! Events are handed to the actor as notify's types ([`Msg::Raw`]), as notify's watcher
//! did, so the actor and every other platform (notify there: `kernel.rs`) are unchanged.
//! What the reader thread does besides: a directory created or moved in under a
//! recursive watch is watched (with what it holds), one moved away is unwatched, and a
//! watch the kernel dropped (its directory deleted) is forgotten.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::event::{CreateKind, Flag, ModifyKind, RemoveKind};
use notify::{Event, EventKind};
use rustix::fs::inotify::{self, ReadFlags, WatchFlags};

use super::kernel::{Gather, Kernel, Msg, WatchError, hand_on};
use super::settle::is_temporary;
use crate::mutex::lock;

/// What every watch subscribes to: creations, removals, renames, content and attribute
/// changes, and closes after writing (no opens, reads or read-only closes: reading the
/// tree wakes nobody). The same kinds notify was asked for (`notify_kernel::EVENT_KINDS`).
const CHANGES: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::CLOSE_WRITE);

/// A path watched by the caller (a root, the sentinel directory) also reports its own
/// removal or rename: nothing else would say that a root went away.
const SELF: WatchFlags = WatchFlags::DELETE_SELF.union(WatchFlags::MOVE_SELF);

/// One watch.
struct Node {
    /// The watch of the directory holding this one; `None` for a path the caller watched.
    parent: Option<i32>,
    /// The entry's name in its parent; the whole path for a path the caller watched.
    name: Box<OsStr>,
    /// Whether directories made here are watched too.
    recursive: bool,
    /// The watches of the directories here (so a directory moved away is unwatched whole).
    children: Vec<i32>,
}

/// Every watch, by its descriptor.
#[derive(Default)]
struct Watches {
    nodes: HashMap<i32, Node>,
}

impl Watches {
    /// The path `wd` watches, with `name` below it when given; `None` when `wd` is unknown
    /// (forgotten, or being added while its directory's events already arrive).
    fn path(&self, wd: i32, name: Option<&OsStr>) -> Option<PathBuf> {
        let mut names: Vec<&OsStr> = name.into_iter().collect();
        let mut at = wd;
        loop {
            let node = self.nodes.get(&at)?;
            names.push(&node.name);
            match node.parent {
                Some(parent) => at = parent,
                None => break,
            }
        }
        let mut path = PathBuf::new();
        for name in names.iter().rev() {
            path.push(name);
        }
        Some(path)
    }

    /// Records the watch `wd` of `name` in `parent` (or of the whole path, without a
    /// parent). The kernel gives a directory watched again the descriptor it has: the
    /// node then moves to where it is now.
    fn insert(&mut self, wd: i32, parent: Option<i32>, name: &OsStr, recursive: bool) {
        let children = match self.nodes.remove(&wd) {
            Some(old) => {
                self.detach(wd, old.parent);
                old.children
            }
            None => Vec::new(),
        };
        if let Some(parent) = parent.and_then(|parent| self.nodes.get_mut(&parent)) {
            parent.children.push(wd);
        }
        let node = Node {
            parent,
            name: name.into(),
            recursive,
            children,
        };
        self.nodes.insert(wd, node);
    }

    fn detach(&mut self, wd: i32, parent: Option<i32>) {
        if let Some(parent) = parent.and_then(|parent| self.nodes.get_mut(&parent)) {
            parent.children.retain(|child| *child != wd);
        }
    }

    /// Forgets `wd` and every watch below it, returning their descriptors.
    fn remove_tree(&mut self, wd: i32) -> Vec<i32> {
        let Some(node) = self.nodes.get(&wd) else {
            return Vec::new();
        };
        self.detach(wd, node.parent);
        let mut removed = Vec::new();
        let mut todo = vec![wd];
        while let Some(at) = todo.pop() {
            if let Some(node) = self.nodes.remove(&at) {
                todo.extend(node.children);
                removed.push(at);
            }
        }
        removed
    }

    /// The watch of the directory `name` in `parent`'s.
    fn child(&self, parent: i32, name: &OsStr) -> Option<i32> {
        let node = self.nodes.get(&parent)?;
        node.children
            .iter()
            .copied()
            .find(|child| self.nodes.get(child).is_some_and(|c| &*c.name == name))
    }
}

/// What the reader thread and the actor share: the instance and its watches.
struct Shared {
    fd: OwnedFd,
    watches: Mutex<Watches>,
    /// Hands events and errors to the actor (see `Shared::send`).
    raw_sender: SyncSender<Msg>,
    lost: Arc<AtomicBool>,
}

impl Shared {
    /// Hands an event to the actor (`kernel::hand_on`: never blocks, loses loudly).
    fn send(&self, raw: notify::Result<Event>) {
        hand_on(&self.raw_sender, &self.lost, raw);
    }

    /// Removes the watches of `wds` from the kernel (each was forgotten already).
    fn unwatch_all(&self, wds: Vec<i32>) {
        for wd in wds {
            // Fails only for a watch the kernel dropped already (its directory deleted).
            let _ = inotify::remove_watch(&self.fd, wd);
        }
    }
}

/// The running instance: the reader thread and how to stop it.
struct Running {
    shared: Arc<Shared>,
    /// Written to wake the reader thread when it must stop.
    stop: OwnedFd,
    reader: JoinHandle<()>,
}

/// The real kernel on Linux: an inotify instance, created on first use, feeding the
/// actor's queue from a reader thread of its own.
pub(super) struct InotifyKernel {
    raw_sender: SyncSender<Msg>,
    lost: Arc<AtomicBool>,
    /// Testing only: how late the reader thread hands each raw event on.
    read_delay: Duration,
    running: Option<Running>,
}

impl InotifyKernel {
    pub(super) fn new(
        raw_sender: SyncSender<Msg>,
        lost: Arc<AtomicBool>,
        read_delay: Duration,
    ) -> InotifyKernel {
        InotifyKernel {
            raw_sender,
            lost,
            read_delay,
            running: None,
        }
    }
}

impl Kernel for InotifyKernel {
    fn start(&mut self) -> Result<bool, WatchError> {
        if self.running.is_some() {
            return Ok(false);
        }
        let flags = inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK;
        let fd = inotify::init(flags).map_err(|err| WatchError::Start(io_error(err)))?;
        let flags = rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK;
        let stop =
            rustix::event::eventfd(0, flags).map_err(|err| WatchError::Start(io_error(err)))?;
        let shared = Arc::new(Shared {
            fd,
            watches: Mutex::default(),
            raw_sender: self.raw_sender.clone(),
            lost: Arc::clone(&self.lost),
        });
        let reader = {
            let shared = Arc::clone(&shared);
            let stop = stop
                .try_clone()
                .map_err(|err| WatchError::Start(notify::Error::io(err)))?;
            let read_delay = self.read_delay;
            std::thread::Builder::new()
                .name("rootgrep-inotify".into())
                .spawn(move || read(&shared, &stop, read_delay))
                .map_err(|err| WatchError::Start(notify::Error::io(err)))?
        };
        self.running = Some(Running {
            shared,
            stop,
            reader,
        });
        Ok(true)
    }

    fn watch(&mut self, path: &Path, recursive: bool) -> Result<(), WatchError> {
        let running = self.running.as_ref().ok_or(WatchError::NotRunning)?;
        let shared = &running.shared;
        let mut flags = CHANGES | SELF | WatchFlags::DONT_FOLLOW;
        if recursive {
            flags |= WatchFlags::ONLYDIR;
        }
        let wd = inotify::add_watch(&shared.fd, path, flags)
            .map_err(|err| WatchError::Watch(watch_error(err, path)))?;
        lock(&shared.watches).insert(wd, None, path.as_os_str(), recursive);
        if !recursive {
            return Ok(());
        }
        let threads = 4 * crate::pool::pacing::thread_count();
        match add_below(shared, vec![(path.to_path_buf(), wd)], threads) {
            Some(limit) => Err(WatchError::Watch(limit)),
            None => Ok(()),
        }
    }

    fn unwatch(&mut self, path: &Path) {
        let Some(running) = &self.running else {
            return;
        };
        let shared = &running.shared;
        let removed = {
            let mut watches = lock(&shared.watches);
            let tops: Vec<i32> = (watches.nodes.iter())
                .filter(|(_, node)| node.parent.is_none() && *node.name == *path.as_os_str())
                .map(|(wd, _)| *wd)
                .collect();
            let removed: Vec<i32> = tops
                .into_iter()
                .flat_map(|wd| watches.remove_tree(wd))
                .collect();
            removed
        };
        shared.unwatch_all(removed);
    }

    fn ordered(&self) -> bool {
        true
    }

    fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            let _ = rustix::io::write(&running.stop, &1u64.to_ne_bytes());
            let _ = running.reader.join();
            // Dropping the last handle on the instance closes it: the kernel drops every
            // watch with it.
        }
    }
}

impl Drop for InotifyKernel {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The reader thread: waits for events (or `stop`), reads every one there is, in order,
/// and hands each on.
fn read(shared: &Shared, stop: &OwnedFd, read_delay: Duration) {
    use rustix::event::{PollFd, PollFlags, poll};
    // Room for hundreds of events per read (each is 16 bytes and a name).
    let mut buffer = vec![std::mem::MaybeUninit::<u8>::uninit(); 64 * 1024];
    let mut gather = Gather::default();
    loop {
        let mut fds = [
            PollFd::new(&shared.fd, PollFlags::IN),
            PollFd::new(stop, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(err) => {
                shared.send(Err(io_error(err)));
                return;
            }
        }
        if !fds[1].revents().is_empty() {
            return;
        }
        let mut reader = inotify::Reader::new(shared.fd.as_fd(), &mut buffer);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(rustix::io::Errno::AGAIN) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(err) => {
                    shared.send(Err(io_error(err)));
                    return;
                }
            };
            let name = event
                .file_name()
                .map(|name| OsStr::from_bytes(name.to_bytes()));
            let now = Instant::now();
            for raw in translate(shared, event.wd(), event.events(), name) {
                if !read_delay.is_zero() {
                    std::thread::sleep(read_delay);
                }
                shared.send(raw);
            }
            // After the event in hand is on its way: a pause delays only the ones after it.
            gather.pause_in_bursts(now);
        }
    }
}

/// What one inotify event means for the actor, in notify's words; watches added or
/// forgotten on the way (a directory made, moved or deleted).
fn translate(
    shared: &Shared,
    wd: i32,
    flags: ReadFlags,
    name: Option<&OsStr>,
) -> Vec<notify::Result<Event>> {
    if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
        return vec![Ok(Event::new(EventKind::Other).set_flag(Flag::Rescan))];
    }
    let mut watches = lock(&shared.watches);
    if flags.contains(ReadFlags::IGNORED) {
        // The kernel dropped the watch (its directory was deleted, or it was removed).
        watches.remove_tree(wd);
        return Vec::new();
    }
    let Some(path) = watches.path(wd, name) else {
        return Vec::new();
    };
    if is_temporary(&path) {
        return Vec::new();
    }
    let is_dir = flags.contains(ReadFlags::ISDIR);
    let recursive = watches.nodes.get(&wd).is_some_and(|node| node.recursive);
    let mut out = Vec::new();
    if flags.contains(ReadFlags::MOVED_FROM) {
        // A directory moved away keeps its watches (they follow the inode): forget them,
        // or its events would be reported where it was. Moved within the root, it is
        // watched again where it arrives.
        if let Some(child) = name
            .filter(|_| is_dir)
            .and_then(|name| watches.child(wd, name))
        {
            let removed = watches.remove_tree(child);
            shared.unwatch_all(removed);
        }
        out.push(Ok(event(EventKind::Remove(RemoveKind::Any), &path)));
    }
    if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) {
        out.push(Ok(event(EventKind::Create(CreateKind::Any), &path)));
        if is_dir
            && recursive
            && let Some(name) = name
        {
            drop(watches);
            out.extend(watch_new_dir(shared, wd, name, &path));
            return out;
        }
    }
    if flags.contains(ReadFlags::DELETE) {
        out.push(Ok(event(EventKind::Remove(RemoveKind::Any), &path)));
    }
    if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF | ReadFlags::UNMOUNT) {
        out.push(Ok(event(EventKind::Remove(RemoveKind::Any), &path)));
    }
    if flags.intersects(ReadFlags::MODIFY | ReadFlags::ATTRIB | ReadFlags::CLOSE_WRITE) {
        out.push(Ok(event(EventKind::Modify(ModifyKind::Any), &path)));
    }
    out
}

/// Watches a directory made (or moved in) under a recursive watch, and every directory
/// it holds: the errors that hid part of it, as events.
fn watch_new_dir(
    shared: &Shared,
    parent: i32,
    name: &OsStr,
    path: &Path,
) -> Vec<notify::Result<Event>> {
    let flags = CHANGES | WatchFlags::DONT_FOLLOW | WatchFlags::ONLYDIR;
    let wd = match inotify::add_watch(&shared.fd, path, flags) {
        Ok(wd) => wd,
        // Gone again, or not a directory any more (a symlink put in its place).
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Vec::new(),
        Err(err) => return vec![Err(watch_error(err, path))],
    };
    lock(&shared.watches).insert(wd, Some(parent), name, true);
    match add_below(shared, vec![(path.to_path_buf(), wd)], 1) {
        Some(limit) => vec![Err(limit)],
        None => Vec::new(),
    }
}

/// Watches every directory below the directories of `start` (each watched already, with
/// its descriptor), on `threads` threads: each directory is watched before it is listed,
/// so a directory made meanwhile is seen either by the listing or by its parent's watch.
/// Directories that could not be watched or listed are reported as error events, and
/// skipped; `Some` when the kernel's limit on watches was reached (the walk stops: every
/// directory after would fail the same way).
fn add_below(shared: &Shared, start: Vec<(PathBuf, i32)>, threads: usize) -> Option<notify::Error> {
    let leaves = start.first().and_then(|(dir, _)| leaf_rule(dir));
    let queue = WorkQueue::new(start);
    let limit: Mutex<Option<notify::Error>> = Mutex::new(None);
    let work = || {
        while let Some((dir, wd)) = queue.next() {
            let found = match leaves.is_some_and(|device| is_leaf(&dir, device)) {
                true => Vec::new(),
                false => list_and_watch(shared, &dir, wd, &limit),
            };
            queue.done(found, lock(&limit).is_some());
        }
    };
    if threads <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        });
    }
    limit
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Filesystems whose directories count their subdirectories in their links (2, plus one
/// per subdirectory's `..`): ext2/3/4, XFS, tmpfs. There a directory of 2 links holds no
/// directory, and its watch is all it needs: not listing it spares reading every entry of
/// the leaves (half the directories of the generated 1M-file tree, 43 % of its entries),
/// as GNU find's leaf rule does. Elsewhere the links say nothing (btrfs and overlayfs'
/// merged directories give 1; FUSE and network filesystems whatever they like): listed.
const COUNTS_SUBDIRECTORIES: [rustix::fs::FsWord; 3] = [0xEF53, 0x5846_5342, 0x0102_1994];

/// The device of `dir` (followed, as a root's watch follows it) when its filesystem counts
/// subdirectories in links.
fn leaf_rule(dir: &Path) -> Option<rustix::fs::Dev> {
    let fs = rustix::fs::statfs(dir).ok()?;
    if !COUNTS_SUBDIRECTORIES.contains(&fs.f_type) {
        return None;
    }
    Some(rustix::fs::stat(dir).ok()?.st_dev)
}

/// Whether `dir` (already watched) holds no directory, by its links, on `device` (another
/// filesystem mounted below the root is listed: its rule is not known). Asked after the
/// watch was added, as a listing would be: a directory made later is seen by the watch.
fn is_leaf(dir: &Path, device: rustix::fs::Dev) -> bool {
    rustix::fs::lstat(dir).is_ok_and(|st| st.st_nlink == 2 && st.st_dev == device)
}

/// Lists `dir` (watched as `wd`) and watches each directory in it, returning them.
fn list_and_watch(
    shared: &Shared,
    dir: &Path,
    wd: i32,
    limit: &Mutex<Option<notify::Error>>,
) -> Vec<(PathBuf, i32)> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(err) => {
            shared.send(Err(notify::Error::io(err).add_path(dir.to_path_buf())));
            return Vec::new();
        }
    };
    let flags = CHANGES | WatchFlags::DONT_FOLLOW | WatchFlags::ONLYDIR;
    let mut found = Vec::new();
    for entry in entries.flatten() {
        // The type the listing gave (no `stat`); a symlink is never followed.
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        let path = entry.path();
        match inotify::add_watch(&shared.fd, &path, flags) {
            Ok(child) => {
                lock(&shared.watches).insert(child, Some(wd), &entry.file_name(), true);
                found.push((path, child));
            }
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => {}
            Err(rustix::io::Errno::NOSPC) => {
                *lock(limit) = Some(watch_error(rustix::io::Errno::NOSPC, &path));
                return found;
            }
            Err(err) => shared.send(Err(watch_error(err, &path))),
        }
    }
    found
}

/// Directories waiting to be listed, shared by the threads of [`add_below`].
struct WorkQueue {
    /// The directories waiting, and how many are being listed now.
    state: Mutex<(Vec<(PathBuf, i32)>, usize)>,
    changed: Condvar,
    stopped: AtomicBool,
}

impl WorkQueue {
    fn new(start: Vec<(PathBuf, i32)>) -> WorkQueue {
        WorkQueue {
            state: Mutex::new((start, 0)),
            changed: Condvar::new(),
            stopped: AtomicBool::new(false),
        }
    }

    /// The next directory to list; `None` once there is none and none is being listed
    /// (nothing more can come), or the walk was stopped.
    fn next(&self) -> Option<(PathBuf, i32)> {
        let mut state = lock(&self.state);
        loop {
            if self.stopped.load(Ordering::SeqCst) {
                return None;
            }
            if let Some(dir) = state.0.pop() {
                state.1 += 1;
                return Some(dir);
            }
            if state.1 == 0 {
                return None;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// One directory listed: what it held joins the queue; `stop` ends the walk.
    fn done(&self, found: Vec<(PathBuf, i32)>, stop: bool) {
        if stop {
            self.stopped.store(true, Ordering::SeqCst);
        }
        let mut state = lock(&self.state);
        state.1 -= 1;
        state.0.extend(found);
        drop(state);
        self.changed.notify_all();
    }
}

fn event(kind: EventKind, path: &Path) -> Event {
    Event::new(kind).add_path(path.to_path_buf())
}

fn io_error(err: rustix::io::Errno) -> notify::Error {
    notify::Error::io(std::io::Error::from(err))
}

/// A watch that could not be added, in notify's words (the actor's `describe` reads them).
fn watch_error(err: rustix::io::Errno, path: &Path) -> notify::Error {
    let error = match err {
        rustix::io::Errno::NOSPC => notify::Error::new(notify::ErrorKind::MaxFilesWatch),
        rustix::io::Errno::NOENT => notify::Error::path_not_found(),
        other => io_error(other),
    };
    error.add_path(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(name: &str) -> &OsStr {
        OsStr::new(name)
    }

    #[test]
    fn paths_are_put_together_from_names_and_follow_a_directory_moved() {
        let mut watches = Watches::default();
        watches.insert(1, None, os("/tree"), true);
        watches.insert(2, Some(1), os("a"), true);
        watches.insert(3, Some(2), os("b"), true);
        watches.insert(4, Some(1), os("z"), true);
        assert_eq!(
            watches.path(3, Some(os("f.rs"))),
            Some("/tree/a/b/f.rs".into())
        );
        assert_eq!(watches.path(1, None), Some("/tree".into()));
        assert_eq!(watches.child(1, os("a")), Some(2));
        // `a` watched again as `z/c` (the kernel gives an inode its descriptor again):
        // what is below it follows.
        watches.insert(2, Some(4), os("c"), true);
        assert_eq!(watches.path(3, None), Some("/tree/z/c/b".into()));
        assert_eq!(watches.child(1, os("a")), None);
        assert_eq!(watches.child(4, os("c")), Some(2));
        assert_eq!(watches.path(9, None), None, "an unknown watch has no path");
    }

    #[test]
    fn removing_a_directory_forgets_everything_below_it() {
        let mut watches = Watches::default();
        watches.insert(1, None, os("/tree"), true);
        watches.insert(2, Some(1), os("a"), true);
        watches.insert(3, Some(2), os("b"), true);
        watches.insert(4, Some(3), os("c"), true);
        watches.insert(5, Some(1), os("d"), true);
        let mut removed = watches.remove_tree(2);
        removed.sort_unstable();
        assert_eq!(removed, [2, 3, 4]);
        assert_eq!(watches.path(4, None), None);
        assert_eq!(watches.nodes[&1].children, [5]);
        assert_eq!(
            watches.remove_tree(2),
            Vec::<i32>::new(),
            "twice: nothing more"
        );
        let mut removed = watches.remove_tree(1);
        removed.sort_unstable();
        assert_eq!(removed, [1, 5]);
        assert!(watches.nodes.is_empty());
    }

    #[test]
    fn the_walk_stops_once_nothing_is_left_and_no_directory_is_being_listed() {
        let queue = WorkQueue::new(vec![("/r".into(), 1)]);
        let first = queue.next().expect("the start");
        assert_eq!(first.1, 1);
        // One directory is being listed: another thread would wait, not stop.
        queue.done(vec![("/r/a".into(), 2), ("/r/b".into(), 3)], false);
        assert!(queue.next().is_some());
        assert!(queue.next().is_some());
        queue.done(Vec::new(), false);
        queue.done(Vec::new(), false);
        assert!(queue.next().is_none(), "nothing left, nothing being listed");
        let queue = WorkQueue::new(vec![("/r".into(), 1), ("/s".into(), 2)]);
        let _ = queue.next();
        queue.done(Vec::new(), true);
        assert!(queue.next().is_none(), "stopped: the rest is left");
    }
}
