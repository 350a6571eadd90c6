//! STS: the sequential tabu search of Hou et al. (Algorithm 2, the CPU reference of GPTS).
//!
//! - **Start:** all nodes in hardware (x = 0), which is feasible for every R >= 0 (S = C = 0).
//! - **Neighbourhood:** the n(n-1)/2 2-flips (i, j), i < j, indexed in that order; each is
//!   evaluated incrementally (see [`super::delta`]) and checked against S + C <= R.
//! - **Selection:** the feasible candidate of least hardware cost that is not tabu, or that
//!   is tabu but beats the best hardware cost found so far (aspiration); ties go to the
//!   lower index. When every feasible candidate is tabu and none aspirates, a uniformly
//!   random feasible candidate (section 3.6).
//! - **Restart** (section 3.4): when no candidate is feasible, the current solution is reset
//!   to all-hardware with two distinct random nodes flipped, and the neighbourhood is
//!   evaluated again (flipping those two back is always feasible, so one restart suffices);
//!   a restart does not count as an iteration.
//! - **Tabu list** (section 3.6) of 2-flip indices, at most `tabu_length` long: if the chosen
//!   index is already listed it moves to the tail; otherwise, when the list is full, the
//!   head leaves, and the index is appended.
//! - **Stop:** after the budget's iterations (default 2000, the paper's M) or `stall`
//!   consecutive iterations without improving the best hardware cost (the paper's N = 200).
//! - **Under a time limit alone** (no iteration budget) the stall does not end the run, which
//!   would leave most of the user's time unused: the search continues from its best
//!   solution with an empty tabu list after [`KICK_MOVES`] uniformly random feasible 2-flips
//!   (iterated STS), until the time is up. Runs with an iteration budget, the GPU variants'
//!   reference, are the paper's algorithm unchanged.
//! - **Walks** (`starts`, default 1): independent searches in parallel, the best kept. Walk 0
//!   is the single search; walk w > 0 draws from stream w of the seed and begins with
//!   [`KICK_MOVES`] random feasible 2-flips (otherwise it would retrace walk 0's deterministic
//!   steps until its first random choice). Walks evaluate their neighbourhoods on one thread
//!   each, so they pay where the neighbourhood is too small to split
//!   ([`splits_the_neighbourhood`] is false).
//!
//! **Parity.** Every 2-flip changes two entries, so the number of software nodes keeps its
//! parity; starting and restarting from all-hardware, STS only ever visits solutions with an
//! even number of software nodes, and misses an optimum with an odd count (the test
//! `odd_solutions_are_out_of_reach` shows one). That is the paper's algorithm as written, and
//! a run with an iteration budget and one walk keeps it, because the GPU variants must match
//! it move for move. Where mats departs from the paper anyway (walks after walk 0, iterated
//! restarts under a time limit) it also switches parity: odd walks and every other iterated
//! restart begin with one uniformly drawn feasible single flip (any node's where none is
//! feasible, the 2-flips then lead back to feasible partitions), so `mats solve g.hwsw
//! --time-limit T` reaches optima of either parity (on 21 generated graphs of 10-14 nodes, 7
//! had an odd optimum that the paper's moves never reach).
//!
//! The paper gives no tabu list length; the default 20 is ours (on 200 random graphs with
//! 8 to 12 nodes it found the best solution of even parity in every case, see the tests).
//!
//! Deterministic for a seed: rows of the neighbourhood are evaluated in parallel for large
//! n, and the reduction runs in index order, so the thread count never changes the answer.

use std::collections::VecDeque;

use rand::Rng;
use rayon::prelude::*;

use super::delta::{flip2_from_parts, single_flip_comms};
use super::instance::{Costs, Instance};
use crate::run::{
    multistart_timed, stream_rng, with_threads, Deadline, Outcome, RunOptions, SolverRng,
};

/// The paper's maximum iteration number M.
pub const DEFAULT_STS_ITERATIONS: u64 = 2000;

/// The random feasible 2-flips that move a stalled time-limited search away from its best
/// before it continues (with an empty tabu list it would otherwise retrace its steps).
pub const KICK_MOVES: usize = 10;

/// Below this many candidates the neighbourhood is evaluated on one thread.
const PARALLEL_MIN_CANDIDATES: usize = 50_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StsParams {
    /// Tabu list length (2-flip indices); 0 disables the list.
    pub tabu_length: usize,
    /// Stop after this many iterations without improvement (the paper's N).
    pub stall: u64,
    /// Independent walks (>= 1), run in parallel; the best is kept.
    pub starts: usize,
}

impl Default for StsParams {
    fn default() -> Self {
        StsParams {
            tabu_length: 20,
            stall: 200,
            starts: 1,
        }
    }
}

/// What one row i of the neighbourhood contributes.
#[derive(Debug, Clone, Copy)]
struct RowSummary {
    /// Best admissible (non-tabu or aspirated) feasible candidate: (H, j).
    admissible: Option<(i64, usize)>,
    feasible: u64,
}

struct Search<'a> {
    inst: &'a Instance,
    x: Vec<u8>,
    costs: Costs,
    /// Communication change of flipping each node alone.
    dc: Vec<i64>,
}

impl<'a> Search<'a> {
    fn new(inst: &'a Instance, x: Vec<u8>) -> Self {
        let costs = inst.costs(&x);
        let dc = single_flip_comms(inst, &x);
        Search { inst, x, costs, dc }
    }

    fn flip(&mut self, i: usize) {
        self.x[i] ^= 1;
    }

    fn refresh(&mut self) {
        self.costs = self.inst.costs(&self.x);
        self.dc = single_flip_comms(self.inst, &self.x);
    }

    /// The costs of candidate (i, j); `edge_ij` is c_ij or 0 when there is no edge.
    #[inline]
    fn candidate(&self, i: usize, j: usize, edge_ij: i64) -> Costs {
        let x = &self.x;
        let inner = if x[i] == x[j] { edge_ij } else { -edge_ij };
        let comm = self.dc[i] + self.dc[j] - 2 * inner;
        flip2_from_parts(self.inst, x, self.costs, i, j, comm)
    }

    fn row(&self, i: usize, tabu_js: &[usize], best_h: i64, scratch: &mut [i64]) -> RowSummary {
        let r = self.inst.r();
        for &(k, c) in self.inst.neighbours(i) {
            scratch[k] = c;
        }
        let mut summary = RowSummary {
            admissible: None,
            feasible: 0,
        };
        for (j, &edge) in scratch.iter().enumerate().skip(i + 1) {
            let c = self.candidate(i, j, edge);
            if c.software + c.communication > r {
                continue;
            }
            summary.feasible += 1;
            let h = c.hardware;
            if summary.admissible.is_some_and(|(b, _)| h >= b) {
                continue;
            }
            if h < best_h || !tabu_js.contains(&j) {
                summary.admissible = Some((h, j));
            }
        }
        for &(k, _) in self.inst.neighbours(i) {
            scratch[k] = 0;
        }
        summary
    }

    /// Moves one uniformly drawn node whose flip alone is feasible (the parity switch, see
    /// the module documentation); where none is, one uniformly drawn node, leaving the
    /// partition infeasible: the 2-flips from there reach the other parity's feasible
    /// partitions (all software in a graph where no single node fits in software alone,
    /// which the search never reached). Returns whether the partition is feasible.
    fn flip_one(&mut self, rng: &mut SolverRng) -> bool {
        let s = self.inst.software();
        let r = self.inst.r();
        let c = self.costs;
        let feasible: Vec<usize> = (0..self.inst.n())
            .filter(|&i| {
                let ds = if self.x[i] == 0 { s[i] } else { -s[i] };
                c.software + ds + c.communication + self.dc[i] <= r
            })
            .collect();
        let i = if feasible.is_empty() {
            rng.random_range(0..self.inst.n())
        } else {
            feasible[rng.random_range(0..feasible.len())]
        };
        self.flip(i);
        self.refresh();
        !feasible.is_empty()
    }

    /// The index-th feasible candidate in index order.
    fn nth_feasible(&self, mut index: u64) -> (usize, usize) {
        let n = self.inst.n();
        let mut scratch = vec![0i64; n];
        for i in 0..n {
            for &(k, c) in self.inst.neighbours(i) {
                scratch[k] = c;
            }
            for (j, &edge) in scratch.iter().enumerate().skip(i + 1) {
                let c = self.candidate(i, j, edge);
                if c.software + c.communication <= self.inst.r() {
                    if index == 0 {
                        return (i, j);
                    }
                    index -= 1;
                }
            }
            for &(k, _) in self.inst.neighbours(i) {
                scratch[k] = 0;
            }
        }
        unreachable!("fewer feasible candidates than counted")
    }
}

/// STS on one instance; see the module documentation.
pub fn sts(inst: &Instance, params: &StsParams, options: &RunOptions) -> Outcome {
    sts_traced(inst, params, options, None)
}

/// STS that also records every move (i, j) it takes, in order, when `trace` is given: the
/// GPU variants are checked against it move by move.
pub fn sts_traced(
    inst: &Instance,
    params: &StsParams,
    options: &RunOptions,
    trace: Option<&mut Vec<(usize, usize)>>,
) -> Outcome {
    // One clock for every walk: a walk that begins late must not get a time limit of its own.
    let deadline = options.budget.start(DEFAULT_STS_ITERATIONS);
    if params.starts > 1 && trace.is_none() {
        return multistart_timed(
            params.starts,
            options.threads,
            &deadline,
            true,
            |walk, deadline| run(inst, params, options, deadline, false, None, walk),
        )
        .expect("walk 0 always runs");
    }
    if splits_the_neighbourhood(inst.n()) {
        with_threads(options.threads, || {
            run(inst, params, options, &deadline, true, trace, 0)
        })
    } else {
        run(inst, params, options, &deadline, false, trace, 0)
    }
}

/// Whether one search of `n` nodes evaluates its neighbourhood on all worker threads (large
/// graphs); below that, a search uses one thread and walks are what uses the others.
pub fn splits_the_neighbourhood(n: usize) -> bool {
    n * n.saturating_sub(1) / 2 >= PARALLEL_MIN_CANDIDATES
}

fn run(
    inst: &Instance,
    params: &StsParams,
    options: &RunOptions,
    deadline: &Deadline,
    parallel: bool,
    mut trace: Option<&mut Vec<(usize, usize)>>,
    walk: usize,
) -> Outcome {
    let n = inst.n();
    let mut rng: SolverRng = stream_rng(options.seed, walk as u64);
    let mut search = Search::new(inst, vec![0u8; n]);
    let mut best = (search.costs.hardware, search.x.clone());
    if search.costs.software + search.costs.communication <= inst.r() {
        deadline.offer(best.0);
    }
    if n < 2 {
        // No 2-flip exists; the only other solution is the single node in software.
        let x = vec![1u8];
        let c = inst.costs(&x);
        if c.software + c.communication <= inst.r() && c.hardware < best.0 {
            best = (c.hardware, x);
        }
        return finish(best, 0, 0);
    }
    let candidates = (n * (n - 1) / 2) as u64;
    // Grows with use: a huge tenure must not reserve its whole length up front.
    let mut tabu: VecDeque<(usize, usize)> = VecDeque::new();
    let mut iterations = 0u64;
    let mut evaluations = 0u64;
    let mut stall = 0u64;
    let iterated = options.budget.time_limit_alone();
    // Random moves still to take: after an iterated restart, and first in walks after walk 0.
    let mut kicks = if walk > 0 { KICK_MOVES } else { 0 };
    // Odd walks and every other iterated restart begin with the other parity.
    // A single flip keeps the partition feasible, so the partition it reaches may be a best.
    let switch_parity = |search: &mut Search, best: &mut (i64, Vec<u8>), rng: &mut SolverRng| {
        if search.flip_one(rng) && search.costs.hardware < best.0 {
            *best = (search.costs.hardware, search.x.clone());
            deadline.offer(best.0);
        }
    };
    if walk % 2 == 1 {
        switch_parity(&mut search, &mut best, &mut rng);
    }
    let mut restarts = 0u64;
    'search: while !deadline.reached(iterations) {
        if stall >= params.stall {
            if !iterated {
                break;
            }
            search = Search::new(inst, best.1.clone());
            restarts += 1;
            if restarts % 2 == 1 {
                switch_parity(&mut search, &mut best, &mut rng);
            }
            tabu.clear();
            kicks = KICK_MOVES;
            stall = 0;
        }
        // Tabu js of each row, from the (short) list.
        let mut tabu_rows: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(i, j) in &tabu {
            tabu_rows[i].push(j);
        }
        let (chosen, feasible) = loop {
            let best_h = best.0;
            // One iteration scans n^2/2 pairs (5e9 at 100,000 nodes: 18 s), so the clock is
            // read per row and a scan the time limit cuts short ends the walk.
            let row = |i: usize, scratch: &mut Vec<i64>| {
                (!deadline.timed_out()).then(|| search.row(i, &tabu_rows[i], best_h, scratch))
            };
            let rows: Option<Vec<RowSummary>> = if parallel {
                (0..n - 1)
                    .into_par_iter()
                    .map_init(|| vec![0i64; n], |scratch, i| row(i, scratch))
                    .collect()
            } else {
                let mut scratch = vec![0i64; n];
                (0..n - 1).map(|i| row(i, &mut scratch)).collect()
            };
            let Some(rows) = rows else {
                break 'search;
            };
            evaluations += candidates;
            let feasible: u64 = rows.iter().map(|r| r.feasible).sum();
            if feasible == 0 {
                // Restart: all hardware, two distinct random nodes flipped.
                search.x.iter_mut().for_each(|v| *v = 0);
                let (a, b) = restart_pair(&mut rng, n);
                search.flip(a);
                search.flip(b);
                search.refresh();
                continue;
            }
            let mut chosen: Option<(i64, usize, usize)> = None;
            for (i, r) in rows.iter().enumerate() {
                if let Some((h, j)) = r.admissible {
                    if chosen.is_none_or(|(b, _, _)| h < b) {
                        chosen = Some((h, i, j));
                    }
                }
            }
            break (chosen, feasible);
        };
        let (i, j) = match chosen {
            Some((_, i, j)) if kicks == 0 => (i, j),
            _ => search.nth_feasible(rng.random_range(0..feasible)),
        };
        kicks = kicks.saturating_sub(1);
        // Tabu list update of section 3.6.
        if params.tabu_length > 0 {
            if let Some(position) = tabu.iter().position(|&e| e == (i, j)) {
                tabu.remove(position);
            } else if tabu.len() == params.tabu_length {
                tabu.pop_front();
            }
            tabu.push_back((i, j));
        }
        if let Some(t) = trace.as_deref_mut() {
            t.push((i, j));
        }
        search.flip(i);
        search.flip(j);
        search.refresh();
        iterations += 1;
        debug_assert!(search.costs.software + search.costs.communication <= inst.r());
        if search.costs.hardware < best.0 {
            best = (search.costs.hardware, search.x.clone());
            deadline.offer(best.0);
            stall = 0;
        } else {
            stall += 1;
        }
    }
    finish(best, iterations, evaluations)
}

fn finish(best: (i64, Vec<u8>), iterations: u64, evaluations: u64) -> Outcome {
    Outcome {
        solution: best.1.iter().map(|&v| v as usize).collect(),
        objective: best.0,
        iterations,
        evaluations,
    }
}

/// The two distinct random nodes a restart flips to software (the GPU's GPTS draws them the
/// same way, so its moves stay the CPU's).
pub(crate) fn restart_pair(rng: &mut SolverRng, n: usize) -> (usize, usize) {
    let a = rng.random_range(0..n);
    let mut b = rng.random_range(0..n - 1);
    if b >= a {
        b += 1;
    }
    (a, b)
}
