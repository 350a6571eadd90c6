//! `mats`: parses arguments and hands the command to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Time limits count from here (reading, compiling and copying included).
    solvers::run::mark_process_start();
    // A closed pipe or a full disk on stdout ends with the usual status or one line.
    mats::output::install();
    // Before any thread starts or CUDA library loads (see the function's documentation).
    kernels::disable_driver_compute_cache();
    // An executable of `mats export --binaries` takes its own arguments (docs/standalone.md).
    if let Some(code) = mats::standalone::run_if_embedded() {
        return code;
    }
    let cli = mats::cli::Cli::parse();
    match mats::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(code) = mats::output::exit_for(&error) {
                return code;
            }
            eprintln!("mats: error: {}", search::errors::one_line(&error));
            ExitCode::FAILURE
        }
    }
}
