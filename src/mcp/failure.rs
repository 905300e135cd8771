//! Errors a program can read (PRODUCT §10): every refusal says why in a field, not only in
//! prose. A [`Failure`] is a [`Reason`] (one of a small, stable set of codes), the sentence
//! the model reads, and the path or URI argument as the client sent it. It becomes a tool's
//! `isError` result with `structuredContent: {"error": {reason, path?, allowedRoots?}}`
//! ([`crate::mcp::render::Answer::failure`]) or a JSON-RPC error's `data: {reason, uri?,
//! allowedRoots?}` ([`Failure::rpc_data`]).
//!
//! Domain errors get their reason here and only here (the `From` impls and
//! [`Reason::of_io`]), from their variants, never by reading their text. The object names
//! only what the client sent and the roots it may use, never a canonical path: outside the
//! roots every path gets the same answer (ARCHITECTURE.md, "Rules that hold").
//! `allowedRoots` is given with the reasons about the workspace boundary only, so an
//! ordinary error does not pay for a long list of roots.

use std::io;

use serde_json::{Map, Value, json};

use crate::mcp::hints::Worded;
use rootgrep_core::access::Refusal;
use rootgrep_core::files::edit::EditError;
use rootgrep_core::files::list::ListError;
use rootgrep_core::files::mv::MoveError;
use rootgrep_core::files::read::ReadError;
use rootgrep_core::files::write::WriteError;
use rootgrep_core::roots::{Fault, PathError, RootSet};
use rootgrep_core::search::SearchError;

/// Why a request failed: a stable code a program can branch on. The set and the names are
/// part of the interface (README "Errors a program can read"); add codes, never rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The path lies outside the workspace roots (and the user was not or could not be asked).
    OutsideRoots,
    /// The path lies outside the operator's `--confine` directories: never allowed.
    OutsideConfine,
    /// The user refused access to the path (now or earlier in the session) or dismissed
    /// the question.
    RefusedByUser,
    /// The user's answer did not come (timeout, or the client could not ask).
    NoAnswer,
    /// No workspace roots are in force (an empty roots list and no DIR).
    NoRoots,
    NotFound,
    /// A directory was needed (a trailing `/`, a listing) and something else is there.
    NotADirectory,
    /// A file was needed and the path is a directory.
    IsADirectory,
    /// A FIFO, socket or device: never opened.
    SpecialFile,
    PermissionDenied,
    AlreadyExists,
    /// The file changed on disk while an edit read and replaced it: nothing was written.
    ChangedMeanwhile,
    /// A file over a size limit (resources/read, edit_file, a parse).
    TooLarge,
    /// The file is not text the operation can work on (not UTF-8, UTF-16 for an edit).
    NotText,
    /// edit_file: `old_string` does not occur.
    NoMatch,
    /// edit_file: `old_string` occurs more than once without `replace_all`.
    AmbiguousMatch,
    /// An argument is wrong: type, range, syntax (a regex, a glob, a path's text).
    InvalidArgument,
    /// A write tool with `--read-only`.
    ReadOnly,
    UnknownTool,
    Cancelled,
    /// Another failure of the operating system (an I/O error, a link loop).
    Io,
    /// A bug in rootgrep (a panic); details only on stderr.
    Internal,
}

impl Reason {
    /// Every reason, in documentation order.
    pub const ALL: &'static [Reason] = &[
        Reason::OutsideRoots,
        Reason::OutsideConfine,
        Reason::RefusedByUser,
        Reason::NoAnswer,
        Reason::NoRoots,
        Reason::NotFound,
        Reason::NotADirectory,
        Reason::IsADirectory,
        Reason::SpecialFile,
        Reason::PermissionDenied,
        Reason::AlreadyExists,
        Reason::ChangedMeanwhile,
        Reason::TooLarge,
        Reason::NotText,
        Reason::NoMatch,
        Reason::AmbiguousMatch,
        Reason::InvalidArgument,
        Reason::ReadOnly,
        Reason::UnknownTool,
        Reason::Cancelled,
        Reason::Io,
        Reason::Internal,
    ];

    /// The code on the wire.
    pub fn code(self) -> &'static str {
        match self {
            Reason::OutsideRoots => "outside_roots",
            Reason::OutsideConfine => "outside_confine",
            Reason::RefusedByUser => "refused_by_user",
            Reason::NoAnswer => "no_answer",
            Reason::NoRoots => "no_roots",
            Reason::NotFound => "not_found",
            Reason::NotADirectory => "not_a_directory",
            Reason::IsADirectory => "is_a_directory",
            Reason::SpecialFile => "special_file",
            Reason::PermissionDenied => "permission_denied",
            Reason::AlreadyExists => "already_exists",
            Reason::ChangedMeanwhile => "changed_meanwhile",
            Reason::TooLarge => "too_large",
            Reason::NotText => "not_text",
            Reason::NoMatch => "no_match",
            Reason::AmbiguousMatch => "ambiguous_match",
            Reason::InvalidArgument => "invalid_argument",
            Reason::ReadOnly => "read_only",
            Reason::UnknownTool => "unknown_tool",
            Reason::Cancelled => "cancelled",
            Reason::Io => "io_error",
            Reason::Internal => "internal",
        }
    }

    /// Reasons about the workspace boundary: their objects list the roots the client may use.
    fn names_roots(self) -> bool {
        matches!(
            self,
            Reason::OutsideRoots
                | Reason::OutsideConfine
                | Reason::RefusedByUser
                | Reason::NoAnswer
                | Reason::NoRoots
        )
    }

    /// The reason of an operating-system error, by its kind.
    pub fn of_io(err: &io::Error) -> Reason {
        match err.kind() {
            io::ErrorKind::NotFound => Reason::NotFound,
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                Reason::PermissionDenied
            }
            io::ErrorKind::AlreadyExists | io::ErrorKind::DirectoryNotEmpty => {
                Reason::AlreadyExists
            }
            io::ErrorKind::NotADirectory => Reason::NotADirectory,
            io::ErrorKind::IsADirectory => Reason::IsADirectory,
            io::ErrorKind::FileTooLarge => Reason::TooLarge,
            io::ErrorKind::InvalidInput | io::ErrorKind::InvalidFilename => Reason::InvalidArgument,
            _ => Reason::Io,
        }
    }
}

impl From<Refusal> for Reason {
    fn from(refusal: Refusal) -> Reason {
        match refusal {
            Refusal::Confined => Reason::OutsideConfine,
            Refusal::RefusedEarlier => Reason::RefusedByUser,
            Refusal::CannotAsk(_) => Reason::OutsideRoots,
        }
    }
}

impl From<&PathError> for Reason {
    fn from(err: &PathError) -> Reason {
        match err {
            PathError::NoRoots => Reason::NoRoots,
            PathError::Found(found) => match found.fault {
                Fault::DotDotAfterMissing => Reason::NotFound,
                Fault::NotADirectory => Reason::NotADirectory,
                Fault::Io(_) => Reason::Io,
            },
            PathError::Empty
            | PathError::Uri(_)
            | PathError::Nul
            | PathError::TooLong { .. }
            | PathError::Name(..) => Reason::InvalidArgument,
        }
    }
}

impl From<&ReadError> for Reason {
    fn from(err: &ReadError) -> Reason {
        match err {
            ReadError::NotFound(_) => Reason::NotFound,
            ReadError::IsDirectory(_) => Reason::IsADirectory,
            ReadError::Special(..) => Reason::SpecialFile,
            ReadError::Io(_, err) => Reason::of_io(err),
        }
    }
}

impl From<&EditError> for Reason {
    fn from(err: &EditError) -> Reason {
        match err {
            EditError::TooManyEdits(_)
            | EditError::NoEdits
            | EditError::EmptyOldString { .. }
            | EditError::NoChange { .. } => Reason::InvalidArgument,
            EditError::TooLarge { .. } => Reason::TooLarge,
            EditError::Cancelled => Reason::Cancelled,
            EditError::FileNotFound { .. } => Reason::NotFound,
            EditError::Io { source, .. } => Reason::of_io(source),
            EditError::Write { source, .. } => source.into(),
            EditError::NotRegularFile { .. } => Reason::InvalidArgument,
            EditError::NotUtf8 { .. } => Reason::NotText,
            EditError::NotFound { .. } => Reason::NoMatch,
            EditError::Ambiguous { .. } => Reason::AmbiguousMatch,
            EditError::ChangedMeanwhile { .. } => Reason::ChangedMeanwhile,
        }
    }
}

impl From<&WriteError> for Reason {
    fn from(err: &WriteError) -> Reason {
        match err {
            WriteError::MissingParent { .. } => Reason::NotFound,
            WriteError::ParentNotADirectory { .. } | WriteError::InTheWay { .. } => {
                Reason::NotADirectory
            }
            WriteError::IsADirectory { .. } => Reason::IsADirectory,
            // A special file is refused as an argument (not `special_file`, which says a
            // read never opened one): the reason the answers have always given.
            WriteError::NotAFilePath { .. }
            | WriteError::NotADirectoryPath { .. }
            | WriteError::Symlink { .. }
            | WriteError::SpecialFile { .. } => Reason::InvalidArgument,
            WriteError::ReadOnly { .. } | WriteError::NotPermitted { .. } => {
                Reason::PermissionDenied
            }
            WriteError::NoTempName { .. } => Reason::AlreadyExists,
            WriteError::ChangedMeanwhile => Reason::ChangedMeanwhile,
            WriteError::Io { source, .. } => Reason::of_io(source),
        }
    }
}

impl From<&MoveError> for Reason {
    fn from(err: &MoveError) -> Reason {
        match err {
            MoveError::Exists { .. } => Reason::AlreadyExists,
            MoveError::NoParent { .. } | MoveError::NoSource { .. } => Reason::NotFound,
            MoveError::IntoItself { .. } | MoveError::NotMovable { .. } => Reason::InvalidArgument,
            MoveError::CrossesDevices { .. } | MoveError::Unsupported { .. } => Reason::Io,
            MoveError::WrongKind { source, .. } | MoveError::Io { source, .. } => {
                Reason::of_io(source)
            }
        }
    }
}

impl From<&ListError> for Reason {
    fn from(err: &ListError) -> Reason {
        match err {
            ListError::NotADirectory { .. } => Reason::NotADirectory,
            ListError::Io { source, .. } => Reason::of_io(source),
        }
    }
}

impl From<&SearchError> for Reason {
    fn from(_: &SearchError) -> Reason {
        // Every query error is about an argument (a regex, a glob, a type name).
        Reason::InvalidArgument
    }
}

/// A failed request: why (a code), what the model reads, and the argument as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub reason: Reason,
    pub message: String,
    /// The path or URI argument exactly as the client sent it (never a canonical path).
    pub sent: Option<String>,
}

impl Failure {
    pub fn new(reason: Reason, message: impl Into<String>) -> Failure {
        Failure {
            reason,
            message: message.into(),
            sent: None,
        }
    }

    /// The failure of a domain error, with its reason and its text as the model reads it
    /// (with the advice of [`crate::mcp::hints`]).
    pub fn of<E>(err: &E) -> Failure
    where
        E: Worded,
        for<'a> &'a E: Into<Reason>,
    {
        Failure::new(err.into(), err.words())
    }

    /// Names the argument the failure is about (as the client sent it).
    pub fn about(mut self, sent: &str) -> Failure {
        if self.sent.is_none() {
            self.sent = Some(sent.to_string());
        }
        self
    }

    /// The `data` of a JSON-RPC error about a URI (`resources/*`).
    pub fn rpc_data(&self, roots: &RootSet) -> Value {
        error_object(self.reason, self.sent.as_deref(), "uri", roots)
    }
}

/// The error object: `{reason, <key>: sent, allowedRoots}` (`key` is `path` for tools,
/// `uri` for resources; `allowedRoots` for the boundary reasons only).
pub fn error_object(reason: Reason, sent: Option<&str>, key: &str, roots: &RootSet) -> Value {
    let mut object = Map::new();
    object.insert("reason".into(), json!(reason.code()));
    if let Some(sent) = sent {
        object.insert(key.into(), json!(sent_text(sent)));
    }
    if reason.names_roots() {
        let allowed: Vec<String> = roots
            .roots
            .iter()
            .map(|root| rootgrep_core::roots::path_text(root.effective()))
            .collect();
        object.insert("allowedRoots".into(), json!(allowed));
    }
    Value::Object(object)
}

/// The argument as an error object repeats it: exact when it could name a file at all
/// (shorter than `resolve`'s limit), else cut like every echo of client input.
pub fn sent_text(sent: &str) -> String {
    if sent.len() < 3 * rootgrep_core::roots::PATH_MAX {
        sent.to_string()
    } else {
        rootgrep_core::quote::echo(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_codes_are_distinct_snake_case() {
        let codes: std::collections::BTreeSet<&str> =
            Reason::ALL.iter().map(|r| r.code()).collect();
        assert_eq!(codes.len(), Reason::ALL.len());
        for code in codes {
            assert!(
                code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{code}"
            );
        }
    }

    #[test]
    fn io_errors_map_by_kind() {
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(Reason::of_io(&denied), Reason::PermissionDenied);
        let missing = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(Reason::of_io(&missing), Reason::NotFound);
        assert_eq!(Reason::of_io(&io::Error::other("x")), Reason::Io);
    }
}
