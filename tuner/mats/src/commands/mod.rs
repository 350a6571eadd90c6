//! One module per subcommand.

mod bench;
mod bench_hwsw;
mod bench_pfsp;
mod bench_qap;
mod bench_strategies;
mod bench_tsp;
mod devices;
pub mod export;
mod instance;
mod reference;
mod report;
pub mod results;
mod score;
pub mod solve;
pub mod space;
mod tune;
// Shards, the daemon and its clients.
mod bench_daemon;
mod daemon_client;
mod merge;

use std::path::PathBuf;

use anyhow::Result;
use solvers::bks::BestKnown;

use crate::cli::{BenchCommand, Command, InstanceCommand, SpaceCommand};

/// Runs one command.
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Solve(args) => solve::run(&args),
        Command::Instance(InstanceCommand::Info(args)) => instance::info(&args),
        Command::Instance(InstanceCommand::Generate(args)) => instance::generate(&args),
        Command::Instance(InstanceCommand::Reference(args)) => reference::reference(&args),
        Command::Instance(InstanceCommand::Score(args)) => score::score(&args),
        Command::Devices(args) => devices::run(&args),
        Command::Bench(BenchCommand::Measure(args)) => bench::measure(&args),
        Command::Bench(BenchCommand::Qap(args)) => bench_qap::run(&args),
        Command::Bench(BenchCommand::Pfsp(args)) => bench_pfsp::run(&args),
        Command::Bench(BenchCommand::Hwsw(args)) => bench_hwsw::run(&args),
        Command::Bench(BenchCommand::Tsp(args)) => bench_tsp::run(&args),
        Command::Bench(BenchCommand::Strategies(args)) => bench_strategies::run(&args),
        Command::Tune(args) => tune::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Results(args) => results::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Space(SpaceCommand::Show(args)) => space::show(&args),
        Command::Worker => measure::worker::serve(),
        Command::Merge(args) => merge::run(&args),
        Command::Bench(BenchCommand::Daemon(args)) => bench_daemon::run(&args),
        Command::Daemon(args) => daemon::serve(&args.to_options()),
        Command::Submit(args) => daemon_client::submit(&args),
        Command::Status(args) => daemon_client::status(&args),
        Command::Cancel(args) => daemon_client::cancel(&args),
        Command::Logs(args) => daemon_client::logs(&args),
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

/// The value of instance `name`, warning where the tables the user gave (`extra`) were meant
/// to hold it and none does (a name spelled otherwise in the table is the usual cause).
fn best_known_of(
    table: &BestKnown,
    extra: &[PathBuf],
    instance: &solvers::family::Instance,
) -> Option<solvers::bks::BestKnownEntry> {
    let name = instance.name();
    let found = table.lookup(instance);
    if let Some(warning) = found.mismatch(name) {
        eprintln!("warning: {warning}");
    } else if found == solvers::bks::Lookup::Unknown && !extra.is_empty() {
        let files: Vec<String> = extra.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "warning: no row of {} is named {name} (the `name` column is matched with \
             the instance's name, its file name without the extension, ignoring case)",
            files.join(", ")
        );
    }
    found.entry()
}

/// Writes `text` to `path`, or to standard output when there is none.
fn write_output(path: Option<&std::path::Path>, text: &str) -> Result<()> {
    use anyhow::Context;
    use std::io::Write;
    match path {
        Some(path) => {
            refuse_database(path)?;
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        // Flushed here, so that a full disk is reported (the flush at exit drops errors);
        // a closed pipe ends quietly in main (`output::exit_for`).
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(crate::output::stdout_error)
        }
    }
}

/// `mats results RUN -o RUN/results.sqlite` would replace the store with its own CSV: no
/// output of mats is a database, so one is never overwritten.
fn refuse_database(path: &std::path::Path) -> Result<()> {
    let mut head = [0u8; 16];
    let database = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0");
    if database {
        anyhow::bail!(
            "{} is an SQLite database (a campaign's results store?); mats does not overwrite it \
             with its output: name another file",
            path.display()
        );
    }
    Ok(())
}

/// Fails now, naming the flag, where `path` could not be written at the end (its folder is
/// missing or it is a folder): a benchmark must not measure for minutes and then lose it all.
fn check_output(flag: &str, path: Option<&std::path::Path>) -> Result<()> {
    let Some(path) = path else {
        return Ok(());
    };
    if path.is_dir() {
        anyhow::bail!("{flag} {}: is a folder, not a file", path.display());
    }
    // Before a benchmark measures, not after.
    refuse_database(path)?;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if !parent.is_dir() {
        anyhow::bail!(
            "{flag} {}: the folder {} does not exist",
            path.display(),
            parent.display()
        );
    }
    Ok(())
}

/// Writes a benchmark's full results as pretty JSON (with a final newline).
fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<()> {
    write_output(Some(path), &(serde_json::to_string_pretty(value)? + "\n"))
}
