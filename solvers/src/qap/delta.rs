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

/// The delta matrix of a permutation together with B in solution order, for robust tabu
/// search on the CPU.
///
/// [`apply_swap`] recomputes the 2n - 3 pairs that touch a swap with [`swap_delta`], which reads
/// B through p (four gathers per term); at n = 100 that was two thirds of an iteration. Here
/// `bp[i][j] = b[p(i)][p(j)]` (and its transpose) is kept current by swapping two rows and two
/// columns per move, so every O(n) sum reads contiguous rows and vectorises. The deltas are the
/// same integers as [`delta_matrix`]'s, so a search takes the same moves either way.
#[derive(Debug, Clone)]
pub struct SwapDeltas {
    n: usize,
    /// Both matrices symmetric (most QAPLIB instances): the two halves of every term agree,
    /// so each sum takes one product per entry instead of two.
    symmetric: bool,
    /// Upper triangle (u < v) of the n x n delta matrix, row-major, as [`delta_matrix`].
    delta: Vec<i64>,
    bp: Vec<i64>,
    bp_t: Vec<i64>,
    /// Scratch for the per-facility terms of one move's O(1) update (x, y, bs, bt), kept so
    /// the iteration allocates nothing.
    terms: [Vec<i64>; 4],
}

impl SwapDeltas {
    pub fn new(inst: &Instance, p: &[usize]) -> SwapDeltas {
        Self::new_until(inst, p, || false).expect("never stopped")
    }

    /// As [`new`](Self::new), given up (None) where `stop` says so between rows: the first
    /// matrix costs n^3/2 operations, seconds at n = 2048, longer than a short time limit
    /// (`--time-limit 0.5` on a generated n = 2048 instance returned after 11.6 s).
    pub fn new_until(inst: &Instance, p: &[usize], stop: impl Fn() -> bool) -> Option<SwapDeltas> {
        if stop() {
            return None;
        }
        let n = inst.n();
        let mut bp = vec![0; n * n];
        let mut bp_t = vec![0; n * n];
        for (i, &pi) in p.iter().enumerate() {
            for (j, &pj) in p.iter().enumerate() {
                bp[i * n + j] = inst.b(pi, pj);
                bp_t[j * n + i] = inst.b(pi, pj);
            }
        }
        let mut state = SwapDeltas {
            n,
            symmetric: inst.is_symmetric(),
            delta: vec![0; n * n],
            bp,
            bp_t,
            terms: std::array::from_fn(|_| vec![0; n]),
        };
        for u in 0..n {
            if stop() {
                return None;
            }
            for v in u + 1..n {
                state.delta[u * n + v] = state.fresh(inst, u, v);
            }
        }
        Some(state)
    }

    /// The delta of swapping facilities r < s, as [`swap_delta`] would compute it.
    #[inline]
    pub fn get(&self, r: usize, s: usize) -> i64 {
        self.delta[r * self.n + s]
    }

    /// Row r of the delta matrix (entries s > r hold the deltas of (r, s)).
    #[inline]
    pub fn row(&self, r: usize) -> &[i64] {
        &self.delta[r * self.n..(r + 1) * self.n]
    }

    /// The whole matrix, laid out as [`delta_matrix`]'s.
    pub fn matrix(&self) -> &[i64] {
        &self.delta
    }

    /// [`swap_delta`] from the solution-ordered B: sums every k and takes back the terms of
    /// k = r and k = s, so the loop has no branch.
    fn fresh(&self, inst: &Instance, r: usize, s: usize) -> i64 {
        let n = self.n;
        let (a_r, a_s, a_cr, a_cs) = (inst.a_row(r), inst.a_row(s), inst.a_col(r), inst.a_col(s));
        let (bp_r, bp_s) = (row_of(&self.bp, n, r), row_of(&self.bp, n, s));
        let (bp_cr, bp_cs) = (row_of(&self.bp_t, n, r), row_of(&self.bp_t, n, s));
        let term = |k: usize| {
            (a_cr[k] - a_cs[k]) * (bp_cs[k] - bp_cr[k]) + (a_r[k] - a_s[k]) * (bp_s[k] - bp_r[k])
        };
        let mut sum = 0i64;
        if self.symmetric {
            for k in 0..n {
                sum += (a_r[k] - a_s[k]) * (bp_s[k] - bp_r[k]);
            }
            sum *= 2;
        } else {
            for k in 0..n {
                sum += (a_cr[k] - a_cs[k]) * (bp_cs[k] - bp_cr[k])
                    + (a_r[k] - a_s[k]) * (bp_s[k] - bp_r[k]);
            }
        }
        let (brr, bss, brs, bsr) = (bp_r[r], bp_s[s], bp_r[s], bp_s[r]);
        sum - term(r) - term(s) + (a_r[r] - a_s[s]) * (bss - brr) + (a_r[s] - a_s[r]) * (bsr - brs)
    }

    /// Applies the swap (r, s) to `p` and brings the deltas up to date: O(1) per pair disjoint
    /// from {r, s} (Taillard's update through per-facility terms), O(n) for the pairs that
    /// touch the swap. The same result as [`apply_swap`].
    pub fn apply(&mut self, inst: &Instance, p: &mut [usize], r: usize, s: usize) {
        let n = self.n;
        p.swap(r, s);
        for m in [&mut self.bp, &mut self.bp_t] {
            swap_columns(m, n, r, s);
            swap_rows(m, n, r, s);
        }
        // The per-facility terms of Taillard's O(1) update, all from contiguous rows (y and bt
        // equal x and bs where both matrices are symmetric).
        let [x, y, bs, bt] = &mut self.terms;
        let sub = |out: &mut Vec<i64>, a: &[i64], b: &[i64]| {
            for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
                *o = a - b;
            }
        };
        sub(x, inst.a_row(r), inst.a_row(s));
        sub(bs, row_of(&self.bp, n, s), row_of(&self.bp, n, r));
        if !self.symmetric {
            sub(y, inst.a_col(r), inst.a_col(s));
            sub(bt, row_of(&self.bp_t, n, s), row_of(&self.bp_t, n, r));
        }
        for u in 0..n {
            if u == r || u == s {
                continue;
            }
            let row = &mut self.delta[u * n + u + 1..(u + 1) * n];
            let tail = u + 1..n;
            if self.symmetric {
                let (xu, bsu) = (x[u], bs[u]);
                for ((d, &xv), &bsv) in row.iter_mut().zip(&x[tail.clone()]).zip(&bs[tail]) {
                    *d += 2 * (xu - xv) * (bsu - bsv);
                }
                continue;
            }
            let (xu, yu, bsu, btu) = (x[u], y[u], bs[u], bt[u]);
            for (((d, (&xv, &yv)), &bsv), &btv) in row
                .iter_mut()
                .zip(x[tail.clone()].iter().zip(&y[tail.clone()]))
                .zip(&bs[tail.clone()])
                .zip(&bt[tail])
            {
                *d += (xu - xv) * (bsu - bsv) + (yu - yv) * (btu - btv);
            }
        }
        // The pairs that touch the swap: the O(1) rule above does not hold for them. The pair
        // (r, s) itself is one of them, taken once.
        for v in 0..n {
            for anchor in [r, s] {
                if v != r && v != s || anchor == r && v == s {
                    let (lo, hi) = (anchor.min(v), anchor.max(v));
                    self.delta[lo * n + hi] = self.fresh(inst, lo, hi);
                }
            }
        }
    }
}

#[inline]
fn row_of(m: &[i64], n: usize, i: usize) -> &[i64] {
    &m[i * n..(i + 1) * n]
}

/// Swaps rows r and s of a row-major n x n matrix.
pub(crate) fn swap_rows(m: &mut [i64], n: usize, r: usize, s: usize) {
    let (lo, hi) = (r.min(s), r.max(s));
    if lo == hi {
        return;
    }
    let (head, tail) = m.split_at_mut(hi * n);
    head[lo * n..(lo + 1) * n].swap_with_slice(&mut tail[..n]);
}

/// Swaps columns r and s of a row-major n x n matrix.
pub(crate) fn swap_columns(m: &mut [i64], n: usize, r: usize, s: usize) {
    for i in 0..n {
        m.swap(i * n + r, i * n + s);
    }
}
