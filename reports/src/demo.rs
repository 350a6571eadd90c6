//! A small synthetic campaign for tests, examples and screenshots before a real store
//! exists. The numbers come from a made-up model of a QAP 2-opt kernel, not from a GPU.

use results::{
    CampaignRow, EvaluationRow, EvaluationStatus, ExportRow, InstanceRecord, Measurement, Point,
    RunRow, TrialRow, TrialStatus, Value,
};
use serde_json::json;

use crate::ReportInput;

const CLASSES: [&str; 3] = [
    "density-low/symmetry-high",
    "density-high/symmetry-low",
    "density-normal/symmetry-normal",
];
const VARIANTS: [&str; 3] = ["2opt", "2opt-shared", "tabu"];
const SOLUTIONS: [i64; 4] = [1024, 2048, 4096, 8192];
const THREADS: [i64; 4] = [128, 256, 512, 1024];
const REGS: [i64; 4] = [0, 32, 64, 128];

/// Which synthetic campaign to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// A GPU campaign with power and energy, every strategy, exports.
    Gpu,
    /// A CPU campaign: no power or energy, no device in the settings.
    Cpu,
}

fn baseline() -> Point {
    point("2opt", 2048, 1024, 32, 2, "on")
}

fn point(variant: &str, solutions: i64, threads: i64, regs: i64, opt: i64, fmad: &str) -> Point {
    [
        ("variant", Value::from(variant)),
        ("solutions", Value::Int(solutions)),
        ("threads", Value::Int(threads)),
        ("maxrregcount", Value::Int(regs)),
        ("opt_level", Value::Int(opt)),
        ("fmad", Value::from(fmad)),
    ]
    .into_iter()
    .collect()
}

/// A deterministic pseudo-random stream (64-bit LCG); enough for test data.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }

    fn point(&mut self) -> Point {
        point(
            VARIANTS[self.below(3)],
            SOLUTIONS[self.below(4)],
            THREADS[self.below(4)],
            REGS[self.below(4)],
            self.below(4) as i64,
            ["on", "off"][self.below(2)],
        )
    }
}

fn int(p: &Point, k: &str) -> i64 {
    p.get(k).and_then(Value::as_int).unwrap_or(0)
}

fn text<'p>(p: &'p Point, k: &str) -> &'p str {
    p.get(k).and_then(Value::as_text).unwrap_or("")
}

/// Small deterministic jitter in [-0.5, 0.5) from the point's key.
fn jitter(p: &Point, class: usize) -> f64 {
    let mut h: u64 = 1469598103934665603 ^ class as u64;
    for b in p.key().bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(1099511628211);
    }
    (h % 1000) as f64 / 1000.0 - 0.5
}

/// The model: (status, time s, power W).
fn model(p: &Point, class: usize) -> (EvaluationStatus, Option<f64>, Option<f64>) {
    let (variant, threads, regs) = (
        text(p, "variant"),
        int(p, "threads"),
        int(p, "maxrregcount"),
    );
    if threads == 1024 && regs == 128 {
        // Too many registers per block: the launch fails.
        return (EvaluationStatus::Failed, None, None);
    }
    let base = [0.012, 0.030, 0.020][class % 3];
    let v = match (variant, class) {
        ("2opt-shared", 0) => 0.7,
        ("2opt-shared", _) => 0.9,
        ("tabu", 1) => 0.75,
        ("tabu", _) => 1.3,
        _ => 1.0,
    };
    let t = match threads {
        128 => 0.92,
        256 => 0.85,
        512 => 0.95,
        _ => 1.0,
    };
    let s = (int(p, "solutions") as f64 / 2048.0).powf(0.3);
    let o = [1.6, 1.15, 1.0, 0.97][int(p, "opt_level").clamp(0, 3) as usize];
    let r = match regs {
        32 => 1.05,
        64 => 0.95,
        128 => 0.98,
        _ => 1.0,
    };
    let f = if text(p, "fmad") == "on" { 0.97 } else { 1.0 };
    let j = jitter(p, class);
    let time = base * v * t * s * o * r * f * (1.0 + 0.06 * j);
    let power = 170.0 + 70.0 * threads as f64 / 1024.0 + 12.0 * int(p, "opt_level") as f64
        - if regs == 32 { 25.0 } else { 0.0 }
        + if variant == "tabu" { 20.0 } else { 0.0 }
        + 15.0 * j;
    let status = if variant == "tabu" && int(p, "solutions") == 1024 && class == 2 {
        // Too few starts for tabu on this class: worse solutions than the guard allows.
        EvaluationStatus::Rejected
    } else {
        EvaluationStatus::Ok
    };
    (status, Some(time), Some(power))
}

struct Builder {
    flavour: Flavour,
    runs: Vec<RunRow>,
    evaluations: Vec<EvaluationRow>,
    trials: Vec<TrialRow>,
    points: Vec<Point>,
}

impl Builder {
    fn point_id(&mut self, p: &Point) -> i64 {
        match self.points.iter().position(|q| q == p) {
            Some(i) => i as i64 + 1,
            None => {
                self.points.push(p.clone());
                self.points.len() as i64
            }
        }
    }

    fn run(&mut self, class: usize, strategy: &str, objective: &str, points: &[Point]) {
        let id = self.runs.len() as i64 + 1;
        self.runs.push(RunRow {
            id,
            class: CLASSES[class].to_string(),
            strategy: strategy.to_string(),
            objective: objective.to_string(),
            options: json!({}),
            started_at: "2025-01-01T00:00:00Z".into(),
            ended_at: Some("2025-01-01T00:10:00Z".into()),
        });
        for (seq, p) in points.iter().enumerate() {
            let (status, time, power) = model(p, class);
            let power = power.filter(|_| self.flavour == Flavour::Gpu);
            let point_id = self.point_id(p);
            self.evaluations.push(EvaluationRow {
                run_id: id,
                seq: seq as u32,
                point_id,
                point: p.clone(),
                status,
                time_s: time,
                power_w: power,
                energy_j: time.zip(power).map(|(t, w)| t * w),
                gap_percent: time.map(|_| 0.5 + jitter(p, class + 7).abs()),
                new_trials: 2,
            });
            self.trials.push(TrialRow {
                id: self.trials.len() as i64 + 1,
                point_id,
                point: p.clone(),
                instance: format!("c{class}-a"),
                class: CLASSES[class].to_string(),
                device: match self.flavour {
                    Flavour::Gpu => "NVIDIA H100 80GB HBM3 (GPU-0000)".into(),
                    Flavour::Cpu => "cpu".into(),
                },
                status: if status == EvaluationStatus::Failed {
                    TrialStatus::Failed
                } else {
                    TrialStatus::Ok
                },
                attempt: 1,
                seed: 1,
                started_at: "2025-01-01T00:00:00Z".into(),
                ended_at: Some("2025-01-01T00:00:01Z".into()),
                measurement: Measurement {
                    time_s: time,
                    power_w: power,
                    ..Measurement::default()
                },
                log: String::new(),
            });
        }
    }

    /// A verification run (`final` or `holdout`) comparing `roles` as the tuner records it:
    /// the evaluations and, in the run's options, the comparison with spreads.
    fn verify(&mut self, class: usize, strategy: &str, roles: &[(&str, Point)]) {
        let mut distinct: Vec<Point> = Vec::new();
        for (_, p) in roles {
            if !distinct.contains(p) {
                distinct.push(p.clone());
            }
        }
        self.run(class, strategy, "time", &distinct);
        let shift = if strategy == "holdout" { 1.1 } else { 1.0 };
        let mut values = std::collections::BTreeMap::new();
        let mut points = std::collections::BTreeMap::new();
        for (role, p) in roles {
            let time = model(p, class).1.map(|t| t * shift);
            values.insert(
                role.to_string(),
                time.map(|mean| results::MeanSd {
                    mean,
                    sd: 0.03 * mean,
                    n: 10,
                }),
            );
            points.insert(role.to_string(), p.clone());
        }
        let comparison = results::Comparison {
            instances: vec![format!("c{class}-a")],
            seeds: (1_000_001..1_000_011).collect(),
            values,
            points,
            winner: None,
            rejected: Vec::new(),
            failed: Vec::new(),
        };
        if let Some(run) = self.runs.last_mut() {
            run.options = json!({ "comparison": comparison, "metric": "time" });
        }
    }

    /// The ok point of `class` with the lowest time so far.
    fn best(&self, class: usize) -> Option<Point> {
        let ids: Vec<i64> = self
            .runs
            .iter()
            .filter(|r| r.class == CLASSES[class] && r.strategy != "cross-class")
            .map(|r| r.id)
            .collect();
        self.evaluations
            .iter()
            .filter(|e| ids.contains(&e.run_id) && e.status == EvaluationStatus::Ok)
            .filter_map(|e| Some((e.time_s?, &e.point)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, p)| p.clone())
    }
}

/// The synthetic campaign: three classes, a baseline run, random and hill-climbing search,
/// the three staged searches, a Pareto run, a power run, cross-class evaluations, the final
/// re-measure of every class and a holdout of one, and one export per class (GPU flavour
/// only).
pub fn synthetic_input(flavour: Flavour) -> ReportInput {
    let mut b = Builder {
        flavour,
        runs: Vec::new(),
        evaluations: Vec::new(),
        trials: Vec::new(),
        points: Vec::new(),
    };
    let mut rng = Lcg(42);
    let base = baseline();
    for class in 0..CLASSES.len() {
        b.run(class, "baseline", "time", std::slice::from_ref(&base));
        let random: Vec<Point> = (0..24).map(|_| rng.point()).collect();
        b.run(class, "random", "time", &random);
        // Hill climbing: one-parameter moves from the baseline, kept when faster.
        let mut cur = base.clone();
        let mut visited = Vec::new();
        for step in 0..18 {
            let cand = match step % 4 {
                0 => cur.with("threads", Value::Int(THREADS[rng.below(4)])),
                1 => cur.with("opt_level", Value::Int(rng.below(4) as i64)),
                2 => cur.with("variant", Value::from(VARIANTS[rng.below(3)])),
                _ => cur.with("maxrregcount", Value::Int(REGS[rng.below(4)])),
            };
            let better = matches!(
                (model(&cand, class), model(&cur, class)),
                ((EvaluationStatus::Ok, Some(a), _), (_, Some(c), _)) if a < c
            );
            visited.push(cand.clone());
            if better {
                cur = cand;
            }
        }
        b.run(class, "hill-climbing", "time", &visited);
        // Staged, compiler flags first with the baseline's launch configuration: this is
        // the compiler sub-space of Fig. 2.
        let mut flags_first = Vec::new();
        for opt in 0..4 {
            for regs in [0, 32, 64] {
                flags_first.push(point(
                    "2opt",
                    2048,
                    1024,
                    regs,
                    opt,
                    ["on", "off"][opt as usize % 2],
                ));
            }
        }
        for &t in &THREADS {
            flags_first.push(point("2opt", 2048, t, 64, 3, "off"));
        }
        b.run(class, "staged:opt-then-thread", "time", &flags_first);
        let mut threads_first = Vec::new();
        for &s in &SOLUTIONS {
            for &t in &THREADS[..3] {
                threads_first.push(point("2opt", s, t, 32, 2, "on"));
            }
        }
        for opt in 0..4 {
            threads_first.push(point("2opt", 1024, 256, 64, opt, "on"));
        }
        b.run(class, "staged:thread-then-opt", "time", &threads_first);
        let combined: Vec<Point> = (0..16).map(|_| rng.point()).collect();
        b.run(class, "staged:combined", "time", &combined);
        let pareto: Vec<Point> = (0..20).map(|_| rng.point()).collect();
        b.run(class, "pareto", "pareto:time,energy", &pareto);
        // The front re-measured on fresh seeds after the search (a verification run): a
        // little slower than the search's own seeds said.
        b.run(class, "front", "pareto:time,energy", &pareto[..5]);
        let front_run = b.runs.len() as i64;
        for e in b.evaluations.iter_mut().filter(|e| e.run_id == front_run) {
            e.time_s = e.time_s.map(|t| t * 1.05);
            e.energy_j = e.time_s.zip(e.power_w).map(|(t, w)| t * w);
        }
        let power: Vec<Point> = (0..12)
            .map(|i| {
                point(
                    "2opt",
                    2048,
                    THREADS[i % 4],
                    [32, 64][i % 2],
                    (i % 4) as i64,
                    "on",
                )
            })
            .collect();
        b.run(class, "annealing", "power", &power);
    }
    let bests: Vec<Point> = (0..CLASSES.len()).filter_map(|c| b.best(c)).collect();
    for class in 0..CLASSES.len() {
        b.run(class, "cross-class", "time", &bests);
    }
    // The tuner's verification: each class's winner against the baseline on fresh seeds,
    // and (class 0) on a held-out instance.
    for class in 0..CLASSES.len() {
        if let Some(best) = b.best(class) {
            let roles = [("tuned", best.clone()), ("baseline", base.clone())];
            b.verify(class, "final", &roles);
            if class == 0 {
                b.verify(class, "holdout", &roles);
            }
        }
    }
    let exports = match flavour {
        Flavour::Gpu => (0..CLASSES.len())
            .filter_map(|c| {
                let p = b.best(c)?;
                Some(ExportRow {
                    class: CLASSES[c].to_string(),
                    prefer: "time".into(),
                    point_id: b.point_id(&p),
                    point: p,
                    bundle: format!("bundle-{}", c + 1),
                })
            })
            .collect(),
        Flavour::Cpu => Vec::new(),
    };
    let mut settings = json!({
        "family": "qap",
        "backend": "gpu",
        "device": "NVIDIA H100 80GB HBM3, sm_90, driver 580.82",
        "objectives": "pareto:time,energy",
        "production_runs": 500,
        "baseline": {"variant": "2opt", "solutions": 2048, "threads": 1024,
                     "maxrregcount": 32, "opt_level": 2, "fmad": "on"},
        "parameters": [
            {"name": "opt_level", "kind": "flag"},
            {"name": "maxrregcount", "kind": "flag"},
            {"name": "fmad", "kind": "flag"},
            {"name": "solutions", "kind": "launch"},
            {"name": "threads", "kind": "launch"},
            {"name": "variant", "kind": "variant"}
        ],
        "quality_margin_percent": 1.0,
        "measurement": {"repeats": 5, "energy_window_s": 1.0},
        "seed": 42
    });
    if flavour == Flavour::Cpu {
        if let Some(obj) = settings.as_object_mut() {
            obj.insert("backend".into(), json!("cpu"));
            obj.insert("objectives".into(), json!("time"));
            // A CPU campaign written before `device` existed: the report must say so.
            obj.remove("device");
        }
    }
    let instances = (0..CLASSES.len())
        .flat_map(|c| {
            ["a", "b"].into_iter().map(move |s| InstanceRecord {
                name: format!("c{c}-{s}"),
                source: format!("data/qap/c{c}-{s}.dat"),
                family: "qap".into(),
                class: CLASSES[c].to_string(),
                features: json!({}),
                best_known: Some(1000),
            })
        })
        .collect();
    ReportInput {
        campaign: CampaignRow {
            id: 1,
            name: match flavour {
                Flavour::Gpu => "synthetic-gpu".into(),
                Flavour::Cpu => "synthetic-cpu".into(),
            },
            config_toml: String::new(),
            settings,
            created_at: "2025-01-01T00:00:00Z".into(),
        },
        instances,
        runs: b.runs,
        evaluations: b.evaluations,
        trials: b.trials,
        exports,
        unfinished: None,
    }
}
