//! Malformed QAP files: each gives one error naming the file (and line where it makes sense).

use std::path::Path;

use solvers::qap;

fn parse_err(text: &str) -> String {
    qap::parse(text, Path::new("bad.dat"))
        .expect_err("malformed input must be rejected")
        .to_string()
}

#[test]
fn truncated_matrix() {
    let e = parse_err("3\n1 2 3\n4 5 6\n7 8 9\n1 2 3\n");
    assert!(
        e.starts_with("bad.dat: n = 3 (line 1) needs 2 x 3 x 3 = 18"),
        "{e}"
    );
    assert!(e.contains("holds 12"), "{e}");
}

#[test]
fn too_much_data() {
    let e = parse_err("2\n1 2 3 4\n5 6 7 8\n9\n");
    assert!(e.contains("holds 9"), "{e}");
}

#[test]
fn non_numeric_token_names_its_line() {
    let e = parse_err("2\n1 2\n3 x\n5 6\n7 8\n");
    assert!(e.starts_with("bad.dat:3:"), "{e}");
    assert!(e.contains("\"x\""), "{e}");
}

#[test]
fn non_numeric_size() {
    let e = parse_err("two\n1 2\n");
    assert!(e.starts_with("bad.dat:1:"), "{e}");
}

#[test]
fn zero_size() {
    let e = parse_err("0\n");
    assert!(
        e.starts_with("bad.dat:1:") && e.contains("between 1 and"),
        "{e}"
    );
}

#[test]
fn empty_file() {
    let e = parse_err("\n\n");
    assert!(e.contains("file ends early"), "{e}");
}

#[test]
fn huge_declared_size_with_little_data_does_not_allocate() {
    // 40000^2 * 2 entries would need 25 GB; the parser must compare with the data first.
    let e = parse_err("40000\n1 2 3\n");
    assert!(e.contains("holds 3"), "{e}");
    let e = parse_err("99999999999\n1 2 3\n");
    assert!(
        e.starts_with("bad.dat:1:") && e.contains("between 1 and"),
        "{e}"
    );
}

#[test]
fn solution_that_is_not_a_permutation() {
    let inst = qap::parse(
        "3\n0 1 2\n1 0 3\n2 3 0\n0 5 6\n5 0 7\n6 7 0\n",
        Path::new("x.dat"),
    )
    .unwrap();
    let raw = qap::parse_solution("3 10\n1 1 2\n", Path::new("bad.sln")).unwrap();
    let e = raw
        .resolve(&inst, Path::new("bad.sln"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("bad.sln: the values are not a permutation"),
        "{e}"
    );
    assert!(e.contains("appears twice"), "{e}");
}

#[test]
fn solution_whose_cost_no_reading_matches() {
    let inst = qap::parse(
        "3\n0 1 2\n1 0 3\n2 3 0\n0 5 6\n5 0 7\n6 7 0\n",
        Path::new("x.dat"),
    )
    .unwrap();
    let raw = qap::parse_solution("3 1\n1 2 3\n", Path::new("bad.sln")).unwrap();
    let e = raw
        .resolve(&inst, Path::new("bad.sln"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("stated cost 1"), "{e}");
}

#[test]
fn solution_with_wrong_count_or_size() {
    let e = qap::parse_solution("3 10\n1 2\n", Path::new("bad.sln"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("holds 2 permutation values"), "{e}");
    let inst = qap::parse("1\n5\n7\n", Path::new("x.dat")).unwrap();
    let raw = qap::parse_solution("2 10\n1 2\n", Path::new("bad.sln")).unwrap();
    let e = raw
        .resolve(&inst, Path::new("bad.sln"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("n = 2") && e.contains("n = 1"), "{e}");
}

#[test]
fn missing_file_names_it() {
    let e = qap::read(Path::new("/nonexistent/q.dat"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent/q.dat: cannot read"), "{e}");
}
