//! Hill climbing as an argmin [`Solver`]: each iteration evaluates the neighbourhood through
//! `bulk_cost` (one batch, so the runner can compile the neighbours in parallel) and moves to
//! the best (or first) improvement; a local optimum ends the climb. Restarts begin at unseen
//! random points.

use std::borrow::Borrow;
use std::cell::RefCell;

use anyhow::Result;
use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{
    CostFunction, Error, Executor, IterState, Problem, SendAlias, Solver, State, SyncAlias,
    TerminationReason, TerminationStatus, KV,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use results::Point;

use super::geometry::Geometry;
use super::options::Neighbourhood;
use super::tracker::Tracker;
use super::SearchSpace;

pub(crate) type PointState = IterState<Point, (), (), (), (), f64>;

/// The space and the evaluator as an argmin problem. argmin's cost functions take `&self`,
/// and evaluating records into the tracker, hence the `RefCell`.
pub(crate) struct Landscape<'a, 'e> {
    pub space: &'a dyn SearchSpace,
    pub tracker: RefCell<&'a mut Tracker<'e>>,
    /// Parameters the search may change (all when empty).
    pub params: Vec<String>,
    /// Minimise ln(cost), so that differences are relative (annealing temperatures).
    pub log: bool,
    /// Random choices of the problem's own (annealing's neighbour draw).
    pub rng: RefCell<StdRng>,
    /// The neighbourhood that knows parameter kinds (ordinal steps, categorical flips)
    /// instead of every other value of every parameter.
    pub adjacent: Option<&'a Geometry>,
}

impl Landscape<'_, '_> {
    fn transform(&self, c: f64) -> f64 {
        let objective = self.tracker.borrow().objective;
        match self.log.then(|| objective.log_cost(c)).flatten() {
            Some(l) => l,
            None => c,
        }
    }

    pub fn neighbours(&self, p: &Point) -> Vec<Point> {
        match &self.adjacent {
            Some(g) if self.params.is_empty() => g.adjacent(self.space, p),
            _ => self.space.neighbours(p, &self.params),
        }
    }
}

impl CostFunction for Landscape<'_, '_> {
    type Param = Point;
    type Output = f64;

    fn cost(&self, param: &Point) -> Result<f64, Error> {
        let c = self
            .tracker
            .borrow_mut()
            .costs(std::slice::from_ref(param))?;
        Ok(self.transform(c[0]))
    }

    fn bulk_cost<P>(&self, params: &[P]) -> Result<Vec<f64>, Error>
    where
        P: Borrow<Point> + SyncAlias,
        f64: SendAlias,
        Self: SyncAlias,
    {
        let points: Vec<Point> = params.iter().map(|p| p.borrow().clone()).collect();
        let costs = self.tracker.borrow_mut().costs(&points)?;
        Ok(costs.into_iter().map(|c| self.transform(c)).collect())
    }
}

/// The climbing step.
pub(crate) struct Climber {
    first_improvement: bool,
    rng: StdRng,
    at_optimum: bool,
}

impl<'a, 'e> Solver<Landscape<'a, 'e>, PointState> for Climber {
    fn name(&self) -> &str {
        "hill climbing"
    }

    fn init(
        &mut self,
        problem: &mut Problem<Landscape<'a, 'e>>,
        state: PointState,
    ) -> Result<(PointState, Option<KV>), Error> {
        let cost = match state.get_param() {
            Some(p) => problem.cost(p)?,
            None => anyhow::bail!("hill climbing needs a start point"),
        };
        Ok((state.cost(cost), None))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<Landscape<'a, 'e>>,
        mut state: PointState,
    ) -> Result<(PointState, Option<KV>), Error> {
        let Some(current) = state.take_param() else {
            anyhow::bail!("hill climbing lost its point");
        };
        let cost = state.get_cost();
        let mut neighbours = match problem.problem.as_ref() {
            Some(l) => l.neighbours(&current),
            None => Vec::new(),
        };
        // Random order breaks ties fairly and makes first improvement a random descent.
        neighbours.shuffle(&mut self.rng);
        let mut better: Option<(Point, f64)> = None;
        if self.first_improvement {
            // In batches as wide as the evaluator measures at once (several GPUs): the move
            // is still the first improvement in the shuffled order, the batch's later points
            // are measured speculatively.
            let mut from = 0;
            while from < neighbours.len() && better.is_none() {
                let end = match problem.problem.as_ref() {
                    Some(l) => l
                        .tracker
                        .borrow()
                        .scan_batch_end(&neighbours, from, &|c| l.transform(c) < cost),
                    None => from + 1,
                };
                let costs = problem.bulk_cost(&neighbours[from..end])?;
                better = neighbours[from..end]
                    .iter()
                    .zip(costs)
                    .find(|(_, c)| *c < cost)
                    .map(|(n, c)| (n.clone(), c));
                from = end;
            }
        } else if !neighbours.is_empty() {
            let costs = problem.bulk_cost(&neighbours)?;
            let best = costs
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .map(|(i, c)| (i, *c));
            if let Some((i, c)) = best {
                if c < cost {
                    better = Some((neighbours.swap_remove(i), c));
                }
            }
        }
        match better {
            Some((p, c)) => Ok((state.param(p).cost(c), None)),
            None => {
                self.at_optimum = true;
                Ok((state.param(current).cost(cost), None))
            }
        }
    }

    fn terminate(&mut self, _state: &PointState) -> TerminationStatus {
        if self.at_optimum {
            TerminationStatus::Terminated(TerminationReason::SolverExit("local optimum".into()))
        } else {
            TerminationStatus::NotTerminated
        }
    }
}

/// argmin's observer hook for progress: one line per move on standard error when
/// `MATS_SEARCH_TRACE` is set (the runner reports progress from its own store otherwise).
pub(crate) struct TraceMoves {
    pub label: &'static str,
}

impl TraceMoves {
    pub fn enabled() -> bool {
        std::env::var_os("MATS_SEARCH_TRACE").is_some()
    }
}

impl Observe<PointState> for TraceMoves {
    fn observe_iter(&mut self, state: &PointState, _kv: &KV) -> Result<(), Error> {
        eprintln!(
            "{}: iteration {} cost {:.6e} best {:.6e}",
            self.label,
            state.get_iter(),
            state.get_cost(),
            state.get_best_cost()
        );
        Ok(())
    }
}

/// One climb from `start` over `params`; returns the local optimum reached.
pub(crate) fn climb(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Point,
    params: &[String],
    first_improvement: bool,
    adjacent: Option<&Geometry>,
    rng: &mut dyn rand::RngCore,
) -> Result<Point> {
    let landscape = Landscape {
        space,
        tracker: RefCell::new(tracker),
        params: params.to_vec(),
        log: false,
        rng: RefCell::new(StdRng::seed_from_u64(rng.next_u64())),
        adjacent,
    };
    let climber = Climber {
        first_improvement,
        rng: StdRng::seed_from_u64(rng.next_u64()),
        at_optimum: false,
    };
    let mut executor =
        Executor::new(landscape, climber).configure(|s| s.param(start).max_iters(u64::MAX));
    if TraceMoves::enabled() {
        executor = executor.add_observer(
            TraceMoves {
                label: "hill climbing",
            },
            ObserverMode::Always,
        );
    }
    let result = executor.run()?;
    result
        .state()
        .get_best_param()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("hill climbing ended without a point"))
}

pub(crate) fn run(
    space: &dyn SearchSpace,
    tracker: &mut Tracker<'_>,
    start: Option<Point>,
    restarts: Option<usize>,
    first_improvement: bool,
    neighbourhood: Neighbourhood,
    rng: &mut dyn rand::RngCore,
) -> Result<()> {
    let geo = (neighbourhood == Neighbourhood::Adjacent).then(|| Geometry::new(space));
    let mut from = match start {
        Some(p) => p,
        None => match space.random_point(rng) {
            Some(p) => p,
            None => return Ok(()),
        },
    };
    let mut done = 0;
    loop {
        climb(
            space,
            tracker,
            from,
            &[],
            first_improvement,
            geo.as_ref(),
            rng,
        )?;
        if restarts.is_some_and(|r| done >= r) {
            return Ok(());
        }
        done += 1;
        match tracker.fresh_point(space, rng) {
            Some(p) => from = p,
            None => return Ok(()),
        }
    }
}
