//! Errors of compiling, loading and launching kernels. Each says which kernel, with which
//! options or launch configuration, so a failed trial can be understood from its record alone.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error(
        "NVRTC (libnvrtc.so) is not available: install the CUDA toolkit or the \
         `nvidia-cuda-nvrtc` wheel and put its lib folder on LD_LIBRARY_PATH"
    )]
    NvrtcMissing,
    #[error(
        "no CUDA driver (libcuda.so) on this machine: GPU commands need an NVIDIA GPU and driver"
    )]
    DriverMissing,
    #[error("invalid kernel variant: {0}")]
    InvalidVariant(String),
    /// A configuration the device or the kernel cannot run (the message names the
    /// parameter): a missing GPU ordinal, a launch over the function's limits, solver
    /// parameters out of range, measurement settings.
    #[error("{0}")]
    InvalidConfig(String),
    #[error("NVRTC failed to compile {source_id} with {options:?}:\n{log}")]
    Compile {
        source_id: String,
        options: Vec<String>,
        log: String,
    },
    /// A cache with a deadline ([`crate::KernelCache::until`]) gave up waiting for a compile:
    /// a run's time limit ended before its kernel existed.
    #[error("the time limit ran out while NVRTC compiled {source_id} ({waited_s:.3} s)")]
    OutOfTime { source_id: String, waited_s: f64 },
    #[error("NVRTC call {call} failed for {source_id}: {message}")]
    Nvrtc {
        call: &'static str,
        source_id: String,
        message: String,
    },
    #[error(
        "libcudadevrt.a (needed to link dynamic parallelism) was not found; looked in: {}; \
         set CUDA_HOME to the CUDA toolkit",
        searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    DevRuntimeMissing { searched: Vec<PathBuf> },
    #[error("device link of {source_id} failed: {message}")]
    Link { source_id: String, message: String },
    #[error("kernel cache {}: {source}", path.display())]
    Cache {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("CUDA error in {what}: {source}")]
    Driver {
        what: String,
        #[source]
        source: cudarc::driver::DriverError,
    },
}

impl KernelError {
    /// Wraps a driver error with what was being done (kernel name, launch configuration).
    pub fn driver(
        what: impl Into<String>,
    ) -> impl FnOnce(cudarc::driver::DriverError) -> KernelError {
        let what = what.into();
        move |source| KernelError::Driver { what, source }
    }
}
