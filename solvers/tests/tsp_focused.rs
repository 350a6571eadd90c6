//! Focused ACO (`solvers::tsp::focused`): constructions are permutations with at least the
//! set number of new edges and exact lengths; 2-opt and Or-opt deltas equal a full
//! re-evaluation; the local search ends in a local optimum; pheromone stays in its bounds;
//! the memory refusal names the need; whole runs return exact, valid tours.

mod common;

use rand::seq::SliceRandom;
use rand::Rng;
use solvers::run::{stream_rng, Budget, RunOptions};
use solvers::tsp::focused::tour::{
    best_or_opt, best_two_opt, local_optimum, local_search, ActiveQueue, LsStats, Move, Neighbours,
    Tour,
};
use solvers::tsp::focused::{self, construct, Colony, FocusedParams, Scratch, SourceRule};
use solvers::tsp::{self, generate};

fn load(name: &str) -> tsp::Instance {
    tsp::read(&common::repo_data().join(format!("tsp/{name}.tsp"))).expect("shipped instance")
}

fn random_tour(n: usize, seed: u64) -> Tour {
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.shuffle(&mut stream_rng(seed, 99));
    Tour::new(order)
}

fn assert_permutation(t: &Tour) {
    let n = t.n();
    let mut seen = vec![false; n];
    for (i, &c) in t.order.iter().enumerate() {
        assert!(
            (c as usize) < n && !seen[c as usize],
            "city {c} twice or out of range"
        );
        seen[c as usize] = true;
        assert_eq!(t.pos[c as usize] as usize, i, "position index of city {c}");
    }
}

fn edges(t: &Tour) -> std::collections::HashSet<(u32, u32)> {
    let n = t.n();
    (0..n)
        .map(|i| {
            let (a, b) = (t.order[i], t.order[(i + 1) % n]);
            (a.min(b), a.max(b))
        })
        .collect()
}

#[test]
fn constructions_are_permutations_with_the_minimum_of_new_edges() {
    let inst = generate::uniform(1500, 3).expect("valid size");
    let mut colony = Colony::new(&inst, 12, 1.0, 2.0);
    // Pheromone that is not uniform: random values in [tau_min, tau_max].
    colony.tau_max = 1.0;
    colony.tau_min = 0.01;
    let mut rng = stream_rng(5, 0);
    for t in colony.tau.iter_mut() {
        *t = rng.random_range(0.01..=1.0);
    }
    let source = Tour::new(focused::initial_tour(&inst, &colony.cand, colony.k));
    let source_len = source.length(&inst);
    let source_edges = edges(&source);
    let mut scratch = Scratch::new(inst.n(), colony.k);
    for min_new in [1usize, 3, 8, 40] {
        for seed in 0..20 {
            let mut rng = stream_rng(seed, min_new as u64);
            let built = construct(
                &colony,
                &source,
                source_len,
                min_new,
                &mut rng,
                &mut scratch,
            );
            assert_permutation(&scratch.tour);
            let new: Vec<_> = edges(&scratch.tour)
                .difference(&source_edges)
                .copied()
                .collect();
            assert!(
                new.len() >= min_new,
                "{} new edges, at least {min_new} asked",
                new.len()
            );
            assert_eq!(built.new_edges, new.len(), "counted new edges");
            assert_eq!(
                built.length,
                scratch.tour.length(&inst),
                "incremental length"
            );
            // The queue holds the ends of the new edges, nothing else.
            let mut ends: Vec<u32> = new.iter().flat_map(|&(a, b)| [a, b]).collect();
            ends.sort_unstable();
            ends.dedup();
            assert_eq!(scratch.queue.len(), ends.len());
            scratch.queue.clear();
        }
    }
}

#[test]
fn constructions_follow_a_dominant_source() {
    // With source edges at tau_max and the rest at tau_min, the walk leaves the source
    // rarely, and the tour keeps most of its edges.
    let inst = generate::uniform(3000, 4).expect("valid size");
    let mut colony = Colony::new(&inst, 16, 1.0, 2.0);
    let source = Tour::new(focused::initial_tour(&inst, &colony.cand, colony.k));
    let (lo, hi) = focused::trail_limits(0.1, source.length(&inst), colony.k);
    colony.tau_min = lo;
    colony.tau_max = hi;
    colony.tau.fill(lo);
    for _ in 0..3 {
        colony.update(0.0001, &source.order, hi);
    }
    let mut scratch = Scratch::new(inst.n(), colony.k);
    let mut rng = stream_rng(1, 1);
    let built = construct(
        &colony,
        &source,
        source.length(&inst),
        8,
        &mut rng,
        &mut scratch,
    );
    assert!(built.new_edges >= 8);
    assert!(
        built.new_edges <= 40,
        "a bounded change: {} new edges",
        built.new_edges
    );
    assert!(built.steps < 1500, "{} steps", built.steps);
}

/// Applies every move the searches find from every city of random tours and compares the
/// length change with the move's delta.
fn check_deltas(inst: &tsp::Instance, width: usize, seeds: u64) -> (usize, usize, usize) {
    let colony = Colony::new(inst, width, 1.0, 2.0);
    let nb = Neighbours {
        lists: &colony.cand,
        k: colony.k,
        width: colony.k,
    };
    let (mut two, mut or_plain, mut or_reversed) = (0, 0, 0);
    for seed in 0..seeds {
        let mut t = random_tour(inst.n(), seed);
        for a in 0..inst.n() as u32 {
            for m in [
                best_two_opt(&t, inst, &nb, a),
                best_or_opt(&t, inst, &nb, a),
            ]
            .into_iter()
            .flatten()
            {
                let before = t.length(inst);
                let mut after = t.clone();
                after.apply(&m);
                assert_permutation(&after);
                assert_eq!(after.length(inst) - before, m.delta(), "{m:?}");
                assert!(m.delta() < 0);
                match m {
                    Move::TwoOpt { .. } => two += 1,
                    Move::OrOpt {
                        reversed: false, ..
                    } => or_plain += 1,
                    Move::OrOpt { reversed: true, .. } => or_reversed += 1,
                }
            }
            // Walk on: apply the 2-opt move of this city, so later cities see other tours.
            if let Some(m) = best_two_opt(&t, inst, &nb, a) {
                t.apply(&m);
            }
        }
    }
    (two, or_plain, or_reversed)
}

#[test]
fn two_opt_and_or_opt_deltas_equal_full_reevaluation() {
    let (two, plain, reversed) = check_deltas(&generate::uniform(300, 9).expect("valid"), 10, 4);
    assert!(
        two > 100 && plain > 50 && reversed > 50,
        "{two} {plain} {reversed}"
    );
    // Small, explicit and ATT instances; few cities exercise the wrap-around.
    for name in ["berlin52", "att48", "gr17", "burma14"] {
        let (two, plain, reversed) = check_deltas(&load(name), 8, 6);
        assert!(
            two > 0 && plain + reversed > 0,
            "{name}: {two} {plain} {reversed}"
        );
    }
}

#[test]
fn local_search_ends_in_a_local_optimum() {
    let inst = generate::uniform(2000, 11).expect("valid size");
    let colony = Colony::new(&inst, 10, 1.0, 2.0);
    let nb = Neighbours {
        lists: &colony.cand,
        k: colony.k,
        width: 8,
    };
    for or_opt in [false, true] {
        let mut t = random_tour(inst.n(), 1);
        let start = t.length(&inst);
        let mut queue = ActiveQueue::new(inst.n());
        for c in 0..inst.n() as u32 {
            queue.push(c);
        }
        let mut stats = LsStats::default();
        // One queue-driven pass: exact, and most of the way.
        let first = local_search(&mut t, &inst, &nb, or_opt, &mut queue, &mut stats, &|| {
            false
        });
        assert_permutation(&t);
        assert_eq!(t.length(&inst), start + first);
        assert!(queue.is_empty());
        // Repeated sweeps end in a true local optimum.
        let rest = local_optimum(&mut t, &inst, &nb, or_opt, &mut queue, &mut stats, &|| {
            false
        });
        assert_permutation(&t);
        assert_eq!(t.length(&inst), start + first + rest);
        assert!(
            rest > first / 20,
            "the first pass does the bulk: {first} then {rest}"
        );
        assert!(queue.is_empty());
        assert_eq!(stats.or_opt > 0, or_opt);
        for a in 0..inst.n() as u32 {
            assert_eq!(best_two_opt(&t, &inst, &nb, a), None, "2-opt left at {a}");
            if or_opt {
                assert_eq!(best_or_opt(&t, &inst, &nb, a), None, "Or-opt left at {a}");
            }
        }
    }
}

#[test]
fn pheromone_stays_within_its_bounds() {
    let inst = generate::uniform(400, 2).expect("valid size");
    let mut colony = Colony::new(&inst, 8, 1.0, 2.0);
    let (lo, hi) = focused::trail_limits(0.2, 1_000_000, colony.k);
    assert!(lo > 0.0 && lo < hi);
    colony.tau_min = lo;
    colony.tau_max = hi;
    colony.tau.fill(hi);
    for seed in 0..200 {
        let t = random_tour(inst.n(), seed);
        // Large deposits and strong evaporation both push against a bound.
        let amount = if seed % 2 == 0 { 10.0 * hi } else { 1e-12 };
        colony.update(if seed % 3 == 0 { 1.0 } else { 0.2 }, &t.order, amount);
        assert!(
            colony.tau.iter().all(|&x| (lo..=hi).contains(&x)),
            "a trail left [{lo}, {hi}] after update {seed}"
        );
    }
    // Edges of the last tour that are in the lists got a deposit and sit above tau_min.
    assert!(colony.tau.iter().any(|&x| x > lo));
}

#[test]
fn memory_refusal_names_the_need() {
    let params = FocusedParams {
        memory_limit: Some(10 << 20),
        ..FocusedParams::default()
    };
    let need = focused::memory_need(200_000, &params, 2);
    assert!(need > 10 << 20);
    let err = focused::check_memory(200_000, &params, 2).expect_err("does not fit in 10 MiB");
    let need_mib = format!("{:.1} MiB", need as f64 / (1024.0 * 1024.0));
    assert!(err.contains(&need_mib), "{err}");
    assert!(err.contains("200000 cities"), "{err}");
    // The solver refuses the same way, before it builds anything.
    let inst = generate::uniform(200_000, 1).expect("valid size");
    let started = std::time::Instant::now();
    let run = focused::focused(&inst, &params, &RunOptions::default());
    assert_eq!(
        run.expect_err("refused"),
        focused::check_memory(200_000, &params, num_threads()).expect_err("refused")
    );
    assert!(
        started.elapsed().as_secs_f64() < 1.0,
        "refused before the setup"
    );
    // O(n k): ten times the cities, about ten times the need.
    let small = focused::memory_need(20_000, &params, 2) as f64;
    let ratio = need as f64 / small;
    assert!((9.0..11.0).contains(&ratio), "{ratio}");
    // It fits where it fits.
    let roomy = FocusedParams {
        memory_limit: Some(need),
        ..params
    };
    assert_eq!(focused::check_memory(200_000, &roomy, 2), Ok(need));
}

fn num_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |t| t.get())
}

#[test]
fn runs_return_exact_valid_tours_and_reach_small_optima() {
    for (name, optimum) in [("berlin52", 7542), ("eil51", 426), ("att48", 10628)] {
        let inst = load(name);
        for source in [SourceRule::Best, SourceRule::Own] {
            let params = FocusedParams {
                source,
                ants: 8,
                ..FocusedParams::default()
            };
            let options = RunOptions {
                seed: 1,
                threads: 2,
                budget: Budget::iterations(400),
            };
            let out = focused::focused(&inst, &params, &options).expect("runs");
            let tour: Vec<usize> = out.solution.clone();
            let mut sorted = tour.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..inst.n()).collect::<Vec<_>>());
            assert_eq!(out.objective, inst.tour_length(&tour));
            assert!(
                out.objective <= optimum * 1005 / 1000,
                "{name} {source:?}: {} vs optimum {optimum}",
                out.objective
            );
        }
    }
}

#[test]
fn same_seed_same_tour_whatever_the_thread_count() {
    let inst = generate::uniform(1000, 21).expect("valid size");
    let run = |threads| {
        focused::focused(
            &inst,
            &FocusedParams::default(),
            &RunOptions {
                seed: 7,
                threads,
                budget: Budget::iterations(30),
            },
        )
        .expect("runs")
    };
    assert_eq!(run(1), run(3));
}

#[test]
fn tiny_and_odd_instances_give_valid_tours() {
    // Fewer cities than list entries, segments or new edges asked for; explicit and GEO
    // distances (no coordinates for the Hilbert fall-back).
    let mut instances: Vec<tsp::Instance> = (3..=9)
        .map(|n| generate::uniform(n, n as u64).expect("valid size"))
        .collect();
    instances.extend(["gr17", "ulysses16", "burma14", "bayg29"].map(load));
    for inst in &instances {
        for or_opt in [true, false] {
            let params = FocusedParams {
                ants: 3,
                min_new_edges: 40,
                or_opt,
                ..FocusedParams::default()
            };
            let options = RunOptions {
                seed: 2,
                threads: 2,
                budget: Budget::iterations(20),
            };
            let out = focused::focused(inst, &params, &options).expect("runs");
            let mut sorted = out.solution.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..inst.n()).collect::<Vec<_>>(), "{}", inst.name);
            assert_eq!(out.objective, inst.tour_length(&out.solution));
        }
    }
}

/// The 2-core goals of issue 24: rl11849 <= 1.5% above the optimum with a 10 s limit,
/// returning within 10.5 s; pla85900 with a 30 s limit returning within 31.5 s (both with the
/// file read counted). Timing depends on the machine and its load, so it is a figure, run with
/// `cargo test --release -p mats-solvers --test tsp_focused -- --ignored --nocapture`.
#[test]
#[ignore]
fn figure_two_core_goals() {
    let Some(shared) = common::shared_data("figure_two_core_goals") else {
        return;
    };
    for (name, limit, optimum, gap_goal) in [
        ("rl11849", 10.0, 923_288i64, Some(1.5)),
        ("pla85900", 30.0, 142_382_641, None),
    ] {
        let started = std::time::Instant::now();
        let inst = tsp::read(&shared.join(format!("tsplib/instances/{name}.tsp"))).unwrap();
        let options = RunOptions {
            seed: 1,
            threads: 2,
            budget: Budget::time_limit(std::time::Duration::from_secs_f64(limit)),
        };
        let out = focused::focused(&inst, &FocusedParams::default(), &options).expect("runs");
        let wall = started.elapsed().as_secs_f64();
        let gap = 100.0 * (out.objective - optimum) as f64 / optimum as f64;
        println!(
            "{name}: gap {gap:.3}% after {wall:.2} s ({} iterations)",
            out.iterations
        );
        assert_eq!(out.objective, inst.tour_length(&out.solution));
        assert!(wall <= limit * 1.05, "{name}: {wall:.2} s");
        if let Some(goal) = gap_goal {
            assert!(gap <= goal, "{name}: {gap:.3}% > {goal}%");
        }
    }
}
