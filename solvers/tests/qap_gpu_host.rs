//! Host-side parts of the QAP GPU driver that need no GPU.

use solvers::permutation;
use solvers::qap::gpu::{start_permutation, GpuAlgorithm};

#[test]
fn start_permutations_are_permutations_and_differ_by_solution_and_seed() {
    for n in [2usize, 12, 50, 256] {
        let p = start_permutation(n, 1, 0);
        permutation::check(&p, n).unwrap();
        if n > 10 {
            assert_ne!(p, start_permutation(n, 1, 1));
            assert_ne!(p, start_permutation(n, 2, 0));
            assert_eq!(p, start_permutation(n, 1, 0));
        }
    }
}

#[test]
fn algorithm_names_round_trip_and_unknown_names_list_the_known() {
    for a in GpuAlgorithm::ALL {
        assert_eq!(GpuAlgorithm::from_name(a.name()).unwrap(), a);
        assert_eq!(a.source(), format!("qap/{}", a.name()));
        assert!(kernels::source::find(&a.source()).is_ok());
    }
    let e = GpuAlgorithm::from_name("3opt").unwrap_err();
    assert!(e.contains("rots-block"), "{e}");
}

/// rots-block narrows deltas to int32 only below the bound, packs moves into 64-bit keys only
/// below 2^45, and otherwise falls back to the kernel with int64 deltas in global memory.
#[test]
fn rots_block_picks_the_delta_width_the_values_allow() {
    use solvers::qap::gpu::{rots_delta_bound, rots_fast_shared_bytes, GpuParams, RotsKernel};
    use solvers::qap::Instance;
    // A symmetric instance with entries up to `top` in both matrices.
    let instance = |n: usize, top: i64| {
        let m: Vec<i64> = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                match (i + j) % 2 {
                    _ if i == j => 0,
                    0 => top,
                    _ => 1 + (i + j) as i64 % 7,
                }
            })
            .collect();
        Instance::new("sym", n, m.clone(), m).unwrap()
    };
    let params = GpuParams::new(GpuAlgorithm::RotsBlock);
    let h100 = 227 * 1024;
    let small = instance(20, 99);
    assert_eq!(rots_delta_bound(&small), 16 * 24 * 99 * 99);
    assert_eq!(
        params.rots_kernel(&small, h100),
        RotsKernel::Shared {
            symmetric: true,
            narrow: true,
            m16: true,
            min_blocks: 2,
        }
    );
    // 16 (n + 4) top^2 just past 2^31, then past 2^45.
    let wide = instance(20, 2400);
    assert!(rots_delta_bound(&wide) >= 1 << 31);
    assert_eq!(
        params.rots_kernel(&wide, h100),
        RotsKernel::Shared {
            symmetric: true,
            narrow: false,
            m16: true,
            min_blocks: 2,
        }
    );
    let huge = instance(20, 1 << 20);
    assert!(rots_delta_bound(&huge) >= 1 << 45);
    assert_eq!(
        params.rots_kernel(&huge, h100),
        RotsKernel::Global {
            shared_deltas: true
        }
    );
    // n = 100: the int32 deltas are the smaller layout, int16 matrices smaller still; all fit
    // an H100 but not a 100 KB limit.
    let narrow = rots_fast_shared_bytes(100, true, true, false);
    assert!(narrow < rots_fast_shared_bytes(100, true, false, false));
    assert_eq!(
        narrow,
        4 * 4952 + 16 * 100 + 8 * 100 + 12 * 100 * 100 + 8 * 100
    );
    assert_eq!(
        rots_fast_shared_bytes(100, true, true, true),
        narrow - 4 * 100 * 100
    );
    assert_eq!(
        params.rots_kernel(&instance(100, 99), 100 * 1024),
        RotsKernel::Global {
            shared_deltas: true
        }
    );
}

/// The int16 matrices are chosen exactly when every entry of both matrices lies in
/// -32768..=32767, and refused (int32 kept) for one entry outside; switching them off keeps
/// int32 too.
#[test]
fn rots_block_uses_int16_matrices_only_where_every_entry_fits() {
    use solvers::qap::gpu::{matrices_fit_i16, GpuParams, RotsKernel};
    use solvers::qap::Instance;
    let h100 = 227 * 1024;
    let n = 30;
    let with = |a_extreme: i64, b_extreme: i64| {
        let mut a: Vec<i64> = (0..n * n).map(|k| (k % 13) as i64).collect();
        let mut b: Vec<i64> = (0..n * n).map(|k| (k % 7) as i64).collect();
        a[n + 3] = a_extreme;
        b[2 * n + 5] = b_extreme;
        Instance::new("edge", n, a, b).unwrap()
    };
    let m16 = |inst: &Instance, params: &GpuParams| match params.rots_kernel(inst, h100) {
        RotsKernel::Shared { m16, .. } => m16,
        other => panic!("expected the shared-memory kernel, got {other:?}"),
    };
    let params = GpuParams::new(GpuAlgorithm::RotsBlock);
    for (a, b, fits) in [
        (32767, 1, true),
        (-32768, 1, true),
        (1, 32767, true),
        (32768, 1, false),
        (1, 32768, false),
        (-32769, 1, false),
        (1, -32769, false),
        (1 << 20, 1, false),
    ] {
        let inst = with(a, b);
        assert_eq!(matrices_fit_i16(&inst), fits, "a = {a}, b = {b}");
        assert_eq!(m16(&inst, &params), fits, "a = {a}, b = {b}");
    }
    let off = GpuParams {
        narrow_matrices: false,
        ..params.clone()
    };
    assert!(!m16(&with(5, 5), &off));
    // QAPLIB's tai12b has flows up to 58098: int32.
    if let Some(data) = common_shared_data() {
        let tai12b = solvers::qap::read(&data.join("qaplib/instances/tai12b.dat")).unwrap();
        assert!(!matrices_fit_i16(&tai12b));
        assert!(!m16(&tai12b, &params));
    }
}

fn common_shared_data() -> Option<std::path::PathBuf> {
    let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data"));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("skipped the QAPLIB part: ../shared/data not found beside the repository");
        None
    }
}

/// tai100a (symmetric, entries <= 99) takes the int16 shared layout, which leaves room for two
/// blocks per SM of an H100 (228 KB per SM, 227 KB opt-in per block); n = 256 and n = 512
/// fall back to the global layouts, and a forced layout is kept and refused where it does
/// not fit.
#[test]
fn rots_block_layouts_follow_the_size() {
    use solvers::qap::gpu::{GpuParams, RotsKernel, RotsLayout};
    let h100 = 227 * 1024;
    let params = GpuParams::new(GpuAlgorithm::RotsBlock);
    let tai = |n: usize| solvers::qap::generate(n, 1).unwrap();
    assert_eq!(
        params.rots_kernel(&tai(100), h100),
        RotsKernel::Shared {
            symmetric: true,
            narrow: true,
            m16: true,
            min_blocks: 2
        }
    );
    // int32 matrices at n = 100 need ~143 KB: one block per SM.
    let wide = GpuParams {
        narrow_matrices: false,
        ..params.clone()
    };
    assert!(matches!(
        wide.rots_kernel(&tai(100), h100),
        RotsKernel::Shared { min_blocks: 1, .. }
    ));
    assert_eq!(
        params.rots_kernel(&tai(200), h100).layout(),
        RotsLayout::GlobalTabu
    );
    for n in [256, 300, 512] {
        let kernel = params.rots_kernel(&tai(n), h100);
        assert_eq!(kernel.layout(), RotsLayout::Global, "n = {n}");
        assert_eq!(kernel.shared_bytes(n), 40 * n);
        let variant = params.variant_for(&tai(n), kernels::Arch::SM90, h100);
        assert_eq!(
            variant.defines.get("QAP_DELTA_GLOBAL").map(String::as_str),
            Some("1"),
            "n = {n}"
        );
    }
    let forced = GpuParams {
        layout: RotsLayout::GlobalTabu,
        ..params.clone()
    };
    assert_eq!(
        forced.rots_kernel(&tai(20), h100).layout(),
        RotsLayout::GlobalTabu
    );
    // The `layout` text of a space point reaches the parameters; unknown names are refused.
    assert_eq!(RotsLayout::from_name("global").unwrap(), RotsLayout::Global);
    assert!(RotsLayout::from_name("texture")
        .unwrap_err()
        .contains("global-tabu"));
}

/// A rots-block run rebases its int32 iteration counters before they pass 2^29, however the
/// launches fall.
#[test]
fn rots_block_rebases_counters_before_they_overflow() {
    use solvers::qap::gpu::{needs_rebase, ROTS_REBASE_ITERATIONS as LIMIT};
    assert!(!needs_rebase(0, LIMIT));
    assert!(!needs_rebase(LIMIT - 1000, 1000));
    assert!(needs_rebase(LIMIT - 1000, 1001));
    // Launches of 1024 iterations (a divisor of the limit) fill three counters exactly, and
    // none passes the limit.
    let (mut since, mut peak, mut rebases) = (0u64, 0u64, 0);
    for _ in 0..(3 * LIMIT / 1024) {
        if needs_rebase(since, 1024) {
            since = 0;
            rebases += 1;
        }
        since += 1024;
        peak = peak.max(since);
    }
    assert!(peak <= LIMIT && LIMIT < i32::MAX as u64 / 2);
    assert_eq!(rebases, 2);
}

/// The default block count: one per SM in the shared layout (deeper trajectories), all
/// resident blocks with the global layouts; never 0, never past the grid limit.
#[test]
fn rots_block_default_blocks() {
    use solvers::qap::gpu::{rots_default_blocks, RotsKernel};
    let shared = RotsKernel::Shared {
        symmetric: true,
        narrow: true,
        m16: true,
        min_blocks: 2,
    };
    let global = RotsKernel::Global {
        shared_deltas: false,
    };
    assert_eq!(rots_default_blocks(132, 2, shared), 132);
    assert_eq!(rots_default_blocks(132, 3, global), 396);
    assert_eq!(rots_default_blocks(132, 0, global), 132);
    assert_eq!(rots_default_blocks(0, 0, global), 1);
    assert_eq!(rots_default_blocks(100_000, 4, global), 65535);
}

/// The adaptive perturbation schedule against its rule written out (Benlic and Hao's
/// breakout local search): back to the minimum after an improvement, one swap more after a
/// restart without one, capped at the maximum; off (max <= min) it is the fixed strength.
#[test]
fn adaptive_perturbation_follows_the_breakout_rule() {
    use solvers::qap::gpu::next_perturbation;
    let (min, max) = (25, 28);
    // improved flags of successive restarts of one block, and the swaps each must use.
    let improved = [true, false, false, false, false, false, true, false];
    let expected = [25, 26, 27, 28, 28, 28, 25, 26];
    let mut last = min;
    for (k, (&imp, &want)) in improved.iter().zip(&expected).enumerate() {
        last = next_perturbation(last, imp, min, max);
        assert_eq!(last, want, "restart {k}");
    }
    for imp in [true, false] {
        assert_eq!(next_perturbation(25, imp, 25, 0), 25);
        assert_eq!(next_perturbation(25, imp, 25, 25), 25);
    }
    // A strength below the minimum (a changed minimum) restarts from it.
    assert_eq!(next_perturbation(3, false, 25, 40), 25);
}

/// `check` against an H100's limits without a GPU: tai256c-sized instances run by default
/// (the `global` layout), a forced layout that does not fit is refused naming it, and n past
/// 512 is refused naming the limit.
#[test]
fn rots_block_check_accepts_n_256_to_512_and_names_a_layout_that_does_not_fit() {
    use solvers::qap::gpu::{GpuParams, RotsLayout};
    let h100 = kernels::gpu::DeviceInfo {
        ordinal: 0,
        name: "H100".into(),
        arch: kernels::Arch::SM90,
        sm_count: 132,
        total_memory_bytes: 80 << 30,
        max_threads_per_block: 1024,
        max_shared_bytes_per_block: 48 * 1024,
        max_shared_bytes_per_block_optin: 232_448,
        clock_khz: 1_980_000,
    };
    let params = GpuParams::new(GpuAlgorithm::RotsBlock);
    for n in [256, 512] {
        let inst = solvers::qap::generate(n, 1).unwrap();
        params.check(&inst, &h100).unwrap();
    }
    let inst = solvers::qap::generate(256, 1).unwrap();
    let e = GpuParams {
        layout: RotsLayout::GlobalTabu,
        ..params.clone()
    }
    .check(&inst, &h100)
    .unwrap_err();
    assert!(
        e.contains("271360") && e.contains("`global-tabu`") && e.contains("--layout global"),
        "{e}"
    );
    let e = GpuParams {
        layout: RotsLayout::Shared,
        ..params.clone()
    }
    .check(&inst, &h100)
    .unwrap_err();
    assert!(e.contains("layout `shared`"), "{e}");
    let e = params
        .check(&solvers::qap::generate(513, 1).unwrap(), &h100)
        .unwrap_err();
    assert!(e.contains("n <= 512"), "{e}");
    // More blocks than the device's memory holds is refused naming --solutions (65535 blocks
    // at n = 512 asked 137 GB); a few thousand fit.
    let big = solvers::qap::generate(512, 1).unwrap();
    let many = |solutions| GpuParams {
        solutions,
        layout: RotsLayout::Global,
        ..params.clone()
    };
    let e = many(65535).check(&big, &h100).unwrap_err();
    assert!(e.contains("--solutions") && e.contains("137.6 GB"), "{e}");
    many(4096).check(&big, &h100).unwrap();
    // The thread-per-solution variants keep their n <= 256.
    let e = GpuParams::new(GpuAlgorithm::TwoOpt)
        .check(&solvers::qap::generate(300, 1).unwrap(), &h100)
        .unwrap_err();
    assert!(e.contains("n <= 256"), "{e}");
}

/// The variants the layouts choose compile with NVRTC (no GPU needed; skipped without NVRTC
/// unless MATS_REQUIRE_NVRTC=1): int16 matrices with two blocks per SM at n = 100 within 64
/// registers and no spills (what two resident blocks of 512 threads need), an asymmetric
/// int16 one, and the `global` layout at n = 256 and 512, which leaves the shared-memory
/// kernel out.
#[test]
fn rots_block_layout_variants_compile() {
    use solvers::qap::gpu::{GpuParams, RotsKernel};
    if !kernels::nvrtc::available() {
        if std::env::var("MATS_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
            panic!("MATS_REQUIRE_NVRTC=1 but NVRTC cannot be loaded");
        }
        println!("rots_block_layout_variants_compile: skipped: NVRTC not available");
        return;
    }
    let h100 = 232_448;
    let params = GpuParams::new(GpuAlgorithm::RotsBlock);
    let n = 26;
    let a: Vec<i64> = (0..n * n).map(|k| ((k * 31) % 50) as i64).collect();
    let b: Vec<i64> = (0..n * n).map(|k| ((k * 17) % 40) as i64).collect();
    let asym = solvers::qap::Instance::new("asym", n, a, b).unwrap();
    let cases = [
        (
            solvers::qap::generate(100, 1).unwrap(),
            "qap_rots_block_fast",
        ),
        (asym, "qap_rots_block_fast"),
        (solvers::qap::generate(256, 1).unwrap(), "qap_rots_block"),
        (solvers::qap::generate(512, 1).unwrap(), "qap_rots_block"),
    ];
    for (inst, entry) in cases {
        let kernel = params.rots_kernel(&inst, h100);
        let variant = params.variant_for(&inst, kernels::Arch::SM90, h100);
        let compiled = kernels::nvrtc::compile(&variant).unwrap_or_else(|e| panic!("{e}"));
        let r = compiled
            .resources_of(entry)
            .unwrap_or_else(|| panic!("n = {}: no {entry} in\n{}", inst.n(), compiled.log));
        println!(
            "n = {:3} {kernel:?}: {entry} {} registers, {} B spilled",
            inst.n(),
            r.registers,
            r.spill_store_bytes
        );
        if let RotsKernel::Shared { min_blocks: 2, .. } = kernel {
            assert!(r.registers <= 64 && r.spill_store_bytes == 0, "{r:?}");
        }
        if entry == "qap_rots_block" {
            assert!(compiled.resources_of("qap_rots_block_fast").is_none());
        }
    }
}

/// rots-block's restarts recombine by default only where the flow dominance is high (tai*b,
/// bur, the grey-pattern tai*c); uniform instances (tai*a) keep random swaps; a setting, or
/// relinking, overrides the rule; bundles written before the setting existed keep swaps.
#[test]
fn rots_block_crossover_defaults_by_flow_dominance() {
    use solvers::qap::gpu::{GpuAlgorithm, GpuParams};
    use solvers::qap::Instance;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/qap");
    let load =
        |name: &str| -> Instance { solvers::qap::read(&root.join(format!("{name}.dat"))).unwrap() };
    let uniform = load("tai40a");
    let dominant = load("bur26a");
    assert!(uniform.features().dominance < 200.0);
    assert!(dominant.features().dominance >= 200.0);
    let auto = GpuParams::new(GpuAlgorithm::RotsBlock);
    assert_eq!(auto.crossover, None);
    assert!(!auto.crossover_for(&uniform));
    assert!(auto.crossover_for(&dominant));
    let on = GpuParams {
        crossover: Some(true),
        ..auto.clone()
    };
    assert!(on.crossover_for(&uniform));
    let off = GpuParams {
        crossover: Some(false),
        ..auto.clone()
    };
    assert!(!off.crossover_for(&dominant));
    let relinking = GpuParams {
        relink: true,
        ..auto.clone()
    };
    assert!(
        !relinking.crossover_for(&dominant),
        "relinking is the other rule"
    );
    // A bundle from before: its JSON has no `crossover`.
    let mut json = serde_json::to_value(&auto).unwrap();
    json.as_object_mut().unwrap().remove("crossover");
    let old: GpuParams = serde_json::from_value(json).unwrap();
    assert_eq!(old.crossover, Some(false));
}

/// Unset, the restart stall follows the restart rule (crossover restarts more often); a value
/// from a flag, a space point or a bundle is kept, and bundles written before the stall could be
/// unset keep theirs.
#[test]
fn rots_block_restart_stall_defaults_by_restart_rule() {
    use solvers::qap::gpu::{GpuAlgorithm, GpuParams, DEFAULT_RESTART_STALL};
    let auto = GpuParams::new(GpuAlgorithm::RotsBlock);
    assert_eq!(auto.restart_stall, None);
    assert_eq!(auto.stall_for(false), DEFAULT_RESTART_STALL);
    assert_eq!(auto.stall_for(true), 3);
    assert!(auto.stall_for(true) < auto.stall_for(false));
    let set = GpuParams {
        restart_stall: Some(8),
        ..auto.clone()
    };
    assert_eq!((set.stall_for(false), set.stall_for(true)), (8, 8));
    let never = GpuParams {
        restart_stall: Some(0),
        ..auto.clone()
    };
    assert_eq!(never.stall_for(true), 0, "0 still turns restarts off");
    // An older bundle stored the stall as a number: it keeps it, crossover or not.
    let mut json = serde_json::to_value(&auto).unwrap();
    json["restart_stall"] = serde_json::json!(5);
    let old: GpuParams = serde_json::from_value(json).unwrap();
    assert_eq!(old.stall_for(true), 5);
    // A bundle without the field runs the default.
    let mut json = serde_json::to_value(&auto).unwrap();
    json.as_object_mut().unwrap().remove("restart_stall");
    let missing: GpuParams = serde_json::from_value(json).unwrap();
    assert_eq!(missing.stall_for(true), 3);
}

/// A search point the CPU's Ro-TS takes (`mats solve --backend cpu`, CPU spaces) must be one
/// rots-block takes, and the other way round: the same tenure, aspiration and perturbation
/// values pass or fail on both backends, with the same message.
#[test]
fn cpu_and_gpu_tabu_searches_accept_the_same_points() {
    use solvers::family::{Algorithm, AlgorithmParams};
    use solvers::qap::gpu::GpuParams;
    let tenures = [
        (0.4, 0.8),
        (0.9, 1.1),
        (12.0, 16.0),
        (0.0, 0.5),
        (0.8, 0.4),
        (1.0, 16.5),
    ];
    let aspirations = [0.0, 2.0, 1000.0, 1000.5, -1.0, f64::NAN];
    let perturbations = [0.0, 0.25, 1.0, 1.5, -0.1, f64::INFINITY];
    let mut refused = 0;
    for (i, &tenure) in tenures.iter().enumerate() {
        for (j, &aspiration) in aspirations.iter().enumerate() {
            let perturbation = perturbations[(i + j) % perturbations.len()];
            let cpu = AlgorithmParams {
                tenure_range: Some(tenure),
                aspiration: Some(aspiration),
                perturbation: Some(perturbation),
                ..Default::default()
            }
            .check(Algorithm::QapTabu);
            let mut gpu = GpuParams::new(GpuAlgorithm::RotsBlock);
            (gpu.tenure_min_factor, gpu.tenure_max_factor) = tenure;
            gpu.aspiration_factor = aspiration;
            gpu.perturbation = perturbation;
            let gpu = gpu.check_search();
            assert_eq!(
                cpu, gpu,
                "tenure {tenure:?}, aspiration {aspiration}, perturbation {perturbation}"
            );
            refused += usize::from(cpu.is_err());
        }
    }
    // Both kinds of answer occur, so the comparison is not between two refusals.
    assert!(
        refused > 0 && refused < tenures.len() * aspirations.len(),
        "{refused}"
    );
}
