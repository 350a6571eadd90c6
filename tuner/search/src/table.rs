//! Replaying a brute-forced space: an evaluator that answers from a table, and the study of
//! how close a strategy gets to the optimum within a share of the space's points.

use std::collections::{HashMap, HashSet};

use anyhow::{bail, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use results::Point;

use super::{Evaluator, Objective, Objectives, SearchSpace, Strategy};

/// Answers from precomputed objectives (None for points missing from the table, as for a
/// failed measurement); counts the distinct points asked and is exhausted once `budget` of
/// them were.
#[derive(Debug, Clone, Default)]
pub struct TableEvaluator {
    table: HashMap<Point, Option<Objectives>>,
    asked: HashSet<Point>,
    budget: Option<usize>,
    /// Calls of `evaluate`.
    pub calls: usize,
}

impl TableEvaluator {
    pub fn new(table: HashMap<Point, Option<Objectives>>) -> TableEvaluator {
        TableEvaluator {
            table,
            ..TableEvaluator::default()
        }
    }

    /// A table of the time objective only.
    pub fn from_times(times: impl IntoIterator<Item = (Point, f64)>) -> TableEvaluator {
        TableEvaluator::new(
            times
                .into_iter()
                .map(|(p, t)| {
                    (
                        p,
                        Some(Objectives {
                            time_s: t,
                            ..Objectives::default()
                        }),
                    )
                })
                .collect(),
        )
    }

    /// Every valid point of `space` scored by `f` (None: failed).
    pub fn from_fn(
        space: &dyn SearchSpace,
        mut f: impl FnMut(&Point) -> Option<Objectives>,
    ) -> TableEvaluator {
        TableEvaluator::new(
            space
                .points()
                .map(|p| {
                    let o = f(&p);
                    (p, o)
                })
                .collect(),
        )
    }

    pub fn with_budget(mut self, budget: usize) -> TableEvaluator {
        self.budget = Some(budget);
        self
    }

    /// Forgets what was asked (for the next run on the same table).
    pub fn reset(&mut self, budget: Option<usize>) {
        self.asked.clear();
        self.calls = 0;
        self.budget = budget;
    }

    /// Distinct points asked so far.
    pub fn distinct(&self) -> usize {
        self.asked.len()
    }

    pub fn table(&self) -> &HashMap<Point, Option<Objectives>> {
        &self.table
    }
}

impl Evaluator for TableEvaluator {
    fn evaluate(&mut self, points: &[Point]) -> Result<Vec<Option<Objectives>>> {
        self.calls += 1;
        Ok(points
            .iter()
            .map(|p| {
                self.asked.insert(p.clone());
                self.table.get(p).copied().flatten()
            })
            .collect())
    }

    fn exhausted(&self) -> bool {
        self.budget.is_some_and(|b| self.asked.len() >= b)
    }
}

/// One row of the replay study: a budget as a share of the space.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReplayRow {
    /// Share of the valid points allowed.
    pub fraction: f64,
    /// That many distinct evaluations (at least 1).
    pub budget: usize,
    /// Mean over seeds of optimum / best found (1 = the optimum; 0 where nothing succeeded).
    pub share: f64,
    /// The worst seed's share.
    pub worst_share: f64,
    /// Expected share of random search without replacement with the same budget (exact).
    pub random_share: f64,
    /// (share - random) / (1 - random): 1 = always the optimum, 0 = no better than random.
    pub score: f64,
    pub seeds: usize,
}

/// Runs `strategy` on the table once per seed (budget: the largest fraction of the space's
/// valid points) and reports, for each fraction, the best found within that many distinct
/// evaluations as a share of the optimum, against random search's expected share.
pub fn replay_study(
    space: &dyn SearchSpace,
    table: &TableEvaluator,
    strategy: &Strategy,
    objective: Objective,
    fractions: &[f64],
    seeds: std::ops::Range<u64>,
) -> Result<Vec<ReplayRow>> {
    if objective.metric().is_none() {
        bail!("the replay study needs a single objective, not {objective}");
    }
    let values: Vec<f64> = space
        .points()
        .map(|p| {
            table
                .table()
                .get(&p)
                .copied()
                .flatten()
                .and_then(|o| objective.scalar(&o))
                .filter(|v| *v > 0.0)
                .unwrap_or(f64::INFINITY)
        })
        .collect();
    let n = values.len();
    let optimum = values.iter().copied().fold(f64::INFINITY, f64::min);
    if n == 0 || !optimum.is_finite() {
        bail!("the table holds no successful point of the space");
    }
    if fractions.iter().any(|f| !(*f > 0.0 && *f <= 1.0)) || seeds.is_empty() {
        bail!("fractions must be in (0, 1] and seeds non-empty");
    }
    let budgets: Vec<usize> = fractions
        .iter()
        .map(|f| ((f * n as f64).round() as usize).clamp(1, n))
        .collect();
    let max_budget = budgets.iter().copied().max().unwrap_or(1);
    let mut shares = vec![Vec::new(); fractions.len()];
    for seed in seeds.clone() {
        let mut eval = table.clone();
        eval.reset(Some(max_budget));
        let mut rng = StdRng::seed_from_u64(seed);
        let outcome = strategy.run(space, &mut eval, objective, None, &mut rng)?;
        for (k, &b) in budgets.iter().enumerate() {
            let found = outcome.best_within(b, objective).unwrap_or(f64::INFINITY);
            shares[k].push(optimum / found);
        }
    }
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    Ok(fractions
        .iter()
        .zip(&budgets)
        .zip(&shares)
        .map(|((&fraction, &budget), s)| {
            let share = s.iter().sum::<f64>() / s.len() as f64;
            let random_share = expected_random_share(&sorted, budget, optimum);
            let score = if random_share >= 1.0 - 1e-12 {
                1.0
            } else {
                (share - random_share) / (1.0 - random_share)
            };
            ReplayRow {
                fraction,
                budget,
                share,
                worst_share: s.iter().copied().fold(f64::INFINITY, f64::min),
                random_share,
                score,
                seeds: s.len(),
            }
        })
        .collect())
}

/// E[optimum / min of `b` values drawn without replacement] over ascending `sorted` values:
/// the minimum is the i-th smallest (1-based) with probability C(N-i, b-1) / C(N, b).
pub(crate) fn expected_random_share(sorted: &[f64], b: usize, optimum: f64) -> f64 {
    let n = sorted.len();
    if b == 0 || n == 0 {
        return 0.0;
    }
    // p_1 = b / N; p_{i+1} / p_i = (N - i - b + 1) / (N - i).
    let mut p = b as f64 / n as f64;
    let mut total = 0.0;
    for i in 1..=n {
        if p <= 0.0 {
            break;
        }
        total += p * (optimum / sorted[i - 1]);
        if i + b > n {
            break;
        }
        p *= (n - i + 1 - b) as f64 / (n - i) as f64;
    }
    total
}
