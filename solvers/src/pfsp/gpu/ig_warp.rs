//! The driver of `ig-warp`: iterated-greedy walks of one warp each, `warps` per block, run in
//! launches of a few iterations, with the same elite restarts as `ig-block` between launches.
//!
//! The walk is the CPU reference [`crate::pfsp::ig_warp`] (same draws, moves and acceptance
//! table); with `trace` the run returns every walk's state so that tests can replay the walks on
//! the CPU. Each walk's tails table and chunk-boundary rows live in shared memory where a
//! block's walks fit in [`SHARED_AUTO_BYTES`] (or where asked), else in a global scratch buffer
//! (one slice per walk, read and written along coalesced anti-diagonals): so 800 x 60 runs too.

use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, CudaStream, PushKernelArg};
use kernels::gpu::{DeviceInfo, Gpu, Kernel, KernelClock, Launch, Module};
use kernels::KernelError;

use super::{completion_fits_i32, driver, GpuParams, Prepared};
use crate::pfsp::ig_warp::{acceptance_table, temperature, WalkParams, MAX_DESTRUCTION};
use crate::pfsp::{neh, Instance, DEFAULT_IG_ITERATIONS};
use crate::run::{stream_rng, Outcome, RunOptions};

/// The most walks (warps) per block.
pub const IGW_MAX_WARPS: u32 = 32;
/// The most walks of one launch (the grid is walks / warps blocks; the scratch buffer grows
/// with it).
pub const IGW_MAX_WALKS: u32 = 1 << 20;
/// With [`IgwTables::Auto`], tables go to shared memory when a block's walks need at most this
/// much (every architecture since sm_70 offers at least 96 KiB per block).
pub const SHARED_AUTO_BYTES: usize = 96 * 1024;

/// Where each walk's tables (tails and chunk boundaries) live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IgwTables {
    /// Shared memory where a block's walks need at most [`SHARED_AUTO_BYTES`], else global.
    #[default]
    Auto,
    Shared,
    Global,
}

impl IgwTables {
    pub fn name(self) -> &'static str {
        match self {
            IgwTables::Auto => "auto",
            IgwTables::Shared => "shared",
            IgwTables::Global => "global",
        }
    }

    pub fn from_name(name: &str) -> Result<IgwTables, String> {
        [IgwTables::Auto, IgwTables::Shared, IgwTables::Global]
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| format!("tables must be auto, shared or global, got {name:?}"))
    }
}

/// Bytes per walk: (table values, sequence ints) as the kernel lays them out: the skewed tails
/// ((n + m + 1) m values) and three boundary rows (n + 1 each); sequence, current and order (n
/// ints each) and the removed jobs (64 ints).
pub fn ig_warp_bytes(n: usize, m: usize, narrow: bool) -> (usize, usize) {
    let width = if narrow { 4 } else { 8 };
    (
        ((n + m + 1) * m + 3 * (n + 1)) * width,
        (3 * n + MAX_DESTRUCTION) * 4,
    )
}

/// Whether the tables of a block's walks go to shared memory.
pub(super) fn tables_in_shared(params: &GpuParams, inst: &Instance) -> bool {
    let (table, _) = ig_warp_bytes(inst.jobs, inst.machines, completion_fits_i32(inst));
    match params.tables {
        IgwTables::Shared => true,
        IgwTables::Global => false,
        IgwTables::Auto => table * params.warps as usize <= SHARED_AUTO_BYTES,
    }
}

/// Dynamic shared memory of one block.
fn shared_bytes(params: &GpuParams, inst: &Instance) -> usize {
    let (table, ints) = ig_warp_bytes(inst.jobs, inst.machines, completion_fits_i32(inst));
    let per_walk = ints
        + if tables_in_shared(params, inst) {
            table
        } else {
            0
        };
    per_walk * params.warps as usize
}

pub(super) fn check(
    params: &GpuParams,
    inst: &Instance,
    device: &DeviceInfo,
) -> Result<(), String> {
    let n = inst.jobs;
    if !(1..=IGW_MAX_WARPS).contains(&params.warps) {
        return Err(format!(
            "ig-warp takes 1..={IGW_MAX_WARPS} warps (walks) per block, got {}",
            params.warps
        ));
    }
    if params.blocks > IGW_MAX_WALKS {
        return Err(format!(
            "ig-warp walks must be in 1..={IGW_MAX_WALKS} (0 = as many as are resident), got {}",
            params.blocks
        ));
    }
    if params.destruction == 0 || params.destruction > MAX_DESTRUCTION {
        return Err(format!(
            "destruction must be in 1..={MAX_DESTRUCTION}, got {}",
            params.destruction
        ));
    }
    if params.destruction_max != 0
        && !(params.destruction..=MAX_DESTRUCTION).contains(&params.destruction_max)
    {
        return Err(format!(
            "the largest destruction must be in {}..={MAX_DESTRUCTION} (at least the smallest), \
             got {}",
            params.destruction, params.destruction_max
        ));
    }
    if !(params.temperature.is_finite() && params.temperature >= 0.0) {
        return Err(format!(
            "temperature must be a finite number >= 0, got {}",
            params.temperature
        ));
    }
    let shared = shared_bytes(params, inst);
    let optin = device.max_shared_bytes_per_block_optin as usize;
    if shared > optin {
        let m = inst.machines;
        return Err(format!(
            "ig-warp with {} walks per block and tables {}: {n} jobs x {m} machines need {shared} \
             bytes of shared memory per block, but {} offers {optin}; use fewer warps or tables \
             in global memory",
            params.warps,
            params.tables.name(),
            device.name
        ));
    }
    Ok(())
}

pub(super) fn kernels(
    module: &Module,
    gpu: &Gpu,
    inst: &Instance,
    params: &GpuParams,
) -> Result<(Kernel, Option<Kernel>, Launch), KernelError> {
    let threads = 32 * params.warps;
    let kernel = module.function("pfsp_ig_warp")?;
    let shared = shared_bytes(params, inst);
    kernel.allow_shared_bytes(shared)?;
    let walks = if params.blocks == 0 {
        // As many walks as the GPU holds at once: more would only queue.
        kernel.blocks_per_sm(threads, shared as u32)?.max(1)
            * gpu.info.sm_count.max(1)
            * params.warps
    } else {
        params.blocks
    };
    let blocks = walks.div_ceil(params.warps);
    let launch = Launch {
        shared_bytes: shared as u32,
        ..Launch::linear(blocks, threads)
    };
    kernel.check_launch(&launch)?;
    Ok((kernel, None, launch))
}

/// One walk's state after a run (with `trace`), for comparison with the CPU reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkState {
    pub cur: Vec<usize>,
    /// -1 if the walk has not finished its first local search.
    pub cur_value: i64,
    pub best: Vec<usize>,
    pub best_value: i64,
    pub counter: u64,
    pub d: usize,
    pub evaluated: u64,
}

/// The number of walks of a prepared ig-warp run.
pub fn walks_of(params: &GpuParams, launch: &Launch) -> usize {
    if params.blocks == 0 {
        (launch.grid.0 * params.warps) as usize
    } else {
        params.blocks as usize
    }
}

/// The walks' device state of one run: current and best sequences with their values, the
/// per-walk counters and destruction sizes, the acceptance table and the tables' scratch.
struct WalkBuffers {
    cur: CudaSlice<i32>,
    best: CudaSlice<i32>,
    cur_values: CudaSlice<i64>,
    best_values: CudaSlice<i64>,
    counters: CudaSlice<u64>,
    d_state: CudaSlice<i32>,
    evaluated: CudaSlice<u64>,
    walked: CudaSlice<u64>,
    accept: CudaSlice<u32>,
    /// Untyped: the kernel reads it as int32 or int64 (PFSP_WIDE); 8-byte units cover both.
    scratch: CudaSlice<u64>,
}

impl WalkBuffers {
    fn upload(
        stream: &std::sync::Arc<CudaStream>,
        starts: &[i32],
        first_cur: &[i64],
        start_values: &[i64],
        d_min: usize,
        table: &[u32],
        scratch_len: usize,
    ) -> Result<WalkBuffers, KernelError> {
        let walks = start_values.len();
        let err = |what: &'static str| driver(what);
        Ok(WalkBuffers {
            cur: stream
                .clone_htod(starts)
                .map_err(err("uploading ig-warp walks"))?,
            best: stream
                .clone_htod(starts)
                .map_err(err("uploading ig-warp walks"))?,
            cur_values: stream
                .clone_htod(first_cur)
                .map_err(err("uploading ig-warp values"))?,
            best_values: stream
                .clone_htod(start_values)
                .map_err(err("uploading ig-warp values"))?,
            counters: stream
                .alloc_zeros::<u64>(walks)
                .map_err(err("allocating ig-warp counters"))?,
            d_state: stream
                .clone_htod(&vec![d_min as i32; walks])
                .map_err(err("uploading ig-warp destruction sizes"))?,
            evaluated: stream
                .alloc_zeros::<u64>(walks)
                .map_err(err("allocating ig-warp counters"))?,
            walked: stream
                .alloc_zeros::<u64>(walks)
                .map_err(err("allocating ig-warp counters"))?,
            accept: stream
                .clone_htod(table)
                .map_err(err("uploading the acceptance table"))?,
            scratch: stream
                .alloc_zeros::<u64>(scratch_len)
                .map_err(err("allocating ig-warp tables"))?,
        })
    }
}

/// One launch's arguments beside the buffers.
struct Slice {
    seed: u64,
    walks: i32,
    /// Iterations per walk (a clock budget decides under a time limit alone).
    iterations: i32,
    d_min: i32,
    d_max: i32,
    ties: i32,
    table_len: i32,
    /// The slice after which walks start no new iteration, and the hard stop.
    budget_ns: u64,
    hard_ns: u64,
}

impl WalkBuffers {
    /// One launch of `pfsp_ig_warp` over every walk.
    fn launch(
        &mut self,
        prepared: &Prepared,
        stream: &std::sync::Arc<CudaStream>,
        a: &Slice,
    ) -> Result<(), KernelError> {
        let launch = prepared.launch;
        let mut builder = stream.launch_builder(prepared.kernel.function());
        builder
            .arg(&prepared.times)
            .arg(&a.seed)
            .arg(&a.walks)
            .arg(&a.iterations)
            .arg(&a.d_min)
            .arg(&a.d_max)
            .arg(&a.ties)
            .arg(&self.accept)
            .arg(&a.table_len)
            .arg(&mut self.cur)
            .arg(&mut self.cur_values)
            .arg(&mut self.best)
            .arg(&mut self.best_values)
            .arg(&mut self.counters)
            .arg(&mut self.d_state)
            .arg(&mut self.evaluated)
            .arg(&mut self.scratch)
            .arg(&a.budget_ns)
            .arg(&a.hard_ns)
            .arg(&mut self.walked);
        // SAFETY: matches pfsp_ig_warp; every buffer holds `walks` walks (n jobs each), the
        // scratch IGW_TABLE values per walk where the tables are global.
        unsafe { builder.launch(launch.config()) }
            .map(|_| ())
            .map_err(prepared.kernel.launch_error(&launch))
    }
}

/// The buffers a traced run reads back into [`WalkState`]s.
struct WalksNow<'a> {
    cur: &'a CudaSlice<i32>,
    best: &'a CudaSlice<i32>,
    cur_values: &'a CudaSlice<i64>,
    counters: &'a CudaSlice<u64>,
    d_state: &'a CudaSlice<i32>,
}

impl WalksNow<'_> {
    fn read(
        &self,
        stream: &std::sync::Arc<CudaStream>,
        n: usize,
        best_values: &[i64],
        evaluated: &[u64],
    ) -> Result<Vec<WalkState>, KernelError> {
        let err = |what: &'static str| driver(what);
        let cur = stream
            .clone_dtoh(self.cur)
            .map_err(err("reading ig-warp walks"))?;
        let best = stream
            .clone_dtoh(self.best)
            .map_err(err("reading ig-warp walks"))?;
        let cur_values = stream
            .clone_dtoh(self.cur_values)
            .map_err(err("reading ig-warp walks"))?;
        let counters = stream
            .clone_dtoh(self.counters)
            .map_err(err("reading ig-warp walks"))?;
        let d = stream
            .clone_dtoh(self.d_state)
            .map_err(err("reading ig-warp walks"))?;
        let to_jobs = |v: &[i32]| v.iter().map(|&j| j.max(0) as usize).collect::<Vec<_>>();
        Ok((0..best_values.len())
            .map(|w| WalkState {
                cur: to_jobs(&cur[w * n..(w + 1) * n]),
                cur_value: cur_values[w],
                best: to_jobs(&best[w * n..(w + 1) * n]),
                best_value: best_values[w],
                counter: counters[w],
                d: d[w].max(0) as usize,
                evaluated: evaluated[w],
            })
            .collect())
    }
}

/// The share of a time limit the host's local search of the start may take.
const START_SEARCH_SHARE: f64 = 0.1;

/// Every walk's first sequence and value, and its current value (-1 where a traced walk does
/// its own first local search on the GPU). The start is NEH improved by one local search on
/// the host that all walks share (with `trace`, each walk does its own, as the CPU reference's
/// `start` does, which tests compare); an island's exchanged solutions take the first walks.
fn starts(
    prepared: &Prepared,
    walk_params: &WalkParams,
    walks: usize,
    seed: u64,
    until: Option<Instant>,
) -> (Vec<i32>, Vec<i64>, Vec<i64>) {
    let inst = &prepared.inst;
    let neh_start = neh(inst);
    let (start, start_value) = if prepared.params.trace {
        let v = inst.makespan(&neh_start);
        (neh_start, v)
    } else {
        crate::pfsp::ig_warp::Walker::new(inst, walk_params, seed).improve_until(&neh_start, until)
    };
    let (starts, start_values) = super::walk_starts(walks, &start, start_value, &prepared.starts);
    let first_cur = if prepared.params.trace {
        vec![-1; walks]
    } else {
        start_values.clone()
    };
    (starts, start_values, first_cur)
}

pub(super) fn run(
    prepared: &Prepared,
    gpu: &Gpu,
    timer: &mut KernelClock,
    options: &RunOptions,
) -> Result<(Outcome, Vec<WalkState>, super::WalkBests, Option<String>), KernelError> {
    let inst = &prepared.inst;
    let params = &prepared.params;
    let n = inst.jobs;
    let walks = walks_of(params, &prepared.launch);
    let stream = gpu.stream().clone();
    // The time limit counts from here: the host's local search of the start is part of it.
    let run_started = Instant::now();
    let walk_params = WalkParams {
        d_min: params.destruction,
        d_max: params.destruction_max.max(params.destruction),
        temperature: params.temperature,
        ties: params.ties,
    };
    let (d_min, d_max) = walk_params.clamped(n);
    let table = acceptance_table(temperature(inst, params.temperature));
    // The host's local search of the start takes at most a tenth of the time limit: the walks
    // do the same search, on every core of the GPU.
    let start_until = options
        .budget
        .time_limit
        .map(|limit| run_started + limit.mul_f64(START_SEARCH_SHARE));
    let (starts, start_values, first_cur) =
        starts(prepared, &walk_params, walks, options.seed, start_until);
    let err = |what: &'static str| driver(what);
    let scratch_len = if tables_in_shared(params, inst) {
        1
    } else {
        (walks * ig_warp_bytes(n, inst.machines, !prepared.wide).0).div_ceil(8)
    };
    let mut bufs = WalkBuffers::upload(
        &stream,
        &starts,
        &first_cur,
        &start_values,
        d_min,
        &table,
        scratch_len,
    )?;

    let seed = options.seed;
    let per_walk = options
        .budget
        .iterations
        .unwrap_or(if options.budget.time_limit.is_some() {
            u64::MAX
        } else {
            DEFAULT_IG_ITERATIONS
        });
    let deadline = options.budget.time_limit.map(|limit| run_started + limit);
    let watch = options.budget.watch();
    let mut restarts =
        super::ig::restarts_of(params, None, start_values, stream_rng(seed ^ 0x1e_3a59, 0));
    // Under a time limit alone, each launch gives every walk the same slice of GPU time (the
    // kernel's clock budget) instead of the same iteration count, so that no SM idles behind the
    // slowest walk; with an iteration budget (and in the tests) launches count iterations.
    let timed = options.budget.iterations.is_none() && deadline.is_some();
    let mut chunk: u64 = if timed { u64::from(i32::MAX as u32) } else { 1 };
    let mut spent = 0u64;
    let (walks_arg, d_min_arg, d_max_arg) = (walks as i32, d_min as i32, d_max as i32);
    let ties = i32::from(params.ties);
    let table_len = table.len() as i32;
    let search_started = Instant::now();
    while spent < per_walk {
        let this = chunk.min(per_walk - spent) as i32;
        // The slice after which walks start no new iteration, and the hard stop (the run's
        // deadline) at which they abandon the one in progress.
        let (budget_ns, hard_ns): (u64, u64) = match deadline {
            Some(d) if timed => {
                let left = d.saturating_duration_since(Instant::now());
                let nanos = |t: Duration| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX).max(1);
                (nanos(left.min(Duration::from_millis(100))), nanos(left))
            }
            _ => (0, 0),
        };
        let before = timer.seconds;
        timer.timed(gpu, "running ig-warp", 1, || {
            bufs.launch(
                prepared,
                &stream,
                &Slice {
                    seed,
                    walks: walks_arg,
                    iterations: this,
                    d_min: d_min_arg,
                    d_max: d_max_arg,
                    ties,
                    table_len,
                    budget_ns,
                    hard_ns,
                },
            )
        })?;
        if !timed {
            spent += this as u64;
        }
        if super::offer_best(&watch, &stream, &bufs.best_values)? {
            break;
        }
        let now = Instant::now();
        if crate::run::past(deadline) || spent >= per_walk {
            break;
        }
        if restarts.restarts_at_all() && walks > 1 && !params.trace {
            super::ig::restart(
                &stream,
                inst,
                &mut restarts,
                &mut bufs.best_values,
                &mut bufs.best,
                &mut bufs.cur,
                &mut bufs.cur_values,
            )?;
        }
        if timed {
            continue;
        }
        chunk = super::next_chunk(
            timer.seconds - before,
            this,
            deadline,
            now,
            params.launch_iterations,
            (n, inst.machines),
        );
    }
    timer.search_seconds = search_started.elapsed().as_secs_f64();
    let values = stream
        .clone_dtoh(&bufs.best_values)
        .map_err(err("reading ig-warp bests"))?;
    let Some((objective, index)) = values.iter().enumerate().map(|(i, &v)| (v, i)).min() else {
        return Err(KernelError::InvalidConfig("ig-warp ran no walk".into()));
    };
    let done = stream
        .clone_dtoh(&bufs.evaluated)
        .map_err(err("reading ig-warp counters"))?;
    let iterations: u64 = stream
        .clone_dtoh(&bufs.walked)
        .map_err(err("reading ig-warp counters"))?
        .iter()
        .sum();
    let to_jobs = |v: &[i32]| v.iter().map(|&j| j.max(0) as usize).collect::<Vec<_>>();
    let states = if params.trace {
        let walks_now = WalksNow {
            cur: &bufs.cur,
            best: &bufs.best,
            cur_values: &bufs.cur_values,
            counters: &bufs.counters,
            d_state: &bufs.d_state,
        };
        walks_now.read(&stream, n, &values, &done)?
    } else {
        Vec::new()
    };
    let row = stream
        .clone_dtoh(&bufs.best.slice(index * n..(index + 1) * n))
        .map_err(err("reading the best sequence"))?;
    Ok((
        Outcome {
            solution: to_jobs(&row),
            objective,
            iterations,
            evaluations: done.iter().sum(),
        },
        states,
        super::walk_bests(prepared, &stream, &bufs.best, &values)?,
        restarts.summary(),
    ))
}
