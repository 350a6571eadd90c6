//! `mats merge OUT DIR...`: the stores of a campaign's shards joined into one campaign folder,
//! which `mats report`, `mats results` and `mats export` then read as a single run.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::cli::MergeArgs;
use engine::tune::STORE_FILE;

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
    check_one_campaign(args)?;
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

/// Every folder (and the output, where it holds a store) holds one and the same campaign:
/// the merged summary takes its verdicts from the folders, so another campaign's classes
/// would be exported as this one's. (A same-named campaign from another file is refused by
/// the store's merge, which compares the settings.)
fn check_one_campaign(args: &MergeArgs) -> Result<()> {
    let mut seen: Option<(String, &Path)> = None;
    let output = args.out.join(STORE_FILE);
    let out_dir = [args.out.as_path()];
    let folders = args
        .dirs
        .iter()
        .map(|d| d.as_path())
        .chain(out_dir.into_iter().filter(|_| output.is_file()));
    for dir in folders {
        let store = results::Store::open_existing(dir.join(STORE_FILE))?;
        for campaign in store.campaigns()? {
            match &seen {
                Some((name, first)) if *name != campaign.name => bail!(
                    "{} holds campaign {name:?} and {} holds campaign {:?}: `mats merge` joins \
                     the shards of one campaign (`mats tune --shard K/N`); merge each \
                     campaign into its own folder",
                    first.display(),
                    dir.display(),
                    campaign.name
                ),
                Some(_) => {}
                None => seen = Some((campaign.name, dir)),
            }
        }
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
    let mut merged: Option<results::TuneSummary> = None;
    let mut classes = Vec::new();
    let (mut trials, mut device_s, mut wall_s) = (0u64, 0.0f64, 0.0f64);
    for dir in dirs {
        let path = dir.join("summary.json");
        if !path.exists() {
            continue; // a shard stopped before its end has none; the store has everything
        }
        let s = engine::tune::read_summary(&path)?;
        classes.extend(s.classes.iter().cloned());
        trials += s.new_trials;
        device_s += s.device_seconds;
        wall_s = wall_s.max(s.wall_s);
        merged.get_or_insert(s);
    }
    let Some(mut summary) = merged else {
        return Ok(());
    };
    classes.sort_by(|a, b| a.class.cmp(&b.class));
    summary.classes = classes;
    summary.new_trials = trials;
    summary.device_seconds = device_s;
    summary.wall_s = wall_s;
    summary.output = out.to_path_buf();
    summary.merged_from = dirs.to_vec();
    let path = out.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary)?)
        .with_context(|| format!("cannot write {}", path.display()))
}
