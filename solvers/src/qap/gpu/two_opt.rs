//! The thread-per-solution drivers: `2opt`, `2opt-shared` and `tabu` (one launch per round of
//! new starts) and `2opt-dyn` (a parent thread per solution launching a child grid per scan).

use std::time::Instant;

use cudarc::driver::sys::CUlimit;
use cudarc::driver::PushKernelArg;
use kernels::KernelError;

use crate::run::{Outcome, RunOptions};

use super::context::{Rounds, RunContext};
use super::{driver, GpuAlgorithm, GpuParams};

pub(super) fn thread_per_solution(
    ctx: &mut RunContext,
    params: &GpuParams,
    options: &RunOptions,
) -> Result<(Outcome, u64), KernelError> {
    let p = params.solutions as usize;
    let n = ctx.n;
    let stream = ctx.gpu.stream().clone();
    let mut perms = stream
        .alloc_zeros::<i32>(p * n)
        .map_err(driver("allocating permutations"))?;
    let mut costs = stream
        .alloc_zeros::<i64>(p)
        .map_err(driver("allocating costs"))?;
    let mut scans = stream
        .alloc_zeros::<i32>(p)
        .map_err(driver("allocating scan counts"))?;
    let is_tabu = params.algorithm == GpuAlgorithm::Tabu;
    let budget = options
        .budget
        .iterations
        .map(|i| i.min(i32::MAX as u64) as i32)
        .or(params.iterations.map(|i| i.min(i32::MAX as u32) as i32))
        .unwrap_or(if is_tabu { 100 * n as i32 } else { i32::MAX });
    let full_budget = budget;
    let tenure = params.tenure.unwrap_or((n as u32 / 4).max(1)) as i32;
    let solutions = p as i32;
    let mut rounds = Rounds::new(p);
    // A tabu round cannot stop inside its launch, so under a time limit its length follows
    // the clock: a first round of one iteration measures the time per iteration (an
    // overestimate: it carries the start's cost), and each next round gets what fits in 80%
    // of the time left (at most the full budget). One tabu iteration of 1024 solutions at
    // n = 40 takes ~2.7 ms on an H100, so a fixed first round of 10 n overran 0.4 s.
    let timed_tabu = is_tabu && ctx.deadline.is_some();
    let mut round_budget = if timed_tabu { 1 } else { budget };
    loop {
        let first = rounds.first();
        let kernel_before = ctx.clock.seconds;
        let budget = round_budget;
        ctx.timed("running", |c| {
            let mut builder = stream.launch_builder(c.kernel.function());
            builder
                .arg(c.a)
                .arg(c.b)
                .arg(&solutions)
                .arg(&c.seed)
                .arg(&first)
                .arg(&budget);
            if is_tabu {
                builder.arg(&tenure);
            }
            builder.arg(&mut perms).arg(&mut costs).arg(&mut scans);
            // SAFETY: the arguments match the kernel's signature; buffers hold p and p * n items.
            unsafe { builder.launch(c.launch.config()) }
                .map(|_| ())
                .map_err(c.kernel.launch_error(&c.launch))
        })?;
        let stop = rounds.finish(ctx, &costs, &scans, &perms)?;
        if let (true, Some(deadline)) = (timed_tabu, ctx.deadline) {
            let per_iteration = (ctx.clock.seconds - kernel_before) / f64::from(budget.max(1));
            let left = deadline
                .saturating_duration_since(Instant::now())
                .as_secs_f64();
            round_budget = if per_iteration > 0.0 {
                (0.8 * left / per_iteration).clamp(1.0, f64::from(round_budget.max(1)) * 1e3) as i32
            } else {
                round_budget
            }
            .min(full_budget);
        }
        if stop {
            break;
        }
    }
    Ok(rounds.outcome(n))
}

pub(super) fn dynamic(
    ctx: &mut RunContext,
    params: &GpuParams,
    options: &RunOptions,
) -> Result<(Outcome, u64), KernelError> {
    let p = params.solutions as usize;
    let n = ctx.n;
    let ct = params.child_threads as usize;
    // Every parent may have a child pending at once.
    ctx.gpu
        .context()
        .set_limit(
            CUlimit::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
            (p + 64).max(2048),
        )
        .map_err(driver("raising the pending-launch limit"))?;
    let stream = ctx.gpu.stream().clone();
    let alloc_i32 = |len: usize| {
        stream
            .alloc_zeros::<i32>(len)
            .map_err(driver("allocating 2opt-dyn state"))
    };
    let mut perms = alloc_i32(p * n)?;
    let mut scans = alloc_i32(p)?;
    let mut active = alloc_i32(p)?;
    let mut child_pair = alloc_i32(p * ct)?;
    let mut launched = alloc_i32(1)?;
    let mut costs = stream
        .alloc_zeros::<i64>(p)
        .map_err(driver("allocating costs"))?;
    let mut child_delta = stream
        .alloc_zeros::<i64>(p * ct)
        .map_err(driver("allocating child results"))?;
    let max_scans = options
        .budget
        .iterations
        .map(|i| i.min(i32::MAX as u64 - 1) as i32)
        .or(params.iterations.map(|i| i.min(i32::MAX as u32 - 1) as i32))
        .unwrap_or(i32::MAX - 1);
    let solutions = p as i32;
    let mut rounds = Rounds::new(p);
    // Rounds of p new starts (step 0 of a round draws them): without a time limit one round
    // is the run; with one, rounds follow until it is spent, as for the other 2-opt variants.
    loop {
        let first = rounds.first();
        let mut step = 0i32;
        // Once the time is up, one more step applies what the last children found.
        let mut time_up = false;
        loop {
            let launch_children = i32::from(step < max_scans && !time_up);
            if step % 8 == 1 {
                stream
                    .memset_zeros(&mut launched)
                    .map_err(driver("clearing the launch counter"))?;
            }
            ctx.timed("a 2opt-dyn step", |c| {
                let mut builder = stream.launch_builder(c.kernel.function());
                builder
                    .arg(c.a)
                    .arg(c.b)
                    .arg(&solutions)
                    .arg(&c.seed)
                    .arg(&first)
                    .arg(&step)
                    .arg(&launch_children)
                    .arg(&mut perms)
                    .arg(&mut costs)
                    .arg(&mut scans)
                    .arg(&mut active)
                    .arg(&mut child_delta)
                    .arg(&mut child_pair)
                    .arg(&mut launched);
                // SAFETY: matches qap_2opt_dyn_step; every buffer is sized for p solutions.
                unsafe { builder.launch(c.launch.config()) }
                    .map(|_| ())
                    .map_err(c.kernel.launch_error(&c.launch))
            })?;
            if launch_children == 0 {
                break;
            }
            // Every 8 steps: if no parent launched a child since the counter was cleared,
            // every solution is at its local optimum and the last results are applied.
            if step % 8 == 0 && step > 0 {
                let count = stream
                    .clone_dtoh(&launched)
                    .map_err(driver("reading the launch counter"))?;
                if count[0] == 0 {
                    break;
                }
            }
            time_up = ctx.timed_out();
            step += 1;
        }
        if rounds.finish(ctx, &costs, &scans, &perms)? {
            break;
        }
    }
    Ok(rounds.outcome(n))
}
