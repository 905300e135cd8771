//! `rootgrep cache [list|clear] [DIR]... [--missing] [--cache-dir DIR]`: what the index
//! store holds (per root: its size, when a server last opened it, the pid of the server
//! writing it now, whether the root is gone), and clearing it. Output on stdout, one entry
//! per line; errors on stderr. The store's own checks apply (`store::list`): a cache
//! directory someone else could have planted is refused, not listed or emptied.

use std::path::PathBuf;
use std::process::ExitCode;

use rootgrep::cli::{CacheAction, Command};
use rootgrep_core::roots::path_display;
use rootgrep_core::store::{Cleared, EntryInfo, Store, default_cache_dir};

/// Runs `command` (a `Command::Cache`).
pub(crate) fn run(command: &Command) -> ExitCode {
    let Command::Cache {
        action,
        dirs,
        missing,
        cache_dir,
    } = command
    else {
        return ExitCode::FAILURE;
    };
    let dir = match cache_dir {
        Some(dir) => dir.to_path_buf(),
        None => match default_cache_dir(|name| std::env::var_os(name)) {
            Some(dir) => dir,
            None => {
                crate::report(
                    "rootgrep cache: no cache directory known (HOME or LOCALAPPDATA unset): \
                     pass --cache-dir DIR",
                );
                return ExitCode::from(2);
            }
        },
    };
    let store = Store::new(&dir, None);
    let refused = |err: std::io::Error| {
        crate::report(&format!(
            "rootgrep cache: {err}; nothing was listed or removed"
        ));
        ExitCode::FAILURE
    };
    match action {
        CacheAction::List => {
            let entries = match store.list() {
                Ok(entries) => entries,
                Err(err) => return refused(err),
            };
            let total: u64 = entries.iter().map(|e| e.bytes).sum();
            let mut text = format!(
                "{}: {} entries, {}\n",
                store.dir().display(),
                entries.len(),
                rootgrep_core::quote::byte_size(total)
            );
            for entry in &entries {
                text.push_str(&line(entry));
            }
            crate::print(&text);
            ExitCode::SUCCESS
        }
        CacheAction::Clear => {
            let roots: Vec<PathBuf> = dirs
                .iter()
                // The form the server keys entries by (on Windows without `\\?\`).
                .map(|d| rootgrep_core::roots::canonicalize(d).unwrap_or_else(|_| d.clone()))
                .collect();
            match store.clear(&roots, *missing) {
                Ok(cleared) => crate::print(&cleared_text(&cleared)),
                Err(err) => return refused(err),
            }
            ExitCode::SUCCESS
        }
    }
}

/// What `cache clear` did: how many entries went, then each entry kept and why.
fn cleared_text(cleared: &Cleared) -> String {
    let mut text = format!("removed {} entries\n", cleared.removed.len());
    for entry in &cleared.busy {
        text.push_str(&format!("kept (in use) {}", line(entry)));
    }
    for entry in &cleared.foreign {
        text.push_str(&format!(
            "kept (holds files not the store's) {}",
            line(entry)
        ));
    }
    text
}

fn line(entry: &EntryInfo) -> String {
    let root = match &entry.root {
        Some(root) if entry.gone => format!("(gone) {}", path_display(root)),
        Some(root) => path_display(root),
        None => format!("(no description) {}", entry.dir.display()),
    };
    let used = entry
        .used
        .map(|t| chrono::DateTime::<chrono::Utc>::from(t).format("%Y-%m-%d %H:%M UTC"))
        .map_or_else(|| "never".to_string(), |t| t.to_string());
    let writer = entry
        .writer
        .map_or(String::new(), |pid| format!(", written by pid {pid}"));
    format!(
        "{root}\t{}\tused {used}{writer}\n",
        rootgrep_core::quote::byte_size(entry.bytes)
    )
}
