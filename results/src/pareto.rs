//! Non-dominated sets for minimisation: the power/performance fronts of the reports and the
//! archive of the Pareto search strategy.
//!
//! Conventions shared by both functions:
//!
//! - every objective is minimised; `a` dominates `b` when `a <= b` in every objective and
//!   `a < b` in at least one;
//! - a point with a NaN objective is never on the front (a missing measurement is not a good
//!   one), and it dominates nothing;
//! - of several identical front points only the one with the lowest index is kept, so a point
//!   measured twice with the same result appears once;
//! - `-0.0` and `0.0` are equal, infinities order as usual.

use std::cmp::Ordering;

/// Indices of the non-dominated points of a two-objective minimisation, sorted by the first
/// objective (ascending; the second then descends along the front). O(n log n).
pub fn pareto_front(values: &[[f64; 2]]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len())
        .filter(|&i| !values[i][0].is_nan() && !values[i][1].is_nan())
        .collect();
    // NaN is filtered out above, so partial_cmp always answers; it (unlike total_cmp) treats
    // -0.0 and 0.0 as equal, as dominance must. Ties go to the lower index so the kept copy
    // of a duplicate is the first.
    order.sort_by(|&a, &b| {
        cmp_f64(values[a][0], values[b][0])
            .then(cmp_f64(values[a][1], values[b][1]))
            .then(a.cmp(&b))
    });
    let mut front = Vec::new();
    let mut best_second = f64::INFINITY;
    for i in order {
        // Everything before i in this order has a first objective <= i's, so i is dominated
        // (or a duplicate) exactly when one of them has a second objective <= i's. The very
        // first point is always kept, even at +inf.
        if front.is_empty() || values[i][1] < best_second {
            best_second = values[i][1];
            front.push(i);
        }
    }
    front
}

/// Indices of the non-dominated points of a `K`-objective minimisation, in lexicographic
/// order of their objective vectors (for `K = 2` the same answer as `pareto_front`).
/// O(n log n + n f K) for a front of size f: fine for the hundreds of points a campaign has.
pub fn non_dominated<const K: usize>(values: &[[f64; K]]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len())
        .filter(|&i| values[i].iter().all(|v| !v.is_nan()))
        .collect();
    order.sort_by(|&a, &b| {
        values[a]
            .iter()
            .zip(&values[b])
            .fold(Ordering::Equal, |o, (x, y)| o.then(cmp_f64(*x, *y)))
            .then(a.cmp(&b))
    });
    // A point can only be dominated by (or duplicate) one that sorts before it, and if that
    // one is itself dominated, its dominator dominates the point too: comparing against the
    // front kept so far is enough.
    let mut front: Vec<usize> = Vec::new();
    for i in order {
        let covered = front
            .iter()
            .any(|&j| values[j].iter().zip(&values[i]).all(|(a, b)| a <= b));
        if !covered {
            front.push(i);
        }
    }
    front
}

/// Whether `a` dominates `b` in a minimisation (no NaN handling: NaN compares false, so a
/// NaN point neither dominates nor is dominated by this test alone).
pub fn dominates(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y) && a.iter().zip(b).any(|(x, y)| x < y)
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_front() {
        let v = [
            [3.0, 1.0],
            [1.0, 3.0],
            [2.0, 2.0],
            [2.0, 3.0],
            [1.0, 3.0],
            [f64::NAN, 0.0],
        ];
        assert_eq!(pareto_front(&v), vec![1, 2, 0]);
        assert_eq!(non_dominated(&v), vec![1, 2, 0]);
    }

    #[test]
    fn signed_zero_is_equal() {
        let v = [[-0.0, 3.0], [0.0, 2.0]];
        assert_eq!(pareto_front(&v), vec![1]);
        assert_eq!(non_dominated(&v), vec![1]);
    }

    #[test]
    fn empty_and_all_nan() {
        assert!(pareto_front(&[]).is_empty());
        assert!(pareto_front(&[[f64::NAN, f64::NAN]]).is_empty());
        assert_eq!(pareto_front(&[[f64::INFINITY, f64::INFINITY]]), vec![0]);
    }
}
