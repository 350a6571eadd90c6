//! What `mats tune` writes into `summary.json` when a campaign ends, and `mats export`,
//! `mats merge` and the reports read back as these types.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{Comparison, Point};

/// What a finished (or stopped) campaign reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneSummary {
    pub campaign: String,
    pub output: PathBuf,
    pub backend: String,
    pub device: String,
    pub classes: Vec<ClassSummary>,
    pub new_trials: u64,
    pub wall_s: f64,
    /// Seconds the devices spent measuring (warm-ups, timed runs, energy windows, budgeted
    /// runs): the honest cost, next to the paper's evaluations-as-% figure.
    pub device_seconds: f64,
    /// The same as production runs actually executed: device seconds over the baseline's
    /// mean production-run time (None when that is unknown).
    pub production_runs: Option<f64>,
    /// Share of the wall time the GPUs spent measuring, averaged over the GPUs.
    pub gpu_busy_share: Option<f64>,
    /// Median seconds per trial outside its measurement window.
    pub median_trial_overhead_s: Option<f64>,
    pub stopped: Option<String>,
    /// The shards' folders, when `mats merge` joined this summary from theirs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassSummary {
    pub class: String,
    pub instances: Vec<String>,
    /// What the first search minimised (`gap@budget`, `time`, `time-to-target`, ...), and
    /// its value for the baseline and the best point found.
    pub metric: String,
    pub baseline_value: Option<f64>,
    pub best_value: Option<f64>,
    pub baseline_time_s: Option<f64>,
    pub best_point: Option<Point>,
    pub best_time_s: Option<f64>,
    /// Time of the baseline over time of the best point (fixed-work objectives).
    pub speedup: Option<f64>,
    pub evaluations: u32,
    /// Candidates racing dropped early, and the trials that saved.
    pub raced: u32,
    pub saved_trials: u32,
    /// The winner and the baseline re-measured interleaved on fresh seeds.
    pub final_check: Option<Comparison>,
    /// The winner, the default solver and the baseline on the class's held-out instances.
    pub holdout: Option<Comparison>,
    /// The seconds per run this class was tuned at, when the campaign names several budgets
    /// (`class` is then `CLASS@BUDGETs`, see [`crate::budget`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// Pareto objectives: the class's non-dominated points of the campaign's pair, each with
    /// all it measured, re-measured on fresh seeds where `remeasured` says so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub front: Vec<FrontPoint>,
}

/// One point of a class's front, with every quantity measured for it (means over the class's
/// instances and seeds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontPoint {
    pub point: Point,
    pub gap_percent: Option<f64>,
    pub energy_j: Option<f64>,
    pub power_w: Option<f64>,
    pub time_s: f64,
    /// The values come from the verification's fresh seeds, not the search's own.
    #[serde(default)]
    pub remeasured: bool,
    /// The re-measure's highest per-instance mean power and energy: what a cap is held to,
    /// since one instance of a class can draw well above the class's mean (absent before
    /// the re-measure, and in summaries written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_energy_j: Option<f64>,
}

impl TuneSummary {
    /// Parses the text of `path`, a campaign folder's `summary.json` (the engine reads it
    /// through the capped reader every file goes through).
    pub fn parse(text: &str, path: &std::path::Path) -> Result<TuneSummary, String> {
        serde_json::from_str(text)
            .map_err(|e| format!("{} is not a campaign summary: {e}", path.display()))
    }

    /// A class's front point at `point` (`class` as the summary names it, `CLASS@BUDGETs`
    /// for a budget's class).
    pub fn front_point(&self, class: &str, point: &Point) -> Option<&FrontPoint> {
        self.classes
            .iter()
            .find(|c| c.class == class)?
            .front
            .iter()
            .find(|f| &f.point == point)
    }

    /// The role ("baseline" or "default") and point that won a class's final re-measure,
    /// when it was not the search's own winner.
    pub fn verdict(&self, class: &str) -> Option<(String, Point)> {
        let check = self
            .classes
            .iter()
            .find(|c| c.class == class)?
            .final_check
            .as_ref()?;
        let winner = check.winner.as_deref()?;
        if winner == "tuned" {
            return None;
        }
        let point = check.points.get(winner)?.clone();
        Some((winner.to_string(), point))
    }
}
