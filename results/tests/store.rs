//! Round trips of every table and the trial life-cycle rules of the store.

use std::path::Path;

use results::store::{RECOVERED_LOG, SCHEMA_VERSION};
use results::{
    EvaluationRow, EvaluationStatus, ExportRow, InstanceRecord, Measurement, NewEvaluation, Point,
    Store, StoreError, TrialStatus,
};
use serde_json::json;

fn store(dir: &tempfile::TempDir) -> Store {
    Store::open(dir.path().join("results.db")).expect("open store")
}

fn instance(name: &str, class: &str) -> InstanceRecord {
    InstanceRecord {
        name: name.into(),
        source: format!("data/qap/{name}.dat"),
        family: "qap".into(),
        class: class.into(),
        features: json!({"density": 0.5, "symmetric": true}),
        best_known: Some(1234),
    }
}

fn point(t: i64, variant: &str) -> Point {
    [
        ("threads", results::Value::Int(t)),
        ("variant", variant.into()),
    ]
    .into_iter()
    .collect()
}

fn full_measurement() -> Measurement {
    Measurement {
        time_s: Some(0.125),
        time_spread: Some(0.01),
        power_w: Some(250.5),
        energy_j: Some(31.3125),
        sm_clock_mhz: Some(1980),
        mem_clock_mhz: Some(2619),
        temperature_c: Some(61),
        throttle: Some("sw_power_cap".into()),
        registers: Some(64),
        spills: Some(0),
        shared_bytes: Some(49152),
        compile_s: Some(1.5),
        cache_hit: Some(true),
        objective: Some(-9_000_000_000),
        gap_percent: Some(0.25),
        run_s: Some(1.0),
        kernel_s: Some(0.9),
        measure_s: Some(1.2),
        target_s: Some(0.4),
        iterations: Some(123_456),
        moves: Some(1 << 40),
        launches: Some(17),
    }
}

/// An RFC 3339 UTC timestamp as the store writes it: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z'
        && s.chars()
            .enumerate()
            .all(|(i, c)| [4, 7, 10, 13, 16, 19, 23].contains(&i) || c.is_ascii_digit())
}

#[test]
fn campaign_round_trip_and_reuse() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c = s
        .campaign(
            "quick",
            "name = 'quick'\n",
            &json!({"production_runs": 500}),
        )
        .unwrap();
    assert_eq!(c.name, "quick");
    assert_eq!(c.config_toml, "name = 'quick'\n");
    assert_eq!(c.settings, json!({"production_runs": 500}));
    assert!(is_rfc3339(&c.created_at), "{}", c.created_at);

    // Same name again: the stored campaign, not a new one, configuration untouched.
    let again = s.campaign("quick", "changed", &json!({})).unwrap();
    assert_eq!(again, c);

    s.update_campaign_settings(c.id, &json!({"baseline": {"threads": 128}}))
        .unwrap();
    let other = s.campaign("other", "", &json!(null)).unwrap();
    let all = s.campaigns().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].settings, json!({"baseline": {"threads": 128}}));
    assert_eq!(all[1], other);
    assert_eq!(s.find_campaign("nope").unwrap(), None);
    assert!(matches!(
        s.update_campaign_settings(999, &json!({})),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn instances_upsert_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c = s.campaign("c", "", &json!({})).unwrap();
    let a = s.instance(c.id, &instance("tai20a", "low")).unwrap();
    let b = s.instance(c.id, &instance("tai40a", "high")).unwrap();
    assert_ne!(a, b);
    let mut changed = instance("tai20a", "normal");
    changed.best_known = None;
    assert_eq!(
        s.instance(c.id, &changed).unwrap(),
        a,
        "upsert keeps the id"
    );
    let rows = s.instances(c.id).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].id, a);
    assert_eq!(rows[0].record, changed);
    assert_eq!(rows[1].record, instance("tai40a", "high"));
    // The same name in another campaign is another instance.
    let c2 = s.campaign("c2", "", &json!({})).unwrap();
    assert_ne!(s.instance(c2.id, &instance("tai20a", "low")).unwrap(), a);
    assert_eq!(s.instances(c.id).unwrap().len(), 2);
}

#[test]
fn points_are_stable_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (c, ids) = {
        let s = store(&dir);
        let c = s.campaign("c", "", &json!({})).unwrap();
        let ids: Vec<i64> = (0..5)
            .map(|t| s.point(c.id, &point(32 << t, "2opt")).unwrap())
            .collect();
        assert_eq!(s.point(c.id, &point(32, "2opt")).unwrap(), ids[0]);
        (c, ids)
    };
    let s = store(&dir);
    for (t, id) in ids.iter().enumerate() {
        // Built in another insertion order: the key, not the construction, is the identity.
        let mut p = Point::new();
        p.set("variant", "2opt");
        p.set("threads", 32i64 << t);
        assert_eq!(s.point(c.id, &p).unwrap(), *id);
    }
    let stored = s.points(c.id).unwrap();
    assert_eq!(stored.len(), 5);
    assert_eq!(stored[2], (ids[2], point(128, "2opt")));
    // Another campaign has its own ids.
    let c2 = s.campaign("c2", "", &json!({})).unwrap();
    assert!(!ids.contains(&s.point(c2.id, &point(32, "2opt")).unwrap()));
}

#[test]
fn trial_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c = s.campaign("c", "", &json!({})).unwrap();
    let i = s.instance(c.id, &instance("tai20a", "low")).unwrap();
    let p = s.point(c.id, &point(128, "rots-block")).unwrap();
    let t = s.begin_trial(c.id, p, i, 1, "H100 GPU-1234").unwrap();

    let started = s.trial(t).unwrap().unwrap();
    assert_eq!(started.status, TrialStatus::Started);
    assert_eq!(started.attempt, 1);
    assert_eq!(started.ended_at, None);
    assert_eq!(started.measurement, Measurement::default());
    assert!(is_rfc3339(&started.started_at));

    let m = full_measurement();
    s.finish_trial(t, TrialStatus::Ok, &m, "ptxas info: 64 registers\nline 2")
        .unwrap();
    let rows = s.trials(c.id).unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.id, t);
    assert_eq!(row.point_id, p);
    assert_eq!(row.point, point(128, "rots-block"));
    assert_eq!(row.instance, "tai20a");
    assert_eq!(row.class, "low");
    assert_eq!(row.device, "H100 GPU-1234");
    assert_eq!(row.status, TrialStatus::Ok);
    assert_eq!(row.measurement, m);
    assert_eq!(row.log, "ptxas info: 64 registers\nline 2");
    assert!(row.ended_at.as_deref().is_some_and(is_rfc3339));

    // Finishing twice, or as started, or an unknown trial: refused.
    assert!(matches!(
        s.finish_trial(t, TrialStatus::Failed, &m, ""),
        Err(StoreError::NotFound { .. })
    ));
    let t2 = s.begin_trial(c.id, p, i, 1, "cpu").unwrap();
    assert!(matches!(
        s.finish_trial(t2, TrialStatus::Started, &m, ""),
        Err(StoreError::Invalid { .. })
    ));
    assert!(s
        .finish_trial(t2 + 100, TrialStatus::Ok, &m, "")
        .is_err_and(|e| e.to_string().contains("results.db")));
}

#[test]
fn trials_refuse_rows_of_another_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c1 = s.campaign("c1", "", &json!({})).unwrap();
    let c2 = s.campaign("c2", "", &json!({})).unwrap();
    let i1 = s.instance(c1.id, &instance("a", "x")).unwrap();
    let p2 = s.point(c2.id, &point(32, "2opt")).unwrap();
    let err = s.begin_trial(c1.id, p2, i1, 1, "cpu").unwrap_err();
    assert!(err.to_string().contains("FOREIGN KEY"), "{err}");
    assert!(s.trials(c1.id).unwrap().is_empty());
}

#[test]
fn attempts_recover_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c = s.campaign("c", "", &json!({})).unwrap();
    let i = s.instance(c.id, &instance("tai20a", "low")).unwrap();
    let p = s.point(c.id, &point(64, "2opt")).unwrap();
    let q = s.point(c.id, &point(32, "2opt")).unwrap();
    let dev = "gpu0";

    assert_eq!(
        s.cached(c.id, p, i, 1, dev, 2).unwrap(),
        None,
        "never tried"
    );

    // Attempt 1 dies with the process: still started, so not cached.
    let t1 = s.begin_trial(c.id, p, i, 1, dev).unwrap();
    assert_eq!(s.cached(c.id, p, i, 1, dev, 2).unwrap(), None);
    // A trial of another point stays untouched by everything below until recover.
    let other = s.begin_trial(c.id, q, i, 1, dev).unwrap();
    s.finish_trial(other, TrialStatus::Ok, &full_measurement(), "")
        .unwrap();

    assert_eq!(s.recover(c.id).unwrap(), 1);
    assert_eq!(s.recover(c.id).unwrap(), 0, "recover is idempotent");
    let r1 = s.trial(t1).unwrap().unwrap();
    assert_eq!(r1.status, TrialStatus::Crashed);
    assert_eq!(r1.log, RECOVERED_LOG);
    assert!(r1.ended_at.is_some());
    // One crash, two attempts allowed: measure again.
    assert_eq!(s.cached(c.id, p, i, 1, dev, 2).unwrap(), None);
    // With one attempt allowed, the crash is the answer.
    assert_eq!(
        s.cached(c.id, p, i, 1, dev, 1).unwrap().map(|t| t.id),
        Some(t1)
    );

    // Attempt 2 crashes the worker (the tuner finishes it as crashed itself).
    let t2 = s.begin_trial(c.id, p, i, 1, dev).unwrap();
    assert_eq!(s.trial(t2).unwrap().unwrap().attempt, 2);
    s.finish_trial(
        t2,
        TrialStatus::Crashed,
        &Measurement::default(),
        "illegal address",
    )
    .unwrap();
    let cached = s.cached(c.id, p, i, 1, dev, 2).unwrap().expect("gave up");
    assert_eq!((cached.id, cached.attempt), (t2, 2), "latest crash");
    assert_eq!(cached.log, "illegal address");
    assert_eq!(s.cached(c.id, p, i, 1, dev, 3).unwrap(), None);

    // Attempt 3 (max_attempts raised) succeeds: from now on the ok trial is the answer,
    // whatever max_attempts says.
    let t3 = s.begin_trial(c.id, p, i, 1, dev).unwrap();
    assert_eq!(s.trial(t3).unwrap().unwrap().attempt, 3);
    s.finish_trial(t3, TrialStatus::Ok, &full_measurement(), "")
        .unwrap();
    for max in [0, 1, 2, 10] {
        assert_eq!(s.cached(c.id, p, i, 1, dev, max).unwrap().unwrap().id, t3);
    }

    // Other device and other instance: separate histories, attempts start at 1.
    assert_eq!(s.cached(c.id, p, i, 1, "gpu1", 2).unwrap(), None);
    let t4 = s.begin_trial(c.id, p, i, 1, "gpu1").unwrap();
    assert_eq!(s.trial(t4).unwrap().unwrap().attempt, 1);
    let j = s.instance(c.id, &instance("tai40a", "low")).unwrap();
    assert_eq!(s.cached(c.id, p, j, 1, dev, 2).unwrap(), None);

    // A failed (or invalid) trial is final at once: retrying a compile error is pointless.
    let t5 = s.begin_trial(c.id, q, j, 1, dev).unwrap();
    s.finish_trial(t5, TrialStatus::Invalid, &full_measurement(), "mis-scored")
        .unwrap();
    let got = s.cached(c.id, q, j, 1, dev, 5).unwrap().unwrap();
    assert_eq!((got.id, got.status), (t5, TrialStatus::Invalid));

    // Recover only touches its own campaign.
    let c2 = s.campaign("c2", "", &json!({})).unwrap();
    assert_eq!(s.recover(c2.id).unwrap(), 0);
    assert_eq!(s.recover(c.id).unwrap(), 1, "t4 was still started");
    let r4 = s.trial(t4).unwrap().unwrap();
    assert_eq!(r4.status, TrialStatus::Crashed);

    // Every trial appears once, in begin order.
    let ids: Vec<i64> = s.trials(c.id).unwrap().iter().map(|t| t.id).collect();
    assert_eq!(ids, vec![t1, other, t2, t3, t4, t5]);
    s.integrity_check().unwrap();
}

#[test]
fn recover_appends_to_an_existing_log() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c = s.campaign("c", "", &json!({})).unwrap();
    let i = s.instance(c.id, &instance("a", "x")).unwrap();
    let p = s.point(c.id, &point(32, "2opt")).unwrap();
    let t = s.begin_trial(c.id, p, i, 1, "cpu").unwrap();
    // No method writes a log into a started trial today; a future one (progress notes) or a
    // hand edit must keep its text.
    let conn = rusqlite::Connection::open(dir.path().join("results.db")).unwrap();
    conn.execute("UPDATE trials SET log = 'compiled' WHERE id = ?1", [t])
        .unwrap();
    drop(conn);
    assert_eq!(s.recover(c.id).unwrap(), 1);
    assert_eq!(
        s.trial(t).unwrap().unwrap().log,
        format!("compiled\n{RECOVERED_LOG}")
    );
}

#[test]
fn runs_and_evaluations_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c = s.campaign("c", "", &json!({})).unwrap();
    let p = s.point(c.id, &point(64, "2opt")).unwrap();
    let q = s.point(c.id, &point(32, "2opt")).unwrap();
    let run = s
        .begin_run(
            c.id,
            "low",
            "hill-climbing",
            "time",
            &json!({"restarts": 3}),
        )
        .unwrap();
    assert_eq!(run.class, "low");
    assert_eq!(run.strategy, "hill-climbing");
    assert_eq!(run.objective, "time");
    assert_eq!(run.options, json!({"restarts": 3}));
    assert!(is_rfc3339(&run.started_at));
    assert_eq!(run.ended_at, None);
    let run2 = s
        .begin_run(c.id, "high", "random", "pareto:time,energy", &json!(null))
        .unwrap();

    assert_eq!(s.next_seq(run.id).unwrap(), 0);
    let e0 = NewEvaluation {
        run_id: run.id,
        point_id: p,
        status: EvaluationStatus::Ok,
        time_s: Some(0.5),
        power_w: Some(200.0),
        energy_j: Some(100.0),
        gap_percent: Some(0.0),
        new_trials: 3,
    };
    let r0 = s.record_evaluation(&e0).unwrap();
    assert_eq!(
        r0,
        EvaluationRow {
            run_id: run.id,
            seq: 0,
            point_id: p,
            point: point(64, "2opt"),
            status: EvaluationStatus::Ok,
            time_s: Some(0.5),
            power_w: Some(200.0),
            energy_j: Some(100.0),
            gap_percent: Some(0.0),
            new_trials: 3,
        }
    );
    // From an EvaluationRow built by the caller: seq is assigned by the store, not taken.
    let mut as_row = r0.clone();
    as_row.seq = 77;
    as_row.point_id = q;
    as_row.status = EvaluationStatus::Rejected;
    as_row.time_s = None;
    let r1 = s.record_evaluation(&(&as_row).into()).unwrap();
    assert_eq!(r1.seq, 1);
    assert_eq!(r1.point, point(32, "2opt"));
    assert_eq!(r1.time_s, None);
    let other = s
        .record_evaluation(&NewEvaluation {
            run_id: run2.id,
            status: EvaluationStatus::Failed,
            ..e0.clone()
        })
        .unwrap();
    assert_eq!(other.seq, 0, "seq counts per run");
    assert_eq!(s.next_seq(run.id).unwrap(), 2);

    assert_eq!(
        s.evaluations_of_run(run.id).unwrap(),
        vec![r0.clone(), r1.clone()]
    );
    assert_eq!(s.evaluations(c.id).unwrap(), vec![r0, r1, other]);

    // Unknown run; point of another campaign.
    assert!(matches!(
        s.record_evaluation(&NewEvaluation {
            run_id: 999,
            ..e0.clone()
        }),
        Err(StoreError::NotFound { .. })
    ));
    let c2 = s.campaign("c2", "", &json!({})).unwrap();
    let foreign = s.point(c2.id, &point(8, "x")).unwrap();
    assert!(s
        .record_evaluation(&NewEvaluation {
            point_id: foreign,
            ..e0.clone()
        })
        .is_err());

    s.end_run(run.id).unwrap();
    let runs = s.runs(c.id).unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs[0].ended_at.as_deref().is_some_and(is_rfc3339));
    assert_eq!(runs[1], run2);
    assert!(matches!(s.end_run(999), Err(StoreError::NotFound { .. })));
    assert!(s.runs(c2.id).unwrap().is_empty());

    // A resume ends finished runs again; their first end time stays.
    let first_end = runs[0].ended_at.clone();
    std::thread::sleep(std::time::Duration::from_millis(20));
    s.end_run(run.id).unwrap();
    assert_eq!(s.runs(c.id).unwrap()[0].ended_at, first_end);
    assert_eq!(s.runs(c.id).unwrap()[0].started_at, runs[0].started_at);
}

#[test]
fn exports_replace_per_class_and_preference() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c = s.campaign("c", "", &json!({})).unwrap();
    let p = s.point(c.id, &point(64, "2opt")).unwrap();
    let q = s.point(c.id, &point(32, "2opt")).unwrap();
    let row = |class: &str, prefer: &str, id: i64, pt: Point, bundle: &str| ExportRow {
        class: class.into(),
        prefer: prefer.into(),
        point_id: id,
        point: pt,
        bundle: bundle.into(),
    };
    s.set_export(c.id, &row("low", "time", p, point(64, "2opt"), "b0"))
        .unwrap();
    s.set_export(c.id, &row("low", "energy", p, point(64, "2opt"), "b0"))
        .unwrap();
    s.set_export(c.id, &row("low", "time", q, point(32, "2opt"), "b1"))
        .unwrap();
    assert_eq!(
        s.exports(c.id).unwrap(),
        vec![
            row("low", "energy", p, point(64, "2opt"), "b0"),
            row("low", "time", q, point(32, "2opt"), "b1"),
        ]
    );
    s.replace_exports(c.id, &[row("high", "power", q, point(32, "2opt"), "b9")])
        .unwrap();
    assert_eq!(
        s.exports(c.id).unwrap(),
        vec![row("high", "power", q, point(32, "2opt"), "b9")]
    );
    // A replacement that fails half-way leaves the old set.
    let bad = [
        row("a", "time", p, Point::new(), "x"),
        row("b", "time", 4242, Point::new(), "y"),
    ];
    assert!(s.replace_exports(c.id, &bad).is_err());
    assert_eq!(s.exports(c.id).unwrap().len(), 1);
}

#[test]
fn reopen_keeps_everything_and_checks_ok() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let before = {
        let s = Store::open(&path).unwrap();
        let c = s.campaign("c", "x = 1", &json!({"a": 1})).unwrap();
        let i = s.instance(c.id, &instance("a", "x")).unwrap();
        let p = s.point(c.id, &point(32, "2opt")).unwrap();
        let t = s.begin_trial(c.id, p, i, 1, "cpu").unwrap();
        s.finish_trial(t, TrialStatus::Ok, &full_measurement(), "log")
            .unwrap();
        s.trials(c.id).unwrap()
    };
    let s = Store::open_existing(&path).unwrap();
    assert_eq!(s.path(), path);
    s.integrity_check().unwrap();
    let c = s.find_campaign("c").unwrap().unwrap();
    assert_eq!(s.trials(c.id).unwrap(), before);
}

#[test]
fn bad_files_are_named_in_errors() {
    let dir = tempfile::tempdir().unwrap();

    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "this is not a database, just some notes\n".repeat(50),
    )
    .unwrap();
    let err = Store::open(&text).unwrap_err();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("notes.txt") && msg.contains("not a mats results store"),
        "{msg}"
    );
    // The file was not touched.
    assert!(std::fs::read_to_string(&text)
        .unwrap()
        .starts_with("this is not"));

    // An SQLite database of some other program.
    let other = dir.path().join("other.sqlite");
    foreign_sqlite(&other, 0, 0);
    let msg = Store::open(&other).unwrap_err().to_string();
    assert!(
        msg.contains("other.sqlite") && msg.contains("another program"),
        "{msg}"
    );

    // A mats store from the future.
    let newer = dir.path().join("newer.db");
    foreign_sqlite(&newer, results::store::APPLICATION_ID, SCHEMA_VERSION + 1);
    let err = Store::open(&newer).unwrap_err();
    assert!(matches!(err, StoreError::NewerSchema { .. }), "{err:?}");
    assert!(err.to_string().contains("newer.db"), "{err}");

    // A folder that does not exist.
    let missing = dir.path().join("no/such/dir/results.db");
    let msg = Store::open(&missing).unwrap_err().to_string();
    assert!(msg.contains("no/such/dir/results.db"), "{msg}");
    let msg = Store::open_existing(dir.path().join("absent.db"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("absent.db"), "{msg}");
    assert!(!dir.path().join("absent.db").exists());

    // An empty file is a new store (SQLite treats a zero-length file as an empty database).
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    Store::open(&empty).unwrap().integrity_check().unwrap();
}

/// Writes an SQLite file that is not a mats store (or claims a given id and version), using
/// the SQLite that the store links.
fn foreign_sqlite(path: &Path, app_id: i64, version: i64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE notes (body TEXT); PRAGMA application_id = {app_id};
         PRAGMA user_version = {version};"
    ))
    .unwrap();
}

#[test]
fn two_stores_on_one_file_interleave_safely() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let (c, i, points) = {
        let s = Store::open(&path).unwrap();
        let c = s.campaign("c", "", &json!({})).unwrap();
        let i = s.instance(c.id, &instance("a", "x")).unwrap();
        let points: Vec<i64> = (0..8)
            .map(|t| s.point(c.id, &point(t, "2opt")).unwrap())
            .collect();
        (c.id, i, points)
    };
    const PER_WRITER: usize = 60;
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let path = path.clone();
            let points = points.clone();
            std::thread::spawn(move || {
                // Its own connection, as a second process would have.
                let s = Store::open(&path).unwrap();
                let run = s
                    .begin_run(c, "x", &format!("writer{w}"), "time", &json!({}))
                    .unwrap();
                let mut ids = Vec::new();
                for k in 0..PER_WRITER {
                    let p = points[k % points.len()];
                    // Both writers hit the same (point, instance, device): attempts must
                    // still come out unique.
                    let t = s.begin_trial(c, p, i, 1, "gpu0").unwrap();
                    s.finish_trial(t, TrialStatus::Ok, &full_measurement(), "")
                        .unwrap();
                    s.point(c, &point(100 + k as i64, "shared")).unwrap();
                    s.record_evaluation(&NewEvaluation {
                        run_id: run.id,
                        point_id: p,
                        status: EvaluationStatus::Ok,
                        time_s: Some(1.0),
                        power_w: None,
                        energy_j: None,
                        gap_percent: None,
                        new_trials: 1,
                    })
                    .unwrap();
                    ids.push(t);
                }
                (run.id, ids)
            })
        })
        .collect();
    let done: Vec<(i64, Vec<i64>)> = writers.into_iter().map(|h| h.join().unwrap()).collect();

    let s = Store::open(&path).unwrap();
    s.integrity_check().unwrap();
    let trials = s.trials(c).unwrap();
    assert_eq!(trials.len(), 2 * PER_WRITER);
    assert!(trials.iter().all(|t| t.status == TrialStatus::Ok));
    for p in &points {
        let mut attempts: Vec<u32> = trials
            .iter()
            .filter(|t| t.point_id == *p)
            .map(|t| t.attempt)
            .collect();
        attempts.sort_unstable();
        let expected: Vec<u32> = (1..=attempts.len() as u32).collect();
        assert_eq!(
            attempts, expected,
            "attempts of point {p} are 1..n without gaps"
        );
    }
    assert_eq!(s.points(c).unwrap().len(), points.len() + PER_WRITER);
    for (run, ids) in done {
        let seqs: Vec<u32> = s
            .evaluations_of_run(run)
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, (0..PER_WRITER as u32).collect::<Vec<_>>());
        assert!(ids.iter().all(|id| trials.iter().any(|t| t.id == *id)));
    }
}

#[test]
fn nan_measurements_read_back_as_missing() {
    // SQLite has no NaN: it stores NULL. Documented in docs/results.md.
    let dir = tempfile::tempdir().unwrap();
    let s = store(&dir);
    let c = s.campaign("c", "", &json!({})).unwrap();
    let i = s.instance(c.id, &instance("a", "x")).unwrap();
    let p = s.point(c.id, &point(1, "v")).unwrap();
    let t = s.begin_trial(c.id, p, i, 1, "cpu").unwrap();
    let m = Measurement {
        time_s: Some(f64::NAN),
        power_w: Some(f64::INFINITY),
        ..Measurement::default()
    };
    s.finish_trial(t, TrialStatus::Ok, &m, "").unwrap();
    let got = s.trial(t).unwrap().unwrap().measurement;
    assert_eq!(got.time_s, None);
    assert_eq!(got.power_w, Some(f64::INFINITY));
}

/// The seed is part of a trial's identity: the same (point, instance, device) with another
/// seed is another trial, and each has its own cache entry and attempts.
#[test]
fn trials_of_different_seeds_are_different_trials() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.sqlite")).unwrap();
    let c = store
        .campaign("c", "name = \"c\"", &serde_json::json!({}))
        .unwrap()
        .id;
    let i = store
        .instance(
            c,
            &results::InstanceRecord {
                name: "x".into(),
                source: "x.dat".into(),
                family: "qap".into(),
                class: "k".into(),
                features: serde_json::Value::Null,
                best_known: None,
            },
        )
        .unwrap();
    let p = store.point(c, &results::Point::new()).unwrap();
    let a = store.begin_trial(c, p, i, 1, "gpu").unwrap();
    let b = store.begin_trial(c, p, i, 2, "gpu").unwrap();
    store
        .finish_trial(a, results::TrialStatus::Ok, &full_measurement(), "")
        .unwrap();
    assert!(store.cached(c, p, i, 1, "gpu", 2).unwrap().is_some());
    assert!(store.cached(c, p, i, 2, "gpu", 2).unwrap().is_none());
    let rows = store.trials(c).unwrap();
    assert_eq!(
        rows.iter().map(|r| (r.seed, r.attempt)).collect::<Vec<_>>(),
        [(1, 1), (2, 1)]
    );
    assert_eq!(rows[0].measurement, full_measurement());
    let _ = b;
}
