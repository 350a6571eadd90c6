//! The host side of `kernels/tsp/ls-2opt.cu`: 2-opt with don't-look bits on every tour of a
//! colony, one warp per tour (see the kernel's header for what each warp owns).

use cudarc::driver::{CudaSlice, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, KernelClock, Launch, Module};
use kernels::{KernelError, Variant};

use super::colony::{dist_define, InstancePointers};
use crate::tsp::Instance;

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
    /// Checks against the candidate lists' length; the message names the parameter.
    pub fn check(&self, list_length: usize) -> Result<(), String> {
        if self.neighbours == 0 || self.neighbours as usize > list_length {
            return Err(format!(
                "local-search neighbours must be in 1..={list_length} (the candidate lists' \
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

    /// The kernel variant for this instance (with the colony's extra compiler flags).
    pub fn variant(&self, inst: &Instance, arch: kernels::Arch, flags: &[String]) -> Variant {
        let v = Variant::new("tsp/ls-2opt", arch)
            .define("TSP_DIST", dist_define(inst))
            .define("LS_NEIGHBOURS", self.neighbours)
            .define("LS_WARPS", self.warps);
        flags.iter().fold(v, |v, f| v.flag(f))
    }
}

/// Dynamic shared memory of a block that searches its `warps` tours of `n` cities in shared
/// memory (tour and positions, 4 bytes each).
pub fn shared_bytes(n: usize, warps: u32) -> usize {
    warps as usize * 2 * n * 4
}

/// The most tours per block (up to `warps`) whose rows fit in `optin` bytes of shared memory:
/// what the MAX-MIN driver uses so that large instances still search in shared memory.
pub fn warps_in_shared(n: usize, warps: u32, optin: u32) -> u32 {
    (1..=warps)
        .rev()
        .find(|&w| shared_bytes(n, w) <= optin as usize)
        .unwrap_or(warps)
}

/// The loaded kernel with its per-tour scratch (positions, don't-look bits, move counts).
pub struct LocalSearch {
    pub kernel: Kernel,
    pub launch: Launch,
    positions: CudaSlice<i32>,
    dont_look: CudaSlice<u32>,
    moves: CudaSlice<i64>,
    /// Tours are searched in shared memory (else in global memory).
    pub in_shared: bool,
    n: usize,
    tours: usize,
}

impl LocalSearch {
    /// For `tours` tours of `n` cities.
    pub fn new(
        module: &Module,
        gpu: &Gpu,
        n: usize,
        tours: usize,
        params: &LsParams,
    ) -> Result<LocalSearch, KernelError> {
        let kernel = module.function("tsp_ls_2opt")?;
        let blocks = u32::try_from(tours.div_ceil(params.warps as usize)).map_err(|_| {
            KernelError::InvalidConfig(format!("{tours} tours need too many blocks"))
        })?;
        let mut launch = Launch::linear(blocks, 32 * params.warps);
        let shared = shared_bytes(n, params.warps);
        let in_shared = shared <= gpu.info.max_shared_bytes_per_block_optin as usize;
        if in_shared {
            kernel.allow_shared_bytes(shared)?;
            launch.shared_bytes = shared as u32;
        }
        kernel.check_launch(&launch)?;
        let stream = gpu.stream();
        let alloc = |what: &str| KernelError::driver(format!("allocating {what} of {tours} tours"));
        Ok(LocalSearch {
            positions: stream
                .alloc_zeros::<i32>(tours * n)
                .map_err(alloc("city positions"))?,
            dont_look: stream
                .alloc_zeros::<u32>(tours * n.div_ceil(32))
                .map_err(alloc("don't-look bits"))?,
            moves: stream
                .alloc_zeros::<i64>(tours)
                .map_err(alloc("move counts"))?,
            kernel,
            launch,
            in_shared,
            n,
            tours,
        })
    }

    /// Improves the tours of `tours` (int[m * n], m = the tours this search was built for) to
    /// 2-opt local optima over the first `neighbours` candidates and writes their exact
    /// lengths into `lengths`.
    pub fn run(
        &mut self,
        gpu: &Gpu,
        instance: InstancePointers,
        tours: &mut CudaSlice<i32>,
        lengths: &mut CudaSlice<i64>,
        clock: &mut KernelClock,
    ) -> Result<(), KernelError> {
        if tours.len() < self.tours * self.n || lengths.len() < self.tours {
            return Err(KernelError::InvalidConfig(format!(
                "local search of {} tours of {} cities: buffers hold {} cells and {} lengths",
                self.tours,
                self.n,
                tours.len(),
                lengths.len()
            )));
        }
        let (n, m, k) = (self.n as i32, self.tours as i32, instance.k as i32);
        // A strictly improving search ends by itself; the cap only bounds a faulty kernel.
        let max_moves = 64i64 * i64::from(n).max(64);
        let in_shared = i32::from(self.in_shared);
        clock.start(gpu)?;
        let stream = gpu.stream();
        let mut builder = stream.launch_builder(self.kernel.function());
        builder
            .arg(&instance.coords)
            .arg(&instance.matrix)
            .arg(&n)
            .arg(&instance.candidates)
            .arg(&k)
            .arg(tours)
            .arg(&mut self.positions)
            .arg(&mut self.dont_look)
            .arg(lengths)
            .arg(&mut self.moves)
            .arg(&m)
            .arg(&max_moves)
            .arg(&in_shared);
        // SAFETY: matches tsp_ls_2opt; tours hold m * n ints and lengths m (checked above),
        // positions m * n, the don't-look rows m * ceil(n / 32) words, moves m; the instance
        // pointers come from a live colony of the same n.
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
