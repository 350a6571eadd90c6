//! The campaign settings the report needs, read leniently from `CampaignRow.settings`.
//!
//! Every key may be missing or malformed (older campaigns, hand-made stores); each such key is
//! recorded in `notes` so the report can say what it could not show instead of failing.

use results::Point;
use serde_json::Value as Json;

/// Production runs assumed when the campaign does not say (the paper's 500).
pub const DEFAULT_PRODUCTION_RUNS: u64 = 500;

pub use results::Parameter;

/// Settings of a campaign, each `None` when absent or unreadable.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub family: Option<String>,
    pub backend: Option<String>,
    pub device: Option<String>,
    pub objectives: Option<String>,
    /// Always set: the campaign's value, else [`DEFAULT_PRODUCTION_RUNS`] (with a note).
    pub production_runs: u64,
    pub baseline: Option<Point>,
    /// The family's default configuration, where the campaign recorded it.
    pub default: Option<Point>,
    pub parameters: Option<Vec<Parameter>>,
    pub quality_margin_percent: Option<f64>,
    pub measurement: Option<Json>,
    pub seed: Option<u64>,
    /// Human-readable remarks about missing or malformed keys.
    pub notes: Vec<String>,
}

impl Settings {
    /// Reads the settings JSON (as [`results::CampaignSettings`]); never fails: each key
    /// that is missing or malformed becomes a note.
    pub fn parse(json: &Json) -> Settings {
        let c = results::CampaignSettings::from_json(json);
        let mut notes = Vec::new();
        for (key, present) in [
            ("family", c.family.is_some()),
            ("backend", c.backend.is_some()),
            ("device", c.device.is_some()),
            ("objectives", c.objectives.is_some()),
            ("quality_margin_percent", c.quality_margin_percent.is_some()),
        ] {
            if !present {
                notes.push(format!("settings has no `{key}`"));
            }
        }
        let production_runs = match c.production_runs {
            Some(n) if n > 0 => n,
            _ => {
                notes.push(format!(
                    "settings has no valid `production_runs`; cost % assumes {DEFAULT_PRODUCTION_RUNS}"
                ));
                DEFAULT_PRODUCTION_RUNS
            }
        };
        if c.baseline.is_none() {
            notes.push(
                "settings has no `baseline` point; the baseline run's evaluation is used".into(),
            );
        }
        if c.parameters.is_none() {
            notes.push("settings has no `parameters` list; parameter kinds are unknown".into());
        }
        Settings {
            family: c.family,
            backend: c.backend,
            device: c.device,
            objectives: c.objectives,
            production_runs,
            baseline: c.baseline,
            default: c.default,
            parameters: c.parameters,
            quality_margin_percent: c.quality_margin_percent,
            measurement: c.measurement.filter(|v| !v.is_null()),
            seed: c.seed,
            notes,
        }
    }

    /// Names of the parameters of the given kinds.
    pub fn parameters_of_kind(&self, kinds: &[&str]) -> Option<Vec<String>> {
        self.parameters.as_ref().map(|ps| {
            ps.iter()
                .filter(|p| kinds.contains(&p.kind.as_str()))
                .map(|p| p.name.clone())
                .collect()
        })
    }

    /// The name of the algorithm-variant parameter: the one of kind `variant`, else a
    /// parameter or baseline key literally called `variant`.
    pub fn variant_parameter(&self) -> Option<String> {
        if let Some(names) = self.parameters_of_kind(&["variant"]) {
            if let Some(first) = names.into_iter().next() {
                return Some(first);
            }
        }
        self.baseline
            .as_ref()
            .filter(|b| b.get("variant").is_some())
            .map(|_| "variant".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_key() {
        let s = Settings::parse(&json!({
            "family": "qap", "backend": "gpu", "device": "H100", "objectives": "time",
            "production_runs": 200, "baseline": {"variant": "2opt", "threads": 1024},
            "parameters": [{"name": "variant", "kind": "variant"}, {"name": "O", "kind": "flag"}],
            "quality_margin_percent": 1.0, "measurement": {}, "seed": 7
        }));
        assert!(s.notes.is_empty(), "{:?}", s.notes);
        assert_eq!(s.production_runs, 200);
        let b = s.baseline.as_ref().expect("baseline");
        assert_eq!(b.get("threads"), Some(&results::Value::Int(1024)));
        assert_eq!(s.variant_parameter().as_deref(), Some("variant"));
        assert_eq!(s.parameters_of_kind(&["flag"]), Some(vec!["O".to_string()]));
    }

    #[test]
    fn missing_keys_become_notes() {
        let s = Settings::parse(&json!({}));
        assert_eq!(s.production_runs, DEFAULT_PRODUCTION_RUNS);
        assert!(s.baseline.is_none());
        assert!(s.notes.iter().any(|n| n.contains("production_runs")));
        assert!(s.notes.iter().any(|n| n.contains("baseline")));
        let s = Settings::parse(&json!("not an object"));
        assert!(s.family.is_none());
    }
}
