//! rootgrep: a fast, root-scoped code-search and file MCP server.
//!
//! Reading order: `config` and `cli` (how a process is set up), `roots` and `access` (the
//! workspace boundary and the user's grants), `files` (reading and facts about files),
//! then `mcp` (the protocol adapter, the only module that knows rmcp and JSON).

pub mod access;
pub mod cli;
pub mod complete;
pub mod config;
pub mod files;
pub mod ignores;
pub mod index;
pub mod live;
pub mod mcp;
pub mod memory;
pub mod platform;
pub mod pool;
pub mod quote;
pub mod roots;
pub mod search;
pub mod symbols;
pub mod walk;
pub mod watch;
