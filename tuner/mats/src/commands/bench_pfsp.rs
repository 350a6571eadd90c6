//! `mats bench pfsp`: the flowshop GPU variants against the CPU, side by side in one run.
//!
//! Throughput: swap neighbours evaluated per second by `tabu-full`, `tabu-prefix` (from kernel
//! time, CUDA events, and from wall time) and the CPU `tabu` on all cores and on one core (wall
//! time), on random instances from Taillard's generator at the paper's Table 2 sizes. The two
//! GPU variants run the same number of iterations from the same start (they take the same
//! moves), so their ratio compares equal work, as the paper's speedup does.
//!
//! Quality (`--quality`): the iterated-greedy variants (`--variants`, default `ig-block,ig-grid`)
//! against the CPU iterated greedy on the cores the GPU's host thread leaves (one independent
//! walk per core, the best kept; it runs at the same time as the first variant) at the same wall
//! time per instance, n m / 2 x `--time-factor` ms, on Taillard's instances, several seeds;
//! gaps to the best-known table, mean and standard deviation per instance and per class.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use serde::Serialize;
use solvers::pfsp::gpu::{self as pfsp_gpu, GpuAlgorithm, GpuParams};
use solvers::pfsp::{self, IgParams, Instance, TabuParams};
use solvers::run::{Budget, RunOptions};

use crate::cli::BenchPfspArgs;

#[derive(Serialize)]
struct Rate {
    mean: f64,
    min: f64,
    max: f64,
}

impl Rate {
    fn of(values: &[f64]) -> Rate {
        Rate {
            mean: values.iter().sum::<f64>() / values.len().max(1) as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

#[derive(Serialize)]
struct Throughput {
    machines: usize,
    jobs: usize,
    iterations: u64,
    full_kernel: Rate,
    full_wall: Rate,
    prefix_kernel: Rate,
    prefix_wall: Rate,
    prefix_over_full: Rate,
    cpu_all_cores: f64,
    cpu_one_core: f64,
    registers_full: u32,
    registers_prefix: u32,
}

#[derive(Serialize)]
struct QualityRow {
    instance: String,
    jobs: usize,
    machines: usize,
    best_known: i64,
    seconds: f64,
    /// The first variant's, run beside the CPU.
    variant: String,
    gpu_gaps: Vec<f64>,
    cpu_gaps: Vec<f64>,
    gpu_walks: u32,
    gpu_iterations: Vec<u64>,
    cpu_iterations: Vec<u64>,
    others: Vec<OtherVariant>,
}

#[derive(Serialize)]
struct OtherVariant {
    variant: String,
    gaps: Vec<f64>,
    walks: u32,
    iterations: Vec<u64>,
}

#[derive(Serialize)]
struct Report {
    device: String,
    cpu_threads: usize,
    throughput: Vec<Throughput>,
    time_factor_ms: f64,
    /// `--seconds`: the fixed wall time per instance that replaced the time factor.
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<f64>,
    quality: Vec<QualityRow>,
}

/// The paper's Table 2 sizes, machines x jobs.
pub const PAPER_SIZES: [(usize, usize); 8] = [
    (15, 100),
    (20, 150),
    (25, 200),
    (25, 350),
    (30, 500),
    (30, 650),
    (35, 800),
    (40, 900),
];

pub fn run(args: &BenchPfspArgs) -> Result<()> {
    super::check_output("--json", args.json.as_deref())?;
    if !gpu::driver_available() {
        bail!("mats bench pfsp needs an NVIDIA GPU: no CUDA driver (libcuda.so) found");
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
    let mut throughput = Vec::new();
    if !args.no_throughput {
        let sizes = parse_sizes(&args.sizes)?;
        throughput = tabu_throughput(&gpu, &cache, &sizes, args.repeats as usize, threads)?;
    }
    let mut quality = Vec::new();
    if args.quality {
        quality = ig_quality(&gpu, &cache, args, threads)?;
    } else {
        println!(
            "\n(ig-block and ig-grid against the CPU iterated greedy on Taillard's instances: add --quality)"
        );
    }
    if let Some(path) = &args.json {
        super::write_json(
            path,
            &Report {
                device: format!("{} ({})", gpu.info.name, gpu.info.arch),
                cpu_threads: threads,
                throughput,
                time_factor_ms: args.time_factor,
                seconds: args.seconds,
                quality,
            },
        )?;
    }
    Ok(())
}

/// `MxN` items (machines x jobs, as the paper writes them).
fn parse_sizes(items: &[String]) -> Result<Vec<(usize, usize)>> {
    if items.is_empty() {
        return Ok(PAPER_SIZES.to_vec());
    }
    items
        .iter()
        .map(|item| {
            let (m, n) = item
                .split_once('x')
                .with_context(|| format!("--sizes takes MACHINESxJOBS items, found {item:?}"))?;
            let parse = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .with_context(|| format!("--sizes: {item:?} is not MACHINESxJOBS"))
            };
            let (m, n) = (parse(m)?, parse(n)?);
            anyhow::ensure!(
                m >= 1 && n >= 2,
                "--sizes: {item:?} needs >= 1 machine and >= 2 jobs"
            );
            Ok((m, n))
        })
        .collect()
}

struct GpuRates {
    kernel: Vec<f64>,
    wall: Vec<f64>,
    registers: u32,
}

fn gpu_rates(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    algorithm: GpuAlgorithm,
    iterations: u64,
    repeats: usize,
) -> Result<GpuRates> {
    let prepared = pfsp_gpu::prepare(gpu, cache, inst, &GpuParams::new(algorithm))?;
    let options = RunOptions {
        budget: Budget::iterations(iterations),
        ..Default::default()
    };
    // Warm-up: clocks, caches, first-launch costs.
    prepared.run(
        gpu,
        &RunOptions {
            budget: Budget::iterations(3),
            ..Default::default()
        },
    )?;
    let mut rates = GpuRates {
        kernel: Vec::new(),
        wall: Vec::new(),
        registers: prepared.kernel().attributes.registers,
    };
    for _ in 0..repeats {
        let run = prepared.run(gpu, &options)?;
        let wall = run.search_seconds;
        anyhow::ensure!(
            inst.makespan(&run.outcome.solution) == run.outcome.objective,
            "{} returned a mis-scored solution on {}",
            algorithm.name(),
            inst.name
        );
        rates
            .kernel
            .push(run.outcome.evaluations as f64 / run.kernel_seconds);
        rates.wall.push(run.outcome.evaluations as f64 / wall);
    }
    Ok(rates)
}

/// GPU iterations that take about `target` of wall time, from a short timed run.
fn calibrate(gpu: &Gpu, cache: &KernelCache, inst: &Instance, target: f64) -> Result<u64> {
    let prepared = pfsp_gpu::prepare(gpu, cache, inst, &GpuParams::new(GpuAlgorithm::TabuFull))?;
    let probe = 3u64;
    let run = prepared.run(
        gpu,
        &RunOptions {
            budget: Budget::iterations(probe),
            ..Default::default()
        },
    )?;
    let per_iteration = run.search_seconds / probe as f64;
    Ok(((target / per_iteration) as u64).clamp(3, 1000))
}

fn cpu_rate(inst: &Instance, threads: usize) -> f64 {
    let started = Instant::now();
    // At least one iteration; more until about a second has passed.
    let outcome = pfsp::tabu(
        inst,
        &TabuParams::default(),
        &RunOptions {
            threads,
            budget: Budget {
                iterations: Some(1000),
                time_limit: Some(Duration::from_secs(1)),
                ..Budget::default()
            },
            ..Default::default()
        },
    );
    outcome.evaluations as f64 / started.elapsed().as_secs_f64()
}

fn tabu_throughput(
    gpu: &Gpu,
    cache: &KernelCache,
    sizes: &[(usize, usize)],
    repeats: usize,
    threads: usize,
) -> Result<Vec<Throughput>> {
    println!(
        "\nswap neighbours evaluated per second (GPU: mean over {repeats} runs [min-max], from \
         kernel time, and from the search's wall time; CPU tabu: wall time, on all {threads} cores and on one):"
    );
    println!(
        "{:>6} {:>6} {:>5}  {:>27} {:>10}  {:>27} {:>10}  {:>17}  {:>10} {:>10}  {:>8} {:>8}",
        "m x n",
        "cells",
        "iters",
        "tabu-full (kernel)",
        "(wall)",
        "tabu-prefix (kernel)",
        "(wall)",
        "prefix/full",
        "CPU all",
        "CPU 1 core",
        "GPU/all",
        "GPU/1"
    );
    let mut rows = Vec::new();
    for &(m, n) in sizes {
        // Random instances from Taillard's generator, one seed per size.
        let inst = pfsp::generate(n, m, (1000 * m + n) as i64);
        let iterations = calibrate(gpu, cache, &inst, 0.5)?;
        let full = gpu_rates(
            gpu,
            cache,
            &inst,
            GpuAlgorithm::TabuFull,
            iterations,
            repeats,
        )?;
        let prefix = gpu_rates(
            gpu,
            cache,
            &inst,
            GpuAlgorithm::TabuPrefix,
            iterations,
            repeats,
        )?;
        let ratio: Vec<f64> = prefix
            .kernel
            .iter()
            .zip(&full.kernel)
            .map(|(p, f)| p / f)
            .collect();
        let cpu_all = cpu_rate(&inst, threads);
        let cpu_one = cpu_rate(&inst, 1);
        let (fk, fw, pk, pw, r) = (
            Rate::of(&full.kernel),
            Rate::of(&full.wall),
            Rate::of(&prefix.kernel),
            Rate::of(&prefix.wall),
            Rate::of(&ratio),
        );
        let best = fw.mean.max(pw.mean);
        println!(
            "{:>6} {:>6} {:>5}  {:>9.3e} [{:.2e}-{:.2e}] {:>10.3e}  {:>9.3e} [{:.2e}-{:.2e}] {:>10.3e}  {:>5.2} [{:.2}-{:.2}]  {:>10.3e} {:>10.3e}  {:>7.1}x {:>7.0}x",
            format!("{m}x{n}"),
            m * n,
            iterations,
            fk.mean,
            fk.min,
            fk.max,
            fw.mean,
            pk.mean,
            pk.min,
            pk.max,
            pw.mean,
            r.mean,
            r.min,
            r.max,
            cpu_all,
            cpu_one,
            best / cpu_all,
            best / cpu_one
        );
        rows.push(Throughput {
            machines: m,
            jobs: n,
            iterations,
            full_kernel: fk,
            full_wall: fw,
            prefix_kernel: pk,
            prefix_wall: pw,
            prefix_over_full: r,
            cpu_all_cores: cpu_all,
            cpu_one_core: cpu_one,
            registers_full: full.registers,
            registers_prefix: prefix.registers,
        });
    }
    println!(
        "(GPU/all and GPU/1: the faster variant's wall-time rate over the CPU's; the paper \
         reports prefix/full 0.61-0.85 at m n <= 3000 and 1.03-1.50 above 5000)"
    );
    Ok(rows)
}

/// One row of a best-known table: Taillard's (`DIR/bks.csv`, several instances per file) or
/// the VRF benchmark's (`DIR/vrf/bks.csv`, one per file).
#[derive(Debug, PartialEq)]
struct Taillard {
    name: String,
    file: PathBuf,
    /// 1-based within a Taillard file; `None` for a file of one instance.
    index: Option<usize>,
    best: i64,
}

/// Taillard's table and, where `DIR/vrf/bks.csv` exists, the VRF benchmark's.
fn read_taillard_table(dir: &Path) -> Result<Vec<Taillard>> {
    let mut rows = read_bks_table(&dir.join("bks.csv"), dir, Some("index_in_file"), "ta")?;
    let vrf = dir.join("vrf");
    if vrf.join("bks.csv").is_file() {
        rows.extend(read_bks_table(&vrf.join("bks.csv"), &vrf, None, "VFR")?);
    }
    Ok(rows)
}

/// The rows of `path` whose name starts with `prefix`, files relative to `dir`.
fn read_bks_table(
    path: &Path,
    dir: &Path,
    index_column: Option<&str>,
    prefix: &str,
) -> Result<Vec<Taillard>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--quality needs the best-known table {}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .with_context(|| format!("{} has no column {name}", path.display()))
    };
    let (c_name, c_file, c_bks) = (column("name")?, column("file")?, column("bks")?);
    let c_index = index_column.map(column).transpose()?;
    let mut rows = Vec::new();
    for (number, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        let field = |c: usize| {
            fields
                .get(c)
                .map(|s| s.trim())
                .with_context(|| format!("{}:{}: too few columns", path.display(), number + 2))
        };
        let name = field(c_name)?.to_string();
        if !name.starts_with(prefix) {
            continue;
        }
        let index = match c_index {
            Some(c) => Some(
                field(c)?
                    .parse()
                    .with_context(|| format!("{}:{}: bad index", path.display(), number + 2))?,
            ),
            None => None,
        };
        rows.push(Taillard {
            file: dir.join(field(c_file)?),
            index,
            best: field(c_bks)?
                .parse()
                .with_context(|| format!("{}:{}: bad bks", path.display(), number + 2))?,
            name,
        });
    }
    Ok(rows)
}

/// `ta051-ta053,ta081,VFR800_60_1` -> `ta051, ta052, ta053, ta081, VFR800_60_1`: Taillard's
/// as numbers or ranges, any other item as a name (a VRF instance).
fn parse_instances(spec: &str) -> Result<Vec<String>> {
    let number = |s: &str| {
        s.trim()
            .trim_start_matches("ta")
            .parse::<usize>()
            .with_context(|| format!("--instances: {s:?} is not taNNN"))
    };
    let taillard = |s: &str| {
        let s = s.trim();
        s.starts_with("ta") || s.starts_with(|c: char| c.is_ascii_digit())
    };
    let mut out = Vec::new();
    for item in spec.split(',').filter(|s| !s.trim().is_empty()) {
        match item.split_once('-') {
            Some((a, b)) if taillard(a) => {
                out.extend((number(a)?..=number(b)?).map(|k| format!("ta{k:03}")))
            }
            _ if taillard(item) => out.push(format!("ta{:03}", number(item)?)),
            _ => out.push(item.trim().to_string()),
        }
    }
    Ok(out)
}

/// The GPU iterated-greedy variants against the CPU's on Taillard instances, each for
/// n m / 2 x `--time-factor` ms per instance: prints a row per instance and the mean gap per
/// class, and returns the rows.
fn ig_quality(
    gpu: &Gpu,
    cache: &KernelCache,
    args: &BenchPfspArgs,
    threads: usize,
) -> Result<Vec<QualityRow>> {
    let table = read_taillard_table(&args.taillard)?;
    let wanted = parse_instances(&args.instances)?;
    anyhow::ensure!(
        args.time_factor.is_finite() && args.time_factor > 0.0,
        "--time-factor must be a positive number of milliseconds"
    );
    anyhow::ensure!(
        args.seconds.is_none_or(|s| s.is_finite() && s > 0.0),
        "--seconds must be a positive number of seconds"
    );
    let variants = args
        .variants
        .iter()
        .map(|v| GpuAlgorithm::from_name(v).map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    anyhow::ensure!(
        !variants.is_empty() && variants.iter().all(|v| !v.is_tabu()),
        "--variants takes the iterated-greedy variants: ig-block, ig-grid, ig-warp"
    );
    beam_width(&args.beam)?;
    // The CPU walks run while the first GPU variant runs, on the cores its host thread leaves.
    let cpu_walks = threads.saturating_sub(1).max(1);
    let names: Vec<&str> = variants.iter().map(|v| v.name()).collect();
    let budget = match args.seconds {
        Some(s) => format!("{s} s per instance"),
        None => format!("n m / 2 x {} ms per instance", args.time_factor),
    };
    println!(
        "\n{} (default parameters, --beam {}) against the CPU iterated greedy on {cpu_walks} cores (one walk \
         per core, best kept, run beside the first variant), all for {budget}; gap to the best \
         known in %, mean \u{b1} sd over seeds 1..={}:",
        names.join(", "),
        args.beam,
        args.seeds
    );
    let mut header = format!("{:<7} {:>8} {:>7} {:>8}", "inst", "n x m", "bks", "seconds");
    for name in names.iter().chain(std::iter::once(&"CPU IG")) {
        header += &format!("  {name:>15}");
    }
    header += &format!("  {:>6} {:>10} {:>10}", "walks", "it/walk", "CPU it/walk");
    println!("{header}");
    let bench = IgBench {
        gpu,
        cache,
        args,
        variants: &variants,
        cpu_walks,
    };
    let mut rows = Vec::new();
    for name in wanted {
        let Some(entry) = table.iter().find(|t| t.name == name) else {
            bail!(
                "{name} is not in {} or {}",
                args.taillard.join("bks.csv").display(),
                args.taillard.join("vrf").join("bks.csv").display()
            );
        };
        let row = bench.instance(entry)?;
        print_quality_row(&row, cpu_walks);
        rows.push(row);
    }
    print_class_means(&rows, &names);
    Ok(rows)
}

/// `--beam`: `auto` or a width (0: NEH starts).
fn beam_width(text: &str) -> Result<usize> {
    match text {
        "auto" => Ok(pfsp_gpu::BEAM_AUTO),
        w => w.parse().map_err(|_| {
            anyhow::anyhow!("--beam must be `auto` or a width (0: from NEH), got {w:?}")
        }),
    }
}

/// What every instance of the iterated-greedy comparison runs with.
struct IgBench<'a> {
    gpu: &'a Gpu,
    cache: &'a KernelCache,
    args: &'a BenchPfspArgs,
    variants: &'a [GpuAlgorithm],
    /// CPU walks, one per core the first variant's host thread leaves.
    cpu_walks: usize,
}

impl IgBench<'_> {
    /// Every variant and the CPU on one instance, once per seed.
    fn instance(&self, entry: &Taillard) -> Result<QualityRow> {
        let (gpu, variants) = (self.gpu, self.variants);
        let inst = pfsp::read(&entry.file, entry.index)?;
        let (n, m) = (inst.jobs, inst.machines);
        let seconds = self
            .args
            .seconds
            .unwrap_or((n * m) as f64 / 2.0 * self.args.time_factor / 1e3);
        let limit = Duration::from_secs_f64(seconds);
        // Compiled and loaded before the clock starts (the disk cache serves later runs).
        let beam = beam_width(&self.args.beam)?;
        let prepared = variants
            .iter()
            .map(|&v| {
                let params = GpuParams {
                    beam: if matches!(v, GpuAlgorithm::IgBlock | GpuAlgorithm::IgGrid) {
                        beam
                    } else {
                        0
                    },
                    ..GpuParams::new(v)
                };
                pfsp_gpu::prepare(gpu, self.cache, &inst, &params)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let gap = |value: i64| solvers::bks::gap_percent(value, entry.best).unwrap_or(0.0);
        let walks = |p: &pfsp_gpu::Prepared, v: GpuAlgorithm| {
            let l = p.launch();
            match v {
                GpuAlgorithm::IgWarp => l.grid.0 * (l.block.0 / 32),
                // A block per move: the walks are the grid's rows.
                GpuAlgorithm::IgGrid => l.grid.1,
                _ => l.grid.0,
            }
        };
        let mut row = QualityRow {
            instance: entry.name.clone(),
            jobs: n,
            machines: m,
            best_known: entry.best,
            seconds,
            variant: variants[0].name().to_string(),
            gpu_gaps: Vec::new(),
            cpu_gaps: Vec::new(),
            gpu_walks: walks(&prepared[0], variants[0]),
            gpu_iterations: Vec::new(),
            cpu_iterations: Vec::new(),
            others: variants[1..]
                .iter()
                .zip(&prepared[1..])
                .map(|(&v, p)| OtherVariant {
                    variant: v.name().to_string(),
                    gaps: Vec::new(),
                    walks: walks(p, v),
                    iterations: Vec::new(),
                })
                .collect(),
        };
        for seed in 1..=self.args.seeds {
            let options = RunOptions {
                seed,
                budget: Budget::time_limit(limit),
                ..Default::default()
            };
            let (first, cpu) = self.first_beside_cpu(&inst, &entry.name, &prepared[0], &options)?;
            row.gpu_gaps.push(gap(first.objective));
            row.gpu_iterations.push(first.iterations);
            row.cpu_gaps.push(gap(cpu.objective));
            row.cpu_iterations.push(cpu.iterations);
            for (other, p) in row.others.iter_mut().zip(&prepared[1..]) {
                let run = p.run(gpu, &options)?;
                anyhow::ensure!(
                    inst.makespan(&run.outcome.solution) == run.outcome.objective,
                    "{} returned a mis-scored solution on {}",
                    other.variant,
                    entry.name
                );
                other.gaps.push(gap(run.outcome.objective));
                other.iterations.push(run.outcome.iterations);
            }
        }
        Ok(row)
    }

    /// The first variant on the GPU and the CPU walks beside it, for one seed; both outcomes
    /// re-scored.
    fn first_beside_cpu(
        &self,
        inst: &Instance,
        name: &str,
        first: &pfsp_gpu::Prepared,
        options: &RunOptions,
    ) -> Result<(solvers::run::Outcome, solvers::run::Outcome)> {
        let cpu_walks = self.cpu_walks;
        let (gpu_run, cpu) = std::thread::scope(|scope| {
            let cpu = scope.spawn(|| {
                solvers::run::multistart(cpu_walks, cpu_walks, |walk| {
                    pfsp::iterated_greedy(
                        inst,
                        &IgParams::default(),
                        &RunOptions {
                            seed: options.seed * 1_000_003 + walk as u64,
                            threads: 1,
                            budget: options.budget.clone(),
                        },
                    )
                })
            });
            let gpu_run = first.run(self.gpu, options);
            (gpu_run, cpu.join())
        });
        let gpu_run = gpu_run?;
        let cpu = cpu
            .map_err(|_| anyhow::anyhow!("a CPU walk panicked"))?
            .context("no CPU walk ran")?;
        solvers::permutation::check(&gpu_run.outcome.solution, inst.jobs)
            .map_err(|e| anyhow::anyhow!("{} on {name}: {e}", self.variants[0].name()))?;
        anyhow::ensure!(
            inst.makespan(&gpu_run.outcome.solution) == gpu_run.outcome.objective,
            "{} returned a mis-scored solution on {name}",
            self.variants[0].name()
        );
        anyhow::ensure!(inst.makespan(&cpu.solution) == cpu.objective);
        Ok((gpu_run.outcome, cpu))
    }
}

/// One instance's line: each variant's and the CPU's gap, and the iterations per walk.
fn print_quality_row(row: &QualityRow, cpu_walks: usize) {
    let per_walk = |total: &[u64], walks: usize| {
        total.iter().sum::<u64>() as f64 / (total.len().max(1) * walks.max(1)) as f64
    };
    let spread = |g: &[f64]| format!("{:.3}\u{b1}{:.3}", mean(g), sd(g));
    let mut line = format!(
        "{:<7} {:>8} {:>7} {:>8.2}  {:>15}",
        row.instance,
        format!("{}x{}", row.jobs, row.machines),
        row.best_known,
        row.seconds,
        spread(&row.gpu_gaps)
    );
    for other in &row.others {
        line += &format!("  {:>15}", spread(&other.gaps));
    }
    line += &format!(
        "  {:>15}  {:>6} {:>10.0} {:>10.0}",
        spread(&row.cpu_gaps),
        row.gpu_walks,
        per_walk(&row.gpu_iterations, row.gpu_walks as usize),
        per_walk(&row.cpu_iterations, cpu_walks)
    );
    println!("{line}");
}

/// Mean gap per class (n x m): each variant's and the CPU's, and on how many instances the
/// first variant beat the CPU.
fn print_class_means(rows: &[QualityRow], names: &[&str]) {
    let mut classes: BTreeMap<(usize, usize), Vec<&QualityRow>> = BTreeMap::new();
    for r in rows {
        classes.entry((r.jobs, r.machines)).or_default().push(r);
    }
    println!("\nMean gap per class (mean over instances and seeds), % above the best known:");
    let mut header = format!("{:>8} {:>9}", "n x m", "instances");
    for name in names.iter().chain(std::iter::once(&"CPU IG")) {
        header += &format!("  {name:>15}");
    }
    println!("{header}  {} better than the CPU on", names[0]);
    for ((n, m), members) in &classes {
        let all = |f: &dyn Fn(&QualityRow) -> &Vec<f64>| -> Vec<f64> {
            members.iter().flat_map(|r| f(r).iter().copied()).collect()
        };
        let spread = |g: &[f64]| format!("{:.3}\u{b1}{:.3}", mean(g), sd(g));
        let mut line = format!("{:>8} {:>9}", format!("{n}x{m}"), members.len());
        line += &format!("  {:>15}", spread(&all(&|r| &r.gpu_gaps)));
        for k in 0..names.len() - 1 {
            line += &format!("  {:>15}", spread(&all(&|r| &r.others[k].gaps)));
        }
        line += &format!("  {:>15}", spread(&all(&|r| &r.cpu_gaps)));
        let wins = members
            .iter()
            .filter(|r| mean(&r.gpu_gaps) < mean(&r.cpu_gaps))
            .count();
        println!("{line}  {wins} of {}", members.len());
    }
}

/// Sample standard deviation (0 for fewer than two values).
fn sd(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let mu = mean(values);
    (values.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / (values.len() - 1) as f64).sqrt()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_take_taillard_ranges_and_vrf_names() {
        assert_eq!(
            parse_instances("ta051-ta053, 81,VFR800_60_1").unwrap(),
            ["ta051", "ta052", "ta053", "ta081", "VFR800_60_1"]
        );
        let e = parse_instances("ta05x").unwrap_err().to_string();
        assert!(e.contains("\"ta05x\" is not taNNN"), "{e}");
    }

    #[test]
    fn the_table_holds_taillard_and_vrf_rows_with_their_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("bks.csv"),
            "name,file,index_in_file,bks\nta001,taillard/tai20_5.txt,1,1278\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("vrf")).unwrap();
        std::fs::write(
            dir.path().join("vrf").join("bks.csv"),
            "name,set,file,bks\nVFR800_60_1,large,large/VFR800_60_1_Gap.txt,46470\n",
        )
        .unwrap();
        let rows = read_taillard_table(dir.path()).unwrap();
        assert_eq!(
            rows,
            [
                Taillard {
                    name: "ta001".into(),
                    file: dir.path().join("taillard/tai20_5.txt"),
                    index: Some(1),
                    best: 1278
                },
                Taillard {
                    name: "VFR800_60_1".into(),
                    file: dir.path().join("vrf").join("large/VFR800_60_1_Gap.txt"),
                    index: None,
                    best: 46470
                }
            ]
        );
        // Without a vrf folder only Taillard's rows; a bad index names the line.
        std::fs::remove_dir_all(dir.path().join("vrf")).unwrap();
        assert_eq!(read_taillard_table(dir.path()).unwrap().len(), 1);
        std::fs::write(
            dir.path().join("bks.csv"),
            "name,file,index_in_file,bks\nta001,t.txt,one,1278\n",
        )
        .unwrap();
        let e = format!("{:#}", read_taillard_table(dir.path()).unwrap_err());
        assert!(e.contains("bks.csv:2: bad index"), "{e}");
    }
}
