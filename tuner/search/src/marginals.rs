//! A main-effects model of the cost, fitted to everything a search has measured: each
//! parameter value's effect is the mean log cost of the measured points that take it, less
//! the mean of all. It knows nothing of interactions, but it costs no evaluation, and on the
//! published spaces the good configurations share values (tile sizes, strides, flags) that
//! a few hundred random-ish points already tell apart. Guided climbing uses it to pick where
//! a restart begins.

use std::collections::HashMap;

use results::{Point, Value};

use super::{Objective, Objectives};

pub(crate) struct Marginals {
    /// (parameter, value) -> (sum of deviations from the mean, points).
    effects: HashMap<(String, Value), (f64, usize)>,
}

impl Marginals {
    /// The model of `history` (failed points at the worst log cost measured); None before
    /// anything succeeded.
    pub fn fit(history: &[(Point, Option<Objectives>)], objective: Objective) -> Option<Marginals> {
        let logs = objective.history_log_costs(history)?;
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let mut effects: HashMap<(String, Value), (f64, usize)> = HashMap::new();
        for ((p, _), l) in history.iter().zip(&logs) {
            for (name, value) in &p.0 {
                let e = effects.entry((name.clone(), value.clone())).or_default();
                e.0 += l - mean;
                e.1 += 1;
            }
        }
        Some(Marginals { effects })
    }

    /// The estimated log cost of `p` relative to the mean of the measured points; a value
    /// never measured counts as average.
    pub fn estimate(&self, p: &Point) -> f64 {
        p.0.iter()
            .filter_map(|(name, value)| self.effects.get(&(name.clone(), value.clone())))
            .map(|(sum, n)| sum / *n as f64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(a: i64, b: i64) -> Point {
        Point(
            [
                ("a".to_string(), Value::Int(a)),
                ("b".to_string(), Value::Int(b)),
            ]
            .into_iter()
            .collect(),
        )
    }

    fn time(t: f64) -> Option<Objectives> {
        Some(Objectives {
            time_s: t,
            ..Objectives::default()
        })
    }

    #[test]
    fn main_effects_rank_points_by_their_values_and_count_failures_as_the_worst() {
        // ln costs 0, ln 2, ln 4 and the failed (1, 1) at the worst, ln 4 (mean 5 ln 2 / 4):
        // a = 0 averages ln 2 / 2 and a = 1 2 ln 2, b = 0 ln 2 and b = 1 3 ln 2 / 2. Leaving
        // the failure out would give (0, 0) -ln 2 / 2.
        let history = vec![
            (point(0, 0), time(1.0)),
            (point(0, 1), time(2.0)),
            (point(1, 0), time(4.0)),
            (point(1, 1), None),
        ];
        let m = Marginals::fit(&history, Objective::Time).expect("something succeeded");
        let ln2 = 2f64.ln();
        assert!((m.estimate(&point(0, 0)) + ln2).abs() < 1e-12);
        assert!((m.estimate(&point(1, 1)) - ln2).abs() < 1e-12);
        assert!(m.estimate(&point(0, 1)) < m.estimate(&point(1, 0)));
        // A value never measured is average: only b's effect remains.
        assert!((m.estimate(&point(7, 0)) + ln2 / 4.0).abs() < 1e-12);
        // Nothing to compare against before a success.
        let failed_only = vec![(point(0, 0), None)];
        assert!(Marginals::fit(&failed_only, Objective::Time).is_none());
    }
}
