//! Basin hopping (Wales and Doye) on a discrete space: descend to a local optimum in the
//! neighbourhood that knows the parameter kinds, hop by perturbing a few parameters of the
//! current optimum (repaired to the nearest valid point), descend again, and accept the new
//! optimum by the Metropolis rule on ln(cost) (so the temperature is relative). After
//! `restart_after` hops without a new best it restarts from an unseen random point.

use anyhow::Result;
use rand::seq::SliceRandom;
use rand::Rng;
use results::Point;

use super::geometry::Geometry;
use super::tracker::Tracker;
use super::SearchSpace;

/// Tries at drawing an unseen hop target before settling for a fresh random point.
const HOP_TRIES: usize = 16;

/// First-improvement descent over [`Geometry::adjacent`] from `start`; returns the local
/// optimum and its cost (+inf when every point met failed).
pub(crate) fn descend(
    space: &dyn SearchSpace,
    geo: &Geometry,
    tracker: &mut Tracker<'_>,
    start: Point,
    rng: &mut dyn rand::RngCore,
) -> Result<(Point, f64)> {
    let mut cost = tracker.costs(std::slice::from_ref(&start))?[0];
    let mut current = start;
    loop {
        let mut neighbours = geo.adjacent(space, &current);
        neighbours.shuffle(rng);
        let mut moved = false;
        for n in neighbours {
            let c = tracker.costs(std::slice::from_ref(&n))?[0];
            if c < cost {
                current = n;
                cost = c;
                moved = true;
                break;
            }
        }
        if !moved {
            return Ok((current, cost));
        }
    }
}

/// An unseen valid point a hop away from `from`, or an unseen random point.
pub(crate) fn hop(
    space: &dyn SearchSpace,
    geo: &Geometry,
    tracker: &Tracker<'_>,
    from: &Point,
    rng: &mut dyn rand::RngCore,
) -> Option<Point> {
    let rate = 1.5 / geo.dims.max(1) as f64;
    for _ in 0..HOP_TRIES {
        let q = geo.perturb(from, rate, 2, rng);
        if let Some(q) = geo.nearest_valid(space, &q, rng) {
            if !tracker.seen(&q) {
                return Some(q);
            }
        }
    }
    tracker.fresh_point(space, rng)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Option<Point>,
    temperature: f64,
    restart_after: usize,
    geo: Option<&Geometry>,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let owned;
    let geo = match geo {
        Some(g) => g,
        None => {
            owned = Geometry::new(space);
            &owned
        }
    };
    let Some(first) = start.or_else(|| tracker.fresh_point(space, rng)) else {
        return Ok(());
    };
    let (mut current, mut cost) = descend(space, geo, tracker, first, rng)?;
    let mut best = cost;
    let mut stall = 0;
    loop {
        let Some(target) = hop(space, geo, tracker, &current, rng) else {
            return Ok(());
        };
        let (p, c) = descend(space, geo, tracker, target, rng)?;
        let log = |c: f64| tracker.objective.log_cost(c).unwrap_or(f64::INFINITY);
        let (lc, lcur) = (log(c), log(cost));
        let accept = c < cost
            || (lc.is_finite()
                && temperature > 0.0
                && rng.random_bool((-(lc - lcur) / temperature).exp().clamp(0.0, 1.0)));
        if c < best {
            best = c;
            stall = 0;
        } else {
            stall += 1;
        }
        if accept {
            current = p;
            cost = c;
        }
        if stall >= restart_after {
            stall = 0;
            let Some(fresh) = tracker.fresh_point(space, rng) else {
                return Ok(());
            };
            (current, cost) = descend(space, geo, tracker, fresh, rng)?;
        }
    }
}
