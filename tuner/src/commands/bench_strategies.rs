//! `mats bench strategies DIR`: how well strategies find the optimum of a space that a
//! campaign measured exhaustively. The measured table is replayed (no new measurement): each
//! strategy runs once per seed against it, and its best within 5%, 10%, 15% of the points is
//! compared with the true optimum and with random search's expected best.

use std::collections::HashMap;

use anyhow::{bail, Context, Result};
use results::{EvaluationStatus, Point};
use serde::Serialize;

use crate::cli::BenchStrategiesArgs;
use crate::search::{
    replay_study, Objective, Objectives, ReplayRow, SearchSpace, Strategy, TableEvaluator,
};

#[derive(Debug, Serialize)]
struct StrategyRows {
    strategy: String,
    rows: Vec<ReplayRow>,
}

#[derive(Debug, Serialize)]
struct Study {
    campaign: String,
    class: String,
    points: usize,
    measured: usize,
    optimum_time_s: f64,
    optimum: Point,
    strategies: Vec<StrategyRows>,
}

pub fn run(args: &BenchStrategiesArgs) -> Result<()> {
    let (store, campaign) = super::results::open(&args.source)?;
    let space = crate::tune::stored_space(&campaign)?;

    let runs = store.runs(campaign.id)?;
    let classes: Vec<&str> = runs
        .iter()
        .filter(|r| r.strategy == "exhaustive")
        .map(|r| r.class.as_str())
        .collect();
    let class = match (&args.class, classes.as_slice()) {
        (Some(c), _) => c.clone(),
        (None, [one]) => one.to_string(),
        (None, []) => bail!(
            "campaign {:?} has no exhaustive run; measure a small space with strategy \"exhaustive\" first",
            campaign.name
        ),
        (None, many) => bail!("several classes were searched exhaustively ({}); pick one with --class", many.join(", ")),
    };
    let mut table: HashMap<Point, Option<Objectives>> = HashMap::new();
    for run in runs.iter().filter(|r| r.class == class) {
        for e in store.evaluations_of_run(run.id)? {
            let value = match (e.status, e.time_s) {
                (EvaluationStatus::Ok, Some(t)) => Some(Objectives {
                    gap_percent: e.gap_percent,
                    time_s: t,
                    power_w: e.power_w,
                    energy_j: e.energy_j,
                }),
                _ => None,
            };
            table.insert(e.point, value);
        }
    }
    let points = space.points().count();
    let missing = space.points().filter(|p| !table.contains_key(p)).count();
    if missing > 0 {
        bail!(
            "class {class}: {missing} of the space's {points} points were never measured; the \
             study needs the whole space (let the exhaustive run finish: mats tune ... --resume)"
        );
    }
    let (optimum, optimum_time) = table
        .iter()
        .filter_map(|(p, o)| o.map(|o| (p.clone(), o.time_s)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .context("no point of the space succeeded")?;
    let evaluator = TableEvaluator::new(table.clone());
    let strategies: Vec<(&str, Strategy)> = vec![
        ("hill-climbing", toml::from_str("name = \"hill-climbing\"")?),
        (
            "hill-climbing (first improvement)",
            toml::from_str("name = \"hill-climbing\"\nfirst_improvement = true")?,
        ),
        (
            "simulated-annealing",
            toml::from_str("name = \"simulated-annealing\"")?,
        ),
        ("random", toml::from_str("name = \"random\"")?),
    ];
    let fractions = [0.05, 0.10, 0.15];
    let mut study = Study {
        campaign: campaign.name.clone(),
        class: class.clone(),
        points,
        measured: table.values().filter(|v| v.is_some()).count(),
        optimum_time_s: optimum_time,
        optimum,
        strategies: Vec::new(),
    };
    for (label, strategy) in strategies {
        let rows = replay_study(
            &space,
            &evaluator,
            &strategy,
            Objective::Time,
            &fractions,
            0..args.seeds,
        )?;
        study.strategies.push(StrategyRows {
            strategy: label.to_string(),
            rows,
        });
    }

    println!(
        "campaign {} class {}: {} points ({} succeeded), optimum {:.4} ms at {}",
        study.campaign,
        study.class,
        study.points,
        study.measured,
        study.optimum_time_s * 1e3,
        study.optimum
    );
    println!("best found as a share of the optimum (optimum time / found time), mean of {} seeds; score = (strategy - random) / (1 - random)", args.seeds);
    println!(
        "{:<36} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "strategy", "budget", "share", "worst", "random", "score"
    );
    for s in &study.strategies {
        for r in &s.rows {
            println!(
                "{:<36} {:>4} {:>3.0}% {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
                s.strategy,
                r.budget,
                r.fraction * 100.0,
                r.share,
                r.worst_share,
                r.random_share,
                r.score
            );
        }
    }
    if let Some(path) = &args.json {
        super::write_json(path, &study)?;
    }
    Ok(())
}
