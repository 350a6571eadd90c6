//! The island model over several devices: one search ("island") per GPU, run in epochs of
//! `interval` wall time; between epochs the islands' bests meet in an elite pool and the best
//! of all is handed to every island (best-to-all), which starts its next epoch from it.
//!
//! Why best-to-all rather than a ring: each island is already a population (hundreds of
//! blocks, walks or ants) that keeps its own diversity, and a host has 2-8 GPUs; a ring needs
//! up to k - 1 exchanges before the best reaches every island, which at the short limits a
//! user gives `mats solve` (seconds to minutes, a few epochs) leaves most islands searching
//! away from the best basin. Every island also keeps its own best as a second seed, so the
//! pool never narrows an island to one solution only.
//!
//! The rule is deterministic: the elite is the least objective, ties going to the lower island
//! index and then the earlier epoch, so the same reports always give the same seeds.
//!
//! Nothing here knows CUDA: an [`Island`] is any search that can start an epoch from given
//! solutions ([`super::device_island`] puts a family's prepared GPU run behind it; the tests
//! use fake islands with known objective sequences).

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A solution an island found, with where and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elite {
    pub solution: Vec<usize>,
    pub objective: i64,
    pub island: usize,
    pub epoch: u32,
}

impl Elite {
    /// The order of the pool: objective, then island, then epoch (the deterministic rule).
    fn rank(&self) -> (i64, usize, u32) {
        (self.objective, self.island, self.epoch)
    }
}

/// What one epoch of one island did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EpochReport {
    /// The best solution of the epoch and its objective as the island computed it (the
    /// driver re-scores it); `None` when the epoch did no work.
    pub best: Option<(Vec<usize>, i64)>,
    pub iterations: u64,
    pub evaluations: u64,
    pub launches: u64,
    pub kernel_seconds: f64,
    /// Whether the epoch started from its seeds (a variant that cannot runs on its own).
    pub seeded: bool,
}

/// What an island's device ran, as `mats solve` reports a GPU run (plain values, so this
/// module needs no CUDA types).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceFacts {
    /// Name and architecture.
    pub device: String,
    /// Blocks (solutions, walks, searches, ants' blocks) and threads per block of the main
    /// kernel's launch.
    pub blocks: u32,
    pub threads_per_block: u32,
    pub registers: u32,
    pub local_bytes_per_thread: u32,
    /// `hit` or `miss` of the kernel cache.
    pub cache: String,
    pub layout: Option<String>,
    pub blocks_per_sm: Option<u32>,
}

/// A search that runs in epochs on its own device.
pub trait Island {
    /// One epoch until `deadline`, starting from `seeds` (best first; empty in epoch 0).
    fn run_epoch(
        &mut self,
        seeds: &[Elite],
        epoch: u32,
        deadline: Instant,
    ) -> Result<EpochReport, String>;

    /// The device and launch it runs on, once known (after an epoch).
    fn facts(&self) -> Option<DeviceFacts> {
        None
    }
}

/// Builds an island on its own thread (a GPU context and its prepared kernels stay on the
/// thread that made them); the error names the device.
pub type IslandFactory<'a> = Box<dyn FnOnce() -> Result<Box<dyn Island + 'a>, String> + Send + 'a>;

/// Re-scores a solution from scratch (the family's CPU objective).
pub type Rescore<'a> = &'a (dyn Fn(&[usize]) -> Result<i64, String> + Sync);

/// Per-island work over the whole solve (the `islands` rows of `mats solve --json`, which
/// name the GPU and device beside these fields).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct IslandWork {
    #[serde(skip)]
    pub island: usize,
    pub epochs: u32,
    pub iterations: u64,
    pub evaluations: u64,
    pub launches: u64,
    pub kernel_seconds: f64,
    /// Wall time inside epochs (the island's busy time).
    pub busy_seconds: f64,
    /// Compiling, loading and uploading before the first epoch.
    pub setup_seconds: f64,
    /// Epochs that started from exchanged elites.
    pub seeded_epochs: u32,
    #[serde(skip)]
    pub facts: Option<DeviceFacts>,
    pub best_objective: Option<i64>,
}

/// The result of an island solve.
#[derive(Debug, Clone)]
pub struct IslandsOutcome {
    /// The best solution of all islands, re-scored; `island` is the one that found it first.
    pub best: Elite,
    pub islands: Vec<IslandWork>,
    /// Exchanges done (epochs after the first).
    pub exchanges: u32,
    /// Why the run ended early: an island failed (a faulted GPU, a thread that ended) after
    /// the islands had returned `best`, which stands. (An answer that does not re-score is
    /// the run's error.)
    pub failure: Option<String>,
}

/// When the islands run and meet.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// The whole solve ends here, setup included.
    pub deadline: Instant,
    /// Wall time of one epoch (the exchange interval).
    pub interval: Duration,
    /// Wall time of the first epoch: the interval plus the share of the solve a search's start
    /// may take ([`Schedule::new`]), so that the islands start from what a one-GPU run of the
    /// whole limit starts from (the flowshop's beam search, the colony's first tour) before
    /// the first exchange.
    pub first_epoch: Duration,
}

impl Schedule {
    /// Epochs of `interval` until `deadline`, the first longer by a start's share
    /// ([`crate::run::START_SHARE`]) of `limit`, the whole solve's time limit. With first
    /// epochs of one interval, two H200s at 10 s gave the flowshop's beam a fifth of 1 s: it
    /// finished no width, and the islands on VFR800_60_1 started from NEH and ended above one
    /// GPU on every seed (docs/islands.md).
    pub fn new(deadline: Instant, interval: Duration, limit: Duration) -> Schedule {
        Schedule {
            deadline,
            interval,
            first_epoch: interval + limit.mul_f64(crate::run::START_SHARE),
        }
    }
}

/// Epochs shorter than this are not started: a launch and its read-back take longer.
const SHORTEST_EPOCH: Duration = Duration::from_millis(5);

/// The seeds every island starts an epoch from: the pool's best, then the island's own best
/// where that is another solution.
pub fn seeds_for(pool: &[Option<Elite>], island: usize) -> Vec<Elite> {
    let Some(best) = pool.iter().flatten().min_by_key(|e| e.rank()) else {
        return Vec::new();
    };
    let mut seeds = vec![best.clone()];
    if let Some(own) = pool.get(island).and_then(|e| e.as_ref()) {
        if own.solution != best.solution {
            seeds.push(own.clone());
        }
    }
    seeds
}

type Order = (Vec<Elite>, u32, Instant);

/// Runs `factories.len()` islands, one thread each, until `schedule.deadline`, exchanging
/// elites every `schedule.interval`; every reported best is re-scored with `rescore` and a
/// mismatch or an invalid solution is an error naming the island and epoch.
pub fn run_islands(
    factories: Vec<IslandFactory<'_>>,
    schedule: Schedule,
    rescore: Rescore<'_>,
) -> Result<IslandsOutcome, String> {
    let count = factories.len();
    if count == 0 {
        return Err("an island solve needs at least one device".into());
    }
    std::thread::scope(|scope| {
        let (report_tx, reports) = mpsc::channel();
        let mut orders = Vec::with_capacity(count);
        for (index, factory) in factories.into_iter().enumerate() {
            let (order_tx, order_rx) = mpsc::channel::<Order>();
            orders.push(order_tx);
            let report_tx = report_tx.clone();
            scope.spawn(move || island_thread(index, factory, order_rx, report_tx));
        }
        drop(report_tx);
        let driven = drive(&orders, &reports, count, schedule, rescore);
        // Closing the order channels ends every island thread.
        drop(orders);
        driven
    })
}

/// What an island thread sends back: its setup time first, then one report per epoch.
enum Message {
    Ready(usize, Result<f64, String>),
    Epoch(usize, Result<EpochReport, String>, f64, Option<DeviceFacts>),
}

fn island_thread(
    index: usize,
    factory: IslandFactory<'_>,
    orders: mpsc::Receiver<Order>,
    reports: mpsc::Sender<Message>,
) {
    let began = Instant::now();
    let mut island = match guarded(factory) {
        Ok(island) => island,
        Err(why) => {
            let _ = reports.send(Message::Ready(index, Err(why)));
            return;
        }
    };
    if reports
        .send(Message::Ready(index, Ok(began.elapsed().as_secs_f64())))
        .is_err()
    {
        return;
    }
    while let Ok((seeds, epoch, deadline)) = orders.recv() {
        let started = Instant::now();
        let report = guarded(|| island.run_epoch(&seeds, epoch, deadline));
        let busy = started.elapsed().as_secs_f64();
        let facts = island.facts();
        if reports
            .send(Message::Epoch(index, report, busy, facts))
            .is_err()
        {
            return;
        }
    }
}

/// Runs `f`, turning a panic into an error: the exchange loop waits for every island's report,
/// so an island thread must never end without one.
fn guarded<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        Err(format!("the island panicked: {what}"))
    })
}

/// The exchange loop on the calling thread.
fn drive(
    orders: &[mpsc::Sender<Order>],
    reports: &mpsc::Receiver<Message>,
    count: usize,
    schedule: Schedule,
    rescore: Rescore<'_>,
) -> Result<IslandsOutcome, String> {
    let mut work: Vec<IslandWork> = (0..count)
        .map(|island| IslandWork {
            island,
            ..IslandWork::default()
        })
        .collect();
    for _ in 0..count {
        match reports.recv() {
            Ok(Message::Ready(i, Ok(setup))) => work[i].setup_seconds = setup,
            Ok(Message::Ready(i, Err(why))) => return Err(format!("island {i}: {why}")),
            Ok(Message::Epoch(..)) | Err(_) => {
                return Err("an island thread ended before it was ready".into())
            }
        }
    }
    let mut pool: Vec<Option<Elite>> = vec![None; count];
    let mut best: Option<Elite> = None;
    let mut failure = None;
    let mut epoch = 0u32;
    // An island's failure ends the run; what the islands returned before it (re-scored) is
    // the answer, not lost with it.
    // (Labels are hygienic: the loop's is handed in.)
    macro_rules! fail {
        ($epochs:lifetime, $why:expr) => {{
            let why: String = $why;
            if best.is_none() {
                return Err(why);
            }
            failure = Some(why);
            break $epochs;
        }};
    }
    'epochs: loop {
        let now = Instant::now();
        let left = schedule.deadline.saturating_duration_since(now);
        // Epoch 0 always runs, so every island reports a solution even when setup took it all.
        if epoch > 0 && left < SHORTEST_EPOCH {
            break;
        }
        let span = if epoch == 0 {
            schedule.first_epoch
        } else {
            schedule.interval
        };
        let until = now
            .checked_add(span)
            .map_or(schedule.deadline, |end| end.min(schedule.deadline));
        for (i, order) in orders.iter().enumerate() {
            if order.send((seeds_for(&pool, i), epoch, until)).is_err() {
                fail!('epochs, format!("island {i} ended early"));
            }
        }
        // Reports arrive in any order; they are taken in island order so that ties go to the
        // lower index whatever the threads' timing.
        let mut arrived: Vec<Option<(EpochReport, f64)>> = vec![None; count];
        for _ in 0..count {
            let (i, report, busy) = match reports.recv() {
                Ok(Message::Epoch(i, report, busy, facts)) => {
                    work[i].facts = facts.or(work[i].facts.take());
                    (i, report, busy)
                }
                _ => fail!('epochs, format!("an island thread ended during epoch {epoch}")),
            };
            match report {
                Ok(report) => arrived[i] = Some((report, busy)),
                Err(why) => fail!('epochs, format!("island {i}, epoch {epoch}: {why}")),
            }
        }
        for (i, (report, busy)) in arrived
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, r?)))
        {
            account(&mut work[i], &report, busy);
            let Some((solution, objective)) = report.best else {
                continue;
            };
            // An answer that does not re-score is a solver's bug, not a device's fault: the
            // run is refused whatever the others found.
            let elite = checked_elite(solution, objective, i, epoch, rescore)?;
            work[i].best_objective = Some(
                work[i]
                    .best_objective
                    .map_or(objective, |b| b.min(objective)),
            );
            if pool[i].as_ref().is_none_or(|own| objective < own.objective) {
                pool[i] = Some(elite.clone());
            }
            // Strictly better only: an island that adopted the elite and reports it again does
            // not become its finder.
            if best.as_ref().is_none_or(|b| objective < b.objective) {
                best = Some(elite);
            }
        }
        epoch += 1;
        if epoch == u32::MAX {
            break;
        }
    }
    let best = best.ok_or("no island returned a solution")?;
    Ok(IslandsOutcome {
        best,
        islands: work,
        exchanges: epoch.saturating_sub(1),
        failure,
    })
}

/// An island's reported best after re-scoring it from scratch.
fn checked_elite(
    solution: Vec<usize>,
    objective: i64,
    island: usize,
    epoch: u32,
    rescore: Rescore<'_>,
) -> Result<Elite, String> {
    let scored = rescore(&solution)
        .map_err(|why| format!("island {island}, epoch {epoch}: invalid solution: {why}"))?;
    if scored != objective {
        return Err(format!(
            "island {island}, epoch {epoch} reported objective {objective} but its solution \
             scores {scored}"
        ));
    }
    Ok(Elite {
        solution,
        objective,
        island,
        epoch,
    })
}

fn account(work: &mut IslandWork, report: &EpochReport, busy: f64) {
    work.epochs += 1;
    work.iterations += report.iterations;
    work.evaluations += report.evaluations;
    work.launches += report.launches;
    work.kernel_seconds += report.kernel_seconds;
    work.busy_seconds += busy;
    work.seeded_epochs += u32::from(report.seeded);
}

#[cfg(test)]
mod tests;
