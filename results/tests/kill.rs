//! SIGKILL a process that writes trials, then check that the store is whole and holds every
//! trial the process was told was committed.
//!
//! The child is this test binary again (`current_exe()`), running only `child_writer` with
//! `MATS_RESULTS_KILL_CHILD` set to the database path. That test is `#[ignore]`d, so a normal
//! run lists it as ignored instead of counting a pass, and it fails when run without the
//! variable. The child prints `begun ID` after `begin_trial` returns and `finished ID` after
//! `finish_trial` returns; the parent kills it at an arbitrary moment while itself writing to
//! the same file (a second process on one store).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use results::store::RECOVERED_LOG;
use results::{InstanceRecord, Measurement, Point, Store, TrialStatus};
use serde_json::json;

const CHILD_ENV: &str = "MATS_RESULTS_KILL_CHILD";

fn setup(path: &Path) -> (i64, i64) {
    let s = Store::open(path).unwrap();
    let c = s.campaign("kill", "", &json!({})).unwrap();
    let i = s
        .instance(
            c.id,
            &InstanceRecord {
                name: "tai20a".into(),
                source: "data/qap/tai20a.dat".into(),
                family: "qap".into(),
                class: "low".into(),
                features: json!({}),
                best_known: None,
            },
        )
        .unwrap();
    (c.id, i)
}

fn measurement(k: i64) -> Measurement {
    Measurement {
        time_s: Some(k as f64 * 1e-3),
        objective: Some(k),
        ..Measurement::default()
    }
}

/// The child's body, run only by `sigkill_loses_nothing_committed`.
#[test]
#[ignore = "the child process of sigkill_loses_nothing_committed"]
fn child_writer() {
    let db = std::env::var(CHILD_ENV)
        .unwrap_or_else(|_| panic!("{CHILD_ENV} must name the database: this is a child process"));
    let (c, i) = setup(Path::new(&db));
    let s = Store::open(&db).unwrap();
    let out = std::io::stdout();
    for k in 0i64.. {
        let mut p = Point::new();
        p.set("k", k % 50);
        p.set("variant", "2opt");
        let p = s.point(c, &p).unwrap();
        let t = s.begin_trial(c, p, i, 1, "child").unwrap();
        writeln!(out.lock(), "begun {t}").unwrap();
        s.finish_trial(
            t,
            TrialStatus::Ok,
            &measurement(k),
            &"log line\n".repeat(20),
        )
        .unwrap();
        writeln!(out.lock(), "finished {t}").unwrap();
    }
}

#[test]
fn sigkill_loses_nothing_committed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let (c, i) = setup(&db);

    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_writer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &db)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });

        // Let the child commit a few trials, writing from this process meanwhile, then kill
        // it after a delay that differs per round so the kill lands at different points.
        let parent = Store::open(&db).unwrap();
        let mut parent_ids = Vec::new();
        let mut lines = Vec::new();
        let start = Instant::now();
        let min_finished = 5 + 5 * round;
        loop {
            while let Ok(l) = rx.try_recv() {
                lines.push(l);
            }
            let finished = lines.iter().filter(|l| l.starts_with("finished")).count();
            if finished >= min_finished {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "child committed only {finished} trials in 60 s"
            );
            let mut p = Point::new();
            p.set("parent", parent_ids.len() as i64);
            let p = parent.point(c, &p).unwrap();
            let t = parent.begin_trial(c, p, i, 1, "parent").unwrap();
            parent
                .finish_trial(t, TrialStatus::Failed, &Measurement::default(), "parent")
                .unwrap();
            parent_ids.push(t);
            // SQLite's busy wait is a sleep, not a queue: without a pause the parent, which
            // never sleeps, would take the lock back every time and starve the child.
            std::thread::sleep(Duration::from_millis(3));
        }
        std::thread::sleep(Duration::from_micros(1500 * (round as u64 + 1)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        reader.join().unwrap();
        lines.extend(rx.try_iter());

        let id_of = |l: &String, prefix: &str| {
            l.strip_prefix(prefix).map(|id| {
                id.trim()
                    .parse::<i64>()
                    .unwrap_or_else(|_| panic!("bad child line {l:?}"))
            })
        };
        let begun: Vec<i64> = lines.iter().filter_map(|l| id_of(l, "begun ")).collect();
        let finished: Vec<i64> = lines.iter().filter_map(|l| id_of(l, "finished ")).collect();
        assert!(finished.len() >= min_finished);

        // What a `--resume` does first.
        drop(parent);
        let s = Store::open(&db).unwrap();
        s.integrity_check().unwrap();
        let recovered = s.recover(c).unwrap();
        assert!(
            recovered <= 1,
            "one trial at most was in flight, got {recovered}"
        );
        s.integrity_check().unwrap();

        let trials = s.trials(c).unwrap();
        let by_id = |id: i64| trials.iter().find(|t| t.id == id);
        for id in &finished {
            let t = by_id(*id).unwrap_or_else(|| panic!("finished trial {id} lost"));
            assert_eq!(t.status, TrialStatus::Ok, "trial {id}");
            assert!(t.measurement.objective.is_some());
        }
        for id in &begun {
            let t = by_id(*id).unwrap_or_else(|| panic!("begun trial {id} lost"));
            if !finished.contains(id) {
                // Killed between begin and the printed finish: the finish may or may not
                // have committed, but either way the trial is no longer `started`.
                assert!(
                    t.status == TrialStatus::Ok
                        || (t.status == TrialStatus::Crashed && t.log == RECOVERED_LOG),
                    "in-flight trial {id}: {:?} {:?}",
                    t.status,
                    t.log
                );
            }
        }
        for id in &parent_ids {
            assert_eq!(by_id(*id).map(|t| t.status), Some(TrialStatus::Failed));
        }
        assert!(trials.iter().all(|t| t.status != TrialStatus::Started));
    }
}
