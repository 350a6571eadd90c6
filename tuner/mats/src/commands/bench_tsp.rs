//! `mats bench tsp`: the GPU Ant System's construction and pheromone variants against the CPU
//! `as` on all cores, side by side in one run.
//!
//! Per instance (default d198, pcb442, rat783, pr2392 and rl11849 from
//! `../shared/data/tsplib/instances`), m = n ants, 32 candidates, alpha 1, beta 2, rho 0.5:
//! milliseconds per iteration (construction + pheromone update + choice information, by CUDA
//! events) of `task`, `data` and `data-compressed` with the atomic update and of `data` with
//! the gather update, each over `--seeds` seeds (mean, min, max), and of the CPU `as` on all
//! cores (wall time per iteration; it refuses instances above 10,000 cities). Every GPU run's
//! best tour is re-scored on the CPU. Each GPU configuration runs `--iterations` iterations per
//! seed, fewer where one iteration takes more than a second.
//!
//! Shares of the chip: the pheromone stage's DRAM traffic (counted bytes: evaporation and
//! choice information read and write every n x n cell, the deposit reads the tours and updates
//! 2 m n cells) over its time, against the peak from the memory clock and bus width; and the
//! construction's ant steps per second.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use cudarc::driver::sys::CUdevice_attribute;
use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use serde::Serialize;
use solvers::run::{Budget, RunOptions};
use solvers::tsp::gpu::{self as tsp_gpu, Construction, GpuParams, PheromoneUpdate};
use solvers::tsp::{AntSystem, AsParams, Instance};

use super::bench::Spread;
use crate::cli::BenchTspArgs;

/// The instances.
pub const DEFAULT_INSTANCES: [&str; 5] = ["d198", "pcb442", "rat783", "pr2392", "rl11849"];

/// The GPU configurations compared: every construction with the atomic update, and `data`
/// with the gather update.
const CONFIGS: [(Construction, PheromoneUpdate); 4] = [
    (Construction::Task, PheromoneUpdate::Atomic),
    (Construction::Data, PheromoneUpdate::Atomic),
    (Construction::Data, PheromoneUpdate::Gather),
    (Construction::DataCompressed, PheromoneUpdate::Atomic),
];

#[derive(Serialize)]
struct GpuRow {
    construction: &'static str,
    pheromone: &'static str,
    iterations: u64,
    /// Milliseconds per iteration over seeds: total, construction, pheromone stage.
    ms_per_iteration: Spread,
    construct_ms: Spread,
    pheromone_ms: Spread,
    /// Pheromone stage: counted DRAM bytes per second / peak.
    pheromone_bandwidth_share: f64,
    /// Ant steps (m n per iteration) per second of construction.
    steps_per_second: f64,
    best_length: i64,
    scratch_in_global: bool,
}

#[derive(Serialize)]
struct InstanceRow {
    name: String,
    n: usize,
    gpu: Vec<GpuRow>,
    /// CPU `as` on all cores, ms per iteration (None: refused or skipped).
    cpu_ms_per_iteration: Option<Spread>,
    cpu_note: String,
}

#[derive(Serialize)]
struct Report {
    device: String,
    peak_bandwidth_bytes_per_s: f64,
    cpu_threads: usize,
    seeds: u64,
    instances: Vec<InstanceRow>,
}

/// Instance files: the arguments (files, or folders holding the default names), else the
/// default names in ../shared/data/tsplib/instances.
/// The quality instances (`--quality`).
pub const QUALITY_INSTANCES: [&str; 3] = ["rat783", "pr2392", "rl11849"];

fn instance_files(args: &BenchTspArgs) -> Result<Vec<PathBuf>> {
    let defaults: &[&str] = if args.quality {
        &QUALITY_INSTANCES
    } else {
        &DEFAULT_INSTANCES
    };
    let in_folder = |dir: &Path| -> Vec<PathBuf> {
        defaults
            .iter()
            .map(|name| dir.join(format!("{name}.tsp")))
            .filter(|p| p.is_file())
            .collect()
    };
    if args.instances.is_empty() {
        let dir = Path::new("../shared/data/tsplib/instances");
        let found = in_folder(dir);
        if found.is_empty() {
            bail!(
                "no instances given and none of {} found in {}",
                defaults.join(", "),
                dir.display()
            );
        }
        return Ok(found);
    }
    let mut files = Vec::new();
    for p in &args.instances {
        if p.is_dir() {
            let found = in_folder(p);
            if found.is_empty() {
                bail!(
                    "{} holds none of {}.tsp",
                    p.display(),
                    defaults.join(".tsp, ")
                );
            }
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    Ok(files)
}

fn peak_bandwidth(gpu: &Gpu) -> Result<f64> {
    let attribute = |a: CUdevice_attribute| -> Result<f64> {
        Ok(gpu
            .context()
            .attribute(a)
            .map_err(|e| anyhow::anyhow!("reading {a:?}: {e:?}"))? as f64)
    };
    let clock_khz = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?;
    let bus_bits = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?;
    // Double data rate.
    Ok(2.0 * clock_khz * 1e3 * bus_bits / 8.0)
}

/// DRAM bytes of one pheromone stage (evaporation, deposit of m tours, choice information).
fn pheromone_bytes(n: usize, m: usize, k: usize, update: PheromoneUpdate) -> f64 {
    let (n, m, k) = (n as f64, m as f64, k as f64);
    let evaporate = 8.0 * n * n;
    let choice = 8.0 * n * n + 12.0 * n * k;
    let deposit = match update {
        // Tours read twice (a, b) and 2 m n read-modify-writes of 4 bytes.
        PheromoneUpdate::Atomic => 8.0 * m * n + 16.0 * m * n,
        // Tours read, succ/pred written then read, 2 m n cells read and written.
        PheromoneUpdate::Gather => 8.0 * m * n + 16.0 * m * n + 16.0 * m * n,
    };
    evaporate + choice + deposit
}

pub fn run(args: &BenchTspArgs) -> Result<()> {
    super::check_output("--json", args.json.as_deref())?;
    let files = instance_files(args)?;
    if !gpu::driver_available() {
        bail!("mats bench tsp needs an NVIDIA GPU: no CUDA driver (libcuda.so) found");
    }
    let gpu = Gpu::open(args.gpu)?;
    let peak = peak_bandwidth(&gpu)?;
    let cache = KernelCache::new(KernelCache::default_dir());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let seeds = args.seeds.max(1);
    if args.quality {
        return quality(&gpu, &cache, &files, args, threads);
    }
    println!(
        "device: {} ({}, {} SMs, DRAM peak {:.0} GB/s); CPU `as` on {threads} threads; \
         m = n ants, 32 candidates, alpha 1, beta 2, rho 0.5; {seeds} seeds",
        gpu.info.name,
        gpu.info.arch,
        gpu.info.sm_count,
        peak / 1e9
    );
    let mut report = Report {
        device: format!("{} ({})", gpu.info.name, gpu.info.arch),
        peak_bandwidth_bytes_per_s: peak,
        cpu_threads: threads,
        seeds,
        instances: Vec::new(),
    };
    for file in &files {
        let inst = solvers::tsp::read(file).map_err(|e| anyhow::anyhow!("{e}"))?;
        let n = inst.n();
        println!("\n{} (n = {n})", inst.name);
        println!(
            "  {:<16} {:<8} {:>6} {:>26} {:>10} {:>10} {:>9} {:>12} {:>10}",
            "construction",
            "update",
            "iters",
            "ms/iteration mean [min, max]",
            "construct",
            "pheromone",
            "BW share",
            "steps/s",
            "best"
        );
        let mut rows = Vec::new();
        for (construction, update) in CONFIGS {
            let mut params = GpuParams::new(construction);
            params.pheromone = update;
            if let Err(why) = params.check(&inst, &gpu.info) {
                println!(
                    "  {:<16} {:<8} refused: {why}",
                    construction.name(),
                    update.name()
                );
                continue;
            }
            let row = bench_gpu(&gpu, &cache, &inst, &params, args, peak).with_context(|| {
                format!("{} {}/{}", inst.name, construction.name(), update.name())
            })?;
            println!(
                "  {:<16} {:<8} {:>6} {:>9.3} [{:>6.3}, {:>6.3}] {:>10.3} {:>10.3} {:>8.1}% {:>12.3e} {:>10}{}",
                row.construction,
                row.pheromone,
                row.iterations,
                row.ms_per_iteration.mean,
                row.ms_per_iteration.min,
                row.ms_per_iteration.max,
                row.construct_ms.mean,
                row.pheromone_ms.mean,
                row.pheromone_bandwidth_share * 100.0,
                row.steps_per_second,
                row.best_length,
                if row.scratch_in_global { " (scratch in global memory)" } else { "" }
            );
            rows.push(row);
        }
        let (cpu, note) = if args.no_cpu {
            (None, "skipped (--no-cpu)".to_string())
        } else {
            match bench_cpu(&inst, args.cpu_iterations.max(1), seeds, threads) {
                Ok(s) => (Some(s), String::new()),
                Err(why) => (None, why),
            }
        };
        match &cpu {
            Some(s) => {
                println!(
                    "  {:<16} {:<8} {:>6} {:>9.3} [{:>6.3}, {:>6.3}]",
                    format!("CPU as x{threads}"),
                    "",
                    args.cpu_iterations.max(1),
                    s.mean,
                    s.min,
                    s.max
                );
                for row in &rows {
                    println!(
                        "    {}/{}: {:.1}x the CPU on all cores",
                        row.construction,
                        row.pheromone,
                        s.mean / row.ms_per_iteration.mean
                    );
                }
            }
            None => println!("  CPU as: {note}"),
        }
        report.instances.push(InstanceRow {
            name: inst.name.clone(),
            n,
            gpu: rows,
            cpu_ms_per_iteration: cpu,
            cpu_note: note,
        });
    }
    if let Some(path) = &args.json {
        super::write_json(path, &report)?;
    }
    Ok(())
}

fn bench_gpu(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
    args: &BenchTspArgs,
    peak: f64,
) -> Result<GpuRow> {
    let mut prepared = tsp_gpu::prepare(gpu, cache, inst, params)?;
    let (n, m, k) = {
        let colony = prepared.colony();
        (colony.cities(), colony.ants(), colony.list_length())
    };
    let options = |seed: u64, iterations: u64| RunOptions {
        seed,
        threads: 1,
        budget: Budget::iterations(iterations),
    };
    // Warm-up (and the size of a run: about a second per seed at most).
    let warm = prepared.run(gpu, &options(0, 1))?;
    let one = warm.construct_seconds + warm.pheromone_seconds;
    let iterations = ((1.0 / one.max(1e-6)) as u64).clamp(1, args.iterations.max(1));
    let (mut total, mut construct, mut pheromone) = (Vec::new(), Vec::new(), Vec::new());
    let mut best = i64::MAX;
    let mut scratch_in_global = false;
    for seed in 1..=args.seeds.max(1) {
        let run = prepared.run(gpu, &options(seed, iterations))?;
        // The driver re-scored the tour; check once more here, as the CLI does.
        let exact = inst.tour_length(&run.outcome.solution);
        if exact != run.outcome.objective {
            bail!("GPU length {} but exact {exact}", run.outcome.objective);
        }
        let it = run.outcome.iterations as f64;
        construct.push(run.construct_seconds * 1e3 / it);
        pheromone.push(run.pheromone_seconds * 1e3 / it);
        total.push((run.construct_seconds + run.pheromone_seconds) * 1e3 / it);
        best = best.min(run.outcome.objective);
        scratch_in_global = run.scratch_in_global;
    }
    let construct_ms = Spread::of(&construct);
    let pheromone_ms = Spread::of(&pheromone);
    Ok(GpuRow {
        construction: params.construction.name(),
        pheromone: params.pheromone.name(),
        iterations,
        ms_per_iteration: Spread::of(&total),
        construct_ms,
        pheromone_ms,
        pheromone_bandwidth_share: pheromone_bytes(n, m, k, params.pheromone)
            / (pheromone_ms.mean / 1e3)
            / peak,
        steps_per_second: (m * n) as f64 / (construct_ms.mean / 1e3),
        best_length: best,
        scratch_in_global,
    })
}

fn bench_cpu(
    inst: &Instance,
    iterations: u64,
    seeds: u64,
    threads: usize,
) -> std::result::Result<Spread, String> {
    let params = AsParams::default();
    let mut per_iteration = Vec::new();
    for seed in 1..=seeds {
        let ms = solvers::run::with_threads(threads, || -> std::result::Result<f64, String> {
            let mut state = AntSystem::new(inst, &params, seed)?;
            let started = Instant::now();
            for _ in 0..iterations {
                state.iterate();
            }
            Ok(started.elapsed().as_secs_f64() * 1e3 / iterations as f64)
        })?;
        per_iteration.push(ms);
    }
    Ok(Spread::of(&per_iteration))
}

/// One side of a quality comparison on one instance: gaps (%) per seed.
#[derive(Serialize)]
struct QualitySide {
    gaps_percent: Vec<f64>,
    mean: f64,
    sd: f64,
    iterations: Vec<u64>,
}

impl QualitySide {
    fn of(gaps: Vec<f64>, iterations: Vec<u64>) -> QualitySide {
        let k = gaps.len().max(1) as f64;
        let mean = gaps.iter().sum::<f64>() / k;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (k - 1.0).max(1.0);
        QualitySide {
            gaps_percent: gaps,
            mean,
            sd: var.sqrt(),
            iterations,
        }
    }
}

/// `--quality --json`: the runs' settings and one row per instance.
#[derive(Serialize)]
struct QualityReport {
    device: String,
    cpu_threads: usize,
    gpu_algo: String,
    cpu_algo: String,
    instances: Vec<QualityRow>,
}

#[derive(Serialize)]
struct QualityRow {
    instance: String,
    n: usize,
    best_known: i64,
    time_limit_s: f64,
    gpu: QualitySide,
    cpu: Option<QualitySide>,
}

/// `NAME=VALUE` pairs of a repeatable flag, by instance name.
fn per_instance<T: std::str::FromStr>(
    pairs: &[String],
    flag: &str,
) -> Result<std::collections::HashMap<String, T>> {
    let mut map = std::collections::HashMap::new();
    for pair in pairs {
        let parsed = pair
            .split_once('=')
            .and_then(|(name, v)| Some((name.trim().to_string(), v.trim().parse::<T>().ok()?)));
        match parsed {
            Some((name, v)) if !name.is_empty() => {
                map.insert(name, v);
            }
            _ => bail!("{flag} takes NAME=VALUE (e.g. pla33810=60), found {pair:?}"),
        }
    }
    Ok(map)
}

/// `--quality`: the GPU's `mmas` (MAX-MIN AS + 2-opt) or `focused` (`--gpu-algo`) against the
/// CPU `mmas` (or `focused`, `--cpu-algo`) on all cores at the same wall time.
fn quality(
    gpu: &Gpu,
    cache: &KernelCache,
    files: &[PathBuf],
    args: &BenchTspArgs,
    threads: usize,
) -> Result<()> {
    use solvers::gpu::GpuWorkload;
    if !(args.time_limit > 0.0 && args.time_limit.is_finite()) {
        bail!("--time-limit must be a positive number of seconds");
    }
    let budgets: std::collections::HashMap<String, f64> = per_instance(&args.budgets, "--budget")?;
    if let Some((name, t)) = budgets.iter().find(|(_, t)| !(**t > 0.0 && t.is_finite())) {
        bail!("--budget {name}={t}: the budget must be a positive number of seconds");
    }
    let instance_seeds: std::collections::HashMap<String, u64> =
        per_instance(&args.instance_seeds, "--instance-seeds")?;
    let focused = match args.cpu_algo.as_str() {
        "mmas" => false,
        "focused" => true,
        other => bail!("--cpu-algo takes mmas or focused, found {other:?}"),
    };
    let seeds = args.seeds.max(1);
    let params = match args.gpu_algo.as_str() {
        "mmas" => GpuParams::mmas(),
        "focused" => GpuParams::focused(),
        other => bail!("--gpu-algo takes mmas or focused, found {other:?}"),
    };
    let cpu_params = solvers::tsp::MmasParams::default();
    let focused_params = solvers::tsp::FocusedParams::default();
    println!(
        "device: {} ({}); {} s per run (unless --budget), {seeds} seeds (unless \
         --instance-seeds): GPU `{}` ({} ants, local search over {} candidates) vs CPU `{}` on \
         {threads} threads ({} ants); gap to the best known value, mean ± sd [per seed]",
        gpu.info.name,
        gpu.info.arch,
        args.time_limit,
        args.gpu_algo,
        params.ants.unwrap_or(0),
        params.local_search.neighbours,
        args.cpu_algo,
        if focused {
            focused_params.ants
        } else {
            cpu_params.ants
        },
    );
    let known = solvers::bks::BestKnown::embedded();
    let mut rows = Vec::new();
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    for (flag, given) in [
        ("--budget", budgets.keys().collect::<Vec<_>>()),
        ("--instance-seeds", instance_seeds.keys().collect()),
    ] {
        if let Some(name) = given.into_iter().find(|n| !names.contains(n)) {
            bail!(
                "{flag} {name}=...: no instance of the run is named {name} (they are: {})",
                names.join(", ")
            );
        }
    }
    for file in files {
        let inst = solvers::tsp::read(file).map_err(|e| anyhow::anyhow!("{e}"))?;
        let Some(bks) = known.get(&inst.name).map(|e| e.value) else {
            println!("{}: no best-known value, skipped", inst.name);
            continue;
        };
        let gap = |len: i64| solvers::bks::gap_percent(len, bks).unwrap_or(0.0);
        let time_limit = budgets.get(&inst.name).copied().unwrap_or(args.time_limit);
        let seeds = instance_seeds
            .get(&inst.name)
            .copied()
            .unwrap_or(seeds)
            .max(1);
        let options = |seed: u64, threads: usize| RunOptions {
            seed,
            threads,
            budget: Budget::time_limit(std::time::Duration::from_secs_f64(time_limit)),
        };
        let mut prepared = params
            .prepare(gpu, cache, &inst)
            .with_context(|| format!("{}: preparing the GPU {}", inst.name, args.gpu_algo))?;
        let (mut gaps, mut iterations) = (Vec::new(), Vec::new());
        for seed in 1..=seeds {
            let run = prepared
                .run(gpu, &options(seed, 1))
                .with_context(|| format!("{}: GPU {} seed {seed}", inst.name, args.gpu_algo))?;
            gaps.push(gap(run.outcome.objective));
            iterations.push(run.outcome.iterations);
        }
        let gpu_side = QualitySide::of(gaps, iterations);
        let cpu_side = if args.no_cpu {
            None
        } else {
            let (mut gaps, mut iterations) = (Vec::new(), Vec::new());
            for seed in 1..=seeds {
                let run = if focused {
                    solvers::tsp::focused(&inst, &focused_params, &options(seed, threads))
                } else {
                    solvers::tsp::mmas(&inst, &cpu_params, &options(seed, threads))
                };
                match run {
                    Ok(out) => {
                        gaps.push(gap(out.objective));
                        iterations.push(out.iterations);
                    }
                    Err(why) => {
                        println!("  CPU {}: {why}", args.cpu_algo);
                        break;
                    }
                }
            }
            (!gaps.is_empty()).then(|| QualitySide::of(gaps, iterations))
        };
        let show = |s: &QualitySide| {
            let each: Vec<String> = s.gaps_percent.iter().map(|g| format!("{g:.3}")).collect();
            let its: Vec<String> = s.iterations.iter().map(|i| i.to_string()).collect();
            format!(
                "{:.3} ± {:.3}% [{}] ({} iterations)",
                s.mean,
                s.sd,
                each.join(", "),
                its.join("/")
            )
        };
        println!(
            "\n{} (n = {}, best known {bks}, {time_limit} s, {seeds} seeds)",
            inst.name,
            inst.n()
        );
        println!("  GPU {:<11} {}", args.gpu_algo, show(&gpu_side));
        if let Some(c) = &cpu_side {
            println!("  CPU {} x{threads:<3}  {}", args.cpu_algo, show(c));
            // Means over the same seeds only: a CPU that failed part-way is no comparison.
            if c.gaps_percent.len() == gpu_side.gaps_percent.len() {
                println!(
                    "  GPU {} the CPU by {:.3} points of gap",
                    if gpu_side.mean < c.mean {
                        "below"
                    } else {
                        "NOT below"
                    },
                    (c.mean - gpu_side.mean).abs()
                );
            } else {
                println!(
                    "  no comparison: the CPU ran {} of the {} seeds",
                    c.gaps_percent.len(),
                    gpu_side.gaps_percent.len()
                );
            }
        }
        rows.push(QualityRow {
            instance: inst.name.clone(),
            n: inst.n(),
            best_known: bks,
            time_limit_s: time_limit,
            gpu: gpu_side,
            cpu: cpu_side,
        });
    }
    if let Some(path) = &args.json {
        let report = QualityReport {
            device: format!("{} ({})", gpu.info.name, gpu.info.arch),
            cpu_threads: threads,
            gpu_algo: args.gpu_algo.clone(),
            cpu_algo: args.cpu_algo.clone(),
            instances: rows,
        };
        super::write_json(path, &report)?;
    }
    Ok(())
}
