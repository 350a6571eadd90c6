//! Standalone tuned executables (`mats export --binaries`) on the CPU: one per class, solving
//! with no mats on PATH, no export folder and another working folder; warning when an
//! instance's nearest class is another; refusing a forged GPU architecture.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mats::standalone::payload;

mod common;
use common::repo;

fn ok(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(args)
        .current_dir(repo(""))
        .output()
        .expect("the mats binary runs");
    assert!(
        out.status.success(),
        "mats {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Runs a standalone executable as a user elsewhere would: an empty environment (no PATH,
/// so no mats to fall back on) and a working folder of its own.
fn run_bare(exe: &Path, cwd: &Path, args: &[&str]) -> Output {
    // A file this test process wrote (a forged copy) may still be open for writing in a
    // child another test thread forked before its exec closed the descriptor: exec then
    // fails with ETXTBSY for that instant.
    for _ in 0..50 {
        match Command::new(exe)
            .args(args)
            .env_clear()
            .current_dir(cwd)
            .output()
        {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            out => return out.expect("the standalone executable starts"),
        }
    }
    panic!("{} stayed busy (ETXTBSY)", exe.display())
}

/// Tunes a small CPU campaign over two QAP classes and exports it with --binaries; returns
/// the executables' folder (the campaign and export folders are deleted).
fn export_binaries(tmp: &Path) -> PathBuf {
    let (out, tuned, bin) = tune_and_export(tmp);
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&tuned).unwrap();
    bin
}

/// [`export_binaries`] keeping the campaign (`out`) and export (`tuned`) folders.
fn tune_and_export(tmp: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let data = repo("data/qap");
    let campaign = format!(
        r#"
name = "standalone"
backend = "cpu"
seed = 7

[instances]
paths = ["{d}/tai12a.dat", "{d}/chr12a.dat"]
classes = "auto"

[cpu]
space = "{space}"
iterations = 300
baseline = {{ algorithm = "tabu", threads = 1, starts = 2 }}

[cpu.overrides.params.algorithm]
values = ["tabu"]

[strategy]
name = "random"

# Evaluations per class: every class gets some.
[budget]
trials = 100
cost_percent = 1
production_runs = 300

[measurement]
warmup_runs = 0
timed_runs = 1
"#,
        d = data.display(),
        space = repo("spaces/qap-cpu.toml").display(),
    );
    let path = tmp.join("standalone.toml");
    std::fs::write(&path, campaign).unwrap();
    let (out, tuned, bin) = (tmp.join("out"), tmp.join("tuned"), tmp.join("bin"));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    ok(&["tune", &s(&path), "--out", &s(&out), "--quiet"]);
    let printed = ok(&[
        "export",
        &s(&out),
        "--out",
        &s(&tuned),
        "--binaries",
        &s(&bin),
    ]);
    assert!(printed.contains("standalone"), "{printed}");
    (out, tuned, bin)
}

/// A --binaries folder holding another campaign's executables is refused unless replaced,
/// and with --replace its executables that this export does not write are removed (they were
/// left beside the new ones).
#[test]
fn binaries_of_another_campaign_are_not_mixed_in() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, tuned, bin) = tune_and_export(tmp.path());
    let exe = executables(&bin).remove(0);
    let mut forged = payload::read_header(&exe).unwrap().expect("a header");
    forged.campaign = "other".into();
    forged.name = "other-class".into();
    let mats_exe = PathBuf::from(env!("CARGO_BIN_EXE_mats"));
    let len = payload::executable_len(&mats_exe).unwrap();
    payload::write(&mats_exe, len, &[], forged, &bin.join("other-class")).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let again = Command::new(env!("CARGO_BIN_EXE_mats"))
        .args([
            "export",
            &s(&out),
            "--out",
            &s(&tuned),
            "--binaries",
            &s(&bin),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(!again.status.success(), "{err}");
    assert!(
        err.contains("campaign \"other\"") && err.contains("--replace"),
        "{err}"
    );
    ok(&[
        "export",
        &s(&out),
        "--out",
        &s(&tuned),
        "--binaries",
        &s(&bin),
        "--replace",
    ]);
    assert!(!bin.join("other-class").exists());
    assert_eq!(executables(&bin).len(), 2);
}

fn executables(bin: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(bin)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn standalone_executables_solve_without_mats_or_the_export_and_refuse_a_forged_arch() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = export_binaries(tmp.path());
    let exes = executables(&bin);
    assert_eq!(exes.len(), 2, "one per class: {exes:?}");

    // Each is named after its class and carries it; the instance sits in another folder.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    for name in ["tai12a.dat", "chr12a.dat"] {
        std::fs::copy(repo("data/qap").join(name), elsewhere.join(name)).unwrap();
    }
    let class_of = |exe: &Path| {
        payload::read_header(exe)
            .unwrap()
            .expect("a standalone executable carries a payload")
            .class
    };
    for exe in &exes {
        let class = class_of(exe);
        let name = exe.file_name().unwrap().to_str().unwrap();
        assert_eq!(name, class.replace([':', '=', ','], "-"), "{class}");
    }
    let tai = exes
        .iter()
        .find(|e| class_of(e) == own_class("tai12a.dat"))
        .expect("tai12a's class has an executable");

    let out = run_bare(tai, &elsewhere, &["tai12a.dat", "--seed", "3", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "its own class: {stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["tuned"]["class"], class_of(tai), "{report}");
    assert_eq!(report["tuned"]["exact"], true, "{report}");
    assert_eq!(report["seed"], 3, "{report}");
    assert!(report["algorithm"].as_str().unwrap().contains("tuned"));
    // The answer is real: a permutation whose cost, recomputed here, is the one reported.
    let inst = solvers::family::load(&repo("data/qap/tai12a.dat"), None, None).unwrap();
    let solution: Vec<usize> = report["solution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize - 1)
        .collect();
    assert_eq!(
        inst.objective(&solution).unwrap(),
        report["objective"].as_i64().unwrap()
    );

    // An instance of the other class runs this class's bundle, with a warning naming it.
    let out = run_bare(tai, &elsewhere, &["chr12a.dat", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let chr_class = own_class("chr12a.dat");
    assert!(
        stderr.contains("warning") && stderr.contains(&chr_class),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["tuned"]["class"], class_of(tai), "{report}");
    assert_eq!(report["tuned"]["exact"], false, "{report}");

    // An instance of another family: one line that names the executable, not the temporary
    // folder it unpacked into.
    std::fs::copy(repo("data/tsp/burma14.tsp"), elsewhere.join("burma14.tsp")).unwrap();
    let out = run_bare(tai, &elsewhere, &["burma14.tsp"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let name = tai.file_name().unwrap().to_str().unwrap();
    assert!(
        stderr.contains(&format!("{name}'s export was tuned for qap instances")),
        "{stderr}"
    );
    assert!(!stderr.contains("mats-standalone-"), "{stderr}");

    // The same payload with a GPU architecture no device has: refused before solving, in
    // one line naming it, with mats' usual failure status.
    let forged = forge_arch(tai, tmp.path(), 12);
    let out = run_bare(&forged, &elsewhere, &["tai12a.dat"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing solved");
    assert!(
        stderr.contains("sm_12") && stderr.contains("runs only on GPUs of that architecture"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// tai12a's or chr12a's dataset class, as mats labels it.
fn own_class(file: &str) -> String {
    solvers::family::load(&repo("data/qap").join(file), None, None)
        .unwrap()
        .class()
}

/// A copy of `exe` whose payload claims GPU kernels for `sm_{arch}`.
fn forge_arch(exe: &Path, tmp: &Path, arch: u32) -> PathBuf {
    let unpacked = tmp.join("unpacked");
    let mut header = payload::unpack(exe, &unpacked).unwrap();
    let files: Vec<(String, PathBuf)> = header
        .files
        .iter()
        .map(|f| (f.path.clone(), unpacked.join(&f.path)))
        .collect();
    header.arch = Some(arch);
    header.device = "a forged GPU".into();
    let forged = tmp.join("forged");
    let len = payload::executable_len(exe).unwrap();
    payload::write(exe, len, &files, header, &forged).unwrap();
    forged
}

#[test]
fn solve_tuned_class_refuses_a_class_the_export_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("index.json"),
        r#"{"campaign":"c","family":"qap","backend":"cpu","device":"cpu","arch":null,
            "driver":null,"nvrtc":null,"classes":{"qap:a":{"bundles":{},"pareto":[]}}}"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(["solve", "--tuned"])
        .arg(tmp.path())
        .args(["--tuned-class", "qap:b", "data/qap/tai12a.dat"])
        .current_dir(repo(""))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--tuned-class \"qap:b\"") && stderr.contains("tuned: qap:a"),
        "{stderr}"
    );
}

#[test]
fn a_named_class_far_from_the_instance_runs_with_a_warning() {
    // One tuned class of n = 500-600: tai12a (n = 12) is far beyond the threshold, where
    // `solve --tuned` alone runs the default.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("index.json"),
        r#"{"campaign":"c","family":"qap","backend":"cpu","device":"cpu","arch":null,
            "driver":null,"nvrtc":null,"classes":{"qap:a":{"bundles":{},"pareto":[],
            "features":{"n":{"min":500,"max":600}}}}}"#,
    )
    .unwrap();
    let solve = |named: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mats"));
        c.args(["solve", "--tuned"]).arg(tmp.path());
        if named {
            c.args(["--tuned-class", "qap:a"]);
        }
        let out = c
            .args(["data/qap/tai12a.dat", "--time-limit", "0.05"])
            .current_dir(repo(""))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let stderr = solve(true);
    assert!(
        stderr.contains("far from the tuned class qap:a") && stderr.contains("as asked"),
        "{stderr}"
    );
    let stderr = solve(false);
    assert!(stderr.contains("running the qap default"), "{stderr}");
}

/// On a GPU: the quickstart campaign's GPU side, cut short, exported with --binaries; the
/// executable runs its class's bundle from the CUBINs it carries (a cache hit: nothing
/// compiled), and one forged for the next architecture is refused naming this GPU.
#[test]
fn a_gpu_standalone_runs_the_kernels_it_carries() {
    if !kernels::gpu::test_gpu_or_skip("a_gpu_standalone_runs_the_kernels_it_carries") {
        return;
    }
    let arch = kernels::gpu::Gpu::open(0).unwrap().info.arch.0;
    let tmp = tempfile::tempdir().unwrap();
    let body = std::fs::read_to_string(repo("campaigns/quickstart.toml"))
        .unwrap()
        .replace("backend = \"auto\"", "backend = \"gpu\"")
        .replace("../data/", &format!("{}/", repo("data").display()))
        .replace("../spaces/", &format!("{}/", repo("spaces").display()))
        .replace("\nholdout = [", "\n# holdout = [")
        .replace("wall_s = 120", "wall_s = 120\ntrials = 30");
    let campaign = tmp.path().join("quick-gpu.toml");
    std::fs::write(&campaign, body).unwrap();
    let (out, tuned, bin) = (
        tmp.path().join("out"),
        tmp.path().join("tuned"),
        tmp.path().join("bin"),
    );
    let s = |p: &Path| p.to_str().unwrap().to_string();
    ok(&["tune", &s(&campaign), "--out", &s(&out), "--quiet"]);
    ok(&[
        "export",
        &s(&out),
        "--out",
        &s(&tuned),
        "--binaries",
        &s(&bin),
    ]);
    // `--adapt` over a GPU bundle races restarts around its point where its variant takes it
    // (rots-block), and says why not elsewhere; it is never silently dropped.
    let tai12a = s(&repo("data/qap/tai12a.dat"));
    let adapted = Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(["solve", "--tuned", &s(&tuned), &tai12a, "--adapt", "--json"])
        .args(["--time-limit", "0.5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&adapted.stderr);
    if adapted.status.success() {
        let r: serde_json::Value = serde_json::from_slice(&adapted.stdout).unwrap();
        assert!(
            r["algorithm"].as_str().unwrap().starts_with("rots-block"),
            "{r}"
        );
        assert!(
            r["gpu"]["adaptation"]
                .as_str()
                .is_some_and(|a| a.contains("adapt:")),
            "{r}"
        );
    } else {
        assert!(stderr.contains("--adapt does not apply to qap"), "{stderr}");
    }

    let class = own_class("tai12a.dat");
    let exe = executables(&bin)
        .into_iter()
        .find(|e| payload::read_header(e).unwrap().unwrap().class == class)
        .expect("tai12a's class has an executable");
    let header = payload::read_header(&exe).unwrap().unwrap();
    assert_eq!((header.backend.as_str(), header.arch), ("gpu", Some(arch)));

    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::copy(repo("data/qap/tai12a.dat"), elsewhere.join("tai12a.dat")).unwrap();
    // PATH goes; the loader's own paths stay (the CUDA driver may need them).
    let run = |exe: &Path| {
        Command::new(exe)
            .args(["tai12a.dat", "--json", "--seed", "2"])
            .env_remove("PATH")
            .current_dir(&elsewhere)
            .output()
            .unwrap()
    };
    let done = run(&exe);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(report["backend"], "gpu", "{report}");
    assert_eq!(report["gpu"]["cache"], "hit", "the carried CUBIN: {report}");
    assert_eq!(report["tuned"]["class"], class.as_str(), "{report}");

    let forged = forge_arch(&exe, tmp.path(), arch + 1);
    let refused = run(&forged);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("sm_{}", arch + 1))
            && stderr.contains("GPU 0 is")
            && stderr.contains(&format!("sm_{arch}")),
        "{stderr}"
    );
}
