//! The k-d tree nearest-neighbour distances (O(n log n)) equal the all-pairs ones exactly,
//! on random, gridded and duplicated points, for every coordinate distance type.

use proptest::prelude::*;
use solvers::tsp::distance::EdgeWeightType;
use solvers::tsp::Instance;

fn points() -> impl Strategy<Value = Vec<(f64, f64)>> {
    prop_oneof![
        // Uniform points, fractional coordinates.
        prop::collection::vec((-1e4f64..1e4, -1e4f64..1e4), 2..300),
        // A coarse grid: many shared axis values and many equal distances.
        prop::collection::vec((0u8..6, 0u8..6), 2..300).prop_map(|v| v
            .into_iter()
            .map(|(x, y)| (x as f64 * 10.0, y as f64 * 10.0))
            .collect()),
        // Few distinct points, most of them repeated.
        prop::collection::vec((0u8..3, 0u8..2), 2..100).prop_map(|v| v
            .into_iter()
            .map(|(x, y)| (x as f64, y as f64 * 0.5))
            .collect()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn kd_tree_nearest_distances_equal_all_pairs(
        coords in points(),
        kind in prop_oneof![
            Just(EdgeWeightType::Euc2d),
            Just(EdgeWeightType::Ceil2d),
            Just(EdgeWeightType::Att),
        ],
    ) {
        let inst = Instance::from_coords("t", kind, coords).unwrap();
        prop_assert_eq!(inst.nearest_distances(), inst.nearest_distances_all_pairs());
    }
}

#[test]
fn thousands_of_cities_on_one_point() {
    let inst = Instance::from_coords("t", EdgeWeightType::Euc2d, vec![(3.0, 4.0); 5000]).unwrap();
    assert!(inst.nearest_distances().iter().all(|&d| d == 0));
}

#[test]
fn thousands_of_distinct_cities_on_one_line() {
    // Every point shares x = 0: k-d trees that split on a constant axis can fail here.
    let coords: Vec<(f64, f64)> = (0..3000).map(|i| (0.0, (i * 7 % 3000) as f64)).collect();
    let inst = Instance::from_coords("t", EdgeWeightType::Euc2d, coords).unwrap();
    assert_eq!(inst.nearest_distances(), inst.nearest_distances_all_pairs());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn kd_tree_candidate_lists_equal_the_matrix_ones(
        coords in points(),
        k in 1usize..12,
        kind in prop_oneof![
            Just(EdgeWeightType::Euc2d),
            Just(EdgeWeightType::Ceil2d),
            Just(EdgeWeightType::Att),
        ],
    ) {
        let inst = Instance::from_coords("t", kind, coords).unwrap();
        let by_matrix = solvers::tsp::CandidateLists::from_matrix(&inst.distance_matrix(), inst.n(), k);
        prop_assert_eq!(solvers::tsp::CandidateLists::from_instance(&inst, k), by_matrix);
    }
}

fn geo_points() -> impl Strategy<Value = Vec<(f64, f64)>> {
    prop_oneof![
        // Anywhere on the globe (TSPLIB's DDD.MM latitude and longitude).
        prop::collection::vec((-89.0f64..89.0, -179.0f64..179.0), 2..300),
        // A small region: many cities a few kilometres apart, where GEO's rounding ties.
        prop::collection::vec((45.0f64..45.3, 7.0f64..7.3), 2..300),
        // Repeated points.
        prop::collection::vec((0u8..3, 0u8..2), 2..60).prop_map(|v| v
            .into_iter()
            .map(|(a, b)| (10.0 + a as f64 * 0.01, 20.0 + b as f64 * 0.01))
            .collect()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// GEO's nearest distances come from a k-d tree on the unit sphere (the all-pairs pass
    /// took 14 s at 20,000 cities): the same values.
    #[test]
    fn geo_nearest_distances_equal_all_pairs(coords in geo_points()) {
        let inst = Instance::from_coords("t", EdgeWeightType::Geo, coords).unwrap();
        prop_assert_eq!(inst.nearest_distances(), inst.nearest_distances_all_pairs());
        let k = 5;
        let by_matrix = solvers::tsp::CandidateLists::from_matrix(&inst.distance_matrix(), inst.n(), k);
        prop_assert_eq!(solvers::tsp::CandidateLists::from_instance(&inst, k), by_matrix);
    }
}
