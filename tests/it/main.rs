//! Wire tests: the real binary, driven over stdin/stdout with JSON-RPC lines, as a host
//! would. One module per behaviour.

mod support;

mod access;
mod adversarial;
mod cli;
mod crash;
mod elicitation;
mod files;
mod fixtures;
mod hostile_live;
mod lifecycle;
mod live;
mod load;
mod modern;
mod read;
mod resources;
mod roots;
mod search;
