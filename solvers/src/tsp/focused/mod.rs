//! Focused ant colony optimisation (`--algo focused`): ants change a source tour in a bounded
//! number of edges instead of building tours from scratch, after the idea of Skinderowicz's
//! Focused ACO (2022). This is mats' own implementation of the idea (no code was taken from
//! the public C++ sources); where it differs is listed in docs/tsp-gpu.md.
//!
//! One iteration, for each of `ants` ants in parallel (rayon):
//! 1. **Source**: the tour that deposited last ([`SourceRule::Iteration`]: the iteration's
//!    best, at times the best so far), the best tour so far ([`SourceRule::Best`]) or the
//!    ant's own previous tour ([`SourceRule::Own`]).
//! 2. **Bounded construction** ([`construct`]): from a random city the ant walks, choosing
//!    the next city by the random-proportional rule `tau * eta^beta` over its unvisited
//!    candidates (plus the source successor when it is not in the list: pheromone tau_min);
//!    every step that leaves the source tour's edges adds a *new edge*. After
//!    `min_new_edges` of them the rest of the tour is the source's order from the current
//!    city on, skipping visited cities. The choices cost O(steps x k); the tour array copy
//!    is one O(n) pass (no distance is computed in it).
//! 3. **Focused local search** ([`tour::local_search`]): 2-opt, then Or-opt (segments of
//!    1-3 cities, either way round), on the first `ls_neighbours` list entries, from a queue
//!    that holds only the end cities of the changed edges (the don't-look bits of all other
//!    cities stay set); improving moves push their end cities.
//! 4. **Pheromone** (MAX-MIN): only the n x k candidate edges carry pheromone; an edge
//!    outside the lists reads tau_min. Evaporation `tau = max((1 - rho) tau, tau_min)` over
//!    n x k, then the iteration's best (or, on ACOTSP's schedule, the best so far) deposits
//!    `1 / C` on its edges that are in the lists, capped at tau_max = 1 / (rho C_best).
//!    tau_min = tau_max / (2k) (see [`trail_limits`]: a source edge must stay likely but the
//!    others possible, or the walk to `min_new_edges` new edges takes ~n steps).
//!
//! Memory is O(n k + (threads + ants) n): [`memory_need`] is checked before any allocation
//! and a request that does not fit is refused naming the need.

pub mod tour;

use std::sync::Mutex;

use rand::Rng;
use rayon::prelude::*;

use super::candidates::{CandidateLists, ListRule};
use super::instance::Instance;
use crate::run::{stream_rng, with_threads, Outcome, RunOptions, SolverRng};
use tour::{local_optimum, local_search, ActiveQueue, LsStats, Neighbours, Tour};

/// Iterations when the budget names none.
pub const DEFAULT_FOCUSED_ITERATIONS: u64 = 2000;

/// Where an ant's construction starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceRule {
    /// The best tour found so far (all ants).
    Best,
    /// The tour that deposited pheromone in the previous iteration: the iteration's best,
    /// or with probability 1/100 the best so far (Skinderowicz's rule): the colony can
    /// move through worse tours.
    #[default]
    Iteration,
    /// The ant's own previous tour (kept when the ant improves it); ants x n memory.
    Own,
}

impl SourceRule {
    pub fn name(self) -> &'static str {
        match self {
            SourceRule::Best => "best",
            SourceRule::Iteration => "iteration",
            SourceRule::Own => "own",
        }
    }

    pub fn from_name(s: &str) -> Result<Self, String> {
        match s {
            "best" => Ok(SourceRule::Best),
            "iteration" => Ok(SourceRule::Iteration),
            "own" => Ok(SourceRule::Own),
            _ => Err(format!(
                "unknown source tour rule {s:?}; known: iteration, best, own"
            )),
        }
    }
}

/// Parameters of [`focused`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FocusedParams {
    /// Ants per iteration.
    pub ants: usize,
    /// Candidate list length (construction and pheromone).
    pub candidates: usize,
    /// List entries the local search tries per city (<= candidates).
    pub ls_neighbours: usize,
    /// New edges (not in the source tour) each construction makes before copying the rest.
    pub min_new_edges: usize,
    pub source: SourceRule,
    /// Or-opt after 2-opt.
    pub or_opt: bool,
    /// Nearest or quadrant candidate lists (default: quadrants on clustered instances).
    pub lists: ListRule,
    pub alpha: f64,
    pub beta: f64,
    pub rho: f64,
    /// Bytes the run may use; `None`: the machine's available memory (Linux MemAvailable),
    /// unchecked where that is unknown.
    pub memory_limit: Option<u64>,
}

impl Default for FocusedParams {
    fn default() -> Self {
        FocusedParams {
            ants: 32,
            candidates: 16,
            ls_neighbours: 10,
            min_new_edges: 8,
            source: SourceRule::Best,
            or_opt: true,
            lists: ListRule::Auto,
            alpha: 1.0,
            beta: 2.0,
            rho: 0.1,
            memory_limit: None,
        }
    }
}

impl FocusedParams {
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("ants", self.ants),
            ("candidates", self.candidates),
            ("ls_neighbours", self.ls_neighbours),
            ("min_new_edges", self.min_new_edges),
        ] {
            if v == 0 {
                return Err(format!("parameter `{name}` must be at least 1"));
            }
        }
        if self.ants > 1 << 20 {
            return Err(format!(
                "parameter `ants` must be at most 2^20, found {}",
                self.ants
            ));
        }
        if self.candidates > 256 {
            return Err(format!(
                "parameter `candidates` must be at most 256, found {}",
                self.candidates
            ));
        }
        if self.ls_neighbours > self.candidates {
            return Err(format!(
                "parameter `ls_neighbours` ({}) must not exceed `candidates` ({})",
                self.ls_neighbours, self.candidates
            ));
        }
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("parameter `{name}` must be >= 0, found {v}"));
            }
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

/// Bytes a run on `n` cities needs at its peak (an upper estimate): coordinates and the
/// k-d tree's build (~100 n), candidate lists (8 n k while built, 4 n k kept), pheromone and
/// heuristic (16 n k), the best tour (8 n), per thread an ant's scratch (~29 n), per ant the
/// returned tour (4 n, and 4 n more for its own source tour with [`SourceRule::Own`]).
pub fn memory_need(n: usize, params: &FocusedParams, threads: usize) -> u64 {
    let (n, k) = (
        n as u64,
        params.candidates.min(n.saturating_sub(1)).max(1) as u64,
    );
    let ants = params.ants as u64;
    let own = if params.source == SourceRule::Own {
        4
    } else {
        0
    };
    let fixed = 100 * n + 28 * n * k + 16 * n;
    let per_thread = 29 * n;
    let per_ant = (4 + own) * n;
    (fixed + threads.max(1) as u64 * per_thread + ants * per_ant + (1 << 20)).max(1)
}

/// MemAvailable from /proc/meminfo, in bytes (None where unreadable).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Refuses a run that does not fit, before anything is allocated.
pub fn check_memory(n: usize, params: &FocusedParams, threads: usize) -> Result<u64, String> {
    let need = memory_need(n, params, threads);
    let (limit, what) = match params.memory_limit {
        Some(l) => (Some(l), "the memory limit"),
        None => (available_memory(), "available (MemAvailable)"),
    };
    if let Some(limit) = limit {
        if need > limit {
            return Err(format!(
                "focused ACO on {n} cities needs {} ({} ants, {} candidates, {} threads) \
                 but {} is {}; use fewer ants or candidates",
                mib(need),
                params.ants,
                params.candidates,
                threads.max(1),
                what,
                mib(limit)
            ));
        }
    }
    Ok(need)
}

/// Whether the best-so-far tour deposits this iteration (else the iteration's best): for the
/// `iteration` source rule 1 time in 100 (a draw of `coin`), else ACOTSP's schedule, every
/// u_gb-th iteration by how long the best has not improved.
pub fn deposits_best(
    rule: SourceRule,
    iteration: u64,
    since_improvement: u64,
    coin: &mut SolverRng,
) -> bool {
    match rule {
        SourceRule::Iteration => coin.random::<f64>() < 0.01,
        _ => iteration % super::mmas::best_so_far_period(since_improvement) == 0,
    }
}

/// (tau_min, tau_max) for a best tour of length `best` and lists of `k`.
pub fn trail_limits(rho: f64, best: i64, k: usize) -> (f64, f64) {
    let max = 1.0 / (rho * best.max(1) as f64);
    (max / (2.0 * k.max(1) as f64), max)
}

/// The colony's shared state: lists, heuristic and pheromone of the n x k candidate edges.
pub struct Colony<'a> {
    pub inst: &'a Instance,
    pub k: usize,
    /// n x k candidate lists, nearest first.
    pub cand: Vec<u32>,
    /// eta^beta per candidate slot, eta = 1 / (d + 0.1).
    pub heur: Vec<f64>,
    /// Pheromone per candidate slot; edge (a, b) lives in a's row and, when a is in b's
    /// list, in b's row too (both updated alike).
    pub tau: Vec<f64>,
    pub tau_min: f64,
    pub tau_max: f64,
    pub alpha: f64,
    pub beta: f64,
}

impl<'a> Colony<'a> {
    /// A colony on nearest-neighbour lists of `k` cities.
    pub fn new(inst: &'a Instance, k: usize, alpha: f64, beta: f64) -> Self {
        Self::with_lists(inst, CandidateLists::from_instance(inst, k), alpha, beta)
    }

    /// A colony on the given candidate lists.
    pub fn with_lists(inst: &'a Instance, lists: CandidateLists, alpha: f64, beta: f64) -> Self {
        let k = lists.k();
        let cand: Vec<u32> = lists.as_slice().iter().map(|&c| c as u32).collect();
        drop(lists);
        let n = inst.n();
        let heur: Vec<f64> = (0..n * k)
            .into_par_iter()
            .map(|slot| {
                let d = inst.dist(slot / k, cand[slot] as usize) as f64;
                (1.0 / (d + 0.1)).powf(beta)
            })
            .collect();
        Colony {
            inst,
            k,
            cand,
            heur,
            tau: vec![1.0; n * k],
            tau_min: 0.0,
            tau_max: 1.0,
            alpha,
            beta,
        }
    }

    #[inline]
    fn slot(&self, a: u32, b: u32) -> Option<usize> {
        let row = a as usize * self.k;
        self.cand[row..row + self.k]
            .iter()
            .position(|&c| c == b)
            .map(|j| row + j)
    }

    /// Evaporation clamped at tau_min, then `amount` on every list edge of `order`, capped
    /// at tau_max.
    pub fn update(&mut self, rho: f64, order: &[u32], amount: f64) {
        let (keep, lo) = (1.0 - rho, self.tau_min);
        self.tau
            .par_iter_mut()
            .for_each(|t| *t = (*t * keep).max(lo));
        let mut prev = *order.last().expect("a tour has cities");
        for &c in order {
            for (x, y) in [(prev, c), (c, prev)] {
                if let Some(s) = self.slot(x, y) {
                    self.tau[s] = (self.tau[s] + amount).min(self.tau_max);
                }
            }
            prev = c;
        }
    }

    /// Choice weight of slot `s`.
    #[inline]
    fn weight(&self, s: usize) -> f64 {
        if self.alpha == 1.0 {
            self.tau[s] * self.heur[s]
        } else {
            self.tau[s].powf(self.alpha) * self.heur[s]
        }
    }

    /// Choice weight of an edge outside the lists (pheromone tau_min).
    fn outside_weight(&self, a: u32, b: u32) -> f64 {
        let d = self.inst.dist(a as usize, b as usize) as f64;
        self.tau_min.powf(self.alpha) * (1.0 / (d + 0.1)).powf(self.beta)
    }
}

/// One thread's reusable buffers (O(n) each).
pub struct Scratch {
    pub tour: Tour,
    pub source: Tour,
    visited: Vec<u32>,
    stamp: u32,
    route: Vec<u32>,
    weights: Vec<f64>,
    pub queue: ActiveQueue,
    changed: Vec<u32>,
}

impl Scratch {
    pub fn new(n: usize, k: usize) -> Self {
        Scratch {
            tour: Tour::new(Vec::with_capacity(n)),
            source: Tour::new(Vec::new()),
            visited: vec![0; n],
            stamp: 0,
            route: Vec::with_capacity(n),
            weights: vec![0.0; k + 1],
            queue: ActiveQueue::new(n),
            changed: Vec::new(),
        }
    }
}

/// What one construction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Construction {
    /// Probabilistic steps taken.
    pub steps: usize,
    /// Edges of the new tour not in the source (counted exactly).
    pub new_edges: usize,
    /// Exact length of the new tour.
    pub length: i64,
}

/// Builds `scratch.tour` from `source` (length `source_len`): a bounded random walk that
/// leaves the source's edges `min_new_edges` times, then the source's order; the end cities
/// of every new edge go into `scratch.queue`.
pub fn construct(
    colony: &Colony,
    source: &Tour,
    source_len: i64,
    min_new_edges: usize,
    rng: &mut SolverRng,
    scratch: &mut Scratch,
) -> Construction {
    let n = source.n();
    let k = colony.k;
    let Scratch {
        tour,
        visited,
        stamp,
        route,
        weights,
        queue,
        changed,
        ..
    } = scratch;
    *stamp = stamp.wrapping_add(1);
    if *stamp == 0 {
        visited.fill(0);
        *stamp = 1;
    }
    let mark = *stamp;
    route.clear();
    let start = rng.random_range(0..n as u32);
    route.push(start);
    visited[start as usize] = mark;
    let (mut cur, mut made, mut steps) = (start, 0usize, 0usize);
    while route.len() < n && made < min_new_edges {
        steps += 1;
        let (succ, pred) = (source.succ(cur), source.pred(cur));
        let row = cur as usize * k;
        let mut total = 0.0;
        let mut succ_listed = false;
        for (j, slot) in weights[..k].iter_mut().enumerate() {
            let c = colony.cand[row + j];
            succ_listed |= c == succ;
            let w = if visited[c as usize] == mark {
                0.0
            } else {
                colony.weight(row + j)
            };
            *slot = w;
            total += w;
        }
        weights[k] = if !succ_listed && visited[succ as usize] != mark {
            colony.outside_weight(cur, succ)
        } else {
            0.0
        };
        total += weights[k];
        let next = if total > 0.0 {
            let mut r = rng.random::<f64>() * total;
            let mut pick = None;
            for (j, &w) in weights.iter().enumerate() {
                if w > 0.0 {
                    pick = Some(j);
                    r -= w;
                    if r <= 0.0 {
                        break;
                    }
                }
            }
            // Rounding can run past the last positive weight: `pick` is then that one.
            match pick.expect("total > 0 means some weight is positive") {
                j if j == k => succ,
                j => colony.cand[row + j],
            }
        } else {
            // Every candidate is visited: the next unvisited city along the source.
            let mut x = succ;
            while visited[x as usize] == mark {
                x = source.succ(x);
            }
            x
        };
        if next != succ && next != pred {
            made += 1;
        }
        visited[next as usize] = mark;
        route.push(next);
        cur = next;
    }
    // The rest in the source's order from `cur` on (sequential reads of the source array).
    if route.len() < n {
        let at = source.pos[cur as usize] as usize;
        for step in 1..n {
            let x = source.order[(at + step) % n];
            if visited[x as usize] != mark {
                visited[x as usize] = mark;
                route.push(x);
            }
        }
    }
    debug_assert_eq!(route.len(), n);
    tour.assign(route);
    // Changed cities: the ends of the edges not in the source. Only the walked prefix, the
    // junctions where the copy skipped visited cities and the closing edge can hold one;
    // checking every edge of the route prefix and every copied edge is one O(n) pass of
    // adjacency tests that touches no distance.
    changed.clear();
    let mark_edge = |a: u32, b: u32, queue: &mut ActiveQueue, changed: &mut Vec<u32>| {
        if !source.adjacent(a, b) {
            for x in [a, b] {
                if queue.push_new(x) {
                    changed.push(x);
                }
            }
        }
    };
    let walked = steps.min(n - 1);
    for i in 0..walked {
        mark_edge(route[i], route[i + 1], queue, changed);
    }
    let mut prev = route[walked];
    for &x in &route[walked + 1..] {
        // Consecutive source cities are adjacent: test only where the copy jumped.
        if source.succ(prev) != x {
            mark_edge(prev, x, queue, changed);
        }
        prev = x;
    }
    mark_edge(route[n - 1], route[0], queue, changed);
    // Exact length: the source's, minus its edges the new tour lost, plus the new edges
    // (each counted from its lower end; both ends of such an edge are in `changed`).
    let d = |a: u32, b: u32| colony.inst.dist(a as usize, b as usize);
    let mut length = source_len;
    let mut new_edges = 0;
    for &a in changed.iter() {
        for b in [source.succ(a), source.pred(a)] {
            if a < b && !tour.adjacent(a, b) {
                length -= d(a, b);
            }
        }
        for b in [tour.succ(a), tour.pred(a)] {
            if a < b && !source.adjacent(a, b) {
                length += d(a, b);
                new_edges += 1;
            }
        }
    }
    Construction {
        steps,
        new_edges,
        length,
    }
}

/// A first tour: nearest neighbour on the candidate lists, falling back to the next
/// unvisited city along a Hilbert curve (coordinate instances; index order otherwise), so it
/// costs O(n k + n log n), never O(n^2).
pub fn initial_tour(inst: &Instance, cand: &[u32], k: usize) -> Vec<u32> {
    let n = inst.n();
    let order = super::curve::hilbert_order(inst);
    let mut visited = vec![false; n];
    let mut tour = Vec::with_capacity(n);
    let mut cursor = 0;
    let mut cur = order[0];
    visited[cur as usize] = true;
    tour.push(cur);
    while tour.len() < n {
        let row = cur as usize * k;
        let next = cand[row..row + k]
            .iter()
            .copied()
            .find(|&c| !visited[c as usize])
            .unwrap_or_else(|| {
                while visited[order[cursor] as usize] {
                    cursor += 1;
                }
                order[cursor]
            });
        visited[next as usize] = true;
        tour.push(next);
        cur = next;
    }
    tour
}

/// Focused ACO for the budget (default [`DEFAULT_FOCUSED_ITERATIONS`] iterations); the best
/// tour found.
pub fn focused(
    inst: &Instance,
    params: &FocusedParams,
    options: &RunOptions,
) -> Result<Outcome, String> {
    params.check()?;
    let threads = if options.threads == 0 {
        std::thread::available_parallelism().map_or(1, |t| t.get())
    } else {
        options.threads.min(crate::run::MAX_THREADS)
    };
    check_memory(inst.n(), params, threads)?;
    let deadline = options.budget.start(DEFAULT_FOCUSED_ITERATIONS);
    with_threads(threads, || {
        let n = inst.n();
        let stop = || deadline.timed_out();
        // The setup reads the clock too: 200,000 cities' lists and heuristic take about a
        // second. Cut short, the answer is the cities in Hilbert-curve order, a whole tour.
        let start_only = || {
            let solution: Vec<usize> = super::curve::hilbert_order(inst)
                .iter()
                .map(|&c| c as usize)
                .collect();
            let objective = inst.tour_length(&solution);
            deadline.offer(objective);
            Ok(Outcome {
                solution,
                objective,
                iterations: 0,
                evaluations: 0,
            })
        };
        let Some(lists) =
            CandidateLists::by_rule_until(inst, params.candidates, params.lists, &stop)
        else {
            return start_only();
        };
        let mut colony = Colony::with_lists(inst, lists, params.alpha, params.beta);
        if stop() {
            return start_only();
        }
        let k = colony.k;
        let width = params.ls_neighbours.min(k);
        // The first tour, brought to a local optimum over all cities.
        let mut best = Tour::new(initial_tour(inst, &colony.cand, k));
        let mut stats = LsStats::default();
        {
            let nb = Neighbours {
                lists: &colony.cand,
                k,
                width,
            };
            let mut queue = ActiveQueue::new(n);
            local_optimum(
                &mut best,
                inst,
                &nb,
                params.or_opt,
                &mut queue,
                &mut stats,
                &stop,
            );
        }
        let mut best_len = best.length(inst);
        deadline.offer(best_len);
        (colony.tau_min, colony.tau_max) = trail_limits(params.rho, best_len, k);
        colony.tau.fill(colony.tau_max);
        // The shared source tour of the `best` and `iteration` rules.
        let mut source = best.clone();
        let mut source_len = best_len;
        let mut coin = stream_rng(options.seed, u64::MAX);
        let pool: Vec<Mutex<Scratch>> = (0..threads)
            .map(|_| Mutex::new(Scratch::new(n, k)))
            .collect();
        let mut own: Vec<(i64, Vec<u32>)> = match params.source {
            SourceRule::Best | SourceRule::Iteration => Vec::new(),
            SourceRule::Own => vec![(best_len, best.order.clone()); params.ants],
        };
        let (mut iteration, mut since_improvement) = (0u64, 0u64);
        let (mut constructions, mut moves) = (0u64, stats.two_opt + stats.or_opt);
        while !deadline.reached(iteration) {
            let colony_ref = &colony;
            let (source_ref, own_ref, pool_ref) = (&source, &own, &pool);
            let results: Vec<Option<(i64, Vec<u32>, u64)>> = (0..params.ants)
                .into_par_iter()
                .map(|a| {
                    // Past the deadline the other ants are skipped (a million ants of one
                    // iteration ran 8 s past a 0.5 s limit); ant 0 always runs.
                    if a > 0 && stop() {
                        return None;
                    }
                    let slot = rayon::current_thread_index().unwrap_or(0) % pool_ref.len();
                    let mut guard = pool_ref[slot].lock().unwrap_or_else(|e| e.into_inner());
                    let scratch = &mut *guard;
                    let mut rng = stream_rng(options.seed, ((iteration + 1) << 24) | a as u64);
                    let mut src = std::mem::replace(&mut scratch.source, Tour::new(Vec::new()));
                    let (source, source_len) = match params.source {
                        SourceRule::Best | SourceRule::Iteration => (source_ref, source_len),
                        SourceRule::Own => {
                            src.assign(&own_ref[a].1);
                            (&src, own_ref[a].0)
                        }
                    };
                    let built = construct(
                        colony_ref,
                        source,
                        source_len,
                        params.min_new_edges,
                        &mut rng,
                        scratch,
                    );
                    scratch.source = src;
                    let nb = Neighbours {
                        lists: &colony_ref.cand,
                        k,
                        width,
                    };
                    let mut ls = LsStats::default();
                    let Scratch { tour, queue, .. } = scratch;
                    let delta = local_search(tour, inst, &nb, params.or_opt, queue, &mut ls, &stop);
                    Some((
                        built.length + delta,
                        tour.order.clone(),
                        ls.two_opt + ls.or_opt,
                    ))
                })
                .collect();
            let cut = results.iter().any(Option::is_none);
            let results: Vec<(i64, Vec<u32>, u64)> = results.into_iter().flatten().collect();
            constructions += results.len() as u64;
            moves += results.iter().map(|r| r.2).sum::<u64>();
            let (ib, ib_len) = results
                .iter()
                .enumerate()
                .map(|(a, r)| (a, r.0))
                .min_by_key(|&(a, l)| (l, a))
                .expect("at least one ant");
            if ib_len < best_len {
                best_len = ib_len;
                best.assign(&results[ib].1);
                deadline.offer(best_len);
                (colony.tau_min, colony.tau_max) = trail_limits(params.rho, best_len, k);
                since_improvement = 0;
            } else {
                since_improvement += 1;
            }
            if cut {
                // The deadline fell inside the iteration: its best ant is kept, and the
                // colony is not updated from part of it.
                iteration += 1;
                break;
            }
            let use_best = deposits_best(params.source, iteration, since_improvement, &mut coin);
            let (len, order) = if use_best {
                (best_len, best.order.as_slice())
            } else {
                (ib_len, results[ib].1.as_slice())
            };
            colony.update(params.rho, order, 1.0 / len.max(1) as f64);
            match params.source {
                SourceRule::Best => {
                    if source_len != best_len {
                        source.assign(&best.order);
                        source_len = best_len;
                    }
                }
                SourceRule::Iteration => {
                    source.assign(order);
                    source_len = len;
                }
                SourceRule::Own => {}
            }
            if params.source == SourceRule::Own {
                for (a, (len, order, _)) in results.into_iter().enumerate() {
                    if len < own[a].0 {
                        own[a] = (len, order);
                    }
                }
            }
            iteration += 1;
        }
        let solution: Vec<usize> = best.order.iter().map(|&c| c as usize).collect();
        let objective = inst.tour_length(&solution);
        debug_assert_eq!(objective, best_len);
        Ok(Outcome {
            solution,
            objective,
            iterations: iteration,
            evaluations: constructions + moves,
        })
    })
}
