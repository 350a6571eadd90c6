//! The GPU Ant System: the CPU [`crate::tsp::ant_system`]'s iteration on a [`Colony`].
//!
//! Per iteration: construction (one launch), the m lengths read back to pick the iteration's
//! best (its tour is read only when it improves the best so far), evaporation with rho,
//! deposit of 1 / C_k by every ant, choice information (four launches). Initial pheromone
//! m / C_nn as the CPU's default ([`crate::tsp::InitialPheromone::Book`]).

use kernels::gpu::{FunctionAttributes, Gpu, Kernel, KernelClock, Launch};
use kernels::{CacheStatus, KernelCache, KernelError, Resources};

use super::{Colony, GpuParams, PheromoneUpdate};
use crate::run::{Outcome, RunOptions};
use crate::tsp::{CandidateLists, Instance, DEFAULT_AS_ITERATIONS};

/// Length of the nearest-neighbour tour from city 0 (ties by lower index), as the CPU's
/// `nearest_neighbour_tour` builds it, in O(n k) where the candidate lists decide and O(n)
/// per step where they do not, without an n x n matrix.
pub fn nearest_neighbour_length(inst: &Instance, lists: &CandidateLists) -> i64 {
    let n = inst.n();
    let mut visited = vec![false; n];
    let mut current = 0;
    visited[0] = true;
    let mut total = 0i64;
    for _ in 1..n {
        let list = lists.of(current);
        // The first unvisited city of the list is the nearest unvisited one when it is
        // strictly nearer than the list's last entry (cities off the list are at least that
        // far, and the list is ordered by (distance, index)).
        let listed = list.iter().copied().find(|&c| !visited[c]).filter(|&c| {
            list.last()
                .is_some_and(|&last| inst.dist(current, c) < inst.dist(current, last))
        });
        let next = listed.unwrap_or_else(|| {
            let mut best = (i64::MAX, usize::MAX);
            for (j, &v) in visited.iter().enumerate() {
                if !v {
                    let d = inst.dist(current, j);
                    if d < best.0 {
                        best = (d, j);
                    }
                }
            }
            best.1
        });
        total += inst.dist(current, next);
        visited[next] = true;
        current = next;
    }
    (total + inst.dist(current, 0)).max(1)
}

/// What a GPU Ant System run returns.
#[derive(Debug, Clone)]
pub struct TspGpuRun {
    /// Best tour over all iterations, its exact length (re-scored on the CPU), iterations and
    /// ant steps (iterations x m x n).
    pub outcome: Outcome,
    /// Event time of the construction launches.
    pub construct_seconds: f64,
    /// Event time of evaporation, deposit and choice information.
    pub pheromone_seconds: f64,
    /// Wall time of the iteration loop (launches, read-backs, host work).
    pub search_seconds: f64,
    pub launches: u64,
    pub cache: CacheStatus,
    pub compile_seconds: f64,
    pub resources: Vec<Resources>,
    pub attributes: FunctionAttributes,
    pub launch: Launch,
    /// Whether the ants' scratch lives in global memory.
    pub scratch_in_global: bool,
    /// `focused --adapt`: the race's end state (ants per arm).
    pub adaptation: Option<String>,
}

/// A colony built for an instance: what repeated runs share.
pub struct Prepared {
    colony: Colony,
    inst: Instance,
    params: GpuParams,
    tau0: f32,
}

/// Checks, compiles, uploads and allocates (see [`Colony::new`]).
pub fn prepare(
    gpu: &Gpu,
    cache: &KernelCache,
    inst: &Instance,
    params: &GpuParams,
) -> Result<Prepared, KernelError> {
    let colony = Colony::new(gpu, cache, inst, params)?;
    let lists = CandidateLists::from_instance(inst, colony.list_length());
    let nn = nearest_neighbour_length(inst, &lists);
    let tau0 = (colony.ants() as f64 / nn as f64) as f32;
    Ok(Prepared {
        colony,
        inst: inst.clone(),
        params: params.clone(),
        tau0,
    })
}

impl Prepared {
    pub fn colony(&mut self) -> &mut Colony {
        &mut self.colony
    }

    /// Initial pheromone m / C_nn.
    pub fn tau0(&self) -> f32 {
        self.tau0
    }

    /// One run from `options.seed` under `options.budget` (iterations; default
    /// [`DEFAULT_AS_ITERATIONS`]); the best tour, re-scored on the CPU.
    pub fn run(&mut self, gpu: &Gpu, options: &RunOptions) -> Result<TspGpuRun, KernelError> {
        let deadline = options.budget.start(DEFAULT_AS_ITERATIONS);
        let colony = &mut self.colony;
        let (n, m) = (colony.cities(), colony.ants());
        colony.reset_pheromone(self.tau0)?;
        colony.compute_choice_info()?;
        let mut construct_clock = KernelClock::new(gpu)?;
        let mut update_clock = KernelClock::new(gpu)?;
        let update_launches = match self.params.pheromone {
            PheromoneUpdate::Atomic => 4,
            PheromoneUpdate::Gather => 5,
        };
        let rho = self.params.rho;
        let mut best: Option<(i64, Vec<usize>)> = None;
        let mut iterations = 0u64;
        let started = std::time::Instant::now();
        while iterations == 0 || !deadline.reached(iterations) {
            construct_clock.timed(gpu, "constructing tours", 1, || {
                colony.construct(options.seed, iterations)
            })?;
            let lengths = colony.lengths_to_host()?;
            let (ant, &length) = lengths
                .iter()
                .enumerate()
                .min_by_key(|&(a, &l)| (l, a))
                .ok_or_else(|| KernelError::InvalidConfig("a colony without ants".into()))?;
            if best.as_ref().is_none_or(|(b, _)| length < *b) {
                best = Some((length, colony.tour_to_host(ant)?));
            }
            update_clock.timed(gpu, "updating the pheromone", update_launches, || {
                colony.evaporate(rho, 0.0, f32::INFINITY)?;
                colony.deposit_ants(1.0)?;
                colony.compute_choice_info()
            })?;
            iterations += 1;
            if let Some((b, _)) = &best {
                deadline.offer(*b);
            }
        }
        let search_seconds = started.elapsed().as_secs_f64();
        let Some((length, tour)) = best else {
            unreachable!("one iteration ran")
        };
        check_tour(&self.inst, &tour, length)?;
        let (kernel, launch) = colony.construct_kernel();
        Ok(TspGpuRun {
            outcome: Outcome {
                solution: tour,
                objective: length,
                iterations,
                evaluations: iterations * m as u64 * n as u64,
            },
            construct_seconds: construct_clock.seconds,
            pheromone_seconds: update_clock.seconds,
            search_seconds,
            launches: construct_clock.launches + update_clock.launches,
            cache: colony.cache,
            compile_seconds: colony.compile_seconds,
            resources: colony.resources.clone(),
            attributes: kernel.attributes,
            launch,
            scratch_in_global: colony.scratch_in_global(),
            adaptation: None,
        })
    }
}

/// Checks that `tour` visits every city once and that the GPU's `length` is its exact length.
pub fn check_tour(inst: &Instance, tour: &[usize], length: i64) -> Result<(), KernelError> {
    if crate::permutation::check(tour, inst.n()).is_err() {
        return Err(KernelError::InvalidConfig(format!(
            "{}: the GPU returned a tour that is not a permutation of the {} cities",
            inst.name,
            inst.n()
        )));
    }
    let exact = inst.tour_length(tour);
    if exact != length {
        return Err(KernelError::InvalidConfig(format!(
            "{}: the GPU reported length {length} for a tour of exact length {exact}",
            inst.name
        )));
    }
    Ok(())
}

impl TspGpuRun {
    /// The family-neutral record of this run; `entry` is the main kernel's.
    pub fn into_gpu_run(self, entry: &str) -> crate::gpu::workload::GpuRun {
        crate::gpu::workload::GpuRun {
            outcome: self.outcome,
            kernel_seconds: self.construct_seconds + self.pheromone_seconds,
            launches: u32::try_from(self.launches).unwrap_or(u32::MAX),
            cache: self.cache,
            compile_seconds: self.compile_seconds,
            resources: self.resources,
            attributes: self.attributes,
            launch: self.launch,
            entry: entry.to_string(),
            layout: None,
            blocks_per_sm: None,
            searches: None,
            adaptation: self.adaptation,
        }
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
}
