//! The shipped CPU spaces name only knobs the CPU solvers read (the search crate knows no
//! solver, so the check lives here, where both meet).

use search::space::Space;

/// The shipped spaces of the CPU solvers.
const CPU_SPACES: [&str; 6] = [
    "qap-cpu.toml",
    "qap-cpu-search.toml",
    "pfsp-cpu.toml",
    "tsp-cpu.toml",
    "tsp-focused.toml",
    "hwsw-cpu.toml",
];

fn shipped(name: &str) -> Space {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../spaces")
        .join(name);
    Space::load(&path).unwrap_or_else(|e| panic!("{e:#}"))
}

#[test]
fn cpu_space_names_match_solver_knobs() {
    use solvers::family::Algorithm;
    let knobs: Vec<&str> = [
        Algorithm::QapTwoOpt,
        Algorithm::QapTabu,
        Algorithm::PfspTabu,
        Algorithm::PfspIg,
        Algorithm::TspAs,
        Algorithm::TspFocused,
        Algorithm::HwswSts,
    ]
    .iter()
    .flat_map(|a| a.knobs().iter().copied())
    .chain(["algorithm", "threads"])
    .collect();
    for f in CPU_SPACES {
        for n in shipped(f).names() {
            assert!(knobs.contains(&n.as_str()), "{f}: {n} is not a solver knob");
        }
    }
}

/// A CPU space that offers an algorithm with independent starts lets the tuner choose how many
/// and on how many threads: without them a tuned bundle runs one start on one thread, where an
/// untuned time-limited `mats solve` runs one start per core, so the bundle would lose to the
/// default it was meant to beat.
#[test]
fn cpu_spaces_tune_starts_and_threads_wherever_the_algorithm_has_starts() {
    use search::SearchSpace;
    for f in CPU_SPACES {
        let space = shipped(f);
        let family: solvers::family::Family = space
            .family()
            .unwrap_or_else(|| panic!("{f} names no family"))
            .parse()
            .expect("family");
        for point in space.points() {
            let algorithm = match point.get("algorithm").and_then(|v| v.as_text()) {
                Some(name) => family.algorithm(name).expect("algorithm"),
                None => family.algorithms()[0],
            };
            if algorithm.default_starts().is_some() {
                for name in ["starts", "threads"] {
                    assert!(point.get(name).is_some(), "{f}: {algorithm} without {name}");
                }
            }
        }
    }
}
