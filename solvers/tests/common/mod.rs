//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository's own data folder (always present).
pub fn repo_data() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../data"))
}

/// `../shared/data` beside the repository, when this checkout has it. Tests that need it say
/// that they skipped, so a green run without it is not mistaken for full coverage.
pub fn shared_data(test: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data"));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("{test}: skipped: ../shared/data not found beside the repository");
        None
    }
}

/// `n` cities uniform in [0, 5000)^2 under `kind`, from the seed's stream.
pub fn random_tsp(
    kind: solvers::tsp::EdgeWeightType,
    n: usize,
    seed: u64,
) -> solvers::tsp::Instance {
    use rand::Rng;
    let mut rng = solvers::run::stream_rng(seed, 0);
    let coords = (0..n)
        .map(|_| (rng.random_range(0.0..5000.0), rng.random_range(0.0..5000.0)))
        .collect();
    solvers::tsp::Instance::from_coords(format!("random-{}", kind.name()), kind, coords)
        .expect("random coordinates make an instance")
}

/// A TSPLIB instance of the repository's data/tsp.
pub fn shipped_tsp(name: &str) -> solvers::tsp::Instance {
    solvers::tsp::read(&repo_data().join(format!("tsp/{name}.tsp")))
        .unwrap_or_else(|e| panic!("data/tsp/{name}.tsp: {e}"))
}

/// A HW/SW graph's exact optimum over all 2^n partitions (tiny graphs).
pub fn hwsw_optimum(inst: &solvers::hwsw::Instance) -> i64 {
    let n = inst.n();
    (0u32..(1 << n))
        .filter_map(|mask| {
            let x: Vec<usize> = (0..n).map(|i| (mask >> i & 1) as usize).collect();
            inst.objective(&x).ok()
        })
        .min()
        .expect("all hardware is feasible")
}
