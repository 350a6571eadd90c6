//! Ant System with candidate lists, as Dorigo and Stützle describe it ("Ant Colony
//! Optimization", 2004, ch. 3) and ACOTSP implements it (`as_update`,
//! `neighbour_choose_and_move_to_next`): the CPU reference of the GPU `task`, `data` and
//! `data-compressed` variants of Dawson and Stewart.
//!
//! One iteration:
//!
//! 1. **Construction.** Each of the m ants starts on a uniformly random city. At each step
//!    from city i it looks at i's candidate list (the k nearest cities): unvisited candidates
//!    get weight `choice_info[i][j]`, visited ones 0; if the sum is positive a roulette wheel
//!    (one uniform draw scaled by the sum, walked in list order) picks the next city,
//!    otherwise the ant moves to the unvisited city with the largest `choice_info[i][j]`
//!    over all cities (first in index order on ties). Should rounding push the wheel past
//!    the list's end, the best unvisited candidate is taken (ACOTSP's
//!    `neighbour_choose_best_next`). Ants construct in parallel; ant a of iteration t
//!    draws from its own stream `stream_rng(seed, t * m + a)`, so the result does not
//!    depend on the thread count.
//! 2. **Evaporation** of every trail: `tau = (1 - rho) tau`.
//! 3. **Deposit** by every ant, in ant order: `tau_ij += 1 / C_k` on both directions of each
//!    edge of its tour (C_k its exact integer length).
//! 4. `choice_info = tau^alpha * eta^beta` for all pairs, with ACOTSP's heuristic
//!    `eta_ij = 1 / (d_ij + 0.1)` (finite for zero distances).
//!
//! **Initial pheromone** `tau0 = m / C_nn`, C_nn the length of the nearest-neighbour tour from
//! city 0: Dorigo and Stützle's recommendation for AS (book, box 3.1). ACOTSP's code itself
//! sets `1 / (rho C_nn)` for AS; [`InitialPheromone::Acotsp`] selects that. With alpha = 1
//! the two only differ in how fast the first iterations forget the start.
//!
//! Pheromones are `f64`; tour lengths are exact `i64`. The matrices are n x n, so the solver
//! refuses instances above [`MAX_AS_CITIES`].

use rand::Rng;
use rayon::prelude::*;

use super::candidates::CandidateLists;
use super::instance::Instance;
use crate::run::{stream_rng, with_threads, Deadline, Outcome, RunOptions};

/// Largest instance the n x n matrices (distance, pheromone, eta^beta, choice_info: 32 n^2
/// bytes) are built for: 16 000 cities take 8.2 GB (rl11849, the TSPLIB instance above 10 000
/// cities the GPU figures use, 4.5 GB).
pub const MAX_AS_CITIES: usize = 16_000;

/// Most cities x ants of one iteration's tours (8 bytes each: 2 GiB); more ants than this
/// allows are refused rather than left to abort on a failed allocation.
pub const MAX_TOUR_CELLS: usize = 1 << 28;

/// Iterations when the budget names none.
pub const DEFAULT_AS_ITERATIONS: u64 = 100;

/// Where the pheromone trails start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitialPheromone {
    /// `m / C_nn` (Dorigo & Stützle's book).
    #[default]
    Book,
    /// `1 / (rho C_nn)` (ACOTSP's code).
    Acotsp,
}

/// Parameters of [`ant_system`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AsParams {
    /// Ants per iteration; `None` means one per city (m = n).
    pub ants: Option<usize>,
    pub alpha: f64,
    pub beta: f64,
    /// Evaporation rate in (0, 1].
    pub rho: f64,
    /// Candidate list length (32 as in Dawson & Stewart; ACOTSP uses 20).
    pub candidates: usize,
    pub initial: InitialPheromone,
}

impl Default for AsParams {
    fn default() -> Self {
        AsParams {
            ants: None,
            alpha: 1.0,
            beta: 2.0,
            rho: 0.5,
            candidates: 32,
            initial: InitialPheromone::Book,
        }
    }
}

impl AsParams {
    /// Checks the values; the messages name the parameters as the command line does.
    pub fn check(&self) -> Result<(), String> {
        if self.ants == Some(0) {
            return Err("parameter `ants` must be at least 1".into());
        }
        if self.candidates == 0 {
            return Err("parameter `candidates` must be at least 1".into());
        }
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(format!(
                "parameter `alpha` must be >= 0, found {}",
                self.alpha
            ));
        }
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(format!(
                "parameter `beta` must be >= 0, found {}",
                self.beta
            ));
        }
        if !(self.rho > 0.0 && self.rho <= 1.0) {
            return Err(format!(
                "parameter `rho` must be in (0, 1], found {}",
                self.rho
            ));
        }
        Ok(())
    }
}

/// The nearest-neighbour tour from `start` (ties by lower city index) over a distance
/// matrix.
pub fn nearest_neighbour_tour(dist: &[i64], n: usize, start: usize) -> Vec<usize> {
    nearest_neighbour_tour_until(dist, n, start, &|| false).expect("nothing stops it")
}

/// [`nearest_neighbour_tour`], reading `stop` every 256 cities (None when it said stop).
fn nearest_neighbour_tour_until(
    dist: &[i64],
    n: usize,
    start: usize,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<usize>> {
    let mut visited = vec![false; n];
    let mut tour = Vec::with_capacity(n);
    let mut current = start;
    visited[current] = true;
    tour.push(current);
    for step in 1..n {
        if step % 256 == 0 && stop() {
            return None;
        }
        let row = &dist[current * n..(current + 1) * n];
        let mut best = (i64::MAX, usize::MAX);
        for (j, &d) in row.iter().enumerate() {
            if !visited[j] && d < best.0 {
                best = (d, j);
            }
        }
        current = best.1;
        visited[current] = true;
        tour.push(current);
    }
    Some(tour)
}

fn length(dist: &[i64], n: usize, tour: &[usize]) -> i64 {
    let mut total = 0;
    let mut previous = tour[tour.len() - 1];
    for &c in tour {
        total += dist[previous * n + c];
        previous = c;
    }
    total
}

/// The state of an Ant System run, one [`AntSystem::iterate`] per iteration: what the GPU
/// variants are checked against, phase by phase.
pub struct AntSystem {
    n: usize,
    m: usize,
    params: AsParams,
    seed: u64,
    dist: Vec<i64>,
    candidates: CandidateLists,
    /// eta^beta, fixed.
    eta_beta: Vec<f64>,
    pub pheromone: Vec<f64>,
    pub choice_info: Vec<f64>,
    iteration: u64,
    /// Tours of the last iteration and their lengths.
    pub tours: Vec<Vec<usize>>,
    pub lengths: Vec<i64>,
    pub best: Option<(i64, Vec<usize>)>,
    /// Length of the nearest-neighbour tour used for tau0.
    pub nn_length: i64,
    /// That tour: the start solution a run cut short by its time limit returns.
    nn_tour: Vec<usize>,
}

impl AntSystem {
    pub fn new(inst: &Instance, params: &AsParams, seed: u64) -> Result<Self, String> {
        let never = crate::run::Budget::default().start(u64::MAX);
        Ok(Self::new_within(inst, params, seed, &never)?
            .expect("a deadline without a clock never runs out"))
    }

    /// The memory a colony of `m` ants on `n` cities with `k` candidates takes: the four
    /// n x n matrices (distance, eta^beta, pheromone, choice info), one iteration's tours and
    /// the candidate lists.
    pub fn memory_bytes(n: usize, m: usize, k: usize) -> u128 {
        let (n, m, k) = (n as u128, m as u128, k as u128);
        32 * n * n + 8 * m * n + 8 * n * k
    }

    /// [`AntSystem::new`] that gives up between its phases once `deadline` has run out
    /// (`Ok(None)`): building the matrices of a large instance takes seconds, which a time
    /// limit counts. The memory it needs is checked before anything is allocated.
    pub fn new_within(
        inst: &Instance,
        params: &AsParams,
        seed: u64,
        deadline: &Deadline,
    ) -> Result<Option<Self>, String> {
        params.check()?;
        let n = inst.n();
        if n > MAX_AS_CITIES {
            return Err(format!(
                "Ant System keeps n x n matrices; {n} cities exceed its maximum {MAX_AS_CITIES}"
            ));
        }
        let m = params.ants.unwrap_or(n);
        if m.checked_mul(n).is_none_or(|cells| cells > MAX_TOUR_CELLS) {
            return Err(format!(
                "{m} ants x {n} cities exceed the {MAX_TOUR_CELLS} tour cells one iteration \
                 may hold (2 GiB); use at most {} ants",
                MAX_TOUR_CELLS / n
            ));
        }
        crate::memory::check(
            Self::memory_bytes(n, m, params.candidates.min(n)),
            &format!("the Ant System's n x n matrices for {n} cities and {m} ants"),
        )?;
        if deadline.timed_out() {
            return Ok(None);
        }
        // Each n x n step reads the clock per row: at rl11849 the matrices take seconds, and
        // a limit that ends inside one must not wait for its end.
        let stop = || deadline.timed_out();
        let Some(dist) = inst.distance_matrix_until(&stop) else {
            return Ok(None);
        };
        // Coordinates: by k-d tree (the same lists in O(n log n)); else from the matrix.
        let candidates = match inst.edge_weight_type {
            super::distance::EdgeWeightType::Geo | super::distance::EdgeWeightType::Explicit => {
                CandidateLists::from_matrix(&dist, n, params.candidates)
            }
            _ => match CandidateLists::by_rule_until(
                inst,
                params.candidates,
                super::candidates::ListRule::Nearest,
                &stop,
            ) {
                Some(lists) => lists,
                None => return Ok(None),
            },
        };
        if deadline.timed_out() {
            return Ok(None);
        }
        let Some(nn_tour) = nearest_neighbour_tour_until(&dist, n, 0, &stop) else {
            return Ok(None);
        };
        let nn_length = length(&dist, n, &nn_tour).max(1);
        if deadline.timed_out() {
            return Ok(None);
        }
        let tau0 = match params.initial {
            InitialPheromone::Book => m as f64 / nn_length as f64,
            InitialPheromone::Acotsp => 1.0 / (params.rho * nn_length as f64),
        };
        let beta = params.beta;
        let mut eta_beta = vec![0.0f64; n * n];
        let built = super::instance::fill_rows_until(&mut eta_beta, n, &stop, |i, row| {
            for (e, &d) in row.iter_mut().zip(&dist[i * n..(i + 1) * n]) {
                let eta = 1.0 / (d as f64 + 0.1);
                *e = if beta == 2.0 {
                    eta * eta
                } else {
                    eta.powf(beta)
                };
            }
        });
        if !built {
            return Ok(None);
        }
        let mut state = AntSystem {
            n,
            m,
            params: *params,
            seed,
            dist,
            candidates,
            eta_beta,
            pheromone: vec![tau0; n * n],
            choice_info: vec![0.0; n * n],
            iteration: 0,
            tours: Vec::new(),
            lengths: Vec::new(),
            best: None,
            nn_length,
            nn_tour,
        };
        if !state.compute_choice_info_until(&stop) {
            return Ok(None);
        }
        Ok(Some(state))
    }

    /// The best tour so far, else the nearest-neighbour tour the trails started from: what a
    /// run returns when its time ends before an iteration finishes.
    pub fn best_or_start(&mut self) -> (i64, Vec<usize>) {
        match self.best.take() {
            Some(best) => best,
            None => (
                length(&self.dist, self.n, &self.nn_tour),
                self.nn_tour.clone(),
            ),
        }
    }

    pub fn ants(&self) -> usize {
        self.m
    }

    pub fn candidates(&self) -> &CandidateLists {
        &self.candidates
    }

    /// The n x n distance matrix, row-major.
    pub fn dist(&self) -> &[i64] {
        &self.dist
    }

    /// Moves to the next iteration's random streams, for drivers (MAX-MIN AS) that run the
    /// phases themselves instead of [`AntSystem::iterate`].
    pub fn advance(&mut self) {
        self.iteration += 1;
    }

    /// `choice_info = tau^alpha * eta^beta` for every pair.
    pub fn compute_choice_info(&mut self) {
        self.compute_choice_info_until(&|| false);
    }

    /// [`Self::compute_choice_info`], reading `stop` before each row; false when it said stop
    /// (the rows not reached keep their old values: the caller ends its run).
    pub fn compute_choice_info_until(&mut self, stop: &(dyn Fn() -> bool + Sync)) -> bool {
        let (alpha, n) = (self.params.alpha, self.n);
        super::instance::fill_rows_until(&mut self.choice_info, n, stop, |i, row| {
            let (tau, eb) = (
                &self.pheromone[i * n..(i + 1) * n],
                &self.eta_beta[i * n..(i + 1) * n],
            );
            for ((c, &tau), &eb) in row.iter_mut().zip(tau).zip(eb) {
                let t = if alpha == 1.0 { tau } else { tau.powf(alpha) };
                *c = t * eb;
            }
        })
    }

    /// Phase 1: every ant builds a tour (in parallel on the current rayon pool).
    pub fn construct(&mut self) {
        let never = crate::run::Budget::default().start(u64::MAX);
        self.construct_within(&never);
    }

    /// [`AntSystem::construct`] under a deadline: ants that have not started when the clock
    /// runs out build nothing, and the iteration is incomplete (false; `tours` is then
    /// left empty). One ant's tour on 10,000 cities takes milliseconds; a whole iteration
    /// of 10,000 ants takes seconds, which used to overrun time limits.
    pub fn construct_within(&mut self, deadline: &Deadline) -> bool {
        let base = self.iteration * self.m as u64;
        let tours: Option<Vec<Vec<usize>>> = (0..self.m)
            .into_par_iter()
            .map(|ant| (!deadline.timed_out()).then(|| self.construct_one(base + ant as u64)))
            .collect();
        let Some(tours) = tours else {
            self.tours.clear();
            self.lengths.clear();
            return false;
        };
        self.lengths = tours
            .iter()
            .map(|t| length(&self.dist, self.n, t))
            .collect();
        self.tours = tours;
        true
    }

    fn construct_one(&self, stream: u64) -> Vec<usize> {
        let n = self.n;
        let mut rng = stream_rng(self.seed, stream);
        let mut visited = vec![false; n];
        let mut tour = Vec::with_capacity(n);
        let mut weights = vec![0.0f64; self.candidates.k()];
        let mut current = rng.random_range(0..n);
        visited[current] = true;
        tour.push(current);
        for _ in 1..n {
            let row = &self.choice_info[current * n..(current + 1) * n];
            let list = self.candidates.of(current);
            let mut sum = 0.0;
            for (w, &j) in weights.iter_mut().zip(list) {
                *w = if visited[j] { 0.0 } else { row[j] };
                sum += *w;
            }
            let next = if sum > 0.0 {
                let r = rng.random::<f64>() * sum;
                let mut i = 0;
                let mut partial = weights[0];
                while partial <= r {
                    i += 1;
                    if i == weights.len() {
                        break;
                    }
                    partial += weights[i];
                }
                if i == weights.len() {
                    best_of(list.iter().copied(), row, &visited)
                } else {
                    list[i]
                }
            } else {
                best_of(0..n, row, &visited)
            };
            visited[next] = true;
            tour.push(next);
            current = next;
        }
        tour
    }

    /// Phases 2 and 3: evaporation, then deposit of 1 / C_k by every ant in ant order.
    pub fn update_pheromone(&mut self) {
        let keep = 1.0 - self.params.rho;
        self.pheromone.par_iter_mut().for_each(|t| *t *= keep);
        let n = self.n;
        for (tour, &len) in self.tours.iter().zip(&self.lengths) {
            let d = 1.0 / len.max(1) as f64;
            let mut previous = tour[n - 1];
            for &c in tour {
                self.pheromone[previous * n + c] += d;
                self.pheromone[c * n + previous] = self.pheromone[previous * n + c];
                previous = c;
            }
        }
    }

    /// One full iteration; returns the best length of this iteration.
    pub fn iterate(&mut self) -> i64 {
        let never = crate::run::Budget::default().start(u64::MAX);
        self.iterate_within(&never)
            .expect("a deadline without a clock never runs out")
    }

    /// [`AntSystem::iterate`], abandoned (`None`, nothing changed but the random streams
    /// not drawn) when the deadline runs out during construction.
    pub fn iterate_within(&mut self, deadline: &Deadline) -> Option<i64> {
        if !self.construct_within(deadline) {
            return None;
        }
        let (k, &len) = self
            .lengths
            .iter()
            .enumerate()
            .min_by_key(|&(k, &l)| (l, k))
            .expect("at least one ant");
        if self.best.as_ref().is_none_or(|(b, _)| len < *b) {
            self.best = Some((len, self.tours[k].clone()));
        }
        self.update_pheromone();
        // Cut short, the next iteration's weights are stale, but the deadline ends the run
        // before any ant reads them.
        self.compute_choice_info_until(&|| deadline.timed_out());
        self.iteration += 1;
        Some(len)
    }
}

/// The unvisited city of `cities` with the largest choice_info (first on ties).
fn best_of(cities: impl Iterator<Item = usize>, row: &[f64], visited: &[bool]) -> usize {
    let mut best = (f64::NEG_INFINITY, usize::MAX);
    for j in cities {
        if !visited[j] && row[j] > best.0 {
            best = (row[j], j);
        }
    }
    if best.1 == usize::MAX {
        // Only unvisited cities with choice_info -inf/NaN remain (cannot happen with finite
        // pheromones); take the first unvisited one.
        best.1 = visited.iter().position(|&v| !v).unwrap_or(0);
    }
    best.1
}

/// Ant System for the budget's iterations (default [`DEFAULT_AS_ITERATIONS`]); the best
/// tour over all iterations.
pub fn ant_system(
    inst: &Instance,
    params: &AsParams,
    options: &RunOptions,
) -> Result<Outcome, String> {
    let deadline = options.budget.start(DEFAULT_AS_ITERATIONS);
    with_threads(options.threads, || {
        let Some(mut state) = AntSystem::new_within(inst, params, options.seed, &deadline)? else {
            // The time ran out while the matrices were built: the curve's tour is a start.
            return Ok(super::curve::curve_tour(inst));
        };
        let mut iterations = 0u64;
        while !deadline.reached(iterations) {
            if state.iterate_within(&deadline).is_none() {
                break;
            }
            iterations += 1;
            if let Some((length, _)) = &state.best {
                deadline.offer(*length);
            }
        }
        let (objective, solution) = state.best_or_start();
        debug_assert_eq!(objective, inst.tour_length(&solution));
        Ok(Outcome {
            solution,
            objective,
            iterations,
            evaluations: iterations * state.m as u64 * inst.n() as u64,
        })
    })
}
