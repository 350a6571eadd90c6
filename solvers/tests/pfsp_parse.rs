//! The instance formats: good files in each format, one error per bad input, round trips.

use std::path::Path;

use solvers::pfsp;

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");

fn path() -> &'static Path {
    Path::new("bad/inst.txt")
}

/// Parses text expected to be rejected; checks the message names the file and the line.
fn rejected(text: &str, line: Option<usize>, fragment: &str) -> String {
    let err = pfsp::parse(text, path(), None).expect_err("must be rejected");
    let message = err.to_string();
    println!("{message}");
    match line {
        Some(line) => assert!(
            message.starts_with(&format!("bad/inst.txt:{line}:")),
            "expected line {line}: {message}"
        ),
        None => assert!(message.starts_with("bad/inst.txt"), "{message}"),
    }
    assert!(
        message.contains(fragment),
        "expected {fragment:?} in: {message}"
    );
    message
}

const TAILLARD_2X3: &str = "\
number of jobs, number of machines, initial seed, upper bound and lower bound :
           2           3        12345          10           5
processing times :
 1 2
 3 4
 5 6
";

#[test]
fn plain_format_is_job_major() {
    let inst = pfsp::parse("2 3\n1 3 5\n2 4 6\n", Path::new("x/small.txt"), None)
        .expect("valid plain file");
    assert_eq!(inst.name, "small");
    assert_eq!((inst.jobs, inst.machines), (2, 3));
    assert_eq!(inst.time_seed, None);
    // Row per job: job 0 takes 1, 3, 5 on machines 0, 1, 2.
    assert_eq!(inst.time(0, 0), 1);
    assert_eq!(inst.time(1, 0), 3);
    assert_eq!(inst.time(2, 1), 6);
    let same = pfsp::parse(TAILLARD_2X3, Path::new("x/small.txt"), None).expect("valid");
    assert_eq!(same.time_seed, Some(12345));
    for machine in 0..3 {
        for job in 0..2 {
            assert_eq!(inst.time(machine, job), same.time(machine, job));
        }
    }
    assert_eq!(same.name, "small");
    // order [0, 1]: machine completions 1,4,9 for job 0; job 1 ends at max(...)...
    assert_eq!(inst.makespan(&[0, 1]), 15);
    assert_eq!(inst.makespan(&[1, 0]), 17);
}

#[test]
fn vrf_format_with_crlf_and_any_machine_order() {
    // Job 0: machine 1 takes 3, machine 0 takes 1, machine 2 takes 5.
    let text = "2 3\r\n1 3 0 1 2 5\r\n0 2 1 4 2 6\r\n";
    let inst = pfsp::parse(text, Path::new("VFR2_3_1_Gap.txt"), None).expect("valid VRF");
    assert_eq!(inst.name, "VFR2_3_1_Gap");
    assert_eq!(inst.time(0, 0), 1);
    assert_eq!(inst.time(1, 0), 3);
    assert_eq!(inst.time(2, 0), 5);
    assert_eq!(inst.time(2, 1), 6);
    assert!(pfsp::looks_like_pfsp(text));
}

#[test]
fn vrf_file_from_shared_data() {
    let dir = Path::new(SHARED).join("taillard-pfsp/vrf/small");
    let file = dir.join("VFR10_10_1_Gap.txt");
    if !file.is_file() {
        println!("skipped: ../shared/data not found");
        return;
    }
    let inst = pfsp::read(&file, None).expect("VRF files parse");
    assert_eq!((inst.jobs, inst.machines), (10, 10));
    assert_eq!(inst.name, "VFR10_10_1_Gap");
    let text = std::fs::read_to_string(&file).expect("readable");
    assert!(
        text.contains("\r\n"),
        "the shared VRF files have CRLF endings"
    );
    assert!(pfsp::looks_like_pfsp(&text));
    // First row of the file: pairs (machine, time); check against the raw tokens.
    let tokens: Vec<i64> = text
        .split_whitespace()
        .map(|t| t.parse().expect("integers"))
        .collect();
    for pair in 0..10 {
        let machine = tokens[2 + 2 * pair] as usize;
        assert_eq!(inst.time(machine, 0), tokens[3 + 2 * pair]);
    }
    // Every small VRF file parses.
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("listable") {
        let path = entry.expect("entry").path();
        pfsp::read(&path, None).unwrap_or_else(|e| panic!("{e}"));
        count += 1;
    }
    assert_eq!(count, 240);
}

#[test]
fn truncated_matrix() {
    rejected("3 2\n1 2\n3 4\n5\n", Some(4), "file ends early");
    let taillard = TAILLARD_2X3.replace(" 5 6\n", " 5\n");
    rejected(&taillard, Some(6), "file ends early");
}

#[test]
fn non_numeric_token() {
    rejected("2 2\n1 2\n3 x4\n", Some(3), "\"x4\"");
    rejected("2 two\n1 2\n3 4\n", Some(1), "number of machines");
    let taillard = TAILLARD_2X3.replace(" 3 4", " 3 4.5");
    rejected(&taillard, Some(5), "\"4.5\"");
}

#[test]
fn declared_size_does_not_match_the_data() {
    // Too few rows for n = 3.
    rejected("3 2\n1 2\n3 4\n", Some(3), "found only 4");
    // Too many: n = 2 but three rows (7 values, neither 4 nor 8).
    rejected("2 2\n1 2\n3 4\n5 6\n", Some(4), "unexpected data");
    // Taillard block declaring fewer jobs than its rows hold.
    let more = TAILLARD_2X3.replace("           2           3", "           1           3");
    rejected(&more, Some(5), "header of block 2");
    // Taillard block declaring more jobs than its rows hold, followed by another block.
    let two = format!(
        "{}{}",
        TAILLARD_2X3.replace("           2           3", "           3           3"),
        TAILLARD_2X3
    );
    rejected(&two, Some(7), "\"number\"");
}

#[test]
fn zero_dimensions() {
    rejected("0 3\n", Some(1), "number of jobs must be between 1 and");
    rejected("3 0\n", Some(1), "number of machines must be between 1 and");
    let taillard = TAILLARD_2X3.replace("           2           3", "           2           0");
    rejected(
        &taillard,
        Some(2),
        "number of machines must be between 1 and",
    );
}

#[test]
fn huge_declared_size_with_little_data_fails_without_allocating() {
    // 10^8 x 10^8 values would be 80 PB; the parser must compare with the data first.
    rejected("100000000 100000000\n1 2 3\n", Some(2), "found only 3");
    rejected("100000001 2\n1 2 3\n", Some(1), "between 1 and 100000000");
    rejected("-4 2\n1 2 3\n", Some(1), "between 1 and");
    let taillard = TAILLARD_2X3.replace("           2           3", "    99999999    99999999");
    rejected(&taillard, Some(6), "found only 6");
}

#[test]
fn negative_times() {
    rejected("2 2\n1 2\n3 -4\n", Some(3), "negative");
    rejected("2 2\r\n0 1 1 2\r\n0 3 1 -4\r\n", Some(3), "negative");
    let taillard = TAILLARD_2X3.replace(" 5 6", " 5 -6");
    rejected(&taillard, Some(6), "job 2 on machine 3 is negative");
}

#[test]
fn vrf_machine_index_out_of_range_or_repeated() {
    rejected("2 2\r\n0 1 2 2\r\n0 3 1 4\r\n", Some(2), "machine index 2");
    rejected(
        "2 2\r\n0 1 1 2\r\n-1 3 1 4\r\n",
        Some(3),
        "machine index -1",
    );
    rejected("2 2\r\n0 1 1 2\r\n1 3 1 4\r\n", Some(3), "appears twice");
}

#[test]
fn empty_file_and_missing_headers() {
    rejected("", Some(1), "file ends early");
    rejected("hello world\n", Some(1), "expected the header of block 1");
    let no_times = TAILLARD_2X3.replace("processing times :\n", "");
    rejected(&no_times, Some(3), "processing times");
    // The colon against the word is the same header.
    let tight = TAILLARD_2X3.replace("processing times :", "processing times:");
    assert!(pfsp::parse(&tight, Path::new("t.txt"), None).is_ok());
}

#[test]
fn index_on_single_instance_files() {
    let p = Path::new("one.txt");
    assert!(pfsp::parse("1 1\n5\n", p, Some(1)).is_ok());
    let err = pfsp::parse("1 1\n5\n", p, Some(2)).expect_err("only one instance");
    assert!(err.to_string().contains("file holds 1 instance"), "{err}");
}

#[test]
fn names_of_multi_block_files() {
    let text = format!("{TAILLARD_2X3}{TAILLARD_2X3}");
    let blocks = pfsp::parse_taillard(&text, Path::new("d/mine.txt")).expect("two blocks");
    let names: Vec<&str> = blocks.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["mine-1", "mine-2"]);
    // Named like Taillard's file but not his instances (another size, another seed): the
    // name must not borrow his instance's best-known value.
    let inst = pfsp::parse(&text, Path::new("tai50_20.txt"), Some(2)).expect("block 2");
    assert_eq!(inst.name, "tai50_20-2");
    let generated = pfsp::to_taillard_text(&pfsp::generate(20, 5, 1));
    let inst = pfsp::parse(&generated, Path::new("tai20_5.txt"), None).expect("generated");
    assert_eq!(inst.name, "tai20_5");
    // His instances are his whatever the file is called: the header's sizes and seed.
    let his = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/pfsp/tai20_10.txt"),
    )
    .expect("the shipped Taillard file");
    let inst = pfsp::parse(&his, Path::new("renamed.txt"), Some(3)).expect("block 3");
    assert_eq!(inst.name, "ta013");
    let inst = pfsp::parse(&his, Path::new("tai20_10.txt"), Some(10)).expect("block 10");
    assert_eq!(inst.name, "ta020");
    // A file named after one of his instances holds that instance, or does not take its
    // name: another seed of the generator, another size, the same size with other times.
    let other_seed = pfsp::to_taillard_text(&pfsp::generate(20, 5, 8));
    let inst = pfsp::parse(&other_seed, Path::new("x/ta001.txt"), None).expect("seed 8");
    assert_eq!(inst.name, "ta001-custom");
    let plain = |inst: &pfsp::Instance| {
        let mut text = format!("{} {}\n", inst.jobs, inst.machines);
        for job in 0..inst.jobs {
            for machine in 0..inst.machines {
                text += &format!("{} ", inst.time(machine, job));
            }
            text += "\n";
        }
        text
    };
    let ta005 = pfsp::generate(20, 5, 495_070_989);
    let inst = pfsp::parse(&plain(&ta005), Path::new("ta005.txt"), None).expect("plain ta005");
    assert_eq!(
        inst.name, "ta005",
        "his times in the plain format keep his name"
    );
    let tiny = pfsp::generate(7, 4, 3);
    let inst = pfsp::parse(&plain(&tiny), Path::new("ta005.txt"), None).expect("7 x 4");
    assert_eq!(inst.name, "ta005-custom");
    let same_size = pfsp::generate(20, 5, 3);
    let inst = pfsp::parse(&plain(&same_size), Path::new("ta005.txt"), None).expect("20 x 5");
    assert_eq!(inst.name, "ta005-custom");
    // The stem's case does not get a file past the check.
    let inst = pfsp::parse(&plain(&tiny), Path::new("TA005.txt"), None).expect("7 x 4");
    assert_eq!(inst.name, "TA005-custom");
    // A Taillard header with his seed but other times is not his instance either.
    let mut edited = pfsp::generate(20, 5, 873_654_221);
    edited.name = String::new();
    let text = pfsp::to_taillard_text(&edited);
    let halved: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(k, line)| match k {
            // The header, its values and the "processing times :" line stay.
            0..=2 => line.to_string(),
            _ => line
                .split_whitespace()
                .map(|t| (t.parse::<i64>().expect("a time") / 2).max(1).to_string())
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect();
    let inst = pfsp::parse(&halved.join("\n"), Path::new("fake.txt"), None).expect("halved");
    assert_eq!(inst.name, "fake");
}

#[test]
fn generated_instances_round_trip_through_taillards_format() {
    for (n, m, seed) in [
        (20, 5, 873654221i64),
        (7, 3, 42),
        (50, 20, 1328042058),
        (1, 1, 9),
    ] {
        let inst = pfsp::generate(n, m, seed);
        let text = pfsp::to_taillard_text(&inst);
        assert!(pfsp::looks_like_pfsp(&text));
        let back = pfsp::parse(&text, Path::new("gen.txt"), None).expect("round trip parses");
        assert_eq!(back.time_seed, Some(seed));
        assert_eq!((back.jobs, back.machines), (n, m));
        for machine in 0..m {
            for job in 0..n {
                assert_eq!(back.time(machine, job), inst.time(machine, job));
            }
        }
    }
    // The header's bounds are a valid NEH upper bound and Taillard's lower bound.
    let inst = pfsp::generate(20, 5, 873654221);
    let text = pfsp::to_taillard_text(&inst);
    let header: Vec<i64> = text
        .lines()
        .nth(1)
        .expect("header")
        .split_whitespace()
        .map(|t| t.parse().expect("integer"))
        .collect();
    assert_eq!(header[..3], [20, 5, 873654221]);
    assert_eq!(header[3], inst.makespan(&pfsp::neh(&inst)));
    assert_eq!(header[4], 1232, "Taillard's own lower bound of ta001");
    // Times above 99 stay separated.
    let big = pfsp::Instance::new("big", 2, 1, vec![1000, 12345]).expect("valid");
    let back =
        pfsp::parse(&pfsp::to_taillard_text(&big), Path::new("b.txt"), None).expect("parses");
    assert_eq!(back.time(0, 1), 12345);
}

#[test]
fn format_detection() {
    assert!(pfsp::looks_like_pfsp(TAILLARD_2X3));
    assert!(pfsp::looks_like_pfsp("2 3\n1 2 3\n4 5 6\n"));
    assert!(!pfsp::looks_like_pfsp("2 3\n1 2 3\n4 5\n"));
    assert!(!pfsp::looks_like_pfsp("0 3\n"));
    assert!(!pfsp::looks_like_pfsp("2 2\n1 2\n3 x\n"));
    // A QAPLIB file: n, then two n x n matrices.
    assert!(!pfsp::looks_like_pfsp(
        "3\n0 1 2\n1 0 3\n2 3 0\n\n0 5 2\n5 0 3\n2 3 0\n"
    ));
    assert!(!pfsp::looks_like_pfsp(""));
}

#[test]
fn instance_new_checks_its_input() {
    assert!(pfsp::Instance::new("x", 0, 1, vec![]).is_err());
    assert!(pfsp::Instance::new("x", 1, 0, vec![]).is_err());
    assert!(pfsp::Instance::new("x", 2, 2, vec![1, 2, 3]).is_err());
    let err = pfsp::Instance::new("x", 2, 2, vec![1, 2, 3, -1]).expect_err("negative");
    assert!(err.contains("job 2 on machine 2"), "{err}");
}

#[test]
fn features_and_classes() {
    let inst = pfsp::generate(20, 5, 873654221);
    let f = inst.features();
    assert_eq!((f.jobs, f.machines, f.cells), (20, 5, 100));
    assert_eq!(
        f.total_time,
        (0..5)
            .flat_map(|k| (0..20).map(move |j| (k, j)))
            .map(|(k, j)| inst.time(k, j))
            .sum::<i64>()
    );
    assert_eq!(inst.class().to_string(), "pfsp:size=small");
    assert_eq!(pfsp::SizeClass::of(3000), pfsp::SizeClass::Small);
    assert_eq!(pfsp::SizeClass::of(3001), pfsp::SizeClass::Medium);
    assert_eq!(pfsp::SizeClass::of(5000).to_string(), "pfsp:size=medium");
    assert_eq!(pfsp::SizeClass::of(5001).to_string(), "pfsp:size=large");
}
