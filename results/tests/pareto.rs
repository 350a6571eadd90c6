//! Pareto fronts against brute force on random point sets, with many ties, duplicates, signed
//! zeros, infinities and NaNs.

use proptest::prelude::*;
use results::pareto::{dominates, non_dominated, pareto_front};

/// Brute force: i is on the front iff it has no NaN, nothing dominates it, and no earlier
/// point has the same values (duplicates keep their first copy).
fn brute<const K: usize>(v: &[[f64; K]]) -> Vec<usize> {
    let ok = |i: usize| v[i].iter().all(|x| !x.is_nan());
    let mut front: Vec<usize> = (0..v.len())
        .filter(|&i| ok(i))
        .filter(|&i| !(0..v.len()).any(|j| ok(j) && dominates(&v[j], &v[i])))
        .filter(|&i| !(0..i).any(|j| ok(j) && v[j] == v[i]))
        .collect();
    // Lexicographic order; front points never tie in every objective.
    front.sort_by(|&a, &b| {
        v[a].iter()
            .zip(&v[b])
            .map(|(x, y)| x.partial_cmp(y).unwrap())
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    front
}

/// Few distinct values, so ties and duplicates are common.
fn objective() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => (0i32..6).prop_map(f64::from),
        1 => Just(-0.0),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NAN),
        2 => -1e3f64..1e3,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn two_objectives_match_brute_force(v in prop::collection::vec([objective(), objective()], 0..40)) {
        let front = pareto_front(&v);
        prop_assert_eq!(&front, &brute(&v));
        prop_assert_eq!(non_dominated(&v), front.clone());
        // Sorted by the first objective, strictly, and the second strictly falls.
        for w in front.windows(2) {
            prop_assert!(v[w[0]][0] < v[w[1]][0]);
            prop_assert!(v[w[0]][1] > v[w[1]][1]);
        }
    }

    #[test]
    fn three_objectives_match_brute_force(
        v in prop::collection::vec([objective(), objective(), objective()], 0..30)
    ) {
        prop_assert_eq!(non_dominated(&v), brute(&v));
    }
}

#[test]
fn large_front_is_fast() {
    // An anti-diagonal: every point on the front; quadratic code would still pass, but this
    // catches an accidental O(n^2) blow-up at a size a long campaign reaches.
    let n = 200_000;
    let v: Vec<[f64; 2]> = (0..n).map(|i| [i as f64, (n - i) as f64]).collect();
    let start = std::time::Instant::now();
    assert_eq!(pareto_front(&v).len(), n);
    assert!(start.elapsed().as_secs() < 5);
}
