//! Simulated annealing: argmin's `SimulatedAnnealing` on ln(objective), where annealing a
//! point means moving to a uniformly drawn neighbour.

use std::cell::RefCell;

use anyhow::Result;
use argmin::core::observers::ObserverMode;
use argmin::core::Executor;
use argmin::solver::simulatedannealing::{Anneal, SATempFunc, SimulatedAnnealing};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use results::Point;

use super::hill_climbing::{Landscape, TraceMoves};
use super::options::{AnnealingOptions, Cooling};
use super::tracker::{Stop, Tracker};
use super::SearchSpace;

impl Anneal for Landscape<'_, '_> {
    type Param = Point;
    type Output = Point;
    type Float = f64;

    fn anneal(&self, param: &Point, _extent: f64) -> Result<Point, argmin::core::Error> {
        let neighbours = self.neighbours(param);
        let mut rng = self.rng.borrow_mut();
        Ok(neighbours
            .choose(&mut *rng)
            .cloned()
            .unwrap_or_else(|| param.clone()))
    }
}

/// Anneals from `start`; each time a walk ends (its temperature has frozen it into a region
/// it has measured, or `stall_best` stopped it) the next starts from an unseen random point
/// with the initial temperature, until the budget is spent or every point was measured. One
/// frozen walk used to end the search with most of its budget unused.
pub(crate) fn run(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Option<Point>,
    options: &AnnealingOptions,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let mut start = match start {
        Some(p) => Some(p),
        None => space.random_point(rng),
    };
    while let Some(from) = start.take() {
        match anneal(space, tracker, from, options, rng) {
            Err(e) if e.downcast_ref::<Stop>() == Some(&Stop::Stalled) => {}
            other => other?,
        }
        start = tracker.fresh_point(space, rng);
    }
    Ok(())
}

/// One annealing walk from `start`.
fn anneal(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Point,
    options: &AnnealingOptions,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let AnnealingOptions {
        initial_temperature,
        cooling,
        cooling_factor,
        reanneal_best,
        stall_best,
    } = options;
    let landscape = Landscape {
        space,
        tracker: RefCell::new(tracker),
        params: Vec::new(),
        log: true,
        rng: RefCell::new(StdRng::seed_from_u64(rng.next_u64())),
        adjacent: None,
    };
    let mut solver = SimulatedAnnealing::new_with_rng(
        *initial_temperature,
        StdRng::seed_from_u64(rng.next_u64()),
    )?
    .with_temp_func(match cooling {
        Cooling::Exponential => SATempFunc::Exponential(*cooling_factor),
        Cooling::Fast => SATempFunc::TemperatureFast,
        Cooling::Boltzmann => SATempFunc::Boltzmann,
    });
    if let Some(n) = reanneal_best {
        solver = solver.with_reannealing_best(*n);
    }
    if let Some(n) = stall_best {
        solver = solver.with_stall_best(*n);
    }
    let mut executor =
        Executor::new(landscape, solver).configure(|s| s.param(start).max_iters(u64::MAX));
    if TraceMoves::enabled() {
        executor = executor.add_observer(TraceMoves { label: "annealing" }, ObserverMode::Always);
    }
    executor.run()?;
    Ok(())
}
