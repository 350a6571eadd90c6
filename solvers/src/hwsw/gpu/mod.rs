//! HW/SW partitioning on the GPU: the host side of the CUDA variants in `kernels/hwsw/`.
//!
//! GPTS (Hou et al.) is the CPU `sts` with each iteration's 2-flip neighbourhood evaluated
//! and compacted on the GPU; the variants differ in how:
//!
//! | variant | per iteration | kernels |
//! |---|---|---|
//! | `separate` | evaluate (feasibility byte per candidate), count per chunk, scan, scatter | `hwsw_evaluate`, `hwsw_count`, `hwsw_scan`, `hwsw_scatter` |
//! | `compact` | evaluate, then single-kernel compaction (decoupled look-back) | `hwsw_evaluate`, `hwsw_compact` |
//! | `fused` | evaluation and compaction in one kernel | `hwsw_fused` |
//!
//! then, in every GPTS variant, `hwsw_tabu` (the best admissible candidate of the compacted list)
//! and `hwsw_move` (the chosen flip applied to the GPU's state). The tabu status is a bit per
//! candidate, in zero-copy mapped host memory (`zero_copy`, the paper's section 3.5: the host
//! sets the bits, the kernel reads the few it needs over PCIe) or in device memory (the move
//! kernel sets them). All variants take the same moves as the CPU [`crate::hwsw::sts`] from
//! the same seed (the tests check it move by move) and every move is re-scored on the host.
//!
//! `gpts-multi` (beyond the paper, [`multi`]) runs many independent searches, one per block
//! (`hwsw_multi`), with 1-flips and sampled 2-flips, and restarts stagnating searches from
//! elite solutions between launches.
//!
//! Parameters and ranges ([`GpuParams::check`]): threads per block 32..=1024 (multiple of 32,
//! default 256), items per thread 1..=16 (default 4), tabu length 0..=2^20 (default 20, as
//! `sts`), stall (default 200). Sizes: 2..=[`MAX_NODES`] nodes, and the variant's buffers
//! ([`device_bytes`]) must fit in 90 % of the device's memory.

mod gpts;
mod multi;

use cudarc::driver::CudaSlice;
use kernels::gpu::{DeviceInfo, FunctionAttributes, Gpu, KernelClock, Launch};
use kernels::{CacheStatus, KernelCache, KernelError, Resources, Variant};

use super::Instance;
use crate::gpu::workload::{flag, SolveFlag};
use crate::run::{Outcome, RunOptions};

/// The most nodes: candidate indices below 2^33 are decoded exactly with a double square
/// root, and n(n-1)/2 candidates x 8 bytes of compacted indices (40 GB at 10^5) fit an H100.
pub const MAX_NODES: usize = 100_000;
/// The most items per thread (feasibility bits of a thread's items share one word).
pub const MAX_ITEMS: u32 = 16;
/// The longest tabu list.
pub const MAX_TABU_LENGTH: usize = 1 << 20;

/// The GPU variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum GpuAlgorithm {
    Separate,
    Compact,
    Fused,
    GptsMulti,
}

impl GpuAlgorithm {
    pub const ALL: [GpuAlgorithm; 4] = [
        GpuAlgorithm::Separate,
        GpuAlgorithm::Compact,
        GpuAlgorithm::Fused,
        GpuAlgorithm::GptsMulti,
    ];
    /// The variants that take the CPU `sts`'s moves.
    pub const GPTS: [GpuAlgorithm; 3] = [
        GpuAlgorithm::Separate,
        GpuAlgorithm::Compact,
        GpuAlgorithm::Fused,
    ];
    /// What `mats solve --backend gpu` runs without --algo (see docs/hwsw-gpu.md).
    pub const DEFAULT: GpuAlgorithm = GpuAlgorithm::GptsMulti;

    pub fn name(self) -> &'static str {
        match self {
            GpuAlgorithm::Separate => "separate",
            GpuAlgorithm::Compact => "compact",
            GpuAlgorithm::Fused => "fused",
            GpuAlgorithm::GptsMulti => "gpts-multi",
        }
    }

    pub fn is_multi(self) -> bool {
        self == GpuAlgorithm::GptsMulti
    }

    pub fn from_name(name: &str) -> Result<GpuAlgorithm, String> {
        crate::gpu::by_name(
            &GpuAlgorithm::ALL,
            name,
            "hwsw GPU algorithm",
            GpuAlgorithm::name,
        )
    }

    /// The kernel source id.
    pub fn source(self) -> String {
        format!("hwsw/{}", self.name())
    }
}

/// How to run a GPU variant.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuParams {
    pub algorithm: GpuAlgorithm,
    /// Threads per block of the neighbourhood kernels.
    pub threads_per_block: u32,
    /// Consecutive candidates per thread.
    pub items: u32,
    /// Tabu status in zero-copy mapped host memory (else in device memory).
    pub zero_copy: bool,
    /// Tabu list length (2-flip indices), as `sts`.
    pub tabu_length: usize,
    /// Stop after this many iterations without improvement (the paper's N).
    pub stall: u64,
    /// Record every move (for the move-by-move tests).
    #[serde(default)]
    pub trace: bool,
    /// Extra NVRTC/ptxas flags.
    pub flags: Vec<String>,
    /// gpts-multi: independent searches (blocks); 0 = as many as are resident at once.
    pub searches: u32,
    /// gpts-multi: sampled 2-flips per thread and iteration.
    pub samples: u32,
    /// gpts-multi: iterations per search per launch (0 = 1000, fewer under a time limit).
    pub launch_iterations: u32,
    /// gpts-multi: a search whose best has not improved for this many launches restarts from
    /// one of the four best searches' best solutions (0 = never).
    pub restart_stall: u32,
    /// gpts-multi: a stalled search continues from its own best (with a cleared tabu list)
    /// instead of one of the four best searches' bests (`--restart-from own`).
    #[serde(default)]
    pub restart_from_own: bool,
    /// gpts-multi: race restart configurations across the searches during the run
    /// (`--adapt`, [`crate::gpu::adapt`]; `multi::RestartArm`). Off by default.
    #[serde(default)]
    pub adapt: bool,
}

impl GpuParams {
    pub fn new(algorithm: GpuAlgorithm) -> GpuParams {
        let sts = super::StsParams::default();
        GpuParams {
            algorithm,
            threads_per_block: 256,
            items: 4,
            zero_copy: true,
            tabu_length: sts.tabu_length,
            stall: sts.stall,
            trace: false,
            flags: Vec::new(),
            searches: 0,
            samples: 4,
            launch_iterations: 0,
            restart_stall: 3,
            restart_from_own: false,
            adapt: false,
        }
    }

    /// Checks the configuration against the instance and the device; the message names the
    /// parameter or the limit.
    pub fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        let name = self.algorithm.name();
        let n = inst.n();
        if !(2..=MAX_NODES).contains(&n) {
            return Err(format!(
                "{name} supports 2..={MAX_NODES} nodes (candidate indices are decoded in double \
                 precision and compacted as 8-byte indices), {} has {n}",
                inst.name
            ));
        }
        if 2 * inst.m() >= 1 << 31 {
            return Err(format!(
                "{}: {} edges exceed the kernels' 32-bit adjacency offsets",
                inst.name,
                inst.m()
            ));
        }
        let t = self.threads_per_block;
        if t == 0 || t % 32 != 0 || t > 1024 {
            return Err(format!(
                "threads per block must be a multiple of 32 in 32..=1024, got {t}"
            ));
        }
        if !(1..=MAX_ITEMS).contains(&self.items) {
            return Err(format!(
                "items per thread must be in 1..={MAX_ITEMS}, got {}",
                self.items
            ));
        }
        if self.tabu_length > MAX_TABU_LENGTH {
            return Err(format!(
                "the tabu length must be at most {MAX_TABU_LENGTH}, got {}",
                self.tabu_length
            ));
        }
        if self.algorithm.is_multi() {
            if self.searches > 65_535 {
                return Err(format!(
                    "gpts-multi searches must be in 1..=65535 (0 = as many as fit), got {}",
                    self.searches
                ));
            }
            if !(1..=64).contains(&self.samples) {
                return Err(format!(
                    "gpts-multi samples per thread must be in 1..=64, got {}",
                    self.samples
                ));
            }
            if self.tabu_length > u32::MAX as usize / 4 {
                return Err(format!("tabu length {} is too large", self.tabu_length));
            }
        }
        let need = device_bytes(inst, self);
        let have = device.total_memory_bytes;
        if need > have / 10 * 9 {
            return Err(format!(
                "{name} needs {:.1} GiB of device memory for {} ({n} nodes, {} candidates per \
                 iteration), more than 90 % of the {:.1} GiB of {}",
                need as f64 / GIB,
                inst.name,
                candidates(n),
                have as f64 / GIB,
                device.name
            ));
        }
        Ok(())
    }

    /// The variant to compile (no device needed; n is a run-time argument).
    pub fn variant_for(&self, arch: kernels::Arch) -> Variant {
        let v = Variant::new(&self.algorithm.source(), arch)
            .define("HWSW_THREADS", self.threads_per_block);
        let v = if self.algorithm.is_multi() {
            v.define("MULTI_SAMPLES", self.samples)
        } else {
            v.define("HWSW_ITEMS", self.items)
                .define("HWSW_ZERO_COPY", u32::from(self.zero_copy))
        };
        self.flags.iter().fold(v, |v, f| v.flag(f))
    }

    fn chunk(&self) -> u64 {
        u64::from(self.threads_per_block) * u64::from(self.items)
    }
}

impl TryFrom<String> for GpuAlgorithm {
    type Error = String;
    fn try_from(name: String) -> Result<GpuAlgorithm, String> {
        GpuAlgorithm::from_name(&name)
    }
}

impl From<GpuAlgorithm> for String {
    fn from(a: GpuAlgorithm) -> String {
        a.name().to_string()
    }
}

/// The flags only gpts-multi (independent searches per block) takes.
const MULTI: &[&str] = &["gpts-multi"];

impl crate::gpu::workload::GpuWorkload for GpuParams {
    const SOLVE_FLAGS: &'static [SolveFlag] = &[
        flag("--algo", &["variant"], &[]),
        flag("--threads", &["threads"], &[]),
        flag("--tenure", &["tabu_length"], &[]),
        flag("--solutions", &["searches"], MULTI),
        flag("--launch-iterations", &["launch_iterations"], MULTI),
        flag("--restart-stall", &["restart_stall"], MULTI),
        flag("--restart-from", &["restart_from"], MULTI),
        flag("--adapt", &["adapt"], MULTI),
    ];
    const SOLVE_DEFAULTS: &'static [(&'static str, &'static str)] = &[("variant", "gpts-multi")];

    type Instance = Instance;

    /// `variant` and where set `threads`, `items`, `zero_copy` (on/off), `tabu_length`,
    /// `stall` (GPTS), `searches`, `samples`, `launch_iterations`, `restart_stall`,
    /// `restart_from` (`elite` or `own`; gpts-multi), as `spaces/hwsw.toml` names them.
    fn from_point(point: &dyn crate::gpu::workload::PointValues) -> Result<GpuParams, String> {
        if !point.defines().is_empty() {
            return Err("the hwsw kernels take no #define parameters from a space".into());
        }
        let algorithm = point.variant("hwsw: separate, compact, fused, gpts-multi")?;
        let mut p = GpuParams::new(GpuAlgorithm::from_name(&algorithm)?);
        if let Some(t) = point.count("threads")? {
            p.threads_per_block = t;
        }
        if let Some(i) = point.count("items")? {
            p.items = i;
        }
        if let Some(z) = point.text("zero_copy") {
            p.zero_copy = match z.as_str() {
                "on" | "1" | "true" => true,
                "off" | "0" | "false" => false,
                other => {
                    return Err(format!(
                        "parameter `zero_copy` is on or off, found {other:?}"
                    ))
                }
            };
        }
        if let Some(t) = point.count("tabu_length")? {
            p.tabu_length = t;
        }
        if let Some(s) = point.count("stall")? {
            p.stall = s;
        }
        if let Some(s) = point.count("searches")? {
            p.searches = s;
        }
        if let Some(s) = point.count("samples")? {
            p.samples = s;
        }
        if let Some(k) = point.count("launch_iterations")? {
            p.launch_iterations = k;
        }
        if let Some(on) = point.switch("adapt")? {
            p.adapt = on;
        }
        if let Some(k) = point.count("restart_stall")? {
            p.restart_stall = k;
        }
        if let Some(from) = point.text("restart_from") {
            p.restart_from_own = match from.as_str() {
                "elite" => false,
                "own" => true,
                other => {
                    return Err(format!(
                        "parameter `restart_from` is elite or own, found {other:?}"
                    ))
                }
            };
        }
        p.flags = point.flags().to_vec();
        Ok(p)
    }

    fn variant_name(&self) -> &'static str {
        self.algorithm.name()
    }

    /// Independent searches (one for GPTS; 0 = as many as are resident) and threads per block.
    fn shape(&self) -> (u32, u32) {
        let searches = if self.algorithm.is_multi() {
            self.searches
        } else {
            1
        };
        (searches, self.threads_per_block)
    }

    fn flags(&self) -> &[String] {
        &self.flags
    }

    fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        GpuParams::check(self, inst, device)
    }

    fn kernel_variant(
        &self,
        _inst: &Instance,
        target: crate::gpu::workload::CompileTarget,
    ) -> Variant {
        self.variant_for(target.arch)
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        cache: &KernelCache,
        inst: &Instance,
    ) -> Result<Box<dyn crate::gpu::workload::PreparedRun>, KernelError> {
        Ok(Box::new(prepare(gpu, cache, inst, self)?))
    }
}

impl crate::gpu::workload::PreparedRun for Prepared {
    fn run(
        &mut self,
        gpu: &Gpu,
        options: &RunOptions,
    ) -> Result<crate::gpu::workload::GpuRun, KernelError> {
        let run = Prepared::run(self, gpu, options)?;
        Ok(crate::gpu::workload::GpuRun {
            outcome: run.outcome,
            kernel_seconds: run.kernel_seconds,
            launches: u32::try_from(run.launches).unwrap_or(u32::MAX),
            cache: run.cache,
            compile_seconds: run.compile_seconds,
            resources: run.resources,
            attributes: run.attributes,
            launch: run.launch,
            entry: crate::gpu::workload::PreparedRun::kernel(self)
                .entry()
                .to_string(),
            layout: None,
            blocks_per_sm: None,
            searches: None,
            adaptation: run.adaptation,
        })
    }

    fn launch(&self) -> Launch {
        Prepared::launch(self)
    }

    fn kernel(&self) -> &kernels::gpu::Kernel {
        match &self.engine {
            Engine::Gpts { kernels, .. } => &kernels.main,
            Engine::Multi(m) => &m.kernel,
        }
    }

    fn start_from(&mut self, starts: &[Vec<usize>]) -> bool {
        // GPTS follows the CPU `sts` move for move from all-hardware; gpts-multi's searches
        // rebuild their state from whatever vector they hold.
        if !self.params.algorithm.is_multi() {
            return false;
        }
        // Only feasible 0/1 vectors of this instance are taken (the exchange re-scored them).
        let seeds = starts
            .iter()
            .filter(|x| self.inst.objective(x).is_ok())
            .map(|x| x.iter().map(|&v| u8::from(v == 1)).collect())
            .collect();
        self.island.get_or_insert_default().seeds = seeds;
        true
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// The 2-flips of n nodes.
pub fn candidates(n: usize) -> u64 {
    let n = n as u64;
    n * n.saturating_sub(1) / 2
}

/// Chunks of the neighbourhood (the scan's unit).
fn chunks(n: usize, params: &GpuParams) -> u64 {
    candidates(n).div_ceil(params.chunk())
}

/// Device memory a variant allocates for an instance (the tabu bits only where they are not
/// zero-copy).
pub fn device_bytes(inst: &Instance, params: &GpuParams) -> u64 {
    let (n, m) = (inst.n() as u64, inst.m() as u64);
    let count = candidates(inst.n());
    let chunks = chunks(inst.n(), params);
    let padded = chunks * params.chunk();
    let graph = n * (8 * 4 + 1) + 2 * (n + 1) * 4 + 3 * m * 12;
    if params.algorithm.is_multi() {
        // x, w, tabu, best x per search; at most 65535 searches (4 per SM of a large GPU when
        // searches = 0 is what runs; the check takes the worst case of 1024).
        let searches = if params.searches == 0 {
            1024
        } else {
            u64::from(params.searches)
        };
        return graph + searches * (n * 14 + 16) + (1 << 20);
    }
    let compacted = count * 8;
    let per_variant = match params.algorithm {
        GpuAlgorithm::Separate => padded + chunks * 8,
        GpuAlgorithm::Compact => padded + chunks * 8,
        GpuAlgorithm::Fused | GpuAlgorithm::GptsMulti => chunks * 8,
    };
    let tabu = if params.zero_copy {
        0
    } else {
        count.div_ceil(32) * 4
    };
    graph + compacted + per_variant + tabu + (1 << 20)
}

/// Candidate index of the 2-flip (i, j), i < j (row-major, the order of `sts`).
pub fn pair_index(n: usize, i: usize, j: usize) -> u64 {
    let (n, i, j) = (n as u64, i as u64, j as u64);
    i * (2 * n - i - 1) / 2 + (j - i - 1)
}

/// The 2-flip (i, j) of a candidate index (inverse of [`pair_index`]).
pub fn pair_of(n: usize, k: u64) -> (usize, usize) {
    let row = |i: u64| i * (2 * n as u64 - i - 1) / 2;
    let b = 2.0 * n as f64 - 1.0;
    let d = (b * b - 8.0 * k as f64).max(0.0);
    let mut i = (((b - d.sqrt()) * 0.5) as u64).min(n as u64 - 2);
    while i > 0 && row(i) > k {
        i -= 1;
    }
    while i < n as u64 - 2 && row(i + 1) <= k {
        i += 1;
    }
    (i as usize, (i + 1 + (k - row(i))) as usize)
}

/// What a GPU run returns besides the outcome.
#[derive(Debug, Clone)]
pub struct GpuRun {
    /// Best solution (0/1 per node), its hardware cost, iterations and candidates evaluated.
    pub outcome: Outcome,
    /// Sum of the event-timed GPU work of every iteration.
    pub kernel_seconds: f64,
    /// Wall time of the search loop.
    pub search_seconds: f64,
    pub launches: u64,
    /// GPTS: restarts (no feasible candidate); gpts-multi: elite restarts.
    pub restarts: u64,
    /// gpts-multi with `adapt`: the restart arms and their searches at the end.
    pub adaptation: Option<String>,
    /// Independent searches (1 for GPTS).
    pub searches: u32,
    /// With `trace`: every move (i, j) taken.
    pub moves: Vec<(usize, usize)>,
    pub cache: CacheStatus,
    pub compile_seconds: f64,
    pub resources: Vec<Resources>,
    /// The neighbourhood kernel (`hwsw_fused`, `hwsw_compact` or `hwsw_evaluate`).
    pub attributes: FunctionAttributes,
    pub launch: Launch,
}

/// Runs a GPU variant on an instance: [`prepare`] then [`Prepared::run`].
pub fn solve(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
    options: &RunOptions,
) -> Result<GpuRun, KernelError> {
    prepare(gpu, cache, inst, params)?.run(gpu, options)
}

/// The instance's graph on the GPU, with the kernels and buffers repeated runs share.
pub struct Prepared {
    _module: kernels::gpu::Module,
    engine: Engine,
    inst: Instance,
    params: GpuParams,
    cache: CacheStatus,
    compile_seconds: f64,
    resources: Vec<Resources>,
    /// gpts-multi as an island (`start_from`): its seeds and its searches' bests.
    island: Option<IslandSearches>,
}

/// An island's searches between epochs: the seeds the first searches of the next run start
/// from, and every search's best as the last run left it, from which the others continue.
#[derive(Debug, Default)]
struct IslandSearches {
    seeds: Vec<Vec<u8>>,
    saved: Vec<Vec<u8>>,
}

impl IslandSearches {
    fn starts(&self) -> Vec<Vec<u8>> {
        let rest = self.saved.iter().skip(self.seeds.len());
        self.seeds.iter().chain(rest).cloned().collect()
    }
}

/// Checks the configuration, compiles (through the cache), loads, uploads the graph and
/// allocates the neighbourhood's buffers.
pub fn prepare(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
) -> Result<Prepared, KernelError> {
    params
        .check(inst, &gpu.info)
        .map_err(KernelError::InvalidConfig)?;
    let variant = params.variant_for(gpu.info.arch);
    let (compiled, cache_status) = cache.get_or_compile(&variant)?;
    let module = gpu.load(&compiled)?;
    let engine = if params.algorithm.is_multi() {
        Engine::Multi(Box::new(multi::Multi::new(&module, gpu, inst, params)?))
    } else {
        let kernels = gpts::Kernels::load(&module, gpu, inst, params)?;
        let buffers = gpts::Buffers::new(gpu, inst, params, &kernels)?;
        Engine::Gpts {
            kernels: Box::new(kernels),
            buffers: Box::new(buffers),
        }
    };
    Ok(Prepared {
        _module: module,
        engine,
        inst: inst.clone(),
        params: params.clone(),
        cache: cache_status,
        compile_seconds: compiled.compile_seconds,
        resources: compiled.resources.clone(),
        island: None,
    })
}

impl Prepared {
    /// The neighbourhood kernel's launch configuration.
    pub fn launch(&self) -> Launch {
        match &self.engine {
            Engine::Gpts { kernels, .. } => kernels.main_launch,
            Engine::Multi(m) => m.launch,
        }
    }

    /// One run under `options.budget` (iterations, default 2000; wall time; target) from
    /// all-hardware, stopping early after `stall` iterations without improvement.
    pub fn run(&mut self, gpu: &Gpu, options: &RunOptions) -> Result<GpuRun, KernelError> {
        let mut timer = KernelClock::new(gpu)?;
        let launch = self.launch();
        let mut adaptation = None;
        let (outcome, moves, restarts, searches, attributes) = match &mut self.engine {
            Engine::Gpts { kernels, buffers } => {
                let (outcome, moves, restarts) = gpts::run(
                    kernels,
                    buffers,
                    &self.inst,
                    &self.params,
                    gpu,
                    &mut timer,
                    options,
                )?;
                (outcome, moves, restarts, 1, kernels.main.attributes)
            }
            Engine::Multi(m) => {
                let starts = self.island.as_ref().map(|i| i.starts()).unwrap_or_default();
                let (outcome, restarts, adapted) =
                    m.run(&self.inst, &self.params, gpu, &mut timer, options, &starts)?;
                adaptation = adapted;
                if let Some(island) = &mut self.island {
                    island.saved = m.bests(gpu, self.inst.n())?;
                }
                (
                    outcome,
                    Vec::new(),
                    restarts,
                    m.launch.grid.0,
                    m.kernel.attributes,
                )
            }
        };
        // Every answer is re-scored here: feasible, and the hardware cost the GPU reported.
        let rescored = self.inst.objective(&outcome.solution).map_err(|e| {
            KernelError::InvalidConfig(format!(
                "{}: the GPU's solution {e}",
                self.params.algorithm.name()
            ))
        })?;
        if rescored != outcome.objective {
            return Err(KernelError::InvalidConfig(format!(
                "{}: the GPU reported H = {}, the CPU re-scores {rescored}",
                self.params.algorithm.name(),
                outcome.objective
            )));
        }
        Ok(GpuRun {
            outcome,
            kernel_seconds: timer.seconds,
            search_seconds: timer.search_seconds,
            launches: timer.launches,
            restarts,
            searches,
            moves,
            adaptation,
            cache: self.cache,
            compile_seconds: self.compile_seconds,
            resources: self.resources.clone(),
            attributes,
            launch,
        })
    }
}

enum Engine {
    Gpts {
        kernels: Box<gpts::Kernels>,
        buffers: Box<gpts::Buffers>,
    },
    Multi(Box<multi::Multi>),
}

fn driver(what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> KernelError {
    KernelError::driver(what.to_string())
}

/// Uploads a host vector.
fn upload<T: cudarc::driver::DeviceRepr>(
    gpu: &Gpu,
    what: &str,
    data: &[T],
) -> Result<CudaSlice<T>, KernelError> {
    gpu.stream()
        .clone_htod(data)
        .map_err(driver(&format!("uploading {what}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_index_and_pair_of_are_inverse() {
        for n in [2usize, 3, 7, 100, 2000] {
            let mut k = 0u64;
            for i in 0..n {
                for j in i + 1..n {
                    assert_eq!(pair_index(n, i, j), k);
                    if n <= 100 || k % 997 == 0 {
                        assert_eq!(pair_of(n, k), (i, j), "n {n} k {k}");
                    }
                    k += 1;
                }
            }
            assert_eq!(k, candidates(n));
        }
        let n = MAX_NODES;
        for k in [
            0,
            1,
            candidates(n) / 3,
            candidates(n) - 2,
            candidates(n) - 1,
        ] {
            let (i, j) = pair_of(n, k);
            assert!(i < j && j < n);
            assert_eq!(pair_index(n, i, j), k);
        }
    }
}
