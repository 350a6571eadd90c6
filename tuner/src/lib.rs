//! The `mats` command-line tool: argument parsing ([`cli`]), one module per command
//! ([`commands`]), and GPU measurement in isolated worker processes ([`measure`]).

pub mod cli;
pub mod commands;
pub mod measure;
pub mod search;
pub mod space;

pub use commands::run;
