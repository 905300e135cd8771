//! Wire tests: the real binary, driven over stdin/stdout with JSON-RPC lines, as a host
//! would. One module per behaviour.

mod support;

mod access;
mod adversarial;
mod budget;
mod churn;
mod cli;
mod crash;
mod elicitation;
mod files;
mod fixtures;
mod hostile_files;
mod hostile_live;
mod hostile_search;
mod lifecycle;
mod live;
mod load;
mod modern;
mod over_time;
mod pipeline;
mod read;
mod resources;
mod roots;
mod schema_fuzz;
mod search;
