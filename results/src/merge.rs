//! Merging stores: the shards of a campaign (`mats tune --shard K/N`, one store each, perhaps
//! on different machines) become one store that reads as a single run.
//!
//! Rows are matched by their natural identity, never by id (ids differ between files):
//! campaigns by name, instances by name, points by key, runs by (class, strategy, objective,
//! options, start time), trials by (point, instance, seed, device). A finished trial that the
//! target already holds is skipped, so merging overlapping shards (or one shard twice) adds
//! nothing twice. What must agree (a campaign's TOML and settings, an instance's class and
//! features) is compared, and a difference is refused before anything is written.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::types::Value as SqlValue;
use rusqlite::{params, OptionalExtension};

use super::{Store, SCHEMA_VERSION};
use crate::error::{Result, StoreError};

/// What one merge added.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MergeCounts {
    pub campaigns: usize,
    pub instances: usize,
    pub points: usize,
    pub runs: usize,
    pub evaluations: usize,
    pub trials: usize,
    /// Finished trials the target already held (same point, instance, seed and device).
    pub duplicate_trials: usize,
}

/// A settings object without the keys that may differ between shards.
fn comparable(settings: &str, ignored: &[&str]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(settings).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        for key in ignored {
            map.remove(*key);
        }
    }
    v
}

fn first_difference(a: &serde_json::Value, b: &serde_json::Value) -> String {
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            for (k, va) in a {
                let vb = b.get(k).unwrap_or(&serde_json::Value::Null);
                if va != vb {
                    return format!("setting `{k}` ({} vs {})", cut(va), cut(vb));
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    return format!("setting `{k}` (absent vs {})", cut(vb));
                }
            }
            "settings".into()
        }
        _ => "settings".into(),
    }
}

/// Where two campaign files first differ, as "line N (`this` vs `that`)": a comment or a
/// blank line counts too (the store keeps the file as written), which the user could not
/// otherwise guess from two files that run alike.
fn first_line_difference(a: &str, b: &str) -> String {
    let (mut la, mut lb) = (a.lines(), b.lines());
    let mut line = 1;
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (None, None) => return "its line endings or final newline".into(),
            (x, y) => {
                let show = |l: Option<&str>| match l {
                    Some(l) => format!("{:?}", cut_text(l)),
                    None => "the end of the file".into(),
                };
                return format!("line {line}: {} vs {}", show(x), show(y));
            }
        }
    }
}

fn cut_text(s: &str) -> String {
    if s.chars().count() > 80 {
        format!("{}...", s.chars().take(80).collect::<String>())
    } else {
        s.to_string()
    }
}

fn cut(v: &serde_json::Value) -> String {
    cut_text(&v.to_string())
}

impl Store {
    /// Merges the store file `source` into this store, in one transaction: on any conflict
    /// nothing is written. Settings keys in `ignored` may differ between the two (a shard's
    /// index, the device's label, the campaign file's path on its machine); the target keeps
    /// its own values, and a new campaign gets the first source's, except for the keys in
    /// `cleared` (a shard's index), which it gets as null.
    pub fn merge_from(
        &self,
        source: &Path,
        ignored: &[&str],
        cleared: &[&str],
    ) -> Result<MergeCounts> {
        // Opening checks that it is a mats store and brings an older schema up to date.
        drop(Store::open_existing(source)?);
        let conflict = |what: String| StoreError::Invalid {
            path: source.to_path_buf(),
            // The caller names the store it merges into (a staging file here).
            what,
        };
        self.conn
            .execute(
                "ATTACH DATABASE ?1 AS src",
                [source.to_string_lossy().as_ref()],
            )
            .map_err(|e| self.err("attach the store to merge", e))?;
        let result = (|| -> Result<MergeCounts> {
            let version: i64 = self
                .conn
                .query_row("PRAGMA src.user_version", [], |r| r.get(0))
                .map_err(|e| self.err("read the merged store's version", e))?;
            if version != SCHEMA_VERSION {
                return Err(conflict(format!(
                    "schema version {version}, expected {SCHEMA_VERSION}"
                )));
            }
            let tx = self
                .conn
                .unchecked_transaction()
                .map_err(|e| self.err("begin merge", e))?;
            let counts = self.merge_attached(ignored, cleared, &conflict)?;
            tx.commit().map_err(|e| self.err("commit merge", e))?;
            Ok(counts)
        })();
        let detached = self
            .conn
            .execute("DETACH DATABASE src", [])
            .map_err(|e| self.err("detach the merged store", e));
        let counts = result?;
        detached?;
        Ok(counts)
    }

    fn merge_attached(
        &self,
        ignored: &[&str],
        cleared: &[&str],
        conflict: &dyn Fn(String) -> StoreError,
    ) -> Result<MergeCounts> {
        let op = "merge";
        let e = |e| self.err(op, e);
        let mut counts = MergeCounts::default();
        let sources: Vec<(i64, String, String, String, String)> = self.query_all(
            op,
            "SELECT id, name, config_toml, settings, created_at FROM src.campaigns ORDER BY id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        for (src_id, name, toml, settings, created) in sources {
            let existing: Option<(i64, String, String)> = self
                .conn
                .query_row(
                    "SELECT id, config_toml, settings FROM main.campaigns WHERE name = ?1",
                    [&name],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(e)?;
            let campaign = match existing {
                Some((id, main_toml, main_settings)) => {
                    if main_toml != toml {
                        return Err(conflict(format!(
                            "campaign {name:?} was run from a different campaign file (its \
                             TOML differs first at {}); merge only shards of one campaign",
                            first_line_difference(&main_toml, &toml)
                        )));
                    }
                    let (a, b) = (
                        comparable(&main_settings, ignored),
                        comparable(&settings, ignored),
                    );
                    if a != b {
                        return Err(conflict(format!(
                            "campaign {name:?} differs in {}; merge only shards run with the \
                             same settings",
                            first_difference(&a, &b)
                        )));
                    }
                    id
                }
                None => {
                    let mut s: serde_json::Value =
                        serde_json::from_str(&settings).unwrap_or_default();
                    if let Some(map) = s.as_object_mut() {
                        for key in cleared {
                            if map.contains_key(*key) {
                                map.insert((*key).to_string(), serde_json::Value::Null);
                            }
                        }
                    }
                    counts.campaigns += 1;
                    self.conn
                        .query_row(
                            "INSERT INTO main.campaigns (name, config_toml, settings, created_at)
                             VALUES (?1, ?2, ?3, ?4) RETURNING id",
                            params![name, toml, s.to_string(), created],
                            |r| r.get(0),
                        )
                        .map_err(e)?
                }
            };
            self.merge_campaign(src_id, campaign, &name, conflict, &mut counts)?;
        }
        Ok(counts)
    }

    fn merge_campaign(
        &self,
        src: i64,
        dst: i64,
        name: &str,
        conflict: &dyn Fn(String) -> StoreError,
        counts: &mut MergeCounts,
    ) -> Result<()> {
        self.check_not_tuned_again(src, dst, conflict)?;
        let instance_ids = self.merge_instances(src, dst, name, conflict, counts)?;
        let point_ids = self.merge_points(src, dst, counts)?;
        self.merge_runs(src, dst, &point_ids, conflict, counts)?;
        self.merge_trials(src, dst, &instance_ids, &point_ids, conflict, counts)
    }

    /// Every run the target holds of a class the source tuned is still in the source. A
    /// shard tuned again from scratch (`--fresh`) after a merge took its first runs no longer
    /// holds them: its trials (the same points, instances and seeds) would be taken for
    /// duplicates and dropped, while its new runs and its summary named other winners.
    fn check_not_tuned_again(
        &self,
        src: i64,
        dst: i64,
        conflict: &dyn Fn(String) -> StoreError,
    ) -> Result<()> {
        let lost: Vec<(String, String)> = self.query_all(
            "merge",
            "SELECT m.class, MIN(m.started_at) FROM main.runs m
             WHERE m.campaign_id = ?1
               AND m.class IN (SELECT class FROM src.runs WHERE campaign_id = ?2)
               AND NOT EXISTS (
                   SELECT 1 FROM src.runs s
                   WHERE s.campaign_id = ?2 AND s.class = m.class AND s.strategy = m.strategy
                     AND s.objective = m.objective AND s.options = m.options
                     AND s.started_at = m.started_at)
             GROUP BY m.class ORDER BY m.class",
            params![dst, src],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        match lost.first() {
            None => Ok(()),
            Some((class, started)) => Err(conflict(format!(
                "class {class:?} was tuned again from the start after an earlier merge took \
                 its runs (the merged search started {started}; this store no longer holds \
                 it): merge the shards into a new folder"
            ))),
        }
    }

    /// The source campaign's instances, matched by name (class, family, features and best-known value must agree); source id -> target id.
    fn merge_instances(
        &self,
        src: i64,
        dst: i64,
        name: &str,
        conflict: &dyn Fn(String) -> StoreError,
        counts: &mut MergeCounts,
    ) -> Result<HashMap<i64, i64>> {
        let op = "merge";
        let e = |e| self.err(op, e);
        // Instances: by name; class, family, features and best-known value must agree.
        type InstanceCols = (i64, String, String, String, String, String, Option<i64>);
        let instances: Vec<InstanceCols> = self.query_all(
            op,
            "SELECT id, name, source, family, class, features, best_known
             FROM src.instances WHERE campaign_id = ?1",
            [src],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )?;
        let mut instance_ids = HashMap::new();
        for (id, iname, source, family, class, features, bk) in instances {
            let found: Option<(i64, String, String, String, Option<i64>)> = self
                .conn
                .query_row(
                    "SELECT id, family, class, features, best_known FROM main.instances
                     WHERE campaign_id = ?1 AND name = ?2",
                    params![dst, iname],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()
                .map_err(e)?;
            let mapped = match found {
                Some((mid, f, c, feat, b)) => {
                    let same_features = serde_json::from_str::<serde_json::Value>(&feat).ok()
                        == serde_json::from_str::<serde_json::Value>(&features).ok();
                    if f != family || c != class || !same_features || b != bk {
                        return Err(conflict(format!(
                            "instance {iname:?} of campaign {name:?} differs (family, class, \
                             features or best-known value: {c} vs {class})"
                        )));
                    }
                    mid
                }
                None => {
                    counts.instances += 1;
                    self.conn
                        .query_row(
                            "INSERT INTO main.instances
                                 (campaign_id, name, source, family, class, features, best_known)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
                            params![dst, iname, source, family, class, features, bk],
                            |r| r.get(0),
                        )
                        .map_err(e)?
                }
            };
            instance_ids.insert(id, mapped);
        }
        Ok(instance_ids)
    }

    /// The source campaign's points, matched by key; source id -> target id.
    fn merge_points(
        &self,
        src: i64,
        dst: i64,
        counts: &mut MergeCounts,
    ) -> Result<HashMap<i64, i64>> {
        let op = "merge";
        let e = |e| self.err(op, e);
        // Points: by key.
        let points: Vec<(i64, String, String)> = self.query_all(
            op,
            "SELECT id, key, point FROM src.points WHERE campaign_id = ?1",
            [src],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let mut point_ids = HashMap::new();
        for (id, key, point) in points {
            let found: Option<i64> = self
                .conn
                .query_row(
                    "SELECT id FROM main.points WHERE campaign_id = ?1 AND key = ?2",
                    params![dst, key],
                    |r| r.get(0),
                )
                .optional()
                .map_err(e)?;
            let mapped = match found {
                Some(m) => m,
                None => {
                    counts.points += 1;
                    self.conn
                        .query_row(
                            "INSERT INTO main.points (campaign_id, key, point)
                             VALUES (?1, ?2, ?3) RETURNING id",
                            params![dst, key, point],
                            |r| r.get(0),
                        )
                        .map_err(e)?
                }
            };
            point_ids.insert(id, mapped);
        }
        Ok(point_ids)
    }

    /// The source campaign's runs with their evaluations; a run the target already holds keeps its own.
    fn merge_runs(
        &self,
        src: i64,
        dst: i64,
        point_ids: &HashMap<i64, i64>,
        conflict: &dyn Fn(String) -> StoreError,
        counts: &mut MergeCounts,
    ) -> Result<()> {
        let op = "merge";
        let e = |e| self.err(op, e);
        // Runs with their evaluations. A run the target already holds (merged before its shard
        // was resumed) takes the evaluations it lacks and its end: a merge taken again must
        // equal a fresh merge of the same folders.
        type RunCols = (i64, String, String, String, String, String, Option<String>);
        let runs: Vec<RunCols> = self.query_all(
            op,
            "SELECT id, class, strategy, objective, options, started_at, ended_at
             FROM src.runs WHERE campaign_id = ?1 ORDER BY id",
            [src],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            },
        )?;
        for (id, class, strategy, objective, options, started, ended) in runs {
            let found: Option<i64> = self
                .conn
                .query_row(
                    "SELECT id FROM main.runs WHERE campaign_id = ?1 AND class = ?2
                     AND strategy = ?3 AND objective = ?4 AND options = ?5 AND started_at = ?6",
                    params![dst, class, strategy, objective, options, started],
                    |r| r.get(0),
                )
                .optional()
                .map_err(e)?;
            let (run, held) = match found {
                Some(run) => {
                    self.conn
                        .execute(
                            "UPDATE main.runs SET ended_at = ?2
                             WHERE id = ?1 AND ended_at IS NULL AND ?2 IS NOT NULL",
                            params![run, ended],
                        )
                        .map_err(e)?;
                    let held: i64 = self
                        .conn
                        .query_row(
                            "SELECT COALESCE(MAX(seq) + 1, 0) FROM main.evaluations
                             WHERE run_id = ?1",
                            [run],
                            |r| r.get(0),
                        )
                        .map_err(e)?;
                    (run, held)
                }
                None => {
                    counts.runs += 1;
                    let run: i64 = self
                        .conn
                        .query_row(
                            "INSERT INTO main.runs
                                 (campaign_id, class, strategy, objective, options, started_at,
                                  ended_at)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
                            params![dst, class, strategy, objective, options, started, ended],
                            |r| r.get(0),
                        )
                        .map_err(e)?;
                    (run, 0)
                }
            };
            let evals: Vec<Vec<SqlValue>> = self.query_all(
                op,
                "SELECT seq, point_id, status, time_s, power_w, energy_j, gap_percent,
                        new_trials, recorded_at
                 FROM src.evaluations WHERE run_id = ?1 AND seq >= ?2 ORDER BY seq",
                params![id, held],
                |r| (0..9).map(|k| r.get::<_, SqlValue>(k)).collect(),
            )?;
            for mut ev in evals {
                let SqlValue::Integer(p) = ev[1] else {
                    return Err(conflict("an evaluation without a point".into()));
                };
                ev[1] = SqlValue::Integer(*point_ids.get(&p).ok_or_else(|| {
                    conflict(format!("an evaluation refers to a missing point {p}"))
                })?);
                counts.evaluations += 1;
                let mut values = vec![SqlValue::Integer(dst), SqlValue::Integer(run)];
                values.extend(ev);
                self.conn
                    .execute(
                        "INSERT INTO main.evaluations
                             (campaign_id, run_id, seq, point_id, status, time_s, power_w,
                              energy_j, gap_percent, new_trials, recorded_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                        rusqlite::params_from_iter(values),
                    )
                    .map_err(e)?;
            }
        }
        Ok(())
    }

    /// The source campaign's trials, every column but the ids copied by name; a finished trial the target already holds is a duplicate, an unfinished one gets the next attempt.
    fn merge_trials(
        &self,
        src: i64,
        dst: i64,
        instance_ids: &HashMap<i64, i64>,
        point_ids: &HashMap<i64, i64>,
        conflict: &dyn Fn(String) -> StoreError,
        counts: &mut MergeCounts,
    ) -> Result<()> {
        let op = "merge";
        let e = |e| self.err(op, e);
        // Trials: every column but the ids, copied by name.
        let columns: Vec<String> = self
            .query_all(op, "PRAGMA src.table_info(trials)", [], |r| {
                r.get::<_, String>(1)
            })?
            .into_iter()
            .filter(|c| c != "id")
            .collect();
        let at = |name: &str| columns.iter().position(|c| c == name);
        let (Some(ci), Some(pi), Some(ii), Some(si), Some(di), Some(st), Some(ai)) = (
            at("campaign_id"),
            at("point_id"),
            at("instance_id"),
            at("seed"),
            at("device"),
            at("status"),
            at("attempt"),
        ) else {
            return Err(conflict("its trials table lacks identity columns".into()));
        };
        let list = columns.join(", ");
        let trials: Vec<Vec<SqlValue>> = self.query_all(
            op,
            &format!("SELECT {list} FROM src.trials WHERE campaign_id = ?1 ORDER BY id"),
            [src],
            |r| {
                (0..columns.len())
                    .map(|k| r.get::<_, SqlValue>(k))
                    .collect()
            },
        )?;
        let insert = format!(
            "INSERT INTO main.trials ({list}) VALUES ({})",
            (1..=columns.len())
                .map(|k| format!("?{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let int = |v: &SqlValue| match v {
            SqlValue::Integer(i) => Some(*i),
            _ => None,
        };
        for mut t in trials {
            let (Some(p), Some(i)) = (int(&t[pi]), int(&t[ii])) else {
                return Err(conflict("a trial without point or instance".into()));
            };
            let p = *point_ids
                .get(&p)
                .ok_or_else(|| conflict(format!("a trial refers to a missing point {p}")))?;
            let i = *instance_ids
                .get(&i)
                .ok_or_else(|| conflict(format!("a trial refers to a missing instance {i}")))?;
            t[ci] = SqlValue::Integer(dst);
            t[pi] = SqlValue::Integer(p);
            t[ii] = SqlValue::Integer(i);
            let finished =
                matches!(&t[st], SqlValue::Text(s) if s == "ok" || s == "failed" || s == "invalid");
            let same = "FROM main.trials WHERE campaign_id = ?1 AND point_id = ?2
                        AND instance_id = ?3 AND seed = ?4 AND device = ?5";
            let (held_finished, max_attempt, same_attempt): (i64, i64, i64) = self
                .conn
                .query_row(
                    &format!(
                        "SELECT COALESCE(SUM(status IN ('ok', 'failed', 'invalid')), 0),
                                COALESCE(MAX(attempt), 0),
                                COALESCE(SUM(attempt = ?6), 0) {same}"
                    ),
                    params![dst, p, i, t[si], t[di], t[ai]],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .map_err(e)?;
            if (finished && held_finished > 0) || (!finished && same_attempt > 0) {
                if !finished {
                    // A shard killed mid-trial and merged, then resumed (its trial now
                    // `crashed`) and merged again: the target's `started` row follows it.
                    self.conn
                        .execute(
                            "UPDATE main.trials SET status = ?7 WHERE campaign_id = ?1
                             AND point_id = ?2 AND instance_id = ?3 AND seed = ?4
                             AND device = ?5 AND attempt = ?6 AND status = 'started'",
                            params![dst, p, i, t[si], t[di], t[ai], t[st]],
                        )
                        .map_err(e)?;
                }
                counts.duplicate_trials += usize::from(finished);
                continue;
            }
            if same_attempt > 0 {
                t[ai] = SqlValue::Integer(max_attempt + 1);
            }
            counts.trials += 1;
            self.conn
                .execute(&insert, rusqlite::params_from_iter(t))
                .map_err(e)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{
        EvaluationStatus, InstanceRecord, Measurement, NewEvaluation, TrialStatus,
    };
    use crate::Point;

    /// A shard store: campaign `name` with settings `shard`, one class run, and one finished
    /// trial per (point `starts` value, instance) with objective `100 * starts + i`.
    fn shard(
        dir: &Path,
        file: &str,
        toml: &str,
        shard: &str,
        class: &str,
        instances: &[&str],
    ) -> std::path::PathBuf {
        let path = dir.join(file);
        let s = Store::open(&path).unwrap();
        let settings = serde_json::json!({"seed": 7, "shard": shard, "device": file});
        let c = s.campaign("c", toml, &settings).unwrap();
        let run = s
            .begin_run(c.id, class, "exhaustive", "time", &serde_json::json!({}))
            .unwrap();
        for (i, name) in instances.iter().enumerate() {
            let inst = s
                .instance(
                    c.id,
                    &InstanceRecord {
                        name: name.to_string(),
                        source: format!("/data/{name}"),
                        family: "qap".into(),
                        class: class.into(),
                        features: serde_json::json!({"n": 12}),
                        best_known: Some(5),
                    },
                )
                .unwrap();
            for starts in [1i64, 2] {
                let p = s
                    .point(c.id, &Point::new().with("starts", starts.into()))
                    .unwrap();
                let t = s.begin_trial(c.id, p, inst, 7, "cpu").unwrap();
                let m = Measurement {
                    objective: Some(100 * starts + i as i64),
                    time_s: Some(0.001),
                    ..Measurement::default()
                };
                s.finish_trial(t, TrialStatus::Ok, &m, "").unwrap();
                s.record_evaluation(&NewEvaluation {
                    run_id: run.id,
                    point_id: p,
                    status: EvaluationStatus::Ok,
                    time_s: Some(0.001),
                    power_w: None,
                    energy_j: None,
                    gap_percent: None,
                    new_trials: 1,
                })
                .unwrap();
            }
        }
        s.end_run(run.id).unwrap();
        path
    }

    /// A shard killed mid-trial, merged, resumed and merged again leaves no `started` trial
    /// in the merged store: the row follows the shard's `crashed` one.
    #[test]
    fn a_trial_the_shard_recovered_is_recovered_in_the_merge() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shard.sqlite");
        let s = Store::open(&path).unwrap();
        let settings = serde_json::json!({"seed": 7, "shard": "1/1", "device": "cpu"});
        let c = s.campaign("c", "name = \"c\"", &settings).unwrap();
        let inst = s
            .instance(
                c.id,
                &InstanceRecord {
                    name: "x".into(),
                    source: "/data/x".into(),
                    family: "qap".into(),
                    class: "k".into(),
                    features: serde_json::json!({"n": 12}),
                    best_known: Some(5),
                },
            )
            .unwrap();
        let p = s
            .point(c.id, &Point::new().with("starts", 1.into()))
            .unwrap();
        s.begin_trial(c.id, p, inst, 7, "cpu").unwrap(); // killed here
        let out = Store::open(dir.path().join("out.sqlite")).unwrap();
        out.merge_from(&path, &["shard", "device"], &["shard"])
            .unwrap();
        let statuses = |st: &Store| -> Vec<TrialStatus> {
            let c = &st.campaigns().unwrap()[0];
            st.trials(c.id)
                .unwrap()
                .into_iter()
                .map(|t| t.status)
                .collect()
        };
        assert_eq!(statuses(&out), vec![TrialStatus::Started]);
        // Resumed: the started trial is crashed, a second attempt finishes.
        s.recover(c.id).unwrap();
        let t = s.begin_trial(c.id, p, inst, 7, "cpu").unwrap();
        let m = Measurement {
            objective: Some(9),
            time_s: Some(0.001),
            ..Measurement::default()
        };
        s.finish_trial(t, TrialStatus::Ok, &m, "").unwrap();
        out.merge_from(&path, &["shard", "device"], &["shard"])
            .unwrap();
        let mut now = statuses(&out);
        now.sort_by_key(|s| format!("{s:?}"));
        assert_eq!(now, vec![TrialStatus::Crashed, TrialStatus::Ok]);
    }

    fn keys(s: &Store) -> Vec<(String, String, u64, Option<i64>)> {
        let c = &s.campaigns().unwrap()[0];
        let mut v: Vec<_> = s
            .trials(c.id)
            .unwrap()
            .into_iter()
            .map(|t| (t.point.key(), t.instance, t.seed, t.measurement.objective))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn shards_merge_by_identity_and_a_second_merge_adds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let a = shard(
            dir.path(),
            "a.sqlite",
            "name = \"c\"",
            "1/2",
            "x",
            &["i1", "i2"],
        );
        let b = shard(dir.path(), "b.sqlite", "name = \"c\"", "2/2", "y", &["i3"]);
        let out = Store::open(dir.path().join("out.sqlite")).unwrap();
        let ignored = ["shard", "device"];
        let ca = out.merge_from(&a, &ignored, &["shard"]).unwrap();
        assert_eq!(
            (ca.campaigns, ca.instances, ca.points, ca.trials),
            (1, 2, 2, 4)
        );
        assert_eq!((ca.runs, ca.evaluations), (1, 4));
        let cb = out.merge_from(&b, &ignored, &["shard"]).unwrap();
        // The points exist already; the instance and trials are new.
        assert_eq!(
            (cb.campaigns, cb.instances, cb.points, cb.trials),
            (0, 1, 0, 2)
        );
        out.integrity_check().unwrap();
        let mut expected = keys(&Store::open(&a).unwrap());
        expected.extend(keys(&Store::open(&b).unwrap()));
        expected.sort();
        assert_eq!(keys(&out), expected);
        let c = &out.campaigns().unwrap()[0];
        assert!(c.settings["shard"].is_null(), "{}", c.settings);
        assert_eq!(c.settings["device"], "a.sqlite");
        assert_eq!(out.evaluations(c.id).unwrap().len(), 6);

        let again = out.merge_from(&a, &ignored, &["shard"]).unwrap();
        assert_eq!(
            (again.trials, again.duplicate_trials, again.runs),
            (0, 4, 0)
        );
        assert_eq!(keys(&out), expected);
    }

    #[test]
    fn conflicting_campaigns_are_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = shard(dir.path(), "a.sqlite", "name = \"c\"", "1/2", "x", &["i1"]);
        let other_toml = shard(
            dir.path(),
            "b.sqlite",
            "name = \"c\" # edited",
            "2/2",
            "y",
            &["i2"],
        );
        let out = Store::open(dir.path().join("out.sqlite")).unwrap();
        out.merge_from(&a, &["shard", "device"], &["shard"])
            .unwrap();
        let before = keys(&out);
        let err = out
            .merge_from(&other_toml, &["shard", "device"], &["shard"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("b.sqlite")
                && err.contains("different campaign file")
                && err.contains(r##"line 1: "name = \"c\"" vs "name = \"c\" # edited""##),
            "{err}"
        );
        // Settings that must agree: `device` is not ignored this time.
        let other_device = shard(dir.path(), "c.sqlite", "name = \"c\"", "2/2", "y", &["i2"]);
        let err = out
            .merge_from(&other_device, &["shard"], &["shard"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("setting `device`"), "{err}");
        assert_eq!(keys(&out), before);
        out.integrity_check().unwrap();
        assert!(out
            .merge_from(&dir.path().join("none.sqlite"), &[], &[])
            .is_err());
    }

    #[test]
    fn the_first_differing_line_of_two_campaign_files_is_named() {
        let a = "name = \"c\"\nseed = 1\n# tuned on the H200\n";
        assert_eq!(
            first_line_difference(a, "name = \"c\"\nseed = 1\n"),
            r##"line 3: "# tuned on the H200" vs the end of the file"##
        );
        assert_eq!(
            first_line_difference(a, &a.replace("seed = 1", "seed = 2")),
            r#"line 2: "seed = 1" vs "seed = 2""#
        );
        assert_eq!(
            first_line_difference(a, &a.replace('\n', "\r\n")),
            "its line endings or final newline"
        );
    }
}
