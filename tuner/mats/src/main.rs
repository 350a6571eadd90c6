//! `mats`: parses arguments and hands the command to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Before any thread starts or CUDA library loads (see the function's documentation).
    kernels::disable_driver_compute_cache();
    let cli = mats::cli::Cli::parse();
    match mats::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mats: error: {}", search::errors::one_line(&error));
            ExitCode::FAILURE
        }
    }
}
