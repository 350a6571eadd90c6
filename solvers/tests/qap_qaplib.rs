//! QAPLIB instances and solutions: parsing, objective, solution conventions, features.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use solvers::qap::{self, Convention};

#[test]
fn shipped_instances_score_their_solutions() {
    let dir = common::repo_data().join("qap");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sln") {
            let inst = qap::read(&path.with_extension("dat")).unwrap();
            let raw = qap::read_solution(&path).unwrap();
            let sol = raw.resolve(&inst, &path).unwrap();
            assert_eq!(
                inst.cost(&sol.permutation),
                raw.stated_cost,
                "{}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 6,
        "expected the shipped solutions, found {checked}"
    );
}

#[test]
fn every_qaplib_instance_and_solution() {
    let Some(shared) = common::shared_data("every_qaplib_instance_and_solution") else {
        return;
    };
    let bks = {
        let mut t = solvers::bks::BestKnown::default();
        t.add_file(&shared.join("qaplib/bks.csv")).unwrap();
        t
    };
    let mut instances = 0;
    let mut solutions = 0;
    let mut conventions = BTreeSet::new();
    let dir = shared.join("qaplib/instances");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let inst = qap::read(&path).unwrap_or_else(|e| panic!("{e}"));
        instances += 1;
        let sln = shared
            .join("qaplib/solutions")
            .join(format!("{}.sln", inst.name));
        if !sln.exists() {
            continue;
        }
        let raw = qap::read_solution(&sln).unwrap_or_else(|e| panic!("{e}"));
        let sol = raw.resolve(&inst, &sln).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(inst.cost(&sol.permutation), raw.stated_cost);
        assert_eq!(
            bks.get(&inst.name).unwrap().value,
            raw.stated_cost,
            "{}",
            inst.name
        );
        conventions.insert(format!("{:?}", sol.convention));
        solutions += 1;
    }
    assert_eq!(instances, 136);
    assert_eq!(solutions, 133);
    // The published files use three conventions; all three must have been recognised.
    for c in [
        Convention::OneBased,
        Convention::OneBasedInverse,
        Convention::ZeroBased,
    ] {
        assert!(conventions.contains(&format!("{c:?}")), "{c:?} not seen");
    }
}

#[test]
fn comma_separated_solution_parses() {
    let inst = qap::parse(
        "3\n0 1 2\n1 0 3\n2 3 0\n0 5 6\n5 0 7\n6 7 0\n",
        Path::new("x.dat"),
    )
    .unwrap();
    let p = [2usize, 0, 1];
    let cost = inst.cost(&p);
    let text = format!("3 {cost}\n3,1,\n2\n");
    let raw = qap::parse_solution(&text, Path::new("x.sln")).unwrap();
    let sol = raw.resolve(&inst, Path::new("x.sln")).unwrap();
    assert_eq!(inst.cost(&sol.permutation), cost);
}

#[test]
fn all_levels_occur_across_qaplib() {
    let Some(shared) = common::shared_data("all_levels_occur_across_qaplib") else {
        return;
    };
    let mut density = BTreeSet::new();
    let mut symmetry = BTreeSet::new();
    let mut dominance = BTreeSet::new();
    let mut classes = BTreeSet::new();
    for entry in std::fs::read_dir(shared.join("qaplib/instances")).unwrap() {
        let inst = qap::read(&entry.unwrap().path()).unwrap();
        let class = inst.class();
        density.insert(class.density);
        symmetry.insert(class.symmetry);
        dominance.insert(class.dominance);
        classes.insert(class.to_string());
    }
    assert_eq!(density.len(), 3, "density levels {density:?}");
    assert_eq!(symmetry.len(), 3, "symmetry levels {symmetry:?}");
    assert_eq!(dominance.len(), 3, "dominance levels {dominance:?}");
    println!(
        "{} classes occur across QAPLIB: {classes:#?}",
        classes.len()
    );
}

#[test]
fn features_of_known_instances() {
    let dir = common::repo_data().join("qap");
    let bur = qap::read(&dir.join("bur26a.dat")).unwrap().features();
    assert!(!bur.a.zero_diagonal || !bur.b.zero_diagonal);
    assert!(bur.symmetry < 1.0, "bur26a is asymmetric");
    let tai = qap::read(&dir.join("tai20a.dat")).unwrap().features();
    assert_eq!(tai.symmetry, 1.0);
    assert!(tai.a.zero_diagonal && tai.b.zero_diagonal);
    assert_eq!(
        qap::read(&dir.join("tai20a.dat"))
            .unwrap()
            .class()
            .to_string(),
        "qap:density=high,symmetry=high,dominance=low"
    );
}
