//! Quality figure of iterated greedy: average relative percentage deviation (ARPD) from the
//! best-known makespans on Taillard's ta001-ta030 (all proven optimal), with the usual time
//! limit of n * m / 2 * rho ms per instance (rho = 30), one thread, seed 1.
//!
//! Ignored by default (it runs for about 105 s). Run it with
//!
//! ```text
//! cargo test -p mats-solvers --release --test pfsp_arpd -- --ignored --nocapture
//! ```
//!
//! `PFSP_ARPD_RHO` changes rho, `PFSP_ARPD_FIRST` and `PFSP_ARPD_LAST` the range of instances
//! (1..=120; the default 1..=30), `PFSP_ARPD_SEED` the seed.

use std::path::Path;
use std::time::Duration;

use solvers::bks::{gap_percent, BestKnown};
use solvers::pfsp::{self, IgParams};
use solvers::{Budget, RunOptions};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "runs about 105 s; prints the ARPD table of IG on ta001-ta030"]
fn ig_arpd_on_taillard() {
    let dir = Path::new(SHARED).join("taillard-pfsp");
    if !dir.is_dir() {
        println!("skipped: ../shared/data not found");
        return;
    }
    let rho = env_or("PFSP_ARPD_RHO", 30);
    let last = env_or("PFSP_ARPD_LAST", 30).clamp(1, 120) as usize;
    let first = env_or("PFSP_ARPD_FIRST", 1).clamp(1, last as u64) as usize;
    let seed = env_or("PFSP_ARPD_SEED", 1);
    let mut table = BestKnown::default();
    table
        .add_file(&dir.join("bks.csv"))
        .expect("shared bks.csv parses");
    println!("instance    n   m      bks       IG   RPD%  iterations  limit_ms");
    let mut gaps = Vec::new();
    for k in first..=last {
        let file = dir.join("taillard").join(format!(
            "{}.txt",
            solvers::pfsp::parse::TAILLARD_FILES[(k - 1) / 10]
        ));
        let inst = pfsp::read(&file, Some((k - 1) % 10 + 1)).expect("Taillard file parses");
        let bks = table
            .get(&inst.name)
            .expect("every ta instance has a BKS")
            .value;
        let limit_ms = (inst.jobs * inst.machines) as u64 * rho / 2;
        let options = RunOptions {
            seed,
            threads: 1,
            budget: Budget::time_limit(Duration::from_millis(limit_ms)),
        };
        let outcome = pfsp::iterated_greedy(&inst, &IgParams::default(), &options);
        assert_eq!(outcome.objective, inst.makespan(&outcome.solution));
        let gap = gap_percent(outcome.objective, bks).expect("bks > 0");
        println!(
            "{:<8} {:>4} {:>3} {:>8} {:>8} {:>6.3} {:>11} {:>9}",
            inst.name,
            inst.jobs,
            inst.machines,
            bks,
            outcome.objective,
            gap,
            outcome.iterations,
            limit_ms
        );
        gaps.push(gap);
    }
    let arpd = gaps.iter().sum::<f64>() / gaps.len() as f64;
    println!(
        "ARPD over ta{first:03}-ta{last:03}: {arpd:.3}% (rho = {rho}, seed {seed}, one thread)"
    );
    // The target holds for the default range (the 20-job instances); other ranges only
    // report their figure.
    if (first, last) == (1, 30) {
        assert!(arpd < 1.0, "ARPD {arpd:.3}% is not under 1%");
    }
}
