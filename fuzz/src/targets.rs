//! One fuzz target per input format. Each takes the raw bytes of a file (or, for `cli`, the
//! words of a command line) and returns a short outcome: `ok:...` or the error with numbers
//! and quoted text blanked, so that the engine can keep inputs that reach a new outcome.

use std::path::{Path, PathBuf};

use clap::Parser as _;
use mats::commands::export::{Index, Manifest};
use solvers::family::{self, Family};
use solvers::run::{Budget, RunOptions};
use solvers::{hwsw, pfsp, qap, tsp};

/// The formats mats reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Qap,
    Pfsp,
    Tsp,
    Hwsw,
    Campaign,
    Space,
    Bundle,
    Cli,
    /// A request line of the daemon's protocol.
    Request,
}

impl Target {
    pub const ALL: [Target; 9] = [
        Target::Qap,
        Target::Pfsp,
        Target::Tsp,
        Target::Hwsw,
        Target::Campaign,
        Target::Space,
        Target::Bundle,
        Target::Cli,
        Target::Request,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::Qap => "qap",
            Target::Pfsp => "pfsp",
            Target::Tsp => "tsp",
            Target::Hwsw => "hwsw",
            Target::Campaign => "campaign",
            Target::Space => "space",
            Target::Bundle => "bundle",
            Target::Cli => "cli",
            Target::Request => "request",
        }
    }

    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Words the mutator may insert: the format's keywords.
    pub fn dictionary(self) -> &'static [&'static str] {
        match self {
            Target::Qap | Target::Pfsp | Target::Hwsw => &[
                "HWSW",
                "number of jobs, number of machines, initial seed, upper bound and lower bound :",
                "processing times :",
                "#",
                "\n",
                " ",
                "-",
                "0",
                "1",
            ],
            Target::Tsp => &[
                "NAME: x\n",
                "TYPE: TSP\n",
                "TYPE: TOUR\n",
                "DIMENSION: ",
                "EDGE_WEIGHT_TYPE: EUC_2D\n",
                "EDGE_WEIGHT_TYPE: GEO\n",
                "EDGE_WEIGHT_TYPE: ATT\n",
                "EDGE_WEIGHT_TYPE: CEIL_2D\n",
                "EDGE_WEIGHT_TYPE: EXPLICIT\n",
                "EDGE_WEIGHT_FORMAT: FULL_MATRIX\n",
                "EDGE_WEIGHT_FORMAT: LOWER_DIAG_ROW\n",
                "EDGE_WEIGHT_FORMAT: UPPER_ROW\n",
                "NODE_COORD_SECTION\n",
                "EDGE_WEIGHT_SECTION\n",
                "DISPLAY_DATA_SECTION\n",
                "TOUR_SECTION\n",
                "EOF\n",
                "-1\n",
                "1e300",
                ":",
            ],
            Target::Campaign => &[
                "[instances]\n",
                "[cpu]\n",
                "[gpu]\n",
                "[budget]\n",
                "[strategy]\n",
                "[quality]\n",
                "[measurement]\n",
                "paths = [",
                "classes = ",
                "space = ",
                "baseline = {",
                "name = ",
                "iterations = ",
                "trials = ",
                "wall_s = ",
                "devices = [",
                "objective = ",
                "\"pareto:time,energy\"",
                "per_class = ",
                "max_attempts = ",
                "timed_runs = ",
                "\"",
                "[",
                "]",
                "{",
                "}",
                "=",
                ",",
                "\n",
            ],
            Target::Space => &[
                "[[param]]\n",
                "name = ",
                "kind = \"runtime\"\n",
                "kind = \"flag\"\n",
                "kind = \"launch\"\n",
                "values = [",
                "range = { from = 0, to = ",
                "pow2 = { from = 1, to = ",
                "when = \"",
                "constraints = [\"",
                "[constants]\n",
                "emit = ",
                "&&",
                "||",
                "!",
                "(",
                ")",
                "==",
                "%",
                "\"",
                "[",
                "]",
                "{",
                "}",
                "\n",
            ],
            Target::Bundle => &[
                "{",
                "}",
                "[",
                "]",
                "\"",
                ":",
                ",",
                "null",
                "true",
                "\"variant\"",
                "\"algorithm\"",
                "\"threads\"",
                "\"starts\"",
                "\"solutions\"",
                "\"2opt\"",
                "\"rots-block\"",
                "\"tabu\"",
                "\"classes\"",
                "\"bundles\"",
                "\"point\"",
                "\"values\"",
                "1e308",
                "-1",
            ],
            Target::Request => &[
                "{",
                "}",
                "\"",
                ":",
                ",",
                "\"op\"",
                "\"ping\"",
                "\"status\"",
                "\"submit\"",
                "\"cancel\"",
                "\"logs\"",
                "\"id\"",
                "\"offset\"",
                "\"campaign\"",
                "\"out\"",
                "\"cwd\"",
                "\"priority\"",
                "\"token\"",
                "null",
                "-1",
                "18446744073709551616",
                "1e308",
                "\n",
            ],
            Target::Cli => &[
                " --time-limit ",
                " --iterations ",
                " --starts ",
                " --ants ",
                " --tenure ",
                " --threads ",
                " --seed ",
                " --alpha ",
                " --beta ",
                " --rho ",
                " --candidates ",
                " --destruction ",
                " --temperature ",
                " --index ",
                " --algo ",
                " --family ",
                " 1e19 ",
                " -1 ",
                " 0 ",
                " NaN ",
                " inf ",
                " 18446744073709551615 ",
                " 2opt ",
                " tabu ",
                " ig ",
                " as ",
                " sts ",
                " --json ",
            ],
        }
    }

    /// The shipped files of the format (and, for bundles and the command line, examples
    /// built here), each a seed of the corpus.
    pub fn seeds(self) -> Vec<Vec<u8>> {
        let files = |dir: &str, exts: &[&str]| -> Vec<Vec<u8>> {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            paths.sort();
            paths
                .into_iter()
                .filter(|p| {
                    let name = p
                        .file_name()
                        .map(|n| n.to_string_lossy().to_string())
                        .unwrap_or_default();
                    exts.iter().any(|e| name.ends_with(e))
                })
                .filter_map(|p| std::fs::read(p).ok())
                // Large shipped files slow every mutation down; their shape is in the others.
                .filter(|bytes| bytes.len() <= 64 << 10)
                .collect()
        };
        match self {
            Target::Qap => files("data/qap", &[".dat"]),
            Target::Pfsp => files("data/pfsp", &[".txt"]),
            Target::Tsp => files("data/tsp", &[".tsp", ".tour"]),
            Target::Hwsw => files("data/hwsw", &[".hwsw"]),
            Target::Campaign => files("campaigns", &[".toml"]),
            Target::Space => files("spaces", &[".toml"]),
            Target::Bundle => bundle_seeds(),
            Target::Request => [
                r#"{"op":"ping"}"#,
                r#"{"op":"status"}"#,
                r#"{"op":"status","id":12}"#,
                r#"{"op":"submit","campaign":"/a/b.toml","out":"/tmp/o","cwd":"/","priority":-3}"#,
                r#"{"op":"logs","id":1,"offset":99}"#,
                r#"{"op":"cancel","id":7,"token":"0123456789abcdef"}"#,
            ]
            .iter()
            .map(|r| r.as_bytes().to_vec())
            .collect(),
            Target::Cli => [
                "qap --algo 2opt --starts 8 --seed 3",
                "qap --algo tabu --starts 2 --threads 2",
                "qap --time-limit 0.01",
                "pfsp --index 1 --algo tabu --tenure 7",
                "pfsp --index 2 --destruction 4 --temperature 0.4",
                "tsp --ants 10 --alpha 1 --beta 2 --rho 0.5 --candidates 8",
                "hwsw --tenure 20 --seed 9",
                "hwsw --time-limit 0.001 --json",
            ]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect(),
        }
    }

    /// Runs the target on one input.
    pub fn run(self, data: &[u8]) -> String {
        if self == Target::Request {
            // Bytes as the socket delivers them, UTF-8 or not.
            return match daemon::protocol::parse_request(data) {
                Ok(p) => format!("ok:{:?}", std::mem::discriminant(&p.request)),
                Err(e) => format!("err:{}", normalise(&e)),
            };
        }
        let text = match std::str::from_utf8(data) {
            Ok(t) => t,
            Err(_) => return "err:not utf-8".into(),
        };
        let outcome = match self {
            Target::Qap => qap_input(text),
            Target::Pfsp => pfsp_input(text),
            Target::Tsp => tsp_input(text),
            Target::Hwsw => hwsw_input(text),
            Target::Campaign => campaign_input(text),
            Target::Space => space_input(text),
            Target::Bundle => bundle_input(text),
            Target::Cli => cli_input(text),
            Target::Request => unreachable!("handled above"),
        };
        match outcome {
            Ok(ok) => format!("ok:{ok}"),
            Err(e) => format!("err:{}", normalise(&e)),
        }
    }
}

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The kind of an outcome: the message after its `file:line:` prefix, letters only, first
/// eight words, so that messages differing only in values or positions compare equal.
fn normalise(message: &str) -> String {
    let body = message
        .split(": ")
        .skip_while(|part| part.contains("fuzz") || part.chars().all(|c| c.is_ascii_digit()))
        .collect::<Vec<_>>()
        .join(": ");
    let mut words = Vec::new();
    let mut quoted = false;
    for word in body.split_whitespace() {
        if word.starts_with('"') || word.starts_with('`') {
            quoted = !(word.len() > 1 && (word.ends_with('"') || word.ends_with('`')));
            continue;
        }
        if quoted {
            quoted = !(word.ends_with('"') || word.ends_with('`'));
            continue;
        }
        let letters: String = word.chars().filter(|c| c.is_alphabetic()).collect();
        if !letters.is_empty() {
            words.push(letters);
        }
        if words.len() == 8 {
            break;
        }
    }
    words.join(" ")
}

/// Every instance is also described and scored: features, class and the objective of the
/// identity permutation exercise what a real run touches after parsing.
fn describe(inst: &family::Instance, solution: &[usize]) -> Result<String, String> {
    let _ = inst.features();
    let class = inst.class();
    let objective = inst.objective(solution).map_err(|e| e.to_string())?;
    let _ = std::hint::black_box(objective);
    Ok(class)
}

fn identity(n: usize) -> Vec<usize> {
    (0..n).collect()
}

fn qap_input(text: &str) -> Result<String, String> {
    let path = Path::new("fuzz.dat");
    let _ = family::detect(text, path);
    let inst = qap::parse(text, path).map_err(|e| e.to_string())?;
    let n = inst.n();
    let inst = family::Instance::Qap(inst);
    describe(&inst, &identity(n))?;
    // A short search: deltas and their updates on the parsed numbers.
    let options = RunOptions {
        seed: 1,
        threads: 1,
        budget: Budget::iterations(3),
    };
    inst.solve(family::Algorithm::QapTabu, &Default::default(), &options)
        .map(|o| o.objective.signum().to_string())
}

fn pfsp_input(text: &str) -> Result<String, String> {
    let path = Path::new("fuzz.txt");
    let inst = pfsp::parse(text, path, Some(1)).map_err(|e| e.to_string())?;
    let _ = pfsp::lower_bound(&inst);
    let jobs = inst.jobs;
    describe(&family::Instance::Pfsp(inst), &identity(jobs))
}

fn tsp_input(text: &str) -> Result<String, String> {
    let path = Path::new("fuzz.tsp");
    if text.contains("TOUR_SECTION") {
        return tsp::parse_tour(text, path)
            .map(|t| t.len().min(3).to_string())
            .map_err(|e| e.to_string());
    }
    let inst = tsp::parse(text, path).map_err(|e| e.to_string())?;
    let n = inst.n();
    let small = n <= 80;
    let inst = family::Instance::Tsp(inst);
    let class = describe(&inst, &identity(n))?;
    if small {
        // The Ant System once panicked on distances near i64::MAX.
        let options = RunOptions {
            seed: 1,
            threads: 1,
            budget: Budget::iterations(1),
        };
        inst.solve(family::Algorithm::TspAs, &Default::default(), &options)?;
    }
    Ok(class)
}

fn hwsw_input(text: &str) -> Result<String, String> {
    let path = Path::new("fuzz.hwsw");
    let inst = hwsw::parse(text, path).map_err(|e| e.to_string())?;
    let n = inst.n();
    let small = n <= 200;
    let inst = family::Instance::Hwsw(inst);
    // All hardware: always feasible (S + C = 0 <= R).
    let class = describe(&inst, &vec![0; n])?;
    if small {
        let options = RunOptions {
            seed: 1,
            threads: 1,
            budget: Budget::iterations(3),
        };
        inst.solve(family::Algorithm::HwswSts, &Default::default(), &options)?;
    }
    Ok(class)
}

fn campaign_input(text: &str) -> Result<String, String> {
    let file =
        engine::campaign::CampaignFile::parse(Path::new("campaigns/fuzz.toml"), text.to_string())
            .map_err(|e| search::errors::one_line(&e))?;
    let searches = file.searches().map_err(|e| search::errors::one_line(&e))?;
    // The seed list is allocated up front (2^31 seeds used to abort on 16 GiB).
    let seeds = file.run_seeds().map_err(|e| search::errors::one_line(&e))?;
    Ok(format!("{} {}", searches.len(), seeds.len().min(3)))
}

fn space_input(text: &str) -> Result<String, String> {
    let space = search::space::Space::from_toml_str(text, "fuzz.toml")
        .map_err(|e| search::errors::one_line(&e))?;
    let shown = mats::commands::space::render(&space);
    Ok(shown.lines().count().min(5).to_string())
}

fn bundle_input(text: &str) -> Result<String, String> {
    if let Ok(index) = serde_json::from_str::<Index>(text) {
        let bundles: usize = index.classes.values().map(|c| c.bundles.len()).sum();
        return Ok(format!("index {}", bundles.min(3)));
    }
    let manifest: Manifest = serde_json::from_str(text).map_err(|e| e.to_string())?;
    manifest.tuned_limit()?;
    let realised = manifest.realised();
    let mut accepted = 0;
    for family in Family::ALL {
        if engine::runner::cpu::params(family, &realised).is_ok() {
            accepted += 1;
        }
        if manifest.gpu_config(family).is_ok() {
            accepted += 1;
        }
    }
    Ok(format!("manifest {accepted}"))
}

/// `mats solve FILE WORDS...`: the first word picks a shipped instance of that family, the
/// rest are arguments. Budgets are clamped (at most 20 iterations, 64 starts or ants) so
/// that each input takes milliseconds; values that must be refused are passed unchanged.
fn cli_input(text: &str) -> Result<String, String> {
    let mut words: Vec<&str> = text.split_whitespace().take(32).collect();
    if words.is_empty() {
        return Err("no words".into());
    }
    let file = match words.remove(0) {
        "qap" => "data/qap/tai12a.dat",
        "pfsp" => "data/pfsp/tai20_5.txt",
        "tsp" => "data/tsp/burma14.tsp",
        "hwsw" => "data/hwsw/rc6-synthetic.hwsw",
        _ => return Err("unknown family word".into()),
    };
    // Flags that read other files or reach for a GPU are not this target's business.
    if words
        .iter()
        .any(|w| w.starts_with("--tuned") || w.starts_with("--bks") || w.starts_with("--backend"))
    {
        return Err("excluded flag".into());
    }
    let file = repo().join(file);
    let mut argv = vec!["mats", "solve", file.to_str().ok_or("path")?];
    argv.extend(words);
    let cli = mats::cli::Cli::try_parse_from(argv).map_err(|e| e.kind().to_string())?;
    let mats::cli::Command::Solve(mut args) = cli.command else {
        return Err("not solve".into());
    };
    args.iterations = match args.iterations {
        Some(0) => Some(0),
        Some(n) => Some(n.min(20)),
        None => Some(20),
    };
    args.starts = args.starts.map(|s| s.min(64));
    args.ants = args.ants.map(|a| a.min(64));
    let (report, _) =
        mats::commands::solve::solve(&args).map_err(|e| search::errors::one_line(&e))?;
    Ok(report.algorithm)
}

/// Bundle seeds: an index and a manifest of each backend, as `mats export` writes them.
fn bundle_seeds() -> Vec<Vec<u8>> {
    let measured = serde_json::json!({
        "point": {"algorithm": "tabu", "threads": 2, "starts": 4},
        "time_s": 0.01, "power_w": null, "energy_j": null, "gap_percent": 0.5
    });
    let index = serde_json::json!({
        "campaign": "quickstart", "family": "qap", "backend": "cpu", "device": "cpu (2 threads)",
        "arch": null, "driver": null, "nvrtc": null,
        "classes": {"qap:density=high,symmetry=high,dominance=low": {
            "bundles": {"time": "bundle-1"}, "pareto": [measured.clone()]
        }}
    });
    let cpu = serde_json::json!({
        "point": {"algorithm": "tabu", "threads": 2, "starts": 4},
        "flags": [], "values": {"algorithm": "tabu", "threads": 2, "starts": 4},
        "backend": "cpu", "device": "cpu (2 threads)", "arch": null, "driver": null,
        "nvrtc": null, "measured": {"qap:x": measured}, "kernels": []
    });
    let gpu = serde_json::json!({
        "point": {"variant": "2opt", "solutions": 2048, "threads": 1024},
        "flags": ["-maxrregcount=32"],
        "values": {"variant": "2opt", "solutions": 2048, "threads": 1024},
        "backend": "gpu", "device": "NVIDIA H100", "arch": 90, "driver": "13.0", "nvrtc": "13.0",
        "measured": {},
        "kernels": [{"n": 12, "source": "qap/2opt.cu", "source_sha256": "00", "options": [], "cache_key": "k"}]
    });
    [index, cpu, gpu]
        .iter()
        .map(|v| serde_json::to_vec_pretty(v).expect("JSON"))
        .collect()
}
