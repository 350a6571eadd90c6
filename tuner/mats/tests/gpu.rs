//! GPU runtime on a real GPU: device listing, measurement in a worker, dynamic parallelism,
//! launch errors, and fault isolation. On a machine without a GPU every test says it skipped.

use std::time::Duration;

use kernels::gpu::{self, Gpu};
use kernels::Variant;
use measure::client::WorkerClient;
use measure::protocol::{Job, MeasureJob, Outcome};
use measure::workload::WorkloadSpec;
use measure::MeasureSettings;

/// The GPU's info, or None after printing why the test is skipped.
fn gpu_or_skip(test: &str) -> Option<kernels::gpu::DeviceInfo> {
    gpu::test_gpu_or_skip(test).then(|| Gpu::open(0).expect("GPU 0 opens").info)
}

fn job(info: &kernels::gpu::DeviceInfo, workload: WorkloadSpec, cache: &std::path::Path) -> Job {
    Job::Measure(MeasureJob {
        gpu: 0,
        variant: Variant::new(workload.source(), info.arch),
        workload,
        settings: MeasureSettings {
            warmup_runs: 1,
            warmup_s: 0.0,
            timed_runs: 5,
            energy_window_s: 0.3,
            power_sample_hz: 50.0,
            ..MeasureSettings::default()
        },
        cache_dir: Some(cache.to_path_buf()),
    })
}

const TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn devices_json_lists_the_gpu() {
    let Some(info) = gpu_or_skip("devices_json_lists_the_gpu") else {
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(["devices", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["driver_available"], true);
    let first = &report["devices"][0];
    assert_eq!(first["name"], info.name.as_str());
    assert!(first["sm_count"].as_u64().unwrap() > 0);
    println!("{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn worker_measures_and_survives_a_fault() {
    let Some(info) = gpu_or_skip("worker_measures_and_survives_a_fault") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let mut client = WorkerClient::new(env!("CARGO_BIN_EXE_mats"));
    assert!(matches!(
        client.request(Job::Ping, TIMEOUT),
        Outcome::Pong { .. }
    ));
    let busy = WorkloadSpec::Busy {
        blocks: info.sm_count * 4,
        threads: 256,
        iterations: 2000,
    };

    let first = match client.request(job(&info, busy.clone(), cache.path()), TIMEOUT) {
        Outcome::Measured(r) => r,
        other => panic!("busy: {other:?}"),
    };
    assert!(first.valid, "{:?}", first.invalid_reason);
    assert_eq!(first.cache, kernels::CacheStatus::Miss);
    let m = &first.measurement;
    assert!(m.timing.median_ms > 0.0 && m.timing.runs_ms.len() == 5);
    let window = m.energy.as_ref().expect("energy window measured");
    assert!(window.wall_s >= 0.3 && window.runs > 1);
    assert!(
        window.kernel_share > 0.0 && window.kernel_share <= 1.0 + 1e-6,
        "{}",
        window.kernel_share
    );
    println!("busy: {}", serde_json::to_string(&first).unwrap());

    match client.request(job(&info, WorkloadSpec::Fault, cache.path()), TIMEOUT) {
        Outcome::Crashed { message } => {
            assert!(
                message.to_lowercase().contains("illegal") || message.contains("exit"),
                "{message}"
            );
            println!("fault: crashed as expected: {message}");
        }
        other => panic!("the fault probe must crash its worker: {other:?}"),
    }
    match client.request(job(&info, busy, cache.path()), TIMEOUT) {
        Outcome::Measured(r) => {
            assert!(r.valid);
            assert_eq!(
                r.cache,
                kernels::CacheStatus::Hit,
                "second compile of the same variant hits the disk cache"
            );
        }
        other => panic!("busy after the fault: {other:?}"),
    }
    assert_eq!(client.started, 2, "exactly one restart");
}

#[test]
fn dynamic_parallelism_links_and_runs() {
    let Some(info) = gpu_or_skip("dynamic_parallelism_links_and_runs") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let mut client = WorkerClient::new(env!("CARGO_BIN_EXE_mats"));
    match client.request(
        job(&info, WorkloadSpec::Dynamic { parents: 300 }, cache.path()),
        TIMEOUT,
    ) {
        Outcome::Measured(r) => assert!(r.valid, "{:?}", r.invalid_reason),
        other => panic!("dynamic: {other:?}"),
    }
}

#[test]
fn oversized_launch_fails_with_kernel_and_limit_named() {
    let Some(info) = gpu_or_skip("oversized_launch_fails_with_kernel_and_limit_named") else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let mut client = WorkerClient::new(env!("CARGO_BIN_EXE_mats"));
    let busy = WorkloadSpec::Busy {
        blocks: 1,
        threads: 2048,
        iterations: 1,
    };
    match client.request(job(&info, busy, cache.path()), TIMEOUT) {
        Outcome::Failed { message } => {
            assert!(
                message.contains("probe/busy::busy") && message.contains("2048 threads"),
                "{message}"
            )
        }
        other => panic!("expected a failure naming the limit: {other:?}"),
    }
    // A failure (unlike a crash) keeps the worker.
    assert!(matches!(
        client.request(Job::Ping, TIMEOUT),
        Outcome::Pong { .. }
    ));
    assert_eq!(client.started, 1);
}

#[test]
fn worker_rejects_malformed_requests_without_dying() {
    // Needs no GPU: the protocol layer alone.
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mats"))
        .arg("worker")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{{not json").unwrap();
    writeln!(stdin, "{{\"id\":7,\"job\":{{\"job\":\"ping\"}}}}").unwrap();
    // A job this version cannot read is answered under its own id (the client waits for it).
    writeln!(
        stdin,
        "{{\"id\":9,\"job\":{{\"job\":\"from-a-newer-mats\"}}}}"
    )
    .unwrap();
    drop(stdin);
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(Result::unwrap)
        .collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[2].contains("\"id\":9") && lines[2].contains("malformed request"),
        "{}",
        lines[2]
    );
    assert!(
        lines[0].contains("\"failed\"") && lines[0].contains("malformed request"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("\"id\":7") && lines[1].contains("pong"),
        "{}",
        lines[1]
    );
}

fn repo_file(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// Every GPU variant of every family (TSP: the three constructions and the focused colony),
/// through the family-neutral workload, keeps working until a time limit and stops soon after
/// it (the budget that gap@budget trials and tuned bundles run at: a variant that stopped
/// after its default iterations, or ran on past the limit, would compare unequal budgets), and
/// answers with a start solution when no time is left. Every answer is re-scored on the CPU.
#[test]
fn every_gpu_variant_honours_a_time_limit() {
    use solvers::gpu::GpuConfig;
    if gpu_or_skip("every_gpu_variant_honours_a_time_limit").is_none() {
        return;
    }
    let gpu = Gpu::open(0).expect("GPU 0 opens");
    let cache = kernels::KernelCache::new(tempfile::tempdir().unwrap().path());
    let qap = solvers::family::load(&repo_file("data/qap/tai40a.dat"), None, None).unwrap();
    let pfsp = solvers::family::load(&repo_file("data/taillard/ta051.txt"), None, None).unwrap();
    let hwsw =
        solvers::family::load(&repo_file("data/hwsw/crc32-synthetic.hwsw"), None, None).unwrap();
    let mut configs: Vec<(GpuConfig, &solvers::family::Instance)> = Vec::new();
    for a in solvers::qap::gpu::GpuAlgorithm::ALL {
        let mut p = solvers::qap::gpu::GpuParams::new(a);
        if a.thread_per_solution() {
            p.solutions = 1024;
            p.threads_per_block = 64;
        }
        configs.push((GpuConfig::Qap(p), &qap));
    }
    for a in solvers::pfsp::gpu::GpuAlgorithm::ALL {
        configs.push((
            GpuConfig::Pfsp(solvers::pfsp::gpu::GpuParams::new(a)),
            &pfsp,
        ));
    }
    for a in solvers::hwsw::gpu::GpuAlgorithm::ALL {
        configs.push((
            GpuConfig::Hwsw(solvers::hwsw::gpu::GpuParams::new(a)),
            &hwsw,
        ));
    }
    let tsp = solvers::family::load(&repo_file("data/tsp/berlin52.tsp"), None, None).unwrap();
    for c in solvers::tsp::gpu::Construction::ALL {
        configs.push((GpuConfig::Tsp(solvers::tsp::gpu::GpuParams::new(c)), &tsp));
    }
    configs.push((
        GpuConfig::Tsp(solvers::tsp::gpu::GpuParams::focused()),
        &tsp,
    ));
    let limit = 0.4;
    for (config, inst) in configs {
        let name = format!("{} {}", config.family(), config.variant_name());
        let mut prepared = config
            .prepare(&gpu, &cache, inst)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let options = solvers::run::RunOptions {
            seed: 3,
            threads: 1,
            budget: solvers::run::Budget::time_limit(Duration::from_secs_f64(limit)),
        };
        let started = std::time::Instant::now();
        let run = prepared
            .run(&gpu, &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let wall = started.elapsed().as_secs_f64();
        println!(
            "{name}: {wall:.3} s, {} launches, {} iterations, objective {}",
            run.launches, run.outcome.iterations, run.outcome.objective
        );
        // GPTS (hwsw separate/compact/fused) also ends after `stall` iterations without
        // improvement, as the paper's STS does, so it may stop before the limit.
        let may_stop_early = matches!(&config, GpuConfig::Hwsw(p) if !p.algorithm.is_multi());
        let lowest = if may_stop_early { 0.0 } else { 0.9 * limit };
        assert!(
            (lowest..limit + 0.5).contains(&wall),
            "{name}: a {limit} s limit took {wall:.3} s"
        );
        assert_eq!(
            inst.objective(&run.outcome.solution).unwrap(),
            run.outcome.objective,
            "{name}: the GPU's objective is the CPU's"
        );
        // A limit already spent (`mats solve` passes zero when compiling took it all): no
        // launch, yet a start solution whose cost is its own (gpts-multi once reported its
        // searches' unset bests, i64::MAX, and the run failed its re-score).
        let spent = solvers::run::RunOptions {
            budget: solvers::run::Budget::time_limit(Duration::ZERO),
            ..options
        };
        let run = prepared
            .run(&gpu, &spent)
            .unwrap_or_else(|e| panic!("{name} with no time left: {e}"));
        assert_eq!(
            inst.objective(&run.outcome.solution).unwrap(),
            run.outcome.objective,
            "{name} with no time left: the objective is the CPU's"
        );
    }
}

/// A solve job of each family travels to the worker and back (the tuner's path): a budgeted
/// run answers with its solution, work counters and main kernel.
#[test]
fn the_worker_solves_jobs_of_every_gpu_family() {
    use measure::protocol::{RunLimit, SolveJob};
    if gpu_or_skip("the_worker_solves_jobs_of_every_gpu_family").is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let mut client = WorkerClient::new(env!("CARGO_BIN_EXE_mats"));
    let jobs = [
        (
            "data/qap/tai20a.dat",
            solvers::gpu::GpuConfig::Qap(solvers::qap::gpu::GpuParams::new(
                solvers::qap::gpu::GpuAlgorithm::RotsBlock,
            )),
        ),
        (
            "data/taillard/ta051.txt",
            solvers::gpu::GpuConfig::Pfsp(solvers::pfsp::gpu::GpuParams::new(
                solvers::pfsp::gpu::GpuAlgorithm::IgBlock,
            )),
        ),
    ];
    for (file, config) in jobs {
        let path = repo_file(file);
        let job = SolveJob {
            gpu: 0,
            instance: path.clone(),
            index: None,
            config,
            seed: 1,
            limit: RunLimit {
                time_limit_s: Some(0.3),
                ..RunLimit::default()
            },
            settings: MeasureSettings::default(),
            cache_dir: Some(cache.path().to_path_buf()),
        };
        let r = match client.request(Job::Solve(job), TIMEOUT) {
            Outcome::Solved(r) => r,
            other => panic!("{file}: {other:?}"),
        };
        let inst = solvers::family::load(&path, None, None).unwrap();
        assert_eq!(inst.objective(&r.solution).unwrap(), r.objective, "{file}");
        assert!(r.iterations > 0 && r.moves > 0 && r.launches > 0, "{file}");
        assert!(
            r.resources.iter().any(|res| res.function == r.entry),
            "{file}: {} among {:?}",
            r.entry,
            r.resources
        );
        let b = r.budget_run.as_ref().expect("a budgeted run");
        assert!((0.27..0.9).contains(&b.wall_s), "{file}: {}", b.wall_s);
        println!("{file}: {} in {:.3} s", r.objective, b.wall_s);
    }
}

/// A `--time-limit` shorter than a cold NVRTC compile holds: the run gives the compile up at
/// the limit and answers the CPU solver's start; a background worker finishes the compile, so
/// the next run finds the kernel in the cache and launches it.
#[test]
fn a_time_limit_shorter_than_a_cold_compile_answers_at_the_limit() {
    if gpu_or_skip("a_time_limit_shorter_than_a_cold_compile_answers_at_the_limit").is_none() {
        return;
    }
    let solve = |cache: &std::path::Path, file: &str, extra: &[&str], limit: &str| {
        let started = std::time::Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mats"))
            .env("MATS_CACHE_DIR", cache)
            .args(["solve", &repo_file(file).display().to_string()])
            .args([
                "--backend",
                "gpu",
                "--time-limit",
                limit,
                "--seed",
                "2",
                "--json",
            ])
            .args(extra)
            .output()
            .unwrap();
        let wall = started.elapsed().as_secs_f64();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{file}: {stderr}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (report, stderr, wall)
    };
    for (file, extra) in [
        ("data/qap/tai40a.dat", &[][..]),
        ("data/pfsp/tai20_10.txt", &["--index", "2"][..]),
        ("data/hwsw/crc32-synthetic.hwsw", &[][..]),
        ("data/tsp/berlin52.tsp", &[][..]),
    ] {
        let cache = tempfile::tempdir().unwrap();
        let kernels = cache.path().join("kernels");
        let (report, stderr, wall) = solve(cache.path(), file, extra, "0.2");
        println!("{file}: cold, 0.2 s: {wall:.3} s, {}", stderr.trim());
        // `mats solve` re-scored the answer before printing it.
        assert!(report["objective"].is_i64(), "{file}: {report}");
        assert_eq!(
            report["backend"], "cpu",
            "{file}: the start is the CPU solver's"
        );
        assert!(
            stderr.contains("ran out") && stderr.contains("background"),
            "{stderr}"
        );
        // README: a limit is honoured within max(5%, 0.5 s); process start and exit included.
        assert!(
            wall < 0.2 + 0.5,
            "{file}: a 0.2 s limit took {wall:.3} s on a cold cache"
        );

        // The background worker fills the cache (one entry per kernel: a .cubin and a .json).
        let entries = || std::fs::read_dir(&kernels).map_or(0, |d| d.count());
        let waited = std::time::Instant::now();
        while entries() < 2 && waited.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(
            entries() >= 2,
            "{file}: the background compile stored nothing"
        );
        // A colony's second kernel may still be on its way.
        std::thread::sleep(Duration::from_secs(3));
        let (report, stderr, wall) = solve(cache.path(), file, extra, "1");
        println!("{file}: warm, 1 s: {wall:.3} s, gpu {}", report["gpu"]);
        assert_eq!(report["backend"], "gpu", "{file}: {stderr}");
        assert_eq!(report["gpu"]["cache"], "hit", "{file}");
        assert!(report["gpu"]["launches"].as_u64().unwrap() >= 1, "{file}");
    }
}
