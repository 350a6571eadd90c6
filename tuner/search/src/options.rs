//! The options strategies share (neighbourhoods, cooling schedules, stage orders), apart from
//! the [`super::Strategy`] that names them, so that each strategy module depends on these and
//! the dispatch in `strategy.rs` depends on the strategies, never the other way round.

use serde::Deserialize;

/// The neighbourhood of hill climbing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Neighbourhood {
    /// Every other value of every parameter.
    #[default]
    Hamming,
    /// By parameter kind: the next valid value up and down of an ordinal parameter (threads,
    /// counts, levels), every other value of a categorical one (flags, variants).
    Adjacent,
}

/// argmin's temperature schedules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cooling {
    /// T0 * factor^k.
    #[default]
    Exponential,
    /// T0 / k.
    Fast,
    /// T0 / ln k.
    Boltzmann,
}

/// The order of a staged search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StageOrder {
    /// Compiler flags first, then the launch configuration from the best flags.
    OptThenThread,
    /// Launch configuration first, then the flags.
    ThreadThenOpt,
    /// Both groups at once.
    Combined,
}

/// How one stage searches its group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StageSearch {
    #[default]
    HillClimbing,
    /// Every valid combination of the group's values (the rest fixed).
    Exhaustive,
}

/// Simulated annealing's settings, as `Strategy::SimulatedAnnealing` holds them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnnealingOptions {
    pub initial_temperature: f64,
    pub cooling: Cooling,
    pub cooling_factor: f64,
    pub reanneal_best: Option<u64>,
    pub stall_best: Option<u64>,
}
