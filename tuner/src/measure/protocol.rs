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
