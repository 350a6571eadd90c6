//! Best-known objective values.
//!
//! The project carries a table for the instances it ships (`data/bks.csv`, embedded in the
//! binary); users add tables with the columns of `../shared/data/*/bks.csv` (at least `name`
//! and `bks`; other columns are ignored). Later tables override earlier ones.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{read_to_string, InputError};

const EMBEDDED: &str = include_str!("../../data/bks.csv");

/// Reference values of the generated HW/SW graphs of `campaigns/hwsw-synthetic.toml`, which
/// have no published best-known costs (`mats instance reference`, `data/hwsw/README.md`).
const EMBEDDED_HWSW: &str = include_str!("../../data/hwsw/synthetic-bks.csv");

/// A lookup from instance name (file stem, lower case) to best-known value.
#[derive(Debug, Clone, Default)]
pub struct BestKnown {
    values: HashMap<String, BestKnownEntry>,
}

/// One best-known value and whether it is proven optimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct BestKnownEntry {
    pub value: i64,
    /// `Some(true)` when the table says the value is optimal, `None` when it does not say.
    pub optimal: Option<bool>,
}

impl BestKnown {
    /// The table of the instances the project ships.
    pub fn embedded() -> Self {
        let mut table = BestKnown::default();
        table
            .add_csv(EMBEDDED, Path::new("<embedded data/bks.csv>"))
            .expect("the embedded best-known table is valid (checked by a unit test)");
        table
            .add_csv(
                EMBEDDED_HWSW,
                Path::new("<embedded data/hwsw/synthetic-bks.csv>"),
            )
            .expect("the embedded HW/SW reference table is valid (checked by a unit test)");
        table
    }

    /// Adds (or overrides) values from a CSV file.
    pub fn add_file(&mut self, path: &Path) -> Result<(), InputError> {
        let text = read_to_string(path)?;
        self.add_csv(&text, path)
    }

    /// Adds (or overrides) values from CSV text with a header naming `name` and `bks`.
    pub fn add_csv(&mut self, text: &str, origin: &Path) -> Result<(), InputError> {
        for row in rows(text, origin)? {
            let optimal = match row.optimal.as_str() {
                "yes" | "true" => Some(true),
                "no" | "false" => Some(false),
                _ => None,
            };
            self.values.insert(
                row.name.to_lowercase(),
                BestKnownEntry {
                    value: row.value,
                    optimal,
                },
            );
        }
        Ok(())
    }

    /// The best-known value of an instance, by name (case-insensitive).
    pub fn get(&self, name: &str) -> Option<BestKnownEntry> {
        let name = name.to_lowercase();
        self.values.get(&name).copied().or_else(|| {
            // VRF's files are `VFR10_5_1_Gap.txt`, its tables name the instance `VFR10_5_1`.
            let published = name.strip_suffix("_gap")?;
            self.values.get(published).copied()
        })
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// One row of a best-known table as written: what [`BestKnown`] keeps of it, and what a
/// tool that rewrites tables (`mats instance reference`) must carry through unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRow {
    /// The line of the file it was read from.
    pub line: usize,
    /// As written (trimmed); lookups lower-case it.
    pub name: String,
    pub value: i64,
    /// The `optimal` column as written (trimmed), empty where the table has none.
    pub optimal: String,
    /// The `method` column as written (trimmed), empty where the table has none.
    pub method: String,
}

/// The rows of a best-known table (CSV whose header names at least `name` and `bks`; other
/// columns are ignored, rows without a name or value skipped). Errors name `origin` and the
/// line.
pub fn rows(text: &str, origin: &Path) -> Result<Vec<TableRow>, InputError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| InputError::syntax(origin, 1, format!("cannot read the CSV header: {e}")))?
        .clone();
    let column = |name: &str| headers.iter().position(|h| h.trim() == name);
    let (Some(name_col), Some(bks_col)) = (column("name"), column("bks")) else {
        return Err(InputError::syntax(
            origin,
            1,
            "a best-known table needs the columns `name` and `bks`",
        ));
    };
    let (optimal_col, method_col) = (column("optimal"), column("method"));
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            InputError::syntax(origin, line, format!("bad CSV record: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        // No name or value spans lines, so a field that does was opened by a quote that is
        // never closed: the csv reader would swallow the rest of the table into it.
        if record.iter().any(|f| f.contains('\n')) {
            return Err(InputError::syntax(
                origin,
                line,
                "a quoted field runs to the next line or to the end of the file \
                 (an unterminated `\"`?)",
            ));
        }
        let field = |col: Option<usize>| col.and_then(|c| record.get(c)).unwrap_or("").trim();
        let (name, raw) = (field(Some(name_col)), field(Some(bks_col)));
        if name.is_empty() || raw.is_empty() {
            continue;
        }
        let value = raw.parse::<i64>().map_err(|_| {
            InputError::syntax(
                origin,
                line,
                format!("best-known value of {name} is not an integer: {raw:?}"),
            )
        })?;
        rows.push(TableRow {
            line,
            name: name.to_string(),
            value,
            optimal: field(optimal_col).to_string(),
            method: field(method_col).to_string(),
        });
    }
    Ok(rows)
}

/// Relative gap of `objective` above `best_known`, in percent (minimisation): positive for a
/// worse objective whatever the sign of the best known (QAP instances with negative entries
/// have negative optima), exact for any pair of i64 (the difference in i128).
pub fn gap_percent(objective: i64, best_known: i64) -> Option<f64> {
    let above = i128::from(objective) - i128::from(best_known);
    (best_known != 0).then(|| 100.0 * above as f64 / best_known.unsigned_abs() as f64)
}

/// A gap as text says it: "0.125% above" the best known, or "2.428% below" it.
pub fn above_or_below(gap_percent: f64) -> String {
    if gap_percent < 0.0 {
        format!("{:.3}% below", -gap_percent)
    } else {
        format!("{gap_percent:.3}% above")
    }
}

/// The largest objective whose gap to `best_known` is at most `gap_percent` (minimisation),
/// so that a time-to-target run stops on exact integers.
pub fn target_objective(best_known: i64, gap_percent: f64) -> i64 {
    let slack = (best_known.unsigned_abs() as f64 * gap_percent.max(0.0) / 100.0).floor();
    best_known.saturating_add(slack.min(i64::MAX as f64) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_below_the_best_known_says_below() {
        assert_eq!(above_or_below(0.125), "0.125% above");
        assert_eq!(above_or_below(0.0), "0.000% above");
        assert_eq!(above_or_below(-2.4281), "2.428% below");
    }

    #[test]
    fn embedded_table_parses_and_has_shipped_instances() {
        let table = BestKnown::embedded();
        assert_eq!(table.get("tai12a").map(|e| e.value), Some(224416));
        assert_eq!(table.get("TA001").map(|e| e.value), Some(1278));
        // The generated HW/SW graphs' reference values (not proven optimal).
        let hwsw = table
            .get("hwsw-300n-600e-ccr1-low-s1")
            .expect("a reference value");
        assert!(hwsw.value > 0);
        assert_eq!(hwsw.optimal, Some(false));
    }

    #[test]
    fn an_unterminated_quote_is_refused_at_its_line() {
        let e = BestKnown::default()
            .add_csv("name,bks\nx,1\n\"y,2\nz,3\n", Path::new("t.csv"))
            .unwrap_err();
        assert!(e.to_string().starts_with("t.csv:3:"), "{e}");
        assert!(e.to_string().contains("unterminated"), "{e}");
        // Quoted fields that close on their line stay fine.
        let mut t = BestKnown::default();
        t.add_csv("name,bks\n\"y\",\"2\"\n", Path::new("t.csv"))
            .expect("quoted fields");
        assert_eq!(t.get("y").map(|e| e.value), Some(2));
    }

    #[test]
    fn rejects_missing_columns_and_bad_values() {
        let mut t = BestKnown::default();
        let e = t
            .add_csv("name,value\nx,1\n", Path::new("t.csv"))
            .unwrap_err();
        assert!(e.to_string().contains("t.csv:1"), "{e}");
        let e = t
            .add_csv("name,bks\nx,1\ny,abc\n", Path::new("t.csv"))
            .unwrap_err();
        assert!(e.to_string().contains("t.csv:3"), "{e}");
        assert!(e.to_string().contains("abc"), "{e}");
    }

    #[test]
    fn gap_is_relative_percent() {
        assert_eq!(gap_percent(110, 100), Some(10.0));
        assert_eq!(gap_percent(5, 0), None);
        // A worse (higher) objective is above a negative best known too.
        assert_eq!(gap_percent(-90, -100), Some(10.0));
        assert_eq!(gap_percent(-110, -100), Some(-10.0));
        // The extremes neither overflow nor flip sign.
        assert_eq!(
            gap_percent(i64::MAX, i64::MIN),
            Some(100.0 * (u64::MAX as f64) / 2f64.powi(63))
        );
        assert!(gap_percent(0, i64::MIN).is_some_and(|g| g > 0.0));
    }
}
