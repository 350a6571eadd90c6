//! `ig-grid`: the walks of [`crate::pfsp::ig_grid`] with their insertion neighbourhood
//! evaluated on the GPU, one block per (job position, walk) (`kernels/pfsp/ig-grid.cu`).
//!
//! Each local-search step uploads the active walks' sequences (n ints each), launches n x walks
//! blocks and reads back one key per block (the best move of each job); the host takes each
//! walk's least key, or in its tabu steps the least allowed one. The walks'
//! destruction, reconstruction and acceptance stay on the host, where they cost O(d n m) per
//! iteration against the step's O(n^2 m).

use cudarc::driver::{CudaSlice, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, KernelClock, Launch, Module};
use kernels::KernelError;

use super::{driver, GpuParams, IgwTables, Prepared};
use crate::pfsp::ig_grid::{self, GridParams, InsertionMove, Neighbourhood};
use crate::pfsp::Instance;
use crate::run::{Outcome, RunOptions};

/// Bits of `from` and of `to` in a move key (n <= 2048).
const FIELD_BITS: u32 = 11;

/// The most walks one step evaluates (grid.y), and so the most walks of a run.
pub const GRID_MAX_WALKS: u32 = 64;

/// Where the heads and tails a step's evaluation reads live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridTables {
    /// One pair per walk, of its whole sequence, built once per step by
    /// `pfsp_ig_grid_tables`; each block evaluates its moves while it walks the part of its
    /// shorter sequence that differs (`IG_GRID_FUSED`). `--layout auto` where two blocks'
    /// tables do not fit in an SM's shared memory.
    PerWalk,
    /// Each block builds the tables of its shorter sequence in shared memory (`--layout
    /// shared`; `auto` where two blocks' fit on an SM).
    Shared,
    /// Each block builds them in global memory, n x walks pairs (`--layout global`).
    Global,
}

/// The heads and tails of one sequence (ig-block's tables for one walk).
fn block_table_bytes(inst: &Instance) -> usize {
    super::ig_table_bytes(inst.jobs, inst.machines, super::completion_fits_i32(inst))
}

impl GridTables {
    /// The layout `--layout` asks for. `auto`: the tables of every block in shared memory
    /// where two blocks fit on an SM, else the fused evaluation. Measured on the H100
    /// (docs/pfsp-gpu.md): at 800 x 60 a fused step takes 0.86 ms against 2.04 ms with tables
    /// per block in global memory; at 200 x 20 (5 walks) 103 us against 52 us with tables per
    /// block in shared memory, where the fused step waits on its walks' table kernel (one
    /// block each, n + m steps of latency).
    pub fn of(asked: IgwTables, inst: &Instance, optin_shared: usize) -> GridTables {
        match asked {
            IgwTables::Auto
                if GridTables::Shared.dynamic_shared_bytes(inst) <= optin_shared / 2 =>
            {
                GridTables::Shared
            }
            IgwTables::Auto => GridTables::PerWalk,
            IgwTables::Shared => GridTables::Shared,
            IgwTables::Global => GridTables::Global,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GridTables::PerWalk => "move per block, tables per walk (fused evaluation)",
            GridTables::Shared => "move per block, tables in shared memory",
            GridTables::Global => "move per block, tables in global memory",
        }
    }

    fn dynamic_shared_bytes(self, inst: &Instance) -> usize {
        4 * inst.jobs
            + match self {
                GridTables::Shared => block_table_bytes(inst),
                GridTables::PerWalk | GridTables::Global => 0,
            }
    }
}

/// Bytes of global memory the tables of `walks` walks take (0 in shared memory).
pub fn grid_table_bytes(inst: &Instance, walks: usize, tables: GridTables) -> usize {
    match tables {
        GridTables::PerWalk => walks * block_table_bytes(inst),
        GridTables::Shared => 0,
        GridTables::Global => walks * inst.jobs * block_table_bytes(inst),
    }
}

/// Whether `tables` fits `inst` on a device of `optin_shared` bytes of shared memory per
/// block; the error names `--layout`.
pub fn check_tables(
    inst: &Instance,
    tables: GridTables,
    optin_shared: usize,
) -> Result<(), String> {
    let bytes = tables.dynamic_shared_bytes(inst);
    if tables == GridTables::Shared && bytes > optin_shared {
        return Err(format!(
            "--layout shared: ig-grid's tables for {} jobs x {} machines need {bytes} B of shared \
             memory per block, the GPU has {optin_shared}; use --layout auto or global",
            inst.jobs, inst.machines
        ));
    }
    Ok(())
}

/// Walks where `--solutions` does not say: about 1024 blocks per step. Measured on an H200 at
/// 800 x 60 (60 s, seed 1): 1, 2 and 4 walks gave 46397, 46494 and 46598, the walks' total
/// iterations 6591, 5914 and 5348: 800 blocks already fill the chip, so more walks only split
/// its depth (docs/pfsp-gpu.md, "ig-grid").
pub fn default_walks(n: usize) -> u32 {
    (1024 / n.max(1)).clamp(1, 16) as u32
}

pub(super) fn walks_of(params: &GpuParams, n: usize) -> u32 {
    match params.blocks {
        0 => default_walks(n),
        w => w,
    }
}

pub(super) fn kernels(
    module: &Module,
    inst: &Instance,
    params: &GpuParams,
    tables: GridTables,
) -> Result<(Kernel, Option<Kernel>, Launch), KernelError> {
    let kernel = module.function("pfsp_ig_grid_moves")?;
    let shared = tables.dynamic_shared_bytes(inst);
    kernel.allow_shared_bytes(shared)?;
    let launch = Launch {
        grid: (inst.jobs as u32, walks_of(params, inst.jobs), 1),
        block: (params.threads_per_block, 1, 1),
        shared_bytes: shared as u32,
    };
    kernel.check_launch(&launch)?;
    let table_kernel = match tables {
        GridTables::PerWalk => Some(module.function("pfsp_ig_grid_tables")?),
        GridTables::Shared | GridTables::Global => None,
    };
    Ok((kernel, table_kernel, launch))
}

/// The GPU neighbourhood of one prepared run.
struct GpuNeighbourhood<'a> {
    prepared: &'a Prepared,
    gpu: &'a Gpu,
    timer: &'a mut KernelClock,
    sequences: CudaSlice<i32>,
    tables: CudaSlice<u8>,
    keys: CudaSlice<u64>,
    rows: Vec<i32>,
}

impl Neighbourhood for GpuNeighbourhood<'_> {
    type Error = KernelError;

    fn moves(&mut self, sequences: &[&[usize]]) -> Result<Vec<InsertionMove>, KernelError> {
        let n = self.prepared.inst.jobs;
        let stream = self.gpu.stream().clone();
        self.rows.clear();
        for s in sequences {
            self.rows.extend(s.iter().map(|&j| j as i32));
        }
        let mut upload = self.sequences.slice_mut(..self.rows.len());
        stream
            .memcpy_htod(&self.rows, &mut upload)
            .map_err(driver("uploading ig-grid sequences"))?;
        let launch = Launch {
            grid: (n as u32, sequences.len() as u32, 1),
            ..self.prepared.launch
        };
        let prepared = self.prepared;
        let (sequences_buf, tables, keys) = (&self.sequences, &mut self.tables, &mut self.keys);
        let table_kernel = prepared.table_kernel.as_ref();
        let launches = 1 + u64::from(table_kernel.is_some());
        self.timer
            .timed(self.gpu, "running ig-grid", launches, || {
                if let Some(table_kernel) = table_kernel {
                    let build = Launch {
                        grid: (sequences.len() as u32, 1, 1),
                        block: (64, 1, 1),
                        shared_bytes: 0,
                    };
                    let mut builder = stream.launch_builder(table_kernel.function());
                    builder
                        .arg(&prepared.times)
                        .arg(sequences_buf)
                        .arg(&mut *tables);
                    // SAFETY: matches pfsp_ig_grid_tables: `sequences` holds grid.x rows of n
                    // jobs, `tables` a pair of (n + 1)-row tables per row.
                    unsafe { builder.launch(build.config()) }
                        .map(|_| ())
                        .map_err(table_kernel.launch_error(&build))?;
                }
                let mut builder = stream.launch_builder(prepared.kernel.function());
                builder
                    .arg(&prepared.times)
                    .arg(sequences_buf)
                    .arg(&mut *tables)
                    .arg(keys);
                // SAFETY: matches pfsp_ig_grid_moves: `sequences` holds grid.y rows of n jobs,
                // `keys` n per row, `tables` a pair of tables per walk (the fused evaluation) or
                // per block (tables in global memory).
                unsafe { builder.launch(launch.config()) }
                    .map(|_| ())
                    .map_err(prepared.kernel.launch_error(&launch))
            })?;
        let keys = stream
            .clone_dtoh(&self.keys.slice(..sequences.len() * n))
            .map_err(driver("reading ig-grid moves"))?;
        Ok(keys.into_iter().map(decode).collect())
    }
}

/// A kernel's move key: makespan << 22 | from << 11 | to.
fn decode(key: u64) -> InsertionMove {
    let mask = (1u64 << FIELD_BITS) - 1;
    InsertionMove {
        makespan: (key >> (2 * FIELD_BITS)) as i64,
        from: ((key >> FIELD_BITS) & mask) as usize,
        to: (key & mask) as usize,
    }
}

pub(super) fn run(
    prepared: &Prepared,
    gpu: &Gpu,
    timer: &mut KernelClock,
    options: &RunOptions,
    seeds: &[(Vec<usize>, i64)],
) -> Result<(Outcome, super::WalkBests), KernelError> {
    let inst = &prepared.inst;
    let params = &prepared.params;
    let n = inst.jobs;
    let walks = prepared.launch.grid.1 as usize;
    // Set by `prepare` for ig-grid.
    let tables = prepared.grid_tables.unwrap_or(GridTables::PerWalk);
    let stream = gpu.stream().clone();
    let mut neighbourhood = GpuNeighbourhood {
        prepared,
        gpu,
        timer,
        sequences: stream
            .alloc_zeros::<i32>(walks * n)
            .map_err(driver("allocating ig-grid sequences"))?,
        tables: stream
            .alloc_zeros::<u8>(grid_table_bytes(inst, walks, tables).max(1))
            .map_err(driver("allocating ig-grid's tables in global memory"))?,
        keys: stream
            .alloc_zeros::<u64>(walks * n)
            .map_err(driver("allocating ig-grid moves"))?,
        rows: Vec::with_capacity(walks * n),
    };
    let grid = GridParams {
        walks,
        destruction: params.destruction,
        temperature: params.temperature,
        tabu_steps: params.tabu_steps,
        tenure: params.tenure,
    };
    let (outcome, _, bests) = ig_grid::run_from(inst, &grid, options, seeds, &mut neighbourhood)?;
    // Only an island keeps its walks' bests for its next epoch.
    let bests = if prepared.island.is_some() {
        bests
    } else {
        Vec::new()
    };
    Ok((outcome, bests))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_decode_to_the_move_and_order_as_the_cpu() {
        let key = |makespan: u64, from: u64, to: u64| makespan << 22 | from << 11 | to;
        assert_eq!(
            decode(key(46470, 799, 3)),
            InsertionMove {
                makespan: 46470,
                from: 799,
                to: 3
            }
        );
        // The least key is the least (makespan, from, to).
        let mut moves = [(5, 2, 0), (5, 1, 7), (6, 0, 0), (5, 1, 3)];
        let least = moves.iter().map(|&(a, b, c)| key(a, b, c)).min().unwrap();
        moves.sort();
        let (a, b, c) = moves[0];
        assert_eq!(least, key(a, b, c));
    }

    #[test]
    fn walks_fill_the_chip_once_and_tables_go_per_walk_where_two_blocks_do_not_fit() {
        assert_eq!(default_walks(200), 5);
        assert_eq!(default_walks(800), 1);
        assert_eq!(default_walks(20), 16);
        let small = crate::pfsp::generate(200, 20, 1);
        let large = crate::pfsp::generate(800, 60, 1);
        let of = |asked, inst| GridTables::of(asked, inst, 232_448);
        assert_eq!(of(IgwTables::Auto, &small), GridTables::Shared);
        assert_eq!(of(IgwTables::Auto, &large), GridTables::PerWalk);
        assert_eq!(of(IgwTables::Global, &small), GridTables::Global);
        assert_eq!(of(IgwTables::Shared, &large), GridTables::Shared);
        // 800 x 60, int32, 2 walks: one pair of 801 x 61 tables per walk by default, one per
        // block (1600 of them) in global memory.
        assert_eq!(
            grid_table_bytes(&large, 2, GridTables::PerWalk),
            2 * 2 * 801 * 61 * 4
        );
        assert_eq!(
            grid_table_bytes(&large, 2, GridTables::Global),
            2 * 800 * 2 * 801 * 61 * 4
        );
        check_tables(&small, GridTables::Shared, 232_448).unwrap();
        let err = check_tables(&large, GridTables::Shared, 232_448).unwrap_err();
        assert!(
            err.contains("--layout shared") && err.contains("232448"),
            "{err}"
        );
        check_tables(&large, GridTables::PerWalk, 232_448).unwrap();
    }
}
