//! Focused ant colony on the GPU (`--algo focused`): the host side of `kernels/tsp/focused.cu`,
//! the counterpart of the CPU [`crate::tsp::focused`] (same source-tour rules, trail limits
//! and deposit schedule; see that module for the algorithm).
//!
//! Per iteration: one launch builds and searches every ant's tour (a warp per ant: bounded walk
//! from the source tour, copy of the rest, 2-opt and Or-opt around the changed edges, exact
//! length); the m lengths and move counts are read back; the iteration's best row is copied
//! on the device into the best-so-far buffers when it improves them (the host reads a tour
//! only at the end); one launch evaporates and deposits on the n x k candidate edges and
//! refreshes their choice weights. Nothing is n x n: memory is O(n k + m n) (16 n bytes per
//! ant: tour, positions and two stamp rows), checked against the device before allocating.
//!
//! The first tour is the CPU's ([`crate::tsp::focused::initial_tour`] brought to a local
//! optimum by the CPU's search), computed in every run and counted in its time.

use cudarc::driver::{CudaSlice, CudaStream, CudaView, DevicePtr, PushKernelArg};
use kernels::gpu::{DeviceInfo, Gpu, Kernel, KernelClock, Launch, Module};
use kernels::{CacheStatus, KernelCache, KernelError, Resources, Variant};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use super::ant_system::{check_tour, TspGpuRun};
use super::colony::{dist_define, driver, list_length, upload_instance, uses_matrix};
use super::GpuParams;
use crate::gpu::adapt::{self, Race};
use crate::run::{stream_rng, Outcome, RunOptions};
use crate::tsp::focused::tour::{local_optimum, ActiveQueue, LsStats, Neighbours, Tour};
use crate::tsp::focused::{
    deposits_best, initial_tour, trail_limits, SourceRule, DEFAULT_FOCUSED_ITERATIONS,
};
use crate::tsp::{CandidateLists, Instance, ListRule};

/// Longest candidate list of the focused kernel (one candidate per lane).
pub const MAX_FOCUSED_CANDIDATES: usize = 32;
/// Most list entries its local search tries (one per half-warp lane).
pub const MAX_FOCUSED_LS_NEIGHBOURS: u32 = 16;
/// Most ants (warps) per block: the active-city rings and gap lists of a block's warps are
/// static shared memory, which stops at 48 KiB.
pub const MAX_FOCUSED_WARPS: u32 = 8;
/// Ring capacity of a warp's queue of active cities.
const QUEUE: usize = 1024;
/// Walked cities of one construction at most.
const MAX_WALK: usize = 256;
/// Threads of the pheromone kernel's blocks.
const STRIDE_THREADS: u32 = 256;
/// Cities an ant may list as touched for merging (beyond: the ant is not merged).
const TOUCH_CAP: usize = 512;
/// Improving ants one iteration tries to merge, best first.
const MAX_MERGE: usize = 256;

/// What `focused` takes beside the colony's `ants`, `alpha`, `beta`, `rho`, `candidates` and
/// `local_search` (`neighbours` tried per city, `warps`: ants per block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusedGpuParams {
    /// New edges (not in the source) each construction makes before copying the rest.
    pub min_new_edges: usize,
    /// `best` or `iteration` (`own` keeps m source tours: the CPU only).
    pub source: SourceRule,
    /// Or-opt after 2-opt.
    pub or_opt: bool,
    /// Merge the changes of every improving ant that touches a stretch of the source no
    /// better ant touched (see [`Prepared::merge_improvements`]), instead of keeping only the
    /// iteration's best.
    #[serde(default)]
    pub merge: bool,
    /// Race the number of new edges per construction within the run (`--adapt`, [`edge_arms`]).
    #[serde(default)]
    pub adapt: bool,
    /// Nearest or quadrant candidate lists (bundles written before quadrant lists keep
    /// nearest ones).
    #[serde(default = "ListRule::nearest")]
    pub lists: ListRule,
}

impl Default for FocusedGpuParams {
    fn default() -> Self {
        let cpu = crate::tsp::focused::FocusedParams::default();
        FocusedGpuParams {
            min_new_edges: cpu.min_new_edges,
            source: cpu.source,
            or_opt: cpu.or_opt,
            merge: false,
            adapt: false,
            lists: cpu.lists,
        }
    }
}

/// The numbers of new edges `--adapt` races, the run's `d` first: d / 2, 3 d / 4, 3 d / 2 and
/// 2 d (at least 1, at most a walk's cities), repeats dropped. On the H100 16 beat 8 and 4 on
/// pr2392 and rl11849 at 10 s (docs/tsp-gpu.md); larger changes were never measured, and how
/// much change pays may shift over a run as the tour improves, which is what a race can follow.
pub fn edge_arms(d: usize) -> Vec<usize> {
    let clamp = |e: usize| e.clamp(1, MAX_WALK - 1);
    adapt::arms(clamp(d), [d / 2, 3 * d / 4, 3 * d / 2, 2 * d].map(clamp))
}

/// The kernel variant of a configuration for an instance.
pub fn variant(params: &GpuParams, inst: &Instance, arch: kernels::Arch) -> Variant {
    let v = Variant::new("tsp/focused", arch)
        .define("TSP_DIST", dist_define(inst))
        .define("TSP_K", list_length(inst, params.candidates))
        .define("LS_NEIGHBOURS", params.local_search.neighbours)
        .define("FOCUSED_WARPS", params.local_search.warps)
        .define("FOCUSED_OR_OPT", u32::from(params.focused.or_opt))
        .define("FOCUSED_QUEUE", QUEUE)
        .define("FOCUSED_MAX_WALK", MAX_WALK);
    params.flags.iter().fold(v, |v, f| v.flag(f))
}

/// Device bytes of a run: instance (coordinates or matrix, lists), n x k pheromone and
/// weights, source and best tours (with positions), and per ant its tour, positions and two
/// stamp rows with its length and move count.
pub fn device_bytes(params: &GpuParams, inst: &Instance) -> u64 {
    let n = inst.n() as u64;
    let k = list_length(inst, params.candidates) as u64;
    let m = params.ants.unwrap_or(1) as u64;
    let instance = if uses_matrix(inst) { 4 * n * n } else { 16 * n };
    let merge = if params.focused.merge { 8 * n } else { 0 };
    instance + 12 * n * k + 16 * n + merge + m * per_ant_bytes(params, inst)
}

/// Device bytes of one ant: its tour, positions and two stamp rows, its length, move count and
/// number of new edges, and with `merge` its touched cities.
fn per_ant_bytes(params: &GpuParams, inst: &Instance) -> u64 {
    let merge = if params.focused.merge {
        4 * TOUCH_CAP as u64 + 4
    } else {
        0
    };
    16 * inst.n() as u64 + 20 + merge
}

/// The checks of [`GpuParams::check`] for `focused`; messages name the parameter.
pub fn check(params: &GpuParams, inst: &Instance, device: &DeviceInfo) -> Result<(), String> {
    let n = inst.n();
    if n < 8 {
        return Err(format!(
            "the GPU focused colony needs at least 8 cities, {} has {n}",
            inst.name
        ));
    }
    let m = params.ants.unwrap_or(0);
    if m == 0 || m > 1 << 20 {
        return Err(format!(
            "parameter `ants` must be in 1..=1048576 for focused on the GPU, found {m}"
        ));
    }
    if params.candidates == 0 || params.candidates > MAX_FOCUSED_CANDIDATES {
        return Err(format!(
            "parameter `candidates` must be in 1..={MAX_FOCUSED_CANDIDATES} for focused on the \
             GPU (one candidate per lane), found {}",
            params.candidates
        ));
    }
    let k = list_length(inst, params.candidates);
    let width = params.local_search.neighbours;
    if width == 0 || width > MAX_FOCUSED_LS_NEIGHBOURS || width as usize > k {
        return Err(format!(
            "parameter `ls_neighbours` must be in 1..={} for focused on the GPU (at most 16 and \
             the list length), found {width}",
            MAX_FOCUSED_LS_NEIGHBOURS.min(k as u32)
        ));
    }
    let warps = params.local_search.warps;
    if warps == 0 || warps > MAX_FOCUSED_WARPS {
        // `threads` sets it (one ant per warp; `--threads` on the command line).
        return Err(format!(
            "parameter `threads` must be in 32..={} for focused (32 per ant, at most \
             {MAX_FOCUSED_WARPS} ants per block), found {}",
            32 * MAX_FOCUSED_WARPS,
            32 * warps
        ));
    }
    if params.focused.min_new_edges == 0 {
        return Err("parameter `min_new_edges` must be at least 1".into());
    }
    if params.focused.source == SourceRule::Own {
        return Err(
            "parameter `source` = `own` keeps one source tour per ant: it runs on the CPU only \
             (--backend cpu); the GPU takes `best` or `iteration`"
                .into(),
        );
    }
    params.as_params().check()?;
    super::colony::matrix_fits_i32(inst)?;
    let need = device_bytes(params, inst);
    let have = device.total_memory_bytes as f64 * super::MEMORY_SHARE;
    if need as f64 > have {
        const GIB: f64 = (1u64 << 30) as f64;
        let per_ant = per_ant_bytes(params, inst);
        let fit = ((have - (need - m as u64 * per_ant) as f64) / per_ant as f64).max(0.0) as u64;
        return Err(format!(
            "the GPU focused colony on {} ({n} cities, {m} ants) needs {:.1} GiB, more than \
             {:.0}% of {}'s {:.1} GiB; at most about {fit} ants fit (--ants)",
            inst.name,
            need as f64 / GIB,
            super::MEMORY_SHARE * 100.0,
            device.name,
            device.total_memory_bytes as f64 / GIB
        ));
    }
    Ok(())
}

/// A tour on the device with the position of every city.
struct DeviceTour {
    order: CudaSlice<i32>,
    pos: CudaSlice<i32>,
}

impl DeviceTour {
    fn new(stream: &Arc<CudaStream>, n: usize, what: &str) -> Result<DeviceTour, KernelError> {
        Ok(DeviceTour {
            order: stream
                .alloc_zeros::<i32>(n)
                .map_err(driver(format!("allocating the {what} tour")))?,
            pos: stream
                .alloc_zeros::<i32>(n)
                .map_err(driver(format!("allocating the {what} positions")))?,
        })
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, order: &[u32]) -> Result<(), KernelError> {
        let mut pos = vec![0i32; order.len()];
        for (i, &c) in order.iter().enumerate() {
            pos[c as usize] = i as i32;
        }
        let order: Vec<i32> = order.iter().map(|&c| c as i32).collect();
        stream
            .memcpy_htod(&order, &mut self.order)
            .map_err(driver("uploading a tour"))?;
        stream
            .memcpy_htod(&pos, &mut self.pos)
            .map_err(driver("uploading a tour's positions"))
    }
}

/// The ants' rows: tours, positions and the visited / queued stamps.
struct AntRows {
    orders: CudaSlice<i32>,
    positions: CudaSlice<i32>,
    visited: CudaSlice<u32>,
    queued: CudaSlice<u32>,
    lengths: CudaSlice<i64>,
    moves: CudaSlice<i64>,
    /// SM cycles each ant's warp spent in the last launch (what `--adapt` charges an arm).
    cycles: CudaSlice<i64>,
    /// New edges each ant's walk makes (the run's `min_new_edges`, or its arm's under
    /// `--adapt`).
    new_edges: CudaSlice<i32>,
}

/// What merging needs: each ant's touched cities, the merged tour and the merge plan.
struct Merging {
    kernel: Kernel,
    touched: CudaSlice<i32>,
    touched_count: CudaSlice<i32>,
    merged: DeviceTour,
    plan: CudaSlice<i32>,
    /// Merges made (ants beyond the first, over all iterations of the run).
    merged_ants: u64,
}

/// A tour on the device: an ant's row, the merged tour, the best so far or the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    Ant(usize),
    Merged,
    Best,
    Source,
}

/// Compiled kernels, the instance and the colony on the device: what repeated runs share.
pub struct Prepared {
    _module: Module,
    ants_kernel: Kernel,
    pheromone_kernel: Kernel,
    launch: Launch,
    pheromone_launch: Launch,
    stream: Arc<CudaStream>,
    coords: Option<CudaSlice<f64>>,
    matrix: Option<CudaSlice<i32>>,
    cand: CudaSlice<i32>,
    tau: CudaSlice<f32>,
    weight: CudaSlice<f32>,
    rows: AntRows,
    merging: Option<Merging>,
    source: DeviceTour,
    best: DeviceTour,
    lists: Vec<u32>,
    k: usize,
    inst: Instance,
    params: GpuParams,
    /// An island's start (`start_from`): the best exchanged tour.
    start: Option<(i64, Vec<u32>)>,
    /// Iterations launched on these rows over all runs: the kernel's stamps, which must never
    /// repeat while a row may still hold them.
    stamps: u64,
    cache: CacheStatus,
    compile_seconds: f64,
    resources: Vec<Resources>,
}

/// Checks, compiles (through the cache), uploads and allocates.
pub fn prepare(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
) -> Result<Prepared, KernelError> {
    check(params, inst, &gpu.info).map_err(KernelError::InvalidConfig)?;
    let (n, m) = (inst.n(), params.ants.unwrap_or(1));
    let k = list_length(inst, params.candidates);
    let (compiled, cache_status) = cache.get_or_compile(&variant(params, inst, gpu.info.arch))?;
    let module = gpu.load(&compiled)?;
    let ants_kernel = module.function("tsp_focused_ants")?;
    let pheromone_kernel = module.function("tsp_focused_pheromone")?;
    let warps = params.local_search.warps;
    let launch = Launch::linear(m.div_ceil(warps as usize) as u32, warps * 32);
    ants_kernel.check_launch(&launch)?;
    let stride_blocks = (n * k)
        .div_ceil(STRIDE_THREADS as usize)
        .clamp(1, gpu.info.sm_count.max(1) as usize * 8);
    let pheromone_launch = Launch::linear(stride_blocks as u32, STRIDE_THREADS);
    let stream = gpu.stream().clone();
    let (coords, matrix) = upload_instance(&stream, inst)?;
    let lists: Vec<u32> = CandidateLists::by_rule(inst, k, params.focused.lists)
        .as_slice()
        .iter()
        .map(|&c| c as u32)
        .collect();
    let device_lists: Vec<i32> = lists.iter().map(|&c| c as i32).collect();
    let cand = stream
        .clone_htod(&device_lists)
        .map_err(driver("uploading the candidate lists"))?;
    let alloc_f32 = |what: &str| {
        stream
            .alloc_zeros::<f32>(n * k)
            .map_err(driver(format!("allocating {what}")))
    };
    let (tau, weight) = (
        alloc_f32("the pheromone")?,
        alloc_f32("the choice weights")?,
    );
    let rows = AntRows {
        orders: stream
            .alloc_zeros::<i32>(m * n)
            .map_err(driver("allocating the ants' tours"))?,
        positions: stream
            .alloc_zeros::<i32>(m * n)
            .map_err(driver("allocating the ants' positions"))?,
        visited: stream
            .alloc_zeros::<u32>(m * n)
            .map_err(driver("allocating the ants' visited stamps"))?,
        queued: stream
            .alloc_zeros::<u32>(m * n)
            .map_err(driver("allocating the ants' queue stamps"))?,
        lengths: stream
            .alloc_zeros::<i64>(m)
            .map_err(driver("allocating the ants' lengths"))?,
        moves: stream
            .alloc_zeros::<i64>(m)
            .map_err(driver("allocating the ants' move counts"))?,
        cycles: stream
            .alloc_zeros::<i64>(m)
            .map_err(driver("allocating the ants' cycle counts"))?,
        new_edges: stream
            .alloc_zeros::<i32>(m)
            .map_err(driver("allocating the ants' new-edge counts"))?,
    };
    let merging = if params.focused.merge {
        Some(Merging {
            kernel: module.function("tsp_focused_merge")?,
            touched: stream
                .alloc_zeros::<i32>(m * TOUCH_CAP)
                .map_err(driver("allocating the ants' touched cities"))?,
            touched_count: stream
                .alloc_zeros::<i32>(m)
                .map_err(driver("allocating the ants' touched counts"))?,
            merged: DeviceTour::new(&stream, n, "merged")?,
            plan: stream
                .alloc_zeros::<i32>(5 * MAX_MERGE)
                .map_err(driver("allocating the merge plan"))?,
            merged_ants: 0,
        })
    } else {
        None
    };
    Ok(Prepared {
        merging,
        _module: module,
        ants_kernel,
        pheromone_kernel,
        launch,
        pheromone_launch,
        source: DeviceTour::new(&stream, n, "source")?,
        best: DeviceTour::new(&stream, n, "best")?,
        stream,
        coords,
        matrix,
        cand,
        tau,
        weight,
        rows,
        lists,
        k,
        inst: inst.clone(),
        params: params.clone(),
        start: None,
        stamps: 0,
        cache: cache_status,
        compile_seconds: compiled.compile_seconds,
        resources: compiled.resources.clone(),
    })
}

impl Prepared {
    /// The coordinates' and the matrix's device pointers (0 for the one TSP_DIST does not read).
    fn dist_args(&self) -> (u64, u64) {
        let coords = self.coords.as_ref();
        let matrix = self.matrix.as_ref();
        (
            coords.map_or(0, |s| s.device_ptr(&self.stream).0),
            matrix.map_or(0, |s| s.device_ptr(&self.stream).0),
        )
    }

    /// The CPU's first tour brought to a local optimum, within the run's deadline. Every run
    /// computes it again, so that its time counts in each run's budget alike.
    fn first_tour(&self, stop: &dyn Fn() -> bool) -> (i64, Vec<u32>) {
        let (inst, k) = (&self.inst, self.k);
        let mut tour = Tour::new(initial_tour(inst, &self.lists, k));
        let nb = Neighbours {
            lists: &self.lists,
            k,
            width: self.params.local_search.neighbours as usize,
        };
        let mut queue = ActiveQueue::new(inst.n());
        let mut stats = LsStats::default();
        let or_opt = self.params.focused.or_opt;
        local_optimum(&mut tour, inst, &nb, or_opt, &mut queue, &mut stats, stop);
        (tour.length(inst), tour.order)
    }

    /// Launches one iteration's ants on `source` (the source rows of the `iteration` rule, the
    /// best-so-far rows of `best`).
    fn launch_ants(
        &mut self,
        source_is_best: bool,
        source_len: i64,
        tau_min: f32,
        seed: u64,
        iteration: u64,
    ) -> Result<(), KernelError> {
        let n = self.inst.n() as i32;
        let m = self.params.ants.unwrap_or(1) as i32;
        let (coords, matrix) = self.dist_args();
        let (alpha, beta) = (self.params.alpha, self.params.beta);
        // Stamps restart from 1 after 2^32 - 2 iterations: clear the rows once then.
        if self.stamps > 0 && self.stamps % 0xffff_fffe == 0 {
            self.stream
                .memset_zeros(&mut self.rows.visited)
                .map_err(driver("clearing the visited stamps"))?;
            self.stream
                .memset_zeros(&mut self.rows.queued)
                .map_err(driver("clearing the queue stamps"))?;
        }
        let stamp = self.stamps;
        self.stamps += 1;
        let max_moves = i64::MAX;
        let (touched, touched_count) = self.merging.as_ref().map_or((0, 0), |m| {
            (
                m.touched.device_ptr(&self.stream).0,
                m.touched_count.device_ptr(&self.stream).0,
            )
        });
        let touch_cap = TOUCH_CAP as i32;
        let src = if source_is_best {
            &self.best
        } else {
            &self.source
        };
        let launch = self.launch;
        let mut b = self.stream.launch_builder(self.ants_kernel.function());
        b.arg(&coords)
            .arg(&matrix)
            .arg(&n)
            .arg(&self.cand)
            .arg(&self.weight)
            .arg(&tau_min)
            .arg(&alpha)
            .arg(&beta)
            .arg(&src.order)
            .arg(&src.pos)
            .arg(&source_len)
            .arg(&self.rows.new_edges)
            .arg(&seed)
            .arg(&iteration)
            .arg(&stamp)
            .arg(&m)
            .arg(&mut self.rows.orders)
            .arg(&mut self.rows.positions)
            .arg(&mut self.rows.visited)
            .arg(&mut self.rows.queued)
            .arg(&mut self.rows.lengths)
            .arg(&mut self.rows.moves)
            .arg(&mut self.rows.cycles)
            .arg(&max_moves)
            .arg(&touched)
            .arg(&touched_count)
            .arg(&touch_cap);
        // SAFETY: matches tsp_focused_ants; every row buffer holds m * n cells, the source n,
        // lengths, moves, cycles and new_edges m.
        unsafe { b.launch(launch.config()) }
            .map(|_| ())
            .map_err(self.ants_kernel.launch_error(&launch))
    }

    /// Uploads each ant's number of new edges: its arm's under a race, else the run's.
    fn upload_new_edges(&mut self, race: Option<&Race>, arms: &[usize]) -> Result<(), KernelError> {
        let m = self.params.ants.unwrap_or(1);
        let counts: Vec<i32> = (0..m)
            .map(|a| i32::try_from(Race::pick(race, arms, a)).unwrap_or(i32::MAX))
            .collect();
        self.stream
            .memcpy_htod(&counts, &mut self.rows.new_edges)
            .map_err(driver("uploading the ants' new-edge counts"))
    }

    /// The order and position rows of a device tour.
    fn row(&self, row: Row) -> (CudaView<'_, i32>, CudaView<'_, i32>) {
        let n = self.inst.n();
        match row {
            Row::Ant(a) => (
                self.rows.orders.slice(a * n..(a + 1) * n),
                self.rows.positions.slice(a * n..(a + 1) * n),
            ),
            Row::Best => (self.best.order.slice(0..n), self.best.pos.slice(0..n)),
            Row::Source => (self.source.order.slice(0..n), self.source.pos.slice(0..n)),
            Row::Merged => match &self.merging {
                Some(m) => (m.merged.order.slice(0..n), m.merged.pos.slice(0..n)),
                None => unreachable!("a merged row exists only where merging is on"),
            },
        }
    }

    /// Copies a device tour into the best-so-far (`to_best`) or the source buffers.
    fn copy_row(&mut self, from: Row, to_best: bool) -> Result<(), KernelError> {
        let stream = self.stream.clone();
        let (order, pos) = self.row(from);
        // The views borrow self: copy through raw pointers of the same stream instead.
        let (order_ptr, pos_ptr) = (order.device_ptr(&stream).0, pos.device_ptr(&stream).0);
        let bytes = self.inst.n() * std::mem::size_of::<i32>();
        let to = if to_best {
            &mut self.best
        } else {
            &mut self.source
        };
        let (to_order, to_pos) = (to.order.device_ptr(&stream).0, to.pos.device_ptr(&stream).0);
        for (dst, src, what) in [
            (to_order, order_ptr, "copying a tour"),
            (to_pos, pos_ptr, "copying a tour's positions"),
        ] {
            // SAFETY: both buffers hold n ints on this device; the copy is ordered on the
            // stream after the kernels that wrote the source.
            unsafe {
                cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream())
            }
            .map_err(driver(what))?;
        }
        Ok(())
    }

    /// Evaporation and the deposit of `deposit` (or, with `reset`, every slot at tau_max).
    fn update_pheromone(
        &mut self,
        deposit: Row,
        amount: f32,
        limits: (f32, f32),
        reset: bool,
    ) -> Result<(), KernelError> {
        let n = self.inst.n() as i32;
        let (coords, matrix) = self.dist_args();
        let keep = (1.0 - self.params.rho) as f32;
        let (alpha, beta) = (self.params.alpha, self.params.beta);
        let reset = i32::from(reset);
        let (dep_order, dep_pos) = self.row(deposit);
        let launch = self.pheromone_launch;
        let mut b = self.stream.launch_builder(self.pheromone_kernel.function());
        b.arg(&coords)
            .arg(&matrix)
            .arg(&n)
            .arg(&self.cand)
            .arg(&self.tau)
            .arg(&self.weight)
            .arg(&keep)
            .arg(&limits.0)
            .arg(&limits.1)
            .arg(&dep_order)
            .arg(&dep_pos)
            .arg(&amount)
            .arg(&alpha)
            .arg(&beta)
            .arg(&reset);
        // SAFETY: matches tsp_focused_pheromone; tau, weight and cand hold n * TSP_K cells,
        // the deposit tour n.
        unsafe { b.launch(launch.config()) }
            .map(|_| ())
            .map_err(self.pheromone_kernel.launch_error(&launch))
    }

    /// Merges the changes of this iteration's improving ants (length below the source's
    /// `source_len`), best first: an ant's touched cities span a stretch of the source (the
    /// complement of the largest gap between their source positions) outside which its tour
    /// keeps the source's order, so ants whose stretches do not overlap combine into one tour
    /// whose length is the source's minus all their gains. The merged tour is built on the
    /// device (the source, then each accepted stretch copied from its ant). Returns its length
    /// and the ants merged, or None where fewer than two combine.
    fn merge_improvements(
        &mut self,
        lengths: &[i64],
        source: Row,
        source_len: i64,
    ) -> Result<Option<(i64, usize)>, KernelError> {
        let mut improving: Vec<(i64, usize)> = lengths
            .iter()
            .enumerate()
            .filter(|&(_, &l)| l < source_len)
            .map(|(a, &l)| (l, a))
            .collect();
        if improving.len() < 2 || self.merging.is_none() {
            return Ok(None);
        }
        improving.sort_unstable();
        improving.truncate(MAX_MERGE);
        let n = self.inst.n();
        let stream = self.stream.clone();
        let (order, counts, touched) = {
            let Some(m) = &self.merging else {
                return Ok(None);
            };
            let (order, _) = self.row(source);
            let order = stream
                .clone_dtoh(&order)
                .map_err(driver("reading the source tour"))?;
            let counts = stream
                .clone_dtoh(&m.touched_count)
                .map_err(driver("reading the touched counts"))?;
            let touched = stream
                .clone_dtoh(&m.touched)
                .map_err(driver("reading the touched cities"))?;
            (order, counts, touched)
        };
        // The device's words, checked before they index anything: a city outside 0..n or a
        // count beyond the list is a kernel fault, said as one.
        let bad = |what: String| KernelError::InvalidConfig(format!("focused colony: {what}"));
        if let Some(c) = order.iter().find(|&&c| c < 0 || c as usize >= n) {
            return Err(bad(format!("the source tour holds city {c} of {n}")));
        }
        let mut pos = vec![0usize; n];
        for (i, &c) in order.iter().enumerate() {
            pos[c as usize] = i;
        }
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        let mut plan: Vec<i32> = Vec::new();
        let mut gain = 0i64;
        for (len, a) in improving {
            let count = counts[a];
            if count < 2 {
                continue; // an overflowed (-1) or degenerate list cannot be placed
            }
            if count as usize > TOUCH_CAP {
                return Err(bad(format!(
                    "ant {a} touched {count} cities, its list holds {TOUCH_CAP}"
                )));
            }
            let row = &touched[a * TOUCH_CAP..a * TOUCH_CAP + count as usize];
            if let Some(c) = row.iter().find(|&&c| c < 0 || c as usize >= n) {
                return Err(bad(format!("ant {a} touched city {c} of {n}")));
            }
            let Some((lo, span)) = stretch(row.iter().map(|&c| pos[c as usize]), n) else {
                continue;
            };
            let overlaps =
                |&(l, s): &(usize, usize)| (lo + n - l) % n < s || (l + n - lo) % n < span;
            if span + 2 > n || blocks.iter().any(overlaps) {
                continue;
            }
            blocks.push((lo, span));
            let prev = order[(lo + n - 1) % n];
            plan.extend([a as i32, lo as i32, span as i32, order[lo], prev]);
            gain += source_len - len;
        }
        if blocks.len() < 2 {
            return Ok(None);
        }
        let (src_order, src_pos) = {
            let (o, p) = self.row(source);
            let order = o.device_ptr(&stream).0;
            let pos = p.device_ptr(&stream).0;
            (order, pos)
        };
        let n32 = n as i32;
        let count = blocks.len() as i32;
        let Some(m) = &mut self.merging else {
            return Ok(None);
        };
        let bytes = n * std::mem::size_of::<i32>();
        let (dst_order, dst_pos) = (
            m.merged.order.device_ptr(&stream).0,
            m.merged.pos.device_ptr(&stream).0,
        );
        for (dst, src) in [(dst_order, src_order), (dst_pos, src_pos)] {
            // SAFETY: n ints each, on this device and stream.
            unsafe {
                cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream())
            }
            .map_err(driver("copying the source into the merged tour"))?;
        }
        stream
            .memcpy_htod(&plan, &mut m.plan)
            .map_err(driver("uploading the merge plan"))?;
        let launch = Launch::linear(blocks.len().div_ceil(4) as u32, 128);
        let mut b = stream.launch_builder(m.kernel.function());
        b.arg(&self.rows.orders)
            .arg(&self.rows.positions)
            .arg(&n32)
            .arg(&m.plan)
            .arg(&count)
            .arg(&mut m.merged.order)
            .arg(&mut m.merged.pos);
        // SAFETY: matches tsp_focused_merge; the plan holds `count` entries of five ints.
        unsafe { b.launch(launch.config()) }
            .map(|_| ())
            .map_err(m.kernel.launch_error(&launch))?;
        m.merged_ants += blocks.len() as u64 - 1;
        Ok(Some((source_len - gain, blocks.len())))
    }

    /// One run from `options.seed` under `options.budget` (iterations, default
    /// [`DEFAULT_FOCUSED_ITERATIONS`]; time limit; target); the best tour, re-scored on the CPU.
    pub fn run(&mut self, gpu: &Gpu, options: &RunOptions) -> Result<TspGpuRun, KernelError> {
        let deadline = options.budget.start(DEFAULT_FOCUSED_ITERATIONS);
        let started = std::time::Instant::now();
        let stop = || deadline.timed_out();
        let (mut best_len, first) = match self.start.clone() {
            Some(start) => start,
            None => self.first_tour(&stop),
        };
        deadline.offer(best_len);
        let stream = self.stream.clone();
        self.best.upload(&stream, &first)?;
        self.source.upload(&stream, &first)?;
        let (rho, k, m) = (self.params.rho, self.k, self.params.ants.unwrap_or(1));
        let limits = |len: i64| {
            let (lo, hi) = trail_limits(rho, len, k);
            (lo as f32, hi as f32)
        };
        let mut trail = limits(best_len);
        let mut construct_clock = KernelClock::new(gpu)?;
        let mut update_clock = KernelClock::new(gpu)?;
        update_clock.timed(gpu, "resetting the pheromone", 1, || {
            self.update_pheromone(Row::Best, 0.0, trail, true)
        })?;
        if let Some(m) = &mut self.merging {
            m.merged_ants = 0;
        }
        let rule = self.params.focused.source;
        let arms = if self.params.focused.adapt {
            edge_arms(self.params.focused.min_new_edges)
        } else {
            vec![self.params.focused.min_new_edges]
        };
        let mut race = Race::over(arms.len(), m);
        self.upload_new_edges(race.as_ref(), &arms)?;
        let mut gains = vec![0.0f64; if race.is_some() { m } else { 0 }];
        let mut source_len = best_len;
        let mut coin = stream_rng(options.seed, u64::MAX);
        let (mut iteration, mut since_improvement, mut moves) = (0u64, 0u64, 0u64);
        // Iterations since the best improved or the trails were last reset.
        let (stall, mut stalled) = (self.params.restart_stall, 0u64);
        while iteration == 0 || !deadline.reached(iteration) {
            let source_is_best = rule == SourceRule::Best;
            let src_len = if source_is_best { best_len } else { source_len };
            construct_clock.timed(gpu, "building and searching the ants' tours", 1, || {
                self.launch_ants(source_is_best, src_len, trail.0, options.seed, iteration)
            })?;
            let lengths = stream
                .clone_dtoh(&self.rows.lengths)
                .map_err(driver("reading the ants' lengths"))?;
            let counts = stream
                .clone_dtoh(&self.rows.moves)
                .map_err(driver("reading the ants' move counts"))?;
            moves += counts.iter().map(|&c| c.max(0) as u64).sum::<u64>();
            let (ant, ant_len) = lengths
                .iter()
                .copied()
                .enumerate()
                .min_by_key(|&(a, l)| (l, a))
                .ok_or_else(|| KernelError::InvalidConfig("a colony without ants".into()))?;
            let source = if source_is_best {
                Row::Best
            } else {
                Row::Source
            };
            if let Some(race) = &mut race {
                // The iteration's best ant is credited with what it took off the source: the
                // change that moves the colony (other improving ants found less, often the
                // same improvement again).
                gains.fill(0.0);
                if ant_len < src_len && src_len > 0 {
                    gains[ant] = (src_len - ant_len) as f64 / src_len as f64;
                }
                let cycles = stream
                    .clone_dtoh(&self.rows.cycles)
                    .map_err(driver("reading the ants' cycle counts"))?;
                let spent: Vec<f64> = cycles.iter().map(|&c| c.max(0) as f64).collect();
                if race.after_launch_gains(&gains, &spent) > 0 {
                    self.upload_new_edges(Some(race), &arms)?;
                }
            }
            let merged = self.merge_improvements(&lengths, source, src_len)?;
            let (ib, ib_len) = match merged {
                Some((len, _)) => (Row::Merged, len),
                None => (Row::Ant(ant), ant_len),
            };
            if ib_len < best_len {
                best_len = ib_len;
                self.copy_row(ib, true)?;
                deadline.offer(best_len);
                trail = limits(best_len);
                since_improvement = 0;
                stalled = 0;
            } else {
                since_improvement += 1;
                stalled += 1;
            }
            let use_best = deposits_best(rule, iteration, since_improvement, &mut coin);
            let (deposit, len) = if use_best {
                (Row::Best, best_len)
            } else {
                (ib, ib_len)
            };
            let amount = (1.0 / len.max(1) as f64) as f32;
            // A colony stuck on one tour forgets its trails (ACOTSP's restart): every
            // candidate edge back at tau_max, the best tour kept as the source.
            let restart = stall > 0 && stalled >= stall;
            update_clock.timed(gpu, "updating the pheromone", 1, || {
                self.update_pheromone(deposit, amount, trail, restart)
            })?;
            if restart {
                stalled = 0;
            }
            if rule == SourceRule::Iteration && deposit != Row::Source {
                self.copy_row(deposit, false)?;
                source_len = len;
            }
            iteration += 1;
        }
        let order = stream
            .clone_dtoh(&self.best.order)
            .map_err(driver("reading the best tour"))?;
        let tour: Vec<usize> = order.iter().map(|&c| c.max(0) as usize).collect();
        check_tour(&self.inst, &tour, best_len)?;
        Ok(TspGpuRun {
            outcome: Outcome {
                solution: tour,
                objective: best_len,
                iterations: iteration,
                evaluations: iteration * m as u64 + moves,
            },
            construct_seconds: construct_clock.seconds,
            pheromone_seconds: update_clock.seconds,
            search_seconds: started.elapsed().as_secs_f64(),
            launches: construct_clock.launches + update_clock.launches,
            cache: self.cache,
            compile_seconds: self.compile_seconds,
            resources: self.resources.clone(),
            attributes: self.ants_kernel.attributes,
            launch: self.launch,
            scratch_in_global: true,
            adaptation: race
                .map(|r| r.summary("ants", arms.iter().map(|e| format!("{e} new edges")))),
        })
    }

    /// Ants merged beyond each iteration's first in the last run (0 without merging).
    pub fn merged_ants(&self) -> u64 {
        self.merging.as_ref().map_or(0, |m| m.merged_ants)
    }

    /// Every ant's tour and exact length after the last iteration (for tests).
    pub fn ants_to_host(&self) -> Result<Vec<(i64, Vec<usize>)>, KernelError> {
        let n = self.inst.n();
        let orders = self
            .stream
            .clone_dtoh(&self.rows.orders)
            .map_err(driver("reading the ants' tours"))?;
        let lengths = self
            .stream
            .clone_dtoh(&self.rows.lengths)
            .map_err(driver("reading the ants' lengths"))?;
        Ok(lengths
            .iter()
            .enumerate()
            .map(|(a, &len)| {
                let tour = orders[a * n..(a + 1) * n]
                    .iter()
                    .map(|&c| c.max(0) as usize)
                    .collect();
                (len, tour)
            })
            .collect())
    }
}

impl crate::gpu::workload::PreparedRun for Prepared {
    fn run(
        &mut self,
        gpu: &Gpu,
        options: &RunOptions,
    ) -> Result<crate::gpu::workload::GpuRun, KernelError> {
        Ok(Prepared::run(self, gpu, options)?.into_gpu_run(self.ants_kernel.entry()))
    }

    fn launch(&self) -> Launch {
        self.launch
    }

    fn kernel(&self) -> &Kernel {
        &self.ants_kernel
    }

    fn start_from(&mut self, starts: &[Vec<usize>]) -> bool {
        // The best exchanged tour becomes the colony's best so far (and source).
        self.start = starts
            .iter()
            .find(|t| crate::permutation::check(t, self.inst.n()).is_ok())
            .map(|t| {
                (
                    self.inst.tour_length(t),
                    t.iter().map(|&c| c as u32).collect(),
                )
            });
        true
    }
}

/// The shortest cyclic stretch of positions (start, length) that holds every position of
/// `positions` (the complement of the largest gap between consecutive ones); None when empty.
pub fn stretch(positions: impl Iterator<Item = usize>, n: usize) -> Option<(usize, usize)> {
    let mut ps: Vec<usize> = positions.collect();
    ps.sort_unstable();
    ps.dedup();
    let (&first, &last) = (ps.first()?, ps.last()?);
    // The gap that wraps from the last position to the first: the stretch is first ..= last.
    let (mut gap, mut start) = (first + n - last, first);
    for w in ps.windows(2) {
        if w[1] - w[0] > gap {
            gap = w[1] - w[0];
            start = w[1];
        }
    }
    Some((start, n - gap + 1))
}

#[cfg(test)]
mod tests {
    use super::{edge_arms, stretch, MAX_WALK};

    #[test]
    fn adapt_races_the_runs_new_edges_first_and_four_neighbours() {
        assert_eq!(edge_arms(16), [16, 8, 12, 24, 32]);
        // Small counts: repeats dropped, never 0.
        assert_eq!(edge_arms(1), [1, 2]);
        assert_eq!(edge_arms(2), [2, 1, 3, 4]);
        // Large ones stop below a walk's cities.
        assert_eq!(edge_arms(200), [200, 100, 150, MAX_WALK - 1]);
    }

    #[test]
    fn a_stretch_is_the_complement_of_the_largest_gap() {
        // 2..=5 inside a tour of 10.
        assert_eq!(stretch([5, 2, 3].into_iter(), 10), Some((2, 4)));
        // Around the end: 8, 9, 0, 1 (the gap 1 -> 8 is the largest).
        assert_eq!(stretch([9, 1, 8, 0].into_iter(), 10), Some((8, 4)));
        // Duplicates count once; one position is a stretch of one.
        assert_eq!(stretch([4, 4].into_iter(), 10), Some((4, 1)));
        assert_eq!(stretch(std::iter::empty(), 10), None);
        // Evenly spread: the first largest gap wins, the stretch covers all but it.
        let (start, len) = stretch([0, 5].into_iter(), 10).unwrap();
        assert_eq!(len, 6);
        assert!(start == 0 || start == 5);
    }
}
