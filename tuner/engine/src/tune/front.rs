//! A class's front for the summary (issue 28, item 3): the Pareto search's non-dominated
//! points with everything measured for them, then re-measured interleaved on the fresh seeds
//! of the verification, so the values a user picks a point by (a power or energy cap in
//! `solve --tuned`) are not the search's own luck.

use anyhow::Result;
use results::{FrontPoint, Point};
use search::Objectives;

use super::{measure_on_seeds, Tuning};

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
        })
        .collect()
}

/// Measures the front's points on `members` with `seeds` (interleaved, never raced, no
/// quality guard: every point of the front is kept with its values) and replaces each point's
/// values by those; a point whose re-measure failed keeps the search's values. Nothing
/// changes when the budget ran out before every trial was measured.
pub fn remeasure(
    t: &mut Tuning,
    class: &str,
    members: &[usize],
    front: &mut [FrontPoint],
    seeds: Vec<u64>,
    metric: search::Metric,
) -> Result<()> {
    if front.is_empty() || members.is_empty() {
        return Ok(());
    }
    let points: Vec<Point> = front.iter().map(|f| f.point.clone()).collect();
    let Some((_, evaluated)) =
        measure_on_seeds(t, class, RUN_LABEL, members, &points, seeds, metric, None)?
    else {
        return Ok(());
    };
    for (f, e) in front.iter_mut().zip(evaluated) {
        if let Some(o) = e.objectives {
            f.gap_percent = o.gap_percent.or(e.gap_percent);
            f.energy_j = o.energy_j;
            f.power_w = o.power_w;
            f.time_s = o.time_s;
            f.remeasured = true;
        }
    }
    Ok(())
}
