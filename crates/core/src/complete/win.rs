//! Windows value text for completion as pure functions: the typed value as a Windows
//! path, roots and children as values in either form. Kept apart from the filesystem
//! side so it is tested on every platform.

use super::form::Form;
use crate::platform::winpath;

/// The typed value as a Windows path: the `Uri` form percent-decoded, `/srv/share`
/// (from `file:////srv/share`) back to `//srv/share`, a `/` before a drive dropped
/// (`/C:/x`, as in the URI's path).
pub fn typed(value: &str, form: Form) -> String {
    match form {
        Form::Plain => value.to_string(),
        Form::Uri => {
            let decoded = percent_encoding::percent_decode_str(value)
                .decode_utf8_lossy()
                .into_owned();
            match decoded.strip_prefix('/') {
                Some(rest) if winpath::has_drive(rest) => rest.to_string(),
                Some(rest) if !rest.starts_with('/') => format!("//{rest}"),
                _ => decoded,
            }
        }
    }
}

/// The directory typed (up to and with its last separator) and the partial name after
/// it; `None` when no separator was typed yet (`C:`, `c`).
pub fn split(typed: &str) -> Option<(&str, &str)> {
    let at = typed.rfind(['/', '\\'])?;
    Some((&typed[..=at], &typed[at + 1..]))
}

/// Whether the root (ordinary form) is what the typed text leads to: a prefix of it,
/// ignoring case and separator style.
pub(crate) fn leads_to(root: &str, typed: &str) -> bool {
    let root = winpath::fold(&winpath::unified(root));
    let mut root = root;
    if !root.ends_with('\\') {
        root.push('\\');
    }
    root.starts_with(&winpath::fold(&winpath::unified(typed)))
}

/// A root (ordinary form) as a value, with a trailing separator.
pub fn root_value(root: &str, form: Form) -> String {
    match form {
        Form::Plain if root.ends_with('\\') => root.to_string(),
        Form::Plain => format!("{root}\\"),
        Form::Uri => dir_suffix(uri_value(root)),
    }
}

/// `name` in the typed directory `dir` as a value: the directory's spelling and
/// separator kept (clients match values against what was typed).
pub(crate) fn child_value(dir: &str, name: &str, is_dir: bool, form: Form) -> String {
    let joined = format!("{dir}{name}");
    match form {
        Form::Plain if is_dir => {
            let sep = if dir.ends_with('/') { '/' } else { '\\' };
            format!("{joined}{sep}")
        }
        Form::Plain => joined,
        Form::Uri if is_dir => dir_suffix(uri_value(&joined)),
        Form::Uri => uri_value(&joined),
    }
}

/// What follows `file:///` in the path's URI: `C:/x` for `file:///C:/x`, `/srv/share`
/// for the share `\\srv\share` (`file:////srv/share`, which names it too).
fn uri_value(path: &str) -> String {
    let uri = crate::roots::windows_file_uri(path);
    let rest = &uri["file://".len()..];
    match rest.strip_prefix('/') {
        Some(local) => local.to_string(),
        None => format!("/{rest}"),
    }
}

fn dir_suffix(mut value: String) -> String {
    if !value.ends_with('/') {
        value.push('/');
    }
    value
}
