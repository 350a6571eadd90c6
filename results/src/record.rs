//! What the store keeps: campaigns, instances, search runs, trials and the evaluations a run
//! made. These are plain data; `store` reads and writes them.

use serde::{Deserialize, Serialize};

use crate::point::Point;

/// Life of one trial (one point measured on one instance on one device).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrialStatus {
    /// Written before the launch; still `started` on resume means the process died during it.
    Started,
    /// Measured, and its solution re-scored correctly.
    Ok,
    /// The point could not run (compile error, launch configuration the device refuses).
    Failed,
    /// It ran, but its solution was not valid or its reported cost did not match the CPU score.
    Invalid,
    /// It took the worker (or the whole campaign process) down.
    Crashed,
}

impl TrialStatus {
    /// The word stored in the database and written to CSV/JSON (`parse` reads it back).
    pub fn as_str(self) -> &'static str {
        match self {
            TrialStatus::Started => "started",
            TrialStatus::Ok => "ok",
            TrialStatus::Failed => "failed",
            TrialStatus::Invalid => "invalid",
            TrialStatus::Crashed => "crashed",
        }
    }

    /// The status `as_str` wrote, or `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "started" => TrialStatus::Started,
            "ok" => TrialStatus::Ok,
            "failed" => TrialStatus::Failed,
            "invalid" => TrialStatus::Invalid,
            "crashed" => TrialStatus::Crashed,
            _ => return None,
        })
    }
}

/// Everything measured about a finished trial. Fields a backend cannot measure (power on the
/// CPU, registers of a CPU solver) stay `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Median wall (GPU: CUDA event) seconds of one production run.
    pub time_s: Option<f64>,
    /// (max - min) / median of the timed repetitions.
    pub time_spread: Option<f64>,
    /// Average power over the energy window, watts.
    pub power_w: Option<f64>,
    /// Energy of one production run, joules.
    pub energy_j: Option<f64>,
    pub sm_clock_mhz: Option<u32>,
    pub mem_clock_mhz: Option<u32>,
    pub temperature_c: Option<u32>,
    /// Throttle reasons seen during the window, empty when none.
    pub throttle: Option<String>,
    pub registers: Option<u32>,
    pub spills: Option<u32>,
    pub shared_bytes: Option<u32>,
    pub compile_s: Option<f64>,
    pub cache_hit: Option<bool>,
    /// Objective of the returned solution, re-scored on the CPU.
    pub objective: Option<i64>,
    /// Gap to the best known value, percent.
    pub gap_percent: Option<f64>,
    /// Wall seconds of the production run this trial's solution comes from (for a budgeted
    /// run: the budget as it was spent, or the time the target was reached).
    #[serde(default)]
    pub run_s: Option<f64>,
    /// Seconds the GPU spent in the run's kernels (CUDA events).
    #[serde(default)]
    pub kernel_s: Option<f64>,
    /// Wall seconds the whole trial occupied its device (warm-up, timed runs, energy window):
    /// the honest cost of tuning.
    #[serde(default)]
    pub measure_s: Option<f64>,
    /// Seconds until the run first reached the campaign's target; None when it never did.
    #[serde(default)]
    pub target_s: Option<f64>,
    /// Work done by the run: main-loop iterations, candidate moves evaluated, kernel launches.
    #[serde(default)]
    pub iterations: Option<u64>,
    #[serde(default)]
    pub moves: Option<u64>,
    #[serde(default)]
    pub launches: Option<u64>,
}

/// An instance as a campaign sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceRecord {
    pub name: String,
    /// Where it came from: a path, or a generator spec such as `pfsp:20x5:seed=873654221`.
    pub source: String,
    pub family: String,
    pub class: String,
    /// The family's features as JSON (density, symmetry, ...).
    pub features: serde_json::Value,
    pub best_known: Option<i64>,
}

/// One trial as read back from the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRow {
    pub id: i64,
    pub point_id: i64,
    pub point: Point,
    pub instance: String,
    pub class: String,
    /// `cpu (N threads)`, or the GPU's name and ordinal (`NVIDIA H200 #0`).
    pub device: String,
    pub status: TrialStatus,
    /// 1 for the first try of this (point, instance, seed, device), 2 after one crash, ...
    pub attempt: u32,
    /// The production run's seed (quality objectives run several per instance).
    #[serde(default)]
    pub seed: u64,
    /// RFC 3339 timestamps.
    pub started_at: String,
    pub ended_at: Option<String>,
    pub measurement: Measurement,
    /// Compile log, error message or crash reason.
    pub log: String,
}

/// One search run: a strategy optimising one objective (or a Pareto pair) on one class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub class: String,
    /// Strategy name as the campaign wrote it ("hill-climbing", "staged:opt-then-thread", ...).
    pub strategy: String,
    /// The metric it minimises: "time", "power", "energy", "gap", or a Pareto pair
    /// ("pareto:gap,energy").
    pub objective: String,
    pub options: serde_json::Value,
    pub started_at: String,
    pub ended_at: Option<String>,
}

/// A mean over (instance, seed) pairs with its sample standard deviation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanSd {
    pub mean: f64,
    pub sd: f64,
    pub n: usize,
}

impl MeanSd {
    /// None for no values or a non-finite one.
    pub fn of(values: &[f64]) -> Option<MeanSd> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let sd = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Some(MeanSd {
            mean,
            sd,
            n: values.len(),
        })
    }

    /// Standard error of the mean.
    pub fn se(&self) -> f64 {
        self.sd / (self.n.max(1) as f64).sqrt()
    }
}

/// Points compared side by side, interleaved, on the same (instance, seed) pairs: by role
/// ("tuned", "baseline", "default"), the metric's mean and spread. The tuner records it in
/// the options of a class's `final` and `holdout` runs (under `comparison`) and in
/// summary.json; reports read it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub instances: Vec<String>,
    pub seeds: Vec<u64>,
    pub values: std::collections::BTreeMap<String, Option<MeanSd>>,
    pub points: std::collections::BTreeMap<String, Point>,
    /// The role with the lowest mean; "tuned" wherever it ties for the lowest (nothing is
    /// gained by switching).
    pub winner: Option<String>,
    /// Roles measured but refused by the quality guard of a fixed-work campaign (their mean
    /// gap above the baseline's on the same pairs by more than the margin): no value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<String>,
    /// Roles a trial of which failed (crashed, timed out, an invalid answer): no value, and
    /// the winner is among the others because of it, not because they were better.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

impl Comparison {
    /// The other roles whose mean equals the winner's: a "best" that is only a tie should say
    /// so (the quickstart's classes where every point reaches the optimum).
    pub fn level_with_winner(&self) -> Vec<&str> {
        let mean = |role: &str| self.values.get(role).copied().flatten().map(|v| v.mean);
        let Some(best) = self.winner.as_deref().and_then(mean) else {
            return Vec::new();
        };
        self.values
            .keys()
            .map(String::as_str)
            .filter(|&r| Some(r) != self.winner.as_deref())
            .filter(|&r| mean(r).is_some_and(|m| (m - best).abs() <= 1e-12))
            .collect()
    }
}

/// How an evaluation of a point on a class ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvaluationStatus {
    /// Every trial ok and the quality guard met.
    Ok,
    /// Measured, but its solutions were worse than the quality guard allows.
    Rejected,
    /// At least one trial failed, was invalid or crashed.
    Failed,
}

impl EvaluationStatus {
    /// The word stored in the database (`parse` reads it back).
    pub fn as_str(self) -> &'static str {
        match self {
            EvaluationStatus::Ok => "ok",
            EvaluationStatus::Rejected => "rejected",
            EvaluationStatus::Failed => "failed",
        }
    }

    /// The status `as_str` wrote, or `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "ok" => EvaluationStatus::Ok,
            "rejected" => EvaluationStatus::Rejected,
            "failed" => EvaluationStatus::Failed,
            _ => return None,
        })
    }
}

/// A run's visit of one point: the class-level aggregate of its trials (means over the
/// class's instances), in the order the strategy asked for them. Convergence plots read these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationRow {
    pub run_id: i64,
    /// 0, 1, 2, ... within the run.
    pub seq: u32,
    pub point_id: i64,
    pub point: Point,
    pub status: EvaluationStatus,
    pub time_s: Option<f64>,
    pub power_w: Option<f64>,
    pub energy_j: Option<f64>,
    pub gap_percent: Option<f64>,
    /// Trials this evaluation had to measure (0 when every trial came from the store).
    pub new_trials: u32,
}

/// A campaign as stored: its name, the TOML it was started from, and the settings the
/// reports need (baseline point, production runs, objectives, device) as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignRow {
    pub id: i64,
    pub name: String,
    pub config_toml: String,
    pub settings: serde_json::Value,
    pub created_at: String,
}

/// The point exported as a class's tuned bundle, and for which preference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportRow {
    pub class: String,
    /// "quality", "time", "energy" or "power".
    pub prefer: String,
    pub point_id: i64,
    pub point: Point,
    /// The bundle folder name in the export (classes with the same best point share one).
    pub bundle: String,
}

/// An instance as read back from the store: its id (what trials refer to) and its record.
/// Serialized flat: `{"id": 3, "name": ..., "source": ..., ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceRow {
    /// Store id, stable for the life of the store.
    pub id: i64,
    /// The instance as the tuner described it.
    #[serde(flatten)]
    pub record: InstanceRecord,
}

/// An evaluation to append to a run: an `EvaluationRow` without the parts the store assigns
/// (`seq`, the next number in the run) or already knows (the point, from `point_id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewEvaluation {
    /// The run (from `Store::begin_run`) this evaluation belongs to.
    pub run_id: i64,
    /// The point evaluated (from `Store::point`), in the run's campaign.
    pub point_id: i64,
    /// How the evaluation ended.
    pub status: EvaluationStatus,
    /// Class mean of the trials' times, seconds.
    pub time_s: Option<f64>,
    /// Class mean of the trials' average power, watts.
    pub power_w: Option<f64>,
    /// Class mean of the trials' energy, joules.
    pub energy_j: Option<f64>,
    /// Class mean of the trials' gaps, percent.
    pub gap_percent: Option<f64>,
    /// Trials this evaluation had to measure (0 when every trial came from the store).
    pub new_trials: u32,
}

impl From<&EvaluationRow> for NewEvaluation {
    /// Drops `seq` and `point`: the store assigns the one and looks up the other.
    fn from(row: &EvaluationRow) -> Self {
        NewEvaluation {
            run_id: row.run_id,
            point_id: row.point_id,
            status: row.status,
            time_s: row.time_s,
            power_w: row.power_w,
            energy_j: row.energy_j,
            gap_percent: row.gap_percent,
            new_trials: row.new_trials,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(values: &[(&str, Option<f64>)], winner: &str) -> Comparison {
        Comparison {
            instances: vec!["tai12a".into()],
            seeds: vec![1, 2],
            values: values
                .iter()
                .map(|(r, m)| (r.to_string(), m.map(|m| MeanSd::of(&[m, m]).unwrap())))
                .collect(),
            points: Default::default(),
            winner: Some(winner.into()),
            rejected: Vec::new(),
            failed: Vec::new(),
        }
    }

    #[test]
    fn a_tie_for_the_best_names_the_roles_level_with_the_winner() {
        let c = comparison(
            &[
                ("tuned", Some(0.0)),
                ("default", Some(0.0)),
                ("baseline", Some(1.6)),
            ],
            "tuned",
        );
        assert_eq!(c.level_with_winner(), ["default"]);
        let c = comparison(
            &[
                ("tuned", Some(0.05)),
                ("default", Some(0.13)),
                ("baseline", None),
            ],
            "tuned",
        );
        assert!(c.level_with_winner().is_empty());
        let mut none = c.clone();
        none.winner = None;
        assert!(none.level_with_winner().is_empty());
    }
}
