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
            narrow: true
        }
    );
    // 16 (n + 4) top^2 just past 2^31, then past 2^45.
    let wide = instance(20, 2400);
    assert!(rots_delta_bound(&wide) >= 1 << 31);
    assert_eq!(
        params.rots_kernel(&wide, h100),
        RotsKernel::Shared {
            symmetric: true,
            narrow: false
        }
    );
    let huge = instance(20, 1 << 20);
    assert!(rots_delta_bound(&huge) >= 1 << 45);
    assert_eq!(params.rots_kernel(&huge, h100), RotsKernel::Global);
    // n = 100: the int32 layout is the smaller one, and both fit an H100 but not a 100 KB limit.
    let narrow = rots_fast_shared_bytes(100, true, true);
    assert!(narrow < rots_fast_shared_bytes(100, true, false));
    assert_eq!(
        narrow,
        4 * 4952 + 16 * 100 + 8 * 100 + 12 * 100 * 100 + 8 * 100
    );
    assert_eq!(
        params.rots_kernel(&instance(100, 99), 100 * 1024),
        RotsKernel::Global
    );
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
