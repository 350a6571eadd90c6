//! The `mats` command-line tool: argument parsing ([`cli`]), one module per command
//! ([`commands`]), and GPU measurement in isolated worker processes ([`measure`]).

pub mod campaign;
pub mod cli;
pub mod commands;
pub mod daemon;
pub mod errors;
pub mod limits;
pub mod measure;
pub mod output;
pub mod runner;
pub mod search;
pub mod space;
pub mod tune;
pub mod user_dirs;

pub use commands::run;
