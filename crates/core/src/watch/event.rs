//! What the watcher tells its consumers: the settled, per-path [`WatchEvent`]s, how each
//! root is watched ([`RootStatus`]), and the [`Handler`] that receives them. Plain data,
//! below the actor that produces them and the indexes that consume them.

use std::path::PathBuf;

/// What the watcher reports. Paths are absolute and lie under one of the watched roots
/// (which are expected to be canonical, so event paths are canonical too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// Something started happening at this path; a settled event (or nothing, if the net
    /// effect is nil) follows once the path has been quiet a moment (`debounce::QUIET`).
    /// Lets caches stop serving at once.
    Pending(PathBuf),
    /// The file's content or metadata changed; it still exists.
    Changed(PathBuf),
    /// The path now exists and did not before (or was replaced: deleted and re-created,
    /// or renamed over).
    Created(PathBuf),
    /// The path is gone (deleted or renamed away; possibly it existed only briefly).
    Removed(PathBuf),
    /// No burst is pending any more: every `Pending` so far has been settled.
    Quiet,
    /// The kernel dropped events (inotify queue overflow): anything may have changed.
    Overflow,
    /// Watching went wrong (e.g. a watch could not be added); events may be missing.
    Error(String),
    /// A root's watch state changed (see `Watcher::status`).
    Status(PathBuf, RootStatus),
}

/// How one root is watched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootStatus {
    /// The watch is being set up.
    Starting,
    /// Every directory under the root is watched.
    Watching,
    /// The root is not (or no longer fully) watched; the reason says why.
    Failed(String),
}

/// The receiving end of a watcher's events.
pub type Handler = Box<dyn FnMut(WatchEvent) + Send + 'static>;
