//! Search spaces ([`space`]) and search strategies, separated (as in Kernel Tuner) from the space they walk and from the
//! runner that measures points. A strategy sees a [`SearchSpace`] and an [`Evaluator`]; it
//! never knows whether a point was measured now or came from the trial store.

pub mod errors;
pub mod space;

mod annealing;
mod basin_hopping;
mod bayes;
pub mod benchmark;
mod exhaustive;
mod genetic;
mod geometry;
mod gp;
mod guided_climbing;
mod hill_climbing;
pub mod kt_cache;
pub mod kt_score;
mod marginals;
mod objective;
mod options;
mod pareto;
mod random;
mod staged;
mod strategy;
mod table;
mod table_space;
mod tracker;

#[cfg(test)]
mod tests;

use results::Point;

pub use objective::{pareto_front, Metric, MetricValue, Objective};
pub use strategy::{Cooling, Neighbourhood, SearchOutcome, StageOrder, StageSearch, Strategy};
pub use table::{replay_study, ReplayRow, TableEvaluator};
pub use table_space::TableSpace;

/// How a parameter reaches the code; staged strategies group parameters by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamKind {
    /// An NVRTC/ptxas option.
    Flag,
    /// A `#define NAME VALUE` in the kernel source.
    Define,
    /// Grid, block or shared-memory size of the launch.
    Launch,
    /// The algorithm variant.
    Variant,
    /// An argument of the solver (iterations, tenure, starts, threads on the CPU).
    Runtime,
    /// The dataset class.
    Class,
}

/// What strategies need from a space. Every point handed out is valid (all constraints hold).
pub trait SearchSpace {
    /// Parameter names and kinds, in the space file's order.
    fn parameters(&self) -> Vec<(String, ParamKind)>;
    /// All valid points, lazily, in a fixed order.
    fn points(&self) -> Box<dyn Iterator<Item = Point> + '_>;
    /// A uniformly drawn valid point, or None when the space has no valid point.
    fn random_point(&self, rng: &mut dyn rand::RngCore) -> Option<Point>;
    /// Valid points that differ from `point` in exactly one of `params` (all parameters when
    /// `params` is empty), plus, where that parameter decides which others apply (a variant
    /// with parameters of its own), the parameters that appear or disappear with it.
    fn neighbours(&self, point: &Point, params: &[String]) -> Vec<Point>;
    fn is_valid(&self, point: &Point) -> bool;
}

/// The measured objectives of a point on a class. Lower is better for all three.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Objectives {
    pub time_s: f64,
    pub power_w: Option<f64>,
    pub energy_j: Option<f64>,
    /// Mean gap to the best-known value, percent (quality objectives).
    #[serde(default)]
    pub gap_percent: Option<f64>,
}

/// Measures points (or answers from the store). `None` for a point that failed, crashed,
/// produced invalid solutions or was rejected by the quality guard: strategies treat it as
/// worse than any measured point and never ask for it again.
pub trait Evaluator {
    fn evaluate(&mut self, points: &[Point]) -> anyhow::Result<Vec<Option<Objectives>>>;
    /// True once the budget is spent or the user asked to stop; strategies return their best
    /// so far.
    fn exhausted(&self) -> bool;
    /// How many points one batch may hold before another point adds no parallelism (several
    /// GPUs, each measuring one trial at a time). Strategies that measure one point at a time
    /// (first improvement) look this many unseen points ahead, so every GPU has work; their
    /// moves stay those of the one-at-a-time scan. 1 keeps them one point at a time.
    fn parallel_points(&self) -> usize {
        1
    }
}
