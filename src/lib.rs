//! rootgrep: a fast, root-scoped code-search and file MCP server.
//!
//! This package is the binary and the MCP adapter: `cli` (how a process is set up),
//! `hostconfig` (the hosts' configuration snippets) and `mcp` (the protocol, the only
//! module that knows rmcp and JSON). The domain is the crate `rootgrep-core`; its modules
//! are re-exported here under their own names, so `rootgrep::roots` is `rootgrep_core::roots`.

pub use rootgrep_core::{
    access, complete, config, files, ignores, index, live, memory, platform, pool, quote, ranked,
    roots, search, store, symbols, walk, watch,
};

pub mod cli;
pub mod mcp;
