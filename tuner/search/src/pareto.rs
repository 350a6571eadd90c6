//! Pareto local search (Paquete, Chiarandini and Stützle): the archive is the non-dominated
//! set of everything evaluated; each step takes an archive point not yet explored and
//! evaluates all its neighbours in one batch. When every archive point is explored, a restart
//! evaluates an unseen random point and continues (until `restarts` or the budget is spent).
//! Chosen over NSGA-II because every evaluation is a GPU measurement: PLS never asks a
//! point twice and needs no population-sized generations to make progress.

use std::collections::HashSet;

use anyhow::Result;
use results::Point;

use super::tracker::Tracker;
use super::SearchSpace;

pub(crate) fn run(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Option<Point>,
    restarts: Option<usize>,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let Some(first) = start.or_else(|| space.random_point(rng)) else {
        return Ok(());
    };
    tracker.objectives(std::slice::from_ref(&first))?;
    let mut explored: HashSet<Point> = HashSet::new();
    let mut done = 0;
    loop {
        let next = tracker
            .front()
            .into_iter()
            .map(|(p, _)| p)
            .find(|p| !explored.contains(p));
        match next {
            Some(p) => {
                let neighbours = space.neighbours(&p, &[]);
                explored.insert(p);
                if !neighbours.is_empty() {
                    tracker.objectives(&neighbours)?;
                }
            }
            None => {
                if restarts.is_some_and(|r| done >= r) {
                    return Ok(());
                }
                done += 1;
                match tracker.fresh_point(space, rng) {
                    Some(p) => {
                        tracker.objectives(std::slice::from_ref(&p))?;
                        // A dominated restart point still gets its neighbourhood explored
                        // once, or a restart could never leave it.
                        let neighbours = space.neighbours(&p, &[]);
                        explored.insert(p);
                        if !neighbours.is_empty() {
                            tracker.objectives(&neighbours)?;
                        }
                    }
                    None => return Ok(()),
                }
            }
        }
    }
}
