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
