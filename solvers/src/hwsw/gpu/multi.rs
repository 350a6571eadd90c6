//! The `gpts-multi` driver: many independent searches (one per block of `hwsw_multi`), run in
//! launches of `launch_iterations` iterations each, with elite restarts between launches.
//!
//! Every search starts from all-hardware (feasible for every R) and diverges by its own random
//! 2-flip samples. Between launches the host reads each search's best hardware cost; a search
//! whose best has not improved for `restart_stall` launches continues from the best solution
//! of one of the four best searches (drawn at random) with a cleared tabu list, so that the
//! searches that found nothing follow the ones that did. The answer is the best search's best
//! solution, which the caller re-scores on the CPU.

use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, PushKernelArg};
use kernels::gpu::{Gpu, Kernel, Launch, Module};
use kernels::KernelError;
use rand::Rng;

use super::{driver, upload, GpuParams};
use crate::gpu::adapt::{self, Race};
use crate::gpu::stalls::Stalls;
use crate::hwsw::{Instance, DEFAULT_STS_ITERATIONS};
use crate::run::{stream_rng, Outcome, RunOptions};

/// Iterations per search per launch when not given.
const DEFAULT_LAUNCH_ITERATIONS: u32 = 1000;

pub(super) struct Multi {
    pub kernel: Kernel,
    pub launch: Launch,
    soft: CudaSlice<i64>,
    hard: CudaSlice<i64>,
    start: CudaSlice<u32>,
    node: CudaSlice<i32>,
    cost: CudaSlice<i64>,
    x: CudaSlice<u8>,
    w: CudaSlice<i64>,
    tabu: CudaSlice<u32>,
    best_x: CudaSlice<u8>,
    best_h: CudaSlice<i64>,
    counts: CudaSlice<u32>,
    restart: CudaSlice<u32>,
    tenures: CudaSlice<u32>,
}

impl Multi {
    pub fn new(
        module: &Module,
        gpu: &Gpu,
        inst: &Instance,
        params: &GpuParams,
    ) -> Result<Multi, KernelError> {
        let kernel = module.function("hwsw_multi")?;
        let t = params.threads_per_block;
        let searches = if params.searches == 0 {
            kernel.blocks_per_sm(t, 0)?.max(1) * gpu.info.sm_count.max(1)
        } else {
            params.searches
        };
        let launch = Launch::linear(searches, t);
        kernel.check_launch(&launch)?;
        let n = inst.n();
        let s = searches as usize;
        let (mut start, mut node, mut cost) = (vec![0u32], Vec::new(), Vec::new());
        for i in 0..n {
            for &(k, c) in inst.neighbours(i) {
                node.push(k as i32);
                cost.push(c);
            }
            start.push(node.len() as u32);
        }
        node.push(0);
        cost.push(0);
        let stream = gpu.stream();
        let alloc_u8 = |what: &str| {
            stream
                .alloc_zeros::<u8>(s * n)
                .map_err(driver(&format!("allocating {what} of {s} searches")))
        };
        Ok(Multi {
            soft: upload(gpu, "software costs", inst.software())?,
            hard: upload(gpu, "hardware costs", inst.hardware())?,
            start: upload(gpu, "the adjacency", &start)?,
            node: upload(gpu, "the adjacency", &node)?,
            cost: upload(gpu, "the adjacency", &cost)?,
            x: alloc_u8("solutions")?,
            w: stream
                .alloc_zeros::<i64>(s * n)
                .map_err(driver("allocating node deltas"))?,
            tabu: stream
                .alloc_zeros::<u32>(s * n)
                .map_err(driver("allocating tabu lists"))?,
            best_x: alloc_u8("best solutions")?,
            best_h: stream
                .alloc_zeros::<i64>(s)
                .map_err(driver("allocating best costs"))?,
            counts: stream
                .alloc_zeros::<u32>(s)
                .map_err(driver("allocating iteration counts"))?,
            restart: stream
                .alloc_zeros::<u32>(s)
                .map_err(driver("allocating restart flags"))?,
            tenures: stream
                .alloc_zeros::<u32>(s)
                .map_err(driver("allocating tabu tenures"))?,
            kernel,
            launch,
        })
    }

    /// Every search's best vector (n entries each), as the last run left them.
    pub fn bests(&self, gpu: &Gpu, n: usize) -> Result<Vec<Vec<u8>>, KernelError> {
        let rows = gpu
            .stream()
            .clone_dtoh(&self.best_x)
            .map_err(driver("reading the searches' bests"))?;
        Ok(rows.chunks(n.max(1)).map(<[u8]>::to_vec).collect())
    }

    /// Runs the searches under the budget: iterations per search (default 2000, as GPTS), a
    /// time limit, or a target; returns the outcome and the number of elite restarts.
    pub fn run(
        &mut self,
        inst: &Instance,
        params: &GpuParams,
        gpu: &Gpu,
        timer: &mut kernels::gpu::KernelClock,
        options: &RunOptions,
        starts: &[Vec<u8>],
    ) -> Result<(Outcome, u64, Option<String>), KernelError> {
        let stream = gpu.stream().clone();
        let n = inst.n();
        let s = self.launch.grid.0 as usize;
        let deadline = options.budget.start(DEFAULT_STS_ITERATIONS);
        let mut rng = stream_rng(options.seed, 1);
        // All-hardware (zeros), except where an island gives starts (its seeds, then its
        // searches' bests of the last epoch): the kernel rebuilds a restarted search's state
        // from the vector it holds.
        let mut x0 = vec![0u8; s * n];
        for (row, seed) in x0.chunks_mut(n).zip(starts) {
            for (slot, &v) in row.iter_mut().zip(seed) {
                *slot = v;
            }
        }
        stream
            .memcpy_htod(&x0, &mut self.x)
            .map_err(driver("writing start solutions"))?;
        // Each search's best starts as its start where that is feasible (all hardware always
        // is): a run with no launch (a compile that spent the time limit) then answers its best
        // start, and the first launch keeps it, since the kernel replaces a best only by a
        // lower cost.
        let mut best_h = start_costs(inst, s, starts);
        stream
            .memcpy_htod(&x0, &mut self.best_x)
            .map_err(driver("writing the start solutions as bests"))?;
        stream
            .memcpy_htod(&best_h, &mut self.best_h)
            .map_err(driver("writing the start costs as bests"))?;
        stream
            .memcpy_htod(&vec![1u32; s], &mut self.restart)
            .map_err(driver("marking fresh searches"))?;
        let started = Instant::now();
        let per_launch = if params.launch_iterations == 0 {
            DEFAULT_LAUNCH_ITERATIONS
        } else {
            params.launch_iterations
        };
        let (mut done, mut restarts) = (0u64, 0u64);
        let mut stalls = Stalls::new(vec![i64::MAX; s]);
        let mut last_launch = Duration::ZERO;
        let (n32, r) = (n as i32, inst.r());
        let mut launch_index = 0u64;
        let arms = RestartArm::arms(
            params.restart_stall,
            !params.restart_from_own,
            params.tabu_length as u32,
            params.adapt,
        );
        let mut race = Race::over(arms.len(), s);
        // Each search's tenure, written again only when the race moves searches.
        let tenures_of = |race: Option<&Race>| -> Vec<u32> {
            (0..s).map(|q| Race::pick(race, &arms, q).tenure).collect()
        };
        stream
            .memcpy_htod(&tenures_of(race.as_ref()), &mut self.tenures)
            .map_err(driver("writing tabu tenures"))?;
        while !deadline.reached(done) {
            // Under a time limit, shorten the launch so it ends near the deadline.
            let mut iterations = per_launch;
            if let Some(limit) = options.budget.time_limit {
                let left = limit.saturating_sub(started.elapsed());
                if !last_launch.is_zero() {
                    let per_iteration = last_launch.as_secs_f64() / f64::from(per_launch.max(1));
                    let fit = (left.as_secs_f64() / per_iteration.max(1e-9)) as u64;
                    iterations = fit.clamp(1, u64::from(per_launch)) as u32;
                }
            }
            if let Some(total) = options.budget.iterations {
                // Clamped in u64: a remainder of 2^32 cast first was 0, and the loop
                // launched empty kernels for ever.
                let left = total.saturating_sub(done).max(1);
                iterations = u64::from(iterations).min(left) as u32;
            }
            let seed = options.seed ^ launch_index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            launch_index += 1;
            let t0 = Instant::now();
            timer.start(gpu)?;
            let mut builder = stream.launch_builder(self.kernel.function());
            builder
                .arg(&self.soft)
                .arg(&self.hard)
                .arg(&self.start)
                .arg(&self.node)
                .arg(&self.cost)
                .arg(&n32)
                .arg(&r)
                .arg(&mut self.x)
                .arg(&mut self.w)
                .arg(&mut self.tabu)
                .arg(&mut self.best_x)
                .arg(&mut self.best_h)
                .arg(&mut self.counts)
                .arg(&self.restart)
                .arg(&iterations)
                .arg(&self.tenures)
                .arg(&seed);
            // SAFETY: matches hwsw_multi; every per-search row holds n entries.
            unsafe { builder.launch(self.launch.config()) }
                .map_err(self.kernel.launch_error(&self.launch))?;
            timer.stop(gpu, "running the searches", 1)?;
            stream
                .memcpy_dtoh(&self.best_h, &mut best_h)
                .map_err(driver("reading the searches' best"))?;
            last_launch = t0.elapsed() * per_launch / iterations.max(1);
            done += u64::from(iterations);
            let mut order: Vec<usize> = (0..s).collect();
            order.sort_by_key(|&q| (best_h[q], q));
            if let Some(&top) = order.first() {
                deadline.offer(best_h[top]);
            }
            if let Some(race) = &mut race {
                if race.after_launch(&best_h) > 0 {
                    stream
                        .memcpy_htod(&tenures_of(Some(&*race)), &mut self.tenures)
                        .map_err(driver("writing tabu tenures"))?;
                }
            }
            let mut flags = vec![0u32; s];
            stalls.count(&best_h);
            for (q, flag) in flags.iter_mut().enumerate() {
                let arm = Race::pick(race.as_ref(), &arms, q);
                if stalls.due(q, arm.stall) && s > 4 {
                    let from = if arm.from_elite {
                        order[rng.random_range(0..4)]
                    } else {
                        q
                    };
                    if from != q || !arm.from_elite {
                        let (src, dst) = (from * n, q * n);
                        let row = self.best_x.slice(src..src + n);
                        let mut target = self.x.slice_mut(dst..dst + n);
                        stream
                            .memcpy_dtod(&row, &mut target)
                            .map_err(driver("copying an elite solution"))?;
                        *flag = 1;
                        restarts += 1;
                        // A copy of another search's best starts this search's credit
                        // there; its own best (the own-best rule) is its credit already.
                        if let Some(race) = race.as_mut().filter(|_| from != q) {
                            race.inherited(q, best_h[from]);
                        }
                    }
                    stalls.restarted(q);
                }
            }
            stream
                .memcpy_htod(&flags, &mut self.restart)
                .map_err(driver("marking restarts"))?;
        }
        timer.search_seconds = started.elapsed().as_secs_f64();
        let winner = (0..s).min_by_key(|&q| (best_h[q], q)).unwrap_or(0);
        let row = stream
            .clone_dtoh(&self.best_x.slice(winner * n..winner * n + n))
            .map_err(driver("reading the best solution"))?;
        let iterations_per_launch_sum = done * s as u64;
        Ok((
            Outcome {
                solution: row.iter().map(|&v| usize::from(v)).collect(),
                objective: best_h[winner],
                iterations: iterations_per_launch_sum,
                evaluations: iterations_per_launch_sum
                    * (n as u64 + u64::from(params.threads_per_block) * u64::from(params.samples)),
            },
            restarts,
            race.map(|r| summary(&arms, &r)),
        ))
    }
}

/// The hardware cost of each of the `searches` starts: an island's start where it gives one
/// (`i64::MAX` if infeasible), all hardware for the rest (scored once: it is every row there).
fn start_costs(inst: &Instance, searches: usize, starts: &[Vec<u8>]) -> Vec<i64> {
    let cost = |x: &[u8]| {
        let x: Vec<usize> = x.iter().map(|&v| usize::from(v)).collect();
        inst.objective(&x).unwrap_or(i64::MAX)
    };
    let all_hardware = cost(&vec![0; inst.n()]);
    (0..searches)
        .map(|q| starts.get(q).map_or(all_hardware, |x| cost(x)))
        .collect()
}

/// One run-time configuration of a search: the launches it may go without improving before a
/// restart (0: never), whether it then continues from one of the four best searches' bests or
/// from its own best, and its tabu tenure. The run's parameters give one; `--adapt` races
/// several ([`crate::gpu::adapt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartArm {
    pub stall: u32,
    pub from_elite: bool,
    pub tenure: u32,
}

impl RestartArm {
    /// The run's arm (its restart rule, stall and tenure), and with `adapt` its neighbours: the
    /// other restart rule (own best or elite), half, twice and four times the tenure (the best
    /// tabu length depends on the graph's size and structure), twice and half the stall (a run
    /// that never restarts races stalls around 3).
    pub fn arms(stall: u32, from_elite: bool, tenure: u32, adapt: bool) -> Vec<RestartArm> {
        let base = RestartArm {
            stall,
            from_elite,
            tenure,
        };
        if !adapt {
            return vec![base];
        }
        let stall = if stall == 0 { 3 } else { stall };
        let base = RestartArm { stall, ..base };
        let tenures = [
            (tenure / 2).max(1),
            tenure.saturating_mul(2),
            tenure.saturating_mul(4),
        ];
        adapt::restart_arms(
            base,
            RestartArm {
                from_elite: !from_elite,
                ..base
            },
            tenures.map(|tenure| RestartArm { tenure, ..base }),
            stall,
            |stall| RestartArm { stall, ..base },
        )
    }
}

/// The arms and how many searches ran each at the end, for the log and `--json`.
fn summary(arms: &[RestartArm], race: &Race) -> String {
    let labels = arms.iter().map(|a| {
        let from = if a.from_elite { "elite" } else { "own best" };
        format!("{from} after {} launches, tenure {}", a.stall, a.tenure)
    });
    race.summary("searches", labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_no_launch_the_answer_is_the_best_feasible_start() {
        let spec = crate::hwsw::GeneratorSpec::new(12, 20, 1.0, crate::hwsw::RLevel::Low, 3);
        let inst = crate::hwsw::generate(&spec).unwrap();
        let n = inst.n();
        // All software breaks a low R; one node in software is feasible and cheaper than
        // all hardware where its hardware cost is positive.
        let mut one_soft = vec![0u8; n];
        one_soft[0] = 1;
        let starts = [vec![1u8; n], one_soft.clone()];
        let all_hw = inst.objective(&vec![0; n]).unwrap();
        let x: Vec<usize> = one_soft.iter().map(|&v| usize::from(v)).collect();
        let expected = inst.objective(&x).map_or(all_hw, |h| h.min(all_hw));
        // Four searches: the island's two starts, then all hardware.
        let costs = start_costs(&inst, 4, &starts);
        let best = *costs.iter().min().unwrap();
        assert_eq!(best, expected);
        assert_eq!(costs[0], i64::MAX, "an infeasible start is no best");
        assert_eq!(&costs[2..], &[all_hw, all_hw]);
    }

    #[test]
    fn adapt_races_the_elite_restarts_tenures_and_stalls() {
        assert_eq!(RestartArm::arms(3, true, 20, false).len(), 1);
        let arms = RestartArm::arms(4, true, 20, true);
        let expected = [
            (4, true, 20),
            (4, false, 20),
            (4, true, 10),
            (4, true, 40),
            (4, true, 80),
            (8, true, 20),
            (2, true, 20),
        ]
        .map(|(stall, from_elite, tenure)| RestartArm {
            stall,
            from_elite,
            tenure,
        });
        assert_eq!(arms, expected);
        // Stall 1 and tenure 1: half of each is itself, so those arms are not repeated.
        assert_eq!(RestartArm::arms(1, true, 1, true).len(), 5);
        assert!(RestartArm::arms(0, true, 20, true)
            .iter()
            .all(|a| a.stall > 0));
        // --restart-from own: the own best is the run's rule, the elite its neighbour.
        let own = RestartArm::arms(3, false, 20, true);
        assert!(!own[0].from_elite && own[1].from_elite);
        let race = Race::new(arms.len(), 14, crate::gpu::adapt::ROUND);
        let text = summary(&arms, &race);
        assert!(
            text.contains("2 x (own best after 4 launches, tenure 20)"),
            "{text}"
        );
        assert!(
            text.contains("2 x (elite after 4 launches, tenure 80)"),
            "{text}"
        );
    }
}
