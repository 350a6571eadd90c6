//! Multistart 2-opt: best-improvement pairwise-swap local search.
//!
//! The CPU reference of the GPU `2opt` variants: each start draws a random permutation, then
//! every iteration evaluates all n(n-1)/2 swaps and applies the best improving one (the first
//! in (r, s) order on ties), until no swap improves (a 2-opt local optimum) or the iteration
//! budget ends. Starts are independent and run in parallel.
//!
//! The GPU kernels (the paper's algorithm) compute every swap's delta from scratch, O(n) each,
//! so an iteration costs O(n^3). The CPU keeps the delta matrix instead ([`SwapDeltas`]: O(1)
//! updates for the pairs a swap does not touch, O(n) for the 2n - 3 it does), O(n^2) per
//! iteration: the same deltas, so the same moves, and the fastest CPU code for the GPU to be
//! measured against.

use super::{delta::SwapDeltas, Instance};
use crate::permutation;
use crate::run::{multistart_timed, stream_rng, Deadline, Outcome, RunOptions};

/// Parameters of multistart 2-opt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TwoOptParams {
    /// Independent random starts (>= 1).
    pub starts: usize,
}

impl Default for TwoOptParams {
    fn default() -> Self {
        TwoOptParams { starts: 64 }
    }
}

/// Result of one local search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalSearch {
    pub cost: i64,
    pub iterations: u64,
    pub evaluations: u64,
    /// True when the search stopped because no swap improves.
    pub local_optimum: bool,
}

/// Improves `p` in place by best-improvement swaps until a local optimum or the deadline.
///
/// Public so the GPU variants can be checked against it from the same start permutation.
pub fn local_search(inst: &Instance, p: &mut [usize], deadline: &Deadline) -> LocalSearch {
    let n = inst.n();
    let mut cost = inst.cost(p);
    deadline.offer(cost);
    let mut iterations = 0u64;
    let mut evaluations = 0u64;
    // Built only once the budget allows an iteration: its O(n^3) set-up is a whole scan.
    let mut deltas: Option<SwapDeltas> = None;
    while !deadline.reached(iterations) {
        // Given up between rows once the deadline passes (n = 2,500 took 14 s past a 1 s
        // limit here): the start permutation is then the answer, as tabu search's is.
        if deltas.is_none() {
            deltas = SwapDeltas::new_until(inst, p, || deadline.timed_out());
        }
        let Some(deltas) = deltas.as_mut() else {
            break;
        };
        let mut best = (0i64, 0usize, 0usize);
        for r in 0..n {
            for (s, &d) in deltas.row(r).iter().enumerate().skip(r + 1) {
                if d < best.0 {
                    best = (d, r, s);
                }
            }
        }
        evaluations += (n * (n - 1) / 2) as u64;
        iterations += 1;
        let (d, r, s) = best;
        if d >= 0 {
            return LocalSearch {
                cost,
                iterations,
                evaluations,
                local_optimum: true,
            };
        }
        deltas.apply(inst, p, r, s);
        cost += d;
        deadline.offer(cost);
    }
    LocalSearch {
        cost,
        iterations,
        evaluations,
        local_optimum: false,
    }
}

/// The start permutation of start number `start` for a given seed.
pub fn start_permutation(n: usize, seed: u64, start: usize) -> Vec<usize> {
    permutation::random(n, &mut stream_rng(seed, start as u64))
}

/// Multistart 2-opt; the iteration budget applies to each start, the time limit to all.
pub fn two_opt(inst: &Instance, params: &TwoOptParams, options: &RunOptions) -> Outcome {
    // Without an explicit budget, each start runs to its local optimum.
    let deadline = options.budget.start(u64::MAX);
    let starts = params.starts.max(1);
    let best = multistart_timed(
        starts,
        options.threads,
        &deadline,
        false,
        |start, deadline| {
            let mut p = start_permutation(inst.n(), options.seed, start);
            // A start that begins after the time is up still reports its start permutation, so
            // the solve always returns a valid solution.
            let search = local_search(inst, &mut p, deadline);
            Outcome {
                solution: p,
                objective: search.cost,
                iterations: search.iterations,
                evaluations: search.evaluations,
            }
        },
    );
    best.expect("at least one start runs")
}
