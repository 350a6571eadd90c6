//! The TOML shape of a space file and of a campaign's overrides (documented in
//! `spaces/README.md`). Unknown keys are errors so that a typo never silently widens a space.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use results::Value;

use crate::ParamKind;

/// A space file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpaceFile {
    /// Free text shown by `mats space show`.
    #[serde(default)]
    pub description: Option<String>,
    /// The solver family the space is for (informational; the campaign checks it).
    #[serde(default)]
    pub family: Option<String>,
    #[serde(default)]
    pub constants: BTreeMap<String, Spanned<Value>>,
    #[serde(default, rename = "param")]
    pub params: Vec<ParamSpec>,
    #[serde(default)]
    pub constraints: Vec<Spanned<String>>,
}

/// One `[[param]]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ParamSpec {
    pub name: Spanned<String>,
    pub kind: ParamKind,
    #[serde(default)]
    pub values: Option<Vec<Value>>,
    #[serde(default)]
    pub range: Option<RangeSpec>,
    #[serde(default)]
    pub pow2: Option<Pow2Spec>,
    /// Expression over constants and earlier parameters; the parameter exists only where it
    /// holds.
    #[serde(default)]
    pub when: Option<String>,
    /// `flag` kind: the option text, `{}` replaced by the value.
    #[serde(default)]
    pub flag: Option<String>,
    /// `define` kind: the macro name (default: the parameter name in upper case).
    #[serde(default)]
    pub define: Option<String>,
    /// Values that emit no flag or define (default `["none", "off"]`).
    #[serde(default)]
    pub omit: Option<Vec<String>>,
    /// Free text shown by `mats space show`.
    #[serde(default)]
    pub doc: Option<String>,
}

/// A finite domain: the union of a list, an inclusive stepped range and powers of two, in that
/// order, duplicates dropped. Written as the keys `values = [...]`, `range = { from, to,
/// step }` and `pow2 = { from, to }` of a parameter (or of a campaign's override).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainSpec {
    #[serde(default)]
    values: Option<Vec<Value>>,
    #[serde(default)]
    range: Option<RangeSpec>,
    #[serde(default)]
    pow2: Option<Pow2Spec>,
}

impl ParamSpec {
    pub(crate) fn domain(&self) -> DomainSpec {
        DomainSpec {
            values: self.values.clone(),
            range: self.range.clone(),
            pow2: self.pow2.clone(),
        }
    }
}

impl DomainSpec {
    pub(crate) fn is_given(&self) -> bool {
        self.values.is_some() || self.range.is_some() || self.pow2.is_some()
    }

    /// The values, or a message saying why there are none.
    pub(crate) fn expand(&self) -> Result<Vec<Value>, String> {
        let mut out: Vec<Value> = Vec::new();
        // A set beside the list: a linear `contains` per value made a long range
        // take minutes.
        let mut seen: std::collections::HashSet<Value> = std::collections::HashSet::new();
        let mut push = |out: &mut Vec<Value>, v: Value| {
            if seen.insert(v.clone()) {
                out.push(v);
            }
        };
        if let Some(values) = &self.values {
            for v in values {
                push(&mut out, v.clone());
            }
        }
        if let Some(r) = &self.range {
            let step = r.step.unwrap_or(1);
            if step <= 0 {
                return Err(format!("range step must be positive, got {step}"));
            }
            if r.to < r.from {
                return Err(format!(
                    "range from = {} is above to = {}: the range is empty",
                    r.from, r.to
                ));
            }
            // In i128: `to - from` overflows i64 for ranges spanning most of it.
            if (i128::from(r.to) - i128::from(r.from)) / i128::from(step)
                >= super::MAX_DOMAIN_VALUES as i128
            {
                return Err(format!(
                    "range has more than {} values",
                    super::MAX_DOMAIN_VALUES
                ));
            }
            let mut v = r.from;
            while v <= r.to {
                push(&mut out, Value::Int(v));
                v = match v.checked_add(step) {
                    Some(next) => next,
                    None => break,
                };
            }
        }
        if let Some(p) = &self.pow2 {
            if p.from < 1 {
                return Err(format!("pow2 from must be at least 1, got {}", p.from));
            }
            let mut v: i64 = 1;
            while v < p.from {
                // Past 2^62 there is no power of two to find; doubling would wrap around.
                match v.checked_mul(2) {
                    Some(next) => v = next,
                    None => return Err(format!("pow2 from = {} is above 2^62", p.from)),
                }
            }
            let before = out.len();
            while v <= p.to {
                push(&mut out, Value::Int(v));
                v = match v.checked_mul(2) {
                    Some(next) => next,
                    None => break,
                };
            }
            if out.len() == before && self.values.is_none() && self.range.is_none() {
                return Err(format!(
                    "pow2 from = {} to = {} holds no power of two",
                    p.from, p.to
                ));
            }
        }
        if out.is_empty() {
            return Err("the domain is empty".to_string());
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RangeSpec {
    from: i64,
    to: i64,
    #[serde(default)]
    step: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pow2Spec {
    from: i64,
    to: i64,
}

/// What a campaign may change in a space (the `[space]` table of a campaign, beside whatever
/// key the runner uses to name the file):
///
/// ```toml
/// constants = { max_threads = 512 }          # override declared constants
/// constraints = ["threads >= 64"]            # added to the file's constraints
/// [params.threads]                           # replace the domain of every `threads` declaration
/// pow2 = { from = 64, to = 512 }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpaceOverrides {
    #[serde(default)]
    pub constants: BTreeMap<String, Value>,
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(default)]
    pub params: BTreeMap<String, DomainSpec>,
}

impl SpaceOverrides {
    /// Parses overrides written as a TOML table on their own (`origin` names it in errors).
    pub fn from_toml_str(text: &str, origin: &str) -> anyhow::Result<SpaceOverrides> {
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))
    }

    pub fn is_empty(&self) -> bool {
        self.constants.is_empty() && self.constraints.is_empty() && self.params.is_empty()
    }
}
