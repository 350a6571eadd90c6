use std::collections::HashSet;

use rand::rngs::StdRng;
use rand::SeedableRng;
use results::{Point, Value};

use super::*;
use crate::space::Space;

/// a, b in 0..=9 (a launch, b a flag), v a variant, with a + b <= 15.
fn grid() -> Space {
    Space::from_toml_str(
        r#"
constraints = ["a + b <= 15"]
[[param]]
name = "v"
kind = "variant"
values = ["x", "y"]
[[param]]
name = "a"
kind = "launch"
range = { from = 0, to = 9 }
[[param]]
name = "b"
kind = "flag"
range = { from = 0, to = 9 }
flag = "-b{}"
"#,
        "grid",
    )
    .expect("grid loads")
}

fn int(p: &Point, n: &str) -> i64 {
    p.get(n).and_then(Value::as_int).unwrap_or(0)
}

fn convex(p: &Point) -> f64 {
    let (a, b) = (int(p, "a") as f64, int(p, "b") as f64);
    let v = if p.get("v") == Some(&"y".into()) {
        0.0
    } else {
        3.0
    };
    1.0 + (a - 6.0).powi(2) + (b - 2.0).powi(2) + v
}

/// Many local optima; the global one at a = 7, b = 7, v = x.
fn rugged(p: &Point) -> f64 {
    let (a, b) = (int(p, "a"), int(p, "b"));
    if (a, b) == (7, 7) && p.get("v") == Some(&"x".into()) {
        return 1.0;
    }
    let h = (a * 7919
        + b * 104729
        + if p.get("v") == Some(&"y".into()) {
            13
        } else {
            0
        })
        % 97;
    2.0 + h as f64
}

fn table(space: &Space, f: fn(&Point) -> f64) -> TableEvaluator {
    TableEvaluator::from_fn(space, |p| {
        Some(Objectives {
            gap_percent: None,
            time_s: f(p),
            power_w: Some(100.0 + f(p) * 0.0 + int(p, "a") as f64),
            energy_j: Some(f(p) * (100.0 + int(p, "a") as f64)),
        })
    })
}

fn optimum(space: &Space, f: fn(&Point) -> f64) -> f64 {
    space.points().map(|p| f(&p)).fold(f64::INFINITY, f64::min)
}

fn strategy(text: &str) -> Strategy {
    Strategy::from_toml_str(text, "strategy").expect("strategy parses")
}

fn all_strategies() -> Vec<Strategy> {
    [
        r#"name = "exhaustive""#,
        r#"name = "random""#,
        r#"name = "hill-climbing""#,
        "name = \"hill-climbing\"\nfirst_improvement = true",
        r#"name = "simulated-annealing""#,
        "name = \"staged\"\norder = \"opt-then-thread\"",
        "name = \"staged\"\norder = \"thread-then-opt\"\nstage_search = \"exhaustive\"",
        "name = \"staged\"\norder = \"combined\"\nrestarts = 3",
        "name = \"hill-climbing\"\nneighbourhood = \"adjacent\"",
        r#"name = "bayes""#,
        "name = \"bayes\"\ninitial = 2\nmodel_points = 12",
        r#"name = "genetic""#,
        r#"name = "basin-hopping""#,
        r#"name = "guided-climbing""#,
        "name = \"guided-climbing\"\npairs = 1",
        "name = \"guided-climbing\"\nrestart_candidates = 1",
    ]
    .iter()
    .map(|t| strategy(t))
    .collect()
}

#[test]
fn strategy_tables_parse_and_reject_unknown_keys() {
    assert_eq!(
        strategy("name = \"hill-climbing\"\nrestarts = 5\nfirst_improvement = true"),
        Strategy::HillClimbing {
            restarts: Some(5),
            first_improvement: true,
            neighbourhood: Neighbourhood::Hamming,
        }
    );
    let e = Strategy::from_toml_str("name = \"hill-climbing\"\nrestart = 5", "c.toml").unwrap_err();
    assert!(format!("{e:#}").contains("c.toml") && format!("{e:#}").contains("restart"));
    assert!(Strategy::from_toml_str("name = \"tabu\"", "c").is_err());
    assert_eq!(
        "pareto:time,energy".parse(),
        Ok(Objective::Pareto(Metric::Time, Metric::Energy))
    );
    assert_eq!("energy".parse(), Ok(Objective::Energy));
}

#[test]
fn exhaustive_visits_exactly_the_valid_points() {
    let s = grid();
    let mut t = table(&s, convex);
    let out = strategy(r#"name = "exhaustive""#)
        .run(
            &s,
            &mut t,
            Objective::Time,
            None,
            &mut StdRng::seed_from_u64(0),
        )
        .expect("runs");
    let visited: HashSet<Point> = out.history.iter().map(|(p, _)| p.clone()).collect();
    let valid: HashSet<Point> = s.points().collect();
    assert_eq!(visited, valid);
    assert_eq!(out.evaluations as u64, s.count());
    assert_eq!(out.best.expect("best").1.time_s, optimum(&s, convex));
}

#[test]
fn every_strategy_finds_the_optimum_with_enough_budget() {
    let s = grid();
    for (is_rugged, f) in [(false, convex as fn(&Point) -> f64), (true, rugged)] {
        for st in all_strategies() {
            // Restarts until the budget (the whole space) is spent reach the optimum.
            let mut t = table(&s, f);
            let out = st
                .run(
                    &s,
                    &mut t,
                    Objective::Time,
                    None,
                    &mut StdRng::seed_from_u64(5),
                )
                .expect("runs");
            let best = out.best.expect("best").1.time_s;
            // Staged search keeps the variant; annealing without reheating may settle (stall)
            // in a basin of the rugged landscape.
            let staged = matches!(st, Strategy::Staged { .. });
            let annealing = matches!(st, Strategy::SimulatedAnnealing { .. });
            if !(staged || (annealing && is_rugged)) {
                assert_eq!(best, optimum(&s, f), "{st:?}");
            }
            assert!(out.history.iter().all(|(p, _)| s.is_valid(p)), "{st:?}");
            let distinct: HashSet<&Point> = out.history.iter().map(|(p, _)| p).collect();
            assert_eq!(
                distinct.len(),
                out.evaluations,
                "{st:?} asked a point twice"
            );
        }
    }
}

#[test]
fn hill_climbing_reaches_the_optimum_of_a_convex_landscape() {
    let s = grid();
    for seed in 0..10 {
        let mut t = table(&s, convex);
        let out = strategy("name = \"hill-climbing\"\nrestarts = 0")
            .run(
                &s,
                &mut t,
                Objective::Time,
                None,
                &mut StdRng::seed_from_u64(seed),
            )
            .expect("runs");
        assert_eq!(out.best.expect("best").1.time_s, 1.0, "seed {seed}");
        assert!(out.evaluations < 120, "{} evaluations", out.evaluations);
    }
}

#[test]
fn staged_stage_one_changes_only_its_group() {
    let s = grid();
    let start: Point = [("v", Value::from("x")), ("a", 0.into()), ("b", 9.into())]
        .into_iter()
        .collect();
    for (order, first, second) in [("opt-then-thread", "b", "a"), ("thread-then-opt", "a", "b")] {
        let mut t = table(&s, convex);
        let out = strategy(&format!("name = \"staged\"\norder = \"{order}\""))
            .run(
                &s,
                &mut t,
                Objective::Time,
                Some(start.clone()),
                &mut StdRng::seed_from_u64(1),
            )
            .expect("runs");
        assert_eq!(out.stages.len(), 2);
        let stage1 = &out.history[..out.stages[0]];
        assert!(stage1
            .iter()
            .all(|(p, _)| int(p, second) == int(&start, second) && p.get("v") == start.get("v")));
        assert!(stage1
            .iter()
            .any(|(p, _)| int(p, first) != int(&start, first)));
        let best1 = stage1
            .iter()
            .min_by(|x, y| {
                x.1.map(|o| o.time_s)
                    .partial_cmp(&y.1.map(|o| o.time_s))
                    .expect("finite")
            })
            .map(|(p, _)| p.clone())
            .expect("stage 1 evaluated");
        let stage2 = &out.history[out.stages[0]..out.stages[1]];
        assert!(stage2
            .iter()
            .all(|(p, _)| int(p, first) == int(&best1, first) && p.get("v") == start.get("v")));
        // The variant never changes: the optimum with v = y is out of reach, v = x's is found.
        assert_eq!(out.best.expect("best").1.time_s, 4.0, "{order}");
    }
    let mut t = table(&s, convex);
    let out = strategy("name = \"staged\"\norder = \"combined\"")
        .run(
            &s,
            &mut t,
            Objective::Time,
            Some(start),
            &mut StdRng::seed_from_u64(1),
        )
        .expect("runs");
    assert_eq!(out.stages.len(), 1);
    assert_eq!(out.best.expect("best").1.time_s, 4.0);
}

#[test]
fn strategies_stop_when_the_evaluator_is_exhausted() {
    let s = grid();
    for st in all_strategies() {
        let mut t = table(&s, rugged).with_budget(7);
        let out = st
            .run(
                &s,
                &mut t,
                Objective::Time,
                None,
                &mut StdRng::seed_from_u64(2),
            )
            .expect("runs");
        // A batch may cross the budget; nothing is asked after it.
        assert!(t.distinct() < 7 + 200, "{st:?}");
        assert!(out.stopped, "{st:?}");
        let calls = t.calls;
        assert!(t.exhausted());
        assert!(calls > 0);
    }
    let mut t = table(&s, rugged).with_budget(0);
    let out = strategy(r#"name = "random""#)
        .run(
            &s,
            &mut t,
            Objective::Time,
            None,
            &mut StdRng::seed_from_u64(2),
        )
        .expect("runs");
    assert_eq!(out.evaluations, 0);
    assert!(out.best.is_none());
}

#[test]
fn one_point_space_works_for_every_strategy() {
    let s = Space::from_toml_str(
        "[[param]]\nname = \"a\"\nkind = \"launch\"\nvalues = [3]\n",
        "one",
    )
    .expect("loads");
    let mut strategies = all_strategies();
    strategies.push(strategy(r#"name = "pareto""#));
    for st in strategies {
        let mut t = TableEvaluator::from_fn(&s, |_| {
            Some(Objectives {
                gap_percent: None,
                time_s: 2.0,
                power_w: Some(1.0),
                energy_j: Some(2.0),
            })
        });
        let objective = if matches!(st, Strategy::Pareto { .. }) {
            Objective::Pareto(Metric::Time, Metric::Energy)
        } else {
            Objective::Time
        };
        let out = st
            .run(&s, &mut t, objective, None, &mut StdRng::seed_from_u64(0))
            .expect("runs");
        assert_eq!(out.evaluations, 1, "{st:?}");
    }
}

#[test]
fn failed_points_are_never_best() {
    let s = grid();
    let mut t = TableEvaluator::from_fn(&s, |p| {
        (int(p, "a") != 6).then(|| Objectives {
            time_s: convex(p),
            ..Default::default()
        })
    });
    let out = strategy(r#"name = "exhaustive""#)
        .run(
            &s,
            &mut t,
            Objective::Time,
            None,
            &mut StdRng::seed_from_u64(0),
        )
        .expect("runs");
    assert_ne!(int(&out.best.expect("best").0, "a"), 6);
}

#[test]
fn pareto_search_finds_the_brute_force_front() {
    let s = grid();
    let objective = Objective::Pareto(Metric::Time, Metric::Power);
    for f in [convex as fn(&Point) -> f64, rugged] {
        let mut t = table(&s, f);
        let all: Vec<(Point, Option<Objectives>)> = s
            .points()
            .map(|p| (p.clone(), t.table().get(&p).copied().flatten()))
            .collect();
        let expected: HashSet<Point> = pareto_front(&all, objective)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert!(expected.len() > 1);
        let out = strategy(r#"name = "pareto""#)
            .run(&s, &mut t, objective, None, &mut StdRng::seed_from_u64(4))
            .expect("runs");
        let found: HashSet<Point> = out.pareto.into_iter().map(|(p, _)| p).collect();
        assert_eq!(found, expected);
    }
    // Without restarts it stops once its front is explored.
    let mut t = table(&s, convex);
    let out = strategy("name = \"pareto\"\nrestarts = 0")
        .run(&s, &mut t, objective, None, &mut StdRng::seed_from_u64(4))
        .expect("runs");
    assert!(!out.stopped && (out.evaluations as u64) < s.count());
}

#[test]
fn objectives_must_fit_the_strategy() {
    let s = grid();
    let mut t = table(&s, convex);
    let pareto = Objective::Pareto(Metric::Time, Metric::Energy);
    let mut rng = StdRng::seed_from_u64(0);
    assert!(strategy(r#"name = "random""#)
        .run(&s, &mut t, pareto, None, &mut rng)
        .is_err());
    assert!(strategy(r#"name = "pareto""#)
        .run(&s, &mut t, Objective::Time, None, &mut rng)
        .is_err());
}

#[test]
fn expected_random_share_is_exact() {
    // Values 1, 2, 4 and a budget of 1: E[1/v] = (1 + 1/2 + 1/4) / 3.
    let share = table::expected_random_share(&[1.0, 2.0, 4.0], 1, 1.0);
    assert!((share - 1.75 / 3.0).abs() < 1e-12);
    // Budget 2: min is 1 with p 2/3, 2 with p 1/3.
    let share = table::expected_random_share(&[1.0, 2.0, 4.0], 2, 1.0);
    assert!((share - (2.0 / 3.0 + 0.5 / 3.0)).abs() < 1e-12);
    assert!((table::expected_random_share(&[1.0, 2.0, 4.0], 3, 1.0) - 1.0).abs() < 1e-12);
}

fn cube() -> Space {
    Space::from_toml_str(
        r#"
constraints = ["a + b + c <= 45"]
[[param]]
name = "a"
kind = "launch"
range = { from = 0, to = 19 }
[[param]]
name = "b"
kind = "launch"
range = { from = 0, to = 19 }
[[param]]
name = "c"
kind = "runtime"
range = { from = 0, to = 19 }
"#,
        "cube",
    )
    .expect("cube loads")
}

fn bowl(p: &Point) -> f64 {
    let (a, b, c) = (int(p, "a") as f64, int(p, "b") as f64, int(p, "c") as f64);
    1.0 + (a - 12.0).powi(2) + (b - 3.0).powi(2) + (c - 7.0).powi(2)
}

#[test]
fn replay_study_on_a_synthetic_table() {
    let s = cube();
    let t = table(&s, bowl);
    let rows = replay_study(
        &s,
        &t,
        &strategy(r#"name = "hill-climbing""#),
        Objective::Time,
        &[0.05, 0.10, 0.15],
        0..10,
    )
    .expect("study runs");
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert!(r.share > 0.0 && r.share <= 1.0);
        assert!(r.random_share > 0.0 && r.random_share < 1.0);
        assert_eq!(r.seeds, 10);
    }
    assert!(rows[2].share >= rows[0].share);
    assert!(rows[2].share > 0.95, "{rows:?}");
    assert!(rows[2].score > 0.5, "{rows:?}");
    let s = grid();
    let t = table(&s, convex);
    let random = replay_study(
        &s,
        &t,
        &strategy(r#"name = "random""#),
        Objective::Time,
        &[0.1],
        0..200,
    )
    .expect("study runs");
    // Random search's mean over many seeds is close to its exact expectation.
    assert!(
        (random[0].share - random[0].random_share).abs() < 0.05,
        "{random:?}"
    );
}

#[test]
fn new_strategy_options_are_checked() {
    let s = grid();
    let mut t = table(&s, convex);
    let mut rng = StdRng::seed_from_u64(0);
    for bad in [
        "name = \"genetic\"\npopulation = 1",
        "name = \"genetic\"\nmutation = 1.5",
        "name = \"basin-hopping\"\ntemperature = -1.0",
    ] {
        let e = strategy(bad)
            .run(&s, &mut t, Objective::Time, None, &mut rng)
            .expect_err(bad);
        assert!(format!("{e:#}").contains("must be"), "{e:#}");
    }
    assert!(Strategy::from_toml_str("name = \"bayes\"\nkernel = 1", "c").is_err());
    assert_eq!(
        strategy("name = \"bayesian-optimisation\""),
        strategy("name = \"bayes\"")
    );
}

fn at(v: &str, a: i64, b: i64) -> Point {
    [("v", Value::from(v)), ("a", a.into()), ("b", b.into())]
        .into_iter()
        .collect()
}

#[test]
fn adjacent_neighbourhood_steps_ordinals_and_flips_categories() {
    let s = grid();
    let geo = geometry::Geometry::new(&s);
    let mut n = geo.adjacent(&s, &at("x", 5, 5));
    n.sort();
    let mut want = vec![
        at("x", 4, 5),
        at("x", 6, 5),
        at("x", 5, 4),
        at("x", 5, 6),
        at("y", 5, 5),
    ];
    want.sort();
    assert_eq!(n, want);
    // At the constraint's edge (a + b <= 15) there is no step up; nothing invalid is offered.
    let n = geo.adjacent(&s, &at("y", 9, 6));
    assert!(n.iter().all(|p| s.is_valid(p)));
    assert!(n.contains(&at("y", 8, 6)) && n.contains(&at("y", 9, 5)));
    assert_eq!(n.len(), 3, "{n:?}");
    // Repair: an invalid combination becomes the nearest valid point.
    let mut rng = StdRng::seed_from_u64(0);
    let fixed = geo
        .nearest_valid(&s, &at("x", 9, 9), &mut rng)
        .expect("repaired");
    assert!(s.is_valid(&fixed));
    assert_eq!(int(&fixed, "a") + int(&fixed, "b"), 15);
}

#[test]
fn model_based_and_evolutionary_strategies_never_ask_invalid_points() {
    let s = cube();
    for text in [
        r#"name = "bayes""#,
        r#"name = "genetic""#,
        r#"name = "basin-hopping""#,
    ] {
        for seed in 0..3 {
            let mut t = table(&s, bowl).with_budget(300);
            let out = strategy(text)
                .run(
                    &s,
                    &mut t,
                    Objective::Time,
                    None,
                    &mut StdRng::seed_from_u64(seed),
                )
                .expect("runs");
            assert!(out.history.iter().all(|(p, _)| s.is_valid(p)), "{text}");
            // A batch (a generation) may cross the budget; nothing is asked after it.
            assert!((300..320).contains(&out.evaluations), "{text}");
            // The bowl's optimum (1.0) is easy for all three within 300 of 7600 points.
            assert_eq!(out.best.expect("best").1.time_s, 1.0, "{text} seed {seed}");
        }
    }
}

#[test]
fn bayes_beats_random_search_at_a_small_budget() {
    // 40 of 7600 points: random search's expected best is far from the bowl's optimum.
    let s = cube();
    let t = table(&s, bowl);
    let stats = benchmark::SpaceStats::new(&s, &t, Objective::Time).expect("stats");
    let curves = benchmark::strategy_curves(
        &s,
        &t,
        &strategy(r#"name = "bayes""#),
        Objective::Time,
        0..5,
        40,
    )
    .expect("runs");
    let found = curves.iter().map(|c| c[39]).sum::<f64>() / curves.len() as f64;
    assert!(
        found < stats.random_best(40) / 2.0,
        "bayes {found} vs random {}",
        stats.random_best(40)
    );
}

#[test]
fn random_best_is_exact_and_scores_are_standardised() {
    let s = Space::from_toml_str(
        "[[param]]\nname = \"a\"\nkind = \"launch\"\nvalues = [0, 1, 2, 3]\n",
        "four",
    )
    .expect("loads");
    let values = [4.0, 1.0, 2.0, 8.0];
    let t = TableEvaluator::from_times(s.points().zip(values));
    let stats = benchmark::SpaceStats::new(&s, &t, Objective::Time).expect("stats");
    // Budget 2 of {1, 2, 4, 8}: min is 1 w.p. 1/2, 2 w.p. 1/3, 4 w.p. 1/6.
    assert!((stats.random_best(2) - (0.5 + 2.0 / 3.0 + 4.0 / 6.0)).abs() < 1e-12);
    assert!((stats.random_best(1) - 15.0 / 4.0).abs() < 1e-12);
    assert_eq!(stats.random_best(4), 1.0);
    assert_eq!(stats.score(1, 1.0), 1.0);
    assert!(stats.score(1, 15.0 / 4.0).abs() < 1e-12);
    assert!(stats.score(1, 8.0) < 0.0);
    // A curve at the optimum from the first evaluation scores 1 everywhere.
    let sc = benchmark::score_curves(&stats, &[vec![1.0; 2]], &[0.25, 0.5]);
    assert_eq!(sc.at, vec![1.0, 1.0]);
    assert_eq!(sc.aggregate, 1.0);
    let curve = benchmark::best_so_far([None, Some(4.0), Some(2.0)], 5);
    assert_eq!(curve, vec![f64::INFINITY, 4.0, 2.0, 2.0, 2.0]);
}

#[test]
fn random_search_scores_zero_on_average() {
    let s = cube();
    let t = table(&s, bowl);
    let stats = benchmark::SpaceStats::new(&s, &t, Objective::Time).expect("stats");
    let curves = benchmark::strategy_curves(
        &s,
        &t,
        &strategy(r#"name = "random""#),
        Objective::Time,
        0..300,
        76,
    )
    .expect("runs");
    let sc = benchmark::score_curves(&stats, &curves, &[0.002, 0.01]);
    assert!(sc.aggregate.abs() < 0.1, "{sc:?}");
}

#[test]
fn hypervolume_of_a_staircase() {
    let v = benchmark::hypervolume(
        &[(1.0, 3.0), (2.0, 2.0), (3.0, 1.0), (3.5, 3.5)],
        (4.0, 4.0),
    );
    // Three columns: [1,2) x [3,4), [2,3) x [2,4), [3,4) x [1,4).
    assert!((v - (1.0 + 2.0 + 3.0)).abs() < 1e-12, "{v}");
    assert_eq!(benchmark::hypervolume(&[(5.0, 1.0)], (4.0, 4.0)), 0.0);
}

#[test]
fn pareto_search_covers_the_front_within_a_quarter_of_the_points() {
    // A launch-like space: time falls with threads until occupancy runs out, power rises with
    // them, so energy and time disagree at the front.
    let s = cube();
    let t = TableEvaluator::from_fn(&s, |p| {
        let (a, b, c) = (int(p, "a") as f64, int(p, "b") as f64, int(p, "c") as f64);
        let time =
            1.0 + (a - 12.0).powi(2) / 20.0 + (b - 3.0).abs() / 4.0 + (c - 7.0).powi(2) / 30.0;
        let power = 100.0 + 8.0 * a + 2.0 * c;
        Some(Objectives {
            time_s: time,
            power_w: Some(power),
            energy_j: Some(time * power),
            gap_percent: None,
        })
    });
    let rows = benchmark::pareto_study(
        &s,
        &t,
        &strategy(r#"name = "pareto""#),
        Objective::Pareto(Metric::Time, Metric::Energy),
        &[0.05, 0.25],
        0..5,
    )
    .expect("study runs");
    assert_eq!(rows.len(), 2);
    assert!(rows[1].share >= 0.9, "{rows:?}");
    assert!(rows[1].share >= rows[0].share);
    assert!(rows.iter().all(|r| r.share <= 1.0 + 1e-9));
}

fn small_cache() -> kt_cache::CacheTable {
    kt_cache::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/convolution-a100-small.json"
    )))
    .expect("the carried cache file loads")
}

#[test]
fn kernel_tuner_cache_file_reads_as_a_table() {
    let c = small_cache();
    assert_eq!(c.name, "convolution-a100-small");
    assert_eq!(c.space.len(), 211);
    assert_eq!(c.failed, 19);
    assert_eq!(c.space.parameters().len(), 10);
    let first = c.space.points().next().expect("a point");
    assert!(c.space.is_valid(&first));
    // A combination the file does not list is outside the space (an implied constraint).
    let unlisted = first.with("block_size_x", Value::Int(48));
    assert!(!c.space.is_valid(&unlisted));
    assert!(c
        .space
        .neighbours(&first, &[])
        .iter()
        .all(|n| c.space.is_valid(n)));
    let ok = c.table.table().values().filter(|v| v.is_some()).count();
    assert_eq!(ok, 211 - 19);
    // Times are seconds (the file has milliseconds).
    let fastest = c
        .table
        .table()
        .values()
        .flatten()
        .map(|o| o.time_s)
        .fold(f64::INFINITY, f64::min);
    assert!(fastest > 1e-4 && fastest < 1e-2, "{fastest}");
}

#[test]
fn bad_cache_files_give_one_clear_error() {
    for (text, want) in [
        ("{", "not valid JSON"),
        ("{}", "tune_params_keys"),
        (
            r#"{"tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}, "cache": {"3": {"a": 3, "time": 1.0}}}"#,
            "not among",
        ),
        (
            r#"{"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {"1": {"time": 1.0}}}"#,
            "no value for `a`",
        ),
        (
            r#"{"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {}}"#,
            "no configuration",
        ),
    ] {
        let e = kt_cache::parse(text, "t").err().expect(text);
        assert!(format!("{e:#}").contains(want), "{e:#} lacks {want}");
    }
}

#[test]
fn strategies_beat_random_search_on_the_carried_table() {
    // The chosen default for budgets of 5% and more must score above random search (0) at
    // every such budget; the carried table is small, so 10 seeds run in well under a second.
    let c = small_cache();
    let stats = benchmark::SpaceStats::new(&c.space, &c.table, Objective::Time).expect("stats");
    let fractions = [0.05, 0.10, 0.15, 0.25, 0.5];
    let len = stats.budget(0.5);
    for text in [
        "name = \"hill-climbing\"\nfirst_improvement = true\nneighbourhood = \"adjacent\"",
        r#"name = "bayes""#,
    ] {
        let curves = benchmark::strategy_curves(
            &c.space,
            &c.table,
            &strategy(text),
            Objective::Time,
            0..10,
            len,
        )
        .expect("runs");
        let sc = benchmark::score_curves(&stats, &curves, &fractions);
        assert!(sc.at.iter().all(|s| *s > 0.0), "{text}: {sc:?}");
        assert!(sc.aggregate > 0.3, "{text}: {sc:?}");
    }
}

#[test]
fn a_gap_of_zero_is_the_best_value_on_the_log_scale() {
    let gap = Objective::Gap;
    let zero = gap.log_cost(0.0).expect("0 % has a log cost");
    assert!(zero.is_finite());
    assert!(zero < gap.log_cost(1e-3).unwrap());
    assert!(gap.log_cost(1e-3).unwrap() < gap.log_cost(0.5).unwrap());
    assert_eq!(gap.log_cost(f64::INFINITY), None);
    // Times have no shift, and a time of 0 has no logarithm.
    assert_eq!(Objective::Time.log_cost(0.0), None);
    assert_eq!(Objective::Time.log_cost(1.0), Some(0.0));
    assert_eq!(
        Objective::Pareto(Metric::Gap, Metric::Energy).log_cost(0.0),
        Some(zero)
    );
}

/// Quality campaigns minimise a gap whose optimum is 0: the strategies that rank on a log
/// scale reach it (a zero read as a failure would steer them away from it), and none asks for
/// a point twice.
#[test]
fn log_scale_strategies_reach_a_gap_of_zero() {
    let s = cube();
    let gaps = TableEvaluator::from_fn(&s, |p| {
        Some(Objectives {
            gap_percent: Some(bowl(p) - 1.0),
            time_s: 0.2,
            power_w: None,
            energy_j: None,
        })
    });
    for text in [
        r#"name = "bayes""#,
        r#"name = "basin-hopping""#,
        r#"name = "simulated-annealing""#,
        r#"name = "hill-climbing""#,
        "name = \"hill-climbing\"\nfirst_improvement = true",
    ] {
        for seed in 0..3 {
            let mut t = gaps.clone().with_budget(300);
            let out = strategy(text)
                .run(
                    &s,
                    &mut t,
                    Objective::Gap,
                    None,
                    &mut StdRng::seed_from_u64(seed),
                )
                .expect("runs");
            let best = out.best.expect("a best point").1.gap_percent;
            assert_eq!(best, Some(0.0), "{text} seed {seed}");
            let distinct: HashSet<&Point> = out.history.iter().map(|(p, _)| p).collect();
            assert_eq!(distinct.len(), out.history.len(), "{text}");
        }
    }
}

/// Bayesian optimisation models a gap of 0 as the best value: once it has found the plateau
/// of zero gaps it keeps proposing points there (read as failures, zeros would drive the
/// model away from them).
#[test]
fn bayes_models_a_zero_gap_as_the_best_value() {
    let s = cube();
    let plateau = TableEvaluator::from_fn(&s, |p| {
        Some(Objectives {
            gap_percent: Some((bowl(p) - 30.0).max(0.0)),
            time_s: 0.2,
            power_w: None,
            energy_j: None,
        })
    });
    let mut zeros_after_first = 0;
    let mut after_first = 0;
    for seed in 0..3 {
        let mut t = plateau.clone().with_budget(60);
        let out = strategy("name = \"bayes\"\ninitial = 5")
            .run(
                &s,
                &mut t,
                Objective::Gap,
                None,
                &mut StdRng::seed_from_u64(seed),
            )
            .expect("runs");
        let gaps: Vec<f64> = out
            .history
            .iter()
            .map(|(_, o)| o.and_then(|o| o.gap_percent).expect("measured"))
            .collect();
        if let Some(first) = gaps.iter().position(|g| *g == 0.0) {
            let rest = &gaps[(first + 1).max(5)..];
            after_first += rest.len();
            zeros_after_first += rest.iter().filter(|g| **g == 0.0).count();
        }
    }
    assert!(after_first > 0, "bayes never reached the plateau");
    assert!(
        zeros_after_first * 2 >= after_first,
        "{zeros_after_first} of {after_first} points after the first zero were on the plateau"
    );
}

/// A table evaluator that measures `width` points at once (several GPUs) and records the
/// batches it was asked.
struct Wide {
    inner: TableEvaluator,
    width: usize,
    batches: Vec<Vec<Point>>,
}

impl Evaluator for Wide {
    fn evaluate(&mut self, points: &[Point]) -> anyhow::Result<Vec<Option<Objectives>>> {
        self.batches.push(points.to_vec());
        self.inner.evaluate(points)
    }
    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }
    fn parallel_points(&self) -> usize {
        self.width
    }
}

/// The batches a strategy asked of a `width`-wide evaluator over `f`, and the best it found.
fn run_wide(
    strategy: &Strategy,
    s: &Space,
    f: fn(&Point) -> f64,
    width: usize,
    seed: u64,
) -> (Vec<Vec<Point>>, f64) {
    let mut ev = Wide {
        inner: table(s, f),
        width,
        batches: Vec::new(),
    };
    let out = strategy
        .run(
            s,
            &mut ev,
            Objective::Time,
            None,
            &mut StdRng::seed_from_u64(seed),
        )
        .expect("runs");
    (ev.batches, out.best.expect("a best").1.time_s)
}

#[test]
fn first_improvement_fills_every_gpu_and_keeps_the_one_at_a_time_moves() {
    let s = grid();
    let climb = strategy("name = \"hill-climbing\"\nfirst_improvement = true\nrestarts = 0");
    for seed in 0..8 {
        // (points asked, best found) at one and at two points per batch.
        let mut runs: Vec<(HashSet<Point>, f64)> = Vec::new();
        for width in [1, 2] {
            let (batches, best) = run_wide(&climb, &s, rugged, width, seed);
            let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
            assert!(
                sizes.iter().all(|&n| n <= width),
                "seed {seed}, width {width}: a batch wider than the GPUs: {sizes:?}"
            );
            if width == 2 {
                assert!(
                    sizes.iter().filter(|&&n| n == 2).count() * 2 > sizes.len(),
                    "seed {seed}: most batches should keep both GPUs busy: {sizes:?}"
                );
            }
            runs.push((batches.into_iter().flatten().collect(), best));
        }
        // The climb makes the one-at-a-time climb's moves, so it measures every point that
        // one measured (plus the speculative ones) and ends no worse.
        assert!(
            runs[0].0.is_subset(&runs[1].0),
            "seed {seed}: the wide climb skipped {:?}",
            runs[0].0.difference(&runs[1].0).collect::<Vec<_>>()
        );
        assert!(
            runs[1].1 <= runs[0].1,
            "seed {seed}: {} > {}",
            runs[1].1,
            runs[0].1
        );
    }
}

#[test]
fn guided_climbing_batches_its_scan_and_still_reaches_the_optimum() {
    let s = grid();
    let guided = strategy(r#"name = "guided-climbing""#);
    for seed in 0..5 {
        let (batches, best) = run_wide(&guided, &s, convex, 3, seed);
        assert_eq!(best, 1.0, "seed {seed}");
        assert!(
            batches.iter().any(|b| b.len() == 3),
            "seed {seed}: {:?}",
            batches.iter().map(Vec::len).collect::<Vec<_>>()
        );
    }
}

/// Sizes a campaign sets are bounded before anything is allocated for them: a batch or a
/// population of 2^63 points was a capacity-overflow panic (or an abort) at the first step.
#[test]
fn batches_and_populations_are_bounded() {
    let refused = |s: Strategy, what: &str| {
        let e = s.check_for(Objective::Time).expect_err(what);
        assert!(format!("{e:#}").contains(what), "{e:#}");
    };
    for batch in [0, crate::strategy::MAX_BATCH + 1, usize::MAX] {
        refused(Strategy::Random { batch }, "batch must be in 1..=10000");
        refused(Strategy::Exhaustive { batch }, "batch must be in 1..=10000");
    }
    let genetic = |population: u64| {
        toml::from_str::<Strategy>(&format!("name = \"genetic\"\npopulation = {population}"))
            .unwrap()
    };
    refused(genetic(1), "population must be in 2..=10000");
    let parsed = |text: &str| toml::from_str::<Strategy>(text).unwrap();
    for (text, says) in [
        (
            "name = \"simulated-annealing\"\nstall_best = 0",
            "stall_best must be at least 1",
        ),
        (
            "name = \"simulated-annealing\"\nreanneal_best = 0",
            "reanneal_best must be at least 1",
        ),
        (
            "name = \"genetic\"\nstagnation = 0",
            "stagnation must be at least 1",
        ),
        (
            "name = \"basin-hopping\"\nrestart_after = 0",
            "restart_after must be at least 1",
        ),
        (
            "name = \"bayes\"\nmodel_points = 100000",
            "model_points must be in 1..=2000",
        ),
    ] {
        refused(parsed(text), says);
    }
    refused(
        genetic(1_000_000_000_000_000_000),
        "population must be in 2..=10000",
    );
    assert!(genetic(64).check_for(Objective::Time).is_ok());
    assert!(Strategy::Random { batch: 64 }
        .check_for(Objective::Time)
        .is_ok());
}

/// A first-improvement scan one point at a time stops at the first better neighbour, seen
/// or not: a batch that ran past a seen better neighbour measured an unseen point the scan
/// never needed (and moved the published strategy scores).
#[test]
fn a_scan_batch_ends_at_a_seen_better_neighbour() {
    let s = grid();
    let mut ev = table(&s, convex);
    let mut tracker = crate::tracker::Tracker::new(&mut ev, Objective::Time);
    let points: Vec<Point> = s.points().take(4).collect();
    // Points 0 and 2 are seen; 1 and 3 are not.
    tracker
        .costs(&[points[0].clone(), points[2].clone()])
        .unwrap();
    let cost_of_2 = convex(&points[2]);
    // Only point 2 improves: the batch holds 0, the unseen 1 and stops at 2.
    let improves = |c: f64| c == cost_of_2;
    assert_eq!(tracker.scan_batch_end(&points, 0, &improves), 2);
    assert_eq!(tracker.scan_batch_end(&points, 2, &improves), 3);
    // Nothing seen improves: the batch runs to the next unseen point.
    let never = |_: f64| false;
    assert_eq!(tracker.scan_batch_end(&points, 2, &never), 4);
    // The first point seen and improving ends the batch at once.
    let first = |c: f64| c == convex(&points[0]);
    assert_eq!(tracker.scan_batch_end(&points, 0, &first), 1);
}

/// Simulated annealing restarts from an unseen point when a walk freezes: without a budget it
/// goes on until every point was measured (one frozen walk used to end the search with most
/// of its budget unused: about 200 of 1,090 evaluations on a published space).
#[test]
fn annealing_restarts_until_the_space_is_measured() {
    let s = grid();
    let sa = strategy("name = \"simulated-annealing\"");
    let (batches, best) = run_wide(&sa, &s, rugged, 1, 3);
    let asked: HashSet<Point> = batches.into_iter().flatten().collect();
    assert_eq!(asked.len(), s.points().count());
    assert_eq!(best, optimum(&s, rugged));
}
