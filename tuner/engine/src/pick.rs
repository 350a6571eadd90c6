//! What a tuned export runs for an instance, after its class ([`crate::bundle::nearest_class`]):
//! the budget nearest the requested time limit, then a point of that (class, budget)'s front
//! (the bundle of the preferred objective, or under a power or energy cap the best point
//! within it). `mats solve --tuned` and the standalone tuned executables both call [`pick`],
//! so the choice is made in one place.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::bundle::{ClassEntry, Measured};
use results::RunMode;

/// What the user asked for beyond the instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request<'a> {
    /// `--time-limit`, seconds: chooses the budget.
    pub time_limit_s: Option<f64>,
    /// `--prefer`: `tuned` (the campaign's own objective), `quality`, `time`, `energy` or
    /// `power`.
    pub prefer: &'a str,
    /// `--max-power`, watts: the point's mean power over a run must be at most this.
    pub max_power_w: Option<f64>,
    /// `--max-energy`, joules per run.
    pub max_energy_j: Option<f64>,
}

/// Why a budget was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetReason {
    /// The campaign tuned one budget (or an export from before budgets were recorded).
    Only,
    /// No `--time-limit`: the campaign's first budget.
    First,
    /// The budget nearest `--time-limit` on a log scale.
    Nearest,
}

/// The budget chosen among those the class was tuned at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetChoice {
    /// Seconds per run the bundle was tuned at (absent when the export does not say).
    pub budget_s: Option<f64>,
    /// Every budget the class was tuned at (empty for a campaign of one budget).
    pub budgets_s: Vec<f64>,
    pub reason: BudgetReason,
    /// The `--time-limit` the budget was chosen for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_limit_s: Option<f64>,
}

/// A cap that filtered the front, with the chosen point's value under it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapUsed {
    /// `power` (W) or `energy` (J per run).
    pub metric: &'static str,
    pub limit: f64,
    pub value: f64,
    /// `mean` (over the class's instances and seeds) or `highest instance mean` (the
    /// re-measure's most demanding instance).
    pub of: &'static str,
}

/// What runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pick {
    pub budget: BudgetChoice,
    /// The objective the point is best in (`--prefer` resolved: `tuned` becomes `quality` or
    /// `time`).
    pub prefer: String,
    /// The bundle folder, relative to the export.
    pub bundle: String,
    /// The chosen front point's measured values (with a cap; the front's values are the
    /// verification's re-measure where the campaign made one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caps: Vec<CapUsed>,
}

/// The index into `budgets` (increasing) nearest `time_limit_s` on a log scale (a tie goes to
/// the smaller budget), or the first budget without a time limit. `None` for no budgets.
pub fn nearest_budget(budgets: &[f64], time_limit_s: Option<f64>) -> Option<usize> {
    if budgets.is_empty() {
        return None;
    }
    let Some(t) = time_limit_s.filter(|t| t.is_finite() && *t > 0.0) else {
        return Some(0);
    };
    let far = |b: f64| (b.ln() - t.ln()).abs();
    // Exact midpoints (4 s between 2 and 8) differ in the last bits of their logarithms;
    // within rounding they are the tie the rule gives to the smaller budget.
    let order = |a: f64, b: f64| {
        if (a - b).abs() <= 1e-9 {
            std::cmp::Ordering::Equal
        } else {
            a.total_cmp(&b)
        }
    };
    (0..budgets.len()).min_by(|&a, &b| order(far(budgets[a]), far(budgets[b])))
}

/// The points of a (class, budget) an export keeps as its front: those non-dominated in gap,
/// time, energy and power together (a quantity not measured counts as the same for all; time
/// too where `run` is a budget, which every run lasts).
/// Every point [`pick`] could choose under any cap and preference is among them: a point
/// dominated in all four is beaten, under the same caps, by the point that dominates it.
pub fn front(points: &[&Measured], run: Option<RunMode>) -> Vec<Measured> {
    let or_inf = |v: Option<f64>| v.unwrap_or(f64::INFINITY);
    // At a budget every run lasts the budget: what differs in its time is noise (a CPU export
    // kept a second point for 0.100053 s against 0.100057 s).
    let timed = !matches!(run, Some(RunMode::Budget { .. }));
    let values: Vec<[f64; 4]> = points
        .iter()
        .map(|m| {
            [
                or_inf(m.gap_percent),
                if timed { m.time_s } else { 0.0 },
                or_inf(m.energy_j),
                or_inf(m.power_w),
            ]
        })
        .collect();
    results::non_dominated(&values)
        .into_iter()
        .map(|i| points[i].clone())
        .collect()
}

/// One budget's bundles and front, as an index holds them.
struct View<'a> {
    budget_s: Option<f64>,
    bundles: &'a BTreeMap<String, String>,
    pareto: &'a [Measured],
}

/// The budget, then the point, `request` asks for on `class`'s entry; `run` is the export's
/// production run (the target mode's quality is its PAR-k time). Errors are one line that
/// names the class, the budget and what is available.
pub fn pick(
    entry: &ClassEntry,
    class: &str,
    run: Option<RunMode>,
    request: &Request,
) -> Result<Pick, String> {
    let (view, budget) = choose_budget(entry, run, request.time_limit_s);
    let at = match view.budget_s {
        Some(b) => format!("class {class} at {b} s per run"),
        None => format!("class {class}"),
    };
    let prefer = match request.prefer {
        "tuned" if view.bundles.contains_key("quality") => "quality",
        "tuned" => "time",
        other => other,
    }
    .to_string();
    let caps = caps(request)?;
    if caps.is_empty() {
        let Some(bundle) = view.bundles.get(&prefer) else {
            let why = match prefer.as_str() {
                "power" | "energy" => "; power and energy exist only for GPU campaigns",
                "time" => "; a quality campaign (gap@budget, time-to-target) keeps quality only",
                _ => "",
            };
            return Err(format!(
                "{at} has no bundle tuned for {prefer} (available: {}){why}",
                view.bundles.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        };
        return Ok(Pick {
            budget,
            bundle: bundle.clone(),
            prefer,
            measured: None,
            caps: Vec::new(),
        });
    }
    let quality_is_time = matches!(run, Some(RunMode::Target { .. }));
    let key = |m: &Measured| -> Option<f64> {
        match prefer.as_str() {
            "quality" if quality_is_time => Some(m.time_s),
            "quality" => m.gap_percent,
            "time" => Some(m.time_s),
            "energy" => m.energy_j,
            "power" => m.power_w,
            _ => None,
        }
    };
    if !matches!(prefer.as_str(), "quality" | "time" | "energy" | "power") {
        return Err(format!(
            "unknown preference {prefer:?}: use tuned, quality, time, energy or power"
        ));
    }
    let runnable: Vec<&Measured> = view.pareto.iter().filter(|m| m.bundle.is_some()).collect();
    let mut within = runnable.clone();
    for &(metric, limit, flag) in &caps {
        let measured: Vec<(&Measured, (f64, &str))> = within
            .iter()
            .filter_map(|m| Some((*m, value(m, metric)?)))
            .collect();
        if measured.is_empty() {
            return Err(format!(
                "{at}: no point of its front has a measured {metric} to compare with {flag} \
                 (power and energy are measured on GPUs only, and exports before mats kept \
                 fronts with their bundles have none)"
            ));
        }
        let lowest = measured
            .iter()
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
            .copied();
        within = measured
            .iter()
            .filter(|(_, (v, _))| *v <= limit)
            .map(|(m, _)| *m)
            .collect();
        if within.is_empty() {
            let (m, (v, of)) = lowest.expect("measured is not empty");
            return Err(format!(
                "{at}: no point of its front is within {flag} {limit} {unit}; the lowest {metric} \
                 measured is {v:.1} {unit} ({of} of {}, {})",
                m.bundle.as_deref().unwrap_or("?"),
                describe(m),
                unit = unit(metric),
            ));
        }
    }
    let best = within
        .iter()
        .min_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            match (ka, kb) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
        })
        .copied()
        .expect("within is not empty");
    Ok(Pick {
        budget,
        bundle: best.bundle.clone().unwrap_or_default(),
        prefer,
        caps: caps
            .iter()
            .filter_map(|&(metric, limit, _)| {
                let (value, of) = value(best, metric)?;
                Some(CapUsed {
                    metric,
                    limit,
                    value,
                    of,
                })
            })
            .collect(),
        measured: Some(best.clone()),
    })
}

impl Pick {
    /// One line for the user: which budget, which bundle, and why.
    pub fn describe(&self, class: &str) -> String {
        let list = |b: &[f64]| {
            b.iter()
                .map(|x| format!("{x}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let budget = match (self.budget.budget_s, self.budget.reason) {
            (Some(b), BudgetReason::Nearest) => format!(
                "the {b} s budget (of {} s, the nearest --time-limit {} s on a log scale)",
                list(&self.budget.budgets_s),
                self.budget.time_limit_s.unwrap_or(b)
            ),
            (Some(b), BudgetReason::First) => format!(
                "the {b} s budget (the campaign's first of {} s; --time-limit picks another)",
                list(&self.budget.budgets_s)
            ),
            (Some(b), BudgetReason::Only) => format!("the {b} s budget"),
            (None, _) => "the campaign's budget".to_string(),
        };
        let mut line = format!(
            "class {class}: {budget}, best {}: {}",
            self.prefer, self.bundle
        );
        for c in &self.caps {
            line.push_str(&format!(
                ", {} {} {:.1} {unit} within {} {unit}",
                c.of,
                c.metric,
                c.value,
                c.limit,
                unit = unit(c.metric)
            ));
        }
        if let Some(m) = &self.measured {
            line.push_str(&format!(" ({})", describe(m)));
        }
        line
    }
}

/// The view of the budget the request asks for, and how it was chosen.
fn choose_budget<'a>(
    entry: &'a ClassEntry,
    run: Option<RunMode>,
    time_limit_s: Option<f64>,
) -> (View<'a>, BudgetChoice) {
    let budgets: Vec<f64> = entry.budgets.iter().map(|b| b.budget_s).collect();
    match nearest_budget(&budgets, time_limit_s) {
        Some(i) if budgets.len() > 1 => {
            let b = &entry.budgets[i];
            let reason = if time_limit_s.is_some() {
                BudgetReason::Nearest
            } else {
                BudgetReason::First
            };
            (
                View {
                    budget_s: Some(b.budget_s),
                    bundles: &b.bundles,
                    pareto: &b.pareto,
                },
                BudgetChoice {
                    budget_s: Some(b.budget_s),
                    budgets_s: budgets,
                    reason,
                    time_limit_s,
                },
            )
        }
        _ => {
            let budget_s = match run {
                Some(RunMode::Budget { budget_s }) => Some(budget_s),
                _ => budgets.first().copied(),
            };
            (
                View {
                    budget_s,
                    bundles: &entry.bundles,
                    pareto: &entry.pareto,
                },
                BudgetChoice {
                    budget_s,
                    budgets_s: budgets,
                    reason: BudgetReason::Only,
                    time_limit_s,
                },
            )
        }
    }
}

/// The request's caps as (metric, limit, flag), checked.
fn caps(request: &Request) -> Result<Vec<(&'static str, f64, &'static str)>, String> {
    let mut out = Vec::new();
    for (metric, limit, flag) in [
        ("power", request.max_power_w, "--max-power"),
        ("energy", request.max_energy_j, "--max-energy"),
    ] {
        let Some(limit) = limit else { continue };
        if !(limit.is_finite() && limit > 0.0) {
            return Err(format!(
                "{flag} must be a positive number of {}, found {limit}",
                if metric == "power" { "watts" } else { "joules" }
            ));
        }
        out.push((metric, limit, flag));
    }
    Ok(out)
}

/// What a cap on `metric` is compared with, and which value that is: the front re-measure's
/// highest per-instance mean where the export has it (a cap holds on every instance it was
/// measured on, not only on average), else the class mean.
fn value(m: &Measured, metric: &str) -> Option<(f64, &'static str)> {
    let (peak, mean) = match metric {
        "power" => (m.peak_power_w, m.power_w),
        _ => (m.peak_energy_j, m.energy_j),
    };
    match peak {
        Some(p) => Some((p, "highest instance mean")),
        None => mean.map(|v| (v, "mean")),
    }
}

fn unit(metric: &str) -> &'static str {
    if metric == "power" {
        "W"
    } else {
        "J"
    }
}

/// A front point's values in a few words.
fn describe(m: &Measured) -> String {
    let mut parts = Vec::new();
    if let Some(g) = m.gap_percent {
        parts.push(format!("gap {g:.3}%"));
    }
    if let Some(p) = m.power_w {
        parts.push(format!("{p:.1} W"));
    }
    if let Some(e) = m.energy_j {
        parts.push(format!("{e:.1} J"));
    }
    parts.push(format!("{:.3} s", m.time_s));
    parts.join(", ")
}

#[cfg(test)]
mod tests;
