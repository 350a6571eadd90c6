//! QAP deltas against full re-evaluation, and the CPU solvers against brute force.

mod common;

use proptest::prelude::*;
use rand::Rng;
use solvers::qap::delta::{apply_swap, delta_matrix, swap_delta, SwapDeltas};
use solvers::qap::{self, two_opt::local_search, Instance, RotsParams, TwoOptParams};
use solvers::run::{stream_rng, Budget, RunOptions};

/// Random instances with asymmetric matrices, nonzero diagonals and negative entries, so no
/// formula can lean on symmetry.
fn instance_strategy(max_n: usize) -> impl Strategy<Value = (Instance, Vec<usize>)> {
    (2..=max_n).prop_flat_map(|n| {
        (
            prop::collection::vec(-50i64..100, n * n),
            prop::collection::vec(-50i64..100, n * n),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        )
            .prop_map(move |(a, b, p)| (Instance::new("random", n, a, b).unwrap(), p))
    })
}

fn symmetrised(inst: &Instance) -> Instance {
    let n = inst.n();
    let sym =
        |m: &[i64]| -> Vec<i64> { (0..n * n).map(|k| m[k] + m[(k % n) * n + k / n]).collect() };
    Instance::new("symmetric", n, sym(inst.a_matrix()), sym(inst.b_matrix())).unwrap()
}

fn swapped(p: &[usize], r: usize, s: usize) -> Vec<usize> {
    let mut q = p.to_vec();
    q.swap(r, s);
    q
}

proptest! {
    #[test]
    fn swap_delta_equals_full_reevaluation((inst, p) in instance_strategy(12), r in 0usize..12, s in 0usize..12) {
        let n = inst.n();
        let (r, s) = (r % n, s % n);
        prop_assume!(r != s);
        let expected = inst.cost(&swapped(&p, r, s)) - inst.cost(&p);
        prop_assert_eq!(swap_delta(&inst, &p, r, s), expected);
    }

    #[test]
    fn delta_matrix_update_equals_recomputation((inst, p) in instance_strategy(10), moves in prop::collection::vec((0usize..10, 0usize..10), 1..6)) {
        let n = inst.n();
        let mut p = p;
        let mut delta = delta_matrix(&inst, &p);
        for (r, s) in moves {
            let (r, s) = ((r % n).min(s % n), (r % n).max(s % n));
            if r == s { continue; }
            let before = inst.cost(&p);
            let predicted = delta[r * n + s];
            apply_swap(&inst, &mut p, &mut delta, r, s);
            prop_assert_eq!(inst.cost(&p) - before, predicted);
            prop_assert_eq!(&delta, &delta_matrix(&inst, &p));
        }
    }

    // Ro-TS's state (B in solution order) must give the reference deltas after every move,
    // on asymmetric matrices with nonzero diagonals too, or the CPU search would take other
    // moves than the GPU's reference expects.
    #[test]
    fn ordered_deltas_follow_the_reference((inst, p) in instance_strategy(11), symmetric in any::<bool>(), moves in prop::collection::vec((0usize..11, 0usize..11), 1..8)) {
        let n = inst.n();
        // Half the cases symmetric (A + A^T, B + B^T): SwapDeltas takes its one-product path there.
        let inst = if symmetric { symmetrised(&inst) } else { inst };
        let mut p = p;
        let mut state = SwapDeltas::new(&inst, &p);
        prop_assert_eq!(state.matrix(), &delta_matrix(&inst, &p)[..]);
        for (r, s) in moves {
            let (r, s) = ((r % n).min(s % n), (r % n).max(s % n));
            if r == s { continue; }
            let before = inst.cost(&p);
            let predicted = state.get(r, s);
            state.apply(&inst, &mut p, r, s);
            prop_assert_eq!(inst.cost(&p) - before, predicted);
            prop_assert_eq!(state.matrix(), &delta_matrix(&inst, &p)[..]);
        }
    }
}

/// All permutations of 0..n (Heap's algorithm).
fn all_permutations(n: usize) -> Vec<Vec<usize>> {
    fn heap(k: usize, p: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if k <= 1 {
            out.push(p.clone());
            return;
        }
        for i in 0..k {
            heap(k - 1, p, out);
            let j = if k % 2 == 0 { i } else { 0 };
            p.swap(j, k - 1);
        }
    }
    let mut out = Vec::new();
    heap(n, &mut (0..n).collect(), &mut out);
    out
}

fn random_instance(n: usize, seed: u64) -> Instance {
    let mut rng = stream_rng(seed, 99);
    let mut matrix = || {
        (0..n * n)
            .map(|_| rng.random_range(0..20))
            .collect::<Vec<i64>>()
    };
    let (a, b) = (matrix(), matrix());
    Instance::new(format!("brute{n}-{seed}"), n, a, b).unwrap()
}

fn optimum(inst: &Instance) -> i64 {
    all_permutations(inst.n())
        .iter()
        .map(|p| inst.cost(p))
        .min()
        .unwrap()
}

#[test]
fn two_opt_ends_in_a_true_local_optimum() {
    for seed in 0..20 {
        let n = 3 + (seed as usize % 6);
        let inst = random_instance(n, seed);
        let out = qap::two_opt(
            &inst,
            &TwoOptParams { starts: 4 },
            &RunOptions {
                seed,
                ..Default::default()
            },
        );
        assert_eq!(inst.cost(&out.solution), out.objective);
        for r in 0..n {
            for s in r + 1..n {
                let neighbour = inst.cost(&swapped(&out.solution, r, s));
                assert!(
                    neighbour >= out.objective,
                    "seed {seed}: swap ({r},{s}) improves"
                );
            }
        }
    }
}

#[test]
fn robust_tabu_finds_the_optimum_on_small_instances() {
    for seed in 0..12 {
        let n = 4 + (seed as usize % 5);
        let inst = random_instance(n, seed);
        let out = qap::robust_tabu(
            &inst,
            &RotsParams::default(),
            &RunOptions {
                seed,
                ..Default::default()
            },
        );
        assert_eq!(inst.cost(&out.solution), out.objective);
        assert_eq!(out.objective, optimum(&inst), "seed {seed}, n {n}");
    }
}

#[test]
fn solvers_are_deterministic_whatever_the_thread_count() {
    let inst = qap::read(&common::repo_data().join("qap/tai20a.dat")).unwrap();
    let one = RunOptions {
        seed: 7,
        threads: 1,
        budget: Budget::default(),
    };
    let two = RunOptions {
        threads: 2,
        ..one.clone()
    };
    let params = TwoOptParams { starts: 8 };
    assert_eq!(
        qap::two_opt(&inst, &params, &one),
        qap::two_opt(&inst, &params, &two)
    );
    let rots = RotsParams {
        starts: 3,
        ..Default::default()
    };
    let short = |o: RunOptions| RunOptions {
        budget: Budget::iterations(500),
        ..o
    };
    assert_eq!(
        qap::robust_tabu(&inst, &rots, &short(one)),
        qap::robust_tabu(&inst, &rots, &short(two))
    );
}

#[test]
fn two_opt_multistart_equals_local_search_from_the_same_start() {
    let inst = qap::read(&common::repo_data().join("qap/bur26a.dat")).unwrap();
    let options = RunOptions {
        seed: 3,
        ..Default::default()
    };
    let out = qap::two_opt(&inst, &TwoOptParams { starts: 1 }, &options);
    let mut p = qap::two_opt::start_permutation(inst.n(), 3, 0);
    let search = local_search(&inst, &mut p, &Budget::default().start(u64::MAX));
    assert!(search.local_optimum);
    assert_eq!((out.objective, out.solution), (search.cost, p));
}

#[test]
fn robust_tabu_reaches_known_optima_of_shipped_instances() {
    let bks = solvers::bks::BestKnown::embedded();
    for name in ["tai12a", "chr12a", "nug12"] {
        let inst = qap::read(&common::repo_data().join(format!("qap/{name}.dat"))).unwrap();
        let out = qap::robust_tabu(&inst, &RotsParams::default(), &RunOptions::default());
        assert_eq!(inst.cost(&out.solution), out.objective);
        assert_eq!(out.objective, bks.get(name).unwrap().value, "{name}");
    }
}

proptest! {
    #[test]
    fn factored_update_equals_the_pairwise_formula((inst, p) in instance_strategy(9), r in 0usize..9, s in 0usize..9) {
        let n = inst.n();
        let (r, s) = ((r % n).min(s % n), (r % n).max(s % n));
        prop_assume!(r != s);
        let mut q = p.clone();
        let mut delta = delta_matrix(&inst, &p);
        let before = delta.clone();
        apply_swap(&inst, &mut q, &mut delta, r, s);
        for u in 0..n {
            for v in u + 1..n {
                if u != r && u != s && v != r && v != s {
                    let pairwise = solvers::qap::delta::swap_delta_update(&inst, &q, before[u * n + v], (r, s), (u, v));
                    prop_assert_eq!(delta[u * n + v], pairwise);
                }
            }
        }
    }
}

/// Entries in -2..3: many swaps share a delta, so the tie rule decides moves.
fn small_valued_instance(max_n: usize) -> impl Strategy<Value = (Instance, Vec<usize>)> {
    (3..=max_n).prop_flat_map(|n| {
        (
            prop::collection::vec(-2i64..3, n * n),
            prop::collection::vec(-2i64..3, n * n),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        )
            .prop_map(move |(a, b, p)| (Instance::new("small", n, a, b).unwrap(), p))
    })
}

/// The naive 2-opt of the GPU kernels: every swap's delta from scratch each iteration, the
/// first best improving swap in (r, s) order.
fn naive_two_opt(inst: &Instance, p: &mut [usize], iterations: u64) -> (i64, u64) {
    let n = inst.n();
    let mut cost = inst.cost(p);
    for done in 0..iterations {
        let mut best = (0i64, 0usize, 0usize);
        for r in 0..n {
            for s in r + 1..n {
                let d = swap_delta(inst, p, r, s);
                if d < best.0 {
                    best = (d, r, s);
                }
            }
        }
        if best.0 >= 0 {
            return (cost, done + 1);
        }
        p.swap(best.1, best.2);
        cost += best.0;
    }
    (cost, iterations)
}

proptest! {
    // The CPU 2-opt keeps the delta matrix (O(n^2) an iteration) where the GPU kernels
    // recompute every delta (O(n^3)): it must take the same moves, to the same local optimum,
    // with ties included (small value ranges make equal deltas common), on asymmetric and
    // symmetric instances, and stop at the same iteration under a budget.
    #[test]
    fn two_opt_takes_the_naive_scans_moves(
        (inst, p) in small_valued_instance(14),
        symmetric in any::<bool>(),
        budget in 1u64..40,
    ) {
        let inst = if symmetric { symmetrised(&inst) } else { inst };
        let (mut fast, mut naive) = (p.clone(), p.clone());
        let search = local_search(&inst, &mut fast, &Budget::iterations(budget).start(budget));
        let (cost, iterations) = naive_two_opt(&inst, &mut naive, budget);
        prop_assert_eq!(&fast, &naive);
        prop_assert_eq!(search.cost, cost);
        prop_assert_eq!(search.cost, inst.cost(&fast));
        prop_assert_eq!(search.iterations, iterations);
    }
}
