//! rootgrep: a fast, root-scoped code-search and file MCP server.
//!
//! This package is the binary and the MCP adapter: `cli` (how a process is set up),
//! `hostconfig` (the hosts' configuration snippets) and `mcp` (the protocol, the only
//! module that knows rmcp and JSON). The domain is the crate `rootgrep-core`, named by
//! its own paths (`rootgrep_core::roots`): nothing of it is re-exported here.

pub mod cli;
pub mod mcp;
