//! The worker protocol: one JSON object per line, a request on the worker's stdin and a
//! response on its stdout, matched by id.

use std::path::PathBuf;

use kernels::gpu::{DeviceInfo, FunctionAttributes, Launch};
use kernels::{CacheStatus, Resources, Variant};
use serde::{Deserialize, Serialize};

use super::workload::WorkloadSpec;
use super::{MeasureSettings, Measurement};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub id: u64,
    pub job: Job,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "job", rename_all = "kebab-case")]
pub enum Job {
    /// Answers with the worker's process id (a liveness check).
    Ping,
    Measure(MeasureJob),
    /// Measure production runs of a GPU solver configuration (any family) on one instance.
    Solve(SolveJob),
    /// Compile (through the cache), load and upload what a [`Job::Solve`] of this job would
    /// run, and run nothing: fills the kernel cache for later runs (`mats solve` hands this
    /// to a background worker when its time limit ran out during a cold compile).
    Prepare(SolveJob),
}

/// A GPU solver configuration as the tuner sends it: one production run is a solve of
/// `instance` from the seed's start, either a fixed amount of work (`limit` without a clock or
/// target: measured with warm-up, event-timed runs and an energy window, so times compare) or
/// one run with a wall-clock budget or a target (measured as itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolveJob {
    pub gpu: usize,
    /// The instance file (read with the family of `config`).
    pub instance: PathBuf,
    /// Which instance of a file that holds several (Taillard's), 1-based.
    #[serde(default)]
    pub index: Option<usize>,
    /// The configuration, typed: family, variant, launch, flags and search parameters.
    pub config: solvers::gpu::GpuConfig,
    pub seed: u64,
    #[serde(default)]
    pub limit: RunLimit,
    #[serde(default)]
    pub settings: MeasureSettings,
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
}

/// What ends a production run: a clock or a target (a budgeted run), else a fixed amount of
/// work (`iterations`, or the variant's default length).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RunLimit {
    /// Wall-clock seconds of the run.
    pub time_limit_s: Option<f64>,
    /// Stop once the best objective is at or below this.
    pub target: Option<i64>,
    /// Fixed work: the production run's iterations.
    #[serde(default)]
    pub iterations: Option<u64>,
}

impl RunLimit {
    pub fn is_fixed_work(&self) -> bool {
        self.time_limit_s.is_none() && self.target.is_none()
    }

    /// The solver budget of a fixed-work run.
    pub fn fixed_work(&self) -> solvers::run::Budget {
        solvers::run::Budget {
            iterations: self.iterations,
            ..Default::default()
        }
    }

    /// The solver budget of a budgeted run: bounded by its clock and target, never by
    /// iterations (a point's iteration count would cut the run short). The target inside
    /// records when it was reached.
    pub fn budget(&self) -> solvers::run::Budget {
        solvers::run::Budget {
            iterations: None,
            time_limit: self.time_limit_s.map(std::time::Duration::from_secs_f64),
            target: self.target.map(solvers::run::Target::new),
            trace: None,
            start_basis: None,
        }
    }
}

/// Seconds until a budget's target was reached, if it has one and got there.
pub fn target_seconds(budget: &solvers::run::Budget) -> Option<f64> {
    budget
        .target
        .as_ref()
        .and_then(|t| t.reached_after())
        .map(|d| d.as_secs_f64())
}

/// Compile (through the cache), load, prepare and measure one variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeasureJob {
    pub gpu: usize,
    pub variant: Variant,
    pub workload: WorkloadSpec,
    #[serde(default)]
    pub settings: MeasureSettings,
    /// Kernel cache folder; the user's cache folder when absent.
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    pub id: u64,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    Pong {
        pid: u32,
    },
    Measured(Box<MeasureResult>),
    Solved(Box<SolveResult>),
    /// A [`Job::Prepare`] is done.
    Prepared,
    /// The job could not run (compile error, invalid launch, missing GPU); the worker lives on.
    Failed {
        message: String,
    },
    /// The CUDA context is lost (a fault, a hang, the worker died); the worker is replaced.
    Crashed {
        message: String,
    },
}

/// What a successful measurement job returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeasureResult {
    pub device: DeviceInfo,
    pub cache: CacheStatus,
    pub compile_seconds: f64,
    pub resources: Vec<Resources>,
    pub attributes: FunctionAttributes,
    pub launch: Launch,
    /// Resident blocks per SM at this launch's block size (the occupancy calculator).
    pub blocks_per_sm: u32,
    pub measurement: Measurement,
    /// False when the workload's output check failed: the numbers are not to be trusted.
    pub valid: bool,
    pub invalid_reason: Option<String>,
}

/// What a solve measurement returns: the measurement and the last run's answer, which the
/// parent re-scores on the CPU before it believes the GPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SolveResult {
    pub device: DeviceInfo,
    pub cache: CacheStatus,
    pub compile_seconds: f64,
    pub resources: Vec<Resources>,
    pub attributes: FunctionAttributes,
    pub launch: Launch,
    /// The main kernel's entry point (its line of `resources`).
    pub entry: String,
    pub measurement: Measurement,
    /// 0-based solution of the last run (a permutation, or a family's own encoding).
    pub solution: Vec<usize>,
    /// The cost the GPU reported for it.
    pub objective: i64,
    /// Kernel launches per run.
    pub launches: u32,
    /// Wall seconds the measurement kept the GPU working (warm-up, timed runs, energy window),
    /// from which the tuner computes its GPU-busy share and per-trial overhead.
    pub measure_s: f64,
    /// Work of the run the solution comes from: iterations, moves evaluated, kernel seconds.
    #[serde(default)]
    pub iterations: u64,
    #[serde(default)]
    pub moves: u64,
    #[serde(default)]
    pub kernel_s: f64,
    /// A budgeted run (no `measurement` timing of repeated runs): its own figures.
    #[serde(default)]
    pub budget_run: Option<super::BudgetRun>,
    /// Seconds until the target was reached (target runs that reached it).
    #[serde(default)]
    pub target_s: Option<f64>,
    /// Throttled measurements repeated before this one (the last is kept, flagged, if the GPU
    /// stayed throttled).
    #[serde(default)]
    pub remeasured: u32,
}
