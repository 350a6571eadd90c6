//! Bayesian optimisation (EGO: a Gaussian-process surrogate and expected improvement) for small
//! budgets. After a few random points, each step fits the GP to ln(cost) of everything
//! evaluated (failed points at the worst cost seen, so the model learns to avoid them) and
//! evaluates the unseen valid point of highest expected improvement among candidates: every
//! valid point of a small space, or a random sample plus the neighbours of the best points of a
//! large one. Only valid points are candidates, so no evaluation is spent on a point the
//! constraints exclude. Once `model_points` points are known the model stops paying for itself
//! (its cost grows with the cube of the points) and basin hopping continues from the best.

use std::collections::HashSet;

use anyhow::Result;
use rand::seq::index;
use results::Point;

use super::basin_hopping;
use super::geometry::Geometry;
use super::gp::{expected_improvement, Gp};
use super::tracker::Tracker;
use super::SearchSpace;

/// Candidates scored per step on a space with more unseen points than this.
const CANDIDATES: usize = 2000;
/// Best points whose neighbourhoods are always candidates.
const INCUMBENTS: usize = 3;

pub(crate) fn run(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Option<Point>,
    initial: Option<usize>,
    model_points: usize,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let geo = Geometry::new(space);
    let initial = initial.unwrap_or((geo.dims + 1).clamp(3, 10));
    if let Some(s) = start {
        tracker.objectives(std::slice::from_ref(&s))?;
    }
    while tracker.history.len() < initial.min(model_points) {
        let Some(p) = tracker.fresh_point(space, rng) else {
            return Ok(());
        };
        tracker.objectives(std::slice::from_ref(&p))?;
    }
    while tracker.history.len() < model_points {
        let Some(next) = propose(space, &geo, tracker, rng) else {
            break;
        };
        tracker.objectives(std::slice::from_ref(&next))?;
    }
    let best = tracker.best.as_ref().map(|(p, _, _)| p.clone());
    basin_hopping::run(space, tracker, best, 0.02, 10, Some(&geo), rng)
}

/// The candidate of highest expected improvement (a fresh random point while nothing has
/// succeeded yet); None when every point was seen.
fn propose(
    space: &dyn SearchSpace,
    geo: &Geometry,
    tracker: &Tracker<'_>,
    rng: &mut dyn rand::RngCore,
) -> Option<Point> {
    let objective = tracker.objective;
    let Some(y) = objective.history_log_costs(&tracker.history) else {
        return tracker.fresh_point(space, rng);
    };
    let x: Vec<f64> = tracker
        .history
        .iter()
        .flat_map(|(p, _)| match geo.position(p) {
            Some(i) => geo.features_of(i).to_vec(),
            None => geo.encode(p),
        })
        .collect();
    let gp = Gp::fit(&x, &y, geo.dims)?;
    let best = y.iter().copied().fold(f64::INFINITY, f64::min);

    let mut ranked: Vec<(f64, f64, usize)> = y
        .iter()
        .copied()
        .zip(0..)
        .map(|(c, i)| (c, 0.0, i))
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut candidates: Vec<Point> = Vec::new();
    let mut taken: HashSet<Point> = HashSet::new();
    for &(_, _, i) in ranked.iter().take(INCUMBENTS) {
        for n in geo.adjacent(space, &tracker.history[i].0) {
            if !tracker.seen(&n) && taken.insert(n.clone()) {
                candidates.push(n);
            }
        }
    }
    if geo.listed() {
        let unseen = geo.points.len().saturating_sub(tracker.history.len());
        if unseen <= CANDIDATES {
            candidates.extend(
                geo.points
                    .iter()
                    .filter(|p| !tracker.seen(p) && !taken.contains(*p))
                    .cloned(),
            );
        } else {
            let draw = index::sample(rng, geo.points.len(), CANDIDATES.min(geo.points.len()));
            for i in draw {
                let p = &geo.points[i];
                if !tracker.seen(p) && taken.insert(p.clone()) {
                    candidates.push(p.clone());
                }
            }
        }
    } else {
        for _ in 0..CANDIDATES {
            if let Some(p) = space.random_point(rng) {
                if !tracker.seen(&p) && taken.insert(p.clone()) {
                    candidates.push(p);
                }
            }
        }
    }
    if candidates.is_empty() {
        return tracker.fresh_point(space, rng);
    }
    candidates
        .into_iter()
        .map(|p| {
            let f = match geo.position(&p) {
                Some(i) => geo.features_of(i).to_vec(),
                None => geo.encode(&p),
            };
            let (mu, sigma) = gp.predict(&f);
            (expected_improvement(mu, sigma, best), p)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, p)| p)
}
