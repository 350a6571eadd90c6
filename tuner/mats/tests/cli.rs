//! The `mats` binary end to end: commands, JSON output, and one clear error for bad input.

use std::path::{Path, PathBuf};

mod common;
use common::{data, mats, one_line_error as error_of, repo};

/// `mats instance generate hwsw` with [nodes, edges, CCR, R level, seed], written to `out`
/// (standard output where `None`).
fn generate_hwsw(args: [&str; 5], out: Option<&str>) -> std::process::Output {
    let [nodes, edges, ccr, level, seed] = args;
    let mut a = vec![
        "instance",
        "generate",
        "hwsw",
        "--nodes",
        nodes,
        "--edges",
        edges,
        "--ccr",
        ccr,
        "--r-level",
        level,
        "--seed",
        seed,
    ];
    if let Some(out) = out {
        a.extend(["-o", out]);
    }
    mats(&a)
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = mats(args);
    assert!(
        out.status.success(),
        "mats {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

fn solution_of(report: &serde_json::Value) -> Vec<usize> {
    report["solution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize - 1)
        .collect()
}

/// `mats solve QAP_FILE --json ARGS...` on the CPU: the report, its answer re-scored.
fn qap_report(file: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["solve", file, "--json"];
    all.extend_from_slice(args);
    let r = json(&all);
    let inst = solvers::qap::read(file.as_ref()).unwrap();
    assert_eq!(
        inst.cost(&solution_of(&r)),
        r["objective"].as_i64().unwrap()
    );
    r
}

/// (objective, solution) of [`qap_report`].
fn qap_answer(file: &str, args: &[&str]) -> (i64, Vec<usize>) {
    let r = qap_report(file, args);
    (r["objective"].as_i64().unwrap(), solution_of(&r))
}

/// The library's Ro-TS with `params` under the seed and iteration budget a CLI run gets.
fn qap_library(
    file: &str,
    params: solvers::qap::RotsParams,
    seed: u64,
    iterations: u64,
) -> (i64, Vec<usize>) {
    let out = solvers::qap::robust_tabu(
        &solvers::qap::read(file.as_ref()).unwrap(),
        &params,
        &solvers::run::RunOptions {
            seed,
            budget: solvers::run::Budget::iterations(iterations),
            ..Default::default()
        },
    );
    (out.objective, out.solution)
}

// `--restarts on` runs the iterated search (the GPU's, per thread), `off` Taillard's single Ro-TS
// trajectory; unset, the instance decides: iterated below a flow dominance of 200 (tai20a: 67),
// Taillard's above (bur26a: 275). The same iteration budget and seed must give the library's
// runs, the two searches must differ, answers are re-scored, bad values and other algorithms
// refused.
#[test]
fn solve_qap_tabu_restarts_choose_the_cpu_search() {
    let run = |file: &str, extra: &[&str]| {
        let mut args = vec!["--seed", "2", "--iterations", "3000"];
        args.extend_from_slice(extra);
        qap_answer(file, &args)
    };
    let library = |file: &str, params| qap_library(file, params, 2, 3000);
    let structured = data("qap/bur26a.dat");
    let iterated = library(&structured, solvers::qap::RotsParams::gpu_defaults(26));
    let taillard = library(&structured, solvers::qap::RotsParams::default());
    assert_ne!(
        iterated, taillard,
        "the two searches must differ here, or this test could not tell the flag was read"
    );
    assert_eq!(run(&structured, &["--restarts", "on"]), iterated);
    assert_eq!(run(&structured, &["--restarts", "off"]), taillard);
    assert_eq!(
        run(&structured, &[]),
        taillard,
        "bur26a: dominance 275, Taillard's"
    );
    let uniform = data("qap/tai20a.dat");
    let iterated = library(&uniform, solvers::qap::RotsParams::gpu_defaults(20));
    let taillard = library(&uniform, solvers::qap::RotsParams::default());
    assert_ne!(iterated, taillard);
    assert_eq!(
        run(&uniform, &[]),
        iterated,
        "tai20a: dominance 67, iterated"
    );
    let e = error_of(&["solve", &uniform, "--restarts", "maybe"]);
    assert!(e.contains("--restarts takes on or off"), "{e}");
    let e = error_of(&["solve", &uniform, "--algo", "2opt", "--restarts", "off"]);
    assert!(e.contains("`restarts` does not apply to qap 2opt"), "{e}");
}

// The GPU's search flags set the CPU's iterated Ro-TS too, with their GPU meaning (the stall
// in rots-block's launches of 10 n iterations): the defaults spelled out give the default's
// answer, a changed stall gives the library's run with that stall, and contradictions or bad
// values are refused in the flags' own names.
#[test]
fn solve_qap_tabu_takes_the_gpu_search_flags() {
    let file = data("qap/bur26a.dat");
    let with = |base: &[&'static str], extra: &[&'static str]| {
        let mut args = vec!["--seed", "4", "--iterations", "4000"];
        args.extend_from_slice(base);
        args.extend_from_slice(extra);
        qap_answer(&file, &args)
    };
    // bur26a's default is Taillard's (dominance 275): `on` asks for the iterated search.
    let run = |extra: &[&'static str]| with(&["--restarts", "on"], extra);
    let library = |params| qap_library(&file, params, 4, 4000);
    let default = run(&[]);
    let spelled = [
        "--tenure-range",
        "0.4,0.8",
        "--aspiration",
        "0",
        "--perturbation",
        "0.25",
        "--restart-stall",
        "5",
    ];
    assert_eq!(run(&spelled), default);
    let short_stall = run(&["--restart-stall", "1"]);
    assert_eq!(
        short_stall,
        library(solvers::qap::RotsParams {
            restart_stall: 10 * 26,
            ..solvers::qap::RotsParams::gpu_defaults(26)
        })
    );
    assert_ne!(
        short_stall, default,
        "a stall of 1 launch must change the run"
    );
    let wide = run(&["--tenure-range", "0.9,1.1", "--perturbation", "0.5"]);
    assert_eq!(
        wide,
        library(solvers::qap::RotsParams {
            tenure_min: 0.9,
            tenure_max: 1.1,
            perturbation: 0.5,
            ..solvers::qap::RotsParams::gpu_defaults(26)
        })
    );
    // Unset, bur26a runs Taillard's settings: spelling them out changes nothing.
    let taillard = |extra: &[&'static str]| with(&[], extra);
    assert_eq!(
        taillard(&["--tenure-range", "0.9,1.1", "--aspiration", "2"]),
        taillard(&[])
    );

    for (flags, expected) in [
        (
            &["--restarts", "off", "--restart-stall", "3"][..],
            "--restart-stall restarts the search, which --restarts off turns off",
        ),
        (
            &["--tenure-range", "0.8,0.4"][..],
            "--tenure-range MIN,MAX must satisfy 0 < min <= max",
        ),
        (
            &["--tenure-range", "0.8"][..],
            "--tenure-range takes 2 comma-separated values",
        ),
        (
            &["--perturbation", "1.5"][..],
            "--perturbation must be in 0..=1",
        ),
        (&["--aspiration=-1"][..], "--aspiration must be in 0..=1000"),
        (
            &["--algo", "2opt", "--aspiration", "1"][..],
            "--aspiration does not apply to qap 2opt",
        ),
        (
            &["--algo", "2opt", "--tenure-range", "0.4,0.8"][..],
            "--tenure-range does not apply to qap 2opt",
        ),
    ] {
        let mut args = vec!["solve", &file];
        args.extend_from_slice(flags);
        let e = error_of(&args);
        assert!(e.contains(expected), "{flags:?}: {e}");
    }
    let pfsp = data("pfsp/tai20_5.txt");
    let e = error_of(&["solve", &pfsp, "--index", "1", "--restart-stall", "3"]);
    assert!(
        e.contains("--restart-stall does not apply to pfsp ig"),
        "{e}"
    );
}

#[test]
fn solve_qap_json_reports_a_rescored_optimum() {
    let file = data("qap/tai12a.dat");
    let r = json(&["solve", &file, "--json", "--seed", "3"]);
    for field in [
        "family",
        "instance",
        "algorithm",
        "backend",
        "objective",
        "best_known",
        "gap_percent",
        "seconds",
        "solution",
    ] {
        assert!(r.get(field).is_some(), "missing field {field}");
    }
    assert_eq!(r["family"], "qap");
    assert_eq!(r["algorithm"], "tabu");
    assert_eq!(r["backend"], "cpu");
    assert_eq!(r["best_known"], 224416);
    let inst = solvers::qap::read(file.as_ref()).unwrap();
    assert_eq!(
        inst.cost(&solution_of(&r)),
        r["objective"].as_i64().unwrap()
    );
    assert_eq!(
        r["objective"], 224416,
        "Ro-TS finds tai12a's optimum with its default budget"
    );
    assert_eq!(r["gap_percent"], 0.0);
}

#[test]
fn solve_is_deterministic_for_a_seed_and_thread_count_does_not_matter() {
    let file = data("qap/chr12a.dat");
    let a = json(&[
        "solve",
        &file,
        "--algo",
        "2opt",
        "--json",
        "--seed",
        "5",
        "--threads",
        "1",
    ]);
    let b = json(&[
        "solve",
        &file,
        "--algo",
        "2opt",
        "--json",
        "--seed",
        "5",
        "--threads",
        "2",
    ]);
    assert_eq!(a["solution"], b["solution"]);
    assert_eq!(a["objective"], b["objective"]);
}

#[test]
fn solve_text_output_names_the_gap() {
    let out = mats(&["solve", &data("qap/nug12.dat"), "--iterations", "2000"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("best known 578 (optimal), gap"), "{text}");
    assert!(text.contains("objective"), "{text}");
}

#[test]
fn instance_info_json_has_class_and_features() {
    let r = json(&["instance", "info", &data("qap/bur26a.dat"), "--json"]);
    assert_eq!(r["family"], "qap");
    assert_eq!(r["class"], "qap:density=normal,symmetry=low,dominance=high");
    assert_eq!(r["features"]["a"]["zero_diagonal"], false);
    assert_eq!(r["best_known"]["value"], 5426670);
    // The fingerprint the embedded table holds for bur26a, printed for a user's own table.
    assert_eq!(r["fingerprint"], "44f1e5b97591f600");
}

/// The fingerprint `instance info` prints is the one a user's best-known table can name: the
/// row then gives its value to that file only, not to an edited copy under the same name.
#[test]
fn a_printed_fingerprint_ties_a_users_best_known_value_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("mine.dat");
    std::fs::copy(repo("data/qap/tai12a.dat"), &own).unwrap();
    let own = own.to_str().unwrap().to_string();
    let info = json(&["instance", "info", &own, "--json"]);
    let fingerprint = info["fingerprint"].as_str().unwrap().to_string();
    assert_eq!(fingerprint.len(), 16, "{info}");
    let table = dir.path().join("bks.csv");
    std::fs::write(
        &table,
        format!("name,bks,fingerprint\nmine,224416,{fingerprint}\n"),
    )
    .unwrap();
    let table = table.to_str().unwrap();
    let known = json(&["instance", "info", &own, "--bks", table, "--json"]);
    assert_eq!(known["best_known"]["value"], 224416, "{known}");
    // An edited copy under the same name is not given the value.
    common::edited_qap("tai12a", Path::new(&own));
    let edited = json(&["instance", "info", &own, "--bks", table, "--json"]);
    assert!(edited["best_known"].is_null(), "{edited}");
    assert_ne!(edited["fingerprint"], fingerprint.as_str());
    // TSP prints one too (TSPLIB files are published by name alone); HW/SW graphs none.
    let tsp = json(&["instance", "info", &data("tsp/burma14.tsp"), "--json"]);
    assert_eq!(tsp["fingerprint"].as_str().map(str::len), Some(16), "{tsp}");
    let hwsw = json(&[
        "instance",
        "info",
        &data("hwsw/crc32-synthetic.hwsw"),
        "--json",
    ]);
    assert!(hwsw.get("fingerprint").is_none(), "{hwsw}");
}

#[test]
fn malformed_instance_gives_one_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.dat");
    std::fs::write(&path, "2\n1 2\n3 oops\n5 6\n7 8\n").unwrap();
    let e = error_of(&["solve", path.to_str().unwrap(), "--family", "qap"]);
    assert!(e.contains("broken.dat:3:") && e.contains("oops"), "{e}");
}

#[test]
fn unknown_family_content_asks_for_family() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mystery.txt");
    std::fs::write(&path, "hello world\n").unwrap();
    let e = error_of(&["instance", "info", path.to_str().unwrap()]);
    assert!(e.contains("mystery.txt") && e.contains("--family"), "{e}");
}

#[test]
fn missing_file_unknown_algorithm_and_misplaced_parameters_are_errors() {
    let e = error_of(&["solve", "/no/such/file.dat"]);
    assert!(e.contains("/no/such/file.dat: cannot read"), "{e}");
    let e = error_of(&["solve", &data("qap/tai12a.dat"), "--algo", "anneal"]);
    assert!(
        e.contains("unknown qap algorithm \"anneal\"") && e.contains("2opt"),
        "{e}"
    );
    let e = error_of(&["solve", &data("qap/tai12a.dat"), "--tenure", "5"]);
    assert!(e.contains("`tenure` does not apply to qap tabu"), "{e}");
    let e = error_of(&["solve", &data("qap/tai12a.dat"), "--time-limit", "0"]);
    assert!(e.contains("--time-limit"), "{e}");
    // A negative value is the flag's value, refused by name (clap took it for a flag and
    // suggested `-- -1`, which does not work either).
    let e = error_of(&["solve", &data("qap/tai12a.dat"), "--time-limit", "-1"]);
    assert!(e.contains("--time-limit must be a positive number"), "{e}");
    // (clap's own error, with its "For more information" line.)
    let e = common::error_of(&["solve", &data("qap/tai12a.dat"), "--seed", "-1"]);
    assert!(
        e.starts_with("error: invalid value '-1' for '--seed <SEED>'"),
        "{e}"
    );
    let e = error_of(&["solve", &data("qap/tai12a.dat"), "--gpu", "3"]);
    assert!(e.contains("--gpu applies to --backend gpu only"), "{e}");
    let e = error_of(&["solve", &data("qap/tai12a.dat"), "--starts", "0"]);
    assert!(e.contains("`starts` must be at least 1"), "{e}");
    let rd400 = data("tsplib/rd400.tsp");
    let e = error_of(&["solve", &rd400, "--algo", "focused", "--lists", "near"]);
    assert!(
        e.contains("`lists` must be nearest, quadrant or auto, found \"near\""),
        "{e}"
    );
    let e = error_of(&["solve", &rd400, "--lists", "quadrant"]);
    assert!(e.contains("`lists` does not apply to tsp as"), "{e}");
}

/// A one-start CPU run on several worker threads says that the others stay idle and how to
/// use them; starts for every thread (or one thread) say nothing. Under a time limit the
/// starts default to one per thread.
#[test]
fn idle_worker_threads_are_named_with_the_flag_that_uses_them() {
    let ta001 = data("pfsp/tai20_5.txt");
    let run = |extra: &[&str]| {
        let mut args = vec!["solve", ta001.as_str(), "--index", "1", "--iterations", "5"];
        args.extend_from_slice(extra);
        let out = mats(&args);
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let note = run(&["--threads", "3"]);
    assert!(
        note.contains("ig runs 1 independent start here, so 2 of the 3 worker threads stay idle")
            && note.contains("--starts 3"),
        "{note}"
    );
    assert!(!run(&["--threads", "3", "--starts", "3"]).contains("idle"));
    assert!(!run(&["--threads", "1"]).contains("idle"));
    // An iteration-budget run on every core (the default) stays quiet: its one start keeps
    // a seeded answer the same on every machine.
    assert!(!run(&[]).contains("idle"));
    // A time-limited run without --starts runs one start per worker thread instead, and
    // --json says how many; --starts still decides where given.
    let timed = |extra: &[&str]| {
        let mut args = vec![
            "solve",
            ta001.as_str(),
            "--index",
            "1",
            "--time-limit",
            "0.05",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = mats(&args);
        assert!(out.status.success(), "{args:?}");
        let json: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("solve --json prints JSON");
        (json, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (json, note) = timed(&[]);
    assert_eq!(json["starts"], cores as u64, "{json}");
    assert_eq!(json["threads"], cores as u64, "{json}");
    assert!(!note.contains("idle"), "{note}");
    let (json, note) = timed(&["--threads", "3"]);
    assert_eq!(json["starts"], 3, "{json}");
    assert!(!note.contains("idle"), "{note}");
    let (json, note) = timed(&["--threads", "3", "--starts", "1"]);
    assert_eq!(json["starts"], 1, "{json}");
    assert!(
        note.contains("2 of the 3 worker threads stay idle"),
        "{note}"
    );
    // An iteration budget beside the limit keeps the default: the answer stays the threads'.
    let (json, _) = timed(&["--threads", "3", "--iterations", "5"]);
    assert_eq!(json["starts"], 1, "{json}");
    // HW/SW: walks on a graph too small to split its neighbourhood (crc32, 25 nodes); one
    // search on every thread where it splits (rc6, 329 nodes), and no note about idle threads.
    let hwsw = |file: &str| {
        let out = mats(&[
            "solve",
            &data(file),
            "--time-limit",
            "0.05",
            "--threads",
            "3",
            "--json",
        ]);
        assert!(out.status.success(), "{file}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (json, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (json, _) = hwsw("hwsw/crc32-synthetic.hwsw");
    assert_eq!(json["starts"], 3, "{json}");
    let (json, note) = hwsw("hwsw/rc6-synthetic.hwsw");
    assert_eq!(json["starts"], 1, "{json}");
    assert!(!note.contains("idle"), "{note}");
    // QAP 2-opt runs 64 starts by default: more threads than that leave some idle.
    let tai12a = data("qap/tai12a.dat");
    let out = mats(&[
        "solve",
        &tai12a,
        "--algo",
        "2opt",
        "--iterations",
        "5",
        "--threads",
        "65",
    ]);
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(
        note.contains(
            "2opt runs 64 independent starts here, so 1 of the 65 worker threads stays idle"
        ),
        "{note}"
    );
}

#[test]
fn rots_block_parameters_are_checked_before_any_gpu_is_needed() {
    let tai12a = data("qap/tai12a.dat");
    let gpu = |extra: &[&str]| {
        let mut args = vec!["solve", tai12a.as_str(), "--backend", "gpu"];
        args.extend_from_slice(extra);
        error_of(&args)
    };
    // The same rule and words as the CPU's search (qap::tabu's checks), named by the flag.
    let e = gpu(&["--tenure-range", "0.8,0.4"]);
    assert!(
        e.contains("--tenure-range must satisfy 0 < min <= max <= 16"),
        "{e}"
    );
    let e = gpu(&["--tenure-range", "0.4"]);
    assert!(
        e.contains("--tenure-range takes 2 comma-separated values"),
        "{e}"
    );
    let e = gpu(&["--aspiration=-1"]);
    assert!(
        e.contains("--aspiration must be in 0..=1000 (a factor of n^2; 0 = off), found -1"),
        "{e}"
    );
    let e = gpu(&["--algo", "2opt", "--aspiration", "2"]);
    assert!(
        e.contains("--aspiration does not apply to qap `2opt`")
            && e.contains("applies to `rots-block` only"),
        "{e}"
    );
    // The CPU's Ro-TS takes the search flags (solve_qap_tabu_takes_the_gpu_search_flags), not
    // the launch's.
    let e = error_of(&["solve", &tai12a, "--layout", "shared"]);
    assert!(e.contains("--layout applies to --backend gpu only"), "{e}");
}

#[test]
fn bad_best_known_table_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bks.csv");
    std::fs::write(&path, "name,bks\ntai12a,12\nnug12,x\n").unwrap();
    let e = error_of(&[
        "instance",
        "info",
        &data("qap/tai12a.dat"),
        "--bks",
        path.to_str().unwrap(),
    ]);
    assert!(e.contains("bks.csv:3:"), "{e}");
}

#[test]
fn user_best_known_table_overrides_the_embedded_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bks.csv");
    std::fs::write(&path, "name,bks\ntai12a,200000\n").unwrap();
    let r = json(&[
        "instance",
        "info",
        &data("qap/tai12a.dat"),
        "--bks",
        path.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r["best_known"]["value"], 200000);
}

/// A solution below a value its table calls optimal: the gap is printed, with a warning that
/// the table is wrong; a table that does not claim optimality gets no warning.
#[test]
fn a_value_below_a_claimed_optimum_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let score = |table: &str| {
        let path = dir.path().join("bks.csv");
        std::fs::write(&path, table).unwrap();
        let out = mats(&[
            "instance",
            "score",
            &data("qap/tai12a.dat"),
            "--bks",
            path.to_str().unwrap(),
            "--solution",
            &data("qap/tai12a.sln"),
        ]);
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let e = score("name,bks,optimal\ntai12a,230000,yes\n");
    assert!(
        e.contains("warning") && e.contains("230000") && e.contains("optimal"),
        "{e}"
    );
    assert_eq!(score("name,bks,optimal\ntai12a,230000,no\n"), "");
    assert_eq!(score("name,bks,optimal\ntai12a,224416,yes\n"), "");
}

/// TSPLIB's optimal tours score as TSPLIB states them (berlin52: 7542, the optimum).
#[test]
fn score_reads_tsplib_tour_files() {
    let r = json(&[
        "instance",
        "score",
        &data("tsp/berlin52.tsp"),
        "--solution",
        &data("tsp/berlin52.opt.tour"),
        "--json",
    ]);
    assert_eq!(r["objective"], 7542);
    assert_eq!(r["gap_percent"], 0.0);
}

/// VRF's tables name `VFR10_5_1` the instance of `VFR10_5_1_Gap.txt`; a table that has no
/// row for the instance says so instead of pointing at `--bks` again.
#[test]
fn best_known_tables_match_vrf_names_and_say_when_no_row_matches() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("VFR3_2_1_Gap.txt");
    std::fs::write(&file, "3 2\n0 1 1 2\n0 3 1 1\n0 2 1 2\n").unwrap();
    let table = |text: &str| {
        let path = dir.path().join("bks.csv");
        std::fs::write(&path, text).unwrap();
        let out = mats(&[
            "instance",
            "info",
            file.to_str().unwrap(),
            "--bks",
            path.to_str().unwrap(),
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v["best_known"]["value"].clone(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (value, stderr) = table("name,bks\nVFR3_2_1,7\n");
    assert_eq!(value, 7, "{stderr}");
    assert_eq!(stderr, "");
    let (value, stderr) = table("name,bks\nVFR3_2_2,7\n");
    assert!(value.is_null());
    assert!(
        stderr.contains("warning") && stderr.contains("VFR3_2_1_Gap"),
        "{stderr}"
    );
}

// ---- flowshop ----

#[test]
fn generate_reproduces_ta001_and_solve_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gen.txt");
    let out = mats(&[
        "instance",
        "generate",
        "pfsp",
        "--jobs",
        "20",
        "--machines",
        "5",
        "--seed",
        "873654221",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let generated = solvers::pfsp::read(&path, None).unwrap();
    let shipped = solvers::pfsp::read(data("pfsp/tai20_5.txt").as_ref(), Some(1)).unwrap();
    for m in 0..5 {
        for j in 0..20 {
            assert_eq!(generated.time(m, j), shipped.time(m, j));
        }
    }
    let r = json(&[
        "solve",
        path.to_str().unwrap(),
        "--json",
        "--iterations",
        "50",
    ]);
    assert_eq!(r["family"], "pfsp");
    assert_eq!(r["algorithm"], "ig");
    assert_eq!(
        generated.makespan(&solution_of(&r)),
        r["objective"].as_i64().unwrap()
    );
}

#[test]
fn taillard_file_needs_an_index_and_names_ta_instances() {
    let file = data("pfsp/tai20_10.txt");
    let e = error_of(&["solve", &file]);
    assert!(e.contains("--index"), "{e}");
    let r = json(&[
        "solve",
        &file,
        "--index",
        "1",
        "--algo",
        "tabu",
        "--iterations",
        "100",
        "--json",
    ]);
    assert_eq!(r["instance"], "ta011");
    assert_eq!(r["best_known"], 1582);
    assert_eq!(r["class"], "pfsp:size=small");
}

#[test]
fn generate_rejects_bad_arguments() {
    let e = error_of(&[
        "instance",
        "generate",
        "pfsp",
        "--jobs",
        "0",
        "--machines",
        "5",
        "--seed",
        "1",
    ]);
    assert!(e.contains("--jobs"), "{e}");
    let e = error_of(&[
        "instance",
        "generate",
        "pfsp",
        "--jobs",
        "5",
        "--machines",
        "5",
        "--seed",
        "0",
    ]);
    assert!(e.contains("--seed"), "{e}");
}

// ---- QAP generator ----

#[test]
fn generate_qap_is_deterministic_per_seed_and_solvable() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    for (file, seed) in [("a.dat", "7"), ("b.dat", "7"), ("c.dat", "8")] {
        let out = mats(&[
            "instance",
            "generate",
            "qap",
            "--n",
            "30",
            "--seed",
            seed,
            "-o",
            path(file).to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = |f: &str| std::fs::read_to_string(path(f)).unwrap();
    assert_eq!(text("a.dat"), text("b.dat"));
    assert_ne!(text("a.dat"), text("c.dat"));
    let generated = solvers::qap::read(&path("a.dat")).unwrap();
    let direct = solvers::qap::generate(30, 7).unwrap();
    assert_eq!(generated.a_matrix(), direct.a_matrix());
    assert_eq!(generated.b_matrix(), direct.b_matrix());
    let r = json(&[
        "solve",
        path("a.dat").to_str().unwrap(),
        "--json",
        "--iterations",
        "200",
    ]);
    assert_eq!(r["family"], "qap");
    assert_eq!(
        generated.cost(&solution_of(&r)),
        r["objective"].as_i64().unwrap()
    );
    let e = error_of(&["instance", "generate", "qap", "--n", "1", "--seed", "1"]);
    assert!(e.contains("--n"), "{e}");
}

#[test]
fn qap_layout_flag_is_checked_before_any_gpu_is_needed() {
    let file = data("qap/tai12a.dat");
    let e = error_of(&["solve", &file, "--backend", "gpu", "--layout", "texture"]);
    assert!(e.contains("--layout") && e.contains("global-tabu"), "{e}");
    let e = error_of(&["solve", &file, "--layout", "global"]);
    assert!(e.contains("--backend gpu"), "{e}");
}

// ---- TSP and HW/SW partitioning ----

#[test]
fn solve_tsp_with_ant_system_json_is_rescored_and_deterministic() {
    let file = data("tsp/eil51.tsp");
    let args = [
        "solve",
        &file,
        "--algo",
        "as",
        "--iterations",
        "30",
        "--json",
        "--seed",
        "2",
    ];
    let r = json(&args);
    assert_eq!(r["family"], "tsp");
    assert_eq!(r["algorithm"], "as");
    assert_eq!(r["best_known"], 426);
    let tour = solution_of(&r);
    let mut sorted = tour.clone();
    sorted.sort();
    assert_eq!(sorted, (0..51).collect::<Vec<_>>());
    assert!(r["objective"].as_i64().unwrap() >= 426);
    let one_thread = json(&[&args[..], &["--threads", "1"]].concat());
    assert_eq!(one_thread["objective"], r["objective"]);
    assert_eq!(one_thread["solution"], r["solution"]);
    assert!(r["class"].as_str().unwrap().starts_with("tsp:size=small"));
}

#[test]
fn solve_tsp_with_mmas_and_two_opt_reaches_the_optimum_of_eil51() {
    let file = data("tsp/eil51.tsp");
    let r = json(&[
        "solve",
        &file,
        "--algo",
        "mmas",
        "--iterations",
        "100",
        "--json",
    ]);
    assert_eq!(r["algorithm"], "mmas");
    let tour = solution_of(&r);
    let mut sorted = tour.clone();
    sorted.sort();
    assert_eq!(sorted, (0..51).collect::<Vec<_>>());
    // AS alone ends up to 10% above on eil51; with 2-opt MMAS reaches the optimum.
    assert_eq!(r["objective"], 426, "{r}");
}

#[test]
fn tsp_info_and_parameter_errors() {
    let info = json(&["instance", "info", &data("tsp/burma14.tsp"), "--json"]);
    assert_eq!(info["family"], "tsp");
    assert_eq!(info["size"], "n=14");
    assert_eq!(info["features"]["edge_weight_type"], "GEO");
    assert!(info["features"]["nn_cv"].as_f64().unwrap() > 0.0);
    assert_eq!(info["best_known"]["value"], 3323);
    let e = error_of(&["solve", &data("tsp/gr17.tsp"), "--rho", "1.5"]);
    assert!(e.contains("rho"), "{e}");
    let e = error_of(&["solve", &data("tsp/gr17.tsp"), "--tenure", "3"]);
    assert!(e.contains("does not apply"), "{e}");
    let e = error_of(&["solve", &data("tsp/gr17.tsp"), "--algo", "sts"]);
    assert!(e.contains("unknown tsp algorithm"), "{e}");
}

#[test]
fn malformed_tsp_file_gives_one_error_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.tsp");
    std::fs::write(
        &file,
        "NAME: bad\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 x 0\n3 1 1\n",
    )
    .unwrap();
    let e = error_of(&["instance", "info", file.to_str().unwrap()]);
    assert!(e.contains("bad.tsp:7:"), "{e}");
}

#[test]
fn generate_hwsw_then_solve_and_info() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("g.hwsw");
    let f = file.to_str().unwrap();
    let out = generate_hwsw(["30", "60", "10", "high", "4"], Some(f));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("# SYNTHETIC"));
    // The same command to stdout gives the same file.
    let again = generate_hwsw(["30", "60", "10", "high", "4"], None);
    assert_eq!(String::from_utf8_lossy(&again.stdout), text);
    let info = json(&["instance", "info", f, "--json"]);
    assert_eq!(info["family"], "hwsw");
    assert_eq!(info["class"], "hwsw:ccr=10,r=high,size=small");
    assert_eq!(info["features"]["nodes"], 30);
    let r = json(&["solve", f, "--json", "--seed", "3"]);
    assert_eq!(r["algorithm"], "sts");
    let x: Vec<u64> = r["solution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(x.len(), 30);
    assert!(x.iter().all(|&v| v <= 1), "a 0/1 vector, not 1-based");
    assert!(r["best_known"].is_null());
    let shipped = json(&[
        "solve",
        &data("hwsw/crc32-synthetic.hwsw"),
        "--json",
        "--tenure",
        "10",
    ]);
    assert_eq!(shipped["family"], "hwsw");
}

#[test]
fn generate_hwsw_rejects_bad_arguments() {
    let base = ["instance", "generate", "hwsw", "--seed", "1"];
    let e = error_of(
        &[
            &base[..],
            &[
                "--nodes",
                "1",
                "--edges",
                "0",
                "--ccr",
                "1",
                "--r-level",
                "low",
            ],
        ]
        .concat(),
    );
    assert!(e.contains("--nodes"), "{e}");
    let e = error_of(
        &[
            &base[..],
            &[
                "--nodes",
                "4",
                "--edges",
                "7",
                "--ccr",
                "1",
                "--r-level",
                "low",
            ],
        ]
        .concat(),
    );
    assert!(e.contains("--edges"), "{e}");
    let e = error_of(
        &[
            &base[..],
            &[
                "--nodes",
                "4",
                "--edges",
                "3",
                "--ccr=-1",
                "--r-level",
                "low",
            ],
        ]
        .concat(),
    );
    assert!(e.contains("--ccr"), "{e}");
    let out = mats(
        &[
            &base[..],
            &[
                "--nodes",
                "4",
                "--edges",
                "3",
                "--ccr",
                "1",
                "--r-level",
                "medium",
            ],
        ]
        .concat(),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("low, high"));
}

#[test]
fn infeasible_hwsw_file_is_detected_and_bad_lines_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.hwsw");
    std::fs::write(&file, "HWSW 2 1 10\n1 2\n3 4\n1 3 5\n").unwrap();
    let e = error_of(&["instance", "info", file.to_str().unwrap()]);
    assert!(
        e.contains("bad.hwsw:4:") && e.contains("outside 1..=2"),
        "{e}"
    );
}

#[test]
fn hwsw_gpu_arguments_are_checked_before_the_gpu() {
    let file = data("hwsw/crc32-synthetic.hwsw");
    let e = error_of(&["solve", &file, "--backend", "gpu", "--algo", "nope"]);
    assert!(e.contains("separate, compact, fused, gpts-multi"), "{e}");
    let e = error_of(&[
        "solve",
        &file,
        "--backend",
        "gpu",
        "--algo",
        "fused",
        "--solutions",
        "8",
    ]);
    assert!(
        e.contains("--solutions does not apply to hwsw `fused`"),
        "{e}"
    );
    let e = error_of(&["solve", &file, "--backend", "gpu", "--ants", "8"]);
    assert!(e.contains("--ants"), "{e}");
    let e = error_of(&[
        "solve",
        &file,
        "--backend",
        "gpu",
        "--algo",
        "compact",
        "--restart-stall",
        "2",
    ]);
    assert!(e.contains("--restart-stall does not apply"), "{e}");
    let e = error_of(&["solve", &file, "--backend", "gpu", "--perturbation", "0.5"]);
    assert!(e.contains("--perturbation does not apply"), "{e}");
}

#[test]
fn pfsp_relinking_flags_are_checked_before_the_gpu() {
    let file = data("pfsp/tai20_5.txt");
    let gpu = |extra: &[&str]| {
        let mut args = vec!["solve", file.as_str(), "--index", "1", "--backend", "gpu"];
        args.extend_from_slice(extra);
        error_of(&args)
    };
    let e = gpu(&["--relink", "--elite", "0"]);
    assert!(e.contains("--elite") && e.contains("1..=1024"), "{e}");
    let e = gpu(&["--algo", "tabu-prefix", "--relink"]);
    assert!(e.contains("--relink does not apply"), "{e}");
    let e = error_of(&["solve", &file, "--index", "1", "--elite", "8"]);
    assert!(e.contains("--elite applies to --backend gpu only"), "{e}");
}

#[test]
fn pfsp_beam_flags_are_checked_before_the_gpu() {
    let file = data("pfsp/tai20_5.txt");
    let gpu = |extra: &[&str]| {
        let mut args = vec!["solve", file.as_str(), "--index", "1", "--backend", "gpu"];
        args.extend_from_slice(extra);
        error_of(&args)
    };
    let e = gpu(&["--beam", "wide"]);
    assert!(e.contains("--beam") && e.contains("integer"), "{e}");
    let e = gpu(&["--algo", "tabu-prefix", "--beam", "4096"]);
    assert!(e.contains("--beam does not apply"), "{e}");
    let e = gpu(&["--algo", "ig-warp", "--beam-idle-weight", "3"]);
    assert!(e.contains("--beam-idle-weight does not apply"), "{e}");
    let e = error_of(&["solve", &file, "--index", "1", "--beam", "4096"]);
    assert!(e.contains("--beam applies to --backend gpu only"), "{e}");
}

#[test]
fn hwsw_restart_from_is_checked_before_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.hwsw");
    let g = g.to_str().unwrap();
    let made = generate_hwsw(["30", "60", "1", "low", "2"], Some(g));
    assert!(made.status.success(), "{made:?}");
    let e = error_of(&["solve", g, "--backend", "gpu", "--restart-from", "best"]);
    assert!(
        e.contains("--restart-from is elite or own, found \"best\""),
        "{e}"
    );
    let e = error_of(&[
        "solve",
        g,
        "--backend",
        "gpu",
        "--algo",
        "fused",
        "--restart-from",
        "own",
    ]);
    assert!(e.contains("--restart-from does not apply"), "{e}");
    let e = error_of(&["solve", g, "--restart-from", "own"]);
    assert!(
        e.contains("--restart-from applies to --backend gpu only"),
        "{e}"
    );
}

#[test]
fn generated_tsp_files_repeat_per_seed_and_focused_solves_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name).display().to_string();
    for (file, seed) in [("a.tsp", "4"), ("b.tsp", "4"), ("c.tsp", "5")] {
        let out = mats(&[
            "instance",
            "generate",
            "tsp",
            "--n",
            "300",
            "--seed",
            seed,
            "-o",
            &path(file),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let read = |f: &str| std::fs::read_to_string(path(f)).expect("written");
    assert_eq!(read("a.tsp"), read("b.tsp"), "the same seed, the same file");
    assert_ne!(read("a.tsp"), read("c.tsp"));
    let report = json(&[
        "solve",
        &path("a.tsp"),
        "--algo",
        "focused",
        "--iterations",
        "50",
        "--ants",
        "4",
        "--candidates",
        "12",
        "--ls-neighbours",
        "6",
        "--min-new-edges",
        "3",
        "--source-tour",
        "own",
        "--or-opt",
        "off",
        "--json",
    ]);
    let tour = solution_of(&report);
    let mut sorted = tour.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..300).collect::<Vec<_>>());
    for (algo, flag, value, says) in [
        ("focused", "--or-opt", "maybe", "--or-opt takes on or off"),
        ("focused", "--source-tour", "x", "iteration, best, own"),
        ("mmas", "--min-new-edges", "4", "does not apply"),
        (
            "focused",
            "--ls-neighbours",
            "20",
            "must not exceed `candidates`",
        ),
    ] {
        let e = error_of(&["solve", &path("a.tsp"), "--algo", algo, flag, value]);
        assert!(e.contains(says), "{flag} {value}: {e}");
    }
}

/// `mats bench strategies` prints each space and the aggregate under both score definitions,
/// and its JSON holds Kernel Tuner's score beside mats' for every strategy.
#[test]
fn bench_strategies_prints_both_score_definitions() {
    let cache = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../search/tests/data/convolution-a100-small.json"
    ));
    let dir = tempfile::tempdir().expect("temp dir");
    let json_path = dir.path().join("study.json");
    // A second space for the aggregate: the same table under another name (the same file
    // twice is refused: it would count twice).
    let twin = dir.path().join("convolution-twin.json");
    std::fs::copy(&cache, &twin).expect("copy");
    let cache = cache.display().to_string();
    let e = error_of(&["bench", "strategies", &cache, &cache, "--seeds", "1"]);
    assert!(e.contains("named twice"), "{e}");
    let twin = twin.display().to_string();
    let out = mats(&[
        "bench",
        "strategies",
        &cache,
        &twin,
        "--seeds",
        "3",
        "--first-seed",
        "100",
        "--budgets",
        "10,25",
        "--strategies",
        "guided-climbing,random",
        "--json",
        &json_path.display().to_string(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.matches("Kernel Tuner's score").count(),
        3,
        "{stdout}"
    );
    assert!(stdout.contains("guided-climbing"), "{stdout}");
    let study: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("json written"))
            .expect("valid JSON");
    let row = &study["spaces"][0]["strategies"][0];
    assert_eq!(row["kernel_tuner"]["at"].as_array().map(Vec::len), Some(2));
    assert!(row["kernel_tuner"]["aggregate"].as_f64().is_some(), "{row}");
    assert_eq!(study["first_seed"].as_u64(), Some(100), "{study}");
    let e = error_of(&[
        "bench",
        "strategies",
        &cache,
        "--seeds",
        "2",
        "--first-seed",
        &u64::MAX.to_string(),
    ]);
    assert!(
        e.contains("--first-seed") && e.contains("past the last seed"),
        "{e}"
    );
}

// `--target-gap` ends a run at the first solution within the gap and says when; `--trace`
// records every improvement of the best. A target no run can reach leaves the budget whole.
#[test]
fn solve_stops_at_the_target_and_traces_the_best() {
    let file = data("qap/tai20a.dat");
    let run = |extra: &[&str]| {
        let mut args = vec!["--iterations", "400000"];
        args.extend_from_slice(extra);
        qap_report(&file, &args)
    };
    let r = run(&["--target-gap", "3", "--trace"]);
    let target = &r["target"];
    // tai20a's best known is 703482; 3% above it, rounded down.
    assert_eq!(target["objective"].as_i64(), Some(703482 + 21104));
    let reached = target["reached_after_s"]
        .as_f64()
        .expect("tai20a gets within 3%");
    assert!(reached <= r["seconds"].as_f64().unwrap());
    assert!(r["objective"].as_i64().unwrap() <= 703482 + 21104);
    assert!(
        r["iterations"].as_u64().unwrap() < 400_000,
        "the target ends the run: {}",
        r["iterations"]
    );
    let trace = r["trace"].as_array().expect("--trace writes the trace");
    assert!(trace.len() >= 2, "{trace:?}");
    for pair in trace.windows(2) {
        assert!(pair[1]["objective"].as_i64() < pair[0]["objective"].as_i64());
        assert!(pair[1]["seconds"].as_f64() >= pair[0]["seconds"].as_f64());
    }
    let last = trace.last().unwrap();
    assert_eq!(last["objective"], r["objective"]);
    assert_eq!(last["seconds"].as_f64(), Some(reached));
    let gap = last["gap_percent"].as_f64().unwrap();
    assert!((gap - r["gap_percent"].as_f64().unwrap()).abs() < 1e-12);

    // Unreachable: the whole budget runs, the target says it was not reached, no trace.
    let r = json(&[
        "solve",
        &file,
        "--json",
        "--iterations",
        "2000",
        "--target",
        "1",
    ]);
    assert_eq!(r["iterations"].as_u64(), Some(2000));
    assert!(r["target"]["reached_after_s"].is_null(), "{}", r["target"]);
    assert!(r.get("trace").is_none());

    // The flowshop's iterated greedy stops at its target too; the text names the time.
    let pfsp = data("pfsp/tai20_5.txt");
    let out = common::mats(&[
        "solve",
        &pfsp,
        "--index",
        "1",
        "--time-limit",
        "30",
        "--target-gap",
        "0.5",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // 0.5% of ta001's 1278 is 6.39, so the target is 1284 (0.469% above).
    assert!(
        text.contains("target     1284 (0.469% above the best known): reached after"),
        "{text}"
    );
}

#[test]
fn solve_refuses_targets_it_cannot_judge() {
    let file = data("qap/tai20a.dat");
    let err = error_of(&[
        "solve",
        &file,
        "--target-gap",
        "1",
        "--bks",
        &data("qap/tai20a.sln"),
    ]);
    assert!(err.contains("tai20a.sln"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let generated = dir.path().join("g.dat");
    let generated = generated.to_str().unwrap();
    let out = common::mats(&[
        "instance", "generate", "qap", "--n", "12", "--seed", "1", "-o", generated,
    ]);
    assert!(out.status.success());
    let err = error_of(&["solve", generated, "--target-gap", "1"]);
    assert!(
        err.contains("--target-gap needs a best-known value for g") && err.contains("--bks"),
        "{err}"
    );
    let err = error_of(&["solve", &file, "--target-gap", "NaN"]);
    assert!(
        err.contains("--target-gap must be a percentage >= 0"),
        "{err}"
    );
}

// `mats instance score` must give the objective `mats solve` reported for its own answer, in
// every family and in each way a solution is written (the `--json` array, the text line, a
// plain 0-based list), and name what is wrong with a solution that is not one.
#[test]
fn instance_score_rescores_solutions_from_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let hwsw = dir.path().join("g.hwsw");
    let hwsw_file = hwsw.to_str().unwrap().to_string();
    let generated = generate_hwsw(["20", "40", "1", "low", "3"], Some(&hwsw_file));
    assert!(generated.status.success());
    let cases = [
        (data("qap/tai12a.dat"), vec!["--iterations", "200"]),
        (
            data("pfsp/tai20_5.txt"),
            vec!["--index", "1", "--iterations", "20"],
        ),
        (
            data("tsp/eil51.tsp"),
            vec!["--algo", "as", "--iterations", "5"],
        ),
        (hwsw_file.clone(), vec!["--iterations", "200"]),
    ];
    for (file, extra) in &cases {
        let mut args = vec!["solve", file.as_str(), "--json"];
        args.extend_from_slice(extra);
        let r = json(&args);
        let index: Vec<&str> = extra
            .windows(2)
            .filter(|w| w[0] == "--index")
            .flat_map(|w| w.to_vec())
            .collect();
        let array = dir.path().join("array.json");
        std::fs::write(&array, r["solution"].to_string()).unwrap();
        let mut score = vec!["instance", "score", file.as_str(), "--json", "--solution"];
        score.push(array.to_str().unwrap());
        score.extend_from_slice(&index);
        let s = json(&score);
        assert_eq!(s["objective"], r["objective"], "{file}");
        assert_eq!(s["instance"], r["instance"], "{file}");
        if r["best_known"].is_i64() {
            assert_eq!(s["gap_percent"], r["gap_percent"], "{file}");
        }
        // The whole `mats solve --json` answer, as saved with `> answer.json`.
        let answer = dir.path().join("answer.json");
        std::fs::write(&answer, r.to_string()).unwrap();
        let mut whole = vec!["instance", "score", file.as_str(), "--json", "--solution"];
        whole.push(answer.to_str().unwrap());
        whole.extend_from_slice(&index);
        assert_eq!(json(&whole)["objective"], r["objective"], "{file}");
    }

    // An answer whose stated objective is not its score, or that answers another instance,
    // is refused with the reason.
    let r = json(&[
        "solve",
        &data("qap/tai12a.dat"),
        "--json",
        "--iterations",
        "50",
    ]);
    let answer = dir.path().join("edited.json");
    let refusal = |instance: &str, answer_text: String| {
        std::fs::write(&answer, answer_text).unwrap();
        let file = data(instance);
        error_of(&[
            "instance",
            "score",
            &file,
            "--solution",
            answer.to_str().unwrap(),
        ])
    };
    let mut edited = r.clone();
    edited["objective"] = serde_json::json!(r["objective"].as_i64().unwrap() - 1);
    let err = refusal("qap/tai12a.dat", edited.to_string());
    assert!(
        err.contains("states objective") && err.contains("edited.json"),
        "{err}"
    );
    let err = refusal("qap/nug12.dat", r.to_string());
    assert!(err.contains("answers instance tai12a, not nug12"), "{err}");
    let err = refusal("qap/nug12.dat", "{\"objective\": 3}".into());
    assert!(err.contains("without a `solution` array"), "{err}");

    // The text line `mats solve` prints, and the same permutation 0-based.
    let tai12a = data("qap/tai12a.dat");
    let r = json(&["solve", &tai12a, "--json", "--iterations", "100"]);
    let one_based: Vec<u64> = r["solution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let line = dir.path().join("line.txt");
    let text: Vec<String> = one_based.iter().map(|v| v.to_string()).collect();
    std::fs::write(&line, format!("solution   {}\n", text.join(" "))).unwrap();
    let zero = dir.path().join("zero.txt");
    let text: Vec<String> = one_based.iter().map(|v| (v - 1).to_string()).collect();
    std::fs::write(&zero, text.join(",")).unwrap();
    let from_line = json(&[
        "instance",
        "score",
        &tai12a,
        "--json",
        "--solution",
        line.to_str().unwrap(),
    ]);
    let from_zero = json(&[
        "instance",
        "score",
        &tai12a,
        "--json",
        "--zero-based",
        "--solution",
        zero.to_str().unwrap(),
    ]);
    assert_eq!(from_line["objective"], r["objective"]);
    assert_eq!(from_zero["objective"], r["objective"]);
    let text = mats(&[
        "instance",
        "score",
        &tai12a,
        "--solution",
        line.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains(&format!("objective  {}", r["objective"])),
        "{text}"
    );

    // Binary input (or an endless stream) is one error line, not a read without end.
    #[cfg(unix)]
    {
        let out = mats(&["instance", "score", &tai12a, "--solution", "/dev/zero"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("/dev/zero") && err.contains("NUL byte"),
            "{err}"
        );
    }

    // QAPLIB's own .sln files, whatever convention each uses (tai40a.sln is 0-based).
    for (name, convention) in [("tai12a", "one-based"), ("tai40a", "zero-based")] {
        let s = json(&[
            "instance",
            "score",
            &data(&format!("qap/{name}.dat")),
            "--json",
            "--solution",
            &data(&format!("qap/{name}.sln")),
        ]);
        assert_eq!(s["sln_convention"], convention, "{name}");
        assert_eq!(s["gap_percent"], 0.0, "{name}");
    }
    // The text output says the reading in words.
    let text = mats(&[
        "instance",
        "score",
        &data("qap/tai40a.dat"),
        "--solution",
        &data("qap/tai40a.sln"),
    ]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains("the stated cost, read 0-based, the i-th value the location of facility i"),
        "{text}"
    );
    let e = error_of(&[
        "instance",
        "score",
        &tai12a,
        "--solution",
        &data("qap/tai40a.sln"),
    ]);
    assert!(e.contains("tai40a.sln: solution has n = 40"), "{e}");
    let e = error_of(&[
        "instance",
        "score",
        &tai12a,
        "--zero-based",
        "--solution",
        &data("qap/tai12a.sln"),
    ]);
    assert!(
        e.contains("--zero-based does not apply to the QAPLIB file"),
        "{e}"
    );
    assert!(from_line.get("sln_convention").is_none());

    // Not solutions: each error names the file and what is wrong, in the user's numbering.
    let bad = dir.path().join("bad.txt");
    let bad_file = bad.to_str().unwrap();
    for (content, expected) in [
        ("1 2 3", "it has 3 values, the instance needs 12"),
        (
            "1 2 3 4 5 6 7 8 9 10 11 11",
            "11 appears twice (at positions 11 and 12)",
        ),
        (
            "1 2 3 4 5 6 7 8 9 10 11 13",
            "the value at position 12 is 13, outside 1..=12",
        ),
        (
            "0 1 2 3 4 5 6 7 8 9 10 11",
            "value 1 is 0, but permutations are read 1-based",
        ),
        ("1 2 x", "value 3 is 'x'"),
        ("", "holds no values"),
    ] {
        std::fs::write(&bad, content).unwrap();
        let e = error_of(&["instance", "score", &tai12a, "--solution", bad_file]);
        assert!(
            e.contains(expected) && e.contains("bad.txt"),
            "{content}: {e}"
        );
    }
    let e = error_of(&[
        "instance",
        "score",
        &tai12a,
        "--solution",
        "no-such-file.txt",
    ]);
    assert!(
        e.contains("no-such-file.txt: cannot read") && e.contains("No such file"),
        "{e}"
    );
    std::fs::write(&bad, "1 1 0").unwrap();
    let e = error_of(&["instance", "score", &hwsw_file, "--solution", bad_file]);
    assert!(e.contains("bad.txt") && e.contains("g.hwsw"), "{e}");
}

/// `mats instance reference` takes a graph's value from the lowest of a new search, an earlier
/// table and re-scored `mats solve --json` answers, and refuses an answer whose stated cost its
/// solution does not re-score to.
#[test]
fn a_reference_table_keeps_the_lowest_re_scored_value() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let graph = at("g60.hwsw");
    let out = generate_hwsw(["60", "120", "1", "low", "4"], Some(&graph));
    assert!(out.status.success());
    let reference_args = |args: &[&str]| -> Vec<String> {
        ["instance", "reference", &graph]
            .iter()
            .chain(args)
            .map(|a| a.to_string())
            .collect()
    };
    // Runs `mats instance reference GRAPH ARGS...` and returns its standard error.
    let reference = |args: &[&str]| -> String {
        let all = reference_args(args);
        let out = mats(&all.iter().map(String::as_str).collect::<Vec<_>>());
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    let value_in = |table: &str| -> (i64, String) {
        let text = std::fs::read_to_string(table).unwrap();
        let mut rows = csv::Reader::from_reader(text.as_bytes());
        let header = rows.headers().unwrap().clone();
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let row = rows
            .records()
            .map(Result::unwrap)
            .find(|r| &r[0] == "g60")
            .unwrap();
        assert_eq!((&row[1], &row[2]), ("hwsw", "60"), "{text}");
        (
            row[col("bks")].parse().unwrap(),
            row[col("method")].to_string(),
        )
    };
    // One iteration from all hardware: a poor reference that a solver beats.
    let first = at("first.csv");
    reference(&["--seeds", "1", "--iterations", "1", "-o", &first]);
    let (searched, method) = value_in(&first);
    assert!(method.contains("1 x 1 iterations"), "{method}");

    let answers = at("answers");
    std::fs::create_dir(&answers).unwrap();
    let report = json(&[
        "solve",
        &graph,
        "--time-limit",
        "0.3",
        "--seed",
        "1",
        "--json",
    ]);
    let answered = report["objective"].as_i64().unwrap();
    assert!(answered < searched, "{answered} vs {searched}");
    std::fs::write(format!("{answers}/s1.json"), report.to_string()).unwrap();
    let second = at("second.csv");
    let fold = [
        "--seeds",
        "0",
        "--previous",
        &first,
        "--answers",
        &answers,
        "-o",
        &second,
    ];
    let log = reference(&fold);
    assert!(
        log.contains(&format!("g60: {searched} -> {answered}")),
        "{log}"
    );
    let (value, method) = value_in(&second);
    assert_eq!(value, answered);
    assert!(
        method.contains("seed 1") && method.contains("re-scored"),
        "{method}"
    );
    // Run again on its own output: nothing changes.
    let third = at("third.csv");
    reference(&[
        "--seeds",
        "0",
        "--previous",
        &second,
        "--answers",
        &answers,
        "-o",
        &third,
    ]);
    assert_eq!(
        std::fs::read_to_string(&second).unwrap(),
        std::fs::read_to_string(&third).unwrap()
    );

    let mut forged = report.clone();
    forged["objective"] = serde_json::json!(answered - 1);
    std::fs::write(format!("{answers}/s2.json"), forged.to_string()).unwrap();
    let all = reference_args(&fold);
    let e = error_of(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        e.contains("s2.json") && e.contains(&format!("re-scores to {answered}")),
        "{e}"
    );
    let e = error_of(&["instance", "reference", &graph, "--seeds", "0"]);
    assert!(e.contains("--previous") && e.contains("--answers"), "{e}");
}

#[test]
fn an_instance_without_moves_ends_at_once_without_blaming_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.dat");
    std::fs::write(&one, "1\n7\n3\n").unwrap();
    let started = std::time::Instant::now();
    let out = mats(&["solve", one.to_str().unwrap(), "--time-limit", "5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(started.elapsed().as_secs_f64() < 4.0);
    assert!(!err.contains("time limit ended"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("objective  21"));
}

/// A variable set to something mats cannot read is an error naming it: ignored, it capped a
/// file at the default while the error asked the user to raise that very variable.
#[test]
fn malformed_environment_variables_are_named() {
    let run = |var: &str, value: &str, args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mats"))
            .args(args)
            .env(var, value)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).trim().to_string()
    };
    let file = data("qaplib/tai35a.dat");
    for bad in ["2G", "0", "-5"] {
        let e = run("MATS_MAX_INPUT_BYTES", bad, &["instance", "info", &file]);
        assert!(
            e.contains("MATS_MAX_INPUT_BYTES must be a positive number of bytes")
                && e.contains("tai35a.dat")
                && e.lines().count() == 1,
            "{e}"
        );
    }
    let socket = tempfile::tempdir().unwrap();
    let socket = socket.path().join("no-daemon.sock");
    for bad in ["2m", "0", "inf"] {
        let e = run(
            "MATS_DAEMON_TIMEOUT",
            bad,
            &["status", "--socket", socket.to_str().unwrap()],
        );
        assert!(
            e.contains("MATS_DAEMON_TIMEOUT") && e.contains("out of range"),
            "{e}"
        );
    }
}

/// The TOML example of a README that follows `opening` (which ends with "```toml\n"), as a
/// user would copy it.
fn readme_example(readme: &str, opening: &str) -> String {
    let text = std::fs::read_to_string(common::repo(readme)).unwrap();
    let start = text.find(opening).expect("the example's opening") + opening.len();
    let end = start + text[start..].find("```").expect("the example's end");
    text[start..end].to_string()
}

/// campaigns/README.md's format example is a campaign a user can copy: `--check` accepts it.
#[test]
fn the_campaign_format_example_is_valid() {
    let example = readme_example("campaigns/README.md", "```toml\n");
    assert!(
        example.starts_with("name = \"format-example\""),
        "{example}"
    );
    // Its paths are relative to campaigns/: the same layout in a scratch folder.
    let tmp = tempfile::tempdir().unwrap();
    for folder in ["data", "spaces"] {
        std::os::unix::fs::symlink(common::repo(folder), tmp.path().join(folder)).unwrap();
    }
    std::fs::create_dir(tmp.path().join("campaigns")).unwrap();
    let path = tmp.path().join("campaigns/example.toml");
    std::fs::write(&path, &example).unwrap();
    let out = mats(&["tune", path.to_str().unwrap(), "--check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// spaces/README.md's format example is a space a user can copy: `mats space show` loads it
/// (its constraints named parameters it never declared).
#[test]
fn the_space_format_example_is_valid() {
    let example = readme_example("spaces/README.md", "## Format\n\n```toml\n");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("example.toml");
    std::fs::write(&path, example).unwrap();
    let out = mats(&["space", "show", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Ctrl-C or SIGTERM ends `mats solve` with its best so far, printed and re-scored like any
/// answer, and exit status 130 (it used to die with nothing printed).
#[cfg(unix)]
#[test]
fn a_stopped_solve_prints_its_best_so_far() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/qap/tai40a.dat");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_mats"))
        .args([
            "solve",
            file,
            "--time-limit",
            "60",
            "--json",
            "--threads",
            "1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mats starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let asked = std::time::Instant::now();
    // SAFETY: signalling the child this test started and still owns.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let done = child.wait_with_output().expect("mats ends");
    assert!(asked.elapsed().as_secs() < 20, "it did not stop soon");
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{err}");
    assert!(
        err.contains("SIGTERM") && err.contains("best found so far"),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).expect("JSON");
    assert_eq!(report["interrupted"], "SIGTERM", "{report}");
    let solution: Vec<String> = report["solution"]
        .as_array()
        .expect("a solution")
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert_eq!(solution.len(), 40);
    // The printed objective is the solution's (re-scored independently).
    let dir = tempfile::tempdir().expect("temp dir");
    let sln = dir.path().join("answer.txt");
    std::fs::write(&sln, solution.join(" ")).expect("write");
    let scored = mats(&[
        "instance",
        "score",
        file,
        "--solution",
        sln.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&scored.stdout);
    assert!(
        text.contains(&report["objective"].to_string()),
        "{text} vs {report}"
    );
}

/// Inputs a benchmark or an instance command cannot use are refused before any work, naming
/// the flag, file or value: an unwritable --json (it used to fail after the whole run), an
/// external curve below the space's optimum (scored 345-652 on a 0-1 scale), --class on a
/// cache, an integer past i64, --zero-based for a HW/SW assignment, and two different graphs
/// under one name for a reference table (the row depended on argument order).
#[test]
fn benchmark_and_instance_inputs_are_checked_first() {
    let cache = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../search/tests/data/convolution-a100-small.json"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name).display().to_string();
    let e = error_of(&[
        "bench",
        "strategies",
        cache,
        "--seeds",
        "1",
        "--json",
        "/nonexistent/x.json",
    ]);
    assert!(e.contains("--json") && e.contains("does not exist"), "{e}");
    let e = error_of(&["bench", "strategies", cache, "--class", "x"]);
    assert!(e.contains("--class"), "{e}");
    std::fs::write(
        path("ext.json"),
        r#"{"tool":"kernel_tuner","strategies":{"convolution-a100-small":{"ga":[[0.0001]]}}}"#,
    )
    .unwrap();
    let e = error_of(&[
        "bench",
        "strategies",
        cache,
        "--seeds",
        "1",
        "--budgets",
        "10",
        "--strategies",
        "random",
        "--external",
        &path("ext.json"),
    ]);
    assert!(
        e.contains("below the space's optimum") && e.contains("\"ga\""),
        "{e}"
    );
    let e = error_of(&["bench", "strategies", cache, "--budgets", "2,20,20"]);
    assert!(e.contains("--budgets lists 20 twice"), "{e}");
    std::fs::write(
        path("ext2.json"),
        r#"{"tool":"kernel_tuner","strategies":{"convolution-a100-small":{"ga":[[0.002, 0.001]]},"other":{"ga":[[1.0]]}}}"#,
    )
    .unwrap();
    let out = mats(&[
        "bench",
        "strategies",
        cache,
        "--seeds",
        "2",
        "--budgets",
        "10",
        "--strategies",
        "random",
        "--external",
        &path("ext2.json"),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("\"other\""), "{stderr}");
    assert!(stdout.contains("(one seed)"), "{stdout}");

    std::fs::write(path("big.dat"), "2\n0 9223372036854775808\n1 0\n0 1\n1 0\n").unwrap();
    let e = error_of(&["instance", "info", &path("big.dat")]);
    assert!(e.contains("out of range"), "{e}");

    let graph = |seed: &str, file: &str| {
        let run = mats(&[
            "instance",
            "generate",
            "hwsw",
            "--nodes",
            "14",
            "--edges",
            "20",
            "--ccr",
            "1",
            "--r-level",
            "high",
            "--seed",
            seed,
            "-o",
            file,
        ]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    };
    std::fs::create_dir_all(path("a")).unwrap();
    std::fs::create_dir_all(path("b")).unwrap();
    graph("1", &path("a/g.hwsw"));
    graph("2", &path("b/g.hwsw"));
    let e = error_of(&[
        "instance",
        "reference",
        &path("a/g.hwsw"),
        &path("b/g.hwsw"),
        "--seeds",
        "1",
        "--iterations",
        "100",
    ]);
    assert!(e.contains("two different graphs are named g"), "{e}");
    std::fs::write(path("x.txt"), "0 ".repeat(14)).unwrap();
    let e = error_of(&[
        "instance",
        "score",
        &path("a/g.hwsw"),
        "--solution",
        &path("x.txt"),
        "--zero-based",
    ]);
    assert!(e.contains("--zero-based does not apply"), "{e}");
}

/// `tune --check --json` prints JSON only on stdout (it printed the text line).
#[test]
fn a_campaign_check_in_json_is_json() {
    let out = mats(&["tune", "campaigns/quickstart.toml", "--check", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["campaign"], "quickstart", "{v}");
    // An invalid campaign: `valid` false and the error on stdout, the error line on stderr,
    // a non-zero status (it printed no JSON, so `valid` could only ever read true).
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "name = \"bad\"\nbackend = \"cpu\"\nseeed = 1\n").unwrap();
    let out = mats(&["tune", bad.to_str().unwrap(), "--check", "--json"]);
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["valid"], false, "{v}");
    let error = v["error"].as_str().unwrap();
    assert!(error.contains("seeed") && error.contains("bad.toml"), "{v}");
    // The same line as stderr's (it held the TOML parser's multi-line excerpt instead).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim(), format!("mats: error: {error}"), "{v}");
}
