//! The GPU 2-opt local search (`kernels/tsp/ls-2opt.cu`) on a real GPU, checked on the CPU:
//! from random and nearest-neighbour tours of several instances and distance types, every
//! GPU tour is a permutation of all cities, its reported length is the CPU's exact length, it
//! is no longer than its start, and no 2-opt move over the same candidates improves it (a
//! local optimum, as the CPU search's). Skipped with a message on a machine without a GPU,
//! unless MATS_REQUIRE_GPU=1, where it fails.

use kernels::gpu::{self, Gpu, KernelClock};
use kernels::KernelCache;
use rand::seq::SliceRandom;
use rand::Rng;
use solvers::run::stream_rng;
use solvers::tsp::gpu::local_search::{Geometry, LocalSearch, LsParams};
use solvers::tsp::local_search::has_improving_move;
use solvers::tsp::{CandidateLists, EdgeWeightType, Instance};

fn random_instance(kind: EdgeWeightType, n: usize, seed: u64) -> Instance {
    let mut rng = stream_rng(seed, 0);
    let coords = (0..n)
        .map(|_| (rng.random_range(0.0..5000.0), rng.random_range(0.0..5000.0)))
        .collect();
    Instance::from_coords(format!("random-{}", kind.name()), kind, coords).unwrap()
}

fn instances() -> Vec<Instance> {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/tsp/");
    let mut out = vec![
        random_instance(EdgeWeightType::Euc2d, 300, 1),
        random_instance(EdgeWeightType::Ceil2d, 257, 2),
        random_instance(EdgeWeightType::Att, 130, 3),
        random_instance(EdgeWeightType::Euc2d, 1000, 4),
    ];
    for name in ["att48", "berlin52", "gr17"] {
        out.push(solvers::tsp::read(std::path::Path::new(&format!("{data}{name}.tsp"))).unwrap());
    }
    out
}

#[test]
fn gpu_two_opt_reaches_local_optima_that_the_cpu_rescores() {
    if !gpu::test_gpu_or_skip("gpu_two_opt_reaches_local_optima_that_the_cpu_rescores") {
        return;
    }
    let gpu = Gpu::open(0).expect("GPU 0 opens");
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    for inst in instances() {
        let n = inst.n();
        let dist = inst.distance_matrix();
        let k = 12.min(n - 1);
        let lists = CandidateLists::from_matrix(&dist, n, k);
        for params in [
            LsParams {
                neighbours: k as u32,
                warps: 4,
            },
            LsParams {
                neighbours: 5.min(k as u32),
                warps: 1,
            },
        ] {
            let (compiled, _) = cache
                .get_or_compile(&params.variant(&inst, gpu.info.arch))
                .expect("ls-2opt compiles");
            let module = gpu.load(&compiled).expect("module loads");
            // 9 tours: random permutations and nearest-neighbour-like (sorted by x) starts;
            // 9 is not a multiple of the warps per block, so the last block is partial.
            let m = 9;
            let mut rng = stream_rng(7, n as u64);
            let mut starts: Vec<Vec<usize>> = Vec::new();
            for a in 0..m {
                let mut t: Vec<usize> = (0..n).collect();
                if a % 3 == 2 {
                    let c = inst.coords().to_vec();
                    if !c.is_empty() {
                        t.sort_by(|&p, &q| c[p].0.total_cmp(&c[q].0));
                    }
                } else {
                    t.shuffle(&mut rng);
                }
                starts.push(t);
            }
            let flat: Vec<i32> = starts.iter().flatten().map(|&c| c as i32).collect();
            let stream = gpu.stream();
            let geometry = Geometry::upload(&gpu, &inst).unwrap();
            let mut tours = stream.clone_htod(&flat).unwrap();
            let mut lengths = stream.alloc_zeros::<i64>(m).unwrap();
            let mut ls = LocalSearch::new(&module, &gpu, &lists, n, m, &params).unwrap();
            let mut clock = KernelClock::new(&gpu).unwrap();
            ls.run(&gpu, &geometry, &mut tours, &mut lengths, &mut clock)
                .expect("the local search runs");
            let out: Vec<i32> = stream.clone_dtoh(&tours).unwrap();
            let lens: Vec<i64> = stream.clone_dtoh(&lengths).unwrap();
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
                "{}: n {n}, {params:?}: mean length {} after {} moves",
                inst.name,
                lens.iter().sum::<i64>() / m as i64,
                moves.iter().sum::<i64>()
            );
        }
    }
}
