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
//! | `rots-block` | block per solution | solutions = blocks 1..65535 (default 0: one per SM in the `shared` layout, SMs x resident blocks in the global ones), threads per block 32..1024 (default 512), n <= 512, iterations per solution (default 1000 n), tenure factors (0.4, 0.8), aspiration factor (0 = off, the default), at most 10 n iterations per launch (0 = ~0.1 s), restart after 5 launches without improvement (0 = never) from the block's own best with 0.25 n random swaps; `layout` ([`RotsLayout`], default auto = the first that fits): `shared` = kernel `qap_rots_block_fast` (all state in shared memory, symmetric specialisation, int32 deltas where 16 (n + 4) max|a| max|b| < 2^31, int16 matrices where every entry fits) where w P + 16 h n + 2 w h n + 4 n^2 + e (m - 1) n^2 + 8 n bytes (w = 4 or 8 per delta; h, m = 1, 3 symmetric, else 2, 5; e = 2 or 4 per matrix entry) fit, each thread owns <= 32 pairs and deltas stay below 2^45; `global-tabu` = `qap_rots_block` (deltas in shared memory, 8 n(n-1)/2 + 40 n bytes; tabu matrix and matrices in global memory); `global` = `qap_rots_block` with the deltas in global memory too (40 n bytes; any n); `rots_shared = false` skips `shared` |
//!
//! A time limit repeats launches: new starts for the thread-per-solution variants (the best of
//! all rounds is kept), continued trajectories for `rots-block`.

use std::time::Instant;

use cudarc::driver::CudaSlice;
use kernels::gpu::{DeviceInfo, FunctionAttributes, Gpu, Kernel, KernelClock, Launch};
use kernels::{CacheStatus, KernelCache, KernelError, Resources, Variant};

use super::Instance;
use crate::gpu::workload::{flag, SolveFlag};
use crate::gpu::workload::{CompileTarget, PointValues};

pub mod compare;
mod context;
pub mod crossover;
mod island_blocks;
pub mod relink;
mod rots_block;
mod two_opt;

use crate::run::{Outcome, RunOptions};
use context::RunContext;
pub use island_blocks::IslandBlocks;
use rots_block::rots_block;
pub use rots_block::{needs_rebase, next_perturbation, ROTS_REBASE_ITERATIONS};
use two_opt::{dynamic, thread_per_solution};

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
        crate::gpu::by_name(
            &GpuAlgorithm::ALL,
            name,
            "qap GPU algorithm",
            GpuAlgorithm::name,
        )
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
    /// (~0.1 s each) from a perturbed copy of its own best (or, with crossover, from a child of
    /// two blocks' bests); 0 never restarts. Unset: [`GpuParams::stall_for`] decides.
    #[serde(default)]
    pub restart_stall: Option<u32>,
    /// `rots-block`: random swaps applied to that copy, as a factor of n.
    pub perturbation: f64,
    /// `rots-block`: breakout-style adaptive perturbation: a block that restarts without
    /// having improved since its last restart takes one swap more each time, up to this
    /// factor of n ([`next_perturbation`]); 0 (or <= `perturbation`) keeps the strength fixed,
    /// the default. A space dimension (`perturbation_max`); not yet measured on the GPU.
    #[serde(default)]
    pub perturbation_max: f64,
    /// `rots-block`: restart a stalled block from the best permutation on the swap path from
    /// its own best toward the best block's best, at least `perturbation` n swaps from both
    /// ([`relink::relink`]; path relinking between blocks), where the path is long enough;
    /// else (and when off, the default) from its own best with random swaps. A space
    /// dimension (`relink`, 0/1); not yet measured on the GPU.
    #[serde(default)]
    pub relink: bool,
    /// `rots-block`: restart a stalled block from the uniform-like crossover of its own best
    /// and a partner block's best (binary tournament; [`crossover`]): a memetic algorithm
    /// whose population is the blocks' bests. Where the child equals the own best, random
    /// swaps as without it. `None` (the default) decides per instance
    /// ([`GpuParams::crossover_for`]); a space dimension (`crossover`, 0/1); excludes `relink`.
    /// Bundles written before it existed keep their restarts (`Some(false)`).
    #[serde(default = "crossover_off")]
    pub crossover: Option<bool>,
    /// `rots-block`: race restart configurations across the blocks during the run
    /// (`--adapt`, [`crate::gpu::adapt`]): the blocks start spread over the configured restarts
    /// and seven neighbours (the other restart rule, 0.6x and 1.4x the swaps, half and twice the
    /// tenure range, twice and half the stall), and every round (0.25 s) a quarter of the worst
    /// arm's blocks move to the arm whose blocks' bests improved most. Off by default.
    #[serde(default)]
    pub adapt: bool,
    /// `rots-block`: at most this many iterations per launch, as a factor of n (0 = no cap:
    /// launches then last ~0.1 s under a time limit, [`DEFAULT_LAUNCH_ITERATIONS`] n without
    /// one). The restart test runs between launches, so this sets how long a block may
    /// stagnate (`restart_stall` launches) in iterations rather than time.
    pub launch_iterations: u32,
    /// `rots-block`: use `qap_rots_block_fast` (all per-block state in shared memory) where it
    /// fits; `false` forces the kernel that keeps the tabu matrix and the matrices in global
    /// memory (the same search, slower; tests compare the two).
    pub rots_shared: bool,
    /// `rots-block`: where the block's working set lives ([`RotsLayout`]); `Auto` takes the
    /// fastest that fits the instance and the device. A space dimension (`layout`).
    #[serde(default)]
    pub layout: RotsLayout,
    /// `rots-block`: keep the matrices in int16 in shared memory where every entry fits
    /// (checked per instance; `false` keeps int32).
    #[serde(default = "yes")]
    pub narrow_matrices: bool,
    /// Extra NVRTC/ptxas flags (e.g. `-maxrregcount=32`, `--ptxas-options=-O2`).
    pub flags: Vec<String>,
}

fn yes() -> bool {
    true
}

/// Where a rots-block block keeps its working set (`--layout`, the space's `layout`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum RotsLayout {
    /// The fastest layout that fits: `shared`, else `global-tabu`, else `global`.
    #[default]
    Auto,
    /// `qap_rots_block_fast`: deltas, tabu matrix, A and B (in solution order) in shared memory.
    Shared,
    /// `qap_rots_block`: deltas in shared memory; tabu matrix and matrices in global memory.
    GlobalTabu,
    /// `qap_rots_block` with `QAP_DELTA_GLOBAL`: only the permutations and update terms in
    /// shared memory (40 n bytes); deltas, tabu matrix and matrices in global memory (L2).
    Global,
}

impl RotsLayout {
    pub const ALL: [RotsLayout; 4] = [
        RotsLayout::Auto,
        RotsLayout::Shared,
        RotsLayout::GlobalTabu,
        RotsLayout::Global,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RotsLayout::Auto => "auto",
            RotsLayout::Shared => "shared",
            RotsLayout::GlobalTabu => "global-tabu",
            RotsLayout::Global => "global",
        }
    }

    pub fn from_name(name: &str) -> Result<RotsLayout, String> {
        crate::gpu::by_name(
            &RotsLayout::ALL,
            name,
            "rots-block layout",
            RotsLayout::name,
        )
    }
}

/// Which rots-block kernel runs and how it is specialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RotsKernel {
    /// `qap_rots_block`: tabu matrix and matrices in global memory; the delta matrix in
    /// shared memory (`shared_deltas`, layout `global-tabu`) or in global memory (`global`).
    Global { shared_deltas: bool },
    /// `qap_rots_block_fast`: everything in shared memory; `symmetric` (both matrices) halves
    /// the delta work and the matrices stored; `narrow` keeps deltas in int32; `m16` the
    /// matrices in int16; `min_blocks` resident blocks per SM the shared memory allows (1 or
    /// 2), which bounds the registers.
    Shared {
        symmetric: bool,
        narrow: bool,
        m16: bool,
        min_blocks: u32,
    },
}

impl RotsKernel {
    /// The layout's name, as `--json` and the log report it.
    pub fn layout(self) -> RotsLayout {
        match self {
            RotsKernel::Shared { .. } => RotsLayout::Shared,
            RotsKernel::Global {
                shared_deltas: true,
            } => RotsLayout::GlobalTabu,
            RotsKernel::Global {
                shared_deltas: false,
            } => RotsLayout::Global,
        }
    }

    /// Dynamic shared memory per block of this kernel at size n.
    pub fn shared_bytes(self, n: usize) -> usize {
        match self {
            RotsKernel::Global { shared_deltas } => {
                let deltas = if shared_deltas {
                    8 * (n * (n - 1) / 2)
                } else {
                    0
                };
                deltas + 40 * n
            }
            RotsKernel::Shared {
                symmetric,
                narrow,
                m16,
                ..
            } => rots_fast_shared_bytes(n, symmetric, narrow, m16),
        }
    }
}

/// Shared memory of `qap_rots_block_fast` (mirrors the layout in kernels/qap/rots-block.cu).
pub fn rots_fast_shared_bytes(n: usize, symmetric: bool, narrow: bool, m16: bool) -> usize {
    let pairs = n * (n - 1) / 2;
    let (halves, matrices) = if symmetric { (1, 2) } else { (2, 4) };
    let (width, padded) = if narrow {
        (4, pairs.next_multiple_of(4))
    } else {
        (8, pairs.next_multiple_of(2))
    };
    let entry = if m16 { 2 } else { 4 };
    width * padded
        + 16 * halves * n
        + 2 * width * halves * n
        + 4 * n * n
        + entry * matrices * n * n
        + 8 * n
}

/// The blocks rots-block launches when `solutions` is 0 (the default): one per SM where the
/// whole search lives in shared memory, and every block that is resident at once (the
/// occupancy API's `resident_per_sm`) with the global layouts.
///
/// Why not fill the SMs in the shared layout too: two blocks per SM (int16 matrices at
/// n <= ~100) do 21% more iterations in all, but each trajectory gets 39% fewer, and at 10 s
/// depth wins. Measured on the H100, tai100a, 10 s: 132 blocks 0.395/0.430% (seeds 1/2)
/// against 264 blocks 0.518/0.456% (docs/qap-gpu.md). The global layouts wait on L2, so
/// their extra resident blocks hide latency instead (tai256c: 3 per SM, 0.098% at 60 s).
pub fn rots_default_blocks(sm_count: u32, resident_per_sm: u32, kernel: RotsKernel) -> u32 {
    let per_sm = match kernel {
        RotsKernel::Shared { .. } => 1,
        RotsKernel::Global { .. } => resident_per_sm.max(1),
    };
    (sm_count.max(1) * per_sm).clamp(1, 65535)
}

/// Whether every entry of both matrices fits in int16 (the `QAP_M16` path).
pub fn matrices_fit_i16(inst: &Instance) -> bool {
    let fits = |m: &[i64]| m.iter().all(|&x| i16::try_from(x).is_ok());
    fits(inst.a_matrix()) && fits(inst.b_matrix())
}

/// An upper bound on `qap_rots_block_fast`'s static shared memory (warp minima and costs:
/// 288 bytes on sm_90), which the opt-in limit counts beside the dynamic part.
const ROTS_STATIC_SHARED: usize = 1024;

/// Shared memory the driver reserves per resident block (1 KiB on sm_80 and later).
const DRIVER_SHARED_PER_BLOCK: usize = 1024;

/// Resident blocks of `qap_rots_block_fast` an SM's shared memory allows (1 or 2). An SM has
/// the opt-in per-block limit plus one driver reserve (sm_90: 228 KB = 227 KB opt-in + 1 KB;
/// sm_80: 164 KB = 163 + 1), and every resident block takes its static and dynamic part and a
/// reserve. The kernel is compiled for that many (`__launch_bounds__`), which caps registers.
pub fn rots_blocks_by_shared(dynamic: usize, threads: u32, optin_shared: usize) -> u32 {
    let per_sm = optin_shared + DRIVER_SHARED_PER_BLOCK;
    let per_block = dynamic + ROTS_STATIC_SHARED + DRIVER_SHARED_PER_BLOCK;
    if 2 * per_block <= per_sm && 2 * threads <= 2048 {
        2
    } else {
        1
    }
}

/// A bound on every delta and partial sum `qap_rots_block_fast` forms: each term of a swap
/// delta is a product of two entry differences (at most 4 max|a| max|b|), at most 2 (n + 1) of
/// them, and the O(1) update adds 8 more; 16 (n + 4) max|a| max|b| covers them all.
pub fn rots_delta_bound(inst: &Instance) -> u128 {
    let max_abs = |m: &[i64]| m.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0) as u128;
    16 * (inst.n() as u128 + 4) * max_abs(inst.a_matrix()) * max_abs(inst.b_matrix())
}

impl GpuParams {
    /// Defaults that keep an H100 busy: 16384 solutions (the top of the paper's range) in
    /// blocks of 128 threads, or for `rots-block` blocks of 512 threads, `solutions` 0: one
    /// per SM in the shared layout, as many as are resident in the global ones
    /// ([`rots_default_blocks`]; 132 for tai100a, 396 for tai256c on an H100).
    pub fn new(algorithm: GpuAlgorithm) -> GpuParams {
        let rots = algorithm == GpuAlgorithm::RotsBlock;
        GpuParams {
            algorithm,
            solutions: if rots { 0 } else { 16384 },
            threads_per_block: if rots { 512 } else { 128 },
            iterations: None,
            tenure: None,
            child_threads: 64,
            tenure_min_factor: 0.4,
            tenure_max_factor: 0.8,
            aspiration_factor: 0.0,
            restart_stall: None,
            perturbation: 0.25,
            perturbation_max: 0.0,
            relink: false,
            crossover: None,
            adapt: false,
            rots_shared: true,
            layout: RotsLayout::Auto,
            narrow_matrices: true,
            launch_iterations: DEFAULT_LAUNCH_ITERATIONS as u32,
            flags: Vec::new(),
        }
    }

    /// The rots-block kernel for an instance, given the device's opt-in shared memory per
    /// block: the shared-memory one where its layout fits, each thread owns at most 32 pairs
    /// (kept in registers), n <= 256 (a pair packs into 16 bits) and deltas stay below 2^45
    /// (a move packs into one 64-bit key); int32 deltas where they provably fit.
    ///
    /// A forced layout (`layout` other than `Auto`) is returned even where it does not fit:
    /// `check` then refuses it with the bytes it needs.
    pub fn rots_kernel(&self, inst: &Instance, optin_shared: usize) -> RotsKernel {
        let n = inst.n();
        let sym = inst.is_symmetric();
        let bound = rots_delta_bound(inst);
        let narrow = bound < 1 << 31;
        let m16 = self.narrow_matrices && matrices_fit_i16(inst);
        let dynamic = rots_fast_shared_bytes(n, sym, narrow, m16);
        let shared = RotsKernel::Shared {
            symmetric: sym,
            narrow,
            m16,
            min_blocks: rots_blocks_by_shared(dynamic, self.threads_per_block, optin_shared),
        };
        let tabu = RotsKernel::Global {
            shared_deltas: true,
        };
        match self.layout {
            RotsLayout::Shared => shared,
            RotsLayout::GlobalTabu => tabu,
            RotsLayout::Global => RotsKernel::Global {
                shared_deltas: false,
            },
            RotsLayout::Auto if self.rots_shared && self.fast_possible(inst) => {
                if dynamic + ROTS_STATIC_SHARED <= optin_shared {
                    return shared;
                }
                self.auto_global(n, optin_shared)
            }
            RotsLayout::Auto => self.auto_global(n, optin_shared),
        }
    }

    fn auto_global(&self, n: usize, optin_shared: usize) -> RotsKernel {
        let tabu = RotsKernel::Global {
            shared_deltas: true,
        };
        if tabu.shared_bytes(n) + 1024 <= optin_shared {
            tabu
        } else {
            RotsKernel::Global {
                shared_deltas: false,
            }
        }
    }

    /// What `qap_rots_block_fast` needs besides shared memory: each thread owns at most 32
    /// pairs (kept in registers), n <= 256 (a pair packs into 16 bits) and deltas below 2^45
    /// (a move packs into one 64-bit key).
    fn fast_possible(&self, inst: &Instance) -> bool {
        let n = inst.n();
        let per_thread = (n * (n - 1) / 2).div_ceil(self.threads_per_block.max(1) as usize);
        n <= 256 && per_thread <= 32 && rots_delta_bound(inst) < 1 << 45
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
            match self.rots_kernel(inst, optin_shared) {
                RotsKernel::Shared {
                    symmetric,
                    narrow,
                    m16,
                    min_blocks,
                } => {
                    v = v
                        .define("ROTS_THREADS", self.threads_per_block)
                        .define("QAP_SYM", u32::from(symmetric))
                        .define("QAP_DELTA32", u32::from(narrow));
                    // Defined only where they differ from the kernel's defaults, so the
                    // variants (and cache keys) of earlier configurations stay as they were.
                    if m16 {
                        v = v.define("QAP_M16", 1);
                    }
                    if min_blocks > 1 {
                        v = v.define("ROTS_MIN_BLOCKS", min_blocks);
                    }
                }
                RotsKernel::Global {
                    shared_deltas: false,
                } => v = v.define("QAP_DELTA_GLOBAL", 1),
                RotsKernel::Global {
                    shared_deltas: true,
                } => {}
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
        if self.algorithm == GpuAlgorithm::RotsBlock {
            if n > 512 {
                return Err(format!("{name} supports n <= 512, got n = {n}"));
            }
        } else if n > 256 {
            return Err(format!(
                "{name} supports n <= 256 (the largest QAPLIB size), got n = {n}; rots-block takes up to 512"
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
        } else if self.solutions > 65535 {
            return Err(format!(
                "rots-block solutions (blocks) must be in 1..=65535 (or 0, the default: sized to the GPU), got {}",
                self.solutions
            ));
        } else {
            // Each block's permutations, tabu matrix and deltas live in global memory whatever
            // the layout (the fast one stages them): 65535 blocks at n = 512 asked 137 GB, and
            // the error named the allocation rather than --solutions.
            let (p, n64) = (u64::from(self.solutions), n as u64);
            let bytes = p * (4 * 2 * n64 + 4 * n64 * n64 + 8 * n64 * (n64 - 1) / 2 + 4 + 16);
            if bytes > device.total_memory_bytes / 2 {
                return Err(format!(
                    "rots-block with {} solutions (blocks) at n = {n} needs {:.1} GB of global \
                     memory, more than half of {}'s {:.1} GB; use fewer solutions (--solutions)",
                    self.solutions,
                    bytes as f64 / 1e9,
                    device.name,
                    device.total_memory_bytes as f64 / 1e9
                ));
            }
        }
        if self.algorithm == GpuAlgorithm::RotsBlock {
            let kernel = self.rots_kernel(inst, device.max_shared_bytes_per_block_optin as usize);
            if matches!(kernel, RotsKernel::Shared { .. }) && !self.fast_possible(inst) {
                return Err(format!(
                    "rots-block layout `shared` needs n <= 256, at most 32 pairs per thread and deltas below 2^45 (n = {n}, {} threads)",
                    self.threads_per_block
                ));
            }
        }
        let optin = device.max_shared_bytes_per_block_optin as usize;
        let shared = self.shared_bytes(inst, optin);
        if shared > optin {
            let layout = match self.algorithm {
                GpuAlgorithm::RotsBlock => format!(
                    " in layout `{}` (`--layout global` keeps the deltas in global memory)",
                    self.rots_kernel(inst, optin).layout().name()
                ),
                _ => String::new(),
            };
            return Err(format!(
                "{name} needs {shared} bytes of shared memory per block for n = {n}{layout}, but {} offers {optin}",
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
        // The knobs the CPU's Ro-TS shares, in its order, so both backends name the same one.
        super::tabu::check_tenure(self.tenure_min_factor, self.tenure_max_factor)?;
        super::tabu::check_aspiration(self.aspiration_factor)?;
        super::tabu::check_perturbation(self.perturbation)?;
        if !(self.perturbation_max.is_finite()
            && self.perturbation_max >= 0.0
            && self.perturbation_max <= 1.0)
        {
            return Err(format!(
                "perturbation_max must be in 0..=1 (a factor of n; 0 = fixed perturbation), got {}",
                self.perturbation_max
            ));
        }
        if self.relink && self.crossover == Some(true) {
            return Err(
                "`relink` and `crossover` are two rules for a restart's start; set one of them"
                    .into(),
            );
        }
        Ok(())
    }

    /// Whether rots-block's restarts recombine (`crossover`): as set, else (the default) where
    /// the instance's flow dominance is high (>= 200, [`super::features::DOMINANCE_HIGH`]: Taillard's
    /// tai*b and tai*c, real-life instances) and relinking is off. Measured on the H100 at
    /// 10 s, seeds 1-5: tai150b (dominance 314) 0.323% mean with crossover against 0.506%
    /// with random swaps, tai256c (260) at 60 s 0.074% against 0.115% (seed 1); on the
    /// uniform tai60a/80a/100a (dominance 60) crossover lost (seeds 1-2: 0.34/0.59/0.48%
    /// against 0.23/0.42/0.41%), so they keep random swaps.
    pub fn crossover_for(&self, inst: &Instance) -> bool {
        self.crossover.unwrap_or_else(|| {
            !self.relink && inst.features().dominance >= super::features::DOMINANCE_HIGH
        })
    }

    /// Launches without improvement before rots-block restarts a block: as set, else
    /// [`DEFAULT_RESTART_STALL`] where the restarts perturb a block's own best and
    /// [`CROSSOVER_RESTART_STALL`] where they recombine two blocks' bests. With random swaps the
    /// tai80a/tai100a studies (`scripts/qap-rots-studies.txt`) kept 5; with crossover, tai150b
    /// at 10 s on the H100 (seeds 1-5) gave 0.139% with 3 against 0.215% with 5 (docs/qap-gpu.md):
    /// recombination pays where it runs often, since a child's tabu search is the step that
    /// mixes the population.
    pub fn stall_for(&self, crossover: bool) -> u32 {
        self.restart_stall.unwrap_or(if crossover {
            CROSSOVER_RESTART_STALL
        } else {
            DEFAULT_RESTART_STALL
        })
    }

    /// Dynamic shared memory per block, given the device's opt-in limit (which decides the
    /// rots-block kernel).
    pub fn shared_bytes(&self, inst: &Instance, optin_shared: usize) -> usize {
        let n = inst.n();
        match self.algorithm {
            GpuAlgorithm::TwoOptShared => 8 * n * n,
            GpuAlgorithm::RotsBlock => self.rots_kernel(inst, optin_shared).shared_bytes(n),
            _ => 0,
        }
    }
}

/// rots-block's restart stall where the restarts perturb a block's own best.
pub const DEFAULT_RESTART_STALL: u32 = crate::qap::ROTS_RESTART_STALL;
/// rots-block's restart stall where the restarts recombine two blocks' bests (crossover).
pub const CROSSOVER_RESTART_STALL: u32 = 3;

/// rots-block's launch length in iterations per n: the default cap, and the length of every
/// launch of a run without a time limit where the cap is 0 (so that it is never clocked).
pub const DEFAULT_LAUNCH_ITERATIONS: u64 = crate::qap::ROTS_LAUNCH_ITERATIONS;

fn crossover_off() -> Option<bool> {
    Some(false)
}

/// The flags only rots-block takes.
const ROTS: &[&str] = &["rots-block"];

impl crate::gpu::workload::GpuWorkload for GpuParams {
    const SOLVE_FLAGS: &'static [SolveFlag] = &[
        flag("--algo", &["variant"], &[]),
        flag("--solutions", &["solutions"], &[]),
        flag("--threads", &["threads"], &[]),
        flag("--tenure", &["tenure"], &["tabu"]),
        flag("--child-threads", &["child_threads"], &["2opt-dyn"]),
        flag("--tenure-range", &["tenure_min", "tenure_max"], ROTS),
        flag("--aspiration", &["aspiration"], ROTS),
        flag("--perturbation", &["perturbation"], ROTS),
        flag("--perturbation-max", &["perturbation_max"], ROTS),
        flag("--relink", &["relink"], ROTS),
        flag("--no-relink", &["relink"], ROTS),
        flag("--crossover", &["crossover"], ROTS),
        flag("--adapt", &["adapt"], ROTS),
        flag("--launch-iterations", &["launch_iterations"], ROTS),
        flag("--restart-stall", &["restart_stall"], ROTS),
        flag("--layout", &["layout"], ROTS),
    ];
    const SOLVE_DEFAULTS: &'static [(&'static str, &'static str)] = &[("variant", "rots-block")];

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
        if let Some(s) = point.count("solutions")? {
            params.solutions = s;
        }
        if let Some(t) = point.count("threads")? {
            params.threads_per_block = t;
        }
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
        if let Some(f) = point.float("perturbation_max")? {
            params.perturbation_max = f;
        }
        if let Some(on) = point.switch("relink")? {
            params.relink = on;
        }
        if let Some(on) = point.switch("adapt")? {
            params.adapt = on;
        }
        if point.text("crossover").as_deref() == Some("auto") {
            params.crossover = None;
        } else if let Some(on) = point.switch("crossover")? {
            params.crossover = Some(on);
        }
        // `auto` is what `mats solve` runs: the stall of the restart rule (`stall_for`), so a
        // campaign's baseline can follow the solver's default instead of pinning a number.
        if point.text("restart_stall").as_deref() == Some("auto") {
            params.restart_stall = None;
        } else if let Some(k) = point.count("restart_stall")? {
            params.restart_stall = Some(k);
        }
        if let Some(k) = point.count("launch_iterations")? {
            params.launch_iterations = k;
        }
        if let Some(layout) = point.text("layout") {
            params.layout = RotsLayout::from_name(&layout)?;
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
    ) -> Result<Box<dyn crate::gpu::workload::PreparedRun>, KernelError> {
        Ok(Box::new(WithParams {
            prepared: prepare(gpu, cache, inst, self)?,
            params: self.clone(),
            island: None,
        }))
    }
}

/// A preparation and the parameters it runs with.
struct WithParams {
    prepared: Prepared,
    params: GpuParams,
    /// rots-block as an island (`start_from`): its seeds and the blocks of its last run.
    island: Option<IslandBlocks>,
}

impl crate::gpu::workload::PreparedRun for WithParams {
    fn run(
        &mut self,
        gpu: &Gpu,
        options: &RunOptions,
    ) -> Result<crate::gpu::workload::GpuRun, KernelError> {
        let run = self
            .prepared
            .run_from(gpu, &self.params, options, self.island.as_mut())?;
        Ok(crate::gpu::workload::GpuRun {
            outcome: run.outcome,
            kernel_seconds: run.kernel_seconds,
            launches: run.launches,
            cache: run.cache,
            compile_seconds: run.compile_seconds,
            resources: run.resources,
            attributes: run.attributes,
            launch: run.launch,
            entry: self.prepared.kernel.entry().to_string(),
            layout: self.prepared.rots_kernel.map(|k| {
                let width = match k {
                    RotsKernel::Shared { m16: true, .. } => "int16",
                    _ => "int32",
                };
                let restarts = if self.prepared.crossover {
                    "; crossover restarts"
                } else {
                    ""
                };
                format!("{} ({width} matrices{restarts})", k.layout().name())
            }),
            blocks_per_sm: self.prepared.blocks_per_sm,
            searches: None,
            adaptation: run.adaptation,
        })
    }

    fn launch(&self) -> Launch {
        self.prepared.launch
    }

    fn start_from(&mut self, starts: &[Vec<usize>]) -> bool {
        // The thread-per-solution variants draw every start from a counter-based hash that the
        // CPU mirrors; only rots-block's restart path takes a written permutation.
        if self.params.algorithm != GpuAlgorithm::RotsBlock {
            return false;
        }
        self.island.get_or_insert_default().starts = starts.to_vec();
        true
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
    /// With `adapt`: the restart arms and their blocks at the end.
    pub adaptation: Option<String>,
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
    /// The rots-block kernel and layout chosen (None for the other variants).
    rots_kernel: Option<RotsKernel>,
    blocks_per_sm: Option<u32>,
    /// A host copy of the instance where restarts relink paths on the CPU.
    inst: Option<Instance>,
    /// rots-block's restarts recombine ([`GpuParams::crossover_for`], decided here, where the
    /// instance is known).
    crossover: bool,
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
            RotsKernel::Global { .. } => "qap_rots_block",
            RotsKernel::Shared { .. } => "qap_rots_block_fast",
        },
    };
    let kernel = module.function(entry)?;
    let shared = params.shared_bytes(inst, optin) as u32;
    kernel.allow_shared_bytes(shared as usize)?;
    let launch = if params.algorithm.thread_per_solution() {
        Launch {
            shared_bytes: shared,
            ..Launch::linear(
                params.solutions / params.threads_per_block,
                params.threads_per_block,
            )
        }
    } else {
        let blocks = match params.solutions {
            0 => rots_default_blocks(
                gpu.info.sm_count,
                kernel.blocks_per_sm(params.threads_per_block, shared)?,
                rots_kernel,
            ),
            s => s,
        };
        Launch {
            shared_bytes: shared,
            ..Launch::linear(blocks, params.threads_per_block)
        }
    };
    kernel.check_launch(&launch)?;
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
    // What this launch keeps resident, not only what could be: rots-block's default of one
    // block per SM fits two at n = 100, and reporting 2 there misled.
    let blocks_per_sm = kernel
        .blocks_per_sm(params.threads_per_block, shared)
        .ok()
        .map(|most| most.min(launch.grid.0.div_ceil(gpu.info.sm_count.max(1))));
    Ok(Prepared {
        inst: (params.algorithm == GpuAlgorithm::RotsBlock && params.relink).then(|| inst.clone()),
        crossover: params.algorithm == GpuAlgorithm::RotsBlock && params.crossover_for(inst),
        rots_kernel: (params.algorithm == GpuAlgorithm::RotsBlock).then_some(rots_kernel),
        blocks_per_sm,
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

    /// The rots-block kernel and layout chosen (None for the other variants).
    pub fn rots_kernel(&self) -> Option<RotsKernel> {
        self.rots_kernel
    }

    /// Resident blocks per SM of the main kernel at its launch.
    pub fn blocks_per_sm(&self) -> Option<u32> {
        self.blocks_per_sm
    }

    /// One run from the start solutions `options.seed` draws; `params` must be the ones
    /// this was prepared with.
    pub fn run(
        &self,
        gpu: &Gpu,
        params: &GpuParams,
        options: &RunOptions,
    ) -> Result<GpuRun, KernelError> {
        self.run_from(gpu, params, options, None)
    }

    /// As [`Prepared::run`], for rots-block as an island: its blocks continue from where the
    /// last epoch left them and the first ones start from its seeds (the other variants draw
    /// every start).
    pub fn run_from(
        &self,
        gpu: &Gpu,
        params: &GpuParams,
        options: &RunOptions,
        island: Option<&mut IslandBlocks>,
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
            watch: options.budget.watch(),
            clock: KernelClock::new(gpu)?,
            inst: self.inst.as_ref(),
            crossover: self.crossover,
            adaptation: None,
            island,
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
            adaptation: ctx.adaptation,
        })
    }
}
