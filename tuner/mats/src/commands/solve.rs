//! `mats solve`: run a solver on one instance, re-score its answer, report it.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use engine::campaign::config::RunMode;
use serde::Serialize;
use solvers::bks::gap_percent;
use solvers::family::{self, AlgorithmParams};
use solvers::gpu::solve_flags::{FlagValue, GivenFlag, SolveConfig};
use solvers::run::{Budget, RunOptions};

use crate::cli::{Backend, SolveArgs};

mod islands;

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
    /// The independent starts (walks) of a CPU algorithm that has them (qap `tabu`, `2opt`,
    /// pfsp `ig`, hwsw `sts`); absent elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts: Option<usize>,
    /// 1-based, as benchmark files write permutations; HW/SW: the 0/1 vector x.
    pub solution: Vec<usize>,
    /// GPU specifics; absent for the CPU backend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuDetails>,
    /// With --tuned: the tuned class chosen for the instance, its distance, and whether the
    /// family's default ran instead (the instance was too far from every tuned class).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuned: Option<TunedChoice>,
    /// --target, --target-gap: the objective that ends the run and when it was reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetReport>,
    /// --trace: every improvement of the best, in the order found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<TracePoint>>,
    /// The signal (SIGINT, SIGTERM, SIGHUP) that ended the run early: the answer is the best
    /// found until then (re-scored like any other); absent for a run that ended by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
}

/// The `target` object of the JSON output.
#[derive(Debug, Clone, Serialize)]
pub struct TargetReport {
    pub objective: i64,
    /// The target's gap to the best-known value (absent without one).
    pub gap_percent: Option<f64>,
    /// Seconds from the solver's start (after loading and compiling) to the first solution
    /// at or below the target; absent where the run ended first.
    pub reached_after_s: Option<f64>,
}

/// One improvement of the best (`trace` in the JSON output).
#[derive(Debug, Clone, Serialize)]
pub struct TracePoint {
    /// From the solver's start (after loading and compiling), as `reached_after_s`.
    pub seconds: f64,
    pub objective: i64,
    pub gap_percent: Option<f64>,
}

/// The objective `--target` or `--target-gap` asks for, checked.
fn target_of(
    args: &SolveArgs,
    instance: &str,
    known: Option<solvers::bks::BestKnownEntry>,
) -> Result<Option<i64>> {
    match (args.target, args.target_gap) {
        (Some(objective), _) => Ok(Some(objective)),
        (None, Some(gap)) => {
            if !(gap.is_finite() && gap >= 0.0) {
                bail!("--target-gap must be a percentage >= 0, found {gap}");
            }
            let known = known.with_context(|| {
                format!(
                    "--target-gap needs a best-known value for {instance}, and none is known: \
                     give a table with --bks FILE, or the objective itself with --target"
                )
            })?;
            Ok(Some(solvers::bks::target_objective(known.value, gap)))
        }
        (None, None) => Ok(None),
    }
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
    /// The bundle's note from the export: why it runs this point rather than the search's
    /// best, or that the campaign's holdouts found it worse than the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The longest `--time-limit`: far beyond any run, and far below where `Duration` and
/// `Instant` arithmetic overflow (1e19 s and more used to panic).
pub const MAX_TIME_LIMIT_S: f64 = 1e9;

pub fn run(args: &SolveArgs) -> Result<()> {
    crate::interrupt::install();
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
    if let Some(signal) = &report.interrupted {
        return Err(crate::output::Interrupted(format!(
            "solve stopped by {signal}: the answer above is the best found so far"
        ))
        .into());
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
    let lead = islands::lead_gpu(args)?;
    let args: &SolveArgs = &lead;
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
    let mut setup_overran = false;
    let time_limit = time_limit.map(|limit| {
        let (left, overran) = remaining(limit, called);
        setup_overran = overran;
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
    let known = super::best_known_of(&bks, &src.bks, &instance);
    let budget = Budget {
        iterations: args.iterations,
        time_limit,
        target: target_of(args, instance.name(), known)?.map(solvers::run::Target::new),
        trace: args.trace.then(solvers::run::Trace::new),
        start_basis: None,
    };
    // Clones share the records the solver writes.
    let (target, trace) = (budget.target.clone(), budget.trace.clone());

    let started = Instant::now();
    let solved = match (&args.tuned, args.backend()) {
        (Some(dir), _) => solve_tuned(args, dir, &instance, budget, known)?,
        (None, Backend::Cpu) => solve_cpu(args, &instance, budget)?,
        (None, Backend::Gpu) => solve_gpu(args, &instance, budget)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    let outcome = &solved.outcome;
    // A run without iterations that ended well before the limit had none to make (n = 1).
    let spent_the_limit = time_limit.is_some_and(|left| seconds >= 0.9 * left.as_secs_f64());
    if spent_the_limit && outcome.iterations == 0 && !setup_overran && !solved.start_explained {
        // The solver's own setup (matrices, a first scan or local search) took the limit.
        eprintln!(
            "mats: the time limit ended before the solver's first iteration; the answer is \
             its start solution"
        );
    }

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

    super::instance::warn_below_optimum(instance.name(), outcome.objective, known);
    let gap_of = |objective: i64| known.and_then(|e| gap_percent(objective, e.value));
    // A time-to-target bundle's own target, where no flag gave one.
    let target = target.or_else(|| solved.target.clone());
    let target = target.as_ref().map(|t| TargetReport {
        objective: t.objective,
        gap_percent: gap_of(t.objective),
        reached_after_s: t.reached_after().map(|d| d.as_secs_f64()),
    });
    let trace = trace.as_ref().map(|t| {
        t.points()
            .into_iter()
            .map(|(at, objective)| TracePoint {
                seconds: at.as_secs_f64(),
                objective,
                gap_percent: gap_of(objective),
            })
            .collect()
    });
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
        gap_percent: gap_of(outcome.objective),
        seconds,
        iterations: outcome.iterations,
        evaluations: outcome.evaluations,
        seed: args.seed,
        threads: solved.threads,
        starts: solved.starts,
        solution: instance.solution_for_output(&outcome.solution),
        gpu: solved.gpu,
        tuned: solved.tuned,
        target,
        trace,
        interrupted: crate::interrupt::received().map(str::to_string),
    };
    Ok((report, known))
}

/// A solver's answer before it is checked and reported.
struct Solved {
    outcome: solvers::Outcome,
    algorithm: String,
    backend: &'static str,
    threads: usize,
    /// The independent starts a CPU algorithm with starts ran; `None` elsewhere.
    starts: Option<usize>,
    gpu: Option<GpuDetails>,
    tuned: Option<TunedChoice>,
    /// Stderr already said why the answer is the start solution (a cold compile or opening
    /// the GPU took the limit).
    start_explained: bool,
    /// The target a time-to-target bundle set (the report shows it like --target-gap's).
    target: Option<solvers::run::Target>,
}

fn solve_cpu(args: &SolveArgs, instance: &family::Instance, budget: Budget) -> Result<Solved> {
    let fam = instance.family();
    let algorithm = match &args.algo {
        Some(name) => fam.algorithm(name).map_err(anyhow::Error::msg)?,
        None => fam.algorithms()[0],
    };
    // The CPU solvers' parameters are `AlgorithmParams`; anything else is the GPU's.
    let gpu_only = given_flags(args)
        .into_iter()
        .map(|g| g.flag)
        .chain((!args.nvrtc_flags.is_empty()).then_some("--nvrtc-flag"))
        // `--gpu 0` is the default and cannot be told from none; any other ordinal can.
        .chain((args.gpu != 0).then_some("--gpu"))
        .find(|flag| !CPU_FLAGS.contains(flag));
    if let Some(flag) = gpu_only {
        bail!("{flag} applies to --backend gpu only");
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
        lists: args
            .lists
            .as_deref()
            .map(solvers::tsp::ListRule::from_name)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        or_opt: args
            .or_opt
            .as_deref()
            .map(|s| on_off("--or-opt", s))
            .transpose()?,
        restarts: args
            .restarts
            .as_deref()
            .map(|s| on_off("--restarts", s))
            .transpose()?,
        tenure_range: args
            .tenure_range
            .as_deref()
            .map(|range| match range {
                &[lo, hi] => Ok((lo, hi)),
                other => Err(anyhow::anyhow!(
                    "--tenure-range takes 2 comma-separated values (MIN,MAX, factors of n), \
                     found {}",
                    other.len()
                )),
            })
            .transpose()?,
        aspiration: args.aspiration,
        perturbation: args.perturbation,
        restart_stall: args.restart_stall,
    };
    params
        .check(algorithm)
        .map_err(|e| anyhow::anyhow!(cpu_flag_names(&e)))?;
    check_threads_flag(args)?;
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    let mut params = params;
    params.starts = starts_to_run(instance, algorithm, params.starts, threads, &budget);
    let label = algorithm.name().to_string();
    run_cpu(
        args, instance, algorithm, &params, threads, budget, label, false,
    )
}

/// `--threads` within the solvers' limit, whatever runs (a tuned CPU bundle took 5,000).
fn check_threads_flag(args: &SolveArgs) -> Result<()> {
    if args.threads > solvers::run::MAX_THREADS {
        bail!(
            "--threads must be at most {} (0 uses every core), found {}",
            solvers::run::MAX_THREADS,
            args.threads
        );
    }
    Ok(())
}

/// The end of every CPU run, plain or tuned: the note on idle threads, the solve, and what
/// it reports (`label` names the algorithm, and the bundle for a tuned run; `bundle`: a
/// bundle's tuned starts run, not a default that `--tuned` fell back to).
#[allow(clippy::too_many_arguments)]
fn run_cpu(
    args: &SolveArgs,
    instance: &family::Instance,
    algorithm: family::Algorithm,
    params: &family::AlgorithmParams,
    threads: usize,
    budget: Budget,
    label: String,
    bundle: bool,
) -> Result<Solved> {
    if bundle {
        if budget.time_limit.is_some() && instance.starts_use_threads(algorithm) {
            say_idle_threads_tuned(params.starts, threads, algorithm);
        }
    } else if args.tuned.is_none() {
        // (Under --tuned, a default that ran for want of a near class takes no --starts.)
        say_idle_threads(
            instance,
            algorithm,
            params.starts,
            threads,
            &budget,
            args.threads != 0,
        );
    }
    let options = RunOptions {
        seed: args.seed,
        threads,
        budget,
    };
    let outcome = instance
        .solve(algorithm, params, &options)
        .map_err(anyhow::Error::msg)?;
    Ok(Solved {
        outcome,
        algorithm: label,
        backend: "cpu",
        threads,
        starts: params.starts.or(algorithm.default_starts()),
        gpu: None,
        tuned: None,
        start_explained: false,
        target: None,
    })
}

/// The starts a CPU run makes where `--starts` is not given: under a time limit alone one per
/// worker thread when the algorithm's default has fewer, since the time a core would sit idle
/// is search the run loses, and a time-limited answer depends on the machine's speed anyway.
/// An iteration budget (with or without a time limit) keeps the algorithm's default, so that
/// a seeded run gives the same answer on every machine whatever its cores.
fn starts_to_run(
    instance: &family::Instance,
    algorithm: family::Algorithm,
    given: Option<usize>,
    threads: usize,
    budget: &Budget,
) -> Option<usize> {
    if given.is_some() || !budget.time_limit_alone() || !instance.starts_use_threads(algorithm) {
        return given;
    }
    algorithm
        .default_starts()
        .filter(|&starts| starts < threads)
        .map(|_| threads)
}

/// Prints [`idle_threads`]'s note where the idle threads cost something: under a time limit
/// (the other cores could search in the same time) or a thread count the user `asked` for.
fn say_idle_threads(
    instance: &family::Instance,
    algorithm: family::Algorithm,
    starts: Option<usize>,
    threads: usize,
    budget: &Budget,
    asked: bool,
) {
    if (budget.time_limit.is_none() && !asked) || !instance.starts_use_threads(algorithm) {
        return;
    }
    if let Some(note) = idle_threads(algorithm, starts, threads) {
        eprintln!("mats: {note}");
    }
}

/// [`say_idle_threads`] for a tuned bundle: its starts are part of what was tuned, so the
/// flag to name is `--threads`, not `--starts` (which `--tuned` refuses).
fn say_idle_threads_tuned(starts: Option<usize>, threads: usize, algorithm: family::Algorithm) {
    let Some(starts) = starts.or(algorithm.default_starts()) else {
        return;
    };
    if starts < threads {
        eprintln!(
            "mats: the bundle runs {starts} independent start{} of {}, so {} of the {threads} \
             worker threads stay idle (the starts are tuned; --threads {starts} frees the rest)",
            if starts == 1 { "" } else { "s" },
            algorithm.name(),
            threads - starts
        );
    }
}

/// Where the starts an algorithm runs are fewer than its worker threads, the rest stay idle
/// (threads never change an answer, so they never add starts of their own): says so, with the
/// flag that puts them to work. Time-limited runs without `--starts` take one start per thread
/// ([`starts_to_run`]), so this speaks where `--starts` or an iteration budget left cores idle.
fn idle_threads(
    algorithm: family::Algorithm,
    starts: Option<usize>,
    threads: usize,
) -> Option<String> {
    let starts = starts.or(algorithm.default_starts())?;
    (starts < threads).then(|| {
        format!(
            "{} runs {starts} independent start{} here, so {} of the {threads} worker threads \
             {} idle (--starts {threads} runs one per thread)",
            algorithm.name(),
            if starts == 1 { "" } else { "s" },
            threads - starts,
            if threads - starts == 1 {
                "stays"
            } else {
                "stay"
            },
        )
    })
}

/// A parameter error of the CPU solvers in the command line's words: the flags that set
/// those parameters (`tenure_min` is --tenure-range's, `restart_stall` --restart-stall's).
fn cpu_flag_names(message: &str) -> String {
    message
        .replace(
            "parameters `tenure_min`, `tenure_max`",
            "--tenure-range MIN,MAX",
        )
        .replace("parameter `tenure_min`", "--tenure-range")
        .replace("parameter `restart_stall`", "--restart-stall")
        .replace("parameter `aspiration`", "--aspiration")
        .replace("parameter `perturbation`", "--perturbation")
        .replace("`restarts` = off", "--restarts off")
}

/// `--or-opt on|off`, `--restarts on|off`.
fn on_off(flag: &str, s: &str) -> Result<bool> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => bail!("{flag} takes on or off, found {s:?}"),
    }
}

/// Any family on the GPU: the flags become the family's point, checked by the family (which
/// declares which flags it takes), then fitted to the device.
fn solve_gpu(args: &SolveArgs, instance: &family::Instance, budget: Budget) -> Result<Solved> {
    let plan = SolveConfig::from_flags(instance.family(), &given_flags(args), &args.nvrtc_flags)
        .map_err(anyhow::Error::msg)?;
    // Arguments are checked first, so their errors show on any machine.
    if !kernels::gpu::driver_available() {
        bail!("--backend gpu needs an NVIDIA GPU: no CUDA driver (libcuda.so) found; use --backend cpu");
    }
    let gpu = kernels::gpu::Gpu::open(args.gpu)?;
    let requested = plan.config.variant_name();
    let passed_over = plan.passed_over(instance, &gpu.info);
    let config = plan.fit(instance, &gpu.info).map_err(anyhow::Error::msg)?;
    if let Some(note) = passed_over.filter(|_| config.variant_name() == requested) {
        eprintln!("mats: {note}");
    }
    if config.variant_name() != requested {
        // Only where no variant was named (`SolveConfig::fit`): say why the answer comes from
        // another variant than the family's usual default.
        eprintln!(
            "mats: {} runs this instance: {requested}, the default elsewhere, would run it with its \
             working set out of shared memory (--algo {requested} runs it anyway)",
            config.variant_name()
        );
    }
    let cache = kernels::KernelCache::new(kernels::KernelCache::default_dir());
    let options = RunOptions {
        seed: args.seed,
        threads: 1,
        budget,
    };
    let algorithm = config.variant_name().to_string();
    run_gpu(args, &gpu, &config, &cache, instance, &options, algorithm)
}

/// The flags the CPU solvers take (as `AlgorithmParams` and the thread count).
const CPU_FLAGS: [&str; 21] = [
    "--algo",
    "--threads",
    "--starts",
    "--tenure",
    "--destruction",
    "--temperature",
    "--ants",
    "--alpha",
    "--beta",
    "--rho",
    "--candidates",
    "--ls-neighbours",
    "--min-new-edges",
    "--source-tour",
    "--or-opt",
    "--lists",
    "--restarts",
    "--tenure-range",
    "--aspiration",
    "--perturbation",
    "--restart-stall",
];

/// Every solver flag the user gave, family-neutral: which family's GPU solver takes which,
/// and what it sets, is that family's table (`solvers::gpu::solve_flags`).
fn given_flags(args: &SolveArgs) -> Vec<GivenFlag> {
    let int = |v: Option<i64>| v.map(FlagValue::Int);
    let float = |v: Option<f64>| v.map(FlagValue::Float);
    let text = |v: &Option<String>| v.clone().map(FlagValue::Text);
    let count = |v: Option<usize>| v.map(|v| FlagValue::Int(i64::try_from(v).unwrap_or(i64::MAX)));
    let given = [
        ("--algo", text(&args.algo)),
        ("--solutions", int(args.solutions.map(i64::from))),
        (
            "--threads",
            count((args.threads != 0).then_some(args.threads)),
        ),
        ("--tenure", count(args.tenure)),
        ("--tabu-steps", count(args.tabu_steps)),
        ("--beam", text(&args.beam)),
        ("--beam-idle-weight", count(args.beam_idle_weight)),
        (
            "--tenure-range",
            args.tenure_range.clone().map(FlagValue::List),
        ),
        ("--aspiration", float(args.aspiration)),
        ("--perturbation", float(args.perturbation)),
        ("--perturbation-max", float(args.perturbation_max)),
        ("--relink", args.relink.then_some(FlagValue::Int(1))),
        ("--no-relink", args.no_relink.then_some(FlagValue::Int(0))),
        ("--adapt", args.adapt.then_some(FlagValue::Int(1))),
        (
            "--crossover",
            args.crossover.map(|on| FlagValue::Int(on.into())),
        ),
        ("--elite", count(args.elite)),
        (
            "--walks-per-block",
            int(args.walks_per_block.map(i64::from)),
        ),
        (
            "--launch-iterations",
            int(args.launch_iterations.map(i64::from)),
        ),
        ("--restart-stall", int(args.restart_stall.map(i64::from))),
        ("--restart-from", text(&args.restart_from)),
        ("--layout", text(&args.layout)),
        ("--child-threads", int(args.child_threads.map(i64::from))),
        ("--starts", count(args.starts)),
        ("--destruction", count(args.destruction)),
        ("--temperature", float(args.temperature)),
        ("--construction", text(&args.construction)),
        ("--pheromone", text(&args.pheromone)),
        ("--ants", count(args.ants)),
        ("--alpha", float(args.alpha)),
        ("--beta", float(args.beta)),
        ("--rho", float(args.rho)),
        ("--candidates", count(args.candidates)),
        ("--ls-neighbours", count(args.ls_neighbours)),
        ("--min-new-edges", count(args.min_new_edges)),
        ("--source-tour", text(&args.source_tour)),
        ("--or-opt", text(&args.or_opt)),
        ("--lists", text(&args.lists)),
        ("--restarts", text(&args.restarts)),
        ("--merge", text(&args.merge)),
    ];
    given
        .into_iter()
        .filter_map(|(flag, value)| value.map(|value| GivenFlag { flag, value }))
        .collect()
}

/// Runs the bundle an export chose for this instance's class.
fn solve_tuned(
    args: &SolveArgs,
    dir: &std::path::Path,
    instance: &family::Instance,
    budget: Budget,
    known: Option<solvers::bks::BestKnownEntry>,
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
    // The bundle decides where it runs; an explicit other backend would silently not be
    // what ran.
    if let Some(backend) = args.backend.filter(|b| b.name() != index.backend) {
        bail!(
            "--backend {} does not combine with --tuned {}: its bundles run on the {} (omit \
             --backend)",
            backend.name(),
            dir.display(),
            index.backend
        );
    }
    // A CPU bundle would run on the CPU whatever GPUs were named: say so instead.
    if index.backend == "cpu" && (args.gpus.is_some() || args.gpu != 0) {
        bail!(
            "{} does not combine with --tuned {}: its bundles run on the CPU",
            if args.gpus.is_some() {
                "--gpus"
            } else {
                "--gpu"
            },
            dir.display()
        );
    }
    if !(args.max_class_distance.is_finite() && args.max_class_distance >= 0.0) {
        bail!(
            "--max-class-distance must be a number >= 0, found {}",
            args.max_class_distance
        );
    }
    // The bundle sets the search: a flag that would set part of it is refused rather than
    // ignored. `--adapt` (a GPU bundle's run-time race around its point) and `--threads` (a
    // CPU bundle's worker threads) are checked against the bundle that runs.
    let overridden: Vec<&str> = given_flags(args)
        .iter()
        .map(|g| g.flag)
        .filter(|f| !matches!(*f, "--adapt" | "--threads"))
        .chain((!args.nvrtc_flags.is_empty()).then_some("--nvrtc-flag"))
        .collect();
    if let Some(flag) = overridden.first() {
        bail!(
            "{flag} does not combine with --tuned: the bundle sets {}'s search and launch \
             parameters (run without --tuned to set them)",
            instance.family()
        );
    }
    let own_class = instance.class();
    let features = serde_json::to_value(instance.features())?;
    // A file the campaign itself measured is in the class the campaign put it in (a class
    // table's word, which its features need not say); any other goes by its features.
    let member = engine::tune::settings::file_sha(&args.source.file)
        .ok()
        .and_then(|sha| engine::bundle::member_class(&index, instance.name(), &sha));
    let nearest = match member {
        Some(class) => Some(engine::bundle::ClassChoice {
            class: class.to_string(),
            distance: 0.0,
            exact: true,
        }),
        None => nearest_class(&index, &own_class, &features),
    };
    let Some(nearest) = nearest else {
        bail!("{} holds no tuned class", dir.display());
    };
    let named = args.tuned_class.is_some();
    let choice = match &args.tuned_class {
        Some(name) => named_class(
            &index,
            dir,
            name,
            instance,
            (nearest, member),
            args.max_class_distance,
        )?,
        None => nearest,
    };
    let mut tuned = TunedChoice {
        class: choice.class.clone(),
        distance: choice.distance,
        exact: choice.exact,
        default_ran: false,
        bundle: None,
        pick: None,
        note: None,
    };
    // An infinite distance (an index without feature ranges) never passes.
    if !named
        && !choice.exact
        && (choice.distance.is_nan() || choice.distance > args.max_class_distance)
    {
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
        // The default runs at the export's time budget (a budget or target campaign), as a
        // bundle would: left to its own iteration count, TSP's Ant System took 107 s on pr2392
        // for a 0.2 s export. A fixed-work export has no time to give; its iterations are
        // its bundles' (of their algorithms), so the default keeps its own.
        let budget = match (
            budget.time_limit,
            budget.iterations,
            index.run.and_then(|r| r.limit_s()),
        ) {
            (None, None, Some(seconds)) => {
                let limit = solvers::limits::seconds(seconds).map_err(|e| {
                    anyhow::anyhow!("{}: `run`: {e}", dir.join("index.json").display())
                })?;
                eprintln!(
                    "running the default at the export's budget, {seconds} s (--time-limit \
                     sets another)"
                );
                Budget {
                    time_limit: Some(remaining(limit, Instant::now()).0),
                    ..budget
                }
            }
            _ => budget,
        };
        let mut solved = if index.backend == "gpu" {
            solve_gpu(args, instance, budget)?
        } else {
            solve_cpu(args, instance, budget)?
        };
        solved.tuned = Some(tuned);
        return Ok(solved);
    }
    if !choice.exact && !named {
        eprintln!(
            "{}: no bundle for its class {own_class}; running the nearest tuned class {} \
             (distance {:.3})",
            instance.name(),
            choice.class,
            choice.distance
        );
    }
    let class = choice.class;
    // `tuned` is the campaign's own objective: an energy campaign's verdict is on its energy
    // bundle (pick alone maps `tuned` to quality, or time in fixed work).
    let own = index
        .prefer
        .as_deref()
        .filter(|p| index.classes[&class].bundles.contains_key(*p));
    let prefer = match (args.prefer.name(), own) {
        ("tuned", Some(own)) => own,
        (asked, _) => asked,
    };
    let request = engine::pick::Request {
        time_limit_s: args.time_limit,
        prefer,
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
    tuned.note.clone_from(&manifest.note);
    let budget = tuned_budget(budget, &manifest, &folder)?;
    // Said once the bundle is known to load, so a broken bundle's error stays one line.
    eprintln!("{picked}");
    say_bundle(&manifest, bundle, &budget);
    let (budget, set_target) = tuned_target(budget, &manifest, bundle, instance.name(), known);
    let mut solved = if manifest.backend == "gpu" {
        run_tuned_gpu(args, instance, &manifest, &folder, bundle, budget)?
    } else {
        run_tuned_cpu(args, instance, &manifest, bundle, budget)?
    };
    solved.tuned = Some(tuned);
    solved.target = set_target;
    Ok(solved)
}

/// A bundle tuned for the time to a target gap stops at that gap, as its trials did, unless
/// --target or --target-gap asks for another; returns the budget and the target it set.
/// Without a best-known value the gap cannot be turned into an objective: the run lasts the
/// cap, and says so.
fn tuned_target(
    budget: Budget,
    manifest: &engine::bundle::Manifest,
    bundle: &str,
    instance: &str,
    known: Option<solvers::bks::BestKnownEntry>,
) -> (Budget, Option<solvers::run::Target>) {
    let Some(RunMode::Target {
        target_gap_percent, ..
    }) = manifest.run
    else {
        return (budget, None);
    };
    if budget.target.is_some() {
        return (budget, None);
    }
    let Some(known) = known else {
        eprintln!(
            "bundle {bundle}: tuned to reach a gap of {target_gap_percent}%, but {instance} has \
             no best-known value (--bks FILE gives one): the run lasts the cap"
        );
        return (budget, None);
    };
    let objective = solvers::bks::target_objective(known.value, target_gap_percent);
    eprintln!(
        "bundle {bundle}: stops at a gap of {target_gap_percent}% (objective {objective}), as \
         it was tuned, or at the cap"
    );
    let target = solvers::run::Target::new(objective);
    (
        Budget {
            target: Some(target.clone()),
            ..budget
        },
        Some(target),
    )
}

/// A bundle runs at the budget it was tuned for unless --time-limit or --iterations says
/// otherwise; an explicit --time-limit is always honoured. The tuned limit is range-checked
/// (-1 and 1e308 used to panic in the duration conversion) and counts from process start
/// like --time-limit.
fn tuned_budget(
    budget: Budget,
    manifest: &engine::bundle::Manifest,
    folder: &std::path::Path,
) -> Result<Budget> {
    let tuned_limit = manifest
        .tuned_limit()
        .map_err(|e| anyhow::anyhow!("{}: {e}", folder.join("manifest.json").display()))?;
    Ok(match (budget.time_limit, budget.iterations, tuned_limit) {
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
    })
}

/// What the bundle was tuned for and how long this run is.
fn say_bundle(manifest: &engine::bundle::Manifest, bundle: &str, budget: &Budget) {
    // Why this point and not the search's best, or that it lost on the campaign's holdouts:
    // said at every run, not only once at export.
    if let Some(note) = &manifest.note {
        eprintln!("bundle {bundle}: note: {note}");
    }
    let Some(run) = &manifest.run else { return };
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

/// The GPU a GPU bundle can run on: the driver present, the architecture it was built for,
/// and the driver it was measured under (its timings do not carry over to another).
fn bundle_gpu(
    args: &SolveArgs,
    manifest: &engine::bundle::Manifest,
    folder: &std::path::Path,
) -> Result<kernels::gpu::Gpu> {
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
    Ok(gpu)
}

/// Runs a GPU bundle: its configuration, with its CUBINs loaded under the NVRTC that built
/// them (installed here or not); the run's length is the budget's alone.
fn run_tuned_gpu(
    args: &SolveArgs,
    instance: &family::Instance,
    manifest: &engine::bundle::Manifest,
    folder: &std::path::Path,
    bundle: &str,
    budget: Budget,
) -> Result<Solved> {
    if args.threads != 0 {
        bail!(
            "--threads does not combine with GPU bundle {bundle}: its launch is the tuned one \
             (--threads sets a CPU bundle's worker threads)"
        );
    }
    let gpu = bundle_gpu(args, manifest, folder)?;
    // `--adapt`: the race of restart configurations around the bundle's point (issue 28, item
    // 5), where the bundle's variant takes it.
    let mut realised = manifest.realised();
    if args.adapt {
        realised
            .values
            .insert("adapt".into(), results::Value::Int(1));
    }
    let config = engine::runner::gpu::config(instance.family(), &realised)
        .map_err(|e| anyhow::anyhow!("bundle {bundle}: {e}"))?;
    if args.adapt {
        let adapt = GivenFlag {
            flag: "--adapt",
            value: FlagValue::Int(1),
        };
        solvers::gpu::solve_flags::check_applies(instance.family(), &adapt, config.variant_name())
            .map_err(|e| anyhow::anyhow!("bundle {bundle}: {e}"))?;
    }
    let cache =
        kernels::KernelCache::new(folder.join("kernels")).prebuilt_under(manifest.nvrtc.as_deref());
    let options = RunOptions {
        seed: args.seed,
        threads: 1,
        budget,
    };
    let algorithm = format!("{} (tuned: {bundle})", config.variant_name());
    run_gpu(args, &gpu, &config, &cache, instance, &options, algorithm)
}

/// Runs a CPU bundle: its solver and knobs, on its thread count unless --threads says.
fn run_tuned_cpu(
    args: &SolveArgs,
    instance: &family::Instance,
    manifest: &engine::bundle::Manifest,
    bundle: &str,
    budget: Budget,
) -> Result<Solved> {
    if args.adapt {
        bail!(
            "--adapt races the blocks of a GPU run; bundle {bundle} is a CPU bundle (its search \
             runs as tuned)"
        );
    }
    let (algorithm, params, threads) =
        engine::runner::cpu::params(instance.family(), &manifest.realised())
            .map_err(anyhow::Error::msg)?;
    let threads = if args.threads != 0 {
        args.threads
    } else {
        threads
    };
    check_threads_flag(args)?;
    let label = format!("{} (tuned: {bundle})", algorithm.name());
    run_cpu(
        args, instance, algorithm, &params, threads, budget, label, true,
    )
}

/// `--tuned-class NAME`: that class, at the instance's distance from it, with a warning when
/// the instance's nearest tuned class (`nearest`) is another.
fn named_class(
    index: &engine::bundle::Index,
    dir: &std::path::Path,
    name: &str,
    instance: &family::Instance,
    (nearest, member): (engine::bundle::ClassChoice, Option<&str>),
    max_distance: f64,
) -> Result<engine::bundle::ClassChoice> {
    if !index.classes.contains_key(name) {
        bail!(
            "--tuned-class {name:?}: {} has no such class (tuned: {})",
            dir.display(),
            index.classes.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let own = instance.class();
    // The instance's own class: its feature label, or the class the campaign put this very
    // file in.
    let is_own = own == name || member == Some(name);
    // Measured as nearest_class measures any class but the instance's own label (where the
    // export recorded no ranges: infinitely far, not 0).
    let features = serde_json::to_value(instance.features())?;
    let named = engine::bundle::ClassChoice {
        class: name.to_string(),
        distance: if nearest.class == name {
            nearest.distance
        } else {
            engine::bundle::distance_to(index, name, &features)
                .context("the named class vanished from the index")?
        },
        exact: is_own,
    };
    if nearest.class != name {
        // Its own class is chosen whatever the distances: say so rather than call a farther
        // class the nearest.
        let chosen = if nearest.exact {
            format!("belongs to the tuned class {}", nearest.class)
        } else {
            format!(
                "is nearest the tuned class {} (distance {:.3})",
                nearest.class, nearest.distance
            )
        };
        eprintln!(
            "warning: {} (class {own}) {chosen}, not {name} (distance {:.3}); running {name}'s \
             bundle as asked",
            instance.name(),
            named.distance
        );
    }
    if !is_own && (named.distance.is_nan() || named.distance > max_distance) {
        // Without a class name `solve --tuned` would run the default here; a named class
        // (a standalone executable's own) runs as asked, but not silently.
        eprintln!(
            "warning: {} (class {own}) is far from the tuned class {name} (distance {:.3} > \
             {max_distance}, beyond which `mats solve --tuned` runs the family's default): its \
             tuning may not hold; running {name}'s bundle as asked",
            instance.name(),
            named.distance
        );
    }
    Ok(named)
}

/// Runs a GPU configuration of any family and reports it as `mats solve` does (the caller
/// re-scores the solution).
fn run_gpu(
    args: &SolveArgs,
    gpu: &kernels::gpu::Gpu,
    config: &solvers::gpu::GpuConfig,
    cache: &kernels::KernelCache,
    instance: &family::Instance,
    options: &RunOptions,
    algorithm: String,
) -> Result<Solved> {
    if let Some(solved) = islands::solve(args, gpu, config, cache, instance, options, &algorithm)? {
        return Ok(solved);
    }
    // Opening the GPU and a cold NVRTC compile in `prepare` count against the time limit as
    // well (from process start where main marked it, like the instance's parsing), and a
    // compile that cannot finish within it is given up at the limit.
    let preparing = Instant::now();
    let deadline = match (solvers::run::process_start(), args.time_limit) {
        (Some(start), Some(total)) => start.checked_add(Duration::from_secs_f64(total)),
        _ => options
            .budget
            .time_limit
            .and_then(|limit| preparing.checked_add(limit)),
    };
    let timed = deadline.map(|deadline| cache.clone().until(deadline));
    let mut prepared = match config.prepare(gpu, timed.as_ref().unwrap_or(cache), instance) {
        Err(e) => match CompileOutOfTime::of(e, &algorithm) {
            Ok(compile) => return compile.answer(args, config, cache, instance, options),
            Err(e) => return Err(e.into()),
        },
        Ok(prepared) => prepared,
    };
    let mut options = options.clone();
    let mut start_explained = false;
    if let (Some(limit), Some(deadline)) = (options.budget.time_limit, deadline) {
        let left = deadline.saturating_duration_since(Instant::now());
        // A limit already zero was spent by setup, which said so.
        if left.is_zero() && !limit.is_zero() {
            start_explained = true;
            eprintln!(
                "mats: opening the GPU, compiling and loading the kernel took the whole time \
                 limit; returning the start solution"
            );
        }
        options.budget.time_limit = Some(left);
    }
    // The run's own mean power and energy (NVML), so a `--max-power` pick can be checked
    // against its cap on this very run; absent where NVML is not there.
    let meter = measure::power::PowerMeter::of_gpu(gpu).ok();
    let (run, power) = measure::budget_run(
        meter.as_ref(),
        &measure::observer::DEFAULT_OBSERVERS,
        || prepared.run(gpu, &options),
    )?;
    let (solutions, _) = config.shape();
    Ok(Solved {
        tuned: None,
        starts: None,
        start_explained,
        target: None,
        gpu: Some(GpuDetails {
            device: format!("{} ({})", gpu.info.name, gpu.info.arch),
            // Where the configuration leaves it to the device, what the launch used.
            solutions: if solutions > 0 {
                solutions
            } else {
                run.searches.unwrap_or(run.launch.grid.0)
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
            adaptation: run.adaptation.clone(),
            power_w: power.power_w,
            energy_j: power.energy_j,
            islands: None,
        }),
        outcome: run.outcome,
        algorithm,
        backend: "gpu",
        threads: run.launch.block.0 as usize,
    })
}

/// A GPU run's time limit ended while NVRTC compiled its kernel (a cold kernel cache).
struct CompileOutOfTime {
    source_id: String,
    waited_s: f64,
    /// The GPU run's label (a tuned run's names its bundle), kept in the answer's.
    gpu_algorithm: String,
}

impl CompileOutOfTime {
    /// `error` where it is a compile given up at the time limit, else `error` back.
    fn of(error: kernels::KernelError, gpu_algorithm: &str) -> Result<Self, kernels::KernelError> {
        match error {
            kernels::KernelError::OutOfTime {
                source_id,
                waited_s,
            } => Ok(CompileOutOfTime {
                source_id,
                waited_s,
                gpu_algorithm: gpu_algorithm.to_string(),
            }),
            other => Err(other),
        }
    }

    /// The answer at the limit: the start solution of the family's CPU solver (there is no
    /// GPU start without the kernel), while a background worker finishes the compile into
    /// the cache, so that the next run finds the kernel instead of giving up again.
    fn answer(
        self,
        args: &SolveArgs,
        config: &solvers::gpu::GpuConfig,
        cache: &kernels::KernelCache,
        instance: &family::Instance,
        options: &RunOptions,
    ) -> Result<Solved> {
        let job = measure::protocol::SolveJob {
            gpu: args.gpu,
            instance: args.source.file.clone(),
            index: args.source.index,
            config: config.clone(),
            seed: args.seed,
            limit: Default::default(),
            settings: Default::default(),
            cache_dir: Some(cache.dir().to_path_buf()),
        };
        // An exported executable is not `mats` (it takes no `worker` command) and its kernels
        // folder is a temporary one: nothing to fill for a next run there.
        let background = std::env::current_exe()
            .map_err(|e| e.to_string())
            .and_then(|exe| match crate::standalone::payload::read_header(&exe) {
                Ok(None) => Ok(exe),
                _ => Err("an exported executable does not compile in the background".into()),
            })
            .and_then(|exe| measure::client::detach(&exe, measure::protocol::Job::Prepare(job)));
        eprintln!(
            "mats: the time limit ran out while NVRTC compiled {} (not in the kernel cache yet; \
             waited {:.3} s); answering the {} CPU solver's start solution. {}",
            self.source_id,
            self.waited_s,
            instance.family(),
            match background {
                Ok(()) => "The compile goes on in the background; the next run finds the kernel \
                           in the cache."
                    .to_string(),
                Err(e) => format!(
                    "The compile does not go on in the background ({e}); a --time-limit that \
                     leaves time for it compiles the kernel."
                ),
            }
        );
        let algorithm = instance.family().algorithms()[0];
        let budget = Budget {
            time_limit: Some(Duration::ZERO),
            ..options.budget.clone()
        };
        let label = format!(
            "{} start (the kernel of {} was compiling)",
            algorithm.name(),
            self.gpu_algorithm
        );
        run_cpu(
            args,
            instance,
            algorithm,
            &AlgorithmParams::default(),
            1,
            budget,
            label,
            false,
        )
    }
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
    /// `--adapt`: the restart configurations raced and the blocks each had at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptation: Option<String>,
    /// Mean board power over the run (NVML, W) and that times the run's wall time (J);
    /// absent where NVML cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// `--gpus` with several GPUs: the islands' work and exchanges (see docs/json.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub islands: Option<islands::IslandsReport>,
}

/// The anytime curve at 1-2-5 checkpoints (0.01 s up to the run's end): the best found by
/// each, from the trace's improvements.
fn trace_rows(trace: &[TracePoint], seconds: f64) -> Vec<String> {
    let mut rows = Vec::new();
    let mut decade = 0.01;
    let checkpoints = std::iter::from_fn(|| {
        let here = [1.0, 2.0, 5.0].map(|f| f * decade);
        decade *= 10.0;
        Some(here)
    })
    .flatten()
    .take_while(|&t| t < seconds)
    .chain(std::iter::once(seconds));
    for at in checkpoints {
        let Some(point) = trace.iter().rev().find(|p| p.seconds <= at) else {
            continue;
        };
        let gap = point
            .gap_percent
            .map(|g| format!("  {g:.3}%"))
            .unwrap_or_default();
        rows.push(format!("  by {at:>8.2} s  {}{gap}", point.objective));
    }
    rows
}

fn print_trace(trace: &[TracePoint], seconds: f64) {
    println!(
        "trace      {} improvements of the best (seconds from the solver's start):",
        trace.len()
    );
    for row in trace_rows(trace, seconds) {
        println!("{row}");
    }
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
    if let Some(t) = &r.target {
        let gap = t
            .gap_percent
            .map(|g| format!(" ({} the best known)", solvers::bks::above_or_below(g)))
            .unwrap_or_default();
        match t.reached_after_s {
            Some(at) => println!("target     {}{gap}: reached after {at:.3} s", t.objective),
            None => println!("target     {}{gap}: not reached", t.objective),
        }
    }
    if let Some(trace) = &r.trace {
        print_trace(trace, r.seconds);
    }
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
        if let Some(adaptation) = &g.adaptation {
            println!("adapt      {adaptation}");
        }
        if let (Some(w), Some(j)) = (g.power_w, g.energy_j) {
            println!("power      {w:.1} W mean over the run (NVML), {j:.1} J");
        }
        if let Some(islands) = &g.islands {
            islands::print(islands);
        }
    }
    let solution: Vec<String> = r.solution.iter().map(|v| v.to_string()).collect();
    println!("solution   {}", solution.join(" "));
}
