//! The host side of `kernels/tsp/ls-2opt.cu`: 2-opt with don't-look bits on every tour of a
//! device buffer, one warp per tour (see the kernel's header for what each warp owns).

use cudarc::driver::{CudaSlice, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, KernelClock, Launch, Module};
use kernels::{KernelError, Variant};

use super::super::candidates::CandidateLists;
use super::super::distance::EdgeWeightType;
use super::super::instance::Instance;

/// The most cities whose distances travel as an n x n int32 matrix (GEO, EXPLICIT): 1.6 GB.
pub const MAX_MATRIX_CITIES: usize = 20_000;

/// How the kernels obtain distances (`TSP_DIST` in kernels/tsp/common.cuh).
pub fn dist_kind(inst: &Instance) -> u32 {
    match inst.edge_weight_type {
        EdgeWeightType::Euc2d => 0,
        EdgeWeightType::Ceil2d => 1,
        EdgeWeightType::Att => 2,
        // GEO needs cos/acos, whose last bits differ between the GPU and libm.
        EdgeWeightType::Geo | EdgeWeightType::Explicit => 3,
    }
}

/// An instance's distances on the device: coordinates, or the matrix for `TSP_DIST` 3.
pub struct Geometry {
    pub coords: CudaSlice<f64>,
    pub matrix: CudaSlice<i32>,
    pub n: usize,
}

impl Geometry {
    pub fn upload(gpu: &Gpu, inst: &Instance) -> Result<Geometry, KernelError> {
        let n = inst.n();
        let stream = gpu.stream();
        let (coords, matrix) = if dist_kind(inst) == 3 {
            if n > MAX_MATRIX_CITIES {
                return Err(KernelError::InvalidConfig(format!(
                    "{}: {} distances travel to the GPU as an n x n matrix, supported up to \
                     {MAX_MATRIX_CITIES} cities; {n} given",
                    inst.name,
                    inst.edge_weight_type.name()
                )));
            }
            let mut matrix = Vec::with_capacity(n * n);
            for i in 0..n {
                for j in 0..n {
                    let d = inst.dist(i, j);
                    matrix.push(i32::try_from(d).map_err(|_| {
                        KernelError::InvalidConfig(format!(
                            "{}: distance {d} between cities {} and {} exceeds the GPU's \
                             32-bit distances",
                            inst.name,
                            i + 1,
                            j + 1
                        ))
                    })?);
                }
            }
            (vec![0.0; 2], matrix)
        } else {
            let flat = inst.coords().iter().flat_map(|&(x, y)| [x, y]).collect();
            (flat, vec![0])
        };
        let upload_err = |what: &'static str| KernelError::driver(format!("uploading {what}"));
        Ok(Geometry {
            coords: stream
                .clone_htod(&coords)
                .map_err(upload_err("coordinates"))?,
            matrix: stream
                .clone_htod(&matrix)
                .map_err(upload_err("distances"))?,
            n,
        })
    }
}

/// Launch and search parameters of the local search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LsParams {
    /// Candidates tried per city (at most the candidate list's length).
    pub neighbours: u32,
    /// Tours (warps) per block.
    pub warps: u32,
}

impl Default for LsParams {
    fn default() -> Self {
        LsParams {
            neighbours: 10,
            warps: 4,
        }
    }
}

impl LsParams {
    pub fn check(&self, candidates: usize) -> Result<(), String> {
        if self.neighbours == 0 || self.neighbours as usize > candidates {
            return Err(format!(
                "local-search neighbours must be in 1..={candidates} (the candidate list's \
                 length), got {}",
                self.neighbours
            ));
        }
        if !(1..=32).contains(&self.warps) {
            return Err(format!(
                "local-search warps per block must be in 1..=32, got {}",
                self.warps
            ));
        }
        Ok(())
    }

    /// The kernel variant for this instance.
    pub fn variant(&self, inst: &Instance, arch: kernels::Arch) -> Variant {
        Variant::new("tsp/ls-2opt", arch)
            .define("TSP_DIST", dist_kind(inst))
            .define("LS_NEIGHBOURS", self.neighbours)
            .define("LS_WARPS", self.warps)
    }
}

/// The loaded kernel with its per-tour scratch (positions, don't-look bits, move counts).
pub struct LocalSearch {
    pub kernel: Kernel,
    pub launch: Launch,
    lists: CudaSlice<i32>,
    k: i32,
    positions: CudaSlice<i32>,
    dont_look: CudaSlice<u32>,
    moves: CudaSlice<i64>,
    tours: usize,
}

impl LocalSearch {
    /// For `tours` tours of the instance's n cities, with the candidate lists `lists`.
    pub fn new(
        module: &Module,
        gpu: &Gpu,
        lists: &CandidateLists,
        n: usize,
        tours: usize,
        params: &LsParams,
    ) -> Result<LocalSearch, KernelError> {
        params
            .check(lists.k())
            .map_err(KernelError::InvalidConfig)?;
        let kernel = module.function("tsp_ls_2opt")?;
        let blocks = tours.div_ceil(params.warps as usize);
        let launch = Launch::linear(
            u32::try_from(blocks).map_err(|_| {
                KernelError::InvalidConfig(format!("{tours} tours need too many blocks"))
            })?,
            32 * params.warps,
        );
        kernel.check_launch(&launch)?;
        let stream = gpu.stream();
        let flat: Vec<i32> = lists.as_slice().iter().map(|&c| c as i32).collect();
        let words = n.div_ceil(32);
        let alloc = |what: &str| KernelError::driver(format!("allocating {what} of {tours} tours"));
        Ok(LocalSearch {
            lists: stream
                .clone_htod(&flat)
                .map_err(KernelError::driver("uploading the candidate lists"))?,
            k: lists.k() as i32,
            positions: stream
                .alloc_zeros::<i32>(tours * n)
                .map_err(alloc("city positions"))?,
            dont_look: stream
                .alloc_zeros::<u32>(tours * words)
                .map_err(alloc("don't-look bits"))?,
            moves: stream
                .alloc_zeros::<i64>(tours)
                .map_err(alloc("move counts"))?,
            kernel,
            launch,
            tours,
        })
    }

    /// Improves the first `self.tours` tours of `tours` (int[m * n]) to 2-opt local optima and
    /// writes their exact lengths.
    pub fn run(
        &mut self,
        gpu: &Gpu,
        geometry: &Geometry,
        tours: &mut CudaSlice<i32>,
        lengths: &mut CudaSlice<i64>,
        clock: &mut KernelClock,
    ) -> Result<(), KernelError> {
        let n = geometry.n as i32;
        let m = self.tours as i32;
        // A strictly improving search ends by itself; the cap only bounds a faulty kernel.
        let max_moves = 64i64 * i64::from(n).max(64);
        clock.start(gpu)?;
        let stream = gpu.stream();
        let mut builder = stream.launch_builder(self.kernel.function());
        builder
            .arg(&geometry.coords)
            .arg(&geometry.matrix)
            .arg(&n)
            .arg(&self.lists)
            .arg(&self.k)
            .arg(tours)
            .arg(&mut self.positions)
            .arg(&mut self.dont_look)
            .arg(lengths)
            .arg(&mut self.moves)
            .arg(&m)
            .arg(&max_moves);
        // SAFETY: matches tsp_ls_2opt; tours and positions hold m * n ints, the don't-look
        // rows m * ceil(n / 32) words, lengths and moves m entries (checked by the callers'
        // allocations: `tours`/`lengths` come from buffers of at least m tours).
        unsafe { builder.launch(self.launch.config()) }
            .map_err(self.kernel.launch_error(&self.launch))?;
        clock.stop(gpu, "the 2-opt local search", 1)
    }

    /// Moves applied to each tour by the last run.
    pub fn moves(&self, gpu: &Gpu) -> Result<Vec<i64>, KernelError> {
        gpu.stream()
            .clone_dtoh(&self.moves)
            .map_err(KernelError::driver("reading move counts"))
    }
}
