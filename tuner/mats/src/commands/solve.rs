//! `mats solve`: run a solver on one instance, re-score its answer, report it.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use engine::campaign::config::RunMode;
use serde::Serialize;
use solvers::bks::gap_percent;
use solvers::family::{self, AlgorithmParams};
use solvers::qap::gpu as qap_gpu;
use solvers::run::{Budget, RunOptions};

use crate::cli::{Backend, SolveArgs};

/// The JSON output of `mats solve --json` (documented in docs/json.md).
#[derive(Debug, Serialize)]
pub struct SolveReport {
    pub family: String,
    pub instance: String,
    pub file: String,
    pub class: String,
    pub algorithm: String,
    pub backend: &'static str,
    pub objective: i64,
    pub best_known: Option<i64>,
    pub best_known_optimal: Option<bool>,
    pub gap_percent: Option<f64>,
    pub seconds: f64,
    pub iterations: u64,
    pub evaluations: u64,
    pub seed: u64,
    pub threads: usize,
    /// 1-based, as benchmark files write permutations; HW/SW: the 0/1 vector x.
    pub solution: Vec<usize>,
    /// GPU specifics; absent for the CPU backend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuDetails>,
    /// With --tuned: the tuned class chosen for the instance, its distance, and whether the
    /// family's default ran instead (the instance was too far from every tuned class).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuned: Option<TunedChoice>,
}

/// How `solve --tuned` chose what to run (the `tuned` object of the JSON output).
#[derive(Debug, Clone, Serialize)]
pub struct TunedChoice {
    /// The nearest tuned class (the instance's own class where it was tuned).
    pub class: String,
    /// 0 inside the class's feature ranges; see docs/json.md.
    pub distance: f64,
    /// Whether that class is the instance's own.
    pub exact: bool,
    /// The default ran because `distance` exceeded `--max-class-distance`.
    pub default_ran: bool,
    /// The bundle folder that ran (absent when the default ran).
    pub bundle: Option<String>,
    /// The budget and front point chosen in the class (absent when the default ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pick: Option<engine::pick::Pick>,
}

/// The longest `--time-limit`: far beyond any run, and far below where `Duration` and
/// `Instant` arithmetic overflow (1e19 s and more used to panic).
pub const MAX_TIME_LIMIT_S: f64 = 1e9;

pub fn run(args: &SolveArgs) -> Result<()> {
    let bar = time_bar(args.time_limit);
    let solved = solve(args);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let (report, known) = solved?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report, known);
    }
    Ok(())
}

/// A bar over the time limit on a terminal's stderr, for runs of more than a few seconds;
/// it ticks by itself, since the solvers report no progress.
fn time_bar(limit: Option<f64>) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal as _;
    let limit = limit.filter(|&s| (3.0..=MAX_TIME_LIMIT_S).contains(&s))?;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(limit.ceil() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("solving {bar:30} {elapsed} of {len} s")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let ticker = bar.clone();
    std::thread::spawn(move || {
        let start = Instant::now();
        while !ticker.is_finished() {
            ticker.set_position(start.elapsed().as_secs());
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    Some(bar)
}

/// What is left of a time `limit` counted from process start (from `since`, the call of
/// [`solve`], where `main` did not mark the start: a library user running many solves), and
/// whether nothing is left (setup took it all: the solver then returns its start solution).
fn remaining(limit: Duration, since: Instant) -> (Duration, bool) {
    let spent = solvers::run::process_start().unwrap_or(since).elapsed();
    match limit.checked_sub(spent) {
        Some(left) if !left.is_zero() => (left, false),
        _ => (Duration::ZERO, true),
    }
}

/// Everything `mats solve` does but printing: checks the arguments, loads, solves, re-scores.
pub fn solve(args: &SolveArgs) -> Result<(SolveReport, Option<solvers::bks::BestKnownEntry>)> {
    let called = Instant::now();
    let src = &args.source;
    let bks = super::best_known(&src.bks)?;
    let instance = family::load(&src.file, src.family, src.index)?;
    let fam = instance.family();
    let time_limit = match args.time_limit {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 && s <= MAX_TIME_LIMIT_S => {
            Some(Duration::from_secs_f64(s))
        }
        Some(s) => bail!(
            "--time-limit must be a positive number of seconds up to {MAX_TIME_LIMIT_S:e} \
             (about 31 years), found {s}"
        ),
    };
    if args.iterations == Some(0) {
        bail!("--iterations must be at least 1");
    }
    // Counted from process start: reading and parsing the instance are part of the run a
    // user times (rl11849 with --time-limit 10 used to return after 12 s).
    let time_limit = time_limit.map(|limit| {
        let (left, overran) = remaining(limit, called);
        if overran {
            eprintln!(
                "mats: setup took {:.3} s, the whole --time-limit of {:.3} s; returning the \
                 start solution",
                solvers::run::process_start()
                    .unwrap_or(called)
                    .elapsed()
                    .as_secs_f64(),
                limit.as_secs_f64()
            );
        }
        left
    });
    let budget = Budget {
        iterations: args.iterations,
        time_limit,
        target: None,
    };

    let started = Instant::now();
    let solved = match (&args.tuned, args.backend) {
        (Some(dir), _) => solve_tuned(args, dir, &instance, budget)?,
        (None, Backend::Cpu) => solve_cpu(args, &instance, budget)?,
        (None, Backend::Gpu) => solve_gpu(args, &instance, budget)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    let outcome = &solved.outcome;

    // Never print a number we have not checked: the solution is re-scored from scratch.
    let rescored = instance.objective(&outcome.solution).with_context(|| {
        format!(
            "{fam} {} ({}) returned an invalid solution",
            solved.algorithm, solved.backend
        )
    })?;
    if rescored != outcome.objective {
        bail!(
            "{fam} {} ({}) reported objective {} but its solution scores {rescored}",
            solved.algorithm,
            solved.backend,
            outcome.objective
        );
    }

    let known = bks.get(instance.name());
    let report = SolveReport {
        family: fam.name().into(),
        instance: instance.name().into(),
        file: src.file.display().to_string(),
        class: instance.class(),
        algorithm: solved.algorithm.clone(),
        backend: solved.backend,
        objective: outcome.objective,
        best_known: known.map(|e| e.value),
        best_known_optimal: known.and_then(|e| e.optimal),
        gap_percent: known.and_then(|e| gap_percent(outcome.objective, e.value)),
        seconds,
        iterations: outcome.iterations,
        evaluations: outcome.evaluations,
        seed: args.seed,
        threads: solved.threads,
        solution: instance.solution_for_output(&outcome.solution),
        gpu: solved.gpu,
        tuned: solved.tuned,
    };
    Ok((report, known))
}

/// The flags only GPU `rots-block` takes, each with whether it was given.
fn rots_block_flags(args: &SolveArgs) -> [(&'static str, bool); 8] {
    [
        ("--relink", args.relink),
        ("--perturbation-max", args.perturbation_max.is_some()),
        ("--layout", args.layout.is_some()),
        ("--launch-iterations", args.launch_iterations.is_some()),
        ("--restart-stall", args.restart_stall.is_some()),
        ("--perturbation", args.perturbation.is_some()),
        ("--tenure-range", args.tenure_range.is_some()),
        ("--aspiration", args.aspiration.is_some()),
    ]
}

/// A solver's answer before it is checked and reported.
struct Solved {
    outcome: solvers::Outcome,
    algorithm: String,
    backend: &'static str,
    threads: usize,
    gpu: Option<GpuDetails>,
    tuned: Option<TunedChoice>,
}

fn solve_cpu(args: &SolveArgs, instance: &family::Instance, budget: Budget) -> Result<Solved> {
    let fam = instance.family();
    let algorithm = match &args.algo {
        Some(name) => fam.algorithm(name).map_err(anyhow::Error::msg)?,
        None => fam.algorithms()[0],
    };
    let gpu_flags = [
        ("--solutions", args.solutions.is_some()),
        ("--child-threads", args.child_threads.is_some()),
        ("--nvrtc-flag", !args.nvrtc_flags.is_empty()),
        ("--construction", args.construction.is_some()),
        ("--pheromone", args.pheromone.is_some()),
    ];
    for (flag, given) in gpu_flags.into_iter().chain(rots_block_flags(args)) {
        if given {
            bail!("{flag} applies to --backend gpu only");
        }
    }
    let params = AlgorithmParams {
        starts: args.starts,
        tenure: args.tenure,
        destruction: args.destruction,
        temperature: args.temperature,
        ants: args.ants,
        alpha: args.alpha,
        beta: args.beta,
        rho: args.rho,
        candidates: args.candidates,
        ls_neighbours: args.ls_neighbours,
        min_new_edges: args.min_new_edges,
        source: args
            .source_tour
            .as_deref()
            .map(solvers::tsp::SourceRule::from_name)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        or_opt: args.or_opt.as_deref().map(on_off).transpose()?,
    };
    params.check(algorithm).map_err(anyhow::Error::msg)?;
    if args.threads > solvers::run::MAX_THREADS {
        bail!(
            "--threads must be at most {} (0 uses every core), found {}",
            solvers::run::MAX_THREADS,
            args.threads
        );
    }
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    let options = RunOptions {
        seed: args.seed,
        threads,
        budget,
    };
    let outcome = instance
        .solve(algorithm, &params, &options)
        .map_err(anyhow::Error::msg)?;
    Ok(Solved {
        outcome,
        algorithm: algorithm.name().into(),
        backend: "cpu",
        threads,
        gpu: None,
        tuned: None,
    })
}

/// `--or-opt on|off`.
fn on_off(s: &str) -> Result<bool> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => bail!("--or-opt takes on or off, found {s:?}"),
    }
}

fn solve_gpu(args: &SolveArgs, instance: &family::Instance, budget: Budget) -> Result<Solved> {
    if let family::Instance::Tsp(inst) = instance {
        return solve_gpu_tsp(args, instance, inst, budget);
    }
    for (flag, given) in [
        ("--construction", args.construction.is_some()),
        ("--pheromone", args.pheromone.is_some()),
    ] {
        if given {
            bail!("{flag} applies to tsp on the GPU only");
        }
    }
    match instance {
        family::Instance::Qap(_) => {}
        family::Instance::Pfsp(inst) => return solve_gpu_pfsp(args, instance, inst, budget),
        family::Instance::Hwsw(inst) => return solve_gpu_hwsw(args, instance, inst, budget),
        _ => bail!(
            "--backend gpu supports the qap, pfsp and hwsw families for now ({} runs on the CPU)",
            instance.family()
        ),
    }
    for (flag, given) in [
        ("--starts", args.starts.is_some()),
        ("--destruction", args.destruction.is_some()),
        ("--temperature", args.temperature.is_some()),
        ("--ants", args.ants.is_some()),
        ("--alpha", args.alpha.is_some()),
        ("--beta", args.beta.is_some()),
        ("--rho", args.rho.is_some()),
        ("--candidates", args.candidates.is_some()),
    ] {
        if given {
            bail!("{flag} applies to --backend cpu only (the GPU takes --solutions)");
        }
    }
    let algorithm = match &args.algo {
        Some(name) => qap_gpu::GpuAlgorithm::from_name(name).map_err(anyhow::Error::msg)?,
        None => qap_gpu::GpuAlgorithm::RotsBlock,
    };
    if args.tenure.is_some() && algorithm != qap_gpu::GpuAlgorithm::Tabu {
        bail!("--tenure applies to the GPU `tabu` only; rots-block takes --tenure-range MIN,MAX (factors of n)");
    }
    if args.child_threads.is_some() && algorithm != qap_gpu::GpuAlgorithm::TwoOptDyn {
        bail!("--child-threads applies to `2opt-dyn` only");
    }
    let mut params = qap_gpu::GpuParams::new(algorithm);
    if let Some(p) = args.solutions {
        params.solutions = p;
    }
    if args.threads != 0 {
        params.threads_per_block = u32::try_from(args.threads).context("--threads is too large")?;
    }
    if let Some(c) = args.child_threads {
        params.child_threads = c;
    }
    for (flag, given) in rots_block_flags(args) {
        if given && algorithm != qap_gpu::GpuAlgorithm::RotsBlock {
            bail!("{flag} applies to `rots-block` only");
        }
    }
    if let Some(range) = &args.tenure_range {
        match range[..] {
            [lo, hi] if lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi => {
                params.tenure_min_factor = lo;
                params.tenure_max_factor = hi;
            }
            _ => bail!("--tenure-range takes MIN,MAX with 0 < MIN <= MAX, found {range:?}"),
        }
    }
    if let Some(f) = args.aspiration {
        if !(f.is_finite() && f >= 0.0) {
            bail!("--aspiration must be a factor of n^2 >= 0 (0 = off), found {f}");
        }
        params.aspiration_factor = f;
    }
    if let Some(f) = args.perturbation {
        if !(f.is_finite() && f > 0.0 && f <= 1.0) {
            bail!("--perturbation must be in (0, 1], found {f}");
        }
        params.perturbation = f;
    }
    if let Some(f) = args.perturbation_max {
        if !(f.is_finite() && (0.0..=1.0).contains(&f)) {
            bail!("--perturbation-max must be in [0, 1] (0 = fixed perturbation), found {f}");
        }
        params.perturbation_max = f;
    }
    params.relink = args.relink;
    if let Some(k) = args.launch_iterations {
        params.launch_iterations = k;
    }
    if let Some(l) = args.restart_stall {
        params.restart_stall = l;
    }
    if let Some(layout) = &args.layout {
        params.layout =
            qap_gpu::RotsLayout::from_name(layout).map_err(|e| anyhow::anyhow!("--layout: {e}"))?;
    }
    params.tenure = args.tenure.map(|t| t as u32);
    params.flags = args.nvrtc_flags.clone();
    // Arguments are checked first, so their errors show on any machine.
    if !kernels::gpu::driver_available() {
        bail!("--backend gpu needs an NVIDIA GPU: no CUDA driver (libcuda.so) found; use --backend cpu");
    }
    let gpu = kernels::gpu::Gpu::open(args.gpu)?;
    let cache = kernels::KernelCache::new(kernels::KernelCache::default_dir());
    let options = RunOptions {
        seed: args.seed,
        threads: 1,
        budget,
    };
    let config = solvers::gpu::GpuConfig::Qap(params);
    run_gpu(
        &gpu,
        &config,
        &cache,
        instance,
        &options,
        algorithm.name().into(),
    )
}

/// PFSP on the GPU: tabu-full, tabu-prefix, ig-block or ig-warp (the default is ig-block where
/// its walk fits in shared memory, else ig-warp, whose tables may live in global memory).
fn solve_gpu_pfsp(
    args: &SolveArgs,
    instance: &family::Instance,
    inst: &solvers::pfsp::Instance,
    budget: Budget,
) -> Result<Solved> {
    use solvers::pfsp::gpu::{GpuAlgorithm, GpuParams};
    for (flag, given) in [
        ("--starts", args.starts.is_some()),
        ("--child-threads", args.child_threads.is_some()),
        ("--perturbation", args.perturbation.is_some()),
        ("--tenure-range", args.tenure_range.is_some()),
        ("--aspiration", args.aspiration.is_some()),
        ("--ants", args.ants.is_some()),
        ("--alpha", args.alpha.is_some()),
        ("--beta", args.beta.is_some()),
        ("--rho", args.rho.is_some()),
        ("--candidates", args.candidates.is_some()),
    ] {
        if given {
            bail!("{flag} does not apply to pfsp on the GPU (tabu-full, tabu-prefix, ig-block, ig-warp)");
        }
    }
    let chosen = match &args.algo {
        Some(name) => Some(GpuAlgorithm::from_name(name).map_err(anyhow::Error::msg)?),
        None => None,
    };
    let algorithm = chosen.unwrap_or(GpuAlgorithm::IgBlock);
    let ig_only = [
        ("--solutions", args.solutions.is_some()),
        ("--destruction", args.destruction.is_some()),
        ("--temperature", args.temperature.is_some()),
        ("--restart-stall", args.restart_stall.is_some()),
        ("--launch-iterations", args.launch_iterations.is_some()),
    ];
    if algorithm.is_tabu() {
        for (flag, given) in ig_only {
            if given {
                bail!(
                    "{flag} applies to pfsp `ig-block` and `ig-warp` only, not `{}`",
                    algorithm.name()
                );
            }
        }
    } else if args.tenure.is_some() {
        bail!("--tenure applies to pfsp `tabu-full` and `tabu-prefix` only");
    }
    let mut params = GpuParams::new(algorithm);
    if args.threads != 0 {
        params.threads_per_block = u32::try_from(args.threads).context("--threads is too large")?;
        if algorithm == GpuAlgorithm::IgWarp {
            // ig-warp runs a walk per warp: --threads sets the block, so the walks per block.
            anyhow::ensure!(
                params.threads_per_block % 32 == 0,
                "--threads for ig-warp must be a multiple of 32 (one walk per warp)"
            );
            params.warps = params.threads_per_block / 32;
        }
    }
    if let Some(t) = args.tenure {
        params.tenure = t;
    }
    if let Some(b) = args.solutions {
        params.blocks = b;
    }
    if let Some(d) = args.destruction {
        params.destruction = d;
        // ig-warp: --destruction fixes d (the adaptive range is a tuner parameter).
        params.destruction_max = d;
    }
    if let Some(t) = args.temperature {
        params.temperature = t;
    }
    if let Some(l) = args.restart_stall {
        params.restart_stall = l;
    }
    if let Some(k) = args.launch_iterations {
        params.launch_iterations = k;
    }
    params.flags = args.nvrtc_flags.clone();
    if !kernels::gpu::driver_available() {
        bail!("--backend gpu needs an NVIDIA GPU: no CUDA driver (libcuda.so) found; use --backend cpu");
    }
    let gpu = kernels::gpu::Gpu::open(args.gpu)?;
    if let Err(why) = params.check(inst, &gpu.info) {
        // The default falls back to ig-warp where an ig-block walk does not fit; a named variant
        // fails with the reason.
        if chosen.is_some() || !why.contains("shared memory") {
            bail!("{why}");
        }
        eprintln!("note: {why}; running ig-warp instead");
        let block = params;
        params = GpuParams {
            blocks: block.blocks,
            temperature: block.temperature,
            restart_stall: block.restart_stall,
            launch_iterations: block.launch_iterations,
            flags: block.flags,
            ..GpuParams::new(GpuAlgorithm::IgWarp)
        };
        if let Some(d) = args.destruction {
            params.destruction = d;
            params.destruction_max = d;
        }
        params.check(inst, &gpu.info).map_err(anyhow::Error::msg)?;
    }
    let cache = kernels::KernelCache::new(kernels::KernelCache::default_dir());
    let options = RunOptions {
        seed: args.seed,
        threads: 1,
        budget,
    };
    let algorithm = params.algorithm.name().to_string();
    let config = solvers::gpu::GpuConfig::Pfsp(params);
    run_gpu(&gpu, &config, &cache, instance, &options, algorithm)
}

/// HW/SW partitioning on the GPU: the GPTS variants (separate, compact, fused: the CPU `sts`'s
/// moves) or gpts-multi.
fn solve_gpu_hwsw(
    args: &SolveArgs,
    instance: &family::Instance,
    inst: &solvers::hwsw::Instance,
    budget: Budget,
) -> Result<Solved> {
    use solvers::hwsw::gpu::{GpuAlgorithm, GpuParams};
    let mut not_here: Vec<(&str, bool)> = vec![
        ("--starts", args.starts.is_some()),
        ("--child-threads", args.child_threads.is_some()),
        ("--destruction", args.destruction.is_some()),
        ("--temperature", args.temperature.is_some()),
        ("--ants", args.ants.is_some()),
        ("--alpha", args.alpha.is_some()),
        ("--beta", args.beta.is_some()),
        ("--rho", args.rho.is_some()),
        ("--candidates", args.candidates.is_some()),
    ];
    let algorithm = match args.algo.as_deref() {
        Some(name) => GpuAlgorithm::from_name(name).map_err(anyhow::Error::msg)?,
        None => GpuAlgorithm::DEFAULT,
    };
    let multi_only = ["--solutions", "--launch-iterations", "--restart-stall"];
    not_here.extend(
        rots_block_flags(args)
            .into_iter()
            .filter(|(flag, _)| !multi_only.contains(flag)),
    );
    if !algorithm.is_multi() {
        not_here.push(("--solutions", args.solutions.is_some()));
        not_here.push(("--launch-iterations", args.launch_iterations.is_some()));
        not_here.push(("--restart-stall", args.restart_stall.is_some()));
    }
    for (flag, given) in not_here {
        if given {
            bail!(
                "{flag} does not apply to hwsw `{}` on the GPU",
                algorithm.name()
            );
        }
    }
    let mut params = GpuParams::new(algorithm);
    if args.threads != 0 {
        params.threads_per_block = u32::try_from(args.threads).context("--threads is too large")?;
    }
    if let Some(t) = args.tenure {
        params.tabu_length = t;
    }
    if let Some(b) = args.solutions {
        params.searches = b;
    }
    if let Some(k) = args.launch_iterations {
        params.launch_iterations = k;
    }
    if let Some(l) = args.restart_stall {
        params.restart_stall = l;
    }
    params.flags = args.nvrtc_flags.clone();
    if !kernels::gpu::driver_available() {
        bail!("--backend gpu needs an NVIDIA GPU: no CUDA driver (libcuda.so) found; use --backend cpu");
    }
    let gpu = kernels::gpu::Gpu::open(args.gpu)?;
    params.check(inst, &gpu.info).map_err(anyhow::Error::msg)?;
    let cache = kernels::KernelCache::new(kernels::KernelCache::default_dir());
    let options = RunOptions {
        seed: args.seed,
        threads: 1,
        budget,
    };
    let algorithm = algorithm.name().to_string();
    run_gpu(
        &gpu,
        &solvers::gpu::GpuConfig::Hwsw(params),
        &cache,
        instance,
        &options,
        algorithm,
    )
}

/// The TSP Ant System on the GPU (`--algo as`, the only one): construction and pheromone
/// variants, and the CPU `as`'s knobs.
fn solve_gpu_tsp(
    args: &SolveArgs,
    instance: &family::Instance,
    inst: &solvers::tsp::Instance,
    budget: Budget,
) -> Result<Solved> {
    use solvers::tsp::gpu::{Construction, GpuParams, PheromoneUpdate};
    // MAX-MIN AS with 2-opt by default: it is what reaches 1% on pr2392 in 10 s (the Ant
    // System without local search ends 20-60% above; docs/tsp-gpu.md).
    let mmas = match args.algo.as_deref() {
        Some("as") => false,
        None | Some("mmas") => true,
        Some("focused") => bail!(
            "`--algo focused` runs on the CPU only so far (--backend cpu); its GPU kernels are \
             not written yet"
        ),
        Some(name) => bail!(
            "tsp on the GPU runs `as` (Ant System) or `mmas` (MAX-MIN AS with 2-opt), not {name:?}"
        ),
    };
    let mut not_here: Vec<(&str, bool)> = vec![
        ("--starts", args.starts.is_some()),
        ("--tenure", args.tenure.is_some()),
        ("--child-threads", args.child_threads.is_some()),
        ("--destruction", args.destruction.is_some()),
        ("--temperature", args.temperature.is_some()),
        ("--solutions", args.solutions.is_some()),
        ("--ls-neighbours", args.ls_neighbours.is_some()),
        ("--min-new-edges", args.min_new_edges.is_some()),
        ("--source-tour", args.source_tour.is_some()),
        ("--or-opt", args.or_opt.is_some()),
    ];
    not_here.extend(rots_block_flags(args));
    for (flag, given) in not_here {
        if given {
            bail!("{flag} does not apply to tsp on the GPU");
        }
    }
    let construction = match args.construction.as_deref() {
        Some(name) => Construction::from_name(name).map_err(anyhow::Error::msg)?,
        None => Construction::Data,
    };
    let mut params = if mmas {
        GpuParams {
            construction,
            ..GpuParams::mmas()
        }
    } else {
        GpuParams::new(construction)
    };
    if let Some(name) = args.pheromone.as_deref() {
        params.pheromone = PheromoneUpdate::from_name(name).map_err(anyhow::Error::msg)?;
    }
    if args.threads != 0 {
        params.threads_per_block = u32::try_from(args.threads).context("--threads is too large")?;
    }
    params.ants = args.ants.or(params.ants);
    params.alpha = args.alpha.unwrap_or(params.alpha);
    params.beta = args.beta.unwrap_or(params.beta);
    params.rho = args.rho.unwrap_or(params.rho);
    params.candidates = args.candidates.unwrap_or(params.candidates);
    params.flags = args.nvrtc_flags.clone();
    params.as_params().check().map_err(anyhow::Error::msg)?;
    if !kernels::gpu::driver_available() {
        bail!("--backend gpu needs an NVIDIA GPU: no CUDA driver (libcuda.so) found; use --backend cpu");
    }
    let gpu = kernels::gpu::Gpu::open(args.gpu)?;
    params.check(inst, &gpu.info).map_err(anyhow::Error::msg)?;
    let cache = kernels::KernelCache::new(kernels::KernelCache::default_dir());
    let options = RunOptions {
        seed: args.seed,
        threads: 1,
        budget,
    };
    let algorithm = params.algorithm.name().to_string();
    run_gpu(
        &gpu,
        &solvers::gpu::GpuConfig::Tsp(params),
        &cache,
        instance,
        &options,
        algorithm,
    )
}

/// Runs the bundle an export chose for this instance's class.
fn solve_tuned(
    args: &SolveArgs,
    dir: &std::path::Path,
    instance: &family::Instance,
    budget: Budget,
) -> Result<Solved> {
    use engine::bundle::{nearest_class, Index, Manifest};
    let index = Index::read(dir)?;
    if index.family != instance.family().name() {
        bail!(
            "{} was tuned for {} instances; {} is {}",
            dir.display(),
            index.family,
            instance.name(),
            instance.family()
        );
    }
    if !(args.max_class_distance.is_finite() && args.max_class_distance >= 0.0) {
        bail!(
            "--max-class-distance must be a number >= 0, found {}",
            args.max_class_distance
        );
    }
    let own_class = instance.class();
    let features = serde_json::to_value(instance.features())?;
    let Some(choice) = nearest_class(&index, &own_class, &features) else {
        bail!("{} holds no tuned class", dir.display());
    };
    let mut tuned = TunedChoice {
        class: choice.class.clone(),
        distance: choice.distance,
        exact: choice.exact,
        default_ran: false,
        bundle: None,
        pick: None,
    };
    // An infinite distance (an index without feature ranges) never passes.
    if !choice.exact && (choice.distance.is_nan() || choice.distance > args.max_class_distance) {
        eprintln!(
            "{} (class {own_class}) is too far from every tuned class (nearest: {}, distance {:.3} > --max-class-distance {}); running the {} default",
            instance.name(),
            choice.class,
            choice.distance,
            args.max_class_distance,
            instance.family()
        );
        tuned.default_ran = true;
        if args.max_power.is_some() || args.max_energy.is_some() {
            eprintln!("the default was never measured for power or energy: the cap does not apply");
        }
        let mut solved = if index.backend == "gpu" {
            solve_gpu(args, instance, budget)?
        } else {
            solve_cpu(args, instance, budget)?
        };
        solved.tuned = Some(tuned);
        return Ok(solved);
    }
    if !choice.exact {
        eprintln!(
            "{} (class {own_class}) was not tuned; running the nearest tuned class {} \
             (distance {:.3})",
            instance.name(),
            choice.class,
            choice.distance
        );
    }
    let class = choice.class;
    let request = engine::pick::Request {
        time_limit_s: args.time_limit,
        prefer: args.prefer.name(),
        max_power_w: args.max_power,
        max_energy_j: args.max_energy,
    };
    let pick = engine::pick::pick(&index.classes[&class], &class, index.run, &request)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    let bundle = &pick.bundle.clone();
    let picked = pick.describe(&class);
    tuned.pick = Some(pick);
    let folder = dir.join(bundle);
    let manifest = Manifest::read(&folder, dir)?;
    tuned.bundle = Some(bundle.clone());
    // A bundle runs at the budget it was tuned for unless --time-limit or --iterations says
    // otherwise; an explicit --time-limit is always honoured.
    // Range-checked (-1 and 1e308 used to panic in the duration conversion); the limit
    // counts from process start like --time-limit.
    let tuned_limit = manifest
        .tuned_limit()
        .map_err(|e| anyhow::anyhow!("{}: {e}", folder.join("manifest.json").display()))?;
    let budget = match (budget.time_limit, budget.iterations, tuned_limit) {
        (None, None, Some(limit)) => Budget {
            time_limit: Some(remaining(limit, Instant::now()).0),
            ..budget
        },
        (None, _, _) => Budget {
            iterations: budget.iterations.or(manifest
                .values
                .get("iterations")
                .and_then(|v| v.as_int())
                .map(|v| v as u64)),
            ..budget
        },
        _ => budget,
    };
    // Said once the bundle is known to load, so a broken bundle's error stays one line.
    eprintln!("{picked}");
    if let Some(run) = &manifest.run {
        eprintln!(
            "bundle {bundle}: tuned for {} at {}; running {}",
            manifest.objective.as_deref().unwrap_or("?"),
            match run {
                RunMode::Budget { budget_s } => format!("{budget_s} s per run"),
                RunMode::Target { cap_s, .. } => format!("a target, capped at {cap_s} s"),
                RunMode::FixedWork => "a fixed number of iterations".into(),
            },
            match (budget.time_limit, budget.iterations) {
                (Some(t), _) => format!("for {:.3} s", t.as_secs_f64()),
                (None, Some(i)) => format!("{i} iterations"),
                (None, None) => "the solver's default length".into(),
            }
        );
    }
    if manifest.backend == "gpu" {
        if !kernels::gpu::driver_available() {
            bail!(
                "bundle {} was tuned on a GPU ({}), and this machine has no CUDA driver",
                folder.display(),
                manifest.device
            );
        }
        let gpu = kernels::gpu::Gpu::open(args.gpu)?;
        if let Some(arch) = manifest.arch {
            if gpu.info.arch.0 != arch {
                bail!(
                    "bundle {} was built for {} (sm_{arch}) but GPU {} is {} ({}); tune and export \
                     on this GPU's architecture",
                    folder.display(),
                    manifest.device,
                    args.gpu,
                    gpu.info.name,
                    gpu.info.arch
                );
            }
        }
        let driver = kernels::gpu::driver_version()
            .ok()
            .map(|(a, b)| format!("{a}.{b}"));
        if manifest.driver.is_some() && driver != manifest.driver {
            bail!(
                "bundle {} was measured under CUDA driver {} but this machine has {}; its \
                 timings do not carry over: re-run the campaign here",
                folder.display(),
                manifest.driver.as_deref().unwrap_or("?"),
                driver.as_deref().unwrap_or("none")
            );
        }
        // The run's length is the budget's alone: a time limit ends every variant.
        let config = manifest.gpu_config(instance.family())?;
        let cache = kernels::KernelCache::new(folder.join("kernels"));
        let options = RunOptions {
            seed: args.seed,
            threads: 1,
            budget,
        };
        let algorithm = format!("{} (tuned: {bundle})", config.variant_name());
        let mut solved = run_gpu(&gpu, &config, &cache, instance, &options, algorithm)?;
        solved.tuned = Some(tuned);
        return Ok(solved);
    }
    let (algorithm, params, threads) =
        engine::runner::cpu::params(instance.family(), &manifest.realised())
            .map_err(anyhow::Error::msg)?;
    let threads = if args.threads != 0 {
        args.threads
    } else {
        threads
    };
    let options = RunOptions {
        seed: args.seed,
        threads,
        budget,
    };
    let outcome = instance
        .solve(algorithm, &params, &options)
        .map_err(anyhow::Error::msg)?;
    Ok(Solved {
        outcome,
        algorithm: format!("{} (tuned: {bundle})", algorithm.name()),
        backend: "cpu",
        threads,
        gpu: None,
        tuned: Some(tuned),
    })
}

/// Runs a GPU configuration of any family and reports it as `mats solve` does (the caller
/// re-scores the solution).
fn run_gpu(
    gpu: &kernels::gpu::Gpu,
    config: &solvers::gpu::GpuConfig,
    cache: &kernels::KernelCache,
    instance: &family::Instance,
    options: &RunOptions,
    algorithm: String,
) -> Result<Solved> {
    // A cold NVRTC compile in `prepare` counts against the time limit as well.
    let preparing = Instant::now();
    let mut prepared = config.prepare(gpu, cache, instance)?;
    let mut options = options.clone();
    if let Some(limit) = options.budget.time_limit {
        let left = limit.saturating_sub(preparing.elapsed());
        if left.is_zero() {
            eprintln!(
                "mats: compiling and loading the kernel took {:.3} s, the whole time limit; \
                 returning the start solution",
                preparing.elapsed().as_secs_f64()
            );
        }
        options.budget.time_limit = Some(left);
    }
    let run = prepared.run(gpu, &options)?;
    let (solutions, _) = config.shape();
    Ok(Solved {
        tuned: None,
        gpu: Some(GpuDetails {
            device: format!("{} ({})", gpu.info.name, gpu.info.arch),
            // Where the configuration leaves it to the device, what the launch used.
            solutions: if solutions > 0 {
                solutions
            } else {
                run.launch.grid.0
            },
            threads_per_block: run.launch.block.0,
            kernel_seconds: run.kernel_seconds,
            launches: run.launches,
            registers: run.attributes.registers,
            local_bytes_per_thread: run.attributes.local_bytes_per_thread,
            cache: format!("{:?}", run.cache).to_lowercase(),
            flags: config.flags().to_vec(),
            layout: run.layout.clone(),
            blocks_per_sm: run.blocks_per_sm,
        }),
        outcome: run.outcome,
        algorithm,
        backend: "gpu",
        threads: run.launch.block.0 as usize,
    })
}

/// GPU specifics of a run (the `gpu` object of the JSON output).
#[derive(Debug, Serialize)]
pub struct GpuDetails {
    pub device: String,
    pub solutions: u32,
    pub threads_per_block: u32,
    pub kernel_seconds: f64,
    pub launches: u32,
    pub registers: u32,
    pub local_bytes_per_thread: u32,
    /// `hit` when the kernel came from the disk cache, `miss` when compiled now.
    pub cache: String,
    pub flags: Vec<String>,
    /// QAP rots-block: where the working set lives (`shared`, `global-tabu`, `global`) and
    /// the matrices' width, e.g. `shared (int16 matrices)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// Resident blocks per SM of the main kernel (occupancy API).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_sm: Option<u32>,
}

fn print_text(r: &SolveReport, known: Option<solvers::bks::BestKnownEntry>) {
    println!("instance   {} ({}, {})", r.instance, r.family, r.class);
    println!(
        "algorithm  {} on {} (seed {}, {} threads)",
        r.algorithm, r.backend, r.seed, r.threads
    );
    println!("objective  {}", r.objective);
    match (known, r.gap_percent) {
        (Some(e), Some(gap)) => println!(
            "best known {}{}, gap {gap:.3}%",
            e.value,
            super::instance::optimal_note(e)
        ),
        (Some(e), None) => println!("best known {}{}", e.value, super::instance::optimal_note(e)),
        (None, _) => println!("best known unknown (add a table with --bks FILE)"),
    }
    println!(
        "time       {:.3} s ({} iterations, {} moves evaluated)",
        r.seconds, r.iterations, r.evaluations
    );
    if let Some(g) = &r.gpu {
        println!(
            "gpu        {}: {} solutions x {} threads/block, {} launches, kernel {:.3} s, {} registers, kernel cache {}",
            g.device, g.solutions, g.threads_per_block, g.launches, g.kernel_seconds, g.registers, g.cache
        );
        if let Some(layout) = &g.layout {
            let resident = g
                .blocks_per_sm
                .map(|b| format!(", {b} blocks/SM"))
                .unwrap_or_default();
            println!("layout     {layout}{resident}");
        }
    }
    let solution: Vec<String> = r.solution.iter().map(|v| v.to_string()).collect();
    println!("solution   {}", solution.join(" "));
}
