//! Swap deltas for the QAP (Burkard and Rendl; Taillard's general form).
//!
//! Swapping the locations of facilities r and s changes the cost by an amount that needs only
//! O(n) work. The formulas here make no assumption of symmetry or zero diagonals, so they are
//! correct for every QAPLIB instance (bur26* and tai64c/tai256c break the symmetric shortcut).
//! After a swap (r, s), the delta of a pair (u, v) disjoint from {r, s} is updated in O(1)
//! from its previous value (Taillard 1991), which is what makes robust tabu search O(n^2) per
//! iteration.

use super::Instance;

/// Cost change of swapping `p[r]` and `p[s]`: `cost(p with r,s swapped) - cost(p)`. O(n).
#[inline]
pub fn swap_delta(inst: &Instance, p: &[usize], r: usize, s: usize) -> i64 {
    let (pr, ps) = (p[r], p[s]);
    let mut d = (inst.a(r, r) - inst.a(s, s)) * (inst.b(ps, ps) - inst.b(pr, pr))
        + (inst.a(r, s) - inst.a(s, r)) * (inst.b(ps, pr) - inst.b(pr, ps));
    for (k, &pk) in p.iter().enumerate() {
        if k == r || k == s {
            continue;
        }
        d += (inst.a(k, r) - inst.a(k, s)) * (inst.b(pk, ps) - inst.b(pk, pr))
            + (inst.a(r, k) - inst.a(s, k)) * (inst.b(ps, pk) - inst.b(pr, pk));
    }
    d
}

/// The O(1) update of the delta of pair (u, v) after the swap (r, s) was applied to `p`.
///
/// `old` is the delta of (u, v) before the swap; `p` is the permutation after it. Valid only
/// when {u, v} and {r, s} are disjoint; other pairs need [`swap_delta`].
#[inline]
pub fn swap_delta_update(
    inst: &Instance,
    p: &[usize],
    old: i64,
    (r, s): (usize, usize),
    (u, v): (usize, usize),
) -> i64 {
    let (pr, ps, pu, pv) = (p[r], p[s], p[u], p[v]);
    old + (inst.a(r, u) - inst.a(r, v) + inst.a(s, v) - inst.a(s, u))
        * (inst.b(ps, pu) - inst.b(ps, pv) + inst.b(pr, pv) - inst.b(pr, pu))
        + (inst.a(u, r) - inst.a(v, r) + inst.a(v, s) - inst.a(u, s))
            * (inst.b(pu, ps) - inst.b(pv, ps) + inst.b(pv, pr) - inst.b(pu, pr))
}

/// The full delta matrix of a permutation, upper triangle (u < v) filled, row-major n x n.
pub fn delta_matrix(inst: &Instance, p: &[usize]) -> Vec<i64> {
    let n = inst.n();
    let mut delta = vec![0; n * n];
    for u in 0..n {
        for v in u + 1..n {
            delta[u * n + v] = swap_delta(inst, p, u, v);
        }
    }
    delta
}

/// Applies the swap (r, s) to `p` and brings the delta matrix up to date: O(1) for the pairs
/// disjoint from {r, s}, O(n) for the 2n - 3 pairs that touch them. O(n^2) in all.
pub fn apply_swap(inst: &Instance, p: &mut [usize], delta: &mut [i64], r: usize, s: usize) {
    let n = inst.n();
    p.swap(r, s);
    for u in 0..n {
        for v in u + 1..n {
            let index = u * n + v;
            delta[index] = if u != r && u != s && v != r && v != s {
                swap_delta_update(inst, p, delta[index], (r, s), (u, v))
            } else {
                swap_delta(inst, p, u, v)
            };
        }
    }
}
