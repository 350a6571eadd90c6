//! `mats solve --gpus all|LIST`: one instance on several GPUs as islands. Each GPU runs the
//! configuration the flags (or `--tuned`) chose for one GPU, in epochs of
//! `--exchange-interval` seconds; between epochs the best solution of all islands is handed to
//! every island (`solvers::gpu::islands`, which says why best-to-all). The time limit counts
//! from process start, setup on every GPU included. One GPU listed runs the one-GPU solve.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use solvers::family::Instance;
use solvers::gpu::device_island::DeviceIsland;
use solvers::gpu::islands::{run_islands, Island, IslandFactory, IslandWork, Schedule};
use solvers::gpu::{CompileTarget, GpuConfig};
use solvers::run::{Outcome, RunOptions};

use super::{GpuDetails, Solved, MAX_TIME_LIMIT_S};
use crate::cli::{Backend, SolveArgs};

/// More islands than any host has GPUs; a longer list is a typing error. A GPU may be listed
/// more than once: its islands then share it (how the exchange is tried on a one-GPU machine).
const MAX_GPUS: usize = 64;

/// The shortest exchange interval: an epoch is at least a launch, a read-back and an exchange
/// on the host, and shorter epochs would do little else.
const SHORTEST_INTERVAL_S: f64 = 0.05;

/// What `--gpus` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuList {
    All,
    Listed(Vec<usize>),
}

impl GpuList {
    pub fn parse(text: &str) -> Result<GpuList> {
        let text = text.trim();
        if text == "all" {
            return Ok(GpuList::All);
        }
        let mut listed = Vec::new();
        for part in text.split(',') {
            let ordinal: usize = part.trim().parse().with_context(|| {
                format!("--gpus takes `all` or GPU ordinals such as 0,1; found {text:?}")
            })?;
            listed.push(ordinal);
        }
        if listed.len() > MAX_GPUS {
            bail!("--gpus lists {} GPUs; at most {MAX_GPUS}", listed.len());
        }
        Ok(GpuList::Listed(listed))
    }

    /// The GPU that runs the flag checks and the one-GPU solve.
    fn lead(&self) -> usize {
        match self {
            GpuList::All => 0,
            GpuList::Listed(gpus) => gpus[0],
        }
    }

    fn several(&self) -> bool {
        !matches!(self, GpuList::Listed(gpus) if gpus.len() == 1)
    }
}

/// Checks `--gpus` and `--exchange-interval` before anything runs (their errors show on any
/// machine) and returns the arguments with `--gpu` set to the first GPU listed, which the
/// family's flag checks open.
pub(super) fn lead_gpu(args: &SolveArgs) -> Result<Cow<'_, SolveArgs>> {
    let Some(text) = &args.gpus else {
        return Ok(Cow::Borrowed(args));
    };
    let list = GpuList::parse(text)?;
    if args.backend() != Backend::Gpu && args.tuned.is_none() {
        bail!("--gpus applies to --backend gpu (or a GPU bundle with --tuned)");
    }
    if let Some(s) = args.exchange_interval {
        if !(s.is_finite() && (SHORTEST_INTERVAL_S..=MAX_TIME_LIMIT_S).contains(&s)) {
            bail!(
                "--exchange-interval must be a positive number of seconds, at least \
                 {SHORTEST_INTERVAL_S}, found {s}"
            );
        }
    }
    if list.several() {
        if args.time_limit.is_none() {
            bail!("--gpus with several GPUs runs islands for a wall time: give --time-limit");
        }
        if args.iterations.is_some() {
            bail!("--iterations does not apply to an island solve (--gpus with several GPUs); it runs for --time-limit");
        }
    }
    let mut lead = args.clone();
    lead.gpu = list.lead();
    Ok(Cow::Owned(lead))
}

/// The GPUs of an island solve: `None` where `--gpus` is absent or names one GPU (the one-GPU
/// solve runs).
fn devices(args: &SolveArgs) -> Result<Option<Vec<usize>>> {
    let Some(text) = &args.gpus else {
        return Ok(None);
    };
    let devices = match GpuList::parse(text)? {
        GpuList::All => (0..kernels::gpu::device_count()?).collect(),
        GpuList::Listed(gpus) => gpus,
    };
    Ok((devices.len() > 1).then_some(devices))
}

/// The default exchange interval: a tenth of the time limit, within 0.5 s and 30 s.
pub fn default_interval(limit: Duration) -> Duration {
    (limit / 10).clamp(Duration::from_millis(500), Duration::from_secs(30))
}

/// Runs `config` as islands where `--gpus` names several GPUs; `None` otherwise. `gpu` is the
/// lead GPU the caller opened: the kernel is compiled for it first, so that islands of the
/// same architecture find it in the cache instead of compiling it at once on every GPU.
pub(super) fn solve(
    args: &SolveArgs,
    gpu: &kernels::gpu::Gpu,
    config: &GpuConfig,
    cache: &kernels::KernelCache,
    instance: &Instance,
    options: &RunOptions,
    algorithm: &str,
) -> Result<Option<Solved>> {
    let Some(devices) = devices(args)? else {
        return Ok(None);
    };
    let limit = options
        .budget
        .time_limit
        .context("an island solve needs --time-limit")?;
    // The solve's whole limit; `limit` is what was left of it before the GPU was opened.
    let total = args.time_limit.map_or(limit, Duration::from_secs_f64);
    // Counted from process start where main marked it.
    let deadline = match (solvers::run::process_start(), args.time_limit) {
        (Some(start), Some(_)) => start + total,
        _ => Instant::now() + limit,
    };
    let interval = match args.exchange_interval {
        Some(s) => Duration::from_secs_f64(s),
        None => default_interval(Duration::from_secs_f64(args.time_limit.unwrap_or(1.0))),
    };
    let variant = config
        .kernel_variant(instance, CompileTarget::from(&gpu.info))
        .map_err(anyhow::Error::msg)?;
    // Given up at the solve's deadline, as on one GPU.
    if let Err(e) = cache.clone().until(deadline).get_or_compile(&variant) {
        return match super::CompileOutOfTime::of(e, algorithm) {
            Ok(compile) => compile
                .answer(args, config, cache, instance, options)
                .map(Some),
            Err(e) => Err(e).with_context(|| format!("compiling {algorithm} for GPU {}", args.gpu)),
        };
    }
    let factories: Vec<IslandFactory<'_>> = devices
        .iter()
        .enumerate()
        .map(|(island, &ordinal)| {
            Box::new(move || {
                DeviceIsland::open(ordinal, config, cache, instance, options.seed, island)
                    .map(|i| i.with_start_basis(total))
                    .map(|i| Box::new(i) as Box<dyn Island>)
            }) as IslandFactory<'_>
        })
        .collect();
    let rescore = |s: &[usize]| instance.objective(s).map_err(|e| e.to_string());
    let schedule = Schedule::new(deadline, interval, total);
    let out = run_islands(factories, schedule, &rescore)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("island solve of {} on GPUs {devices:?}", instance.name()))?;
    let report = IslandsReport::new(&devices, interval, &out);
    if let Some(why) = &out.failure {
        eprintln!(
            "warning: the island solve ended early: {why}; the answer is the best the islands \
             returned before (re-scored on the CPU)"
        );
    }
    if out.exchanges > 0 && out.islands.iter().all(|w| w.seeded_epochs == 0) {
        eprintln!(
            "note: {algorithm} cannot start from exchanged solutions; its islands searched \
             independently and the best of them is reported"
        );
    }
    Ok(Some(solved(out, report, config, algorithm)))
}

fn solved(
    out: solvers::gpu::islands::IslandsOutcome,
    report: IslandsReport,
    config: &GpuConfig,
    algorithm: &str,
) -> Solved {
    let lead = out.islands[out.best.island]
        .facts
        .clone()
        .unwrap_or_default();
    let sum = |f: fn(&IslandWork) -> u64| out.islands.iter().map(f).sum::<u64>();
    let (solutions, _) = config.shape();
    Solved {
        outcome: Outcome {
            solution: out.best.solution.clone(),
            objective: out.best.objective,
            iterations: sum(|w| w.iterations),
            evaluations: sum(|w| w.evaluations),
        },
        algorithm: algorithm.to_string(),
        start_explained: false,
        target: None,
        backend: "gpu",
        threads: lead.threads_per_block as usize,
        starts: None,
        tuned: None,
        gpu: Some(GpuDetails {
            device: lead.device,
            solutions: if solutions > 0 {
                solutions
            } else {
                lead.blocks
            },
            threads_per_block: lead.threads_per_block,
            kernel_seconds: out.islands.iter().map(|w| w.kernel_seconds).sum(),
            launches: u32::try_from(sum(|w| w.launches)).unwrap_or(u32::MAX),
            registers: lead.registers,
            local_bytes_per_thread: lead.local_bytes_per_thread,
            cache: lead.cache,
            flags: config.flags().to_vec(),
            layout: lead.layout,
            blocks_per_sm: lead.blocks_per_sm,
            adaptation: None,
            power_w: None,
            energy_j: None,
            islands: Some(report),
        }),
    }
}

/// The `gpu.islands` object of `mats solve --json` (docs/json.md).
#[derive(Debug, Serialize)]
pub struct IslandsReport {
    pub gpus: Vec<usize>,
    /// The exchange rule: `best-to-all`.
    pub exchange: &'static str,
    pub exchange_interval_s: f64,
    pub exchanges: u32,
    /// The GPU (ordinal) whose island found the reported solution first, its island index and
    /// epoch.
    pub best_gpu: usize,
    pub best_island: usize,
    pub best_epoch: u32,
    pub per_gpu: Vec<IslandRow>,
    /// Why the run ended early (an island's failure after the answer was found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// One GPU's work in an island solve.
#[derive(Debug, Serialize)]
pub struct IslandRow {
    pub gpu: usize,
    pub device: String,
    /// Epochs, seeded epochs, work, kernel/busy/setup seconds and the island's best.
    #[serde(flatten)]
    pub work: solvers::gpu::islands::IslandWork,
}

impl IslandsReport {
    fn new(
        devices: &[usize],
        interval: Duration,
        out: &solvers::gpu::islands::IslandsOutcome,
    ) -> IslandsReport {
        IslandsReport {
            gpus: devices.to_vec(),
            exchange: "best-to-all",
            exchange_interval_s: interval.as_secs_f64(),
            exchanges: out.exchanges,
            best_gpu: devices[out.best.island],
            best_island: out.best.island,
            best_epoch: out.best.epoch,
            per_gpu: out
                .islands
                .iter()
                .map(|w| IslandRow {
                    gpu: devices[w.island],
                    device: w
                        .facts
                        .as_ref()
                        .map(|f| f.device.clone())
                        .unwrap_or_default(),
                    work: w.clone(),
                })
                .collect(),
            failure: out.failure.clone(),
        }
    }
}

/// The text lines of an island solve, after the `gpu` line.
pub(super) fn print(r: &IslandsReport) {
    println!(
        "islands    {} GPUs, {} exchanges (best-to-all every {:.3} s); best found on GPU {} in epoch {}",
        r.gpus.len(),
        r.exchanges,
        r.exchange_interval_s,
        r.best_gpu,
        r.best_epoch
    );
    for row in &r.per_gpu {
        println!(
            "  gpu {:<3} {}: best {}, {} epochs ({} seeded), {} iterations, {} launches, busy {:.3} s, setup {:.3} s",
            row.gpu,
            row.device,
            row.work.best_objective.map_or("-".into(), |b| b.to_string()),
            row.work.epochs,
            row.work.seeded_epochs,
            row.work.iterations,
            row.work.launches,
            row.work.busy_seconds,
            row.work.setup_seconds
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_lists_parse_or_say_why() {
        assert_eq!(GpuList::parse("all").unwrap(), GpuList::All);
        assert_eq!(GpuList::parse("1, 0").unwrap(), GpuList::Listed(vec![1, 0]));
        assert_eq!(GpuList::parse("1").unwrap().lead(), 1);
        assert!(!GpuList::parse("3").unwrap().several());
        assert!(GpuList::parse("0,1").unwrap().several());
        assert!(GpuList::All.several());
        // A GPU listed twice runs two islands on it (the exchange tested on one GPU).
        assert_eq!(GpuList::parse("0,0").unwrap(), GpuList::Listed(vec![0, 0]));
        assert!(GpuList::parse("0,0").unwrap().several());
        for bad in ["", "0,", "x", "-1", "0;1"] {
            let err = format!("{:#}", GpuList::parse(bad).unwrap_err());
            assert!(err.starts_with("--gpus takes `all`"), "{bad:?}: {err}");
        }
        let many: Vec<String> = (0..65).map(|i| i.to_string()).collect();
        assert!(GpuList::parse(&many.join(",")).is_err());
    }

    #[test]
    fn the_default_interval_is_a_tenth_of_the_limit_within_bounds() {
        assert_eq!(
            default_interval(Duration::from_secs(10)),
            Duration::from_secs(1)
        );
        assert_eq!(
            default_interval(Duration::from_secs(1)),
            Duration::from_millis(500)
        );
        assert_eq!(
            default_interval(Duration::from_secs(3600)),
            Duration::from_secs(30)
        );
    }
}
