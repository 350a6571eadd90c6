//! The TSP ant colony on the GPU: the host side of `kernels/tsp/`.
//!
//! - [`colony`]: the device state ([`Colony`]) and its stages (`compute_choice_info`,
//!   `construct`, `evaporate`, `deposit`), which any colony driver can sequence;
//! - [`ant_system`]: the GPU Ant System on it, the counterpart of the CPU
//!   [`crate::tsp::ant_system`];
//! - [`local_search`]: 2-opt with don't-look bits on every tour, one warp per tour;
//! - [`mmas`]: MAX-MIN Ant System with that local search, the counterpart of the CPU
//!   [`crate::tsp::mmas`].
//!
//! | construction | work unit | notes |
//! |---|---|---|
//! | `task` | one ant per thread | sequential roulette over the candidate list, sequential fall-back over all n cities |
//! | `data` (default) | one ant per warp | warp scan + ballot roulette, warp arg-max fall-back over all n cities |
//! | `data-compressed` | one ant per warp | `data` with the unvisited cities kept as a compact list: the fall-back scans only those left |
//!
//! Pheromone update: `atomic` (default; atomicAdd scatter per edge) or `gather` (each row owned
//! by one warp, which sums the tours' edges at that city; no atomics, same result on every
//! run). Both evaporate with clamps (`tau_min`, `tau_max`) so MAX-MIN Ant System can use them.
//!
//! Random stream: a counter-based hash of (seed, iteration, ant, step), so tours do not
//! depend on the launch configuration; it is not the CPU's ChaCha stream, so GPU and CPU
//! tours agree in distribution (tested by edge frequencies), not tour by tour.
//!
//! Sizes: pheromone and choice information are float n x n matrices and the tours m x n ints;
//! [`GpuParams::check`] refuses, with the figures, a colony that needs more than
//! [`MEMORY_SHARE`] of the GPU's memory.

pub mod ant_system;
pub mod colony;
pub mod focused;
pub mod local_search;
pub mod mmas;

pub use ant_system::{nearest_neighbour_length, prepare, Prepared, TspGpuRun};
pub use colony::Colony;

use kernels::gpu::DeviceInfo;
use kernels::{KernelCache, KernelError, Variant};
use serde::{Deserialize, Serialize};

use super::Instance;
use crate::gpu::workload::{flag, SolveFlag};
use crate::gpu::workload::{CompileTarget, PointValues};

/// Share of the GPU's memory a colony may take (the rest: the context, the CUDA runtime's own
/// allocations, other processes).
pub const MEMORY_SHARE: f64 = 0.9;

/// Longest candidate list the kernels take (four entries per lane in the warp variants).
pub const MAX_GPU_CANDIDATES: usize = 128;

/// Tour construction variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Construction {
    Task,
    Data,
    DataCompressed,
}

impl Construction {
    pub const ALL: [Construction; 3] = [
        Construction::Task,
        Construction::Data,
        Construction::DataCompressed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Construction::Task => "task",
            Construction::Data => "data",
            Construction::DataCompressed => "data-compressed",
        }
    }

    pub fn from_name(name: &str) -> Result<Construction, String> {
        crate::gpu::by_name(
            &Construction::ALL,
            name,
            "tsp construction variant",
            Construction::name,
        )
    }

    /// The kernel source id.
    pub fn source(self) -> &'static str {
        match self {
            Construction::Task => "tsp/construct-task",
            Construction::Data => "tsp/construct-data",
            Construction::DataCompressed => "tsp/construct-data-compressed",
        }
    }

    pub fn entry(self) -> &'static str {
        match self {
            Construction::Task => "tsp_construct_task",
            Construction::Data => "tsp_construct_data",
            Construction::DataCompressed => "tsp_construct_data_compressed",
        }
    }

    /// Threads per block when none are given: 64 ants per block (task), 4 ants (warps).
    pub fn default_threads(self) -> u32 {
        match self {
            Construction::Task => 64,
            Construction::Data | Construction::DataCompressed => 128,
        }
    }
}

impl TryFrom<String> for Construction {
    type Error = String;
    fn try_from(name: String) -> Result<Construction, String> {
        Construction::from_name(&name)
    }
}

impl From<Construction> for String {
    fn from(c: Construction) -> String {
        c.name().to_string()
    }
}

/// Pheromone update variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PheromoneUpdate {
    Atomic,
    Gather,
}

impl PheromoneUpdate {
    pub const ALL: [PheromoneUpdate; 2] = [PheromoneUpdate::Atomic, PheromoneUpdate::Gather];

    pub fn name(self) -> &'static str {
        match self {
            PheromoneUpdate::Atomic => "atomic",
            PheromoneUpdate::Gather => "gather",
        }
    }

    pub fn from_name(name: &str) -> Result<PheromoneUpdate, String> {
        crate::gpu::by_name(
            &PheromoneUpdate::ALL,
            name,
            "pheromone update",
            PheromoneUpdate::name,
        )
    }

    pub fn source(self) -> &'static str {
        match self {
            PheromoneUpdate::Atomic => "tsp/pheromone-atomic",
            PheromoneUpdate::Gather => "tsp/pheromone-gather",
        }
    }
}

impl TryFrom<String> for PheromoneUpdate {
    type Error = String;
    fn try_from(name: String) -> Result<PheromoneUpdate, String> {
        PheromoneUpdate::from_name(&name)
    }
}

impl From<PheromoneUpdate> for String {
    fn from(c: PheromoneUpdate) -> String {
        c.name().to_string()
    }
}

/// The colony algorithms on the GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TspGpuAlgorithm {
    /// Ant System, every ant deposits (Dawson & Stewart).
    #[default]
    As,
    /// MAX-MIN Ant System with 2-opt on every tour ([`mmas`]).
    Mmas,
    /// Focused ACO: bounded changes of a source tour, 2-opt and Or-opt around them
    /// ([`focused`]).
    Focused,
}

impl TspGpuAlgorithm {
    pub const ALL: [TspGpuAlgorithm; 3] = [
        TspGpuAlgorithm::As,
        TspGpuAlgorithm::Mmas,
        TspGpuAlgorithm::Focused,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TspGpuAlgorithm::As => "as",
            TspGpuAlgorithm::Mmas => "mmas",
            TspGpuAlgorithm::Focused => "focused",
        }
    }

    pub fn from_name(name: &str) -> Result<TspGpuAlgorithm, String> {
        crate::gpu::by_name(
            &TspGpuAlgorithm::ALL,
            name,
            "tsp GPU algorithm",
            TspGpuAlgorithm::name,
        )
    }
}

fn default_restart_stall() -> u64 {
    super::MmasParams::default().restart_stall
}

/// How to run the GPU ant colony.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuParams {
    pub construction: Construction,
    pub pheromone: PheromoneUpdate,
    /// Threads per block of the construction kernel (0 = the variant's default).
    pub threads_per_block: u32,
    /// Ants per iteration; `None` means one per city (m = n).
    pub ants: Option<usize>,
    pub alpha: f64,
    pub beta: f64,
    pub rho: f64,
    /// Candidate-list length.
    pub candidates: usize,
    /// `as` (the paper's Ant System) or `mmas` (MAX-MIN AS with 2-opt local search).
    #[serde(default)]
    pub algorithm: TspGpuAlgorithm,
    /// `mmas`: the 2-opt kernel's candidates per city and tours per block.
    #[serde(default)]
    pub local_search: local_search::LsParams,
    /// `mmas`: iterations without a better tour since the last restart before the trails reset;
    /// `focused`: the same, 0 for never (its default).
    #[serde(default = "default_restart_stall")]
    pub restart_stall: u64,
    /// `focused`: new edges per construction, source-tour rule, Or-opt.
    #[serde(default)]
    pub focused: focused::FocusedGpuParams,
    /// Extra NVRTC/ptxas flags.
    pub flags: Vec<String>,
}

impl GpuParams {
    /// The CPU `as`'s defaults (alpha 1, beta 2, rho 0.5, 32 candidates, m = n).
    pub fn new(construction: Construction) -> GpuParams {
        let cpu = super::AsParams::default();
        GpuParams {
            construction,
            pheromone: PheromoneUpdate::Atomic,
            threads_per_block: 0,
            ants: cpu.ants,
            alpha: cpu.alpha,
            beta: cpu.beta,
            rho: cpu.rho,
            candidates: cpu.candidates,
            algorithm: TspGpuAlgorithm::As,
            local_search: local_search::LsParams::default(),
            restart_stall: default_restart_stall(),
            focused: focused::FocusedGpuParams::default(),
            flags: Vec::new(),
        }
    }

    /// Focused ACO: the CPU `focused`'s alpha, beta, rho and candidates, with 1024 ants (a
    /// warp each), 16 new edges per construction and the local search over all 16 list
    /// entries: on the H100 these beat the CPU's 8 and 10 at 10 s on pr2392 and rl11849
    /// (docs/tsp-gpu.md has the sweep).
    pub fn focused() -> GpuParams {
        let cpu = crate::tsp::focused::FocusedParams::default();
        GpuParams {
            focused: focused::FocusedGpuParams {
                min_new_edges: 16,
                ..focused::FocusedGpuParams::default()
            },
            ants: Some(1024),
            alpha: cpu.alpha,
            beta: cpu.beta,
            rho: cpu.rho,
            candidates: cpu.candidates,
            algorithm: TspGpuAlgorithm::Focused,
            restart_stall: 0,
            local_search: local_search::LsParams {
                neighbours: cpu.candidates as u32,
                warps: 4,
            },
            ..GpuParams::new(Construction::Data)
        }
    }

    /// MAX-MIN Ant System with 2-opt: the CPU `mmas`'s alpha, beta, rho and candidates, with
    /// 256 ants (the GPU's ants are cheap; docs/tsp-gpu.md has the ant-count figures).
    pub fn mmas() -> GpuParams {
        let cpu = super::MmasParams::default();
        GpuParams {
            ants: Some(256),
            alpha: cpu.alpha,
            beta: cpu.beta,
            rho: cpu.rho,
            candidates: cpu.candidates,
            algorithm: TspGpuAlgorithm::Mmas,
            ..GpuParams::new(Construction::Data)
        }
    }

    /// The same parameters as the CPU Ant System takes.
    pub fn as_params(&self) -> super::AsParams {
        super::AsParams {
            ants: self.ants,
            alpha: self.alpha,
            beta: self.beta,
            rho: self.rho,
            candidates: self.candidates,
            initial: super::InitialPheromone::Book,
        }
    }

    pub fn ants_for(&self, inst: &Instance) -> usize {
        self.ants.unwrap_or(inst.n())
    }

    /// The construction kernel's threads per block.
    pub fn threads_for(&self) -> u32 {
        if self.threads_per_block == 0 {
            self.construction.default_threads()
        } else {
            self.threads_per_block
        }
    }

    /// Device bytes the colony allocates for `inst` (see [`colony`]).
    pub fn device_bytes(&self, inst: &Instance, device: &DeviceInfo) -> u64 {
        if self.algorithm == TspGpuAlgorithm::Focused {
            return focused::device_bytes(self, inst);
        }
        let n = inst.n() as u64;
        let m = self.ants_for(inst) as u64;
        let k = colony::list_length(inst, self.candidates) as u64;
        let mut bytes = 8 * n * n + 4 * m * n + 8 * m + 8 * n * k;
        if colony::uses_matrix(inst) {
            bytes += 4 * n * n;
        }
        if self.pheromone == PheromoneUpdate::Gather {
            bytes += 8 * n * m;
        }
        let per_ant = colony::scratch_bytes_per_ant(self.construction, inst.n()) as u64;
        let per_block = u64::from(colony::ants_per_block(
            self.construction,
            self.threads_for(),
        ));
        if per_ant * per_block > u64::from(device.max_shared_bytes_per_block_optin) {
            bytes += per_ant * m;
        }
        bytes
    }

    /// Checks the parameters, the instance and the colony's memory against the device; the
    /// message names the parameter or the limit with its figures.
    pub fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        if self.algorithm == TspGpuAlgorithm::Focused {
            return focused::check(self, inst, device);
        }
        self.as_params().check()?;
        let n = inst.n();
        if n < 3 {
            return Err(format!(
                "the GPU ant colony needs at least 3 cities, {} has {n}",
                inst.name
            ));
        }
        if self.candidates > MAX_GPU_CANDIDATES {
            return Err(format!(
                "parameter `candidates` must be at most {MAX_GPU_CANDIDATES} on the GPU, found {}",
                self.candidates
            ));
        }
        let m = self.ants_for(inst);
        if m > i32::MAX as usize / 2 {
            return Err(format!("parameter `ants` is too large: {m}"));
        }
        let t = self.threads_for();
        let warp_variant = self.construction != Construction::Task;
        if t == 0 || t > 1024 || (warp_variant && t % 32 != 0) {
            return Err(format!(
                "threads per block of {} must be in 1..=1024{}, got {t}",
                self.construction.name(),
                if warp_variant {
                    " and a multiple of 32 (one ant per warp)"
                } else {
                    ""
                }
            ));
        }
        colony::matrix_fits_i32(inst)?;
        if self.algorithm == TspGpuAlgorithm::Mmas {
            self.local_search
                .check(colony::list_length(inst, self.candidates))?;
        }
        let need = self.device_bytes(inst, device);
        let have = device.total_memory_bytes as f64 * MEMORY_SHARE;
        if need as f64 > have {
            // Bytes per n^2 with m = n: the largest instance that fits with one ant per city.
            let mut per_square = 12.0;
            if colony::uses_matrix(inst) {
                per_square += 4.0;
            }
            if self.pheromone == PheromoneUpdate::Gather {
                per_square += 8.0;
            }
            if self.construction == Construction::DataCompressed {
                per_square += 8.0;
            }
            let largest = (have / per_square).sqrt() as u64;
            const GIB: f64 = (1u64 << 30) as f64;
            return Err(format!(
                "the GPU ant colony keeps n x n pheromone and choice matrices and m x n tours: \
                 {} ({n} cities, {m} ants) needs {:.1} GiB, more than {:.0}% of {}'s {:.1} GiB; \
                 with one ant per city at most about {largest} cities fit (use fewer --ants, or \
                 the CPU)",
                inst.name,
                need as f64 / GIB,
                MEMORY_SHARE * 100.0,
                device.name,
                device.total_memory_bytes as f64 / GIB,
            ));
        }
        Ok(())
    }

    /// The construction kernel's variant (what the tuner compiles ahead).
    pub fn variant_for(&self, inst: &Instance, arch: kernels::Arch) -> Variant {
        if self.algorithm == TspGpuAlgorithm::Focused {
            return focused::variant(self, inst, arch);
        }
        colony::construction_variant(self, inst, arch)
    }
}

impl crate::gpu::workload::GpuWorkload for GpuParams {
    const SOLVE_FLAGS: &'static [SolveFlag] = &[
        flag("--algo", &["algorithm"], &[]),
        // Focused builds and updates in its own kernels: these choose the AS/MMAS ones.
        flag("--construction", &["variant"], &["as", "mmas"]),
        flag("--pheromone", &["pheromone"], &["as", "mmas"]),
        flag("--threads", &["threads"], &[]),
        flag("--ants", &["ants"], &[]),
        flag("--alpha", &["alpha"], &[]),
        flag("--beta", &["beta"], &[]),
        flag("--rho", &["rho"], &[]),
        flag("--candidates", &["candidates"], &[]),
        flag("--ls-neighbours", &["ls_neighbours"], &["mmas", "focused"]),
        flag("--min-new-edges", &["min_new_edges"], &["focused"]),
        flag("--source-tour", &["source"], &["focused"]),
        flag("--or-opt", &["or_opt"], &["focused"]),
        flag("--merge", &["merge"], &["focused"]),
        flag("--restart-stall", &["restart_stall"], &["mmas", "focused"]),
        flag("--adapt", &["adapt"], &["focused"]),
        flag("--lists", &["lists"], &["focused"]),
    ];
    // Focused ACO: on the H100 it ends 0.15% above the optimum of pr2392 in 10 s and 0.39%
    // above pla85900's in 60 s, where MAX-MIN AS with 2-opt ends 0.55% and 8.7% above
    // (docs/tsp-gpu.md); `variant` (a construction) does not change it.
    const SOLVE_DEFAULTS: &'static [(&'static str, &'static str)] =
        &[("variant", "data"), ("algorithm", "focused")];

    type Instance = Instance;

    /// `variant` (construction: task, data, data-compressed) and where set `algorithm` (as,
    /// mmas: its defaults are [`GpuParams::mmas`]), `pheromone` (atomic, gather), `threads`,
    /// `ants`, `alpha`, `beta`, `rho`, `candidates`, and for mmas `ls_neighbours`, `ls_warps`.
    fn from_point(point: &dyn PointValues) -> Result<GpuParams, String> {
        if !point.defines().is_empty() {
            return Err("the tsp kernels take no #define parameters from a space".into());
        }
        let variant = point.variant("tsp: task, data, data-compressed")?;
        let mut params = match point.text("algorithm") {
            Some(a) => match TspGpuAlgorithm::from_name(&a)? {
                TspGpuAlgorithm::Mmas => GpuParams::mmas(),
                TspGpuAlgorithm::Focused => GpuParams::focused(),
                TspGpuAlgorithm::As => GpuParams::new(Construction::Data),
            },
            None => GpuParams::new(Construction::Data),
        };
        params.construction = Construction::from_name(&variant)?;
        if let Some(k) = point.count("ls_neighbours")? {
            params.local_search.neighbours = k;
        }
        if let Some(w) = point.count("ls_warps")? {
            params.local_search.warps = w;
        }
        if let Some(p) = point.text("pheromone") {
            params.pheromone = PheromoneUpdate::from_name(&p)?;
        }
        if let Some(t) = point.count("threads")? {
            params.threads_per_block = t;
        }
        if let Some(a) = point.count::<usize>("ants")? {
            params.ants = (a > 0).then_some(a);
        }
        if let Some(a) = point.float("alpha")? {
            params.alpha = a;
        }
        if let Some(b) = point.float("beta")? {
            params.beta = b;
        }
        if let Some(r) = point.float("rho")? {
            params.rho = r;
        }
        if let Some(k) = point.count("candidates")? {
            params.candidates = k;
        }
        if params.algorithm == TspGpuAlgorithm::Focused && params.threads_per_block != 0 {
            // One ant per warp: the block's threads say how many ants share it.
            let t = params.threads_per_block;
            if t % 32 != 0 {
                return Err(format!(
                    "parameter `threads` must be a multiple of 32 for focused (one ant per \
                     warp), found {t}"
                ));
            }
            params.local_search.warps = t / 32;
        }
        if let Some(r) = point.count("restart_stall")? {
            params.restart_stall = r;
        }
        if let Some(e) = point.count("min_new_edges")? {
            params.focused.min_new_edges = e;
        }
        if let Some(s) = point.text("source") {
            params.focused.source = crate::tsp::focused::SourceRule::from_name(&s)?;
        }
        if let Some(merge) = point.switch("merge")? {
            params.focused.merge = merge;
        }
        if let Some(or_opt) = point.switch("or_opt")? {
            params.focused.or_opt = or_opt;
        }
        if let Some(adapt) = point.switch("adapt")? {
            params.focused.adapt = adapt;
        }
        if let Some(lists) = point.text("lists") {
            params.focused.lists = crate::tsp::ListRule::from_name(&lists)?;
        }
        params.flags = point.flags().to_vec();
        Ok(params)
    }

    /// The algorithm with its construction, as `mats solve` reports a tuned bundle.
    fn variant_name(&self) -> &'static str {
        match (self.algorithm, self.construction) {
            (TspGpuAlgorithm::As, Construction::Task) => "as/task",
            (TspGpuAlgorithm::As, Construction::Data) => "as/data",
            (TspGpuAlgorithm::As, Construction::DataCompressed) => "as/data-compressed",
            (TspGpuAlgorithm::Mmas, Construction::Task) => "mmas/task",
            (TspGpuAlgorithm::Mmas, Construction::Data) => "mmas/data",
            (TspGpuAlgorithm::Mmas, Construction::DataCompressed) => "mmas/data-compressed",
            (TspGpuAlgorithm::Focused, _) => "focused",
        }
    }

    fn shape(&self) -> (u32, u32) {
        let threads = match self.algorithm {
            TspGpuAlgorithm::Focused => self.local_search.warps * 32,
            _ => self.threads_for(),
        };
        (
            u32::try_from(self.ants.unwrap_or(0)).unwrap_or(u32::MAX),
            threads,
        )
    }

    fn flags(&self) -> &[String] {
        &self.flags
    }

    fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        GpuParams::check(self, inst, device)
    }

    fn kernel_variant(&self, inst: &Instance, target: CompileTarget) -> Variant {
        self.variant_for(inst, target.arch)
    }

    fn prepare(
        &self,
        gpu: &kernels::gpu::Gpu,
        cache: &KernelCache,
        inst: &Instance,
    ) -> Result<Box<dyn crate::gpu::workload::PreparedRun>, KernelError> {
        Ok(match self.algorithm {
            TspGpuAlgorithm::As => Box::new(prepare(gpu, cache, inst, self)?),
            TspGpuAlgorithm::Mmas => Box::new(mmas::prepare(gpu, cache, inst, self)?),
            TspGpuAlgorithm::Focused => Box::new(focused::prepare(gpu, cache, inst, self)?),
        })
    }
}
