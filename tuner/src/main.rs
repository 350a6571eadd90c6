//! `mats`: the command-line front of the workspace. It parses arguments and hands each
//! command to a module of `commands`; the work itself lives in the library crates.

mod cli;
mod commands;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mats: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
