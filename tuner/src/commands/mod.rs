//! One module per subcommand.

mod instance;
mod solve;

use std::path::PathBuf;

use anyhow::Result;
use solvers::bks::BestKnown;

use crate::cli::{Command, InstanceCommand};

pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Solve(args) => solve::run(&args),
        Command::Instance(InstanceCommand::Info(args)) => instance::info(&args),
        Command::Instance(InstanceCommand::Generate(args)) => instance::generate(&args),
    }
}

/// The embedded best-known table plus the user's tables, later ones winning.
fn best_known(extra: &[PathBuf]) -> Result<BestKnown> {
    let mut table = BestKnown::embedded();
    for path in extra {
        table.add_file(path)?;
    }
    Ok(table)
}
