//! The family-neutral GPU workload: what the tuner (runner, compile pool, worker, export) and
//! `mats solve --tuned` speak to, whatever the problem family.
//!
//! A family's GPU code lives in its own module (`qap::gpu`, `pfsp::gpu`, ...) and implements
//! [`GpuWorkload`] on its typed parameters: how a point's named values become them, the checks
//! against an instance and a device, the kernel variant to compile, and a prepared state on
//! the GPU that runs one production run under a [`crate::run::Budget`] (iterations, wall time
//! or target) and returns the solution with its work counters ([`GpuRun`]).
//!
//! The registry ([`super::registry`]) closes the set of those parameter types.

use kernels::gpu::{DeviceInfo, FunctionAttributes, Gpu, Kernel, Launch};
use kernels::{Arch, CacheStatus, KernelCache, KernelError, Resources, Variant};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::run::{Outcome, RunOptions};

/// A point's parameters by name (a tuner point, a bundle's manifest).
pub trait PointValues {
    /// An integer value; `None` when absent or `none`/`default`.
    fn int(&self, name: &str) -> Result<Option<i64>, String>;
    /// A number; `None` when absent or `none`/`default`.
    fn float(&self, name: &str) -> Result<Option<f64>, String>;
    fn text(&self, name: &str) -> Option<String>;
    /// Extra NVRTC/ptxas flags.
    fn flags(&self) -> &[String];
    /// `#define`s the point sets.
    fn defines(&self) -> &[(String, String)];
}

impl dyn PointValues + '_ {
    /// A non-negative integer parameter that fits `T`.
    pub fn count<T: TryFrom<i64>>(&self, name: &str) -> Result<Option<T>, String> {
        match self.int(name)? {
            None => Ok(None),
            Some(v) if v < 0 => Err(format!("parameter `{name}` must not be negative: {v}")),
            Some(v) => T::try_from(v)
                .map(Some)
                .map_err(|_| format!("parameter `{name}` is out of range: {v}")),
        }
    }

    /// An on/off parameter (`on`/`off`, `true`/`false`, `1`/`0`).
    pub fn switch(&self, name: &str) -> Result<Option<bool>, String> {
        match self.text(name).as_deref() {
            None => Ok(None),
            Some("on" | "true" | "1") => Ok(Some(true)),
            Some("off" | "false" | "0") => Ok(Some(false)),
            Some(other) => Err(format!(
                "parameter `{name}` takes on or off, found {other:?}"
            )),
        }
    }

    /// The `variant` parameter, which every GPU point names.
    pub fn variant(&self, known: &str) -> Result<String, String> {
        self.text("variant")
            .ok_or_else(|| format!("the point has no `variant` parameter ({known})"))
    }
}

/// What a kernel is compiled for. The tuner compiles ahead of the GPU and an export builds a
/// bundle's kernels for its recorded device, so neither needs the device itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompileTarget {
    pub arch: Arch,
    /// Opt-in shared memory per block: some variants specialise to what fits.
    pub optin_shared: usize,
}

impl From<&DeviceInfo> for CompileTarget {
    fn from(d: &DeviceInfo) -> CompileTarget {
        CompileTarget {
            arch: d.arch,
            optin_shared: d.max_shared_bytes_per_block_optin as usize,
        }
    }
}

/// One production run on the GPU, as every family reports it.
#[derive(Debug, Clone)]
pub struct GpuRun {
    /// Best solution, its objective (computed on the GPU; callers re-score it), iterations
    /// and moves evaluated.
    pub outcome: Outcome,
    /// Sum of the launches' event times.
    pub kernel_seconds: f64,
    pub launches: u32,
    pub cache: CacheStatus,
    pub compile_seconds: f64,
    /// ptxas' report of every function of the module.
    pub resources: Vec<Resources>,
    /// The main kernel's attributes and launch.
    pub attributes: FunctionAttributes,
    pub launch: Launch,
    /// The main kernel's entry point (to pick its line of `resources`).
    pub entry: String,
    /// Where the working set lives, for variants that choose (QAP rots-block: `shared`,
    /// `global-tabu`, `global`), and the matrices' width there (`int16`/`int32`).
    pub layout: Option<String>,
    /// Resident blocks per SM of the main kernel at its launch (the occupancy API).
    pub blocks_per_sm: Option<u32>,
    /// The independent searches the run made, where they are not the launch's blocks (PFSP
    /// ig-grid: walks, each a row of blocks); None: one per block.
    pub searches: Option<u32>,
    /// With `--adapt`: the run-time configurations raced and how the blocks ended up spread.
    pub adaptation: Option<String>,
}

/// A configuration compiled, loaded and given its instance: what repeated runs share.
pub trait PreparedRun {
    /// One production run from `options.seed` under `options.budget`.
    fn run(&mut self, gpu: &Gpu, options: &RunOptions) -> Result<GpuRun, KernelError>;
    /// The main kernel's launch.
    fn launch(&self) -> Launch;
    /// The main kernel.
    fn kernel(&self) -> &Kernel;
    /// Makes the following runs an island's epochs (`gpu::islands`): each continues the
    /// searches the previous run left (blocks, walks, searches or pheromone) and starts its
    /// first searches from `starts` (the exchanged solutions, best first; empty in the first
    /// epoch). False where the variant cannot, which leaves its runs as they are.
    fn start_from(&mut self, starts: &[Vec<usize>]) -> bool {
        let _ = starts;
        false
    }
}

/// A family's typed GPU configuration.
pub trait GpuWorkload:
    Sized + Clone + PartialEq + std::fmt::Debug + Serialize + DeserializeOwned
{
    type Instance;

    /// The configuration a point asks for (`variant`, launch, flags, search parameters); the
    /// message of an error names the parameter. Unset parameters keep their defaults.
    fn from_point(point: &dyn PointValues) -> Result<Self, String>;
    /// The `mats solve` flags this family's GPU solver takes and the point parameters they
    /// set, read by [`super::solve_flags`].
    const SOLVE_FLAGS: &'static [SolveFlag];
    /// The point `mats solve` starts from before its flags: the variant, and whatever else a
    /// point must name.
    const SOLVE_DEFAULTS: &'static [(&'static str, &'static str)];
    /// The algorithm variant's name (`rots-block`, `tabu-prefix`, ...).
    fn variant_name(&self) -> &'static str;
    /// Blocks or solutions per launch and threads per block, as `mats solve` reports them.
    fn shape(&self) -> (u32, u32);
    fn flags(&self) -> &[String];
    /// Whether it can run `inst` on `device`; the message names the parameter or the limit.
    fn check(&self, inst: &Self::Instance, device: &DeviceInfo) -> Result<(), String>;
    /// The variants [`instance_variant`](GpuWorkload::instance_variant) may name: a flag
    /// given without a variant that applies to one of them is checked once the instance is
    /// known, not refused up front.
    const INSTANCE_VARIANTS: &'static [&'static str] = &[];
    /// Where `mats solve` was not told the variant: the variant to run on `inst` instead of
    /// this default one, if another is the better default there (PFSP: ig-grid where an
    /// ig-block walk's tables do not fit in shared memory). `mats solve` then builds that
    /// variant's configuration from its own defaults and the flags given. None keeps this one.
    fn instance_variant(
        &self,
        _inst: &Self::Instance,
        _device: &DeviceInfo,
    ) -> Option<&'static str> {
        None
    }
    /// The kernel variant it runs on `inst` (what the CUBIN depends on).
    fn kernel_variant(&self, inst: &Self::Instance, target: CompileTarget) -> Variant;
    /// Checks, compiles (through `cache`), loads and uploads the instance.
    fn prepare(
        &self,
        gpu: &Gpu,
        cache: &KernelCache,
        inst: &Self::Instance,
    ) -> Result<Box<dyn PreparedRun>, KernelError>;
}

/// One `mats solve` flag a family's GPU solver takes.
#[derive(Debug, Clone, Copy)]
pub struct SolveFlag {
    /// As typed, e.g. `--tenure-range`.
    pub flag: &'static str,
    /// The point parameters it sets: one value sets each of them, a list sets them in order.
    pub params: &'static [&'static str],
    /// The variants that take it; empty: every variant.
    pub variants: &'static [&'static str],
}

/// A [`SolveFlag`], as families write their tables.
pub const fn flag(
    flag: &'static str,
    params: &'static [&'static str],
    variants: &'static [&'static str],
) -> SolveFlag {
    SolveFlag {
        flag,
        params,
        variants,
    }
}
