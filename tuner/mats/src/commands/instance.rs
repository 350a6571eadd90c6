//! `mats instance info` and `mats instance generate` (`reference` and `score` have their own
//! modules).

use anyhow::Result;
use serde::Serialize;
use solvers::bks::BestKnownEntry;
use solvers::family::{self, FeaturesView};
use solvers::{hwsw, pfsp};

use crate::cli::{GenerateCommand, InfoArgs};

#[derive(Serialize)]
struct Info<'a> {
    file: String,
    family: &'a str,
    instance: &'a str,
    size: String,
    class: String,
    features: FeaturesView,
    best_known: Option<BestKnownEntry>,
    /// QAP only: the content fingerprint a best-known table's `fingerprint` column holds
    /// (16 hex digits), so a user's own table can tie its value to this very file.
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<String>,
}

pub fn info(args: &InfoArgs) -> Result<()> {
    let src = &args.source;
    let bks = super::best_known(&src.bks)?;
    let instance = family::load(&src.file, src.family, src.index)?;
    let info = Info {
        file: src.file.display().to_string(),
        family: instance.family().name(),
        instance: instance.name(),
        size: instance.size(),
        class: instance.class(),
        features: instance.features(),
        best_known: super::best_known_of(&bks, &src.bks, &instance),
        fingerprint: solvers::bks::fingerprint(&instance).map(|f| format!("{f:016x}")),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(());
    }
    println!("instance   {} ({})", info.instance, info.file);
    println!("family     {}", info.family);
    println!("size       {}", info.size);
    println!("class      {}", info.class);
    match &info.features {
        FeaturesView::Qap(f) => {
            println!(
                "features   combined: density {:.3}, symmetry {:.3}, dominance {:.1}",
                f.density, f.symmetry, f.dominance
            );
            for (name, m) in [("A", &f.a), ("B", &f.b)] {
                println!(
                    "           matrix {name}: density {:.3}, symmetry {:.3}, dominance {:.1}, {} diagonal",
                    m.density,
                    m.symmetry,
                    m.dominance,
                    if m.zero_diagonal { "zero" } else { "nonzero" }
                );
            }
        }
        FeaturesView::Pfsp(f) => {
            println!(
                "features   jobs x machines = {}, total processing time {}",
                f.cells, f.total_time
            );
        }
        FeaturesView::Tsp(f) => {
            println!(
                "features   {} cities, {}, nearest-neighbour distance mean {:.1}, cv {:.3}",
                f.n,
                f.edge_weight_type.name(),
                f.nn_mean,
                f.nn_cv
            );
        }
        FeaturesView::Hwsw(f) => {
            println!(
                "features   {} nodes, {} edges (size {}), R = {} ({:.3} of sum s = {}), CCR {:.3}",
                f.nodes, f.edges, f.size, f.r, f.r_ratio, f.total_software, f.ccr
            );
        }
    }
    match info.best_known {
        Some(e) => println!("best known {}{}", e.value, optimal_note(e)),
        None => println!("best known unknown (add a table with --bks FILE)"),
    }
    if let Some(f) = &info.fingerprint {
        println!("fingerprint {f} (a --bks table's `fingerprint` column)");
    }
    Ok(())
}

/// A value below one its table calls optimal is a wrong table (or a wrong objective): said
/// on stderr, since a negative gap against a proven optimum must not pass silently.
pub(super) fn warn_below_optimum(instance: &str, objective: i64, entry: Option<BestKnownEntry>) {
    if let Some(e) = entry.filter(|e| e.optimal == Some(true) && objective < e.value) {
        eprintln!(
            "warning: {instance}: objective {objective} is below {}, which the best-known \
             table calls optimal; that table's value (or its `optimal` column) is wrong for \
             this instance",
            e.value
        );
    }
}

pub(super) fn optimal_note(entry: BestKnownEntry) -> &'static str {
    match entry.optimal {
        Some(true) => " (optimal)",
        Some(false) => " (not proven optimal)",
        None => "",
    }
}

pub fn generate(command: &GenerateCommand) -> Result<()> {
    match command {
        GenerateCommand::Pfsp(args) => {
            pfsp::generator::check_request(args.jobs, args.machines, args.seed, |k| {
                format!("--{k}")
            })
            .map_err(anyhow::Error::msg)?;
            let instance = pfsp::generate(args.jobs, args.machines, args.seed);
            let text = pfsp::to_taillard_text(&instance);
            super::write_output(args.output.as_deref(), &text)
        }
        GenerateCommand::Hwsw(args) => {
            let spec =
                hwsw::GeneratorSpec::new(args.nodes, args.edges, args.ccr, args.r_level, args.seed);
            let instance = hwsw::generate(&spec).map_err(anyhow::Error::msg)?;
            let text = instance.to_text();
            super::write_output(args.output.as_deref(), &text)
        }
        GenerateCommand::Qap(args) => {
            let instance = solvers::qap::generate(args.n, args.seed).map_err(anyhow::Error::msg)?;
            super::write_output(
                args.output.as_deref(),
                &solvers::qap::to_dat_text(&instance),
            )
        }
        GenerateCommand::Tsp(args) => {
            let instance =
                solvers::tsp::generate::uniform(args.n, args.seed).map_err(anyhow::Error::msg)?;
            let comment = format!(
                "mats instance generate tsp --n {} --seed {} (uniform, 10^6 square)",
                args.n, args.seed
            );
            let text = solvers::tsp::generate::to_tsplib_text(&instance, &comment);
            super::write_output(args.output.as_deref(), &text)
        }
    }
}
