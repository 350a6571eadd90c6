//! Beyond one foreground process, on the CPU (no GPU needed): the per-device lock across
//! processes (a fake device id stands for a GPU), `mats tune --shard` + `mats merge` against
//! one process, and `mats daemon` with its clients: socket permissions, refusal of other
//! users, bad requests, validation at submit, campaigns sharing a device with a plain
//! `mats tune`, cancel and logs, and a restart after kill -9.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(rel)
}

fn mats_cmd(env: &[(&str, &Path)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mats"));
    c.current_dir(repo(""));
    // Nothing of the user's: each test has its own runtime, state and lock folders.
    for var in [
        "MATS_CPU_DEVICE_LOCK",
        "MATS_LOCK_DIR",
        "MATS_LOCK_TRACE",
        "MATS_DAEMON_SOCKET",
    ] {
        c.env_remove(var);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn run(env: &[(&str, &Path)], args: &[&str]) -> Output {
    mats_cmd(env)
        .args(args)
        .output()
        .expect("the mats binary runs")
}

fn ok(env: &[(&str, &Path)], args: &[&str]) -> String {
    let out = run(env, args);
    assert!(
        out.status.success(),
        "mats {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A CPU campaign over QAP instances, exhaustive over `starts` (deterministic trials:
/// fixed iterations, the same points in the same order in any process).
fn campaign(dir: &Path, name: &str, instances: &[&str], iterations: u64, starts: &str) -> PathBuf {
    let paths: Vec<String> = instances
        .iter()
        .map(|i| format!("\"{}\"", repo(&format!("data/qap/{i}.dat")).display()))
        .collect();
    let body = format!(
        r#"
name = "{name}"
backend = "cpu"
seed = 7

[instances]
paths = [{paths}]

[cpu]
space = "{space}"
iterations = {iterations}
baseline = {{ algorithm = "tabu", threads = 1, starts = 1 }}

[cpu.overrides.params.algorithm]
values = ["tabu"]
[cpu.overrides.params.threads]
values = [1]
[cpu.overrides.params.starts]
values = {starts}

[strategy]
name = "exhaustive"

[budget]
trials = 500

[measurement]
warmup_runs = 0
timed_runs = 1
"#,
        paths = paths.join(", "),
        space = repo("spaces/qap-cpu.toml").display(),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, body).unwrap();
    path
}

/// Iterations for a trial of about the same wall time in this build: CI runs the debug
/// build, whose solvers are many times slower.
fn iterations(release: u64) -> u64 {
    if cfg!(debug_assertions) {
        (release / 20).max(100)
    } else {
        release
    }
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// (point, instance, seed) -> (status, objective) of a store's trials with the given seeds.
type TrialMap = BTreeMap<(String, String, u64), (String, Option<i64>)>;

fn trials(dir: &Path, seeds: &[u64]) -> TrialMap {
    let store = results::Store::open_existing(dir.join("results.sqlite")).unwrap();
    store.integrity_check().unwrap();
    let c = &store.campaigns().unwrap()[0];
    let mut out = BTreeMap::new();
    for t in store.trials(c.id).unwrap() {
        // An interrupted attempt is not a measurement; its retry is.
        if seeds.contains(&t.seed) && t.status != results::TrialStatus::Crashed {
            let prev = out.insert(
                (t.point.key(), t.instance.clone(), t.seed),
                (format!("{:?}", t.status), t.measurement.objective),
            );
            assert!(
                prev.is_none(),
                "{:?} measured twice in {}",
                t,
                dir.display()
            );
        }
    }
    out
}

/// Leases of the lock trace: (key, pid, start, end), by start.
fn leases(trace: &Path) -> Vec<(String, u32, u128, u128)> {
    let text = std::fs::read_to_string(trace).unwrap_or_default();
    let mut v: Vec<_> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 4, "{l}");
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect();
    v.sort_by_key(|x| x.2);
    v
}

fn assert_no_overlap(leases: &[(String, u32, u128, u128)]) {
    for w in leases.windows(2) {
        assert!(
            w[1].2 >= w[0].3,
            "pid {} took the device at {} before pid {} released it at {}",
            w[1].1,
            w[1].2,
            w[0].1,
            w[0].3
        );
    }
}

#[test]
fn a_held_device_makes_tune_wait_or_fail_naming_the_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let locks = tmp.path().join("locks");
    let path = campaign(tmp.path(), "locked", &["tai12a"], 300, "[1, 2]");
    let env = [
        ("MATS_CPU_DEVICE_LOCK", Path::new("fake0")),
        ("MATS_LOCK_DIR", &locks),
    ];
    // This test process holds the fake device, as another mats process would.
    let mut lock =
        measure::device_lock::DeviceLock::open(&locks, "fake0", "the test's holder").unwrap();
    let lease = lock.lease().unwrap();

    let out = run(
        &env,
        &[
            "tune",
            s(&path),
            "--out",
            s(&tmp.path().join("a")),
            "--quiet",
            "--no-wait",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("pid {}", std::process::id())) && err.contains("the test's holder"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let child = mats_cmd(&env)
        .args([
            "tune",
            s(&path),
            "--out",
            s(&tmp.path().join("b")),
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let mut child = child;
    assert!(
        child.try_wait().unwrap().is_none(),
        "the campaign ran on a device another process holds"
    );
    drop(lease);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "waiting for device fake0: in use by pid {} (the test's holder)",
            std::process::id()
        )),
        "{err}"
    );
}

#[test]
fn two_campaigns_on_one_device_take_turns_trial_by_trial() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("trace");
    let locks = tmp.path().join("locks");
    let env = [
        ("MATS_CPU_DEVICE_LOCK", Path::new("fake1")),
        ("MATS_LOCK_DIR", locks.as_path()),
        ("MATS_LOCK_TRACE", trace.as_path()),
    ];
    let path = campaign(
        tmp.path(),
        "turns",
        &["tai20a", "nug12"],
        3000,
        "[1, 2, 4, 8]",
    );
    let children: Vec<Child> = ["a", "b"]
        .iter()
        .map(|o| {
            mats_cmd(&env)
                .args(["tune", s(&path), "--out", s(&tmp.path().join(o)), "--quiet"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let l = leases(&trace);
    let pids: std::collections::BTreeSet<u32> = l.iter().map(|x| x.1).collect();
    assert_eq!(pids.len(), 2, "{l:?}");
    assert!(l.len() >= 2 * 8, "{l:?}");
    assert_no_overlap(&l);
}

#[test]
fn shards_merged_hold_the_same_trials_as_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Three dataset classes (tai12a and tai20a share one).
    let path = campaign(
        dir,
        "sharded",
        &["tai12a", "tai20a", "nug12", "chr12a"],
        300,
        "[1, 2, 4]",
    );
    ok(
        &[],
        &["tune", s(&path), "--out", s(&dir.join("one")), "--quiet"],
    );
    let mut shard_dirs = Vec::new();
    for k in 1..=3 {
        let out = dir.join(format!("shard{k}"));
        ok(
            &[],
            &[
                "tune",
                s(&path),
                "--shard",
                &format!("{k}/3"),
                "--out",
                s(&out),
                "--quiet",
            ],
        );
        shard_dirs.push(out);
    }
    let merged = dir.join("merged");
    let mut args = vec!["merge", s(&merged)];
    args.extend(shard_dirs.iter().map(|d| s(d)));
    ok(&[], &args);

    // The search's trials (seed 7; the final re-measure uses fresh seeds and compares
    // winners chosen by measured time, which differ between runs).
    let one = trials(&dir.join("one"), &[7]);
    let all = trials(&merged, &[7]);
    assert_eq!(one.len(), 4 * 3, "{one:?}");
    assert_eq!(one, all);
    assert!(one
        .values()
        .all(|(status, obj)| status == "Ok" && obj.is_some()));
    // Each shard tuned a different class.
    let mut seen = std::collections::BTreeSet::new();
    for d in &shard_dirs {
        let store = results::Store::open_existing(d.join("results.sqlite")).unwrap();
        let c = &store.campaigns().unwrap()[0];
        assert_eq!(
            c.settings["shard"].as_str().map(|x| x.ends_with("/3")),
            Some(true)
        );
        for r in store.runs(c.id).unwrap() {
            seen.insert(r.class.clone());
        }
        assert_eq!(
            store
                .runs(c.id)
                .unwrap()
                .iter()
                .map(|r| &r.class)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            1
        );
    }
    assert_eq!(seen.len(), 3);

    // Its totals are the shards' sums; a median or a one-machine share is not carried over
    // from the first shard as if it were the whole campaign's.
    let read = |d: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap()
    };
    let sum = |field: &str| -> f64 {
        shard_dirs
            .iter()
            .map(|d| read(d)[field].as_f64().unwrap())
            .sum()
    };
    let total = read(&merged);
    for field in ["device_seconds", "production_runs"] {
        let merged_value = total[field].as_f64().unwrap();
        assert!((merged_value - sum(field)).abs() < 1e-9, "{field}: {total}");
    }
    assert!(total["median_trial_overhead_s"].is_null(), "{total}");

    // The merged folder reads as one run.
    ok(&[], &["report", s(&merged)]);
    ok(&[], &["export", s(&merged), "--out", s(&dir.join("tuned"))]);
    assert!(dir.join("tuned/index.json").is_file());
    let csv = ok(&[], &["results", s(&merged), "--csv"]);
    assert!(csv.lines().count() > 12);
    // `-o` onto the store itself is refused; the store stays a store.
    let store_file = merged.join("results.sqlite");
    let out = run(&[], &["results", s(&merged), "-o", s(&store_file)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("is an SQLite database"),
        "{err}"
    );
    results::Store::open_existing(&store_file).unwrap();

    // A shard's own folder, or a whole run's, is no place to merge into: the shard would stop
    // being one (its --resume and later merges refused), and two runs would share one store.
    let mut into_shard = vec!["merge", s(&shard_dirs[0])];
    into_shard.extend(shard_dirs[1..].iter().map(|d| s(d)));
    let out = run(&[], &into_shard);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("is the folder of shard 1/3"),
        "{err}"
    );
    let whole = dir.join("one");
    let mut into_whole = vec!["merge", s(&whole)];
    into_whole.extend(shard_dirs.iter().map(|d| s(d)));
    let out = run(&[], &into_whole);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("run of the whole campaign"),
        "{err}"
    );
    ok(
        &[],
        &[
            "tune",
            s(&path),
            "--shard",
            "1/3",
            "--out",
            s(&shard_dirs[0]),
            "--quiet",
            "--resume",
        ],
    );

    // Merging a shard again adds nothing.
    let again: serde_json::Value = serde_json::from_str(&ok(
        &[],
        &["merge", s(&merged), s(&shard_dirs[0]), "--json"],
    ))
    .unwrap();
    assert_eq!(again["added"]["trials"], 0, "{again}");
    assert!(again["added"]["duplicate_trials"].as_u64().unwrap() > 0);
    // ... and keeps the verdicts of the shards merged before (export reads them).
    let classes = |dir: &std::path::Path| {
        let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
        let summary: results::TuneSummary = serde_json::from_str(&text).unwrap();
        (summary.classes.len(), summary.unfinished_shards)
    };
    assert_eq!(classes(&merged), (3, Vec::new()));
    let export = run(
        &[],
        &["export", s(&merged), "--out", s(&dir.join("tuned2"))],
    );
    assert!(export.status.success());
    assert!(
        !String::from_utf8_lossy(&export.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );

    // A merge that misses a shard, or takes one that was killed (no summary), is an
    // unfinished campaign: export says which shard, not verdicts for classes never tuned.
    let killed = dir.join("shard2-killed");
    std::fs::create_dir(&killed).unwrap();
    std::fs::copy(
        shard_dirs[1].join("results.sqlite"),
        killed.join("results.sqlite"),
    )
    .unwrap();
    let partial = dir.join("partial");
    ok(&[], &["merge", s(&partial), s(&shard_dirs[0]), s(&killed)]);
    let (n, unfinished) = classes(&partial);
    assert_eq!(n, 1, "{unfinished:?}");
    assert!(
        unfinished
            .iter()
            .any(|u| u.contains("shard2-killed was killed"))
            && unfinished.iter().any(|u| u == "shard 3/3 was not merged"),
        "{unfinished:?}"
    );
    let export = run(
        &[],
        &["export", s(&partial), "--out", s(&dir.join("tuned3"))],
    );
    let err = String::from_utf8_lossy(&export.stderr);
    assert!(
        err.contains("not all of which finished") && err.contains("shard 3/3 was not merged"),
        "{err}"
    );
    // Once the killed shard has finished (here: its summary, as a resumed run writes it) and
    // the missing one is merged, nothing is left unfinished.
    std::fs::copy(
        shard_dirs[1].join("summary.json"),
        killed.join("summary.json"),
    )
    .unwrap();
    ok(&[], &["merge", s(&partial), s(&killed), s(&shard_dirs[2])]);
    assert_eq!(classes(&partial), (3, Vec::new()));

    // A different campaign under the same name is refused, and nothing is written.
    let other = campaign(
        dir,
        "sharded",
        &["tai12a", "tai20a", "nug12", "chr12a"],
        400,
        "[1, 2, 4]",
    );
    ok(
        &[],
        &[
            "tune",
            s(&other),
            "--shard",
            "2/3",
            "--out",
            s(&dir.join("other")),
            "--quiet",
        ],
    );
    // The conflict is found in the second folder, after the first merged: the output keeps
    // nothing of either (a new folder is removed; an existing one stays as it was).
    let fresh = dir.join("fresh");
    let out = run(
        &[],
        &["merge", s(&fresh), s(&shard_dirs[0]), s(&dir.join("other"))],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("different campaign file") && !err.contains("panicked"),
        "{err}"
    );
    // The folder the refused merge created is gone (it held a lock and nothing else).
    assert!(!fresh.exists());
    // Into the merged folder it is the split that is refused: shard 2/3 is merged there.
    let out = run(&[], &["merge", s(&merged), s(&dir.join("other"))]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("both ran shard 2/3"),
        "{err}"
    );
    assert_eq!(trials(&merged, &[7]), one);
    // So are folders of another split, a whole run beside shards, a folder named twice.
    let halves = dir.join("halves");
    ok(
        &[],
        &[
            "tune",
            s(&path),
            "--shard",
            "1/2",
            "--out",
            s(&halves),
            "--quiet",
        ],
    );
    for (folders, says) in [
        (
            vec![s(&shard_dirs[0]), s(&halves)],
            "merge the shards of one split",
        ),
        (
            vec![s(&dir.join("one")), s(&shard_dirs[1])],
            "ran the whole campaign",
        ),
        (vec![s(&shard_dirs[0]), s(&shard_dirs[0])], "are one folder"),
    ] {
        let mut args = vec!["merge", s(&fresh)];
        args.extend(folders);
        let out = run(&[], &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{says}: {err}");
    }

    // Another campaign (another name) is refused too: its verdicts would be exported as
    // this one's.
    let renamed = campaign(
        dir,
        "renamed",
        &["tai12a", "tai20a", "nug12", "chr12a"],
        300,
        "[1, 2, 4]",
    );
    let renamed_out = dir.join("renamed-out");
    ok(
        &[],
        &["tune", s(&renamed), "--out", s(&renamed_out), "--quiet"],
    );
    let out = run(&[], &["merge", s(&merged), s(&renamed_out)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("\"renamed\"") && err.contains("one campaign"),
        "{err}"
    );
    assert_eq!(trials(&merged, &[7]), one);

    // A shard resuming another shard's folder is refused: it would replace that shard's
    // summary with its own classes.
    let out = run(
        &[],
        &[
            "tune",
            s(&path),
            "--shard",
            "2/3",
            "--out",
            s(&shard_dirs[0]),
            "--resume",
            "--quiet",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("holds shard 1/3") && err.contains("own folder"),
        "{err}"
    );

    // Bad shard arguments are one clear error.
    for bad in ["0/3", "4/3", "x", "1/0"] {
        let out = run(&[], &["tune", s(&path), "--shard", bad]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("K/N"));
    }
}

/// A daemon on its own socket and state folder; killed (SIGKILL) when dropped.
struct Daemon {
    child: Child,
    socket: PathBuf,
    state: PathBuf,
    env: Vec<(String, PathBuf)>,
}

impl Daemon {
    fn start(dir: &Path, env: &[(&str, &Path)], extra: &[&str]) -> Daemon {
        let socket = dir.join("rt").join("daemon.sock");
        let state = dir.join("state");
        let mut env: Vec<(String, PathBuf)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_path_buf()))
            .collect();
        env.push(("MATS_RUNTIME_DIR".into(), dir.join("rt")));
        env.push(("MATS_STATE_DIR".into(), state.clone()));
        env.push(("MATS_DAEMON_SOCKET".into(), socket.clone()));
        let mut d = Daemon {
            child: Command::new("true").spawn().unwrap(),
            socket,
            state,
            env,
        };
        d.restart(extra);
        d
    }

    fn env(&self) -> Vec<(&str, &Path)> {
        self.env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_path()))
            .collect()
    }

    fn restart(&mut self, extra: &[&str]) {
        let _ = self.child.wait();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.socket.parent().unwrap().with_extension("daemon.log"))
            .unwrap();
        let env = self.env();
        self.child = mats_cmd(&env)
            .arg("daemon")
            .args(extra)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let socket = self.socket.clone();
        wait_for("the daemon's socket", Duration::from_secs(20), || {
            UnixStream::connect(&socket).is_ok()
        });
    }

    fn status(&self, id: i64) -> serde_json::Value {
        let v: serde_json::Value =
            serde_json::from_str(&ok(&self.env(), &["status", &id.to_string(), "--json"])).unwrap();
        v["campaign"].clone()
    }

    fn submit(&self, path: &Path, out: &Path) -> i64 {
        self.submit_with(path, out, &[])
    }

    /// `submit` with more arguments (`--resume`, `--priority N`); returns the id.
    fn submit_with(&self, path: &Path, out: &Path, extra: &[&str]) -> i64 {
        let mut args = vec!["submit", s(path), "--out", s(out)];
        args.extend_from_slice(extra);
        ok(&self.env(), &args).trim().parse().unwrap()
    }

    fn wait_state(&self, id: i64, state: &str, timeout: Duration) -> serde_json::Value {
        let end = Instant::now() + timeout;
        loop {
            let last = self.status(id);
            if last["state"] == state {
                return last;
            }
            let ended = matches!(
                last["state"].as_str(),
                Some("done" | "failed" | "cancelled")
            );
            assert!(
                !ended && Instant::now() < end,
                "campaign {id} is not {state}: {last}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Merging again keeps the merge consistent with its shards: the folders of an earlier merge
/// are found from anywhere (absolute paths) and re-read, a shard tuned again from the start
/// after a merge took it is refused, more shards than classes are not "missing", and the
/// merged folder is not tuned further.
#[test]
fn merging_again_rereads_its_shards_and_refuses_one_tuned_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let path = campaign(dir, "again", &["tai12a", "nug12", "chr12a"], 100, "[1, 2]");
    let shard = |k: usize, n: usize, extra: &[&str]| {
        let mut args = vec![
            "tune".to_string(),
            s(&path).to_string(),
            "--shard".into(),
            format!("{k}/{n}"),
            "--out".into(),
            s(&dir.join(format!("s{k}of{n}"))).to_string(),
            "--quiet".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&[], &args)
    };
    let summary = |dir: &Path| -> results::TuneSummary {
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
    };
    // Five shards of three classes: shards 4 and 5 have nothing to do, and say so.
    for k in 1..=5 {
        let out = shard(k, 5, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "shard {k}/5: {err}");
        if k > 3 {
            assert!(err.contains("nothing to do"), "{err}");
            assert!(!dir.join(format!("s{k}of5")).exists());
        }
    }
    let five = dir.join("five");
    ok(
        &[],
        &[
            "merge",
            s(&five),
            s(&dir.join("s1of5")),
            s(&dir.join("s2of5")),
            s(&dir.join("s3of5")),
        ],
    );
    assert!(
        summary(&five).unfinished_shards.is_empty(),
        "{:?}",
        summary(&five).unfinished_shards
    );
    // ... but a shard with a class that was not merged is missing.
    let partial = dir.join("partial");
    ok(&[], &["merge", s(&partial), s(&dir.join("s1of5"))]);
    let missing = summary(&partial).unfinished_shards;
    assert_eq!(
        missing,
        vec!["shard 2/5 was not merged", "shard 3/5 was not merged"]
    );

    // A merge run again from another working folder still knows the first merge's shard.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = mats_cmd(&[])
        .current_dir(&elsewhere)
        .args(["merge", "../partial", "../s2of5"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = summary(&partial);
    assert_eq!(merged.merged_shards, vec!["1/5", "2/5"]);
    assert!(
        merged.merged_from.iter().all(|p| p.is_absolute()),
        "{:?}",
        merged.merged_from
    );
    assert_eq!(merged.unfinished_shards, vec!["shard 3/5 was not merged"]);

    // A merged folder is not tuned further.
    let out = run(
        &[],
        &[
            "tune",
            s(&path),
            "--out",
            s(&partial),
            "--resume",
            "--quiet",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("merged from its shards"),
        "{err}"
    );

    // Shard 2 tuned again from the start: the next merge into the same folder is refused
    // (whether it is named or only re-read), and the folder keeps what it held.
    assert!(shard(2, 5, &["--fresh"]).status.success());
    let before = std::fs::read(partial.join("summary.json")).unwrap();
    for named in [dir.join("s3of5"), dir.join("s2of5")] {
        let out = run(&[], &["merge", s(&partial), s(&named)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("tuned again from the start"),
            "{err}"
        );
        assert!(
            err.contains(&partial.join("results.sqlite").display().to_string()),
            "{err}"
        );
    }
    assert_eq!(std::fs::read(partial.join("summary.json")).unwrap(), before);
    // Into a new folder it merges.
    let fresh = dir.join("fresh");
    ok(
        &[],
        &[
            "merge",
            s(&fresh),
            s(&dir.join("s1of5")),
            s(&dir.join("s2of5")),
            s(&dir.join("s3of5")),
        ],
    );

    // A shard merged while its budget had stopped it, then resumed: merging again brings the
    // resumed search's evaluations into the run the merge already holds, as a fresh merge of
    // the same folders does.
    let body = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, body.replace("trials = 500", "trials = 1")).unwrap();
    assert!(shard(1, 3, &[]).status.success());
    let early = dir.join("early");
    ok(&[], &["merge", s(&early), s(&dir.join("s1of3"))]);
    std::fs::write(&path, &body).unwrap();
    assert!(shard(1, 3, &["--resume"]).status.success());
    ok(&[], &["merge", s(&early), s(&dir.join("s1of3"))]);
    let late = dir.join("late");
    ok(&[], &["merge", s(&late), s(&dir.join("s1of3"))]);
    let evaluations = |dir: &Path| {
        let store = results::Store::open_existing(dir.join("results.sqlite")).unwrap();
        let c = &store.campaigns().unwrap()[0];
        let mut e: Vec<(u32, String, String)> = store
            .evaluations(c.id)
            .unwrap()
            .into_iter()
            .map(|e| (e.seq, e.point.key(), format!("{:?}", e.status)))
            .collect();
        e.sort();
        e
    };
    assert!(evaluations(&late).len() > 1, "{:?}", evaluations(&late));
    assert_eq!(evaluations(&early), evaluations(&late));

    // A killed shard (no summary) alone still makes a merge folder that says so; deleted
    // afterwards, it is still said to have been killed.
    let killed = dir.join("killed");
    std::fs::create_dir(&killed).unwrap();
    std::fs::copy(
        dir.join("s2of5/results.sqlite"),
        killed.join("results.sqlite"),
    )
    .unwrap();
    let only_killed = dir.join("only-killed");
    ok(&[], &["merge", s(&only_killed), s(&killed)]);
    let said = summary(&only_killed).unfinished_shards;
    assert!(
        said.iter().any(|u| u.contains("killed was killed")),
        "{said:?}"
    );
    std::fs::remove_dir_all(&killed).unwrap();
    ok(&[], &["merge", s(&only_killed), s(&dir.join("s1of5"))]);
    let said = summary(&only_killed).unfinished_shards;
    assert!(
        said.iter().any(|u| u.contains("killed was killed")),
        "{said:?}"
    );
    assert!(
        said.contains(&"shard 3/5 was not merged".to_string()),
        "{said:?}"
    );
}

fn request(socket: &Path, line: &[u8]) -> serde_json::Value {
    let mut s = UnixStream::connect(socket).unwrap();
    // A refused peer may find the connection closed before it writes: the reply is there.
    let _ = s.write_all(line);
    let mut reply = String::new();
    BufReader::new(s).read_line(&mut reply).unwrap();
    serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply:?}"))
}

#[test]
fn the_daemon_socket_is_private_and_bad_requests_never_stop_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = Daemon::start(tmp.path(), &[], &[]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&d.socket), 0o600);
    assert_eq!(mode(d.socket.parent().unwrap()), 0o700);
    assert_eq!(mode(&d.state), 0o700);

    for (line, why) in [
        (&b"hello\n"[..], "not valid JSON"),
        (b"{\"op\":\"explode\"}\n", "bad request"),
        (b"[1]\n", "JSON object"),
        (b"{\"op\":\"status\",\"id\":999}\n", "no campaign 999"),
        (b"{\"op\":\"cancel\",\"id\":\"x\"}\n", "bad request"),
        (b"\xff\xff\n", "UTF-8"),
    ] {
        let r = request(&d.socket, line);
        assert_eq!(r["ok"], false, "{r}");
        assert!(r["error"].as_str().unwrap().contains(why), "{r}");
    }
    // Oversized: an error reply, then the connection ends.
    let mut big = vec![b'x'; 200 * 1024];
    big.push(b'\n');
    let mut conn = UnixStream::connect(&d.socket).unwrap();
    let _ = conn.write_all(&big);
    let mut reply = String::new();
    BufReader::new(&conn).read_line(&mut reply).unwrap();
    assert!(reply.contains("limit"), "{reply}");
    // A client that goes away mid-request.
    let mut conn = UnixStream::connect(&d.socket).unwrap();
    conn.write_all(b"{\"op\":\"sta").unwrap();
    drop(conn);
    // Several requests on one connection, then the daemon still answers everyone.
    let mut conn = UnixStream::connect(&d.socket).unwrap();
    conn.write_all(b"{\"op\":\"ping\"}\n{\"op\":\"status\"}\n")
        .unwrap();
    let mut r = BufReader::new(conn);
    for _ in 0..2 {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert!(line.contains("\"ok\":true"), "{line}");
    }
    let r = request(&d.socket, b"{\"op\":\"ping\"}\n");
    assert_eq!(r["ok"], true, "{r}");
    ok(&d.env(), &["status"]);

    // A terminal hang-up (`mats daemon &` from a shell that logs out) does not stop it.
    // SAFETY: a signal to our own child.
    assert_eq!(unsafe { libc::kill(d.child.id() as i32, libc::SIGHUP) }, 0);
    std::thread::sleep(Duration::from_millis(300));
    let r = request(&d.socket, b"{\"op\":\"ping\"}\n");
    assert_eq!(r["ok"], true, "after SIGHUP: {r}");

    // A second daemon on the same state folder is refused with the holder's pid.
    let out = run(&d.env(), &["daemon"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("pid {}", d.child.id())));

    // An invalid campaign is refused at submit, with the campaign's own error.
    let bad = campaign(tmp.path(), "bad", &["tai12a"], 300, "[1, 2]").to_path_buf();
    let text = std::fs::read_to_string(&bad)
        .unwrap()
        .replace("starts = 1 }", "starts = 3 }");
    std::fs::write(&bad, text).unwrap();
    let out = run(&d.env(), &["submit", s(&bad)]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml") && err.contains("baseline"),
        "{err}"
    );
    let all: serde_json::Value =
        serde_json::from_str(&ok(&d.env(), &["status", "--json"])).unwrap();
    assert_eq!(all["campaigns"].as_array().unwrap().len(), 0, "{all}");
    // ... also where no daemon answers: the campaign's error first, not "cannot reach".
    let nowhere = tmp.path().join("no-daemon.sock");
    let out = run(
        &[("MATS_DAEMON_SOCKET", nowhere.as_path())],
        &["submit", s(&bad)],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("baseline"), "{err}");
    assert!(!err.contains("cannot reach"), "{err}");

    // An output folder that cannot be created fails that campaign alone, with the reason.
    let good = campaign(tmp.path(), "good", &["tai12a"], 300, "[1, 2]");
    let id = d.submit(&good, Path::new("/proc/mats-cannot-write-here"));
    let st = d.wait_state(id, "failed", Duration::from_secs(30));
    assert!(
        st["reason"]
            .as_str()
            .unwrap()
            .contains("cannot create the output folder"),
        "{st}"
    );
    let id = d.submit(&good, &tmp.path().join("good-out"));
    d.wait_state(id, "done", Duration::from_secs(120));
}

#[test]
fn tcp_needs_the_token() {
    let tmp = tempfile::tempdir().unwrap();
    let token = tmp.path().join("token");
    std::fs::write(&token, "0123456789abcdef-secret\n").unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let port = 20000 + std::process::id() % 20000;
    let addr = format!("127.0.0.1:{port}");
    // A token others can read is refused.
    let out = run(
        &[],
        &[
            "daemon",
            "--socket",
            s(&tmp.path().join("x.sock")),
            "--state-dir",
            s(&tmp.path().join("x")),
            "--listen",
            &addr,
            "--token-file",
            s(&token),
        ],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("chmod 600"));
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let d = Daemon::start(
        tmp.path(),
        &[],
        &["--listen", &addr, "--token-file", s(&token)],
    );
    let tcp = [
        "status",
        "--json",
        "--connect",
        &addr,
        "--token-file",
        s(&token),
    ];
    let mut answered = false;
    for _ in 0..100 {
        if run(&[], &tcp).status.success() {
            answered = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(answered, "no answer over TCP");
    let wrong = tmp.path().join("wrong");
    std::fs::write(&wrong, "0123456789abcdef-wrong").unwrap();
    let out = run(
        &[],
        &["status", "--connect", &addr, "--token-file", s(&wrong)],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrong token"));
    // Without a token field at all.
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    conn.write_all(b"{\"op\":\"ping\"}\n").unwrap();
    let mut reply = String::new();
    BufReader::new(conn).read_line(&mut reply).unwrap();
    assert!(reply.contains("refused"), "{reply}");
    drop(d);
}

#[test]
fn other_users_are_refused() {
    // Run as root, the test starts the daemon as `nobody` and connects as root: the socket's
    // mode does not stop root, the peer-credential check must.
    if unsafe_uid() != 0 || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!(
            "skipped: needs root and setpriv to run a daemon as another user (the credential \
             check itself is covered by daemon::tests::only_the_daemons_own_user_is_served)"
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A copy of the binary that `nobody` can reach.
    let exe = dir.join("mats");
    std::fs::copy(env!("CARGO_BIN_EXE_mats"), &exe).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = dir.join("home");
    std::fs::create_dir(&home).unwrap();
    let status = Command::new("chown")
        .args(["65534:65534", s(&home)])
        .status()
        .unwrap();
    assert!(status.success());
    let socket = home.join("d.sock");
    // Killed however the test ends, a failed assertion included.
    struct Kill(Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&exe)
        .args([
            "daemon",
            "--socket",
            s(&socket),
            "--state-dir",
            s(&home.join("state")),
        ])
        .env("HOME", &home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let child = Kill(child);
    let end = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < end, "the daemon did not start as nobody");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(100));
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(&socket).unwrap();
    assert_eq!(meta.uid(), 65534);
    assert_eq!(meta.mode() & 0o777, 0o600);
    let r = request(&socket, b"{\"op\":\"ping\"}\n");
    drop(child);
    assert_eq!(r["ok"], false, "{r}");
    assert!(r["error"].as_str().unwrap().contains("refused"), "{r}");
}

fn unsafe_uid() -> u32 {
    use std::os::unix::fs::MetadataExt as _;
    // The owner of a file this process just made is its effective uid.
    let f = tempfile::NamedTempFile::new().unwrap();
    f.as_file().metadata().unwrap().uid()
}

#[test]
fn daemon_campaigns_and_a_plain_tune_share_a_device_and_cancel_and_logs_work() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let trace = dir.join("trace");
    let locks = dir.join("locks");
    let env = [
        ("MATS_CPU_DEVICE_LOCK", Path::new("fake2")),
        ("MATS_LOCK_DIR", locks.as_path()),
        ("MATS_LOCK_TRACE", trace.as_path()),
    ];
    let d = Daemon::start(dir, &env, &["--jobs", "2"]);
    let a = campaign(dir, "a", &["tai20a", "nug12"], 3000, "[1, 2, 4, 8]");
    let b = campaign(dir, "b", &["tai20a", "chr12a"], 3000, "[1, 2, 4, 8]");
    let long = campaign(
        dir,
        "long",
        &["tai40a"],
        iterations(100_000),
        "[1, 2, 4, 8, 16]",
    );
    let ia = d.submit(&a, &dir.join("out-a"));
    let ib = d.submit(&b, &dir.join("out-b"));
    // A plain `mats tune` on the same device at the same time.
    let plain = mats_cmd(&d.env())
        .args(["tune", s(&a), "--out", s(&dir.join("plain")), "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let il = d.submit(&long, &dir.join("out-long")); // waits: --jobs 2
                                                     // A campaign cancelled while it waits: never started, its cancel recorded.
    let spare = d.submit(&a, &dir.join("out-spare"));
    let reply: serde_json::Value =
        serde_json::from_str(&ok(&d.env(), &["cancel", &spare.to_string(), "--json"])).unwrap();
    assert_eq!(reply["state"], "cancelled", "{reply}");
    let st = d.status(spare);
    assert_eq!(st["reason"], "cancelled before it started", "{st}");
    assert_eq!(st["cancel"], true, "{st}");
    assert!(st["started_at"].is_null(), "{st}");
    assert!(
        st["campaign_file"].as_str().unwrap().ends_with("a.toml"),
        "{st}"
    );
    d.wait_state(ia, "done", Duration::from_secs(120));
    d.wait_state(ib, "done", Duration::from_secs(120));
    assert!(plain.wait_with_output().unwrap().status.success());
    let l = leases(&trace);
    let pids: std::collections::BTreeSet<u32> = l.iter().map(|x| x.1).collect();
    assert!(pids.len() >= 3, "{pids:?}");
    assert_no_overlap(&l);
    // Both daemon campaigns measured every trial of their search.
    for (out, n) in [("out-a", 2 * 4), ("out-b", 2 * 4)] {
        let t = trials(&dir.join(out), &[7]);
        assert_eq!(t.len(), n, "{out}: {t:?}");
        assert!(t.values().all(|(st, _)| st == "Ok"), "{t:?}");
    }
    let st = d.status(ia);
    assert!(st["progress"]["trials_done"].as_i64().unwrap() >= 8, "{st}");
    assert!(st["progress"]["best"]["value"].as_f64().is_some(), "{st}");
    let log = ok(&d.env(), &["logs", &ia.to_string()]);
    assert!(log.contains("campaign a on"), "{log}");

    // The long one started once the first two ended; cancel it.
    d.wait_state(il, "running", Duration::from_secs(30));
    let out_long = dir.join("out-long").join("results.sqlite");
    wait_for(
        "the long campaign's first trial",
        Duration::from_secs(120),
        || out_long.exists() && d.status(il)["progress"]["trials_done"].as_i64() >= Some(1),
    );
    let follow = mats_cmd(&d.env())
        .args(["logs", &il.to_string(), "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    ok(&d.env(), &["cancel", &il.to_string()]);
    let st = d.wait_state(il, "cancelled", Duration::from_secs(120));
    assert_eq!(st["reason"], "cancelled by `mats cancel`", "{st}");
    // --follow ends when the campaign does.
    let out = follow.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&d.env(), &["cancel", &il.to_string()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("already cancelled"));

    // The cancelled campaign continues in the daemon: its folder is refused without --resume
    // (which the refusal names), taken with it, and never by another campaign.
    let folder = dir.join("out-long");
    let out = run(&d.env(), &["submit", s(&long), "--out", s(&folder)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("mats submit") && err.contains("--resume"),
        "{err}"
    );
    let out = run(
        &d.env(),
        &["submit", s(&a), "--out", s(&folder), "--resume"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("holds campaign \"long\""),
        "{err}"
    );
    let again: i64 = ok(
        &d.env(),
        &["submit", s(&long), "--out", s(&folder), "--resume"],
    )
    .trim()
    .parse()
    .unwrap();
    wait_for(
        "the resumed campaign to measure",
        Duration::from_secs(120),
        || d.status(again)["state"] == "running",
    );
    ok(&d.env(), &["cancel", &again.to_string()]);
    d.wait_state(again, "cancelled", Duration::from_secs(120));
}

#[test]
fn a_daemon_killed_with_sigkill_resumes_its_campaigns_without_measuring_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut d = Daemon::start(dir, &[], &["--jobs", "1"]);
    let long = campaign(
        dir,
        "long",
        &["tai40a", "tai20a"],
        iterations(50_000),
        "[1, 2, 4]",
    );
    let next = campaign(dir, "next", &["tai12a"], 300, "[1, 2]");
    let il = d.submit(&long, &dir.join("out-long"));
    let inext = d.submit(&next, &dir.join("out-next"));
    let db = dir.join("out-long").join("results.sqlite");
    let mut pid = 0;
    wait_for("some trials", Duration::from_secs(120), || {
        let st = d.status(il);
        pid = st["pid"].as_i64().unwrap_or(0);
        st["progress"]["trials_done"].as_i64() >= Some(2)
    });
    assert_eq!(d.status(inext)["state"], "queued");
    d.child.kill().unwrap(); // SIGKILL
    d.child.wait().unwrap();
    // Its `mats tune` dies with it.
    wait_for(
        "the child to die with the daemon",
        Duration::from_secs(10),
        || {
            !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| s.contains(") Z "))
        },
    );
    let before: HashMap<i64, (results::TrialStatus, results::Measurement)> = {
        let store = results::Store::open(&db).unwrap();
        let c = &store.campaigns().unwrap()[0];
        store
            .trials(c.id)
            .unwrap()
            .into_iter()
            .map(|t| (t.id, (t.status, t.measurement)))
            .collect()
    };
    assert!(!before.is_empty());

    d.restart(&["--jobs", "1"]);
    let st = d.wait_state(il, "done", Duration::from_secs(300));
    assert_eq!(st["starts"], 2, "{st}");
    d.wait_state(inext, "done", Duration::from_secs(120));

    let store = results::Store::open(&db).unwrap();
    store.integrity_check().unwrap();
    let c = &store.campaigns().unwrap()[0];
    let after = store.trials(c.id).unwrap();
    for t in &after {
        if let Some((status, m)) = before.get(&t.id) {
            if *status == results::TrialStatus::Started {
                assert_eq!(t.status, results::TrialStatus::Crashed);
            } else {
                assert_eq!((&t.status, &t.measurement), (status, m));
            }
        }
    }
    let mut finished: HashMap<(String, String, u64, String), usize> = HashMap::new();
    for t in &after {
        assert_ne!(t.status, results::TrialStatus::Started);
        if t.status != results::TrialStatus::Crashed {
            *finished
                .entry((t.point.key(), t.instance.clone(), t.seed, t.device.clone()))
                .or_default() += 1;
        }
    }
    assert!(finished.values().all(|&n| n == 1), "{finished:?}");
    assert_eq!(trials(&dir.join("out-long"), &[7]).len(), 2 * 3);
}

/// A cancel the daemon died under stays a cancel: the restarted daemon ends the campaign as
/// cancelled (it left it queued with the cancel pending, which nothing ever started, and its
/// folder refused a `--resume`). A campaign put back in the queue by a restart and cancelled
/// there says that it ran, and keeps what it measured.
#[test]
fn a_cancel_survives_the_daemons_death_and_a_requeued_campaign_says_it_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut d = Daemon::start(dir, &[], &["--jobs", "1"]);
    let long = campaign(dir, "long", &["tai40a"], iterations(300_000), "[1, 2, 4]");
    let il = d.submit(&long, &dir.join("out-long"));
    wait_for("a trial", Duration::from_secs(120), || {
        d.status(il)["progress"]["trials_done"].as_i64() >= Some(1)
    });
    // The cancel lets the trial under way finish; the daemon dies first.
    ok(&d.env(), &["cancel", &il.to_string()]);
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    d.restart(&["--jobs", "1"]);
    let st = d.status(il);
    assert_eq!(st["state"], "cancelled", "{st}");
    // (Rarely the trial under way ends between the cancel and the kill: then the campaign
    // stopped first, and the reason is the plain cancel's.)
    assert!(
        st["reason"]
            .as_str()
            .is_some_and(|r| r.contains("the daemon stopped before the campaign did")
                || r == "cancelled by `mats cancel`"),
        "{st}"
    );
    assert!(st["progress"]["trials_done"].as_i64() >= Some(1), "{st}");
    // Its folder continues in the daemon.
    let again = d.submit_with(&long, &dir.join("out-long"), &["--resume"]);
    d.wait_state(again, "running", Duration::from_secs(60));
    // A campaign of higher priority waits behind it; the daemon dies, and the next one starts
    // that campaign first (long enough to hold the only job), so the resumed one waits in the
    // queue, where it is cancelled.
    let first = campaign(dir, "first", &["tai40a"], iterations(300_000), "[1, 2, 4]");
    let ifirst = d.submit_with(&first, &dir.join("out-first"), &["--priority", "5"]);
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    d.restart(&["--jobs", "1"]);
    ok(&d.env(), &["cancel", &again.to_string()]);
    let st = d.status(again);
    assert_eq!(st["state"], "cancelled", "{st}");
    assert_eq!(
        st["reason"], "cancelled while queued to resume; its folder keeps what it measured",
        "{st}"
    );
    assert!(st["progress"]["trials_done"].as_i64() >= Some(1), "{st}");
    d.wait_state(ifirst, "running", Duration::from_secs(60));
    ok(&d.env(), &["cancel", &ifirst.to_string()]);
    d.wait_state(ifirst, "cancelled", Duration::from_secs(120));
}
