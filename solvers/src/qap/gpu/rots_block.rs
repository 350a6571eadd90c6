//! The `rots-block` driver: one block per solution, continued trajectories over launches,
//! iteration counters rebased before they overflow, and restarts of stalled blocks from their
//! own best ([`Restarts`]).

use std::time::Instant;

use cudarc::driver::{CudaSlice, PushKernelArg};
use kernels::KernelError;

use crate::run::{Outcome, RunOptions};

use super::context::{pairs, RunContext};
use super::island_blocks::IslandBlocks;
use super::{driver, GpuParams, DEFAULT_LAUNCH_ITERATIONS, DEFAULT_RESTART_STALL};
use crate::gpu::adapt::{self, Race};
use crate::gpu::stalls::Stalls;

pub(super) fn rots_block(
    ctx: &mut RunContext,
    params: &GpuParams,
    options: &RunOptions,
) -> Result<(Outcome, u64), KernelError> {
    // The launch's grid: `solutions`, or where that is 0 what prepare sized to the GPU.
    let p = ctx.launch.grid.0 as usize;
    let n = ctx.n;
    let stream = ctx.gpu.stream().clone();
    let alloc_i32 = |len: usize| {
        stream
            .alloc_zeros::<i32>(len)
            .map_err(driver("allocating rots-block state"))
    };
    let alloc_i64 = |len: usize| {
        stream
            .alloc_zeros::<i64>(len)
            .map_err(driver("allocating rots-block state"))
    };
    let mut perms = alloc_i32(p * n)?;
    let mut best_perms = alloc_i32(p * n)?;
    let mut tabu = alloc_i32(p * n * n)?;
    let mut done = alloc_i32(p)?;
    let mut costs = alloc_i64(p)?;
    let mut best_costs = alloc_i64(p)?;
    let mut deltas = alloc_i64(p * n * (n - 1) / 2)?;
    let total = options
        .budget
        .iterations
        .or(params.iterations.map(u64::from))
        .unwrap_or(if options.budget.time_limit.is_some() {
            u64::MAX
        } else {
            1000 * n as u64
        });
    // Off: a lag no tabu entry ever reaches (counters stay below ROTS_REBASE_ITERATIONS).
    let off = i32::MAX / 2;
    let aspiration = match params.aspiration_factor * (n * n) as f64 {
        f if f <= 0.0 => off,
        f => f.min(off as f64) as i32,
    };
    let first = 0i32;
    if let Some(island) = ctx.island.as_deref() {
        island_start(
            ctx,
            island,
            &mut perms,
            &mut best_perms,
            &mut best_costs,
            &mut done,
        )?;
    }
    // Launch in chunks so a time limit is honoured to within one chunk; the first chunk is
    // short and measures the iteration rate, later ones aim at ~0.1 s.
    let mut chunk: u64 = 64;
    let mut spent = 0u64;
    let mut restarts = Restarts::new(
        RestartArm::arms(params, n, ctx.crossover),
        p,
        n,
        if params.relink { ctx.inst } else { None },
        crate::run::stream_rng(options.seed ^ 0x5eed_e11e, 0),
    );
    // Each block's tenure range, written again only when the race moves blocks.
    let mut tenures = stream
        .clone_htod(&restarts.tenures())
        .map_err(driver("writing tabu tenures"))?;
    let mut since_rebase = 0u64;
    while spent < total {
        let this = chunk.min(total - spent) as i32;
        if needs_rebase(since_rebase, this as u64) {
            rebase(ctx, &mut done)?;
            since_rebase = 0;
        }
        since_rebase += this as u64;
        let before = ctx.clock.seconds;
        ctx.timed("running", |c| {
            let mut builder = stream.launch_builder(c.kernel.function());
            builder
                .arg(c.a)
                .arg(c.b)
                .arg(&c.seed)
                .arg(&first)
                .arg(&this)
                .arg(&tenures)
                .arg(&aspiration)
                .arg(&mut perms)
                .arg(&mut best_perms)
                .arg(&mut costs)
                .arg(&mut best_costs)
                .arg(&mut deltas)
                .arg(&mut tabu)
                .arg(&mut done);
            // SAFETY: matches qap_rots_block; buffers sized for p solutions of size n.
            unsafe { builder.launch(c.launch.config()) }
                .map(|_| ())
                .map_err(c.kernel.launch_error(&c.launch))
        })?;
        spent += this as u64;
        let restarting = restarts.restarts_at_all() && p > 1 && spent < total;
        // One read of the blocks' bests serves both the watch and the restarts.
        let costs = if ctx.watch.is_listening() || restarting {
            stream
                .clone_dtoh(&best_costs)
                .map_err(driver("reading costs"))?
        } else {
            Vec::new()
        };
        if ctx.watch.is_listening() && ctx.offer(costs.iter().copied().min().unwrap_or(i64::MAX)) {
            break;
        }
        if ctx.timed_out() {
            break;
        }
        if restarting && restarts.after_launch(ctx, &costs, &best_perms, &mut perms, &mut done)? {
            stream
                .memcpy_htod(&restarts.tenures(), &mut tenures)
                .map_err(driver("writing tabu tenures"))?;
        }
        // Without a time limit every launch runs launch_iterations x n iterations (10 n when
        // unset), whatever the pace: restarts then fall where the seed and budget put them.
        let cap = u64::from(params.launch_iterations) * n as u64;
        chunk = crate::gpu::launches::next_launch(
            (this as u64, ctx.clock.seconds - before),
            ctx.deadline,
            Instant::now(),
            Some(cap),
            DEFAULT_LAUNCH_ITERATIONS * n as u64,
        );
    }
    ctx.adaptation = restarts.summary();
    island_save(ctx, &perms, &best_perms, &best_costs)?;
    let host_best = stream
        .clone_dtoh(&best_costs)
        .map_err(driver("reading costs"))?;
    let (objective, index) = RunContext::best_of(&host_best);
    Ok((
        Outcome {
            solution: ctx.read_perm(&best_perms, index)?,
            objective,
            iterations: spent * p as u64,
            evaluations: spent * p as u64 * pairs(n),
        },
        index as u64,
    ))
}

/// Writes an island's blocks before the first launch: saved blocks continue through the
/// kernel's restart path (done_iterations = -1, keeping their bests), seeded blocks start from
/// their seed (a fresh block's best is set to i64::MAX, so the kernel takes the seed as its
/// best), and the others, in the first epoch, draw their starts as in any run.
fn island_start(
    ctx: &RunContext,
    island: &IslandBlocks,
    perms: &mut CudaSlice<i32>,
    best_perms: &mut CudaSlice<i32>,
    best_costs: &mut CudaSlice<i64>,
    done: &mut CudaSlice<i32>,
) -> Result<(), KernelError> {
    let n = ctx.n;
    let p = done.len();
    let (mut host_perms, host_bests, mut host_costs, mut flags) = match &island.saved {
        Some((pp, bp, bc)) if pp.len() == p * n && bp.len() == p * n && bc.len() == p => {
            (pp.clone(), bp.clone(), bc.clone(), vec![-1i32; p])
        }
        _ if island.starts.is_empty() => return Ok(()),
        _ => (vec![0; p * n], vec![0; p * n], vec![0; p], vec![0; p]),
    };
    for (block, start) in island.starts.iter().take(p).enumerate() {
        crate::permutation::check(start, n)
            .map_err(|e| KernelError::InvalidConfig(format!("seed {block} of rots-block: {e}")))?;
        for (slot, &v) in host_perms[block * n..(block + 1) * n].iter_mut().zip(start) {
            *slot = v as i32;
        }
        if flags[block] == 0 {
            host_costs[block] = i64::MAX;
        }
        flags[block] = -1;
    }
    let stream = ctx.gpu.stream();
    let write = "writing an island's blocks";
    stream
        .memcpy_htod(&host_perms, perms)
        .map_err(driver(write))?;
    stream
        .memcpy_htod(&host_bests, best_perms)
        .map_err(driver(write))?;
    stream
        .memcpy_htod(&host_costs, best_costs)
        .map_err(driver(write))?;
    stream.memcpy_htod(&flags, done).map_err(driver(write))
}

/// Keeps every block's state for the island's next epoch.
fn island_save(
    ctx: &mut RunContext,
    perms: &CudaSlice<i32>,
    best_perms: &CudaSlice<i32>,
    best_costs: &CudaSlice<i64>,
) -> Result<(), KernelError> {
    let stream = ctx.gpu.stream().clone();
    let Some(island) = ctx.island.as_deref_mut() else {
        return Ok(());
    };
    let read = "reading an island's blocks";
    island.saved = Some((
        stream.clone_dtoh(perms).map_err(driver(read))?,
        stream.clone_dtoh(best_perms).map_err(driver(read))?,
        stream.clone_dtoh(best_costs).map_err(driver(read))?,
    ));
    Ok(())
}

/// Iterations a rots-block trajectory may count before its counter is rebased: the kernel keeps
/// iteration numbers (and tabu expiries, up to 2 n past them) in int32, and the "off"
/// aspiration lag (2^30 - 1) must stay out of reach.
pub const ROTS_REBASE_ITERATIONS: u64 = 1 << 29;

/// Whether a launch of `next` more iterations would carry a counter that has run `since`
/// iterations past [`ROTS_REBASE_ITERATIONS`].
pub fn needs_rebase(since: u64, next: u64) -> bool {
    since + next > ROTS_REBASE_ITERATIONS
}

/// Restarts every block's counter (done_iterations = -1) from the permutation it holds: the
/// kernel then rebuilds the tabu matrix and deltas and keeps the block's best, as after a
/// restart, so a run of any length never overflows the kernel's int32 iteration numbers
/// (2^29 iterations: ~45 min at n = 100 on an H100, ~20 min at n = 50).
pub(super) fn rebase(ctx: &RunContext, done: &mut CudaSlice<i32>) -> Result<(), KernelError> {
    let flags = vec![-1i32; done.len()];
    ctx.gpu
        .stream()
        .memcpy_htod(&flags, done)
        .map_err(driver("rebasing iteration counters"))
}

/// Breakout-style adaptive perturbation (Benlic and Hao's BLS): the swaps of a block's next
/// restart. A block whose best improved since its last restart starts again from `min`
/// swaps; one that did not perturbs one swap more than last time, up to `max`, so a block
/// stuck in one basin jumps further each time. `max <= min` keeps the fixed strength.
pub fn next_perturbation(last: usize, improved: bool, min: usize, max: usize) -> usize {
    if improved || max <= min || last < min {
        min
    } else {
        (last + 1).min(max)
    }
}

/// One restart configuration: the launches a block may go without improving, the swaps of a
/// restart and the breakout schedule's ceiling, and whether it recombines instead. The run's
/// parameters give one; `--adapt` races several ([`crate::gpu::adapt`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RestartArm {
    stall: u32,
    swaps: usize,
    max_swaps: usize,
    crossover: bool,
    /// The tabu tenure range in iterations, each move's drawn uniformly from it.
    tenure: (i32, i32),
}

/// The tenure range of factors `min` and `max` of n, in iterations (at least 1).
fn tenure_range(min: f64, max: f64, n: usize) -> (i32, i32) {
    let lo = ((min * n as f64) as i32).max(1);
    (lo, ((max * n as f64).ceil() as i32).max(lo))
}

impl RestartArm {
    /// The run's arm, and with `adapt` its neighbours: the other restart rule, 0.6x and 1.4x
    /// the swaps, half and twice the tenure range, twice and half the stall (a run that never
    /// restarts races stalls of 5).
    pub(super) fn arms(params: &GpuParams, n: usize, crossover: bool) -> Vec<RestartArm> {
        let swaps = (params.perturbation * n as f64).round() as usize;
        let ceiling =
            |swaps: usize| ((params.perturbation_max * n as f64).round() as usize).max(swaps);
        let (lo, hi) = (params.tenure_min_factor, params.tenure_max_factor);
        let base = RestartArm {
            stall: params.stall_for(crossover),
            swaps,
            max_swaps: ceiling(swaps),
            crossover,
            tenure: tenure_range(lo, hi, n),
        };
        if !params.adapt {
            return vec![base];
        }
        // A run that never restarts races the default stall; the other rule takes its own
        // default where the stall is unset.
        let racing = |stall: u32| {
            if stall == 0 {
                DEFAULT_RESTART_STALL
            } else {
                stall
            }
        };
        let scaled = |f: f64| ((swaps.max(1) as f64 * f).round() as usize).clamp(1, n);
        let base = RestartArm {
            stall: racing(base.stall),
            ..base
        };
        adapt::restart_arms(
            base,
            RestartArm {
                crossover: !crossover,
                stall: racing(params.stall_for(!crossover)),
                ..base
            },
            [0.6, 1.4]
                .map(|f| RestartArm {
                    swaps: scaled(f),
                    max_swaps: ceiling(scaled(f)),
                    ..base
                })
                .into_iter()
                .chain([0.5, 2.0].map(|f| RestartArm {
                    tenure: tenure_range(lo * f, hi * f, n),
                    ..base
                })),
            base.stall,
            |stall| RestartArm { stall, ..base },
        )
    }

    fn describe(&self, n: usize) -> String {
        let n = n.max(1) as f64;
        format!(
            "{} after {} launches, {:.2} n swaps, tenure {:.2}-{:.2} n",
            if self.crossover { "crossover" } else { "swaps" },
            self.stall,
            self.swaps as f64 / n,
            f64::from(self.tenure.0) / n,
            f64::from(self.tenure.1) / n
        )
    }
}

/// The host side of rots-block's restarts (iterated tabu search per block).
pub(super) struct Restarts<'a> {
    /// The restart configurations; block i runs `arms[race.arm(i)]` (arm 0 without a race).
    arms: Vec<RestartArm>,
    race: Option<Race>,
    /// Per block: the swaps of its last restart, and whether its best improved since.
    strength: Vec<usize>,
    improved: Vec<bool>,
    /// With `relink`: the instance, to walk from a stalled block's best toward the elite.
    relink: Option<&'a crate::qap::Instance>,
    stalls: Stalls,
    rng: crate::run::SolverRng,
    n: usize,
}

impl<'a> Restarts<'a> {
    pub(super) fn new(
        arms: Vec<RestartArm>,
        p: usize,
        n: usize,
        relink: Option<&'a crate::qap::Instance>,
        rng: crate::run::SolverRng,
    ) -> Restarts<'a> {
        let race = Race::over(arms.len(), p);
        Restarts {
            strength: (0..p)
                .map(|_| arms.first().map_or(0, |a| a.swaps))
                .collect(),
            arms,
            race,
            improved: vec![false; p],
            relink,
            stalls: Stalls::new(vec![i64::MAX; p]),
            rng,
            n,
        }
    }

    fn arm(&self, block: usize) -> RestartArm {
        Race::pick(self.race.as_ref(), &self.arms, block)
    }

    /// Each block's tenure range, flattened (min, max) per block as the kernel reads it.
    pub(super) fn tenures(&self) -> Vec<i32> {
        (0..self.strength.len())
            .flat_map(|block| {
                let (lo, hi) = self.arm(block).tenure;
                [lo, hi]
            })
            .collect()
    }

    /// Whether any block ever restarts (an arm with a stall).
    pub(super) fn restarts_at_all(&self) -> bool {
        self.arms.iter().any(|a| a.stall > 0)
    }

    /// With `--adapt`: the arms and how many blocks ran each at the end, for the log and
    /// `--json`.
    pub(super) fn summary(&self) -> Option<String> {
        let labels = self.arms.iter().map(|a| a.describe(self.n));
        Some(self.race.as_ref()?.summary("blocks", labels))
    }

    /// Restarts every block whose best has not improved for `stall` launches from its own best
    /// with `swaps` random swaps (iterated tabu search per block); the kernel rebuilds the
    /// delta matrix and tabu list (done_iterations = -1) and keeps the block's best. Measured
    /// on the H100 at 10 s (tai50a/60a/80a/100a) with the global-memory kernel (264 x 256,
    /// ~0.1 s launches): own best with 0.25 n swaps gave 0.30/0.43/0.60/0.62%; 0.5 n gave
    /// 0.35/0.51/0.88/0.83%; the best of all blocks with 0.4 n gave 0.39/0.48/0.82/0.67%, and
    /// without restarts 0.42/0.49/0.91/0.79%. With the shared-memory kernel (132 x 512, 20x
    /// the iterations per block) the stall must be counted in iterations: launches of 10 n
    /// iterations (a restart after 50 n stagnant ones) gave 0.29/0.33-0.42/0.43-0.55/
    /// 0.47-0.54% (two seeds), 40 n gave 0.00-0.36/0.40/0.54-0.60/0.53-0.58%, ~0.1 s
    /// launches (~17000 iterations) 0.23-0.35/0.27-0.50/0.75-0.79/0.68-0.74%. With 10 n
    /// launches, tai80a/tai100a over seeds 1-3: perturbation 0.25 n (default) 0.43-0.55/
    /// 0.47-0.54%, 0.1 n 0.51-0.68/0.54-0.64%, 0.15 n 0.56-0.62/0.54-0.62%, 0.35 n
    /// 0.47-0.57/0.41-0.65%, 0.5 n 0.68-0.70/0.72-0.81%; a stall of 3 launches 0.50-0.52/
    /// 0.44-0.51%, of 10 launches 0.55-0.64/0.52-0.63%. The best block is never restarted.
    /// Restarting instead from one of the K best blocks' bests (where better than the own;
    /// tenure 0.9-1.1 n, aspiration 2 n^2) gave a mean 0.61/0.55% (K = 4) and 0.54/0.55%
    /// (K = 16) against 0.50/0.46% from the own best: the blocks' diversity matters more.
    /// With tenure 0.4-0.8 n and no aspiration, perturbation 0.3 n gave 0.46/0.43%, 0.35 n
    /// 0.43/0.46%, and a stall of 3 launches (0.3 n) 0.46/0.41%, against 0.40/0.38%.
    /// Returns whether the race moved blocks to other arms (their tenures are then rewritten).
    fn after_launch(
        &mut self,
        ctx: &RunContext,
        costs: &[i64],
        best_perms: &CudaSlice<i32>,
        perms: &mut CudaSlice<i32>,
        done: &mut CudaSlice<i32>,
    ) -> Result<bool, KernelError> {
        let stream = ctx.gpu.stream();
        let moved = match &mut self.race {
            Some(race) => race.after_launch(costs) > 0,
            None => false,
        };
        let stale = self.stale_blocks(costs);
        if stale.is_empty() {
            return Ok(moved);
        }
        let n = ctx.n;
        let own_bests = stream
            .clone_dtoh(best_perms)
            .map_err(driver("reading best permutations"))?;
        let mut host_perms = stream
            .clone_dtoh(perms)
            .map_err(driver("reading permutations"))?;
        let mut host_done = stream
            .clone_dtoh(done)
            .map_err(driver("reading iteration counts"))?;
        for (i, start) in self.starts(&stale, costs, &own_bests) {
            for (slot, &v) in host_perms[i * n..(i + 1) * n].iter_mut().zip(&start) {
                *slot = v as i32;
            }
            host_done[i] = -1;
        }
        stream
            .memcpy_htod(&host_perms, perms)
            .map_err(driver("writing restart permutations"))?;
        stream
            .memcpy_htod(&host_done, done)
            .map_err(driver("writing restart flags"))?;
        Ok(moved)
    }

    /// Counts each block's launches without improvement (from its best cost after a launch)
    /// and returns the blocks due for a restart; the best block never is.
    fn stale_blocks(&mut self, costs: &[i64]) -> Vec<usize> {
        for i in self.stalls.count(costs) {
            self.improved[i] = true;
        }
        let (_, best_index) = RunContext::best_of(costs);
        (0..costs.len())
            .filter(|&i| i != best_index && self.stalls.due(i, self.arm(i).stall))
            .collect()
    }

    /// Where each stale block restarts (host only, so it is tested without a GPU): path
    /// relinking toward the elite, a crossover with a partner, or random swaps of the own best
    /// (also where relinking or crossover has nothing to offer). `own_bests` holds the
    /// blocks' best permutations as the kernel wrote them; relinking and crossover check
    /// them first, so a fault's garbage is never recombined.
    fn starts(
        &mut self,
        stale: &[usize],
        costs: &[i64],
        own_bests: &[i32],
    ) -> Vec<(usize, Vec<usize>)> {
        use rand::Rng;
        let n = self.n;
        let perm_of = |i: usize| -> Vec<usize> {
            own_bests[i * n..(i + 1) * n]
                .iter()
                .map(|&v| v.max(0) as usize)
                .collect()
        };
        let valid = |p: &Vec<usize>| crate::permutation::check(p, n).is_ok();
        let (_, best_index) = RunContext::best_of(costs);
        let elite = perm_of(best_index);
        let mut out = Vec::with_capacity(stale.len());
        for &i in stale {
            let arm = self.arm(i);
            let mut q = perm_of(i);
            self.stalls.restarted(i);
            // With the cost of the other block's best it drew on: the race scores what the
            // block finds beyond both parents, not the partner's quality it inherits.
            let recombined = if !valid(&q) {
                None
            } else if let Some(inst) = self.relink {
                // The best point between this block's best and the elite, as far from both as
                // a perturbation would move.
                valid(&elite)
                    .then(|| super::relink::relink(inst, &q, &elite, arm.swaps))
                    .flatten()
                    .map(|(p, _)| (p, costs[best_index]))
            } else if arm.crossover {
                super::crossover::tournament(costs, i, &mut self.rng)
                    .map(|b| (perm_of(b), costs[b]))
                    .filter(|(b, _)| valid(b))
                    .map(|(b, cost)| (super::crossover::uniform_like(&q, &b, &mut self.rng), cost))
                    .filter(|(child, _)| *child != q)
            } else {
                None
            };
            if let Some((start, partner_cost)) = recombined {
                self.improved[i] = false;
                if let Some(race) = &mut self.race {
                    race.inherited(i, partner_cost);
                }
                out.push((i, start));
                continue;
            }
            let swaps =
                next_perturbation(self.strength[i], self.improved[i], arm.swaps, arm.max_swaps);
            self.strength[i] = swaps;
            self.improved[i] = false;
            for _ in 0..swaps {
                let x = self.rng.random_range(0..n);
                let y = self.rng.random_range(0..n);
                q.swap(x, y);
            }
            out.push((i, q));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qap::gpu::start_permutation;

    fn restarts(
        crossover: bool,
        relink: Option<&crate::qap::Instance>,
        n: usize,
        p: usize,
    ) -> Restarts<'_> {
        let arm = RestartArm {
            stall: 2,
            swaps: 3,
            max_swaps: 3,
            crossover,
            tenure: (4, 8),
        };
        Restarts::new(vec![arm], p, n, relink, crate::run::stream_rng(11, 0))
    }

    fn flat(perms: &[Vec<usize>]) -> Vec<i32> {
        perms.iter().flatten().map(|&v| v as i32).collect()
    }

    /// Two launches without improvement make every block but the best stale; with crossover
    /// each restarts from a permutation that keeps what its best shares with every other
    /// block's (here: the first half, common to all), and that differs from its own best.
    #[test]
    fn crossover_restarts_recombine_the_blocks_bests() {
        let (n, p) = (30usize, 6usize);
        let mut bests: Vec<Vec<usize>> =
            (0..p as u64).map(|k| start_permutation(n, 3, k)).collect();
        let shared = bests[0][..n / 2].to_vec();
        for b in bests.iter_mut().skip(1) {
            for (f, &l) in shared.iter().enumerate() {
                let j = b.iter().position(|&x| x == l).unwrap();
                b.swap(f, j);
            }
        }
        let costs: Vec<i64> = (0..p as i64).map(|k| 100 + k).collect();
        let mut r = restarts(true, None, n, p);
        assert!(
            r.stale_blocks(&costs).is_empty(),
            "the first launch sets the bests"
        );
        assert!(r.stale_blocks(&costs).is_empty());
        let stale = r.stale_blocks(&costs);
        assert_eq!(
            stale,
            [1, 2, 3, 4, 5],
            "block 0 holds the best and is never restarted"
        );
        let starts = r.starts(&stale, &costs, &flat(&bests));
        assert_eq!(starts.len(), stale.len());
        for (i, start) in &starts {
            crate::permutation::check(start, n).unwrap();
            assert_eq!(
                &start[..n / 2],
                &shared[..],
                "block {i} lost the shared assignments"
            );
            assert_ne!(
                start, &bests[*i],
                "block {i} restarts from its own best unchanged"
            );
            assert_eq!(r.stalls.since(*i), 0);
        }
    }

    /// Without a rule that recombines, and where the bests are garbage (a faulted launch),
    /// restarts fall back to random swaps of the own best: never a recombination of garbage.
    #[test]
    fn restarts_fall_back_to_swaps() {
        let (n, p) = (20usize, 4usize);
        let bests: Vec<Vec<usize>> = (0..p as u64).map(|k| start_permutation(n, 5, k)).collect();
        let costs = vec![10, 11, 12, 13];
        let mut r = restarts(false, None, n, p);
        let starts = r.starts(&[1, 2], &costs, &flat(&bests));
        for (i, start) in &starts {
            crate::permutation::check(start, n).unwrap();
            let moved = (0..n).filter(|&f| start[f] != bests[*i][f]).count();
            assert!(
                moved <= 2 * 3,
                "3 swaps move at most 6 facilities, moved {moved}"
            );
        }
        let mut garbage = flat(&bests);
        garbage[n..2 * n].fill(0);
        let mut r = restarts(true, None, n, p);
        let starts = r.starts(&[1], &costs, &garbage);
        assert!(
            starts[0].1.iter().all(|&l| l == 0),
            "garbage is swapped, not recombined"
        );
    }
}

#[cfg(test)]
mod adapt_tests {
    use super::*;
    use crate::qap::gpu::{start_permutation, GpuAlgorithm};

    #[test]
    fn adapt_races_the_configured_restarts_and_seven_neighbours() {
        let mut params = GpuParams::new(GpuAlgorithm::RotsBlock);
        assert_eq!(RestartArm::arms(&params, 100, false).len(), 1);
        params.adapt = true;
        let arms = RestartArm::arms(&params, 100, false);
        assert_eq!(arms.len(), 8, "{arms:?}");
        let base = RestartArm {
            stall: params.stall_for(false),
            swaps: 25,
            max_swaps: 25,
            crossover: false,
            tenure: (40, 80),
        };
        assert_eq!(arms[0], base, "the configured restarts come first");
        assert!(arms.iter().any(|a| a.crossover));
        assert!(arms.iter().any(|a| a.swaps == 15) && arms.iter().any(|a| a.swaps == 35));
        assert!(arms.iter().any(|a| a.stall == 10) && arms.iter().any(|a| a.stall == 2));
        // Half and twice the tenure range, everything else the configured arm's.
        for tenure in [(20, 40), (80, 160)] {
            assert!(
                arms.contains(&RestartArm { tenure, ..base }),
                "{tenure:?}: {arms:?}"
            );
        }
        let r = Restarts::new(arms.clone(), 16, 100, None, crate::run::stream_rng(1, 0));
        let tenures = r.tenures();
        assert_eq!(tenures.len(), 32, "a (min, max) pair per block");
        for block in 0..16 {
            let (lo, hi) = arms[block % arms.len()].tenure;
            assert_eq!(
                &tenures[2 * block..2 * block + 2],
                &[lo, hi],
                "block {block}"
            );
        }
        // A run that never restarts races stalls around 5.
        params.restart_stall = Some(0);
        let arms = RestartArm::arms(&params, 100, false);
        assert!(arms.iter().all(|a| a.stall > 0), "{arms:?}");
    }

    /// With the stall unset, each restart rule's arm takes that rule's default stall; a set
    /// stall is every rule's.
    #[test]
    fn the_other_rules_arm_takes_its_own_default_stall() {
        use crate::qap::gpu::{CROSSOVER_RESTART_STALL, DEFAULT_RESTART_STALL};
        let params = GpuParams {
            adapt: true,
            ..GpuParams::new(GpuAlgorithm::RotsBlock)
        };
        let arms = RestartArm::arms(&params, 100, true);
        assert_eq!(arms[0].stall, CROSSOVER_RESTART_STALL);
        let swaps = arms.iter().find(|a| !a.crossover).expect("a swap arm");
        assert_eq!(swaps.stall, DEFAULT_RESTART_STALL, "{arms:?}");
        let set = GpuParams {
            restart_stall: Some(7),
            ..params
        };
        let arms = RestartArm::arms(&set, 100, true);
        assert_eq!(arms.iter().find(|a| !a.crossover).map(|a| a.stall), Some(7));
    }

    /// Blocks follow their own arm's stall: with arms of stall 1 and 3, after two launches
    /// without improvement only the first arm's blocks (even indices) restart.
    #[test]
    fn each_block_restarts_by_its_arm() {
        let (n, p) = (20usize, 6usize);
        let arm = |stall| RestartArm {
            stall,
            swaps: 2,
            max_swaps: 2,
            crossover: false,
            tenure: (8, 16),
        };
        let mut r = Restarts::new(
            vec![arm(1), arm(3)],
            p,
            n,
            None,
            crate::run::stream_rng(3, 0),
        );
        let costs: Vec<i64> = (0..p as i64).map(|k| 50 + k).collect();
        assert!(r.stale_blocks(&costs).is_empty());
        let stale = r.stale_blocks(&costs);
        assert_eq!(
            stale,
            [2, 4],
            "arm 0 (stall 1) holds blocks 0, 2, 4; block 0 is the best"
        );
        let bests: Vec<i32> = (0..p as u64)
            .flat_map(|k| start_permutation(n, 1, k))
            .map(|v| v as i32)
            .collect();
        assert_eq!(r.starts(&stale, &costs, &bests).len(), 2);
        let summary = r.summary().unwrap();
        assert!(
            summary.contains("3 x (swaps after 1 launches, 0.10 n swaps, tenure 0.40-0.80 n"),
            "{summary}"
        );
        assert!(summary.contains("3 x (swaps after 3 launches"), "{summary}");
    }
}
