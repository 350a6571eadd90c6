//! The strategy configuration (a TOML table in a campaign) and the common entry point.

use anyhow::{bail, Result};
use results::Point;
use serde::Deserialize;

use super::options::AnnealingOptions;
pub use super::options::{Cooling, Neighbourhood, StageOrder, StageSearch};
use super::tracker::{until_stopped, Tracker};
use super::{
    annealing, basin_hopping, bayes, exhaustive, genetic, guided_climbing, hill_climbing, pareto,
    random, staged,
};
use super::{Evaluator, Objective, Objectives, SearchSpace};

/// A search strategy and its options, e.g. `{ name = "hill-climbing", restarts = 5 }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Strategy {
    /// Every valid point in the space's order.
    Exhaustive {
        /// Points handed to the evaluator at once (lets the runner compile ahead).
        #[serde(default = "default_batch")]
        batch: usize,
    },
    /// Uniformly drawn points, never the same one twice.
    Random {
        #[serde(default = "default_batch")]
        batch: usize,
    },
    /// Steepest (or first-improvement) descent over one-parameter changes, restarted from
    /// unseen random points; an argmin solver.
    HillClimbing {
        /// Restarts after the first climb; none given: until the budget is spent.
        #[serde(default)]
        restarts: Option<usize>,
        /// Move to the first better neighbour (random order) instead of the best one.
        #[serde(default)]
        first_improvement: bool,
        /// Which points are one step away.
        #[serde(default)]
        neighbourhood: Neighbourhood,
    },
    /// argmin's simulated annealing on the logarithm of the objective (so the temperature is
    /// relative: 0.1 accepts a 10% worse point about a quarter of the time at first).
    #[serde(alias = "annealing")]
    SimulatedAnnealing {
        #[serde(default = "default_temperature")]
        initial_temperature: f64,
        #[serde(default)]
        cooling: Cooling,
        /// Factor per iteration for `cooling = "exponential"`.
        #[serde(default = "default_cooling_factor")]
        cooling_factor: f64,
        /// Reheat after this many iterations without a new best.
        #[serde(default)]
        reanneal_best: Option<u64>,
        /// Stop after this many iterations without a new best.
        #[serde(default)]
        stall_best: Option<u64>,
    },
    /// The paper's staged search: compiler parameters (`flag`, `define`) and launch parameters
    /// (`launch`, `runtime`) one group after the other, or both at once.
    Staged {
        order: StageOrder,
        /// How each stage searches its group.
        #[serde(default)]
        stage_search: StageSearch,
        /// Hill-climbing restarts per stage.
        #[serde(default)]
        restarts: usize,
        #[serde(default)]
        first_improvement: bool,
    },
    /// Bayesian optimisation (a Gaussian-process surrogate and expected improvement) for small
    /// budgets; basin hopping from the best point once the model holds `model_points` points.
    #[serde(alias = "bayesian-optimisation")]
    Bayes {
        /// Random points before the first model; none given: parameters + 1, within 3..=10.
        #[serde(default)]
        initial: Option<usize>,
        #[serde(default = "default_model_points")]
        model_points: usize,
    },
    /// A (mu + lambda) genetic algorithm with kind-aware mutation and repair to valid points.
    Genetic {
        #[serde(default = "default_population")]
        population: usize,
        /// Probability that a child is mutated after crossover.
        #[serde(default = "default_mutation")]
        mutation: f64,
        /// Generations without a new best before half the population is replaced.
        #[serde(default = "default_stagnation")]
        stagnation: usize,
    },
    /// Basin hopping: kind-aware descent to a local optimum, a perturbation of a few parameters,
    /// descent again, Metropolis acceptance on ln(cost).
    BasinHopping {
        /// Relative temperature: 0.02 accepts a 2% worse optimum with probability 1/e.
        #[serde(default = "default_hop_temperature")]
        temperature: f64,
        /// Hops without a new best before a restart from an unseen random point.
        #[serde(default = "default_restart_after")]
        restart_after: usize,
    },
    /// First-improvement hill climbing that, once a climb stops improving, shares the budget
    /// between restarts and two-parameter moves from the incumbent ranked by an additive model
    /// of its measured neighbours; each restart begins at the unseen random point (of
    /// `restart_candidates`) that a main-effects model of the measured points estimates best.
    GuidedClimbing {
        /// Pair moves measured per turn before a random restart.
        #[serde(default = "default_pairs")]
        pairs: usize,
        /// Unseen random points each restart chooses among, by a main-effects model of the
        /// points measured so far (1: a plain random restart).
        #[serde(default = "default_restart_candidates")]
        restart_candidates: usize,
    },
    /// Pareto local search over two objectives: explore the neighbours of every point of the
    /// current front until none is left unexplored, then restart from an unseen random point.
    Pareto {
        /// Restarts after the first front is explored; none given: until the budget is spent.
        #[serde(default)]
        restarts: Option<usize>,
    },
}

impl Strategy {
    /// The strategy of a campaign that names none: guided climbing (first-improvement hill
    /// climbing that, when a climb stops improving, alternates model-chosen restarts with
    /// model-ranked pair moves from the incumbent) for one objective, chosen by `mats bench
    /// strategies` with 100 seeds on the five published spaces (docs/strategies.md), Pareto
    /// local search for two.
    pub fn default_for(objective: Objective) -> Strategy {
        match objective {
            Objective::Pareto(..) => Strategy::Pareto { restarts: None },
            _ => Strategy::GuidedClimbing {
                pairs: default_pairs(),
                restart_candidates: default_restart_candidates(),
            },
        }
    }
}

fn default_restart_candidates() -> usize {
    32
}

/// The most random points guided climbing draws per restart: each is drawn before the budget
/// is checked again, so an unbounded count could keep a campaign from ever ending.
pub const MAX_RESTART_CANDIDATES: usize = 1024;

/// The most points exhaustive and random search hand the evaluator at once: far more than
/// GPUs can measure side by side, and a bound on what a batch holds in memory.
pub const MAX_BATCH: usize = 10_000;

/// The most points bayes' Gaussian process holds: 400 trials took 37 s at 100,000 against
/// 11 s at 100, and the cost grows with the cube of the points held.
pub const MAX_MODEL_POINTS: usize = 2_000;

/// The largest genetic population: every member is measured before the first generation.
pub const MAX_POPULATION: usize = 10_000;

fn default_pairs() -> usize {
    4
}

fn default_batch() -> usize {
    16
}

fn default_temperature() -> f64 {
    0.1
}

fn default_cooling_factor() -> f64 {
    0.95
}

fn default_model_points() -> usize {
    100
}

fn default_population() -> usize {
    16
}

fn default_mutation() -> f64 {
    0.5
}

fn default_stagnation() -> usize {
    8
}

fn default_hop_temperature() -> f64 {
    0.02
}

fn default_restart_after() -> usize {
    10
}

/// What a search found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchOutcome {
    /// The best point and its objectives (single objective; the best in the first metric for
    /// a Pareto objective). None when no point succeeded.
    pub best: Option<(Point, Objectives)>,
    /// The non-dominated points (Pareto objective only).
    pub pareto: Vec<(Point, Objectives)>,
    /// Distinct points asked of the evaluator.
    pub evaluations: usize,
    /// Points the strategy asked for, repeats included (repeats were answered from memory).
    pub requests: usize,
    /// Distinct points in the order first asked, with their objectives (None: failed).
    pub history: Vec<(Point, Option<Objectives>)>,
    /// Staged search: distinct evaluations at the end of each stage.
    pub stages: Vec<usize>,
    /// The search ended because the evaluator was exhausted (or it only revisited points),
    /// not on its own.
    pub stopped: bool,
}

impl SearchOutcome {
    /// The best objective value among the first `k` distinct evaluations.
    pub fn best_within(&self, k: usize, objective: Objective) -> Option<f64> {
        self.history
            .iter()
            .take(k)
            .filter_map(|(_, o)| o.as_ref().and_then(|o| objective.scalar(o)))
            .min_by(f64::total_cmp)
    }
}

impl Strategy {
    /// The name as written in TOML.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Exhaustive { .. } => "exhaustive",
            Strategy::Random { .. } => "random",
            Strategy::HillClimbing { .. } => "hill-climbing",
            Strategy::SimulatedAnnealing { .. } => "simulated-annealing",
            Strategy::Staged { .. } => "staged",
            Strategy::Pareto { .. } => "pareto",
            Strategy::Bayes { .. } => "bayes",
            Strategy::Genetic { .. } => "genetic",
            Strategy::BasinHopping { .. } => "basin-hopping",
            Strategy::GuidedClimbing { .. } => "guided-climbing",
        }
    }

    /// The name runs are recorded under: the TOML name, and for the staged search its order
    /// (`staged:opt-then-thread`), so the orders can be told apart in results and reports.
    pub fn label(&self) -> String {
        match self {
            Strategy::Staged { order, .. } => format!(
                "staged:{}",
                match order {
                    StageOrder::OptThenThread => "opt-then-thread",
                    StageOrder::ThreadThenOpt => "thread-then-opt",
                    StageOrder::Combined => "combined",
                }
            ),
            other => other.name().to_string(),
        }
    }

    /// Parses a strategy table (`origin` names it in errors).
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Strategy> {
        toml::from_str(text)
            .map_err(|e| anyhow::anyhow!(crate::errors::toml_line(origin, text, &e)))
    }

    /// Searches `space` through `eval` from `start` (a random point, or for the staged search
    /// the space's first point, when None) and returns the best point or the Pareto set. Stops
    /// when the evaluator is exhausted, returning what it found so far.
    pub fn run(
        &self,
        space: &dyn SearchSpace,
        eval: &mut dyn Evaluator,
        objective: Objective,
        start: Option<Point>,
        rng: &mut dyn rand::RngCore,
    ) -> Result<SearchOutcome> {
        let pareto = matches!(self, Strategy::Pareto { .. });
        self.check_for(objective)?;
        if let Some(s) = &start {
            if !space.is_valid(s) {
                bail!("the start point {s} is not a valid point of the space");
            }
        }
        let mut tracker = Tracker::new(eval, objective);
        let result = match self {
            Strategy::Exhaustive { batch } => exhaustive::run(space, &mut tracker, *batch),
            Strategy::Random { batch } => random::run(space, &mut tracker, *batch, rng),
            Strategy::HillClimbing {
                restarts,
                first_improvement,
                neighbourhood,
            } => hill_climbing::run(
                space,
                &mut tracker,
                start,
                *restarts,
                *first_improvement,
                *neighbourhood,
                rng,
            ),
            Strategy::Bayes {
                initial,
                model_points,
            } => bayes::run(space, &mut tracker, start, *initial, *model_points, rng),
            Strategy::Genetic {
                population,
                mutation,
                stagnation,
            } => genetic::run(
                space,
                &mut tracker,
                start,
                *population,
                *mutation,
                *stagnation,
                rng,
            ),
            Strategy::BasinHopping {
                temperature,
                restart_after,
            } => basin_hopping::run(
                space,
                &mut tracker,
                start,
                *temperature,
                *restart_after,
                None,
                rng,
            ),
            Strategy::GuidedClimbing {
                pairs,
                restart_candidates,
            } => guided_climbing::run(space, &mut tracker, start, *pairs, *restart_candidates, rng),
            Strategy::SimulatedAnnealing {
                initial_temperature,
                cooling,
                cooling_factor,
                reanneal_best,
                stall_best,
            } => {
                let options = AnnealingOptions {
                    initial_temperature: *initial_temperature,
                    cooling: *cooling,
                    cooling_factor: *cooling_factor,
                    reanneal_best: *reanneal_best,
                    stall_best: *stall_best,
                };
                annealing::run(space, &mut tracker, start, &options, rng)
            }
            Strategy::Staged {
                order,
                stage_search,
                restarts,
                first_improvement,
            } => staged::run(
                space,
                &mut tracker,
                start,
                *order,
                *stage_search,
                *restarts,
                *first_improvement,
                rng,
            ),
            Strategy::Pareto { restarts } => {
                pareto::run(space, &mut tracker, start, *restarts, rng)
            }
        };
        let stopped = until_stopped(result)?;
        let front = if pareto { tracker.front() } else { Vec::new() };
        Ok(SearchOutcome {
            best: tracker.best.map(|(p, o, _)| (p, o)),
            pareto: front,
            evaluations: tracker.history.len(),
            requests: tracker.requests,
            history: tracker.history,
            stages: tracker.stages,
            stopped,
        })
    }

    /// Whether this strategy can search for `objective` with its settings: what a run checks
    /// first, and what a campaign's check asks before anything is queued or measured.
    pub fn check_for(&self, objective: Objective) -> Result<()> {
        let pareto = matches!(self, Strategy::Pareto { .. });
        match (pareto, objective) {
            (true, Objective::Pareto(..))
            | (false, Objective::Time)
            | (false, Objective::Power)
            | (false, Objective::Energy)
            | (false, Objective::Gap) => {}
            (true, _) => {
                bail!("the pareto strategy needs two objectives, e.g. objective = [\"time\", \"energy\"]")
            }
            (false, _) => bail!(
                "strategy {} minimises one objective; use the pareto strategy for {objective}",
                self.name()
            ),
        }
        self.check()
    }

    fn check(&self) -> Result<()> {
        match self {
            Strategy::Exhaustive { batch } | Strategy::Random { batch }
                if !(1..=MAX_BATCH).contains(batch) =>
            {
                bail!(
                    "strategy {}: batch must be in 1..={MAX_BATCH} (points handed to the \
                     evaluator at once), got {batch}",
                    self.name()
                )
            }
            Strategy::SimulatedAnnealing {
                initial_temperature,
                cooling_factor,
                reanneal_best,
                stall_best,
                ..
            } => {
                for (key, value) in [("reanneal_best", reanneal_best), ("stall_best", stall_best)] {
                    if *value == Some(0) {
                        bail!("simulated-annealing: {key} must be at least 1 (iterations)");
                    }
                }
                if !(initial_temperature.is_finite() && *initial_temperature > 0.0) {
                    bail!("simulated-annealing: initial_temperature must be > 0, got {initial_temperature}");
                }
                if !(*cooling_factor > 0.0 && *cooling_factor < 1.0) {
                    bail!("simulated-annealing: cooling_factor must be in (0, 1), got {cooling_factor}");
                }
                Ok(())
            }
            Strategy::Genetic {
                population,
                mutation,
                stagnation,
            } => {
                if *stagnation == 0 {
                    bail!("genetic: stagnation must be at least 1 (generations)");
                }
                if !(2..=MAX_POPULATION).contains(population) {
                    bail!("genetic: population must be in 2..={MAX_POPULATION}, got {population}");
                }
                if !(0.0..=1.0).contains(mutation) {
                    bail!("genetic: mutation must be in [0, 1], got {mutation}");
                }
                Ok(())
            }
            Strategy::GuidedClimbing { pairs: 0, .. } => {
                bail!("guided-climbing: pairs must be at least 1")
            }
            Strategy::GuidedClimbing {
                restart_candidates, ..
            } if !(1..=MAX_RESTART_CANDIDATES).contains(restart_candidates) => bail!(
                "guided-climbing: restart_candidates must be in 1..={MAX_RESTART_CANDIDATES} \
                 (random points drawn per restart), got {restart_candidates}"
            ),
            Strategy::BasinHopping { temperature, .. }
                if !(*temperature >= 0.0 && temperature.is_finite()) =>
            {
                bail!("basin-hopping: temperature must be >= 0, got {temperature}")
            }
            Strategy::BasinHopping {
                restart_after: 0, ..
            } => bail!("basin-hopping: restart_after must be at least 1 (hops)"),
            Strategy::Bayes {
                initial: Some(0), ..
            } => bail!("bayes: initial must be at least 1 (random points before the first model)"),
            // The model's cost grows as the cube of its points and is paid at every step.
            Strategy::Bayes { model_points, .. }
                if !(1..=MAX_MODEL_POINTS).contains(model_points) =>
            {
                bail!(
                    "bayes: model_points must be in 1..={MAX_MODEL_POINTS} (points the \
                     Gaussian process holds), got {model_points}"
                )
            }
            _ => Ok(()),
        }
    }
}
