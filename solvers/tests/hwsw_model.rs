//! The HW/SW model: file format (round trip, one error per bad input), generator,
//! objective checks, and incremental 2-flip deltas against full re-evaluation.

use std::path::Path;

use proptest::prelude::*;
use solvers::hwsw::{self, delta, GeneratorSpec, Instance, RLevel};

const SMALL: &str = "# a comment\nHWSW 3 2 100   # n m R\n10 20\n30 40\n50 60\n1 2 5\n3 2 7\n";

fn path() -> &'static Path {
    Path::new("bad/g.hwsw")
}

fn rejected(text: &str, line: Option<usize>, fragment: &str) {
    let message = hwsw::parse(text, path())
        .expect_err("must be rejected")
        .to_string();
    println!("{message}");
    match line {
        Some(line) => assert!(
            message.starts_with(&format!("bad/g.hwsw:{line}:")),
            "line {line}: {message}"
        ),
        None => assert!(message.starts_with("bad/g.hwsw"), "{message}"),
    }
    assert!(message.contains(fragment), "{fragment:?} in {message}");
}

#[test]
fn parses_the_documented_format() {
    let inst = hwsw::parse(SMALL, Path::new("x/small.hwsw")).expect("valid");
    assert_eq!(inst.name, "small");
    assert_eq!((inst.n(), inst.m(), inst.r()), (3, 2, 100));
    assert_eq!(inst.software(), &[10, 30, 50]);
    assert_eq!(inst.hardware(), &[20, 40, 60]);
    assert_eq!(inst.edges(), &[(0, 1, 5), (2, 1, 7)]);
    assert!(hwsw::looks_like_hwsw(SMALL));
    // x = (1, 0, 0): S = 10, C = 5 (edge 1-2 cut), H = 40 + 60.
    assert_eq!(inst.objective(&[1, 0, 0]), Ok(100));
    // x = (1, 1, 1): S = 90, C = 0, H = 0.
    assert_eq!(inst.objective(&[1, 1, 1]), Ok(0));
    // x = (0, 1, 1) is fine (S 80 + C 5 = 85); R = 80 would make it infeasible.
    assert_eq!(inst.objective(&[0, 1, 1]), Ok(20));
    let tight = hwsw::parse(&SMALL.replace("3 2 100", "3 2 80"), path()).unwrap();
    let e = tight.objective(&[0, 1, 1]).unwrap_err();
    assert!(e.contains("infeasible") && e.contains("85"), "{e}");
    // Nodes counted from 1, as the file's edges name them.
    assert_eq!(
        inst.objective(&[0, 2, 1]).unwrap_err(),
        "value 2 (node 2) is 2, not 0 (hardware) or 1 (software)"
    );
    assert!(inst.objective(&[0, 1]).unwrap_err().contains("2 entries"));
}

#[test]
fn round_trip_through_text() {
    let spec = GeneratorSpec::new(30, 60, 1.0, RLevel::High, 5);
    let inst = hwsw::generate(&spec).unwrap();
    let text = inst.to_text();
    assert!(text.starts_with("# SYNTHETIC"));
    assert!(text.contains(&spec.command()));
    let back = hwsw::parse(&text, Path::new(&format!("{}.hwsw", inst.name))).unwrap();
    assert_eq!(back, inst);
}

#[test]
fn bad_header() {
    rejected("HWS 3 2 100\n", Some(1), "HWSW");
    rejected("HWSW 0 0 1\n", Some(1), "nodes n must be between 1 and");
    rejected("HWSW 3 4 1\n", Some(1), "cannot fit");
    rejected("HWSW 3 2 -1\n", Some(1), "R must be >= 0");
    rejected("HWSW 3 x 1\n", Some(1), "number of edges");
}

#[test]
fn bad_costs_and_edges() {
    rejected(
        &SMALL.replace("30 40", "30 -40"),
        Some(4),
        "hardware cost of node 2 is negative",
    );
    rejected(
        &SMALL.replace("30 40", "30 4.5"),
        Some(4),
        "hardware cost of node 2",
    );
    rejected(
        &SMALL.replace("3 2 7", "3 4 7"),
        Some(7),
        "node 4, outside 1..=3",
    );
    rejected(&SMALL.replace("3 2 7", "3 3 7"), Some(7), "self-loop");
    rejected(&SMALL.replace("3 2 7", "2 1 7"), Some(7), "appears twice");
    rejected(&SMALL.replace("3 2 7", "3 2 -7"), Some(7), "negative cost");
}

#[test]
fn short_and_long_files() {
    rejected(&SMALL.replace("3 2 7\n", ""), Some(6), "file ends early");
    rejected(&format!("{SMALL}9\n"), Some(8), "unexpected data");
}

#[test]
fn generator_follows_the_papers_distributions() {
    for (ccr, level) in [(0.1, RLevel::Low), (10.0, RLevel::High)] {
        let spec = GeneratorSpec::new(500, 1500, ccr, level, 3);
        let inst = hwsw::generate(&spec).unwrap();
        assert_eq!(
            hwsw::generate(&spec).unwrap(),
            inst,
            "deterministic for a seed"
        );
        assert_eq!((inst.n(), inst.m()), (500, 1500));
        assert!(inst.software().iter().all(|&s| (1..=100).contains(&s)));
        assert!(inst.hardware().iter().all(|&h| h >= 1));
        let s_max = *inst.software().iter().max().unwrap();
        let c_max = (2.0 * ccr * s_max as f64).round() as i64;
        assert!(inst.edges().iter().all(|e| (0..=c_max).contains(&e.2)));
        let total: i64 = inst.software().iter().sum();
        match level {
            RLevel::Low => assert!(inst.r() <= (total + 1) / 2),
            RLevel::High => assert!(inst.r() >= total / 2 && inst.r() <= total),
        }
        let f = inst.features();
        // Means: s about 50.5, h about s (k = 1), c about ccr * s_max.
        let mean_s = total as f64 / 500.0;
        assert!((mean_s - 50.5).abs() < 5.0, "{mean_s}");
        assert!((f.total_hardware as f64 / total as f64 - 1.0).abs() < 0.1);
        assert!((f.ccr / ccr - 1.0).abs() < 0.15, "{} vs {ccr}", f.ccr);
        let class = inst.class().to_string();
        let expected_ccr = if ccr < 1.0 { "0.1" } else { "10" };
        assert_eq!(
            class,
            format!("hwsw:ccr={expected_ccr},r={level},size=large")
        );
    }
    let other = hwsw::generate(&GeneratorSpec::new(500, 1500, 0.1, RLevel::Low, 4)).unwrap();
    assert_ne!(
        other,
        hwsw::generate(&GeneratorSpec::new(500, 1500, 0.1, RLevel::Low, 3)).unwrap()
    );
}

#[test]
fn generator_rejects_bad_specs() {
    assert!(hwsw::generate(&GeneratorSpec::new(1, 0, 1.0, RLevel::Low, 1)).is_err());
    assert!(hwsw::generate(&GeneratorSpec::new(4, 7, 1.0, RLevel::Low, 1)).is_err());
    assert!(hwsw::generate(&GeneratorSpec::new(4, 6, -1.0, RLevel::Low, 1)).is_err());
    assert!(hwsw::generate(&GeneratorSpec::new(4, 6, f64::NAN, RLevel::Low, 1)).is_err());
    assert!(hwsw::generate(&GeneratorSpec::new(4, 6, 1.0, RLevel::Low, 1)).is_ok());
}

fn graph_strategy(max_n: usize) -> impl Strategy<Value = (Instance, Vec<u8>)> {
    (2..=max_n).prop_flat_map(|n| {
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .collect();
        (
            prop::collection::vec(0i64..100, n),
            prop::collection::vec(0i64..100, n),
            prop::collection::vec((any::<bool>(), 0i64..50), pairs.len()),
            prop::collection::vec(0u8..2, n),
        )
            .prop_map(move |(s, h, present, x)| {
                let edges = pairs
                    .iter()
                    .zip(present)
                    .filter(|(_, (p, _))| *p)
                    .map(|(&(i, j), (_, c))| (j, i, c))
                    .collect();
                (Instance::new("random", s, h, edges, 1000).unwrap(), x)
            })
    })
}

proptest! {
    #[test]
    fn flip2_deltas_equal_full_reevaluation((inst, x) in graph_strategy(10), a in 0usize..10, b in 0usize..10) {
        let n = inst.n();
        let (i, j) = (a % n, b % n);
        prop_assume!(i != j);
        let current = inst.costs(&x);
        let mut y = x.clone();
        y[i] ^= 1;
        y[j] ^= 1;
        prop_assert_eq!(delta::flip2_costs(&inst, &x, current, i, j), inst.costs(&y));
        // The cached single-flip deltas give the same communication change.
        let dc = delta::single_flip_comms(&inst, &x);
        let mut single = x.clone();
        single[i] ^= 1;
        prop_assert_eq!(current.communication + dc[i], inst.costs(&single).communication);
    }
}
