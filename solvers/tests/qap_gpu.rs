//! The QAP GPU variants on a real GPU, checked on the CPU: valid permutations whose CPU score
//! equals the GPU's cost, true 2-opt local optima, and the GPU `2opt` equal to the CPU 2-opt
//! from the same start. Skipped with a message on a machine without a GPU.

mod common;

use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use solvers::permutation;
use solvers::qap::gpu::{self as qap_gpu, GpuAlgorithm, GpuParams, RotsLayout};
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
        p.restart_stall = Some(0);
        let m16 = qap_gpu::matrices_fit_i16(&inst);
        assert!(
            matches!(
                p.rots_kernel(&inst, optin),
                qap_gpu::RotsKernel::Shared { symmetric, narrow: nw, m16: m, .. }
                    if symmetric == (!name.starts_with("bur") && !name.starts_with("lipa"))
                        && nw == narrow && m == m16
            ),
            "{name} fits in shared memory"
        );
        let options = RunOptions {
            seed: 5,
            ..Default::default()
        };
        let fast = qap_gpu::solve(&gpu, &cache, &inst, &p, &options).unwrap();
        assert_eq!(inst.cost(&fast.outcome.solution), fast.outcome.objective);
        // The same search in every other layout: int32 matrices in shared memory, deltas in
        // shared memory with the rest global (`rots_shared = false` and `global-tabu`), and
        // everything in global memory (`global`, what n > ~240 runs).
        let others = [
            (
                "shared int32",
                GpuParams {
                    narrow_matrices: false,
                    ..p.clone()
                },
            ),
            (
                "global-tabu",
                GpuParams {
                    rots_shared: false,
                    ..p.clone()
                },
            ),
            (
                "global-tabu",
                GpuParams {
                    layout: RotsLayout::GlobalTabu,
                    ..p.clone()
                },
            ),
            (
                "global",
                GpuParams {
                    layout: RotsLayout::Global,
                    ..p.clone()
                },
            ),
        ];
        let mut times = vec![("shared", fast.kernel_seconds)];
        for (layout, other) in others {
            let run = qap_gpu::solve(&gpu, &cache, &inst, &other, &options).unwrap();
            assert_eq!(
                (fast.outcome.objective, &fast.outcome.solution),
                (run.outcome.objective, &run.outcome.solution),
                "{name}, {threads} threads: layout {layout} diverged from shared (int16: {m16})"
            );
            times.push((layout, run.kernel_seconds));
        }
        println!(
            "{name:8} {threads:4} threads: cost {} in every layout (int16 matrices: {m16}); kernel s {times:?}",
            fast.outcome.objective
        );
    }
}

/// Sizes past shared memory run in the `global` layout: QAPLIB's largest (tai256c, n = 256)
/// and generated instances up to n = 512, each answer re-scored on the CPU and no worse than
/// its start.
#[test]
fn rots_block_runs_past_shared_memory_up_to_n_512() {
    let Some(gpu) = gpu_or_skip("rots_block_runs_past_shared_memory_up_to_n_512") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let optin = gpu.info.max_shared_bytes_per_block_optin as usize;
    let mut instances = vec![
        qap::generate(300, 1).unwrap(),
        qap::generate(512, 2).unwrap(),
    ];
    if let Some(data) = common::shared_data("rots_block_runs_past_shared_memory_up_to_n_512") {
        instances.push(qap::read(&data.join("qaplib/instances/tai256c.dat")).unwrap());
    }
    for inst in instances {
        let p = GpuParams::new(GpuAlgorithm::RotsBlock);
        assert_eq!(
            p.rots_kernel(&inst, optin).layout(),
            RotsLayout::Global,
            "{}",
            inst.name
        );
        let options = RunOptions {
            seed: 3,
            budget: Budget::time_limit(std::time::Duration::from_millis(1500)),
            ..Default::default()
        };
        let run = qap_gpu::solve(&gpu, &cache, &inst, &p, &options).unwrap();
        permutation::check(&run.outcome.solution, inst.n()).unwrap();
        assert_eq!(inst.cost(&run.outcome.solution), run.outcome.objective);
        let start = inst.cost(&qap_gpu::start_permutation(inst.n(), 3, 0));
        assert!(
            run.outcome.objective < start,
            "{}: no improvement",
            inst.name
        );
        println!(
            "{}: n = {}, layout global, {} blocks x {}, {} iterations per block, cost {} (start {start})",
            inst.name,
            inst.n(),
            run.launch.grid.0,
            run.launch.block.0,
            run.outcome.iterations / u64::from(run.launch.grid.0),
            run.outcome.objective
        );
    }
}

/// Every QAPLIB instance (136, up to tai256c) runs with the default `mats solve --backend gpu`
/// configuration under a short limit, and every answer is re-scored on the CPU and is at least
/// the best-known value. Needs ../shared/data; the GPU machine's runner recreates it.
#[test]
fn rots_block_runs_every_qaplib_instance() {
    let Some(gpu) = gpu_or_skip("rots_block_runs_every_qaplib_instance") else {
        return;
    };
    let Some(data) = common::shared_data("rots_block_runs_every_qaplib_instance") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let optin = gpu.info.max_shared_bytes_per_block_optin as usize;
    // name,family,n,bks,... (../shared/data/qaplib/bks.csv)
    let table = std::fs::read_to_string(data.join("qaplib/bks.csv")).unwrap();
    let bks: std::collections::HashMap<String, i64> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split(',').collect();
            Some((cols.first()?.to_string(), cols.get(3)?.parse().ok()?))
        })
        .collect();
    let mut names: Vec<_> = std::fs::read_dir(data.join("qaplib/instances"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "dat"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 136, "QAPLIB has 136 instances");
    let mut layouts = std::collections::BTreeMap::new();
    let mut gaps = Vec::new();
    for path in &names {
        let inst = qap::read(path).unwrap();
        let p = GpuParams::new(GpuAlgorithm::RotsBlock);
        let options = RunOptions {
            seed: 1,
            budget: Budget::time_limit(std::time::Duration::from_millis(150)),
            ..Default::default()
        };
        let run = qap_gpu::solve(&gpu, &cache, &inst, &p, &options)
            .unwrap_or_else(|e| panic!("{}: {e}", inst.name));
        permutation::check(&run.outcome.solution, inst.n()).unwrap();
        let cost = inst.cost(&run.outcome.solution);
        assert_eq!(
            cost, run.outcome.objective,
            "{}: GPU cost differs",
            inst.name
        );
        let layout = p.rots_kernel(&inst, optin).layout();
        *layouts.entry(layout.name()).or_insert(0) += 1;
        let best = *bks
            .get(&inst.name)
            .unwrap_or_else(|| panic!("{} is not in bks.csv", inst.name));
        assert!(
            cost >= best,
            "{}: {cost} below the best known {best}",
            inst.name
        );
        gaps.push((
            inst.name.clone(),
            100.0 * (cost - best) as f64 / best.max(1) as f64,
        ));
    }
    println!("136 QAPLIB instances solved and re-scored; layouts {layouts:?}");
    let worst = gaps.iter().fold(
        ("", 0.0f64),
        |w, (n, g)| if *g > w.1 { (n.as_str(), *g) } else { w },
    );
    println!(
        "gap after 0.15 s: mean {:.3}%, worst {} {:.3}%",
        gaps.iter().map(|g| g.1).sum::<f64>() / gaps.len() as f64,
        worst.0,
        worst.1
    );
}

/// The adaptive (breakout) perturbation, path relinking, crossover and `--adapt` run and their answers
/// re-score on the CPU. (The schedule is checked against its rule in qap_gpu_host.rs, the
/// relinking walk against a from-scratch walk in solvers::qap::gpu::relink, the crossover and
/// the restarts' starts in solvers::qap::gpu::{crossover, rots_block}.)
#[test]
fn rots_block_adaptive_perturbation_and_relinking_run() {
    let Some(gpu) = gpu_or_skip("rots_block_adaptive_perturbation_and_relinking_run") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let inst = load("tai40a");
    let p = GpuParams {
        perturbation_max: 0.5,
        restart_stall: Some(1),
        launch_iterations: 2,
        ..GpuParams::new(GpuAlgorithm::RotsBlock)
    };
    let options = RunOptions {
        seed: 4,
        budget: Budget::time_limit(std::time::Duration::from_millis(500)),
        ..Default::default()
    };
    for p in [
        p.clone(),
        GpuParams {
            relink: true,
            ..p.clone()
        },
        GpuParams {
            crossover: Some(true),
            ..p.clone()
        },
        GpuParams {
            adapt: true,
            ..p.clone()
        },
    ] {
        let run = qap_gpu::solve(&gpu, &cache, &inst, &p, &options).unwrap();
        permutation::check(&run.outcome.solution, inst.n()).unwrap();
        assert_eq!(inst.cost(&run.outcome.solution), run.outcome.objective);
        assert_eq!(run.adaptation.is_some(), p.adapt, "{:?}", run.adaptation);
    }
}

/// Time to target on the GPU: rots-block (the default) and a thread-per-solution variant stop
/// at the first solution at or below the target, say when, and trace the improvements.
#[test]
fn variants_stop_at_their_target_and_trace_the_best() {
    let Some(gpu) = gpu_or_skip("variants_stop_at_their_target_and_trace_the_best") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let inst = load("tai20a");
    // rots-block: tai20a's optimum (703482) within ~0.1 s on an H100; 2opt: within 5%.
    for (algorithm, target) in [
        (GpuAlgorithm::RotsBlock, 703_482),
        (GpuAlgorithm::TwoOpt, 738_656),
    ] {
        let budget = Budget {
            time_limit: Some(std::time::Duration::from_secs(30)),
            target: Some(solvers::run::Target::new(target)),
            trace: Some(solvers::run::Trace::new()),
            ..Budget::default()
        };
        let started = std::time::Instant::now();
        let run = qap_gpu::solve(
            &gpu,
            &cache,
            &inst,
            &GpuParams::new(algorithm),
            &RunOptions {
                seed: 4,
                budget: budget.clone(),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{algorithm:?}: {e}"));
        let wall = started.elapsed().as_secs_f64();
        assert_eq!(inst.cost(&run.outcome.solution), run.outcome.objective);
        let reached = budget.target.as_ref().unwrap().reached_after();
        let trace = budget.trace.as_ref().unwrap().points();
        println!(
            "{algorithm:?}: {} reached after {reached:?} (wall {wall:.2} s), {} improvements",
            run.outcome.objective,
            trace.len()
        );
        assert!(run.outcome.objective <= target, "{algorithm:?}");
        assert!(
            reached.is_some(),
            "{algorithm:?}: the target was never reported"
        );
        assert!(
            wall < 15.0,
            "{algorithm:?}: ran {wall:.1} s past a reached target"
        );
        assert!(
            trace
                .windows(2)
                .all(|w| w[1].1 < w[0].1 && w[1].0 >= w[0].0),
            "{algorithm:?}: {trace:?}"
        );
        assert_eq!(trace.last().map(|p| p.1), Some(run.outcome.objective));
    }
}
