//! The exchange logic on fake islands with known objective sequences (no GPU).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

/// Seeds an island saw: (epoch, objectives of its seeds, best first).
type SeedLog = Arc<Mutex<Vec<(u32, Vec<i64>)>>>;

/// Finds `sequence[epoch]` in each epoch (the last value once the sequence ends) and adopts
/// its first seed where that is better, as a GPU island starting blocks from it would. Its
/// solution is `[objective, island]`, which [`score`] reads back.
struct Fake {
    island: usize,
    sequence: Vec<i64>,
    log: SeedLog,
    /// Wall time an epoch works before it reports (never past its deadline).
    work: Duration,
    /// Reports this much more than its solution scores.
    lie: i64,
}

impl Island for Fake {
    fn run_epoch(
        &mut self,
        seeds: &[Elite],
        epoch: u32,
        deadline: Instant,
    ) -> Result<EpochReport, String> {
        let objectives = seeds.iter().map(|s| s.objective).collect();
        self.log
            .lock()
            .map_err(|e| e.to_string())?
            .push((epoch, objectives));
        let end = (Instant::now() + self.work).min(deadline);
        std::thread::sleep(end.saturating_duration_since(Instant::now()));
        let found = self.sequence[(epoch as usize).min(self.sequence.len() - 1)];
        let (solution, objective) = match seeds.first() {
            Some(seed) if seed.objective < found => (seed.solution.clone(), seed.objective),
            _ => (vec![found as usize, self.island], found),
        };
        Ok(EpochReport {
            best: Some((solution, objective + self.lie)),
            iterations: 10,
            evaluations: 100,
            launches: 1,
            kernel_seconds: 0.001,
            seeded: !seeds.is_empty(),
        })
    }
}

fn score(solution: &[usize]) -> Result<i64, String> {
    match solution {
        [objective, _] => Ok(*objective as i64),
        other => Err(format!("expected [objective, island], found {other:?}")),
    }
}

fn fakes(
    sequences: &[&[i64]],
    work: Duration,
    setup: Duration,
) -> (Vec<IslandFactory<'static>>, Vec<SeedLog>) {
    let mut factories: Vec<IslandFactory<'static>> = Vec::new();
    let mut logs = Vec::new();
    for (island, seq) in sequences.iter().enumerate() {
        let log = SeedLog::default();
        logs.push(log.clone());
        let sequence = seq.to_vec();
        factories.push(Box::new(move || {
            std::thread::sleep(setup);
            Ok(Box::new(Fake {
                island,
                sequence,
                log,
                work,
                lie: 0,
            }) as Box<dyn Island>)
        }));
    }
    (factories, logs)
}

fn schedule(total_ms: u64, interval_ms: u64) -> Schedule {
    Schedule {
        deadline: Instant::now() + Duration::from_millis(total_ms),
        interval: Duration::from_millis(interval_ms),
        first_epoch: Duration::from_millis(interval_ms),
    }
}

#[test]
fn the_first_epoch_leaves_a_start_its_share_of_the_solve() {
    let s = Schedule::new(
        Instant::now(),
        Duration::from_millis(500),
        Duration::from_secs(10),
    );
    assert_eq!(s.first_epoch, Duration::from_millis(2500));
    // Islands that work until each deadline: a first epoch 200 ms longer than the 100 ms
    // interval leaves two exchanges fewer in 600 ms.
    let count = |first_ms: u64| {
        let (factories, _) = fakes(&[&[5], &[6]], Duration::from_secs(10), Duration::ZERO);
        let mut s = schedule(600, 100);
        s.first_epoch = Duration::from_millis(first_ms);
        run_islands(factories, s, &score).unwrap().exchanges
    };
    let (plain, longer) = (count(100), count(300));
    assert!(longer < plain, "{longer} exchanges against {plain}");
    assert!(longer <= 3, "{longer}");
}

#[test]
fn the_best_reaches_every_island_after_one_exchange() {
    let sequences: [&[i64]; 3] = [&[50, 45, 44], &[30, 40, 41], &[70, 60, 55]];
    let (factories, logs) = fakes(&sequences, Duration::from_millis(10), Duration::ZERO);
    let out = run_islands(factories, schedule(300, 40), &score).unwrap();
    assert!(
        out.exchanges >= 1,
        "at least two epochs in 300 ms of 40 ms epochs"
    );
    for (island, log) in logs.iter().enumerate() {
        let log = log.lock().unwrap();
        assert_eq!(
            log[0],
            (0, vec![]),
            "island {island} starts epoch 0 with no seeds"
        );
        let (epoch, seeds) = &log[1];
        assert_eq!(*epoch, 1);
        assert_eq!(seeds[0], 30, "island {island} gets island 1's 30 first");
        let own = [50, 30, 70][island];
        if own == 30 {
            assert_eq!(
                seeds.len(),
                1,
                "island 1's own best is the elite: no second seed"
            );
        } else {
            assert_eq!(
                seeds[1], own,
                "island {island} keeps its own best as the second seed"
            );
        }
    }
    // Every island adopted 30 in epoch 1, so each one's best is 30; the finder stays island 1.
    for work in &out.islands {
        assert_eq!(work.best_objective, Some(30), "island {}", work.island);
    }
    assert_eq!(out.best.objective, 30);
    assert_eq!(out.best.island, 1);
    assert_eq!(out.best.epoch, 0);
    assert_eq!(score(&out.best.solution), Ok(30));
}

#[test]
fn a_later_improvement_is_credited_to_its_island() {
    // Island 0 finds 20 in epoch 1, beating island 1's 30 of epoch 0.
    let sequences: [&[i64]; 2] = [&[50, 20, 20], &[30, 40, 41]];
    let (factories, logs) = fakes(&sequences, Duration::from_millis(5), Duration::ZERO);
    let out = run_islands(factories, schedule(200, 30), &score).unwrap();
    assert!(out.exchanges >= 2);
    assert_eq!(
        (out.best.objective, out.best.island, out.best.epoch),
        (20, 0, 1)
    );
    let log = logs[1].lock().unwrap();
    assert_eq!(
        log[2].1[0], 20,
        "island 1 starts epoch 2 from island 0's 20"
    );
}

#[test]
fn the_deadline_holds_setup_included_and_work_is_reported() {
    let sequences: [&[i64]; 2] = [&[9], &[8]];
    let (factories, _) = fakes(
        &sequences,
        Duration::from_millis(25),
        Duration::from_millis(40),
    );
    let began = Instant::now();
    let out = run_islands(factories, schedule(200, 50), &score).unwrap();
    let took = began.elapsed();
    assert!(
        took <= Duration::from_millis(300),
        "took {took:?} for a 200 ms deadline"
    );
    for work in &out.islands {
        assert!(
            work.epochs >= 2,
            "island {} ran {} epochs",
            work.island,
            work.epochs
        );
        assert_eq!(work.iterations, 10 * u64::from(work.epochs));
        assert_eq!(work.launches, u64::from(work.epochs));
        assert_eq!(
            work.seeded_epochs + 1,
            work.epochs,
            "every epoch after the first is seeded"
        );
        assert!(work.setup_seconds >= 0.039, "setup {}", work.setup_seconds);
        // The last epoch may be cut short by the deadline.
        assert!(work.busy_seconds >= 0.025 * f64::from(work.epochs - 1));
    }
    assert_eq!(out.exchanges + 1, out.islands[0].epochs);
}

#[test]
fn epoch_zero_runs_even_when_setup_spent_the_limit() {
    let sequences: [&[i64]; 1] = [&[5]];
    let (factories, logs) = fakes(
        &sequences,
        Duration::from_millis(1),
        Duration::from_millis(30),
    );
    let out = run_islands(factories, schedule(10, 1000), &score).unwrap();
    assert_eq!(out.exchanges, 0);
    assert_eq!(out.best.objective, 5);
    assert_eq!(logs[0].lock().unwrap().len(), 1);
}

#[test]
fn one_island_runs_one_epoch_without_seeds_when_the_interval_spans_the_limit() {
    let sequences: [&[i64]; 1] = [&[7, 3]];
    let (factories, logs) = fakes(&sequences, Duration::from_secs(1), Duration::ZERO);
    let out = run_islands(factories, schedule(60, 10_000), &score).unwrap();
    assert_eq!(out.exchanges, 0);
    assert_eq!(*logs[0].lock().unwrap(), vec![(0, vec![])]);
    assert_eq!(out.best.objective, 7);
}

#[test]
fn a_reported_objective_is_re_scored() {
    let log = SeedLog::default();
    let liar: IslandFactory<'static> = Box::new(move || {
        Ok(Box::new(Fake {
            island: 0,
            sequence: vec![40],
            log,
            work: Duration::ZERO,
            lie: -1,
        }) as Box<dyn Island>)
    });
    let err = run_islands(vec![liar], schedule(50, 10), &score).unwrap_err();
    assert!(
        err.contains("island 0, epoch 0 reported objective 39 but its solution scores 40"),
        "{err}"
    );
}

#[test]
fn an_invalid_solution_and_a_failed_setup_are_errors_naming_the_island() {
    let reject = |_: &[usize]| -> Result<i64, String> { Err("not a permutation".into()) };
    let (factories, _) = fakes(&[&[1]], Duration::ZERO, Duration::ZERO);
    let err = run_islands(factories, schedule(50, 10), &reject).unwrap_err();
    assert_eq!(
        err,
        "island 0, epoch 0: invalid solution: not a permutation"
    );

    let (mut factories, _) = fakes(&[&[1], &[2]], Duration::ZERO, Duration::ZERO);
    factories[1] = Box::new(|| Err("GPU 3 does not exist (2 found)".into()));
    let err = run_islands(factories, schedule(50, 10), &score).unwrap_err();
    assert_eq!(err, "island 1: GPU 3 does not exist (2 found)");
    assert!(run_islands(Vec::new(), schedule(50, 10), &score).is_err());
}

#[test]
fn ties_go_to_the_lower_island_then_the_earlier_epoch() {
    let elite = |objective, island, epoch| Elite {
        solution: vec![objective as usize, island],
        objective,
        island,
        epoch,
    };
    let pool = vec![
        Some(elite(10, 0, 3)),
        Some(elite(12, 1, 0)),
        Some(elite(10, 2, 0)),
    ];
    let seeds = seeds_for(&pool, 1);
    assert_eq!(seeds, vec![elite(10, 0, 3), elite(12, 1, 0)]);
    assert_eq!(seeds_for(&pool, 0), vec![elite(10, 0, 3)]);
    assert_eq!(seeds_for(&[None, None], 0), vec![]);
}

/// Panics in its first epoch.
struct Panicky;

impl Island for Panicky {
    fn run_epoch(&mut self, _: &[Elite], _: u32, _: Instant) -> Result<EpochReport, String> {
        panic!("a driver bug")
    }
}

#[test]
fn a_panicking_island_is_an_error_not_a_hang() {
    let (mut factories, _) = fakes(&[&[1], &[2]], Duration::ZERO, Duration::ZERO);
    factories[0] = Box::new(|| Ok(Box::new(Panicky) as Box<dyn Island>));
    let err = run_islands(factories, schedule(100, 20), &score).unwrap_err();
    assert_eq!(err, "island 0, epoch 0: the island panicked: a driver bug");
}

/// Finds 50 in its first two epochs, then faults (an illegal address on its GPU).
struct FaultsLater;

impl Island for FaultsLater {
    fn run_epoch(&mut self, _: &[Elite], epoch: u32, _: Instant) -> Result<EpochReport, String> {
        if epoch >= 2 {
            return Err("an illegal memory access was encountered".into());
        }
        Ok(EpochReport {
            best: Some((vec![50, 1], 50)),
            iterations: 10,
            evaluations: 100,
            launches: 1,
            kernel_seconds: 0.001,
            seeded: false,
        })
    }
}

/// A failure after the islands returned answers ends the run with the best of them (re-scored)
/// and says why, rather than losing it with the error.
#[test]
fn an_island_failing_later_keeps_the_answer_found_before() {
    let (mut factories, _) = fakes(&[&[70, 40], &[1]], Duration::from_millis(5), Duration::ZERO);
    factories[1] = Box::new(|| Ok(Box::new(FaultsLater) as Box<dyn Island>));
    let out = run_islands(factories, schedule(400, 20), &score).unwrap();
    assert_eq!(out.best.objective, 40);
    assert_eq!(out.best.island, 0);
    let failure = out.failure.expect("the failure is said");
    assert_eq!(
        failure,
        "island 1, epoch 2: an illegal memory access was encountered"
    );
}
