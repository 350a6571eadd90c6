//! `mats tune` end to end on the CPU (no GPU needed): the quickstart campaign, export and
//! `solve --tuned`, results export, configuration errors, and a campaign killed with SIGKILL
//! that resumes without losing or repeating a trial.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{error_of, mats, repo};

fn ok(args: &[&str]) -> String {
    let out = mats(args);
    assert!(
        out.status.success(),
        "mats {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn write_campaign(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, body).unwrap();
    path
}

/// A small CPU campaign over the repository's QAP instances.
fn cpu_campaign(name: &str, strategy: &str, budget: &str) -> String {
    format!(
        r#"
name = "{name}"
backend = "cpu"
seed = 7

[instances]
paths = ["{data}/tai12a.dat", "{data}/nug12.dat"]

[cpu]
space = "{space}"
iterations = 300
baseline = {{ algorithm = "tabu", threads = 1, starts = 2 }}

# Fixed-work objectives compare one variant's work.
[cpu.overrides.params.algorithm]
values = ["tabu"]

[strategy]
{strategy}

[budget]
{budget}

[measurement]
warmup_runs = 0
timed_runs = 1
"#,
        data = repo("data/qap").display(),
        space = repo("spaces/qap-cpu.toml").display(),
    )
}

#[test]
fn quickstart_tunes_exports_and_solves_with_the_tuned_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("quickstart");
    let out_s = out.to_str().unwrap();
    let summary: serde_json::Value = serde_json::from_str(&ok(&[
        "tune",
        "campaigns/quickstart.toml",
        "--out",
        out_s,
        "--quiet",
        "--json",
    ]))
    .unwrap();
    let classes = summary["classes"].as_array().unwrap();
    assert!(classes.len() >= 2, "{summary}");
    for c in classes {
        assert_eq!(c["metric"], "gap@budget", "{c}");
        let best = c["best_value"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&best), "{c}");
        assert!(c["evaluations"].as_u64().unwrap() >= 2, "{c}");
    }
    // tai40a is held out: its class compares the tuned point, the baseline and the default
    // on it (3 seeds each), after the search.
    let held: Vec<&serde_json::Value> =
        classes.iter().filter(|c| !c["holdout"].is_null()).collect();
    assert_eq!(held.len(), 1, "{summary}");
    let h = &held[0]["holdout"];
    assert_eq!(h["instances"], serde_json::json!(["tai40a"]), "{h}");
    for role in ["tuned", "baseline", "default"] {
        assert_eq!(h["values"][role]["n"], 3, "{h}");
    }
    assert!(summary["new_trials"].as_u64().unwrap() > 0);

    let store = results::Store::open(out.join("results.sqlite")).unwrap();
    store.integrity_check().unwrap();
    let campaign = &store.campaigns().unwrap()[0];
    summary_agrees_with_the_store(&store, campaign.id, classes);
    let trials = store.trials(campaign.id).unwrap();
    assert!(trials
        .iter()
        .all(|t| t.status != results::TrialStatus::Started));
    // Every ok trial was re-scored: it has an objective.
    assert!(trials
        .iter()
        .filter(|t| t.status == results::TrialStatus::Ok)
        .all(|t| t.measurement.objective.is_some() && t.measurement.time_s.is_some()));

    // A second run without --resume refuses; with --resume it measures nothing new.
    let err = error_of(&[
        "tune",
        "campaigns/quickstart.toml",
        "--out",
        out_s,
        "--quiet",
    ]);
    assert!(err.contains("--resume"), "{err}");

    let tuned = tmp.path().join("tuned");
    // An earlier export of another campaign in the folder: its bundles are removed (only
    // folders it named that hold a manifest), not left beside the new index.
    std::fs::create_dir_all(tuned.join("old-bundle")).unwrap();
    std::fs::write(tuned.join("old-bundle/manifest.json"), "{}").unwrap();
    std::fs::create_dir_all(tuned.join("notes")).unwrap();
    std::fs::write(
        tuned.join("index.json"),
        r#"{"campaign":"other","family":"qap","backend":"cpu","device":"cpu","arch":null,
            "driver":null,"nvrtc":null,"classes":{"qap:a":{"bundles":{"time":"old-bundle"},
            "pareto":[{"point":{},"time_s":1.0,"bundle":"notes"}]}}}"#,
    )
    .unwrap();
    // Only when asked: without --replace the other campaign's export is refused.
    let refused = error_of(&["export", out_s, "--out", tuned.to_str().unwrap()]);
    assert!(refused.contains("--replace"), "{refused}");
    let export = mats(&[
        "export",
        out_s,
        "--out",
        tuned.to_str().unwrap(),
        "--replace",
    ]);
    let err = String::from_utf8_lossy(&export.stderr);
    assert!(export.status.success(), "{err}");
    assert!(
        err.contains("removed 1 bundle folder(s)") && err.contains("\"other\""),
        "{err}"
    );
    assert!(!tuned.join("old-bundle").exists() && tuned.join("notes").is_dir());
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tuned.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["classes"].as_object().unwrap().len(), classes.len());
    // Each class exports the point its final re-measure found best (the search's, or the
    // default or baseline that beat it), and a holdout that found that point worse than
    // another is said in the bundle's note.
    for c in classes {
        let check = &c["final_check"];
        // No re-measure where the search kept the baseline (on a GPU the 2opt baseline
        // reaches 0% on two classes): the bundle is then the search's best point.
        let expected = match check["winner"].as_str() {
            Some(winner) => &check["points"][winner],
            None => &c["best_point"],
        };
        assert!(!expected.is_null(), "{c}");
        let label = c["class"].as_str().unwrap();
        let bundle = index["classes"][label]["bundles"]["quality"]
            .as_str()
            .unwrap();
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(tuned.join(bundle).join("manifest.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(&manifest["point"], expected, "{label}: {manifest}");
        // The front a cap chooses from lists the quality bundle itself (of several points at
        // a gap of 0 it listed another; where the default won the final re-measure it listed
        // the search's best, which lost there, with its search values).
        let listed = index["classes"][label]["pareto"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["bundle"] == bundle);
        // On a GPU a point of the same gap and less energy may dominate the bundle's.
        let with_energy = index["classes"][label]["pareto"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["energy_j"].is_number());
        assert!(
            listed || with_energy,
            "{label}: {bundle} not on {}",
            index["classes"][label]["pareto"]
        );
        // Where the re-measure shipped another point than the search's best, the search's
        // values were contradicted: the front is the bundles' points alone (the search's
        // second best, at its search gap, pushed the shipped default out of it).
        if !c["best_point"].is_null() && &c["best_point"] != expected {
            let shipped: std::collections::BTreeSet<&str> = index["classes"][label]["bundles"]
                .as_object()
                .unwrap()
                .values()
                .map(|b| b.as_str().unwrap())
                .collect();
            for p in index["classes"][label]["pareto"].as_array().unwrap() {
                assert!(
                    shipped.contains(p["bundle"].as_str().unwrap()),
                    "{label}: {p} is no bundle of {shipped:?}"
                );
            }
        }
        let h = &c["holdout"];
        if h.is_null() {
            continue;
        }
        let role = ["tuned", "default", "baseline"]
            .into_iter()
            .find(|r| h["points"][*r] == manifest["point"])
            .unwrap();
        let mean = |r: &str| h["values"][r]["mean"].as_f64().unwrap();
        let beaten = ["tuned", "default", "baseline"]
            .into_iter()
            .any(|r| h["points"][r] != manifest["point"] && mean(r) < mean(role) - 1e-12);
        let note = manifest["note"].as_str().unwrap_or("");
        assert_eq!(note.contains("held-out"), beaten, "{label}: {h} / {note:?}");
    }
    let solve_tuned = || -> serde_json::Value {
        serde_json::from_str(&ok(&[
            "solve",
            "--tuned",
            tuned.to_str().unwrap(),
            "data/qap/tai12a.dat",
            "--json",
        ]))
        .unwrap()
    };
    let report = solve_tuned();
    assert!(
        report["algorithm"].as_str().unwrap().contains("tuned"),
        "{report}"
    );
    assert_eq!(report["tuned"]["exact"], true, "{report}");
    assert_eq!(report["tuned"]["default_ran"], false, "{report}");
    // `--prefer tuned` (the default) runs the bundle of the campaign's own objective, which
    // the index names (an energy campaign's is its energy bundle; a hand-made one here).
    let mut own: serde_json::Value = index.clone();
    let class = report["tuned"]["class"].as_str().unwrap().to_string();
    let other = own["classes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(_, e)| e["bundles"]["quality"].clone())
        .find(|b| *b != report["tuned"]["bundle"])
        .unwrap();
    own["classes"][&class]["bundles"]["energy"] = other.clone();
    own["prefer"] = "energy".into();
    std::fs::write(tuned.join("index.json"), own.to_string()).unwrap();
    let by_own = solve_tuned();
    assert_eq!(by_own["tuned"]["bundle"], other, "{by_own}");
    std::fs::write(tuned.join("index.json"), index.to_string()).unwrap();
    // A bundle's worker threads are held to the solvers' limit too (it took 5,000).
    let err = common::error_of(&[
        "solve",
        "--tuned",
        tuned.to_str().unwrap(),
        "data/qap/tai12a.dat",
        "--threads",
        "5000",
    ]);
    // (A GPU bundle refuses --threads outright: its launch is the tuned one.)
    assert!(
        err.contains("--threads must be at most")
            || err.contains("--threads does not combine with GPU bundle"),
        "{err}"
    );
    // A class the campaign never saw runs the nearest tuned class's bundle, and says which
    // and how far; with a zero threshold the family's default runs instead, and says so.
    let solve_bur = |extra: &[&str]| -> serde_json::Value {
        let mut a = vec![
            "solve",
            "--tuned",
            tuned.to_str().unwrap(),
            "data/qap/bur26a.dat",
            "--json",
        ];
        a.extend_from_slice(extra);
        serde_json::from_str(&ok(&a)).unwrap()
    };
    let near = solve_bur(&["--max-class-distance", "1000"]);
    assert_eq!(near["tuned"]["exact"], false, "{near}");
    assert_eq!(near["tuned"]["default_ran"], false, "{near}");
    assert!(index["classes"][near["tuned"]["class"].as_str().unwrap()].is_object());
    assert!(near["tuned"]["distance"].as_f64().unwrap() > 0.0, "{near}");
    assert!(
        near["algorithm"].as_str().unwrap().contains("tuned"),
        "{near}"
    );
    let default = solve_bur(&["--max-class-distance", "0"]);
    assert_eq!(default["tuned"]["default_ran"], true, "{default}");
    // ... at the export's budget (it used to run the default's own iterations: TSP's Ant
    // System took 107 s for an export tuned at 0.2 s).
    let fallback = mats(&[
        "solve",
        "--tuned",
        tuned.to_str().unwrap(),
        "data/qap/bur26a.dat",
        "--max-class-distance",
        "0",
    ]);
    let said = String::from_utf8_lossy(&fallback.stderr);
    assert!(
        said.contains("running the default at the export's budget, 0.2 s"),
        "{said}"
    );
    assert!(
        default["seconds"].as_f64().unwrap() < 0.2 + 0.5,
        "{default}"
    );
    assert!(
        !default["algorithm"].as_str().unwrap().contains("tuned"),
        "{default}"
    );
    assert_eq!(
        default["tuned"]["distance"], near["tuned"]["distance"],
        "the same choice, only the threshold differs"
    );

    // The bundle sets the search: a flag that would change it is refused, not ignored; a CPU
    // bundle takes --threads but not the GPU's --adapt. What follows holds for the CPU bundle
    // this campaign exports without a GPU (CI); a GPU bundle's flags are checked by
    // tests/standalone.rs and `solve_flags` instead.
    if engine::campaign::setup::gpu_present() {
        println!("the quickstart exported GPU bundles here; the CPU bundle's flag checks run without a GPU");
        return;
    }
    let tuned_s = tuned.to_str().unwrap();
    let tuned_error = |extra: &[&str]| {
        let mut a = vec!["solve", "--tuned", tuned_s, "data/qap/tai12a.dat"];
        a.extend_from_slice(extra);
        error_of(&a)
    };
    for (extra, expected) in [
        (
            &["--tenure-range", "0.3,0.5"][..],
            "--tenure-range does not combine with --tuned",
        ),
        (
            &["--nvrtc-flag=-O3"][..],
            "--nvrtc-flag does not combine with --tuned",
        ),
        (
            &["--adapt"][..],
            "--adapt races the blocks of a GPU run; bundle",
        ),
        (
            &["--backend", "gpu"][..],
            "--backend gpu does not combine with --tuned",
        ),
        (
            &["--gpus", "0,1", "--time-limit", "0.3"][..],
            "--gpus does not combine with --tuned",
        ),
        (&["--gpu", "3"][..], "--gpu does not combine with --tuned"),
    ] {
        let e = tuned_error(extra);
        assert!(e.contains(expected), "{extra:?}: {e}");
    }
    let threads: serde_json::Value = serde_json::from_str(&ok(&[
        "solve",
        "--tuned",
        tuned_s,
        "data/qap/tai12a.dat",
        "--threads",
        "2",
        "--json",
    ]))
    .unwrap();
    assert_eq!(threads["threads"], 2, "{threads}");
    // Naming the bundle's own backend is allowed (it is what runs).
    let cpu: serde_json::Value = serde_json::from_str(&ok(&[
        "solve",
        "--tuned",
        tuned_s,
        "data/qap/tai12a.dat",
        "--backend",
        "cpu",
        "--json",
    ]))
    .unwrap();
    assert_eq!(cpu["backend"], "cpu", "{cpu}");

    report_shows_the_verdicts_of_the_summary(&out, classes);

    let csv = ok(&["results", out_s, "--csv"]);
    assert_eq!(csv.lines().count(), trials.len() + 1, "{csv}");
    let json: serde_json::Value = serde_json::from_str(&ok(&["results", out_s, "--json"])).unwrap();
    assert!(json["trials"].as_array().unwrap().len() == trials.len());

    // A summary that cannot be read still exports the searches' bests, and says what that
    // leaves out instead of dropping the verdicts without a word.
    std::fs::write(out.join("summary.json"), "{broken").unwrap();
    let again = tmp.path().join("tuned-again");
    let export = mats(&["export", out_s, "--out", again.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&export.stderr);
    assert!(export.status.success(), "{stderr}");
    assert!(
        stderr.contains("summary.json is not a campaign summary"),
        "{stderr}"
    );
    assert!(
        stderr.contains("without the campaign's final re-measure"),
        "{stderr}"
    );
}

#[test]
fn campaign_errors_name_the_key_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let good = cpu_campaign("errs", "name = \"random\"", "trials = 2");

    let typo = good.replace("seed = 7", "seed = 7\nsede = 3");
    let path = write_campaign(tmp.path(), "typo", &typo);
    let err = error_of(&[
        "tune",
        path.to_str().unwrap(),
        "--out",
        tmp.path().join("o1").to_str().unwrap(),
    ]);
    assert!(err.contains("sede") && err.contains(".toml:5:"), "{err}");

    let bad_objective = good.replace("seed = 7", "seed = 7\nobjective = \"speed\"");
    let path = write_campaign(tmp.path(), "objective", &bad_objective);
    let err = error_of(&["tune", path.to_str().unwrap()]);
    assert!(err.contains("objective") && err.contains("speed"), "{err}");

    let power_on_cpu = good.replace("seed = 7", "seed = 7\nobjective = \"energy\"");
    let path = write_campaign(tmp.path(), "energy", &power_on_cpu);
    let err = error_of(&[
        "tune",
        path.to_str().unwrap(),
        "--out",
        tmp.path().join("o2").to_str().unwrap(),
    ]);
    assert!(err.contains("objective") && err.contains("CPU"), "{err}");

    let missing = good.replace("tai12a.dat", "no-such-instance.dat");
    let path = write_campaign(tmp.path(), "missing", &missing);
    let err = error_of(&[
        "tune",
        path.to_str().unwrap(),
        "--out",
        tmp.path().join("o3").to_str().unwrap(),
    ]);
    assert!(
        err.contains("no-such-instance.dat") && err.contains("line"),
        "{err}"
    );

    let bad_baseline = good.replace("starts = 2", "starts = 3");
    let path = write_campaign(tmp.path(), "baseline", &bad_baseline);
    let err = error_of(&[
        "tune",
        path.to_str().unwrap(),
        "--out",
        tmp.path().join("o4").to_str().unwrap(),
    ]);
    assert!(err.contains("baseline"), "{err}");

    // Keys of another kind of run are refused, not ignored.
    let budget = |run: &str| {
        good.replace(
            "seed = 7",
            &format!("seed = 7\nobjective = \"gap@budget\"\n[run]\nbudget_s = 0.01\n{run}"),
        )
    };
    let no_iterations = |text: String| text.replace("iterations = 300\n", "");
    for (name, text, key) in [
        (
            "pen",
            good.replace("seed = 7", "seed = 7\n[run]\npenalty = 2"),
            "run.penalty",
        ),
        ("cap", no_iterations(budget("cap_s = 1")), "run.cap_s"),
        (
            "later",
            no_iterations(budget("").replace(
                "budget_s = 0.01",
                "budgets_s = [0.01, 0.02]\nseeds = 2\nlater_seeds = 3",
            )),
            "run.later_seeds",
        ),
    ] {
        let path = write_campaign(tmp.path(), name, &text);
        let err = error_of(&["tune", path.to_str().unwrap(), "--check"]);
        assert!(
            err.contains(&format!("`{key}`")) && err.contains(", line "),
            "{name}: {err}"
        );
    }

    // `iterations` beside a budget is ignored: said once (it was said once per reading of the
    // run mode, four times for one --check).
    let path = write_campaign(tmp.path(), "iters", &budget(""));
    let out = mats(&["tune", path.to_str().unwrap(), "--check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("`cpu.iterations`: ignored").count(),
        1,
        "{stderr}"
    );

    // A float where the space has integers: quoted as written, with the domain.
    let float = good.replace("threads = 1, starts = 2", "threads = 1.0, starts = 2");
    let path = write_campaign(tmp.path(), "float", &float);
    let err = error_of(&["tune", path.to_str().unwrap(), "--check"]);
    assert!(
        err.contains("threads = \"1.0\" is outside its domain (1, 2, 4"),
        "{err}"
    );

    let bad_budget = good.replace("trials = 2", "trials = 0");
    let path = write_campaign(tmp.path(), "budget", &bad_budget);
    let err = error_of(&["tune", path.to_str().unwrap()]);
    assert!(err.contains("trials") && err.contains("line"), "{err}");

    let gpu_only = good
        .replace("backend = \"cpu\"", "backend = \"gpu\"")
        .replace("[cpu]", "[gpu]");
    let path = write_campaign(tmp.path(), "gpu", &gpu_only);
    let out = mats(&[
        "tune",
        path.to_str().unwrap(),
        "--out",
        tmp.path().join("o5").to_str().unwrap(),
    ]);
    if !out.status.success() {
        // Without a GPU: one clear line; with one, the CPU space makes the baseline fail.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// Trials keyed by (point, instance, seed, device), with their statuses: the seed is part of
/// a trial's identity (the final re-measure runs fresh seeds on purpose).
fn trial_keys(
    store: &results::Store,
) -> HashMap<(String, String, u64, String), Vec<results::TrialStatus>> {
    let campaign = &store.campaigns().unwrap()[0];
    let mut keys: HashMap<_, Vec<_>> = HashMap::new();
    for t in store.trials(campaign.id).unwrap() {
        keys.entry((t.point.key(), t.instance.clone(), t.seed, t.device.clone()))
            .or_default()
            .push(t.status);
    }
    keys
}

#[cfg(unix)]
#[test]
fn a_campaign_killed_mid_way_resumes_without_losing_or_repeating_trials() {
    let tmp = tempfile::tempdir().unwrap();
    let path = long_campaign(tmp.path(), "killed");
    let out = tmp.path().join("out");
    let mut child = tune_until_trials(&path, &out, 6);
    child.kill().unwrap(); // SIGKILL on unix
    child.wait().unwrap();
    let db = out.join("results.sqlite");

    // Exporting what the killed campaign recorded says it never finished.
    let export = mats(&[
        "export",
        path_str(&out),
        "--out",
        path_str(&tmp.path().join("tuned")),
    ]);
    let err = String::from_utf8_lossy(&export.stderr);
    assert!(
        err.contains("was killed") && err.contains("--resume"),
        "{err}"
    );

    let before = {
        let store = results::Store::open(&db).unwrap();
        store.integrity_check().unwrap();
        let campaign = &store.campaigns().unwrap()[0];
        store.trials(campaign.id).unwrap()
    };
    assert!(!before.is_empty());

    ok(&[
        "tune",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--resume",
    ]);
    let store = results::Store::open(&db).unwrap();
    store.integrity_check().unwrap();
    let campaign = &store.campaigns().unwrap()[0];
    let after = store.trials(campaign.id).unwrap();
    assert!(out.join("summary.json").is_file());
    // Nothing recorded before the kill is lost or changed (except started -> crashed).
    for t in &before {
        let now = after.iter().find(|a| a.id == t.id).expect("trial kept");
        if t.status == results::TrialStatus::Started {
            assert_eq!(now.status, results::TrialStatus::Crashed);
        } else {
            assert_eq!(now.status, t.status);
            assert_eq!(now.measurement, t.measurement);
        }
    }
    // No point was measured twice to completion on the same instance and device.
    for (key, statuses) in trial_keys(&store) {
        let finished = statuses
            .iter()
            .filter(|s| !matches!(s, results::TrialStatus::Crashed))
            .count();
        assert!(
            finished <= 1,
            "{key:?} measured {finished} times: {statuses:?}"
        );
        assert!(
            !statuses.contains(&results::TrialStatus::Started),
            "{key:?}"
        );
    }
}

/// A finished campaign started over (`--fresh`) and killed before its end leaves no
/// summary: the earlier run's verdicts must not pass for the store the new run changed.
#[cfg(unix)]
#[test]
fn a_run_killed_after_starting_over_leaves_no_earlier_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let path = long_campaign(tmp.path(), "again");
    let out = tmp.path().join("out");
    let summary = out.join("summary.json");
    // The earlier run's summary, as a finished run leaves it.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(&summary, "{}").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(["tune", path_str(&path), "--out", path_str(&out), "--quiet"])
        .arg("--fresh")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while summary.exists() {
        assert!(Instant::now() < deadline, "the earlier summary was kept");
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the campaign ended ({status}) before it could be killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let export = mats(&[
        "export",
        path_str(&out),
        "--out",
        path_str(&tmp.path().join("tuned")),
    ]);
    let err = String::from_utf8_lossy(&export.stderr);
    assert!(err.contains("was killed"), "{err}");
}

/// A CPU campaign long enough to be stopped mid-way (16 trials of 20,000 iterations on
/// tai40a and tai20a), written into `dir`.
fn long_campaign(dir: &Path, name: &str) -> PathBuf {
    let body = cpu_campaign(name, "name = \"exhaustive\"", "trials = 16")
        .replace("tai12a.dat", "tai40a.dat")
        .replace("nug12.dat", "tai20a.dat")
        .replace("iterations = 300", "iterations = 20000");
    write_campaign(dir, name, &body)
}

/// Starts `mats tune` on `path` into `out` and returns once `trials` trials are stored.
#[cfg(unix)]
fn tune_until_trials(path: &Path, out: &Path, trials: usize) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(["tune", path_str(path), "--out", path_str(out), "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let db = out.join("results.sqlite");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let done = results::Store::open(&db)
            .ok()
            .and_then(|s| {
                s.campaigns()
                    .ok()
                    .and_then(|c| c.first().cloned())
                    .map(|c| (s, c))
            })
            .and_then(|(s, c)| s.trials(c.id).ok())
            .map_or(0, |t| t.len());
        if done >= trials || Instant::now() > deadline {
            return child;
        }
        if let Ok(Some(_)) = child.try_wait() {
            panic!("the campaign finished before it could be stopped; make it longer");
        }
    }
}

/// A CPU `gap@budget` campaign over QAP instances with the qap-cpu space on one thread and a
/// 2-opt baseline of 16 starts: `run`, `instances`, `cpu` (beside the space and baseline) and
/// `rest` (strategy, budget...) are TOML lines. `{data}` in them is the repository's
/// data/qap folder.
fn gap_campaign(name: &str, run: &str, instances: &str, cpu: &str, rest: &str) -> String {
    let data = repo("data/qap").display().to_string();
    format!(
        r#"
name = "{name}"
backend = "cpu"
seed = 1
objective = "gap@budget"

[run]
{run}

[instances]
{instances}

[cpu]
space = "{space}"
baseline = {{ algorithm = "2opt", threads = 1, starts = 16 }}
{cpu}

[cpu.overrides]
constants = {{ max_threads = 1 }}

{rest}
"#,
        instances = instances.replace("{data}", &data),
        space = repo("spaces/qap-cpu.toml").display(),
    )
}

/// `mats tune CAMPAIGN --out OUT --quiet --json`: the summary.
fn tune_json(campaign: &Path, out: &Path) -> serde_json::Value {
    let args = [
        "tune",
        path_str(campaign),
        "--out",
        path_str(out),
        "--quiet",
        "--json",
    ];
    serde_json::from_str(&ok(&args)).unwrap()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[cfg(unix)]
/// Export reads verdicts from the store and writes into it: a damaged store is refused by
/// name (it exported bundles from broken pages while `results` refused the same file), and a
/// failed `--resume` (here: the damaged store) leaves the finished campaign's summary.
#[test]
fn a_damaged_store_is_refused_by_export_and_a_failed_resume_keeps_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let body = cpu_campaign("flipped", "name = \"random\"", "trials = 4");
    let path = write_campaign(tmp.path(), "flipped", &body);
    let out = tmp.path().join("out");
    ok(&["tune", path_str(&path), "--out", path_str(&out), "--quiet"]);
    let store = out.join("results.sqlite");
    let mut bytes = std::fs::read(&store).unwrap();
    // Page 14 is the root of the index `trials_by_status` (the schema creates its tables and
    // indexes in one order), which export never reads: only a check of the whole file finds
    // its b-tree header broken (0xff is no page type).
    let page = 4096;
    assert!(bytes.len() >= 14 * page, "{} bytes", bytes.len());
    bytes[13 * page..13 * page + 64].fill(0xff);
    std::fs::write(&store, &bytes).unwrap();
    let err = error_of(&[
        "export",
        path_str(&out),
        "--out",
        path_str(&tmp.path().join("tuned")),
    ]);
    assert!(
        err.contains("results.sqlite") && err.contains("damaged"),
        "{err}"
    );
    assert!(!tmp.path().join("tuned").exists());
    let summary = std::fs::read(out.join("summary.json")).unwrap();
    let out_resume = mats(&["tune", path_str(&path), "--out", path_str(&out), "--resume"]);
    assert!(!out_resume.status.success());
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), summary);
}

#[test]
fn a_campaign_stopped_by_the_user_exits_130_and_export_says_it_is_unfinished() {
    let tmp = tempfile::tempdir().unwrap();
    let path = long_campaign(tmp.path(), "stopped");
    let out = tmp.path().join("out");
    let child = tune_until_trials(&path, &out, 3);
    // SAFETY: signalling the child this test started and still owns.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{err}");
    assert!(
        err.contains("stopped by the user") && err.contains("--resume"),
        "{err}"
    );
    assert!(out.join("summary.json").is_file());
    let export = mats(&[
        "export",
        path_str(&out),
        "--out",
        path_str(&tmp.path().join("tuned")),
    ]);
    let err = String::from_utf8_lossy(&export.stderr);
    assert!(
        export.status.success() && err.contains("stopped by the user") && err.contains("--resume"),
        "{err}"
    );
}

/// SIGTERM (`timeout`, Slurm) stops a campaign as Ctrl-C does; a second signal aborts at once
/// and records the trial it cuts short as interrupted, which a resume measures again however
/// often that happened (a twice-killed trial used to fail its point for good, and a
/// baseline's the whole campaign).
#[cfg(unix)]
#[test]
fn a_second_stop_signal_records_the_unfinished_trial_as_interrupted() {
    let tmp = tempfile::tempdir().unwrap();
    let path = long_campaign(tmp.path(), "signalled");
    let out = tmp.path().join("out");
    let child = tune_until_trials(&path, &out, 2);
    // SAFETY: signalling the child this test started and still owns.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{err}");
    assert!(
        err.contains("SIGTERM") && err.contains("stopped by the user"),
        "{err}"
    );
    for round in 0..3 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mats"))
            .args(["tune", path_str(&path), "--out", path_str(&out), "--quiet"])
            .arg("--resume")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Two signals while a trial is under way (each trial runs 20,000 iterations).
        let db = out.join("results.sqlite");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            std::thread::sleep(Duration::from_millis(20));
            let started = results::Store::open_existing(&db)
                .ok()
                .and_then(|s| s.trials(1).ok())
                .is_some_and(|t| t.iter().any(|t| t.status.as_str() == "started"));
            if started || Instant::now() > deadline {
                break;
            }
            assert!(child.try_wait().unwrap().is_none(), "round {round}: ended");
        }
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: as above.
            unsafe { libc::kill(child.id() as i32, signal) };
            std::thread::sleep(Duration::from_millis(50));
        }
        let done = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(130), "round {round}: {err}");
    }
    let store = results::Store::open_existing(out.join("results.sqlite")).unwrap();
    let trials = store.trials(1).unwrap();
    assert!(trials.iter().all(|t| t.status.as_str() != "started"));
    let interrupted = trials
        .iter()
        .filter(|t| t.log.contains(results::store::INTERRUPTED_LOG))
        .count();
    assert!(interrupted >= 1, "{trials:?}");
    // The resume measures everything again: no point failed by the interruptions.
    let summary: serde_json::Value = serde_json::from_str(&ok(&[
        "tune",
        path_str(&path),
        "--out",
        path_str(&out),
        "--quiet",
        "--json",
        "--resume",
    ]))
    .unwrap();
    // (Its `[budget] trials = 16` may end it; a user's stop would say so.)
    assert_ne!(summary["stopped"], "stopped by the user", "{summary}");
    let failed = store
        .trials(1)
        .unwrap()
        .into_iter()
        .filter(|t| {
            t.status.as_str() == "crashed" && !t.log.contains(results::store::INTERRUPTED_LOG)
        })
        .count();
    assert_eq!(failed, 0);
}

/// Every shipped campaign parses, and each setup's baseline is a valid point of its space
/// (GPU campaigns too: checked here without a GPU).
#[test]
fn shipped_campaigns_are_valid() {
    use search::SearchSpace;
    let mut checked = 0;
    for entry in std::fs::read_dir(repo("campaigns")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let file = engine::campaign::CampaignFile::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
        for setup in [&file.config.gpu, &file.config.cpu].into_iter().flatten() {
            let mut space = search::space::Space::load(&file.resolve(&setup.space)).unwrap();
            if let Some(o) = &setup.overrides {
                space = space.with_overrides(o).unwrap();
            }
            let baseline = engine::campaign::config::point_from_table(&setup.baseline).unwrap();
            assert!(
                space.is_valid(&baseline),
                "{}: baseline {baseline}: {:?}",
                path.display(),
                space.why_invalid(&baseline)
            );
            checked += 1;
        }
        // A GPU campaign's baseline and default become a configuration of its family's GPU
        // workload (the path every trial and bundle takes).
        if let Some(setup) = &file.config.gpu {
            let space = search::space::Space::load(&file.resolve(&setup.space)).unwrap();
            let family: solvers::family::Family = space.family().unwrap().parse().unwrap();
            for table in [Some(&setup.baseline), setup.default.as_ref()]
                .into_iter()
                .flatten()
            {
                let point = engine::campaign::config::point_from_table(table).unwrap();
                let realised = engine::runner::Realised::from(space.realise(&point).unwrap());
                match engine::runner::gpu::config(family, &realised) {
                    Err(e) => panic!("{}: {point}: {e}", path.display()),
                    // tsp-tsplib starts from MAX-MIN AS with 2-opt, with the space's
                    // local-search values rather than the workload's defaults; tsp-large-gpu
                    // from the focused colony's GPU defaults.
                    Ok(config) if family == solvers::family::Family::Tsp => {
                        let json = serde_json::to_value(&config).unwrap();
                        let params = &json;
                        if path.ends_with("tsp-large-gpu.toml") {
                            assert_eq!(params["algorithm"], "focused", "{json}");
                            assert_eq!(params["ants"], 1024, "{json}");
                            assert_eq!(params["local_search"]["neighbours"], 16, "{json}");
                            assert_eq!(params["focused"]["min_new_edges"], 16, "{json}");
                            assert_eq!(params["focused"]["source"], "best", "{json}");
                        } else {
                            assert_eq!(params["algorithm"], "mmas", "{json}");
                            assert_eq!(params["local_search"]["warps"], 4, "{json}");
                            assert_eq!(params["rho"], 0.2, "{json}");
                        }
                    }
                    Ok(_) => {}
                }
            }
        }
    }
    assert!(checked >= 4, "{checked}");
}

/// Several searches per class: each becomes its own run, labelled as the report expects, and
/// points measured by one search are reused by the next.
#[test]
fn several_searches_per_class_run_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let body = cpu_campaign("compare", "name = \"staged\"\norder = \"opt-then-thread\"", "trials = 60")
        .replace("paths = [", "per_class = 1\npaths = [")
        + "\n[[search]]\nstrategy = { name = \"staged\", order = \"combined\" }\n\n[[search]]\nstrategy = { name = \"random\" }\n\n[[search]]\nstrategy = { name = \"random\", batch = 2 }\n";
    let path = write_campaign(tmp.path(), "compare", &body);
    let out = tmp.path().join("out");
    ok(&[
        "tune",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let store = results::Store::open(out.join("results.sqlite")).unwrap();
    let campaign = &store.campaigns().unwrap()[0];
    let runs = store.runs(campaign.id).unwrap();
    for label in [
        "baseline",
        "staged:opt-then-thread",
        "staged:combined",
        "random",
        // A second random search (other options) has a run of its own: it took the first's,
        // and its evaluations went unrecorded.
        "random#2",
    ] {
        let run = runs.iter().find(|r| r.strategy == label);
        let run = run.unwrap_or_else(|| panic!("{label}: {runs:?}"));
        assert!(
            !store.evaluations_of_run(run.id).unwrap().is_empty(),
            "{label}"
        );
    }
    // No (point, instance, seed, device) was measured twice to completion.
    for (key, statuses) in trial_keys(&store) {
        assert_eq!(statuses.len(), 1, "{key:?}");
    }
}

/// The quality guard: with no margin, points whose solutions are worse than the baseline's
/// are rejected, and the best point is never one of them.
#[test]
fn the_quality_guard_rejects_faster_but_worse_points() {
    let tmp = tempfile::tempdir().unwrap();
    let body = cpu_campaign("guard", "name = \"exhaustive\"", "trials = 100")
        .replace("paths = [\"", "per_class = 1\npaths = [\"")
        .replace("tai12a.dat", "tai40a.dat")
        .replace("iterations = 300", "iterations = 2000")
        .replace("starts = 2 }", "starts = 16 }")
        + "\n[quality]\nmargin_percent = 0.0\n";
    let path = write_campaign(tmp.path(), "guard", &body);
    let out = tmp.path().join("out");
    ok(&[
        "tune",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let store = results::Store::open(out.join("results.sqlite")).unwrap();
    let campaign = &store.campaigns().unwrap()[0];
    let runs = store.runs(campaign.id).unwrap();
    let baseline_run = runs.iter().find(|r| r.strategy == "baseline").unwrap();
    let baseline_gap = store.evaluations_of_run(baseline_run.id).unwrap()[0]
        .gap_percent
        .unwrap();
    let evaluations = store.evaluations(campaign.id).unwrap();
    let rejected: Vec<_> = evaluations
        .iter()
        .filter(|e| e.status == results::EvaluationStatus::Rejected)
        .collect();
    assert!(
        !rejected.is_empty(),
        "nothing was worse than Ro-TS with 16 starts?"
    );
    for e in &rejected {
        assert!(e.gap_percent.unwrap() > baseline_gap, "{e:?}");
        assert!(
            e.time_s.is_some(),
            "a rejected point keeps what was measured: {e:?}"
        );
    }
    for e in evaluations
        .iter()
        .filter(|e| e.status == results::EvaluationStatus::Ok)
    {
        assert!(e.gap_percent.unwrap() <= baseline_gap + 1e-9, "{e:?}");
    }
}

/// The summary's figures are what the store's evaluations say, in the class's metric (time,
/// or the mean gap of a gap@budget campaign): the baseline value is the baseline run's, the
/// best value is the best accepted evaluation of the class's search (or the baseline, its
/// start), and the best point is one measured at that value. (It used to assert speedup >=
/// 0.999, which holds by construction because the baseline is every search's start.)
fn summary_agrees_with_the_store(
    store: &results::Store,
    campaign: i64,
    classes: &[serde_json::Value],
) {
    let runs = store.runs(campaign).unwrap();
    let evaluations = store.evaluations(campaign).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12);
    for c in classes {
        let class = c["class"].as_str().unwrap();
        let metric = c["metric"].as_str().unwrap_or("time");
        let value = |e: &results::EvaluationRow| match metric {
            "gap@budget" => e.gap_percent,
            "time" => e.time_s,
            other => panic!("this check knows time and gap@budget, not {other}"),
        };
        let baseline_run = runs
            .iter()
            .find(|r| r.class == class && r.strategy == "baseline")
            .unwrap_or_else(|| panic!("no baseline run for {class}"));
        let baseline = evaluations
            .iter()
            .find(|e| e.run_id == baseline_run.id)
            .and_then(value)
            .unwrap_or_else(|| panic!("no baseline {metric} for {class}"));
        let reported_baseline = c["baseline_value"].as_f64().unwrap();
        assert!(close(reported_baseline, baseline), "{c}: {baseline}");

        let search_run = runs
            .iter()
            .find(|r| r.class == class && r.strategy != "baseline" && r.strategy != "cross-class")
            .unwrap_or_else(|| panic!("no search run for {class}"));
        let accepted: Vec<&results::EvaluationRow> = evaluations
            .iter()
            .filter(|e| e.run_id == search_run.id && e.status == results::EvaluationStatus::Ok)
            .collect();
        let lowest = accepted
            .iter()
            .filter_map(|e| value(e))
            .fold(baseline, f64::min);
        let best = c["best_value"].as_f64().unwrap();
        assert!(
            close(best, lowest),
            "{c}: the best accepted {metric} is {lowest}"
        );
        if metric == "time" {
            let speedup = c["speedup"].as_f64().unwrap();
            assert!(close(speedup, baseline / best), "{c}");
        }

        let best_point: results::Point =
            serde_json::from_value(c["best_point"].clone()).expect("the best point as JSON");
        let best_key = best_point.key();
        let measured_at_best = accepted
            .iter()
            .any(|e| e.point.key() == best_key && value(e).is_some_and(|v| close(v, best)))
            || close(best, baseline);
        assert!(
            measured_at_best,
            "{c}: the best point was not measured at the best {metric}"
        );
    }
}

/// `--resume` after a change of what decides a trial's value is refused, naming the changed
/// keys and the fix, and leaves the store as it was; a change of budget or strategy is
/// accepted; a renamed campaign is refused instead of starting a second one in the store.
#[test]
fn resume_refuses_changed_measurement_settings_and_accepts_budget_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let body = cpu_campaign("settings", "name = \"random\"", "trials = 4");
    let path = write_campaign(tmp.path(), "settings", &body);
    let out = tmp.path().join("out");
    let (p, o) = (path.to_str().unwrap(), out.to_str().unwrap());
    ok(&["tune", p, "--out", o, "--quiet"]);
    let stored = || {
        let store = results::Store::open(out.join("results.sqlite")).unwrap();
        let c = store.campaigns().unwrap();
        assert_eq!(c.len(), 1, "{c:?}");
        (store.trials(c[0].id).unwrap().len(), c[0].settings.clone())
    };
    let (trials, settings) = stored();
    assert!(trials > 0);
    assert!(settings["measured_under"].is_object(), "{settings}");

    let refused = |edited: &str, keys: &[&str]| {
        std::fs::write(&path, edited).unwrap();
        let err = error_of(&["tune", p, "--out", o, "--quiet", "--resume"]);
        for key in keys {
            assert!(err.contains(key), "{key} not named: {err}");
        }
        assert!(err.contains("--fresh") && err.contains("--out"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            stored(),
            (trials, settings.clone()),
            "a refusal wrote nothing"
        );
    };
    refused(
        &body.replace("timed_runs = 1", "timed_runs = 2"),
        &["measurement.timed_runs (1 -> 2)", "Revert the settings in"],
    );
    refused(
        &body.replace("iterations = 300", "iterations = 400"),
        &["cpu.iterations (300 -> 400)"],
    );
    refused(
        &body.replace("seed = 7", "seed = 7\n[run]\nseeds = 2\n"),
        &["seeds ([7] -> [7,8])"],
    );
    refused(
        &body.replace(
            "\"tabu\", threads = 1, starts = 2",
            "\"tabu\", threads = 1, starts = 4",
        ),
        &["cpu.baseline"],
    );
    refused(
        &body.replace(
            "values = [\"tabu\"]",
            "values = [\"tabu\"]\n[cpu.overrides.constants]\nmax_threads = 2",
        ),
        &["cpu.overrides.constants"],
    );
    refused(
        &body
            .replace("nug12.dat\"", "nug12.dat\", \"{data}/chr12a.dat\"")
            .replace("{data}", repo("data/qap").to_str().unwrap()),
        &["instances.chr12a"],
    );
    // A class table that moves an instance into another class: the old class's runs would
    // stay beside the new one's, and export would ship both.
    refused(
        &body.replace(
            "\n[cpu]\n",
            "\n[instances.classes]\nfirst = [\"tai12a\"]\nsecond = [\"nug12\"]\n\n[cpu]\n",
        ),
        &[
            "instances.tai12a.campaign_class",
            "instances.nug12.campaign_class",
        ],
    );
    // The same instance name with other content is a change too.
    let copy = tmp.path().join("nug12.dat");
    let text = std::fs::read_to_string(repo("data/qap/nug12.dat")).unwrap();
    std::fs::write(&copy, text.replacen("12", "12\n", 1)).unwrap();
    let moved = body.replace(
        &format!("{}/nug12.dat", repo("data/qap").display()),
        copy.to_str().unwrap(),
    );
    // Said to be the instance file's doing, not the campaign's.
    refused(
        &moved,
        &[
            "instances.nug12.sha256",
            "Restore the instance file(s) of nug12 as they were measured",
        ],
    );
    std::fs::write(&copy, text).unwrap();
    // Same content elsewhere: accepted (below, with the budget change).

    // Budget and strategy may change: the campaign goes on from the store.
    std::fs::write(
        &path,
        moved
            .replace("trials = 4", "trials = 6")
            .replace("name = \"random\"", "name = \"hill-climbing\""),
    )
    .unwrap();
    ok(&["tune", p, "--out", o, "--quiet", "--resume"]);
    let (after, _) = stored();
    assert!(after >= trials, "{after} < {trials}");

    // Renamed: refused, naming both names, instead of a second campaign in the store.
    std::fs::write(
        &path,
        body.replace("name = \"settings\"", "name = \"renamed\""),
    )
    .unwrap();
    let err = error_of(&["tune", p, "--out", o, "--quiet", "--resume"]);
    assert!(
        err.contains("\"renamed\"") && err.contains("\"settings\"") && err.contains("--fresh"),
        "{err}"
    );
    assert_eq!(stored().0, after);
    // A new campaign in the folder is refused the same way: it would replace the folder's
    // summary, which export and report then read as the first campaign's.
    let summary = std::fs::read(out.join("summary.json")).unwrap();
    let err = error_of(&["tune", p, "--out", o, "--quiet"]);
    assert!(
        err.contains("\"renamed\"") && err.contains("\"settings\"") && err.contains("--out"),
        "{err}"
    );
    assert_eq!(stored().0, after);
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), summary);
    // The same campaign again: the hint runs it in its own folder.
    std::fs::write(&path, &body).unwrap();
    let err = error_of(&["tune", p, "--out", o, "--quiet"]);
    assert!(err.contains(&format!("--out {o} --resume")), "{err}");
}

/// A campaign that names no strategy searches with the documented default (guided climbing;
/// Pareto local search for a Pareto objective); one with only `[[search]]` entries runs just
/// those.
#[test]
fn a_campaign_without_a_strategy_uses_the_default() {
    use search::{Objective, Strategy};
    let body = cpu_campaign("default", "", "trials = 2").replace("[strategy]\n", "");
    let parse = |text: String| {
        engine::campaign::CampaignFile::parse(Path::new("default.toml"), text).expect("parses")
    };
    let searches = parse(body.clone()).searches().unwrap();
    assert_eq!(searches.len(), 1);
    assert_eq!(searches[0].0, Strategy::default_for(Objective::Time));
    assert!(matches!(
        searches[0].0,
        Strategy::GuidedClimbing {
            pairs: 4,
            restart_candidates: 32
        }
    ));
    let pareto = parse(body.replace("seed = 7", "seed = 7\nobjective = [\"time\", \"energy\"]"))
        .searches()
        .unwrap();
    assert!(matches!(pareto[0].0, Strategy::Pareto { .. }), "{pareto:?}");
    let only = parse(body + "\n[[search]]\nstrategy = { name = \"random\" }\n")
        .searches()
        .unwrap();
    assert_eq!(only.len(), 1);
    assert!(matches!(only[0].0, Strategy::Random { .. }), "{only:?}");
}

/// hwsw-synthetic's graphs are generated, so nothing published gives their gaps a reference:
/// every graph it searches or holds out has a value in the embedded table
/// (data/hwsw/synthetic-bks.csv, `mats instance reference`), and each CCR x R x size class
/// has one graph to search and one held out.
#[test]
fn hwsw_synthetic_has_a_reference_value_for_every_graph_and_a_holdout_per_class() {
    use engine::campaign::instances;
    let tmp = tempfile::tempdir().unwrap();
    let file =
        engine::campaign::CampaignFile::read(&repo("campaigns/hwsw-synthetic.toml")).unwrap();
    let bks = solvers::bks::BestKnown::embedded();
    let tuned = instances::resolve(&file, tmp.path(), &bks).unwrap();
    let held = instances::resolve_holdouts(&file, &tuned, tmp.path(), &bks).unwrap();
    for inst in tuned.iter().chain(&held) {
        let value = inst.record.best_known.unwrap_or_else(|| {
            panic!(
                "{} has no reference value: run scripts/hwsw-references.sh",
                inst.record.name
            )
        });
        assert!(value > 0, "{}", inst.record.name);
    }
    let classes = instances::classes(&file, &tuned, &held).unwrap();
    assert_eq!(classes.len(), 12, "{:?}", classes.keys());
    for (class, members) in &classes {
        assert_eq!(members.len(), 1, "{class}");
        let holdouts = held.iter().filter(|h| &h.record.class == class).count();
        assert_eq!(holdouts, 1, "{class}");
    }
    // The campaign validates as `mats tune` and the daemon check it.
    engine::tune::check(&file).unwrap();
}

/// `mats report` shows per class what summary.json says about the final re-measure and the
/// holdouts (the same means and spreads, read from the store), in the page, in verdicts.md
/// and on standard output.
fn report_shows_the_verdicts_of_the_summary(out: &Path, classes: &[serde_json::Value]) {
    let stdout = ok(&["report", out.to_str().unwrap()]);
    let page = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(page.contains("Verdict per class"), "no verdict section");
    let md = std::fs::read_to_string(out.join("report/verdicts.md")).unwrap();
    assert!(stdout.contains(md.trim()), "{stdout}");

    let store = results::Store::open(out.join("results.sqlite")).unwrap();
    let campaign = store.campaigns().unwrap().remove(0);
    let input = reports::ReportInput {
        instances: store
            .instances(campaign.id)
            .unwrap()
            .into_iter()
            .map(|r| r.record)
            .collect(),
        runs: store.runs(campaign.id).unwrap(),
        evaluations: store.evaluations(campaign.id).unwrap(),
        trials: store.trials(campaign.id).unwrap(),
        exports: store.exports(campaign.id).unwrap(),
        campaign,
        unfinished: None,
    };
    let verdicts = reports::verdict::class_verdicts(&input);
    assert_eq!(verdicts.len(), classes.len());
    let mut compared = 0;
    for c in classes {
        let class = c["class"].as_str().unwrap();
        let v = verdicts
            .iter()
            .find(|v| v.class == class)
            .expect("a verdict per class");
        assert!(
            v.with_spread,
            "{class}: the comparison was recorded in the store"
        );
        assert_eq!(
            v.reference, "default",
            "the quickstart names a default solver"
        );
        assert!(md.contains(class), "{md}");
        for (key, holdout) in [("final_check", false), ("holdout", true)] {
            let expected = &c[key];
            let (reference, tuned) = v.pair(holdout);
            if expected.is_null() {
                assert!(tuned.is_none(), "{class} {key}");
                continue;
            }
            compared += 1;
            let tuned = tuned.expect("the tuned point's figures");
            assert_eq!(
                tuned.mean,
                expected["values"]["tuned"]["mean"].as_f64().unwrap()
            );
            assert_eq!(
                tuned.sd,
                expected["values"]["tuned"]["sd"].as_f64().unwrap()
            );
            let reference = reference.expect("the reference's figures");
            // The default's figures, or the tuned point's where it is the default.
            let role = if expected["values"]["default"].is_null() {
                "tuned"
            } else {
                "default"
            };
            let want = expected["values"][role]["mean"].as_f64().unwrap();
            assert_eq!(reference.mean, want, "{class} {key}");
            let row = reports::verdict::show(Some(tuned), v.unit(), true);
            assert!(md.contains(&row), "{row} not in {md}");
        }
    }
    assert!(
        compared >= 1,
        "the quickstart re-measures at least one class"
    );
}

/// A strategy's settings are checked with the campaign (`--check`, and so `mats submit`),
/// naming the file and the line, not after the baseline was measured.
#[test]
fn bad_strategy_settings_are_refused_by_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    for (strategy, says) in [
        (
            "name = \"annealing\"\ninitial_temperature = -1",
            "initial_temperature",
        ),
        ("name = \"genetic\"\npopulation = 0", "population"),
        ("name = \"random\"\nbatch = 0", "batch"),
        ("name = \"pareto\"", "two objectives"),
        // The name itself, not the option after it; a missing field, not a fine option.
        (
            "name = \"hill-climber\"\nfirst_improvement = true",
            "`strategy.name`: unknown variant `hill-climber`",
        ),
        (
            "name = \"staged\"\nrestarts = 2",
            "`strategy`: missing field `order`",
        ),
    ] {
        let body = cpu_campaign("bad-strategy", strategy, "trials = 4");
        let path = write_campaign(tmp.path(), "bad-strategy", &body);
        let err = error_of(&["tune", path.to_str().unwrap(), "--check"]);
        // The [strategy] table's lines (its header is line 18).
        assert!(
            err.contains(says) && (err.contains("line 18") || err.contains("line 19")),
            "{strategy}: {err}"
        );
    }
}

/// A CPU space value the solver refuses fails `--check` by name, not every trial that
/// draws it (`starts = 0` passed and failed at run time; `threads = 0` ran as one thread,
/// a second point that duplicated `threads = 1`).
#[test]
fn space_values_the_cpu_solver_refuses_fail_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    for (param, values) in [("starts", "[0, 1, 2]"), ("threads", "[0, 1]")] {
        let body = cpu_campaign("refused-value", "name = \"random\"", "trials = 4").replace(
            "[strategy]",
            &format!("[cpu.overrides.params.{param}]\nvalues = {values}\n\n[strategy]"),
        );
        let path = write_campaign(tmp.path(), "refused-value", &body);
        let err = error_of(&["tune", path.to_str().unwrap(), "--check"]);
        assert!(
            err.contains(&format!("parameter `{param}` offers 0"))
                && err.contains("must be at least 1")
                && err.contains("refused-value.toml"),
            "{param}: {err}"
        );
        let ok_body = body.replace(values, "[1, 2]");
        std::fs::write(&path, ok_body).unwrap();
        assert!(mats(&["tune", path.to_str().unwrap(), "--check"])
            .status
            .success());
    }
}

/// What only the run found wrong, --check says: a name too long for a folder, an --out that
/// is a file, two instances of one name (with the campaign's line), `bayes` with no initial
/// points.
#[test]
fn names_outputs_and_strategy_options_the_run_would_refuse_fail_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let body = cpu_campaign("checked", "name = \"random\"", "trials = 4");
    let check = |body: &str, extra: &[&str]| {
        let path = write_campaign(tmp.path(), "checked", body);
        let mut args = vec!["tune", path_str(&path), "--check"];
        args.extend(extra);
        error_of(&args)
    };
    let long = "n".repeat(300);
    let e = check(
        &body.replace("name = \"checked\"", &format!("name = \"{long}\"")),
        &[],
    );
    assert!(
        e.contains("300 characters; at most 200") && e.contains("line 2"),
        "{e}"
    );
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let e = check(&body, &["--out", path_str(&file)]);
    assert!(e.contains("a-file is not a folder"), "{e}");
    let copy = tmp.path().join("twin");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(repo("data/qap/nug12.dat"), copy.join("nug12.dat")).unwrap();
    let e = check(
        &body.replace(
            "nug12.dat\"]",
            &format!("nug12.dat\", \"{}\"]", copy.join("nug12.dat").display()),
        ),
        &[],
    );
    assert!(
        e.contains("two instances are named nug12") && e.contains("checked.toml, line"),
        "{e}"
    );
    let e = check(
        &body.replace("name = \"random\"", "name = \"bayes\"\ninitial = 0"),
        &[],
    );
    assert!(e.contains("initial must be at least 1"), "{e}");
}

#[test]
fn a_campaign_whose_stderr_is_a_log_writes_progress_lines() {
    // The daemon, Slurm and nohup see no terminal: a bar would draw nothing.
    let tmp = tempfile::tempdir().unwrap();
    let body = cpu_campaign("logged", "name = \"random\"", "trials = 4");
    let path = write_campaign(tmp.path(), "logged", &body);
    let out = mats(&[
        "tune",
        path_str(&path),
        "--out",
        path_str(&tmp.path().join("out")),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("[00:00:") && l.contains("/4 trials")),
        "{err}"
    );
}

#[test]
fn the_final_check_guards_quality_against_the_baseline_on_the_same_seeds() {
    // 2opt on tai20a: the baseline's gap on the fresh seeds is above its gap on the search's
    // seeds by more than the margin; a guard against the search's figure refused the baseline
    // itself ("baseline failed, tuned failed"). The baseline runs 64 starts; 16 and 32 starts
    // reach its gap on the search's seed in a quarter and half of the work, so the search
    // picks one of them whatever the machine's load (a baseline of the least work, beside
    // points differing only in threads, was kept on a loaded one-core CI machine).
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
name = "guarded"
backend = "cpu"
seed = 1
objective = "time"

[instances]
paths = ["{data}/tai20a.dat"]

[cpu]
space = "{space}"
baseline = {{ algorithm = "2opt", threads = 1, starts = 64 }}

[cpu.overrides]
constants = {{ max_threads = 1 }}
[cpu.overrides.params.algorithm]
values = ["2opt"]

[strategy]
name = "exhaustive"
"#,
        data = repo("data/qap").display(),
        space = repo("spaces/qap-cpu.toml").display(),
    );
    let path = write_campaign(tmp.path(), "guarded", &body);
    let out = tmp.path().join("out");
    // The search picks by measured time: a few fresh runs guard against one freak timing.
    let mut check = serde_json::Value::Null;
    for _ in 0..5 {
        let summary: serde_json::Value = serde_json::from_str(&ok(&[
            "tune",
            path_str(&path),
            "--out",
            path_str(&out),
            "--quiet",
            "--json",
            "--fresh",
        ]))
        .unwrap();
        check = summary["classes"][0]["final_check"].clone();
        if !check.is_null() {
            break;
        }
    }
    assert!(
        !check.is_null(),
        "five searches kept the baseline (64 starts) over 16 or 32: nothing re-measured"
    );
    assert!(check["values"]["baseline"]["mean"].is_f64(), "{check}");
    assert!(check["winner"].is_string(), "{check}");
    // Where a role is refused it is named as such, never as a failure.
    for role in check["rejected"].as_array().into_iter().flatten() {
        assert_ne!(role, "baseline", "{check}");
    }
    // `bench strategies` replays the exhaustive run alone: the final check's evaluations
    // (other seeds, some refused) are not the space's values.
    let study = ok(&[
        "bench",
        "strategies",
        path_str(&out),
        "--seeds",
        "2",
        "--budgets",
        "50",
        "--strategies",
        "random",
    ]);
    assert!(study.contains("5 points, 0 failed"), "{study}");
}

/// A class whose baseline was measured but whose search the budget ended before its first
/// evaluation is not verified: with a default beside the baseline the final check would
/// measure both on fresh seeds, outside the budget, for a class that was never searched.
#[test]
fn a_class_the_budget_stopped_before_its_search_is_not_verified() {
    let tmp = tempfile::tempdir().unwrap();
    // One thread: the first class's exhaustive search is five points (starts 1 to 16), one
    // trial each; the sixth trial is the second class's baseline, and the budget ends there.
    let body = cpu_campaign("stopped", "name = \"exhaustive\"", "trials = 6")
        .replace(
            "baseline = {",
            "default = { algorithm = \"tabu\", threads = 1, starts = 1 }\nbaseline = {",
        )
        .replace(
            "[strategy]",
            "[cpu.overrides]\nconstants = { max_threads = 1 }\n\n[strategy]",
        );
    let path = write_campaign(tmp.path(), "stopped", &body);
    let out = tmp.path().join("out");
    let summary = tune_json(&path, &out);
    let classes = summary["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 2, "{summary}");
    assert!(classes[0]["final_check"].is_object(), "{summary}");
    let stopped = &classes[1];
    assert_eq!(stopped["evaluations"], 0, "{summary}");
    assert!(stopped["final_check"].is_null(), "{summary}");
    let store = results::Store::open(out.join("results.sqlite")).unwrap();
    let id = store.campaigns().unwrap()[0].id;
    let seeds: Vec<u64> = store
        .trials(id)
        .unwrap()
        .into_iter()
        .filter(|t| t.class == stopped["class"].as_str().unwrap())
        .map(|t| t.seed)
        .collect();
    // The baseline's trial on the search's seed, and nothing on fresh seeds.
    assert!(!seeds.is_empty(), "{summary}");
    assert!(seeds.iter().all(|&s| s < 1_000_000), "{seeds:?}");
}

/// A class the campaign's budget ended before stays in the summary, unsearched, and the run
/// says so (the table and summary.json used to lose it).
#[test]
fn classes_the_budget_never_reached_are_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let body = cpu_campaign("short", "name = \"exhaustive\"", "trials = 2");
    let path = write_campaign(tmp.path(), "short", &body);
    let out = tmp.path().join("out");
    let run = mats(&[
        "tune",
        path_str(&path),
        "--out",
        path_str(&out),
        "--quiet",
        "--json",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let classes = summary["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 2, "{summary}");
    let unsearched: Vec<&serde_json::Value> =
        classes.iter().filter(|c| c["evaluations"] == 0).collect();
    assert_eq!(unsearched.len(), 1, "{summary}");
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(
        said.contains("budget ended before class(es)")
            && said.contains(unsearched[0]["class"].as_str().unwrap()),
        "{said}"
    );
    // Export and report say what is missing (they used to pass it as a finished campaign).
    let never = unsearched[0]["class"].as_str().unwrap();
    for args in [
        vec![
            "export",
            path_str(&out),
            "--out",
            path_str(&tmp.path().join("t")),
        ],
        vec!["report", path_str(&out)],
    ] {
        let done = mats(&args);
        let err = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("stopped by its [budget]") && err.contains(never),
            "{args:?}: {err}"
        );
    }
}

/// A search that ends on the baseline still meets the default on fresh seeds, and export ships
/// the winner: the final re-measure used to be skipped there, so a default far better than the
/// baseline (which the report told users to keep) was never exported.
#[test]
fn a_search_that_keeps_the_baseline_still_meets_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
name = "kept"
backend = "cpu"
seed = 1
objective = "gap@budget"

[run]
budget_s = 0.05
seeds = 2

[instances]
paths = ["{data}/tai12a.dat"]

[cpu]
space = "{space}"
baseline = {{ algorithm = "2opt", threads = 1, starts = 16 }}
default = {{ algorithm = "tabu", threads = 1, starts = 1 }}

[cpu.overrides]
constants = {{ max_threads = 1 }}

[strategy]
name = "hill-climbing"

[budget]
# One evaluation: the search ends where it starts, on the baseline.
cost_percent = 0.2
production_runs = 500
"#,
        data = repo("data/qap").display(),
        space = repo("spaces/qap-cpu.toml").display(),
    );
    let path = write_campaign(tmp.path(), "kept", &body);
    let out = tmp.path().join("out");
    let summary: serde_json::Value = tune_json(&path, &out);
    let class = &summary["classes"][0];
    assert_eq!(class["best_point"]["algorithm"], "2opt", "{class}");
    let check = &class["final_check"];
    assert_eq!(check["points"]["default"]["algorithm"], "tabu", "{check}");
    // Robust tabu search reaches tai12a's optimum in 50 ms; 16 2-opt descents do not.
    assert_eq!(check["winner"], "default", "{check}");
    let tuned = tmp.path().join("tuned");
    let said = ok(&["export", path_str(&out), "--out", path_str(&tuned)]);
    assert!(said.contains("so the default is exported"), "{said}");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tuned.join("index.json")).unwrap()).unwrap();
    let bundle = index["classes"][class["class"].as_str().unwrap()]["bundles"]["quality"]
        .as_str()
        .unwrap()
        .to_string();
    let manifest = std::fs::read_to_string(tuned.join(bundle).join("manifest.json")).unwrap();
    assert!(manifest.contains("\"tabu\""), "{manifest}");
    // Another campaign's export in the folder is not replaced unasked.
    let mut other = index.clone();
    other["campaign"] = "other".into();
    std::fs::write(tuned.join("index.json"), other.to_string()).unwrap();
    let refused = error_of(&["export", path_str(&out), "--out", path_str(&tuned)]);
    assert!(
        refused.contains("campaign \"other\"") && refused.contains("--replace"),
        "{refused}"
    );
    ok(&[
        "export",
        path_str(&out),
        "--out",
        path_str(&tuned),
        "--replace",
    ]);
    let report = ok(&["report", path_str(&out)]);
    let page = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(
        page.contains("no point better than the baseline was found")
            && page.contains("mats export ships the default point"),
        "{report}"
    );
    #[cfg(unix)]
    reads_without_write_access(tmp.path(), &out);
}

/// A bundle tuned for the time to a target gap stops at that gap, as its trials did, and says
/// when it got there (it used to run the whole cap with no target).
#[test]
fn a_time_to_target_bundle_stops_at_its_target() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
name = "to-target"
backend = "cpu"
seed = 1
objective = "time-to-target"

[run]
target_gap_percent = 2.0
cap_s = 20.0
seeds = 1

[instances]
paths = ["{data}/tai12a.dat"]

[cpu]
space = "{space}"
baseline = {{ algorithm = "tabu", threads = 1, starts = 1 }}

[cpu.overrides]
constants = {{ max_threads = 1 }}

[strategy]
name = "hill-climbing"

[budget]
trials = 2
"#,
        data = repo("data/qap").display(),
        space = repo("spaces/qap-cpu.toml").display(),
    );
    let path = write_campaign(tmp.path(), "to-target", &body);
    let out = tmp.path().join("out");
    ok(&["tune", path_str(&path), "--out", path_str(&out), "--quiet"]);
    let tuned = tmp.path().join("tuned");
    ok(&["export", path_str(&out), "--out", path_str(&tuned)]);
    let started = Instant::now();
    let run = mats(&[
        "solve",
        "--tuned",
        path_str(&tuned),
        repo("data/qap/tai12a.dat").to_str().unwrap(),
        "--json",
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    // Robust tabu search is within 2% of tai12a's optimum in milliseconds; the cap is 20 s.
    assert!(started.elapsed() < Duration::from_secs(10), "{err}");
    assert!(err.contains("stops at a gap of 2%"), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(report["target"]["reached_after_s"].is_f64(), "{report}");
    assert!(report["gap_percent"].as_f64().unwrap() <= 2.0, "{report}");
}

/// `mats results` and `mats report` read a campaign folder the user cannot write (an archived
/// or a colleague's): opening the store used to switch its journal, which needs write access.
#[cfg(unix)]
fn reads_without_write_access(tmp: &Path, out: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    let set = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    // No -wal or -shm left behind by the writer: a finished campaign's folder as archived.
    for extra in ["results.sqlite-wal", "results.sqlite-shm"] {
        let _ = std::fs::remove_file(out.join(extra));
    }
    set(tmp, 0o755);
    set(out, 0o555);
    set(&out.join("results.sqlite"), 0o444);
    let report_dir = tempfile::tempdir().unwrap();
    set(report_dir.path(), 0o777);
    // SAFETY: reads the effective user id.
    let root = unsafe { libc::geteuid() } == 0;
    // A copy nobody can reach: the build folder may sit under a folder only its owner may
    // enter (a clean clone in a private temporary folder).
    let exe = tmp.join("mats-reader");
    std::fs::copy(env!("CARGO_BIN_EXE_mats"), &exe).unwrap();
    set(&exe, 0o755);
    let run = |args: &[&str]| {
        let mut command = Command::new(&exe);
        command.args(args);
        if root {
            // Root writes anywhere: read as nobody.
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                command.pre_exec(|| {
                    if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        command.output().unwrap()
    };
    let csv = run(&["results", path_str(out), "--csv"]);
    let err = String::from_utf8_lossy(&csv.stderr);
    assert!(csv.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&csv.stdout).lines().count() > 1);
    let report = run(&[
        "report",
        path_str(out),
        "--out",
        path_str(&report_dir.path().join("r")),
    ]);
    let err = String::from_utf8_lossy(&report.stderr);
    assert!(report.status.success(), "{err}");
    set(out, 0o755);
    set(&out.join("results.sqlite"), 0o644);
}

/// On an instance without a best-known value, gaps are to the baseline's best result; the
/// baseline's own gap is to the same numbers (it was each seed to itself: 0%, while the same
/// point in the search, on the same trials, had 1%).
#[test]
fn the_baseline_gap_without_a_best_known_value_is_the_searchs() {
    let tmp = tempfile::tempdir().unwrap();
    common::edited_qap("tai12a", &tmp.path().join("private12.dat"));
    let dir = tmp.path().display();
    let body = gap_campaign(
        "private",
        "budget_s = 0.02\nseeds = 4",
        &format!("paths = [\"{dir}/private12.dat\"]"),
        "",
        "[strategy]\nname = \"hill-climbing\"\n\n[budget]\ntrials = 12",
    );
    let path = write_campaign(tmp.path(), "private", &body);
    let out = tmp.path().join("out");
    ok(&["tune", path_str(&path), "--out", path_str(&out), "--quiet"]);
    let store = results::Store::open_existing(out.join("results.sqlite")).unwrap();
    let campaign = store.campaigns().unwrap()[0].id;
    let runs = store.runs(campaign).unwrap();
    let gap_in = |strategy: &str| {
        let run = runs.iter().find(|r| r.strategy == strategy).unwrap();
        store
            .evaluations_of_run(run.id)
            .unwrap()
            .into_iter()
            .find(|e| e.point.get("algorithm").map(|v| v.to_string()) == Some("2opt".into()))
            .and_then(|e| e.gap_percent)
    };
    let (baseline, searched) = (gap_in("baseline"), gap_in("hill-climbing"));
    assert!(baseline.is_some() && searched.is_some());
    assert!(
        (baseline.unwrap() - searched.unwrap()).abs() < 1e-9,
        "{baseline:?} vs {searched:?}"
    );
}

/// A held-out instance without a best-known value: the roles share one reference (the best
/// any of them found), so a weaker role shows a gap. Each trial was its own reference, which
/// gave every role 0% there and a verdict of "no difference" whatever was measured.
#[test]
fn holdout_roles_without_a_best_known_value_share_one_reference() {
    let tmp = tempfile::tempdir().unwrap();
    common::edited_qap("tai20a", &tmp.path().join("private20.dat"));
    let dir = tmp.path().display();
    let body = gap_campaign(
        "private-holdout",
        "budget_s = 0.05\nseeds = 3",
        &format!(
            "paths = [\"{{data}}/tai12a.dat\"]\nholdout = [\"{dir}/private20.dat\"]\n\
             classes = {{ small = [\"tai12a\", \"private20\"] }}"
        ),
        "default = { algorithm = \"tabu\", threads = 1, starts = 1 }",
        "[strategy]\nname = \"hill-climbing\"\n\n[budget]\ntrials = 6",
    );
    let path = write_campaign(tmp.path(), "private-holdout", &body);
    let out = tmp.path().join("out");
    let summary: serde_json::Value = tune_json(&path, &out);
    let classes = summary["classes"].as_array().unwrap();
    let h = classes
        .iter()
        .find_map(|c| (!c["holdout"].is_null()).then(|| &c["holdout"]))
        .unwrap_or_else(|| panic!("no holdout comparison: {summary}"));
    assert_eq!(h["instances"], serde_json::json!(["private20"]), "{h}");
    let mean = |role: &str| h["values"][role]["mean"].as_f64();
    let (baseline, default) = (mean("baseline"), mean("default"));
    assert!(baseline.is_some() && default.is_some(), "{h}");
    // 16 2-opt descents end well above a tabu search of the same time on n = 20.
    assert!(
        baseline.unwrap() > default.unwrap() + 0.1,
        "the roles' gaps must differ: {h}"
    );
    assert!(default.unwrap() >= 0.0, "{h}");
}

/// A class table's names are the instances' classes everywhere: the store (`mats results`),
/// the report, the reasons of a baseline that failed (they were filtered by the feature
/// class, so a class table's campaign gave "failed ...: " and nothing after).
#[test]
fn a_class_table_names_the_instances_classes_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let body = |name: &str, ants: u64| {
        format!(
            r#"
name = "{name}"
backend = "cpu"
objective = "gap@budget"

[run]
budget_s = 0.02
seeds = 1

[instances]
paths = ["{data}/burma14.tsp", "{data}/gr17.tsp"]

[instances.classes]
small = ["burma14", "gr17"]

[cpu]
space = "{space}"
baseline = {{ algorithm = "as", ants = {ants}, candidates = 10, alpha = "1", beta = "2", rho = "0.5", threads = 1 }}

[cpu.overrides]
constants = {{ max_threads = 1 }}

[cpu.overrides.params.ants]
values = [10, 20, 20000000]

[strategy]
name = "hill-climbing"

[budget]
trials = 4
"#,
            data = repo("data/tsp").display(),
            space = repo("spaces/tsp-cpu.toml").display(),
        )
    };
    let path = write_campaign(tmp.path(), "table", &body("table", 10));
    let out = tmp.path().join("out");
    tune_json(&path, &out);
    let all: serde_json::Value =
        serde_json::from_str(&ok(&["results", path_str(&out), "--json"])).unwrap();
    // The CPU's own measurement settings, not the GPU's defaults (energy window, sampling).
    let measurement = &all["campaign"]["settings"]["measurement"];
    assert!(measurement["timed_runs"].is_u64(), "{measurement}");
    assert!(
        measurement.get("energy_window_s").is_none(),
        "{measurement}"
    );
    let trials = all["trials"].as_array().unwrap();
    assert!(!trials.is_empty());
    assert!(trials.iter().all(|t| t["class"] == "small"), "{trials:?}");
    let report = tmp.path().join("report");
    ok(&["report", path_str(&out), "--out", path_str(&report)]);
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(!page.contains("tsp:"), "a feature class in the report");

    let failing = write_campaign(tmp.path(), "failing", &body("failing", 20_000_000));
    let err = common::error_of(&[
        "tune",
        path_str(&failing),
        "--out",
        path_str(&tmp.path().join("failing-out")),
        "--quiet",
    ]);
    assert!(err.contains("burma14 [failed]: 20000000 ants"), "{err}");
}

/// With a class table, `solve --tuned` on a file the campaign measured runs the class the
/// campaign put it in, holdouts included (it went by features alone: esc16a, a class of its
/// own, ran another class's bundle); an edited copy goes by its features.
#[test]
fn solve_tuned_runs_a_class_tables_own_class_for_the_campaigns_files() {
    let tmp = tempfile::tempdir().unwrap();
    let body = gap_campaign(
        "members",
        "budget_s = 0.02\nseeds = 1",
        "paths = [\"{data}/tai12a.dat\", \"{data}/chr12a.dat\", \"{data}/esc16a.dat\"]\n\
         holdout = [\"{data}/nug12.dat\"]\n\
         [instances.classes]\n\
         wide = [\"tai12a\", \"chr12a\", \"nug12\"]\n\
         zeta = [\"esc16a\"]",
        "",
        "[strategy]\nname = \"random\"\n\n[budget]\ntrials = 24",
    );
    let path = write_campaign(tmp.path(), "members", &body);
    let out = tmp.path().join("out");
    tune_json(&path, &out);
    let tuned = tmp.path().join("tuned");
    ok(&["export", path_str(&out), "--out", path_str(&tuned)]);
    let class_of = |file: &str| -> serde_json::Value {
        let report: serde_json::Value = serde_json::from_str(&ok(&[
            "solve",
            "--tuned",
            path_str(&tuned),
            file,
            "--time-limit",
            "0.05",
            "--json",
        ]))
        .unwrap();
        report["tuned"].clone()
    };
    for (name, class) in [("esc16a", "zeta"), ("tai12a", "wide"), ("nug12", "wide")] {
        let file = repo(&format!("data/qap/{name}.dat"));
        let tuned = class_of(path_str(&file));
        assert_eq!(tuned["class"], class, "{name}: {tuned}");
        assert_eq!(tuned["exact"], true, "{name}: {tuned}");
    }
    // A copy with other content is another file: its features decide, not its name.
    let copy = tmp.path().join("esc16a.dat");
    let text = std::fs::read_to_string(repo("data/qap/esc16a.dat")).unwrap();
    std::fs::write(&copy, format!("{text}\n")).unwrap();
    assert_eq!(class_of(path_str(&copy))["exact"], false);
}

/// A class table name with `@` (read back as a budget's class: `a@1s` became class `a` at
/// 1 s in the export) and a class of holdouts alone (never compared) are refused by --check.
#[test]
fn class_tables_refuse_budget_like_names_and_classes_of_holdouts_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let body = |classes: &str, holdout: &str| {
        format!(
            r#"
name = "t"
backend = "cpu"
objective = "gap@budget"

[run]
budget_s = 0.02

[instances]
paths = ["{data}/tai12a.dat", "{data}/nug12.dat"]
holdout = [{holdout}]

[instances.classes]
{classes}

[cpu]
space = "{space}"
baseline = {{ algorithm = "tabu", threads = 1, starts = 1 }}
"#,
            data = repo("data/qap").display(),
            space = repo("spaces/qap-cpu.toml").display(),
        )
    };
    let check = |name: &str, text: String| {
        let path = write_campaign(tmp.path(), name, &text);
        common::error_of(&["tune", path_str(&path), "--check"])
    };
    // per_class keeps the first by name, whatever the table's order, and says what it drops.
    let path = write_campaign(
        tmp.path(),
        "per",
        &body(r#"a = ["tai12a", "nug12"]"#, "")
            .replace("holdout = []", "holdout = []\nper_class = 1"),
    );
    let out = mats(&["tune", path_str(&path), "--check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("keeps the first 1 by name; not tuned: tai12a"),
        "{stderr}"
    );
    let err = check(
        "at",
        body(
            r#""a@1s" = ["tai12a"]
b = ["nug12"]"#,
            "",
        ),
    );
    assert!(
        err.contains("\"a@1s\"") && err.contains("without `@`"),
        "{err}"
    );
    let holdout = format!("\"{}\"", repo("data/qap/tai20a.dat").display());
    let err = check(
        "alone",
        body(
            r#"a = ["tai12a", "nug12"]
b = ["tai20a"]"#,
            &holdout,
        ),
    );
    assert!(
        err.contains("holdout tai20a is listed in class b, which has no tuning instance"),
        "{err}"
    );
}

/// A campaign whose search finished within its trial budget is not "stopped by its budget"
/// because the final re-measure's trials took the count past the limit (export then warned
/// that a finished campaign was unfinished); one the budget did cut short says so.
#[test]
fn only_a_budget_that_cut_work_short_stops_a_campaign() {
    let tmp = tempfile::tempdir().unwrap();
    let body = |trials: u32| {
        gap_campaign(
            "fits",
            "budget_s = 0.01\nseeds = 1",
            "paths = [\"{data}/tai12a.dat\"]",
            "",
            &format!("[strategy]\nname = \"exhaustive\"\n\n[budget]\ntrials = {trials}"),
        )
    };
    // The space has 10 points on one instance and one seed: 10 trials, then the re-measure.
    let path = write_campaign(tmp.path(), "fits", &body(10));
    let summary = tune_json(&path, &tmp.path().join("fits"));
    assert!(summary["new_trials"].as_u64().unwrap() > 10, "{summary}");
    assert!(summary["stopped"].is_null(), "{summary}");
    let path = write_campaign(tmp.path(), "cut", &body(5));
    let summary = tune_json(&path, &tmp.path().join("cut"));
    assert_eq!(summary["stopped"], "trial budget spent", "{summary}");
}

/// In a fixed-work campaign the holdouts are guarded like the fresh seeds: a role whose
/// solutions are worse than the baseline's there by more than the margin is refused, not
/// counted as the faster winner.
#[test]
fn holdouts_are_quality_guarded_in_fixed_work() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        r#"
name = "held-guard"
backend = "cpu"
seed = 1
objective = "time"

[instances]
paths = ["{data}/tai12a.dat"]
holdout = ["{data}/tai20a.dat"]
classes = {{ all = ["tai12a", "tai20a"] }}

[cpu]
space = "{space}"
iterations = 40
baseline = {{ algorithm = "tabu", threads = 1, starts = 16 }}
default = {{ algorithm = "tabu", threads = 1, starts = 1 }}

[cpu.overrides]
constants = {{ max_threads = 1 }}
[cpu.overrides.params.algorithm]
values = ["tabu"]

[quality]
margin_percent = 0

[strategy]
name = "exhaustive"

[measurement]
warmup_runs = 0
timed_runs = 1
"#,
        data = repo("data/qap").display(),
        space = repo("spaces/qap-cpu.toml").display(),
    );
    let path = write_campaign(tmp.path(), "held-guard", &body);
    let summary = tune_json(&path, &tmp.path().join("out"));
    let h = &summary["classes"][0]["holdout"];
    // 40 tabu iterations from one start against sixteen starts on tai20a, three seeds.
    let rejected: Vec<&str> = h["rejected"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r.as_str()).collect())
        .unwrap_or_default();
    assert!(rejected.contains(&"default"), "{h}");
    assert!(h["values"]["default"].is_null(), "{h}");
    assert_ne!(h["winner"], "default", "{h}");
}
