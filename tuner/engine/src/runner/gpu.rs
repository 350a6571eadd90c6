//! The GPU runner: one measuring worker process per GPU ([`measure::client`]), fed
//! solve jobs of any family with GPU kernels ([`solvers::gpu::GpuConfig`]); NVRTC compiles of the next jobs run ahead on CPU threads into the shared
//! disk cache, so the worker finds its kernel compiled when the job reaches it.

use std::path::PathBuf;
use std::time::Duration;

use kernels::CacheStatus;
use results::{Measurement, TrialStatus};

use super::{rescore, Realised, TrialResult};
use crate::campaign::config::RunMode;
use crate::campaign::instances::CampaignInstance;
use measure::client::WorkerClient;
use measure::device_lock::DeviceLock;
use measure::protocol::{Job, Outcome, SolveJob, SolveResult};
use measure::MeasureSettings;

/// What every job of a campaign shares.
#[derive(Debug, Clone)]
pub struct GpuSettings {
    pub measure: MeasureSettings,
    /// Fixed work: iterations of a production run (the variant's default when absent).
    pub iterations: Option<u64>,
    /// What a production run is (fixed work, a budget, or a target).
    pub mode: RunMode,
    pub cache_dir: PathBuf,
    /// A job that takes longer is treated as a hang: the worker is killed and replaced.
    pub timeout: Duration,
}

/// The GPU configuration a realised point asks for on an instance's family. Tuning, `solve
/// --tuned` and exports all read points here.
pub fn config(
    family: solvers::family::Family,
    r: &Realised,
) -> Result<solvers::gpu::GpuConfig, String> {
    solvers::gpu::GpuConfig::from_point(family, r)
}

/// Builds the worker job of a realised point on an instance.
pub fn job(
    gpu: usize,
    inst: &CampaignInstance,
    r: &Realised,
    settings: &GpuSettings,
    seed: u64,
) -> Result<SolveJob, String> {
    let config = config(inst.instance.family(), r)?;
    let mut limit = super::run_limit(&settings.mode, inst)?;
    if limit.is_fixed_work() {
        // A point's own iteration count wins over the campaign's production-run length; a
        // budgeted run ends by its clock or target only.
        limit.iterations = match r.count::<u64>("iterations")? {
            Some(i) => Some(i),
            None => settings.iterations,
        };
    }
    Ok(SolveJob {
        gpu,
        instance: inst.path.clone(),
        index: None,
        config,
        seed,
        limit,
        settings: settings.measure.clone(),
        cache_dir: Some(settings.cache_dir.clone()),
    })
}

/// One GPU with its worker.
pub struct GpuWorker {
    pub ordinal: usize,
    /// Name and UUID-free label for the store ("NVIDIA H100 80GB HBM3 #0").
    pub device: String,
    client: WorkerClient,
    /// This GPU's ownership lock, taken around each measurement.
    lock: Option<DeviceLock>,
    /// Seconds the GPU spent measuring (warm-up, timed runs, energy window), summed.
    pub busy_s: f64,
}

impl GpuWorker {
    pub fn new(
        exe: PathBuf,
        ordinal: usize,
        device: String,
        lock: Option<DeviceLock>,
    ) -> GpuWorker {
        GpuWorker {
            ordinal,
            device,
            client: WorkerClient::new(exe),
            lock,
            busy_s: 0.0,
        }
    }

    /// Measures a job; the solution is re-scored on the CPU.
    pub fn measure(
        &mut self,
        inst: &CampaignInstance,
        job: SolveJob,
        timeout: Duration,
    ) -> TrialResult {
        // No other process measures on this GPU until the lease is dropped.
        let _lease = match self.lock.as_mut().map(DeviceLock::lease).transpose() {
            Ok(lease) => lease,
            Err(e) => return TrialResult::failed(TrialStatus::Failed, format!("{e:#}")),
        };
        match self.client.request(Job::Solve(job), timeout) {
            Outcome::Solved(result) => {
                self.busy_s += result.measure_s;
                convert(inst, &result)
            }
            Outcome::Failed { message } => TrialResult::failed(TrialStatus::Failed, message),
            Outcome::Crashed { message } => TrialResult::failed(TrialStatus::Crashed, message),
            other => TrialResult::failed(
                TrialStatus::Failed,
                format!("unexpected worker answer {other:?}"),
            ),
        }
    }
}

fn convert(inst: &CampaignInstance, r: &SolveResult) -> TrialResult {
    let m = &r.measurement;
    let t = &m.timing;
    let state = m.after.as_ref().or(m.before.as_ref());
    let main = r
        .resources
        .iter()
        // ptxas reports every function of the module.
        .find(|res| res.function == r.entry)
        .or(r.resources.first());
    let mut throttle: Vec<String> = Vec::new();
    for s in [&m.before, &m.after].into_iter().flatten() {
        throttle.extend(s.throttle_reasons.iter().cloned());
    }
    if let Some(e) = &m.energy {
        throttle.extend(e.samples.throttle_reasons.iter().cloned());
    }
    throttle.sort();
    throttle.dedup();
    if let Some(b) = &r.budget_run {
        throttle.extend(b.throttle_reasons.iter().cloned());
        throttle.sort();
        throttle.dedup();
    }
    let budget = r.budget_run.as_ref();
    let mut measurement = Measurement {
        time_s: Some(t.median_ms / 1000.0),
        time_spread: Some((t.max_ms - t.min_ms) / t.median_ms.max(1e-12)),
        power_w: budget.map_or_else(
            || m.energy.as_ref().and_then(|e| e.average_power_w),
            |b| b.power_w,
        ),
        energy_j: budget.map_or_else(
            || m.energy.as_ref().and_then(|e| e.energy_per_run_j),
            |b| b.energy_j,
        ),
        run_s: Some(budget.map_or(t.median_ms / 1000.0, |b| b.wall_s)),
        kernel_s: Some(r.kernel_s),
        measure_s: Some(r.measure_s),
        target_s: r.target_s,
        iterations: Some(r.iterations),
        moves: Some(r.moves),
        launches: Some(u64::from(r.launches)),
        sm_clock_mhz: state.and_then(|s| s.sm_clock_mhz),
        mem_clock_mhz: state.and_then(|s| s.memory_clock_mhz),
        temperature_c: state.and_then(|s| s.temperature_c),
        throttle: Some(throttle.join(",")),
        registers: Some(r.attributes.registers),
        spills: main.map(|res| res.spill_store_bytes + res.spill_load_bytes),
        shared_bytes: Some(r.launch.shared_bytes + r.attributes.static_shared_bytes),
        compile_s: Some(r.compile_seconds),
        cache_hit: Some(r.cache == CacheStatus::Hit),
        objective: None,
        gap_percent: None,
    };
    let mut log = format!(
        "{} on {} ({}), {} launches/run{}{}",
        inst.record.name,
        r.device.name,
        r.launch,
        r.launches,
        // Only an energy window measures it (a budget run has none): never print a 0 for it.
        m.energy
            .as_ref()
            .map(|e| format!(", kernel share {:.3}", e.kernel_share))
            .unwrap_or_default(),
        m.power_note
            .as_ref()
            .map(|n| format!("; power: {n}"))
            .unwrap_or_default()
    );
    if r.remeasured > 0 {
        log.push_str(&format!(
            "; measured again {} time(s): throttled",
            r.remeasured
        ));
    }
    if m.throttled {
        log.push_str("; THROTTLED during the measurement");
    }
    match rescore(inst, &r.solution, r.objective, &mut measurement) {
        Ok(()) => TrialResult {
            status: TrialStatus::Ok,
            measurement,
            log,
        },
        Err(e) => TrialResult {
            status: TrialStatus::Invalid,
            measurement,
            log: format!("{e}; {log}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::Value;
    use solvers::family::Family;
    use solvers::gpu::GpuConfig;

    fn realised(values: &[(&str, Value)], flags: &[&str]) -> Realised {
        Realised {
            flags: flags.iter().map(|f| f.to_string()).collect(),
            defines: Vec::new(),
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    fn instance(name: &str) -> CampaignInstance {
        let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/qap"))
            .join(name);
        let instance = solvers::family::load(&path, None, None).unwrap();
        CampaignInstance {
            record: results::InstanceRecord {
                name: instance.name().into(),
                source: path.display().to_string(),
                family: "qap".into(),
                class: instance.class(),
                features: serde_json::Value::Null,
                best_known: None,
            },
            path,
            instance,
        }
    }

    fn settings() -> GpuSettings {
        GpuSettings {
            measure: MeasureSettings::default(),
            iterations: Some(50),
            mode: RunMode::FixedWork,
            cache_dir: PathBuf::from("/nonexistent"),
            timeout: Duration::from_secs(1),
        }
    }

    /// The parent builds jobs from points and the worker reads the job's configuration: both
    /// must describe the same configuration as a bundle's point does.
    #[test]
    fn a_point_becomes_the_same_configuration_in_the_job_and_the_worker() {
        let r = realised(
            &[
                ("variant", Value::Text("2opt-dyn".into())),
                ("solutions", Value::Int(2048)),
                ("threads", Value::Int(256)),
                ("child_threads", Value::Int(128)),
            ],
            &["--ptxas-options=-O2", "-maxrregcount=32"],
        );
        let job = job(1, &instance("tai12a.dat"), &r, &settings(), 3).unwrap();
        assert_eq!((job.gpu, job.seed, job.limit.iterations), (1, 3, Some(50)));
        let from_point = config(Family::Qap, &r).unwrap();
        // The worker reads the job's typed configuration as it travels (JSON), not a copy.
        let travelled: SolveJob =
            serde_json::from_str(&serde_json::to_string(&job).unwrap()).unwrap();
        assert_eq!(travelled.config, from_point);
        let GpuConfig::Qap(p) = &from_point else {
            panic!("a qap point became {from_point:?}")
        };
        assert_eq!(p.child_threads, 128);
        assert_eq!(p.flags, ["--ptxas-options=-O2", "-maxrregcount=32"]);
        // A point's own iterations win over the campaign's production-run length.
        let mut r2 = r.clone();
        r2.values.insert("iterations".into(), Value::Int(7));
        let j2 = super::job(1, &instance("tai12a.dat"), &r2, &settings(), 3).unwrap();
        assert_eq!(j2.limit.iterations, Some(7));
        // A budgeted run ends by its clock alone.
        let budget = GpuSettings {
            mode: RunMode::Budget { budget_s: 0.5 },
            ..settings()
        };
        let j3 = super::job(1, &instance("tai12a.dat"), &r2, &budget, 3).unwrap();
        assert_eq!(
            (j3.limit.iterations, j3.limit.time_limit_s),
            (None, Some(0.5))
        );
    }

    /// A pfsp point becomes a pfsp configuration through the same path (no QAP types).
    #[test]
    fn a_pfsp_point_becomes_a_pfsp_job() {
        let r = realised(
            &[
                ("variant", Value::Text("ig-block".into())),
                ("threads", Value::Int(128)),
                ("destruction", Value::Int(6)),
                ("blocks", Value::Int(264)),
            ],
            &[],
        );
        let job = job(0, &pfsp_instance(), &r, &settings(), 1).unwrap();
        let GpuConfig::Pfsp(p) = &job.config else {
            panic!("a pfsp point became {:?}", job.config)
        };
        assert_eq!(
            (
                p.algorithm.name(),
                p.threads_per_block,
                p.destruction,
                p.blocks
            ),
            ("ig-block", 128, 6, 264)
        );
        let target = solvers::gpu::CompileTarget {
            arch: kernels::Arch(90),
            optin_shared: 227 * 1024,
        };
        let v = job
            .config
            .kernel_variant(&pfsp_instance().instance, target)
            .unwrap();
        assert_eq!(v.source, "pfsp/ig-block");
        assert_eq!(v.defines.get("IG_THREADS").map(String::as_str), Some("128"));
    }

    /// A hwsw point's launch and switches become the kernels' defines.
    #[test]
    fn a_hwsw_point_becomes_a_hwsw_configuration() {
        let r = realised(
            &[
                ("variant", Value::Text("fused".into())),
                ("threads", Value::Int(256)),
                ("items", Value::Int(4)),
                ("zero_copy", Value::Int(1)),
                ("tabu_length", Value::Int(9)),
            ],
            &[],
        );
        let c = config(Family::Hwsw, &r).unwrap();
        let GpuConfig::Hwsw(p) = &c else {
            panic!("a hwsw point became {c:?}")
        };
        assert_eq!(
            (p.threads_per_block, p.items, p.zero_copy, p.tabu_length),
            (256, 4, true, 9)
        );
        let path = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../data/hwsw/crc32-synthetic.hwsw"
        ));
        let inst = solvers::family::load(&path, None, None).unwrap();
        let target = solvers::gpu::CompileTarget {
            arch: kernels::Arch(90),
            optin_shared: 227 * 1024,
        };
        let v = c.kernel_variant(&inst, target).unwrap();
        assert_eq!(
            v.defines.get("HWSW_ZERO_COPY").map(String::as_str),
            Some("1")
        );
        assert_eq!(v.defines.get("HWSW_ITEMS").map(String::as_str), Some("4"));
        let mut bad = r.clone();
        bad.values
            .insert("zero_copy".into(), Value::Text("maybe".into()));
        assert!(config(Family::Hwsw, &bad)
            .unwrap_err()
            .contains("zero_copy"));
    }

    fn pfsp_instance() -> CampaignInstance {
        let mut i = instance("tai12a.dat");
        let path = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../data/pfsp/tai20_5.txt"
        ));
        i.instance = solvers::family::load(&path, None, Some(1)).unwrap();
        i.path = path;
        i
    }

    #[test]
    fn points_that_cannot_run_on_the_gpu_say_why() {
        // A parameter the point leaves out keeps the family's default (as `mats solve` does
        // with a flag left out).
        let r = realised(&[("variant", Value::Text("2opt".into()))], &[]);
        let defaults = solvers::qap::gpu::GpuParams::new(solvers::qap::gpu::GpuAlgorithm::TwoOpt);
        assert_eq!(
            config(Family::Qap, &r).unwrap().shape(),
            (defaults.solutions, defaults.threads_per_block)
        );
        let r = realised(
            &[
                ("variant", Value::Text("3opt".into())),
                ("solutions", Value::Int(512)),
                ("threads", Value::Int(128)),
            ],
            &[],
        );
        assert!(config(Family::Qap, &r).unwrap_err().contains("3opt"));
        // A qap variant on a pfsp instance names the family's variants.
        let qap_point = realised(
            &[
                ("variant", Value::Text("2opt".into())),
                ("solutions", Value::Int(512)),
                ("threads", Value::Int(128)),
            ],
            &[],
        );
        let e = job(0, &pfsp_instance(), &qap_point, &settings(), 1).unwrap_err();
        assert!(e.contains("tabu-prefix"), "{e}");
        // A qap variant on a tsp point names tsp's construction variants.
        let e = config(Family::Tsp, &qap_point).unwrap_err();
        assert!(e.contains("data-compressed"), "{e}");
        let e = realised(&[("variant", Value::Text("ig-block".into()))], &[]);
        let mut e = e;
        e.values.insert("threads".into(), Value::Int(-4));
        let e = config(Family::Pfsp, &e).unwrap_err();
        assert!(e.contains("threads"), "{e}");
    }
}
