//! The HW/SW GPU driver's host side, without a GPU: parameter checks against an instance and a
//! device description, the limits' messages, and the kernel variants.

use kernels::gpu::DeviceInfo;
use kernels::Arch;
use solvers::hwsw::gpu::{self as hwsw_gpu, GpuAlgorithm, GpuParams};
use solvers::hwsw::{self, GeneratorSpec, Instance, RLevel};

fn h100() -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "NVIDIA H100 80GB HBM3".into(),
        arch: Arch::SM90,
        sm_count: 132,
        total_memory_bytes: 80 << 30,
        max_threads_per_block: 1024,
        max_shared_bytes_per_block: 48 * 1024,
        max_shared_bytes_per_block_optin: 227 * 1024,
        clock_khz: 1_980_000,
    }
}

/// A graph of n nodes and no edges (cheap to build at any n).
fn bare(n: usize) -> Instance {
    Instance::new("bare", vec![1; n], vec![2; n], Vec::new(), 10).unwrap()
}

#[test]
fn defaults_pass_on_the_paper_sizes() {
    let device = h100();
    for (n, m) in [(25usize, 34usize), (150, 333), (1000, 3000), (2000, 6000)] {
        let inst = hwsw::generate(&GeneratorSpec::new(n, m, 1.0, RLevel::Low, 1)).unwrap();
        for algorithm in GpuAlgorithm::ALL {
            GpuParams::new(algorithm).check(&inst, &device).unwrap();
        }
    }
}

#[test]
fn graphs_up_to_the_limit_fit_an_h100_and_larger_ones_name_it() {
    let device = h100();
    let n = hwsw_gpu::MAX_NODES;
    for algorithm in GpuAlgorithm::ALL {
        for zero_copy in [true, false] {
            let params = GpuParams {
                zero_copy,
                ..GpuParams::new(algorithm)
            };
            params.check(&bare(n), &device).unwrap();
        }
    }
    let e = GpuParams {
        searches: 70_000,
        ..GpuParams::new(GpuAlgorithm::GptsMulti)
    }
    .check(&bare(10), &device)
    .unwrap_err();
    assert!(e.contains("searches"), "{e}");
    let e = GpuParams::new(GpuAlgorithm::Fused)
        .check(&bare(n + 1), &device)
        .unwrap_err();
    assert!(e.contains("2..=100000 nodes"), "{e}");
    let e = GpuParams::new(GpuAlgorithm::Fused)
        .check(&bare(1), &device)
        .unwrap_err();
    assert!(e.contains("has 1"), "{e}");
    let small = DeviceInfo {
        total_memory_bytes: 8 << 30,
        ..h100()
    };
    let e = GpuParams::new(GpuAlgorithm::Separate)
        .check(&bare(n), &small)
        .unwrap_err();
    assert!(e.contains("GiB of device memory"), "{e}");
}

#[test]
fn bad_parameters_name_themselves() {
    let device = h100();
    let inst = bare(100);
    let bad = [
        (
            GpuParams {
                threads_per_block: 48,
                ..GpuParams::new(GpuAlgorithm::Fused)
            },
            "threads per block",
        ),
        (
            GpuParams {
                threads_per_block: 2048,
                ..GpuParams::new(GpuAlgorithm::Fused)
            },
            "threads per block",
        ),
        (
            GpuParams {
                items: 0,
                ..GpuParams::new(GpuAlgorithm::Compact)
            },
            "items per thread",
        ),
        (
            GpuParams {
                items: 17,
                ..GpuParams::new(GpuAlgorithm::Compact)
            },
            "items per thread",
        ),
        (
            GpuParams {
                tabu_length: (1 << 20) + 1,
                ..GpuParams::new(GpuAlgorithm::Separate)
            },
            "tabu length",
        ),
    ];
    for (params, word) in bad {
        let e = params.check(&inst, &device).unwrap_err();
        assert!(e.contains(word), "{e}");
    }
}

#[test]
fn variants_carry_their_defines() {
    let params = GpuParams {
        zero_copy: false,
        threads_per_block: 128,
        items: 8,
        flags: vec!["-maxrregcount=32".into()],
        ..GpuParams::new(GpuAlgorithm::Compact)
    };
    let v = params.variant_for(Arch::SM90);
    assert_eq!(v.source, "hwsw/compact");
    assert_eq!(v.defines["HWSW_THREADS"], "128");
    assert_eq!(v.defines["HWSW_ITEMS"], "8");
    assert_eq!(v.defines["HWSW_ZERO_COPY"], "0");
    assert_eq!(v.flags, vec!["-maxrregcount=32".to_string()]);
    for algorithm in GpuAlgorithm::ALL {
        assert_eq!(GpuAlgorithm::from_name(algorithm.name()), Ok(algorithm));
    }
    assert!(GpuAlgorithm::from_name("nope")
        .unwrap_err()
        .contains("separate"));
}
