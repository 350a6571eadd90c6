//! The device state of an ant colony and its stages, one method per kernel phase, so that
//! more than one driver can be built on it: the GPU Ant System ([`super::ant_system`]) and a
//! MAX-MIN Ant System with local search that uploads its own tours to deposit.
//!
//! State on the device (layouts in `kernels/tsp/common.cuh` and `colony.cuh`): coordinates
//! (EUC_2D, CEIL_2D, ATT) or an int32 distance matrix (GEO, EXPLICIT), candidate lists,
//! pheromone and choice information (float, n x n), the candidates' choice information
//! (n x k), the m ants' tours and exact lengths, and per-ant scratch where a variant's
//! per-block share of shared memory is too small.
//!
//! Every stage is enqueued on the GPU's stream and returns at once; [`Colony::tours_to_host`],
//! [`Colony::lengths_to_host`] and the kernel clocks synchronise.

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, Launch, Module};
use kernels::{CacheStatus, KernelCache, KernelError, Resources, Variant};
use std::sync::Arc;

use super::{Construction, GpuParams, PheromoneUpdate};
use crate::tsp::{CandidateLists, EdgeWeightType, Instance};

/// Threads of the grid-stride kernels (choice info, evaporation, deposit) per block.
const STRIDE_THREADS: u32 = 256;

/// The `TSP_DIST` define of an instance's distance function.
pub fn dist_define(inst: &Instance) -> u32 {
    match inst.edge_weight_type {
        EdgeWeightType::Euc2d => 0,
        EdgeWeightType::Ceil2d => 1,
        EdgeWeightType::Att => 2,
        EdgeWeightType::Geo | EdgeWeightType::Explicit => 3,
    }
}

/// Whether distances come from an uploaded matrix (GEO needs cos/acos, whose last bits differ
/// between the GPU and libm; EXPLICIT has no coordinates).
pub fn uses_matrix(inst: &Instance) -> bool {
    dist_define(inst) == 3
}

/// Where the kernels read an int32 distance matrix ([`uses_matrix`]), whether every entry
/// fits; the refusal names the first entry that does not.
pub fn matrix_fits_i32(inst: &Instance) -> Result<(), String> {
    if !uses_matrix(inst) {
        return Ok(());
    }
    let n = inst.n();
    for i in 0..n {
        for j in 0..n {
            if i32::try_from(inst.dist(i, j)).is_err() {
                return Err(format!(
                    "{}: distance d({}, {}) = {} does not fit the GPU's int32 matrix",
                    inst.name,
                    i + 1,
                    j + 1,
                    inst.dist(i, j)
                ));
            }
        }
    }
    Ok(())
}

/// The candidate-list length the kernels are built for: min(k, n - 1).
pub fn list_length(inst: &Instance, candidates: usize) -> usize {
    candidates.min(inst.n() - 1).max(1)
}

/// The construction kernel's variant (`TSP_DIST`, `TSP_K`, the point's flags).
pub fn construction_variant(params: &GpuParams, inst: &Instance, arch: kernels::Arch) -> Variant {
    let v = Variant::new(params.construction.source(), arch)
        .define("TSP_DIST", dist_define(inst))
        .define("TSP_K", list_length(inst, params.candidates));
    params.flags.iter().fold(v, |v, f| v.flag(f))
}

/// The pheromone kernels' variant.
pub fn pheromone_variant(params: &GpuParams, inst: &Instance, arch: kernels::Arch) -> Variant {
    let v = Variant::new(params.pheromone.source(), arch)
        .define("TSP_DIST", dist_define(inst))
        .define("TSP_K", list_length(inst, params.candidates));
    params.flags.iter().fold(v, |v, f| v.flag(f))
}

/// Per-block dynamic shared memory a construction variant would use for its ants' scratch
/// (visited bitsets, or the compressed unvisited list and positions).
pub fn scratch_bytes_per_ant(construction: Construction, n: usize) -> usize {
    match construction {
        Construction::Task | Construction::Data => n.div_ceil(32) * 4,
        Construction::DataCompressed => 2 * n * 4,
    }
}

/// Ants per block of a construction launch with `threads` per block.
pub fn ants_per_block(construction: Construction, threads: u32) -> u32 {
    match construction {
        Construction::Task => threads,
        Construction::Data | Construction::DataCompressed => threads / 32,
    }
}

/// The instance on the device, as `TSP_DIST` reads it: coordinates, or for GEO and EXPLICIT
/// the int32 distance matrix (an entry that does not fit is refused naming it).
#[allow(clippy::type_complexity)]
pub fn upload_instance(
    stream: &Arc<CudaStream>,
    inst: &Instance,
) -> Result<(Option<CudaSlice<f64>>, Option<CudaSlice<i32>>), KernelError> {
    let n = inst.n();
    if uses_matrix(inst) {
        matrix_fits_i32(inst).map_err(KernelError::InvalidConfig)?;
        let mut host = vec![0i32; n * n];
        for i in 0..n {
            for j in 0..n {
                host[i * n + j] = inst.dist(i, j) as i32;
            }
        }
        let matrix = stream
            .clone_htod(&host)
            .map_err(driver("uploading the distance matrix"))?;
        Ok((None, Some(matrix)))
    } else {
        let host: Vec<f64> = inst.coords().iter().flat_map(|&(x, y)| [x, y]).collect();
        let coords = stream
            .clone_htod(&host)
            .map_err(driver("uploading the coordinates"))?;
        Ok((Some(coords), None))
    }
}

/// The ant colony's device state.
pub struct Colony {
    n: usize,
    m: usize,
    k: usize,
    params: GpuParams,
    stream: Arc<CudaStream>,
    _construct_module: Module,
    _pheromone_module: Module,
    construct: Kernel,
    choice_info: Kernel,
    candidate_info: Kernel,
    tour_lengths: Kernel,
    construct_launch: Launch,
    stride_blocks: u32,
    coords: Option<CudaSlice<f64>>,
    matrix: Option<CudaSlice<i32>>,
    candidates: CudaSlice<i32>,
    trails: Trails,
    choice: CudaSlice<f32>,
    cand_choice: CudaSlice<f32>,
    tours: CudaSlice<i32>,
    lengths: CudaSlice<i64>,
    /// Per-ant scratch in global memory where the block's share of shared memory is too small.
    scratch: Option<CudaSlice<u32>>,
    /// Compilation of the construction module (the main one).
    pub cache: CacheStatus,
    pub compile_seconds: f64,
    pub resources: Vec<Resources>,
}

/// Device pointers to an instance's data (see [`Colony::instance_pointers`]).
#[derive(Debug, Clone, Copy)]
pub struct InstancePointers {
    pub coords: u64,
    pub matrix: u64,
    pub candidates: u64,
    /// Length of each candidate list (the row stride of `candidates`).
    pub k: usize,
}

pub(super) fn driver(
    what: impl Into<String>,
) -> impl FnOnce(cudarc::driver::DriverError) -> KernelError {
    KernelError::driver(what.into())
}

/// A null device pointer for a kernel argument the variant does not read.
const NULL: u64 = 0;

impl Colony {
    /// Checks the configuration against the instance and the device, compiles (through the
    /// cache) and loads both modules, uploads the instance and allocates the colony; the
    /// pheromone starts at zero (see [`Colony::reset_pheromone`]).
    pub fn new(
        gpu: &Gpu,
        cache: &KernelCache,
        inst: &Instance,
        params: &GpuParams,
    ) -> Result<Colony, KernelError> {
        params
            .check(inst, &gpu.info)
            .map_err(KernelError::InvalidConfig)?;
        let n = inst.n();
        let m = params.ants_for(inst);
        let k = list_length(inst, params.candidates);
        let stream = gpu.stream().clone();

        let (compiled, cache_status) =
            cache.get_or_compile(&construction_variant(params, inst, gpu.info.arch))?;
        let construct_module = gpu.load(&compiled)?;
        let (pheromone_compiled, _) =
            cache.get_or_compile(&pheromone_variant(params, inst, gpu.info.arch))?;
        let pheromone_module = gpu.load(&pheromone_compiled)?;

        let construct = construct_module.function(params.construction.entry())?;
        let threads = params.threads_for();
        let per_block = ants_per_block(params.construction, threads) as usize;
        let shared = per_block * scratch_bytes_per_ant(params.construction, n);
        // The block's scratch in shared memory where it fits beside the kernel's static part
        // (none), else per ant in global memory.
        let optin = gpu.info.max_shared_bytes_per_block_optin as usize;
        let in_shared = shared <= optin;
        if in_shared {
            construct.allow_shared_bytes(shared)?;
        }
        let construct_launch = Launch {
            grid: (m.div_ceil(per_block) as u32, 1, 1),
            block: (threads, 1, 1),
            shared_bytes: if in_shared { shared as u32 } else { 0 },
        };
        construct.check_launch(&construct_launch)?;
        let scratch = if in_shared {
            None
        } else {
            let words = m * scratch_bytes_per_ant(params.construction, n) / 4;
            Some(
                stream
                    .alloc_zeros::<u32>(words)
                    .map_err(driver("allocating the ants' scratch"))?,
            )
        };

        let (coords, matrix) = upload_instance(&stream, inst)?;
        let lists = match inst.edge_weight_type {
            EdgeWeightType::Geo | EdgeWeightType::Explicit => {
                CandidateLists::from_matrix(&inst.distance_matrix(), n, k)
            }
            _ => CandidateLists::from_instance(inst, k),
        };
        let host_lists: Vec<i32> = lists.as_slice().iter().map(|&c| c as i32).collect();
        let candidates = stream
            .clone_htod(&host_lists)
            .map_err(driver("uploading the candidate lists"))?;
        let cells = n * n;
        let alloc_f32 = |len: usize, what: &str| {
            stream
                .alloc_zeros::<f32>(len)
                .map_err(driver(format!("allocating {what}")))
        };
        let pheromone = alloc_f32(cells, "the pheromone matrix")?;
        let choice = alloc_f32(cells, "the choice matrix")?;
        let cand_choice = alloc_f32(n * k, "the candidates' choice information")?;
        let tours = stream
            .alloc_zeros::<i32>(m * n)
            .map_err(driver("allocating the tours"))?;
        let lengths = stream
            .alloc_zeros::<i64>(m)
            .map_err(driver("allocating the tour lengths"))?;

        let (deposit, edges_by_city) = match params.pheromone {
            PheromoneUpdate::Atomic => (pheromone_module.function("tsp_deposit_atomic")?, None),
            PheromoneUpdate::Gather => (
                pheromone_module.function("tsp_deposit_gather")?,
                Some(pheromone_module.function("tsp_edges_by_city")?),
            ),
        };
        Ok(Colony {
            n,
            m,
            k,
            params: params.clone(),
            stream,
            choice_info: construct_module.function("tsp_choice_info")?,
            candidate_info: construct_module.function("tsp_candidate_info")?,
            tour_lengths: construct_module.function("tsp_tour_lengths")?,
            trails: Trails {
                n,
                stream: gpu.stream().clone(),
                update: params.pheromone,
                pheromone,
                evaporate: pheromone_module.function("tsp_evaporate")?,
                deposit,
                edges_by_city,
                edges: None,
                stride_blocks: gpu.info.sm_count.max(1) * 8,
            },
            construct,
            _construct_module: construct_module,
            _pheromone_module: pheromone_module,
            construct_launch,
            stride_blocks: gpu.info.sm_count.max(1) * 8,
            coords,
            matrix,
            candidates,
            choice,
            cand_choice,
            tours,
            lengths,
            scratch,
            cache: cache_status,
            compile_seconds: compiled.compile_seconds + pheromone_compiled.compile_seconds,
            resources: compiled.resources.clone(),
        })
    }

    pub fn cities(&self) -> usize {
        self.n
    }

    pub fn ants(&self) -> usize {
        self.m
    }

    /// The candidate-list length the kernels use.
    pub fn list_length(&self) -> usize {
        self.k
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The ants' tours: `m * n` ints, ant a's at `a * n`.
    pub fn tours(&self) -> &CudaSlice<i32> {
        &self.tours
    }

    /// The ants' exact tour lengths (`m`).
    pub fn lengths(&self) -> &CudaSlice<i64> {
        &self.lengths
    }

    /// The ants' tours and lengths, for a stage that changes them (local search).
    pub fn tours_and_lengths_mut(&mut self) -> (&mut CudaSlice<i32>, &mut CudaSlice<i64>) {
        (&mut self.tours, &mut self.lengths)
    }

    /// What another kernel needs to read the instance: the device pointers of the coordinates
    /// and of the distance matrix (0 for the one `TSP_DIST` does not read) and of the
    /// candidate lists (n rows of [`Colony::list_length`] cities).
    pub fn instance_pointers(&self) -> InstancePointers {
        let (coords, matrix) = self.dist_args();
        InstancePointers {
            coords,
            matrix,
            candidates: self.candidates.device_ptr(&self.stream).0,
            k: self.k,
        }
    }

    /// The construction kernel and its launch.
    pub fn construct_kernel(&self) -> (&Kernel, Launch) {
        (&self.construct, self.construct_launch)
    }

    /// Whether the ants' scratch lives in global memory (the block's share did not fit).
    pub fn scratch_in_global(&self) -> bool {
        self.scratch.is_some()
    }

    fn stride_launch(&self, items: usize) -> Launch {
        stride_launch(items, self.stride_blocks)
    }

    fn dist_args(&self) -> (u64, u64) {
        let coords = self
            .coords
            .as_ref()
            .map_or(NULL, |s| s.device_ptr(&self.stream).0);
        let matrix = self
            .matrix
            .as_ref()
            .map_or(NULL, |s| s.device_ptr(&self.stream).0);
        (coords, matrix)
    }

    /// Sets every pheromone cell to `tau`.
    pub fn reset_pheromone(&mut self, tau: f32) -> Result<(), KernelError> {
        // Evaporation with keep = 0 clamped to [tau, tau].
        self.evaporate(1.0, tau, tau)
    }

    /// Uploads a full n x n pheromone matrix (row-major).
    pub fn set_pheromone(&mut self, host: &[f32]) -> Result<(), KernelError> {
        if host.len() != self.n * self.n {
            return Err(KernelError::InvalidConfig(format!(
                "a pheromone matrix of {} cities has {} cells, got {}",
                self.n,
                self.n * self.n,
                host.len()
            )));
        }
        self.stream
            .memcpy_htod(host, &mut self.trails.pheromone)
            .map_err(driver("uploading the pheromone matrix"))
    }

    /// The pheromone matrix (row-major n x n).
    pub fn pheromone_to_host(&self) -> Result<Vec<f32>, KernelError> {
        self.stream
            .clone_dtoh(&self.trails.pheromone)
            .map_err(driver("reading the pheromone matrix"))
    }

    /// The full choice matrix (row-major n x n).
    pub fn choice_to_host(&self) -> Result<Vec<f32>, KernelError> {
        self.stream
            .clone_dtoh(&self.choice)
            .map_err(driver("reading the choice matrix"))
    }

    /// `choice = tau^alpha * eta^beta` on every pair, then the candidates' copy.
    pub fn compute_choice_info(&mut self) -> Result<(), KernelError> {
        let n = self.n as i32;
        let (coords, matrix) = self.dist_args();
        let (alpha, beta) = (self.params.alpha, self.params.beta);
        let launch = self.stride_launch(self.n * self.n);
        let mut b = self.stream.launch_builder(self.choice_info.function());
        b.arg(&self.trails.pheromone)
            .arg(&coords)
            .arg(&matrix)
            .arg(&n)
            .arg(&alpha)
            .arg(&beta)
            .arg(&mut self.choice);
        // SAFETY: matches tsp_choice_info; pheromone and choice hold n * n cells.
        unsafe { b.launch(launch.config()) }
            .map(|_| ())
            .map_err(self.choice_info.launch_error(&launch))?;
        let launch = self.stride_launch(self.n * self.k);
        let mut b = self.stream.launch_builder(self.candidate_info.function());
        b.arg(&self.choice)
            .arg(&self.candidates)
            .arg(&n)
            .arg(&mut self.cand_choice);
        // SAFETY: matches tsp_candidate_info; candidates and cand_choice hold n * TSP_K cells.
        unsafe { b.launch(launch.config()) }
            .map(|_| ())
            .map_err(self.candidate_info.launch_error(&launch))
    }

    /// Every ant builds a tour: iteration `iteration` of the random stream of `seed`.
    pub fn construct(&mut self, seed: u64, iteration: u64) -> Result<(), KernelError> {
        let (n, m) = (self.n as i32, self.m as i32);
        let (coords, matrix) = self.dist_args();
        let launch = self.construct_launch;
        let mut b = self.stream.launch_builder(self.construct.function());
        b.arg(&self.choice)
            .arg(&self.cand_choice)
            .arg(&self.candidates)
            .arg(&coords)
            .arg(&matrix)
            .arg(&n)
            .arg(&m)
            .arg(&seed)
            .arg(&iteration);
        match &mut self.scratch {
            Some(s) => b.arg(s),
            None => b.arg(&NULL),
        };
        b.arg(&mut self.tours).arg(&mut self.lengths);
        // SAFETY: matches the tsp_construct_* kernels; tours hold m * n ints, lengths m, the
        // scratch (when global) m ants' share; the shared size covers the block's ants.
        unsafe { b.launch(launch.config()) }
            .map(|_| ())
            .map_err(self.construct.launch_error(&launch))
    }

    /// `tau = clamp((1 - rho) tau, tau_min, tau_max)` on every cell (Ant System: 0, +inf;
    /// rho = 0 only clamps, e.g. MAX-MIN's limits after a deposit).
    pub fn evaporate(&mut self, rho: f64, tau_min: f32, tau_max: f32) -> Result<(), KernelError> {
        self.trails.evaporate(rho, tau_min, tau_max)
    }

    /// Deposit of `weight / length` by each of the colony's own m tours, both directions.
    pub fn deposit_ants(&mut self, weight: f64) -> Result<(), KernelError> {
        self.trails
            .deposit(&self.tours, &self.lengths, self.m, weight)
    }

    /// Deposit of `weight / lengths[t]` on both directions of every edge of tours
    /// `t < count` of `tours` (layout of `common.cuh`; e.g. MAX-MIN's iteration-best or
    /// best-so-far tour uploaded into a buffer of its own).
    pub fn deposit(
        &mut self,
        tours: &CudaSlice<i32>,
        lengths: &CudaSlice<i64>,
        count: usize,
        weight: f64,
    ) -> Result<(), KernelError> {
        self.trails.deposit(tours, lengths, count, weight)
    }

    /// Recomputes the exact lengths of `count` tours of `tours` into `lengths` (e.g. after
    /// local search changed them).
    pub fn tour_lengths(
        &self,
        tours: &CudaSlice<i32>,
        count: usize,
        lengths: &mut CudaSlice<i64>,
    ) -> Result<(), KernelError> {
        if tours.len() < count * self.n || lengths.len() < count {
            return Err(KernelError::InvalidConfig(format!(
                "lengths of {count} tours of {} cities: buffers hold {} cells and {} lengths",
                self.n,
                tours.len(),
                lengths.len()
            )));
        }
        let n = self.n as i32;
        let count_i = count as i32;
        let (coords, matrix) = self.dist_args();
        let launch = Launch::linear((count as u32).div_ceil(8).max(1), 256);
        let mut b = self.stream.launch_builder(self.tour_lengths.function());
        b.arg(tours)
            .arg(&n)
            .arg(&count_i)
            .arg(&coords)
            .arg(&matrix)
            .arg(lengths);
        // SAFETY: matches tsp_tour_lengths; sizes checked above.
        unsafe { b.launch(launch.config()) }
            .map(|_| ())
            .map_err(self.tour_lengths.launch_error(&launch))
    }

    /// The ants' exact lengths.
    pub fn lengths_to_host(&self) -> Result<Vec<i64>, KernelError> {
        self.stream
            .clone_dtoh(&self.lengths)
            .map_err(driver("reading the tour lengths"))
    }

    /// Ant `ant`'s tour.
    pub fn tour_to_host(&self, ant: usize) -> Result<Vec<usize>, KernelError> {
        let n = self.n;
        let tour = self
            .stream
            .clone_dtoh(&self.tours.slice(ant * n..(ant + 1) * n))
            .map_err(driver("reading a tour"))?;
        Ok(tour.into_iter().map(|c| c as usize).collect())
    }

    /// Every ant's tour.
    pub fn tours_to_host(&self) -> Result<Vec<Vec<usize>>, KernelError> {
        let flat = self
            .stream
            .clone_dtoh(&self.tours)
            .map_err(driver("reading the tours"))?;
        Ok(flat
            .chunks(self.n)
            .map(|t| t.iter().map(|&c| c as usize).collect())
            .collect())
    }
}

fn stride_launch(items: usize, max_blocks: u32) -> Launch {
    let blocks = items
        .div_ceil(STRIDE_THREADS as usize)
        .clamp(1, max_blocks as usize);
    Launch::linear(blocks as u32, STRIDE_THREADS)
}

/// The pheromone matrix and its update kernels (apart from the tours, so a deposit can read
/// the colony's own tours).
struct Trails {
    n: usize,
    stream: Arc<CudaStream>,
    update: PheromoneUpdate,
    pheromone: CudaSlice<f32>,
    evaporate: Kernel,
    deposit: Kernel,
    edges_by_city: Option<Kernel>,
    /// Gather update: successors and predecessors by city (n x capacity ints each).
    edges: Option<(CudaSlice<i32>, CudaSlice<i32>, usize)>,
    stride_blocks: u32,
}

impl Trails {
    fn evaporate(&mut self, rho: f64, tau_min: f32, tau_max: f32) -> Result<(), KernelError> {
        let cells = (self.n * self.n) as i64;
        let keep = (1.0 - rho) as f32;
        let launch = stride_launch(self.n * self.n, self.stride_blocks);
        let mut b = self.stream.launch_builder(self.evaporate.function());
        b.arg(&mut self.pheromone)
            .arg(&cells)
            .arg(&keep)
            .arg(&tau_min)
            .arg(&tau_max);
        // SAFETY: matches tsp_evaporate; the matrix holds `cells` floats.
        unsafe { b.launch(launch.config()) }
            .map(|_| ())
            .map_err(self.evaporate.launch_error(&launch))
    }

    fn deposit(
        &mut self,
        tours: &CudaSlice<i32>,
        lengths: &CudaSlice<i64>,
        count: usize,
        weight: f64,
    ) -> Result<(), KernelError> {
        if count == 0 {
            return Ok(());
        }
        if tours.len() < count * self.n || lengths.len() < count {
            return Err(KernelError::InvalidConfig(format!(
                "deposit of {count} tours of {} cities needs {} tour cells and {count} lengths, \
                 the buffers hold {} and {}",
                self.n,
                count * self.n,
                tours.len(),
                lengths.len()
            )));
        }
        let n = self.n as i32;
        let count_i = i32::try_from(count)
            .map_err(|_| KernelError::InvalidConfig(format!("{count} tours to deposit")))?;
        let launch = stride_launch(count * self.n, self.stride_blocks);
        match self.update {
            PheromoneUpdate::Atomic => {
                let mut b = self.stream.launch_builder(self.deposit.function());
                b.arg(&mut self.pheromone)
                    .arg(&n)
                    .arg(tours)
                    .arg(lengths)
                    .arg(&count_i)
                    .arg(&weight);
                // SAFETY: matches tsp_deposit_atomic; sizes checked above.
                unsafe { b.launch(launch.config()) }
                    .map(|_| ())
                    .map_err(self.deposit.launch_error(&launch))
            }
            PheromoneUpdate::Gather => {
                if self.edges.as_ref().is_none_or(|e| e.2 < count) {
                    let cells = self.n * count;
                    let alloc = || {
                        self.stream
                            .alloc_zeros::<i32>(cells)
                            .map_err(driver("allocating the edges by city"))
                    };
                    self.edges = Some((alloc()?, alloc()?, count));
                }
                let Some((succ, pred, _)) = self.edges.as_mut() else {
                    unreachable!("allocated above")
                };
                let Some(edges_by_city) = self.edges_by_city.as_ref() else {
                    unreachable!("the gather module has tsp_edges_by_city")
                };
                let mut b = self.stream.launch_builder(edges_by_city.function());
                b.arg(tours)
                    .arg(&n)
                    .arg(&count_i)
                    .arg(&mut *succ)
                    .arg(&mut *pred);
                // SAFETY: matches tsp_edges_by_city; succ and pred hold n * count ints.
                unsafe { b.launch(launch.config()) }
                    .map(|_| ())
                    .map_err(edges_by_city.launch_error(&launch))?;
                // One warp owns a row: n warps, 8 per block.
                let warps_per_block = 8u32;
                let launch = Launch::linear(
                    (self.n as u32).div_ceil(warps_per_block),
                    32 * warps_per_block,
                );
                let mut b = self.stream.launch_builder(self.deposit.function());
                b.arg(&mut self.pheromone)
                    .arg(&n)
                    .arg(&*succ)
                    .arg(&*pred)
                    .arg(lengths)
                    .arg(&count_i)
                    .arg(&weight);
                // SAFETY: matches tsp_deposit_gather; succ and pred hold n * count ints.
                unsafe { b.launch(launch.config()) }
                    .map(|_| ())
                    .map_err(self.deposit.launch_error(&launch))
            }
        }
    }
}
