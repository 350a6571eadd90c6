//! `mats`: parses arguments and hands the command to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // With a driver installed, NVRTC serves repeated compiles from the driver's compute cache
    // and then returns no ptxas resource report (registers, spills), which every trial
    // records. mats keeps compiled variants in its own disk cache, so the driver's is not
    // needed. Set before any CUDA library is loaded; a user's explicit setting wins.
    if std::env::var_os("CUDA_CACHE_DISABLE").is_none() {
        std::env::set_var("CUDA_CACHE_DISABLE", "1");
    }
    let cli = mats::cli::Cli::parse();
    match mats::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mats: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
