//! One module per subcommand.

mod bench;
mod bench_qap;
mod devices;
mod instance;
mod solve;

use std::path::PathBuf;

use anyhow::Result;
use solvers::bks::BestKnown;

use crate::cli::{BenchCommand, Command, InstanceCommand};

/// Runs one command.
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Solve(args) => solve::run(&args),
        Command::Instance(InstanceCommand::Info(args)) => instance::info(&args),
        Command::Instance(InstanceCommand::Generate(args)) => instance::generate(&args),
        Command::Devices(args) => devices::run(&args),
        Command::Bench(BenchCommand::Measure(args)) => bench::measure(&args),
        Command::Bench(BenchCommand::Qap(args)) => bench_qap::run(&args),
        Command::Worker => crate::measure::worker::serve(),
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
