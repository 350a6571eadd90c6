//! MAX-MIN Ant System with 2-opt local search on the GPU: the CPU [`crate::tsp::mmas`]'s
//! iteration on a [`Colony`] and a [`LocalSearch`], with the same deposit schedule, trail
//! limits and restart rule (see that module).
//!
//! Per iteration: construction (one launch, any construction variant), 2-opt on every tour
//! (one launch, one warp per tour, writing exact lengths), the m lengths read back; the
//! iteration's best tour is copied on the device into a one-tour buffer (and read to the host
//! only when it improves the best so far); evaporation with the trail limits, the deposit of
//! that one tour (or of the best so far, on the schedule's iterations), choice information.
//! The GPU runs many more ants per iteration than the CPU (default 256, [`GpuParams::mmas`]),
//! which is where its advantage at equal wall time comes from.

use cudarc::driver::CudaSlice;
use kernels::gpu::{Gpu, Kernel, KernelClock, Launch};
use kernels::{KernelCache, KernelError};

use super::ant_system::{check_tour, nearest_neighbour_length, TspGpuRun};
use super::local_search::LocalSearch;
use super::{Colony, GpuParams};
use crate::run::{Outcome, RunOptions};
use crate::tsp::mmas::{best_so_far_period, trail_limits};
use crate::tsp::{CandidateLists, Instance, DEFAULT_MMAS_ITERATIONS};

/// The colony, the local search and the one-tour deposit buffer, built for an instance.
pub struct Prepared {
    colony: Colony,
    search: LocalSearch,
    _search_module: kernels::gpu::Module,
    deposit_tour: CudaSlice<i32>,
    deposit_length: CudaSlice<i64>,
    inst: Instance,
    params: GpuParams,
    nn_length: i64,
    /// A tour the next runs take as their best so far (an island's elite): the trail limits
    /// follow its length and the best-so-far deposits lay it down from the first iteration.
    start: Option<(i64, Vec<usize>)>,
    /// An island (`start_from`) continues on the pheromone its last epoch left, instead of
    /// resetting it; `trails` says whether a run has left any.
    island: bool,
    trails: bool,
}

/// Checks, compiles (both modules through the cache), uploads and allocates.
pub fn prepare(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
) -> Result<Prepared, KernelError> {
    let colony = Colony::new(gpu, cache, inst, params)?;
    params
        .local_search
        .check(colony.list_length())
        .map_err(KernelError::InvalidConfig)?;
    // Fewer tours per block where the configured number would not fit in shared memory.
    let mut local_search = params.local_search;
    local_search.warps = super::local_search::warps_in_shared(
        inst.n(),
        local_search.warps,
        gpu.info.max_shared_bytes_per_block_optin,
    );
    let variant = local_search.variant(inst, gpu.info.arch, &params.flags);
    let (compiled, _) = cache.get_or_compile(&variant)?;
    let module = gpu.load(&compiled)?;
    let (n, m) = (inst.n(), colony.ants());
    let search = LocalSearch::new(&module, gpu, n, m, &local_search)?;
    let stream = gpu.stream();
    let deposit_tour = stream
        .alloc_zeros::<i32>(n)
        .map_err(KernelError::driver("allocating the deposit tour"))?;
    let deposit_length = stream
        .alloc_zeros::<i64>(1)
        .map_err(KernelError::driver("allocating the deposit length"))?;
    let lists = CandidateLists::from_instance(inst, colony.list_length());
    let nn_length = nearest_neighbour_length(inst, &lists);
    Ok(Prepared {
        colony,
        search,
        _search_module: module,
        deposit_tour,
        deposit_length,
        inst: inst.clone(),
        params: params.clone(),
        nn_length,
        start: None,
        island: false,
        trails: false,
    })
}

impl Prepared {
    /// One run from `options.seed` under `options.budget` (iterations, default
    /// [`DEFAULT_MMAS_ITERATIONS`]; time limit; target); the best tour, re-scored on the CPU.
    /// `construct_seconds` is construction plus local search, `pheromone_seconds` the update.
    pub fn run(&mut self, gpu: &Gpu, options: &RunOptions) -> Result<TspGpuRun, KernelError> {
        let deadline = options.budget.start(DEFAULT_MMAS_ITERATIONS);
        let stream = gpu.stream().clone();
        let (n, m) = (self.colony.cities(), self.colony.ants());
        let rho = self.params.rho;
        let mut best: Option<(i64, Vec<usize>)> = self.start.clone();
        let first_length = best.as_ref().map_or(self.nn_length, |(len, _)| *len);
        let (mut tau_min, mut tau_max) = trail_limits(rho, first_length, n);
        if !(self.island && self.trails) {
            self.colony.reset_pheromone(tau_max as f32)?;
        }
        self.colony.compute_choice_info()?;
        let mut construct_clock = KernelClock::new(gpu)?;
        let mut search_clock = KernelClock::new(gpu)?;
        let mut update_clock = KernelClock::new(gpu)?;
        let mut restart_best = i64::MAX;
        let (mut iteration, mut restart_iteration, mut last_improvement) = (0u64, 0u64, 0u64);
        let started = std::time::Instant::now();
        while iteration == 0 || !deadline.reached(iteration) {
            let colony = &mut self.colony;
            construct_clock.timed(gpu, "constructing tours", 1, || {
                colony.construct(options.seed, iteration)
            })?;
            let pointers = colony.instance_pointers();
            let (tours, lengths) = colony.tours_and_lengths_mut();
            self.search
                .run(gpu, pointers, tours, lengths, &mut search_clock)?;
            let lengths = colony.lengths_to_host()?;
            let (ant, &ib_len) = lengths
                .iter()
                .enumerate()
                .min_by_key(|&(a, &l)| (l, a))
                .ok_or_else(|| KernelError::InvalidConfig("a colony without ants".into()))?;
            if best.as_ref().is_none_or(|(b, _)| ib_len < *b) {
                best = Some((ib_len, colony.tour_to_host(ant)?));
                (tau_min, tau_max) = trail_limits(rho, ib_len, n);
                deadline.offer(ib_len);
            }
            if ib_len < restart_best {
                restart_best = ib_len;
                last_improvement = iteration;
            }
            let since_restart = iteration - restart_iteration;
            let deposit_best_so_far = since_restart % best_so_far_period(since_restart) == 0;
            if deposit_best_so_far {
                let (len, tour) = best.as_ref().expect("set above");
                let tour: Vec<i32> = tour.iter().map(|&c| c as i32).collect();
                stream
                    .memcpy_htod(&tour, &mut self.deposit_tour)
                    .map_err(KernelError::driver("uploading the best tour"))?;
                stream
                    .memcpy_htod(&[*len], &mut self.deposit_length)
                    .map_err(KernelError::driver("uploading the best length"))?;
            } else {
                let row = colony.tours().slice(ant * n..(ant + 1) * n);
                stream
                    .memcpy_dtod(&row, &mut self.deposit_tour)
                    .map_err(KernelError::driver("copying the iteration's best tour"))?;
                stream
                    .memcpy_htod(&[ib_len], &mut self.deposit_length)
                    .map_err(KernelError::driver("uploading the iteration's best length"))?;
            }
            let restart = iteration - last_improvement >= self.params.restart_stall;
            let (deposit_tour, deposit_length) = (&self.deposit_tour, &self.deposit_length);
            update_clock.timed(gpu, "updating the pheromone", 4, || {
                // tau_max bounds the deposit too: (1 - rho) tau_max + 1 / C <= tau_max for
                // any C >= the best length, so one clamp, in the evaporation, suffices.
                colony.evaporate(rho, tau_min as f32, tau_max as f32)?;
                colony.deposit(deposit_tour, deposit_length, 1, 1.0)?;
                if restart {
                    colony.reset_pheromone(tau_max as f32)?;
                }
                colony.compute_choice_info()
            })?;
            if restart {
                restart_iteration = iteration + 1;
                last_improvement = iteration + 1;
                restart_best = i64::MAX;
            }
            iteration += 1;
        }
        let search_seconds = started.elapsed().as_secs_f64();
        self.trails = true;
        let Some((length, tour)) = best else {
            unreachable!("one iteration ran")
        };
        check_tour(&self.inst, &tour, length)?;
        let (kernel, launch) = self.colony.construct_kernel();
        Ok(TspGpuRun {
            outcome: Outcome {
                solution: tour,
                objective: length,
                iterations: iteration,
                evaluations: iteration * m as u64 * n as u64,
            },
            construct_seconds: construct_clock.seconds + search_clock.seconds,
            pheromone_seconds: update_clock.seconds,
            search_seconds,
            launches: construct_clock.launches + search_clock.launches + update_clock.launches,
            cache: self.colony.cache,
            compile_seconds: self.colony.compile_seconds,
            resources: self.colony.resources.clone(),
            attributes: kernel.attributes,
            launch,
            scratch_in_global: self.colony.scratch_in_global(),
            adaptation: None,
        })
    }

    /// The local search kernel and its launch.
    pub fn search_kernel(&self) -> (&Kernel, Launch) {
        (&self.search.kernel, self.search.launch)
    }
}

impl crate::gpu::workload::PreparedRun for Prepared {
    fn run(
        &mut self,
        gpu: &Gpu,
        options: &RunOptions,
    ) -> Result<crate::gpu::workload::GpuRun, KernelError> {
        Ok(Prepared::run(self, gpu, options)?.into_gpu_run(self.params.construction.entry()))
    }

    fn launch(&self) -> Launch {
        self.colony.construct_kernel().1
    }

    fn kernel(&self) -> &Kernel {
        self.colony.construct_kernel().0
    }

    fn start_from(&mut self, starts: &[Vec<usize>]) -> bool {
        // The colony is one population: the best seed becomes its best so far.
        self.island = true;
        self.start = starts
            .iter()
            .find(|t| crate::permutation::check(t, self.inst.n()).is_ok())
            .map(|t| (self.inst.tour_length(t), t.clone()));
        true
    }
}
