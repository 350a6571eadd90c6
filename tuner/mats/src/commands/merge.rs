//! `mats merge OUT DIR...`: the stores of a campaign's shards joined into one campaign folder,
//! which `mats report`, `mats results` and `mats export` then read as a single run.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::cli::MergeArgs;
use engine::campaign::shard::Shard;
use engine::tune::STORE_FILE;

/// Settings that legitimately differ between shards: which share a shard ran, the device
/// label of its machine, and where the campaign file and its space lay on that machine.
pub const SHARD_SETTINGS: &[&str] = &["shard", "device", "campaign_file", "space"];

pub fn run(args: &MergeArgs) -> Result<()> {
    for (i, dir) in args.dirs.iter().enumerate() {
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
        if let Some(first) = args.dirs[..i].iter().find(|d| same_folder(d, dir)) {
            bail!(
                "{} and {} are one folder; name each shard folder once",
                first.display(),
                dir.display()
            );
        }
    }
    let named_shards = check_one_campaign(args)?;
    check_output_folder(&args.out)?;
    let sources = Sources::of(&args.out, &args.dirs, named_shards)?;
    sources.check_same_campaign(&args.out)?;
    sources.check_split()?;
    let created = !args.out.exists();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create the output folder {}", args.out.display()))?;
    // Held while the summary is written too.
    let merged = results::FolderLock::acquire(&args.out)
        .map_err(anyhow::Error::from)
        .and_then(|lock| Ok((lock, merge_stores(&args.out, &sources)?)));
    let (_lock, (total, per_dir)) = match merged {
        Ok(m) => m,
        Err(e) => {
            if created {
                // A refused merge (another campaign file, a conflict) leaves no folder behind
                // that looks like an output: only the lock was ever written into it (the
                // lock itself is released by now).
                let _ = std::fs::remove_file(args.out.join(results::lock::LOCK_FILE));
                let _ = std::fs::remove_dir(&args.out);
            }
            return Err(e);
        }
    };
    let again = sources.reread;
    write_summary(&args.out, sources)?;
    report(args, again, total, per_dir)
}

/// Every source's store merged into OUT's, through a staging store that replaces OUT's only
/// when all of them merged: the totals and what each folder added. The folders an earlier
/// merge took are merged again, since their summaries are read again: a shard resumed since
/// adds its new trials, and one tuned again from the start is refused.
/// The caller holds OUT's lock.
fn merge_stores(
    out: &Path,
    sources: &Sources,
) -> Result<(results::MergeCounts, Vec<serde_json::Value>)> {
    // Everything is merged into a new store beside OUT's, which replaces it only when every
    // folder merged: a conflict in the last folder must leave OUT as it was.
    let target = out.join(STORE_FILE);
    let staging = Staging::new(out.join(format!(".{STORE_FILE}.merging")));
    let store = results::Store::open(&staging.path)?;
    if target.is_file() {
        merge_one(&store, &target, &target)?;
    }
    let mut total = results::MergeCounts::default();
    let mut per_dir = Vec::new();
    for (k, (dir, _)) in sources.folders.iter().enumerate() {
        // Folders the user did not name now are said to come from the earlier merge.
        let taken_before = |e: anyhow::Error| match k < sources.reread {
            true => e.context(format!(
                "{} is merged again because an earlier merge into {} took it",
                dir.display(),
                out.display()
            )),
            false => e,
        };
        // A shard still being tuned would change under us.
        let _shard_lock = results::FolderLock::acquire(dir)
            .map_err(anyhow::Error::from)
            .map_err(taken_before)?;
        let counts = merge_one(&store, &dir.join(STORE_FILE), &target).map_err(taken_before)?;
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
    drop(store); // the last connection closing folds its write-ahead log into the file
    staging.replace(&target)?;
    Ok((total, per_dir))
}

/// One store merged into the staging one; a refusal names OUT's store, which the user knows,
/// rather than the staging file it is built in.
fn merge_one(store: &results::Store, source: &Path, target: &Path) -> Result<results::MergeCounts> {
    store
        .merge_from(source, SHARD_SETTINGS, &["shard"])
        .with_context(|| format!("cannot merge into {}", target.display()))
}

/// What a merge prints: its totals (JSON with each folder's additions).
fn report(
    args: &MergeArgs,
    again: usize,
    total: results::MergeCounts,
    per_dir: Vec<serde_json::Value>,
) -> Result<()> {
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
            "merged {} folder(s){} into {out}: {} trials added ({} already there), {} runs, {} \
             evaluations (next: mats report {out}, mats export {out} --out tuned/)",
            args.dirs.len(),
            match again {
                0 => String::new(),
                n => format!(" and {n} an earlier merge took"),
            },
            total.trials,
            total.duplicate_trials,
            total.runs,
            total.evaluations,
            out = args.out.display(),
        )
    }
    Ok(())
}

/// A store being built beside OUT's: removed (with its SQLite side files) unless it replaced
/// OUT's store.
struct Staging {
    path: PathBuf,
    done: bool,
}

impl Staging {
    fn new(path: PathBuf) -> Staging {
        let staging = Staging { path, done: false };
        staging.remove(); // an earlier merge killed mid-way
        staging
    }

    fn side_files(path: &Path) -> [PathBuf; 2] {
        ["-wal", "-shm"].map(|s| PathBuf::from(format!("{}{s}", path.display())))
    }

    fn remove(&self) {
        for p in std::iter::once(self.path.clone()).chain(Self::side_files(&self.path)) {
            let _ = std::fs::remove_file(p); // absent is the usual case
        }
    }

    /// Puts the staged store in `target`'s place; `target`'s own side files go first, since
    /// the staged store holds everything they did.
    fn replace(mut self, target: &Path) -> Result<()> {
        for side in Self::side_files(target) {
            match std::fs::remove_file(&side) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("cannot remove {}", side.display()))
                }
                _ => {}
            }
        }
        std::fs::rename(&self.path, target)
            .with_context(|| format!("cannot move the merged store to {}", target.display()))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            self.remove();
        }
    }
}

/// The shard folders a merge joins: those named now and those an earlier merge into the same
/// OUT joined (its summary's `merged_from`), each with the share of the campaign its store
/// recorded (`--shard K/N`; None for a folder that ran the whole campaign). Paths are
/// absolute, so that a merge run again from another folder finds them.
struct Sources {
    /// OUT's summary before this merge (an earlier merge's).
    earlier: Option<results::TuneSummary>,
    folders: Vec<(PathBuf, Option<Shard>)>,
    /// How many of `folders`, first, an earlier merge took (the rest are named now).
    reread: usize,
    /// An earlier merge's folders that are gone: their classes stay as they were merged, with
    /// the shard the earlier merge recorded (None in merges written before it was).
    vanished: Vec<(PathBuf, Option<Shard>)>,
}

impl Sources {
    /// `named_shards`: the named folders' shards, in their order.
    fn of(out: &Path, named: &[PathBuf], named_shards: Vec<Option<Shard>>) -> Result<Sources> {
        let summary = out.join("summary.json");
        let earlier = match summary.exists() {
            true => Some(engine::tune::read_summary(&summary)?),
            false => None,
        };
        let mut vanished = Vec::new();
        let mut folders = Vec::new();
        let again = |d: &Path| named.iter().any(|n| same_folder(n, d) || n == d);
        if let Some(e) = &earlier {
            for (k, dir) in e.merged_from.iter().enumerate() {
                if again(dir) {
                    continue;
                }
                if dir.join(STORE_FILE).is_file() {
                    folders.push((absolute(dir), shard_of(dir)?));
                } else {
                    let shard = e.merged_shards.get(k).and_then(|s| s.parse().ok());
                    vanished.push((dir.clone(), shard));
                }
            }
        }
        let reread = folders.len();
        folders.extend(named.iter().map(|d| absolute(d)).zip(named_shards));
        // A shard folder moved since the earlier merge and named now under its new path.
        vanished.retain(|(_, gone)| {
            !gone.is_some_and(|g| folders.iter().any(|(_, s)| s.is_some_and(|s| s == g)))
        });
        Ok(Sources {
            earlier,
            folders,
            reread,
            vanished,
        })
    }

    /// The folders an earlier merge took (re-read now, before the named ones) still hold the
    /// campaign OUT holds: a folder replaced since by another campaign's shard would put that
    /// campaign's verdicts in this summary.
    fn check_same_campaign(&self, out: &Path) -> Result<()> {
        let store = out.join(STORE_FILE);
        if !store.is_file() {
            return Ok(());
        }
        let Some(ours) = results::Store::open_existing(&store)?
            .campaigns()?
            .first()
            .cloned()
        else {
            return Ok(());
        };
        for (dir, _) in &self.folders[..self.reread] {
            let theirs = results::Store::open_existing(dir.join(STORE_FILE))?.campaigns()?;
            if let Some(other) = theirs.iter().find(|c| c.name != ours.name) {
                bail!(
                    "{} (which an earlier merge into {} took) now holds campaign {:?}, not {:?}: \
                     put that shard's folder back, or merge the shards into a new folder",
                    dir.display(),
                    out.display(),
                    other.name,
                    ours.name
                );
            }
        }
        Ok(())
    }

    /// The shards merged (now or by an earlier merge whose folder is gone); None where a
    /// vanished folder's shard was never recorded.
    fn shards(&self) -> Option<Vec<Shard>> {
        let mut shards: Vec<Shard> = self.folders.iter().filter_map(|(_, s)| *s).collect();
        for (_, shard) in &self.vanished {
            shards.push((*shard)?);
        }
        Some(shards)
    }

    /// The folders are shards of one split, each once: a whole run beside shards, shards of
    /// `--shard K/3` beside ones of `K/4` (old folders next to new ones under one glob), or
    /// two folders of one shard would put a class in the summary twice, with two winners.
    fn check_split(&self) -> Result<()> {
        let Some((first_dir, first)) = self.folders.first() else {
            return Ok(());
        };
        if self.folders.len() == 1 && self.vanished.is_empty() {
            return Ok(());
        }
        let whole = |dir: &Path| {
            anyhow::anyhow!(
                "{} ran the whole campaign, not a shard: merge the shards of one `mats tune \
                 --shard K/N` split, or use that folder as it is",
                dir.display()
            )
        };
        let first = first.ok_or_else(|| whole(first_dir))?;
        for (i, (dir, shard)) in self.folders.iter().enumerate().skip(1) {
            let shard = shard.ok_or_else(|| whole(dir))?;
            if shard.count != first.count {
                bail!(
                    "{} ran shard {shard} and {} shard {first}: merge the shards of one \
                     split (the same N), into a folder of their own",
                    dir.display(),
                    first_dir.display()
                );
            }
            if let Some((other, _)) = self.folders[..i]
                .iter()
                .find(|(_, s)| s.is_some_and(|s| s.index == shard.index))
            {
                bail!(
                    "{} and {} both ran shard {shard}; merge one of them",
                    other.display(),
                    dir.display()
                );
            }
        }
        Ok(())
    }
}

/// Every folder (and the output, where it holds a store) holds one and the same campaign:
/// the merged summary takes its verdicts from the folders, so another campaign's classes
/// would be exported as this one's. (A same-named campaign from another file is refused by
/// the store's merge, which compares the settings.)
///
/// Returns each named folder's share of the campaign, read from the store it opened
/// ([`shard_of`]'s answer).
fn check_one_campaign(args: &MergeArgs) -> Result<Vec<Option<Shard>>> {
    let mut seen: Option<(String, &Path)> = None;
    let mut shards = Vec::new();
    let output = args.out.join(STORE_FILE);
    let out_dir = [args.out.as_path()];
    let folders = args
        .dirs
        .iter()
        .map(|d| d.as_path())
        .chain(out_dir.into_iter().filter(|_| output.is_file()));
    for (k, dir) in folders.enumerate() {
        let store = results::Store::open_existing(dir.join(STORE_FILE))?;
        let campaigns = store.campaigns()?;
        if k < args.dirs.len() {
            shards.push(shard_in(&campaigns));
        }
        for campaign in campaigns {
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
    Ok(shards)
}

/// `dir` as an absolute path (canonical where it exists), as a merge's summary records it.
fn absolute(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The merged campaign's `summary.json`: the classes of OUT's earlier summary (an earlier
/// merge), each replaced by the shard that tuned it where that shard is merged now; trial
/// counts and device seconds summed over the shards whose summaries were read, the longest
/// wall time (shards run side by side). `mats export` reads the classes' verdicts from it, so
/// it also says what did not finish: a shard without a summary (killed), one its user stopped,
/// a shard of the campaign that no merge was given.
fn write_summary(out: &Path, sources: Sources) -> Result<()> {
    let path = out.join("summary.json");
    let mut merged = sources.earlier.clone();
    let mut classes = sources
        .earlier
        .as_ref()
        .map(|e| e.classes.clone())
        .unwrap_or_default();
    let mut unfinished = Vec::new();
    let (mut trials, mut device_s, mut wall_s) = (0u64, 0.0f64, 0.0f64);
    // Summed where every shard says it; a median or a share of one machine's time does not
    // add up over shards, so the merged summary leaves those out.
    let mut production_runs = Some(0.0f64);
    let mut stopped = None;
    for (dir, _) in &sources.folders {
        let shard_path = dir.join("summary.json");
        if !shard_path.exists() {
            unfinished.push(format!(
                "{} was killed (it has no summary.json)",
                dir.display()
            ));
            continue;
        }
        let s = engine::tune::read_summary(&shard_path)?;
        if engine::tune::budget::stopped_by_user(&s) {
            unfinished.push(format!(
                "{} was {}",
                dir.display(),
                engine::tune::budget::STOPPED_BY_USER
            ));
        } else if stopped.is_none() {
            stopped.clone_from(&s.stopped); // a budget's end, which a finished run reports
        }
        for class in &s.classes {
            classes.retain(|c| c.class != class.class);
            classes.push(class.clone());
        }
        trials += s.new_trials;
        device_s += s.device_seconds;
        production_runs = production_runs.zip(s.production_runs).map(|(a, b)| a + b);
        wall_s = wall_s.max(s.wall_s);
        merged.get_or_insert(s);
    }
    // A folder gone since the earlier merge keeps what that merge said of it (killed,
    // stopped): its classes stand as they were merged, unfinished ones included.
    let earlier_unfinished = sources
        .earlier
        .as_ref()
        .map(|e| e.unfinished_shards.clone())
        .unwrap_or_default();
    for (dir, _) in &sources.vanished {
        let about = format!("{} ", dir.display());
        unfinished.extend(
            earlier_unfinished
                .iter()
                .filter(|u| u.starts_with(&about))
                .cloned(),
        );
    }
    // A shard of a split into more shards than classes has no class to tune (its `mats tune`
    // says so and writes nothing): it is not missing.
    let classes_in_store = class_count(&out.join(STORE_FILE))?;
    match sources.shards() {
        None => {
            // A gone folder whose shard an older merge never recorded: the shards that merge
            // found missing, and still are, stay missing.
            let present: Vec<Shard> = sources.folders.iter().filter_map(|(_, s)| *s).collect();
            unfinished.extend(
                earlier_unfinished
                    .iter()
                    .filter(|u| {
                        u.strip_prefix("shard ")
                            .and_then(|u| u.strip_suffix(" was not merged"))
                            .and_then(|s| s.parse::<Shard>().ok())
                            .is_some_and(|s| !present.contains(&s))
                    })
                    .cloned(),
            );
        }
        Some(shards) => {
            if let Some(count) = shards.first().map(|s| s.count) {
                for index in (1..=count).filter(|k| !shards.iter().any(|s| s.index == *k)) {
                    let shard = Shard { index, count };
                    if (0..classes_in_store).any(|position| shard.takes(position)) {
                        unfinished.push(format!("shard {shard} was not merged"));
                    }
                }
            }
        }
    }
    // No shard finished (each killed, say by Slurm's time limit): the summary still says
    // what was merged and what did not finish, so the folder stays a merge.
    let mut summary = match merged {
        Some(summary) => summary,
        None => {
            let store = results::Store::open_existing(out.join(STORE_FILE))?;
            let campaign = store.campaigns()?.into_iter().next();
            let settings = campaign
                .as_ref()
                .map(|c| results::CampaignSettings::from_json(&c.settings))
                .unwrap_or_default();
            results::TuneSummary::of_classes(
                campaign.map(|c| c.name).unwrap_or_default(),
                out.to_path_buf(),
                settings.backend.unwrap_or_default(),
                settings.device.unwrap_or_default(),
                Vec::new(),
            )
        }
    };
    classes.sort_by(|a, b| a.class.cmp(&b.class));
    summary.classes = classes;
    summary.new_trials = trials;
    summary.device_seconds = device_s;
    summary.production_runs = production_runs;
    summary.median_trial_overhead_s = None;
    summary.gpu_busy_share = None;
    summary.wall_s = wall_s;
    summary.output = out.to_path_buf();
    let all = sources.folders.iter().chain(&sources.vanished);
    summary.merged_from = all.clone().map(|(d, _)| d.clone()).collect();
    // Recorded only where every folder's shard is known: the two lists go by position.
    summary.merged_shards = all
        .map(|(_, s)| s.map(|s| s.to_string()))
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    // A user's stop is an unfinished shard's (above), not the merged campaign's own.
    summary.stopped = stopped;
    summary.unfinished_shards = unfinished;
    results::write_json_atomically(&path, &summary).map_err(anyhow::Error::msg)
}

/// OUT may be new, empty or an earlier merge's folder (merging again adds what is new); a
/// shard's own folder would lose its shard (its `--resume` and later merges refused), and a
/// whole run's folder would mix two runs of the campaign in one store.
fn check_output_folder(out: &Path) -> Result<()> {
    if !out.join(STORE_FILE).is_file() {
        return Ok(());
    }
    if let Some(shard) = shard_of(out)? {
        bail!(
            "{} is the folder of shard {shard} (`mats tune --shard {shard}`): merging into it \
             would make it no shard; merge into a folder of its own (mats merge OUT SHARDS...)",
            out.display()
        );
    }
    if !engine::tune::is_merged_folder(out) {
        bail!(
            "{} holds a run of the whole campaign, not an earlier merge: merging shards into \
             it would mix two runs in one store; merge into a folder of its own",
            out.display()
        );
    }
    Ok(())
}

/// The share of the campaign a shard folder ran (`mats tune --shard K/N`), as its store
/// recorded it; None for a folder that ran the whole campaign.
fn shard_of(dir: &Path) -> Result<Option<Shard>> {
    let store = results::Store::open_existing(dir.join(STORE_FILE))?;
    Ok(shard_in(&store.campaigns()?))
}

/// How many classes the campaign in a merged store has: every shard stores every instance,
/// each with its class (a holdout with the class it is compared in).
fn class_count(store: &Path) -> Result<usize> {
    let store = results::Store::open_existing(store)?;
    let mut classes = std::collections::BTreeSet::new();
    for campaign in store.campaigns()? {
        for instance in store.instances(campaign.id)? {
            classes.insert(instance.record.class);
        }
    }
    Ok(classes.len())
}

/// The shard a store's campaign recorded.
fn shard_in(campaigns: &[results::CampaignRow]) -> Option<Shard> {
    campaigns
        .first()
        .and_then(|c| c.settings["shard"].as_str().and_then(|s| s.parse().ok()))
}
