//! A campaign's progress, read from its store while its `mats tune` writes it (WAL: readers
//! never block the writer): trials done, the best value so far, and an ETA from the budget.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::queue::{now, Entry};
pub use super::status::{Best, Progress};

/// Reads what the store holds; a store that does not exist yet (or cannot be read) gives an
/// empty progress, never an error: status must answer whatever the campaign's state.
pub fn read(entry: &Entry) -> Progress {
    let path = entry.out_dir.join(engine::tune::STORE_FILE);
    let mut p = read_store(&path).unwrap_or_default();
    if entry.state == "running" {
        if let Some((eta_s, bound)) = eta(entry, p.trials_done) {
            p.eta_s = Some(eta_s);
            p.eta_is_bound = bound;
        }
    }
    p
}

fn read_store(path: &Path) -> Option<Progress> {
    if !path.is_file() {
        return None;
    }
    // Never create, and never wait long behind a writer: status answers at once.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.busy_timeout(Duration::from_millis(200)).ok()?;
    let (done, first): (i64, Option<f64>) = conn
        .query_row(
            "SELECT COUNT(*) FILTER (WHERE status != 'started'),
                    (julianday(MIN(started_at)) - 2440587.5) * 86400.0
             FROM trials",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok()?;
    // The latest search's best: the baseline, the final re-measure and the holdouts (other
    // instances, fresh seeds) measure other things and are not the campaign's progress.
    let best = conn
        .query_row(
            "SELECT r.class, r.objective,
                    MIN(CASE WHEN r.objective LIKE 'gap%' OR r.objective LIKE 'pareto:gap%'
                                 THEN e.gap_percent
                             WHEN r.objective LIKE 'energy%' OR r.objective LIKE 'pareto:energy%'
                                 THEN e.energy_j
                             WHEN r.objective LIKE 'power%' OR r.objective LIKE 'pareto:power%'
                                 THEN e.power_w
                             ELSE e.time_s END)
             FROM evaluations e JOIN runs r ON r.id = e.run_id
             WHERE e.status = 'ok'
               AND r.id = (SELECT MAX(x.run_id) FROM evaluations x JOIN runs s ON s.id = x.run_id
                           WHERE x.status = 'ok'
                             AND s.strategy NOT IN
                                 ('baseline', 'final', 'holdout', 'front', 'cross-class'))",
            [],
            |r| {
                Ok(
                    match (r.get::<_, Option<String>>(0)?, r.get(1)?, r.get(2)?) {
                        (Some(class), Some(objective), Some(value)) => Some(Best {
                            class,
                            objective: best_label(objective),
                            value,
                        }),
                        _ => None,
                    },
                )
            },
        )
        .optional()
        .ok()
        .flatten()
        .flatten();
    Some(Progress {
        trials_done: done,
        first_trial_at: first,
        best,
        eta_s: None,
        eta_is_bound: false,
    })
}

/// What a best value is of: the run's objective, or for a Pareto search (`pareto:gap,energy`)
/// the first of its pair, which is the value shown (a front has no single best).
fn best_label(objective: String) -> String {
    match results::Metric::first_of(&objective) {
        Some(first) if objective.starts_with("pareto:") => {
            format!("{first} (first of {objective})")
        }
        _ => objective,
    }
}

/// Seconds left of the search: the trial budget at the pace since the first start, capped by
/// what is left of the wall-time budget of the latest start (each `mats tune` process has a
/// budget of its own). Trials of earlier runs of a resumed campaign count as done, so the pace
/// is a rough one after a restart. The final re-measure (fresh seeds, holdouts) follows the
/// search outside its budget, so neither figure bounds the campaign's end.
/// The flag is true where only the wall-time budget spoke (no pace).
fn eta(entry: &Entry, done: i64) -> Option<(f64, bool)> {
    let elapsed = now() - entry.started_at?;
    let this_start = now() - entry.resumed_at.or(entry.started_at)?;
    let by_trials = match entry.max_trials {
        Some(max) if done > 0 && elapsed > 0.0 => {
            Some((max - done).max(0) as f64 * elapsed / done as f64)
        }
        _ => None,
    };
    let by_wall = entry.wall_s.map(|w| (w - this_start).max(0.0));
    match (by_trials, by_wall) {
        (Some(a), Some(b)) => Some((a.min(b), false)),
        (Some(a), None) => Some((a, false)),
        (None, Some(b)) => Some((b, true)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eta_from_the_wall_budget_alone_is_a_bound() {
        let entry = |max_trials: Option<i64>| Entry {
            id: 1,
            name: "c".into(),
            campaign: "c.toml".into(),
            out_dir: "out".into(),
            cwd: ".".into(),
            priority: 0,
            state: "running".into(),
            submitted_at: now() - 60.0,
            started_at: Some(now() - 30.0),
            resumed_at: Some(now() - 30.0),
            ended_at: None,
            starts: 1,
            pid: None,
            cancel: false,
            reason: None,
            max_trials,
            wall_s: Some(120.0),
            progress: None,
        };
        let (left, bound) = eta(&entry(None), 10).unwrap();
        assert!(bound && (89.0..=91.0).contains(&left), "{left}");
        // 10 of 20 trials in 30 s: 30 s more, a pace rather than a bound.
        let (left, bound) = eta(&entry(Some(20)), 10).unwrap();
        assert!(!bound && (29.0..=31.0).contains(&left), "{left}");
        // Resumed 10 s ago, first started 200 s ago: the new process has its own 120 s (the
        // first start's clock said 0 s left while the resumed search went on).
        let mut resumed = entry(None);
        resumed.started_at = Some(now() - 200.0);
        resumed.resumed_at = Some(now() - 10.0);
        resumed.starts = 2;
        let (left, bound) = eta(&resumed, 10).unwrap();
        assert!(bound && (109.0..=111.0).contains(&left), "{left}");
    }

    #[test]
    fn the_best_so_far_is_the_latest_searchs_not_a_holdouts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.sqlite");
        let store = results::Store::open(&path).unwrap();
        let c = store.campaign("c", "", &serde_json::json!({})).unwrap();
        let point = store.point(c.id, &results::Point::new()).unwrap();
        let evaluate = |strategy: &str, objective: &str, gap: f64| {
            let run = store
                .begin_run(c.id, "qap:x", strategy, objective, &serde_json::json!({}))
                .unwrap();
            store
                .record_evaluation(&results::NewEvaluation {
                    run_id: run.id,
                    point_id: point,
                    status: results::EvaluationStatus::Ok,
                    time_s: Some(1.0),
                    power_w: None,
                    energy_j: None,
                    gap_percent: Some(gap),
                    new_trials: 0,
                })
                .unwrap();
        };
        evaluate("hill-climbing", "gap", 0.092);
        evaluate("final", "gap", 0.05);
        evaluate("holdout", "gap", 0.851);
        let best = read_store(&path).unwrap().best.unwrap();
        assert_eq!(best.value, 0.092);
        assert_eq!(best.objective, "gap");
        // A Pareto search's best is its first metric's (it was the least time, under the
        // label of a gap x energy search).
        evaluate("pareto", "pareto:gap,energy", 0.31);
        let best = read_store(&path).unwrap().best.unwrap();
        assert_eq!(best.value, 0.31);
        assert_eq!(best.objective, "gap (first of pareto:gap,energy)");
    }
}
