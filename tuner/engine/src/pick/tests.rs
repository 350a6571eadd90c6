use std::collections::BTreeMap;

use super::*;
use crate::bundle::{BudgetEntry, ClassEntry, Measured};

fn point(gap: f64, power: Option<f64>, energy: Option<f64>, bundle: &str) -> Measured {
    Measured {
        point: [("threads", bundle)].into_iter().collect(),
        time_s: 0.5,
        power_w: power,
        energy_j: energy,
        gap_percent: Some(gap),
        bundle: Some(bundle.to_string()),
        peak_power_w: None,
        peak_energy_j: None,
    }
}

fn bundles(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The trade-off of issue 28 (rots-block on tai*a: 0.43% at 273 W, 0.51% at 207 W) and a
/// frugal third point.
fn issue_front() -> Vec<Measured> {
    vec![
        point(0.43, Some(273.0), Some(136.5), "b-512"),
        point(0.51, Some(207.0), Some(103.5), "b-128"),
        point(0.90, Some(150.0), Some(75.0), "b-64"),
    ]
}

fn entry(budgets: &[f64]) -> ClassEntry {
    ClassEntry {
        bundles: bundles(&[("quality", "q-first"), ("energy", "e-first")]),
        pareto: issue_front(),
        features: BTreeMap::new(),
        budgets: budgets
            .iter()
            .map(|&b| BudgetEntry {
                budget_s: b,
                bundles: bundles(&[("quality", &format!("q-{b}")), ("energy", "e")]),
                pareto: issue_front()
                    .into_iter()
                    .map(|mut m| {
                        m.bundle = Some(format!("{}-{b}", m.bundle.unwrap_or_default()));
                        m
                    })
                    .collect(),
            })
            .collect(),
        members: Vec::new(),
    }
}

fn request(time_limit_s: Option<f64>) -> Request<'static> {
    Request {
        time_limit_s,
        prefer: "tuned",
        max_power_w: None,
        max_energy_j: None,
    }
}

const BUDGET: Option<RunMode> = Some(RunMode::Budget { budget_s: 0.5 });

#[test]
fn the_nearest_budget_is_nearest_on_a_log_scale_and_the_first_without_a_limit() {
    let budgets = [0.5, 5.0, 60.0];
    for (limit, expected) in [
        (None, 0),
        (Some(0.5), 0),
        (Some(0.01), 0),
        // 2 s lies nearer 0.5 s than 5 s on a linear scale, nearer 5 s on a log scale.
        (Some(2.0), 1),
        (Some(5.0), 1),
        // 20 s: 5 s linearly, 60 s logarithmically.
        (Some(20.0), 2),
        (Some(1e6), 2),
    ] {
        assert_eq!(
            nearest_budget(&budgets, limit),
            Some(expected),
            "--time-limit {limit:?}"
        );
    }
    // At the geometric mean the smaller budget wins.
    assert_eq!(nearest_budget(&[1.0, 4.0], Some(2.0)), Some(0));
    // Midpoints whose logarithms differ only by rounding are ties too (the README's example).
    assert_eq!(nearest_budget(&[0.05, 0.2], Some(0.1)), Some(0));
    assert_eq!(nearest_budget(&[0.5, 2.0, 8.0], Some(4.0)), Some(1));
    assert_eq!(nearest_budget(&[], Some(2.0)), None);
}

#[test]
fn a_budgeted_export_runs_the_requested_budget_and_says_which() {
    let e = entry(&[0.5, 5.0, 60.0]);
    let p = pick(&e, "small", BUDGET, &request(Some(20.0))).unwrap();
    assert_eq!(p.bundle, "q-60");
    assert_eq!(p.prefer, "quality");
    assert_eq!(p.budget.budget_s, Some(60.0));
    assert_eq!(p.budget.reason, BudgetReason::Nearest);
    let line = p.describe("small");
    assert!(
        line.contains("the 60 s budget (of 0.5, 5, 60 s, the nearest --time-limit 20 s"),
        "{line}"
    );

    let first = pick(&e, "small", BUDGET, &request(None)).unwrap();
    assert_eq!(
        (first.bundle.as_str(), first.budget.budget_s),
        ("q-0.5", Some(0.5))
    );
    assert_eq!(first.budget.reason, BudgetReason::First);
    assert!(first.describe("small").contains("first of 0.5, 5, 60 s"));
}

#[test]
fn an_export_of_one_budget_reads_as_that_budget() {
    let e = entry(&[]);
    let p = pick(&e, "small", BUDGET, &request(Some(60.0))).unwrap();
    assert_eq!(p.bundle, "q-first");
    assert_eq!(p.budget.reason, BudgetReason::Only);
    assert_eq!(p.budget.budget_s, Some(0.5));
    let mut r = request(None);
    r.prefer = "power";
    let err = pick(&e, "small", BUDGET, &r).unwrap_err();
    assert!(
        err.contains("no bundle tuned for power") && err.contains("energy, quality"),
        "{err}"
    );
}

#[test]
fn a_power_or_energy_cap_runs_the_best_gap_point_within_it() {
    let e = entry(&[]);
    let cases: [(Option<f64>, Option<f64>, &str, &str); 7] = [
        (Some(300.0), None, "tuned", "b-512"),
        (Some(250.0), None, "tuned", "b-128"),
        (Some(207.0), None, "tuned", "b-128"),
        (Some(160.0), None, "tuned", "b-64"),
        (None, Some(110.0), "tuned", "b-128"),
        (Some(250.0), Some(80.0), "tuned", "b-64"),
        // --prefer picks the objective among the points within the cap.
        (Some(250.0), None, "energy", "b-64"),
    ];
    for (power, energy, prefer, expected) in cases {
        let r = Request {
            time_limit_s: None,
            prefer,
            max_power_w: power,
            max_energy_j: energy,
        };
        let p = pick(&e, "small", BUDGET, &r).unwrap();
        assert_eq!(p.bundle, expected, "power {power:?}, energy {energy:?}");
        assert!(p.caps.iter().all(|c| c.value <= c.limit), "{:?}", p.caps);
        assert!(p.measured.is_some());
    }
    let r = Request {
        max_power_w: Some(250.0),
        ..request(None)
    };
    let line = pick(&e, "small", BUDGET, &r).unwrap().describe("small");
    assert!(
        line.contains("power 207.0 W within 250 W") && line.contains("gap 0.510%"),
        "{line}"
    );
}

/// Found on the H100 (campaigns/qap-power-cap.toml): the 528-block point's class mean was
/// 305 W, but tai35a drew 316 W with it (tai60a 293 W), so a 310 W cap passed a point one of
/// the class's instances exceeds. With the re-measure's per-instance peaks the cap goes by the
/// most demanding instance.
#[test]
fn a_cap_goes_by_the_highest_instance_mean_where_the_export_has_it() {
    let mut e = entry(&[]);
    e.pareto = vec![
        Measured {
            peak_power_w: Some(316.0),
            ..point(0.167, Some(305.0), Some(305.0), "b-528x128")
        },
        Measured {
            peak_power_w: Some(256.0),
            ..point(0.185, Some(240.0), Some(240.0), "b-132x256")
        },
    ];
    let r = Request {
        max_power_w: Some(310.0),
        ..request(None)
    };
    let p = pick(&e, "tai-a", BUDGET, &r).unwrap();
    assert_eq!(p.bundle, "b-132x256");
    assert_eq!(
        (p.caps[0].value, p.caps[0].of),
        (256.0, "highest instance mean")
    );
    let line = p.describe("tai-a");
    assert!(
        line.contains("highest instance mean power 256.0 W within 310 W"),
        "{line}"
    );
    // Without peaks (older exports) the class mean decides, as before.
    e.pareto[0].peak_power_w = None;
    let p = pick(&e, "tai-a", BUDGET, &r).unwrap();
    assert_eq!((p.bundle.as_str(), p.caps[0].of), ("b-528x128", "mean"));
    // The refusal names which value it compared.
    let r = Request {
        max_power_w: Some(200.0),
        ..request(None)
    };
    let err = pick(&e, "tai-a", BUDGET, &r).unwrap_err();
    assert!(
        err.contains("lowest power measured is 256.0 W (highest instance mean of b-132x256"),
        "{err}"
    );
}

#[test]
fn no_point_under_the_cap_names_the_lowest_available() {
    let e = entry(&[0.5, 5.0]);
    let r = Request {
        max_power_w: Some(100.0),
        ..request(Some(4.0))
    };
    let err = pick(&e, "small", BUDGET, &r).unwrap_err();
    assert!(
        err.contains("class small at 5 s per run")
            && err.contains("--max-power 100 W")
            && err.contains("lowest power measured is 150.0 W")
            && err.contains("b-64-5"),
        "{err}"
    );
    let r = Request {
        max_energy_j: Some(1.0),
        ..request(None)
    };
    let err = pick(&e, "small", BUDGET, &r).unwrap_err();
    assert!(err.contains("75.0 J"), "{err}");
    for bad in [0.0, -5.0, f64::NAN, f64::INFINITY] {
        let r = Request {
            max_power_w: Some(bad),
            ..request(None)
        };
        let err = pick(&e, "small", BUDGET, &r).unwrap_err();
        assert!(err.contains("--max-power must be a positive"), "{err}");
    }
}

#[test]
fn a_front_without_power_or_bundles_refuses_a_cap_clearly() {
    let mut e = entry(&[]);
    for m in &mut e.pareto {
        m.power_w = None;
        m.energy_j = None;
    }
    let r = Request {
        max_power_w: Some(250.0),
        ..request(None)
    };
    let err = pick(&e, "small", BUDGET, &r).unwrap_err();
    assert!(
        err.contains("no point of its front has a measured power"),
        "{err}"
    );
    // An export from before fronts carried bundles: nothing on it can run.
    let mut old = entry(&[]);
    for m in &mut old.pareto {
        m.bundle = None;
    }
    let err = pick(&old, "small", BUDGET, &r).unwrap_err();
    assert!(err.contains("measured power"), "{err}");
}

#[test]
fn the_kept_front_holds_every_point_a_cap_can_choose() {
    let mut all = issue_front();
    // Dominated in every quantity by b-128: never chosen, never kept.
    all.push(point(0.60, Some(210.0), Some(104.0), "dominated"));
    // Worse gap and energy than b-128 but the lowest power: a power cap may choose it.
    all.push(point(0.95, Some(140.0), Some(80.0), "frugal"));
    let refs: Vec<&Measured> = all.iter().collect();
    let kept: Vec<String> = super::front(&refs, None)
        .into_iter()
        .filter_map(|m| m.bundle)
        .collect();
    assert!(!kept.contains(&"dominated".to_string()), "{kept:?}");
    for b in ["b-512", "b-128", "b-64", "frugal"] {
        assert!(kept.contains(&b.to_string()), "{b} missing from {kept:?}");
    }
    // A CPU front: no power or energy, still non-dominated in gap and time.
    let cpu: Vec<Measured> = [(0.4, 0.51), (0.5, 0.50), (0.6, 0.52)]
        .iter()
        .map(|&(g, t)| Measured {
            time_s: t,
            ..point(g, None, None, &format!("{g}"))
        })
        .collect();
    let refs: Vec<&Measured> = cpu.iter().collect();
    assert_eq!(super::front(&refs, None).len(), 2);
}

/// At a budget every run lasts the budget: a worse gap is no front point for a run that
/// measured a few microseconds less (a CPU export kept one for 0.100053 s against 0.100057 s);
/// where time is the objective (fixed work, a target) it still is one.
#[test]
fn the_front_at_a_budget_ignores_time() {
    let best = Measured {
        time_s: 0.100_056_782,
        ..point(0.649, None, None, "best")
    };
    let worse = Measured {
        time_s: 0.100_052_956,
        ..point(2.568, None, None, "worse")
    };
    let points = [&best, &worse];
    let at_budget = front(&points, Some(RunMode::Budget { budget_s: 0.1 }));
    assert_eq!(at_budget, vec![best.clone()]);
    let target = RunMode::Target {
        target_gap_percent: 1.0,
        cap_s: 1.0,
        penalty: 10.0,
    };
    assert_eq!(front(&points, Some(target)).len(), 2);
    assert_eq!(front(&points, None).len(), 2);
}
