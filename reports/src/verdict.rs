//! What a campaign owes its user, per class: the tuned point against the default solver re-
//! measured on fresh seeds (the `final` run) and on held-out instances (the `holdout` run),
//! each as mean ± sd over (instance, seed) pairs, and a verdict. Pure functions of the store's
//! rows; the tuner records each comparison in its run's options (`comparison`,
//! [`results::Comparison`]), and for stores written before it did, the means come from the
//! run's evaluations (no spread).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use results::{Comparison, MeanSd, Point, RunRow};

use crate::settings::Settings;
use crate::ReportInput;

/// How the tuned point compares with the reference role on one set of pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Lower mean by more than twice the standard error of the difference.
    Better,
    /// Higher mean by more than twice the standard error of the difference.
    Worse,
    /// A difference inside the noise.
    Tie,
    /// The tuned point is the reference point.
    Same,
    /// Not measured (no such run, or a value missing).
    Missing,
}

impl Outcome {
    pub fn text(self) -> &'static str {
        match self {
            Outcome::Better => "tuned better",
            Outcome::Worse => "tuned worse",
            Outcome::Tie => "within noise",
            Outcome::Same => "same point",
            Outcome::Missing => "-",
        }
    }
}

/// One class's row.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassVerdict {
    pub class: String,
    /// What was compared: the search's objective (`gap@budget`, `time`, ...).
    pub objective: String,
    /// The metric of the comparisons (`gap`, `time`, `energy`, `power`), for units.
    pub metric: String,
    /// The role the tuned point is compared with: `default` where the campaign names a
    /// default solver, else `baseline`.
    pub reference: String,
    /// Fresh seeds on the class's instances (None: no final run, e.g. the search kept the
    /// baseline).
    pub fresh: Option<Comparison>,
    pub held: Option<Comparison>,
    pub fresh_outcome: Outcome,
    pub held_outcome: Outcome,
    /// The role in each comparison that holds the reference point ("tuned" where the tuned
    /// point is the reference: the tuner measures a point once per comparison).
    pub fresh_role: Option<String>,
    pub held_role: Option<String>,
    /// Whether the comparisons carry spreads (false: means read from evaluations).
    pub with_spread: bool,
    pub verdict: String,
}

impl ClassVerdict {
    /// The reference role's and the tuned point's figures on fresh seeds or holdouts.
    pub fn pair(&self, holdout: bool) -> (Option<MeanSd>, Option<MeanSd>) {
        let (c, role) = if holdout {
            (&self.held, &self.held_role)
        } else {
            (&self.fresh, &self.fresh_role)
        };
        let Some(c) = c else {
            return (None, None);
        };
        let get = |role: &str| c.values.get(role).copied().flatten();
        (role.as_deref().and_then(get), get("tuned"))
    }

    /// Unit of the metric as shown after a value.
    pub fn unit(&self) -> &'static str {
        match self.metric.as_str() {
            "gap" => "%",
            "time" => " s",
            "energy" => " J",
            "power" => " W",
            _ => "",
        }
    }
}

/// Every class that has a search, in class order.
pub fn class_verdicts(input: &ReportInput) -> Vec<ClassVerdict> {
    let settings = Settings::parse(&input.campaign.settings);
    let default_point: Option<Point> = settings.default.clone();
    let mut by_class: BTreeMap<&str, Vec<&RunRow>> = BTreeMap::new();
    for r in &input.runs {
        by_class.entry(r.class.as_str()).or_default().push(r);
    }
    let mut out = Vec::new();
    for (class, runs) in by_class {
        let search = runs.iter().find(|r| {
            !matches!(
                r.strategy.as_str(),
                "baseline" | "cross-class" | "final" | "holdout" | "front"
            )
        });
        let Some(search) = search else { continue };
        // Instances carry the campaign's class; a campaign of several budgets runs each class
        // once per budget, as `CLASS@BUDGETs`.
        let data_class = results::split_budget_class(class).0;
        let last = |label: &str| runs.iter().rev().find(|r| r.strategy == label).copied();
        let final_run = last("final");
        let holdout_run = last("holdout");
        let read = |run: Option<&RunRow>| {
            run.and_then(|r| {
                recorded(r)
                    .or_else(|| from_evaluations(input, r, &settings, default_point.as_ref()))
            })
        };
        let fresh = read(final_run);
        let held = read(holdout_run);
        let with_spread = [final_run, holdout_run]
            .into_iter()
            .flatten()
            .all(|r| recorded(r).is_some());
        let metric = [final_run, holdout_run, Some(*search)]
            .into_iter()
            .flatten()
            .find_map(|r| {
                r.options
                    .get("metric")
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| metric_of(&search.objective));
        // The point the tuned one must beat: the default solver, else the baseline.
        let reference_point = default_point.clone().or_else(|| settings.baseline.clone());
        let reference = if default_point.is_some() {
            "default"
        } else {
            "baseline"
        }
        .to_string();
        // Which role of a comparison holds the reference point (by point, since the tuner
        // names a point once: a default equal to the baseline is listed as the baseline).
        let role_of = |c: &Comparison| -> Option<String> {
            if let Some(p) = &reference_point {
                if c.points.get("tuned") == Some(p) {
                    return Some("tuned".into());
                }
                if let Some((role, _)) = c.points.iter().find(|(_, q)| *q == p) {
                    return Some(role.clone());
                }
            }
            [reference.as_str(), "default", "baseline"]
                .into_iter()
                .find(|r| c.points.contains_key(*r))
                .map(str::to_string)
        };
        let fresh_role = fresh.as_ref().and_then(&role_of);
        let held_role = held.as_ref().and_then(&role_of);
        let outcome = |c: &Option<Comparison>, role: &Option<String>| match (c, role) {
            (None, _) | (_, None) => Outcome::Missing,
            (Some(_), Some(r)) if r == "tuned" => Outcome::Same,
            (Some(c), Some(r)) => compare(
                c.values.get(r).copied().flatten(),
                c.values.get("tuned").copied().flatten(),
            ),
        };
        let fresh_outcome = outcome(&fresh, &fresh_role);
        let held_outcome = outcome(&held, &held_role);
        // Holdouts the stop left unmeasured: instances of the class no trial ran on (once the
        // final re-measure ran, every searched instance has trials).
        let unmeasured_holdouts = input
            .instances
            .iter()
            .any(|i| i.class == data_class && !input.trials.iter().any(|t| t.instance == i.name));
        let verdict = match input.unfinished.as_deref() {
            // Without the re-measure there is no verdict to give, only a campaign to finish.
            Some(how) if fresh.is_none() => format!(
                "unfinished: the campaign {how} before this class's re-measure; resume it \
                 (`mats tune ... --resume`) for a verdict"
            ),
            Some(how) if held.is_none() && unmeasured_holdouts => format!(
                "{} (no holdouts measured: the campaign {how})",
                verdict(&reference, true, fresh_outcome, Outcome::Missing)
                    .trim_end_matches(" (no holdouts)")
            ),
            // The search ended on the baseline, and the re-measure set it against a default
            // the search never reached.
            _ if fresh
                .as_ref()
                .is_some_and(|c| c.points.get("tuned") == settings.baseline.as_ref())
                && reference == "default" =>
            {
                match fresh_outcome {
                    Outcome::Worse => "no point better than the baseline was found, and the \
                                       default beats it on fresh seeds: keep the default"
                        .to_string(),
                    Outcome::Better => "no point better than the baseline was found, and it \
                                        beats the default on fresh seeds"
                        .to_string(),
                    // Within noise: export ships the lower mean, which may be the baseline's.
                    _ if fresh.as_ref().and_then(|c| c.winner.as_deref()) == Some("tuned") => {
                        "no point better than the baseline was found; on fresh seeds it and the \
                         default are within noise, and mats export ships the baseline (the \
                         lower mean)"
                            .to_string()
                    }
                    _ => "no point better than the baseline was found; keep the default".into(),
                }
            }
            _ => verdict(&reference, fresh.is_some(), fresh_outcome, held_outcome),
        };
        // A role the quality guard rejected has no value: said, not left as "no difference".
        let reference_failed_in = |c: &Option<Comparison>, role: &Option<String>| {
            role.as_deref()
                .is_some_and(|r| r != "tuned" && failed_in(c, r))
        };
        let reference_failed = match (
            reference_failed_in(&fresh, &fresh_role),
            reference_failed_in(&held, &held_role),
        ) {
            (true, true) => Some("on fresh seeds and on the holdouts"),
            (true, false) => Some("on fresh seeds"),
            (false, true) => Some("on the holdouts"),
            (false, false) => None,
        };
        let verdict = if failed_in(&fresh, "tuned") || failed_in(&held, "tuned") {
            let where_ = if failed_in(&fresh, "tuned") {
                "on fresh seeds"
            } else {
                "on the holdouts"
            };
            format!(
                "keep the {reference}: the tuned point failed a trial {where_} (a crash, a \
                 time-out or an invalid answer: see its trials)"
            )
        } else if let Some(where_) = reference_failed {
            // No value for the reference: nothing to compare the tuned point with there.
            let fresh_part = if where_ == "on the holdouts" {
                verdict.trim_end_matches(" (no holdouts)").to_string()
            } else {
                "no comparison".to_string()
            };
            format!(
                "{fresh_part}; the {reference} failed a trial {where_} (a crash, a time-out or \
                 an invalid answer: see its trials), so the tuned point has nothing to be \
                 compared with there"
            )
        } else if rejected_in(&fresh, "tuned") || rejected_in(&held, "tuned") {
            format!(
                "keep the {reference}: the tuned point fails the quality guard where it was \
                 re-measured (its gap above the baseline's by more than the margin)"
            )
        } else if fresh_role
            .as_deref()
            .is_some_and(|r| r != "tuned" && rejected_in(&fresh, r))
        {
            format!(
                "the {reference} fails the quality guard on fresh seeds (its gap above the \
                 baseline's by more than the margin); the tuned point passes it"
            )
        } else {
            verdict
        };
        // `mats export` ships the final re-measure's winner: where that is not the tuned
        // point, the verdict must not leave the reader thinking the tuned one is shipped.
        let shipped = fresh
            .as_ref()
            .and_then(|c| c.winner.as_deref())
            .filter(|w| *w != "tuned" && fresh_role.as_deref() != Some("tuned"));
        let verdict = match shipped {
            Some(role) => format!(
                "{verdict}; mats export ships the {role} point, which won the final re-measure"
            ),
            None => verdict,
        };
        // The tuner labels runs by metric; the campaign's run mode completes the objective's
        // name as the campaign wrote it.
        let objective = match input
            .campaign
            .settings
            .get("run")
            .and_then(|r| r.get("mode"))
            .and_then(|m| m.as_str())
        {
            Some("budget") if !search.objective.contains(':') => {
                format!("{}@budget", search.objective)
            }
            Some("target") if !search.objective.contains(':') && search.objective != "gap" => {
                format!("{}-to-target", search.objective)
            }
            _ => search.objective.clone(),
        };
        // Gaps of instances no table knows are measured against the baseline's result on
        // them (on a holdout, against the best result of the roles compared there): not
        // comparable with gaps to a best-known value, so the verdict says which.
        let held_out = |name: &str| {
            held.as_ref()
                .is_some_and(|h| h.instances.iter().any(|i| i == name))
        };
        let unknown = |out: bool| -> Vec<&str> {
            input
                .instances
                .iter()
                .filter(|i| {
                    i.class == data_class && i.best_known.is_none() && held_out(&i.name) == out
                })
                .map(|i| i.name.as_str())
                .collect()
        };
        let (relative, held_relative) = (unknown(false), unknown(true));
        let mut notes = Vec::new();
        if !relative.is_empty() {
            notes.push(format!(
                "gaps of {} are to the baseline's result",
                relative.join(", ")
            ));
        }
        if !held_relative.is_empty() {
            notes.push(format!(
                "gaps of {} are to the best result of the roles compared there",
                held_relative.join(", ")
            ));
        }
        let verdict = if metric == "gap" && !notes.is_empty() {
            format!("{verdict} ({}: no best-known value)", notes.join("; "))
        } else {
            verdict
        };
        out.push(ClassVerdict {
            class: class.to_string(),
            objective,
            metric,
            reference,
            fresh,
            held,
            fresh_outcome,
            held_outcome,
            fresh_role,
            held_role,
            with_spread,
            verdict,
        });
    }
    out
}

/// Whether the quality guard rejected `role` in the comparison `c`.
fn rejected_in(c: &Option<Comparison>, role: &str) -> bool {
    c.as_ref()
        .is_some_and(|c| c.rejected.iter().any(|r| r == role))
}

/// Whether `role` failed a trial of the comparison `c`.
fn failed_in(c: &Option<Comparison>, role: &str) -> bool {
    c.as_ref()
        .is_some_and(|c| c.failed.iter().any(|r| r == role))
}

/// The comparison the tuner recorded in a run's options.
fn recorded(run: &RunRow) -> Option<Comparison> {
    serde_json::from_value(run.options.get("comparison")?.clone()).ok()
}

/// A comparison rebuilt from a run's evaluations (means only): the roles are the settings'
/// baseline and default points, and the other point is the tuned one.
fn from_evaluations(
    input: &ReportInput,
    run: &RunRow,
    settings: &Settings,
    default_point: Option<&Point>,
) -> Option<Comparison> {
    let metric = metric_of(&run.objective);
    let mut values = BTreeMap::new();
    let mut points = BTreeMap::new();
    for e in input.evaluations.iter().filter(|e| e.run_id == run.id) {
        let role = if settings.baseline.as_ref() == Some(&e.point) {
            "baseline"
        } else if default_point == Some(&e.point) {
            "default"
        } else {
            "tuned"
        };
        let v = match metric.as_str() {
            "gap" => e.gap_percent,
            "energy" => e.energy_j,
            "power" => e.power_w,
            _ => e.time_s,
        };
        points.insert(role.to_string(), e.point.clone());
        values.insert(
            role.to_string(),
            v.map(|mean| MeanSd {
                mean,
                sd: 0.0,
                n: 0,
            }),
        );
    }
    if values.is_empty() {
        return None;
    }
    if !points.contains_key("tuned") {
        // The tuned point is the baseline or the default (the search kept it).
        let same = points.get("baseline").cloned();
        if let Some(p) = same {
            points.insert("tuned".into(), p);
            values.insert("tuned".into(), values["baseline"]);
        }
    }
    Some(Comparison {
        instances: Vec::new(),
        seeds: Vec::new(),
        values,
        points,
        winner: None,
        rejected: Vec::new(),
        failed: Vec::new(),
    })
}

/// `gap@budget` -> gap, `energy-to-target` -> energy, `pareto:time,energy` -> time.
fn metric_of(objective: &str) -> String {
    let o = objective.strip_prefix("pareto:").unwrap_or(objective);
    let head = o.split([',', '@', '-']).next().unwrap_or(o);
    match head {
        "gap" | "energy" | "power" => head.to_string(),
        _ => "time".to_string(),
    }
}

/// Tuned against the reference: better or worse only beyond twice the standard error of the
/// difference of the means (without spreads, any difference counts).
pub fn compare(reference: Option<MeanSd>, tuned: Option<MeanSd>) -> Outcome {
    let (Some(r), Some(t)) = (reference, tuned) else {
        return Outcome::Missing;
    };
    // One run a side has no spread: any difference would pass two standard errors of 0.
    // (Means read from a store without recorded comparisons say n = 0: compared as means.)
    if r.n == 1 || t.n == 1 {
        return Outcome::Tie;
    }
    let diff = t.mean - r.mean;
    let se = (r.se().powi(2) + t.se().powi(2)).sqrt();
    let margin = (2.0 * se).max(1e-9 * r.mean.abs().max(1e-12));
    if diff < -margin {
        Outcome::Better
    } else if diff > margin {
        Outcome::Worse
    } else {
        Outcome::Tie
    }
}

fn verdict(reference: &str, searched_further: bool, fresh: Outcome, held: Outcome) -> String {
    if !searched_further && matches!(held, Outcome::Same | Outcome::Missing) {
        return format!("no point better than the baseline was found; keep the {reference}");
    }
    match (fresh, held) {
        (Outcome::Same, _) => format!("the tuned point is the {reference}"),
        (Outcome::Worse, _) | (_, Outcome::Worse) => {
            format!("keep the {reference}: the tuned point is worse where it was re-measured")
        }
        (Outcome::Better, Outcome::Better) => {
            format!("tuned beats the {reference} on fresh seeds and on the holdouts")
        }
        (Outcome::Better, Outcome::Missing) => {
            format!("tuned beats the {reference} on fresh seeds (no holdouts)")
        }
        (Outcome::Better, _) => {
            format!("tuned beats the {reference} on fresh seeds; on the holdouts within noise")
        }
        (_, Outcome::Better) => {
            format!("tuned beats the {reference} on the holdouts; on fresh seeds within noise")
        }
        _ => format!("no clear difference from the {reference}"),
    }
}

/// `mean ± sd` with the metric's unit; the mean alone where there is no spread.
pub fn show(v: Option<MeanSd>, unit: &str, with_spread: bool) -> String {
    match v {
        None => "-".into(),
        Some(v) if with_spread && v.n == 1 => format!("{}{unit} (one run)", short(v.mean)),
        Some(v) if with_spread && v.n > 0 => {
            format!("{} ± {}{unit}", short(v.mean), short(v.sd))
        }
        Some(v) => format!("{}{unit}", short(v.mean)),
    }
}

fn short(v: f64) -> String {
    // Rounding noise of a mean of equal values (an sd of 4e-15) reads as 0.
    let v = if v.abs() < 1e-9 { 0.0 } else { v };
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 0.01 || a == 0.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// Headers and rows of the verdict table (the HTML page and the markdown file show the same).
pub fn table(verdicts: &[ClassVerdict]) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = [
        "class",
        "objective",
        "compared with",
        "fresh seeds: reference",
        "fresh seeds: tuned",
        "fresh seeds",
        "holdouts: reference",
        "holdouts: tuned",
        "holdouts",
        "verdict",
    ]
    .map(String::from)
    .to_vec();
    let rows = verdicts
        .iter()
        .map(|v| {
            let (fr, ft) = v.pair(false);
            let (hr, ht) = v.pair(true);
            let unit = v.unit();
            // A role the quality guard rejected, or one that failed a trial, shows as such,
            // not as "-" (not measured).
            let cell = |c: &Option<Comparison>, role: Option<&str>, value| {
                let role = role.unwrap_or_default();
                if rejected_in(c, role) {
                    "rejected (quality guard)".to_string()
                } else if failed_in(c, role) {
                    "failed a trial".to_string()
                } else {
                    show(value, unit, v.with_spread)
                }
            };
            vec![
                v.class.clone(),
                v.objective.clone(),
                v.reference.clone(),
                cell(&v.fresh, v.fresh_role.as_deref(), fr),
                cell(&v.fresh, Some("tuned"), ft),
                v.fresh_outcome.text().into(),
                cell(&v.held, v.held_role.as_deref(), hr),
                cell(&v.held, Some("tuned"), ht),
                v.held_outcome.text().into(),
                v.verdict.clone(),
            ]
        })
        .collect();
    (headers, rows)
}

/// The verdict table as markdown (also readable as text).
pub fn markdown(campaign: &str, verdicts: &[ClassVerdict]) -> String {
    let mut out = format!(
        "# {campaign}: tuned vs default per class\n\nMeans ± sd over (instance, seed) pairs; \
         \"fresh seeds\" re-measures each class's instances on seeds the search never used, \
         \"holdouts\" the instances it never saw. Better or worse means a difference of more \
         than twice its standard error.\n\n"
    );
    if verdicts.is_empty() {
        out.push_str("No class has a search run yet.\n");
        return out;
    }
    let (headers, rows) = table(verdicts);
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(headers.len()));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if verdicts.iter().any(|v| !v.with_spread) {
        out.push_str(
            "\nSome comparisons were rebuilt from their evaluations (a re-measure cut short, or \
             a store written before comparisons were recorded): means only.\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(mean: f64, sd: f64, n: usize) -> Option<MeanSd> {
        Some(MeanSd { mean, sd, n })
    }

    #[test]
    fn outcomes_need_a_difference_beyond_the_noise() {
        assert_eq!(compare(ms(1.0, 0.1, 9), ms(0.5, 0.1, 9)), Outcome::Better);
        assert_eq!(compare(ms(1.0, 0.1, 9), ms(1.5, 0.1, 9)), Outcome::Worse);
        // 0.05 apart with a standard error of about 0.047 each: noise.
        assert_eq!(compare(ms(1.0, 0.2, 9), ms(0.95, 0.2, 9)), Outcome::Tie);
        assert_eq!(compare(ms(0.0, 0.0, 5), ms(0.0, 0.0, 5)), Outcome::Tie);
        assert_eq!(compare(None, ms(0.0, 0.0, 5)), Outcome::Missing);
        // One run a side: no spread to judge by (13.409 ms against 13.400 ms was "better").
        assert_eq!(compare(ms(13.409, 0.0, 1), ms(13.4, 0.0, 1)), Outcome::Tie);
        assert_eq!(compare(ms(1.649, 0.0, 1), ms(0.649, 0.1, 9)), Outcome::Tie);
    }

    fn point(starts: i64) -> Point {
        let mut p = Point::new();
        p.set("starts", starts);
        p
    }

    fn run(id: i64, class: &str, strategy: &str, options: serde_json::Value) -> RunRow {
        RunRow {
            id,
            class: class.into(),
            strategy: strategy.into(),
            objective: "gap".into(),
            options,
            started_at: "t".into(),
            ended_at: Some("t".into()),
        }
    }

    /// A store's rows: class `a` tuned starts = 4 against a default equal to the baseline
    /// (starts = 1), so the final check lists the default under "baseline"; class `b` kept
    /// the default (no final run; holdouts with the same point in two roles); class `c`
    /// comes from a store without recorded comparisons (means from evaluations).
    fn input() -> ReportInput {
        let cmp = |roles: &[(&str, i64, f64, f64)]| {
            let mut values = BTreeMap::new();
            let mut points = BTreeMap::new();
            for &(role, p, mean, sd) in roles {
                values.insert(role.to_string(), Some(MeanSd { mean, sd, n: 10 }));
                points.insert(role.to_string(), point(p));
            }
            serde_json::json!({ "comparison": Comparison {
                instances: vec!["x".into()], seeds: vec![1], values, points, winner: None, rejected: Vec::new(), failed: Vec::new(),
            }, "metric": "gap" })
        };
        let eval = |run_id, starts, gap| results::EvaluationRow {
            run_id,
            seq: 0,
            point_id: 0,
            point: point(starts),
            status: results::EvaluationStatus::Ok,
            time_s: Some(1.0),
            power_w: None,
            energy_j: None,
            gap_percent: Some(gap),
            new_trials: 0,
        };
        ReportInput {
            campaign: results::CampaignRow {
                id: 1,
                name: "c".into(),
                config_toml: String::new(),
                settings: serde_json::json!({
                    "baseline": {"starts": 1}, "default": {"starts": 1},
                    "run": {"mode": "budget", "budget_s": 1.0},
                }),
                created_at: "t".into(),
            },
            instances: Vec::new(),
            runs: vec![
                run(1, "a", "hill-climbing", serde_json::json!({})),
                run(
                    2,
                    "a",
                    "final",
                    cmp(&[("tuned", 4, 0.5, 0.1), ("baseline", 1, 1.0, 0.1)]),
                ),
                run(
                    3,
                    "a",
                    "holdout",
                    cmp(&[
                        ("tuned", 4, 0.9, 0.3),
                        ("baseline", 1, 1.0, 0.3),
                        ("default", 1, 1.0, 0.3),
                    ]),
                ),
                run(4, "b", "hill-climbing", serde_json::json!({})),
                run(
                    5,
                    "b",
                    "holdout",
                    cmp(&[
                        ("tuned", 1, 2.0, 0.1),
                        ("baseline", 1, 2.0, 0.1),
                        ("default", 1, 2.0, 0.1),
                    ]),
                ),
                run(6, "c", "hill-climbing", serde_json::json!({})),
                run(7, "c", "final", serde_json::json!({})),
            ],
            evaluations: vec![eval(7, 8, 3.0), eval(7, 1, 1.0)],
            trials: Vec::new(),
            exports: Vec::new(),
            unfinished: None,
        }
    }

    /// A tuned point that failed a trial of the re-measure is said to have failed (the verdict
    /// read as if the baseline had beaten it).
    #[test]
    fn a_failed_tuned_point_is_said_to_have_failed() {
        let mut i = input();
        i.runs[1].options["comparison"]["failed"] = serde_json::json!(["tuned"]);
        i.runs[1].options["comparison"]["values"]["tuned"] = serde_json::Value::Null;
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict
                .starts_with("keep the default: the tuned point failed a trial on fresh seeds"),
            "{}",
            v[0].verdict
        );
    }

    /// A reference (default or baseline) that failed a trial is said to have failed, in the
    /// verdict and in its cell (the verdict read "no clear difference", the cell "-").
    #[test]
    fn a_failed_reference_is_said_to_have_failed() {
        let mut i = input();
        i.runs[2].options["comparison"]["failed"] = serde_json::json!(["baseline"]);
        i.runs[2].options["comparison"]["values"]["baseline"] = serde_json::Value::Null;
        let v = class_verdicts(&i);
        assert_eq!(
            v[0].verdict,
            "tuned beats the default on fresh seeds; the default failed a trial on the \
             holdouts (a crash, a time-out or an invalid answer: see its trials), so the tuned \
             point has nothing to be compared with there"
        );
        let (_, rows) = table(&v);
        assert_eq!(rows[0][6], "failed a trial");
        i.runs[1].options["comparison"]["failed"] = serde_json::json!(["baseline"]);
        i.runs[1].options["comparison"]["values"]["baseline"] = serde_json::Value::Null;
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict.starts_with(
                "no comparison; the default failed a trial on fresh seeds and on the holdouts"
            ),
            "{}",
            v[0].verdict
        );
    }

    /// A search that ended on the baseline, within noise of the default on fresh seeds: the
    /// verdict names what export ships, the lower mean (it said "keep the default" while
    /// export shipped the baseline).
    #[test]
    fn a_baseline_within_noise_of_the_default_is_said_to_be_shipped() {
        let mut i = input();
        i.campaign.settings["default"] = serde_json::json!({"starts": 2});
        let comparison = &mut i.runs[1].options["comparison"];
        comparison["points"] = serde_json::json!({"tuned": point(1), "default": point(2)});
        comparison["values"] = serde_json::json!({
            "tuned": {"mean": 1.0, "sd": 0.3, "n": 10},
            "default": {"mean": 1.05, "sd": 0.3, "n": 10},
        });
        comparison["winner"] = serde_json::json!("tuned");
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict.contains("mats export ships the baseline"),
            "{}",
            v[0].verdict
        );
        i.runs[1].options["comparison"]["winner"] = serde_json::json!("default");
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict
                .starts_with("no point better than the baseline was found; keep the default"),
            "{}",
            v[0].verdict
        );
    }

    /// A point the quality guard rejected in a re-measure is said to fail it (the verdict
    /// read "no clear difference" with "-" in its cells).
    #[test]
    fn a_rejected_point_fails_the_quality_guard_in_the_verdict() {
        let mut i = input();
        i.runs[1].options["comparison"]["rejected"] = serde_json::json!(["tuned"]);
        i.runs[1].options["comparison"]["values"]["tuned"] = serde_json::Value::Null;
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict
                .starts_with("keep the default: the tuned point fails the quality guard"),
            "{}",
            v[0].verdict
        );
        let (_, rows) = table(&v);
        assert_eq!(rows[0][4], "rejected (quality guard)");
    }

    /// Gaps of instances without a best-known value are to the baseline's result (on a
    /// holdout, to the roles' best): the verdict names them (they were averaged with true gaps
    /// without a word).
    #[test]
    fn gaps_without_a_best_known_value_are_named() {
        let mut i = input();
        let record = |name: &str, best_known| results::InstanceRecord {
            name: name.into(),
            source: String::new(),
            family: "qap".into(),
            class: "a".into(),
            features: serde_json::json!({}),
            best_known,
        };
        i.instances = vec![record("known", Some(10)), record("private", None)];
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict
                .ends_with("(gaps of private are to the baseline's result: no best-known value)"),
            "{}",
            v[0].verdict
        );
        // The same class tuned at a budget of several: its runs are class a@0.5s.
        let mut budgeted = i.clone();
        for r in &mut budgeted.runs {
            r.class = format!("{}@0.5s", r.class);
        }
        let v = class_verdicts(&budgeted);
        assert_eq!(v[0].class, "a@0.5s");
        assert!(
            v[0].verdict
                .ends_with("(gaps of private are to the baseline's result: no best-known value)"),
            "{}",
            v[0].verdict
        );
        assert!(!v[1].verdict.contains("best-known"), "{}", v[1].verdict);
        // "x" is class a's holdout: its roles share the best of their results.
        i.instances.push(record("x", None));
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict.ends_with(
                "(gaps of private are to the baseline's result; gaps of x are to the best \
                 result of the roles compared there: no best-known value)"
            ),
            "{}",
            v[0].verdict
        );
    }

    /// The report names what export ships where the final re-measure's winner was not the
    /// tuned point (it said "tuned beats the default on the holdouts" while export shipped the
    /// baseline).
    #[test]
    fn a_verdict_names_the_point_export_ships() {
        let mut i = input();
        i.runs[1].options["comparison"]["winner"] = serde_json::json!("baseline");
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict.ends_with(
                "; mats export ships the baseline point, which won the final re-measure"
            ),
            "{}",
            v[0].verdict
        );
        let plain = class_verdicts(&input());
        assert!(!plain[0].verdict.contains("ships"), "{}", plain[0].verdict);
    }

    #[test]
    fn verdicts_compare_the_tuned_point_with_the_default_by_point() {
        let v = class_verdicts(&input());
        assert_eq!(v.len(), 3);
        let a = &v[0];
        assert_eq!(a.objective, "gap@budget");
        assert_eq!(a.reference, "default");
        // The default is the baseline point: the final check's "baseline" role holds it.
        assert_eq!(a.fresh_role.as_deref(), Some("baseline"));
        assert_eq!(a.fresh_outcome, Outcome::Better);
        assert_eq!(a.held_outcome, Outcome::Tie);
        assert_eq!(a.pair(false).0.map(|m| m.mean), Some(1.0));
        assert!(
            a.verdict.contains("beats the default on fresh seeds"),
            "{}",
            a.verdict
        );
        let b = &v[1];
        assert_eq!(b.fresh_outcome, Outcome::Missing);
        assert_eq!(b.held_outcome, Outcome::Same);
        assert!(
            b.verdict.contains("no point better than the baseline"),
            "{}",
            b.verdict
        );
        let c = &v[2];
        assert!(!c.with_spread);
        assert_eq!(c.fresh_outcome, Outcome::Worse);
        assert!(c.verdict.starts_with("keep the default"), "{}", c.verdict);
        let md = markdown("c", &v);
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| ")).count(),
            4,
            "{md}"
        );
        assert!(md.contains("0.500 ± 0.100%"), "{md}");
        assert!(md.contains("means only"), "{md}");
        assert_eq!(show(ms(1.5, 4e-15, 3), "%", true), "1.500 ± 0.000%");
        assert_eq!(show(ms(1.5, 0.0, 1), "%", true), "1.500% (one run)");
    }

    #[test]
    fn an_unfinished_campaign_says_so_instead_of_keeping_the_baseline() {
        let mut i = input();
        i.unfinished = Some("was stopped by the user".into());
        let v = class_verdicts(&i);
        // Class b has no re-measure: finished, it kept its baseline; unfinished, it has no
        // verdict yet.
        assert!(v[1]
            .verdict
            .starts_with("unfinished: the campaign was stopped by the user"));
        assert!(
            v.iter().all(|c| !c.verdict.contains("no point better")),
            "{v:?}"
        );
        // Class a was re-measured on fresh seeds and holdouts: its verdict stands.
        assert_eq!(v[0].verdict, class_verdicts(&input())[0].verdict);
    }

    /// A stopped campaign's class without holdouts is not said to have skipped them; one whose
    /// holdout no trial ran on is.
    #[test]
    fn only_holdouts_that_exist_are_said_to_be_unmeasured() {
        let mut i = input();
        i.unfinished = Some("was stopped by its [budget]".into());
        i.runs
            .retain(|r| !(r.class == "a" && r.strategy == "holdout"));
        let v = class_verdicts(&i);
        assert!(
            !v[0].verdict.contains("no holdouts measured"),
            "{}",
            v[0].verdict
        );
        i.instances.push(results::InstanceRecord {
            name: "h".into(),
            source: String::new(),
            family: "qap".into(),
            class: "a".into(),
            features: serde_json::json!({}),
            best_known: Some(1),
        });
        let v = class_verdicts(&i);
        assert!(
            v[0].verdict
                .ends_with("(no holdouts measured: the campaign was stopped by its [budget])"),
            "{}",
            v[0].verdict
        );
    }

    #[test]
    fn metric_names_from_objectives() {
        assert_eq!(metric_of("gap@budget"), "gap");
        assert_eq!(metric_of("energy-to-target"), "energy");
        assert_eq!(metric_of("pareto:time,energy"), "time");
        assert_eq!(metric_of("time"), "time");
    }
}
