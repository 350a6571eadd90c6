//! Sequences the solvers found below the best-known values of `../shared/data`
//! (`data/pfsp/records/NAME-MAKESPAN.txt`): each is a permutation of the instance's jobs whose
//! makespan, computed here from the instance file, is the one its name and first line state.
//! The VRF instances live in `../shared/data`; where that folder is absent the test says so
//! and checks only the files' own consistency.

use std::path::Path;

use solvers::pfsp;

const RECORDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/pfsp/records");
const VRF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/taillard-pfsp/vrf/large"
);

#[test]
fn recorded_vrf_sequences_have_their_makespans() {
    let mut checked = 0;
    for entry in std::fs::read_dir(RECORDS).expect("data/pfsp/records") {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let (name, value) = stem.rsplit_once('-').expect("NAME-MAKESPAN.txt");
        let value: i64 = value.parse().expect("the makespan in the file name");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines().filter(|l| !l.starts_with('#'));
        let stated: i64 = lines.next().unwrap().trim().parse().unwrap();
        assert_eq!(stated, value, "{stem}: first line against the name");
        let jobs: Vec<usize> = lines
            .next()
            .unwrap()
            .split_whitespace()
            .map(|t| t.parse::<usize>().unwrap() - 1)
            .collect();
        let instance = Path::new(VRF).join(format!("{name}_Gap.txt"));
        if !instance.exists() {
            println!(
                "{stem}: skipped the makespan: {} not found",
                instance.display()
            );
            continue;
        }
        let inst = pfsp::read(&instance, None).unwrap();
        solvers::permutation::check(&jobs, inst.jobs).unwrap();
        assert_eq!(inst.makespan(&jobs), value, "{stem}");
        println!("{stem}: makespan {value} confirmed");
        checked += 1;
    }
    println!("{checked} record(s) re-scored");
}
