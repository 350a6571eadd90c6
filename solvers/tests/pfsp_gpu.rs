//! The flowshop GPU variants on a real GPU, checked on the CPU: `tabu-full` and `tabu-prefix`
//! take exactly the CPU tabu's moves from NEH (move by move, every makespan re-scored from
//! scratch), `ig-block` returns a permutation whose CPU makespan equals the GPU's, and `ig-warp`'s
//! walks equal the CPU reference's (`solvers::pfsp::ig_warp`) step for step; with relinking
//! restarts (`relink`) every walk's best of both variants is re-scored. Skipped
//! with a message on a machine without a GPU, unless MATS_REQUIRE_GPU=1, where it fails.

use std::path::Path;
use std::time::Duration;

use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use solvers::permutation;
use solvers::pfsp::gpu::{self as pfsp_gpu, GpuAlgorithm, GpuParams, IgwTables};
use solvers::pfsp::ig_warp::{WalkParams, Walker};
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

/// One seeded ig-block run under an iteration budget, its answer checked as a permutation and
/// re-scored on the CPU; (makespan, sequence, evaluations), for runs that must agree.
fn ig_block_rescored(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
    seed: u64,
    iterations: u64,
    what: &str,
) -> (i64, Vec<usize>, u64) {
    let run = pfsp_gpu::solve(
        gpu,
        cache,
        inst,
        params,
        &RunOptions {
            seed,
            budget: Budget::iterations(iterations),
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    let p = &run.outcome.solution;
    permutation::check(p, inst.jobs).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(inst.makespan(p), run.outcome.objective, "{what}");
    (run.outcome.objective, p.clone(), run.outcome.evaluations)
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

/// Tables in global memory take the same moves as tables in shared memory (same seed, same
/// walks), on machine counts that give each lane of the wavefront 1 to 4 machines; every
/// answer is re-scored.
#[test]
fn ig_block_global_tables_take_the_shared_tables_moves() {
    let Some(gpu) = gpu_or_skip("ig_block_global_tables_take_the_shared_tables_moves") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    for (n, m) in [(30, 20), (40, 45), (30, 64), (25, 100), (20, 128)] {
        let inst = pfsp::generate(n, m, 7);
        let neh = inst.makespan(&pfsp::neh(&inst));
        let mut outcomes = Vec::new();
        for tables in [pfsp_gpu::IgwTables::Shared, pfsp_gpu::IgwTables::Global] {
            let params = GpuParams {
                blocks: 8,
                tables,
                restart_stall: 1_000_000,
                ..GpuParams::new(GpuAlgorithm::IgBlock)
            };
            let what = format!("{n}x{m} {}", tables.name());
            let outcome = ig_block_rescored(&gpu, &cache, &inst, &params, 9, 20, &what);
            assert!(outcome.0 <= neh, "{n}x{m}: worse than NEH");
            outcomes.push(outcome);
        }
        assert_eq!(outcomes[0], outcomes[1], "{n}x{m}: shared vs global tables");
        println!("{n}x{m}: {} (NEH {neh}) with either tables", outcomes[0].0);
    }
}

/// Several walks per block (`walks_per_block`, tables in global memory) take the moves the same
/// walks take one per block: each walk draws from its own stream and synchronises only with
/// its own threads, so the grouping changes no walk. 800 x 60 covers the staged times (2 walks
/// per block) and times left in global memory (4); every answer is re-scored.
#[test]
fn ig_block_walks_per_block_take_one_walk_per_blocks_moves() {
    let Some(gpu) = gpu_or_skip("ig_block_walks_per_block_take_one_walk_per_blocks_moves") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    for (n, m, iterations) in [(30, 20, 20), (40, 45, 20), (25, 100, 10), (800, 60, 1)] {
        let inst = pfsp::generate(n, m, 7);
        let mut outcomes = Vec::new();
        for w in [1, 2, 4] {
            let params = GpuParams {
                blocks: 8,
                tables: pfsp_gpu::IgwTables::Global,
                restart_stall: 1_000_000,
                walks_per_block: w,
                ..GpuParams::new(GpuAlgorithm::IgBlock)
            };
            let what = format!("{n}x{m}, {w} walks per block");
            outcomes.push(ig_block_rescored(
                &gpu, &cache, &inst, &params, 9, iterations, &what,
            ));
        }
        assert_eq!(outcomes[0], outcomes[1], "{n}x{m}: 1 vs 2 walks per block");
        assert_eq!(outcomes[0], outcomes[2], "{n}x{m}: 1 vs 4 walks per block");
        println!("{n}x{m}: {} with 1, 2 and 4 walks per block", outcomes[0].0);
    }
}

/// Restarts with path relinking (`relink`) every launch: every walk's best (read back as an
/// island's) is a permutation whose CPU makespan is the value the GPU holds, including those
/// the host wrote where a relinked sequence beat a walk's best, and so is the result.
#[test]
fn ig_relinking_restarts_keep_every_walk_rescored() {
    use solvers::gpu::PreparedRun;
    let Some(gpu) = gpu_or_skip("ig_relinking_restarts_keep_every_walk_rescored") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    for algorithm in [GpuAlgorithm::IgBlock, GpuAlgorithm::IgWarp] {
        for inst in instances() {
            let base = GpuParams::new(algorithm);
            let params = GpuParams {
                blocks: 40,
                destruction: base.destruction.min(inst.jobs - 1),
                destruction_max: base.destruction_max.min(inst.jobs - 1),
                relink: true,
                elite: 4,
                restart_stall: 1,
                launch_iterations: 2,
                // ig-warp races its restarts too (`--adapt`): the same rows must hold.
                adapt: algorithm == GpuAlgorithm::IgWarp,
                ..base
            };
            let name = format!("{} {}", inst.name, algorithm.name());
            let mut prepared = pfsp_gpu::prepare(&gpu, &cache, &inst, &params)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            // As an island with no seeds: the run returns every walk's best.
            assert!(prepared.start_from(&[]));
            let run = prepared
                .run(
                    &gpu,
                    &RunOptions {
                        seed: 5,
                        budget: Budget::iterations(30),
                        ..Default::default()
                    },
                )
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(run.walk_bests.len(), 40, "{name}");
            assert_eq!(run.adaptation.is_some(), params.adapt, "{name}");
            for (w, (seq, value)) in run.walk_bests.iter().enumerate() {
                permutation::check(seq, inst.jobs).unwrap_or_else(|e| panic!("{name} {w}: {e}"));
                assert_eq!(inst.makespan(seq), *value, "{name}: walk {w}");
            }
            let p = &run.outcome.solution;
            permutation::check(p, inst.jobs).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(inst.makespan(p), run.outcome.objective, "{name}");
            assert!(run.launches >= 10, "{name}: {} launches", run.launches);
            let neh = inst.makespan(&pfsp::neh(&inst));
            assert!(run.outcome.objective <= neh, "{name}: worse than NEH");
            println!("{name} relink: {} (NEH {neh})", run.outcome.objective);
        }
    }
}

#[test]
fn ig_block_time_limit_and_large_instances() {
    let Some(gpu) = gpu_or_skip("ig_block_time_limit_and_large_instances") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    // ig-block's defaults under a time limit: the run and its wall time, re-scored.
    let timed = |inst: &Instance, limit: Duration| {
        let started = std::time::Instant::now();
        let run = pfsp_gpu::solve(
            &gpu,
            &cache,
            inst,
            &GpuParams::new(GpuAlgorithm::IgBlock),
            &RunOptions {
                budget: Budget::time_limit(limit),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{}: {e}", inst.name));
        assert_eq!(inst.makespan(&run.outcome.solution), run.outcome.objective);
        (run, started.elapsed().as_secs_f64())
    };
    let (_, took) = timed(&pfsp::generate(100, 20, 77), Duration::from_millis(500));
    assert!(took < 3.0, "100 x 20 took {took:.1} s for 0.5 s");
    // 800 x 60 (VRF's largest): ig-block keeps its tables in global memory and stops near
    // the limit; the tabu variants run too.
    let big = pfsp::generate(800, 60, 1);
    let (run, took) = timed(&big, Duration::from_secs(2));
    let neh = big.makespan(&pfsp::neh(&big));
    assert!(run.outcome.objective <= neh, "800 x 60: worse than NEH");
    println!(
        "800x60 ig-block, global tables: {} (NEH {neh}) in {took:.1} s, {} launches, {} walks",
        run.outcome.objective, run.launches, run.launch.grid.0
    );
    assert!(took < 10.0, "800 x 60 took {took:.1} s for a 2 s limit");
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

/// ig-warp's walks take exactly the CPU reference's steps (`solvers::pfsp::ig_warp`): after
/// several launches every walk's current and best sequences, makespans, draw counter,
/// destruction size and evaluation count equal the reference's, with the tables in shared and
/// in global memory, with and without tie moves, m above one warp (chunks) and int64 times.
#[test]
fn ig_warp_walks_equal_the_cpu_reference() {
    let Some(gpu) = gpu_or_skip("ig_warp_walks_equal_the_cpu_reference") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    for inst in instances() {
        for (tables, ties, warps) in [
            (IgwTables::Shared, true, 2u32),
            (IgwTables::Global, false, 3),
        ] {
            let params = GpuParams {
                blocks: 5,
                warps,
                tables,
                ties,
                destruction: 2.min(inst.jobs - 1),
                destruction_max: 5.min(inst.jobs - 1),
                launch_iterations: 4,
                trace: true,
                ..GpuParams::new(GpuAlgorithm::IgWarp)
            };
            let iterations = 10;
            let run = pfsp_gpu::solve(
                &gpu,
                &cache,
                &inst,
                &params,
                &RunOptions {
                    seed: 17,
                    budget: Budget::iterations(iterations),
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{} ig-warp: {e}", inst.name));
            let what = format!("{} ig-warp {tables:?} ties {ties}", inst.name);
            assert!(run.launches >= 3, "{what}: {} launches", run.launches);
            assert_eq!(run.walks.len(), 5, "{what}");
            let walk_params = WalkParams {
                d_min: params.destruction,
                d_max: params.destruction_max,
                temperature: params.temperature,
                ties,
            };
            let mut walker = Walker::new(&inst, &walk_params, 17);
            let start = pfsp::neh(&inst);
            let start_value = inst.makespan(&start);
            for (w, g) in run.walks.iter().enumerate() {
                let mut walk = walker.start(w as u64, &start, start_value);
                walker.run(&mut walk, iterations);
                assert_eq!(Some(g.cur_value), walk.cur_value, "{what} walk {w}");
                assert_eq!(g.best_value, walk.best_value, "{what} walk {w}");
                assert_eq!(g.counter, walk.counter, "{what} walk {w}");
                assert_eq!(g.d, walk.d, "{what} walk {w}");
                assert_eq!(g.evaluated, walk.evaluated, "{what} walk {w}");
                assert_eq!(g.cur, walk.cur, "{what} walk {w}");
                assert_eq!(g.best, walk.best, "{what} walk {w}");
                assert_eq!(inst.makespan(&g.best), g.best_value, "{what} walk {w}");
                assert_eq!(inst.makespan(&g.cur), g.cur_value, "{what} walk {w}");
            }
            assert_eq!(
                run.outcome.objective,
                run.walks.iter().map(|w| w.best_value).min().unwrap()
            );
            assert_eq!(inst.makespan(&run.outcome.solution), run.outcome.objective);
            println!(
                "{what}: 5 walks equal the CPU reference, best {}, {} launches",
                run.outcome.objective, run.launches
            );
        }
    }
}

/// ig-warp with its defaults under a time limit (restarts on), re-scored on the CPU; and on
/// 800 x 60, which ig-block cannot hold, with its tables in global memory.
#[test]
fn ig_warp_time_limit_and_800x60() {
    let Some(gpu) = gpu_or_skip("ig_warp_time_limit_and_800x60") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    for inst in [pfsp::generate(100, 20, 77), pfsp::generate(800, 60, 1)] {
        let params = GpuParams::new(GpuAlgorithm::IgWarp);
        let started = std::time::Instant::now();
        let run = pfsp_gpu::solve(
            &gpu,
            &cache,
            &inst,
            &params,
            &RunOptions {
                budget: Budget::time_limit(Duration::from_secs(3)),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{} ig-warp: {e}", inst.name));
        let wall = started.elapsed().as_secs_f64();
        permutation::check(&run.outcome.solution, inst.jobs).unwrap();
        assert_eq!(inst.makespan(&run.outcome.solution), run.outcome.objective);
        let neh = inst.makespan(&pfsp::neh(&inst));
        assert!(
            run.outcome.objective <= neh,
            "{}: worse than NEH",
            inst.name
        );
        println!(
            "{} ig-warp: {} (NEH {neh}) in {wall:.2} s, {} walks of {} launches, {} iterations, \
             {} regs, kernel {:.3} s",
            inst.name,
            run.outcome.objective,
            run.launch.grid.0 * params.warps,
            run.launches,
            run.outcome.iterations,
            run.attributes.registers,
            run.kernel_seconds
        );
        // The run's time includes the host's local search of the start (several seconds at
        // 800 x 60); walks abandon an iteration at the deadline, so the limit holds within one
        // insertion.
        assert!(wall < 15.0, "{}: ran {wall:.1} s for 3 s", inst.name);
        if inst.jobs <= 100 {
            assert!(run.outcome.iterations > 0, "{}: no iteration", inst.name);
        }
    }
}

/// Not a check: ig-warp's configurations side by side on ta081 (Taillard's generator reproduces
/// it from its seed) for 3 s each, for the figures in docs/pfsp-gpu.md. Run with --ignored.
#[test]
#[ignore]
fn ig_warp_configurations_on_ta081() {
    let Some(gpu) = gpu_or_skip("ig_warp_configurations_on_ta081") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let inst = pfsp::generate(100, 20, 450_926_852);
    let base = GpuParams::new(GpuAlgorithm::IgWarp);
    let configurations = [
        ("defaults", base.clone()),
        (
            "tables global",
            GpuParams {
                tables: IgwTables::Global,
                ..base.clone()
            },
        ),
        (
            "global, 8 warps/block",
            GpuParams {
                tables: IgwTables::Global,
                warps: 8,
                ..base.clone()
            },
        ),
        (
            "global, 1056 walks",
            GpuParams {
                tables: IgwTables::Global,
                blocks: 1056,
                ..base.clone()
            },
        ),
        (
            "fixed d = 4, no ties",
            GpuParams {
                destruction: 4,
                destruction_max: 4,
                ties: false,
                ..base.clone()
            },
        ),
        (
            "d 2..6, no ties",
            GpuParams {
                ties: false,
                ..base.clone()
            },
        ),
        (
            "d 2..10",
            GpuParams {
                destruction_max: 10,
                ..base.clone()
            },
        ),
        ("ig-block", GpuParams::new(GpuAlgorithm::IgBlock)),
    ];
    for (what, params) in configurations {
        let seed = 1u64;
        let run = pfsp_gpu::solve(
            &gpu,
            &cache,
            &inst,
            &params,
            &RunOptions {
                seed,
                budget: Budget::time_limit(Duration::from_secs(3)),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(inst.makespan(&run.outcome.solution), run.outcome.objective);
        let walks = if params.algorithm == GpuAlgorithm::IgWarp {
            run.launch.grid.0 * params.warps
        } else {
            run.launch.grid.0
        };
        println!(
            "ta081 3 s {what:<24} seed {seed}: {} ({:.3}% above 6134), {walks} walks, {:.0} it/walk, \
             {} regs, kernel {:.2} s",
            run.outcome.objective,
            100.0 * (run.outcome.objective - 6134) as f64 / 6134.0,
            run.outcome.iterations as f64 / f64::from(walks.max(1)),
            run.attributes.registers,
            run.kernel_seconds
        );
    }
}

/// ig-grid's walks take exactly the CPU reference's moves (`solvers::pfsp::ig_grid` with the
/// CPU neighbourhood): a seeded run returns the same sequence, makespan, iterations and
/// evaluations, with every block's tables in shared memory (the small instances, int64 times
/// included) or in global memory (300 x 60), and with the fused evaluation's tables per walk
/// (300 x 60), with and without tabu steps, and the answer is re-scored.
#[test]
fn ig_grid_takes_the_cpu_references_moves() {
    use solvers::pfsp::ig_grid::{self, CpuNeighbourhood, GridParams};
    let Some(gpu) = gpu_or_skip("ig_grid_takes_the_cpu_references_moves") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let mut cases: Vec<(Instance, u64)> = instances().into_iter().map(|i| (i, 15)).collect();
    cases.push((pfsp::generate(300, 60, 4), 2));
    let mut layouts = std::collections::BTreeSet::new();
    for (k, (inst, iterations)) in cases.into_iter().enumerate() {
        // Every other instance with tabu steps after each local optimum. `auto` keeps every
        // block's tables in shared memory on the small instances and runs the fused evaluation
        // at 300 x 60 (two blocks' tables do not fit there), which also runs with each block's
        // tables in global memory.
        let tabu_steps = if k % 2 == 1 || inst.jobs >= 300 { 8 } else { 0 };
        let asked: &[pfsp_gpu::IgwTables] = if inst.jobs < 300 {
            &[pfsp_gpu::IgwTables::Auto]
        } else {
            &[pfsp_gpu::IgwTables::Auto, pfsp_gpu::IgwTables::Global]
        };
        for &tables in asked {
            let walks = 3;
            let params = GpuParams {
                blocks: walks,
                destruction: 4.min(inst.jobs - 1),
                tabu_steps,
                tables,
                ..GpuParams::new(GpuAlgorithm::IgGrid)
            };
            let optin = gpu.info.max_shared_bytes_per_block_optin as usize;
            let tables = pfsp_gpu::GridTables::of(tables, &inst, optin);
            layouts.insert(tables.name());
            let what = format!(
                "ig-grid {} ({}, {tabu_steps} tabu steps)",
                inst.name,
                tables.name()
            );
            let (objective, sequence, evaluations) =
                ig_block_rescored(&gpu, &cache, &inst, &params, 7, iterations, &what);
            let grid = GridParams {
                walks: walks as usize,
                destruction: params.destruction,
                temperature: params.temperature,
                tabu_steps,
                tenure: params.tenure,
            };
            let options = RunOptions {
                seed: 7,
                budget: Budget::iterations(iterations),
                ..Default::default()
            };
            let (cpu, _) =
                ig_grid::run(&inst, &grid, &options, &mut CpuNeighbourhood::new(&inst)).unwrap();
            assert_eq!(
                (objective, &sequence, evaluations),
                (cpu.objective, &cpu.solution, cpu.evaluations),
                "{what}: GPU against the CPU reference"
            );
            println!("{what}: {objective}, the CPU reference's");
        }
    }
    assert_eq!(layouts.len(), 3, "every layout ran: {layouts:?}");

    // As an island over two epochs: each walk continues from its own best of the last epoch,
    // the first from a seed, as the CPU reference does with the same starts.
    use solvers::gpu::PreparedRun;
    let inst = taillard("tai20_10.txt", 3);
    let params = GpuParams {
        blocks: 3,
        ..GpuParams::new(GpuAlgorithm::IgGrid)
    };
    let grid = GridParams {
        walks: 3,
        destruction: params.destruction,
        temperature: params.temperature,
        tabu_steps: 0,
        tenure: params.tenure,
    };
    let mut prepared = pfsp_gpu::prepare(&gpu, &cache, &inst, &params).unwrap();
    let seed: Vec<usize> = (0..inst.jobs).rev().collect();
    assert!(prepared.start_from(std::slice::from_ref(&seed)));
    let mut starts = vec![(seed.clone(), inst.makespan(&seed))];
    for epoch in 0..2u64 {
        let options = RunOptions {
            seed: 3 + epoch,
            budget: Budget::iterations(5),
            ..Default::default()
        };
        let run = PreparedRun::run(&mut prepared, &gpu, &options).unwrap();
        let (cpu, _, bests) = ig_grid::run_from(
            &inst,
            &grid,
            &options,
            &starts,
            &mut CpuNeighbourhood::new(&inst),
        )
        .unwrap();
        assert_eq!(
            (run.outcome.objective, &run.outcome.solution),
            (cpu.objective, &cpu.solution),
            "island epoch {epoch}"
        );
        // The island's next epoch: the seed first, then the walks' own bests.
        starts = std::iter::once(starts[0].clone())
            .chain(bests.into_iter().skip(1))
            .collect();
    }
}

#[test]
fn beam_search_keeps_the_cpu_references_nodes() {
    use solvers::pfsp::beam::{beam_search, BeamParams};
    let Some(gpu) = gpu_or_skip("beam_search_keeps_the_cpu_references_nodes") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let mut cases = instances();
    // Taillard's 200 x 20 (7 bitset words, tiles past one) and a width that truncates.
    cases.push(pfsp::generate(200, 20, 2013025619));
    for inst in cases {
        let kernels = pfsp_gpu::beam::BeamKernels::load(&gpu, &cache, &inst, &[])
            .unwrap_or_else(|e| panic!("{}: {e}", inst.name));
        let times = gpu
            .stream()
            .clone_htod(&pfsp_gpu::padded_times(&inst))
            .expect("times upload");
        let widths: &[usize] = if inst.jobs >= 200 {
            &[1, 300]
        } else {
            &[1, 7, 64]
        };
        for &width in widths {
            for idle_weight in [0, 7] {
                let params = BeamParams { width, idle_weight };
                let what = format!("{} width {width} idle weight {idle_weight}", inst.name);
                let cpu = beam_search(&inst, &params);
                let keep = cpu.sequences.len();
                let gpu_beam =
                    pfsp_gpu::beam::search(&kernels, &gpu, &inst, &times, &params, keep, None)
                        .unwrap_or_else(|e| panic!("{what}: {e}"))
                        .expect("no deadline");
                assert_eq!(gpu_beam.directions, cpu.directions, "{what}: directions");
                assert_eq!(gpu_beam.sequences, cpu.sequences, "{what}: final beam");
                for (seq, makespan) in &gpu_beam.sequences {
                    permutation::check(seq, inst.jobs).unwrap();
                    assert_eq!(inst.makespan(seq), *makespan, "{what}");
                }
            }
        }
        println!(
            "beam on {} ({} x {}): the GPU kept the CPU's nodes",
            inst.name, inst.jobs, inst.machines
        );
    }
}

/// Time to target: every variant stops once its best reaches the target (here: what a short
/// run of the same variant reached), says when, and records each improvement on the way.
/// Before, the flowshop drivers never reported their bests, so a time-to-target run went on to
/// its cap and counted as not reached.
#[test]
fn every_variant_stops_at_its_target() {
    let Some(gpu) = gpu_or_skip("every_variant_stops_at_its_target") else {
        return;
    };
    let cache = KernelCache::new(tempfile::tempdir().unwrap().path());
    let inst = taillard("tai20_10.txt", 3);
    for algorithm in [
        GpuAlgorithm::IgBlock,
        GpuAlgorithm::IgWarp,
        GpuAlgorithm::IgGrid,
        GpuAlgorithm::TabuFull,
        GpuAlgorithm::TabuPrefix,
    ] {
        let what = algorithm.name();
        let params = GpuParams::new(algorithm);
        let (short, _, _) = ig_block_rescored(&gpu, &cache, &inst, &params, 3, 30, what);
        let budget = Budget {
            time_limit: Some(Duration::from_secs(30)),
            target: Some(solvers::run::Target::new(short)),
            trace: Some(solvers::run::Trace::new()),
            ..Budget::default()
        };
        let started = std::time::Instant::now();
        let run = pfsp_gpu::solve(
            &gpu,
            &cache,
            &inst,
            &params,
            &RunOptions {
                seed: 3,
                budget: budget.clone(),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        let wall = started.elapsed().as_secs_f64();
        assert_eq!(
            inst.makespan(&run.outcome.solution),
            run.outcome.objective,
            "{what}"
        );
        let reached = budget.target.as_ref().unwrap().reached_after();
        let trace = budget.trace.as_ref().unwrap().points();
        println!(
            "{what}: target {short} reached after {reached:?} (wall {wall:.2} s), {} improvements",
            trace.len()
        );
        assert!(
            run.outcome.objective <= short,
            "{what}: {}",
            run.outcome.objective
        );
        assert!(reached.is_some(), "{what}: the target was never reported");
        assert!(wall < 15.0, "{what}: ran {wall:.1} s past a reached target");
        assert!(
            trace.last().is_some_and(|&(_, v)| v <= short),
            "{what}: {trace:?}"
        );
    }
}
