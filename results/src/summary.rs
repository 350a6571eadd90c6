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
    /// Trials this run measured: a resume counts its own (`mats results` lists every trial
    /// of the store), as do `wall_s` and `device_seconds`.
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
    /// The shard (`K/N`) each folder of `merged_from` ran, in the same order (empty in merges
    /// written before it was recorded): a folder that has gone since still counts as merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_shards: Vec<String>,
    /// What a merge found unfinished, a sentence each: a shard folder without a summary (its
    /// run was killed), one its user stopped, a shard of the campaign no merge was given.
    /// Export and report treat the merged campaign as unfinished while any is listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished_shards: Vec<String>,
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

impl ClassSummary {
    /// A class's summary before anything was measured: its name, instances and metric.
    pub fn new(
        class: impl Into<String>,
        instances: Vec<String>,
        metric: impl Into<String>,
    ) -> Self {
        ClassSummary {
            class: class.into(),
            instances,
            metric: metric.into(),
            baseline_value: None,
            best_value: None,
            baseline_time_s: None,
            best_point: None,
            best_time_s: None,
            speedup: None,
            evaluations: 0,
            raced: 0,
            saved_trials: 0,
            final_check: None,
            holdout: None,
            budget_s: None,
            front: Vec::new(),
        }
    }
}

impl TuneSummary {
    /// A summary of `classes` with nothing measured (no trials, no time, not stopped): the
    /// start of one a caller fills in.
    pub fn of_classes(
        campaign: impl Into<String>,
        output: PathBuf,
        backend: impl Into<String>,
        device: impl Into<String>,
        classes: Vec<ClassSummary>,
    ) -> TuneSummary {
        TuneSummary {
            campaign: campaign.into(),
            output,
            backend: backend.into(),
            device: device.into(),
            classes,
            new_trials: 0,
            wall_s: 0.0,
            device_seconds: 0.0,
            production_runs: None,
            gpu_busy_share: None,
            median_trial_overhead_s: None,
            stopped: None,
            merged_from: Vec::new(),
            merged_shards: Vec::new(),
            unfinished_shards: Vec::new(),
        }
    }

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

    /// Where a class's held-out instances found another role (the default or the baseline)
    /// better than `exported`, the point a bundle runs: a sentence saying so with both means,
    /// for the export and the runs of that bundle to repeat (a tuned point that loses on the
    /// instances the search never saw must not pass without a word). None where `exported`
    /// won or tied on the holdouts, or the class had none.
    pub fn holdout_warning(&self, class: &str, exported: &Point) -> Option<String> {
        let summary = self.classes.iter().find(|c| c.class == class)?;
        let holdout = summary.holdout.as_ref()?;
        let mean_of = |role: &str| holdout.values.get(role).copied().flatten();
        let (role, mine) = holdout
            .points
            .iter()
            .find(|(_, p)| *p == exported)
            .and_then(|(r, _)| Some((r.as_str(), mean_of(r)?)))?;
        let (other, theirs) = holdout
            .points
            .iter()
            .filter(|(_, p)| *p != exported)
            .filter_map(|(r, _)| Some((r.as_str(), mean_of(r)?)))
            .min_by(|a, b| a.1.mean.total_cmp(&b.1.mean))?;
        (theirs.mean < mine.mean - 1e-12).then(|| {
            format!(
                "on the campaign's held-out instances ({}; {} seeds) the {role} point was worse \
                 than the {other}: {} {:.3} ± {:.3} against {:.3} ± {:.3}",
                holdout.instances.join(", "),
                holdout.seeds.len(),
                summary.metric,
                mine.mean,
                mine.sd,
                theirs.mean,
                theirs.sd
            )
        })
    }

    /// The point a class's search ended on: the one its final re-measure and holdouts
    /// compared (among points tied on the objective, the search's own choice).
    pub fn best_point(&self, class: &str) -> Option<&Point> {
        self.classes
            .iter()
            .find(|c| c.class == class)?
            .best_point
            .as_ref()
    }

    /// Whether `role` failed a trial of a class's final re-measure.
    pub fn final_role_failed(&self, class: &str, role: &str) -> bool {
        self.classes
            .iter()
            .find(|c| c.class == class)
            .and_then(|c| c.final_check.as_ref())
            .is_some_and(|check| check.failed.iter().any(|r| r == role))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::MeanSd;
    use std::collections::BTreeMap;

    fn point(threads: i64) -> Point {
        let mut p = Point::new();
        p.set("threads", threads);
        p
    }

    fn summary(holdout: &[(&str, i64, f64)]) -> TuneSummary {
        let mean = |m: f64| {
            Some(MeanSd {
                mean: m,
                sd: 0.01,
                n: 3,
            })
        };
        let comparison = Comparison {
            instances: vec!["g2".into()],
            seeds: vec![1, 2, 3],
            values: holdout
                .iter()
                .map(|&(r, _, m)| (r.to_string(), mean(m)))
                .collect::<BTreeMap<_, _>>(),
            points: holdout
                .iter()
                .map(|&(r, t, _)| (r.to_string(), point(t)))
                .collect::<BTreeMap<_, _>>(),
            winner: None,
            rejected: Vec::new(),
            failed: Vec::new(),
        };
        TuneSummary::of_classes(
            "c",
            PathBuf::from("runs/c"),
            "gpu",
            "d",
            vec![ClassSummary {
                holdout: Some(comparison),
                ..ClassSummary::new("k", vec!["g1".into()], "gap@budget")
            }],
        )
    }

    #[test]
    fn a_point_that_lost_on_the_holdouts_is_named_with_both_means() {
        // The H200 run of hwsw-synthetic's class: 768 threads tuned, 256 the default.
        let s = summary(&[
            ("baseline", 256, -0.002),
            ("default", 256, -0.002),
            ("tuned", 768, 0.031),
        ]);
        let warning = s
            .holdout_warning("k", &point(768))
            .expect("the tuned point lost");
        assert!(
            warning.contains("the tuned point was worse than the"),
            "{warning}"
        );
        assert!(warning.contains("gap@budget 0.031"), "{warning}");
        assert!(warning.contains("against -0.002"), "{warning}");
        assert!(warning.contains("(g2; 3 seeds)"), "{warning}");
        // The default exported instead (the final re-measure chose it) won: nothing to say.
        assert_eq!(s.holdout_warning("k", &point(256)), None);
        // Another class, or a point the holdouts never ran: nothing.
        assert_eq!(s.holdout_warning("other", &point(768)), None);
        assert_eq!(s.holdout_warning("k", &point(512)), None);
    }

    #[test]
    fn a_point_that_won_or_tied_on_the_holdouts_passes() {
        let won = summary(&[("default", 256, 0.05), ("tuned", 768, 0.01)]);
        assert_eq!(won.holdout_warning("k", &point(768)), None);
        let tied = summary(&[("default", 256, 0.0), ("tuned", 768, 0.0)]);
        assert_eq!(tied.holdout_warning("k", &point(768)), None);
        // Without holdouts there is no verdict either way.
        let mut none = summary(&[]);
        none.classes[0].holdout = None;
        assert_eq!(none.holdout_warning("k", &point(768)), None);
    }
}
