//! CSV and JSON exports of a small store.

use results::export::{write_trials_json, MEASUREMENT_COLUMNS};
use results::{
    write_csv, write_json, EvaluationStatus, ExportRow, InstanceRecord, Measurement, NewEvaluation,
    Point, Store, StoreDump, TrialRow, TrialStatus,
};
use serde_json::json;

fn filled_store(dir: &tempfile::TempDir) -> (Store, results::CampaignRow) {
    let s = Store::open(dir.path().join("results.db")).unwrap();
    let c = s
        .campaign(
            "demo",
            "[campaign]\nname = \"demo\"\n",
            &json!({"runs": 500}),
        )
        .unwrap();
    let i = s
        .instance(
            c.id,
            &InstanceRecord {
                name: "tai20a".into(),
                source: "data/qap/tai20a.dat".into(),
                family: "qap".into(),
                class: "low,sym".into(),
                features: json!({"density": 0.9}),
                best_known: Some(703482),
            },
        )
        .unwrap();
    // Points with different parameter sets: the CSV takes the union.
    let p1: Point = [("threads", 128i64)].into_iter().collect();
    let mut p2 = Point::new();
    p2.set("threads", 256i64);
    p2.set("flag", "--use_fast_math");
    let p1 = s.point(c.id, &p1).unwrap();
    let p2 = s.point(c.id, &p2).unwrap();
    let t1 = s.begin_trial(c.id, p1, i, 1, "gpu0").unwrap();
    s.finish_trial(
        t1,
        TrialStatus::Ok,
        &Measurement {
            time_s: Some(0.1),
            energy_j: Some(25.0),
            registers: Some(40),
            cache_hit: Some(false),
            objective: Some(703482),
            gap_percent: Some(0.0),
            ..Measurement::default()
        },
        "line 1\nline \"2\", with comma",
    )
    .unwrap();
    s.begin_trial(c.id, p2, i, 1, "gpu0").unwrap();
    let run = s
        .begin_run(c.id, "low,sym", "random", "time", &json!({}))
        .unwrap();
    s.record_evaluation(&NewEvaluation {
        run_id: run.id,
        point_id: p1,
        status: EvaluationStatus::Ok,
        time_s: Some(0.1),
        power_w: None,
        energy_j: Some(25.0),
        gap_percent: Some(0.0),
        new_trials: 1,
    })
    .unwrap();
    s.set_export(
        c.id,
        &ExportRow {
            class: "low,sym".into(),
            prefer: "time".into(),
            point_id: p1,
            point: Point::new(),
            bundle: "qap-0".into(),
        },
    )
    .unwrap();
    (s, c)
}

#[test]
fn csv_has_parameter_union_and_all_columns() {
    let dir = tempfile::tempdir().unwrap();
    let (s, c) = filled_store(&dir);
    let trials = s.trials(c.id).unwrap();
    let mut buf = Vec::new();
    write_csv(&trials, &mut buf).unwrap();

    let mut rd = csv::Reader::from_reader(buf.as_slice());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    let pos = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    assert_eq!(header.last().map(String::as_str), Some("log"));
    assert!(pos("p.flag") < pos("p.threads"), "parameters by name");
    for col in MEASUREMENT_COLUMNS.iter().chain(&[
        "status",
        "started_at",
        "ended_at",
        "attempt",
        "instance",
        "class",
    ]) {
        pos(col);
    }
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(&rows[0][pos("p.threads")], "128");
    assert_eq!(&rows[0][pos("p.flag")], "", "missing parameter is empty");
    assert_eq!(&rows[1][pos("p.flag")], "--use_fast_math");
    assert_eq!(&rows[0][pos("status")], "ok");
    assert_eq!(&rows[1][pos("status")], "started");
    assert_eq!(&rows[0][pos("class")], "low,sym");
    assert_eq!(&rows[0][pos("time_s")], "0.1");
    assert_eq!(&rows[0][pos("power_w")], "");
    assert_eq!(&rows[0][pos("cache_hit")], "false");
    assert_eq!(&rows[0][pos("objective")], "703482");
    assert_eq!(&rows[0][pos("log")], "line 1\nline \"2\", with comma");
    assert_eq!(&rows[1][pos("ended_at")], "");

    // No trials: a header without parameter columns.
    let mut buf = Vec::new();
    write_csv(&[], &mut buf).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert!(
        text.starts_with("trial,point_id,") && !text.contains("p."),
        "{text}"
    );
}

#[test]
fn json_dump_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let (s, c) = filled_store(&dir);
    let dump = StoreDump::load(&s, &c).unwrap();
    assert_eq!(dump.trials.len(), 2);
    assert_eq!(dump.instances.len(), 1);
    assert_eq!(dump.runs.len(), 1);
    assert_eq!(dump.evaluations.len(), 1);
    assert_eq!(dump.exports.len(), 1);
    let mut buf = Vec::new();
    write_json(&dump, &mut buf).unwrap();
    let back: StoreDump = serde_json::from_slice(&buf).unwrap();
    assert_eq!(back, dump);

    // The documented shape (docs/results.md).
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(v["format"], "mats-results");
    assert_eq!(v["version"], 1);
    assert_eq!(v["campaign"]["name"], "demo");
    assert_eq!(v["instances"][0]["name"], "tai20a");
    assert!(v["instances"][0]["id"].is_i64());
    assert_eq!(v["trials"][0]["point"], json!({"threads": 128}));
    assert_eq!(v["trials"][0]["status"], "ok");
    assert_eq!(v["trials"][0]["measurement"]["registers"], 40);
    assert_eq!(v["trials"][1]["measurement"]["time_s"], json!(null));
    assert_eq!(v["exports"][0]["point"], json!({"threads": 128}));

    let mut buf = Vec::new();
    write_trials_json(&dump.trials, &mut buf).unwrap();
    let trials: Vec<TrialRow> = serde_json::from_slice(&buf).unwrap();
    assert_eq!(trials, dump.trials);
}
