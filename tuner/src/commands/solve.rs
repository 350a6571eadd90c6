//! `mats solve`: run a solver on one instance, re-score its answer, report it.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use solvers::bks::gap_percent;
use solvers::family::{self, AlgorithmParams};
use solvers::run::{Budget, RunOptions};

use crate::cli::SolveArgs;

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
}

pub fn run(args: &SolveArgs) -> Result<()> {
    let src = &args.source;
    let bks = super::best_known(&src.bks)?;
    let instance = family::load(&src.file, src.family, src.index)?;
    let fam = instance.family();
    let algorithm = match &args.algo {
        Some(name) => fam.algorithm(name).map_err(anyhow::Error::msg)?,
        None => fam.algorithms()[0],
    };
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
    };
    params.check(algorithm).map_err(anyhow::Error::msg)?;
    let time_limit = match args.time_limit {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => bail!("--time-limit must be a positive number of seconds, found {s}"),
    };
    if args.iterations == Some(0) {
        bail!("--iterations must be at least 1");
    }
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    let options = RunOptions {
        seed: args.seed,
        threads,
        budget: Budget {
            iterations: args.iterations,
            time_limit,
        },
    };

    let started = Instant::now();
    let outcome = instance
        .solve(algorithm, &params, &options)
        .map_err(anyhow::Error::msg)?;
    let seconds = started.elapsed().as_secs_f64();

    // Never print a number we have not checked: the solution is re-scored from scratch.
    let rescored = instance
        .objective(&outcome.solution)
        .with_context(|| format!("{} {algorithm} returned an invalid solution", fam))?;
    if rescored != outcome.objective {
        bail!(
            "{fam} {algorithm} reported objective {} but its solution scores {rescored}",
            outcome.objective
        );
    }

    let known = bks.get(instance.name());
    let report = SolveReport {
        family: fam.name().into(),
        instance: instance.name().into(),
        file: src.file.display().to_string(),
        class: instance.class(),
        algorithm: algorithm.name().into(),
        backend: "cpu",
        objective: outcome.objective,
        best_known: known.map(|e| e.value),
        best_known_optimal: known.and_then(|e| e.optimal),
        gap_percent: known.and_then(|e| gap_percent(outcome.objective, e.value)),
        seconds,
        iterations: outcome.iterations,
        evaluations: outcome.evaluations,
        seed: args.seed,
        threads,
        solution: instance.solution_for_output(&outcome.solution),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report, known);
    }
    Ok(())
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
    let solution: Vec<String> = r.solution.iter().map(|v| v.to_string()).collect();
    println!("solution   {}", solution.join(" "));
}
