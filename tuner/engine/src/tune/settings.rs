//! What decides a trial's value, recorded with the campaign so that `--resume` can refuse a
//! campaign whose measurement settings changed since its trials were measured.
//!
//! The store is the cache: a resumed campaign reuses every finished trial of a (point,
//! instance, seed, device). That is only sound while a trial would be measured the same way
//! now, so everything that decides its value (or how trials combine into an evaluation) is
//! kept, key by key, in the campaign's settings under [`KEY`]. The budget, the strategy and
//! racing decide only which points are measured and may change between runs. Shards of a
//! campaign record the same settings, so `mats merge` accepts them.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::campaign::instances::CampaignInstance;
use crate::campaign::plan::CampaignPlan;

/// The key of the campaign's settings JSON that holds the measurement settings.
pub const KEY: &str = "measured_under";

/// What the GPUs' kernels are compiled for: their architecture and the NVRTC version. The
/// device itself is part of a trial's identity (a trial is only reused on its own device),
/// and shards of one campaign run on different machines, so it is not compared here.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiler {
    pub arch: u32,
    pub nvrtc: Option<String>,
}

/// The measurement settings of `plan` as a flat map of dotted keys (`run.budget_s`,
/// `instances.tai12a.sha256`, ...), so a change is named by the key a user edits.
/// `compiler`: the GPUs' (`None` on the CPU); `instances`: searched ones and holdouts, each
/// with its class.
pub fn fingerprint(
    plan: &CampaignPlan,
    compiler: Option<&Compiler>,
    instances: &[CampaignInstance],
) -> Result<BTreeMap<String, Value>> {
    let mut nested = serde_json::Map::new();
    let setup = &plan.setup;
    nested.insert("objective".into(), json!(plan.objectives_label()));
    let mut run = serde_json::to_value(plan.mode)?;
    // Several budgets: a later budget's trials are measured at its own budget, so the list
    // decides their values (absent for one budget, so older campaigns still resume).
    if let (Value::Object(run), false) = (&mut run, plan.budgets_s.is_empty()) {
        run.insert("budgets_s".into(), json!(plan.budgets_s));
        run.insert("later_seeds".into(), json!(plan.later_seeds));
    }
    nested.insert("run".into(), run);
    nested.insert("seeds".into(), json!(plan.seeds));
    nested.insert("backend".into(), json!(plan.backend.name()));
    nested.insert("arch".into(), json!(compiler.map(|c| c.arch)));
    nested.insert(
        "nvrtc".into(),
        json!(compiler.and_then(|c| c.nvrtc.clone())),
    );
    nested.insert(
        "measurement".into(),
        serde_json::to_value(&plan.measurement)?,
    );
    nested.insert(
        format!("{}.iterations", setup.table),
        json!(setup.iterations),
    );
    nested.insert(
        "space".into(),
        json!({
            "file_sha256": short_sha(setup.space.text().as_bytes()),
            "family": setup.space.family(),
        }),
    );
    // The overrides as the campaign wrote them (constants, domains, constraints): they change
    // what a point realises to.
    nested.insert(
        format!("{}.overrides", setup.table),
        setup.overrides_as_written.clone(),
    );
    nested.insert(
        format!("{}.baseline", setup.table),
        json!(setup.baseline.to_string()),
    );
    nested.insert(
        format!("{}.default", setup.table),
        json!(setup.default_point.as_ref().map(ToString::to_string)),
    );
    nested.insert("quality.margin_percent".into(), json!(plan.margin_percent));
    let mut by_name = serde_json::Map::new();
    for inst in instances {
        by_name.insert(
            inst.record.name.clone(),
            json!({
                // The feature class (a class table's name is in the campaign's text): what
                // a new version's thresholds would change under a resumed campaign.
                "class": inst.instance.class(),
                // The class it is tuned in (a class table's, else the feature class): a
                // resumed campaign whose table moved it would keep the old class's runs
                // beside the new class's, and export both.
                "campaign_class": inst.record.class,
                "best_known": inst.record.best_known,
                "sha256": file_sha(&inst.path)?,
            }),
        );
    }
    nested.insert("instances".into(), Value::Object(by_name));
    let mut flat = BTreeMap::new();
    flatten("", &Value::Object(nested), &mut flat);
    Ok(flat)
}

fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// The first 16 hex digits of a SHA-256: enough to tell two versions of a file apart.
fn short_sha(bytes: &[u8]) -> String {
    let digest = format!("{:x}", Sha256::digest(bytes));
    digest[..16].to_string()
}

/// The short SHA-256 of an instance file, as the settings record it (`instances.NAME.sha256`)
/// and an export's class members list it.
pub fn file_sha(path: &Path) -> Result<String> {
    // The instance was read (within the input cap) a moment ago, so this read is bounded too.
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read instance {} to fingerprint it", path.display()))?;
    Ok(short_sha(&bytes))
}

/// One measurement setting that differs from what the stored trials were measured under.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub key: String,
    pub was: Option<Value>,
    pub now: Option<Value>,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<Value>| match v {
            None => "(absent)".to_string(),
            Some(v) => cut(&v.to_string()),
        };
        write!(
            f,
            "{} ({} -> {})",
            self.key,
            show(&self.was),
            show(&self.now)
        )
    }
}

/// A value as shown in a message, long ones cut (an override table can be long).
fn cut(text: &str) -> String {
    if text.chars().count() <= 80 {
        text.to_string()
    } else {
        let head: String = text.chars().take(77).collect();
        format!("{head}...")
    }
}

/// The keys whose value differs between the stored settings and now. A store written before
/// the settings were recorded has nothing to compare with, and passes.
pub fn changes(stored: &Value, now: &BTreeMap<String, Value>) -> Vec<Change> {
    let Some(was) = results::CampaignSettings::from_json(stored).measured_under else {
        return Vec::new();
    };
    let mut keys: Vec<&String> = was.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (a, b) = (was.get(k), now.get(k));
            // A key recorded since a store was written is no change to that store.
            if a.is_none() && RECORDED_LATER.iter().any(|suffix| k.ends_with(suffix)) {
                return None;
            }
            (!same(a, b)).then(|| Change {
                key: k.clone(),
                was: a.cloned(),
                now: b.cloned(),
            })
        })
        .collect()
}

/// Settings keys (by suffix) that stores written by earlier versions lack.
const RECORDED_LATER: &[&str] = &[".campaign_class"];

/// Equal values; numbers compare as numbers (a float read back as 1 equals 1.0).
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (a, b) => a == b,
    }
}

/// The refusal of `--resume` after a change: names the changed keys, where each was made
/// (the campaign file, an instance file's contents, the space file), and the ways out.
pub fn refusal(plan: &CampaignPlan, trials: usize, changes: &[Change]) -> String {
    let listed: Vec<String> = changes.iter().take(8).map(ToString::to_string).collect();
    let more = changes.len().saturating_sub(listed.len());
    // An instance whose file changed under the same name, and the space file, are edited
    // outside the campaign file: "revert these settings in campaign.toml" sent users there.
    let edited_instances: Vec<&str> = changes
        .iter()
        .filter(|c| c.was.is_some() && c.now.is_some())
        .filter_map(|c| c.key.strip_prefix("instances.")?.strip_suffix(".sha256"))
        .collect();
    let space = changes.iter().any(|c| c.key == "space.file_sha256");
    let in_campaign = changes.len() > edited_instances.len() + usize::from(space);
    let mut reverts = Vec::new();
    if in_campaign {
        reverts.push(format!("revert the settings in {}", plan.path.display()));
    }
    if !edited_instances.is_empty() {
        reverts.push(format!(
            "restore the instance file(s) of {} as they were measured (their contents changed)",
            edited_instances.join(", ")
        ));
    }
    if space {
        reverts.push("restore the space file as it was measured".to_string());
    }
    let mut revert = reverts.join(", ");
    if let Some(first) = revert.get(..1) {
        revert = first.to_uppercase() + &revert[1..];
    }
    format!(
        "cannot resume campaign {:?} in {}: its {trials} trial(s) were measured under other \
         settings, and reusing them would mix unlike measurements; changed: {}{}. {revert}, or \
         start a new store: `--fresh` (deletes the folder's results) or `--out NEW_FOLDER`",
        plan.name,
        plan.out_dir.display(),
        listed.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn changes_name_every_differing_key_and_only_those() {
        let was = map(&[
            ("run.budget_s", json!(0.2)),
            ("seeds", json!([1, 2, 3])),
            ("instances.a.sha256", json!("aa")),
            ("measurement.timed_runs", json!(5)),
        ]);
        let stored = json!({ KEY: was, "strategy": "hill-climbing" });
        let now = map(&[
            ("run.budget_s", json!(0.5)),
            ("seeds", json!([1, 2, 3])),
            ("instances.b.sha256", json!("bb")),
            ("measurement.timed_runs", json!(5.0)),
        ]);
        let keys: Vec<String> = changes(&stored, &now).into_iter().map(|c| c.key).collect();
        assert_eq!(
            keys,
            ["instances.a.sha256", "instances.b.sha256", "run.budget_s"]
        );
        // Nothing recorded (an older store): nothing to compare, nothing refused.
        assert!(changes(&json!({"seed": 1}), &now).is_empty());
        // Identical: no change.
        assert!(changes(&json!({ KEY: now.clone() }), &now).is_empty());
        let shown = Change {
            key: "run.budget_s".into(),
            was: Some(json!(0.2)),
            now: None,
        }
        .to_string();
        assert_eq!(shown, "run.budget_s (0.2 -> (absent))");
    }

    #[test]
    fn nested_settings_flatten_to_dotted_keys() {
        let mut out = BTreeMap::new();
        flatten(
            "",
            &json!({"run": {"mode": "budget", "budget_s": 1.0}, "seeds": [1], "x": {}}),
            &mut out,
        );
        let keys: Vec<&str> = out.keys().map(String::as_str).collect();
        assert_eq!(keys, ["run.budget_s", "run.mode", "seeds", "x"]);
    }
}
