//! Taillard's generator against his published instances, and his file format.

use std::path::{Path, PathBuf};

use solvers::pfsp::{self, Instance};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");
const REPO_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/pfsp");

fn shared_dir() -> Option<PathBuf> {
    let dir = Path::new(SHARED).join("taillard-pfsp");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("skipped: ../shared/data not found");
        None
    }
}

/// Asserts that the generator, run with the block's header seed, gives the block's times.
fn assert_generated(inst: &Instance) {
    let seed = inst.time_seed.expect("Taillard blocks carry their seed");
    let generated = pfsp::generate(inst.jobs, inst.machines, seed);
    for machine in 0..inst.machines {
        for job in 0..inst.jobs {
            assert_eq!(
                generated.time(machine, job),
                inst.time(machine, job),
                "{}: machine {machine}, job {job} (seed {seed})",
                inst.name
            );
        }
    }
}

#[test]
fn generator_reproduces_ta001_first_row() {
    let inst = pfsp::generate(20, 5, 873654221);
    let row: Vec<i64> = (0..20).map(|job| inst.time(0, job)).collect();
    assert_eq!(
        row,
        [54, 83, 15, 71, 77, 36, 53, 38, 27, 87, 76, 91, 14, 29, 12, 77, 32, 87, 68, 94]
    );
    // The last row too: the draw order is machine-major.
    let last: Vec<i64> = (0..20).map(|job| inst.time(4, job)).collect();
    assert_eq!(
        last,
        [58, 56, 20, 85, 53, 35, 53, 41, 69, 13, 86, 72, 8, 49, 47, 87, 58, 18, 68, 28]
    );
    assert_eq!(inst.time_seed, Some(873654221));
}

#[test]
fn generator_avoids_the_float32_pitfall_of_ta120() {
    // PROVENANCE.md: at machine 7, job 255 of ta120 the right value is 73; float32 gives 74.
    let inst = pfsp::generate(500, 20, 28837162);
    assert_eq!(inst.time(6, 254), 73);
}

#[test]
fn shipped_files_match_the_generator_and_are_named_ta001_to_ta020() {
    let mut names = Vec::new();
    for file in ["tai20_5.txt", "tai20_10.txt"] {
        let path = Path::new(REPO_DATA).join(file);
        let text = std::fs::read_to_string(&path).expect("the repo ships data/pfsp");
        let blocks = pfsp::parse_taillard(&text, &path).expect("shipped files parse");
        assert_eq!(blocks.len(), 10, "{file}");
        for inst in &blocks {
            assert_generated(inst);
            names.push(inst.name.clone());
        }
    }
    let expected: Vec<String> = (1..=20).map(|k| format!("ta{k:03}")).collect();
    assert_eq!(names, expected);
}

#[test]
fn read_picks_a_block_by_index() {
    let path = Path::new(REPO_DATA).join("tai20_10.txt");
    let inst = pfsp::read(&path, Some(3)).expect("block 3 exists");
    assert_eq!(inst.name, "ta013");
    assert_eq!((inst.jobs, inst.machines), (20, 10));
    assert_eq!(inst.time_seed, Some(873136276));
    let err = pfsp::read(&path, None).expect_err("10 blocks need an index");
    assert!(
        err.to_string()
            .contains("file holds 10 instances; pass --index 1..10"),
        "{err}"
    );
    assert!(err.to_string().contains("tai20_10.txt"), "{err}");
    let err = pfsp::read(&path, Some(11)).expect_err("there is no block 11");
    assert!(err.to_string().contains("1..10"), "{err}");
    let err = pfsp::read(&path, Some(0)).expect_err("indices are 1-based");
    assert!(err.to_string().contains("1..10"), "{err}");
}

#[test]
fn generator_reproduces_all_120_taillard_instances() {
    let Some(dir) = shared_dir() else { return };
    let table = std::fs::read_to_string(dir.join("bks.csv")).expect("bks.csv is readable");
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (c_name, c_seed, c_file, c_index, c_n, c_m) = (
        col("name"),
        col("time_seed"),
        col("file"),
        col("index_in_file"),
        col("n_jobs"),
        col("m_machines"),
    );
    let mut checked = 0;
    let mut cache: std::collections::HashMap<String, Vec<Instance>> = Default::default();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        let blocks = cache.entry(f[c_file].to_string()).or_insert_with(|| {
            let path = dir.join(f[c_file]);
            let text = std::fs::read_to_string(&path).expect("instance file is readable");
            pfsp::parse_taillard(&text, &path).expect("Taillard files parse")
        });
        let index: usize = f[c_index].parse().expect("index_in_file");
        let inst = &blocks[index - 1];
        assert_eq!(inst.name, f[c_name]);
        assert_eq!(inst.jobs.to_string(), f[c_n]);
        assert_eq!(inst.machines.to_string(), f[c_m]);
        assert_eq!(
            inst.time_seed.map(|s| s.to_string()).as_deref(),
            Some(f[c_seed])
        );
        assert_generated(inst);
        checked += 1;
    }
    assert_eq!(checked, 120);
    assert_eq!(cache.len(), 12);
}

#[test]
fn shared_copies_of_the_shipped_files_are_identical() {
    let Some(dir) = shared_dir() else { return };
    for file in ["tai20_5.txt", "tai20_10.txt"] {
        let ours = pfsp::read(&Path::new(REPO_DATA).join(file), Some(4)).expect("parses");
        let theirs = pfsp::read(&dir.join("taillard").join(file), Some(4)).expect("parses");
        assert_eq!(ours, theirs, "{file}");
    }
}

#[test]
fn integer_draws_equal_taillards_double_precision_formula() {
    // Taillard computes low + floor(seed / M * (high - low + 1)) in doubles; the generator
    // uses integers. Compare on a long stream of draws from several seeds and widths.
    for (start, high) in [
        (873654221i64, 99i64),
        (28837162, 99),
        (1, 99),
        (2147483646, 1000),
    ] {
        let mut seed = start;
        for _ in 0..200_000 {
            let mut copy = seed;
            let value = pfsp::generator::unif(&mut seed, 1, high);
            // The same Schrage step, then Taillard's double arithmetic.
            let k = copy / 127_773;
            copy = 16_807 * (copy % 127_773) - k * 2_836;
            if copy < 0 {
                copy += 2_147_483_647;
            }
            assert_eq!(copy, seed);
            let double = 1 + ((copy as f64 / 2_147_483_647.0) * high as f64).floor() as i64;
            assert_eq!(value, double, "seed {copy}");
        }
    }
}
