//! `mats tune CAMPAIGN.toml`.

use std::io::IsTerminal;

use anyhow::{Context, Result};

use crate::cli::TuneArgs;
use engine::campaign::plan::EmptyShard;
use engine::campaign::{CampaignFile, CampaignPlan, Resolve};
use engine::tune::{self, StartMode, TuneOptions};

pub fn run(args: &TuneArgs) -> Result<()> {
    if args.check {
        let checked = check(args);
        // With --json a script reads the verdict on stdout either way; the error also goes
        // to stderr as one line with a non-zero status, as without --json.
        if let (true, Err(e)) = (args.json, &checked) {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "file": args.campaign.display().to_string(),
                    "valid": false,
                    "error": search::errors::one_line(e),
                }))?
            );
        }
        return checked;
    }
    let file = CampaignFile::read(&args.campaign)?;
    let plan = match CampaignPlan::resolve(&file, &Resolve::run(args.out.clone(), args.shard)) {
        Err(e) if e.downcast_ref::<EmptyShard>().is_some() => {
            eprintln!("{e}");
            if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "campaign": file.config.name,
                        "shard": args.shard.map(|s| s.to_string()),
                        "nothing_to_do": true,
                        "message": e.to_string(),
                    }))?
                );
            }
            return Ok(());
        }
        plan => plan?,
    };
    let options = TuneOptions {
        mode: if args.resume {
            StartMode::Resume
        } else if args.fresh {
            StartMode::Fresh
        } else {
            StartMode::New
        },
        worker_exe: std::env::current_exe().context("cannot find the mats executable")?,
        progress: if args.quiet {
            tune::ProgressMode::Hidden
        } else if std::io::stderr().is_terminal() {
            tune::ProgressMode::Bar
        } else {
            tune::ProgressMode::Lines
        },
        no_wait: args.no_wait,
    };
    let again = tune::tune_command(&plan);
    let summary = tune::run(plan, &options)?;
    let interrupted = tune::budget::stopped_by_user(&summary).then(|| {
        crate::output::Interrupted(format!(
            "campaign {} stopped by the user before its end; its trials are saved in {}: \
                 continue with `{again} --resume`",
            summary.campaign,
            summary.output.display(),
        ))
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return interrupted.map_or(Ok(()), |i| Err(i.into()));
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
    let value = |metric: &str, v: Option<f64>| match v {
        None => "-".to_string(),
        Some(v) if metric.starts_with("gap") => format!("{v:.3}%"),
        Some(v) if metric.starts_with("energy") => format!("{v:.2} J"),
        Some(v) if metric.starts_with("power") => format!("{v:.1} W"),
        Some(v) if metric == "time" => format!("{:.3} ms", v * 1e3),
        Some(v) => format!("{v:.3} s"),
    };
    println!(
        "{:<w$} {:>16} {:>12} {:>12} {:>6} {:>6}  best point",
        "class", "objective", "baseline", "best", "evals", "raced"
    );
    for c in &summary.classes {
        println!(
            "{:<w$} {:>16} {:>12} {:>12} {:>6} {:>6}  {}",
            c.class,
            c.metric,
            value(&c.metric, c.baseline_value),
            value(&c.metric, c.best_value),
            c.evaluations,
            c.raced,
            c.best_point.as_ref().map_or("-".into(), |p| p.key())
        );
    }
    let show = |title: &str, class: &str, metric: &str, cmp: &tune::Comparison| {
        let parts: Vec<String> = cmp
            .values
            .iter()
            .map(|(role, v)| match v {
                Some(v) => format!(
                    "{role} {} ± {}",
                    value(metric, Some(v.mean)),
                    value(metric, Some(v.sd)).trim_end_matches(['%', ' ', 'J', 'W', 's', 'm'])
                ),
                None if cmp.rejected.contains(role) => {
                    format!(
                        "{role} rejected (its gap above the baseline's by more than the margin)"
                    )
                }
                None => format!("{role} failed"),
            })
            .collect();
        let level = cmp.level_with_winner();
        let tie = if level.is_empty() {
            String::new()
        } else {
            format!(" (level with {})", level.join(" and "))
        };
        println!(
            "  {class} {title} ({} instances x {} seeds): {}; best: {}{tie}",
            cmp.instances.len(),
            cmp.seeds.len(),
            parts.join(", "),
            cmp.winner.as_deref().unwrap_or("-")
        );
    };
    for c in &summary.classes {
        if let Some(f) = &c.final_check {
            show("re-measured on fresh seeds", &c.class, &c.metric, f);
        }
        if let Some(h) = &c.holdout {
            show("on held-out instances", &c.class, &c.metric, h);
        }
        print_front(c);
    }
    println!(
        "cost: {:.1} device-seconds of measurement ({} trials){}",
        // `+ 0.0` turns a -0.0 (nothing measured) into 0.0, which prints without a sign.
        summary.device_seconds + 0.0,
        summary.new_trials,
        summary
            .production_runs
            .map(|r| format!(", {:.1} production-run equivalents", r + 0.0))
            .unwrap_or_default()
    );
    if let Some(share) = summary.gpu_busy_share {
        println!("GPU busy {:.1}% of the wall time", share * 100.0);
    }
    if let Some(o) = summary.median_trial_overhead_s {
        println!(
            "median per-trial overhead outside the measurement: {:.0} ms",
            o * 1e3
        );
    }
    if let Some(interrupted) = interrupted {
        return Err(interrupted.into());
    }
    println!(
        "results: {}/{} (next: mats report {0}, mats export {0} --out tuned/)",
        summary.output.display(),
        tune::STORE_FILE
    );
    Ok(())
}

/// A Pareto campaign's front of a class, one line per point: what a user picks from with
/// `solve --tuned --max-power` or `--max-energy` after `mats export`.
fn print_front(c: &tune::ClassSummary) {
    if c.front.is_empty() {
        return;
    }
    let remeasured = c.front.iter().all(|f| f.remeasured);
    println!(
        "  {} front ({} points{}):",
        c.class,
        c.front.len(),
        if remeasured {
            ", re-measured on fresh seeds"
        } else {
            ""
        }
    );
    let opt = |v: Option<f64>, unit: &str, digits: usize| {
        v.map_or("-".to_string(), |v| format!("{v:.digits$}{unit}"))
    };
    for f in &c.front {
        println!(
            "    gap {:>8}  energy {:>10}  power {:>8}  {}",
            opt(f.gap_percent, "%", 3),
            opt(f.energy_j, " J", 1),
            opt(f.power_w, " W", 1),
            f.point.key()
        );
    }
}

/// `--check`: the campaign resolved as a run would resolve it, nothing written.
fn check(args: &TuneArgs) -> Result<()> {
    let file = CampaignFile::read(&args.campaign)?;
    let plan = match tune::check_anywhere(&file, args.out.clone(), args.shard) {
        Err(e) if e.downcast_ref::<EmptyShard>().is_some() => {
            let line = format!("campaign {}: valid; {e}", file.config.name);
            if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "campaign": file.config.name,
                        "file": args.campaign.display().to_string(),
                        "valid": true,
                        "nothing_to_do": true,
                        "message": line,
                    }))?
                );
            } else {
                println!("{line}");
            }
            return Ok(());
        }
        plan => plan?,
    };
    // An `auto` campaign with a [gpu] table is checked as the GPU would run it; say which
    // backend a run here takes when that is another.
    let here = match file.config.backend {
        engine::campaign::config::BackendChoice::Auto
            if plan.backend.name() == "gpu" && !engine::campaign::setup::gpu_present() =>
        {
            if file.config.cpu.is_some() {
                "; backend = \"auto\" runs its [cpu] table on this machine, which has no \
                 GPU (checked too)"
            } else {
                "; this machine has no GPU and the campaign no [cpu] table: run it where \
                 there is a GPU"
            }
        }
        _ => "",
    };
    let line = format!(
        "campaign {} ({}): valid for backend {}{here}",
        plan.name,
        args.campaign.display(),
        plan.backend.name()
    );
    // With --json, stdout is JSON only (scripts parse it); errors stay one line on
    // stderr with a non-zero status, as without it.
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "campaign": plan.name,
                "file": args.campaign.display().to_string(),
                "valid": true,
                "backend": plan.backend.name(),
                "message": line,
            }))?
        );
    } else {
        println!("{line}");
    }
    Ok(())
}
