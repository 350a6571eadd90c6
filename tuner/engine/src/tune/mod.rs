//! `mats tune`: runs a campaign. For each class: the baseline point, then the strategy's
//! search, then (with several classes) every class's best point on every other class. Trials
//! go to the store as they happen, so an interrupted campaign resumes where it stopped.

pub mod budget;
mod compile;
mod device_pool;
pub mod evaluator;
pub mod front;
mod pipeline;
mod progress;
pub use progress::ProgressMode;
pub mod settings;

use search::MetricValue as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use results::{Point, Store, TrialRow};

use crate::campaign::config::{RacingConfig, RunMode};
use crate::campaign::instances::{self, CampaignInstance};
use crate::campaign::plan::{CampaignPlan, ClassMembers};
use crate::campaign::setup::BackendKind;
use crate::campaign::Objective;
use crate::runner::cpu::CpuSettings;
use crate::runner::gpu::{GpuSettings, GpuWorker};
use crate::runner::{Realised, TrialResult};
use budget::Budget;
use evaluator::{Baseline, ClassEvaluator, TrialClock};
use measure::device_lock::{self, DeviceLock};
use search::space::Space;

pub use crate::campaign::phases;
pub use crate::campaign::plan::{check, check_anywhere, STORE_FILE};
pub use crate::campaign::setup::stored_space;
pub use crate::campaign::shard::Shard;

/// How `mats tune` was asked to treat an existing output folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartMode {
    /// Refuse when the folder already holds results of this campaign.
    New,
    /// Continue: trials still `started` become `crashed`, finished ones are reused.
    Resume,
    /// Delete the old store first.
    Fresh,
}

/// Where measurements happen.
pub enum Backend {
    Cpu(CpuSettings),
    Gpu {
        workers: Vec<GpuWorker>,
        settings: GpuSettings,
        /// NVRTC compiles ahead of the GPUs; it knows their architecture.
        compiles: Box<compile::CompilePool>,
    },
}

impl Backend {
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Cpu(_) => "cpu",
            Backend::Gpu { .. } => "gpu",
        }
    }
}

/// A trial to run: a point realised for one instance.
#[derive(Debug, Clone)]
pub struct TrialJob {
    pub point_id: i64,
    pub instance_id: i64,
    /// Index into the campaign's instances.
    pub instance: usize,
    /// The production run's seed.
    pub seed: u64,
    pub realised: Result<Realised, String>,
}

/// Campaign-wide state shared by the class evaluators.
pub struct Tuning {
    pub store: Store,
    pub campaign_id: i64,
    pub name: String,
    pub instances: Vec<CampaignInstance>,
    pub instance_ids: Vec<i64>,
    pub space: Arc<Space>,
    pub backend: Backend,
    pub budget: Budget,
    pub margin_percent: f64,
    pub max_attempts: u32,
    pub devices: Vec<String>,
    pub clock: TrialClock,
    /// What a production run is, and the seeds of every (point, instance).
    pub mode: RunMode,
    pub seeds: Vec<u64>,
    /// Racing: drop a candidate once it is clearly worse than the incumbent on the pairs
    /// measured so far.
    pub racing: RacingConfig,
    progress: progress::Progress,
    /// The (fake) device lock CPU trials take when `MATS_CPU_DEVICE_LOCK` asks for one.
    pub cpu_lock: Option<DeviceLock>,
}

impl Tuning {
    /// The finished trial of this point on this instance on any of the campaign's devices.
    pub fn cached(&self, point_id: i64, instance_id: i64, seed: u64) -> Result<Option<TrialRow>> {
        for device in &self.devices {
            if let Some(row) = self.store.cached(
                self.campaign_id,
                point_id,
                instance_id,
                seed,
                device,
                self.max_attempts,
            )? {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }

    pub fn realise(&self, point: &Point) -> Result<Realised, String> {
        self.space
            .realise(point)
            .map(Realised::from)
            .map_err(|e| e.to_string())
    }

    /// Runs trials in order (the GPU pipeline compiles ahead); `None` for trials not started
    /// because the budget ran out or the user stopped.
    pub fn run_trials(
        &mut self,
        jobs: &[TrialJob],
        label: &str,
    ) -> Result<Vec<Option<TrialResult>>> {
        pipeline::run(self, jobs, label)
    }

    /// Trials measured at once: one per GPU of the campaign (the CPU backend runs one at a
    /// time).
    pub fn measuring_slots(&self) -> usize {
        match &self.backend {
            Backend::Gpu { workers, .. } => workers.len().max(1),
            Backend::Cpu(_) => 1,
        }
    }

    /// Measures in one batch the trials of `work` (each point on its instances, under the
    /// campaign's seeds) that the store does not hold yet, so that the evaluations that follow
    /// (a class at a time, each too small to keep several GPUs busy) find them there. Only
    /// with several GPUs: on one, the evaluations measure the same trials themselves.
    pub fn prefetch(&mut self, work: &[(Point, Vec<usize>)], label: &str) -> Result<()> {
        if self.measuring_slots() < 2 {
            return Ok(());
        }
        let jobs = self.missing_trials(work)?;
        if !jobs.is_empty() {
            self.run_trials(&jobs, label)?;
        }
        Ok(())
    }

    /// The trials of `work` under the campaign's seeds that the store lacks, each once.
    fn missing_trials(&mut self, work: &[(Point, Vec<usize>)]) -> Result<Vec<TrialJob>> {
        let seeds = self.seeds.clone();
        let mut jobs: Vec<TrialJob> = Vec::new();
        for (point, members) in work {
            let point_id = self.store.point(self.campaign_id, point)?;
            let realised = self.realise(point);
            for &seed in &seeds {
                for &m in members {
                    let instance_id = self.instance_ids[m];
                    let listed = jobs.iter().any(|j| {
                        (j.point_id, j.instance_id, j.seed) == (point_id, instance_id, seed)
                    });
                    if !listed && self.cached(point_id, instance_id, seed)?.is_none() {
                        jobs.push(TrialJob {
                            point_id,
                            instance_id,
                            instance: m,
                            seed,
                            realised: realised.clone(),
                        });
                    }
                }
            }
        }
        Ok(jobs)
    }

    /// The GPU compile pool (None on the CPU).
    fn compiles(&mut self) -> Option<&mut compile::CompilePool> {
        match &mut self.backend {
            Backend::Gpu { compiles, .. } => Some(compiles),
            Backend::Cpu(_) => None,
        }
    }

    /// Starts compiling the kernels of the incumbent's neighbours: a local search asks for
    /// them next.
    pub fn speculate_around(&mut self, point: &Point, members: &[usize]) {
        if !matches!(self.backend, Backend::Gpu { .. }) {
            return;
        }
        let neighbours = search::SearchSpace::neighbours(self.space.as_ref(), point, &[]);
        pipeline::speculate(self, &neighbours, members);
    }

    /// Makes every production run from here on one of `phase` (its budget and seeds).
    pub fn set_phase(&mut self, phase: &phases::Phase, campaign: RunMode) {
        self.mode = phase.mode(campaign);
        self.seeds = phase.seeds.clone();
        match &mut self.backend {
            Backend::Cpu(settings) => settings.mode = self.mode,
            Backend::Gpu { settings, .. } => settings.mode = self.mode,
        }
    }

    pub fn progress_note(
        &self,
        class: &str,
        best: Option<(crate::campaign::Metric, f64)>,
        baseline: Option<&Baseline>,
    ) {
        self.progress
            .note(class, best, baseline, self.budget.new_trials);
    }
}

/// Options of `mats tune` beyond the campaign's plan (which holds `--out` and `--shard`).
#[derive(Debug, Clone)]
pub struct TuneOptions {
    pub mode: StartMode,
    /// The `mats` executable that serves as the measuring worker.
    pub worker_exe: PathBuf,
    /// How progress is shown: a bar on a terminal, plain lines in a log, nothing in tests.
    pub progress: progress::ProgressMode,
    /// Fail at the start when another process holds one of the campaign's devices, instead
    /// of taking turns with it trial by trial.
    pub no_wait: bool,
}

pub use results::{ClassSummary, TuneSummary};

/// Whether a campaign folder holds a merge of shards (`mats merge`): its summary says which
/// folders it joined.
pub fn is_merged_folder(dir: &Path) -> bool {
    let summary = dir.join("summary.json");
    summary.is_file() && read_summary(&summary).is_ok_and(|s| !s.merged_from.is_empty())
}

/// Reads a campaign folder's `summary.json` (capped: a summary is a few KB per class).
pub fn read_summary(path: &Path) -> Result<TuneSummary> {
    let text = solvers::error::read_kind(path, "a summary.json", solvers::error::caps::SUMMARY)?;
    TuneSummary::parse(&text, path).map_err(anyhow::Error::msg)
}

/// Runs a campaign resolved for a run ([`crate::campaign::plan::Resolve::run`]); the plan
/// holds its folder's lock until this returns.
pub fn run(mut plan: CampaignPlan, options: &TuneOptions) -> Result<TuneSummary> {
    let set = plan.instances.take().context(
        "the campaign was resolved for a check (nothing written), not for a run: its \
         generated instances are not loaded",
    )?;
    let (store, existing) = open_store(&plan, options.mode)?;

    let stop = Arc::new(AtomicBool::new(false));
    let budget = Budget::new(&plan.budget, stop.clone());
    let (backend, device_names, device_label) = open_backend(&plan, options)?;
    let settings = campaign_settings(
        &plan,
        &backend,
        &device_label,
        &set.all,
        options,
        existing.as_ref().map(|e| (e, &store)),
    )?;
    let campaign = store.campaign(&plan.name, &plan.text, &settings)?;
    install_ctrl_c(stop, plan.out_dir.join(STORE_FILE), campaign.id);
    store.update_campaign_settings(campaign.id, &settings)?;
    if options.mode == StartMode::Resume {
        let crashed = store.recover(campaign.id)?;
        if crashed > 0 {
            eprintln!(
                "resume: {crashed} trial(s) interrupted by the last run are recorded as crashed"
            );
        }
    }
    let mut instance_ids = Vec::with_capacity(set.all.len());
    for inst in &set.all {
        instance_ids.push(store.instance(campaign.id, &inst.record)?);
    }

    let mut cpu_lock = match &backend {
        Backend::Cpu(_) => device_lock::cpu_lock(&plan.lock_note())?,
        Backend::Gpu { .. } => None,
    };
    if let (Some(lock), true) = (&mut cpu_lock, options.no_wait) {
        lock.check_free()?;
    }
    // Only now, when the run will measure: a resume refused above (a held device, a damaged
    // store) leaves a finished campaign's summary as it was.
    forget_summary(&plan.out_dir)?;
    let progress = progress::Progress::new(options.progress, budget.max_trials());
    let mut t = Tuning {
        store,
        campaign_id: campaign.id,
        margin_percent: plan.margin_percent,
        max_attempts: plan.budget.max_attempts,
        name: plan.name.clone(),
        instances: set.all,
        instance_ids,
        space: Arc::new(plan.setup.space.clone()),
        backend,
        budget,
        devices: device_names,
        clock: TrialClock::default(),
        mode: plan.mode,
        seeds: plan.seeds.clone(),
        racing: plan.racing.clone(),
        progress,
        cpu_lock,
    };

    let (summaries, baselines) = tune_phases(
        &mut t,
        &plan.phases,
        &set.classes,
        &set.holdouts,
        &Starts {
            searches: &plan.searches,
            baseline: &plan.setup.baseline,
            default_point: plan.setup.default_point.as_ref(),
        },
        plan.shard.is_some(),
    )?;
    // The summary's production-run count is in units of the campaign's first budget.
    t.set_phase(&plan.phases[0], plan.mode);
    t.progress.finish();

    write_summary(&t, &plan.out_dir, device_label, summaries, &baselines)
}

/// The measuring backend: the campaign's GPUs (a worker each), or this process's CPU. Returns
/// it, the name of each device trials record and the label of them all.
fn open_backend(
    plan: &CampaignPlan,
    options: &TuneOptions,
) -> Result<(Backend, Vec<String>, String)> {
    if plan.backend == BackendKind::Gpu {
        return open_gpus(plan, options);
    }
    let m = &plan.measurement;
    let name = crate::runner::cpu::device_name();
    let settings = CpuSettings {
        warmup_runs: m.warmup_runs.min(1),
        timed_runs: m.timed_runs.clamp(1, 5),
        iterations: plan.setup.iterations,
        mode: plan.mode,
    };
    Ok((Backend::Cpu(settings), vec![name.clone()], name))
}

/// What every class's search starts from: the searches, the baseline and the default.
struct Starts<'a> {
    searches: &'a [(search::Strategy, Objective)],
    baseline: &'a Point,
    default_point: Option<&'a Point>,
}

/// Tunes every class once per budget (one budget unless `[run] budgets_s`), each budget's
/// search starting from the previous budget's winner, then the cross-class step and the
/// verification; returns the summaries and the baselines measured on the way.
fn tune_phases(
    t: &mut Tuning,
    phases: &[phases::Phase],
    classes: &ClassMembers,
    holdouts: &ClassMembers,
    starts: &Starts,
    sharded: bool,
) -> Result<(Vec<ClassSummary>, BTreeMap<String, Baseline>)> {
    let campaign_mode = t.mode;
    let mut summaries = Vec::new();
    let mut baselines: BTreeMap<String, Baseline> = BTreeMap::new();
    // Per class, the winner of the last budget tuned: the next budget's search starts there.
    let mut previous: BTreeMap<String, Point> = BTreeMap::new();
    for (number, phase) in phases.iter().enumerate() {
        t.set_phase(phase, campaign_mode);
        let named = |m: &ClassMembers| -> ClassMembers {
            m.iter()
                .map(|(c, v)| (phase.class_name(c), v.clone()))
                .collect()
        };
        let (phase_classes, phase_holdouts) = (named(classes), named(holdouts));
        let mut phase_summaries = Vec::new();
        let mut bests: BTreeMap<String, Point> = BTreeMap::new();
        // Every class's baseline and start at once: one class's alone may be a single trial.
        let mut first: Vec<(Point, Vec<usize>)> = Vec::new();
        for (class, members) in classes {
            first.push((starts.baseline.clone(), members.clone()));
            if let Some(p) = previous.get(class).filter(|p| *p != starts.baseline) {
                first.push((p.clone(), members.clone()));
            }
        }
        t.prefetch(&first, "baselines")?;
        for (position, (class, members)) in classes.iter().enumerate() {
            let name = phase.class_name(class);
            let start = previous.get(class).unwrap_or(starts.baseline).clone();
            let (mut s, base) = tune_class(
                t,
                &name,
                members,
                starts.baseline,
                &start,
                starts.searches,
                phase.base_seed,
            )?;
            s.budget_s = phase.budget_s;
            if let Some(b) = base {
                baselines.insert(name.clone(), b);
            }
            if let Some(p) = &s.best_point {
                bests.insert(name.clone(), p.clone());
                previous.insert(class.clone(), p.clone());
            }
            phase_summaries.push(s);
            if t.budget.exhausted() {
                if position + 1 < classes.len() {
                    t.budget.mark_cut(); // classes left unsearched
                }
                break;
            }
        }
        // A shard sees only its classes' winners; the cross-class step needs all of them.
        if classes.len() > 1 && !t.budget.exhausted() && !sharded {
            let metric = first_metric(starts.searches);
            cross_class(t, &phase_classes, &bests, &baselines, metric)?;
        }
        if !t.budget.stopped_by_user() {
            t.budget.verifying = true;
            verify(
                t,
                &phase_classes,
                &phase_holdouts,
                &mut phase_summaries,
                starts.baseline,
                starts.default_point,
                &baselines,
                phase.base_seed,
            )?;
            t.budget.verifying = false;
        }
        // Classes the budget ended before stay in the summary, unsearched, so that the table,
        // summary.json and the report list them instead of losing them.
        let missing: Vec<(String, &Vec<usize>)> = classes
            .iter()
            .map(|(class, members)| (phase.class_name(class), members))
            .filter(|(name, _)| !phase_summaries.iter().any(|s| &s.class == name))
            .collect();
        let unreached: Vec<String> = missing
            .into_iter()
            .map(|(name, members)| {
                let names = members
                    .iter()
                    .map(|&i| t.instances[i].record.name.clone())
                    .collect();
                let label = t.mode.metric_label(first_metric(starts.searches));
                let mut s = ClassSummary::new(&name, names, label);
                s.budget_s = phase.budget_s;
                phase_summaries.push(s);
                name
            })
            .collect();
        if !unreached.is_empty() {
            left_out(
                &t.budget,
                &format!("class(es) {} were searched", unreached.join(", ")),
            );
        }
        summaries.extend(phase_summaries);
        if t.budget.exhausted() || t.budget.stopped_by_user() {
            let untuned: Vec<String> = phases[number + 1..]
                .iter()
                .filter_map(|p| p.budget_s.map(|b| format!("{b} s")))
                .collect();
            if !untuned.is_empty() {
                t.budget.mark_cut();
                left_out(
                    &t.budget,
                    &format!("the budget(s) {} were tuned", untuned.join(", ")),
                );
            }
            break;
        }
    }
    Ok((summaries, baselines))
}

/// Says what the campaign stopped before (`what`: "class(es) ... were searched") and how to
/// reach it: a user's stop is not the budget's doing, so a plain resume reaches it. The
/// `trials` and `wall_s` budgets are spent class by class, in order, and anew by each run
/// of `mats tune`: a search without an end of its own (random, exhaustive over a large
/// space) spends all that is left on the class it is in, resumed or not, so a larger
/// [budget] alone never reaches the next class; `cost_percent` gives each class its share.
fn left_out(budget: &Budget, what: &str) {
    if budget.stopped_by_user() {
        eprintln!("note: the campaign was stopped before {what}; `--resume` reaches them");
    } else {
        eprintln!(
            "note: the campaign's budget ended before {what}: [budget] is spent class by \
             class, in order; give each class's search its share with `cost_percent` in \
             [budget] (or a strategy that ends, such as hill-climbing), then `--resume`"
        );
    }
}

/// The campaign's `summary.json`: per class what the searches found and the verdicts, and
/// the cost of the campaign (trials, wall and device time, the GPUs' busy share).
fn write_summary(
    t: &Tuning,
    out_dir: &Path,
    device_label: String,
    summaries: Vec<ClassSummary>,
    baselines: &BTreeMap<String, Baseline>,
) -> Result<TuneSummary> {
    let wall_s = t.budget.elapsed().as_secs_f64();
    let busy: f64 = match &t.backend {
        Backend::Gpu { workers, .. } => workers.iter().map(|w| w.busy_s).sum(),
        Backend::Cpu(_) => 0.0,
    };
    let summary = TuneSummary {
        campaign: t.name.clone(),
        output: out_dir.to_path_buf(),
        backend: t.backend.name().into(),
        device: device_label,
        classes: summaries,
        new_trials: t.budget.new_trials,
        wall_s,
        // `+ 0.0`: an empty sum of f64 is -0.0, which a resume that measured nothing printed.
        device_seconds: t.clock.busy.iter().map(|d| d.as_secs_f64()).sum::<f64>() + 0.0,
        production_runs: {
            let busy: f64 = t.clock.busy.iter().map(|d| d.as_secs_f64()).sum::<f64>() + 0.0;
            // A budgeted production run lasts its budget; a fixed-work one the baseline's time.
            let runs: Vec<f64> = baselines.values().map(|b| b.time_s).collect();
            t.mode
                .limit_s()
                .or_else(|| {
                    (!runs.is_empty()).then(|| runs.iter().sum::<f64>() / runs.len() as f64)
                })
                .map(|run| busy / run.max(1e-9))
        },
        // Per GPU: the busy seconds of all GPUs over wall time times their number.
        gpu_busy_share: match &t.backend {
            Backend::Gpu { workers, .. } => Some(busy / (wall_s * workers.len() as f64).max(1e-9)),
            Backend::Cpu(_) => None,
        },
        median_trial_overhead_s: t.clock.median_overhead_s(),
        stopped: t.budget.reason().map(str::to_string),
        merged_from: Vec::new(),
        merged_shards: Vec::new(),
        unfinished_shards: Vec::new(),
    };
    results::write_json_atomically(&out_dir.join("summary.json"), &summary)
        .map_err(anyhow::Error::msg)?;
    Ok(summary)
}

/// The metric a class's summary speaks in: its first search's first objective.
fn first_metric(searches: &[(search::Strategy, Objective)]) -> crate::campaign::Metric {
    searches
        .first()
        .map(|(_, o)| crate::campaign::metrics(*o)[0])
        .unwrap_or(crate::campaign::Metric::Time)
}

/// From here the store changes under the folder's `summary.json`, which describes an earlier
/// run: a run that dies before writing its own must leave no summary (export and report then
/// say the campaign is unfinished), not the earlier run's verdicts.
fn forget_summary(out_dir: &Path) -> Result<()> {
    let path = out_dir.join("summary.json");
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove the earlier run's {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// What the campaign records about itself (`results::CampaignSettings`), after refusing a
/// `--resume` (`resume`: the stored campaign and its store) whose measurement settings
/// changed.
fn campaign_settings(
    plan: &CampaignPlan,
    backend: &Backend,
    device_label: &str,
    instances: &[CampaignInstance],
    options: &TuneOptions,
    resume: Option<(&results::CampaignRow, &Store)>,
) -> Result<serde_json::Value> {
    let compiler = match backend {
        Backend::Gpu { compiles, .. } => Some(settings::Compiler {
            arch: compiles.target().arch.0,
            nvrtc: kernels::nvrtc::version()
                .ok()
                .map(|(a, b)| format!("{a}.{b}")),
        }),
        Backend::Cpu(_) => None,
    };
    let measured_under = settings::fingerprint(plan, compiler.as_ref(), instances)?;
    if let (Some((existing, store)), StartMode::Resume) = (resume, options.mode) {
        let changes = settings::changes(&existing.settings, &measured_under);
        if !changes.is_empty() {
            let trials = store.trials(existing.id)?.len();
            bail!(settings::refusal(plan, trials, &changes));
        }
    }
    let setup = &plan.setup;
    let settings = results::CampaignSettings {
        measured_under: Some(measured_under),
        family: instances::family_of(instances).map(|f| f.name().to_string()),
        backend: Some(backend.name().to_string()),
        device: Some(device_label.to_string()),
        objectives: Some(plan.objectives_label()),
        production_runs: Some(plan.budget.production_runs),
        run: Some(plan.mode),
        budgets_s: Some(plan.budgets_s.clone()).filter(|b| b.len() > 1),
        seeds: Some(plan.seeds.clone()),
        baseline: Some(setup.baseline.clone()),
        default: setup.default_point.clone(),
        parameters: Some(parameters(&setup.space)),
        quality_margin_percent: Some(plan.margin_percent),
        // What the trials were measured with: on the CPU its own warm-up and timed runs (the
        // report showed the GPU's defaults, energy window and power sampling included).
        measurement: match backend {
            Backend::Cpu(s) => Some(serde_json::json!({
                "warmup_runs": s.warmup_runs,
                "timed_runs": s.timed_runs,
            })),
            Backend::Gpu { .. } => serde_json::to_value(&plan.measurement).ok(),
        },
        seed: Some(plan.seed),
        space: Some(setup.space_path.display().to_string()),
        campaign_file: Some(
            std::fs::canonicalize(&plan.path)
                .unwrap_or_else(|_| plan.path.clone())
                .display()
                .to_string(),
        ),
        iterations: setup.iterations.map(|i| i as i64),
        arch: compiler.as_ref().map(|c| c.arch),
        driver: (backend.name() == "gpu")
            .then(kernels::gpu::driver_version)
            .and_then(Result::ok)
            .map(|(a, b)| format!("{a}.{b}")),
        nvrtc: compiler.and_then(|c| c.nvrtc),
        optin_shared: match backend {
            Backend::Gpu { compiles, .. } => Some(compiles.target().optin_shared as u64),
            Backend::Cpu(_) => None,
        },
        strategy: Some(plan.strategies_label()),
        shard: plan.shard.map(|s| s.to_string()),
    }
    .to_json();
    Ok(settings)
}

/// The space's parameters and their kinds, as the settings record them.
fn parameters(space: &Space) -> Vec<results::Parameter> {
    search::SearchSpace::parameters(space)
        .into_iter()
        .map(|(name, kind)| results::Parameter {
            name,
            kind: serde_json::to_value(kind)
                .ok()
                .and_then(|k| k.as_str().map(str::to_string))
                .unwrap_or_default(),
        })
        .collect()
}

/// Opens the folder's store: `--fresh` deletes it first; a new run refuses a folder that
/// holds this campaign, `--resume` one that holds another (a renamed campaign). Returns the
/// store and this campaign's row where it exists.
fn open_store(
    plan: &CampaignPlan,
    mode: StartMode,
) -> Result<(Store, Option<results::CampaignRow>)> {
    let store_path = &plan.store_path;
    if mode == StartMode::Fresh && store_path.exists() {
        for suffix in ["", "-wal", "-shm"] {
            let p = PathBuf::from(format!("{}{suffix}", store_path.display()));
            if p.exists() {
                std::fs::remove_file(&p)
                    .with_context(|| format!("cannot remove {}", p.display()))?;
            }
        }
    }
    let store = Store::open(store_path)?;
    let existing = store.campaigns()?.into_iter().find(|c| c.name == plan.name);
    if mode == StartMode::Resume && existing.is_none() {
        // A renamed campaign would otherwise start a second campaign beside the first.
        if let Some(other) = store.campaigns()?.first() {
            bail!(
                "cannot resume campaign {:?} in {}: the folder holds campaign {:?} (was the \
                 campaign renamed?); rename it back in {}, or start a new store: `--fresh` \
                 (deletes the folder's results) or `--out NEW_FOLDER`",
                plan.name,
                plan.out_dir.display(),
                other.name,
                plan.path.display()
            );
        }
        // The daemon resumes every campaign, new or not; a user's mistyped --out is said.
        eprintln!(
            "note: {} holds no results of campaign {:?} yet: --resume starts it",
            plan.out_dir.display(),
            plan.name
        );
    }
    if let Some(existing) = &existing {
        // A merged folder's summary is the shards' verdicts joined; a run here would replace
        // it with its own and make the folder no merge (later merges refused).
        if is_merged_folder(&plan.out_dir) && mode != StartMode::Fresh {
            bail!(
                "{} holds campaign {:?} merged from its shards (`mats merge`): a merged folder \
                 is not tuned further; resume an unfinished shard (`--shard K/N --resume`) and \
                 merge again, or tune the whole campaign into another folder (`--out \
                 NEW_FOLDER`)",
                plan.out_dir.display(),
                plan.name
            );
        }
        // A shard resuming another shard's folder would replace that shard's summary with
        // its own classes, and export would then ship the other shard's classes untuned.
        let recorded = existing.settings["shard"].as_str().map(str::to_string);
        let this = plan.shard.map(|s| s.to_string());
        if mode != StartMode::Fresh && recorded != this {
            let whole = |s: &Option<String>| {
                s.as_ref()
                    .map_or("the whole campaign".to_string(), |s| format!("shard {s}"))
            };
            bail!(
                "{} holds {} of campaign {:?}, not {}: each shard needs its own folder; \
                 leave out --out (shards go to OUT/shard-K-of-N) or give each shard another \
                 --out, then `mats merge` them",
                plan.out_dir.display(),
                whole(&recorded),
                plan.name,
                whole(&this)
            );
        }
        if mode == StartMode::New {
            let trials = store.trials(existing.id)?.len();
            bail!(
                "{} already holds campaign {:?} ({trials} trials); run `{} --resume` to \
                 continue it, or --fresh to start over",
                plan.out_dir.display(),
                plan.name,
                tune_command(plan)
            );
        }
    }
    if mode == StartMode::New && existing.is_none() {
        // A second campaign beside the first would replace the folder's summary and report,
        // which the first's export and report then read with the second's verdicts.
        if let Some(other) = store.campaigns()?.first() {
            let trials = store.trials(other.id)?.len();
            bail!(
                "{} holds another campaign, {:?} ({trials} trials); give campaign {:?} a \
                 folder of its own with `--out NEW_FOLDER`, or `--fresh` to delete {:?}'s \
                 results",
                plan.out_dir.display(),
                other.name,
                plan.name,
                other.name
            );
        }
    }

    Ok((store, existing))
}

/// The `mats tune` command line that runs this plan again (its folder and shard included).
pub fn tune_command(plan: &CampaignPlan) -> String {
    command_line(
        &plan.path.display().to_string(),
        &plan.out_dir,
        plan.shard.map(|s| s.to_string()).as_deref(),
    )
}

/// `mats tune CAMPAIGN --out OUT [--shard K/N]`: how a stored campaign (its recorded file and
/// shard) is run again, as every hint writes it.
pub fn command_line(campaign: &str, out: &Path, shard: Option<&str>) -> String {
    let mut command = format!("mats tune {campaign} --out {}", out.display());
    if let Some(shard) = shard {
        command.push_str(&format!(" --shard {shard}"));
    }
    command
}

/// The run of `strategy` on a class, reusing an unfinished run of the same name on resume.
fn open_run(
    t: &Tuning,
    class: &str,
    strategy: &str,
    objective: &str,
) -> Result<(i64, evaluator::Recorded, bool)> {
    let runs = t.store.runs(t.campaign_id)?;
    if let Some(run) = runs
        .iter()
        .rev()
        .find(|r| r.class == class && r.strategy == strategy && r.objective == objective)
    {
        let recorded = evaluator::Recorded::of_run(&t.store, run.id)?;
        return Ok((run.id, recorded, run.ended_at.is_some()));
    }
    let run = t.store.begin_run(
        t.campaign_id,
        class,
        strategy,
        objective,
        &serde_json::json!({}),
    )?;
    Ok((run.id, evaluator::Recorded::default(), false))
}

/// A comparison's figures: shared with results and reports (typed, not JSON keys).
pub use results::{Comparison, MeanSd};

fn tune_class(
    t: &mut Tuning,
    class: &str,
    members: &[usize],
    baseline_point: &Point,
    start: &Point,
    searches: &[(search::Strategy, Objective)],
    seed: u64,
) -> Result<(ClassSummary, Option<Baseline>)> {
    let names: Vec<String> = members
        .iter()
        .map(|&i| t.instances[i].record.name.clone())
        .collect();
    let metric = first_metric(searches);
    let label = t.mode.metric_label(metric);
    let empty = |names: Vec<String>| ClassSummary::new(class, names, label.clone());
    // The baseline first: the guard, racing and every improvement refer to it.
    let (run_id, recorded, _) = open_run(t, class, "baseline", metric.name())?;
    let mut ev = ClassEvaluator::new(
        t,
        class,
        members.to_vec(),
        run_id,
        recorded,
        None,
        Some(metric),
    );
    ev.reference_from_trials = true;
    let base = ev.evaluate_point(baseline_point)?;
    drop(ev);
    t.store.end_run(run_id)?;
    let Some(objectives) = base.objectives else {
        if t.budget.exhausted() {
            return Ok((empty(names), None));
        }
        // One entry per distinct failure, with how many trials (seeds) it ended.
        let mut logs: Vec<(String, usize)> = Vec::new();
        for r in t.store.trials(t.campaign_id)? {
            if r.class != class || &r.point != baseline_point {
                continue;
            }
            let line = format!("{} [{}]: {}", r.instance, r.status.as_str(), r.log.trim());
            match logs.iter_mut().find(|(l, _)| *l == line) {
                Some((_, count)) => *count += 1,
                None => logs.push((line, 1)),
            }
        }
        let logs: Vec<String> = logs
            .into_iter()
            .map(|(line, count)| match count {
                1 => line,
                n => format!("{line} ({n} trials)"),
            })
            .collect();
        bail!(
            "the baseline point {baseline_point} failed on class {class}, so nothing can be \
             compared with it: {}",
            logs.join("; ")
        );
    };
    let baseline = Baseline {
        time_s: objectives.time_s,
        gap_percent: base.gap_percent.unwrap_or(0.0),
        objectives: base.instance_objectives,
        measured: objectives,
        pairs: base.pairs,
    };

    // The summary's best point is the first search's; later searches are for comparison.
    let mut first: Option<SearchResult> = None;
    for (k, (strategy, objective)) in searches.iter().enumerate() {
        // A run is found again by its label: a second search with the same strategy name and
        // objective (other options) needs a label of its own, or it would take the first's
        // run and its evaluations.
        let same = searches[..k]
            .iter()
            .filter(|(s, o)| s.label() == strategy.label() && o == objective)
            .count();
        let label = match same {
            0 => strategy.label(),
            n => format!("{}#{}", strategy.label(), n + 1),
        };
        let found = search_class(
            t, class, members, start, &baseline, strategy, &label, *objective, seed,
        )?;
        first.get_or_insert(found);
        if t.budget.exhausted() {
            if k + 1 < searches.len() {
                t.budget.mark_cut(); // searches left unrun
            }
            break;
        }
    }
    let found = first.unwrap_or_default();
    let baseline_value = metric.of(&baseline.measured);
    let best_value = found.best.as_ref().and_then(|(_, o)| metric.of(o));
    Ok((
        ClassSummary {
            baseline_value,
            best_value,
            baseline_time_s: Some(baseline.time_s),
            // At a fixed budget every run lasts the budget: a ratio of run times says nothing.
            speedup: found
                .best
                .as_ref()
                .filter(|_| !matches!(t.mode, RunMode::Budget { .. }))
                .map(|(_, o)| baseline.time_s / o.time_s.max(1e-12)),
            best_time_s: found.best.as_ref().map(|(_, o)| o.time_s),
            best_point: found.best.map(|(p, _)| p),
            evaluations: found.evaluations,
            raced: found.raced,
            saved_trials: found.saved_trials,
            front: front::of_search(&found.pareto),
            ..empty(names)
        },
        Some(baseline),
    ))
}

/// What one search of a class found.
#[derive(Debug, Default)]
struct SearchResult {
    best: Option<(Point, search::Objectives)>,
    /// The non-dominated points of a Pareto objective.
    pareto: Vec<(Point, search::Objectives)>,
    evaluations: u32,
    raced: u32,
    saved_trials: u32,
}

/// Measures `points` (role, point) interleaved on `members` with `seeds`, as a run named
/// `label` of the class, and returns the metric's mean and spread per role.
#[allow(clippy::too_many_arguments)]
fn compare(
    t: &mut Tuning,
    class: &str,
    label: &str,
    members: &[usize],
    points: &[(String, Point)],
    seeds: Vec<u64>,
    metric: crate::campaign::Metric,
    baseline: Option<Baseline>,
) -> Result<Option<Comparison>> {
    if members.is_empty() || points.is_empty() {
        return Ok(None);
    }
    // Where the search guarded quality (fixed work), so does the check, on the fresh seeds and
    // on the holdouts alike: the baseline role is measured beside the others.
    let guarded = t.mode == RunMode::FixedWork && points.iter().any(|(r, _)| r == "baseline");
    let mut distinct: Vec<Point> = Vec::new();
    for (_, p) in points {
        if !distinct.contains(p) {
            distinct.push(p.clone());
        }
    }
    let Some((run_id, evaluated)) = measure_on_seeds(
        t,
        class,
        label,
        members,
        &distinct,
        seeds.clone(),
        metric,
        baseline,
    )?
    else {
        return Ok(None);
    };
    let evaluated_as =
        |p: &Point| &evaluated[distinct.iter().position(|d| d == p).expect("listed")];
    // The quality guard on the pairs just measured: a role whose mean gap is above the
    // baseline's on the same pairs by more than the margin has no value.
    let baseline_gap = points
        .iter()
        .find(|(role, _)| role == "baseline")
        .and_then(|(_, p)| evaluated_as(p).gap_percent);
    let mut values = BTreeMap::new();
    let mut rejected = Vec::new();
    let mut failed = Vec::new();
    for (role, p) in points {
        let e = evaluated_as(p);
        if e.objectives.is_none() {
            failed.push(role.clone());
        }
        let worse = matches!((baseline_gap, e.gap_percent),
            (Some(b), Some(g)) if evaluator::beyond_margin(g, b, t.margin_percent));
        if guarded && worse {
            rejected.push(role.clone());
            values.insert(role.clone(), None);
            continue;
        }
        let v: Option<Vec<f64>> = e.pairs.iter().map(|v| v.metric(metric)).collect();
        let complete = e.objectives.is_some() && !e.pairs.is_empty();
        values.insert(
            role.clone(),
            v.filter(|_| complete).and_then(|v| MeanSd::of(&v)),
        );
    }
    let lowest = values
        .values()
        .filter_map(|v| v.map(|v| v.mean))
        .min_by(f64::total_cmp);
    let winner = lowest.and_then(|low| {
        let at_lowest = |r: &str| {
            values
                .get(r)
                .copied()
                .flatten()
                .is_some_and(|v| v.mean <= low + 1e-12)
        };
        if at_lowest("tuned") {
            Some("tuned".to_string())
        } else {
            values.keys().find(|r| at_lowest(r)).cloned()
        }
    });
    let comparison = Comparison {
        instances: members
            .iter()
            .map(|&i| t.instances[i].record.name.clone())
            .collect(),
        seeds,
        values,
        points: points.iter().cloned().collect(),
        winner,
        rejected,
        failed,
    };
    // The report reads the verdict from the store (a merged or copied folder may have no
    // summary.json).
    t.store.set_run_options(
        run_id,
        &serde_json::json!({ "comparison": comparison, "metric": metric.name() }),
    )?;
    Ok(Some(comparison))
}

/// Measures `points` interleaved on `members` under `seeds` (the campaign's own seeds are
/// restored afterwards) as a run named `label` of the class, the verification's way: a
/// comparison of roles, or a front re-measured. Returns the run and one evaluation per point,
/// or None where the budget ran out before every trial was measured.
#[allow(clippy::too_many_arguments)]
pub(super) fn measure_on_seeds(
    t: &mut Tuning,
    class: &str,
    label: &str,
    members: &[usize],
    points: &[Point],
    seeds: Vec<u64>,
    metric: crate::campaign::Metric,
    baseline: Option<Baseline>,
) -> Result<Option<(i64, Vec<evaluator::Evaluated>)>> {
    let saved = std::mem::replace(&mut t.seeds, seeds);
    let result = (|| -> Result<Option<(i64, Vec<evaluator::Evaluated>)>> {
        let (run_id, recorded, _) = open_run(t, class, label, metric.name())?;
        let mut ev = ClassEvaluator::new(
            t,
            class,
            members.to_vec(),
            run_id,
            recorded,
            baseline,
            Some(metric),
        );
        // The search's baseline figures come from other seeds; a guard against them would
        // refuse the baseline itself. `compare` guards with the roles measured here instead.
        ev.guard = false;
        // Roles on instances without a best-known value (and, for the holdouts, without a
        // baseline figure) share one reference: the best any of them found.
        ev.reference_from_trials = true;
        let evaluated = ev.evaluate_interleaved(points)?;
        let incomplete = ev.incomplete;
        drop(ev);
        if incomplete {
            return Ok(None);
        }
        t.store.end_run(run_id)?;
        Ok(Some((run_id, evaluated)))
    })();
    t.seeds = saved;
    result
}

/// One search of a class; returns its best point, that point's time and the evaluations made.
#[allow(clippy::too_many_arguments)]
fn search_class(
    t: &mut Tuning,
    class: &str,
    members: &[usize],
    start: &Point,
    baseline: &Baseline,
    strategy: &search::Strategy,
    label: &str,
    objective: Objective,
    seed: u64,
) -> Result<SearchResult> {
    let objective_name = objective.to_string();
    let (run_id, recorded, _) = open_run(t, class, label, &objective_name)?;
    let mut ev = ClassEvaluator::new(
        t,
        class,
        members.to_vec(),
        run_id,
        recorded,
        Some(baseline.clone()),
        Some(crate::campaign::metrics(objective)[0]),
    );
    ev.pareto = matches!(objective, Objective::Pareto(..));
    let mut rng =
        <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed ^ fxhash(class));
    let space = ev.t.space.clone();
    let outcome = strategy.run(
        space.as_ref(),
        &mut ev,
        objective,
        Some(start.clone()),
        &mut rng,
    )?;
    let found = SearchResult {
        best: outcome.best,
        pareto: outcome.pareto,
        evaluations: ev.seq,
        raced: ev.raced,
        saved_trials: ev.saved_trials,
    };
    let complete = !ev.t.budget.exhausted() && !ev.incomplete;
    drop(ev);
    if complete || t.budget.reason().is_none() {
        t.store.end_run(run_id)?;
    }
    Ok(found)
}

/// After the searches: each class's winner and the baseline re-measured interleaved on fresh
/// seeds (so the improvement reported is not the search's own luck), and the winner, the
/// default solver and the baseline on the class's held-out instances.
#[allow(clippy::too_many_arguments)]
fn verify(
    t: &mut Tuning,
    classes: &BTreeMap<String, Vec<usize>>,
    holdouts: &BTreeMap<String, Vec<usize>>,
    summaries: &mut [ClassSummary],
    baseline_point: &Point,
    default_point: Option<&Point>,
    baselines: &BTreeMap<String, Baseline>,
    seed: u64,
) -> Result<()> {
    let n = t.seeds.len() as u64;
    // Far from the search's seeds (seed, seed + 1, ...), so no trial is reused.
    let fresh: Vec<u64> = (0..n).map(|k| seed.wrapping_add(1_000_000 + k)).collect();
    for summary in summaries.iter_mut() {
        let Some(members) = classes.get(&summary.class) else {
            continue;
        };
        // A class the budget stopped before its search made an evaluation was never searched:
        // nothing of it to verify (the verification is outside the budget).
        if summary.evaluations == 0 {
            continue;
        }
        let metric = metric_of_label(&summary.metric);
        let tuned = summary
            .best_point
            .clone()
            .unwrap_or_else(|| baseline_point.clone());
        // Also where the search ended on the baseline: a default it never reached may still
        // beat it, and export ships the final re-measure's winner.
        let searched_past_baseline = summary
            .best_point
            .as_ref()
            .is_some_and(|b| b != baseline_point);
        if searched_past_baseline || default_point.is_some_and(|d| *d != tuned) {
            let mut points = vec![
                ("tuned".to_string(), tuned.clone()),
                ("baseline".to_string(), baseline_point.clone()),
            ];
            if let Some(d) = default_point.filter(|d| **d != tuned && *d != baseline_point) {
                points.push(("default".into(), d.clone()));
            }
            summary.final_check = compare(
                t,
                &summary.class,
                "final",
                members,
                &points,
                fresh.clone(),
                metric,
                baselines.get(&summary.class).cloned(),
            )?;
        }
        if let Some(h) = holdouts.get(&summary.class) {
            let mut points = vec![
                ("tuned".to_string(), tuned.clone()),
                ("baseline".to_string(), baseline_point.clone()),
            ];
            if let Some(d) = default_point {
                points.push(("default".into(), d.clone()));
            }
            summary.holdout = compare(
                t,
                &summary.class,
                "holdout",
                h,
                &points,
                t.seeds.clone(),
                metric,
                None,
            )?;
        }
        let mut front = std::mem::take(&mut summary.front);
        let left = front::remeasure(
            t,
            &summary.class,
            members,
            &mut front,
            fresh.clone(),
            metric,
            baselines.get(&summary.class).map(|b| (baseline_point, b)),
        )?;
        for point in left {
            eprintln!(
                "note: class {}: {point} left the front: on fresh seeds its mean gap is above \
                 the baseline's by more than the margin",
                summary.class
            );
        }
        summary.front = front;
        if t.budget.stopped_by_user() {
            break;
        }
    }
    Ok(())
}

/// The metric of a summary's label (`gap@budget` -> gap, `time-to-target` -> time, ...).
fn metric_of_label(label: &str) -> crate::campaign::Metric {
    use crate::campaign::Metric;
    let head = label.split(['@', '-']).next().unwrap_or(label);
    match head {
        "gap" => Metric::Gap,
        "energy" => Metric::Energy,
        "power" => Metric::Power,
        _ => Metric::Time,
    }
}

/// Each class's best point measured on every other class: the data of "one point for all
/// classes" against "a point per class".
fn cross_class(
    t: &mut Tuning,
    classes: &BTreeMap<String, Vec<usize>>,
    bests: &BTreeMap<String, Point>,
    baselines: &BTreeMap<String, Baseline>,
    metric: crate::campaign::Metric,
) -> Result<()> {
    // Every class's bests on every other class at once, then recorded class by class.
    let others = |class: &String| -> Vec<Point> {
        let mut points: Vec<Point> = Vec::new();
        for (_, p) in bests.iter().filter(|(c, _)| *c != class) {
            if !points.contains(p) {
                points.push(p.clone());
            }
        }
        points
    };
    let work: Vec<(Point, Vec<usize>)> = classes
        .iter()
        .flat_map(|(class, members)| others(class).into_iter().map(|p| (p, members.clone())))
        .collect();
    t.prefetch(&work, "cross-class")?;
    for (class, members) in classes {
        // Also where an earlier run ended it: a resume may have changed a class's best, and
        // the points measured before come from the store (their rows are not repeated).
        let (run_id, recorded, _) = open_run(t, class, "cross-class", metric.name())?;
        // Two classes may have tuned the same point: it is evaluated here once.
        let points = others(class);
        let mut ev = ClassEvaluator::new(
            t,
            class,
            members.clone(),
            run_id,
            recorded,
            // The class's own guard: a point tuned elsewhere must not win here with worse
            // solutions.
            baselines.get(class).cloned(),
            Some(metric),
        );
        // Never raced, and not held to a search's cost: these are measurements of answers.
        ev.evaluate_interleaved(&points)?;
        let done = !ev.incomplete;
        drop(ev);
        if done {
            t.store.end_run(run_id)?;
        }
    }
    Ok(())
}

/// A stable small hash of a class name (so each class's search has its own random stream).
fn fxhash(text: &str) -> u64 {
    solvers::fnv::fnv1a(text.bytes())
}

/// The campaign's GPUs, each with its measuring worker and device lock, and the compile pool
/// for their architecture.
fn open_gpus(plan: &CampaignPlan, options: &TuneOptions) -> Result<(Backend, Vec<String>, String)> {
    let mut workers = Vec::new();
    let mut names = Vec::new();
    let mut arch = None;
    let mut optin_shared = usize::MAX;
    let mut label = Vec::new();
    for &ordinal in &plan.devices {
        // Opening the device here only reads what it is; the worker owns it for measuring.
        let gpu = kernels::gpu::Gpu::open(ordinal)
            .map_err(|e| plan.error_at("devices", format!("GPU {ordinal}: {e}")))?;
        let name = format!("{} #{ordinal}", gpu.info.name);
        if arch.is_some_and(|a| a != gpu.info.arch) {
            return Err(plan.error_at(
                "devices",
                "all devices of a campaign must have the same architecture",
            ));
        }
        arch = Some(gpu.info.arch);
        optin_shared = optin_shared.min(gpu.info.max_shared_bytes_per_block_optin as usize);
        label.push(format!("{} ({})", gpu.info.name, gpu.info.arch));
        names.push(name.clone());
        // The lock is keyed by UUID: CUDA ordinals differ between processes that see
        // different CUDA_VISIBLE_DEVICES.
        let key = measure::power::uuid_of(&gpu).unwrap_or_else(|_| format!("index-{ordinal}"));
        let mut lock = DeviceLock::open(&device_lock::lock_dir(), &key, &plan.lock_note())?;
        if options.no_wait {
            lock.check_free()
                .map_err(|e| plan.error_at("devices", format!("GPU {ordinal}: {e:#}")))?;
        }
        workers.push(GpuWorker::new(
            options.worker_exe.clone(),
            ordinal,
            name,
            Some(lock),
        ));
    }
    let (major, minor) = kernels::gpu::driver_version().unwrap_or((0, 0));
    let settings = GpuSettings {
        measure: plan.measurement.clone(),
        iterations: plan.setup.iterations,
        mode: plan.mode,
        cache_dir: kernels::KernelCache::default_dir(),
        timeout: std::time::Duration::from_secs(300),
    };
    let compiles = Box::new(compile::CompilePool::new(
        solvers::gpu::CompileTarget {
            arch: arch.context("no devices")?,
            optin_shared,
        },
        settings.cache_dir.clone(),
    )?);
    Ok((
        Backend::Gpu {
            workers,
            settings,
            compiles,
        },
        names,
        format!("{}, CUDA driver {major}.{minor}", label.join(", ")),
    ))
}

/// Ctrl-C, SIGTERM (`timeout`, Slurm, the daemon's second cancel) or SIGHUP (a closed
/// terminal) sets the stop flag: the campaign stops after the current trial and writes its
/// summary. A second signal ends the process at once; the trials it leaves unfinished are
/// recorded as interrupted first, so that `--resume` measures them again without counting
/// them as crashes of their points (a point whose trial was killed twice by a user would
/// otherwise be failed for good by `max_attempts`).
fn install_ctrl_c(stop: Arc<AtomicBool>, store: PathBuf, campaign_id: i64) {
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async move {
            let Some(mut signals) = Signals::listen() else {
                return;
            };
            let first = signals.next().await;
            eprintln!("\n{first}: stopping after the current trial (again to abort)");
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            let second = signals.next().await;
            let marked =
                results::Store::open_existing(&store).and_then(|s| s.interrupt(campaign_id));
            match marked {
                Ok(n) if n > 0 => eprintln!(
                    "{second}: aborted; {n} unfinished trial(s) recorded as interrupted \
                     (--resume measures them again)"
                ),
                Ok(_) => eprintln!("{second}: aborted"),
                Err(e) => eprintln!("{second}: aborted ({e:#})"),
            }
            std::process::exit(130);
        });
    });
}

/// The signals that stop a campaign: SIGINT, SIGTERM and SIGHUP (Ctrl-C elsewhere).
struct Signals {
    #[cfg(unix)]
    streams: [tokio::signal::unix::Signal; 3],
}

impl Signals {
    fn listen() -> Option<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Some(Signals {
                streams: [
                    signal(SignalKind::interrupt()).ok()?,
                    signal(SignalKind::terminate()).ok()?,
                    signal(SignalKind::hangup()).ok()?,
                ],
            })
        }
        #[cfg(not(unix))]
        Some(Signals {})
    }

    /// Waits for the next one and names it.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            let [int, term, hup] = &mut self.streams;
            tokio::select! {
                _ = int.recv() => "interrupted (SIGINT)",
                _ = term.recv() => "terminated (SIGTERM)",
                _ = hup.recv() => "hung up (SIGHUP)",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "interrupted (Ctrl-C)"
        }
    }
}

#[cfg(test)]
mod tests;
