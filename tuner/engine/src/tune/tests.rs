//! The tuning loop's cache on a real store with CPU trials: a point asked twice in a batch,
//! and the cross-class step, reuse what is measured instead of measuring it again.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use results::{Point, Store, TrialStatus};

use super::evaluator::ClassEvaluator;
use super::*;
use crate::campaign::config::{BudgetConfig, RacingConfig, RunMode};
use crate::campaign::Metric;
use search::Evaluator;

fn repo(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// A campaign's state with three QAP instances, each its own class, measured on the CPU
/// with a fixed amount of work (so trials are quick and deterministic in their objective).
fn tuning(dir: &Path) -> (Tuning, BTreeMap<String, Vec<usize>>) {
    let store = Store::open(dir.join(STORE_FILE)).unwrap();
    let campaign = store.campaign("cache", "", &serde_json::json!({})).unwrap();
    let bks = solvers::bks::BestKnown::embedded();
    let mut instances = Vec::new();
    let mut classes: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (k, name) in ["chr12a", "nug12", "tai12a"].into_iter().enumerate() {
        let path = repo(&format!("data/qap/{name}.dat"));
        let instance = solvers::family::load(&path, None, None).unwrap();
        let record = results::InstanceRecord {
            name: name.into(),
            source: path.display().to_string(),
            family: "qap".into(),
            class: format!("c{k}"),
            features: serde_json::json!({}),
            best_known: bks.get(name).map(|e| e.value),
        };
        classes.insert(record.class.clone(), vec![k]);
        instances.push(CampaignInstance {
            record,
            path,
            instance,
        });
    }
    let instance_ids = instances
        .iter()
        .map(|i| store.instance(campaign.id, &i.record).unwrap())
        .collect();
    let mode = RunMode::FixedWork;
    let t = Tuning {
        store,
        campaign_id: campaign.id,
        name: "cache".into(),
        instances,
        instance_ids,
        space: Arc::new(Space::load(&repo("spaces/qap-cpu.toml")).unwrap()),
        backend: Backend::Cpu(CpuSettings {
            warmup_runs: 0,
            timed_runs: 1,
            iterations: Some(50),
            mode,
        }),
        budget: Budget::new(&BudgetConfig::default(), Arc::new(AtomicBool::new(false))),
        margin_percent: 100.0,
        max_attempts: 2,
        devices: vec![crate::runner::cpu::device_name()],
        clock: TrialClock::default(),
        mode,
        seeds: vec![1, 2],
        racing: RacingConfig::default(),
        progress: progress::Progress::new(progress::ProgressMode::Hidden, None),
        cpu_lock: None,
    };
    (t, classes)
}

fn tabu(starts: i64) -> Point {
    let mut p = Point::new();
    p.set("algorithm", "tabu");
    p.set("threads", 1i64);
    p.set("starts", starts);
    p
}

/// Evaluates `points` on `members` in a new run of `class` (`label` as its strategy), as a
/// search or a baseline would, and returns what the evaluator answered.
fn evaluate_in_run(
    t: &mut Tuning,
    class: &str,
    members: Vec<usize>,
    label: &str,
    points: &[Point],
) -> Vec<Option<search::Objectives>> {
    let run = t
        .store
        .begin_run(t.campaign_id, class, label, "time", &serde_json::json!({}))
        .unwrap();
    let mut ev = ClassEvaluator::new(
        t,
        class,
        members,
        run.id,
        evaluator::Recorded::default(),
        None,
        Some(Metric::Time),
    );
    ev.evaluate(points).unwrap()
}

/// Finished trials per (point, instance, seed, device): each must be measured at most once.
fn assert_nothing_measured_twice(t: &Tuning) {
    let mut seen = std::collections::HashMap::new();
    for row in t.store.trials(t.campaign_id).unwrap() {
        assert_ne!(row.status, TrialStatus::Started);
        let key = (row.point.key(), row.instance.clone(), row.seed, row.device);
        *seen.entry(key).or_insert(0) += 1;
    }
    for (key, n) in seen {
        assert_eq!(n, 1, "{key:?} measured {n} times");
    }
}

/// A resumed run that asks for other points, or the same in another order, records what is
/// new and nothing twice (it skipped its first N evaluations, N the rows the run held, so the
/// new points went unrecorded and export could not find the campaign's best).
#[test]
fn a_resumed_run_records_new_points_whatever_their_order() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut t, _) = tuning(tmp.path());
    let run = t
        .store
        .begin_run(t.campaign_id, "c0", "test", "time", &serde_json::json!({}))
        .unwrap();
    let evaluate = |t: &mut Tuning, points: &[Point]| {
        let recorded = evaluator::Recorded::of_run(&t.store, run.id).unwrap();
        let mut ev =
            ClassEvaluator::new(t, "c0", vec![0], run.id, recorded, None, Some(Metric::Time));
        ev.evaluate(points).unwrap();
    };
    evaluate(&mut t, &[tabu(1), tabu(2)]);
    // The resume: a new point first, then one the first run recorded.
    evaluate(&mut t, &[tabu(4), tabu(1)]);
    let rows = t.store.evaluations_of_run(run.id).unwrap();
    let starts: Vec<String> = rows.iter().map(|e| e.point.to_string()).collect();
    assert_eq!(rows.len(), 3, "{starts:?}");
    assert!(starts.iter().any(|p| p.contains("starts=4")), "{starts:?}");
    let seqs: Vec<u32> = rows.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [0, 1, 2]);
}

#[test]
fn a_point_asked_twice_in_one_batch_is_measured_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut t, _) = tuning(tmp.path());
    let out = evaluate_in_run(&mut t, "c0", vec![0], "test", &[tabu(1), tabu(2), tabu(1)]);
    assert!(out.iter().all(Option::is_some), "{out:?}");
    assert_eq!(out[0], out[2]);
    // Two points x one instance x two seeds.
    assert_eq!(t.budget.new_trials, 4);
    assert_nothing_measured_twice(&t);
}

#[test]
fn the_cross_class_step_reuses_the_stores_trials() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut t, classes) = tuning(tmp.path());
    // Each class measured its own point (as its search would have), and c0 also measured
    // c1's point: the cross-class step must take those trials from the store.
    let own = [tabu(1), tabu(2), tabu(2)];
    for (class, members) in &classes {
        let k = members[0];
        let mut points = vec![own[k].clone()];
        if class == "c0" {
            points.push(own[1].clone());
        }
        evaluate_in_run(&mut t, class, members.clone(), "search", &points);
    }
    let before = t.budget.new_trials;
    assert_eq!(before, 2 * 4);
    let bests: BTreeMap<String, Point> = classes
        .keys()
        .zip(own.iter().cloned())
        .map(|(c, p)| (c.clone(), p))
        .collect();
    cross_class(&mut t, &classes, &bests, &BTreeMap::new(), Metric::Time).unwrap();
    // c0: tabu(2) (c1's and c2's best, asked once) is in the store: nothing new.
    // c1: tabu(1) is new (2 seeds), tabu(2) is its own. c2: tabu(1) new, tabu(2) its own.
    assert_eq!(t.budget.new_trials - before, 2 + 2);
    assert_nothing_measured_twice(&t);
    let cross: Vec<_> = t
        .store
        .runs(t.campaign_id)
        .unwrap()
        .into_iter()
        .filter(|r| r.strategy == "cross-class")
        .collect();
    assert_eq!(cross.len(), 3);
    for run in &cross {
        assert!(run.ended_at.is_some(), "{run:?}");
        let evaluations = t.store.evaluations_of_run(run.id).unwrap();
        let new: u32 = evaluations.iter().map(|e| e.new_trials).sum();
        assert_eq!(new, if run.class == "c0" { 0 } else { 2 }, "{run:?}");
    }
    // Run again (a resume): every point comes from the store, nothing is measured and no
    // row is repeated.
    let again = t.budget.new_trials;
    let rows = |t: &Tuning| t.store.evaluations(t.campaign_id).unwrap().len();
    let rows_before = rows(&t);
    cross_class(&mut t, &classes, &bests, &BTreeMap::new(), Metric::Time).unwrap();
    assert_eq!(t.budget.new_trials, again);
    assert_eq!(rows(&t), rows_before);
    // A resume that changed c0's best measures it on the other classes (it kept the old
    // bests' run, ended, and never measured the new one).
    let mut changed = bests.clone();
    changed.insert("c0".into(), tabu(4));
    cross_class(&mut t, &classes, &changed, &BTreeMap::new(), Metric::Time).unwrap();
    let c1 = cross.iter().find(|r| r.class == "c1").unwrap();
    let points: Vec<String> = t
        .store
        .evaluations_of_run(c1.id)
        .unwrap()
        .iter()
        .map(|e| e.point.to_string())
        .collect();
    assert!(points.iter().any(|p| p.contains("starts=4")), "{points:?}");
}

#[test]
fn a_front_is_re_measured_on_fresh_seeds_in_a_verification_run_and_a_phase_sets_the_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut t, _) = tuning(tmp.path());
    let phase = phases::Phase {
        index: 1,
        budget_s: Some(0.01),
        seeds: vec![5, 6],
        base_seed: 5,
    };
    t.set_phase(&phase, RunMode::FixedWork);
    assert_eq!(t.mode, RunMode::Budget { budget_s: 0.01 });
    assert!(matches!(&t.backend, Backend::Cpu(s) if s.mode == t.mode));
    assert_eq!(t.seeds, [5, 6]);
    // As the search left it: placeholder values, not re-measured.
    let mut front: Vec<results::FrontPoint> = [tabu(1), tabu(2)]
        .into_iter()
        .map(|point| results::FrontPoint {
            point,
            gap_percent: Some(99.0),
            energy_j: None,
            power_w: None,
            time_s: 1e6,
            remeasured: false,
            peak_power_w: None,
            peak_energy_j: None,
        })
        .collect();
    front::remeasure(
        &mut t,
        "c2@0.01s",
        &[2],
        &mut front,
        vec![9, 10, 11],
        Metric::Gap,
        None,
    )
    .unwrap();
    assert_eq!(t.seeds, [5, 6], "the phase's seeds are restored");
    for f in &front {
        assert!(f.remeasured, "{f:?}");
        assert!(f.time_s < 1.0, "{f:?}");
        assert!(
            f.gap_percent.is_some_and(|g| (0.0..99.0).contains(&g)),
            "{f:?}"
        );
    }
    let runs = t.store.runs(t.campaign_id).unwrap();
    let run = runs
        .iter()
        .find(|r| r.strategy == front::RUN_LABEL)
        .expect("a front run");
    assert_eq!(run.class, "c2@0.01s");
    assert!(run.ended_at.is_some());
    // Every trial on the fresh seeds: two points x one instance x three seeds.
    let seeds: Vec<u64> = t
        .store
        .trials(t.campaign_id)
        .unwrap()
        .iter()
        .map(|r| r.seed)
        .collect();
    assert_eq!(seeds.len(), 6);
    assert!(seeds.iter().all(|s| [9, 10, 11].contains(s)), "{seeds:?}");
}

/// Where the campaign guards quality (fixed work), a front point that the re-measure on fresh
/// seeds finds worse than the baseline beyond the margin leaves the front (export listed it,
/// and a power cap in `solve --tuned` could run it); the baseline itself is measured beside
/// the front but does not join it.
#[test]
fn a_front_point_worse_than_the_baseline_on_fresh_seeds_leaves_the_front() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut t, _) = tuning(tmp.path());
    t.margin_percent = 0.0;
    let entry = |point| results::FrontPoint {
        point,
        gap_percent: Some(0.0),
        energy_j: None,
        power_w: None,
        time_s: 1.0,
        remeasured: false,
        peak_power_w: None,
        peak_energy_j: None,
    };
    let (weak, strong) = (tabu(1), tabu(16));
    let baseline = evaluator::Baseline {
        time_s: 1.0,
        gap_percent: 0.0,
        objectives: vec![None],
        measured: search::Objectives::default(),
        pairs: Vec::new(),
    };
    let mut front = vec![entry(weak.clone())];
    let seeds = vec![21, 22, 23, 24];
    let left = front::remeasure(
        &mut t,
        "c2",
        &[2],
        &mut front,
        seeds.clone(),
        Metric::Time,
        Some((&strong, &baseline)),
    )
    .unwrap();
    // 50 tabu iterations from one start against sixteen starts on tai12a.
    assert_eq!(left, std::slice::from_ref(&weak));
    assert!(front.is_empty(), "{front:?}");
    // The same front without a guard (a budget campaign) keeps its point, re-measured.
    t.mode = RunMode::Budget { budget_s: 0.01 };
    let mut front = vec![entry(weak.clone()), entry(strong.clone())];
    let left = front::remeasure(
        &mut t,
        "c2",
        &[2],
        &mut front,
        seeds,
        Metric::Gap,
        Some((&strong, &baseline)),
    )
    .unwrap();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(front.len(), 2);
    assert!(front.iter().all(|f| f.remeasured), "{front:?}");
}

#[test]
fn a_prefetch_lists_each_missing_trial_once_and_measures_nothing_on_one_device() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut t, _) = tuning(tmp.path());
    // tabu(1) measured on chr12a (both seeds), as a class's baseline would be.
    evaluate_in_run(&mut t, "c0", vec![0], "baseline", &[tabu(1)]);
    let work = vec![
        (tabu(1), vec![0, 1]),
        (tabu(1), vec![1]),
        (tabu(2), vec![0]),
    ];
    let jobs = t.missing_trials(&work).unwrap();
    let listed: Vec<(i64, usize, u64)> = jobs
        .iter()
        .map(|j| (j.point_id, j.instance, j.seed))
        .collect();
    let id = |p: &Point| t.store.point(t.campaign_id, p).unwrap();
    let (one, two) = (id(&tabu(1)), id(&tabu(2)));
    // tabu(1) on nug12 once although asked twice, nothing of chr12a's stored trials again,
    // tabu(2) on chr12a: one job per seed.
    assert_eq!(
        listed,
        vec![(one, 1, 1), (one, 1, 2), (two, 0, 1), (two, 0, 2)]
    );
    // On the CPU (one trial at a time) a prefetch measures nothing: the evaluations that
    // follow measure the same trials in their own order.
    let before = t.budget.new_trials;
    t.prefetch(&work, "test").unwrap();
    assert_eq!(t.budget.new_trials, before);
    assert_eq!(t.measuring_slots(), 1);
    assert_nothing_measured_twice(&t);
}

/// An incumbent far better than anything measurable (a gap of -100% on every pair), so that a
/// raced evaluation drops every candidate after its first stage.
fn unbeatable_baseline(pairs: usize) -> Baseline {
    let values = evaluator::PairValues {
        time_s: 1.0,
        power_w: None,
        energy_j: None,
        gap_percent: Some(-100.0),
    };
    Baseline {
        time_s: 1.0,
        gap_percent: -100.0,
        objectives: vec![None; 3],
        measured: search::Objectives {
            time_s: 1.0,
            power_w: None,
            energy_j: None,
            gap_percent: Some(-100.0),
        },
        pairs: vec![values; pairs],
    }
}

/// Races a candidate of a gap@budget search against [`unbeatable_baseline`] on the three
/// instances and three seeds (nine pairs, a first stage of six), as `how` evaluates it; returns
/// the candidates raced out and the trials measured.
fn race_against_the_unbeatable(how: &str) -> (u32, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let (mut t, _) = tuning(tmp.path());
    let phase = phases::Phase {
        index: 0,
        budget_s: Some(0.005),
        seeds: vec![1, 2, 3],
        base_seed: 1,
    };
    t.set_phase(&phase, RunMode::FixedWork);
    t.racing = RacingConfig {
        enabled: true,
        first_pairs: 4,
        z: 2.0,
    };
    let run = t
        .store
        .begin_run(t.campaign_id, "all", how, "gap", &serde_json::json!({}))
        .unwrap();
    let mut ev = ClassEvaluator::new(
        &mut t,
        "all",
        vec![0, 1, 2],
        run.id,
        evaluator::Recorded::default(),
        Some(unbeatable_baseline(9)),
        Some(Metric::Gap),
    );
    let point = [tabu(1)];
    match how {
        "search" => drop(ev.evaluate(&point).unwrap()),
        "pareto" => {
            ev.pareto = true;
            drop(ev.evaluate(&point).unwrap());
        }
        "interleaved" => drop(ev.evaluate_interleaved(&point).unwrap()),
        other => panic!("{other}"),
    }
    let raced = ev.raced;
    drop(ev);
    (raced, t.store.trials(t.campaign_id).unwrap().len())
}

/// Racing drops a clearly worse candidate of a single-objective search after its first stage;
/// a Pareto search (whose frugal points a power cap needs) and the interleaved measurements
/// (final check, cross-class step) are never raced, and measure every pair.
#[test]
fn only_single_objective_searches_are_raced() {
    assert_eq!(race_against_the_unbeatable("search"), (1, 6));
    assert_eq!(race_against_the_unbeatable("pareto"), (0, 9));
    assert_eq!(race_against_the_unbeatable("interleaved"), (0, 9));
}
