//! How the best configuration changes with the budget (issue 28, item 2): for a campaign of
//! several budgets (classes named `CLASS@BUDGETs`), per class and budget the best point of the
//! searches in the campaign's first objective, and which parameters differ from the best at
//! the budget before.

use std::collections::BTreeMap;

use results::Point;

use crate::data::{Analysis, MetricFigures as _};
use crate::html::Table;

/// One row: a class at one budget.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetRow {
    pub class: String,
    pub budget_s: f64,
    pub best: Option<(Point, f64)>,
    pub baseline: Option<f64>,
    /// `name: before -> now` for each parameter that differs from the previous budget's best.
    pub changes: Vec<String>,
}

/// The rows of every class tuned at several budgets, by class then budget; empty for a
/// campaign of one budget.
pub fn budget_rows(an: &Analysis<'_>) -> Vec<BudgetRow> {
    let metric = an
        .settings
        .objectives
        .as_deref()
        .and_then(|o| o.split_whitespace().next())
        .and_then(results::Metric::first_of)
        .unwrap_or(results::Metric::Time);
    let mut by_class: BTreeMap<&str, Vec<(f64, &str)>> = BTreeMap::new();
    for name in an.class_data.keys() {
        if let (class, Some(b)) = results::split_budget_class(name) {
            by_class.entry(class).or_default().push((b, name));
        }
    }
    let mut rows = Vec::new();
    for (class, mut budgets) in by_class {
        budgets.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut previous: Option<Point> = None;
        for (budget_s, name) in budgets {
            let cd = &an.class_data[name];
            let best = cd.lowest(metric).map(|(m, v)| (m.point.clone(), v));
            let changes = match (&previous, &best) {
                (Some(before), Some((now, _))) => differences(before, now),
                _ => Vec::new(),
            };
            if let Some((p, _)) = &best {
                previous = Some(p.clone());
            }
            rows.push(BudgetRow {
                class: class.to_string(),
                budget_s,
                baseline: cd.baseline.as_ref().and_then(|(m, _)| metric.of(m)),
                best,
                changes,
            });
        }
    }
    rows
}

/// `name: a -> b` for each parameter whose value differs (absent ones as `-`).
fn differences(before: &Point, now: &Point) -> Vec<String> {
    let mut names: Vec<&String> = before.0.keys().chain(now.0.keys()).collect();
    names.sort();
    names.dedup();
    let show = |p: &Point, n: &str| p.get(n).map_or("-".to_string(), ToString::to_string);
    names
        .into_iter()
        .filter(|n| before.get(n) != now.get(n))
        .map(|n| format!("{n}: {} -> {}", show(before, n), show(now, n)))
        .collect()
}

/// The rows as the report's table.
pub fn budget_table(rows: &[BudgetRow], metric_name: &str) -> Table {
    let value = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
    Table {
        caption: Some(format!(
            "Best point per class and budget ({metric_name}, means over the class's instances \
             and the budget's seeds) and what changed from the budget before"
        )),
        headers: vec![
            "class".into(),
            "budget (s)".into(),
            format!("baseline {metric_name}"),
            format!("best {metric_name}"),
            "best point".into(),
            "changed from the budget before".into(),
        ],
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.class.clone(),
                    format!("{}", r.budget_s),
                    value(r.baseline),
                    value(r.best.as_ref().map(|b| b.1)),
                    r.best
                        .as_ref()
                        .map_or("-".to_string(), |(p, _)| p.to_string()),
                    if r.changes.is_empty() {
                        "-".to_string()
                    } else {
                        r.changes.join(", ")
                    },
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::Value;

    fn p(pairs: &[(&str, i64)]) -> Point {
        let mut out = Point::new();
        for (k, v) in pairs {
            out.set(*k, Value::Int(*v));
        }
        out
    }

    #[test]
    fn differences_name_each_changed_parameter() {
        let a = p(&[("threads", 128), ("tenure", 4)]);
        let b = p(&[("threads", 512), ("tenure", 4), ("restart", 5)]);
        assert_eq!(
            differences(&a, &b),
            ["restart: - -> 5", "threads: 128 -> 512"]
        );
        assert!(differences(&a, &a).is_empty());
    }
}
