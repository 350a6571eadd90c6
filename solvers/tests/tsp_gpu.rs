//! The TSP ant colony on a real GPU, checked on the CPU: every tour every variant builds is a
//! permutation of all cities whose exact length is the one the GPU reported, on every TSPLIB
//! distance type (EUC_2D, CEIL_2D, ATT from coordinates; GEO and EXPLICIT from the uploaded
//! matrix); the GPU's distances equal the CPU's (lengths of random permutations); the
//! construction variants draw edges with the CPU Ant System's frequencies on a non-uniform
//! pheromone matrix (and the comparison tells a different rule apart); one pheromone update
//! (both variants) equals the CPU's within float tolerance, and so do MAX-MIN's clamped
//! evaporation and a deposit from a buffer of one tour. Skipped with a message without a GPU,
//! unless MATS_REQUIRE_GPU=1, where it fails.

use std::path::Path;

use cudarc::driver::CudaSlice;
use kernels::gpu::{self, Gpu};
use kernels::KernelCache;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use solvers::run::{Budget, RunOptions};
use solvers::tsp::gpu::{self as tsp_gpu, Colony, Construction, GpuParams, PheromoneUpdate};
use solvers::tsp::{AntSystem, AsParams, EdgeWeightType, Instance};

fn gpu_or_skip(test: &str) -> Option<Gpu> {
    if !gpu::test_gpu_or_skip(test) {
        return None;
    }
    Some(Gpu::open(0).expect("GPU 0 opens"))
}

fn data(name: &str) -> Instance {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/tsp")
        .join(name);
    solvers::tsp::read(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// One instance per distance type, a clustered random one where small candidate lists force
/// the fall-back often, and one with lists longer than a warp.
fn instances() -> Vec<(Instance, usize)> {
    let berlin = data("berlin52.tsp");
    let ceil = Instance::from_coords(
        "berlin52-ceil",
        EdgeWeightType::Ceil2d,
        berlin.coords().to_vec(),
    )
    .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let random: Vec<(f64, f64)> = (0..300)
        .map(|i| {
            let cluster = (i % 5) as f64 * 1000.0;
            (
                cluster + rng.random::<f64>() * 100.0,
                rng.random::<f64>() * 3000.0,
            )
        })
        .collect();
    let random = Instance::from_coords("random300", EdgeWeightType::Euc2d, random).unwrap();
    vec![
        (berlin, 32),
        (ceil, 10),
        (data("att48.tsp"), 16),
        (data("ulysses16.tsp"), 32),
        (data("burma14.tsp"), 5),
        (data("gr17.tsp"), 8),
        (data("bayg29.tsp"), 12),
        (random.clone(), 6),
        (random, 40),
    ]
}

fn check_tours(colony: &Colony, inst: &Instance, what: &str) {
    let tours = colony.tours_to_host().unwrap();
    let lengths = colony.lengths_to_host().unwrap();
    assert_eq!(tours.len(), colony.ants());
    for (a, (tour, &length)) in tours.iter().zip(&lengths).enumerate() {
        let mut seen = vec![false; inst.n()];
        for &c in tour {
            assert!(
                c < inst.n() && !seen[c],
                "{what}: ant {a}'s tour is no permutation: {tour:?}"
            );
            seen[c] = true;
        }
        assert_eq!(inst.tour_length(tour), length, "{what}: ant {a}'s length");
    }
}

#[test]
fn every_variant_builds_permutations_with_exact_lengths_on_every_distance_type() {
    let Some(gpu) =
        gpu_or_skip("every_variant_builds_permutations_with_exact_lengths_on_every_distance_type")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    for (inst, k) in instances() {
        for construction in Construction::ALL {
            for update in tsp_gpu::PheromoneUpdate::ALL {
                let mut params = GpuParams::new(construction);
                params.pheromone = update;
                params.candidates = k;
                let what = format!(
                    "{} k={k} {}/{}",
                    inst.name,
                    construction.name(),
                    update.name()
                );
                let mut prepared = tsp_gpu::prepare(&gpu, &cache, &inst, &params)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                // The AS driver: 5 iterations; its best tour re-scored.
                let run = prepared
                    .run(
                        &gpu,
                        &RunOptions {
                            seed: 3,
                            threads: 1,
                            budget: Budget::iterations(5),
                        },
                    )
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(run.outcome.iterations, 5);
                assert_eq!(
                    inst.tour_length(&run.outcome.solution),
                    run.outcome.objective,
                    "{what}"
                );
                // The last iteration's tours, all of them.
                check_tours(prepared.colony(), &inst, &what);
            }
        }
    }
}

#[test]
fn scratch_in_global_memory_builds_the_same_tours_as_in_shared_memory() {
    let Some(gpu) =
        gpu_or_skip("scratch_in_global_memory_builds_the_same_tours_as_in_shared_memory")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let coords: Vec<(f64, f64)> = (0..4000)
        .map(|_| (rng.random::<f64>() * 1e4, rng.random::<f64>() * 1e4))
        .collect();
    let inst = Instance::from_coords("random4000", EdgeWeightType::Euc2d, coords).unwrap();
    for construction in [Construction::Data, Construction::DataCompressed] {
        let tours_with = |threads: u32| {
            let mut params = GpuParams::new(construction);
            params.ants = Some(64);
            params.threads_per_block = threads;
            let mut colony = Colony::new(&gpu, &cache, &inst, &params).unwrap();
            colony.reset_pheromone(0.01).unwrap();
            colony.compute_choice_info().unwrap();
            colony.construct(5, 2).unwrap();
            check_tours(&colony, &inst, construction.name());
            (colony.scratch_in_global(), colony.tours_to_host().unwrap())
        };
        // 32 warps x 32 KB (compressed) or 32 x 500 B bitsets: the former does not fit.
        let (global_small, small) = tours_with(64);
        let (global_large, large) = tours_with(1024);
        assert!(!global_small);
        assert_eq!(global_large, construction == Construction::DataCompressed);
        // Counter-based draws: the launch shape does not change a tour.
        assert_eq!(small, large, "{}", construction.name());
    }
}

#[test]
fn gpu_distances_equal_the_cpu_ones_on_every_type() {
    let Some(gpu) = gpu_or_skip("gpu_distances_equal_the_cpu_ones_on_every_type") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut types = std::collections::BTreeSet::new();
    for (inst, _) in instances() {
        types.insert(inst.edge_weight_type.name());
        let params = GpuParams::new(Construction::Data);
        let colony = Colony::new(&gpu, &cache, &inst, &params).unwrap();
        let n = inst.n();
        // Random permutations, and tours [i, j, ...] that put each pair next to each other.
        let mut tours: Vec<Vec<usize>> = (0..200)
            .map(|_| {
                let mut t: Vec<usize> = (0..n).collect();
                t.shuffle(&mut rng);
                t
            })
            .collect();
        for i in 0..n {
            let mut t: Vec<usize> = (0..n).collect();
            t.rotate_left(i);
            tours.push(t);
        }
        let flat: Vec<i32> = tours.iter().flatten().map(|&c| c as i32).collect();
        let device: CudaSlice<i32> = colony.stream().clone_htod(&flat).unwrap();
        let mut lengths: CudaSlice<i64> = colony.stream().alloc_zeros(tours.len()).unwrap();
        colony
            .tour_lengths(&device, tours.len(), &mut lengths)
            .unwrap();
        let got = colony.stream().clone_dtoh(&lengths).unwrap();
        for (t, &l) in tours.iter().zip(&got) {
            assert_eq!(
                inst.tour_length(t),
                l,
                "{} ({})",
                inst.name,
                inst.edge_weight_type.name()
            );
        }
    }
    assert_eq!(types.len(), 5, "all five TSPLIB types covered: {types:?}");
}

/// Undirected edge counts of a set of tours.
fn edge_counts(n: usize, tours: &[Vec<usize>]) -> Vec<f64> {
    let mut counts = vec![0.0; n * n];
    for t in tours {
        let mut previous = t[n - 1];
        for &c in t {
            let (a, b) = (previous.min(c), previous.max(c));
            counts[a * n + b] += 1.0;
            previous = c;
        }
    }
    counts
}

/// Total variation distance between two edge distributions.
fn total_variation(a: &[f64], b: &[f64]) -> f64 {
    let (sa, sb): (f64, f64) = (a.iter().sum(), b.iter().sum());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x / sa - y / sb).abs())
        .sum::<f64>()
        / 2.0
}

/// A symmetric pheromone matrix with a random factor in [0.2, 5] per edge.
fn random_pheromone(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut p = vec![0.0f32; n * n];
    for i in 0..n {
        for j in i + 1..n {
            let v = 0.01 * (0.2 + 4.8 * rng.random::<f32>());
            p[i * n + j] = v;
            p[j * n + i] = v;
        }
    }
    p
}

#[test]
fn construction_edge_frequencies_match_the_cpu_ant_system() {
    let Some(gpu) = gpu_or_skip("construction_edge_frequencies_match_the_cpu_ant_system") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    let inst = data("eil51.tsp");
    let n = inst.n();
    let pheromone = random_pheromone(n, 5);
    let rounds = 300;
    // Short lists: the fall-back to all cities happens in most tours.
    let cpu_tours = |beta: f64| {
        let params = AsParams {
            candidates: 6,
            beta,
            ..AsParams::default()
        };
        let mut tours = Vec::new();
        let mut choice = Vec::new();
        for seed in 0..rounds {
            let mut state = AntSystem::new(&inst, &params, 1000 + seed).unwrap();
            state.pheromone = pheromone.iter().map(|&p| f64::from(p)).collect();
            state.compute_choice_info();
            state.construct();
            tours.extend(state.tours.clone());
            choice = state.choice_info.clone();
        }
        (tours, choice)
    };
    let (cpu, cpu_choice) = cpu_tours(2.0);
    let cpu_counts = edge_counts(n, &cpu);
    let (other, _) = cpu_tours(1.0);
    let other_counts = edge_counts(n, &other);
    // Two CPU samples of the same rule, for the noise level.
    let (cpu2, _) = {
        let params = AsParams {
            candidates: 6,
            ..AsParams::default()
        };
        let mut tours = Vec::new();
        for seed in 0..rounds {
            let mut state = AntSystem::new(&inst, &params, 5000 + seed).unwrap();
            state.pheromone = pheromone.iter().map(|&p| f64::from(p)).collect();
            state.compute_choice_info();
            state.construct();
            tours.extend(state.tours.clone());
        }
        (tours, ())
    };
    let noise = total_variation(&cpu_counts, &edge_counts(n, &cpu2));
    let wrong_rule = total_variation(&cpu_counts, &other_counts);
    println!("CPU vs CPU (other seeds): TV {noise:.4}; CPU beta 2 vs beta 1: TV {wrong_rule:.4}");
    assert!(
        wrong_rule > 3.0 * noise,
        "the statistic cannot tell beta 1 from beta 2"
    );
    for construction in Construction::ALL {
        let mut params = GpuParams::new(construction);
        params.candidates = 6;
        let mut colony = Colony::new(&gpu, &cache, &inst, &params).unwrap();
        colony.set_pheromone(&pheromone).unwrap();
        colony.compute_choice_info().unwrap();
        let choice = colony.choice_to_host().unwrap();
        for (c, (&g, &h)) in choice.iter().zip(&cpu_choice).enumerate() {
            assert!(
                (f64::from(g) - h).abs() <= 1e-6 * h.abs(),
                "choice info of cell {c}: GPU {g}, CPU {h}"
            );
        }
        let mut tours = Vec::new();
        for iteration in 0..rounds {
            colony.construct(42, iteration).unwrap();
            check_tours(&colony, &inst, construction.name());
            tours.extend(colony.tours_to_host().unwrap());
        }
        let tv = total_variation(&cpu_counts, &edge_counts(n, &tours));
        println!(
            "{}: GPU vs CPU edge frequencies TV {tv:.4}",
            construction.name()
        );
        assert!(
            tv < 2.0 * noise + 0.01,
            "{}: edge frequencies differ from the CPU's: TV {tv:.4} (CPU vs CPU {noise:.4})",
            construction.name()
        );
    }
}

#[test]
fn one_pheromone_update_equals_the_cpu_one() {
    let Some(gpu) = gpu_or_skip("one_pheromone_update_equals_the_cpu_one") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = KernelCache::new(dir.path());
    for inst in [data("berlin52.tsp"), data("gr17.tsp")] {
        let n = inst.n();
        for update in PheromoneUpdate::ALL {
            let mut params = GpuParams::new(Construction::Data);
            params.pheromone = update;
            let mut colony = Colony::new(&gpu, &cache, &inst, &params).unwrap();
            let start = random_pheromone(n, 9);
            colony.set_pheromone(&start).unwrap();
            colony.compute_choice_info().unwrap();
            colony.construct(1, 0).unwrap();
            colony.evaporate(params.rho, 0.0, f32::INFINITY).unwrap();
            colony.deposit_ants(1.0).unwrap();
            let gpu_tau = colony.pheromone_to_host().unwrap();

            let mut cpu = AntSystem::new(&inst, &params.as_params(), 1).unwrap();
            cpu.pheromone = start.iter().map(|&p| f64::from(p)).collect();
            cpu.tours = colony.tours_to_host().unwrap();
            cpu.lengths = colony.lengths_to_host().unwrap();
            cpu.update_pheromone();
            let mut changed = 0;
            for c in 0..n * n {
                let (g, h) = (f64::from(gpu_tau[c]), cpu.pheromone[c]);
                assert!(
                    (g - h).abs() <= 1e-5 * h.abs() + 1e-12,
                    "{} {}: cell ({}, {}): GPU {g}, CPU {h}",
                    inst.name,
                    update.name(),
                    c / n,
                    c % n
                );
                if (h - f64::from(start[c]) * 0.5).abs() > 1e-9 {
                    changed += 1;
                }
            }
            assert!(
                changed >= 2 * n,
                "{}: the deposit reached {changed} cells",
                update.name()
            );

            // MAX-MIN's use: clamped evaporation, then a deposit from a buffer of one tour
            // with weight 2, then clamping alone (rho = 0).
            let (lo, hi) = (0.004f32, 0.02f32);
            colony.evaporate(0.1, lo, hi).unwrap();
            let tour: Vec<usize> = (0..n).rev().collect();
            let length = inst.tour_length(&tour);
            let tours: CudaSlice<i32> = colony
                .stream()
                .clone_htod(&tour.iter().map(|&c| c as i32).collect::<Vec<_>>())
                .unwrap();
            let lengths: CudaSlice<i64> = colony.stream().clone_htod(&[length]).unwrap();
            colony.deposit(&tours, &lengths, 1, 2.0).unwrap();
            let after_deposit = colony.pheromone_to_host().unwrap();
            colony.evaporate(0.0, lo, hi).unwrap();
            let clamped = colony.pheromone_to_host().unwrap();
            let mut expected: Vec<f64> = gpu_tau
                .iter()
                .map(|&t| (f64::from(t) * 0.9).clamp(f64::from(lo), f64::from(hi)))
                .collect();
            let mut previous = tour[n - 1];
            for &c in &tour {
                expected[previous * n + c] += 2.0 / length as f64;
                expected[c * n + previous] += 2.0 / length as f64;
                previous = c;
            }
            for c in 0..n * n {
                let (g, h) = (f64::from(after_deposit[c]), expected[c]);
                assert!(
                    (g - h).abs() <= 1e-5 * h.abs(),
                    "{} MMAS deposit cell {c}: GPU {g}, expected {h}",
                    update.name()
                );
                let want = h.clamp(f64::from(lo), f64::from(hi));
                assert!(
                    (f64::from(clamped[c]) - want).abs() <= 1e-6 * want,
                    "clamp cell {c}"
                );
            }
        }
    }
}
