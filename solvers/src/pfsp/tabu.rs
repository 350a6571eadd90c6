//! Tabu search over the swap neighbourhood, after Wu, Wei, Lai & Li (PFSP tabu search on
//! CUDA GPUs).
//!
//! Every iteration evaluates all n(n-1)/2 swaps of two positions of the current sequence and
//! moves to the best admissible one, even when it is worse (that is what lets tabu search
//! leave local optima). It starts from NEH.
//!
//! **Tabu attribute, as in the paper:** whole job orders. Wu et al. keep a tabu list of the
//! permutations selected in previous generations, each with a "tabu value" set to a
//! user-given number and decreased every generation; a child whose job order equals a listed
//! permutation is prohibited. Here the list holds the last `tenure` selected sequences (the
//! NEH start counts as selected), so a sequence cannot be revisited for `tenure`
//! iterations. Since a tabu sequence differs from the current one by one swap exactly when
//! they differ in exactly two positions holding each other's jobs, each listed sequence
//! forbids at most one move, found by one O(n) comparison: the check is exact (no hashing).
//!
//! **Aspiration:** the paper names none. We keep the standard criterion (a tabu move whose
//! makespan beats the best found so far is allowed) so that other tabu attributes can be
//! dropped in, but note that with whole-sequence attributes it never fires: a tabu sequence
//! was visited, so its makespan is at least the best so far.
//!
//! **Evaluation:** a swap of positions i < j is evaluated in O((j - i + 1) m) from the heads
//! and tails of the current sequence (see [`super::eval`]); this is the paper's reuse of
//! the parent's completion-time prefix, plus the symmetric reuse of its suffix. For large
//! neighbourhoods the rows i are evaluated in parallel with rayon; the arg-min is reduced in
//! (i, j) order afterwards, so the result does not depend on the thread count.

use std::collections::VecDeque;

use rayon::prelude::*;

use super::eval::SwapEvaluator;
use super::instance::Instance;
use super::neh::neh_until;
use crate::run::{with_threads, Deadline, Outcome, RunOptions};

/// Iterations when the budget gives neither iterations nor a time limit.
pub const DEFAULT_TABU_ITERATIONS: u64 = 1000;

/// Below about this much work per iteration (n^3 m, a proxy for the summed evaluation
/// cost) the neighbourhood is evaluated on one thread: the fork/join of a rayon iteration
/// costs more than it saves.
const PARALLEL_MIN_WORK: usize = 1_200_000;

/// Settings of [`tabu`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabuParams {
    /// How many iterations a selected sequence stays tabu (the paper's "tabu value"; it
    /// gives no number). 0 disables the tabu list: plain steepest descent with forced moves.
    ///
    /// The default, 200, is long because a listed sequence forbids a single move: it only
    /// breaks cycles no longer than the tenure. Measured with 1000 iterations: tenure 7
    /// missed the optimum on 24 of 400 random instances with 5 to 8 jobs, 100 and more on
    /// none; the mean gap on ta001-ta020 fell from 1.8% (7) to 1.2% (100) and 1.0% (200).
    /// The list check costs O(tenure n) per iteration, small against the neighbourhood.
    pub tenure: usize,
}

impl Default for TabuParams {
    fn default() -> Self {
        TabuParams { tenure: 200 }
    }
}

/// Tabu search from NEH; see the module documentation. Deterministic: the seed is unused
/// (the search has no random choice) and the thread count does not change the answer; a
/// time limit only changes how many iterations run.
pub fn tabu(inst: &Instance, params: &TabuParams, options: &RunOptions) -> Outcome {
    let deadline = options.budget.start(DEFAULT_TABU_ITERATIONS);
    let n = inst.jobs;
    let parallel = n
        .saturating_mul(n)
        .saturating_mul(n)
        .saturating_mul(inst.machines)
        >= PARALLEL_MIN_WORK;
    if parallel {
        with_threads(options.threads, || {
            search(inst, params, &deadline, true, None)
        })
    } else {
        search(inst, params, &deadline, false, None)
    }
}

/// One move of the search: positions `i < j` swapped, and the makespan after the swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabuMove {
    pub i: usize,
    pub j: usize,
    pub makespan: i64,
}

/// [`tabu`] for `iterations` iterations on one thread, recording every move taken: the
/// reference the GPU variants are compared with move by move.
pub fn tabu_trace(
    inst: &Instance,
    params: &TabuParams,
    iterations: u64,
) -> (Outcome, Vec<TabuMove>) {
    let deadline = crate::run::Budget::iterations(iterations).start(iterations);
    let mut moves = Vec::new();
    let outcome = search(inst, params, &deadline, false, Some(&mut moves));
    (outcome, moves)
}

/// The best move of one row i: over j > i, the first minimum among admissible moves and
/// the first minimum among all moves (the fallback when nothing is admissible).
#[derive(Debug, Clone, Copy)]
struct RowBest {
    admissible: Option<(i64, usize)>,
    any: (i64, usize),
}

fn search(
    inst: &Instance,
    params: &TabuParams,
    deadline: &Deadline,
    parallel: bool,
    mut trace: Option<&mut Vec<TabuMove>>,
) -> Outcome {
    let n = inst.jobs;
    let mut current = neh_until(inst, || deadline.timed_out());
    let mut current_value = inst.makespan(&current);
    let mut best = current.clone();
    let mut best_value = current_value;
    deadline.offer(best_value);
    let mut iterations = 0u64;
    let mut evaluations = 0u64;
    // Grows with use: a huge tenure must not reserve its whole length up front.
    let mut tabu_list: VecDeque<Vec<usize>> = VecDeque::new();
    if params.tenure > 0 {
        tabu_list.push_back(current.clone());
    }
    let neighbours = (n * n.saturating_sub(1) / 2) as u64;

    while n >= 2 && !deadline.reached(iterations) {
        let evaluator = SwapEvaluator::new(inst, &current);
        debug_assert_eq!(evaluator.makespan(), current_value);
        let forbidden = forbidden_moves(&current, &tabu_list);
        // A row at a time the clock is read: one iteration of 900 x 40 is 400,000 swaps, and
        // a 1 s limit ran 7 s to finish its first. A cut iteration makes no move.
        let row = |i: usize| -> Option<RowBest> {
            if deadline.timed_out() {
                return None;
            }
            let mut scratch = vec![0i64; inst.machines];
            let mut result = RowBest {
                admissible: None,
                any: (i64::MAX, usize::MAX),
            };
            for j in i + 1..n {
                let value = evaluator.swap(inst, &current, i, j, &mut scratch);
                if value < result.any.0 {
                    result.any = (value, j);
                }
                let is_tabu = forbidden.binary_search(&(i, j)).is_ok();
                // Aspiration: a tabu move that beats the best so far is allowed.
                if (!is_tabu || value < best_value)
                    && result.admissible.is_none_or(|(v, _)| value < v)
                {
                    result.admissible = Some((value, j));
                }
            }
            Some(result)
        };
        let rows: Option<Vec<RowBest>> = if parallel {
            (0..n - 1).into_par_iter().map(row).collect()
        } else {
            (0..n - 1).map(row).collect()
        };
        let Some(rows) = rows else {
            break;
        };
        // Reduce in (i, j) order: strict comparisons keep the first minimum.
        let mut chosen: Option<(i64, usize, usize)> = None;
        let mut fallback = (i64::MAX, 0, 0);
        for (i, r) in rows.iter().enumerate() {
            if let Some((value, j)) = r.admissible {
                if chosen.is_none_or(|(v, _, _)| value < v) {
                    chosen = Some((value, i, j));
                }
            }
            if r.any.0 < fallback.0 {
                fallback = (r.any.0, i, r.any.1);
            }
        }
        // Every move is tabu and none aspirates: take the best tabu move anyway rather than
        // stall; the search must move to go on exploring.
        let (value, i, j) = chosen.unwrap_or(fallback);
        current.swap(i, j);
        current_value = value;
        if let Some(moves) = trace.as_deref_mut() {
            moves.push(TabuMove {
                i,
                j,
                makespan: value,
            });
        }
        iterations += 1;
        evaluations += neighbours;
        if current_value < best_value {
            best_value = current_value;
            best.clone_from(&current);
            deadline.offer(best_value);
        }
        if params.tenure > 0 {
            if tabu_list.len() == params.tenure {
                tabu_list.pop_front();
            }
            tabu_list.push_back(current.clone());
        }
    }

    let objective = inst.makespan(&best);
    debug_assert_eq!(objective, best_value);
    Outcome {
        solution: best,
        objective,
        iterations,
        evaluations,
    }
}

/// The swaps (i < j) of `current` that lead to a sequence in the tabu list, sorted.
pub fn forbidden_moves(current: &[usize], tabu_list: &VecDeque<Vec<usize>>) -> Vec<(usize, usize)> {
    let mut moves = Vec::with_capacity(tabu_list.len());
    for listed in tabu_list {
        let mut differ = current
            .iter()
            .zip(listed)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(position, _)| position);
        if let (Some(i), Some(j), None) = (differ.next(), differ.next(), differ.next()) {
            if listed[i] == current[j] && listed[j] == current[i] {
                moves.push((i, j));
            }
        }
    }
    moves.sort_unstable();
    moves
}
