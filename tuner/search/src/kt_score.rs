//! Kernel Tuner's score of a strategy on a brute-forced space, as the `autotuning_methodology`
//! package (Willemsen et al., FGCS 2024; what Kernel Tuner's hyperparameter tuning calls)
//! computes it over function evaluations, beside mats' own ([`super::benchmark`]). Both
//! standardise the best found against random search and the optimum,
//!
//! ```text
//! P(b) = (R(b) - F(b)) / (R(b) - optimum)
//! ```
//!
//! but they read the space and the runs differently:
//!
//! | | mats ([`super::benchmark`]) | Kernel Tuner (here) |
//! |---|---|---|
//! | space | every listed point, a failed one at the worst valid value | the valid points only (failed ones are left out, `include_nan=False`) |
//! | budget b at x% | x% of every listed point | x% of the valid points |
//! | R(b) | exact expectation of the best of b draws | the valid values sorted worst first, at index min(N-1, round(b(N+1)/(b+1))) |
//! | F(b) over seeds | mean of each seed's score | the value at the median over seeds of each seed's rank in the valid values (seeds with nothing valid yet left out) |
//! | nothing valid found | the worst valid value | 0 (random search's level) |
//!
//! In both a failed evaluation spends one function evaluation and finds nothing. Rounding is
//! NumPy's (half to even), so that the ranks match the package's.

use super::benchmark::SpaceStats;

/// The valid values of a space, what Kernel Tuner's score needs.
#[derive(Debug, Clone)]
pub struct KtStats {
    /// Successful points' objectives, ascending (failed points left out).
    pub valid: Vec<f64>,
}

/// A strategy's Kernel Tuner scores on one space.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KtScores {
    /// P(b) at each requested fraction of the valid points.
    pub at: Vec<f64>,
    /// Mean of P(b) over every budget from the smallest to the largest fraction.
    pub aggregate: f64,
}

impl KtStats {
    /// The valid values out of mats' statistics (which hold each failed point at the worst
    /// valid value, so the last `failed` entries are exactly the failed ones' copies).
    pub fn new(stats: &SpaceStats) -> KtStats {
        let valid = stats.sorted[..stats.sorted.len() - stats.failed].to_vec();
        KtStats { valid }
    }

    pub fn optimum(&self) -> f64 {
        self.valid.first().copied().unwrap_or(f64::NAN)
    }

    /// The budget that is `fraction` of the valid points, at least 1.
    pub fn budget(&self, fraction: f64) -> usize {
        let n = self.valid.len().max(1);
        ((fraction * n as f64).round() as usize).clamp(1, n)
    }

    /// The methodology's calculated random search: the value at the expected rank of the
    /// best of `b` draws, counted from the worst.
    pub fn random_best(&self, b: usize) -> f64 {
        let n = self.valid.len();
        if n == 0 {
            return f64::NAN;
        }
        let rank = (b as f64 * (n as f64 + 1.0) / (b as f64 + 1.0)).round_ties_even() as usize;
        let from_worst = rank.min(n - 1);
        self.valid[n - 1 - from_worst]
    }

    /// The position of `value` in the ascending valid values (NumPy's searchsorted, left).
    fn rank(&self, value: f64) -> usize {
        self.valid.partition_point(|v| *v < value)
    }

    /// F(b): the valid value at the median rank over seeds of each curve's best within `b`;
    /// None when no seed has found a valid point yet.
    pub fn median_found(&self, curves: &[Vec<f64>], b: usize) -> Option<f64> {
        let mut ranks: Vec<f64> = curves
            .iter()
            .filter_map(|c| c.get(b - 1).or(c.last()).copied())
            .filter(|v| v.is_finite())
            .map(|v| self.rank(v) as f64)
            .collect();
        if ranks.is_empty() {
            return None;
        }
        ranks.sort_by(f64::total_cmp);
        let m = ranks.len();
        let median = if m % 2 == 1 {
            ranks[m / 2]
        } else {
            (ranks[m / 2 - 1] + ranks[m / 2]) / 2.0
        };
        let i = (median.round_ties_even() as usize).min(self.valid.len() - 1);
        Some(self.valid[i])
    }

    /// P(b) of `curves` (best found after each distinct evaluation, +inf before the first
    /// success, as [`super::benchmark::best_so_far`] writes them).
    pub fn score(&self, curves: &[Vec<f64>], b: usize) -> f64 {
        let Some(found) = self.median_found(curves, b) else {
            return 0.0;
        };
        let random = self.random_best(b);
        let span = random - self.optimum();
        if span <= 0.0 {
            // Random search is at the optimum already: only the optimum matches it.
            return if found <= self.optimum() { 1.0 } else { 0.0 };
        }
        (random - found) / span
    }

    /// Scores at `fractions` and averaged over every budget of their range.
    pub fn score_curves(&self, curves: &[Vec<f64>], fractions: &[f64]) -> KtScores {
        let budgets: Vec<usize> = fractions.iter().map(|f| self.budget(*f)).collect();
        let lo = budgets.iter().copied().min().unwrap_or(1);
        let hi = budgets.iter().copied().max().unwrap_or(1);
        let aggregate =
            (lo..=hi).map(|b| self.score(curves, b)).sum::<f64>() / (hi - lo + 1) as f64;
        KtScores {
            at: budgets.iter().map(|&b| self.score(curves, b)).collect(),
            aggregate,
        }
    }
}

/// The largest budget (distinct evaluations) either score reads at `fractions`: mats' counts
/// every listed point, Kernel Tuner's the valid ones, so mats' is never smaller.
pub fn longest_budget(stats: &SpaceStats, fractions: &[f64]) -> usize {
    let kt = KtStats::new(stats);
    fractions
        .iter()
        .map(|f| stats.budget(*f).max(kt.budget(*f)))
        .max()
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nine valid values 10..90 and one failed point (mats holds it at the worst, 90).
    fn stats() -> SpaceStats {
        let mut sorted: Vec<f64> = (1..=9).map(|i| 10.0 * i as f64).collect();
        sorted.push(90.0);
        SpaceStats {
            sorted,
            optimum: 10.0,
            worst: 90.0,
            failed: 1,
        }
    }

    #[test]
    fn kernel_tuner_score_on_a_hand_computed_table() {
        let kt = KtStats::new(&stats());
        assert_eq!(
            kt.valid.len(),
            9,
            "the failed point is not part of the space"
        );
        // Expected rank from the worst: round(b (N+1) / (b+1)) with N = 9, half to even.
        assert_eq!(kt.random_best(1), 40.0); // 10/2 = 5
        assert_eq!(kt.random_best(2), 20.0); // 20/3 = 6.67 -> 7
        assert_eq!(kt.random_best(3), 10.0); // 30/4 = 7.5 -> 8 (even)
        assert_eq!(kt.random_best(0), 90.0);
        // Budgets count valid points: 25% of 9 is 2 (mats: 25% of 10 listed is 3).
        assert_eq!(kt.budget(0.25), 2);
        assert_eq!(stats().budget(0.25), 3);

        let inf = f64::INFINITY;
        let curves = vec![
            vec![inf, 50.0, 30.0],
            vec![60.0, 60.0, 20.0],
            // only failed points: left out of the median
            vec![inf, inf, inf],
        ];
        // b = 1: only 60 (rank 5): (40 - 60) / (40 - 10).
        assert!((kt.score(&curves, 1) - (-20.0 / 30.0)).abs() < 1e-12);
        // b = 2: ranks 4 and 5, median 4.5 -> 4 (even): 50; (20 - 50) / (20 - 10).
        assert_eq!(kt.median_found(&curves, 2), Some(50.0));
        assert!((kt.score(&curves, 2) - (-3.0)).abs() < 1e-12);
        // b = 3: ranks 2 and 1, median 1.5 -> 2 (even): 30; random is at the optimum.
        assert_eq!(kt.median_found(&curves, 3), Some(30.0));
        assert_eq!(kt.score(&curves, 3), 0.0);
        assert_eq!(kt.score(&[vec![10.0; 3]], 3), 1.0);
        // Nothing valid found by any seed counts as 0.
        assert_eq!(kt.score(&[vec![inf; 3]], 2), 0.0);

        let s = kt.score_curves(&curves, &[0.1, 0.25]);
        assert_eq!(s.at.len(), 2);
        // Budgets 1 and 2: the mean of P(1) and P(2).
        assert!((s.aggregate - (-20.0 / 30.0 - 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(longest_budget(&stats(), &[0.1, 0.25]), 3);
    }
}
