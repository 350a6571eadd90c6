//! The flowshop GPU variants on a real GPU, checked on the CPU: `tabu-full` and `tabu-prefix`
//! take exactly the CPU tabu's moves from NEH (move by move, every makespan re-scored from
//! scratch), and `ig-block` returns a permutation whose CPU makespan equals the GPU's. Skipped
//! with a message on a machine without a GPU, unless MATS_REQUIRE_GPU=1, where it fails.

use std::path::Path;
use std::time::Duration;

use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use solvers::permutation;
use solvers::pfsp::gpu::{self as pfsp_gpu, GpuAlgorithm, GpuParams};
use solvers::pfsp::{self, Instance, TabuParams};
use solvers::run::{Budget, RunOptions};

const REPO_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/pfsp");

fn gpu_or_skip(test: &str) -> Option<Gpu> {
    if !gpu::driver_available() || gpu::device_count().map_or(true, |n| n == 0) {
        if std::env::var("MATS_REQUIRE_GPU").is_ok_and(|v| v == "1") {
            panic!("{test}: MATS_REQUIRE_GPU=1 but no GPU is available");
        }
        println!("{test}: skipped: no GPU on this machine");
        return None;
    }
    Some(Gpu::open(0).expect("GPU 0 opens"))
}

fn taillard(file: &str, index: usize) -> Instance {
    pfsp::read(&Path::new(REPO_DATA).join(file), Some(index)).expect("shipped instance")
}

/// Times within int32 whose sums overflow it: the int64 kernels run.
fn wide_instance() -> Instance {
    let base = pfsp::generate(12, 4, 7);
    let times: Vec<i64> = base
        .times_machine_major()
        .iter()
        .map(|&t| t * 2_000_000)
        .collect();
    Instance::new("wide12x4", 12, 4, times).unwrap()
}

fn instances() -> Vec<Instance> {
    vec![
        taillard("tai20_5.txt", 1),
        taillard("tai20_10.txt", 3),
        pfsp::generate(7, 3, 11),
        pfsp::generate(50, 10, 12345),
        pfsp::generate(33, 37, 99),
        wide_instance(),
    ]
}

#[test]
fn tabu_variants_take_the_cpu_moves() {
    let Some(gpu) = gpu_or_skip("tabu_variants_take_the_cpu_moves") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    for inst in instances() {
        assert_eq!(
            pfsp_gpu::completion_fits_i32(&inst),
            inst.name != "wide12x4",
            "{}",
            inst.name
        );
        for tenure in [200usize, 5, 0] {
            let iterations = 60;
            let (cpu, cpu_moves) = pfsp::tabu_trace(&inst, &TabuParams { tenure }, iterations);
            for algorithm in [GpuAlgorithm::TabuFull, GpuAlgorithm::TabuPrefix] {
                let params = GpuParams {
                    tenure,
                    trace: true,
                    threads_per_block: 64,
                    ..GpuParams::new(algorithm)
                };
                let run = pfsp_gpu::solve(
                    &gpu,
                    &cache,
                    &inst,
                    &params,
                    &RunOptions {
                        budget: Budget::iterations(iterations),
                        ..Default::default()
                    },
                )
                .unwrap_or_else(|e| panic!("{} {}: {e}", inst.name, algorithm.name()));
                let what = format!("{} {} tenure {tenure}", inst.name, algorithm.name());
                assert_eq!(run.moves.len(), cpu_moves.len(), "{what}: iterations");
                // Replay on the CPU: every makespan the GPU reported is re-scored exactly.
                let mut sequence = pfsp::neh(&inst);
                for (step, (g, c)) in run.moves.iter().zip(&cpu_moves).enumerate() {
                    assert_eq!(g, c, "{what}: move {step} differs");
                    sequence.swap(g.i, g.j);
                    assert_eq!(
                        inst.makespan(&sequence),
                        g.makespan,
                        "{what}: move {step} mis-scored"
                    );
                }
                permutation::check(&run.outcome.solution, inst.jobs).unwrap();
                assert_eq!(inst.makespan(&run.outcome.solution), run.outcome.objective);
                assert_eq!(run.outcome.objective, cpu.objective, "{what}");
                assert_eq!(run.outcome.solution, cpu.solution, "{what}");
                println!(
                    "{what}: {} moves equal, best {}, {} launches, kernel {:.4} s",
                    run.moves.len(),
                    run.outcome.objective,
                    run.launches,
                    run.kernel_seconds
                );
            }
        }
    }
}

#[test]
fn tabu_variants_honour_a_time_limit() {
    let Some(gpu) = gpu_or_skip("tabu_variants_honour_a_time_limit") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let inst = pfsp::generate(100, 20, 5);
    for algorithm in [GpuAlgorithm::TabuFull, GpuAlgorithm::TabuPrefix] {
        let prepared = pfsp_gpu::prepare(&gpu, &cache, &inst, &GpuParams::new(algorithm)).unwrap();
        let started = std::time::Instant::now();
        let run = prepared
            .run(
                &gpu,
                &RunOptions {
                    budget: Budget::time_limit(Duration::from_millis(300)),
                    ..Default::default()
                },
            )
            .unwrap();
        let wall = started.elapsed().as_secs_f64();
        assert!(
            wall < 1.0,
            "{}: ran {wall:.2} s for 0.3 s",
            algorithm.name()
        );
        assert!(run.outcome.iterations > 0);
        assert_eq!(inst.makespan(&run.outcome.solution), run.outcome.objective);
    }
}

#[test]
fn ig_block_returns_rescored_improvements() {
    let Some(gpu) = gpu_or_skip("ig_block_returns_rescored_improvements") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let bks = solvers::bks::BestKnown::embedded();
    for inst in instances() {
        for threads in [64u32, 128] {
            let params = GpuParams {
                threads_per_block: threads,
                blocks: 40,
                destruction: 4.min(inst.jobs - 1),
                ..GpuParams::new(GpuAlgorithm::IgBlock)
            };
            let run = pfsp_gpu::solve(
                &gpu,
                &cache,
                &inst,
                &params,
                &RunOptions {
                    seed: 3,
                    budget: Budget::iterations(30),
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{} ig-block: {e}", inst.name));
            let p = &run.outcome.solution;
            permutation::check(p, inst.jobs).unwrap_or_else(|e| panic!("{}: {e}", inst.name));
            assert_eq!(inst.makespan(p), run.outcome.objective, "{}", inst.name);
            let neh = inst.makespan(&pfsp::neh(&inst));
            assert!(
                run.outcome.objective <= neh,
                "{}: worse than NEH",
                inst.name
            );
            if let Some(best) = bks.get(&inst.name) {
                assert!(run.outcome.objective >= best.value);
            }
            assert!(run.outcome.evaluations > 0);
            println!(
                "{} ig-block x{threads}: {} (NEH {neh}), {} launches",
                inst.name, run.outcome.objective, run.launches
            );
        }
    }
    // Enumerable: 7 jobs, the optimum by brute force.
    let inst = pfsp::generate(7, 3, 11);
    let optimum = permutations(7)
        .iter()
        .map(|p| inst.makespan(p))
        .min()
        .unwrap();
    let run = pfsp_gpu::solve(
        &gpu,
        &cache,
        &inst,
        &GpuParams {
            blocks: 8,
            ..GpuParams::new(GpuAlgorithm::IgBlock)
        },
        &RunOptions {
            budget: Budget::iterations(50),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(run.outcome.objective, optimum);
}

#[test]
fn ig_block_time_limit_and_large_instances() {
    let Some(gpu) = gpu_or_skip("ig_block_time_limit_and_large_instances") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let inst = pfsp::generate(100, 20, 77);
    let started = std::time::Instant::now();
    let run = pfsp_gpu::solve(
        &gpu,
        &cache,
        &inst,
        &GpuParams::new(GpuAlgorithm::IgBlock),
        &RunOptions {
            budget: Budget::time_limit(Duration::from_millis(500)),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(started.elapsed().as_secs_f64() < 3.0);
    assert_eq!(inst.makespan(&run.outcome.solution), run.outcome.objective);
    // 800 x 60 (VRF's largest): ig-block says it does not fit; the tabu variants run.
    let big = pfsp::generate(800, 60, 1);
    let err = pfsp_gpu::prepare(&gpu, &cache, &big, &GpuParams::new(GpuAlgorithm::IgBlock))
        .err()
        .expect("800 x 60 does not fit ig-block's shared memory");
    assert!(err.to_string().contains("shared memory"), "{err}");
    for algorithm in [GpuAlgorithm::TabuFull, GpuAlgorithm::TabuPrefix] {
        let run = pfsp_gpu::solve(
            &gpu,
            &cache,
            &big,
            &GpuParams::new(algorithm),
            &RunOptions {
                budget: Budget::iterations(2),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(big.makespan(&run.outcome.solution), run.outcome.objective);
    }
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut p: Vec<usize> = (0..n).collect();
    heap(&mut p, n, &mut out);
    out
}

fn heap(p: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if k <= 1 {
        out.push(p.clone());
        return;
    }
    for i in 0..k {
        heap(p, k - 1, out);
        let j = if k % 2 == 0 { i } else { 0 };
        p.swap(j, k - 1);
    }
}
