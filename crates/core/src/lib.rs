//! rootgrep's domain: everything the server does, without the protocol.
//!
//! Reading order, bottom up: `platform` (OS glue), `quote`, `pool`, `memory`, `mutex` and
//! `clock` (small shared helpers), `config` (the settings a process runs with), `roots` and `access` (the
//! workspace boundary and the user's grants), `ignores` and `walk` (what a walk visits),
//! `files` (reading, facts about files, writes that lose nothing), `search` (answers),
//! `lifecycle` (where the work on one root's index stands), `index` and `symbols` (the
//! indexes that make answers fast), `store` (the indexes kept on disk between runs), `watch` and `live` (keeping the indexes true while
//! files change), `complete` (path completion). The MCP adapter, in
//! the package `rootgrep`, is the only caller; nothing here knows rmcp, tokio or JSON.

pub mod access;
pub(crate) mod background;
mod clock;
pub mod complete;
pub mod config;
pub mod files;
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
