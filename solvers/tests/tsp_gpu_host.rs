//! The GPU ant colony's host-side checks, without a GPU: the memory limit refuses instances
//! that do not fit with one clear message naming the figures (pla85900's size on an 80 GB
//! H100 with m = n; with 100 ants it fits), sizes that fit pass, and bad parameters are named.

use kernels::gpu::DeviceInfo;
use kernels::Arch;
use rand::{Rng, SeedableRng};
use solvers::tsp::gpu::{Construction, GpuParams, PheromoneUpdate};
use solvers::tsp::{EdgeWeightType, Instance};

fn h100() -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "NVIDIA H100 80GB HBM3".into(),
        arch: Arch::SM90,
        sm_count: 132,
        total_memory_bytes: 85_017_755_648,
        max_threads_per_block: 1024,
        max_shared_bytes_per_block: 48 * 1024,
        max_shared_bytes_per_block_optin: 227 * 1024,
        clock_khz: 1_980_000,
    }
}

fn random(n: usize) -> Instance {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
    let coords = (0..n)
        .map(|_| (rng.random::<f64>() * 1e6, rng.random::<f64>() * 1e6))
        .collect();
    Instance::from_coords(format!("random{n}"), EdgeWeightType::Euc2d, coords).unwrap()
}

#[test]
fn instances_beyond_the_device_memory_are_refused_with_the_limit() {
    let device = h100();
    let big = random(85_900);
    for construction in Construction::ALL {
        for update in PheromoneUpdate::ALL {
            let mut params = GpuParams::new(construction);
            params.pheromone = update;
            let err = params.check(&big, &device).unwrap_err();
            assert!(
                err.contains("85900 cities") && err.contains("GiB") && err.contains("cities fit"),
                "{err}"
            );
            // The limit it names does fit, and a few percent more does not.
            let largest: usize = err
                .split("at most about ")
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("no limit in {err}"));
            assert!(largest > 10_000 && largest < 85_900, "{err}");
            assert!(
                params.check(&random(largest * 97 / 100), &device).is_ok(),
                "{err}"
            );
            assert!(params.check(&random(largest * 103 / 100), &device).is_err());
        }
    }
    // With 100 ants only the n x n float matrices remain large (59 GB): pla85900's size runs.
    let mut params = GpuParams::new(Construction::Data);
    params.ants = Some(100);
    params.check(&big, &device).unwrap();
    let smaller = DeviceInfo {
        total_memory_bytes: 40 << 30,
        ..h100()
    };
    let err = params.check(&big, &smaller).unwrap_err();
    assert!(err.contains("100 ants"), "{err}");
}

#[test]
fn the_issue_instances_fit_an_h100() {
    let device = h100();
    for n in [198, 442, 783, 2392, 11849, 15112] {
        for construction in Construction::ALL {
            let params = GpuParams::new(construction);
            params.check(&random(n), &device).unwrap();
        }
    }
}

#[test]
fn bad_parameters_are_named() {
    let device = h100();
    let inst = random(100);
    type Change = Box<dyn Fn(&mut GpuParams)>;
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|p| p.rho = 0.0), "rho"),
        (Box::new(|p| p.candidates = 0), "candidates"),
        (Box::new(|p| p.candidates = 500), "candidates"),
        (Box::new(|p| p.ants = Some(0)), "ants"),
        (Box::new(|p| p.threads_per_block = 48), "multiple of 32"),
        (Box::new(|p| p.threads_per_block = 2048), "1..=1024"),
        (Box::new(|p| p.alpha = f64::NAN), "alpha"),
    ];
    for (change, word) in cases {
        let mut params = GpuParams::new(Construction::Data);
        change(&mut params);
        let err = params.check(&inst, &device).unwrap_err();
        assert!(err.contains(word), "{err} (expected {word})");
    }
    assert!(GpuParams::new(Construction::Data)
        .check(&random(2), &device)
        .is_err());
    assert!(Construction::from_name("warp")
        .unwrap_err()
        .contains("data-compressed"));
    assert!(PheromoneUpdate::from_name("sort")
        .unwrap_err()
        .contains("gather"));
}

/// Focused on the GPU keeps no n x n matrix: pla85900's size fits with the default 1024 ants
/// (16 n bytes per ant), 200,000 cities too, and the memory message names how many ants fit.
#[test]
fn focused_fits_the_largest_instances_and_names_the_ants_that_fit() {
    let device = h100();
    let params = GpuParams::focused();
    assert!(params.check(&random(85_900), &device).is_ok());
    assert!(params.check(&random(200_000), &device).is_ok());
    let mut many = GpuParams::focused();
    many.ants = Some(60_000);
    let err = many.check(&random(85_900), &device).unwrap_err();
    assert!(err.contains("ants fit") && err.contains("GiB"), "{err}");
    let fit: usize = err
        .split("at most about ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no ant count in {err}"));
    many.ants = Some(fit);
    assert!(many.check(&random(85_900), &device).is_ok(), "{err}");
    many.ants = Some(fit + fit / 20);
    assert!(many.check(&random(85_900), &device).is_err());
}

/// Focused's GPU-only limits are refused with the parameter's name: `own` source tours, lists
/// longer than a warp, a local-search width beyond 16, too many ants per block.
#[test]
fn focused_refuses_what_its_kernel_cannot_hold() {
    use solvers::tsp::focused::SourceRule;
    let device = h100();
    let inst = random(2000);
    type Change = fn(&mut GpuParams);
    let cases: [(&str, Change); 4] = [
        ("`source`", |p| p.focused.source = SourceRule::Own),
        ("`candidates`", |p| p.candidates = 40),
        ("`ls_neighbours`", |p| p.local_search.neighbours = 20),
        ("`threads`", |p| p.local_search.warps = 9),
    ];
    for (name, change) in cases {
        let mut params = GpuParams::focused();
        change(&mut params);
        let err = params.check(&inst, &device).unwrap_err();
        assert!(err.contains(name), "{name}: {err}");
    }
    assert!(GpuParams::focused().check(&random(7), &device).is_err());
}

/// An explicit matrix entry beyond int32 is refused by every colony's check, naming the
/// entry, before anything is compiled or uploaded.
#[test]
fn distances_beyond_int32_are_refused_by_the_check() {
    let text = "NAME: big\nTYPE: TSP\nDIMENSION: 20\nEDGE_WEIGHT_TYPE: EXPLICIT\n\
                EDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n";
    let mut rows = String::new();
    for i in 0..20u64 {
        for j in 0..20u64 {
            let d = if i == j {
                0
            } else if i + j == 1 {
                3_000_000_000
            } else {
                1 + i + j
            };
            rows.push_str(&format!("{d} "));
        }
        rows.push('\n');
    }
    let inst = solvers::tsp::parse(
        &format!("{text}{rows}EOF\n"),
        std::path::Path::new("big.tsp"),
    )
    .unwrap();
    for params in [
        GpuParams::new(Construction::Data),
        GpuParams::mmas(),
        GpuParams::focused(),
    ] {
        let e = params.check(&inst, &h100()).unwrap_err();
        assert!(
            e.contains("d(1, 2) = 3000000000 does not fit the GPU's int32 matrix"),
            "{e}"
        );
    }
}
