//! The GPU 2-opt local search (`kernels/tsp/ls-2opt.cu`) and the GPU MAX-MIN Ant System on a
//! real GPU, checked on the CPU: from random and sorted tours of several instances and
//! distance types, every GPU tour is a permutation of all cities, its reported length is the
//! CPU's exact length, it is no longer than its start, and no 2-opt move over the same
//! candidates improves it (a local optimum, as the CPU search's). MMAS's answers re-score and
//! reach the optimum of small instances. Skipped with a message on a machine without a GPU,
//! unless MATS_REQUIRE_GPU=1, where it fails.

mod common;

use kernels::gpu::{self, Gpu, KernelClock};
use kernels::KernelCache;
use rand::seq::SliceRandom;
use solvers::run::{stream_rng, Budget, RunOptions};
use solvers::tsp::gpu::local_search::{LocalSearch, LsParams};
use solvers::tsp::gpu::mmas;
use solvers::tsp::gpu::{Colony, Construction, GpuParams};
use solvers::tsp::local_search::has_improving_move;
use solvers::tsp::{CandidateLists, EdgeWeightType, Instance};

use common::{random_tsp as random_instance, shipped_tsp as shipped};

fn instances() -> Vec<Instance> {
    let mut out = vec![
        random_instance(EdgeWeightType::Euc2d, 300, 1),
        random_instance(EdgeWeightType::Ceil2d, 257, 2),
        random_instance(EdgeWeightType::Att, 130, 3),
        random_instance(EdgeWeightType::Euc2d, 1000, 4),
    ];
    for name in ["att48", "berlin52", "gr17"] {
        out.push(shipped(name));
    }
    out
}

/// The candidate lists the colony builds (by coordinates, or from the matrix for GEO).
fn lists_of(inst: &Instance, k: usize) -> CandidateLists {
    match inst.edge_weight_type {
        EdgeWeightType::Geo | EdgeWeightType::Explicit => {
            CandidateLists::from_matrix(&inst.distance_matrix(), inst.n(), k)
        }
        _ => CandidateLists::from_instance(inst, k),
    }
}

#[test]
fn gpu_two_opt_reaches_local_optima_that_the_cpu_rescores() {
    if !gpu::test_gpu_or_skip("gpu_two_opt_reaches_local_optima_that_the_cpu_rescores") {
        return;
    }
    let gpu = Gpu::open(0).expect("GPU 0 opens");
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    // Runs with the tours in global memory and in shared memory.
    let mut places = [0; 2];
    for inst in instances() {
        let n = inst.n();
        let dist = inst.distance_matrix();
        // 9 tours: not a multiple of the warps per block, so the last block is partial.
        let m = 9;
        let mut colony_params = GpuParams::new(Construction::Data);
        colony_params.ants = Some(m);
        colony_params.candidates = 12;
        let mut colony = Colony::new(&gpu, &cache, &inst, &colony_params).expect("colony");
        let k = colony.list_length();
        let lists = lists_of(&inst, k);
        for params in [
            LsParams {
                neighbours: k as u32,
                warps: 4,
            },
            LsParams {
                neighbours: 5.min(k as u32),
                warps: 1,
            },
            // 32 tours of 1000 cities need 256 KB: searched in global memory.
            LsParams {
                neighbours: k as u32,
                warps: 32,
            },
        ] {
            let (compiled, _) = cache
                .get_or_compile(&params.variant(&inst, gpu.info.arch, &[]))
                .expect("ls-2opt compiles");
            let module = gpu.load(&compiled).expect("module loads");
            let mut rng = stream_rng(7, n as u64);
            let coords = inst.coords().to_vec();
            let starts: Vec<Vec<usize>> = (0..m)
                .map(|a| {
                    let mut t: Vec<usize> = (0..n).collect();
                    if a % 3 == 2 && !coords.is_empty() {
                        t.sort_by(|&p, &q| coords[p].0.total_cmp(&coords[q].0));
                    } else {
                        t.shuffle(&mut rng);
                    }
                    t
                })
                .collect();
            let flat: Vec<i32> = starts.iter().flatten().map(|&c| c as i32).collect();
            let stream = gpu.stream().clone();
            let pointers = colony.instance_pointers();
            let (tours, lengths) = colony.tours_and_lengths_mut();
            stream.memcpy_htod(&flat, tours).unwrap();
            let mut ls = LocalSearch::new(&module, &gpu, n, m, &params).unwrap();
            places[usize::from(ls.in_shared)] += 1;
            let mut clock = KernelClock::new(&gpu).unwrap();
            ls.run(&gpu, pointers, tours, lengths, &mut clock)
                .expect("the local search runs");
            let out: Vec<i32> = stream.clone_dtoh(tours).unwrap();
            let lens: Vec<i64> = stream.clone_dtoh(lengths).unwrap();
            let moves = ls.moves(&gpu).unwrap();
            for a in 0..m {
                let mut tour: Vec<usize> = out[a * n..(a + 1) * n]
                    .iter()
                    .map(|&c| c as usize)
                    .collect();
                let what = format!("{} tour {a} ({params:?})", inst.name);
                let mut sorted = tour.clone();
                sorted.sort_unstable();
                assert_eq!(
                    sorted,
                    (0..n).collect::<Vec<_>>(),
                    "{what}: not a permutation"
                );
                assert_eq!(lens[a], inst.tour_length(&tour), "{what}: length");
                assert!(
                    lens[a] <= inst.tour_length(&starts[a]),
                    "{what}: longer than its start"
                );
                assert!(moves[a] > 0 || n < 20, "{what}: no move from a poor start");
                assert!(
                    !has_improving_move(&mut tour, &dist, &lists, params.neighbours as usize),
                    "{what}: not 2-optimal over the candidates"
                );
            }
            println!(
                "{}: n {n}, {params:?}, in shared memory: {}: mean length {} after {} moves",
                inst.name,
                ls.in_shared,
                lens.iter().sum::<i64>() / m as i64,
                moves.iter().sum::<i64>()
            );
        }
    }
    assert!(
        places[0] > 0 && places[1] > 0,
        "global, shared runs: {places:?}"
    );
}

#[test]
fn gpu_mmas_reaches_the_optimum_of_small_instances_and_rescores() {
    if !gpu::test_gpu_or_skip("gpu_mmas_reaches_the_optimum_of_small_instances_and_rescores") {
        return;
    }
    let gpu = Gpu::open(0).expect("GPU 0 opens");
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    for name in ["eil51", "berlin52", "att48", "gr17"] {
        let inst = shipped(name);
        let bks = solvers::bks::BestKnown::embedded().get(name).unwrap().value;
        for construction in Construction::ALL {
            let params = GpuParams {
                construction,
                ants: Some(64),
                ..GpuParams::mmas()
            };
            let mut prepared = mmas::prepare(&gpu, &cache, &inst, &params).expect("prepares");
            let options = RunOptions {
                seed: 5,
                threads: 1,
                budget: Budget::iterations(100),
            };
            let run = prepared.run(&gpu, &options).expect("runs");
            let out = &run.outcome;
            solvers::permutation::check(&out.solution, inst.n()).unwrap();
            assert_eq!(out.objective, inst.tour_length(&out.solution));
            assert!(out.objective >= bks);
            assert!(
                out.objective as f64 <= 1.005 * bks as f64,
                "{name} {construction:?}: {} vs {bks}",
                out.objective
            );
            println!(
                "{name} {}: {} (best known {bks}) in {} iterations, {:.3} s",
                construction.name(),
                out.objective,
                out.iterations,
                run.search_seconds
            );
        }
    }
}
