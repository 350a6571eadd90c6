//! `mats space show` end to end.

use std::process::{Command, Output};

fn space(rel: &str) -> String {
    format!("{}/../../spaces/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn mats(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(args)
        .output()
        .expect("the mats binary runs")
}

#[test]
fn space_show_prints_parameters_constraints_and_counts() {
    let out = mats(&["space", "show", &space("qap.toml")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "child_threads",
        "when variant == \"2opt-dyn\"",
        "--ptxas-options=-O{}",
        "max_threads = 1024",
        "solutions % threads == 0",
        "valid points:                71696384",
        "product of the domains:",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let out = mats(&["space", "show", "--json", &space("qap-small.toml")]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["valid_points"], 384);
}

#[test]
fn space_show_reports_a_bad_file_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "[[param]]\nname = \"a\"\nkind = \"launch\"\nvalues = [1]\nstep = 2\n",
    )
    .expect("write");
    let out = mats(&["space", "show", &path.display().to_string()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:5:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}
