//! A campaign resolved once into the typed plan the engine consumes: its searches and
//! objectives, what a production run is and its seeds, the budgets (phases), the backend and
//! its setup (space, baseline, default), measurement settings, devices, the output folder and
//! the instances with their classes. Every derivation and check of the campaign file happens
//! in [`CampaignPlan::resolve`], with errors naming the file and key; nothing after it reads
//! the file again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use measure::MeasureSettings;
use search::{Objective, Strategy};

use super::config::{self, BackendChoice, BudgetConfig, CampaignFile, RacingConfig, RunMode};
use super::instances::{self, CampaignInstance};
use super::phases::{self, Phase};
use super::setup::{self, BackendKind, Setup};
use super::shard::Shard;

/// The store's file name inside a campaign's output folder.
pub const STORE_FILE: &str = "results.sqlite";

/// Instance indices per class name.
pub type ClassMembers = BTreeMap<String, Vec<usize>>;

/// A campaign's instances, loaded, and how they form classes.
#[derive(Debug, Clone)]
pub struct InstanceSet {
    /// The searched instances (those some class keeps) first, then the holdouts.
    pub all: Vec<CampaignInstance>,
    /// Members of each class (indices into `all`); a shard keeps only its classes.
    pub classes: ClassMembers,
    /// Held-out instances of each class (indices into `all`): stored and measured, never
    /// searched; they join their class only for the comparison after the search.
    pub holdouts: ClassMembers,
}

/// Whether resolving may write into the campaign's output folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folder {
    /// A check (`mats tune --check`, the daemon's submit): nothing is written. The instances
    /// of a campaign that generates them are left unresolved, since they are written only
    /// into the output folder.
    Untouched,
    /// A run: creates the folder, takes its lock (held by the plan: one writer per folder,
    /// before `--fresh` may delete anything) and writes generated instances into it.
    Write,
}

/// How to resolve a campaign: on what machine, into which folder, which share of it.
#[derive(Debug, Clone)]
pub struct Resolve {
    /// Whether the GPU setup is usable (`backend = "auto"` picks it when present).
    pub gpu_present: bool,
    /// `--out`: overrides the campaign's output folder.
    pub out: Option<PathBuf>,
    /// `--shard K/N`: tune only this share of the classes.
    pub shard: Option<Shard>,
    pub folder: Folder,
}

impl Resolve {
    /// As `mats tune` runs it on this machine.
    pub fn run(out: Option<PathBuf>, shard: Option<Shard>) -> Resolve {
        Resolve {
            gpu_present: setup::gpu_present(),
            out,
            shard,
            folder: Folder::Write,
        }
    }

    /// As `mats tune` would run it on this machine, writing nothing.
    pub fn check(out: Option<PathBuf>) -> Resolve {
        Resolve {
            gpu_present: setup::gpu_present(),
            out,
            shard: None,
            folder: Folder::Untouched,
        }
    }
}

/// A campaign resolved: everything the engine needs, derived and checked once.
#[derive(Debug)]
pub struct CampaignPlan {
    /// Identifies the campaign in the store.
    pub name: String,
    /// The campaign file: where it was read (messages, the recorded `campaign_file`) and its
    /// text (the store keeps it).
    pub path: PathBuf,
    pub text: String,
    /// Seed of the strategies and of every production run.
    pub seed: u64,
    /// Every search of a class, in order, with what it minimises.
    pub searches: Vec<(Strategy, Objective)>,
    /// What a production run is (of the first budget when there are several).
    pub mode: RunMode,
    /// Seeds of the production runs on one instance.
    pub seeds: Vec<u64>,
    /// `[run] budgets_s`, checked; empty when the campaign names one budget or none.
    pub budgets_s: Vec<f64>,
    /// `[run] later_seeds` (only with `budgets_s`).
    pub later_seeds: Option<u32>,
    /// One tuning of every class per budget (one phase without `budgets_s`).
    pub phases: Vec<Phase>,
    /// When to stop.
    pub budget: BudgetConfig,
    pub racing: RacingConfig,
    /// The quality guard's margin, percentage points of gap.
    pub margin_percent: f64,
    pub measurement: MeasureSettings,
    pub backend: BackendKind,
    pub setup: Setup,
    /// GPU ordinals to measure on.
    pub devices: Vec<usize>,
    pub shard: Option<Shard>,
    pub out_dir: PathBuf,
    pub store_path: PathBuf,
    /// `None` only from a check ([`Folder::Untouched`]) of a campaign that generates its
    /// instances.
    pub instances: Option<InstanceSet>,
    /// Held while the plan lives ([`Folder::Write`]).
    _folder_lock: Option<results::FolderLock>,
}

impl CampaignPlan {
    /// Derives and checks everything the engine needs from `file`, once; see [`Folder`] for
    /// what it writes.
    pub fn resolve(file: &CampaignFile, how: &Resolve) -> Result<CampaignPlan> {
        let settled = settle(file, how.gpu_present)?;
        let out_dir = output_dir(file, how.out.as_deref(), how.shard);
        // Said by --check too, not first by the run.
        if out_dir.exists() && !out_dir.is_dir() {
            bail!(
                "the output folder {} is not a folder; give --out a folder (new or a \
                 campaign's)",
                out_dir.display()
            );
        }
        let (instances, folder_lock) = match how.folder {
            Folder::Write => {
                let existed = out_dir.exists();
                std::fs::create_dir_all(&out_dir).with_context(|| {
                    format!("cannot create the output folder {}", out_dir.display())
                })?;
                let lock = results::FolderLock::acquire(&out_dir)?;
                match instance_set(file, &out_dir, how.shard) {
                    Ok(set) => (Some(set), Some(lock)),
                    Err(e) => {
                        // A refused run leaves no folder behind that it made itself (only
                        // its lock and instances it generated in this call are in it).
                        drop(lock);
                        if !existed {
                            let _ = std::fs::remove_dir_all(&out_dir);
                        }
                        return Err(e);
                    }
                }
            }
            Folder::Untouched if instances::generates(file) => {
                // Generated where nobody looks, so that the check sees every instance the
                // run will (a generator of another family, a size the space cannot run);
                // the plan keeps none of them: the folder goes with the check.
                let scratch = tempfile::tempdir()
                    .context("cannot create a scratch folder to check the generated instances")?;
                let set = instance_set(file, scratch.path(), how.shard)?;
                check_best_known(file, &settled.mode, &set)?;
                check_space_family(file, &settled, &set)?;
                (None, None)
            }
            Folder::Untouched => (Some(instance_set(file, Path::new("."), how.shard)?), None),
        };
        if let Some(set) = &instances {
            check_best_known(file, &settled.mode, set)?;
            check_space_family(file, &settled, set)?;
        }
        let c = &file.config;
        Ok(CampaignPlan {
            name: c.name.clone(),
            path: file.path.clone(),
            text: file.text.clone(),
            seed: c.seed,
            searches: settled.searches,
            mode: settled.mode,
            seeds: settled.seeds,
            budgets_s: settled.budgets_s,
            later_seeds: c.run.later_seeds,
            phases: settled.phases,
            budget: c.budget.clone(),
            racing: c.racing.clone(),
            margin_percent: c.quality.margin_percent,
            measurement: c.measurement.clone().unwrap_or_default(),
            backend: settled.backend,
            setup: settled.setup,
            devices: c.devices.clone(),
            shard: how.shard,
            store_path: out_dir.join(STORE_FILE),
            out_dir,
            instances,
            _folder_lock: folder_lock,
        })
    }

    /// An error about `key`, naming the campaign file and the key's line.
    pub fn error_at(&self, key: &str, message: impl std::fmt::Display) -> anyhow::Error {
        config::error_at(&self.path, &self.text, key, message)
    }

    /// The objectives of the searches, in order (`time gap@budget ...`).
    pub fn objectives_label(&self) -> String {
        let names: Vec<String> = self.searches.iter().map(|(_, o)| o.to_string()).collect();
        names.join(" ")
    }

    /// The strategies of the searches, in order.
    pub fn strategies_label(&self) -> String {
        let names: Vec<&str> = self.searches.iter().map(|(s, _)| s.name()).collect();
        names.join(" ")
    }

    /// What a device lock's holder is, for the messages of processes that wait for it.
    pub fn lock_note(&self) -> String {
        format!("mats tune {:?} into {}", self.name, self.out_dir.display())
    }
}

/// Checks a campaign as `mats tune` would on this machine before touching its folder. The
/// daemon calls it before queueing, so errors reach the submitter at once.
pub fn check(file: &CampaignFile) -> Result<CampaignPlan> {
    CampaignPlan::resolve(file, &Resolve::check(None))
}

/// [`check`] as on a machine with a GPU when the campaign has a `[gpu]` table (`mats tune
/// --check`: a GPU campaign is checked on a laptop before it goes to the GPU machine); the
/// plan's backend is the one it was checked for. With `shard`, the shard's own share is
/// checked too (a shard without a class fails its run).
pub fn check_anywhere(
    file: &CampaignFile,
    out: Option<PathBuf>,
    shard: Option<Shard>,
) -> Result<CampaignPlan> {
    let gpu = file.config.gpu.is_some() && file.config.backend != BackendChoice::Cpu;
    // Probed only where the campaign does not settle it (the probe opens the driver).
    let how = Resolve {
        gpu_present: gpu || setup::gpu_present(),
        out,
        shard,
        folder: Folder::Untouched,
    };
    CampaignPlan::resolve(file, &how)
}

/// The settings part of a plan: everything but the folder and the instances.
struct Settled {
    searches: Vec<(Strategy, Objective)>,
    mode: RunMode,
    seeds: Vec<u64>,
    budgets_s: Vec<f64>,
    phases: Vec<Phase>,
    backend: BackendKind,
    setup: Setup,
}

/// Objectives, run mode, budgets, backend, space, baseline and default point, checked
/// against each other.
fn settle(file: &CampaignFile, gpu_present: bool) -> Result<Settled> {
    let searches = file.searches()?;
    let mode = file.run_mode()?;
    let seeds = file.run_seeds()?;
    let phases = phases::phases(file)?;
    let (backend, config) = setup::choose(file, gpu_present)?;
    // The table this machine does not use is checked too: a campaign whose `auto` backend
    // resolved to the CPU here used to pass with a broken [gpu] table, which then failed on
    // the GPU machine (or in the daemon's child) instead of at submit.
    for (other, unused) in [("gpu", &file.config.gpu), ("cpu", &file.config.cpu)] {
        if let Some(unused) = unused.as_ref().filter(|_| other != backend.name()) {
            setup::resolve(file, other, unused)?;
        }
    }
    let setup = setup::resolve(file, backend.name(), config)?;
    let gpu_metric = |o: &Objective| {
        super::metrics(*o)
            .iter()
            .any(|m| !matches!(m, super::Metric::Time | super::Metric::Gap))
    };
    let on_gpu_only = searches.iter().position(|(_, o)| gpu_metric(o));
    if let (BackendKind::Cpu, Some(i)) = (backend, on_gpu_only) {
        // `searches` lists the campaign's own search first where it has one.
        let main = usize::from(file.main_strategy()?.is_some());
        let key = match i.checked_sub(main) {
            Some(k) => file.search_objective(k).1,
            None => "objective".to_string(),
        };
        return Err(file.error_at(
            &key,
            "power and energy are measured on GPUs only; a CPU campaign optimises time, \
             gap@budget or time-to-target",
        ));
    }
    if mode == RunMode::FixedWork {
        setup::check_same_work(&setup.space).map_err(|e| file.error_at("objective", e))?;
    }
    file.check_strategies(&searches)?;
    Ok(Settled {
        searches,
        mode,
        seeds,
        budgets_s: file.budgets()?,
        phases,
        backend,
        setup,
    })
}

/// A target gap needs a best-known value: a time-to-target campaign on an instance without
/// one failed trial by trial, after `--check` and `mats submit` had passed it. (`gap@budget`
/// does not: where no value is known its gaps are to the baseline's best objective.)
/// The space tunes the family the instances are of: a QAP space over TSP instances passed
/// its check and then failed every trial ("unknown tsp algorithm").
fn check_space_family(file: &CampaignFile, settled: &Settled, set: &InstanceSet) -> Result<()> {
    let (Some(space), Some(first)) = (settled.setup.space.family(), set.all.first()) else {
        return Ok(());
    };
    let instances = first.instance.family().name();
    if space != instances {
        let table = match settled.backend {
            BackendKind::Gpu => "gpu",
            BackendKind::Cpu => "cpu",
        };
        return Err(file.error_at(
            &format!("{table}.space"),
            format!(
                "{} is a space of {space}, but the campaign's instances are {instances} ({}); \
                 use a {instances} space (spaces/README.md lists them)",
                settled.setup.space_path.display(),
                first.record.name
            ),
        ));
    }
    Ok(())
}

fn check_best_known(file: &CampaignFile, mode: &RunMode, set: &InstanceSet) -> Result<()> {
    if matches!(mode, RunMode::FixedWork) {
        return Ok(());
    }
    // A gap is a percentage of the best-known value: of 0 it ranks nothing (esc16f).
    let zero: Vec<&str> = set
        .all
        .iter()
        .filter(|i| i.record.best_known == Some(0))
        .map(|i| i.record.name.as_str())
        .collect();
    if !zero.is_empty() {
        return Err(file.error_at(
            "objective",
            format!(
                "a gap is a percentage of the best-known value, which is 0 for {}: no gap \
                 ranks points there; leave {} out of a quality campaign (a fixed-work \
                 objective can take {})",
                zero.join(", "),
                if zero.len() == 1 { "it" } else { "them" },
                if zero.len() == 1 { "it" } else { "them" },
            ),
        ));
    }
    if !matches!(mode, RunMode::Target { .. }) {
        return Ok(());
    }
    let missing: Vec<&str> = set
        .all
        .iter()
        .filter(|i| i.record.best_known.is_none())
        .map(|i| i.record.name.as_str())
        .collect();
    if !missing.is_empty() {
        let mut names = missing
            .iter()
            .take(5)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if missing.len() > 5 {
            names.push_str(", ...");
        }
        return Err(file.error_at(
            "objective",
            format!(
                "a target gap is a gap to a best-known value, and {} of the campaign's \
                 instances have none ({names}); give them one in a table of your own \
                 (`[instances] bks = [\"FILE.csv\"]`; `mats instance reference` makes values for \
                 HW/SW graphs), or tune them with gap@budget",
                missing.len()
            ),
        ));
    }
    Ok(())
}

/// The output folder: `--out`, else the campaign's `output` (relative to its file), else
/// `runs/<name>`; a shard without `--out` writes into `shard-K-of-N` inside the campaign's
/// folder (which `mats merge` can then take as its output).
fn output_dir(file: &CampaignFile, out: Option<&Path>, shard: Option<Shard>) -> PathBuf {
    let campaign_dir = |out: Option<&Path>| match (out, &file.config.output) {
        (Some(o), _) => o.to_path_buf(),
        (None, Some(o)) => file.resolve(o),
        (None, None) => PathBuf::from("runs").join(&file.config.name),
    };
    match (out, shard) {
        (None, Some(s)) => campaign_dir(None).join(format!("shard-{}-of-{}", s.index, s.count)),
        _ => campaign_dir(out),
    }
}

/// The campaign's instances (searched ones first, then holdouts), its classes (a shard keeps
/// only its own) and each class's holdouts. Every shard stores every instance (merge checks
/// they agree); it searches only its classes.
fn instance_set(file: &CampaignFile, out_dir: &Path, shard: Option<Shard>) -> Result<InstanceSet> {
    let mut bks = solvers::bks::BestKnown::embedded();
    for table in &file.config.instances.bks {
        bks.add_file(&file.resolve(std::path::Path::new(table)))
            .map_err(|e| file.error_at("bks", e))?;
    }
    let mut resolved = instances::resolve(file, out_dir, &bks)?;
    let held = instances::resolve_holdouts(file, &resolved, out_dir, &bks)?;
    let classes = instances::classes(file, &resolved, &held)?;
    // Every holdout's class is decided on the whole campaign, before a shard keeps its own.
    let held_in = held
        .iter()
        .map(|h| instances::holdout_class(file, h, &classes))
        .collect::<Result<Vec<_>>>()?;
    instances::check_holdout_classes(file, &held, &held_in, &classes)?;
    // From here an instance's class is the campaign's (a class table's name, else its feature
    // class): the store, `mats results`, the report and the tuner's own lookups all read it.
    for (class, members) in &classes {
        for &i in members {
            resolved[i].record.class = class.clone();
        }
    }
    // Only the instances the classes keep (per_class may drop some) enter the store.
    let (mut all, mut classes) = keep_members(resolved, classes);
    if let Some(shard) = shard {
        let mut position = 0;
        classes.retain(|_, _| {
            position += 1;
            shard.takes(position - 1)
        });
        if classes.is_empty() {
            return Err(EmptyShard {
                shard,
                classes: position,
                campaign: file.path.clone(),
            }
            .into());
        }
    }
    let mut holdouts = ClassMembers::new();
    for (mut h, class) in held.into_iter().zip(held_in) {
        h.record.class = class.clone();
        holdouts.entry(class).or_default().push(all.len());
        all.push(h);
    }
    Ok(InstanceSet {
        all,
        classes,
        holdouts,
    })
}

/// A shard of a split into more shards than the campaign has classes: it has nothing to tune.
/// `mats tune` says so and succeeds (a Slurm array's job that waits for every task still
/// runs), and `mats merge` does not wait for it.
#[derive(Debug)]
pub struct EmptyShard {
    pub shard: Shard,
    pub classes: usize,
    pub campaign: PathBuf,
}

impl std::fmt::Display for EmptyShard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "shard {} of campaign {} has no class to tune ({} classes over {} shards): \
             nothing to do; `mats merge` does not need it",
            self.shard,
            self.campaign.display(),
            self.classes,
            self.shard.count
        )
    }
}

impl std::error::Error for EmptyShard {}

/// Drops the instances no class keeps and renumbers the members.
fn keep_members(
    instances: Vec<CampaignInstance>,
    classes: ClassMembers,
) -> (Vec<CampaignInstance>, ClassMembers) {
    let mut used: Vec<usize> = classes.values().flatten().copied().collect();
    used.sort_unstable();
    let new_index = |old: usize| used.binary_search(&old).expect("a member is used");
    let classes = classes
        .into_iter()
        .map(|(c, members)| (c, members.into_iter().map(new_index).collect()))
        .collect();
    let instances = instances
        .into_iter()
        .enumerate()
        .filter(|(i, _)| used.binary_search(i).is_ok())
        .map(|(_, inst)| inst)
        .collect();
    (instances, classes)
}

#[cfg(test)]
mod tests;
