//! What every QAP driver shares during one run: the prepared kernel and matrices, the deadline
//! and target, the event clock ([`RunContext`]), and the rounds of new starts of the
//! thread-per-solution variants ([`Rounds`]).

use std::time::Instant;

use cudarc::driver::CudaSlice;
use kernels::gpu::{Gpu, Kernel, KernelClock, Launch};
use kernels::KernelError;

use crate::run::Outcome;

use super::driver;

pub(super) struct RunContext<'a> {
    pub(super) gpu: &'a Gpu,
    pub(super) kernel: &'a Kernel,
    pub(super) launch: Launch,
    pub(super) a: &'a CudaSlice<i32>,
    pub(super) b: &'a CudaSlice<i32>,
    pub(super) n: usize,
    pub(super) seed: u64,
    pub(super) deadline: Option<Instant>,
    /// Where new bests go: time-to-target runs stop once the best cost reaches the target.
    pub(super) watch: crate::run::Watch,
    pub(super) clock: KernelClock,
    /// The instance on the host, where a restart needs it (`relink`).
    pub(super) inst: Option<&'a crate::qap::Instance>,
    /// rots-block's restarts recombine the blocks' bests ([`super::GpuParams::crossover_for`]).
    pub(super) crossover: bool,
    /// What `--adapt` ended with (written by rots-block).
    pub(super) adaptation: Option<String>,
    /// rots-block as an island: its seeds and the blocks the last epoch left.
    pub(super) island: Option<&'a mut super::island_blocks::IslandBlocks>,
}

impl RunContext<'_> {
    pub(super) fn timed_out(&self) -> bool {
        crate::run::past(self.deadline)
    }

    /// Records the best cost so far; true once the run's target is reached.
    pub(super) fn offer(&self, cost: i64) -> bool {
        self.watch.offer(cost)
    }

    /// Launches with events around it and adds the kernel time (synchronises).
    pub(super) fn timed<F>(&mut self, what: &str, enqueue: F) -> Result<(), KernelError>
    where
        F: FnOnce(&Self) -> Result<(), KernelError>,
    {
        self.clock.start(self.gpu)?;
        enqueue(self)?;
        let what = format!("{what} of {} ({})", self.kernel.name, self.launch);
        self.clock.stop(self.gpu, &what, 1)
    }

    /// The best (cost, index) of a cost array; ties go to the lower index.
    pub(super) fn best_of(costs: &[i64]) -> (i64, usize) {
        costs
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i))
            .min()
            .expect("at least one solution")
    }

    pub(super) fn read_perm(
        &self,
        perms: &CudaSlice<i32>,
        index: usize,
    ) -> Result<Vec<usize>, KernelError> {
        let row = self
            .gpu
            .stream()
            .clone_dtoh(&perms.slice(index * self.n..(index + 1) * self.n))
            .map_err(driver("reading a permutation"))?;
        Ok(row.into_iter().map(|v| v.max(0) as usize).collect())
    }
}

pub(super) fn pairs(n: usize) -> u64 {
    (n * (n - 1) / 2) as u64
}

/// Rounds of p new starts (the 2-opt variants and tabu): the best solution over all rounds and
/// the scans done. Without a time limit one round is the run; with one, rounds follow until
/// it is spent.
pub(super) struct Rounds {
    pub(super) p: usize,
    pub(super) round: u64,
    pub(super) scans: u64,
    /// (cost, start index, permutation)
    pub(super) best: Option<(i64, u64, Vec<usize>)>,
}

impl Rounds {
    pub(super) fn new(p: usize) -> Rounds {
        Rounds {
            p,
            round: 0,
            scans: 0,
            best: None,
        }
    }

    /// The first start index of the next round.
    pub(super) fn first(&self) -> i32 {
        (self.round * self.p as u64) as i32
    }

    /// Reads a finished round's costs and scan counts, keeps its best solution if it is better;
    /// true when the run ends (target reached, no time limit, the time spent, or start indices
    /// about to leave i32).
    pub(super) fn finish(
        &mut self,
        ctx: &RunContext,
        costs: &CudaSlice<i64>,
        scans: &CudaSlice<i32>,
        perms: &CudaSlice<i32>,
    ) -> Result<bool, KernelError> {
        let stream = ctx.gpu.stream();
        let host_costs = stream.clone_dtoh(costs).map_err(driver("reading costs"))?;
        let host_scans = stream
            .clone_dtoh(scans)
            .map_err(driver("reading scan counts"))?;
        self.scans += host_scans.iter().map(|&s| s.max(0) as u64).sum::<u64>();
        let (cost, index) = RunContext::best_of(&host_costs);
        if self.best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
            let start = self.round * self.p as u64 + index as u64;
            self.best = Some((cost, start, ctx.read_perm(perms, index)?));
        }
        self.round += 1;
        let reached = self.best.as_ref().is_some_and(|(c, _, _)| ctx.offer(*c));
        Ok(reached
            || ctx.deadline.is_none()
            || ctx.timed_out()
            || (self.round + 1) * self.p as u64 > i32::MAX as u64)
    }

    pub(super) fn outcome(self, n: usize) -> (Outcome, u64) {
        let (objective, index, solution) = self.best.expect("at least one round");
        (
            Outcome {
                solution,
                objective,
                iterations: self.scans,
                evaluations: self.scans * pairs(n),
            },
            index,
        )
    }
}
