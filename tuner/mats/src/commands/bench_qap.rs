//! `mats bench qap`: the QAP GPU variants against the CPU reference, side by side in one run.
//!
//! Throughput is moves (swap evaluations) per second: the GPU's from kernel time (CUDA events),
//! the CPU's from wall time on all cores. The paper compares configurations by time for a
//! fixed number of start solutions; since configurations here differ in how many solutions
//! they run, moves per second is the comparable figure.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use rand::Rng;
use serde::Serialize;
use solvers::qap::gpu::{self as qap_gpu, GpuAlgorithm, GpuParams};
use solvers::qap::{self, Instance, RotsParams, TwoOptParams};
use solvers::run::{stream_rng, Budget, RunOptions};

use crate::cli::BenchQapArgs;

#[derive(Serialize)]
struct Throughput {
    n: usize,
    variant: String,
    config: String,
    gpu_moves_per_s: f64,
    gpu_wall_moves_per_s: f64,
    cpu_reference: String,
    cpu_moves_per_s: f64,
    ratio: f64,
}

#[derive(Serialize)]
struct Tuned {
    n: usize,
    config: String,
    moves_per_s: f64,
    speedup_over_baseline: f64,
    registers: u32,
    local_bytes_per_thread: u32,
}

#[derive(Serialize)]
struct Quality {
    instance: String,
    best_known: i64,
    gap_1s: f64,
    gap_10s: f64,
}

#[derive(Serialize)]
struct Report {
    device: String,
    cpu_threads: usize,
    throughput: Vec<Throughput>,
    tuning: Vec<Tuned>,
    /// None with `--compare-only`, which does not measure it.
    int_peak_ops_per_s: Option<f64>,
    two_opt_int_ops_per_s: Vec<(usize, f64, f64)>,
    quality: Vec<Quality>,
    /// `--compare`: rots-block against the CPU Ro-TS at equal wall time.
    compare: Vec<qap_gpu::compare::EqualTime>,
}

/// A uniform random instance like Taillard's taiXXa (entries 0..99, zero diagonals).
fn random_instance(n: usize) -> Instance {
    let mut rng = stream_rng(2026, n as u64);
    let mut matrix = || {
        let mut m = vec![0i64; n * n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    m[i * n + j] = rng.random_range(0..100);
                }
            }
        }
        m
    };
    let (a, b) = (matrix(), matrix());
    Instance::new(format!("uniform{n}"), n, a, b).expect("sizes match")
}

struct GpuFigure {
    moves_per_s: f64,
    wall_moves_per_s: f64,
    registers: u32,
    local_bytes: u32,
}

fn run_gpu(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
) -> Result<GpuFigure> {
    let options = RunOptions::default();
    // The first run compiles (or reads the cache) and warms the clocks; the second is measured.
    qap_gpu::solve(gpu, cache, inst, params, &options)?;
    let started = Instant::now();
    let run = qap_gpu::solve(gpu, cache, inst, params, &options)?;
    let wall = started.elapsed().as_secs_f64();
    solvers::permutation::check(&run.outcome.solution, inst.n())
        .map_err(|e| anyhow::anyhow!("{}: {e}", params.algorithm.name()))?;
    anyhow::ensure!(
        inst.cost(&run.outcome.solution) == run.outcome.objective,
        "{} returned a mis-scored solution",
        params.algorithm.name()
    );
    Ok(GpuFigure {
        moves_per_s: run.outcome.evaluations as f64 / run.kernel_seconds,
        wall_moves_per_s: run.outcome.evaluations as f64 / wall,
        registers: run.attributes.registers,
        local_bytes: run.attributes.local_bytes_per_thread,
    })
}

fn describe(p: &GpuParams) -> String {
    let mut text = format!(
        "{} {}x{}",
        p.algorithm.name(),
        p.solutions / p.threads_per_block.max(1),
        p.threads_per_block
    );
    if p.algorithm == GpuAlgorithm::RotsBlock {
        let blocks = match p.solutions {
            0 => "auto".to_string(),
            b => b.to_string(),
        };
        text = format!(
            "{} {blocks} blocks x {}",
            p.algorithm.name(),
            p.threads_per_block
        );
    }
    if !p.flags.is_empty() {
        text.push(' ');
        text.push_str(&p.flags.join(" "));
    }
    text
}

pub fn run(args: &BenchQapArgs) -> Result<()> {
    super::check_output("--json", args.json.as_deref())?;
    anyhow::ensure!(
        (1..=100).contains(&args.seeds),
        "--seeds must be in 1..=100, found {}",
        args.seeds
    );
    anyhow::ensure!(
        args.seconds.is_finite() && (0.1..=3600.0).contains(&args.seconds),
        "--seconds must be in 0.1..=3600, found {}",
        args.seconds
    );
    anyhow::ensure!(
        !args.compare_only || !args.compare.is_empty(),
        "--compare-only needs --compare NAMES"
    );
    if !gpu::driver_available() {
        bail!("mats bench qap needs an NVIDIA GPU: no CUDA driver (libcuda.so) found");
    }
    let gpu = Gpu::open(args.gpu)?;
    let cache = KernelCache::new(KernelCache::default_dir());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "device: {} ({}, {} SMs, {} MHz); CPU reference on {threads} threads",
        gpu.info.name,
        gpu.info.arch,
        gpu.info.sm_count,
        gpu.info.clock_khz / 1000
    );

    let compare = if args.compare.is_empty() {
        Vec::new()
    } else {
        equal_time_table(&gpu, &cache, args, threads)?
    };
    if args.compare_only {
        if let Some(path) = &args.json {
            let report = Report {
                device: format!("{} ({})", gpu.info.name, gpu.info.arch),
                cpu_threads: threads,
                throughput: Vec::new(),
                tuning: Vec::new(),
                int_peak_ops_per_s: None,
                two_opt_int_ops_per_s: Vec::new(),
                quality: Vec::new(),
                compare,
            };
            super::write_json(path, &report)?;
        }
        return Ok(());
    }

    let throughput = throughput_table(&gpu, &cache, &args.sizes, threads)?;
    let HandTuned {
        tuning,
        int_ops,
        peak,
    } = hand_tuned_table(&gpu, &cache, &args.sizes)?;

    // 3. rots-block quality within 1 s and 10 s.
    let mut quality = Vec::new();
    if args.quality {
        quality = rots_quality(&gpu, &cache, &args.qaplib)?;
    } else {
        println!("\n(rots-block quality on tai20a..tai100a: add --quality)");
    }

    if let Some(path) = &args.json {
        let report = Report {
            device: format!("{} ({})", gpu.info.name, gpu.info.arch),
            cpu_threads: threads,
            throughput,
            tuning,
            int_peak_ops_per_s: Some(peak),
            two_opt_int_ops_per_s: int_ops,
            quality,
            compare,
        };
        super::write_json(path, &report)?;
    }
    Ok(())
}

/// Moves evaluated per second of every variant against the CPU reference of its family.
fn throughput_table(
    gpu: &Gpu,
    cache: &KernelCache,
    sizes: &[usize],
    threads: usize,
) -> Result<Vec<Throughput>> {
    println!(
        "\nmoves evaluated per second (GPU from kernel time, CPU from wall time on all cores):"
    );
    println!(
        "{:>4} {:<34} {:>13} {:>13}  {:<22} {:>12} {:>8}",
        "n", "GPU variant", "GPU moves/s", "(wall)", "CPU reference", "CPU moves/s", "GPU/CPU"
    );
    let mut throughput = Vec::new();
    for &n in sizes {
        anyhow::ensure!(
            (2..=256).contains(&n),
            "--sizes must be within 2..=256, got {n}"
        );
        let inst = random_instance(n);
        let cpu_two_opt = cpu_rate(|| {
            qap::two_opt(
                &inst,
                &TwoOptParams {
                    starts: threads * 8,
                },
                &RunOptions {
                    threads,
                    ..Default::default()
                },
            )
        });
        let cpu_rots = cpu_rate(|| {
            qap::robust_tabu(
                &inst,
                &RotsParams {
                    starts: threads,
                    ..Default::default()
                },
                &RunOptions {
                    threads,
                    budget: Budget::iterations(200 * n as u64),
                    ..Default::default()
                },
            )
        });
        for algorithm in GpuAlgorithm::ALL {
            let mut params = GpuParams::new(algorithm);
            // The H100 holds ~120k resident threads at 2opt's register count: the paper's
            // largest p (16384) leaves most of it idle, so the 2-opt rows use 65536 starts.
            if matches!(algorithm, GpuAlgorithm::TwoOpt | GpuAlgorithm::TwoOptShared) {
                params.solutions = 65536;
            }
            if algorithm == GpuAlgorithm::Tabu {
                params.iterations = Some(100);
            }
            if algorithm == GpuAlgorithm::RotsBlock {
                params.iterations = Some(200 * n as u32);
            }
            if params.check(&inst, &gpu.info).is_err() {
                println!(
                    "{n:>4} {:<34} (does not fit: {})",
                    describe(&params),
                    params.check(&inst, &gpu.info).unwrap_err()
                );
                continue;
            }
            let figure = run_gpu(gpu, cache, &inst, &params)?;
            let (cpu_name, cpu) = if algorithm.name().starts_with("2opt") {
                ("2opt (multistart)", cpu_two_opt)
            } else {
                ("tabu (Ro-TS multistart)", cpu_rots)
            };
            println!(
                "{n:>4} {:<34} {:>13.3e} {:>13.3e}  {:<22} {:>12.3e} {:>7.1}x",
                describe(&params),
                figure.moves_per_s,
                figure.wall_moves_per_s,
                cpu_name,
                cpu,
                figure.moves_per_s / cpu
            );
            throughput.push(Throughput {
                n,
                variant: algorithm.name().into(),
                config: describe(&params),
                gpu_moves_per_s: figure.moves_per_s,
                gpu_wall_moves_per_s: figure.wall_moves_per_s,
                cpu_reference: cpu_name.into(),
                cpu_moves_per_s: cpu,
                ratio: figure.moves_per_s / cpu,
            });
        }
    }

    Ok(throughput)
}

/// The paper's 2-opt baseline against configurations chosen by hand, and the best 2-opt's
/// share of the chip's INT32 peak.
fn hand_tuned_table(gpu: &Gpu, cache: &KernelCache, sizes: &[usize]) -> Result<HandTuned> {
    println!("\n2opt configurations: the paper's baseline against hand-picked ones (moves/s, kernel time):");
    let baseline = GpuParams {
        solutions: 2048,
        threads_per_block: 1024,
        flags: vec!["-maxrregcount=32".into(), "--ptxas-options=-O2".into()],
        ..GpuParams::new(GpuAlgorithm::TwoOpt)
    };
    let by_hand = |algorithm, solutions, threads, flags: &[&str]| GpuParams {
        solutions,
        threads_per_block: threads,
        flags: flags.iter().map(|f| f.to_string()).collect(),
        ..GpuParams::new(algorithm)
    };
    let candidates = [
        baseline.clone(),
        by_hand(GpuAlgorithm::TwoOpt, 16384, 128, &["--ptxas-options=-O3"]),
        by_hand(GpuAlgorithm::TwoOpt, 16384, 64, &["--ptxas-options=-O3"]),
        by_hand(GpuAlgorithm::TwoOpt, 65536, 128, &["--ptxas-options=-O3"]),
        by_hand(
            GpuAlgorithm::TwoOptShared,
            16384,
            128,
            &["--ptxas-options=-O3"],
        ),
        by_hand(
            GpuAlgorithm::TwoOptShared,
            65536,
            256,
            &["--ptxas-options=-O3"],
        ),
    ];
    let mut tuning = Vec::new();
    let mut int_ops = Vec::new();
    let peak = gpu.info.sm_count as f64 * 64.0 * gpu.info.clock_khz as f64 * 1e3;
    for &n in sizes {
        let inst = random_instance(n);
        let mut base_rate = None;
        let mut best_two_opt: f64 = 0.0;
        for params in &candidates {
            if let Err(why) = params.check(&inst, &gpu.info) {
                println!("{n:>4} {:<52} does not fit: {why}", describe(params));
                continue;
            }
            let figure = run_gpu(gpu, cache, &inst, params)?;
            let base = *base_rate.get_or_insert(figure.moves_per_s);
            if params.algorithm == GpuAlgorithm::TwoOpt {
                best_two_opt = best_two_opt.max(figure.moves_per_s);
            }
            println!(
                "{n:>4} {:<52} {:>11.3e} moves/s {:>6.1}x  ({} regs, {} B local/thread)",
                describe(params),
                figure.moves_per_s,
                figure.moves_per_s / base,
                figure.registers,
                figure.local_bytes
            );
            tuning.push(Tuned {
                n,
                config: describe(params),
                moves_per_s: figure.moves_per_s,
                speedup_over_baseline: figure.moves_per_s / base,
                registers: figure.registers,
                local_bytes_per_thread: figure.local_bytes,
            });
        }
        // 8 integer operations per k of the O(n) delta (4 subtractions, 2 wide multiplies,
        // 2 additions), n - 2 values of k, plus about 10 for the r/s terms.
        let ops_per_move = 8.0 * (n as f64 - 2.0) + 10.0;
        let achieved = best_two_opt * ops_per_move;
        int_ops.push((n, achieved, achieved / peak));
    }
    println!(
        "\n2opt integer throughput (counting 8 (n - 2) + 10 ops per move evaluation) against the \
         chip's INT32 peak ({} SMs x 64 lanes x {} MHz = {:.2e} ops/s):",
        gpu.info.sm_count,
        gpu.info.clock_khz / 1000,
        peak
    );
    for (n, achieved, share) in &int_ops {
        println!(
            "  n = {n:>3}: {achieved:.3e} ops/s = {:.1}% of peak",
            100.0 * share
        );
    }

    Ok(HandTuned {
        tuning,
        int_ops,
        peak,
    })
}

/// The second table's rows, and the integer throughput it implies.
struct HandTuned {
    tuning: Vec<Tuned>,
    /// (n, integer ops/s of the best 2-opt, share of the peak).
    int_ops: Vec<(usize, f64, f64)>,
    peak: f64,
}

/// `--compare`: rots-block (default configuration) and the CPU Ro-TS on all cores, the same
/// wall time, seeds 1..=K; gap mean ± sd per instance.
fn equal_time_table(
    gpu: &Gpu,
    cache: &KernelCache,
    args: &BenchQapArgs,
    threads: usize,
) -> Result<Vec<qap_gpu::compare::EqualTime>> {
    use qap_gpu::compare::{equal_time, mean_sd};
    let mut bks = solvers::bks::BestKnown::embedded();
    let table = args.qaplib.join("../bks.csv");
    if table.is_file() {
        bks.add_file(&table)?;
    }
    let seeds: Vec<u64> = (1..=args.seeds).collect();
    println!(
        "
rots-block (default) against the CPU Ro-TS on {threads} threads (Taillard's parameters; and iterated, the GPU's defaults per thread) at {} s wall each, seeds 1..={}: gap to best known, mean ± sd",
        args.seconds, args.seeds
    );
    println!(
        "{:<10} {:>4} {:<12} {:>7} {:>18} {:>18} {:>18}",
        "instance", "n", "layout", "blocks", "GPU", "CPU Taillard", "CPU iterated"
    );
    let mut rows = Vec::new();
    for name in &args.compare {
        let path = if name.ends_with(".dat") {
            std::path::PathBuf::from(name)
        } else {
            args.qaplib.join(format!("{name}.dat"))
        };
        let inst = qap::read(&path)?;
        let best = bks
            .get(&inst.name)
            .with_context(|| format!("--compare: no best-known value for {}", inst.name))?
            .value;
        let row = equal_time(
            gpu,
            cache,
            &inst,
            best,
            &GpuParams::new(GpuAlgorithm::RotsBlock),
            args.seconds,
            &seeds,
            threads,
        )?;
        let (gm, gs) = mean_sd(&row.gpu_gaps);
        let (cm, cs) = mean_sd(&row.cpu_gaps);
        let (im, is) = mean_sd(&row.cpu_iterated_gaps);
        let rounded = |gaps: &[f64]| {
            gaps.iter()
                .map(|g| (g * 1000.0).round() / 1000.0)
                .collect::<Vec<_>>()
        };
        let per_sm = row
            .blocks_per_sm
            .map(|b| format!(" ({b}/SM)"))
            .unwrap_or_default();
        println!(
            "{:<10} {:>4} {:<12} {:>7} {:>9.3} ± {:.3}% {:>9.3} ± {:.3}% {:>9.3} ± {:.3}%   GPU {:?} CPU {:?} iterated {:?}",
            row.instance,
            row.n,
            row.layout,
            format!("{}{per_sm}", row.blocks),
            gm,
            gs,
            cm,
            cs,
            im,
            is,
            rounded(&row.gpu_gaps),
            rounded(&row.cpu_gaps),
            rounded(&row.cpu_iterated_gaps),
        );
        for (label, found, matched) in [
            ("Taillard", &row.cpu_found_s, &row.gpu_to_cpu_s),
            (
                "iterated",
                &row.cpu_iterated_found_s,
                &row.gpu_to_cpu_iterated_s,
            ),
        ] {
            let seconds = |v: &Option<f64>| v.map_or("-".to_string(), |s| format!("{s:.2}"));
            let (ratio, matched_seeds) = qap_gpu::compare::speedup(found, matched);
            println!(
                "{:<10} time to the CPU {label}'s answer: CPU {:?} s, GPU [{}] s: {} ({matched_seeds} of {} seeds)",
                "",
                found.iter().map(|s| (s * 100.0).round() / 100.0).collect::<Vec<_>>(),
                matched.iter().map(seconds).collect::<Vec<_>>().join(", "),
                ratio.map_or("the GPU never got there".to_string(), |r| format!(
                    "GPU {r:.0}x sooner (geometric mean)"
                )),
                found.len(),
            );
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Moves per second of a CPU solve (wall time).
fn cpu_rate(solve: impl Fn() -> solvers::Outcome) -> f64 {
    let started = Instant::now();
    let outcome = solve();
    outcome.evaluations as f64 / started.elapsed().as_secs_f64()
}

fn rots_quality(gpu: &Gpu, cache: &KernelCache, dir: &Path) -> Result<Vec<Quality>> {
    let bks = solvers::bks::BestKnown::embedded();
    println!("\nrots-block (default: SMs x resident blocks of 512 threads) gap to best known:");
    println!(
        "{:<9} {:>10} {:>10} {:>10}",
        "instance", "best", "1 s", "10 s"
    );
    let mut rows = Vec::new();
    for name in [
        "tai20a", "tai25a", "tai30a", "tai35a", "tai40a", "tai50a", "tai60a", "tai80a", "tai100a",
    ] {
        let path = dir.join(format!("{name}.dat"));
        let inst = qap::read(&path)
            .with_context(|| format!("--quality needs QAPLIB files in {}", dir.display()))?;
        let best = bks.get(name).context("best-known value missing")?.value;
        let mut gaps = [0.0f64; 2];
        for (slot, seconds) in [(0usize, 1u64), (1, 10)] {
            let options = RunOptions {
                budget: Budget::time_limit(Duration::from_secs(seconds)),
                ..Default::default()
            };
            let run = qap_gpu::solve(
                gpu,
                cache,
                &inst,
                &GpuParams::new(GpuAlgorithm::RotsBlock),
                &options,
            )?;
            solvers::permutation::check(&run.outcome.solution, inst.n())
                .map_err(|e| anyhow::anyhow!("rots-block: {e}"))?;
            anyhow::ensure!(
                inst.cost(&run.outcome.solution) == run.outcome.objective,
                "mis-scored solution"
            );
            gaps[slot] = solvers::bks::gap_percent(run.outcome.objective, best).unwrap_or(0.0);
        }
        println!("{name:<9} {best:>10} {:>9.3}% {:>9.3}%", gaps[0], gaps[1]);
        rows.push(Quality {
            instance: name.into(),
            best_known: best,
            gap_1s: gaps[0],
            gap_10s: gaps[1],
        });
    }
    Ok(rows)
}
