//! The `glob` tool: its description, absolute patterns split into a directory and the
//! pattern under it, and the handler that runs the search on the pool and renders the
//! result ([`crate::mcp::render::glob`]).

use rmcp::model::Tool;

use super::args::{GLOB_DEFAULT_LIMIT, GlobArgs, OneOrMany, Sort, checked_offset, head_limit};
use super::context::Call;
use super::pool::{index_serves, known_total, lane_for, run, targets};
use super::schema::{read_only_annotations, schema_of};
use crate::mcp::hints;
use crate::mcp::render::Answer;
use crate::mcp::render::glob::{GlobOut, render_glob};
use rootgrep_core::search::{self, GlobQuery, SortBy};
use rootgrep_core::walk::Control;

/// The `glob` tool as `tools/list` shows it.
pub fn tool() -> Tool {
    Tool::new(
        "glob",
        "Find files by glob on the path relative to the root (\"src/**/*.ts\"); \
         gitignore-aware; newest first.",
        schema_of::<GlobArgs>(),
    )
    .with_raw_output_schema(schema_of::<GlobOut>())
    .with_annotations(read_only_annotations("Find files"))
}

pub async fn glob(call: &Call<'_>, mut args: GlobArgs) -> Answer {
    if args.pattern.trim().is_empty() {
        return Answer::error("`pattern` is empty; give a glob such as \"**/*.rs\"");
    }
    // An absolute pattern ("/home/me/app/src/**/*.rs") is split into the directory to
    // search and the pattern relative to it, as an agent means it.
    if args.path.is_none()
        && let Some((dir, rest)) = split_absolute_pattern(&args.pattern)
    {
        args.path = Some(OneOrMany::One(dir));
        args.pattern = rest;
    }
    let mut query = GlobQuery::new(args.pattern.clone());
    query.types = args
        .file_type
        .clone()
        .map(OneOrMany::into_vec)
        .unwrap_or_default();
    query.hidden = args.hidden.unwrap_or(false);
    query.no_ignore = args.no_ignore.unwrap_or(false);
    query.sort = match args.sort.unwrap_or(Sort::Modified) {
        Sort::Path => SortBy::Path,
        Sort::Modified => SortBy::Modified,
    };
    let budget = call.budget();
    query.offset = match checked_offset(args.offset, "glob") {
        Ok(offset) => offset,
        Err(answer) => return answer,
    };
    query.limit = Some(head_limit(args.head_limit, GLOB_DEFAULT_LIMIT, budget));
    // Refuse a glob too long or complex before resolving paths or waiting for a slot.
    if let Err(err) = search::compile_glob(&query.pattern) {
        return Answer::error(hints::search(&err));
    }
    let targets = match targets(call, args.path.as_ref()).await {
        Ok(targets) => targets,
        Err(answer) => return answer,
    };
    let index = call.file_index();
    let walks_more = query.hidden || query.no_ignore || !query.types.is_empty();
    let total = known_total(call, &targets, walks_more).await;
    // A glob the fresh index answers reads nothing from the disk.
    let lane = lane_for(&targets, index_serves(call, &targets, walks_more)).await;
    let paths = call.paths();
    let work = move |control: &Control, threads: usize| {
        let query = GlobQuery { threads, ..query };
        let outcome = match &index {
            Some(index) => search::glob_indexed(&query, &targets, index, control),
            None => search::glob(&query, &targets, control),
        };
        match outcome {
            Ok(outcome) => render_glob(&outcome, query.offset, &paths, budget).bounded(budget),
            Err(err) => Answer::error(hints::search(&err)),
        }
    };
    match run(call, "found", lane, total, || {}, work).await {
        Some(answer) => answer,
        None => Answer::cancelled(),
    }
}

/// Splits an absolute glob into its literal directory prefix and the rest:
/// `/a/b/**/*.rs` → (`/a/b`, `**/*.rs`); a literal `/a/b/c.rs` → (`/a/b`, `c.rs`). `None`
/// for relative patterns, or when nothing is left to match. On Windows also `C:\x\*.rs`,
/// `C:/x/**/*.rs` and `\\srv\share\*.rs` (see [`split_absolute_pattern_for`]).
pub(crate) fn split_absolute_pattern(pattern: &str) -> Option<(String, String)> {
    split_absolute_pattern_for(pattern, cfg!(windows))
}

/// [`split_absolute_pattern`] under Unix rules (`windows: false`: `/`-rooted, `/` the only
/// separator, `\` an escape) or Windows rules (`windows: true`): rooted at a drive
/// (`C:\`, `c:/`), a UNC share (`\\srv\share`, `//srv/share`), a verbatim drive
/// (`\\?\C:\`) or the current drive's root (`\x`, `/x`); `\` and `/` both separate (globset
/// takes no escapes on Windows). The directory is given with `\`, the rest with `/` (the
/// glob's separator on every platform).
pub(crate) fn split_absolute_pattern_for(pattern: &str, windows: bool) -> Option<(String, String)> {
    let literal = |c: &str| !c.contains(['*', '?', '[', ']', '{', '}']);
    if !windows {
        if !pattern.starts_with('/') {
            return None;
        }
        let components: Vec<&str> = pattern.split('/').collect();
        // A fully literal path names one file: search its directory for its name.
        let split = components
            .iter()
            .position(|c| !literal(c))
            .unwrap_or(components.len() - 1)
            .max(1);
        let dir = components[..split].join("/");
        let rest = components[split..].join("/");
        if rest.is_empty() {
            return None;
        }
        return Some((if dir.is_empty() { "/".to_string() } else { dir }, rest));
    }
    let is_sep = |c: char| c == '\\' || c == '/';
    let seps: &[char] = &['\\', '/'];
    // `\\?\C:\…`: the verbatim prefix kept in front of the drive's directory.
    for verbatim in [r"\\?\", "//?/"] {
        if let Some(rest) = pattern.strip_prefix(verbatim) {
            let (dir, rest) = split_absolute_pattern_for(rest, true)?;
            return rootgrep_core::platform::winpath::has_drive(&dir)
                .then(|| (format!(r"\\?\{dir}"), rest));
        }
    }
    let mut chars = pattern.chars();
    let (first, second) = (chars.next(), chars.next());
    // (the directory when nothing follows the root, what components are appended to, the
    // components after the root)
    let (root, lead, body): (String, String, &str) =
        if rootgrep_core::platform::winpath::has_drive(pattern) && pattern[2..].starts_with(is_sep)
        {
            let drive = format!(r"{}\", &pattern[..2]);
            (drive.clone(), drive, &pattern[3..])
        } else if first.is_some_and(is_sep) && second.is_some_and(is_sep) {
            // `\\srv\share\…`: the server and the share are part of the root.
            let mut parts = pattern[2..].splitn(3, seps);
            let (server, share) = (parts.next()?, parts.next()?);
            if server.is_empty() || share.is_empty() || !literal(server) || !literal(share) {
                return None;
            }
            let share = format!(r"\\{server}\{share}");
            (
                share.clone(),
                format!(r"{share}\"),
                parts.next().unwrap_or(""),
            )
        } else if first.is_some_and(is_sep) {
            (r"\".to_string(), r"\".to_string(), &pattern[1..])
        } else {
            return None;
        };
    let components: Vec<&str> = body.split(seps).collect();
    // A fully literal path names one file: search its directory for its name.
    let split = components
        .iter()
        .position(|c| !literal(c))
        .unwrap_or(components.len() - 1);
    let rest = components[split..].join("/");
    if rest.is_empty() {
        return None;
    }
    let dir = match split {
        0 => root,
        _ => format!("{lead}{}", components[..split].join(r"\")),
    };
    Some((dir, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_patterns_split_into_directory_and_pattern() {
        let split_absolute_pattern = |p: &str| split_absolute_pattern_for(p, false);
        assert_eq!(
            split_absolute_pattern("/a/b/**/*.rs"),
            Some(("/a/b".to_string(), "**/*.rs".to_string()))
        );
        assert_eq!(
            split_absolute_pattern("/a/b/src/*.{ts,tsx}"),
            Some(("/a/b/src".to_string(), "*.{ts,tsx}".to_string()))
        );
        assert_eq!(split_absolute_pattern("src/**/*.rs"), None);
        // A fully literal path: its directory, searched for its name.
        assert_eq!(
            split_absolute_pattern("/a/b/c.rs"),
            Some(("/a/b".to_string(), "c.rs".to_string()))
        );
        assert_eq!(split_absolute_pattern("/"), None);
    }

    #[test]
    fn absolute_patterns_split_under_windows_rules() {
        let split = |p: &str| split_absolute_pattern_for(p, true);
        let pair = |d: &str, r: &str| Some((d.to_string(), r.to_string()));
        assert_eq!(split(r"C:\x\*.rs"), pair(r"C:\x", "*.rs"));
        assert_eq!(split("C:/x/**/*.rs"), pair(r"C:\x", "**/*.rs"));
        assert_eq!(split(r"c:\x/src\**\*.rs"), pair(r"c:\x\src", "**/*.rs"));
        assert_eq!(split(r"C:\*.rs"), pair(r"C:\", "*.rs"));
        assert_eq!(
            split(r"C:\x\src\*.{ts,tsx}"),
            pair(r"C:\x\src", "*.{ts,tsx}")
        );
        // A fully literal path: its directory, searched for its name.
        assert_eq!(split(r"C:\x\y\c.rs"), pair(r"C:\x\y", "c.rs"));
        assert_eq!(
            split(r"\\srv\share\src\*.rs"),
            pair(r"\\srv\share\src", "*.rs")
        );
        assert_eq!(split("//srv/share/*.rs"), pair(r"\\srv\share", "*.rs"));
        assert_eq!(split(r"\\srv\*\x.rs"), None, "a share is not a pattern");
        assert_eq!(split(r"\\?\C:\x\*.rs"), pair(r"\\?\C:\x", "*.rs"));
        assert_eq!(split(r"\x\*.rs"), pair(r"\x", "*.rs"));
        assert_eq!(split("/a/b/**/*.rs"), pair(r"\a\b", "**/*.rs"));
        // Relative, drive-relative, or nothing left to match.
        assert_eq!(split(r"src\*.rs"), None);
        assert_eq!(split("src/**/*.rs"), None);
        assert_eq!(split(r"C:x\*.rs"), None);
        assert_eq!(split(r"C:\"), None);
        assert_eq!(split(r"C:\x\"), None);
        assert_eq!(split(r"\\srv\share"), None);
        assert_eq!(split("*.rs"), None);
        // Unix rules: `\` is no separator there (it escapes).
        assert_eq!(split_absolute_pattern_for(r"C:\x\*.rs", false), None);
        assert_eq!(
            split_absolute_pattern_for(r"/a/b\*.rs", false),
            Some(("/a".to_string(), r"b\*.rs".to_string()))
        );
    }
}
