//! A damaged or foreign store gets one line naming the file and what to do, never the SQL
//! text of the statement that failed (it used to print whole queries), and its cause once.

use std::error::Error as _;

use results::{InstanceRecord, Measurement, Point, Store, TrialStatus};
use serde_json::json;

fn filled_store(path: &std::path::Path) {
    let s = Store::open(path).unwrap();
    let c = s.campaign("damaged", "", &json!({})).unwrap();
    let i = s
        .instance(
            c.id,
            &InstanceRecord {
                name: "tai12a".into(),
                source: "data/qap/tai12a.dat".into(),
                family: "qap".into(),
                class: "low".into(),
                features: json!({}),
                best_known: None,
            },
        )
        .unwrap();
    for k in 0..200 {
        let mut p = Point::new();
        p.set("k", k);
        let p = s.point(c.id, &p).unwrap();
        let t = s.begin_trial(c.id, p, i, 1, "cpu").unwrap();
        s.finish_trial(
            t,
            TrialStatus::Ok,
            &Measurement::default(),
            &"log\n".repeat(50),
        )
        .unwrap();
    }
}

fn assert_one_clean_line(message: &str) {
    assert_eq!(message.lines().count(), 1, "{message}");
    for sql in ["SELECT", "FROM", "JOIN", "WHERE"] {
        assert!(!message.contains(sql), "SQL in the message: {message}");
    }
    assert!(message.contains("results.db"), "names the file: {message}");
}

#[test]
fn a_foreign_schema_is_named_without_its_sql() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    filled_store(&db);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("ALTER TABLE trials RENAME COLUMN status TO st;")
        .unwrap();
    drop(conn);
    let s = Store::open(&db).unwrap();
    let c = s.campaigns().unwrap()[0].id;
    let e = s.trials(c).unwrap_err();
    let message = e.to_string();
    assert_one_clean_line(&message);
    assert!(message.contains("t.status"), "{message}");
    assert!(
        e.source().is_none(),
        "the cause is in the message, not repeated as a source"
    );
}

#[test]
fn overwritten_pages_say_the_file_is_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    filled_store(&db);
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 4 * 4096, "the store spans several pages");
    let end = bytes.len() - 10;
    for b in &mut bytes[3 * 4096..end] {
        *b = 0xde;
    }
    std::fs::write(&db, &bytes).unwrap();
    let message = match Store::open(&db) {
        Err(e) => e.to_string(),
        Ok(s) => match s.campaigns().and_then(|c| s.trials(c[0].id)) {
            Err(e) => e.to_string(),
            Ok(_) => s
                .integrity_check()
                .expect_err("damage goes unnoticed")
                .to_string(),
        },
    };
    assert_one_clean_line(&message);
    assert!(
        message.contains("damaged")
            || message.contains("integrity")
            || message.contains("not a mats results store"),
        "{message}"
    );
}
