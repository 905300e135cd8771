//! Wire tests: the real binary, driven over stdin/stdout with JSON-RPC lines, as a host
//! would. One module per behaviour.

#[cfg_attr(not(unix), allow(dead_code))]
mod support;

#[cfg(unix)]
mod access;
#[cfg(unix)]
mod adversarial;
mod budget;
#[cfg(unix)] // stops the server with SIGSTOP
mod churn;
mod cli;
mod compact;
#[cfg(unix)]
mod content;
mod crash;
mod doctor;
#[cfg(unix)]
mod elicitation;
mod errors;
mod file_roots;
#[cfg(unix)]
mod files;
mod fixtures;
#[cfg(unix)] // made with the git command
mod history;
#[cfg(unix)]
mod hostile_files;
#[cfg(unix)]
mod hostile_ignorefiles;
mod hostile_live;
#[cfg(unix)]
mod hostile_search;
#[cfg(unix)]
mod hostile_texts;
mod lifecycle;
mod live;
mod load;
mod lost_edits;
mod modern;
mod over_time;
mod pipeline;
mod probe;
mod progress;
mod ranked;
mod read;
mod repeat;
mod resources;
mod roots;
mod sampling;
mod schema_fuzz;
mod search;
mod sharing;
mod store;
mod symbol_index;
mod symbols;
mod tool_list;
#[cfg(windows)]
mod windows;
