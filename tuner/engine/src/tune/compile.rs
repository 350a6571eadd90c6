//! Compiling ahead of the GPU. NVRTC takes about as long as a measurement, so a GPU that
//! waited for each kernel would idle half the time. Two sources of work keep the CPU cores
//! compiling while the worker measures:
//!
//! - the batch a strategy hands over (hill climbing's neighbourhood, exhaustive's next points):
//!   every kernel of the batch is queued at once;
//! - speculation: after each evaluation, the kernels of the incumbent's neighbours (where a
//!   local search looks next) are queued, at most one compile per spare core at a time.
//!
//! Each kernel is compiled once (keyed by its [`Variant`]); a trial that needs a kernel
//! waits only for its own, and compiles it itself, without queueing, when nothing has started
//! it. Results land in the shared disk cache, where the worker finds them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use kernels::{CacheStatus, KernelCache, Variant};
use solvers::gpu::CompileTarget;
use tokio::sync::{OnceCell, Semaphore};

/// Compile seconds and cache status, or the compile error.
pub type CompileResult = Result<(f64, CacheStatus), String>;

type Cell = Arc<OnceCell<CompileResult>>;

/// Compiles kernel variants into the disk cache, each once: the pool is keyed by the variant
/// itself (source, defines, options, architecture), which is what the CUBIN depends on.
pub struct CompilePool {
    runtime: tokio::runtime::Runtime,
    limit: Arc<Semaphore>,
    cells: HashMap<Variant, Cell>,
    target: CompileTarget,
    cache_dir: PathBuf,
}

impl CompilePool {
    pub fn new(target: CompileTarget, cache_dir: PathBuf) -> anyhow::Result<CompilePool> {
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
            target,
            cache_dir,
        })
    }

    /// What the kernels are compiled for (the campaign's devices).
    pub fn target(&self) -> CompileTarget {
        self.target
    }

    /// Whether the kernel was queued or compiled already.
    pub fn knows(&self, variant: &Variant) -> bool {
        self.cells.contains_key(variant)
    }

    /// Queues a compile (no-op when the kernel is known).
    pub fn queue(&mut self, variant: Variant) {
        if self.cells.contains_key(&variant) {
            return;
        }
        let cell: Cell = Arc::new(OnceCell::new());
        self.cells.insert(variant.clone(), cell.clone());
        let (limit, dir) = (self.limit.clone(), self.cache_dir.clone());
        self.runtime.spawn(async move {
            // The permit first: a queued compile must not hold the cell, or a trial that needs
            // the kernel now would wait behind the whole queue.
            let Ok(_permit) = limit.acquire_owned().await else {
                return;
            };
            cell.get_or_init(|| compile(variant, dir)).await;
        });
    }

    /// The kernel's compile result, compiling it now if nobody has started.
    pub fn wait(&mut self, variant: Variant) -> CompileResult {
        let cell = self.cells.entry(variant.clone()).or_default().clone();
        let dir = self.cache_dir.clone();
        self.runtime
            .block_on(cell.get_or_init(|| compile(variant, dir)))
            .clone()
    }
}

async fn compile(variant: Variant, dir: PathBuf) -> CompileResult {
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let (_, status) = KernelCache::new(dir)
            .get_or_compile(&variant)
            .map_err(|e| e.to_string())?;
        Ok((started.elapsed().as_secs_f64(), status))
    })
    .await
    .unwrap_or_else(|e| Err(format!("compile task failed: {e}")))
}
