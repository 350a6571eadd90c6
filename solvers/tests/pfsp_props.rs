//! The accelerated evaluations (Taillard's insertion, heads/tails swaps) against full
//! makespan recomputation, on random instances and moves.

use proptest::prelude::*;
use solvers::pfsp::eval::{Insertion, SwapEvaluator};
use solvers::pfsp::Instance;

/// A random instance (times may be 0, which exercises ties) and a random job order.
fn instance_and_order() -> impl Strategy<Value = (Instance, Vec<usize>)> {
    (1usize..12, 1usize..7)
        .prop_flat_map(|(n, m)| {
            (
                proptest::collection::vec(0i64..100, n * m),
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
                Just((n, m)),
            )
        })
        .prop_map(|(times, order, (n, m))| {
            (
                Instance::new("prop", n, m, times).expect("valid sizes and times"),
                order,
            )
        })
}

fn with_inserted(sequence: &[usize], position: usize, job: usize) -> Vec<usize> {
    let mut s = sequence.to_vec();
    s.insert(position, job);
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn insertion_values_equal_recomputation(
        (inst, order) in instance_and_order(),
        cut in 0usize..12,
    ) {
        // Insert order[k] into the partial sequence order[..k] (k < n), as NEH does; k = n-1
        // is the full-sequence reinsertion of IG's local search.
        let k = cut % inst.jobs;
        let (sequence, job) = (&order[..k], order[k]);
        let mut insertion = Insertion::new();
        let mut values = Vec::new();
        insertion.evaluate_all(&inst, sequence, job, &mut values);
        prop_assert_eq!(values.len(), k + 1);
        for (position, &value) in values.iter().enumerate() {
            prop_assert_eq!(value, inst.makespan(&with_inserted(sequence, position, job)));
        }
        let (position, value) = insertion.best(&inst, sequence, job);
        let min = *values.iter().min().expect("at least one position");
        prop_assert_eq!(value, min);
        prop_assert_eq!(position, values.iter().position(|&v| v == min).expect("present"));
    }

    #[test]
    fn swap_values_equal_recomputation((inst, order) in instance_and_order()) {
        let evaluator = SwapEvaluator::new(&inst, &order);
        prop_assert_eq!(evaluator.makespan(), inst.makespan(&order));
        let mut scratch = vec![0; inst.machines];
        for i in 0..inst.jobs {
            for j in i + 1..inst.jobs {
                let mut swapped = order.clone();
                swapped.swap(i, j);
                prop_assert_eq!(
                    evaluator.swap(&inst, &order, i, j, &mut scratch),
                    inst.makespan(&swapped),
                    "swap ({}, {})", i, j
                );
            }
        }
    }

    #[test]
    fn makespan_matches_the_completion_table_definition((inst, order) in instance_and_order()) {
        // C[i][k] = max(C[i-1][k], C[i][k-1]) + p, written out as a full table.
        let (n, m) = (inst.jobs, inst.machines);
        let mut table = vec![vec![0i64; m]; n];
        for i in 0..n {
            for k in 0..m {
                let up = if i > 0 { table[i - 1][k] } else { 0 };
                let left = if k > 0 { table[i][k - 1] } else { 0 };
                table[i][k] = up.max(left) + inst.time(k, order[i]);
            }
        }
        prop_assert_eq!(inst.makespan(&order), table[n - 1][m - 1]);
    }
}

#[test]
fn makespan_by_hand() {
    // Two jobs, two machines: job 0 = (3, 2), job 1 = (1, 4). Order 1,0: machine 0 ends
    // at 1 then 4; machine 1 ends at 5 then max(5, 4) + 2 = 7. Order 0,1: 3, 4 then 5,
    // max(5, 4) + 4 = 9.
    let inst = Instance::new("hand", 2, 2, vec![3, 1, 2, 4]).expect("valid");
    assert_eq!(inst.makespan(&[1, 0]), 7);
    assert_eq!(inst.makespan(&[0, 1]), 9);
    assert_eq!(inst.makespan(&[]), 0);
}
