//! The driver of `tabu-full` and `tabu-prefix`: the CPU tabu's search with the neighbourhood
//! evaluated on the GPU.
//!
//! The host keeps what is sequential and small: the current sequence, the tabu list of the
//! last `tenure` sequences and the best so far. Each iteration it uploads the sequence and the
//! forbidden pairs (one O(tenure n) comparison, as on the CPU), launches the evaluation (for
//! tabu-prefix after the parent-table kernel), and reads back two 64-bit keys: the first
//! least-makespan admissible move and the first least-makespan move overall. The keys order
//! moves exactly as the CPU's (i, j) scan does, so both take the same moves from NEH.

use std::collections::VecDeque;

use cudarc::driver::{CudaSlice, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, Launch, Module};
use kernels::KernelError;

use super::{driver, pair_index, pair_of, GpuAlgorithm, GpuParams, Prepared};
use crate::pfsp::tabu::TabuMove;
use crate::pfsp::{neh, Instance, DEFAULT_TABU_ITERATIONS};
use crate::run::{Outcome, RunOptions};
use kernels::gpu::KernelClock;

const KEY_PAIR_BITS: u32 = 22;

/// Threads per block: the given count, or (0) 128 unless that leaves SMs without two blocks,
/// then 64 or 32 (small neighbourhoods: 4950 children at n = 100 fill only 39 SMs with 128).
pub fn threads_for(params: &GpuParams, pairs: usize, sm_count: u32) -> u32 {
    if params.threads_per_block != 0 {
        return params.threads_per_block;
    }
    [128u32, 64]
        .into_iter()
        .find(|&t| pairs.div_ceil(t as usize) >= 2 * sm_count as usize)
        .unwrap_or(32)
}

pub(super) fn kernels(
    module: &Module,
    gpu: &Gpu,
    inst: &Instance,
    params: &GpuParams,
) -> Result<(Kernel, Option<Kernel>, Launch), KernelError> {
    let pairs = inst.jobs * (inst.jobs - 1) / 2;
    let threads = threads_for(params, pairs, gpu.info.sm_count);
    let launch = Launch::linear(pairs.div_ceil(threads as usize) as u32, threads);
    let (kernel, table) = match params.algorithm {
        GpuAlgorithm::TabuFull => (module.function("pfsp_tabu_full")?, None),
        _ => {
            let table = module.function(table_entry(inst))?;
            table.check_launch(&table_launch(inst))?;
            (module.function("pfsp_tabu_prefix")?, Some(table))
        }
    };
    kernel.check_launch(&launch)?;
    Ok((kernel, table, launch))
}

/// The parent-table kernel: one warp and shuffles where the machines fit in one warp, else a
/// block with a barrier per anti-diagonal (measured: kernels/pfsp/tabu-prefix.cu).
pub fn table_entry(inst: &Instance) -> &'static str {
    if inst.machines <= 32 {
        "pfsp_parent_table_warp"
    } else {
        "pfsp_parent_table"
    }
}

/// One warp, or one block of one thread per machine (rounded up to a warp).
fn table_launch(inst: &Instance) -> Launch {
    Launch::linear(1, inst.machines.next_multiple_of(32) as u32)
}

enum Table {
    Narrow(CudaSlice<i32>),
    Wide(CudaSlice<i64>),
}

pub(super) fn run(
    prepared: &Prepared,
    gpu: &Gpu,
    timer: &mut KernelClock,
    options: &RunOptions,
) -> Result<(Outcome, Vec<TabuMove>), KernelError> {
    let inst = &prepared.inst;
    let params = &prepared.params;
    let n = inst.jobs;
    let deadline = options.budget.start(DEFAULT_TABU_ITERATIONS);
    let stream = gpu.stream().clone();
    let mut control = stream
        .alloc_zeros::<i32>(n + 1 + params.tenure + 1)
        .map_err(driver("allocating the tabu control buffer"))?;
    let mut keys = stream
        .clone_htod(&[u64::MAX; 4])
        .map_err(driver("allocating move keys"))?;
    let mut table = match (&prepared.table_kernel, prepared.wide) {
        (None, _) => None,
        (Some(_), false) => Some(Table::Narrow(
            stream
                .alloc_zeros::<i32>(n * inst.machines)
                .map_err(driver("allocating the parent table"))?,
        )),
        (Some(_), true) => Some(Table::Wide(
            stream
                .alloc_zeros::<i64>(n * inst.machines)
                .map_err(driver("allocating the parent table"))?,
        )),
    };

    let mut current = neh(inst);
    let mut current_value = inst.makespan(&current);
    let mut best = current.clone();
    let mut best_value = current_value;
    deadline.offer(best_value);
    let mut tabu_list = TabuList::new(params.tenure, &current);
    let mut moves = Vec::new();
    let (mut iterations, mut evaluations) = (0u64, 0u64);
    let neighbours = (n * (n - 1) / 2) as u64;
    let mut slot = 0i32;
    let mut host_control: Vec<i32> = Vec::with_capacity(n + 2 + params.tenure);
    let launch = prepared.launch;
    let table_launch = table_launch(inst);
    let search_started = std::time::Instant::now();

    while !deadline.reached(iterations) {
        host_control.clear();
        host_control.extend(current.iter().map(|&j| j as i32));
        let forbidden: Vec<i32> = tabu_list
            .forbidden(&current)
            .into_iter()
            .map(|(i, j)| pair_index(n, i, j) as i32)
            .collect();
        host_control.push(forbidden.len() as i32);
        host_control.extend(&forbidden);
        let mut head = control.slice_mut(0..host_control.len());
        stream
            .memcpy_htod(&host_control, &mut head)
            .map_err(driver("uploading the sequence and tabu pairs"))?;
        let launches = 1 + u32::from(table.is_some());
        timer.timed(
            gpu,
            "evaluating the neighbourhood",
            u64::from(launches),
            || {
                if let (Some(table_kernel), Some(t)) = (&prepared.table_kernel, &mut table) {
                    let mut builder = stream.launch_builder(table_kernel.function());
                    builder.arg(&prepared.times).arg(&control);
                    match t {
                        Table::Narrow(s) => builder.arg(s),
                        Table::Wide(s) => builder.arg(s),
                    };
                    // SAFETY: matches pfsp_parent_table; the table holds n m cells.
                    unsafe { builder.launch(table_launch.config()) }
                        .map(|_| ())
                        .map_err(table_kernel.launch_error(&table_launch))?;
                }
                let mut builder = stream.launch_builder(prepared.kernel.function());
                builder.arg(&prepared.times).arg(&control);
                if let Some(t) = &table {
                    match t {
                        Table::Narrow(s) => builder.arg(s),
                        Table::Wide(s) => builder.arg(s),
                    };
                }
                builder.arg(&best_value).arg(&slot).arg(&mut keys);
                // SAFETY: matches pfsp_tabu_full / pfsp_tabu_prefix; control holds the sequence,
                // the forbidden count and pairs; keys holds two slots of two keys.
                unsafe { builder.launch(launch.config()) }
                    .map(|_| ())
                    .map_err(prepared.kernel.launch_error(&launch))
            },
        )?;
        let base = 2 * slot as usize;
        let found = stream
            .clone_dtoh(&keys.slice(base..base + 2))
            .map_err(driver("reading the chosen move"))?;
        // Every move tabu and none aspiring: the best tabu move, as on the CPU.
        let key = if found[0] != u64::MAX {
            found[0]
        } else {
            found[1]
        };
        if key == u64::MAX {
            return Err(KernelError::InvalidConfig(format!(
                "{}: the neighbourhood kernel returned no move",
                params.algorithm.name()
            )));
        }
        let value = (key >> KEY_PAIR_BITS) as i64;
        let pair = (key & ((1 << KEY_PAIR_BITS) - 1)) as usize;
        // The device's word, checked before it indexes the permutation.
        if pair >= n * (n - 1) / 2 {
            return Err(KernelError::InvalidConfig(format!(
                "{}: the neighbourhood kernel returned move {pair} of {}",
                params.algorithm.name(),
                n * (n - 1) / 2
            )));
        }
        let (i, j) = pair_of(n, pair);
        current.swap(i, j);
        current_value = value;
        if params.trace {
            moves.push(TabuMove {
                i,
                j,
                makespan: value,
            });
        }
        iterations += 1;
        evaluations += neighbours;
        if current_value < best_value {
            best_value = current_value;
            best.clone_from(&current);
            deadline.offer(best_value);
        }
        tabu_list.after_move(&current, i, j);
        slot ^= 1;
    }
    timer.search_seconds = search_started.elapsed().as_secs_f64();
    Ok((
        Outcome {
            solution: best,
            objective: best_value,
            iterations,
            evaluations,
        },
        moves,
    ))
}

/// The CPU tabu's list of the last `tenure` selected sequences, with each one's Hamming
/// distance to the current sequence kept up to date in O(1) per move, so that only sequences at
/// distance 2 (one swap away) are compared in full: the forbidden moves are those of
/// [`crate::pfsp::tabu::forbidden_moves`] at O(tenure) instead of O(tenure n) per iteration,
/// which at n = 100 is most of the host's share of a GPU iteration.
#[derive(Debug, Clone)]
pub struct TabuList {
    tenure: usize,
    sequences: VecDeque<Vec<usize>>,
    distances: VecDeque<usize>,
}

impl TabuList {
    /// The list after the start was selected (empty when `tenure` is 0).
    pub fn new(tenure: usize, start: &[usize]) -> TabuList {
        let mut list = TabuList {
            tenure,
            sequences: VecDeque::with_capacity(tenure + 1),
            distances: VecDeque::with_capacity(tenure + 1),
        };
        list.push(start);
        list
    }

    fn push(&mut self, sequence: &[usize]) {
        if self.tenure == 0 {
            return;
        }
        if self.sequences.len() == self.tenure {
            self.sequences.pop_front();
            self.distances.pop_front();
        }
        self.sequences.push_back(sequence.to_vec());
        self.distances.push_back(0);
    }

    /// The swaps (i < j) of `current` that lead to a listed sequence, sorted.
    pub fn forbidden(&self, current: &[usize]) -> Vec<(usize, usize)> {
        let mut moves = Vec::new();
        for (listed, _) in self
            .sequences
            .iter()
            .zip(&self.distances)
            .filter(|(_, &d)| d == 2)
        {
            let mut differ = (0..current.len()).filter(|&p| listed[p] != current[p]);
            if let (Some(i), Some(j)) = (differ.next(), differ.next()) {
                if listed[i] == current[j] && listed[j] == current[i] {
                    moves.push((i, j));
                }
            }
        }
        moves.sort_unstable();
        moves
    }

    /// Records that positions i and j were swapped, giving `current`, which is then selected.
    pub fn after_move(&mut self, current: &[usize], i: usize, j: usize) {
        let (was_i, was_j) = (current[j], current[i]);
        for (listed, distance) in self.sequences.iter().zip(self.distances.iter_mut()) {
            let before = usize::from(listed[i] != was_i) + usize::from(listed[j] != was_j);
            let after = usize::from(listed[i] != current[i]) + usize::from(listed[j] != current[j]);
            *distance = *distance + after - before;
        }
        self.push(current);
    }
}
