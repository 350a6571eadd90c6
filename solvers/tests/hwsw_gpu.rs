//! GPTS on a real GPU, checked on the CPU: every variant (separate, compact, fused; tabu status
//! zero-copy or on the device; several block sizes and items per thread) takes exactly the
//! moves of the CPU `sts` from the same seed, including restarts and random picks among tabu
//! candidates, and every solution is re-scored from scratch (S + C <= R, exact H). Skipped with
//! a message on a machine without a GPU, unless MATS_REQUIRE_GPU=1, where it fails. gpts-multi
//! finds the exact optimum of tiny graphs (odd software counts included, which STS cannot
//! reach) and its answers re-score; it is deterministic for a seed. Skipped with
//! a message on a machine without a GPU, unless MATS_REQUIRE_GPU=1, where it fails.

mod common;

use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use solvers::hwsw::gpu::{self as hwsw_gpu, GpuAlgorithm, GpuParams};
use solvers::hwsw::{self, GeneratorSpec, Instance, RLevel, StsParams};
use solvers::run::{Budget, RunOptions};

fn gpu_or_skip(test: &str) -> Option<Gpu> {
    if !gpu::test_gpu_or_skip(test) {
        return None;
    }
    Some(Gpu::open(0).expect("GPU 0 opens"))
}

fn options(seed: u64, iterations: u64) -> RunOptions {
    RunOptions {
        seed,
        threads: 1,
        budget: Budget::iterations(iterations),
    }
}

/// Small graphs of every CCR x R case, a graph with no edges, and a tight one that restarts.
fn graphs() -> Vec<Instance> {
    let mut out = Vec::new();
    for (k, (n, m)) in [(9usize, 12usize), (30, 60), (61, 150), (200, 600)]
        .into_iter()
        .enumerate()
    {
        for ccr in [0.1, 1.0, 10.0] {
            for level in [RLevel::Low, RLevel::High] {
                let seed = 100 * k as u64 + (ccr * 10.0) as u64 + level as u64;
                out.push(hwsw::generate(&GeneratorSpec::new(n, m, ccr, level, seed)).unwrap());
            }
        }
    }
    out.push(hwsw::generate(&GeneratorSpec::new(40, 0, 1.0, RLevel::Low, 3)).unwrap());
    // R below every pair's software cost: no 2-flip is feasible after a restart's pair moves
    // back, so the search restarts and picks among few (tabu) candidates.
    let tight = hwsw::generate(&GeneratorSpec::new(25, 40, 1.0, RLevel::Low, 5)).unwrap();
    let s = tight.software().to_vec();
    let mut sorted = s.clone();
    sorted.sort_unstable();
    let r = sorted[0] + sorted[1] + sorted[2];
    let edges = tight.edges().iter().map(|&(u, v, _)| (u, v, 0)).collect();
    out.push(Instance::new("tight", s, tight.hardware().to_vec(), edges, r).unwrap());
    out
}

fn check_run(inst: &Instance, run: &hwsw_gpu::GpuRun, what: &str) {
    let objective = inst
        .objective(&run.outcome.solution)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(objective, run.outcome.objective, "{what}: H re-scored");
}

#[test]
fn every_variant_takes_the_sts_moves() {
    let Some(gpu) = gpu_or_skip("every_variant_takes_the_sts_moves") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let configs = [(256u32, 4u32), (64, 1), (128, 7)];
    let mut restarts_seen = 0usize;
    for inst in graphs() {
        for tabu_length in [20usize, 3] {
            let sts = StsParams {
                tabu_length,
                stall: 60,
                ..StsParams::default()
            };
            let seed = 7;
            let iterations = 150;
            let mut cpu_moves = Vec::new();
            let cpu = hwsw::sts_traced(
                &inst,
                &sts,
                &options(seed, iterations),
                Some(&mut cpu_moves),
            );
            for algorithm in GpuAlgorithm::GPTS {
                for zero_copy in [true, false] {
                    for (threads, items) in configs {
                        let params = GpuParams {
                            threads_per_block: threads,
                            items,
                            zero_copy,
                            tabu_length,
                            stall: sts.stall,
                            trace: true,
                            ..GpuParams::new(algorithm)
                        };
                        let what = format!(
                            "{} {} zero-copy {zero_copy} {threads}x{items} tabu {tabu_length}",
                            inst.name,
                            algorithm.name()
                        );
                        let run = hwsw_gpu::solve(
                            &gpu,
                            &cache,
                            &inst,
                            &params,
                            &options(seed, iterations),
                        )
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert_eq!(run.moves, cpu_moves, "{what}: moves");
                        assert_eq!(run.outcome.objective, cpu.objective, "{what}");
                        assert_eq!(run.outcome.iterations, cpu.iterations, "{what}");
                        assert_eq!(run.outcome.evaluations, cpu.evaluations, "{what}: restarts");
                        check_run(&inst, &run, &what);
                        if run.outcome.evaluations
                            > run.outcome.iterations * hwsw_gpu::candidates(inst.n())
                        {
                            restarts_seen += 1;
                        }
                    }
                }
            }
        }
    }
    // The tight graph restarts; the check above must have covered it.
    assert!(restarts_seen > 0, "no run restarted");
}

#[test]
fn paper_size_graph_matches_sts_and_rescores() {
    let Some(gpu) = gpu_or_skip("paper_size_graph_matches_sts_and_rescores") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    for (ccr, level) in [(0.1, RLevel::Low), (10.0, RLevel::High)] {
        let inst = hwsw::generate(&GeneratorSpec::new(2000, 6000, ccr, level, 1)).unwrap();
        let sts = StsParams::default();
        let mut cpu_moves = Vec::new();
        let cpu = hwsw::sts_traced(&inst, &sts, &options(3, 40), Some(&mut cpu_moves));
        for algorithm in GpuAlgorithm::GPTS {
            let params = GpuParams {
                trace: true,
                ..GpuParams::new(algorithm)
            };
            let run = hwsw_gpu::solve(&gpu, &cache, &inst, &params, &options(3, 40)).unwrap();
            assert_eq!(run.moves, cpu_moves, "{} {}", inst.name, algorithm.name());
            assert_eq!(run.outcome.objective, cpu.objective);
            check_run(&inst, &run, algorithm.name());
        }
    }
}

#[test]
fn largest_graph_runs() {
    let Some(gpu) = gpu_or_skip("largest_graph_runs") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let n = hwsw_gpu::MAX_NODES;
    let inst = hwsw::generate(&GeneratorSpec::new(n, 3 * n, 1.0, RLevel::Low, 1)).unwrap();
    let params = GpuParams::new(GpuAlgorithm::Fused);
    match params.check(&inst, &gpu.info) {
        Ok(()) => {
            let run = hwsw_gpu::solve(&gpu, &cache, &inst, &params, &options(1, 2)).unwrap();
            check_run(&inst, &run, "n = 10^5");
            assert_eq!(run.outcome.iterations, 2);
        }
        // A smaller GPU: the message names the memory limit.
        Err(e) => assert!(e.contains("GiB of device memory"), "{e}"),
    }
}

#[test]
fn gpts_multi_finds_tiny_optima_and_rescores() {
    let Some(gpu) = gpu_or_skip("gpts_multi_finds_tiny_optima_and_rescores") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let odd = Instance::new("odd", vec![1, 100], vec![50, 60], vec![], 10).unwrap();
    let mut cases = vec![odd];
    for n in [3usize, 6, 9, 12] {
        for seed in 0..6u64 {
            let m = (seed as usize * 5 + n) % (n * (n - 1) / 2 + 1);
            let ccr = [0.1, 1.0, 10.0][seed as usize % 3];
            let level = if seed % 2 == 0 {
                RLevel::Low
            } else {
                RLevel::High
            };
            cases.push(hwsw::generate(&GeneratorSpec::new(n, m, ccr, level, seed)).unwrap());
        }
    }
    let params = GpuParams {
        searches: 16,
        threads_per_block: 64,
        launch_iterations: 100,
        ..GpuParams::new(GpuAlgorithm::GptsMulti)
    };
    let mut odd_optima = 0;
    for inst in &cases {
        let run = hwsw_gpu::solve(&gpu, &cache, inst, &params, &options(5, 300)).unwrap();
        check_run(inst, &run, &inst.name);
        assert_eq!(
            run.outcome.objective,
            common::hwsw_optimum(inst),
            "{}",
            inst.name
        );
        if run.outcome.solution.iter().sum::<usize>() % 2 == 1 {
            odd_optima += 1;
        }
    }
    assert!(
        odd_optima > 0,
        "no optimum with an odd software count was found"
    );
    // Deterministic for a seed under an iteration budget.
    let inst = hwsw::generate(&GeneratorSpec::new(500, 1500, 1.0, RLevel::Low, 4)).unwrap();
    let a = hwsw_gpu::solve(&gpu, &cache, &inst, &params, &options(9, 400)).unwrap();
    let b = hwsw_gpu::solve(&gpu, &cache, &inst, &params, &options(9, 400)).unwrap();
    check_run(&inst, &a, "500 nodes");
    assert_eq!(a.outcome.solution, b.outcome.solution);
    // Better than STS's answer on the same graph with the same iterations per search.
    let sts = hwsw::sts(&inst, &StsParams::default(), &options(9, 400));
    assert!(
        a.outcome.objective <= sts.objective,
        "{} > sts {}",
        a.outcome.objective,
        sts.objective
    );
    // `--adapt`: restarts raced across the searches; the answer re-scores and the race is
    // reported (launches of 2 iterations: many launches, whether or not a round completes).
    let adapting = GpuParams {
        adapt: true,
        launch_iterations: 2,
        restart_stall: 1,
        ..params
    };
    let run = hwsw_gpu::solve(&gpu, &cache, &inst, &adapting, &options(9, 400)).unwrap();
    check_run(&inst, &run, "500 nodes, adapt");
    let text = run.adaptation.expect("an adapting run reports its arms");
    assert!(text.starts_with("adapt: searches per arm"), "{text}");
}
