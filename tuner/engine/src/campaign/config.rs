//! The campaign file (TOML): what to tune, on what, how, for how long, against what.
//!
//! Every table denies unknown keys, so a typo is an error that names the key and its line
//! (the `toml` crate reports spans) rather than a silently ignored setting.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use results::{Point, Value};
use serde::Deserialize;

use measure::MeasureSettings;
use search::Metric;

/// A campaign as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignConfig {
    /// Identifies the campaign in the store; also the default output folder `runs/<name>`.
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// `auto` (the GPU when one is present, else the CPU solvers), `gpu` or `cpu`.
    #[serde(default)]
    pub backend: BackendChoice,
    /// Results folder (the SQLite store, generated instances, exports); relative paths are
    /// relative to the campaign file. Default: `runs/<name>` in the current directory.
    #[serde(default)]
    pub output: Option<PathBuf>,
    /// Seed of the strategies and of every production run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub instances: InstancesConfig,
    /// The GPU setup (space, baseline, run length); required unless `backend = "cpu"`.
    #[serde(default)]
    pub gpu: Option<SetupConfig>,
    /// The CPU setup; required unless `backend = "gpu"`.
    #[serde(default)]
    pub cpu: Option<SetupConfig>,
    /// The search of every class; see also `search`. Without it (and without `search`):
    /// first-improvement hill climbing, or `pareto` for a Pareto objective.
    #[serde(default)]
    pub strategy: Option<search::Strategy>,
    /// Further searches of every class, each with its own objective, run after `strategy`
    /// (e.g. staged orders side by side, or time, power and Pareto searches for comparison).
    #[serde(default)]
    pub search: Vec<SearchConfig>,
    #[serde(default)]
    pub budget: BudgetConfig,
    /// What one production run is for quality objectives: a wall-clock budget or a target gap,
    /// and how many seeds per instance.
    #[serde(default)]
    pub run: RunConfig,
    /// Dropping clearly worse candidates early (quality objectives only).
    #[serde(default)]
    pub racing: RacingConfig,
    /// Fixed work: `"time"`, `"power"`, `"energy"`. Quality: `"gap@budget"`,
    /// `"energy@budget"`, `"time-to-target"`, `"energy-to-target"`. Or a pair of one kind for
    /// a Pareto search, e.g. `["gap@budget", "energy@budget"]` or `["time", "energy"]`.
    #[serde(default = "default_objective")]
    pub objective: ObjectiveConfig,
    #[serde(default)]
    pub quality: QualityConfig,
    #[serde(default)]
    pub measurement: Option<MeasureSettings>,
    /// GPU ordinals to measure on (one measuring worker each).
    #[serde(default = "default_devices")]
    pub devices: Vec<usize>,
}

fn default_seed() -> u64 {
    1
}

fn default_devices() -> Vec<usize> {
    vec![0]
}

fn default_objective() -> ObjectiveConfig {
    ObjectiveConfig::Single("time".into())
}

/// The production run of quality objectives (`[run]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// `gap@budget`, `energy@budget`: wall-clock seconds of one production run.
    #[serde(default)]
    pub budget_s: Option<f64>,
    /// `gap@budget`, `energy@budget`: several budgets instead of `budget_s`, in increasing
    /// order; each class is tuned once per budget (a later budget's search starts from the
    /// earlier budget's winner), and the export keeps a bundle per (class, budget).
    #[serde(default)]
    pub budgets_s: Option<Vec<f64>>,
    /// With `budgets_s`: production runs per instance at every budget after the first (fewer
    /// seeds keep the long budgets affordable; default: as many as `seeds`).
    #[serde(default)]
    pub later_seeds: Option<u32>,
    /// Production runs per instance, with seeds `seed`, `seed + 1`, ... (default 5 for
    /// quality objectives; fixed-work objectives run the campaign's seed once).
    #[serde(default)]
    pub seeds: Option<u32>,
    /// `time-to-target`, `energy-to-target`: the gap to the best-known value, percent, that
    /// ends a run.
    #[serde(default)]
    pub target_gap_percent: Option<f64>,
    /// `time-to-target`, `energy-to-target`: a run that has not reached the target after this
    /// many seconds stops and counts as `penalty` times the cap (PAR10 by default).
    #[serde(default)]
    pub cap_s: Option<f64>,
    #[serde(default)]
    pub penalty: Option<f64>,
}

/// Racing (`[racing]`), as irace and SMAC do it: a candidate is measured on the same
/// (instance, seed) pairs as the incumbent, a few pairs at a time, and dropped once the mean
/// of its paired differences is worse by more than `z` standard errors.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RacingConfig {
    #[serde(default = "default_racing")]
    pub enabled: bool,
    /// Pairs every candidate runs before it may be dropped.
    #[serde(default = "default_first_pairs")]
    pub first_pairs: usize,
    #[serde(default = "default_z")]
    pub z: f64,
}

fn default_racing() -> bool {
    true
}

fn default_first_pairs() -> usize {
    4
}

fn default_z() -> f64 {
    2.0
}

impl Default for RacingConfig {
    fn default() -> Self {
        RacingConfig {
            enabled: default_racing(),
            first_pairs: default_first_pairs(),
            z: default_z(),
        }
    }
}

pub use results::RunMode;

/// Penalty factor of unreached target runs: PAR10, as in the algorithm-configuration
/// literature (SMAC, irace).
pub const DEFAULT_PENALTY: f64 = 10.0;

/// The largest `run.penalty` (PAR10 is 10; a million already makes any miss dominate).
const MAX_PENALTY: f64 = 1e6;

/// The most budgets one campaign may name (each is a whole tuning of every class).
pub const MAX_BUDGETS: usize = 8;

/// Seeds per instance of quality objectives when the campaign does not say.
pub const DEFAULT_SEEDS: u32 = 5;

/// One more search per class: a strategy and what it minimises.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    pub strategy: search::Strategy,
    /// Its own objective; without one, the campaign's `objective` (it was `time`, whatever
    /// the campaign's, so a gap campaign's extra search was refused for mixing kinds).
    #[serde(default)]
    pub objective: Option<ObjectiveConfig>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendChoice {
    #[default]
    Auto,
    Gpu,
    Cpu,
}

/// Which instances, and how they form classes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstancesConfig {
    /// Files or glob patterns, relative to the campaign file.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Generated instances, written into the output folder so every run sees the same ones.
    #[serde(default)]
    pub generate: Vec<GeneratorConfig>,
    /// `"auto"` (each instance's class from its features) or a table class name -> instance
    /// names (file stems).
    #[serde(default)]
    pub classes: ClassesConfig,
    /// Use at most this many instances per class (the first in name order), to bound cost.
    #[serde(default)]
    pub per_class: Option<usize>,
    /// Held-out instances (files or globs): never used by the search; after it, each class's
    /// tuned point, the default solver and the baseline are compared on the holdouts of that
    /// class at the campaign's budget.
    #[serde(default)]
    pub holdout: Vec<String>,
    /// Generated held-out instances (the specs of `generate`), written into the output folder
    /// beside the generated tuning instances.
    #[serde(default)]
    pub holdout_generate: Vec<GeneratorConfig>,
    /// Best-known tables (CSV with `name` and `bks` columns, as `--bks` takes them), relative
    /// to the campaign file, over the embedded one: gaps of instances the embedded table does
    /// not know (generated graphs, a user's own instances).
    #[serde(default)]
    pub bks: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ClassesConfig {
    Auto(String),
    Listed(BTreeMap<String, Vec<String>>),
}

impl Default for ClassesConfig {
    fn default() -> Self {
        ClassesConfig::Auto("auto".into())
    }
}

/// A generator spec, as `mats instance generate` takes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "family", rename_all = "kebab-case", deny_unknown_fields)]
pub enum GeneratorConfig {
    /// Taillard's flowshop generator.
    Pfsp {
        jobs: usize,
        machines: usize,
        seed: i64,
    },
    /// Task graphs after Arato et al. / Hou et al.
    Hwsw {
        nodes: usize,
        edges: usize,
        ccr: f64,
        r_level: String,
        seed: u64,
    },
}

/// A backend's search space, baseline point and production run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupConfig {
    /// Space file, relative to the campaign file.
    pub space: PathBuf,
    /// Overrides of the space (domains, constants, extra constraints).
    #[serde(default)]
    pub overrides: Option<search::space::SpaceOverrides>,
    /// The point every speedup is measured against; must be a point of the space.
    pub baseline: toml::Table,
    /// The point that is what `mats solve` runs without tuning (for QAP on the GPU:
    /// rots-block with its defaults): holdouts compare the tuned point with it.
    #[serde(default)]
    pub default: Option<toml::Table>,
    /// Iterations of one production run (fixed work, so times compare); the algorithm's
    /// default when absent.
    #[serde(default)]
    pub iterations: Option<u64>,
}

/// When to stop. Any limit reached stops the campaign; with none given, the space is searched
/// until the strategy ends.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// New trials (measurements) in all; points from the store are free.
    #[serde(default)]
    pub trials: Option<u64>,
    /// Wall-clock seconds.
    #[serde(default)]
    pub wall_s: Option<f64>,
    /// Evaluations per class as a percentage of `production_runs` (the paper's cost measure).
    #[serde(default)]
    pub cost_percent: Option<f64>,
    #[serde(default = "default_production_runs")]
    pub production_runs: u64,
    /// A point that crashed this many times is not tried again.
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
}

fn default_production_runs() -> u64 {
    500
}

fn default_max_attempts() -> u32 {
    2
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            trials: None,
            wall_s: None,
            cost_percent: None,
            production_runs: default_production_runs(),
            max_attempts: default_max_attempts(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ObjectiveConfig {
    Single(String),
    Pareto(Vec<String>),
}

/// The quality guard: speed is never bought with worse solutions.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QualityConfig {
    /// A point whose mean gap to the best known value exceeds the baseline's by more than
    /// this many percentage points is rejected.
    #[serde(default = "default_margin")]
    pub margin_percent: f64,
}

fn default_margin() -> f64 {
    0.5
}

impl Default for QualityConfig {
    fn default() -> Self {
        QualityConfig {
            margin_percent: default_margin(),
        }
    }
}

/// The line (1-based) where `key` is first set or opened as a table in `text`, for errors
/// about values that parse but do not make sense.
/// `key` may be dotted (`cpu.baseline`): the key is then looked up after its table's header.
/// `search[K]` is the K-th (0-based) `[[search]]` entry, `search[K].objective` a key in it.
pub fn line_of(text: &str, key: &str) -> Option<usize> {
    // A table of its own (`[cpu.overrides.params.x]` for `cpu.overrides`) is where the key is.
    let header = text.lines().position(|line| {
        let t = line.trim();
        t == format!("[{key}]") || t.starts_with(&format!("[{key}."))
    });
    if let (Some(line), true) = (header, key.contains('.')) {
        return Some(line + 1);
    }
    if let Some((array, k, rest)) = array_entry(key) {
        let start = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim() == format!("[[{array}]]"))
            .nth(k)
            .map(|(i, _)| i + 1)?;
        return Some(rest.map_or(start, |rest| line_in_table(text, start, rest)));
    }
    if let Some((table, rest)) = key.rsplit_once('.') {
        if let Some(start) = line_of(text, table) {
            return Some(line_in_table(text, start, rest));
        }
    }
    text.lines()
        .position(|line| {
            let t = line.trim_start();
            t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
                || t == format!("[{key}]")
                || t.starts_with(&format!("[{key}."))
        })
        .map(|i| i + 1)
}

/// The line of `key` in the table whose header is on line `start`, else that header's line.
fn line_in_table(text: &str, start: usize, key: &str) -> usize {
    let section: Vec<&str> = text
        .lines()
        .skip(start)
        .take_while(|l| !l.trim_start().starts_with('['))
        .collect();
    line_of(&section.join("\n"), key).map_or(start, |k| start + k)
}

/// `name[K]` or `name[K].rest` as (name, K, rest).
fn array_entry(key: &str) -> Option<(&str, usize, Option<&str>)> {
    let (name, after) = key.split_once('[')?;
    let (index, rest) = after.split_once(']')?;
    let rest = match rest.strip_prefix('.') {
        Some(r) => Some(r),
        None if rest.is_empty() => None,
        None => return None,
    };
    Some((name, index.parse().ok()?, rest))
}

/// An error about `key` of the campaign file at `path` whose text is `text`, naming the file
/// and the key's line.
pub fn error_at(
    path: &Path,
    text: &str,
    key: &str,
    message: impl std::fmt::Display,
) -> anyhow::Error {
    match line_of(text, key) {
        Some(line) => anyhow::anyhow!(
            "campaign {}, line {line}: `{key}`: {message}",
            path.display()
        ),
        None => anyhow::anyhow!("campaign {}: `{key}`: {message}", path.display()),
    }
}

/// The first option of a strategy table (`[strategy]`, or `strategy` of a `[[search]]`) that
/// its strategy refuses on its own: the key (`strategy.restarts`, `search[1].strategy.batch`)
/// and why. None where every option reads (the error lies elsewhere).
fn strategy_option_error(text: &str) -> Option<(String, String)> {
    let doc: toml::Table = toml::from_str(text).ok()?;
    let searches = doc.get("search").and_then(|v| v.as_array());
    let tables = std::iter::once(("strategy".to_string(), doc.get("strategy"))).chain(
        searches
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(k, entry)| (format!("search[{k}].strategy"), entry.get("strategy"))),
    );
    for (key, table) in tables {
        let Some(table) = table.and_then(|t| t.as_table()) else {
            continue;
        };
        let name = table.get("name")?;
        let read = |t: toml::Table| toml::Value::Table(t).try_into::<search::Strategy>();
        // An unknown strategy first (it was blamed on whichever option came first), then a
        // field the strategy needs (blamed on an option that is fine).
        let mut alone = toml::Table::new();
        alone.insert("name".into(), name.clone());
        if let Err(e) = read(alone) {
            let e = e.to_string();
            if e.contains("unknown variant") {
                return Some((format!("{key}.name"), e.trim_end().to_string()));
            }
        }
        if let Err(e) = read(table.clone()) {
            let e = e.to_string();
            if e.contains("missing field") {
                return Some((key, e.trim_end().to_string()));
            }
        }
        for (option, value) in table.iter().filter(|(k, _)| *k != "name") {
            let mut alone = toml::Table::new();
            alone.insert("name".into(), name.clone());
            alone.insert(option.clone(), value.clone());
            if let Err(e) = toml::Value::Table(alone).try_into::<search::Strategy>() {
                return Some((
                    format!("{key}.{option}"),
                    e.to_string().trim_end().to_string(),
                ));
            }
        }
    }
    None
}

/// A campaign file read and parsed.
#[derive(Debug, Clone)]
pub struct CampaignFile {
    pub path: PathBuf,
    pub text: String,
    pub config: CampaignConfig,
}

impl CampaignFile {
    pub fn read(path: &Path) -> Result<CampaignFile> {
        let text = solvers::error::read_kind(path, "a campaign file", solvers::error::caps::TOML)
            .with_context(|| format!("cannot read campaign file {}", path.display()))?;
        Self::parse(path, text)
    }

    pub fn parse(path: &Path, text: String) -> Result<CampaignFile> {
        let config: CampaignConfig = toml::from_str(&text).map_err(|e| {
            match strategy_option_error(&text) {
                // A strategy table is read as a whole (its `name` picks the fields), so TOML's
                // error points at the table; this names the option and its line instead.
                Some((key, message)) => error_at(path, &text, &key, message),
                None => {
                    anyhow::anyhow!("campaign {}: {}", path.display(), e.to_string().trim_end())
                }
            }
        })?;
        let file = CampaignFile {
            path: path.to_path_buf(),
            text,
            config,
        };
        file.check()?;
        Ok(file)
    }

    /// An error about `key`, naming the file and the key's line.
    pub fn error_at(&self, key: &str, message: impl std::fmt::Display) -> anyhow::Error {
        error_at(&self.path, &self.text, key, message)
    }

    fn check(&self) -> Result<()> {
        const MAX_NAME: usize = 200;
        let c = &self.config;
        if c.name.trim().is_empty()
            || !c
                .name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
            // `runs/NAME` is the default output folder: `.` or `..` would be runs/ itself or
            // the folder the user stands in.
            || c.name.chars().all(|ch| ch == '.')
        {
            return Err(self.error_at(
                "name",
                format!(
                    "{:?} must use only letters, digits, '-', '_' and '.', with at least one \
                     that is not '.' (it names the folder runs/NAME)",
                    c.name
                ),
            ));
        }
        // A file name holds 255 bytes; the daemon's log and the shard folders add to it.
        if c.name.len() > MAX_NAME {
            return Err(self.error_at(
                "name",
                format!(
                    "{} characters; at most {MAX_NAME} (it names the folder runs/NAME)",
                    c.name.len()
                ),
            ));
        }
        if c.instances.paths.is_empty() && c.instances.generate.is_empty() {
            return Err(self.error_at("instances", "give `paths` or `generate`: no instances"));
        }
        if let ClassesConfig::Auto(word) = &c.instances.classes {
            if word != "auto" {
                return Err(self.error_at(
                    "classes",
                    format!("{word:?}: write \"auto\" or a table class = [instance names]"),
                ));
            }
        }
        if c.instances.per_class == Some(0) {
            return Err(self.error_at("per_class", "must be at least 1"));
        }
        match c.backend {
            BackendChoice::Gpu if c.gpu.is_none() => {
                return Err(self.error_at("backend", "backend \"gpu\" needs a [gpu] table"))
            }
            BackendChoice::Cpu if c.cpu.is_none() => {
                return Err(self.error_at("backend", "backend \"cpu\" needs a [cpu] table"))
            }
            BackendChoice::Auto if c.cpu.is_none() && c.gpu.is_none() => {
                return Err(self.error_at("backend", "give a [gpu] or a [cpu] table (or both)"))
            }
            _ => {}
        }
        for (table, setup) in [("cpu", &c.cpu), ("gpu", &c.gpu)] {
            if setup.as_ref().and_then(|s| s.iterations) == Some(0) {
                // Zero iterations would time the start construction alone.
                return Err(self.error_at(
                    &format!("{table}.iterations"),
                    "must be at least 1 (or leave it out for the algorithm's default)",
                ));
            }
        }
        let b = &c.budget;
        if b.trials == Some(0) {
            return Err(self.error_at("trials", "must be at least 1"));
        }
        if let Some(w) = b.wall_s {
            solvers::limits::seconds(w).map_err(|e| self.error_at("wall_s", e))?;
        }
        if let Some(p) = b.cost_percent {
            if !(p.is_finite() && p > 0.0) {
                return Err(self.error_at(
                    "cost_percent",
                    format!("must be a positive number, found {p}"),
                ));
            }
        }
        if b.production_runs == 0 {
            return Err(self.error_at("production_runs", "must be at least 1"));
        }
        if b.max_attempts == 0 {
            return Err(self.error_at("max_attempts", "must be at least 1"));
        }
        if !(c.quality.margin_percent.is_finite() && c.quality.margin_percent >= 0.0) {
            return Err(self.error_at(
                "margin_percent",
                format!("must be >= 0, found {}", c.quality.margin_percent),
            ));
        }
        if let Some(m) = &c.measurement {
            m.check().map_err(|e| self.error_at("measurement", e))?;
        }
        if c.devices.is_empty() {
            return Err(self.error_at("devices", "list at least one GPU ordinal"));
        }
        // One GPU twice would run two workers on it, each timing the other's kernels.
        if let Some(twice) = c
            .devices
            .iter()
            .enumerate()
            .find_map(|(i, d)| c.devices[..i].contains(d).then_some(d))
        {
            return Err(self.error_at(
                "devices",
                format!("GPU {twice} is listed twice; list each GPU once"),
            ));
        }
        self.searches()?;
        let mode = self.run_mode()?;
        if mode != RunMode::FixedWork {
            // Checked here, once per campaign file read (the run mode is asked for often). A
            // warning, not an error: campaigns written before this check have it, and
            // removing it would change their settings, so `--resume` would refuse them.
            for (table, setup) in [("cpu", &c.cpu), ("gpu", &c.gpu)] {
                if setup.as_ref().is_some_and(|s| s.iterations.is_some()) {
                    eprintln!(
                        "warning: {:#}",
                        self.error_at(
                            &format!("{table}.iterations"),
                            "ignored: a run at a budget or to a target ends by its clock or its \
                             target (iterations belong to the fixed-work objectives time, power \
                             and energy)"
                        )
                    );
                }
            }
        }
        // A fixed-work power or energy objective reads NVML over the energy window; without
        // one no point has the value, and every point fails.
        let window = c.measurement.as_ref().map(|m| m.energy_window_s);
        if mode == RunMode::FixedWork && window == Some(0.0) {
            use search::{Metric, Objective};
            let uses_power = |m: &Metric| matches!(m, Metric::Power | Metric::Energy);
            let needs_window = self.searches()?.iter().any(|(_, o)| match *o {
                Objective::Pareto(a, b) => uses_power(&a) || uses_power(&b),
                o => o.metric().is_some_and(|m| uses_power(&m)),
            });
            if needs_window {
                return Err(self.error_at(
                    "measurement.energy_window_s",
                    "a power or energy objective is measured over the energy window, and a \
                     window of 0 s measures none; give it at least 1 s",
                ));
            }
        }
        if c.racing.first_pairs == 0 {
            return Err(self.error_at("racing.first_pairs", "must be at least 1"));
        }
        if !(c.racing.z.is_finite() && c.racing.z > 0.0) {
            return Err(self.error_at(
                "racing.z",
                format!("must be a positive number, found {}", c.racing.z),
            ));
        }
        Ok(())
    }

    /// The objective of `[[search]]` entry `k` and the key it is written under: its own, else
    /// the campaign's `objective`.
    pub fn search_objective(&self, k: usize) -> (&ObjectiveConfig, String) {
        match &self.config.search[k].objective {
            Some(o) => (o, format!("search[{k}].objective")),
            None => (&self.config.objective, "objective".to_string()),
        }
    }

    /// Every search of a class, in order: `strategy` with `objective`, then each `[[search]]`.
    pub fn searches(&self) -> Result<Vec<(search::Strategy, search::Objective)>> {
        let mut out = Vec::new();
        if let Some(s) = self.main_strategy()? {
            out.push((s, self.objective_of(&self.config.objective, "objective")?.0));
        }
        for (k, s) in self.config.search.iter().enumerate() {
            let (objective, key) = self.search_objective(k);
            out.push((s.strategy.clone(), self.objective_of(objective, &key)?.0));
        }
        Ok(out)
    }

    /// Every search's strategy can search for its objective with its settings
    /// ([`search::Strategy::check_for`]): refused naming `strategy` or `search`, before
    /// anything is queued or measured.
    pub fn check_strategies(
        &self,
        searches: &[(search::Strategy, search::Objective)],
    ) -> Result<()> {
        // `searches` lists `[strategy]` (or the default) first, then each `[[search]]`.
        let main = searches.len() - self.config.search.len();
        for (i, (strategy, objective)) in searches.iter().enumerate() {
            let key = match i.checked_sub(main) {
                None => "strategy".to_string(),
                Some(k) => format!("search[{k}]"),
            };
            strategy
                .check_for(*objective)
                .map_err(|e| self.error_at(&key, format!("{e:#}")))?;
        }
        Ok(())
    }

    /// `[strategy]`, or where a campaign names no search at all, the default for its
    /// objective ([`search::Strategy::default_for`]).
    pub fn main_strategy(&self) -> Result<Option<search::Strategy>> {
        if let Some(s) = &self.config.strategy {
            return Ok(Some(s.clone()));
        }
        if !self.config.search.is_empty() {
            return Ok(None);
        }
        let (objective, _) = self.objective_of(&self.config.objective, "objective")?;
        Ok(Some(search::Strategy::default_for(objective)))
    }

    /// What a production run is: every objective of the campaign must agree on it.
    pub fn run_mode(&self) -> Result<RunMode> {
        let mut kinds = Vec::new();
        if self.main_strategy()?.is_some() {
            kinds.push(self.objective_of(&self.config.objective, "objective")?.1);
        }
        let mut keys = vec!["objective".to_string(); kinds.len()];
        for k in 0..self.config.search.len() {
            let (objective, key) = self.search_objective(k);
            kinds.push(self.objective_of(objective, &key)?.1);
            keys.push(key);
        }
        let kind = kinds.first().copied().unwrap_or(ObjectiveKind::FixedWork);
        if let Some(i) = kinds.iter().position(|k| *k != kind) {
            return Err(self.error_at(
                &keys[i],
                "the searches of one campaign must share what a production run is: all \
                 fixed-work (time, power, energy), all at a budget (gap@budget, energy@budget) \
                 or all to a target (time-to-target, energy-to-target)",
            ));
        }
        let r = &self.config.run;
        let positive = |key: &str, v: Option<f64>| -> Result<Option<f64>> {
            match v {
                Some(x) => match solvers::limits::seconds(x) {
                    Ok(_) => Ok(Some(x)),
                    Err(e) => Err(self.error_at(&format!("run.{key}"), e)),
                },
                None => Ok(None),
            }
        };
        let budget_s = match self.budgets()? {
            list if !list.is_empty() => Some(list[0]),
            _ => positive("budget_s", r.budget_s)?,
        };
        let cap_s = positive("cap_s", r.cap_s)?;
        if let Some(seeds) = r.seeds {
            if !(1..=solvers::limits::MAX_SEEDS).contains(&seeds) {
                return Err(self.error_at(
                    "run.seeds",
                    solvers::limits::range_message(
                        seeds,
                        &format!("1 to {}", solvers::limits::MAX_SEEDS),
                    ),
                ));
            }
        }
        // A key of another kind of run would be ignored without a word (a penalty beside a
        // gap@budget objective, a cap beside a budget): refused, naming the kind it belongs to.
        let foreign: &[(&str, bool, &str)] = match kind {
            ObjectiveKind::FixedWork => &[
                (
                    "budget_s",
                    r.budget_s.is_some(),
                    "gap@budget or energy@budget",
                ),
                (
                    "budgets_s",
                    r.budgets_s.is_some(),
                    "gap@budget or energy@budget",
                ),
                (
                    "target_gap_percent",
                    r.target_gap_percent.is_some(),
                    "time-to-target",
                ),
                ("cap_s", r.cap_s.is_some(), "time-to-target"),
                ("penalty", r.penalty.is_some(), "time-to-target"),
            ],
            ObjectiveKind::Budget => &[
                (
                    "target_gap_percent",
                    r.target_gap_percent.is_some(),
                    "time-to-target",
                ),
                ("cap_s", r.cap_s.is_some(), "time-to-target"),
                ("penalty", r.penalty.is_some(), "time-to-target"),
            ],
            ObjectiveKind::Target => &[(
                "budget_s",
                r.budget_s.is_some(),
                "gap@budget or energy@budget",
            )],
        };
        if let Some((key, _, owner)) = foreign.iter().find(|(_, set, _)| *set) {
            let this = match kind {
                ObjectiveKind::FixedWork => {
                    "fixed-work objectives (time, power, energy) run a fixed number of iterations"
                }
                ObjectiveKind::Budget => "a budget objective runs each trial for `budget_s`",
                ObjectiveKind::Target => {
                    "a target objective runs each trial to its target or `cap_s`"
                }
            };
            return Err(self.error_at(
                &format!("run.{key}"),
                format!("{this}; `{key}` belongs to {owner} and would be ignored here"),
            ));
        }
        Ok(match kind {
            ObjectiveKind::FixedWork => RunMode::FixedWork,
            ObjectiveKind::Target if r.budgets_s.is_some() => {
                return Err(self.error_at(
                    "run.budgets_s",
                    "several budgets belong to gap@budget and energy@budget; a target run \
                     has one cap (`cap_s`)",
                ))
            }
            ObjectiveKind::Budget => RunMode::Budget {
                budget_s: budget_s.ok_or_else(|| {
                    self.error_at(
                        "objective",
                        "gap@budget needs `budget_s` (seconds per production run) in [run]",
                    )
                })?,
            },
            ObjectiveKind::Target => {
                let target = r.target_gap_percent.ok_or_else(|| {
                    self.error_at(
                        "objective",
                        "time-to-target needs `target_gap_percent` in [run]",
                    )
                })?;
                if !(target.is_finite() && target >= 0.0) {
                    return Err(self.error_at(
                        "run.target_gap_percent",
                        format!("must be >= 0, found {target}"),
                    ));
                }
                let penalty = r.penalty.unwrap_or(DEFAULT_PENALTY);
                // A penalised run counts penalty x cap seconds; like every other number of
                // seconds that stays far below where sums and means lose meaning.
                if !(penalty.is_finite() && (1.0..=MAX_PENALTY).contains(&penalty)) {
                    return Err(self.error_at(
                        "run.penalty",
                        format!("must be between 1 and {MAX_PENALTY}, found {penalty}"),
                    ));
                }
                RunMode::Target {
                    target_gap_percent: target,
                    cap_s: cap_s.ok_or_else(|| {
                        self.error_at(
                            "objective",
                            "time-to-target needs `cap_s` (the longest run, seconds) in [run]",
                        )
                    })?,
                    penalty,
                }
            }
        })
    }

    /// The budgets of `[run] budgets_s`, checked (each a valid number of seconds, strictly
    /// increasing, not beside `budget_s`); empty when the campaign names one budget or none.
    pub fn budgets(&self) -> Result<Vec<f64>> {
        let r = &self.config.run;
        let Some(list) = &r.budgets_s else {
            if r.later_seeds.is_some() {
                return Err(self.error_at("run.later_seeds", "belongs with `budgets_s`"));
            }
            return Ok(Vec::new());
        };
        if r.budget_s.is_some() {
            return Err(self.error_at(
                "run.budgets_s",
                "give `budget_s` (one budget) or `budgets_s` (several), not both",
            ));
        }
        if list.is_empty() || list.len() > MAX_BUDGETS {
            return Err(self.error_at(
                "run.budgets_s",
                format!("list 1 to {MAX_BUDGETS} budgets, found {}", list.len()),
            ));
        }
        for &b in list {
            solvers::limits::seconds(b).map_err(|e| self.error_at("run.budgets_s", e))?;
        }
        if list.windows(2).any(|w| w[0] >= w[1]) {
            return Err(self.error_at(
                "run.budgets_s",
                format!("list the budgets in increasing order, each once, found {list:?}"),
            ));
        }
        if let Some(n) = r.later_seeds {
            if !(1..=solvers::limits::MAX_SEEDS).contains(&n) {
                return Err(self.error_at(
                    "run.later_seeds",
                    solvers::limits::range_message(
                        n,
                        &format!("1 to {}", solvers::limits::MAX_SEEDS),
                    ),
                ));
            }
            let seeds = r.seeds.unwrap_or(DEFAULT_SEEDS);
            if seeds >= 1 && n > seeds {
                return Err(self.error_at(
                    "run.later_seeds",
                    format!(
                        "later budgets race on at most the first budget's seeds ({seeds}); \
                         found {n}"
                    ),
                ));
            }
        }
        Ok(list.clone())
    }

    /// The seeds of every production run on one instance.
    pub fn run_seeds(&self) -> Result<Vec<u64>> {
        let count = match self.run_mode()? {
            RunMode::FixedWork => self.config.run.seeds.unwrap_or(1),
            _ => self.config.run.seeds.unwrap_or(DEFAULT_SEEDS),
        };
        Ok((0..u64::from(count))
            .map(|k| self.config.seed.wrapping_add(k))
            .collect())
    }

    /// The objective and the kind of production run it needs, checked.
    /// `key` names where the objective is written (`objective`, `search[K].objective`).
    fn objective_of(
        &self,
        objective: &ObjectiveConfig,
        key: &str,
    ) -> Result<(search::Objective, ObjectiveKind)> {
        use search::Objective;
        let metric = |name: &str| -> Result<(Metric, ObjectiveKind)> {
            Ok(match name {
                "time" => (Metric::Time, ObjectiveKind::FixedWork),
                "power" => (Metric::Power, ObjectiveKind::FixedWork),
                "energy" => (Metric::Energy, ObjectiveKind::FixedWork),
                "gap@budget" => (Metric::Gap, ObjectiveKind::Budget),
                "energy@budget" => (Metric::Energy, ObjectiveKind::Budget),
                "time-to-target" => (Metric::Time, ObjectiveKind::Target),
                "energy-to-target" => (Metric::Energy, ObjectiveKind::Target),
                other => {
                    return Err(self.error_at(
                        key,
                        format!(
                            "unknown objective {other:?}; use time, power or energy (fixed \
                             work), gap@budget or energy@budget, time-to-target or \
                             energy-to-target"
                        ),
                    ))
                }
            })
        };
        Ok(match objective {
            ObjectiveConfig::Single(name) => {
                let (m, kind) = metric(name)?;
                (Objective::single(m), kind)
            }
            ObjectiveConfig::Pareto(pair) => match pair.as_slice() {
                [a, b] if a != b => {
                    let ((ma, ka), (mb, kb)) = (metric(a)?, metric(b)?);
                    if ka != kb {
                        return Err(self.error_at(
                            key,
                            format!(
                                "{a:?} and {b:?} measure different production runs; pair \
                                 gap@budget with energy@budget, time-to-target with \
                                 energy-to-target, or two of time, power, energy"
                            ),
                        ));
                    }
                    (Objective::Pareto(ma, mb), ka)
                }
                _ => {
                    return Err(self.error_at(
                        key,
                        "a Pareto objective is a pair of two different metrics, e.g. [\"time\", \"energy\"]",
                    ))
                }
            },
        })
    }

    /// A path from the campaign file, relative to the file's folder.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.path
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .join(path)
        }
    }
}

/// What kind of production run an objective needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ObjectiveKind {
    FixedWork,
    Budget,
    Target,
}

/// A TOML table of parameter values as a point (integers and strings only).
pub fn point_from_table(table: &toml::Table) -> Result<Point, String> {
    let mut point = Point::new();
    for (name, value) in table {
        let v = match value {
            toml::Value::Integer(i) => Value::Int(*i),
            toml::Value::String(s) => Value::Text(s.clone()),
            toml::Value::Boolean(b) => Value::Text(if *b { "on" } else { "off" }.into()),
            // Kept as written (`1.0`, not `1`), so an error quoting it shows what the file says.
            toml::Value::Float(f) => Value::Text(format!("{f:?}")),
            other => {
                return Err(format!(
                    "parameter `{name}`: {other} is not an integer or a string"
                ))
            }
        };
        point.set(name.clone(), v);
    }
    Ok(point)
}

/// Errors from a bad campaign file stop before anything is measured.
pub fn ensure_no_overlap(listed: &BTreeMap<String, Vec<String>>) -> Result<()> {
    let mut seen = BTreeMap::new();
    for (class, names) in listed {
        for name in names {
            if let Some(other) = seen.insert(name.clone(), class.clone()) {
                bail!("instance {name} is listed in classes {other} and {class}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{line_of, CampaignFile, RunMode};

    fn campaign(objective: &str, run: &str) -> anyhow::Result<CampaignFile> {
        let text = format!(
            "name = \"c\"\nobjective = {objective}\n{run}\n[instances]\npaths = [\"x.dat\"]\n\
             [cpu]\nspace = \"s.toml\"\nbaseline = {{ algorithm = \"tabu\" }}\n\
             [strategy]\nname = \"random\"\n"
        );
        CampaignFile::parse(std::path::Path::new("c.toml"), text)
    }

    #[test]
    fn quality_objectives_need_their_run_keys_and_agree_on_the_run() {
        let f = campaign("\"gap@budget\"", "[run]\nbudget_s = 0.5\nseeds = 3").unwrap();
        assert_eq!(f.run_mode().unwrap(), RunMode::Budget { budget_s: 0.5 });
        assert_eq!(f.run_seeds().unwrap(), [1, 2, 3]);
        let e = campaign("\"gap@budget\"", "").unwrap_err().to_string();
        assert!(e.contains("budget_s") && e.contains("line 2"), "{e}");
        let f = campaign(
            "\"time-to-target\"",
            "[run]\ntarget_gap_percent = 1.0\ncap_s = 2.0",
        )
        .unwrap();
        assert_eq!(
            f.run_mode().unwrap(),
            RunMode::Target {
                target_gap_percent: 1.0,
                cap_s: 2.0,
                penalty: 10.0
            }
        );
        for bad in ["0.5", "1e300", "nan"] {
            let e = campaign(
                "\"time-to-target\"",
                &format!("[run]\ntarget_gap_percent = 1.0\ncap_s = 2.0\npenalty = {bad}"),
            )
            .and_then(|f| f.run_mode())
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("run.penalty") && e.contains("between 1 and"),
                "{bad}: {e}"
            );
        }
        let e = campaign(
            "[\"gap@budget\", \"time-to-target\"]",
            "[run]\nbudget_s = 1",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("different production runs"), "{e}");
        let e = campaign("\"time\"", "[run]\nbudget_s = 1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("run.budget_s") || e.contains("budget_s"), "{e}");
        assert_eq!(campaign("\"time\"", "").unwrap().run_seeds().unwrap(), [1]);
    }

    #[test]
    fn a_campaign_chooses_its_observers_and_an_unknown_one_names_the_file_and_line() {
        use measure::observer::{ObserverKind, DEFAULT_OBSERVERS};
        let f = campaign("\"time\"", "[measurement]\nobservers = [\"nvml-energy\"]").unwrap();
        let m = f.config.measurement.clone().unwrap();
        assert_eq!(m.observers, [ObserverKind::NvmlEnergy]);
        let f = campaign("\"time\"", "").unwrap();
        assert_eq!(
            f.config.measurement.clone().unwrap_or_default().observers,
            DEFAULT_OBSERVERS
        );
        let e = campaign("\"time\"", "[measurement]\nobservers = [\"rapl\"]").unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("c.toml") && e.contains("line 4") && e.contains("rapl"),
            "{e}"
        );
    }

    #[test]
    fn a_gpu_listed_twice_is_refused() {
        let e = campaign("\"time\"", "devices = [0, 1, 0]").unwrap_err();
        assert!(format!("{e:#}").contains("GPU 0 is listed twice"), "{e:#}");
        campaign("\"time\"", "devices = [0, 1]").unwrap();
    }

    /// A name of dots alone would make `runs/NAME` the runs folder itself or the user's own.
    #[test]
    fn a_name_of_dots_alone_is_refused() {
        for name in [".", "..", "..."] {
            let text = format!(
                "name = \"{name}\"\n[instances]\npaths = [\"x.dat\"]\n[cpu]\nspace = \"s.toml\"\n\
                 baseline = {{ algorithm = \"tabu\" }}\n"
            );
            let e = CampaignFile::parse(std::path::Path::new("c.toml"), text).unwrap_err();
            assert!(format!("{e:#}").contains("line 1: `name`"), "{e:#}");
        }
    }

    /// A fixed-work power or energy objective needs the energy window it is read over (with
    /// none, every point failed without saying why).
    #[test]
    fn a_power_objective_without_an_energy_window_is_refused() {
        let none = "[measurement]\nenergy_window_s = 0";
        for objective in ["\"energy\"", "\"power\"", "[\"time\", \"energy\"]"] {
            let e = format!("{:#}", campaign(objective, none).unwrap_err());
            assert!(
                e.contains("`measurement.energy_window_s`") && e.contains("line"),
                "{e}"
            );
        }
        campaign("\"time\"", none).unwrap();
    }

    #[test]
    fn lines_of_plain_and_dotted_keys() {
        let text = "name = \"x\"\n[gpu]\nbaseline = 1\n\n[cpu]\nspace = \"s\"\nbaseline = 2\n[cpu.overrides]\n";
        assert_eq!(line_of(text, "name"), Some(1));
        assert_eq!(line_of(text, "baseline"), Some(3));
        assert_eq!(line_of(text, "cpu"), Some(5));
        assert_eq!(line_of(text, "cpu.baseline"), Some(7));
        assert_eq!(line_of(text, "gpu.baseline"), Some(3));
        assert_eq!(line_of(text, "nothing"), None);
        let text = "objective = \"time\"\n[[search]]\nobjective = \"a\"\n\n[[search]]\n\
                    strategy = 1\nobjective = \"b\"\n[[search]]\n";
        assert_eq!(line_of(text, "search[0].objective"), Some(3));
        assert_eq!(line_of(text, "search[1].objective"), Some(7));
        assert_eq!(line_of(text, "search[1]"), Some(5));
        // An entry without the key: its header; no such entry: none.
        assert_eq!(line_of(text, "search[2].objective"), Some(8));
        assert_eq!(line_of(text, "search[3].objective"), None);
    }

    #[test]
    fn a_bad_objective_of_a_search_entry_names_that_entrys_line() {
        let text = "name = \"c\"\nobjective = \"time\"\n[instances]\npaths = [\"x.dat\"]\n\
                    [cpu]\nspace = \"s.toml\"\nbaseline = { algorithm = \"tabu\" }\n\
                    [[search]]\nstrategy = { name = \"random\" }\nobjective = \"time\"\n\
                    [[search]]\nstrategy = { name = \"random\" }\nobjective = \"gap\"\n";
        let e = CampaignFile::parse(std::path::Path::new("c.toml"), text.into()).unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("line 13") && e.contains("search[1].objective") && e.contains("\"gap\""),
            "{e}"
        );
    }

    /// A `[[search]]` without an objective takes the campaign's (it took `time`, so a gap
    /// campaign's extra search was refused as another kind of run, blamed on `objective`).
    #[test]
    fn a_search_entry_without_an_objective_takes_the_campaigns() {
        let f = campaign(
            "\"gap@budget\"",
            "[run]\nbudget_s = 0.5\n[[search]]\nstrategy = { name = \"random\" }",
        )
        .unwrap();
        let searches = f.searches().unwrap();
        assert_eq!(searches.len(), 2);
        assert!(searches.iter().all(|(_, o)| *o == search::Objective::Gap));
        // Two kinds of run: the entry that differs is named.
        let e = campaign(
            "\"gap@budget\"",
            "[run]\nbudget_s = 0.5\n[[search]]\nstrategy = { name = \"random\" }\nobjective = \"time\"",
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("`search[0].objective`"), "{e:#}");
    }
}
