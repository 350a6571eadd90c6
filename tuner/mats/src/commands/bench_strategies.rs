//! `mats bench strategies SOURCE...`: how well strategies find the optimum of brute-forced
//! spaces. Each source (a Kernel Tuner cache file, a folder of them, or a campaign folder with
//! an exhaustive run) is replayed without a new measurement: every strategy runs once per seed
//! against the table, and its best-found curve is scored by the community's methodology
//! ([`search::benchmark`]). Prints one table per space and the aggregate; with
//! `--external`, another tool's curves on the same spaces are scored beside them. Spaces with
//! time and energy also get the Pareto search's hypervolume share per budget.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use results::{EvaluationStatus, Point};
use serde::{Deserialize, Serialize};

use crate::cli::BenchStrategiesArgs;
use search::benchmark::{
    best_so_far, pareto_study, score_curves, strategy_curves, ParetoRow, Scores, SpaceStats,
};
use search::kt_score::{longest_budget, KtScores, KtStats};
use search::{kt_cache, Metric, Objective, Objectives, SearchSpace, Strategy, TableEvaluator};

/// The strategies compared, as labels and the TOML that configures each in a campaign.
pub const ROSTER: &[(&str, &str)] = &[
    ("random", r#"name = "random""#),
    ("hill-climbing", r#"name = "hill-climbing""#),
    (
        "hill-climbing:first",
        "name = \"hill-climbing\"\nfirst_improvement = true",
    ),
    (
        "hill-climbing:adjacent",
        "name = \"hill-climbing\"\nneighbourhood = \"adjacent\"",
    ),
    ("simulated-annealing", r#"name = "simulated-annealing""#),
    ("bayes", r#"name = "bayes""#),
    ("genetic", r#"name = "genetic""#),
    ("basin-hopping", r#"name = "basin-hopping""#),
    ("guided-climbing", r#"name = "guided-climbing""#),
    (
        "guided-climbing:random-restarts",
        "name = \"guided-climbing\"\nrestart_candidates = 1",
    ),
];

struct Source {
    name: String,
    description: String,
    space: Box<dyn SearchSpace + Sync>,
    table: TableEvaluator,
}

#[derive(Debug, Serialize)]
struct StrategyScores {
    strategy: String,
    /// "mats" or the external tool's name.
    tool: String,
    /// The runs scored (an external tool's curves may cover fewer seeds than mats' runs).
    seeds: usize,
    scores: Scores,
    /// The same curves under Kernel Tuner's score definition ([`search::kt_score`]).
    kernel_tuner: KtScores,
}

#[derive(Debug, Serialize)]
struct SpaceStudy {
    space: String,
    description: String,
    points: usize,
    failed: usize,
    optimum: f64,
    strategies: Vec<StrategyScores>,
    pareto: Vec<ParetoRow>,
}

#[derive(Debug, Serialize)]
struct Study {
    fractions: Vec<f64>,
    first_seed: u64,
    seeds: u64,
    spaces: Vec<SpaceStudy>,
}

/// Curves written by scripts/kt-strategies.py: per space, per strategy, per seed the objective
/// (seconds; null: failed) of each distinct configuration in evaluation order.
#[derive(Debug, Deserialize)]
struct External {
    tool: String,
    strategies: BTreeMap<String, BTreeMap<String, SeedCurves>>,
}

/// Per seed, the objective of each configuration in evaluation order (None: it failed).
type SeedCurves = Vec<Vec<Option<f64>>>;

pub fn run(args: &BenchStrategiesArgs) -> Result<()> {
    super::check_output("--json", args.json.as_deref())?;
    if args.budgets.is_empty() || args.budgets.iter().any(|b| !(*b > 0.0 && *b <= 100.0)) {
        bail!("--budgets: percentages in (0, 100], got {:?}", args.budgets);
    }
    if let Some(b) = args
        .budgets
        .iter()
        .enumerate()
        .find_map(|(i, b)| args.budgets[..i].contains(b).then_some(b))
    {
        bail!("--budgets lists {b} twice; each budget is one column");
    }
    if args.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    let Some(end) = args.first_seed.checked_add(args.seeds) else {
        bail!(
            "--first-seed {} + --seeds {} is past the last seed",
            args.first_seed,
            args.seeds
        );
    };
    let seeds = args.first_seed..end;
    let fractions: Vec<f64> = args.budgets.iter().map(|b| b / 100.0).collect();
    let roster = roster(&args.strategies)?;
    let external = match &args.external {
        Some(path) => Some(
            serde_json::from_str::<External>(
                &std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?,
            )
            .with_context(|| {
                format!(
                    "{}: not a curves file of scripts/kt-strategies.py",
                    path.display()
                )
            })?,
        ),
        None => None,
    };
    let mut sources: Vec<Source> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for s in &args.sources {
        // One space named twice would count twice in the aggregate.
        let resolved = std::fs::canonicalize(s).unwrap_or_else(|_| s.clone());
        if seen.contains(&resolved) {
            bail!("{} is named twice", s.display());
        }
        seen.push(resolved);
        for source in open_sources(s, args)? {
            if sources.iter().any(|o| o.name == source.name) {
                bail!(
                    "space {} comes twice (again from {}); name each space once",
                    source.name,
                    s.display()
                );
            }
            sources.push(source);
        }
    }
    let campaigns = args
        .sources
        .iter()
        .filter(|s| s.join(engine::tune::STORE_FILE).is_file())
        .count();
    if campaigns == 0 && (args.class.is_some() || args.campaign.is_some()) {
        bail!(
            "--class and --campaign pick from a campaign folder's store; none of the sources \
             is one"
        );
    }
    if let Some(ext) = &external {
        for name in ext.strategies.keys() {
            if !sources.iter().any(|s| &s.name == name) {
                eprintln!(
                    "warning: --external: no source is the space {name:?} (sources: {}); its \
                     curves are not scored",
                    sources
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
    }
    let mut study = Study {
        fractions: fractions.clone(),
        first_seed: args.first_seed,
        seeds: args.seeds,
        spaces: Vec::new(),
    };
    for source in &sources {
        let space = source.space.as_ref();
        let stats = SpaceStats::new(space, &source.table, Objective::Time)
            .with_context(|| format!("space {}", source.name))?;
        let kt = KtStats::new(&stats);
        let len = longest_budget(&stats, &fractions);
        let mut rows = Vec::new();
        for (label, strategy) in &roster {
            let curves = strategy_curves(
                space,
                &source.table,
                strategy,
                Objective::Time,
                seeds.clone(),
                len,
            )
            .with_context(|| format!("strategy {label} on {}", source.name))?;
            rows.push(StrategyScores {
                strategy: label.to_string(),
                tool: "mats".into(),
                seeds: curves.len(),
                scores: score_curves(&stats, &curves, &fractions),
                kernel_tuner: kt.score_curves(&curves, &fractions),
            });
        }
        if let Some(ext) = &external {
            if let Some(by_strategy) = ext.strategies.get(&source.name) {
                for (name, runs) in by_strategy {
                    if runs.is_empty() {
                        continue;
                    }
                    check_external(args, &source.name, name, runs, stats.optimum)?;
                    let curves: Vec<Vec<f64>> = runs
                        .iter()
                        .map(|r| best_so_far(r.iter().copied(), len))
                        .collect();
                    rows.push(StrategyScores {
                        strategy: format!("{}:{name}", short_tool(&ext.tool)),
                        tool: ext.tool.clone(),
                        seeds: curves.len(),
                        scores: score_curves(&stats, &curves, &fractions),
                        kernel_tuner: kt.score_curves(&curves, &fractions),
                    });
                }
            }
        }
        let pareto = if has_energy(space, &source.table) {
            pareto_study(
                space,
                &source.table,
                &Strategy::Pareto { restarts: None },
                Objective::Pareto(Metric::Time, Metric::Energy),
                &fractions,
                seeds.clone(),
            )?
        } else {
            Vec::new()
        };
        let s = SpaceStudy {
            space: source.name.clone(),
            description: source.description.clone(),
            points: stats.len(),
            failed: stats.failed,
            optimum: stats.optimum,
            strategies: rows,
            pareto,
        };
        print_space(&s, &fractions, args.seeds);
        study.spaces.push(s);
    }
    if study.spaces.len() > 1 {
        print_aggregate(&study, &fractions);
    }
    if let Some(path) = &args.json {
        super::write_json(path, &study)?;
    }
    Ok(())
}

/// An external curve's values are run times in seconds of the same space: one below the
/// space's optimum (or not a positive number) cannot be, and is most often a unit mistake.
fn check_external(
    args: &BenchStrategiesArgs,
    space: &str,
    strategy: &str,
    runs: &SeedCurves,
    optimum: f64,
) -> Result<()> {
    let file = args
        .external
        .as_deref()
        .map_or_else(String::new, |p| p.display().to_string());
    for (seed, run) in runs.iter().enumerate() {
        for (k, v) in run.iter().enumerate() {
            let Some(v) = *v else { continue };
            if !(v.is_finite() && v > 0.0) || v < optimum * (1.0 - 1e-9) {
                bail!(
                    "--external {file}: space {space:?}, strategy {strategy:?}, run {} \
                     value {}: {v} s is {} the space's optimum {optimum} s (values are run \
                     times in seconds of the same space)",
                    seed + 1,
                    k + 1,
                    if v.is_finite() && v > 0.0 {
                        "below"
                    } else {
                        "not a time, let alone"
                    }
                );
            }
        }
    }
    Ok(())
}

fn short_tool(tool: &str) -> &str {
    if tool == "kernel_tuner" {
        "kt"
    } else {
        tool
    }
}

fn roster(only: &[String]) -> Result<Vec<(String, Strategy)>> {
    for o in only {
        if !ROSTER.iter().any(|(l, _)| l == o) {
            bail!(
                "--strategies: unknown {o:?}; known: {}",
                ROSTER
                    .iter()
                    .map(|(l, _)| *l)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    ROSTER
        .iter()
        .filter(|(l, _)| only.is_empty() || only.iter().any(|o| o == l))
        .map(|(l, toml)| Ok((l.to_string(), Strategy::from_toml_str(toml, l)?)))
        .collect()
}

fn has_energy(space: &dyn SearchSpace, table: &TableEvaluator) -> bool {
    let mut any = false;
    for p in space.points() {
        if let Some(o) = table.table().get(&p).copied().flatten() {
            if o.energy_j.is_none() {
                return false;
            }
            any = true;
        }
    }
    any
}

fn open_sources(path: &Path, args: &BenchStrategiesArgs) -> Result<Vec<Source>> {
    if path.is_dir() {
        if path.join(engine::tune::STORE_FILE).is_file() {
            return Ok(vec![campaign_source(path, args)?]);
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("cannot list {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && kt_cache::is_cache_file(p))
            .collect();
        files.sort();
        if files.is_empty() {
            bail!(
                "{} holds neither a campaign store nor Kernel Tuner cache files (*.json, *.json.gz)",
                path.display()
            );
        }
        return files.iter().map(|f| cache_source(f)).collect();
    }
    if !path.exists() {
        bail!("{} does not exist", path.display());
    }
    Ok(vec![cache_source(path)?])
}

fn cache_source(path: &Path) -> Result<Source> {
    let c = kt_cache::load(path)?;
    Ok(Source {
        // Some published caches leave the device unnamed (the MI250X one).
        description: if c.device.trim().is_empty() {
            format!("{} on an unnamed device", c.kernel)
        } else {
            format!("{} on {}", c.kernel, c.device)
        },
        name: c.name,
        space: Box::new(c.space),
        table: c.table,
    })
}

fn campaign_source(dir: &Path, args: &BenchStrategiesArgs) -> Result<Source> {
    let (store, campaign) = super::results::open_to_read(&crate::cli::CampaignDir {
        dir: dir.to_path_buf(),
        campaign: args.campaign.clone(),
    })?;
    let space = engine::tune::stored_space(&campaign)?;
    let runs = store.runs(campaign.id)?;
    let classes: Vec<&str> = runs
        .iter()
        .filter(|r| r.strategy == "exhaustive")
        .map(|r| r.class.as_str())
        .collect();
    let class = match (&args.class, classes.as_slice()) {
        (Some(c), _) if !classes.contains(&c.as_str()) => bail!(
            "--class {c}: campaign {:?} searched no such class exhaustively (searched \
             exhaustively: {})",
            campaign.name,
            if classes.is_empty() {
                "none".to_string()
            } else {
                classes.join(", ")
            }
        ),
        (Some(c), _) => c.clone(),
        (None, [one]) => one.to_string(),
        (None, []) => bail!(
            "campaign {:?} has no exhaustive run; measure a small space with strategy \"exhaustive\" first",
            campaign.name
        ),
        (None, many) => bail!("several classes were searched exhaustively ({}); pick one with --class", many.join(", ")),
    };
    // The exhaustive run alone: the baseline, the final re-measure and the holdouts measure
    // some of the same points on other seeds or instances, and would overwrite its values.
    let exhaustive: Vec<_> = runs
        .iter()
        .filter(|r| r.class == class && r.strategy == "exhaustive")
        .collect();
    if let Some(run) = exhaustive.iter().find(|r| !r.objective.contains("time")) {
        bail!(
            "class {class} of campaign {:?} was searched exhaustively for {}; `bench strategies` \
             scores strategies by run time (the paper's study), so it needs an exhaustive run \
             of a fixed-work campaign (objective \"time\")",
            campaign.name,
            run.objective
        );
    }
    let mut table: HashMap<Point, Option<Objectives>> = HashMap::new();
    for run in exhaustive {
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
    Ok(Source {
        name: format!("{}/{class}", campaign.name),
        description: format!("campaign {} class {class}", campaign.name),
        space: Box::new(space),
        table: TableEvaluator::new(table),
    })
}

fn print_space(s: &SpaceStudy, fractions: &[f64], seeds: u64) {
    println!(
        "\n{} ({}): {} points, {} failed, optimum {:.4} ms; score = (random - found) / (random - optimum), mean of {} seeds",
        s.space,
        s.description,
        s.points,
        s.failed,
        s.optimum * 1e3,
        seeds
    );
    header(fractions, " score (sd)");
    let mut rows: Vec<&StrategyScores> = s.strategies.iter().collect();
    rows.sort_by(|a, b| b.scores.aggregate.total_cmp(&a.scores.aggregate));
    for r in &rows {
        row(&r.strategy, &r.scores.at, r.scores.aggregate);
        match r.seeds {
            n if n as u64 == seeds => println!(" ({:.3})", r.scores.spread),
            1 => println!(" (one seed)"),
            n => println!(" ({:.3}, {n} seeds)", r.scores.spread),
        }
    }
    println!(
        "Kernel Tuner's score (autotuning_methodology: valid points only, median over the seeds)"
    );
    header(fractions, "");
    rows.sort_by(|a, b| {
        b.kernel_tuner
            .aggregate
            .total_cmp(&a.kernel_tuner.aggregate)
    });
    for r in rows {
        row(&r.strategy, &r.kernel_tuner.at, r.kernel_tuner.aggregate);
        println!();
    }
    if !s.pareto.is_empty() {
        println!("Pareto search (time, energy): hypervolume share of the exhaustive front");
        println!(
            "{:>8} {:>7} {:>8} {:>8} {:>8}",
            "budget", "points", "pareto", "worst", "random"
        );
        for r in &s.pareto {
            println!(
                "{:>7.0}% {:>7} {:>8.3} {:>8.3} {:>8.3}",
                r.fraction * 100.0,
                r.budget,
                r.share,
                r.worst,
                r.random
            );
        }
    }
}

/// Mean over spaces of each strategy's scores (strategies present on every space only), under
/// both score definitions.
fn print_aggregate(study: &Study, fractions: &[f64]) {
    let n = study.spaces.len();
    println!("\naggregate over {n} spaces (mean of the spaces' scores)");
    aggregate_table(study, fractions, |r| (&r.scores.at, r.scores.aggregate));
    println!("\naggregate over {n} spaces, Kernel Tuner's score");
    aggregate_table(study, fractions, |r| {
        (&r.kernel_tuner.at, r.kernel_tuner.aggregate)
    });
}

fn aggregate_table(
    study: &Study,
    fractions: &[f64],
    pick: impl Fn(&StrategyScores) -> (&Vec<f64>, f64),
) {
    let n = study.spaces.len();
    let mut by: BTreeMap<&str, Vec<(&Vec<f64>, f64)>> = BTreeMap::new();
    for s in &study.spaces {
        for r in &s.strategies {
            by.entry(&r.strategy).or_default().push(pick(r));
        }
    }
    header(fractions, " score");
    let mut rows: Vec<(&str, Vec<f64>, f64)> = by
        .into_iter()
        .filter(|(_, v)| v.len() == n)
        .map(|(name, v)| {
            let at = (0..fractions.len())
                .map(|k| v.iter().map(|s| s.0[k]).sum::<f64>() / n as f64)
                .collect();
            let agg = v.iter().map(|s| s.1).sum::<f64>() / n as f64;
            (name, at, agg)
        })
        .collect();
    rows.sort_by(|a, b| b.2.total_cmp(&a.2));
    for (name, at, agg) in rows {
        row(name, &at, agg);
        println!();
    }
}

fn header(fractions: &[f64], last: &str) {
    print!("{:<32}", "strategy");
    for f in fractions {
        // Whole percentages as the paper prints them; a fractional budget keeps its digits.
        let percent = f * 100.0;
        let label = if (percent - percent.round()).abs() < 1e-9 {
            format!("{percent:.0}%")
        } else {
            // Enough digits to tell small budgets apart (0.0001% and 0.0004%).
            let digits = (-percent.log10().floor()).max(0.0) as usize + 2;
            let text = format!("{percent:.digits$}");
            format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
        };
        print!(" {label:>6}");
    }
    println!(" {last:>8}");
}

/// One table row without its line end (the caller may add a spread).
fn row(name: &str, at: &[f64], aggregate: f64) {
    print!("{name:<32}");
    for v in at {
        print!(" {v:>6.3}");
    }
    print!(" {aggregate:>8.3}");
}
