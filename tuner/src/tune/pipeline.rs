//! Running a batch of trials. On the GPU the batch's kernels go to the compile pool
//! ([`super::compile`]) at once, and the measuring worker works through the batch in order, so
//! the GPU rarely waits for NVRTC; each trial waits only for its own kernel.

use std::time::Instant;

use anyhow::Result;
use results::TrialStatus;

use std::collections::HashMap;
use std::sync::mpsc;

use super::compile::{key, CompileResult};
use super::{Backend, TrialJob, Tuning};
use crate::campaign::instances::CampaignInstance;
use crate::measure::protocol::QapSolveJob;
use crate::runner::gpu::job as gpu_job;
use crate::runner::{cpu, TrialResult};

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
    let id = t
        .store
        .begin_trial(t.campaign_id, job.point_id, job.instance_id, device)?;
    let (result, busy_s) = measure(t);
    t.store
        .finish_trial(id, result.status, &result.measurement, &result.log)?;
    t.budget.new_trials += 1;
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
            out.push(None);
            continue;
        }
        t.progress.set_label(label);
        let inst = t.instances[job.instance].clone();
        let result = trial(t, job, &device, |_| match &job.realised {
            Ok(r) => {
                let result = cpu::measure(&inst, r, &settings);
                let busy = result.measurement.time_s.unwrap_or(0.0)
                    * f64::from(settings.timed_runs + settings.warmup_runs);
                (result, busy)
            }
            Err(e) => (TrialResult::failed(TrialStatus::Failed, e.clone()), 0.0),
        })?;
        out.push(Some(result));
    }
    Ok(out)
}

fn run_gpu(t: &mut Tuning, jobs: &[TrialJob], label: &str) -> Result<Vec<Option<TrialResult>>> {
    let Backend::Gpu { settings, .. } = &t.backend else {
        unreachable!("checked by run")
    };
    let settings = settings.clone();
    // Worker jobs (or the reason a point cannot become one), and their kernels' keys.
    let mut prepared = Vec::with_capacity(jobs.len());
    for job in jobs {
        let inst = &t.instances[job.instance];
        let wj = job
            .realised
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|r| gpu_job(0, inst, r, &settings));
        let qap = match &inst.instance {
            solvers::family::Instance::Qap(q) => Some(q.clone()),
            _ => None,
        };
        let key = wj.as_ref().ok().map(|wj| key(wj, &inst.record.name));
        prepared.push((wj, qap, key));
    }
    // The whole batch goes to the compile pool at once.
    for (wj, qap, key) in &prepared {
        if let (Ok(wj), Some(q), Some(k)) = (wj, qap, key) {
            t.compiles.queue(k.clone(), wj.clone(), q.clone());
        }
    }
    if matches!(&t.backend, Backend::Gpu { workers, .. } if workers.len() > 1) {
        return run_gpus_in_parallel(t, jobs, prepared, &settings, label);
    }

    let mut out = Vec::with_capacity(jobs.len());
    for (k, (job, (wj, qap, key))) in jobs.iter().zip(prepared).enumerate() {
        if t.budget.exhausted() {
            out.push(None);
            continue;
        }
        t.progress.set_label(label);
        let inst = t.instances[job.instance].clone();
        let compile = match (&wj, qap, key) {
            (Ok(wj), Some(q), Some(key)) => Some(t.compiles.wait(key, wj.clone(), q)),
            _ => None,
        };
        // Round-robin over the campaign's GPUs; each has its own worker, and a GPU measures
        // one trial at a time.
        let Backend::Gpu { workers, .. } = &t.backend else {
            unreachable!()
        };
        let slot = k % workers.len();
        let device = workers[slot].device.clone();
        let ordinal = workers[slot].ordinal;
        let timeout = settings.timeout;
        let result = trial(t, job, &device, |t| {
            let Backend::Gpu { workers, .. } = &mut t.backend else {
                unreachable!()
            };
            match (wj, compile) {
                (Err(e), _) => (TrialResult::failed(TrialStatus::Failed, e), 0.0),
                (Ok(_), Some(Err(e))) => (TrialResult::failed(TrialStatus::Failed, e), 0.0),
                (Ok(mut wj), compile) => {
                    wj.gpu = ordinal;
                    let worker = &mut workers[slot];
                    let before = worker.busy_s;
                    let mut result = worker.measure(&inst, wj, timeout);
                    // The parent compiled it: its time and cache status are the real ones.
                    if let Some(Ok((seconds, status))) = compile {
                        result.measurement.compile_s = Some(seconds);
                        result.measurement.cache_hit = Some(status == kernels::CacheStatus::Hit);
                    }
                    let busy = worker.busy_s - before;
                    (result, busy)
                }
            }
        })?;
        out.push(Some(result));
    }
    Ok(out)
}

type Prepared = (
    Result<QapSolveJob, String>,
    Option<solvers::qap::Instance>,
    Option<String>,
);

/// Several GPUs: one thread per worker measures while this thread compiles, writes the store
/// and hands out the next trial to whichever GPU is free. Each GPU still measures one trial at
/// a time; a trial is committed `started` before it is handed out.
fn run_gpus_in_parallel(
    t: &mut Tuning,
    jobs: &[TrialJob],
    prepared: Vec<Prepared>,
    settings: &crate::runner::gpu::GpuSettings,
    label: &str,
) -> Result<Vec<Option<TrialResult>>> {
    let Backend::Gpu { workers, .. } = &mut t.backend else {
        unreachable!("checked by the caller")
    };
    let mut workers = std::mem::take(workers);
    let timeout = settings.timeout;
    let mut out: Vec<Option<TrialResult>> = vec![None; jobs.len()];
    // (job, GPU slot, result, busy seconds), and the trials handed out: id, start, compile.
    type Done = (usize, usize, TrialResult, f64);
    type InFlight = HashMap<usize, (i64, Instant, Option<CompileResult>)>;
    let outcome = std::thread::scope(|scope| -> Result<()> {
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        let mut senders = Vec::new();
        let mut devices = Vec::new();
        for (slot, worker) in workers.iter_mut().enumerate() {
            let (tx, rx) = mpsc::channel::<(usize, QapSolveJob, CampaignInstance)>();
            senders.push(tx);
            devices.push(worker.device.clone());
            let done = done_tx.clone();
            scope.spawn(move || {
                for (k, mut wj, inst) in rx {
                    wj.gpu = worker.ordinal;
                    let before = worker.busy_s;
                    let result = worker.measure(&inst, wj, timeout);
                    if done
                        .send((k, slot, result, worker.busy_s - before))
                        .is_err()
                    {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let mut free: Vec<usize> = (0..senders.len()).rev().collect();
        let mut in_flight: InFlight = HashMap::new();
        let finish = |t: &mut Tuning,
                      in_flight: &mut InFlight,
                      out: &mut Vec<Option<TrialResult>>,
                      done: Done|
         -> Result<usize> {
            let (k, slot, mut result, busy) = done;
            let (id, started, compile) = in_flight.remove(&k).expect("a trial in flight");
            if let Some(Ok((seconds, status))) = compile {
                result.measurement.compile_s = Some(seconds);
                result.measurement.cache_hit = Some(status == kernels::CacheStatus::Hit);
            }
            t.store
                .finish_trial(id, result.status, &result.measurement, &result.log)?;
            t.clock.push(started, busy);
            t.progress.trial(&result);
            out[k] = Some(result);
            Ok(slot)
        };
        for (k, (job, (wj, qap, key))) in jobs.iter().zip(prepared).enumerate() {
            if t.budget.exhausted() {
                break;
            }
            t.progress.set_label(label);
            let inst = t.instances[job.instance].clone();
            let compile = match (&wj, qap, key) {
                (Ok(wj), Some(q), Some(key)) => Some(t.compiles.wait(key, wj.clone(), q)),
                _ => None,
            };
            let failure = match (&wj, &compile) {
                (Err(e), _) | (Ok(_), Some(Err(e))) => Some(e.clone()),
                _ => None,
            };
            let wj = match (wj, failure) {
                (_, Some(e)) => {
                    let result = trial(t, job, &devices[0], |_| {
                        (TrialResult::failed(TrialStatus::Failed, e), 0.0)
                    })?;
                    out[k] = Some(result);
                    continue;
                }
                (Ok(wj), None) => wj,
                (Err(_), None) => unreachable!("an error is a failure"),
            };
            if free.is_empty() {
                let done = done_rx.recv()?;
                free.push(finish(t, &mut in_flight, &mut out, done)?);
            }
            let slot = free.pop().expect("a free GPU");
            let id = t.store.begin_trial(
                t.campaign_id,
                job.point_id,
                job.instance_id,
                &devices[slot],
            )?;
            // Counted when handed out, so the trial budget holds with several in flight.
            t.budget.new_trials += 1;
            in_flight.insert(k, (id, Instant::now(), compile));
            senders[slot].send((k, wj, inst))?;
        }
        drop(senders);
        for done in done_rx {
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

/// Queues the kernels of `points` on the class's instances (speculation: the strategy may ask
/// for them next). Only on the GPU; points that cannot become jobs are skipped.
pub fn speculate(t: &mut Tuning, points: &[results::Point], members: &[usize]) {
    let Backend::Gpu { settings, .. } = &t.backend else {
        return;
    };
    let settings = settings.clone();
    for p in points {
        let Ok(r) = t.realise(p) else { continue };
        for &m in members {
            let inst = &t.instances[m];
            let solvers::family::Instance::Qap(q) = &inst.instance else {
                continue;
            };
            if let Ok(wj) = gpu_job(0, inst, &r, &settings) {
                let k = key(&wj, &inst.record.name);
                t.compiles.queue(k, wj, q.clone());
            }
        }
    }
}
