//! What every CPU reference solver shares: the budget, seeding, the thread pool and the outcome.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The random generator of every CPU solver. ChaCha8 is portable and reproducible across
/// platforms and crate versions, which the "same seed, same answer" promise needs.
pub type SolverRng = ChaCha8Rng;

/// A generator for one independent stream (a start of a multistart, a restart), derived from
/// the user's seed and the stream index so that results do not depend on thread scheduling.
pub fn stream_rng(seed: u64, stream: u64) -> SolverRng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

/// The share of a time-limited run a start construction may take before the search proper
/// (the flowshop's beam search before its walks; an island solve's first epoch is longer by it,
/// so that its islands start from what one run of the whole limit starts from).
pub const START_SHARE: f64 = 0.2;

/// How long a solver may run. Iteration budgets keep runs deterministic; a time limit stops
/// whichever comes first and makes the result depend on the machine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Budget {
    /// Iterations of the algorithm's main loop (per start, for multistart solvers).
    pub iterations: Option<u64>,
    /// Wall-clock limit for the whole solve.
    pub time_limit: Option<Duration>,
    /// Stop as soon as a solution this good is found (time-to-target runs).
    pub target: Option<Target>,
    /// Record every improvement of the run's best and when it was found (`mats solve
    /// --trace`): the anytime curve of one run.
    pub trace: Option<Trace>,
    /// Where the run is the first part of a longer solve (an island's first epoch): that
    /// solve's time limit, of which a start construction takes its share ([`START_SHARE`]) as
    /// it would in one run of that length; `time_limit` still ends the run.
    pub start_basis: Option<Duration>,
}

/// An objective value that ends a run once reached, and when it was first reached. Clones
/// share the record, so the caller that built the budget reads what the solver's threads saw.
#[derive(Debug, Clone)]
pub struct Target {
    pub objective: i64,
    reached: Arc<OnceLock<Duration>>,
    /// When the run began: the first [`Budget::watch`] of the run sets it, so a run that
    /// hands its budget on (a beam search, then the walks) times every part from its start.
    origin: Arc<OnceLock<Instant>>,
}

impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        self.objective == other.objective
    }
}

impl Target {
    pub fn new(objective: i64) -> Target {
        Target {
            objective,
            reached: Arc::new(OnceLock::new()),
            origin: Arc::new(OnceLock::new()),
        }
    }

    /// Time from the start of the run to the first solution at or below the target.
    pub fn reached_after(&self) -> Option<Duration> {
        self.reached.get().copied()
    }

    /// Records `objective`, found `elapsed` after the start; true when the target is reached.
    pub fn offer(&self, objective: i64, elapsed: Duration) -> bool {
        if objective <= self.objective {
            self.reached.get_or_init(|| elapsed);
        }
        self.reached.get().is_some()
    }

    pub fn is_reached(&self) -> bool {
        self.reached.get().is_some()
    }
}

/// Every improvement of a run's best objective and when it was found, timed from the run's
/// start. Clones share the record, as [`Target`]'s do.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    points: Arc<Mutex<Vec<(Duration, i64)>>>,
    /// As [`Target`]'s.
    origin: Arc<OnceLock<Instant>>,
}

/// A recorder, not a setting: two budgets differ only in what they ask of the run.
impl PartialEq for Trace {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Trace {
    pub fn new() -> Trace {
        Trace::default()
    }

    /// Records `objective`, found `elapsed` after the start, where it beats every earlier
    /// point. The threads of a multistart offer their own bests, so only the run's
    /// improvements are kept, and the times never go back (a thread that reports late keeps
    /// the later time).
    pub fn record(&self, objective: i64, elapsed: Duration) {
        let mut points = self.points.lock().unwrap_or_else(|e| e.into_inner());
        match points.last() {
            Some(&(_, best)) if objective >= best => {}
            Some(&(last, _)) => points.push((elapsed.max(last), objective)),
            None => points.push((elapsed, objective)),
        }
    }

    /// The improvements so far, in the order they were found.
    pub fn points(&self) -> Vec<(Duration, i64)> {
        self.points
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Where a run reports each new best objective: its target (which ends the run once reached)
/// and its trace, both timed from when the run began ([`Budget::watch`]).
#[derive(Debug, Clone)]
pub struct Watch {
    started: Instant,
    target: Option<Target>,
    trace: Option<Trace>,
}

impl Watch {
    /// Records a best objective; true once the target is reached.
    pub fn offer(&self, objective: i64) -> bool {
        if !self.is_listening() {
            return false;
        }
        let elapsed = self.started.elapsed();
        if let Some(trace) = &self.trace {
            trace.record(objective, elapsed);
        }
        self.target
            .as_ref()
            .is_some_and(|t| t.offer(objective, elapsed))
    }

    /// Whether anything listens: GPU drivers read their blocks' bests back after every launch
    /// only then.
    pub fn is_listening(&self) -> bool {
        self.target.is_some() || self.trace.is_some()
    }

    /// Whether the target was reached.
    pub fn reached(&self) -> bool {
        self.target.as_ref().is_some_and(Target::is_reached)
    }
}

impl Budget {
    /// Where the run reports its new bests. The first call starts the clock of the budget's
    /// target and trace; later calls (the parts of one run) keep it.
    pub fn watch(&self) -> Watch {
        let origins = [
            self.target.as_ref().map(|t| &t.origin),
            self.trace.as_ref().map(|t| &t.origin),
        ];
        let started = origins
            .iter()
            .flatten()
            .find_map(|o| o.get().copied())
            .unwrap_or_else(Instant::now);
        for origin in origins.into_iter().flatten() {
            origin.get_or_init(|| started);
        }
        Watch {
            started,
            target: self.target.clone(),
            trace: self.trace.clone(),
        }
    }

    pub fn iterations(n: u64) -> Self {
        Budget {
            iterations: Some(n),
            ..Budget::default()
        }
    }

    pub fn time_limit(limit: Duration) -> Self {
        Budget {
            time_limit: Some(limit),
            ..Budget::default()
        }
    }

    /// A time limit and no iteration budget: the run may use all its time (restarts, a start
    /// per thread), and its answer depends on the machine's speed anyway.
    pub fn time_limit_alone(&self) -> bool {
        self.time_limit.is_some() && self.iterations.is_none()
    }

    /// Starts the clock for this budget.
    pub fn start(&self, default_iterations: u64) -> Deadline {
        let iterations = match (self.iterations, self.time_limit) {
            (Some(n), _) => n,
            // A time limit alone means "run until the time is up".
            (None, Some(_)) => u64::MAX,
            (None, None) => default_iterations,
        };
        let started = Instant::now();
        Deadline {
            iterations,
            // A limit beyond what the clock can represent (centuries) means no clock at all.
            until: self.time_limit.and_then(|limit| started.checked_add(limit)),
            watch: self.watch(),
        }
    }
}

/// Set once the user asked the run to end (`mats solve` on Ctrl-C or SIGTERM): every
/// deadline check answers "reached", so each solver returns its best so far at its next check.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks every solver of this process to end at its next deadline check with its best so far.
pub fn request_stop() {
    STOP.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether [`request_stop`] was called.
pub fn stop_requested() -> bool {
    STOP.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether a run's clock `until` has run out, or the user asked it to stop: the one check
/// for solvers that keep their own end instant (the GPU drivers' launch loops) as for
/// [`Deadline`].
pub fn past(until: Option<Instant>) -> bool {
    until.is_some_and(|until| Instant::now() >= until) || stop_requested()
}

/// A started budget, checked by the solver's main loop.
#[derive(Debug, Clone)]
pub struct Deadline {
    iterations: u64,
    until: Option<Instant>,
    watch: Watch,
}

impl Deadline {
    /// True when iteration `done` (count of finished iterations), the clock or a reached
    /// target ends the run.
    pub fn reached(&self, done: u64) -> bool {
        done >= self.iterations || past(self.until) || self.watch.reached()
    }

    /// Solvers call this with each new best objective, so a time-to-target run knows when it
    /// got there (and stops at the next `reached` check) and a traced run records it.
    pub fn offer(&self, objective: i64) {
        self.watch.offer(objective);
    }

    /// This deadline for one start of several that share the run's time: its clock ends
    /// `slice` from now, or at this deadline's end where that comes first.
    pub fn sliced(&self, slice: Duration) -> Deadline {
        let mut d = self.clone();
        if let (Some(until), Some(end)) = (self.until, Instant::now().checked_add(slice)) {
            d.until = Some(until.min(end));
        }
        d
    }

    /// True when the clock has run out (ignores the iteration budget).
    pub fn timed_out(&self) -> bool {
        past(self.until)
    }
}

/// Settings every solver takes.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub seed: u64,
    /// Worker threads; 0 means all cores.
    pub threads: usize,
    pub budget: Budget,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            seed: 1,
            threads: 0,
            budget: Budget::default(),
        }
    }
}

/// What a solver returns: the best solution and its exact objective, plus work counters that
/// benchmarks turn into rates (moves evaluated per second).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The best solution found, 0-based (a permutation for QAP and PFSP).
    pub solution: Vec<usize>,
    /// Its objective, computed exactly.
    pub objective: i64,
    /// Main-loop iterations summed over all starts.
    pub iterations: u64,
    /// Candidate moves evaluated, summed over all starts.
    pub evaluations: u64,
}

impl Outcome {
    /// The better of two outcomes; ties keep `self`, so a reduction in start order is
    /// deterministic whatever order the threads finished in.
    pub fn best_of(self, other: Outcome) -> Outcome {
        let (iterations, evaluations) = (
            self.iterations.saturating_add(other.iterations),
            self.evaluations.saturating_add(other.evaluations),
        );
        let mut best = if other.objective < self.objective {
            other
        } else {
            self
        };
        best.iterations = iterations;
        best.evaluations = evaluations;
        best
    }
}

/// The most worker threads a solver starts: more only costs memory and start-up time (100,000
/// took 25 s to spawn), and the thread count never changes an answer.
pub const MAX_THREADS: usize = 1024;

/// Runs `work` inside a rayon pool of the requested size (0 = all cores; at most
/// [`MAX_THREADS`], and never more than the machine's cores: workers beyond them only contend
/// for the work queues (1,024 on 2 cores spent a 0.1 s limit's run 1 s in rayon's stealing
/// before the first iteration), and the thread count never changes an answer).
pub fn with_threads<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> T {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if threads == 0 {
        0
    } else {
        threads.min(MAX_THREADS).min(cores)
    };
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(work),
        // Building a pool only fails when the OS refuses threads; the global pool still works.
        Err(_) => work(),
    }
}

/// [`multistart`] under a deadline: once the clock has run out, starts that have not begun
/// are skipped (100 million starts used to run long past a 2 s limit, each drawing and scoring
/// a start after the time was up). Start 0 always runs, so there is a solution to return.
/// Without a time limit nothing is skipped and the result equals [`multistart`]'s.
///
/// `share_time`: for searches that run until the clock stops them (tabu search, iterated
/// greedy), more starts than worker threads split the time limit into waves, each start
/// getting its wave's share, so that every start runs (16 starts on one core used to run one
/// start for the whole limit and skip the other 15 while reporting 16). Descents that end by
/// themselves (2-opt) share one clock instead: a start that finishes early frees its thread.
pub fn multistart_timed<F>(
    starts: usize,
    threads: usize,
    deadline: &Deadline,
    share_time: bool,
    start: F,
) -> Option<Outcome>
where
    F: Fn(usize, &Deadline) -> Outcome + Sync + Send,
{
    use rayon::prelude::*;
    with_threads(threads, || {
        let workers = rayon::current_num_threads().max(1);
        let waves = starts.div_ceil(workers).max(1);
        let slice = deadline
            .until
            .filter(|_| share_time && waves > 1)
            // Saturating: 2^32 waves cast to u32 was a division by zero (a panic from `--starts`).
            .map(|until| {
                until.saturating_duration_since(Instant::now())
                    / u32::try_from(waves).unwrap_or(u32::MAX)
            });
        let own = |s: usize| match slice {
            Some(slice) => start(s, &deadline.sliced(slice)),
            None => start(s, deadline),
        };
        let best = (0..starts)
            .into_par_iter()
            .map(|s| (s == 0 || !deadline.timed_out()).then(|| own(s)))
            // Order-preserving: the reduction still combines starts in index order.
            .while_some()
            .reduce_with(Outcome::best_of);
        // Another thread may have stopped the run before start 0 began.
        best.or_else(|| (starts > 0).then(|| own(0)))
    })
}

/// When this process started, for time limits that count from process start (reading,
/// compiling and copying included). `main` calls [`mark_process_start`] first thing; a
/// library user that never does counts from the first call here.
static PROCESS_START: OnceLock<Instant> = OnceLock::new();

/// Records the process's start; later calls change nothing.
pub fn mark_process_start() {
    PROCESS_START.get_or_init(Instant::now);
}

/// Time since [`mark_process_start`].
pub fn since_process_start() -> Duration {
    PROCESS_START.get_or_init(Instant::now).elapsed()
}

/// When the process started, if its `main` said so ([`mark_process_start`]); `None` in a
/// process that runs many solves (the fuzzer, tests), whose time limits count from each
/// call instead.
pub fn process_start() -> Option<Instant> {
    PROCESS_START.get().copied()
}

/// Runs `starts` independent starts in parallel and keeps the best, reducing in start order.
pub fn multistart<F>(starts: usize, threads: usize, start: F) -> Option<Outcome>
where
    F: Fn(usize) -> Outcome + Sync + Send,
{
    use rayon::prelude::*;
    with_threads(threads, || {
        // Reduced as they finish, never collected: memory stays O(threads x n) for any
        // number of starts. Rayon combines neighbours in index order and `best_of` is
        // associative, so the result still equals the sequential reduction.
        (0..starts)
            .into_par_iter()
            .map(&start)
            .reduce_with(Outcome::best_of)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More starts than threads split a time limit into waves: every start runs, and the
    /// run still ends at the limit. With one shared clock (2-opt's descents) the first start
    /// takes the whole limit and the others are skipped.
    #[test]
    fn starts_beyond_the_threads_share_the_time_limit() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        fn spin(ran: &AtomicUsize, s: usize, d: &Deadline) -> Outcome {
            ran.fetch_add(1, Ordering::SeqCst);
            let mut done = 0;
            while !d.reached(done) {
                done += 1;
            }
            Outcome {
                solution: vec![0],
                objective: s as i64,
                iterations: done,
                evaluations: 0,
            }
        }
        let limit = Duration::from_millis(400);
        for (share, expected) in [(true, 4), (false, 1)] {
            let ran = AtomicUsize::new(0);
            let deadline = Budget::time_limit(limit).start(0);
            let began = Instant::now();
            let best =
                multistart_timed(4, 1, &deadline, share, |s, d| spin(&ran, s, d)).expect("a start");
            assert_eq!(ran.load(Ordering::SeqCst), expected, "share_time = {share}");
            assert_eq!(best.objective, 0);
            assert!(began.elapsed() < limit + Duration::from_millis(300));
        }
        // More waves than a u32 counts: the time slices saturate (a division by zero).
        let ran = AtomicUsize::new(0);
        let deadline = Budget::time_limit(Duration::from_millis(50)).start(0);
        let best = multistart_timed(1 << 32, 1, &deadline, true, |s, d| spin(&ran, s, d));
        assert!(best.is_some());
    }

    #[test]
    fn a_trace_keeps_the_improvements_in_time_order() {
        let trace = Trace::new();
        let ms = Duration::from_millis;
        trace.record(100, ms(5));
        trace.record(100, ms(6));
        trace.record(120, ms(7));
        trace.record(90, ms(9));
        // A thread that reports an improvement late, with an earlier clock reading.
        trace.record(80, ms(8));
        assert_eq!(trace.points(), [(ms(5), 100), (ms(9), 90), (ms(9), 80)]);
    }

    #[test]
    fn the_parts_of_a_run_share_its_clock_and_records() {
        let budget = Budget {
            target: Some(Target::new(50)),
            trace: Some(Trace::new()),
            ..Budget::default()
        };
        let first = budget.watch();
        assert!(first.is_listening());
        assert!(!first.offer(70));
        std::thread::sleep(Duration::from_millis(20));
        // A later part (the walks after a beam search) times from the run's start.
        let later = budget.clone().watch();
        assert!(later.offer(50));
        assert!(first.reached() && budget.target.as_ref().unwrap().is_reached());
        let reached = budget.target.as_ref().unwrap().reached_after().unwrap();
        assert!(reached >= Duration::from_millis(20), "{reached:?}");
        let points = budget.trace.as_ref().unwrap().points();
        assert_eq!(points.iter().map(|p| p.1).collect::<Vec<_>>(), [70, 50]);
        assert_eq!(points[1].0, reached);
        assert!(!Budget::default().watch().is_listening());
    }

    #[test]
    fn a_deadline_reports_to_the_watch_and_stops_at_the_target() {
        let budget = Budget {
            iterations: Some(1000),
            target: Some(Target::new(10)),
            trace: Some(Trace::new()),
            ..Budget::default()
        };
        let deadline = budget.start(1);
        deadline.offer(12);
        assert!(!deadline.reached(3));
        deadline.offer(10);
        assert!(deadline.reached(3));
        assert_eq!(budget.trace.as_ref().unwrap().points().len(), 2);
    }
}
