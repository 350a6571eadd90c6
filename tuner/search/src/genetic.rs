//! A steady (mu + lambda) genetic algorithm: binary tournaments pick parents, uniform crossover
//! mixes their values, mutation moves parameters by their kind (ordinal steps, categorical
//! flips), and every child is repaired to the nearest valid point and made unseen before it
//! costs an evaluation. Parents and children compete for the next population; after
//! `stagnation` generations without a new best, half of the population is replaced by unseen
//! random points.

use anyhow::Result;
use rand::Rng;
use results::Point;

use super::geometry::Geometry;
use super::tracker::Tracker;
use super::SearchSpace;

/// Mutations tried on a child that is already known before it is replaced by a random point.
const MUTATE_TRIES: usize = 8;

pub(crate) fn run(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Option<Point>,
    population: usize,
    mutation: f64,
    stagnation: usize,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let geo = Geometry::new(space);
    let size = population.max(2);
    let mut pop: Vec<Point> = start.into_iter().collect();
    let mut costs = tracker.costs(&pop)?;
    // One at a time, so that each draw knows the previous ones (a tiny space runs out).
    while pop.len() < size {
        let Some(p) = tracker.fresh_point(space, rng) else {
            break;
        };
        costs.extend(tracker.costs(std::slice::from_ref(&p))?);
        pop.push(p);
    }
    if pop.is_empty() {
        return Ok(());
    }
    let mut best = costs.iter().copied().fold(f64::INFINITY, f64::min);
    let mut stalled = 0;
    let rate = 1.0 / geo.dims.max(1) as f64;
    loop {
        let mut children: Vec<Point> = Vec::with_capacity(size);
        for _ in 0..size {
            let a = tournament(&costs, rng);
            let b = tournament(&costs, rng);
            let mut child = crossover(&geo, &pop[a], &pop[b], rng);
            if rng.random_bool(mutation.clamp(0.0, 1.0)) {
                child = geo.perturb(&child, rate, 1, rng);
            }
            let mut child = geo.nearest_valid(space, &child, rng);
            let mut tries = 0;
            while child
                .as_ref()
                .is_some_and(|c| tracker.seen(c) || children.contains(c))
                && tries < MUTATE_TRIES
            {
                let base = child.as_ref().cloned().unwrap_or_else(|| pop[a].clone());
                child = geo.nearest_valid(space, &geo.perturb(&base, rate, 2, rng), rng);
                tries += 1;
            }
            let child = match child {
                Some(c) if !tracker.seen(&c) && !children.contains(&c) => Some(c),
                _ => tracker
                    .fresh_point(space, rng)
                    .filter(|c| !children.contains(c)),
            };
            if let Some(c) = child {
                children.push(c);
            }
        }
        if children.is_empty() {
            return Ok(());
        }
        let child_costs = tracker.costs(&children)?;
        let generation_best = child_costs.iter().copied().fold(f64::INFINITY, f64::min);
        if generation_best < best {
            best = generation_best;
            stalled = 0;
        } else {
            stalled += 1;
        }
        let mut all: Vec<(f64, Point)> = costs
            .into_iter()
            .zip(pop)
            .chain(child_costs.into_iter().zip(children))
            .collect();
        all.sort_by(|x, y| x.0.total_cmp(&y.0));
        all.truncate(size);
        if stalled >= stagnation {
            stalled = 0;
            let keep = size.div_ceil(2);
            all.truncate(keep);
            while all.len() < size {
                let Some(p) = tracker.fresh_point(space, rng) else {
                    break;
                };
                let c = tracker.costs(std::slice::from_ref(&p))?[0];
                all.push((c, p));
            }
        }
        (costs, pop) = all.into_iter().unzip();
    }
}

/// The better of two random members (lower cost).
fn tournament(costs: &[f64], rng: &mut dyn rand::RngCore) -> usize {
    let a = rng.random_range(0..costs.len());
    let b = rng.random_range(0..costs.len());
    if costs[b] < costs[a] {
        b
    } else {
        a
    }
}

/// Each parameter from either parent with equal chance (a parameter one parent lacks comes
/// from the other).
fn crossover(geo: &Geometry, a: &Point, b: &Point, rng: &mut dyn rand::RngCore) -> Point {
    let mut child = a.clone();
    for param in &geo.params {
        if let Some(v) = b.get(&param.name) {
            if rng.random_bool(0.5) || a.get(&param.name).is_none() {
                child.set(param.name.clone(), v.clone());
            }
        }
    }
    child
}
