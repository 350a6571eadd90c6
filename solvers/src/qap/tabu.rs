//! Taillard's robust tabu search (Ro-TS, 1991).
//!
//! The CPU reference of the GPU `tabu` and `rots-block` variants. The state is the permutation
//! and the delta matrix of all swaps, kept current in O(n^2) per iteration with the O(1) update
//! of [`super::delta`]. A move (r, s) is tabu when both facilities would return to locations
//! they left within their tenure; the tenure of each left location is drawn uniformly from
//! [0.9 n, 1.1 n] (the "robust" randomisation). A tabu move is allowed when it improves on the
//! best cost (aspiration), and a move that puts a facility on a location it has not held for
//! `aspiration` iterations is forced (Taillard's long-term diversification, default 2 n^2).
//!
//! With `restart_stall` the search is iterated (what GPU rots-block runs in each block,
//! [`RotsParams::gpu_defaults`], and `mats solve --backend cpu`'s default): after that many
//! iterations without improving, the trajectory restarts from its best with random swaps and a
//! fresh tabu list. Taillard's long-term aspiration stops the plain search improving on tai*a
//! once it starts forcing moves (after ~2 n^2 iterations: tai100a's best after 1 s is its best
//! after 8 s), which the restarts replace.

use rand::Rng;

use super::delta::{swap_columns, swap_rows, SwapDeltas};
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
    /// Long-term aspiration as a factor of n^2 (Taillard: 2; 0 = off).
    pub aspiration: f64,
    /// Iterated tabu search: restart from the trajectory's best, perturbed by
    /// `perturbation x n` random swaps and with a fresh tabu list, after this many iterations
    /// without improving it (0 = never: Taillard's single trajectory).
    pub restart_stall: u64,
    pub perturbation: f64,
}

/// Iterations per n of one rots-block launch by default (`qap::gpu`'s launch cap): the unit
/// of its restart stall, which the CPU search takes in the same unit.
pub const ROTS_LAUNCH_ITERATIONS: u64 = 10;

/// rots-block's restart stall where restarts perturb a block's own best, in launches
/// (`qap::gpu::DEFAULT_RESTART_STALL`); the iterated CPU search's default too.
pub const ROTS_RESTART_STALL: u32 = 5;

/// The largest tenure factor (of n) either backend accepts: rots-block keeps tabu expiries in
/// int32 counters, and beyond ~16 n a tabu list forbids nearly every move of a small instance.
pub const TENURE_FACTOR_MAX: f64 = 16.0;

/// The largest long-term aspiration factor (of n^2): beyond it the rule never fires within any
/// budget either backend runs, so larger values would only hide a typo.
pub const ASPIRATION_FACTOR_MAX: f64 = 1000.0;

/// The tenure range as factors of n; the CPU's Ro-TS and rots-block check it by this one rule
/// so that a point valid on one backend is valid on the other.
pub fn check_tenure(min: f64, max: f64) -> Result<(), String> {
    if min.is_finite() && max.is_finite() && min > 0.0 && min <= max && max <= TENURE_FACTOR_MAX {
        return Ok(());
    }
    Err(format!(
        "parameters `tenure_min`, `tenure_max` must satisfy 0 < min <= max <= {TENURE_FACTOR_MAX} \
         (factors of n), found {min}, {max}"
    ))
}

/// The long-term aspiration as a factor of n^2 (0 = off), as [`check_tenure`].
pub fn check_aspiration(factor: f64) -> Result<(), String> {
    if factor.is_finite() && (0.0..=ASPIRATION_FACTOR_MAX).contains(&factor) {
        return Ok(());
    }
    Err(format!(
        "parameter `aspiration` must be in 0..={ASPIRATION_FACTOR_MAX} (a factor of n^2; 0 = off), \
         found {factor}"
    ))
}

/// A restart's random swaps as a factor of n (0 = restart from the best itself with a fresh
/// tabu list), as [`check_tenure`].
pub fn check_perturbation(factor: f64) -> Result<(), String> {
    if factor.is_finite() && (0.0..=1.0).contains(&factor) {
        return Ok(());
    }
    Err(format!(
        "parameter `perturbation` must be in 0..=1 (a factor of n), found {factor}"
    ))
}

impl RotsParams {
    /// A restart stall of `launches` rots-block launches in iterations at size n (the unit
    /// `--restart-stall` takes on both backends).
    pub fn stall_iterations(launches: u32, n: usize) -> u64 {
        u64::from(launches) * ROTS_LAUNCH_ITERATIONS * n as u64
    }

    /// What GPU rots-block runs by default, per block (`qap::gpu::GpuParams`): tenure
    /// 0.4-0.8 n, no long-term aspiration, a restart after 50 n iterations without improving
    /// (5 launches of 10 n) with 0.25 n swaps. The CPU twin of the GPU's search, so an
    /// equal-time comparison can set the same algorithm on both sides.
    pub fn gpu_defaults(n: usize) -> RotsParams {
        RotsParams {
            starts: 1,
            tenure_min: 0.4,
            tenure_max: 0.8,
            aspiration: 0.0,
            restart_stall: RotsParams::stall_iterations(ROTS_RESTART_STALL, n),
            perturbation: 0.25,
        }
    }
}

impl Default for RotsParams {
    fn default() -> Self {
        RotsParams {
            starts: 1,
            tenure_min: 0.9,
            tenure_max: 1.1,
            aspiration: 2.0,
            restart_stall: 0,
            perturbation: 0.25,
        }
    }
}

/// Iterations per start when the budget names none: enough for Ro-TS to settle on QAPLIB
/// instances up to n = 50 in well under a second per start.
pub fn default_iterations(n: usize) -> u64 {
    1000 * n as u64
}

/// Robust tabu search; the iteration budget applies to each start, the time limit to all
/// (split among the starts where they outnumber the threads).
pub fn robust_tabu(inst: &Instance, params: &RotsParams, options: &RunOptions) -> Outcome {
    let deadline = options.budget.start(default_iterations(inst.n()));
    multistart_timed(
        params.starts.max(1),
        options.threads,
        &deadline,
        true,
        |start, deadline| {
            let p = start_permutation(inst.n(), options.seed, start);
            let mut rng = crate::run::stream_rng(options.seed ^ 0x7ab0_5eed, start as u64);
            search(inst, p, params, deadline, &mut rng)
        },
    )
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
    // Off: a lag no tabu entry reaches.
    let aspiration = match (params.aspiration * (n * n) as f64) as i64 {
        a if a <= 0 => i64::MAX / 4,
        a => a,
    };
    let Some(mut delta) = SwapDeltas::new_until(inst, &p, || deadline.timed_out()) else {
        // The time limit ended before the first delta matrix did: the start is the answer.
        return Outcome {
            solution: p,
            objective: cost,
            iterations: 0,
            evaluations: 0,
        };
    };
    // Taillard starts the tabu list from distinct negative values so that the long-term
    // aspiration does not force all moves at once.
    let mut tabu = SolutionOrderedTabu::new(&p);
    // `iteration` numbers the tabu list's entries and restarts with it; `done` counts all.
    let mut iteration: i64 = 0;
    let mut done = 0u64;
    let mut improved_at = 0u64;
    let mut evaluations = 0u64;
    while !deadline.reached(done) {
        if params.restart_stall > 0 && done - improved_at >= params.restart_stall {
            p.clone_from(&best.1);
            for _ in 0..(params.perturbation * n as f64).round() as usize {
                let (x, y) = (rng.random_range(0..n), rng.random_range(0..n));
                p.swap(x, y);
            }
            cost = inst.cost(&p);
            match SwapDeltas::new_until(inst, &p, || deadline.timed_out()) {
                Some(fresh) => delta = fresh,
                None => break,
            }
            tabu = SolutionOrderedTabu::new(&p);
            iteration = 0;
            improved_at = done;
        }
        iteration += 1;
        done += 1;
        // Taillard's choice as the lexicographic minimum of (class, delta) in scan order:
        // class 0 aspired (beats the best cost, or a facility returns to a location it left
        // more than `aspiration` iterations ago), 1 allowed (not both returns tabu), 2 tabu.
        // The first aspired move of least delta wins; failing that the first allowed one;
        // failing that (every move tabu, possible for tiny n) the first move of least delta.
        let (lag, beats) = (iteration - aspiration, best.0 - cost);
        let mut chosen = (0, 1);
        let mut chosen_key = (3u8, i64::MAX);
        for r in 0..n {
            let (row, returns_r, returns_s) = (delta.row(r), tabu.row(r), tabu.column(r));
            for s in r + 1..n {
                let d = row[s];
                let oldest = returns_r[s].min(returns_s[s]);
                let class = if oldest < lag || d < beats {
                    0
                } else if oldest < iteration {
                    1
                } else {
                    2
                };
                if (class, d) < chosen_key {
                    chosen_key = (class, d);
                    chosen = (r, s);
                }
            }
        }
        evaluations += (n * (n - 1) / 2) as u64;
        let (r, s) = chosen;
        let d = delta.get(r, s);
        delta.apply(inst, &mut p, r, s);
        cost += d;
        // The facilities left their locations; returning there becomes tabu.
        tabu.swap(r, s);
        tabu.forbid_return(
            r,
            s,
            iteration + rng.random_range(tenure_min..=tenure_max),
            iteration + rng.random_range(tenure_min..=tenure_max),
        );
        if cost < best.0 {
            best = (cost, p.clone());
            deadline.offer(cost);
            improved_at = done;
        }
    }
    Outcome {
        solution: best.1,
        objective: best.0,
        iterations: done,
        evaluations,
    }
}

/// Robust tabu search's tabu list in solution order: `row(r)[s]` is the first iteration at
/// which facility r may take the location facility s holds now, and `column(r)[s]` the first
/// at which s may take r's (the list Taillard indexes by facility and location, read through
/// the permutation). Both read as contiguous rows in the choice loop, where the list indexed
/// by location would be read through p; a move swaps two columns of one and two rows of the
/// other.
struct SolutionOrderedTabu {
    n: usize,
    by_row: Vec<i64>,
    by_column: Vec<i64>,
}

impl SolutionOrderedTabu {
    /// Facility i may return to location l from iteration -(i n + l) (distinct start values).
    fn new(p: &[usize]) -> SolutionOrderedTabu {
        let n = p.len();
        let mut by_row = vec![0; n * n];
        let mut by_column = vec![0; n * n];
        for i in 0..n {
            for (j, &pj) in p.iter().enumerate() {
                let start = -((i * n + pj) as i64);
                by_row[i * n + j] = start;
                by_column[j * n + i] = start;
            }
        }
        SolutionOrderedTabu {
            n,
            by_row,
            by_column,
        }
    }

    fn row(&self, r: usize) -> &[i64] {
        &self.by_row[r * self.n..(r + 1) * self.n]
    }

    fn column(&self, r: usize) -> &[i64] {
        &self.by_column[r * self.n..(r + 1) * self.n]
    }

    /// Facilities r and s swapped locations: the entries follow the locations.
    fn swap(&mut self, r: usize, s: usize) {
        swap_columns(&mut self.by_row, self.n, r, s);
        swap_rows(&mut self.by_column, self.n, r, s);
    }

    /// After the swap: r may not return to the location it left (now s's) before `until_r`,
    /// nor s to r's before `until_s`.
    fn forbid_return(&mut self, r: usize, s: usize, until_r: i64, until_s: i64) {
        let n = self.n;
        self.by_row[r * n + s] = until_r;
        self.by_column[s * n + r] = until_r;
        self.by_row[s * n + r] = until_s;
        self.by_column[r * n + s] = until_s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qap::delta::{apply_swap, delta_matrix};
    use crate::run::{stream_rng, Budget};

    /// Taillard's Ro-TS written plainly: the delta matrix of `delta_matrix`/`apply_swap`, the
    /// tabu list indexed by facility and location, the rules spelled out move by move.
    fn reference(
        inst: &Instance,
        mut p: Vec<usize>,
        params: &RotsParams,
        iterations: i64,
        seed: u64,
    ) -> (i64, Vec<usize>) {
        let n = inst.n();
        let mut rng = stream_rng(seed, 0);
        let mut cost = inst.cost(&p);
        let mut best = (cost, p.clone());
        let tenure_min = ((params.tenure_min * n as f64) as i64).max(1);
        let tenure_max = ((params.tenure_max * n as f64).ceil() as i64).max(tenure_min);
        let aspiration = match (params.aspiration * (n * n) as f64) as i64 {
            a if a <= 0 => i64::MAX / 4,
            a => a,
        };
        let mut delta = delta_matrix(inst, &p);
        let mut tabu: Vec<i64> = (0..n * n).map(|k| -(k as i64)).collect();
        let (mut it, mut since_best) = (0i64, 0u64);
        for _ in 0..iterations {
            // Iterated tabu search: from the best, swapped, with a fresh list and count.
            if params.restart_stall > 0 && since_best >= params.restart_stall {
                p.clone_from(&best.1);
                for _ in 0..(params.perturbation * n as f64).round() as usize {
                    let (x, y) = (rng.random_range(0..n), rng.random_range(0..n));
                    p.swap(x, y);
                }
                cost = inst.cost(&p);
                delta = delta_matrix(inst, &p);
                tabu = (0..n * n).map(|k| -(k as i64)).collect();
                it = 0;
                since_best = 0;
            }
            it += 1;
            since_best += 1;
            let (mut aspired_move, mut allowed_move, mut any_move) = (None, None, None);
            for r in 0..n {
                for s in r + 1..n {
                    let d = delta[r * n + s];
                    let (tr, ts) = (tabu[r * n + p[s]], tabu[s * n + p[r]]);
                    let better = |m: Option<(i64, usize, usize)>| m.is_none_or(|(b, _, _)| d < b);
                    if (tr < it - aspiration || ts < it - aspiration || cost + d < best.0)
                        && better(aspired_move)
                    {
                        aspired_move = Some((d, r, s));
                    }
                    if (tr < it || ts < it) && better(allowed_move) {
                        allowed_move = Some((d, r, s));
                    }
                    if better(any_move) {
                        any_move = Some((d, r, s));
                    }
                }
            }
            let (d, r, s) = aspired_move.or(allowed_move).or(any_move).expect("n >= 2");
            let (left_r, left_s) = (p[r], p[s]);
            apply_swap(inst, &mut p, &mut delta, r, s);
            cost += d;
            tabu[r * n + left_r] = it + rng.random_range(tenure_min..=tenure_max);
            tabu[s * n + left_s] = it + rng.random_range(tenure_min..=tenure_max);
            if cost < best.0 {
                best = (cost, p.clone());
                since_best = 0;
            }
        }
        (best.0, best.1)
    }

    fn random_instance(n: usize, seed: u64, symmetric: bool) -> Instance {
        let mut rng = stream_rng(seed, 1);
        let mut matrix = || {
            let mut m: Vec<i64> = (0..n * n).map(|_| rng.random_range(-5..40)).collect();
            if symmetric {
                for i in 0..n {
                    for j in 0..i {
                        m[i * n + j] = m[j * n + i];
                    }
                }
            }
            m
        };
        let (a, b) = (matrix(), matrix());
        Instance::new("random", n, a, b).expect("n x n")
    }

    // The solution-ordered delta matrix and tabu list, and the choice as a minimum of (class,
    // delta), must take exactly the moves of the plain rules: same best cost and permutation
    // after many iterations, with the long-term aspiration firing (a short lag) and not, and
    // with restarts (the GPU's defaults scaled down so that they happen).
    #[test]
    fn search_takes_the_moves_of_the_plain_rules() {
        for (n, symmetric, aspiration, restart_stall) in [
            (2, false, 2.0, 0),
            (3, true, 2.0, 0),
            (7, false, 0.5, 0),
            (12, true, 2.0, 0),
            (15, false, 0.1, 0),
            (20, true, 0.0, 0),
            (9, true, 0.0, 15),
            (14, false, 0.0, 30),
        ] {
            let inst = random_instance(n, n as u64, symmetric);
            let params = RotsParams {
                aspiration,
                restart_stall,
                ..RotsParams::default()
            };
            let start: Vec<usize> = (0..n).rev().collect();
            let iterations = 400;
            let deadline = Budget::iterations(iterations).start(iterations);
            let got = search(
                &inst,
                start.clone(),
                &params,
                &deadline,
                &mut stream_rng(9, 0),
            );
            let want = reference(&inst, start, &params, iterations as i64, 9);
            assert_eq!(
                (got.objective, got.solution),
                want,
                "n = {n}, symmetric {symmetric}, aspiration {aspiration}, restart after {restart_stall}"
            );
            assert_eq!(got.iterations, iterations);
        }
    }
}
