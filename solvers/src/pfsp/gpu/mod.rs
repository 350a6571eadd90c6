//! PFSP on the GPU: the host side of the CUDA variants in `kernels/pfsp/`.
//!
//! Each variant has a typed parameter set ([`GpuParams`], checked against the instance and the
//! device by [`GpuParams::check`]), the kernel variant it compiles ([`GpuParams::variant_for`],
//! specialised to n and m), a prepared state on the GPU ([`prepare`]: compiled, loaded, times
//! uploaded) and a run under a budget of iterations or wall time ([`Prepared::run`]) that
//! returns the best permutation, its makespan and the work counters. Callers re-score the
//! permutation on the CPU; the tests compare the tabu variants with the CPU tabu move by move.
//!
//! | variant | work unit | parameters (valid range) |
//! |---|---|---|
//! | `tabu-full` | thread per child of the swap neighbourhood, whole table | threads per block 32..1024 (multiple of 32; default 128, or 64/32 where 128 leaves SMs idle), tenure (default 200, as the CPU tabu) |
//! | `tabu-prefix` | one block builds the parent's table along anti-diagonals; thread per child from its first changed position | as `tabu-full` |
//! | `ig-block` | block per iterated-greedy walk | blocks (walks) 1..65535 (default: as many as are resident at once), threads per block 64..1024 (default 64), destruction d 1..64, at most n - 1 (default 4), temperature T (default 0.4), tables in shared or global memory (default: shared where they fit; global runs one walk per SM) |
//! | `ig-grid` | block per (job, walk): one step of a walk's best-improvement local search, every removal and best reinsertion at once; the walks run on the host ([`crate::pfsp::ig_grid`]) | walks 1..=64 (`--solutions`; default about 1024 / n), destruction d, temperature T, tabu steps and tenure; each block's tables in shared memory where two blocks fit on an SM, else the fused evaluation (tables per walk, 64 threads); `--layout global` puts each block's tables in global memory (threads 64..1024) |
//! | `ig-warp` | warp per iterated-greedy walk, `warps` walks per block | blocks = walks 1..2^24 (default: as many as are resident), warps per block 1..32 (default 4), destruction d_min..d_max (adaptive; default 2..6), temperature T, tie moves in the local search (default on), tables in shared or global memory (default: shared where 8 walks per SM fit) |
//!
//! Both iterated-greedy variants restart stalled walks between launches ([`restarts`]): from an
//! elite walk's best, or with `relink` (ig-block's default) from a sequence on the insertion path
//! between the walk's best and a member of an elite pool of `elite` sequences (1..=1024,
//! default 8; [`crate::pfsp::relink`]).
//!
//! Sizes: n in 2..=2048 (a move key holds the pair index in 22 bits), m in 1..=128 (a
//! completion row lives in registers); processing times must fit int32 and their sum below
//! 2^41 (a key holds the makespan in 42 bits). Completion times are int32 where the sum of all
//! processing times (which bounds every completion time of every sequence) is below 2^31,
//! else int64 (`PFSP_WIDE`). `ig-block` keeps its walk's tables in shared memory where they
//! fit, else in global memory (`tables`; the run's `layout` says which).

pub mod beam;
mod ig;
mod ig_grid;
mod ig_warp;
mod restarts;
mod tabu;

pub use tabu::{table_entry, threads_for, TabuList};

use cudarc::driver::CudaSlice;
use kernels::gpu::{DeviceInfo, FunctionAttributes, Gpu, Kernel, KernelClock, Launch};
use kernels::{CacheStatus, KernelCache, KernelError, Resources, Variant};

use super::tabu::TabuMove;
use super::Instance;
use crate::gpu::workload::{flag, SolveFlag};
use crate::gpu::workload::{CompileTarget, PointValues};
use crate::run::{Outcome, RunOptions};

pub use ig::{
    ig_shared_bytes, ig_table_bytes, IgLayout, IG_MAX_DESTRUCTION, IG_MAX_THREADS, IG_MIN_THREADS,
};
use ig_grid::grid_table_bytes;
pub use ig_grid::{GridTables, GRID_MAX_WALKS};
pub use ig_warp::{ig_warp_bytes, IgwTables, WalkState, IGW_MAX_WALKS, IGW_MAX_WARPS};

/// The largest n: pair indices of the swap neighbourhood take 22 bits of a move key.
pub const MAX_JOBS: usize = 2048;
/// The largest m: one completion row per thread lives in registers.
pub const MAX_MACHINES: usize = 128;
/// Makespans (bounded by the sum of all times) take at most 41 bits of a move key.
pub const MAX_TOTAL_TIME: i64 = 1 << 41;

/// The GPU variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum GpuAlgorithm {
    TabuFull,
    TabuPrefix,
    IgBlock,
    IgWarp,
    IgGrid,
}

impl GpuAlgorithm {
    pub const ALL: [GpuAlgorithm; 5] = [
        GpuAlgorithm::TabuFull,
        GpuAlgorithm::TabuPrefix,
        GpuAlgorithm::IgBlock,
        GpuAlgorithm::IgWarp,
        GpuAlgorithm::IgGrid,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GpuAlgorithm::TabuFull => "tabu-full",
            GpuAlgorithm::TabuPrefix => "tabu-prefix",
            GpuAlgorithm::IgBlock => "ig-block",
            GpuAlgorithm::IgWarp => "ig-warp",
            GpuAlgorithm::IgGrid => "ig-grid",
        }
    }

    pub fn from_name(name: &str) -> Result<GpuAlgorithm, String> {
        crate::gpu::by_name(
            &GpuAlgorithm::ALL,
            name,
            "pfsp GPU algorithm",
            GpuAlgorithm::name,
        )
    }

    /// The kernel source id.
    pub fn source(self) -> String {
        format!("pfsp/{}", self.name())
    }

    pub fn is_tabu(self) -> bool {
        matches!(self, GpuAlgorithm::TabuFull | GpuAlgorithm::TabuPrefix)
    }
}

/// How to run a GPU variant.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GpuParams {
    pub algorithm: GpuAlgorithm,
    /// Threads per block: of the neighbourhood kernel (tabu; 0 = 128, or fewer where that
    /// leaves SMs idle) or of each walk (ig-block).
    pub threads_per_block: u32,
    /// Tabu: how many iterations a selected sequence stays tabu (as the CPU `tabu`). ig-grid:
    /// how many tabu steps a moved job stays tabu (`pfsp::ig_grid::GridParams::tenure`).
    pub tenure: usize,
    /// Tabu: record every move (for the move-by-move tests; costs a vector push).
    #[serde(default)]
    pub trace: bool,
    /// ig-block: independent walks (blocks); 0 = as many as are resident at once.
    pub blocks: u32,
    /// ig-block: jobs removed per destruction (d).
    pub destruction: usize,
    /// ig-block: temperature factor T of the acceptance rule.
    pub temperature: f64,
    /// ig-block: iterations per walk per launch (0 = ~0.1 s launches under a time limit, a
    /// length from the instance's size without one: `next_chunk`).
    pub launch_iterations: u32,
    /// ig-block: a walk whose best has not improved for this many launches restarts from an
    /// elite solution (0 = never; see `relink`).
    pub restart_stall: u32,
    /// Extra NVRTC/ptxas flags (e.g. `-maxrregcount=64`, `--ptxas-options=-O2`).
    pub flags: Vec<String>,
    /// ig-warp: the largest destruction size (adaptive d in destruction..=destruction_max;
    /// equal to `destruction` for a fixed d).
    #[serde(default)]
    pub destruction_max: usize,
    /// ig-warp: plateau moves in the local search (an equal makespan at another position).
    #[serde(default)]
    pub ties: bool,
    /// ig-warp: walks (warps) per block.
    #[serde(default)]
    pub warps: u32,
    /// ig-block, ig-warp: where each walk's tables live (`--layout`, space dimension
    /// `tables`).
    #[serde(default)]
    pub tables: IgwTables,
    /// ig-block, ig-warp: a stalled walk restarts from the best sequence on the insertion path
    /// from its own best toward a random member of the elite pool, at least the largest
    /// destruction size of moves from both (`pfsp::relink`), instead of copying an elite walk's
    /// best. A space dimension (`relink`, 0/1). On by default for ig-block: measured on the
    /// H100 at n m / 2 x 30 ms, seeds 1-2, ta051/ta081/ta101: 0.195/1.337/0.583% mean gap
    /// against 0.208/1.606/0.699% with copy restarts (docs/pfsp-gpu.md). Off for ig-warp (not
    /// measured; at 800 x 60 one relink costs ~19 ms of host time per stalled walk). Bundles
    /// written before it existed keep copying (`false`).
    #[serde(default)]
    pub relink: bool,
    /// ig-block, ig-warp with `relink`: distinct sequences the elite pool keeps across
    /// launches (the walks' best, best first).
    #[serde(default = "default_elite")]
    pub elite: usize,
    /// ig-block, ig-warp: race restart configurations across the walks during the run
    /// (`--adapt`, [`crate::gpu::adapt`]): the configured restarts, the other rule (relink or
    /// copy), twice and half the stall; every round (0.25 s) a quarter of the worst arm's walks
    /// move to the arm whose walks' bests improved most. Off by default.
    #[serde(default)]
    pub adapt: bool,
    /// ig-block with its tables in global memory: walks per block, sharing one staged copy of
    /// the processing times (1..=[`IG_MAX_WALKS_PER_BLOCK`], default 1; `--walks-per-block`).
    /// At 800 x 60 one walk per block leaves 2 warps on an SM (docs/pfsp-gpu.md, Nsight
    /// Compute); more walks per block fill the schedulers at the same shared memory. **Not yet
    /// run on a GPU**: off by default and not a dimension of the shipped spaces until it is.
    #[serde(default = "one_walk")]
    pub walks_per_block: u32,
    /// ig-grid: tabu steps after each local optimum until this many in a row find no better
    /// sequence (`pfsp::ig_grid::GridParams::tabu_steps`; 0 = none, the default).
    #[serde(default)]
    pub tabu_steps: usize,
    /// ig-block, ig-grid: the walks start from the best sequences of an iterative
    /// bidirectional beam search of widths up to this one ([`beam`], `--beam W`), run before
    /// the walks within [`crate::run::START_SHARE`] of a time limit. 0: from NEH (what bundles
    /// written before it existed do). [`BEAM_AUTO`] (`mats solve`'s default, `--beam auto`):
    /// under a time limit up to [`beam::auto_width`], without one from NEH.
    #[serde(default)]
    pub beam: usize,
    /// With `beam`: the weight of the idle time in the beam's guide, in tenths of the bound's
    /// (`--beam-idle-weight`, default 0).
    #[serde(default)]
    pub beam_idle_weight: i64,
}

/// `beam` for "as wide as the time share and the memory allow, under a time limit only":
/// `mats solve`'s default for ig-block and ig-grid. On the H100 at n m / 2 x 30 ms it took
/// ta101-103 from 0.60-0.92% to 0.09-0.44% and VFR800_60_1 at 60 s from -0.24% to -0.60%
/// (docs/pfsp-gpu.md, "Walks from a beam search").
pub const BEAM_AUTO: usize = usize::MAX;

/// The most ig-block walks in one block (each synchronises on its own named barrier, 1..=8).
pub const IG_MAX_WALKS_PER_BLOCK: u32 = 8;

fn one_walk() -> u32 {
    1
}

/// The elite pool's size where nothing sets it.
pub const DEFAULT_ELITE: usize = 8;
/// The largest elite pool: every restart scans it for members unlike the walk's best.
pub const MAX_ELITE: usize = 1024;

fn default_elite() -> usize {
    DEFAULT_ELITE
}

impl GpuParams {
    pub fn new(algorithm: GpuAlgorithm) -> GpuParams {
        GpuParams {
            algorithm,
            threads_per_block: if matches!(algorithm, GpuAlgorithm::IgBlock | GpuAlgorithm::IgGrid)
            {
                64
            } else {
                128
            },
            tenure: super::TabuParams::default().tenure,
            trace: false,
            blocks: 0,
            destruction: 4,
            temperature: 0.4,
            launch_iterations: 0,
            restart_stall: 20,
            flags: Vec::new(),
            destruction_max: 0,
            ties: false,
            warps: 0,
            tables: IgwTables::Auto,
            relink: algorithm == GpuAlgorithm::IgBlock,
            elite: DEFAULT_ELITE,
            adapt: false,
            walks_per_block: 1,
            tabu_steps: 0,
            beam: 0,
            beam_idle_weight: 0,
        }
        .with_defaults()
    }

    /// The beam search's settings (`beam` is its widest width).
    pub fn beam_params(&self) -> crate::pfsp::beam::BeamParams {
        crate::pfsp::beam::BeamParams {
            width: self.beam,
            idle_weight: self.beam_idle_weight,
        }
    }

    /// The widest beam a run starts its walks from, if any: `beam` as set, or with
    /// [`BEAM_AUTO`] [`beam::auto_width`] under a time limit and none without one.
    pub fn beam_width(&self, inst: &Instance, timed: bool, total_memory: u64) -> Option<usize> {
        if !matches!(self.algorithm, GpuAlgorithm::IgBlock | GpuAlgorithm::IgGrid) {
            return None;
        }
        match self.beam {
            0 => None,
            BEAM_AUTO if timed => beam::auto_width(inst, total_memory, self.beam_idle_weight),
            BEAM_AUTO => None,
            w => Some(w),
        }
    }

    /// The variant's own defaults for the fields other variants ignore.
    fn with_defaults(mut self) -> GpuParams {
        if self.algorithm == GpuAlgorithm::IgGrid {
            self.tenure = crate::pfsp::ig_grid::DEFAULT_GRID_TENURE;
        }
        if self.algorithm == GpuAlgorithm::IgWarp {
            let walk = crate::pfsp::ig_warp::WalkParams::default();
            self.threads_per_block = 32 * 4;
            self.warps = 4;
            self.destruction = walk.d_min;
            self.destruction_max = walk.d_max;
            self.ties = walk.ties;
            self.temperature = walk.temperature;
        }
        self
    }

    /// Checks the configuration against the instance and the device; the message names the
    /// parameter or the limit.
    pub fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        let name = self.algorithm.name();
        let (n, m) = (inst.jobs, inst.machines);
        if !(2..=MAX_JOBS).contains(&n) {
            return Err(format!(
                "{name} supports 2..={MAX_JOBS} jobs (move keys hold the pair index in 22 bits), \
                 {} has {n}",
                inst.name
            ));
        }
        if m > MAX_MACHINES {
            return Err(format!(
                "{name} supports at most {MAX_MACHINES} machines (a completion row is kept in \
                 registers), {} has {m}",
                inst.name
            ));
        }
        let times = inst.times_machine_major();
        if times.iter().any(|&t| i32::try_from(t).is_err()) {
            return Err(format!(
                "{} has processing times outside int32, which the kernels store",
                inst.name
            ));
        }
        let total: i64 = times.iter().sum();
        if total >= MAX_TOTAL_TIME {
            return Err(format!(
                "{}: the sum of processing times ({total}) must stay below 2^41 (move keys)",
                inst.name
            ));
        }
        if !self.algorithm.is_tabu() && !(1..=MAX_ELITE).contains(&self.elite) {
            return Err(format!(
                "elite (the size of the restarts' pool) must be in 1..={MAX_ELITE}, got {}",
                self.elite
            ));
        }
        // `auto` picks its own width, but a weight out of range must not silently turn the
        // beam off (auto_width would find no width that passes the check).
        if self.beam == BEAM_AUTO && !(0..=100).contains(&self.beam_idle_weight) {
            return Err(format!(
                "beam idle weight must be in 0..=100 (tenths of the bound's), got {}",
                self.beam_idle_weight
            ));
        }
        if self.beam > 0 && self.beam != BEAM_AUTO {
            if !matches!(self.algorithm, GpuAlgorithm::IgBlock | GpuAlgorithm::IgGrid) {
                return Err(format!(
                    "--beam (a beam search before the walks) applies to ig-block and ig-grid, \
                     not {name}"
                ));
            }
            beam::check(inst, &self.beam_params(), device.total_memory_bytes)?;
        }
        if self.algorithm == GpuAlgorithm::IgWarp {
            return ig_warp::check(self, inst, device);
        }
        if self.algorithm == GpuAlgorithm::IgGrid {
            return self.check_grid(inst, device);
        }
        let t = self.threads_per_block;
        let auto = t == 0 && self.algorithm.is_tabu();
        if !auto && (t == 0 || t % 32 != 0 || t > 1024) {
            return Err(format!(
                "threads per block must be a multiple of 32 in 32..=1024, got {t}"
            ));
        }
        match self.algorithm {
            GpuAlgorithm::TabuFull | GpuAlgorithm::TabuPrefix => {
                if self.tenure > 1 << 20 {
                    return Err(format!("tenure must be at most 2^20, got {}", self.tenure));
                }
            }
            GpuAlgorithm::IgWarp | GpuAlgorithm::IgGrid => {}
            GpuAlgorithm::IgBlock => {
                if !(IG_MIN_THREADS..=IG_MAX_THREADS).contains(&t) {
                    return Err(format!(
                        "ig-block takes {IG_MIN_THREADS}..={IG_MAX_THREADS} threads per block \
                         (two warps build heads and tails side by side), got {t}"
                    ));
                }
                if self.blocks > 65535 {
                    return Err(format!(
                        "ig-block blocks must be in 1..=65535 (0 = as many as fit), got {}",
                        self.blocks
                    ));
                }
                self.check_destruction_and_temperature()?;
                let w = self.walks_per_block;
                if !(1..=IG_MAX_WALKS_PER_BLOCK).contains(&w) {
                    return Err(format!(
                        "walks per block must be in 1..={IG_MAX_WALKS_PER_BLOCK}, got {w}"
                    ));
                }
                if w > 1 && self.blocks % w != 0 {
                    return Err(format!(
                        "ig-block walks ({}) must be a multiple of the walks per block ({w})",
                        self.blocks
                    ));
                }
                if w * t > IG_MAX_THREADS {
                    return Err(format!(
                        "{w} walks per block of {t} threads each make {} threads per block; \
                         at most {IG_MAX_THREADS}",
                        w * t
                    ));
                }
                let shared = ig_shared_bytes(n, m, completion_fits_i32(inst));
                let optin = device.max_shared_bytes_per_block_optin as usize;
                let tables_in_shared = IgLayout::of(self, inst, optin).tables_in_shared();
                if w > 1 && tables_in_shared {
                    return Err(format!(
                        "walks per block {w} share the staged times of walks whose tables live \
                         in global memory; {n} jobs x {m} machines keep them in shared memory \
                         (use --layout global, or 1 walk per block)"
                    ));
                }
                let sequences = w as usize * ig::walk_shared_bytes(n);
                if w > 1 && sequences > optin {
                    return Err(format!(
                        "{w} walks per block of {n} jobs need {sequences} bytes of shared \
                         memory for their sequences, but {} offers {optin}; use fewer walks per \
                         block",
                        device.name
                    ));
                }
                if tables_in_shared && shared > optin {
                    return Err(format!(
                        "ig-block with tables shared: {n} jobs x {m} machines need {shared} \
                         bytes of shared memory per block, but {} offers {optin}; use tables \
                         global (or auto), ig-warp, tabu-full or tabu-prefix",
                        device.name
                    ));
                }
            }
        }
        Ok(())
    }

    /// The iterated greedy's destruction size and temperature (ig-block, ig-grid). Like the
    /// CPU `ig`, a walk removes at most n - 1 jobs (the drivers clamp d to it).
    fn check_destruction_and_temperature(&self) -> Result<(), String> {
        if self.destruction == 0 || self.destruction > IG_MAX_DESTRUCTION {
            return Err(format!(
                "destruction must be in 1..={IG_MAX_DESTRUCTION}, got {}",
                self.destruction
            ));
        }
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return Err(format!(
                "temperature must be a finite number >= 0, got {}",
                self.temperature
            ));
        }
        Ok(())
    }

    /// ig-grid's bounds: block size, walks, destruction, temperature, and its tables' memory.
    fn check_grid(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        let t = self.threads_per_block;
        let optin = device.max_shared_bytes_per_block_optin as usize;
        let tables = GridTables::of(self.tables, inst, optin);
        if tables == GridTables::PerWalk && t != 64 {
            return Err(format!(
                "ig-grid's fused evaluation (what --layout auto runs where two blocks' tables \
                 do not fit in shared memory, as here) runs two warps per block, one forward \
                 and one backward: threads per block must be 64, got {t} (--layout shared or \
                 global take {IG_MIN_THREADS}..={IG_MAX_THREADS})"
            ));
        }
        if !(IG_MIN_THREADS..=IG_MAX_THREADS).contains(&t) || t % 32 != 0 {
            return Err(format!(
                "ig-grid takes {IG_MIN_THREADS}..={IG_MAX_THREADS} threads per block, a multiple \
                 of 32 (two warps build heads and tails side by side), got {t}"
            ));
        }
        let walks = ig_grid::walks_of(self, inst.jobs);
        if !(1..=GRID_MAX_WALKS).contains(&walks) {
            return Err(format!(
                "ig-grid walks (--solutions) must be in 1..={GRID_MAX_WALKS}, got {walks}"
            ));
        }
        self.check_destruction_and_temperature()?;
        ig_grid::check_tables(inst, tables, optin)?;
        let bytes = grid_table_bytes(inst, walks as usize, tables);
        // A quarter of the device's memory at most: per-block tables grow as n^2 m walks, and
        // a run that cannot allocate them should say why before it starts.
        let budget = device.total_memory_bytes / 4;
        if bytes as u64 > budget {
            return Err(format!(
                "ig-grid with {walks} walks of {} jobs x {} machines needs {:.1} GB of tables in \
                 global memory, more than a quarter of {}'s {:.1} GB; use fewer walks \
                 (--solutions) or --layout auto",
                inst.jobs,
                inst.machines,
                bytes as f64 / 1e9,
                device.name,
                device.total_memory_bytes as f64 / 1e9
            ));
        }
        Ok(())
    }

    /// The variant to compile for an instance on an architecture (no device needed: the tuner
    /// compiles ahead of the GPU).
    /// `optin_shared`: the target's opt-in shared memory per block, which decides where
    /// ig-block's tables go.
    pub fn variant_for(
        &self,
        inst: &Instance,
        arch: kernels::Arch,
        optin_shared: usize,
    ) -> Variant {
        let mut v = Variant::new(&self.algorithm.source(), arch)
            .define("PFSP_N", inst.jobs)
            .define("PFSP_M", inst.machines)
            .define("PFSP_WIDE", u32::from(!completion_fits_i32(inst)));
        if self.algorithm == GpuAlgorithm::IgBlock {
            v = v.define("IG_THREADS", self.threads_per_block);
            // Defined only where it differs from the kernel's default, so the variants (and
            // cache keys) of shared tables stay as they were.
            if let IgLayout::GlobalTables { shared_times } = IgLayout::of(self, inst, optin_shared)
            {
                v = v.define("IG_GLOBAL_TABLES", 1);
                if shared_times {
                    v = v.define("IG_SHARED_TIMES", 1);
                }
                if self.walks_per_block > 1 {
                    v = v.define("IG_WALKS", self.walks_per_block);
                }
            }
        }
        if self.algorithm == GpuAlgorithm::IgGrid {
            v = v.define("IG_THREADS", self.threads_per_block);
            match GridTables::of(self.tables, inst, optin_shared) {
                GridTables::PerWalk => v = v.define("IG_GRID_FUSED", 1),
                GridTables::Global => v = v.define("IG_GLOBAL_TABLES", 1),
                GridTables::Shared => {}
            }
        }
        if self.algorithm == GpuAlgorithm::IgWarp {
            v = v.define("IGW_WARPS", self.warps).define(
                "IGW_SHARED_TABLES",
                u32::from(ig_warp::tables_in_shared(self, inst)),
            );
        }
        self.flags.iter().fold(v, |v, f| v.flag(f))
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

/// The flags only the iterated greedy variants take.
const IG: &[&str] = &["ig-block", "ig-warp"];
/// The flags every iterated greedy variant takes, ig-grid's walks included.
const IG_ALL: &[&str] = &["ig-block", "ig-warp", "ig-grid"];
/// The variants whose walks may start from a beam search.
const BEAM: &[&str] = &["ig-block", "ig-grid"];

impl crate::gpu::workload::GpuWorkload for GpuParams {
    const SOLVE_FLAGS: &'static [SolveFlag] = &[
        flag("--algo", &["variant"], &[]),
        flag("--threads", &["threads"], &[]),
        flag(
            "--tenure",
            &["tenure"],
            &["tabu-full", "tabu-prefix", "ig-grid"],
        ),
        flag("--tabu-steps", &["tabu_steps"], &["ig-grid"]),
        flag("--solutions", &["blocks"], IG_ALL),
        // A fixed destruction size: ig-warp's adaptive range collapses to it.
        flag("--destruction", &["destruction", "destruction_max"], IG_ALL),
        flag("--temperature", &["temperature"], IG_ALL),
        flag("--restart-stall", &["restart_stall"], IG),
        flag("--relink", &["relink"], IG),
        flag("--no-relink", &["relink"], IG),
        flag("--elite", &["elite"], IG),
        flag("--adapt", &["adapt"], IG),
        flag("--launch-iterations", &["launch_iterations"], IG),
        flag("--layout", &["tables"], IG_ALL),
        flag("--walks-per-block", &["walks_per_block"], &["ig-block"]),
        flag("--beam", &["beam"], BEAM),
        flag("--beam-idle-weight", &["beam_idle_weight"], BEAM),
    ];
    const SOLVE_DEFAULTS: &'static [(&'static str, &'static str)] =
        &[("variant", "ig-block"), ("beam", "auto")];
    const INSTANCE_VARIANTS: &'static [&'static str] = &["ig-grid"];

    type Instance = Instance;

    /// `variant` and where set `threads`, `tenure` (tabu), `blocks`, `destruction`,
    /// `temperature`, `launch_iterations`, `restart_stall`, `relink`, `elite` (ig-block,
    /// ig-warp), as `mats solve` takes them (`--solutions` is `blocks`).
    fn from_point(point: &dyn PointValues) -> Result<GpuParams, String> {
        if !point.defines().is_empty() {
            return Err("the pfsp kernels take no #define parameters from a space".into());
        }
        let algorithm =
            point.variant("pfsp: tabu-full, tabu-prefix, ig-block, ig-warp, ig-grid")?;
        let mut params = GpuParams::new(GpuAlgorithm::from_name(&algorithm)?);
        if let Some(t) = point.count("threads")? {
            params.threads_per_block = t;
        }
        if let Some(t) = point.count("tenure")? {
            params.tenure = t;
        }
        if let Some(b) = point.count("blocks")? {
            params.blocks = b;
        }
        if let Some(d) = point.count("destruction")? {
            params.destruction = d;
        }
        if let Some(t) = point.float("temperature")? {
            params.temperature = t;
        }
        if let Some(k) = point.count("launch_iterations")? {
            params.launch_iterations = k;
        }
        if let Some(k) = point.count("restart_stall")? {
            params.restart_stall = k;
        }
        if let Some(on) = point.switch("relink")? {
            params.relink = on;
        }
        if let Some(on) = point.switch("adapt")? {
            params.adapt = on;
        }
        if let Some(e) = point.count::<usize>("elite")? {
            if !(1..=MAX_ELITE).contains(&e) {
                return Err(format!(
                    "parameter `elite` must be in 1..={MAX_ELITE}, got {e}"
                ));
            }
            params.elite = e;
        }
        if let Some(d) = point.count("destruction_max")? {
            params.destruction_max = d;
        }
        if params.algorithm == GpuAlgorithm::IgWarp {
            // One walk per warp: `threads` (or `warps`) sets the walks per block.
            if let Some(t) = point.count::<u32>("threads")? {
                if t % 32 != 0 {
                    return Err(format!(
                        "parameter `threads` of ig-warp must be a multiple of 32 (one walk per \
                         warp), found {t}"
                    ));
                }
                params.warps = t / 32;
            }
            if let Some(w) = point.count::<u32>("warps")? {
                params.warps = w;
            }
            params.threads_per_block = 32 * params.warps;
        }
        if let Some(t) = point.count::<u32>("ties")? {
            params.ties = t != 0;
        }
        if let Some(t) = point.text("tables") {
            params.tables = IgwTables::from_name(&t)?;
        }
        if let Some(w) = point.count("walks_per_block")? {
            params.walks_per_block = w;
        }
        if let Some(k) = point.count("tabu_steps")? {
            params.tabu_steps = k;
        }
        if point.text("beam").is_some_and(|t| t == "auto") {
            params.beam = BEAM_AUTO;
        } else if let Some(w) = point.count("beam")? {
            params.beam = w;
        }
        if let Some(w) = point.count::<i64>("beam_idle_weight")? {
            params.beam_idle_weight = w;
        }
        if params.algorithm == GpuAlgorithm::IgWarp && params.destruction_max < params.destruction {
            params.destruction_max = params.destruction;
        }
        params.flags = point.flags().to_vec();
        Ok(params)
    }

    fn variant_name(&self) -> &'static str {
        self.algorithm.name()
    }

    fn shape(&self) -> (u32, u32) {
        (self.blocks, self.threads_per_block)
    }

    fn flags(&self) -> &[String] {
        &self.flags
    }

    fn check(&self, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
        GpuParams::check(self, inst, device)
    }

    /// ig-grid where an ig-block walk would keep its tables in global memory (800 x 60 and
    /// the like): there one ig-block walk per SM makes fewer iterations than a CPU core, and
    /// one walk spread over the chip went from 0.9% to below the best known in 60 s
    /// (docs/pfsp-gpu.md, "ig-grid").
    fn instance_variant(&self, inst: &Instance, device: &DeviceInfo) -> Option<&'static str> {
        let optin = device.max_shared_bytes_per_block_optin as usize;
        let global = !IgLayout::of(self, inst, optin).tables_in_shared();
        (self.algorithm == GpuAlgorithm::IgBlock && global).then_some(GpuAlgorithm::IgGrid.name())
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
        Ok(Box::new(prepare(gpu, cache, inst, self)?))
    }
}

impl crate::gpu::workload::PreparedRun for Prepared {
    fn run(
        &mut self,
        gpu: &Gpu,
        options: &RunOptions,
    ) -> Result<crate::gpu::workload::GpuRun, KernelError> {
        if let Some(island) = &self.island {
            self.starts = island.starts();
        }
        let run = Prepared::run(self, gpu, options)?;
        if let Some(island) = &mut self.island {
            island.saved = run.walk_bests;
        }
        Ok(crate::gpu::workload::GpuRun {
            outcome: run.outcome,
            kernel_seconds: run.kernel_seconds,
            launches: run.launches,
            cache: run.cache,
            compile_seconds: run.compile_seconds,
            resources: run.resources,
            attributes: run.attributes,
            launch: run.launch,
            entry: self.kernel.entry().to_string(),
            layout: match self.grid_tables {
                Some(tables) => Some(format!("{}, {} walks", tables.name(), self.launch.grid.1)),
                None => self.ig_layout.map(|l| match self.params.walks_per_block {
                    0 | 1 => l.name().to_string(),
                    w => format!("{}, {w} walks per block", l.name()),
                }),
            }
            .map(|layout| beam_layout(layout, run.beam_cap, run.beam)),
            blocks_per_sm: None,
            searches: self.grid_tables.map(|_| self.launch.grid.1),
            adaptation: run.adaptation,
        })
    }

    fn launch(&self) -> Launch {
        self.launch
    }

    fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    fn start_from(&mut self, starts: &[Vec<usize>]) -> bool {
        // The tabu variants follow one trajectory whose moves tests compare with the CPU tabu.
        if self.params.algorithm.is_tabu() {
            return false;
        }
        // A seed that is not a sequence of this instance's jobs is dropped rather than run.
        let seeds = starts
            .iter()
            .filter(|s| crate::permutation::check(s, self.inst.jobs).is_ok())
            .map(|s| (s.clone(), self.inst.makespan(s)))
            .collect();
        self.island.get_or_insert_default().seeds = seeds;
        true
    }
}

/// Whether int32 holds every completion time of every sequence: each is at most the sum of
/// all processing times.
pub fn completion_fits_i32(inst: &Instance) -> bool {
    inst.times_machine_major().iter().sum::<i64>() < 1 << 31
}

/// Processing times as the kernels read them: job-major, each row padded to a multiple of 4
/// machines with zeros (int4 loads).
pub fn padded_times(inst: &Instance) -> Vec<i32> {
    let mp = inst.machines.next_multiple_of(4);
    let mut out = vec![0i32; inst.jobs * mp];
    for job in 0..inst.jobs {
        for k in 0..inst.machines {
            out[job * mp + k] = inst.time(k, job) as i32;
        }
    }
    out
}

/// What a GPU run returns besides the outcome.
#[derive(Debug, Clone)]
pub struct GpuRun {
    /// Best permutation, its makespan, iterations (tabu iterations, or IG iterations summed
    /// over walks) and evaluations (neighbours: swaps for tabu, insertion positions for IG).
    pub outcome: Outcome,
    /// Sum of the launches' event times.
    pub kernel_seconds: f64,
    /// Wall time of the search after its start solution was built (NEH on the host): launches,
    /// transfers and the host's share of every iteration.
    pub search_seconds: f64,
    pub launches: u32,
    /// Tabu with `trace`: every move taken.
    pub moves: Vec<TabuMove>,
    /// ig-warp with `trace`: every walk's final state (the tests compare it with the CPU
    /// reference `solvers::pfsp::ig_warp`).
    pub walks: Vec<WalkState>,
    /// ig-block and ig-warp as an island: every walk's best (empty otherwise).
    pub walk_bests: WalkBests,
    /// With `adapt`: the restart arms and their walks at the end.
    pub adaptation: Option<String>,
    pub cache: CacheStatus,
    pub compile_seconds: f64,
    pub resources: Vec<Resources>,
    pub attributes: FunctionAttributes,
    pub launch: Launch,
    /// With `beam`: the widest beam the walks' starts came from and the best makespan among
    /// them (`None` when no beam ran or none finished within its share of the time limit).
    pub beam: Option<(usize, i64)>,
    /// The widest beam this run's search was allowed (`None` when no beam search ran: off,
    /// `auto` without a time limit, or an island's walks with starts of their own).
    pub beam_cap: Option<usize>,
}

/// The layout line of a run whose walks may start from a beam search: says where they
/// started, including when a beam search ran but finished no width within its share of the
/// time (the walks then start from NEH, which the user should not have to guess).
pub fn beam_layout(layout: String, cap: Option<usize>, finished: Option<(usize, i64)>) -> String {
    match (cap, finished) {
        (_, Some((w, best))) => {
            format!("{layout}, walks from a beam search of width {w} (best {best})")
        }
        (Some(cap), None) => format!(
            "{layout}, walks from NEH (no beam search of width up to {cap} finished within its \
             share of the time)"
        ),
        (None, None) => layout,
    }
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

/// A variant compiled, loaded and given its instance: what repeated runs share.
pub struct Prepared {
    // Keeps the loaded module (and so the kernels' code) alive.
    _module: kernels::gpu::Module,
    /// The main kernel: the neighbourhood evaluation (tabu) or the walk (ig-block).
    kernel: Kernel,
    /// tabu-prefix: the parent-table kernel.
    table_kernel: Option<Kernel>,
    launch: Launch,
    times: CudaSlice<i32>,
    inst: Instance,
    params: GpuParams,
    wide: bool,
    /// ig-block: where its walks keep their tables, decided once for this device.
    ig_layout: Option<IgLayout>,
    /// ig-grid: where its blocks keep their tables, decided once for this device.
    grid_tables: Option<GridTables>,
    cache: CacheStatus,
    compile_seconds: f64,
    resources: Vec<Resources>,
    /// ig-block and ig-warp as an island (`start_from`): its seeds and its walks' bests.
    island: Option<IslandWalks>,
    /// What the next run's walks start from (an island's seeds, then its walks' bests).
    starts: WalkBests,
    /// With `beam`: the beam search's kernels.
    beam: Option<beam::BeamKernels>,
}

/// What a beam search before the walks gives them: their starts (none where no beam ran),
/// the widest width completed with its best makespan, and the options the walks run under.
struct BeamStart {
    starts: Option<WalkBests>,
    beam: Option<(usize, i64)>,
    cap: Option<usize>,
    options: RunOptions,
}

/// Walks' start sequences with their makespans.
pub type WalkBests = Vec<(Vec<usize>, i64)>;

/// An island's walks between epochs: the seeds the first walks of the next run start from, and
/// every walk's best as the last run left it, from which the others continue.
#[derive(Debug, Default)]
struct IslandWalks {
    seeds: WalkBests,
    saved: WalkBests,
}

impl IslandWalks {
    fn starts(&self) -> WalkBests {
        let rest = self.saved.iter().skip(self.seeds.len());
        self.seeds.iter().chain(rest).cloned().collect()
    }
}

/// Every walk's best sequence and makespan (an island keeps them for its next epoch); empty
/// where the run is not an island's.
pub(super) fn walk_bests(
    prepared: &Prepared,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    best: &CudaSlice<i32>,
    values: &[i64],
) -> Result<WalkBests, KernelError> {
    if prepared.island.is_none() {
        return Ok(Vec::new());
    }
    let n = prepared.inst.jobs;
    let rows = stream
        .clone_dtoh(best)
        .map_err(driver("reading the walks' bests"))?;
    Ok(rows
        .chunks(n)
        .zip(values)
        .map(|(row, &v)| (row.iter().map(|&j| j.max(0) as usize).collect(), v))
        .collect())
}

/// Checks the configuration, compiles (through the cache), loads and uploads the times.
pub fn prepare(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
) -> Result<Prepared, KernelError> {
    params
        .check(inst, &gpu.info)
        .map_err(KernelError::InvalidConfig)?;
    let variant = params.variant_for(
        inst,
        gpu.info.arch,
        gpu.info.max_shared_bytes_per_block_optin as usize,
    );
    let (compiled, cache_status) = cache.get_or_compile(&variant)?;
    let module = gpu.load(&compiled)?;
    let optin = gpu.info.max_shared_bytes_per_block_optin as usize;
    let ig_layout = IgLayout::of(params, inst, optin);
    let grid_tables = GridTables::of(params.tables, inst, optin);
    let (kernel, table_kernel, launch) = match params.algorithm {
        GpuAlgorithm::TabuFull | GpuAlgorithm::TabuPrefix => {
            tabu::kernels(&module, gpu, inst, params)?
        }
        GpuAlgorithm::IgBlock => ig::kernels(&module, gpu, inst, params, ig_layout)?,
        GpuAlgorithm::IgWarp => ig_warp::kernels(&module, gpu, inst, params)?,
        GpuAlgorithm::IgGrid => ig_grid::kernels(&module, inst, params, grid_tables)?,
    };
    let times = gpu
        .stream()
        .clone_htod(&padded_times(inst))
        .map_err(driver("uploading processing times"))?;
    Ok(Prepared {
        _module: module,
        kernel,
        table_kernel,
        launch,
        times,
        inst: inst.clone(),
        params: params.clone(),
        wide: !completion_fits_i32(inst),
        ig_layout: (params.algorithm == GpuAlgorithm::IgBlock).then_some(ig_layout),
        grid_tables: (params.algorithm == GpuAlgorithm::IgGrid).then_some(grid_tables),
        cache: cache_status,
        compile_seconds: compiled.compile_seconds,
        resources: compiled.resources.clone(),
        island: None,
        starts: Vec::new(),
        beam: match params.beam_width(inst, true, gpu.info.total_memory_bytes) {
            None => None,
            Some(_) => Some(beam::BeamKernels::load(gpu, cache, inst, &params.flags)?),
        },
    })
}

/// Every walk's start sequence (job-major rows) and makespan: walk i < `seeds.len()` from
/// seed i, the others from the run's own `start`.
pub(super) fn walk_starts(
    walks: usize,
    start: &[usize],
    start_value: i64,
    seeds: &[(Vec<usize>, i64)],
) -> (Vec<i32>, Vec<i64>) {
    let mut rows = Vec::with_capacity(walks * start.len());
    let mut values = Vec::with_capacity(walks);
    for walk in 0..walks {
        let (seq, value) = match seeds.get(walk) {
            Some((seq, value)) => (&seq[..], *value),
            None => (start, start_value),
        };
        rows.extend(seq.iter().map(|&j| j as i32));
        values.push(value);
    }
    (rows, values)
}

impl Prepared {
    /// The main kernel's launch configuration.
    pub fn launch(&self) -> Launch {
        self.launch
    }

    /// The main kernel (registers, local memory).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// One run under `options.budget` (iterations: tabu iterations, or IG iterations per walk;
    /// or a time limit) from NEH (tabu) or seeded walks (ig-block).
    pub fn run(&self, gpu: &Gpu, options: &RunOptions) -> Result<GpuRun, KernelError> {
        // Started before the beam search, so a target or trace times the whole run.
        let watch = options.budget.watch();
        let mut timer = KernelClock::new(gpu)?;
        let mut walk_states = Vec::new();
        let mut walk_bests = Vec::new();
        let mut adaptation = None;
        let BeamStart {
            starts: beam_starts,
            beam,
            cap: beam_cap,
            options,
        } = self.beam_starts(gpu, options)?;
        if let Some((_, best)) = beam {
            watch.offer(best);
        }
        let starts = beam_starts.as_ref().unwrap_or(&self.starts);
        let options = &options;
        let (outcome, moves) = match self.params.algorithm {
            GpuAlgorithm::TabuFull | GpuAlgorithm::TabuPrefix => {
                tabu::run(self, gpu, &mut timer, options)?
            }
            GpuAlgorithm::IgBlock => {
                let (outcome, bests, adapted) = ig::run(self, gpu, &mut timer, options, starts)?;
                walk_bests = bests;
                adaptation = adapted;
                (outcome, Vec::new())
            }
            GpuAlgorithm::IgGrid => {
                let (outcome, bests) = ig_grid::run(self, gpu, &mut timer, options, starts)?;
                walk_bests = bests;
                (outcome, Vec::new())
            }
            GpuAlgorithm::IgWarp => {
                let (outcome, walks, bests, adapted) =
                    ig_warp::run(self, gpu, &mut timer, options)?;
                walk_states = walks;
                walk_bests = bests;
                adaptation = adapted;
                (outcome, Vec::new())
            }
        };
        Ok(GpuRun {
            outcome,
            kernel_seconds: timer.seconds,
            search_seconds: timer.search_seconds,
            launches: u32::try_from(timer.launches).unwrap_or(u32::MAX),
            moves,
            walks: walk_states,
            walk_bests,
            adaptation,
            cache: self.cache,
            compile_seconds: self.compile_seconds,
            resources: self.resources.clone(),
            attributes: self.kernel.attributes,
            launch: self.launch,
            beam,
            beam_cap,
        })
    }

    /// With `beam` and nothing else to start from (an island's walks have their own
    /// starts): the iterative beam search's best sequences as the walks' starts, the widest
    /// width it completed, and the options the walks run under (the time the beam took taken
    /// off a time limit).
    fn beam_starts(&self, gpu: &Gpu, options: &RunOptions) -> Result<BeamStart, KernelError> {
        let timed = options.budget.time_limit.is_some();
        let width = self
            .params
            .beam_width(&self.inst, timed, gpu.info.total_memory_bytes);
        let (Some(kernels), Some(width), true) = (&self.beam, width, self.starts.is_empty()) else {
            return Ok(BeamStart {
                starts: None,
                beam: None,
                cap: None,
                options: options.clone(),
            });
        };
        let started = std::time::Instant::now();
        let walks = match self.params.algorithm {
            GpuAlgorithm::IgGrid => self.launch.grid.1 as usize,
            _ => (self.launch.grid.0 * self.params.walks_per_block.max(1)) as usize,
        };
        let share = beam_share(&options.budget);
        let (starts, widest) = beam::iterative(
            kernels,
            gpu,
            &self.inst,
            &self.times,
            &crate::pfsp::beam::BeamParams {
                width,
                ..self.params.beam_params()
            },
            walks,
            share,
        )?;
        let mut rest = options.clone();
        if let Some(limit) = rest.budget.time_limit.as_mut() {
            *limit = limit.saturating_sub(started.elapsed());
        }
        let best = starts.first().map(|(_, v)| *v);
        Ok(BeamStart {
            starts: Some(starts),
            beam: best.filter(|_| widest > 0).map(|v| (widest, v)),
            cap: Some(width),
            options: rest,
        })
    }
}

/// The time a beam search before the walks may take: [`crate::run::START_SHARE`] of the time limit,
/// or of the whole solve where the run is an island's first epoch (`start_basis`), so that its
/// beam is as wide as a one-GPU run's; never beyond the run's own limit. None: no limit.
pub fn beam_share(budget: &crate::run::Budget) -> Option<std::time::Duration> {
    let limit = budget.time_limit;
    budget
        .start_basis
        .or(limit)
        .map(|basis| basis.mul_f64(crate::run::START_SHARE))
        .map(|share| limit.map_or(share, |l| share.min(l)))
}

/// After a launch of walks: where anything listens (a target, a trace), reads the walks'
/// bests and reports the least; true once the target is reached. Without a listener nothing
/// is read, so untargeted runs keep their pace.
pub(super) fn offer_best(
    watch: &crate::run::Watch,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    best_values: &CudaSlice<i64>,
) -> Result<bool, KernelError> {
    if !watch.is_listening() {
        return Ok(false);
    }
    let values = stream
        .clone_dtoh(best_values)
        .map_err(driver("reading the walks' bests"))?;
    Ok(values.iter().min().is_some_and(|&best| watch.offer(best)))
}

/// Iterations per walk for the next launch of an iterated-greedy driver
/// ([`crate::gpu::launches`]: paced under a deadline, at most `launch_iterations` where that is
/// set). Without a deadline and a set `launch_iterations`, a length from the instance's size
/// alone: about 0.1 s of work with every walk resident on an H100 or H200 (measured there:
/// ~24 iterations per walk at 100 x 20, ~8 at 200 x 20, under one at 800 x 60; the cost of an
/// iteration grows as about n^1.5 m with the walks' local search).
pub(crate) fn next_chunk(
    seconds: f64,
    this: i32,
    deadline: Option<std::time::Instant>,
    now: std::time::Instant,
    launch_iterations: u32,
    (n, m): (usize, usize),
) -> u64 {
    let fixed = (480_000.0 / ((n.max(1) as f64).powf(1.5) * m.max(1) as f64)) as u64;
    crate::gpu::launches::next_launch(
        (this.max(1) as u64, seconds),
        deadline,
        now,
        Some(u64::from(launch_iterations)),
        fixed,
    )
}

fn driver(what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> KernelError {
    KernelError::driver(what.to_string())
}

/// The pair index of swap (i, j), i < j, in the kernels' row-major order.
pub fn pair_index(n: usize, i: usize, j: usize) -> usize {
    i * (2 * n - i - 1) / 2 + (j - i - 1)
}

/// The swap (i, j) of a pair index (inverse of [`pair_index`]).
pub fn pair_of(n: usize, k: usize) -> (usize, usize) {
    let mut i = 0;
    let mut offset = 0;
    while offset + (n - 1 - i) <= k {
        offset += n - 1 - i;
        i += 1;
    }
    (i, i + 1 + (k - offset))
}

#[cfg(test)]
mod tests {
    use super::{beam_share, next_chunk, walk_starts};

    #[test]
    fn an_islands_first_epoch_gives_its_beam_the_whole_solves_share() {
        use crate::run::Budget;
        use std::time::Duration;
        let secs = Duration::from_secs;
        let run = Budget::time_limit(secs(10));
        assert_eq!(beam_share(&run), Some(secs(2)), "a fifth of a one-GPU run");
        // An island's first epoch of 3 s in a 10 s solve: the beam gets the 2 s a one-GPU run
        // would, not a fifth of the epoch.
        let epoch = Budget {
            start_basis: Some(secs(10)),
            ..Budget::time_limit(secs(3))
        };
        assert_eq!(beam_share(&epoch), Some(secs(2)));
        // Never past the epoch's own limit.
        let short = Budget {
            start_basis: Some(secs(60)),
            ..Budget::time_limit(secs(3))
        };
        assert_eq!(beam_share(&short), Some(secs(3)));
        assert_eq!(beam_share(&Budget::iterations(5)), None);
    }

    #[test]
    fn iteration_budget_launches_follow_the_size_not_the_pace() {
        let now = std::time::Instant::now();
        for (size, expected) in [
            ((50, 20), 67),
            ((100, 20), 24),
            ((200, 20), 8),
            ((800, 60), 1),
        ] {
            for seconds in [1e-6, 0.01, 5.0] {
                assert_eq!(
                    next_chunk(seconds, 3, None, now, 0, size),
                    expected,
                    "{size:?}"
                );
            }
            // A configured launch length wins.
            assert_eq!(next_chunk(0.01, 3, None, now, 5, size), 5);
        }
        // Under a time limit the pace decides: 10 ms per iteration is 10 in 100 ms.
        let deadline = Some(now + std::time::Duration::from_secs(9));
        assert_eq!(next_chunk(0.03, 3, deadline, now, 0, (100, 20)), 10);
    }

    #[test]
    fn seeded_walks_come_first_and_the_rest_start_from_the_runs_start() {
        let seeds = vec![(vec![2, 0, 1], 30), (vec![1, 2, 0], 31)];
        let (rows, values) = walk_starts(4, &[0, 1, 2], 40, &seeds);
        assert_eq!(rows, vec![2, 0, 1, 1, 2, 0, 0, 1, 2, 0, 1, 2]);
        assert_eq!(values, vec![30, 31, 40, 40]);
        // More seeds than walks: the first walks take the first seeds.
        let (rows, values) = walk_starts(1, &[0, 1, 2], 40, &seeds);
        assert_eq!((rows, values), (vec![2, 0, 1], vec![30]));
    }
}
