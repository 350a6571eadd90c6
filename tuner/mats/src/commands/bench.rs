//! `mats bench measure`: figures of the GPU runtime, measured side by side in one run.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use kernels::gpu::{self, Gpu};
use kernels::{source, CacheStatus, KernelCache, Variant};
use serde::Serialize;

use crate::cli::BenchMeasureArgs;
use measure::client::WorkerClient;
use measure::protocol::{Job, MeasureJob, MeasureResult, Outcome};
use measure::workload::WorkloadSpec;
use measure::MeasureSettings;

/// Mean, min and max of a bench's repeated figures (seeds, iterations).
#[derive(Serialize, Clone, Copy)]
pub(super) struct Spread {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        Spread {
            mean: values.iter().sum::<f64>() / values.len().max(1) as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

#[derive(Serialize)]
struct CompileTimes {
    source: String,
    cold_s: f64,
    warm_s: f64,
    disk_hit_s: f64,
    registers: Vec<(String, u32)>,
}

#[derive(Serialize)]
struct Report {
    device: String,
    compile: Vec<CompileTimes>,
    repeatability: Vec<MeasureResult>,
    time_spread: f64,
    power_spread: Option<f64>,
    fault_outcome: String,
    after_fault_ok: bool,
    workers_started: u32,
}

/// max / min of a series (1.0 = identical).
fn spread(values: &[f64]) -> f64 {
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    max / min
}

/// Compile times of every kernel source's example variant: NVRTC cold (first in this
/// process), warm (NVRTC's in-process cache), and a disk-cache hit.
fn compile_times(cache: &KernelCache, arch: kernels::Arch) -> Result<Vec<CompileTimes>> {
    let mut compile = Vec::new();
    for src in source::all().iter().filter(|s| !s.test_only) {
        let variant = src.example_variant(arch);
        let cold = kernels::nvrtc::compile(&variant)?;
        let warm = kernels::nvrtc::compile(&variant)?;
        let (_, first) = cache.get_or_compile(&variant)?;
        let started = Instant::now();
        let (_, second) = cache.get_or_compile(&variant)?;
        let disk_hit_s = started.elapsed().as_secs_f64();
        anyhow::ensure!(
            second == CacheStatus::Hit,
            "the disk cache missed twice for {} (first {first:?})",
            src.id
        );
        let registers: Vec<(String, u32)> = cold
            .resources
            .iter()
            .map(|r| (r.function.clone(), r.registers))
            .collect();
        if registers.is_empty() {
            eprintln!(
                "warning: NVRTC returned no ptxas resource report for {}",
                src.id
            );
        }
        println!(
            "{:<16} {:>9.1} {:>9.1} {:>11.2}  {}",
            src.id,
            cold.compile_seconds * 1e3,
            warm.compile_seconds * 1e3,
            disk_hit_s * 1e3,
            registers
                .iter()
                .map(|(f, r)| format!("{f}={r}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        compile.push(CompileTimes {
            source: src.id.into(),
            cold_s: cold.compile_seconds,
            warm_s: warm.compile_seconds,
            disk_hit_s,
            registers,
        });
    }

    Ok(compile)
}

/// One row of the repeatability table.
fn print_measurement(row: u32, result: &MeasureResult) {
    let m = &result.measurement;
    let e = m.energy.as_ref();
    let fmt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    println!(
        "{:>3} {:>10.4} {:>8.4} {:>9} {:>9} {:>9} {:>8} {:>7} {:>6} {:>9}",
        row,
        m.timing.median_ms,
        m.timing.spread,
        fmt(e.and_then(|e| e.average_power_w), 1),
        fmt(e.and_then(|e| e.samples.mean_w), 1),
        fmt(e.and_then(|e| e.samples.peak_w), 1),
        fmt(e.and_then(|e| e.energy_per_run_j), 4),
        e.map_or(0, |e| e.runs),
        fmt(e.map(|e| e.kernel_share), 3),
        m.throttled
    );
}

pub fn measure(args: &BenchMeasureArgs) -> Result<()> {
    super::check_output("--json", args.json.as_deref())?;
    if !gpu::driver_available() {
        bail!("mats bench measure needs an NVIDIA GPU: no CUDA driver (libcuda.so) found");
    }
    if !kernels::nvrtc::available() {
        bail!("{}", kernels::KernelError::NvrtcMissing);
    }
    anyhow::ensure!(
        args.repeats >= 2,
        "--repeats must be at least 2 to measure a spread"
    );
    let info = Gpu::open(args.gpu)?.info;
    println!(
        "device: GPU {} {} ({}, {} SMs)",
        info.ordinal, info.name, info.arch, info.sm_count
    );

    // 1. Compile times: NVRTC cold (first in this process), warm (NVRTC's in-process cache),
    //    and a disk-cache hit.
    println!("\ncompile times per kernel (default flags, {}):", info.arch);
    println!(
        "{:<16} {:>9} {:>9} {:>11}  registers",
        "kernel", "cold ms", "warm ms", "disk-hit ms"
    );
    let cache_dir = std::env::temp_dir().join(format!("mats-bench-{}", std::process::id()));
    let cache = KernelCache::new(&cache_dir);
    let compile = compile_times(&cache, info.arch)?;

    // 2. Repeatability: the same kernel measured `repeats` times in one worker process.
    let exe = std::env::current_exe().context("locating the mats binary for the worker")?;
    let mut client = WorkerClient::new(exe);
    let busy = WorkloadSpec::Busy {
        blocks: info.sm_count * 8,
        threads: 256,
        iterations: args.iterations,
    };
    let settings = MeasureSettings {
        energy_window_s: args.window,
        ..MeasureSettings::default()
    };
    let job = |workload: WorkloadSpec| {
        Job::Measure(MeasureJob {
            gpu: args.gpu,
            variant: Variant::new(workload.source(), info.arch).flag("--ptxas-options=-O3"),
            workload,
            settings: settings.clone(),
            cache_dir: Some(cache_dir.clone()),
        })
    };
    let timeout = Duration::from_secs_f64(60.0 + 4.0 * args.window);
    println!(
        "\nrepeatability: probe/busy, {} blocks x 256 threads, {} iterations, {} measurements in one worker",
        info.sm_count * 8,
        args.iterations,
        args.repeats
    );
    println!(
        "{:>3} {:>10} {:>8} {:>9} {:>9} {:>9} {:>8} {:>7} {:>6} {:>9}",
        "#",
        "median ms",
        "spread",
        "power W",
        "sampled W",
        "peak W",
        "J/run",
        "runs",
        "share",
        "throttled"
    );
    let mut repeatability = Vec::new();
    for k in 0..args.repeats {
        match client.request(job(busy.clone()), timeout) {
            Outcome::Measured(result) => {
                print_measurement(k + 1, &result);
                if !result.valid {
                    bail!(
                        "busy probe output check failed: {:?}",
                        result.invalid_reason
                    );
                }
                repeatability.push(*result);
            }
            other => bail!("measurement {} failed: {other:?}", k + 1),
        }
    }
    let medians: Vec<f64> = repeatability
        .iter()
        .map(|r| r.measurement.timing.median_ms)
        .collect();
    let powers: Vec<f64> = repeatability
        .iter()
        .filter_map(|r| {
            r.measurement
                .energy
                .as_ref()
                .and_then(|e| e.average_power_w)
        })
        .collect();
    let time_spread = spread(&medians);
    let power_spread = (powers.len() == medians.len()).then(|| spread(&powers));
    println!(
        "spread (max/min) of the median time: {:.2}% (target <= 3%)",
        (time_spread - 1.0) * 100.0
    );
    match power_spread {
        Some(s) => println!(
            "spread (max/min) of the average power: {:.2}% (target <= 5%)",
            (s - 1.0) * 100.0
        ),
        None => println!("average power: not available on this GPU (see `mats devices`)"),
    }
    if let Some(src) = repeatability[0]
        .measurement
        .energy
        .as_ref()
        .and_then(|e| e.energy_source)
    {
        println!("energy source: {src:?}");
    }

    // 3. Fault isolation: a kernel that writes out of bounds, then a healthy one.
    println!("\nfault isolation: probe/fault (writes out of bounds), then probe/busy again");
    let fault = client.request(job(WorkloadSpec::Fault), timeout);
    let fault_outcome = match &fault {
        Outcome::Crashed { message } => format!("crashed: {message}"),
        other => format!("{other:?}"),
    };
    println!("  fault probe -> {fault_outcome}");
    let after = client.request(job(busy), timeout);
    let after_fault_ok = matches!(&after, Outcome::Measured(r) if r.valid);
    println!(
        "  busy probe after the fault -> {} ({} workers started in all)",
        if after_fault_ok {
            "measured, valid"
        } else {
            "FAILED"
        },
        client.started
    );
    let _ = std::fs::remove_dir_all(&cache_dir);

    let report = Report {
        device: format!("{} ({})", info.name, info.arch),
        compile,
        repeatability,
        time_spread,
        power_spread,
        fault_outcome,
        after_fault_ok,
        workers_started: client.started,
    };
    if let Some(path) = &args.json {
        super::write_json(path, &report)?;
    }
    if !matches!(fault, Outcome::Crashed { .. }) || !after_fault_ok {
        bail!("fault isolation did not behave: the fault must crash one worker and the next job must succeed");
    }
    Ok(())
}
