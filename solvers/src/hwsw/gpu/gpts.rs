//! The GPTS driver: the CPU `sts` loop on the host, its neighbourhood on the GPU.
//!
//! The host keeps what is sequential and small: x, the exact costs (H, S, C, updated by the
//! CPU's 2-flip delta for every move, which re-scores the GPU's choice), the tabu list with its
//! bit-level status, the best solution and the random stream (`stream_rng(seed, 0)`, drawn in
//! the CPU's order: restart nodes, random feasible candidate). The GPU keeps w = ds + dc, dh
//! and x per node. Per iteration the host launches the variant's compaction with the slack
//! R - S - C, then `hwsw_tabu` with the aspiration bound best H - H, waits, and reads the
//! answer from mapped memory: the number of feasible candidates and the best admissible
//! one. No feasible candidate: restart as `sts` does (all hardware, two random nodes flipped,
//! state uploaded). None admissible: the CPU draws r < count and reads the r-th compacted index,
//! which is the r-th feasible candidate in index order because every compaction keeps order.

use std::collections::VecDeque;

use cudarc::driver::sys::{self, CU_MEMHOSTALLOC_DEVICEMAP};
use cudarc::driver::{CudaSlice, DevicePtr, PinnedHostSlice, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, Launch, Module};
use kernels::KernelError;
use rand::Rng;

use super::{candidates, chunks, driver, pair_index, pair_of, upload, GpuAlgorithm, GpuParams};
use crate::hwsw::delta::{flip2_costs, single_flip_comms};
use crate::hwsw::{Instance, DEFAULT_STS_ITERATIONS};
use crate::run::{stream_rng, Outcome, RunOptions, SolverRng};

/// Moves (i, j) in the order taken.
type Moves = Vec<(usize, usize)>;

pub(super) struct Kernels {
    /// The neighbourhood kernel: hwsw_evaluate (separate, compact) or hwsw_fused.
    pub main: Kernel,
    pub main_launch: Launch,
    count: Option<Kernel>,
    scan: Option<Kernel>,
    scatter: Option<Kernel>,
    compact: Option<Kernel>,
    /// Persistent grid of hwsw_compact / hwsw_fused, strided grid of the others.
    compact_launch: Launch,
    tabu: Kernel,
    tabu_launch: Launch,
    moves: Kernel,
    move_launch: Launch,
}

impl Kernels {
    pub fn load(
        module: &Module,
        gpu: &Gpu,
        inst: &Instance,
        params: &GpuParams,
    ) -> Result<Kernels, KernelError> {
        let t = params.threads_per_block;
        let chunks = chunks(inst.n(), params);
        let sms = gpu.info.sm_count.max(1);
        let resident =
            |k: &Kernel| -> Result<u32, KernelError> { Ok(k.blocks_per_sm(t, 0)?.max(1) * sms) };
        let grid = |k: &Kernel| -> Result<Launch, KernelError> {
            let blocks = u64::from(resident(k)?).min(chunks).max(1) as u32;
            let launch = Launch::linear(blocks, t);
            k.check_launch(&launch)?;
            Ok(launch)
        };
        let f = |name: &str| module.function(name);
        let (main, count, scan, scatter, compact) = match params.algorithm {
            GpuAlgorithm::Separate => (
                f("hwsw_evaluate")?,
                Some(f("hwsw_count")?),
                Some(f("hwsw_scan")?),
                Some(f("hwsw_scatter")?),
                None,
            ),
            GpuAlgorithm::Compact => (
                f("hwsw_evaluate")?,
                None,
                None,
                None,
                Some(f("hwsw_compact")?),
            ),
            GpuAlgorithm::Fused => (f("hwsw_fused")?, None, None, None, None),
            GpuAlgorithm::GptsMulti => {
                return Err(KernelError::InvalidConfig(
                    "gpts-multi has its own driver".into(),
                ))
            }
        };
        let main_launch = grid(&main)?;
        // Persistent blocks: no more than are resident at once, so that a block waiting on
        // its predecessors never waits for a block that cannot start.
        let compact_launch = match (&compact, &scatter) {
            (Some(k), _) | (None, Some(k)) => grid(k)?,
            (None, None) => main_launch,
        };
        let tabu = f("hwsw_tabu")?;
        let tabu_launch = Launch::linear(2 * sms, t);
        tabu.check_launch(&tabu_launch)?;
        let moves = f("hwsw_move")?;
        let move_launch = Launch::linear(1, t);
        moves.check_launch(&move_launch)?;
        Ok(Kernels {
            main,
            main_launch,
            count,
            scan,
            scatter,
            compact,
            compact_launch,
            tabu,
            tabu_launch,
            moves,
            move_launch,
        })
    }
}

/// Mapped (zero-copy) host memory with its device address.
pub(super) struct Mapped<T> {
    host: PinnedHostSlice<T>,
    device: u64,
}

impl<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits> Mapped<T> {
    pub(super) fn new(gpu: &Gpu, len: usize, what: &str) -> Result<Mapped<T>, KernelError> {
        // SAFETY: the memory is zeroed below before anything reads it.
        let mut host = unsafe {
            gpu.context()
                .alloc_pinned_with_flags::<T>(len.max(1), CU_MEMHOSTALLOC_DEVICEMAP)
        }
        .map_err(driver(&format!("allocating mapped host memory for {what}")))?;
        let ptr = host
            .as_mut_ptr()
            .map_err(driver(&format!("mapping {what}")))?;
        // SAFETY: ptr points at len.max(1) elements of T, for which all-zero bits are valid.
        unsafe { std::ptr::write_bytes(ptr, 0, len.max(1)) };
        let mut device: sys::CUdeviceptr = 0;
        // SAFETY: ptr was allocated with CU_MEMHOSTALLOC_DEVICEMAP in the current context.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, ptr.cast(), 0) }
            .result()
            .map_err(driver(&format!("reading the device address of {what}")))?;
        Ok(Mapped { host, device })
    }

    fn ptr(&mut self) -> Result<*mut T, KernelError> {
        self.host
            .as_mut_ptr()
            .map_err(driver("reading mapped host memory"))
    }
}

pub(super) struct Buffers {
    soft: CudaSlice<i64>,
    hard: CudaSlice<i64>,
    start: CudaSlice<u32>,
    node: CudaSlice<i32>,
    cost: CudaSlice<i64>,
    up_start: CudaSlice<u32>,
    up_node: CudaSlice<i32>,
    up_cost: CudaSlice<i64>,
    w: CudaSlice<i64>,
    dh: CudaSlice<i64>,
    x: CudaSlice<u8>,
    /// Compacted candidate indices.
    out: CudaSlice<u64>,
    count: CudaSlice<u64>,
    /// separate and compact: a feasibility byte per candidate (padded to whole chunks).
    flags: Option<CudaSlice<u8>>,
    /// separate: counts, then offsets, per chunk; compact and fused: look-back status words.
    per_chunk: CudaSlice<u64>,
    chunk_counter: CudaSlice<u32>,
    partial_v: CudaSlice<i64>,
    partial_k: CudaSlice<u64>,
    blocks_done: CudaSlice<u32>,
    device_tabu: Option<CudaSlice<u32>>,
}

impl Buffers {
    pub fn new(
        gpu: &Gpu,
        inst: &Instance,
        params: &GpuParams,
        kernels: &Kernels,
    ) -> Result<Buffers, KernelError> {
        let n = inst.n();
        let stream = gpu.stream();
        let zeros = |what: &str, len: usize| {
            stream
                .alloc_zeros::<u64>(len.max(1))
                .map_err(driver(&format!("allocating {what}")))
        };
        let (mut start, mut node, mut cost) = (vec![0u32], Vec::new(), Vec::new());
        let (mut up_start, mut up_node, mut up_cost) = (vec![0u32], Vec::new(), Vec::new());
        for i in 0..n {
            let mut upper: Vec<(usize, i64)> = Vec::new();
            for &(k, c) in inst.neighbours(i) {
                node.push(k as i32);
                cost.push(c);
                if k > i {
                    upper.push((k, c));
                }
            }
            upper.sort_unstable();
            for (k, c) in upper {
                up_node.push(k as i32);
                up_cost.push(c);
            }
            start.push(node.len() as u32);
            up_start.push(up_node.len() as u32);
        }
        // Kernels read one element past the lists' ends never, but empty slices cannot be
        // allocated: pad.
        node.push(0);
        cost.push(0);
        up_node.push(0);
        up_cost.push(0);
        let chunks = chunks(n, params) as usize;
        let padded = chunks * params.chunk() as usize;
        let flags = match params.algorithm {
            GpuAlgorithm::Fused => None,
            _ => Some(
                stream
                    .alloc_zeros::<u8>(padded)
                    .map_err(driver("allocating the feasibility flags"))?,
            ),
        };
        let device_tabu = if params.zero_copy {
            None
        } else {
            Some(
                stream
                    .alloc_zeros::<u32>(candidates(n).div_ceil(32) as usize)
                    .map_err(driver("allocating the tabu status"))?,
            )
        };
        let blocks = kernels.tabu_launch.grid.0 as usize;
        Ok(Buffers {
            soft: upload(gpu, "software costs", inst.software())?,
            hard: upload(gpu, "hardware costs", inst.hardware())?,
            start: upload(gpu, "the adjacency", &start)?,
            node: upload(gpu, "the adjacency", &node)?,
            cost: upload(gpu, "the adjacency", &cost)?,
            up_start: upload(gpu, "the upper adjacency", &up_start)?,
            up_node: upload(gpu, "the upper adjacency", &up_node)?,
            up_cost: upload(gpu, "the upper adjacency", &up_cost)?,
            w: upload(gpu, "node deltas", &vec![0i64; n])?,
            dh: upload(gpu, "node deltas", &vec![0i64; n])?,
            x: upload(gpu, "the solution", &vec![0u8; n])?,
            out: stream
                .alloc_zeros::<u64>(candidates(n) as usize)
                .map_err(driver(&format!(
                    "allocating the compacted neighbourhood ({} candidates)",
                    candidates(n)
                )))?,
            count: zeros("the feasible count", 1)?,
            flags,
            per_chunk: zeros("per-chunk scan state", chunks)?,
            chunk_counter: stream
                .alloc_zeros::<u32>(1)
                .map_err(driver("allocating the chunk counter"))?,
            partial_v: stream
                .alloc_zeros::<i64>(blocks)
                .map_err(driver("allocating the tabu partials"))?,
            partial_k: zeros("the tabu partials", blocks)?,
            blocks_done: stream
                .alloc_zeros::<u32>(1)
                .map_err(driver("allocating the block counter"))?,
            device_tabu,
        })
    }
}

/// w (ds + dc) and dh of every node of x.
fn node_state(inst: &Instance, x: &[u8]) -> (Vec<i64>, Vec<i64>) {
    let dc = single_flip_comms(inst, x);
    let w = (0..inst.n())
        .map(|k| {
            let s = inst.software()[k];
            dc[k] + if x[k] == 0 { s } else { -s }
        })
        .collect();
    let dh = (0..inst.n())
        .map(|k| {
            let h = inst.hardware()[k];
            if x[k] == 0 {
                -h
            } else {
                h
            }
        })
        .collect();
    (w, dh)
}

fn upload_state(gpu: &Gpu, b: &mut Buffers, inst: &Instance, x: &[u8]) -> Result<(), KernelError> {
    let (w, dh) = node_state(inst, x);
    let stream = gpu.stream();
    stream
        .memcpy_htod(&w, &mut b.w)
        .map_err(driver("uploading w"))?;
    stream
        .memcpy_htod(&dh, &mut b.dh)
        .map_err(driver("uploading dh"))?;
    stream
        .memcpy_htod(x, &mut b.x)
        .map_err(driver("uploading x"))?;
    Ok(())
}

/// The tabu list of section 3.6 over candidate indices, with its bit per candidate.
struct TabuList {
    list: VecDeque<u64>,
    length: usize,
}

impl TabuList {
    /// Adds k as `sts` does; returns the bits to clear and to set (u64::MAX: none).
    fn push(&mut self, k: u64) -> (u64, u64) {
        if self.length == 0 {
            return (u64::MAX, u64::MAX);
        }
        if let Some(position) = self.list.iter().position(|&e| e == k) {
            self.list.remove(position);
            self.list.push_back(k);
            return (u64::MAX, u64::MAX);
        }
        let clear = if self.list.len() == self.length {
            self.list.pop_front().unwrap_or(u64::MAX)
        } else {
            u64::MAX
        };
        self.list.push_back(k);
        (clear, k)
    }
}

/// Launches `hwsw_tabu`: the best admissible candidate of the evaluated neighbourhood (its
/// answer lands in the mapped `result`).
fn launch_tabu(
    k: &Kernels,
    b: &mut Buffers,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    n64: u64,
    admit_below: i64,
    tabu_bits: u64,
    result: u64,
) -> Result<(), KernelError> {
    let mut builder = stream.launch_builder(k.tabu.function());
    builder
        .arg(&b.dh)
        .arg(&n64)
        .arg(&b.out)
        .arg(&b.count)
        .arg(&admit_below)
        .arg(&tabu_bits)
        .arg(&mut b.partial_v)
        .arg(&mut b.partial_k)
        .arg(&mut b.blocks_done)
        .arg(&mut b.chunk_counter)
        .arg(&result);
    // SAFETY: matches hwsw_tabu; partials hold one slot per block of tabu_launch.
    unsafe { builder.launch(k.tabu_launch.config()) }
        .map(|_| ())
        .map_err(k.tabu.launch_error(&k.tabu_launch))
}

/// Launches `hwsw_move`: flips nodes i and j on the device and updates the tabu bits.
fn launch_move(
    k: &Kernels,
    b: &mut Buffers,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    (i, j): (usize, usize),
    tabu_bits: u64,
    (clear, set): (u64, u64),
) -> Result<(), KernelError> {
    let (ii, jj) = (i as i32, j as i32);
    let mut builder = stream.launch_builder(k.moves.function());
    builder
        .arg(&ii)
        .arg(&jj)
        .arg(&mut b.x)
        .arg(&mut b.w)
        .arg(&mut b.dh)
        .arg(&b.soft)
        .arg(&b.hard)
        .arg(&b.start)
        .arg(&b.node)
        .arg(&b.cost)
        .arg(&tabu_bits)
        .arg(&clear)
        .arg(&set);
    // SAFETY: matches hwsw_move; i < j < n.
    unsafe { builder.launch(k.move_launch.config()) }
        .map(|_| ())
        .map_err(k.moves.launch_error(&k.move_launch))
}

/// A restart as `sts` makes it: all hardware, two distinct random nodes flipped.
fn restart_state(rng: &mut SolverRng, n: usize) -> Vec<u8> {
    let mut x = vec![0u8; n];
    let (a, c) = crate::hwsw::tabu::restart_pair(rng, n);
    x[a] = 1;
    x[c] = 1;
    x
}

/// The GPU's move (i, j) re-scored on the host: exact costs, feasibility against R, and the
/// GPU's dH where it reported one; a mismatch is an error naming the move.
fn rescored_move(
    inst: &Instance,
    params: &GpuParams,
    x: &[u8],
    costs: crate::hwsw::Costs,
    (i, j): (usize, usize),
    gpu_dh: Option<i64>,
) -> Result<crate::hwsw::Costs, KernelError> {
    let r = inst.r();
    let next = flip2_costs(inst, x, costs, i, j);
    if next.software + next.communication > r
        || gpu_dh.is_some_and(|dh| next.hardware != costs.hardware + dh)
    {
        return Err(KernelError::InvalidConfig(format!(
            "{}: the GPU's move ({i}, {j}) does not re-score on the CPU (H {} + dH {:?} vs \
             {}, S + C {} vs R {r})",
            params.algorithm.name(),
            costs.hardware,
            gpu_dh,
            next.hardware,
            next.software + next.communication
        )));
    }
    Ok(next)
}

pub(super) fn run(
    k: &Kernels,
    b: &mut Buffers,
    inst: &Instance,
    params: &GpuParams,
    gpu: &Gpu,
    timer: &mut kernels::gpu::KernelClock,
    options: &RunOptions,
) -> Result<(Outcome, Moves, u64), KernelError> {
    let n = inst.n();
    let total = candidates(n);
    let chunk_count = chunks(n, params);
    let stream = gpu.stream().clone();
    let mut result = Mapped::<u64>::new(gpu, 4, "the tabu result")?;
    let mut host_tabu = if params.zero_copy {
        Some(Mapped::<u32>::new(
            gpu,
            total.div_ceil(32) as usize,
            "the tabu status",
        )?)
    } else {
        None
    };
    if let Some(t) = &mut b.device_tabu {
        stream
            .memset_zeros(t)
            .map_err(driver("clearing the tabu status"))?;
    }
    let tabu_bits: u64 = match (&host_tabu, &b.device_tabu) {
        (Some(m), _) => m.device,
        (None, Some(d)) => d.device_ptr(&stream).0,
        (None, None) => unreachable!("one tabu status exists"),
    };
    let result_ptr = result.ptr()?;
    let deadline = options.budget.start(DEFAULT_STS_ITERATIONS);
    let mut rng: SolverRng = stream_rng(options.seed, 0);
    let mut x = vec![0u8; n];
    let mut costs = inst.costs(&x);
    upload_state(gpu, b, inst, &x)?;
    let mut best = (costs.hardware, x.clone());
    deadline.offer(best.0);
    let mut tabu = TabuList {
        list: VecDeque::new(),
        length: params.tabu_length,
    };
    let (mut iterations, mut evaluations, mut stall, mut restarts) = (0u64, 0u64, 0u64, 0u64);
    let mut moves = Vec::new();
    let mut epoch = 0u32;
    let mut started = false;
    let search_started = std::time::Instant::now();
    let (n64, r) = (n as u64, inst.r());
    while !deadline.reached(iterations) && stall < params.stall {
        let (count, found) = loop {
            let slack = r - costs.software - costs.communication;
            let admit_below = best.0 - costs.hardware;
            epoch = (epoch + 1) & 0xff_ffff;
            if epoch == 0 {
                epoch = 1;
            }
            if !started {
                timer.start(gpu)?;
            }
            started = false;
            let launches = enqueue_neighbourhood(
                k,
                b,
                &stream,
                n64,
                total,
                chunk_count,
                slack,
                epoch,
                params.algorithm,
            )?;
            launch_tabu(k, b, &stream, n64, admit_below, tabu_bits, result.device)?;
            timer.stop(gpu, "evaluating the neighbourhood", launches + 1)?;
            evaluations += total;
            // SAFETY: the kernel wrote these four words and the stream is idle.
            let answer: [u64; 4] =
                std::array::from_fn(|q| unsafe { std::ptr::read_volatile(result_ptr.add(q)) });
            if answer[0] == 0 {
                // Restart as `sts`: all hardware, two distinct random nodes flipped.
                restarts += 1;
                x = restart_state(&mut rng, n);
                costs = inst.costs(&x);
                upload_state(gpu, b, inst, &x)?;
                continue;
            }
            let found = (answer[1] == 1).then_some((answer[2] as i64, answer[3]));
            break (answer[0], found);
        };
        let chosen = match found {
            Some((_, index)) => index,
            None => {
                // The device's count, checked before it picks a slot of `out`.
                if count as usize > b.out.len() {
                    return Err(KernelError::InvalidConfig(format!(
                        "the kernel counted {count} feasible candidates of {}",
                        b.out.len()
                    )));
                }
                let r = rng.random_range(0..count);
                let one = stream
                    .clone_dtoh(&b.out.slice(r as usize..r as usize + 1))
                    .map_err(driver("reading a random feasible candidate"))?;
                one[0]
            }
        };
        if chosen >= total {
            return Err(KernelError::InvalidConfig(format!(
                "{}: the GPU chose candidate {chosen} of {total}",
                params.algorithm.name()
            )));
        }
        let (i, j) = pair_of(n, chosen);
        let next = rescored_move(inst, params, &x, costs, (i, j), found.map(|f| f.0))?;
        let (clear, set) = tabu.push(pair_index(n, i, j));
        if let Some(bits) = &mut host_tabu {
            let p = bits.ptr()?;
            // SAFETY: the stream is idle (synchronised above), indices are < total.
            unsafe {
                if clear != u64::MAX {
                    *p.add((clear >> 5) as usize) &= !(1u32 << (clear & 31));
                }
                if set != u64::MAX {
                    *p.add((set >> 5) as usize) |= 1u32 << (set & 31);
                }
            }
        }
        timer.start(gpu)?;
        started = true;
        launch_move(k, b, &stream, (i, j), tabu_bits, (clear, set))?;
        timer.launches += 1;
        x[i] ^= 1;
        x[j] ^= 1;
        costs = next;
        if params.trace {
            moves.push((i, j));
        }
        iterations += 1;
        if costs.hardware < best.0 {
            best = (costs.hardware, x.clone());
            deadline.offer(best.0);
            stall = 0;
        } else {
            stall += 1;
        }
    }
    stream
        .synchronize()
        .map_err(driver("finishing the search"))?;
    timer.search_seconds = search_started.elapsed().as_secs_f64();
    drop(host_tabu);
    Ok((
        Outcome {
            solution: best.1.iter().map(|&v| usize::from(v)).collect(),
            objective: best.0,
            iterations,
            evaluations,
        },
        moves,
        restarts,
    ))
}

/// Launches the variant's evaluation and compaction; returns the number of launches.
#[allow(clippy::too_many_arguments)]
fn enqueue_neighbourhood(
    k: &Kernels,
    b: &mut Buffers,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    n: u64,
    total: u64,
    chunks: u64,
    slack: i64,
    epoch: u32,
    algorithm: GpuAlgorithm,
) -> Result<u64, KernelError> {
    macro_rules! graph {
        ($builder:expr) => {
            $builder
                .arg(&b.w)
                .arg(&b.dh)
                .arg(&b.x)
                .arg(&b.up_start)
                .arg(&b.up_node)
                .arg(&b.up_cost)
        };
    }
    if algorithm == GpuAlgorithm::Fused {
        let mut builder = stream.launch_builder(k.main.function());
        graph!(builder)
            .arg(&n)
            .arg(&slack)
            .arg(&mut b.out)
            .arg(&mut b.count)
            .arg(&mut b.per_chunk)
            .arg(&mut b.chunk_counter)
            .arg(&epoch);
        // SAFETY: matches hwsw_fused; out holds every candidate, per_chunk a word per chunk.
        unsafe { builder.launch(k.main_launch.config()) }
            .map_err(k.main.launch_error(&k.main_launch))?;
        return Ok(1);
    }
    let flags = b
        .flags
        .as_mut()
        .ok_or_else(|| KernelError::InvalidConfig("feasibility flags missing".into()))?;
    let mut builder = stream.launch_builder(k.main.function());
    graph!(builder).arg(&n).arg(&slack).arg(&mut *flags);
    // SAFETY: matches hwsw_evaluate; flags hold whole chunks.
    unsafe { builder.launch(k.main_launch.config()) }
        .map_err(k.main.launch_error(&k.main_launch))?;
    if let Some(compact) = &k.compact {
        let mut builder = stream.launch_builder(compact.function());
        builder
            .arg(&*flags)
            .arg(&total)
            .arg(&mut b.out)
            .arg(&mut b.count)
            .arg(&mut b.per_chunk)
            .arg(&mut b.chunk_counter)
            .arg(&epoch);
        // SAFETY: matches hwsw_compact.
        unsafe { builder.launch(k.compact_launch.config()) }
            .map_err(compact.launch_error(&k.compact_launch))?;
        return Ok(2);
    }
    let (Some(count), Some(scan), Some(scatter)) = (&k.count, &k.scan, &k.scatter) else {
        return Err(KernelError::InvalidConfig(
            "separate: kernels missing".into(),
        ));
    };
    let mut builder = stream.launch_builder(count.function());
    builder.arg(&*flags).arg(&total).arg(&mut b.per_chunk);
    // SAFETY: matches hwsw_count.
    unsafe { builder.launch(k.compact_launch.config()) }
        .map_err(count.launch_error(&k.compact_launch))?;
    let one = Launch::linear(1, k.main_launch.block.0);
    let mut builder = stream.launch_builder(scan.function());
    builder.arg(&mut b.per_chunk).arg(&chunks).arg(&mut b.count);
    // SAFETY: matches hwsw_scan (one block).
    unsafe { builder.launch(one.config()) }.map_err(scan.launch_error(&one))?;
    let mut builder = stream.launch_builder(scatter.function());
    builder
        .arg(&*flags)
        .arg(&total)
        .arg(&b.per_chunk)
        .arg(&mut b.out);
    // SAFETY: matches hwsw_scatter.
    unsafe { builder.launch(k.compact_launch.config()) }
        .map_err(scatter.launch_error(&k.compact_launch))?;
    Ok(4)
}
