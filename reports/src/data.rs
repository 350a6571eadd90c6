//! Figure data derived from a [`ReportInput`]: pure functions, no drawing.
//!
//! Definitions (agreed with the tuner):
//! - speedup of a point in a class = time of the baseline point in that class / its time;
//! - cost % of an evaluation = 100 * (seq + 1) / production runs;
//! - only evaluations with status `ok` are candidates for "best"; `rejected` ones (worse
//!   solutions than the quality guard allows) are drawn but never chosen.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use results::{EvaluationRow, EvaluationStatus, Point, RunRow};

use crate::settings::Settings;
use crate::ReportInput;

pub use results::Metric;

/// What the report derives from a [`Metric`]: the baseline's level and improvements in the
/// convergence figures, and the value in an evaluation.
pub trait MetricFigures: Copy {
    fn baseline_level(self) -> f64;
    fn improvement(self, base: f64, value: f64) -> Option<f64>;
    fn of(self, m: &Measured) -> Option<f64>;
}

impl MetricFigures for Metric {
    /// The improvement convergence plots show at the baseline: 1 for the ratio
    /// baseline / value, 0 for a gap (percentage points gained over the baseline).
    fn baseline_level(self) -> f64 {
        match self {
            Metric::Gap => 0.0,
            _ => 1.0,
        }
    }

    /// The improvement of `value` over the baseline's `base`: baseline / value (a speedup
    /// for time), or for a gap, which is 0 at the optimum, the percentage points gained.
    fn improvement(self, base: f64, value: f64) -> Option<f64> {
        match self {
            Metric::Gap => Some(base - value),
            _ => speedup(base, value),
        }
    }

    /// The value of this metric in an evaluation.
    fn of(self, m: &Measured) -> Option<f64> {
        let v = match self {
            Metric::Time => m.time_s,
            Metric::Power => m.power_w,
            Metric::Energy => m.energy_j,
            // 0 is the best gap there is, and below 0 beats the reference value.
            Metric::Gap => return m.gap_percent.filter(|x| x.is_finite()),
        };
        // Non-finite or non-positive values cannot be plotted nor divided by: treat as absent.
        v.filter(|x| x.is_finite() && *x > 0.0)
    }
}

/// One evaluation's numbers, detached from its run.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub point: Point,
    pub key: String,
    pub status: EvaluationStatus,
    pub time_s: Option<f64>,
    pub power_w: Option<f64>,
    pub energy_j: Option<f64>,
    pub gap_percent: Option<f64>,
}

impl Measured {
    fn from_row(e: &EvaluationRow) -> Measured {
        Measured {
            point: e.point.clone(),
            key: e.point.key(),
            status: e.status,
            time_s: e.time_s,
            power_w: e.power_w,
            energy_j: e.energy_j,
            gap_percent: e.gap_percent,
        }
    }

    /// Whether this evaluation may be chosen as a best point.
    pub fn is_ok(&self) -> bool {
        self.status == EvaluationStatus::Ok
    }
}

/// Where a class's baseline measurement came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineSource {
    /// An evaluation whose point equals `settings.baseline`.
    Settings,
    /// The settings name no baseline (or none matched): the first evaluation of a run with
    /// strategy "baseline" in the class.
    BaselineRun,
}

/// A search run of a class and its evaluations in the order it asked for them.
#[derive(Debug, Clone)]
pub struct Run<'a> {
    pub row: &'a RunRow,
    pub evaluations: Vec<(u32, Measured)>,
}

/// Everything the figures need about one class.
#[derive(Debug, Clone, Default)]
pub struct ClassData<'a> {
    pub instances: usize,
    pub baseline: Option<(Measured, BaselineSource)>,
    /// Distinct points evaluated in the class (first `ok` evaluation of each point, else the
    /// first evaluation), in first-seen order.
    pub points: Vec<Measured>,
    pub runs: Vec<Run<'a>>,
}

impl ClassData<'_> {
    /// Baseline time in seconds, if known and positive.
    pub fn baseline_time(&self) -> Option<f64> {
        self.baseline.as_ref().and_then(|(m, _)| Metric::Time.of(m))
    }

    /// Speedup of a measurement over this class's baseline.
    pub fn speedup(&self, m: &Measured) -> Option<f64> {
        speedup(self.baseline_time()?, Metric::Time.of(m)?)
    }

    /// The `ok` point lowest in `metric` (gap, energy...), as the campaign's summary picks
    /// it: on a tie the search's first such point, the baseline only where nothing else ties
    /// (the summary's best is the search's; the baseline is measured beside it).
    pub fn lowest(&self, metric: Metric) -> Option<(&Measured, f64)> {
        let baseline = self.baseline.as_ref().map(|(m, _)| &m.point);
        self.own_ok_points()
            .filter_map(|m| Some((m, metric.of(m)?)))
            .min_by(|a, b| {
                a.1.total_cmp(&b.1).then_with(|| {
                    (Some(&a.0.point) == baseline).cmp(&(Some(&b.0.point) == baseline))
                })
            })
    }

    /// The `ok` point with the highest speedup among those the class's own searches
    /// evaluated.
    pub fn best_point(&self) -> Option<(&Measured, f64)> {
        self.own_ok_points()
            .filter_map(|m| Some((m, self.speedup(m)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The `ok` points the class's own runs evaluated: a cross-class run measures other
    /// classes' answers here, which are not this class's (the table's best point was one
    /// where the summary had another).
    fn own_ok_points(&self) -> impl Iterator<Item = &Measured> {
        let keys = |cross: bool| -> BTreeSet<&str> {
            self.runs
                .iter()
                .filter(|r| (r.row.strategy == "cross-class") == cross)
                .flat_map(|r| r.evaluations.iter().map(|(_, m)| m.key.as_str()))
                .collect()
        };
        let own = keys(false);
        let elsewhere_only: BTreeSet<&str> = keys(true).difference(&own).copied().collect();
        self.points
            .iter()
            .filter(move |m| m.is_ok() && !elsewhere_only.contains(m.key.as_str()))
    }
}

/// The campaign digested once: settings, classes, baselines, deduplicated points, runs.
#[derive(Debug, Clone)]
pub struct Analysis<'a> {
    pub settings: Settings,
    /// Class names in sorted order (from instances and runs).
    pub classes: Vec<String>,
    pub class_data: BTreeMap<String, ClassData<'a>>,
    /// Remarks about the input itself (orphan evaluations, missing baselines).
    pub notes: Vec<String>,
}

/// Why a speedup figure is not drawn for a quality campaign.
const SPEEDUP_OF_A_QUALITY_CAMPAIGN: &str = "the campaign tunes gap at a fixed budget: a run \
    lasts the budget or returns earlier with its answer (a 2-opt descent at its local optimum), \
    so a speedup would only rank how soon a run returned, not how good its answer is";

impl<'a> Analysis<'a> {
    /// A quality campaign (gap at a budget or to a target): its production runs last a fixed
    /// time, so speedups say nothing and its classes are told apart by gap.
    pub fn quality(&self) -> bool {
        self.settings
            .objectives
            .as_deref()
            .is_some_and(|o| o.contains("gap"))
    }

    /// Digests the input; never fails, records what it could not use in `notes`.
    pub fn new(input: &'a ReportInput) -> Analysis<'a> {
        let settings = Settings::parse(&input.campaign.settings);
        let mut notes = Vec::new();
        let mut class_data: BTreeMap<String, ClassData<'a>> = BTreeMap::new();
        for inst in &input.instances {
            class_data.entry(inst.class.clone()).or_default().instances += 1;
        }
        // The final re-measure (fresh seeds) and the holdouts (other instances) verify a
        // class's answer: their means are not comparable with the search's, so the figures
        // leave them out and the verdict section (crate::verdict) shows them.
        let mut runs: Vec<&RunRow> = input
            .runs
            .iter()
            .filter(|r| !is_verification(&r.strategy))
            .collect();
        runs.sort_by_key(|r| r.id);
        let mut by_run: HashMap<i64, Vec<&EvaluationRow>> = HashMap::new();
        for e in &input.evaluations {
            by_run.entry(e.run_id).or_default().push(e);
        }
        let known: BTreeSet<i64> = input.runs.iter().map(|r| r.id).collect();
        let orphans = input
            .evaluations
            .iter()
            .filter(|e| !known.contains(&e.run_id))
            .count();
        if orphans > 0 {
            notes.push(format!(
                "{orphans} evaluation(s) belong to no known run and are ignored"
            ));
        }
        for run in runs {
            let mut evs = by_run.remove(&run.id).unwrap_or_default();
            evs.sort_by_key(|e| e.seq);
            let cd = class_data.entry(run.class.clone()).or_default();
            for e in &evs {
                let m = Measured::from_row(e);
                match cd.points.iter_mut().find(|p| p.key == m.key) {
                    // A later ok evaluation replaces an earlier failed/rejected one of the
                    // same point, so a point that ever measured ok counts as ok.
                    Some(p) if !p.is_ok() && m.is_ok() => *p = m,
                    Some(_) => {}
                    None => cd.points.push(m),
                }
            }
            cd.runs.push(Run {
                row: run,
                evaluations: evs.iter().map(|e| (e.seq, Measured::from_row(e))).collect(),
            });
        }
        // A campaign of several budgets tunes each class once per budget (`CLASS@0.5s`):
        // those are its classes, each with the instances of its data class; the bare data
        // class, which no run names, is no class of the report (it showed as a phantom row).
        let budgeted: Vec<(String, String)> = class_data
            .keys()
            .filter_map(|k| {
                let (base, budget) = k.rsplit_once('@')?;
                budget.ends_with('s').then(|| (k.clone(), base.to_string()))
            })
            .collect();
        for (key, base) in &budgeted {
            let count = input.instances.iter().filter(|i| &i.class == base).count();
            if let Some(cd) = class_data.get_mut(key) {
                cd.instances = count;
            }
        }
        for (_, base) in &budgeted {
            if class_data.get(base).is_some_and(|cd| cd.runs.is_empty()) {
                class_data.remove(base);
            }
        }
        // Parameters of kind "class" name the data set, not the code: a baseline written
        // without them still matches the points of every class.
        let ignore = settings.parameters_of_kind(&["class"]).unwrap_or_default();
        // A time-to-target run that never reached the target counts penalty x cap (PAR10):
        // a mean above the cap holds such runs, and a speedup over it is over the penalty.
        let run = input.campaign.settings.get("run");
        let cap_s = run
            .filter(|r| r.get("mode").and_then(|m| m.as_str()) == Some("target"))
            .and_then(|r| r.get("cap_s"))
            .and_then(|c| c.as_f64());
        for (class, cd) in class_data.iter_mut() {
            cd.baseline = find_baseline(cd, settings.baseline.as_ref(), &ignore);
            if cd.baseline.is_none() && !cd.runs.is_empty() {
                notes.push(format!(
                    "class {class}: no evaluation of the baseline point; speedups are not shown"
                ));
            }
            if let (Some(cap), Some(time)) = (cap_s, cd.baseline_time()) {
                if time > cap {
                    notes.push(format!(
                        "class {class}: the baseline missed the target in some runs (mean time \
                         {time:.3} s, above the cap of {cap} s: each miss counts the penalty \
                         times the cap), so its speedups are over that penalty, not over a \
                         time the baseline took"
                    ));
                }
            }
        }
        let classes = class_data.keys().cloned().collect();
        Analysis {
            settings,
            classes,
            class_data,
            notes,
        }
    }

    /// Classes that have at least one run.
    pub fn searched_classes(&self) -> impl Iterator<Item = (&String, &ClassData<'a>)> {
        self.class_data.iter().filter(|(_, cd)| !cd.runs.is_empty())
    }
}

fn find_baseline(
    cd: &ClassData<'_>,
    baseline: Option<&Point>,
    ignore: &[String],
) -> Option<(Measured, BaselineSource)> {
    let usable = |m: &&Measured| Metric::Time.of(m).is_some();
    if let Some(b) = baseline {
        let all = cd
            .runs
            .iter()
            .flat_map(|r| r.evaluations.iter().map(|(_, m)| m));
        let matching: Vec<&Measured> = all
            .filter(|m| same_point(&m.point, b, ignore))
            .filter(usable)
            .collect();
        // Prefer an ok measurement; the baseline defines the quality bar, so a rejected
        // one is unusual but still a measured time.
        if let Some(m) = matching.iter().find(|m| m.is_ok()).or(matching.first()) {
            return Some(((*m).clone(), BaselineSource::Settings));
        }
    }
    cd.runs
        .iter()
        .filter(|r| r.row.strategy == "baseline")
        .flat_map(|r| r.evaluations.iter().map(|(_, m)| m))
        .find(usable)
        .map(|m| (m.clone(), BaselineSource::BaselineRun))
}

/// Runs that re-measure a class's answer after its search: `final`, `holdout` and `front`
/// (a Pareto search's front on fresh seeds).
pub fn is_verification(strategy: &str) -> bool {
    matches!(strategy, "final" | "holdout" | "front")
}

/// Point equality ignoring the named parameters.
pub fn same_point(a: &Point, b: &Point, ignore: &[String]) -> bool {
    let strip = |p: &Point| {
        p.0.iter()
            .filter(|(k, _)| !ignore.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    strip(a) == strip(b)
}

/// `baseline / value` when both are positive and finite.
pub fn speedup(baseline: f64, value: f64) -> Option<f64> {
    let s = baseline / value;
    (baseline > 0.0 && value > 0.0 && s.is_finite()).then_some(s)
}

/// Cost of the evaluation at `seq` as a percentage of the production runs.
pub fn cost_percent(seq: u32, production_runs: u64) -> f64 {
    100.0 * (f64::from(seq) + 1.0) / production_runs.max(1) as f64
}

/// Geometric mean of positive values; `None` for an empty slice or a non-positive value.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// Indices of the non-dominated points when both coordinates are minimised, sorted by the
/// first coordinate (then the second). Equal points do not dominate each other.
///
/// The non-dominated points when minimising both coordinates (indices, by the first
/// coordinate); the store's implementation, so reports and exports agree on fronts.
pub use results::pareto_front;

/// Running maximum of `(cost, value)` samples; samples without a value keep the previous
/// best, and nothing is emitted before the first value.
pub fn best_so_far(samples: &[(f64, Option<f64>)]) -> Vec<(f64, f64)> {
    let mut best: Option<f64> = None;
    let mut out = Vec::new();
    for &(cost, value) in samples {
        if let Some(v) = value {
            best = Some(best.map_or(v, |b| b.max(v)));
        }
        if let Some(b) = best {
            out.push((cost, b));
        }
    }
    out
}

/// One point of a Pareto figure.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontPoint {
    pub key: String,
    pub x: f64,
    pub y: f64,
    /// Rejected by the quality guard: drawn, never on the front.
    pub rejected: bool,
}

/// Data of one Pareto figure of a class (the campaign's own pair, e.g. gap vs energy; time
/// vs power and time vs energy for fixed work).
#[derive(Debug, Clone)]
pub struct ParetoData {
    pub class: String,
    pub x_metric: Metric,
    pub y_metric: Metric,
    pub points: Vec<FrontPoint>,
    /// Indices into `points` of the non-dominated ok points, by increasing time.
    pub front: Vec<usize>,
    pub baseline: Option<(f64, f64)>,
    /// Exported bundles of the class: (label, time, y); exports whose point was never
    /// evaluated in the class are listed in `unplaced_exports`.
    pub exports: Vec<(String, f64, f64)>,
    pub unplaced_exports: Vec<String>,
    /// The class's front re-measured on the verification's fresh seeds (the `front` run):
    /// (point key, x, y). These are the values `solve --tuned` caps compare; the baseline,
    /// measured beside the front for the quality guard of a fixed-work campaign, is left out.
    pub remeasured: Vec<(String, f64, f64)>,
}

/// The pairs of metrics the report draws fronts of: each Pareto objective of the campaign
/// (`pareto:gap,energy`), then time against power and energy where time is what varies (fixed
/// work, time to target), or gap against energy for a single quality objective. Drawing time
/// where it is the fixed budget would show nothing.
pub fn figure_pairs(objectives: Option<&str>) -> Vec<(Metric, Metric)> {
    let mut pairs = Vec::new();
    let mut gap = false;
    for objective in objectives.unwrap_or("").split_whitespace() {
        let metrics = Metric::all_of(objective);
        gap |= metrics.contains(&Metric::Gap);
        if let (true, [a, b]) = (objective.starts_with("pareto:"), metrics.as_slice()) {
            pairs.push((*a, *b));
        }
    }
    let defaults: &[(Metric, Metric)] = match (gap, pairs.is_empty()) {
        (true, true) => &[(Metric::Gap, Metric::Energy)],
        (true, false) => &[],
        (false, _) => &[
            (Metric::Time, Metric::Power),
            (Metric::Time, Metric::Energy),
        ],
    };
    for pair in defaults {
        if !pairs.contains(pair) {
            pairs.push(*pair);
        }
    }
    pairs
}

/// Pareto data of `class` for `x_metric` against `y_metric`, or why there is none.
pub fn pareto_data(
    input: &ReportInput,
    an: &Analysis<'_>,
    class: &str,
    (x_metric, y_metric): (Metric, Metric),
) -> Result<ParetoData, String> {
    let cd = an.class_data.get(class).ok_or("no runs in this class")?;
    let points: Vec<FrontPoint> = cd
        .points
        .iter()
        .filter(|m| m.status != EvaluationStatus::Failed)
        .filter_map(|m| {
            Some(FrontPoint {
                key: m.key.clone(),
                x: x_metric.of(m)?,
                y: y_metric.of(m)?,
                rejected: !m.is_ok(),
            })
        })
        .collect();
    if points.is_empty() {
        return Err(format!(
            "no evaluation in this class has both {} and {} (a CPU campaign measures no power \
             or energy)",
            x_metric.name(),
            y_metric.name()
        ));
    }
    let ok: Vec<usize> = (0..points.len()).filter(|&i| !points[i].rejected).collect();
    let vals: Vec<[f64; 2]> = ok.iter().map(|&i| [points[i].x, points[i].y]).collect();
    let front = pareto_front(&vals).into_iter().map(|j| ok[j]).collect();
    let baseline = cd
        .baseline
        .as_ref()
        .and_then(|(m, _)| Some((x_metric.of(m)?, y_metric.of(m)?)));
    let mut exports = Vec::new();
    let mut unplaced_exports = Vec::new();
    for ex in input.exports.iter().filter(|e| e.class == class) {
        let label = format!("export {} (prefer {})", ex.bundle, ex.prefer);
        let key = ex.point.key();
        match points.iter().find(|p| p.key == key) {
            Some(p) => exports.push((label, p.x, p.y)),
            None => unplaced_exports.push(label),
        }
    }
    let baseline_key = cd.baseline.as_ref().map(|(m, _)| m.key.as_str());
    let front_runs: BTreeSet<i64> = input
        .runs
        .iter()
        .filter(|r| r.class == class && r.strategy == "front")
        .map(|r| r.id)
        .collect();
    let remeasured = input
        .evaluations
        .iter()
        .filter(|e| front_runs.contains(&e.run_id) && e.status == EvaluationStatus::Ok)
        .map(Measured::from_row)
        .filter(|m| Some(m.key.as_str()) != baseline_key)
        .filter_map(|m| Some((m.key.clone(), x_metric.of(&m)?, y_metric.of(&m)?)))
        .collect();
    Ok(ParetoData {
        class: class.to_string(),
        x_metric,
        y_metric,
        points,
        front,
        baseline,
        exports,
        unplaced_exports,
        remeasured,
    })
}

/// One line of a convergence figure.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvergenceLine {
    pub run_id: i64,
    pub label: String,
    /// (cost %, best-so-far improvement over the baseline).
    pub points: Vec<(f64, f64)>,
    pub evaluations: usize,
}

/// Convergence of the runs of `class` that optimise `metric`: best-so-far `baseline / value`
/// (the speedup for time; for a gap, `baseline - value` in percentage points) against cost %.
pub fn convergence_data(
    an: &Analysis<'_>,
    class: &str,
    metric: Metric,
) -> Result<Vec<ConvergenceLine>, String> {
    let cd = an.class_data.get(class).ok_or("no runs in this class")?;
    let (base, _) = cd.baseline.as_ref().ok_or("no baseline measurement")?;
    let base = metric
        .of(base)
        .ok_or_else(|| format!("the baseline has no {}", metric.name()))?;
    let mut lines = Vec::new();
    for run in &cd.runs {
        let s = run.row.strategy.as_str();
        // The baseline and cross-class runs evaluate fixed points; they do not search.
        if s == "baseline" || s == "cross-class" {
            continue;
        }
        if !Metric::all_of(&run.row.objective).contains(&metric) {
            continue;
        }
        let samples: Vec<(f64, Option<f64>)> = run
            .evaluations
            .iter()
            .map(|(seq, m)| {
                let v = m
                    .is_ok()
                    .then(|| metric.of(m))
                    .flatten()
                    .and_then(|v| metric.improvement(base, v));
                (cost_percent(*seq, an.settings.production_runs), v)
            })
            .collect();
        let points = best_so_far(&samples);
        if points.is_empty() {
            continue;
        }
        lines.push(ConvergenceLine {
            run_id: run.row.id,
            label: format!("{} ({}) #{}", s, run.row.objective, run.row.id),
            points,
            evaluations: run.evaluations.len(),
        });
    }
    if lines.is_empty() {
        return Err(format!(
            "no search run optimising {} measured an ok point",
            metric.name()
        ));
    }
    Ok(lines)
}

/// One point of the compiler sub-space (Fig. 2).
#[derive(Debug, Clone, PartialEq)]
pub struct SubspacePoint {
    pub key: String,
    pub speedup: f64,
    pub power_w: Option<f64>,
}

/// Evaluations of `class` that share the baseline's non-compiler parameters (Fig. 2).
pub fn compiler_subspace(an: &Analysis<'_>, class: &str) -> Result<Vec<SubspacePoint>, String> {
    let cd = an.class_data.get(class).ok_or("no runs in this class")?;
    let base = an
        .settings
        .baseline
        .as_ref()
        .ok_or("the settings name no baseline point")?;
    let compiler = an
        .settings
        .parameters_of_kind(&["flag", "define"])
        .ok_or("the settings list no parameter kinds")?;
    if compiler.is_empty() {
        return Err("the space has no compiler parameters (flags or defines)".into());
    }
    let ignore_class = an
        .settings
        .parameters_of_kind(&["class"])
        .unwrap_or_default();
    let fixed = |p: &Point| {
        p.0.iter()
            .filter(|(k, _)| !compiler.contains(k) && !ignore_class.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    let want = fixed(base);
    let pts: Vec<SubspacePoint> = cd
        .points
        .iter()
        .filter(|m| m.is_ok() && fixed(&m.point) == want)
        .filter_map(|m| {
            Some(SubspacePoint {
                key: m.key.clone(),
                speedup: cd.speedup(m)?,
                power_w: Metric::Power.of(m),
            })
        })
        .collect();
    if pts.len() < 3 {
        return Err(format!(
            "only {} ok point(s) vary just the compiler parameters around the baseline (3 needed)",
            pts.len()
        ));
    }
    Ok(pts)
}

/// Grouped bars: one group per category (class), one bar per series.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub y_label: String,
    /// Values are seconds: the figure picks s, ms or µs and scales them.
    pub is_time: bool,
    pub categories: Vec<String>,
    /// (series name, one value per category; `None` where it has none).
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// A reference line (1.0 for speedups).
    pub reference: Option<f64>,
}

/// Staged vs combined search (Fig. 3): best speedup each staged strategy reached per class.
pub fn staged_bars(an: &Analysis<'_>) -> Result<Bars, String> {
    const STAGED: [&str; 3] = [
        "staged:opt-then-thread",
        "staged:thread-then-opt",
        "staged:combined",
    ];
    let categories: Vec<String> = an.searched_classes().map(|(c, _)| c.clone()).collect();
    let mut series = Vec::new();
    for strategy in STAGED {
        let values: Vec<Option<f64>> = categories
            .iter()
            .map(|c| {
                let cd = &an.class_data[c];
                cd.runs
                    .iter()
                    .filter(|r| r.row.strategy == strategy)
                    .flat_map(|r| r.evaluations.iter())
                    .filter(|(_, m)| m.is_ok())
                    .filter_map(|(_, m)| cd.speedup(m))
                    .max_by(f64::total_cmp)
            })
            .collect();
        if values.iter().any(Option::is_some) {
            series.push((strategy.trim_start_matches("staged:").to_string(), values));
        }
    }
    if series.len() < 2 {
        return Err(format!(
            "needs at least two of the staged strategies with speedups ({} found)",
            series.len()
        ));
    }
    Ok(Bars {
        y_label: "best speedup over baseline (x)".into(),
        is_time: false,
        categories,
        series,
        reference: Some(1.0),
    })
}

/// Data-tuned vs tuned (Fig. 4), with the key of the one point tuned over all classes.
pub fn data_tuned_bars(an: &Analysis<'_>) -> Result<(Bars, String), String> {
    if an.quality() {
        return Err(SPEEDUP_OF_A_QUALITY_CAMPAIGN.into());
    }
    let classes: Vec<&String> = an
        .searched_classes()
        .filter(|(_, cd)| cd.baseline_time().is_some())
        .map(|(c, _)| c)
        .collect();
    if classes.len() < 2 {
        return Err("needs at least two classes with a baseline".into());
    }
    // Points evaluated ok in every class, with their speedup in each.
    let mut per_point: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for c in &classes {
        let cd = &an.class_data[*c];
        for m in cd.points.iter().filter(|m| m.is_ok()) {
            if let Some(s) = cd.speedup(m) {
                per_point.entry(m.key.clone()).or_default().push(s);
            }
        }
    }
    let candidates: Vec<(&String, f64)> = per_point
        .iter()
        .filter(|(_, v)| v.len() == classes.len())
        .filter_map(|(k, v)| Some((k, geometric_mean(v)?)))
        .collect();
    // The baseline is evaluated in every class by construction; without another point
    // measured everywhere (a cross-class run) the comparison says nothing.
    let baselines: BTreeSet<String> = classes
        .iter()
        .filter_map(|c| {
            an.class_data[*c]
                .baseline
                .as_ref()
                .map(|(m, _)| m.key.clone())
        })
        .collect();
    if candidates.iter().all(|(k, _)| baselines.contains(*k)) {
        return Err(
            "no point other than the baseline was evaluated in every class (no cross-class run)"
                .into(),
        );
    }
    let Some((tuned_key, _)) = candidates.into_iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Err("no point was evaluated in every class".into());
    };
    let tuned_values = &per_point[tuned_key];
    let data_tuned: Vec<Option<f64>> = classes
        .iter()
        .map(|c| an.class_data[*c].best_point().map(|(_, s)| s))
        .collect();
    Ok((
        Bars {
            y_label: "speedup over baseline (x)".into(),
            is_time: false,
            categories: classes.iter().map(|c| (*c).clone()).collect(),
            series: vec![
                ("data-tuned (best of the class)".into(), data_tuned),
                (
                    "tuned (best over all classes)".into(),
                    tuned_values.iter().map(|v| Some(*v)).collect(),
                ),
            ],
            reference: Some(1.0),
        },
        tuned_key.clone(),
    ))
}

/// With and without algorithmic choice (Fig. 5).
pub fn algorithmic_choice_bars(an: &Analysis<'_>) -> Result<Bars, String> {
    if an.quality() {
        return Err(SPEEDUP_OF_A_QUALITY_CAMPAIGN.into());
    }
    let param = an
        .settings
        .variant_parameter()
        .ok_or("the search space has no variant parameter")?;
    let base_variant = an
        .settings
        .baseline
        .as_ref()
        .and_then(|b| b.get(&param))
        .cloned()
        .ok_or("the baseline point names no variant")?;
    let variants: BTreeSet<_> = an
        .class_data
        .values()
        .flat_map(|cd| cd.points.iter())
        .filter(|m| m.is_ok())
        .filter_map(|m| m.point.get(&param).cloned())
        .collect();
    if variants.len() < 2 {
        return Err(format!("only {} variant(s) were evaluated", variants.len()));
    }
    let categories: Vec<String> = an.searched_classes().map(|(c, _)| c.clone()).collect();
    let best = |c: &String, only_base: bool| {
        let cd = &an.class_data[c];
        cd.points
            .iter()
            .filter(|m| m.is_ok())
            .filter(|m| !only_base || m.point.get(&param) == Some(&base_variant))
            .filter_map(|m| cd.speedup(m))
            .max_by(f64::total_cmp)
    };
    Ok(Bars {
        y_label: "best speedup over baseline (x)".into(),
        is_time: false,
        series: vec![
            (
                format!("{param} = {base_variant} only"),
                categories.iter().map(|c| best(c, true)).collect(),
            ),
            (
                "all variants".into(),
                categories.iter().map(|c| best(c, false)).collect(),
            ),
        ],
        categories,
        reference: Some(1.0),
    })
}

/// Tuning for time vs power vs Pareto (Fig. 6): a time panel and a power panel.
pub fn objective_bars(an: &Analysis<'_>) -> Result<[Bars; 2], String> {
    let categories: Vec<String> = an.searched_classes().map(|(c, _)| c.clone()).collect();
    // (series name, run selector, metric the chosen point minimises)
    type Pick = (&'static str, fn(&str) -> bool, Metric);
    let picks: [Pick; 4] = [
        ("tuned for time", |o| o == "time", Metric::Time),
        ("tuned for power", |o| o == "power", Metric::Power),
        (
            "Pareto: time-best",
            |o| o.starts_with("pareto:"),
            Metric::Time,
        ),
        (
            "Pareto: power-best",
            |o| o.starts_with("pareto:"),
            Metric::Power,
        ),
    ];
    let mut time_series = Vec::new();
    let mut power_series = Vec::new();
    let mut kinds = BTreeSet::new();
    for (name, selects, minimise) in picks {
        let chosen: Vec<Option<&Measured>> = categories
            .iter()
            .map(|c| {
                an.class_data[c]
                    .runs
                    .iter()
                    .filter(|r| r.row.strategy != "cross-class" && selects(&r.row.objective))
                    .flat_map(|r| chosen_points(r))
                    .filter(|m| Metric::Time.of(m).is_some() && Metric::Power.of(m).is_some())
                    .min_by(|a, b| {
                        let key = |m: &Measured| minimise.of(m).unwrap_or(f64::INFINITY);
                        key(a).total_cmp(&key(b))
                    })
            })
            .collect();
        if chosen.iter().all(Option::is_none) {
            continue;
        }
        kinds.insert(name.split(':').next().unwrap_or(name));
        time_series.push((
            name.to_string(),
            chosen
                .iter()
                .map(|m| m.and_then(|m| Metric::Time.of(m)))
                .collect(),
        ));
        power_series.push((
            name.to_string(),
            chosen
                .iter()
                .map(|m| m.and_then(|m| Metric::Power.of(m)))
                .collect(),
        ));
    }
    if kinds.len() < 2 {
        return Err(format!(
            "needs runs of at least two of time, power and Pareto objectives with time and power measured ({} found)",
            kinds.len()
        ));
    }
    Ok([
        Bars {
            y_label: "time per production run".into(),
            is_time: true,
            categories: categories.clone(),
            series: time_series,
            reference: None,
        },
        Bars {
            y_label: "average power (W)".into(),
            is_time: false,
            categories,
            series: power_series,
            reference: None,
        },
    ])
}

/// The points a run would hand out: for a single objective, its ok evaluations (the caller
/// picks the minimum); for a Pareto run, the ok points on its own front.
fn chosen_points<'r>(run: &'r Run<'_>) -> Vec<&'r Measured> {
    let ok: Vec<&Measured> = run
        .evaluations
        .iter()
        .map(|(_, m)| m)
        .filter(|m| m.is_ok())
        .collect();
    let metrics = Metric::all_of(&run.row.objective);
    if !run.row.objective.starts_with("pareto:") || metrics.len() != 2 {
        return ok;
    }
    let with: Vec<(&Measured, [f64; 2])> = ok
        .into_iter()
        .filter_map(|m| Some((m, [metrics[0].of(m)?, metrics[1].of(m)?])))
        .collect();
    let vals: Vec<[f64; 2]> = with.iter().map(|(_, v)| *v).collect();
    pareto_front(&vals).into_iter().map(|i| with[i].0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A campaign of several budgets has one class per (data class, budget), each with its
    /// data class's instances, and no phantom row for the bare data class.
    #[test]
    fn a_budgeted_campaigns_classes_are_its_budgets() {
        let record = |name: &str| results::InstanceRecord {
            name: name.into(),
            source: String::new(),
            family: "qap".into(),
            class: "q".into(),
            features: serde_json::json!({}),
            best_known: Some(1),
        };
        let run = |id, class: &str| RunRow {
            id,
            class: class.into(),
            strategy: "hill-climbing".into(),
            objective: "gap".into(),
            options: serde_json::json!({}),
            started_at: String::new(),
            ended_at: None,
        };
        let input = ReportInput {
            campaign: results::CampaignRow {
                id: 1,
                name: "c".into(),
                config_toml: String::new(),
                settings: serde_json::json!({}),
                created_at: "t".into(),
            },
            instances: vec![record("a"), record("b")],
            runs: vec![run(1, "q@0.5s"), run(2, "q@2s")],
            evaluations: Vec::new(),
            trials: Vec::new(),
            exports: Vec::new(),
            unfinished: None,
        };
        let an = Analysis::new(&input);
        assert_eq!(an.classes, vec!["q@0.5s".to_string(), "q@2s".to_string()]);
        assert_eq!(an.class_data["q@0.5s"].instances, 2);
    }

    /// A time-to-target baseline whose mean time is above the cap missed the target in some
    /// runs (each counted at the penalty): the report says its speedups are over that penalty.
    #[test]
    fn a_penalised_baseline_is_named() {
        let run = RunRow {
            id: 1,
            class: "q".into(),
            strategy: "hill-climbing".into(),
            objective: "time".into(),
            options: serde_json::json!({}),
            started_at: String::new(),
            ended_at: None,
        };
        let point: Point = [("starts".to_string(), results::Value::Int(1))]
            .into_iter()
            .collect();
        let input = ReportInput {
            campaign: results::CampaignRow {
                id: 1,
                name: "c".into(),
                config_toml: String::new(),
                settings: serde_json::json!({
                    "baseline": {"starts": 1},
                    "run": {"mode": "target", "cap_s": 0.2, "penalty": 10.0, "target_gap_percent": 1.0},
                }),
                created_at: "t".into(),
            },
            instances: Vec::new(),
            runs: vec![run],
            evaluations: vec![results::EvaluationRow {
                run_id: 1,
                seq: 0,
                point_id: 0,
                point,
                status: EvaluationStatus::Ok,
                time_s: Some(2.0),
                power_w: None,
                energy_j: None,
                gap_percent: Some(0.5),
                new_trials: 0,
            }],
            trials: Vec::new(),
            exports: Vec::new(),
            unfinished: None,
        };
        let an = Analysis::new(&input);
        assert!(
            an.notes.iter().any(|n| n.contains("missed the target")),
            "{:?}",
            an.notes
        );
    }

    #[test]
    fn the_lowest_point_prefers_the_search_over_a_tied_baseline() {
        let measured = |starts: i64, gap: f64| Measured {
            point: [("starts".to_string(), results::Value::Int(starts))]
                .into_iter()
                .collect(),
            key: format!("starts={starts}"),
            status: EvaluationStatus::Ok,
            time_s: Some(starts as f64),
            power_w: None,
            energy_j: None,
            gap_percent: Some(gap),
        };
        let cd = ClassData {
            instances: 1,
            baseline: Some((measured(16, 0.0), BaselineSource::BaselineRun)),
            points: vec![
                measured(16, 0.0),
                measured(4, 0.5),
                measured(256, 0.0),
                measured(64, 0.0),
            ],
            runs: Vec::new(),
        };
        assert_eq!(
            cd.lowest(Metric::Gap).map(|(m, _)| m.key.as_str()),
            Some("starts=256")
        );
        // The fastest point is another: a speedup is no quality campaign's answer.
        assert_eq!(
            cd.best_point().map(|(m, _)| m.key.as_str()),
            Some("starts=4")
        );
        // A faster point that only a cross-class run measured here is another class's answer.
        let cross = RunRow {
            id: 9,
            class: "c".into(),
            strategy: "cross-class".into(),
            objective: "time".into(),
            options: serde_json::json!({}),
            started_at: String::new(),
            ended_at: None,
        };
        let mut with_cross = cd.clone();
        with_cross.points.push(measured(1, 0.9));
        with_cross.runs = vec![Run {
            row: &cross,
            evaluations: vec![(0, measured(1, 0.9))],
        }];
        assert_eq!(
            with_cross.best_point().map(|(m, _)| m.key.as_str()),
            Some("starts=4")
        );
        // Nor is one of a lower gap (relative gaps may be below 0).
        with_cross.points.push(measured(2, -0.5));
        with_cross.runs[0].evaluations.push((1, measured(2, -0.5)));
        assert_eq!(
            with_cross.lowest(Metric::Gap).map(|(m, _)| m.key.as_str()),
            Some("starts=256")
        );
        let alone = ClassData {
            points: vec![measured(4, 0.5), measured(16, 0.0)],
            ..cd
        };
        assert_eq!(
            alone.lowest(Metric::Gap).map(|(m, _)| m.key.as_str()),
            Some("starts=16")
        );
    }

    #[test]
    fn front_of_hand_made_points() {
        // (1,5) (2,3) (3,4) (4,1) (2,3): (3,4) is dominated by (2,3); of the duplicate (2,3)
        // one copy is on the front.
        let v = [[1.0, 5.0], [2.0, 3.0], [3.0, 4.0], [4.0, 1.0], [2.0, 3.0]];
        let front = pareto_front(&v);
        assert_eq!(front.len(), 3);
        assert!(front[0] == 0 && front[2] == 3 && (front[1] == 1 || front[1] == 4));
        assert!(pareto_front(&[]).is_empty());
        // Equal time, lower power dominates.
        assert_eq!(pareto_front(&[[1.0, 2.0], [1.0, 1.0]]), vec![1]);
    }

    #[test]
    fn best_so_far_keeps_the_maximum() {
        let s = [
            (1.0, None),
            (2.0, Some(1.5)),
            (3.0, Some(1.2)),
            (4.0, None),
            (5.0, Some(2.0)),
        ];
        assert_eq!(
            best_so_far(&s),
            vec![(2.0, 1.5), (3.0, 1.5), (4.0, 1.5), (5.0, 2.0)]
        );
    }

    #[test]
    fn speedup_cost_and_mean() {
        assert_eq!(speedup(2.0, 0.5), Some(4.0));
        assert_eq!(speedup(2.0, 0.0), None);
        assert_eq!(cost_percent(0, 500), 0.2);
        assert_eq!(cost_percent(9, 200), 5.0);
        let g = geometric_mean(&[2.0, 8.0]).expect("mean");
        assert!((g - 4.0).abs() < 1e-12);
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
    }

    mod campaign {
        use super::super::*;
        use crate::ReportInput;
        use results::{CampaignRow, ExportRow, Value};
        use serde_json::json;

        fn p(threads: i64, opt: i64) -> Point {
            [("threads", Value::Int(threads)), ("opt", Value::Int(opt))]
                .into_iter()
                .collect()
        }

        fn ev(
            run_id: i64,
            seq: u32,
            pt: Point,
            t: f64,
            w: f64,
            status: EvaluationStatus,
        ) -> EvaluationRow {
            EvaluationRow {
                run_id,
                seq,
                point_id: 0,
                point: pt,
                status,
                time_s: Some(t),
                power_w: Some(w),
                energy_j: Some(t * w),
                gap_percent: None,
                new_trials: 1,
            }
        }

        fn run(id: i64, strategy: &str, objective: &str) -> RunRow {
            RunRow {
                id,
                class: "c".into(),
                strategy: strategy.into(),
                objective: objective.into(),
                options: json!({}),
                started_at: String::new(),
                ended_at: None,
            }
        }

        /// Baseline (1024, 2): 4 s, 100 W. Search: (512,2) 2 s 150 W; (256,2) 1 s 300 W
        /// rejected; (128,2) 8 s 50 W; (128,3) 3 s 160 W (dominated by (512,2)).
        fn input() -> ReportInput {
            use EvaluationStatus::*;
            ReportInput {
                campaign: CampaignRow {
                    id: 1,
                    name: "t".into(),
                    config_toml: String::new(),
                    settings: json!({"production_runs": 100,
                                     "baseline": {"threads": 1024, "opt": 2},
                                     "parameters": [{"name": "threads", "kind": "launch"},
                                                    {"name": "opt", "kind": "flag"}]}),
                    created_at: String::new(),
                },
                instances: vec![],
                runs: vec![run(1, "baseline", "time"), run(2, "random", "time")],
                evaluations: vec![
                    ev(1, 0, p(1024, 2), 4.0, 100.0, Ok),
                    ev(2, 0, p(128, 3), 3.0, 160.0, Ok),
                    ev(2, 1, p(256, 2), 1.0, 300.0, Rejected),
                    ev(2, 2, p(512, 2), 2.0, 150.0, Ok),
                    ev(2, 3, p(128, 2), 8.0, 50.0, Ok),
                ],
                trials: vec![],
                exports: vec![ExportRow {
                    class: "c".into(),
                    prefer: "time".into(),
                    point_id: 0,
                    point: p(512, 2),
                    bundle: "b1".into(),
                }],
                unfinished: None,
            }
        }

        #[test]
        fn baseline_and_speedups() {
            let input = input();
            let an = Analysis::new(&input);
            let cd = &an.class_data["c"];
            assert_eq!(cd.baseline_time(), Some(4.0));
            assert_eq!(
                cd.baseline.as_ref().map(|b| b.1),
                Some(BaselineSource::Settings)
            );
            // The rejected 1 s point is never the best: (512,2) at 2 s is, speedup 2.
            let (best, s) = cd.best_point().expect("best");
            assert_eq!(best.point, p(512, 2));
            assert_eq!(s, 2.0);
        }

        #[test]
        fn pareto_front_highlight() {
            let input = input();
            let an = Analysis::new(&input);
            let d = pareto_data(&input, &an, "c", (Metric::Time, Metric::Power)).expect("data");
            let front: Vec<(f64, f64)> = d
                .front
                .iter()
                .map(|&i| (d.points[i].x, d.points[i].y))
                .collect();
            // (2,150) (4,100) (8,50); (3,160) is dominated, (1,300) rejected.
            assert_eq!(front, vec![(2.0, 150.0), (4.0, 100.0), (8.0, 50.0)]);
            assert_eq!(d.points.iter().filter(|p| p.rejected).count(), 1);
            assert_eq!(d.baseline, Some((4.0, 100.0)));
            assert_eq!(
                d.exports,
                vec![("export b1 (prefer time)".to_string(), 2.0, 150.0)]
            );
        }

        #[test]
        fn fronts_are_drawn_for_the_campaigns_own_pair() {
            use Metric::*;
            assert_eq!(
                figure_pairs(Some("pareto:gap,energy")),
                [(Gap, Energy)],
                "time is the fixed budget of a gap@budget campaign"
            );
            assert_eq!(figure_pairs(Some("gap")), [(Gap, Energy)]);
            assert_eq!(
                figure_pairs(Some("time pareto:time,energy")),
                [(Time, Energy), (Time, Power)]
            );
            assert_eq!(figure_pairs(None), [(Time, Power), (Time, Energy)]);
        }

        #[test]
        fn convergence_curve() {
            let input = input();
            let an = Analysis::new(&input);
            let lines = convergence_data(&an, "c", Metric::Time).expect("lines");
            assert_eq!(lines.len(), 1, "the baseline run is not a search");
            // seq 0: 4/3; seq 1 rejected keeps 4/3; seq 2: 2; seq 3 (0.5) keeps 2.
            // Cost: 1%, 2%, 3%, 4% of 100 production runs.
            let want = [(1.0, 4.0 / 3.0), (2.0, 4.0 / 3.0), (3.0, 2.0), (4.0, 2.0)];
            assert_eq!(lines[0].points, want.to_vec());
        }

        #[test]
        fn compiler_subspace_keeps_launch_fixed() {
            let input = input();
            let an = Analysis::new(&input);
            // Only (1024, 2) has the baseline's threads: fewer than 3 points.
            let err = compiler_subspace(&an, "c").expect_err("too few");
            assert!(err.contains("only 1"), "{err}");
        }
    }
}
