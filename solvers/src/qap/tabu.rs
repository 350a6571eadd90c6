//! Taillard's robust tabu search (Ro-TS, 1991).
//!
//! The CPU reference of the GPU `tabu` and `rots-block` variants. The state is the permutation
//! and the delta matrix of all swaps, kept current in O(n^2) per iteration with the O(1) update
//! of [`super::delta`]. A move (r, s) is tabu when both facilities would return to locations
//! they left within their tenure; the tenure of each left location is drawn uniformly from
//! [0.9 n, 1.1 n] (the "robust" randomisation). A tabu move is allowed when it improves on the
//! best cost (aspiration), and a move that puts a facility on a location it has not held for
//! `aspiration` iterations is forced (Taillard's long-term diversification, default 2 n^2).

use rand::Rng;

use super::delta::SwapDeltas;
use super::two_opt::start_permutation;
use super::Instance;
use crate::run::{multistart_timed, Deadline, Outcome, RunOptions, SolverRng};

/// Parameters of robust tabu search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotsParams {
    /// Independent runs from different random starts (run in parallel).
    pub starts: usize,
    /// Tenure range as factors of n (Taillard: 0.9 and 1.1).
    pub tenure_min: f64,
    pub tenure_max: f64,
    /// Long-term aspiration as a factor of n^2 (Taillard: 2).
    pub aspiration: f64,
}

impl Default for RotsParams {
    fn default() -> Self {
        RotsParams {
            starts: 1,
            tenure_min: 0.9,
            tenure_max: 1.1,
            aspiration: 2.0,
        }
    }
}

/// Iterations per start when the budget names none: enough for Ro-TS to settle on QAPLIB
/// instances up to n = 50 in well under a second per start.
pub fn default_iterations(n: usize) -> u64 {
    1000 * n as u64
}

/// Robust tabu search; the iteration budget applies to each start, the time limit to all.
pub fn robust_tabu(inst: &Instance, params: &RotsParams, options: &RunOptions) -> Outcome {
    let deadline = options.budget.start(default_iterations(inst.n()));
    multistart_timed(params.starts.max(1), options.threads, &deadline, |start| {
        let p = start_permutation(inst.n(), options.seed, start);
        let mut rng = crate::run::stream_rng(options.seed ^ 0x7ab0_5eed, start as u64);
        search(inst, p, params, &deadline, &mut rng)
    })
    .expect("at least one start runs")
}

/// One Ro-TS trajectory from permutation `p`.
pub fn search(
    inst: &Instance,
    mut p: Vec<usize>,
    params: &RotsParams,
    deadline: &Deadline,
    rng: &mut SolverRng,
) -> Outcome {
    let n = inst.n();
    let mut cost = inst.cost(&p);
    let mut best = (cost, p.clone());
    deadline.offer(cost);
    if n < 2 {
        return Outcome {
            solution: p,
            objective: cost,
            iterations: 0,
            evaluations: 0,
        };
    }
    let tenure_min = ((params.tenure_min * n as f64) as i64).max(1);
    let tenure_max = ((params.tenure_max * n as f64).ceil() as i64).max(tenure_min);
    let aspiration = (params.aspiration * (n * n) as f64) as i64;
    let mut delta = SwapDeltas::new(inst, &p);
    // tabu[i * n + loc]: the first iteration at which facility i may return to location loc.
    // Taillard starts from distinct negative values so that the long-term aspiration does not
    // force all moves at once.
    let mut tabu: Vec<i64> = (0..n * n).map(|k| -(k as i64)).collect();
    let mut iteration: i64 = 0;
    let mut evaluations = 0u64;
    while !deadline.reached(iteration as u64) {
        iteration += 1;
        let mut chosen: Option<(usize, usize)> = None;
        let mut chosen_delta = i64::MAX;
        let mut chosen_aspired = false;
        // The best move of all, kept in case every move is tabu (possible for tiny n).
        let mut fallback = (i64::MAX, 0, 1);
        for r in 0..n {
            let (row, tabu_row, pr) = (delta.row(r), &tabu[r * n..(r + 1) * n], p[r]);
            for s in r + 1..n {
                let d = row[s];
                let (tabu_r, tabu_s) = (tabu_row[p[s]], tabu[s * n + pr]);
                let allowed = tabu_r < iteration || tabu_s < iteration;
                let aspired = tabu_r < iteration - aspiration
                    || tabu_s < iteration - aspiration
                    || cost + d < best.0;
                if d < fallback.0 {
                    fallback = (d, r, s);
                }
                // Taillard's rule: an aspired move beats any non-aspired one; among moves of
                // the same kind the smaller delta wins, and non-aspired ones must be allowed.
                let better = if aspired {
                    !chosen_aspired || d < chosen_delta
                } else {
                    !chosen_aspired && allowed && d < chosen_delta
                };
                if better {
                    chosen = Some((r, s));
                    chosen_delta = d;
                    chosen_aspired |= aspired;
                }
            }
        }
        evaluations += (n * (n - 1) / 2) as u64;
        let (r, s) = chosen.unwrap_or((fallback.1, fallback.2));
        let d = delta.get(r, s);
        // The facilities leave their current locations; returning there becomes tabu.
        let (left_r, left_s) = (p[r], p[s]);
        delta.apply(inst, &mut p, r, s);
        cost += d;
        tabu[r * n + left_r] = iteration + rng.random_range(tenure_min..=tenure_max);
        tabu[s * n + left_s] = iteration + rng.random_range(tenure_min..=tenure_max);
        if cost < best.0 {
            best = (cost, p.clone());
            deadline.offer(cost);
        }
    }
    Outcome {
        solution: best.1,
        objective: best.0,
        iterations: iteration as u64,
        evaluations,
    }
}
