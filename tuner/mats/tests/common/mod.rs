//! What the binary's integration tests share: paths in the repository, running `mats` there,
//! and reading its errors.

// Each test file uses its own subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A path in the repository.
pub fn repo(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(rel)
}

/// A file of the repository's `data/`, as an argument.
pub fn data(rel: &str) -> String {
    repo("data").join(rel).display().to_string()
}

/// Runs `mats` in the repository's root.
pub fn mats(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mats"))
        .args(args)
        .current_dir(repo(""))
        .output()
        .expect("the mats binary runs")
}

/// The error of a run that must fail without a panic.
pub fn error_of(args: &[&str]) -> String {
    let out = mats(args);
    assert!(!out.status.success(), "mats {args:?} should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// As [`error_of`], for errors that must be one line.
pub fn one_line_error(args: &[&str]) -> String {
    let stderr = error_of(args);
    assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr}");
    stderr
}

/// A copy of the repository's QAP instance `name` (`data/qap/NAME.dat`) at `to`, with its
/// first flow entry off by one: an instance no best-known table knows.
pub fn edited_qap(name: &str, to: &Path) {
    let text = std::fs::read_to_string(repo(&format!("data/qap/{name}.dat"))).unwrap();
    let mut tokens: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    // After n, the second entry of A's first row.
    tokens[2] = (tokens[2].parse::<i64>().unwrap() + 1).to_string();
    std::fs::write(to, tokens.join(" ")).unwrap();
}
