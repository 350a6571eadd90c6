//! `mats bench hwsw`: the GPTS variants against the CPU `sts`, side by side in one run.
//!
//! Timing: on graphs from the paper's generator at the paper's sizes (Table 1: 25 x 34 ..
//! 2000 x 6000) in the six CCR x R cases, `--graphs` graphs each, every method runs the same
//! `--iterations` (default 2000, the paper's M) from all-hardware with the same seed and no
//! early stop, so all do equal work and the GPTS variants take the CPU's moves (their hardware
//! costs are checked equal, and equal to the CPU's where it ran every iteration). Printed per
//! size and case: milliseconds per iteration of `separate`, `compact`, `fused` (zero-copy tabu
//! status), `fused` with the tabu status in device memory, the CPU `sts` on one core and on all
//! cores; the total for the run of `fused` and of the CPU on one core; their ratio (mean, min
//! and max over the graphs); the mean hardware cost. GPU times are the wall time of the search
//! loop (launches, transfers and the host's part), not kernel time alone.
//!
//! Quality (`--quality`): on `--quality-sizes` graphs, GPTS (`fused`, the paper's stop rule:
//! 2000 iterations or 200 without improvement) against `gpts-multi` given the same wall time,
//! per CCR x R case: mean hardware cost of each and how many graphs each won.

use std::time::Instant;

use anyhow::{bail, Result};
use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use serde::Serialize;
use solvers::hwsw::gpu::{self as hwsw_gpu, GpuAlgorithm, GpuParams};
use solvers::hwsw::{self, GeneratorSpec, Instance, RLevel, StsParams};
use solvers::run::{Budget, RunOptions};

use super::bench::Spread;
use crate::cli::BenchHwswArgs;

/// The paper's Table 1 sizes (nodes, edges): the five application graphs' sizes and random1-9.
pub const PAPER_SIZES: [(usize, usize); 14] = [
    (25, 34),
    (21, 50),
    (26, 71),
    (150, 333),
    (329, 448),
    (1000, 1000),
    (1000, 2000),
    (1000, 3000),
    (1500, 1500),
    (1500, 3000),
    (1500, 4500),
    (2000, 2000),
    (2000, 4000),
    (2000, 6000),
];

const CASES: [(f64, RLevel); 6] = [
    (0.1, RLevel::Low),
    (0.1, RLevel::High),
    (1.0, RLevel::Low),
    (1.0, RLevel::High),
    (10.0, RLevel::Low),
    (10.0, RLevel::High),
];

#[derive(Serialize)]
struct TimingRow {
    nodes: usize,
    edges: usize,
    size: usize,
    ccr: f64,
    r: RLevel,
    graphs: u64,
    iterations: u64,
    /// Milliseconds per iteration, per method (mean over graphs).
    ms_per_iteration: Vec<(String, Spread)>,
    /// CPU iterations actually run per graph (fewer than `iterations`: totals extrapolated).
    cpu_iterations: u64,
    fused_total_ms: Spread,
    cpu_one_core_total_ms: Spread,
    fused_speedup_over_one_core: Spread,
    mean_hardware_cost: f64,
    restarts: f64,
}

#[derive(Serialize)]
struct QualityRow {
    nodes: usize,
    edges: usize,
    ccr: f64,
    r: RLevel,
    graphs: u64,
    seconds: Spread,
    gpts: Vec<i64>,
    multi: Vec<i64>,
    gpts_mean: f64,
    multi_mean: f64,
    multi_wins: usize,
    gpts_wins: usize,
}

#[derive(Serialize)]
struct Report {
    device: String,
    cpu_threads: usize,
    timing: Vec<TimingRow>,
    quality: Vec<QualityRow>,
}

fn parse_sizes(list: &[String], default: &[(usize, usize)]) -> Result<Vec<(usize, usize)>> {
    if list.is_empty() {
        return Ok(default.to_vec());
    }
    list.iter()
        .map(|s| {
            let (n, m) = s
                .split_once('x')
                .ok_or_else(|| anyhow::anyhow!("size {s:?} is not NODESxEDGES"))?;
            let parse = |v: &str| {
                v.trim()
                    .parse::<usize>()
                    .map_err(|_| anyhow::anyhow!("size {s:?} is not NODESxEDGES"))
            };
            Ok((parse(n)?, parse(m)?))
        })
        .collect()
}

fn graph(n: usize, m: usize, ccr: f64, r: RLevel, seed: u64) -> Result<Instance> {
    let spec = GeneratorSpec::new(n, m, ccr, r, seed);
    spec.check().map_err(anyhow::Error::msg)?;
    hwsw::generate(&spec).map_err(anyhow::Error::msg)
}

pub fn run(args: &BenchHwswArgs) -> Result<()> {
    super::check_output("--json", args.json.as_deref())?;
    if !gpu::driver_available() {
        bail!("mats bench hwsw needs an NVIDIA GPU: no CUDA driver (libcuda.so) found");
    }
    if args.graphs == 0 || args.iterations == 0 {
        bail!("--graphs and --iterations must be at least 1");
    }
    let gpu = Gpu::open(args.gpu)?;
    let cache = KernelCache::new(KernelCache::default_dir());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "device: {} ({}, {} SMs); CPU sts on 1 and {threads} threads",
        gpu.info.name, gpu.info.arch, gpu.info.sm_count
    );
    let mut report = Report {
        device: format!("{} ({})", gpu.info.name, gpu.info.arch),
        cpu_threads: threads,
        timing: Vec::new(),
        quality: Vec::new(),
    };
    if !args.no_timing {
        let sizes = parse_sizes(&args.sizes, &PAPER_SIZES)?;
        report.timing = timing(&gpu, &cache, args, &sizes, threads)?;
    }
    if args.quality {
        let sizes = parse_sizes(&args.quality_sizes, &[(1000, 3000), (2000, 6000)])?;
        report.quality = quality(&gpu, &cache, args, &sizes)?;
    } else {
        println!("\n(gpts-multi against GPTS at equal wall time: add --quality)");
    }
    if let Some(path) = &args.json {
        super::write_json(path, &report)?;
        println!("\nwrote {}", path.display());
    }
    Ok(())
}

/// The timed GPU methods: label, variant, zero-copy tabu status.
const GPU_METHODS: [(&str, GpuAlgorithm, bool); 4] = [
    ("separate", GpuAlgorithm::Separate, true),
    ("compact", GpuAlgorithm::Compact, true),
    ("fused", GpuAlgorithm::Fused, true),
    ("fused-dev", GpuAlgorithm::Fused, false),
];

fn timing(
    gpu: &Gpu,
    cache: &KernelCache,
    args: &BenchHwswArgs,
    sizes: &[(usize, usize)],
    threads: usize,
) -> Result<Vec<TimingRow>> {
    let iterations = args.iterations;
    let cpu_iterations = args.cpu_iterations.unwrap_or(iterations);
    if cpu_iterations > iterations {
        anyhow::bail!(
            "--cpu-iterations {cpu_iterations} is more than --iterations {iterations}: the CPU \
             times fewer iterations and extrapolates, never more"
        );
    }
    let extrapolated = cpu_iterations < iterations;
    println!(
        "\ntime per iteration (ms, mean over graphs) and for {iterations} iterations; all from \
         all-hardware, seed = graph, no early stop{}",
        if extrapolated {
            format!("; CPU timed on {cpu_iterations} iterations (totals marked *)")
        } else {
            String::new()
        }
    );
    println!(
        "{:>5} {:>5} {:>6} {:>4} {:>4} | {:>8} {:>8} {:>8} {:>9} {:>8} {:>8} | {:>10} {:>11} | {:>22} | {:>9}",
        "n", "m", "size", "CCR", "R", "separate", "compact", "fused", "fused-dev", "cpu-1",
        format!("cpu-{threads}"), "fused ms", "cpu-1 ms", "fused/cpu-1 mean [min,max]", "mean H"
    );
    let no_stall = StsParams {
        stall: u64::MAX,
        ..StsParams::default()
    };
    let mut rows = Vec::new();
    for &(n, m) in sizes {
        for (ccr, level) in CASES {
            let mut per_method: Vec<Vec<f64>> = vec![Vec::new(); GPU_METHODS.len() + 2];
            let (mut fused_total, mut cpu_total, mut speedup) =
                (Vec::new(), Vec::new(), Vec::new());
            let (mut hardware, mut restarts) = (Vec::new(), Vec::new());
            for seed in 1..=args.graphs {
                let inst = graph(n, m, ccr, level, seed)?;
                let options = |iterations: u64, threads: usize| RunOptions {
                    seed,
                    threads,
                    budget: Budget::iterations(iterations),
                };
                let mut answer: Option<i64> = None;
                for (q, (label, algorithm, zero_copy)) in GPU_METHODS.into_iter().enumerate() {
                    let params = GpuParams {
                        zero_copy,
                        stall: u64::MAX,
                        ..GpuParams::new(algorithm)
                    };
                    let mut prepared = hwsw_gpu::prepare(gpu, cache, &inst, &params)?;
                    let run = prepared.run(gpu, &options(iterations, 1))?;
                    let ms = run.search_seconds * 1e3;
                    per_method[q].push(ms / run.outcome.iterations.max(1) as f64);
                    if let Some(h) = answer {
                        if h != run.outcome.objective {
                            bail!(
                                "{} on {n}x{m} seed {seed}: H {} differs from the other variants' {h}",
                                label,
                                run.outcome.objective
                            );
                        }
                    }
                    answer = Some(run.outcome.objective);
                    if label == "fused" {
                        fused_total.push(ms);
                        restarts.push(run.restarts as f64);
                    }
                }
                let t = Instant::now();
                let cpu = hwsw::sts(&inst, &no_stall, &options(cpu_iterations, 1));
                let cpu_ms = t.elapsed().as_secs_f64() * 1e3;
                let per_iteration = cpu_ms / cpu.iterations.max(1) as f64;
                per_method[GPU_METHODS.len()].push(per_iteration);
                if !extrapolated && Some(cpu.objective) != answer {
                    bail!(
                        "{n}x{m} seed {seed}: CPU sts H {} differs from GPTS's {answer:?}",
                        cpu.objective
                    );
                }
                let total = per_iteration * iterations as f64;
                cpu_total.push(total);
                speedup.push(total / fused_total.last().copied().unwrap_or(f64::NAN));
                let parallel_worth = hwsw_gpu::candidates(n) >= 50_000;
                if !args.no_cpu_parallel && parallel_worth {
                    let t = Instant::now();
                    let all = hwsw::sts(&inst, &no_stall, &options(cpu_iterations, threads));
                    per_method[GPU_METHODS.len() + 1]
                        .push(t.elapsed().as_secs_f64() * 1e3 / all.iterations.max(1) as f64);
                }
                hardware.push(answer.unwrap_or_default() as f64);
            }
            let cell = |v: &[f64]| {
                if v.is_empty() {
                    "-".to_string()
                } else {
                    format!("{:.4}", Spread::of(v).mean)
                }
            };
            let s = Spread::of(&speedup);
            let star = if extrapolated { "*" } else { "" };
            println!(
                "{:>5} {:>5} {:>6} {:>4} {:>4} | {:>8} {:>8} {:>8} {:>9} {:>8} {:>8} | {:>10.1} {:>10.1}{star:1} | {:>7.1} [{:>6.1},{:>6.1}] | {:>9.1}",
                n,
                m,
                2 * n + 3 * m,
                ccr,
                level,
                cell(&per_method[0]),
                cell(&per_method[1]),
                cell(&per_method[2]),
                cell(&per_method[3]),
                cell(&per_method[4]),
                cell(&per_method[5]),
                Spread::of(&fused_total).mean,
                Spread::of(&cpu_total).mean,
                s.mean,
                s.min,
                s.max,
                Spread::of(&hardware).mean
            );
            let labels = [
                "separate",
                "compact",
                "fused",
                "fused-dev",
                "cpu-1",
                "cpu-all",
            ];
            rows.push(TimingRow {
                nodes: n,
                edges: m,
                size: 2 * n + 3 * m,
                ccr,
                r: level,
                graphs: args.graphs,
                iterations,
                ms_per_iteration: labels
                    .iter()
                    .zip(&per_method)
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(l, v)| (l.to_string(), Spread::of(v)))
                    .collect(),
                cpu_iterations,
                fused_total_ms: Spread::of(&fused_total),
                cpu_one_core_total_ms: Spread::of(&cpu_total),
                fused_speedup_over_one_core: s,
                mean_hardware_cost: Spread::of(&hardware).mean,
                restarts: Spread::of(&restarts).mean,
            });
        }
    }
    Ok(rows)
}

fn quality(
    gpu: &Gpu,
    cache: &KernelCache,
    args: &BenchHwswArgs,
    sizes: &[(usize, usize)],
) -> Result<Vec<QualityRow>> {
    println!(
        "\nquality at equal wall time: GPTS (fused, {} iterations or 200 without improvement) \
         against gpts-multi given GPTS's wall time on each graph; mean hardware cost (lower is \
         better)",
        args.iterations
    );
    println!(
        "{:>5} {:>5} {:>4} {:>4} | {:>10} | {:>11} {:>11} {:>8} | {:>9}",
        "n", "m", "CCR", "R", "time ms", "GPTS H", "multi H", "diff %", "wins m/g"
    );
    let mut rows = Vec::new();
    for &(n, m) in sizes {
        for (ccr, level) in CASES {
            let (mut gpts, mut multi, mut seconds) = (Vec::new(), Vec::new(), Vec::new());
            for seed in 1..=args.graphs {
                let inst = graph(n, m, ccr, level, seed)?;
                let options = RunOptions {
                    seed,
                    threads: 1,
                    budget: Budget::iterations(args.iterations),
                };
                let mut fused =
                    hwsw_gpu::prepare(gpu, cache, &inst, &GpuParams::new(GpuAlgorithm::Fused))?;
                let a = fused.run(gpu, &options)?;
                let mut many =
                    hwsw_gpu::prepare(gpu, cache, &inst, &GpuParams::new(GpuAlgorithm::GptsMulti))?;
                let limit = std::time::Duration::from_secs_f64(a.search_seconds);
                let b = many.run(
                    gpu,
                    &RunOptions {
                        budget: Budget::time_limit(limit),
                        ..options
                    },
                )?;
                seconds.push(a.search_seconds);
                gpts.push(a.outcome.objective);
                multi.push(b.outcome.objective);
            }
            let mean = |v: &[i64]| v.iter().sum::<i64>() as f64 / v.len().max(1) as f64;
            let (g, mm) = (mean(&gpts), mean(&multi));
            let multi_wins = gpts.iter().zip(&multi).filter(|(a, b)| b < a).count();
            let gpts_wins = gpts.iter().zip(&multi).filter(|(a, b)| a < b).count();
            let secs: Vec<f64> = seconds.iter().map(|s| s * 1e3).collect();
            println!(
                "{:>5} {:>5} {:>4} {:>4} | {:>10.1} | {:>11.1} {:>11.1} {:>+8.2} | {:>4}/{:<4}{}",
                n,
                m,
                ccr,
                level,
                Spread::of(&secs).mean,
                g,
                mm,
                100.0 * (mm - g) / g.max(1.0),
                multi_wins,
                gpts_wins,
                if mm < g { "" } else { "  NOT LOWER" }
            );
            rows.push(QualityRow {
                nodes: n,
                edges: m,
                ccr,
                r: level,
                graphs: args.graphs,
                seconds: Spread::of(&seconds),
                gpts_mean: g,
                multi_mean: mm,
                gpts,
                multi,
                multi_wins,
                gpts_wins,
            });
        }
    }
    Ok(rows)
}
