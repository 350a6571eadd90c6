//! The GPU machine's study scripts (`scripts/gpu-sweep.sh`, `scripts/gpu-determinism.sh`,
//! `scripts/qap-acoqap-beside.sh`) on this machine, with a stand-in `mats` (and acoqap) that
//! answers at once: the queue over several GPUs, the gaps, the checks of every job line before
//! any run, the verdicts of the determinism check, the peer's answers re-scored.
//! What the scripts measure needs a GPU; what they compute and report does not.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name)
}

/// A stand-in `mats` whose `solve --json` prints `body` (a shell snippet that may read "$*").
fn fake_mats(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("mats");
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The data folder the scripts look instances up in: ta101's row of Taillard's table and one
/// QAPLIB file.
fn data(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("taillard-pfsp/taillard")).unwrap();
    std::fs::create_dir_all(data.join("taillard-pfsp/vrf")).unwrap();
    std::fs::create_dir_all(data.join("qaplib/instances")).unwrap();
    std::fs::write(
        data.join("taillard-pfsp/bks.csv"),
        "name,n_jobs,m_machines,time_seed,file,index_in_file,bks\n\
         ta101,200,20,1,taillard/tai200_20.txt,1,11158\n",
    )
    .unwrap();
    std::fs::write(data.join("taillard-pfsp/vrf/bks.csv"), "name\n").unwrap();
    std::fs::write(data.join("qaplib/instances/tai60a.dat"), "60\n").unwrap();
    data
}

fn run(script_name: &str, dir: &Path, mats: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(script(script_name))
        .args(args)
        .env("MATS", mats)
        .env("DATA", data(dir))
        .env("OUT", dir.join("out"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("bash runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_sweep_spreads_runs_over_the_gpus_and_reports_their_gaps() {
    let dir = tempfile::tempdir().unwrap();
    // Seed 2 finds a worse flowshop makespan; a QAP run reports mats' own gap; the run with
    // `--fail` exits without an answer, as a faulting kernel would.
    let mats = fake_mats(
        dir.path(),
        r#"case "$*" in
*--fail*) echo "mats: error: the kernel faulted" >&2; exit 1 ;;
*tai60a*) echo '{"objective": 7205962, "gap_percent": 0.25, "solution": [0,
1]}' ;;
*"--seed 2"*) echo '{"objective": 11300, "solution": [1]}' ;;
*) echo '{"objective": 11200, "solution": [1]}' ;;
esac"#,
    );
    let jobs = dir.path().join("jobs.txt");
    std::fs::write(
        &jobs,
        "# a comment, then a blank line\n\n\
         default|pfsp:ta101|1|60|\n\
         default|pfsp:ta101|2|60|\n\
         tenure|qap:tai60a|1|10|--tenure-range 0.4,0.8\n\
         broken|pfsp:ta101|1|60|--fail\n",
    )
    .unwrap();
    let out = run(
        "gpu-sweep.sh",
        dir.path(),
        &mats,
        &[jobs.to_str().unwrap()],
        &[("GPUS", "0 1")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("4 runs over GPUs 0 1"));
    assert!(
        text(&out.stderr).contains("FAILED broken ta101 seed 1"),
        "{}",
        text(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.path().join("out/sweep.csv")).unwrap();
    let mut rows: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    rows.sort();
    let cells = |r: &Vec<String>| (r[0].clone(), r[2].clone(), r[5].clone(), r[6].clone());
    let got: Vec<_> = rows.iter().map(cells).collect();
    let row = |l: &str, s: &str, o: &str, g: &str| (l.into(), s.into(), o.into(), g.into());
    assert_eq!(
        got,
        vec![
            row("broken", "1", "", ""),
            // 100 (11200 - 11158) / 11158 and 100 (11300 - 11158) / 11158.
            row("default", "1", "11200", "0.376"),
            row("default", "2", "11300", "1.273"),
            row("tenure", "1", "7205962", "0.25"),
        ]
    );
    // Each run went to one of the two GPUs; flags with commas stay one quoted field.
    assert!(rows.iter().all(|r| r[4] == "0" || r[4] == "1"), "{rows:?}");
    assert!(csv.contains("\"--tenure-range 0.4,0.8\""), "{csv}");
    // The summary: the mean gap per label over its runs with an answer.
    let summary = text(&out.stdout);
    assert!(summary.contains("default,1,2,0.825"), "{summary}");
    assert!(summary.contains("tenure,1,1,0.250"), "{summary}");
}

#[test]
fn a_bad_job_line_is_named_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    // Any run at all would leave this file behind.
    let ran = dir.path().join("ran");
    let mats = fake_mats(dir.path(), &format!("touch {}", ran.display()));
    for (line, says) in [
        ("a|pfsp:ta999|1|60|", "unknown instance ta999"),
        ("a|qap:nope|1|10|", "nope.dat"),
        ("a|tsp:d198|1|10|", "unknown family 'tsp'"),
        ("a|pfsp:ta101|x|60|", "seed 'x' is not a number"),
        ("a|pfsp:ta101|1|soon|", "seconds 'soon' is not a number"),
        ("a,b|pfsp:ta101|1|60|", "the label must be"),
    ] {
        let jobs = dir.path().join("jobs.txt");
        std::fs::write(&jobs, format!("ok|pfsp:ta101|1|60|\n{line}\n")).unwrap();
        let out = run(
            "gpu-sweep.sh",
            dir.path(),
            &mats,
            &[jobs.to_str().unwrap()],
            &[("GPUS", "0")],
        );
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{line}: accepted");
        assert!(err.contains("run 2") && err.contains(says), "{line}: {err}");
        assert!(!ran.exists(), "{line}: a run started before the check");
    }
}

#[test]
fn the_determinism_check_fails_on_answers_that_differ_or_are_missing() {
    let verdict = |body: &str| {
        let dir = tempfile::tempdir().unwrap();
        let mats = fake_mats(dir.path(), body);
        let out = run(
            "gpu-determinism.sh",
            dir.path(),
            &mats,
            &[],
            &[("LOAD_SETTLE", "0")],
        );
        (out.status.success(), text(&out.stderr))
    };
    // The same answer every time: all three cases pass.
    let (ok, err) = verdict(r#"echo '{"objective": 6271, "solution": [3, 1, 2]}'"#);
    assert!(ok, "{err}");
    // The same makespan but another sequence on every other call: a different answer.
    let (ok, err) = verdict(
        r#"f=$(dirname "$0")/calls; n=$(( $(cat "$f" 2>/dev/null || echo 0) + 1 )); echo $n > "$f"
echo "{\"objective\": 6271, \"solution\": [$n]}""#,
    );
    assert!(!ok && err.contains("DIFFERENT: ig-block"), "{err}");
    // No answer at all (both solves fail the same way) is a failure, never "the same".
    let (ok, err) = verdict(r#"echo "mats: error: no CUDA driver" >&2; exit 1"#);
    assert!(!ok && err.contains("NO ANSWER: ig-block"), "{err}");
}

/// A stand-in acoqap: each process reports the objective "Best Solution in try 0 is V" for its
/// seed (1000 + seed) and prints its permutation line; with `lie` set, process seed 2 reports
/// a value its permutation does not score.
fn fake_acoqap(dir: &Path, lie: bool) -> PathBuf {
    let path = dir.join("acoqap");
    let lie = if lie {
        "[ \"$seed\" = 2 ] && v=1"
    } else {
        "true"
    };
    std::fs::write(
        &path,
        format!(
            "#!/usr/bin/env bash\nwhile [ $# -gt 0 ]; do [ \"$1\" = --seed ] && seed=$2; shift; done\n\
             v=$((1000 + seed)); {lie}\necho \"try 0, iteration 3\"\n\
             echo \" Best Solution in try 0 is $v\"\necho \"solution $((1000 + seed)) 2 1\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn the_acoqap_comparison_rescores_every_answer_and_reports_best_and_mean() {
    let dir = tempfile::tempdir().unwrap();
    // `solve` answers 1000 against a best known of 1000; `instance score` scores a permutation
    // line by its first value, so a process's score is 1000 + its seed.
    let mats = fake_mats(
        dir.path(),
        r#"case "$1" in
solve) echo '{"objective": 1000, "best_known": 1000, "solution": [1]}' ;;
instance) v=$(awk '{ print $2 }' "$(echo "$*" | sed 's/.*--solution \([^ ]*\).*/\1/')")
   echo "{\"objective\": $v}" ;;
esac"#,
    );
    let data = data(dir.path());
    let qaplib = data.join("qaplib/instances");
    let beside = |acoqap: &Path, seeds: &str| {
        let acoqap = acoqap.to_str().unwrap();
        let qaplib = qaplib.to_str().unwrap();
        let vars = [
            ("ACOQAP", acoqap),
            ("QAPLIB", qaplib),
            ("PROCS", "3"),
            ("SECONDS_FIXED", "1"),
        ];
        run(
            "qap-acoqap-beside.sh",
            dir.path(),
            &mats,
            &[seeds, "tai60a"],
            &vars,
        )
    };
    let out = beside(&fake_acoqap(dir.path(), false), "1 2");
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Seed 2's processes take seeds 4-6: best 1004 (0.400%), mean 1005 (0.500%).
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("tai60a seed 2 (1 s): mats 1000 (0.000%")
            && stdout.contains("acoqap best 0.400%, mean 0.500% of 3 processes"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(dir.path().join("out/acoqap.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 6, "{csv}");
    assert!(csv.contains("tai60a,1,3,1,1003,1000,0.300"), "{csv}");
    assert!(dir.path().join("out/acoqap-logs.tar.gz").exists());

    // A process whose permutation does not score what it reported stops the comparison.
    let out = beside(&fake_acoqap(&dir.path().join("out"), true), "1");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("reported 1 but its permutation scores 1002"),
        "{}",
        text(&out.stderr)
    );
}
