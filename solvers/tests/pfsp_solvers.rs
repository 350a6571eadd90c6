//! NEH, tabu search and iterated greedy: optimality on enumerable instances, quality on
//! ta001, determinism and budgets.

use std::path::Path;
use std::time::{Duration, Instant};

use solvers::permutation;
use solvers::pfsp::{self, IgParams, Instance, TabuParams};
use solvers::{Budget, RunOptions};

const REPO_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/pfsp");

fn ta(index: usize) -> Instance {
    let file = if index <= 10 {
        "tai20_5.txt"
    } else {
        "tai20_10.txt"
    };
    let k = (index - 1) % 10 + 1;
    pfsp::read(&Path::new(REPO_DATA).join(file), Some(k)).expect("shipped instance")
}

/// The optimum by enumerating all n! orders (Heap's algorithm).
fn brute_force(inst: &Instance) -> i64 {
    let n = inst.jobs;
    let mut order: Vec<usize> = (0..n).collect();
    let mut c = vec![0usize; n];
    let mut best = inst.makespan(&order);
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                order.swap(0, i);
            } else {
                order.swap(c[i], i);
            }
            best = best.min(inst.makespan(&order));
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    best
}

/// Small random instances: (n, m, seed) with n <= 8.
fn small_cases() -> Vec<(usize, usize, i64)> {
    let mut cases = Vec::new();
    let mut seed = 12345i64;
    for n in 4..=8 {
        for m in [2, 3, 5, 8] {
            for _ in 0..2 {
                seed = (seed * 48271) % 2_147_483_647;
                cases.push((n, m, seed));
            }
        }
    }
    cases
}

#[test]
fn brute_force_enumerates_every_order() {
    // 3 jobs on 1 machine: every order has makespan = total; 2 machines: Johnson's rule.
    let inst = Instance::new("j", 3, 2, vec![3, 5, 1, 6, 2, 2]).expect("valid");
    // Johnson: jobs with p1 < p2 first by increasing p1 (job 2: 1 < 2, job 0: 3 < 6), then
    // the rest by decreasing p2 (job 1: 5 >= 2): order 2, 0, 1.
    assert_eq!(brute_force(&inst), inst.makespan(&[2, 0, 1]));
}

#[test]
fn neh_is_a_permutation_and_reports_its_makespan() {
    for (n, m, seed) in small_cases()
        .into_iter()
        .chain([(20, 5, 873654221), (50, 10, 7)])
    {
        let inst = pfsp::generate(n, m, seed);
        let (order, value) = pfsp::neh_with_makespan(&inst);
        permutation::check(&order, n).expect("NEH returns a permutation");
        assert_eq!(value, inst.makespan(&order), "{n}x{m} seed {seed}");
        assert_eq!(order, pfsp::neh(&inst));
    }
}

/// NEH stopped part-way (a deadline) still gives a permutation: the jobs inserted so far in
/// NEH's positions, the rest after them.
#[test]
fn neh_stopped_part_way_is_a_permutation() {
    let inst = pfsp::generate(30, 5, 11);
    let asked = std::cell::Cell::new(0);
    let stopped = pfsp::neh_until(&inst, || {
        asked.set(asked.get() + 1);
        asked.get() > 10
    });
    permutation::check(&stopped, 30).expect("a permutation");
    assert_eq!(
        asked.get(),
        11,
        "asked before each insertion until it said stop"
    );
    assert_ne!(stopped, pfsp::neh(&inst));
    assert_eq!(pfsp::neh_until(&inst, || false), pfsp::neh(&inst));
    assert_eq!(pfsp::neh_until(&inst, || true).len(), 30);
}

#[test]
fn neh_matches_published_values_on_ta001_to_ta010() {
    // NEH with Taillard's acceleration, decreasing total time and first-best insertion, as
    // reported in the literature (e.g. Ruiz & Stützle 2007 start from these).
    let expected = [1286, 1365, 1159, 1325, 1305, 1228, 1278, 1223, 1291, 1151];
    let got: Vec<i64> = (1..=10)
        .map(|k| {
            let inst = ta(k);
            inst.makespan(&pfsp::neh(&inst))
        })
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn tabu_and_ig_reach_the_optimum_of_small_instances() {
    let options = RunOptions::default();
    for (n, m, seed) in small_cases() {
        let inst = pfsp::generate(n, m, seed);
        let optimum = brute_force(&inst);
        let t = pfsp::tabu(&inst, &TabuParams::default(), &options);
        permutation::check(&t.solution, n).expect("tabu returns a permutation");
        assert_eq!(t.objective, inst.makespan(&t.solution));
        assert_eq!(t.objective, optimum, "tabu on {n}x{m} seed {seed}");
        for run_seed in [1, 2, 3] {
            let options = RunOptions {
                seed: run_seed,
                ..options.clone()
            };
            let g = pfsp::iterated_greedy(&inst, &IgParams::default(), &options);
            permutation::check(&g.solution, n).expect("IG returns a permutation");
            assert_eq!(g.objective, inst.makespan(&g.solution));
            assert_eq!(
                g.objective, optimum,
                "IG on {n}x{m} seed {seed}, run seed {run_seed}"
            );
        }
    }
}

#[test]
fn tabu_counts_iterations_and_neighbours_and_never_loses_neh() {
    let inst = ta(11);
    let options = RunOptions {
        budget: Budget::iterations(50),
        ..RunOptions::default()
    };
    let outcome = pfsp::tabu(&inst, &TabuParams::default(), &options);
    assert_eq!(outcome.iterations, 50);
    assert_eq!(outcome.evaluations, 50 * 20 * 19 / 2);
    assert!(outcome.objective <= inst.makespan(&pfsp::neh(&inst)));
    assert!(outcome.objective >= 1582, "ta011's optimum is 1582");
    // Tenure 0 is allowed (steepest descent with forced moves).
    let zero = pfsp::tabu(&inst, &TabuParams { tenure: 0 }, &options);
    assert!(zero.objective <= inst.makespan(&pfsp::neh(&inst)));
}

#[test]
fn tabu_is_deterministic_across_thread_counts() {
    // 50 x 20 is above the parallel threshold, so the neighbourhood is split over threads.
    let inst = pfsp::generate(50, 20, 1328042058);
    let run = |threads| {
        let options = RunOptions {
            threads,
            budget: Budget::iterations(15),
            ..RunOptions::default()
        };
        pfsp::tabu(&inst, &TabuParams::default(), &options)
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(0));
}

#[test]
fn ig_gets_close_to_the_optimum_of_ta001() {
    let inst = ta(1);
    let options = RunOptions {
        budget: Budget::iterations(200),
        ..RunOptions::default()
    };
    let outcome = pfsp::iterated_greedy(&inst, &IgParams::default(), &options);
    assert_eq!(outcome.iterations, 200);
    assert!(outcome.evaluations > 0);
    let gap = 100.0 * (outcome.objective - 1278) as f64 / 1278.0;
    assert!(
        outcome.objective >= 1278 && gap < 1.0,
        "IG on ta001: {} ({gap:.2}%)",
        outcome.objective
    );
}

#[test]
fn ig_is_deterministic_for_a_seed_whatever_the_threads() {
    let inst = ta(12);
    let run = |seed, threads| {
        let options = RunOptions {
            seed,
            threads,
            budget: Budget::iterations(100),
        };
        pfsp::iterated_greedy(&inst, &IgParams::default(), &options)
    };
    let a = run(7, 1);
    assert_eq!(a, run(7, 1));
    assert_eq!(a, run(7, 2));
    // A different seed takes a different path (the evaluation count tracks it).
    assert_ne!(a.evaluations, run(8, 1).evaluations);
}

/// `starts` walks: walk 0 is the single walk's run (stream 0 of the seed), the others draw
/// from their own streams, the best is kept and re-scored, and the thread count changes
/// nothing.
#[test]
fn ig_walks_keep_the_best_whatever_the_threads() {
    let inst = pfsp::generate(30, 10, 5);
    let run = |starts, threads| {
        let options = RunOptions {
            seed: 3,
            threads,
            budget: Budget::iterations(40),
        };
        let params = IgParams {
            starts,
            ..IgParams::default()
        };
        pfsp::iterated_greedy(&inst, &params, &options)
    };
    let one = run(1, 1);
    let four = run(4, 1);
    assert_eq!(four, run(4, 3));
    assert!(four.objective <= one.objective);
    assert_eq!(inst.makespan(&four.solution), four.objective);
    permutation::check(&four.solution, inst.jobs).expect("IG returns a permutation");
    // The walks' work adds up: four walks of 40 iterations each.
    assert_eq!(four.iterations, 4 * one.iterations);
    // The second walk takes another path than the first (a copy of it would evaluate exactly
    // as many insertions).
    assert_ne!(run(2, 1).evaluations, 2 * one.evaluations);
}

#[test]
fn time_limits_stop_the_solvers() {
    let inst = pfsp::generate(100, 20, 12);
    let options = RunOptions {
        budget: Budget::time_limit(Duration::from_millis(200)),
        ..RunOptions::default()
    };
    let start = Instant::now();
    let g = pfsp::iterated_greedy(&inst, &IgParams::default(), &options);
    let t = pfsp::tabu(&inst, &TabuParams::default(), &options);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(g.iterations > 0 && t.iterations > 0);
    assert!(g.objective <= inst.makespan(&pfsp::neh(&inst)));
}

#[test]
fn single_job_and_single_machine_instances() {
    let one = Instance::new("one", 1, 3, vec![4, 5, 6]).expect("valid");
    let options = RunOptions::default();
    for outcome in [
        pfsp::tabu(&one, &TabuParams::default(), &options),
        pfsp::iterated_greedy(&one, &IgParams::default(), &options),
    ] {
        assert_eq!(outcome.solution, [0]);
        assert_eq!(outcome.objective, 15);
    }
    // One machine: every order has makespan = total time.
    let flat = Instance::new("flat", 5, 1, vec![3, 1, 4, 1, 5]).expect("valid");
    assert_eq!(
        pfsp::iterated_greedy(&flat, &IgParams::default(), &options).objective,
        14
    );
    assert_eq!(
        pfsp::tabu(&flat, &TabuParams::default(), &options).objective,
        14
    );
}
