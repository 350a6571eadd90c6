//! Renders the synthetic campaign into a folder, so the report can be looked at (and
//! screenshotted by `scripts/report-screenshot.sh`) before a real store exists.
//!
//! `cargo run -p mats-reports --example demo_report -- [OUT_DIR] [svg|png] [gpu|cpu]`

use std::path::PathBuf;

use reports::demo::{synthetic_input, Flavour};

fn main() {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().unwrap_or_else(|| "target/demo-report".into()));
    let format = match args.next().as_deref().unwrap_or("svg").parse() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let flavour = match args.next().as_deref() {
        Some("cpu") => Flavour::Cpu,
        _ => Flavour::Gpu,
    };
    match reports::render(&synthetic_input(flavour), &out, format) {
        Ok(summary) => {
            println!("{}", summary.index.display());
            println!("{} figure(s) written", summary.written.len());
            for s in &summary.skipped {
                println!("skipped {}: {}", s.title, s.reason);
            }
        }
        Err(e) => {
            eprintln!("report failed: {e}");
            std::process::exit(1);
        }
    }
}
