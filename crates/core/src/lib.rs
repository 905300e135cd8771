//! rootgrep's domain: everything the server does, without the protocol.
//!
//! Reading order, bottom up: `platform` (OS glue), `quote`, `mutex`, `clock`, `memory` and
//! `pool` (small shared helpers; `pool` also paces background work behind searches),
//! `roots` and `access` (the workspace boundary and the user's grants), `ignores` and
//! `walk` (what a walk visits), `files` (reading, facts about files, writes that lose
//! nothing), `store` (the indexes kept on disk between runs), `config` (the settings a
//! process runs with), `phase` (where the work on one root's index stands), `watch` (the
//! watcher and its events), `index` (the file index), `background` (what the indexes
//! built beside the file index share), `content` (the content index: which files may hold
//! a match), `search` (`grep` and `glob` answers, from the file and content indexes when
//! they are fresh), `symbols` (definitions and their index), `ranked` (ranked search and
//! its index), `history` (the git history that re-ranks it), `live` (the watcher feeding
//! the four indexes, and the history), `complete` (path completion). The MCP adapter, in
//! the package `rootgrep`, is the only caller; nothing here knows rmcp, tokio or JSON.

pub mod access;
pub(crate) mod background;
mod clock;
pub mod complete;
pub mod config;
pub mod content;
pub mod files;
pub mod history;
pub mod ignores;
pub mod index;
pub mod live;
pub mod memory;
mod mutex;
pub(crate) mod phase;
pub mod platform;
pub mod pool;
pub mod quote;
pub mod ranked;
pub mod roots;
pub mod search;
pub mod store;
pub mod symbols;
pub mod walk;
pub mod watch;
