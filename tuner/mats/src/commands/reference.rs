//! `mats instance reference`: best-known values for generated HW/SW graphs, which have none
//! published (`data/hwsw/synthetic-bks.csv` is made by it: `scripts/hwsw-references.sh`).
//!
//! Three sources per graph, the lowest cost kept: a new CPU search
//! (`solvers::hwsw::reference`), the graph's row of an earlier table, and answers of `mats
//! solve --json`. The answers are there because the GPU's gpts-multi finds partitions the CPU
//! search does not, and a reference that a solver beats turns gaps negative, which reads as a
//! bug to anyone comparing configurations by them. Every answer is re-scored from its
//! solution vector here; one whose stated objective differs from the re-score is refused
//! (that would be a solver's bug, not a better reference).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use solvers::family;
use solvers::hwsw;

use crate::cli::ReferenceArgs;

/// One row of a reference table.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    value: i64,
    /// `no` for every value this command finds (none is a proof); an earlier table's own
    /// word is kept with its value.
    optimal: String,
    method: String,
    /// What ties the row to its instance, as the earlier table wrote it (a table may hold
    /// other families' rows, which are written back unchanged); a graph's own row has its
    /// family and node count.
    identity: Identity,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Identity {
    family: String,
    n: Option<usize>,
    m: Option<usize>,
    fingerprint: Option<u64>,
}

impl Row {
    fn found(value: i64, method: String, graph: &hwsw::Instance) -> Row {
        Row {
            value,
            optimal: "no".into(),
            method,
            identity: Identity::of(graph),
        }
    }
}

impl Identity {
    fn of(graph: &hwsw::Instance) -> Identity {
        Identity {
            family: "hwsw".into(),
            n: Some(graph.n()),
            ..Identity::default()
        }
    }
}

/// Rows by graph name, in the table's (sorted) order.
type Table = BTreeMap<String, Row>;

pub fn reference(args: &ReferenceArgs) -> Result<()> {
    use rayon::prelude::*;

    if args.seeds > 1000 {
        bail!("--seeds must be in 0..=1000, found {}", args.seeds);
    }
    if args.seeds > 0 && (args.iterations == 0 || args.iterations > 1_000_000_000) {
        bail!(
            "--iterations must be in 1..=10^9, found {}",
            args.iterations
        );
    }
    if args.seeds == 0 && args.previous.is_none() && args.answers.is_empty() {
        bail!(
            "--seeds 0 runs no search: give --previous TABLE or --answers PATH to take values from"
        );
    }
    let previous = match &args.previous {
        Some(path) => read_table(path)?,
        None => Table::new(),
    };
    let graphs = load_graphs(args)?;
    if graphs.is_empty() && args.previous.is_none() {
        bail!("give HW/SW instance files or --campaign");
    }
    if graphs.is_empty() && !args.answers.is_empty() {
        bail!(
            "--answers needs the graphs they answer (instance files or --campaign), to re-score \
             each solution"
        );
    }

    // Checked before the search, so a bad answer costs no minutes of searching.
    let answers = read_answers(&answer_files(&args.answers)?, &graphs)?;

    let started = std::time::Instant::now();
    let params = hwsw::reference::ReferenceParams {
        iterations: args.iterations,
        ..Default::default()
    };
    let searched: Vec<(String, Row)> = if args.seeds == 0 {
        Vec::new()
    } else {
        let method = format!(
            "best of {} x {} iterations (mats instance reference)",
            args.seeds, args.iterations
        );
        // The search takes minutes for a campaign's graphs (432 s for 36 on 2 cores).
        let bar = graphs_bar(graphs.len());
        let rows = graphs
            .par_iter()
            .map(|g| {
                let value = hwsw::reference::reference(g, &params, args.seeds).0;
                bar.inc(1);
                (g.name.clone(), Row::found(value, method.clone(), g))
            })
            .collect();
        bar.finish_and_clear();
        rows
    };
    let table = lowest(previous.clone(), searched.into_iter().chain(answers))?;

    eprint!("{}", changes(&previous, &table));
    super::write_output(args.output.as_deref(), &to_csv(&table)?)?;
    if let Some(out) = &args.output {
        eprintln!(
            "{} reference values in {:.1} s -> {}",
            table.len(),
            started.elapsed().as_secs_f64(),
            out.display()
        );
    }
    Ok(())
}

/// A count of searched graphs on a terminal's stderr (hidden elsewhere, so logs stay clean).
fn graphs_bar(graphs: usize) -> indicatif::ProgressBar {
    use std::io::IsTerminal as _;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(graphs as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("searching {bar:30} {pos}/{len} graphs {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// The graphs named on the command line and those the campaign generates or lists.
fn load_graphs(args: &ReferenceArgs) -> Result<Vec<hwsw::Instance>> {
    let mut paths = args.files.clone();
    // A campaign's generated graphs are written to a scratch folder, exactly as `mats tune`
    // writes them into its output folder.
    let scratch = std::env::temp_dir().join(format!("mats-reference-{}", std::process::id()));
    if let Some(c) = &args.campaign {
        let file = engine::campaign::CampaignFile::read(c)?;
        let bks = solvers::bks::BestKnown::default();
        let tuned = engine::campaign::instances::resolve(&file, &scratch, &bks)?;
        let held = engine::campaign::instances::resolve_holdouts(&file, &tuned, &scratch, &bks)?;
        paths.extend(tuned.into_iter().chain(held).map(|i| i.path));
    }
    let mut graphs = Vec::new();
    let loaded = paths.iter().try_for_each(|path| {
        match family::load(path, None, None)? {
            family::Instance::Hwsw(inst) => graphs.push(inst),
            other => bail!(
                "{} is a {} instance; reference values are computed for hwsw graphs only \
                 (the other families have published best-known tables)",
                path.display(),
                other.family()
            ),
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&scratch);
    loaded?;
    graphs.sort_by(|a, b| a.name.cmp(&b.name));
    // The same graph named twice is one row; two graphs under one name cannot share it.
    for pair in graphs.windows(2) {
        if pair[0].name == pair[1].name && pair[0] != pair[1] {
            bail!(
                "two different graphs are named {}: a reference table has one row per name; \
                 rename one file",
                pair[0].name
            );
        }
    }
    graphs.dedup_by(|a, b| a.name == b.name);
    Ok(graphs)
}

/// `table` with each candidate that is lower than its graph's row (or the first for its
/// graph); on a tie the row already there stays, so re-running with the same inputs changes
/// nothing. A candidate below a value the table calls optimal is an error: one of the two is
/// wrong, and a reference table must not guess which.
fn lowest(mut table: Table, candidates: impl IntoIterator<Item = (String, Row)>) -> Result<Table> {
    for (name, row) in candidates {
        // An earlier row of another size is another graph's under the same name: its value
        // would stand for this one.
        if let Some(old) = table.get(&name) {
            if old.identity.family == row.identity.family
                && old.identity.n.is_some_and(|n| Some(n) != row.identity.n)
            {
                bail!(
                    "{name}: the earlier table's row is for a graph of {} nodes, this one has \
                     {}: another graph under the same name; rename one, or leave --previous \
                     out",
                    old.identity.n.unwrap_or_default(),
                    row.identity.n.map_or("?".to_string(), |n| n.to_string())
                );
            }
        }
        match table.get_mut(&name) {
            Some(old) if old.value <= row.value => {
                // The earlier value stands; the graph at hand says what it is about.
                if old.identity.n.is_none() {
                    old.identity = row.identity;
                }
            }
            Some(old) if old.optimal == "yes" => bail!(
                "{name}: {} ({}) is below {}, which the earlier table calls optimal ({})",
                row.value,
                row.method,
                old.value,
                old.method
            ),
            _ => {
                table.insert(name, row);
            }
        }
    }
    Ok(table)
}

/// What changed against the earlier table, one line per graph, for the log.
fn changes(previous: &Table, table: &Table) -> String {
    let mut text = String::new();
    for (name, row) in table {
        match previous.get(name) {
            Some(old) if old == row => {}
            Some(old) => {
                let _ = writeln!(
                    text,
                    "{name}: {} -> {} ({:+.3}%), {}",
                    old.value,
                    row.value,
                    solvers::bks::gap_percent(row.value, old.value).unwrap_or(0.0),
                    row.method
                );
            }
            None if !previous.is_empty() => {
                let _ = writeln!(text, "{name}: {} (new), {}", row.value, row.method);
            }
            None => {}
        }
    }
    text
}

fn read_table(path: &Path) -> Result<Table> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the reference table {}", path.display()))?;
    parse_table(&text, path)
}

fn parse_table(text: &str, origin: &Path) -> Result<Table> {
    let mut table = Table::new();
    for row in solvers::bks::rows(text, origin)? {
        let (line, name) = (row.line, row.name);
        let row = Row {
            value: row.value,
            optimal: match row.optimal.as_str() {
                "" => "no".into(),
                _ => row.optimal,
            },
            method: row.method,
            identity: Identity {
                family: row.family_text,
                n: row.n,
                m: row.m,
                fingerprint: row.fingerprint,
            },
        };
        if table.insert(name.clone(), row).is_some() {
            bail!("{}:{line}: {name} has a second row", origin.display());
        }
    }
    Ok(table)
}

fn to_csv(table: &Table) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let text = |v: Option<usize>| v.map(|v| v.to_string()).unwrap_or_default();
    // Columns another table's rows need are written only where some row has them, so a
    // table of graphs alone keeps its shape.
    let with_m = table.values().any(|r| r.identity.m.is_some());
    let with_fingerprint = table.values().any(|r| r.identity.fingerprint.is_some());
    let mut header = vec!["name", "family", "n"];
    header.extend(with_m.then_some("m_machines"));
    header.extend(["bks", "optimal", "method"]);
    header.extend(with_fingerprint.then_some("fingerprint"));
    writer.write_record(&header)?;
    for (name, row) in table {
        let id = &row.identity;
        let mut record = vec![name.clone(), id.family.clone(), text(id.n)];
        if with_m {
            record.push(text(id.m));
        }
        record.extend([
            row.value.to_string(),
            row.optimal.clone(),
            row.method.clone(),
        ]);
        if with_fingerprint {
            record.push(
                id.fingerprint
                    .map(|f| format!("{f:016x}"))
                    .unwrap_or_default(),
            );
        }
        writer.write_record(&record)?;
    }
    let bytes = writer.into_inner().map_err(|e| anyhow!("{e}"))?;
    Ok(String::from_utf8(bytes)?)
}

/// The answer files: each path as given, a folder's `*.json` files in name order.
fn answer_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("cannot read the answers folder {}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            if inside.is_empty() {
                bail!("the answers folder {} holds no .json file", path.display());
            }
            inside.sort();
            files.extend(inside);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Each answer re-scored on its graph, as a candidate row.
fn read_answers(files: &[PathBuf], graphs: &[hwsw::Instance]) -> Result<Vec<(String, Row)>> {
    files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the answer {}", file.display()))?;
            answer(&text, graphs).with_context(|| format!("answer {}", file.display()))
        })
        .collect()
}

/// One `mats solve --json` report: its graph's name and the re-scored row.
fn answer(text: &str, graphs: &[hwsw::Instance]) -> Result<(String, Row)> {
    let report: serde_json::Value =
        serde_json::from_str(text).context("not a `mats solve --json` report")?;
    let family = report["family"].as_str().unwrap_or("hwsw");
    if family != "hwsw" {
        bail!("is a {family} answer; reference values are for hwsw graphs only");
    }
    let name = report["instance"]
        .as_str()
        .ok_or_else(|| anyhow!("has no `instance` name"))?;
    let graph = graphs.iter().find(|g| g.name == name).ok_or_else(|| {
        anyhow!(
            "answers {name}, which is not among the {} graphs given (name the graph's file or \
             its campaign)",
            graphs.len()
        )
    })?;
    let solution = super::score::answer_solution(&report)?;
    let value = graph
        .objective(&solution)
        .map_err(|e| anyhow!("its solution of {name} {e}"))?;
    if let Some(stated) = report["objective"].as_i64() {
        if stated != value {
            bail!("states the cost {stated} for {name} but its solution re-scores to {value}");
        }
    }
    let text_of = |key: &str| report[key].as_str().unwrap_or("?").to_string();
    let adapt = if report["gpu"]["adaptation"].is_null() {
        ""
    } else {
        " with --adapt"
    };
    let method = format!(
        "{} on the {}{adapt}, seed {}, {:.1} s (mats solve, re-scored)",
        text_of("algorithm"),
        text_of("backend"),
        report["seed"],
        report["seconds"].as_f64().unwrap_or(0.0)
    );
    Ok((name.to_string(), Row::found(value, method, graph)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph() -> hwsw::Instance {
        let spec = hwsw::GeneratorSpec::new(12, 20, 1.0, hwsw::RLevel::Low, 3);
        let mut g = hwsw::generate(&spec).unwrap();
        g.name = "g12".into();
        g
    }

    fn row(value: i64, method: &str) -> Row {
        Row::found(value, method.into(), &graph())
    }

    /// An earlier row without a size takes the graph's where its value stands; one of
    /// another size is another graph's and refused.
    #[test]
    fn an_earlier_row_is_tied_to_the_graph_of_its_name() {
        let sizeless = Row {
            identity: Identity {
                n: None,
                ..Identity::of(&graph())
            },
            ..row(3, "old")
        };
        let table = lowest(
            Table::from([("a".into(), sizeless)]),
            [("a".into(), row(5, "search"))],
        )
        .unwrap();
        assert_eq!(table["a"].value, 3);
        assert_eq!(table["a"].identity.n, Some(graph().n()));
        let other = Row {
            identity: Identity {
                n: Some(graph().n() + 1),
                ..Identity::of(&graph())
            },
            ..row(3, "old")
        };
        let e = lowest(
            Table::from([("a".into(), other)]),
            [("a".into(), row(5, "search"))],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("another graph under the same name"), "{e}");
    }

    #[test]
    fn the_lowest_value_wins_and_a_tie_keeps_the_row_already_there() {
        let previous = Table::from([("a".into(), row(10, "old")), ("b".into(), row(5, "old"))]);
        let table = lowest(
            previous.clone(),
            [
                ("a".into(), row(10, "search")),
                ("b".into(), row(4, "search")),
                ("b".into(), row(4, "answer")),
                ("c".into(), row(7, "answer")),
                ("c".into(), row(6, "answer 2")),
            ],
        )
        .unwrap();
        assert_eq!(table["a"], row(10, "old"));
        assert_eq!(table["b"], row(4, "search"));
        assert_eq!(table["c"], row(6, "answer 2"));
        let log = changes(&previous, &table);
        assert!(log.contains("b: 5 -> 4 (-20.000%), search"), "{log}");
        assert!(log.contains("c: 6 (new), answer 2"), "{log}");
        assert!(!log.contains("a:"), "{log}");

        let proven = Row {
            optimal: "yes".into(),
            ..row(5, "brute force")
        };
        let e = lowest(
            Table::from([("a".into(), proven)]),
            [("a".into(), row(4, "gpu"))],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("a: 4 (gpu) is below 5") && e.contains("optimal"),
            "{e}"
        );
    }

    #[test]
    fn a_table_round_trips_and_bad_rows_name_their_line() {
        let text = "name,family,bks,optimal,method\n\
                    g1,hwsw,12,no,\"best of 8, long\"\n\
                    g2,hwsw,7,yes,brute force\n";
        let parse = |text: &str| parse_table(text, Path::new("t.csv"));
        let table = parse(text).unwrap();
        assert_eq!(table["g1"].method, "best of 8, long");
        assert_eq!(table["g2"].optimal, "yes");
        assert_eq!(parse(&to_csv(&table).unwrap()).unwrap(), table);
        // Rows of other families keep their family, sizes and fingerprint (they were all
        // written back as hwsw rows without them, and `solve --bks` then refused them).
        let mixed = "name,family,n,m_machines,bks,optimal,fingerprint\n\
                     myqap,qap,12,,224416,yes,44f1e5b97591f600\n\
                     ta001,pfsp,20,5,1278,yes,\n\
                     g1,hwsw,25,,12,no,\n";
        let table = parse(mixed).unwrap();
        let written = to_csv(&table).unwrap();
        assert_eq!(parse(&written).unwrap(), table);
        assert!(
            written.contains("myqap,qap,12,,224416,yes,,44f1e5b97591f600")
                && written.contains("ta001,pfsp,20,5,1278,yes,,"),
            "{written}"
        );
        let rows = solvers::bks::rows(&written, Path::new("t.csv")).unwrap();
        let myqap = rows.iter().find(|r| r.name == "myqap").unwrap();
        assert_eq!(myqap.family, Some(solvers::family::Family::Qap));
        assert_eq!(myqap.fingerprint, Some(0x44f1e5b97591f600));

        let e = format!("{:#}", parse("name,bks\ng1,12\ng2,x\n").unwrap_err());
        assert!(e.contains("t.csv:3") && e.contains("g2"), "{e}");
        let e = format!("{:#}", parse("name,bks\ng1,12\ng1,11\n").unwrap_err());
        assert!(e.contains("t.csv:3") && e.contains("second row"), "{e}");
        let e = format!("{:#}", parse("name,value\ng1,12\n").unwrap_err());
        assert!(e.contains("`bks`"), "{e}");
    }

    fn report(g: &hwsw::Instance, x: &[usize], objective: i64) -> String {
        serde_json::json!({
            "family": "hwsw", "instance": g.name, "algorithm": "gpts-multi",
            "backend": "gpu", "seed": 2, "seconds": 10.02, "objective": objective,
            "solution": x,
        })
        .to_string()
    }

    #[test]
    fn an_answer_is_re_scored_and_a_wrong_or_infeasible_one_refused() {
        let g = graph();
        let graphs = std::slice::from_ref(&g);
        let all_hardware = vec![0; g.n()];
        let cost = g.objective(&all_hardware).unwrap();
        let (name, r) = answer(&report(&g, &all_hardware, cost), graphs).unwrap();
        assert_eq!((name.as_str(), r.value), ("g12", cost));
        assert_eq!(
            r.method,
            "gpts-multi on the gpu, seed 2, 10.0 s (mats solve, re-scored)"
        );

        let e = format!(
            "{:#}",
            answer(&report(&g, &all_hardware, cost - 1), graphs).unwrap_err()
        );
        assert!(e.contains(&format!("re-scores to {cost}")), "{e}");
        // All software breaks the constraint S + C <= R of a low-R graph.
        let e = format!(
            "{:#}",
            answer(&report(&g, &vec![1; g.n()], 0), graphs).unwrap_err()
        );
        assert!(e.contains("infeasible"), "{e}");
        let mut other = g.clone();
        other.name = "other".into();
        let e = format!(
            "{:#}",
            answer(&report(&other, &all_hardware, cost), graphs).unwrap_err()
        );
        assert!(e.contains("not among the 1 graphs"), "{e}");
        let e = format!("{:#}", answer("{\"family\": \"qap\"}", graphs).unwrap_err());
        assert!(e.contains("qap answer"), "{e}");
    }
}
