//! `mats merge OUT DIR...`: the stores of a campaign's shards joined into one campaign folder,
//! which `mats report`, `mats results` and `mats export` then read as a single run.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::cli::MergeArgs;
use crate::tune::STORE_FILE;

/// Settings that legitimately differ between shards: which share a shard ran, the device
/// label of its machine, and where the campaign file and its space lay on that machine.
pub const SHARD_SETTINGS: &[&str] = &["shard", "device", "campaign_file", "space"];

pub fn run(args: &MergeArgs) -> Result<()> {
    for dir in &args.dirs {
        if !dir.join(STORE_FILE).is_file() {
            bail!(
                "{} holds no {STORE_FILE}; name the shard folders that `mats tune --shard` wrote",
                dir.display()
            );
        }
        if same_folder(dir, &args.out) {
            bail!(
                "{} is both the output and a folder to merge; merge into another folder",
                dir.display()
            );
        }
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create the output folder {}", args.out.display()))?;
    let _lock = results::FolderLock::acquire(&args.out)?;
    let store = results::Store::open(args.out.join(STORE_FILE))?;
    let mut total = results::MergeCounts::default();
    let mut per_dir = Vec::new();
    for dir in &args.dirs {
        // A shard still being tuned would change under us.
        let _shard_lock = results::FolderLock::acquire(dir)?;
        let counts = store.merge_from(&dir.join(STORE_FILE), SHARD_SETTINGS, &["shard"])?;
        total.campaigns += counts.campaigns;
        total.instances += counts.instances;
        total.points += counts.points;
        total.runs += counts.runs;
        total.evaluations += counts.evaluations;
        total.trials += counts.trials;
        total.duplicate_trials += counts.duplicate_trials;
        per_dir.push(serde_json::json!({"dir": dir, "added": counts}));
    }
    store.integrity_check()?;
    write_summary(&args.out, &args.dirs)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "out": args.out,
                "added": total,
                "sources": per_dir,
            }))?
        );
    } else {
        println!(
            "merged {} folder(s) into {out}: {} trials added ({} already there), {} runs, {} \
             evaluations (next: mats report {out}, mats export {out} --out tuned/)",
            args.dirs.len(),
            total.trials,
            total.duplicate_trials,
            total.runs,
            total.evaluations,
            out = args.out.display(),
        )
    }
    Ok(())
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The shards' `summary.json` files joined: every shard's classes, trial counts and device
/// seconds summed, the longest wall time (shards run side by side). `mats export` reads the
/// classes' verdicts from it.
fn write_summary(out: &Path, dirs: &[std::path::PathBuf]) -> Result<()> {
    let mut merged: Option<serde_json::Value> = None;
    let mut classes = Vec::new();
    let (mut trials, mut device_s, mut wall_s) = (0u64, 0.0f64, 0.0f64);
    for dir in dirs {
        let path = dir.join("summary.json");
        let Ok(text) =
            solvers::error::read_kind(&path, "a summary.json", solvers::error::caps::SUMMARY)
        else {
            continue; // a shard stopped before its end has none; the store has everything
        };
        let s: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON", path.display()))?;
        classes.extend(s["classes"].as_array().cloned().unwrap_or_default());
        trials += s["new_trials"].as_u64().unwrap_or(0);
        device_s += s["device_seconds"].as_f64().unwrap_or(0.0);
        wall_s = wall_s.max(s["wall_s"].as_f64().unwrap_or(0.0));
        merged.get_or_insert(s);
    }
    let Some(mut summary) = merged else {
        return Ok(());
    };
    classes.sort_by(|a, b| a["class"].as_str().cmp(&b["class"].as_str()));
    summary["classes"] = serde_json::Value::Array(classes);
    summary["new_trials"] = trials.into();
    summary["device_seconds"] = device_s.into();
    summary["wall_s"] = wall_s.into();
    summary["output"] = out.display().to_string().into();
    summary["merged_from"] = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .into();
    let path = out.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary)?)
        .with_context(|| format!("cannot write {}", path.display()))
}
