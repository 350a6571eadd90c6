//! Compiling ahead of the GPU. NVRTC takes about as long as a measurement, so a GPU that
//! waited for each kernel would idle half the time. Two sources of work keep the CPU cores
//! compiling while the worker measures:
//!
//! - the batch a strategy hands over (hill climbing's neighbourhood, exhaustive's next points):
//!   every kernel of the batch is queued at once;
//! - speculation: after each evaluation, the kernels of the incumbent's neighbours (where a
//!   local search looks next) are queued, at most one compile per spare core at a time.
//!
//! Each kernel is compiled once (keyed by what changes the CUBIN); a trial that needs a kernel
//! waits only for its own, and compiles it itself, without queueing, when nothing has started
//! it. Results land in the shared disk cache, where the worker finds them.

use std::collections::HashMap;
use std::sync::Arc;

use kernels::{Arch, CacheStatus};
use tokio::sync::{OnceCell, Semaphore};

use crate::measure::protocol::QapSolveJob;
use crate::runner::gpu::compile_ahead;

/// Compile seconds and cache status, or the compile error.
pub type CompileResult = Result<(f64, CacheStatus), String>;

type Cell = Arc<OnceCell<CompileResult>>;

pub struct CompilePool {
    runtime: tokio::runtime::Runtime,
    limit: Arc<Semaphore>,
    cells: HashMap<String, Cell>,
    arch: Arch,
    optin_shared: usize,
}

/// The key of a kernel: what the CUBIN depends on.
pub fn key(job: &QapSolveJob, instance: &str) -> String {
    let p = &job.params;
    format!(
        "{}|{}|{}|{:?}|{:?}",
        p.algorithm.name(),
        instance,
        p.threads_per_block,
        p.child_threads,
        p.flags
    )
}

impl CompilePool {
    pub fn new(arch: Arch, optin_shared: usize) -> anyhow::Result<CompilePool> {
        let spare = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .saturating_sub(1)
            .max(1);
        Ok(CompilePool {
            runtime: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .max_blocking_threads(spare + 1)
                .build()?,
            limit: Arc::new(Semaphore::new(spare)),
            cells: HashMap::new(),
            arch,
            optin_shared,
        })
    }

    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// Opt-in shared memory per block (the rots-block kernel choice depends on it).
    pub fn optin_shared(&self) -> usize {
        self.optin_shared
    }

    /// Whether the kernel was queued or compiled already.
    pub fn knows(&self, key: &str) -> bool {
        self.cells.contains_key(key)
    }

    /// Queues a compile (no-op when the kernel is known).
    pub fn queue(&mut self, key: String, job: QapSolveJob, inst: solvers::qap::Instance) {
        if self.cells.contains_key(&key) {
            return;
        }
        let cell: Cell = Arc::new(OnceCell::new());
        self.cells.insert(key, cell.clone());
        let (limit, arch, optin) = (self.limit.clone(), self.arch, self.optin_shared);
        self.runtime.spawn(async move {
            // The permit first: a queued compile must not hold the cell, or a trial that needs
            // the kernel now would wait behind the whole queue.
            let Ok(_permit) = limit.acquire_owned().await else {
                return;
            };
            cell.get_or_init(|| compile(job, inst, arch, optin)).await;
        });
    }

    /// The kernel's compile result, compiling it now if nobody has started.
    pub fn wait(
        &mut self,
        key: String,
        job: QapSolveJob,
        inst: solvers::qap::Instance,
    ) -> CompileResult {
        let cell = self.cells.entry(key).or_default().clone();
        let (arch, optin) = (self.arch, self.optin_shared);
        self.runtime
            .block_on(cell.get_or_init(|| compile(job, inst, arch, optin)))
            .clone()
    }
}

async fn compile(
    job: QapSolveJob,
    inst: solvers::qap::Instance,
    arch: Arch,
    optin: usize,
) -> CompileResult {
    tokio::task::spawn_blocking(move || compile_ahead(&job, &inst, arch, optin))
        .await
        .unwrap_or_else(|e| Err(format!("compile task failed: {e}")))
}
