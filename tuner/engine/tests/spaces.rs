//! The shipped CPU spaces name only knobs the CPU solvers read (the search crate knows no
//! solver, so the check lives here, where both meet).

use search::space::Space;

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
    for f in [
        "qap-cpu.toml",
        "qap-cpu-search.toml",
        "pfsp-cpu.toml",
        "tsp-cpu.toml",
        "tsp-focused.toml",
        "hwsw-cpu.toml",
    ] {
        for n in shipped(f).names() {
            assert!(knobs.contains(&n.as_str()), "{f}: {n} is not a solver knob");
        }
    }
}
