//! `mats tune CAMPAIGN.toml`.

use std::io::IsTerminal;

use anyhow::{Context, Result};

use crate::campaign::CampaignFile;
use crate::cli::TuneArgs;
use crate::tune::{self, StartMode, TuneOptions};

pub fn run(args: &TuneArgs) -> Result<()> {
    let file = CampaignFile::read(&args.campaign)?;
    let options = TuneOptions {
        mode: if args.resume {
            StartMode::Resume
        } else if args.fresh {
            StartMode::Fresh
        } else {
            StartMode::New
        },
        out: args.out.clone(),
        worker_exe: std::env::current_exe().context("cannot find the mats executable")?,
        progress: !args.quiet && std::io::stderr().is_terminal(),
    };
    let summary = tune::run(file, &options)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    println!(
        "campaign {} on {} ({}): {} new trials in {:.1} s{}",
        summary.campaign,
        summary.device,
        summary.backend,
        summary.new_trials,
        summary.wall_s,
        summary
            .stopped
            .as_ref()
            .map(|s| format!(" — {s}; continue with --resume"))
            .unwrap_or_default()
    );
    let w = summary
        .classes
        .iter()
        .map(|c| c.class.len())
        .max()
        .unwrap_or(5)
        // A longer class name only pushes its row out; a width above 65,535 would panic.
        .clamp(5, 60);
    println!(
        "{:<w$} {:>10} {:>10} {:>8} {:>6}  best point",
        "class", "baseline", "best", "speedup", "evals"
    );
    for c in &summary.classes {
        let ms = |s: Option<f64>| s.map_or("-".to_string(), |s| format!("{:.3} ms", s * 1e3));
        println!(
            "{:<w$} {:>10} {:>10} {:>8} {:>6}  {}",
            c.class,
            ms(c.baseline_time_s),
            ms(c.best_time_s),
            c.speedup.map_or("-".into(), |s| format!("{s:.2}x")),
            c.evaluations,
            c.best_point.as_ref().map_or("-".into(), |p| p.key())
        );
    }
    if let Some(share) = summary.gpu_busy_share {
        println!("GPU busy {:.1}% of the wall time", share * 100.0);
    }
    if let Some(o) = summary.median_trial_overhead_s {
        println!(
            "median per-trial overhead outside the measurement: {:.0} ms",
            o * 1e3
        );
    }
    println!(
        "results: {}/{} (next: mats report {0}, mats export {0} --out tuned/)",
        summary.output.display(),
        tune::STORE_FILE
    );
    Ok(())
}
