//! The measuring worker process (`mats worker`): reads requests from stdin, answers on stdout.
//!
//! A fault in a kernel poisons the CUDA context of the whole process; the worker reports it as
//! `crashed` and exits, and the client starts a fresh one. Anything the worker prints besides
//! responses goes to stderr, so stdout stays a clean JSON-lines channel.

use std::collections::HashMap;
use std::io::{BufRead, Write};

use cudarc::driver::sys::cudaError_enum as E;
use kernels::gpu::Gpu;
use kernels::{KernelCache, KernelError};

use super::power::PowerMeter;
use solvers::gpu::{GpuRun, PreparedRun};

use super::protocol::{
    Job, MeasureJob, MeasureResult, Outcome, Request, Response, SolveJob, SolveResult,
};

/// Exit status of a worker that lost its CUDA context.
pub const CRASH_EXIT: i32 = 70;

struct Open {
    gpu: Gpu,
    meter: Result<PowerMeter, String>,
}

/// Serves requests until stdin closes.
pub fn serve() -> anyhow::Result<()> {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    let mut open: HashMap<usize, Open> = HashMap::new();
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let (id, outcome) = match serde_json::from_str::<Request>(&line) {
            Ok(request) => (request.id, handle(request.job, &mut open)),
            // Answered under the request's own id where it has one (a job this worker's
            // version cannot read): the client waits for that id, and took an answer under 0
            // for no answer at all ("no answer within N s").
            Err(e) => (
                serde_json::from_str::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id")?.as_u64())
                    .unwrap_or(0),
                Outcome::Failed {
                    message: format!("malformed request: {e}"),
                },
            ),
        };
        let crashed = matches!(outcome, Outcome::Crashed { .. });
        serde_json::to_writer(&mut stdout, &Response { id, outcome })?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
        if crashed {
            // The context is unusable and dropping CUDA objects may fail or hang: leave now.
            std::process::exit(CRASH_EXIT);
        }
    }
    Ok(())
}

fn handle(job: Job, open: &mut HashMap<usize, Open>) -> Outcome {
    match job {
        Job::Ping => Outcome::Pong {
            pid: std::process::id(),
        },
        Job::Measure(job) => match measure(job, open) {
            Ok(result) => Outcome::Measured(Box::new(result)),
            Err(e) if is_sticky(&e) => Outcome::Crashed {
                message: e.to_string(),
            },
            Err(e) => Outcome::Failed {
                message: e.to_string(),
            },
        },
        Job::Prepare(job) => outcome(prepare(job, open), |()| Outcome::Prepared),
        Job::Solve(job) => outcome(solve(job, open), |r| Outcome::Solved(Box::new(r))),
    }
}

fn open_gpu(ordinal: usize, open: &mut HashMap<usize, Open>) -> Result<&mut Open, KernelError> {
    Ok(match open.entry(ordinal) {
        std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
        std::collections::hash_map::Entry::Vacant(entry) => {
            let gpu = Gpu::open(ordinal)?;
            let meter = PowerMeter::of_gpu(&gpu);
            entry.insert(Open { gpu, meter })
        }
    })
}

fn cache_for(dir: &Option<std::path::PathBuf>) -> KernelCache {
    KernelCache::new(dir.clone().unwrap_or_else(KernelCache::default_dir))
}

/// A job's result as the worker answers it: a lost context is a crash, any other error a
/// failure the worker survives.
fn outcome<T>(result: Result<T, KernelError>, done: impl FnOnce(T) -> Outcome) -> Outcome {
    match result {
        Ok(value) => done(value),
        Err(e) if is_sticky(&e) => Outcome::Crashed {
            message: e.to_string(),
        },
        Err(e) => Outcome::Failed {
            message: e.to_string(),
        },
    }
}

/// The instance a solver job names.
fn instance_of(job: &SolveJob) -> Result<solvers::family::Instance, KernelError> {
    solvers::family::load(&job.instance, Some(job.config.family()), job.index)
        .map_err(|e| KernelError::InvalidConfig(format!("{}: {e}", job.instance.display())))
}

fn prepare(job: SolveJob, open: &mut HashMap<usize, Open>) -> Result<(), KernelError> {
    let inst = instance_of(&job)?;
    let Open { gpu, .. } = open_gpu(job.gpu, open)?;
    job.config.prepare(gpu, &cache_for(&job.cache_dir), &inst)?;
    Ok(())
}

fn solve(job: SolveJob, open: &mut HashMap<usize, Open>) -> Result<SolveResult, KernelError> {
    job.settings.check().map_err(KernelError::InvalidConfig)?;
    let inst = instance_of(&job)?;
    let Open { gpu, meter } = open_gpu(job.gpu, open)?;
    let cache = cache_for(&job.cache_dir);
    let mut prepared = job.config.prepare(gpu, &cache, &inst)?;
    if !job.limit.is_fixed_work() {
        let mut result = budget_run(gpu, meter.as_ref(), prepared.as_mut(), &job)?;
        // A throttled run is measured again (up to REMEASURE times), not used as it is.
        while result.measurement.throttled && result.remeasured < REMEASURE {
            let again = budget_run(gpu, meter.as_ref(), prepared.as_mut(), &job)?;
            result = SolveResult {
                remeasured: result.remeasured + 1,
                measure_s: result.measure_s + again.measure_s,
                ..again
            };
        }
        return Ok(result);
    }
    let mut workload = super::workload::SolveRuns::new(prepared, job.seed, job.limit.fixed_work());
    let started = std::time::Instant::now();
    let mut remeasured = 0;
    let mut measurement = loop {
        let m = super::measure(gpu, &mut workload, meter.as_ref().ok(), &job.settings)?;
        if !m.throttled || remeasured == REMEASURE {
            break m;
        }
        remeasured += 1;
    };
    let measure_s = started.elapsed().as_secs_f64();
    measurement.power_note = meter.as_ref().err().cloned();
    let run = workload
        .last
        .take()
        .ok_or_else(|| KernelError::InvalidConfig("no run was measured".into()))?;
    let mut result = solve_result(gpu, run, measurement, measure_s, None, None);
    result.remeasured = remeasured;
    Ok(result)
}

/// How often a throttled measurement (NVML throttle reasons other than idle) is repeated
/// before the last one is kept, flagged.
const REMEASURE: u32 = 2;

/// One production run with a wall-clock budget or a target, measured as itself (no warm-up:
/// the module is loaded and the buffers are on the GPU, which is what a user's run has too).
fn budget_run(
    gpu: &Gpu,
    meter: Result<&super::power::PowerMeter, &String>,
    prepared: &mut dyn PreparedRun,
    job: &SolveJob,
) -> Result<SolveResult, KernelError> {
    let options = solvers::run::RunOptions {
        seed: job.seed,
        threads: 1,
        budget: job.limit.budget(),
    };
    let started = std::time::Instant::now();
    let (run, budget) = super::budget_run(meter.ok(), &job.settings.observers, || {
        prepared.run(gpu, &options)
    })?;
    let measure_s = started.elapsed().as_secs_f64();
    let measurement = super::Measurement {
        timing: super::Timing::from_runs(vec![budget.wall_s * 1000.0]),
        energy: None,
        before: budget.before.clone(),
        after: budget.after.clone(),
        throttled: budget.throttled,
        power_note: meter.err().cloned(),
    };
    let target_s = super::protocol::target_seconds(&options.budget);
    Ok(solve_result(
        gpu,
        run,
        measurement,
        measure_s,
        Some(budget),
        target_s,
    ))
}

/// What a solve job returns, from the run whose solution it reports.
fn solve_result(
    gpu: &Gpu,
    run: GpuRun,
    measurement: super::Measurement,
    measure_s: f64,
    budget_run: Option<super::BudgetRun>,
    target_s: Option<f64>,
) -> SolveResult {
    SolveResult {
        device: gpu.info.clone(),
        cache: run.cache,
        compile_seconds: run.compile_seconds,
        resources: run.resources,
        attributes: run.attributes,
        launch: run.launch,
        entry: run.entry,
        measurement,
        solution: run.outcome.solution,
        objective: run.outcome.objective,
        launches: run.launches,
        measure_s,
        iterations: run.outcome.iterations,
        moves: run.outcome.evaluations,
        kernel_s: run.kernel_seconds,
        budget_run,
        target_s,
        remeasured: 0,
    }
}

fn measure(job: MeasureJob, open: &mut HashMap<usize, Open>) -> Result<MeasureResult, KernelError> {
    job.settings.check().map_err(KernelError::InvalidConfig)?;
    if job.variant.source != job.workload.source() {
        return Err(KernelError::InvalidVariant(format!(
            "workload {:?} runs {} but the variant compiles {}",
            job.workload,
            job.workload.source(),
            job.variant.source
        )));
    }
    let Open { gpu, meter } = open_gpu(job.gpu, open)?;
    let cache = cache_for(&job.cache_dir);
    let (compiled, status) = cache.get_or_compile(&job.variant)?;
    let mut workload = job.workload.prepare(gpu, &compiled)?;
    let mut measurement =
        super::measure(gpu, workload.as_mut(), meter.as_ref().ok(), &job.settings)?;
    measurement.power_note = meter.as_ref().err().cloned();
    let launch = workload.launch();
    let blocks_per_sm = workload.kernel().blocks_per_sm(
        launch.block.0 * launch.block.1 * launch.block.2,
        launch.shared_bytes,
    )?;
    let verified = workload.verify(gpu);
    Ok(MeasureResult {
        device: gpu.info.clone(),
        cache: status,
        compile_seconds: compiled.compile_seconds,
        resources: compiled.resources.clone(),
        attributes: workload.kernel().attributes,
        launch,
        blocks_per_sm,
        measurement,
        valid: verified.is_ok(),
        invalid_reason: verified.err(),
    })
}

/// Errors after which the CUDA context cannot be used again.
fn is_sticky(error: &KernelError) -> bool {
    let KernelError::Driver { source, .. } = error else {
        return false;
    };
    matches!(
        source.0,
        E::CUDA_ERROR_ILLEGAL_ADDRESS
            | E::CUDA_ERROR_LAUNCH_FAILED
            | E::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | E::CUDA_ERROR_MISALIGNED_ADDRESS
            | E::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | E::CUDA_ERROR_INVALID_PC
            | E::CUDA_ERROR_HARDWARE_STACK_ERROR
            | E::CUDA_ERROR_LAUNCH_TIMEOUT
            | E::CUDA_ERROR_ASSERT
            | E::CUDA_ERROR_CONTEXT_IS_DESTROYED
            | E::CUDA_ERROR_ECC_UNCORRECTABLE
            | E::CUDA_ERROR_UNKNOWN
    )
}
