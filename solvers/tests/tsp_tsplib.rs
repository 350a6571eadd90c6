//! The TSPLIB reader: optimal tours reproduce their lengths, every distance type and
//! explicit format, and one clear error per malformed file.

mod common;

use std::path::Path;

use solvers::bks::BestKnown;
use solvers::tsp::{self, EdgeWeightType};

fn path() -> &'static Path {
    Path::new("bad/x.tsp")
}

/// Text expected to be rejected: one message naming the file (and line, when given).
fn rejected(text: &str, line: Option<usize>, fragment: &str) {
    let message = tsp::parse(text, path())
        .expect_err("must be rejected")
        .to_string();
    println!("{message}");
    match line {
        Some(line) => assert!(
            message.starts_with(&format!("bad/x.tsp:{line}:")),
            "expected line {line}: {message}"
        ),
        None => assert!(message.starts_with("bad/x.tsp"), "{message}"),
    }
    assert!(
        message.contains(fragment),
        "expected {fragment:?} in {message}"
    );
}

#[test]
fn shipped_optimal_tours_reproduce_their_lengths() {
    let data = common::repo_data().join("tsp");
    let bks = BestKnown::embedded();
    let mut checked = 0;
    for name in ["eil51", "berlin52", "att48", "bayg29", "ulysses16"] {
        let inst = tsp::read(&data.join(format!("{name}.tsp"))).expect("shipped instance");
        let tour = tsp::read_tour(&data.join(format!("{name}.opt.tour"))).expect("shipped tour");
        assert_eq!(tour.len(), inst.n());
        let expected = bks.get(name).expect("in the embedded table").value;
        assert_eq!(inst.tour_length(&tour), expected, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 5);
    // burma14 (GEO, EDGE_WEIGHT_FORMAT: FUNCTION) and gr17 (LOWER_DIAG_ROW) have no tour
    // file: their optima are checked by brute force in tsp_solvers.rs.
}

#[test]
fn all_optimal_tours_in_shared_data_reproduce_their_lengths() {
    let Some(shared) = common::shared_data("all_optimal_tours") else {
        return;
    };
    let dir = shared.join("tsplib");
    let mut bks = BestKnown::default();
    bks.add_file(&dir.join("bks.csv")).expect("shared table");
    let mut tours: Vec<_> = std::fs::read_dir(dir.join("opt-tours"))
        .expect("opt-tours folder")
        .map(|e| e.expect("entry").path())
        .collect();
    tours.sort();
    let mut checked = 0;
    for tour_path in tours {
        let file = tour_path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let name = file.trim_end_matches(".opt.tour");
        let inst = tsp::read(&dir.join("instances").join(format!("{name}.tsp")))
            .unwrap_or_else(|e| panic!("{e}"));
        let tour = tsp::read_tour(&tour_path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tour.len(), inst.n(), "{name}");
        let expected = bks.get(name).expect("listed").value;
        assert_eq!(inst.tour_length(&tour), expected, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 33, "33 optimal tours ship in ../shared/data");
}

#[test]
fn all_shared_instances_parse_or_are_rejected_for_a_stated_reason() {
    let Some(shared) = common::shared_data("all_instances_parse") else {
        return;
    };
    let mut parsed = 0;
    for entry in std::fs::read_dir(shared.join("tsplib/instances")).expect("folder") {
        let p = entry.expect("entry").path();
        match tsp::read(&p) {
            Ok(inst) => {
                assert!(inst.n() >= 2);
                parsed += 1;
            }
            Err(e) => assert!(
                e.to_string().contains("FIXED_EDGES_SECTION"),
                "only linhp318 may fail: {e}"
            ),
        }
    }
    assert_eq!(parsed, 111, "all but linhp318");
}

/// A symmetric 4-city matrix, written in each explicit format.
const M: [[i64; 4]; 4] = [[0, 3, 5, 9], [3, 0, 4, 7], [5, 4, 0, 2], [9, 7, 2, 0]];

fn explicit(format: &str, body: &str) -> tsp::Instance {
    let text = format!(
        "NAME: m4\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: \
         {format}\nEDGE_WEIGHT_SECTION\n{body}\nEOF\n"
    );
    tsp::parse(&text, Path::new("m4.tsp")).unwrap_or_else(|e| panic!("{format}: {e}"))
}

#[test]
fn explicit_formats_give_the_same_matrix() {
    let cases = [
        ("FULL_MATRIX", "0 3 5 9\n3 0 4 7\n5 4 0 2\n9 7 2 0"),
        ("UPPER_ROW", "3 5 9\n4 7\n2"),
        ("LOWER_ROW", "3\n5 4\n9 7 2"),
        ("UPPER_DIAG_ROW", "0 3 5 9 0 4 7 0 2 0"),
        ("LOWER_DIAG_ROW", "0\n3 0\n5 4 0\n9 7 2 0"),
        // Column-wise twins: UPPER_COL lists the upper triangle column by column, which
        // for a symmetric matrix is LOWER_ROW.
        ("UPPER_COL", "3 5 4 9 7 2"),
        ("LOWER_DIAG_COL", "0 3 5 9 0 4 7 0 2 0"),
    ];
    for (format, body) in cases {
        let inst = explicit(format, body);
        assert_eq!(inst.edge_weight_type, EdgeWeightType::Explicit);
        for (i, row) in M.iter().enumerate() {
            for (j, &d) in row.iter().enumerate() {
                assert_eq!(inst.dist(i, j), d, "{format} ({i},{j})");
            }
        }
        // Tour 0-1-2-3: 3 + 4 + 2 + 9 = 18.
        assert_eq!(inst.tour_length(&[0, 1, 2, 3]), 18, "{format}");
    }
}

#[test]
fn header_spacing_e_notation_and_missing_eof() {
    let text = "NAME : sq\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EUC_2D \n\
                NODE_COORD_SECTION\n1 0.0e+00 0.0e+00\n3 3.0e0 4.0E0\n2 3 0\n4 0 4\n";
    let inst = tsp::parse(text, Path::new("sq.tsp")).expect("valid");
    assert_eq!(inst.name, "sq");
    assert_eq!(inst.dist(0, 2), 5);
    assert_eq!(inst.tour_length(&[0, 1, 2, 3]), 14);
    assert!(tsp::looks_like_tsplib(text));
    let ceil = text.replace("EUC_2D", "CEIL_2D");
    assert_eq!(
        tsp::parse(&ceil, Path::new("sq.tsp")).unwrap().dist(0, 2),
        5
    );
}

#[test]
fn distance_types_of_shipped_instances() {
    let data = common::repo_data().join("tsp");
    let kinds = [
        ("eil51", EdgeWeightType::Euc2d),
        ("att48", EdgeWeightType::Att),
        ("burma14", EdgeWeightType::Geo),
        ("gr17", EdgeWeightType::Explicit),
        ("bayg29", EdgeWeightType::Explicit),
    ];
    for (name, kind) in kinds {
        let inst = tsp::read(&data.join(format!("{name}.tsp"))).expect("valid");
        assert_eq!(inst.edge_weight_type, kind, "{name}");
    }
    // burma14 cities 1 and 2 (16.47 96.10, 16.47 94.44): 153 in TSPLIB's GEO metric.
    let burma = tsp::read(&data.join("burma14.tsp")).unwrap();
    assert_eq!(burma.dist(0, 1), 153);
}

const GOOD: &str = "NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 0\n3 0 1\nEOF\n";

#[test]
fn bad_type() {
    rejected(&GOOD.replace("TYPE: TSP", "TYPE: ATSP"), Some(2), "ATSP");
    rejected(
        &GOOD.replace("TYPE: TSP", "TYPE: CVRP"),
        Some(2),
        "not a symmetric TSP",
    );
}

#[test]
fn bad_dimension() {
    rejected(
        &GOOD.replace("DIMENSION: 3", "DIMENSION: three"),
        Some(3),
        "integer",
    );
    rejected(
        &GOOD.replace("DIMENSION: 3", "DIMENSION: 1"),
        Some(3),
        "between 2",
    );
    rejected(
        &GOOD.replace("DIMENSION: 3\n", ""),
        Some(4),
        "before the DIMENSION",
    );
}

#[test]
fn unsupported_edge_weight_type() {
    rejected(&GOOD.replace("EUC_2D", "MAN_3D"), Some(4), "not supported");
    rejected(
        &GOOD.replace("EDGE_WEIGHT_TYPE: EUC_2D\n", ""),
        Some(8),
        "no EDGE_WEIGHT_TYPE",
    );
}

#[test]
fn missing_and_duplicate_cities() {
    rejected(&GOOD.replace("3 0 1\n", ""), Some(5), "holds 2 cities");
    rejected(
        &GOOD.replace("3 0 1", "2 0 1"),
        Some(8),
        "city 2 appears twice",
    );
    rejected(&GOOD.replace("3 0 1", "4 0 1"), Some(8), "1..=3");
}

#[test]
fn bad_coordinates() {
    rejected(
        &GOOD.replace("2 1 0", "2 1 zero"),
        Some(7),
        "\"zero\" is not a number",
    );
    rejected(&GOOD.replace("2 1 0", "2 1"), Some(7), "`index x y`");
    rejected(&GOOD.replace("2 1 0", "2 1 0 5"), Some(7), "`index x y`");
}

#[test]
fn garbage_header_line() {
    rejected(
        &GOOD.replace("NAME: t", "just words"),
        Some(1),
        "KEY: VALUE",
    );
}

#[test]
fn explicit_errors() {
    let base = "NAME: m\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1 2\n3\nEOF\n";
    tsp::parse(base, path()).expect("valid base");
    rejected(&base.replace("1 2\n3", "1 2"), Some(6), "holds 2 values");
    rejected(
        &base.replace("1 2\n3", "1 2\n3 4"),
        Some(6),
        "holds 4 values",
    );
    rejected(&base.replace("1 2\n3", "1 x\n3"), Some(7), "integer");
    rejected(
        &base.replace("UPPER_ROW", "UPPER_SNAKE"),
        Some(5),
        "not supported",
    );
    rejected(
        &base.replace("EDGE_WEIGHT_FORMAT: UPPER_ROW\n", ""),
        Some(4),
        "EDGE_WEIGHT_FORMAT",
    );
    // FUNCTION is a format of coordinates: named at its own line, not as a missing one.
    rejected(
        &base.replace("UPPER_ROW", "FUNCTION"),
        Some(5),
        "EDGE_WEIGHT_FORMAT FUNCTION means weights computed from coordinates",
    );
    rejected(&base.replace("1 2\n3", "1 -2\n3"), Some(6), "negative");
    let full = "NAME: m\nTYPE: TSP\nDIMENSION: 2\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1\n2 0\n";
    rejected(full, Some(6), "not symmetric");
}

#[test]
fn fixed_edges_are_refused() {
    let text = GOOD.replace("EOF\n", "FIXED_EDGES_SECTION\n1 2\n-1\nEOF\n");
    rejected(&text, Some(9), "FIXED_EDGES_SECTION");
}

#[test]
fn tour_files() {
    let p = Path::new("t.tour");
    let good = "NAME: t\nTYPE: TOUR\nDIMENSION: 3\nTOUR_SECTION\n3\n1 2\n-1\nEOF\n";
    assert_eq!(tsp::parse_tour(good, p).expect("valid"), vec![2, 0, 1]);
    let err = |text: &str| tsp::parse_tour(text, p).expect_err("bad").to_string();
    assert!(err(&good.replace("1 2", "1 1")).contains("t.tour:4:"));
    // In the file's numbering: city 1 is written at positions 2 and 3 (3, 1, 1).
    assert!(
        err(&good.replace("1 2", "1 1")).contains("1 appears twice (at positions 2 and 3)"),
        "{}",
        err(&good.replace("1 2", "1 1"))
    );
    assert!(err(&good.replace("1 2", "1 4")).contains("t.tour:6: city 4"));
    assert!(err(&good.replace("1 2", "1 x")).contains("x"));
    assert!(err(&good.replace("TOUR_SECTION\n3\n1 2\n-1\n", "")).contains("no TOUR_SECTION"));
    assert!(err(&good.replace("TYPE: TOUR", "TYPE: TSP")).contains("t.tour:2:"));
    // Anything after the end but EOF would be ignored: a second tour, a stray number.
    let second = good.replace("-1\nEOF", "-1\n2 3 1\n-1\nEOF");
    assert!(
        err(&second).contains("t.tour:8: \"2\" after the tour's end"),
        "{}",
        err(&second)
    );
    assert!(err(&good.replace("-1\n", "-1 99\n")).contains("t.tour:7: \"99\""));
    // Blank lines, a missing EOF, and whatever follows EOF are fine.
    for fine in [
        good.replace("EOF\n", "\n\n"),
        good.replace("EOF\n", "EOF\nnotes\n"),
    ] {
        assert_eq!(tsp::parse_tour(&fine, p).expect("valid"), vec![2, 0, 1]);
    }
}

#[test]
fn features_and_classes() {
    let data = common::repo_data().join("tsp");
    let eil = tsp::read(&data.join("eil51.tsp")).unwrap();
    let f = eil.features();
    assert_eq!(f.n, 51);
    assert!(f.nn_cv > 0.0 && f.nn_mean > 0.0);
    assert!(eil
        .class()
        .to_string()
        .starts_with("tsp:size=small,layout="));
    // A perfect grid has every nearest distance equal: cv 0, regular.
    let grid: Vec<(f64, f64)> = (0..100)
        .map(|k| ((k % 10) as f64 * 10.0, (k / 10) as f64 * 10.0))
        .collect();
    let g = tsp::Instance::from_coords("grid", EdgeWeightType::Euc2d, grid).unwrap();
    assert_eq!(g.features().nn_cv, 0.0);
    assert_eq!(g.class().to_string(), "tsp:size=small,layout=regular");
    // Two tight clusters far apart plus isolated points: clustered.
    let mut pts: Vec<(f64, f64)> = (0..40).map(|k| (k as f64 * 0.5, 0.0)).collect();
    pts.extend((0..10).map(|k| (1000.0 + 300.0 * k as f64, 5000.0)));
    let c = tsp::Instance::from_coords("clusters", EdgeWeightType::Euc2d, pts).unwrap();
    assert_eq!(c.class().to_string(), "tsp:size=small,layout=clustered");
}

#[test]
fn a_key_or_section_said_twice_is_refused_naming_both_lines() {
    let p = Path::new("t.tsp");
    let head = "NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\n";
    let coords = "NODE_COORD_SECTION\n1 0 0\n2 3 4\n3 6 0\n";
    let err = |text: String| tsp::parse(&text, p).expect_err("refused").to_string();
    assert!(tsp::parse(&format!("{head}{coords}EOF\n"), p).is_ok());
    let e = err(format!("{head}{coords}DIMENSION: 5\nEOF\n"));
    assert!(
        e.contains("t.tsp:9:") && e.contains("DIMENSION appears twice (lines 3 and 9)"),
        "{e}"
    );
    let e = err(format!("{head}EDGE_WEIGHT_TYPE: CEIL_2D\n{coords}"));
    assert!(
        e.contains("EDGE_WEIGHT_TYPE appears twice (lines 4 and 5)"),
        "{e}"
    );
    let e = err(format!("{head}{coords}{coords}"));
    assert!(
        e.contains("NODE_COORD_SECTION appears twice (lines 5 and 9)"),
        "{e}"
    );
    let e = err(format!("{head}{coords}EDGE_WEIGHT_SECTION\n1 2 3\n"));
    assert!(
        e.contains("t.tsp:9:") && e.contains("would be ignored"),
        "{e}"
    );
    let explicit = "NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n\
                    EDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1 2\n3\n";
    assert!(tsp::parse(explicit, p).is_ok());
    let e = err(format!("{explicit}EDGE_WEIGHT_SECTION\n4 5\n6\n"));
    assert!(
        e.contains("EDGE_WEIGHT_SECTION appears twice (lines 6 and 9)"),
        "{e}"
    );
}
