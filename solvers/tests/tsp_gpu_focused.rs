//! The GPU focused ant colony (`kernels/tsp/focused.cu`) on a real GPU, checked on the CPU:
//! every ant's tour after an iteration is a permutation whose reported length is the CPU's
//! exact length (the kernel computes it incrementally from the changed edges), on coordinate
//! instances of three distance types and on matrix ones, on nearest and quadrant candidate
//! lists, with and without Or-opt and with
//! both GPU source rules, and with merging (whose merged tours the run's last check re-scores:
//! a merge that broke a tour would fail it; merges are counted); a run is a pure function of its
//! seed; and the colony improves on its first local optimum and reaches the optimum of small
//! instances; `--adapt` spreads the ants over numbers of new edges and moves them (answer
//! re-scored). Skipped with a message on a
//! machine without a GPU, unless MATS_REQUIRE_GPU=1, where it fails.

mod common;

use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use solvers::run::{Budget, RunOptions};
use solvers::tsp::focused::SourceRule;
use solvers::tsp::gpu::{focused, GpuParams};
use solvers::tsp::{EdgeWeightType, ListRule};

use common::{random_tsp as random_instance, shipped_tsp as shipped};

fn options(seed: u64, iterations: u64) -> RunOptions {
    RunOptions {
        seed,
        budget: Budget::iterations(iterations),
        ..RunOptions::default()
    }
}

#[test]
fn gpu_focused_ants_report_exact_lengths_of_permutations() {
    if !gpu::test_gpu_or_skip("gpu_focused_ants_report_exact_lengths_of_permutations") {
        return;
    }
    let gpu = Gpu::open(0).expect("GPU 0 opens");
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    let instances = [
        random_instance(EdgeWeightType::Euc2d, 300, 1),
        random_instance(EdgeWeightType::Ceil2d, 257, 2),
        random_instance(EdgeWeightType::Att, 130, 3),
        random_instance(EdgeWeightType::Euc2d, 3000, 4),
        shipped("att48"),
        shipped("berlin52"),
        shipped("gr17"),
    ];
    for inst in &instances {
        for (or_opt, source, min_new, merge, lists) in [
            (true, SourceRule::Best, 8, false, ListRule::Nearest),
            (false, SourceRule::Iteration, 3, false, ListRule::Nearest),
            (true, SourceRule::Iteration, 40, false, ListRule::Quadrant),
            (true, SourceRule::Best, 8, true, ListRule::Nearest),
            (true, SourceRule::Iteration, 4, true, ListRule::Quadrant),
        ] {
            let mut params = GpuParams::focused();
            // 37 ants: the last block is partial.
            params.ants = Some(37);
            params.focused.or_opt = or_opt;
            params.focused.source = source;
            params.focused.min_new_edges = min_new;
            params.focused.merge = merge;
            params.focused.lists = lists;
            let mut prepared = focused::prepare(&gpu, &cache, inst, &params).expect("prepare");
            let run = prepared.run(&gpu, &options(7, 25)).expect("run");
            let case = format!(
                "{} or_opt={or_opt} {source:?} min_new={min_new} merge={merge} {lists:?}",
                inst.name
            );
            assert_eq!(
                run.outcome.objective,
                inst.tour_length(&run.outcome.solution),
                "{case}"
            );
            if merge && inst.n() >= 3000 {
                assert!(
                    prepared.merged_ants() > 0,
                    "{case}: no merge in 25 iterations"
                );
            }
            for (a, (len, tour)) in prepared.ants_to_host().unwrap().into_iter().enumerate() {
                solvers::permutation::check(&tour, inst.n())
                    .unwrap_or_else(|e| panic!("{case}: ant {a}: {e}"));
                assert_eq!(len, inst.tour_length(&tour), "{case}: ant {a}");
            }
        }
    }
}

#[test]
fn gpu_focused_runs_are_a_function_of_the_seed() {
    if !gpu::test_gpu_or_skip("gpu_focused_runs_are_a_function_of_the_seed") {
        return;
    }
    let gpu = Gpu::open(0).expect("GPU 0 opens");
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    let inst = random_instance(EdgeWeightType::Euc2d, 2000, 9);
    let mut params = GpuParams::focused();
    params.ants = Some(256);
    let mut prepared = focused::prepare(&gpu, &cache, &inst, &params).expect("prepare");
    let a = prepared.run(&gpu, &options(3, 30)).expect("run");
    let b = prepared.run(&gpu, &options(3, 30)).expect("run");
    let c = prepared.run(&gpu, &options(4, 30)).expect("run");
    assert_eq!(a.outcome.solution, b.outcome.solution);
    assert_eq!(a.outcome.objective, b.outcome.objective);
    assert_ne!(
        a.outcome.solution, c.outcome.solution,
        "another seed, another search"
    );
}

#[test]
fn gpu_focused_improves_its_first_tour_and_solves_small_instances() {
    if !gpu::test_gpu_or_skip("gpu_focused_improves_its_first_tour_and_solves_small_instances") {
        return;
    }
    let gpu = Gpu::open(0).expect("GPU 0 opens");
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    // The first iteration's best is no worse than the CPU's first local optimum, which the
    // colony starts from; 300 iterations must find better.
    let inst = random_instance(EdgeWeightType::Euc2d, 5000, 11);
    let params = GpuParams::focused();
    let mut prepared = focused::prepare(&gpu, &cache, &inst, &params).expect("prepare");
    let first = prepared
        .run(&gpu, &options(1, 1))
        .expect("run")
        .outcome
        .objective;
    let later = prepared
        .run(&gpu, &options(1, 300))
        .expect("run")
        .outcome
        .objective;
    assert!(later < first, "300 iterations: {later} vs first {first}");
    // berlin52's optimum is 7542, att48's 10628.
    for (name, optimum) in [("berlin52", 7542), ("att48", 10628)] {
        let inst = shipped(name);
        let mut params = GpuParams::focused();
        params.ants = Some(128);
        let mut prepared = focused::prepare(&gpu, &cache, &inst, &params).expect("prepare");
        let run = prepared.run(&gpu, &options(5, 200)).expect("run");
        assert_eq!(run.outcome.objective, optimum, "{name}");
    }
}

#[test]
fn gpu_focused_adapt_races_the_new_edges_and_rescores() {
    if !gpu::test_gpu_or_skip("gpu_focused_adapt_races_the_new_edges_and_rescores") {
        return;
    }
    let gpu = Gpu::open(0).expect("GPU 0 opens");
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    let inst = random_instance(EdgeWeightType::Euc2d, 3000, 12);
    let mut params = GpuParams::focused();
    params.ants = Some(512);
    params.focused.adapt = true;
    let mut prepared = focused::prepare(&gpu, &cache, &inst, &params).expect("prepare");
    // Rounds last a quarter second: 2 s give the race about eight of them, early in the run,
    // when improvements are frequent.
    let timed = RunOptions {
        seed: 2,
        budget: Budget::time_limit(std::time::Duration::from_secs(2)),
        ..RunOptions::default()
    };
    let run = prepared.run(&gpu, &timed).expect("run");
    assert_eq!(
        run.outcome.objective,
        inst.tour_length(&run.outcome.solution)
    );
    let summary = run
        .adaptation
        .expect("an adapting run says where its ants are");
    // "adapt: ants per arm at the end: K x (16 new edges), ...; M moved"
    let arms: Vec<(usize, usize)> = summary
        .split(": ")
        .nth(2)
        .expect("arms")
        .split(';')
        .next()
        .expect("arms")
        .split(", ")
        .map(|arm| {
            let (k, rest) = arm.split_once(" x (").expect("K x (E new edges)");
            let e = rest.split(' ').next().expect("E");
            (k.parse().expect("K"), e.parse().expect("E"))
        })
        .collect();
    let edges: Vec<usize> = arms.iter().map(|&(_, e)| e).collect();
    assert_eq!(edges, focused::edge_arms(16), "{summary}");
    assert_eq!(
        arms.iter().map(|&(k, _)| k).sum::<usize>(),
        512,
        "{summary}"
    );
    let moved: usize = summary
        .rsplit("; ")
        .next()
        .and_then(|m| m.split(' ').next())
        .and_then(|m| m.parse().ok())
        .expect("M moved");
    assert!(moved > 0, "the race never moved an ant: {summary}");
    // Every ant's last tour is still a permutation of exact length whatever its arm.
    for (a, (len, tour)) in prepared.ants_to_host().unwrap().into_iter().enumerate() {
        solvers::permutation::check(&tour, inst.n()).unwrap_or_else(|e| panic!("ant {a}: {e}"));
        assert_eq!(len, inst.tour_length(&tour), "ant {a}");
    }
    // Without --adapt no race runs.
    params.focused.adapt = false;
    let mut plain = focused::prepare(&gpu, &cache, &inst, &params).expect("prepare");
    assert!(plain
        .run(&gpu, &options(2, 3))
        .expect("run")
        .adaptation
        .is_none());
}
