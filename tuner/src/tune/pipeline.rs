//! Running a batch of trials. On the GPU, tokio compiles the batch's kernels on blocking
//! threads (at most one per spare core) while the measuring worker works through the batch in
//! order, so the GPU rarely waits for NVRTC; each trial waits only for its own kernel.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use results::TrialStatus;

use super::{Backend, TrialJob, Tuning};
use crate::runner::gpu::{compile_ahead, job as gpu_job};
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
    let Backend::Gpu {
        settings,
        arch,
        optin_shared,
        ..
    } = &t.backend
    else {
        unreachable!("checked by run")
    };
    let (settings, arch, optin) = (settings.clone(), *arch, *optin_shared);
    // Worker jobs (or the reason a point cannot become one).
    let worker_jobs: Vec<Result<_, String>> = jobs
        .iter()
        .map(|job| {
            let r = job.realised.as_ref().map_err(Clone::clone)?;
            gpu_job(0, &t.instances[job.instance], r, &settings)
        })
        .collect();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(spare_cores())
        .build()?;
    // One compile per distinct kernel; later trials of the same kernel wait on the same task.
    let mut compiles: HashMap<String, usize> = HashMap::new();
    let mut handles = Vec::new();
    let limit = Arc::new(tokio::sync::Semaphore::new(spare_cores()));
    let mut compile_of = Vec::with_capacity(jobs.len());
    for (job, wj) in jobs.iter().zip(&worker_jobs) {
        let Ok(wj) = wj else {
            compile_of.push(None);
            continue;
        };
        let solvers::family::Instance::Qap(inst) = &t.instances[job.instance].instance else {
            compile_of.push(None);
            continue;
        };
        // The kernel depends on the instance (size, symmetry), its variant and its flags.
        let key = format!(
            "{}|{}|{}|{:?}|{:?}",
            wj.algorithm,
            t.instances[job.instance].record.name,
            wj.threads_per_block,
            wj.child_threads,
            wj.flags
        );
        let index = *compiles.entry(key).or_insert_with(|| {
            let wj = wj.clone();
            let inst = inst.clone();
            let limit = limit.clone();
            handles.push(runtime.spawn(async move {
                let _permit = limit.acquire_owned().await;
                tokio::task::spawn_blocking(move || compile_ahead(&wj, &inst, arch, optin))
                    .await
                    .unwrap_or_else(|e| Err(format!("compile task failed: {e}")))
            }));
            handles.len() - 1
        });
        compile_of.push(Some(index));
    }
    let mut compiled: Vec<Option<Result<(f64, kernels::CacheStatus), String>>> =
        (0..handles.len()).map(|_| None).collect();
    let mut handles: Vec<Option<_>> = handles.into_iter().map(Some).collect();

    let mut out = Vec::with_capacity(jobs.len());
    for (k, job) in jobs.iter().enumerate() {
        if t.budget.exhausted() {
            out.push(None);
            continue;
        }
        t.progress.set_label(label);
        let inst = t.instances[job.instance].clone();
        // Round-robin over the campaign's GPUs; each has its own worker, and a GPU measures
        // one trial at a time.
        let Backend::Gpu { workers, .. } = &t.backend else {
            unreachable!()
        };
        let slot = k % workers.len();
        let device = workers[slot].device.clone();
        let ordinal = workers[slot].ordinal;
        let compile = compile_of[k].map(|c| {
            if compiled[c].is_none() {
                let handle = handles[c].take().expect("each compile is awaited once");
                compiled[c] = Some(
                    runtime
                        .block_on(handle)
                        .unwrap_or_else(|e| Err(format!("compile task failed: {e}"))),
                );
            }
            compiled[c].clone().expect("set above")
        });
        let worker_job = worker_jobs[k].clone();
        let timeout = settings.timeout;
        let result = trial(t, job, &device, |t| {
            let Backend::Gpu { workers, .. } = &mut t.backend else {
                unreachable!()
            };
            match (worker_job, compile) {
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
    // Compiles of trials the budget cut off are not waited for.
    runtime.shutdown_background();
    Ok(out)
}

fn spare_cores() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
        .max(1)
}
