//! Regression tests for the panics, aborts and silent overflows of issue 16: each input that
//! once crashed mats or printed a wrapped-around objective now gets one clear line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(rel: &str) -> String {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data"))
        .join(rel)
        .display()
        .to_string()
}

fn mats(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(args)
        .output()
        .expect("the mats binary runs")
}

/// mats under a virtual-memory limit (KiB), so an allocation that once aborted the process
/// fails the test instead of swapping the machine; `None` where `ulimit` is unavailable.
fn mats_limited(kib: u64, args: &[&str]) -> Option<Output> {
    if !Path::new("/bin/sh").exists() || !cfg!(target_os = "linux") {
        eprintln!("skipped: no /bin/sh to set a memory limit");
        return None;
    }
    let script = format!("ulimit -v {kib} && exec \"$0\" \"$@\"");
    Some(
        Command::new("/bin/sh")
            .arg("-c")
            .arg(script)
            .arg(env!("CARGO_BIN_EXE_mats"))
            .args(args)
            .output()
            .expect("sh runs"),
    )
}

fn assert_no_panic(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !stderr.contains("memory allocation"),
        "allocation failure: {stderr}"
    );
    assert!(out.status.code().is_some(), "killed by a signal: {stderr}");
}

/// The single error line of a command that must fail.
fn error_of(args: &[&str]) -> String {
    let out = mats(args);
    assert_no_panic(&out);
    assert!(!out.status.success(), "mats {args:?} should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr}");
    stderr
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write test input");
    path.display().to_string()
}

#[test]
fn qap_entries_whose_objective_would_wrap_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // n = 2, every entry 2^32: the objective 4 x 2^64 used to print as 0.
    let big = "4294967296 ".repeat(8);
    let file = write(dir.path(), "big.dat", &format!("2\n{big}\n"));
    let e = error_of(&["solve", &file]);
    assert!(
        e.contains("big.dat") && e.contains("worst-case objective"),
        "{e}"
    );
    assert!(e.contains("664082786653543858176"), "names the value: {e}");
    let file = write(
        dir.path(),
        "max.dat",
        "2\n9223372036854775807 1 1 1\n1 1 1 1\n",
    );
    let e = error_of(&["solve", &file]);
    assert!(e.contains("exceeds 2^61"), "{e}");
}

#[test]
fn flowshop_times_whose_makespan_would_wrap_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "max.txt", "2 2\n9223372036854775807 1\n1 1\n");
    let e = error_of(&["solve", &file, "--family", "pfsp"]);
    assert!(e.contains("sum of all processing times"), "{e}");
}

#[test]
fn tsp_weights_and_coordinates_whose_tours_would_wrap_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let explicit = write(
        dir.path(),
        "w.tsp",
        "NAME: w\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n\
         EDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n\
         5000000000000000000 5000000000000000000\n5000000000000000000\nEOF\n",
    );
    let e = error_of(&["solve", &explicit]);
    assert!(e.contains("largest weight"), "{e}");
    // Coordinates far apart: the Ant System used to panic (index out of bounds).
    let coords = write(
        dir.path(),
        "c.tsp",
        "NAME: c\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n\
         1 0 0\n2 1e18 0\n3 0 1e18\nEOF\n",
    );
    let e = error_of(&["solve", &coords, "--algo", "as"]);
    assert!(e.contains("longest possible edge"), "{e}");
}

#[test]
fn hwsw_costs_whose_sums_would_wrap_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "x.hwsw",
        "HWSW 2 1 5\n9223372036854775807 3\n1 1\n1 2 5\n",
    );
    let e = error_of(&["solve", &file]);
    assert!(e.contains("node and edge costs"), "{e}");
}

#[test]
fn huge_time_limits_are_refused_not_panicking() {
    let file = data("qap/tai12a.dat");
    for limit in ["1e19", "1e20", "inf"] {
        let e = error_of(&["solve", &file, "--time-limit", limit]);
        assert!(e.contains("--time-limit"), "{e}");
    }
}

#[test]
fn many_starts_do_not_hold_every_outcome_in_memory() {
    // 3 million starts used to keep 3 million solutions (about 450 MB) before reducing.
    let file = data("qap/tai12a.dat");
    let args = [
        "solve",
        &file,
        "--algo",
        "2opt",
        "--starts",
        "3000000",
        "--time-limit",
        "0.05",
        "--threads",
        "2",
    ];
    let Some(out) = mats_limited(300_000, &args) else {
        return;
    };
    assert_no_panic(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn ants_beyond_memory_are_refused_with_one_line() {
    let e = error_of(&["solve", &data("tsp/berlin52.tsp"), "--ants", "1000000000"]);
    assert!(
        e.contains("1000000000 ants") && e.contains("at most"),
        "{e}"
    );
}

#[test]
fn a_huge_tenure_allocates_nothing_up_front() {
    for args in [
        vec![
            "solve".to_string(),
            data("hwsw/rc6-synthetic.hwsw"),
            "--tenure".into(),
            "1000000000".into(),
            "--iterations".into(),
            "5".into(),
        ],
        vec![
            "solve".to_string(),
            data("pfsp/tai20_5.txt"),
            "--index".into(),
            "1".into(),
            "--algo".into(),
            "tabu".into(),
            "--tenure".into(),
            "1000000000".into(),
            "--iterations".into(),
            "5".into(),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let Some(out) = mats_limited(400_000, &args) else {
            return;
        };
        assert_no_panic(&out);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn space_with(dir: &Path, name: &str, constraint: &str, param: &str) -> String {
    write(
        dir,
        name,
        &format!(
            "constraints = [\"{constraint}\"]\n[[param]]\nname = \"{param}\"\n\
             kind = \"runtime\"\nvalues = [1, 2]\n"
        ),
    )
}

#[test]
fn space_names_and_expressions_have_limits() {
    let dir = tempfile::tempdir().unwrap();
    let long_name = "a".repeat(65_536);
    let f = space_with(dir.path(), "name.toml", "true", &long_name);
    let e = error_of(&["space", "show", &f]);
    assert!(e.contains("at most 64"), "{e}");
    assert!(
        e.len() < 300,
        "the message quotes only the name's head: {e}"
    );

    let nested = format!("{}x == 1{}", "(".repeat(50_000), ")".repeat(50_000));
    let f = space_with(dir.path(), "nested.toml", &nested, "x");
    let e = error_of(&["space", "show", &f]);
    assert!(e.contains("at most 1000"), "{e}");
    assert!(e.len() < 400, "{e}");

    let deep = format!("{}x == 1{}", "(".repeat(40), ")".repeat(40));
    let f = space_with(dir.path(), "deep.toml", &deep, "x");
    let e = error_of(&["space", "show", &f]);
    assert!(e.contains("nests 40 levels"), "{e}");

    let bangs = format!("{}true", "!".repeat(50_000));
    let f = space_with(dir.path(), "bangs.toml", &bangs, "x");
    error_of(&["space", "show", &f]);
    let bangs = format!("{}true", "!".repeat(500));
    let f = space_with(dir.path(), "bangs2.toml", &bangs, "x");
    let e = error_of(&["space", "show", &f]);
    assert!(e.contains("nests 500 levels"), "{e}");

    // Within the limits the same shapes still work.
    let ok = format!("{}x == 1{}", "(".repeat(10), ")".repeat(10));
    let f = space_with(dir.path(), "ok.toml", &ok, "x");
    let out = mats(&["space", "show", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_value_longer_than_a_format_width_is_shown() {
    // `{:<w$}` panics for widths above 65,535; the table pads by hand.
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "value.toml",
        &format!(
            "[[param]]\nname = \"x\"\nkind = \"runtime\"\nvalues = [\"{}\"]\n",
            "v".repeat(70_000)
        ),
    );
    let out = mats(&["space", "show", &f]);
    assert_no_panic(&out);
    assert!(out.status.success());
}

#[test]
fn a_second_tune_on_a_folder_in_use_is_refused_naming_the_pid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // This test process plays the first `mats tune`.
    let _held = results::FolderLock::acquire(&out).unwrap();
    let campaign = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../campaigns/quickstart.toml"
    ));
    for mode in ["--resume", "--fresh"] {
        let e = error_of(&[
            "tune",
            campaign.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            mode,
        ]);
        assert!(e.contains("in use"), "{e}");
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
    }
    assert!(
        !out.join("results.sqlite").exists(),
        "a refused run touches nothing in the folder"
    );
}

#[test]
fn a_huge_thread_count_is_refused() {
    // 100,000 threads took 25 s to start (and longer without a memory limit).
    let e = error_of(&["solve", &data("qap/tai12a.dat"), "--threads", "100000"]);
    assert!(e.contains("--threads must be at most 1024"), "{e}");
}

#[test]
fn a_space_too_entangled_to_count_is_refused_not_walked_forever() {
    // Six parameters of 1000 values in one constraint: 10^18 combinations used to hang.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("constraints = [\"a + b + c + d + e + f >= 0\"]\n");
    for name in ["a", "b", "c", "d", "e", "f"] {
        text.push_str(&format!(
            "[[param]]\nname = \"{name}\"\nkind = \"runtime\"\nrange = {{ from = 0, to = 999 }}\n"
        ));
    }
    let f = write(dir.path(), "walk.toml", &text);
    let e = error_of(&["space", "show", &f]);
    assert!(e.contains("narrow those domains"), "{e}");
    // The largest domain allowed, in a constraint, is checked in linear time.
    let f = write(
        dir.path(),
        "wide.toml",
        "constraints = [\"x >= 0\"]\n[[param]]\nname = \"x\"\nkind = \"runtime\"\n\
         range = { from = 0, to = 99999 }\n",
    );
    let out = mats(&["space", "show", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn domains_at_the_ends_of_i64_are_refused_not_looped_over() {
    let dir = tempfile::tempdir().unwrap();
    // pow2 from i64::MAX doubled until it wrapped to 0 and looped forever.
    let f = write(
        dir.path(),
        "pow2.toml",
        "[[param]]\nname = \"x\"\nkind = \"runtime\"\n\
         pow2 = { from = 9223372036854775807, to = 9223372036854775807 }\n",
    );
    let e = error_of(&["space", "show", &f]);
    assert!(e.contains("above 2^62"), "{e}");
    // to - from overflowed i64.
    let f = write(
        dir.path(),
        "range.toml",
        "[[param]]\nname = \"x\"\nkind = \"runtime\"\n\
         range = { from = -9223372036854775808, to = 9223372036854775807 }\n",
    );
    let e = error_of(&["space", "show", &f]);
    assert!(e.contains("more than 100000 values"), "{e}");
    // Many large domains together are refused before they take memory.
    let mut text = String::new();
    for k in 0..30 {
        text.push_str(&format!(
            "[[param]]\nname = \"p{k}\"\nkind = \"runtime\"\nrange = {{ from = 0, to = 90000 }}\n"
        ));
    }
    let f = write(dir.path(), "many.toml", &text);
    let e = error_of(&["space", "show", &f]);
    assert!(e.contains("values in all"), "{e}");
}

#[test]
fn endless_binary_or_oversized_input_ends_with_one_line() {
    if Path::new("/dev/zero").exists() {
        // Used to grow to 24 GB and be killed.
        let e = error_of(&["instance", "info", "/dev/zero"]);
        assert!(e.contains("/dev/zero") && e.contains("NUL byte"), "{e}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(["instance", "info", &data("qap/tai12a.dat")])
        .env("MATS_MAX_INPUT_BYTES", "100")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("larger than 100 bytes"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}

#[test]
fn invalid_utf8_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.dat");
    std::fs::write(&path, b"2\n1 2 3 4\n\xe9 6 7 8\n").unwrap();
    let e = error_of(&["instance", "info", path.to_str().unwrap()]);
    assert!(
        e.contains("latin1.dat:3: not a text file: invalid UTF-8"),
        "{e}"
    );
    assert_eq!(e.matches("UTF-8").count(), 1, "{e}");
    let space = dir.path().join("latin1.toml");
    std::fs::write(&space, b"description = \"\xe9\"\n").unwrap();
    let e = error_of(&["space", "show", space.to_str().unwrap()]);
    assert_eq!(e.matches("UTF-8").count(), 1, "{e}");
}

#[test]
fn explicit_weight_format_errors_use_tsplib_names() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "ldr.tsp",
        "NAME: l\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n\
         EDGE_WEIGHT_FORMAT: LOWER_DIAG_ROW\nEDGE_WEIGHT_SECTION\n0 1 0\nEOF\n",
    );
    let e = error_of(&["instance", "info", &f]);
    assert!(
        e.contains("LOWER_DIAG_ROW") && !e.contains("LowerDiagRow"),
        "{e}"
    );
}
