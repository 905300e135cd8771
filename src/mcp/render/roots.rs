//! Rendering the `list_roots` answer: the text and structured forms of a page of roots
//! with the grants, refusals, notes and confine directories, fitted to the output budget.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::mcp::render::{Answer, cut_escaped};
use rootgrep_core::quote::escape_for_display;

/// Most grants, refusals or notes listed (each list; the rest are counted).
pub(crate) const MAX_LISTED: usize = 20;

#[derive(Debug, Serialize, JsonSchema)]
pub struct RootsOut {
    /// Where the roots came from: client, command line, working directory, --confine.
    pub source: String,
    /// The roots of this page.
    pub roots: Vec<RootOut>,
    /// How many roots are in force.
    pub total: usize,
    /// When more roots follow: the offset to ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// The operator's --confine directories (absent when not set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confine: Vec<String>,
    /// Directories the user granted for this session (the first 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<AccessOut>,
    /// Paths the user refused during this session (the first 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<AccessOut>,
    /// Warnings about roots (ignored, dropped, missing; the first 20, then how many more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RootOut {
    pub path: String,
    /// The client's name for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The root does not exist (kept, and reported).
    #[serde(default, skip_serializing_if = "is_false")]
    pub missing: bool,
    /// Why the root cannot be used now although it was set: its path is a symlink now, or
    /// leads through one. Nothing below it is listed, searched or read until it is the
    /// directory (or file) itself again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The root is a single file (absent for a directory).
    #[serde(default, skip_serializing_if = "is_false")]
    pub file: bool,
    /// Watch state: watching, starting, failed (with the reason), or off (--no-watch).
    pub watch: String,
    /// File index state: fresh (with the file count, full builds and incremental updates),
    /// building, stale, waiting, unavailable, or off. Until it is fresh, searches walk the
    /// disk (same results, slower).
    pub index: String,
    /// Symbol index state: ready (with the definitions and files held, the files skipped
    /// as too large, and how its on-disk copy stands: stored, loaded from the store, read
    /// from another server's, or not stored and why), building (files parsed of the total), syncing, waiting,
    /// unavailable, or off. Until it is ready, symbols parses files on demand (same
    /// results, slower).
    pub symbols: String,
    /// Search index state (ranked `search`): ready (documents and files held, files
    /// indexed again since, how its on-disk copy stands), building (files read of the
    /// total), waiting (for the file or symbol index), unavailable, or off. Until it is
    /// ready, search ranks the files the text pre-filter finds and says so.
    pub search: String,
    /// Content index state (which files `grep` reads): ready (files held, size, how its
    /// on-disk copy stands), building (files read of the total), waiting, or off. Until
    /// it is ready, grep reads every file (same results, slower).
    pub content: String,
    /// Git history state (what re-ranks search's best results): ready (commits reachable
    /// from HEAD, files they changed, HEAD, how its on-disk copy stands), reading,
    /// updating (HEAD moved: search ranks without history until it is read), none (no git
    /// repository or no commit), or off.
    pub history: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AccessOut {
    pub path: String,
    /// "read" or "write".
    pub access: String,
}

/// One root's symbol index, as list_roots says it.
pub(crate) fn symbols_line(status: &rootgrep_core::symbols::index::SymbolStatus) -> String {
    use rootgrep_core::symbols::index::SymbolState;
    let count = |n: usize| crate::mcp::progress::thousands(n as u64);
    match &status.state {
        SymbolState::Ready => {
            let mut line = format!(
                "ready ({} definitions in {} files, {}{}",
                count(status.definitions),
                count(status.files),
                rootgrep_core::quote::byte_size(status.table_bytes as u64),
                if status.in_place {
                    " read in place"
                } else {
                    ""
                }
            );
            if status.too_large > 0 {
                line.push_str(&format!(
                    "; {} files over 1 MiB skipped",
                    count(status.too_large)
                ));
            }
            if status.updates > 0 {
                line.push_str(&format!(
                    "; {} files re-parsed after changes",
                    count(status.updates as usize)
                ));
            }
            if let Some(store) = status.store.as_deref().filter(|s| !s.is_empty()) {
                line.push_str("; ");
                line.push_str(store);
            }
            line.push(')');
            line
        }
        SymbolState::Building { done, total } => format!(
            "building ({}/{} files parsed; symbols parses on demand meanwhile)",
            count(*done),
            count(*total)
        ),
        SymbolState::Syncing { done, total } => format!(
            "re-syncing with the file list ({}/{} files parsed; on demand meanwhile)",
            count(*done),
            count(*total)
        ),
        SymbolState::Waiting => match status.store.as_deref() {
            Some(note) if note.starts_with("read from the store") => format!(
                "waiting for another server's build ({note}; symbols parses on demand meanwhile)"
            ),
            _ => "waiting for the file index".to_string(),
        },
        SymbolState::Unavailable(why) => format!("unavailable: {why}"),
    }
}

/// One root's git history, as list_roots says it.
pub(crate) fn history_line(status: &rootgrep_core::history::HistoryStatus) -> String {
    use rootgrep_core::history::HistoryState;
    let count = |n: usize| crate::mcp::progress::thousands(n as u64);
    match &status.state {
        HistoryState::Ready => {
            let mut line = format!(
                "ready ({} commits to {}, {} files",
                count(status.commits),
                status.head.as_deref().unwrap_or("HEAD"),
                count(status.files),
            );
            if status.shallow {
                line.push_str("; a shallow clone: older history is not there");
            }
            match (status.took, status.read) {
                (Some(took), read) if read > 0 && read < status.commits => line.push_str(&format!(
                    "; {} new read in {:.1} s",
                    count(read),
                    took.as_secs_f64()
                )),
                (Some(took), read) if read > 0 => {
                    line.push_str(&format!("; read in {:.1} s", took.as_secs_f64()))
                }
                _ => {}
            }
            if let Some(store) = status.store.as_deref().filter(|s| !s.is_empty()) {
                line.push_str("; ");
                line.push_str(store);
            }
            line.push(')');
            line
        }
        HistoryState::Waiting => "waiting".to_string(),
        HistoryState::Reading => "reading (search ranks without it meanwhile)".to_string(),
        HistoryState::Updating => {
            "updating: HEAD moved (search ranks without it meanwhile)".to_string()
        }
        HistoryState::None(why) => format!("none: {why}"),
    }
}

/// One root's search index, as list_roots says it.
pub(crate) fn search_line(status: &rootgrep_core::ranked::RankedStatus) -> String {
    use rootgrep_core::ranked::RankedState;
    let count = |n: usize| crate::mcp::progress::thousands(n as u64);
    match &status.state {
        RankedState::Ready => {
            let mut line = format!(
                "ready ({} documents, {} terms, in {} files, {}{}",
                count(status.documents),
                count(status.terms),
                count(status.files),
                rootgrep_core::quote::byte_size(status.index_bytes as u64),
                if status.in_place {
                    " read in place"
                } else {
                    ""
                }
            );
            if status.updates > 0 {
                line.push_str(&format!(
                    "; {} files indexed again after changes",
                    count(status.updates as usize)
                ));
            }
            if let Some(store) = status.store.as_deref().filter(|s| !s.is_empty()) {
                line.push_str("; ");
                line.push_str(store);
            }
            line.push(')');
            line
        }
        RankedState::Building { done, total } => format!(
            "building ({}/{} files read; search ranks the text pre-filter's candidates meanwhile)",
            count(*done),
            count(*total)
        ),
        RankedState::Waiting(what) => format!("waiting for {what}"),
        RankedState::Unavailable(why) => format!("unavailable: {why}"),
    }
}

/// One root's content index, as list_roots says it.
pub(crate) fn content_line(status: &rootgrep_core::content::index::ContentStatus) -> String {
    use rootgrep_core::content::index::ContentState;
    let count = |n: usize| crate::mcp::progress::thousands(n as u64);
    match &status.state {
        ContentState::Ready => {
            let mut line = format!(
                "ready ({} files, {}{}",
                count(status.files),
                rootgrep_core::quote::byte_size(status.index_bytes as u64),
                if status.in_place {
                    " read in place"
                } else {
                    ""
                }
            );
            if let Some(store) = status.store.as_deref().filter(|s| !s.is_empty()) {
                line.push_str("; ");
                line.push_str(store);
            }
            line.push(')');
            line
        }
        ContentState::Building { done, total } => format!(
            "building ({}/{} files read; grep reads every file meanwhile)",
            count(*done),
            count(*total)
        ),
        ContentState::Waiting => "waiting for the file index".to_string(),
    }
}

/// The list_roots answer within `budget` bytes per form once serialized: the grants,
/// refusals, notes and confine directories take at most half of it (long paths cut, the last items left out
/// and counted), and the page holds as many roots as fit in both forms (at least one, cut if
/// it alone is too large), with the continuation line when more follow.
pub(crate) fn fit_roots(
    mut out: RootsOut,
    offset: usize,
    totals: (usize, usize, usize),
    budget: usize,
) -> Answer {
    let roots = std::mem::take(&mut out.roots);
    let long = budget / 16;
    for item in out.grants.iter_mut().chain(out.refusals.iter_mut()) {
        item.path = cut_escaped(&item.path, long);
    }
    for text in out.notes.iter_mut().chain(out.confine.iter_mut()) {
        *text = cut_escaped(text, long);
    }
    while !render_roots(&out, offset, totals).fits(budget / 2) {
        let lists = [
            out.grants.len(),
            out.refusals.len(),
            out.notes.len(),
            out.confine.len(),
        ];
        let longest = (0..4).max_by_key(|&i| lists[i]).unwrap_or(0);
        match longest {
            _ if lists[longest] == 0 => break,
            0 => drop(out.grants.pop()),
            1 => drop(out.refusals.pop()),
            2 => drop(out.notes.pop()),
            _ => drop(out.confine.pop()),
        }
    }
    let fits = |out: &mut RootsOut, kept: usize| {
        out.roots = roots[..kept].to_vec();
        set_next(out, offset, kept);
        render_roots(out, offset, totals).fits(budget)
    };
    // The largest page that fits: fitting is monotone in the number of roots kept.
    let (mut low, mut high) = (0, roots.len());
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(&mut out, mid) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    out.roots = roots[..low].to_vec();
    if low == 0
        && let Some(first) = roots.first()
    {
        // One root larger than what is left: shown cut, so paging moves on.
        let share = budget / 16;
        let mut root = first.clone();
        root.path = cut_escaped(&root.path, share);
        root.name = root.name.map(|name| cut_escaped(&name, share));
        root.watch = cut_escaped(&root.watch, share);
        root.index = cut_escaped(&root.index, share);
        root.symbols = cut_escaped(&root.symbols, share);
        root.search = cut_escaped(&root.search, share);
        root.content = cut_escaped(&root.content, share);
        out.roots = vec![root];
    }
    let kept = out.roots.len();
    set_next(&mut out, offset, kept);
    render_roots(&out, offset, totals)
}

pub(crate) fn set_next(out: &mut RootsOut, offset: usize, kept: usize) {
    out.next_offset = (offset + kept < out.total).then_some(offset + kept);
}

/// The text and structured forms of a list_roots page (`totals`: grants, refusals and
/// confine directories in all, for the "and N more" lines).
pub(crate) fn render_roots(out: &RootsOut, offset: usize, totals: (usize, usize, usize)) -> Answer {
    // Paths and names in the text are escaped so that none can forge a line; the
    // structured content keeps them as they are.
    let (granted, refused, confined) = totals;
    let mut text = format!("Roots ({}):\n", out.source);
    for root in &out.roots {
        let kind = if root.file { "file" } else { "directory" };
        let mut flags = vec![kind.to_string()];
        match &root.unavailable {
            Some(why) => flags.push(format!("UNAVAILABLE: {why}")),
            None if root.missing => flags.push("MISSING".into()),
            None => {}
        }
        flags.push(format!("watch: {}", root.watch));
        flags.push(format!("index: {}", root.index));
        flags.push(format!("symbols: {}", root.symbols));
        flags.push(format!("search: {}", root.search));
        flags.push(format!("content: {}", root.content));
        let name = root
            .name
            .as_deref()
            .map(|n| format!(" \"{}\"", escape_for_display(n)))
            .unwrap_or_default();
        let path = escape_for_display(&root.path);
        text.push_str(&format!("  {path}{name} ({})\n", flags.join(", ")));
    }
    if !out.confine.is_empty() {
        text.push_str(&format!(
            "Confined to: {}",
            escape_for_display(&out.confine.join(", "))
        ));
        if confined > out.confine.len() {
            text.push_str(&format!(" and {} more", confined - out.confine.len()));
        }
        text.push('\n');
    }
    if let Some(next) = out.next_offset {
        text.push_str(&format!(
            "[showing roots {}-{} of {}; call list_roots with offset={next} for more]\n",
            offset + 1,
            offset + out.roots.len(),
            out.total
        ));
    } else if out.roots.is_empty() && out.total > 0 {
        text.push_str(&format!(
            "[offset {offset} is past the last of the {} roots]\n",
            out.total
        ));
    }
    for grant in &out.grants {
        text.push_str(&format!(
            "Granted ({}): {}\n",
            grant.access,
            escape_for_display(&grant.path)
        ));
    }
    if granted > out.grants.len() {
        text.push_str(&format!(
            "… and {} more grants\n",
            granted - out.grants.len()
        ));
    }
    for refusal in &out.refusals {
        text.push_str(&format!(
            "Refused ({}): {}\n",
            refusal.access,
            escape_for_display(&refusal.path)
        ));
    }
    if refused > out.refusals.len() {
        text.push_str(&format!(
            "… and {} more refusals\n",
            refused - out.refusals.len()
        ));
    }
    for note in &out.notes {
        text.push_str(&format!("Note: {}\n", escape_for_display(note)));
    }
    let structured = serde_json::to_value(out).unwrap_or(Value::Null);
    Answer::text(text).with_structured(structured)
}

/// The first notes about roots (each cut to 500 bytes), then how many more there are.
pub(crate) fn bounded_notes(mut notes: Vec<String>) -> Vec<String> {
    let more = notes.len().saturating_sub(MAX_LISTED);
    notes.truncate(MAX_LISTED);
    for note in &mut notes {
        if note.len() > 500 {
            let mut cut = 500;
            while !note.is_char_boundary(cut) {
                cut -= 1;
            }
            note.truncate(cut);
            note.push('…');
        }
    }
    if more > 0 {
        notes.push(format!("… and {more} more notes like these"));
    }
    notes
}
