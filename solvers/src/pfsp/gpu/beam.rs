//! The bidirectional beam search of [`crate::pfsp::beam`] on the GPU (`kernels/pfsp/beam.cu`),
//! and the iterative beam search that starts ig-block's walks with `--beam W`.
//!
//! The host drives the levels: per level one bound pass (whose two sums pick the direction),
//! one key pass, a radix select of the width-th smallest key (eight histogram passes of one
//! byte each, read back and resolved here), and a deterministic compaction (tile counts read
//! back and scanned here). Keys are unique, so the GPU keeps exactly the CPU reference's nodes
//! in the same order; tests compare both on the same instances.

use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, CudaStream, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, Launch, Module};
use kernels::{CacheStatus, KernelCache, KernelError, Variant};

use super::{completion_fits_i32, driver, WalkBests};
use crate::pfsp::beam::{self, BeamParams};
use crate::pfsp::Instance;

/// Children per tile of the compaction (the kernel's BEAM_TILE, one thread each).
const TILE: usize = 1024;
const THREADS: u32 = 256;
const NO_KEY: u64 = u64::MAX;

/// The first width of an iterative beam search; each next one doubles.
pub const FIRST_WIDTH: usize = 1024;

/// The beam kernels of one instance shape, compiled and loaded.
pub struct BeamKernels {
    _module: Module,
    bounds: Kernel,
    keys: Kernel,
    histogram: Kernel,
    count: Kernel,
    select: Kernel,
    trace: Kernel,
    pub cache: CacheStatus,
    pub compile_seconds: f64,
}

/// The compile-time variant of the beam kernels for `inst`.
pub fn variant(inst: &Instance, arch: kernels::Arch, flags: &[String]) -> Variant {
    let v = Variant::new("pfsp/beam", arch)
        .define("PFSP_N", inst.jobs)
        .define("PFSP_M", inst.machines)
        .define("PFSP_WIDE", u32::from(!completion_fits_i32(inst)));
    flags.iter().fold(v, |v, f| v.flag(f))
}

impl BeamKernels {
    pub fn load(
        gpu: &Gpu,
        cache: &KernelCache,
        inst: &Instance,
        flags: &[String],
    ) -> Result<BeamKernels, KernelError> {
        let (compiled, status) = cache.get_or_compile(&variant(inst, gpu.info.arch, flags))?;
        let module = gpu.load(&compiled)?;
        Ok(BeamKernels {
            bounds: module.function("pfsp_beam_bounds")?,
            keys: module.function("pfsp_beam_keys")?,
            histogram: module.function("pfsp_beam_histogram")?,
            count: module.function("pfsp_beam_count")?,
            select: module.function("pfsp_beam_select")?,
            trace: module.function("pfsp_beam_trace")?,
            _module: module,
            cache: status,
            compile_seconds: compiled.compile_seconds,
        })
    }
}

/// Bytes of device memory a beam of `width` nodes takes on `inst`.
pub fn device_bytes(inst: &Instance, width: usize) -> usize {
    let (n, m) = (inst.jobs, inst.machines);
    let elem = if completion_fits_i32(inst) { 4 } else { 8 };
    let words = n.div_ceil(32);
    let node = 3 * m * elem + 8 + 4 * words + 8;
    let children = width * n;
    2 * width * node + children * 8 + 2 * n * width * 4 + children.div_ceil(TILE) * 4
}

/// The widest beam `--beam auto` runs to (a power of two).
pub const AUTO_MAX_WIDTH: usize = 1 << 20;

/// `--beam auto`'s widest width on `inst`: the widest power of two from [`FIRST_WIDTH`] up to
/// [`AUTO_MAX_WIDTH`] whose beam takes at most a quarter of the device's memory and whose keys
/// hold its guide and index ([`beam::check`]); `None` (walks from NEH) where not even the
/// first does, e.g. where processing times are so large that the guide needs the key's bits.
pub fn auto_width(inst: &Instance, total_memory: u64, idle_weight: i64) -> Option<usize> {
    let mut width = AUTO_MAX_WIDTH;
    while width >= FIRST_WIDTH {
        let fits = device_bytes(inst, width) as u64 <= total_memory / 4
            && beam::check(inst, &BeamParams { width, idle_weight }).is_ok();
        if fits {
            return Some(width);
        }
        width /= 2;
    }
    None
}

/// Why `params` cannot run on this device: the CPU reference's limits and the memory.
pub fn check(inst: &Instance, params: &BeamParams, total_memory: u64) -> Result<(), String> {
    beam::check(inst, params)?;
    let bytes = device_bytes(inst, params.width) as u64;
    if bytes > total_memory / 10 * 9 {
        return Err(format!(
            "--beam {}: the beam search needs {bytes} B of device memory for {} jobs, the GPU \
             has {total_memory}",
            params.width, inst.jobs
        ));
    }
    Ok(())
}

/// What a beam search returns: the final beam's best sequences (by makespan, then index),
/// each re-scored on the host, and each level's direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuBeam {
    pub sequences: Vec<(Vec<usize>, i64)>,
    pub directions: Vec<bool>,
}

/// Device buffers for beams up to `width` nodes.
struct Buffers {
    front: [CudaSlice<u8>; 2],
    tail: [CudaSlice<u8>; 2],
    remaining: [CudaSlice<u8>; 2],
    idle: [CudaSlice<i64>; 2],
    placed: [CudaSlice<u32>; 2],
    keys: CudaSlice<u64>,
    node_keys: CudaSlice<u64>,
    history_parent: CudaSlice<u32>,
    history_job: CudaSlice<i32>,
    sums: CudaSlice<u64>,
    hist: CudaSlice<u32>,
    tiles: CudaSlice<u32>,
    width: usize,
}

impl Buffers {
    fn new(
        stream: &std::sync::Arc<CudaStream>,
        inst: &Instance,
        width: usize,
    ) -> Result<Buffers, KernelError> {
        let (n, m) = (inst.jobs, inst.machines);
        let elem = if completion_fits_i32(inst) { 4 } else { 8 };
        let words = n.div_ceil(32);
        let alloc_u8 = |len: usize| {
            stream
                .alloc_zeros::<u8>(len.max(1))
                .map_err(driver("allocating the beam's nodes"))
        };
        let row = width * m * elem;
        let two_u8 =
            || -> Result<[CudaSlice<u8>; 2], KernelError> { Ok([alloc_u8(row)?, alloc_u8(row)?]) };
        let zeros_i64 = || {
            stream
                .alloc_zeros::<i64>(width)
                .map_err(driver("allocating the beam's nodes"))
        };
        let zeros_u32 = |len: usize| {
            stream
                .alloc_zeros::<u32>(len.max(1))
                .map_err(driver("allocating the beam's nodes"))
        };
        Ok(Buffers {
            front: two_u8()?,
            tail: two_u8()?,
            remaining: two_u8()?,
            idle: [zeros_i64()?, zeros_i64()?],
            placed: [zeros_u32(width * words)?, zeros_u32(width * words)?],
            keys: stream
                .alloc_zeros::<u64>(width * n)
                .map_err(driver("allocating the beam's keys"))?,
            node_keys: stream
                .alloc_zeros::<u64>(width)
                .map_err(driver("allocating the beam's keys"))?,
            history_parent: zeros_u32(n * width)?,
            history_job: stream
                .alloc_zeros::<i32>(n * width)
                .map_err(driver("allocating the beam's history"))?,
            sums: stream
                .alloc_zeros::<u64>(2)
                .map_err(driver("allocating the beam's sums"))?,
            hist: zeros_u32(256)?,
            tiles: zeros_u32((width * n).div_ceil(TILE))?,
            width,
        })
    }
}

/// The root's rows: fronts and tails of zero, every job's work still to place.
fn root_rows(inst: &Instance) -> Vec<u8> {
    let m = inst.machines;
    let remaining: Vec<i64> = (0..m)
        .map(|k| (0..inst.jobs).map(|j| inst.time(k, j)).sum())
        .collect();
    if completion_fits_i32(inst) {
        remaining
            .iter()
            .flat_map(|&v| (v as i32).to_ne_bytes())
            .collect()
    } else {
        remaining.iter().flat_map(|&v| v.to_ne_bytes()).collect()
    }
}

/// One beam search of `params.width` nodes, returning the final beam's `keep` best sequences;
/// `None` when `deadline` passes first.
pub fn search(
    kernels: &BeamKernels,
    gpu: &Gpu,
    inst: &Instance,
    times: &CudaSlice<i32>,
    params: &BeamParams,
    keep: usize,
    deadline: Option<Instant>,
) -> Result<Option<GpuBeam>, KernelError> {
    beam::check(inst, params).map_err(KernelError::InvalidConfig)?;
    let stream = gpu.stream().clone();
    let mut buffers = Buffers::new(&stream, inst, params.width)?;
    search_in(
        kernels,
        gpu,
        inst,
        times,
        params,
        keep,
        deadline,
        &mut buffers,
    )
}

#[allow(clippy::too_many_arguments)]
fn search_in(
    kernels: &BeamKernels,
    gpu: &Gpu,
    inst: &Instance,
    times: &CudaSlice<i32>,
    params: &BeamParams,
    keep: usize,
    deadline: Option<Instant>,
    b: &mut Buffers,
) -> Result<Option<GpuBeam>, KernelError> {
    let n = inst.jobs;
    let width = params.width.min(b.width);
    let stream = gpu.stream().clone();
    // The root: node 0 of buffer 0.
    let words = n.div_ceil(32);
    let elem = if completion_fits_i32(inst) { 4 } else { 8 };
    let zeros = vec![0u8; inst.machines * elem];
    stream
        .memcpy_htod(&zeros, &mut b.front[0].slice_mut(..zeros.len()))
        .and_then(|_| stream.memcpy_htod(&zeros, &mut b.tail[0].slice_mut(..zeros.len())))
        .and_then(|_| {
            stream.memcpy_htod(
                &root_rows(inst),
                &mut b.remaining[0].slice_mut(..zeros.len()),
            )
        })
        .and_then(|_| stream.memcpy_htod(&[0i64], &mut b.idle[0].slice_mut(..1)))
        .and_then(|_| stream.memcpy_htod(&vec![0u32; words], &mut b.placed[0].slice_mut(..words)))
        .map_err(driver("uploading the beam's root"))?;
    let mut nodes = 1usize;
    let mut cur = 0usize;
    let mut directions = Vec::with_capacity(n);
    let bits = beam::index_bits(n, params.width);
    let bits_i32 = bits as i32;
    for depth in 0..n {
        if crate::run::past(deadline) {
            return Ok(None);
        }
        let children = nodes * n;
        let valid = nodes * (n - depth);
        let last = i32::from(depth + 1 == n);
        let grid = children.div_ceil(THREADS as usize) as u32;
        let launch = Launch::linear(grid, THREADS);
        let nodes_i32 = nodes as i32;
        stream
            .memcpy_htod(&[0u64, 0], &mut b.sums)
            .map_err(driver("clearing the beam's sums"))?;
        {
            let k = &kernels.bounds;
            let mut builder = stream.launch_builder(k.function());
            builder
                .arg(times)
                .arg(&b.front[cur])
                .arg(&b.tail[cur])
                .arg(&b.remaining[cur])
                .arg(&b.placed[cur])
                .arg(&nodes_i32)
                .arg(&mut b.sums);
            // SAFETY: matches pfsp_beam_bounds; the node buffers hold `nodes` rows.
            unsafe { builder.launch(launch.config()) }
                .map(|_| ())
                .map_err(k.launch_error(&launch))?;
        }
        let sums = stream
            .clone_dtoh(&b.sums)
            .map_err(driver("reading the beam's bound sums"))?;
        // The same rule as the CPU reference: backward only when its sum is higher.
        let forward = sums[1] <= sums[0];
        directions.push(forward);
        let forward_i32 = i32::from(forward);
        {
            let k = &kernels.keys;
            let weight = params.idle_weight as i32;
            let mut builder = stream.launch_builder(k.function());
            builder
                .arg(times)
                .arg(&b.front[cur])
                .arg(&b.tail[cur])
                .arg(&b.remaining[cur])
                .arg(&b.idle[cur])
                .arg(&b.placed[cur])
                .arg(&nodes_i32)
                .arg(&forward_i32)
                .arg(&last)
                .arg(&weight)
                .arg(&bits_i32)
                .arg(&mut b.keys);
            // SAFETY: matches pfsp_beam_keys; `keys` holds width * n >= nodes * n keys.
            unsafe { builder.launch(launch.config()) }
                .map(|_| ())
                .map_err(k.launch_error(&launch))?;
        }
        let kept = width.min(valid);
        let threshold = if kept < valid {
            select_threshold(kernels, &stream, b, children, kept)?
        } else {
            NO_KEY - 1
        };
        // Compaction: tile counts, scanned here, then the kept children written in order.
        let tiles = children.div_ceil(TILE);
        let tile_launch = Launch::linear(tiles as u32, TILE as u32);
        let children_usize = children;
        {
            let k = &kernels.count;
            let mut builder = stream.launch_builder(k.function());
            builder
                .arg(&b.keys)
                .arg(&children_usize)
                .arg(&threshold)
                .arg(&mut b.tiles);
            // SAFETY: matches pfsp_beam_count; `tiles` holds a count per tile.
            unsafe { builder.launch(tile_launch.config()) }
                .map(|_| ())
                .map_err(k.launch_error(&tile_launch))?;
        }
        let counts = stream
            .clone_dtoh(&b.tiles.slice(..tiles))
            .map_err(driver("reading the beam's tile counts"))?;
        let mut offsets = Vec::with_capacity(tiles);
        let mut total = 0u32;
        for c in counts {
            offsets.push(total);
            total += c;
        }
        if total as usize != kept {
            return Err(KernelError::InvalidConfig(format!(
                "pfsp_beam at level {depth}: the select kept {total} children, not {kept}"
            )));
        }
        stream
            .memcpy_htod(&offsets, &mut b.tiles.slice_mut(..tiles))
            .map_err(driver("uploading the beam's tile offsets"))?;
        let next = 1 - cur;
        {
            let k = &kernels.select;
            let (front, front_next) = pair(&mut b.front, cur);
            let (tail, tail_next) = pair(&mut b.tail, cur);
            let (remaining, remaining_next) = pair(&mut b.remaining, cur);
            let (idle, idle_next) = pair(&mut b.idle, cur);
            let (placed, placed_next) = pair(&mut b.placed, cur);
            let mut history_parent = b
                .history_parent
                .slice_mut(depth * b.width..(depth + 1) * b.width);
            let mut history_job = b
                .history_job
                .slice_mut(depth * b.width..(depth + 1) * b.width);
            let mut builder = stream.launch_builder(k.function());
            builder
                .arg(times)
                .arg(&b.keys)
                .arg(&children_usize)
                .arg(&threshold)
                .arg(&b.tiles)
                .arg(&forward_i32)
                .arg(front)
                .arg(tail)
                .arg(remaining)
                .arg(idle)
                .arg(placed)
                .arg(front_next)
                .arg(tail_next)
                .arg(remaining_next)
                .arg(idle_next)
                .arg(placed_next)
                .arg(&mut history_parent)
                .arg(&mut history_job)
                .arg(&mut b.node_keys);
            // SAFETY: matches pfsp_beam_select; the next buffers hold `kept` <= width rows,
            // the history slices `width` entries of this level.
            unsafe { builder.launch(tile_launch.config()) }
                .map(|_| ())
                .map_err(k.launch_error(&tile_launch))?;
        }
        cur = next;
        nodes = kept;
    }
    // The final beam by key: makespan first (the last level's guide), then index.
    let node_keys = stream
        .clone_dtoh(&b.node_keys.slice(..nodes))
        .map_err(driver("reading the final beam's keys"))?;
    let mut order: Vec<u32> = (0..nodes as u32).collect();
    order.sort_by_key(|&i| node_keys[i as usize]);
    order.truncate(keep.max(1));
    let mut position = vec![0i32; n];
    let (mut front_at, mut back_at) = (0i32, n as i32 - 1);
    for (level, &forward) in directions.iter().enumerate() {
        if forward {
            position[level] = front_at;
            front_at += 1;
        } else {
            position[level] = back_at;
            back_at -= 1;
        }
    }
    let position_d = stream
        .clone_htod(&position)
        .map_err(driver("uploading the beam's positions"))?;
    let nodes_d = stream
        .clone_htod(&order)
        .map_err(driver("uploading the beam's final nodes"))?;
    let mut sequences_d = stream
        .alloc_zeros::<i32>(order.len() * n)
        .map_err(driver("allocating the beam's sequences"))?;
    {
        let k = &kernels.trace;
        let launch = Launch::linear((order.len() as u32).div_ceil(64), 64);
        let count = order.len() as i32;
        let stride = b.width;
        let mut builder = stream.launch_builder(k.function());
        builder
            .arg(&b.history_parent)
            .arg(&b.history_job)
            .arg(&stride)
            .arg(&position_d)
            .arg(&nodes_d)
            .arg(&count)
            .arg(&mut sequences_d);
        // SAFETY: matches pfsp_beam_trace; `sequences` holds count rows of n.
        unsafe { builder.launch(launch.config()) }
            .map(|_| ())
            .map_err(k.launch_error(&launch))?;
    }
    let rows = stream
        .clone_dtoh(&sequences_d)
        .map_err(driver("reading the beam's sequences"))?;
    let mut sequences = Vec::with_capacity(order.len());
    for (row, &i) in rows.chunks(n).zip(&order) {
        let seq: Vec<usize> = row.iter().map(|&j| j.max(0) as usize).collect();
        let claimed = (node_keys[i as usize] >> bits) as i64;
        // Every answer is re-scored: a sequence that is not a permutation, or whose makespan
        // is not the kernel's bound, is a kernel fault, not a start.
        crate::permutation::check(&seq, n).map_err(|e| {
            KernelError::InvalidConfig(format!("pfsp_beam returned a bad sequence: {e}"))
        })?;
        let makespan = inst.makespan(&seq);
        if makespan != claimed {
            return Err(KernelError::InvalidConfig(format!(
                "pfsp_beam: a final sequence's makespan is {makespan}, its key says {claimed}"
            )));
        }
        sequences.push((seq, makespan));
    }
    Ok(Some(GpuBeam {
        sequences,
        directions,
    }))
}

fn pair<T>(v: &mut [T; 2], cur: usize) -> (&T, &mut T) {
    let (a, b) = v.split_at_mut(1);
    if cur == 0 {
        (&a[0], &mut b[0])
    } else {
        (&b[0], &mut a[0])
    }
}

/// The `rank`-th smallest key (1-based) among `count`, by one histogram pass per byte from the
/// top.
fn select_threshold(
    kernels: &BeamKernels,
    stream: &std::sync::Arc<CudaStream>,
    b: &mut Buffers,
    count: usize,
    rank: usize,
) -> Result<u64, KernelError> {
    let (mut prefix, mut mask) = (0u64, 0u64);
    let mut rank = rank as u64;
    let grid = (count.div_ceil(THREADS as usize) as u32).clamp(1, 2048);
    let launch = Launch::linear(grid, THREADS);
    for shift in (0..8).rev().map(|byte| byte * 8) {
        stream
            .memcpy_htod(&[0u32; 256], &mut b.hist)
            .map_err(driver("clearing the beam's histogram"))?;
        let k = &kernels.histogram;
        let mut builder = stream.launch_builder(k.function());
        builder
            .arg(&b.keys)
            .arg(&count)
            .arg(&prefix)
            .arg(&mask)
            .arg(&shift)
            .arg(&mut b.hist);
        // SAFETY: matches pfsp_beam_histogram; `keys` holds `count` keys, `hist` 256 bins.
        unsafe { builder.launch(launch.config()) }
            .map(|_| ())
            .map_err(k.launch_error(&launch))?;
        let hist = stream
            .clone_dtoh(&b.hist)
            .map_err(driver("reading the beam's histogram"))?;
        let mut digit = 256;
        for (d, &c) in hist.iter().enumerate() {
            if rank <= c as u64 {
                digit = d;
                break;
            }
            rank -= c as u64;
        }
        if digit == 256 {
            return Err(KernelError::InvalidConfig(format!(
                "pfsp_beam: the radix select ran out of keys at byte {}",
                shift / 8
            )));
        }
        prefix |= (digit as u64) << shift;
        mask |= 0xffu64 << shift;
    }
    Ok(prefix)
}

/// An iterative beam search: widths [`FIRST_WIDTH`] (or `params.width` if smaller), doubling
/// up to `params.width`. Under a time limit it stops before a width that would end past
/// `budget`, predicting each width's time as twice the last one's. Returns every completed
/// beam's `keep` best sequences merged (distinct, by makespan) and the widest width completed.
pub fn iterative(
    kernels: &BeamKernels,
    gpu: &Gpu,
    inst: &Instance,
    times: &CudaSlice<i32>,
    params: &BeamParams,
    keep: usize,
    budget: Option<Duration>,
) -> Result<(WalkBests, usize), KernelError> {
    beam::check(inst, params).map_err(KernelError::InvalidConfig)?;
    let started = Instant::now();
    let deadline = budget.map(|b| started + b);
    let stream = gpu.stream().clone();
    let mut buffers = Buffers::new(&stream, inst, params.width)?;
    let mut width = FIRST_WIDTH.min(params.width);
    let mut found = WalkBests::new();
    let mut widest = 0;
    loop {
        let t = Instant::now();
        let this = BeamParams { width, ..*params };
        let Some(beam) = search_in(
            kernels,
            gpu,
            inst,
            times,
            &this,
            keep,
            deadline,
            &mut buffers,
        )?
        else {
            break;
        };
        widest = width;
        found.extend(beam.sequences);
        if width >= params.width {
            break;
        }
        let took = t.elapsed();
        if deadline.is_some_and(|d| Instant::now() + 2 * took > d) {
            break;
        }
        width = (2 * width).min(params.width);
    }
    Ok((best_distinct(found, keep), widest))
}

/// The `keep` best distinct sequences of several beams, by makespan (the earlier beam's first
/// among equals).
pub fn best_distinct(mut found: WalkBests, keep: usize) -> WalkBests {
    found.sort_by_key(|(_, v)| *v);
    let mut seen = std::collections::HashSet::new();
    found.retain(|(s, _)| seen.insert(s.clone()));
    found.truncate(keep);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_merge_the_beams_best_first_without_repeats() {
        let found = vec![
            (vec![0, 1, 2], 12),
            (vec![2, 1, 0], 10),
            (vec![1, 0, 2], 11),
            // A wider beam finding a sequence again.
            (vec![2, 1, 0], 10),
            (vec![0, 2, 1], 10),
        ];
        let best = best_distinct(found, 3);
        assert_eq!(
            best,
            vec![
                (vec![2, 1, 0], 10),
                (vec![0, 2, 1], 10),
                (vec![1, 0, 2], 11)
            ]
        );
    }

    #[test]
    fn device_bytes_grow_with_the_width_and_the_time_width() {
        let narrow = crate::pfsp::generate(200, 20, 1);
        let a = device_bytes(&narrow, 1024);
        assert!(device_bytes(&narrow, 2048) > 2 * a - 4096);
        // int64 completion times take twice the rows.
        let times = narrow
            .times_machine_major()
            .iter()
            .map(|&t| t * 1_000_000)
            .collect();
        let wide = Instance::new("wide", 200, 20, times).unwrap();
        assert!(device_bytes(&wide, 1024) > a);
    }
}
