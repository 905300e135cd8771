//! The read-only tools about single files and the workspace itself: `list_roots`,
//! `file_info`, `read_file` and `read_files`.

use base64::Engine;
use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    Call, authorize, blocking, lenient, read_only_annotations, resolve_checked, schema_of,
};
use crate::access::Access;
use crate::files::{info, read};
use crate::mcp::render::{Answer, fit_to_budget, human_size, rfc3339};
use crate::roots::{PathError, Resolved, file_uri_from_path, resolve};

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "list_roots",
            "List the workspace roots this server may access (and where they came from: the \
             client, the command line, or the working directory), the --confine boundary, \
             and the directories the user granted or refused during this session.",
            schema_of::<NoArgs>(),
        )
        .with_raw_output_schema(schema_of::<RootsOut>())
        .with_annotations(read_only_annotations("List workspace roots")),
        Tool::new(
            "file_info",
            "Facts about one file or directory without reading it whole: type, size, \
             modified time, permissions, symlink target, whether it is text or binary, its \
             encoding, and its line count (text files up to 16 MiB).",
            schema_of::<FileInfoArgs>(),
        )
        .with_raw_output_schema(schema_of::<FileInfoOut>())
        .with_annotations(read_only_annotations("File info")),
        Tool::new(
            "read_file",
            "Read a text file with line numbers (cat -n style), from line `offset` (1-based) \
             for `limit` lines (default 2000); says when more lines remain. UTF-16 files are \
             decoded, invalid UTF-8 shown as U+FFFD. Images (png, jpeg, gif, webp) are \
             returned as images; other binary files get a short description. Paths are \
             absolute, file:// URIs, or relative to the workspace roots.",
            schema_of::<ReadFileArgs>(),
        )
        .with_annotations(read_only_annotations("Read file")),
        Tool::new(
            "read_files",
            "Read several files in one call (same rules as read_file, `limit` lines each). \
             A file that cannot be read is reported inline and does not fail the others.",
            schema_of::<ReadFilesArgs>(),
        )
        .with_annotations(read_only_annotations("Read files")),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RootsOut {
    /// Where the roots came from: client, command line, working directory, --confine.
    pub source: String,
    pub roots: Vec<RootOut>,
    /// The operator's --confine directories (empty when not set).
    pub confine: Vec<String>,
    /// Directories the user granted for this session.
    pub grants: Vec<AccessOut>,
    /// Paths the user refused during this session.
    pub refusals: Vec<AccessOut>,
    /// Warnings about roots (ignored, dropped, missing).
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RootOut {
    pub path: String,
    pub uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub exists: bool,
    /// "directory" or "file".
    pub kind: String,
    /// Whether changes under this root are watched (live index and notifications).
    pub watched: bool,
    /// Watch state: watching, starting, failed (with the reason), or off (--no-watch).
    pub watch: String,
    /// File index state: fresh (with file count), building, stale, waiting, unavailable, or
    /// off. Until it is fresh, searches walk the disk (same results, slower).
    pub index: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AccessOut {
    pub path: String,
    /// "read" or "write".
    pub access: String,
}

pub async fn list_roots(call: &Call<'_>, _args: NoArgs) -> Answer {
    let roots = &call.roots;
    let grants = call.session.grants.snapshot();
    let (watch_status, index_status) = match &call.session.live {
        Some(live) => (live.watcher.status(), live.index.status()),
        None => (Vec::new(), Vec::new()),
    };
    let live_on = call.session.live.is_some();
    let watch_of = |path: &std::path::Path| -> String {
        if !live_on {
            return "off".to_string();
        }
        match watch_status.iter().find(|(root, _)| root == path) {
            Some((_, crate::watch::RootStatus::Watching)) => "watching".to_string(),
            Some((_, crate::watch::RootStatus::Starting)) | None => "starting".to_string(),
            Some((_, crate::watch::RootStatus::Failed(why))) => format!("failed: {why}"),
        }
    };
    let index_of = |path: &std::path::Path| -> String {
        if !live_on {
            return "off".to_string();
        }
        match index_status.iter().find(|status| status.root == path) {
            Some(status) => match &status.state {
                crate::index::IndexState::Fresh => format!(
                    "fresh ({} files)",
                    status.last_build.as_ref().map_or(0, |b| b.files)
                ),
                crate::index::IndexState::Building => "building".to_string(),
                crate::index::IndexState::Stale => "stale (rebuilding)".to_string(),
                crate::index::IndexState::Waiting => "waiting for the watch".to_string(),
                crate::index::IndexState::Unavailable(why) => format!("unavailable: {why}"),
            },
            None => "waiting for the watch".to_string(),
        }
    };
    let out = RootsOut {
        source: roots.source.label().to_string(),
        roots: roots
            .roots
            .iter()
            .map(|root| RootOut {
                path: root.effective().display().to_string(),
                uri: file_uri_from_path(root.effective()),
                name: root.name.clone(),
                exists: root.canonical.is_some(),
                kind: if root.is_file { "file" } else { "directory" }.to_string(),
                watched: root.canonical.is_some() && watch_of(root.effective()) == "watching",
                watch: if root.canonical.is_none() && live_on {
                    "off: the root does not exist".to_string()
                } else {
                    watch_of(root.effective())
                },
                index: if root.canonical.is_none() && live_on {
                    "off: the root does not exist".to_string()
                } else {
                    index_of(root.effective())
                },
            })
            .collect(),
        confine: call
            .session
            .config
            .confine
            .dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect(),
        grants: grants
            .granted
            .iter()
            .map(|(path, access)| AccessOut {
                path: path.display().to_string(),
                access: access.verb().to_string(),
            })
            .collect(),
        refusals: grants
            .refused
            .iter()
            .map(|(path, access)| AccessOut {
                path: path.display().to_string(),
                access: access.verb().to_string(),
            })
            .collect(),
        notes: call.session.roots_notes(),
    };
    let mut text = format!("Roots ({}):\n", out.source);
    for root in &out.roots {
        let mut flags = vec![root.kind.clone()];
        if !root.exists {
            flags.push("MISSING".into());
        }
        flags.push(format!("watch: {}", root.watch));
        flags.push(format!("index: {}", root.index));
        let name = root
            .name
            .as_deref()
            .map(|n| format!(" \"{n}\""))
            .unwrap_or_default();
        text.push_str(&format!("  {}{name} ({})\n", root.path, flags.join(", ")));
    }
    if !out.confine.is_empty() {
        text.push_str(&format!("Confined to: {}\n", out.confine.join(", ")));
    }
    for grant in &out.grants {
        text.push_str(&format!("Granted ({}): {}\n", grant.access, grant.path));
    }
    for refusal in &out.refusals {
        text.push_str(&format!("Refused ({}): {}\n", refusal.access, refusal.path));
    }
    for note in &out.notes {
        text.push_str(&format!("Note: {note}\n"));
    }
    let structured = serde_json::to_value(&out).unwrap_or(Value::Null);
    Answer::text(text).with_structured(structured)
}

// ---------------------------------------------------------------------------------------
// file_info

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileInfoArgs {
    /// The file or directory: absolute path, file:// URI, or relative to the roots.
    #[serde(alias = "file_path")]
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileInfoOut {
    pub path: String,
    /// file, directory, or the kind of special file (FIFO, socket, device).
    #[serde(rename = "type")]
    pub kind: String,
    pub size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// Permissions, e.g. rw-r--r--.
    pub permissions: String,
    /// Octal mode, e.g. 0644.
    pub mode: String,
    pub readonly: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
    /// For files: text, image or binary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// MIME type for images, a description for binary files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

pub async fn file_info(call: &Call<'_>, args: FileInfoArgs) -> Answer {
    let resolved = match resolve_checked(call, &args.path, Access::Read).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    if !resolved.exists {
        return Answer::error(format!(
            "{}: no such file or directory",
            resolved.path.display()
        ));
    }
    let (given, canonical) = (resolved.given.clone(), resolved.path.clone());
    let facts = match blocking(move || info::file_info(&given, &canonical)).await {
        Ok(Ok(facts)) => facts,
        Ok(Err(err)) => return Answer::error(format!("{}: {err}", resolved.path.display())),
        Err(answer) => return answer,
    };
    let mut out = FileInfoOut {
        path: facts.path.display().to_string(),
        kind: match &facts.kind {
            info::Kind::File => "file".to_string(),
            info::Kind::Directory => "directory".to_string(),
            info::Kind::Special(kind) => (*kind).to_string(),
        },
        size: facts.size,
        modified: facts.modified.map(rfc3339),
        permissions: facts.permissions.clone(),
        mode: format!("{:04o}", facts.mode),
        readonly: facts.readonly,
        symlink_target: facts
            .symlink_target
            .as_ref()
            .map(|p| p.display().to_string()),
        content: None,
        encoding: None,
        lines: None,
        description: None,
    };
    match &facts.content {
        Some(info::Content::Text { encoding, lines }) => {
            out.content = Some("text".into());
            out.encoding = Some(encoding.label().into());
            out.lines = *lines;
        }
        Some(info::Content::Image(mime)) => {
            out.content = Some("image".into());
            out.description = Some((*mime).into());
        }
        Some(info::Content::Binary(description)) => {
            out.content = Some("binary".into());
            out.description = Some(description.clone());
        }
        None => {}
    }
    let mut text = format!("{}\n  type: {}", out.path, out.kind);
    if let Some(target) = &out.symlink_target {
        text.push_str(&format!(" (named through symlink -> {target})"));
    }
    text.push_str(&format!(
        "\n  size: {} ({} bytes)",
        human_size(out.size),
        out.size
    ));
    if let Some(modified) = &out.modified {
        text.push_str(&format!("\n  modified: {modified}"));
    }
    text.push_str(&format!(
        "\n  permissions: {} ({})",
        out.permissions, out.mode
    ));
    if let Some(content) = &out.content {
        text.push_str(&format!("\n  content: {content}"));
        if let Some(encoding) = &out.encoding {
            text.push_str(&format!(", {encoding}"));
        }
        if let Some(lines) = out.lines {
            text.push_str(&format!(", {lines} lines"));
        }
        if let Some(description) = &out.description {
            text.push_str(&format!(" ({description})"));
        }
    }
    text.push('\n');
    Answer::text(text).with_structured(serde_json::to_value(&out).unwrap_or(Value::Null))
}

// ---------------------------------------------------------------------------------------
// read_file / read_files

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file: absolute path, file:// URI, or relative to the workspace roots.
    #[serde(alias = "file_path")]
    pub path: String,
    /// 1-based line to start at (default 1).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    /// Maximum number of lines to return (default 2000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// Prefix lines with their numbers, cat -n style (default true).
    #[serde(default)]
    pub line_numbers: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFilesArgs {
    /// The files to read.
    pub paths: Vec<String>,
    /// Maximum number of lines per file (default 2000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// Prefix lines with their numbers (default true).
    #[serde(default)]
    pub line_numbers: Option<bool>,
}

pub const DEFAULT_READ_LIMIT: usize = 2000;

/// Reads one file within `budget` bytes of text, or returns the error text.
async fn read_one(
    call: &Call<'_>,
    resolved: Result<Resolved, PathError>,
    offset: usize,
    limit: usize,
    numbers: bool,
    budget: usize,
) -> Result<(String, Option<(String, String)>), String> {
    let resolved = resolved.map_err(|err| err.to_string())?;
    authorize(call, &resolved, Access::Read)
        .await
        .map_err(|answer| answer.text)?;
    let target = resolved.path.clone();
    let request = read::ReadRequest {
        offset,
        limit,
        max_bytes: budget.saturating_sub(300),
    };
    let outcome = blocking(move || read::read(&target, &request))
        .await
        .map_err(|answer| answer.text)?
        .map_err(|err| err.to_string())?;
    Ok(match outcome {
        read::ReadOutcome::Text(page) => (render_page(&page, numbers), None),
        read::ReadOutcome::Image { path, mime, bytes } => (
            format!(
                "{} is a {mime} image ({}); it is attached.",
                path.display(),
                human_size(bytes.len() as u64)
            ),
            Some((
                mime.to_string(),
                base64::engine::general_purpose::STANDARD.encode(&bytes),
            )),
        ),
        read::ReadOutcome::Binary { path, size, kind } => (
            format!(
                "{} is a binary file ({kind}, {}); its bytes are not shown.",
                path.display(),
                human_size(size)
            ),
            None,
        ),
    })
}

fn render_page(page: &read::TextPage, numbers: bool) -> String {
    let mut text = String::new();
    if page.lines.is_empty() {
        return match page.total_lines {
            Some(0) => format!("[{} is empty]", page.path.display()),
            Some(total) => format!(
                "[{} has {total} lines; offset {} is past the end]",
                page.path.display(),
                page.first_line
            ),
            None => String::new(),
        };
    }
    for (index, line) in page.lines.iter().enumerate() {
        if numbers {
            text.push_str(&format!("{:>6}\t{line}\n", page.first_line + index));
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    let last = page.first_line + page.lines.len() - 1;
    if let Some(next) = page.next_line {
        let why = if page.budget_cut {
            "the output budget is reached"
        } else {
            "the line limit is reached"
        };
        text.push_str(&format!(
            "[showing lines {}-{last}; {why} and more lines follow — call read_file with offset={next} to continue]\n",
            page.first_line
        ));
    }
    if !matches!(page.encoding, read::Encoding::Utf8) {
        text.push_str(&format!("[encoding: {}]\n", page.encoding.label()));
    }
    if page.lossy {
        text.push_str("[note: the file is not valid UTF-8; invalid bytes are shown as U+FFFD]\n");
    }
    if page.cut_lines > 0 {
        text.push_str(&format!(
            "[{} line(s) longer than {} characters were cut]\n",
            page.cut_lines,
            read::MAX_LINE_CHARS
        ));
    }
    text
}

pub async fn read_file(call: &Call<'_>, args: ReadFileArgs) -> Answer {
    let budget = call.session.config.max_output_bytes;
    match read_one(
        call,
        resolve(&args.path, &call.roots),
        args.offset.unwrap_or(1),
        args.limit.unwrap_or(DEFAULT_READ_LIMIT),
        args.line_numbers.unwrap_or(true),
        budget,
    )
    .await
    {
        Ok((mut text, image)) => {
            fit_to_budget(
                &mut text,
                budget,
                "[output budget reached; continue with a larger offset]",
            );
            Answer {
                text,
                images: image.into_iter().collect(),
                ..Answer::default()
            }
        }
        Err(message) => Answer::error(message),
    }
}

pub async fn read_files(call: &Call<'_>, args: ReadFilesArgs) -> Answer {
    if args.paths.is_empty() {
        return Answer::error("`paths` is empty; give at least one file");
    }
    let budget = call.session.config.max_output_bytes;
    let share = (budget / args.paths.len()).max(512);
    let mut answer = Answer::default();
    let mut failures = 0;
    for (index, path) in args.paths.iter().enumerate() {
        if answer.text.len() + 200 > budget {
            answer.text.push_str(&format!(
                "[output budget reached after {index} of {} files; read the rest with another call]\n",
                args.paths.len()
            ));
            break;
        }
        // Headings carry the absolute path, like every result.
        let resolved = resolve(path, &call.roots);
        let heading = match &resolved {
            Ok(resolved) => resolved.path.display().to_string(),
            Err(_) => path.clone(),
        };
        answer.text.push_str(&format!("==> {heading} <==\n"));
        match read_one(
            call,
            resolved,
            1,
            args.limit.unwrap_or(DEFAULT_READ_LIMIT),
            args.line_numbers.unwrap_or(true),
            share,
        )
        .await
        {
            Ok((text, image)) => {
                answer.text.push_str(&text);
                answer.images.extend(image);
            }
            Err(message) => {
                failures += 1;
                answer.text.push_str(&format!("[error: {message}]\n"));
            }
        }
        answer.text.push('\n');
    }
    // Only a complete failure is an error for the call as a whole.
    answer.is_error = failures == args.paths.len();
    answer
}
