//! Iterated greedy of Ruiz & Stützle (2007), the standard strong baseline for the PFSP.
//!
//! Start from NEH improved by local search; then repeat: remove d random jobs
//! (destruction), reinsert each at its best position (reconstruction, NEH-style), improve
//! by local search, and accept with a simulated-annealing-like rule at the constant
//! temperature `T * sum(p) / (n m 10)`. Every insertion is evaluated for all positions at
//! once with Taillard's acceleration ([`super::eval::Insertion`]).
//!
//! The local search is Ruiz & Stützle's iterative improvement by insertion: take the jobs
//! in a random order, remove each and reinsert it at its best position (first on ties), and
//! keep the move only if the makespan strictly drops; sweep again while a sweep improved.
//!
//! Acceptance follows the brief of this project: a new sequence at least as good as the
//! current one replaces it (the paper replaces only on strict improvement; accepting equal
//! moves lets the search drift across plateaus, which Taillard's instances are full of).
//!
//! `starts` independent walks (each from NEH, walk w drawing from stream w of the seed) run in
//! parallel on the worker threads and the best is kept: the CPU's counterpart of the GPU's
//! walks per block, and the way a time-limited run uses every core. The walk count, not the
//! thread count, decides the answer.

use rand::seq::SliceRandom;
use rand::Rng;

use super::eval::Insertion;
use super::instance::Instance;
use super::neh::neh_until;
use crate::run::{multistart_timed, stream_rng, Deadline, Outcome, RunOptions, SolverRng};

/// Iterations when the budget gives neither iterations nor a time limit: enough for small
/// instances to reach their optimum in well under a second.
pub const DEFAULT_IG_ITERATIONS: u64 = 1000;

/// Settings of [`iterated_greedy`]; the defaults are Ruiz & Stützle's calibrated values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IgParams {
    /// Independent walks, run in parallel; the best is kept.
    pub starts: usize,
    /// Jobs removed per destruction (d).
    pub destruction: usize,
    /// Temperature factor (T).
    pub temperature: f64,
}

impl Default for IgParams {
    fn default() -> Self {
        IgParams {
            starts: 1,
            destruction: 4,
            temperature: 0.4,
        }
    }
}

/// Iterated greedy; see the module documentation. `params.starts` walks on `options.threads`
/// threads; deterministic for a given seed under an iteration budget (which applies to each
/// walk; a time limit to all), whatever the thread count.
pub fn iterated_greedy(inst: &Instance, params: &IgParams, options: &RunOptions) -> Outcome {
    let deadline = options.budget.start(DEFAULT_IG_ITERATIONS);
    // NEH is deterministic: one for all the walks (O(n^2 m) each would be spent again),
    // cut short by the deadline.
    let start = neh_until(inst, || deadline.timed_out());
    multistart_timed(
        params.starts.max(1),
        options.threads,
        &deadline,
        true,
        |walk, deadline| iterated_greedy_walk(inst, params, &start, options.seed, walk, deadline),
    )
    .expect("at least one walk runs")
}

/// One walk of [`iterated_greedy`] from `start` (NEH), drawing from stream `walk` of `seed`.
fn iterated_greedy_walk(
    inst: &Instance,
    params: &IgParams,
    start: &[usize],
    seed: u64,
    walk: usize,
    deadline: &Deadline,
) -> Outcome {
    let mut rng = stream_rng(seed, walk as u64);
    let n = inst.jobs;
    let total: i64 = inst.features().total_time;
    let temperature = params.temperature * total as f64 / (n * inst.machines * 10) as f64;
    let mut search = Search {
        inst,
        insertion: Insertion::new(),
        evaluations: 0,
        order: (0..n).collect(),
    };

    let mut current = start.to_vec();
    let mut current_value = search.local_search(&mut current, &mut rng, deadline);
    let mut best = current.clone();
    let mut best_value = current_value;
    deadline.offer(best_value);
    let mut iterations = 0u64;
    let destruction = params.destruction.min(n.saturating_sub(1));

    while n >= 2 && !deadline.reached(iterations) {
        let mut candidate = current.clone();
        let mut removed = Vec::with_capacity(destruction);
        for _ in 0..destruction {
            let position = rng.random_range(0..candidate.len());
            removed.push(candidate.remove(position));
        }
        for &job in &removed {
            let (position, _) = search.best_insertion(&candidate, job);
            candidate.insert(position, job);
        }
        let value = search.local_search(&mut candidate, &mut rng, deadline);
        if value <= current_value {
            current = candidate;
            current_value = value;
            if current_value < best_value {
                best_value = current_value;
                best.clone_from(&current);
                deadline.offer(best_value);
            }
        } else {
            let delta = (value - current_value) as f64;
            // temperature is 0 only when all times are 0, and then no move is worse.
            if rng.random::<f64>() < (-delta / temperature).exp() {
                current = candidate;
                current_value = value;
            }
        }
        iterations += 1;
    }

    let objective = inst.makespan(&best);
    debug_assert_eq!(objective, best_value);
    Outcome {
        solution: best,
        objective,
        iterations,
        evaluations: search.evaluations,
    }
}

struct Search<'a> {
    inst: &'a Instance,
    insertion: Insertion,
    /// Insertion positions evaluated (n + 1 per reinsertion into n jobs).
    evaluations: u64,
    /// Scratch job order of a local-search sweep.
    order: Vec<usize>,
}

impl Search<'_> {
    fn best_insertion(&mut self, sequence: &[usize], job: usize) -> (usize, i64) {
        self.evaluations += sequence.len() as u64 + 1;
        self.insertion.best(self.inst, sequence, job)
    }

    /// Iterative improvement by insertion; returns the final makespan.
    /// Insertion local search to a local optimum, or until the clock runs out: one pass
    /// costs n^2 m (VFR800_60's first ones kept a 0.05 s limit waiting 2 s).
    fn local_search(
        &mut self,
        sequence: &mut Vec<usize>,
        rng: &mut SolverRng,
        deadline: &Deadline,
    ) -> i64 {
        let mut value = self.inst.makespan(sequence);
        if sequence.len() < 2 {
            return value;
        }
        let mut order = std::mem::take(&mut self.order);
        let mut improved = true;
        while improved {
            improved = false;
            order.shuffle(rng);
            for &job in &order {
                if deadline.timed_out() {
                    improved = false;
                    break;
                }
                let Some(from) = sequence.iter().position(|&j| j == job) else {
                    continue;
                };
                sequence.remove(from);
                let (to, new_value) = self.best_insertion(sequence, job);
                if new_value < value {
                    sequence.insert(to, job);
                    value = new_value;
                    improved = true;
                } else {
                    sequence.insert(from, job);
                }
            }
        }
        self.order = order;
        value
    }
}
