//! MAX-MIN Ant System with 2-opt local search (Stützle & Hoos 2000, as ACOTSP runs it with
//! `--mmas --localsearch 2`): the CPU reference of the GPU MMAS and the CPU baseline of
//! `mats bench tsp --quality`. Ants construct and improve their tours in parallel on all
//! cores (rayon), which is how a state-of-the-art CPU ACO uses a multi-core host.
//!
//! One iteration:
//! 1. every ant builds a tour with the Ant System's random-proportional rule
//!    ([`AntSystem::construct`], candidate lists and fall-back included);
//! 2. every tour is improved by [`two_opt`] over the first `ls_neighbours` candidates;
//! 3. evaporation `tau = (1 - rho) tau`, then one tour deposits `1 / C` on its edges: the
//!    iteration's best, or the best so far every `u_gb`-th iteration, with ACOTSP's schedule
//!    for local search (u_gb = 25, 5, 3, 2, then 1 after 25, 75, 125, 250 iterations since the
//!    last restart);
//! 4. trails are kept in `[tau_min, tau_max]`, `tau_max = 1 / (rho C_best)`,
//!    `tau_min = tau_max / (2n)` (ACOTSP's limits with local search), updated when the best
//!    improves; trails start at tau_max.
//!
//! **Restart**: when the best tour since the last restart has not improved for
//! `restart_stall` iterations, every trail is reset to tau_max (ACOTSP restarts on a low
//! branching factor after at least 250 iterations; a stall count is the same idea without the
//! O(n k) statistic).

use rayon::prelude::*;

use super::ant_system::{AntSystem, AsParams, InitialPheromone};
use super::instance::Instance;
use super::local_search::two_opt_until;
use crate::run::{stream_rng, with_threads, Outcome, RunOptions};

/// Iterations when the budget names none.
pub const DEFAULT_MMAS_ITERATIONS: u64 = 500;

/// Parameters of [`mmas`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MmasParams {
    /// Ants per iteration (ACOTSP's default with local search is 25).
    pub ants: usize,
    pub alpha: f64,
    pub beta: f64,
    pub rho: f64,
    /// Candidate list length for construction.
    pub candidates: usize,
    /// Candidates the 2-opt tries per city (at most `candidates`).
    pub ls_neighbours: usize,
    /// Iterations without a better tour since the last restart before the trails reset.
    pub restart_stall: u64,
}

impl Default for MmasParams {
    fn default() -> Self {
        MmasParams {
            ants: 25,
            alpha: 1.0,
            beta: 2.0,
            rho: 0.2,
            candidates: 20,
            ls_neighbours: 20,
            restart_stall: 250,
        }
    }
}

impl MmasParams {
    pub fn check(&self) -> Result<(), String> {
        self.as_params().check()?;
        if self.ls_neighbours == 0 {
            return Err("parameter `ls_neighbours` must be at least 1".into());
        }
        Ok(())
    }

    fn as_params(&self) -> AsParams {
        AsParams {
            ants: Some(self.ants),
            alpha: self.alpha,
            beta: self.beta,
            rho: self.rho,
            candidates: self.candidates.max(self.ls_neighbours),
            initial: InitialPheromone::Acotsp,
        }
    }
}

/// ACOTSP's schedule of best-so-far deposits with local search: every u_gb-th iteration.
pub fn best_so_far_period(since_restart: u64) -> u64 {
    match since_restart {
        0..25 => 25,
        25..75 => 5,
        75..125 => 3,
        125..250 => 2,
        _ => 1,
    }
}

/// The trail limits `(tau_min, tau_max)` for a best tour of length `best`.
pub fn trail_limits(rho: f64, best: i64, n: usize) -> (f64, f64) {
    let max = 1.0 / (rho * best.max(1) as f64);
    (max / (2.0 * n as f64), max)
}

/// MAX-MIN Ant System with 2-opt for the budget (default [`DEFAULT_MMAS_ITERATIONS`]
/// iterations); the best tour found.
pub fn mmas(inst: &Instance, params: &MmasParams, options: &RunOptions) -> Result<Outcome, String> {
    params.check()?;
    let deadline = options.budget.start(DEFAULT_MMAS_ITERATIONS);
    with_threads(options.threads, || {
        let n = inst.n();
        let Some(mut colony) =
            AntSystem::new_within(inst, &params.as_params(), options.seed, &deadline)?
        else {
            // The time ran out while the matrices were built: the curve's tour is a start.
            return Ok(super::curve::curve_tour(inst));
        };
        let depth = params.ls_neighbours;
        let (mut tau_min, mut tau_max) = trail_limits(params.rho, colony.nn_length, n);
        colony.pheromone.fill(tau_max);
        if !colony.compute_choice_info_until(&|| deadline.timed_out()) {
            let (objective, solution) = colony.best_or_start();
            return Ok(Outcome {
                solution,
                objective,
                iterations: 0,
                evaluations: 0,
            });
        }
        let mut best: Option<(i64, Vec<usize>)> = None;
        let mut restart_best = i64::MAX;
        let (mut iteration, mut restart_iteration, mut last_improvement) = (0u64, 0u64, 0u64);
        let mut moves = 0u64;
        // An iteration cut short by the clock (construction abandoned, or 2-opt stopped
        // early) still offers the tours it has, then the run ends.
        let stop = || deadline.timed_out();
        while !deadline.reached(iteration) || iteration == 0 {
            if !colony.construct_within(&deadline) {
                break;
            }
            let seed = options.seed;
            let stream0 = (iteration + 1) << 32;
            let constructed = std::mem::take(&mut colony.tours);
            let (dist, lists) = (colony.dist(), colony.candidates());
            let (tours, ls_moves): (Vec<Vec<usize>>, Vec<u64>) = constructed
                .into_par_iter()
                .enumerate()
                .map(|(a, mut tour)| {
                    let mut rng = stream_rng(seed, stream0 + a as u64);
                    let m = two_opt_until(&mut tour, dist, lists, depth, &mut rng, &stop);
                    (tour, m)
                })
                .unzip();
            moves += ls_moves.iter().sum::<u64>();
            colony.lengths = tours.iter().map(|t| inst.tour_length(t)).collect();
            colony.tours = tours;
            let (ib, &ib_len) = colony
                .lengths
                .iter()
                .enumerate()
                .min_by_key(|&(k, &l)| (l, k))
                .expect("at least one ant");
            if best.as_ref().is_none_or(|(b, _)| ib_len < *b) {
                best = Some((ib_len, colony.tours[ib].clone()));
                (tau_min, tau_max) = trail_limits(params.rho, ib_len, n);
                deadline.offer(ib_len);
            }
            if deadline.timed_out() {
                iteration += 1;
                break;
            }
            if ib_len < restart_best {
                restart_best = ib_len;
                last_improvement = iteration;
            }
            // Deposit: the iteration's best, or every u_gb-th iteration the best so far.
            let since_restart = iteration - restart_iteration;
            let (len, tour) = if since_restart % best_so_far_period(since_restart) == 0 {
                let (l, t) = best.as_ref().expect("set above");
                (*l, t.as_slice())
            } else {
                (ib_len, colony.tours[ib].as_slice())
            };
            let keep = 1.0 - params.rho;
            colony.pheromone.par_iter_mut().for_each(|t| *t *= keep);
            let d = 1.0 / len.max(1) as f64;
            let mut previous = tour[n - 1];
            for &c in tour {
                colony.pheromone[previous * n + c] += d;
                colony.pheromone[c * n + previous] = colony.pheromone[previous * n + c];
                previous = c;
            }
            colony
                .pheromone
                .par_iter_mut()
                .for_each(|t| *t = t.clamp(tau_min, tau_max));
            if iteration - last_improvement >= params.restart_stall {
                colony.pheromone.fill(tau_max);
                restart_iteration = iteration + 1;
                last_improvement = iteration + 1;
                restart_best = i64::MAX;
            }
            // Cut short, the weights are stale, but the loop ends before an ant reads them.
            colony.compute_choice_info_until(&stop);
            colony.advance();
            iteration += 1;
        }
        let (objective, solution) = match best {
            Some(best) => best,
            None => colony.best_or_start(),
        };
        Ok(Outcome {
            solution,
            objective,
            iterations: iteration,
            evaluations: iteration * params.ants as u64 * n as u64 + moves,
        })
    })
}
