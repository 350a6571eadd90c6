//! QAP on the GPU: the host side of the five CUDA variants in `kernels/qap/`.
//!
//! The driver validates the configuration against the instance and the device, compiles the
//! variant specialised to n (`QAP_N`, through the kernel cache), uploads the matrices as
//! int32, launches, reads back the best solution and its cost, and counts the work done
//! (scans, moves evaluated) and the kernel time (CUDA events). Callers re-score the solution
//! on the CPU; tests compare against the CPU reference solvers.
//!
//! | variant | work unit | parameters (valid range) |
//! |---|---|---|
//! | `2opt` | thread per solution | solutions 32..2^20, threads per block 32..1024 (multiple of 32, divides solutions), iterations (scans; default: to the local optimum) |
//! | `2opt-shared` | thread per solution, matrices in shared memory | as `2opt`; needs 8 n^2 bytes of shared memory per block (n <= 170 on H100) |
//! | `2opt-dyn` | parent thread per solution, child grid per scan | as `2opt`, plus child threads 32..1024 (chunks per neighbourhood) |
//! | `tabu` | thread per solution | as `2opt`, tenure 1..n (default n/4), iterations (default 100 n) |
//! | `rots-block` | block per solution | solutions = blocks 1..65535 (default 132), threads per block 32..1024 (default 512), iterations per solution (default 1000 n), tenure factors (0.4, 0.8), aspiration factor (0 = off, the default), at most 10 n iterations per launch (0 = ~0.1 s), restart after 5 launches without improvement (0 = never) from the block's own best with 0.25 n random swaps; kernel `qap_rots_block_fast` (all state in shared memory, symmetric specialisation, int32 deltas where 16 (n + 4) max|a| max|b| < 2^31) where w P + 16 h n + 2 w h n + 4 m n^2 + 8 n bytes (w = 4 or 8 per delta; h, m = 1, 3 symmetric, else 2, 5) fit, each thread owns <= 32 pairs and deltas stay below 2^45, else `qap_rots_block` (tabu matrix in global memory); `rots_shared = false` forces the latter |
//!
//! A time limit repeats launches: new starts for the thread-per-solution variants (the best of
//! all rounds is kept), continued trajectories for `rots-block`.

use std::time::{Duration, Instant};

use cudarc::driver::sys::{CUfunction_attribute, CUlimit};
use cudarc::driver::{CudaSlice, PushKernelArg};
use kernels::gpu::{DeviceInfo, FunctionAttributes, Gpu, Kernel, KernelClock, Launch};
use kernels::{CacheStatus, KernelCache, KernelError, Resources, Variant};

use super::Instance;
use crate::gpu::{CompileTarget, PointValues};
use crate::run::{Outcome, RunOptions};

/// The GPU variants; serialized by name (`"rots-block"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum GpuAlgorithm {
    TwoOpt,
    TwoOptShared,
    TwoOptDyn,
    Tabu,
    RotsBlock,
}

impl GpuAlgorithm {
    pub const ALL: [GpuAlgorithm; 5] = [
        GpuAlgorithm::TwoOpt,
        GpuAlgorithm::TwoOptShared,
        GpuAlgorithm::TwoOptDyn,
        GpuAlgorithm::Tabu,
        GpuAlgorithm::RotsBlock,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GpuAlgorithm::TwoOpt => "2opt",
            GpuAlgorithm::TwoOptShared => "2opt-shared",
            GpuAlgorithm::TwoOptDyn => "2opt-dyn",
            GpuAlgorithm::Tabu => "tabu",
            GpuAlgorithm::RotsBlock => "rots-block",
        }
    }

    pub fn from_name(name: &str) -> Result<GpuAlgorithm, String> {
        GpuAlgorithm::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = GpuAlgorithm::ALL.iter().map(|a| a.name()).collect();
                format!(
                    "unknown qap GPU algorithm {name:?}; known: {}",
                    names.join(", ")
                )
            })
    }

    /// The kernel source id.
    pub fn source(self) -> String {
        format!("qap/{}", self.name())
    }

    /// One thread (rather than one block) per solution.
    pub fn thread_per_solution(self) -> bool {
        self != GpuAlgorithm::RotsBlock
    }
}

impl TryFrom<String> for GpuAlgorithm {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        GpuAlgorithm::from_name(&name)
    }
}

impl From<GpuAlgorithm> for String {
    fn from(a: GpuAlgorithm) -> String {
        a.name().to_string()
    }
}

/// How to run a GPU variant. The one typed form of a configuration: the CLI, the tuner's
/// points, the worker's jobs and tuned bundles all become this.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuParams {
    pub algorithm: GpuAlgorithm,
    /// Start solutions per launch (blocks for `rots-block`).
    pub solutions: u32,
    pub threads_per_block: u32,
    /// Scans (2-opt), iterations (tabu) or iterations per solution (rots-block); `None` is the
    /// variant's default. The CLI's `--iterations` overrides it.
    pub iterations: Option<u32>,
    /// `tabu`: tenure in iterations (default n/4).
    pub tenure: Option<u32>,
    /// `2opt-dyn`: threads of each child grid.
    pub child_threads: u32,
    /// `rots-block`: tenure range and long-term aspiration as factors of n and n^2 (aspiration
    /// 0 = off). Taillard's Ro-TS takes [0.9 n, 1.1 n] and 2 n^2; with restarts (below) a
    /// shorter tenure and no long-term aspiration do better. Measured on the H100, 10 s,
    /// tai80a/tai100a, seeds 1-3, mean gap: 0.9-1.1 n with aspiration 2 n^2 0.50/0.46%;
    /// aspiration 1 n^2 1.77/1.72%; 5, 10, 30 n^2 or off (identical: restarts come first)
    /// 0.47/0.45%; off with 0.6-1.0 n 0.49/0.44%, 0.5-0.7 n 0.44/0.38%, 0.4-0.8 n 0.40/0.38%,
    /// 0.3-0.6 n 0.47/0.41%, 0.2-0.5 n 0.39/0.38%; 1.0-1.4 n (aspiration 2 n^2) 0.54/0.54%.
    pub tenure_min_factor: f64,
    pub tenure_max_factor: f64,
    pub aspiration_factor: f64,
    /// `rots-block`: restart a block whose best has not improved for this many launches
    /// (~0.1 s each) from a perturbed copy of its own best; 0 never restarts.
    pub restart_stall: u32,
    /// `rots-block`: random swaps applied to that copy, as a factor of n.
    pub perturbation: f64,
    /// `rots-block`: at most this many iterations per launch, as a factor of n (0 = no cap;
    /// launches otherwise last ~0.1 s). The restart test runs between launches, so this sets
    /// how long a block may stagnate (`restart_stall` launches) in iterations rather than time.
    pub launch_iterations: u32,
    /// `rots-block`: use `qap_rots_block_fast` (all per-block state in shared memory) where it
    /// fits; `false` forces the kernel that keeps the tabu matrix and the matrices in global
    /// memory (the same search, slower; tests compare the two).
    pub rots_shared: bool,
    /// Extra NVRTC/ptxas flags (e.g. `-maxrregcount=32`, `--ptxas-options=-O2`).
    pub flags: Vec<String>,
}

/// Which rots-block kernel runs and how it is specialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RotsKernel {
    /// `qap_rots_block`: delta matrix in shared memory, the rest in global memory.
    Global,
    /// `qap_rots_block_fast`: everything in shared memory; `symmetric` (both matrices) halves
    /// the delta work and the matrices stored; `narrow` keeps deltas in int32.
    Shared { symmetric: bool, narrow: bool },
}

/// Shared memory of `qap_rots_block_fast` (mirrors the layout in kernels/qap/rots-block.cu).
pub fn rots_fast_shared_bytes(n: usize, symmetric: bool, narrow: bool) -> usize {
    let pairs = n * (n - 1) / 2;
    let (halves, matrices) = if symmetric { (1, 3) } else { (2, 5) };
    let (width, padded) = if narrow {
        (4, pairs.next_multiple_of(4))
    } else {
        (8, pairs.next_multiple_of(2))
    };
    width * padded + 16 * halves * n + 2 * width * halves * n + 4 * matrices * n * n + 8 * n
}

/// A bound on every delta and partial sum `qap_rots_block_fast` forms: each term of a swap
/// delta is a product of two entry differences (at most 4 max|a| max|b|), at most 2 (n + 1) of
/// them, and the O(1) update adds 8 more; 16 (n + 4) max|a| max|b| covers them all.
pub fn rots_delta_bound(inst: &Instance) -> u128 {
    let max_abs = |m: &[i64]| m.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0) as u128;
    16 * (inst.n() as u128 + 4) * max_abs(inst.a_matrix()) * max_abs(inst.b_matrix())
}

fn symmetric(m: &[i64], n: usize) -> bool {
    (0..n).all(|i| (i + 1..n).all(|j| m[i * n + j] == m[j * n + i]))
}

impl GpuParams {
    /// Defaults that keep an H100 busy: 16384 solutions (the top of the paper's range) in
    /// blocks of 128 threads, or for `rots-block` 132 blocks (one per SM: at n = 100 the
    /// shared-memory kernel takes 165 KB per block) of 512 threads.
    pub fn new(algorithm: GpuAlgorithm) -> GpuParams {
        let rots = algorithm == GpuAlgorithm::RotsBlock;
        GpuParams {
            algorithm,
            solutions: if rots { 132 } else { 16384 },
            threads_per_block: if rots { 512 } else { 128 },
            iterations: None,
            tenure: None,
            child_threads: 64,
            tenure_min_factor: 0.4,
            tenure_max_factor: 0.8,
            aspiration_factor: 0.0,
            restart_stall: 5,
            perturbation: 0.25,
            rots_shared: true,
            launch_iterations: 10,
            flags: Vec::new(),
        }
    }

    /// The rots-block kernel for an instance, given the device's opt-in shared memory per
    /// block: the shared-memory one where its layout fits, each thread owns at most 32 pairs
    /// (kept in registers), n <= 256 (a pair packs into 16 bits) and deltas stay below 2^45
    /// (a move packs into one 64-bit key); int32 deltas where they provably fit.
    pub fn rots_kernel(&self, inst: &Instance, optin_shared: usize) -> RotsKernel {
        let n = inst.n();
        let sym = symmetric(inst.a_matrix(), n) && symmetric(inst.b_matrix(), n);
        let per_thread = (n * (n - 1) / 2).div_ceil(self.threads_per_block.max(1) as usize);
        let bound = rots_delta_bound(inst);
        let narrow = bound < 1 << 31;
        // 1 KiB of static shared memory (warp minima, costs) beside the dynamic part.
        if self.rots_shared
            && n <= 256
            && per_thread <= 32
            && bound < 1 << 45
            && rots_fast_shared_bytes(n, sym, narrow) + 1024 <= optin_shared
        {
            RotsKernel::Shared {
                symmetric: sym,
                narrow,
            }
        } else {
            RotsKernel::Global
        }
    }

    /// The variant for an architecture and its opt-in shared memory per block, without a
    /// device (the tuner compiles ahead of the GPU, and exports build bundles).
    pub fn variant_for(
        &self,
        inst: &Instance,
        arch: kernels::Arch,
        optin_shared: usize,
    ) -> Variant {
        let n = inst.n();
        let mut v = Variant::new(&self.algorithm.source(), arch).define("QAP_N", n);
        if self.algorithm == GpuAlgorithm::TwoOptDyn {
            v = v.define("DYN_CHILD_THREADS", self.child_threads);
        }
        if self.algorithm == GpuAlgorithm::RotsBlock {
            if let RotsKernel::Shared { symmetric, narrow } = self.rots_kernel(inst, optin_shared) {
                v = v
                    .define("ROTS_THREADS", self.threads_per_block)
                    .define("QAP_SYM", u32::from(symmetric))
                    .define("QAP_DELTA32", u32::from(narrow));
            }
        }
        self.flags.iter().fold(v, |v, f| v.flag(f))
    }

    /// Checks the configuration against the instance and the device; the message names the
    /// parameter.
    pub fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        let n = inst.n();
        let name = self.algorithm.name();
        if n < 2 {
            return Err(format!("{name} needs n >= 2 (n = {n})"));
        }
        if n > 256 {
            return Err(format!(
                "{name} supports n <= 256 (the largest QAPLIB size), got n = {n}"
            ));
        }
        let t = self.threads_per_block;
        if t == 0 || t % 32 != 0 || t > 1024 {
            return Err(format!(
                "threads per block must be a multiple of 32 in 32..=1024, got {t}"
            ));
        }
        if self.algorithm.thread_per_solution() {
            if self.solutions == 0 || self.solutions > 1 << 20 {
                return Err(format!(
                    "solutions must be in 1..=1048576, got {}",
                    self.solutions
                ));
            }
            if self.solutions % t != 0 {
                return Err(format!(
                    "solutions ({}) must be divisible by threads per block ({t})",
                    self.solutions
                ));
            }
        } else if self.solutions == 0 || self.solutions > 65535 {
            return Err(format!(
                "rots-block solutions (blocks) must be in 1..=65535, got {}",
                self.solutions
            ));
        }
        let optin = device.max_shared_bytes_per_block_optin as usize;
        let shared = self.shared_bytes(inst, optin);
        if shared > optin {
            return Err(format!(
                "{name} needs {shared} bytes of shared memory per block for n = {n}, but {} offers {optin}",
                device.name
            ));
        }
        if self.algorithm == GpuAlgorithm::TwoOptDyn {
            let c = self.child_threads;
            if c == 0 || c > 1024 {
                return Err(format!("child threads must be in 1..=1024, got {c}"));
            }
        }
        if let Some(tenure) = self.tenure {
            if tenure == 0 || tenure as usize > n {
                return Err(format!("tenure must be in 1..={n}, got {tenure}"));
            }
        }
        self.check_search()?;
        let fits = |m: &[i64]| m.iter().all(|&x| i32::try_from(x).is_ok());
        if !fits(inst.a_matrix()) || !fits(inst.b_matrix()) {
            return Err(format!(
                "{} has matrix entries outside int32, which the kernels store",
                inst.name
            ));
        }
        Ok(())
    }

    /// The search parameters that need neither an instance nor a GPU (tuned points are
    /// checked with this before anything is compiled).
    pub fn check_search(&self) -> Result<(), String> {
        if !(self.perturbation.is_finite() && self.perturbation >= 0.0 && self.perturbation <= 1.0)
        {
            return Err(format!(
                "perturbation must be in 0..=1 (a factor of n), got {}",
                self.perturbation
            ));
        }
        if !(self.tenure_min_factor.is_finite()
            && self.tenure_max_factor.is_finite()
            && self.tenure_min_factor > 0.0
            && self.tenure_max_factor >= self.tenure_min_factor
            && self.tenure_max_factor <= 16.0)
        {
            return Err(format!(
                "rots-block tenure factors need 0 < min <= max <= 16, got {} and {}",
                self.tenure_min_factor, self.tenure_max_factor
            ));
        }
        if !(self.aspiration_factor.is_finite() && self.aspiration_factor >= 0.0) {
            return Err(format!(
                "rots-block aspiration must be a factor of n^2 >= 0 (0 = off), got {}",
                self.aspiration_factor
            ));
        }
        Ok(())
    }

    /// Dynamic shared memory per block, given the device's opt-in limit (which decides the
    /// rots-block kernel).
    pub fn shared_bytes(&self, inst: &Instance, optin_shared: usize) -> usize {
        let n = inst.n();
        match self.algorithm {
            GpuAlgorithm::TwoOptShared => 8 * n * n,
            GpuAlgorithm::RotsBlock => match self.rots_kernel(inst, optin_shared) {
                RotsKernel::Global => 8 * (n * (n - 1) / 2) + 40 * n,
                RotsKernel::Shared { symmetric, narrow } => {
                    rots_fast_shared_bytes(n, symmetric, narrow)
                }
            },
            _ => 0,
        }
    }
}

impl crate::gpu::GpuWorkload for GpuParams {
    type Instance = Instance;

    /// `variant`, `solutions`, `threads`, and where set `tenure`, `child_threads` and
    /// rots-block's search knobs as `mats solve` takes them (`tenure_min`/`tenure_max` and
    /// `aspiration` as factors of n and n^2, `perturbation`, `restart_stall`,
    /// `launch_iterations`). A run's length is its budget's, never the configuration's.
    fn from_point(point: &dyn PointValues) -> Result<GpuParams, String> {
        if !point.defines().is_empty() {
            return Err("the qap kernels take no #define parameters from a space".into());
        }
        let algorithm = point.variant("qap: 2opt, 2opt-shared, 2opt-dyn, tabu, rots-block")?;
        let mut params = GpuParams::new(GpuAlgorithm::from_name(&algorithm)?);
        params.solutions = point
            .count("solutions")?
            .ok_or("the point has no `solutions` parameter")?;
        params.threads_per_block = point
            .count("threads")?
            .ok_or("the point has no `threads` parameter")?;
        params.tenure = point.count("tenure")?;
        if let Some(c) = point.count("child_threads")? {
            params.child_threads = c;
        }
        if let Some(f) = point.float("tenure_min")? {
            params.tenure_min_factor = f;
        }
        if let Some(f) = point.float("tenure_max")? {
            params.tenure_max_factor = f;
        }
        if let Some(f) = point.float("aspiration")? {
            params.aspiration_factor = f;
        }
        if let Some(f) = point.float("perturbation")? {
            params.perturbation = f;
        }
        if let Some(k) = point.count("restart_stall")? {
            params.restart_stall = k;
        }
        if let Some(k) = point.count("launch_iterations")? {
            params.launch_iterations = k;
        }
        params.check_search()?;
        params.flags = point.flags().to_vec();
        Ok(params)
    }

    fn variant_name(&self) -> &'static str {
        self.algorithm.name()
    }

    fn shape(&self) -> (u32, u32) {
        (self.solutions, self.threads_per_block)
    }

    fn flags(&self) -> &[String] {
        &self.flags
    }

    fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        GpuParams::check(self, inst, device)
    }

    fn kernel_variant(&self, inst: &Instance, target: CompileTarget) -> Variant {
        self.variant_for(inst, target.arch, target.optin_shared)
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        cache: &KernelCache,
        inst: &Instance,
    ) -> Result<Box<dyn crate::gpu::PreparedRun>, KernelError> {
        Ok(Box::new(WithParams {
            prepared: prepare(gpu, cache, inst, self)?,
            params: self.clone(),
        }))
    }
}

/// A preparation and the parameters it runs with.
struct WithParams {
    prepared: Prepared,
    params: GpuParams,
}

impl crate::gpu::PreparedRun for WithParams {
    fn run(&mut self, gpu: &Gpu, options: &RunOptions) -> Result<crate::gpu::GpuRun, KernelError> {
        let run = self.prepared.run(gpu, &self.params, options)?;
        Ok(crate::gpu::GpuRun {
            outcome: run.outcome,
            kernel_seconds: run.kernel_seconds,
            launches: run.launches,
            cache: run.cache,
            compile_seconds: run.compile_seconds,
            resources: run.resources,
            attributes: run.attributes,
            launch: run.launch,
            entry: self.prepared.kernel.entry().to_string(),
        })
    }

    fn launch(&self) -> Launch {
        self.prepared.launch
    }

    fn kernel(&self) -> &Kernel {
        &self.prepared.kernel
    }
}

/// What a GPU run returns besides the outcome.
#[derive(Debug, Clone)]
pub struct GpuRun {
    pub outcome: Outcome,
    /// Sum of the launches' event times.
    pub kernel_seconds: f64,
    pub launches: u32,
    /// Start-solution index of the returned solution (its start is
    /// [`start_permutation`]`(n, seed, index)` for the thread-per-solution variants).
    pub best_index: u64,
    pub cache: CacheStatus,
    pub compile_seconds: f64,
    pub resources: Vec<Resources>,
    pub attributes: FunctionAttributes,
    pub launch: Launch,
}

/// The start permutation the kernels draw for start solution `solution` (a mirror of
/// `qap_start_permutation` in kernels/qap/common.cuh).
pub fn start_permutation(n: usize, seed: u64, solution: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (hash(seed, solution, i as u64) % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

fn hash(seed: u64, stream: u64, counter: u64) -> u64 {
    let mut z = seed
        ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ counter.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn driver(what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> KernelError {
    KernelError::driver(what.to_string())
}

/// Runs a GPU variant on an instance: [`prepare`] then [`Prepared::run`].
pub fn solve(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
    options: &RunOptions,
) -> Result<GpuRun, KernelError> {
    prepare(gpu, cache, inst, params)?.run(gpu, params, options)
}

/// A variant compiled, loaded and given its instance: what repeated runs share (the tuner
/// measures many runs of one configuration and must not pay the compile and upload each time).
pub struct Prepared {
    // Keeps the loaded module (and so the kernels' code) alive.
    _module: kernels::gpu::Module,
    kernel: Kernel,
    child: Option<Kernel>,
    launch: Launch,
    a: CudaSlice<i32>,
    b: CudaSlice<i32>,
    n: usize,
    cache: CacheStatus,
    compile_seconds: f64,
    resources: Vec<Resources>,
}

/// Checks the configuration, compiles (through the cache), loads and uploads the matrices.
pub fn prepare(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
) -> Result<Prepared, KernelError> {
    params
        .check(inst, &gpu.info)
        .map_err(KernelError::InvalidConfig)?;
    let n = inst.n();
    let optin = gpu.info.max_shared_bytes_per_block_optin as usize;
    let rots_kernel = params.rots_kernel(inst, optin);
    let variant = params.variant_for(inst, gpu.info.arch, optin);
    let (compiled, cache_status) = cache.get_or_compile(&variant)?;
    let module = gpu.load(&compiled)?;
    let entry = match params.algorithm {
        GpuAlgorithm::TwoOpt => "qap_2opt",
        GpuAlgorithm::TwoOptShared => "qap_2opt_shared",
        GpuAlgorithm::TwoOptDyn => "qap_2opt_dyn_step",
        GpuAlgorithm::Tabu => "qap_tabu",
        GpuAlgorithm::RotsBlock => match rots_kernel {
            RotsKernel::Global => "qap_rots_block",
            RotsKernel::Shared { .. } => "qap_rots_block_fast",
        },
    };
    let kernel = module.function(entry)?;
    let shared = params.shared_bytes(inst, optin) as u32;
    let launch = if params.algorithm.thread_per_solution() {
        Launch {
            shared_bytes: shared,
            ..Launch::linear(
                params.solutions / params.threads_per_block,
                params.threads_per_block,
            )
        }
    } else {
        Launch {
            shared_bytes: shared,
            ..Launch::linear(params.solutions, params.threads_per_block)
        }
    };
    kernel.check_launch(&launch)?;
    if shared > 48 * 1024 {
        kernel
            .function()
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
            .map_err(driver(&format!(
                "allowing {shared} bytes of shared memory for {}",
                kernel.name
            )))?;
    }
    let child = if params.algorithm == GpuAlgorithm::TwoOptDyn {
        let child = module.function("qap_2opt_dyn_child")?;
        child.check_launch(&Launch::linear(1, params.child_threads))?;
        Some(child)
    } else {
        None
    };
    let stream = gpu.stream().clone();
    let to_i32 = |m: &[i64]| m.iter().map(|&x| x as i32).collect::<Vec<i32>>();
    let a = stream
        .clone_htod(&to_i32(inst.a_matrix()))
        .map_err(driver("uploading A"))?;
    let b = stream
        .clone_htod(&to_i32(inst.b_matrix()))
        .map_err(driver("uploading B"))?;
    Ok(Prepared {
        _module: module,
        kernel,
        child,
        launch,
        a,
        b,
        n,
        cache: cache_status,
        compile_seconds: compiled.compile_seconds,
        resources: compiled.resources.clone(),
    })
}

impl Prepared {
    /// The kernel's launch configuration.
    pub fn launch(&self) -> Launch {
        self.launch
    }

    /// The main kernel (registers, local memory).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// One run from the start solutions `options.seed` draws; `params` must be the ones
    /// this was prepared with.
    pub fn run(
        &self,
        gpu: &Gpu,
        params: &GpuParams,
        options: &RunOptions,
    ) -> Result<GpuRun, KernelError> {
        let mut ctx = RunContext {
            gpu,
            kernel: &self.kernel,
            launch: self.launch,
            a: &self.a,
            b: &self.b,
            n: self.n,
            seed: options.seed,
            deadline: options
                .budget
                .time_limit
                .and_then(|limit| Instant::now().checked_add(limit)),
            started: Instant::now(),
            target: options.budget.target.clone(),
            clock: KernelClock::new(gpu)?,
        };
        let (outcome, best_index) = match (params.algorithm, &self.child) {
            (GpuAlgorithm::TwoOpt | GpuAlgorithm::TwoOptShared | GpuAlgorithm::Tabu, _) => {
                thread_per_solution(&mut ctx, params, options)?
            }
            (GpuAlgorithm::TwoOptDyn, Some(_)) => dynamic(&mut ctx, params, options)?,
            (GpuAlgorithm::TwoOptDyn, None) => {
                return Err(KernelError::InvalidConfig(
                    "2opt-dyn run on a preparation of another variant".into(),
                ))
            }
            (GpuAlgorithm::RotsBlock, _) => rots_block(&mut ctx, params, options)?,
        };
        Ok(GpuRun {
            outcome,
            kernel_seconds: ctx.clock.seconds,
            launches: u32::try_from(ctx.clock.launches).unwrap_or(u32::MAX),
            best_index,
            cache: self.cache,
            compile_seconds: self.compile_seconds,
            resources: self.resources.clone(),
            attributes: self.kernel.attributes,
            launch: self.launch,
        })
    }
}

struct RunContext<'a> {
    gpu: &'a Gpu,
    kernel: &'a Kernel,
    launch: Launch,
    a: &'a CudaSlice<i32>,
    b: &'a CudaSlice<i32>,
    n: usize,
    seed: u64,
    deadline: Option<Instant>,
    started: Instant,
    /// Time-to-target runs stop once the best cost reaches it.
    target: Option<crate::run::Target>,
    clock: KernelClock,
}

impl RunContext<'_> {
    fn timed_out(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Records the best cost so far; true once the run's target is reached.
    fn offer(&self, cost: i64) -> bool {
        self.target
            .as_ref()
            .is_some_and(|t| t.offer(cost, self.started.elapsed()))
    }

    /// Launches with events around it and adds the kernel time (synchronises).
    fn timed<F>(&mut self, what: &str, enqueue: F) -> Result<(), KernelError>
    where
        F: FnOnce(&Self) -> Result<(), KernelError>,
    {
        self.clock.start(self.gpu)?;
        enqueue(self)?;
        let what = format!("{what} of {} ({})", self.kernel.name, self.launch);
        self.clock.stop(self.gpu, &what, 1)
    }

    /// The best (cost, index) of a cost array; ties go to the lower index.
    fn best_of(costs: &[i64]) -> (i64, usize) {
        costs
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i))
            .min()
            .expect("at least one solution")
    }

    fn read_perm(&self, perms: &CudaSlice<i32>, index: usize) -> Result<Vec<usize>, KernelError> {
        let row = self
            .gpu
            .stream()
            .clone_dtoh(&perms.slice(index * self.n..(index + 1) * self.n))
            .map_err(driver("reading a permutation"))?;
        Ok(row.into_iter().map(|v| v.max(0) as usize).collect())
    }
}

fn pairs(n: usize) -> u64 {
    (n * (n - 1) / 2) as u64
}

/// Rounds of p new starts (the 2-opt variants and tabu): the best solution over all rounds and
/// the scans done. Without a time limit one round is the run; with one, rounds follow until
/// it is spent.
struct Rounds {
    p: usize,
    round: u64,
    scans: u64,
    /// (cost, start index, permutation)
    best: Option<(i64, u64, Vec<usize>)>,
}

impl Rounds {
    fn new(p: usize) -> Rounds {
        Rounds {
            p,
            round: 0,
            scans: 0,
            best: None,
        }
    }

    /// The first start index of the next round.
    fn first(&self) -> i32 {
        (self.round * self.p as u64) as i32
    }

    /// Reads a finished round's costs and scan counts, keeps its best solution if it is better;
    /// true when the run ends (target reached, no time limit, the time spent, or start indices
    /// about to leave i32).
    fn finish(
        &mut self,
        ctx: &RunContext,
        costs: &CudaSlice<i64>,
        scans: &CudaSlice<i32>,
        perms: &CudaSlice<i32>,
    ) -> Result<bool, KernelError> {
        let stream = ctx.gpu.stream();
        let host_costs = stream.clone_dtoh(costs).map_err(driver("reading costs"))?;
        let host_scans = stream
            .clone_dtoh(scans)
            .map_err(driver("reading scan counts"))?;
        self.scans += host_scans.iter().map(|&s| s.max(0) as u64).sum::<u64>();
        let (cost, index) = RunContext::best_of(&host_costs);
        if self.best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
            let start = self.round * self.p as u64 + index as u64;
            self.best = Some((cost, start, ctx.read_perm(perms, index)?));
        }
        self.round += 1;
        let reached = self.best.as_ref().is_some_and(|(c, _, _)| ctx.offer(*c));
        Ok(reached
            || ctx.deadline.is_none()
            || ctx.timed_out()
            || (self.round + 1) * self.p as u64 > i32::MAX as u64)
    }

    fn outcome(self, n: usize) -> (Outcome, u64) {
        let (objective, index, solution) = self.best.expect("at least one round");
        (
            Outcome {
                solution,
                objective,
                iterations: self.scans,
                evaluations: self.scans * pairs(n),
            },
            index,
        )
    }
}

fn thread_per_solution(
    ctx: &mut RunContext,
    params: &GpuParams,
    options: &RunOptions,
) -> Result<(Outcome, u64), KernelError> {
    let p = params.solutions as usize;
    let n = ctx.n;
    let stream = ctx.gpu.stream().clone();
    let mut perms = stream
        .alloc_zeros::<i32>(p * n)
        .map_err(driver("allocating permutations"))?;
    let mut costs = stream
        .alloc_zeros::<i64>(p)
        .map_err(driver("allocating costs"))?;
    let mut scans = stream
        .alloc_zeros::<i32>(p)
        .map_err(driver("allocating scan counts"))?;
    let is_tabu = params.algorithm == GpuAlgorithm::Tabu;
    let budget = options
        .budget
        .iterations
        .map(|i| i.min(i32::MAX as u64) as i32)
        .or(params.iterations.map(|i| i as i32))
        .unwrap_or(if is_tabu { 100 * n as i32 } else { i32::MAX });
    let full_budget = budget;
    let tenure = params.tenure.unwrap_or((n as u32 / 4).max(1)) as i32;
    let solutions = p as i32;
    let mut rounds = Rounds::new(p);
    // A tabu round cannot stop inside its launch, so under a time limit its length follows
    // the clock: a first round of one iteration measures the time per iteration (an
    // overestimate: it carries the start's cost), and each next round gets what fits in 80%
    // of the time left (at most the full budget). One tabu iteration of 1024 solutions at
    // n = 40 takes ~2.7 ms on an H100, so a fixed first round of 10 n overran 0.4 s.
    let timed_tabu = is_tabu && ctx.deadline.is_some();
    let mut round_budget = if timed_tabu { 1 } else { budget };
    loop {
        let first = rounds.first();
        let kernel_before = ctx.clock.seconds;
        let budget = round_budget;
        ctx.timed("running", |c| {
            let mut builder = stream.launch_builder(c.kernel.function());
            builder
                .arg(c.a)
                .arg(c.b)
                .arg(&solutions)
                .arg(&c.seed)
                .arg(&first)
                .arg(&budget);
            if is_tabu {
                builder.arg(&tenure);
            }
            builder.arg(&mut perms).arg(&mut costs).arg(&mut scans);
            // SAFETY: the arguments match the kernel's signature; buffers hold p and p * n items.
            unsafe { builder.launch(c.launch.config()) }
                .map(|_| ())
                .map_err(c.kernel.launch_error(&c.launch))
        })?;
        let stop = rounds.finish(ctx, &costs, &scans, &perms)?;
        if let (true, Some(deadline)) = (timed_tabu, ctx.deadline) {
            let per_iteration = (ctx.clock.seconds - kernel_before) / f64::from(budget.max(1));
            let left = deadline
                .saturating_duration_since(Instant::now())
                .as_secs_f64();
            round_budget = if per_iteration > 0.0 {
                (0.8 * left / per_iteration).clamp(1.0, f64::from(round_budget.max(1)) * 1e3) as i32
            } else {
                round_budget
            }
            .min(full_budget);
        }
        if stop {
            break;
        }
    }
    Ok(rounds.outcome(n))
}

fn dynamic(
    ctx: &mut RunContext,
    params: &GpuParams,
    options: &RunOptions,
) -> Result<(Outcome, u64), KernelError> {
    let p = params.solutions as usize;
    let n = ctx.n;
    let ct = params.child_threads as usize;
    // Every parent may have a child pending at once.
    ctx.gpu
        .context()
        .set_limit(
            CUlimit::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
            (p + 64).max(2048),
        )
        .map_err(driver("raising the pending-launch limit"))?;
    let stream = ctx.gpu.stream().clone();
    let alloc_i32 = |len: usize| {
        stream
            .alloc_zeros::<i32>(len)
            .map_err(driver("allocating 2opt-dyn state"))
    };
    let mut perms = alloc_i32(p * n)?;
    let mut scans = alloc_i32(p)?;
    let mut active = alloc_i32(p)?;
    let mut child_pair = alloc_i32(p * ct)?;
    let mut launched = alloc_i32(1)?;
    let mut costs = stream
        .alloc_zeros::<i64>(p)
        .map_err(driver("allocating costs"))?;
    let mut child_delta = stream
        .alloc_zeros::<i64>(p * ct)
        .map_err(driver("allocating child results"))?;
    let max_scans = options
        .budget
        .iterations
        .map(|i| i.min(i32::MAX as u64 - 1) as i32)
        .or(params.iterations.map(|i| i as i32))
        .unwrap_or(i32::MAX - 1);
    let solutions = p as i32;
    let mut rounds = Rounds::new(p);
    // Rounds of p new starts (step 0 of a round draws them): without a time limit one round
    // is the run; with one, rounds follow until it is spent, as for the other 2-opt variants.
    loop {
        let first = rounds.first();
        let mut step = 0i32;
        // Once the time is up, one more step applies what the last children found.
        let mut time_up = false;
        loop {
            let launch_children = i32::from(step < max_scans && !time_up);
            if step % 8 == 1 {
                stream
                    .memset_zeros(&mut launched)
                    .map_err(driver("clearing the launch counter"))?;
            }
            ctx.timed("a 2opt-dyn step", |c| {
                let mut builder = stream.launch_builder(c.kernel.function());
                builder
                    .arg(c.a)
                    .arg(c.b)
                    .arg(&solutions)
                    .arg(&c.seed)
                    .arg(&first)
                    .arg(&step)
                    .arg(&launch_children)
                    .arg(&mut perms)
                    .arg(&mut costs)
                    .arg(&mut scans)
                    .arg(&mut active)
                    .arg(&mut child_delta)
                    .arg(&mut child_pair)
                    .arg(&mut launched);
                // SAFETY: matches qap_2opt_dyn_step; every buffer is sized for p solutions.
                unsafe { builder.launch(c.launch.config()) }
                    .map(|_| ())
                    .map_err(c.kernel.launch_error(&c.launch))
            })?;
            if launch_children == 0 {
                break;
            }
            // Every 8 steps: if no parent launched a child since the counter was cleared,
            // every solution is at its local optimum and the last results are applied.
            if step % 8 == 0 && step > 0 {
                let count = stream
                    .clone_dtoh(&launched)
                    .map_err(driver("reading the launch counter"))?;
                if count[0] == 0 {
                    break;
                }
            }
            time_up = ctx.timed_out();
            step += 1;
        }
        if rounds.finish(ctx, &costs, &scans, &perms)? {
            break;
        }
    }
    Ok(rounds.outcome(n))
}

fn rots_block(
    ctx: &mut RunContext,
    params: &GpuParams,
    options: &RunOptions,
) -> Result<(Outcome, u64), KernelError> {
    let p = params.solutions as usize;
    let n = ctx.n;
    let stream = ctx.gpu.stream().clone();
    let alloc_i32 = |len: usize| {
        stream
            .alloc_zeros::<i32>(len)
            .map_err(driver("allocating rots-block state"))
    };
    let alloc_i64 = |len: usize| {
        stream
            .alloc_zeros::<i64>(len)
            .map_err(driver("allocating rots-block state"))
    };
    let mut perms = alloc_i32(p * n)?;
    let mut best_perms = alloc_i32(p * n)?;
    let mut tabu = alloc_i32(p * n * n)?;
    let mut done = alloc_i32(p)?;
    let mut costs = alloc_i64(p)?;
    let mut best_costs = alloc_i64(p)?;
    let mut deltas = alloc_i64(p * n * (n - 1) / 2)?;
    let total = options
        .budget
        .iterations
        .or(params.iterations.map(u64::from))
        .unwrap_or(if options.budget.time_limit.is_some() {
            u64::MAX
        } else {
            1000 * n as u64
        });
    let tenure_min = ((params.tenure_min_factor * n as f64) as i32).max(1);
    let tenure_max = ((params.tenure_max_factor * n as f64).ceil() as i32).max(tenure_min);
    // Off: a lag no tabu entry ever reaches (counters stay below ROTS_REBASE_ITERATIONS).
    let off = i32::MAX / 2;
    let aspiration = match params.aspiration_factor * (n * n) as f64 {
        f if f <= 0.0 => off,
        f => f.min(off as f64) as i32,
    };
    let first = 0i32;
    // Launch in chunks so a time limit is honoured to within one chunk; the first chunk is
    // short and measures the iteration rate, later ones aim at ~0.1 s.
    let mut chunk: u64 = 64;
    let mut spent = 0u64;
    let mut restarts = Restarts {
        stall: params.restart_stall,
        swaps: (params.perturbation * n as f64).round() as usize,
        best: vec![i64::MAX; p],
        stalled: vec![0; p],
        rng: crate::run::stream_rng(options.seed ^ 0x5eed_e11e, 0),
    };
    let mut since_rebase = 0u64;
    while spent < total {
        let this = chunk.min(total - spent) as i32;
        if needs_rebase(since_rebase, this as u64) {
            rebase(ctx, &mut done)?;
            since_rebase = 0;
        }
        since_rebase += this as u64;
        let before = ctx.clock.seconds;
        ctx.timed("running", |c| {
            let mut builder = stream.launch_builder(c.kernel.function());
            builder
                .arg(c.a)
                .arg(c.b)
                .arg(&c.seed)
                .arg(&first)
                .arg(&this)
                .arg(&tenure_min)
                .arg(&tenure_max)
                .arg(&aspiration)
                .arg(&mut perms)
                .arg(&mut best_perms)
                .arg(&mut costs)
                .arg(&mut best_costs)
                .arg(&mut deltas)
                .arg(&mut tabu)
                .arg(&mut done);
            // SAFETY: matches qap_rots_block; buffers sized for p solutions of size n.
            unsafe { builder.launch(c.launch.config()) }
                .map(|_| ())
                .map_err(c.kernel.launch_error(&c.launch))
        })?;
        spent += this as u64;
        if ctx.target.is_some() {
            let costs = stream
                .clone_dtoh(&best_costs)
                .map_err(driver("reading costs"))?;
            if ctx.offer(costs.iter().copied().min().unwrap_or(i64::MAX)) {
                break;
            }
        }
        if ctx.timed_out() {
            break;
        }
        if params.restart_stall > 0 && p > 1 && spent < total {
            restarts.after_launch(ctx, &best_costs, &best_perms, &mut perms, &mut done)?;
        }
        let seconds = (ctx.clock.seconds - before).max(1e-6);
        let per_iteration = seconds / this as f64;
        let target = match ctx.deadline {
            Some(d) => d
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100)),
            None => Duration::from_millis(100),
        };
        chunk = ((target.as_secs_f64() / per_iteration) as u64).clamp(1, 1 << 24);
        if params.launch_iterations > 0 {
            chunk = chunk.min(u64::from(params.launch_iterations) * n as u64);
        }
    }
    let host_best = stream
        .clone_dtoh(&best_costs)
        .map_err(driver("reading costs"))?;
    let (objective, index) = RunContext::best_of(&host_best);
    Ok((
        Outcome {
            solution: ctx.read_perm(&best_perms, index)?,
            objective,
            iterations: spent * p as u64,
            evaluations: spent * p as u64 * pairs(n),
        },
        index as u64,
    ))
}

/// Iterations a rots-block trajectory may count before its counter is rebased: the kernel keeps
/// iteration numbers (and tabu expiries, up to 2 n past them) in int32, and the "off"
/// aspiration lag (2^30 - 1) must stay out of reach.
pub const ROTS_REBASE_ITERATIONS: u64 = 1 << 29;

/// Whether a launch of `next` more iterations would carry a counter that has run `since`
/// iterations past [`ROTS_REBASE_ITERATIONS`].
pub fn needs_rebase(since: u64, next: u64) -> bool {
    since + next > ROTS_REBASE_ITERATIONS
}

/// Restarts every block's counter (done_iterations = -1) from the permutation it holds: the
/// kernel then rebuilds the tabu matrix and deltas and keeps the block's best, as after a
/// restart, so a run of any length never overflows the kernel's int32 iteration numbers
/// (2^29 iterations: ~45 min at n = 100 on an H100, ~20 min at n = 50).
fn rebase(ctx: &RunContext, done: &mut CudaSlice<i32>) -> Result<(), KernelError> {
    let flags = vec![-1i32; done.len()];
    ctx.gpu
        .stream()
        .memcpy_htod(&flags, done)
        .map_err(driver("rebasing iteration counters"))
}

/// The host side of rots-block's restarts (iterated tabu search per block).
struct Restarts {
    stall: u32,
    swaps: usize,
    best: Vec<i64>,
    stalled: Vec<u32>,
    rng: crate::run::SolverRng,
}

impl Restarts {
    /// Restarts every block whose best has not improved for `stall` launches from its own best
    /// with `swaps` random swaps (iterated tabu search per block); the kernel rebuilds the
    /// delta matrix and tabu list (done_iterations = -1) and keeps the block's best. Measured
    /// on the H100 at 10 s (tai50a/60a/80a/100a) with the global-memory kernel (264 x 256,
    /// ~0.1 s launches): own best with 0.25 n swaps gave 0.30/0.43/0.60/0.62%; 0.5 n gave
    /// 0.35/0.51/0.88/0.83%; the best of all blocks with 0.4 n gave 0.39/0.48/0.82/0.67%, and
    /// without restarts 0.42/0.49/0.91/0.79%. With the shared-memory kernel (132 x 512, 20x
    /// the iterations per block) the stall must be counted in iterations: launches of 10 n
    /// iterations (a restart after 50 n stagnant ones) gave 0.29/0.33-0.42/0.43-0.55/
    /// 0.47-0.54% (two seeds), 40 n gave 0.00-0.36/0.40/0.54-0.60/0.53-0.58%, ~0.1 s
    /// launches (~17000 iterations) 0.23-0.35/0.27-0.50/0.75-0.79/0.68-0.74%. With 10 n
    /// launches, tai80a/tai100a over seeds 1-3: perturbation 0.25 n (default) 0.43-0.55/
    /// 0.47-0.54%, 0.1 n 0.51-0.68/0.54-0.64%, 0.15 n 0.56-0.62/0.54-0.62%, 0.35 n
    /// 0.47-0.57/0.41-0.65%, 0.5 n 0.68-0.70/0.72-0.81%; a stall of 3 launches 0.50-0.52/
    /// 0.44-0.51%, of 10 launches 0.55-0.64/0.52-0.63%. The best block is never restarted.
    /// Restarting instead from one of the K best blocks' bests (where better than the own;
    /// tenure 0.9-1.1 n, aspiration 2 n^2) gave a mean 0.61/0.55% (K = 4) and 0.54/0.55%
    /// (K = 16) against 0.50/0.46% from the own best: the blocks' diversity matters more.
    /// With tenure 0.4-0.8 n and no aspiration, perturbation 0.3 n gave 0.46/0.43%, 0.35 n
    /// 0.43/0.46%, and a stall of 3 launches (0.3 n) 0.46/0.41%, against 0.40/0.38%.
    fn after_launch(
        &mut self,
        ctx: &RunContext,
        best_costs: &CudaSlice<i64>,
        best_perms: &CudaSlice<i32>,
        perms: &mut CudaSlice<i32>,
        done: &mut CudaSlice<i32>,
    ) -> Result<(), KernelError> {
        use rand::Rng;
        let stream = ctx.gpu.stream();
        let costs = stream
            .clone_dtoh(best_costs)
            .map_err(driver("reading costs"))?;
        for (i, &c) in costs.iter().enumerate() {
            if c < self.best[i] {
                self.best[i] = c;
                self.stalled[i] = 0;
            } else {
                self.stalled[i] += 1;
            }
        }
        let (_, best_index) = RunContext::best_of(&costs);
        let stale: Vec<usize> = (0..costs.len())
            .filter(|&i| i != best_index && self.stalled[i] >= self.stall)
            .collect();
        if stale.is_empty() {
            return Ok(());
        }
        let n = ctx.n;
        let own_bests = stream
            .clone_dtoh(best_perms)
            .map_err(driver("reading best permutations"))?;
        let mut host_perms = stream
            .clone_dtoh(perms)
            .map_err(driver("reading permutations"))?;
        let mut host_done = stream
            .clone_dtoh(done)
            .map_err(driver("reading iteration counts"))?;
        for &i in &stale {
            let mut q: Vec<usize> = own_bests[i * n..(i + 1) * n]
                .iter()
                .map(|&v| v.max(0) as usize)
                .collect();
            for _ in 0..self.swaps {
                let x = self.rng.random_range(0..n);
                let y = self.rng.random_range(0..n);
                q.swap(x, y);
            }
            for (slot, &v) in host_perms[i * n..(i + 1) * n].iter_mut().zip(&q) {
                *slot = v as i32;
            }
            host_done[i] = -1;
            self.stalled[i] = 0;
        }
        stream
            .memcpy_htod(&host_perms, perms)
            .map_err(driver("writing restart permutations"))?;
        stream
            .memcpy_htod(&host_done, done)
            .map_err(driver("writing restart flags"))?;
        Ok(())
    }
}
