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
    // Rows and columns as slices: the loop reads eight contiguous vectors (two through p), so
    // the bounds checks fold away and the CPU baseline is not handicapped by strided access.
    let (a_r, a_s, a_cr, a_cs) = (inst.a_row(r), inst.a_row(s), inst.a_col(r), inst.a_col(s));
    let (b_ps, b_pr, b_cps, b_cpr) = (
        inst.b_row(ps),
        inst.b_row(pr),
        inst.b_col(ps),
        inst.b_col(pr),
    );
    for (k, &pk) in p.iter().enumerate() {
        if k == r || k == s {
            continue;
        }
        d += (a_cr[k] - a_cs[k]) * (b_cps[pk] - b_cpr[pk])
            + (a_r[k] - a_s[k]) * (b_ps[pk] - b_pr[pk]);
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
///
/// The O(1) update of [`swap_delta_update`] factors into per-facility terms,
/// `(x_u - x_v)(bs_u - bs_v) + (y_u - y_v)(bt_u - bt_v)`, so they are computed once per
/// facility and the pair loop reads four contiguous vectors: this loop is the whole cost of a
/// robust tabu search iteration.
pub fn apply_swap(inst: &Instance, p: &mut [usize], delta: &mut [i64], r: usize, s: usize) {
    let n = inst.n();
    p.swap(r, s);
    let (pr, ps) = (p[r], p[s]);
    let x: Vec<i64> = (0..n).map(|u| inst.a(r, u) - inst.a(s, u)).collect();
    let y: Vec<i64> = (0..n).map(|u| inst.a(u, r) - inst.a(u, s)).collect();
    let bs: Vec<i64> = p
        .iter()
        .map(|&pu| inst.b(ps, pu) - inst.b(pr, pu))
        .collect();
    let bt: Vec<i64> = p
        .iter()
        .map(|&pu| inst.b(pu, ps) - inst.b(pu, pr))
        .collect();
    for u in 0..n {
        let row = &mut delta[u * n..(u + 1) * n];
        if u == r || u == s {
            for (v, d) in row.iter_mut().enumerate().skip(u + 1) {
                *d = swap_delta(inst, p, u, v);
            }
            continue;
        }
        let (xu, yu, bsu, btu) = (x[u], y[u], bs[u], bt[u]);
        for v in u + 1..n {
            row[v] = if v == r || v == s {
                swap_delta(inst, p, u, v)
            } else {
                row[v] + (xu - x[v]) * (bsu - bs[v]) + (yu - y[v]) * (btu - bt[v])
            };
        }
    }
}
