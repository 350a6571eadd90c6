//! The CPU runner: the reference solvers, timed by the wall clock, in this process.
//!
//! A production run is one solve with a fixed iteration budget and the campaign's seed, so
//! every run of a point does the same work. Parameters map onto the solver by name: the
//! `variant`-kind parameter `algorithm`, `threads`, and the knobs of
//! [`solvers::family::AlgorithmParams`].

use std::time::Instant;

use results::{Measurement, TrialStatus};
use solvers::family::AlgorithmParams;
use solvers::run::{Budget, RunOptions};

use super::{rescore, Realised, TrialResult};
use crate::campaign::instances::CampaignInstance;

/// Repetitions of a CPU measurement.
#[derive(Debug, Clone, Copy)]
pub struct CpuSettings {
    pub warmup_runs: u32,
    pub timed_runs: u32,
    pub iterations: Option<u64>,
    pub seed: u64,
}

/// The name trials record as their device.
pub fn device_name() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("cpu ({cores} threads)")
}

/// The algorithm parameters a realised point asks for.
pub fn params(
    family: solvers::family::Family,
    r: &Realised,
) -> Result<(solvers::family::Algorithm, AlgorithmParams, usize), String> {
    let algorithm = match r.text("algorithm") {
        Some(name) => family.algorithm(&name)?,
        None => family.algorithms()[0],
    };
    let params = AlgorithmParams {
        starts: r.count("starts")?,
        tenure: r.count("tenure")?,
        destruction: r.count("destruction")?,
        temperature: r.float("temperature")?,
        ants: r.count("ants")?,
        alpha: r.float("alpha")?,
        beta: r.float("beta")?,
        rho: r.float("rho")?,
        candidates: r.count("candidates")?,
    };
    params.check(algorithm)?;
    let threads = r.count::<usize>("threads")?.unwrap_or(1).max(1);
    Ok((algorithm, params, threads))
}

/// Measures one point on one instance.
pub fn measure(inst: &CampaignInstance, r: &Realised, settings: &CpuSettings) -> TrialResult {
    let (algorithm, params, threads) = match params(inst.instance.family(), r) {
        Ok(p) => p,
        Err(e) => return TrialResult::failed(TrialStatus::Failed, e),
    };
    let options = RunOptions {
        seed: settings.seed,
        threads,
        budget: Budget {
            iterations: settings.iterations,
            time_limit: None,
        },
    };
    let run = || {
        let started = Instant::now();
        inst.instance
            .solve(algorithm, &params, &options)
            .map(|outcome| (outcome, started.elapsed().as_secs_f64()))
    };
    let mut last = None;
    for _ in 0..settings.warmup_runs {
        match run() {
            Ok(r) => last = Some(r.0),
            Err(e) => return TrialResult::failed(TrialStatus::Failed, e),
        }
    }
    let mut times = Vec::new();
    for _ in 0..settings.timed_runs.max(1) {
        match run() {
            Ok((outcome, seconds)) => {
                times.push(seconds);
                last = Some(outcome);
            }
            Err(e) => return TrialResult::failed(TrialStatus::Failed, e),
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let mut measurement = Measurement {
        time_s: Some(median),
        time_spread: Some((times[times.len() - 1] - times[0]) / median.max(1e-12)),
        ..Measurement::default()
    };
    let Some(outcome) = last else {
        return TrialResult::failed(TrialStatus::Failed, "no run finished");
    };
    if let Err(e) = rescore(inst, &outcome.solution, outcome.objective, &mut measurement) {
        return TrialResult {
            status: TrialStatus::Invalid,
            measurement,
            log: e,
        };
    }
    TrialResult {
        status: TrialStatus::Ok,
        measurement,
        log: format!(
            "{} {algorithm} on {threads} thread(s), {} runs",
            inst.instance.family(),
            times.len()
        ),
    }
}
