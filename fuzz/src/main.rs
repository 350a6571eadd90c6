//! `mats-fuzz`: fuzz one or every input format for a time or a number of inputs and print
//! one line of figures per format. Exits 1 when anything was found.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use fuzz::engine::{self, Settings};
use fuzz::targets::Target;

#[global_allocator]
static ALLOC: fuzz::alloc::Counting = fuzz::alloc::Counting;

#[derive(Debug, Parser)]
#[command(
    name = "mats-fuzz",
    about = "Fuzz the input formats of mats (stable Rust)"
)]
struct Args {
    /// Formats: qap, pfsp, tsp, hwsw, campaign, space, bundle, cli, request (default: all).
    #[arg(long, value_delimiter = ',')]
    target: Vec<String>,
    /// Seconds per format.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Stop a format after this many inputs (before --seconds runs out).
    #[arg(long)]
    inputs: Option<u64>,
    /// Seed of the mutations.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Longest generated input, bytes.
    #[arg(long, default_value_t = 65536)]
    max_len: usize,
    /// An input slower than this (ms) is a timeout.
    #[arg(long, default_value_t = 2000)]
    timeout_ms: u64,
    /// Folder for findings (inputs that panicked, timed out or used too much memory).
    #[arg(long, default_value = "fuzz-findings")]
    out: PathBuf,
    /// Write each input to OUT/TARGET-last-input.bin before running it (to catch aborts).
    #[arg(long)]
    keep_last: bool,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let targets: Vec<Target> = if args.target.is_empty() {
        Target::ALL.to_vec()
    } else {
        let mut t = Vec::new();
        for name in &args.target {
            match Target::from_name(name) {
                Some(target) => t.push(target),
                None => {
                    eprintln!("mats-fuzz: error: unknown target {name:?}");
                    return std::process::ExitCode::FAILURE;
                }
            }
        }
        t
    };
    if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds < 1e7) {
        eprintln!("mats-fuzz: error: --seconds must be a positive number of seconds");
        return std::process::ExitCode::FAILURE;
    }
    // A single allocation of more than 4 GiB from an input of at most max_len bytes is a
    // finding; refusing it aborts the process (with --keep-last, `TARGET-last-input.bin`
    // holds the input).
    fuzz::alloc::set_limit(4 << 30);
    engine::quiet_panics();
    let mut clean = true;
    for target in targets {
        let settings = Settings {
            seed: args.seed,
            inputs: args.inputs,
            duration: Some(Duration::from_secs_f64(args.seconds)),
            max_len: args.max_len,
            timeout: Duration::from_millis(args.timeout_ms),
            out: Some(args.out.clone()),
            keep_last: args.keep_last,
            ..Settings::default()
        };
        let report = engine::run(target, &settings);
        println!("{}", report.line());
        for p in report.panics.iter().take(5) {
            println!("    panic: {}", p.lines().next().unwrap_or_default());
        }
        clean &= report.clean();
    }
    if clean {
        std::process::ExitCode::SUCCESS
    } else {
        println!("findings written to {}", args.out.display());
        std::process::ExitCode::FAILURE
    }
}
