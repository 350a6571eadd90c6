//! What a strategy minimises: one measured quantity, or the Pareto set of two.

use std::fmt;
use std::str::FromStr;

use results::Point;

use super::Objectives;

pub use results::Metric;

/// A metric's value in a point's [`Objectives`].
pub trait MetricValue: Copy {
    /// The value, or None where it was not measured (a point without it counts as failed).
    fn of(self, o: &Objectives) -> Option<f64>;
}

impl MetricValue for Metric {
    fn of(self, o: &Objectives) -> Option<f64> {
        let v = match self {
            Metric::Time => Some(o.time_s),
            Metric::Power => o.power_w,
            Metric::Energy => o.energy_j,
            Metric::Gap => o.gap_percent,
        };
        v.filter(|v| v.is_finite())
    }
}

/// Percent added to a gap before its logarithm: gaps below about this much count as the
/// optimum's (one unit of cost on a QAPLIB instance of n = 40 is about 3e-5 %).
pub const GAP_LOG_SHIFT: f64 = 0.01;

/// What a search minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Objective {
    Time,
    Power,
    Energy,
    Gap,
    /// The Pareto set of two metrics.
    Pareto(Metric, Metric),
}

impl Objective {
    /// The objective that minimises one metric.
    pub fn single(metric: Metric) -> Objective {
        match metric {
            Metric::Time => Objective::Time,
            Metric::Power => Objective::Power,
            Metric::Energy => Objective::Energy,
            Metric::Gap => Objective::Gap,
        }
    }

    /// The single metric, or None for a Pareto objective.
    pub fn metric(self) -> Option<Metric> {
        match self {
            Objective::Time => Some(Metric::Time),
            Objective::Power => Some(Metric::Power),
            Objective::Energy => Some(Metric::Energy),
            Objective::Gap => Some(Metric::Gap),
            Objective::Pareto(..) => None,
        }
    }

    /// The scalar to minimise (the first metric for a Pareto objective); None for a failed
    /// point.
    pub fn scalar(self, o: &Objectives) -> Option<f64> {
        match self {
            Objective::Pareto(a, _) => a.of(o),
            single => single.metric().and_then(|m| m.of(o)),
        }
    }

    /// The metric strategies rank by (the first of a Pareto objective).
    pub fn ranked_metric(self) -> Metric {
        match self {
            Objective::Pareto(a, _) => a,
            Objective::Time => Metric::Time,
            Objective::Power => Metric::Power,
            Objective::Energy => Metric::Energy,
            Objective::Gap => Metric::Gap,
        }
    }

    /// The scalar on a logarithmic scale, on which model-based and annealing strategies
    /// compare relative differences; None where it has no logarithm (a failed point, or a
    /// time, power or energy that is not positive). A gap of 0 is the best value there is, so
    /// gaps are shifted by [`GAP_LOG_SHIFT`] first: taking ln of a gap as it is would make
    /// the optimum a failure.
    pub fn log_cost(self, c: f64) -> Option<f64> {
        if !c.is_finite() {
            return None;
        }
        match self.ranked_metric() {
            Metric::Gap => Some((c.max(0.0) + GAP_LOG_SHIFT).ln()),
            _ => (c > 0.0).then(|| c.ln()),
        }
    }

    /// The log cost of every measured point, a failed one (or one without a logarithm)
    /// counted as the worst that succeeded, which is how the models read a history; None
    /// while nothing succeeded.
    pub fn history_log_costs<P>(self, history: &[(P, Option<Objectives>)]) -> Option<Vec<f64>> {
        let logs: Vec<Option<f64>> = history
            .iter()
            .map(|(_, o)| {
                o.as_ref()
                    .and_then(|o| self.scalar(o))
                    .and_then(|c| self.log_cost(c))
            })
            .collect();
        let worst = logs.iter().flatten().copied().reduce(f64::max)?;
        Some(logs.into_iter().map(|l| l.unwrap_or(worst)).collect())
    }

    /// Both metrics of a Pareto objective (the scalar twice for a single one).
    pub fn pair(self, o: &Objectives) -> Option<(f64, f64)> {
        match self {
            Objective::Pareto(a, b) => Some((a.of(o)?, b.of(o)?)),
            single => {
                let v = single.scalar(o)?;
                Some((v, v))
            }
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Objective::Pareto(a, b) => write!(f, "pareto:{},{}", a.name(), b.name()),
            single => f.write_str(single.metric().map_or("?", Metric::name)),
        }
    }
}

impl FromStr for Objective {
    type Err = String;

    /// `time`, `power`, `energy`, `gap`, or two of them for a Pareto objective:
    /// `pareto:time,energy` (the one spelling, as stores and reports write it) or `time,energy`.
    fn from_str(s: &str) -> Result<Self, String> {
        let metric = |m: &str| match m.trim() {
            "time" => Ok(Metric::Time),
            "power" => Ok(Metric::Power),
            "energy" => Ok(Metric::Energy),
            "gap" => Ok(Metric::Gap),
            other => Err(format!(
                "unknown objective {other:?}; known: time, power, energy, gap, pareto:A,B"
            )),
        };
        let inner = s.trim().strip_prefix("pareto:").unwrap_or(s);
        match inner.split_once(',') {
            Some((a, b)) => {
                let (a, b) = (metric(a)?, metric(b)?);
                if a == b {
                    return Err(format!(
                        "a Pareto objective needs two different metrics: {s:?}"
                    ));
                }
                Ok(Objective::Pareto(a, b))
            }
            None => Ok(Objective::single(metric(inner)?)),
        }
    }
}

/// The points of `points` that no other point dominates (no worse in both metrics and better
/// in one); points with equal objectives are all kept. Failed points never belong to it.
pub fn pareto_front(
    points: &[(Point, Option<Objectives>)],
    objective: Objective,
) -> Vec<(Point, Objectives)> {
    let scored: Vec<(&Point, Objectives, (f64, f64))> = points
        .iter()
        .filter_map(|(p, o)| {
            let o = (*o)?;
            Some((p, o, objective.pair(&o)?))
        })
        .collect();
    let values: Vec<[f64; 2]> = scored.iter().map(|(_, _, (a, b))| [*a, *b]).collect();
    let front: Vec<[f64; 2]> = results::pareto_front(&values)
        .into_iter()
        .map(|i| values[i])
        .collect();
    // The shared front keeps one of several identical points; a strategy's front keeps every
    // point with those objectives (two points measured alike are both candidates).
    scored
        .iter()
        .zip(&values)
        .filter(|(_, v)| front.contains(v))
        .map(|((p, o, _), _)| ((*p).clone(), *o))
        .collect()
}
