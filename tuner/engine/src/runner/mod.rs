//! Runners: turn a point (already realised into flags, defines and values) and an instance
//! into a finished trial. [`cpu`] runs the reference solvers in-process; [`gpu`] sends jobs to
//! one measuring worker process per GPU and compiles the next candidates ahead of it.
//!
//! Runners never decide anything about search; they measure and re-score.

pub mod cpu;
pub mod gpu;

use std::collections::BTreeMap;

use results::{Measurement, TrialStatus, Value};
use solvers::bks::gap_percent;

use crate::campaign::instances::CampaignInstance;

/// A point as the code sees it: compiler flags, defines and the other parameters by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Realised {
    pub flags: Vec<String>,
    pub defines: Vec<(String, String)>,
    pub values: BTreeMap<String, Value>,
}

impl From<search::space::Realisation> for Realised {
    fn from(r: search::space::Realisation) -> Realised {
        let mut values = r.launch;
        values.extend(r.runtime);
        values.extend(r.variant);
        values.extend(r.class);
        Realised {
            flags: r.flags,
            defines: r.defines,
            values,
        }
    }
}

impl Realised {
    pub fn int(&self, name: &str) -> Result<Option<i64>, String> {
        match self.values.get(name) {
            None => Ok(None),
            Some(Value::Int(v)) => Ok(Some(*v)),
            Some(Value::Text(t)) if t == "none" || t == "default" => Ok(None),
            Some(Value::Text(t)) => t
                .parse()
                .map(Some)
                .map_err(|_| format!("parameter `{name}` must be an integer, found {t:?}")),
        }
    }

    pub fn float(&self, name: &str) -> Result<Option<f64>, String> {
        match self.values.get(name) {
            None => Ok(None),
            Some(Value::Int(v)) => Ok(Some(*v as f64)),
            Some(Value::Text(t)) if t == "none" || t == "default" => Ok(None),
            Some(Value::Text(t)) => t
                .parse()
                .map(Some)
                .map_err(|_| format!("parameter `{name}` must be a number, found {t:?}")),
        }
    }

    pub fn text(&self, name: &str) -> Option<String> {
        self.values.get(name).map(|v| v.to_string())
    }

    /// A non-negative integer parameter that fits `T`.
    pub fn count<T: TryFrom<i64>>(&self, name: &str) -> Result<Option<T>, String> {
        match self.int(name)? {
            None => Ok(None),
            Some(v) => T::try_from(v)
                .map(Some)
                .map_err(|_| format!("parameter `{name}` is out of range: {v}")),
        }
    }
}

/// The GPU workloads read points through this (they live in `solvers`, which knows no
/// store values).
impl solvers::gpu::PointValues for Realised {
    fn int(&self, name: &str) -> Result<Option<i64>, String> {
        Realised::int(self, name)
    }

    fn float(&self, name: &str) -> Result<Option<f64>, String> {
        Realised::float(self, name)
    }

    fn text(&self, name: &str) -> Option<String> {
        Realised::text(self, name)
    }

    fn flags(&self) -> &[String] {
        &self.flags
    }

    fn defines(&self) -> &[(String, String)] {
        &self.defines
    }
}

/// What ends one production run of `mode` on `inst`: nothing (fixed work), its budget, or
/// the cap and the objective that meets the target gap (which needs a best-known value).
pub fn run_limit(
    mode: &crate::campaign::config::RunMode,
    inst: &CampaignInstance,
) -> Result<measure::protocol::RunLimit, String> {
    use crate::campaign::config::RunMode;
    use measure::protocol::RunLimit;
    Ok(match *mode {
        RunMode::FixedWork => RunLimit::default(),
        RunMode::Budget { budget_s } => RunLimit {
            time_limit_s: Some(budget_s),
            ..RunLimit::default()
        },
        RunMode::Target {
            target_gap_percent,
            cap_s,
            ..
        } => {
            let best = inst.record.best_known.ok_or_else(|| {
                format!(
                    "{} has no best-known value, so a target gap means nothing for it; give \
                     one in a best-known CSV or use gap@budget",
                    inst.record.name
                )
            })?;
            RunLimit {
                time_limit_s: Some(cap_s),
                target: Some(solvers::bks::target_objective(best, target_gap_percent)),
                iterations: None,
            }
        }
    })
}

/// How a trial ended, ready for the store.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialResult {
    pub status: TrialStatus,
    pub measurement: Measurement,
    pub log: String,
}

impl TrialResult {
    pub fn failed(status: TrialStatus, log: impl Into<String>) -> TrialResult {
        TrialResult {
            status,
            measurement: Measurement::default(),
            log: log.into(),
        }
    }
}

/// Re-scores a returned solution on the CPU; a solution that is not valid, or whose score is
/// not what the solver claimed, makes the trial invalid.
pub fn rescore(
    inst: &CampaignInstance,
    solution: &[usize],
    claimed: i64,
    measurement: &mut Measurement,
) -> Result<(), String> {
    let score = inst
        .instance
        .objective(solution)
        .map_err(|e| format!("the returned solution is not valid: {e}"))?;
    if score != claimed {
        return Err(format!(
            "the solver reported {claimed} but its solution scores {score} on the CPU"
        ));
    }
    measurement.objective = Some(score);
    measurement.gap_percent = inst.record.best_known.and_then(|b| gap_percent(score, b));
    Ok(())
}
