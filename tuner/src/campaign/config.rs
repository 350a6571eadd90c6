//! The campaign file (TOML): what to tune, on what, how, for how long, against what.
//!
//! Every table denies unknown keys, so a typo is an error that names the key and its line
//! (the `toml` crate reports spans) rather than a silently ignored setting.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use results::{Point, Value};
use serde::Deserialize;

use crate::measure::MeasureSettings;

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
    /// The search of every class; see also `search`.
    #[serde(default)]
    pub strategy: Option<crate::search::Strategy>,
    /// Further searches of every class, each with its own objective, run after `strategy`
    /// (e.g. staged orders side by side, or time, power and Pareto searches for comparison).
    #[serde(default)]
    pub search: Vec<SearchConfig>,
    #[serde(default)]
    pub budget: BudgetConfig,
    /// `"time"`, `"power"`, `"energy"`, or a pair for a Pareto search, e.g. `["time", "energy"]`.
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

/// One more search per class: a strategy and what it minimises.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    pub strategy: crate::search::Strategy,
    #[serde(default = "default_objective")]
    pub objective: ObjectiveConfig,
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
    pub overrides: Option<crate::space::SpaceOverrides>,
    /// The point every speedup is measured against; must be a point of the space.
    pub baseline: toml::Table,
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
pub fn line_of(text: &str, key: &str) -> Option<usize> {
    if let Some((table, rest)) = key.rsplit_once('.') {
        if let Some(start) = line_of(text, table) {
            let section: Vec<&str> = text
                .lines()
                .skip(start)
                .take_while(|l| !l.trim_start().starts_with('['))
                .collect();
            return Some(line_of(&section.join("\n"), rest).map_or(start, |k| start + k));
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

/// A campaign file read and parsed.
#[derive(Debug, Clone)]
pub struct CampaignFile {
    pub path: PathBuf,
    pub text: String,
    pub config: CampaignConfig,
}

impl CampaignFile {
    pub fn read(path: &Path) -> Result<CampaignFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read campaign file {}", path.display()))?;
        Self::parse(path, text)
    }

    pub fn parse(path: &Path, text: String) -> Result<CampaignFile> {
        let config: CampaignConfig = toml::from_str(&text).map_err(|e| {
            anyhow::anyhow!("campaign {}: {}", path.display(), e.to_string().trim_end())
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
        match line_of(&self.text, key) {
            Some(line) => anyhow::anyhow!(
                "campaign {}, line {line}: `{key}`: {message}",
                self.path.display()
            ),
            None => anyhow::anyhow!("campaign {}: `{key}`: {message}", self.path.display()),
        }
    }

    fn check(&self) -> Result<()> {
        let c = &self.config;
        if c.name.trim().is_empty()
            || !c
                .name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
        {
            return Err(self.error_at(
                "name",
                format!(
                    "{:?} must be non-empty and use only letters, digits, '-', '_' and '.'",
                    c.name
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
        let b = &c.budget;
        if b.trials == Some(0) {
            return Err(self.error_at("trials", "must be at least 1"));
        }
        if let Some(w) = b.wall_s {
            if !(w.is_finite() && w > 0.0) {
                return Err(
                    self.error_at("wall_s", format!("must be a positive number, found {w}"))
                );
            }
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
        if c.strategy.is_none() && c.search.is_empty() {
            return Err(self.error_at(
                "strategy",
                "no search: give a [strategy] table (or [[search]] entries)",
            ));
        }
        self.searches()?;
        Ok(())
    }

    /// Every search of a class, in order: `strategy` with `objective`, then each `[[search]]`.
    pub fn searches(&self) -> Result<Vec<(crate::search::Strategy, crate::search::Objective)>> {
        let mut out = Vec::new();
        if let Some(s) = &self.config.strategy {
            out.push((s.clone(), self.objective_of(&self.config.objective)?));
        }
        for s in &self.config.search {
            out.push((s.strategy.clone(), self.objective_of(&s.objective)?));
        }
        Ok(out)
    }

    /// The objective, checked.
    fn objective_of(&self, objective: &ObjectiveConfig) -> Result<crate::search::Objective> {
        use crate::search::{Metric, Objective};
        let metric = |name: &str| -> Result<Metric> {
            Ok(match name {
                "time" => Metric::Time,
                "power" => Metric::Power,
                "energy" => Metric::Energy,
                other => {
                    return Err(self.error_at(
                        "objective",
                        format!("unknown objective {other:?}; use time, power or energy"),
                    ))
                }
            })
        };
        Ok(match objective {
            ObjectiveConfig::Single(name) => match metric(name)? {
                Metric::Time => Objective::Time,
                Metric::Power => Objective::Power,
                Metric::Energy => Objective::Energy,
            },
            ObjectiveConfig::Pareto(pair) => match pair.as_slice() {
                [a, b] if a != b => Objective::Pareto(metric(a)?, metric(b)?),
                _ => {
                    return Err(self.error_at(
                        "objective",
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

/// A TOML table of parameter values as a point (integers and strings only).
pub fn point_from_table(table: &toml::Table) -> Result<Point, String> {
    let mut point = Point::new();
    for (name, value) in table {
        let v = match value {
            toml::Value::Integer(i) => Value::Int(*i),
            toml::Value::String(s) => Value::Text(s.clone()),
            toml::Value::Boolean(b) => Value::Text(if *b { "on" } else { "off" }.into()),
            toml::Value::Float(f) => Value::Text(f.to_string()),
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
    use super::line_of;

    #[test]
    fn lines_of_plain_and_dotted_keys() {
        let text = "name = \"x\"\n[gpu]\nbaseline = 1\n\n[cpu]\nspace = \"s\"\nbaseline = 2\n[cpu.overrides]\n";
        assert_eq!(line_of(text, "name"), Some(1));
        assert_eq!(line_of(text, "baseline"), Some(3));
        assert_eq!(line_of(text, "cpu"), Some(5));
        assert_eq!(line_of(text, "cpu.baseline"), Some(7));
        assert_eq!(line_of(text, "gpu.baseline"), Some(3));
        assert_eq!(line_of(text, "nothing"), None);
    }
}
