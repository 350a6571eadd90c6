//! What a campaign minimises.

use std::fmt;

use crate::search::Objectives;

/// One measured quantity; lower is better for all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Seconds per production run.
    Time,
    /// Average watts while running.
    Power,
    /// Joules per production run.
    Energy,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Time => "time",
            Metric::Power => "power",
            Metric::Energy => "energy",
        }
    }

    /// The metric's value, `None` when it was not measured (power on the CPU).
    pub fn of(self, o: &Objectives) -> Option<f64> {
        match self {
            Metric::Time => Some(o.time_s),
            Metric::Power => o.power_w,
            Metric::Energy => o.energy_j,
        }
    }

    /// Whether a backend can measure it.
    pub fn needs_power(self) -> bool {
        self != Metric::Time
    }
}

/// A single metric or a Pareto pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    Single(Metric),
    Pareto(Metric, Metric),
}

impl Objective {
    pub fn metrics(self) -> Vec<Metric> {
        match self {
            Objective::Single(m) => vec![m],
            Objective::Pareto(a, b) => vec![a, b],
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Objective::Single(m) => f.write_str(m.name()),
            Objective::Pareto(a, b) => write!(f, "pareto:{},{}", a.name(), b.name()),
        }
    }
}
