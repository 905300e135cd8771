//! The read-only tools about single files: `file_info`, `read_file` (with `symbol`, one
//! definition's lines) and `read_files` (which reports progress per file read).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use base64::Engine;
use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::Deserialize;

use super::context::{Call, blocking, resolve_checked};
use super::schema::{lenient, read_only_annotations, schema_of};
use crate::mcp::failure::{Failure, Reason};
use crate::mcp::hints::Worded;
use crate::mcp::progress::{Count, Reporter, thousands};
use crate::mcp::render::read::{FileInfoOut, image_cost, image_room, info_answer, render_page};
use crate::mcp::render::{Answer, ENVELOPE, cut_escaped, human_size, json_len, rfc3339};
use crate::mcp::shown::{Recall, Stamp};
use rootgrep_core::access::Access;
use rootgrep_core::files::{info, read};
use rootgrep_core::quote::escape_for_display;
use rootgrep_core::roots::{Resolved, path_text};

pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "file_info",
            "Facts about a file or directory without reading it: type, size, time, \
             permissions, symlink target, text or binary, encoding, line count.",
            schema_of::<FileInfoArgs>(),
        )
        .with_raw_output_schema(schema_of::<FileInfoOut>())
        .with_annotations(read_only_annotations("File info")),
        Tool::new(
            "read_file",
            "Read a file as numbered lines (offset, limit), or one definition (symbol: \
             \"Parser::parse\"); images as images. Lines already shown this session are one \
             \"unchanged since shown\" line (repeat: true shows them).",
            schema_of::<ReadFileArgs>(),
        )
        .with_annotations(read_only_annotations("Read file")),
        Tool::new(
            "read_files",
            "Read several files in one call (as read_file, limit lines each); a file that \
             fails is reported inline.",
            schema_of::<ReadFilesArgs>(),
        )
        .with_annotations(read_only_annotations("Read files")),
    ]
}

// ---------------------------------------------------------------------------------------
// file_info

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileInfoArgs {
    /// Absolute, file:// URI, or relative to the roots.
    #[serde(alias = "file_path")]
    pub path: String,
}

pub async fn file_info(call: &Call<'_>, args: FileInfoArgs) -> Answer {
    let resolved = match resolve_checked(call, &args.path, Access::Read).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    if !resolved.exists {
        let shown = path_text(&resolved.path);
        let text = format!("{}: no such file or directory", escape_for_display(&shown));
        return Answer::refused(Reason::NotFound, text).about(&args.path);
    }
    let (given, canonical) = (resolved.given.clone(), resolved.path.clone());
    let facts = match blocking(move || info::file_info(&given, &canonical)).await {
        Ok(Ok(facts)) => facts,
        Ok(Err(err)) => {
            let text = format!(
                "{}: {err}",
                rootgrep_core::roots::path_display(&resolved.path)
            );
            return Answer::refused(Reason::of_io(&err), text).about(&args.path);
        }
        Err(answer) => return answer,
    };
    let mut out = FileInfoOut {
        path: path_text(&facts.path),
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
        symlink_target: facts.symlink_target.as_ref().map(|p| path_text(p)),
        content: None,
        encoding: None,
        lines: None,
        description: None,
    };
    match &facts.content {
        Some(info::Content::Text { encoding, lines }) => {
            out.content = Some("text".into());
            // UTF-8 goes without saying.
            out.encoding =
                (!matches!(encoding, read::Encoding::Utf8)).then(|| encoding.label().into());
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
    let budget = call.budget();
    let answer = info_answer(&out);
    if answer.fits(budget) {
        return answer;
    }
    // A path (or link target) too long for the budget in both forms: shown cut.
    let share = budget / 8;
    out.path = cut_escaped(&out.path, share);
    out.symlink_target = out.symlink_target.map(|t| cut_escaped(&t, share));
    out.description = out.description.map(|d| cut_escaped(&d, share));
    info_answer(&out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Absolute, file:// URI, or relative to the roots.
    #[serde(alias = "file_path")]
    pub path: String,
    /// First line, 1-based (at most 1,000,000,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 1, max = MAX_OFFSET))]
    pub offset: Option<usize>,
    /// Most lines (default 2000; at most 100,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    pub limit: Option<usize>,
    /// Line numbers (default true).
    #[serde(default)]
    pub line_numbers: Option<bool>,
    /// A definition to read instead of offset/limit: "parse", "Parser::parse".
    #[serde(default)]
    pub symbol: Option<String>,
    /// Repeat lines shown before.
    #[serde(default)]
    pub repeat: Option<bool>,
}

/// Largest `offset` (a line number) read_file accepts.
pub const MAX_OFFSET: usize = 1_000_000_000;
/// Largest `limit` (lines); larger values are clamped to it.
pub const MAX_LIMIT: usize = 100_000;

impl ReadFileArgs {
    /// The first line and the line limit, after the documented bounds.
    fn range(&self) -> Result<(usize, usize), Answer> {
        let offset = self.offset.unwrap_or(1);
        if offset > MAX_OFFSET {
            return Err(Answer::error(format!(
                "offset {offset} is above the maximum of {MAX_OFFSET}; no file here has that many lines"
            )));
        }
        Ok((offset, clamp_limit(self.limit)))
    }
}

/// The line limit, default 2000, at most [`MAX_LIMIT`].
fn clamp_limit(limit: Option<usize>) -> usize {
    limit.unwrap_or(DEFAULT_READ_LIMIT).clamp(1, MAX_LIMIT)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFilesArgs {
    /// The files.
    pub paths: Vec<String>,
    /// Most lines per file (default 2000; at most 100,000).
    #[serde(default, deserialize_with = "lenient::opt_usize")]
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    pub limit: Option<usize>,
    /// Line numbers (default true).
    #[serde(default)]
    pub line_numbers: Option<bool>,
}

pub const DEFAULT_READ_LIMIT: usize = 2000;

/// Reads one file already authorized within `budget` bytes of text (as serialized:
/// JSON-escaped) and `room` bytes of image, or returns the error text. Lines `recall`
/// says were shown before (the file unchanged since) are one note; the lines shown are
/// remembered.
async fn read_authorized(
    call: &Call<'_>,
    resolved: Resolved,
    (offset, limit): (usize, usize),
    (numbers, recall): (bool, &Recall),
    budget: usize,
    room: usize,
) -> Result<(String, Option<(String, String)>), Failure> {
    let target = resolved.path.clone();
    let sent = resolved.sent.clone();
    let request = read::ReadRequest {
        offset,
        limit,
        max_bytes: budget.saturating_sub(300),
        max_image_bytes: image_room(room),
    };
    // The stamp before the read: a change during it counts as a change.
    let (stamp, outcome) = blocking(move || (Stamp::of(&target), read::read(&target, &request)))
        .await
        .map_err(|answer| Failure::new(Reason::Internal, answer.text).about(&sent))?;
    let outcome = outcome.map_err(|err| Failure::of(&err).about(&sent))?;
    // A path too long for the room is shown cut (short enough to leave an image its room).
    let name = |path: &std::path::Path| {
        cut_escaped(
            &rootgrep_core::roots::path_display(path),
            (budget / 4).min(300),
        )
    };
    Ok(match outcome {
        read::ReadOutcome::Text(page) => {
            let seen = recall.seen(&page.path, stamp);
            let (text, lines) = render_page(&page, numbers, budget, &seen);
            recall.record(&page.path, stamp, &lines);
            (text, None)
        }
        read::ReadOutcome::Image { path, mime, bytes } => (
            format!(
                "{} is a {mime} image ({}); it is attached.",
                name(&path),
                human_size(bytes.len() as u64)
            ),
            Some((
                mime.to_string(),
                base64::engine::general_purpose::STANDARD.encode(&bytes),
            )),
        ),
        read::ReadOutcome::ImageOverBudget { path, mime, size } => {
            let whole = call.budget();
            let advice = if image_cost(size) <= whole.saturating_sub(512) {
                "read it in a call of its own (read_file), where the whole budget is free"
                    .to_string()
            } else {
                format!(
                    "it cannot fit in one answer under this server's output budget \
                     (--max-output-bytes {whole}); the operator can raise that limit"
                )
            };
            (
                format!(
                    "{} is a {mime} image ({}); it is not attached: as base64 it takes {} bytes, \
                     more than the {} bytes left of the output budget; {advice}.",
                    name(&path),
                    human_size(size),
                    image_cost(size),
                    room,
                ),
                None,
            )
        }
        read::ReadOutcome::Binary { path, size, kind } => (
            format!(
                "{} is a binary file ({kind}, {}); its bytes are not shown.",
                name(&path),
                human_size(size)
            ),
            None,
        ),
    })
}

pub async fn read_file(call: &Call<'_>, args: ReadFileArgs) -> Answer {
    let budget = call.budget();
    if let Some(symbol) = &args.symbol {
        return read_symbol(call, &args, symbol).await;
    }
    let range = match args.range() {
        Ok(range) => range,
        Err(answer) => return answer,
    };
    let resolved = match resolve_checked(call, &args.path, Access::Read).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    // The image's share: the budget less room for the sentence that accompanies it.
    let recall = call.recall(args.repeat);
    match read_authorized(
        call,
        resolved,
        range,
        (args.line_numbers.unwrap_or(true), &recall),
        budget.saturating_sub(ENVELOPE),
        budget.saturating_sub(512),
    )
    .await
    {
        Ok((text, image)) => Answer {
            text,
            images: image.into_iter().collect(),
            ..Answer::default()
        },
        Err(failure) => Answer::failure(failure),
    }
}

/// `read_file` + `symbol`: the lines of one definition, or the candidates when the name is
/// ambiguous (overloads, same name in several classes).
async fn read_symbol(call: &Call<'_>, args: &ReadFileArgs, symbol: &str) -> Answer {
    if args.offset.is_some() || args.limit.is_some() {
        return Answer::error(
            "give either `symbol` or `offset`/`limit`, not both: `symbol` reads the whole \
             definition",
        );
    }
    if symbol.trim().is_empty() || symbol.len() > 512 {
        return Answer::error("`symbol` must be a name like \"parse\" or \"Parser::parse\"");
    }
    let budget = call.budget();
    let resolved = match resolve_checked(call, &args.path, Access::Read).await {
        Ok(resolved) => resolved,
        Err(answer) => return answer,
    };
    let target = resolved.path.clone();
    let (lang, defs) =
        match blocking(move || rootgrep_core::symbols::find::definitions_in(&target)).await {
            Ok(Ok(found)) => found,
            Ok(Err(why)) => return Answer::error(why.words()),
            Err(answer) => return answer,
        };
    let picked = rootgrep_core::symbols::find::pick(&defs, symbol);
    let path = rootgrep_core::roots::path_display(&resolved.path);
    match picked.as_slice() {
        [] => {
            let mut names: Vec<String> = defs.iter().map(|d| d.qualified()).collect();
            names.sort();
            names.dedup();
            let listed = cut_escaped(&names.join(", "), budget / 2);
            Answer::error(format!(
                "no definition named {symbol:?} in {path} ({} file); its definitions: {listed}",
                lang.name()
            ))
        }
        [one] => {
            let lines = (one.end_line - one.line + 1) as usize;
            let heading = format!(
                "{} {} ({}, lines {}-{} of {path})\n",
                one.kind,
                one.qualified(),
                lang.name(),
                one.line,
                one.end_line
            );
            let room = budget.saturating_sub(ENVELOPE + json_len(&heading));
            let recall = call.recall(args.repeat);
            match read_authorized(
                call,
                resolved,
                (one.line as usize, lines.min(MAX_LIMIT)),
                (args.line_numbers.unwrap_or(true), &recall),
                room,
                room,
            )
            .await
            {
                Ok((text, _)) => {
                    // The page stops at the definition's last line on purpose: drop the
                    // generic "line limit reached" note (a note about the budget stays).
                    let whole = format!("[showing lines {}-{};", one.line, one.end_line);
                    let text = match text.trim_end().rsplit_once('\n') {
                        Some((body, last))
                            if last.starts_with(&whole) && last.contains("line limit") =>
                        {
                            format!("{body}\n")
                        }
                        _ => text,
                    };
                    Answer::text(format!("{heading}{text}"))
                }
                Err(failure) => Answer::failure(failure),
            }
        }
        many => {
            let mut text = format!(
                "{} definitions named {symbol:?} in {path}; call read_file again with \
                 symbol \"Container::name\", or offset/limit:\n",
                many.len()
            );
            for d in many {
                text.push_str(&format!(
                    "{}-{}  {}  {} — {}\n",
                    d.line,
                    d.end_line,
                    d.kind,
                    d.qualified(),
                    d.signature
                ));
            }
            Answer::text(text)
        }
    }
}

/// Room kept for the closing note of read_files (and a heading) when deciding whether the
/// next file still fits.
const READ_FILES_RESERVE: usize = 400;

pub async fn read_files(call: &Call<'_>, args: ReadFilesArgs) -> Answer {
    if args.paths.is_empty() {
        return Answer::error("`paths` is empty; give at least one file");
    }
    let budget = call.budget();
    let share = (budget / args.paths.len()).max(512);
    let limit = clamp_limit(args.limit);
    let mut answer = Answer::default();
    // Everything the answer holds so far as serialized: its text (escaped), its images
    // (base64 and wrapping) and the envelope.
    let mut used = ENVELOPE;
    let mut failures = 0;
    let mut first_failure: Option<Failure> = None;
    let mut done = 0;
    // Many files take a while: with a progress token, the files read so far out of all.
    let count = Arc::new(Count::default());
    let total = args.paths.len() as u64;
    let reporter = Reporter::start_with(call.ctx, count.clone(), Some(total), move |read, _| {
        format!("read {} of {} files", thousands(read), thousands(total))
    });
    for (index, path) in args.paths.iter().enumerate() {
        if used + READ_FILES_RESERVE > budget {
            break;
        }
        // Headings name the file as every result does (relative to the one root, else
        // absolute). Checked before the heading is made: a path outside the roots is
        // headed as sent, never by where it leads.
        let resolved =
            super::context::checked_path(call, path, Access::Read, rootgrep_core::roots::resolve)
                .await;
        let heading = match &resolved {
            Ok(resolved) => escape_for_display(&call.paths().show(&resolved.path)).into_owned(),
            Err(_) => rootgrep_core::quote::echo(path),
        };
        let heading = format!("==> {} <==\n", cut_escaped(&heading, budget / 8));
        let left = budget.saturating_sub(used + json_len(&heading) + READ_FILES_RESERVE);
        answer.text.push_str(&heading);
        used += json_len(&heading) - 2;
        let read = match resolved {
            Ok(resolved) => {
                // Several files at once are shown whole: nothing is left out or remembered.
                let shown = (args.line_numbers.unwrap_or(true), &Recall::default());
                read_authorized(call, resolved, (1, limit), shown, share.min(left), left).await
            }
            Err(failure) => Err(failure),
        };
        match read {
            Ok((text, image)) => {
                used += json_len(&text) - 2;
                answer.text.push_str(&text);
                if let Some((mime, data)) = image {
                    used += json_len(&mime) + json_len(&data) + 48;
                    answer.images.push((mime, data));
                }
            }
            Err(failure) => {
                failures += 1;
                let line = format!(
                    "[error: {}]\n",
                    cut_escaped(&failure.message, left.max(128))
                );
                first_failure.get_or_insert(failure);
                used += json_len(&line) - 2;
                answer.text.push_str(&line);
            }
        }
        answer.text.push('\n');
        used += 2;
        done = index + 1;
        count.examined.fetch_add(1, Ordering::Relaxed);
    }
    reporter.finish().await;
    if done < args.paths.len() {
        answer.text.push_str(&format!(
            "[output budget reached after {done} of {} files; call read_files again with the \
             remaining paths, starting with paths[{done}]]\n",
            args.paths.len()
        ));
    }
    // Only a complete failure is an error for the call as a whole; the first path's
    // failure gives its reason and path.
    if failures == done && done == args.paths.len() {
        answer.is_error = true;
        answer.failure = first_failure.map(|failure| (failure.reason, failure.sent));
    }
    answer
}
