//! Objectives are exact or refused: for instances whose numbers range from tiny to i64::MAX,
//! every constructor either refuses the instance or every objective (and swap delta) it
//! computes equals the same sum done in 128-bit arithmetic. Before the worst-case checks,
//! such instances printed wrapped-around objectives (QAP 2^32 entries printed 0).

use proptest::prelude::*;
use solvers::{hwsw, pfsp, qap, tsp};

/// Magnitudes spread over the whole i64 range: mostly small, sometimes near the limits.
fn wide() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 0i64..1000,
        2 => (0u32..63).prop_map(|k| 1i64 << k),
        1 => Just(i64::MAX),
        1 => (1u64 << 59..1u64 << 62).prop_map(|v| v as i64),
    ]
}

fn signed() -> impl Strategy<Value = i64> {
    (wide(), any::<bool>()).prop_map(|(v, neg)| if neg { -v } else { v })
}

fn permutation(n: usize) -> impl Strategy<Value = Vec<usize>> {
    Just((0..n).collect::<Vec<_>>()).prop_shuffle()
}

fn qap_case() -> impl Strategy<Value = (usize, Vec<i64>, Vec<i64>, Vec<usize>)> {
    (1usize..7).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec(signed(), n * n),
            prop::collection::vec(signed(), n * n),
            permutation(n),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn qap_cost_and_deltas_are_exact_or_refused((n, a, b, p) in qap_case()) {
        let Ok(inst) = qap::Instance::new("t", n, a.clone(), b.clone()) else {
            return Ok(());
        };
        let exact = |p: &[usize]| -> i128 {
            let mut total = 0i128;
            for i in 0..n {
                for j in 0..n {
                    total += i128::from(a[i * n + j]) * i128::from(b[p[i] * n + p[j]]);
                }
            }
            total
        };
        let cost = exact(&p);
        prop_assert_eq!(i128::from(inst.cost(&p)), cost);
        for r in 0..n {
            for s in r + 1..n {
                let mut q = p.clone();
                q.swap(r, s);
                prop_assert_eq!(
                    i128::from(qap::delta::swap_delta(&inst, &p, r, s)),
                    exact(&q) - cost
                );
            }
        }
    }

    #[test]
    fn flowshop_makespan_is_exact_or_refused(
        (jobs, machines, times, order) in (1usize..6, 1usize..5).prop_flat_map(|(j, m)| {
            (Just(j), Just(m), prop::collection::vec(wide(), j * m), permutation(j))
        })
    ) {
        let Ok(inst) = pfsp::Instance::new("t", jobs, machines, times.clone()) else {
            return Ok(());
        };
        let mut completion = vec![0i128; machines];
        for &job in &order {
            let mut previous = 0i128;
            for (machine, c) in completion.iter_mut().enumerate() {
                *c = (*c).max(previous) + i128::from(times[machine * jobs + job]);
                previous = *c;
            }
        }
        prop_assert_eq!(i128::from(inst.makespan(&order)), completion[machines - 1]);
    }

    #[test]
    fn explicit_tsp_tours_are_exact_or_refused(
        (n, upper, tour) in (2usize..7).prop_flat_map(|n| {
            (Just(n), prop::collection::vec(wide(), n * (n - 1) / 2), permutation(n))
        })
    ) {
        let mut matrix = vec![0i64; n * n];
        let mut k = 0;
        for i in 0..n {
            for j in i + 1..n {
                matrix[i * n + j] = upper[k];
                matrix[j * n + i] = upper[k];
                k += 1;
            }
        }
        let Ok(inst) = tsp::Instance::from_matrix("t", n, matrix.clone()) else {
            return Ok(());
        };
        let exact: i128 = (0..n)
            .map(|k| i128::from(matrix[tour[k] * n + tour[(k + 1) % n]]))
            .sum();
        prop_assert_eq!(i128::from(inst.tour_length(&tour)), exact);
    }

    #[test]
    fn coordinate_tsp_tours_are_exact_or_refused(
        (coords, tour) in (2usize..7).prop_flat_map(|n| {
            let coordinate = prop_oneof![
                3 => -1e3f64..1e3,
                1 => -4e18f64..4e18,
                1 => prop_oneof![Just(1e300f64), Just(-1e300f64)],
            ];
            (prop::collection::vec((coordinate.clone(), coordinate), n), permutation(n))
        })
    ) {
        let Ok(inst) = tsp::Instance::from_coords("t", tsp::distance::EdgeWeightType::Euc2d, coords)
        else {
            return Ok(());
        };
        let n = inst.n();
        let exact: i128 = (0..n)
            .map(|k| i128::from(inst.dist(tour[k], tour[(k + 1) % n])))
            .sum();
        prop_assert!(exact <= i128::from(i64::MAX));
        prop_assert_eq!(i128::from(inst.tour_length(&tour)), exact);
    }

    #[test]
    fn hwsw_objective_and_constraint_are_exact_or_refused(
        (s, h, c, x) in (2usize..7).prop_flat_map(|n| {
            (
                prop::collection::vec(wide(), n),
                prop::collection::vec(wide(), n),
                prop::collection::vec(wide(), n - 1),
                prop::collection::vec(0usize..2, n),
            )
        })
    ) {
        let n = s.len();
        // A path 1 - 2 - ... - n, and R large enough for any x.
        let edges: Vec<(usize, usize, i64)> = (0..n - 1).map(|i| (i, i + 1, c[i])).collect();
        let Ok(inst) = hwsw::Instance::new("t", s.clone(), h.clone(), edges, i64::MAX) else {
            return Ok(());
        };
        let hardware: i128 = (0..n).filter(|&i| x[i] == 0).map(|i| i128::from(h[i])).sum();
        let software: i128 = (0..n).filter(|&i| x[i] == 1).map(|i| i128::from(s[i])).sum();
        let comm: i128 = (0..n - 1).filter(|&i| x[i] != x[i + 1]).map(|i| i128::from(c[i])).sum();
        prop_assert!(software + comm <= i128::from(i64::MAX));
        prop_assert_eq!(inst.objective(&x).map(i128::from), Ok(hardware));
        let bits: Vec<u8> = x.iter().map(|&v| v as u8).collect();
        let costs = inst.costs(&bits);
        prop_assert_eq!(i128::from(costs.software), software);
        prop_assert_eq!(i128::from(costs.communication), comm);
    }
}

#[test]
fn refusals_name_the_worst_case_value() {
    let e = qap::Instance::new("t", 2, vec![1 << 32; 4], vec![1 << 32; 4]).unwrap_err();
    assert!(e.contains("664082786653543858176"), "{e}");
    let e = pfsp::Instance::new("t", 1, 2, vec![i64::MAX, 1]).unwrap_err();
    assert!(e.contains("9223372036854775808"), "{e}");
    // At the limit itself the instance is accepted.
    assert!(pfsp::Instance::new("t", 1, 2, vec![1 << 60, 1 << 60]).is_ok());
}
