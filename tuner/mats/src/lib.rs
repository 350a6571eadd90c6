//! The `mats` command-line tool: argument parsing ([`cli`]) and one module per command
//! ([`commands`]) over the workspace's crates: `search` (spaces and strategies), `measure`
//! (GPU measurement), `engine` (campaigns and the tuning loop), `daemon`, `results`,
//! `reports` and `solvers`.

pub mod cli;
pub mod commands;
pub mod interrupt;
pub mod output;
pub mod standalone;

pub use commands::run;
