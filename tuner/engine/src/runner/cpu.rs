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
    /// Fixed work, a budget or a target.
    pub mode: crate::campaign::config::RunMode,
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
    let (algorithm, params, threads) = read(family, r)?;
    params.check(algorithm)?;
    Ok((algorithm, params, threads))
}

/// Whether the solver takes `value` of parameter `name` at all, whatever the other
/// parameters: a space value it refuses (`starts = 0`) would fail every trial that draws it.
pub fn check_value(
    family: solvers::family::Family,
    name: &str,
    value: &results::Value,
) -> Result<(), String> {
    let mut values = std::collections::BTreeMap::from([(name.to_string(), value.clone())]);
    // The range is read as a pair; either end alone stands for both here.
    for (one, other) in [("tenure_min", "tenure_max"), ("tenure_max", "tenure_min")] {
        if name == one {
            values.insert(other.to_string(), value.clone());
        }
    }
    let r = Realised {
        values,
        ..Realised::default()
    };
    read(family, &r)?.1.check_values()
}

/// The parameters as read, before they are checked against the algorithm.
fn read(
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
        ls_neighbours: r.count("ls_neighbours")?,
        min_new_edges: r.count("min_new_edges")?,
        source: r
            .text("source")
            .map(|s| solvers::tsp::SourceRule::from_name(&s))
            .transpose()?,
        or_opt: r.count::<u8>("or_opt")?.map(|v| v != 0),
        lists: r
            .text("lists")
            .map(|s| solvers::tsp::ListRule::from_name(&s))
            .transpose()?,
        restarts: r.count::<u8>("restarts")?.map(|v| v != 0),
        tenure_range: match (r.float("tenure_min")?, r.float("tenure_max")?) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            (None, None) => None,
            _ => return Err("`tenure_min` and `tenure_max` go together".into()),
        },
        aspiration: r.float("aspiration")?,
        perturbation: r.float("perturbation")?,
        restart_stall: r.count("restart_stall")?,
    };
    let threads = match r.count::<usize>("threads")? {
        Some(0) => return Err("parameter `threads` must be at least 1".into()),
        t => t.unwrap_or(1),
    };
    if threads > solvers::run::MAX_THREADS {
        // The pool would quietly hold MAX_THREADS while the trial's log said otherwise.
        return Err(format!(
            "`threads` must be at most {}, found {threads}",
            solvers::run::MAX_THREADS
        ));
    }
    Ok((algorithm, params, threads))
}

/// Measures one point on one instance with one seed.
pub fn measure(
    inst: &CampaignInstance,
    r: &Realised,
    settings: &CpuSettings,
    seed: u64,
) -> TrialResult {
    let (algorithm, params, threads) = match params(inst.instance.family(), r) {
        Ok(p) => p,
        Err(e) => return TrialResult::failed(TrialStatus::Failed, e),
    };
    let limit = match super::run_limit(&settings.mode, inst) {
        Ok(l) => l,
        Err(e) => return TrialResult::failed(TrialStatus::Failed, e),
    };
    if !limit.is_fixed_work() {
        return budget_run(inst, algorithm, &params, threads, limit, seed);
    }
    let options = RunOptions {
        seed,
        threads,
        budget: Budget {
            iterations: settings.iterations,
            ..Budget::default()
        },
    };
    let run = || {
        let started = Instant::now();
        inst.instance
            .solve(algorithm, &params, &options.clone())
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
    let measurement = Measurement {
        time_s: Some(median),
        time_spread: Some((times[times.len() - 1] - times[0]) / median.max(1e-12)),
        ..Measurement::default()
    };
    let Some(outcome) = last else {
        return TrialResult::failed(TrialStatus::Failed, "no run finished");
    };
    let log = format!(
        "{} {algorithm} on {threads} thread(s), {} runs",
        inst.instance.family(),
        times.len()
    );
    rescored(inst, &outcome, measurement, log)
}

/// The trial of a finished solve: `ok` once its solution re-scores to what the solver
/// claimed, else `invalid` with the reason.
fn rescored(
    inst: &CampaignInstance,
    outcome: &solvers::run::Outcome,
    mut measurement: Measurement,
    log: String,
) -> TrialResult {
    match rescore(inst, &outcome.solution, outcome.objective, &mut measurement) {
        Ok(()) => TrialResult {
            status: TrialStatus::Ok,
            measurement,
            log,
        },
        Err(e) => TrialResult {
            status: TrialStatus::Invalid,
            measurement,
            log: e,
        },
    }
}

/// One production run ended by its wall-clock budget or its target, timed as itself.
fn budget_run(
    inst: &CampaignInstance,
    algorithm: solvers::family::Algorithm,
    params: &AlgorithmParams,
    threads: usize,
    limit: measure::protocol::RunLimit,
    seed: u64,
) -> TrialResult {
    let options = RunOptions {
        seed,
        threads,
        budget: limit.budget(),
    };
    let started = Instant::now();
    let outcome = match inst.instance.solve(algorithm, params, &options) {
        Ok(o) => o,
        Err(e) => return TrialResult::failed(TrialStatus::Failed, e),
    };
    let wall = started.elapsed().as_secs_f64();
    let measurement = Measurement {
        time_s: Some(wall),
        run_s: Some(wall),
        measure_s: Some(wall),
        target_s: measure::protocol::target_seconds(&options.budget),
        iterations: Some(outcome.iterations),
        moves: Some(outcome.evaluations),
        ..Measurement::default()
    };
    let log = format!(
        "{} {algorithm} on {threads} thread(s), seed {seed}, one run of {wall:.2} s",
        inst.instance.family()
    );
    rescored(inst, &outcome, measurement, log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::Value;
    use solvers::family::{Algorithm, Family};

    fn point(values: &[(&str, Value)]) -> Realised {
        Realised {
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            ..Realised::default()
        }
    }

    // A CPU space may set the iterated Ro-TS's knobs by the GPU space's names; the tenure's two
    // ends go together, and a knob the algorithm does not read is refused by name.
    #[test]
    fn qap_tabu_points_set_the_search_knobs() {
        let tabu = || ("algorithm", Value::Text("tabu".into()));
        let (algorithm, params, _) = params(
            Family::Qap,
            &point(&[
                tabu(),
                ("tenure_min", Value::Text("0.5".into())),
                ("tenure_max", Value::Text("0.7".into())),
                ("aspiration", Value::Text("0.0".into())),
                ("perturbation", Value::Text("0.2".into())),
                ("restart_stall", Value::Int(8)),
            ]),
        )
        .unwrap();
        assert_eq!(algorithm, Algorithm::QapTabu);
        assert_eq!(params.tenure_range, Some((0.5, 0.7)));
        assert_eq!(params.aspiration, Some(0.0));
        assert_eq!(params.perturbation, Some(0.2));
        assert_eq!(params.restart_stall, Some(8));
        let e = params_error(&[tabu(), ("tenure_min", Value::Text("0.5".into()))]);
        assert!(e.contains("go together"), "{e}");
        let e = params_error(&[
            ("algorithm", Value::Text("2opt".into())),
            ("perturbation", Value::Text("0.2".into())),
        ]);
        assert!(
            e.contains("`perturbation` does not apply to qap 2opt"),
            "{e}"
        );
    }

    fn params_error(values: &[(&str, Value)]) -> String {
        match params(Family::Qap, &point(values)) {
            Ok(p) => panic!("accepted {p:?}"),
            Err(e) => e,
        }
    }
}
