//! What a measurement runs: a workload enqueues one "run" of a compiled variant on the GPU's
//! stream. Runs must be repeatable back to back (the energy window repeats them for a second
//! or more), and a workload checks its own output afterwards so a fast but wrong build never
//! counts as a good measurement.

use cudarc::driver::{CudaSlice, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, Launch};
use kernels::{Compiled, KernelError};
use serde::{Deserialize, Serialize};

/// A workload as named in a worker request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    /// The `probe/busy` FMA kernel: `blocks x threads` threads, `iterations` per thread.
    Busy {
        blocks: u32,
        threads: u32,
        iterations: u32,
    },
    /// The `probe/dynamic` kernels: `parents` threads each launch a child grid (dynamic
    /// parallelism, so the relocatable compile and device link are exercised).
    Dynamic { parents: u32 },
    /// The test-only `probe/fault` kernel, which writes out of bounds.
    Fault,
}

impl WorkloadSpec {
    /// The kernel source this workload launches.
    pub fn source(&self) -> &'static str {
        match self {
            WorkloadSpec::Busy { .. } => "probe/busy",
            WorkloadSpec::Dynamic { .. } => "probe/dynamic",
            WorkloadSpec::Fault => "probe/fault",
        }
    }

    /// Allocates buffers and looks up the kernel.
    pub fn prepare(
        &self,
        gpu: &Gpu,
        compiled: &Compiled,
    ) -> Result<Box<dyn Workload>, KernelError> {
        let module = gpu.load(compiled)?;
        match *self {
            WorkloadSpec::Busy {
                blocks,
                threads,
                iterations,
            } => {
                let kernel = module.function("busy")?;
                let launch = Launch::linear(blocks, threads);
                kernel.check_launch(&launch)?;
                let n = blocks as usize * threads as usize;
                let data = gpu
                    .stream()
                    .clone_htod(&vec![1.0f32; n])
                    .map_err(KernelError::driver("allocating the busy buffer"))?;
                Ok(Box::new(Busy {
                    kernel,
                    launch,
                    data,
                    n: n as i32,
                    iterations: iterations as i32,
                }))
            }
            WorkloadSpec::Dynamic { parents } => {
                let kernel = module.function("spawn_children")?;
                let threads = parents.clamp(1, 128);
                let launch = Launch::linear(parents.div_ceil(threads), threads);
                kernel.check_launch(&launch)?;
                let chunk = compiled
                    .variant
                    .defines
                    .get("CHUNK")
                    .map_or(Ok(64), |c| c.parse::<usize>())
                    .map_err(|_| KernelError::InvalidVariant("CHUNK must be an integer".into()))?;
                let out = gpu
                    .stream()
                    .alloc_zeros::<i32>(parents as usize * chunk)
                    .map_err(KernelError::driver("allocating the dynamic buffer"))?;
                Ok(Box::new(Dynamic {
                    kernel,
                    launch,
                    out,
                    parents: parents as i32,
                }))
            }
            WorkloadSpec::Fault => {
                let kernel = module.function("write_out_of_bounds")?;
                let data = gpu
                    .stream()
                    .alloc_zeros::<i32>(32)
                    .map_err(KernelError::driver("allocating the fault buffer"))?;
                Ok(Box::new(Fault { kernel, data }))
            }
        }
    }
}

/// A prepared workload.
pub trait Workload {
    /// Enqueues one run on the GPU's stream (asynchronous).
    fn run(&mut self, gpu: &Gpu) -> Result<(), KernelError>;
    /// Checks the output after the runs; an error marks the measurement invalid.
    fn verify(&mut self, gpu: &Gpu) -> Result<(), String>;
    /// The kernel's launch, for records.
    fn launch(&self) -> Launch;
    fn kernel(&self) -> &Kernel;
}

struct Busy {
    kernel: Kernel,
    launch: Launch,
    data: CudaSlice<f32>,
    n: i32,
    iterations: i32,
}

impl Workload for Busy {
    fn run(&mut self, gpu: &Gpu) -> Result<(), KernelError> {
        let mut builder = gpu.stream().launch_builder(self.kernel.function());
        builder
            .arg(&mut self.data)
            .arg(&self.n)
            .arg(&self.iterations);
        // SAFETY: the arguments match `busy(float*, int, int)` and the buffer holds n floats.
        unsafe { builder.launch(self.launch.config()) }
            .map(|_| ())
            .map_err(self.kernel.launch_error(&self.launch))
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<(), String> {
        let host = gpu
            .stream()
            .clone_dtoh(&self.data)
            .map_err(|e| format!("reading the busy buffer: {e:?}"))?;
        // Every thread ran the same chain from the same inputs, so all outputs agree; a NaN or
        // a disagreement means a thread did not run or the build computes something else.
        let first = host[0];
        if !first.is_finite() || host.iter().any(|&x| x != first) {
            return Err(format!(
                "busy outputs disagree or are not finite (first {first})"
            ));
        }
        Ok(())
    }

    fn launch(&self) -> Launch {
        self.launch
    }

    fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}

struct Dynamic {
    kernel: Kernel,
    launch: Launch,
    out: CudaSlice<i32>,
    parents: i32,
}

impl Workload for Dynamic {
    fn run(&mut self, gpu: &Gpu) -> Result<(), KernelError> {
        let mut builder = gpu.stream().launch_builder(self.kernel.function());
        builder.arg(&mut self.out).arg(&self.parents);
        // SAFETY: matches `spawn_children(int*, int)`; out holds parents * CHUNK ints.
        unsafe { builder.launch(self.launch.config()) }
            .map(|_| ())
            .map_err(self.kernel.launch_error(&self.launch))
    }

    fn verify(&mut self, gpu: &Gpu) -> Result<(), String> {
        let host = gpu
            .stream()
            .clone_dtoh(&self.out)
            .map_err(|e| format!("reading the dynamic buffer: {e:?}"))?;
        // Each child thread writes its own index: any other value means a child grid did not run.
        match host.iter().enumerate().find(|&(i, &v)| v != i as i32) {
            Some((i, v)) => Err(format!("element {i} is {v}: a child grid did not run")),
            None => Ok(()),
        }
    }

    fn launch(&self) -> Launch {
        self.launch
    }

    fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}

struct Fault {
    kernel: Kernel,
    data: CudaSlice<i32>,
}

impl Workload for Fault {
    fn run(&mut self, gpu: &Gpu) -> Result<(), KernelError> {
        let launch = self.launch();
        // Far past any allocation: the write faults with an illegal address.
        let offset: i64 = 1 << 40;
        let mut builder = gpu.stream().launch_builder(self.kernel.function());
        builder.arg(&mut self.data).arg(&offset);
        // SAFETY: deliberately unsafe on the device; the host side arguments are well-formed.
        unsafe { builder.launch(launch.config()) }
            .map(|_| ())
            .map_err(self.kernel.launch_error(&launch))
    }

    fn verify(&mut self, _gpu: &Gpu) -> Result<(), String> {
        Err("the fault probe never produces a valid result".into())
    }

    fn launch(&self) -> Launch {
        Launch::linear(1, 32)
    }

    fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}

/// Production runs of a prepared GPU solver: each `run` is a whole solve (several launches and
/// host-side reductions, as a user's run would be), so the events around it time the run.
pub struct SolveRuns {
    prepared: Box<dyn solvers::gpu::PreparedRun>,
    options: solvers::run::RunOptions,
    /// The latest run's answer.
    pub last: Option<solvers::gpu::GpuRun>,
}

impl SolveRuns {
    /// Runs of `prepared` from `seed`'s start, each ending by `budget`.
    pub fn new(
        prepared: Box<dyn solvers::gpu::PreparedRun>,
        seed: u64,
        budget: solvers::run::Budget,
    ) -> SolveRuns {
        let options = solvers::run::RunOptions {
            seed,
            threads: 1,
            budget,
        };
        SolveRuns {
            prepared,
            options,
            last: None,
        }
    }
}

impl Workload for SolveRuns {
    fn run(&mut self, gpu: &Gpu) -> Result<(), KernelError> {
        self.last = Some(self.prepared.run(gpu, &self.options)?);
        Ok(())
    }

    fn verify(&mut self, _gpu: &Gpu) -> Result<(), String> {
        // The parent re-scores the solution on the CPU; nothing to check on this side.
        Ok(())
    }

    fn launch(&self) -> Launch {
        self.prepared.launch()
    }

    fn kernel(&self) -> &Kernel {
        self.prepared.kernel()
    }
}
