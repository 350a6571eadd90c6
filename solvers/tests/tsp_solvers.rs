//! Ant System: the pheromone rules against a recomputation, determinism whatever the thread
//! count, valid tours, and quality on small instances.

mod common;

use solvers::run::{Budget, RunOptions};
use solvers::tsp::{self, ant_system, AntSystem, AsParams, InitialPheromone};

fn load(name: &str) -> tsp::Instance {
    tsp::read(&common::repo_data().join(format!("tsp/{name}.tsp"))).expect("shipped instance")
}

fn options(seed: u64, threads: usize, iterations: u64) -> RunOptions {
    RunOptions {
        seed,
        threads,
        budget: Budget::iterations(iterations),
    }
}

/// All tours of a tiny instance by brute force (city 0 fixed first).
fn brute_force_optimum(inst: &tsp::Instance) -> i64 {
    fn rec(inst: &tsp::Instance, tour: &mut Vec<usize>, used: &mut [bool], best: &mut i64) {
        let n = inst.n();
        if tour.len() == n {
            *best = (*best).min(inst.tour_length(tour));
            return;
        }
        for c in 1..n {
            if !used[c] {
                used[c] = true;
                tour.push(c);
                rec(inst, tour, used, best);
                tour.pop();
                used[c] = false;
            }
        }
    }
    let mut best = i64::MAX;
    let mut used = vec![false; inst.n()];
    used[0] = true;
    rec(inst, &mut vec![0], &mut used, &mut best);
    best
}

#[test]
fn initial_pheromone_and_choice_info() {
    let inst = load("eil51");
    let n = inst.n();
    let state = AntSystem::new(&inst, &AsParams::default(), 1).unwrap();
    let dist = inst.distance_matrix();
    let nn = tsp::ant_system::nearest_neighbour_tour(&dist, n, 0);
    let c_nn = inst.tour_length(&nn);
    assert_eq!(state.nn_length, c_nn);
    let tau0 = n as f64 / c_nn as f64; // m = n
    assert!(state.pheromone.iter().all(|&t| t == tau0));
    for (i, j) in [(0, 1), (3, 40), (50, 7)] {
        let eta = 1.0 / (dist[i * n + j] as f64 + 0.1);
        let expected = tau0 * eta * eta;
        assert!((state.choice_info[i * n + j] - expected).abs() <= 1e-15 * expected);
    }
    let acotsp = AsParams {
        initial: InitialPheromone::Acotsp,
        ..AsParams::default()
    };
    let state = AntSystem::new(&inst, &acotsp, 1).unwrap();
    assert_eq!(state.pheromone[5], 1.0 / (0.5 * c_nn as f64));
}

#[test]
fn evaporation_then_deposit_by_every_ant() {
    let inst = load("berlin52");
    let n = inst.n();
    let params = AsParams {
        ants: Some(10),
        ..AsParams::default()
    };
    let mut state = AntSystem::new(&inst, &params, 7).unwrap();
    let before = state.pheromone.clone();
    state.iterate();
    // Recompute: (1 - rho) tau + sum over ants of 1/C_k on each tour edge, both directions.
    let mut expected: Vec<f64> = before.iter().map(|t| 0.5 * t).collect();
    assert_eq!(state.tours.len(), 10);
    for (tour, &len) in state.tours.iter().zip(&state.lengths) {
        assert_eq!(len, inst.tour_length(tour));
        solvers::permutation::check(tour, n).expect("a tour visits every city once");
        let mut prev = tour[n - 1];
        for &c in tour {
            expected[prev * n + c] += 1.0 / len as f64;
            expected[c * n + prev] = expected[prev * n + c];
            prev = c;
        }
    }
    for (k, (&got, &want)) in state.pheromone.iter().zip(&expected).enumerate() {
        assert!(
            (got - want).abs() <= 1e-12 * want,
            "cell {k}: {got} vs {want}"
        );
    }
}

#[test]
fn ants_follow_their_candidate_lists_while_they_can() {
    // With beta large, an ant almost always takes a near candidate; every step to a city
    // outside the list must be a fallback, i.e. all listed cities were already visited.
    let inst = load("eil51");
    let n = inst.n();
    let params = AsParams {
        candidates: 5,
        ..AsParams::default()
    };
    let mut state = AntSystem::new(&inst, &params, 3).unwrap();
    state.iterate();
    let mut fallbacks = 0;
    for tour in &state.tours {
        let mut visited = vec![false; n];
        visited[tour[0]] = true;
        for w in tour.windows(2) {
            let list = state.candidates().of(w[0]);
            if !list.contains(&w[1]) {
                assert!(list.iter().all(|&c| visited[c]), "left the list too early");
                fallbacks += 1;
            }
            visited[w[1]] = true;
        }
    }
    assert!(fallbacks > 0, "with 5 candidates some steps fall back");
}

#[test]
fn same_seed_same_tour_whatever_the_thread_count() {
    let inst = load("eil51");
    let one = ant_system(&inst, &AsParams::default(), &options(11, 1, 15)).unwrap();
    let two = ant_system(&inst, &AsParams::default(), &options(11, 2, 15)).unwrap();
    let four = ant_system(&inst, &AsParams::default(), &options(11, 4, 15)).unwrap();
    assert_eq!(one, two);
    assert_eq!(one, four);
    let other = ant_system(&inst, &AsParams::default(), &options(12, 2, 15)).unwrap();
    assert_ne!(one.solution, other.solution);
}

#[test]
fn quality_on_small_instances() {
    for (name, limit) in [("eil51", 1.10), ("berlin52", 1.10), ("att48", 1.10)] {
        let inst = load(name);
        let out = ant_system(&inst, &AsParams::default(), &options(1, 0, 100)).unwrap();
        solvers::permutation::check(&out.solution, inst.n()).unwrap();
        assert_eq!(out.objective, inst.tour_length(&out.solution));
        let bks = solvers::bks::BestKnown::embedded().get(name).unwrap().value;
        assert!(out.objective >= bks);
        assert!(
            (out.objective as f64) <= limit * bks as f64,
            "{name}: {} vs {bks}",
            out.objective
        );
    }
}

#[test]
fn tiny_instances_come_within_one_percent_of_the_optimum() {
    // AS without local search need not reach the optimum; on these it comes close.
    for name in ["burma14", "gr17", "ulysses16"] {
        let inst = load(name);
        let known = solvers::bks::BestKnown::embedded().get(name).unwrap().value;
        let out = ant_system(&inst, &AsParams::default(), &options(1, 0, 200)).unwrap();
        assert!(out.objective >= known);
        assert!(
            out.objective as f64 <= 1.01 * known as f64,
            "{name}: {} vs {known}",
            out.objective
        );
    }
}

#[test]
fn brute_force_helper_on_a_square() {
    let pts = vec![
        (0.0, 0.0),
        (0.0, 10.0),
        (10.0, 0.0),
        (10.0, 10.0),
        (5.0, 12.0),
    ];
    let inst = tsp::Instance::from_coords("sq", tsp::EdgeWeightType::Euc2d, pts).unwrap();
    let opt = brute_force_optimum(&inst);
    let out = ant_system(&inst, &AsParams::default(), &options(1, 1, 20)).unwrap();
    assert_eq!(out.objective, opt);
}

#[test]
fn bad_parameters_are_errors() {
    let inst = load("burma14");
    for p in [
        AsParams {
            rho: 0.0,
            ..AsParams::default()
        },
        AsParams {
            ants: Some(0),
            ..AsParams::default()
        },
        AsParams {
            candidates: 0,
            ..AsParams::default()
        },
        AsParams {
            beta: f64::NAN,
            ..AsParams::default()
        },
    ] {
        assert!(ant_system(&inst, &p, &options(1, 1, 1)).is_err());
    }
}

/// The figure: time per iteration (m = n) and tour quality after 100 iterations on the
/// instances of Dawson & Stewart's Table 1. Run with
/// `cargo test --release -p mats-solvers --test tsp_solvers -- --ignored --nocapture`.
#[test]
#[ignore]
fn figure_as_time_per_iteration() {
    let Some(shared) = common::shared_data("figure_as_time_per_iteration") else {
        return;
    };
    let bks = {
        let mut t = solvers::bks::BestKnown::embedded();
        t.add_file(&shared.join("tsplib/bks.csv")).unwrap();
        t
    };
    println!("instance      n  build(s)  construct(ms/it)  update(ms/it)  total(ms/it)  best@100  optimum  gap%");
    for name in ["d198", "pcb442", "rat783", "pr2392"] {
        let inst = tsp::read(&shared.join(format!("tsplib/instances/{name}.tsp"))).unwrap();
        let t0 = std::time::Instant::now();
        let mut state = AntSystem::new(&inst, &AsParams::default(), 1).unwrap();
        let build = t0.elapsed().as_secs_f64();
        let (mut construct, mut update) = (0.0, 0.0);
        let mut best = i64::MAX;
        for _ in 0..100 {
            let t = std::time::Instant::now();
            state.construct();
            construct += t.elapsed().as_secs_f64();
            best = best.min(*state.lengths.iter().min().unwrap());
            let t = std::time::Instant::now();
            state.update_pheromone();
            state.compute_choice_info();
            update += t.elapsed().as_secs_f64();
        }
        let opt = bks.get(name).unwrap().value;
        println!(
            "{name:8} {:6} {build:9.3} {:17.2} {:14.2} {:13.2} {best:9} {opt:8} {:5.2}",
            inst.n(),
            construct * 10.0,
            update * 10.0,
            (construct + update) * 10.0,
            100.0 * (best - opt) as f64 / opt as f64
        );
    }
}

#[test]
fn mmas_with_two_opt_finds_the_optimum_of_small_instances_whatever_the_threads() {
    // MAX-MIN AS with 2-opt closes the gap that AS alone leaves (up to 10% above).
    for name in ["eil51", "berlin52", "att48"] {
        let inst = load(name);
        let bks = solvers::bks::BestKnown::embedded().get(name).unwrap().value;
        let params = tsp::MmasParams::default();
        let one = tsp::mmas(&inst, &params, &options(3, 1, 150)).unwrap();
        let many = tsp::mmas(&inst, &params, &options(3, 0, 150)).unwrap();
        assert_eq!(
            one.solution, many.solution,
            "{name}: depends on the thread count"
        );
        solvers::permutation::check(&one.solution, inst.n()).unwrap();
        assert_eq!(one.objective, inst.tour_length(&one.solution));
        assert!(one.objective >= bks);
        assert!(
            one.objective as f64 <= 1.005 * bks as f64,
            "{name}: {} vs {bks}",
            one.objective
        );
    }
}

#[test]
fn mmas_trail_limits_and_deposit_schedule_follow_acotsp() {
    let (min, max) = tsp::mmas::trail_limits(0.2, 1000, 50);
    assert!((max - 1.0 / 200.0).abs() < 1e-15);
    assert!((min - max / 100.0).abs() < 1e-15);
    let periods: Vec<u64> = [0, 24, 25, 74, 75, 124, 125, 249, 250, 10_000]
        .iter()
        .map(|&i| tsp::mmas::best_so_far_period(i))
        .collect();
    assert_eq!(periods, [25, 25, 5, 5, 3, 3, 2, 2, 1, 1]);
    let bad = tsp::MmasParams {
        ls_neighbours: 0,
        ..Default::default()
    };
    let inst = load("eil51");
    let e = tsp::mmas(&inst, &bad, &options(1, 1, 1)).unwrap_err();
    assert!(e.contains("ls_neighbours"), "{e}");
}
