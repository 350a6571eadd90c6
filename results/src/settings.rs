//! What a campaign records about itself: the settings `mats tune` writes into the store's
//! campaign row, and every reader (export, reports, merge, the daemon's progress) reads back
//! as this type instead of looking keys up in JSON.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value as Json;

use crate::{Metric, Point};

/// What one production run of a campaign is, decided by its objectives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum RunMode {
    /// A fixed amount of work (iterations); the objectives are its time, power and energy.
    FixedWork,
    /// Run for `budget_s` seconds; the objectives are the gap reached and the energy spent.
    Budget { budget_s: f64 },
    /// Run until the gap reaches `target_gap_percent` or `cap_s` passes; the objectives are
    /// the time and energy it took, an unreached run counting `penalty` x the cap (PAR-k).
    Target {
        target_gap_percent: f64,
        cap_s: f64,
        penalty: f64,
    },
}

impl RunMode {
    /// The wall-clock limit of one production run, if any.
    pub fn limit_s(&self) -> Option<f64> {
        match *self {
            RunMode::FixedWork => None,
            RunMode::Budget { budget_s } => Some(budget_s),
            RunMode::Target { cap_s, .. } => Some(cap_s),
        }
    }

    /// Objective names as campaigns write them, for labels.
    pub fn metric_label(&self, metric: Metric) -> String {
        match (self, metric) {
            (RunMode::FixedWork, m) => m.name().into(),
            (RunMode::Budget { .. }, Metric::Gap) => "gap@budget".into(),
            (RunMode::Budget { .. }, m) => format!("{}@budget", m.name()),
            (RunMode::Target { .. }, Metric::Gap) => "gap".into(),
            (RunMode::Target { .. }, m) => format!("{}-to-target", m.name()),
        }
    }
}

/// A search-space parameter as the settings list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    /// flag | define | launch | variant | runtime | class
    pub kind: String,
}

/// A campaign's settings. Every field is optional when read: stores written by older
/// versions, or edited by hand, lack keys or hold malformed ones, and a reader says what it
/// could not use instead of failing (a malformed key reads as absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CampaignSettings {
    /// What decides a trial's value, key by key (`--resume` refuses a change).
    #[serde(default, deserialize_with = "lenient")]
    pub measured_under: Option<std::collections::BTreeMap<String, Json>>,
    #[serde(default, deserialize_with = "lenient")]
    pub family: Option<String>,
    /// `cpu` | `gpu`.
    #[serde(default, deserialize_with = "lenient")]
    pub backend: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub device: Option<String>,
    /// The searches' objectives, space-separated (`gap@budget`, `pareto:time,energy`).
    #[serde(default, deserialize_with = "lenient")]
    pub objectives: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub production_runs: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub run: Option<RunMode>,
    /// Several budgets (`[run] budgets_s`): `run` is the first; each class was tuned at every
    /// one under the name `CLASS@BUDGETs` (see [`crate::budget`]).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub budgets_s: Option<Vec<f64>>,
    #[serde(default, deserialize_with = "lenient")]
    pub seeds: Option<Vec<u64>>,
    #[serde(default, deserialize_with = "lenient")]
    pub baseline: Option<Point>,
    /// The family's default configuration, where the space can express it.
    #[serde(default, deserialize_with = "lenient")]
    pub default: Option<Point>,
    #[serde(default, deserialize_with = "lenient")]
    pub parameters: Option<Vec<Parameter>>,
    #[serde(default, deserialize_with = "lenient")]
    pub quality_margin_percent: Option<f64>,
    /// The measurement protocol's settings, as the campaign gave them.
    #[serde(default, deserialize_with = "lenient")]
    pub measurement: Option<Json>,
    #[serde(default, deserialize_with = "lenient")]
    pub seed: Option<u64>,
    /// The space file.
    #[serde(default, deserialize_with = "lenient")]
    pub space: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub campaign_file: Option<String>,
    /// Iterations of a fixed-work production run.
    #[serde(default, deserialize_with = "lenient")]
    pub iterations: Option<i64>,
    /// The GPU's compute capability as one number (90 for sm_90).
    #[serde(default, deserialize_with = "lenient")]
    pub arch: Option<u32>,
    #[serde(default, deserialize_with = "lenient")]
    pub driver: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub nvrtc: Option<String>,
    /// Opt-in shared memory per block the kernels were compiled for.
    #[serde(default, deserialize_with = "lenient")]
    pub optin_shared: Option<u64>,
    /// The searches' strategies, space-separated.
    #[serde(default, deserialize_with = "lenient")]
    pub strategy: Option<String>,
    /// `K/N` when this store is one shard of a campaign.
    #[serde(default, deserialize_with = "lenient")]
    pub shard: Option<String>,
}

impl CampaignSettings {
    /// Reads a campaign row's settings; never fails (anything unreadable is absent).
    pub fn from_json(json: &Json) -> CampaignSettings {
        serde_json::from_value(json.clone()).unwrap_or_default()
    }

    /// The settings as the store keeps them.
    pub fn to_json(&self) -> Json {
        // A struct of plain fields always serialises.
        serde_json::to_value(self).unwrap_or(Json::Null)
    }
}

/// A field that reads as `None` when it holds the wrong type.
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = Option::<Json>::deserialize(d)?;
    Ok(value.and_then(|v| serde_json::from_value(v).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn written_settings_read_back_as_the_same_type() {
        let s = CampaignSettings {
            family: Some("qap".into()),
            backend: Some("gpu".into()),
            objectives: Some("pareto:gap,energy".into()),
            production_runs: Some(500),
            run: Some(RunMode::Budget { budget_s: 0.5 }),
            seeds: Some(vec![1, 2, 3]),
            baseline: Some([("variant", "rots-block")].into_iter().collect()),
            parameters: Some(vec![Parameter {
                name: "variant".into(),
                kind: "variant".into(),
            }]),
            arch: Some(90),
            ..CampaignSettings::default()
        };
        assert_eq!(CampaignSettings::from_json(&s.to_json()), s);
    }

    #[test]
    fn malformed_keys_read_as_absent_and_the_rest_survives() {
        let s = CampaignSettings::from_json(&json!({
            "family": 7, "backend": "cpu", "production_runs": "many", "run": {"mode": "?"}
        }));
        assert_eq!(s.family, None);
        assert_eq!(s.backend.as_deref(), Some("cpu"));
        assert_eq!(s.production_runs, None);
        assert_eq!(s.run, None);
        assert_eq!(
            CampaignSettings::from_json(&json!("not an object")),
            CampaignSettings::default()
        );
    }
}
