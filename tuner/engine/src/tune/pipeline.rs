//! Running a batch of trials. On the GPU the batch's kernels go to the compile pool
//! ([`super::compile`]) at once, and the measuring workers (one per GPU, each on its own
//! thread) work through the batch in order, so a GPU rarely waits for NVRTC; each trial waits
//! only for its own kernel.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::Result;
use results::TrialStatus;

use super::compile::CompileResult;
use super::device_pool::{DevicePool, Finished};
use super::{Backend, TrialJob, Tuning};
use crate::campaign::instances::CampaignInstance;
use crate::runner::gpu::job as gpu_job;
use crate::runner::{cpu, TrialResult};
use measure::device_lock::DeviceLock;
use measure::protocol::SolveJob;

pub fn run(t: &mut Tuning, jobs: &[TrialJob], label: &str) -> Result<Vec<Option<TrialResult>>> {
    match &t.backend {
        Backend::Cpu(_) => run_cpu(t, jobs, label),
        Backend::Gpu { .. } => run_gpu(t, jobs, label),
    }
}

/// Writes the `started` row, runs `measure`, writes the end. The row is committed before the
/// measurement starts, so a crash of the whole process leaves a trace that resume turns into
/// `crashed`.
fn trial(
    t: &mut Tuning,
    job: &TrialJob,
    device: &str,
    measure: impl FnOnce(&mut Tuning) -> (TrialResult, f64),
) -> Result<TrialResult> {
    let started = Instant::now();
    let id = t.store.begin_trial(
        t.campaign_id,
        job.point_id,
        job.instance_id,
        job.seed,
        device,
    )?;
    let (result, busy_s) = measure(t);
    t.store
        .finish_trial(id, result.status, &result.measurement, &result.log)?;
    t.budget.count_trial();
    t.clock.push(started, busy_s);
    t.progress.trial(&result);
    Ok(result)
}

fn run_cpu(t: &mut Tuning, jobs: &[TrialJob], label: &str) -> Result<Vec<Option<TrialResult>>> {
    let Backend::Cpu(settings) = &t.backend else {
        unreachable!("checked by run")
    };
    let settings = *settings;
    let device = t.devices[0].clone();
    let mut out = Vec::with_capacity(jobs.len());
    for job in jobs {
        if t.budget.exhausted() {
            t.budget.mark_cut();
            out.push(None);
            continue;
        }
        t.progress.set_label(label);
        let inst = t.instances[job.instance].clone();
        let result = trial(t, job, &device, |t| match &job.realised {
            Ok(r) => {
                // Only with MATS_CPU_DEVICE_LOCK: the same turn-taking as on a GPU.
                let _lease = match t.cpu_lock.as_mut().map(DeviceLock::lease).transpose() {
                    Ok(lease) => lease,
                    Err(e) => {
                        return (
                            TrialResult::failed(TrialStatus::Failed, format!("{e:#}")),
                            0.0,
                        )
                    }
                };
                let result = cpu::measure(&inst, r, &settings, job.seed);
                let busy = result.measurement.measure_s.unwrap_or_else(|| {
                    result.measurement.time_s.unwrap_or(0.0)
                        * f64::from(settings.timed_runs + settings.warmup_runs)
                });
                (result, busy)
            }
            Err(e) => (TrialResult::failed(TrialStatus::Failed, e.clone()), 0.0),
        })?;
        out.push(Some(result));
    }
    Ok(out)
}

/// A trial's worker job and its kernel (or why the point cannot run there).
type Prepared = Result<(SolveJob, kernels::Variant), String>;

/// The GPU pipeline: one thread per worker measures while this thread waits for compiles,
/// writes the store and hands the next trial to whichever GPU is free. Each GPU measures one
/// trial at a time; a trial is committed `started` before it is handed out.
fn run_gpu(t: &mut Tuning, jobs: &[TrialJob], label: &str) -> Result<Vec<Option<TrialResult>>> {
    let Backend::Gpu {
        settings, compiles, ..
    } = &mut t.backend
    else {
        unreachable!("checked by run")
    };
    let settings = settings.clone();
    let target = compiles.target();
    let mut prepared: Vec<Prepared> = Vec::with_capacity(jobs.len());
    for job in jobs {
        let inst = &t.instances[job.instance];
        let p = job.realised.as_ref().map_err(Clone::clone).and_then(|r| {
            let wj = gpu_job(0, inst, r, &settings, job.seed)?;
            let variant = wj.config.kernel_variant(&inst.instance, target)?;
            Ok((wj, variant))
        });
        // The whole batch goes to the compile pool at once.
        if let Ok((_, variant)) = &p {
            compiles.queue(variant.clone());
        }
        prepared.push(p);
    }

    let Backend::Gpu { workers, .. } = &mut t.backend else {
        unreachable!("checked above")
    };
    let mut workers = std::mem::take(workers);
    let timeout = settings.timeout;
    let mut out: Vec<Option<TrialResult>> = vec![None; jobs.len()];
    let names: Vec<String> = workers.iter().map(|w| w.device.clone()).collect();
    let measure = |worker: &mut crate::runner::gpu::GpuWorker,
                   (mut wj, inst): (SolveJob, CampaignInstance)| {
        wj.gpu = worker.ordinal;
        let before = worker.busy_s;
        let result = worker.measure(&inst, wj, timeout);
        let busy = worker.busy_s - before;
        (result, busy)
    };
    let outcome = std::thread::scope(|scope| -> Result<()> {
        let mut pool = DevicePool::start(scope, &mut workers, names, &measure);
        let mut in_flight: InFlight = HashMap::new();
        for (k, (job, p)) in jobs.iter().zip(prepared).enumerate() {
            if t.budget.exhausted() {
                t.budget.mark_cut();
                break;
            }
            t.progress.set_label(label);
            let ready = p.and_then(|(wj, variant)| {
                let compiled = t
                    .compiles()
                    .map(|c| c.wait(variant))
                    .ok_or("the GPU backend has no compile pool")?;
                compiled.clone().map(|_| (wj, compiled))
            });
            let (wj, compile) = match ready {
                Ok((wj, compiled)) => (wj, Some(compiled)),
                Err(e) => {
                    // It cannot run: recorded as failed without taking a GPU.
                    let device = pool.name(0).to_string();
                    let result = trial(t, job, &device, |_| {
                        (TrialResult::failed(TrialStatus::Failed, e), 0.0)
                    })?;
                    out[k] = Some(result);
                    continue;
                }
            };
            let (slot, finished) = pool.free_slot()?;
            if let Some(done) = finished {
                finish(t, &mut in_flight, &mut out, done)?;
            }
            let id = t.store.begin_trial(
                t.campaign_id,
                job.point_id,
                job.instance_id,
                job.seed,
                pool.name(slot),
            )?;
            // Counted when handed out, so the trial budget holds with several in flight.
            t.budget.count_trial();
            in_flight.insert(k, (id, Instant::now(), compile));
            let inst = t.instances[job.instance].clone();
            pool.send(slot, k, (wj, inst))?;
        }
        for done in pool.drain() {
            finish(t, &mut in_flight, &mut out, done)?;
        }
        Ok(())
    });
    if let Backend::Gpu { workers: w, .. } = &mut t.backend {
        *w = workers;
    }
    outcome?;
    Ok(out)
}

/// (job, GPU slot, (result, busy seconds)) from a worker thread.
type Done = Finished<(TrialResult, f64)>;
/// Trials handed out: job -> (trial id, start, its compile).
type InFlight = HashMap<usize, (i64, Instant, Option<CompileResult>)>;

/// Writes a measured trial's end (its GPU slot is free again).
fn finish(
    t: &mut Tuning,
    in_flight: &mut InFlight,
    out: &mut [Option<TrialResult>],
    (k, _slot, (mut result, busy)): Done,
) -> Result<()> {
    let (id, started, compile) = in_flight.remove(&k).expect("a trial in flight");
    // The parent compiled the kernel: its time and cache status are the real ones.
    if let Some(Ok((seconds, status))) = compile {
        result.measurement.compile_s = Some(seconds);
        result.measurement.cache_hit = Some(status == kernels::CacheStatus::Hit);
    }
    t.store
        .finish_trial(id, result.status, &result.measurement, &result.log)?;
    t.clock.push(started, busy);
    t.progress.trial(&result);
    out[k] = Some(result);
    Ok(())
}

/// Queues the kernels of `points` on the class's instances (speculation: the strategy may ask
/// for them next). Only on the GPU; points that cannot become jobs are skipped.
pub fn speculate(t: &mut Tuning, points: &[results::Point], members: &[usize]) {
    let Backend::Gpu { settings, .. } = &t.backend else {
        return;
    };
    let settings = settings.clone();
    let mut wanted = Vec::new();
    for p in points {
        let Ok(r) = t.realise(p) else { continue };
        for &m in members {
            let inst = &t.instances[m];
            if let Ok(wj) = gpu_job(0, inst, &r, &settings, 0) {
                wanted.push((wj.config, m));
            }
        }
    }
    let Backend::Gpu { compiles, .. } = &mut t.backend else {
        return;
    };
    let target = compiles.target();
    for (config, m) in wanted {
        if let Ok(variant) = config.kernel_variant(&t.instances[m].instance, target) {
            compiles.queue(variant);
        }
    }
}
