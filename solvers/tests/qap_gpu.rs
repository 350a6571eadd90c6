//! The QAP GPU variants on a real GPU, checked on the CPU: valid permutations whose CPU score
//! equals the GPU's cost, true 2-opt local optima, and the GPU `2opt` equal to the CPU 2-opt
//! from the same start. Skipped with a message on a machine without a GPU.

mod common;

use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use solvers::permutation;
use solvers::qap::gpu::{self as qap_gpu, GpuAlgorithm, GpuParams};
use solvers::qap::{self, two_opt::local_search, Instance};
use solvers::run::{Budget, RunOptions};

fn gpu_or_skip(test: &str) -> Option<Gpu> {
    gpu::test_gpu_or_skip(test).then(|| Gpu::open(0).expect("GPU 0 opens"))
}

const INSTANCES: [&str; 6] = ["tai12a", "chr12a", "tai20a", "lipa20a", "tai40a", "bur26a"];

fn load(name: &str) -> Instance {
    qap::read(&common::repo_data().join(format!("qap/{name}.dat"))).unwrap()
}

fn params(algorithm: GpuAlgorithm) -> GpuParams {
    let mut p = GpuParams::new(algorithm);
    if algorithm == GpuAlgorithm::RotsBlock {
        p.solutions = 16;
        p.threads_per_block = 128;
        p.iterations = Some(3000);
    } else {
        p.solutions = 512;
        p.threads_per_block = 64;
        if algorithm == GpuAlgorithm::Tabu {
            p.iterations = Some(200);
        }
    }
    p
}

fn is_two_opt_local_optimum(inst: &Instance, p: &[usize]) -> bool {
    let cost = inst.cost(p);
    (0..inst.n()).all(|r| {
        (r + 1..inst.n()).all(|s| {
            let mut q = p.to_vec();
            q.swap(r, s);
            inst.cost(&q) >= cost
        })
    })
}

#[test]
fn every_variant_returns_a_rescored_permutation() {
    let Some(gpu) = gpu_or_skip("every_variant_returns_a_rescored_permutation") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let bks = solvers::bks::BestKnown::embedded();
    for name in INSTANCES {
        let inst = load(name);
        for algorithm in GpuAlgorithm::ALL {
            let run = qap_gpu::solve(
                &gpu,
                &cache,
                &inst,
                &params(algorithm),
                &RunOptions {
                    seed: 11,
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{name} {}: {e}", algorithm.name()));
            let p = &run.outcome.solution;
            permutation::check(p, inst.n())
                .unwrap_or_else(|e| panic!("{name} {}: {e}", algorithm.name()));
            assert_eq!(
                inst.cost(p),
                run.outcome.objective,
                "{name} {}: GPU cost differs from the CPU score",
                algorithm.name()
            );
            let best = bks.get(name).unwrap().value;
            assert!(
                run.outcome.objective >= best,
                "{name} {}: below the best known?",
                algorithm.name()
            );
            if matches!(
                algorithm,
                GpuAlgorithm::TwoOpt | GpuAlgorithm::TwoOptShared | GpuAlgorithm::TwoOptDyn
            ) {
                assert!(
                    is_two_opt_local_optimum(&inst, p),
                    "{name} {}: not a 2-opt local optimum",
                    algorithm.name()
                );
            }
            println!(
                "{name:8} {:12} cost {:>9} gap {:>6.2}% kernel {:.4} s, {} launches, {} regs",
                algorithm.name(),
                run.outcome.objective,
                100.0 * (run.outcome.objective - best) as f64 / best as f64,
                run.kernel_seconds,
                run.launches,
                run.attributes.registers
            );
        }
    }
}

#[test]
fn gpu_two_opt_equals_cpu_two_opt_from_the_same_start() {
    let Some(gpu) = gpu_or_skip("gpu_two_opt_equals_cpu_two_opt_from_the_same_start") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    for name in INSTANCES {
        let inst = load(name);
        let mut results = Vec::new();
        for algorithm in [
            GpuAlgorithm::TwoOpt,
            GpuAlgorithm::TwoOptShared,
            GpuAlgorithm::TwoOptDyn,
        ] {
            let run = qap_gpu::solve(
                &gpu,
                &cache,
                &inst,
                &params(algorithm),
                &RunOptions {
                    seed: 5,
                    ..Default::default()
                },
            )
            .unwrap();
            let mut p = qap_gpu::start_permutation(inst.n(), 5, run.best_index);
            let cpu = local_search(&inst, &mut p, &Budget::default().start(u64::MAX));
            assert_eq!(
                (cpu.cost, &p),
                (run.outcome.objective, &run.outcome.solution),
                "{name} {}: GPU and CPU 2-opt differ from start {}",
                algorithm.name(),
                run.best_index
            );
            results.push((
                run.outcome.objective,
                run.outcome.solution,
                run.outcome.iterations,
            ));
        }
        // Same starts, same moves, same tie-breaking: the three 2-opt variants agree entirely.
        assert_eq!(results[0], results[1], "{name}: 2opt vs 2opt-shared");
        assert_eq!(results[0], results[2], "{name}: 2opt vs 2opt-dyn");
    }
}

#[test]
fn iteration_budget_and_time_limit_are_honoured() {
    let Some(gpu) = gpu_or_skip("iteration_budget_and_time_limit_are_honoured") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let inst = load("tai40a");
    let mut p = params(GpuAlgorithm::TwoOpt);
    p.iterations = Some(3);
    let run = qap_gpu::solve(&gpu, &cache, &inst, &p, &RunOptions::default()).unwrap();
    assert_eq!(
        run.outcome.iterations,
        3 * 512,
        "each of 512 solutions does exactly 3 scans"
    );
    let rots = params(GpuAlgorithm::RotsBlock);
    let options = RunOptions {
        budget: Budget::time_limit(std::time::Duration::from_millis(500)),
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let run = qap_gpu::solve(
        &gpu,
        &cache,
        &inst,
        &GpuParams {
            iterations: None,
            ..rots
        },
        &options,
    )
    .unwrap();
    let wall = started.elapsed().as_secs_f64();
    assert!(wall < 2.0, "a 0.5 s limit took {wall:.2} s");
    assert!(
        run.launches > 1,
        "time-limited rots-block continues over several launches"
    );
    assert_eq!(inst.cost(&run.outcome.solution), run.outcome.objective);
}

#[test]
fn configurations_the_kernels_cannot_run_are_refused_clearly() {
    let Some(gpu) = gpu_or_skip("configurations_the_kernels_cannot_run_are_refused_clearly") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let inst = load("tai12a");
    let mut p = params(GpuAlgorithm::TwoOpt);
    p.solutions = 100;
    let e = qap_gpu::solve(&gpu, &cache, &inst, &p, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("divisible by threads per block"), "{e}");
    let mut p = params(GpuAlgorithm::TwoOpt);
    p.threads_per_block = 48;
    let e = qap_gpu::solve(&gpu, &cache, &inst, &p, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("multiple of 32"), "{e}");
}

#[test]
fn rots_block_shared_and_global_kernels_take_the_same_moves() {
    let Some(gpu) = gpu_or_skip("rots_block_shared_and_global_kernels_take_the_same_moves") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let optin = gpu.info.max_shared_bytes_per_block_optin as usize;
    // Symmetric (tai*), asymmetric flows (bur26a) and nonzero diagonals (lipa20a, chr12a), with
    // block sizes below and above n and one splitting the touching pairs many ways. The
    // scaled copies have deltas past int32, so the fast kernel keeps them in int64.
    for (name, threads, narrow) in [
        ("tai12a", 32, true),
        ("tai20a", 128, true),
        ("bur26a", 96, true),
        ("lipa20a", 256, true),
        ("chr12a", 1024, true),
        ("tai40a", 32, true),
        ("tai20a x 5000", 128, false),
        ("bur26a x 5000", 96, false),
    ] {
        let inst = match name.split_once(" x ") {
            None => load(name),
            Some((base, factor)) => {
                let base = load(base);
                let factor: i64 = factor.parse().unwrap();
                let scaled = base.a_matrix().iter().map(|&x| x * factor).collect();
                Instance::new(name, base.n(), scaled, base.b_matrix().to_vec()).unwrap()
            }
        };
        let mut p = params(GpuAlgorithm::RotsBlock);
        p.threads_per_block = threads;
        p.iterations = Some(2000);
        // Restarts depend on launch timing; the trajectories alone must agree.
        p.restart_stall = 0;
        assert_eq!(
            p.rots_kernel(&inst, optin),
            qap_gpu::RotsKernel::Shared {
                symmetric: !name.starts_with("bur") && !name.starts_with("lipa"),
                narrow
            },
            "{name} fits in shared memory"
        );
        let options = RunOptions {
            seed: 5,
            ..Default::default()
        };
        let fast = qap_gpu::solve(&gpu, &cache, &inst, &p, &options).unwrap();
        let global = qap_gpu::solve(
            &gpu,
            &cache,
            &inst,
            &GpuParams {
                rots_shared: false,
                ..p.clone()
            },
            &options,
        )
        .unwrap();
        assert_eq!(inst.cost(&fast.outcome.solution), fast.outcome.objective);
        assert_eq!(
            (fast.outcome.objective, &fast.outcome.solution),
            (global.outcome.objective, &global.outcome.solution),
            "{name}, {threads} threads: the two kernels diverged"
        );
        println!(
            "{name:8} {threads:4} threads: cost {} (both kernels); kernel {:.4} s shared, {:.4} s global",
            fast.outcome.objective, fast.kernel_seconds, global.kernel_seconds
        );
    }
}
