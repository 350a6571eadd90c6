//! GPU runtime on a real GPU: device listing, measurement in a worker, dynamic parallelism,
//! launch errors, and fault isolation. On a machine without a GPU every test says it skipped.

use std::time::Duration;

use kernels::gpu::{self, Gpu};
use kernels::Variant;
use mats::measure::client::WorkerClient;
use mats::measure::protocol::{Job, MeasureJob, Outcome};
use mats::measure::workload::WorkloadSpec;
use mats::measure::MeasureSettings;

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
    drop(stdin);
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(Result::unwrap)
        .collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(lines.len(), 2, "{lines:?}");
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
