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
        leave_if_compiling(if code == ExitCode::SUCCESS { 0 } else { 1 });
        return code;
    }
    let cli = mats::cli::Cli::parse();
    match mats::run(cli.command) {
        Ok(()) => {
            leave_if_compiling(0);
            ExitCode::SUCCESS
        }
        Err(error) => {
            if let Some(code) = mats::output::exit_for(&error) {
                return code;
            }
            eprintln!("mats: error: {}", search::errors::one_line(&error));
            leave_if_compiling(1);
            ExitCode::FAILURE
        }
    }
}

/// Ends the process at once where a compile given up at a time limit still runs
/// ([`kernels::compiles_running`]): the destructors a normal exit runs would pull NVRTC from
/// under it and crash the process after its answer was printed.
fn leave_if_compiling(code: i32) {
    if kernels::compiles_running() {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: `_exit` ends the process without running destructors or atexit handlers;
        // everything mats wrote is flushed above, and files it wrote are closed by the kernel.
        unsafe { libc::_exit(code) }
    }
}
