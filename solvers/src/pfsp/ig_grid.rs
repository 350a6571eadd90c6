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
    /// For each sequence, in order, one move per position `from`: the job there taken out and
    /// put back at its best other position (`to != from`, ties to the least `to`); n moves per
    /// sequence.
    fn moves(&mut self, sequences: &[&[usize]]) -> Result<Vec<InsertionMove>, Self::Error>;
}

/// The move of least makespan in one sequence's row of [`Neighbourhood::moves`], ties to the
/// least `from`, then `to`.
pub fn best_of(row: &[InsertionMove]) -> InsertionMove {
    row.iter().copied().min().unwrap_or(InsertionMove {
        makespan: i64::MAX,
        from: 0,
        to: 0,
    })
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

    /// One sequence's row of moves, appended to `row`.
    pub fn moves_of(&mut self, sequence: &[usize], row: &mut Vec<InsertionMove>) {
        for from in 0..sequence.len() {
            self.shorter.clear();
            self.shorter.extend_from_slice(&sequence[..from]);
            self.shorter.extend_from_slice(&sequence[from + 1..]);
            let (to, makespan) =
                self.insertion
                    .best_except(self.inst, &self.shorter, sequence[from], Some(from));
            row.push(InsertionMove { makespan, from, to });
        }
    }

    /// The best move of one sequence.
    pub fn best_move(&mut self, sequence: &[usize]) -> InsertionMove {
        let mut row = Vec::with_capacity(sequence.len());
        self.moves_of(sequence, &mut row);
        best_of(&row)
    }
}

impl Neighbourhood for CpuNeighbourhood<'_> {
    type Error = std::convert::Infallible;
    fn moves(&mut self, sequences: &[&[usize]]) -> Result<Vec<InsertionMove>, Self::Error> {
        let mut all = Vec::with_capacity(sequences.iter().map(|s| s.len()).sum());
        for s in sequences {
            self.moves_of(s, &mut all);
        }
        Ok(all)
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
    /// Tabu steps after each local optimum (0 = none, the plain iterated greedy): the walk
    /// keeps taking the best allowed move, improving or not, until this many steps in a row
    /// have not lowered the best makespan of the local search; the local search's result is
    /// its best sequence. A local optimum of the descent is where every walk of an instance
    /// like ta103 ends in the same few attractors (docs/pfsp-gpu.md); the tabu steps walk
    /// through the plateaus and ridges around it with the neighbourhood already evaluated.
    pub tabu_steps: usize,
    /// Steps a moved job stays tabu (not moved again unless the move beats the local search's
    /// best).
    pub tenure: usize,
}

impl Default for GridParams {
    fn default() -> Self {
        GridParams {
            walks: 4,
            destruction: 4,
            temperature: 0.4,
            tabu_steps: 0,
            tenure: DEFAULT_GRID_TENURE,
        }
    }
}

/// [`GridParams::tenure`] where nothing sets it.
pub const DEFAULT_GRID_TENURE: usize = 7;

/// The tabu steps of one local search (after its descent reached a local optimum).
struct TabuPhase {
    /// Steps taken.
    step: usize,
    /// Steps in a row without a new best.
    stall: usize,
    best: Vec<usize>,
    best_value: i64,
    /// Per job: the first step at which it may move again.
    free_at: Vec<usize>,
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
    /// The tabu steps under way, once the descent has stopped.
    tabu: Option<TabuPhase>,
}

/// What a run did besides its outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GridStats {
    /// Neighbourhood evaluations (steps of the batch).
    pub steps: u64,
    /// Moves taken over all walks: the descents' improving ones and the tabu steps.
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
            Walk::new(seq, value, stream_rng(options.seed, w as u64))
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
        let moves = neighbourhood.moves(&sequences)?;
        stats.steps += 1;
        evaluations += (active.len() * n * n) as u64;
        for (&w, row) in active.iter().zip(moves.chunks(n)) {
            let walk = &mut walks[w];
            let mv = best_of(row);
            if walk.tabu.is_none() && mv.makespan < walk.candidate_value {
                walk.apply(mv);
                stats.moves += 1;
                continue;
            }
            if params.tabu_steps > 0 && walk.tabu_step(row, params, n) {
                stats.moves += 1;
                continue;
            }
            // The local search is over: accept its result or not, then destroy and rebuild
            // for the next one.
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
    fn new(sequence: &[usize], value: i64, rng: SolverRng) -> Walk {
        Walk {
            rng,
            current: sequence.to_vec(),
            current_value: value,
            best: sequence.to_vec(),
            best_value: value,
            candidate: sequence.to_vec(),
            candidate_value: value,
            started: false,
            iterations: 0,
            tabu: None,
        }
    }

    fn apply(&mut self, mv: InsertionMove) {
        let job = self.candidate.remove(mv.from);
        self.candidate.insert(mv.to, job);
        self.candidate_value = mv.makespan;
    }

    /// One tabu step on `row` (the candidate's moves), starting the phase at the descent's
    /// local optimum: the best move whose job is not tabu, or that beats the phase's best
    /// (aspiration). False when the phase is over (its stall reached, or every move tabu):
    /// the candidate is then the phase's best.
    fn tabu_step(&mut self, row: &[InsertionMove], params: &GridParams, n: usize) -> bool {
        let phase = self.tabu.get_or_insert_with(|| TabuPhase {
            step: 0,
            stall: 0,
            best: self.candidate.clone(),
            best_value: self.candidate_value,
            free_at: vec![0; n],
        });
        let allowed = row
            .iter()
            .filter(|mv| {
                phase.free_at[self.candidate[mv.from]] <= phase.step
                    || mv.makespan < phase.best_value
            })
            .min()
            .copied();
        let go_on = phase.stall < params.tabu_steps;
        match allowed {
            Some(mv) if go_on => {
                let job = self.candidate[mv.from];
                phase.step += 1;
                phase.free_at[job] = phase.step + params.tenure;
                self.apply(mv);
                let phase = self.tabu.as_mut().expect("the phase started above");
                if self.candidate_value < phase.best_value {
                    phase.best.clone_from(&self.candidate);
                    phase.best_value = self.candidate_value;
                    phase.stall = 0;
                } else {
                    phase.stall += 1;
                }
                true
            }
            _ => {
                let phase = self.tabu.take().expect("the phase started above");
                self.candidate = phase.best;
                self.candidate_value = phase.best_value;
                false
            }
        }
    }

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

    /// The best move is the least makespan over every (from, to != from), ties to the least
    /// from and to, as a brute force over all moves finds it.
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
                    for to in (0..n).filter(|&to| to != from) {
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
                // Putting a job back where it was is no move: the row holds real moves only.
                assert_ne!(got.from, got.to);
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

    /// Every move of every row the walks see gives the makespan the neighbourhood says, with
    /// and without tabu steps: a wrong neighbourhood (one that lies about a move) is caught.
    #[test]
    fn every_move_the_walks_see_is_what_it_says() {
        struct Checked<'a>(CpuNeighbourhood<'a>, &'a Instance);
        impl Neighbourhood for Checked<'_> {
            type Error = String;
            fn moves(&mut self, seqs: &[&[usize]]) -> Result<Vec<InsertionMove>, String> {
                let moves = self.0.moves(seqs).unwrap();
                let n = self.1.jobs;
                for (s, row) in seqs.iter().zip(moves.chunks(n)) {
                    for mv in row {
                        let mut t = s.to_vec();
                        let job = t.remove(mv.from);
                        t.insert(mv.to, job);
                        if self.1.makespan(&t) != mv.makespan {
                            return Err(format!("{mv:?} of {s:?}"));
                        }
                    }
                }
                Ok(moves)
            }
        }
        let inst = generate(15, 6, 3);
        for tabu_steps in [0, 10] {
            let params = GridParams {
                walks: 2,
                destruction: 3,
                temperature: 0.4,
                tabu_steps,
                tenure: 3,
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

    /// The tabu steps walk on from a local optimum: each takes the best move whose job has not
    /// moved in the last `tenure` steps (or that beats the phase's best), worse or not; the
    /// phase ends after `tabu_steps` steps in a row without a new best, and its best is the
    /// local search's result. Checked against a bookkeeping of its own (last step each job
    /// moved) on several instances.
    #[test]
    fn tabu_steps_leave_the_local_optimum_and_return_their_best() {
        for (n, m, seed) in [(20, 5, 6), (30, 10, 7), (12, 4, 8)] {
            let inst = generate(n, m, seed);
            let mut cpu = CpuNeighbourhood::new(&inst);
            let mut seq = neh(&inst);
            loop {
                let mv = cpu.best_move(&seq);
                if mv.makespan >= inst.makespan(&seq) {
                    break;
                }
                let job = seq.remove(mv.from);
                seq.insert(mv.to, job);
            }
            let start = inst.makespan(&seq);
            let params = GridParams {
                tabu_steps: 6,
                tenure: 3,
                ..GridParams::default()
            };
            let mut walk = Walk::new(&seq, start, stream_rng(1, 0));
            let mut last_moved: std::collections::HashMap<usize, usize> = Default::default();
            let (mut expected, mut best, mut stall) = (seq.clone(), (start, seq.clone()), 0);
            let mut row = Vec::new();
            for step in 1.. {
                row.clear();
                cpu.moves_of(&walk.candidate, &mut row);
                let allowed = row
                    .iter()
                    .filter(|mv| {
                        let job = expected[mv.from];
                        last_moved
                            .get(&job)
                            .is_none_or(|&s| step > s + params.tenure)
                            || mv.makespan < best.0
                    })
                    .min()
                    .copied();
                let goes_on = walk.tabu_step(&row, &params, n);
                let Some(mv) = allowed.filter(|_| stall < params.tabu_steps) else {
                    assert!(!goes_on, "{n}x{m}: the phase must end at step {step}");
                    break;
                };
                assert!(goes_on, "{n}x{m}: step {step} must be taken");
                if step == 1 {
                    assert!(mv.makespan >= start, "a local optimum has no better move");
                }
                let job = expected.remove(mv.from);
                expected.insert(mv.to, job);
                last_moved.insert(job, step);
                assert_eq!(walk.candidate, expected, "{n}x{m} step {step}");
                assert_eq!(walk.candidate_value, inst.makespan(&expected));
                if mv.makespan < best.0 {
                    best = (mv.makespan, expected.clone());
                    stall = 0;
                } else {
                    stall += 1;
                }
            }
            assert!(walk.tabu.is_none());
            assert_eq!((walk.candidate_value, &walk.candidate), (best.0, &best.1));
            assert!(best.0 <= start);
        }
    }
}
