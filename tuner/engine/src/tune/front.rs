//! A class's front for the summary (issue 28, item 3): the Pareto search's non-dominated
//! points with everything measured for them, then re-measured interleaved on the fresh seeds
//! of the verification, so the values a user picks a point by (a power or energy cap in
//! `solve --tuned`) are not the search's own luck.

use anyhow::Result;
use results::{FrontPoint, Point};
use search::Objectives;

use super::evaluator::{beyond_margin, Baseline, PairValues};
use super::{measure_on_seeds, RunMode, Tuning};

/// The run label of the front's re-measure (a verification run: not a search result).
pub const RUN_LABEL: &str = "front";

/// The summary's front from a search's non-dominated points, as the search measured them.
pub fn of_search(pareto: &[(Point, Objectives)]) -> Vec<FrontPoint> {
    pareto
        .iter()
        .map(|(p, o)| FrontPoint {
            point: p.clone(),
            gap_percent: o.gap_percent,
            energy_j: o.energy_j,
            power_w: o.power_w,
            time_s: o.time_s,
            remeasured: false,
            peak_power_w: None,
            peak_energy_j: None,
        })
        .collect()
}

/// Measures the front's points on `members` with `seeds` (interleaved, never raced) and
/// replaces each point's values by those; a point whose re-measure failed keeps the search's
/// values. Where the campaign guards quality (fixed work) the baseline is measured beside them
/// (its trials are the final re-measure's, on the same seeds) and a point whose mean gap is
/// above the baseline's by more than the margin leaves the front: a power or energy cap in
/// `solve --tuned` would otherwise pick a point the search's own rule refuses. Returns the
/// points that left. Nothing changes when the budget ran out before every trial was measured.
#[allow(clippy::too_many_arguments)]
pub fn remeasure(
    t: &mut Tuning,
    class: &str,
    members: &[usize],
    front: &mut Vec<FrontPoint>,
    seeds: Vec<u64>,
    metric: search::Metric,
    baseline: Option<(&Point, &Baseline)>,
) -> Result<Vec<Point>> {
    if front.is_empty() || members.is_empty() {
        return Ok(Vec::new());
    }
    let mut points: Vec<Point> = front.iter().map(|f| f.point.clone()).collect();
    let guard = baseline
        .filter(|_| t.mode == RunMode::FixedWork)
        .map(|(p, _)| p.clone());
    if let Some(b) = guard.as_ref().filter(|b| !points.contains(b)) {
        points.push(b.clone());
    }
    let reference = baseline.map(|(_, b)| b.clone());
    let Some((_, evaluated)) = measure_on_seeds(
        t, class, RUN_LABEL, members, &points, seeds, metric, reference,
    )?
    else {
        return Ok(Vec::new());
    };
    let baseline_gap = guard
        .and_then(|b| points.iter().position(|p| *p == b))
        .and_then(|i| evaluated[i].gap_percent);
    let mut left = Vec::new();
    for (f, e) in front.iter_mut().zip(&evaluated) {
        if let (Some(b), Some(g)) = (baseline_gap, e.gap_percent) {
            if beyond_margin(g, b, t.margin_percent) {
                left.push(f.point.clone());
                continue;
            }
        }
        if let Some(o) = e.objectives {
            f.gap_percent = o.gap_percent.or(e.gap_percent);
            f.energy_j = o.energy_j;
            f.power_w = o.power_w;
            f.time_s = o.time_s;
            f.remeasured = true;
            f.peak_power_w = peak_instance_mean(&e.pairs, members.len(), |v| v.power_w);
            f.peak_energy_j = peak_instance_mean(&e.pairs, members.len(), |v| v.energy_j);
        }
    }
    front.retain(|f| !left.contains(&f.point));
    Ok(left)
}

/// The highest per-member mean of `value` over `pairs` (in [`ClassEvaluator::pairs`]'s
/// order: seeds outer, `members` members inner); `None` when a pair lacks the value.
///
/// [`ClassEvaluator::pairs`]: super::evaluator::ClassEvaluator::pairs
pub fn peak_instance_mean(
    pairs: &[PairValues],
    members: usize,
    value: impl Fn(&PairValues) -> Option<f64>,
) -> Option<f64> {
    if members == 0 || pairs.is_empty() {
        return None;
    }
    let mut sums = vec![(0.0, 0usize); members];
    for (i, pair) in pairs.iter().enumerate() {
        let s = &mut sums[i % members];
        s.0 += value(pair)?;
        s.1 += 1;
    }
    sums.iter()
        .filter(|(_, n)| *n > 0)
        .map(|(sum, n)| sum / *n as f64)
        .max_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn power(w: f64) -> PairValues {
        PairValues {
            power_w: Some(w),
            ..PairValues::default()
        }
    }

    #[test]
    fn the_peak_is_the_highest_instance_mean_not_the_class_mean() {
        // Two seeds x three members: member means 210, 330, 250 (class mean 263.3).
        let pairs = [200.0, 320.0, 250.0, 220.0, 340.0, 250.0].map(power);
        let peak = peak_instance_mean(&pairs, 3, |v| v.power_w).unwrap();
        assert!((peak - 330.0).abs() < 1e-9, "{peak}");
        assert_eq!(peak_instance_mean(&pairs, 3, |v| v.energy_j), None);
        assert_eq!(peak_instance_mean(&[], 3, |v| v.power_w), None);
    }
}
