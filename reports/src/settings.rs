//! The campaign settings the report needs, read leniently from `CampaignRow.settings`.
//!
//! Every key may be missing or malformed (older campaigns, hand-made stores); each such key is
//! recorded in `notes` so the report can say what it could not show instead of failing.

use results::{Point, Value};
use serde_json::Value as Json;

/// Production runs assumed when the campaign does not say (the paper's 500).
pub const DEFAULT_PRODUCTION_RUNS: u64 = 500;

/// A search-space parameter as the settings list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameter {
    pub name: String,
    /// flag | define | launch | variant | runtime | class
    pub kind: String,
}

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
    pub parameters: Option<Vec<Parameter>>,
    pub quality_margin_percent: Option<f64>,
    pub measurement: Option<Json>,
    pub seed: Option<Json>,
    /// Human-readable remarks about missing or malformed keys.
    pub notes: Vec<String>,
}

impl Settings {
    /// Reads the settings JSON; never fails.
    pub fn parse(json: &Json) -> Settings {
        let mut s = Settings {
            production_runs: DEFAULT_PRODUCTION_RUNS,
            ..Settings::default()
        };
        let text = |key: &str, notes: &mut Vec<String>| match json.get(key) {
            Some(Json::String(t)) => Some(t.clone()),
            Some(Json::Null) | None => {
                notes.push(format!("settings has no `{key}`"));
                None
            }
            Some(other) => Some(other.to_string()),
        };
        s.family = text("family", &mut s.notes);
        s.backend = text("backend", &mut s.notes);
        s.device = text("device", &mut s.notes);
        s.objectives = text("objectives", &mut s.notes);
        match json.get("production_runs").and_then(Json::as_u64) {
            Some(n) if n > 0 => s.production_runs = n,
            _ => s.notes.push(format!(
                "settings has no valid `production_runs`; cost % assumes {DEFAULT_PRODUCTION_RUNS}"
            )),
        }
        s.baseline = match json.get("baseline") {
            Some(Json::Object(map)) => Some(
                map.iter()
                    .map(|(k, v)| (k.clone(), json_to_value(v)))
                    .collect::<Point>(),
            ),
            _ => {
                s.notes.push(
                    "settings has no `baseline` point; the baseline run's evaluation is used"
                        .to_string(),
                );
                None
            }
        };
        s.parameters = match json.get("parameters") {
            Some(Json::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(|p| {
                        Some(Parameter {
                            name: p.get("name")?.as_str()?.to_string(),
                            kind: p.get("kind")?.as_str()?.to_string(),
                        })
                    })
                    .collect(),
            ),
            _ => {
                s.notes.push(
                    "settings has no `parameters` list; parameter kinds are unknown".to_string(),
                );
                None
            }
        };
        s.quality_margin_percent = json.get("quality_margin_percent").and_then(Json::as_f64);
        if s.quality_margin_percent.is_none() {
            s.notes
                .push("settings has no `quality_margin_percent`".to_string());
        }
        s.measurement = json.get("measurement").filter(|v| !v.is_null()).cloned();
        s.seed = json.get("seed").filter(|v| !v.is_null()).cloned();
        s
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

/// Converts a JSON scalar to a point value the way the store writes points: integers stay
/// integers, everything else becomes text.
pub fn json_to_value(v: &Json) -> Value {
    match v {
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Text(n.to_string()),
        },
        Json::String(t) => Value::Text(t.clone()),
        other => Value::Text(other.to_string()),
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
        assert_eq!(b.get("threads"), Some(&Value::Int(1024)));
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
