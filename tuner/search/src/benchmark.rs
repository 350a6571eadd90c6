//! The strategy benchmark of the auto-tuning community's methodology (Willemsen et al., "A
//! methodology for comparing optimization algorithms for auto-tuning", FGCS 2024; the FAIR
//! Benchmark Hub): on a brute-forced space, a strategy's best-found curve over the budget is
//! standardised against the calculated curve of random search and the optimum,
//!
//! ```text
//! score(b) = (random(b) - found(b)) / (random(b) - optimum)
//! ```
//!
//! (1: the optimum; 0: as good as random search on average; negative: worse), where
//! `random(b)` is the exact expectation of the best of `b` points drawn without replacement.
//! The score of a run is the mean of score(b) over every budget `b` of the range, and a
//! strategy's score on a space the mean over seeds. The methodology measures budgets in
//! tuning time; here they are counted in distinct evaluations (as a share of the space), which
//! is what a campaign's budget counts and what a replay can compare without timings.
//! Failed configurations count as the worst successful value.

use anyhow::{bail, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rayon::prelude::*;
use results::Point;

use super::{Objective, Objectives, SearchSpace, Strategy, TableEvaluator};

/// What the score of a space needs: its objective values, best first.
#[derive(Debug, Clone)]
pub struct SpaceStats {
    /// Every valid point's objective, ascending; failed points at the worst successful value.
    pub sorted: Vec<f64>,
    pub optimum: f64,
    pub worst: f64,
    pub failed: usize,
}

impl SpaceStats {
    pub fn new(
        space: &dyn SearchSpace,
        table: &TableEvaluator,
        objective: Objective,
    ) -> Result<SpaceStats> {
        let values: Vec<Option<f64>> = space
            .points()
            .map(|p| {
                table
                    .table()
                    .get(&p)
                    .copied()
                    .flatten()
                    .and_then(|o| objective.scalar(&o))
                    .filter(|v| v.is_finite() && *v > 0.0)
            })
            .collect();
        let ok: Vec<f64> = values.iter().flatten().copied().collect();
        if ok.is_empty() {
            bail!("the table holds no successful point of the space");
        }
        let worst = ok.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let optimum = ok.iter().copied().fold(f64::INFINITY, f64::min);
        let mut sorted: Vec<f64> = values.iter().map(|v| v.unwrap_or(worst)).collect();
        sorted.sort_by(f64::total_cmp);
        Ok(SpaceStats {
            failed: values.len() - ok.len(),
            sorted,
            optimum,
            worst,
        })
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// E[min of `b` values drawn without replacement]: the i-th smallest (1-based) is the
    /// minimum with probability C(N-i, b-1) / C(N, b).
    pub fn random_best(&self, b: usize) -> f64 {
        let n = self.sorted.len();
        if b == 0 {
            return self.worst;
        }
        let b = b.min(n);
        let mut p = b as f64 / n as f64;
        let mut total = 0.0;
        for i in 1..=n {
            total += p * self.sorted[i - 1];
            if i + b > n {
                break;
            }
            p *= (n - i + 1 - b) as f64 / (n - i) as f64;
        }
        total
    }

    /// The budget (distinct evaluations) that is `fraction` of the space, at least 1.
    pub fn budget(&self, fraction: f64) -> usize {
        ((fraction * self.len() as f64).round() as usize).clamp(1, self.len())
    }

    /// The standardised score of having found `found` within `b` evaluations.
    pub fn score(&self, b: usize, found: f64) -> f64 {
        let random = self.random_best(b);
        let span = random - self.optimum;
        if span <= self.optimum * 1e-12 {
            // Random search is sure to have the optimum: only the optimum matches it.
            return if found <= self.optimum { 1.0 } else { 0.0 };
        }
        (random - found.min(self.worst)) / span
    }
}

/// Best found after each distinct evaluation (1..=len), +inf until the first success; a run
/// that ended early keeps its last value.
pub fn best_so_far(values: impl IntoIterator<Item = Option<f64>>, len: usize) -> Vec<f64> {
    let mut best = f64::INFINITY;
    let mut out: Vec<f64> = values
        .into_iter()
        .take(len)
        .map(|v| {
            if let Some(v) = v.filter(|v| v.is_finite() && *v > 0.0) {
                best = best.min(v);
            }
            best
        })
        .collect();
    let last = out.last().copied().unwrap_or(f64::INFINITY);
    out.resize(len, last);
    out
}

/// One strategy's best-found curves, one per seed, up to `len` distinct evaluations.
pub fn strategy_curves(
    space: &(dyn SearchSpace + Sync),
    table: &TableEvaluator,
    strategy: &Strategy,
    objective: Objective,
    seeds: std::ops::Range<u64>,
    len: usize,
) -> Result<Vec<Vec<f64>>> {
    seeds
        .into_par_iter()
        .map(|seed| {
            let mut eval = table.clone();
            eval.reset(Some(len));
            let mut rng = StdRng::seed_from_u64(seed);
            let out = strategy.run(space, &mut eval, objective, None, &mut rng)?;
            Ok(best_so_far(
                out.history
                    .iter()
                    .map(|(_, o)| o.as_ref().and_then(|o| objective.scalar(o))),
                len,
            ))
        })
        .collect()
}

/// Scores of curves on a space.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Scores {
    /// Mean over seeds of score(b) at each requested fraction.
    pub at: Vec<f64>,
    /// Mean over seeds of optimum / best found at each requested fraction.
    pub share: Vec<f64>,
    /// Mean over seeds of the run's score averaged over every budget of the range.
    pub aggregate: f64,
    /// Standard deviation over seeds of that average.
    pub spread: f64,
    pub seeds: usize,
}

/// Scores `curves` (from [`strategy_curves`] or an external tool) at `fractions` and over every
/// budget from the smallest to the largest fraction.
pub fn score_curves(stats: &SpaceStats, curves: &[Vec<f64>], fractions: &[f64]) -> Scores {
    let budgets: Vec<usize> = fractions.iter().map(|f| stats.budget(*f)).collect();
    let lo = budgets.iter().copied().min().unwrap_or(1);
    let hi = budgets.iter().copied().max().unwrap_or(1);
    let found = |c: &Vec<f64>, b: usize| -> f64 {
        c.get(b - 1)
            .or(c.last())
            .copied()
            .unwrap_or(f64::INFINITY)
            .min(stats.worst)
    };
    let random: Vec<f64> = (lo..=hi).map(|b| stats.random_best(b)).collect();
    let per_run: Vec<f64> = curves
        .iter()
        .map(|c| {
            (lo..=hi)
                .map(|b| {
                    let span = random[b - lo] - stats.optimum;
                    if span <= stats.optimum * 1e-12 {
                        stats.score(b, found(c, b))
                    } else {
                        (random[b - lo] - found(c, b)) / span
                    }
                })
                .sum::<f64>()
                / (hi - lo + 1) as f64
        })
        .collect();
    let n = curves.len().max(1) as f64;
    let aggregate = per_run.iter().sum::<f64>() / n;
    let spread = (per_run.iter().map(|s| (s - aggregate).powi(2)).sum::<f64>() / n).sqrt();
    Scores {
        at: budgets
            .iter()
            .map(|&b| {
                curves
                    .iter()
                    .map(|c| stats.score(b, found(c, b)))
                    .sum::<f64>()
                    / n
            })
            .collect(),
        share: budgets
            .iter()
            .map(|&b| {
                curves
                    .iter()
                    .map(|c| stats.optimum / found(c, b))
                    .sum::<f64>()
                    / n
            })
            .collect(),
        aggregate,
        spread,
        seeds: curves.len(),
    }
}

/// The hypervolume that the points dominate up to `reference`, in two minimised metrics.
pub fn hypervolume(points: &[(f64, f64)], reference: (f64, f64)) -> f64 {
    let mut ps: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(a, b)| *a < reference.0 && *b < reference.1)
        .collect();
    ps.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let mut volume = 0.0;
    let mut ceiling = reference.1;
    for (a, b) in ps {
        if b < ceiling {
            volume += (reference.0 - a) * (ceiling - b);
            ceiling = b;
        }
    }
    volume
}

/// One budget of the Pareto study.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ParetoRow {
    pub fraction: f64,
    pub budget: usize,
    /// Mean over seeds of the found front's hypervolume / the exhaustive front's.
    pub share: f64,
    pub worst: f64,
    /// The same for random search (mean of its runs).
    pub random: f64,
}

/// How much of the exhaustive front's hypervolume `strategy` (a Pareto strategy) covers within
/// each fraction of the space. The reference point is the worst value of each metric among
/// the successful points (a little beyond, so that extreme points count).
pub fn pareto_study(
    space: &(dyn SearchSpace + Sync),
    table: &TableEvaluator,
    strategy: &Strategy,
    objective: Objective,
    fractions: &[f64],
    seeds: std::ops::Range<u64>,
) -> Result<Vec<ParetoRow>> {
    let pairs: Vec<(Point, (f64, f64))> = space
        .points()
        .filter_map(|p| {
            let o: Objectives = table.table().get(&p).copied().flatten()?;
            let pair = objective.pair(&o)?;
            Some((p, pair))
        })
        .collect();
    if pairs.is_empty() || objective.metric().is_some() {
        bail!("the Pareto study needs a table with two metrics for {objective}");
    }
    let reference = pairs.iter().fold((f64::MIN, f64::MIN), |r, (_, (a, b))| {
        (r.0.max(*a), r.1.max(*b))
    });
    let reference = (reference.0 * 1.01, reference.1 * 1.01);
    let all: Vec<(f64, f64)> = pairs.iter().map(|(_, v)| *v).collect();
    let full = hypervolume(&all, reference);
    let n = space.points().count();
    let budgets: Vec<usize> = fractions
        .iter()
        .map(|f| ((f * n as f64).round() as usize).clamp(1, n))
        .collect();
    let len = budgets.iter().copied().max().unwrap_or(1);
    // Random search runs on the first metric; its history still holds both.
    let run = |strategy: &Strategy, searched: Objective| -> Result<Vec<Vec<f64>>> {
        seeds
            .clone()
            .into_par_iter()
            .map(|seed| {
                let mut eval = table.clone();
                eval.reset(Some(len));
                let mut rng = StdRng::seed_from_u64(seed);
                let out = strategy.run(space, &mut eval, searched, None, &mut rng)?;
                let seen: Vec<(f64, f64)> = out
                    .history
                    .iter()
                    .filter_map(|(_, o)| o.as_ref().and_then(|o| objective.pair(o)))
                    .collect();
                let mut found = Vec::new();
                let mut taken = 0;
                let mut ok = 0;
                Ok(budgets
                    .iter()
                    .map(|&b| {
                        // history holds failed points too: count distinct evaluations
                        while taken < out.history.len().min(b) {
                            if out.history[taken]
                                .1
                                .as_ref()
                                .and_then(|o| objective.pair(o))
                                .is_some()
                            {
                                found.push(seen[ok]);
                                ok += 1;
                            }
                            taken += 1;
                        }
                        hypervolume(&found, reference) / full
                    })
                    .collect())
            })
            .collect()
    };
    let mine = run(strategy, objective)?;
    // Random search on the pair's first metric (a gap-first pair ran it on energy).
    let first = match objective {
        Objective::Pareto(a, _) => Objective::single(a),
        other => other,
    };
    let random = run(&Strategy::Random { batch: 16 }, first)?;
    let s = mine.len().max(1) as f64;
    Ok(budgets
        .iter()
        .enumerate()
        .map(|(k, &budget)| ParetoRow {
            fraction: fractions[k],
            budget,
            share: mine.iter().map(|r| r[k]).sum::<f64>() / s,
            worst: mine.iter().map(|r| r[k]).fold(f64::INFINITY, f64::min),
            random: random.iter().map(|r| r[k]).sum::<f64>() / random.len().max(1) as f64,
        })
        .collect())
}
