//! Points of a search space: a value for each named parameter.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// One parameter value. Integers cover sizes, counts and levels; text covers flags, variant
/// names and classes ("none" where a parameter is off).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Int(i64),
    Text(String),
}

impl Value {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Text(_) => None,
        }
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(t) => Some(t),
            Value::Int(_) => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Text(t) => f.write_str(t),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}

/// A point: parameter name -> value, ordered by name so that equal points have equal keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Point(pub BTreeMap<String, Value>);

impl Point {
    pub fn new() -> Self {
        Point(BTreeMap::new())
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    pub fn set(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        self.0.insert(name.into(), value.into());
    }

    /// A copy with one parameter changed (a neighbour in the hill-climbing sense).
    pub fn with(&self, name: &str, value: Value) -> Point {
        let mut p = self.clone();
        p.0.insert(name.to_string(), value);
        p
    }

    /// Canonical text form, `name=value` pairs joined by `,` in name order: the store's
    /// identity of a point, stable across runs and versions.
    pub fn key(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Point {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Point(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}
