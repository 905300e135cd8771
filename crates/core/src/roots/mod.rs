//! The workspace boundary: which directories (or files) are "the workspace", and whether a
//! path the model names lies inside it.
//!
//! A [`RootSet`] is an immutable snapshot of the roots in force, with the source they came
//! from (the client's `roots/list`, the command line, or the working directory). Swapping
//! roots means building a new set; calls already running keep the snapshot they started with.
//!
//! Containment is always decided on canonical paths (symlinks resolved, `..` removed) and
//! compared component by component, never by string prefix: `/x/app2` is not inside `/x/app`,
//! and a symlink inside a root that points outside it is outside. A path that does not exist
//! yet (a write target) is judged by its nearest existing ancestor.
//!
//! Files from the floor up: `uri` (`file://` ↔ path), `place` (canonical spelling,
//! containment, a path as text), `set` (the roots in force), `resolve` (a path argument
//! against the roots, `PathError`), `confine` (the operator's boundary and the choice of
//! roots). Each is re-exported here, so callers name `crate::roots::X` only.

mod confine;
mod place;
mod resolve;
mod set;
mod uri;

pub use confine::{Confine, choose_roots};
#[cfg(all(unix, test))]
use place::within_by_identity;
pub use place::{Displaced, canonicalize, in_place, path_display, path_text, within};
#[cfg(all(unix, test))]
use resolve::NAME_MAX;
pub use resolve::{Fault, Found, PATH_MAX, PathError, Resolved, resolve, resolve_entry};
#[cfg(all(unix, test))]
use set::DESCRIBE_MAX_BYTES;
pub use set::{PathList, Root, RootSet, RootSource, describe_paths, name_text};
pub(crate) use uri::windows_file_uri;
pub use uri::{UriError, file_uri_from_path, path_from_file_uri};

#[cfg(all(test, unix))]
mod tests;
#[cfg(all(test, windows))]
mod windows_tests;
