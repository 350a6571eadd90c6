//! The driver of `ig-block`: many iterated-greedy walks, one per block, run in launches of a
//! few iterations each, with restarts of stagnating walks from an elite between launches.
//!
//! Every walk starts from NEH (computed here, as the CPU `ig` does) and improves it by its own
//! local search on the GPU. Between launches the host reads the walks' bests; a walk whose best
//! has not improved for `restart_stall` launches continues from the best sequence of one of the
//! four best walks (drawn at random), so that the walks that found nothing follow the ones that
//! did, while the best walks keep their own trajectories; with `relink`, from a sequence on the
//! path between its own best and an elite pool's member ([`super::restarts`]).

use std::time::Instant;

use cudarc::driver::PushKernelArg;
use kernels::gpu::{Gpu, Kernel, Launch, Module};
use kernels::KernelError;

use super::restarts::{apply, Relinking, RestartArm, Restarts, WalkRows};
use super::{completion_fits_i32, driver, GpuParams, IgwTables, Prepared};
use crate::pfsp::{neh, Instance, DEFAULT_IG_ITERATIONS};
use crate::run::{stream_rng, Outcome, RunOptions};
use kernels::gpu::KernelClock;

/// The most threads per block (the reduction scratch holds 32 warps).
pub const IG_MAX_THREADS: u32 = 1024;
/// At least two warps: one builds the heads while the other builds the tails.
pub const IG_MIN_THREADS: u32 = 64;
/// The kernel keeps the removed jobs in a fixed array.
pub const IG_MAX_DESTRUCTION: usize = 64;
/// Static shared memory of the kernel beside the dynamic part (reduction scratch, removed jobs).
const IG_STATIC_SHARED: usize = 1024;

/// One walk's heads and tails in `pfsp_ig_block` (mirrors its layout): (n + 1) rows of an odd
/// stride of machines each.
pub fn ig_table_bytes(n: usize, m: usize, narrow: bool) -> usize {
    let width = if narrow { 4 } else { 8 };
    2 * (n + 1) * (m | 1) * width
}

/// Shared memory of `pfsp_ig_block` with its tables in shared memory: the tables, four
/// sequences of n ints and the static part.
pub fn ig_shared_bytes(n: usize, m: usize, narrow: bool) -> usize {
    ig_table_bytes(n, m, narrow) + walk_shared_bytes(n)
}

/// Shared memory every walk of a block keeps whatever the layout: its four sequences of n ints
/// and its static part.
pub(super) fn walk_shared_bytes(n: usize) -> usize {
    16 * n + IG_STATIC_SHARED
}

/// Where an ig-block walk keeps its heads and tails, and with them its processing times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgLayout {
    /// Tables in shared memory; times read through the read-only cache.
    SharedTables,
    /// Tables in global memory (L2); with `shared_times` the block stages the processing times
    /// in the shared memory the tables left free.
    GlobalTables { shared_times: bool },
}

impl IgLayout {
    /// The layout for an instance on a device offering `optin_shared` bytes per block: tables
    /// in shared memory where they fit, unless `tables` says otherwise; with global tables, the
    /// times in shared memory where they fit.
    pub fn of(params: &GpuParams, inst: &Instance, optin_shared: usize) -> IgLayout {
        let (n, m, narrow) = (inst.jobs, inst.machines, completion_fits_i32(inst));
        let shared_tables = match params.tables {
            IgwTables::Shared => true,
            IgwTables::Global => false,
            IgwTables::Auto => ig_shared_bytes(n, m, narrow) <= optin_shared,
        };
        if shared_tables {
            IgLayout::SharedTables
        } else {
            // Every walk of a block keeps its four sequences and static part beside the one
            // staged copy of the times.
            let walks = params.walks_per_block.max(1) as usize;
            IgLayout::GlobalTables {
                shared_times: times_bytes(n, m) + walks * walk_shared_bytes(n) <= optin_shared,
            }
        }
    }

    pub fn tables_in_shared(self) -> bool {
        self == IgLayout::SharedTables
    }

    /// Dynamic shared memory of one block of `walks` walks (more than one only with global
    /// tables): each walk's four sequences, and the tables or the times the block holds.
    fn dynamic_shared_bytes(self, inst: &Instance, walks: usize) -> usize {
        let (n, m, narrow) = (inst.jobs, inst.machines, completion_fits_i32(inst));
        16 * n * walks
            + match self {
                IgLayout::SharedTables => ig_table_bytes(n, m, narrow),
                IgLayout::GlobalTables { shared_times: true } => times_bytes(n, m),
                IgLayout::GlobalTables {
                    shared_times: false,
                } => 0,
            }
    }

    /// What `mats solve` prints and `--json` records.
    pub fn name(self) -> &'static str {
        match self {
            IgLayout::SharedTables => "tables in shared memory",
            IgLayout::GlobalTables { shared_times: true } => {
                "tables in global memory, times in shared memory"
            }
            IgLayout::GlobalTables {
                shared_times: false,
            } => "tables in global memory",
        }
    }
}

/// The processing times as the kernels hold them: n rows of m padded to a multiple of 4.
fn times_bytes(n: usize, m: usize) -> usize {
    n * m.div_ceil(4) * 4 * 4
}

pub(super) fn kernels(
    module: &Module,
    gpu: &Gpu,
    inst: &Instance,
    params: &GpuParams,
    layout: IgLayout,
) -> Result<(Kernel, Option<Kernel>, Launch), KernelError> {
    // `walks_per_block` walks of t threads each share a block (`check` allows more than one
    // only with global tables); the launch counts blocks, the driver walks.
    let per_block = params.walks_per_block.max(1);
    let t = params.threads_per_block * per_block;
    let kernel = module.function("pfsp_ig_block")?;
    let in_shared = layout.tables_in_shared();
    let shared = layout.dynamic_shared_bytes(inst, per_block as usize);
    kernel.allow_shared_bytes(shared)?;
    let resident = kernel.blocks_per_sm(t, shared as u32)?.max(1) * gpu.info.sm_count.max(1);
    let blocks = match params.blocks {
        // As many walks as the GPU holds at once: more would only queue.
        0 if in_shared => resident,
        // One block per SM: at 800 x 60 the tables of 132 walks (52 MB) about fill an H100's
        // L2; more blocks would spill them to DRAM, whose latency every wavefront step waits on.
        0 => gpu.info.sm_count.max(1).min(resident),
        walks => walks / per_block,
    };
    let launch = Launch {
        shared_bytes: shared as u32,
        ..Launch::linear(blocks, t)
    };
    kernel.check_launch(&launch)?;
    Ok((kernel, None, launch))
}

pub(super) fn run(
    prepared: &Prepared,
    gpu: &Gpu,
    timer: &mut KernelClock,
    options: &RunOptions,
    seeds: &[(Vec<usize>, i64)],
) -> Result<(Outcome, super::WalkBests, Option<String>), KernelError> {
    let inst = &prepared.inst;
    let params = &prepared.params;
    let (n, m) = (inst.jobs, inst.machines);
    let walks = (prepared.launch.grid.0 * prepared.params.walks_per_block.max(1)) as usize;
    let stream = gpu.stream().clone();
    let start = neh(inst);
    let start_value = inst.makespan(&start);
    let (starts, start_values) = super::walk_starts(walks, &start, start_value, seeds);
    let upload_i32 = |v: &[i32]| {
        stream
            .clone_htod(v)
            .map_err(driver("uploading ig-block walks"))
    };
    let mut cur = upload_i32(&starts)?;
    let mut best = upload_i32(&starts)?;
    let mut cur_values = stream
        .clone_htod(&vec![-1i64; walks])
        .map_err(driver("uploading ig-block values"))?;
    let mut best_values = stream
        .clone_htod(&start_values)
        .map_err(driver("uploading ig-block values"))?;
    let mut counters = stream
        .alloc_zeros::<u64>(walks)
        .map_err(driver("allocating ig-block counters"))?;
    let mut evaluated = stream
        .alloc_zeros::<u64>(walks)
        .map_err(driver("allocating ig-block counters"))?;
    // The kernel ignores `tables` where they live in shared memory; a byte stands in.
    let table_bytes = match prepared.ig_layout {
        Some(IgLayout::GlobalTables { .. }) => walks * ig_table_bytes(n, m, !prepared.wide),
        _ => 1,
    };
    let mut tables = stream
        .alloc_zeros::<u8>(table_bytes)
        .map_err(driver("allocating ig-block's tables in global memory"))?;

    let total: i64 = inst.times_machine_major().iter().sum();
    let temperature = params.temperature * total as f64 / (n * m * 10) as f64;
    let destruction = params.destruction.min(n - 1);
    let seed = options.seed;
    let per_walk = options
        .budget
        .iterations
        .unwrap_or(if options.budget.time_limit.is_some() {
            u64::MAX
        } else {
            DEFAULT_IG_ITERATIONS
        });
    let deadline = options
        .budget
        .time_limit
        .map(|limit| Instant::now() + limit);
    let mut restarts = restarts_of(
        params,
        Some(destruction),
        start_values,
        stream_rng(seed ^ 0x1e_b10c, 0),
    );
    // Each walk's d (its arm's under --adapt), written again when the race moves walks.
    let mut walk_destructions = restarts.destructions(walks, destruction, n - 1);
    let mut destructions = upload_i32(&walk_destructions)?;
    let watch = options.budget.watch();
    // The first launch does the initial local search and one iteration, and measures.
    let mut chunk: u64 = 1;
    let mut spent = 0u64;
    let launch = prepared.launch;
    let search_started = Instant::now();
    while spent < per_walk {
        let this = chunk.min(per_walk - spent) as i32;
        let before = timer.seconds;
        timer.timed(gpu, "running ig-block", 1, || {
            let mut builder = stream.launch_builder(prepared.kernel.function());
            builder
                .arg(&prepared.times)
                .arg(&seed)
                .arg(&this)
                .arg(&destructions)
                .arg(&temperature)
                .arg(&mut cur)
                .arg(&mut cur_values)
                .arg(&mut best)
                .arg(&mut best_values)
                .arg(&mut counters)
                .arg(&mut evaluated)
                .arg(&mut tables);
            // SAFETY: matches pfsp_ig_block; every buffer holds `walks` walks of n jobs, and
            // `tables` every walk's heads and tails where the kernel keeps them there.
            unsafe { builder.launch(launch.config()) }
                .map(|_| ())
                .map_err(prepared.kernel.launch_error(&launch))
        })?;
        spent += this as u64;
        if super::offer_best(&watch, &stream, &best_values)? {
            break;
        }
        let now = Instant::now();
        if crate::run::past(deadline) || spent >= per_walk {
            break;
        }
        if restarts.restarts_at_all() && walks > 1 {
            restart(
                &stream,
                inst,
                &mut restarts,
                &mut best_values,
                &mut best,
                &mut cur,
                &mut cur_values,
            )?;
            let now_destructions = restarts.destructions(walks, destruction, n - 1);
            if now_destructions != walk_destructions {
                walk_destructions = now_destructions;
                stream
                    .memcpy_htod(&walk_destructions, &mut destructions)
                    .map_err(driver("writing the walks' destruction sizes"))?;
            }
        }
        chunk = super::next_chunk(
            timer.seconds - before,
            this,
            deadline,
            now,
            params.launch_iterations,
            (n, m),
        );
    }
    timer.search_seconds = search_started.elapsed().as_secs_f64();
    let values = stream
        .clone_dtoh(&best_values)
        .map_err(driver("reading ig-block bests"))?;
    let (objective, index) = values
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, i))
        .min()
        .expect("at least one walk");
    let row = stream
        .clone_dtoh(&best.slice(index * n..(index + 1) * n))
        .map_err(driver("reading the best sequence"))?;
    let done = stream
        .clone_dtoh(&evaluated)
        .map_err(driver("reading ig-block counters"))?;
    let bests = super::walk_bests(prepared, &stream, &best, &values)?;
    Ok((
        Outcome {
            solution: row.into_iter().map(|j| j.max(0) as usize).collect(),
            objective,
            iterations: spent * walks as u64,
            evaluations: done.iter().sum(),
        },
        bests,
        restarts.summary(),
    ))
}

/// The restart state of a run whose walks start with these bests: copying, or with
/// `relink` path relinking at least the largest destruction size of moves from both ends (one
/// iteration's destruction moves a sequence by at most that many insertions, so nearer
/// sequences are what a walk reaches on its own).
pub(super) fn restarts_of(
    params: &GpuParams,
    destruction: Option<usize>,
    start_values: Vec<i64>,
    rng: crate::run::SolverRng,
) -> Restarts {
    let arms = RestartArm::arms(
        params.restart_stall,
        params.relink,
        destruction,
        params.adapt,
    );
    let relinking = arms.iter().any(|a| a.relink).then(|| Relinking {
        pool: crate::pfsp::relink::ElitePool::new(params.elite),
        min_distance: arms
            .iter()
            .map(|a| a.destruction)
            .chain([params.destruction, params.destruction_max])
            .max()
            .unwrap_or(1)
            .max(1),
    });
    Restarts::with_arms(arms, start_values, rng, relinking)
}

/// Restarts walks whose best has not improved for `restart_stall` launches: reads the walks'
/// bests, lets [`Restarts`] plan the new current sequences and makespans, and writes them
/// where the kernels read a walk's current state, as [`super::restarts::apply`] says (a walk
/// keeps its own best unless a relinked sequence beats it).
pub(super) fn restart(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    inst: &Instance,
    restarts: &mut Restarts,
    best_values: &mut cudarc::driver::CudaSlice<i64>,
    best: &mut cudarc::driver::CudaSlice<i32>,
    cur: &mut cudarc::driver::CudaSlice<i32>,
    cur_values: &mut cudarc::driver::CudaSlice<i64>,
) -> Result<(), KernelError> {
    let mut values = stream
        .clone_dtoh(best_values)
        .map_err(driver("reading the walks' best makespans"))?;
    let pending = restarts.tally(&values);
    if pending.is_idle() {
        return Ok(());
    }
    let mut bests = stream
        .clone_dtoh(best)
        .map_err(driver("reading the walks' best sequences"))?;
    let plan = restarts.plan(inst, &values, &bests, &pending);
    if plan.is_empty() {
        return Ok(());
    }
    let mut host_cur = stream
        .clone_dtoh(cur)
        .map_err(driver("reading the walks' current sequences"))?;
    let mut host_values = stream
        .clone_dtoh(cur_values)
        .map_err(driver("reading the walks' current makespans"))?;
    let rows = WalkRows {
        cur: &mut host_cur,
        cur_values: &mut host_values,
        best: &mut bests,
        best_values: &mut values,
    };
    if apply(&plan, inst.jobs, rows) {
        stream
            .memcpy_htod(&bests, best)
            .map_err(driver("writing the walks' best sequences"))?;
        stream
            .memcpy_htod(&values, best_values)
            .map_err(driver("writing the walks' best makespans"))?;
    }
    stream
        .memcpy_htod(&host_cur, cur)
        .map_err(driver("writing the restarted walks' sequences"))?;
    stream
        .memcpy_htod(&host_values, cur_values)
        .map_err(driver("writing the restarted walks' makespans"))?;
    Ok(())
}
