//! Iterated greedy with a best-improvement local search over the whole insertion
//! neighbourhood: the walks of `ig-grid` (`kernels/pfsp/ig-grid.cu`).
//!
//! The IG of Ruiz & Stützle ([`super::ig`]) improves a sequence by taking its jobs one by one
//! and keeping the first improving reinsertion. Here each local-search step evaluates every
//! job's removal and best reinsertion at once (n x n positions, O(n^2 m)) and takes the best
//! move if it lowers the makespan; the search ends where no move does. That step is what the
//! GPU spreads over the whole chip (one block per job), so one walk goes as deep as the chip
//! allows instead of as deep as one SM allows, which is what the large instances reward
//! (docs/pfsp-gpu.md: at 800 x 60 an ig-block walk makes fewer iterations than a CPU core).
//!
//! The walks (destruction, reconstruction, acceptance) run here, on the host, against a
//! [`Neighbourhood`]: [`CpuNeighbourhood`] is the reference, `pfsp::gpu` supplies the GPU one.
//! Both order moves by (makespan, from, to), so a seeded run takes the same moves on either,
//! which the GPU tests check.

use rand::Rng;

use super::eval::Insertion;
use super::instance::Instance;
use super::neh::neh;
use crate::run::{stream_rng, Outcome, RunOptions, SolverRng};

/// Each walk's best sequence and its makespan, as [`run_from`] returns them.
pub type WalkBests = Vec<(Vec<usize>, i64)>;

/// Iterations per walk when the budget gives neither iterations nor a time limit.
pub const DEFAULT_GRID_ITERATIONS: u64 = 200;

/// One insertion move of a sequence: the job at `from` taken out and put back at `to` (a
/// position of the sequence without it), and the makespan that gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct InsertionMove {
    pub makespan: i64,
    pub from: usize,
    pub to: usize,
}

/// Evaluates the whole insertion neighbourhood of several sequences (of one instance) at once.
pub trait Neighbourhood {
    type Error;
    /// For each sequence, the move of least makespan, ties to the least `from`, then `to`.
    fn best_moves(&mut self, sequences: &[&[usize]]) -> Result<Vec<InsertionMove>, Self::Error>;
}

/// The CPU reference: Taillard's acceleration per removed job.
pub struct CpuNeighbourhood<'a> {
    inst: &'a Instance,
    insertion: Insertion,
    shorter: Vec<usize>,
}

impl<'a> CpuNeighbourhood<'a> {
    pub fn new(inst: &'a Instance) -> Self {
        CpuNeighbourhood {
            inst,
            insertion: Insertion::new(),
            shorter: Vec::new(),
        }
    }

    /// The best move of one sequence.
    pub fn best_move(&mut self, sequence: &[usize]) -> InsertionMove {
        let mut best = InsertionMove {
            makespan: i64::MAX,
            from: 0,
            to: 0,
        };
        for from in 0..sequence.len() {
            self.shorter.clear();
            self.shorter.extend_from_slice(&sequence[..from]);
            self.shorter.extend_from_slice(&sequence[from + 1..]);
            let (to, makespan) = self
                .insertion
                .best(self.inst, &self.shorter, sequence[from]);
            best = best.min(InsertionMove { makespan, from, to });
        }
        best
    }
}

impl Neighbourhood for CpuNeighbourhood<'_> {
    type Error = std::convert::Infallible;
    fn best_moves(&mut self, sequences: &[&[usize]]) -> Result<Vec<InsertionMove>, Self::Error> {
        Ok(sequences.iter().map(|s| self.best_move(s)).collect())
    }
}

/// Settings of the walks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridParams {
    /// Independent walks, evaluated together (each step of each walk's local search is one
    /// neighbourhood of the batch).
    pub walks: usize,
    /// Jobs removed per destruction (d).
    pub destruction: usize,
    /// Temperature factor T of the acceptance rule (as [`super::ig`]).
    pub temperature: f64,
}

impl Default for GridParams {
    fn default() -> Self {
        GridParams {
            walks: 4,
            destruction: 4,
            temperature: 0.4,
        }
    }
}

/// One walk: the IG state between local-search steps.
struct Walk {
    rng: SolverRng,
    current: Vec<usize>,
    current_value: i64,
    best: Vec<usize>,
    best_value: i64,
    /// The sequence the local search is improving, and its makespan.
    candidate: Vec<usize>,
    candidate_value: i64,
    /// False while the start's local search runs (no acceptance yet).
    started: bool,
    iterations: u64,
}

/// What a run did besides its outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GridStats {
    /// Neighbourhood evaluations (steps of the batch).
    pub steps: u64,
    /// Improving moves taken, over all walks.
    pub moves: u64,
}

/// Runs the walks against `neighbourhood` under `options.budget` (IG iterations per walk, or a
/// time limit) from NEH; walk w draws from stream w of `options.seed`.
pub fn run<N: Neighbourhood>(
    inst: &Instance,
    params: &GridParams,
    options: &RunOptions,
    neighbourhood: &mut N,
) -> Result<(Outcome, GridStats), N::Error> {
    run_from(inst, params, options, &[], neighbourhood).map(|(o, s, _)| (o, s))
}

/// [`run`] with walk w < `starts.len()` starting from `starts[w]` (a sequence and its
/// makespan, e.g. an island's seed or its own best of the last epoch) instead of NEH; also
/// returns every walk's best.
pub fn run_from<N: Neighbourhood>(
    inst: &Instance,
    params: &GridParams,
    options: &RunOptions,
    starts: &[(Vec<usize>, i64)],
    neighbourhood: &mut N,
) -> Result<(Outcome, GridStats, WalkBests), N::Error> {
    let deadline = options.budget.start(DEFAULT_GRID_ITERATIONS);
    let n = inst.jobs;
    let start = neh(inst);
    let start_value = inst.makespan(&start);
    if n < 2 {
        let outcome = Outcome {
            solution: start.clone(),
            objective: start_value,
            iterations: 0,
            evaluations: 0,
        };
        return Ok((outcome, GridStats::default(), vec![(start, start_value)]));
    }
    let total: i64 = inst.features().total_time;
    let temperature = params.temperature * total as f64 / (n * inst.machines * 10) as f64;
    let destruction = params.destruction.clamp(1, n - 1);
    let mut insertion = Insertion::new();
    let mut walks: Vec<Walk> = (0..params.walks.max(1))
        .map(|w| {
            let (seq, value) = starts
                .get(w)
                .map_or((&start, start_value), |(s, v)| (s, *v));
            Walk {
                rng: stream_rng(options.seed, w as u64),
                current: seq.clone(),
                current_value: value,
                best: seq.clone(),
                best_value: value,
                candidate: seq.clone(),
                candidate_value: value,
                started: false,
                iterations: 0,
            }
        })
        .collect();
    let first_best = walks
        .iter()
        .map(|w| w.best_value)
        .min()
        .unwrap_or(start_value);
    deadline.offer(first_best);
    let mut stats = GridStats::default();
    let mut evaluations = 0u64;
    loop {
        // Walks that have spent their iterations stop; the clock stops them all.
        let active: Vec<usize> = (0..walks.len())
            .filter(|&w| !deadline.reached(walks[w].iterations))
            .collect();
        if active.is_empty() {
            break;
        }
        let sequences: Vec<&[usize]> = active.iter().map(|&w| &walks[w].candidate[..]).collect();
        let moves = neighbourhood.best_moves(&sequences)?;
        stats.steps += 1;
        evaluations += (active.len() * n * n) as u64;
        for (&w, mv) in active.iter().zip(moves) {
            let walk = &mut walks[w];
            if mv.makespan < walk.candidate_value {
                let job = walk.candidate.remove(mv.from);
                walk.candidate.insert(mv.to, job);
                walk.candidate_value = mv.makespan;
                stats.moves += 1;
                continue;
            }
            // A local optimum: accept it or not, then destroy and rebuild for the next one.
            walk.settle(temperature);
            deadline.offer(walk.best_value);
            walk.rebuild(inst, destruction, &mut insertion, &mut evaluations);
        }
        if deadline.timed_out() {
            break;
        }
    }
    let best = walks
        .iter()
        .min_by_key(|w| w.best_value)
        .expect("at least one walk");
    let outcome = Outcome {
        solution: best.best.clone(),
        objective: inst.makespan(&best.best),
        iterations: walks.iter().map(|w| w.iterations).sum(),
        evaluations,
    };
    debug_assert_eq!(outcome.objective, best.best_value);
    let bests = walks.into_iter().map(|w| (w.best, w.best_value)).collect();
    Ok((outcome, stats, bests))
}

impl Walk {
    /// Ruiz-Stützle acceptance of the local optimum in `candidate` (the start's is taken as
    /// it is); the best is kept.
    fn settle(&mut self, temperature: f64) {
        let accept = !self.started
            || self.candidate_value <= self.current_value
            || self.rng.random::<f64>()
                < (-((self.candidate_value - self.current_value) as f64) / temperature).exp();
        if self.started {
            self.iterations += 1;
        }
        self.started = true;
        if accept {
            self.current.clone_from(&self.candidate);
            self.current_value = self.candidate_value;
            if self.current_value < self.best_value {
                self.best.clone_from(&self.current);
                self.best_value = self.current_value;
            }
        }
    }

    /// Destruction (d random jobs out) and reconstruction (each at its first best position)
    /// of the current sequence into `candidate`.
    fn rebuild(
        &mut self,
        inst: &Instance,
        destruction: usize,
        insertion: &mut Insertion,
        evaluations: &mut u64,
    ) {
        self.candidate.clone_from(&self.current);
        let mut removed = Vec::with_capacity(destruction);
        for _ in 0..destruction {
            let position = self.rng.random_range(0..self.candidate.len());
            removed.push(self.candidate.remove(position));
        }
        let mut value = 0;
        for job in removed {
            *evaluations += self.candidate.len() as u64 + 1;
            let (position, v) = insertion.best(inst, &self.candidate, job);
            self.candidate.insert(position, job);
            value = v;
        }
        self.candidate_value = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pfsp::generate;
    use crate::run::Budget;

    fn options(seed: u64, iterations: u64) -> RunOptions {
        RunOptions {
            seed,
            threads: 1,
            budget: Budget::iterations(iterations),
        }
    }

    /// The best move is the least makespan over every (from, to), ties to the least from and
    /// to, as a brute force over all moves finds it.
    #[test]
    fn the_best_move_is_the_brute_forces() {
        for (n, m, seed) in [(2, 3, 1), (7, 4, 2), (12, 5, 3), (20, 10, 4)] {
            let inst = generate(n, m, seed);
            let mut rng = stream_rng(seed as u64, 9);
            let mut seq: Vec<usize> = (0..n).collect();
            for _ in 0..5 {
                rand::seq::SliceRandom::shuffle(&mut seq[..], &mut rng);
                let mut brute = InsertionMove {
                    makespan: i64::MAX,
                    from: 0,
                    to: 0,
                };
                for from in 0..n {
                    for to in 0..n {
                        let mut s = seq.clone();
                        let job = s.remove(from);
                        s.insert(to, job);
                        let mv = InsertionMove {
                            makespan: inst.makespan(&s),
                            from,
                            to,
                        };
                        brute = brute.min(mv);
                    }
                }
                let got = CpuNeighbourhood::new(&inst).best_move(&seq);
                assert_eq!(got, brute, "{n}x{m} {seq:?}");
                // Putting a job back where it was changes nothing: never worse than the sequence.
                assert!(got.makespan <= inst.makespan(&seq));
            }
        }
    }

    /// A seeded run is deterministic, returns a permutation whose makespan is the objective,
    /// and improves on NEH.
    #[test]
    fn a_seeded_run_is_deterministic_and_rescored() {
        let inst = generate(30, 8, 11);
        let params = GridParams {
            walks: 3,
            ..GridParams::default()
        };
        let solve = |seed| {
            run(
                &inst,
                &params,
                &options(seed, 30),
                &mut CpuNeighbourhood::new(&inst),
            )
            .unwrap()
        };
        let (a, stats) = solve(5);
        assert_eq!(solve(5), (a.clone(), stats.clone()));
        crate::permutation::check(&a.solution, 30).unwrap();
        assert_eq!(inst.makespan(&a.solution), a.objective);
        assert_eq!(a.iterations, 90, "30 iterations for each of 3 walks");
        // Every iteration ends with one step that finds no improving move, and the batch
        // evaluates the three walks together.
        assert!(stats.moves > 0 && stats.steps > 30, "{stats:?}");
        let neh_value = inst.makespan(&neh(&inst));
        assert!(
            a.objective < neh_value,
            "{} vs NEH {neh_value}",
            a.objective
        );
    }

    /// Seeded walks start from their seeds (never worse than them) and the others from NEH;
    /// every walk's best comes back, re-scored.
    #[test]
    fn seeded_walks_start_from_their_seeds_and_return_their_bests() {
        let inst = generate(25, 6, 8);
        let params = GridParams {
            walks: 3,
            ..GridParams::default()
        };
        let (first, _, bests) = run_from(
            &inst,
            &params,
            &options(1, 10),
            &[],
            &mut CpuNeighbourhood::new(&inst),
        )
        .unwrap();
        assert_eq!(bests.len(), 3);
        for (seq, value) in &bests {
            assert_eq!(inst.makespan(seq), *value);
        }
        assert_eq!(first.objective, bests.iter().map(|b| b.1).min().unwrap());
        // The best of the first run as the seed of walk 0: the next run cannot end above it.
        let seed = bests.iter().min_by_key(|b| b.1).unwrap().clone();
        let (next, _, again) = run_from(
            &inst,
            &params,
            &options(2, 1),
            std::slice::from_ref(&seed),
            &mut CpuNeighbourhood::new(&inst),
        )
        .unwrap();
        assert!(again[0].1 <= seed.1 && next.objective <= seed.1);
    }

    /// Every move the walks take lowers the makespan by what the neighbourhood said: a wrong
    /// neighbourhood (one that lies about a move) is caught by the re-scored result.
    #[test]
    fn the_walks_take_only_improving_moves() {
        struct Checked<'a>(CpuNeighbourhood<'a>, &'a Instance);
        impl Neighbourhood for Checked<'_> {
            type Error = String;
            fn best_moves(&mut self, seqs: &[&[usize]]) -> Result<Vec<InsertionMove>, String> {
                let moves = self.0.best_moves(seqs).unwrap();
                for (s, mv) in seqs.iter().zip(&moves) {
                    let mut t = s.to_vec();
                    let job = t.remove(mv.from);
                    t.insert(mv.to, job);
                    if self.1.makespan(&t) != mv.makespan {
                        return Err(format!("{mv:?} of {s:?}"));
                    }
                }
                Ok(moves)
            }
        }
        let inst = generate(15, 6, 3);
        let params = GridParams {
            walks: 2,
            destruction: 3,
            temperature: 0.4,
        };
        let (outcome, _) = run(
            &inst,
            &params,
            &options(2, 20),
            &mut Checked(CpuNeighbourhood::new(&inst), &inst),
        )
        .unwrap();
        assert_eq!(inst.makespan(&outcome.solution), outcome.objective);
    }
}
